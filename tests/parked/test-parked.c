/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "parked-test.h"
#include "service/core/subuids.h"
#include "service/core/tally.h"

static void test_strings(void **state)
{
        (void)state;
        assert_string_equal(parked_failure_to_string(PARKED_FAILURE_IDENTITY), "identity");
        assert_string_equal(parked_failure_to_string(PARKED_FAILURE_PHASE), "phase");
        assert_string_equal(parked_failure_to_string(PARKED_FAILURE_UNSUPPORTED), "unsupported");
        assert_string_equal(parked_failure_to_string(PARKED_FAILURE_OVERFLOW), "overflow");
        assert_string_equal(parked_failure_to_string(PARKED_FAILURE_UNEXPECTED_CONTROL),
                            "unexpected_control");
        assert_null(parked_failure_to_string(_PARKED_FAILURE_MAX));
        assert_null(parked_failure_to_string(_PARKED_FAILURE_INVALID));
        assert_string_equal(parked_limit_to_string(PARKED_LIMIT_PER_SESSION), "parked_per_session");
        assert_string_equal(parked_limit_to_string(PARKED_LIMIT_PER_OWNER), "parked_per_owner");
        assert_string_equal(parked_limit_to_string(PARKED_LIMIT_NAMES), "wait_names");
        assert_null(parked_limit_to_string(_PARKED_LIMIT_MAX));
        assert_null(parked_limit_to_string(_PARKED_LIMIT_INVALID));
}

static void test_new_and_invalid_input(void **state)
{
        (void)state;
        struct parked_config config = test_config();
        struct parked *q = NULL;
        config.first_nonce = 0;
        assert_int_equal(parked_new(&config, &q), -EINVAL);
        assert_null(q);
        parked_free(NULL);

        config = test_config();
        q = test_new(&config);
        struct td_now now = test_now(0);
        struct parked_continuation c = {};
        struct parked_ticket ticket = {};
        uint64_t usec;

        /* session 0 is the runtime's bug, not the client's */
        assert_int_equal(sleep_on(q, &now, OWNER_A, 0, 1, true, 10, &c).failure, -EINVAL);
        assert_int_equal(wait_on(q, OWNER_A, 0, 1, NULL, 0, false, &c).failure, -EINVAL);
        assert_int_equal(alarm_on(q, &now, OWNER_A, 0, "a").failure, -EINVAL);
        assert_int_equal(
            finish(q, &now, OWNER_A, 0, &c, 1, PARKED_ACTION_RESUME, 1, &ticket).failure, -EINVAL);
        assert_int_equal(resume(q, &now, OWNER_A, 0, &ticket, 1).failure, -EINVAL);

        struct parked_sleep_args sa = {.caller = {OWNER_A, 1}, .clock = TIMERD_CLOCK_MAX};
        assert_int_equal(checked(q, parked_sleep(q, &now, &sa, &c)).failure,
                         -TIMERD_E_INVALID_PARAMETER);
        sa.clock = TIMERD_CLOCK_INVALID;
        assert_int_equal(checked(q, parked_sleep(q, &now, &sa, &c)).failure,
                         -TIMERD_E_INVALID_PARAMETER);
        struct parked_wait_args wa = {
            .caller = {OWNER_A, 1}, .has_timeout = true, .clock = TIMERD_CLOCK_MAX};
        assert_int_equal(checked(q, parked_wait(q, &wa, &c)).failure, -TIMERD_E_INVALID_PARAMETER);

        char too_long[TIMERD_NAME_MAX + 2];
        memset(too_long, 'x', sizeof(too_long) - 1);
        too_long[sizeof(too_long) - 1] = '\0';
        const char *bad[] = {"ok", ""};
        assert_int_equal(wait_on(q, OWNER_A, 1, 1, bad, 2, false, &c).failure,
                         -TIMERD_E_INVALID_NAME);
        bad[1] = too_long;
        assert_int_equal(wait_on(q, OWNER_A, 1, 1, bad, 2, false, &c).failure,
                         -TIMERD_E_INVALID_NAME);
        bad[1] = NULL;
        assert_int_equal(wait_on(q, OWNER_A, 1, 1, bad, 2, false, &c).failure,
                         -TIMERD_E_INVALID_NAME);
        assert_int_equal(wait_on(q, OWNER_A, 1, 1, NULL, 1, false, &c).failure,
                         -TIMERD_E_INVALID_PARAMETER);
        assert_int_equal(alarm_on(q, &now, OWNER_A, 1, "").failure, -TIMERD_E_INVALID_NAME);
        assert_int_equal(alarm_on(q, &now, OWNER_A, 1, too_long).failure, -TIMERD_E_INVALID_NAME);
        assert_int_equal(alarm_on(q, &now, OWNER_A, 1, NULL).failure, -TIMERD_E_INVALID_NAME);
        bool taken = true;
        assert_int_equal(checked(q, parked_offer_firing(q, OWNER_A, too_long, &taken)).failure,
                         -TIMERD_E_INVALID_NAME);
        assert_false(taken);
        assert_int_equal(checked(q, parked_offer_firing(q, OWNER_A, NULL, &taken)).failure,
                         -TIMERD_E_INVALID_NAME);

        /* a name of exactly 128 bytes is fine, and bad input changed nothing */
        too_long[TIMERD_NAME_MAX] = '\0';
        const char *longest[] = {too_long};
        assert_int_equal(wait_on(q, OWNER_A, 1, 1, longest, 1, false, &c).failure, 0);
        struct parked_stats st;
        parked_get_stats(q, &st);
        assert_int_equal(st.waiters, 1);
        assert_int_equal(st.sleepers, 0);
        assert_int_equal(checked(q, parked_offer_firing(q, OWNER_A, too_long, &taken)).failure, 0);
        assert_true(taken);

        assert_int_equal(parked_next_deadline(q, TIMERD_CLOCK_MAX, &usec), -EINVAL);
        assert_int_equal(parked_next_deadline(q, TIMERD_CLOCK_INVALID, &usec), -EINVAL);
        struct parked_owner_snapshot snap;
        assert_int_equal(parked_get_owner(q, OWNER_B, &snap), -TIMERD_E_NOT_FOUND);

        /* an unknown action is bad input: refused, not latched */
        c = sleep_ok(q, &now, OWNER_A, 1, 2, 100);
        assert_int_equal(finish(q, &now, OWNER_A, 1, &c, 0, _PARKED_ACTION_MAX, 3, &ticket).failure,
                         -TIMERD_E_INVALID_PARAMETER);
        assert_int_equal(
            finish(q, &now, OWNER_A, 1, &c, 0, _PARKED_ACTION_INVALID, 3, &ticket).failure,
            -TIMERD_E_INVALID_PARAMETER);
        assert_int_equal(parked_get_owner(q, OWNER_A, &snap), 0);
        assert_int_equal(snap.failures, 0);
        assert_int_equal(snap.failure, _PARKED_FAILURE_INVALID);
        parked_free(q);
}

static void test_wait_oldest_takes_firing(void **state)
{
        struct parked *q = *state;
        bool taken;

        struct parked_continuation w1 = wait_ok(q, OWNER_A, 1, 11);
        struct parked_continuation w2 = wait_ok(q, OWNER_A, 2, 12);
        wait_ok(q, OWNER_A, 1, 13);
        wait_ok(q, OWNER_B, 3, 21);
        assert_true(w1.nonce < w2.nonce);
        /* What an idle connection's reaping must not take (service/conns.c). */
        assert_true(parked_session_holds(q, 1));
        assert_true(parked_session_holds(q, 2));
        assert_false(parked_session_holds(q, 4));

        uint64_t expect[] = {11, 12, 13};
        for (size_t i = 0; i < 3; i++) {
                struct parked_transition t =
                    checked(q, parked_offer_firing(q, OWNER_A, "t", &taken));
                const struct parked_effect *f = only_effect(t, PARKED_EFFECT_REPLY, expect[i]);
                assert_true(taken);
                assert_false(f->reply.continues);
                assert_string_equal(f->reply.name, "t");
                assert_int_equal(f->owner, OWNER_A);
                assert_int_equal(f->session, i == 1 ? 2 : 1);
        }
        /* nobody of A is left: the firing stays pending, B's waiter is not A's */
        struct parked_transition t = checked(q, parked_offer_firing(q, OWNER_A, "t", &taken));
        assert_int_equal(t.failure, 0);
        assert_int_equal(t.n_effects, 0);
        assert_false(taken);
        assert_false(parked_session_holds(q, 1));
        assert_false(parked_session_holds(q, 2));
        assert_true(parked_session_holds(q, 3));

        struct parked_stats st;
        parked_get_stats(q, &st);
        assert_int_equal(st.waiters, 1);
        struct parked_owner_snapshot snap;
        assert_int_equal(parked_get_owner(q, OWNER_A, &snap), -TIMERD_E_NOT_FOUND);
}

