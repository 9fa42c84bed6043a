#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Runs inside the container booted by nspawn.sh, as a unit under the container's systemd: installs
# the DESTDIR bound at /timerd-dest and takes timerd through what an administrator does with it.
# Usage: in-container.sh SANITIZE
set -eu
sanitize=$1
# shellcheck source-path=SCRIPTDIR source=container.sh
. "$(dirname "$0")/container.sh"
cd /

say() { echo "== $*"; }
fail() {
        echo "FAIL: $*"
        journalctl --no-pager -q -o short-monotonic -u timerd.service -u timerd.socket | tail -40
        exit 1
}
# wait_for SECONDS COMMAND...: until COMMAND succeeds.
wait_for() {
        tries=$(($1 * 10))
        shift
        until "$@" >/dev/null 2>&1; do
                tries=$((tries - 1))
                [ "$tries" -gt 0 ] || return 1
                sleep 0.1
        done
}
prop() { systemctl show -p "$1" --value timerd.service; }
state() { systemctl is-active "$1" || true; }
# as_user ID COMMAND...: uid and gid ID (65534 nobody, 1 daemon), no supplementary groups.
as_user() {
        id=$1
        shift
        setpriv --reuid="$id" --regid="$id" --clear-groups "$@"
}
status_text_is() { [ "$(prop StatusText)" = "$1" ]; }
running_since_pid_changed() {
        pid=$(prop MainPID)
        [ "$pid" != 0 ] && [ "$pid" != "$1" ] && [ "$(state timerd.service)" = active ]
}

say "install: the DESTDIR of meson install, copied into /"
container_install
for f in /usr/local/sbin/timerd /usr/local/bin/timerctl /usr/local/include/timerd/timerd.h \
        /lib/systemd/system/timerd.socket /lib/systemd/system/timerd.service \
        /usr/local/share/man/man8/timerd.8 /usr/local/share/doc/timerd/timerd.conf; do
        [ -e "$f" ] || fail "meson install did not install $f"
done
ls /usr/local/lib/*/libtimerd.so.0 /usr/local/lib/*/pkgconfig/libtimerd.pc >/dev/null ||
        fail "meson install did not install libtimerd and its pkg-config file"
timerctl --version >/dev/null || fail "timerctl does not run: $(timerctl --version 2>&1)"
if [ "$sanitize" != none ]; then
        # LeakSanitizer stops the world with ptrace, which the unit's seccomp filter forbids.
        mkdir -p /etc/systemd/system/timerd.service.d
        printf '[Service]\nEnvironment=ASAN_OPTIONS=detect_leaks=0\n' \
                >/etc/systemd/system/timerd.service.d/sanitizer.conf
fi
systemctl daemon-reload
out=$(systemd-analyze verify --man=no /lib/systemd/system/timerd.socket \
        /lib/systemd/system/timerd.service 2>&1) || fail "verify: $out"
[ -z "$out" ] || fail "verify of the installed units is not clean: $out"

say "socket activation: nothing runs before the first call"
systemctl enable --now timerd.socket
[ "$(state timerd.socket)" = active ] || fail "timerd.socket is $(state timerd.socket)"
[ "$(state timerd.service)" = inactive ] || fail "timerd.service runs before any call"
[ "$(stat -c %a /run/timerd/io.timerd)" = 666 ] || fail "the socket is not open to everyone"
status=$(timerctl status) || fail "timerctl status: $status"
echo "$status"
[ "$(state timerd.service)" = active ] || fail "timerd.service is $(state timerd.service)"
systemctl status --no-pager timerd.service | grep -q "active (running)" ||
        fail "not active (running): $(systemctl status --no-pager timerd.service)"
echo "$status" | grep -q "Backend: io_uring" || fail "not on io_uring under the unit's filter"
echo "$status" | grep -q "Epoch: unknown" && fail "the epoch has no boot id"
wait_for 5 status_text_is "0 timers, 0 waiters; io_uring backend" ||
        fail "StatusText is '$(prop StatusText)'"
pid=$(prop MainPID)
grep -q "^Uid:[[:space:]]*0[[:space:]]" /proc/"$pid"/status && fail "runs as root"
for set in CapPrm CapEff CapBnd CapAmb; do
        grep -q "^$set:[[:space:]]*0000000800000020$" /proc/"$pid"/status ||
                fail "$set is not CAP_KILL CAP_WAKE_ALARM: $(grep ^Cap /proc/"$pid"/status)"
done

