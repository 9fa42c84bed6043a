/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The base hash table: backward-shift deletion where probe runs wrap around the end, the tags
 * that spare a probe reading entries, removals that read no entry, the untagged fallback,
 * shrinking, growing a few slots per insert (finds, inserts, removes and iteration during a move,
 * allocation failure in the middle of one). */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "base/hashmap.h"

void *__real_calloc(size_t n, size_t size);
void *__wrap_calloc(size_t n, size_t size);

/* The link-time wrapper has no other way to reach the test. */
static bool calloc_fails;

void *__wrap_calloc(size_t n, size_t size)
{
        return calloc_fails ? NULL : __real_calloc(n, size);
}

struct item {
        uint64_t key;
};

static uint64_t item_hash(const void *entry)
{
        return hash_mix64(((const struct item *)entry)->key);
}

static bool item_matches(const void *entry, const void *key)
{
        return ((const struct item *)entry)->key == *(const uint64_t *)key;
}

static struct item *find(const struct hashmap *m, uint64_t key)
{
        return hashmap_find(m, hash_mix64(key), item_matches, &key);
}

static void put(struct hashmap *m, struct item *it)
{
        hashmap_insert(m, item_hash(it), it);
}

static void take(struct hashmap *m, struct item *it)
{
        hashmap_remove(m, item_hash(it), it);
}

static void test_hashmap_wraps_around(void **state)
{
        struct hashmap m;
        struct item at_end[2] = {}, at_start = {};
        size_t found_end = 0;
        bool found_start = false;

        (void)state;
        hashmap_init(&m, item_hash);
        assert_int_equal(hashmap_reserve(&m, 3), 0);
        size_t mask = m.n_slots - 1;
        for (uint64_t key = 1; found_end < 2 || !found_start; key++) {
                size_t home = (size_t)hash_mix64(key) & mask;
                if (home == mask && found_end < 2)
                        at_end[found_end++].key = key;
                else if (home == 0 && !found_start) {
                        at_start.key = key;
                        found_start = true;
                }
        }

        /* last slot: at_end[0]; slot 0: at_end[1], wrapped; slot 1: at_start, displaced */
        put(&m, &at_end[0]);
        put(&m, &at_end[1]);
        put(&m, &at_start);
        assert_ptr_equal(hashmap_slot_entry(&m, 0), &at_end[1]);
        assert_ptr_equal(hashmap_slot_entry(&m, 1), &at_start);
        take(&m, &at_end[0]);
        assert_int_equal(hashmap_check(&m), 0);
        assert_ptr_equal(hashmap_slot_entry(&m, mask), &at_end[1]);
        assert_ptr_equal(hashmap_slot_entry(&m, 0), &at_start);
        assert_ptr_equal(find(&m, at_end[1].key), &at_end[1]);
        assert_ptr_equal(find(&m, at_start.key), &at_start);
        assert_null(find(&m, at_end[0].key));

        /* a member at its home stays put when the hole is across the end */
        take(&m, &at_end[1]);
        put(&m, &at_end[0]);
        assert_ptr_equal(hashmap_slot_entry(&m, mask), &at_end[0]);
        assert_ptr_equal(hashmap_slot_entry(&m, 0), &at_start);
        take(&m, &at_end[0]);
        assert_int_equal(hashmap_check(&m), 0);
        assert_ptr_equal(hashmap_slot_entry(&m, 0), &at_start);
        assert_ptr_equal(find(&m, at_start.key), &at_start);
        hashmap_done(&m);
}

/* An entry whose hash is chosen by the test; a lookup counts the entries it reads. */
struct hashed {
        uint64_t key, hash;
};

struct lookup {
        uint64_t key;
        size_t *reads;
};

static uint64_t hashed_hash(const void *entry)
{
        return ((const struct hashed *)entry)->hash;
}

static bool hashed_matches(const void *entry, const void *key)
{
        const struct lookup *l = key;

        (*l->reads)++;
        return ((const struct hashed *)entry)->key == l->key;
}

