/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * Which parked request a firing or an alarm goes to, in the cases the queue's indexes must keep
 * in park order: Sleeps that resume (into their session or another), Sleeps that leave while an
 * alarm is pending for them, alarms pending in several sessions, Waits behind Sleeps.
 */

#include "parked-test.h"

static const struct parked_effect *observation_of(struct parked_transition t, size_t i,
                                                  uint64_t cookie, const char *name,
                                                  uint64_t alarms)
{
        assert_int_equal(t.failure, 0);
        assert_true(i < t.n_effects);
        const struct parked_effect *f = &t.effects[i];
        assert_int_equal(f->kind, PARKED_EFFECT_OBSERVATION);
        assert_int_equal(f->cookie, cookie);
        assert_string_equal(f->observation.name, name);
        assert_int_equal(f->observation.alarms, alarms);
        return f;
}

/* A Sleep observed and resumed keeps its place before Sleeps that parked while it was away. */
static void test_resumed_sleep_keeps_its_place(void **state)
{
        (void)state;
        struct parked_config config = test_config();
        struct parked *q = test_new(&config);
        struct td_now now = test_now(0);
        struct parked_ticket ticket;
        uint64_t lease;

        struct parked_continuation first = sleep_ok(q, &now, OWNER_A, 1, 1, 1000);
        struct parked_continuation c = observe(q, &now, OWNER_A, 1, 1, &lease);
        assert_int_equal(
            finish(q, &now, OWNER_A, 1, &c, lease, PARKED_ACTION_RESUME, 2, &ticket).n_effects, 0);
        struct parked_continuation later = sleep_ok(q, &now, OWNER_A, 1, 3, 1000);
        only_effect(resume(q, &now, OWNER_A, 1, &ticket, 4), PARKED_EFFECT_OBSERVABLE, 0);

        const struct parked_effect *f =
            observation_of(alarm_on(q, &now, OWNER_A, 1, "alarm"), 0, 4, "alarm", 1);
        assert_int_equal(f->continuation.nonce, first.nonce);

        /* and the later one is next */
        assert_int_equal(finish(q, &now, OWNER_A, 1, &f->continuation, f->observation.lease,
                                PARKED_ACTION_TERMINATE, 5, &ticket)
                             .n_effects,
                         2);
        f = observation_of(alarm_on(q, &now, OWNER_A, 1, "next"), 0, 3, "next", 1);
        assert_int_equal(f->continuation.nonce, later.nonce);
        parked_free(q);
}

/* The Sleep an alarm of its session would take leaves (deadline, closed session): the next one
 * of that session takes it, and the end of an observation is announced at the longest waiting. */
static void test_next_sleep_of_the_session_takes_over(void **state)
{
        (void)state;
        struct parked_config config = test_config();
        struct parked *q = test_new(&config);
        struct td_now now = test_now(0);
        struct parked_ticket ticket;
        size_t retired;
        uint64_t lease;

        struct parked_continuation x = observed_sleep(q, &now, &lease);
        sleep_ok(q, &now, OWNER_A, 2, 2, 100);
        struct parked_continuation p = sleep_ok(q, &now, OWNER_A, 2, 3, 1000);
        struct parked_continuation r = sleep_ok(q, &now, OWNER_A, 3, 4, 1000);

        now = test_now(100);
        only_effect(checked(q, parked_expire(q, &now)), PARKED_EFFECT_ELAPSED, 2);

        struct parked_transition t =
            finish(q, &now, OWNER_A, 1, &x, lease, PARKED_ACTION_TERMINATE, 9, &ticket);
        assert_int_equal(t.n_effects, 2);
        assert_int_equal(t.effects[1].kind, PARKED_EFFECT_OBSERVABLE);
        assert_int_equal(t.effects[1].session, 2);
        const struct parked_effect *f =
            observation_of(alarm_on(q, &now, OWNER_A, 2, "two"), 0, 3, "two", 1);
        assert_int_equal(f->continuation.nonce, p.nonce);

        /* the observing Sleep's session closes: announced at R's, which then takes an alarm of
         * the gone session */
        t = checked(q, parked_session_closed(q, &now, 2, &retired));
        assert_int_equal(retired, 1);
        f = only_effect(t, PARKED_EFFECT_OBSERVABLE, 0);
        assert_int_equal(f->session, 3);
        f = observation_of(alarm_on(q, &now, OWNER_A, 2, "two"), 0, 4, "two", 1);
        assert_int_equal(f->continuation.nonce, r.nonce);
        parked_free(q);
}

