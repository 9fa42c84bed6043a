/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * Retained timers outlive the service: after a clean restart, and after kill -9, they come back
 * with their declaration (a handover included), schedule, generation and counters, and their
 * owners' claims keep working. Transient timers do not come back.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "durability.h"

#define SEC 1000000ull

static void assert_same_timer(const struct timerd_timer *a, const struct timerd_timer *b)
{
        assert_string_equal(a->name, b->name);
        assert_int_equal(a->declaration.policy, b->declaration.policy);
        assert_int_equal(a->declaration.cadence_usec, b->declaration.cadence_usec);
        assert_int_equal(a->declaration.clock, b->declaration.clock);
        assert_int_equal(a->declaration.lifetime, b->declaration.lifetime);
        assert_int_equal(a->declaration.delivery, b->declaration.delivery);
        assert_int_equal(a->declaration.accuracy_usec, b->declaration.accuracy_usec);
        assert_int_equal(a->generation, b->generation);
        assert_int_equal(a->state, b->state);
        assert_int_equal(a->has_next, b->has_next);
        assert_int_equal(a->next_usec, b->next_usec);
        assert_int_equal(a->run, b->run);
        assert_int_equal(a->runs, b->runs);
        assert_int_equal(a->consecutive_expected_failures, b->consecutive_expected_failures);
        assert_int_equal(a->overruns, b->overruns);
        assert_int_equal(a->has_last_start, b->has_last_start);
        assert_int_equal(a->last_start_usec, b->last_start_usec);
        assert_int_equal(a->has_last_finish, b->has_last_finish);
        assert_int_equal(a->last_finish_usec, b->last_finish_usec);
        assert_int_equal(a->last_outcome, b->last_outcome);
        assert_int_equal(a->last_duration_usec, b->last_duration_usec);
        assert_int_equal(a->total_duration_usec, b->total_duration_usec);
}

static struct timerd_declaration retained(enum timerd_policy policy, uint64_t cadence_usec)
{
        struct timerd_declaration d;

        timerd_declaration_init(&d, policy, cadence_usec);
        d.lifetime = TIMERD_LIFETIME_RETAINED;
        return d;
}

