/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * The inventory on its own, against a naive sorted walk: random inserts and removes, every seek.
 * Built twice: as the service builds it, and with a cursor that keeps two ancestors and a spine
 * kept for appends of one node, so that walks that must find their way back from the root, and
 * appends down from it, are exercised too.
 */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "service/core/inventory.h"

#define N_ITEMS 500
#define N_OPS   4000

struct item {
        struct inventory_node node;
        bool in;
        uint32_t owner;
        char name[8];
};

static struct inventory_key item_key(const struct inventory_node *node)
{
        const struct item *it = inventory_entry(node, struct item, node);

        return (struct inventory_key){.owner = it->owner, .name = it->name};
}

static uint64_t rng_next(uint64_t *s)
{
        *s ^= *s << 13;
        *s ^= *s >> 7;
        *s ^= *s << 17;
        return *s;
}

/* The naive order, with libc's strcmp(): the inventory compares names its own way. */
static int item_compare(const void *a, const void *b)
{
        const struct item *x = *(const struct item *const *)a, *y = *(const struct item *const *)b;

        if (x->owner != y->owner)
                return x->owner < y->owner ? -1 : 1;
        return strcmp(x->name, y->name);
}

/* Take it out if it is in, else put it in. */
static void item_toggle(struct inventory *inv, struct item *it)
{
        if (it->in)
                inventory_remove(inv, &it->node);
        else
                inventory_insert(inv, &it->node);
        it->in = !it->in;
}

/* The items in the inventory, sorted the naive way. */
static size_t naive_sorted(struct item *items, const struct item **ret)
{
        size_t n = 0;

        for (size_t i = 0; i < N_ITEMS; i++)
                if (items[i].in)
                        ret[n++] = &items[i];
        qsort(ret, n, sizeof(*ret), item_compare);
        return n;
}

/* The walk after `after` gives exactly the naive items after it, in order. */
static void assert_walk(const struct inventory *inv, const struct inventory_key *after,
                        const struct item *const *sorted, size_t n)
{
        struct inventory_cursor c;
        size_t i = 0;

        if (after)
                while (i < n) {
                        struct inventory_key k = item_key(&sorted[i]->node);

                        if (inventory_key_compare(&k, after) > 0)
                                break;
                        i++;
                }
        inventory_seek(inv, after, &c);
        for (; i < n; i++)
                assert_ptr_equal(inventory_next(&c), &sorted[i]->node);
        assert_null(inventory_next(&c));
        assert_null(inventory_next(&c));
}

/* N_ITEMS items, zeroed, room for them sorted, and an empty inventory of them. */
static struct item *items_new(const struct item ***ret_sorted, struct inventory *inv)
{
        struct item *items = calloc(N_ITEMS, sizeof(struct item));

        *ret_sorted = calloc(N_ITEMS, sizeof(**ret_sorted));
        assert_non_null(items);
        assert_non_null(*ret_sorted);
        inventory_init(inv, INVENTORY_OFFSET(struct item, node, owner),
                       INVENTORY_OFFSET(struct item, node, name));
        return items;
}

static void test_empty(void **state)
{
        struct inventory inv;
        struct inventory_cursor c;

        (void)state;
        inventory_init(&inv, INVENTORY_OFFSET(struct item, node, owner),
                       INVENTORY_OFFSET(struct item, node, name));
        inventory_seek(&inv, NULL, &c);
        assert_null(inventory_next(&c));
        inventory_seek(&inv, &(struct inventory_key){.owner = 1, .name = "a"}, &c);
        assert_null(inventory_next(&c));
        assert_int_equal(inventory_check(&inv), 0);
}

