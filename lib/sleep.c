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
static int sleep_call(struct timerd *t, struct connection_request *q, int r,
                      struct timerd_sleep_result *ret)
{
        struct vl_reply reply;

        r = connection_send(t, q, r, true, &reply);
        if (r >= 0)
                r = wire_decode_sleep_result(&reply, ret);
        vl_reply_done(&reply);
        return r;
}

static int add_until(struct vl_text *text, const struct timerd_start *until)
{
        if (!until)
                return 0;
        switch (until->kind) {
        case TIMERD_START_DEFAULT:
                return 0;
        case TIMERD_START_AT:
                vl_text_add_u64(text, "until_usec", until->usec);
                return 0;
        case TIMERD_START_AFTER:
                vl_text_add_u64(text, "for_usec", until->usec);
                return 0;
        }
        return -EINVAL;
}

int timerd_sleep(struct timerd *t, enum timerd_clock clock, const struct timerd_start *until,
                 struct timerd_sleep_result *ret)
{
        const char *clock_name = vl_clock_to_string(clock);
        struct connection_request q;
        int r;

        if (!t || !clock_name || !ret)
                return -EINVAL;
        connection_begin(t, &q, TIMER_METHOD("Sleep"), false);
        vl_text_add_string(&q.text, "clock", clock_name);
        r = add_until(&q.text, until);
        return sleep_call(t, &q, r, ret);
}

int timerd_finish(struct timerd *t, const struct timerd_observation *observation,
                  enum timerd_finish_action action, struct timerd_finish_result *ret)
{
        struct connection_request q;
        struct vl_reply reply;
        int r;

        if (!t || !observation || action < 0 || action >= TIMERD_FINISH_MAX || !ret)
                return -EINVAL;
        connection_begin(t, &q, TIMER_METHOD("Finish"), false);
        wire_add_continuation(&q.text, &observation->continuation);
        vl_text_add_u64(&q.text, "lease", observation->lease);
        vl_text_add_string(&q.text, "action", finish_action_names[action]);
        r = connection_send(t, &q, 0, true, &reply);
        if (r >= 0)
                r = wire_decode_finish_result(&reply, ret);
        vl_reply_done(&reply);
        return r;
}

int timerd_resume(struct timerd *t, const struct timerd_ticket *ticket,
                  struct timerd_sleep_result *ret)
{
        struct connection_request q;

        if (!t || !ticket || !ret)
                return -EINVAL;
        connection_begin(t, &q, TIMER_METHOD("Resume"), false);
        wire_add_ticket(&q.text, ticket);
        return sleep_call(t, &q, 0, ret);
}
