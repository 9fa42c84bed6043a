/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A value of a message read in place from its tokens (tokens.h), with nothing built: the
 * service's calls. The getters read as vl_get_*() read a json-c tree (varlink/message.h). The text
 * is a copy the reader owns, whose strings the reader (varlink/reader.c) made C strings in place,
 * so that a string is handed out as a pointer into it. A call's fields are read by id from the map
 * its check made (struct vl_view_fields).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "varlink/tokens.h"

/*
 * An object's fields by id (enum vl_idl_field_id of varlink/idl.h), made as a call is read
 * (varlink/reader.c) or, for a call the reader could not vouch for, by the service's
 * params_check(): a handler reads each field at its place, never looking for its name among the
 * members again.
 */
#define VL_VIEW_FIELDS_MAX 64

struct vl_view_fields {
        uint64_t present;                   /* a bit for each field given, null too */
        uint32_t value[VL_VIEW_FIELDS_MAX]; /* a given field's value token: its last key's */
        /* A given field's value when it is an object with a map of its own; NULL otherwise. */
        const struct vl_view_fields *object[VL_VIEW_FIELDS_MAX];
};

struct vl_view {
        const char *text;
        const struct vl_token *tokens;       /* NULL: an empty object */
        size_t index;                        /* the value's token */
        const struct vl_view_fields *fields; /* an object's map, when one was made */
};

/*
 * JSON text read for views (what varlink/reader.c does for a call, without the call): msg's len
 * bytes copied into text (len + 1 bytes) and cut into tokens as vl_tokenize() cuts them, with its
 * errors, each string made a C string in place as it is scanned: unescaped, NUL-terminated where
 * its closing quote was (an unescaped string is never longer); a string's len is then its unescaped
 * length, a key cut at a NUL it holds, as a tree keeps it.
 */
int vl_view_read(const char *msg, size_t len, int max_depth, char *text, struct vl_token *tokens,
                 size_t cap, size_t *ret_n);

/* The value's type; an object for the empty view. */
enum vl_token_type vl_view_type(const struct vl_view *v);

/* The value as read from a field (below): 0, or -EINVAL when of another type or out of range (u64:
 * an int >= 0 below UINT64_MAX; a string: one holding a NUL). */
int vl_view_string(const struct vl_view *v, const char **ret);
int vl_view_u64(const struct vl_view *v, uint64_t *ret);
int vl_view_bool(const struct vl_view *v, bool *ret);

/* An array's first element, and the value after an element (while fewer than its size). */
struct vl_view vl_view_first(const struct vl_view *array);
struct vl_view vl_view_following(const struct vl_view *element);
/* An array's elements, an object's members. */
size_t vl_view_size(const struct vl_view *v);

/* An object's member named key, the last of duplicates: 0, or -ENOENT when absent or null. For
 * what has no field map (tests, benches). */
int vl_view_member(const struct vl_view *object, const char *key, struct vl_view *ret);

/*
 * Fields of an object with a field map (or the empty view), by id: 0 and *ret set when present and
 * of the right type; -ENOENT when absent or null (*ret untouched); -EINVAL when of the wrong type
 * or out of range, as the value readers above. An object field's view carries its own map.
 */
int vl_view_field(const struct vl_view *object, unsigned field, struct vl_view *ret);
int vl_view_get_string(const struct vl_view *object, unsigned field, const char **ret);
int vl_view_get_bool(const struct vl_view *object, unsigned field, bool *ret);
int vl_view_get_u64(const struct vl_view *object, unsigned field, uint64_t *ret);
int vl_view_get_object(const struct vl_view *object, unsigned field, struct vl_view *ret);
int vl_view_get_array(const struct vl_view *object, unsigned field, struct vl_view *ret);
