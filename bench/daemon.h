/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A timerd started by a benchmark, like tests/integration/harness.c does: its own socket and
 * state directory in a temporary directory, pinned to the service core, --log-level warning.
 * Readiness is READY=1 on a NOTIFY_SOCKET the bench listens on, which also times the start.
 * Its CPU time comes from the process CPU clock (clock_getcpuclockid: utime + stime of all its
 * threads at nanosecond resolution, where /proc/<pid>/stat counts 10 ms ticks), its memory from
 * VmRSS in /proc/<pid>/status.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

struct daemon_options {
        const char *binary;
        const char *backend; /* auto, io_uring, timerfd */
        bool virtual_clock;  /* --clock virtual */
        /* NULL: a fresh temporary directory, removed at stop. Else reused and kept (restarts). */
        const char *dir;
};

struct daemon {
        char dir[256];
        char socket[300];
        pid_t pid;
        clockid_t cpu_clock;
        uint64_t start_usec; /* exec → READY=1 */
        bool owns_dir;
};

void daemon_start(const struct daemon_options *o, struct daemon *ret);
/* SIGTERM and wait (an exit status other than 0 is reported); removes the directory it made. */
void daemon_stop(struct daemon *d);

uint64_t daemon_cpu_nsec(const struct daemon *d);
uint64_t daemon_rss_bytes(const struct daemon *d);

/* A temporary directory for a daemon that is restarted on it; remove it with daemon_dir_remove. */
void daemon_dir_new(char *buf, size_t size);
void daemon_dir_remove(const char *dir);
