#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The Debian packages (tools/debs) in a real systemd booted as PID 1 in a container (container.sh):
# in-container-packages.sh installs them with apt, upgrades them to a rebuilt version, runs the
# autopkgtest (debian/tests/installed) against them, removes and purges them.
# Usage: packages.sh DEBS_DIR UPGRADE_DEBS_DIR [ROOTFS]
set -eu
tests=$(cd "$(dirname "$0")" && pwd)
source_root=$(cd "$tests/../.." && pwd)
# shellcheck source-path=SCRIPTDIR source=container.sh
. "$tests/container.sh"

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }

if reason=$(container_missing); then
        skip "$reason"
fi
container_rootfs "${3:-$source_root/build/nspawn-rootfs}" || fail "no rootfs"

work=$(mktemp -d /tmp/timerd-packages.XXXXXX)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
for set in install:"$1" upgrade:"$2"; do
        mkdir -p "$work/dest/${set%%:*}"
        for package in timerd libtimerd0 libtimerd-dev; do
                deb=$(ls "${set#*:}/${package}_"*.deb 2>/dev/null) || fail "no $package in ${set#*:}"
                cp "$deb" "$work/dest/${set%%:*}/"
        done
done
chmod -R a+rX "$work/dest"

container_run timerd-packages "$container_rootfs" "$work" 600 \
        "/bin/sh /timerd-test/in-container-packages.sh" --bind-ro="$tests:/timerd-test" \
        --bind-ro="$source_root:/timerd-source" && status=0 || status=$?
[ "$status" -eq 0 ] || fail "the container test exited $status"
echo "ok"
