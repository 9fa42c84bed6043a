/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * Out of memory at every allocation of every call that allocates. The allocator is wrapped at
 * link time (-Wl,--wrap=malloc,calloc,realloc): the n-th allocation after arming fails. A call
 * that fails must answer -ENOMEM, leave the registry exactly as it was, and leak nothing (ASan).
 */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fixture.h"
#include "service/core/subuids.h"
#include "service/core/tally.h"

void *__real_malloc(size_t size);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t size);
void *__wrap_malloc(size_t size);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t size);

/* The link-time wrapper has no other way to reach the test: allocations left before one fails. */
static long allocations_until_failure = -1;

static bool allocation_fails(void)
{
        if (allocations_until_failure < 0)
                return false;
        return allocations_until_failure-- == 0;
}

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

static void fail_nth_allocation(long n)
{
        allocations_until_failure = n;
}

/* Whether the armed failure was reached; disarms it. */
static bool failure_injected(void)
{
        bool injected = allocations_until_failure < 0;

        allocations_until_failure = -1;
        return injected;
}

struct inventory {
        long n;
        struct td_snapshot *timers;
        struct registry_stats stats;
        uint64_t changes;
        bool changes_pending;
};

static struct inventory inventory_take(const struct fx *f)
{
        struct inventory inv;

        inv.n = registry_list(f->r, 0, true, &inv.timers);
        assert_true(inv.n >= 0);
        registry_get_stats(f->r, &inv.stats);
        inv.changes = registry_change_count(f->r);
        inv.changes_pending = registry_changes_pending(f->r);
        return inv;
}

static void assert_inventory_unchanged(const struct fx *f, struct inventory *before)
{
        struct inventory now = inventory_take(f);

        assert_int_equal(now.n, before->n);
        for (long i = 0; i < now.n; i++) {
                const struct td_snapshot *a = &before->timers[i], *b = &now.timers[i];

                assert_int_equal(a->owner, b->owner);
                assert_string_equal(a->name, b->name);
                assert_int_equal(a->generation, b->generation);
                assert_int_equal(a->state, b->state);
                assert_int_equal(a->declaration.clock, b->declaration.clock);
                assert_int_equal(a->has_deadline, b->has_deadline);
                assert_int_equal(a->next_deadline_usec, b->next_deadline_usec);
                assert_int_equal(a->run, b->run);
                assert_int_equal(a->run_active, b->run_active);
                assert_int_equal(a->pending, b->pending);
                assert_int_equal(a->session, b->session);
        }
        assert_memory_equal(&now.stats, &before->stats, sizeof(now.stats));
        assert_int_equal(now.changes, before->changes);
        assert_int_equal(now.changes_pending, before->changes_pending);
        free(now.timers);
}

typedef int (*op_fn)(struct fx *f, const void *args);

/*
 * Run op with the n-th allocation failing, for n = 0, 1, ... until an attempt reaches no failure
 * (it must then answer expect). Returns how many failures were survived.
 */
static long each_allocation_fails(struct fx *f, op_fn op, const void *args, int expect)
{
        for (long n = 0;; n++) {
                struct inventory before = inventory_take(f);
                int r;

                fail_nth_allocation(n);
                r = op(f, args);
                if (!failure_injected()) {
                        assert_int_equal(r, expect);
                        free(before.timers);
                        return n;
                }
                assert_int_equal(r, -ENOMEM);
                assert_int_equal(registry_check(f->r), 0);
                assert_inventory_unchanged(f, &before);
                free(before.timers);
        }
}

/*
 * The same, each attempt on a fresh registry, so that every allocation point fails once on its
 * own (no earlier attempt has reserved anything yet).
 */
static long each_allocation_fails_fresh(op_fn op, const void *args, int expect)
{
        for (long n = 0;; n++) {
                struct registry_stats st;
                struct fx f;
                int r;

                fx_init(&f, NULL);
                fail_nth_allocation(n);
                r = op(&f, args);
                if (!failure_injected()) {
                        assert_int_equal(r, expect);
                        fx_done(&f);
                        return n;
                }
                assert_int_equal(r, -ENOMEM);
                registry_get_stats(f.r, &st);
                assert_int_equal(st.timers, 0);
                fx_done(&f);
        }
}