static void test_wait_names_filter(void **state)
{
        struct parked *q = *state;
        struct parked_continuation c;
        bool taken;

        const char *x[] = {"x"};
        const char *yz[] = {"y", "z"};
        assert_int_equal(wait_on(q, OWNER_A, 1, 1, x, 1, false, &c).failure, 0);
        assert_int_equal(wait_on(q, OWNER_A, 1, 2, NULL, 0, false, &c).failure, 0);
        assert_int_equal(wait_on(q, OWNER_A, 1, 3, yz, 2, false, &c).failure, 0);

        only_effect(checked(q, parked_offer_firing(q, OWNER_A, "z", &taken)), PARKED_EFFECT_REPLY,
                    2);
        only_effect(checked(q, parked_offer_firing(q, OWNER_A, "z", &taken)), PARKED_EFFECT_REPLY,
                    3);
        struct parked_transition t = checked(q, parked_offer_firing(q, OWNER_A, "y", &taken));
        assert_int_equal(t.n_effects, 0);
        assert_false(taken);
        only_effect(checked(q, parked_offer_firing(q, OWNER_A, "x", &taken)), PARKED_EFFECT_REPLY,
                    1);
}

static void test_wait_stream_stays_parked(void **state)
{
        struct parked *q = *state;
        struct parked_continuation c;
        bool taken;

        assert_int_equal(wait_on(q, OWNER_A, 1, 1, NULL, 0, true, &c).failure, 0);
        wait_ok(q, OWNER_A, 2, 2);

        const struct parked_effect *f = only_effect(
            checked(q, parked_offer_firing(q, OWNER_A, "t", &taken)), PARKED_EFFECT_REPLY, 1);
        assert_true(f->reply.continues);
        assert_int_equal(f->continuation.nonce, c.nonce);
        /* the stream went to the back of the line: the single Wait is older now */
        f = only_effect(checked(q, parked_offer_firing(q, OWNER_A, "t", &taken)),
                        PARKED_EFFECT_REPLY, 2);
        assert_false(f->reply.continues);
        for (int i = 0; i < 3; i++)
                only_effect(checked(q, parked_offer_firing(q, OWNER_A, "t", &taken)),
                            PARKED_EFFECT_REPLY, 1);

        struct parked_stats st;
        parked_get_stats(q, &st);
        assert_int_equal(st.waiters, 1);
}

static void test_wait_timeout(void **state)
{
        struct parked *q = *state;
        struct parked_continuation c;
        uint64_t usec = 0;
        bool taken;

        struct parked_wait_args a = {
            .caller = {OWNER_A, 1},
            .cookie = 5,
            .has_timeout = true,
            .clock = TIMERD_CLOCK_BOOTTIME,
            .timeout_usec = 100,
            .stream = true,
        };
        assert_int_equal(checked(q, parked_wait(q, &a, &c)).failure, 0);
        assert_int_equal(parked_next_deadline(q, TIMERD_CLOCK_BOOTTIME, &usec), 1);
        assert_int_equal(usec, 100);
        assert_int_equal(parked_next_deadline(q, TIMERD_CLOCK_MONOTONIC, &usec), 0);

        /* a firing taken by a stream does not end it; its timeout still bounds the stream */
        only_effect(checked(q, parked_offer_firing(q, OWNER_A, "t", &taken)), PARKED_EFFECT_REPLY,
                    5);
        struct td_now now = test_now(99);
        assert_int_equal(checked(q, parked_expire(q, &now)).n_effects, 0);
        now.usec[TIMERD_CLOCK_BOOTTIME] = 100;
        const struct parked_effect *f =
            only_effect(checked(q, parked_expire(q, &now)), PARKED_EFFECT_TIMED_OUT, 5);
        assert_int_equal(f->continuation.nonce, c.nonce);
        assert_int_equal(parked_next_deadline(q, TIMERD_CLOCK_BOOTTIME, &usec), 0);
        assert_false(checked(q, parked_offer_firing(q, OWNER_A, "t", &taken)).n_effects);
}

static void test_sleep_elapses(void **state)
{
        struct parked *q = *state;
        struct parked_continuation c;
        uint64_t usec = 0;

        struct td_now now = test_now(0);
        struct parked_sleep_args a = {
            .caller = {OWNER_A, 1},
            .cookie = 9,
            .clock = TIMERD_CLOCK_REALTIME_ALARM,
            .has_deadline = true,
            .deadline_usec = 500,
        };
        assert_int_equal(checked(q, parked_sleep(q, &now, &a, &c)).failure, 0);
        assert_int_equal(parked_next_deadline(q, TIMERD_CLOCK_REALTIME_ALARM, &usec), 1);
        assert_int_equal(usec, 500);
        assert_int_equal(parked_next_deadline(q, TIMERD_CLOCK_REALTIME, &usec), 0);

        now = test_now(10000);
        now.usec[TIMERD_CLOCK_REALTIME_ALARM] = 499;
        assert_int_equal(checked(q, parked_expire(q, &now)).n_effects, 0);
        now.usec[TIMERD_CLOCK_REALTIME_ALARM] = 501;
        const struct parked_effect *f =
            only_effect(checked(q, parked_expire(q, &now)), PARKED_EFFECT_ELAPSED, 9);
        assert_int_equal(f->session, 1);
        assert_int_equal(f->continuation.nonce, c.nonce);
        struct parked_stats st;
        parked_get_stats(q, &st);
        assert_int_equal(st.sleepers, 0);
}

static void test_expire_order(void **state)
{
        struct parked *q = *state;
        struct td_now now = test_now(0);

        sleep_ok(q, &now, OWNER_A, 1, 1, 300);
        sleep_ok(q, &now, OWNER_B, 2, 2, 100);
        sleep_ok(q, &now, OWNER_A, 3, 3, 300);
        sleep_ok(q, &now, OWNER_A, 3, 4, 200);
        sleep_ok(q, &now, OWNER_A, 3, 5, 900);
        struct parked_wait_args a = {
            .caller = {OWNER_B, 2},
            .cookie = 6,
            .has_timeout = true,
            .clock = TIMERD_CLOCK_MONOTONIC,
            .timeout_usec = 150,
        };
        struct parked_continuation c;
        assert_int_equal(checked(q, parked_wait(q, &a, &c)).failure, 0);

        now = test_now(300);
        struct parked_transition t = checked(q, parked_expire(q, &now));
        uint64_t cookies[] = {2, 6, 4, 1, 3};
        assert_int_equal(t.n_effects, 5);
        for (size_t i = 0; i < 5; i++) {
                assert_int_equal(t.effects[i].cookie, cookies[i]);
                assert_int_equal(t.effects[i].kind,
                                 cookies[i] == 6 ? PARKED_EFFECT_TIMED_OUT : PARKED_EFFECT_ELAPSED);
        }
        uint64_t usec = 0;
        assert_int_equal(parked_next_deadline(q, TIMERD_CLOCK_MONOTONIC, &usec), 1);
        assert_int_equal(usec, 900);
}

