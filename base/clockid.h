/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What a clock id from the wire or a record may be: the one set of checks every part uses. */

#include <stdbool.h>
#include <time.h>

#include "timerd/timerd-types.h"

static inline bool clock_valid(enum timerd_clock clock)
{
        return clock >= 0 && clock < TIMERD_CLOCK_MAX;
}

/* An alarm clock wakes the system from suspend; arming one needs CAP_WAKE_ALARM. */
static inline bool clock_is_alarm(enum timerd_clock clock)
{
        return clock == TIMERD_CLOCK_BOOTTIME_ALARM || clock == TIMERD_CLOCK_REALTIME_ALARM;
}

/* The kernel clock to read a valid clock's time from: an alarm clock counts like its base clock,
 * and reading the base needs no privilege (nor, through the vDSO, a system call). */
static inline clockid_t clock_readable_id(enum timerd_clock clock)
{
        switch (clock) {
        case TIMERD_CLOCK_BOOTTIME:
        case TIMERD_CLOCK_BOOTTIME_ALARM:
                return CLOCK_BOOTTIME;
        case TIMERD_CLOCK_REALTIME:
        case TIMERD_CLOCK_REALTIME_ALARM:
                return CLOCK_REALTIME;
        default:
                return CLOCK_MONOTONIC;
        }
}