static struct hashed *lookup(const struct hashmap *m, const struct hashed *like, size_t *reads)
{
        *reads = 0;
        return hashmap_find(m, like->hash, hashed_matches, &(struct lookup){like->key, reads});
}

#define TAG(t) ((uint64_t)(t) << 48)

static void test_hashmap_reads_only_tag_matches(void **state)
{
        struct hashmap m;
        /* One probe run from home 5: the first four with different tags, the last four sharing
         * one (a tag collision: they differ only in their keys). */
        struct hashed e[8];
        size_t reads;

        (void)state;
        for (size_t i = 0; i < 8; i++)
                e[i] = (struct hashed){.key = 100 + i, .hash = (i < 4 ? TAG(i + 1) : TAG(9)) | 5};
        hashmap_init(&m, hashed_hash);
        assert_int_equal(hashmap_reserve(&m, 8), 0);
        for (size_t i = 0; i < 8; i++)
                hashmap_insert(&m, e[i].hash, &e[i]);
        assert_int_equal(hashmap_check(&m), 0);

        if (m.tag_mask == 0)
                skip(); /* 32-bit: no room for tags */
        /* A key with a tag of its own reads its entry alone, wherever it sits in the run. */
        for (size_t i = 0; i < 4; i++) {
                assert_ptr_equal(lookup(&m, &e[i], &reads), &e[i]);
                assert_int_equal(reads, 1);
        }
        /* An absent key whose tag nobody has reads nothing, across the whole run. */
        assert_null(lookup(&m, &(struct hashed){.key = 1, .hash = TAG(77) | 5}, &reads));
        assert_int_equal(reads, 0);
        /* Colliding tags: each of them is read, and the key tells them apart. */
        for (size_t i = 4; i < 8; i++) {
                assert_ptr_equal(lookup(&m, &e[i], &reads), &e[i]);
                assert_int_equal(reads, i - 3);
        }
        assert_null(lookup(&m, &(struct hashed){.key = 1, .hash = TAG(9) | 5}, &reads));
        assert_int_equal(reads, 4);

        /* Removing one of the colliding ones shifts the rest back, tags and all. */
        hashmap_remove(&m, e[5].hash, &e[5]);
        assert_int_equal(hashmap_check(&m), 0);
        assert_null(lookup(&m, &e[5], &reads));
        assert_ptr_equal(lookup(&m, &e[7], &reads), &e[7]);
        assert_int_equal(reads, 3);
        hashmap_done(&m);
}

/* An entry whose hash is chosen by the test and that counts how often the table asks for it. */
struct counted {
        uint64_t hash;
        size_t *hashes;
};

static uint64_t counted_hash(const void *entry)
{
        const struct counted *c = entry;

        (*c->hashes)++;
        return c->hash;
}

static bool counted_matches(const void *entry, const void *key)
{
        return entry == key;
}