static void test_observation_resume_original_deadline(void **state)
{
        struct parked *q = *state;
        struct td_now now = test_now(0);
        struct parked_ticket ticket;
        uint64_t usec = 0;

        struct parked_continuation parked = sleep_ok(q, &now, OWNER_A, 1, 7, 1000);
        now = test_now(300);
        struct parked_transition t = alarm_on(q, &now, OWNER_A, 1, "tick");
        const struct parked_effect *f = only_effect(t, PARKED_EFFECT_OBSERVATION, 7);
        assert_int_equal(f->continuation.nonce, parked.nonce);
        assert_int_equal(f->continuation.cycle, parked.cycle + 1);
        assert_int_equal(f->continuation.epoch, EPOCH);
        assert_true(f->observation.has_remaining);
        assert_int_equal(f->observation.remaining_usec, 700);
        assert_int_equal(f->observation.alarms, 1);
        assert_string_equal(f->observation.name, "tick");
        assert_int_not_equal(f->observation.lease, 0);
        struct parked_continuation observed = f->continuation;
        uint64_t lease = f->observation.lease;

        /* while observed, the deadline is saved, not armed */
        assert_int_equal(parked_next_deadline(q, TIMERD_CLOCK_MONOTONIC, &usec), 0);
        struct parked_stats st;
        parked_get_stats(q, &st);
        assert_int_equal(st.observing, 1);

        now = test_now(400);
        t = finish(q, &now, OWNER_A, 2, &observed, lease, PARKED_ACTION_RESUME, 8, &ticket);
        assert_int_equal(t.failure, 0);
        assert_int_equal(t.n_effects, 0);
        assert_int_equal(ticket.continuation.nonce, parked.nonce);
        assert_int_equal(ticket.continuation.cycle, observed.cycle);
        assert_int_equal(ticket.continuation.epoch, EPOCH);
        assert_int_not_equal(ticket.nonce, 0);
        assert_int_not_equal(ticket.nonce, lease);
        parked_get_stats(q, &st);
        assert_int_equal(st.observing, 0);
        assert_int_equal(st.awaiting_resume, 1);

        now = test_now(600);
        t = resume(q, &now, OWNER_A, 1, &ticket, 9);
        assert_int_equal(t.failure, 0);
        only_effect(t, PARKED_EFFECT_OBSERVABLE, 0);
        assert_int_equal(parked_next_deadline(q, TIMERD_CLOCK_MONOTONIC, &usec), 1);
        assert_int_equal(usec, 1000);

        now = test_now(999);
        assert_int_equal(checked(q, parked_expire(q, &now)).n_effects, 0);
        now = test_now(1000);
        f = only_effect(checked(q, parked_expire(q, &now)), PARKED_EFFECT_ELAPSED, 9);
        assert_int_equal(f->continuation.nonce, parked.nonce);
        assert_int_equal(f->continuation.cycle, observed.cycle + 1);
        parked_get_stats(q, &st);
        assert_int_equal(st.sleepers, 0);
        assert_int_equal(st.awaiting_resume, 0);
}

static void test_resume_after_deadline_passed(void **state)
{
        struct parked *q = *state;
        struct td_now now = test_now(0);
        struct parked_ticket ticket;
        uint64_t lease, usec = 0;

        struct parked_continuation c = observed_sleep(q, &now, &lease);
        now = test_now(2000);
        assert_int_equal(
            finish(q, &now, OWNER_A, 1, &c, lease, PARKED_ACTION_RESUME, 2, &ticket).failure, 0);
        only_effect(resume(q, &now, OWNER_A, 1, &ticket, 3), PARKED_EFFECT_OBSERVABLE, 0);
        assert_int_equal(parked_next_deadline(q, TIMERD_CLOCK_MONOTONIC, &usec), 1);
        assert_int_equal(usec, 1000);
        only_effect(checked(q, parked_expire(q, &now)), PARKED_EFFECT_ELAPSED, 3);
}

static void test_observation_interrupt(void **state)
{
        struct parked *q = *state;
        struct td_now now = test_now(0);
        struct parked_ticket ticket;
        uint64_t lease, usec = 0;

        sleep_ok(q, &now, OWNER_A, 1, 1, 1000);
        now = test_now(300);
        struct parked_continuation c = observe(q, &now, OWNER_A, 1, 1, &lease);
        now = test_now(450);
        struct parked_transition t =
            finish(q, &now, OWNER_A, 1, &c, lease, PARKED_ACTION_INTERRUPT, 42, &ticket);
        const struct parked_effect *f = only_effect(t, PARKED_EFFECT_INTERRUPTED, 42);
        assert_true(f->interrupted.has_remaining);
        assert_int_equal(f->interrupted.remaining_usec, 550);
        assert_int_equal(f->continuation.nonce, c.nonce);
        assert_int_equal(ticket.nonce, 0);
        assert_int_equal(parked_next_deadline(q, TIMERD_CLOCK_MONOTONIC, &usec), 0);
        struct parked_stats st;
        parked_get_stats(q, &st);
        assert_int_equal(st.sleepers, 0);
        assert_int_equal(st.observing, 0);

        /* interrupted after the deadline passed: nothing remains */
        now = test_now(0);
        sleep_ok(q, &now, OWNER_A, 1, 2, 100);
        c = observe(q, &now, OWNER_A, 1, 2, &lease);
        now = test_now(5000);
        t = finish(q, &now, OWNER_A, 1, &c, lease, PARKED_ACTION_INTERRUPT, 43, &ticket);
        f = only_effect(t, PARKED_EFFECT_INTERRUPTED, 43);
        assert_int_equal(f->interrupted.remaining_usec, 0);
}

static void test_observation_terminate(void **state)
{
        struct parked *q = *state;
        struct td_now now = test_now(0);
        struct parked_ticket ticket;
        uint64_t lease;

        struct parked_continuation c = observed_sleep(q, &now, &lease);
        const struct parked_effect *f = only_effect(
            finish(q, &now, OWNER_A, 1, &c, lease, PARKED_ACTION_TERMINATE, 50, &ticket),
            PARKED_EFFECT_RETIRED, 50);
        assert_int_equal(f->continuation.nonce, c.nonce);
        now = test_now(5000);
        assert_int_equal(checked(q, parked_expire(q, &now)).n_effects, 0);
        struct parked_owner_snapshot snap;
        assert_int_equal(parked_get_owner(q, OWNER_A, &snap), -TIMERD_E_NOT_FOUND);
}

static void test_sleep_without_deadline(void **state)
{
        struct parked *q = *state;
        struct td_now now = test_now(0);
        struct parked_continuation c;
        struct parked_ticket ticket;
        uint64_t usec = 0;

        only_effect(sleep_on(q, &now, OWNER_A, 1, 1, false, 0, &c), PARKED_EFFECT_OBSERVABLE, 0);
        assert_int_equal(parked_next_deadline(q, TIMERD_CLOCK_MONOTONIC, &usec), 0);
        now = test_now(UINT64_MAX);
        assert_int_equal(checked(q, parked_expire(q, &now)).n_effects, 0);

        const struct parked_effect *f =
            only_effect(alarm_on(q, &now, OWNER_A, 1, "a"), PARKED_EFFECT_OBSERVATION, 1);
        assert_false(f->observation.has_remaining);
        uint64_t lease = f->observation.lease;
        c = f->continuation;
        assert_int_equal(
            finish(q, &now, OWNER_A, 1, &c, lease, PARKED_ACTION_RESUME, 2, &ticket).failure, 0);
        only_effect(resume(q, &now, OWNER_A, 1, &ticket, 3), PARKED_EFFECT_OBSERVABLE, 0);
        assert_int_equal(parked_next_deadline(q, TIMERD_CLOCK_MONOTONIC, &usec), 0);
        c = observe(q, &now, OWNER_A, 1, 3, &lease);
        f = only_effect(finish(q, &now, OWNER_A, 1, &c, lease, PARKED_ACTION_INTERRUPT, 4, &ticket),
                        PARKED_EFFECT_INTERRUPTED, 4);
        assert_false(f->interrupted.has_remaining);
}

/* Issue 15 item 1: the queue keeps no alarm; a Sleep that could take one is announced. */
static void test_untaken_alarm_is_not_kept(void **state)
{
        struct parked *q = *state;
        struct td_now now = test_now(0);
        struct parked_continuation c;
        struct parked_owner_snapshot snap;

        /* a Wait is not a Sleep: the alarm is not taken, and nothing of it stays here */
        wait_ok(q, OWNER_A, 1, 1);
        assert_int_equal(alarm_on(q, &now, OWNER_A, 1, "first").n_effects, 0);
        assert_int_equal(parked_get_owner(q, OWNER_A, &snap), 0);
        assert_int_equal(snap.waiting_sleepers, 0);

        now = test_now(100);
        struct parked_transition t = sleep_on(q, &now, OWNER_A, 1, 2, true, 400, &c);
        const struct parked_effect *f = only_effect(t, PARKED_EFFECT_OBSERVABLE, 0);
        assert_int_equal(f->owner, OWNER_A);
        assert_int_equal(f->session, 1);
        /* the alarm the runtime then offers, with the periods it stands for */
        bool taken;
        f = only_effect(checked(q, parked_offer_alarm(q, &now, OWNER_A, 7, "first", 3, &taken)),
                        PARKED_EFFECT_OBSERVATION, 2);
        assert_true(taken);
        assert_int_equal(f->observation.alarms, 3);
        assert_string_equal(f->observation.name, "first");
        assert_int_equal(f->observation.remaining_usec, 300);
        assert_int_equal(f->continuation.nonce, c.nonce);
        assert_int_equal(f->continuation.cycle, c.cycle + 1);
        assert_int_equal(
            checked(q, parked_offer_alarm(q, &now, OWNER_A, 1, "x", 0, &taken)).failure, -EINVAL);
}

