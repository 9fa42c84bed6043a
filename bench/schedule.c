/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "bench/schedule.h"

#include "bench/harness.h"

#define SPACING_MIN_USEC 500
#define SPACING_MAX_USEC 1500
#define HOUR_USEC        (3600 * UINT64_C(1000000))

static uint64_t rng_next(uint64_t *s)
{
        *s ^= *s << 13;
        *s ^= *s >> 7;
        *s ^= *s << 17;
        return *s;
}

void schedule_init(struct schedule *s, const struct schedule_spec *spec)
{
        *s = (struct schedule){
            .probe_rng = spec->seed | 1,
            .background_rng = (spec->seed ^ UINT64_C(0x9e3779b97f4a7c15)) | 1,
            .start = now_usec(),
        };
}

void schedule_start_probes(struct schedule *s)
{
        s->last_deadline = now_usec() + SCHEDULE_LEAD_USEC;
}

uint64_t schedule_next_probe(struct schedule *s)
{
        s->last_deadline +=
            SPACING_MIN_USEC + rng_next(&s->probe_rng) % (SPACING_MAX_USEC - SPACING_MIN_USEC + 1);
        return s->last_deadline;
}

uint64_t schedule_background(struct schedule *s)
{
        return s->start + HOUR_USEC + rng_next(&s->background_rng) % HOUR_USEC;
}
