/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "service/api.h"
#include "service/events.h"
#include "service/io/log.h"
#include "service/core/parked.h"
#include "service/io/peer.h"
#include "service/service.h"
#include "varlink/names.h"

/* Names in one Wait filter; the parked queue enforces its own bound too. */
#define WAIT_MAX_NAMES 64

/* Room for any firing: a name of at most 128 bytes (nothing in it to escape) and every number at
 * its widest take under 500. */
#define FIRING_TEXT_ROOM 1024

/*
 * A firing is the most frequent reply: written straight into its connection's output. Begun before
 * the firing is handed over (NULL when out of memory: it stays pending), ended after; writing it
 * cannot fail then.
 */
static struct vl_text *firing_begin(struct service *s, struct peer *p, bool continues)
{
        struct vl_text *t = service_reply_begin(s, p, continues, FIRING_TEXT_ROOM);

        if (t->error == 0)
                return t;
        service_reply_cancel(s, p);
        return NULL;
}

static void firing_write(struct vl_text *t, const struct td_dispatch *d)
{
        vl_text_object_begin(t, "firing");
        vl_text_object_begin(t, "token");
        vl_text_add_string(t, "name", d->name);
        vl_text_add_u64(t, "generation", d->generation);
        vl_text_add_u64(t, "run", d->run);
        vl_text_object_end(t);
        vl_text_add_string(t, "clock", vl_clock_to_string(d->clock));
        vl_text_add_u64(t, "deadline_usec", d->deadline_usec);
        vl_text_add_u64(t, "fired_usec", d->fired_usec);
        vl_text_add_u64(t, "overruns", d->overruns);
        vl_text_add_bool(t, "catch_up", d->catch_up);
        vl_text_object_end(t);
}

/* The peer whose open call `cookie` of `session` is, or NULL when it is gone. */
static struct peer *call_peer(struct service *s, uint64_t session, uint64_t cookie)
{
        struct peer *p = service_find_session(s, session);
        return p && p->call_open && p->call_cookie == cookie ? p : NULL;
}

static json_object *continuation_json(const struct parked_continuation *c)
{
        json_object *o = json_object_new_object();
        vl_add_u64(o, "epoch", c->epoch);
        vl_add_u64(o, "nonce", c->nonce);
        vl_add_u64(o, "cycle", c->cycle);
        return o;
}

static json_object *sleep_answer_json(const struct parked_effect *e)
{
        json_object *o = json_object_new_object();
        vl_add_bool(o, "elapsed", e->kind == PARKED_EFFECT_ELAPSED);
        if (e->kind == PARKED_EFFECT_OBSERVATION) {
                json_object *obs = json_object_new_object();
                vl_add_object(obs, "continuation", continuation_json(&e->continuation));
                vl_add_u64(obs, "lease", e->observation.lease);
                if (e->observation.has_remaining)
                        vl_add_u64(obs, "remaining_usec", e->observation.remaining_usec);
                vl_add_string(obs, "timer", e->observation.name);
                vl_add_u64(obs, "alarms", e->observation.alarms);
                vl_add_object(o, "observation", obs);
        }
        return o;
}

