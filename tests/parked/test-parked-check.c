/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * White box: the invariant checker every other test relies on must notice a broken queue. The
 * test reaches the queue's internals through parked-internal.h; each corruption is undone.
 */

#include <errno.h>

#include "service/core/parked-internal.h"

#include "parked-test.h"

#define ASSERT_DETECTED(q, corrupt, restore)                                                       \
        do {                                                                                       \
                corrupt;                                                                           \
                assert_int_equal(parked_check(q), -EUCLEAN);                                       \
                restore;                                                                           \
                assert_int_equal(parked_check(q), 0);                                              \
        } while (0)

/* Put a slot at i as the heap would, position included. */
static void slot_place(struct heap *h, size_t i, struct heap_slot s)
{
        h->slots[i] = s;
        *heap_position_of(h, s.entry) = (uint32_t)i;
}

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

        struct owner *a = parked_owner_get(q, OWNER_A), *b = parked_owner_get(q, OWNER_B);
        struct session *s1 = parked_session_get(q, 1);
        struct entry *observed = b->observing, *sleeper = parked_entry_get(q, 2);
        struct heap *h = &q->heaps[TIMERD_CLOCK_MONOTONIC];
        assert_non_null(observed);
        assert_non_null(sleeper);
        assert_int_equal(heap_size(h), 2);

        ASSERT_DETECTED(q, q->stats.waiters++, q->stats.waiters--);
        ASSERT_DETECTED(q, a->sleepers++, a->sleepers--);
        ASSERT_DETECTED(q, b->observing = NULL, b->observing = observed);
        ASSERT_DETECTED(q, observed->lease = 0, observed->lease = lease);
        ASSERT_DETECTED(q, sleeper->phase = PHASE_OBSERVING, sleeper->phase = PHASE_WAITING);
        ASSERT_DETECTED(q, sleeper->nonce = 99, sleeper->nonce = 2);
        ASSERT_DETECTED(q, q->timed[TIMERD_CLOCK_MONOTONIC]++, q->timed[TIMERD_CLOCK_MONOTONIC]--);
        ASSERT_DETECTED(q, q->shutting_down = true, q->shutting_down = false);
        ASSERT_DETECTED(q, q->n_effects_allocated = 1,
                        q->n_effects_allocated = q->entries.n_entries + 2);
        ASSERT_DETECTED(q, s1->line.n++, s1->line.n--);

        /* heap order: the later deadline on top */
        struct heap_slot top = h->slots[0], other = h->slots[1];
        ASSERT_DETECTED(q, (slot_place(h, 0, other), slot_place(h, 1, top)),
                        (slot_place(h, 0, top), slot_place(h, 1, other)));

        /* a broken back link on a line */
        struct entry *second =
            parked_line_next(&q->all, parked_line_first(&q->all, LINE_ALL), LINE_ALL);
        struct list_node *first = second->links[LINE_ALL].prev;
        ASSERT_DETECTED(q, second->links[LINE_ALL].prev = NULL,
                        second->links[LINE_ALL].prev = first);

        struct owner_session *a1 = sleeper->sleeps;
        assert_ptr_equal(a1, parked_session_find_owner(s1, OWNER_A));
        /* a waiting Sleep missing from its owner's line */
        ASSERT_DETECTED(q, a->sleeps.n++, a->sleeps.n--);

        /* a waiting Sleep out of its (owner, session)'s park order */
        struct heap *sleeps = &a1->sleeps;
        ASSERT_DETECTED(q, sleeper->heap_index[HEAP_SLEEPS] = HEAP_NOT_QUEUED,
                        sleeper->heap_index[HEAP_SLEEPS] = 0);
        ASSERT_DETECTED(q, sleeps->n_slots = 0, sleeps->n_slots = 1);

        /* a Wait missing from its owner's line */
        struct entry *waiter = parked_line_first(&a->waits, LINE_OWNER);
        ASSERT_DETECTED(q, parked_line_remove(&a->waits, waiter, LINE_OWNER),
                        parked_line_append(&a->waits, waiter, LINE_OWNER));

        /* a failure count without its kind */
        ASSERT_DETECTED(q, (a->failures = 1, q->stats.latched_owners++),
                        (a->failures = 0, q->stats.latched_owners--));
        parked_free(q);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_check_detects_corruption),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
