/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * One test per row of the DST table in docs/CALENDAR.md: the next elapses of an expression
 * through a daylight-saving change, with the zone read from /usr/share/zoneinfo.
 */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "calendar/calendar.h"
#include "calendar/civil.h"
#include "zoneinfo/zoneinfo.h"

/* µs since the epoch of a UTC date and time. */
static int64_t utc(int64_t y, unsigned mo, unsigned d, int h, int mi, int s)
{
        return ((civil_days_from_date(y, mo, d) * 24 + h) * 3600 + mi * 60 + s) *
               CIVIL_USEC_PER_SEC;
}

/* The first n elapses of text in zone after base must be expected[0..n-1]. */
static void check_elapses(const char *zone_name, const char *text, int64_t base,
                          const int64_t *expected, size_t n)
{
        struct calendar_spec spec;
        struct calendar_error error;
        struct tz_zone *zone;

        assert_int_equal(calendar_parse(text, &spec, &error), 0);
        assert_int_equal(zoneinfo_load(zone_name, &zone, NULL), 0);
        for (size_t i = 0; i < n; i++) {
                assert_int_equal(calendar_next(&spec, zone, base, &base), 0);
                if (base != expected[i])
                        fail_msg("%s in %s: elapse %zu is %lld, expected %lld", text, zone_name, i,
                                 (long long)base, (long long)expected[i]);
        }
        tz_zone_free(zone);
}

/* Every elapse from base for `count` elapses is `step` seconds after the one before. */
static void check_steady(const char *zone_name, const char *text, int64_t first, int64_t step,
                         size_t count)
{
        struct calendar_spec spec;
        struct calendar_error error;
        struct tz_zone *zone;
        int64_t t = first - 1;

        assert_int_equal(calendar_parse(text, &spec, &error), 0);
        assert_int_equal(zoneinfo_load(zone_name, &zone, NULL), 0);
        for (size_t i = 0; i < count; i++) {
                assert_int_equal(calendar_next(&spec, zone, t, &t), 0);
                assert_int_equal(t, first + (int64_t)i * step * CIVIL_USEC_PER_SEC);
        }
        tz_zone_free(zone);
}

/* A wall time in the spring-forward gap fires once, at the first instant after it. */
static void test_gap_daily(void **state)
{
        (void)state;
        const int64_t expected[] = {utc(2024, 3, 31, 1, 0, 0), utc(2024, 4, 1, 0, 30, 0)};
        check_elapses("Europe/Berlin", "*-*-* 02:30", utc(2024, 3, 30, 12, 0, 0), expected, 2);
}

/* Two wall times in the same gap fire once between them. */
static void test_gap_two_times(void **state)
{
        (void)state;
        const int64_t expected[] = {utc(2024, 3, 31, 1, 0, 0), utc(2024, 4, 1, 0, 10, 0)};
        check_elapses("Europe/Berlin", "*-*-* 02:10,50", utc(2024, 3, 30, 12, 0, 0), expected, 2);
}

/* A wall time that occurs twice fires once, at its first occurrence. */
static void test_overlap_daily(void **state)
{
        (void)state;
        const int64_t expected[] = {utc(2024, 10, 27, 0, 30, 0), utc(2024, 10, 28, 1, 30, 0)};
        check_elapses("Europe/Berlin", "*-*-* 02:30", utc(2024, 10, 26, 12, 0, 0), expected, 2);
}

/* Hourly fires at every real hour through fall-back: 02:00 CEST, 02:00 CET, 03:00 CET. */
static void test_overlap_hourly(void **state)
{
        (void)state;
        check_steady("Europe/Berlin", "*:00", utc(2024, 10, 26, 22, 0, 0), 3600, 8);
}

/* Every quarter hour through spring-forward: 01:45 CET, then 03:00 CEST. */
static void test_gap_quarter_hours(void **state)
{
        (void)state;
        check_steady("Europe/Berlin", "*:0/15", utc(2024, 3, 31, 0, 0, 0), 900, 12);
}

/* Minutely through fall-back: every real minute of both 02:xx hours. */
static void test_overlap_minutely(void **state)
{
        (void)state;
        check_steady("Europe/Berlin", "minutely", utc(2024, 10, 26, 23, 30, 0), 60, 180);
}

