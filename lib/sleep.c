/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>

#include "connection.h"
#include "varlink/names.h"
#include "wire.h"

/*
 * Interruptible sleeps: Sleep parks until a deadline; an alarm timer of the connection that fires
 * meanwhile answers it with an observation, which Finish ends and Resume may park again.
 */

#define TIMER_METHOD(name) VL_INTERFACE_TIMER "." name

static const char *const finish_action_names[TIMERD_FINISH_MAX] = {
    [TIMERD_FINISH_RESUME] = "resume",
    [TIMERD_FINISH_INTERRUPT] = "interrupt",
    [TIMERD_FINISH_TERMINATE] = "terminate",
};

/* Sleep and Resume answer alike. */
static int sleep_call(struct timerd *t, const char *method, json_object *parameters,
                      struct timerd_sleep_result *ret)
{
        struct vl_reply reply;
        int r;

        r = connection_call(t, method, parameters, &reply);
        if (r >= 0)
                r = wire_decode_sleep_result(reply.parameters, ret);
        vl_reply_done(&reply);
        return r;
}

static int add_until(json_object *parameters, const struct timerd_start *until)
{
        if (!until)
                return 0;
        switch (until->kind) {
        case TIMERD_START_DEFAULT:
                return 0;
        case TIMERD_START_AT:
                return vl_add_u64(parameters, "until_usec", until->usec);
        case TIMERD_START_AFTER:
                return vl_add_u64(parameters, "for_usec", until->usec);
        }
        return -EINVAL;
}

int timerd_sleep(struct timerd *t, enum timerd_clock clock, const struct timerd_start *until,
                 struct timerd_sleep_result *ret)
{
        const char *clock_name = vl_clock_to_string(clock);
        json_object *parameters;
        int r;

        if (!t || !clock_name || !ret)
                return -EINVAL;
        parameters = json_object_new_object();
        if (!parameters)
                return -ENOMEM;
        r = vl_add_string(parameters, "clock", clock_name);
        if (r >= 0)
                r = add_until(parameters, until);
        if (r < 0) {
                json_object_put(parameters);
                return r;
        }
        return sleep_call(t, TIMER_METHOD("Sleep"), parameters, ret);
}

int timerd_finish(struct timerd *t, const struct timerd_observation *observation,
                  enum timerd_finish_action action, struct timerd_finish_result *ret)
{
        json_object *parameters;
        struct vl_reply reply;
        int r;

        if (!t || !observation || action < 0 || action >= TIMERD_FINISH_MAX || !ret)
                return -EINVAL;
        parameters = json_object_new_object();
        if (!parameters)
                return -ENOMEM;
        if (wire_add_continuation(parameters, &observation->continuation) < 0 ||
            vl_add_u64(parameters, "lease", observation->lease) < 0 ||
            vl_add_string(parameters, "action", finish_action_names[action]) < 0) {
                json_object_put(parameters);
                return -ENOMEM;
        }
        r = connection_call(t, TIMER_METHOD("Finish"), parameters, &reply);
        if (r >= 0)
                r = wire_decode_finish_result(reply.parameters, ret);
        vl_reply_done(&reply);
        return r;
}

int timerd_resume(struct timerd *t, const struct timerd_ticket *ticket,
                  struct timerd_sleep_result *ret)
{
        json_object *parameters;

        if (!t || !ticket || !ret)
                return -EINVAL;
        parameters = json_object_new_object();
        if (!parameters)
                return -ENOMEM;
        if (wire_add_ticket(parameters, ticket) < 0) {
                json_object_put(parameters);
                return -ENOMEM;
        }
        return sleep_call(t, TIMER_METHOD("Resume"), parameters, ret);
}
