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
            .clock =
                policy == TIMERD_POLICY_CALENDAR ? TIMERD_CLOCK_REALTIME : TIMERD_CLOCK_MONOTONIC,
            .lifetime = TIMERD_LIFETIME_TRANSIENT,
            .delivery = TIMERD_DELIVERY_NOTIFY,
            .catch_up = true,
            .handover_usec = TIMERD_HANDOVER_DEFAULT,
        };
}

/*
 * Sends the call unless building its parameters failed (r < 0); either way takes parameters. A
 * success reply comes as tokens (lib/wire.h's wire_reply_*), read before the next call.
 */
static int call(struct timerd *t, const char *method, json_object *parameters, int r,
                struct vl_reply *ret)
{
        if (r < 0) {
                *ret = (struct vl_reply){};
                json_object_put(parameters);
                return r;
        }
        return connection_call_tokens(t, method, parameters, ret);
}

/* The asynchronous form of call(). */
static int call_async(struct timerd *t, const char *method, json_object *parameters, int r,
                      const struct connection_handler *handler)
{
        if (r < 0) {
                json_object_put(parameters);
                return r;
        }
        return connection_call_async(t, method, parameters, false, handler);
}

static json_object *new_parameters(int *ret_error)
{
        json_object *parameters = json_object_new_object();

        *ret_error = parameters ? 0 : -ENOMEM;
        return parameters;
}

