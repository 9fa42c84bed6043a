/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * Retained timers outlive the service: after a clean restart, and after kill -9, they come back
 * with their declaration (a handover included), schedule, generation and counters, and their
 * owners' claims keep working. Transient timers do not come back.
 */

#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

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
        assert_int_equal(a->live_cadence_usec, b->live_cadence_usec);
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

/* The owner's Reconcile after a restart finds its timer: no conflict, the same claim. */
static void assert_reconcile_reuses(struct timerd *t, const char *name,
                                    const struct timerd_declaration *d,
                                    const struct timerd_claim *claim)
{
        struct timerd_claim again;
        bool created;

        assert_int_equal(
            timerd_reconcile(t, name, d, TIMERD_DESIRED_SCHEDULED, 0, &again, &created), 0);
        assert_false(created);
        assert_int_equal(again.generation, claim->generation);
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
                t = dur_restart(dur, crash);
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

/* Issue 15 item 3: a cadence from Reschedule is the live schedule's: a clean restart and kill -9
 * keep it, the declaration stays the owner's, and the owner's Reconcile after the restart matches
 * and puts the declared cadence back, durably. */
static void test_live_cadence_survives_restart(void **state)
{
        struct timerd_start later = {.kind = TIMERD_START_AFTER, .usec = 3600 * SEC};
        struct timerd_declaration d = retained(TIMERD_POLICY_INTERVAL, 7200 * SEC);
        struct timerd_claim claim;
        uint64_t remaining, cadence;
        struct timerd_timer timer;
        struct dur *dur = *state;
        struct timerd *t;

        dur_start(dur);
        t = harness_connect(&dur->h);
        assert_int_equal(timerd_register(t, "tick", &d, &later, false, &claim), 0);
        assert_int_equal(timerd_reschedule(t, &claim, NULL, &later, 60 * SEC, &remaining, &cadence),
                         0);
        assert_int_equal(cadence, 7200 * SEC);
        timerd_close(t);

        for (int crash = 0; crash < 2; crash++) {
                t = dur_restart(dur, crash);
                assert_int_equal(timerd_get(t, "tick", TIMERD_OWNER_SELF, &timer), 0);
                assert_int_equal(timer.declaration.cadence_usec, 7200 * SEC);
                assert_int_equal(timer.live_cadence_usec, 60 * SEC);
                timerd_close(t);
        }

        /* The client comes back with its own declaration: no ReconciliationConflict. */
        t = harness_connect(&dur->h);
        assert_reconcile_reuses(t, "tick", &d, &claim);
        assert_int_equal(timerd_get(t, "tick", TIMERD_OWNER_SELF, &timer), 0);
        assert_int_equal(timer.live_cadence_usec, 7200 * SEC);
        assert_true(timer.has_next);
        timerd_close(t);
        dur_crash(dur);
        dur_start(dur);
        t = harness_connect(&dur->h);
        assert_int_equal(timerd_get(t, "tick", TIMERD_OWNER_SELF, &timer), 0);
        assert_int_equal(timer.live_cadence_usec, 7200 * SEC);
        timerd_close(t);
        dur_stop(dur);
}

/* Issue 21 item 6, the upgrade: a retained timer declared without a handover (an older
 * libtimerd's default) is in the store; the client comes back after a restart with today's
 * default and reconciles: no ReconciliationConflict, the same claim, and the timer takes the
 * default handover, durably. */
static void test_reconcile_upgrades_to_the_default_handover(void **state)
{
        struct timerd_declaration old = retained(TIMERD_POLICY_AFTER_COMPLETION, 3600 * SEC);
        struct timerd_declaration d = retained(TIMERD_POLICY_AFTER_COMPLETION, 3600 * SEC);
        struct timerd_claim claim;
        struct timerd_timer timer;
        struct dur *dur = *state;
        struct timerd *t;
        bool created;

        old.handover_usec = 0;
        dur_start(dur);
        t = harness_connect(&dur->h);
        assert_int_equal(
            timerd_reconcile(t, "job", &old, TIMERD_DESIRED_SCHEDULED, 0, &claim, &created), 0);
        assert_true(created);
        timerd_close(t);
        dur_stop(dur);

        dur_start(dur);
        t = harness_connect(&dur->h);
        assert_reconcile_reuses(t, "job", &d, &claim);
        timerd_close(t);
        dur_crash(dur);
        dur_start(dur);
        t = harness_connect(&dur->h);
        assert_int_equal(timerd_get(t, "job", TIMERD_OWNER_SELF, &timer), 0);
        assert_int_equal(timer.declaration.handover_usec, TIMERD_HANDOVER_DEFAULT_USEC);
        assert_true(timer.has_next);
        timerd_close(t);
        dur_stop(dur);
}

/* The next timerd signal on sfd within timeout_ms: its generation, or 0 when none came. */
static uint64_t next_signal(int sfd, int timeout_ms)
{
        struct pollfd p = {.fd = sfd, .events = POLLIN};
        struct timerd_signal sig;

        if (poll(&p, 1, timeout_ms) <= 0 || timerd_signal_read(sfd, &sig) != 1)
                return 0;
        return sig.generation;
}

/* Issue 15 item 9: a retained signal timer after a restart. Its pidfd died with the old service,
 * so its firings wait (counted as overruns, never target_gone) until its owner's process
 * reconnects and reconciles, which re-pins it to that process: the held firing comes at once,
 * the next ones follow. */
static void test_signal_timer_repinned_after_restart(void **state)
{
        struct timerd_start soon = {.kind = TIMERD_START_AFTER, .usec = 100000};
        struct timerd_declaration d = retained(TIMERD_POLICY_INTERVAL, 200000);
        struct timerd_claim claim;
        struct timerd_timer timer;
        struct dur *dur = *state;
        struct timerd *t;
        int signo = SIGRTMIN + 3, sfd;

        sfd = timerd_signal_fd(&signo, 1);
        assert_true(sfd >= 0);
        d.delivery = TIMERD_DELIVERY_SIGNAL;
        d.signal = signo;
        dur_start(dur);
        t = harness_connect(&dur->h);
        assert_int_equal(timerd_register(t, "beat", &d, &soon, false, &claim), 0);
        assert_int_equal(next_signal(sfd, 5000), claim.generation);
        /* The service stops under the open connection, as a restart does. */
        dur_stop(dur);
        timerd_close(t);
        while (next_signal(sfd, 0) != 0)
                ;

        dur_start(dur);
        /* Several periods come due before the client is back. */
        usleep(700000);
        t = harness_connect(&dur->h);
        assert_int_equal(timerd_get(t, "beat", TIMERD_OWNER_SELF, &timer), 0);
        assert_int_equal(timer.failure, TIMERD_FAILURE_NONE);
        assert_true(timer.pending);
        assert_int_equal(next_signal(sfd, 0), 0);

        assert_reconcile_reuses(t, "beat", &d, &claim);
        /* The held firing, then the timer goes on signalling this process. */
        assert_int_equal(next_signal(sfd, 2000), claim.generation);
        assert_int_equal(next_signal(sfd, 2000), claim.generation);
        assert_int_equal(timerd_get(t, "beat", TIMERD_OWNER_SELF, &timer), 0);
        assert_int_equal(timer.failure, TIMERD_FAILURE_NONE);
        assert_true(timer.overruns >= 1);
        timerd_close(t);
        dur_stop(dur);
        close(sfd);
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
                t = dur_restart(dur, crash);
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
            cmocka_unit_test_setup_teardown(test_live_cadence_survives_restart, dur_setup,
                                            dur_teardown),
            cmocka_unit_test_setup_teardown(test_reconcile_upgrades_to_the_default_handover,
                                            dur_setup, dur_teardown),
            cmocka_unit_test_setup_teardown(test_calendar_survives_restart, dur_setup,
                                            dur_teardown),
            cmocka_unit_test_setup_teardown(test_signal_timer_repinned_after_restart, dur_setup,
                                            dur_teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
