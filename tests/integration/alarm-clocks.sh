#!/bin/sh
# Alarm clocks need CAP_WAKE_ALARM: with it they work, without it they are a typed
# ClockUnavailable, never a silent downgrade to another clock.
# Usage: alarm-clocks.sh TIMERD TIMERCTL
set -eu
timerd=$1
timerctl=$2
if [ "$(id -u)" -ne 0 ] || ! command -v setpriv >/dev/null; then
        echo "SKIP: needs root and setpriv to start the service with and without CAP_WAKE_ALARM"
        exit 77
fi
dir=$(mktemp -d /tmp/timerd-alarm-test.XXXXXX)
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; wait 2>/dev/null; rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

start() { # [setpriv args...]
        rm -f "$dir/io.timerd"
        "$@" "$timerd" --socket "$dir/io.timerd" --state-dir "$dir/state" --log-level warning &
        pid=$!
        for _ in $(seq 500); do [ -S "$dir/io.timerd" ] && break; sleep 0.01; done
}
stop() { kill $pid; wait $pid; pid=; }
ctl() { "$timerctl" --socket "$dir/io.timerd" "$@"; }

start
ctl add wake --once 1h --clock boottime-alarm || fail "boottime-alarm with CAP_WAKE_ALARM"
ctl add wake-rt --once 1h --clock realtime-alarm || fail "realtime-alarm with CAP_WAKE_ALARM"
ctl show wake | grep -q "boottime-alarm\|boottime_alarm" || fail "the clock is kept"
stop

start setpriv --bounding-set=-wake_alarm --inh-caps=-wake_alarm
set +e
ctl add wake2 --once 1h --clock boottime-alarm 2>"$dir/err"
status=$?
set -e
[ $status -ne 0 ] || fail "boottime-alarm without CAP_WAKE_ALARM was accepted"
grep -q "ClockUnavailable" "$dir/err" || fail "not ClockUnavailable: $(cat "$dir/err")"
ctl add plain --once 1h --clock boottime || fail "boottime still works"
stop
echo "alarm clocks: all checks passed"
