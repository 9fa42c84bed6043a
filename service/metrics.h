/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Runtime performance measured at loop boundaries, for Status: iterations, firing lateness as a
 * log-linear histogram (percentiles within ~6 %), the slowest iteration. Fixed size, no allocation.
 */

#include <stdint.h>

#define METRICS_SUB_BITS 4
#define METRICS_BUCKETS  (64 << METRICS_SUB_BITS)

struct lateness_histogram {
        uint64_t buckets[METRICS_BUCKETS];
        uint64_t samples;
        uint64_t max_usec;
};

void lateness_record(struct lateness_histogram *h, uint64_t usec);
/* The value at `permille` (500 = median, 990 = p99); 0 when empty. An upper bound of its bucket. */
uint64_t lateness_percentile(const struct lateness_histogram *h, unsigned permille);

struct metrics {
        uint64_t iterations;
        uint64_t slowest_iteration_usec;
        uint64_t firings;
        struct lateness_histogram lateness;
};
