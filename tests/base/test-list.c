/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The base intrusive list: order, removal anywhere, iteration that removes, detached nodes. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "base/list.h"

struct item {
        int value;
        struct list_node node;
};

static void assert_values(struct list_node *head, const int *values, size_t n)
{
        struct list_node *pos;
        size_t i = 0;

        list_for_each (pos, head) {
                assert_true(i < n);
                assert_int_equal(list_entry(pos, struct item, node)->value, values[i]);
                /* every back link matches */
                assert_ptr_equal(pos->next->prev, pos);
                i++;
        }
        assert_int_equal(i, n);
        assert_int_equal(list_empty(head), n == 0);
}

static void test_list_order_and_removal(void **state)
{
        struct item items[5];
        struct list_node head;

        (void)state;
        list_init(&head);
        assert_true(list_empty(&head));
        assert_null(list_first(&head));
        for (int i = 0; i < 5; i++) {
                items[i].value = i;
                list_init(&items[i].node);
                assert_false(list_linked(&items[i].node));
                list_append(&head, &items[i].node);
                assert_true(list_linked(&items[i].node));
        }
        assert_values(&head, (const int[]){0, 1, 2, 3, 4}, 5);
        assert_ptr_equal(list_first(&head), &items[0].node);
        assert_ptr_equal(list_next(&head, &items[3].node), &items[4].node);
        assert_null(list_next(&head, &items[4].node));

        list_remove(&items[2].node); /* middle */
        list_remove(&items[0].node); /* front */
        list_remove(&items[4].node); /* back */
        assert_false(list_linked(&items[2].node));
        assert_values(&head, (const int[]){1, 3}, 2);

        /* a removed node goes back to the end */
        list_append(&head, &items[0].node);
        assert_values(&head, (const int[]){1, 3, 0}, 3);
}

static void test_list_for_each_safe_removes(void **state)
{
        struct item items[6];
        struct list_node head, *pos, *tmp;

        (void)state;
        list_init(&head);
        for (int i = 0; i < 6; i++) {
                items[i].value = i;
                list_append(&head, &items[i].node);
        }
        list_for_each_safe (pos, tmp, &head) {
                if (list_entry(pos, struct item, node)->value % 2 == 0)
                        list_remove(pos);
        }
        assert_values(&head, (const int[]){1, 3, 5}, 3);
        list_for_each_safe (pos, tmp, &head)
                list_remove(pos);
        assert_values(&head, NULL, 0);
        assert_null(list_first(&head));
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_list_order_and_removal),
            cmocka_unit_test(test_list_for_each_safe_removes),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
