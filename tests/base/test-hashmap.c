/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The base hash table's backward-shift deletion where probe runs wrap around the end. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "base/hashmap.h"

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
        assert_ptr_equal(m.slots[0], &at_end[1]);
        assert_ptr_equal(m.slots[1], &at_start);
        take(&m, &at_end[0]);
        assert_int_equal(hashmap_check(&m), 0);
        assert_ptr_equal(m.slots[mask], &at_end[1]);
        assert_ptr_equal(m.slots[0], &at_start);
        assert_ptr_equal(find(&m, at_end[1].key), &at_end[1]);
        assert_ptr_equal(find(&m, at_start.key), &at_start);
        assert_null(find(&m, at_end[0].key));

        /* a member at its home stays put when the hole is across the end */
        take(&m, &at_end[1]);
        put(&m, &at_end[0]);
        assert_ptr_equal(m.slots[mask], &at_end[0]);
        assert_ptr_equal(m.slots[0], &at_start);
        take(&m, &at_end[0]);
        assert_int_equal(hashmap_check(&m), 0);
        assert_ptr_equal(m.slots[0], &at_start);
        assert_ptr_equal(find(&m, at_start.key), &at_start);
        hashmap_done(&m);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_hashmap_wraps_around),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
