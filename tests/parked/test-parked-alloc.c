/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * Out of memory at every allocation of every entry point that allocates: each must fail with
 * -ENOMEM and leave the queue exactly as it was. The queue's allocations are routed through the
 * wrappers below (-Wl,--wrap); the countdown is the test binary's only global.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "parked-test.h"
#include "service/core/subuids.h"
#include "service/core/tally.h"

static long allocations_until_failure = -1; /* < 0: never fail */

static bool allocation_fails(void)
{
        if (allocations_until_failure < 0)
                return false;
        return allocations_until_failure-- == 0;
}

void *__real_malloc(size_t size);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t size);
void *__real_reallocarray(void *p, size_t n, size_t size);
char *__real_strdup(const char *s);
void *__wrap_malloc(size_t size);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t size);
void *__wrap_reallocarray(void *p, size_t n, size_t size);
char *__wrap_strdup(const char *s);

void *__wrap_malloc(size_t size)
{
        return allocation_fails() ? NULL : __real_malloc(size);
}

void *__wrap_calloc(size_t n, size_t size)
{
        return allocation_fails() ? NULL : __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t size)
{
        return allocation_fails() ? NULL : __real_realloc(p, size);
}

void *__wrap_reallocarray(void *p, size_t n, size_t size)
{
        return allocation_fails() ? NULL : __real_reallocarray(p, n, size);
}

char *__wrap_strdup(const char *s)
{
        return allocation_fails() ? NULL : __real_strdup(s);
}

struct scenario {
        size_t n_before; /* requests parked before the step */
        uint32_t uid;
        uint64_t session;
        struct parked_ticket ticket;
};

typedef void (*setup_fn)(struct parked *q, struct scenario *sc);
typedef struct parked_transition (*step_fn)(struct parked *q, struct scenario *sc);

/*
 * For k = 0, 1, …: build the state afresh, run `step` failing its k-th allocation, and expect
 * -ENOMEM with nothing changed, until the step makes fewer than k + 1 allocations and succeeds.
 * Returns how many allocations the step made.
 */
static long run_with_failures(setup_fn setup, step_fn step, struct scenario *sc)
{
        for (long k = 0;; k++) {
                struct parked_config config = test_config();
                struct parked *q = test_new(&config);
                setup(q, sc);
                struct parked_stats before, after;
                parked_get_stats(q, &before);

                allocations_until_failure = k;
                struct parked_transition t = step(q, sc);
                bool injected = allocations_until_failure < 0;
                allocations_until_failure = -1;
                assert_int_equal(parked_check(q), 0);
                if (!injected) {
                        assert_int_equal(t.failure, 0);
                        parked_free(q);
                        return k;
                }
                assert_int_equal(t.failure, -ENOMEM);
                assert_int_equal(t.n_effects, 0);
                parked_get_stats(q, &after);
                assert_memory_equal(&before, &after, sizeof(before));
                parked_free(q);
        }
}

static struct parked_transition wait_step(struct parked *q, struct scenario *sc)
{
        const char *names[] = {"one", "two", "three"};
        struct parked_continuation c;
        struct parked_wait_args a = {
            .caller = {sc->uid, sc->session},
            .cookie = 1,
            .names = names,
            .n_names = 3,
            .has_timeout = true,
            .clock = TIMERD_CLOCK_BOOTTIME,
            .timeout_usec = 50,
        };
        return parked_wait(q, &a, &c);
}

static struct parked_transition sleep_step(struct parked *q, struct scenario *sc)
{
        struct td_now now = test_now(0);
        struct parked_continuation c;
        struct parked_sleep_args a = {
            .caller = {sc->uid, sc->session},
            .cookie = 2,
            .clock = TIMERD_CLOCK_BOOTTIME,
            .has_deadline = true,
            .deadline_usec = 100,
        };
        return parked_sleep(q, &now, &a, &c);
}

static struct parked_transition resume_step(struct parked *q, struct scenario *sc)
{
        struct td_now now = test_now(0);
        struct td_caller caller = {sc->uid, sc->session};
        return parked_resume(q, &now, &caller, &sc->ticket, 3);
}

/* n_before requests of distinct owners and sessions, so that every index and heap fills up. */
static void park_many(struct parked *q, struct scenario *sc)
{
        for (size_t i = 0; i < sc->n_before; i++) {
                struct scenario other = {.uid = (uint32_t)(5000 + i), .session = 5000 + i};
                assert_int_equal(
                    i % 2 ? sleep_step(q, &other).failure : wait_step(q, &other).failure, 0);
        }
}