static void test_observable_on_resume(void **state)
{
        struct parked *q = *state;
        struct td_now now = test_now(0);
        struct parked_ticket ticket;
        uint64_t lease;

        struct parked_continuation c = observed_sleep(q, &now, &lease);
        /* no Sleep waits after the observation ends: nothing to announce */
        assert_int_equal(
            finish(q, &now, OWNER_A, 1, &c, lease, PARKED_ACTION_RESUME, 2, &ticket).n_effects, 0);
        /* a Sleep awaiting its resumption does not observe */
        assert_int_equal(alarm_on(q, &now, OWNER_A, 1, "again").n_effects, 0);

        now = test_now(250);
        only_effect(resume(q, &now, OWNER_A, 1, &ticket, 3), PARKED_EFFECT_OBSERVABLE, 0);
        const struct parked_effect *f =
            only_effect(alarm_on(q, &now, OWNER_A, 1, "again"), PARKED_EFFECT_OBSERVATION, 3);
        assert_int_equal(f->observation.remaining_usec, 750);
        assert_int_equal(f->continuation.cycle, ticket.continuation.cycle + 2);
        assert_int_not_equal(f->observation.lease, lease);
}

static void test_one_observation_per_owner(void **state)
{
        struct parked *q = *state;
        struct td_now now = test_now(0);
        struct parked_ticket ticket;
        uint64_t lease, lease_b;

        sleep_ok(q, &now, OWNER_A, 5, 9, 1000);
        sleep_ok(q, &now, OWNER_A, 1, 1, 1000);
        sleep_ok(q, &now, OWNER_A, 2, 2, 1000);
        sleep_ok(q, &now, OWNER_B, 3, 3, 1000);
        /* session 1's alarm goes to session 1's Sleep, though session 5's waits longer */
        struct parked_continuation c = observe(q, &now, OWNER_A, 1, 1, &lease);
        /* while A observes, no alarm of A is taken, nor by a Sleep that parks meanwhile */
        assert_int_equal(alarm_on(q, &now, OWNER_A, 2, "second").n_effects, 0);
        sleep_ok(q, &now, OWNER_A, 2, 12, 1000);
        /* another owner observes at the same time */
        struct parked_continuation cb = observe(q, &now, OWNER_B, 3, 3, &lease_b);
        struct parked_stats st;
        parked_get_stats(q, &st);
        assert_int_equal(st.observing, 2);

        /* the end of A's observation is announced, at its longest waiting Sleep's session */
        struct parked_transition t =
            finish(q, &now, OWNER_A, 1, &c, lease, PARKED_ACTION_TERMINATE, 10, &ticket);
        assert_int_equal(t.failure, 0);
        assert_int_equal(t.n_effects, 2);
        assert_int_equal(t.effects[0].kind, PARKED_EFFECT_RETIRED);
        assert_int_equal(t.effects[0].cookie, 10);
        assert_int_equal(t.effects[1].kind, PARKED_EFFECT_OBSERVABLE);
        assert_int_equal(t.effects[1].owner, OWNER_A);
        assert_int_equal(t.effects[1].session, 5);
        /* an alarm of a session with no Sleep (gone) goes to the owner's longest waiting one */
        const struct parked_effect *f =
            only_effect(alarm_on(q, &now, OWNER_A, 4, "elsewhere"), PARKED_EFFECT_OBSERVATION, 9);
        assert_int_equal(f->session, 5);
        assert_int_equal(f->observation.alarms, 1);
        parked_get_stats(q, &st);
        assert_int_equal(st.sleepers - st.observing, 2);
        assert_int_equal(
            finish(q, &now, OWNER_B, 3, &cb, lease_b, PARKED_ACTION_TERMINATE, 11, &ticket)
                .n_effects,
            1);
}

/* Issue 15 item 2: Waits with names of which none can fire are answered and retired. */
static bool none_but_y(const char *const *names, size_t n_names, void *userdata)
{
        (*(size_t *)userdata)++;
        for (size_t i = 0; i < n_names; i++)
                if (strcmp(names[i], "y") == 0)
                        return true;
        return false;
}

static void test_end_waits(void **state)
{
        struct parked *q = *state;
        struct parked_continuation c;
        struct parked_stats st;
        size_t asked = 0;
        bool taken;

        const char *x[] = {"x"};
        const char *xy[] = {"x", "y"};
        assert_int_equal(wait_on(q, OWNER_A, 1, 1, x, 1, false, &c).failure, 0);
        assert_int_equal(wait_on(q, OWNER_A, 1, 2, NULL, 0, false, &c).failure, 0);
        assert_int_equal(wait_on(q, OWNER_A, 2, 3, xy, 2, true, &c).failure, 0);
        assert_int_equal(wait_on(q, OWNER_A, 2, 4, x, 1, true, &c).failure, 0);
        assert_int_equal(wait_on(q, OWNER_B, 3, 5, x, 1, false, &c).failure, 0);

        struct parked_transition t = checked(q, parked_end_waits(q, OWNER_A, none_but_y, &asked));
        assert_int_equal(t.failure, 0);
        /* in park order; the Wait without names is never asked about; B is not touched */
        assert_int_equal(t.n_effects, 2);
        assert_int_equal(t.effects[0].kind, PARKED_EFFECT_NOTHING_TO_WAIT_FOR);
        assert_int_equal(t.effects[0].cookie, 1);
        assert_int_equal(t.effects[0].session, 1);
        assert_int_equal(t.effects[1].kind, PARKED_EFFECT_NOTHING_TO_WAIT_FOR);
        assert_int_equal(t.effects[1].cookie, 4);
        assert_int_equal(asked, 3);
        parked_get_stats(q, &st);
        assert_int_equal(st.waiters, 3);
        /* the ended ones take nothing any more */
        only_effect(checked(q, parked_offer_firing(q, OWNER_A, "x", &taken)), PARKED_EFFECT_REPLY,
                    2);
        only_effect(checked(q, parked_offer_firing(q, OWNER_A, "x", &taken)), PARKED_EFFECT_REPLY,
                    3);
        /* a repeat ends nothing more; an owner without Waits has nothing to end */
        assert_int_equal(checked(q, parked_end_waits(q, OWNER_A, none_but_y, &asked)).n_effects, 0);
        assert_int_equal(checked(q, parked_end_waits(q, 4242, none_but_y, &asked)).n_effects, 0);
        t = checked(q, parked_end_waits(q, OWNER_B, none_but_y, &asked));
        only_effect(t, PARKED_EFFECT_NOTHING_TO_WAIT_FOR, 5);
        assert_int_equal(parked_get_owner(q, OWNER_B, &(struct parked_owner_snapshot){}),
                         -TIMERD_E_NOT_FOUND);
}

static void test_alarms_per_owner_in_one_session(void **state)
{
        struct parked *q = *state;
        struct td_now now = test_now(0);
        struct parked_continuation c;

        /* one session may act for several owners (uid 0): each owner observes on its own */
        for (uint32_t uid = 1; uid <= 5; uid++) {
                const struct parked_effect *f = only_effect(
                    sleep_on(q, &now, uid, 1, uid, true, 100, &c), PARKED_EFFECT_OBSERVABLE, 0);
                assert_int_equal(f->owner, uid);
        }
        for (uint32_t uid = 5; uid >= 1; uid--) {
                char name[16];
                snprintf(name, sizeof(name), "of-%u", uid);
                const struct parked_effect *f =
                    only_effect(alarm_on(q, &now, uid, 1, name), PARKED_EFFECT_OBSERVATION, uid);
                assert_int_equal(f->owner, uid);
                assert_string_equal(f->observation.name, name);
        }
        struct parked_stats st;
        parked_get_stats(q, &st);
        assert_int_equal(st.observing, 5);
}

