/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fixture.h"
#include "service/core/registry-internal.h"

#define MONO TIMERD_CLOCK_MONOTONIC

static struct td_declaration decl_at(enum timerd_policy policy, uint64_t cadence_usec,
                                     enum timerd_clock clock, uint64_t accuracy_usec)
{
        struct td_declaration d = fx_decl(policy, cadence_usec);

        d.clock = clock;
        d.accuracy_usec = accuracy_usec;
        return d;
}

static int reschedule(struct fx *f, struct td_handle h, bool has_deadline, uint64_t deadline,
                      bool has_cadence, uint64_t cadence, struct td_reschedule_result *ret)
{
        return fx_apply(f, registry_reschedule(f->r, &f->now, &h, has_deadline, deadline,
                                               has_cadence, cadence, ret));
}

static int reconcile(struct fx *f, const char *name, struct td_declaration d,
                     enum timerd_desired desired, uint64_t deadline, uint64_t *ret_generation,
                     bool *ret_created)
{
        struct td_reconcile_args a = {
            .caller = {.uid = FX_UID, .session = FX_SESSION},
            .name = name,
            .declaration = d,
            .desired = desired,
            /* A SCHEDULED with deadline 0 is one without deadline_usec. */
            .has_deadline = desired == TIMERD_DESIRED_EXACT ||
                            (desired == TIMERD_DESIRED_SCHEDULED && deadline != 0),
            .deadline_usec = deadline,
        };
        uint64_t generation = 0;
        bool created = false;
        int r = fx_apply(f, registry_reconcile(f->r, &f->now, &a, &generation, &created));

        if (ret_generation)
                *ret_generation = generation;
        if (ret_created)
                *ret_created = created;
        return r;
}

static void assert_arm(const struct fx *f, size_t i, enum timerd_clock clock, uint64_t deadline)
{
        const struct td_effect *e = fx_effect(f, i, TD_EFFECT_ARM);

        assert_int_equal(e->arm.clock, clock);
        assert_int_equal(e->arm.deadline_usec, deadline);
}

static void assert_disarm(const struct fx *f, size_t i, enum timerd_clock clock)
{
        assert_int_equal(fx_effect(f, i, TD_EFFECT_DISARM)->arm.clock, clock);
}

static struct registry_stats stats(const struct fx *f)
{
        struct registry_stats s;

        registry_get_stats(f->r, &s);
        return s;
}

static struct td_dispatch take(struct fx *f, uint32_t owner, const char *const *names,
                               size_t n_names, uint64_t session, int expect)
{
        struct td_dispatch d = {};

        assert_int_equal(registry_take_pending(f->r, &f->now, owner, TIMERD_DELIVERY_NOTIFY, names,
                                               n_names, session, &d),
                         expect);
        assert_int_equal(registry_check(f->r), 0);
        return d;
}

static void test_name_valid(void **state)
{
        char name[TIMERD_NAME_MAX + 2];

        (void)state;
        assert_true(registry_name_valid("a"));
        assert_true(registry_name_valid("backup.daily:0@host-1_x"));
        assert_false(registry_name_valid(""));
        assert_false(registry_name_valid(NULL));
        assert_false(registry_name_valid("with space"));
        assert_false(registry_name_valid("a/b"));
        assert_false(registry_name_valid("caf\xc3\xa9"));
        memset(name, 'n', TIMERD_NAME_MAX);
        name[TIMERD_NAME_MAX] = '\0';
        assert_true(registry_name_valid(name));
        name[TIMERD_NAME_MAX] = 'n';
        name[TIMERD_NAME_MAX + 1] = '\0';
        assert_false(registry_name_valid(name));
}

static void test_new_rejects_bad_config(void **state)
{
        struct registry_config c = {.first_generation = 0, .first_handle_generation = 1};
        struct registry *r = NULL;

        (void)state;
        assert_int_equal(registry_new(NULL, &r), -EINVAL);
        assert_int_equal(registry_new(&c, &r), -EINVAL);
        c = (struct registry_config){.first_generation = 1, .first_handle_generation = 0};
        assert_int_equal(registry_new(&c, &r), -EINVAL);
        assert_null(r);
        registry_free(NULL);
}

static void test_register_rejects_bad_input(void **state)
{
        struct td_declaration d;
        struct fx *f = *state;

        assert_int_equal(fx_register(f, "bad name", fx_decl(TIMERD_POLICY_ONCE, 0), NULL),
                         -TIMERD_E_INVALID_NAME);
        assert_int_equal(fx_register_full(f, FX_UID, 0, "a", fx_decl(TIMERD_POLICY_ONCE, 0), false,
                                          0, false, NULL),
                         -EINVAL);
        assert_int_equal(fx_register(f, "a", fx_decl(TIMERD_POLICY_MAX, 1), NULL),
                         -TIMERD_E_INVALID_PARAMETER);
        assert_int_equal(fx_register(f, "a", fx_decl(TIMERD_POLICY_INVALID, 1), NULL),
                         -TIMERD_E_INVALID_PARAMETER);
        d = decl_at(TIMERD_POLICY_INTERVAL, 1, TIMERD_CLOCK_MAX, 0);
        assert_int_equal(fx_register(f, "a", d, NULL), -TIMERD_E_INVALID_PARAMETER);
        d = decl_at(TIMERD_POLICY_INTERVAL, 1, TIMERD_CLOCK_INVALID, 0);
        assert_int_equal(fx_register(f, "a", d, NULL), -TIMERD_E_INVALID_PARAMETER);
        d = fx_decl(TIMERD_POLICY_INTERVAL, 1);
        d.lifetime = TIMERD_LIFETIME_MAX;
        assert_int_equal(fx_register(f, "a", d, NULL), -TIMERD_E_INVALID_PARAMETER);
        d = fx_decl(TIMERD_POLICY_INTERVAL, 1);
        d.delivery = TIMERD_DELIVERY_INVALID;
        assert_int_equal(fx_register(f, "a", d, NULL), -TIMERD_E_INVALID_PARAMETER);
        d.delivery = TIMERD_DELIVERY_SIGNAL; /* needs a signal number */
        assert_int_equal(fx_register(f, "a", d, NULL), -TIMERD_E_INVALID_PARAMETER);
        d.signo = TD_SIGNO_MAX + 1; /* one the journal can keep */
        assert_int_equal(fx_register(f, "a", d, NULL), -TIMERD_E_INVALID_PARAMETER);
        d.delivery = TIMERD_DELIVERY_NOTIFY; /* takes none */
        d.signo = 10;
        assert_int_equal(fx_register(f, "a", d, NULL), -TIMERD_E_INVALID_PARAMETER);
        d.signo = 0;
        assert_int_equal(fx_register(f, "a", fx_decl(TIMERD_POLICY_ONCE, 5), NULL),
                         -TIMERD_E_INVALID_SCHEDULE);
        assert_int_equal(f->last.schedule_problem, TD_SCHEDULE_CADENCE_ON_ONCE);
        for (enum timerd_policy p = TIMERD_POLICY_AFTER_COMPLETION; p < TIMERD_POLICY_CALENDAR;
             p++) {
                assert_int_equal(fx_register(f, "a", fx_decl(p, 0), NULL),
                                 -TIMERD_E_INVALID_SCHEDULE);
                assert_int_equal(f->last.schedule_problem, TD_SCHEDULE_CADENCE_MISSING);
        }
        /* A calendar timer without its schedule. */
        assert_int_equal(fx_register(f, "a", fx_decl(TIMERD_POLICY_CALENDAR, 0), NULL),
                         -TIMERD_E_INVALID_SCHEDULE);
        assert_int_equal(f->last.schedule_problem, TD_SCHEDULE_CALENDAR_MISSING);
        /* now + cadence does not fit. */
        assert_int_equal(fx_register(f, "a", fx_decl(TIMERD_POLICY_INTERVAL, UINT64_MAX), NULL),
                         -TIMERD_E_OVERFLOW);
        assert_int_equal(stats(f).timers, 0);

        /* The registry accepts alarm clocks; arming them is the runtime's business. */
        d = decl_at(TIMERD_POLICY_INTERVAL, 10, TIMERD_CLOCK_BOOTTIME_ALARM, 0);
        assert_int_equal(fx_register(f, "a", d, NULL), 0);
        assert_int_equal(f->last.n_effects, 1);
        assert_arm(f, 0, TIMERD_CLOCK_BOOTTIME_ALARM, 1010);
}

static void test_register_generations_and_arms(void **state)
{
        struct registry_config c = {.first_generation = 40, .first_handle_generation = 70};
        struct td_snapshot s;
        uint64_t g;
        struct fx f;

        (void)state;
        fx_init(&f, &c);
        assert_int_equal(fx_register(&f, "a", fx_decl(TIMERD_POLICY_INTERVAL, 100), &g), 0);
        assert_int_equal(g, 40);
        assert_int_equal(f.last.n_effects, 1);
        assert_arm(&f, 0, MONO, 1100);
        assert_int_equal(f.last.effects[0].arm.generation, 70);

        /* A later deadline does not move the clock's arm time. */
        assert_int_equal(fx_register(&f, "b", fx_decl(TIMERD_POLICY_INTERVAL, 200), &g), 0);
        assert_int_equal(g, 41);
        assert_int_equal(f.last.n_effects, 0);

        assert_int_equal(fx_register_at(&f, "c", fx_decl(TIMERD_POLICY_ONCE, 0), 500, &g), 0);
        assert_int_equal(g, 42);
        assert_arm(&f, 0, MONO, 500);
        assert_int_equal(f.last.effects[0].arm.generation, 71);
        s = fx_get(&f, "c");
        assert_int_equal(s.state, TIMERD_STATE_SCHEDULED);
        assert_true(s.has_deadline);
        assert_int_equal(s.next_deadline_usec, 500);
        assert_int_equal(s.session, FX_SESSION);

        /* A once timer without a start stays inactive. */
        assert_int_equal(fx_register(&f, "d", fx_decl(TIMERD_POLICY_ONCE, 0), &g), 0);
        assert_int_equal(f.last.n_effects, 0);
        s = fx_get(&f, "d");
        assert_int_equal(s.state, TIMERD_STATE_INACTIVE);
        assert_false(s.has_deadline);
        assert_int_equal(s.run, 0);
        assert_int_equal(s.last_outcome, TIMERD_OUTCOME_NONE);
        fx_done(&f);
}

static void test_already_registered_and_replace(void **state)
{
        struct td_dispatch d;
        struct td_snapshot s;
        uint64_t g1, g2, g3;
        struct fx *f = *state;

        assert_int_equal(fx_register(f, "a", fx_decl(TIMERD_POLICY_AFTER_COMPLETION, 100), &g1), 0);
        assert_int_equal(fx_register(f, "a", fx_decl(TIMERD_POLICY_ONCE, 0), NULL),
                         -TIMERD_E_ALREADY_REGISTERED);
        assert_int_equal(fx_get(f, "a").generation, g1);

        /* Replace onto another clock: the old clock is disarmed, the new one armed. */
        assert_int_equal(
            fx_register_full(f, FX_UID, FX_SESSION, "a",
                             decl_at(TIMERD_POLICY_INTERVAL, 50, TIMERD_CLOCK_BOOTTIME, 0), true,
                             2000, true, &g2),
            0);
        assert_true(g2 > g1);
        assert_int_equal(f->last.n_effects, 2);
        assert_disarm(f, 0, MONO);
        assert_arm(f, 1, TIMERD_CLOCK_BOOTTIME, 2000);
        assert_int_equal(fx_cancel(f, fx_claim("a", g1)), -TIMERD_E_REGISTRATION_EXPIRED);
        s = fx_get(f, "a");
        assert_int_equal(s.declaration.policy, TIMERD_POLICY_INTERVAL);
        assert_int_equal(s.declaration.clock, TIMERD_CLOCK_BOOTTIME);

        /* Replacing during a run expires its token and its pending firing; counters restart. */
        assert_int_equal(fx_advance(f, TIMERD_CLOCK_BOOTTIME, 2000), 1);
        d = *fx_dispatch(f, 0);
        assert_int_equal(stats(f).pending, 1);
        assert_int_equal(
            fx_register_full(f, FX_UID, FX_SESSION, "a",
                             decl_at(TIMERD_POLICY_INTERVAL, 50, TIMERD_CLOCK_BOOTTIME, 0), false,
                             0, true, &g3),
            0);
        assert_true(g3 > g2);
        s = fx_get(f, "a");
        assert_int_equal(s.run, 0);
        assert_false(s.run_active);
        assert_false(s.pending);
        assert_false(s.has_last_start);
        assert_int_equal(s.state, TIMERD_STATE_SCHEDULED);
        assert_int_equal(s.next_deadline_usec, 2050);
        assert_int_equal(stats(f).pending, 0);
        assert_int_equal(
            fx_complete(f, fx_token(&d), TIMERD_OUTCOME_SUCCESS, TIMERD_DIRECTIVE_CONTINUE, 0),
            -TIMERD_E_REGISTRATION_EXPIRED);
}

static void test_replace_moves_transient_session(void **state)
{
        struct td_snapshot s;
        struct fx *f = *state;

        assert_int_equal(fx_register_full(f, FX_UID, 1, "a", fx_decl(TIMERD_POLICY_ONCE, 0), false,
                                          0, false, NULL),
                         0);
        assert_int_equal(fx_register_full(f, FX_UID, 2, "a", fx_decl(TIMERD_POLICY_ONCE, 0), false,
                                          0, true, NULL),
                         0);
        assert_int_equal(fx_apply(f, registry_session_closed(f->r, &f->now, 1)), 0);
        assert_int_equal(registry_get(f->r, FX_UID, "a", &s), 0);
        assert_int_equal(s.session, 2);
        assert_int_equal(fx_apply(f, registry_session_closed(f->r, &f->now, 2)), 0);
        assert_int_equal(registry_get(f->r, FX_UID, "a", &s), -TIMERD_E_NOT_FOUND);
}

static void test_once_life(void **state)
{
        struct td_dispatch d;
        struct td_snapshot s;
        uint64_t g;
        struct fx *f = *state;

        assert_int_equal(fx_register(f, "once", fx_decl(TIMERD_POLICY_ONCE, 0), &g), 0);
        assert_int_equal(fx_schedule(f, fx_claim("once", g), 5000), 0);
        assert_arm(f, 0, MONO, 5000);
        assert_int_equal(fx_advance(f, MONO, 4999), 0);
        assert_int_equal(fx_advance(f, MONO, 5000), 1);
        /* Nothing left on the clock: the spent kernel timer is disarmed, ahead of the dispatch. */
        assert_int_equal(f->last.n_effects, 2);
        assert_disarm(f, 0, MONO);
        d = *fx_dispatch(f, 0);
        assert_string_equal(d.name, "once");
        assert_int_equal(d.owner, FX_UID);
        assert_int_equal(d.generation, g);
        assert_int_equal(d.run, 1);
        assert_int_equal(d.clock, MONO);
        assert_int_equal(d.delivery, TIMERD_DELIVERY_NOTIFY);
        assert_int_equal(d.deadline_usec, 5000);
        assert_int_equal(d.fired_usec, 5000);
        assert_int_equal(d.due_usec, 5000);
        assert_int_equal(d.overruns, 0);
        s = fx_get(f, "once");
        assert_int_equal(s.state, TIMERD_STATE_RUNNING);
        assert_true(s.run_active);
        assert_true(s.pending);
        assert_true(s.has_last_start);
        assert_int_equal(s.last_start_usec, 5000);
        assert_false(s.has_deadline);

        fx_set_now(f, MONO, 5300);
        assert_int_equal(
            fx_complete(f, fx_token(&d), TIMERD_OUTCOME_SUCCESS, TIMERD_DIRECTIVE_CONTINUE, 0), 0);
        assert_int_equal(f->last.n_effects, 0);
        s = fx_get(f, "once");
        assert_int_equal(s.state, TIMERD_STATE_INACTIVE);
        assert_int_equal(s.runs, 1);
        assert_int_equal(s.run, 1);
        assert_false(s.run_active);
        assert_false(s.pending);
        assert_int_equal(s.last_outcome, TIMERD_OUTCOME_SUCCESS);
        assert_int_equal(s.last_duration_usec, 300);
        assert_int_equal(s.total_duration_usec, 300);
        assert_true(s.has_last_finish);
        assert_int_equal(s.last_finish_usec, 5300);
        assert_int_equal(
            fx_complete(f, fx_token(&d), TIMERD_OUTCOME_SUCCESS, TIMERD_DIRECTIVE_CONTINUE, 0),
            -TIMERD_E_REGISTRATION_EXPIRED);
}

static void test_once_schedule_during_run(void **state)
{
        struct td_dispatch d;
        struct td_snapshot s;
        struct fx *f = *state;

        assert_int_equal(fx_register_at(f, "o", fx_decl(TIMERD_POLICY_ONCE, 0), 2000, NULL), 0);
        assert_int_equal(fx_advance(f, MONO, 2000), 1);
        d = *fx_dispatch(f, 0);
        /* The token is a delegated claim; the deadline waits for the run to complete. */
        assert_int_equal(fx_schedule(f, fx_token(&d), 9000), 0);
        assert_int_equal(f->last.n_effects, 0);
        s = fx_get(f, "o");
        assert_int_equal(s.state, TIMERD_STATE_RUNNING);
        assert_true(s.has_deadline);
        assert_int_equal(s.next_deadline_usec, 9000);
        assert_int_equal(
            fx_complete(f, fx_token(&d), TIMERD_OUTCOME_SUCCESS, TIMERD_DIRECTIVE_CONTINUE, 0), 0);
        assert_arm(f, 0, MONO, 9000);
        assert_int_equal(fx_get(f, "o").state, TIMERD_STATE_SCHEDULED);

        /* Stop wins over a deadline set during the run. */
        assert_int_equal(fx_advance(f, MONO, 9000), 1);
        d = *fx_dispatch(f, 0);
        assert_int_equal(d.run, 2);
        assert_int_equal(fx_schedule(f, fx_token(&d), 12000), 0);
        assert_int_equal(
            fx_complete(f, fx_token(&d), TIMERD_OUTCOME_SUCCESS, TIMERD_DIRECTIVE_STOP, 0), 0);
        assert_int_equal(f->last.n_effects, 0);
        s = fx_get(f, "o");
        assert_int_equal(s.state, TIMERD_STATE_INACTIVE);
        assert_false(s.has_deadline);
}

static void test_after_completion_life(void **state)
{
        struct td_dispatch d;
        struct td_snapshot s;
        struct fx *f = *state;

        assert_int_equal(fx_register(f, "ac", fx_decl(TIMERD_POLICY_AFTER_COMPLETION, 1000), NULL),
                         0);
        assert_arm(f, 0, MONO, 2000);
        assert_int_equal(fx_advance(f, MONO, 2000), 1);
        d = *fx_dispatch(f, 0);
        /* Off the queue while it runs: runs never overlap. */
        s = fx_get(f, "ac");
        assert_false(s.has_deadline);
        assert_int_equal(stats(f).scheduled, 0);
        assert_int_equal(stats(f).running, 1);
        assert_int_equal(fx_advance(f, MONO, 5000), 0);

        fx_set_now(f, MONO, 2600);
        assert_int_equal(
            fx_complete(f, fx_token(&d), TIMERD_OUTCOME_SUCCESS, TIMERD_DIRECTIVE_CONTINUE, 250),
            0);
        assert_arm(f, 0, MONO, 3600);
        s = fx_get(f, "ac");
        assert_int_equal(s.last_duration_usec, 250);
        assert_int_equal(s.total_duration_usec, 250);

        for (int i = 0; i < 2; i++) {
                uint64_t t = 3600 + 1100 * (uint64_t)i;

                assert_int_equal(fx_advance(f, MONO, t), 1);
                d = *fx_dispatch(f, 0);
                fx_set_now(f, MONO, t + 100);
                assert_int_equal(fx_complete(f, fx_token(&d), TIMERD_OUTCOME_EXPECTED_FAILURE,
                                             TIMERD_DIRECTIVE_CONTINUE, 0),
                                 0);
                assert_arm(f, 0, MONO, t + 1100);
                assert_int_equal(fx_get(f, "ac").consecutive_expected_failures, (uint64_t)i + 1);
        }
        assert_int_equal(fx_advance(f, MONO, 5800), 1);
        d = *fx_dispatch(f, 0);
        assert_int_equal(d.run, 4);
        assert_int_equal(
            fx_complete(f, fx_token(&d), TIMERD_OUTCOME_SUCCESS, TIMERD_DIRECTIVE_CONTINUE, 0), 0);
        s = fx_get(f, "ac");
        assert_int_equal(s.consecutive_expected_failures, 0);
        assert_int_equal(s.runs, 4);
        assert_int_equal(s.total_duration_usec, 250 + 100 + 100);
        assert_int_equal(s.last_outcome, TIMERD_OUTCOME_SUCCESS);
}

