/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Samples and what is reported of them: percentiles of one run's samples (lateness), and the
 * median and range of a figure over repeated runs (the spread says how much to trust it).
 */

#include <stddef.h>
#include <stdint.h>

struct samples {
        uint64_t *v;
        size_t n;
        size_t cap;
        size_t sorted; /* v is in order when sorted == n */
};

void samples_init(struct samples *s, size_t cap);
void samples_done(struct samples *s);
void samples_clear(struct samples *s);
/* Beyond cap a sample is dropped: size s for the run. */
void samples_add(struct samples *s, uint64_t v);
/* The nearest-rank percentile, p in [0, 100]; 0 when empty. Sorts s. */
uint64_t samples_percentile(struct samples *s, double p);
uint64_t samples_max(struct samples *s);

/* Median, smallest and largest of repeated measurements of one figure. */
struct spread {
        double median;
        double min;
        double max;
};

void spread_of(const double *v, size_t n, struct spread *ret);