static void test_restart(void **state)
{
        static const char *const names[] = {"tick", "job", "idle"};
        struct timerd_start soon = {.kind = TIMERD_START_AFTER, .usec = 50000};
        struct timerd_start later = {.kind = TIMERD_START_AFTER, .usec = 3600 * SEC};
        struct timerd_timer before[3], after, fresh_before;
        struct timerd_claim tick, job, idle, temp, fresh;
        struct timerd_declaration d;
        struct timerd_firing firing;
        struct timerd *t;

        struct dur *dur = *state;

        dur_start(dur);
        t = harness_connect(&dur->h);

        d = retained(TIMERD_POLICY_INTERVAL, 3600 * SEC);
        d.accuracy_usec = 5000;
        assert_int_equal(timerd_register(t, "tick", &d, NULL, false, &tick), 0);
        /* A run and its counters. */
        d = retained(TIMERD_POLICY_AFTER_COMPLETION, 3600 * SEC);
        assert_int_equal(timerd_register(t, "job", &d, &soon, false, &job), 0);
        assert_int_equal(timerd_wait(t, (const char *[]){"job"}, 1, 10 * SEC, &firing), 0);
        assert_int_equal(timerd_complete(t, &firing.token, TIMERD_OUTCOME_EXPECTED_FAILURE,
                                         TIMERD_DIRECTIVE_CONTINUE, 1234),
                         0);
        d = retained(TIMERD_POLICY_ONCE, 0);
        assert_int_equal(timerd_register(t, "idle", &d, NULL, false, &idle), 0);
        timerd_declaration_init(&d, TIMERD_POLICY_ONCE, 0);
        assert_int_equal(timerd_register(t, "temp", &d, &later, false, &temp), 0);
        for (size_t i = 0; i < 3; i++)
                assert_int_equal(timerd_get(t, names[i], TIMERD_OWNER_SELF, &before[i]), 0);
        assert_int_equal(before[1].runs, 1);
        assert_int_equal(before[1].last_duration_usec, 1234);
        timerd_close(t);

        /* A clean restart. */
        dur_stop(dur);
        dur_start(dur);
        t = harness_connect(&dur->h);
        for (size_t i = 0; i < 3; i++) {
                assert_int_equal(timerd_get(t, names[i], TIMERD_OWNER_SELF, &after), 0);
                assert_same_timer(&after, &before[i]);
        }
        assert_int_equal(timerd_get(t, "temp", TIMERD_OWNER_SELF, &after), -TIMERD_E_NOT_FOUND);

        /* The claims from before the restart still work, and only they. */
        assert_int_equal(timerd_cancel(t, &tick, NULL), 0);
        tick.generation += 100;
        assert_int_equal(timerd_cancel(t, &tick, NULL), -TIMERD_E_REGISTRATION_EXPIRED);
        tick.generation -= 100;
        /* A new registration never takes a generation that was given out before. */
        d = retained(TIMERD_POLICY_ONCE, 0);
        assert_int_equal(timerd_register(t, "fresh", &d, &later, false, &fresh), 0);
        assert_true(fresh.generation > tick.generation && fresh.generation > job.generation &&
                    fresh.generation > idle.generation && fresh.generation > temp.generation);
        assert_int_equal(timerd_get(t, "fresh", TIMERD_OWNER_SELF, &fresh_before), 0);
        assert_int_equal(timerd_unregister(t, &idle), 0);
        timerd_close(t);

        /* kill -9: every acknowledged change is there. */
        dur_crash(dur);
        dur_start(dur);
        t = harness_connect(&dur->h);
        assert_int_equal(timerd_get(t, "idle", TIMERD_OWNER_SELF, &after), -TIMERD_E_NOT_FOUND);
        assert_int_equal(timerd_get(t, "tick", TIMERD_OWNER_SELF, &after), 0);
        assert_int_equal(after.state, TIMERD_STATE_INACTIVE);
        assert_int_equal(after.generation, tick.generation);
        assert_int_equal(timerd_get(t, "fresh", TIMERD_OWNER_SELF, &after), 0);
        assert_same_timer(&after, &fresh_before);
        assert_int_equal(timerd_get(t, "job", TIMERD_OWNER_SELF, &after), 0);
        assert_same_timer(&after, &before[1]);
        assert_int_equal(timerd_kick(t, &job, NULL, NULL), -TIMERD_E_WRONG_POLICY);
        timerd_close(t);
        dur_stop(dur);
}

/* The handover of a retained timer is kept by a clean restart and by kill -9, and still works. */
static void test_handover_survives_restart(void **state)
{
        struct dur *dur = *state;
        uint64_t deadline;
        json_object *reply, *v;
        struct timerd *t;

        dur_start(dur);
        t = harness_connect(&dur->h);
        deadline = dur_now() + 3 * SEC;
        assert_int_equal(dur_call(t, NULL, "io.timerd.Timer.Register",
                                  "{\"name\":\"early\",\"start_usec\":%llu,\"declaration\":"
                                  "{\"policy\":\"once\",\"lifetime\":\"retained\","
                                  "\"handover_usec\":%llu}}",
                                  (unsigned long long)deadline, SEC),
                         0);
        timerd_close(t);

        for (int crash = 0; crash < 2; crash++) {
                if (crash)
                        dur_crash(dur);
                else
                        dur_stop(dur);
                dur_start(dur);
                t = harness_connect(&dur->h);
                assert_int_equal(dur_call(t, &reply, "io.timerd.Timer.Get", "{\"name\":\"early\"}"),
                                 0);
                assert_true(json_object_object_get_ex(reply, "timer", &v) &&
                            json_object_object_get_ex(v, "declaration", &v) &&
                            json_object_object_get_ex(v, "handover_usec", &v));
                assert_int_equal(json_object_get_uint64(v), SEC);
                json_object_put(reply);
                timerd_close(t);
        }

        /* The restored timer still fires early, naming its deadline. */
        t = harness_connect(&dur->h);
        assert_int_equal(dur_call(t, &reply, "io.timerd.Timer.Wait", "{\"names\":[\"early\"]}"), 0);
        assert_true(json_object_object_get_ex(reply, "firing", &v));
        assert_true(json_object_object_get_ex(v, "deadline_usec", &v));
        assert_int_equal(json_object_get_uint64(v), deadline);
        assert_true(json_object_object_get_ex(reply, "firing", &v) &&
                    json_object_object_get_ex(v, "fired_usec", &v));
        assert_true(json_object_get_uint64(v) < deadline);
        json_object_put(reply);
        timerd_close(t);
        dur_stop(dur);
}

