#!/bin/sh
# timerctl run against a running timerd: exit statuses map to outcomes, a timeout kills and is
# recorded, a stop interrupts, --max-failures stops the timer, runner and service restarts lose no
# firing and run none twice, two runners on one timer share its firings and hand over.
# Usage: timerctl-run.sh TIMERD TIMERCTL BACKEND
set -eu
timerd=$1
timerctl=$2
backend=$3

dir=$(mktemp -d /tmp/timerctl-run-test.XXXXXX)
runners=""
start_service() {
        "$timerd" --socket "$dir/io.timerd" --state-dir "$dir/state" --backend "$backend" \
                --log-level warning &
        service=$!
        for _ in $(seq 500); do [ -S "$dir/io.timerd" ] && break; sleep 0.01; done
        [ -S "$dir/io.timerd" ] || fail "the service did not start"
}
stop_service() {
        kill "$service"
        wait "$service" 2>/dev/null || true
        rm -f "$dir/io.timerd"
}
cleanup() {
        for p in $runners; do kill -KILL "$p" 2>/dev/null || true; done
        kill "$service" 2>/dev/null || true
        wait 2>/dev/null || true
        rm -rf "$dir"
}
trap cleanup EXIT

ctl() { "$timerctl" --socket "$dir/io.timerd" "$@"; }
fail() {
        echo "FAIL: $*" >&2
        for f in "$dir"/*.log; do [ -f "$f" ] && { echo "== $f" >&2; cat "$f" >&2; }; done
        exit 1
}
prop() { ctl show "$1" -p "$2" --value; }
# start_runner LOG ARGS...: a runner in the background, in $run_dir with $run_env (VAR=VALUE) in
# its environment; its pid in $runner, its messages in $dir/LOG.log, and its exit status in
# $dir/PID.status once it ended.
run_dir=$dir
run_env=NO_VARIABLE=
start_runner() {
        log=$1
        shift
        rm -f "$dir/started"
        (
                cd "$run_dir"
                env "$run_env" "$timerctl" --socket "$dir/io.timerd" run "$@" &
                echo $! >"$dir/started"
                set +e
                wait $!
                echo $? >"$dir/$!.status"
        ) >>"$dir/$log.log" 2>&1 &
        while [ ! -s "$dir/started" ]; do sleep 0.01; done
        runner=$(cat "$dir/started")
        runners="$runners $runner"
}
# wait_for SECONDS COMMAND...: until COMMAND succeeds.
wait_for() {
        tries=$(($1 * 20))
        shift
        while [ "$tries" -gt 0 ]; do
                "$@" && return 0
                sleep 0.05
                tries=$((tries - 1))
        done
        return 1
}
lines() { if [ -f "$1" ]; then wc -l <"$1"; else echo 0; fi; }
runs_at_least() { [ "$(prop "$1" runs)" -ge "$2" ]; }
gone() { [ -f "$dir/$1.status" ]; }
exit_of() { cat "$dir/$1.status"; }

start_service

# Exit 0: success, recorded as exit 0; the command runs without a shell, in the runner's
# directory and environment.
mkdir "$dir/cwd"
run_dir=$dir/cwd
run_env=JOB_WORD=hello
start_runner ok --interval 0.2s ok -- sh -c 'echo "$JOB_WORD $(pwd)" >>"$0"' "$dir/ok.out"
run_dir=$dir
wait_for 5 runs_at_least ok 2 || fail "ok: no runs"
grep -q "^hello $dir/cwd\$" "$dir/ok.out" || fail "ok: env or cwd: $(cat "$dir/ok.out")"
[ "$(prop ok last_outcome)" = success ] || fail "ok: outcome $(prop ok last_outcome)"
[ "$(prop ok last_exit)" = exited ] && [ "$(prop ok last_exit_code)" = 0 ] ||
        fail "ok: result $(prop ok last_exit) $(prop ok last_exit_code)"
ctl list | grep -q "LAST-RESULT" || fail "list has no LAST-RESULT column"
ctl list | grep " ok " | grep -q "exit 0" || fail "list: $(ctl list)"

# Another exit status: an expected failure; the timer goes on.
start_runner three --interval 0.2s three -- sh -c 'exit 3'
wait_for 5 runs_at_least three 2 || fail "three: no runs"
[ "$(prop three last_outcome)" = expected_failure ] || fail "three: outcome"
[ "$(prop three last_exit_code)" = 3 ] || fail "three: code"
[ "$(prop three state)" != failed ] || fail "three: a failed exit stopped the timer"
ctl show three | grep -q "Last result: exit 3" || fail "three: show: $(ctl show three)"
[ "$(prop three consecutive_expected_failures)" -ge 2 ] || fail "three: failures not counted"

# A command that cannot be started is exit 127 (as a shell's).
start_runner missing --interval 0.2s missing -- "$dir/no-such-program"
wait_for 5 runs_at_least missing 1 || fail "missing: no run"
[ "$(prop missing last_exit_code)" = 127 ] || fail "missing: code $(prop missing last_exit_code)"

# Killed by a signal: an invariant failure, the timer fails and its runner ends with status 1.
start_runner killed --interval 0.2s killed -- sh -c 'kill -KILL $$'
killed=$runner
wait_for 5 gone "$killed" || fail "killed: the runner goes on after its timer failed"
[ "$(exit_of "$killed")" = 1 ] || fail "killed: runner status"
[ "$(prop killed state)" = failed ] || fail "killed: state $(prop killed state)"
[ "$(prop killed last_exit)" = signaled ] && [ "$(prop killed last_exit_code)" = 9 ] ||
        fail "killed: result"
ctl show killed | grep -q "Last result: signal KILL" || fail "killed: show"
# --failure-is-expected: a signal only counts.
start_runner tolerant --interval 0.2s --failure-is-expected tolerant -- sh -c 'kill -KILL $$'
wait_for 5 runs_at_least tolerant 2 || fail "tolerant: no runs"
[ "$(prop tolerant last_outcome)" = expected_failure ] || fail "tolerant: outcome"

# A timeout: SIGTERM, then SIGKILL after the grace for a command that ignores it; recorded.
start_runner slow --interval 1h --in 0 --timeout 0.3s --grace 0.3s slow -- sh -c \
        'trap "" TERM; echo $$ >"$0"; sleep 30 & wait; sleep 30' "$dir/slow.pid"
slow=$runner
wait_for 10 gone "$slow" || fail "slow: the run was not ended"
[ "$(prop slow last_exit)" = timed_out ] || fail "slow: result $(prop slow last_exit)"
[ "$(prop slow last_exit_code)" = 9 ] || fail "slow: not killed after the grace"
[ "$(prop slow state)" = failed ] || fail "slow: a timeout is an invariant failure"
duration=$(prop slow last_duration_usec)
[ "$duration" -ge 600000 ] && [ "$duration" -lt 5000000 ] || fail "slow: duration $duration"
! kill -0 "$(cat "$dir/slow.pid")" 2>/dev/null || fail "slow: the command outlived its timeout"

# --max-failures: the timer stops after that many failures in a row; the runner ends (1).
start_runner flaky --interval 0.1s --max-failures 3 flaky -- sh -c 'echo x >>"$0"; exit 1' \
        "$dir/flaky.out"
flaky=$runner
wait_for 10 gone "$flaky" || fail "flaky: the runner went on"
[ "$(exit_of "$flaky")" = 1 ] || fail "flaky: runner status"
[ "$(lines "$dir/flaky.out")" = 3 ] || fail "flaky: ran $(lines "$dir/flaky.out") times"
[ "$(prop flaky state)" = inactive ] || fail "flaky: state $(prop flaky state)"

# SIGTERM during a run: the command gets SIGTERM, its run ends as interrupted (an expected
# failure: the timer goes on), the runner exits 0.
start_runner stop --interval 1h --in 0 stop -- sh -c 'echo $$ >"$0"; sleep 30' "$dir/stop.pid"
stop=$runner
wait_for 5 test -s "$dir/stop.pid" || fail "stop: no run"
kill -TERM "$stop"
wait_for 5 gone "$stop" || fail "stop: the runner did not stop"
[ "$(exit_of "$stop")" = 0 ] || fail "stop: runner status"
[ "$(prop stop last_exit)" = interrupted ] && [ "$(prop stop last_exit_code)" = 15 ] ||
        fail "stop: result $(prop stop last_exit) $(prop stop last_exit_code)"
[ "$(prop stop last_outcome)" = expected_failure ] || fail "stop: outcome"
[ "$(prop stop state)" = scheduled ] || fail "stop: state $(prop stop state)"
! kill -0 "$(cat "$dir/stop.pid")" 2>/dev/null || fail "stop: the command outlived the runner"
# SIGINT while waiting: at once, status 0.
start_runner stop --interval 1h stop -- true
sleep 0.3
kill -INT "$runner"
wait_for 5 gone "$runner" || fail "stop: SIGINT did not stop a waiting runner"
[ "$(exit_of "$runner")" = 0 ] || fail "stop: SIGINT status"

# Runner restart: a once timer whose firing came due while no runner was there runs once when
# one comes back, and a runner started after it ran leaves it be (exit 0).
start_runner once --once 1s once -- sh -c 'echo x >>"$0"' "$dir/once.out"
sleep 0.2
kill -KILL "$runner"
sleep 1.2
[ "$(lines "$dir/once.out")" = 0 ] || fail "once: ran without its runner"
start_runner once --once 1s once -- sh -c 'echo x >>"$0"' "$dir/once.out"
once=$runner
wait_for 5 gone "$once" || fail "once: the runner goes on after the last firing"
[ "$(exit_of "$once")" = 0 ] || fail "once: runner status"
[ "$(lines "$dir/once.out")" = 1 ] || fail "once: ran $(lines "$dir/once.out") times"
start_runner once --once 1s once -- sh -c 'echo x >>"$0"' "$dir/once.out"
once=$runner
wait_for 5 gone "$once" || fail "once: a restarted runner waits"
sleep 1.2
[ "$(lines "$dir/once.out")" = 1 ] || fail "once: a restarted runner ran it again"
[ "$(prop once runs)" = 1 ] || fail "once: runs $(prop once runs)"

# Service restart: the runner reconnects, and the firing that came due meanwhile runs once.
start_runner restart --once 1s restart -- sh -c 'echo x >>"$0"' "$dir/restart.out"
restart=$runner
sleep 0.3
stop_service
sleep 1.2
[ "$(lines "$dir/restart.out")" = 0 ] || fail "restart: ran without the service"
start_service
wait_for 10 gone "$restart" || fail "restart: the runner did not carry on"
[ "$(exit_of "$restart")" = 0 ] || fail "restart: runner status"
[ "$(lines "$dir/restart.out")" = 1 ] || fail "restart: ran $(lines "$dir/restart.out") times"
[ "$(prop restart runs)" = 1 ] || fail "restart: runs $(prop restart runs)"
grep -q "reconnecting" "$dir/restart.log" || fail "restart: not reconnected"

# A standby pair: each firing runs once, on one of the two; when one dies the other takes the
# next firings.
run_env=WHO=a
start_runner pair --interval 0.3s --shell pair -- 'echo $WHO >>' "$dir/pair.out"
pair_a=$runner
run_env=WHO=b
start_runner pair --interval 0.3s --shell pair -- 'echo $WHO >>' "$dir/pair.out"
pair_b=$runner
wait_for 10 runs_at_least pair 6 || fail "pair: no runs"
kill -TERM "$pair_a" "$pair_b"
wait_for 5 gone "$pair_a" && wait_for 5 gone "$pair_b" || fail "pair: did not stop"
[ "$(lines "$dir/pair.out")" = "$(prop pair runs)" ] ||
        fail "pair: $(lines "$dir/pair.out") runs of the command, $(prop pair runs) of the timer"
run_env=WHO=a
start_runner pair --interval 0.3s --shell pair -- 'echo $WHO >>' "$dir/pair.out"
pair_a=$runner
run_env=WHO=b
start_runner pair --interval 0.3s --shell pair -- 'echo $WHO >>' "$dir/pair.out"
pair_b=$runner
sleep 0.5
kill -KILL "$pair_a"
: >"$dir/pair.out"
before=$(prop pair runs)
wait_for 10 runs_at_least pair $((before + 3)) || fail "pair: no handover"
kill -TERM "$pair_b"
wait_for 5 gone "$pair_b" || fail "pair: b did not stop"
grep -q "^b\$" "$dir/pair.out" || fail "pair: b took no firing after a died"
! grep -q "^a\$" "$dir/pair.out" || fail "pair: a ran after it died"
[ "$(lines "$dir/pair.out")" -ge $(($(prop pair runs) - before - 1)) ] ||
        fail "pair: firings lost in the handover"

# Usage errors change nothing.
set +e
ctl run bad --every 1s >/dev/null 2>&1
[ $? = 2 ] || fail "run without a command is a usage error"
ctl run bad -- true >/dev/null 2>&1
[ $? = 2 ] || fail "run without a policy is a usage error"
ctl run bad --once -- true >/dev/null 2>&1
[ $? = 2 ] || fail "run --once without a first firing is a usage error"
set -e
ctl show bad >/dev/null 2>&1 && fail "a usage error declared a timer"
echo "ok"