static void test_watchdog_prearmed_and_kick(void **state)
{
        struct td_dispatch d;
        uint64_t g, next;
        struct fx *f = *state;

        assert_int_equal(fx_register(f, "wd", fx_decl(TIMERD_POLICY_WATCHDOG, 100), &g), 0);
        assert_arm(f, 0, MONO, 1100);
        assert_int_equal(fx_advance(f, MONO, 1100), 1);
        /* The successor is armed before the run is dispatched. */
        assert_int_equal(f->last.n_effects, 2);
        assert_arm(f, 0, MONO, 1200);
        d = *fx_dispatch(f, 0);
        assert_int_equal(registry_deliver(f->r, &d, 3), 0);
        assert_int_equal(fx_effect(f, 1, TD_EFFECT_DISPATCH)->dispatch.run, 1);
        assert_int_equal(fx_get(f, "wd").state, TIMERD_STATE_RUNNING);
        assert_int_equal(fx_get(f, "wd").next_deadline_usec, 1200);

        fx_set_now(f, MONO, 1150);
        assert_int_equal(fx_kick(f, fx_claim("wd", g), &next), 0);
        assert_int_equal(next, 1250);
        assert_arm(f, 0, MONO, 1250);
        fx_set_now(f, MONO, 1180);
        assert_int_equal(fx_kick(f, fx_token(&d), &next), 0);
        assert_int_equal(next, 1280);

        /* A hung worker: the watchdog fires again, counts an overrun, dispatches nothing, and is
         * held: no kernel timer until the run ends. */
        assert_int_equal(fx_advance(f, MONO, 1280), 0);
        assert_int_equal(f->last.n_effects, 1);
        assert_disarm(f, 0, MONO);
        assert_int_equal(fx_get(f, "wd").overruns, 1);
        assert_int_equal(fx_get(f, "wd").next_deadline_usec, 1380);
        assert_int_equal(stats(f).pending, 0);
        /* A Kick while held moves the held deadline, still without a wake-up. */
        fx_set_now(f, MONO, 1300);
        assert_int_equal(fx_kick(f, fx_claim("wd", g), &next), 0);
        assert_int_equal(next, 1400);
        assert_int_equal(f->last.n_effects, 0);

        /* Ended after 1400 and 1500 passed: both are overruns; the next firing is at 1600. */
        fx_set_now(f, MONO, 1550);
        assert_int_equal(
            fx_complete(f, fx_token(&d), TIMERD_OUTCOME_SUCCESS, TIMERD_DIRECTIVE_CONTINUE, 0), 0);
        assert_arm(f, 0, MONO, 1600);
        assert_int_equal(fx_get(f, "wd").state, TIMERD_STATE_SCHEDULED);
        assert_int_equal(fx_get(f, "wd").overruns, 3);
        assert_int_equal(fx_advance(f, MONO, 1600), 1);
        assert_arm(f, 0, MONO, 1700);
        assert_int_equal(fx_dispatch(f, 0)->run, 2);
        assert_int_equal(fx_dispatch(f, 0)->overruns, 3);

        /* Kick revives a watchdog that was cancelled. */
        assert_int_equal(fx_cancel(f, fx_claim("wd", g)), 0);
        assert_disarm(f, 0, MONO);
        assert_int_equal(fx_kick(f, fx_claim("wd", g), &next), 0);
        assert_int_equal(next, 1700);
        assert_arm(f, 0, MONO, 1700);
}

static void test_interval_overruns_after_jump(void **state)
{
        struct td_dispatch d;
        struct fx *f = *state;

        fx_set_now(f, MONO, 0);
        assert_int_equal(fx_register_at(f, "iv", fx_decl(TIMERD_POLICY_INTERVAL, 10), 100, NULL),
                         0);
        /* Jump over 100, 110, 120, 130: one dispatch, 3 missed periods, next 140. */
        assert_int_equal(fx_advance(f, MONO, 135), 1);
        assert_arm(f, 0, MONO, 140);
        d = *fx_dispatch(f, 0);
        assert_int_equal(d.deadline_usec, 100);
        assert_int_equal(d.fired_usec, 135);
        assert_int_equal(d.overruns, 3);
        assert_int_equal(fx_get(f, "iv").next_deadline_usec, 140);
        assert_int_equal(registry_deliver(f->r, &d, 3), 0);

        /* Due again while the run is active: an overrun, no second run, held off the queue. */
        assert_int_equal(fx_advance(f, MONO, 140), 0);
        assert_disarm(f, 0, MONO);
        assert_int_equal(fx_get(f, "iv").overruns, 4);
        assert_int_equal(
            fx_complete(f, fx_token(&d), TIMERD_OUTCOME_SUCCESS, TIMERD_DIRECTIVE_CONTINUE, 0), 0);
        assert_arm(f, 0, MONO, 150);
        assert_int_equal(fx_advance(f, MONO, 150), 1);
        d = *fx_dispatch(f, 0);
        assert_int_equal(d.run, 2);
        assert_int_equal(d.deadline_usec, 150);
        /* Per firing: the one period missed since the first firing; the total stays in Get. */
        assert_int_equal(d.overruns, 1);
        assert_int_equal(fx_get(f, "iv").overruns, 4);
        assert_int_equal(stats(f).overruns, 4);
        assert_int_equal(stats(f).firings, 2);
}

static void test_firing_during_run_never_queues(void **state)
{
        struct td_dispatch d;
        struct fx *f = *state;

        assert_int_equal(fx_register(f, "iv", fx_decl(TIMERD_POLICY_INTERVAL, 10), NULL), 0);
        assert_int_equal(fx_advance(f, MONO, 1010), 1);
        /* The first period due while pending is counted and holds the timer: no kernel timer
         * armed any more, so a pending firing costs no wake-ups however long nobody takes it. */
        assert_int_equal(fx_advance(f, MONO, 1020), 0);
        assert_disarm(f, 0, MONO);
        assert_false(f->kernel[MONO].armed);
        for (uint64_t t = 1030; t <= 1060; t += 10)
                assert_int_equal(fx_advance(f, MONO, t), 0);
        assert_int_equal(stats(f).pending, 1);
        /* A reader sees the periods that passed, counted arithmetically. */
        assert_int_equal(fx_get(f, "iv").overruns, 1);
        struct td_snapshot seen = fx_get(f, "iv");
        registry_snapshot_at(f->r, &seen, &f->now);
        assert_int_equal(seen.overruns, 5);
        assert_int_equal(seen.next_deadline_usec, 1070);
        d = take(f, FX_UID, NULL, 0, 3, 1);
        assert_int_equal(d.run, 1);
        assert_int_equal(d.overruns, 5);
        assert_int_equal(fx_get(f, "iv").overruns, 5);
        take(f, FX_UID, NULL, 0, 3, 0);
}

/* A shorter cadence than the configured minimum is refused wherever a cadence is given. */
static void test_min_cadence(void **state)
{
        const struct registry_config config = {
            .first_generation = 1, .first_handle_generation = 1, .min_cadence_usec = 1000};
        struct td_reschedule_result rr;
        struct td_handle claim;
        uint64_t g;
        struct fx f;

        (void)state;
        fx_init(&f, &config);
        assert_int_equal(fx_register(&f, "fast", fx_decl(TIMERD_POLICY_INTERVAL, 999), NULL),
                         -TIMERD_E_INVALID_SCHEDULE);
        assert_int_equal(f.last.schedule_problem, TD_SCHEDULE_CADENCE_BELOW_MINIMUM);
        assert_int_equal(fx_register(&f, "wd", fx_decl(TIMERD_POLICY_WATCHDOG, 1), NULL),
                         -TIMERD_E_INVALID_SCHEDULE);
        assert_int_equal(f.last.schedule_problem, TD_SCHEDULE_CADENCE_BELOW_MINIMUM);
        assert_int_equal(stats(&f).timers, 0);
        assert_int_equal(fx_register(&f, "ok", fx_decl(TIMERD_POLICY_INTERVAL, 1000), &g), 0);
        assert_int_equal(fx_register(&f, "once", fx_decl(TIMERD_POLICY_ONCE, 0), NULL), 0);
        claim = fx_claim("ok", g);
        assert_int_equal(
            fx_apply(&f, registry_reschedule(f.r, &f.now, &claim, true, 5000, true, 10, &rr)),
            -TIMERD_E_INVALID_SCHEDULE);
        assert_int_equal(fx_get(&f, "ok").declaration.cadence_usec, 1000);
        fx_done(&f);
}

/* Pending firings of every recurring policy: after one held firing each, the clock stays disarmed
 * however far it moves; each firing, taken later, carries the periods it missed. */
static void test_pending_costs_no_wakeups(void **state)
{
        static const enum timerd_policy policies[] = {TIMERD_POLICY_INTERVAL,
                                                      TIMERD_POLICY_WATCHDOG};
        struct td_dispatch d;
        struct fx *f = *state;

        assert_int_equal(fx_register(f, "iv", fx_decl(policies[0], 10), NULL), 0);
        assert_int_equal(fx_register(f, "wd", fx_decl(policies[1], 10), NULL), 0);
        assert_int_equal(fx_advance(f, MONO, 1010), 2);
        assert_int_equal(fx_advance(f, MONO, 1020), 0);
        assert_false(f->kernel[MONO].armed);
        assert_int_equal(fx_advance(f, MONO, 1000000), 0);
        assert_int_equal(f->last.n_effects, 0);
        d = take(f, FX_UID, NULL, 0, 3, 1);
        assert_string_equal(d.name, "iv");
        assert_int_equal(d.overruns, (1000000 - 1020) / 10 + 1);
        /* The watchdog, held too, is still counted as of now when its turn comes. */
        fx_set_now(f, MONO, 2000000);
        d = take(f, FX_UID, NULL, 0, 3, 1);
        assert_string_equal(d.name, "wd");
        assert_int_equal(d.overruns, (2000000 - 1020) / 10 + 1);
        assert_int_equal(fx_get(f, "wd").next_deadline_usec, 2000010);
        /* Taken, not completed: still no wake-up. */
        assert_int_equal(fx_advance(f, MONO, 3000000), 0);
        assert_false(f->kernel[MONO].armed);
}

static void test_interval_schedule_during_run(void **state)
{
        struct td_dispatch d;
        struct fx *f = *state;

        assert_int_equal(fx_register(f, "iv", fx_decl(TIMERD_POLICY_INTERVAL, 10), NULL), 0);
        assert_int_equal(fx_advance(f, MONO, 1010), 1);
        d = *fx_dispatch(f, 0);
        /* An interval stays queued during its run: the new deadline is armed at once. */
        assert_int_equal(fx_schedule(f, fx_token(&d), 5000), 0);
        assert_arm(f, 0, MONO, 5000);
        assert_int_equal(fx_get(f, "iv").state, TIMERD_STATE_RUNNING);
}

static void test_wrong_policy(void **state)
{
        struct td_reschedule_result rr;
        uint64_t go, gi, gw;
        struct fx *f = *state;

        assert_int_equal(fx_register(f, "o", fx_decl(TIMERD_POLICY_ONCE, 0), &go), 0);
        assert_int_equal(fx_register(f, "i", fx_decl(TIMERD_POLICY_INTERVAL, 10), &gi), 0);
        assert_int_equal(fx_register(f, "w", fx_decl(TIMERD_POLICY_WATCHDOG, 10), &gw), 0);
        assert_int_equal(fx_kick(f, fx_claim("o", go), NULL), -TIMERD_E_WRONG_POLICY);
        assert_int_equal(fx_kick(f, fx_claim("i", gi), NULL), -TIMERD_E_WRONG_POLICY);
        assert_int_equal(fx_schedule(f, fx_claim("w", gw), 5000), -TIMERD_E_WRONG_POLICY);
        assert_int_equal(reschedule(f, fx_claim("w", gw), true, 5000, false, 0, &rr),
                         -TIMERD_E_WRONG_POLICY);
        assert_int_equal(reconcile(f, "w", fx_decl(TIMERD_POLICY_WATCHDOG, 10),
                                   TIMERD_DESIRED_EXACT, 5000, NULL, NULL),
                         -TIMERD_E_WRONG_POLICY);
        assert_int_equal(fx_get(f, "w").next_deadline_usec, 1010);

        /* A watchdog may take a new cadence (which disarms it, setitimer-style). */
        assert_int_equal(reschedule(f, fx_claim("w", gw), false, 0, true, 500, &rr), 0);
        assert_int_equal(rr.previous_cadence_usec, 10);
        assert_int_equal(rr.previous_remaining_usec, 10);
        assert_int_equal(fx_get(f, "w").declaration.cadence_usec, 10);
        assert_int_equal(fx_get(f, "w").live_cadence_usec, 500);
        assert_int_equal(fx_get(f, "w").state, TIMERD_STATE_INACTIVE);
}

/* Issue 15 item 3: Reschedule's cadence changes the live schedule, not the declaration, so the
 * owner's Reconcile with its own declaration still matches, and puts the declared cadence back. */
static void test_reschedule_cadence_is_live(void **state)
{
        struct td_reschedule_result rr;
        const struct td_dispatch *d;
        uint64_t g, g2;
        bool created;
        struct fx *f = *state;

        fx_set_now(f, MONO, 1000);
        assert_int_equal(fx_register_at(f, "i", fx_decl(TIMERD_POLICY_INTERVAL, 100), 1100, &g), 0);
        assert_int_equal(reschedule(f, fx_claim("i", g), true, 1200, true, 40, &rr), 0);
        assert_int_equal(rr.previous_cadence_usec, 100);
        assert_int_equal(fx_get(f, "i").declaration.cadence_usec, 100);
        assert_int_equal(fx_get(f, "i").live_cadence_usec, 40);

        /* The schedule follows the live cadence. */
        assert_int_equal(fx_advance(f, MONO, 1200), 1);
        d = fx_dispatch(f, 0);
        assert_int_equal(
            fx_complete(f, fx_token(d), TIMERD_OUTCOME_SUCCESS, TIMERD_DIRECTIVE_CONTINUE, 0), 0);
        assert_int_equal(fx_get(f, "i").next_deadline_usec, 1240);

        /* The rescheduled cadence is no declaration: Reconcile with it conflicts... */
        assert_int_equal(reconcile(f, "i", fx_decl(TIMERD_POLICY_INTERVAL, 40),
                                   TIMERD_DESIRED_SCHEDULED, 0, NULL, NULL),
                         -TIMERD_E_RECONCILIATION_CONFLICT);
        assert_int_equal(fx_get(f, "i").live_cadence_usec, 40);
        /* ...and the owner's own declaration matches: same claim, the wake-up kept, the declared
         * cadence back for the periods after it. */
        assert_int_equal(reconcile(f, "i", fx_decl(TIMERD_POLICY_INTERVAL, 100),
                                   TIMERD_DESIRED_SCHEDULED, 0, &g2, &created),
                         0);
        assert_int_equal(g2, g);
        assert_false(created);
        assert_int_equal(fx_get(f, "i").next_deadline_usec, 1240);
        assert_int_equal(fx_get(f, "i").live_cadence_usec, 100);
        assert_int_equal(fx_advance(f, MONO, 1240), 1);
        d = fx_dispatch(f, 0);
        assert_int_equal(
            fx_complete(f, fx_token(d), TIMERD_OUTCOME_SUCCESS, TIMERD_DIRECTIVE_CONTINUE, 0), 0);
        assert_int_equal(fx_get(f, "i").next_deadline_usec, 1340);

        /* Rescheduling to the declared cadence is no live cadence at all; a replacing Register
         * starts from the declaration. */
        assert_int_equal(reschedule(f, fx_claim("i", g), true, 2000, true, 30, &rr), 0);
        assert_int_equal(reschedule(f, fx_claim("i", g), true, 2000, true, 100, &rr), 0);
        assert_int_equal(rr.previous_cadence_usec, 30);
        assert_int_equal(fx_get(f, "i").live_cadence_usec, 100);
        assert_int_equal(reschedule(f, fx_claim("i", g), true, 2000, true, 30, &rr), 0);
        assert_int_equal(fx_register_full(f, FX_UID, FX_SESSION, "i",
                                          fx_decl(TIMERD_POLICY_INTERVAL, 100), true, 3000, true,
                                          &g2),
                         0);
        assert_int_equal(fx_get(f, "i").live_cadence_usec, 100);
}

/* Issue 15 item 9: the owner's Reconcile from another connection re-pins a retained signal timer
 * to it; root reconciling for the owner, and other deliveries, keep the registering session. */
static void test_reconcile_repins_signal_timers(void **state)
{
        struct td_declaration sig = fx_decl(TIMERD_POLICY_INTERVAL, 100),
                              notify = fx_decl(TIMERD_POLICY_INTERVAL, 100);
        struct td_reconcile_args a = {
            .caller = {.uid = FX_UID, .session = 9},
            .desired = TIMERD_DESIRED_SCHEDULED,
        };
        uint64_t g;
        bool created;
        struct fx *f = *state;

        sig.lifetime = notify.lifetime = TIMERD_LIFETIME_RETAINED;
        sig.delivery = TIMERD_DELIVERY_SIGNAL;
        sig.signo = 10;
        assert_int_equal(fx_register(f, "sig", sig, NULL), 0);
        assert_int_equal(fx_register(f, "note", notify, NULL), 0);

        a.name = "sig";
        a.declaration = sig;
        a.caller_is_owner = false;
        assert_int_equal(fx_apply(f, registry_reconcile(f->r, &f->now, &a, &g, &created)), 0);
        assert_int_equal(fx_get(f, "sig").session, FX_SESSION);
        a.caller_is_owner = true;
        assert_int_equal(fx_apply(f, registry_reconcile(f->r, &f->now, &a, &g, &created)), 0);
        assert_int_equal(fx_get(f, "sig").session, 9);

        a.name = "note";
        a.declaration = notify;
        assert_int_equal(fx_apply(f, registry_reconcile(f->r, &f->now, &a, &g, &created)), 0);
        assert_int_equal(fx_get(f, "note").session, FX_SESSION);
}

/* Issue 15 item 6: a claim whose registration is gone is stale, not unknown. */
static void test_claim_after_unregister_expired(void **state)
{
        struct td_handle h;
        uint64_t g, g2;
        struct fx *f = *state;

        assert_int_equal(fx_register(f, "a", fx_decl(TIMERD_POLICY_ONCE, 0), &g), 0);
        assert_int_equal(fx_unregister(f, fx_claim("a", g)), 0);
        /* The owner's last timer is gone; its claim and a token of it are expired, not unknown. */
        assert_int_equal(fx_schedule(f, fx_claim("a", g), 5000), -TIMERD_E_REGISTRATION_EXPIRED);
        assert_int_equal(fx_unregister(f, fx_claim("a", g)), -TIMERD_E_REGISTRATION_EXPIRED);
        h = fx_claim("a", g);
        h.run = 1;
        assert_int_equal(fx_cancel(f, h), -TIMERD_E_REGISTRATION_EXPIRED);
        /* A new timer of the same name does not revive the old claim. */
        assert_int_equal(fx_register(f, "a", fx_decl(TIMERD_POLICY_ONCE, 0), &g2), 0);
        assert_true(g2 > g);
        assert_int_equal(fx_cancel(f, fx_claim("a", g)), -TIMERD_E_REGISTRATION_EXPIRED);
        assert_int_equal(fx_cancel(f, fx_claim("a", g2)), 0);
        /* Another owner was never given g: for it the name is simply unknown. */
        h = fx_claim("a", g);
        h.owner = FX_UID + 1;
        assert_int_equal(fx_schedule(f, h, 5000), -TIMERD_E_NOT_FOUND);
        /* A generation above the owner's last is one it was never given. */
        assert_int_equal(fx_cancel(f, fx_claim("b", g2 + 1)), -TIMERD_E_NOT_FOUND);
        assert_int_equal(registry_check(f->r), 0);
}

static void test_stale_claims_and_tokens(void **state)
{
        struct td_handle h;
        struct td_dispatch d;
        uint64_t g;
        struct fx *f = *state;

        assert_int_equal(fx_register(f, "a", fx_decl(TIMERD_POLICY_INTERVAL, 100), &g), 0);
        assert_int_equal(fx_schedule(f, fx_claim("a", g + 1), 5000),
                         -TIMERD_E_REGISTRATION_EXPIRED);
        assert_int_equal(fx_schedule(f, fx_claim("a", g - 1), 5000),
                         -TIMERD_E_REGISTRATION_EXPIRED);
        /* No timer "nope", and a generation never given to this owner: nothing to expire. */
        assert_int_equal(fx_schedule(f, fx_claim("nope", g + 1), 5000), -TIMERD_E_NOT_FOUND);
        assert_int_equal(fx_schedule(f, fx_claim("nope", 0), 5000), -TIMERD_E_NOT_FOUND);
        assert_int_equal(fx_schedule(f, fx_claim("bad name", g), 5000), -TIMERD_E_INVALID_NAME);
        h = fx_claim("a", g);
        h.owner = FX_UID + 1;
        assert_int_equal(fx_schedule(f, h, 5000), -TIMERD_E_NOT_FOUND);
        /* A token of a run that does not exist yet. */
        h = fx_claim("a", g);
        h.run = 1;
        assert_int_equal(fx_cancel(f, h), -TIMERD_E_REGISTRATION_EXPIRED);

        assert_int_equal(fx_advance(f, MONO, 1100), 1);
        d = *fx_dispatch(f, 0);
        h = fx_token(&d);
        h.run = 2;
        assert_int_equal(fx_cancel(f, h), -TIMERD_E_REGISTRATION_EXPIRED);
        assert_int_equal(
            fx_complete(f, fx_claim("a", g), TIMERD_OUTCOME_SUCCESS, TIMERD_DIRECTIVE_CONTINUE, 0),
            -TIMERD_E_NOT_RUNNING);
        assert_int_equal(
            fx_complete(f, fx_token(&d), TIMERD_OUTCOME_NONE, TIMERD_DIRECTIVE_CONTINUE, 0),
            -TIMERD_E_INVALID_PARAMETER);
        assert_int_equal(
            fx_complete(f, fx_token(&d), TIMERD_OUTCOME_MAX, TIMERD_DIRECTIVE_CONTINUE, 0),
            -TIMERD_E_INVALID_PARAMETER);
        assert_int_equal(
            fx_complete(f, fx_token(&d), TIMERD_OUTCOME_SUCCESS, TIMERD_DIRECTIVE_MAX, 0),
            -TIMERD_E_INVALID_PARAMETER);
        assert_int_equal(
            fx_complete(f, fx_token(&d), TIMERD_OUTCOME_SUCCESS, TIMERD_DIRECTIVE_INVALID, 0),
            -TIMERD_E_INVALID_PARAMETER);
        assert_true(fx_get(f, "a").run_active);
        assert_int_equal(fx_unregister(f, fx_token(&d)), -TIMERD_E_INVALID_PARAMETER);

        assert_int_equal(
            fx_complete(f, fx_token(&d), TIMERD_OUTCOME_SUCCESS, TIMERD_DIRECTIVE_CONTINUE, 0), 0);
        /* The token expired with its run. */
        assert_int_equal(fx_schedule(f, fx_token(&d), 5000), -TIMERD_E_REGISTRATION_EXPIRED);
        assert_int_equal(fx_cancel(f, fx_token(&d)), -TIMERD_E_REGISTRATION_EXPIRED);
        assert_int_equal(fx_kick(f, fx_token(&d), NULL), -TIMERD_E_REGISTRATION_EXPIRED);
        assert_int_equal(
            fx_complete(f, fx_token(&d), TIMERD_OUTCOME_SUCCESS, TIMERD_DIRECTIVE_CONTINUE, 0),
            -TIMERD_E_REGISTRATION_EXPIRED);

        assert_int_equal(fx_unregister(f, fx_claim("a", g)), 0);
        assert_disarm(f, 0, MONO);
        assert_int_equal(fx_schedule(f, fx_claim("a", g), 5000), -TIMERD_E_REGISTRATION_EXPIRED);
        /* d.name pointed into the removed timer: spell the token out. */
        h = fx_claim("a", g);
        h.run = 1;
        assert_int_equal(fx_complete(f, h, TIMERD_OUTCOME_SUCCESS, TIMERD_DIRECTIVE_CONTINUE, 0),
                         -TIMERD_E_REGISTRATION_EXPIRED);
        assert_int_equal(stats(f).timers, 0);
}

