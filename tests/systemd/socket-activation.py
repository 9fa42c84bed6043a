#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""timerd socket-activated by systemd-socket-activate, with a NOTIFY_SOCKET read here: nothing
runs before the first connection; READY=1 (with STATUS=) comes only after setup; STATUS= follows
the timers; watchdog pings come from the loop (none while it is stopped); SIGHUP is a reload;
SIGTERM sends STOPPING=1 and exits 0.

Usage: socket-activation.py TIMERD TIMERCTL"""

import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

TIMERD, TIMERCTL = sys.argv[1], sys.argv[2]


def fail(message):
    print(f"FAIL: {message}", flush=True)
    sys.exit(1)


class Notifications:
    """The datagrams systemd would read from NOTIFY_SOCKET."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(path)
        self.seen = []

    def drain(self):
        got = []
        while select.select([self.sock], [], [], 0)[0]:
            got.append(self.sock.recv(4096).decode())
        self.seen += got
        return got

    def expect(self, predicate, what, timeout=10.0):
        """The first message for which predicate holds, skipping watchdog pings."""
        end = time.monotonic() + timeout
        while True:
            left = end - time.monotonic()
            if left <= 0:
                fail(f"no {what} within {timeout}s; got {self.seen}")
            if select.select([self.sock], [], [], left)[0]:
                message = self.sock.recv(4096).decode()
                self.seen.append(message)
                if predicate(message):
                    return message
                if message != "WATCHDOG=1":
                    fail(f"wanted {what}, got {message!r}")


def fields(message):
    return dict(line.split("=", 1) for line in message.split("\n") if "=" in line)


def main():
    if shutil.which("systemd-socket-activate") is None:
        print("SKIP: systemd-socket-activate is not installed (package systemd)")
        sys.exit(77)
    tmp = tempfile.mkdtemp(prefix="timerd-activate.")
    check_user_option(tmp)
    socket_path = os.path.join(tmp, "io.timerd")
    unused = os.path.join(tmp, "bound-by-timerd")
    notify = Notifications(os.path.join(tmp, "notify"))
    stderr_path = os.path.join(tmp, "stderr")
    env = dict(os.environ, NOTIFY_SOCKET=notify.sock.getsockname(), WATCHDOG_USEC="400000")
    env.pop("WATCHDOG_PID", None)

    with open(stderr_path, "w") as stderr:
        proc = subprocess.Popen(
            ["systemd-socket-activate", "--listen", socket_path, "--fdname=varlink",
             "-E", "NOTIFY_SOCKET", "-E", "WATCHDOG_USEC",
             TIMERD, "--socket", unused, "--state-dir", os.path.join(tmp, "state")],
            env=env, stderr=stderr)
    try:
        run(proc, tmp, socket_path, unused, notify, stderr_path)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        shutil.rmtree(tmp, ignore_errors=True)


def check_user_option(tmp):
    """--user: an empty name is a usage error; a start that cannot switch is a setup failure."""
    base = [TIMERD, "--socket", os.path.join(tmp, "user-test"),
            "--state-dir", os.path.join(tmp, "user-state")]
    empty = subprocess.run(base + ["--user", ""], capture_output=True, text=True, timeout=30)
    if empty.returncode != 2:
        fail(f"--user '' exited {empty.returncode}, wanted 2")
    unknown = subprocess.run(base + ["--user", "no-such-user-timerd-test"], capture_output=True,
                             text=True, timeout=30)
    reason = "No such user" if os.geteuid() == 0 else "needs root"
    if unknown.returncode != 1 or reason not in unknown.stderr:
        fail(f"--user no-such-user exited {unknown.returncode}: {unknown.stderr}")
    if os.path.exists(os.path.join(tmp, "user-test")):
        fail("a failed start left its socket behind")


def ctl(socket_path, *args):
    return subprocess.run([TIMERCTL, "--socket", socket_path, *args], capture_output=True,
                          text=True, timeout=30)


def run(proc, tmp, socket_path, unused, notify, stderr_path):
    deadline = time.monotonic() + 10
    while not os.path.exists(socket_path):
        if time.monotonic() > deadline or proc.poll() is not None:
            fail("systemd-socket-activate did not listen")
        time.sleep(0.01)

    # Nothing is started before somebody connects.
    time.sleep(0.3)
    if notify.drain():
        fail(f"notifications before the first connection: {notify.seen}")

    status = ctl(socket_path, "status")
    if status.returncode != 0:
        fail(f"timerctl status through the passed socket: {status.stderr}")
    ready = notify.expect(lambda m: "READY=1" in m.split("\n"), "READY=1")
    # Setup was complete before READY=1 went out: its log lines were written before it.
    log = open(stderr_path).read()
    for line in ("Listening on the socket passed by systemd", "Capabilities:", "Backend "):
        if line not in log:
            fail(f"READY=1 came before setup logged {line!r}; log so far:\n{log}")
    backend = "io_uring" if "io_uring" in status.stdout else "timerfd"
    want = f"0 timers, 0 waiters; {backend} backend"
    if fields(ready).get("STATUS") != want:
        fail(f"READY=1 carries STATUS={fields(ready).get('STATUS')!r}, wanted {want!r}")
    if os.path.exists(unused):
        fail("timerd bound a socket of its own although systemd passed one")

    # STATUS= follows the registry.
    add = ctl(socket_path, "add", "nightly", "--once", "1h")
    if add.returncode != 0:
        fail(f"timerctl add: {add.stderr}")
    notify.expect(lambda m: m.startswith("STATUS="), "a STATUS= update")
    if notify.seen[-1] != f"STATUS=1 timer, 0 waiters; {backend} backend":
        fail(f"STATUS= after one timer: {notify.seen[-1]!r}")

    # The loop pings the watchdog; a stopped loop does not.
    notify.expect(lambda m: m == "WATCHDOG=1", "WATCHDOG=1")
    os.kill(proc.pid, signal.SIGSTOP)
    time.sleep(0.1)
    notify.drain()
    time.sleep(1.0)
    if "WATCHDOG=1" in notify.drain():
        fail("a stopped loop pinged the watchdog")
    os.kill(proc.pid, signal.SIGCONT)
    notify.expect(lambda m: m == "WATCHDOG=1", "WATCHDOG=1 after SIGCONT")

    # SIGHUP: a reload, announced.
    os.kill(proc.pid, signal.SIGHUP)
    notify.expect(lambda m: m == "RELOADING=1", "RELOADING=1")
    notify.expect(lambda m: m == "READY=1", "READY=1 after the reload")

    # SIGTERM: STOPPING=1 first, then a clean exit.
    os.kill(proc.pid, signal.SIGTERM)
    stopping = notify.expect(lambda m: "STOPPING=1" in m.split("\n"), "STOPPING=1")
    try:
        code = proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        fail("timerd did not exit after SIGTERM")
    if code != 0:
        fail(f"timerd exited {code} after SIGTERM")
    log = open(stderr_path).read()
    if "Stopping: shutdown requested" not in log:
        fail(f"no clean teardown in the log:\n{log}")
    print(f"ok: READY=1 after setup ({ready!r}), {stopping!r} at SIGTERM; "
          f"{len(notify.seen)} notifications")


main()
