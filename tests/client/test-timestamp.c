/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Timestamps as timerctl reads them (--at, sleep): systemd's spellings, local time or UTC, and
 * clear refusals; and their place on a timer's clock. Runs with TZ=UTC unless a test sets one.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "timestamp.h"

#define SEC 1000000ULL

/* Tue 2023-11-14 22:13:20 UTC; monotonic and boottime at 1000 s and 2000 s. */
static const struct clocks now = {
    .realtime_usec = 1700000000 * SEC,
    .monotonic_usec = 1000 * SEC,
    .boottime_usec = 2000 * SEC,
};

struct good {
        const char *text;
        bool relative;
        uint64_t usec;
};

static const struct good good[] = {
    {"2026-12-01 09:00", false, 1796115600 * SEC},
    {"2026-12-01 09:00:30", false, (1796115600 + 30) * SEC},
    {"Tue 2026-12-01 09:00:30 UTC", false, (1796115600 + 30) * SEC},
    {"tuesday 2026-12-01 09:00", false, 1796115600 * SEC},
    {"2026-12-01T09:00:00.25Z", false, 1796115600 * SEC + 250000},
    {"2026-12-01", false, (1796115600 - 9 * 3600) * SEC},
    {"  2026-12-01 UTC", false, (1796115600 - 9 * 3600) * SEC},
    {"09:00", false, 1699952400 * SEC},
    {"09:00:01.5", false, 1699952401 * SEC + 500000},
    {"today", false, (1700006400 - 86400) * SEC},
    {"tomorrow", false, 1700006400 * SEC},
    {"yesterday", false, (1700006400 - 2 * 86400) * SEC},
    {"now", true, 0},
    {"+5min", true, 300 * SEC},
    {"+1h 30min", true, 5400 * SEC},
    {"5min left", true, 300 * SEC},
    {"-5min", false, (1700000000 - 300) * SEC},
    {"5min ago", false, (1700000000 - 300) * SEC},
    {"@1700000000", false, 1700000000 * SEC},
    {"@1.5", false, 1500000},
};

struct bad {
        const char *text;
        int error;
};

static const struct bad bad[] = {
    {"", -EINVAL},
    {"soon", -EINVAL},
    {"12", -EINVAL},
    {"2026-12-01 9:00", -EINVAL},
    {"2026-12-1", -EINVAL},
    {"2026-12-01 09:00 Mars/Olympus", -EINVAL},
    {"+soon", -EINVAL},
    {"@5min", -EINVAL},
    {"@-5", -ERANGE},
    {"2023-02-30 10:00", -ERANGE},
    {"2023-13-01", -ERANGE},
    {"25:00", -ERANGE},
    {"10:61", -ERANGE},
    {"1969-12-31 23:00 UTC", -ERANGE},
    {"+99999999999999999999s", -ERANGE},
    {"999999999d ago", -ERANGE},
    {"Mon 2026-12-01 09:00", -EDOM},
};

static void test_good(void **state)
{
        (void)state;
        for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
                struct timestamp ts = {};
                int r = timestamp_parse(good[i].text, &now, &ts);

                if (r < 0 || ts.relative != good[i].relative || ts.usec != good[i].usec)
                        fail_msg("\"%s\": %d, %s %llu; expected %s %llu", good[i].text, r,
                                 ts.relative ? "relative" : "absolute", (unsigned long long)ts.usec,
                                 good[i].relative ? "relative" : "absolute",
                                 (unsigned long long)good[i].usec);
        }
}

static void test_bad(void **state)
{
        (void)state;
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                struct timestamp ts;
                int r = timestamp_parse(bad[i].text, &now, &ts);

                if (r != bad[i].error)
                        fail_msg("\"%s\": %d, expected %d", bad[i].text, r, bad[i].error);
                assert_non_null(timestamp_parse_error(r));
        }
        assert_non_null(strstr(timestamp_parse_error(-EINVAL), "not a timestamp"));
        assert_non_null(strstr(timestamp_parse_error(-EDOM), "weekday"));
        assert_non_null(strstr(timestamp_parse_error(-ERANGE), "range"));
}