static void test_complete_outcomes_and_stop(void **state)
{
        struct td_dispatch d;
        struct td_snapshot s;
        uint64_t g;
        struct fx *f = *state;

        assert_int_equal(fx_register(f, "w", fx_decl(TIMERD_POLICY_WATCHDOG, 100), &g), 0);
        assert_int_equal(fx_advance(f, MONO, 1100), 1);
        d = *fx_dispatch(f, 0);
        assert_int_equal(fx_complete(f, fx_token(&d), TIMERD_OUTCOME_INVARIANT_FAILURE,
                                     TIMERD_DIRECTIVE_CONTINUE, 0),
                         0);
        assert_int_equal(f->last.n_effects, 1);
        assert_disarm(f, 0, MONO);
        s = fx_get(f, "w");
        assert_int_equal(s.state, TIMERD_STATE_FAILED);
        assert_int_equal(s.failure, TIMERD_FAILURE_INVARIANT);
        assert_false(s.has_deadline);
        assert_int_equal(s.last_outcome, TIMERD_OUTCOME_INVARIANT_FAILURE);
        assert_int_equal(stats(f).failed, 1);

        /* An explicit kick is a new schedule: it clears the failure. */
        assert_int_equal(fx_kick(f, fx_claim("w", g), NULL), 0);
        s = fx_get(f, "w");
        assert_int_equal(s.state, TIMERD_STATE_SCHEDULED);
        assert_int_equal(s.failure, TIMERD_FAILURE_NONE);

        assert_int_equal(fx_register(f, "i", fx_decl(TIMERD_POLICY_INTERVAL, 50), &g), 0);
        assert_int_equal(fx_advance(f, MONO, 1150), 1);
        d = *fx_dispatch(f, 0);
        assert_string_equal(d.name, "i");
        assert_int_equal(
            fx_complete(f, fx_token(&d), TIMERD_OUTCOME_EXPECTED_FAILURE, TIMERD_DIRECTIVE_STOP, 0),
            0);
        s = fx_get(f, "i");
        assert_int_equal(s.state, TIMERD_STATE_INACTIVE);
        assert_int_equal(s.consecutive_expected_failures, 1);
        assert_int_equal(s.failure, TIMERD_FAILURE_NONE);
}

static void test_cancel(void **state)
{
        struct td_dispatch d;
        uint64_t g;
        struct fx *f = *state;

        assert_int_equal(fx_register(f, "ac", fx_decl(TIMERD_POLICY_AFTER_COMPLETION, 100), &g), 0);
        assert_int_equal(fx_cancel(f, fx_claim("ac", g)), 0);
        assert_int_equal(f->last.n_effects, 1);
        assert_disarm(f, 0, MONO);
        assert_int_equal(fx_get(f, "ac").state, TIMERD_STATE_INACTIVE);
        assert_int_equal(fx_cancel(f, fx_claim("ac", g)), 0);
        assert_int_equal(f->last.n_effects, 0);

        /* Cancel during the run: the run stays valid but will not re-arm the timer. */
        assert_int_equal(fx_schedule(f, fx_claim("ac", g), 1500), 0);
        assert_int_equal(fx_advance(f, MONO, 1500), 1);
        d = *fx_dispatch(f, 0);
        assert_int_equal(fx_cancel(f, fx_token(&d)), 0);
        assert_true(fx_get(f, "ac").run_active);
        assert_int_equal(
            fx_complete(f, fx_token(&d), TIMERD_OUTCOME_SUCCESS, TIMERD_DIRECTIVE_CONTINUE, 0), 0);
        assert_int_equal(f->last.n_effects, 0);
        assert_int_equal(fx_get(f, "ac").state, TIMERD_STATE_INACTIVE);
}

static void test_reschedule(void **state)
{
        struct td_reschedule_result rr;
        struct td_dispatch d;
        uint64_t gi, go, ga;
        struct fx *f = *state;

        assert_int_equal(fx_register_at(f, "i", fx_decl(TIMERD_POLICY_INTERVAL, 100), 1500, &gi),
                         0);
        assert_int_equal(reschedule(f, fx_claim("i", gi), true, 2000, true, 50, &rr), 0);
        assert_int_equal(rr.previous_remaining_usec, 500);
        assert_int_equal(rr.previous_cadence_usec, 100);
        assert_arm(f, 0, MONO, 2000);
        assert_int_equal(fx_get(f, "i").declaration.cadence_usec, 100);
        assert_int_equal(fx_get(f, "i").live_cadence_usec, 50);

        assert_int_equal(reschedule(f, fx_claim("i", gi), false, 0, false, 0, &rr), 0);
        assert_int_equal(rr.previous_remaining_usec, 1000);
        assert_int_equal(rr.previous_cadence_usec, 50);
        assert_disarm(f, 0, MONO);
        assert_int_equal(fx_get(f, "i").state, TIMERD_STATE_INACTIVE);
        assert_int_equal(reschedule(f, fx_claim("i", gi), false, 0, false, 0, &rr), 0);
        assert_int_equal(rr.previous_remaining_usec, 0);

        /* A deadline already passed has nothing remaining. */
        assert_int_equal(reschedule(f, fx_claim("i", gi), true, 900, false, 0, &rr), 0);
        assert_int_equal(reschedule(f, fx_claim("i", gi), true, 4000, false, 0, &rr), 0);
        assert_int_equal(rr.previous_remaining_usec, 0);

        assert_int_equal(reschedule(f, fx_claim("i", gi), true, 4000, true, 0, &rr),
                         -TIMERD_E_INVALID_SCHEDULE);
        assert_int_equal(reschedule(f, fx_claim("i", gi + 9), true, 4000, false, 0, &rr),
                         -TIMERD_E_REGISTRATION_EXPIRED);
        assert_int_equal(fx_register(f, "o", fx_decl(TIMERD_POLICY_ONCE, 0), &go), 0);
        assert_int_equal(reschedule(f, fx_claim("o", go), true, 4000, true, 5, &rr),
                         -TIMERD_E_INVALID_SCHEDULE);
        assert_int_equal(reschedule(f, fx_claim("o", go), true, 4000, true, 0, &rr), 0);
        assert_int_equal(fx_get(f, "o").next_deadline_usec, 4000);

        /* During an after-completion run the remaining time is that of the deferred wake-up. */
        assert_int_equal(
            fx_register_at(f, "ac", fx_decl(TIMERD_POLICY_AFTER_COMPLETION, 10), 1200, &ga), 0);
        assert_int_equal(fx_advance(f, MONO, 1200), 1);
        d = *fx_dispatch(f, 0);
        assert_int_equal(reschedule(f, fx_token(&d), true, 1700, false, 0, &rr), 0);
        assert_int_equal(rr.previous_remaining_usec, 0);
        assert_int_equal(reschedule(f, fx_token(&d), true, 1900, false, 0, &rr), 0);
        assert_int_equal(rr.previous_remaining_usec, 500);
        assert_int_equal(
            fx_complete(f, fx_token(&d), TIMERD_OUTCOME_SUCCESS, TIMERD_DIRECTIVE_CONTINUE, 0), 0);
        assert_int_equal(fx_get(f, "ac").next_deadline_usec, 1900);
}

static void test_reconcile_create_reuse_conflict(void **state)
{
        struct td_declaration d = fx_decl(TIMERD_POLICY_AFTER_COMPLETION, 100), other;
        struct td_reconcile_args a;
        uint64_t g, g2;
        bool created;
        struct fx *f = *state;

        d.lifetime = TIMERD_LIFETIME_RETAINED;
        assert_int_equal(reconcile(f, "a", d, TIMERD_DESIRED_SCHEDULED, 0, &g, &created), 0);
        assert_true(created);
        assert_arm(f, 0, MONO, 1100);
        assert_int_equal(reconcile(f, "a", d, TIMERD_DESIRED_SCHEDULED, 0, &g2, &created), 0);
        assert_false(created);
        assert_int_equal(g2, g);
        assert_int_equal(f->last.n_effects, 0);

        other = d;
        other.cadence_usec = 200;
        assert_int_equal(reconcile(f, "a", other, TIMERD_DESIRED_INACTIVE, 0, NULL, NULL),
                         -TIMERD_E_RECONCILIATION_CONFLICT);
        other = d;
        other.policy = TIMERD_POLICY_INTERVAL;
        assert_int_equal(reconcile(f, "a", other, TIMERD_DESIRED_INACTIVE, 0, NULL, NULL),
                         -TIMERD_E_RECONCILIATION_CONFLICT);
        other = d;
        other.clock = TIMERD_CLOCK_BOOTTIME;
        assert_int_equal(reconcile(f, "a", other, TIMERD_DESIRED_INACTIVE, 0, NULL, NULL),
                         -TIMERD_E_RECONCILIATION_CONFLICT);
        other = d;
        other.lifetime = TIMERD_LIFETIME_TRANSIENT;
        assert_int_equal(reconcile(f, "a", other, TIMERD_DESIRED_INACTIVE, 0, NULL, NULL),
                         -TIMERD_E_RECONCILIATION_CONFLICT);
        other = d;
        other.accuracy_usec = 5;
        assert_int_equal(reconcile(f, "a", other, TIMERD_DESIRED_INACTIVE, 0, NULL, NULL),
                         -TIMERD_E_RECONCILIATION_CONFLICT);
        assert_int_equal(fx_get(f, "a").state, TIMERD_STATE_SCHEDULED);

        assert_int_equal(reconcile(f, "a", d, TIMERD_DESIRED_MAX, 0, NULL, NULL),
                         -TIMERD_E_INVALID_PARAMETER);
        assert_int_equal(reconcile(f, "bad name", d, TIMERD_DESIRED_INACTIVE, 0, NULL, NULL),
                         -TIMERD_E_INVALID_NAME);
        other = d;
        other.delivery = TIMERD_DELIVERY_SIGNAL;
        assert_int_equal(reconcile(f, "a", other, TIMERD_DESIRED_INACTIVE, 0, NULL, NULL),
                         -TIMERD_E_INVALID_PARAMETER);
        a = (struct td_reconcile_args){.name = "a", .declaration = d};
        assert_int_equal(fx_apply(f, registry_reconcile(f->r, &f->now, &a, &g2, &created)),
                         -EINVAL);
}

static void test_reconcile_desired(void **state)
{
        struct td_declaration d = fx_decl(TIMERD_POLICY_INTERVAL, 100);
        struct td_declaration once = fx_decl(TIMERD_POLICY_ONCE, 0);
        struct td_snapshot s;
        bool created;
        struct fx *f = *state;

        assert_int_equal(reconcile(f, "a", d, TIMERD_DESIRED_INACTIVE, 0, NULL, &created), 0);
        assert_true(created);
        assert_int_equal(f->last.n_effects, 0);
        assert_int_equal(fx_get(f, "a").state, TIMERD_STATE_INACTIVE);
        assert_int_equal(reconcile(f, "a", d, TIMERD_DESIRED_SCHEDULED, 0, NULL, NULL), 0);
        assert_arm(f, 0, MONO, 1100);
        assert_int_equal(reconcile(f, "a", d, TIMERD_DESIRED_EXACT, 5000, NULL, NULL), 0);
        assert_arm(f, 0, MONO, 5000);
        assert_int_equal(reconcile(f, "a", d, TIMERD_DESIRED_EXACT, 5000, NULL, NULL), 0);
        assert_int_equal(f->last.n_effects, 0);
        assert_int_equal(reconcile(f, "a", d, TIMERD_DESIRED_SCHEDULED, 0, NULL, NULL), 0);
        assert_int_equal(f->last.n_effects, 0);
        assert_int_equal(fx_get(f, "a").next_deadline_usec, 5000);
        assert_int_equal(reconcile(f, "a", d, TIMERD_DESIRED_INACTIVE, 0, NULL, NULL), 0);
        assert_disarm(f, 0, MONO);
        assert_int_equal(reconcile(f, "a", d, TIMERD_DESIRED_INACTIVE, 0, NULL, NULL), 0);
        assert_int_equal(f->last.n_effects, 0);

        /* A once timer has no cadence to invent a wake-up from: not even created. */
        assert_int_equal(reconcile(f, "o", once, TIMERD_DESIRED_SCHEDULED, 0, NULL, NULL),
                         -TIMERD_E_INVALID_SCHEDULE);
        assert_int_equal(f->last.schedule_problem, TD_SCHEDULE_DEADLINE_MISSING);
        assert_int_equal(registry_get(f->r, FX_UID, "o", &s), -TIMERD_E_NOT_FOUND);
        assert_int_equal(reconcile(f, "o", once, TIMERD_DESIRED_EXACT, 3000, NULL, &created), 0);
        assert_true(created);
        assert_arm(f, 0, MONO, 3000);
        assert_int_equal(reconcile(f, "o", once, TIMERD_DESIRED_SCHEDULED, 0, NULL, NULL), 0);
        assert_int_equal(f->last.n_effects, 0);
        assert_int_equal(reconcile(f, "o", once, TIMERD_DESIRED_INACTIVE, 0, NULL, NULL), 0);
        assert_int_equal(reconcile(f, "o", once, TIMERD_DESIRED_SCHEDULED, 0, NULL, NULL),
                         -TIMERD_E_INVALID_SCHEDULE);
        assert_int_equal(f->last.schedule_problem, TD_SCHEDULE_DEADLINE_MISSING);
}

/* Issue 15 item 3: SCHEDULED with a deadline arms a timer that has no wake-up at that deadline
 * (a once timer too) and keeps one it has. */
static void test_reconcile_scheduled_with_deadline(void **state)
{
        struct td_declaration once = fx_decl(TIMERD_POLICY_ONCE, 0);
        struct td_declaration iv = fx_decl(TIMERD_POLICY_INTERVAL, 100);
        struct td_declaration wd = fx_decl(TIMERD_POLICY_WATCHDOG, 100);
        bool created;
        struct fx *f = *state;

        assert_int_equal(reconcile(f, "o", once, TIMERD_DESIRED_SCHEDULED, 4000, NULL, &created),
                         0);
        assert_true(created);
        assert_arm(f, 0, MONO, 4000);
        assert_int_equal(fx_get(f, "o").state, TIMERD_STATE_SCHEDULED);
        /* Already scheduled: kept, whatever deadline the repeat names. */
        assert_int_equal(reconcile(f, "o", once, TIMERD_DESIRED_SCHEDULED, 7000, NULL, &created),
                         0);
        assert_false(created);
        assert_int_equal(f->last.n_effects, 0);
        assert_int_equal(fx_get(f, "o").next_deadline_usec, 4000);
        /* After it fired, a repeat schedules it again. */
        assert_int_equal(fx_advance(f, MONO, 4000), 1);
        struct td_dispatch d = *fx_dispatch(f, 0);
        assert_int_equal(
            fx_complete(f, fx_token(&d), TIMERD_OUTCOME_SUCCESS, TIMERD_DIRECTIVE_CONTINUE, 0), 0);
        assert_int_equal(fx_get(f, "o").state, TIMERD_STATE_INACTIVE);
        assert_int_equal(reconcile(f, "o", once, TIMERD_DESIRED_SCHEDULED, 7000, NULL, NULL), 0);
        assert_int_equal(fx_get(f, "o").next_deadline_usec, 7000);

        /* A recurring timer starts at the deadline given rather than now + cadence. */
        assert_int_equal(reconcile(f, "iv", iv, TIMERD_DESIRED_SCHEDULED, 5000, NULL, NULL), 0);
        assert_int_equal(fx_get(f, "iv").next_deadline_usec, 5000);
        /* A watchdog's deadline moves only by Kick. */
        assert_int_equal(reconcile(f, "wd", wd, TIMERD_DESIRED_SCHEDULED, 5000, NULL, NULL),
                         -TIMERD_E_WRONG_POLICY);
        assert_int_equal(reconcile(f, "wd", wd, TIMERD_DESIRED_SCHEDULED, 0, NULL, NULL), 0);
}

static void test_reconcile_during_run(void **state)
{
        struct td_declaration ac = fx_decl(TIMERD_POLICY_AFTER_COMPLETION, 100);
        struct td_declaration once = fx_decl(TIMERD_POLICY_ONCE, 0);
        struct td_dispatch d;
        struct fx *f = *state;

        assert_int_equal(reconcile(f, "ac", ac, TIMERD_DESIRED_SCHEDULED, 0, NULL, NULL), 0);
        assert_int_equal(fx_advance(f, MONO, 1100), 1);
        d = *fx_dispatch(f, 0);
        assert_int_equal(reconcile(f, "ac", ac, TIMERD_DESIRED_INACTIVE, 0, NULL, NULL), 0);
        assert_int_equal(reconcile(f, "ac", ac, TIMERD_DESIRED_SCHEDULED, 0, NULL, NULL), 0);
        fx_set_now(f, MONO, 1150);
        assert_int_equal(
            fx_complete(f, fx_token(&d), TIMERD_OUTCOME_SUCCESS, TIMERD_DIRECTIVE_CONTINUE, 0), 0);
        assert_arm(f, 0, MONO, 1250);

        assert_int_equal(fx_advance(f, MONO, 1250), 1);
        d = *fx_dispatch(f, 0);
        assert_int_equal(reconcile(f, "ac", ac, TIMERD_DESIRED_EXACT, 9000, NULL, NULL), 0);
        assert_int_equal(f->last.n_effects, 0);
        assert_int_equal(fx_get(f, "ac").next_deadline_usec, 9000);
        assert_int_equal(reconcile(f, "ac", ac, TIMERD_DESIRED_SCHEDULED, 0, NULL, NULL), 0);
        assert_int_equal(
            fx_complete(f, fx_token(&d), TIMERD_OUTCOME_SUCCESS, TIMERD_DIRECTIVE_CONTINUE, 0), 0);
        assert_arm(f, 0, MONO, 9000);

        assert_int_equal(reconcile(f, "o", once, TIMERD_DESIRED_EXACT, 2000, NULL, NULL), 0);
        assert_int_equal(fx_advance(f, MONO, 2000), 1);
        assert_int_equal(reconcile(f, "o", once, TIMERD_DESIRED_SCHEDULED, 0, NULL, NULL),
                         -TIMERD_E_INVALID_SCHEDULE);
        assert_int_equal(f->last.schedule_problem, TD_SCHEDULE_DEADLINE_MISSING);
        assert_int_equal(reconcile(f, "o", once, TIMERD_DESIRED_EXACT, 3000, NULL, NULL), 0);
        assert_int_equal(reconcile(f, "o", once, TIMERD_DESIRED_SCHEDULED, 0, NULL, NULL), 0);
        assert_int_equal(fx_get(f, "o").next_deadline_usec, 3000);
}

/*
 * Issue 15 item 8: a dispatch says when the service owed it (the end of its accuracy window) and
 * whether it was due already when it was queued, which makes its lateness the client's.
 */
static void test_dispatch_owed_and_past_due(void **state)
{
        const struct td_dispatch *d;
        struct td_dispatch run;
        uint64_t g;
        struct fx *f = *state;

        fx_set_now(f, MONO, 1000);
        /* A start in the past (start_usec: 1): due at once, not the service's lateness. */
        assert_int_equal(fx_register_at(f, "ancient", fx_decl(TIMERD_POLICY_ONCE, 0), 1, &g), 0);
        assert_int_equal(fx_advance(f, MONO, 1001), 1);
        d = fx_dispatch(f, 0);
        assert_int_equal(d->deadline_usec, 1);
        assert_true(d->past_due);
        run = *d;
        assert_int_equal(
            fx_complete(f, fx_token(&run), TIMERD_OUTCOME_SUCCESS, TIMERD_DIRECTIVE_CONTINUE, 0),
            0);
        /* Scheduled ahead again: the service owes it from its deadline. */
        assert_int_equal(fx_schedule(f, fx_claim("ancient", g), 1500), 0);
        assert_int_equal(fx_advance(f, MONO, 1600), 1);
        d = fx_dispatch(f, 0);
        assert_false(d->past_due);
        assert_int_equal(d->due_usec, 1500);

        /* An accuracy window is lateness declared: owed at its end. */
        assert_int_equal(
            fx_register_at(f, "loose", decl_at(TIMERD_POLICY_ONCE, 0, MONO, 300), 2000, NULL), 0);
        assert_int_equal(fx_advance(f, MONO, 2300), 1);
        d = fx_dispatch(f, 0);
        assert_int_equal(d->deadline_usec, 2000);
        assert_int_equal(d->due_usec, 2300);
        assert_false(d->past_due);

        /* An interval's successors are queued ahead: owed from their deadlines. */
        assert_int_equal(fx_register_at(f, "iv", fx_decl(TIMERD_POLICY_INTERVAL, 100), 500, NULL),
                         0);
        assert_int_equal(fx_advance(f, MONO, 2310), 1);
        assert_true(fx_dispatch(f, 0)->past_due);
        run = *fx_dispatch(f, 0);
        assert_int_equal(
            fx_complete(f, fx_token(&run), TIMERD_OUTCOME_SUCCESS, TIMERD_DIRECTIVE_CONTINUE, 0),
            0);
        assert_int_equal(fx_advance(f, MONO, 2400), 1);
        assert_false(fx_dispatch(f, 0)->past_due);
        assert_int_equal(fx_dispatch(f, 0)->due_usec, 2400);
}