/* A Sleep resumed into a session goes before that session's later Sleeps. */
static void test_resume_into_a_session(void **state)
{
        (void)state;
        struct parked_config config = test_config();
        struct parked *q = test_new(&config);
        struct td_now now = test_now(0);
        struct parked_ticket ticket, unused;
        uint64_t lease, lease_o;

        struct parked_continuation s = sleep_ok(q, &now, OWNER_A, 1, 1, 1000);
        struct parked_continuation c = observe(q, &now, OWNER_A, 1, 1, &lease);
        assert_int_equal(
            finish(q, &now, OWNER_A, 1, &c, lease, PARKED_ACTION_RESUME, 2, &ticket).n_effects, 0);
        sleep_ok(q, &now, OWNER_A, 3, 3, 1000);
        struct parked_continuation o = observe(q, &now, OWNER_A, 3, 3, &lease_o);
        struct parked_continuation n = sleep_ok(q, &now, OWNER_A, 2, 4, 1000);
        assert_int_equal(resume(q, &now, OWNER_A, 2, &ticket, 5).n_effects, 0);

        struct parked_transition t =
            finish(q, &now, OWNER_A, 3, &o, lease_o, PARKED_ACTION_TERMINATE, 9, &unused);
        assert_int_equal(t.n_effects, 2);
        assert_int_equal(t.effects[1].kind, PARKED_EFFECT_OBSERVABLE);
        const struct parked_effect *f =
            observation_of(alarm_on(q, &now, OWNER_A, 2, "two"), 0, 5, "two", 1);
        assert_int_equal(f->continuation.nonce, s.nonce);
        assert_int_equal(f->session, 2);

        t = finish(q, &now, OWNER_A, 2, &f->continuation, f->observation.lease,
                   PARKED_ACTION_TERMINATE, 10, &unused);
        assert_int_equal(t.n_effects, 2);
        f = observation_of(alarm_on(q, &now, OWNER_A, 2, "two again"), 0, 4, "two again", 1);
        assert_int_equal(f->continuation.nonce, n.nonce);
        parked_free(q);
}

/* Firings go to the oldest matching Wait, past any number of Sleeps; a stream goes to the back. */
static void test_waits_behind_sleeps(void **state)
{
        (void)state;
        struct parked_config config = test_config();
        struct parked *q = test_new(&config);
        struct td_now now = test_now(0);
        struct parked_continuation c;
        const char *x[] = {"x"};
        bool taken;

        for (uint64_t i = 0; i < 100; i++)
                sleep_ok(q, &now, OWNER_A, 1, 100 + i, 1000);
        assert_int_equal(wait_on(q, OWNER_A, 1, 1, NULL, 0, true, &c).failure, 0);
        sleep_ok(q, &now, OWNER_A, 1, 200, 1000);
        assert_int_equal(wait_on(q, OWNER_A, 1, 2, x, 1, false, &c).failure, 0);
        sleep_ok(q, &now, OWNER_A, 1, 201, 1000);
        wait_ok(q, OWNER_A, 2, 3);
        wait_ok(q, OWNER_B, 3, 4);

        const uint64_t expect[][2] = {{'y', 1}, {'y', 3}, {'x', 2}, {'x', 1}, {'y', 1}};
        for (size_t i = 0; i < sizeof(expect) / sizeof(expect[0]); i++) {
                const char name[2] = {(char)expect[i][0], '\0'};
                struct parked_transition t =
                    checked(q, parked_offer_firing(q, OWNER_A, name, &taken));
                assert_true(taken);
                only_effect(t, PARKED_EFFECT_REPLY, expect[i][1]);
        }
        parked_free(q);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_resumed_sleep_keeps_its_place),
            cmocka_unit_test(test_next_sleep_of_the_session_takes_over),
            cmocka_unit_test(test_resume_into_a_session),
            cmocka_unit_test(test_waits_behind_sleeps),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