static void test_parking_out_of_memory(void **state)
{
        (void)state;
        struct scenario sc = {.uid = OWNER_A, .session = 1};
        /* new owner, session, names, index, heap and effects: each allocation fails once; a Sleep
         * also makes its (owner, session) record with its heap */
        assert_int_equal(run_with_failures(park_many, wait_step, &sc), 12);
        assert_int_equal(run_with_failures(park_many, sleep_step, &sc), 11);
        for (sc.n_before = 1; sc.n_before <= 40; sc.n_before++) {
                assert_true(run_with_failures(park_many, wait_step, &sc) >= 4);
                assert_true(run_with_failures(park_many, sleep_step, &sc) >= 1);
        }
}

/* Ranges charging uids 100..199 to OWNER_B, built before any allocation may fail. */
static struct subuids subordinate_ranges;

static void subordinate_setup(struct parked *q, struct scenario *sc)
{
        struct tally prepared;

        (void)sc;
        assert_int_equal(parked_subuids_prepare(q, &subordinate_ranges, &prepared), 0);
        parked_subuids_commit(q, &subordinate_ranges, &prepared);
}

/* A subordinate uid's first request also makes its account's count (its table and its entry):
 * each allocation fails once, changing nothing (parked_check checks the count against the
 * owners). */
static void test_subordinate_parking_out_of_memory(void **state)
{
        static const struct subuid_range range = {.first = 100, .count = 100, .account = OWNER_B};
        struct scenario sc = {.uid = 150, .session = 1};

        (void)state;
        assert_int_equal(subuids_build(&subordinate_ranges, &range, 1, NULL), 0);
        assert_int_equal(run_with_failures(subordinate_setup, wait_step, &sc), 14);
        assert_int_equal(run_with_failures(subordinate_setup, sleep_step, &sc), 13);
        subuids_done(&subordinate_ranges);
}

static void awaiting_resume(struct parked *q, struct scenario *sc)
{
        struct td_now now = test_now(0);
        uint64_t lease;
        struct parked_continuation c = observed_sleep(q, &now, &lease);
        assert_int_equal(
            finish(q, &now, OWNER_A, 1, &c, lease, PARKED_ACTION_RESUME, 2, &sc->ticket).failure,
            0);
}

static void test_resume_out_of_memory(void **state)
{
        (void)state;
        /* resuming into a new session: session, owner table, record and its heap of Sleeps */
        struct scenario sc = (struct scenario){.uid = OWNER_A, .session = 77};
        assert_int_equal(run_with_failures(awaiting_resume, resume_step, &sc), 4);
}

static void test_failure_latch_out_of_memory(void **state)
{
        (void)state;
        struct parked_config config = test_config();
        struct parked *q = test_new(&config);
        struct td_now now = test_now(0);
        struct parked_ticket ticket;
        struct parked_continuation c = {.epoch = EPOCH, .nonce = 1};

        /* without memory for the owner's record the failure is still returned and counted */
        allocations_until_failure = 0;
        assert_protocol_failure(
            finish(q, &now, OWNER_A, 1, &c, 1, PARKED_ACTION_RESUME, 1, &ticket),
            PARKED_FAILURE_UNEXPECTED_CONTROL);
        allocations_until_failure = -1;
        struct parked_owner_snapshot snap;
        assert_int_equal(parked_get_owner(q, OWNER_A, &snap), -TIMERD_E_NOT_FOUND);
        struct parked_stats st;
        parked_get_stats(q, &st);
        assert_int_equal(st.protocol_failures, 1);
        assert_int_equal(st.latched_owners, 0);

        allocations_until_failure = 1;
        assert_protocol_failure(
            finish(q, &now, OWNER_A, 1, &c, 1, PARKED_ACTION_RESUME, 1, &ticket),
            PARKED_FAILURE_UNEXPECTED_CONTROL);
        allocations_until_failure = -1;
        assert_int_equal(parked_get_owner(q, OWNER_A, &snap), -TIMERD_E_NOT_FOUND);

        assert_protocol_failure(
            finish(q, &now, OWNER_A, 1, &c, 1, PARKED_ACTION_RESUME, 1, &ticket),
            PARKED_FAILURE_UNEXPECTED_CONTROL);
        assert_int_equal(parked_get_owner(q, OWNER_A, &snap), 0);
        assert_int_equal(snap.failures, 1);
        parked_get_stats(q, &st);
        assert_int_equal(st.protocol_failures, 3);
        parked_free(q);
}

static void test_new_out_of_memory(void **state)
{
        (void)state;
        struct parked_config config = test_config();
        struct parked *q = NULL;
        allocations_until_failure = 0;
        assert_int_equal(parked_new(&config, &q), -ENOMEM);
        allocations_until_failure = -1;
        assert_null(q);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_parking_out_of_memory),
            cmocka_unit_test(test_subordinate_parking_out_of_memory),
            cmocka_unit_test(test_resume_out_of_memory),
            cmocka_unit_test(test_failure_latch_out_of_memory),
            cmocka_unit_test(test_new_out_of_memory),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
