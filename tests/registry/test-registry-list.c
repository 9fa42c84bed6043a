/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The inventory a page at a time: order, cursors, owner boundaries, limits. */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fixture.h"

static void register_timer(struct fx *f, uint32_t owner, const char *name, uint64_t *ret_generation)
{
        assert_int_equal(fx_register_full(f, owner, FX_SESSION, name,
                                          fx_decl(TIMERD_POLICY_INTERVAL, 1000), false, 0, false,
                                          ret_generation),
                         0);
}

struct page {
        long n;
        bool more;
        struct td_snapshot *timers;
};

static struct page list_page(struct fx *f, const struct td_list_page *q)
{
        struct page p;

        p.n = registry_list_page(f->r, q, &p.timers, &p.more);
        if (p.n <= 0)
                assert_null(p.timers);
        return p;
}

/* The page holds exactly these "owner/name" entries, in order. */
static void assert_page(const struct page *p, bool more, const char *const *expected, size_t n)
{
        char got[TIMERD_NAME_MAX + 16];

        assert_int_equal(p->n, (long)n);
        assert_int_equal(p->more, more);
        for (size_t i = 0; i < n; i++) {
                snprintf(got, sizeof(got), "%u/%s", p->timers[i].owner, p->timers[i].name);
                assert_string_equal(got, expected[i]);
        }
}

static void page_done(struct page *p)
{
        free(p->timers);
        *p = (struct page){0};
}

static void register_mixed(struct fx *f)
{
        static const uint32_t owners[] = {5, 2, 5, 2, 9, 0, UINT32_MAX - 1, 5};
        static const char *const names[] = {"m", "z", "a", "b", "x", "root", "last", "ab"};

        for (size_t i = 0; i < sizeof(owners) / sizeof(owners[0]); i++)
                register_timer(f, owners[i], names[i], NULL);
}

/* Pages of every size, each after the last timer of the one before, add up to the whole list. */
static void test_pages_of_everyone_add_up(void **state)
{
        static const char *const all[] = {"0/root", "2/b", "2/z", "5/a",
                                          "5/ab",   "5/m", "9/x", "4294967294/last"};
        const size_t n_all = sizeof(all) / sizeof(all[0]);
        struct fx *f = *state;

        register_mixed(f);
        for (size_t limit = 1; limit <= n_all + 1; limit++) {
                struct td_list_page q = {.all_owners = true, .limit = limit};
                char cursor_name[TIMERD_NAME_MAX + 1];
                size_t seen = 0;

                for (;;) {
                        struct page p = list_page(f, &q);
                        size_t expect = n_all - seen < limit ? n_all - seen : limit;

                        assert_page(&p, seen + expect < n_all, all + seen, expect);
                        seen += expect;
                        if (!p.more) {
                                page_done(&p);
                                break;
                        }
                        q.has_after = true;
                        q.after_owner = p.timers[p.n - 1].owner;
                        strcpy(cursor_name, p.timers[p.n - 1].name);
                        q.after_name = cursor_name;
                        page_done(&p);
                }
                assert_int_equal(seen, n_all);
        }
}

static void test_page_of_one_owner(void **state)
{
        struct fx f;
        struct page p;

        (void)state;
        fx_init(&f, NULL);
        register_mixed(&f);

        p = list_page(&f, &(struct td_list_page){.owner = 5, .limit = 10});
        assert_page(&p, false, (const char *const[]){"5/a", "5/ab", "5/m"}, 3);
        page_done(&p);
        /* The next owner's timers are not "more". */
        p = list_page(&f, &(struct td_list_page){.owner = 5, .limit = 3});
        assert_page(&p, false, (const char *const[]){"5/a", "5/ab", "5/m"}, 3);
        page_done(&p);
        p = list_page(&f, &(struct td_list_page){.owner = 5, .limit = 1});
        assert_page(&p, true, (const char *const[]){"5/a"}, 1);
        page_done(&p);
        p = list_page(
            &f,
            &(struct td_list_page){
                .owner = 5, .limit = 1, .has_after = true, .after_owner = 5, .after_name = "a"});
        assert_page(&p, true, (const char *const[]){"5/ab"}, 1);
        page_done(&p);
        p = list_page(
            &f,
            &(struct td_list_page){
                .owner = 5, .limit = 1, .has_after = true, .after_owner = 5, .after_name = "ab"});
        assert_page(&p, false, (const char *const[]){"5/m"}, 1);
        page_done(&p);

        /* A cursor of an earlier owner starts at the owner's first timer; of a later one, at
         * the end. */
        p = list_page(
            &f,
            &(struct td_list_page){
                .owner = 5, .limit = 10, .has_after = true, .after_owner = 2, .after_name = "zzz"});
        assert_page(&p, false, (const char *const[]){"5/a", "5/ab", "5/m"}, 3);
        page_done(&p);
        p = list_page(
            &f,
            &(struct td_list_page){
                .owner = 5, .limit = 10, .has_after = true, .after_owner = 6, .after_name = "a"});
        assert_page(&p, false, NULL, 0);
        page_done(&p);
        /* Across owners for everyone: after 2's last comes 5's first. */
        p = list_page(&f, &(struct td_list_page){.all_owners = true,
                                                 .limit = 1,
                                                 .has_after = true,
                                                 .after_owner = 2,
                                                 .after_name = "z"});
        assert_page(&p, true, (const char *const[]){"5/a"}, 1);
        page_done(&p);
        /* An owner with no timers. */
        p = list_page(&f, &(struct td_list_page){.owner = 77, .limit = 10});
        assert_page(&p, false, NULL, 0);
        page_done(&p);
        p = list_page(&f, &(struct td_list_page){.owner = UINT32_MAX - 1, .limit = 10});
        assert_page(&p, false, (const char *const[]){"4294967294/last"}, 1);
        page_done(&p);
        fx_done(&f);
}

