/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "varlink/json.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "varlink/tokens.h"

/* A parser keeps a scratch buffer this large from one message to the next; a larger message gets
 * one of its own. */
#define SCRATCH_KEPT 4096

struct builder {
        const char *text;
        const struct vl_token *tokens;
        /* Where a string or a number's text is copied before json-c copies it in turn: no token's
         * text is longer than the message. */
        char *scratch;
};

static json_object *integer_json(bool negative, uint64_t magnitude, bool overflow)
{
        if (negative)
                return json_object_new_int64(
                    overflow || magnitude > (uint64_t)INT64_MAX ? INT64_MIN : -(int64_t)magnitude);
        if (overflow)
                return json_object_new_uint64(UINT64_MAX);
        if (magnitude > (uint64_t)INT64_MAX)
                return json_object_new_uint64(magnitude);
        return json_object_new_int64((int64_t)magnitude);
}

static json_object *number_json(const struct builder *b, const struct vl_token *t)
{
        bool negative;
        uint64_t magnitude;
        int r = vl_token_integer(b->text, t, &negative, &magnitude);

        if (r != -EINVAL)
                return integer_json(negative, magnitude, r == -ERANGE);
        /* Kept with its text, as json-c keeps a number it reads. */
        memcpy(b->scratch, b->text + t->start, t->len);
        b->scratch[t->len] = 0;
        return json_object_new_double_s(strtod(b->scratch, NULL), b->scratch);
}

static int build(const struct builder *b, size_t i, json_object **ret);

static int build_children(const struct builder *b, size_t i, json_object *c)
{
        const struct vl_token *t = &b->tokens[i];
        bool object = t->type == VL_TOKEN_OBJECT;
        size_t child = i + 1;

        for (uint32_t k = 0; k < t->size; k++) {
                size_t key = child, value = object ? child + 1 : child;
                json_object *v;
                int r = build(b, value, &v);

                if (r < 0)
                        return r;
                if (object) {
                        /* The value first: its strings reuse the scratch buffer. */
                        vl_token_unescape(b->text, &b->tokens[key], b->scratch);
                        r = json_object_object_add(c, b->scratch, v);
                } else
                        r = json_object_array_add(c, v);
                if (r < 0) {
                        json_object_put(v);
                        return -ENOMEM;
                }
                child = b->tokens[value].next;
        }
        return 0;
}

static int build(const struct builder *b, size_t i, json_object **ret)
{
        const struct vl_token *t = &b->tokens[i];
        size_t n;
        int r;

        *ret = NULL;
        switch (t->type) {
        case VL_TOKEN_NULL:
                return 0;
        case VL_TOKEN_FALSE:
        case VL_TOKEN_TRUE:
                *ret = json_object_new_boolean(t->type == VL_TOKEN_TRUE);
                break;
        case VL_TOKEN_NUMBER:
                *ret = number_json(b, t);
                break;
        case VL_TOKEN_STRING:
                n = vl_token_unescape(b->text, t, b->scratch);
                *ret = json_object_new_string_len(b->scratch, (int)n);
                break;
        default:
                *ret =
                    t->type == VL_TOKEN_OBJECT ? json_object_new_object() : json_object_new_array();
                if (!*ret)
                        break;
                r = build_children(b, i, *ret);
                if (r < 0) {
                        json_object_put(*ret);
                        *ret = NULL;
                        return r;
                }
        }
        return *ret ? 0 : -ENOMEM;
}

int vl_json_tree(struct vl_parser *p, const char *text, size_t len, const struct vl_token *tokens,
                 size_t root, json_object **ret)
{
        struct builder b = {.text = text, .tokens = tokens};
        int r;

        if (len >= SCRATCH_KEPT)
                b.scratch = malloc(len + 1);
        else {
                if (!p->scratch)
                        p->scratch = malloc(SCRATCH_KEPT);
                b.scratch = p->scratch;
        }
        if (!b.scratch)
                return -ENOMEM;
        r = build(&b, root, ret);
        if (b.scratch != p->scratch)
                free(b.scratch);
        return r;
}

int vl_json_parse(struct vl_parser *p, const char *msg, size_t len, int max_depth,
                  json_object **ret)
{
        int r = vl_tokens_parse(&p->tokens, msg, len, max_depth);

        if (r < 0)
                return r;
        return vl_json_tree(p, msg, len, p->tokens.v, 0, ret);
}
