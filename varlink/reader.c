/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * The one loop that reads JSON text, with the scanners of scan.h, for three readers:
 * vl_tokenize() cuts any text into tokens (replies, trees); vl_view_read() also makes each string a
 * C string in place as it is scanned; and vl_call_parse_with() reads a call: its envelope's
 * members found as their keys are, the method looked up in the IDL when its name is scanned, and,
 * when the method came before the parameters (as every client writes it), the parameters checked
 * against the method's IDL as they are scanned: each key matched to its field id and placed in the
 * field map, each int range-checked as it is read. A call the scan cannot vouch for (a key no field
 * declares, an int out of range, a second "method", parameters before the method) is left
 * unchecked, and the service's params_check() walks it after: the walk names the parameter an
 * error reply names, by its rules (fields in the order of their first keys, the value of the last).
 * The loop is inlined into each reader, so that vl_tokenize() carries none of the call's work.
 */

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "varlink/idl.h"
#include "varlink/message.h"
#include "varlink/names.h"
#include "varlink/scan.h"
#include "varlink/utf8.h"

/* The members of a call's envelope: each one's last value token, 0 when not given. */
enum envelope_member {
        ENVELOPE_METHOD,
        ENVELOPE_PARAMETERS,
        ENVELOPE_MORE,
        ENVELOPE_ONEWAY,
        ENVELOPE_UPGRADE,
        _ENVELOPE_MAX,
};

static enum envelope_member envelope_member_of(const char *key, size_t len)
{
        switch (len) {
        case 4:
                return memcmp(key, "more", 4) == 0 ? ENVELOPE_MORE : _ENVELOPE_MAX;
        case 6:
                return memcmp(key, "method", 6) == 0   ? ENVELOPE_METHOD
                       : memcmp(key, "oneway", 6) == 0 ? ENVELOPE_ONEWAY
                                                       : _ENVELOPE_MAX;
        case 7:
                return memcmp(key, "upgrade", 7) == 0 ? ENVELOPE_UPGRADE : _ENVELOPE_MAX;
        case 10:
                return memcmp(key, "parameters", 10) == 0 ? ENVELOPE_PARAMETERS : _ENVELOPE_MAX;
        default:
                return _ENVELOPE_MAX;
        }
}

/* What an open container is to the check. */
enum frame_kind {
        FRAME_NONE,     /* not checked: nothing in it is */
        FRAME_ENVELOPE, /* the call's root object */
        FRAME_STRUCT,   /* an object of the parameters, checked against its struct */
        FRAME_INTS,     /* an array of an int field: its elements range-checked */
};

struct frame {
        enum frame_kind kind;
        const struct vl_idl_struct *type; /* FRAME_STRUCT's */
        struct vl_view_fields *map;       /* FRAME_STRUCT's */
        const struct vl_idl_field *field; /* the member being read (FRAME_INTS: the array's) */
        enum envelope_member member;      /* FRAME_ENVELOPE's member being read */
};

/* The root, the parameters, the structs a call's maps hold, an array of ints in the last: deeper
 * containers are never checked. */
#define FRAMES (VL_IDL_OBJECTS_MAX + 3)

/* A call's scan, as far as the check and the envelope need it. */
struct scan {
        bool call;                         /* false: any JSON, no envelope */
        const struct vl_call_check *check; /* NULL: the call read unchecked */
        uint32_t member[_ENVELOPE_MAX];
        const struct vl_idl_method *method; /* of the last "method" scanned */
        size_t n_maps;
        bool parameters_checked; /* the parameters' object was checked as scanned */
        bool unchecked;          /* something the scan does not vouch for: params_check() will */
        int checking;            /* the open containers that are checked: frame[1..checking] */
        struct frame *frame;     /* scan()'s, each written as its container opens */
};

/* A string made a C string in place (unescaping writes behind what it reads); its len then the
 * unescaped one. Only an escape ("\\u0000") can put a NUL in it. */
static void string_finish(char *text, struct vl_token *t)
{
        if (!t->escaped) {
                text[t->start + t->len] = 0;
                return;
        }
        t->len = (uint32_t)vl_token_unescape(text, t, text + t->start);
        t->escaped = false;
        t->nul = memchr(text + t->start, 0, t->len) != NULL;
}

/* A key is cut at a NUL it holds, as a tree keeps it. */
static void key_finish(char *text, struct vl_token *t)
{
        string_finish(text, t);
        if (t->nul) {
                t->len = (uint32_t)strlen(text + t->start);
                t->nul = false;
        }
}