/* The answer an effect of the parked queue gives the call it ends (not a firing's). */
static struct reply parked_answer(const struct parked_effect *e)
{
        switch (e->kind) {
        case PARKED_EFFECT_OBSERVATION:
        case PARKED_EFFECT_ELAPSED:
                return reply_parameters(sleep_answer_json(e));
        case PARKED_EFFECT_INTERRUPTED: {
                json_object *o = json_object_new_object();
                if (e->interrupted.has_remaining)
                        vl_add_u64(o, "remaining_usec", e->interrupted.remaining_usec);
                return reply_parameters(o);
        }
        case PARKED_EFFECT_RETIRED:
                return reply_parameters(json_object_new_object());
        case PARKED_EFFECT_TIMED_OUT:
                return reply_error(TIMERD_E_TIMEOUT, NULL);
        case PARKED_EFFECT_SHUTTING_DOWN:
                return reply_error(TIMERD_E_SHUTTING_DOWN, NULL);
        case PARKED_EFFECT_NOTHING_TO_WAIT_FOR:
                return reply_error(TIMERD_E_NOTHING_TO_WAIT_FOR, NULL);
        case PARKED_EFFECT_FAILED: {
                json_object *params = json_object_new_object();
                vl_add_string(params, "kind", parked_failure_to_string(e->failed));
                return reply_error(TIMERD_E_PROTOCOL_FAILURE, params);
        }
        case PARKED_EFFECT_REPLY:      /* a firing: handed over by apply_parked_effects() */
        case PARKED_EFFECT_OBSERVABLE: /* apply_parked offers it a kept alarm */
        case _PARKED_EFFECT_MAX:
        case _PARKED_EFFECT_INVALID:
                break;
        }
        return (struct reply){.kind = REPLY_NONE};
}

/* Hand the firing d to the parked call of p that `e` chose. */
static void hand_firing(struct service *s, struct peer *p, const struct parked_effect *e,
                        const struct td_dispatch *d)
{
        struct vl_text *t = firing_begin(s, p, e->reply.continues);

        if (!t)
                service_error(s, p, TIMERD_E_BUSY, NULL);
        else if (registry_deliver(s->registry, d, e->session) >= 0) {
                firing_write(t, d);
                service_reply_end(s, p);
        } else
                service_reply_cancel(s, p);
}

/*
 * Carry out what the parked queue decided: answer the parked calls it ended. `d` is the firing a
 * REPLY hands over; the answer to the call that caused the transition (`caller`'s: a Finish is
 * answered through it, whichever connection parked the Sleep) goes to *caller_reply, for its
 * method to return.
 */
static void apply_parked_effects(struct service *s, struct parked_transition t,
                                 const struct td_dispatch *d, struct peer *caller,
                                 struct reply *caller_reply)
{
        for (size_t i = 0; i < t.n_effects; i++) {
                const struct parked_effect *e = &t.effects[i];
                bool to_caller = caller && caller->call_open && caller->call_cookie == e->cookie;
                struct peer *p = to_caller ? caller : call_peer(s, e->session, e->cookie);
                if (!p)
                        continue;
                if (e->kind == PARKED_EFFECT_REPLY) {
                        if (d)
                                hand_firing(s, p, e, d);
                } else if (to_caller && caller_reply)
                        *caller_reply = parked_answer(e);
                else
                        service_send_reply(s, p, parked_answer(e));
        }
}

static void offer_kept_alarm(struct service *s, uint32_t owner, uint64_t session);

/*
 * Effects, then the kernel timers follow the parked deadlines the transition may have moved, then
 * each owner that can observe again is offered an alarm the registry keeps (copied out first: the
 * offer reuses the queue's effects).
 */
static void apply_parked(struct service *s, struct parked_transition t, const struct td_dispatch *d,
                         struct peer *caller, struct reply *caller_reply)
{
        struct td_caller *observable = NULL;
        size_t n_observable = 0;

        for (size_t i = 0; i < t.n_effects; i++)
                n_observable += t.effects[i].kind == PARKED_EFFECT_OBSERVABLE;
        if (n_observable > 0) {
                observable = calloc(n_observable, sizeof(*observable));
                if (!observable)
                        log_error("Out of memory: kept alarms wait for the next Sleep");
                for (size_t i = 0, j = 0; observable && i < t.n_effects; i++)
                        if (t.effects[i].kind == PARKED_EFFECT_OBSERVABLE)
                                observable[j++] = (struct td_caller){
                                    .uid = t.effects[i].owner, .session = t.effects[i].session};
        }
        apply_parked_effects(s, t, d, caller, caller_reply);
        service_sync_parked_wake(s);
        for (size_t i = 0; observable && i < n_observable; i++)
                offer_kept_alarm(s, observable[i].uid, observable[i].session);
        free(observable);
}

