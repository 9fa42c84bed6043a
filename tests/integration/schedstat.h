/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What the scheduler counts for a thread (/proc/.../schedstat): the time it ran and the time it
 * was runnable but waited for a CPU. On a loaded machine a wake-up or a round trip takes what was
 * asked of it plus such waits. A test that bounds one subtracts the waits the kernel counted
 * rather than guessing a margin for the load: the bound stays as tight as on an idle machine for
 * what the service or libtimerd does, and holds however busy the machine is.
 */

#include <stdint.h>
#include <sys/types.h>

struct schedstat {
        uint64_t ran_usec;    /* on a CPU */
        uint64_t waited_usec; /* runnable, waiting for a CPU */
};

/* The calling thread's (pid 0), or the main thread's of process `pid` (timerd's event loop; also
 * once it exited, until it is reaped). 0, or a negative errno (no such process, a kernel without
 * schedstats). Safe in any thread. */
int schedstat_read(pid_t pid, struct schedstat *ret);

/* The time the calling thread and the main thread of `pid` (0: none) waited for a CPU, added
 * up: a counter that only grows, to take differences of. 0 or a negative errno. */
int schedstat_waited(pid_t pid, uint64_t *ret_usec);

/* A stopwatch for a wait that bounds how long something may take (a reply, a state to reach):
 * it leaves out the CPU waits of the calling thread and of `pid` (0: none), so that it runs as
 * the clock on an idle machine and slower on a busy one. Waits that cannot be read (`pid`
 * exited and was reaped) count as none. */
struct schedstat_watch {
        uint64_t start_usec, waits_usec;
        pid_t pid;
};

void schedstat_watch_start(struct schedstat_watch *w, pid_t pid);
/* Microseconds since the start, less the CPU waits meanwhile. */
uint64_t schedstat_watch_usec(const struct schedstat_watch *w);
