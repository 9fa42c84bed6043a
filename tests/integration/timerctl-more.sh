#!/bin/bash
# timerctl against a running timerd, beyond timerctl.sh: every verb and option, --json in both
# layouts parsed back, timestamps, wait / sleep / monitor with events caused by another client,
# exit codes, and the bash completion.
# Usage: timerctl-more.sh TIMERD TIMERCTL BACKEND COMPLETION
set -eu
timerd=$1
timerctl=$2
backend=$3
completion=$4

dir=$(mktemp -d /tmp/timerctl-more.XXXXXX)
# Two timers a List page: list must follow the pages to show its five timers.
"$timerd" --socket "$dir/io.timerd" --state-dir "$dir/state" --backend "$backend" \
        --log-level warning --list-page 2 &
pid=$!
monitor=""
cleanup() {
        [ -n "$monitor" ] && kill "$monitor" 2>/dev/null
        kill "$pid" 2>/dev/null || true
        wait 2>/dev/null || true
        rm -rf "$dir"
}
trap cleanup EXIT
ctl() { "$timerctl" --socket "$dir/io.timerd" "$@"; }
# Until it accepts: the socket file exists a moment before it listens.
for _ in $(seq 1000); do ctl status >/dev/null 2>&1 && break; sleep 0.01; done

fail() {
        echo "FAIL: $*" >&2
        exit 1
}
expect_exit() {
        local want=$1 got
        shift
        set +e
        "$@" >"$dir/out" 2>"$dir/err"
        got=$?
        set -e
        [ "$got" -eq "$want" ] || fail "$* exited $got, wanted $want: $(cat "$dir/err")"
}
# A Python expression over the JSON document on stdin, as d.
json() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
contains() { grep -qF -- "$2" "$1" || fail "no \"$2\" in: $(cat "$1")"; }
lacks() { ! grep -qF -- "$2" "$1" || fail "\"$2\" in: $(cat "$1")"; }
# Wait until a file has a line matching a pattern (generously).
await_line() {
        for _ in $(seq 1000); do grep -q -- "$2" "$1" && return 0; sleep 0.01; done
        fail "no line like \"$2\" in: $(cat "$1")"
}

## add, with every option; timestamps the systemd way.
ctl add backup --every 5min --accuracy 1s --in "1h 30min"
ctl add wall --once --clock realtime --at "2099-01-01 00:00 UTC" --delivery notify
ctl add soon --once --at +10min --transient # gone at once: transient dies with timerctl
ctl add dog --watchdog 30s --retained
ctl add tick --interval 1h --clock boottime
ctl add idle --once
[ "$(ctl show wall -p next_usec --value)" = 4070908800000000 ] || fail "--at on a realtime clock"
[ "$(ctl show backup -p accuracy_usec --value)" = 1000000 ] || fail "--accuracy"
[ "$(ctl show tick -p clock --value)" = boottime ] || fail "--clock"
ctl add nightly --every 1d --no-catch-up
[ "$(ctl show nightly -p catch_up --value)" = no ] || fail "--no-catch-up"
ctl remove nightly
remaining=$(ctl show backup -p remaining_usec --value)
if [ "$remaining" -le 5300000000 ] || [ "$remaining" -gt 5400000000 ]; then fail "--in: $remaining"; fi
expect_exit 3 ctl show soon

## list: the table, its options, --json in both layouts.
ctl list >"$dir/list"
head -1 "$dir/list" | grep -q "^NEXT .*LEFT .*LAST .*PASSED .*LAST-RESULT .*NAME .*POLICY .*CLOCK .*STATE$" ||
        fail "list header: $(head -1 "$dir/list")"
contains "$dir/list" "5 timers listed."
grep -q "idle .*once .*monotonic .*inactive" "$dir/list" || fail "idle row: $(cat "$dir/list")"
# Soonest first, nothing due last.
[ "$(grep -n dog "$dir/list" | cut -d: -f1)" -lt "$(grep -n backup "$dir/list" | cut -d: -f1)" ] ||
        fail "list order: $(cat "$dir/list")"
