/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "service/wake.h"

#include <string.h>

#include "service/core/parked.h"
#include "service/io/clock.h"
#include "service/io/log.h"
#include "service/service.h"
#include "varlink/names.h"

bool service_core_deadline(const struct service *s, enum timerd_clock c, uint64_t *ret)
{
        const struct clock_wake *w = &s->wake.clock[c];
        uint64_t deadline = UINT64_MAX;

        if (w->registry_armed)
                deadline = w->registry_deadline;
        if (w->parked_armed && w->parked_deadline < deadline)
                deadline = w->parked_deadline;
        *ret = deadline;
        return w->registry_armed || w->parked_armed;
}

int service_sync_wake(struct service *s, enum timerd_clock c)
{
        struct clock_wake *w = &s->wake.clock[c];
        uint64_t deadline = UINT64_MAX;
        /* Virtual clocks are stepped, not woken: only the connection table's reaps, on the real
         * monotonic clock, reach the kernel. */
        bool want = !s->clock.virtual && service_core_deadline(s, c, &deadline);

        if (w->conns_armed && w->conns_deadline < deadline)
                deadline = w->conns_deadline;
        want = want || w->conns_armed;

        if (!want) {
                if (!w->kernel_armed)
                        return 0;
                w->kernel_armed = false;
                return loop_disarm(s->loop, c);
        }
        if (w->kernel_armed && w->kernel_deadline == deadline)
                return 0;
        uint64_t generation = ++s->wake.last_generation;
        int r = loop_arm(s->loop, c, deadline, generation);
        if (r < 0) {
                w->kernel_armed = false;
                return r;
        }
        w->kernel_armed = true;
        w->kernel_deadline = deadline;
        w->kernel_generation = generation;
        /* Loop lag counts from the later of deadline and arming: one armed in the past is due
         * only from then. Only the monotonic clock neither jumps nor stops in a suspend. */
        if (c == TIMERD_CLOCK_MONOTONIC && clock_read(c, &w->kernel_armed_usec) < 0)
                w->kernel_armed_usec = UINT64_MAX;
        return 0;
}

int wake_take_registry_arm(struct service *s, const struct td_effect *e)
{
        struct clock_wake *w = &s->wake.clock[e->arm.clock];
        w->registry_armed = e->kind == TD_EFFECT_ARM;
        w->registry_deadline = e->arm.deadline_usec;
        w->registry_generation = e->arm.generation;
        int r = service_sync_wake(s, e->arm.clock);
        if (r < 0)
                log_warning("Cannot arm the %s timer: %s", vl_clock_to_string(e->arm.clock),
                            strerror(-r));
        return r;
}

void service_sync_parked_wake(struct service *s)
{
        for (int c = 0; c < TIMERD_CLOCK_MAX; c++) {
                struct clock_wake *w = &s->wake.clock[c];
                uint64_t deadline;
                w->parked_armed =
                    parked_next_deadline(s->parked, (enum timerd_clock)c, &deadline) > 0;
                w->parked_deadline = w->parked_armed ? deadline : 0;
                int r = service_sync_wake(s, (enum timerd_clock)c);
                if (r < 0) {
                        log_errno(r, "Cannot arm the %s timer for parked requests",
                                  vl_clock_to_string((enum timerd_clock)c));
                        service_exit(s, EXIT_REASON_BACKEND_FAULT);
                }
        }
}

bool wake_expired(struct service *s, enum timerd_clock clock, uint64_t generation)
{
        struct clock_wake *w = &s->wake.clock[clock];

        if (!w->kernel_armed || generation != w->kernel_generation) {
                s->wake.stale++;
                return false;
        }
        w->kernel_armed = false;
        return true;
}

void wake_record_loop_lag(struct service *s, const struct td_now *now)
{
        const struct clock_wake *w = &s->wake.clock[TIMERD_CLOCK_MONOTONIC];
        uint64_t due =
            w->kernel_deadline > w->kernel_armed_usec ? w->kernel_deadline : w->kernel_armed_usec;
        uint64_t ran = now->usec[TIMERD_CLOCK_MONOTONIC];

        if (w->kernel_armed_usec == UINT64_MAX)
                return;
        histogram_record(&s->metrics.loop_lag, ran > due ? ran - due : 0);
}
