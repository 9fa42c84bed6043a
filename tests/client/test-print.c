/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What timerctl shows people: the list table, one timer, the service status; times on a timer's
 * clock shown as wall-clock times. Runs with TZ=UTC.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "clocks.h"
#include "print.h"

#define SEC 1000000ULL

/* Tue 2023-11-14 22:13:20 UTC; monotonic and boottime at 1000 s and 2000 s. */
static const struct clocks now = {
    .realtime_usec = 1700000000 * SEC,
    .monotonic_usec = 1000 * SEC,
    .boottime_usec = 2000 * SEC,
};

/* Runs print into a string; the caller frees it. */
#define CAPTURE(text, call)                                                                        \
        do {                                                                                       \
                size_t size_;                                                                      \
                FILE *f = open_memstream(&(text), &size_);                                         \
                assert_non_null(f);                                                                \
                call;                                                                              \
                assert_int_equal(fclose(f), 0);                                                    \
        } while (0)

static struct timerd_timer make_timer(const char *name, enum timerd_policy policy,
                                      enum timerd_clock clock, enum timerd_state state)
{
        struct timerd_timer t = {.state = state};

        strcpy(t.name, name);
        timerd_declaration_init(&t.declaration, policy,
                                policy == TIMERD_POLICY_ONCE ? 0 : 5 * 60 * SEC);
        t.declaration.clock = clock;
        return t;
}

static void test_clocks_to_realtime(void **state)
{
        uint64_t wall;

        (void)state;
        assert_true(clocks_to_realtime(&now, TIMERD_CLOCK_MONOTONIC, 1010 * SEC, &wall));
        assert_true(wall == 1700000010 * SEC);
        assert_true(clocks_to_realtime(&now, TIMERD_CLOCK_BOOTTIME_ALARM, 1990 * SEC, &wall));
        assert_true(wall == 1699999990 * SEC);
        assert_true(clocks_to_realtime(&now, TIMERD_CLOCK_REALTIME, 42, &wall));
        assert_true(wall == 42);
        assert_true(clocks_now(&now, TIMERD_CLOCK_BOOTTIME) == 2000 * SEC);
        assert_true(clocks_now(&now, TIMERD_CLOCK_REALTIME_ALARM) == 1700000000 * SEC);

        /* Before the epoch, past 64 bits: not a wall-clock time. */
        assert_false(clocks_to_realtime(&(struct clocks){.realtime_usec = 5, .monotonic_usec = 100},
                                        TIMERD_CLOCK_MONOTONIC, 0, &wall));
        assert_false(clocks_to_realtime(&now, TIMERD_CLOCK_MONOTONIC, UINT64_MAX, &wall));
}

static void test_clocks_read(void **state)
{
        struct clocks c;

        (void)state;
        assert_int_equal(clocks_read(&c), 0);
        /* Any machine running this test booted after 2001. */
        assert_true(c.realtime_usec > 1000000000 * SEC);
        assert_true(c.boottime_usec >= c.monotonic_usec);
}

static void test_table(void **state)
{
        struct timerd_timer timers[3];
        char *text = NULL;

        (void)state;
        timers[0] =
            make_timer("idle", TIMERD_POLICY_ONCE, TIMERD_CLOCK_MONOTONIC, TIMERD_STATE_INACTIVE);
        timers[1] = make_timer("alarm", TIMERD_POLICY_AFTER_COMPLETION, TIMERD_CLOCK_BOOTTIME,
                               TIMERD_STATE_SCHEDULED);
        timers[1].has_next = true;
        timers[1].next_usec = 2000 * SEC + 3600 * SEC;
        timers[2] = make_timer("backup", TIMERD_POLICY_INTERVAL, TIMERD_CLOCK_MONOTONIC,
                               TIMERD_STATE_SCHEDULED);
        timers[2].has_next = true;
        timers[2].next_usec = 1000 * SEC + 252 * SEC + 500000;
        timers[2].has_last_start = true;
        timers[2].last_start_usec = 997 * SEC;

        CAPTURE(text, assert_int_equal(print_timer_table(f, timers, 3, &now), 0));
        /* Soonest first; nothing due last. */
        assert_string_equal(
            text,
            "NEXT                         LEFT           LAST                         PASSED  "
            "NAME    POLICY            STATE\n"
            "Tue 2023-11-14 22:17:32 UTC  4min 12s left  Tue 2023-11-14 22:13:17 UTC  3s ago  "
            "backup  interval          scheduled\n"
            "Tue 2023-11-14 23:13:20 UTC  1h left        -                            -       "
            "alarm   after-completion  scheduled\n"
            "-                            -              -                            -       "
            "idle    once              inactive\n"
            "\n"
            "3 timers listed.\n");
        free(text);
}

