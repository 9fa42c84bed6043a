/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Runtime performance measured at loop boundaries, for Status: iterations, the slowest iteration,
 * and two delay distributions as log-linear histograms (percentiles within ~6 %): firing lateness
 * and loop lag. Fixed size, no allocation.
 */

#include <stdint.h>

#define METRICS_SUB_BITS 4
#define METRICS_BUCKETS  (64 << METRICS_SUB_BITS)

/* Below this many samples a 99th percentile is only the maximum again: Status leaves it out. */
#define METRICS_P99_MIN_SAMPLES 100

struct usec_histogram {
        uint64_t buckets[METRICS_BUCKETS];
        uint64_t samples;
        uint64_t max_usec;
};

void histogram_record(struct usec_histogram *h, uint64_t usec);
/* The value at `permille` (500 = median, 990 = p99); 0 when empty. An upper bound of its bucket. */
uint64_t histogram_percentile(const struct usec_histogram *h, unsigned permille);

struct metrics {
        uint64_t iterations;
        uint64_t slowest_iteration_usec;
        /* Of the iterations that closed a connection with transient timers or freed some. */
        uint64_t slowest_reaping_iteration_usec;
        uint64_t firings;
        /* From when a run was owed (its deadline, early by a handover, late by its accuracy
         * window) to when it started; firings already due when queued are counted apart. */
        struct usec_histogram lateness;
        uint64_t lateness_past_due;
        /* From when a monotonic kernel wake-up was due (or armed, if later) to the loop running
         * it. */
        struct usec_histogram loop_lag;
};