/* Key tokens[k] of the checked container at frame f; its value will be token k + 1. */
static inline __attribute__((always_inline)) void
on_key(struct scan *sc, struct frame *f, const char *text, const struct vl_token *k, uint32_t value)
{
        const struct vl_idl_field *field;
        size_t i;

        if (f->kind == FRAME_ENVELOPE) {
                f->member = envelope_member_of(text + k->start, k->len);
                if (f->member == _ENVELOPE_MAX)
                        return;
                /* Parameters checked against the method of a first "method" may not be the last's.
                 */
                if (sc->member[f->member] != 0 && f->member == ENVELOPE_METHOD)
                        sc->unchecked = true;
                sc->member[f->member] = value;
                return;
        }
        if (sc->unchecked)
                return;
        i = vl_idl_field_index(f->type, text + k->start, k->len);
        if (i == f->type->n_fields) {
                sc->unchecked = true;
                return;
        }
        /* A duplicate takes the place of the one before, as the walk keeps the last: a value the
         * scan refused or whose map it made stays refused or spent, which only sends the call to
         * the walk. */
        field = &f->type->fields[i];
        f->field = field;
        f->map->value[field->id] = value;
        f->map->object[field->id] = NULL;
        f->map->present |= UINT64_C(1) << field->id;
}

/* The frame of container tokens[v], opened inside frame `up` (NULL for the root); FRAME_NONE when
 * it is not checked. */
static inline __attribute__((always_inline)) struct frame
open_frame(struct scan *sc, const struct frame *up, const struct vl_token *t)
{
        const struct vl_idl_field *field;
        struct frame f = {.kind = FRAME_NONE};

        if (!up) {
                if (t->type == VL_TOKEN_OBJECT)
                        f.kind = FRAME_ENVELOPE;
                return f;
        }
        if (up->kind == FRAME_ENVELOPE) {
                if (up->member != ENVELOPE_PARAMETERS || t->type != VL_TOKEN_OBJECT ||
                    !sc->method || sc->unchecked)
                        return f;
                sc->parameters_checked = true;
                sc->n_maps = 1;
                f = (struct frame){.kind = FRAME_STRUCT,
                                   .type = sc->method->parameters,
                                   .map = &sc->check->maps[0]};
                f.map->present = 0;
                return f;
        }
        if (up->kind != FRAME_STRUCT || sc->unchecked)
                return f;
        field = up->field;
        if (t->type == VL_TOKEN_ARRAY) {
                if (field->array && field->kind == VL_IDL_INT)
                        f = (struct frame){.kind = FRAME_INTS, .field = field};
                return f;
        }
        if (field->kind != VL_IDL_STRUCT)
                return f;
        if (sc->n_maps == sc->check->n_maps) {
                sc->unchecked = true;
                return f;
        }
        f = (struct frame){
            .kind = FRAME_STRUCT, .type = field->fields, .map = &sc->check->maps[sc->n_maps++]};
        f.map->present = 0;
        up->map->object[field->id] = f.map;
        return f;
}

/* Container t opened at depth (1 for the root) inside a checked one, or as the root. */
static inline __attribute__((always_inline)) void open_checked(struct scan *sc, int depth,
                                                               const struct vl_token *t)
{
        /* The IDL's structs nest no deeper than the maps a call holds (embed-idl.py). */
        if (depth > FRAMES) {
                sc->unchecked = true;
                return;
        }
        sc->frame[depth] = open_frame(sc, depth > 1 ? &sc->frame[depth - 1] : NULL, t);
        if (sc->frame[depth].kind != FRAME_NONE)
                sc->checking = depth;
}

/* Scalar token t, a value inside the checked container at frame f. */
static inline __attribute__((always_inline)) void
on_scalar(struct scan *sc, const struct frame *f, const char *text, const struct vl_token *t)
{
        const struct vl_idl_field *field = f->field;

        if (f->kind == FRAME_ENVELOPE) {
                if (f->member == ENVELOPE_METHOD && sc->check)
                        sc->method = t->type == VL_TOKEN_STRING && !t->nul
                                         ? sc->check->find(text + t->start, t->len)
                                         : NULL;
                return;
        }
        if (sc->unchecked || (f->kind != FRAME_STRUCT && f->kind != FRAME_INTS))
                return;
        if (field->kind == VL_IDL_INT && t->type == VL_TOKEN_NUMBER && t->integer &&
            !vl_idl_int_in_range(text, t))
                sc->unchecked = true;
}

