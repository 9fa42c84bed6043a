/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The subordinate uid table (service/core/subuids.h) and the file it is read from
 * (service/io/subuid-file.h): what is kept, skipped, clipped, and who a uid is charged to. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "service/core/subuids.h"
#include "service/io/subuid-file.h"

/* alice is 1000, bob 1001; nobody else exists. */
static int resolve(const char *name, uint32_t *ret_uid)
{
        if (strcmp(name, "alice") == 0)
                *ret_uid = 1000;
        else if (strcmp(name, "bob") == 0)
                *ret_uid = 1001;
        else
                return -ENOENT;
        return 0;
}

static void parse(const char *text, struct subuid_range **ret, size_t *ret_n, size_t *ret_bad)
{
        FILE *f = fmemopen((void *)text, strlen(text), "r");

        assert_non_null(f);
        assert_int_equal(subuid_file_parse(f, "test", resolve, ret, ret_n, ret_bad), 0);
        fclose(f);
}

static void build(const char *text, struct subuids *ret, size_t *ret_clipped)
{
        struct subuid_range *ranges;
        size_t n, bad;

        parse(text, &ranges, &n, &bad);
        assert_int_equal(subuids_build(ret, ranges, n, ret_clipped), 0);
        free(ranges);
}

static void test_parse_names_numbers_comments(void **state)
{
        struct subuid_range *r;
        size_t n, bad;

        (void)state;
        parse("# the ranges\n"
              "\n"
              "alice:100000:65536\n"
              "   \t\n"
              "  bob:165536:65536  \r\n"
              "2000:231072:10\n"
              "# trailing comment",
              &r, &n, &bad);
        assert_int_equal(n, 3);
        assert_int_equal(bad, 0);
        assert_int_equal(r[0].account, 1000);
        assert_int_equal(r[0].first, 100000);
        assert_int_equal(r[0].count, 65536);
        assert_int_equal(r[1].account, 1001);
        assert_int_equal(r[1].first, 165536);
        assert_int_equal(r[2].account, 2000);
        assert_int_equal(r[2].count, 10);
        free(r);
}

static void test_parse_bad_lines_skipped(void **state)
{
        static const char *const bad_lines[] = {
            "carol:100000:65536\n",    /* no such user */
            "alice:100000\n",          /* two fields */
            "alice:100000:65536:7\n",  /* four */
            "alice:-1:10\n",           /* a sign */
            "alice:x:10\n",            /* not a number */
            "alice:10:\n",             /* an empty count */
            "alice:100000:0\n",        /* nothing */
            "alice:4294967296:1\n",    /* first past the uids */
            "alice:4294967295:2\n",    /* first + count past 2^32 */
            "alice:1:4294967296\n",    /* a count past the uids */
            "4294967295:100000:10\n",  /* (uid_t)-1 is no user */
            "99999999999:100000:10\n", /* nor is a number past the uids */
            ":100000:10\n",            /* no user */
        };
        struct subuid_range *r;
        size_t n, bad;

        (void)state;
        for (size_t i = 0; i < sizeof(bad_lines) / sizeof(bad_lines[0]); i++) {
                char text[128];
                snprintf(text, sizeof(text), "bob:500:5\n%salice:700:7\n", bad_lines[i]);
                parse(text, &r, &n, &bad);
                /* The lines around the bad one are kept. */
                assert_int_equal(bad, 1);
                assert_int_equal(n, 2);
                assert_int_equal(r[0].first, 500);
                assert_int_equal(r[1].first, 700);
                free(r);
        }
        /* The last uid the count may reach is 2^32 - 1. */
        parse("alice:4294967295:1\nalice:4294901760:65535\n", &r, &n, &bad);
        assert_int_equal(n, 2);
        assert_int_equal(bad, 0);
        free(r);
}

static void test_missing_file_is_no_ranges(void **state)
{
        struct subuid_range *r = (void *)1;
        size_t n = 1;

        (void)state;
        assert_int_equal(subuid_file_load("/nonexistent/subuid", &r, &n), 0);
        assert_null(r);
        assert_int_equal(n, 0);
        /* A directory cannot be read: an error, not an empty table. */
        assert_true(subuid_file_load("/", &r, &n) < 0);
}

