/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "service/expiry.h"

#include <inttypes.h>

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

/* A step of a calendar re-evaluation: about this much work, from a first batch this big. */
#define REEVALUATE_SLICE_USEC   2000
#define REEVALUATE_BUDGET_FIRST 256

/*
 * One step of a calendar re-evaluation (registry_reevaluate_calendars()): a batch sized to take
 * about REEVALUATE_SLICE_USEC, so that each iteration still serves the peers.
 */
void service_reevaluate_step(struct service *s)
{
        uint64_t start, end, count;
        struct td_now now;

        if (s->reevaluate_budget == 0)
                s->reevaluate_budget = REEVALUATE_BUDGET_FIRST;
        if (service_now(s, &now) < 0 || clock_read(TIMERD_CLOCK_MONOTONIC, &start) < 0)
                return;
        api_apply(s, &now,
                  registry_reevaluate_step(s->registry, &now, s->reevaluate_budget, &count));
        s->reevaluated += count;
        if (clock_read(TIMERD_CLOCK_MONOTONIC, &end) == 0 && count == s->reevaluate_budget) {
                if (end - start < REEVALUATE_SLICE_USEC / 2 && s->reevaluate_budget < 65536)
                        s->reevaluate_budget *= 2;
                else if (end - start > REEVALUATE_SLICE_USEC && s->reevaluate_budget > 16)
                        s->reevaluate_budget /= 2;
        }
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
