/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * Properties of calendar_next over many expressions and pseudo-random bases, in UTC and in
 * Europe/Berlin: every elapse is after its base and its wall time matches the expression (or it
 * is the end of a DST gap that swallowed a matching wall time); and, checked minute by minute,
 * no matching instant between the base and the elapse was skipped.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "calendar/calendar.h"
#include "calendar/civil.h"
#include "zoneinfo/zoneinfo.h"

static const char *const expressions[] = {
    "minutely",
    "hourly",
    "daily",
    "*:0/15",
    "*:07,37",
    "Mon..Fri *-*-* 09:00",
    "Sat,Sun 10:30",
    "*-*-01 02:30",
    "*-*~1 23:00",
    "*-*~01..03 04:00",
    "02:0/20",
    "*-*-* 01..03:15,45",
    "Wed *-*-1..7 12:00",
    "*-02-29 00:00",
    "quarterly",
    "weekly",
    "*-*-* *:*:00",
    "12,18:00",
    "*-06..08-* 05:05",
};

static struct calendar_wall wall_at(const struct tz_zone *zone, int64_t usec)
{
        int64_t sec = civil_floor_div(usec, CIVIL_USEC_PER_SEC);
        int64_t local = sec + tz_zone_local(zone, sec).utoff;
        int64_t days = civil_floor_div(local, CIVIL_SEC_PER_DAY), s = local - days * 86400;
        struct civil_date d = civil_date_from_days(days);
        return (struct calendar_wall){
            d.year,
            (int)d.month,
            (int)d.day,
            (int)(s / 3600),
            (int)(s / 60 % 60),
            (int32_t)((s % 60) * CIVIL_USEC_PER_SEC + (usec - sec * CIVIL_USEC_PER_SEC))};
}

/* An instant right at a transition that skipped a matching wall time. */
static bool gap_end_for(const struct calendar_spec *spec, const struct tz_zone *zone, int64_t t)
{
        struct tz_transition tr;
        int64_t sec = t / CIVIL_USEC_PER_SEC;
        if (!tz_zone_next_transition(zone, sec - 1, &tr) || tr.at != sec || tr.after <= tr.before)
                return false;
        /* Some wall time inside the gap [at+before, at+after) matches. */
        for (int64_t local = sec + tr.before; local < sec + tr.after; local += 60) {
                int64_t days = civil_floor_div(local, 86400), s = local - days * 86400;
                struct civil_date d = civil_date_from_days(days);
                struct calendar_wall w = {d.year,          (int)d.month,       (int)d.day,
                                          (int)(s / 3600), (int)(s / 60 % 60), 0};
                if (calendar_matches(spec, &w))
                        return true;
        }
        return false;
}

static void check_zone(const char *zone_name)
{
        struct tz_zone *zone;
        uint64_t seed = 0x9e3779b97f4a7c15u;
        assert_int_equal(zoneinfo_load(zone_name, &zone, NULL), 0);
        for (size_t e = 0; e < sizeof(expressions) / sizeof(expressions[0]); e++) {
                struct calendar_spec spec;
                struct calendar_error error;
                assert_int_equal(calendar_parse(expressions[e], &spec, &error), 0);
                for (int i = 0; i < 40; i++) {
                        seed = seed * 6364136223846793005u + 1442695040888963407u;
                        /* 2020 .. 2060, whole seconds */
                        int64_t base =
                            (1577836800 + (int64_t)(seed >> 33) % 1262304000) * CIVIL_USEC_PER_SEC;
                        int64_t next;
                        assert_int_equal(calendar_next(&spec, zone, base, &next), 0);
                        assert_true(next > base);
                        struct calendar_wall w = wall_at(zone, next);
                        if (!calendar_matches(&spec, &w) && !gap_end_for(&spec, zone, next))
                                fail_msg("%s in %s: elapse %lld does not match", expressions[e],
                                         zone_name, (long long)next);
                        /* No whole minute strictly between base and next matches, unless it is
                         * the repeat of a wall time already passed (not every hour). */
                        int64_t from = (base / 60000000 + 1) * 60000000;
                        for (int64_t t = from; t < next && t < from + 3 * 86400 * INT64_C(1000000);
                             t += 60000000) {
                                struct calendar_wall m = wall_at(zone, t);
                                if (!calendar_matches(&spec, &m))
                                        continue;
                                int32_t offset = tz_zone_local(zone, t / 1000000).utoff;
                                int32_t hour_ago = tz_zone_local(zone, t / 1000000 - 3600).utoff;
                                bool second_occurrence =
                                    !calendar_every_hour(&spec) && hour_ago > offset;
                                if (!second_occurrence)
                                        fail_msg("%s in %s: %lld skipped before %lld",
                                                 expressions[e], zone_name, (long long)t,
                                                 (long long)next);
                        }
                }
        }
        tz_zone_free(zone);
}

static void test_utc(void **state)
{
        (void)state;
        check_zone("UTC");
}

static void test_berlin(void **state)
{
        (void)state;
        check_zone("Europe/Berlin");
}

static void test_lord_howe(void **state)
{
        (void)state;
        check_zone("Australia/Lord_Howe");
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_utc),
            cmocka_unit_test(test_berlin),
            cmocka_unit_test(test_lord_howe),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
