/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Varlink messages as JSON: decoding calls (read in place: varlink/view.h) and replies
 * (varlink/json.h reads the text into a json-c tree), encoding them (one text writer), and reading
 * typed parameters with errors that name the parameter.
 */

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "varlink/frame.h"
#include "varlink/tokens.h"
#include "varlink/view.h"

#define VL_MAX_DEPTH_DEFAULT 16

struct vl_idl_method;

/*
 * What reading a call checks its parameters with while it scans them (varlink/reader.c): the
 * methods of an IDL (varlink/idl.h) and room for a call's field maps, n_maps >= 1.
 */
struct vl_call_check {
        const struct vl_idl_method *(*find)(const char *name, size_t len);
        struct vl_view_fields *maps;
        size_t n_maps;
};

/*
 * What a connection keeps from one message to the next so that it does not allocate it for each
 * (varlink/json.h): zeroed by vl_parser_init, made at the first parse.
 */
struct vl_parser {
        struct vl_tokens tokens;
        char *scratch;
        /* A call's own copy of its text (the reader's buffer moves on), its strings made in place.
         */
        char *text;
        size_t text_cap;
        const struct vl_call_check *check; /* NULL: calls are read unchecked */
};

void vl_parser_init(struct vl_parser *p);
void vl_parser_done(struct vl_parser *p);

/* A call read in place: valid until its parser's next message. */
struct vl_call {
        const char *method; /* "iface.Method" */
        size_t method_len;
        struct vl_view parameters;       /* an object, empty when absent or null */
        const struct vl_idl_method *idl; /* the method, when the parser's check knows it */
        /* The parameters were checked against idl's as scanned, their field maps made: they hold
         * nothing the IDL does not declare and no int beyond its range. Otherwise they are still
         * to check (params_check()). */
        bool checked;
        bool more;
        bool oneway;
        bool upgrade;
};

/*
 * Parse a call with p's buffers, allocating nothing once they have grown, in one pass over its
 * text (varlink/reader.c), and with p->check, look its method up and check its parameters as far as
 * the scan can vouch for them (struct vl_call: idl, checked). Returns 0, -EILSEQ for
 * text that is not valid UTF-8 (utf8.h: overlong forms, surrogates, lone surrogate escapes, code
 * points above U+10FFFF, cut-short sequences), -EBADMSG for text that is not JSON (or nests deeper
 * than max_depth), -EPROTO for JSON that is not a varlink call (no "method" that is a method name
 * of the varlink grammar, "parameters" not an object, "more"/"oneway" not booleans), -ENOMEM.
 */
int vl_call_parse_with(struct vl_parser *p, const char *msg, size_t len, int max_depth,
                       struct vl_call *ret);

/* Whether a name follows the varlink grammar: an interface ("io.timerd.Timer"), a method
 * ("io.timerd.Timer.List": an interface, a dot, [A-Z][A-Za-z0-9]*). */
bool vl_interface_name_valid(const char *name);
bool vl_method_name_valid(const char *method);

struct vl_reply {
        json_object *root;
        json_object *parameters; /* an object, possibly empty; NULL while only tokenized */
        const char *error;       /* the error name, NULL for a success reply or while tokenized */
        bool continues;
        /*
         * The reply as tokens (vl_reply_tokenize): its text, the parser's tokens, the index of its
         * parameters object (-1 when absent or null: {}). Valid until the parser's next message.
         */
        const char *text;
        const struct vl_token *tokens;
        int parameters_token;
        bool failed; /* an error reply */
};

/* Parse a reply. -EILSEQ (not valid UTF-8), -EBADMSG (not JSON), -EPROTO (not a reply), -ENOMEM. */
int vl_reply_parse(const char *msg, size_t len, int max_depth, struct vl_reply *ret);
int vl_reply_parse_with(struct vl_parser *p, const char *msg, size_t len, int max_depth,
                        struct vl_reply *ret);
void vl_reply_done(struct vl_reply *r);

/*
 * The first half of vl_reply_parse_with(), without a tree or an allocation once p's tokens have
 * grown: the same checks and errors; *ret has continues, failed and the token view.
 */
int vl_reply_tokenize(struct vl_parser *p, const char *msg, size_t len, int max_depth,
                      struct vl_reply *ret);
/* The second half: the tree of a tokenized reply (root, parameters, error). 0 or -ENOMEM. */
int vl_reply_tree(struct vl_parser *p, struct vl_reply *r);

/*
 * Encoding: one text writer for every message (calls, replies, errors), from a json-c tree or
 * field by field (struct vl_text below). Plain JSON, slashes as they are, keys in the order
 * they were added. Each takes ownership of `parameters` (may be NULL for {}), and returns a
 * malloc'd NUL-terminated string (caller frees) or NULL on allocation failure, also when a part of
 * the tree was lost to one (vl_add_* and vl_array_add mark the tree).
 */