/* The bound a -TIMERD_E_LIMIT_EXCEEDED of the parked queue hit. */
static uint64_t parked_limit_value(const struct service *s, const struct parked_transition *t)
{
        if (t->failure != -TIMERD_E_LIMIT_EXCEEDED)
                return 0;
        switch (t->limit) {
        case PARKED_LIMIT_PER_SESSION:
                return s->config.max_parked_per_connection;
        case PARKED_LIMIT_PER_OWNER:
                return s->config.max_parked_per_owner;
        case PARKED_LIMIT_NAMES:
                return WAIT_MAX_NAMES;
        case _PARKED_LIMIT_MAX:
        case _PARKED_LIMIT_INVALID:
                break;
        }
        return 0;
}

/* A failed parked transition as the caller's error. */
static struct reply parked_failed(const struct service *s, const struct parked_transition *t)
{
        struct param_error err;

        if (t->failure == -TIMERD_E_PROTOCOL_FAILURE) {
                json_object *params = json_object_new_object();
                vl_add_string(params, "kind", parked_failure_to_string(t->protocol));
                return reply_error(TIMERD_E_PROTOCOL_FAILURE, params);
        }
        params_fail(&err, t->failure <= -TIMERD_E_BASE ? t->failure : -TIMERD_E_BUSY, NULL,
                    t->failure == -TIMERD_E_LIMIT_EXCEEDED ? parked_limit_to_string(t->limit)
                                                           : NULL,
                    parked_limit_value(s, t));
        return reply_fail(&err);
}

/* Hand over a pending firing, a part of a stream when p's call asked for more (the dispatcher
 * asks again for the next); REPLY_NONE when none is pending. */
static struct reply take_pending(struct service *s, struct peer *p, const struct td_now *now,
                                 uint32_t owner, const char *const *names, size_t n_names)
{
        struct td_dispatch d;
        struct vl_text *t = firing_begin(s, p, true);

        if (!t)
                return reply_error(TIMERD_E_BUSY, NULL);
        if (registry_take_pending(s->registry, now, owner, TIMERD_DELIVERY_NOTIFY, names, n_names,
                                  p->session, &d) <= 0) {
                service_reply_cancel(s, p);
                return (struct reply){.kind = REPLY_NONE};
        }
        firing_write(t, &d);
        return reply_written(true);
}

/* A Wait on `names` of this owner may still be answered with a firing: one is pending, or one
 * may still fire (it has a wake-up, or its run goes on and may schedule another). */
struct waited_timers {
        const struct registry *registry;
        uint32_t owner;
};

static bool waited_can_fire(const char *const *names, size_t n_names, void *userdata)
{
        const struct waited_timers *w = userdata;
        struct td_snapshot t;

        for (size_t i = 0; i < n_names; i++)
                if (registry_get(w->registry, w->owner, names[i], &t) == 0 &&
                    t.declaration.delivery == TIMERD_DELIVERY_NOTIFY &&
                    (t.pending ||
                     (t.state != TIMERD_STATE_FAILED && (t.has_deadline || t.run_active))))
                        return true;
        return false;
}

void api_waits_recheck(struct service *s, uint32_t owner)
{
        struct waited_timers w = {.registry = s->registry, .owner = owner};
        struct parked_transition t = parked_end_waits(s->parked, owner, waited_can_fire, &w);

        /* Ending no Wait (an owner whose Waits all may still fire, or who has none: every
         * Unregister of a notify timer asks) moved no parked deadline: nothing to apply. */
        if (t.n_effects > 0)
                apply_parked(s, t, NULL, NULL, NULL);
}

/* Carry out t, a method's transition: its answer to the caller p, or REPLY_NONE when parked. */
static struct reply apply_parked_for(struct service *s, struct parked_transition t, struct peer *p)
{
        struct reply r = {.kind = REPLY_NONE};

        apply_parked(s, t, NULL, p, &r);
        return r;
}