/*
 * Text (len bytes) into tokens[0..*ret_n); in_place, with a NUL after it and writable, its strings
 * made C strings as vl_view_read() says; with sc->call, the call's envelope, and with sc->check its
 * check. -EBADMSG for text that is no JSON (the caller tells -EILSEQ from the original text: the
 * strings made in place are no longer it), -ENOBUFS.
 */
static inline __attribute__((always_inline)) int scan(char *text, size_t len, int max_depth,
                                                      struct vl_token *tokens, size_t cap,
                                                      size_t *ret_n, struct scan *sc, bool in_place)
{
        struct frame frames[FRAMES + 1] = {
            0}; /* each written as it opens: zeroed for the compiler, which cannot tell */
        uint32_t parent = NO_PARENT;
        int depth = 0;
        size_t n = 0, pos;
        long next = 0;

        sc->frame = frames;
        pos = skip_space(text, len, 0);
        for (;;) {
                struct vl_token *t, *up;
                int ch = peek(text, len, pos);

                if (depth + 1 > max_depth)
                        return -EBADMSG;
                if (n == cap)
                        return -ENOBUFS;
                t = &tokens[n++];
                *t = (struct vl_token){.start = (uint32_t)pos};
                if (ch == '{' || ch == '[') {
                        t->type = ch == '{' ? VL_TOKEN_OBJECT : VL_TOKEN_ARRAY;
                        t->next = parent;
                        parent = (uint32_t)(n - 1);
                        depth++;
                        if (sc->call && sc->checking == depth - 1)
                                open_checked(sc, depth, t);
                        pos = skip_space(text, len, pos + 1);
                        if (peek(text, len, pos) != closing(t)) {
                                if (t->type == VL_TOKEN_ARRAY)
                                        continue;
                                goto key;
                        }
                } else {
                        pos = scan_scalar(text, len, pos, t);
                        t->next = (uint32_t)n;
                        if (pos == 0)
                                return -EBADMSG;
                        if (in_place && t->type == VL_TOKEN_STRING)
                                string_finish(text, t);
                        if (sc->checking == depth && depth > 0)
                                on_scalar(sc, &sc->frame[depth], text, t);
                        if (parent == NO_PARENT)
                                break;
                        goto after_value;
                }
                for (;;) {
                        up = &tokens[parent];
                        pos++;
                        up->len = (uint32_t)(pos - up->start);
                        parent = up->next;
                        up->next = (uint32_t)n;
                        if (sc->checking == depth)
                                sc->checking--;
                        depth--;
                        if (parent == NO_PARENT)
                                goto done;
                after_value:
                        up = &tokens[parent];
                        pos = skip_space(text, len, pos);
                        up->size++;
                        if (peek(text, len, pos) == ',')
                                break;
                        if (peek(text, len, pos) != closing(up))
                                return -EBADMSG;
                }
                pos = skip_space(text, len, pos + 1);
                if (up->type != VL_TOKEN_OBJECT)
                        continue;
        key:
                if ((next = scan_key(text, len, pos, tokens, &n, cap)) <= 0)
                        return next < 0 ? (int)next : -EBADMSG;
                pos = (size_t)next;
                if (in_place)
                        key_finish(text, &tokens[n - 1]);
                if (sc->checking == depth)
                        on_key(sc, &sc->frame[depth], text, &tokens[n - 1], (uint32_t)n);
        }
done:
        pos = skip_space(text, len, pos);
        if (pos != len)
                return -EBADMSG;
        *ret_n = n;
        return 0;
}

/* What vl_tokenize() refuses before it reads. */
static int scan_refused(size_t len, int max_depth)
{
        if (max_depth < 1)
                return -EINVAL;
        return len >= UINT32_MAX ? -EMSGSIZE : 0;
}

/* A scan's error as vl_tokenize() returns it: text that is not UTF-8 is refused as that first,
 * wherever the grammar broke. msg is the text as it came, before any string was made in place. */
static int scan_error(int r, const char *msg, size_t len)
{
        return r < 0 && !vl_json_text_valid(msg, len) ? -EILSEQ : r;
}

int vl_tokenize(const char *text, size_t len, int max_depth, struct vl_token *tokens, size_t cap,
                size_t *ret_n)
{
        struct scan sc = {0};
        int r = scan_refused(len, max_depth);

        if (r < 0)
                return r;
        /* Not in place: the text is only read. */
        r = scan((char *)text, len, max_depth, tokens, cap, ret_n, &sc, false);
        return scan_error(r, text, len);
}

