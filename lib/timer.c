/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>

#include "connection.h"
#include "varlink/names.h"
#include "wire.h"

/*
 * The io.timerd.Timer methods that declare and control timers, and read them back: each builds
 * its parameters once, for the blocking call and for the asynchronous one.
 */

#define TIMER_METHOD(name) VL_INTERFACE_TIMER "." name

void timerd_declaration_init(struct timerd_declaration *d, enum timerd_policy policy,
                             uint64_t cadence_usec)
{
        if (!d)
                return;
        *d = (struct timerd_declaration){
            .policy = policy,
            .cadence_usec = cadence_usec,
            .clock = wire_default_clock(policy),
            .lifetime = TIMERD_LIFETIME_TRANSIENT,
            .delivery = TIMERD_DELIVERY_NOTIFY,
            .catch_up = true,
            .handover_usec = TIMERD_HANDOVER_DEFAULT,
        };
}

/*
 * Sends the call begun in q unless writing its parameters failed (r < 0). A success reply comes as
 * tokens (lib/wire.h's wire_reply_*), read before the next call.
 */
static int call(struct timerd *t, struct connection_request *q, int r, struct vl_reply *ret)
{
        return connection_send(t, q, r, true, ret);
}

/* For calls whose reply carries nothing: release it and pass the result on. */
static int call_without_result(struct timerd *t, struct connection_request *q, int r)
{
        struct vl_reply reply;

        r = call(t, q, r, &reply);
        vl_reply_done(&reply);
        return r;
}

static int deliver_done(struct timerd *t, int error, struct vl_reply *reply,
                        const struct connection_handler *h)
{
        (void)reply;
        ((timerd_done_callback)h->callback)(t, error, h->userdata);
        return 0;
}

/* What Register and Reconcile start with: the name and the declaration. */
static int declared_parameters(struct vl_text *text, const char *name,
                               const struct timerd_declaration *d)
{
        vl_text_add_string(text, "name", name);
        return wire_add_declaration(text, d);
}

static int register_parameters(struct vl_text *text, const char *name,
                               const struct timerd_declaration *d, const struct timerd_start *start,
                               bool replace)
{
        int r = declared_parameters(text, name, d);

        if (r >= 0 && start)
                r = wire_add_start(text, start, "start_usec");
        if (r >= 0 && replace)
                vl_text_add_bool(text, "replace", true);
        return r;
}

int timerd_register(struct timerd *t, const char *name, const struct timerd_declaration *d,
                    const struct timerd_start *start, bool replace, struct timerd_claim *ret)
{
        struct connection_request q;
        struct vl_reply reply;
        int r;

        if (!t || !name || !d || !ret)
                return -EINVAL;
        connection_begin(t, &q, TIMER_METHOD("Register"), false);
        r = register_parameters(&q.text, name, d, start, replace);
        r = call(t, &q, r, &reply);
        if (r >= 0)
                r = wire_reply_claim(&reply, ret);
        vl_reply_done(&reply);
        return r;
}

static int deliver_claim(struct timerd *t, int error, struct vl_reply *reply,
                         const struct connection_handler *h)
{
        struct timerd_claim claim;

        if (error >= 0)
                error = wire_reply_claim(reply, &claim);
        ((timerd_claim_callback)h->callback)(t, error, error >= 0 ? &claim : NULL, h->userdata);
        return error == -TIMERD_E_PROTOCOL ? error : 0;
}

int timerd_register_async(struct timerd *t, const char *name, const struct timerd_declaration *d,
                          const struct timerd_start *start, bool replace,
                          timerd_claim_callback callback, void *userdata)
{
        const struct connection_handler handler =
            CONNECTION_TOKEN_HANDLER(deliver_claim, callback, userdata);
        struct connection_request q;
        int r;

        if (!t || !name || !d || !callback)
                return -EINVAL;
        connection_begin(t, &q, TIMER_METHOD("Register"), false);
        r = register_parameters(&q.text, name, d, start, replace);
        return connection_send_async(t, &q, r, &handler);
}

static int reconcile_parameters(struct vl_text *text, const char *name,
                                const struct timerd_declaration *d, enum timerd_desired desired,
                                uint64_t deadline_usec)
{
        const char *desired_name = vl_desired_to_string(desired);
        int r = declared_parameters(text, name, d);

        if (r >= 0 && !desired_name)
                r = -EINVAL;
        if (r >= 0)
                vl_text_add_string(text, "desired", desired_name);
        if (r >= 0 && (desired == TIMERD_DESIRED_EXACT || deadline_usec > 0))
                vl_text_add_u64(text, "deadline_usec", deadline_usec);
        return r;
}

