/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "varlink/tokens.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "varlink/scan.h"
#include "varlink/utf8.h"

static size_t put_utf8(char *o, uint32_t cp)
{
        if (cp < 0x80) {
                o[0] = (char)cp;
                return 1;
        }
        if (cp < 0x800) {
                o[0] = (char)(0xc0 | cp >> 6);
                o[1] = (char)(0x80 | (cp & 0x3f));
                return 2;
        }
        if (cp < 0x10000) {
                o[0] = (char)(0xe0 | cp >> 12);
                o[1] = (char)(0x80 | (cp >> 6 & 0x3f));
                o[2] = (char)(0x80 | (cp & 0x3f));
                return 3;
        }
        o[0] = (char)(0xf0 | cp >> 18);
        o[1] = (char)(0x80 | (cp >> 12 & 0x3f));
        o[2] = (char)(0x80 | (cp >> 6 & 0x3f));
        o[3] = (char)(0x80 | (cp & 0x3f));
        return 4;
}

/* The bytes of the character or escape at s[*pos] of a string the tokenizer took, into out. */
static size_t unescape_one(const char *s, size_t end, size_t *pos, char out[4])
{
        char ch = s[(*pos)++];

        if (ch != '\\') {
                out[0] = ch;
                return 1;
        }
        ch = s[(*pos)++];
        if (ch != 'u') {
                out[0] = simple_escape(ch);
                return 1;
        }
        return put_utf8(out, (uint32_t)unicode_escape(s, end, pos));
}

size_t vl_token_unescape(const char *text, const struct vl_token *t, char *buf)
{
        size_t pos = t->start, end = (size_t)t->start + t->len, n = 0;

        if (!t->escaped) {
                memcpy(buf, text + t->start, t->len);
                n = t->len;
        } else
                while (pos < end)
                        n += unescape_one(text, end, &pos, buf + n);
        buf[n] = 0;
        return n;
}

bool vl_token_equals(const char *text, const struct vl_token *t, const char *s)
{
        size_t pos = t->start, end = (size_t)t->start + t->len;

        if (t->type != VL_TOKEN_STRING)
                return false;
        if (!t->escaped)
                return strncmp(text + t->start, s, t->len) == 0 && s[t->len] == 0;
        while (pos < end) {
                char out[4];
                size_t n = unescape_one(text, end, &pos, out);

                if (strncmp(out, s, n) != 0 || memchr(s, 0, n))
                        return false;
                s += n;
        }
        return *s == 0;
}

int vl_token_integer(const char *text, const struct vl_token *t, bool *ret_negative,
                     uint64_t *ret_magnitude)
{
        const char *p = text + t->start, *end = p + t->len;
        uint64_t magnitude = 0;

        if (t->type != VL_TOKEN_NUMBER || !t->integer)
                return -EINVAL;
        *ret_negative = *p == '-';
        p += *ret_negative;
        /* 19 digits never overflow 64 bits: only longer numbers pay a division per digit, which
         * was most of reading one. */
        if (end - p <= 19) {
                for (; p < end; p++)
                        magnitude = magnitude * 10 + (unsigned)(*p - '0');
                *ret_magnitude = magnitude;
                return 0;
        }
        for (; p < end; p++) {
                unsigned d = (unsigned)(*p - '0');

                if (magnitude > (UINT64_MAX - d) / 10) {
                        *ret_magnitude = UINT64_MAX;
                        return -ERANGE;
                }
                magnitude = magnitude * 10 + d;
        }
        *ret_magnitude = magnitude;
        return 0;
}

int vl_token_member(const char *text, const struct vl_token *tokens, size_t object, const char *key)
{
        int found = -ENOENT;
        size_t i = object + 1, n = strlen(key);

        if (tokens[object].type != VL_TOKEN_OBJECT)
                return -ENOENT;
        for (uint32_t m = 0; m < tokens[object].size; m++) {
                const struct vl_token *k = &tokens[i];

                /* Most keys are plain: told apart by their length before their bytes. */
                if (k->escaped ? vl_token_equals(text, k, key)
                               : k->len == n && memcmp(text + k->start, key, n) == 0)
                        found = (int)(i + 1);
                i = tokens[i + 1].next;
        }
        return found;
}

static int tokens_resize(struct vl_tokens *k, size_t cap)
{
        struct vl_token *v = reallocarray(k->v, cap, sizeof(*v));

        if (!v)
                return -ENOMEM;
        k->v = v;
        k->cap = cap;
        return 0;
}

int vl_tokens_reserve(struct vl_tokens *k, size_t len)
{
        k->n = 0;
        if ((k->cap > VL_TOKENS_KEPT && vl_tokens_bound(len) <= VL_TOKENS_KEPT) || !k->v)
                return tokens_resize(k, VL_TOKENS_KEPT);
        return 0;
}

