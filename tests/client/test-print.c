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
        /* As read back: the service shows the handover libtimerd resolved the default to. */
        t.declaration.handover_usec = 0;
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

static const struct table_style plain = {.legend = true};

/* The table of n timers as print_timer_table() writes it at `now`; the caller frees it. */
static char *table_text(const struct timerd_timer *timers, size_t n,
                        const struct table_style *style)
{
        char *text = NULL;

        CAPTURE(text, assert_int_equal(print_timer_table(f, timers, n, &now, style), 0));
        return text;
}

/* One timer as print_timer() writes it at `now`; the caller frees it. */
static char *timer_text(const struct timerd_timer *timer)
{
        char *text = NULL;

        CAPTURE(text, print_timer(f, timer, &now));
        return text;
}

static void three_timers(struct timerd_timer timers[3])
{
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
        timers[2].last_outcome = TIMERD_OUTCOME_EXPECTED_FAILURE;
        timers[2].last_result = (struct timerd_run_result){TIMERD_EXIT_EXITED, 3};
}

static void test_table(void **state)
{
        struct timerd_timer timers[3];
        char *text = NULL;

        (void)state;
        three_timers(timers);
        text = table_text(timers, 3, &plain);
        /* Soonest first; nothing due last. */
        assert_string_equal(
            text,
            "NEXT                         LEFT           LAST                         PASSED  "
            "LAST-RESULT  NAME    POLICY            CLOCK      STATE\n"
            "Tue 2023-11-14 22:17:32 UTC  4min 12s left  Tue 2023-11-14 22:13:17 UTC  3s ago  "
            "exit 3       backup  interval          monotonic  scheduled\n"
            "Tue 2023-11-14 23:13:20 UTC  1h left        -                            -       "
            "-            alarm   after-completion  boottime   scheduled\n"
            "-                            -              -                            -       "
            "-            idle    once              monotonic  inactive\n"
            "\n"
            "3 timers listed.\n");
        free(text);
}

/* --no-legend: rows only, sized to themselves. */
static void test_table_no_legend(void **state)
{
        const struct table_style style = {.legend = false};
        struct timerd_timer timers[3];
        char *text = NULL;

        (void)state;
        three_timers(timers);
        text = table_text(timers, 1, &style);
        assert_string_equal(text, "-  -  -  -  -  idle  once  monotonic  inactive\n");
        free(text);

        text = table_text(NULL, 0, &style);
        assert_string_equal(text, "");
        free(text);
}

/* Every owner's timers: an OWNER column of user names (numbers for uids without one), ties in
 * time broken by name, then owner. */
static void test_table_owners(void **state)
{
        const struct table_style style = {.legend = true, .owners = true};
        struct timerd_timer timers[2];
        char *text = NULL;

        (void)state;
        timers[0] =
            make_timer("x", TIMERD_POLICY_ONCE, TIMERD_CLOCK_MONOTONIC, TIMERD_STATE_INACTIVE);
        timers[0].owner = 4000000000;
        timers[1] = timers[0];
        timers[1].owner = 0;
        text = table_text(timers, 2, &style);
        assert_non_null(strstr(text, "  OWNER       NAME  "));
        assert_non_null(strstr(text, "-            root        x     once"));
        assert_non_null(strstr(text, "-            4000000000  x     once"));
        assert_true(strstr(text, "  root  ") < strstr(text, "  4000000000  "));
        free(text);
}