static int decode_reconcile_reply(const struct vl_reply *reply, struct timerd_claim *ret,
                                  bool *ret_created)
{
        if (wire_reply_claim(reply, ret) < 0 || wire_reply_bool(reply, "created", ret_created) < 0)
                return -TIMERD_E_PROTOCOL;
        return 0;
}

int timerd_reconcile(struct timerd *t, const char *name, const struct timerd_declaration *d,
                     enum timerd_desired desired, uint64_t deadline_usec, struct timerd_claim *ret,
                     bool *ret_created)
{
        struct connection_request q;
        struct vl_reply reply;
        bool created;
        int r;

        if (!t || !name || !d || !ret)
                return -EINVAL;
        connection_begin(t, &q, TIMER_METHOD("Reconcile"), false);
        r = reconcile_parameters(&q.text, name, d, desired, deadline_usec);
        r = call(t, &q, r, &reply);
        if (r >= 0)
                r = decode_reconcile_reply(&reply, ret, &created);
        if (r >= 0 && ret_created)
                *ret_created = created;
        vl_reply_done(&reply);
        return r;
}

static int deliver_reconcile(struct timerd *t, int error, struct vl_reply *reply,
                             const struct connection_handler *h)
{
        struct timerd_claim claim;
        bool created = false;

        if (error >= 0)
                error = decode_reconcile_reply(reply, &claim, &created);
        ((timerd_reconcile_callback)h->callback)(t, error, error >= 0 ? &claim : NULL, created,
                                                 h->userdata);
        return error == -TIMERD_E_PROTOCOL ? error : 0;
}

int timerd_reconcile_async(struct timerd *t, const char *name, const struct timerd_declaration *d,
                           enum timerd_desired desired, uint64_t deadline_usec,
                           timerd_reconcile_callback callback, void *userdata)
{
        const struct connection_handler handler =
            CONNECTION_TOKEN_HANDLER(deliver_reconcile, callback, userdata);
        struct connection_request q;
        int r;

        if (!t || !name || !d || !callback)
                return -EINVAL;
        connection_begin(t, &q, TIMER_METHOD("Reconcile"), false);
        r = reconcile_parameters(&q.text, name, d, desired, deadline_usec);
        return connection_send_async(t, &q, r, &handler);
}

/* The parameters every control call starts with: who acts (claim or token), and when. */
static int control_parameters(struct vl_text *text, const struct timerd_claim *claim,
                              const struct timerd_token *token, const struct timerd_start *start)
{
        int r = wire_add_claim_or_token(text, claim, token);

        if (r >= 0 && start)
                r = start->kind == TIMERD_START_DEFAULT
                        ? -EINVAL
                        : wire_add_start(text, start, "deadline_usec");
        return r;
}

/* A control call without a start, whose reply carries nothing. */
static int control_call(struct timerd *t, const char *method, const struct timerd_claim *claim,
                        const struct timerd_token *token)
{
        struct connection_request q;
        int r;

        connection_begin(t, &q, method, false);
        r = control_parameters(&q.text, claim, token, NULL);
        return call_without_result(t, &q, r);
}

/* The asynchronous form of control_call(): the reply goes to handler. */
static int control_call_async(struct timerd *t, const char *method,
                              const struct timerd_claim *claim, const struct timerd_token *token,
                              const struct connection_handler *handler)
{
        struct connection_request q;
        int r;

        connection_begin(t, &q, method, false);
        r = control_parameters(&q.text, claim, token, NULL);
        return connection_send_async(t, &q, r, handler);
}

int timerd_schedule(struct timerd *t, const struct timerd_claim *claim,
                    const struct timerd_token *token, const struct timerd_start *start)
{
        struct connection_request q;
        int r;

        if (!t || !start)
                return -EINVAL;
        connection_begin(t, &q, TIMER_METHOD("Schedule"), false);
        r = control_parameters(&q.text, claim, token, start);
        return call_without_result(t, &q, r);
}