static void test_finish_failures(void **state)
{
        struct parked *q = *state;
        struct td_now now = test_now(0);
        struct parked_ticket ticket;
        struct parked_owner_snapshot snap;
        struct parked_stats st;
        uint64_t lease;

        /* nothing parked for A at all */
        struct parked_continuation bogus = {.epoch = EPOCH, .nonce = 1, .cycle = 0};
        assert_protocol_failure(
            finish(q, &now, OWNER_A, 1, &bogus, 1, PARKED_ACTION_RESUME, 1, &ticket),
            PARKED_FAILURE_UNEXPECTED_CONTROL);
        assert_int_equal(parked_get_owner(q, OWNER_A, &snap), 0);
        assert_int_equal(snap.failure, PARKED_FAILURE_UNEXPECTED_CONTROL);
        assert_int_equal(snap.failures, 1);

        struct parked_continuation waiting = sleep_ok(q, &now, OWNER_A, 1, 1, 1000);
        struct parked_continuation wait = wait_ok(q, OWNER_A, 1, 2);
        sleep_ok(q, &now, OWNER_B, 2, 3, 1000); /* B has something parked */

        /* finish while waiting */
        assert_protocol_failure(
            finish(q, &now, OWNER_A, 1, &waiting, 0, PARKED_ACTION_RESUME, 4, &ticket),
            PARKED_FAILURE_PHASE);
        /* a Wait cannot be finished */
        assert_protocol_failure(
            finish(q, &now, OWNER_A, 1, &wait, 0, PARKED_ACTION_INTERRUPT, 4, &ticket),
            PARKED_FAILURE_UNSUPPORTED);

        struct parked_continuation c = observe(q, &now, OWNER_A, 1, 1, &lease);
        struct parked_continuation wrong = c;
        wrong.epoch++;
        assert_protocol_failure(
            finish(q, &now, OWNER_A, 1, &wrong, lease, PARKED_ACTION_RESUME, 4, &ticket),
            PARKED_FAILURE_IDENTITY);
        wrong = c;
        wrong.nonce = 999;
        assert_protocol_failure(
            finish(q, &now, OWNER_A, 1, &wrong, lease, PARKED_ACTION_RESUME, 4, &ticket),
            PARKED_FAILURE_IDENTITY);
        wrong = c;
        wrong.cycle--;
        assert_protocol_failure(
            finish(q, &now, OWNER_A, 1, &wrong, lease, PARKED_ACTION_RESUME, 4, &ticket),
            PARKED_FAILURE_IDENTITY);
        assert_protocol_failure(
            finish(q, &now, OWNER_A, 1, &c, lease + 1, PARKED_ACTION_RESUME, 4, &ticket),
            PARKED_FAILURE_IDENTITY);
        /* B presents A's continuation */
        assert_protocol_failure(
            finish(q, &now, OWNER_B, 2, &c, lease, PARKED_ACTION_TERMINATE, 4, &ticket),
            PARKED_FAILURE_IDENTITY);

        /* none of it changed anything: the right Finish still works */
        parked_get_stats(q, &st);
        assert_int_equal(st.observing, 1);
        assert_int_equal(st.sleepers, 2);
        assert_int_equal(st.protocol_failures, 8);
        assert_int_equal(st.latched_owners, 2);
        assert_int_equal(parked_get_owner(q, OWNER_A, &snap), 0);
        assert_int_equal(snap.failure, PARKED_FAILURE_UNEXPECTED_CONTROL);
        assert_int_equal(snap.failures, 7);
        assert_true(snap.observing);
        assert_int_equal(snap.waiters, 1);
        assert_int_equal(snap.sleepers, 1);
        assert_int_equal(parked_get_owner(q, OWNER_B, &snap), 0);
        assert_int_equal(snap.failure, PARKED_FAILURE_IDENTITY);
        assert_int_equal(snap.failures, 1);

        assert_int_equal(
            finish(q, &now, OWNER_A, 1, &c, lease, PARKED_ACTION_RESUME, 4, &ticket).failure, 0);
}

static void test_resume_failures(void **state)
{
        struct parked *q = *state;
        struct td_now now = test_now(0);
        struct parked_ticket ticket;
        uint64_t lease;

        struct parked_ticket bogus = {.continuation = {.epoch = EPOCH, .nonce = 1}, .nonce = 2};
        assert_protocol_failure(resume(q, &now, OWNER_A, 1, &bogus, 1),
                                PARKED_FAILURE_UNEXPECTED_CONTROL);

        struct parked_continuation wait = wait_ok(q, OWNER_A, 1, 1);
        struct parked_ticket on_wait = {.continuation = wait, .nonce = 5};
        assert_protocol_failure(resume(q, &now, OWNER_A, 1, &on_wait, 2),
                                PARKED_FAILURE_UNSUPPORTED);

        sleep_ok(q, &now, OWNER_A, 1, 3, 1000);
        struct parked_continuation c = observe(q, &now, OWNER_A, 1, 3, &lease);
        /* resume while observing: the continuation is right, its phase is not */
        struct parked_ticket early = {.continuation = c, .nonce = lease};
        assert_protocol_failure(resume(q, &now, OWNER_A, 1, &early, 4), PARKED_FAILURE_PHASE);

        assert_int_equal(
            finish(q, &now, OWNER_A, 1, &c, lease, PARKED_ACTION_RESUME, 5, &ticket).failure, 0);
        struct parked_ticket wrong = ticket;
        wrong.nonce++;
        assert_protocol_failure(resume(q, &now, OWNER_A, 1, &wrong, 6), PARKED_FAILURE_IDENTITY);
        wrong = ticket;
        wrong.continuation.epoch = 0;
        assert_protocol_failure(resume(q, &now, OWNER_A, 1, &wrong, 6), PARKED_FAILURE_IDENTITY);
        wrong = ticket;
        wrong.continuation.cycle++;
        assert_protocol_failure(resume(q, &now, OWNER_A, 1, &wrong, 6), PARKED_FAILURE_IDENTITY);
        assert_protocol_failure(resume(q, &now, OWNER_B, 1, &ticket, 6),
                                PARKED_FAILURE_UNEXPECTED_CONTROL);

        assert_int_equal(resume(q, &now, OWNER_A, 1, &ticket, 7).failure, 0);
        struct parked_owner_snapshot snap;
        assert_int_equal(parked_get_owner(q, OWNER_A, &snap), 0);
        assert_int_equal(snap.failure, PARKED_FAILURE_UNEXPECTED_CONTROL);
        assert_int_equal(snap.failures, 6);
}

static void test_duplicate_and_late_intents(void **state)
{
        struct parked *q = *state;
        struct td_now now = test_now(0);
        struct parked_ticket ticket, ignored;
        size_t retired;
        uint64_t lease;

        struct parked_continuation c = observed_sleep(q, &now, &lease);
        assert_int_equal(
            finish(q, &now, OWNER_A, 1, &c, lease, PARKED_ACTION_RESUME, 2, &ticket).failure, 0);
        /* Finish twice: the continuation now awaits its resumption */
        assert_protocol_failure(
            finish(q, &now, OWNER_A, 1, &c, lease, PARKED_ACTION_RESUME, 3, &ignored),
            PARKED_FAILURE_PHASE);
        assert_int_equal(resume(q, &now, OWNER_A, 1, &ticket, 4).failure, 0);
        /* a spent ticket: the resumption moved the cycle on */
        assert_protocol_failure(resume(q, &now, OWNER_A, 1, &ticket, 5), PARKED_FAILURE_IDENTITY);

        /* after terminate the continuation is gone */
        c = observe(q, &now, OWNER_A, 1, 4, &lease);
        wait_ok(q, OWNER_A, 1, 6);
        assert_int_equal(
            finish(q, &now, OWNER_A, 1, &c, lease, PARKED_ACTION_TERMINATE, 7, &ignored).failure,
            0);
        assert_protocol_failure(
            finish(q, &now, OWNER_A, 1, &c, lease, PARKED_ACTION_TERMINATE, 8, &ignored),
            PARKED_FAILURE_IDENTITY);

        /* resume after the session closed: nothing of A is parked any more */
        sleep_ok(q, &now, OWNER_A, 2, 9, 1000);
        c = observe(q, &now, OWNER_A, 2, 9, &lease);
        assert_int_equal(
            finish(q, &now, OWNER_A, 2, &c, lease, PARKED_ACTION_RESUME, 10, &ticket).failure, 0);
        assert_int_equal(checked(q, parked_session_closed(q, &now, 1, &retired)).failure, 0);
        assert_int_equal(retired, 1);
        assert_int_equal(checked(q, parked_session_closed(q, &now, 2, &retired)).failure, 0);
        assert_int_equal(retired, 1);
        assert_protocol_failure(resume(q, &now, OWNER_A, 3, &ticket, 11),
                                PARKED_FAILURE_UNEXPECTED_CONTROL);
        assert_protocol_failure(
            finish(q, &now, OWNER_A, 3, &c, lease, PARKED_ACTION_INTERRUPT, 12, &ignored),
            PARKED_FAILURE_UNEXPECTED_CONTROL);

        struct parked_owner_snapshot snap;
        assert_int_equal(parked_get_owner(q, OWNER_A, &snap), 0);
        assert_int_equal(snap.failure, PARKED_FAILURE_PHASE);
        assert_int_equal(snap.failures, 5);
        assert_int_equal(snap.sleepers + snap.waiters, 0);
}

