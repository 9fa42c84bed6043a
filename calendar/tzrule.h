/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * POSIX TZ rule strings as RFC 8536 footers use them (with its version 3 extensions: rule times
 * from -167 to 167 hours), e.g. "CET-1CEST,M3.5.0,M10.5.0/3" or Europe/Dublin's negative DST
 * "IST-1GMT0,M10.5.0,M3.5.0/1". Internal to the zone code.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tzif.h"

enum tz_rule_kind {
        TZ_RULE_JULIAN_1,   /* Jn: day 1..365, February 29 never counted */
        TZ_RULE_JULIAN_0,   /* n: day 0..365, February 29 counted */
        TZ_RULE_MONTH_WEEK, /* Mm.w.d: weekday d of week w (5 = last) of month m */
};

struct tz_rule_date {
        enum tz_rule_kind kind;
        unsigned day; /* for the Julian forms */
        unsigned month, week, weekday;
        int32_t time; /* seconds after local midnight, -167 h .. 167 h */
};

struct tz_rule {
        struct tz_local std, dst;
        bool has_dst;
        struct tz_rule_date start, end; /* start in standard time, end in daylight time */
};

/* Parses exactly `size` bytes; 0 or -EINVAL. */
int tz_rule_parse(const char *text, size_t size, struct tz_rule *ret);
struct tz_local tz_rule_local(const struct tz_rule *rule, int64_t utc);
bool tz_rule_next_transition(const struct tz_rule *rule, int64_t after, struct tz_transition *ret);
