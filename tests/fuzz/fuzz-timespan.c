/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * timerctl's parsers of what people type: time spans ("1h 30min") and timestamps ("tomorrow",
 * "2026-12-01 09:00 UTC", "+5min"). Each input is one string. Beyond not crashing: a refusal is
 * one of the documented errors, a span prints back to text that parses to the same value, and a
 * timestamp that parsed can be placed on every clock (or is refused as out of range).
 */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "timespan.h"
#include "timestamp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Longer text is not what a person types; the parsers are linear anyway. */
#define INPUT_MAX 256

static void fail(const char *text, const char *what)
{
        fprintf(stderr, "fuzz-timespan: \"%s\": %s\n", text, what);
        abort();
}

static void check_timespan(const char *text)
{
        char buf[TIMESPAN_FORMAT_MAX];
        uint64_t usec, again;

        int r = timespan_parse(text, &usec);
        if (r != 0 && r != -EINVAL && r != -ERANGE && r != -EDOM)
                fail(text, "timespan_parse: an undocumented error");
        if (r < 0) {
                if (!timespan_parse_error(r))
                        fail(text, "timespan_parse_error: no message");
                return;
        }
        /* Accuracy 1 µs drops nothing: the text is exact. */
        timespan_format(buf, usec, 1);
        if (timespan_parse(buf, &again) != 0 || again != usec)
                fail(text, "a formatted span does not parse back to its value");
}

static void check_timestamp(const char *text)
{
        /* A fixed "now" so that an input replays the same way: 2025-03-30 01:30 UTC, an hour
         * before a DST change in Europe, with a monotonic clock far from zero. */
        const struct clocks now = {
            .realtime_usec = 1743298200ULL * 1000000ULL,
            .monotonic_usec = 86400ULL * 1000000ULL,
            .boottime_usec = 90000ULL * 1000000ULL,
        };
        struct timestamp ts;

        int r = timestamp_parse(text, &now, &ts);
        if (r != 0 && r != -EINVAL && r != -ERANGE && r != -EDOM)
                fail(text, "timestamp_parse: an undocumented error");
        if (r < 0) {
                if (!timestamp_parse_error(r))
                        fail(text, "timestamp_parse_error: no message");
                return;
        }
        for (int c = 0; c < TIMERD_CLOCK_MAX; c++) {
                uint64_t usec;
                r = timestamp_on_clock(&ts, &now, (enum timerd_clock)c, &usec);
                if (r != 0 && r != -ERANGE)
                        fail(text, "timestamp_on_clock: an undocumented error");
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        /* The zone is part of the input's meaning: set once, for the whole process. */
        static bool zone_set;
        char text[INPUT_MAX + 1];

        if (!zone_set) {
                setenv("TZ", "Europe/Berlin", 1);
                tzset();
                zone_set = true;
        }
        if (size > INPUT_MAX)
                return 0;
        memcpy(text, data, size);
        text[size] = '\0';
        check_timespan(text);
        check_timestamp(text);
        return 0;
}