/* The names a Wait filters on (none: any notify timer of the owner), each valid. */
static int wait_names(const struct vl_view *params, const char *names[static WAIT_MAX_NAMES],
                      size_t *ret_n, struct param_error *err)
{
        struct vl_view array, v;
        int r = vl_view_get_array(params, VL_IDL_FIELD_NAMES, &array);

        *ret_n = 0;
        if (r == -EINVAL)
                return params_invalid(err, "names");
        if (r < 0)
                return 0;
        size_t n = vl_view_size(&array);
        /* Left out, the Wait takes any notify timer; empty, it would wait for nothing. */
        if (n == 0)
                return params_invalid(err, "names");
        if (n > WAIT_MAX_NAMES)
                return params_fail(err, -TIMERD_E_LIMIT_EXCEEDED, NULL, "names", WAIT_MAX_NAMES);
        v = vl_view_first(&array);
        for (size_t i = 0; i < n; i++, v = vl_view_following(&v)) {
                if (vl_view_type(&v) != VL_TOKEN_STRING)
                        return params_invalid(err, "names");
                if (vl_view_string(&v, &names[i]) < 0 || !registry_name_valid(names[i])) {
                        char path[32];
                        snprintf(path, sizeof(path), "names[%zu]", i);
                        return params_fail(err, -TIMERD_E_INVALID_NAME, NULL, path, 0);
                }
        }
        *ret_n = n;
        return 0;
}

struct reply api_wait(struct service *s, struct peer *p, const struct vl_view *params)
{
        const char *names[WAIT_MAX_NAMES];
        struct parked_wait_args a = {
            .caller = {.session = p->session},
            .cookie = p->call_cookie,
            .names = names,
            .clock = TIMERD_CLOCK_MONOTONIC,
            .stream = p->call_more,
        };
        struct param_error err;
        uint64_t timeout = 0;
        struct td_now now;
        int r;

        if (params_owner(params, p->uid, p->privileged, &a.caller.uid, &err) < 0 ||
            wait_names(params, names, &a.n_names, &err) < 0)
                goto fail;
        r = vl_view_get_u64(params, VL_IDL_FIELD_TIMEOUT_USEC, &timeout);
        if (r < 0 && r != -ENOENT) {
                params_invalid(&err, "timeout_usec");
                goto fail;
        }
        if (service_now(s, &now) < 0)
                return reply_error(TIMERD_E_SHUTTING_DOWN, NULL);
        struct reply pending = take_pending(s, p, &now, a.caller.uid, names, a.n_names);
        if (pending.kind != REPLY_NONE)
                return pending;
        for (size_t i = 0; i < a.n_names; i++)
                if (registry_get(s->registry, a.caller.uid, names[i], &(struct td_snapshot){}) <
                    0) {
                        params_fail(&err, -TIMERD_E_NOT_FOUND, names[i], NULL, 0);
                        goto fail;
                }
        struct waited_timers waited = {.registry = s->registry, .owner = a.caller.uid};
        if (a.n_names > 0 && !waited_can_fire(names, a.n_names, &waited))
                return reply_error(TIMERD_E_NOTHING_TO_WAIT_FOR, NULL);
        if (timeout > 0) {
                if (timeout > UINT64_MAX - now.usec[a.clock]) {
                        params_fail(&err, -TIMERD_E_OVERFLOW, NULL, "timeout_usec", 0);
                        goto fail;
                }
                a.has_timeout = true;
                a.timeout_usec = now.usec[a.clock] + timeout;
        }

        struct parked_continuation c;
        struct parked_transition t = parked_wait(s->parked, &a, &c);
        if (t.failure < 0)
                return parked_failed(s, &t);
        return apply_parked_for(s, t, p);
fail:
        return reply_fail(&err);
}

