/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "varlink/tokens.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "varlink/utf8.h"

/* The parent of the root; while a container is open, its `next` holds its parent's index. */
#define NO_PARENT UINT32_MAX

struct cursor {
        const char *s;
        size_t len, pos;
};

static int peek(const struct cursor *c)
{
        return c->pos < c->len ? (unsigned char)c->s[c->pos] : -1;
}

static bool is_digit(int ch)
{
        return ch >= '0' && ch <= '9';
}

static bool is_space(char ch)
{
        return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r';
}

/* Most places have none: one test says so. */
static void skip_space(struct cursor *c)
{
        size_t pos = c->pos;

        while (pos < c->len && (unsigned char)c->s[pos] <= ' ' && is_space(c->s[pos]))
                pos++;
        c->pos = pos;
}

/* A \u escape after its backslash and u: a code unit, or a surrogate pair; -1 when it is neither
 * (a lone surrogate, bad hex digits). */
static int32_t unicode_escape(const char *s, size_t len, size_t *pos)
{
        long unit = vl_json_escaped_unit(s + *pos - 2, len - (*pos - 2)), low;

        if (unit < 0 || (unit >= 0xdc00 && unit <= 0xdfff))
                return -1;
        *pos += 4;
        if (unit < 0xd800 || unit > 0xdbff)
                return (int32_t)unit;
        low = vl_json_escaped_unit(s + *pos, len - *pos);
        if (low < 0xdc00 || low > 0xdfff)
                return -1;
        *pos += 6;
        return (int32_t)(0x10000 + ((unit - 0xd800) << 10) + (low - 0xdc00));
}

/* The character an escape letter stands for; 0 for u and for letters that are no escape. */
static char simple_escape(char letter)
{
        switch (letter) {
        case '"':
        case '\\':
        case '/':
                return letter;
        case 'b':
                return '\b';
        case 'f':
                return '\f';
        case 'n':
                return '\n';
        case 'r':
                return '\r';
        case 't':
                return '\t';
        default:
                return 0;
        }
}

/* Bytes a string's scan stops at: its end, an escape, a control character left raw, and any
 * byte of a multi-byte character, which has its own check. */
static bool string_special(unsigned char ch)
{
        return ch == '"' || ch == '\\' || ch < 0x20 || ch >= 0x80;
}

#define BYTES(b) (UINT64_C(0x0101010101010101) * (b))

/* A byte of x's below b (b <= 0x80), each at its high bit; above the lowest such byte the answer
 * may be wrong (a borrow), at and below it never. */
static uint64_t bytes_below(uint64_t x, uint8_t b)
{
        return (x - BYTES(b)) & ~x & BYTES(0x80);
}

/*
 * The plain bytes of a string from s up to end: where the first special one is, or end. Eight at
 * a time while eight are left: a call's strings are names, mostly plain and short, and a byte
 * at a time with its four tests was a fifth of the call's parsing.
 */
static const char *skip_plain(const char *s, const char *end)
{
        while (end - s >= 8) {
                uint64_t x, hit;

                memcpy(&x, s, sizeof(x));
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
                x = __builtin_bswap64(x); /* the first byte lowest, where a borrow cannot reach */
#endif
                /* Below 0x20 or from 0x80: bytes_below(x, 0x20) | (x & BYTES(0x80)), shorter. */
                hit = bytes_below(x ^ BYTES('"'), 1) | bytes_below(x ^ BYTES('\\'), 1) |
                      (((x - BYTES(0x20)) | x) & BYTES(0x80));
                if (hit)
                        return s + __builtin_ctzll(hit) / 8;
                s += 8;
        }
        while (s < end && !string_special((unsigned char)*s))
                s++;
        return s;
}

/* The string whose opening quote is at c->pos. Its place is kept in locals, not in *c, which
 * every store into *t would have to reread. */
