#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The units as systemd judges them: `systemd-analyze verify` says nothing at all, and the
# service's `systemd-analyze security` exposure is at most 1.5.
# Usage: units.sh TIMERD_SERVICE TIMERD_SOCKET TIMERD MAN_PAGE
set -eu
service=$1
socket=$2
timerd=$3
man_page=$4
max_exposure=1.5

command -v systemd-analyze >/dev/null || { echo "SKIP: no systemd-analyze (package systemd)"; exit 77; }
# Documentation=man:timerd(8) is checked only where man(1) is installed (package man-db).
check_man=yes
command -v man >/dev/null || { echo "note: no man(1): not checking Documentation="; check_man=no; }

dir=$(mktemp -d /tmp/timerd-units.XXXXXX)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# ExecStart= names the installed timerd; verify checks it exists, so point it at the built one.
mkdir -p "$dir/units" "$dir/man/man8"
sed "s|^ExecStart=[^ ]*/timerd |ExecStart=$timerd |" "$service" >"$dir/units/timerd.service"
grep -q "^ExecStart=$timerd " "$dir/units/timerd.service" || fail "no ExecStart= to point at $timerd"
cp "$socket" "$dir/units/timerd.socket"
cp "$man_page" "$dir/man/man8/timerd.8"

echo "== systemd-analyze verify"
MANPATH="$dir/man" systemd-analyze verify --man=$check_man "$dir/units/timerd.socket" "$dir/units/timerd.service" \
        >"$dir/out" 2>&1 || fail "verify failed: $(cat "$dir/out")"
[ ! -s "$dir/out" ] || fail "verify is not clean: $(cat "$dir/out")"
echo "clean"

echo "== systemd-analyze security"
systemd-analyze security --offline=true --no-pager "$service" >"$dir/security" 2>&1 ||
        fail "security failed: $(cat "$dir/security")"
grep -v '✓' "$dir/security" || true
exposure=$(sed -n 's/.*Overall exposure level for timerd.service: \([0-9.]*\).*/\1/p' "$dir/security")
[ -n "$exposure" ] || fail "no exposure level in: $(cat "$dir/security")"
echo "exposure $exposure (at most $max_exposure)"
awk -v e="$exposure" -v max="$max_exposure" 'BEGIN { exit !(e <= max) }' ||
        fail "exposure $exposure is above $max_exposure"
