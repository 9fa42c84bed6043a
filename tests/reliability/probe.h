/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A well-behaved client that measures its round trips (Status calls on its own connection, one
 * every few milliseconds, in a thread) while a test makes the service busy or abuses it: the
 * slowest round trip says whether the loop kept serving everyone else.
 */

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

struct probe {
        char socket[108];
        pthread_t thread;
        atomic_bool stop;
        /* Written by the thread; read after probe_stop(). */
        uint64_t calls;
        uint64_t failures; /* calls that did not get a Status back */
        uint64_t max_usec; /* the slowest round trip */
        int first_error;
};

void probe_start(struct probe *p, const char *socket);
/* Stop and join; the counters are final afterwards. */
void probe_stop(struct probe *p);
