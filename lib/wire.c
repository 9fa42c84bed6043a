/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "base/timer-fields.h"
#include "varlink/message.h"
#include "varlink/names.h"
#include "wire.h"

/* Optional integers are sent only when they differ from the IDL's default, 0. */
static void add_nonzero_u64(struct vl_text *t, const char *field, uint64_t value)
{
        if (value != 0)
                vl_text_add_u64(t, field, value);
}

/* The calendar lines of one kind (cron: those after TIMERD_CALENDAR_CRON_PREFIX, without it) as
 * array `field`, when there are any. -EINVAL for an empty line. */
static int add_lines(struct vl_text *t, const char *field, const char *calendar, bool cron)
{
        size_t prefix = strlen(TIMERD_CALENDAR_CRON_PREFIX);
        bool opened = false;

        for (const char *p = calendar; *p;) {
                size_t l = strcspn(p, "\n");
                bool is_cron = strncmp(p, TIMERD_CALENDAR_CRON_PREFIX, prefix) == 0;
                size_t skip = is_cron ? prefix : 0;

                if (l == skip)
                        return -EINVAL;
                if (is_cron == cron) {
                        if (!opened)
                                vl_text_array_begin(t, field);
                        opened = true;
                        vl_text_array_add_string(t, p + skip, l - skip);
                }
                p += l + (p[l] == '\n');
        }
        if (opened)
                vl_text_array_end(t);
        return 0;
}

/* A calendar declaration's lines, as the arrays "calendar" and "cron" (each sent when not
 * empty), its zone and fixed delay. -EINVAL for an empty line. */
static int add_calendar(struct vl_text *t, const struct timerd_declaration *d)
{
        if (add_lines(t, "calendar", d->calendar, false) < 0 ||
            add_lines(t, "cron", d->calendar, true) < 0)
                return -EINVAL;
        if (d->timezone[0])
                vl_text_add_string(t, "timezone", d->timezone);
        if (d->fixed_random_delay)
                vl_text_add_bool(t, "fixed_random_delay", true);
        return 0;
}

/* TIMERD_HANDOVER_DEFAULT as it is sent: only where a handover is valid (timerd-types.h). */
static uint64_t declaration_handover(const struct timerd_declaration *d)
{
        if (d->handover_usec != TIMERD_HANDOVER_DEFAULT)
                return d->handover_usec;
        if (d->delivery != TIMERD_DELIVERY_NOTIFY ||
            (d->cadence_usec > 0 && d->cadence_usec <= TIMERD_HANDOVER_DEFAULT_USEC))
                return 0;
        return TIMERD_HANDOVER_DEFAULT_USEC;
}

enum timerd_clock wire_default_clock(enum timerd_policy policy)
{
        return policy == TIMERD_POLICY_CALENDAR ? TIMERD_CLOCK_REALTIME : TIMERD_CLOCK_MONOTONIC;
}

int wire_add_declaration(struct vl_text *t, const struct timerd_declaration *d)
{
        const char *policy = vl_policy_to_string(d->policy);
        const char *clock = vl_clock_to_string(d->clock);
        const char *lifetime = vl_lifetime_to_string(d->lifetime);
        const char *delivery = vl_delivery_to_string(d->delivery);
        int r;

        if (!policy || !clock || !lifetime || !delivery || d->signal < 0)
                return -EINVAL;
        vl_text_object_begin(t, "declaration");
        vl_text_add_string(t, "policy", policy);
        add_nonzero_u64(t, "cadence_usec", d->cadence_usec);
        /* The IDL's defaults are left out: each field the service reads costs it a scan. */
        if (d->clock != wire_default_clock(d->policy))
                vl_text_add_string(t, "clock", clock);
        if (d->lifetime != TIMERD_LIFETIME_TRANSIENT)
                vl_text_add_string(t, "lifetime", lifetime);
        if (d->delivery != TIMERD_DELIVERY_NOTIFY)
                vl_text_add_string(t, "delivery", delivery);
        add_nonzero_u64(t, "accuracy_usec", d->accuracy_usec);
        add_nonzero_u64(t, "signal", (uint64_t)d->signal);
        if (!d->catch_up)
                vl_text_add_bool(t, "catch_up", false);
        add_nonzero_u64(t, "randomized_delay_usec", d->randomized_delay_usec);
        add_nonzero_u64(t, "handover_usec", declaration_handover(d));
        r = add_calendar(t, d);
        vl_text_object_end(t);
        return r;
}

static void add_claim(struct vl_text *t, const struct timerd_claim *claim)
{
        vl_text_object_begin(t, "claim");
        vl_text_add_string(t, "name", claim->name);
        vl_text_add_u64(t, "generation", claim->generation);
        vl_text_object_end(t);
}

