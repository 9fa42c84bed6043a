#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# timerd installed into a real systemd booted as PID 1 in a container: systemd-nspawn on a Debian
# bookworm rootfs made once by debootstrap and cached (ROOTFS, shared by every build dir; a lock
# keeps concurrent runs apart). `meson install` goes into a DESTDIR bound into the container, and
# in-container.sh runs there as a unit with SuccessAction=exit and FailureAction=exit, so the
# container's exit status is the test's.
# Usage: nspawn.sh MESON BUILD_DIR TESTS_DIR ROOTFS SANITIZE
set -eu
meson=$1
build=$2
tests=$3
rootfs=${TIMERD_TEST_ROOTFS:-$4}
sanitize=$5

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }

[ "$(id -u)" = 0 ] || skip "booting a container needs root"
for tool in systemd-nspawn debootstrap flock; do
        command -v $tool >/dev/null || skip "no $tool here (tools/deps installs it)"
done

# What timerd needs at run time beyond systemd (and gcc's sanitizer runtimes, for
# -Db_sanitize builds); /bin/kill (procps) is the unit's ExecReload=.
packages=systemd,systemd-sysv,dbus,procps,liburing2,libjson-c5,libasan8,libubsan1

mkdir -p "$(dirname "$rootfs")"
exec 9>"$rootfs.lock"
flock -w 900 9 || fail "$rootfs is locked by another run for too long"
if [ "$(cat "$rootfs/.timerd-packages" 2>/dev/null)" != "$packages" ]; then
        mirror=$(apt-get indextargets --format '$(REPO_URI) $(CODENAME)' 2>/dev/null |
                awk '$2 == "bookworm" { print $1; exit }')
        mirror=${mirror:-http://deb.debian.org/debian/}
        echo "== debootstrap bookworm from $mirror into $rootfs (once, about a minute)"
        rm -rf "$rootfs" "$rootfs.new"
        debootstrap --variant=minbase --include="$packages" bookworm "$rootfs.new" "$mirror" \
                >"$rootfs.log" 2>&1 || { tail -20 "$rootfs.log"; fail "debootstrap failed"; }
        echo "$packages" >"$rootfs.new/.timerd-packages"
        mv "$rootfs.new" "$rootfs"
fi

work=$(mktemp -d /tmp/timerd-nspawn.XXXXXX)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"

echo "== meson install into a DESTDIR"
"$meson" install -C "$build" --destdir "$work/dest" --no-rebuild --quiet >"$work/install.log" 2>&1 ||
        { cat "$work/install.log"; fail "meson install failed"; }

cat >"$work/timerd-test.service" <<EOF
[Unit]
Description=timerd installed and exercised under systemd
SuccessAction=exit
FailureAction=exit

[Service]
Type=oneshot
ExecStart=/bin/sh /timerd-test/in-container.sh $sanitize
TimeoutStartSec=300
StandardOutput=journal+console
StandardError=journal+console
EOF

echo "== booting systemd in a container"
# The container's capability set lacks CAP_WAKE_ALARM unless asked for. A network namespace of
# its own gives it CAP_NET_ADMIN there, which PrivateNetwork= needs to set up the loopback device.
timeout --kill-after=10 420 systemd-nspawn --quiet --directory="$rootfs" \
        --machine="timerd-test-$$" --register=no --keep-unit --volatile=overlay \
        --capability=CAP_WAKE_ALARM --private-network \
        --bind-ro="$work/dest:/timerd-dest" --bind-ro="$tests:/timerd-test" \
        --bind-ro="$work/timerd-test.service:/etc/systemd/system/timerd-test.service" \
        --boot systemd.wants=timerd-test.service systemd.show_status=false </dev/null &&
        status=0 || status=$?
[ "$status" -eq 0 ] || fail "the container test exited $status"
echo "ok"