static void test_lookup(void **state)
{
        struct subuids t;
        size_t clipped;

        (void)state;
        build("bob:165536:65536\nalice:100000:65536\n2000:300000:1\n", &t, &clipped);
        assert_int_equal(clipped, 0);
        assert_int_equal(t.n, 3);
        /* Sorted by first. */
        assert_int_equal(t.ranges[0].first, 100000);
        assert_int_equal(subuids_account(&t, 99999), 99999);
        assert_int_equal(subuids_account(&t, 100000), 1000);
        assert_int_equal(subuids_account(&t, 165535), 1000);
        assert_int_equal(subuids_account(&t, 165536), 1001);
        assert_int_equal(subuids_account(&t, 231071), 1001);
        assert_int_equal(subuids_account(&t, 231072), 231072);
        assert_int_equal(subuids_account(&t, 300000), 2000);
        assert_int_equal(subuids_account(&t, 300001), 300001);
        assert_int_equal(subuids_account(&t, 0), 0);
        assert_int_equal(subuids_account(&t, 1000), 1000);
        assert_int_equal(subuids_account(&t, UINT32_MAX), UINT32_MAX);
        subuids_done(&t);

        /* No ranges: everyone is their own account. */
        build("", &t, &clipped);
        assert_int_equal(t.n, 0);
        assert_null(t.ranges);
        assert_int_equal(subuids_account(&t, 100000), 100000);
        subuids_done(&t);
}

/* A uid in several ranges is charged to the range that starts first (the earlier line among
 * equal starts); what is left of a later range is kept, one covered whole is dropped. */
static void test_overlaps(void **state)
{
        struct subuids t;
        size_t clipped;

        (void)state;
        build("bob:150:100\n"   /* overlaps alice's end: keeps 200..249 */
              "alice:100:100\n" /* starts first: 100..199 */
              "2000:120:10\n"   /* inside alice's: dropped */
              "2001:100:5\n"    /* the same start as alice, a later line: dropped */
              "2002:240:20\n",  /* overlaps what bob kept: keeps 250..259 */
              &t, &clipped);
        assert_int_equal(clipped, 4);
        assert_int_equal(t.n, 3);
        for (size_t i = 1; i < t.n; i++)
                assert_true((uint64_t)t.ranges[i - 1].first + t.ranges[i - 1].count <=
                            t.ranges[i].first);
        assert_int_equal(subuids_account(&t, 100), 1000);
        assert_int_equal(subuids_account(&t, 125), 1000);
        assert_int_equal(subuids_account(&t, 199), 1000);
        assert_int_equal(subuids_account(&t, 200), 1001);
        assert_int_equal(subuids_account(&t, 249), 1001);
        assert_int_equal(subuids_account(&t, 250), 2002);
        assert_int_equal(subuids_account(&t, 259), 2002);
        assert_int_equal(subuids_account(&t, 260), 260);
        subuids_done(&t);

        /* The same start, the earlier line wins whichever is longer. */
        build("bob:100:10\nalice:100:50\n", &t, &clipped);
        assert_int_equal(clipped, 1);
        assert_int_equal(subuids_account(&t, 105), 1001);
        assert_int_equal(subuids_account(&t, 120), 1000);
        subuids_done(&t);
}

/* uid 0 is root's own, whatever range holds it. */
static void test_uid_0_is_never_charged(void **state)
{
        struct subuids t;
        size_t clipped;

        (void)state;
        build("alice:0:65536\nbob:0:1\n", &t, &clipped);
        assert_int_equal(clipped, 2);
        assert_int_equal(subuids_account(&t, 0), 0);
        assert_int_equal(subuids_account(&t, 1), 1000);
        assert_int_equal(subuids_account(&t, 65535), 1000);
        subuids_done(&t);
}

/* The last range may end at 2^32: its end does not wrap. */
static void test_top_of_the_uids(void **state)
{
        struct subuids t;
        size_t clipped;

        (void)state;
        build("alice:4294901760:65536\nbob:4294967295:1\n", &t, &clipped);
        assert_int_equal(clipped, 1);
        assert_int_equal(subuids_account(&t, UINT32_MAX), 1000);
        assert_int_equal(subuids_account(&t, 4294901759u), 4294901759u);
        subuids_done(&t);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_parse_names_numbers_comments),
            cmocka_unit_test(test_parse_bad_lines_skipped),
            cmocka_unit_test(test_missing_file_is_no_ranges),
            cmocka_unit_test(test_lookup),
            cmocka_unit_test(test_overlaps),
            cmocka_unit_test(test_uid_0_is_never_charged),
            cmocka_unit_test(test_top_of_the_uids),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