say "an unprivileged user's timers"
as_user 65534 timerctl add nightly --once 1h || fail "nobody cannot add a timer"
as_user 65534 timerctl add wake --once 1h --clock boottime-alarm || fail "no alarm clock"
as_user 65534 timerctl list | grep -q nightly || fail "nobody does not see its timer"
set +e
as_user 1 timerctl show nightly >/dev/null 2>&1
code=$?
set -e
[ "$code" = 3 ] || fail "another user's 'show nightly' exited $code, wanted 3 (no such timer)"
wait_for 5 status_text_is "2 timers, 0 waiters; io_uring backend" ||
        fail "StatusText after two timers is '$(prop StatusText)'"
echo "StatusText: $(prop StatusText)"

say "reload, where there is no /bin/kill (procps)"
[ ! -e /bin/kill ] || fail "the image has /bin/kill: this would not show the reload works without"
pid=$(prop MainPID)
systemctl reload timerd.service || fail "reload failed"
[ "$(prop MainPID)" = "$pid" ] || fail "reload restarted the service"
[ "$(state timerd.service)" = active ] || fail "after reload: $(state timerd.service)"
wait_for 5 sh -c 'journalctl -q -u timerd.service | grep -q "Received Hangup"' ||
        fail "the reload did not reach the service"

say "restart"
systemctl restart timerd.service || fail "restart failed"
[ "$(prop MainPID)" != "$pid" ] || fail "restart kept the old process"
timerctl status >/dev/null || fail "no service after restart"

say "stop: the socket stays, the next call starts the service again"
systemctl stop timerd.service
[ "$(state timerd.service)" = inactive ] || fail "after stop: $(state timerd.service)"
[ "$(state timerd.socket)" = active ] || fail "stopping the service stopped the socket"
timerctl status >/dev/null || fail "no service on the call after stop"
[ "$(state timerd.service)" = active ] || fail "not started again: $(state timerd.service)"
systemctl stop timerd.service

say "the journal: clean startups and teardowns"
journalctl --sync
log=$(journalctl -q --no-pager -o cat -u timerd.service)
for line in "Listening on the socket passed by systemd" "Capabilities: CAP_KILL CAP_WAKE_ALARM" \
        "Backend io_uring" "ready (epoch" "Received Terminated, shutting down" \
        "Stopping: shutdown requested"; do
        echo "$log" | grep -q "$line" || fail "the journal lacks '$line'"
done
warnings=$(journalctl -q --no-pager -o cat -p warning -u timerd.service)
[ -z "$warnings" ] || fail "warnings in the journal: $warnings"
echo "$log" | tail -8
echo "$log" | grep -q "No configuration file /etc/timerd/timerd.conf" ||
        fail "the service did not look for /etc/timerd/timerd.conf"

say "the settings file: read at start and at reload, its errors logged at priority err"
conf=/etc/timerd/timerd.conf
mkdir -p /etc/timerd
cp /usr/local/share/doc/timerd/timerd.conf "$conf"
timerctl status >/dev/null || fail "no service with the shipped example as $conf"
printf 'max-message = 4096\n' >>"$conf"
systemctl reload timerd.service || fail "reload with $conf failed"
wait_for 5 sh -c 'journalctl -q -u timerd.service | grep -q "Reloaded max-message"' ||
        fail "the reload did not apply $conf"
printf 'colour = blue\n' >"$conf"
systemctl reload timerd.service || fail "reload with a bad $conf failed"
wait_for 5 sh -c 'journalctl -q -p err -u timerd.service | grep -q "unknown setting \"colour\""' ||
        fail "a bad $conf at reload is not logged at priority err"
[ "$(state timerd.service)" = active ] || fail "a bad $conf at reload stopped the service"
timerctl status >/dev/null || fail "no service after a reload with a bad $conf"
systemctl stop timerd.service
systemctl start timerd.service && fail "the service started with a bad $conf"
[ "$(prop ExecMainStatus)" = 2 ] || fail "a bad $conf at start: status $(prop ExecMainStatus), not 2"
rm "$conf"
systemctl reset-failed timerd.service timerd.socket
systemctl start timerd.socket
timerctl status >/dev/null || fail "no service once the bad $conf is gone"
systemctl stop timerd.service

say "watchdog: a stopped loop gets the service restarted"
mkdir -p /run/systemd/system/timerd.service.d
printf '[Service]\nWatchdogSec=2s\nTimeoutAbortSec=5s\n' >/run/systemd/system/timerd.service.d/watchdog.conf
systemctl daemon-reload
timerctl status >/dev/null || fail "no service with a short watchdog"
pid=$(prop MainPID)
kill -STOP "$pid"
wait_for 30 running_since_pid_changed "$pid" || fail "no restart after the loop stopped"
[ "$(prop NRestarts)" -ge 1 ] || fail "NRestarts is $(prop NRestarts)"
journalctl -q -u timerd.service | grep -q "Watchdog timeout" || fail "no watchdog timeout logged"
timerctl status >/dev/null || fail "no service after the watchdog restart"
journalctl -q --no-pager -u timerd.service | grep -i watchdog