static void test_hashmap_remove_reads_homes_from_distances(void **state)
{
        enum { N = 600 };
        struct counted *e = calloc(N, sizeof(*e));
        struct hashmap m;
        size_t hashes = 0;

        (void)state;
        assert_non_null(e);
        hashmap_init(&m, counted_hash);
        assert_int_equal(hashmap_reserve(&m, 4 * N), 0);
        /* One run: N/2 entries sharing home 3, then N/2 with homes spread after it, the far ones
         * past the 255 slots a distance holds. */
        for (size_t i = 0; i < N; i++) {
                e[i] = (struct counted){.hash = i < N / 2 ? 3 : 3 + i - N / 4, .hashes = &hashes};
                hashmap_insert(&m, e[i].hash, &e[i]);
        }
        if (m.tag_mask == 0)
                skip(); /* 32-bit: no room for distances */
        assert_int_equal(hashmap_check(&m), 0);

        /* Near entries shift back into a hole knowing their homes: none is read. */
        hashes = 0;
        hashmap_remove(&m, e[N - 1].hash, &e[N - 1]);
        hashmap_remove(&m, e[10].hash, &e[10]);
        assert_int_equal(hashmap_check(&m), 0);
        hashes = 0;
        hashmap_remove(&m, e[1].hash, &e[1]);
        assert_true(hashes <= N - 255); /* only the far ones */
        hashes = 0;
        hashmap_remove(&m, e[N / 2 + 5].hash, &e[N / 2 + 5]);
        assert_int_equal(hashes, 0);
        /* Far ones come nearer as the run empties, and every lookup stays right. */
        for (size_t i = 0; i < N / 2; i += 2)
                if (i != 10)
                        hashmap_remove(&m, e[i].hash, &e[i]);
        assert_int_equal(hashmap_check(&m), 0);
        for (size_t i = 0; i < N; i++) {
                bool gone = i == 1 || i == N - 1 || i == N / 2 + 5 || (i < N / 2 && i % 2 == 0);

                assert_ptr_equal(hashmap_find(&m, e[i].hash, counted_matches, &e[i]),
                                 gone ? NULL : &e[i]);
        }
        hashmap_done(&m);
        free(e);
}

/* Entries at made-up addresses: hashed and matched by address, never read. */
static uint64_t address_hash(const void *entry)
{
        return hash_mix64((uintptr_t)entry);
}

static bool address_matches(const void *entry, const void *key)
{
        return entry == key;
}

static void *address_find(const struct hashmap *m, const void *p)
{
        return hashmap_find(m, address_hash(p), address_matches, p);
}

static void test_hashmap_untagged_when_addresses_are_high(void **state)
{
        uintptr_t low[100], high = (uintptr_t)1 << (sizeof(uintptr_t) * 8 - 1);
        struct hashmap m;

        (void)state;
        hashmap_init(&m, address_hash);
        assert_int_equal(hashmap_reserve(&m, 101), 0);
        for (size_t i = 0; i < 100; i++) {
                low[i] = 0x10000 + i * 16;
                hashmap_insert(&m, address_hash((void *)low[i]), (void *)low[i]);
        }
        hashmap_insert(&m, address_hash((void *)high), (void *)high);
        assert_int_equal(m.tag_mask, 0);
        assert_int_equal(hashmap_check(&m), 0);
        assert_ptr_equal(address_find(&m, (void *)high), (void *)high);
        for (size_t i = 0; i < 100; i++)
                assert_ptr_equal(address_find(&m, (void *)low[i]), (void *)low[i]);
        hashmap_remove(&m, address_hash((void *)high), (void *)high);
        hashmap_remove(&m, address_hash((void *)low[7]), (void *)low[7]);
        assert_int_equal(hashmap_check(&m), 0);
        assert_null(address_find(&m, (void *)high));
        assert_null(address_find(&m, (void *)low[7]));
        assert_ptr_equal(address_find(&m, (void *)low[8]), (void *)low[8]);
        hashmap_done(&m);
}

static void test_hashmap_shrinks_after_removals(void **state)
{
        enum { N = 10000 };
        struct item *items = calloc(N, sizeof(*items));
        struct hashmap m;
        size_t full;

        (void)state;
        assert_non_null(items);
        hashmap_init(&m, item_hash);
        assert_int_equal(hashmap_reserve(&m, N), 0);
        for (size_t i = 0; i < N; i++) {
                items[i].key = i;
                put(&m, &items[i]);
        }
        full = m.n_slots;
        /* Still more than 3/16 full: it keeps its size. */
        for (size_t i = 0; i < N / 2; i++)
                take(&m, &items[i]);
        hashmap_shrink(&m);
        assert_int_equal(m.n_slots, full);
        /* 100 left: twice the fewest slots that hold them, every one still found. */
        for (size_t i = N / 2; i < N - 100; i++)
                take(&m, &items[i]);
        hashmap_shrink(&m);
        assert_int_equal(m.n_slots, 512);
        assert_int_equal(hashmap_check(&m), 0);
        for (size_t i = 0; i < N; i++)
                assert_ptr_equal(find(&m, i), i < N - 100 ? NULL : &items[i]);
        /* Empty: no slots at all, and it grows again from nothing. */
        for (size_t i = N - 100; i < N; i++)
                take(&m, &items[i]);
        hashmap_shrink(&m);
        assert_int_equal(m.n_slots, 0);
        assert_null(m.slots);
        assert_null(find(&m, 1));
        assert_int_equal(hashmap_reserve(&m, 1), 0);
        put(&m, &items[1]);
        assert_ptr_equal(find(&m, 1), &items[1]);
        assert_int_equal(hashmap_check(&m), 0);
        hashmap_done(&m);
        free(items);
}

