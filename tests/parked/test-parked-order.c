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
        assert_int_equal(resume(q, &now, OWNER_A, 1, &ticket, 4).n_effects, 0);

        const struct parked_effect *f =
            observation_of(alarm_on(q, &now, OWNER_A, 1, "alarm"), 0, 4, "alarm", 1);
        assert_int_equal(f->continuation.nonce, first.nonce);

        /* and the later one is next */
        assert_int_equal(finish(q, &now, OWNER_A, 1, &f->continuation, f->observation.lease,
                                PARKED_ACTION_TERMINATE, 5, &ticket)
                             .n_effects,
                         1);
        f = observation_of(alarm_on(q, &now, OWNER_A, 1, "next"), 0, 3, "next", 1);
        assert_int_equal(f->continuation.nonce, later.nonce);
        parked_free(q);
}

/*
 * Alarms pending in several sessions while the owner observes: when the observation ends, the
 * oldest waiting Sleep with an alarm in its session observes, whichever alarm came first.
 */
static void test_pending_alarms_go_to_the_oldest_sleep(void **state)
{
        (void)state;
        struct parked_config config = test_config();
        struct parked *q = test_new(&config);
        struct td_now now = test_now(0);
        struct parked_ticket ticket;
        uint64_t lease;

        sleep_ok(q, &now, OWNER_A, 1, 1, 1000);
        struct parked_continuation x = observe(q, &now, OWNER_A, 1, 1, &lease);
        struct parked_continuation y = sleep_ok(q, &now, OWNER_A, 2, 2, 1000);
        struct parked_continuation z = sleep_ok(q, &now, OWNER_A, 3, 3, 1000);
        sleep_ok(q, &now, OWNER_A, 4, 4, 1000); /* no alarm in its session */
        assert_int_equal(alarm_on(q, &now, OWNER_A, 3, "three").n_effects, 0);
        assert_int_equal(alarm_on(q, &now, OWNER_A, 2, "two").n_effects, 0);
        assert_int_equal(alarm_on(q, &now, OWNER_A, 3, "three again").n_effects, 0);

        struct parked_transition t =
            finish(q, &now, OWNER_A, 1, &x, lease, PARKED_ACTION_TERMINATE, 9, &ticket);
        assert_int_equal(t.n_effects, 2);
        assert_int_equal(t.effects[0].kind, PARKED_EFFECT_RETIRED);
        const struct parked_effect *f = observation_of(t, 1, 2, "two", 1);
        assert_int_equal(f->continuation.nonce, y.nonce);

        t = finish(q, &now, OWNER_A, 2, &f->continuation, f->observation.lease,
                   PARKED_ACTION_RESUME, 10, &ticket);
        f = observation_of(t, 0, 3, "three", 2);
        assert_int_equal(t.n_effects, 1);
        assert_int_equal(f->continuation.nonce, z.nonce);

        /* Y resumes while Z observes: nothing is pending any more, it just waits */
        assert_int_equal(resume(q, &now, OWNER_A, 2, &ticket, 11).n_effects, 0);
        struct parked_stats st;
        parked_get_stats(q, &st);
        assert_int_equal(st.pending_alarms, 0);
        assert_int_equal(st.observing, 1);
        parked_free(q);
}

/* The Sleep an alarm waits for leaves (deadline, closed session): the next one of its session
 * is in line, still before later Sleeps of other sessions. */
static void test_next_sleep_of_the_session_takes_over(void **state)
{
        (void)state;
        struct parked_config config = test_config();
        struct parked *q = test_new(&config);
        struct td_now now = test_now(0);
        struct parked_ticket ticket;
        size_t retired;
        uint64_t lease;

        sleep_ok(q, &now, OWNER_A, 1, 1, 1000);
        struct parked_continuation x = observe(q, &now, OWNER_A, 1, 1, &lease);
        sleep_ok(q, &now, OWNER_A, 2, 2, 100);
        struct parked_continuation p = sleep_ok(q, &now, OWNER_A, 2, 3, 1000);
        struct parked_continuation r = sleep_ok(q, &now, OWNER_A, 3, 4, 1000);
        assert_int_equal(alarm_on(q, &now, OWNER_A, 3, "three").n_effects, 0);
        assert_int_equal(alarm_on(q, &now, OWNER_A, 2, "two").n_effects, 0);

        now = test_now(100);
        only_effect(checked(q, parked_expire(q, &now)), PARKED_EFFECT_ELAPSED, 2);

        struct parked_transition t =
            finish(q, &now, OWNER_A, 1, &x, lease, PARKED_ACTION_TERMINATE, 9, &ticket);
        const struct parked_effect *f = observation_of(t, 1, 3, "two", 1);
        assert_int_equal(f->continuation.nonce, p.nonce);

        /* the observing Sleep's session closes: the alarm of session 3 goes to R */
        t = checked(q, parked_session_closed(q, &now, 2, &retired));
        assert_int_equal(retired, 1);
        f = observation_of(t, 0, 4, "three", 1);
        assert_int_equal(t.n_effects, 1);
        assert_int_equal(f->continuation.nonce, r.nonce);
        parked_free(q);
}

/* A Sleep resumed into a session where an alarm is pending goes before that session's later
 * Sleeps; the alarm it leaves behind in its old session stays there. */
static void test_resume_into_a_session_with_an_alarm(void **state)
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
        assert_int_equal(alarm_on(q, &now, OWNER_A, 2, "two").n_effects, 0);
        assert_int_equal(alarm_on(q, &now, OWNER_A, 1, "one").n_effects, 0);
        assert_int_equal(resume(q, &now, OWNER_A, 2, &ticket, 5).n_effects, 0);

        struct parked_transition t =
            finish(q, &now, OWNER_A, 3, &o, lease_o, PARKED_ACTION_TERMINATE, 9, &unused);
        const struct parked_effect *f = observation_of(t, 1, 5, "two", 1);
        assert_int_equal(f->continuation.nonce, s.nonce);
        assert_int_equal(f->session, 2);

        t = finish(q, &now, OWNER_A, 2, &f->continuation, f->observation.lease,
                   PARKED_ACTION_TERMINATE, 10, &unused);
        assert_int_equal(t.n_effects, 1); /* N has no alarm in session 2 any more */
        struct parked_owner_snapshot snap;
        assert_int_equal(parked_get_owner(q, OWNER_A, &snap), 0);
        assert_int_equal(snap.pending_alarms, 1);
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
            cmocka_unit_test(test_pending_alarms_go_to_the_oldest_sleep),
            cmocka_unit_test(test_next_sleep_of_the_session_takes_over),
            cmocka_unit_test(test_resume_into_a_session_with_an_alarm),
            cmocka_unit_test(test_waits_behind_sleeps),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
