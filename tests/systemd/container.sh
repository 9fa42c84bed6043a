# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=sh disable=SC3043
# The container timerd is installed into to meet a real systemd as PID 1: systemd-nspawn on a
# Debian bookworm rootfs made once by debootstrap and cached (a lock keeps concurrent runs apart).
# `meson install` goes into a DESTDIR bound into the container, and a command runs there as a unit
# with SuccessAction=exit and FailureAction=exit, so the container's exit status is the command's.
# Used by the systemd-nspawn test (nspawn.sh, in-container.sh), the packages' test (packages.sh,
# in-container-packages.sh) and benchmarks B6 (bench/bench-systemd-run) and B7
# (bench/bench-run-latency). Sourced by sh (dash or bash: it uses `local`); messages go to stdout.
#
# On the host:   container_missing, container_rootfs, container_install_build, container_run
# In the guest:  container_install

# What timerd needs at run time beyond systemd (and gcc's sanitizer runtimes, for
# -Db_sanitize builds), and what the autopkgtest run by packages.sh needs (python3, and gcc,
# libc6-dev and pkg-config to build the examples), and cron for benchmark B7. Not procps: the
# unit's reload must work without /bin/kill.
container_packages=systemd,systemd-sysv,dbus,liburing2,libjson-c5,libasan8,libubsan1,python3,gcc,libc6-dev,pkg-config,cron

# Prints why no container can be booted here and succeeds; fails quietly when one can.
container_missing() {
        if [ "$(id -u)" != 0 ]; then
                echo "booting a container needs root"
                return 0
        fi
        local tool
        for tool in systemd-nspawn debootstrap flock; do
                if ! command -v $tool >/dev/null; then
                        echo "no $tool here (tools/deps installs it)"
                        return 0
                fi
        done
        return 1
}

# container_rootfs ROOTFS: takes ROOTFS.lock on fd 9 (held until the caller exits) and makes
# ROOTFS unless it is there with these packages. $TIMERD_TEST_ROOTFS overrides ROOTFS; the path
# used is left in $container_rootfs.
container_rootfs() {
        container_rootfs=${TIMERD_TEST_ROOTFS:-$1}
        mkdir -p "$(dirname "$container_rootfs")"
        exec 9>"$container_rootfs.lock"
        if ! flock -w 900 9; then
                echo "$container_rootfs is locked by another run for too long"
                return 1
        fi
        [ "$(cat "$container_rootfs/.timerd-packages" 2>/dev/null)" = "$container_packages" ] &&
                return 0
        local mirror
        # shellcheck disable=SC2016 # apt-get's own $(FIELD) syntax
        mirror=$(apt-get indextargets --format '$(REPO_URI) $(CODENAME)' 2>/dev/null |
                awk '$2 == "bookworm" { print $1; exit }')
        mirror=${mirror:-http://deb.debian.org/debian/}
        echo "== debootstrap bookworm from $mirror into $container_rootfs (once, about a minute)"
        rm -rf "$container_rootfs" "$container_rootfs.new"
        if ! debootstrap --variant=minbase --include="$container_packages" bookworm \
                "$container_rootfs.new" "$mirror" >"$container_rootfs.log" 2>&1; then
                tail -20 "$container_rootfs.log"
                echo "debootstrap failed (log: $container_rootfs.log)"
                return 1
        fi
        echo "$container_packages" >"$container_rootfs.new/.timerd-packages"
        mv "$container_rootfs.new" "$container_rootfs"
}

# container_install_build MESON BUILD_DIR WORK: `meson install` of BUILD_DIR into WORK/dest.
container_install_build() {
        if ! "$1" install -C "$2" --destdir "$3/dest" --no-rebuild --quiet >"$3/install.log" 2>&1; then
                cat "$3/install.log"
                echo "meson install failed"
                return 1
        fi
}

# container_run NAME ROOTFS WORK SECONDS COMMAND [NSPAWN_OPTION...]: boots systemd in a container
# of ROOTFS with WORK/dest bound at /timerd-dest, runs COMMAND as a unit that may take SECONDS,
# and returns the container's exit status: COMMAND's. The options bind what COMMAND needs.
container_run() {
        local name="$1" rootfs="$2" work="$3" seconds="$4" command="$5"
        shift 5
        cat >"$work/timerd-run.service" <<EOF
[Unit]
Description=$name
SuccessAction=exit
FailureAction=exit

[Service]
Type=oneshot
ExecStart=$command
TimeoutStartSec=$seconds
StandardOutput=journal+console
StandardError=journal+console
EOF
        echo "== booting systemd in a container"
        # The container's capability set lacks CAP_WAKE_ALARM unless asked for. A network namespace
        # of its own gives it CAP_NET_ADMIN there, which PrivateNetwork= needs to set up loopback.
        # No login prompt on the console, which is the caller's output.
        timeout --kill-after=10 $((seconds + 120)) systemd-nspawn --quiet --directory="$rootfs" \
                --machine="$name-$$" --register=no --keep-unit --volatile=overlay \
                --capability=CAP_WAKE_ALARM --private-network \
                --bind-ro="$work/dest:/timerd-dest" \
                --bind-ro="$work/timerd-run.service:/etc/systemd/system/timerd-run.service" \
                "$@" --boot systemd.wants=timerd-run.service systemd.show_status=false \
                systemd.mask=console-getty.service </dev/null
}

# In the guest: installs the DESTDIR bound at /timerd-dest into /.
container_install() {
        tar -C /timerd-dest -cf - . | tar -C / -xf - --keep-directory-symlink
        ldconfig
}
