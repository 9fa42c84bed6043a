/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clockid.h"
#include "service/api.h"
#include "service/io/clock.h"
#include "service/events.h"
#include "service/io/peer.h"
#include "service/service.h"
#include "service/signals.h"
#include "service/store.h"
#include "varlink/names.h"

/* InvalidSchedule's reason, as the IDL names it, and what it means. */
static void schedule_problem_describe(enum td_schedule_problem problem, uint64_t min_cadence_usec,
                                      struct param_error *err)
{
        static const char *const reasons[] = {
            [TD_SCHEDULE_CADENCE_MISSING] = "cadence_missing",
            [TD_SCHEDULE_CADENCE_ON_ONCE] = "cadence_on_once",
            [TD_SCHEDULE_CADENCE_BELOW_MINIMUM] = "cadence_below_minimum",
            [TD_SCHEDULE_HANDOVER_NOT_SHORTER] = "handover_not_shorter",
            [TD_SCHEDULE_DEADLINE_MISSING] = "deadline_missing",
            [TD_SCHEDULE_CALENDAR_MISSING] = "calendar_missing",
            [TD_SCHEDULE_CALENDAR_CLOCK] = "calendar_clock",
            [TD_SCHEDULE_CALENDAR_NEVER] = "calendar_never",
        };
        static const char *const descriptions[] = {
            [TD_SCHEDULE_CADENCE_MISSING] = "this policy needs a cadence > 0",
            [TD_SCHEDULE_CADENCE_ON_ONCE] = "a once timer takes no cadence",
            [TD_SCHEDULE_HANDOVER_NOT_SHORTER] = "the handover must be shorter than the cadence",
            [TD_SCHEDULE_DEADLINE_MISSING] =
                "a once timer is scheduled only at a deadline: give deadline_usec",
            [TD_SCHEDULE_CALENDAR_MISSING] = "the calendar policy needs declaration.calendar or "
                                             ".cron; no other policy takes them",
            [TD_SCHEDULE_CALENDAR_CLOCK] = "a calendar timer runs on realtime or realtime_alarm",
            [TD_SCHEDULE_CALENDAR_NEVER] = "the calendar has no elapse left",
        };

        /* The registry names every InvalidSchedule it returns. */
        assert(problem > TD_SCHEDULE_OK && problem <= TD_SCHEDULE_CALENDAR_NEVER);
        snprintf(err->detail, sizeof(err->detail), "%s", reasons[problem]);
        if (problem == TD_SCHEDULE_CADENCE_BELOW_MINIMUM)
                snprintf(err->description, sizeof(err->description),
                         "the cadence is shorter than the service's min-cadence (%llu usec)",
                         (unsigned long long)min_cadence_usec);
        else
                snprintf(err->description, sizeof(err->description), "%s", descriptions[problem]);
}

/* LimitExceeded's `limit` for a bound of the registry. */
static const char *limit_name(enum td_limit limit)
{
        switch (limit) {
        case TD_LIMIT_TIMERS_PER_OWNER:
                return "timers_per_owner";
        case TD_LIMIT_TIMERS_SHARE:
                return "timers_share";
        case TD_LIMIT_NONE:
        case TD_LIMIT_TIMERS:
                break;
        }
        return "timers";
}

/* Name what a core failure was about, as its reply should say; an Overflow names the field
 * whose value the sum that would leave the wire's int64 took. */
static int core_failure(struct service *s, struct param_error *err, struct td_transition t_failed,
                        uint32_t owner, const char *name, const char *overflow_field)
{
        int failure = t_failed.failure;
        struct td_snapshot t;
        bool known = name && registry_get(s->registry, owner, name, &t) == 0;

        switch (-failure) {
        case TIMERD_E_WRONG_POLICY:
                return params_fail(err, failure, name,
                                   known ? vl_policy_to_string(t.declaration.policy) : "", 0);
        case TIMERD_E_ALREADY_REGISTERED:
                return params_fail(err, failure, name, NULL, known ? t.generation : 0);
        case TIMERD_E_INVALID_PARAMETER:
                /* What params.c passes on unchecked: the declaration's handover. */
                return params_fail(err, failure, name, "declaration", 0);
        case TIMERD_E_INVALID_SCHEDULE:
                params_fail(err, failure, name, NULL, 0);
                schedule_problem_describe(t_failed.schedule_problem, s->config.min_cadence_usec,
                                          err);
                return failure;
        case TIMERD_E_OVERFLOW:
                return params_fail(err, failure, name, overflow_field, 0);
        case TIMERD_E_UNSUPPORTED:
                return params_fail(err, failure, name, "delivery", 0);
        case TIMERD_E_LIMIT_EXCEEDED:
                /* The max is the bound the caller met: the table less the reserved share for a
                 * caller that is not privileged, or that caller's share of it. */
                return params_fail(err, failure, name, limit_name(t_failed.limit),
                                   t_failed.limit_max);
        default:
                return params_fail(err, failure, name, NULL, 0);
        }
}