static int scan_string(struct cursor *c, struct vl_token *t)
{
        const char *s = c->s, *end = s + c->len;
        size_t len = c->len, start = c->pos + 1, pos = start;
        bool escaped = false;

        for (;;) {
                unsigned char ch;

                pos = (size_t)(skip_plain(s + pos, end) - s);
                if (pos == len)
                        return -EBADMSG;
                ch = (unsigned char)s[pos];
                if (ch < 0x20) /* a control character left raw */
                        return -EBADMSG;
                if (ch >= 0x80) {
                        /* Checked here, in the one pass: outside strings it is no JSON anyway. */
                        size_t n = vl_utf8_sequence_length(s + pos, len - pos);

                        if (n == 0)
                                return -EBADMSG;
                        pos += n;
                        continue;
                }
                pos++;
                if (ch == '"')
                        break;
                escaped = true;
                if (pos == len)
                        return -EBADMSG;
                ch = (unsigned char)s[pos++];
                if (ch == 'u') {
                        if (unicode_escape(s, len, &pos) < 0)
                                return -EBADMSG;
                } else if (simple_escape((char)ch) == 0)
                        return -EBADMSG;
        }
        c->pos = pos;
        t->type = VL_TOKEN_STRING;
        t->escaped = escaped;
        t->start = (uint32_t)start;
        t->len = (uint32_t)(pos - 1 - start);
        return 0;
}

static int scan_digits(struct cursor *c)
{
        if (!is_digit(peek(c)))
                return -EBADMSG;
        while (is_digit(peek(c)))
                c->pos++;
        return 0;
}

static int scan_number(struct cursor *c, struct vl_token *t)
{
        size_t start = c->pos;

        t->type = VL_TOKEN_NUMBER;
        t->integer = true;
        c->pos += peek(c) == '-';
        /* No leading zeros: a 0 is the whole integer part. */
        if (peek(c) == '0')
                c->pos++;
        else if (scan_digits(c) < 0)
                return -EBADMSG;
        if (peek(c) == '.') {
                /* At least one digit after the point, though json-c takes "1." (RFC 8259 §6). */
                t->integer = false;
                c->pos++;
                if (scan_digits(c) < 0)
                        return -EBADMSG;
        }
        if (peek(c) == 'e' || peek(c) == 'E') {
                t->integer = false;
                c->pos++;
                if (peek(c) == '+' || peek(c) == '-')
                        c->pos++;
                if (scan_digits(c) < 0)
                        return -EBADMSG;
        }
        t->len = (uint32_t)(c->pos - start);
        return 0;
}

static int scan_literal(struct cursor *c, struct vl_token *t, const char *word,
                        enum vl_token_type type)
{
        size_t n = strlen(word);

        if (c->len - c->pos < n || memcmp(c->s + c->pos, word, n) != 0)
                return -EBADMSG;
        c->pos += n;
        t->type = (uint8_t)type;
        t->len = (uint32_t)n;
        return 0;
}

static int scan_scalar(struct cursor *c, struct vl_token *t)
{
        switch (peek(c)) {
        case '"':
                return scan_string(c, t);
        case 't':
                return scan_literal(c, t, "true", VL_TOKEN_TRUE);
        case 'f':
                return scan_literal(c, t, "false", VL_TOKEN_FALSE);
        case 'n':
                return scan_literal(c, t, "null", VL_TOKEN_NULL);
        default:
                return scan_number(c, t);
        }
}

struct tokenizer {
        struct cursor c;
        struct vl_token *tokens;
        size_t n, cap;
        uint32_t parent; /* the innermost open container */
        int depth;       /* containers open */
};

static struct vl_token *new_token(struct tokenizer *k)
{
        struct vl_token *t;

        if (k->n == k->cap)
                return NULL;
        t = &k->tokens[k->n++];
        *t = (struct vl_token){.start = (uint32_t)k->c.pos};
        return t;
}

/* A member's key and its colon, white space around them, at the open object. */
static int scan_key(struct tokenizer *k)
{
        struct vl_token *t;
        int r;

        if (peek(&k->c) != '"')
                return -EBADMSG;
        t = new_token(k);
        if (!t)
                return -ENOBUFS;
        r = scan_string(&k->c, t);
        if (r < 0)
                return r;
        t->next = (uint32_t)k->n;
        skip_space(&k->c);
        if (peek(&k->c) != ':')
                return -EBADMSG;
        k->c.pos++;
        skip_space(&k->c);
        return 0;
}

