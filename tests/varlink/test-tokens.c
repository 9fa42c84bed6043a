/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The tokenizer (varlink/tokens.h): the tokens it makes, strings and integers read from them, the
 * typed fields libtimerd decodes replies with, and its agreement with json-c's strict tokener on
 * every file of the fuzz corpora, on edge cases and on texts generated from them.
 */

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "json-c-agreement.h"
#include "json-texts.h"
#include "varlink/tokens.h"

#define CAP 64

static struct vl_token tokens[CAP];

static size_t tokenize_ok(const char *text)
{
        size_t n = 0;

        assert_int_equal(vl_tokenize(text, strlen(text), 16, tokens, CAP, &n), 0);
        return n;
}

static int tokenize(const char *text, int depth, size_t cap)
{
        size_t n;

        return vl_tokenize(text, strlen(text), depth, tokens, cap, &n);
}

static void tokens_of_a_document(void **state)
{
        const char *text = " {\"a\":[1,{\"b\":null}],\"c\":\"d\\n\",\"e\":-2.5e1} ";
        size_t n = tokenize_ok(text);
        char buf[16];

        (void)state;
        assert_int_equal(n, 11);
        /* the root: three members, all eleven tokens inside it */
        assert_int_equal(tokens[0].type, VL_TOKEN_OBJECT);
        assert_int_equal(tokens[0].size, 3);
        assert_int_equal(tokens[0].next, 11);
        assert_int_equal(tokens[0].start, 1);
        assert_int_equal(tokens[0].len, strlen(text) - 2);
        /* "a": an array of two, its second an object of one */
        assert_true(vl_token_equals(text, &tokens[1], "a"));
        assert_int_equal(tokens[2].type, VL_TOKEN_ARRAY);
        assert_int_equal(tokens[2].size, 2);
        assert_int_equal(tokens[2].next, 7);
        assert_int_equal(tokens[3].type, VL_TOKEN_NUMBER);
        assert_true(tokens[3].integer);
        assert_int_equal(tokens[3].next, 4);
        assert_int_equal(tokens[4].type, VL_TOKEN_OBJECT);
        assert_int_equal(tokens[4].size, 1);
        assert_int_equal(tokens[6].type, VL_TOKEN_NULL);
        assert_int_equal(tokens[4].next, 7);
        /* "c": an escaped string, unescaped on demand */
        assert_true(vl_token_equals(text, &tokens[7], "c"));
        assert_true(tokens[8].escaped);
        assert_int_equal(vl_token_unescape(text, &tokens[8], buf), 2);
        assert_string_equal(buf, "d\n");
        /* "e": not an integer */
        assert_int_equal(tokens[10].type, VL_TOKEN_NUMBER);
        assert_false(tokens[10].integer);
        assert_int_equal(tokens[10].next, 11);
        assert_int_equal(vl_token_member(text, tokens, 0, "e"), 10);
        assert_int_equal(vl_token_member(text, tokens, 0, "b"), -ENOENT);
        assert_int_equal(vl_token_member(text, tokens, 2, "a"), -ENOENT);
}