static void test_coalescing(void **state)
{
        const char *order[] = {"a", "b", "c"};
        struct fx *f = *state;

        fx_set_now(f, MONO, 0);
        assert_int_equal(
            fx_register_at(f, "a", decl_at(TIMERD_POLICY_ONCE, 0, MONO, 50), 100, NULL), 0);
        assert_arm(f, 0, MONO, 150);
        /* Overlapping windows share the one wake-up. */
        assert_int_equal(
            fx_register_at(f, "b", decl_at(TIMERD_POLICY_ONCE, 0, MONO, 50), 120, NULL), 0);
        assert_int_equal(f->last.n_effects, 0);
        /* An exact timer is never delayed: the clock moves to its deadline. */
        assert_int_equal(fx_register_at(f, "c", fx_decl(TIMERD_POLICY_ONCE, 0), 130, NULL), 0);
        assert_arm(f, 0, MONO, 130);
        assert_int_equal(fx_advance(f, MONO, 129), 0);
        assert_int_equal(fx_advance(f, MONO, 130), 3);
        for (size_t i = 0; i < 3; i++) {
                assert_string_equal(fx_dispatch(f, i)->name, order[i]);
                assert_int_equal(fx_dispatch(f, i)->fired_usec, 130);
        }

        /* A window opening before an exact deadline fires with it. */
        assert_int_equal(fx_register_at(f, "d", fx_decl(TIMERD_POLICY_ONCE, 0), 200, NULL), 0);
        assert_int_equal(
            fx_register_at(f, "e", decl_at(TIMERD_POLICY_ONCE, 0, MONO, 100), 150, NULL), 0);
        assert_int_equal(f->last.n_effects, 0);
        assert_int_equal(fx_advance(f, MONO, 200), 2);
        assert_string_equal(fx_dispatch(f, 0)->name, "e");
        assert_string_equal(fx_dispatch(f, 1)->name, "d");

        /* A replace that gives an exact timer a window, or takes it away, moves the arm time. */
        assert_int_equal(fx_register_at(f, "f", fx_decl(TIMERD_POLICY_ONCE, 0), 300, NULL), 0);
        assert_arm(f, 0, MONO, 300);
        assert_int_equal(fx_register_full(f, FX_UID, FX_SESSION, "f",
                                          decl_at(TIMERD_POLICY_ONCE, 0, MONO, 50), true, 300, true,
                                          NULL),
                         0);
        assert_arm(f, 0, MONO, 350);
        assert_int_equal(fx_register_full(f, FX_UID, FX_SESSION, "f",
                                          fx_decl(TIMERD_POLICY_ONCE, 0), true, 310, true, NULL),
                         0);
        assert_arm(f, 0, MONO, 310);
        assert_int_equal(fx_advance(f, MONO, 310), 1);
}

static struct td_declaration decl_handover(enum timerd_policy policy, uint64_t cadence_usec,
                                           uint64_t handover_usec)
{
        struct td_declaration d = fx_decl(policy, cadence_usec);

        d.handover_usec = handover_usec;
        return d;
}

static void test_handover_rejects_bad_input(void **state)
{
        struct td_snapshot snap;
        struct td_declaration d;
        struct fx *f = *state;

        d = decl_handover(TIMERD_POLICY_ONCE, 0, TIMERD_HANDOVER_MAX_USEC + 1);
        assert_int_equal(fx_register(f, "big", d, NULL), -TIMERD_E_INVALID_PARAMETER);
        d = decl_handover(TIMERD_POLICY_ONCE, 0, 10);
        d.delivery = TIMERD_DELIVERY_ALARM;
        assert_int_equal(fx_register(f, "alarm", d, NULL), -TIMERD_E_INVALID_PARAMETER);
        d.delivery = TIMERD_DELIVERY_SIGNAL;
        d.signo = 14;
        assert_int_equal(fx_register(f, "signal", d, NULL), -TIMERD_E_INVALID_PARAMETER);
        /* A successor would be due the moment it is queued. */
        d = decl_handover(TIMERD_POLICY_INTERVAL, 100, 100);
        assert_int_equal(fx_register(f, "iv", d, NULL), -TIMERD_E_INVALID_SCHEDULE);
        assert_int_equal(f->last.schedule_problem, TD_SCHEDULE_HANDOVER_NOT_SHORTER);
        assert_int_equal(stats(f).timers, 0);
        assert_int_equal(f->last.n_effects, 0);

        d = decl_handover(TIMERD_POLICY_ONCE, 0, TIMERD_HANDOVER_MAX_USEC);
        assert_int_equal(fx_register(f, "max", d, NULL), 0);
        snap = fx_get(f, "max");
        fx_assert_declaration_equal(&snap.declaration, &d);
}

static void test_handover_once(void **state)
{
        const struct td_dispatch *d;
        struct fx *f = *state;

        fx_set_now(f, MONO, 0);
        assert_int_equal(
            fx_register_at(f, "h", decl_handover(TIMERD_POLICY_ONCE, 0, 30), 100, NULL), 0);
        /* Armed early; the deadline the owner sees is the declared one. */
        assert_arm(f, 0, MONO, 70);
        assert_int_equal(fx_get(f, "h").next_deadline_usec, 100);
        assert_int_equal(fx_advance(f, MONO, 69), 0);
        assert_int_equal(fx_advance(f, MONO, 72), 1);
        d = fx_dispatch(f, 0);
        assert_int_equal(d->deadline_usec, 100);
        assert_int_equal(d->fired_usec, 72);
        assert_int_equal(d->due_usec, 70);
        assert_int_equal(d->overruns, 0);
        assert_int_equal(fx_get(f, "h").run_deadline_usec, 100);

        /* A deadline closer to 0 than the handover is due from 0. */
        assert_int_equal(
            fx_register_at(f, "near", decl_handover(TIMERD_POLICY_ONCE, 0, 500), 200, NULL), 0);
        assert_arm(f, 0, MONO, 0);
        assert_int_equal(fx_get(f, "near").next_deadline_usec, 200);
}

static void test_handover_order_and_coalescing(void **state)
{
        struct td_declaration d = decl_handover(TIMERD_POLICY_ONCE, 0, 50);
        struct fx *f = *state;

        fx_set_now(f, MONO, 0);
        /* "a" is due first in the queue (at 60) though its deadline (110) is later. */
        assert_int_equal(fx_register_at(f, "b", fx_decl(TIMERD_POLICY_ONCE, 0), 100, NULL), 0);
        assert_int_equal(fx_register_at(f, "a", d, 110, NULL), 0);
        assert_arm(f, 0, MONO, 60);
        assert_int_equal(fx_advance(f, MONO, 60), 1);
        assert_string_equal(fx_dispatch(f, 0)->name, "a");
        assert_int_equal(fx_dispatch(f, 0)->deadline_usec, 110);
        assert_arm(f, 0, MONO, 100);

        /* The coalescing window counts from the handover instant. */
        d.accuracy_usec = 40;
        assert_int_equal(fx_register_at(f, "c", d, 300, NULL), 0);
        assert_int_equal(fx_register_at(f, "e", fx_decl(TIMERD_POLICY_ONCE, 0), 260, NULL), 0);
        assert_int_equal(fx_advance(f, MONO, 100), 1);
        assert_arm(f, 0, MONO, 260);
        assert_int_equal(fx_advance(f, MONO, 260), 2);
        assert_string_equal(fx_dispatch(f, 0)->name, "c");
        assert_string_equal(fx_dispatch(f, 1)->name, "e");
}

/*
 * The rare declaration fields (accuracy, randomized delay) live beside the run state, not in the
 * timer: they stay through firings and runs, and a replace declares them anew while the runs
 * start over, also from a timer without them to one with them and back.
 */
static void test_rare_fields_beside_runs(void **state)
{
        struct td_declaration d = fx_decl(TIMERD_POLICY_INTERVAL, 100);
        struct td_snapshot s;
        struct fx *f = *state;

        fx_set_now(f, MONO, 0);
        d.accuracy_usec = 30;
        assert_int_equal(fx_register_at(f, "a", d, 100, NULL), 0);
        assert_int_equal(fx_advance(f, MONO, 130), 1);
        assert_int_equal(fx_dispatch(f, 0)->due_usec, 130);
        assert_int_equal(fx_complete(f, fx_token(fx_dispatch(f, 0)), TIMERD_OUTCOME_SUCCESS,
                                     TIMERD_DIRECTIVE_CONTINUE, 0),
                         0);
        s = fx_get(f, "a");
        assert_int_equal(s.runs, 1);
        assert_int_equal(s.declaration.accuracy_usec, 30);

        /* Replaced: the runs start over, the new rare field is kept, the old one is gone. */
        d.accuracy_usec = 0;
        d.randomized_delay_usec = 5;
        assert_int_equal(fx_register_full(f, FX_UID, FX_SESSION, "a", d, true, 300, true, NULL), 0);
        s = fx_get(f, "a");
        assert_int_equal(s.runs, 0);
        assert_int_equal(s.declaration.accuracy_usec, 0);
        assert_int_equal(s.declaration.randomized_delay_usec, 5);
        assert_int_equal(fx_advance(f, MONO, 300), 1);
        assert_int_equal(fx_get(f, "a").run, 1);
        assert_int_equal(fx_get(f, "a").declaration.randomized_delay_usec, 5);

        /* Plain again, then rare again on a timer that has no record. */
        assert_int_equal(fx_register_full(f, FX_UID, FX_SESSION, "a",
                                          fx_decl(TIMERD_POLICY_ONCE, 0), true, 500, true, NULL),
                         0);
        s = fx_get(f, "a");
        assert_int_equal(s.runs, 0);
        assert_int_equal(s.declaration.randomized_delay_usec, 0);
        d = fx_decl(TIMERD_POLICY_ONCE, 0);
        d.accuracy_usec = 20;
        assert_int_equal(fx_register_full(f, FX_UID, FX_SESSION, "a", d, true, 500, true, NULL), 0);
        assert_int_equal(fx_advance(f, MONO, 520), 1);
        assert_int_equal(fx_dispatch(f, 0)->due_usec, 520);
        assert_int_equal(registry_check(f->r), 0);
}

static void test_handover_interval_and_watchdog(void **state)
{
        struct td_dispatch d;
        struct fx *f = *state;

        fx_set_now(f, MONO, 0);
        assert_int_equal(
            fx_register_at(f, "iv", decl_handover(TIMERD_POLICY_INTERVAL, 100, 20), 100, NULL), 0);
        assert_arm(f, 0, MONO, 80);
        /* Early: the period is not missed, the next deadline is one cadence on. */
        assert_int_equal(fx_advance(f, MONO, 85), 1);
        d = *fx_dispatch(f, 0);
        assert_int_equal(d.deadline_usec, 100);
        assert_int_equal(d.overruns, 0);
        assert_arm(f, 0, MONO, 180);
        assert_int_equal(fx_get(f, "iv").next_deadline_usec, 200);
        assert_int_equal(
            fx_complete(f, fx_token(&d), TIMERD_OUTCOME_SUCCESS, TIMERD_DIRECTIVE_CONTINUE, 0), 0);
        /* Late by two periods as the queue counts them (due 180, 280; now 385 reaches 405). */
        assert_int_equal(fx_advance(f, MONO, 385), 1);
        d = *fx_dispatch(f, 0);
        assert_int_equal(d.deadline_usec, 200);
        assert_int_equal(d.overruns, 2);
        assert_int_equal(fx_get(f, "iv").next_deadline_usec, 500);
        assert_arm(f, 0, MONO, 480);

        /* A watchdog's successor counts from the deadline when it fires early. */
        fx_set_now(f, MONO, 1000);
        assert_int_equal(fx_register(f, "wd", decl_handover(TIMERD_POLICY_WATCHDOG, 100, 30), NULL),
                         0);
        assert_int_equal(fx_get(f, "wd").next_deadline_usec, 1100);
        assert_int_equal(fx_advance(f, MONO, 1075), 1);
        assert_int_equal(fx_dispatch(f, 0)->deadline_usec, 1100);
        assert_int_equal(fx_get(f, "wd").next_deadline_usec, 1200);
        /* Late: from now, as without a handover. */
        assert_int_equal(fx_advance(f, MONO, 1250), 0);
        assert_int_equal(fx_get(f, "wd").next_deadline_usec, 1350);
}

/* The handover is how the client takes firings: a Reconcile adopts the caller's (an upgraded
 * client's default meets the retained timer it declared without one), and nothing else. */
static void test_handover_reconcile_adopts_the_callers(void **state)
{
        struct td_declaration old = fx_decl(TIMERD_POLICY_ONCE, 0), d;
        uint64_t g1, g2;
        bool created;
        struct fx *f = *state;

        fx_set_now(f, MONO, 0);
        old.lifetime = TIMERD_LIFETIME_RETAINED;
        assert_int_equal(reconcile(f, "r", old, TIMERD_DESIRED_SCHEDULED, 100, &g1, &created), 0);
        assert_true(created);
        assert_arm(f, 0, MONO, 100);
        registry_changes_commit(f->r);

        d = old;
        d.handover_usec = 30;
        assert_int_equal(reconcile(f, "r", d, TIMERD_DESIRED_SCHEDULED, 0, &g2, &created), 0);
        assert_false(created);
        assert_int_equal(g2, g1);
        assert_int_equal(fx_get(f, "r").declaration.handover_usec, 30);
        assert_int_equal(fx_get(f, "r").next_deadline_usec, 100);
        assert_arm(f, 0, MONO, 70);
        /* A retained timer's new handover is written. */
        assert_true(registry_changes_pending(f->r));
        registry_changes_commit(f->r);

        /* The same again changes nothing; opting out moves it back to the deadline. */
        assert_int_equal(reconcile(f, "r", d, TIMERD_DESIRED_SCHEDULED, 0, NULL, NULL), 0);
        assert_int_equal(f->last.n_effects, 0);
        assert_false(registry_changes_pending(f->r));
        assert_int_equal(reconcile(f, "r", old, TIMERD_DESIRED_SCHEDULED, 0, NULL, NULL), 0);
        assert_arm(f, 0, MONO, 100);
        assert_int_equal(fx_advance(f, MONO, 100), 1);
        assert_int_equal(fx_dispatch(f, 0)->deadline_usec, 100);

        /* Any other difference is still a conflict, with or without a handover. */
        d.accuracy_usec = 5;
        assert_int_equal(reconcile(f, "r", d, TIMERD_DESIRED_SCHEDULED, 0, NULL, NULL),
                         -TIMERD_E_RECONCILIATION_CONFLICT);
        assert_int_equal(fx_get(f, "r").declaration.handover_usec, 0);
}

/* A handover the declaration cannot have is refused as at registration; nothing changes. */
static void test_handover_reconcile_invalid(void **state)
{
        struct td_declaration d = fx_decl(TIMERD_POLICY_INTERVAL, 100);
        struct fx *f = *state;

        fx_set_now(f, MONO, 0);
        assert_int_equal(reconcile(f, "iv", d, TIMERD_DESIRED_SCHEDULED, 0, NULL, NULL), 0);
        assert_arm(f, 0, MONO, 100);
        d.handover_usec = 100;
        assert_int_equal(reconcile(f, "iv", d, TIMERD_DESIRED_SCHEDULED, 0, NULL, NULL),
                         -TIMERD_E_INVALID_SCHEDULE);
        assert_int_equal(f->last.schedule_problem, TD_SCHEDULE_HANDOVER_NOT_SHORTER);
        assert_int_equal(fx_get(f, "iv").declaration.handover_usec, 0);
        assert_int_equal(f->kernel[MONO].deadline_usec, 100);
}

/* A registry that ignores handovers (a virtual clock) starts runs at their deadlines, and still
 * shows the declared handover. */
static void test_handover_ignored(void **state)
{
        const struct registry_config config = {
            .first_generation = 1, .first_handle_generation = 1, .ignore_handover = true};
        struct td_snapshot seen;
        struct td_dispatch d;
        struct fx f;

        (void)state;
        fx_init(&f, &config);
        fx_set_now(&f, MONO, 0);
        assert_int_equal(
            fx_register_at(&f, "h", decl_handover(TIMERD_POLICY_ONCE, 0, 30), 100, NULL), 0);
        assert_arm(&f, 0, MONO, 100);
        assert_int_equal(fx_get(&f, "h").declaration.handover_usec, 30);
        assert_int_equal(fx_advance(&f, MONO, 99), 0);
        assert_int_equal(fx_advance(&f, MONO, 100), 1);
        d = *fx_dispatch(&f, 0);
        assert_int_equal(d.deadline_usec, 100);
        assert_int_equal(d.fired_usec, 100);
        assert_int_equal(d.due_usec, 100);

        /* An interval's periods count from the deadlines themselves, also for a reader while a
         * firing waits for its taker: at 360, 380 is not due yet (it is with the handover). */
        assert_int_equal(
            fx_register_at(&f, "iv", decl_handover(TIMERD_POLICY_INTERVAL, 100, 30), 180, NULL), 0);
        assert_int_equal(fx_advance(&f, MONO, 180), 1);
        assert_int_equal(fx_dispatch(&f, 0)->deadline_usec, 180);
        assert_int_equal(f.kernel[MONO].deadline_usec, 280);
        assert_int_equal(fx_advance(&f, MONO, 279), 0);
        assert_int_equal(fx_get(&f, "iv").overruns, 0);
        assert_int_equal(fx_advance(&f, MONO, 280), 0);
        seen = fx_get(&f, "iv");
        f.now.usec[MONO] = 360;
        registry_snapshot_at(f.r, &seen, &f.now);
        assert_int_equal(seen.next_deadline_usec, 380);
        assert_int_equal(seen.overruns, 1);
        fx_done(&f);
}

/* A new cadence must stay longer than the handover, as at registration. */
static void test_handover_reschedule_cadence(void **state)
{
        struct td_reschedule_result rr;
        uint64_t g;
        struct fx *f = *state;

        fx_set_now(f, MONO, 0);
        assert_int_equal(
            fx_register_at(f, "iv", decl_handover(TIMERD_POLICY_INTERVAL, 100, 20), 100, &g), 0);
        assert_int_equal(reschedule(f, fx_claim("iv", g), true, 500, true, 20, &rr),
                         -TIMERD_E_INVALID_SCHEDULE);
        assert_int_equal(f->last.schedule_problem, TD_SCHEDULE_HANDOVER_NOT_SHORTER);
        assert_int_equal(f->last.n_effects, 0);
        assert_int_equal(fx_get(f, "iv").declaration.cadence_usec, 100);
        assert_int_equal(fx_get(f, "iv").next_deadline_usec, 100);
        assert_int_equal(reschedule(f, fx_claim("iv", g), true, 500, true, 21, &rr), 0);
        assert_int_equal(fx_get(f, "iv").live_cadence_usec, 21);
        assert_arm(f, 0, MONO, 480);
}

static void test_same_deadline_dispatch_order(void **state)
{
        static const uint32_t owners[] = {3, 1, 2, 1, 3, 2, 1};
        static const char *const names[] = {"b", "c", "a", "a", "a", "c", "b"};
        static const struct {
                uint32_t owner;
                const char *name;
        } expected[] = {{1, "a"}, {1, "b"}, {1, "c"}, {2, "a"}, {2, "c"}, {3, "a"}, {3, "b"}};
        struct fx *f = *state;

        /* Exact and coalescing timers due at once interleave in one order. */
        for (size_t i = 0; i < 7; i++)
                assert_int_equal(
                    fx_register_full(f, owners[i], FX_SESSION, names[i],
                                     decl_at(TIMERD_POLICY_ONCE, 0, MONO, i % 2 == 0 ? 0 : 1000),
                                     true, 500, false, NULL),
                    0);
        fx_set_now(f, MONO, 400);
        assert_int_equal(fx_advance(f, MONO, 500), 7);
        for (size_t i = 0; i < 7; i++) {
                assert_int_equal(fx_dispatch(f, i)->owner, expected[i].owner);
                assert_string_equal(fx_dispatch(f, i)->name, expected[i].name);
        }
}

static void test_earliest_deadline_moves(void **state)
{
        uint64_t ga, gb, gen;
        struct fx *f = *state;

        assert_int_equal(fx_register_at(f, "a", fx_decl(TIMERD_POLICY_ONCE, 0), 5000, &ga), 0);
        assert_arm(f, 0, MONO, 5000);
        gen = f->last.effects[0].arm.generation;
        assert_int_equal(fx_schedule(f, fx_claim("a", ga), 3000), 0);
        assert_arm(f, 0, MONO, 3000);
        assert_true(f->last.effects[0].arm.generation > gen);
        assert_int_equal(fx_register_at(f, "b", fx_decl(TIMERD_POLICY_ONCE, 0), 4000, &gb), 0);
        assert_int_equal(f->last.n_effects, 0);
        assert_int_equal(fx_schedule(f, fx_claim("a", ga), 6000), 0);
        assert_arm(f, 0, MONO, 4000);
        assert_int_equal(fx_cancel(f, fx_claim("b", gb)), 0);
        assert_arm(f, 0, MONO, 6000);
        assert_int_equal(fx_cancel(f, fx_claim("a", ga)), 0);
        assert_disarm(f, 0, MONO);
        assert_false(f->kernel[MONO].armed);
}

static void test_stale_expiry_dropped(void **state)
{
        uint64_t g, g1, g2, gd;
        bool stale = false;
        struct fx *f = *state;

        assert_int_equal(fx_register_at(f, "a", fx_decl(TIMERD_POLICY_ONCE, 0), 2000, &g), 0);
        g1 = f->last.effects[0].arm.generation;
        assert_int_equal(fx_schedule(f, fx_claim("a", g), 3000), 0);
        g2 = f->last.effects[0].arm.generation;
        fx_set_now(f, MONO, 3000);
        assert_int_equal(fx_apply(f, registry_expire(f->r, &f->now, MONO, g1, &stale)), 0);
        assert_true(stale);
        assert_int_equal(f->last.n_effects, 0);
        assert_true(fx_get(f, "a").has_deadline);
        assert_int_equal(stats(f).stale_expiries, 1);

        assert_int_equal(fx_apply(f, registry_expire(f->r, &f->now, MONO, g2, &stale)), 0);
        assert_false(stale);
        assert_int_equal(fx_count(f, TD_EFFECT_DISPATCH), 1);
        /* The same expiry twice: the kernel timer was spent by the first. */
        assert_int_equal(fx_apply(f, registry_expire(f->r, &f->now, MONO, g2, &stale)), 0);
        assert_true(stale);

        assert_int_equal(fx_register_at(f, "b", fx_decl(TIMERD_POLICY_ONCE, 0), 9000, &g), 0);
        assert_int_equal(fx_cancel(f, fx_claim("b", g)), 0);
        gd = fx_effect(f, 0, TD_EFFECT_DISARM)->arm.generation;
        assert_int_equal(fx_apply(f, registry_expire(f->r, &f->now, MONO, gd, &stale)), 0);
        assert_true(stale);
        assert_int_equal(stats(f).stale_expiries, 3);

        assert_int_equal(fx_apply(f, registry_expire(f->r, &f->now, TIMERD_CLOCK_MAX, gd, &stale)),
                         -EINVAL);
        assert_false(stale);
}