struct register_op {
        uint32_t uid;
        uint64_t session;
        const char *name;
        struct td_declaration declaration;
        bool has_start;
        uint64_t start_usec;
        bool replace;
};

static int op_register(struct fx *f, const void *args)
{
        const struct register_op *a = args;

        return fx_register_full(f, a->uid, a->session, a->name, a->declaration, a->has_start,
                                a->start_usec, a->replace, NULL);
}

static int op_reconcile(struct fx *f, const void *args)
{
        const struct td_reconcile_args *a = args;
        uint64_t g;
        bool created;

        return fx_apply(f, registry_reconcile(f->r, &f->now, a, &g, &created));
}

struct delivery_op {
        const struct td_dispatch *dispatch; /* deliver this, or take the oldest pending */
        uint64_t session;
        struct td_dispatch *ret;
};

static int op_deliver(struct fx *f, const void *args)
{
        const struct delivery_op *a = args;

        if (a->dispatch)
                return registry_deliver(f->r, a->dispatch, a->session);
        return registry_take_pending(f->r, &f->now, FX_UID, TIMERD_DELIVERY_NOTIFY, NULL, 0,
                                     a->session, a->ret);
}

static void test_new_out_of_memory(void **state)
{
        struct registry_config c = {.first_generation = 1, .first_handle_generation = 1};
        struct registry *r = NULL;
        long n;

        (void)state;
        for (n = 0;; n++) {
                fail_nth_allocation(n);
                if (registry_new(&c, &r) == 0)
                        break;
                assert_null(r);
        }
        assert_false(failure_injected());
        assert_true(n >= 2);
        assert_int_equal(registry_check(r), 0);
        registry_free(r);
}

static void test_register_out_of_memory(void **state)
{
        struct register_op a = {
            .uid = FX_UID,
            .session = FX_SESSION,
            .name = "a",
            .declaration = fx_decl(TIMERD_POLICY_ONCE, 0),
        };
        struct td_snapshot s;
        struct fx f;

        (void)state;
        /* The timer, its owner, its session, the clock's exact heap and three hash tables. */
        assert_int_equal(each_allocation_fails_fresh(op_register, &a, 0), 7);
        /* A coalescing timer needs the deadline and the latest heap of its clock, and the record
         * that holds its accuracy. */
        a.declaration.accuracy_usec = 10;
        assert_int_equal(each_allocation_fails_fresh(op_register, &a, 0), 9);
        a.declaration.accuracy_usec = 0;
        a.declaration.randomized_delay_usec = 10;
        assert_int_equal(each_allocation_fails_fresh(op_register, &a, 0), 8);
        a.declaration.randomized_delay_usec = 0;

        fx_init(&f, NULL);
        assert_true(each_allocation_fails(&f, op_register, &a, 0) > 0);
        assert_int_equal(registry_get(f.r, FX_UID, "a", &s), 0);

        /* Growing the tables of an existing owner. */
        a.declaration = fx_decl(TIMERD_POLICY_INTERVAL, 100);
        a.declaration.lifetime = TIMERD_LIFETIME_RETAINED;
        for (int i = 0; i < 40; i++) {
                char name[4] = {'t', (char)('a' + i % 26), (char)('a' + i / 26), '\0'};

                a.name = name;
                each_allocation_fails(&f, op_register, &a, 0);
        }

        /* Replace onto another clock, from another session. */
        a = (struct register_op){
            .uid = FX_UID,
            .session = FX_SESSION + 1,
            .name = "a",
            .declaration = fx_decl(TIMERD_POLICY_ONCE, 0),
            .has_start = true,
            .start_usec = 5000,
            .replace = true,
        };
        a.declaration.clock = TIMERD_CLOCK_BOOTTIME;
        assert_true(each_allocation_fails(&f, op_register, &a, 0) >= 2);
        s = fx_get(&f, "a");
        assert_int_equal(s.declaration.clock, TIMERD_CLOCK_BOOTTIME);
        assert_int_equal(s.session, FX_SESSION + 1);
        fx_done(&f);

        /* A transient timer replaced by a retained one needs room among the changes. */
        fx_init(&f, NULL);
        a.declaration = fx_decl(TIMERD_POLICY_ONCE, 0);
        a.replace = false;
        assert_int_equal(op_register(&f, &a), 0);
        a.declaration.lifetime = TIMERD_LIFETIME_RETAINED;
        a.replace = true;
        assert_int_equal(each_allocation_fails(&f, op_register, &a, 0), 1);
        assert_int_equal(fx_get(&f, "a").declaration.lifetime, TIMERD_LIFETIME_RETAINED);
        assert_true(registry_changes_pending(f.r));
        fx_done(&f);

        /* A plain timer replaced by one with a rare field needs the record that holds it; back
         * to plain needs nothing. */
        fx_init(&f, NULL);
        a.declaration = fx_decl(TIMERD_POLICY_ONCE, 0);
        a.replace = false;
        assert_int_equal(op_register(&f, &a), 0);
        a.declaration.randomized_delay_usec = 7;
        a.replace = true;
        assert_int_equal(each_allocation_fails(&f, op_register, &a, 0), 1);
        assert_int_equal(fx_get(&f, "a").declaration.randomized_delay_usec, 7);
        a.declaration.randomized_delay_usec = 0;
        assert_int_equal(each_allocation_fails(&f, op_register, &a, 0), 0);
        assert_int_equal(fx_get(&f, "a").declaration.randomized_delay_usec, 0);
        fx_done(&f);
}

