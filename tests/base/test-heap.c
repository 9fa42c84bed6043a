/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * The base heap against a naive array: order with ties, removal and re-keying of arbitrary entries,
 * an entry on two heaps at once, growth that fails (realloc wrapped at link time) leaving the
 * heap exactly as it was, and shrinking.
 */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/heap.h"

#define N_ITEMS 500
#define N_OPS   20000

void *__real_realloc(void *p, size_t size);
void *__wrap_realloc(void *p, size_t size);

/* The link-time wrapper has no other way to reach the test. */
static bool realloc_fails;

void *__wrap_realloc(void *p, size_t size)
{
        return realloc_fails ? NULL : __real_realloc(p, size);
}

struct item {
        uint32_t by_key;  /* position on the heap by key */
        uint32_t by_rank; /* position on a second heap, by rank */
        uint64_t key;
        uint32_t rank; /* unique: breaks ties */
        bool queued;
};

static bool rank_before(const void *a, const void *b, const void *userdata)
{
        const struct item *x = a, *y = b;

        assert_ptr_equal(userdata, &realloc_fails);
        return x->rank < y->rank;
}

static bool item_before(const struct item *a, const struct item *b)
{
        return a->key != b->key ? a->key < b->key : a->rank < b->rank;
}

static uint64_t rng_next(uint64_t *s)
{
        *s ^= *s << 13;
        *s ^= *s >> 7;
        *s ^= *s << 17;
        return *s;
}

static void items_init(struct item *items, size_t n, const struct heap *h)
{
        for (size_t i = 0; i < n; i++) {
                items[i] = (struct item){.rank = (uint32_t)(n - i)};
                heap_position_init(h, &items[i]);
        }
}

/* The queued item that goes first, naively. */
static const struct item *naive_min(const struct item *items, size_t n)
{
        const struct item *min = NULL;

        for (size_t i = 0; i < n; i++)
                if (items[i].queued && (!min || item_before(&items[i], min)))
                        min = &items[i];
        return min;
}

static void test_heap_pops_in_order_with_ties(void **state)
{
        struct item items[N_ITEMS];
        uint64_t seed = 7;
        struct heap h;

        (void)state;
        heap_init(&h, offsetof(struct item, by_key), rank_before, &realloc_fails);
        items_init(items, N_ITEMS, &h);
        assert_null(heap_top(&h));
        for (size_t i = 0; i < N_ITEMS; i++) {
                /* few distinct keys: most comparisons are ties */
                items[i].key = rng_next(&seed) % 8;
                assert_int_equal(heap_reserve(&h, i + 1), 0);
                heap_insert(&h, &items[i], items[i].key);
                items[i].queued = true;
        }
        assert_int_equal(heap_check(&h), 0);

        for (size_t n = N_ITEMS; n > 0; n--) {
                const struct heap_slot *top = heap_top(&h);
                struct item *it = top->entry;

                assert_int_equal(heap_size(&h), n);
                assert_ptr_equal(it, naive_min(items, N_ITEMS));
                assert_int_equal(top->key, it->key);
                heap_remove(&h, it);
                it->queued = false;
                assert_int_equal(it->by_key, HEAP_NOT_QUEUED);
                assert_false(heap_contains(&h, it));
        }
        assert_null(heap_top(&h));
        heap_done(&h);
}