rm -f /run/systemd/system/timerd.service.d/watchdog.conf
systemctl daemon-reload

say "timerd-run@: a job from /etc/timerd/run/NAME.conf, as the drop-in's User=, output in the journal"
mkdir -p /etc/timerd/run /run/systemd/system/timerd-run@ctjob.service.d
printf 'schedule = --interval 1s\ncommand = sh -c "echo ran as $(id -u)"\n' >/etc/timerd/run/ctjob.conf
printf '[Service]\nUser=daemon\n' >/run/systemd/system/timerd-run@ctjob.service.d/user.conf
systemctl daemon-reload
systemctl start timerd.socket
systemctl start timerd-run@ctjob.service || fail "timerd-run@ctjob did not start"
job_ran() { journalctl -q --no-pager -t ctjob | grep -q "ran as 1"; }
wait_for 20 job_ran || fail "no job output in the journal: $(journalctl -q --no-pager -u timerd-run@ctjob.service)"
timerctl show -U daemon ctjob -p last_exit,last_exit_code --value | tr '\n' ' ' | grep -q "exited 0" ||
        fail "the job's runs are not recorded: $(timerctl show -U daemon ctjob)"
systemctl stop timerd-run@ctjob.service
[ "$(systemctl show -p Result --value timerd-run@ctjob.service)" = success ] ||
        fail "timerd-run@ctjob did not stop cleanly"
printf 'schedule = --every 1h\n' >/etc/timerd/run/ctbad.conf
systemctl start timerd-run@ctbad.service
wait_for 10 sh -c '[ "$(systemctl is-failed timerd-run@ctbad.service)" = failed ] ||
        systemctl show -p ExecMainStatus --value timerd-run@ctbad.service | grep -qx 2' ||
        fail "a job file without a command did not fail the unit"
systemctl stop timerd-run@ctbad.service || true
systemctl reset-failed timerd-run@ctbad.service 2>/dev/null || true

say "signal overruns under the unit: the same with ProtectProc=invisible and without"
# A client of another user (nobody), built against the installed libtimerd, leaves its signal
# blocked for about 30 periods. Acknowledging its signals it gets one signal and the rest counted
# as overruns whatever the service can see of its /proc; without, only where /proc is visible:
# under the shipped ProtectProc=invisible the signals queue and no overrun is counted (what
# timerd.8 and the README say).
cflags=
[ "$sanitize" = none ] || cflags="-fsanitize=$sanitize"
# shellcheck disable=SC2046,SC2086 # pkg-config's words, the sanitizer flag
gcc -Wall -Wextra -Werror $cflags -o /tmp/signal-overruns "$(dirname "$0")/signal-overruns.c" \
        $(pkg-config --cflags --libs libtimerd) || fail "signal-overruns.c does not build"
# overruns_as MODE: runs the client, setting $signals, $overruns and $resent from its line.
overruns_as() {
        out=$(as_user 65534 /tmp/signal-overruns "$1") || fail "signal-overruns $1: $out"
        echo "ProtectProc=$(prop ProtectProc) $1: $out"
        signals=$(echo "$out" | sed -n 's/.*signals=\([0-9]*\).*/\1/p')
        overruns=$(echo "$out" | sed -n 's/.*overruns=\([0-9]*\).*/\1/p')
        resent=$(echo "$out" | sed -n 's/.*resent=\([0-9]*\).*/\1/p')
}
for protect in invisible default; do
        if [ "$protect" = default ]; then
                printf '[Service]\nProtectProc=default\n' \
                        >/run/systemd/system/timerd.service.d/protect-proc.conf
                systemctl daemon-reload
                systemctl restart timerd.service
        fi
        [ "$(prop ProtectProc)" = "$protect" ] || fail "ProtectProc is $(prop ProtectProc)"
        overruns_as ack
        if [ "$signals" != 1 ] || [ "$overruns" -lt 10 ] || [ "$resent" != 1 ]; then
                fail "ProtectProc=$protect: an acknowledging client's overruns are not counted"
        fi
        overruns_as raw
        if [ "$protect" = default ]; then
                if [ "$signals" != 1 ] || [ "$overruns" -lt 10 ]; then
                        fail "ProtectProc=default: a raw client's overruns are not counted"
                fi
        elif [ "$signals" -lt 10 ] || [ "$overruns" != 0 ]; then
                fail "ProtectProc=invisible: a raw client is not as documented"
        fi
done
rm /run/systemd/system/timerd.service.d/protect-proc.conf
systemctl daemon-reload

systemctl stop timerd.socket timerd.service
say "all good"