static void test_reconcile_out_of_memory(void **state)
{
        struct td_reconcile_args a = {
            .caller = {.uid = 5, .session = 3},
            .name = "r",
            .declaration = fx_decl(TIMERD_POLICY_AFTER_COMPLETION, 10),
            .desired = TIMERD_DESIRED_SCHEDULED,
        };
        struct td_snapshot s;
        struct fx f;

        (void)state;
        assert_int_equal(each_allocation_fails_fresh(op_reconcile, &a, 0), 7);
        fx_init(&f, NULL);
        assert_true(each_allocation_fails(&f, op_reconcile, &a, 0) > 0);
        assert_int_equal(registry_get(f.r, 5, "r", &s), 0);
        assert_int_equal(s.state, TIMERD_STATE_SCHEDULED);
        fx_done(&f);
}

static void test_delivery_out_of_memory(void **state)
{
        struct td_dispatch d, taken = {};
        struct delivery_op a;
        struct fx f;

        (void)state;
        fx_init(&f, NULL);
        assert_int_equal(fx_register_at(&f, "a", fx_decl(TIMERD_POLICY_ONCE, 0), 2000, NULL), 0);
        assert_int_equal(fx_register_at(&f, "b", fx_decl(TIMERD_POLICY_ONCE, 0), 2000, NULL), 0);
        assert_int_equal(fx_advance(&f, TIMERD_CLOCK_MONOTONIC, 2000), 2);
        d = *fx_dispatch(&f, 0);
        /* Handing over to a session never seen before needs its record. */
        a = (struct delivery_op){.dispatch = &d, .session = 40};
        assert_true(each_allocation_fails(&f, op_deliver, &a, 0) >= 1);
        assert_false(fx_get(&f, "a").pending);
        a = (struct delivery_op){.session = 41, .ret = &taken};
        assert_true(each_allocation_fails(&f, op_deliver, &a, 1) >= 1);
        assert_string_equal(taken.name, "b");
        assert_int_equal(fx_apply(&f, registry_session_closed(f.r, &f.now, 40)), 0);
        assert_int_equal(fx_apply(&f, registry_session_closed(f.r, &f.now, 41)), 0);
        assert_int_equal(fx_get(&f, "a").last_outcome, TIMERD_OUTCOME_EXPECTED_FAILURE);
        assert_int_equal(fx_get(&f, "b").last_outcome, TIMERD_OUTCOME_EXPECTED_FAILURE);
        fx_done(&f);
}

