/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A value of a message read in place from its tokens (tokens.h), with nothing built: the
 * service's calls. The getters read as vl_get_*() read a json-c tree (varlink/message.h). The text
 * is a copy the reader owns, whose strings vl_view_prepare() made C strings in place, so that a
 * string is handed out as a pointer into it.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "varlink/tokens.h"

struct vl_view {
        const char *text;
        const struct vl_token *tokens; /* NULL: an empty object */
        size_t index;                  /* the value's token */
};

/*
 * Every string of tokens[0..n) made a C string in place, once, before any view reads them:
 * unescaped, NUL-terminated where its closing quote was (an unescaped string is never longer).
 * A string's len is then its unescaped length; a key is cut at a NUL it holds, as a tree keeps it.
 */
void vl_view_prepare(char *text, struct vl_token *tokens, size_t n);

/* The value's type; an object for the empty view. */
enum vl_token_type vl_view_type(const struct vl_view *v);

/* The value as a C string: 0, or -EINVAL when it is no string or holds a NUL. */
int vl_view_string(const struct vl_view *v, const char **ret);

/* An array's first element, and the value after an element (while fewer than its size). */
struct vl_view vl_view_first(const struct vl_view *array);
struct vl_view vl_view_following(const struct vl_view *element);
/* An array's elements, an object's members. */
size_t vl_view_size(const struct vl_view *v);

/*
 * Fields of an object: 0 and *ret set when present and of the right type; -ENOENT when absent or
 * null (*ret untouched); -EINVAL when of the wrong type or out of range (u64: an int >= 0 below
 * UINT64_MAX; a string also when it holds a NUL). The last of duplicate keys counts.
 */
int vl_view_get(const struct vl_view *object, const char *field, struct vl_view *ret);
int vl_view_get_string(const struct vl_view *object, const char *field, const char **ret);
int vl_view_get_bool(const struct vl_view *object, const char *field, bool *ret);
int vl_view_get_u64(const struct vl_view *object, const char *field, uint64_t *ret);
int vl_view_get_object(const struct vl_view *object, const char *field, struct vl_view *ret);
int vl_view_get_array(const struct vl_view *object, const char *field, struct vl_view *ret);