char *vl_reply_encode(json_object *parameters, bool continues);
char *vl_error_encode(const char *error, json_object *parameters);
/* One JSON value as the messages write it; does not take it. */
char *vl_json_encode(json_object *value);

/*
 * A reply written field by field, without a tree: begin, add fields (objects and arrays nest),
 * end: the same bytes vl_reply_encode() makes of the tree with the fields added in that order.
 * Field names follow the varlink grammar `[A-Za-z](_?[A-Za-z0-9])*` and are written as they are;
 * a NULL field is an element of the array being written. String values are escaped. An
 * allocation failure is kept in `error` (every later call then writes nothing) and reported by
 * the end.
 */
struct vl_text {
        char *buf;
        size_t len, cap;
        bool need_comma; /* a field was written at this level */
        int error;
};
/* A text of its own. room: the bytes the whole reply may take, had at once, so that nothing after
 * the begin can fail when it fits. */
void vl_text_reply_begin(struct vl_text *t, bool continues, size_t room);
/* The end of a text of its own: the malloc'd NUL-terminated message, or NULL. */
char *vl_text_reply_end(struct vl_text *t);

/*
 * Writing in place: t goes on after the len bytes buf holds (cap allocated; buf is realloc'd as
 * the text grows, so the owner takes buf and cap back from t, also after a failure), with room
 * bytes had at once. A message written so ends with its NUL.
 */
void vl_text_attach(struct vl_text *t, char *buf, size_t len, size_t cap, size_t room);
/* A reply's head, its fields to follow; the close ends it: t->error. */
void vl_text_reply_head(struct vl_text *t, bool continues);
int vl_text_reply_close(struct vl_text *t);
/* A whole reply or error from a tree (taken; NULL for {}), as vl_reply_encode() and
 * vl_error_encode() write it: t->error. */
int vl_text_reply_tree(struct vl_text *t, json_object *parameters, bool continues);
int vl_text_error_tree(struct vl_text *t, const char *error, json_object *parameters);

void vl_text_object_begin(struct vl_text *t, const char *field);
void vl_text_object_end(struct vl_text *t);
void vl_text_array_begin(struct vl_text *t, const char *field);
void vl_text_array_end(struct vl_text *t);
void vl_text_add_string(struct vl_text *t, const char *field, const char *value);
void vl_text_add_u64(struct vl_text *t, const char *field, uint64_t value);
void vl_text_add_bool(struct vl_text *t, const char *field, bool value);

/*
 * A call written the same way, in place at the end of a writer's queue (no string of its own):
 * the bytes a tree of the same fields would make. Begin
 * writes the head ("parameters" last, its object open); fields follow as above; end closes the
 * call and queues it with its NUL: 0, t's error (-ENOMEM), -EMSGSIZE for a call of max_len
 * bytes or more, or vl_writer_append_end()'s -ENOBUFS, with nothing queued. Drop, instead of end,
 * queues nothing. Nothing else may use w in between.
 */
void vl_text_call_begin(struct vl_text *t, struct vl_writer *w, const char *method, bool more,
                        bool oneway);
int vl_text_call_end(struct vl_text *t, struct vl_writer *w, size_t max_len);
void vl_text_call_drop(struct vl_text *t, struct vl_writer *w);
/* A string element (n bytes: it need not end in a NUL) of the array being written. */
void vl_text_array_add_string(struct vl_text *t, const char *value, size_t n);
/* Each member of object obj as a field, its value as vl_json_encode() writes it: what a raw call
 * was given. Does not take obj. */
void vl_text_add_members(struct vl_text *t, json_object *obj);

/*
 * Typed parameter access. Each returns 0 and sets *ret when the field is present and of the right
 * type; -ENOENT when absent (the caller decides whether that is allowed: *ret untouched); -EINVAL
 * when present but of the wrong type or out of range. A JSON null counts as absent.
 */
int vl_get_string(json_object *obj, const char *field, const char **ret);
int vl_get_bool(json_object *obj, const char *field, bool *ret);
int vl_get_u64(json_object *obj, const char *field, uint64_t *ret); /* int >= 0 */
int vl_get_i64(json_object *obj, const char *field, int64_t *ret);
int vl_get_object(json_object *obj, const char *field, json_object **ret);
int vl_get_array(json_object *obj, const char *field, json_object **ret);

/*
 * Adding fields; each returns 0 or -ENOMEM. A failure (also a NULL value, whose allocation failed)
 * marks obj, and the encoders refuse a tree holding a marked object: a builder checks only that
 * its root was made. A NULL obj takes nothing and returns -ENOMEM.
 */
int vl_add_string(json_object *obj, const char *field, const char *value);
int vl_add_bool(json_object *obj, const char *field, bool value);
int vl_add_u64(json_object *obj, const char *field, uint64_t value);
int vl_add_i64(json_object *obj, const char *field, int64_t value);
int vl_add_object(json_object *obj, const char *field, json_object *value); /* takes value */
int vl_array_add(json_object *array, json_object *value);                   /* takes value */
