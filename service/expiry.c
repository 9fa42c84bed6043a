/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "service/expiry.h"

#include <inttypes.h>
#include <malloc.h>

#include "service/api.h"
#include "service/io/clock.h"
#include "service/io/log.h"
#include "service/service.h"

void service_expire(struct service *s, enum timerd_clock c, const struct td_now *now)
{
        struct clock_wake *w = &s->wake.clock[c];

        if (w->registry_armed) {
                bool stale;
                api_apply(s, now,
                          registry_expire(s->registry, now, c, w->registry_generation, &stale));
        }
        api_expire_parked(s, now);
}

void service_clock_was_set(struct service *s)
{
        struct td_now now;

        s->clock_changes++;
        log_notice("The realtime clock was set; re-evaluating realtime deadlines");
        if (service_now(s, &now) < 0)
                return;
        for (int c = 0; c < TIMERD_CLOCK_MAX; c++) {
                if (c != TIMERD_CLOCK_REALTIME && c != TIMERD_CLOCK_REALTIME_ALARM)
                        continue;
                s->wake.clock[c].kernel_armed = false;
                api_apply(s, &now, registry_rearm(s->registry, &now, (enum timerd_clock)c));
                api_expire_parked(s, &now);
        }
}

/* A step of a pass over many timers: about this much work, from a first batch this big. */
#define STEP_SLICE_USEC   2000
#define STEP_BUDGET_FIRST 256

/* Before a step: its batch (the first one's at first), the clocks and when it starts. */
static bool step_begin(struct service *s, size_t *budget, struct td_now *now, uint64_t *start)
{
        if (*budget == 0)
                *budget = STEP_BUDGET_FIRST;
        return service_now(s, now) == 0 && clock_read(TIMERD_CLOCK_MONOTONIC, start) == 0;
}

/* The next step's batch, from how long a full one took: doubled while it takes under half the
 * slice, halved while it takes more. */
static void step_budget_adapt(size_t *budget, uint64_t count, uint64_t start)
{
        uint64_t end;

        if (clock_read(TIMERD_CLOCK_MONOTONIC, &end) < 0 || count != *budget)
                return;
        if (end - start < STEP_SLICE_USEC / 2 && *budget < 65536)
                *budget *= 2;
        else if (end - start > STEP_SLICE_USEC && *budget > 16)
                *budget /= 2;
}

/*
 * One step of a calendar re-evaluation (registry_reevaluate_calendars()): a batch sized to take
 * about STEP_SLICE_USEC, so that each iteration still serves the peers.
 */
void service_reevaluate_step(struct service *s)
{
        uint64_t start, count;
        struct td_now now;

        if (!step_begin(s, &s->reevaluate_budget, &now, &start))
                return;
        api_apply(s, &now,
                  registry_reevaluate_step(s->registry, &now, s->reevaluate_budget, &count));
        s->reevaluated += count;
        step_budget_adapt(&s->reevaluate_budget, count, start);
        if (!registry_reevaluation_pending(s->registry)) {
                s->calendar_reevaluations++;
                log_info("%" PRIu64 " calendar timers re-evaluated", s->reevaluated);
                s->reevaluated = 0;
        }
}

void service_finish_reevaluation(struct service *s)
{
        while (registry_reevaluation_pending(s->registry) && lifecycle_running(&s->lifecycle))
                service_reevaluate_step(s);
}

/*
 * One step of freeing the timers of closed connections (registry_reap_step()): a batch sized like
 * a re-evaluation's, its memory given back at once. A trim after each batch consolidates only the
 * chunks that batch freed; one trim after millions of frees holds the loop for seconds.
 */
void service_reap_step(struct service *s)
{
        uint64_t start, count;
        struct td_now now;

        if (!step_begin(s, &s->reap_budget, &now, &start))
                return;
        api_apply(s, &now, registry_reap_step(s->registry, &now, s->reap_budget, &count));
        (void)malloc_trim(0);
        s->reap_steps++;
        step_budget_adapt(&s->reap_budget, count, start);
}