/* scan() in place of a copy of msg into text (len + 1 bytes), with vl_tokenize()'s errors. */
static int scan_copy(const char *msg, size_t len, int max_depth, char *text,
                     struct vl_token *tokens, size_t cap, size_t *ret_n, struct scan *sc)
{
        int r = scan_refused(len, max_depth);

        if (r < 0)
                return r;
        memcpy(text, msg, len);
        text[len] = 0;
        r = scan(text, len, max_depth, tokens, cap, ret_n, sc, true);
        return scan_error(r, msg, len);
}

int vl_view_read(const char *msg, size_t len, int max_depth, char *text, struct vl_token *tokens,
                 size_t cap, size_t *ret_n)
{
        struct scan sc = {0};

        return scan_copy(msg, len, max_depth, text, tokens, cap, ret_n, &sc);
}

/* A copy of a call's text kept from one call to the next up to this size; a larger one is given
 * back when a small one follows. */
#define TEXT_KEPT 4096

static int parser_text(struct vl_parser *p, size_t len)
{
        size_t need = len + 1;

        if (p->text_cap < need || (p->text_cap > TEXT_KEPT && need <= TEXT_KEPT)) {
                size_t cap = need > TEXT_KEPT ? need : TEXT_KEPT;
                char *text = realloc(p->text, cap);

                if (!text)
                        return -ENOMEM;
                p->text = text;
                p->text_cap = cap;
        }
        return 0;
}

/* The call's tokens into p->tokens, grown as vl_tokens_parse() grows them: the text copied again
 * for each try, as a try changes it. */
static int call_scan(struct vl_parser *p, const char *msg, size_t len, int max_depth,
                     struct scan *sc)
{
        struct vl_tokens *k = &p->tokens;
        int r = vl_tokens_reserve(k, len);

        if (r < 0)
                return r;
        for (;;) {
                *sc = (struct scan){.call = true, .check = p->check};
                r = scan_copy(msg, len, max_depth, p->text, k->v, k->cap, &k->n, sc);
                if (r != -ENOBUFS || k->cap >= vl_tokens_bound(len))
                        return r;
                r = vl_tokens_grow(k, len);
                if (r < 0)
                        return r;
        }
}

int vl_call_parse_with(struct vl_parser *p, const char *msg, size_t len, int max_depth,
                       struct vl_call *ret)
{
        struct vl_call c = {0};
        struct vl_view method;
        const struct vl_token *tokens;
        const uint32_t *member;
        struct scan sc;
        int r;

        if (max_depth < 1)
                return -EINVAL;
        if (len > INT_MAX)
                return -EMSGSIZE;
        r = parser_text(p, len);
        if (r < 0)
                return r;
        r = call_scan(p, msg, len, max_depth, &sc);
        if (r < 0)
                return r;
        tokens = p->tokens.v;
        member = sc.member;
        if (tokens[0].type != VL_TOKEN_OBJECT)
                return -EPROTO;
        method = (struct vl_view){p->text, tokens, member[ENVELOPE_METHOD], NULL};
        /* Replies may echo the method: it is one of the grammar's names or no call. A name of the
         * IDL is one (test-idl checks every one). */
        if (member[ENVELOPE_METHOD] == 0 || vl_view_string(&method, &c.method) < 0 ||
            (!sc.method && !vl_method_name_valid(c.method)))
                return -EPROTO;
        c.method_len = tokens[member[ENVELOPE_METHOD]].len;
        c.idl = sc.method;
        if (member[ENVELOPE_PARAMETERS] != 0 &&
            tokens[member[ENVELOPE_PARAMETERS]].type != VL_TOKEN_NULL) {
                c.parameters = (struct vl_view){p->text, tokens, member[ENVELOPE_PARAMETERS], NULL};
                if (vl_view_type(&c.parameters) != VL_TOKEN_OBJECT)
                        return -EPROTO;
                if (sc.parameters_checked && !sc.unchecked) {
                        c.parameters.fields = &p->check->maps[0];
                        c.checked = true;
                }
        } else
                c.checked = sc.method && !sc.unchecked;
        if ((r = vl_token_flag(tokens, member[ENVELOPE_MORE], &c.more)) < 0 ||
            (r = vl_token_flag(tokens, member[ENVELOPE_ONEWAY], &c.oneway)) < 0 ||
            (r = vl_token_flag(tokens, member[ENVELOPE_UPGRADE], &c.upgrade)) < 0)
                return r;
        *ret = c;
        return 0;
}
