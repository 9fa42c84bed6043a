#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# B6 inside the container that bench-systemd-run boots, as a unit under its systemd, with timerd
# installed and socket-activated. One-shot timers 1 h out are made three ways, the runs of each
# interleaved: systemd-run --on-active (a transient timer unit and its service, one process per
# timer), timerctl add (one process per timer) and libtimerd Register (one connection, CALLS
# calls); after each batch the timers are removed, untimed. Then the lateness of 1 s one-shots,
# alternately of systemd and of timerd. CPU time is the scheduler's on-CPU time of each process
# (all its threads, /proc/PID/task/*/schedstat, in ns); the timer-making processes' is the CPU time
# of this shell's children. timerd's journal (/var/lib) and systemd's transient units (/run) are
# both on tmpfs here (--volatile=overlay). Writes the table rows to OUT/rows; details to stdout.
# Usage: systemd-run-in-container.sh TIMERS CALLS RUNS FIRINGS OUT
set -euo pipefail
timers=$1
calls=$2
runs=$3
firings=$4
out=$5
# shellcheck source-path=SCRIPTDIR/.. source=tests/systemd/container.sh
. /timerd-test/container.sh
bench_libtimerd=/timerd-bench-build/bench-libtimerd
results=$(mktemp)
ticks=$(getconf CLK_TCK)

