/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Reading the clocks: the only place the service asks the kernel what time it is, and the
 * virtual clocks of `timerd --clock virtual`, which move only when io.timerd.Test moves them.
 */

#include <stdbool.h>
#include <time.h>

#include "service/core/registry.h"

/* Read every clock. -errno when one cannot be read: a fault, never an invented time. */
int clock_read_all(struct td_now *ret);

/* One clock, in microseconds. */
int clock_read(enum timerd_clock clock, uint64_t *ret);

/* Whether alarm clocks can be armed here (CAP_WAKE_ALARM): a probe, once at start. */
bool clock_alarm_available(void);

/*
 * The time the service's decisions are made on: the kernel's clocks, or a virtual set of them.
 * Virtual clocks start at a fixed instant (the same script sees the same times every run) and
 * keep a real machine's relations: the alarm clocks read as their base, time passing moves every
 * clock, a suspend moves all but monotonic, setting the wall clock moves realtime only.
 */
struct clock_source {
        bool virtual;
        struct td_now now; /* virtual: what each clock reads */
};

/* Where virtual clocks start: monotonic and boottime at 10^9 s (beyond any real uptime, so that
 * libtimerd, which holds a firing handed over up to 1 s early on the real clock, never takes a
 * virtual deadline for one), realtime at 2030-01-01T00:00:00Z. */
#define CLOCK_VIRTUAL_START_USEC          UINT64_C(1000000000000000)
#define CLOCK_VIRTUAL_START_REALTIME_USEC UINT64_C(1893456000000000)

void clock_source_init(struct clock_source *src, bool virtual);

/* Every clock of the source. -errno when a real clock cannot be read. */
int clock_source_now(const struct clock_source *src, struct td_now *ret);

/* Virtual clocks: `usec` passes (every clock moves); a suspend of `usec` (all but monotonic);
 * the wall clock is set to `usec`. -EOVERFLOW past TD_VALUE_MAX, and nothing moves. */
int clock_virtual_pass(struct clock_source *src, uint64_t usec);
int clock_virtual_suspend(struct clock_source *src, uint64_t usec);
int clock_virtual_set_realtime(struct clock_source *src, uint64_t usec);
