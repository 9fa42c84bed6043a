/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The timer queue and the hash table on their own, against naive arrays. */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/hashmap.h"
#include "service/core/timerq.h"

#define N_ENTRIES 300
#define N_OPS     20000

struct item {
        struct timerq_entry entry;
        uint64_t deadline;
        uint64_t accuracy;
        uint32_t owner;
        char name[8];
};

static const struct item *item_of(const struct timerq_entry *e)
{
        return (const struct item *)(const void *)((const char *)e - offsetof(struct item, entry));
}

static bool item_tie_before(const struct timerq_entry *a, const struct timerq_entry *b)
{
        const struct item *x = item_of(a), *y = item_of(b);

        if (x->owner != y->owner)
                return x->owner < y->owner;
        return strcmp(x->name, y->name) < 0;
}

static uint64_t rng_next(uint64_t *s)
{
        *s ^= *s << 13;
        *s ^= *s >> 7;
        *s ^= *s << 17;
        return *s;
}

static bool naive_before(const struct item *a, const struct item *b)
{
        if (a->deadline != b->deadline)
                return a->deadline < b->deadline;
        return item_tie_before(&a->entry, &b->entry);
}

static uint64_t latest_of(const struct item *it)
{
        return it->deadline > UINT64_MAX - it->accuracy ? UINT64_MAX : it->deadline + it->accuracy;
}

static void test_timerq_random_against_naive(void **state)
{
        struct item *items = calloc(N_ENTRIES, sizeof(struct item));
        uint64_t seed = 42;
        struct timerq q;

        (void)state;
        assert_non_null(items);
        timerq_init(&q, item_tie_before);
        for (enum timerq_kind k = 0; k < TIMERQ_KIND_MAX; k++) {
                assert_int_equal(timerq_reserve(&q, k, N_ENTRIES), 0);
                assert_true(timerq_capacity(&q, k) >= N_ENTRIES);
        }
        for (size_t i = 0; i < N_ENTRIES; i++) {
                /* Few owners and deadlines: ties are the common case. */
                snprintf(items[i].name, sizeof(items[i].name), "n%zu", i % 37);
                items[i].owner = (uint32_t)(i / 37);
                timerq_entry_init(&items[i].entry);
        }

        for (size_t op = 0; op < N_OPS; op++) {
                struct item *it = &items[rng_next(&seed) % N_ENTRIES];
                const struct item *min = NULL;
                uint64_t arm = UINT64_MAX, when;
                size_t n = 0;

                if (rng_next(&seed) % 4 == 0)
                        timerq_remove(&q, &it->entry);
                else {
                        it->accuracy = rng_next(&seed) % 3 == 0 ? 0 : rng_next(&seed) % 50;
                        it->deadline = rng_next(&seed) % 200;
                        timerq_put(&q, &it->entry, it->deadline, it->accuracy);
                }
                assert_int_equal(timerq_check(&q), 0);

                for (size_t i = 0; i < N_ENTRIES; i++) {
                        if (!timerq_entry_queued(&items[i].entry))
                                continue;
                        n++;
                        if (!min || naive_before(&items[i], min))
                                min = &items[i];
                        if (latest_of(&items[i]) < arm)
                                arm = latest_of(&items[i]);
                }
                assert_int_equal(timerq_size(&q), n);
                assert_ptr_equal(timerq_peek(&q), min ? &min->entry : NULL);
                if (min)
                        assert_int_equal(timerq_entry_deadline(&q, &min->entry), min->deadline);
                assert_int_equal(timerq_arm_time(&q, &when), n > 0);
                if (n > 0)
                        assert_int_equal(when, arm);
        }

        /* Draining pops in (deadline, owner, name) order. */
        for (const struct item *prev = NULL; timerq_peek(&q);) {
                struct item *it = (struct item *)(void *)timerq_peek(&q);

                if (prev)
                        assert_false(naive_before(it, prev));
                timerq_remove(&q, &it->entry);
                assert_false(timerq_entry_queued(&it->entry));
                prev = it;
        }
        assert_false(timerq_arm_time(&q, &(uint64_t){0}));
        timerq_done(&q);
        free(items);
}