[ "$(tail -3 "$dir/list" | head -1 | awk '{print $NF}')" = inactive ] || fail "idle is not last"
ctl list --no-legend --no-pager >"$dir/list"
lacks "$dir/list" NEXT
lacks "$dir/list" listed
[ "$(wc -l <"$dir/list")" -eq 5 ] || fail "--no-legend rows: $(cat "$dir/list")"
COLUMNS=80 ctl list >"$dir/list"
awk 'length > 80 { exit 1 }' "$dir/list" || fail "wider than COLUMNS=80: $(cat "$dir/list")"
contains "$dir/list" "NAME"

[ "$(ctl list --json | wc -l)" -eq 1 ] || fail "--json is short: one line"
[ "$(ctl list --json=short | json 'len(d["timers"])')" = 5 ] || fail "--json=short count"
[ "$(ctl list --json=pretty | wc -l)" -gt 20 ] || fail "--json=pretty is indented"
[ "$(ctl --json=pretty list | json '",".join(t["name"] for t in d["timers"])')" = \
        "backup,dog,idle,tick,wall" ] || fail "--json=pretty names"
if [ "$(id -u)" -eq 0 ]; then
        ctl list --all >"$dir/list"
        contains "$dir/list" OWNER
        grep -q " root .*backup" "$dir/list" || fail "--all owner: $(cat "$dir/list")"
        [ "$(ctl list -a --json | json 'd["timers"][0]["owner"]')" = 0 ] || fail "--all --json"
fi

## show: every field, or properties.
ctl show backup >"$dir/show"
for field in Owner Policy Clock Lifetime Delivery Accuracy Generation State Next Run Pending \
        Runs "Failures in a row" Overruns "Last start" "Last finish" "Last outcome" \
        "Last duration" "Total duration"; do
        contains "$dir/show" "$field: "
done
contains "$dir/show" "Policy: after-completion, every 5min"
[ "$(ctl show backup -p state,lifetime -p delivery)" = "$(printf 'state=scheduled\nlifetime=retained\ndelivery=notify')" ] ||
        fail "show -p: $(ctl show backup -p state,lifetime -p delivery)"
[ "$(ctl show idle -p next_usec,last_outcome)" = "$(printf 'next_usec=\nlast_outcome=')" ] ||
        fail "absent properties are empty"
[ "$(ctl show backup --json | json 'd["timer"]["declaration"]["cadence_usec"]')" = 300000000 ] ||
        fail "show --json"

## status.
ctl status >"$dir/status"
for field in Version PID Epoch Backend Store Uptime Timers Connections "Clock changes" \
        Iterations Firings Lateness "Loop lag"; do
        contains "$dir/status" "$field: "
done
contains "$dir/status" "Backend: $backend"
[ "$(ctl status --json | json 'd["timers"]')" = 5 ] || fail "status --json timers"
epoch=$(ctl status --json | json 'd["epoch"]')
grep -q "Epoch: $epoch" "$dir/status" || fail "status epoch"

## A schedule the service refuses: the description points at the bad part (issue 17).
expect_exit 1 ctl add badcal --calendar "Mon..Fri 25:00"
contains "$dir/err" "(io.timerd.Timer.InvalidSchedule: calendar_invalid): declaration.calendar[0] at byte 9 (\"25:00\")"
expect_exit 1 ctl add badcal --cron "0 3 * 13 *"
contains "$dir/err" "declaration.cron[0] at byte 6 (\"13 *\")"

## reconcile: idempotent, conflicts reported.
[ "$(ctl reconcile job --every 1h)" = "job: created" ] || fail "reconcile creates"
[ "$(ctl reconcile job --every 1h)" = "job: already declared" ] || fail "reconcile again"
[ "$(ctl reconcile job --every 1h --json | json 'd["created"]')" = False ] || fail "reconcile --json"
expect_exit 1 ctl reconcile job --every 2h
contains "$dir/err" "(io.timerd.Timer.ReconciliationConflict)"
ctl reconcile exact --once --clock realtime --at "2099-01-01 00:00 UTC" >/dev/null
[ "$(ctl show exact -p next_usec --value)" = 4070908800000000 ] || fail "reconcile --at"
ctl reconcile quiet --every 1h --desired inactive >/dev/null
[ "$(ctl show quiet -p state --value)" = inactive ] || fail "reconcile --desired inactive"

