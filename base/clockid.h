/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What a clock id from the wire or a record may be: the one set of checks every part uses. */

#include <stdbool.h>

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