static void test_nonce_overflow(void **state)
{
        (void)state;
        struct parked_config config = test_config();
        config.first_nonce = UINT64_MAX;
        struct parked *q = test_new(&config);
        struct td_now now = test_now(0);
        struct parked_continuation c;

        c = sleep_ok(q, &now, OWNER_A, 1, 1, 1000);
        assert_int_equal(c.nonce, UINT64_MAX);
        /* no nonce left for another request, nor for the lease of an observation */
        assert_int_equal(sleep_on(q, &now, OWNER_A, 1, 2, true, 10, &c).failure,
                         -TIMERD_E_OVERFLOW);
        assert_int_equal(wait_on(q, OWNER_A, 1, 2, NULL, 0, false, &c).failure, -TIMERD_E_OVERFLOW);
        struct parked_stats st;
        parked_get_stats(q, &st);
        assert_int_equal(st.sleepers, 1);
        assert_int_equal(st.waiters, 0);

        const struct parked_effect *f =
            only_effect(alarm_on(q, &now, OWNER_A, 1, "a"), PARKED_EFFECT_FAILED, 1);
        assert_int_equal(f->failed, PARKED_FAILURE_OVERFLOW);
        parked_get_stats(q, &st);
        assert_int_equal(st.sleepers, 0);
        struct parked_owner_snapshot snap;
        assert_int_equal(parked_get_owner(q, OWNER_A, &snap), 0);
        assert_int_equal(snap.failure, PARKED_FAILURE_OVERFLOW);
        assert_int_equal(snap.failures, 1);
        parked_free(q);
}

static void test_ticket_overflow(void **state)
{
        (void)state;
        struct parked_config config = test_config();
        config.first_nonce = UINT64_MAX - 1;
        struct parked *q = test_new(&config);
        struct td_now now = test_now(0);
        struct parked_ticket ticket;
        uint64_t lease;

        struct parked_continuation c = observed_sleep(q, &now, &lease);
        assert_int_equal(lease, UINT64_MAX);
        assert_protocol_failure(
            finish(q, &now, OWNER_A, 1, &c, lease, PARKED_ACTION_RESUME, 2, &ticket),
            PARKED_FAILURE_OVERFLOW);
        /* still observing: the client can end it another way */
        now = test_now(100);
        const struct parked_effect *f =
            only_effect(finish(q, &now, OWNER_A, 1, &c, lease, PARKED_ACTION_INTERRUPT, 3, &ticket),
                        PARKED_EFFECT_INTERRUPTED, 3);
        assert_int_equal(f->interrupted.remaining_usec, 900);
        parked_free(q);
}

static void test_cycle_overflow(void **state)
{
        (void)state;
        struct parked_config config = test_config();
        config.first_cycle = UINT64_MAX - 1;
        struct parked *q = test_new(&config);
        struct td_now now = test_now(0);
        struct parked_ticket ticket;
        uint64_t lease;

        struct parked_continuation c = observed_sleep(q, &now, &lease);
        assert_int_equal(c.cycle, UINT64_MAX);
        /* the resumption would need one more cycle: refused before a ticket exists */
        assert_protocol_failure(
            finish(q, &now, OWNER_A, 1, &c, lease, PARKED_ACTION_RESUME, 2, &ticket),
            PARKED_FAILURE_OVERFLOW);
        assert_int_equal(ticket.nonce, 0);
        only_effect(finish(q, &now, OWNER_A, 1, &c, lease, PARKED_ACTION_TERMINATE, 3, &ticket),
                    PARKED_EFFECT_RETIRED, 3);
        parked_free(q);

        config.first_cycle = UINT64_MAX;
        q = test_new(&config);
        sleep_ok(q, &now, OWNER_A, 1, 1, 1000);
        const struct parked_effect *f =
            only_effect(alarm_on(q, &now, OWNER_A, 1, "a"), PARKED_EFFECT_FAILED, 1);
        assert_int_equal(f->failed, PARKED_FAILURE_OVERFLOW);
        struct parked_stats st;
        parked_get_stats(q, &st);
        assert_int_equal(st.sleepers, 0);
        assert_int_equal(st.protocol_failures, 1);
        parked_free(q);
}

static void test_alarm_overflow_on_observation(void **state)
{
        (void)state;
        struct parked_config config = test_config();
        config.first_nonce = UINT64_MAX;
        struct parked *q = test_new(&config);
        struct td_now now = test_now(0);
        struct parked_continuation c;

        only_effect(sleep_on(q, &now, OWNER_A, 1, 5, true, 10, &c), PARKED_EFFECT_OBSERVABLE, 0);
        const struct parked_effect *f =
            only_effect(alarm_on(q, &now, OWNER_A, 1, "a"), PARKED_EFFECT_FAILED, 5);
        assert_int_equal(f->failed, PARKED_FAILURE_OVERFLOW);
        struct parked_stats st;
        parked_get_stats(q, &st);
        assert_int_equal(st.sleepers, 0);
        parked_free(q);
}

static void test_session_closed(void **state)
{
        struct parked *q = *state;
        struct td_now now = test_now(0);
        size_t retired = 99;
        uint64_t lease, usec = 0;

        wait_ok(q, OWNER_A, 1, 1);
        sleep_ok(q, &now, OWNER_A, 1, 2, 500);
        sleep_ok(q, &now, OWNER_A, 2, 3, 700);
        sleep_ok(q, &now, OWNER_B, 1, 4, 300);
        observe(q, &now, OWNER_A, 1, 2, &lease);
        assert_int_equal(alarm_on(q, &now, OWNER_A, 2, "blocked").n_effects, 0);

        now = test_now(100);
        struct parked_transition t = checked(q, parked_session_closed(q, &now, 1, &retired));
        assert_int_equal(retired, 3);
        /* the end of A's observation in session 1 is announced at session 2; nobody of 1 is
         * answered */
        const struct parked_effect *f = only_effect(t, PARKED_EFFECT_OBSERVABLE, 0);
        assert_int_equal(f->session, 2);
        f = only_effect(alarm_on(q, &now, OWNER_A, 1, "blocked"), PARKED_EFFECT_OBSERVATION, 3);
        assert_string_equal(f->observation.name, "blocked");
        assert_int_equal(f->observation.remaining_usec, 600);

        struct parked_stats st;
        parked_get_stats(q, &st);
        assert_int_equal(st.waiters, 0);
        assert_int_equal(st.sleepers, 1);
        assert_int_equal(parked_next_deadline(q, TIMERD_CLOCK_MONOTONIC, &usec), 0);
        struct parked_owner_snapshot snap;
        assert_int_equal(parked_get_owner(q, OWNER_B, &snap), -TIMERD_E_NOT_FOUND);

        t = checked(q, parked_session_closed(q, &now, 1, &retired));
        assert_int_equal(t.failure, 0);
        assert_int_equal(t.n_effects, 0);
        assert_int_equal(retired, 0);
        t = checked(q, parked_session_closed(q, &now, 2, &retired));
        assert_int_equal(retired, 1);
        assert_int_equal(t.n_effects, 0);
        t = checked(q, parked_session_closed(q, &now, 2, &retired));
        assert_int_equal(retired, 0);
        parked_get_stats(q, &st);
        assert_int_equal(st.sleepers + st.waiters + st.observing, 0);
}