/* Control call number `run` (a selector here, not a run) on the claim's timer. */
static int op_control(struct fx *f, const void *args)
{
        const struct td_handle *selector = args;
        struct td_handle claim = fx_claim(selector->name, selector->generation);
        struct td_reschedule_result previous;

        switch (selector->run) {
        case 0:
                return fx_schedule(f, claim, 9000);
        case 1:
                return fx_cancel(f, claim);
        case 2:
                return fx_apply(
                    f, registry_reschedule(f->r, &f->now, &claim, true, 8000, true, 50, &previous));
        default:
                return fx_unregister(f, claim);
        }
}

static int op_complete(struct fx *f, const void *args)
{
        return fx_complete(f, fx_token(args), TIMERD_OUTCOME_SUCCESS, TIMERD_DIRECTIVE_CONTINUE, 0);
}

static struct td_declaration retained(enum timerd_policy policy, uint64_t cadence_usec)
{
        struct td_declaration d = fx_decl(policy, cadence_usec);

        d.lifetime = TIMERD_LIFETIME_RETAINED;
        return d;
}

/* The first client call on a retained timer since the last commit keeps its state for a
 * rollback: its allocation may fail. */
static void test_retained_calls_out_of_memory(void **state)
{
        struct td_handle claim;
        struct td_dispatch d;
        uint64_t g;
        struct fx f;

        (void)state;
        fx_init(&f, NULL);
        assert_int_equal(fx_register_at(&f, "r", retained(TIMERD_POLICY_INTERVAL, 100), 2000, &g),
                         0);
        claim = fx_claim("r", g);
        registry_call_begin(f.r);
        for (claim.run = 0; claim.run < 4; claim.run++) {
                registry_changes_commit(f.r);
                assert_true(each_allocation_fails(&f, op_control, &claim, 0) >= 1);
        }

        assert_int_equal(fx_register_at(&f, "c", retained(TIMERD_POLICY_ONCE, 0), 2000, NULL), 0);
        assert_int_equal(fx_advance(&f, TIMERD_CLOCK_MONOTONIC, 2000), 1);
        d = *fx_dispatch(&f, 0);
        assert_int_equal(registry_take_pending(f.r, &f.now, FX_UID, TIMERD_DELIVERY_NOTIFY, NULL, 0,
                                               FX_SESSION, &d),
                         1);
        registry_changes_commit(f.r);
        assert_true(each_allocation_fails(&f, op_complete, &d, 0) >= 1);
        fx_done(&f);
}

static int op_restore(struct fx *f, const void *args)
{
        bool clamped;

        return fx_apply(f, registry_restore(f->r, &f->now, args, 0, &clamped));
}

static void test_restore_out_of_memory(void **state)
{
        struct td_snapshot s = {
            .owner = FX_UID,
            .name = "restored",
            .declaration = retained(TIMERD_POLICY_ONCE, 0),
            .generation = 9,
            .has_deadline = true,
            .next_deadline_usec = 5000,
        };
        struct fx f;

        (void)state;
        /* The timer, its owner, the clock's exact heap, two hash tables and the room for its
         * changes. */
        assert_int_equal(each_allocation_fails_fresh(op_restore, &s, 0), 6);
        fx_init(&f, NULL);
        assert_true(each_allocation_fails(&f, op_restore, &s, 0) > 0);
        assert_int_equal(fx_get(&f, "restored").generation, 9);
        fx_done(&f);

        /* One that ran has the record of its runs as well. */
        s.run = 4;
        s.runs = 4;
        s.has_last_start = s.has_last_finish = true;
        s.last_start_usec = 1000;
        s.last_finish_usec = 1200;
        s.last_outcome = TIMERD_OUTCOME_SUCCESS;
        assert_int_equal(each_allocation_fails_fresh(op_restore, &s, 0), 7);
        fx_init(&f, NULL);
        assert_true(each_allocation_fails(&f, op_restore, &s, 0) > 0);
        assert_int_equal(fx_get(&f, "restored").runs, 4);
        assert_int_equal(fx_get(&f, "restored").last_finish_usec, 1200);
        fx_done(&f);
}

static int op_reserve(struct fx *f, const void *args)
{
        return registry_reserve(f->r, *(const size_t *)args);
}

