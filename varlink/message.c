/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "varlink/message.h"
#include "varlink/json.h"
#include "varlink/scan.h"

void vl_parser_init(struct vl_parser *p)
{
        *p = (struct vl_parser){0};
}

void vl_parser_done(struct vl_parser *p)
{
        vl_tokens_done(&p->tokens);
        free(p->scratch);
        free(p->text);
        *p = (struct vl_parser){0};
}

static int get_field(json_object *obj, const char *field, json_type type, json_object **ret)
{
        json_object *v;

        if (!json_object_object_get_ex(obj, field, &v) || json_object_is_type(v, json_type_null))
                return -ENOENT;
        if (!json_object_is_type(v, type))
                return -EINVAL;
        *ret = v;
        return 0;
}

/*
 * What a tree that lost a part to a failed allocation carries (as its json-c userdata, which no
 * object or array uses otherwise): the writer refuses it, so a builder need not check each field
 * it adds, only that the tree it made exists.
 */
static const char failed_mark;

static int mark_failed(json_object *obj)
{
        if (obj)
                json_object_set_userdata(obj, (void *)&failed_mark, NULL);
        return -ENOMEM;
}

static bool marked_failed(json_object *obj)
{
        return json_object_get_userdata(obj) == &failed_mark;
}

/* Takes value, NULL when its allocation failed. */
static int add_field(json_object *obj, const char *field, json_object *value)
{
        if (!obj) {
                json_object_put(value);
                return -ENOMEM;
        }
        if (!value)
                return mark_failed(obj);
        if (json_object_object_add(obj, field, value) < 0) {
                json_object_put(value);
                return mark_failed(obj);
        }
        return 0;
}

/* An absent (or null) flag is false; anything but a boolean is a protocol error. */
static int get_flag(json_object *root, const char *field, bool *ret)
{
        int r = vl_get_bool(root, field, ret);

        if (r == -ENOENT) {
                *ret = false;
                return 0;
        }
        return r < 0 ? -EPROTO : 0;
}

/* "parameters" of a message; absent (or null) means {}, allocated here and owned by root. */
static int get_parameters(json_object *root, json_object **ret)
{
        json_object *parameters;
        int r;

        r = get_field(root, "parameters", json_type_object, &parameters);
        if (r == -EINVAL)
                return -EPROTO;
        if (r == -ENOENT) {
                parameters = json_object_new_object();
                r = add_field(root, "parameters", parameters);
                if (r < 0)
                        return r;
        }
        *ret = parameters;
        return 0;
}

static int reply_from_json(json_object *root, struct vl_reply *ret)
{
        struct vl_reply reply = {.root = root};
        int r;

        if (!json_object_is_type(root, json_type_object))
                return -EPROTO;
        r = vl_get_string(root, "error", &reply.error);
        if (r == -EINVAL || (r == 0 && reply.error[0] == 0))
                return -EPROTO;
        r = get_parameters(root, &reply.parameters);
        if (r < 0)
                return r;
        r = get_flag(root, "continues", &reply.continues);
        if (r < 0)
                return r;

        *ret = reply;
        return 0;
}

/* The members of a reply's envelope. */
enum reply_member {
        REPLY_ERROR,
        REPLY_PARAMETERS,
        REPLY_CONTINUES,
        _REPLY_MAX,
};

static const char *const reply_member_names[_REPLY_MAX] = {
    [REPLY_ERROR] = "error",
    [REPLY_PARAMETERS] = "parameters",
    [REPLY_CONTINUES] = "continues",
};

/*
 * Each member's value token, 0 when absent (as a call's envelope has them), found in one pass over
 * the root's keys as vl_token_member() finds one (by the unescaped name, the last of duplicates,
 * other keys ignored): three look-ups, each with its strlen and its own pass, were a third of
 * reading a short reply. Plain keys are told apart by their length, then compared with a name of
 * that length.
 */
