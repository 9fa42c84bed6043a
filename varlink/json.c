/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "varlink/json.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A parser keeps a scratch buffer this large from one message to the next; a larger message gets
 * one of its own. */
#define SCRATCH_KEPT 4096

struct reader {
        const char *s;
        size_t len, pos;
        int max_depth;
        /*
         * Where strings are decoded: the keys on the path to the value being read, then that value.
         * Each decodes to no more than its text (quotes included) takes, so len + 1 bytes are room
         * for all of them.
         */
        char *scratch;
        size_t used;
};

static int peek(const struct reader *r)
{
        return r->pos < r->len ? (unsigned char)r->s[r->pos] : -1;
}

static bool is_digit(int c)
{
        return c >= '0' && c <= '9';
}

static void skip_space(struct reader *r)
{
        int c;

        while ((c = peek(r)) == ' ' || c == '\t' || c == '\n' || c == '\r')
                r->pos++;
}

/* Four hex digits at r->pos. */
static int read_hex4(struct reader *r, uint32_t *ret)
{
        uint32_t v = 0;

        if (r->len - r->pos < 4)
                return -EBADMSG;
        for (int i = 0; i < 4; i++) {
                char c = r->s[r->pos++];
                uint32_t d;

                if (c >= '0' && c <= '9')
                        d = (uint32_t)(c - '0');
                else if (c >= 'a' && c <= 'f')
                        d = (uint32_t)(c - 'a' + 10);
                else if (c >= 'A' && c <= 'F')
                        d = (uint32_t)(c - 'A' + 10);
                else
                        return -EBADMSG;
                v = v * 16 + d;
        }
        *ret = v;
        return 0;
}

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

/* A \u escape after its backslash and u: a code unit, or a surrogate pair. */
static int read_unicode_escape(struct reader *r, uint32_t *ret)
{
        uint32_t unit, low;

        if (read_hex4(r, &unit) < 0)
                return -EBADMSG;
        if (unit >= 0xdc00 && unit <= 0xdfff)
                return -EBADMSG;
        if (unit < 0xd800 || unit > 0xdbff) {
                *ret = unit;
                return 0;
        }
        if (r->len - r->pos < 2 || r->s[r->pos] != '\\' || r->s[r->pos + 1] != 'u')
                return -EBADMSG;
        r->pos += 2;
        if (read_hex4(r, &low) < 0 || low < 0xdc00 || low > 0xdfff)
                return -EBADMSG;
        *ret = 0x10000 + ((unit - 0xd800) << 10) + (low - 0xdc00);
        return 0;
}

/* The string whose opening quote is at r->pos, decoded into the scratch buffer at r->used and
 * NUL-terminated; *ret_len is its length (it may hold NULs). */
static int read_string(struct reader *r, char **ret, size_t *ret_len)
{
        char *out = r->scratch + r->used, *o = out;

        r->pos++;
        for (;;) {
                int c = peek(r);
                uint32_t cp;

                if (c < 0x20) /* the end, or a control character left raw */
                        return -EBADMSG;
                r->pos++;
                if (c == '"')
                        break;
                if (c != '\\') {
                        *o++ = (char)c;
                        continue;
                }
                c = peek(r);
                r->pos++;
                switch (c) {
                case '"':
                case '\\':
                case '/':
                        *o++ = (char)c;
                        break;
                case 'b':
                        *o++ = '\b';
                        break;
                case 'f':
                        *o++ = '\f';
                        break;
                case 'n':
                        *o++ = '\n';
                        break;
                case 'r':
                        *o++ = '\r';
                        break;
                case 't':
                        *o++ = '\t';
                        break;
                case 'u':
                        if (read_unicode_escape(r, &cp) < 0)
                                return -EBADMSG;
                        o += put_utf8(o, cp);
                        break;
                default:
                        return -EBADMSG;
                }
        }
        *o = 0;
        *ret = out;
        *ret_len = (size_t)(o - out);
        return 0;
}

/* Digits, at least one. */
static int skip_digits(struct reader *r)
{
        if (!is_digit(peek(r)))
                return -EBADMSG;
        while (is_digit(peek(r)))
                r->pos++;
        return 0;
}

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

static int read_number(struct reader *r, json_object **ret)
{
        size_t start = r->pos;
        bool negative = peek(r) == '-', integer = true, overflow = false;
        uint64_t magnitude = 0;

        r->pos += negative;
        if (!is_digit(peek(r)))
                return -EBADMSG;
        /* No leading zeros: a 0 is the whole integer part. */
        while (is_digit(peek(r)) && (magnitude > 0 || r->pos == start + negative)) {
                unsigned d = (unsigned)(peek(r) - '0');

                if (magnitude > (UINT64_MAX - d) / 10)
                        overflow = true;
                else
                        magnitude = magnitude * 10 + d;
                r->pos++;
        }
        if (peek(r) == '.') {
                /* json-c takes "1." too: so does this, to refuse nothing it took. */
                integer = false;
                r->pos++;
                while (is_digit(peek(r)))
                        r->pos++;
        }
        if (peek(r) == 'e' || peek(r) == 'E') {
                integer = false;
                r->pos++;
                if (peek(r) == '+' || peek(r) == '-')
                        r->pos++;
                if (skip_digits(r) < 0)
                        return -EBADMSG;
        }
        if (integer)
                *ret = integer_json(negative, magnitude, overflow);
        else {
                /* Kept with its text, as json-c keeps a number it reads. */
                char *text = r->scratch + r->used;
                size_t n = r->pos - start;

                memcpy(text, r->s + start, n);
                text[n] = 0;
                *ret = json_object_new_double_s(strtod(text, NULL), text);
        }
        return *ret ? 0 : -ENOMEM;
}