/* Narrower than the table: NAME is shortened, then columns are left out, in order. */
static void test_table_fits_width(void **state)
{
        struct timerd_timer timers[3];
        struct table_style style = plain;
        char *text = NULL, *line;

        (void)state;
        three_timers(timers);
        strcpy(timers[0].name, "a-rather-long-name-for-a-timer-indeed");
        for (size_t width = 160; width >= 40; width -= 10) {
                style.width = width;
                text = table_text(timers, 3, &style);
                /* Every line fits from 70 columns on; below that the essentials stay. */
                for (line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
                        if (width >= 70 && strlen(line) > width)
                                fail_msg("width %zu: \"%s\" is %zu long", width, line,
                                         strlen(line));
                free(text);
        }

        style.width = 125;
        text = table_text(timers, 3, &style);
        assert_non_null(strstr(text, "a-rather-long..."));
        assert_null(strstr(text, "indeed"));
        assert_null(strstr(text, "LAST "));
        assert_non_null(strstr(text, "PASSED"));
        assert_non_null(strstr(text, "LAST-RESULT"));
        free(text);

        style.width = 70;
        text = table_text(timers, 3, &style);
        assert_null(strstr(text, "PASSED"));
        assert_null(strstr(text, "LAST-RESULT"));
        assert_null(strstr(text, "CLOCK"));
        assert_null(strstr(text, "POLICY"));
        assert_non_null(strstr(text, "NEXT"));
        assert_non_null(strstr(text, "LEFT"));
        assert_non_null(strstr(text, "STATE"));
        free(text);
}

/* Colors: the header underlined, a failed state red, the padding outside the escapes. */
static void test_table_color(void **state)
{
        const struct table_style style = {.legend = true, .color = true};
        struct timerd_timer timer =
            make_timer("bad", TIMERD_POLICY_ONCE, TIMERD_CLOCK_MONOTONIC, TIMERD_STATE_FAILED);
        char *text = NULL;

        (void)state;
        text = table_text(&timer, 1, &style);
        assert_non_null(strstr(text, "\033[4mNEXT\033[0m  "));
        assert_non_null(strstr(text, "monotonic  \033[1;31mfailed\033[0m\n"));
        free(text);

        text = table_text(&timer, 1, &plain);
        assert_null(strchr(text, '\033'));
        free(text);
}

static void test_table_counts(void **state)
{
        struct timerd_timer timer =
            make_timer("a", TIMERD_POLICY_ONCE, TIMERD_CLOCK_REALTIME, TIMERD_STATE_INACTIVE);
        char *text = NULL;

        (void)state;
        text = table_text(NULL, 0, &plain);
        assert_string_equal(text, "0 timers listed.\n");
        free(text);

        text = table_text(&timer, 1, &plain);
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
        text = table_text(&timer, 1, &plain);
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

        text = timer_text(&timer);
        assert_non_null(strstr(text, "backup\n"));
        assert_non_null(strstr(text, "             Owner: 1000\n"));
        assert_non_null(strstr(text, "            Policy: watchdog, every 5min\n"));
        assert_non_null(strstr(text, "             Clock: realtime-alarm\n"));
        assert_non_null(strstr(text, "          Lifetime: retained\n"));
        assert_non_null(strstr(text, "          Accuracy: 250ms\n"));
        assert_non_null(strstr(text, "          Delivery: notify\n"));
        assert_non_null(strstr(text, "          Catch-up: yes\n"));
        assert_non_null(strstr(text, "  Randomized delay: 0\n"));
        assert_non_null(strstr(text, "          Handover: 0\n"));
        assert_non_null(strstr(text, "             State: failed (provider-binding)\n"));
        assert_non_null(
            strstr(text, "              Next: Tue 2023-11-14 22:14:50 UTC (1min 30s left)\n"));
        assert_non_null(strstr(text, "               Run: 7 (active)\n"));
        assert_non_null(strstr(text, "        Last start: -\n"));
        assert_non_null(strstr(text, "          Last run: -\n"));
        assert_non_null(strstr(text, "      Last outcome: expected-failure\n"));
        assert_non_null(strstr(text, "       Last result: expected-failure\n"));
        assert_non_null(strstr(text, "     Last duration: 1s 500ms\n"));
        free(text);

        /* What the runner reported of the program, when it did. */
        timer.last_result = (struct timerd_run_result){TIMERD_EXIT_SIGNALED, 9};
        text = timer_text(&timer);
        assert_non_null(strstr(text, "       Last result: signal KILL\n"));
        free(text);
        timer.last_result = (struct timerd_run_result){TIMERD_EXIT_TIMED_OUT, 15};
        text = timer_text(&timer);
        assert_non_null(strstr(text, "       Last result: timeout (TERM)\n"));
        free(text);
        timer.last_result = (struct timerd_run_result){};

        /* The last run says whether it caught up on a deadline missed while the service was down.
         */
        timer.has_last_start = true;
        timer.last_start_usec = 1700000000 * SEC;
        text = timer_text(&timer);
        assert_non_null(strstr(text, "          Last run: on schedule\n"));
        free(text);
        timer.last_catch_up = true;
        text = timer_text(&timer);
        assert_non_null(
            strstr(text, "          Last run: catch-up (due while the service was down)\n"));
        free(text);
        timer.has_last_start = false;
        timer.last_catch_up = false;

        /* Signal delivery names its signal, SIGALRM unless another was chosen. */
        timer.declaration.delivery = TIMERD_DELIVERY_SIGNAL;
        timer.declaration.catch_up = false;
        timer.declaration.randomized_delay_usec = 30 * SEC;
        timer.declaration.handover_usec = 1500;
        text = timer_text(&timer);
        assert_non_null(strstr(text, "          Handover: 1ms 500us\n"));
        assert_non_null(strstr(text, "          Delivery: signal SIGALRM\n"));
        assert_non_null(strstr(text, "          Catch-up: no\n"));
        assert_non_null(strstr(text, "  Randomized delay: 30s\n"));
        free(text);
        timer.declaration.signal = 10;
        text = timer_text(&timer);
        assert_non_null(strstr(text, "          Delivery: signal SIGUSR1\n"));
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
            .has_lateness_p99 = true,
            .lateness_max_usec = 1000,
            .host_wide = true,
            .lateness_past_due = 2,
            .loop_lag_samples = 40,
            .loop_lag_p50_usec = 3,
            .loop_lag_p99_usec = 40,
            .loop_lag_max_usec = 40,
        };
        char *text = NULL;

        (void)state;
        CAPTURE(text, print_status(f, &s));
        assert_non_null(strstr(text, "           Backend: timerfd (io_uring refused: EPERM)\n"));
        assert_non_null(strstr(text, "            Uptime: 3h 2min\n"));
        assert_non_null(strstr(text, "            Timers: 5 (3 scheduled, 0 running, 0 failed, "
                                     "0 pending)\n"));
        assert_non_null(strstr(text, "          Lateness: p50 10us, p99 250us, max 1ms (50 "
                                     "samples, 2 past due when scheduled, not measured)\n"));
        /* Too few samples for a p99 that says more than the maximum. */
        assert_non_null(strstr(text, "          Loop lag: p50 3us, max 40us (40 samples)\n"));
        assert_null(strstr(text, "Capabilities"));
        assert_non_null(strstr(text, "           Signals: 0 sent, 0 failed\n"));
        free(text);

        s.backend_reason[0] = 0;
        s.lateness_samples = 0;
        strcpy(s.capabilities, "wake_alarm signal");
        CAPTURE(text, print_status(f, &s));
        assert_non_null(strstr(text, "           Backend: timerfd\n"));
        assert_non_null(strstr(text, "          Lateness: - (0 samples, 2 past due when "
                                     "scheduled, not measured)\n"));
        assert_non_null(strstr(text, "      Capabilities: wake_alarm signal\n"));
        free(text);

        /* Another user than root: its own counts, and no activity figures it was not told. */
        s.host_wide = false;
        CAPTURE(text, print_status(f, &s));
        assert_non_null(strstr(text, "            Timers: 5 (3 scheduled, 0 running, 0 failed, "
                                     "0 pending)\n"));
        assert_non_null(strstr(text, "             Scope: your own timers and connections\n"));
        assert_null(strstr(text, "Lateness"));
        assert_null(strstr(text, "Iterations"));
        assert_null(strstr(text, "Firings"));
        assert_non_null(strstr(text, "      Capabilities: wake_alarm signal\n"));
        free(text);
}