/* For calls whose reply carries nothing: release it and pass the result on. */
static int call_without_result(struct timerd *t, const char *method, json_object *parameters, int r)
{
        struct vl_reply reply;

        r = call(t, method, parameters, r, &reply);
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
static json_object *declared_parameters(const char *name, const struct timerd_declaration *d,
                                        int *ret_error)
{
        json_object *parameters = new_parameters(ret_error);

        if (*ret_error >= 0)
                *ret_error = vl_add_string(parameters, "name", name);
        if (*ret_error >= 0)
                *ret_error = wire_add_declaration(parameters, d);
        return parameters;
}

static int register_parameters(const char *name, const struct timerd_declaration *d,
                               const struct timerd_start *start, bool replace, json_object **ret)
{
        int r;
        json_object *parameters = declared_parameters(name, d, &r);

        if (r >= 0 && start)
                r = wire_add_start(parameters, start, "start_usec");
        if (r >= 0 && replace)
                r = vl_add_bool(parameters, "replace", true);
        *ret = parameters;
        return r;
}

int timerd_register(struct timerd *t, const char *name, const struct timerd_declaration *d,
                    const struct timerd_start *start, bool replace, struct timerd_claim *ret)
{
        json_object *parameters;
        struct vl_reply reply;
        int r;

        if (!t || !name || !d || !ret)
                return -EINVAL;
        r = register_parameters(name, d, start, replace, &parameters);
        r = call(t, TIMER_METHOD("Register"), parameters, r, &reply);
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
        json_object *parameters;
        int r;

        if (!t || !name || !d || !callback)
                return -EINVAL;
        r = register_parameters(name, d, start, replace, &parameters);
        return call_async(t, TIMER_METHOD("Register"), parameters, r, &handler);
}

static int reconcile_parameters(const char *name, const struct timerd_declaration *d,
                                enum timerd_desired desired, uint64_t deadline_usec,
                                json_object **ret)
{
        const char *desired_name = vl_desired_to_string(desired);
        int r;
        json_object *parameters = declared_parameters(name, d, &r);

        if (r >= 0)
                r = desired_name ? vl_add_string(parameters, "desired", desired_name) : -EINVAL;
        if (r >= 0 && (desired == TIMERD_DESIRED_EXACT || deadline_usec > 0))
                r = vl_add_u64(parameters, "deadline_usec", deadline_usec);
        *ret = parameters;
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
        json_object *parameters;
        struct vl_reply reply;
        bool created;
        int r;

        if (!t || !name || !d || !ret)
                return -EINVAL;
        r = reconcile_parameters(name, d, desired, deadline_usec, &parameters);
        r = call(t, TIMER_METHOD("Reconcile"), parameters, r, &reply);
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
        json_object *parameters;
        int r;

        if (!t || !name || !d || !callback)
                return -EINVAL;
        r = reconcile_parameters(name, d, desired, deadline_usec, &parameters);
        return call_async(t, TIMER_METHOD("Reconcile"), parameters, r, &handler);
}

/* The parameters every control call starts with: who acts (claim or token), and when. */
static json_object *control_parameters(const struct timerd_claim *claim,
                                       const struct timerd_token *token,
                                       const struct timerd_start *start, int *ret_error)
{
        json_object *parameters = new_parameters(ret_error);

        if (*ret_error >= 0)
                *ret_error = wire_add_claim_or_token(parameters, claim, token);
        if (*ret_error >= 0 && start)
                *ret_error = start->kind == TIMERD_START_DEFAULT
                                 ? -EINVAL
                                 : wire_add_start(parameters, start, "deadline_usec");
        return parameters;
}

/* A control call without a start, whose reply carries nothing. */
static int control_call(struct timerd *t, const char *method, const struct timerd_claim *claim,
                        const struct timerd_token *token)
{
        int r;
        json_object *parameters = control_parameters(claim, token, NULL, &r);

        return call_without_result(t, method, parameters, r);
}

/* The asynchronous form of control_call(): the reply goes to handler. */
static int control_call_async(struct timerd *t, const char *method,
                              const struct timerd_claim *claim, const struct timerd_token *token,
                              const struct connection_handler *handler)
{
        int r;
        json_object *parameters = control_parameters(claim, token, NULL, &r);

        return call_async(t, method, parameters, r, handler);
}

int timerd_schedule(struct timerd *t, const struct timerd_claim *claim,
                    const struct timerd_token *token, const struct timerd_start *start)
{
        json_object *parameters;
        int r;

        if (!t || !start)
                return -EINVAL;
        parameters = control_parameters(claim, token, start, &r);
        return call_without_result(t, TIMER_METHOD("Schedule"), parameters, r);
}

int timerd_reschedule(struct timerd *t, const struct timerd_claim *claim,
                      const struct timerd_token *token, const struct timerd_start *start,
                      uint64_t cadence_usec, uint64_t *ret_remaining_usec,
                      uint64_t *ret_cadence_usec)
{
        uint64_t remaining, cadence;
        json_object *parameters;
        struct vl_reply reply;
        int r;

        if (!t)
                return -EINVAL;
        parameters = control_parameters(claim, token, start, &r);
        if (r >= 0 && cadence_usec > 0)
                r = vl_add_u64(parameters, "cadence_usec", cadence_usec);

        r = call(t, TIMER_METHOD("Reschedule"), parameters, r, &reply);
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
        json_object *parameters;
        struct vl_reply reply;
        uint64_t next;
        int r;

        if (!t)
                return -EINVAL;
        parameters = control_parameters(claim, token, NULL, &r);
        r = call(t, TIMER_METHOD("Kick"), parameters, r, &reply);
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
        json_object *parameters;
        int r;

        if (!t)
                return -EINVAL;
        parameters = new_parameters(&r);
        return call_without_result(t, TIMER_METHOD("AcknowledgeSignals"), parameters, r);
}

/* The parameters of a SignalTaken: which signal, naming which timer. */
static json_object *signal_taken_parameters(const struct timerd_signal *signal, int *ret_error)
{
        json_object *parameters = new_parameters(ret_error);

        if (*ret_error >= 0 && (signal->signo <= 0 || signal->generation == 0))
                *ret_error = -EINVAL;
        if (*ret_error >= 0)
                *ret_error = vl_add_u64(parameters, "signal", (uint64_t)signal->signo);
        if (*ret_error >= 0)
                *ret_error = vl_add_u64(parameters, "generation", signal->generation);
        return parameters;
}

int timerd_signal_taken(struct timerd *t, const struct timerd_signal *signal)
{
        json_object *parameters;
        int r;

        if (!t || !signal)
                return -EINVAL;
        parameters = signal_taken_parameters(signal, &r);
        return call_without_result(t, TIMER_METHOD("SignalTaken"), parameters, r);
}

int timerd_signal_taken_async(struct timerd *t, const struct timerd_signal *signal,
                              timerd_done_callback callback, void *userdata)
{
        const struct connection_handler handler =
            CONNECTION_HANDLER(deliver_done, callback, userdata);
        json_object *parameters;
        int r;

        if (!t || !signal || !callback)
                return -EINVAL;
        parameters = signal_taken_parameters(signal, &r);
        return call_async(t, TIMER_METHOD("SignalTaken"), parameters, r, &handler);
}

int timerd_get(struct timerd *t, const char *name, uint32_t owner, struct timerd_timer *ret)
{
        json_object *parameters, *timer;
        struct vl_reply reply = {0};
        int r;

        if (!t || !name || !ret)
                return -EINVAL;
        parameters = new_parameters(&r);
        if (r >= 0)
                r = vl_add_string(parameters, "name", name);
        if (r >= 0)
                r = wire_add_owner(parameters, owner);

        if (r < 0)
                json_object_put(parameters);
        else
                r = connection_call(t, TIMER_METHOD("Get"), parameters, &reply);
        if (r >= 0)
                r = wire_get_object(reply.parameters, "timer", &timer) < 0
                        ? -TIMERD_E_PROTOCOL
                        : wire_decode_timer(timer, ret);
        vl_reply_done(&reply);
        return r;
}

static int complete_parameters(const struct timerd_token *token, enum timerd_outcome outcome,
                               enum timerd_directive directive, uint64_t duration_usec,
                               const struct timerd_run_result *result, json_object **ret)
{
        const char *outcome_name = vl_outcome_to_string(outcome);
        const char *directive_name = vl_directive_to_string(directive);
        json_object *parameters;
        int r;

        /* NONE describes a timer that has not run yet; a run cannot end with it. */
        if (outcome == TIMERD_OUTCOME_NONE || !outcome_name || !directive_name)
                return -EINVAL;
        parameters = new_parameters(&r);
        if (r >= 0)
                r = wire_add_token(parameters, token);
        if (r >= 0)
                r = vl_add_string(parameters, "outcome", outcome_name);
        if (r >= 0)
                r = vl_add_string(parameters, "directive", directive_name);
        if (r >= 0 && duration_usec > 0)
                r = vl_add_u64(parameters, "duration_usec", duration_usec);
        if (r >= 0 && result)
                r = wire_add_run_result(parameters, result);
        if (r < 0) {
                json_object_put(parameters);
                return r;
        }
        *ret = parameters;
        return 0;
}

int timerd_complete_result(struct timerd *t, const struct timerd_token *token,
                           enum timerd_outcome outcome, enum timerd_directive directive,
                           uint64_t duration_usec, const struct timerd_run_result *result)
{
        json_object *parameters;
        int r;

        if (!t || !token)
                return -EINVAL;
        r = complete_parameters(token, outcome, directive, duration_usec, result, &parameters);
        if (r < 0)
                return r;
        return call_without_result(t, TIMER_METHOD("Complete"), parameters, 0);
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
        json_object *parameters;
        int r;

        if (!t || !token || !callback)
                return -EINVAL;
        r = complete_parameters(token, outcome, directive, duration_usec, NULL, &parameters);
        if (r < 0)
                return r;
        return call_async(t, TIMER_METHOD("Complete"), parameters, 0, &handler);
}