/* After applying: a timer whose kernel timer could not be armed failed the call that armed it. */
static int check_binding(struct service *s, struct param_error *err, uint32_t owner,
                         const char *name)
{
        struct td_brief t;

        /* No failed timer at all, the usual case: no look-up. */
        if (!registry_has_failed(s->registry))
                return 0;
        if (registry_get_brief(s->registry, owner, name, &t) == 0 &&
            t.state == TIMERD_STATE_FAILED && t.failure == TIMERD_FAILURE_PROVIDER_BINDING)
                return params_fail(err, -TIMERD_E_PROVIDER_BINDING_FAILED, name, NULL, 0);
        return 0;
}

/* Apply t; its failure, or a binding failure it caused, fills err. */
static int run_transition(struct service *s, const struct td_now *now, struct td_transition t,
                          struct param_error *err, uint32_t owner, const char *name,
                          const char *overflow_field)
{
        if (t.failure < 0) {
                api_apply(s, now, t);
                return core_failure(s, err, t, owner, name, overflow_field);
        }
        /* A Wait on a timer this call cancelled, removed or ended learns it there. */
        api_apply(s, now, t);
        return check_binding(s, err, owner, name);
}

/* The method's reply, written straight into p's output: begun after everything the call
 * changed was applied and published, so that nothing else is sent to p meanwhile. */
static struct vl_text *reply_begin(struct service *s, struct peer *p, struct vl_text **reply)
{
        return *reply = service_reply_begin(s, p, false, 0);
}

static void claim_write(struct vl_text *o, const char *name, uint64_t generation)
{
        vl_text_object_begin(o, "claim");
        vl_text_add_string(o, "name", name);
        vl_text_add_u64(o, "generation", generation);
        vl_text_object_end(o);
}

/* What the declaration needs from the service and the caller: an alarm clock needs
 * CAP_WAKE_ALARM; a signal needs the caller's process pinned by a pidfd, the only target. */
static int check_means(struct service *s, const struct peer *p, const struct td_declaration *d,
                       struct param_error *err)
{
        if (clock_is_alarm(d->clock) && !s->alarm_clocks)
                return params_fail(err, -TIMERD_E_CLOCK_UNAVAILABLE, NULL,
                                   vl_clock_to_string(d->clock), 0);
        if (d->delivery == TIMERD_DELIVERY_SIGNAL && p->pidfd < 0)
                return params_fail(err, -TIMERD_E_UNSUPPORTED, NULL,
                                   "signal delivery: the calling process is unknown", 0);
        return 0;
}

/* Register with a declaration read (and, for a calendar, holding its schedule). */
static int register_call(struct service *s, struct peer *p, const struct vl_view *params,
                         const struct td_now *now, struct td_register_args *a,
                         uint64_t *ret_generation, struct param_error *err)
{
        int r = check_means(s, p, &a->declaration, err);

        if (r < 0)
                return r;
        if (vl_view_get_bool(params, VL_IDL_FIELD_REPLACE, &a->replace) == -EINVAL)
                return params_invalid(err, "replace");
        r = params_when(params, VL_IDL_FIELD_START_USEC, "start_usec",
                        now->usec[a->declaration.clock], &a->start_usec, err);
        if (r < 0)
                return r;
        a->has_start = r > 0;
        /* Its first deadline or the one after it: start (or now) + cadence. */
        return run_transition(s, now, registry_register(s->registry, now, a, ret_generation), err,
                              a->caller.uid, a->name, "declaration.cadence_usec");
}

static int do_register(struct service *s, struct peer *p, const struct vl_view *params,
                       const struct td_now *now, struct vl_text **reply, struct param_error *err)
{
        struct td_register_args a = {.caller = {.session = p->session},
                                     .privileged = p->privileged};
        uint64_t generation;
        int r;

        if ((r = params_owner(params, p->uid, p->privileged, &a.caller.uid, err)) < 0 ||
            (r = params_name(params, false, &a.name, err)) < 0 ||
            (r = params_declaration(params, s->zones, &a.declaration, err)) < 0)
                return r;
        r = register_call(s, p, params, now, &a, &generation, err);
        td_calendar_unref(a.declaration.calendar);
        if (r < 0)
                return r;
        events_publish(s, EVENT_REGISTERED, a.caller.uid, a.name, 0);
        claim_write(reply_begin(s, p, reply), a.name, generation);
        return 0;
}

