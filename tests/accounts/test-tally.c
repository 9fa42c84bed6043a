/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The per-uid tally (service/core/tally.h): counts and their marked part, no entry at 0, and a
 * reservation given up leaves nothing behind. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "service/core/tally.h"

static void test_counts_and_marked(void **state)
{
        (void)state;
        struct tally t;

        tally_init(&t);
        assert_null(tally_find(&t, 7));
        assert_int_equal(tally_get(&t, 7), 0);

        assert_int_equal(tally_reserve(&t, 7), 0);
        tally_add(&t, 7, 3, 2);
        assert_int_equal(tally_reserve(&t, 9), 0);
        tally_add(&t, 9, 1, 0);
        const struct tally_count *c = tally_find(&t, 7);
        assert_non_null(c);
        assert_int_equal(c->uid, 7);
        assert_int_equal(c->n, 3);
        assert_int_equal(c->marked, 2);
        assert_int_equal(tally_get(&t, 9), 1);
        assert_int_equal(tally_find(&t, 9)->marked, 0);
        assert_int_equal(tally_total(&t), 4);

        /* every uid counted is visited once */
        size_t i = 0, seen = 0;
        uint64_t sum = 0;
        while ((c = tally_next(&t, &i))) {
                seen++;
                sum += c->uid;
        }
        assert_int_equal(seen, 2);
        assert_int_equal(sum, 16);

        tally_sub(&t, 7, 2, 2);
        assert_int_equal(tally_get(&t, 7), 1);
        assert_int_equal(tally_find(&t, 7)->marked, 0);
        /* at 0 the entry goes */
        tally_sub(&t, 7, 1, 0);
        assert_null(tally_find(&t, 7));
        tally_sub(&t, 9, 0, 0);
        assert_int_equal(tally_get(&t, 9), 1);
        tally_sub(&t, 9, 1, 0);
        assert_int_equal(t.counts.n_entries, 0);
        assert_int_equal(tally_total(&t), 0);
        tally_done(&t);
}

static void test_unreserve(void **state)
{
        (void)state;
        struct tally t;

        tally_init(&t);
        assert_int_equal(tally_reserve(&t, 5), 0);
        assert_int_equal(tally_reserve(&t, 5), 0);
        tally_unreserve(&t, 5);
        assert_null(tally_find(&t, 5));

        /* an entry with a count is not given up */
        assert_int_equal(tally_reserve(&t, 5), 0);
        tally_add(&t, 5, 1, 1);
        tally_unreserve(&t, 5);
        assert_int_equal(tally_get(&t, 5), 1);
        tally_done(&t);
        assert_null(tally_find(&t, 5));
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_counts_and_marked),
            cmocka_unit_test(test_unreserve),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