static char closing(const struct vl_token *container)
{
        return container->type == VL_TOKEN_OBJECT ? '}' : ']';
}

/* The innermost container's closing bracket, at c.pos. */
static void close_container(struct tokenizer *k)
{
        struct vl_token *t = &k->tokens[k->parent];

        k->c.pos++;
        t->len = (uint32_t)(k->c.pos - t->start);
        k->parent = t->next;
        t->next = (uint32_t)k->n;
        k->depth--;
}

/*
 * A value at c.pos. *ret_done: true when it is whole (a scalar, an empty container), false when a
 * container opened and a member or element follows.
 */
static int scan_value(struct tokenizer *k, bool *ret_done)
{
        struct vl_token *t;
        int ch = peek(&k->c);

        t = new_token(k);
        if (!t)
                return -ENOBUFS;
        *ret_done = true;
        if (ch != '{' && ch != '[') {
                int r = scan_scalar(&k->c, t);

                t->next = (uint32_t)k->n;
                return r;
        }
        t->type = ch == '{' ? VL_TOKEN_OBJECT : VL_TOKEN_ARRAY;
        t->next = k->parent;
        k->parent = (uint32_t)(k->n - 1);
        k->depth++;
        k->c.pos++;
        skip_space(&k->c);
        if (peek(&k->c) == closing(t)) {
                close_container(k);
                return 0;
        }
        *ret_done = false;
        return t->type == VL_TOKEN_OBJECT ? scan_key(k) : 0;
}

/* After a whole value inside the innermost container: a comma and the next one (*ret_more), or
 * the container's end. */
static int scan_after_value(struct tokenizer *k, bool *ret_more)
{
        struct vl_token *parent = &k->tokens[k->parent];

        skip_space(&k->c);
        parent->size++;
        *ret_more = peek(&k->c) == ',';
        if (*ret_more) {
                k->c.pos++;
                skip_space(&k->c);
                return parent->type == VL_TOKEN_OBJECT ? scan_key(k) : 0;
        }
        if (peek(&k->c) != closing(parent))
                return -EBADMSG;
        close_container(k);
        return 0;
}

int vl_tokenize(const char *text, size_t len, int max_depth, struct vl_token *tokens, size_t cap,
                size_t *ret_n)
{
        struct tokenizer k = {
            .c = {.s = text, .len = len}, .tokens = tokens, .cap = cap, .parent = NO_PARENT};
        bool done = false;
        int r = 0;

        if (max_depth < 1)
                return -EINVAL;
        if (len >= UINT32_MAX)
                return -EMSGSIZE;

        skip_space(&k.c);
        for (;;) {
                if (!done) {
                        /* The value about to be read is one deeper than the containers open. */
                        r = k.depth + 1 > max_depth ? -EBADMSG : scan_value(&k, &done);
                } else if (k.parent == NO_PARENT)
                        break;
                else {
                        bool more;

                        r = scan_after_value(&k, &more);
                        done = !more;
                }
                if (r < 0)
                        break;
        }
        skip_space(&k.c);
        if (r == 0 && k.c.pos != len)
                r = -EBADMSG;
        /* Text that is not UTF-8 is refused as that first, wherever the grammar broke. */
        if (r < 0 && !vl_json_text_valid(text, len))
                return -EILSEQ;
        if (r == 0)
                *ret_n = k.n;
        return r;
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

int vl_tokens_parse(struct vl_tokens *k, const char *text, size_t len, int max_depth)
{
        size_t bound = vl_tokens_bound(len);
        int r;

        k->n = 0;
        if ((k->cap > VL_TOKENS_KEPT && bound <= VL_TOKENS_KEPT) || !k->v) {
                r = tokens_resize(k, VL_TOKENS_KEPT);
                if (r < 0)
                        return r;
        }
        for (;;) {
                r = vl_tokenize(text, len, max_depth, k->v, k->cap, &k->n);
                if (r != -ENOBUFS || k->cap >= bound)
                        return r;
                /* Doubling: the bound is 20 bytes of tokens per byte of text, most need far less.
                 */
                r = tokens_resize(k, k->cap * 2 < bound ? k->cap * 2 : bound);
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