/* Reconcile with a declaration read (and, for a calendar, holding its schedule). */
static int reconcile_call(struct service *s, struct peer *p, const struct vl_view *params,
                          const struct td_now *now, struct td_reconcile_args *a,
                          uint64_t *ret_generation, bool *ret_created, struct param_error *err)
{
        const char *desired;
        int r = check_means(s, p, &a->declaration, err);

        if (r < 0)
                return r;
        if (params_string(params, VL_IDL_FIELD_DESIRED, "desired", &desired, err) <= 0 ||
            (int)(a->desired = vl_desired_from_string(desired)) < 0)
                return params_invalid(err, "desired");
        r = params_when(params, VL_IDL_FIELD_DEADLINE_USEC, "deadline_usec",
                        now->usec[a->declaration.clock], &a->deadline_usec, err);
        if (r < 0)
                return r;
        a->has_deadline = r > 0;
        if (a->desired == TIMERD_DESIRED_EXACT && !a->has_deadline)
                return params_invalid(err, "deadline_usec");
        a->caller_is_owner = a->caller.uid == p->uid;
        return run_transition(s, now,
                              registry_reconcile(s->registry, now, a, ret_generation, ret_created),
                              err, a->caller.uid, a->name, "declaration.cadence_usec");
}

static int do_reconcile(struct service *s, struct peer *p, const struct vl_view *params,
                        const struct td_now *now, struct vl_text **reply, struct param_error *err)
{
        struct td_reconcile_args a = {.caller = {.session = p->session},
                                      .privileged = p->privileged};
        uint64_t generation;
        bool created;
        int r;

        if ((r = params_owner(params, p->uid, p->privileged, &a.caller.uid, err)) < 0 ||
            (r = params_name(params, false, &a.name, err)) < 0 ||
            (r = params_declaration(params, s->zones, &a.declaration, err)) < 0)
                return r;
        r = reconcile_call(s, p, params, now, &a, &generation, &created, err);
        td_calendar_unref(a.declaration.calendar);
        if (r < 0)
                return r;
        events_publish(s, EVENT_RECONCILED, a.caller.uid, a.name, 0);
        /* Re-pinned to the caller: a firing held while no process was pinned goes now. */
        if (a.caller_is_owner && a.declaration.delivery == TIMERD_DELIVERY_SIGNAL)
                signals_deliver_held(s, now, a.caller.uid, a.name, p->session);
        struct vl_text *o = reply_begin(s, p, reply);
        claim_write(o, a.name, generation);
        vl_text_add_bool(o, "created", created);
        return 0;
}

/* The handle of a control call, and the clock of its timer (for relative times). */
static int control_handle(struct service *s, struct peer *p, const struct vl_view *params,
                          bool allow_token, struct td_handle *h, enum timerd_clock *ret_clock,
                          struct param_error *err)
{
        struct td_brief t;
        uint32_t owner;
        int r;

        if ((r = params_owner(params, p->uid, p->privileged, &owner, err)) < 0 ||
            (r = params_handle(params, owner, allow_token, h, err)) < 0)
                return r;
        r = registry_get_brief(s->registry, owner, h->name, &t);
        if (r < 0)
                return params_fail(err, r, h->name, NULL, 0);
        *ret_clock = t.clock;
        return 0;
}

static int do_schedule(struct service *s, struct peer *p, const struct vl_view *params,
                       const struct td_now *now, struct vl_text **reply, struct param_error *err)
{
        struct td_handle h;
        enum timerd_clock clock = TIMERD_CLOCK_MONOTONIC;
        uint64_t deadline;
        int r;

        if ((r = control_handle(s, p, params, true, &h, &clock, err)) < 0)
                return r;
        r = params_when(params, VL_IDL_FIELD_DEADLINE_USEC, "deadline_usec", now->usec[clock],
                        &deadline, err);
        if (r < 0)
                return r;
        if (r == 0)
                return params_invalid(err, "deadline_usec");
        r = run_transition(s, now, registry_schedule(s->registry, now, &h, deadline), err, h.owner,
                           h.name, "deadline_usec");
        if (r < 0)
                return r;
        events_publish(s, EVENT_SCHEDULED, h.owner, h.name, 0);
        reply_begin(s, p, reply);
        return 0;
}

