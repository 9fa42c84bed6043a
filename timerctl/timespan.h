/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Time spans as people write them, in systemd's spelling: "90s", "5min", "1h 30min", "1.5h",
 * "500ms", "10us", "2d"; a number without a unit is seconds.
 */

#include <stddef.h>
#include <stdint.h>

#define USEC_PER_MSEC 1000ULL
#define USEC_PER_SEC  1000000ULL

/* The longest span: every time on the service's wire is a signed 64-bit count of microseconds
 * (about 292,000 years). */
#define TIMESPAN_MAX_USEC ((uint64_t)INT64_MAX)

/* Enough for any uint64_t span: "213503982d 8h 1min 49s 551ms 615us". */
#define TIMESPAN_FORMAT_MAX 64

/*
 * Parse s into microseconds. Returns 0, -EINVAL for text that is not a time span, -ERANGE when it
 * is longer than TIMESPAN_MAX_USEC, -EDOM for a negative span.
 */
int timespan_parse(const char *s, uint64_t *ret);

/* Why timespan_parse() refused, for an error message: "not a time span (like 90s, 5min)". */
const char *timespan_parse_error(int error);

/*
 * Format usec as "1h 30min", "4min 12s", "250ms", "0". Parts below accuracy_usec are dropped once a
 * larger part is shown (systemd's rounding down). Returns buf.
 */
char *timespan_format(char buf[static TIMESPAN_FORMAT_MAX], uint64_t usec, uint64_t accuracy_usec);
