#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Runs inside the container booted by packages.sh, as a unit under the container's systemd: the
# .debs bound at /timerd-dest/install, then those at /timerd-dest/upgrade, through what an
# administrator does with packages: apt install, first use, upgrade, remove, purge.
# The source tree is bound at /timerd-source, for the autopkgtest.
set -eu
cd /

say() { echo "== $*"; }
fail() {
        echo "FAIL: $*"
        journalctl --no-pager -q -o short-monotonic -u timerd.service -u timerd.socket | tail -40
        exit 1
}
prop() { systemctl show -p "$1" --value timerd.service; }
state() { systemctl is-active "$1" || true; }
version() { dpkg-query -W -f='${Version}' "$1"; }
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
export DEBIAN_FRONTEND=noninteractive

# What the packages ship, and which of those paths the system had before (/usr, /etc, ...):
# after the purge exactly those must be left.
for deb in /timerd-dest/install/*.deb; do
        dpkg-deb --fsys-tarfile "$deb" | tar -t
done | sed 's|^\./|/|; s|/$||' | grep -v '^$' | sort -u >/tmp/shipped
while read -r path; do
        if [ -e "$path" ] || [ -L "$path" ]; then echo "$path"; fi
done </tmp/shipped >/tmp/there-before

say "apt install ./….deb"
apt-get install -y -q --no-install-recommends /timerd-dest/install/*.deb ||
        fail "apt could not install the packages"
old=$(version timerd)
for f in /usr/sbin/timerd /usr/bin/timerctl /lib/systemd/system/timerd.socket \
        /lib/systemd/system/timerd.service /usr/share/man/man8/timerd.8.gz \
        /usr/share/bash-completion/completions/timerctl /usr/include/timerd/timerd.h; do
        [ -e "$f" ] || fail "the packages did not install $f"
done
grep -qx /etc/timerd/timerd.conf /var/lib/dpkg/info/timerd.conffiles ||
        fail "/etc/timerd/timerd.conf is not a conffile"
[ "$(systemctl is-enabled timerd.socket)" = enabled ] || fail "timerd.socket is not enabled"
[ "$(state timerd.socket)" = active ] || fail "timerd.socket is $(state timerd.socket)"
[ "$(state timerd.service)" = inactive ] || fail "timerd.service runs before any call"

say "a user's first call starts the service"
as_nobody timerctl status || fail "nobody's timerctl status"
[ "$(state timerd.service)" = active ] || fail "timerd.service is $(state timerd.service)"
journalctl -q -o cat -u timerd.service | grep -q "Listening on the socket passed by systemd" ||
        fail "not started by the socket"
as_nobody timerctl add nightly --every 1d || fail "nobody cannot add a timer"
if [ ! -L /var/lib/timerd ] || [ ! -d /var/lib/private/timerd ]; then
        fail "no state in /var/lib/private/timerd: $(ls -la /var/lib /var/lib/private 2>&1)"
fi
pid=$(prop MainPID)

say "upgrade to the rebuilt package: the retained timer stays"
apt-get install -y -q --no-install-recommends /timerd-dest/upgrade/*.deb ||
        fail "apt could not upgrade the packages"
new=$(version timerd)
dpkg --compare-versions "$new" gt "$old" || fail "timerd is at $new after upgrading from $old"
[ "$(version libtimerd0)" = "$new" ] || fail "libtimerd0 is at $(version libtimerd0), not $new"
[ "$(state timerd.socket)" = active ] || fail "after the upgrade timerd.socket is $(state timerd.socket)"
[ "$(prop MainPID)" != "$pid" ] || fail "the upgrade did not restart the service (pid $pid)"
as_nobody timerctl list | grep -q nightly || fail "the upgrade lost the retained timer"
[ "$(state timerd.service)" = active ] || fail "after the upgrade timerd.service is $(state timerd.service)"
journalctl -q -o cat -u timerd.service | grep -c "ready (epoch"

say "autopkgtest (debian/tests/installed) against the installed package"
(cd /timerd-source && sh debian/tests/installed) || fail "the autopkgtest failed"

say "remove: both units stop, the state and the conffile stay"
as_nobody timerctl status >/dev/null || fail "no service before the remove"
apt-get remove -y -q timerd || fail "apt could not remove timerd"
[ "$(state timerd.socket)" = inactive ] || fail "after remove timerd.socket is $(state timerd.socket)"
[ "$(state timerd.service)" = inactive ] || fail "after remove timerd.service is $(state timerd.service)"
[ ! -e /usr/sbin/timerd ] || fail "remove left /usr/sbin/timerd"
[ -d /var/lib/private/timerd ] || fail "remove took the state away"
[ -e /etc/timerd/timerd.conf ] || fail "remove took the conffile away"

say "purge: nothing left behind"
apt-get purge -y -q timerd libtimerd0 libtimerd-dev || fail "apt could not purge the packages"
for path in /var/lib/timerd /var/lib/private/timerd /etc/timerd \
        /etc/systemd/system/sockets.target.wants/timerd.socket; do
        if [ -e "$path" ] || [ -L "$path" ]; then fail "purge left $path"; fi
done
while read -r path; do
        if [ -e "$path" ] || [ -L "$path" ]; then echo "$path"; fi
done </tmp/shipped >/tmp/there-after
left=$(comm -13 /tmp/there-before /tmp/there-after)
[ -z "$left" ] || fail "purge left files of the packages: $left"
systemctl daemon-reload
[ "$(systemctl show -p LoadState --value timerd.socket)" = not-found ] ||
        fail "systemd still knows timerd.socket"
say "all good"