/* Insert items[0..n) one by one, reserving for each as the registry does. */
static void put_all(struct hashmap *m, struct item *items, size_t from, size_t to)
{
        for (size_t i = from; i < to; i++) {
                items[i].key = i;
                assert_int_equal(hashmap_reserve(m, m->n_entries + 1), 0);
                put(m, &items[i]);
        }
}

/* Entries still in the old array (found by iteration past the current array's slots). */
static size_t n_in_old(const struct hashmap *m)
{
        size_t i = m->n_slots, n = 0;

        while (hashmap_next(m, &i))
                n++;
        return n;
}

/* Grown to twice the slots, the old array's entries move 8 slots per insert: found, iterated and
 * removable wherever they are meanwhile, and the old array is gone after an eighth of its slots'
 * worth of inserts. */
static void test_hashmap_grows_in_steps(void **state)
{
        enum { N = 4000 };
        struct item *items = calloc(N, sizeof(*items));
        struct hashmap m;
        size_t n_old, grown_at = 0, inserts = 0, removed_upto = 0;

        (void)state;
        assert_non_null(items);
        hashmap_init(&m, item_hash);
        /* 1536 entries fill 2048 slots to 3/4: the next insert grows the table. */
        put_all(&m, items, 0, 1536);
        assert_int_equal(m.n_slots, 2048);
        assert_null(m.old_slots);
        put_all(&m, items, 1536, 1537);
        assert_int_equal(m.n_slots, 4096);
        assert_non_null(m.old_slots);
        n_old = m.n_old_slots;
        assert_int_equal(n_old, 2048);
        /* One insert moved 8 slots: most entries are still in the old array. */
        assert_true(n_in_old(&m) > 1400);
        grown_at = 1537;

        for (size_t i = grown_at; m.old_slots; i++) {
                size_t seen = 0, it = 0;

                put_all(&m, items, i, i + 1);
                inserts++;
                assert_int_equal(hashmap_check(&m), 0);
                /* Halfway: remove every third entry, from both arrays. */
                if (inserts == n_old / 8 / 2) {
                        size_t in_old = n_in_old(&m);

                        assert_true(in_old > 0);
                        for (size_t j = 0; j <= i; j += 3)
                                take(&m, &items[j]);
                        removed_upto = i;
                        assert_true(n_in_old(&m) < in_old);
                        assert_int_equal(hashmap_check(&m), 0);
                }
                for (size_t j = 0; j < N; j++)
                        assert_ptr_equal(find(&m, j),
                                         j > i || (removed_upto && j % 3 == 0 && j <= removed_upto)
                                             ? NULL
                                             : &items[j]);
                while (hashmap_next(&m, &it))
                        seen++;
                assert_int_equal(seen, m.n_entries);
        }
        /* The first insert after the growth moved 8 slots too. */
        assert_int_equal(inserts + 1, n_old / 8);
        assert_int_equal(n_in_old(&m), 0);
        assert_int_equal(m.n_slots, 4096);
        hashmap_done(&m);
        free(items);
}

