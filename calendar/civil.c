/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "civil.h"

int64_t civil_floor_div(int64_t n, int64_t d)
{
        int64_t q = n / d;
        return (n % d != 0 && n < 0) ? q - 1 : q;
}

int64_t civil_floor_mod(int64_t n, int64_t d)
{
        return n - civil_floor_div(n, d) * d;
}

bool civil_is_leap(int64_t year)
{
        return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
}

unsigned civil_days_in_month(int64_t year, unsigned month)
{
        static const unsigned char length[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
        if (month == 2 && civil_is_leap(year))
                return 29;
        return length[month - 1];
}

/* Howard Hinnant's days_from_civil: years counted from March, in 400-year eras. */
int64_t civil_days_from_date(int64_t year, unsigned month, unsigned day)
{
        int64_t y = month <= 2 ? year - 1 : year;
        int64_t era = civil_floor_div(y, 400);
        int64_t yoe = y - era * 400;
        int64_t mp = month > 2 ? (int64_t)month - 3 : (int64_t)month + 9;
        int64_t doy = (153 * mp + 2) / 5 + (int64_t)day - 1;
        int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        return era * 146097 + doe - 719468;
}

struct civil_date civil_date_from_days(int64_t days)
{
        int64_t z = days + 719468;
        int64_t era = civil_floor_div(z, 146097);
        int64_t doe = z - era * 146097;
        int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
        int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        int64_t mp = (5 * doy + 2) / 153;
        unsigned day = (unsigned)(doy - (153 * mp + 2) / 5 + 1);
        unsigned month = (unsigned)(mp < 10 ? mp + 3 : mp - 9);
        return (struct civil_date){
            .year = yoe + era * 400 + (month <= 2),
            .month = month,
            .day = day,
        };
}

unsigned civil_weekday(int64_t days)
{
        /* 1970-01-01 was a Thursday. */
        return (unsigned)civil_floor_mod(days + 3, 7);
}