/* A cursor is a position, not a timer: the listing goes on where its timer stood. */
static void test_cursor_after_removed_timer(void **state)
{
        uint64_t generation_b, generation_c;
        struct fx f;
        struct page p;
        const struct td_list_page after_b = {.owner = FX_UID,
                                             .limit = 10,
                                             .has_after = true,
                                             .after_owner = FX_UID,
                                             .after_name = "b"};

        (void)state;
        fx_init(&f, NULL);
        register_timer(&f, FX_UID, "a", NULL);
        register_timer(&f, FX_UID, "b", &generation_b);
        register_timer(&f, FX_UID, "c", &generation_c);
        register_timer(&f, FX_UID, "d", NULL);
        p = list_page(&f, &(struct td_list_page){.owner = FX_UID, .limit = 2});
        assert_page(&p, true, (const char *const[]){"1000/a", "1000/b"}, 2);
        page_done(&p);

        assert_int_equal(fx_unregister(&f, fx_claim("b", generation_b)), 0);
        p = list_page(&f, &after_b);
        assert_page(&p, false, (const char *const[]){"1000/c", "1000/d"}, 2);
        page_done(&p);
        assert_int_equal(fx_unregister(&f, fx_claim("c", generation_c)), 0);
        register_timer(&f, FX_UID, "bb", NULL);
        p = list_page(&f, &after_b);
        assert_page(&p, false, (const char *const[]){"1000/bb", "1000/d"}, 2);
        page_done(&p);
        fx_done(&f);
}

static void test_after_the_last_and_empty(void **state)
{
        struct fx f;
        struct page p;

        (void)state;
        fx_init(&f, NULL);
        p = list_page(&f, &(struct td_list_page){.all_owners = true, .limit = 5});
        assert_page(&p, false, NULL, 0);
        p = list_page(&f, &(struct td_list_page){.owner = FX_UID,
                                                 .limit = 5,
                                                 .has_after = true,
                                                 .after_owner = FX_UID,
                                                 .after_name = "a"});
        assert_page(&p, false, NULL, 0);

        register_mixed(&f);
        p = list_page(&f, &(struct td_list_page){.all_owners = true,
                                                 .limit = 5,
                                                 .has_after = true,
                                                 .after_owner = UINT32_MAX - 1,
                                                 .after_name = "last"});
        assert_page(&p, false, NULL, 0);
        p = list_page(
            &f,
            &(struct td_list_page){
                .owner = 9, .limit = 5, .has_after = true, .after_owner = 9, .after_name = "x"});
        assert_page(&p, false, NULL, 0);
        fx_done(&f);
}

/* Bad arguments: a typed error, nothing listed, nothing changed. */
static void test_bad_page_arguments(void **state)
{
        struct registry_stats before, after;
        struct fx f;
        struct page p;

        (void)state;
        fx_init(&f, NULL);
        register_mixed(&f);
        registry_get_stats(f.r, &before);

        p = list_page(&f, &(struct td_list_page){.all_owners = true, .limit = 0});
        assert_int_equal(p.n, -EINVAL);
        assert_false(p.more);
        static const char *const bad_names[] = {"", "a b", "é", "a/b"};
        for (size_t i = 0; i < sizeof(bad_names) / sizeof(bad_names[0]); i++) {
                p = list_page(&f, &(struct td_list_page){.all_owners = true,
                                                         .limit = 5,
                                                         .has_after = true,
                                                         .after_owner = 5,
                                                         .after_name = bad_names[i]});
                assert_int_equal(p.n, -TIMERD_E_INVALID_NAME);
                assert_false(p.more);
        }
        registry_get_stats(f.r, &after);
        assert_memory_equal(&before, &after, sizeof(before));
        assert_int_equal(registry_check(f.r), 0);
        fx_done(&f);
}

/* The brief of a timer is its snapshot's clock, state and failure; a missing one or a bad name
 * are told as registry_get() tells them. */
static void test_brief_as_snapshot(void **state)
{
        struct td_snapshot t;
        struct td_brief b;
        struct fx *f = *state;

        register_mixed(f);
        assert_int_equal(registry_get(f->r, 5, "ab", &t), 0);
        assert_int_equal(registry_get_brief(f->r, 5, "ab", &b), 0);
        assert_int_equal(b.clock, t.declaration.clock);
        assert_int_equal(b.state, t.state);
        assert_int_equal(b.failure, t.failure);
        assert_int_equal(registry_get_brief(f->r, 5, "zz", &b), -TIMERD_E_NOT_FOUND);
        assert_int_equal(registry_get_brief(f->r, 2, "a", &b), -TIMERD_E_NOT_FOUND);
        assert_int_equal(registry_get_brief(f->r, 5, "a b", &b), -TIMERD_E_INVALID_NAME);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            FX_TEST(test_pages_of_everyone_add_up),
            cmocka_unit_test(test_page_of_one_owner),
            cmocka_unit_test(test_cursor_after_removed_timer),
            cmocka_unit_test(test_after_the_last_and_empty),
            cmocka_unit_test(test_bad_page_arguments),
            FX_TEST(test_brief_as_snapshot),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