static void test_provider_binding_failure(void **state)
{
        struct td_snapshot s;
        uint64_t ga, gb, gd;
        struct fx *f = *state;

        assert_int_equal(fx_register_at(f, "a", fx_decl(TIMERD_POLICY_ONCE, 0), 2000, NULL), 0);
        assert_int_equal(fx_register_at(f, "b", fx_decl(TIMERD_POLICY_ONCE, 0), 3000, &gb), 0);
        ga = f->kernel[MONO].generation;
        assert_int_equal(fx_apply(f, registry_confirm_arm(f->r, &f->now, MONO, ga, 0)), 0);
        assert_int_equal(f->last.n_effects, 0);
        assert_int_equal(fx_apply(f, registry_confirm_arm(f->r, &f->now, MONO, ga - 1, -EPERM)), 0);
        assert_int_equal(f->last.n_effects, 0);
        assert_int_equal(fx_get(f, "a").state, TIMERD_STATE_SCHEDULED);
        assert_false(registry_has_failed(f->r));

        assert_int_equal(fx_apply(f, registry_confirm_arm(f->r, &f->now, MONO, ga, -EPERM)), 0);
        assert_int_equal(f->last.n_effects, 1);
        assert_arm(f, 0, MONO, 3000);
        s = fx_get(f, "a");
        assert_int_equal(s.state, TIMERD_STATE_FAILED);
        assert_int_equal(s.failure, TIMERD_FAILURE_PROVIDER_BINDING);
        assert_false(s.has_deadline);
        assert_int_equal(fx_get(f, "b").state, TIMERD_STATE_SCHEDULED);

        /* A failed disarm changes nothing: the old arm's expiry is stale anyway. */
        assert_int_equal(fx_cancel(f, fx_claim("b", gb)), 0);
        gd = fx_effect(f, 0, TD_EFFECT_DISARM)->arm.generation;
        assert_int_equal(fx_apply(f, registry_confirm_arm(f->r, &f->now, MONO, gd, -EIO)), 0);
        assert_int_equal(f->last.n_effects, 0);

        /* An alarm clock the kernel refuses: its only timer fails, the clock is disarmed. */
        assert_int_equal(
            fx_register(f, "alarm",
                        decl_at(TIMERD_POLICY_INTERVAL, 10, TIMERD_CLOCK_REALTIME_ALARM, 0), NULL),
            0);
        gd = f->kernel[TIMERD_CLOCK_REALTIME_ALARM].generation;
        assert_int_equal(fx_apply(f, registry_confirm_arm(f->r, &f->now,
                                                          TIMERD_CLOCK_REALTIME_ALARM, gd, -EPERM)),
                         0);
        assert_int_equal(f->last.n_effects, 1);
        assert_disarm(f, 0, TIMERD_CLOCK_REALTIME_ALARM);
        assert_int_equal(fx_get(f, "alarm").failure, TIMERD_FAILURE_PROVIDER_BINDING);
        assert_int_equal(stats(f).failed, 2);
        assert_int_equal(
            fx_apply(f, registry_confirm_arm(f->r, &f->now, TIMERD_CLOCK_INVALID, gd, -EPERM)),
            -EINVAL);

        /* What the service's binding check asks first: whether any timer failed. */
        assert_true(registry_has_failed(f->r));
        assert_int_equal(fx_unregister(f, fx_claim("a", fx_get(f, "a").generation)), 0);
        assert_true(registry_has_failed(f->r));
        assert_int_equal(fx_unregister(f, fx_claim("alarm", fx_get(f, "alarm").generation)), 0);
        assert_false(registry_has_failed(f->r));
}

/* Every owner listed since the last take, each once, then none. */
static void expect_silenced(struct fx *f, const uint32_t *owners, size_t n)
{
        uint32_t owner;

        for (size_t i = 0; i < n; i++) {
                assert_true(registry_take_silenced_owner(f->r, &owner));
                assert_int_equal(owner, owners[i]);
        }
        assert_false(registry_take_silenced_owner(f->r, &owner));
}

/* Whatever leaves a notify timer with nothing to deliver lists its owner for the Waits' re-check:
 * a kernel timer that cannot be armed during a firing, and a closed session's transient timers
 * of another owner (root registered them for it). */
static void test_silenced_owners(void **state)
{
        struct fx f;
        uint64_t g;

        (void)state;
        fx_init(&f, NULL);
        assert_int_equal(fx_register_at(&f, "a", fx_decl(TIMERD_POLICY_ONCE, 0), 2000, NULL), 0);
        assert_int_equal(fx_register_full(&f, 2000, FX_SESSION, "other",
                                          fx_decl(TIMERD_POLICY_INTERVAL, 5000), false, 0, false,
                                          NULL),
                         0);
        /* Scheduled timers may fire: nobody is listed. */
        expect_silenced(&f, NULL, 0);

        g = f.kernel[MONO].generation;
        assert_int_equal(fx_apply(&f, registry_confirm_arm(f.r, &f.now, MONO, g, -EPERM)), 0);
        assert_int_equal(fx_get(&f, "a").state, TIMERD_STATE_FAILED);
        expect_silenced(&f, (const uint32_t[]){FX_UID}, 1);

        /* "a" had nothing to deliver already: only the other owner is listed. */
        assert_int_equal(fx_apply(&f, registry_session_closed(f.r, &f.now, FX_SESSION)), 0);
        expect_silenced(&f, (const uint32_t[]){2000}, 1);

        /* A firing whose run is pending still has something to deliver. */
        assert_int_equal(fx_register_full(&f, FX_UID, FX_SESSION + 1, "b",
                                          fx_decl(TIMERD_POLICY_ONCE, 0), true, 3000, false, &g),
                         0);
        expect_silenced(&f, NULL, 0);
        assert_int_equal(fx_advance(&f, MONO, 3000), 1);
        expect_silenced(&f, NULL, 0);
        assert_int_equal(fx_complete(&f, fx_token(fx_dispatch(&f, 0)), TIMERD_OUTCOME_SUCCESS,
                                     TIMERD_DIRECTIVE_CONTINUE, 0),
                         0);
        expect_silenced(&f, (const uint32_t[]){FX_UID}, 1);
        fx_done(&f);
}

static void test_provider_failure_takes_coalesced_batch(void **state)
{
        struct fx *f = *state;

        fx_set_now(f, MONO, 0);
        assert_int_equal(
            fx_register_at(f, "a", decl_at(TIMERD_POLICY_ONCE, 0, MONO, 50), 100, NULL), 0);
        assert_int_equal(
            fx_register_at(f, "b", decl_at(TIMERD_POLICY_ONCE, 0, MONO, 50), 140, NULL), 0);
        assert_int_equal(fx_register_at(f, "c", fx_decl(TIMERD_POLICY_ONCE, 0), 300, NULL), 0);
        assert_int_equal(f->kernel[MONO].deadline_usec, 150);
        assert_int_equal(fx_apply(f, registry_confirm_arm(f->r, &f->now, MONO,
                                                          f->kernel[MONO].generation, -ENOMEM)),
                         0);
        assert_arm(f, 0, MONO, 300);
        assert_int_equal(fx_get(f, "a").state, TIMERD_STATE_FAILED);
        assert_int_equal(fx_get(f, "b").state, TIMERD_STATE_FAILED);
        assert_int_equal(fx_get(f, "c").state, TIMERD_STATE_SCHEDULED);
}

/* Bytes the allocator has handed out and not got back. */
static size_t heap_in_use(void)
{
        return mallinfo2().uordblks;
}

static void test_shrink_after_session_closed(void **state)
{
        enum { N = 2000 };
        struct td_declaration d = fx_decl(TIMERD_POLICY_INTERVAL, 500);
        size_t empty, full, after;
        struct td_snapshot s;
        char name[16];
        struct fx f;

        (void)state;
        fx_init(&f, NULL);
        assert_int_equal(fx_register_full(&f, FX_UID, 1, "stays", d, false, 0, false, NULL), 0);
        empty = heap_in_use();
        for (size_t i = 0; i < N; i++) {
                snprintf(name, sizeof(name), "t%zu", i);
                assert_int_equal(fx_register_full(&f, FX_UID, 2, name, d, false, 0, false, NULL),
                                 0);
        }
        full = heap_in_use();
        if (full == empty) {
                /* An allocator mallinfo2() does not see (AddressSanitizer's). */
                fx_done(&f);
                skip();
        }
        assert_int_equal(fx_apply(&f, registry_session_closed(f.r, &f.now, 2)), 0);
        /* Gone at once, freed in steps. */
        assert_int_equal(stats(&f).timers, 1);
        assert_int_equal(stats(&f).reaping, N);
        size_t steps = 0;
        while (registry_reap_pending(f.r)) {
                uint64_t count;
                assert_int_equal(fx_apply(&f, registry_reap_step(f.r, &f.now, 300, &count)), 0);
                assert_true(count <= 300);
                steps++;
        }
        assert_int_equal(steps, (N + 299) / 300);
        assert_int_equal(stats(&f).reaping, 0);
        registry_shrink(f.r);
        after = heap_in_use();

        /* The records, and the room the hash table and the queue had made for them (64 KiB): a
         * few small tables of the calls stay. */
        assert_true(full - empty > N * 100);
        assert_true(after <= empty + 8192);
        assert_int_equal(registry_get(f.r, FX_UID, "t0", &s), -TIMERD_E_NOT_FOUND);
        assert_int_equal(fx_get(&f, "stays").state, TIMERD_STATE_SCHEDULED);
        /* And the tables grow again. */
        assert_int_equal(fx_register_full(&f, FX_UID, 3, "t0", d, false, 0, false, NULL), 0);
        assert_int_equal(fx_advance(&f, MONO, 1500), 2);
        fx_done(&f);
}

/* The session of the last timer made is found without the table: alternating sessions, and
 * freeing that session, leave every count right (the fixture checks the registry after each step)
 * and nothing dangling (the sanitizer build). */
static void test_last_session_cache(void **state)
{
        struct td_declaration d = fx_decl(TIMERD_POLICY_INTERVAL, 500);
        struct fx *f = *state;

        assert_int_equal(fx_register_full(f, FX_UID, 1, "a1", d, false, 0, false, NULL), 0);
        assert_int_equal(fx_register_full(f, FX_UID, 2, "b1", d, false, 0, false, NULL), 0);
        assert_int_equal(fx_register_full(f, FX_UID, 1, "a2", d, false, 0, false, NULL), 0);
        assert_int_equal(fx_register_full(f, FX_UID, 2, "b2", d, false, 0, false, NULL), 0);
        /* Session 2, the last one used, closes and is freed. */
        assert_int_equal(fx_apply(f, registry_session_closed(f->r, &f->now, 2)), 0);
        while (registry_reap_pending(f->r)) {
                uint64_t count;
                assert_int_equal(fx_apply(f, registry_reap_step(f->r, &f->now, 1, &count)), 0);
        }
        assert_int_equal(stats(f).timers, 2);
        /* A new session of the same id, then session 1 closes: only its timers go. */
        assert_int_equal(fx_register_full(f, FX_UID, 2, "b3", d, false, 0, false, NULL), 0);
        assert_int_equal(fx_apply(f, registry_session_closed(f->r, &f->now, 1)), 0);
        assert_int_equal(stats(f).timers, 1);
        assert_int_equal(fx_get(f, "b3").state, TIMERD_STATE_SCHEDULED);
}

/* A closed session's transient timers are gone at once, whatever is left to free. */
static void test_session_closed_gone_at_once(void **state)
{
        enum { N = 40 };
        const struct registry_config config = {
            .first_generation = 1, .first_handle_generation = 1, .max_timers_per_owner = N + 1};
        struct td_declaration once = fx_decl(TIMERD_POLICY_ONCE, 0),
                              every = fx_decl(TIMERD_POLICY_INTERVAL, 500),
                              rarely = fx_decl(TIMERD_POLICY_INTERVAL, 50000);
        struct registry_stats owner;
        struct td_snapshot s, *list;
        uint64_t g, count;
        size_t steps = 0;
        char name[16];
        struct fx f;

        (void)state;
        fx_init(&f, &config);
        assert_int_equal(fx_register_full(&f, FX_UID, 1, "stays", every, false, 0, false, NULL), 0);
        for (size_t i = 0; i < N; i++) {
                snprintf(name, sizeof(name), "g%zu", i);
                assert_int_equal(fx_register_full(&f, FX_UID, 2, name,
                                                  i < 10   ? once
                                                  : i < 20 ? every
                                                           : rarely,
                                                  i < 10, 1050, false, NULL),
                                 0);
        }
        assert_int_equal(fx_register_full(&f, FX_UID, 2, "over", every, false, 0, false, NULL),
                         -TIMERD_E_LIMIT_EXCEEDED);
        assert_int_equal(fx_advance(&f, MONO, 1100), 10);
        assert_int_equal(stats(&f).pending, 10);

        assert_int_equal(fx_apply(&f, registry_session_closed(f.r, &f.now, 2)), 0);
        assert_int_equal(stats(&f).timers, 1);
        assert_int_equal(stats(&f).scheduled, 1);
        assert_int_equal(stats(&f).pending, 0);
        assert_int_equal(stats(&f).reaping, N);
        registry_get_owner_stats(f.r, FX_UID, &owner);
        assert_int_equal(owner.timers, 1);
        assert_int_equal(registry_get(f.r, FX_UID, "g0", &s), -TIMERD_E_NOT_FOUND);
        assert_int_equal(registry_get(f.r, FX_UID, "g20", &s), -TIMERD_E_NOT_FOUND);
        assert_int_equal(registry_list(f.r, FX_UID, false, &list), 1);
        assert_string_equal(list[0].name, "stays");
        free(list);
        assert_false(registry_session_holds(f.r, 2));
        /* Its pending firings are no Wait's; meeting them sets them aside for the reap, which
         * frees them, and tells their removals, in their turn. */
        take(&f, FX_UID, NULL, 0, 1, 0);
        assert_int_equal(f.last.n_removals, 0);
        take(&f, FX_UID, NULL, 0, 1, 0);
        assert_int_equal(stats(&f).reaping, N);

        /* The name is free at once, and the new timer is the one seen. */
        assert_int_equal(fx_register_full(&f, FX_UID, 3, "g15", once, true, 5000, false, &g), 0);
        assert_int_equal(f.last.n_removals, 1);
        assert_string_equal(f.last.removals[0].name, "g15");
        assert_int_equal(stats(&f).reaping, N - 1);
        s = fx_get(&f, "g15");
        assert_int_equal(s.generation, g);
        assert_int_equal(s.session, 3);
        assert_int_equal(s.next_deadline_usec, 5000);
        /* A closed session takes no new timer. */
        assert_int_equal(fx_register_full(&f, FX_UID, 2, "late", every, false, 0, false, NULL),
                         -EINVAL);
        /* The owner's room is back: N - 1 more fit beside "stays" and "g15". */
        for (size_t i = 0; i < N - 1; i++) {
                snprintf(name, sizeof(name), "n%zu", i);
                assert_int_equal(fx_register_full(&f, FX_UID, 3, name, once, false, 0, false, NULL),
                                 0);
        }
        /* The gone intervals due at 1500 never fire (they are set aside); "stays" does. */
        assert_int_equal(fx_advance(&f, MONO, 1600), 1);
        assert_string_equal(fx_dispatch(&f, 0)->name, "stays");
        assert_int_equal(f.last.n_removals, 0);
        assert_int_equal(stats(&f).reaping, N - 1);

        while (registry_reap_pending(f.r)) {
                assert_int_equal(fx_apply(&f, registry_reap_step(f.r, &f.now, 4, &count)), 0);
                steps++;
        }
        assert_true(steps > 1);
        assert_int_equal(stats(&f).reaping, 0);
        assert_int_equal(stats(&f).timers, N + 1);
        assert_int_equal(fx_apply(&f, registry_session_closed(f.r, &f.now, 2)), 0);
        assert_int_equal(f.last.n_effects, 0);
        assert_int_equal(fx_apply(&f, registry_reap_step(f.r, &f.now, 4, &count)), 0);
        assert_int_equal(count, 0);
        fx_done(&f);
}

/* The names of every owner's timers in a List of all, in order, joined by spaces. */
static void list_all_names(struct fx *f, char *buf, size_t size)
{
        struct td_snapshot *list;
        long n = registry_list(f->r, 0, true, &list);
        size_t used = 0;

        assert_true(n >= 0);
        buf[0] = '\0';
        for (long i = 0; i < n; i++) {
                int w = snprintf(buf + used, size - used, "%s%u:%s", i ? " " : "", list[i].owner,
                                 list[i].name);
                assert_true(w > 0 && (size_t)w < size - used);
                used += (size_t)w;
        }
        if (n > 0)
                free(list);
}

/*
 * A closing session that holds all of its owner's timers takes them out of the inventory at once
 * (inventory_remove_owner()); the owners around it keep theirs in order, the names come free, and
 * registry_check() (every fx_apply()) finds the inventory whole at each step of the reap.
 */
static void test_session_closed_detaches_owner(void **state)
{
        enum { N = 300 };
        struct td_declaration every = fx_decl(TIMERD_POLICY_INTERVAL, 500);
        char name[16], names[256], want[256];
        uint64_t count;
        struct fx *f = *state;

        assert_int_equal(fx_register_full(f, FX_UID - 1, 1, "before", every, false, 0, false, NULL),
                         0);
        assert_int_equal(fx_register_full(f, FX_UID + 1, 1, "after", every, false, 0, false, NULL),
                         0);
        for (size_t i = 0; i < N; i++) {
                snprintf(name, sizeof(name), "d%03zu", i);
                assert_int_equal(fx_register_full(f, FX_UID, 2, name, every, false, 0, false, NULL),
                                 0);
        }
        assert_int_equal(fx_apply(f, registry_session_closed(f->r, &f->now, 2)), 0);
        assert_int_equal(stats(f).reaping, N);
        /* Out of the inventory in the close, before any is freed. */
        assert_int_equal(f->r->inventory.n_nodes, 2);
        snprintf(want, sizeof(want), "%u:before %u:after", FX_UID - 1, FX_UID + 1);
        list_all_names(f, names, sizeof(names));
        assert_string_equal(names, want);
        /* A gone name registered again, mid-reap: the new timer joins the inventory. */
        assert_int_equal(fx_apply(f, registry_reap_step(f->r, &f->now, 100, &count)), 0);
        assert_int_equal(count, 100);
        assert_int_equal(fx_register_full(f, FX_UID, 3, "d205", every, false, 0, false, NULL), 0);
        assert_int_equal(stats(f).reaping, N - 101);
        snprintf(want, sizeof(want), "%u:before %u:d205 %u:after", FX_UID - 1, FX_UID, FX_UID + 1);
        list_all_names(f, names, sizeof(names));
        assert_string_equal(names, want);
        while (registry_reap_pending(f->r))
                assert_int_equal(fx_apply(f, registry_reap_step(f->r, &f->now, 64, &count)), 0);
        assert_int_equal(stats(f).reaping, 0);
        list_all_names(f, names, sizeof(names));
        assert_string_equal(names, want);
}

/*
 * When the owner's timers are not all the closing session's — another session's live ones, or
 * the gone ones of another closing session not yet freed — they leave the inventory one by one.
 */
static void test_session_closed_shares_owner(void **state)
{
        struct td_declaration every = fx_decl(TIMERD_POLICY_INTERVAL, 500);
        char name[16], names[256], want[256];
        uint64_t count;
        struct fx *f = *state;

        for (size_t i = 0; i < 10; i++) {
                snprintf(name, sizeof(name), "a%zu", i);
                assert_int_equal(fx_register_full(f, FX_UID, 2, name, every, false, 0, false, NULL),
                                 0);
                snprintf(name, sizeof(name), "b%zu", i);
                assert_int_equal(fx_register_full(f, FX_UID, 3, name, every, false, 0, false, NULL),
                                 0);
        }
        assert_int_equal(fx_register_full(f, FX_UID, 4, "c", every, false, 0, false, NULL), 0);
        /* Session 2 shares its owner with 3 and 4; then 3 shares it with 2's gone timers; 4 is
         * left with only its own. */
        assert_int_equal(fx_apply(f, registry_session_closed(f->r, &f->now, 2)), 0);
        assert_int_equal(fx_apply(f, registry_session_closed(f->r, &f->now, 3)), 0);
        assert_int_equal(fx_apply(f, registry_reap_step(f->r, &f->now, 5, &count)), 0);
        snprintf(want, sizeof(want), "%u:c", FX_UID);
        list_all_names(f, names, sizeof(names));
        assert_string_equal(names, want);
        assert_int_equal(fx_apply(f, registry_session_closed(f->r, &f->now, 4)), 0);
        assert_int_equal(stats(f).reaping, 16);
        while (registry_reap_pending(f->r))
                assert_int_equal(fx_apply(f, registry_reap_step(f->r, &f->now, 3, &count)), 0);
        list_all_names(f, names, sizeof(names));
        assert_string_equal(names, "");
        assert_int_equal(fx_register_full(f, FX_UID, 5, "a0", every, false, 0, false, NULL), 0);
}