/* Local time unless UTC is said; the local zone's own name is accepted. */
static void test_local_time(void **state)
{
        struct timestamp ts;

        (void)state;
        assert_int_equal(setenv("TZ", "Europe/Berlin", 1), 0);
        tzset();
        assert_int_equal(timestamp_parse("2026-12-01 09:00", &now, &ts), 0);
        assert_true(ts.usec == (1796115600 - 3600) * SEC);
        assert_int_equal(timestamp_parse("2026-12-01 09:00 CET", &now, &ts), 0);
        assert_true(ts.usec == (1796115600 - 3600) * SEC);
        assert_int_equal(timestamp_parse("2026-12-01 09:00 UTC", &now, &ts), 0);
        assert_true(ts.usec == 1796115600 * SEC);
        /* Summer time. */
        assert_int_equal(timestamp_parse("2026-07-01 09:00 CEST", &now, &ts), 0);
        assert_true(ts.usec == (1782896400 - 2 * 3600) * SEC);
        /* The hour the clocks skip does not exist. */
        assert_int_equal(timestamp_parse("2026-03-29 02:30", &now, &ts), -ERANGE);
        assert_int_equal(setenv("TZ", "UTC", 1), 0);
        tzset();
}

static void test_on_clock(void **state)
{
        struct timestamp ts = {.relative = false, .usec = (1700000000 + 10) * SEC};
        uint64_t usec;

        (void)state;
        assert_int_equal(timestamp_on_clock(&ts, &now, TIMERD_CLOCK_MONOTONIC, &usec), 0);
        assert_true(usec == 1010 * SEC);
        assert_int_equal(timestamp_on_clock(&ts, &now, TIMERD_CLOCK_BOOTTIME_ALARM, &usec), 0);
        assert_true(usec == 2010 * SEC);
        assert_int_equal(timestamp_on_clock(&ts, &now, TIMERD_CLOCK_REALTIME, &usec), 0);
        assert_true(usec == ts.usec);

        ts.usec = (1700000000 - 10) * SEC;
        assert_int_equal(timestamp_on_clock(&ts, &now, TIMERD_CLOCK_MONOTONIC, &usec), 0);
        assert_true(usec == 990 * SEC);
        /* Before the monotonic clock started: no such time on it. */
        ts.usec = SEC;
        assert_int_equal(timestamp_on_clock(&ts, &now, TIMERD_CLOCK_MONOTONIC, &usec), -ERANGE);

        ts = (struct timestamp){.relative = true, .usec = 5 * SEC};
        assert_int_equal(timestamp_on_clock(&ts, &now, TIMERD_CLOCK_BOOTTIME, &usec), 0);
        assert_true(usec == 2005 * SEC);
        ts.usec = UINT64_MAX;
        assert_int_equal(timestamp_on_clock(&ts, &now, TIMERD_CLOCK_BOOTTIME, &usec), -ERANGE);
        /* A span the wire carries, but not once added to now. */
        ts.usec = INT64_MAX;
        assert_int_equal(timestamp_on_clock(&ts, &now, TIMERD_CLOCK_BOOTTIME, &usec), -ERANGE);
        /* The latest time the service's wire carries, and no later. */
        ts = (struct timestamp){.relative = false, .usec = INT64_MAX};
        assert_int_equal(timestamp_on_clock(&ts, &now, TIMERD_CLOCK_REALTIME, &usec), 0);
        assert_true(usec == INT64_MAX);
        ts.usec = (uint64_t)INT64_MAX + 1;
        assert_int_equal(timestamp_on_clock(&ts, &now, TIMERD_CLOCK_REALTIME, &usec), -ERANGE);
        /* Past it on a clock that runs ahead of the wall clock. */
        ts.usec = INT64_MAX;
        assert_int_equal(timestamp_on_clock(&ts, &(struct clocks){.boottime_usec = 10},
                                            TIMERD_CLOCK_BOOTTIME, &usec),
                         -ERANGE);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_good),
            cmocka_unit_test(test_bad),
            cmocka_unit_test(test_local_time),
            cmocka_unit_test(test_on_clock),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
