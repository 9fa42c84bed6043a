/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "service/params.h"

#include <assert.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "base/arith.h"
#include "service/zones.h"
#include "varlink/idl.h"
#include "varlink/message.h"
#include "varlink/names.h"

/* Every field name has a place in a field map. */
static_assert(_VL_IDL_FIELD_MAX <= VL_VIEW_FIELDS_MAX, "more field names than a map holds");

int params_invalid(struct param_error *err, const char *path)
{
        return params_fail(err, -TIMERD_E_INVALID_PARAMETER, NULL, path, 0);
}

int params_fail(struct param_error *err, int failure, const char *name, const char *detail,
                uint64_t value)
{
        *err = (struct param_error){.error = -failure, .value = value};
        if (name)
                snprintf(err->name, sizeof(err->name), "%s", name);
        if (detail)
                snprintf(err->detail, sizeof(err->detail), "%s", detail);
        return failure;
}

/* Where a value lies in the call, as a chain up to the parameters: written out only for an
 * error, so that checking a good call costs no formatting. */
struct field_path {
        const struct field_path *parent;
        const char *key;
};

/* The dotted path ("declaration.frobnicate"), cut short when it does not fit. */
static void field_path_write(const struct field_path *path, char *buf, size_t size)
{
        size_t len;

        if (path->parent)
                field_path_write(path->parent, buf, size);
        len = strlen(buf);
        snprintf(buf + len, size - len, "%s%s", len > 0 ? "." : "", path->key);
}

static int field_invalid(struct param_error *err, const struct field_path *path)
{
        char text[sizeof(err->detail)] = "";

        field_path_write(path, text, sizeof(text));
        return params_invalid(err, text);
}

/* What a call's check is at: the text, its tokens and the maps made so far. */
struct check {
        const char *text;
        const struct vl_token *tokens;
        struct params_fields *maps;
        struct param_error *err;
};

static int check_struct(struct check *c, const struct vl_idl_struct *type, size_t object,
                        struct vl_view_fields *map, const struct field_path *parent);

/* An int within range (of a field or an array's element). */
static int check_int(struct check *c, const struct vl_idl_field *f, size_t v,
                     const struct field_path *path)
{
        const struct vl_token *t = &c->tokens[v];

        if (f->kind == VL_IDL_INT && t->type == VL_TOKEN_NUMBER && t->integer &&
            !vl_idl_int_in_range(c->text, t))
                return field_invalid(c->err, path);
        return 0;
}

/* One value of a field: an int within range, a struct without unknown fields, which gets a map
 * of its own (*ret_map; NULL for any other value). The rest (types, enums, required fields) is
 * the handler's to check. */
static int check_value(struct check *c, const struct vl_idl_field *f, size_t v,
                       const struct field_path *path, const struct vl_view_fields **ret_map)
{
        struct vl_view_fields *map;

        *ret_map = NULL;
        if (f->kind != VL_IDL_STRUCT || c->tokens[v].type != VL_TOKEN_OBJECT)
                return check_int(c, f, v, path);
        /* Each struct field of the IDL's tree is checked once (the last of duplicates), and
         * embed-idl.py counted them, arrays of structs refused. */
        assert(c->maps->n < VL_IDL_OBJECTS_MAX);
        map = &c->maps->object[c->maps->n++];
        *ret_map = map;
        return check_struct(c, f->fields, v, map, path);
}

/*
 * Each field in the order of its first key, with the value of its last, as a tree holds a
 * duplicate: the first key no field declares is the one named, after the fields whose first key
 * comes before it. One pass maps the keys to fields (into map, by the field's id), a second
 * checks each field's value once.
 */
static int check_struct(struct check *c, const struct vl_idl_struct *type, size_t object,
                        struct vl_view_fields *map, const struct field_path *parent)
{
        const struct vl_token *tokens = c->tokens;
        uint8_t order[VL_IDL_FIELDS_MAX]; /* the fields seen before an unknown key, in order */
        uint64_t seen = 0;                /* a bit for each field */
        size_t n_order = 0, unknown = 0;  /* unknown: the first unknown key's token; 0: none */