static void reply_members(const char *text, const struct vl_token *t, uint32_t ret[_REPLY_MAX])
{
        size_t i = 1;

        for (int m = 0; m < _REPLY_MAX; m++)
                ret[m] = 0;
        for (uint32_t n = 0; n < t[0].size; n++, i = t[i + 1].next) {
                const struct vl_token *k = &t[i];
                const char *key = text + k->start;
                int m = _REPLY_MAX;

                if (k->escaped) {
                        for (m = 0; m < _REPLY_MAX; m++)
                                if (vl_token_equals(text, k, reply_member_names[m]))
                                        break;
                } else if (k->len == 5)
                        m = memcmp(key, "error", 5) == 0 ? REPLY_ERROR : _REPLY_MAX;
                else if (k->len == 9)
                        m = memcmp(key, "continues", 9) == 0 ? REPLY_CONTINUES : _REPLY_MAX;
                else if (k->len == 10)
                        m = memcmp(key, "parameters", 10) == 0 ? REPLY_PARAMETERS : _REPLY_MAX;
                if (m < _REPLY_MAX)
                        ret[m] = (uint32_t)(i + 1);
        }
}

int vl_reply_tokenize(struct vl_parser *p, const char *msg, size_t len, int max_depth,
                      struct vl_reply *ret)
{
        struct vl_reply reply = {.text = msg, .parameters_token = -1};
        const struct vl_token *t;
        uint32_t i, member[_REPLY_MAX];
        int r;

        if (max_depth < 1)
                return -EINVAL;
        if (len > INT_MAX)
                return -EMSGSIZE;
        r = vl_tokens_parse(&p->tokens, msg, len, max_depth);
        if (r < 0)
                return r;
        reply.tokens = t = p->tokens.v;
        if (t[0].type != VL_TOKEN_OBJECT)
                return -EPROTO;
        reply_members(msg, t, member);
        /* The error name's other checks (no NUL in it) are the tree's, which every error gets. */
        i = member[REPLY_ERROR];
        if (i > 0 && t[i].type != VL_TOKEN_NULL) {
                if (t[i].type != VL_TOKEN_STRING || t[i].len == 0)
                        return -EPROTO;
                reply.failed = true;
        }
        i = member[REPLY_PARAMETERS];
        if (i > 0 && t[i].type != VL_TOKEN_NULL) {
                if (t[i].type != VL_TOKEN_OBJECT)
                        return -EPROTO;
                reply.parameters_token = (int)i;
        }
        r = vl_token_flag(t, member[REPLY_CONTINUES], &reply.continues);
        if (r < 0)
                return r;
        *ret = reply;
        return 0;
}

int vl_reply_tree(struct vl_parser *p, struct vl_reply *r)
{
        struct vl_reply tree;
        json_object *root;
        int e;

        e = vl_json_tree(p, r->text, r->tokens[0].len, r->tokens, 0, &root);
        if (e < 0)
                return e;
        e = reply_from_json(root, &tree);
        if (e < 0) {
                json_object_put(root);
                return e;
        }
        r->root = tree.root;
        r->parameters = tree.parameters;
        r->error = tree.error;
        return 0;
}

int vl_reply_parse_with(struct vl_parser *p, const char *msg, size_t len, int max_depth,
                        struct vl_reply *ret)
{
        struct vl_reply reply;
        int r;

        r = vl_reply_tokenize(p, msg, len, max_depth, &reply);
        if (r < 0)
                return r;
        r = vl_reply_tree(p, &reply);
        if (r < 0)
                return r;
        *ret = reply;
        return 0;
}

int vl_reply_parse(const char *msg, size_t len, int max_depth, struct vl_reply *ret)
{
        struct vl_parser p;

        vl_parser_init(&p);
        int r = vl_reply_parse_with(&p, msg, len, max_depth, ret);
        vl_parser_done(&p);
        return r;
}

void vl_reply_done(struct vl_reply *r)
{
        json_object_put(r->root);
        *r = (struct vl_reply){0};
}

