/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Points in time as people write them, in systemd's spelling: "2026-12-01 09:00",
 * "Tue 2026-12-01 09:00:30 UTC", "09:00" (today), "tomorrow", "now", "+5min", "5min ago",
 * "@1700000000". Dates and times are local unless they end in "UTC" (or the local zone's name).
 */

#include <stdbool.h>
#include <stdint.h>

#include "calendar/tzif.h"
#include "clocks.h"

/* "Mon 2024-04-01 03:00:00 +02:00" */
#define ZONED_TIME_MAX 64

struct timestamp {
        /* true: usec is a span from now, into the future ("+5min"); false: usec is wall-clock
         * time (CLOCK_REALTIME). */
        bool relative;
        uint64_t usec;
};

/*
 * Parse s as of `now`. Returns 0, -EINVAL for text that is not a timestamp, -ERANGE for one out
 * of range (before 1970, past 64 bits of microseconds, a day or hour that does not exist), -EDOM
 * for a weekday that does not match the date.
 */
int timestamp_parse(const char *s, const struct clocks *now, struct timestamp *ret);

/* Why timestamp_parse() refused, for an error message. */
const char *timestamp_parse_error(int error);

/*
 * The time on `clock` at which ts falls, as of `now`. Returns 0, or -ERANGE when it falls before
 * the clock's start or past TIMESPAN_MAX_USEC, the latest time the service's wire carries.
 */
int timestamp_on_clock(const struct timestamp *ts, const struct clocks *now,
                       enum timerd_clock clock, uint64_t *ret);

/* usec (µs since the epoch) on the wall clock of zone (NULL: UTC) with its offset, or in UTC
 * named "UTC" when utc. */
const char *timestamp_format_zoned(char buf[static ZONED_TIME_MAX], const struct tz_zone *zone,
                                   bool utc, int64_t usec);