void wire_add_token(struct vl_text *t, const struct timerd_token *token)
{
        vl_text_object_begin(t, "token");
        vl_text_add_string(t, "name", token->name);
        vl_text_add_u64(t, "generation", token->generation);
        vl_text_add_u64(t, "run", token->run);
        vl_text_object_end(t);
}

int wire_add_run_result(struct vl_text *t, const struct timerd_run_result *result)
{
        const char *exit_name = vl_exit_to_string(result->exit);

        if (result->exit == TIMERD_EXIT_NONE || !exit_name || result->code > UINT8_MAX)
                return -EINVAL;
        vl_text_object_begin(t, "result");
        vl_text_add_string(t, "exit", exit_name);
        vl_text_add_u64(t, "code", result->code);
        vl_text_object_end(t);
        return 0;
}

int wire_add_claim_or_token(struct vl_text *t, const struct timerd_claim *claim,
                            const struct timerd_token *token)
{
        if (!claim == !token)
                return -EINVAL;
        if (claim)
                add_claim(t, claim);
        else
                wire_add_token(t, token);
        return 0;
}

int wire_add_start(struct vl_text *t, const struct timerd_start *start, const char *absolute_field)
{
        switch (start->kind) {
        case TIMERD_START_DEFAULT:
                return 0;
        case TIMERD_START_AT:
                vl_text_add_u64(t, absolute_field, start->usec);
                return 0;
        case TIMERD_START_AFTER:
                vl_text_add_u64(t, "delay_usec", start->usec);
                return 0;
        }
        return -EINVAL;
}

void wire_add_continuation(struct vl_text *t, const struct timerd_continuation *c)
{
        vl_text_object_begin(t, "continuation");
        vl_text_add_u64(t, "epoch", c->epoch);
        vl_text_add_u64(t, "nonce", c->nonce);
        vl_text_add_u64(t, "cycle", c->cycle);
        vl_text_object_end(t);
}

void wire_add_ticket(struct vl_text *t, const struct timerd_ticket *ticket)
{
        vl_text_object_begin(t, "ticket");
        wire_add_continuation(t, &ticket->continuation);
        vl_text_add_u64(t, "nonce", ticket->nonce);
        vl_text_object_end(t);
}

/* The field of o, an object among a reply's tokens. */
#define FIELD(get, o, field, ...)                                                                  \
        vl_token_get_##get((o)->text, (o)->tokens, (o)->index, field, __VA_ARGS__)

int wire_get_u64(const struct wire_object *o, const char *field, uint64_t *ret)
{
        return FIELD(u64, o, field, ret) < 0 ? -TIMERD_E_PROTOCOL : 0;
}

/* An optional integer: absent (or null) leaves *ret_has false and *ret 0. */
static int get_optional_u64(const struct wire_object *o, const char *field, bool *ret_has,
                            uint64_t *ret)
{
        int r = FIELD(u64, o, field, ret);

        *ret_has = r >= 0;
        if (r == -ENOENT)
                *ret = 0;
        return r < 0 && r != -ENOENT ? -TIMERD_E_PROTOCOL : 0;
}

static int get_default_u64(const struct wire_object *o, const char *field, uint64_t *ret)
{
        bool has;

        return get_optional_u64(o, field, &has, ret);
}

static int get_bool(const struct wire_object *o, const char *field, bool *ret)
{
        return FIELD(bool, o, field, ret) < 0 ? -TIMERD_E_PROTOCOL : 0;
}

/* An optional boolean: absent (or null) is `fallback`. */
static int get_default_bool(const struct wire_object *o, const char *field, bool fallback,
                            bool *ret)
{
        int r = FIELD(bool, o, field, ret);

        if (r == -ENOENT)
                *ret = fallback;
        return r < 0 && r != -ENOENT ? -TIMERD_E_PROTOCOL : 0;
}

/* A string that must fit buf whole: a truncated name would name another timer. */
int wire_get_string_into(const struct wire_object *o, const char *field, char *buf, size_t size)
{
        return FIELD(string, o, field, buf, size) < 0 ? -TIMERD_E_PROTOCOL : 0;
}

/* The same, optional: absent (or null) leaves *ret_has false and buf "". */
static int get_optional_string_into(const struct wire_object *o, const char *field, char *buf,
                                    size_t size, bool *ret_has)
{
        int r = FIELD(string, o, field, buf, size);

        *ret_has = r >= 0;
        if (r == -ENOENT)
                buf[0] = 0;
        return r < 0 && r != -ENOENT ? -TIMERD_E_PROTOCOL : 0;
}