static int do_reschedule(struct service *s, struct peer *p, const struct vl_view *params,
                         const struct td_now *now, struct vl_text **reply, struct param_error *err)
{
        struct td_reschedule_result previous;
        struct td_handle h;
        enum timerd_clock clock = TIMERD_CLOCK_MONOTONIC;
        uint64_t deadline = 0, cadence = 0;
        int r;

        if ((r = control_handle(s, p, params, true, &h, &clock, err)) < 0)
                return r;
        int has_deadline = params_when(params, VL_IDL_FIELD_DEADLINE_USEC, "deadline_usec",
                                       now->usec[clock], &deadline, err);
        if (has_deadline < 0)
                return has_deadline;
        r = vl_view_get_u64(params, VL_IDL_FIELD_CADENCE_USEC, &cadence);
        if (r < 0 && r != -ENOENT)
                return params_invalid(err, "cadence_usec");
        r = run_transition(s, now,
                           registry_reschedule(s->registry, now, &h, has_deadline > 0, deadline,
                                               r == 0, cadence, &previous),
                           err, h.owner, h.name, "cadence_usec");
        if (r < 0)
                return r;
        events_publish(s, EVENT_RESCHEDULED, h.owner, h.name, 0);
        struct vl_text *o = reply_begin(s, p, reply);
        vl_text_add_u64(o, "remaining_usec", previous.previous_remaining_usec);
        vl_text_add_u64(o, "cadence_usec", previous.previous_cadence_usec);
        return 0;
}

/* A control call that takes nothing but its handle. */
typedef struct td_transition (*handle_op_fn)(struct registry *r, const struct td_now *now,
                                             const struct td_handle *h);

static int control_simple(struct service *s, struct peer *p, const struct vl_view *params,
                          const struct td_now *now, struct vl_text **reply, struct param_error *err,
                          handle_op_fn op, bool allow_token, bool removes, enum event_kind event)
{
        struct td_handle h;
        struct td_transition t;
        uint32_t owner;
        int r;

        /* No look-up first (control_handle()'s is for a clock, which these calls take none of):
         * the op finds the timer. Where there is none, the op may know the claim's generation
         * from the owner's history; the call says NotFound all the same, as it did after the
         * look-up. */
        if ((r = params_owner(params, p->uid, p->privileged, &owner, err)) < 0 ||
            (r = params_handle(params, owner, allow_token, &h, err)) < 0)
                return r;
        t = op(s->registry, now, &h);
        if (t.failure == -TIMERD_E_REGISTRATION_EXPIRED &&
            registry_get_brief(s->registry, h.owner, h.name, &(struct td_brief){0}) ==
                -TIMERD_E_NOT_FOUND)
                t.failure = -TIMERD_E_NOT_FOUND;
        /* An op that removed the timer left none of the name to have failed to arm: the binding
         * check would look it up to find nothing. */
        if (removes && t.failure == 0) {
                api_apply(s, now, t);
                r = 0;
        } else
                r = run_transition(s, now, t, err, h.owner, h.name, "claim");
        if (r < 0)
                return r;
        events_publish(s, event, h.owner, h.name, 0);
        reply_begin(s, p, reply);
        return 0;
}

static int do_cancel(struct service *s, struct peer *p, const struct vl_view *params,
                     const struct td_now *now, struct vl_text **reply, struct param_error *err)
{
        return control_simple(s, p, params, now, reply, err, registry_cancel, true, false,
                              EVENT_CANCELLED);
}

static int do_unregister(struct service *s, struct peer *p, const struct vl_view *params,
                         const struct td_now *now, struct vl_text **reply, struct param_error *err)
{
        /* A run token is a delegated claim for the run's duration, not authority to remove. */
        return control_simple(s, p, params, now, reply, err, registry_unregister, false, true,
                              EVENT_UNREGISTERED);
}

static int do_kick(struct service *s, struct peer *p, const struct vl_view *params,
                   const struct td_now *now, struct vl_text **reply, struct param_error *err)
{
        struct td_handle h;
        enum timerd_clock clock = TIMERD_CLOCK_MONOTONIC;
        uint64_t next;
        int r;

        if ((r = control_handle(s, p, params, true, &h, &clock, err)) < 0)
                return r;
        /* The new deadline: now + the timer's cadence. */
        r = run_transition(s, now, registry_kick(s->registry, now, &h, &next), err, h.owner, h.name,
                           "cadence_usec");
        if (r < 0)
                return r;
        events_publish(s, EVENT_KICKED, h.owner, h.name, 0);
        vl_text_add_u64(reply_begin(s, p, reply), "next_usec", next);
        return 0;
}

