/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * A firing nobody takes costs the service nothing (issue 14 hole 1). An unprivileged user leaves
 * retained timers of every policy with a 1 ms cadence pending (no waiter) and goes away; the idle
 * service must sleep: its wake-up counter and CPU time stay flat over seconds, where it used to
 * wake once per period per timer. A later Wait still gets each firing, with the periods it missed
 * as overruns, and the next firing only those since (Firing.overruns is per firing, issue 15
 * item 4). A cadence below min-cadence is refused.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"
#include "proc-stats.h"
#include "users.h"

#define MS           1000ull
#define IDLE_SECONDS 3

#define EXPECT(step, cond)                                                                         \
        do {                                                                                       \
                if (!(cond)) {                                                                     \
                        fprintf(stderr, "idle step %d failed: %s\n", step, #cond);                 \
                        return step;                                                               \
                }                                                                                  \
        } while (0)

static int declare(struct timerd *t, const char *name, const char *declaration)
{
        char params[512];
        snprintf(params, sizeof(params), "{\"name\":\"%s\",\"delay_usec\":1000,\"declaration\":%s}",
                 name, declaration);
        return timerd_call_raw(t, "io.timerd.Timer.Register", params, NULL);
}

/* As the unprivileged user: retained timers that will fire with nobody waiting. */
static int leave_pending_timers(void *userdata)
{
        const struct harness *h = userdata;
        struct timerd *t;

        EXPECT(1, timerd_connect(h->socket, &t) == 0);
        EXPECT(
            2,
            declare(t, "iv",
                    "{\"policy\":\"interval\",\"cadence_usec\":1000,\"lifetime\":\"retained\"}") ==
                0);
        EXPECT(
            3,
            declare(t, "wd",
                    "{\"policy\":\"watchdog\",\"cadence_usec\":1000,\"lifetime\":\"retained\"}") ==
                0);
        EXPECT(4, declare(t, "ac",
                          "{\"policy\":\"after_completion\",\"cadence_usec\":1000,"
                          "\"lifetime\":\"retained\"}") == 0);
        EXPECT(5, declare(t, "once", "{\"policy\":\"once\",\"lifetime\":\"retained\"}") == 0);
        /* What used to make it spin: a 1 µs cadence. */
        EXPECT(6,
               declare(t, "fast",
                       "{\"policy\":\"interval\",\"cadence_usec\":1,\"lifetime\":\"retained\"}") ==
                   -TIMERD_E_INVALID_SCHEDULE);
        timerd_close(t);
        return 0;
}

/* As the same user, later: each firing is there, with the periods it missed. */
static int take_firings(void *userdata)
{
        const struct harness *h = userdata;
        const uint64_t idle_periods = IDLE_SECONDS * 1000;
        struct timerd_timer info;
        struct timerd_firing f;
        struct timerd *t;

        EXPECT(20, timerd_connect(h->socket, &t) == 0);
        /* Get counts the periods that passed, though the service never woke for them. */
        EXPECT(21, timerd_get(t, "iv", TIMERD_OWNER_SELF, &info) == 0);
        EXPECT(22, info.pending && info.overruns >= idle_periods);
        EXPECT(23, timerd_wait(t, (const char *[]){"iv"}, 1, 1000 * MS, &f) == 0);
        EXPECT(24, f.token.run == 1 && f.overruns >= info.overruns);
        const struct timerd_token first_of_iv = f.token;
        EXPECT(25, timerd_wait(t, (const char *[]){"wd"}, 1, 1000 * MS, &f) == 0);
        EXPECT(26, f.token.run == 1 && f.overruns >= idle_periods);
        EXPECT(27,
               timerd_complete(t, &f.token, TIMERD_OUTCOME_SUCCESS, TIMERD_DIRECTIVE_STOP, 0) == 0);
        EXPECT(28, timerd_wait(t, (const char *[]){"ac"}, 1, 1000 * MS, &f) == 0);
        EXPECT(29, f.overruns == 0);
        EXPECT(30, timerd_wait(t, (const char *[]){"once"}, 1, 1000 * MS, &f) == 0);

        /* The interval's next firing reports the periods since the last one, not the total. */
        EXPECT(33, timerd_complete(t, &first_of_iv, TIMERD_OUTCOME_SUCCESS,
                                   TIMERD_DIRECTIVE_CONTINUE, 0) == 0);
        EXPECT(34, timerd_wait(t, (const char *[]){"iv"}, 1, 1000 * MS, &f) == 0);
        EXPECT(35, f.token.run == 2 && f.overruns < idle_periods / 2);
        EXPECT(36, timerd_get(t, "iv", TIMERD_OWNER_SELF, &info) == 0);
        EXPECT(37, info.overruns >= idle_periods);
        timerd_close(t);
        return 0;
}

static void test_pending_timers_cost_no_wakeups(void **state)
{
        const struct harness *h = *state;
        struct timerd_status before, after;

        if (!users_available())
                skip();
        /* Other users reach the socket through the test's directory. */
        assert_int_equal(chmod(h->dir, 0755), 0);
        assert_int_equal(run_as(USER_A, leave_pending_timers, (void *)h), 0);
        /* Each recurring timer fires once, then once more while pending (held from then on). */
        usleep(200 * 1000);

        struct timerd *root = harness_connect(h);
        assert_int_equal(timerd_status(root, &before), 0);
        long cpu_before = proc_cpu_ticks(h->pid);
        sleep(IDLE_SECONDS);
        assert_int_equal(timerd_status(root, &after), 0);
        long cpu_after = proc_cpu_ticks(h->pid);
        timerd_close(root);

        /* The Status calls themselves are a few wake-ups; one timer per period would be 3000 each.
         */
        fprintf(stderr, "idle: %llu wake-ups, %ld CPU ticks in %d s\n",
                (unsigned long long)(after.wakeups - before.wakeups), cpu_after - cpu_before,
                IDLE_SECONDS);
        assert_true(after.wakeups - before.wakeups <= 10);
        assert_true(cpu_before >= 0 && cpu_after - cpu_before <= 5);

        assert_int_equal(run_as(USER_A, take_firings, (void *)h), 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_pending_timers_cost_no_wakeups, harness_setup,
                                            harness_teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