static int read_literal(struct reader *r, const char *word)
{
        size_t n = strlen(word);

        if (r->len - r->pos < n || memcmp(r->s + r->pos, word, n) != 0)
                return -EBADMSG;
        r->pos += n;
        return 0;
}

static int read_value(struct reader *r, int depth, json_object **ret);

/* After a member or element: the next one (true), or the end of the container (false). */
static int read_separator(struct reader *r, char close, bool *ret_more)
{
        skip_space(r);
        if (peek(r) == ',') {
                r->pos++;
                skip_space(r);
                *ret_more = true;
                return 0;
        }
        if (peek(r) != close)
                return -EBADMSG;
        r->pos++;
        *ret_more = false;
        return 0;
}

static int read_member(struct reader *r, int depth, json_object *obj)
{
        size_t mark = r->used, key_len;
        json_object *v = NULL;
        char *key;
        int e;

        if (peek(r) != '"')
                return -EBADMSG;
        e = read_string(r, &key, &key_len);
        if (e < 0)
                return e;
        /* The key stays put while the value is read after it. */
        r->used += key_len + 1;
        skip_space(r);
        if (peek(r) != ':')
                e = -EBADMSG;
        else {
                r->pos++;
                skip_space(r);
                e = read_value(r, depth + 1, &v);
        }
        r->used = mark;
        if (e == 0 && json_object_object_add(obj, key, v) < 0) {
                json_object_put(v);
                e = -ENOMEM;
        }
        return e;
}

static int read_element(struct reader *r, int depth, json_object *array)
{
        json_object *v = NULL;
        int e = read_value(r, depth + 1, &v);

        if (e == 0 && json_object_array_add(array, v) < 0) {
                json_object_put(v);
                e = -ENOMEM;
        }
        return e;
}

/* An object or an array, its opening bracket at r->pos. */
static int read_container(struct reader *r, int depth, bool object, json_object **ret)
{
        json_object *c = object ? json_object_new_object() : json_object_new_array();
        char close = object ? '}' : ']';
        bool more = true;
        int e = c ? 0 : -ENOMEM;

        r->pos++;
        skip_space(r);
        if (e == 0 && peek(r) == close) {
                r->pos++;
                more = false;
        }
        while (e == 0 && more) {
                e = object ? read_member(r, depth, c) : read_element(r, depth, c);
                if (e == 0)
                        e = read_separator(r, close, &more);
        }
        if (e < 0) {
                json_object_put(c);
                return e;
        }
        *ret = c;
        return 0;
}

static int read_value(struct reader *r, int depth, json_object **ret)
{
        char *s;
        size_t n;
        int e;

        *ret = NULL;
        if (depth > r->max_depth)
                return -EBADMSG;
        switch (peek(r)) {
        case '{':
        case '[':
                return read_container(r, depth, peek(r) == '{', ret);
        case '"':
                e = read_string(r, &s, &n);
                if (e < 0)
                        return e;
                *ret = json_object_new_string_len(s, (int)n);
                return *ret ? 0 : -ENOMEM;
        case 't':
        case 'f': {
                bool value = peek(r) == 't';

                e = read_literal(r, value ? "true" : "false");
                if (e < 0)
                        return e;
                *ret = json_object_new_boolean(value);
                return *ret ? 0 : -ENOMEM;
        }
        case 'n':
                return read_literal(r, "null");
        default:
                return read_number(r, ret);
        }
}

int vl_json_parse(struct vl_parser *p, const char *msg, size_t len, int max_depth,
                  json_object **ret)
{
        struct reader r = {.s = msg, .len = len, .max_depth = max_depth};
        json_object *v;
        int e;

        if (len >= SCRATCH_KEPT)
                r.scratch = malloc(len + 1);
        else {
                if (!p->scratch)
                        p->scratch = malloc(SCRATCH_KEPT);
                r.scratch = p->scratch;
        }
        if (!r.scratch)
                return -ENOMEM;

        skip_space(&r);
        e = read_value(&r, 1, &v);
        skip_space(&r);
        if (e == 0 && r.pos != r.len) {
                json_object_put(v);
                e = -EBADMSG;
        }
        if (r.scratch != p->scratch)
                free(r.scratch);
        if (e == 0)
                *ret = v;
        return e;
}
