#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# B7 inside the container bench-run-latency boots, as a unit under its systemd, with timerd
# installed and socket-activated: deadline → command running for timerctl run, systemd-run
# --on-calendar and cron (deadline-to-command.sh), one after the other. Writes their summary lines
# to OUT/latency; details to stdout.
# Usage: run-latency-in-container.sh FIRINGS CRON_FIRINGS OUT
set -euo pipefail
firings=$1
cron_firings=$2
out=$3
# shellcheck source-path=SCRIPTDIR/.. source=tests/systemd/container.sh
. /timerd-test/container.sh

echo "== install timerd and start it through its socket"
container_install
systemctl daemon-reload
systemctl enable --now timerd.socket 2>&1
timerctl status | grep -E "Version|Backend"
{
        /timerd-bench/deadline-to-command.sh timerctl-run "$firings"
        /timerd-bench/deadline-to-command.sh systemd-run "$firings"
        /timerd-bench/deadline-to-command.sh cron "$cron_firings"
        echo "systemd $(systemctl --version | awk 'NR == 1 { print $2 }')"
} >"$out/latency"
cat "$out/latency"
echo "== done"