static bool ascii_letter(char c)
{
        return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

static bool ascii_alnum(char c)
{
        return ascii_letter(c) || (c >= '0' && c <= '9');
}

/* varlink's [A-Za-z]([-]*[A-Za-z0-9])*(\.[A-Za-z0-9]([-]*[A-Za-z0-9])*)+ over s[0..len). */
static bool interface_name_valid(const char *s, size_t len)
{
        size_t parts = 0;

        for (size_t i = 0;; i++) {
                if (i >= len || !ascii_alnum(s[i]) || (parts == 0 && !ascii_letter(s[i])))
                        return false;
                while (i + 1 < len && (ascii_alnum(s[i + 1]) || s[i + 1] == '-'))
                        i++;
                if (s[i] == '-')
                        return false;
                parts++;
                if (i + 1 == len)
                        return parts >= 2;
                if (s[++i] != '.')
                        return false;
        }
}

bool vl_interface_name_valid(const char *name)
{
        return interface_name_valid(name, strlen(name));
}

bool vl_method_name_valid(const char *method)
{
        const char *dot = strrchr(method, '.');

        if (!dot || !interface_name_valid(method, (size_t)(dot - method)) ||
            !(dot[1] >= 'A' && dot[1] <= 'Z'))
                return false;
        for (const char *c = dot + 2; *c; c++)
                if (!ascii_alnum(*c))
                        return false;
        return true;
}

/* Room for n more bytes at t->buf + t->len. */
static int text_reserve(struct vl_text *t, size_t n)
{
        if (t->cap - t->len >= n)
                return 0;
        size_t cap = t->cap > 0 ? t->cap : 256;
        char *buf;

        while (cap - t->len < n) {
                if (cap > SIZE_MAX / 2)
                        return -ENOMEM;
                cap *= 2;
        }
        buf = realloc(t->buf, cap);
        if (!buf)
                return -ENOMEM;
        t->buf = buf;
        t->cap = cap;
        return 0;
}

static int text_add(struct vl_text *t, const char *s, size_t n)
{
        int r = text_reserve(t, n);
        if (r < 0)
                return r;
        memcpy(t->buf + t->len, s, n);
        t->len += n;
        return 0;
}

/*
 * A JSON string as json-c writes it with JSON_C_TO_STRING_NOSLASHESCAPE. The plain runs between
 * the bytes to escape are found eight bytes at a time (scan.h's skip_plain(), which also stops at
 * bytes from 0x80, written as they are) and copied whole into room had once for a string with no
 * escape: names are most of the strings, and a byte at a time with a switch was most of writing a
 * call.
 */
static int text_add_string(struct vl_text *t, const char *s, size_t n)
{
        static const char hex[] = "0123456789abcdef";
        const char *end = s + n;
        /* Room for what is left of s as it is and the closing quote, from here on. */
        int r = text_reserve(t, n + 2);

        if (r < 0)
                return r;
        t->buf[t->len++] = '"';
        for (;;) {
                const char *p = skip_plain(s, end);

                while (p < end && (unsigned char)*p >= 0x80)
                        p = skip_plain(p + 1, end);
                memcpy(t->buf + t->len, s, (size_t)(p - s));
                t->len += (size_t)(p - s);
                if (p == end)
                        break;
                r = text_reserve(t, 6 + (size_t)(end - p));
                if (r < 0)
                        return r;
                unsigned char c = (unsigned char)*p;
                char *o = t->buf + t->len;

                *o++ = '\\';
                switch (c) {
                case '\b':
                        *o++ = 'b';
                        break;
                case '\n':
                        *o++ = 'n';
                        break;
                case '\r':
                        *o++ = 'r';
                        break;
                case '\t':
                        *o++ = 't';
                        break;
                case '\f':
                        *o++ = 'f';
                        break;
                case '"':
                case '\\':
                        *o++ = (char)c;
                        break;
                default: /* below 0x20 */
                        memcpy(o, "u00", 3);
                        o[3] = hex[c >> 4];
                        o[4] = hex[c & 0xf];
                        o += 5;
                        break;
                }
                t->len = (size_t)(o - t->buf);
                s = p + 1;
        }
        t->buf[t->len++] = '"';
        return 0;
}

/* Decimal, two digits a step, without snprintf's format parsing: numbers are most of a reply's
 * fields. */
static int text_add_u64(struct vl_text *t, uint64_t v)
{
        static const char pairs[201] = "00010203040506070809101112131415161718192021222324"
                                       "25262728293031323334353637383940414243444546474849"
                                       "50515253545556575859606162636465666768697071727374"
                                       "75767778798081828384858687888990919293949596979899";
        char num[20];
        size_t i = sizeof(num);

        for (; v >= 100; v /= 100) {
                i -= 2;
                memcpy(num + i, pairs + 2 * (v % 100), 2);
        }
        if (v >= 10) {
                i -= 2;
                memcpy(num + i, pairs + 2 * v, 2);
        } else
                num[--i] = (char)('0' + v);
        return text_add(t, num + i, sizeof(num) - i);
}

static int text_add_value(struct vl_text *t, json_object *v)
{
        char num[24];
        int r;

        switch (json_object_get_type(v)) {
        case json_type_null:
                return text_add(t, "null", 4);
        case json_type_boolean:
                return json_object_get_boolean(v) ? text_add(t, "true", 4)
                                                  : text_add(t, "false", 5);
        case json_type_int: {
                /* Held as int64, or as uint64 above INT64_MAX (then read as INT64_MAX). */
                int64_t i = json_object_get_int64(v);
                if (i >= 0)
                        return text_add_u64(t, json_object_get_uint64(v));
                int n = snprintf(num, sizeof(num), "%" PRId64, i);
                return text_add(t, num, (size_t)n);
        }
        case json_type_string:
                return text_add_string(t, json_object_get_string(v),
                                       (size_t)json_object_get_string_len(v));
        case json_type_object: {
                bool first = true;

                if (marked_failed(v))
                        return -ENOMEM;
                r = text_add(t, "{", 1);
                json_object_object_foreach(v, key, value)
                {
                        if (r == 0 && !first)
                                r = text_add(t, ",", 1);
                        if (r == 0)
                                r = text_add_string(t, key, strlen(key));
                        if (r == 0)
                                r = text_add(t, ":", 1);
                        if (r == 0)
                                r = text_add_value(t, value);
                        first = false;
                }
                return r == 0 ? text_add(t, "}", 1) : r;
        }
        case json_type_array: {
                size_t n = json_object_array_length(v);

                if (marked_failed(v))
                        return -ENOMEM;
                r = text_add(t, "[", 1);
                for (size_t i = 0; i < n && r == 0; i++) {
                        if (i > 0)
                                r = text_add(t, ",", 1);
                        if (r == 0)
                                r = text_add_value(t, json_object_array_get_idx(v, i));
                }
                return r == 0 ? text_add(t, "]", 1) : r;
        }
        case json_type_double:
        default: {
                /* Never made by timerd, only passed on (a raw call): json-c keeps the number's
                 * text as the client wrote it. */
                size_t len;
                const char *s = json_object_to_json_string_length(
                    v, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &len);

                return s ? text_add(t, s, len) : -ENOMEM;
        }
        }
}

char *vl_json_encode(json_object *value)
{
        struct vl_text t = {0};

        if (text_add_value(&t, value) < 0 || text_add(&t, "", 1) < 0) {
                free(t.buf);
                return NULL;
        }
        return t.buf;
}

/*
 * The rest of a message after its head: "parameters" (taken; NULL for {}), the closing brace and
 * the NUL. The one way every message is written: calls, replies and errors, from a tree or field
 * by field below; keys in the order json-c would keep them.
 */
static int message_tail(struct vl_text *t, json_object *parameters)
{
        int r = t->error;

        if (r == 0)
                r = text_add(t, "\"parameters\":", strlen("\"parameters\":"));
        if (r == 0)
                r = parameters ? text_add_value(t, parameters) : text_add(t, "{}", 2);
        if (r == 0)
                r = text_add(t, "}", 2);
        json_object_put(parameters);
        t->error = r;
        return r;
}

/* A message written alone: its malloc'd text, or NULL. */
static char *message_end(struct vl_text *t, json_object *parameters)
{
        if (message_tail(t, parameters) < 0) {
                free(t->buf);
                return NULL;
        }
        return t->buf;
}

static void text_head(struct vl_text *t, const char *head)
{
        if (t->error == 0)
                t->error = text_add(t, head, strlen(head));
}

static void text_error_head(struct vl_text *t, const char *error)
{
        assert(error);
        text_head(t, "{\"error\":");
        if (t->error == 0)
                t->error = text_add_string(t, error, strlen(error));
        text_head(t, ",");
}

/* Every answer: the envelope around the parameters written as text straight from the tree. */
char *vl_reply_encode(json_object *parameters, bool continues)
{
        struct vl_text t = {0};

        text_head(&t, continues ? "{\"continues\":true," : "{");
        return message_end(&t, parameters);
}

char *vl_error_encode(const char *error, json_object *parameters)
{
        struct vl_text t = {0};

        text_error_head(&t, error);
        return message_end(&t, parameters);
}

int vl_text_reply_tree(struct vl_text *t, json_object *parameters, bool continues)
{
        text_head(t, continues ? "{\"continues\":true," : "{");
        return message_tail(t, parameters);
}

int vl_text_error_tree(struct vl_text *t, const char *error, json_object *parameters)
{
        text_error_head(t, error);
        return message_tail(t, parameters);
}

void vl_text_attach(struct vl_text *t, char *buf, size_t len, size_t cap, size_t room)
{
        *t = (struct vl_text){.buf = buf, .len = len, .cap = cap};
        t->error = text_reserve(t, room);
}

/* Field names follow the varlink grammar: nothing in them to escape. NULL: an array's element. */
static void text_field(struct vl_text *t, const char *field)
{
        size_t n = field ? strlen(field) : 0;

        if (t->error == 0)
                t->error = text_reserve(t, n + 4);
        if (t->error < 0)
                return;
        char *o = t->buf + t->len;
        if (t->need_comma)
                *o++ = ',';
        if (field) {
                *o++ = '"';
                memcpy(o, field, n);
                o += n;
                *o++ = '"';
                *o++ = ':';
        }
        t->len = (size_t)(o - t->buf);
        t->need_comma = true;
}

void vl_text_reply_head(struct vl_text *t, bool continues)
{
        text_head(t, continues ? "{\"continues\":true,\"parameters\":{" : "{\"parameters\":{");
        t->need_comma = false;
}

void vl_text_reply_begin(struct vl_text *t, bool continues, size_t room)
{
        vl_text_attach(t, NULL, 0, 0, room);
        vl_text_reply_head(t, continues);
}

static void text_open(struct vl_text *t, const char *field, const char *bracket)
{
        text_field(t, field);
        if (t->error == 0)
                t->error = text_add(t, bracket, 1);
        t->need_comma = false;
}

static void text_close(struct vl_text *t, const char *bracket)
{
        if (t->error == 0)
                t->error = text_add(t, bracket, 1);
        t->need_comma = true;
}

void vl_text_object_begin(struct vl_text *t, const char *field)
{
        text_open(t, field, "{");
}

void vl_text_object_end(struct vl_text *t)
{
        text_close(t, "}");
}

void vl_text_array_begin(struct vl_text *t, const char *field)
{
        text_open(t, field, "[");
}

void vl_text_array_end(struct vl_text *t)
{
        text_close(t, "]");
}

void vl_text_add_string(struct vl_text *t, const char *field, const char *value)
{
        text_field(t, field);
        if (t->error == 0)
                t->error = text_add_string(t, value, strlen(value));
}

void vl_text_add_u64(struct vl_text *t, const char *field, uint64_t value)
{
        text_field(t, field);
        if (t->error == 0)
                t->error = text_add_u64(t, value);
}

void vl_text_add_bool(struct vl_text *t, const char *field, bool value)
{
        text_field(t, field);
        if (t->error == 0)
                t->error = value ? text_add(t, "true", 4) : text_add(t, "false", 5);
}

int vl_text_reply_close(struct vl_text *t)
{
        if (t->error == 0)
                t->error = text_add(t, "}}", 3);
        return t->error;
}

char *vl_text_reply_end(struct vl_text *t)
{
        if (vl_text_reply_close(t) < 0) {
                free(t->buf);
                *t = (struct vl_text){.error = -ENOMEM};
                return NULL;
        }
        return t->buf;
}

void vl_text_call_begin(struct vl_text *t, struct vl_writer *w, const char *method, bool more,
                        bool oneway)
{
        static const char more_flag[] = ",\"more\":true", oneway_flag[] = ",\"oneway\":true",
                          parameters[] = ",\"parameters\":{";

        assert(method);
        uint64_t position;

        *t = (struct vl_text){0};
        vl_writer_append_begin(w, &t->buf, &t->len, &t->cap, &position);
        t->error = text_add(t, "{\"method\":", strlen("{\"method\":"));
        if (t->error == 0)
                t->error = text_add_string(t, method, strlen(method));
        if (t->error == 0 && more)
                t->error = text_add(t, more_flag, sizeof(more_flag) - 1);
        if (t->error == 0 && oneway)
                t->error = text_add(t, oneway_flag, sizeof(oneway_flag) - 1);
        if (t->error == 0)
                t->error = text_add(t, parameters, sizeof(parameters) - 1);
}

void vl_text_call_drop(struct vl_text *t, struct vl_writer *w)
{
        (void)vl_writer_append_end(w, t->buf, w->len, t->cap);
        *t = (struct vl_text){.error = -ENOMEM};
}

int vl_text_call_end(struct vl_text *t, struct vl_writer *w, size_t max_len)
{
        int r = t->error;

        if (r == 0)
                r = text_add(t, "}}", 3);
        /* Its length without the NUL. */
        if (r == 0 && t->len - w->len - 1 >= max_len)
                r = -EMSGSIZE;
        if (r < 0)
                vl_text_call_drop(t, w);
        else if ((r = vl_writer_append_end(w, t->buf, t->len, t->cap)) < 0)
                /* Given back and dropped by the writer. */
                *t = (struct vl_text){.error = -ENOMEM};
        return r;
}

void vl_text_array_add_string(struct vl_text *t, const char *value, size_t n)
{
        text_field(t, NULL);
        if (t->error == 0)
                t->error = text_add_string(t, value, n);
}

void vl_text_add_members(struct vl_text *t, json_object *obj)
{
        if (t->error == 0 && marked_failed(obj))
                t->error = -ENOMEM;
        json_object_object_foreach(obj, key, value)
        {
                /* A name the client chose: escaped, unlike text_field()'s. */
                if (t->error == 0 && t->need_comma)
                        t->error = text_add(t, ",", 1);
                if (t->error == 0)
                        t->error = text_add_string(t, key, strlen(key));
                if (t->error == 0)
                        t->error = text_add(t, ":", 1);
                if (t->error == 0)
                        t->error = text_add_value(t, value);
                t->need_comma = true;
        }
}

int vl_get_string(json_object *obj, const char *field, const char **ret)
{
        json_object *v;
        int r;

        r = get_field(obj, field, json_type_string, &v);
        if (r < 0)
                return r;
        const char *s = json_object_get_string(v);
        /* "a\u0000b" would otherwise be read as "a": a C string cannot hold it. */
        if (strlen(s) != (size_t)json_object_get_string_len(v))
                return -EINVAL;
        *ret = s;
        return 0;
}

int vl_get_bool(json_object *obj, const char *field, bool *ret)
{
        json_object *v;
        int r;

        r = get_field(obj, field, json_type_boolean, &v);
        if (r < 0)
                return r;
        *ret = json_object_get_boolean(v);
        return 0;
}

/*
 * json-c saturates integers out of range to INT64_MIN or UINT64_MAX without telling; those two
 * values are refused as out of range because they cannot be told from an overflow. Values above
 * INT64_MAX are held as unsigned: get_int64 reads them as INT64_MAX, get_uint64 exactly.
 */
int vl_get_u64(json_object *obj, const char *field, uint64_t *ret)
{
        json_object *v;
        uint64_t u;
        int r;

        r = get_field(obj, field, json_type_int, &v);
        if (r < 0)
                return r;
        if (json_object_get_int64(v) < 0)
                return -EINVAL;
        u = json_object_get_uint64(v);
        if (u == UINT64_MAX)
                return -EINVAL;
        *ret = u;
        return 0;
}

int vl_get_i64(json_object *obj, const char *field, int64_t *ret)
{
        json_object *v;
        int64_t i;
        int r;

        r = get_field(obj, field, json_type_int, &v);
        if (r < 0)
                return r;
        i = json_object_get_int64(v);
        if (i == INT64_MIN || (i == INT64_MAX && json_object_get_uint64(v) != (uint64_t)INT64_MAX))
                return -EINVAL;
        *ret = i;
        return 0;
}

int vl_get_object(json_object *obj, const char *field, json_object **ret)
{
        return get_field(obj, field, json_type_object, ret);
}

int vl_get_array(json_object *obj, const char *field, json_object **ret)
{
        return get_field(obj, field, json_type_array, ret);
}

int vl_add_string(json_object *obj, const char *field, const char *value)
{
        assert(value);
        return add_field(obj, field, json_object_new_string(value));
}

int vl_add_bool(json_object *obj, const char *field, bool value)
{
        return add_field(obj, field, json_object_new_boolean(value));
}

int vl_add_u64(json_object *obj, const char *field, uint64_t value)
{
        return add_field(obj, field, json_object_new_uint64(value));
}

int vl_add_i64(json_object *obj, const char *field, int64_t value)
{
        return add_field(obj, field, json_object_new_int64(value));
}

int vl_add_object(json_object *obj, const char *field, json_object *value)
{
        return add_field(obj, field, value);
}

int vl_array_add(json_object *array, json_object *value)
{
        if (!array) {
                json_object_put(value);
                return -ENOMEM;
        }
        if (!value)
                return mark_failed(array);
        if (json_object_array_add(array, value) < 0) {
                json_object_put(value);
                return mark_failed(array);
        }
        return 0;
}
