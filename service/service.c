/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "service/service.h"

#include "service/io/clock.h"
#include "service/io/log.h"

int service_now(struct service *s, struct td_now *ret)
{
        if (s->now_shared) {
                *ret = s->shared_now;
                return 0;
        }
        int r = clock_source_now(&s->clock, ret);
        if (r < 0) {
                log_errno(r, "Cannot read the clocks");
                service_exit(s, EXIT_REASON_CLOCK_FAULT);
                return r;
        }
        if (s->now_sharing && !s->clock.virtual) {
                s->shared_now = *ret;
                s->now_shared = true;
        }
        return 0;
}

void service_now_share(struct service *s, bool share)
{
        s->now_sharing = share;
        s->now_shared = false;
}

void service_now_unshare(struct service *s)
{
        s->now_shared = false;
}

uint64_t service_now_shared_age(const struct service *s, uint64_t now_usec)
{
        uint64_t taken = s->shared_now.usec[TIMERD_CLOCK_MONOTONIC];

        if (!s->now_shared)
                return UINT64_MAX;
        return now_usec > taken ? now_usec - taken : 0;
}

void service_exit(struct service *s, enum exit_reason reason)
{
        if (lifecycle_exit(&s->lifecycle, reason) && reason != EXIT_REASON_SHUTDOWN_REQUESTED)
                log_error("Fault: %s", exit_reason_to_string(reason));
}

void service_note_work(struct service *s)
{
        if (s->iteration_start_usec == 0 &&
            clock_read(TIMERD_CLOCK_MONOTONIC, &s->iteration_start_usec) < 0)
                s->iteration_start_usec = 0;
}