/* An entry whose hash comes from a handful of values: long probe runs, wrapping around the end. */
struct crowded {
        uint64_t hash;
        size_t id;
};

static uint64_t crowded_hash(const void *entry)
{
        return ((const struct crowded *)entry)->hash;
}

static bool crowded_matches(const void *entry, const void *key)
{
        return ((const struct crowded *)entry)->id == *(const size_t *)key;
}

static uint64_t rng_next(uint64_t *s)
{
        return hash_mix64(++*s);
}

/* Fill and drain again and again, so that moves start with runs across the end and are
 * interrupted by removals, shrinks and reserves for many: against a plain array of flags. */
static void test_hashmap_growth_random_against_naive(void **state)
{
        enum { N = 3000 };
        struct crowded *e = calloc(N, sizeof(*e));
        bool *present = calloc(N, sizeof(*present));
        uint64_t seed = 11;
        size_t n = 0, while_moving = 0, target = N;
        bool filling = true;
        struct hashmap m;

        (void)state;
        assert_non_null(e);
        assert_non_null(present);
        for (size_t i = 0; i < N; i++)
                e[i] = (struct crowded){
                    .hash = i % 7 == 0 ? UINT64_MAX : hash_mix64(i % 401) | (i % 3 == 0), .id = i};
        hashmap_init(&m, crowded_hash);
        for (size_t op = 0; op < 60000; op++) {
                size_t i = rng_next(&seed) % N, k = rng_next(&seed) % N;
                bool insert = rng_next(&seed) % 10 < (filling ? 8u : 2u);

                if (insert && !present[i]) {
                        assert_int_equal(hashmap_reserve(&m, m.n_entries + 1), 0);
                        hashmap_insert(&m, e[i].hash, &e[i]);
                        present[i] = true;
                        n++;
                } else if (!insert && present[i]) {
                        hashmap_remove(&m, e[i].hash, &e[i]);
                        present[i] = false;
                        n--;
                }
                if (filling && n >= target) {
                        filling = false;
                } else if (!filling && n <= target / 8) {
                        filling = true;
                        target = N / 4 + rng_next(&seed) % (N - N / 4);
                        hashmap_shrink(&m);
                }
                /* Now and then a reserve for many at once, in the middle of a move or not. */
                if (op % 5003 == 0)
                        assert_int_equal(hashmap_reserve(&m, m.n_entries * 3), 0);
                while_moving += m.old_slots != NULL;
                assert_int_equal(m.n_entries, n);
                assert_ptr_equal(hashmap_find(&m, e[i].hash, crowded_matches, &i),
                                 present[i] ? &e[i] : NULL);
                assert_ptr_equal(hashmap_find(&m, e[k].hash, crowded_matches, &k),
                                 present[k] ? &e[k] : NULL);
                if (op % 61 == 0 || (m.old_slots && op % 5 == 0)) {
                        size_t it = 0, seen = 0;

                        assert_int_equal(hashmap_check(&m), 0);
                        while (hashmap_next(&m, &it))
                                seen++;
                        assert_int_equal(seen, n);
                }
        }
        assert_true(while_moving > 1000);
        for (size_t i = 0; i < N; i++)
                assert_ptr_equal(hashmap_find(&m, e[i].hash, crowded_matches, &i),
                                 present[i] ? &e[i] : NULL);
        hashmap_done(&m);
        free(present);
        free(e);
}

/* A reserve that must grow again while a move is under way, and finds no memory: the move is
 * finished, nothing is lost, and the table takes inserts up to the room it has. */