static void test_table_counts(void **state)
{
        struct timerd_timer timer =
            make_timer("a", TIMERD_POLICY_ONCE, TIMERD_CLOCK_REALTIME, TIMERD_STATE_INACTIVE);
        char *text = NULL;

        (void)state;
        CAPTURE(text, assert_int_equal(print_timer_table(f, NULL, 0, &now), 0));
        assert_string_equal(text, "0 timers listed.\n");
        free(text);

        CAPTURE(text, assert_int_equal(print_timer_table(f, &timer, 1, &now), 0));
        assert_non_null(strstr(text, "\n1 timer listed.\n"));
        free(text);
}

/* A time behind now on the timer's own clock reads as "ago", also in the LEFT column. */
static void test_table_overdue(void **state)
{
        struct timerd_timer timer =
            make_timer("late", TIMERD_POLICY_ONCE, TIMERD_CLOCK_REALTIME, TIMERD_STATE_SCHEDULED);
        char *text = NULL;

        (void)state;
        timer.has_next = true;
        timer.next_usec = 1700000000 * SEC - 65 * SEC;
        CAPTURE(text, assert_int_equal(print_timer_table(f, &timer, 1, &now), 0));
        assert_non_null(strstr(text, "Tue 2023-11-14 22:12:15 UTC  1min 5s ago  "));
        free(text);
}

static void test_show(void **state)
{
        struct timerd_timer timer = make_timer("backup", TIMERD_POLICY_WATCHDOG,
                                               TIMERD_CLOCK_REALTIME_ALARM, TIMERD_STATE_FAILED);
        char *text = NULL;

        (void)state;
        timer.owner = 1000;
        timer.failure = TIMERD_FAILURE_PROVIDER_BINDING;
        timer.generation = 3;
        timer.declaration.lifetime = TIMERD_LIFETIME_RETAINED;
        timer.declaration.accuracy_usec = 250000;
        timer.has_next = true;
        timer.next_usec = 1700000000 * SEC + 90 * SEC;
        timer.run = 7;
        timer.run_active = true;
        timer.runs = 12;
        timer.last_outcome = TIMERD_OUTCOME_EXPECTED_FAILURE;
        timer.last_duration_usec = 1500000;

        CAPTURE(text, print_timer(f, &timer, &now));
        assert_non_null(strstr(text, "backup\n"));
        assert_non_null(strstr(text, "             Owner: 1000\n"));
        assert_non_null(strstr(text, "            Policy: watchdog, every 5min\n"));
        assert_non_null(strstr(text, "             Clock: realtime-alarm\n"));
        assert_non_null(strstr(text, "          Lifetime: retained\n"));
        assert_non_null(strstr(text, "          Accuracy: 250ms\n"));
        assert_non_null(strstr(text, "             State: failed (provider-binding)\n"));
        assert_non_null(
            strstr(text, "              Next: Tue 2023-11-14 22:14:50 UTC (1min 30s left)\n"));
        assert_non_null(strstr(text, "               Run: 7 (active)\n"));
        assert_non_null(strstr(text, "        Last start: -\n"));
        assert_non_null(strstr(text, "      Last outcome: expected-failure\n"));
        assert_non_null(strstr(text, "     Last duration: 1s 500ms\n"));
        free(text);
}

static void test_status(void **state)
{
        struct timerd_status s = {
            .epoch = "b1d-17-1",
            .version = "0.1.0",
            .backend = "timerfd",
            .backend_reason = "io_uring refused: EPERM",
            .store = "ok",
            .pid = 42,
            .uptime_usec = 3 * 3600 * SEC + 120 * SEC + 2500,
            .timers = 5,
            .scheduled = 3,
            .lateness_samples = 50,
            .lateness_p50_usec = 10,
            .lateness_p99_usec = 250,
            .lateness_max_usec = 1000,
        };
        char *text = NULL;

        (void)state;
        CAPTURE(text, print_status(f, &s));
        assert_non_null(strstr(text, "           Backend: timerfd (io_uring refused: EPERM)\n"));
        assert_non_null(strstr(text, "            Uptime: 3h 2min\n"));
        assert_non_null(strstr(text, "            Timers: 5 (3 scheduled, 0 running, 0 failed, "
                                     "0 pending)\n"));
        assert_non_null(strstr(text, "          Lateness: p50 10us, p99 250us, max 1ms (50 "
                                     "samples)\n"));
        free(text);

        s.backend_reason[0] = 0;
        s.lateness_samples = 0;
        CAPTURE(text, print_status(f, &s));
        assert_non_null(strstr(text, "           Backend: timerfd\n"));
        assert_non_null(strstr(text, "          Lateness: -\n"));
        free(text);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_clocks_to_realtime),
            cmocka_unit_test(test_clocks_read),
            cmocka_unit_test(test_table),
            cmocka_unit_test(test_table_counts),
            cmocka_unit_test(test_table_overdue),
            cmocka_unit_test(test_show),
            cmocka_unit_test(test_status),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