static void test_resume_moves_session(void **state)
{
        struct parked *q = *state;
        struct td_now now = test_now(0);
        struct parked_ticket ticket;
        size_t retired;
        uint64_t lease;

        struct parked_continuation c = observed_sleep(q, &now, &lease);
        assert_int_equal(
            finish(q, &now, OWNER_A, 2, &c, lease, PARKED_ACTION_RESUME, 2, &ticket).failure, 0);
        assert_int_equal(resume(q, &now, OWNER_A, 2, &ticket, 3).failure, 0);
        checked(q, parked_session_closed(q, &now, 1, &retired));
        assert_int_equal(retired, 0);
        /* alarms now reach it through session 2 */
        const struct parked_effect *f =
            only_effect(alarm_on(q, &now, OWNER_A, 2, "a"), PARKED_EFFECT_OBSERVATION, 3);
        assert_int_equal(f->session, 2);
        checked(q, parked_session_closed(q, &now, 2, &retired));
        assert_int_equal(retired, 1);
}

static void test_shutdown(void **state)
{
        struct parked *q = *state;
        struct td_now now = test_now(0);
        struct parked_continuation c;
        struct parked_ticket ticket;
        uint64_t lease, usec = 0;
        bool taken;

        wait_ok(q, OWNER_A, 1, 1);
        sleep_ok(q, &now, OWNER_A, 1, 2, 500);
        c = observe(q, &now, OWNER_A, 1, 2, &lease);
        sleep_ok(q, &now, OWNER_B, 2, 3, 500);
        struct parked_continuation b = observe(q, &now, OWNER_B, 2, 3, &lease);
        assert_int_equal(
            finish(q, &now, OWNER_B, 2, &b, lease, PARKED_ACTION_RESUME, 4, &ticket).failure, 0);
        sleep_ok(q, &now, OWNER_B, 3, 5, 900);
        assert_int_equal(wait_on(q, OWNER_B, 3, 6, NULL, 0, true, &c).failure, 0);
        assert_int_equal(alarm_on(q, &now, OWNER_A, 1, "pending").n_effects, 0);
        assert_protocol_failure(resume(q, &now, OWNER_A, 1, &ticket, 7), PARKED_FAILURE_IDENTITY);

        struct parked_transition t = checked(q, parked_shutdown(q));
        uint64_t cookies[] = {1, 5, 6};
        assert_int_equal(t.failure, 0);
        assert_int_equal(t.n_effects, 3);
        for (size_t i = 0; i < 3; i++) {
                assert_int_equal(t.effects[i].kind, PARKED_EFFECT_SHUTTING_DOWN);
                assert_int_equal(t.effects[i].cookie, cookies[i]);
        }
        struct parked_stats st;
        parked_get_stats(q, &st);
        assert_int_equal(st.waiters + st.sleepers + st.observing + st.awaiting_resume, 0);
        assert_int_equal(st.latched_owners, 1);
        assert_int_equal(parked_next_deadline(q, TIMERD_CLOCK_MONOTONIC, &usec), 0);

        /* nothing parks any more; the latched failure is still reported */
        assert_int_equal(sleep_on(q, &now, OWNER_A, 1, 8, true, 10, &c).failure,
                         -TIMERD_E_SHUTTING_DOWN);
        assert_int_equal(wait_on(q, OWNER_A, 1, 8, NULL, 0, false, &c).failure,
                         -TIMERD_E_SHUTTING_DOWN);
        assert_int_equal(resume(q, &now, OWNER_B, 2, &ticket, 8).failure, -TIMERD_E_SHUTTING_DOWN);
        assert_int_equal(alarm_on(q, &now, OWNER_A, 1, "late").failure, -TIMERD_E_SHUTTING_DOWN);
        assert_false(checked(q, parked_offer_firing(q, OWNER_A, "t", &taken)).n_effects);
        assert_int_equal(checked(q, parked_shutdown(q)).n_effects, 0);
        struct parked_owner_snapshot snap;
        assert_int_equal(parked_get_owner(q, OWNER_A, &snap), 0);
        assert_int_equal(snap.failure, PARKED_FAILURE_IDENTITY);
}

static void test_limits(void **state)
{
        (void)state;
        struct parked_config config = test_config();
        config.max_per_session = 2;
        config.max_per_owner = 3;
        config.max_names = 2;
        struct parked *q = test_new(&config);
        struct td_now now = test_now(0);
        struct parked_continuation c;
        struct parked_ticket ticket;
        struct parked_stats before, after;
        uint64_t lease;

        const char *three[] = {"a", "b", "c"};
        struct parked_transition t = wait_on(q, OWNER_A, 1, 1, three, 3, false, &c);
        assert_int_equal(t.failure, -TIMERD_E_LIMIT_EXCEEDED);
        assert_int_equal(t.limit, PARKED_LIMIT_NAMES);
        assert_int_equal(wait_on(q, OWNER_A, 1, 1, three, 2, false, &c).failure, 0);

        sleep_ok(q, &now, OWNER_A, 1, 2, 100);
        parked_get_stats(q, &before);
        t = sleep_on(q, &now, OWNER_A, 1, 3, true, 100, &c);
        assert_int_equal(t.failure, -TIMERD_E_LIMIT_EXCEEDED);
        assert_int_equal(t.limit, PARKED_LIMIT_PER_SESSION);
        t = wait_on(q, OWNER_B, 1, 3, NULL, 0, false, &c);
        assert_int_equal(t.limit, PARKED_LIMIT_PER_SESSION);

        sleep_ok(q, &now, OWNER_A, 2, 4, 100);
        t = sleep_on(q, &now, OWNER_A, 3, 5, true, 100, &c);
        assert_int_equal(t.failure, -TIMERD_E_LIMIT_EXCEEDED);
        assert_int_equal(t.limit, PARKED_LIMIT_PER_OWNER);
        t = wait_on(q, OWNER_A, 3, 5, NULL, 0, false, &c);
        assert_int_equal(t.limit, PARKED_LIMIT_PER_OWNER);
        wait_ok(q, OWNER_B, 3, 6);
        parked_get_stats(q, &after);
        assert_int_equal(after.sleepers, before.sleepers + 1);
        assert_int_equal(after.waiters, before.waiters + 1);

        /* a resumption into a full session is refused; the ticket stays good */
        c = observe(q, &now, OWNER_A, 2, 4, &lease);
        assert_int_equal(
            finish(q, &now, OWNER_A, 2, &c, lease, PARKED_ACTION_RESUME, 7, &ticket).failure, 0);
        t = resume(q, &now, OWNER_A, 1, &ticket, 8);
        assert_int_equal(t.failure, -TIMERD_E_LIMIT_EXCEEDED);
        assert_int_equal(t.limit, PARKED_LIMIT_PER_SESSION);
        assert_int_equal(resume(q, &now, OWNER_A, 2, &ticket, 9).failure, 0);
        parked_free(q);
}

static void test_failure_latching_is_per_owner(void **state)
{
        struct parked *q = *state;
        struct td_now now = test_now(0);
        struct parked_ticket ticket;
        uint64_t lease_a, lease_b;

        sleep_ok(q, &now, OWNER_A, 1, 1, 1000);
        sleep_ok(q, &now, OWNER_B, 2, 2, 1000);
        struct parked_continuation a = observe(q, &now, OWNER_A, 1, 1, &lease_a);
        struct parked_continuation b = observe(q, &now, OWNER_B, 2, 2, &lease_b);

        assert_protocol_failure(
            finish(q, &now, OWNER_A, 1, &a, lease_b, PARKED_ACTION_RESUME, 3, &ticket),
            PARKED_FAILURE_IDENTITY);
        assert_protocol_failure(
            finish(q, &now, OWNER_A, 1, &b, lease_b, PARKED_ACTION_RESUME, 3, &ticket),
            PARKED_FAILURE_IDENTITY);

        assert_int_equal(
            finish(q, &now, OWNER_B, 2, &b, lease_b, PARKED_ACTION_RESUME, 4, &ticket).failure, 0);
        assert_int_equal(resume(q, &now, OWNER_B, 2, &ticket, 5).failure, 0);
        struct parked_owner_snapshot snap;
        assert_int_equal(parked_get_owner(q, OWNER_B, &snap), 0);
        assert_int_equal(snap.failures, 0);
        assert_int_equal(snap.failure, _PARKED_FAILURE_INVALID);
        /* the latch records, it does not block A either */
        assert_int_equal(
            finish(q, &now, OWNER_A, 1, &a, lease_a, PARKED_ACTION_RESUME, 6, &ticket).failure, 0);
        assert_int_equal(parked_get_owner(q, OWNER_A, &snap), 0);
        assert_int_equal(snap.failure, PARKED_FAILURE_IDENTITY);
        assert_int_equal(snap.failures, 2);
        struct parked_stats st;
        parked_get_stats(q, &st);
        assert_int_equal(st.latched_owners, 1);
        assert_int_equal(st.protocol_failures, 2);
}