static void test_key_order(void **state)
{
        const struct inventory_key a = {1, "b"}, b = {2, "a"}, c = {2, "ab"}, d = {2, "b"};

        (void)state;
        assert_true(inventory_key_compare(&a, &b) < 0);
        assert_true(inventory_key_compare(&b, &c) < 0);
        assert_true(inventory_key_compare(&c, &d) < 0);
        assert_true(inventory_key_compare(&d, &a) > 0);
        assert_int_equal(inventory_key_compare(&c, &(struct inventory_key){2, "ab"}), 0);
        /* Owners compare as unsigned: the highest uid is last. */
        assert_true(inventory_key_compare(&(struct inventory_key){UINT32_MAX - 1, "a"}, &a) > 0);
}

static int sign(int x)
{
        return (x > 0) - (x < 0);
}

/* Names order as strcmp() orders them, bytes above 127 too (unsigned), a prefix first. */
static void test_names_compare_as_strcmp(void **state)
{
        uint64_t seed = 0x9e3779b97f4a7c15;

        (void)state;
        for (int i = 0; i < 20000; i++) {
                char x[8], y[8];
                size_t nx = 1 + rng_next(&seed) % 7, ny = 1 + rng_next(&seed) % 7;

                /* Few distinct bytes, so that names share prefixes and are often equal. */
                for (size_t k = 0; k < nx; k++)
                        x[k] = "a\x7f\x80\xff"[rng_next(&seed) % 4];
                for (size_t k = 0; k < ny; k++)
                        y[k] = k < nx && rng_next(&seed) % 4 ? x[k]
                                                             : "a\x7f\x80\xff"[rng_next(&seed) % 4];
                x[nx] = y[ny] = '\0';
                const struct inventory_key kx = {7, x}, ky = {7, y};

                assert_int_equal(sign(inventory_key_compare(&kx, &ky)), sign(strcmp(x, y)));
        }
}

/* Keys already in order (the worst case of a plain binary search tree) still walk whole. */
static void test_sorted_inserts(void **state)
{
        const struct item **sorted;
        struct inventory inv;
        struct item *items = items_new(&sorted, &inv);

        (void)state;
        for (size_t i = 0; i < N_ITEMS; i++) {
                items[i].owner = 7;
                snprintf(items[i].name, sizeof(items[i].name), "%05zu", i);
                items[i].in = true;
                inventory_insert(&inv, &items[i].node);
        }
        assert_int_equal(inventory_check(&inv), 0);
        assert_int_equal(inv.n_nodes, N_ITEMS);
        assert_walk(&inv, NULL, (const struct item *const *)sorted, naive_sorted(items, sorted));
        /* The last one goes first: the one before it becomes the last. */
        for (size_t i = N_ITEMS; i-- > N_ITEMS / 2;) {
                assert_ptr_equal(inventory_last(&inv), &items[i].node);
                inventory_remove(&inv, &items[i].node);
                assert_int_equal(inventory_check(&inv), 0);
        }
        for (size_t i = 0; i < N_ITEMS / 2; i++) {
                assert_ptr_equal(inventory_last(&inv), &items[N_ITEMS / 2 - 1].node);
                inventory_remove(&inv, &items[i].node);
        }
        assert_null(inv.root);
        assert_null(inventory_last(&inv));
        assert_int_equal(inventory_check(&inv), 0);
        free(sorted);
        free(items);
}

static void test_random_against_naive(void **state)
{
        const struct item **sorted;
        struct inventory inv;
        struct item *items = items_new(&sorted, &inv);
        uint64_t seed = 0x5eed;

        (void)state;
        for (size_t i = 0; i < N_ITEMS; i++) {
                /* Few owners, names that are prefixes of each other. */
                items[i].owner = (uint32_t)(i % 5) * 1000;
                snprintf(items[i].name, sizeof(items[i].name), "%zu", i / 5);
        }

        for (size_t op = 0; op < N_OPS; op++) {
                size_t n;

                item_toggle(&inv, &items[rng_next(&seed) % N_ITEMS]);
                assert_int_equal(inventory_check(&inv), 0);
                if (op % 40 != 0)
                        continue;

                n = naive_sorted(items, sorted);
                assert_int_equal(inv.n_nodes, n);
                assert_ptr_equal(inventory_last(&inv), n > 0 ? &sorted[n - 1]->node : NULL);
                assert_walk(&inv, NULL, (const struct item *const *)sorted, n);
                /* After each item (in or not), and after keys between and around them. */
                for (size_t i = 0; i < N_ITEMS; i += 7) {
                        struct inventory_key k = item_key(&items[i].node);

                        assert_walk(&inv, &k, (const struct item *const *)sorted, n);
                        k.name = "";
                        assert_walk(&inv, &k, (const struct item *const *)sorted, n);
                        k.name = "~";
                        assert_walk(&inv, &k, (const struct item *const *)sorted, n);
                }
                assert_walk(&inv, &(struct inventory_key){UINT32_MAX, "~"},
                            (const struct item *const *)sorted, n);
        }
        free(sorted);
        free(items);
}