int timerd_reschedule(struct timerd *t, const struct timerd_claim *claim,
                      const struct timerd_token *token, const struct timerd_start *start,
                      uint64_t cadence_usec, uint64_t *ret_remaining_usec,
                      uint64_t *ret_cadence_usec)
{
        struct connection_request q;
        uint64_t remaining, cadence;
        struct vl_reply reply;
        int r;

        if (!t)
                return -EINVAL;
        connection_begin(t, &q, TIMER_METHOD("Reschedule"), false);
        r = control_parameters(&q.text, claim, token, start);
        if (r >= 0 && cadence_usec > 0)
                vl_text_add_u64(&q.text, "cadence_usec", cadence_usec);

        r = call(t, &q, r, &reply);
        if (r >= 0 && (wire_reply_u64(&reply, "remaining_usec", &remaining) < 0 ||
                       wire_reply_u64(&reply, "cadence_usec", &cadence) < 0))
                r = -TIMERD_E_PROTOCOL;
        if (r >= 0 && ret_remaining_usec)
                *ret_remaining_usec = remaining;
        if (r >= 0 && ret_cadence_usec)
                *ret_cadence_usec = cadence;
        vl_reply_done(&reply);
        return r;
}

int timerd_cancel(struct timerd *t, const struct timerd_claim *claim,
                  const struct timerd_token *token)
{
        if (!t)
                return -EINVAL;
        return control_call(t, TIMER_METHOD("Cancel"), claim, token);
}

int timerd_cancel_async(struct timerd *t, const struct timerd_claim *claim,
                        const struct timerd_token *token, timerd_done_callback callback,
                        void *userdata)
{
        const struct connection_handler handler =
            CONNECTION_TOKEN_HANDLER(deliver_done, callback, userdata);

        if (!t || !callback)
                return -EINVAL;
        return control_call_async(t, TIMER_METHOD("Cancel"), claim, token, &handler);
}

static int decode_kick_reply(const struct vl_reply *reply, uint64_t *ret_next_usec)
{
        return wire_reply_u64(reply, "next_usec", ret_next_usec);
}

int timerd_kick(struct timerd *t, const struct timerd_claim *claim,
                const struct timerd_token *token, uint64_t *ret_next_usec)
{
        struct connection_request q;
        struct vl_reply reply;
        uint64_t next;
        int r;

        if (!t)
                return -EINVAL;
        connection_begin(t, &q, TIMER_METHOD("Kick"), false);
        r = control_parameters(&q.text, claim, token, NULL);
        r = call(t, &q, r, &reply);
        if (r >= 0)
                r = decode_kick_reply(&reply, &next);
        if (r >= 0 && ret_next_usec)
                *ret_next_usec = next;
        vl_reply_done(&reply);
        return r;
}

static int deliver_kick(struct timerd *t, int error, struct vl_reply *reply,
                        const struct connection_handler *h)
{
        uint64_t next = 0;

        if (error >= 0)
                error = decode_kick_reply(reply, &next);
        ((timerd_kick_callback)h->callback)(t, error, next, h->userdata);
        return error == -TIMERD_E_PROTOCOL ? error : 0;
}

int timerd_kick_async(struct timerd *t, const struct timerd_claim *claim,
                      const struct timerd_token *token, timerd_kick_callback callback,
                      void *userdata)
{
        const struct connection_handler handler =
            CONNECTION_TOKEN_HANDLER(deliver_kick, callback, userdata);

        if (!t || !callback)
                return -EINVAL;
        return control_call_async(t, TIMER_METHOD("Kick"), claim, token, &handler);
}

int timerd_unregister(struct timerd *t, const struct timerd_claim *claim)
{
        if (!t || !claim)
                return -EINVAL;
        return control_call(t, TIMER_METHOD("Unregister"), claim, NULL);
}

int timerd_unregister_async(struct timerd *t, const struct timerd_claim *claim,
                            timerd_done_callback callback, void *userdata)
{
        const struct connection_handler handler =
            CONNECTION_TOKEN_HANDLER(deliver_done, callback, userdata);

        if (!t || !claim || !callback)
                return -EINVAL;
        return control_call_async(t, TIMER_METHOD("Unregister"), claim, NULL, &handler);
}

int timerd_signals_acknowledge(struct timerd *t)
{
        struct connection_request q;

        if (!t)
                return -EINVAL;
        connection_begin(t, &q, TIMER_METHOD("AcknowledgeSignals"), false);
        return call_without_result(t, &q, 0);
}