static void test_timerq_latest_saturates(void **state)
{
        struct item it = {.owner = 1, .name = "x"};
        struct timerq q;
        uint64_t when;

        (void)state;
        timerq_init(&q, item_tie_before);
        assert_int_equal(timerq_reserve(&q, TIMERQ_COALESCING, 1), 0);
        timerq_entry_init(&it.entry);
        timerq_put(&q, &it.entry, UINT64_MAX - 3, 10);
        assert_true(timerq_arm_time(&q, &when));
        assert_int_equal(when, UINT64_MAX);
        assert_int_equal(timerq_entry_deadline(&q, timerq_peek(&q)), UINT64_MAX - 3);
        /* Removing twice is harmless. */
        timerq_remove(&q, &it.entry);
        timerq_remove(&q, &it.entry);
        assert_int_equal(timerq_size(&q), 0);
        assert_int_equal(timerq_check(&q), 0);
        timerq_done(&q);
}

struct key {
        uint64_t hash;
        int id;
};

static uint64_t key_hash_of(const void *entry)
{
        return ((const struct key *)entry)->hash;
}

static bool key_matches(const void *entry, const void *key)
{
        return ((const struct key *)entry)->id == *(const int *)key;
}

static void test_reserve_too_large(void **state)
{
        struct hashmap m;
        struct timerq q;

        (void)state;
        timerq_init(&q, item_tie_before);
        for (enum timerq_kind k = 0; k < TIMERQ_KIND_MAX; k++) {
                assert_int_equal(timerq_reserve(&q, k, SIZE_MAX), -ENOMEM);
                assert_int_equal(timerq_reserve(&q, k, (size_t)TIMERQ_CAPACITY_MAX + 1), -ENOMEM);
                assert_int_equal(timerq_capacity(&q, k), 0);
        }
        timerq_done(&q);
        hashmap_init(&m, key_hash_of);
        assert_int_equal(hashmap_reserve(&m, SIZE_MAX), -ENOMEM);
        assert_int_equal(m.n_slots, 0);
        hashmap_done(&m);
}

static void test_hashmap_random_against_naive(void **state)
{
        enum { N = 200 };
        struct key keys[N];
        bool present[N] = {};
        uint64_t seed = 7;
        struct hashmap m;

        (void)state;
        hashmap_init(&m, key_hash_of);
        assert_null(hashmap_find(&m, 1, key_matches, &(int){1}));
        hashmap_remove(&m, 1, &keys[0]);
        for (int i = 0; i < N; i++)
                /* A handful of hash values: long probe runs that wrap around the table. */
                keys[i] = (struct key){
                    .hash = i % 5 == 0 ? UINT64_MAX : hash_mix64((uint64_t)i % 23), .id = i};

        for (size_t op = 0; op < 20000; op++) {
                int i = (int)(rng_next(&seed) % N);
                size_t n = 0, it = 0;

                if (present[i]) {
                        hashmap_remove(&m, keys[i].hash, &keys[i]);
                        present[i] = false;
                } else {
                        assert_int_equal(hashmap_reserve(&m, m.n_entries + 1), 0);
                        hashmap_insert(&m, keys[i].hash, &keys[i]);
                        present[i] = true;
                }
                assert_int_equal(hashmap_check(&m), 0);
                for (int j = 0; j < N; j++) {
                        assert_ptr_equal(hashmap_find(&m, keys[j].hash, key_matches, &keys[j].id),
                                         present[j] ? &keys[j] : NULL);
                        n += present[j];
                }
                assert_int_equal(m.n_entries, n);
                while (hashmap_next(&m, &it))
                        n--;
                assert_int_equal(n, 0);
        }
        /* Removing an entry that is not there, along a populated probe run, changes nothing. */
        for (int i = 0; i < N; i++)
                if (!present[i]) {
                        size_t n = m.n_entries;

                        hashmap_remove(&m, keys[i].hash, &keys[i]);
                        assert_int_equal(m.n_entries, n);
                        assert_int_equal(hashmap_check(&m), 0);
                }
        hashmap_done(&m);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_timerq_random_against_naive),
            cmocka_unit_test(test_timerq_latest_saturates),
            cmocka_unit_test(test_reserve_too_large),
            cmocka_unit_test(test_hashmap_random_against_naive),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