static void test_session_closed(void **state)
{
        struct td_declaration keep = fx_decl(TIMERD_POLICY_AFTER_COMPLETION, 100);
        struct td_dispatch d;
        struct td_snapshot s;
        struct fx *f = *state;

        keep.lifetime = TIMERD_LIFETIME_RETAINED;
        assert_int_equal(fx_register_full(f, FX_UID, 1, "t1", fx_decl(TIMERD_POLICY_INTERVAL, 500),
                                          false, 0, false, NULL),
                         0);
        assert_int_equal(fx_register_full(f, FX_UID, 1, "keep", keep, false, 0, false, NULL), 0);
        assert_int_equal(fx_register_full(f, FX_UID, 2, "t2", fx_decl(TIMERD_POLICY_INTERVAL, 500),
                                          false, 0, false, NULL),
                         0);
        assert_int_equal(fx_advance(f, MONO, 1100), 1);
        d = take(f, FX_UID, NULL, 0, 1, 1);
        assert_string_equal(d.name, "keep");
        assert_false(fx_get(f, "keep").pending);

        fx_set_now(f, MONO, 1130);
        assert_int_equal(fx_apply(f, registry_session_closed(f->r, &f->now, 1)), 0);
        assert_int_equal(registry_get(f->r, FX_UID, "t1", &s), -TIMERD_E_NOT_FOUND);
        assert_int_equal(registry_get(f->r, FX_UID, "t2", &s), 0);
        s = fx_get(f, "keep");
        assert_false(s.run_active);
        assert_int_equal(s.runs, 1);
        assert_int_equal(s.last_outcome, TIMERD_OUTCOME_EXPECTED_FAILURE);
        assert_int_equal(s.consecutive_expected_failures, 1);
        assert_int_equal(s.last_duration_usec, 30);
        assert_int_equal(s.state, TIMERD_STATE_SCHEDULED);
        assert_int_equal(s.next_deadline_usec, 1230);
        assert_int_equal(f->kernel[MONO].deadline_usec, 1230);
        assert_int_equal(
            fx_complete(f, fx_token(&d), TIMERD_OUTCOME_SUCCESS, TIMERD_DIRECTIVE_CONTINUE, 0),
            -TIMERD_E_REGISTRATION_EXPIRED);

        assert_int_equal(fx_apply(f, registry_session_closed(f->r, &f->now, 1)), 0);
        assert_int_equal(f->last.n_effects, 0);
        assert_int_equal(fx_apply(f, registry_session_closed(f->r, &f->now, 99)), 0);
        assert_int_equal(f->last.n_effects, 0);
        assert_int_equal(fx_apply(f, registry_session_closed(f->r, &f->now, 0)), -EINVAL);
        assert_int_equal(stats(f).timers, 2);
}

static void test_pending_firings(void **state)
{
        const char *const only_z[] = {"z"};
        const char *const nothing[] = {"nope"};
        const char *const with_null[] = {NULL};
        struct td_dispatch d, taken;
        struct fx *f = *state;

        fx_set_now(f, MONO, 0);
        assert_int_equal(fx_register_at(f, "b", fx_decl(TIMERD_POLICY_ONCE, 0), 100, NULL), 0);
        assert_int_equal(fx_register_at(f, "a", fx_decl(TIMERD_POLICY_ONCE, 0), 200, NULL), 0);
        assert_int_equal(fx_register_at(f, "z", fx_decl(TIMERD_POLICY_ONCE, 0), 400, NULL), 0);
        assert_int_equal(fx_register_at(f, "y", fx_decl(TIMERD_POLICY_ONCE, 0), 400, NULL), 0);
        assert_int_equal(fx_advance(f, MONO, 100), 1);
        assert_int_equal(fx_advance(f, MONO, 200), 1);
        assert_int_equal(fx_advance(f, MONO, 400), 2);
        assert_int_equal(stats(f).pending, 4);

        take(f, FX_UID + 1, NULL, 0, 5, 0);
        take(f, FX_UID, nothing, 1, 5, 0);
        /* The filter picks z although y fired in the same expiry and sorts first. */
        taken = take(f, FX_UID, only_z, 1, 5, 1);
        assert_string_equal(taken.name, "z");
        assert_int_equal(taken.deadline_usec, 400);
        /* Oldest first: b fired before a. */
        assert_string_equal(take(f, FX_UID, NULL, 0, 5, 1).name, "b");
        assert_string_equal(take(f, FX_UID, NULL, 0, 5, 1).name, "a");
        taken = take(f, FX_UID, NULL, 0, 5, 1);
        assert_string_equal(taken.name, "y");
        assert_int_equal(taken.run, 1);
        assert_int_equal(taken.fired_usec, 400);
        take(f, FX_UID, NULL, 0, 5, 0);
        assert_int_equal(stats(f).pending, 0);
        assert_int_equal(stats(f).running, 4);

        assert_int_equal(registry_take_pending(f->r, &f->now, FX_UID, TIMERD_DELIVERY_NOTIFY, NULL,
                                               0, 0, &taken),
                         -EINVAL);
        assert_int_equal(registry_take_pending(f->r, &f->now, FX_UID, TIMERD_DELIVERY_NOTIFY, NULL,
                                               1, 5, &taken),
                         -EINVAL);
        assert_int_equal(registry_take_pending(f->r, &f->now, FX_UID, TIMERD_DELIVERY_NOTIFY,
                                               with_null, 1, 5, &taken),
                         -EINVAL);

        /* The runtime hands a DISPATCH straight to a waiter. */
        assert_int_equal(fx_register_at(f, "x", fx_decl(TIMERD_POLICY_ONCE, 0), 500, NULL), 0);
        assert_int_equal(fx_advance(f, MONO, 500), 1);
        d = *fx_dispatch(f, 0);
        assert_int_equal(registry_deliver(f->r, &d, 0), -EINVAL);
        d.generation++;
        assert_int_equal(registry_deliver(f->r, &d, 5), -TIMERD_E_REGISTRATION_EXPIRED);
        d.generation--;
        d.run++;
        assert_int_equal(registry_deliver(f->r, &d, 5), -TIMERD_E_REGISTRATION_EXPIRED);
        d.run--;
        d.name = "missing";
        assert_int_equal(registry_deliver(f->r, &d, 5), -TIMERD_E_NOT_FOUND);
        d.name = "bad name";
        assert_int_equal(registry_deliver(f->r, &d, 5), -TIMERD_E_INVALID_NAME);
        d = *fx_dispatch(f, 0);
        assert_int_equal(registry_deliver(f->r, &d, 5), 0);
        assert_int_equal(registry_check(f->r), 0);
        assert_false(fx_get(f, "x").pending);
        assert_int_equal(registry_deliver(f->r, &d, 5), -EALREADY);
        take(f, FX_UID, NULL, 0, 5, 0);

        /* Every run handed to session 5 ends when it closes. */
        assert_int_equal(fx_apply(f, registry_session_closed(f->r, &f->now, 5)), 0);
        assert_int_equal(stats(f).running, 0);
        assert_int_equal(fx_get(f, "x").consecutive_expected_failures, 1);
}

static void test_generation_overflow(void **state)
{
        /* The last generation is the wire's largest int. */
        struct registry_config c = {.first_generation = TD_VALUE_MAX, .first_handle_generation = 1};
        uint64_t g;
        bool created;
        struct fx f;

        (void)state;
        fx_init(&f, &c);
        assert_int_equal(fx_register(&f, "a", fx_decl(TIMERD_POLICY_INTERVAL, 10), &g), 0);
        assert_int_equal(g, TD_VALUE_MAX);
        assert_int_equal(fx_register(&f, "b", fx_decl(TIMERD_POLICY_INTERVAL, 10), NULL),
                         -TIMERD_E_OVERFLOW);
        assert_int_equal(fx_register_full(&f, FX_UID, FX_SESSION, "a",
                                          fx_decl(TIMERD_POLICY_INTERVAL, 10), false, 0, true,
                                          NULL),
                         -TIMERD_E_OVERFLOW);
        assert_int_equal(reconcile(&f, "b", fx_decl(TIMERD_POLICY_INTERVAL, 10),
                                   TIMERD_DESIRED_INACTIVE, 0, NULL, NULL),
                         -TIMERD_E_OVERFLOW);
        /* Reusing an existing claim needs no generation. */
        assert_int_equal(reconcile(&f, "a", fx_decl(TIMERD_POLICY_INTERVAL, 10),
                                   TIMERD_DESIRED_SCHEDULED, 0, &g, &created),
                         0);
        assert_int_equal(g, TD_VALUE_MAX);
        assert_false(created);
        assert_int_equal(stats(&f).timers, 1);
        assert_int_equal(fx_get(&f, "a").generation, TD_VALUE_MAX);
        fx_done(&f);
}

static void test_handle_generation_overflow(void **state)
{
        struct registry_config c = {.first_generation = 1,
                                    .first_handle_generation = UINT64_MAX - 1};
        struct td_reschedule_result rr;
        uint64_t g, gb;
        bool stale;
        struct fx f;

        (void)state;
        fx_init(&f, &c);
        assert_int_equal(fx_register(&f, "a", fx_decl(TIMERD_POLICY_WATCHDOG, 10), &g), 0);
        assert_int_equal(f.kernel[MONO].generation, UINT64_MAX - 1);
        /* Moving to another clock needs two handle generations; one is left. */
        assert_int_equal(
            fx_register_full(&f, FX_UID, FX_SESSION, "a",
                             decl_at(TIMERD_POLICY_WATCHDOG, 10, TIMERD_CLOCK_BOOTTIME, 0), false,
                             0, true, NULL),
            -TIMERD_E_OVERFLOW);
        assert_int_equal(fx_get(&f, "a").generation, g);
        assert_int_equal(fx_apply(&f, registry_session_closed(f.r, &f.now, FX_SESSION)),
                         -TIMERD_E_OVERFLOW);
        assert_int_equal(fx_register_at(&f, "b", fx_decl(TIMERD_POLICY_ONCE, 0), 1005, &gb), 0);
        assert_int_equal(f.kernel[MONO].generation, UINT64_MAX);

        /* None left: every mutating call fails and changes nothing. */
        assert_int_equal(fx_register(&f, "c", fx_decl(TIMERD_POLICY_ONCE, 0), NULL),
                         -TIMERD_E_OVERFLOW);
        assert_int_equal(reconcile(&f, "a", fx_decl(TIMERD_POLICY_WATCHDOG, 10),
                                   TIMERD_DESIRED_INACTIVE, 0, NULL, NULL),
                         -TIMERD_E_OVERFLOW);
        assert_int_equal(fx_schedule(&f, fx_claim("b", gb), 5000), -TIMERD_E_OVERFLOW);
        assert_int_equal(reschedule(&f, fx_claim("b", gb), false, 0, false, 0, &rr),
                         -TIMERD_E_OVERFLOW);
        assert_int_equal(fx_cancel(&f, fx_claim("a", g)), -TIMERD_E_OVERFLOW);
        assert_int_equal(fx_kick(&f, fx_claim("a", g), NULL), -TIMERD_E_OVERFLOW);
        assert_int_equal(fx_unregister(&f, fx_claim("a", g)), -TIMERD_E_OVERFLOW);
        assert_int_equal(fx_apply(&f, registry_rearm(f.r, &f.now, MONO)), -TIMERD_E_OVERFLOW);
        assert_int_equal(fx_apply(&f, registry_confirm_arm(f.r, &f.now, MONO, UINT64_MAX, -EIO)),
                         -TIMERD_E_OVERFLOW);
        /* A stale expiry is still recognised; a current one cannot re-arm. */
        assert_int_equal(fx_apply(&f, registry_expire(f.r, &f.now, MONO, 3, &stale)), 0);
        assert_true(stale);
        fx_set_now(&f, MONO, 1005);
        assert_int_equal(fx_apply(&f, registry_expire(f.r, &f.now, MONO, UINT64_MAX, &stale)),
                         -TIMERD_E_OVERFLOW);
        assert_false(stale);
        assert_int_equal(fx_get(&f, "b").state, TIMERD_STATE_SCHEDULED);
        assert_int_equal(stats(&f).timers, 2);
        fx_done(&f);
}

/* No deadline the registry derives (now + cadence, deadline + cadence, completion + cadence, the
 * periods missed) leaves the wire's int64: the call fails Overflow, or the timer fails. */
static void test_deadline_overflow(void **state)
{
        const uint64_t max = TD_VALUE_MAX;
        struct td_dispatch d;
        struct td_snapshot s;
        uint64_t g;
        struct fx f;

        (void)state;
        fx_init(&f, NULL);
        fx_set_now(&f, MONO, max - 10);
        assert_int_equal(fx_register(&f, "w", fx_decl(TIMERD_POLICY_WATCHDOG, 100), NULL),
                         -TIMERD_E_OVERFLOW);
        assert_int_equal(reconcile(&f, "w", fx_decl(TIMERD_POLICY_WATCHDOG, 100),
                                   TIMERD_DESIRED_SCHEDULED, 0, NULL, NULL),
                         -TIMERD_E_OVERFLOW);
        assert_int_equal(registry_get(f.r, FX_UID, "w", &s), -TIMERD_E_NOT_FOUND);
        /* A first deadline whose successor would leave the range is refused up front. */
        assert_int_equal(fx_register_at(&f, "w", fx_decl(TIMERD_POLICY_WATCHDOG, 100), max - 5, &g),
                         -TIMERD_E_OVERFLOW);
        assert_int_equal(
            fx_register_at(&f, "iv", fx_decl(TIMERD_POLICY_INTERVAL, 100), max - 8, NULL),
            -TIMERD_E_OVERFLOW);
        fx_set_now(&f, MONO, max - 300);
        assert_int_equal(
            fx_register_at(&f, "w", fx_decl(TIMERD_POLICY_WATCHDOG, 100), max - 200, &g), 0);
        fx_set_now(&f, MONO, max - 60);
        assert_int_equal(fx_kick(&f, fx_claim("w", g), NULL), -TIMERD_E_OVERFLOW);
        assert_int_equal(fx_get(&f, "w").next_deadline_usec, max - 200);

        /* Successors past the end of time fail the timer; nothing is dispatched. */
        assert_int_equal(
            fx_register_at(&f, "iv", fx_decl(TIMERD_POLICY_INTERVAL, 100), max - 150, NULL), 0);
        assert_int_equal(fx_advance(&f, MONO, max - 50), 0);
        assert_int_equal(f.last.n_effects, 1);
        assert_disarm(&f, 0, MONO);
        assert_int_equal(fx_get(&f, "w").failure, TIMERD_FAILURE_OVERFLOW);
        assert_int_equal(fx_get(&f, "iv").failure, TIMERD_FAILURE_OVERFLOW);
        assert_int_equal(fx_get(&f, "iv").state, TIMERD_STATE_FAILED);
        assert_int_equal(stats(&f).failed, 2);
        fx_done(&f);

        /* Missed periods beyond 2^64. */
        fx_init(&f, NULL);
        fx_set_now(&f, MONO, 0);
        assert_int_equal(fx_register_at(&f, "iv", fx_decl(TIMERD_POLICY_INTERVAL, 1), 0, NULL), 0);
        assert_int_equal(fx_advance(&f, MONO, max), 0);
        assert_int_equal(fx_get(&f, "iv").failure, TIMERD_FAILURE_OVERFLOW);
        fx_done(&f);

        /* completion + cadence past the end: the completion stands, the timer fails. */
        fx_init(&f, NULL);
        assert_int_equal(fx_register(&f, "ac", fx_decl(TIMERD_POLICY_AFTER_COMPLETION, 100), NULL),
                         0);
        assert_int_equal(fx_advance(&f, MONO, 1100), 1);
        d = *fx_dispatch(&f, 0);
        fx_set_now(&f, MONO, max - 5);
        assert_int_equal(
            fx_complete(&f, fx_token(&d), TIMERD_OUTCOME_SUCCESS, TIMERD_DIRECTIVE_CONTINUE, 0), 0);
        s = fx_get(&f, "ac");
        assert_int_equal(s.runs, 1);
        assert_int_equal(s.state, TIMERD_STATE_FAILED);
        assert_int_equal(s.failure, TIMERD_FAILURE_OVERFLOW);
        fx_done(&f);
}

static void test_duration_overflow(void **state)
{
        struct td_dispatch d;
        struct td_snapshot s;
        struct fx *f = *state;

        assert_int_equal(fx_register(f, "iv", fx_decl(TIMERD_POLICY_INTERVAL, 100), NULL), 0);
        assert_int_equal(fx_advance(f, MONO, 1100), 1);
        d = *fx_dispatch(f, 0);
        assert_int_equal(fx_complete(f, fx_token(&d), TIMERD_OUTCOME_SUCCESS,
                                     TIMERD_DIRECTIVE_CONTINUE, TD_VALUE_MAX - 1),
                         0);
        assert_int_equal(fx_advance(f, MONO, 1200), 1);
        d = *fx_dispatch(f, 0);
        assert_int_equal(
            fx_complete(f, fx_token(&d), TIMERD_OUTCOME_SUCCESS, TIMERD_DIRECTIVE_CONTINUE, 5),
            -TIMERD_E_OVERFLOW);
        s = fx_get(f, "iv");
        assert_true(s.run_active);
        assert_int_equal(s.runs, 1);
        assert_int_equal(
            fx_complete(f, fx_token(&d), TIMERD_OUTCOME_SUCCESS, TIMERD_DIRECTIVE_CONTINUE, 1), 0);
        assert_int_equal(fx_get(f, "iv").total_duration_usec, TD_VALUE_MAX);

        /* A run ended by its session's close cannot be counted either: the timer fails. */
        assert_int_equal(fx_advance(f, MONO, 1300), 1);
        assert_int_equal(take(f, FX_UID, NULL, 0, 9, 1).run, 3);
        fx_set_now(f, MONO, 1310);
        assert_int_equal(fx_apply(f, registry_session_closed(f->r, &f->now, 9)), 0);
        assert_disarm(f, 0, MONO);
        s = fx_get(f, "iv");
        assert_false(s.run_active);
        assert_int_equal(s.failure, TIMERD_FAILURE_OVERFLOW);
        assert_int_equal(s.runs, 2);
}

/* The last call was refused at `limit`, whose value for its caller is max. */
static void assert_limit(const struct fx *f, enum td_limit limit, uint32_t max)
{
        assert_int_equal(f->last.failure, -TIMERD_E_LIMIT_EXCEEDED);
        assert_int_equal(f->last.limit, limit);
        assert_int_equal(f->last.limit_max, max);
}

static void test_limits(void **state)
{
        struct registry_config c = {.max_timers_per_owner = 2,
                                    .max_timers = 3,
                                    .first_generation = 1,
                                    .first_handle_generation = 1};
        struct td_declaration once = fx_decl(TIMERD_POLICY_ONCE, 0);
        struct td_reconcile_args a = {
            .caller = {.uid = 2, .session = 1},
            .name = "r",
            .declaration = once,
            .desired = TIMERD_DESIRED_INACTIVE,
        };
        uint64_t g;
        bool created;
        struct fx f;

        (void)state;
        fx_init(&f, &c);
        assert_int_equal(fx_register_full(&f, 1, 1, "a", once, false, 0, false, &g), 0);
        assert_int_equal(fx_register_full(&f, 1, 1, "b", once, false, 0, false, NULL), 0);
        assert_int_equal(fx_register_full(&f, 1, 1, "c", once, false, 0, false, NULL),
                         -TIMERD_E_LIMIT_EXCEEDED);
        assert_int_equal(fx_register_full(&f, 2, 1, "a", once, false, 0, false, NULL), 0);
        assert_int_equal(fx_register_full(&f, 2, 1, "b", once, false, 0, false, NULL),
                         -TIMERD_E_LIMIT_EXCEEDED);
        assert_int_equal(fx_apply(&f, registry_reconcile(f.r, &f.now, &a, &g, &created)),
                         -TIMERD_E_LIMIT_EXCEEDED);
        /* A replace does not count. */
        assert_int_equal(fx_register_full(&f, 1, 1, "a", once, false, 0, true, &g), 0);
        assert_int_equal(
            fx_apply(&f, registry_unregister(
                             f.r, &f.now,
                             &(struct td_handle){.owner = 1, .name = "a", .generation = g})),
            0);
        /* Two live timers in a table of three: uid 2 holds its share, half of what uid 1 leaves
         * (1 of 2), and one who holds nothing still gets the place left. */
        assert_int_equal(fx_register_full(&f, 2, 1, "b", once, false, 0, false, NULL),
                         -TIMERD_E_LIMIT_EXCEEDED);
        assert_limit(&f, TD_LIMIT_TIMERS_SHARE, 1);
        assert_int_equal(fx_register_full(&f, 3, 1, "a", once, false, 0, false, NULL), 0);
        assert_int_equal(stats(&f).timers, 3);
        fx_done(&f);
}

/* Owners taking turns: each timer counts against its own owner's limit, never the owner of the
 * timer made just before it (owner_find() answers that one without the table). */
static void test_owners_taking_turns(void **state)
{
        struct registry_config c = {
            .max_timers_per_owner = 2, .first_generation = 1, .first_handle_generation = 1};
        struct td_declaration once = fx_decl(TIMERD_POLICY_ONCE, 0);
        struct fx f;

        (void)state;
        fx_init(&f, &c);
        assert_int_equal(fx_register_full(&f, 1, 1, "a", once, false, 0, false, NULL), 0);
        assert_int_equal(fx_register_full(&f, 2, 1, "a", once, false, 0, false, NULL), 0);
        assert_int_equal(fx_register_full(&f, 1, 1, "b", once, false, 0, false, NULL), 0);
        assert_int_equal(fx_register_full(&f, 2, 1, "b", once, false, 0, false, NULL), 0);
        assert_int_equal(fx_register_full(&f, 1, 1, "c", once, false, 0, false, NULL),
                         -TIMERD_E_LIMIT_EXCEEDED);
        assert_int_equal(fx_register_full(&f, 3, 1, "a", once, false, 0, false, NULL), 0);
        assert_int_equal(fx_register_full(&f, 2, 1, "c", once, false, 0, false, NULL),
                         -TIMERD_E_LIMIT_EXCEEDED);
        assert_int_equal(fx_register_full(&f, 3, 1, "b", once, false, 0, false, NULL), 0);
        assert_int_equal(stats(&f).timers, 6);
        fx_done(&f);
}

/*
 * A uid that closes and registers again in a loop: the table's limit counts the gone timers not
 * freed yet, so the table never holds more than it (registry_check() asserts it at every call),
 * and a new timer frees one of them rather than being refused; the owner's limit counts live
 * ones only, so a client that closes and registers the same names again is served. Only live
 * timers filling the table refuse. Before: the gone ones counted nowhere and the table held
 * live + gone.
 */
