/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Calendar schedules: systemd.time(7) calendar expressions ("Mon..Fri *-*-* 03:00 Europe/Berlin")
 * and the 5-field cron form ("0 3 * * 1-5", "@daily"), parsed into one spec; its normalized form
 * as `systemd-analyze calendar` prints it; and its next elapse after an instant in a zone.
 * Pure: no clock, no TZ/tzset, no allocation. DST semantics: docs/CALENDAR.md.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tzif.h"

/* More list items than a person writes; systemd allows 240, cron lines rarely need 30. */
#define CALENDAR_RANGES_MAX 64
/* IANA names are at most about 30 bytes. */
#define CALENDAR_ZONE_MAX 64
/* Room for the longest normalized form. */
#define CALENDAR_FORMAT_MAX 4096
/* Years a spec may name (as systemd), and the last year any computation reaches. */
#define CALENDAR_YEAR_MIN  1970
#define CALENDAR_YEAR_MAX  2199
#define CALENDAR_YEAR_LAST 9999
/* How far ahead a next elapse is searched: the Gregorian calendar repeats every 400 years
 * (146097 days, a whole number of weeks), so an expression without a year that matches nothing in
 * 401 years never matches. */
#define CALENDAR_HORIZON_YEARS 401

/* start, start+repeat, … up to stop (or the field's end); repeat 0: start alone. stop -1: none.
 * The seconds field counts microseconds (0 .. 59,999,999). */
struct calendar_range {
        int32_t start, stop, repeat;
};

struct calendar_field {
        unsigned n; /* 0: every value */
        struct calendar_range ranges[CALENDAR_RANGES_MAX];
};

enum calendar_syntax {
        CALENDAR_SYNTAX_SYSTEMD,
        CALENDAR_SYNTAX_CRON,
};

struct calendar_spec {
        enum calendar_syntax syntax;
        uint8_t weekdays;    /* bit 0 Monday … bit 6 Sunday; 0: every day */
        bool end_of_month;   /* days count back from the month's end ("*-*~1") */
        bool day_or_weekday; /* cron: day of month and weekday both restricted, either matches */
        bool utc;
        char zone[CALENDAR_ZONE_MAX]; /* "" unless the expression names one */
        struct calendar_field year, month, day, hour, minute, usec;
};

enum calendar_error_code {
        CALENDAR_E_NONE,
        CALENDAR_E_EMPTY,    /* nothing to parse */
        CALENDAR_E_SYNTAX,   /* an unexpected character */
        CALENDAR_E_WEEKDAY,  /* a bad weekday name or range */
        CALENDAR_E_NUMBER,   /* a number expected, or too large */
        CALENDAR_E_RANGE,    /* a value outside its field, or an empty range */
        CALENDAR_E_REPEAT,   /* a repetition of 0 or longer than its field */
        CALENDAR_E_TOO_MANY, /* more than CALENDAR_RANGES_MAX list items */
        CALENDAR_E_ZONE,     /* a malformed time zone name */
        CALENDAR_E_FIELDS,   /* cron: not five fields */
        CALENDAR_E_NEVER,    /* the expression can never elapse (e.g. *-02-30) */
        CALENDAR_E_MAX,
};

struct calendar_error {
        enum calendar_error_code code;
        size_t offset; /* byte offset of the bad part in the text */
};

/* Both return 0 or -EINVAL with *ret_error set. */
int calendar_parse(const char *text, struct calendar_spec *ret, struct calendar_error *ret_error);
int calendar_parse_cron(const char *text, struct calendar_spec *ret,
                        struct calendar_error *ret_error);
const char *calendar_error_message(enum calendar_error_code code);

/* The normalized form; -ENOBUFS if it does not fit (it always fits CALENDAR_FORMAT_MAX). */
int calendar_format(const struct calendar_spec *spec, char *buf, size_t size);

/* A wall-clock time: seconds and their fraction together as microseconds of the minute. */
struct calendar_wall {
        int64_t year;
        int month, day, hour, minute;
        int32_t usec;
};

bool calendar_matches(const struct calendar_spec *spec, const struct calendar_wall *wall);
/* The first matching wall time at or after `from`, up to the end of year_limit; -ENOENT if none. */
int calendar_next_wall(const struct calendar_spec *spec, const struct calendar_wall *from,
                       int64_t year_limit, struct calendar_wall *ret);
/* Whether every hour of the day matches: such an expression fires at both occurrences of a
 * repeated hour (docs/CALENDAR.md). */
bool calendar_every_hour(const struct calendar_spec *spec);

/* The next elapse strictly after base_usec (µs since the epoch, UTC) with the spec's wall times
 * read in `zone` (NULL: UTC; a spec that says UTC ignores the zone). 0, -ENOENT when there is no
 * elapse before the search horizon or year 9999, -ERANGE for a base outside years 1..9998. */
int calendar_next(const struct calendar_spec *spec, const struct tz_zone *zone, int64_t base_usec,
                  int64_t *ret_usec);