/* A run was dispatched: count it, tell the subscribers, and hand it to its waiter. */
static void hand_over_run(struct service *s, const struct td_now *now, const struct td_dispatch *d)
{
        s->metrics.firings++;
        events_publish(s, EVENT_FIRED, d->owner, d->name, d->run);
        /* From when it was owed: a handover is early on purpose, an accuracy window late on
         * purpose, and one due when queued was late already. */
        if (d->past_due)
                s->metrics.lateness_past_due++;
        else
                histogram_record(&s->metrics.lateness,
                                 d->fired_usec > d->due_usec ? d->fired_usec - d->due_usec : 0);
        api_offer_firing(s, now, d);
}

void api_hand_over(struct service *s)
{
        struct apply_outcome o;

        /* The outer loop takes what a nested call would: in order. Nothing to apply and no owner
         * silenced is what the loop's settles find several times a call: no walk for that. */
        if (s->applying.handing_over ||
            (apply_idle(&s->applying) && !registry_silenced_pending(s->registry)))
                return;
        s->applying.handing_over = true;
        while (apply_take_outcome(s, &o)) {
                if (o.kind == APPLY_DISPATCHED)
                        hand_over_run(s, &o.dispatched.now, &o.dispatched.effect.dispatch);
                else
                        api_waits_recheck(s, o.owner);
        }
        s->applying.handing_over = false;
}

void api_apply(struct service *s, const struct td_now *now, struct td_transition t)
{
        /* Before anything applying may call of the registry (its removals are its until then),
         * and before the events of what the call did (a name registered again comes after its
         * removal). */
        events_removals(s, &t);
        service_apply(s, now, t);
        api_hand_over(s);
}

/* The alarms one observation stands for: the firing and the periods it missed. */
static uint64_t alarms_of(const struct td_dispatch *d)
{
        return d->overruns == UINT64_MAX ? UINT64_MAX : d->overruns + 1;
}

/*
 * Route an alarm firing to a Sleep of its owner: of the connection that registered the timer
 * first, else the longest waiting on any connection. Taken, the observation delivers it and the
 * run ends; untaken, the run stays pending in the registry (one per timer, Get shows it) and its
 * schedule is held, without wake-ups, until a Sleep takes it.
 */
static bool route_alarm(struct service *s, const struct td_now *now, const struct td_dispatch *d)
{
        struct td_snapshot t;
        bool taken;

        if (registry_get(s->registry, d->owner, d->name, &t) < 0)
                return false;
        apply_parked(
            s,
            parked_offer_alarm(s->parked, now, d->owner, t.session, d->name, alarms_of(d), &taken),
            NULL, NULL, NULL);
        if (taken)
                service_end_run(s, now, d, TIMERD_OUTCOME_SUCCESS, TIMERD_DIRECTIVE_CONTINUE);
        return taken;
}

/*
 * The owner can observe again (a Sleep of `session` waits): its oldest kept alarm goes to a Sleep.
 * `session` is open, so the registry may hand the run to it for the moment it takes to end it.
 */
static void offer_kept_alarm(struct service *s, uint32_t owner, uint64_t session)
{
        struct parked_owner_snapshot o;
        struct td_dispatch d;
        struct td_now now;

        if (parked_get_owner(s->parked, owner, &o) < 0 || o.observing || o.waiting_sleepers == 0 ||
            service_now(s, &now) < 0)
                return;
        if (registry_take_pending(s->registry, &now, owner, TIMERD_DELIVERY_ALARM, NULL, 0, session,
                                  &d) <= 0)
                return;
        if (!route_alarm(s, &now, &d))
                /* Only a Sleep whose counters overflowed refuses it: it stays pending. */
                service_end_run(s, &now, &d, TIMERD_OUTCOME_SUCCESS, TIMERD_DIRECTIVE_CONTINUE);
}

