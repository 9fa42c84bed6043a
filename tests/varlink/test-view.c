/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * A call's view (varlink/view.h) reads what the json-c tree of the same text holds: every getter
 * agrees with its vl_get_*() twin, field by field, on texts that try the corners (duplicate keys,
 * escapes, NULs, null, numbers at and beyond 64 bits), and a call's method and flags are read the
 * same way.
 */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "tests/varlink/view-agreement.h"
#include "varlink/json.h"
#include "varlink/message.h"
#include "varlink/view.h"

#define STR_AND_LEN(s) (s), (sizeof(s) - 1)

static const char *const objects[] = {
    "{}",
    "{\"a\":1,\"a\":\"x\",\"b\":null,\"a\":true}",
    "{\"a\":\"first\",\"a\":\"last\"}",
    "{\"a\":\"x\\ny\\u00e4\\ud83d\\ude00\\\\\\\"\",\"b\":\"\\/\"}",
    "{\"a\":\"a\\u0000b\",\"b\":\"\\u0000\",\"c\":\"\"}",
    "{\"\\u0061\":7,\"b\\u0000zzz\":8,\"c\\\\\":9}",
    "{\"a\":null,\"b\":false,\"c\":true,\"d\":[],\"e\":{}}",
    "{\"a\":0,\"b\":-0,\"c\":-1,\"d\":9223372036854775807,\"e\":9223372036854775808}",
    ("{\"a\":18446744073709551614,\"b\":18446744073709551615,\"c\":18446744073709551616,"
     "\"d\":-9223372036854775808,\"e\":1e2}"),
    "{\"a\":1.0,\"b\":0.5,\"c\":-1e400,\"d\":99999999999999999999999}",
    "{\"a\":{\"b\":{\"c\":\"deep\"}},\"a\":{\"c\":1},\"d\":[\"x\",\"y\\u0041\",3]}",
};
static const char *const fields[] = {"a", "b", "c", "d", "e", "f", "b\\", "c\\"};

/* The object text as a call's parameters, read in place; its tree (json.c's) beside it. */
static void parse_both(struct vl_parser *p, const char *object, struct vl_call *c,
                       json_object **tree)
{
        struct vl_parser tp;
        char msg[512];

        snprintf(msg, sizeof(msg), "{\"method\":\"a.b.C\",\"parameters\":%s}", object);
        assert_int_equal(vl_call_parse_with(p, msg, strlen(msg), 8, c), 0);
        vl_parser_init(&tp);
        assert_int_equal(vl_json_parse(&tp, object, strlen(object), 8, tree), 0);
        vl_parser_done(&tp);
        assert_non_null(*tree);
}

static void view_agrees_with_tree(void **state)
{
        struct vl_parser p;

        (void)state;
        vl_parser_init(&p);
        for (size_t i = 0; i < sizeof(objects) / sizeof(objects[0]); i++) {
                struct vl_call c;
                json_object *tree;

                parse_both(&p, objects[i], &c, &tree);
                assert_null(view_disagreement(&c.parameters, tree, fields,
                                              sizeof(fields) / sizeof(fields[0])));
                json_object_put(tree);
        }
        vl_parser_done(&p);
}

/* A string is the same however often it is read: unescaping happened once, in place. */
static void strings_read_twice(void **state)
{
        struct vl_view m;
        static const char msg[] =
            "{\"method\":\"a.b.C\",\"parameters\":{\"a\":\"x\\u0041\\ty\",\"a\\u0062\":\"\\\"\"}}";
        struct vl_parser p;
        struct vl_call c;
        const char *s;

        (void)state;
        vl_parser_init(&p);
        assert_int_equal(vl_call_parse_with(&p, STR_AND_LEN(msg), 4, &c), 0);
        for (int i = 0; i < 2; i++) {
                assert_int_equal(vl_view_member(&c.parameters, "a", &m), 0);
                assert_int_equal(vl_view_string(&m, &s), 0);
                assert_string_equal(s, "xA\ty");
                assert_int_equal(vl_view_member(&c.parameters, "ab", &m), 0);
                assert_int_equal(vl_view_string(&m, &s), 0);
                assert_string_equal(s, "\"");
        }
        vl_parser_done(&p);
}

/* The call's envelope: an escaped method, duplicate flags (the last), null flags and parameters. */
static void call_envelope(void **state)
{
        struct vl_view m;
        static const char dup[] = "{\"method\":\"x.y.Z\",\"more\":false,\"more\":true,\"method\":"
                                  "\"a.b.\\u0043\",\"parameters\":{\"n\":1},\"parameters\":null}";
        static const char *const refused[] = {
            "{\"method\":\"a.b.C\",\"more\":1}", "{\"method\":\"a.b.C\",\"parameters\":[]}",
            "{\"method\":\"a.b\\u0000C\"}",      "{\"method\":\"a.b.C\",\"method\":null}",
            "[{\"method\":\"a.b.C\"}]",
        };
        struct vl_parser p;
        struct vl_call c;

        (void)state;
        vl_parser_init(&p);
        assert_int_equal(vl_call_parse_with(&p, STR_AND_LEN(dup), 4, &c), 0);
        assert_string_equal(c.method, "a.b.C");
        assert_true(c.more);
        assert_int_equal(vl_view_size(&c.parameters), 0);
        assert_int_equal(vl_view_member(&c.parameters, "n", &m), -ENOENT);
        for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
                assert_int_equal(vl_call_parse_with(&p, refused[i], strlen(refused[i]), 4, &c),
                                 -EPROTO);
        vl_parser_done(&p);
}

/* The copy of a call's text is kept for the next, and a large one given back after it. */
static void text_kept(void **state)
{
        enum { LARGE = 10000 };
        static char large[LARGE + 64];
        static const char small[] = "{\"method\":\"a.b.C\"}";
        struct vl_parser p;
        struct vl_call c;
        char *kept;
        int n;

        (void)state;
        vl_parser_init(&p);
        assert_int_equal(vl_call_parse_with(&p, STR_AND_LEN(small), 4, &c), 0);
        kept = p.text;
        assert_int_equal(vl_call_parse_with(&p, STR_AND_LEN(small), 4, &c), 0);
        assert_ptr_equal(p.text, kept);
        n = snprintf(large, sizeof(large), "{\"method\":\"a.b.C\",\"parameters\":{\"s\":\"%0*d\"}}",
                     LARGE, 0);
        assert_int_equal(vl_call_parse_with(&p, large, (size_t)n, 4, &c), 0);
        assert_true(p.text_cap > (size_t)n);
        assert_int_equal(vl_call_parse_with(&p, STR_AND_LEN(small), 4, &c), 0);
        assert_true(p.text_cap < (size_t)n);
        vl_parser_done(&p);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(view_agrees_with_tree),
            cmocka_unit_test(strings_read_twice),
            cmocka_unit_test(call_envelope),
            cmocka_unit_test(text_kept),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
