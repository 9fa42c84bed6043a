/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The clocks timers run on, read together once, so that a time on a timer's clock can be shown as a
 * wall-clock time: wall = realtime_now + (t - clock_now).
 */

#include <stdbool.h>
#include <stdint.h>

#include "timerd/timerd-types.h"

struct clocks {
        uint64_t realtime_usec;
        uint64_t monotonic_usec;
        uint64_t boottime_usec;
};

/* Returns 0 or -errno. */
int clocks_read(struct clocks *ret);

struct timerd;
/* The clocks as the service on t keeps them: a virtual-clock instance's own (io.timerd.Test
 * Now), else *machine's. */
void clocks_of_service(struct timerd *t, const struct clocks *machine, struct clocks *ret);

/* Now on a timer's clock (the alarm clocks count like their plain ones). */
uint64_t clocks_now(const struct clocks *c, enum timerd_clock clock);

/* The wall-clock time of usec on clock; false when it falls before the epoch or past 64 bits. */
bool clocks_to_realtime(const struct clocks *c, enum timerd_clock clock, uint64_t usec,
                        uint64_t *ret);