void api_offer_firing(struct service *s, const struct td_now *now, const struct td_dispatch *d)
{
        bool taken;

        switch (d->delivery) {
        case TIMERD_DELIVERY_NOTIFY: {
                struct parked_transition offer =
                    parked_offer_firing(s->parked, d->owner, d->name, &taken);
                /* Untaken, or taken by a stream that stays parked: no parked deadline moved. */
                bool deadlines_kept = !taken || (offer.n_effects == 1 &&
                                                 offer.effects[0].kind == PARKED_EFFECT_REPLY &&
                                                 offer.effects[0].reply.continues);
                if (deadlines_kept)
                        apply_parked_effects(s, offer, d, NULL, NULL);
                else
                        apply_parked(s, offer, d, NULL, NULL);
                break;
        }
        case TIMERD_DELIVERY_ALARM:
                route_alarm(s, now, d);
                break;
        case TIMERD_DELIVERY_SIGNAL:
                signals_deliver(s, now, d);
                break;
        case TIMERD_DELIVERY_MAX:
        case TIMERD_DELIVERY_INVALID:
                break;
        }
}

static int continuation_param(const struct vl_view *params, struct parked_continuation *ret,
                              struct param_error *err)
{
        struct vl_view c;

        if (vl_view_get_object(params, VL_IDL_FIELD_CONTINUATION, &c) < 0)
                return params_invalid(err, "continuation");
        if (vl_view_get_u64(&c, VL_IDL_FIELD_EPOCH, &ret->epoch) < 0)
                return params_invalid(err, "continuation.epoch");
        if (vl_view_get_u64(&c, VL_IDL_FIELD_NONCE, &ret->nonce) < 0)
                return params_invalid(err, "continuation.nonce");
        if (vl_view_get_u64(&c, VL_IDL_FIELD_CYCLE, &ret->cycle) < 0)
                return params_invalid(err, "continuation.cycle");
        return 0;
}

struct reply api_sleep(struct service *s, struct peer *p, const struct vl_view *params)
{
        struct parked_sleep_args a = {
            .caller = {.session = p->session},
            .cookie = p->call_cookie,
            .clock = TIMERD_CLOCK_MONOTONIC,
        };
        struct parked_continuation c;
        struct param_error err;
        struct td_now now;
        const char *clock;
        int r;

        if (params_owner(params, p->uid, p->privileged, &a.caller.uid, &err) < 0)
                goto fail;
        r = params_string(params, VL_IDL_FIELD_CLOCK, "clock", &clock, &err);
        if (r < 0 || (r > 0 && (int)(a.clock = vl_clock_from_string(clock)) < 0)) {
                params_invalid(&err, "clock");
                goto fail;
        }
        if (service_now(s, &now) < 0)
                return reply_error(TIMERD_E_SHUTTING_DOWN, NULL);
        uint64_t relative;
        r = vl_view_get_u64(params, VL_IDL_FIELD_FOR_USEC, &relative);
        if (r == 0) {
                if (vl_view_get_u64(params, VL_IDL_FIELD_UNTIL_USEC, &(uint64_t){0}) != -ENOENT) {
                        params_invalid(&err, "until_usec");
                        goto fail;
                }
                if (relative > UINT64_MAX - now.usec[a.clock]) {
                        params_fail(&err, -TIMERD_E_OVERFLOW, NULL, "for_usec", 0);
                        goto fail;
                }
                a.has_deadline = true;
                a.deadline_usec = now.usec[a.clock] + relative;
        } else if (r != -ENOENT) {
                params_invalid(&err, "for_usec");
                goto fail;
        } else {
                r = params_when(params, VL_IDL_FIELD_UNTIL_USEC, "until_usec", now.usec[a.clock],
                                &a.deadline_usec, &err);
                if (r < 0)
                        goto fail;
                a.has_deadline = r > 0;
        }

        struct parked_transition t = parked_sleep(s->parked, &now, &a, &c);
        if (t.failure < 0)
                return parked_failed(s, &t);
        return apply_parked_for(s, t, p);
fail:
        return reply_fail(&err);
}

struct reply api_finish(struct service *s, struct peer *p, const struct vl_view *params)
{
        struct parked_continuation c;
        struct parked_ticket ticket;
        struct param_error err;
        enum parked_action action;
        uint64_t lease;
        uint32_t owner;
        struct td_now now;
        const char *v;