/* The optional "result" of a Complete: how the run's program ended. Returns 1 when given. */
static int complete_run_end(const struct vl_view *params, struct td_run_end *ret,
                            struct param_error *err)
{
        struct vl_view result;
        const char *exit_name;
        uint64_t code;
        int r;

        r = vl_view_get_object(params, VL_IDL_FIELD_RESULT, &result);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return params_invalid(err, "result");
        if (params_string(&result, VL_IDL_FIELD_EXIT, "result.exit", &exit_name, err) <= 0 ||
            (int)(ret->exit = vl_exit_from_string(exit_name)) <= (int)TIMERD_EXIT_NONE)
                return params_invalid(err, "result.exit");
        if (vl_view_get_u64(&result, VL_IDL_FIELD_CODE, &code) < 0 || code > UINT8_MAX)
                return params_invalid(err, "result.code");
        ret->code = (uint32_t)code;
        return 1;
}

static int do_complete(struct service *s, struct peer *p, const struct vl_view *params,
                       const struct td_now *now, struct vl_text **reply, struct param_error *err)
{
        enum timerd_outcome outcome;
        enum timerd_directive directive = TIMERD_DIRECTIVE_CONTINUE;
        struct td_handle h;
        uint32_t owner;
        const char *v;
        uint64_t duration = 0;
        struct td_run_end end;
        int r, has_end;

        if ((r = params_owner(params, p->uid, p->privileged, &owner, err)) < 0 ||
            (r = params_token(params, owner, &h, err)) < 0)
                return r;
        if (params_string(params, VL_IDL_FIELD_OUTCOME, "outcome", &v, err) <= 0 ||
            (int)(outcome = vl_outcome_from_string(v)) <= (int)TIMERD_OUTCOME_NONE)
                return params_invalid(err, "outcome");
        r = params_string(params, VL_IDL_FIELD_DIRECTIVE, "directive", &v, err);
        if (r < 0 || (r > 0 && (int)(directive = vl_directive_from_string(v)) < 0))
                return params_invalid(err, "directive");
        r = vl_view_get_u64(params, VL_IDL_FIELD_DURATION_USEC, &duration);
        if (r < 0 && r != -ENOENT)
                return params_invalid(err, "duration_usec");
        has_end = complete_run_end(params, &end, err);
        if (has_end < 0)
                return has_end;
        r = run_transition(s, now,
                           registry_complete(s->registry, now, &h, outcome, directive, duration,
                                             has_end ? &end : NULL),
                           err, h.owner, h.name, "duration_usec");
        if (r < 0)
                return r;
        events_publish(s, EVENT_COMPLETED, h.owner, h.name, h.run);
        reply_begin(s, p, reply);
        return 0;
}

/*
 * A calendar timer's schedule: the expressions as declared (declaration.calendar / .cron: each
 * line of the source of that kind, without its prefix), the zone they are read in, named (also
 * when it is the local zone), and in the timer the normalized form of each, in the order of the
 * source (which lists calendar lines before cron ones).
 */
static void calendar_lines_write(struct vl_text *o, const char *field, const struct td_calendar *c,
                                 bool cron)
{
        char line[TD_CALENDAR_SOURCE_MAX + 1];
        const char *p = c->source;
        size_t prefix = strlen(TD_CALENDAR_CRON_PREFIX);
        bool any = false;

        for (size_t i = 0; i < c->n_specs; i++) {
                size_t l = strcspn(p, "\n");

                if ((strncmp(p, TD_CALENDAR_CRON_PREFIX, prefix) == 0) == cron) {
                        if (!any)
                                vl_text_array_begin(o, field);
                        any = true;
                        memcpy(line, p, l);
                        line[l] = 0;
                        vl_text_add_string(o, NULL, line + (cron ? prefix : 0));
                }
                p += l + (p[l] == '\n');
        }
        if (any)
                vl_text_array_end(o);
}

/* The normalized form of each expression, in the order of the source. */
static void calendar_normalized_write(struct vl_text *o, const struct td_calendar *c)
{
        char form[CALENDAR_FORMAT_MAX];

        vl_text_array_begin(o, "calendar_normalized");
        for (size_t i = 0; i < c->n_specs; i++) {
                if (calendar_format(&c->specs[i], form, sizeof(form)) < 0) {
                        o->error = o->error < 0 ? o->error : -ENOMEM;
                        return;
                }
                vl_text_add_string(o, NULL, form);
        }
        vl_text_array_end(o);
}

