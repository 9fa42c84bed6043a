/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Shared helpers of the parked-queue tests: every step is followed by parked_check(). */

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "service/core/parked.h"

#define OWNER_A 1000u
#define OWNER_B 2000u
#define EPOCH   7u

static inline struct parked_config test_config(void)
{
        return (struct parked_config){.epoch = EPOCH, .first_nonce = 1, .first_cycle = 0};
}

static inline struct parked *test_new(const struct parked_config *config)
{
        struct parked *q = NULL;
        assert_int_equal(parked_new(config, &q), 0);
        assert_non_null(q);
        assert_int_equal(parked_check(q), 0);
        return q;
}

/* A cmocka fixture: *state is a queue of test_config(), freed after the test, failed or not. */
static inline int queue_setup(void **state)
{
        struct parked_config config = test_config();
        *state = test_new(&config);
        return 0;
}

static inline int queue_teardown(void **state)
{
        parked_free(*state);
        return 0;
}

#define QUEUE_TEST(test) cmocka_unit_test_setup_teardown(test, queue_setup, queue_teardown)

static inline struct td_now test_now(uint64_t usec)
{
        struct td_now now;
        for (size_t c = 0; c < TIMERD_CLOCK_MAX; c++)
                now.usec[c] = usec;
        return now;
}

static inline struct parked_transition checked(const struct parked *q, struct parked_transition t)
{
        assert_int_equal(parked_check(q), 0);
        if (t.failure < 0)
                assert_int_equal(t.n_effects, 0);
        return t;
}

static inline struct parked_transition sleep_on(struct parked *q, const struct td_now *now,
                                                uint32_t uid, uint64_t session, uint64_t cookie,
                                                bool has_deadline, uint64_t deadline,
                                                struct parked_continuation *ret)
{
        struct parked_sleep_args a = {
            .caller = {.uid = uid, .session = session},
            .cookie = cookie,
            .clock = TIMERD_CLOCK_MONOTONIC,
            .has_deadline = has_deadline,
            .deadline_usec = deadline,
        };
        return checked(q, parked_sleep(q, now, &a, ret));
}

/* A Sleep that parks quietly. */
static inline struct parked_continuation sleep_ok(struct parked *q, const struct td_now *now,
                                                  uint32_t uid, uint64_t session, uint64_t cookie,
                                                  uint64_t deadline)
{
        struct parked_continuation c;
        struct parked_transition t = sleep_on(q, now, uid, session, cookie, true, deadline, &c);
        assert_int_equal(t.failure, 0);
        /* an owner not observing is told it may take a kept alarm */
        assert_true(t.n_effects <= 1);
        if (t.n_effects == 1) {
                assert_int_equal(t.effects[0].kind, PARKED_EFFECT_OBSERVABLE);
                assert_int_equal(t.effects[0].owner, uid);
        }
        assert_int_equal(c.epoch, EPOCH);
        return c;
}

static inline struct parked_transition wait_on(struct parked *q, uint32_t uid, uint64_t session,
                                               uint64_t cookie, const char *const *names,
                                               size_t n_names, bool stream,
                                               struct parked_continuation *ret)
{
        struct parked_wait_args a = {
            .caller = {.uid = uid, .session = session},
            .cookie = cookie,
            .names = names,
            .n_names = n_names,
            .stream = stream,
        };
        return checked(q, parked_wait(q, &a, ret));
}

static inline struct parked_continuation wait_ok(struct parked *q, uint32_t uid, uint64_t session,
                                                 uint64_t cookie)
{
        struct parked_continuation c;
        struct parked_transition t = wait_on(q, uid, session, cookie, NULL, 0, false, &c);
        assert_int_equal(t.failure, 0);
        assert_int_equal(t.n_effects, 0);
        return c;
}

static inline struct parked_transition alarm_on(struct parked *q, const struct td_now *now,
                                                uint32_t uid, uint64_t session, const char *name)
{
        bool taken;
        struct parked_transition t =
            checked(q, parked_offer_alarm(q, now, uid, session, name, 1, &taken));
        assert_int_equal(taken, t.n_effects > 0 && t.effects[0].kind == PARKED_EFFECT_OBSERVATION);
        return t;
}

static inline struct parked_transition finish(struct parked *q, const struct td_now *now,
                                              uint32_t uid, uint64_t session,
                                              const struct parked_continuation *c, uint64_t lease,
                                              enum parked_action action, uint64_t cookie,
                                              struct parked_ticket *ret)
{
        struct td_caller caller = {.uid = uid, .session = session};
        return checked(q, parked_finish(q, now, &caller, c, lease, action, cookie, ret));
}

static inline struct parked_transition resume(struct parked *q, const struct td_now *now,
                                              uint32_t uid, uint64_t session,
                                              const struct parked_ticket *ticket, uint64_t cookie)
{
        struct td_caller caller = {.uid = uid, .session = session};
        return checked(q, parked_resume(q, now, &caller, ticket, cookie));
}

/* The single effect of t, which must be of `kind` and answer `cookie`. */
static inline const struct parked_effect *only_effect(struct parked_transition t,
                                                      enum parked_effect_kind kind, uint64_t cookie)
{
        assert_int_equal(t.failure, 0);
        assert_int_equal(t.n_effects, 1);
        assert_int_equal(t.effects[0].kind, kind);
        assert_int_equal(t.effects[0].cookie, cookie);
        return &t.effects[0];
}

static inline void assert_protocol_failure(struct parked_transition t, enum parked_failure kind)
{
        assert_int_equal(t.failure, -TIMERD_E_PROTOCOL_FAILURE);
        assert_int_equal(t.protocol, kind);
        assert_int_equal(t.n_effects, 0);
}

/* Observe a fresh Sleep of (uid, session) with one alarm: returns the observed continuation. */
static inline struct parked_continuation observe(struct parked *q, const struct td_now *now,
                                                 uint32_t uid, uint64_t session, uint64_t cookie,
                                                 uint64_t *ret_lease)
{
        struct parked_transition t = alarm_on(q, now, uid, session, "alarm");
        const struct parked_effect *f = only_effect(t, PARKED_EFFECT_OBSERVATION, cookie);
        *ret_lease = f->observation.lease;
        return f->continuation;
}

/* OWNER_A's Sleep until 1000 in session 1 (cookie 1), observed by one alarm: its continuation. */
static inline struct parked_continuation observed_sleep(struct parked *q, const struct td_now *now,
                                                        uint64_t *ret_lease)
{
        sleep_ok(q, now, OWNER_A, 1, 1, 1000);
        return observe(q, now, OWNER_A, 1, 1, ret_lease);
}