now_usec() { echo "${EPOCHREALTIME/./}"; }
# The on-CPU time of process $1, in µs.
cpu_usec() {
        local task run rest sum=0
        for task in /proc/"$1"/task/*/schedstat; do
                read -r run rest <"$task"
                sum=$((sum + run))
        done
        echo $((sum / 1000))
}
# The CPU time of this shell's children that have ended, in µs (10 ms ticks).
children_usec() {
        local stat
        stat=$(</proc/$$/stat)
        # shellcheck disable=SC2086 # the fields after "(comm) "
        set -- ${stat##*) }
        echo $(((${14} + ${15}) * 1000000 / ticks))
}

echo "== install timerd and start it through its socket"
container_install
systemctl daemon-reload
systemctl enable --now timerd.socket 2>&1
timerctl status | grep -E "Version|Backend|Store"
timerd_pid=$(systemctl show -p MainPID --value timerd.service)
journald_pid=$(systemctl show -p MainPID --value systemd-journald.service)
systemd_version=$(systemctl --version | awk 'NR == 1 { print $2 }')

# One batch: KIND RUN COUNT; appends "KIND COUNT WALL SERVICE_CPU CLIENT_CPU JOURNALD_CPU" (µs) to
# $results when RUN is not "warm-up".
batch() {
        local kind=$1 run=$2 count=$3 service i start end wall service_cpu client_cpu journald_cpu
        local line
        service=$timerd_pid
        [ "$kind" = systemd-run ] && service=1
        service_cpu=$(cpu_usec "$service")
        journald_cpu=$(cpu_usec "$journald_pid")
        client_cpu=$(children_usec)
        start=$(now_usec)
        case $kind in
        systemd-run)
                for ((i = 1; i <= count; i++)); do
                        systemd-run --quiet --unit="b6-$run-$i" --on-active=1h \
                                --timer-property=AccuracySec=1us /bin/true
                done
                ;;
        timerctl)
                for ((i = 1; i <= count; i++)); do
                        timerctl add "b6-$run-$i" --once 1h >/dev/null
                done
                ;;
        libtimerd)
                line=$("$bench_libtimerd" register "$count")
                ;;
        esac
        end=$(now_usec)
        wall=$((end - start))
        service_cpu=$(($(cpu_usec "$service") - service_cpu))
        journald_cpu=$(($(cpu_usec "$journald_pid") - journald_cpu))
        client_cpu=$(($(children_usec) - client_cpu))
        case $kind in
        systemd-run) systemctl stop "b6-$run-*.timer" ;;
        timerctl)
                for ((i = 1; i <= count; i++)); do
                        timerctl remove "b6-$run-$i"
                done
                ;;
        libtimerd)
                # Its own figures: the calls alone, without the process's start and connect.
                read -r wall service_cpu <<<"$line"
                client_cpu=0
                ;;
        esac
        [ "$run" = warm-up ] && return
        echo "$kind $count $wall $service_cpu $client_cpu $journald_cpu" | tee -a "$results"
}

# The lateness of a 1 s one-shot of systemd: appends "late-systemd PROCESS TRIGGER": µs after the
# deadline that the unit's process was started and that PID 1 triggered the unit. The timer and
# its service stay loaded after they run (RemainAfter*) so that their timestamps can be read, and
# nothing asks PID 1 anything between the deadline and the process's start.
late_systemd() {
        local unit=b6late$1 deadline started=0 triggered tries=50
        systemd-run --quiet --unit="$unit" --on-active=1s --timer-property=AccuracySec=1us \
                --timer-property=RemainAfterElapse=yes --property=RemainAfterExit=yes /bin/true
        deadline=$(timer_property "$unit" NextElapseUSecMonotonic)
        sleep 1.3
        while started=$(systemctl show -p ExecMainStartTimestampMonotonic --value "$unit.service") &&
                [ "$started" = 0 ] && [ $((tries -= 1)) -gt 0 ]; do
                sleep 0.1
        done
        [ "$started" != 0 ] || { echo "$unit did not fire"; exit 1; }
        triggered=$(timer_property "$unit" LastTriggerUSecMonotonic)
        systemctl stop "$unit.timer" "$unit.service"
        echo "late-systemd $((started - deadline)) $((triggered - deadline))" | tee -a "$results"
}
# A timer's property in µs: systemctl show prints these as time spans, the bus has the number.
# UNIT is made of letters and digits, which is its bus object's name too.
timer_property() {
        busctl get-property org.freedesktop.systemd1 "/org/freedesktop/systemd1/unit/$1_2etimer" \
                org.freedesktop.systemd1.Timer "$2" | awk '{ print $2 }'
}

late_timerd() {
        echo "late-timerd $("$bench_libtimerd" lateness)" | tee -a "$results"
}

echo "== warm-up"
for kind in systemd-run timerctl libtimerd; do
        batch "$kind" warm-up 20
done
echo "== $runs runs of $timers timers made by systemd-run and by timerctl, $calls by libtimerd"
echo "kind count wall_us service_cpu_us client_cpu_us journald_cpu_us"
units_before=$(systemctl list-units --all --no-legend | wc -l)
for ((run = 1; run <= runs; run++)); do
        batch systemd-run "$run" "$timers"
        batch timerctl "$run" "$timers"
        batch libtimerd "$run" "$calls"
done
echo "units loaded in systemd before the runs: $units_before, after: $(systemctl list-units --all --no-legend | wc -l)"
echo "== lateness of $firings 1 s one-shots each (µs after the deadline)"
for ((firing = 1; firing <= firings; firing++)); do
        late_systemd "$firing"
        late_timerd
done

# Medians and ranges over the runs, one line a kind: rate (per s), CPU per timer (µs) of the
# service, the client processes and journald; for lateness, of the two figures (µs).
awk '
function median(v, n,    i, j, x) {
        for (i = 2; i <= n; i++)
                for (j = i; j > 1 && v[j - 1] > v[j]; j--) {
                        x = v[j]; v[j] = v[j - 1]; v[j - 1] = x
                }
        return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
}
function add(kind, field, value) {
        n[kind, field]++
        v[kind, field, n[kind, field]] = value
        kinds[kind] = 1
}
$1 ~ /^late-/ { add($1, 1, $2); add($1, 2, $3); next }
{ add($1, 1, $2 * 1e6 / $3); add($1, 2, $4 / $2); add($1, 3, $5 / $2); add($1, 4, $6 / $2) }
END {
        for (kind in kinds) {
                line = kind
                for (f = 1; n[kind, f]; f++) {
                        delete w
                        for (i = 1; i <= n[kind, f]; i++)
                                w[i] = v[kind, f, i]
                        m = median(w, n[kind, f])
                        line = line sprintf(" %.1f %.1f %.1f", m, w[1], w[n[kind, f]])
                }
                print line
        }
}' "$results" >"$results.summary"
echo "== medians (min max): rate/s, then per timer µs: service CPU, client CPU, journald CPU"
cat "$results.summary"

# figure KIND N: field N of KIND's summary, rounded: 1, 2, 3 the median, min and max of its first
# figure; 4, 7, 10 the medians of the second, third and fourth.
figure() { awk -v kind="$1" -v n="$2" '$1 == kind { printf "%.0f", $(n + 1) }' "$results.summary"; }
# A / B to two significant digits.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { r = b ? a / b : 0; printf(r >= 100 ? "%.0f" : "%.2g", r) }'; }

# "RATE/s (MIN–MAX)" of a kind; the sum of its CPU medians per timer.
rate() { echo "$(figure "$1" 1)/s ($(figure "$1" 2)–$(figure "$1" 3))"; }
cpu_sum() { echo $(($(figure "$1" 4) + $(figure "$1" 7) + $(figure "$1" 10))); }
late() { echo "$(figure "$1" 1) µs ($(figure "$1" 2)–$(figure "$1" 3))"; }

systemd_run="systemd-run --on-active: $(rate systemd-run); CPU per timer: PID 1 \
$(figure systemd-run 4) + systemd-run $(figure systemd-run 7) + journald \
$(figure systemd-run 10) = $(cpu_sum systemd-run) µs"
timerctl="timerctl add: $(rate timerctl); CPU per timer: timerd $(figure timerctl 4) + timerctl \
$(figure timerctl 7) + journald $(figure timerctl 10) = $(cpu_sum timerctl) µs"
libtimerd="libtimerd: $(rate libtimerd); CPU per timer: timerd $(figure libtimerd 4) + journald \
$(figure libtimerd 10) = $(cpu_sum libtimerd) µs"
late_timerd="timerd: $(late late-timerd) deadline → the waiting client has the firing (the \
service fired it at +$(figure late-timerd 4) µs)"
late_systemd="systemd: $(late late-systemd) deadline → PID 1 forked the unit's process \
(triggered the unit at +$(figure late-systemd 4) µs)"
versus() {
        echo "rate $(ratio "$(figure "$1" 1)" "$(figure systemd-run 1)")× · CPU \
$(ratio "$(cpu_sum "$1")" "$(cpu_sum systemd-run)")×"
}
{
        echo "| B6 systemd-run | one-shot timers 1 h out, one process per timer ($timers × $runs \
runs, systemd $systemd_version in a container): timers/s · CPU per timer | $timerctl | \
$systemd_run | $(versus timerctl) | — | (info) |"
        echo "| B6 systemd-run | one-shot timers 1 h out, libtimerd Register (retained) on one \
connection ($calls × $runs runs): calls/s · CPU per timer | $libtimerd | $systemd_run | \
$(versus libtimerd) | — | (info) |"
        echo "| B6 systemd-run | lateness of a 1 s one-shot, median (min–max) of $firings | \
$late_timerd | $late_systemd | $(ratio "$(figure late-timerd 1)" "$(figure late-systemd 1)")× \
| — | (info) |"
} >"$out/rows"
rm -f "$results" "$results.summary"
echo "== done"