/* Making room ahead fails as a whole: nothing changes. */
static void test_reserve_out_of_memory(void **state)
{
        const size_t n = 1000;
        struct fx f;

        (void)state;
        fx_init(&f, NULL);
        assert_int_equal(each_allocation_fails(&f, op_reserve, &n, 0), 2);
        /* Made already. */
        assert_int_equal(each_allocation_fails(&f, op_reserve, &n, 0), 0);
        fx_done(&f);
}

static int op_note_overrun(struct fx *f, const void *args)
{
        return fx_apply(f, registry_note_overrun(f->r, &f->now, args));
}

/* An overrun noted on a timer that never ran needs the record of its runs. */
static void test_note_overrun_out_of_memory(void **state)
{
        struct td_handle claim;
        uint64_t g;
        struct fx f;

        (void)state;
        fx_init(&f, NULL);
        assert_int_equal(fx_register_at(&f, "o", fx_decl(TIMERD_POLICY_ONCE, 0), 2000, &g), 0);
        claim = fx_claim("o", g);
        assert_int_equal(each_allocation_fails(&f, op_note_overrun, &claim, 0), 1);
        assert_int_equal(fx_get(&f, "o").overruns, 1);
        /* The record stays: the next one allocates nothing. */
        assert_int_equal(each_allocation_fails(&f, op_note_overrun, &claim, 0), 0);
        assert_int_equal(fx_get(&f, "o").overruns, 2);
        fx_done(&f);
}

/* A removed timer that cannot be put back: the registry says so and stays consistent. */
static void test_rollback_out_of_memory(void **state)
{
        struct td_transition t;
        struct td_snapshot s;
        uint64_t g;
        struct fx f;

        (void)state;
        fx_init(&f, NULL);
        assert_int_equal(fx_register_at(&f, "r", retained(TIMERD_POLICY_ONCE, 0), 2000, &g), 0);
        registry_changes_commit(f.r);
        registry_call_begin(f.r);
        assert_int_equal(fx_unregister(&f, fx_claim("r", g)), 0);
        fail_nth_allocation(0);
        t = registry_changes_rollback(f.r, &f.now);
        assert_true(failure_injected());
        assert_int_equal(t.failure, -ENOMEM);
        assert_int_equal(registry_check(f.r), 0);
        assert_int_equal(registry_get(f.r, FX_UID, "r", &s), -TIMERD_E_NOT_FOUND);
        fx_done(&f);
}

static void test_list_out_of_memory(void **state)
{
        struct td_snapshot *list = NULL;
        struct fx f;

        (void)state;
        fx_init(&f, NULL);
        assert_int_equal(fx_register(&f, "a", fx_decl(TIMERD_POLICY_ONCE, 0), NULL), 0);
        fail_nth_allocation(0);
        assert_int_equal(registry_list(f.r, FX_UID, false, &list), -ENOMEM);
        assert_true(failure_injected());
        assert_null(list);
        fx_done(&f);
}

/*
 * Each allocation of a firing batch fails in turn (a first run's record, the effect table): the
 * firings that fit are dispatched, the rest wait for the clock, re-armed at once in the past.
 */