/* Appends in order (a restore's), with removes and inserts in the middle between them: the tree
 * stays ordered and balanced, and the spine kept for appends is the tree's, at each step. */
static void test_appends_keep_the_tree_balanced(void **state)
{
        const struct item **sorted;
        struct inventory inv;
        struct item *items = items_new(&sorted, &inv);
        uint64_t seed = 0xa99e;

        (void)state;
        for (size_t i = 0; i < N_ITEMS; i++) {
                items[i].owner = (uint32_t)(i / 100);
                snprintf(items[i].name, sizeof(items[i].name), "%05zu", i);
        }
        for (size_t i = 0; i < N_ITEMS; i++) {
                inventory_insert(&inv, &items[i].node);
                items[i].in = true;
                assert_ptr_equal(inventory_last(&inv), &items[i].node);
                /* Now and then one out, or back in, behind the end: the spine is walked again. */
                if (i % 37 == 36)
                        item_toggle(&inv, &items[rng_next(&seed) % i]);
                assert_int_equal(inventory_check(&inv), 0);
        }
        assert_walk(&inv, NULL, (const struct item *const *)sorted, naive_sorted(items, sorted));
        free(sorted);
        free(items);
}

/* No taller than an AVL tree of its nodes can be: one h tall holds at least F(h + 2) - 1 nodes
 * (Fibonacci), so h < 1.4405 log2(n + 2); a plain binary search tree's can reach n. */
static void assert_balanced_height(const struct inventory *inv)
{
        size_t h = inventory_height(inv), f = 0, g = 1; /* F(0), F(1) */

        for (size_t i = 0; i < h + 2; i++) {
                size_t next = f + g;

                f = g;
                g = next;
        }
        /* f is F(h + 2) */
        assert_true(f - 1 <= inv->n_nodes);
}

/* How many bits n takes: ceil(log2(n + 1)). */
static size_t bit_length(size_t n)
{
        size_t b = 0;

        for (; n; n >>= 1)
                b++;
        return b;
}

/* Keys inserted in order (all appended) and in reverse order (each the first, down the left
 * side), the worst cases of a plain binary search tree: the tree stays as shallow as a balanced
 * one at every size; removing every other one keeps it so. */
static void test_sorted_inserts_stay_shallow(void **state)
{
        enum { N = 20000 };
        struct item *items = calloc(N, sizeof(struct item));
        struct inventory inv;

        (void)state;
        assert_non_null(items);
        for (size_t i = 0; i < N; i++) {
                items[i].owner = 7;
                snprintf(items[i].name, sizeof(items[i].name), "%05zu", i);
        }
        for (int reverse = 0; reverse < 2; reverse++) {
                inventory_init(&inv, INVENTORY_OFFSET(struct item, node, owner),
                               INVENTORY_OFFSET(struct item, node, name));
                for (size_t i = 0; i < N; i++) {
                        inventory_insert(&inv, &items[reverse ? N - 1 - i : i].node);
                        assert_balanced_height(&inv);
                        /* The whole check (O(n)) at each power of two. */
                        if ((i & (i + 1)) == 0)
                                assert_int_equal(inventory_check(&inv), 0);
                }
                assert_int_equal(inventory_check(&inv), 0);
                /* Sorted inserts fill it level by level: no taller than needed. */
                assert_true(inventory_height(&inv) <= bit_length(N) + 1);
                for (size_t i = 0; i < N; i += 2) {
                        inventory_remove(&inv, &items[i].node);
                        assert_balanced_height(&inv);
                }
                assert_int_equal(inventory_check(&inv), 0);
        }
        free(items);
}