static void test_firing_and_event(void **state)
{
        struct timerd_firing firing = {
            .token = {.name = "backup", .generation = 2, .run = 3},
            .clock = TIMERD_CLOCK_MONOTONIC,
            .deadline_usec = 1000 * SEC,
            .fired_usec = 1000 * SEC + 2500,
            .overruns = 4,
        };
        struct timerd_event event = {
            .kind = TIMERD_EVENT_FIRED,
            .owner = 1000,
            .name = "backup",
            .has_run = true,
            .run = 3,
            .has_state = true,
            .state = TIMERD_STATE_RUNNING,
            .realtime_usec = 1700000000 * SEC,
        };
        char *text = NULL;

        (void)state;
        CAPTURE(text, print_firing(f, &firing, &now));
        assert_string_equal(
            text, "backup: run 3 fired Tue 2023-11-14 22:13:20 UTC, 2ms 500us late, 4 overruns\n");
        free(text);
        firing.catch_up = true;
        CAPTURE(text, print_firing(f, &firing, &now));
        assert_string_equal(text,
                            "backup: run 3 fired Tue 2023-11-14 22:13:20 UTC, 2ms 500us late, 4 "
                            "overruns, catch-up (due while the service was down)\n");
        free(text);

        CAPTURE(text, print_event(f, &event, false));
        assert_string_equal(text,
                            "Tue 2023-11-14 22:13:20 UTC  fired         backup run 3 (running)\n");
        free(text);

        event.kind = TIMERD_EVENT_UNREGISTERED;
        event.has_run = event.has_state = false;
        CAPTURE(text, print_event(f, &event, true));
        assert_string_equal(text, "Tue 2023-11-14 22:13:20 UTC  unregistered  1000/backup\n");
        free(text);
}

static void test_next(void **state)
{
        char *text = NULL;

        (void)state;
        CAPTURE(text, print_next(f, TIMERD_CLOCK_BOOTTIME, 2030 * SEC, &now));
        assert_string_equal(text, "Next: Tue 2023-11-14 22:13:50 UTC (30s left)\n");
        free(text);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_clocks_to_realtime),
            cmocka_unit_test(test_clocks_read),
            cmocka_unit_test(test_table),
            cmocka_unit_test(test_table_no_legend),
            cmocka_unit_test(test_table_owners),
            cmocka_unit_test(test_table_fits_width),
            cmocka_unit_test(test_table_color),
            cmocka_unit_test(test_table_counts),
            cmocka_unit_test(test_table_overdue),
            cmocka_unit_test(test_show),
            cmocka_unit_test(test_status),
            cmocka_unit_test(test_firing_and_event),
            cmocka_unit_test(test_next),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