static void test_limits_count_gone_timers(void **state)
{
        enum { PER_OWNER = 3, TABLE = 6, ROUNDS = 5 };
        struct registry_config c = {.max_timers_per_owner = PER_OWNER,
                                    .max_timers = TABLE,
                                    .first_generation = 1,
                                    .first_handle_generation = 1};
        struct td_declaration once = fx_decl(TIMERD_POLICY_ONCE, 0);
        uint64_t count, left;
        unsigned full = 0;
        char name[16];
        struct fx f;

        (void)state;
        fx_init(&f, &c);
        for (uint64_t session = 1; session <= ROUNDS; session++) {
                for (unsigned i = 0; i < PER_OWNER; i++) {
                        /* The same names in odd rounds (a client restarting), new ones else;
                         * queued in odd rounds, so freeing them moves the clock's wake-up. */
                        snprintf(name, sizeof(name), "%c%u", session % 2 ? 'a' : 'b', i);
                        assert_int_equal(fx_register_full(&f, 1, session, name, once, session % 2,
                                                          5000 + 100 * session + i, false, NULL),
                                         0);
                        assert_true(stats(&f).timers + stats(&f).reaping <= TABLE);
                        full += stats(&f).timers + stats(&f).reaping == TABLE;
                }
                assert_int_equal(
                    fx_register_full(&f, 1, session, "over", once, false, 0, false, NULL),
                    -TIMERD_E_LIMIT_EXCEEDED);
                assert_int_equal(fx_apply(&f, registry_session_closed(f.r, &f.now, session)), 0);
                assert_int_equal(stats(&f).timers, 0);
                assert_true(stats(&f).reaping > 0);
        }
        /* The table was full of gone timers, and registering freed them one at a time; what is
         * left goes in a reap step. */
        assert_true(full > 0);
        left = stats(&f).reaping;
        assert_int_equal(fx_apply(&f, registry_reap_step(f.r, &f.now, left + 1, &count)), 0);
        assert_int_equal(count, left);
        assert_false(registry_reap_pending(f.r));

        /* Live timers of other owners, one each, fill the table: refused, nothing gone to free. */
        for (unsigned i = 0; i < TABLE; i++) {
                snprintf(name, sizeof(name), "c%u", i);
                assert_int_equal(fx_register_full(&f, 2 + i, 10, name, once, false, 0, false, NULL),
                                 0);
        }
        assert_int_equal(fx_register_full(&f, 100, 10, "full", once, false, 0, false, NULL),
                         -TIMERD_E_LIMIT_EXCEEDED);
        assert_int_equal(f.last.limit, TD_LIMIT_TIMERS);
        assert_int_equal(stats(&f).timers, TABLE);
        fx_done(&f);
}

/* The removals of the last transition, "owner:name@closed_usec" after another. */
static void removals_assert(const struct fx *f, const char *want)
{
        char text[1024] = "";
        size_t used = 0;

        for (size_t i = 0; i < f->last.n_removals; i++) {
                const struct td_removal *m = &f->last.removals[i];
                int w = snprintf(text + used, sizeof(text) - used, "%s%u:%s@%" PRIu64, i ? " " : "",
                                 m->owner, m->name, m->closed_usec);

                assert_true(w > 0 && (size_t)w < sizeof(text) - used);
                used += (size_t)w;
        }
        assert_string_equal(text, want);
}

/* Register `name` for uid in session, as a privileged caller (uid 0, the admin group) or not. */
static int register_as(struct fx *f, uint32_t uid, uint64_t session, const char *name,
                       bool privileged)
{
        const struct td_register_args a = {
            .caller = {.uid = uid, .session = session},
            .name = name,
            .declaration = fx_decl(TIMERD_POLICY_ONCE, 0),
            .privileged = privileged,
        };
        uint64_t generation;

        return fx_apply(f, registry_register(f->r, &f->now, &a, &generation));
}

/*
 * Unprivileged uids, each within its own limit and its share, fill the table up to max_timers -
 * reserved_timers live timers and no further; a privileged caller (Register and Reconcile) takes
 * the reserved places. Gone timers do not give the share back to the others: a privileged
 * session that closed leaves gone timers the others could otherwise replace one by one until the
 * reserve was theirs. Before: the others filled the whole table and root was refused
 * LimitExceeded timers.
 */
static void test_reserved_timers(void **state)
{
        enum { PER_OWNER = 2, TABLE = 6, RESERVED = 2 };
        struct registry_config c = {.max_timers_per_owner = PER_OWNER,
                                    .max_timers = TABLE,
                                    .reserved_timers = RESERVED,
                                    .first_generation = 1,
                                    .first_handle_generation = 1};
        struct td_reconcile_args a = {
            .caller = {.uid = 0, .session = 2},
            .name = "r",
            .declaration = fx_decl(TIMERD_POLICY_ONCE, 0),
            .desired = TIMERD_DESIRED_INACTIVE,
            .caller_is_owner = true,
        };
        uint64_t g;
        bool created;
        struct fx f;

        (void)state;
        fx_init(&f, &c);
        assert_int_equal(register_as(&f, 1, 1, "a", false), 0);
        assert_int_equal(register_as(&f, 1, 1, "b", false), 0);
        assert_int_equal(register_as(&f, 1, 1, "c", false), -TIMERD_E_LIMIT_EXCEEDED);
        assert_limit(&f, TD_LIMIT_TIMERS_PER_OWNER, PER_OWNER);
        assert_int_equal(register_as(&f, 2, 1, "a", false), 0);
        assert_int_equal(register_as(&f, 3, 1, "a", false), 0);
        /* The others' share is full: uid 2 is under its own limit, and refused at the share. */
        assert_int_equal(register_as(&f, 2, 1, "b", false), -TIMERD_E_LIMIT_EXCEEDED);
        assert_limit(&f, TD_LIMIT_TIMERS, TABLE - RESERVED);
        a.caller.uid = 2;
        a.privileged = false;
        assert_int_equal(fx_apply(&f, registry_reconcile(f.r, &f.now, &a, &g, &created)),
                         -TIMERD_E_LIMIT_EXCEEDED);
        assert_limit(&f, TD_LIMIT_TIMERS, TABLE - RESERVED);

        /* The reserved places: a privileged Register, then a privileged Reconcile. */
        assert_int_equal(register_as(&f, 0, 2, "a", true), 0);
        a.caller.uid = 0;
        a.privileged = true;
        assert_int_equal(fx_apply(&f, registry_reconcile(f.r, &f.now, &a, &g, &created)), 0);
        assert_true(created);
        assert_int_equal(stats(&f).timers, TABLE);
        /* Full for the privileged too (an admin, as root is at its own limit). */
        assert_int_equal(register_as(&f, 50, 2, "b", true), -TIMERD_E_LIMIT_EXCEEDED);
        assert_limit(&f, TD_LIMIT_TIMERS, TABLE);

        /* The privileged session closes: its two timers are gone, not yet freed. The others'
         * share is still full of live timers; the privileged find the reserve again. */
        fx_set_now(&f, TIMERD_CLOCK_REALTIME, 5);
        assert_int_equal(fx_apply(&f, registry_session_closed(f.r, &f.now, 2)), 0);
        assert_int_equal(stats(&f).timers, TABLE - RESERVED);
        assert_int_equal(stats(&f).reaping, RESERVED);
        assert_int_equal(register_as(&f, 2, 1, "b", false), -TIMERD_E_LIMIT_EXCEEDED);
        assert_limit(&f, TD_LIMIT_TIMERS, TABLE - RESERVED);
        assert_int_equal(stats(&f).reaping, RESERVED);
        assert_int_equal(register_as(&f, 0, 3, "c", true), 0);
        /* The table's memory was full: one gone timer was freed for it, the oldest, told as the
         * call's removal. */
        assert_int_equal(stats(&f).timers + stats(&f).reaping, TABLE);
        assert_int_equal(stats(&f).reaping, RESERVED - 1);
        removals_assert(&f, "0:a@5");

        /* The privileged timers count in the table too: with one of them live, the others get
         * a place back once two of theirs are removed. */
        assert_int_equal(
            fx_unregister(&f, (struct td_handle){.owner = 1, .name = "a", .generation = 1}), 0);
        assert_int_equal(register_as(&f, 4, 1, "a", false), -TIMERD_E_LIMIT_EXCEEDED);
        assert_int_equal(
            fx_unregister(&f, (struct td_handle){.owner = 1, .name = "b", .generation = 2}), 0);
        /* uid 2 already holds its share of that place (half of the 2 that uid 3 leaves); uid 4,
         * which holds nothing, takes it. */
        assert_int_equal(register_as(&f, 2, 1, "b", false), -TIMERD_E_LIMIT_EXCEEDED);
        assert_limit(&f, TD_LIMIT_TIMERS_SHARE, 1);
        assert_int_equal(register_as(&f, 4, 1, "a", false), 0);
        assert_int_equal(register_as(&f, 5, 1, "a", false), -TIMERD_E_LIMIT_EXCEEDED);
        assert_limit(&f, TD_LIMIT_TIMERS, TABLE - RESERVED);
        fx_done(&f);
}

/* The reserve is at most half the table: more would leave the others nothing to share. */
static void test_reserved_timers_at_most_half(void **state)
{
        struct registry_config c = {.max_timers = 4,
                                    .reserved_timers = 100,
                                    .first_generation = 1,
                                    .first_handle_generation = 1};
        struct fx f;

        (void)state;
        fx_init(&f, &c);
        assert_int_equal(register_as(&f, 1, 1, "a", false), 0);
        assert_int_equal(register_as(&f, 2, 1, "a", false), 0);
        assert_int_equal(register_as(&f, 3, 1, "a", false), -TIMERD_E_LIMIT_EXCEEDED);
        assert_limit(&f, TD_LIMIT_TIMERS, 2);
        assert_int_equal(register_as(&f, 0, 1, "a", true), 0);
        assert_int_equal(register_as(&f, 0, 1, "b", true), 0);
        assert_int_equal(register_as(&f, 0, 1, "c", true), -TIMERD_E_LIMIT_EXCEEDED);
        assert_limit(&f, TD_LIMIT_TIMERS, 4);
        fx_done(&f);
}

/*
 * Each transient timer of a closed session is a removal of the transition that frees it, once,
 * stamped with the realtime of the close: a mixed session's at the close, in the order they were
 * made; another's by the reap in that order, a step's worth at a time, a due or pending one set
 * aside for its turn, a name registered again first; retained timers and other sessions' never.
 */
static void test_removals(void **state)
{
        struct td_declaration retained = fx_decl(TIMERD_POLICY_ONCE, 0);
        struct td_declaration once = fx_decl(TIMERD_POLICY_ONCE, 0);
        struct td_declaration every = fx_decl(TIMERD_POLICY_INTERVAL, 100);
        struct td_snapshot kept;
        char name[16];
        uint64_t count;
        struct fx f;

        (void)state;
        retained.lifetime = TIMERD_LIFETIME_RETAINED;
        fx_init(&f, NULL);
        assert_int_equal(fx_register_full(&f, 1, 3, "z", once, false, 0, false, NULL), 0);
        assert_int_equal(fx_register_full(&f, 2, 3, "a", once, false, 0, false, NULL), 0);
        assert_int_equal(fx_register_full(&f, 1, 3, "kept", retained, false, 0, false, NULL), 0);
        assert_int_equal(fx_register_full(&f, 1, 4, "other", once, false, 0, false, NULL), 0);
        for (size_t i = 0; i < 6; i++) {
                snprintf(name, sizeof(name), "t%zu", i);
                /* t2 comes due while gone. */
                assert_int_equal(
                    fx_register_full(&f, 1, 5, name, i == 2 ? every : once, false, 0, false, NULL),
                    0);
        }

        fx_set_now(&f, TIMERD_CLOCK_REALTIME, 1000);
        assert_int_equal(fx_apply(&f, registry_session_closed(f.r, &f.now, 3)), 0);
        removals_assert(&f, "1:z@1000 2:a@1000");
        fx_set_now(&f, TIMERD_CLOCK_REALTIME, 2000);
        assert_int_equal(fx_apply(&f, registry_session_closed(f.r, &f.now, 5)), 0);
        removals_assert(&f, "");
        fx_set_now(&f, TIMERD_CLOCK_REALTIME, 3000);
        assert_int_equal(fx_apply(&f, registry_reap_step(f.r, &f.now, 2, &count)), 0);
        assert_int_equal(count, 2);
        removals_assert(&f, "1:t0@2000 1:t1@2000");
        /* Due: out of the queue, still to be freed in its turn. */
        fx_advance(&f, MONO, f.now.usec[MONO] + 100);
        removals_assert(&f, "");
        assert_int_equal(fx_count(&f, TD_EFFECT_DISPATCH), 0);
        /* Its name registered again: the gone one goes first, the new one stays. */
        assert_int_equal(fx_register_full(&f, 1, 6, "t4", once, false, 0, false, NULL), 0);
        removals_assert(&f, "1:t4@2000");
        assert_int_equal(fx_apply(&f, registry_reap_step(f.r, &f.now, 2, &count)), 0);
        removals_assert(&f, "1:t2@2000 1:t3@2000");
        assert_int_equal(fx_apply(&f, registry_reap_step(f.r, &f.now, 2, &count)), 0);
        removals_assert(&f, "1:t5@2000");
        assert_int_equal(fx_apply(&f, registry_session_closed(f.r, &f.now, 4)), 0);
        while (registry_reap_pending(f.r))
                assert_int_equal(fx_apply(&f, registry_reap_step(f.r, &f.now, 64, &count)), 0);
        removals_assert(&f, "1:other@3000");
        assert_int_equal(registry_get(f.r, 1, "kept", &kept), 0);
        assert_int_equal(registry_get(f.r, 1, "t4", &kept), 0);
        assert_int_equal(registry_get(f.r, 1, "other", &kept), -TIMERD_E_NOT_FOUND);
        fx_done(&f);
}

/* The removals of the timers t<from> .. t<to - 1> of uid 1 but t<skip>, closed at `closed`, in
 * that order. */
static void removals_assert_range(const struct fx *f, size_t from, size_t to, size_t skip,
                                  uint64_t closed)
{
        char want[1024] = "";
        size_t used = 0;

        for (size_t i = from; i < to; i++) {
                if (i == skip)
                        continue;
                int w = snprintf(want + used, sizeof(want) - used, "%s1:t%zu@%" PRIu64,
                                 used ? " " : "", i, closed);

                assert_true(w > 0 && (size_t)w < sizeof(want) - used);
                used += (size_t)w;
        }
        removals_assert(f, want);
}

/*
 * A session whose timers are every queued one empties the queues at its close (the kernel timers
 * are disarmed there and then): its gone timers fire never, are freed a step at a time in the
 * order they were made, each step's count and removals right, and the queues serve the timers
 * made meanwhile, on every clock, as if the gone ones had never been there.
 */
static void test_close_empties_queues(void **state)
{
        enum { N = 40, STEP = 7 };
        struct td_declaration inactive = fx_decl(TIMERD_POLICY_ONCE, 0);
        struct td_declaration once = fx_decl(TIMERD_POLICY_ONCE, 0);
        struct td_declaration boot = decl_at(TIMERD_POLICY_ONCE, 0, TIMERD_CLOCK_BOOTTIME, 30);
        char name[16];
        uint64_t count;
        size_t freed = 0;
        struct fx f;

        (void)state;
        inactive.lifetime = TIMERD_LIFETIME_RETAINED;
        fx_init(&f, NULL);
        /* Others' timers that are in no queue do not keep the queues from going. */
        assert_int_equal(fx_register_full(&f, 1, 3, "kept", inactive, false, 0, false, NULL), 0);
        for (size_t i = 0; i < N; i++) {
                snprintf(name, sizeof(name), "t%zu", i);
                /* Every third on another clock, coalescing: in two heaps of its queue. */
                assert_int_equal(fx_register_full(&f, 1, 2, name, i % 3 ? once : boot, true,
                                                  2000 + 10 * i, false, NULL),
                                 0);
        }
        assert_true(f.kernel[MONO].armed && f.kernel[TIMERD_CLOCK_BOOTTIME].armed);

        fx_set_now(&f, TIMERD_CLOCK_REALTIME, 77);
        assert_int_equal(fx_apply(&f, registry_session_closed(f.r, &f.now, 2)), 0);
        assert_false(f.kernel[MONO].armed);
        assert_false(f.kernel[TIMERD_CLOCK_BOOTTIME].armed);
        assert_int_equal(stats(&f).timers, 1);
        assert_int_equal(stats(&f).reaping, N);

        /* Timers made while the gone ones wait: one of a gone name (that one goes first). */
        assert_int_equal(fx_register_full(&f, 1, 4, "fresh", once, true, 2500, false, NULL), 0);
        assert_int_equal(fx_register_full(&f, 1, 4, "t5", boot, true, 2200, false, NULL), 0);
        removals_assert(&f, "1:t5@77");
        assert_int_equal(stats(&f).reaping, N - 1);
        assert_int_equal(f.kernel[MONO].deadline_usec, 2500);

        for (size_t k = 0; registry_reap_pending(f.r); k++) {
                uint64_t reaping = stats(&f).reaping;

                assert_int_equal(fx_apply(&f, registry_reap_step(f.r, &f.now, STEP, &count)), 0);
                assert_int_equal(stats(&f).reaping, reaping - count);
                /* t5 went before: the step that reaches it frees one more after it. */
                size_t to = freed + count + (freed <= 5 && freed + count > 5);
                removals_assert_range(&f, freed, to, 5, 77);
                freed = to;
                /* Halfway, the clocks pass every gone deadline: only the new timers fire. */
                if (k == 2) {
                        assert_int_equal(fx_advance(&f, TIMERD_CLOCK_BOOTTIME, 9000), 1);
                        assert_string_equal(fx_dispatch(&f, 0)->name, "t5");
                        assert_int_equal(fx_advance(&f, MONO, 9000), 1);
                        assert_string_equal(fx_dispatch(&f, 0)->name, "fresh");
                }
        }
        assert_int_equal(freed, N);
        assert_int_equal(stats(&f).reaping, 0);
        assert_int_equal(stats(&f).timers, 3);
        struct td_snapshot fresh;
        assert_int_equal(registry_get(f.r, 1, "fresh", &fresh), 0);
        assert_int_equal(fresh.state, TIMERD_STATE_RUNNING);
        /* And the queue takes timers as before. */
        assert_int_equal(fx_register_full(&f, 1, 4, "t0", once, true, 10000, false, NULL), 0);
        assert_int_equal(fx_advance(&f, MONO, 10000), 1);
        fx_done(&f);
}

/*
 * The queues stay when anything else is queued: another session's timer, or one of the closing
 * session's that is running and stays queued (an interval). Its gone timers then wait in the
 * queues, set aside when due, and the reap takes them out one by one.
 */
static void test_close_keeps_shared_queues(void **state)
{
        struct td_declaration once = fx_decl(TIMERD_POLICY_ONCE, 0);
        struct td_declaration every = fx_decl(TIMERD_POLICY_INTERVAL, 100);
        uint64_t count;
        struct fx *f = *state;

        /* Another session's, queued. */
        assert_int_equal(fx_register_full(f, 1, 3, "other", once, true, 5000, false, NULL), 0);
        assert_int_equal(fx_register_full(f, 1, 2, "t0", once, true, 2000, false, NULL), 0);
        assert_int_equal(fx_register_full(f, 1, 2, "t1", once, true, 2100, false, NULL), 0);
        fx_set_now(f, TIMERD_CLOCK_REALTIME, 0);
        assert_int_equal(fx_apply(f, registry_session_closed(f->r, &f->now, 2)), 0);
        /* Still armed for the gone t0: met when due, and set aside. */
        assert_true(f->kernel[MONO].armed);
        assert_int_equal(f->kernel[MONO].deadline_usec, 2000);
        assert_int_equal(fx_advance(f, MONO, 2000), 0);
        assert_int_equal(f->kernel[MONO].deadline_usec, 2100);
        assert_int_equal(fx_apply(f, registry_reap_step(f->r, &f->now, 8, &count)), 0);
        assert_int_equal(count, 2);
        removals_assert(f, "1:t0@0 1:t1@0");
        assert_int_equal(f->kernel[MONO].deadline_usec, 5000);

        /* Its own interval, running: queued though not scheduled. */
        assert_int_equal(fx_register_full(f, 1, 4, "tick", every, false, 0, false, NULL), 0);
        assert_int_equal(fx_register_full(f, 1, 4, "t2", once, true, 5200, false, NULL), 0);
        assert_int_equal(fx_advance(f, MONO, 2100), 1);
        struct td_snapshot tick;
        assert_int_equal(registry_get(f->r, 1, "tick", &tick), 0);
        assert_int_equal(tick.state, TIMERD_STATE_RUNNING);
        assert_int_equal(fx_apply(f, registry_session_closed(f->r, &f->now, 4)), 0);
        assert_true(f->kernel[MONO].armed);
        assert_int_equal(stats(f).reaping, 2);
        assert_int_equal(fx_apply(f, registry_reap_step(f->r, &f->now, 1, &count)), 0);
        removals_assert(f, "1:tick@0");
        assert_int_equal(fx_apply(f, registry_reap_step(f->r, &f->now, 1, &count)), 0);
        removals_assert(f, "1:t2@0");
        /* The step after the last frees the session's record. */
        assert_int_equal(fx_apply(f, registry_reap_step(f->r, &f->now, 1, &count)), 0);
        assert_int_equal(count, 0);
        assert_false(registry_reap_pending(f->r));
        assert_int_equal(fx_advance(f, MONO, 5200), 1);
        assert_string_equal(fx_dispatch(f, 0)->name, "other");
}

/* A new timer past max_timers frees the gone timer the reap would free next, as a removal. */
static void test_removal_at_the_limit(void **state)
{
        const struct registry_config config = {
            .first_generation = 1, .first_handle_generation = 1, .max_timers = 3};
        struct fx f;

        (void)state;
        fx_init(&f, &config);
        /* An admin's timers: no share of the table holds it. */
        assert_int_equal(register_as(&f, 1, 3, "b", true), 0);
        assert_int_equal(register_as(&f, 1, 3, "a", true), 0);
        assert_int_equal(register_as(&f, 1, 3, "c", true), 0);
        fx_set_now(&f, TIMERD_CLOCK_REALTIME, 7);
        assert_int_equal(fx_apply(&f, registry_session_closed(f.r, &f.now, 3)), 0);
        /* "c" is taken and the table full: the oldest gone one makes room, then "c" its own. */
        assert_int_equal(register_as(&f, 1, 4, "c", true), 0);
        removals_assert(&f, "1:b@7 1:c@7");
        assert_int_equal(register_as(&f, 1, 4, "d", true), 0);
        removals_assert(&f, "");
        assert_int_equal(register_as(&f, 1, 4, "e", true), 0);
        removals_assert(&f, "1:a@7");
        fx_done(&f);
}

