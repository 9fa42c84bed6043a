/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Many timers at once: on one raw connection with BULK_WINDOW calls in flight, or spread over
 * several connections with one call in flight on each (as many clients would). How the benchmarks
 * fill timerd, and how the scale benchmark times registering and cancelling a million timers.
 * Timers are once, notify, monotonic (or calendar, on one expression), named "<prefix><index>".
 * Any error reply is fatal.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bench/raw-conn.h"

/* Calls in flight: eight of the service's bursts (128 calls a connection per drain), so that it
 * finds the next burst waiting while the client reads the last one's replies; with one burst in
 * flight the two took turns. ~200 KB of calls: the service stops reading a full buffer, it does
 * not drop the connection. */
#define BULK_WINDOW 1024

struct bulk_spec {
        const char *prefix;
        size_t n;
        uint64_t accuracy_usec;
        bool retained;
        /* Non-NULL: calendar timers on this expression in `timezone`; deadline is not used. */
        const char *calendar;
        const char *timezone;
        /* start_usec of timer i */
        uint64_t (*deadline)(void *userdata, size_t i);
        void *userdata;
        /* NULL, or n entries that receive the claims' generations */
        uint64_t *generations;
};

struct timerd;

void bulk_register(struct raw_conn *conns, size_t n_conns, const struct bulk_spec *spec);
/* The same timers through libtimerd's timerd_register_async(), BULK_WINDOW in flight (once,
 * monotonic timers only; not calendar, not the generations). */
void bulk_register_libtimerd(struct timerd *t, const struct bulk_spec *spec);
/* One turn of a libtimerd client's loop: wait until t's connection is ready, then
 * timerd_process(). An error is fatal. */
void libtimerd_turn(struct timerd *t);
/* Cancel timers 0..n-1 of a bulk_register that kept the generations. */
void bulk_cancel(struct raw_conn *conns, size_t n_conns, const struct bulk_spec *spec);
