/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * The JSON tokenizer (varlink/tokens.h) on any bytes. Beyond not crashing: a refusal is one of the
 * documented errors; it takes and refuses what json-c's strict tokener does, but for the
 * differences listed with their RFC reasons (tests/varlink/json-c-agreement.c); the tree json.c
 * builds exists exactly when the tokens do; the tokens nest as they say (each container's
 * children end where it says, inside its text; keys are strings); strings unescape within their
 * text's length and integers read; too small an array is -ENOBUFS, never an overrun; an object's
 * view (varlink/view.h, the service's calls) reads every field as its tree does.
 */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/varlink/json-c-agreement.h"
#include "tests/varlink/view-agreement.h"
#include "varlink/json.h"
#include "varlink/tokens.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The depth the service allows, and enough tokens for any input the fuzzer makes. */
#define DEPTH     16
#define INPUT_MAX 4096

static void fail(const char *what)
{
        fprintf(stderr, "fuzz-json: %s\n", what);
        abort();
}

/* The token at i and everything inside it; returns the index after them. */
static size_t check_token(const char *text, size_t len, const struct vl_token *t, size_t n,
                          size_t i, char *buf)
{
        const struct vl_token *tok = &t[i];
        size_t child = i + 1;
        bool negative;
        uint64_t magnitude;

        if (i >= n || (size_t)tok->start + tok->len > len)
                fail("a token outside the text");
        switch (tok->type) {
        case VL_TOKEN_STRING:
                if (vl_token_unescape(text, tok, buf) > tok->len)
                        fail("a string longer than its text");
                break;
        case VL_TOKEN_NUMBER:
                if (tok->integer != (vl_token_integer(text, tok, &negative, &magnitude) != -EINVAL))
                        fail("an integer that does not read as one");
                break;
        case VL_TOKEN_OBJECT:
        case VL_TOKEN_ARRAY:
                for (uint32_t k = 0; k < tok->size; k++) {
                        if (tok->type == VL_TOKEN_OBJECT) {
                                if (child >= n || t[child].type != VL_TOKEN_STRING)
                                        fail("an object's key that is not a string");
                                child = check_token(text, len, t, n, child, buf);
                        }
                        if (t[child].start < tok->start ||
                            t[child].start >= (size_t)tok->start + tok->len)
                                fail("a child outside its container's text");
                        child = check_token(text, len, t, n, child, buf);
                }
                break;
        default:
                break;
        }
        if (tok->next != child)
                fail("a token's next is not where its children end");
        return child;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static struct vl_token tokens[INPUT_MAX + 1];
        static char buf[INPUT_MAX + 1];
        static struct vl_token view_tokens[INPUT_MAX + 1];
        static char copy[INPUT_MAX + 1];
        const char *d;
        size_t m;
        const char *text = (const char *)data;
        struct vl_parser p;
        json_object *tree = NULL;
        size_t n = 0, small;
        int r, again;

        if (size > INPUT_MAX)
                return 0;
        r = vl_tokenize(text, size, DEPTH, tokens, vl_tokens_bound(size), &n);
        if (r != 0 && r != -EILSEQ && r != -EBADMSG)
                fail("an undocumented error");
        if (size <= 512 && json_c_disagreement(text, size))
                fail(json_c_disagreement(text, size));

        /* The view's reader makes its strings in place: on a copy, in tokens of its own. It takes
         * and refuses what the tokenizer does. */
        if (vl_view_read(text, size, DEPTH, copy, view_tokens, vl_tokens_bound(size), &m) != r ||
            (r == 0 && m != n))
                fail("the view's reader and the tokens disagree");

        vl_parser_init(&p);
        again = vl_json_parse(&p, text, size, DEPTH, &tree);
        vl_parser_done(&p);
        if (again != r)
                fail("the tree and the tokens disagree");
        if (r < 0)
                return 0;
        if (json_object_is_type(tree, json_type_object)) {
                d = view_disagreement(&(struct vl_view){copy, view_tokens, 0, NULL}, tree, NULL, 0);
                if (d)
                        fail(d);
        }
        json_object_put(tree);

        if (n == 0 || check_token(text, size, tokens, n, 0, buf) != n)
                fail("tokens left after the root");
        small = n - 1;
        if (vl_tokenize(text, size, DEPTH, tokens, small, &n) != -ENOBUFS)
                fail("too few tokens were enough");
        return 0;
}