## schedule, reschedule, kick, cancel, remove.
ctl schedule idle --in 1h
[ "$(ctl show idle -p state --value)" = scheduled ] || fail "schedule --in"
ctl schedule wall --at "2098-06-01 12:00 UTC"
[ "$(ctl show wall -p next_usec --value)" = 4052462400000000 ] || fail "schedule --at"
ctl reschedule backup --in 10min --cadence 1h >"$dir/out"
grep -q "^Was: 1h 2[0-9]min [0-9]*s left, every 5min$" "$dir/out" || fail "reschedule: $(cat "$dir/out")"
# The live schedule's cadence; the declaration stays as registered.
[ "$(ctl show backup -p live_cadence_usec --value)" = 3600000000 ] || fail "reschedule --cadence"
[ "$(ctl show backup -p cadence_usec --value)" = 300000000 ] || fail "reschedule kept the declaration"
ctl show backup | grep -q "Live cadence: 1h$" || fail "show: Live cadence"
[ "$(ctl reschedule backup --json | json 'd["cadence_usec"]')" = 3600000000 ] ||
        fail "reschedule --json"
[ "$(ctl show backup -p state --value)" = inactive ] || fail "reschedule without a time disarms"
ctl kick dog | grep -q "^Next: .* (29s left)$\|^Next: .* (30s left)$" || fail "kick"
next=$(ctl kick dog --json | json 'd["next_usec"]')
[ "$(ctl show dog -p next_usec --value)" = "$next" ] || fail "kick --json"
expect_exit 1 ctl kick backup
contains "$dir/err" "timerctl: kick backup: "
ctl cancel tick
[ "$(ctl show tick -p state --value)" = inactive ] || fail "cancel"
ctl remove tick
for verb in show cancel remove kick; do
        expect_exit 3 ctl "$verb" tick
        contains "$dir/err" "(io.timerd.Timer.NotFound)"
done
expect_exit 3 ctl schedule tick --in 1s
expect_exit 3 ctl reschedule tick

## wait: a firing is printed and completed.
ctl add once --once 100ms
ctl wait once >"$dir/out"
# Fired up to the default handover early, or late past it on a busy machine.
grep -Eq "^once: run 1 fired .*, .* (late|early \(handover\))$" "$dir/out" || fail "wait: $(cat "$dir/out")"
[ "$(ctl show once -p runs,last_outcome)" = "$(printf 'runs=1\nlast_outcome=success')" ] ||
        fail "wait completes with success"
ctl add first --once 50ms
ctl add second --once 150ms
ctl wait first second --count 2 --json >"$dir/out"
[ "$(wc -l <"$dir/out")" -eq 2 ] || fail "wait --count 2: $(cat "$dir/out")"
[ "$(head -1 "$dir/out" | json 'd["firing"]["token"]["name"]')" = first ] || fail "wait --json"
[ "$(tail -1 "$dir/out" | json 'd["firing"]["token"]["name"]')" = second ] || fail "wait order"
## wait names what exists and what can fire (issue 15 item 2).
expect_exit 3 ctl wait nothing --timeout 5s
contains "$dir/err" "(io.timerd.Timer.NotFound)"
ctl add far --once 1h
expect_exit 6 ctl wait far --timeout 200ms
contains "$dir/err" "timerctl: wait: no firing within 200ms"
# "once" ran and is done: nothing can fire, answered at once rather than at the timeout.
expect_exit 3 ctl wait once --timeout 30s
contains "$dir/err" "(io.timerd.Timer.NothingToWaitFor)"
# A parked wait learns at once when its timer is cancelled, or removed.
for how in cancel remove; do
        ctl add "far-$how" --once 1h
        started=$(date +%s%N)
        set +e
        ctl wait "far-$how" --timeout 30s >"$dir/out" 2>"$dir/err" &
        waiter=$!
        set -e
        sleep 0.3
        ctl "$how" "far-$how"
        set +e
        wait "$waiter"
        got=$?
        set -e
        elapsed_ms=$((($(date +%s%N) - started) / 1000000))
        [ "$got" -eq 3 ] || fail "wait, then $how: exit $got: $(cat "$dir/err")"
        contains "$dir/err" "(io.timerd.Timer.NothingToWaitFor)"
        [ "$elapsed_ms" -lt 10000 ] || fail "wait, then $how: answered after ${elapsed_ms}ms"
