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
static int add_nonzero_u64(json_object *obj, const char *field, uint64_t value)
{
        return value == 0 ? 0 : vl_add_u64(obj, field, value);
}

static int add_new_object(json_object *parameters, const char *field, json_object **ret)
{
        json_object *obj = json_object_new_object();

        if (!obj)
                return -ENOMEM;
        if (vl_add_object(parameters, field, obj) < 0)
                return -ENOMEM;
        *ret = obj;
        return 0;
}

/* A calendar declaration's lines, as the arrays "calendar" and "cron" (each sent when not
 * empty), its zone and fixed delay. -EINVAL for an empty line. */
static int add_calendar(json_object *obj, const struct timerd_declaration *d)
{
        size_t prefix = strlen(TIMERD_CALENDAR_CRON_PREFIX);
        json_object *arrays[2] = {json_object_new_array(), json_object_new_array()};
        const char *p = d->calendar;
        int r = 0;

        if (!arrays[0] || !arrays[1])
                r = -ENOMEM;
        while (r == 0 && *p) {
                size_t l = strcspn(p, "\n");
                bool cron = strncmp(p, TIMERD_CALENDAR_CRON_PREFIX, prefix) == 0;
                json_object *line = l > (cron ? prefix : 0)
                                        ? json_object_new_string_len(p + (cron ? prefix : 0),
                                                                     (int)(l - (cron ? prefix : 0)))
                                        : NULL;

                if (l == (cron ? prefix : 0))
                        r = -EINVAL;
                else if (!line || json_object_array_add(arrays[cron], line) < 0) {
                        json_object_put(line);
                        r = -ENOMEM;
                }
                p += l + (p[l] == '\n');
        }
        for (int i = 0; i < 2; i++) {
                if (r == 0 && json_object_array_length(arrays[i]) > 0) {
                        if (vl_add_object(obj, i ? "cron" : "calendar", arrays[i]) < 0)
                                r = -ENOMEM;
                } else
                        json_object_put(arrays[i]);
        }
        if (r == 0 && ((d->timezone[0] && vl_add_string(obj, "timezone", d->timezone) < 0) ||
                       (d->fixed_random_delay && vl_add_bool(obj, "fixed_random_delay", true) < 0)))
                r = -ENOMEM;
        return r;
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

int wire_add_declaration(json_object *parameters, const struct timerd_declaration *d)
{
        const char *policy = vl_policy_to_string(d->policy);
        const char *clock = vl_clock_to_string(d->clock);
        const char *lifetime = vl_lifetime_to_string(d->lifetime);
        const char *delivery = vl_delivery_to_string(d->delivery);
        json_object *obj;

        if (!policy || !clock || !lifetime || !delivery || d->signal < 0)
                return -EINVAL;
        if (add_new_object(parameters, "declaration", &obj) < 0 ||
            vl_add_string(obj, "policy", policy) < 0 ||
            add_nonzero_u64(obj, "cadence_usec", d->cadence_usec) < 0 ||
            vl_add_string(obj, "clock", clock) < 0 ||
            vl_add_string(obj, "lifetime", lifetime) < 0 ||
            vl_add_string(obj, "delivery", delivery) < 0 ||
            add_nonzero_u64(obj, "accuracy_usec", d->accuracy_usec) < 0 ||
            add_nonzero_u64(obj, "signal", (uint64_t)d->signal) < 0 ||
            (!d->catch_up && vl_add_bool(obj, "catch_up", false) < 0) ||
            add_nonzero_u64(obj, "randomized_delay_usec", d->randomized_delay_usec) < 0 ||
            add_nonzero_u64(obj, "handover_usec", declaration_handover(d)) < 0)
                return -ENOMEM;
        return add_calendar(obj, d);
}

static int add_claim(json_object *parameters, const struct timerd_claim *claim)
{
        json_object *obj;

        if (add_new_object(parameters, "claim", &obj) < 0 ||
            vl_add_string(obj, "name", claim->name) < 0 ||
            vl_add_u64(obj, "generation", claim->generation) < 0)
                return -ENOMEM;
        return 0;
}

int wire_add_token(json_object *parameters, const struct timerd_token *token)
{
        json_object *obj;

        if (add_new_object(parameters, "token", &obj) < 0 ||
            vl_add_string(obj, "name", token->name) < 0 ||
            vl_add_u64(obj, "generation", token->generation) < 0 ||
            vl_add_u64(obj, "run", token->run) < 0)
                return -ENOMEM;
        return 0;
}

int wire_add_run_result(json_object *parameters, const struct timerd_run_result *result)
{
        const char *exit_name = vl_exit_to_string(result->exit);
        json_object *obj;

        if (result->exit == TIMERD_EXIT_NONE || !exit_name || result->code > UINT8_MAX)
                return -EINVAL;
        if (add_new_object(parameters, "result", &obj) < 0 ||
            vl_add_string(obj, "exit", exit_name) < 0 || vl_add_u64(obj, "code", result->code) < 0)
                return -ENOMEM;
        return 0;
}

int wire_add_claim_or_token(json_object *parameters, const struct timerd_claim *claim,
                            const struct timerd_token *token)
{
        if (!claim == !token)
                return -EINVAL;
        return claim ? add_claim(parameters, claim) : wire_add_token(parameters, token);
}

int wire_add_start(json_object *parameters, const struct timerd_start *start,
                   const char *absolute_field)
{
        switch (start->kind) {
        case TIMERD_START_DEFAULT:
                return 0;
        case TIMERD_START_AT:
                return vl_add_u64(parameters, absolute_field, start->usec);
        case TIMERD_START_AFTER:
                return vl_add_u64(parameters, "delay_usec", start->usec);
        }
        return -EINVAL;
}

int wire_add_owner(json_object *parameters, uint32_t owner)
{
        return owner == TIMERD_OWNER_SELF ? 0 : vl_add_u64(parameters, "owner", owner);
}

int wire_add_continuation(json_object *parameters, const struct timerd_continuation *c)
{
        json_object *obj;

        if (add_new_object(parameters, "continuation", &obj) < 0 ||
            vl_add_u64(obj, "epoch", c->epoch) < 0 || vl_add_u64(obj, "nonce", c->nonce) < 0 ||
            vl_add_u64(obj, "cycle", c->cycle) < 0)
                return -ENOMEM;
        return 0;
}

int wire_add_ticket(json_object *parameters, const struct timerd_ticket *ticket)
{
        json_object *obj;

        if (add_new_object(parameters, "ticket", &obj) < 0 ||
            wire_add_continuation(obj, &ticket->continuation) < 0 ||
            vl_add_u64(obj, "nonce", ticket->nonce) < 0)
                return -ENOMEM;
        return 0;
}

static int get_u64(json_object *obj, const char *field, uint64_t *ret)
{
        return vl_get_u64(obj, field, ret) < 0 ? -TIMERD_E_PROTOCOL : 0;
}

/* An optional integer: absent (or null) leaves *ret_has false and *ret 0. */
static int get_optional_u64(json_object *obj, const char *field, bool *ret_has, uint64_t *ret)
{
        int r = vl_get_u64(obj, field, ret);

        *ret_has = r >= 0;
        if (r == -ENOENT)
                *ret = 0;
        return r < 0 && r != -ENOENT ? -TIMERD_E_PROTOCOL : 0;
}

static int get_default_u64(json_object *obj, const char *field, uint64_t *ret)
{
        bool has;

        return get_optional_u64(obj, field, &has, ret);
}

static int get_bool(json_object *obj, const char *field, bool *ret)
{
        return vl_get_bool(obj, field, ret) < 0 ? -TIMERD_E_PROTOCOL : 0;
}

static int get_string(json_object *obj, const char *field, const char **ret)
{
        return vl_get_string(obj, field, ret) < 0 ? -TIMERD_E_PROTOCOL : 0;
}

/* NULL when absent; -TIMERD_E_PROTOCOL when not a string. */
static int get_optional_string(json_object *obj, const char *field, const char **ret)
{
        int r = vl_get_string(obj, field, ret);

        if (r == -ENOENT)
                *ret = NULL;
        return r < 0 && r != -ENOENT ? -TIMERD_E_PROTOCOL : 0;
}

/* A string that must fit the struct's buffer whole: a truncated name would name another timer. */
static int get_string_into(json_object *obj, const char *field, char *buf, size_t size)
{
        const char *s;
        size_t len;

        if (get_string(obj, field, &s) < 0)
                return -TIMERD_E_PROTOCOL;
        len = strlen(s);
        if (len >= size)
                return -TIMERD_E_PROTOCOL;
        memcpy(buf, s, len + 1);
        return 0;
}

int wire_get_object(json_object *obj, const char *field, json_object **ret)
{
        return vl_get_object(obj, field, ret) < 0 ? -TIMERD_E_PROTOCOL : 0;
}

/* NULL when absent; -TIMERD_E_PROTOCOL when not an object. */
static int get_optional_object(json_object *obj, const char *field, json_object **ret)
{
        int r = vl_get_object(obj, field, ret);

        if (r == -ENOENT)
                *ret = NULL;
        return r < 0 && r != -ENOENT ? -TIMERD_E_PROTOCOL : 0;
}

/* An optional boolean: absent (or null) is `fallback`. */
static int get_default_bool(json_object *obj, const char *field, bool fallback, bool *ret)
{
        int r = vl_get_bool(obj, field, ret);

        if (r == -ENOENT)
                *ret = fallback;
        return r < 0 && r != -ENOENT ? -TIMERD_E_PROTOCOL : 0;
}

/* The strings of array `field` (absent: none) appended to buf as lines after `prefix`; they must
 * fit whole. */
static int get_lines(json_object *obj, const char *field, const char *prefix, char *buf,
                     size_t size)
{
        json_object *a;
        int r = vl_get_array(obj, field, &a);

        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return -TIMERD_E_PROTOCOL;
        for (size_t i = 0; i < json_object_array_length(a); i++) {
                json_object *v = json_object_array_get_idx(a, i);
                size_t len = strlen(buf);
                int n;

                if (!json_object_is_type(v, json_type_string))
                        return -TIMERD_E_PROTOCOL;
                n = snprintf(buf + len, size - len, "%s%s%s", len > 0 ? "\n" : "", prefix,
                             json_object_get_string(v));
                if (n < 0 || (size_t)n >= size - len)
                        return -TIMERD_E_PROTOCOL;
        }
        return 0;
}

static int decode_calendar(json_object *obj, struct timerd_declaration *ret)
{
        const char *timezone;

        if (get_lines(obj, "calendar", "", ret->calendar, sizeof(ret->calendar)) < 0 ||
            get_lines(obj, "cron", TIMERD_CALENDAR_CRON_PREFIX, ret->calendar,
                      sizeof(ret->calendar)) < 0 ||
            get_optional_string(obj, "timezone", &timezone) < 0 ||
            (timezone && strlen(timezone) >= sizeof(ret->timezone)) ||
            get_default_bool(obj, "fixed_random_delay", false, &ret->fixed_random_delay) < 0)
                return -TIMERD_E_PROTOCOL;
        if (timezone)
                strcpy(ret->timezone, timezone);
        return 0;
}

/*
 * Each field as base/timer-fields.h describes it, from JSON object o into the public struct at b:
 * m its member (a pair for two), w its wire name; a wrong or missing member jumps to fail. The
 * enums left out of a reply take the value a declaration defaults to.
 */
#define GET_ENUM(o, b, m, w, type, fallback)                                                       \
        {                                                                                          \
                const char *name_;                                                                 \
                if (get_optional_string(o, #w, &name_) < 0)                                        \
                        goto fail;                                                                 \
                (b)->m = name_ ? vl_##type##_from_string(name_) : (fallback);                      \
                if ((int)(b)->m < 0)                                                               \
                        goto fail;                                                                 \
        }
#define WIRE_GET_U64(o, b, m, w)                                                                   \
        if (get_u64(o, #w, &(b)->m) < 0)                                                           \
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
#define WIRE_GET_POLICY(o, b, m, w)                                                                \
        if (!json_object_object_get_ex(o, #w, NULL))                                               \
                goto fail;                                                                         \
        GET_ENUM(o, b, m, w, policy, TIMERD_POLICY_INVALID)
#define WIRE_GET_STATE(o, b, m, w)                                                                 \
        if (!json_object_object_get_ex(o, #w, NULL))                                               \
                goto fail;                                                                         \
        GET_ENUM(o, b, m, w, state, TIMERD_STATE_INVALID)
#define WIRE_GET_CLOCK(o, b, m, w)    GET_ENUM(o, b, m, w, clock, TIMERD_CLOCK_MONOTONIC)
#define WIRE_GET_LIFETIME(o, b, m, w) GET_ENUM(o, b, m, w, lifetime, TIMERD_LIFETIME_TRANSIENT)
#define WIRE_GET_DELIVERY(o, b, m, w) GET_ENUM(o, b, m, w, delivery, TIMERD_DELIVERY_NOTIFY)
#define WIRE_GET_FAILURE(o, b, m, w)  GET_ENUM(o, b, m, w, failure, TIMERD_FAILURE_NONE)
#define WIRE_GET_OUTCOME(o, b, m, w)  GET_ENUM(o, b, m, w, outcome, TIMERD_OUTCOME_NONE)
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

static int decode_declaration(json_object *obj, struct timerd_declaration *ret)
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
static int decode_run_result(json_object *obj, const char *field, struct timerd_run_result *ret)
{
        json_object *result;
        const char *exit_name;
        uint64_t code;

        if (get_optional_object(obj, field, &result) < 0)
                return -TIMERD_E_PROTOCOL;
        if (!result)
                return 0;
        if (get_string(result, "exit", &exit_name) < 0 || get_u64(result, "code", &code) < 0 ||
            code > UINT8_MAX)
                return -TIMERD_E_PROTOCOL;
        ret->exit = vl_exit_from_string(exit_name);
        ret->code = (uint32_t)code;
        return ret->exit <= TIMERD_EXIT_NONE ? -TIMERD_E_PROTOCOL : 0;
}

int wire_decode_timer(json_object *obj, struct timerd_timer *ret)
{
        json_object *declaration;
        uint64_t owner;

        *ret = (struct timerd_timer){};
        if (get_u64(obj, "owner", &owner) < 0 || owner > UINT32_MAX ||
            get_string_into(obj, "name", ret->name, sizeof(ret->name)) < 0 ||
            wire_get_object(obj, "declaration", &declaration) < 0 ||
            decode_declaration(declaration, &ret->declaration) < 0)
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

/* A field of an object among a reply's tokens; any error is the reply's. */
#define TOKEN_FIELD(get, reply, obj, field, ...)                                                   \
        (vl_token_get_##get((reply)->text, (reply)->tokens, obj, field, __VA_ARGS__) < 0)

/* The parameters object of a reply read as tokens; -TIMERD_E_PROTOCOL when absent ({}), which
 * holds none of the fields a reply must have. */
static int reply_parameters(const struct vl_reply *reply, size_t *ret)
{
        if (reply->parameters_token < 0)
                return -TIMERD_E_PROTOCOL;
        *ret = (size_t)reply->parameters_token;
        return 0;
}

int wire_reply_u64(const struct vl_reply *reply, const char *field, uint64_t *ret)
{
        size_t p;

        if (reply_parameters(reply, &p) < 0 || TOKEN_FIELD(u64, reply, p, field, ret))
                return -TIMERD_E_PROTOCOL;
        return 0;
}

int wire_reply_bool(const struct vl_reply *reply, const char *field, bool *ret)
{
        size_t p;

        if (reply_parameters(reply, &p) < 0 || TOKEN_FIELD(bool, reply, p, field, ret))
                return -TIMERD_E_PROTOCOL;
        return 0;
}

int wire_reply_claim(const struct vl_reply *reply, struct timerd_claim *ret)
{
        size_t p, claim;

        if (reply_parameters(reply, &p) < 0 || TOKEN_FIELD(object, reply, p, "claim", &claim) ||
            TOKEN_FIELD(string, reply, claim, "name", ret->name, sizeof(ret->name)) ||
            TOKEN_FIELD(u64, reply, claim, "generation", &ret->generation))
                return -TIMERD_E_PROTOCOL;
        return 0;
}

int wire_reply_firing(const struct vl_reply *reply, struct timerd_firing *ret)
{
        char clock[32]; /* longer than every clock's name: a longer one is none */
        size_t p, obj, token;
        int r;

        *ret = (struct timerd_firing){};
        if (reply_parameters(reply, &p) < 0 || TOKEN_FIELD(object, reply, p, "firing", &obj) ||
            TOKEN_FIELD(object, reply, obj, "token", &token) ||
            TOKEN_FIELD(string, reply, token, "name", ret->token.name, sizeof(ret->token.name)) ||
            TOKEN_FIELD(u64, reply, token, "generation", &ret->token.generation) ||
            TOKEN_FIELD(u64, reply, token, "run", &ret->token.run) ||
            TOKEN_FIELD(string, reply, obj, "clock", clock, sizeof(clock)) ||
            TOKEN_FIELD(u64, reply, obj, "deadline_usec", &ret->deadline_usec) ||
            TOKEN_FIELD(u64, reply, obj, "fired_usec", &ret->fired_usec) ||
            TOKEN_FIELD(u64, reply, obj, "overruns", &ret->overruns))
                return -TIMERD_E_PROTOCOL;
        r = vl_token_get_bool(reply->text, reply->tokens, obj, "catch_up", &ret->catch_up);
        if (r < 0 && r != -ENOENT)
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

/*
 * The optional "capabilities" of Status, as a space-separated list: an array of names, or an
 * object whose members set to true are the names.
 */
static int decode_capabilities(json_object *obj, char *buf, size_t size)
{
        json_object *value;

        buf[0] = 0;
        if (!json_object_object_get_ex(obj, "capabilities", &value) || !value)
                return 0;
        if (json_object_is_type(value, json_type_array)) {
                for (size_t i = 0; i < json_object_array_length(value); i++) {
                        json_object *item = json_object_array_get_idx(value, i);

                        if (!json_object_is_type(item, json_type_string) ||
                            append_word(buf, size, json_object_get_string(item)) < 0)
                                return -TIMERD_E_PROTOCOL;
                }
                return 0;
        }
        if (!json_object_is_type(value, json_type_object))
                return -TIMERD_E_PROTOCOL;
        json_object_object_foreach(value, key, member)
        {
                if (!json_object_is_type(member, json_type_boolean))
                        return -TIMERD_E_PROTOCOL;
                if (json_object_get_boolean(member) && append_word(buf, size, key) < 0)
                        return -TIMERD_E_PROTOCOL;
        }
        return 0;
}

/* A Delays object; p99 is absent with few samples. */
static int decode_delays(json_object *obj, uint64_t *ret_samples, uint64_t *ret_p50,
                         bool *ret_has_p99, uint64_t *ret_p99, uint64_t *ret_max)
{
        int r;

        if (get_u64(obj, "samples", ret_samples) < 0 || get_u64(obj, "p50_usec", ret_p50) < 0 ||
            get_u64(obj, "max_usec", ret_max) < 0)
                return -TIMERD_E_PROTOCOL;
        r = vl_get_u64(obj, "p99_usec", ret_p99);
        if (r < 0 && r != -ENOENT)
                return -TIMERD_E_PROTOCOL;
        *ret_has_p99 = r == 0;
        return 0;
}

/* The activity figures uid 0 is told (Status's scope host); another caller gets none. */
static int decode_activity(json_object *obj, struct timerd_status *ret)
{
        json_object *lateness, *loop_lag;
        int r;

        if (get_u64(obj, "iterations", &ret->iterations) < 0 ||
            get_u64(obj, "wakeups", &ret->wakeups) < 0 ||
            get_u64(obj, "firings", &ret->firings) < 0 ||
            get_u64(obj, "overruns", &ret->overruns) < 0 ||
            get_u64(obj, "stale_expiries", &ret->stale_expiries) < 0 ||
            get_default_u64(obj, "signals_sent", &ret->signals_sent) < 0 ||
            get_default_u64(obj, "signals_failed", &ret->signals_failed) < 0 ||
            get_u64(obj, "slowest_iteration_usec", &ret->slowest_iteration_usec) < 0 ||
            wire_get_object(obj, "lateness", &lateness) < 0 ||
            decode_delays(lateness, &ret->lateness_samples, &ret->lateness_p50_usec,
                          &ret->has_lateness_p99, &ret->lateness_p99_usec,
                          &ret->lateness_max_usec) < 0 ||
            get_default_u64(lateness, "past_due", &ret->lateness_past_due) < 0)
                return -TIMERD_E_PROTOCOL;
        /* A service from before loop lag was measured: none. */
        r = vl_get_object(obj, "loop_lag", &loop_lag);
        if (r == -ENOENT)
                return 0;
        if (r < 0 || decode_delays(loop_lag, &ret->loop_lag_samples, &ret->loop_lag_p50_usec,
                                   &ret->has_loop_lag_p99, &ret->loop_lag_p99_usec,
                                   &ret->loop_lag_max_usec) < 0)
                return -TIMERD_E_PROTOCOL;
        return 0;
}

int wire_decode_status(json_object *obj, struct timerd_status *ret)
{
        const char *scope = NULL;

        *ret = (struct timerd_status){};
        if (get_string_into(obj, "epoch", ret->epoch, sizeof(ret->epoch)) < 0 ||
            get_string_into(obj, "version", ret->version, sizeof(ret->version)) < 0 ||
            get_string_into(obj, "backend", ret->backend, sizeof(ret->backend)) < 0 ||
            get_string_into(obj, "backend_reason", ret->backend_reason,
                            sizeof(ret->backend_reason)) < 0 ||
            get_string_into(obj, "store", ret->store, sizeof(ret->store)) < 0 ||
            get_optional_string(obj, "scope", &scope) < 0 || get_u64(obj, "pid", &ret->pid) < 0 ||
            get_u64(obj, "uptime_usec", &ret->uptime_usec) < 0 ||
            get_u64(obj, "timers", &ret->timers) < 0 ||
            get_u64(obj, "scheduled", &ret->scheduled) < 0 ||
            get_u64(obj, "running", &ret->running) < 0 ||
            get_u64(obj, "failed", &ret->failed) < 0 ||
            get_u64(obj, "pending", &ret->pending) < 0 ||
            get_u64(obj, "connections", &ret->connections) < 0 ||
            get_u64(obj, "waiters", &ret->waiters) < 0 ||
            get_u64(obj, "clock_changes", &ret->clock_changes) < 0 ||
            decode_capabilities(obj, ret->capabilities, sizeof(ret->capabilities)) < 0)
                return -TIMERD_E_PROTOCOL;
        /* A service from before scopes told everyone everything. */
        if (scope && strcmp(scope, "caller") == 0)
                return 0;
        if (scope && strcmp(scope, "host") != 0)
                return -TIMERD_E_PROTOCOL;
        ret->host_wide = true;
        return decode_activity(obj, ret);
}

static int decode_continuation(json_object *obj, struct timerd_continuation *ret)
{
        if (get_u64(obj, "epoch", &ret->epoch) < 0 || get_u64(obj, "nonce", &ret->nonce) < 0 ||
            get_u64(obj, "cycle", &ret->cycle) < 0)
                return -TIMERD_E_PROTOCOL;
        return 0;
}

static int decode_observation(json_object *obj, struct timerd_observation *ret)
{
        json_object *continuation;

        if (wire_get_object(obj, "continuation", &continuation) < 0 ||
            decode_continuation(continuation, &ret->continuation) < 0 ||
            get_u64(obj, "lease", &ret->lease) < 0 ||
            get_optional_u64(obj, "remaining_usec", &ret->has_remaining, &ret->remaining_usec) <
                0 ||
            get_string_into(obj, "timer", ret->timer, sizeof(ret->timer)) < 0 ||
            get_u64(obj, "alarms", &ret->alarms) < 0)
                return -TIMERD_E_PROTOCOL;
        return 0;
}

int wire_decode_sleep_result(json_object *parameters, struct timerd_sleep_result *ret)
{
        json_object *observation;

        *ret = (struct timerd_sleep_result){};
        if (get_bool(parameters, "elapsed", &ret->elapsed) < 0 ||
            get_optional_object(parameters, "observation", &observation) < 0)
                return -TIMERD_E_PROTOCOL;
        /* Exactly one of the two outcomes. */
        if (ret->elapsed == (observation != NULL))
                return -TIMERD_E_PROTOCOL;
        return observation ? decode_observation(observation, &ret->observation) : 0;
}

int wire_decode_finish_result(json_object *parameters, struct timerd_finish_result *ret)
{
        json_object *ticket, *continuation;

        *ret = (struct timerd_finish_result){};
        if (get_optional_object(parameters, "ticket", &ticket) < 0 ||
            get_optional_u64(parameters, "remaining_usec", &ret->has_remaining,
                             &ret->remaining_usec) < 0)
                return -TIMERD_E_PROTOCOL;
        if (!ticket)
                return 0;
        ret->has_ticket = true;
        if (wire_get_object(ticket, "continuation", &continuation) < 0 ||
            decode_continuation(continuation, &ret->ticket.continuation) < 0 ||
            get_u64(ticket, "nonce", &ret->ticket.nonce) < 0)
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

int wire_decode_event(json_object *obj, struct timerd_event *ret)
{
        const char *kind, *state;
        uint64_t owner;

        *ret = (struct timerd_event){};
        if (get_string(obj, "kind", &kind) < 0 || get_u64(obj, "owner", &owner) < 0 ||
            owner > UINT32_MAX || get_string_into(obj, "name", ret->name, sizeof(ret->name)) < 0 ||
            get_optional_u64(obj, "run", &ret->has_run, &ret->run) < 0 ||
            get_optional_string(obj, "state", &state) < 0 ||
            get_u64(obj, "realtime_usec", &ret->realtime_usec) < 0)
                return -TIMERD_E_PROTOCOL;
        ret->kind = event_kind_from_string(kind);
        ret->owner = (uint32_t)owner;
        ret->has_state = state != NULL;
        ret->state = state ? vl_state_from_string(state) : TIMERD_STATE_INVALID;
        if (ret->kind == TIMERD_EVENT_INVALID || (state && ret->state == TIMERD_STATE_INVALID))
                return -TIMERD_E_PROTOCOL;
        return 0;
}
