/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "service/core/metrics.h"

static unsigned bucket_of(uint64_t v)
{
        if (v < (1u << METRICS_SUB_BITS))
                return (unsigned)v;
        unsigned msb = 63u - (unsigned)__builtin_clzll(v);
        unsigned sub = (unsigned)(v >> (msb - METRICS_SUB_BITS)) & ((1u << METRICS_SUB_BITS) - 1);
        return ((msb - METRICS_SUB_BITS + 1) << METRICS_SUB_BITS) + sub;
}

static uint64_t bucket_upper(unsigned b)
{
        if (b < (1u << METRICS_SUB_BITS))
                return b;
        unsigned msb = (b >> METRICS_SUB_BITS) + METRICS_SUB_BITS - 1;
        uint64_t sub = b & ((1u << METRICS_SUB_BITS) - 1);
        uint64_t base = (1ull << msb) | (sub << (msb - METRICS_SUB_BITS));
        return base + (1ull << (msb - METRICS_SUB_BITS)) - 1;
}

void histogram_record(struct usec_histogram *h, uint64_t usec)
{
        h->buckets[bucket_of(usec)]++;
        h->samples++;
        if (usec > h->max_usec)
                h->max_usec = usec;
}

uint64_t histogram_percentile(const struct usec_histogram *h, unsigned permille)
{
        if (h->samples == 0)
                return 0;
        uint64_t rank = (h->samples * permille + 999) / 1000;
        uint64_t seen = 0;
        for (unsigned b = 0; b < METRICS_BUCKETS; b++) {
                seen += h->buckets[b];
                if (seen >= rank && seen > 0) {
                        uint64_t upper = bucket_upper(b);
                        return upper < h->max_usec ? upper : h->max_usec;
                }
        }
        return h->max_usec;
}