done

## A retained alarm of a connection that is gone interrupts a sleep of its owner (item 1).
ctl add alx --once 300ms --delivery alarm --retained
expect_exit 7 ctl sleep 5s
grep -q "^Interrupted by alarm alx, " "$dir/out" || fail "sleep, alarm of a gone client: $(cat "$dir/out")"
[ "$(ctl show alx -p runs,pending)" = "$(printf 'runs=1\npending=no')" ] ||
        fail "alarm taken: $(ctl show alx -p runs,pending)"
# Fired with no Sleep parked: kept, shown pending, observed by the next sleep at once.
ctl add aly --once 50ms --delivery alarm --retained
sleep 0.3
[ "$(ctl show aly -p runs,pending)" = "$(printf 'runs=0\npending=yes')" ] ||
        fail "alarm kept: $(ctl show aly -p runs,pending)"
expect_exit 7 ctl sleep 5s
grep -q "^Interrupted by alarm aly, [45]s" "$dir/out" || fail "sleep takes the kept alarm: $(cat "$dir/out")"
[ "$(ctl show aly -p runs,pending)" = "$(printf 'runs=1\npending=no')" ] ||
        fail "kept alarm taken: $(ctl show aly -p runs,pending)"
ctl remove alx
ctl remove aly

## --handover: shown, refused where it cannot be, and wait holds the early firing to its deadline.
ctl add early --once 600ms --handover 400ms --clock realtime
[ "$(ctl show early -p handover_usec --value)" = 400000 ] || fail "--handover"
contains <(ctl show early) "Handover: 400ms"
[ "$(ctl list --json | json '[t["declaration"]["handover_usec"] for t in d["timers"] if t["name"] == "early"][0]')" = 400000 ] ||
        fail "list --json shows the handover"
ctl wait early --json >"$dir/out"
returned=$(date +%s%6N)
deadline=$(json 'd["firing"]["deadline_usec"]' <"$dir/out")
fired=$(json 'd["firing"]["fired_usec"]' <"$dir/out")
[ "$fired" -lt "$deadline" ] || fail "the firing was not handed over early: $(cat "$dir/out")"
[ "$returned" -ge "$deadline" ] || fail "wait returned $((deadline - returned))us before the deadline"
expect_exit 2 ctl add long --once 1s --handover 2s
contains "$dir/err" "--handover: \"2s\": at most 1s"
expect_exit 1 ctl add rung --once 1s --delivery alarm --handover 1ms
contains "$dir/err" "(org.varlink.service.InvalidParameter)"
expect_exit 1 ctl add fast --interval 10ms --handover 10ms
contains "$dir/err" "(io.timerd.Timer.InvalidSchedule: handover_not_shorter)"
expect_exit 3 ctl show long
expect_exit 2 ctl add bad --once 1s --handover soon

## sleep: elapsed, or interrupted by an alarm of the same connection (exit status 7).
ctl sleep 100ms | grep -q "^Slept 1[0-9][0-9]ms\.$" || fail "sleep"
expect_exit 7 ctl sleep 2s --alarm 100ms
grep -q "^Interrupted by alarm timerctl-sleep-[0-9]*, 1s [0-9]*ms left\.$" "$dir/out" ||
        fail "sleep --alarm: $(cat "$dir/out")"
ctl sleep 500ms --alarm 100ms --resume >"$dir/out"
grep -q "sleeping on\.$" "$dir/out" || fail "sleep --resume: $(cat "$dir/out")"
grep -q "^Slept 5[0-9][0-9]ms\.$" "$dir/out" || fail "sleep --resume ends at the deadline"
expect_exit 7 ctl sleep 1s --alarm 50ms --json
[ "$(head -1 "$dir/out" | json 'd["observation"]["alarms"]')" = 1 ] || fail "sleep --json"
[ "$(tail -1 "$dir/out" | json '"remaining_usec" in d')" = True ] || fail "sleep --json finish"
ctl sleep "$(date -d '+1 sec' '+%Y-%m-%d %H:%M:%S')" --clock realtime | grep -q "^Slept" ||
        fail "sleep until a timestamp"