/* ":30" each hour through spring-forward: 02:30 does not exist and fires at 03:00 CEST. */
static void test_gap_half_past(void **state)
{
        (void)state;
        const int64_t expected[] = {utc(2024, 3, 31, 0, 30, 0), utc(2024, 3, 31, 1, 0, 0),
                                    utc(2024, 3, 31, 1, 30, 0)};
        check_elapses("Europe/Berlin", "*:30", utc(2024, 3, 31, 0, 0, 0), expected, 3);
}

/* Negative DST (Irish Standard Time in summer, GMT as "daylight" time in winter): hourly is
 * every real hour through both changes, today and after the last transition (footer rule). */
static void test_dublin_hourly(void **state)
{
        (void)state;
        check_steady("Europe/Dublin", "hourly", utc(2024, 3, 30, 20, 0, 0), 3600, 12);
        check_steady("Europe/Dublin", "hourly", utc(2024, 10, 26, 20, 0, 0), 3600, 12);
        check_steady("Europe/Dublin", "hourly", utc(2090, 10, 28, 20, 0, 0), 3600, 12);
        check_steady("Europe/Dublin", "hourly", utc(2090, 3, 25, 20, 0, 0), 3600, 12);
}

static void test_dublin_overlap_daily(void **state)
{
        (void)state;
        const int64_t expected[] = {utc(2024, 10, 27, 0, 30, 0), utc(2024, 10, 28, 1, 30, 0)};
        check_elapses("Europe/Dublin", "01:30", utc(2024, 10, 26, 12, 0, 0), expected, 2);
}

/* 30-minute DST: the gap 02:00-02:30 and the repeated half hour 01:30-02:00. */
static void test_lord_howe(void **state)
{
        (void)state;
        const int64_t gap[] = {utc(2024, 10, 5, 15, 30, 0), utc(2024, 10, 6, 15, 15, 0)};
        check_elapses("Australia/Lord_Howe", "*-*-* 02:15", utc(2024, 10, 5, 0, 0, 0), gap, 2);
        const int64_t overlap[] = {utc(2024, 4, 6, 14, 45, 0), utc(2024, 4, 7, 15, 15, 0)};
        check_elapses("Australia/Lord_Howe", "*-*-* 01:45", utc(2024, 4, 6, 0, 0, 0), overlap, 2);
        check_steady("Australia/Lord_Howe", "*:0/30", utc(2024, 4, 6, 12, 0, 0), 1800, 10);
}

/* Samoa skipped 2011-12-30: its noon fires when the day after begins; midnight of the 30th and
 * of the 31st are one instant, so daily fires once for both. */
static void test_apia_missing_day(void **state)
{
        (void)state;
        const int64_t noon[] = {utc(2011, 12, 30, 10, 0, 0)};
        check_elapses("Pacific/Apia", "*-12-30 12:00", utc(2011, 12, 29, 0, 0, 0), noon, 1);
        const int64_t daily[] = {utc(2011, 12, 30, 10, 0, 0), utc(2011, 12, 31, 10, 0, 0)};
        check_elapses("Pacific/Apia", "daily", utc(2011, 12, 30, 9, 0, 0), daily, 2);
}

/* After the last transition of the table the footer rule decides: 2100 and beyond. */
static void test_far_future(void **state)
{
        (void)state;
        const int64_t gap[] = {utc(2100, 3, 28, 1, 0, 0), utc(2100, 3, 29, 0, 30, 0)};
        check_elapses("Europe/Berlin", "*-*-* 02:30", utc(2100, 3, 27, 12, 0, 0), gap, 2);
        const int64_t overlap[] = {utc(2100, 10, 31, 0, 30, 0)};
        check_elapses("Europe/Berlin", "*-*-* 02:30", utc(2100, 10, 30, 12, 0, 0), overlap, 1);
        /* Year 2500: beyond systemd's 2199, still computed. */
        const int64_t leap[] = {utc(2504, 2, 28, 23, 0, 0)};
        check_elapses("Europe/Berlin", "*-02-29", utc(2500, 1, 1, 0, 0, 0), leap, 1);
}

/* A named zone in the expression wins over the zone it is computed in. */
static void test_expression_zone(void **state)
{
        (void)state;
        struct calendar_spec spec;
        struct calendar_error error;
        int64_t next;
        assert_int_equal(calendar_parse("03:00 UTC", &spec, &error), 0);
        struct tz_zone *berlin;
        assert_int_equal(zoneinfo_load("Europe/Berlin", &berlin, NULL), 0);
        assert_int_equal(calendar_next(&spec, berlin, utc(2024, 6, 1, 0, 0, 0), &next), 0);
        assert_int_equal(next, utc(2024, 6, 1, 3, 0, 0));
        tz_zone_free(berlin);
}

