#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# timerd installed into a real systemd booted as PID 1 in a container (container.sh): the build
# installed into a DESTDIR, and in-container.sh run there as a unit, so the container's exit
# status is the test's. The rootfs (ROOTFS, shared by every build dir) is made once and cached.
# Usage: nspawn.sh MESON BUILD_DIR TESTS_DIR ROOTFS SANITIZE
set -eu
meson=$1
build=$2
tests=$3
sanitize=$5
# shellcheck source-path=SCRIPTDIR source=container.sh
. "$tests/container.sh"

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }

if reason=$(container_missing); then
        skip "$reason"
fi
container_rootfs "$4" || fail "no rootfs"

work=$(mktemp -d /tmp/timerd-nspawn.XXXXXX)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"

echo "== meson install into a DESTDIR"
container_install_build "$meson" "$build" "$work" || fail "meson install"

container_run timerd-test "$container_rootfs" "$work" 300 \
        "/bin/sh /timerd-test/in-container.sh $sanitize" --bind-ro="$tests:/timerd-test" &&
        status=0 || status=$?
[ "$status" -eq 0 ] || fail "the container test exited $status"
echo "ok"