## monitor: events caused by another client.
# Not through ctl(): $! must be timerctl itself, to be killed.
"$timerctl" --socket "$dir/io.timerd" monitor >"$dir/monitor" 2>&1 &
monitor=$!
# Nothing acknowledges a subscription: probe until one event comes through.
for i in $(seq 200); do
        ctl add "probe$i" --once --transient
        grep -q probe "$dir/monitor" && break
        sleep 0.02
done
grep -q probe "$dir/monitor" || fail "monitor saw nothing: $(cat "$dir/monitor")"
ctl add watched --once 100ms
ctl wait watched >/dev/null
ctl remove watched
await_line "$dir/monitor" "unregistered  watched$"
kill "$monitor"
wait "$monitor" 2>/dev/null || true
monitor=""
for line in "registered    watched (scheduled)" "fired         watched run 1 (running)" \
        "completed     watched run 1 (inactive)" "unregistered  watched"; do
        contains "$dir/monitor" "$line"
done

"$timerctl" --socket "$dir/io.timerd" monitor --json -n 1 >"$dir/monitor" &
monitor=$!
for i in $(seq 200); do
        ctl add "json-probe$i" --once
        kill -0 "$monitor" 2>/dev/null || break
        sleep 0.02
done
wait "$monitor" || fail "monitor -n 1 failed"
monitor=""
[ "$(json 'd["event"]["kind"]' <"$dir/monitor")" = registered ] || fail "monitor --json"

## Exit codes and messages.
expect_exit 2 ctl frobnicate
contains "$dir/err" "unknown command \"frobnicate\""
expect_exit 2 ctl add x --once --at "2023-02-30 10:00"
contains "$dir/err" "--at: \"2023-02-30 10:00\": no such time"
expect_exit 2 ctl show backup -p nonsense
# The span --once was given, not a second timer name.
expect_exit 2 ctl add x --once abc
contains "$dir/err" "timerctl: --once: \"abc\": not a time span"
# Spans past what the service holds are timerctl's usage errors, not the service's.
expect_exit 2 ctl add huge --every 9223372036854775808us
contains "$dir/err" "time span too large"
expect_exit 2 ctl add huge --once 9223372036854775807us --clock realtime
contains "$dir/err" "--once: too far in the future"
expect_exit 2 ctl sleep 9223372036854775807us --clock realtime
expect_exit 3 ctl show huge
ctl add farthest --once 292000y
[ "$(ctl show farthest -p next_usec --value)" -gt 9214699200000000000 ] || fail "292000y"
ctl remove farthest
# A signal timer would go to timerctl, gone when it fires.
expect_exit 2 ctl add sig --once 1s --delivery signal
contains "$dir/err" "The program that wants the signal registers the timer itself, through libtimerd"
expect_exit 2 ctl reconcile sig --every 1h --delivery signal
expect_exit 3 ctl show sig
expect_exit 2 ctl list --timeout 1s
expect_exit 5 "$timerctl" --socket "$dir/nothing" status
expect_exit 0 ctl add --help
contains "$dir/out" "Usage: timerctl add NAME POLICY"
expect_exit 0 ctl --version
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
        # Another user: Subscribe all and List all are for root.
        chmod 755 "$dir"
        expect_exit 4 setpriv --reuid=65534 --regid=65534 --clear-groups \
                "$timerctl" --socket "$dir/io.timerd" list --all
        expect_exit 4 setpriv --reuid=65534 --regid=65534 --clear-groups \
                "$timerctl" --socket "$dir/io.timerd" monitor --all
fi

## The bash completion: verbs, options, their values, and timer names from the service.
complete_words() {
        # shellcheck disable=SC1090
        (
                source "$completion"
                COMP_WORDS=("$@")
                COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
                _timerctl
                printf '%s\n' "${COMPREPLY[@]}"
        )
}
[ "$(complete_words timerctl re | tr '\n' ' ')" = "reconcile reschedule remove " ] ||
        fail "completion of verbs: $(complete_words timerctl re)"
complete_words timerctl add x --ev | grep -qx -- --every || fail "completion of add's options"
complete_words timerctl add x --hand | grep -qx -- --handover || fail "completion of --handover"
complete_words timerctl run x --max | grep -qx -- --max-failures || fail "completion of run's options"
complete_words timerctl run x --every 1h -- sh | grep -qx -- sh ||
        fail "completion of run's command"