        map->present = 0;
        for (size_t m = 0, k = object + 1; m < tokens[object].size; m++, k = tokens[k + 1].next) {
                size_t f = vl_idl_field_index(type, c->text + tokens[k].start, tokens[k].len);

                if (f == type->n_fields) {
                        unknown = unknown ? unknown : k;
                        continue;
                }
                if (!(seen & UINT64_C(1) << f) && !unknown)
                        order[n_order++] = (uint8_t)f;
                seen |= UINT64_C(1) << f;
                map->value[type->fields[f].id] = (uint32_t)(k + 1);
        }
        for (size_t i = 0; i < n_order; i++) {
                const struct vl_idl_field *f = &type->fields[order[i]];
                const struct field_path path = {.parent = parent, .key = f->name};
                size_t v = map->value[f->id];
                int r;

                if (tokens[v].type == VL_TOKEN_ARRAY && f->array) {
                        for (size_t e = 0, j = v + 1; e < tokens[v].size; e++, j = tokens[j].next)
                                if ((r = check_int(c, f, j, &path)) < 0)
                                        return r;
                } else if ((r = check_value(c, f, v, &path, &map->object[f->id])) < 0)
                        return r;
                map->present |= UINT64_C(1) << f->id;
        }
        if (unknown) {
                const struct field_path path = {.parent = parent,
                                                .key = c->text + tokens[unknown].start};

                return field_invalid(c->err, &path);
        }
        return 0;
}

int params_check(const struct vl_idl_struct *type, const struct vl_view *params,
                 struct params_fields *fields, struct vl_view *ret, struct param_error *err)
{
        struct check c = {params->text, params->tokens, fields, err};

        *ret = *params;
        if (!params->tokens)
                return 0;
        fields->n = 1;
        ret->fields = &fields->object[0];
        return check_struct(&c, type, params->index, &fields->object[0], NULL);
}

int params_owner(const struct vl_view *params, uid_t caller, bool privileged, uint32_t *ret,
                 struct param_error *err)
{
        uint64_t owner;
        int r = vl_view_get_u64(params, VL_IDL_FIELD_OWNER, &owner);
        if (r == -ENOENT) {
                *ret = (uint32_t)caller;
                return 0;
        }
        if (r < 0 || owner >= UINT32_MAX)
                return params_invalid(err, "owner");
        if (owner != caller && !privileged)
                return params_fail(err, -TIMERD_E_PERMISSION_DENIED, NULL, NULL, 0);
        *ret = (uint32_t)owner;
        return 0;
}

int params_string(const struct vl_view *obj, enum vl_idl_field_id field, const char *path,
                  const char **ret, struct param_error *err)
{
        int r = vl_view_get_string(obj, field, ret);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return params_invalid(err, path);
        return 1;
}

/* A valid timer name in obj's "name" (reported as `path`); 0 when absent. */
static int name_field(const struct vl_view *obj, const char *path, const char **ret,
                      struct param_error *err)
{
        struct vl_view v;
        int r = params_string(obj, VL_IDL_FIELD_NAME, path, ret, err);
        /* A string the codec refuses (an embedded NUL) is a bad name, not a bad type. The reply
         * names the parameter, never the refused bytes. */
        if ((r < 0 && vl_view_field(obj, VL_IDL_FIELD_NAME, &v) == 0 &&
             vl_view_type(&v) == VL_TOKEN_STRING) ||
            (r > 0 && !registry_name_valid(*ret)))
                return params_fail(err, -TIMERD_E_INVALID_NAME, NULL, path, 0);
        return r;
}

int params_name(const struct vl_view *obj, bool optional, const char **ret, struct param_error *err)
{
        int r = name_field(obj, "name", ret, err);
        if (r == 0 && !optional)
                return params_invalid(err, "name");
        if (r == 0)
                *ret = NULL;
        return r < 0 ? r : 0;
}

