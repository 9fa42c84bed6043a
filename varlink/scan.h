/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The scanners of JSON text (RFC 8259, strictly): reader.c's loop scans with them, and tokens.c
 * unescapes strings with their escape readers. Internal to varlink/.
 */

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "varlink/tokens.h"
#include "varlink/utf8.h"

/* The parent of the root; while a container is open, its `next` holds its parent's index. */
#define NO_PARENT UINT32_MAX

/*
 * The scanners take the text (s, len) and a place in it by value and return the place after what
 * they read, 0 for text that is no JSON there (nothing ends at 0): kept in registers, not in a
 * struct that every store into a token would make the compiler reread (-fno-strict-aliasing).
 */

static inline int peek(const char *s, size_t len, size_t pos)
{
        return pos < len ? (unsigned char)s[pos] : -1;
}

static inline bool is_digit(int ch)
{
        return ch >= '0' && ch <= '9';
}

static inline bool is_space(char ch)
{
        return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r';
}

/* Most places have none: one test says so. */
static inline size_t skip_space(const char *s, size_t len, size_t pos)
{
        while (pos < len && (unsigned char)s[pos] <= ' ' && is_space(s[pos]))
                pos++;
        return pos;
}

/* A \u escape after its backslash and u: a code unit, or a surrogate pair; -1 when it is neither
 * (a lone surrogate, bad hex digits). */
static inline int32_t unicode_escape(const char *s, size_t len, size_t *pos)
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
static inline char simple_escape(char letter)
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
static inline bool string_special(unsigned char ch)
{
        return ch == '"' || ch == '\\' || ch < 0x20 || ch >= 0x80;
}

#define BYTES(b) (UINT64_C(0x0101010101010101) * (b))

/* A byte of x's below b (b <= 0x80), each at its high bit; above the lowest such byte the answer
 * may be wrong (a borrow), at and below it never. */
static inline uint64_t bytes_below(uint64_t x, uint8_t b)
{
        return (x - BYTES(b)) & ~x & BYTES(0x80);
}

/*
 * The plain bytes of a string from s up to end: where the first special one is, or end. Eight at
 * a time while eight are left: a call's strings are names, mostly plain and short, and a byte
 * at a time with its four tests was a fifth of the call's parsing.
 */
static inline const char *skip_plain(const char *s, const char *end)
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

/* The string whose opening quote is at pos. */
static inline size_t scan_string(const char *s, size_t len, size_t pos, struct vl_token *t)
{
        const char *end = s + len;
        size_t start = pos + 1;
        bool escaped = false;

        pos = start;
        for (;;) {
                unsigned char ch;

                pos = (size_t)(skip_plain(s + pos, end) - s);
                if (pos == len)
                        return 0;
                ch = (unsigned char)s[pos];
                if (ch < 0x20) /* a control character left raw */
                        return 0;
                if (ch >= 0x80) {
                        /* Checked here, in the one pass: outside strings it is no JSON anyway. */
                        size_t n = vl_utf8_sequence_length(s + pos, len - pos);

                        if (n == 0)
                                return 0;
                        pos += n;
                        continue;
                }
                pos++;
                if (ch == '"')
                        break;
                escaped = true;
                if (pos == len)
                        return 0;
                ch = (unsigned char)s[pos++];
                if (ch == 'u') {
                        if (unicode_escape(s, len, &pos) < 0)
                                return 0;
                } else if (simple_escape((char)ch) == 0)
                        return 0;
        }
        t->type = VL_TOKEN_STRING;
        t->escaped = escaped;
        t->start = (uint32_t)start;
        t->len = (uint32_t)(pos - 1 - start);
        return pos;
}

static inline size_t scan_digits(const char *s, size_t len, size_t pos)
{
        if (!is_digit(peek(s, len, pos)))
                return 0;
        while (is_digit(peek(s, len, pos)))
                pos++;
        return pos;
}

static inline size_t scan_number(const char *s, size_t len, size_t pos, struct vl_token *t)
{
        size_t start = pos;

        t->type = VL_TOKEN_NUMBER;
        t->integer = true;
        pos += peek(s, len, pos) == '-';
        /* No leading zeros: a 0 is the whole integer part. */
        if (peek(s, len, pos) == '0')
                pos++;
        else if ((pos = scan_digits(s, len, pos)) == 0)
                return 0;
        if (peek(s, len, pos) == '.') {
                /* At least one digit after the point, though json-c takes "1." (RFC 8259 §6). */
                t->integer = false;
                if ((pos = scan_digits(s, len, pos + 1)) == 0)
                        return 0;
        }
        if (peek(s, len, pos) == 'e' || peek(s, len, pos) == 'E') {
                t->integer = false;
                pos++;
                if (peek(s, len, pos) == '+' || peek(s, len, pos) == '-')
                        pos++;
                if ((pos = scan_digits(s, len, pos)) == 0)
                        return 0;
        }
        t->len = (uint32_t)(pos - start);
        return pos;
}

static inline size_t scan_literal(const char *s, size_t len, size_t pos, struct vl_token *t,
                                  const char *word, enum vl_token_type type)
{
        size_t n = strlen(word);

        if (len - pos < n || memcmp(s + pos, word, n) != 0)
                return 0;
        t->type = (uint8_t)type;
        t->len = (uint32_t)n;
        return pos + n;
}

static inline __attribute__((always_inline)) size_t scan_scalar(const char *s, size_t len,
                                                                size_t pos, struct vl_token *t)
{
        switch (peek(s, len, pos)) {
        case '"':
                return scan_string(s, len, pos, t);
        case 't':
                return scan_literal(s, len, pos, t, "true", VL_TOKEN_TRUE);
        case 'f':
                return scan_literal(s, len, pos, t, "false", VL_TOKEN_FALSE);
        case 'n':
                return scan_literal(s, len, pos, t, "null", VL_TOKEN_NULL);
        default:
                return scan_number(s, len, pos, t);
        }
}

static inline char closing(const struct vl_token *container)
{
        return container->type == VL_TOKEN_OBJECT ? '}' : ']';
}

/* A member's key at pos and its colon, white space around them, into tokens[*n]: the place after
 * them, 0 for no JSON there or -ENOBUFS when tokens are cap already. */
static inline long scan_key(const char *s, size_t len, size_t pos, struct vl_token *tokens,
                            size_t *n, size_t cap)
{
        struct vl_token *t;

        if (peek(s, len, pos) != '"')
                return 0;
        if (*n == cap)
                return -ENOBUFS;
        t = &tokens[(*n)++];
        *t = (struct vl_token){0};
        pos = scan_string(s, len, pos, t);
        if (pos == 0)
                return 0;
        t->next = (uint32_t)*n;
        pos = skip_space(s, len, pos);
        if (peek(s, len, pos) != ':')
                return 0;
        return (long)skip_space(s, len, pos + 1);
}
