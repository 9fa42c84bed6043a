/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The schedule every lateness measurement follows, so that timerd and the in-process timers it
 * is compared with do exactly the same: `active` timers, of which `window` are probes due soon
 * and the rest background timers due in one to two hours (they never fire, they only fill the
 * queue). Each time a probe fires another is added behind the last, 0.5–1.5 ms later (random, so
 * nothing locks onto a tick), which keeps `active` constant. The first `warmup` firings are not
 * counted.
 */

#include <stddef.h>
#include <stdint.h>

struct schedule_spec {
        size_t active;
        size_t window;
        size_t warmup;
        size_t probes; /* counted firings */
        uint64_t seed;
};

struct schedule {
        uint64_t probe_rng; /* apart from the background's: the order of set-up does not matter */
        uint64_t background_rng;
        uint64_t start;
        uint64_t last_deadline;
};

/* Between the set-up of a run and its first probe: room to register the window's probes. */
#define SCHEDULE_LEAD_USEC 50000

void schedule_init(struct schedule *s, const struct schedule_spec *spec);
/* The first probe is due SCHEDULE_LEAD_USEC from now (CLOCK_MONOTONIC): called once the
 * background is in place, so that however long that took, no probe is late for it. */
void schedule_start_probes(struct schedule *s);
uint64_t schedule_next_probe(struct schedule *s);
uint64_t schedule_background(struct schedule *s);
