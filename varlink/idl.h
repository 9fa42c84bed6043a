/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The varlink interface descriptions the service publishes, embedded verbatim from the .varlink
 * files at build time (embed-idl.py), for org.varlink.service.GetInfo and
 * GetInterfaceDescription, and the parameters each method declares, so that calls are checked
 * against the IDL itself. Linked by the service only (varlink_idl_dep).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "varlink/tokens.h"

#include "varlink/idl-ids.h" /* generated: the ids of interfaces, methods and field names */

/* The description of a qualified interface name ("io.timerd.Timer"); NULL when it is not ours. */
const char *vl_idl_lookup(const char *interface);

/* Every interface served, org.varlink.service first; NULL-terminated. */
extern const char *const vl_idl_interfaces[];

/* What a value of a field is, as far as checking a call needs: an int (range), a struct
 * (its fields), or anything else (the method's handler checks it). */
enum vl_idl_kind {
        VL_IDL_OTHER,
        VL_IDL_INT,
        VL_IDL_STRUCT,
};

struct vl_idl_struct;

/* One field of a struct or of a method's parameters; of an array ([]T), kind is the elements'. */
struct vl_idl_field {
        const char *name;
        size_t len;              /* of name */
        uint64_t words[2];       /* vl_idl_name_words() of name */
        enum vl_idl_field_id id; /* its name's: where a call's field map keeps its value */
        enum vl_idl_kind kind;
        bool array;
        const struct vl_idl_struct *fields; /* of a struct; NULL otherwise */
};

/* What a struct may have at most (embed-idl.py refuses more): a bit each in a uint64_t. */
#define VL_IDL_FIELDS_MAX 64

struct vl_idl_struct {
        size_t n_fields;
        const struct vl_idl_field *fields;
};

/* A name's first and last 8 bytes, overlapping when it is shorter than 16 (of one of 4 to 7 bytes
 * its first and last 4, of a shorter one its first, middle and last byte), read as little-endian
 * words: two names of the same length up to 16 bytes are equal when their words are, without a
 * memcmp. embed-idl.py writes each field's. */
static inline uint64_t vl_idl_load_word(const char *s, size_t n)
{
        uint64_t w = 0;

        if (n == 8) {
                memcpy(&w, s, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
                w = __builtin_bswap64(w);
#endif
        } else {
                uint32_t h;

                memcpy(&h, s, 4);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
                h = __builtin_bswap32(h);
#endif
                w = h;
        }
        return w;
}

static inline void vl_idl_name_words(const char *s, size_t len, uint64_t ret[2])
{
        if (len >= 8) {
                ret[0] = vl_idl_load_word(s, 8);
                ret[1] = vl_idl_load_word(s + len - 8, 8);
        } else if (len >= 4) {
                ret[0] = vl_idl_load_word(s, 4);
                ret[1] = vl_idl_load_word(s + len - 4, 4);
        } else {
                ret[0] = len == 0 ? 0
                                  : (uint64_t)(unsigned char)s[0] |
                                        (uint64_t)(unsigned char)s[len / 2] << 8 |
                                        (uint64_t)(unsigned char)s[len - 1] << 16;
                ret[1] = 0;
        }
}

/* The index in type->fields of the field key names (len bytes, as a call's reader keeps a key: cut
 * at a NUL it holds); type->n_fields when none. */
static inline size_t vl_idl_field_index(const struct vl_idl_struct *type, const char *key,
                                        size_t len)
{
        uint64_t w[2];
        size_t f = 0;

        vl_idl_name_words(key, len, w);
        for (; f < type->n_fields; f++) {
                const struct vl_idl_field *field = &type->fields[f];

                if (field->len == len && field->words[0] == w[0] && field->words[1] == w[1] &&
                    (len <= 16 || memcmp(field->name + 8, key + 8, len - 16) == 0))
                        break;
        }
        return f;
}

/* Whether a number token is a value an int of the IDL takes: a signed 64-bit integer, of which
 * INT64_MIN is refused too (a json-c tree could not tell it from a number beyond, saturated). */
static inline bool vl_idl_int_in_range(const char *text, const struct vl_token *t)
{
        uint64_t magnitude;
        bool negative;

        /* 18 digits are below 10^18 < INT64_MAX: most ints need no reading here (the handler
         * reads them again). */
        if (t->type == VL_TOKEN_NUMBER && t->integer && t->len - (text[t->start] == '-') <= 18)
                return true;
        return vl_token_integer(text, t, &negative, &magnitude) == 0 &&
               magnitude <= (uint64_t)INT64_MAX;
}

/* A method the IDL declares. */
struct vl_idl_method {
        const char *name; /* qualified: "io.timerd.Timer.Get" */
        size_t len;       /* of name */
        enum vl_idl_method_id id;
        enum vl_idl_interface_id interface;
        const struct vl_idl_struct *parameters; /* as its IDL declares them */
};

/* Every method, indexed by its id. */
extern const struct vl_idl_method vl_idl_methods[_VL_IDL_METHOD_MAX];

/* The method whose qualified name is the len bytes at name (no NUL needed); NULL when it is not
 * one of ours, a prefix or an extension of one included. */
const struct vl_idl_method *vl_idl_method_find(const char *name, size_t len);
