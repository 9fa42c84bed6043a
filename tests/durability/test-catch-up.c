/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * Catch-up: a retained timer whose deadline passed while the service was down fires once at
 * start — never once per missed period — reporting the missed deadline, so the firing shows how
 * late it is; then the normal schedule. With catch_up false the missed firing is skipped. With
 * randomized_delay_usec, catch-ups are spread instead of firing in one burst. A catch-up firing
 * says so (catch_up), and so does Get's last run, also after another restart; a normal one not.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <cmocka.h>

#include "durability.h"

#define MSEC 1000ull
#define SEC  1000000ull

static void register_retained(struct timerd *t, const char *name, uint64_t cadence_usec,
                              uint64_t delay_usec, const char *extra)
{
        assert_int_equal(dur_call(t, NULL, "io.timerd.Timer.Register",
                                  "{\"name\":\"%s\",\"delay_usec\":%llu,\"declaration\":"
                                  "{\"policy\":\"interval\",\"cadence_usec\":%llu,"
                                  "\"lifetime\":\"retained\"%s}}",
                                  name, (unsigned long long)delay_usec,
                                  (unsigned long long)cadence_usec, extra),
                         0);
}

static uint64_t next_usec(struct timerd *t, const char *name)
{
        struct timerd_timer timer;

        assert_int_equal(timerd_get(t, name, TIMERD_OWNER_SELF, &timer), 0);
        assert_true(timer.has_next);
        return timer.next_usec;
}

static void sleep_until(uint64_t monotonic_usec)
{
        uint64_t now = dur_now();

        if (now < monotonic_usec)
                usleep((useconds_t)(monotonic_usec - now));
}

static void test_catch_up(void **state)
{
        const uint64_t cadence = 1 * SEC;
        struct timerd_firing first, second;
        struct timerd_timer skipped, ticked;
        uint64_t tick, skip, restart;
        struct timerd *t;

        struct dur *dur = *state;

        dur_start(dur);
        t = harness_connect(&dur->h);
        register_retained(t, "tick", cadence, 800 * MSEC, ",\"catch_up\":true");
        register_retained(t, "skip", 60 * SEC, 800 * MSEC, ",\"catch_up\":false");
        tick = next_usec(t, "tick");
        skip = next_usec(t, "skip");
        timerd_close(t);
        dur_stop(dur);
        /* The deadlines pass while the service is down, and three more periods of tick. */
        assert_true(dur_now() < tick);
        sleep_until(tick + 3 * cadence + 100 * MSEC);

        restart = dur_now();
        dur_start(dur);
        t = harness_connect(&dur->h);
        assert_int_equal(timerd_wait(t, (const char *[]){"tick"}, 1, 10 * SEC, &first), 0);
        /* Once, at start, late by at least the time it was due while the service was down. */
        assert_int_equal(first.deadline_usec, tick);
        assert_true(first.fired_usec >= restart);
        assert_true(first.fired_usec - first.deadline_usec >= restart - tick);
        assert_true(first.fired_usec - restart < 5 * SEC);
        assert_true(first.overruns >= 3);
        assert_true(first.catch_up);
        assert_int_equal(
            timerd_complete(t, &first.token, TIMERD_OUTCOME_SUCCESS, TIMERD_DIRECTIVE_CONTINUE, 0),
            0);
        assert_int_equal(timerd_get(t, "tick", TIMERD_OWNER_SELF, &ticked), 0);
        assert_true(ticked.last_catch_up);
        /* Then the normal schedule: the first period after the catch-up, not a missed one. */
        assert_int_equal(timerd_wait(t, (const char *[]){"tick"}, 1, 10 * SEC, &second), 0);
        assert_int_equal(second.deadline_usec, tick + (first.overruns + 1) * cadence);
        assert_true(second.deadline_usec > first.fired_usec);
        assert_int_equal(second.token.run, first.token.run + 1);
        assert_false(second.catch_up);
        assert_int_equal(timerd_get(t, "tick", TIMERD_OWNER_SELF, &ticked), 0);
        assert_false(ticked.last_catch_up);

        /* catch_up false: nothing fires; the next deadline is the first one after now. */
        assert_int_equal(timerd_wait(t, (const char *[]){"skip"}, 1, 300 * MSEC, &first),
                         -TIMERD_E_TIMEOUT);
        assert_int_equal(timerd_get(t, "skip", TIMERD_OWNER_SELF, &skipped), 0);
        assert_int_equal(skipped.runs, 0);
        assert_int_equal(skipped.run, 0);
        assert_int_equal(skipped.next_usec, skip + 60 * SEC);
        timerd_close(t);
        dur_stop(dur);
}

static void test_randomized_delay(void **state)
{
        enum { N = 8 };
        const uint64_t spread = 2 * SEC;
        uint64_t deadlines[N], restart, first = UINT64_MAX, last = 0;
        struct timerd *t;
        char name[16];

        struct dur *dur = *state;

        dur_start(dur);
        t = harness_connect(&dur->h);
        for (int i = 0; i < N; i++) {
                snprintf(name, sizeof(name), "spread%d", i);
                register_retained(t, name, 3600 * SEC, 300 * MSEC,
                                  ",\"randomized_delay_usec\":2000000");
                deadlines[i] = next_usec(t, name);
        }
        timerd_close(t);
        dur_stop(dur);
        sleep_until(deadlines[N - 1] + 100 * MSEC);

        restart = dur_now();
        dur_start(dur);
        t = harness_connect(&dur->h);
        for (int i = 0; i < N; i++) {
                struct timerd_firing f;
                int k;

                assert_int_equal(timerd_wait(t, NULL, 0, 10 * SEC, &f), 0);
                assert_int_equal(sscanf(f.token.name, "spread%d", &k), 1);
                assert_true(k >= 0 && k < N);
                assert_int_equal(f.deadline_usec, deadlines[k]);
                assert_true(f.catch_up); /* delayed, still a catch-up */
                assert_true(f.fired_usec >= restart);
                assert_true(f.fired_usec - restart < spread + 5 * SEC);
                first = f.fired_usec < first ? f.fired_usec : first;
                last = f.fired_usec > last ? f.fired_usec : last;
                assert_int_equal(timerd_complete(t, &f.token, TIMERD_OUTCOME_SUCCESS,
                                                 TIMERD_DIRECTIVE_CONTINUE, 0),
                                 0);
        }
        /* Eight uniform delays in [0, 2 s) all within 50 ms of each other: about 1e-10. */
        assert_true(last - first > 50 * MSEC);
        timerd_close(t);
        dur_stop(dur);

        /* The last run stays marked across a restart (journaled); none is due again for hours. */
        dur_start(dur);
        t = harness_connect(&dur->h);
        for (int i = 0; i < N; i++) {
                struct timerd_timer timer;

                snprintf(name, sizeof(name), "spread%d", i);
                assert_int_equal(timerd_get(t, name, TIMERD_OWNER_SELF, &timer), 0);
                assert_int_equal(timer.runs, 1);
                assert_true(timer.last_catch_up);
        }
        timerd_close(t);
        dur_stop(dur);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_catch_up, dur_setup, dur_teardown),
            cmocka_unit_test_setup_teardown(test_randomized_delay, dur_setup, dur_teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
