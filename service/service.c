/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "service/service.h"

#include "service/io/clock.h"
#include "service/io/log.h"

int service_now(struct service *s, struct td_now *ret)
{
        int r = clock_source_now(&s->clock, ret);
        if (r < 0) {
                log_errno(r, "Cannot read the clocks");
                service_exit(s, EXIT_REASON_CLOCK_FAULT);
        }
        return r;
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