complete_words timerctl show x --pr | grep -qx -- --property || fail "completion of show's options"
! complete_words timerctl list --ev | grep -q . || fail "list offers add's options"
[ "$(complete_words timerctl add x --clock boot | tr '\n' ' ')" = "boottime boottime-alarm " ] ||
        fail "completion of --clock"
[ "$(complete_words timerctl --json = p)" = pretty ] || fail "completion of --json="
complete_words timerctl show x -p next | grep -qx next_usec || fail "completion of -p"
names=$(complete_words "$timerctl" --socket "$dir/io.timerd" show b | tr '\n' ' ')
[ "$names" = "backup " ] || fail "completion of names: \"$names\""
names=$(complete_words "$timerctl" --socket "$dir/io.timerd" --json=short kick "" | wc -l)
[ "$names" -gt 5 ] || fail "completion of every name: $names"

## root acts on other users' timers with --user; list --all names their owners.
complete_words timerctl show x --us | grep -qx -- --user || fail "completion of --user"
complete_words timerctl show x -U ro | grep -qx root || fail "completion of user names"
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
        chmod 755 "$dir"
        as_user() {
                setpriv --reuid=64001 --regid=64001 --clear-groups \
                        "$timerctl" --socket "$dir/io.timerd" "$@"
        }
        as_user add theirs --watchdog 1h
        as_user add their-once --once 1h
        ctl list --all >"$dir/list"
        grep -q " 64001  *theirs " "$dir/list" || fail "OWNER of a uid without a name: $(cat "$dir/list")"
        grep -q " root  *backup " "$dir/list" || fail "OWNER by name: $(cat "$dir/list")"
        nobody=$(getent passwd 65534 | cut -d: -f1)
        if [ -n "$nobody" ]; then
                setpriv --reuid=65534 --regid=65534 --clear-groups \
                        "$timerctl" --socket "$dir/io.timerd" add nb --once 1h
                ctl list -a >"$dir/list"
                grep -q " $nobody  *nb " "$dir/list" || fail "OWNER $nobody: $(cat "$dir/list")"
                ctl remove --user "$nobody" nb
        fi
        # root's own namespace has no such timer: --user is what names it.
        expect_exit 3 ctl show theirs
        [ "$(ctl show -U 64001 theirs -p owner,state)" = "$(printf 'owner=64001\nstate=scheduled')" ] ||
                fail "show --user"
        ctl kick --user=64001 theirs | grep -q "^Next: .* (59min 59s left)$\|^Next: .* (1h left)$" ||
                fail "kick --user"
        ctl cancel -U 64001 their-once
        [ "$(as_user show their-once -p state --value)" = inactive ] || fail "cancel --user"
        ctl schedule -U 64001 their-once --in 1min
        [ "$(as_user show their-once -p state --value)" = scheduled ] || fail "schedule --user"
        ctl reschedule -U 64001 their-once >/dev/null
        [ "$(as_user show their-once -p state --value)" = inactive ] || fail "reschedule --user"
        ctl add -U 64001 made-for --once 100ms
        ctl wait -U 64001 made-for | grep -q "^made-for: run 1 fired " || fail "wait --user"
        [ "$(as_user show made-for -p runs,last_outcome)" = "$(printf 'runs=1\nlast_outcome=success')" ] ||
                fail "wait --user completes the run"
        [ "$(ctl list -U 64001 --json | json '",".join(t["name"] for t in d["timers"])')" = \
                "made-for,their-once,theirs" ] || fail "list --user"
        names=$(complete_words "$timerctl" --socket "$dir/io.timerd" -U 64001 show their | tr '\n' ' ')
        [ "$names" = "their-once theirs " ] || fail "completion of --user's names: \"$names\""
        ctl remove -U 64001 theirs
        expect_exit 3 as_user show theirs
        # Only root may name another owner.
        expect_exit 4 as_user show -U root backup
        contains "$dir/err" "(org.varlink.service.PermissionDenied)"
        expect_exit 4 as_user cancel --user 0 backup
        ctl remove -U 64001 their-once
        ctl remove -U 64001 made-for
fi

echo "timerctl-more: all checks passed"