int vl_tokens_grow(struct vl_tokens *k, size_t len)
{
        size_t bound = vl_tokens_bound(len);

        /* Doubling: the bound is 20 bytes of tokens per byte of text, most need far less. */
        return tokens_resize(k, k->cap * 2 < bound ? k->cap * 2 : bound);
}

int vl_tokens_parse(struct vl_tokens *k, const char *text, size_t len, int max_depth)
{
        int r = vl_tokens_reserve(k, len);

        if (r < 0)
                return r;
        for (;;) {
                r = vl_tokenize(text, len, max_depth, k->v, k->cap, &k->n);
                if (r != -ENOBUFS || k->cap >= vl_tokens_bound(len))
                        return r;
                r = vl_tokens_grow(k, len);
                if (r < 0)
                        return r;
        }
}

void vl_tokens_done(struct vl_tokens *k)
{
        free(k->v);
        *k = (struct vl_tokens){0};
}

/* The value of a field that is present and not null, as the index of its token. */
static int get_field(const char *text, const struct vl_token *tokens, size_t object,
                     const char *field, enum vl_token_type type)
{
        int i = vl_token_member(text, tokens, object, field);

        if (i < 0 || tokens[i].type == VL_TOKEN_NULL)
                return -ENOENT;
        return tokens[i].type == type ? i : -EINVAL;
}

int vl_token_u64(const char *text, const struct vl_token *t, uint64_t *ret)
{
        uint64_t magnitude;
        bool negative;

        /* The tree saturates beyond 64 bits to UINT64_MAX, which vl_get_u64() refuses with it. */
        if (t->type != VL_TOKEN_NUMBER || vl_token_integer(text, t, &negative, &magnitude) < 0 ||
            (negative && magnitude > 0) || magnitude == UINT64_MAX)
                return -EINVAL;
        *ret = magnitude;
        return 0;
}

int vl_token_bool(const struct vl_token *t, bool *ret)
{
        if (t->type != VL_TOKEN_TRUE && t->type != VL_TOKEN_FALSE)
                return -EINVAL;
        *ret = t->type == VL_TOKEN_TRUE;
        return 0;
}

int vl_token_flag(const struct vl_token *tokens, uint32_t value, bool *ret)
{
        *ret = false;
        if (value == 0 || tokens[value].type == VL_TOKEN_NULL)
                return 0;
        return vl_token_bool(&tokens[value], ret) < 0 ? -EPROTO : 0;
}

int vl_token_get_u64(const char *text, const struct vl_token *tokens, size_t object,
                     const char *field, uint64_t *ret)
{
        int i = get_field(text, tokens, object, field, VL_TOKEN_NUMBER);

        return i < 0 ? i : vl_token_u64(text, &tokens[i], ret);
}

int vl_token_get_bool(const char *text, const struct vl_token *tokens, size_t object,
                      const char *field, bool *ret)
{
        int i = vl_token_member(text, tokens, object, field);

        if (i < 0 || tokens[i].type == VL_TOKEN_NULL)
                return -ENOENT;
        return vl_token_bool(&tokens[i], ret);
}

int vl_token_string(const char *text, const struct vl_token *t, char *buf, size_t size)
{
        size_t pos = t->start, end = t->start + t->len, n = 0;

        if (t->type != VL_TOKEN_STRING)
                return -EINVAL;
        if (!t->escaped) {
                /* No NUL in it: a raw one is a control character the tokenizer refused. */
                if (t->len >= size)
                        return -EINVAL;
                memcpy(buf, text + pos, t->len);
                buf[t->len] = 0;
                return 0;
        }
        while (pos < end) {
                char out[4];
                size_t k = unescape_one(text, end, &pos, out);

                /* A C string cannot hold "a\u0000b". */
                if (n + k >= size || memchr(out, 0, k))
                        return -EINVAL;
                memcpy(buf + n, out, k);
                n += k;
        }
        if (n >= size)
                return -EINVAL;
        buf[n] = 0;
        return 0;
}

int vl_token_get_string(const char *text, const struct vl_token *tokens, size_t object,
                        const char *field, char *buf, size_t size)
{
        int i = get_field(text, tokens, object, field, VL_TOKEN_STRING);

        return i < 0 ? i : vl_token_string(text, &tokens[i], buf, size);
}

/* An object or array field as its token's index. */
static int get_container(const char *text, const struct vl_token *tokens, size_t object,
                         const char *field, enum vl_token_type type, size_t *ret)
{
        int i = get_field(text, tokens, object, field, type);

        if (i < 0)
                return i;
        *ret = (size_t)i;
        return 0;
}

int vl_token_get_object(const char *text, const struct vl_token *tokens, size_t object,
                        const char *field, size_t *ret)
{
        return get_container(text, tokens, object, field, VL_TOKEN_OBJECT, ret);
}

int vl_token_get_array(const char *text, const struct vl_token *tokens, size_t object,
                       const char *field, size_t *ret)
{
        return get_container(text, tokens, object, field, VL_TOKEN_ARRAY, ret);
}