static int get_u64_field(const struct vl_view *obj, enum vl_idl_field_id field, const char *path,
                         uint64_t def, uint64_t *ret, struct param_error *err)
{
        int r = vl_view_get_u64(obj, field, ret);
        if (r == -ENOENT) {
                *ret = def;
                return 0;
        }
        return r < 0 ? params_invalid(err, path) : 0;
}

/*
 * What a timer's signal can sensibly be: SIGALRM, SIGUSR1, SIGUSR2, or a real-time signal as the
 * client's libc numbers them. glibc keeps 32 and 33 for itself (its SIGRTMIN is 34), musl 32 to
 * 34: 34..64 (the kernel's last) are the real-time signals a client may name. Never one that
 * stops or kills (SIGKILL, SIGSTOP, SIGTERM, …) or a libc's own.
 */
#define TIMER_SIGNAL_RT_FIRST 34
#define TIMER_SIGNAL_RT_LAST  64

static bool timer_signal_valid(uint64_t signo)
{
        return signo == SIGALRM || signo == SIGUSR1 || signo == SIGUSR2 ||
               (signo >= TIMER_SIGNAL_RT_FIRST && signo <= TIMER_SIGNAL_RT_LAST);
}

int params_signal(const struct vl_view *params, int *ret, struct param_error *err)
{
        uint64_t signo;

        if (vl_view_get_u64(params, VL_IDL_FIELD_SIGNAL, &signo) < 0 || !timer_signal_valid(signo))
                return params_invalid(err, "signal");
        *ret = (int)signo;
        return 0;
}

/* Only signal delivery takes a signal: SIGALRM unless named. */
static int declaration_signal(const struct vl_view *d, struct td_declaration *ret,
                              struct param_error *err)
{
        uint64_t signo;
        int r = vl_view_get_u64(d, VL_IDL_FIELD_SIGNAL, &signo);

        if (r == -ENOENT) {
                ret->signo = ret->delivery == TIMERD_DELIVERY_SIGNAL ? SIGALRM : 0;
                return 0;
        }
        if (r < 0 || ret->delivery != TIMERD_DELIVERY_SIGNAL || !timer_signal_valid(signo))
                return params_invalid(err, "declaration.signal");
        ret->signo = (int)signo;
        return 0;
}

/* InvalidSchedule for the expression at `path`: which part is bad, and why. */
static int calendar_refused(struct param_error *err, const char *path, const char *text,
                            const struct calendar_error *error)
{
        size_t offset = error->offset < strlen(text) ? error->offset : strlen(text);

        params_fail(err, -TIMERD_E_INVALID_SCHEDULE, NULL,
                    error->code == CALENDAR_E_NEVER ? "calendar_never" : "calendar_invalid", 0);
        snprintf(err->description, sizeof(err->description), "%s at byte %zu (\"%.16s\"): %s", path,
                 offset, text + offset,
                 error->code == CALENDAR_E_ZONE ? "a zone other than declaration.timezone"
                                                : calendar_error_message(error->code));
        return -TIMERD_E_INVALID_SCHEDULE;
}

/* The expressions of the field named `field` (an array of strings) appended to source as lines,
 * a cron one marked. The IDL path of each is field[i]. */
static int calendar_lines(const struct vl_view *d, enum vl_idl_field_id id, const char *field,
                          bool cron, char *source, size_t *len, size_t *n, struct param_error *err)
{
        char path[64];
        struct vl_view a, v;
        int r = vl_view_get_array(d, id, &a);

        /* The paths are written only for an error: most Registers have no calendar. */
        if (r == -ENOENT)
                return 0;
        if (r < 0) {
                snprintf(path, sizeof(path), "declaration.%s", field);
                return params_invalid(err, path);
        }
        v = vl_view_first(&a);
        for (size_t i = 0; i < vl_view_size(&a); i++, v = vl_view_following(&v)) {
                const char *text;
                int k;

                if (vl_view_string(&v, &text) < 0 || strchr(text, '\n')) {
                        snprintf(path, sizeof(path), "declaration.%s[%zu]", field, i);
                        return params_invalid(err, path);
                }
                k = snprintf(source + *len, TD_CALENDAR_SOURCE_MAX + 1 - *len, "%s%s%s",
                             *n > 0 ? "\n" : "", cron ? TD_CALENDAR_CRON_PREFIX : "", text);
                if (k < 0 || (size_t)k > TD_CALENDAR_SOURCE_MAX - *len)
                        return params_invalid(err, "declaration.calendar");
                *len += (size_t)k;
                (*n)++;
        }
        return 0;
}

