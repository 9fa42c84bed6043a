#!/bin/bash
# timerctl names the limit that refused a call, and its max, with exit status 1: two unprivileged
# uids (setpriv) on a small table, one stopped at --max-timers-per-owner, the other at its share
# of what the first left (timers_share); root is still served.
# Usage: timerctl-limits.sh TIMERD TIMERCTL BACKEND
set -eu
timerd=$1
timerctl=$2
backend=$3

if [ "$(id -u)" -ne 0 ] || ! command -v setpriv >/dev/null; then
        echo "SKIP: needs root and setpriv to run timerctl as other uids"
        exit 77
fi

dir=$(mktemp -d /tmp/timerctl-limits.XXXXXX)
# 16 places for the other uids: the first uid stops at its own 6, the second at its share of
# the 10 left, 5.
"$timerd" --socket "$dir/io.timerd" --state-dir "$dir/state" --backend "$backend" \
        --log-level warning --max-timers 20 --reserved-timers 4 --max-timers-per-owner 6 &
pid=$!
cleanup() {
        kill "$pid" 2>/dev/null || true
        wait 2>/dev/null || true
        rm -rf "$dir"
}
trap cleanup EXIT
ctl() { "$timerctl" --socket "$dir/io.timerd" "$@"; }
as_uid() {
        local uid=$1
        shift
        setpriv --reuid="$uid" --regid="$uid" --clear-groups "$timerctl" --socket "$dir/io.timerd" "$@"
}
for _ in $(seq 1000); do ctl status >/dev/null 2>&1 && break; sleep 0.01; done
chmod 755 "$dir"

fail() {
        echo "FAIL: $*" >&2
        exit 1
}
# The last add of uid $1 for timers $2..$3: refused with exit status 1 and the message $4.
expect_refused() {
        local uid=$1 first=$2 last=$3 message=$4 got
        for i in $(seq "$first" $((last - 1))); do
                as_uid "$uid" add "t$i" --once 1h || fail "uid $uid: add t$i refused"
        done
        set +e
        as_uid "$uid" add "t$last" --once 1h 2>"$dir/err"
        got=$?
        set -e
        [ "$got" -eq 1 ] || fail "uid $uid: add t$last exited $got, wanted 1: $(cat "$dir/err")"
        [ "$(cat "$dir/err")" = "$message" ] || fail "uid $uid: \"$(cat "$dir/err")\", wanted \"$message\""
}
expect_refused 64001 0 6 "timerctl: add t6: limit exceeded: timers_per_owner (max 6)"
expect_refused 64002 0 5 "timerctl: add t5: limit exceeded: timers_share (max 5)"
ctl add root --once 1h
echo "ok"