/* The parameters of a SignalTaken: which signal, naming which timer. */
static int signal_taken_parameters(struct vl_text *text, const struct timerd_signal *signal)
{
        if (signal->signo <= 0 || signal->generation == 0)
                return -EINVAL;
        vl_text_add_u64(text, "signal", (uint64_t)signal->signo);
        vl_text_add_u64(text, "generation", signal->generation);
        return 0;
}

int timerd_signal_taken(struct timerd *t, const struct timerd_signal *signal)
{
        struct connection_request q;
        int r;

        if (!t || !signal)
                return -EINVAL;
        connection_begin(t, &q, TIMER_METHOD("SignalTaken"), false);
        r = signal_taken_parameters(&q.text, signal);
        return call_without_result(t, &q, r);
}

int timerd_signal_taken_async(struct timerd *t, const struct timerd_signal *signal,
                              timerd_done_callback callback, void *userdata)
{
        const struct connection_handler handler =
            CONNECTION_TOKEN_HANDLER(deliver_done, callback, userdata);
        struct connection_request q;
        int r;

        if (!t || !signal || !callback)
                return -EINVAL;
        connection_begin(t, &q, TIMER_METHOD("SignalTaken"), false);
        r = signal_taken_parameters(&q.text, signal);
        return connection_send_async(t, &q, r, &handler);
}

int timerd_get(struct timerd *t, const char *name, uint32_t owner, struct timerd_timer *ret)
{
        struct connection_request q;
        struct vl_reply reply = {0};
        struct wire_object p, timer;
        int r;

        if (!t || !name || !ret)
                return -EINVAL;
        connection_begin(t, &q, TIMER_METHOD("Get"), false);
        vl_text_add_string(&q.text, "name", name);
        connection_add_owner(&q, owner);
        r = connection_send(t, &q, 0, true, &reply);
        if (r >= 0)
                r = wire_reply_parameters(&reply, &p) < 0 ||
                            wire_get_object(&p, "timer", &timer) < 0
                        ? -TIMERD_E_PROTOCOL
                        : wire_decode_timer(&timer, ret);
        vl_reply_done(&reply);
        return r;
}

static int complete_parameters(struct vl_text *text, const struct timerd_token *token,
                               enum timerd_outcome outcome, enum timerd_directive directive,
                               uint64_t duration_usec, const struct timerd_run_result *result)
{
        const char *outcome_name = vl_outcome_to_string(outcome);
        const char *directive_name = vl_directive_to_string(directive);

        /* NONE describes a timer that has not run yet; a run cannot end with it. */
        if (outcome == TIMERD_OUTCOME_NONE || !outcome_name || !directive_name)
                return -EINVAL;
        wire_add_token(text, token);
        vl_text_add_string(text, "outcome", outcome_name);
        vl_text_add_string(text, "directive", directive_name);
        if (duration_usec > 0)
                vl_text_add_u64(text, "duration_usec", duration_usec);
        return result ? wire_add_run_result(text, result) : 0;
}

int timerd_complete_result(struct timerd *t, const struct timerd_token *token,
                           enum timerd_outcome outcome, enum timerd_directive directive,
                           uint64_t duration_usec, const struct timerd_run_result *result)
{
        struct connection_request q;
        int r;

        if (!t || !token)
                return -EINVAL;
        connection_begin(t, &q, TIMER_METHOD("Complete"), false);
        r = complete_parameters(&q.text, token, outcome, directive, duration_usec, result);
        return call_without_result(t, &q, r);
}

int timerd_complete(struct timerd *t, const struct timerd_token *token, enum timerd_outcome outcome,
                    enum timerd_directive directive, uint64_t duration_usec)
{
        return timerd_complete_result(t, token, outcome, directive, duration_usec, NULL);
}

int timerd_complete_async(struct timerd *t, const struct timerd_token *token,
                          enum timerd_outcome outcome, enum timerd_directive directive,
                          uint64_t duration_usec, timerd_done_callback callback, void *userdata)
{
        const struct connection_handler handler =
            CONNECTION_TOKEN_HANDLER(deliver_done, callback, userdata);
        struct connection_request q;
        int r;

        if (!t || !token || !callback)
                return -EINVAL;
        connection_begin(t, &q, TIMER_METHOD("Complete"), false);
        r = complete_parameters(&q.text, token, outcome, directive, duration_usec, NULL);
        return connection_send_async(t, &q, r, &handler);
}