/* xorshift: a fixed sequence, so a failure reproduces */
static uint64_t next_random(uint64_t *x)
{
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        return *x;
}

static void test_many_requests(void **state)
{
        struct parked *q = *state;
        struct td_now now = test_now(0);
        enum { N = 2000, SESSIONS = 97, OWNERS = 13 };
        uint64_t deadline[N + 1];
        uint64_t x = 88172645463325252u;
        size_t retired, total_retired = 0;
        bool taken;

        for (uint64_t i = 1; i <= N; i++) {
                struct td_caller caller = {(uint32_t)(next_random(&x) % OWNERS),
                                           1 + next_random(&x) % SESSIONS};
                enum timerd_clock clock = (enum timerd_clock)(i % TIMERD_CLOCK_MAX);
                struct parked_continuation c;
                deadline[i] = next_random(&x) % 100000;
                if (i % 3 == 0) {
                        struct parked_wait_args a = {.caller = caller,
                                                     .cookie = i,
                                                     .has_timeout = true,
                                                     .clock = clock,
                                                     .timeout_usec = deadline[i]};
                        assert_int_equal(parked_wait(q, &a, &c).failure, 0);
                } else {
                        struct parked_sleep_args a = {.caller = caller,
                                                      .cookie = i,
                                                      .clock = clock,
                                                      .has_deadline = true,
                                                      .deadline_usec = deadline[i]};
                        assert_int_equal(parked_sleep(q, &now, &a, &c).failure, 0);
                }
                if (i % 250 == 0)
                        assert_int_equal(parked_check(q), 0);
        }
        for (uint64_t session = 1; session <= SESSIONS; session += 7) {
                checked(q, parked_session_closed(q, &now, session, &retired));
                total_retired += retired;
        }
        assert_true(total_retired > 0);
        for (uint32_t owner = 0; owner < OWNERS; owner += 4) {
                checked(q, parked_offer_firing(q, owner, "t", &taken));
                assert_true(taken);
        }

        struct parked_stats st;
        parked_get_stats(q, &st);
        assert_int_equal(st.waiters + st.sleepers, N - total_retired - 4);
        size_t expired = 0;
        for (uint64_t t = 0; t <= 100000; t += 5000) {
                now = test_now(t);
                struct parked_transition tr = checked(q, parked_expire(q, &now));
                for (size_t i = 0; i < tr.n_effects; i++) {
                        uint64_t cookie = tr.effects[i].cookie;
                        assert_true(deadline[cookie] <= t);
                        /* per clock, in deadline order */
                        if (i > 0 && tr.effects[i - 1].cookie % TIMERD_CLOCK_MAX ==
                                         cookie % TIMERD_CLOCK_MAX)
                                assert_true(deadline[tr.effects[i - 1].cookie] <= deadline[cookie]);
                }
                expired += tr.n_effects;
                for (size_t c = 0; c < TIMERD_CLOCK_MAX; c++) {
                        uint64_t usec;
                        if (parked_next_deadline(q, (enum timerd_clock)c, &usec) == 1)
                                assert_true(usec > t);
                }
        }
        assert_int_equal(expired, N - total_retired - 4);
        parked_get_stats(q, &st);
        assert_int_equal(st.waiters + st.sleepers, 0);
}

/*
 * Subordinate uids share their person's limit: uids 100..199 are OWNER_A's. Two of them together
 * are refused at max_per_owner while OWNER_B is served; OWNER_A's own uid is held to its own
 * requests; a closed session gives the account its room back; a new table re-charges.
 */
static void test_limits_by_account(void **state)
{
        (void)state;
        static const struct subuid_range ranges[] = {
            {.first = 100, .count = 100, .account = OWNER_A}};
        struct parked_config config = test_config();
        config.max_per_owner = 2;
        struct parked *q = test_new(&config);
        struct parked_continuation c;
        struct subuids table;
        struct tally prepared;
        size_t retired;
        struct td_now now = test_now(0);

        assert_int_equal(subuids_build(&table, ranges, 1, NULL), 0);
        /* Parked before the table: charged when it comes. */
        wait_ok(q, 100, 1, 1);
        assert_int_equal(parked_subuids_prepare(q, &table, &prepared), 0);
        parked_subuids_commit(q, &table, &prepared);
        assert_int_equal(parked_check(q), 0);
        wait_ok(q, 101, 2, 2);
        struct parked_transition t = wait_on(q, 102, 3, 3, NULL, 0, false, &c);
        assert_int_equal(t.failure, -TIMERD_E_LIMIT_EXCEEDED);
        assert_int_equal(t.limit, PARKED_LIMIT_PER_OWNER);
        t = sleep_on(q, &now, 101, 2, 4, true, 100, &c);
        assert_int_equal(t.limit, PARKED_LIMIT_PER_OWNER);
        wait_ok(q, OWNER_B, 4, 5);
        wait_ok(q, OWNER_B, 4, 6);
        /* OWNER_A's own uid is not kept out by its subordinate uids. */
        wait_ok(q, OWNER_A, 5, 7);
        wait_ok(q, OWNER_A, 5, 8);
        assert_int_equal(wait_on(q, OWNER_A, 5, 9, NULL, 0, false, &c).limit,
                         PARKED_LIMIT_PER_OWNER);
        assert_int_equal(checked(q, parked_session_closed(q, &now, 1, &retired)).failure, 0);
        assert_int_equal(retired, 1);
        assert_int_equal(wait_on(q, 102, 3, 3, NULL, 0, false, &c).limit, PARKED_LIMIT_PER_OWNER);
        assert_int_equal(checked(q, parked_session_closed(q, &now, 5, &retired)).failure, 0);
        wait_ok(q, 102, 3, 3);
        assert_int_equal(wait_on(q, 102, 3, 10, NULL, 0, false, &c).limit, PARKED_LIMIT_PER_OWNER);

        /* No table: each uid is its own account again. */
        assert_int_equal(parked_subuids_prepare(q, NULL, &prepared), 0);
        parked_subuids_commit(q, NULL, &prepared);
        assert_int_equal(parked_check(q), 0);
        subuids_done(&table);
        wait_ok(q, 102, 3, 10);
        parked_free(q);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_strings),
            cmocka_unit_test(test_new_and_invalid_input),
            QUEUE_TEST(test_wait_oldest_takes_firing),
            QUEUE_TEST(test_wait_names_filter),
            QUEUE_TEST(test_wait_stream_stays_parked),
            QUEUE_TEST(test_wait_timeout),
            QUEUE_TEST(test_sleep_elapses),
            QUEUE_TEST(test_expire_order),
            QUEUE_TEST(test_observation_resume_original_deadline),
            QUEUE_TEST(test_resume_after_deadline_passed),
            QUEUE_TEST(test_observation_interrupt),
            QUEUE_TEST(test_observation_terminate),
            QUEUE_TEST(test_sleep_without_deadline),
            QUEUE_TEST(test_untaken_alarm_is_not_kept),
            QUEUE_TEST(test_observable_on_resume),
            QUEUE_TEST(test_one_observation_per_owner),
            QUEUE_TEST(test_alarms_per_owner_in_one_session),
            QUEUE_TEST(test_end_waits),
            QUEUE_TEST(test_finish_failures),
            QUEUE_TEST(test_resume_failures),
            QUEUE_TEST(test_duplicate_and_late_intents),
            cmocka_unit_test(test_nonce_overflow),
            cmocka_unit_test(test_ticket_overflow),
            cmocka_unit_test(test_cycle_overflow),
            cmocka_unit_test(test_alarm_overflow_on_observation),
            QUEUE_TEST(test_session_closed),
            QUEUE_TEST(test_resume_moves_session),
            QUEUE_TEST(test_shutdown),
            cmocka_unit_test(test_limits),
            cmocka_unit_test(test_limits_by_account),
            QUEUE_TEST(test_failure_latching_is_per_owner),
            QUEUE_TEST(test_many_requests),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