/* A calendar timer's schedule: expressions, zone, fixed delay. Absent for other policies. */
static int params_calendar(const struct vl_view *d, struct zones *zones, struct td_declaration *ret,
                           struct param_error *err)
{
        char source[TD_CALENDAR_SOURCE_MAX + 1];
        struct td_calendar_error cal_error;
        const struct td_zone *zone;
        const char *zone_name = NULL;
        bool fixed = false;
        size_t len = 0, n = 0;
        const struct td_calendar *c;
        int r;

        /* Not the whole array: it is written only when a calendar is given. */
        source[0] = 0;
        if ((r = calendar_lines(d, VL_IDL_FIELD_CALENDAR, "calendar", false, source, &len, &n,
                                err)) < 0 ||
            (r = calendar_lines(d, VL_IDL_FIELD_CRON, "cron", true, source, &len, &n, err)) < 0)
                return r;
        if (params_string(d, VL_IDL_FIELD_TIMEZONE, "declaration.timezone", &zone_name, err) < 0)
                return -TIMERD_E_INVALID_PARAMETER;
        if (vl_view_get_bool(d, VL_IDL_FIELD_FIXED_RANDOM_DELAY, &fixed) == -EINVAL)
                return params_invalid(err, "declaration.fixed_random_delay");
        /* The core tells a schedule on the wrong policy (or none on calendar) as InvalidSchedule.
         */
        if (n == 0) {
                if (zone_name || fixed)
                        return params_invalid(err, zone_name ? "declaration.timezone"
                                                             : "declaration.fixed_random_delay");
                return 0;
        }
        r = zones_get(zones, zone_name, &zone);
        if (r == -ENOMEM)
                return params_fail(err, r, NULL, NULL, 0);
        if (r < 0)
                return params_invalid(err, "declaration.timezone");
        r = td_calendar_new(zones_calendars(zones), source, zone, fixed, &c, &cal_error);
        if (r == -ENOMEM)
                return params_fail(err, r, NULL, NULL, 0);
        if (r < 0) {
                /* Which array and index the bad line came from. */
                const char *p = source;
                char path[64];

                for (size_t i = 0; i < cal_error.line; i++)
                        p = strchr(p, '\n') + 1;
                bool cron =
                    strncmp(p, TD_CALENDAR_CRON_PREFIX, strlen(TD_CALENDAR_CRON_PREFIX)) == 0;
                size_t index = cal_error.line, l = strcspn(p, "\n");
                char text[TD_CALENDAR_SOURCE_MAX + 1];

                if (cron) {
                        struct vl_view a;
                        index -= vl_view_get_array(d, VL_IDL_FIELD_CALENDAR, &a) < 0
                                     ? 0
                                     : vl_view_size(&a);
                        p += strlen(TD_CALENDAR_CRON_PREFIX);
                        l -= strlen(TD_CALENDAR_CRON_PREFIX);
                }
                memcpy(text, p, l);
                text[l] = 0;
                snprintf(path, sizeof(path), "declaration.%s[%zu]", cron ? "cron" : "calendar",
                         index);
                return calendar_refused(err, path, text, &cal_error.error);
        }
        ret->calendar = c;
        return 0;
}

int params_declaration(const struct vl_view *params, struct zones *zones,
                       struct td_declaration *ret, struct param_error *err)
{
        struct vl_view d;
        const char *s;
        int r;

