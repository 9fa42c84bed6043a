#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# timerctl is a client of libtimerd alone: none of its files includes a varlink/ header, and its
# binary defines none of the functions of the varlink library (a second, static copy of the codec
# beside the one inside libtimerd).
# Usage: timerctl-uses-libtimerd.sh TIMERCTL_SOURCE_DIR TIMERCTL_BINARY LIBVARLINK_A
set -eu
src=$1 exe=$2 varlink=$3
status=0

if grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*["<]varlink/' "$src"/*.c "$src"/*.h; then
        echo "FAIL: timerctl includes varlink/ (above); use libtimerd's public API" >&2
        status=1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
nm --defined-only -g "$varlink" | awk 'NF == 3 && $2 ~ /^[TDRB]$/ { print $3 }' | sort -u \
        >"$tmp/varlink"
[ -s "$tmp/varlink" ] || { echo "FAIL: no functions read from $varlink" >&2; exit 1; }
nm --defined-only "$exe" | awk 'NF == 3 { print $3 }' | sort -u >"$tmp/timerctl"
if comm -12 "$tmp/varlink" "$tmp/timerctl" | grep .; then
        echo "FAIL: timerctl carries a copy of the varlink library's functions (above)" >&2
        status=1
fi
exit $status