/* The check sees a balance bit that does not match the heights below it. */
static void test_check_sees_a_wrong_balance(void **state)
{
        struct item items[100];
        struct inventory inv;

        (void)state;
        inventory_init(&inv, INVENTORY_OFFSET(struct item, node, owner),
                       INVENTORY_OFFSET(struct item, node, name));
        for (size_t i = 0; i < 100; i++) {
                items[i].owner = 1;
                snprintf(items[i].name, sizeof(items[i].name), "%03zu", i);
                inventory_insert(&inv, &items[i].node);
        }
        assert_int_equal(inventory_check(&inv), 0);
        for (size_t i = 0; i < 100; i++)
                for (size_t side = 0; side < 2; side++) {
                        items[i].node.link[side] ^= 1;
                        assert_int_equal(inventory_check(&inv), -EUCLEAN);
                        items[i].node.link[side] ^= 1;
                }
        assert_int_equal(inventory_check(&inv), 0);
}

/* Random inserts, removes, removals of an owner's whole range and walks, against the naive sorted
 * array, with the whole check after each step. Owners of very different sizes (half the items
 * one's, a quarter the next one's, ...), so that the splits and joins span unequal heights. */
static void test_random_with_owner_removals(void **state)
{
        const struct item **sorted;
        struct inventory inv;
        struct item *items = items_new(&sorted, &inv);
        uint64_t seed = 0x0e1d;

        (void)state;
        for (size_t i = 0; i < N_ITEMS; i++) {
                uint64_t r = rng_next(&seed);
                unsigned k = 0;

                while (k < 8 && (r >> k) & 1)
                        k++;
                items[i].owner = k * 1000;
                snprintf(items[i].name, sizeof(items[i].name), "%zu", i);
        }
        for (size_t op = 0; op < N_OPS; op++) {
                uint64_t r = rng_next(&seed) % 100;
                size_t n;

                if (r < 3) {
                        uint32_t owner = (uint32_t)(rng_next(&seed) % 9) * 1000;

                        n = 0;
                        for (size_t i = 0; i < N_ITEMS; i++)
                                if (items[i].in && items[i].owner == owner) {
                                        items[i].in = false;
                                        n++;
                                }
                        inventory_remove_owner(&inv, owner, n);
                } else
                        item_toggle(&inv, &items[rng_next(&seed) % N_ITEMS]);
                assert_int_equal(inventory_check(&inv), 0);
                assert_balanced_height(&inv);
                n = naive_sorted(items, sorted);
                assert_int_equal(inv.n_nodes, n);
                assert_ptr_equal(inventory_last(&inv), n > 0 ? &sorted[n - 1]->node : NULL);
                if (r % 4 == 0) {
                        struct inventory_key k = item_key(&items[rng_next(&seed) % N_ITEMS].node);

                        assert_walk(&inv, r % 8 == 0 ? &k : NULL,
                                    (const struct item *const *)sorted, n);
                }
        }
        free(sorted);
        free(items);
}

/* Keys before the node (negative offsets, as when the node follows them): read in place, they
 * order the walk and come back from inventory_key_of(). */
struct tail_item {
        uint32_t owner;
        char name[8];
        struct inventory_node node;
};