static void strings_unescaped(void **state)
{
        const char *text =
            "[\"\\u00e9\\u20ac\\ud83d\\ude00\\\"\\\\\\/\\b\\f\\r\\t\",\"a\\u0000b\"]";
        char buf[64];

        (void)state;
        assert_int_equal(tokenize_ok(text), 3);
        assert_int_equal(vl_token_unescape(text, &tokens[1], buf), 2 + 3 + 4 + 7);
        assert_memory_equal(buf, "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"\\/\b\f\r\t", 16);
        assert_true(
            vl_token_equals(text, &tokens[1], "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"\\/\b\f\r\t"));
        assert_false(vl_token_equals(text, &tokens[1], "\xc3\xa9"));
        assert_int_equal(vl_token_unescape(text, &tokens[2], buf), 3);
        assert_memory_equal(buf, "a\0b", 4);
        /* a C string stops at the NUL: it is not the token's string */
        assert_false(vl_token_equals(text, &tokens[2], "a"));
        assert_false(vl_token_equals(text, &tokens[0], ""));
}

static void integers(void **state)
{
        static const struct {
                const char *text;
                int r;
                bool negative;
                uint64_t magnitude;
        } cases[] = {
            {"0", 0, false, 0},
            {"-0", 0, true, 0},
            {"9223372036854775807", 0, false, INT64_MAX},
            {"-9223372036854775808", 0, true, (uint64_t)INT64_MAX + 1},
            /* 19 digits are read without an overflow check, 20 with one */
            {"9999999999999999999", 0, false, UINT64_C(9999999999999999999)},
            {"-1000000000000000000", 0, true, UINT64_C(1000000000000000000)},
            {"10000000000000000000", 0, false, UINT64_C(10000000000000000000)},
            {"99999999999999999999", -ERANGE, false, UINT64_MAX},
            {"18446744073709551615", 0, false, UINT64_MAX},
            {"18446744073709551616", -ERANGE, false, UINT64_MAX},
            {"-99999999999999999999999", -ERANGE, true, UINT64_MAX},
            {"1.0", -EINVAL, false, 0},
            {"1e3", -EINVAL, false, 0},
            {"\"1\"", -EINVAL, false, 0},
        };

        (void)state;
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                bool negative = false;
                uint64_t magnitude = 0;

                tokenize_ok(cases[i].text);
                assert_int_equal(vl_token_integer(cases[i].text, &tokens[0], &negative, &magnitude),
                                 cases[i].r);
                if (cases[i].r != -EINVAL) {
                        assert_int_equal(negative, cases[i].negative);
                        assert_int_equal(magnitude, cases[i].magnitude);
                }
        }
}

/*
 * A string's scan takes eight bytes at a time while eight are left: each byte it must stop at
 * (its end, an escape, a control character, a multi-byte character, good or bad), after 0 to 19
 * plain bytes, so at every place in a block and in the bytes after the last whole one, with 0 to
 * 9 bytes of text after the string.
 */
static void strings_stop_at_every_place(void **state)
{
        static const struct {
                const char *stop; /* what follows the plain bytes, up to the string's end */
                int r;
                size_t len; /* the string's, beyond the plain bytes */
                bool escaped;
        } stops[] = {
            {"\"", 0, 0, false},
            {"\\n\"", 0, 2, true},
            {"\\u00e9\"", 0, 6, true},
            {"\xc3\xa9\"", 0, 2, false},
            {"\xf0\x9f\x98\x80\"", 0, 4, false},
            {"\x1f\"", -EBADMSG, 0, false},
            {"\x7f\"", 0, 1, false},
            {"\xc0\xaf\"", -EILSEQ, 0, false},
            {"\xff\"", -EILSEQ, 0, false},
            {"\\x\"", -EBADMSG, 0, false},
            {"", -EBADMSG, 0, false},
        };

        (void)state;
        for (size_t i = 0; i < sizeof(stops) / sizeof(stops[0]); i++)
                for (size_t plain = 0; plain < 20; plain++)
                        for (size_t after = 0; after < 10; after++) {
                                char text[64];
                                size_t n = 0, len;

                                len = (size_t)snprintf(text, sizeof(text), "[\"%.*s%s%.*s",
                                                       (int)plain, "abcdefghij0123456789",
                                                       stops[i].stop, (int)after, "         ");
                                if (stops[i].r == 0)
                                        text[len++] = ']';
                                assert_int_equal(vl_tokenize(text, len, 4, tokens, CAP, &n),
                                                 stops[i].r);
                                if (stops[i].r < 0)
                                        continue;
                                assert_int_equal(n, 2);
                                assert_int_equal(tokens[1].start, 2);
                                assert_int_equal(tokens[1].len, plain + stops[i].len);
                                assert_int_equal(tokens[1].escaped, stops[i].escaped);
                        }
}

/* As json-c keeps the last of duplicate keys, so does a lookup. */
static void duplicate_keys_last_wins(void **state)
{
        const char *text = "{\"a\":1,\"b\":{\"a\":3},\"\\u0061\":2}";
        uint64_t v = 0;

        (void)state;
        tokenize_ok(text);
        assert_int_equal(vl_token_get_u64(text, tokens, 0, "a", &v), 0);
        assert_int_equal(v, 2);
}

static void typed_fields(void **state)
{
        const char *text = "{\"u\":7,\"neg\":-1,\"zero\":-0,\"max\":18446744073709551615,"
                           "\"big\":1e3,\"s\":\"abc\",\"nul\":\"a\\u0000\",\"t\":true,"
                           "\"n\":null,\"o\":{},\"e\":\"\\u00e9\"}";
        uint64_t u = 0;
        bool b = false;
        size_t o = 0;
        char buf[4];

        (void)state;
        tokenize_ok(text);
        assert_int_equal(vl_token_get_u64(text, tokens, 0, "u", &u), 0);
        assert_int_equal(u, 7);
        assert_int_equal(vl_token_get_u64(text, tokens, 0, "neg", &u), -EINVAL);
        assert_int_equal(vl_token_get_u64(text, tokens, 0, "zero", &u), 0);
        assert_int_equal(u, 0);
        /* the tree saturates there, and vl_get_u64() refuses the saturated value */
        assert_int_equal(vl_token_get_u64(text, tokens, 0, "max", &u), -EINVAL);
        assert_int_equal(vl_token_get_u64(text, tokens, 0, "big", &u), -EINVAL);
        assert_int_equal(vl_token_get_u64(text, tokens, 0, "s", &u), -EINVAL);
        assert_int_equal(vl_token_get_u64(text, tokens, 0, "n", &u), -ENOENT);
        assert_int_equal(vl_token_get_u64(text, tokens, 0, "absent", &u), -ENOENT);
        assert_int_equal(vl_token_get_string(text, tokens, 0, "s", buf, sizeof(buf)), 0);
        assert_string_equal(buf, "abc");
        assert_int_equal(vl_token_get_string(text, tokens, 0, "s", buf, 3), -EINVAL);
        assert_int_equal(vl_token_get_string(text, tokens, 0, "nul", buf, sizeof(buf)), -EINVAL);
        assert_int_equal(vl_token_get_string(text, tokens, 0, "e", buf, 3), 0);
        assert_string_equal(buf, "\xc3\xa9");
        assert_int_equal(vl_token_get_string(text, tokens, 0, "e", buf, 2), -EINVAL);
        assert_int_equal(vl_token_get_string(text, tokens, 0, "t", buf, sizeof(buf)), -EINVAL);
        assert_int_equal(vl_token_get_bool(text, tokens, 0, "t", &b), 0);
        assert_true(b);
        assert_int_equal(vl_token_get_bool(text, tokens, 0, "u", &b), -EINVAL);
        assert_int_equal(vl_token_get_bool(text, tokens, 0, "n", &b), -ENOENT);
        assert_int_equal(vl_token_get_object(text, tokens, 0, "o", &o), 0);
        assert_int_equal(tokens[o].type, VL_TOKEN_OBJECT);
        assert_int_equal(vl_token_get_object(text, tokens, 0, "s", &o), -EINVAL);
}

static void refusals(void **state)
{
        (void)state;
        assert_int_equal(tokenize("\"\xc0\xaf\"", 4, CAP), -EILSEQ);
        assert_int_equal(tokenize("\"\\ud800\"", 4, CAP), -EILSEQ);
        assert_int_equal(tokenize("[1,]", 4, CAP), -EBADMSG);
        assert_int_equal(tokenize("{\"a\" 1}", 4, CAP), -EBADMSG);
        assert_int_equal(tokenize("", 4, CAP), -EBADMSG);
        assert_int_equal(tokenize("  ", 4, CAP), -EBADMSG);
        assert_int_equal(tokenize("[1] [2]", 4, CAP), -EBADMSG);
        assert_int_equal(tokenize("1", 0, CAP), -EINVAL);
        /* depth: the root is 1, a scalar inside it 2 */
        assert_int_equal(tokenize("[[1]]", 3, CAP), 0);
        assert_int_equal(tokenize("[[1]]", 2, CAP), -EBADMSG);
        assert_int_equal(tokenize("[[]]", 2, CAP), 0);
        assert_int_equal(tokenize("{\"a\":{\"b\":1}}", 3, CAP), 0);
        assert_int_equal(tokenize("{\"a\":{\"b\":1}}", 2, CAP), -EBADMSG);
        /* too few tokens, and exactly enough */
        assert_int_equal(tokenize("[1,2,3]", 4, 3), -ENOBUFS);
        assert_int_equal(tokenize("[1,2,3]", 4, 4), 0);
        assert_int_equal(tokenize("{\"a\":1}", 4, 2), -ENOBUFS);
}

/* The bound holds for the texts densest in tokens, whole or cut short. */
static void bound_is_enough(void **state)
{
        static const char *const texts[] = {
            "1", "[1]", "[1,1,1]", "[[],[]]", "{\"\":1,\"\":1}", "[\"\",\"\"]"};

        static const char *const cut_short[] = {"[[[", "{\"a\":{\"b\":[[[", "[1,[2,[3"};

        (void)state;
        /* whole texts: half the bound */
        for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
                assert_int_equal(tokenize(texts[i], 8, strlen(texts[i]) / 2 + 1), 0);
        /* cut short: refused as not JSON, not for want of tokens */
        for (size_t i = 0; i < sizeof(cut_short) / sizeof(cut_short[0]); i++)
                assert_int_equal(tokenize(cut_short[i], 8, vl_tokens_bound(strlen(cut_short[i]))),
                                 -EBADMSG);
}

/* The reusable array grows for a large message and gives it back after a small one. */
static void reusable_array(void **state)
{
        struct vl_tokens k = {0};
        size_t n = 3000, len = 0;
        char *big = malloc(2 * n + 2);

        (void)state;
        assert_non_null(big);
        big[len++] = '[';
        for (size_t i = 0; i < n; i++) {
                big[len++] = '0';
                big[len++] = i + 1 < n ? ',' : ']';
        }
        assert_int_equal(vl_tokens_parse(&k, big, len, 4), 0);
        assert_int_equal(k.n, n + 1);
        assert_true(k.cap > VL_TOKENS_KEPT);
        assert_int_equal(vl_tokens_parse(&k, "{}", 2, 4), 0);
        assert_int_equal(k.n, 1);
        assert_int_equal(k.cap, VL_TOKENS_KEPT);
        vl_tokens_done(&k);
        free(big);
}

static unsigned n_checked;

static void agree(const char *text, size_t len)
{
        const char *why = json_c_disagreement(text, len);

        if (why)
                fail_msg("%s: \"%.*s\"", why, (int)len, text);
        n_checked++;
}

/* The text, every prefix of it, and it without each one of its bytes. */
static void agree_generated(const char *text, size_t len)
{
        char *copy = malloc(len + 1);

        assert_non_null(copy);
        agree(text, len);
        for (size_t i = 0; i < len && len <= 512; i++) {
                agree(text, i);
                memcpy(copy, text, i);
                memcpy(copy + i, text + i + 1, len - i - 1);
                agree(copy, len - 1);
        }
        free(copy);
}

/* A corpus file whole, and each of its NUL-separated messages (a varlink stream). */
static void agree_file(const char *path)
{
        FILE *f = fopen(path, "re");
        char *data;
        long size;

        assert_non_null(f);
        assert_int_equal(fseek(f, 0, SEEK_END), 0);
        size = ftell(f);
        assert_true(size >= 0);
        rewind(f);
        data = malloc((size_t)size + 1);
        assert_non_null(data);
        assert_int_equal(fread(data, 1, (size_t)size, f), (size_t)size);
        fclose(f);
        agree(data, (size_t)size);
        for (size_t start = 0, i = 0; i <= (size_t)size; i++)
                if (i == (size_t)size || data[i] == 0) {
                        agree_generated(data + start, i - start);
                        start = i + 1;
                }
        free(data);
}

static void agree_corpus(const char *dir)
{
        struct dirent **names;
        int n = scandir(dir, &names, NULL, alphasort);

        assert_true(n > 0);
        for (int i = 0; i < n; i++) {
                char path[PATH_MAX];

                if (names[i]->d_name[0] != '.') {
                        snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name);
                        agree_file(path);
                }
                free(names[i]);
        }
        free(names);
}

static void agrees_with_json_c(void **state)
{
        /* Beyond json-texts.h: where the two part, and more edges. */
        static const char *const edge[] = {
            "+1",
            "0x10",
            "1e",
            "-.5",
            "00",
            "truex",
            "\"\\ud800\"",
            "\"\\udc00\"",
            "\"\\ud800\\u0041\"",
            "\"\xc3\xa9\"",
            "\"\xc0\xaf\"",
            "\"\xed\xa0\x80\"",
            "\"\xf4\x90\x80\x80\"",
            "\"\xe2\x82\"",
            "\x80",
            "\"a\tb\"",
            "\"\x01\"",
            "{'a':1}",
            "'a'",
            "NaN",
            "Infinity",
            "-Infinity",
            "[1]\x0b",
            "\x0c[1]",
            "[true , false]",
            "1.",
            "[1.e5]",
            "{\"a\":{\"b\":{\"c\":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}}}",
            "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
            "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
        };

        (void)state;
        for (size_t i = 0; i < sizeof(json_texts_like_json_c) / sizeof(json_texts_like_json_c[0]);
             i++)
                agree_generated(json_texts_like_json_c[i], strlen(json_texts_like_json_c[i]));
        for (size_t i = 0; i < sizeof(edge) / sizeof(edge[0]); i++)
                agree_generated(edge[i], strlen(edge[i]));
        agree_corpus(FUZZ_CORPUS_DIR "/json");
        agree_corpus(FUZZ_CORPUS_DIR "/varlink");
        print_message("%u texts agree with json-c\n", n_checked);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(tokens_of_a_document),
            cmocka_unit_test(strings_unescaped),
            cmocka_unit_test(strings_stop_at_every_place),
            cmocka_unit_test(integers),
            cmocka_unit_test(duplicate_keys_last_wins),
            cmocka_unit_test(typed_fields),
            cmocka_unit_test(refusals),
            cmocka_unit_test(bound_is_enough),
            cmocka_unit_test(reusable_array),
            cmocka_unit_test(agrees_with_json_c),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