/* Each field as base/timer-fields.h describes it, written as text: o the text, b the struct it is
 * in, m its member (a pair for two), w its wire name. */
#define WIRE_WRITE_U64(o, b, m, w)  vl_text_add_u64(o, #w, (b)->m);
#define WIRE_WRITE_BOOL(o, b, m, w) vl_text_add_bool(o, #w, (b)->m);
#define WIRE_WRITE_BOOL_ON          WIRE_WRITE_BOOL
#define WIRE_WRITE_SIGNO(o, b, m, w)                                                               \
        if ((b)->delivery == TIMERD_DELIVERY_SIGNAL)                                               \
                vl_text_add_u64(o, #w, (uint64_t)(b)->m);
#define WIRE_WRITE_POLICY(o, b, m, w)   vl_text_add_string(o, #w, vl_policy_to_string((b)->m));
#define WIRE_WRITE_CLOCK(o, b, m, w)    vl_text_add_string(o, #w, vl_clock_to_string((b)->m));
#define WIRE_WRITE_LIFETIME(o, b, m, w) vl_text_add_string(o, #w, vl_lifetime_to_string((b)->m));
#define WIRE_WRITE_DELIVERY(o, b, m, w) vl_text_add_string(o, #w, vl_delivery_to_string((b)->m));
#define WIRE_WRITE_STATE(o, b, m, w)    vl_text_add_string(o, #w, vl_state_to_string((b)->m));
#define WIRE_WRITE_FAILURE(o, b, m, w)                                                             \
        if ((b)->m != TIMERD_FAILURE_NONE)                                                         \
                vl_text_add_string(o, #w, vl_failure_to_string((b)->m));
#define WIRE_WRITE_OUTCOME(o, b, m, w)                                                             \
        if ((b)->m != TIMERD_OUTCOME_NONE)                                                         \
                vl_text_add_string(o, #w, vl_outcome_to_string((b)->m));
#define WIRE_WRITE_OPT_USEC(o, b, m, w)                                                            \
        if ((b)->TD_FIRST(m))                                                                      \
                vl_text_add_u64(o, #w, (b)->TD_SECOND(m));
#define WIRE_WRITE_DEADLINE(o, b, m, w)                                                            \
        WIRE_WRITE_OPT_USEC(o, b, m, w)                                                            \
        if ((b)->TD_FIRST(m))                                                                      \
                vl_text_add_u64(o, "remaining_usec",                                               \
                                (b)->TD_SECOND(m) > clock_now ? (b)->TD_SECOND(m) - clock_now      \
                                                              : 0);
#define WIRE_WRITE_LIVE_CADENCE(o, b, m, w) WIRE_WRITE_U64(o, b, m, w)
#define WIRE_WRITE_CATCH_UP_MARK(o, b, m, w)                                                       \
        if ((b)->has_last_start)                                                                   \
                vl_text_add_bool(o, #w, (b)->m);
#define WIRE_WRITE_RESULT(o, b, m, w)                                                              \
        if ((b)->m.exit != TIMERD_EXIT_NONE) {                                                     \
                vl_text_object_begin(o, #w);                                                       \
                vl_text_add_string(o, "exit", vl_exit_to_string((b)->m.exit));                     \
                vl_text_add_u64(o, "code", (b)->m.code);                                           \
                vl_text_object_end(o);                                                             \
        }
#define WIRE_WRITE_INTERNAL_U64(o, b, m, w)
#define WIRE_WRITE_INTERNAL_BOOL(o, b, m, w)

void api_timer_write(struct vl_text *o, const char *field, const struct registry *r,
                     const struct td_snapshot *timer, const struct td_now *now)
{
        /* Overruns and next deadline as of now, also while the schedule is held behind a run. */
        struct td_snapshot settled = *timer;
        registry_snapshot_at(r, &settled, now);
        const struct td_snapshot *t = &settled;
        const struct td_declaration *decl = &t->declaration;
        const struct td_calendar *c = decl->calendar;
        uint64_t clock_now = now->usec[decl->clock];

        vl_text_object_begin(o, field);
        /* First, as the tree this replaced had it. */
        if (c)
                calendar_normalized_write(o, c);
        vl_text_add_u64(o, "owner", t->owner);
        vl_text_add_string(o, "name", t->name);
        vl_text_object_begin(o, "declaration");
#define WRITE_DECLARATION(kind, m, w, pub, journal, position) WIRE_WRITE_##kind(o, decl, m, w)
        TD_DECLARATION_FIELDS(WRITE_DECLARATION)
#undef WRITE_DECLARATION
        if (c) {
                calendar_lines_write(o, "calendar", c, false);
                calendar_lines_write(o, "cron", c, true);
                vl_text_add_string(o, "timezone", c->zone->name);
                vl_text_add_bool(o, "fixed_random_delay", c->fixed_random_delay);
        }
        vl_text_object_end(o);
#define WRITE_TIMER(kind, m, w, pub, journal, position) WIRE_WRITE_##kind(o, t, m, w)
        TD_TIMER_FIELDS(WRITE_TIMER)
#undef WRITE_TIMER
        vl_text_object_end(o);
}

static int do_get(struct service *s, struct peer *p, const struct vl_view *params,
                  const struct td_now *now, struct vl_text **reply, struct param_error *err)
{
        struct td_snapshot t;
        const char *name;
        uint32_t owner;
        int r;

        if ((r = params_owner(params, p->uid, p->privileged, &owner, err)) < 0 ||
            (r = params_name(params, false, &name, err)) < 0)
                return r;
        r = registry_get(s->registry, owner, name, &t);
        if (r < 0)
                return params_fail(err, r, name, NULL, 0);
        api_timer_write(reply_begin(s, p, reply), "timer", s->registry, &t, now);
        return 0;
}

/* Which page a List asks for: after the cursor a previous reply gave as "next", and at most
 * "limit" timers, never more than the configured page. */
static int list_page_params(const struct service *s, const struct vl_view *params,
                            struct td_list_page *page, struct param_error *err)
{
        struct vl_view after;
        uint64_t v;
        int r = vl_view_get_u64(params, VL_IDL_FIELD_LIMIT, &v);

        if ((r < 0 && r != -ENOENT) || (r == 0 && v == 0))
                return params_invalid(err, "limit");
        page->limit = r == 0 && v < s->config.list_page ? (size_t)v : s->config.list_page;

        r = vl_view_get_object(params, VL_IDL_FIELD_AFTER, &after);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return params_invalid(err, "after");
        if (vl_view_get_u64(&after, VL_IDL_FIELD_OWNER, &v) < 0 || v >= UINT32_MAX)
                return params_invalid(err, "after.owner");
        if (vl_view_get_string(&after, VL_IDL_FIELD_NAME, &page->after_name) < 0 ||
            !registry_name_valid(page->after_name))
                return params_invalid(err, "after.name");
        page->has_after = true;
        page->after_owner = (uint32_t)v;
        return 0;
}

/*
 * A List page ends at its limit, or once its reply holds LIST_PAGE_BYTES (what one send to a
 * socket of the default buffer takes) or took LIST_PAGE_USEC to write (the clock read every
 * LIST_CLOCK_EVERY timers): until the client has the page, the loop serves nobody else's call of
 * it, and the client goes on from the page's cursor. The connection's next call waits for the
 * next loop turn (p->paged).
 */
#define LIST_PAGE_BYTES  (128 * 1024)
#define LIST_PAGE_USEC   2000
#define LIST_CLOCK_EVERY 64

struct list_writer {
        struct vl_text *o;
        const struct registry *r;
        const struct td_now *now;
        size_t start;        /* o->len when the page began */
        uint64_t began_usec; /* monotonic, real */
        size_t n;
        uint32_t last_owner;
        char last_name[TIMERD_NAME_MAX + 1];
};

static bool list_write(const struct td_snapshot *t, void *userdata)
{
        struct list_writer *w = userdata;
        uint64_t usec;

        api_timer_write(w->o, NULL, w->r, t, w->now);
        w->last_owner = t->owner;
        strcpy(w->last_name, t->name);
        if (w->o->error < 0 || w->o->len - w->start >= LIST_PAGE_BYTES)
                return false;
        return ++w->n % LIST_CLOCK_EVERY != 0 || clock_read(TIMERD_CLOCK_MONOTONIC, &usec) < 0 ||
               usec - w->began_usec < LIST_PAGE_USEC;
}

static int do_list(struct service *s, struct peer *p, const struct vl_view *params,
                   const struct td_now *now, struct vl_text **reply, struct param_error *err)
{
        struct td_list_page page = {0};
        struct list_writer w = {.r = s->registry, .now = now};
        bool more;
        int r;

        if ((r = params_owner(params, p->uid, p->privileged, &page.owner, err)) < 0)
                return r;
        if (vl_view_get_bool(params, VL_IDL_FIELD_ALL, &page.all_owners) == -EINVAL)
                return params_invalid(err, "all");
        if (page.all_owners && !p->privileged)
                return params_fail(err, -TIMERD_E_PERMISSION_DENIED, NULL, NULL, 0);
        if ((r = list_page_params(s, params, &page, err)) < 0)
                return r;
        (void)clock_read(TIMERD_CLOCK_MONOTONIC, &w.began_usec);
        w.o = reply_begin(s, p, reply);
        w.start = w.o->len;
        vl_text_array_begin(w.o, "timers");
        p->paged = true;
        if (registry_list_each(s->registry, &page, list_write, &w, &more) < 0)
                return params_fail(err, -TIMERD_E_BUSY, NULL, NULL, 0);
        vl_text_array_end(w.o);
        if (more) {
                vl_text_object_begin(w.o, "next");
                vl_text_add_u64(w.o, "owner", w.last_owner);
                vl_text_add_string(w.o, "name", w.last_name);
                vl_text_object_end(w.o);
        }
        return 0;
}

/* The caller's process reports the signals it takes (SignalTaken), so its overruns are counted
 * without a look into its /proc (signals.h). */
static int do_acknowledge_signals(struct service *s, struct peer *p, const struct vl_view *params,
                                  const struct td_now *now, struct vl_text **reply,
                                  struct param_error *err)
{
        (void)params;
        (void)now;
        if (signals_acknowledge(p) < 0)
                return params_fail(err, -TIMERD_E_BUSY, NULL, NULL, 0);
        reply_begin(s, p, reply);
        return 0;
}

static int do_signal_taken(struct service *s, struct peer *p, const struct vl_view *params,
                           const struct td_now *now, struct vl_text **reply,
                           struct param_error *err)
{
        uint64_t generation;
        int signo, r;

        (void)s;
        (void)now;
        if ((r = params_signal(params, &signo, err)) < 0)
                return r;
        if (vl_view_get_u64(params, VL_IDL_FIELD_GENERATION, &generation) < 0)
                return params_invalid(err, "generation");
        if ((r = signals_taken(p, signo, generation)) < 0)
                return params_fail(err, r, NULL, NULL, generation);
        reply_begin(s, p, reply);
        return 0;
}

typedef int (*timer_method_fn)(struct service *s, struct peer *p, const struct vl_view *params,
                               const struct td_now *now, struct vl_text **reply,
                               struct param_error *err);

static const timer_method_fn timer_methods[_VL_IDL_METHOD_MAX] = {
    [VL_IDL_IO_TIMERD_TIMER_REGISTER] = do_register,
    [VL_IDL_IO_TIMERD_TIMER_RECONCILE] = do_reconcile,
    [VL_IDL_IO_TIMERD_TIMER_SCHEDULE] = do_schedule,
    [VL_IDL_IO_TIMERD_TIMER_RESCHEDULE] = do_reschedule,
    [VL_IDL_IO_TIMERD_TIMER_CANCEL] = do_cancel,
    [VL_IDL_IO_TIMERD_TIMER_KICK] = do_kick,
    [VL_IDL_IO_TIMERD_TIMER_UNREGISTER] = do_unregister,
    [VL_IDL_IO_TIMERD_TIMER_GET] = do_get,
    [VL_IDL_IO_TIMERD_TIMER_LIST] = do_list,
    [VL_IDL_IO_TIMERD_TIMER_COMPLETE] = do_complete,
    [VL_IDL_IO_TIMERD_TIMER_ACKNOWLEDGE_SIGNALS] = do_acknowledge_signals,
    [VL_IDL_IO_TIMERD_TIMER_SIGNAL_TAKEN] = do_signal_taken,
};

struct reply api_timer_call(struct service *s, struct peer *p, enum vl_idl_method_id method,
                            const struct vl_view *params)
{
        struct param_error err;
        struct vl_text *reply = NULL;
        struct td_now now;

        /* Not zeroed whole (430 bytes, ~60 instructions a call): params_fail() fills it all, and
         * a reply reads its other fields only for the failures params_fail() sets. */
        err.error = 0;
        assert(timer_methods[method]);
        if (service_now(s, &now) < 0)
                return reply_error(TIMERD_E_SHUTTING_DOWN, NULL);
        /* The answer to a change of a retained timer depends on its commit: the dispatcher sends
         * it, then ends the bracket (store_call_end()). */
        store_call_begin(s, p);
        if (timer_methods[method](s, p, params, &now, &reply, &err) < 0) {
                if (reply)
                        service_reply_cancel(s, p);
                return reply_fail(&err);
        }
        return reply_written(false);
}