/* A retained calendar timer comes back with its expressions, zone (named, or following the local
 * one), fixed delay and next elapse, after a clean stop and after kill -9. */
static void test_calendar_survives_restart(void **state)
{
        struct dur *dur = *state;
        struct timerd_timer before[2], after;
        struct timerd_declaration d;
        struct timerd_claim claim;
        struct timerd *t;

        dur_start(dur);
        t = harness_connect(&dur->h);
        timerd_declaration_init(&d, TIMERD_POLICY_CALENDAR, 0);
        d.lifetime = TIMERD_LIFETIME_RETAINED;
        snprintf(d.calendar, sizeof(d.calendar), "Mon..Fri *-*-* 03:00\ncron:30 4 1 * *");
        snprintf(d.timezone, sizeof(d.timezone), "Europe/Berlin");
        d.randomized_delay_usec = 3600 * SEC;
        d.fixed_random_delay = true;
        assert_int_equal(timerd_register(t, "backup", &d, NULL, false, &claim), 0);
        timerd_declaration_init(&d, TIMERD_POLICY_CALENDAR, 0);
        d.lifetime = TIMERD_LIFETIME_RETAINED;
        snprintf(d.calendar, sizeof(d.calendar), "weekly");
        assert_int_equal(timerd_register(t, "local", &d, NULL, false, &claim), 0);
        assert_int_equal(timerd_get(t, "backup", TIMERD_OWNER_SELF, &before[0]), 0);
        assert_int_equal(timerd_get(t, "local", TIMERD_OWNER_SELF, &before[1]), 0);
        timerd_close(t);

        for (int crash = 0; crash < 2; crash++) {
                if (crash)
                        dur_crash(dur);
                else
                        dur_stop(dur);
                dur_start(dur);
                t = harness_connect(&dur->h);
                for (int i = 0; i < 2; i++) {
                        assert_int_equal(timerd_get(t, before[i].name, TIMERD_OWNER_SELF, &after),
                                         0);
                        assert_same_timer(&before[i], &after);
                        assert_string_equal(after.declaration.calendar,
                                            before[i].declaration.calendar);
                        assert_string_equal(after.declaration.timezone,
                                            before[i].declaration.timezone);
                        assert_int_equal(after.declaration.fixed_random_delay,
                                         before[i].declaration.fixed_random_delay);
                        assert_int_equal(after.declaration.randomized_delay_usec,
                                         before[i].declaration.randomized_delay_usec);
                        assert_string_equal(after.calendar_normalized,
                                            before[i].calendar_normalized);
                }
                timerd_close(t);
        }
        dur_stop(dur);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_restart, dur_setup, dur_teardown),
            cmocka_unit_test_setup_teardown(test_handover_survives_restart, dur_setup,
                                            dur_teardown),
            cmocka_unit_test_setup_teardown(test_calendar_survives_restart, dur_setup,
                                            dur_teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
