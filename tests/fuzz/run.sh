#!/bin/sh
# Fuzz one libFuzzer target for a bounded time: run.sh TARGET WORKDIR CORPUS
# New inputs go to WORKDIR/corpus (the seed corpus in the tree is only read), a crash to
# WORKDIR/crash-*; copy a crash into CORPUS once it is fixed, as a regression input.
# FUZZ_SECONDS (default 10) is the time budget; FUZZ_JOBS (default 1) parallel workers.
set -eu
target=$1
work=$2
corpus=$3
seconds=${FUZZ_SECONDS:-10}
jobs=${FUZZ_JOBS:-1}

mkdir -p "$work/corpus"
# Findings end the run with the report on stderr: leaks too, and UBSan's reports as errors.
export ASAN_OPTIONS="${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"
# A finding is a failure: libFuzzer's own exit status for one, 77, is what meson calls a skip.
set -- -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 -print_final_stats=1 \
        -error_exitcode=1 -timeout_exitcode=1 -artifact_prefix="$work/" "$work/corpus" "$corpus"
if [ "$jobs" -gt 1 ]; then
        set -- -jobs="$jobs" -workers="$jobs" "$@"
fi
cd "$work"
exec "$target" "$@"