static void test_hashmap_allocation_failure_mid_growth(void **state)
{
        enum { N = 3072 };
        struct item *items = calloc(N, sizeof(*items));
        struct hashmap m;

        (void)state;
        assert_non_null(items);
        hashmap_init(&m, item_hash);
        put_all(&m, items, 0, 1537);
        assert_non_null(m.old_slots);
        calloc_fails = true;
        assert_int_equal(hashmap_reserve(&m, 10000), -ENOMEM);
        calloc_fails = false;
        assert_null(m.old_slots);
        assert_int_equal(m.n_slots, 4096);
        assert_int_equal(m.n_entries, 1537);
        assert_int_equal(hashmap_check(&m), 0);
        for (size_t i = 0; i < N; i++)
                assert_ptr_equal(find(&m, i), i < 1537 ? &items[i] : NULL);
        /* Room for 3072 without allocating. */
        calloc_fails = true;
        put_all(&m, items, 1537, N);
        calloc_fails = false;
        assert_int_equal(hashmap_check(&m), 0);
        for (size_t i = 0; i < N; i++)
                assert_ptr_equal(find(&m, i), &items[i]);
        /* A failed growth changes nothing. */
        calloc_fails = true;
        assert_int_equal(hashmap_reserve(&m, N + 1), -ENOMEM);
        calloc_fails = false;
        assert_null(m.old_slots);
        assert_int_equal(m.n_slots, 4096);
        assert_int_equal(hashmap_check(&m), 0);
        hashmap_done(&m);
        free(items);
}

/* Growing for many at once during a move finishes the move first: never a third array. */
static void test_hashmap_reserve_for_many_during_a_move(void **state)
{
        enum { N = 1537 };
        struct item *items = calloc(N, sizeof(*items));
        struct hashmap m;

        (void)state;
        assert_non_null(items);
        hashmap_init(&m, item_hash);
        put_all(&m, items, 0, N);
        assert_int_equal(m.n_old_slots, 2048);
        assert_int_equal(hashmap_reserve(&m, 12000), 0);
        assert_int_equal(m.n_slots, 16384);
        assert_int_equal(m.n_old_slots, 4096); /* the array the move filled, now moving on */
        assert_int_equal(m.n_moved, 0);
        assert_int_equal(hashmap_check(&m), 0);
        for (size_t i = 0; i < N; i++)
                assert_ptr_equal(find(&m, i), &items[i]);
        hashmap_done(&m);
        free(items);
}

/* Removing entries while iterating, as the parked queue does (after a removal it looks at the
 * same slot again, where the backward shift put the next entry of the run): during a move it
 * reaches every entry of both arrays. */
static void test_hashmap_iterate_and_remove_during_a_move(void **state)
{
        enum { N = 1600 };
        struct item *items = calloc(N, sizeof(*items));
        struct hashmap m;
        struct item *it;

        (void)state;
        assert_non_null(items);
        hashmap_init(&m, item_hash);
        put_all(&m, items, 0, N);
        assert_non_null(m.old_slots);
        assert_true(n_in_old(&m) > 0);
        for (size_t i = 0; (it = hashmap_next(&m, &i));) {
                size_t before = m.n_entries;

                if (it->key % 2)
                        take(&m, it);
                if (m.n_entries < before)
                        i--;
        }
        assert_int_equal(m.n_entries, N / 2);
        assert_int_equal(hashmap_check(&m), 0);
        for (size_t i = 0; i < N; i++)
                assert_ptr_equal(find(&m, i), i % 2 ? NULL : &items[i]);
        hashmap_done(&m);
        free(items);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_hashmap_wraps_around),
            cmocka_unit_test(test_hashmap_reads_only_tag_matches),
            cmocka_unit_test(test_hashmap_remove_reads_homes_from_distances),
            cmocka_unit_test(test_hashmap_untagged_when_addresses_are_high),
            cmocka_unit_test(test_hashmap_shrinks_after_removals),
            cmocka_unit_test(test_hashmap_grows_in_steps),
            cmocka_unit_test(test_hashmap_growth_random_against_naive),
            cmocka_unit_test(test_hashmap_allocation_failure_mid_growth),
            cmocka_unit_test(test_hashmap_reserve_for_many_during_a_move),
            cmocka_unit_test(test_hashmap_iterate_and_remove_during_a_move),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