        if (params_owner(params, p->uid, p->privileged, &owner, &err) < 0 ||
            continuation_param(params, &c, &err) < 0)
                goto fail;
        if (vl_view_get_u64(params, VL_IDL_FIELD_LEASE, &lease) < 0) {
                params_invalid(&err, "lease");
                goto fail;
        }
        if (params_string(params, VL_IDL_FIELD_ACTION, "action", &v, &err) <= 0) {
                params_invalid(&err, "action");
                goto fail;
        }
        if (strcmp(v, "resume") == 0)
                action = PARKED_ACTION_RESUME;
        else if (strcmp(v, "interrupt") == 0)
                action = PARKED_ACTION_INTERRUPT;
        else if (strcmp(v, "terminate") == 0)
                action = PARKED_ACTION_TERMINATE;
        else {
                params_invalid(&err, "action");
                goto fail;
        }
        if (service_now(s, &now) < 0)
                return reply_error(TIMERD_E_SHUTTING_DOWN, NULL);
        const struct td_caller caller = {.uid = owner, .session = p->session};
        struct parked_transition t =
            parked_finish(s->parked, &now, &caller, &c, lease, action, p->call_cookie, &ticket);
        if (t.failure < 0)
                return parked_failed(s, &t);
        if (action == PARKED_ACTION_RESUME) {
                json_object *o = json_object_new_object();
                json_object *tk = json_object_new_object();
                vl_add_object(tk, "continuation", continuation_json(&ticket.continuation));
                vl_add_u64(tk, "nonce", ticket.nonce);
                vl_add_object(o, "ticket", tk);
                /* Effects first: an ended observation may let another Sleep observe. */
                apply_parked(s, t, NULL, NULL, NULL);
                return reply_parameters(o);
        }
        return apply_parked_for(s, t, p);
fail:
        return reply_fail(&err);
}

struct reply api_resume(struct service *s, struct peer *p, const struct vl_view *params)
{
        struct td_caller caller = {.session = p->session};
        struct parked_ticket ticket;
        struct param_error err;
        struct vl_view tk;
        struct td_now now;

        if (params_owner(params, p->uid, p->privileged, &caller.uid, &err) < 0)
                goto fail;
        if (vl_view_get_object(params, VL_IDL_FIELD_TICKET, &tk) < 0) {
                params_invalid(&err, "ticket");
                goto fail;
        }
        if (continuation_param(&tk, &ticket.continuation, &err) < 0)
                goto fail;
        if (vl_view_get_u64(&tk, VL_IDL_FIELD_NONCE, &ticket.nonce) < 0) {
                params_invalid(&err, "ticket.nonce");
                goto fail;
        }
        if (service_now(s, &now) < 0)
                return reply_error(TIMERD_E_SHUTTING_DOWN, NULL);
        struct parked_transition t =
            parked_resume(s->parked, &now, &caller, &ticket, p->call_cookie);
        if (t.failure < 0)
                return parked_failed(s, &t);
        return apply_parked_for(s, t, p);
fail:
        return reply_fail(&err);
}

void api_expire_parked(struct service *s, const struct td_now *now)
{
        apply_parked(s, parked_expire(s->parked, now), NULL, NULL, NULL);
}

void api_session_closed(struct service *s, uint64_t session)
{
        struct td_now now;
        size_t retired;

        if (service_now(s, &now) < 0)
                return;
        apply_parked(s, parked_session_closed(s->parked, &now, session, &retired), NULL, NULL,
                     NULL);
}

void api_shutdown_parked(struct service *s)
{
        apply_parked(s, parked_shutdown(s->parked), NULL, NULL, NULL);
}

uint64_t api_waiters(const struct service *s)
{
        struct parked_stats st;
        parked_get_stats(s->parked, &st);
        return st.waiters + st.sleepers;
}
