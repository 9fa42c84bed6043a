/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A well-behaved client that measures its round trips (Status calls on its own connection, one
 * every few milliseconds, in a thread) while a test makes the service busy or abuses it: the
 * slowest round trip says whether the loop kept serving everyone else. A round trip counts
 * without the time the probe's thread and the service's loop waited for a CPU meanwhile
 * (schedstat.h): that is the machine's load, not work the service did for others first.
 */

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

struct probe {
        char socket[108];
        pid_t service;
        pthread_t thread;
        atomic_bool stop;
        atomic_uint_fast64_t calls;
        /* Written by the thread; read after probe_stop(). */
        uint64_t failures;      /* calls that did not get a Status back */
        uint64_t max_usec;      /* the slowest round trip, less the CPU waits */
        uint64_t max_wall_usec; /* the slowest round trip as the clock saw it */
        int first_error;
};

/* Start probing the service `service` listening on `socket`; returns once the first round trip
 * ended, so that the probe is connected and running before the test goes on. */
void probe_start(struct probe *p, const char *socket, pid_t service);
/* Wait until the probe has made `calls` round trips in all. */
void probe_wait(struct probe *p, uint64_t calls);
/* Stop and join; the counters are final afterwards. */
void probe_stop(struct probe *p);
