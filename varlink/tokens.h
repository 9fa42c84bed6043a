/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * JSON text (RFC 8259, strictly) checked and cut into a flat array of tokens in one pass, in place:
 * no allocation, no copy, no locale. The reader of replies and trees: json.c builds json-c trees
 * from the tokens, libtimerd decodes replies straight from them. vl_tokenize() is one of the
 * readers of reader.c's loop: the service's calls are cut into the same tokens by the same loop,
 * which also makes their strings in place and checks them against the IDL as it goes. Strings are
 * unescaped on demand into the caller's buffer, integers read as int64/uint64 without strtod.
 *
 * Refused beyond what RFC 8259 refuses: text that is not strict UTF-8 (utf8.h: also lone
 * surrogate escapes, which RFC 8259 §8.2 leaves unpredictable), nesting deeper than the caller's
 * bound. Refused though json-c's strict mode takes it: see tests/varlink/json-c-agreement.c.
 * Duplicate keys are kept as tokens; vl_token_member() finds the last, as json-c keeps the last.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum vl_token_type {
        VL_TOKEN_NULL,
        VL_TOKEN_FALSE,
        VL_TOKEN_TRUE,
        VL_TOKEN_NUMBER,
        VL_TOKEN_STRING,
        VL_TOKEN_ARRAY,
        VL_TOKEN_OBJECT,
};

/*
 * A value, or an object's key. An object's tokens after its own are its members, each a key
 * (a string) and then its value; an array's are its elements.
 */
struct vl_token {
        uint32_t start; /* where its text begins: a string's after its opening quote */
        uint32_t len;   /* its text: a string's between its quotes, a container's with brackets */
        uint32_t next;  /* the index after it and everything inside it: its next sibling */
        uint32_t size;  /* members of an object, elements of an array; 0 otherwise */
        uint8_t type;   /* enum vl_token_type */
        bool escaped;   /* a string with a backslash in it: unescape before use */
        bool integer;   /* a number without fraction or exponent */
        bool nul;       /* a string value holding a NUL, once a view reader unescaped it */
};

/* Enough tokens for any text of len bytes, also one cut short: each starts at a byte of its own.
 * (A whole text needs half as many at most.) */
static inline size_t vl_tokens_bound(size_t len)
{
        return len + 1;
}

/*
 * Cut len bytes of text into tokens[0..*ret_n), the root first, nesting at most max_depth deep
 * (the root is 1, each value inside one more). -EILSEQ for text that is not strict UTF-8,
 * -EBADMSG for text that is not exactly one JSON value with optional white space around it,
 * -ENOBUFS when cap tokens are too few (vl_tokens_bound(len) are always enough), -EMSGSIZE for
 * text of 4 GiB or more, -EINVAL for max_depth < 1.
 */
int vl_tokenize(const char *text, size_t len, int max_depth, struct vl_token *tokens, size_t cap,
                size_t *ret_n);

/* A string token unescaped into buf, which has room for t->len + 1 bytes; NUL-terminated (it may
 * hold NULs too). Returns its length. */
size_t vl_token_unescape(const char *text, const struct vl_token *t, char *buf);

/* Whether string token t spells s (after unescaping), without copying it. */
bool vl_token_equals(const char *text, const struct vl_token *t, const char *s);

/*
 * A number token's integer as sign and magnitude: 0, -ERANGE when the magnitude is above
 * UINT64_MAX (*ret_magnitude is then UINT64_MAX), -EINVAL when t is not an integer number.
 */
int vl_token_integer(const char *text, const struct vl_token *t, bool *ret_negative,
                     uint64_t *ret_magnitude);

/*
 * The index of the value of object tokens[object]'s last member named key; -ENOENT when it has
 * none or is not an object.
 */
int vl_token_member(const char *text, const struct vl_token *tokens, size_t object,
                    const char *key);

/*
 * A token array kept from one message to the next (one per connection), so that parsing does not
 * allocate in the steady state: it grows for a message that needs more, and gives back what is
 * above VL_TOKENS_KEPT when a small message follows. Zeroed is empty.
 */
#define VL_TOKENS_KEPT 1024

struct vl_tokens {
        struct vl_token *v;
        size_t n, cap;
};

/* vl_tokenize() into k->v[0..k->n), or -ENOMEM when it could not grow. */
int vl_tokens_parse(struct vl_tokens *k, const char *text, size_t len, int max_depth);
/* For a reader that grows them itself (varlink/reader.c): k emptied, with the tokens kept for a
 * text of len bytes; and grown after a try with too few, towards vl_tokens_bound(len). 0 or
 * -ENOMEM. */
int vl_tokens_reserve(struct vl_tokens *k, size_t len);
int vl_tokens_grow(struct vl_tokens *k, size_t len);
void vl_tokens_done(struct vl_tokens *k);

/*
 * Typed fields of object tokens[object], read as vl_get_*() read a tree (varlink/message.h): 0
 * and *ret set when present and of the right type; -ENOENT when absent or null (*ret untouched);
 * -EINVAL when of the wrong type or out of range. A string also when it holds a NUL or does not
 * fit size bytes with its terminating NUL. An object or array as its token's index.
 */
int vl_token_get_u64(const char *text, const struct vl_token *tokens, size_t object,
                     const char *field, uint64_t *ret);
int vl_token_get_bool(const char *text, const struct vl_token *tokens, size_t object,
                      const char *field, bool *ret);
int vl_token_get_string(const char *text, const struct vl_token *tokens, size_t object,
                        const char *field, char *buf, size_t size);
int vl_token_get_object(const char *text, const struct vl_token *tokens, size_t object,
                        const char *field, size_t *ret);
int vl_token_get_array(const char *text, const struct vl_token *tokens, size_t object,
                       const char *field, size_t *ret);
/* Value token t as vl_token_get_u64() and vl_token_get_bool() read a field: 0, or -EINVAL for
 * another type or out of range. */
int vl_token_u64(const char *text, const struct vl_token *t, uint64_t *ret);
int vl_token_bool(const struct vl_token *t, bool *ret);
/* An envelope's flag (a call's `more`, a reply's `continues`) at tokens[value], value 0 when the
 * member is absent: absent or null is false, a boolean its value, anything else -EPROTO. */
int vl_token_flag(const struct vl_token *tokens, uint32_t value, bool *ret);
/* String token t as vl_token_get_string() reads a field: 0, or -EINVAL for another type, a NUL in
 * it, or more than size - 1 bytes. */
int vl_token_string(const char *text, const struct vl_token *t, char *buf, size_t size);
