/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * A firing nobody takes costs the service nothing (issue 14 hole 1). An unprivileged user leaves
 * retained timers of every policy with a 1 ms cadence pending (no waiter) and goes away; the idle
 * service must sleep: its wake-up counter and CPU time stay flat over seconds, where it used to
 * wake once per period per timer. A later Wait still gets each firing, with the periods it missed
 * as overruns, and the next firing only those since (Firing.overruns is per firing, issue 15
 * item 4). A cadence below min-cadence is refused. Alarm timers are held the same way, whether
 * their registering connection is gone or still open with no Sleep parked: a later Sleep of the
 * owner observes each, its `alarms` being 1 + the periods it missed (issue 15 item 1).
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

/* The alarm timers each client leaves, on a 1 ms cadence where there is one. */
#define ALARMS 3
static const char *const alarm_declarations[ALARMS] = {
    "{\"policy\":\"interval\",\"cadence_usec\":1000,\"delivery\":\"alarm\",%s}",
    "{\"policy\":\"watchdog\",\"cadence_usec\":1000,\"delivery\":\"alarm\",%s}",
    "{\"policy\":\"once\",\"delivery\":\"alarm\",%s}",
};
static const char *const alarm_names[ALARMS] = {"iv-alarm", "wd-alarm", "once-alarm"};

static int declare(struct timerd *t, const char *name, const char *declaration)
{
        char params[512];
        snprintf(params, sizeof(params), "{\"name\":\"%s\",\"delay_usec\":1000,\"declaration\":%s}",
                 name, declaration);
        return timerd_call_raw(t, "io.timerd.Timer.Register", params, NULL);
}

static int declare_alarms(struct timerd *t, const char *lifetime)
{
        char declaration[256];

        for (size_t i = 0; i < ALARMS; i++) {
                snprintf(declaration, sizeof(declaration), alarm_declarations[i], lifetime);
                if (declare(t, alarm_names[i], declaration) != 0)
                        return -1;
        }
        return 0;
}

/*
 * Sleeps of the owner take each of its held alarms (a recurring one may come again: the first
 * observation of each counts), each standing for 1 + the periods it missed: at least what Get
 * counted before, at most 1 + the total Get counts after.
 */
static int take_alarms(struct timerd *t, uint64_t idle_periods)
{
        const struct timerd_start until = {.kind = TIMERD_START_AFTER, .usec = 1000 * MS};
        struct timerd_timer before[ALARMS], after;
        bool seen[ALARMS] = {false};
        size_t n_seen = 0;

        for (size_t i = 0; i < ALARMS; i++) {
                EXPECT(50, timerd_get(t, alarm_names[i], TIMERD_OWNER_SELF, &before[i]) == 0);
                EXPECT(51, before[i].pending);
        }
        EXPECT(52, before[0].overruns >= idle_periods && before[1].overruns >= idle_periods);
        for (int round = 0; round < 2 * ALARMS && n_seen < ALARMS; round++) {
                struct timerd_sleep_result slept;
                struct timerd_finish_result finished;
                size_t i = 0;

                EXPECT(53, timerd_sleep(t, TIMERD_CLOCK_MONOTONIC, &until, &slept) == 0);
                EXPECT(54, !slept.elapsed);
                while (i < ALARMS && strcmp(slept.observation.timer, alarm_names[i]) != 0)
                        i++;
                EXPECT(55, i < ALARMS);
                EXPECT(56, timerd_finish(t, &slept.observation, TIMERD_FINISH_TERMINATE,
                                         &finished) == 0);
                if (seen[i])
                        continue;
                seen[i] = true;
                n_seen++;
                EXPECT(57, timerd_get(t, alarm_names[i], TIMERD_OWNER_SELF, &after) == 0);
                EXPECT(58, slept.observation.alarms >= 1 + before[i].overruns &&
                               slept.observation.alarms <= 1 + after.overruns);
                if (i == 2)
                        EXPECT(59,
                               slept.observation.alarms == 1 && after.runs == 1 && !after.pending);
                else
                        EXPECT(60, slept.observation.alarms > idle_periods);
        }
        EXPECT(61, n_seen == ALARMS);
        return 0;
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
        EXPECT(7, declare_alarms(t, "\"lifetime\":\"retained\"") == 0);
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

        /* The alarms of the connection that is gone, on this one. */
        int r = take_alarms(t, idle_periods);
        timerd_close(t);
        return r;
}

/* Root's client: transient alarms of its open connection, which parks no Sleep. */
static int declare_held_alarms(struct timerd *t)
{
        EXPECT(40, declare_alarms(t, "\"lifetime\":\"transient\"") == 0);
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
        struct timerd *connected = harness_connect(h);
        assert_int_equal(declare_held_alarms(connected), 0);
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
        /* The connected client's alarms, on the connection that registered them. */
        assert_int_equal(take_alarms(connected, IDLE_SECONDS * 1000), 0);
        timerd_close(connected);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_pending_timers_cost_no_wakeups, harness_setup,
                                            harness_teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
