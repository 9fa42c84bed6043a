#!/bin/bash
# timerctl advance and now against timerd --clock virtual: a daily job driven for a week from the
# shell, each run at its exact virtual deadline; a service on the real clock refuses both verbs.
# Usage: timerctl-virtual.sh TIMERD TIMERCTL BACKEND
set -eu
timerd=$1
timerctl=$2
backend=$3

dir=$(mktemp -d /tmp/timerctl-virtual.XXXXXX)
pids=()
cleanup() {
        for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
        wait 2>/dev/null || true
        rm -rf "$dir"
}
trap cleanup EXIT
fail() {
        echo "FAIL: $*" >&2
        exit 1
}
start() { # SOCKET ARGS...
        local socket=$1
        shift
        "$timerd" --socket "$socket" --state-dir "$dir/state-${socket##*/}" --backend "$backend" \
                --log-level warning "$@" &
        pids+=($!)
        for _ in $(seq 1000); do "$timerctl" --socket "$socket" status >/dev/null 2>&1 && return; sleep 0.01; done
        fail "timerd $* did not start"
}
json() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }

start "$dir/virtual" --clock virtual
ctl() { "$timerctl" --socket "$dir/virtual" "$@"; }

[ "$(ctl now --json | json 'd["monotonic"]')" = 1000000000000000 ] || fail "virtual start"
ctl now | grep -qF "Realtime: 1893456000000000 (Tue 2030-01-01 00:00:00 UTC)" || fail "now: $(ctl now)"

ctl add daily --every 1d
start_usec=$(ctl now --json | json 'd["monotonic"]')
for day in 1 2 3 4 5 6 7; do
        out=$(ctl advance 1d --json)
        [ "$(echo "$out" | json 'd["firings"]')" = 1 ] || fail "day $day: $out"
        ctl wait daily --count 1 --timeout 5s >/dev/null
        [ "$(ctl show daily -p last_start_usec --value)" = $((start_usec + day * 86400000000)) ] ||
                fail "day $day ran at $(ctl show daily -p last_start_usec --value)"
done
[ "$(ctl show daily -p runs --value)" = 7 ] || fail "runs"
ctl advance 12h | grep -qF "Firings: 0" || fail "nothing due in half a day"

# A bad span is a usage error; the service on the real clock refuses the verbs.
set +e
ctl advance soon 2>/dev/null
[ $? -eq 2 ] || fail "advance soon: not a usage error"
start "$dir/real"
"$timerctl" --socket "$dir/real" advance 1h 2>"$dir/err"
[ $? -eq 1 ] || fail "the real clock's service advanced"
grep -qF "runs on the real clock" "$dir/err" || fail "message: $(cat "$dir/err")"
"$timerctl" --socket "$dir/real" now 2>/dev/null
[ $? -eq 1 ] || fail "the real clock's service answered now"
set -e
echo "ok"