static void test_heap_random_remove_and_rekey(void **state)
{
        struct item items[N_ITEMS];
        uint64_t seed = 42;
        struct heap h;

        (void)state;
        heap_init(&h, offsetof(struct item, by_key), rank_before, &realloc_fails);
        items_init(items, N_ITEMS, &h);
        assert_int_equal(heap_reserve(&h, N_ITEMS), 0);

        for (size_t op = 0; op < N_OPS; op++) {
                struct item *it = &items[rng_next(&seed) % N_ITEMS];
                uint64_t key = rng_next(&seed) % 1000;

                if (!it->queued) {
                        heap_insert(&h, it, key);
                        it->queued = true;
                } else if (rng_next(&seed) % 2) {
                        heap_rekey(&h, it, key);
                } else {
                        heap_remove(&h, it);
                        it->queued = false;
                }
                if (it->queued) {
                        it->key = key;
                        assert_int_equal(heap_key_of(&h, it), key);
                }
                assert_int_equal(heap_contains(&h, it), it->queued);
                const struct item *min = naive_min(items, N_ITEMS);
                assert_ptr_equal(heap_top(&h) ? heap_top(&h)->entry : NULL, min);
                if (op % 97 == 0)
                        assert_int_equal(heap_check(&h), 0);
        }
        assert_int_equal(heap_check(&h), 0);

        /* a broken back-pointer is noticed */
        struct item *top = heap_top(&h)->entry;
        top->by_key = 1;
        assert_int_equal(heap_check(&h), -EUCLEAN);
        top->by_key = 0;
        assert_int_equal(heap_check(&h), 0);
        heap_done(&h);
}

/* One entry on two heaps, each with its own position field, ordered differently. */
static void test_heap_entry_on_two_heaps(void **state)
{
        struct item items[N_ITEMS];
        uint64_t seed = 3;
        struct heap by_key, by_rank;

        (void)state;
        heap_init(&by_key, offsetof(struct item, by_key), rank_before, &realloc_fails);
        heap_init(&by_rank, offsetof(struct item, by_rank), rank_before, &realloc_fails);
        items_init(items, N_ITEMS, &by_key);
        assert_int_equal(heap_reserve(&by_key, N_ITEMS), 0);
        assert_int_equal(heap_reserve(&by_rank, N_ITEMS), 0);
        for (size_t i = 0; i < N_ITEMS; i++) {
                heap_position_init(&by_rank, &items[i]);
                heap_insert(&by_key, &items[i], rng_next(&seed) % 1000);
                heap_insert(&by_rank, &items[i], items[i].rank);
        }
        for (size_t i = 0; i < N_ITEMS; i += 2)
                heap_remove(&by_key, &items[i]);
        assert_int_equal(heap_check(&by_key), 0);
        assert_int_equal(heap_check(&by_rank), 0);
        assert_int_equal(heap_size(&by_key), N_ITEMS / 2);
        assert_int_equal(heap_size(&by_rank), N_ITEMS);
        /* the highest index has the lowest rank */
        assert_ptr_equal(heap_top(&by_rank)->entry, &items[N_ITEMS - 1]);
        assert_true(heap_contains(&by_rank, &items[0]));
        assert_false(heap_contains(&by_key, &items[0]));
        heap_done(&by_key);
        heap_done(&by_rank);
}

static void test_heap_growth_failure_leaves_it_intact(void **state)
{
        struct item items[40];
        struct heap h;

        (void)state;
        heap_init(&h, offsetof(struct item, by_key), rank_before, &realloc_fails);
        items_init(items, 40, &h);
        for (size_t i = 0; i < 20; i++) {
                assert_int_equal(heap_reserve(&h, i + 1), 0);
                heap_insert(&h, &items[i], 100 - i);
        }
        size_t capacity = h.capacity;
        const struct heap_slot *slots = h.slots;
        struct heap_slot before[20];
        memcpy(before, h.slots, sizeof(before));

        assert_int_equal(heap_reserve(&h, (size_t)HEAP_CAPACITY_MAX + 1), -ENOMEM);
        realloc_fails = true;
        assert_int_equal(heap_reserve(&h, capacity + 1), -ENOMEM);
        realloc_fails = false;
        /* within its capacity a reserve needs no memory */
        realloc_fails = true;
        assert_int_equal(heap_reserve(&h, capacity), 0);
        realloc_fails = false;

        assert_int_equal(h.capacity, capacity);
        assert_ptr_equal(h.slots, slots);
        assert_int_equal(heap_size(&h), 20);
        assert_memory_equal(h.slots, before, sizeof(before));
        assert_int_equal(heap_check(&h), 0);
        assert_ptr_equal(heap_top(&h)->entry, &items[19]);

        /* and it grows once memory is back */
        assert_int_equal(heap_reserve(&h, 40), 0);
        for (size_t i = 20; i < 40; i++)
                heap_insert(&h, &items[i], 100 - i);
        assert_int_equal(heap_check(&h), 0);
        assert_ptr_equal(heap_top(&h)->entry, &items[39]);
        heap_done(&h);
        assert_int_equal(h.capacity, 0);
        assert_null(heap_top(&h));
}

