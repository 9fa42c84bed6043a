/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Durability tests run the real timerd (tests/integration/harness.h) on a state directory of
 * their own, which outlives each run of the service: started, stopped, killed and started again
 * on the same journal.
 */

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

#include "../integration/harness.h"

struct dur {
        struct harness h;
        bool running;
        char dir[160]; /* the state directory */
};

/* cmocka fixtures: a state directory under /tmp; the teardown kills a service that a failed test
 * left running and removes the directory. */
int dur_setup(void **state);
int dur_teardown(void **state);
/* The same with the state directory in `parent`. */
struct dur *dur_new(const char *parent);
void dur_free(struct dur *d);

/* Start timerd on the state directory; waits until it answers. */
void dur_start(struct dur *d);
/* SIGTERM, and it exits 0. */
void dur_stop(struct dur *d);
/* SIGKILL: no chance to save anything. */
void dur_crash(struct dur *d);
/* Stopped (dur_stop) or killed (dur_crash), started again: a new connection to it. */
struct timerd *dur_restart(struct dur *d, bool crash);

/*
 * A varlink call with printf-made JSON parameters. Returns 0 or the typed error; *ret (may be
 * NULL) gets the reply's or the error's parameters (json_object_put() it).
 */
int dur_call(struct timerd *t, json_object **ret, const char *method, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* io.timerd.Service.Status's store field, into buf. */
void dur_store_status(struct timerd *t, char *buf, size_t size);

/* Microseconds on CLOCK_MONOTONIC. */
uint64_t dur_now(void);