        if (vl_view_get_object(params, VL_IDL_FIELD_DECLARATION, &d) < 0)
                return params_invalid(err, "declaration");
        *ret = (struct td_declaration){
            .clock = TIMERD_CLOCK_MONOTONIC,
            .lifetime = TIMERD_LIFETIME_TRANSIENT,
            .delivery = TIMERD_DELIVERY_NOTIFY,
            .catch_up = true,
        };

        if (params_string(&d, VL_IDL_FIELD_POLICY, "declaration.policy", &s, err) <= 0 ||
            (int)(ret->policy = vl_policy_from_string(s)) < 0)
                return params_invalid(err, "declaration.policy");
        /* Calendar timers run on the wall clock. */
        if (ret->policy == TIMERD_POLICY_CALENDAR)
                ret->clock = TIMERD_CLOCK_REALTIME;
        r = params_string(&d, VL_IDL_FIELD_CLOCK, "declaration.clock", &s, err);
        if (r < 0 || (r > 0 && (int)(ret->clock = vl_clock_from_string(s)) < 0))
                return params_invalid(err, "declaration.clock");
        r = params_string(&d, VL_IDL_FIELD_LIFETIME, "declaration.lifetime", &s, err);
        if (r < 0 || (r > 0 && (int)(ret->lifetime = vl_lifetime_from_string(s)) < 0))
                return params_invalid(err, "declaration.lifetime");
        r = params_string(&d, VL_IDL_FIELD_DELIVERY, "declaration.delivery", &s, err);
        if (r < 0 || (r > 0 && (int)(ret->delivery = vl_delivery_from_string(s)) < 0))
                return params_invalid(err, "declaration.delivery");
        r = get_u64_field(&d, VL_IDL_FIELD_CADENCE_USEC, "declaration.cadence_usec", 0,
                          &ret->cadence_usec, err);
        if (r < 0)
                return r;
        r = declaration_signal(&d, ret, err);
        if (r < 0)
                return r;
        if (vl_view_get_bool(&d, VL_IDL_FIELD_CATCH_UP, &ret->catch_up) == -EINVAL)
                return params_invalid(err, "declaration.catch_up");
        r = get_u64_field(&d, VL_IDL_FIELD_RANDOMIZED_DELAY_USEC,
                          "declaration.randomized_delay_usec", 0, &ret->randomized_delay_usec, err);
        if (r < 0)
                return r;
        /* Its bounds are the core's to check (InvalidParameter, InvalidSchedule). */
        r = get_u64_field(&d, VL_IDL_FIELD_HANDOVER_USEC, "declaration.handover_usec", 0,
                          &ret->handover_usec, err);
        if (r < 0)
                return r;
        r = get_u64_field(&d, VL_IDL_FIELD_ACCURACY_USEC, "declaration.accuracy_usec", 0,
                          &ret->accuracy_usec, err);
        if (r < 0)
                return r;
        /* Last: what it allocates the caller releases (td_calendar_unref()). */
        return params_calendar(&d, zones, ret, err);
}

/* A claim's or a token's fields, named in the replies that refuse them. */
static int parse_handle_object(const struct vl_view *obj, uint32_t owner, bool is_token,
                               struct td_handle *ret, struct param_error *err)
{
        const char *name;

        *ret = (struct td_handle){.owner = owner};
        int r = name_field(obj, is_token ? "token.name" : "claim.name", &name, err);
        if (r == 0)
                return params_invalid(err, is_token ? "token.name" : "claim.name");
        if (r < 0)
                return r;
        ret->name = name;
        if (vl_view_get_u64(obj, VL_IDL_FIELD_GENERATION, &ret->generation) < 0)
                return params_invalid(err, is_token ? "token.generation" : "claim.generation");
        if (is_token && (vl_view_get_u64(obj, VL_IDL_FIELD_RUN, &ret->run) < 0 || ret->run == 0))
                return params_invalid(err, "token.run");
        return 0;
}