static void test_list_and_get(void **state)
{
        static const uint32_t owners[] = {5, 2, 5, 2, 9};
        static const char *const names[] = {"m", "z", "a", "b", "x"};
        static const uint32_t sorted_owners[] = {2, 2, 5, 5, 9};
        static const char *const sorted_names[] = {"b", "z", "a", "m", "x"};
        struct td_snapshot *list, s;
        long n;
        struct fx f;

        (void)state;
        fx_init(&f, NULL);
        for (size_t i = 0; i < 5; i++)
                assert_int_equal(fx_register_full(&f, owners[i], i + 1, names[i],
                                                  fx_decl(TIMERD_POLICY_INTERVAL, 10 * (i + 1)),
                                                  false, 0, false, NULL),
                                 0);
        n = registry_list(f.r, 0, true, &list);
        assert_int_equal(n, 5);
        for (size_t i = 0; i < 5; i++) {
                assert_int_equal(list[i].owner, sorted_owners[i]);
                assert_string_equal(list[i].name, sorted_names[i]);
        }
        free(list);
        n = registry_list(f.r, 5, false, &list);
        assert_int_equal(n, 2);
        assert_string_equal(list[0].name, "a");
        assert_string_equal(list[1].name, "m");
        assert_int_equal(list[1].declaration.cadence_usec, 10);
        free(list);
        assert_int_equal(registry_list(f.r, 77, false, &list), 0);
        assert_null(list);

        assert_int_equal(registry_get(f.r, 2, "z", &s), 0);
        assert_int_equal(s.session, 2);
        assert_int_equal(registry_get(f.r, 2, "nope", &s), -TIMERD_E_NOT_FOUND);
        assert_int_equal(registry_get(f.r, 5, "z", &s), -TIMERD_E_NOT_FOUND);
        assert_int_equal(registry_get(f.r, 2, "", &s), -TIMERD_E_INVALID_NAME);
        fx_done(&f);

        fx_init(&f, NULL);
        assert_int_equal(registry_list(f.r, 0, true, &list), 0);
        assert_null(list);
        fx_done(&f);
}

static void test_stats_counts(void **state)
{
        struct registry_stats st;
        uint64_t g;
        struct fx *f = *state;

        assert_int_equal(fx_register(f, "idle", fx_decl(TIMERD_POLICY_ONCE, 0), NULL), 0);
        assert_int_equal(fx_register(f, "sched", fx_decl(TIMERD_POLICY_INTERVAL, 5000), NULL), 0);
        assert_int_equal(fx_register(f, "run", fx_decl(TIMERD_POLICY_INTERVAL, 100), NULL), 0);
        assert_int_equal(fx_register(f, "bad", fx_decl(TIMERD_POLICY_WATCHDOG, 100), &g), 0);
        assert_int_equal(fx_advance(f, MONO, 1100), 2);
        assert_int_equal(fx_complete(f, fx_token(fx_dispatch(f, 0)),
                                     TIMERD_OUTCOME_INVARIANT_FAILURE, TIMERD_DIRECTIVE_CONTINUE,
                                     0),
                         0);
        st = stats(f);
        assert_int_equal(st.timers, 4);
        assert_int_equal(st.scheduled, 1);
        assert_int_equal(st.running, 1);
        assert_int_equal(st.failed, 1);
        assert_int_equal(st.pending, 1);
        assert_int_equal(st.firings, 2);
}

static struct registry_stats owner_stats(const struct fx *f, uint32_t owner)
{
        struct registry_stats s;

        registry_get_owner_stats(f->r, owner, &s);
        return s;
}

/* An unprivileged caller's Status counts its own timers only, kept as they change. */
static void test_owner_stats_counts(void **state)
{
        struct td_declaration retained = fx_decl(TIMERD_POLICY_INTERVAL, 5000);
        struct registry_stats st;
        uint64_t other;
        struct fx *f = *state;

        retained.lifetime = TIMERD_LIFETIME_RETAINED;
        assert_int_equal(fx_register(f, "idle", fx_decl(TIMERD_POLICY_ONCE, 0), NULL), 0);
        assert_int_equal(fx_register(f, "sched", fx_decl(TIMERD_POLICY_INTERVAL, 5000), NULL), 0);
        assert_int_equal(fx_register(f, "run", fx_decl(TIMERD_POLICY_INTERVAL, 100), NULL), 0);
        assert_int_equal(fx_register(f, "bad", fx_decl(TIMERD_POLICY_WATCHDOG, 100), NULL), 0);
        assert_int_equal(
            fx_register_full(f, FX_UID + 1, 9, "theirs", retained, false, 0, false, &other), 0);
        assert_int_equal(fx_advance(f, MONO, 1100), 2);
        assert_int_equal(fx_complete(f, fx_token(fx_dispatch(f, 0)),
                                     TIMERD_OUTCOME_INVARIANT_FAILURE, TIMERD_DIRECTIVE_CONTINUE,
                                     0),
                         0);
        st = owner_stats(f, FX_UID);
        assert_int_equal(st.timers, 4);
        assert_int_equal(st.scheduled, 1);
        assert_int_equal(st.running, 1);
        assert_int_equal(st.failed, 1);
        assert_int_equal(st.pending, 1);
        st = owner_stats(f, FX_UID + 1);
        assert_int_equal(st.timers, 1);
        assert_int_equal(st.scheduled, 1);
        assert_int_equal(st.running + st.failed + st.pending, 0);
        st = owner_stats(f, FX_UID + 2);
        assert_int_equal(st.timers + st.scheduled + st.running + st.failed + st.pending, 0);

        /* The other owner's timer goes: its counts go with it, ours stay. */
        struct td_handle theirs = fx_claim("theirs", other);
        theirs.owner = FX_UID + 1;
        assert_int_equal(fx_unregister(f, theirs), 0);
        assert_int_equal(owner_stats(f, FX_UID + 1).timers, 0);
        assert_int_equal(owner_stats(f, FX_UID).timers, 4);
}

/* What closing a session would take: its transient timers, the runs handed to it. */
static void test_session_holds(void **state)
{
        struct td_declaration retained = fx_decl(TIMERD_POLICY_INTERVAL, 500);
        struct td_dispatch d;
        struct fx *f = *state;

        retained.lifetime = TIMERD_LIFETIME_RETAINED;
        assert_false(registry_session_holds(f->r, FX_SESSION));
        assert_int_equal(fx_register(f, "mine", fx_decl(TIMERD_POLICY_ONCE, 0), NULL), 0);
        assert_true(registry_session_holds(f->r, FX_SESSION));
        assert_int_equal(fx_register_full(f, FX_UID, 3, "kept", retained, false, 0, false, NULL),
                         0);
        assert_false(registry_session_holds(f->r, 3));

        /* A run handed to session 4 is held by it until completed. */
        assert_int_equal(fx_advance(f, MONO, 1500), 1);
        d = take(f, FX_UID, NULL, 0, 4, 1);
        assert_true(registry_session_holds(f->r, 4));
        assert_int_equal(
            fx_complete(f, fx_token(&d), TIMERD_OUTCOME_SUCCESS, TIMERD_DIRECTIVE_CONTINUE, 0), 0);
        assert_false(registry_session_holds(f->r, 4));

        assert_int_equal(fx_apply(f, registry_session_closed(f->r, &f->now, FX_SESSION)), 0);
        assert_false(registry_session_holds(f->r, FX_SESSION));
}

static void test_rearm_after_clock_set(void **state)
{
        uint64_t g;
        struct fx *f = *state;

        assert_int_equal(fx_register_at(f, "wall",
                                        decl_at(TIMERD_POLICY_ONCE, 0, TIMERD_CLOCK_REALTIME, 0),
                                        5000, NULL),
                         0);
        g = f->kernel[TIMERD_CLOCK_REALTIME].generation;
        assert_int_equal(fx_apply(f, registry_rearm(f->r, &f->now, TIMERD_CLOCK_REALTIME)), 0);
        assert_int_equal(f->last.n_effects, 1);
        assert_arm(f, 0, TIMERD_CLOCK_REALTIME, 5000);
        assert_true(f->last.effects[0].arm.generation > g);
        assert_int_equal(fx_apply(f, registry_rearm(f->r, &f->now, TIMERD_CLOCK_BOOTTIME)), 0);
        assert_int_equal(f->last.n_effects, 0);
        assert_int_equal(fx_apply(f, registry_rearm(f->r, &f->now, TIMERD_CLOCK_MAX)), -EINVAL);
}

/*
 * Subordinate uids share their person's limit: uids 100..199 are alice's (10), 200..299 bob's
 * (20). Two of alice's uids together are refused at max_timers_per_owner, while bob's are served;
 * alice's own uid is held to its own timers, so her subordinate uids never keep her out; closing a
 * session gives its account the room back; a new table re-charges every owner at once.
 */
static void test_limits_by_account(void **state)
{
        enum { PER_OWNER = 3 };
        static const struct subuid_range ranges[] = {
            {.first = 100, .count = 100, .account = 10},
            {.first = 200, .count = 100, .account = 20},
        };
        static const struct subuid_range moved[] = {{.first = 100, .count = 100, .account = 30}};
        struct registry_config c = {
            .max_timers_per_owner = PER_OWNER, .first_generation = 1, .first_handle_generation = 1};
        struct subuids table, table2;
        struct tally prepared;
        struct fx f;

        (void)state;
        assert_int_equal(subuids_build(&table, ranges, 2, NULL), 0);
        assert_int_equal(subuids_build(&table2, moved, 1, NULL), 0);
        fx_init(&f, &c);
        /* Timers made before the table are charged to their accounts when it comes. */
        assert_int_equal(register_as(&f, 100, 1, "a", false), 0);
        assert_int_equal(registry_subuids_prepare(f.r, &table, &prepared), 0);
        registry_subuids_commit(f.r, &table, &prepared);
        assert_int_equal(registry_check(f.r), 0);
        assert_int_equal(register_as(&f, 100, 1, "b", false), 0);
        assert_int_equal(register_as(&f, 101, 2, "a", false), 0);
        assert_int_equal(register_as(&f, 102, 3, "a", false), -TIMERD_E_LIMIT_EXCEEDED);
        assert_limit(&f, TD_LIMIT_TIMERS_PER_OWNER, PER_OWNER);
        assert_int_equal(register_as(&f, 101, 2, "b", false), -TIMERD_E_LIMIT_EXCEEDED);
        /* Privilege changes nothing for a subordinate uid. */
        assert_int_equal(register_as(&f, 102, 3, "a", true), -TIMERD_E_LIMIT_EXCEEDED);
        /* Another person is served; so is a uid in no range. */
        assert_int_equal(register_as(&f, 200, 4, "a", false), 0);
        assert_int_equal(register_as(&f, 201, 4, "a", false), 0);
        assert_int_equal(register_as(&f, 7, 4, "a", false), 0);
        /* alice herself keeps her own limit. */
        assert_int_equal(register_as(&f, 10, 5, "a", false), 0);
        assert_int_equal(register_as(&f, 10, 5, "b", false), 0);
        assert_int_equal(register_as(&f, 10, 5, "c", false), 0);
        assert_int_equal(register_as(&f, 10, 5, "d", false), -TIMERD_E_LIMIT_EXCEEDED);
        /* ... and what she holds counts for her subordinate uids: freeing uid 101's timer is
         * not room enough while she holds three. */
        assert_int_equal(fx_apply(&f, registry_session_closed(f.r, &f.now, 2)), 0);
        assert_int_equal(register_as(&f, 102, 3, "a", false), -TIMERD_E_LIMIT_EXCEEDED);
        assert_int_equal(fx_apply(&f, registry_session_closed(f.r, &f.now, 5)), 0);
        assert_int_equal(register_as(&f, 102, 3, "a", false), 0);
        assert_int_equal(register_as(&f, 102, 3, "b", false), -TIMERD_E_LIMIT_EXCEEDED);

        /* A new table: 100..199 are someone else's, and bob's uids are their own again. */
        assert_int_equal(registry_subuids_prepare(f.r, &table2, &prepared), 0);
        registry_subuids_commit(f.r, &table2, &prepared);
        assert_int_equal(registry_check(f.r), 0);
        subuids_done(&table);
        assert_int_equal(register_as(&f, 10, 7, "a", false), 0);
        assert_int_equal(register_as(&f, 201, 4, "b", false), 0);
        assert_int_equal(register_as(&f, 201, 4, "c", false), 0);
        /* uid 100's two and uid 102's one are the account's three. */
        assert_int_equal(register_as(&f, 103, 6, "a", false), -TIMERD_E_LIMIT_EXCEEDED);
        /* No table at all: every uid is its own account. */
        assert_int_equal(registry_subuids_prepare(f.r, NULL, &prepared), 0);
        registry_subuids_commit(f.r, NULL, &prepared);
        assert_int_equal(registry_check(f.r), 0);
        assert_int_equal(register_as(&f, 103, 6, "a", false), 0);
        fx_done(&f);
        subuids_done(&table2);
}

/* Register timers for uid until refused; how many it got. */
static unsigned register_until_refused(struct fx *f, uint32_t uid, uint64_t session,
                                       bool privileged)
{
        char name[16];
        unsigned n = 0;

        for (;; n++) {
                snprintf(name, sizeof(name), "t%u", n);
                if (register_as(f, uid, session, name, privileged) < 0)
                        return n;
        }
}

/*
 * The table's part for the unprivileged is shared by a dynamic threshold: a charge holds less than
 * what is free. One uid alone gets half of it; each that comes after gets half of what the ones
 * before left, so a uid that holds nothing finds room while any place is free; a person's
 * subordinate uids share one charge; root and the admin group are held to the table alone.
 * Before: two uids, each within --max-timers-per-owner (half the table), filled it and every
 * other uid was refused LimitExceeded timers.
 */
static void test_timer_share(void **state)
{
        enum { TABLE = 68, RESERVED = 4, PART = TABLE - RESERVED };
        static const struct subuid_range ranges[] = {{.first = 100, .count = 100, .account = 10}};
        static const unsigned got[] = {32, 16, 8, 4, 2, 1, 1};
        struct registry_config c = {.max_timers = TABLE,
                                    .reserved_timers = RESERVED,
                                    .first_generation = 1,
                                    .first_handle_generation = 1};
        struct subuids table;
        struct tally prepared;
        struct fx f;

        (void)state;
        fx_init(&f, &c);
        for (unsigned i = 0; i < 7; i++) {
                assert_int_equal(register_until_refused(&f, 1 + i, 1 + i, false), got[i]);
                if (i < 6)
                        assert_limit(&f, TD_LIMIT_TIMERS_SHARE, got[i]);
        }
        assert_int_equal(stats(&f).timers, PART);
        assert_limit(&f, TD_LIMIT_TIMERS, PART);
        assert_int_equal(register_until_refused(&f, 8, 8, false), 0);
        assert_limit(&f, TD_LIMIT_TIMERS, PART);
        /* The reserve is the privileged's, and no share holds them. */
        assert_int_equal(register_until_refused(&f, 0, 9, true), RESERVED);
        assert_limit(&f, TD_LIMIT_TIMERS, TABLE);
        /* uid 1's 32 go with its connection: a newcomer gets half of what the others leave of
         * the part, (64 - 36) / 2. */
        assert_int_equal(fx_apply(&f, registry_session_closed(f.r, &f.now, 1)), 0);
        assert_int_equal(stats(&f).timers, TABLE - 32);
        assert_int_equal(register_until_refused(&f, 9, 10, false), (PART - (TABLE - 32)) / 2);
        assert_limit(&f, TD_LIMIT_TIMERS_SHARE, (PART - (TABLE - 32)) / 2);
        fx_done(&f);

        /* One person's subordinate uids are one charge; the person's own uid is another. */
        assert_int_equal(subuids_build(&table, ranges, 1, NULL), 0);
        fx_init(&f, &c);
        assert_int_equal(registry_subuids_prepare(f.r, &table, &prepared), 0);
        registry_subuids_commit(f.r, &table, &prepared);
        assert_int_equal(register_until_refused(&f, 100, 1, false), 32);
        assert_int_equal(register_until_refused(&f, 101, 1, false), 0);
        assert_limit(&f, TD_LIMIT_TIMERS_SHARE, 32);
        assert_int_equal(register_until_refused(&f, 10, 1, false), 16);
        assert_int_equal(register_until_refused(&f, 7, 1, false), 8);
        assert_int_equal(registry_check(f.r), 0);
        fx_done(&f);
        subuids_done(&table);
}

/* A call brings in line the kernel timers of the clocks whose queue it changed, each of them and
 * no other: a clock it did not touch keeps its arm, one it left or joined is re-armed. */
static void test_sync_the_clocks_touched(void **state)
{
        struct td_declaration mono = fx_decl(TIMERD_POLICY_ONCE, 0), boot = mono, real = mono;
        uint64_t m, m2;
        struct fx *f = *state;

        boot.clock = TIMERD_CLOCK_BOOTTIME;
        real.clock = TIMERD_CLOCK_REALTIME;
        assert_int_equal(fx_register_at(f, "m", mono, 1000, &m), 0);
        assert_int_equal(f->last.n_effects, 1);
        assert_arm(f, 0, MONO, 1000);
        assert_int_equal(fx_register_at(f, "r", real, 3000, NULL), 0);
        assert_int_equal(f->last.n_effects, 1);
        assert_arm(f, 0, TIMERD_CLOCK_REALTIME, 3000);
        /* Behind the monotonic clock's first: no clock's arm moves. */
        assert_int_equal(fx_register_at(f, "m2", mono, 5000, &m2), 0);
        assert_int_equal(f->last.n_effects, 0);
        /* Its first gone: the monotonic clock alone, armed for the next. */
        assert_int_equal(fx_unregister(f, fx_claim("m", m)), 0);
        assert_int_equal(f->last.n_effects, 1);
        assert_arm(f, 0, MONO, 5000);
        /* Declared again on another clock: the one it left and the one it joined. */
        assert_int_equal(
            fx_register_full(f, FX_UID, FX_SESSION, "m2", boot, true, 2000, true, NULL), 0);
        assert_int_equal(f->last.n_effects, 2);
        assert_disarm(f, 0, MONO);
        assert_arm(f, 1, TIMERD_CLOCK_BOOTTIME, 2000);
        /* The session's timers emptied every queue at once: each clock that was armed. */
        assert_int_equal(fx_apply(f, registry_session_closed(f->r, &f->now, FX_SESSION)), 0);
        assert_int_equal(f->last.n_effects, 2);
        assert_disarm(f, 0, TIMERD_CLOCK_BOOTTIME);
        assert_disarm(f, 1, TIMERD_CLOCK_REALTIME);
        assert_false(f->kernel[TIMERD_CLOCK_BOOTTIME].armed);
        assert_false(f->kernel[TIMERD_CLOCK_REALTIME].armed);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_name_valid),
            cmocka_unit_test(test_new_rejects_bad_config),
            FX_TEST(test_register_rejects_bad_input),
            cmocka_unit_test(test_register_generations_and_arms),
            FX_TEST(test_already_registered_and_replace),
            FX_TEST(test_replace_moves_transient_session),
            FX_TEST(test_once_life),
            FX_TEST(test_once_schedule_during_run),
            FX_TEST(test_after_completion_life),
            FX_TEST(test_watchdog_prearmed_and_kick),
            FX_TEST(test_interval_overruns_after_jump),
            FX_TEST(test_firing_during_run_never_queues),
            cmocka_unit_test(test_min_cadence),
            FX_TEST(test_pending_costs_no_wakeups),
            FX_TEST(test_interval_schedule_during_run),
            FX_TEST(test_wrong_policy),
            FX_TEST(test_stale_claims_and_tokens),
            FX_TEST(test_claim_after_unregister_expired),
            FX_TEST(test_complete_outcomes_and_stop),
            FX_TEST(test_cancel),
            FX_TEST(test_reschedule),
            FX_TEST(test_reschedule_cadence_is_live),
            FX_TEST(test_reconcile_repins_signal_timers),
            FX_TEST(test_reconcile_create_reuse_conflict),
            FX_TEST(test_reconcile_desired),
            FX_TEST(test_reconcile_during_run),
            FX_TEST(test_reconcile_scheduled_with_deadline),
            FX_TEST(test_dispatch_owed_and_past_due),
            FX_TEST(test_coalescing),
            FX_TEST(test_same_deadline_dispatch_order),
            FX_TEST(test_handover_rejects_bad_input),
            FX_TEST(test_handover_once),
            FX_TEST(test_handover_order_and_coalescing),
            FX_TEST(test_rare_fields_beside_runs),
            FX_TEST(test_handover_interval_and_watchdog),
            FX_TEST(test_handover_reconcile_adopts_the_callers),
            FX_TEST(test_handover_reconcile_invalid),
            cmocka_unit_test(test_handover_ignored),
            FX_TEST(test_handover_reschedule_cadence),
            FX_TEST(test_earliest_deadline_moves),
            FX_TEST(test_stale_expiry_dropped),
            FX_TEST(test_provider_binding_failure),
            cmocka_unit_test(test_silenced_owners),
            FX_TEST(test_provider_failure_takes_coalesced_batch),
            FX_TEST(test_session_closed),
            FX_TEST(test_last_session_cache),
            cmocka_unit_test(test_session_closed_gone_at_once),
            FX_TEST(test_session_closed_detaches_owner),
            FX_TEST(test_session_closed_shares_owner),
            cmocka_unit_test(test_shrink_after_session_closed),
            FX_TEST(test_pending_firings),
            cmocka_unit_test(test_generation_overflow),
            cmocka_unit_test(test_handle_generation_overflow),
            cmocka_unit_test(test_deadline_overflow),
            FX_TEST(test_duration_overflow),
            cmocka_unit_test(test_limits),
            cmocka_unit_test(test_owners_taking_turns),
            cmocka_unit_test(test_limits_by_account),
            cmocka_unit_test(test_limits_count_gone_timers),
            cmocka_unit_test(test_reserved_timers),
            cmocka_unit_test(test_reserved_timers_at_most_half),
            cmocka_unit_test(test_timer_share),
            cmocka_unit_test(test_list_and_get),
            cmocka_unit_test(test_removals),
            cmocka_unit_test(test_removal_at_the_limit),
            cmocka_unit_test(test_close_empties_queues),
            FX_TEST(test_close_keeps_shared_queues),
            FX_TEST(test_stats_counts),
            FX_TEST(test_owner_stats_counts),
            FX_TEST(test_session_holds),
            FX_TEST(test_rearm_after_clock_set),
            FX_TEST(test_sync_the_clocks_touched),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
