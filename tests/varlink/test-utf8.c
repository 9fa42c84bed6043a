/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "varlink/utf8.h"

#define ELEMENTSOF(a) (sizeof(a) / sizeof((a)[0]))

static bool valid(const char *s)
{
        return vl_json_text_valid(s, strlen(s));
}

/* Every boundary of RFC 3629's table of well-formed sequences, on both sides. */
static void sequences(void **state)
{
        static const char *const good[] = {
            "",
            "plain ASCII {\"a\":[1,2]}",
            "\x7f",
            "\xc2\x80",             /* U+0080, the first two-byte one */
            "\xdf\xbf",             /* U+07FF */
            "\xe0\xa0\x80",         /* U+0800, the first three-byte one */
            "\xed\x9f\xbf",         /* U+D7FF, below the surrogates */
            "\xee\x80\x80",         /* U+E000, above them */
            "\xef\xbf\xbf",         /* U+FFFF */
            "\xf0\x90\x80\x80",     /* U+10000, the first four-byte one */
            "\xf4\x8f\xbf\xbf",     /* U+10FFFF, the last */
            "\xc3\xa4\xe2\x82\xac", /* ä€ */
        };
        static const char *const bad[] = {
            "\x80",             /* a continuation byte alone */
            "\xbf",             /* the last one */
            "\xc0\xaf",         /* '/' overlong in two bytes */
            "\xc1\xbf",         /* U+007F overlong */
            "\xe0\x80\xaf",     /* '/' overlong in three bytes */
            "\xe0\x9f\xbf",     /* U+07FF overlong */
            "\xf0\x80\x80\xaf", /* '/' overlong in four bytes */
            "\xf0\x8f\xbf\xbf", /* U+FFFF overlong */
            "\xed\xa0\x80",     /* U+D800, a surrogate */
            "\xed\xbf\xbf",     /* U+DFFF */
            "\xf4\x90\x80\x80", /* U+110000 */
            "\xf5\x80\x80\x80", /* never a lead byte */
            "\xf8\x88\x80\x80\x80",
            "\xfe",
            "\xff",
            "\xc3",          /* cut short at the end */
            "\xe2\x82",      /* cut short at the end */
            "\xf0\x9f\x98",  /* cut short at the end */
            "\xc3(",         /* cut short by an ASCII byte */
            "\xe2\x82(",     /* cut short by an ASCII byte */
            "\xf0\x9f\x98(", /* cut short by an ASCII byte */
        };

        (void)state;
        for (size_t i = 0; i < ELEMENTSOF(good); i++)
                assert_true(valid(good[i]));
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                char text[32];
                assert_false(valid(bad[i]));
                /* Also inside a JSON string, between valid text. */
                strcpy(text, "\"a");
                strcat(text, bad[i]);
                strcat(text, "b\"");
                assert_false(valid(text));
        }
}

/* A NUL is a character like any other: the length decides. */
static void length_not_nul(void **state)
{
        (void)state;
        assert_true(vl_json_text_valid("a\0b", 3));
        assert_false(vl_json_text_valid("a\0\xff", 3));
        assert_true(vl_json_text_valid("\xc3\xa4", 2));
        assert_false(vl_json_text_valid("\xc3\xa4", 1));
}

/* In a string, an escape of a surrogate must be a high one followed by a low one. */
static void surrogate_escapes(void **state)
{
        static const char *const good[] = {
            "\"\\ud83d\\ude00\"",
            "\"\\uD83D\\uDE00\"",
            "\"\\udbff\\udfff\"",
            "\"\\ud7ff\\ue000\"",
            "\"\\u0000\"",
            "\"\\\\ud800\"", /* an escaped \ */
            "\"\\\"\\ud800\\udc00\\\"\"",
            "\\ud800",   /* not in a string: not an escape (and no JSON) */
            "\"\\u12\"", /* no escape the parser takes: its business */
        };
        static const char *const bad[] = {
            "\"\\ud800\"",         "\"\\udbff\"",        "\"\\udc00\"",
            "\"\\udfff\"",         "\"\\ud800\\ud800\"", "\"\\ud800\\u0041\"",
            "\"\\ud800x\\udc00\"", "\"\\udc00\\ud800\"", "\"\\ud800\\udc0\"",
            "\"x\\\"\\ud800\"",    "{\"\\ud800\":1}",    "[\"a\",\"\\udfff\"]",
        };

        (void)state;
        for (size_t i = 0; i < ELEMENTSOF(good); i++)
                assert_true(valid(good[i]));
        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                assert_false(valid(bad[i]));
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(sequences),
            cmocka_unit_test(length_not_nul),
            cmocka_unit_test(surrogate_escapes),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