static void test_key_before_node(void **state)
{
        static const char *const names[] = {"m", "b", "x", "ba", "a"};
        static const uint32_t owners[] = {2, 2, 1, 2, 3};
        static const size_t order[] = {2, 1, 3, 0, 4}; /* (1,x) (2,b) (2,ba) (2,m) (3,a) */
        struct tail_item items[5];
        struct inventory_cursor c;
        struct inventory inv;

        (void)state;
        inventory_init(&inv, INVENTORY_OFFSET(struct tail_item, node, owner),
                       INVENTORY_OFFSET(struct tail_item, node, name));
        assert_true(inv.owner_offset < 0 && inv.name_offset < 0);
        for (size_t i = 0; i < 5; i++) {
                items[i].owner = owners[i];
                snprintf(items[i].name, sizeof(items[i].name), "%s", names[i]);
                inventory_insert(&inv, &items[i].node);
        }
        assert_int_equal(inventory_check(&inv), 0);
        inventory_seek(&inv, NULL, &c);
        for (size_t i = 0; i < 5; i++) {
                const struct inventory_node *node = inventory_next(&c);
                struct inventory_key k = inventory_key_of(&inv, node);

                assert_ptr_equal(node, &items[order[i]].node);
                assert_int_equal(k.owner, items[order[i]].owner);
                assert_ptr_equal(k.name, items[order[i]].name);
        }
        assert_null(inventory_next(&c));
        inventory_seek(&inv, &(struct inventory_key){2, "b"}, &c);
        assert_ptr_equal(inventory_next(&c), &items[3].node);
}

/* An owner's nodes out at once, whatever the others around them; then back in one by one. */
static void test_remove_owner(void **state)
{
        const struct item **sorted;
        struct inventory inv;
        struct item *items = items_new(&sorted, &inv);
        const uint32_t owners[] = {0, 3000, 1000, 4000, 2000, UINT32_MAX};
        uint64_t seed = 0xd1e;

        (void)state;
        for (size_t i = 0; i < N_ITEMS; i++) {
                /* The first and the last uid too; about half of the items in. */
                items[i].owner = i % 6 == 5 ? UINT32_MAX : (uint32_t)(i % 6) * 1000;
                snprintf(items[i].name, sizeof(items[i].name), "%zu", i / 6);
                if (rng_next(&seed) % 2) {
                        items[i].in = true;
                        inventory_insert(&inv, &items[i].node);
                }
        }
        for (size_t round = 0; round < 2; round++)
                for (size_t k = 0; k < sizeof(owners) / sizeof(owners[0]); k++) {
                        size_t n = 0;

                        for (size_t i = 0; i < N_ITEMS; i++)
                                if (items[i].in && items[i].owner == owners[k]) {
                                        items[i].in = false;
                                        n++;
                                }
                        inventory_remove_owner(&inv, owners[k], n);
                        assert_int_equal(inventory_check(&inv), 0);
                        n = naive_sorted(items, sorted);
                        assert_int_equal(inv.n_nodes, n);
                        assert_ptr_equal(inventory_last(&inv), n > 0 ? &sorted[n - 1]->node : NULL);
                        assert_walk(&inv, NULL, (const struct item *const *)sorted, n);
                        /* Half of them back (the first round), none (the second). */
                        for (size_t i = 0; round == 0 && i < N_ITEMS; i += 2)
                                if (items[i].owner == owners[k]) {
                                        items[i].in = true;
                                        inventory_insert(&inv, &items[i].node);
                                }
                        assert_int_equal(inventory_check(&inv), 0);
                }
        assert_null(inv.root);
        assert_null(inventory_last(&inv));
        free(sorted);
        free(items);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_empty),
            cmocka_unit_test(test_key_order),
            cmocka_unit_test(test_names_compare_as_strcmp),
            cmocka_unit_test(test_sorted_inserts),
            cmocka_unit_test(test_random_against_naive),
            cmocka_unit_test(test_key_before_node),
            cmocka_unit_test(test_remove_owner),
            cmocka_unit_test(test_appends_keep_the_tree_balanced),
            cmocka_unit_test(test_sorted_inserts_stay_shallow),
            cmocka_unit_test(test_check_sees_a_wrong_balance),
            cmocka_unit_test(test_random_with_owner_removals),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