/* An object field; absent (or null) leaves *ret_has false. */
int wire_get_optional_object(const struct wire_object *o, const char *field,
                             struct wire_object *ret, bool *ret_has)
{
        size_t i;
        int r = FIELD(object, o, field, &i);

        *ret_has = r >= 0;
        if (r >= 0)
                *ret = (struct wire_object){o->text, o->tokens, i};
        return r < 0 && r != -ENOENT ? -TIMERD_E_PROTOCOL : 0;
}

int wire_get_object(const struct wire_object *o, const char *field, struct wire_object *ret)
{
        bool has;

        return wire_get_optional_object(o, field, ret, &has) < 0 || !has ? -TIMERD_E_PROTOCOL : 0;
}

/* The strings of array `field` (absent: none) appended to buf as lines after `prefix`; they must
 * fit whole. */
static int get_lines(const struct wire_object *o, const char *field, const char *prefix, char *buf,
                     size_t size)
{
        size_t array, e;
        int r = FIELD(array, o, field, &array);

        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return -TIMERD_E_PROTOCOL;
        e = array + 1;
        for (uint32_t i = 0; i < o->tokens[array].size; i++, e = o->tokens[e].next) {
                size_t len = strlen(buf);
                int n = snprintf(buf + len, size - len, "%s%s", len > 0 ? "\n" : "", prefix);

                if (n < 0 || (size_t)n >= size - len ||
                    vl_token_string(o->text, &o->tokens[e], buf + len + n, size - len - n) < 0)
                        return -TIMERD_E_PROTOCOL;
        }
        return 0;
}

static int decode_calendar(const struct wire_object *o, struct timerd_declaration *ret)
{
        bool has;

        if (get_lines(o, "calendar", "", ret->calendar, sizeof(ret->calendar)) < 0 ||
            get_lines(o, "cron", TIMERD_CALENDAR_CRON_PREFIX, ret->calendar,
                      sizeof(ret->calendar)) < 0 ||
            get_optional_string_into(o, "timezone", ret->timezone, sizeof(ret->timezone), &has) <
                0 ||
            get_default_bool(o, "fixed_random_delay", false, &ret->fixed_random_delay) < 0)
                return -TIMERD_E_PROTOCOL;
        return 0;
}

/* Longer than every enum's name: a longer one is none. */
#define ENUM_NAME_MAX 64

/*
 * Each field as base/timer-fields.h describes it, from object o into the public struct at b:
 * m its member (a pair for two), w its wire name; a wrong or missing member jumps to fail. The
 * enums left out of a reply take the value a declaration defaults to; a required one must be
 * there, and a null one is none.
 */
