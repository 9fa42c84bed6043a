#!/bin/sh
# timerctl against a running timerd: every verb, --json parsed back, error exit codes.
# Usage: timerctl.sh TIMERD TIMERCTL BACKEND
set -eu
timerd=$1
timerctl=$2
backend=$3

dir=$(mktemp -d /tmp/timerctl-test.XXXXXX)
"$timerd" --socket "$dir/io.timerd" --state-dir "$dir/state" --backend "$backend" \
        --log-level warning &
pid=$!
trap 'kill $pid 2>/dev/null || true; wait $pid 2>/dev/null || true; rm -rf "$dir"' EXIT
for _ in $(seq 500); do [ -S "$dir/io.timerd" ] && break; sleep 0.01; done

ctl() { "$timerctl" --socket "$dir/io.timerd" "$@"; }
fail() { echo "FAIL: $*" >&2; exit 1; }
expect_exit() {
        want=$1
        shift
        set +e
        "$@" >"$dir/out" 2>"$dir/err"
        got=$?
        set -e
        [ "$got" -eq "$want" ] || fail "$* exited $got, wanted $want: $(cat "$dir/err")"
}
json() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }

# add each policy; list shows them in name order.
ctl add backup --every 5min
ctl add deadline --once 90s
ctl add tick --interval "1h 30min"
ctl add deadman --watchdog 30s
ctl add idle --once
ctl list >"$dir/list"
grep -q "NEXT" "$dir/list" || fail "list has no header: $(cat "$dir/list")"
grep -q "5 timers listed" "$dir/list" || fail "list legend: $(cat "$dir/list")"
for name in backup deadline tick deadman idle; do
        grep -q "$name" "$dir/list" || fail "list lacks $name"
done

# --json parses back with the right content.
[ "$(ctl list --json | json 'len(d["timers"])')" = 5 ] || fail "list --json count"
[ "$(ctl list --json | json '",".join(t["name"] for t in d["timers"])')" = "backup,deadline,deadman,idle,tick" ] ||
        fail "list --json order"
[ "$(ctl show tick --json | json 'd["timer"]["declaration"]["policy"]')" = interval ] || fail "show policy"
[ "$(ctl show tick --json | json 'd["timer"]["declaration"]["cadence_usec"]')" = 5400000000 ] ||
        fail "show cadence"
[ "$(ctl show backup --json | json 'd["timer"]["declaration"]["lifetime"]')" = retained ] ||
        fail "timerctl add is retained by default"
[ "$(ctl show idle --json | json 'd["timer"]["state"]')" = inactive ] || fail "once without span is inactive"
[ "$(ctl status --json | json 'd["backend"]')" = "$backend" ] || fail "status backend"
[ "$(ctl status --json | json 'd["timers"]')" = 5 ] || fail "status timers"
ctl show backup | grep -q "backup" || fail "show prints the timer"
ctl status | grep -q "$backend" || fail "status prints the backend"

# cancel keeps the declaration, remove drops it.
ctl cancel backup
[ "$(ctl show backup --json | json 'd["timer"]["state"]')" = inactive ] || fail "cancel"
ctl remove backup
expect_exit 3 ctl show backup
grep -q "NotFound\|no such timer" "$dir/err" || fail "show of a removed timer: $(cat "$dir/err")"

# Errors and their exit codes.
expect_exit 3 ctl remove nothing-here
expect_exit 3 ctl cancel nothing-here
expect_exit 2 ctl add
expect_exit 2 ctl add x --every
expect_exit 2 ctl add x --every bogus
expect_exit 2 ctl add x --once 1s --every 2s
expect_exit 2 ctl frobnicate
expect_exit 1 ctl add deadline --once 1min
grep -q "AlreadyRegistered\|already" "$dir/err" || fail "duplicate add message: $(cat "$dir/err")"
expect_exit 1 ctl add "bad name" --once 1s
expect_exit 5 "$timerctl" --socket "$dir/nothing" list
expect_exit 0 ctl --help
expect_exit 0 ctl --version

# Calendar timers: expressions, cron, a zone; NEXT in the timer's zone, the normalized schedule.
ctl add nightly --calendar "Mon..Fri *-*-* 03:00" --cron "30 4 1 * *" --timezone Europe/Berlin \
        --randomized-delay 10min --fixed-random-delay
ctl show nightly --json >"$dir/cal"
[ "$(json 'd["timer"]["declaration"]["calendar"]' <"$dir/cal")" = "['Mon..Fri *-*-* 03:00']" ] ||
        fail "calendar: $(cat "$dir/cal")"
[ "$(json 'd["timer"]["declaration"]["cron"]' <"$dir/cal")" = "['30 4 1 * *']" ] ||
        fail "cron: $(cat "$dir/cal")"
[ "$(json 'd["timer"]["declaration"]["timezone"]' <"$dir/cal")" = Europe/Berlin ] ||
        fail "timezone: $(cat "$dir/cal")"
[ "$(json 'd["timer"]["declaration"]["clock"]' <"$dir/cal")" = realtime ] ||
        fail "a calendar timer is on realtime: $(cat "$dir/cal")"
[ "$(json 'd["timer"]["declaration"]["fixed_random_delay"]' <"$dir/cal")" = True ] ||
        fail "fixed delay: $(cat "$dir/cal")"
[ "$(json '"|".join(d["timer"]["calendar_normalized"])' <"$dir/cal")" = \
        "Mon..Fri *-*-* 03:00:00|*-*-01 04:30:00" ] || fail "normalized: $(cat "$dir/cal")"
ctl show nightly >"$dir/out"
grep -q "Calendar: Mon..Fri \*-\*-\* 03:00:00" "$dir/out" || fail "show calendar: $(cat "$dir/out")"
grep -q "Time zone: Europe/Berlin" "$dir/out" || fail "show zone: $(cat "$dir/out")"
grep -Eq "Next: .* \+0[12]:00 \(" "$dir/out" || fail "show next in the zone: $(cat "$dir/out")"
ctl list | grep nightly | grep -Eq "\+0[12]:00" || fail "list NEXT in the zone: $(ctl list)"
expect_exit 1 ctl add never --calendar "*-02-30"
grep -q "calendar_never" "$dir/err" || fail "never: $(cat "$dir/err")"
expect_exit 1 ctl add badcron --cron "0 3 * 13 *"
grep -q "calendar_invalid" "$dir/err" || fail "bad cron: $(cat "$dir/err")"
expect_exit 1 ctl add nowhere --calendar daily --timezone Nowhere/Zone
expect_exit 2 ctl add both --calendar daily --every 5s
expect_exit 2 ctl add zoneless --every 5s --timezone UTC
expect_exit 2 ctl add nocron --cron
expect_exit 3 ctl show never

echo "timerctl: all checks passed"
