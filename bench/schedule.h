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

/* The first probe is due `lead_usec` from now (microseconds, CLOCK_MONOTONIC). */
void schedule_init(struct schedule *s, const struct schedule_spec *spec, uint64_t lead_usec);
uint64_t schedule_next_probe(struct schedule *s);
uint64_t schedule_background(struct schedule *s);