#define GET_ENUM(o, b, m, w, type, fallback, required)                                             \
        {                                                                                          \
                char name_[ENUM_NAME_MAX];                                                         \
                bool has_;                                                                         \
                if ((required) && vl_token_member((o)->text, (o)->tokens, (o)->index, #w) < 0)     \
                        goto fail;                                                                 \
                if (get_optional_string_into(o, #w, name_, sizeof(name_), &has_) < 0)              \
                        goto fail;                                                                 \
                (b)->m = has_ ? vl_##type##_from_string(name_) : (fallback);                       \
                if ((int)(b)->m < 0)                                                               \
                        goto fail;                                                                 \
        }
#define WIRE_GET_U64(o, b, m, w)                                                                   \
        if (wire_get_u64(o, #w, &(b)->m) < 0)                                                      \
                goto fail;
#define WIRE_GET_BOOL(o, b, m, w)                                                                  \
        if (get_bool(o, #w, &(b)->m) < 0)                                                          \
                goto fail;
#define WIRE_GET_BOOL_ON(o, b, m, w)                                                               \
        if (get_default_bool(o, #w, true, &(b)->m) < 0)                                            \
                goto fail;
/* A declaration as Register takes it: times and counts left out are 0. */
#define WIRE_GET_DECLARED_U64(o, b, m, w)                                                          \
        if (get_default_u64(o, #w, &(b)->m) < 0)                                                   \
                goto fail;
#define WIRE_GET_SIGNO(o, b, m, w)                                                                 \
        {                                                                                          \
                uint64_t signo_;                                                                   \
                if (get_default_u64(o, #w, &signo_) < 0 || signo_ > INT_MAX)                       \
                        goto fail;                                                                 \
                (b)->m = (int)signo_;                                                              \
        }
#define WIRE_GET_POLICY(o, b, m, w) GET_ENUM(o, b, m, w, policy, TIMERD_POLICY_INVALID, true)
#define WIRE_GET_STATE(o, b, m, w)  GET_ENUM(o, b, m, w, state, TIMERD_STATE_INVALID, true)
#define WIRE_GET_CLOCK(o, b, m, w)  GET_ENUM(o, b, m, w, clock, TIMERD_CLOCK_MONOTONIC, false)
#define WIRE_GET_LIFETIME(o, b, m, w)                                                              \
        GET_ENUM(o, b, m, w, lifetime, TIMERD_LIFETIME_TRANSIENT, false)
#define WIRE_GET_DELIVERY(o, b, m, w) GET_ENUM(o, b, m, w, delivery, TIMERD_DELIVERY_NOTIFY, false)
#define WIRE_GET_FAILURE(o, b, m, w)  GET_ENUM(o, b, m, w, failure, TIMERD_FAILURE_NONE, false)
#define WIRE_GET_OUTCOME(o, b, m, w)  GET_ENUM(o, b, m, w, outcome, TIMERD_OUTCOME_NONE, false)
#define WIRE_GET_OPT_USEC(o, b, m, w)                                                              \
        if (get_optional_u64(o, #w, &(b)->TD_FIRST(m), &(b)->TD_SECOND(m)) < 0)                    \
                goto fail;
#define WIRE_GET_DEADLINE(o, b, m, w)                                                              \
        WIRE_GET_OPT_USEC(o, b, m, w)                                                              \
        if (get_optional_u64(o, "remaining_usec", &(bool){false}, &(b)->remaining_usec) < 0)       \
                goto fail;
/* Only a once timer has none, and its declared cadence is 0 too. */
#define WIRE_GET_LIVE_CADENCE(o, b, m, w)                                                          \
        if (get_default_u64(o, #w, &(b)->m) < 0)                                                   \
                goto fail;                                                                         \
        if ((b)->m == 0)                                                                           \
                (b)->m = (b)->declaration.cadence_usec;
#define WIRE_GET_CATCH_UP_MARK(o, b, m, w)                                                         \
        if (get_default_bool(o, #w, false, &(b)->m) < 0)                                           \
                goto fail;
#define WIRE_GET_RESULT(o, b, m, w)                                                                \
        if (decode_run_result(o, #w, &(b)->m) < 0)                                                 \
                goto fail;
#define WIRE_GET_INTERNAL_U64(o, b, m, w)
#define WIRE_GET_INTERNAL_BOOL(o, b, m, w)

/* The public struct is ABI: each member a field names must be of its kind's type. */
#define PUBLIC_IS(b, m, type)                                                                      \
        static_assert(__builtin_types_compatible_p(__typeof__(((b *)0)->m), type), #m);
#define PUBLIC_TYPE_U64(b, m)           PUBLIC_IS(b, m, uint64_t)
#define PUBLIC_TYPE_LIVE_CADENCE(b, m)  PUBLIC_IS(b, m, uint64_t)
#define PUBLIC_TYPE_BOOL(b, m)          PUBLIC_IS(b, m, bool)
#define PUBLIC_TYPE_BOOL_ON(b, m)       PUBLIC_IS(b, m, bool)
#define PUBLIC_TYPE_CATCH_UP_MARK(b, m) PUBLIC_IS(b, m, bool)
#define PUBLIC_TYPE_SIGNO(b, m)         PUBLIC_IS(b, m, int)
#define PUBLIC_TYPE_POLICY(b, m)        PUBLIC_IS(b, m, enum timerd_policy)
#define PUBLIC_TYPE_CLOCK(b, m)         PUBLIC_IS(b, m, enum timerd_clock)
#define PUBLIC_TYPE_LIFETIME(b, m)      PUBLIC_IS(b, m, enum timerd_lifetime)
#define PUBLIC_TYPE_DELIVERY(b, m)      PUBLIC_IS(b, m, enum timerd_delivery)
#define PUBLIC_TYPE_STATE(b, m)         PUBLIC_IS(b, m, enum timerd_state)
#define PUBLIC_TYPE_FAILURE(b, m)       PUBLIC_IS(b, m, enum timerd_failure)
#define PUBLIC_TYPE_OUTCOME(b, m)       PUBLIC_IS(b, m, enum timerd_outcome)
#define PUBLIC_TYPE_OPT_USEC(b, pair)                                                              \
        PUBLIC_IS(b, TD_FIRST(pair), bool) PUBLIC_IS(b, TD_SECOND(pair), uint64_t)
#define PUBLIC_TYPE_DEADLINE(b, pair)                                                              \
        PUBLIC_TYPE_OPT_USEC(b, pair) PUBLIC_IS(b, remaining_usec, uint64_t)
#define PUBLIC_TYPE_RESULT(b, m) PUBLIC_IS(b, m, struct timerd_run_result)
#define PUBLIC_TYPE_INTERNAL_U64(b, m)
#define PUBLIC_TYPE_INTERNAL_BOOL(b, m)
#define CHECK_DECLARATION(kind, snapshot, wire, pub, journal, position)                            \
        PUBLIC_TYPE_##kind(struct timerd_declaration, pub)
#define CHECK_TIMER(kind, snapshot, wire, pub, journal, position)                                  \
        PUBLIC_TYPE_##kind(struct timerd_timer, pub)
TD_DECLARATION_FIELDS(CHECK_DECLARATION)
TD_TIMER_FIELDS(CHECK_TIMER)

static int decode_declaration(const struct wire_object *obj, struct timerd_declaration *ret)
{
#define WIRE_GET_DECLARED_BOOL_ON  WIRE_GET_BOOL_ON
#define WIRE_GET_DECLARED_SIGNO    WIRE_GET_SIGNO
#define WIRE_GET_DECLARED_POLICY   WIRE_GET_POLICY
#define WIRE_GET_DECLARED_CLOCK    WIRE_GET_CLOCK
#define WIRE_GET_DECLARED_LIFETIME WIRE_GET_LIFETIME
#define WIRE_GET_DECLARED_DELIVERY WIRE_GET_DELIVERY
#define GET_DECLARATION(kind, snapshot, wire, pub, journal, position)                              \
        WIRE_GET_DECLARED_##kind(obj, ret, pub, wire)
        TD_DECLARATION_FIELDS(GET_DECLARATION)
#undef GET_DECLARATION
        return decode_calendar(obj, ret);
fail:
        return -TIMERD_E_PROTOCOL;
}

/* An absent result leaves exit TIMERD_EXIT_NONE. */
static int decode_run_result(const struct wire_object *obj, const char *field,
                             struct timerd_run_result *ret)
{
        char exit_name[ENUM_NAME_MAX];
        struct wire_object result;
        uint64_t code;
        bool has;

        if (wire_get_optional_object(obj, field, &result, &has) < 0)
                return -TIMERD_E_PROTOCOL;
        if (!has)
                return 0;
        if (wire_get_string_into(&result, "exit", exit_name, sizeof(exit_name)) < 0 ||
            wire_get_u64(&result, "code", &code) < 0 || code > UINT8_MAX)
                return -TIMERD_E_PROTOCOL;
        ret->exit = vl_exit_from_string(exit_name);
        ret->code = (uint32_t)code;
        return ret->exit <= TIMERD_EXIT_NONE ? -TIMERD_E_PROTOCOL : 0;
}

int wire_decode_timer(const struct wire_object *obj, struct timerd_timer *ret)
{
        struct wire_object declaration;
        uint64_t owner;

        *ret = (struct timerd_timer){};
        if (wire_get_u64(obj, "owner", &owner) < 0 || owner > UINT32_MAX ||
            wire_get_string_into(obj, "name", ret->name, sizeof(ret->name)) < 0 ||
            wire_get_object(obj, "declaration", &declaration) < 0 ||
            decode_declaration(&declaration, &ret->declaration) < 0)
                goto fail;
#define GET_TIMER(kind, snapshot, wire, pub, journal, position) WIRE_GET_##kind(obj, ret, pub, wire)
        TD_TIMER_FIELDS(GET_TIMER)
#undef GET_TIMER
        if (get_lines(obj, "calendar_normalized", "", ret->calendar_normalized,
                      sizeof(ret->calendar_normalized)) < 0)
                goto fail;
        ret->owner = (uint32_t)owner;
        return 0;
fail:
        return -TIMERD_E_PROTOCOL;
}

int wire_reply_parameters(const struct vl_reply *reply, struct wire_object *ret)
{
        /* Absent ({}) holds none of the fields a reply must have. */
        if (reply->parameters_token < 0)
                return -TIMERD_E_PROTOCOL;
        *ret = (struct wire_object){reply->text, reply->tokens, (size_t)reply->parameters_token};
        return 0;
}

int wire_reply_u64(const struct vl_reply *reply, const char *field, uint64_t *ret)
{
        struct wire_object p;

        return wire_reply_parameters(reply, &p) < 0 ? -TIMERD_E_PROTOCOL
                                                    : wire_get_u64(&p, field, ret);
}

int wire_reply_bool(const struct vl_reply *reply, const char *field, bool *ret)
{
        struct wire_object p;

        return wire_reply_parameters(reply, &p) < 0 ? -TIMERD_E_PROTOCOL : get_bool(&p, field, ret);
}

int wire_reply_claim(const struct vl_reply *reply, struct timerd_claim *ret)
{
        struct wire_object p, claim;

        if (wire_reply_parameters(reply, &p) < 0 || wire_get_object(&p, "claim", &claim) < 0 ||
            wire_get_string_into(&claim, "name", ret->name, sizeof(ret->name)) < 0 ||
            wire_get_u64(&claim, "generation", &ret->generation) < 0)
                return -TIMERD_E_PROTOCOL;
        return 0;
}

int wire_reply_firing(const struct vl_reply *reply, struct timerd_firing *ret)
{
        char clock[ENUM_NAME_MAX];
        struct wire_object p, obj, token;

        *ret = (struct timerd_firing){};
        if (wire_reply_parameters(reply, &p) < 0 || wire_get_object(&p, "firing", &obj) < 0 ||
            wire_get_object(&obj, "token", &token) < 0 ||
            wire_get_string_into(&token, "name", ret->token.name, sizeof(ret->token.name)) < 0 ||
            wire_get_u64(&token, "generation", &ret->token.generation) < 0 ||
            wire_get_u64(&token, "run", &ret->token.run) < 0 ||
            wire_get_string_into(&obj, "clock", clock, sizeof(clock)) < 0 ||
            wire_get_u64(&obj, "deadline_usec", &ret->deadline_usec) < 0 ||
            wire_get_u64(&obj, "fired_usec", &ret->fired_usec) < 0 ||
            wire_get_u64(&obj, "overruns", &ret->overruns) < 0 ||
            get_default_bool(&obj, "catch_up", false, &ret->catch_up) < 0)
                return -TIMERD_E_PROTOCOL;
        ret->clock = vl_clock_from_string(clock);
        return ret->clock == TIMERD_CLOCK_INVALID ? -TIMERD_E_PROTOCOL : 0;
}

/* Append a word to a space-separated list that must fit whole. */
static int append_word(char *buf, size_t size, const char *word)
{
        size_t len = strlen(buf), add = strlen(word) + (len > 0 ? 1 : 0);

        if (len + add >= size)
                return -TIMERD_E_PROTOCOL;
        snprintf(buf + len, size - len, "%s%s", len > 0 ? " " : "", word);
        return 0;
}

/* String token t appended as a word. */
static int append_token(const struct wire_object *o, size_t t, char *buf, size_t size)
{
        char word[sizeof(((struct timerd_status *)0)->capabilities)];

        if (vl_token_string(o->text, &o->tokens[t], word, sizeof(word)) < 0)
                return -TIMERD_E_PROTOCOL;
        return append_word(buf, size, word);
}

/*
 * The optional "capabilities" of Status, as a space-separated list: an array of names, or an
 * object whose members set to true are the names.
 */
static int decode_capabilities(const struct wire_object *o, char *buf, size_t size)
{
        const struct vl_token *tokens = o->tokens;
        int i = vl_token_member(o->text, tokens, o->index, "capabilities");
        bool object;
        size_t e;

        buf[0] = 0;
        if (i < 0 || tokens[i].type == VL_TOKEN_NULL)
                return 0;
        object = tokens[i].type == VL_TOKEN_OBJECT;
        if (!object && tokens[i].type != VL_TOKEN_ARRAY)
                return -TIMERD_E_PROTOCOL;
        e = (size_t)i + 1;
        for (uint32_t n = 0; n < tokens[i].size; n++, e = tokens[e].next) {
                if (!object) {
                        if (append_token(o, e, buf, size) < 0)
                                return -TIMERD_E_PROTOCOL;
                        continue;
                }
                /* A member: its key, then its value. */
                size_t value = tokens[e].next;

                if (tokens[value].type != VL_TOKEN_TRUE && tokens[value].type != VL_TOKEN_FALSE)
                        return -TIMERD_E_PROTOCOL;
                if (tokens[value].type == VL_TOKEN_TRUE && append_token(o, e, buf, size) < 0)
                        return -TIMERD_E_PROTOCOL;
                e = value;
        }
        return 0;
}

/* A Delays object; p99 is absent with few samples. */
static int decode_delays(const struct wire_object *o, uint64_t *ret_samples, uint64_t *ret_p50,
                         bool *ret_has_p99, uint64_t *ret_p99, uint64_t *ret_max)
{
        if (wire_get_u64(o, "samples", ret_samples) < 0 ||
            wire_get_u64(o, "p50_usec", ret_p50) < 0 || wire_get_u64(o, "max_usec", ret_max) < 0 ||
            get_optional_u64(o, "p99_usec", ret_has_p99, ret_p99) < 0)
                return -TIMERD_E_PROTOCOL;
        return 0;
}

/* The activity figures uid 0 is told (Status's scope host); another caller gets none. */
static int decode_activity(const struct wire_object *o, struct timerd_status *ret)
{
        struct wire_object lateness, loop_lag;
        bool has_loop_lag;

        if (wire_get_u64(o, "iterations", &ret->iterations) < 0 ||
            wire_get_u64(o, "wakeups", &ret->wakeups) < 0 ||
            wire_get_u64(o, "firings", &ret->firings) < 0 ||
            wire_get_u64(o, "overruns", &ret->overruns) < 0 ||
            wire_get_u64(o, "stale_expiries", &ret->stale_expiries) < 0 ||
            get_default_u64(o, "signals_sent", &ret->signals_sent) < 0 ||
            get_default_u64(o, "signals_failed", &ret->signals_failed) < 0 ||
            wire_get_u64(o, "slowest_iteration_usec", &ret->slowest_iteration_usec) < 0 ||
            wire_get_object(o, "lateness", &lateness) < 0 ||
            decode_delays(&lateness, &ret->lateness_samples, &ret->lateness_p50_usec,
                          &ret->has_lateness_p99, &ret->lateness_p99_usec,
                          &ret->lateness_max_usec) < 0 ||
            get_default_u64(&lateness, "past_due", &ret->lateness_past_due) < 0 ||
            wire_get_optional_object(o, "loop_lag", &loop_lag, &has_loop_lag) < 0)
                return -TIMERD_E_PROTOCOL;
        /* A service from before loop lag was measured: none. */
        if (has_loop_lag && decode_delays(&loop_lag, &ret->loop_lag_samples,
                                          &ret->loop_lag_p50_usec, &ret->has_loop_lag_p99,
                                          &ret->loop_lag_p99_usec, &ret->loop_lag_max_usec) < 0)
                return -TIMERD_E_PROTOCOL;
        return 0;
}

int wire_decode_status(const struct wire_object *o, struct timerd_status *ret)
{
        char scope[sizeof("caller")];
        bool has_scope;

        *ret = (struct timerd_status){};
        if (wire_get_string_into(o, "epoch", ret->epoch, sizeof(ret->epoch)) < 0 ||
            wire_get_string_into(o, "version", ret->version, sizeof(ret->version)) < 0 ||
            wire_get_string_into(o, "backend", ret->backend, sizeof(ret->backend)) < 0 ||
            wire_get_string_into(o, "backend_reason", ret->backend_reason,
                                 sizeof(ret->backend_reason)) < 0 ||
            wire_get_string_into(o, "store", ret->store, sizeof(ret->store)) < 0 ||
            get_optional_string_into(o, "scope", scope, sizeof(scope), &has_scope) < 0 ||
            wire_get_u64(o, "pid", &ret->pid) < 0 ||
            wire_get_u64(o, "uptime_usec", &ret->uptime_usec) < 0 ||
            wire_get_u64(o, "timers", &ret->timers) < 0 ||
            wire_get_u64(o, "scheduled", &ret->scheduled) < 0 ||
            wire_get_u64(o, "running", &ret->running) < 0 ||
            wire_get_u64(o, "failed", &ret->failed) < 0 ||
            wire_get_u64(o, "pending", &ret->pending) < 0 ||
            wire_get_u64(o, "connections", &ret->connections) < 0 ||
            wire_get_u64(o, "waiters", &ret->waiters) < 0 ||
            wire_get_u64(o, "clock_changes", &ret->clock_changes) < 0 ||
            decode_capabilities(o, ret->capabilities, sizeof(ret->capabilities)) < 0)
                return -TIMERD_E_PROTOCOL;
        /* A service from before scopes told everyone everything. */
        if (has_scope && strcmp(scope, "caller") == 0)
                return 0;
        if (has_scope && strcmp(scope, "host") != 0)
                return -TIMERD_E_PROTOCOL;
        ret->host_wide = true;
        return decode_activity(o, ret);
}

static int decode_continuation(const struct wire_object *o, struct timerd_continuation *ret)
{
        if (wire_get_u64(o, "epoch", &ret->epoch) < 0 ||
            wire_get_u64(o, "nonce", &ret->nonce) < 0 || wire_get_u64(o, "cycle", &ret->cycle) < 0)
                return -TIMERD_E_PROTOCOL;
        return 0;
}

static int decode_observation(const struct wire_object *o, struct timerd_observation *ret)
{
        struct wire_object continuation;

        if (wire_get_object(o, "continuation", &continuation) < 0 ||
            decode_continuation(&continuation, &ret->continuation) < 0 ||
            wire_get_u64(o, "lease", &ret->lease) < 0 ||
            get_optional_u64(o, "remaining_usec", &ret->has_remaining, &ret->remaining_usec) < 0 ||
            wire_get_string_into(o, "timer", ret->timer, sizeof(ret->timer)) < 0 ||
            wire_get_u64(o, "alarms", &ret->alarms) < 0)
                return -TIMERD_E_PROTOCOL;
        return 0;
}

int wire_decode_sleep_result(const struct vl_reply *reply, struct timerd_sleep_result *ret)
{
        struct wire_object p, observation;
        bool has_observation;

        *ret = (struct timerd_sleep_result){};
        if (wire_reply_parameters(reply, &p) < 0 || get_bool(&p, "elapsed", &ret->elapsed) < 0 ||
            wire_get_optional_object(&p, "observation", &observation, &has_observation) < 0)
                return -TIMERD_E_PROTOCOL;
        /* Exactly one of the two outcomes. */
        if (ret->elapsed == has_observation)
                return -TIMERD_E_PROTOCOL;
        return has_observation ? decode_observation(&observation, &ret->observation) : 0;
}

int wire_decode_finish_result(const struct vl_reply *reply, struct timerd_finish_result *ret)
{
        struct wire_object p, ticket, continuation;

        *ret = (struct timerd_finish_result){};
        /* Every field is optional: {} is a finish without ticket or remaining time. */
        if (reply->parameters_token < 0)
                return 0;
        if (wire_reply_parameters(reply, &p) < 0 ||
            wire_get_optional_object(&p, "ticket", &ticket, &ret->has_ticket) < 0 ||
            get_optional_u64(&p, "remaining_usec", &ret->has_remaining, &ret->remaining_usec) < 0)
                return -TIMERD_E_PROTOCOL;
        if (!ret->has_ticket)
                return 0;
        if (wire_get_object(&ticket, "continuation", &continuation) < 0 ||
            decode_continuation(&continuation, &ret->ticket.continuation) < 0 ||
            wire_get_u64(&ticket, "nonce", &ret->ticket.nonce) < 0)
                return -TIMERD_E_PROTOCOL;
        return 0;
}

static const char *const event_kind_names[] = {
    [TIMERD_EVENT_REGISTERED] = "registered",     [TIMERD_EVENT_RECONCILED] = "reconciled",
    [TIMERD_EVENT_SCHEDULED] = "scheduled",       [TIMERD_EVENT_RESCHEDULED] = "rescheduled",
    [TIMERD_EVENT_CANCELLED] = "cancelled",       [TIMERD_EVENT_KICKED] = "kicked",
    [TIMERD_EVENT_UNREGISTERED] = "unregistered", [TIMERD_EVENT_FIRED] = "fired",
    [TIMERD_EVENT_COMPLETED] = "completed",       [TIMERD_EVENT_REMOVED] = "removed",
};
_Static_assert(sizeof(event_kind_names) / sizeof(event_kind_names[0]) == TIMERD_EVENT_MAX,
               "one name per event kind");

const char *timerd_event_kind_to_string(enum timerd_event_kind kind)
{
        return kind >= 0 && kind < TIMERD_EVENT_MAX ? event_kind_names[kind] : NULL;
}

static enum timerd_event_kind event_kind_from_string(const char *s)
{
        for (int i = 0; i < TIMERD_EVENT_MAX; i++)
                if (strcmp(event_kind_names[i], s) == 0)
                        return (enum timerd_event_kind)i;
        return TIMERD_EVENT_INVALID;
}

int wire_decode_event(const struct wire_object *o, struct timerd_event *ret)
{
        char kind[ENUM_NAME_MAX], state[ENUM_NAME_MAX];
        uint64_t owner;

        *ret = (struct timerd_event){};
        if (wire_get_string_into(o, "kind", kind, sizeof(kind)) < 0 ||
            wire_get_u64(o, "owner", &owner) < 0 || owner > UINT32_MAX ||
            wire_get_string_into(o, "name", ret->name, sizeof(ret->name)) < 0 ||
            get_optional_u64(o, "run", &ret->has_run, &ret->run) < 0 ||
            get_optional_string_into(o, "state", state, sizeof(state), &ret->has_state) < 0 ||
            wire_get_u64(o, "realtime_usec", &ret->realtime_usec) < 0)
                return -TIMERD_E_PROTOCOL;
        ret->kind = event_kind_from_string(kind);
        ret->owner = (uint32_t)owner;
        ret->state = ret->has_state ? vl_state_from_string(state) : TIMERD_STATE_INVALID;
        if (ret->kind == TIMERD_EVENT_INVALID ||
            (ret->has_state && ret->state == TIMERD_STATE_INVALID))
                return -TIMERD_E_PROTOCOL;
        return 0;
}
