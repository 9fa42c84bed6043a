/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The proleptic Gregorian calendar as plain arithmetic: days since 1970-01-01 to and from a date,
 * month lengths and weekdays. No clock, no time zone, no libc time functions.
 */

#include <stdbool.h>
#include <stdint.h>

#define CIVIL_SEC_PER_DAY  INT64_C(86400)
#define CIVIL_USEC_PER_SEC INT64_C(1000000)

struct civil_date {
        int64_t year;
        unsigned month; /* 1..12 */
        unsigned day;   /* 1..31 */
};

/* Division and remainder rounding towards minus infinity (d > 0). */
int64_t civil_floor_div(int64_t n, int64_t d);
int64_t civil_floor_mod(int64_t n, int64_t d);

bool civil_is_leap(int64_t year);
unsigned civil_days_in_month(int64_t year, unsigned month);
/* Days since 1970-01-01 of a valid date, and back. */
int64_t civil_days_from_date(int64_t year, unsigned month, unsigned day);
struct civil_date civil_date_from_days(int64_t days);
/* 0 = Monday … 6 = Sunday. */
unsigned civil_weekday(int64_t days);