/* Expressions that can never elapse are refused, pointing at the date; searches end. */
static void test_never_and_horizon(void **state)
{
        (void)state;
        struct calendar_spec spec;
        struct calendar_error error;
        int64_t next;
        assert_int_equal(calendar_parse("*-02-30", &spec, &error), -EINVAL);
        assert_int_equal(error.code, CALENDAR_E_NEVER);
        assert_int_equal(error.offset, 0);
        assert_int_equal(calendar_parse("Mon 2199-02-29 03:00", &spec, &error), -EINVAL);
        assert_int_equal(error.code, CALENDAR_E_NEVER);
        assert_int_equal(calendar_parse("03:00 2024-02-30", &spec, &error), -EINVAL);
        assert_int_equal(error.code, CALENDAR_E_SYNTAX);
        assert_int_equal(error.offset, 5);
        assert_int_equal(calendar_parse("*:61", &spec, &error), -EINVAL);
        assert_int_equal(error.code, CALENDAR_E_RANGE);
        assert_int_equal(error.offset, 2);
        assert_int_equal(calendar_parse_cron("0 0 30 2 *", &spec, &error), -EINVAL);
        assert_int_equal(error.code, CALENDAR_E_NEVER);
        /* Valid but over: the last elapse was in 2150. */
        assert_int_equal(calendar_parse("2150-01-01", &spec, &error), 0);
        assert_int_equal(calendar_next(&spec, NULL, utc(2160, 1, 1, 0, 0, 0), &next), -ENOENT);
        assert_int_equal(calendar_next(&spec, NULL, utc(9999, 6, 1, 0, 0, 0), &next), -ERANGE);
}

/* cron: day of month OR weekday when both are restricted, AND when one starts with "*". */
static void test_cron_day_or_weekday(void **state)
{
        (void)state;
        struct calendar_spec spec;
        struct calendar_error error;
        int64_t t = utc(2024, 9, 1, 0, 0, 0);
        char text[CALENDAR_FORMAT_MAX];

        assert_int_equal(calendar_parse_cron("0 0 13 * 5", &spec, &error), 0);
        assert_int_equal(calendar_format(&spec, text, sizeof(text)), 0);
        assert_string_equal(text, "0 0 13 * 5");
        assert_int_equal(calendar_next(&spec, NULL, t, &t), 0);
        assert_int_equal(t, utc(2024, 9, 6, 0, 0, 0)); /* a Friday */
        assert_int_equal(calendar_next(&spec, NULL, t, &t), 0);
        assert_int_equal(t, utc(2024, 9, 13, 0, 0, 0)); /* the 13th, also a Friday */
        assert_int_equal(calendar_parse_cron("0 0 */2 * 5", &spec, &error), 0);
        t = utc(2024, 9, 1, 0, 0, 0);
        assert_int_equal(calendar_next(&spec, NULL, t, &t), 0);
        assert_int_equal(t, utc(2024, 9, 13, 0, 0, 0)); /* odd days that are Fridays */
        assert_int_equal(calendar_parse_cron("30 3 * * mon-fri", &spec, &error), 0);
        assert_int_equal(calendar_format(&spec, text, sizeof(text)), 0);
        assert_string_equal(text, "Mon..Fri *-*-* 03:30:00");
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_gap_daily),
            cmocka_unit_test(test_gap_two_times),
            cmocka_unit_test(test_overlap_daily),
            cmocka_unit_test(test_overlap_hourly),
            cmocka_unit_test(test_gap_quarter_hours),
            cmocka_unit_test(test_overlap_minutely),
            cmocka_unit_test(test_gap_half_past),
            cmocka_unit_test(test_dublin_hourly),
            cmocka_unit_test(test_dublin_overlap_daily),
            cmocka_unit_test(test_lord_howe),
            cmocka_unit_test(test_apia_missing_day),
            cmocka_unit_test(test_far_future),
            cmocka_unit_test(test_expression_zone),
            cmocka_unit_test(test_never_and_horizon),
            cmocka_unit_test(test_cron_day_or_weekday),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
