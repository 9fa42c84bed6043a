/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * White box: the invariant checker every other test relies on must notice a broken queue. The
 * queue's source is compiled into this test to reach its internals; each corruption is undone.
 */

#include "service/core/parked.c"

#include "parked-test.h"

#define ASSERT_DETECTED(q, corrupt, restore)                                                       \
        do {                                                                                       \
                corrupt;                                                                           \
                assert_int_equal(parked_check(q), -EUCLEAN);                                       \
                restore;                                                                           \
                assert_int_equal(parked_check(q), 0);                                              \
        } while (0)

static void test_check_detects_corruption(void **state)
{
        (void)state;
        struct parked_config config = test_config();
        struct parked *q = test_new(&config);
        struct td_now now = test_now(0);
        uint64_t lease;

        wait_ok(q, OWNER_A, 1, 1);
        sleep_ok(q, &now, OWNER_A, 1, 2, 300);
        sleep_ok(q, &now, OWNER_A, 2, 3, 100);
        sleep_ok(q, &now, OWNER_B, 3, 4, 200);
        observe(q, &now, OWNER_B, 3, 4, &lease);

        struct owner *a = owner_get(q, OWNER_A), *b = owner_get(q, OWNER_B);
        struct session *s1 = session_get(q, 1);
        struct entry *observed = b->observing, *sleeper = index_get(&q->entries, 2);
        struct heap *h = &q->heaps[TIMERD_CLOCK_MONOTONIC];
        assert_non_null(observed);
        assert_non_null(sleeper);
        assert_int_equal(h->n, 2);

        ASSERT_DETECTED(q, q->stats.waiters++, q->stats.waiters--);
        ASSERT_DETECTED(q, a->sleepers++, a->sleepers--);
        ASSERT_DETECTED(q, b->observing = NULL, b->observing = observed);
        ASSERT_DETECTED(q, observed->lease = 0, observed->lease = lease);
        ASSERT_DETECTED(q, sleeper->phase = PHASE_OBSERVING, sleeper->phase = PHASE_WAITING);
        ASSERT_DETECTED(q, sleeper->nonce = 99, sleeper->nonce = 2);
        ASSERT_DETECTED(q, q->timed[TIMERD_CLOCK_MONOTONIC]++, q->timed[TIMERD_CLOCK_MONOTONIC]--);
        ASSERT_DETECTED(q, q->shutting_down = true, q->shutting_down = false);
        ASSERT_DETECTED(q, q->n_effects_allocated = 1, q->n_effects_allocated = q->entries.n + 2);
        ASSERT_DETECTED(q, s1->line.n++, s1->line.n--);

        /* heap order: the later deadline on top */
        struct entry *top = h->items[0], *other = h->items[1];
        ASSERT_DETECTED(q, (heap_place(h, 0, other), heap_place(h, 1, top)),
                        (heap_place(h, 0, top), heap_place(h, 1, other)));

        /* a broken back link on a line */
        struct entry *second = q->all.head->links[LINE_ALL].next;
        ASSERT_DETECTED(q, second->links[LINE_ALL].prev = NULL,
                        second->links[LINE_ALL].prev = q->all.head);

        struct owner_session *a1 = sleeper->sleeps;
        assert_ptr_equal(a1, session_find_owner(s1, OWNER_A));
        /* a waiting Sleep missing from its owner's line */
        ASSERT_DETECTED(q, a->sleeps.n++, a->sleeps.n--);

        /* a waiting Sleep out of its (owner, session)'s park order */
        struct heap *sleeps = &a1->sleeps;
        ASSERT_DETECTED(q, sleeper->heap_index[HEAP_SLEEPS] = HEAP_NONE,
                        sleeper->heap_index[HEAP_SLEEPS] = 0);
        ASSERT_DETECTED(q, sleeps->n = 0, sleeps->n = 1);

        /* a Wait missing from its owner's line */
        struct entry *waiter = a->waits.head;
        ASSERT_DETECTED(q, line_remove(&a->waits, waiter, LINE_OWNER),
                        line_append(&a->waits, waiter, LINE_OWNER));

        /* a failure count without its kind */
        ASSERT_DETECTED(q, (a->failures = 1, q->stats.latched_owners++),
                        (a->failures = 0, q->stats.latched_owners--));
        parked_free(q);
}

/* Backward-shift deletion across the end of the table, where probe runs wrap around. */
static void test_index_wraps_around(void **state)
{
        (void)state;
        struct index x = {};
        assert_int_equal(index_reserve(&x, 3), 0);
        size_t mask = x.n_allocated - 1;
        uint64_t at_end[2] = {}, at_start = 0;
        size_t found_end = 0;
        bool found_start = false;
        for (uint64_t key = 1; found_end < 2 || !found_start; key++) {
                size_t home = index_hash(key) & mask;
                if (home == mask && found_end < 2)
                        at_end[found_end++] = key;
                else if (home == 0 && !found_start) {
                        at_start = key;
                        found_start = true;
                }
        }
        int values[3];

        /* last slot: at_end[0]; slot 0: at_end[1], wrapped; slot 1: at_start, displaced */
        index_put(&x, at_end[0], &values[0]);
        index_put(&x, at_end[1], &values[1]);
        index_put(&x, at_start, &values[2]);
        assert_ptr_equal(x.slots[0].value, &values[1]);
        assert_ptr_equal(x.slots[1].value, &values[2]);
        index_remove(&x, at_end[0]);
        assert_true(index_valid(&x));
        assert_ptr_equal(x.slots[mask].value, &values[1]);
        assert_ptr_equal(x.slots[0].value, &values[2]);
        assert_ptr_equal(index_get(&x, at_end[1]), &values[1]);
        assert_ptr_equal(index_get(&x, at_start), &values[2]);
        assert_null(index_get(&x, at_end[0]));

        /* a member at its home stays put when the hole is across the end */
        index_remove(&x, at_end[1]);
        index_put(&x, at_end[0], &values[0]);
        assert_ptr_equal(x.slots[mask].value, &values[0]);
        assert_ptr_equal(x.slots[0].value, &values[2]);
        index_remove(&x, at_end[0]);
        assert_true(index_valid(&x));
        assert_ptr_equal(x.slots[0].value, &values[2]);
        assert_ptr_equal(index_get(&x, at_start), &values[2]);
        free(x.slots);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_check_detects_corruption),
            cmocka_unit_test(test_index_wraps_around),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