static void test_heap_shrinks_to_what_it_keeps(void **state)
{
        struct item items[100];
        struct heap h;

        (void)state;
        heap_init(&h, offsetof(struct item, by_key), rank_before, &realloc_fails);
        items_init(items, 100, &h);
        assert_int_equal(heap_reserve(&h, 100), 0);
        for (size_t i = 0; i < 100; i++)
                heap_insert(&h, &items[i], 1000 - i);
        for (size_t i = 0; i < 95; i++)
                heap_remove(&h, &items[i]);

        /* A quarter or more of its room still needed: it keeps it all. */
        heap_shrink(&h, 25);
        assert_int_equal(h.capacity, 100);
        /* Out of memory: as it was. */
        realloc_fails = true;
        heap_shrink(&h, 10);
        realloc_fails = false;
        assert_int_equal(h.capacity, 100);
        /* Never below its entries, whatever the caller keeps. */
        heap_shrink(&h, 0);
        assert_int_equal(h.capacity, 10);
        assert_int_equal(heap_check(&h), 0);
        assert_ptr_equal(heap_top(&h)->entry, &items[99]);
        for (size_t i = 95; i < 100; i++)
                heap_remove(&h, &items[i]);
        heap_shrink(&h, 0);
        assert_int_equal(h.capacity, 0);
        assert_null(h.slots);
        assert_int_equal(heap_reserve(&h, 1), 0);
        heap_insert(&h, &items[0], 1);
        assert_ptr_equal(heap_top(&h)->entry, &items[0]);
        heap_done(&h);
}

/* heap_clear() empties the heap with no entry read or written (their positions stay as they
 * were), keeps its room, and the same entries, reset, go on it again in order. */
static void test_heap_clear_touches_no_entry(void **state)
{
        struct item items[50], before[50];
        struct heap h;

        (void)state;
        heap_init(&h, offsetof(struct item, by_key), rank_before, &realloc_fails);
        items_init(items, 50, &h);
        assert_int_equal(heap_reserve(&h, 50), 0);
        for (size_t i = 0; i < 50; i++)
                heap_insert(&h, &items[i], 500 - i);
        memcpy(before, items, sizeof(items));
        heap_clear(&h);
        assert_int_equal(memcmp(before, items, sizeof(items)), 0);
        assert_int_equal(heap_size(&h), 0);
        assert_null(heap_top(&h));
        assert_int_equal(h.capacity, 50);
        assert_int_equal(heap_check(&h), 0);
        /* A stale position does not make an entry look queued. */
        assert_false(heap_contains(&h, &items[0]));

        realloc_fails = true; /* no allocation: the room was kept */
        for (size_t i = 0; i < 50; i++) {
                heap_position_init(&h, &items[i]);
                heap_insert(&h, &items[i], i);
        }
        realloc_fails = false;
        assert_int_equal(heap_check(&h), 0);
        for (size_t i = 0; i < 50; i++) {
                assert_ptr_equal(heap_top(&h)->entry, &items[i]);
                heap_remove(&h, &items[i]);
        }
        heap_done(&h);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_heap_pops_in_order_with_ties),
            cmocka_unit_test(test_heap_random_remove_and_rekey),
            cmocka_unit_test(test_heap_entry_on_two_heaps),
            cmocka_unit_test(test_heap_growth_failure_leaves_it_intact),
            cmocka_unit_test(test_heap_shrinks_to_what_it_keeps),
            cmocka_unit_test(test_heap_clear_touches_no_entry),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