int params_handle(const struct vl_view *params, uint32_t owner, bool allow_token,
                  struct td_handle *ret, struct param_error *err)
{
        struct vl_view claim, token;
        int rc = vl_view_get_object(params, VL_IDL_FIELD_CLAIM, &claim);
        int rt = allow_token ? vl_view_get_object(params, VL_IDL_FIELD_TOKEN, &token) : -ENOENT;

        if (rc < 0 && rc != -ENOENT)
                return params_invalid(err, "claim");
        if (rt < 0 && rt != -ENOENT)
                return params_invalid(err, "token");
        if ((rc == 0) == (rt == 0))
                return params_invalid(err, "claim");
        if (rc == 0)
                return parse_handle_object(&claim, owner, false, ret, err);
        return parse_handle_object(&token, owner, true, ret, err);
}

int params_token(const struct vl_view *params, uint32_t owner, struct td_handle *ret,
                 struct param_error *err)
{
        struct vl_view token;
        if (vl_view_get_object(params, VL_IDL_FIELD_TOKEN, &token) < 0)
                return params_invalid(err, "token");
        return parse_handle_object(&token, owner, true, ret, err);
}

int params_when(const struct vl_view *params, enum vl_idl_field_id absolute,
                const char *absolute_field, uint64_t now, uint64_t *ret, struct param_error *err)
{
        uint64_t v;
        int ra = vl_view_get_u64(params, absolute, &v);
        if (ra < 0 && ra != -ENOENT)
                return params_invalid(err, absolute_field);
        if (ra == 0) {
                if (vl_view_get_u64(params, VL_IDL_FIELD_DELAY_USEC, &(uint64_t){0}) != -ENOENT)
                        return params_invalid(err, "delay_usec");
                *ret = v;
                return 1;
        }
        int rd = vl_view_get_u64(params, VL_IDL_FIELD_DELAY_USEC, &v);
        if (rd == -ENOENT)
                return 0;
        if (rd < 0)
                return params_invalid(err, "delay_usec");
        if (value_add_overflow(now, v, ret))
                return params_fail(err, -TIMERD_E_OVERFLOW, NULL, "delay_usec", 0);
        return 1;
}

json_object *params_error_json(const struct param_error *err)
{
        json_object *o = json_object_new_object();
        if (!o)
                return NULL;
        switch (err->error) {
        case TIMERD_E_INVALID_PARAMETER:
        case TIMERD_E_INVALID_NAME:
                vl_add_string(o, "parameter", err->detail);
                break;
        case TIMERD_E_NOT_FOUND:
        case TIMERD_E_REGISTRATION_EXPIRED:
        case TIMERD_E_RECONCILIATION_CONFLICT:
        case TIMERD_E_PROVIDER_BINDING_FAILED:
        case TIMERD_E_NOT_RUNNING:
                vl_add_string(o, "name", err->name);
                break;
        case TIMERD_E_ALREADY_REGISTERED:
                vl_add_string(o, "name", err->name);
                vl_add_u64(o, "generation", err->value);
                break;
        case TIMERD_E_SIGNAL_NOT_OUTSTANDING:
                vl_add_u64(o, "generation", err->value);
                break;
        case TIMERD_E_WRONG_POLICY:
                vl_add_string(o, "name", err->name);
                vl_add_string(o, "policy", err->detail);
                break;
        case TIMERD_E_INVALID_SCHEDULE:
                vl_add_string(o, "reason", err->detail);
                vl_add_string(o, "description", err->description);
                break;
        case TIMERD_E_OVERFLOW:
        case TIMERD_E_UNSUPPORTED:
                vl_add_string(o, "what", err->detail);
                break;
        case TIMERD_E_CLOCK_UNAVAILABLE:
                vl_add_string(o, "clock", err->detail);
                break;
        case TIMERD_E_LIMIT_EXCEEDED:
                vl_add_string(o, "limit", err->detail);
                vl_add_u64(o, "max", err->value);
                break;
        default:
                break;
        }
        return o;
}
