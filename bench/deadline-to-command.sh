#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Issue 18's row: from a deadline to the command running, for one kind of scheduler, N times.
# The command is `date +%s.%N` (exec'd directly by timerctl run and by systemd; cron runs it
# through sh -c, as it runs every job) appending to a file; each deadline is the whole period
# before its stamp, so the stamp's distance past it is the delay:
#   timerctl-run  timerctl run on the calendar "*:*:0/5" (timerd reachable as timerctl finds it)
#   systemd-run   systemd-run --on-calendar="*:*:0/5" --timer-property=AccuracySec=1us (every 5 s:
#                 faster would meet systemd's start limit, 5 starts in 10 s)
#   cron          a /etc/cron.d line "* * * * *" (cron's resolution is the minute: N minutes)
# Prints "KIND MEDIAN MIN MAX N" (µs) on stdout, progress on stderr.
# Usage: deadline-to-command.sh KIND N
set -euo pipefail
kind=$1
n=$2
stamps=$(mktemp /tmp/timerd-b7.XXXXXX)
chmod 644 "$stamps"
period=5
cleanup=()
finish() {
        local c
        for c in "${cleanup[@]}"; do eval "$c" || true; done
        rm -f "$stamps"
}
trap finish EXIT

case $kind in
timerctl-run)
        # Its output to the file, not to the journal it picks under systemd.
        env -u JOURNAL_STREAM timerctl run b7-run --calendar "*:*:0/$period" -- date +%s.%N \
                >>"$stamps" &
        runner=$!
        cleanup+=("kill $runner; wait $runner; timerctl remove b7-run >/dev/null")
        ;;
systemd-run)
        systemd-run --quiet --unit=b7-systemd --on-calendar="*:*:0/$period" \
                --timer-property=AccuracySec=1us -p StandardOutput="append:$stamps" \
                /usr/bin/date +%s.%N
        cleanup+=("systemctl stop b7-systemd.timer b7-systemd.service")
        ;;
cron)
        period=60
        systemctl start cron
        echo "* * * * * root date +\%s.\%N >>$stamps" >/etc/cron.d/timerd-b7
        cleanup+=("rm -f /etc/cron.d/timerd-b7")
        ;;
*)
        echo "usage: deadline-to-command.sh timerctl-run|systemd-run|cron N" >&2
        exit 2
        ;;
esac

echo "$kind: $n firings, one each ${period} s" >&2
# One firing more than asked: the first may come from a deadline before the scheduler was set.
deadline=$((SECONDS + (n + 2) * period + 30))
while [ "$(wc -l <"$stamps")" -le "$n" ]; do
        [ $SECONDS -lt $deadline ] || {
                echo "$kind: $(wc -l <"$stamps") of $((n + 1)) firings in time" >&2
                exit 1
        }
        sleep 0.5
done
tail -n "$n" "$stamps" | awk -v kind="$kind" -v period="$period" '
{ s = $1; d = int(s / period) * period; late[NR] = (s - d) * 1e6 }
END {
        for (i = 2; i <= NR; i++)
                for (j = i; j > 1 && late[j - 1] > late[j]; j--) {
                        x = late[j]; late[j] = late[j - 1]; late[j - 1] = x
                }
        m = NR % 2 ? late[(NR + 1) / 2] : (late[NR / 2] + late[NR / 2 + 1]) / 2
        printf "%s %.0f %.0f %.0f %d\n", kind, m, late[1], late[NR], NR
}'