static void test_expire_out_of_memory_fires_the_rest_next(void **state)
{
        enum { N = 10 };
        char names[N][4];
        long n;

        (void)state;
        for (n = 0;; n++) {
                bool seen[N] = {};
                size_t first;
                struct fx f;

                fx_init(&f, NULL);
                for (int i = 0; i < N; i++) {
                        names[i][0] = 't';
                        names[i][1] = (char)('0' + i);
                        names[i][2] = '\0';
                        assert_int_equal(fx_register_at(&f, names[i],
                                                        fx_decl(TIMERD_POLICY_ONCE, 0), 2000, NULL),
                                         0);
                }
                fail_nth_allocation(n);
                first = fx_advance(&f, TIMERD_CLOCK_MONOTONIC, 2000);
                if (!failure_injected()) {
                        assert_int_equal(first, N);
                        fx_done(&f);
                        break;
                }
                assert_true(first < N);
                assert_int_equal(fx_effect(&f, 0, TD_EFFECT_ARM)->arm.deadline_usec, 2000);
                for (size_t i = 0; i < first; i++)
                        seen[fx_dispatch(&f, i)->name[1] - '0'] = true;
                assert_int_equal(fx_advance(&f, TIMERD_CLOCK_MONOTONIC, 2000), N - first);
                for (size_t i = 0; i < N - first; i++) {
                        int k = fx_dispatch(&f, i)->name[1] - '0';

                        assert_false(seen[k]);
                        seen[k] = true;
                }
                /* The dispatches and the DISARM of the emptied clock. */
                assert_int_equal(f.last.n_effects, N - first + 1);
                assert_int_equal(fx_effect(&f, 0, TD_EFFECT_DISARM)->arm.clock,
                                 TIMERD_CLOCK_MONOTONIC);
                fx_done(&f);
        }
        /* A record per first run and the growth of the effect table. */
        assert_true(n > N);
}

/*
 * A subordinate uid's first timer also makes its account's count (a table and an entry): each
 * allocation failing leaves the registry as it was, its counts checked against the owners. A
 * re-charge that runs out of memory answers -ENOMEM and keeps nothing (ASan: no leak).
 */
static void test_accounts_out_of_memory(void **state)
{
        static const struct subuid_range range = {.first = FX_UID, .count = 1, .account = 7};
        struct register_op a = {
            .uid = FX_UID,
            .session = FX_SESSION,
            .name = "a",
            .declaration = fx_decl(TIMERD_POLICY_ONCE, 0),
        };
        struct tally prepared;
        struct subuids t;
        long n;
        struct fx f;

        (void)state;
        assert_int_equal(subuids_build(&t, &range, 1, NULL), 0);
        for (n = 0;; n++) {
                fx_init(&f, NULL);
                assert_int_equal(registry_subuids_prepare(f.r, &t, &prepared), 0);
                registry_subuids_commit(f.r, &t, &prepared);
                fail_nth_allocation(n);
                int r = op_register(&f, &a);
                if (!failure_injected()) {
                        assert_int_equal(r, 0);
                        break;
                }
                assert_int_equal(r, -ENOMEM);
                assert_int_equal(registry_check(f.r), 0);
                fx_done(&f);
        }
        /* Those of any owner's first timer, and the account's table and entry. */
        assert_int_equal(n, 9);

        /* Back to no ranges, then again to t: the count by account is made anew. */
        assert_int_equal(registry_subuids_prepare(f.r, NULL, &prepared), 0);
        registry_subuids_commit(f.r, NULL, &prepared);
        for (n = 0;; n++) {
                fail_nth_allocation(n);
                int r = registry_subuids_prepare(f.r, &t, &prepared);
                if (!failure_injected()) {
                        assert_int_equal(r, 0);
                        break;
                }
                assert_int_equal(r, -ENOMEM);
                assert_int_equal(registry_check(f.r), 0);
        }
        assert_int_equal(n, 2);
        registry_subuids_commit(f.r, &t, &prepared);
        assert_int_equal(registry_check(f.r), 0);
        /* A second timer of the uid counts on the account too (registry_check). */
        a.name = "b";
        assert_int_equal(op_register(&f, &a), 0);
        assert_int_equal(registry_check(f.r), 0);
        fx_done(&f);
        subuids_done(&t);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_new_out_of_memory),
            cmocka_unit_test(test_register_out_of_memory),
            cmocka_unit_test(test_accounts_out_of_memory),
            cmocka_unit_test(test_reconcile_out_of_memory),
            cmocka_unit_test(test_delivery_out_of_memory),
            cmocka_unit_test(test_retained_calls_out_of_memory),
            cmocka_unit_test(test_restore_out_of_memory),
            cmocka_unit_test(test_reserve_out_of_memory),
            cmocka_unit_test(test_note_overrun_out_of_memory),
            cmocka_unit_test(test_rollback_out_of_memory),
            cmocka_unit_test(test_list_out_of_memory),
            cmocka_unit_test(test_expire_out_of_memory_fires_the_rest_next),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
