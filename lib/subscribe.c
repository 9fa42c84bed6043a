/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>

#include "connection.h"
#include "varlink/names.h"
#include "wire.h"

/* The registry's events: a `more` stream of io.timerd.Service.Subscribe. */

#define SUBSCRIBE_METHOD VL_INTERFACE_STATUS ".Subscribe"

static void subscribe_begin(struct timerd *t, struct connection_request *q, bool all)
{
        connection_begin(t, q, SUBSCRIBE_METHOD, true);
        if (all)
                vl_text_add_bool(&q->text, "all", true);
}

static int decode_event(const struct vl_reply *reply, struct timerd_event *ret)
{
        struct wire_object p, event;

        if (wire_reply_parameters(reply, &p) < 0 || wire_get_object(&p, "event", &event) < 0)
                return -TIMERD_E_PROTOCOL;
        return wire_decode_event(&event, ret);
}

int timerd_subscribe(struct timerd *t, bool all)
{
        struct connection_request q;

        if (!t)
                return -EINVAL;
        subscribe_begin(t, &q, all);
        return connection_send_stream(t, &q, 0, true);
}

int timerd_subscribe_next(struct timerd *t, struct timerd_event *ret)
{
        struct vl_reply reply;
        int r;

        if (!t || !ret)
                return -EINVAL;
        r = connection_next_in_stream(t, &reply);
        if (r >= 0)
                r = decode_event(&reply, ret);
        vl_reply_done(&reply);
        if (r == -TIMERD_E_PROTOCOL)
                connection_stream_broken(t);
        return r;
}

static int deliver_event(struct timerd *t, int error, struct vl_reply *reply,
                         const struct connection_handler *h)
{
        struct timerd_event event;

        if (error >= 0)
                error = decode_event(reply, &event);
        ((timerd_event_callback)h->callback)(t, error, error >= 0 ? &event : NULL, h->userdata);
        return error == -TIMERD_E_PROTOCOL ? error : 0;
}

int timerd_subscribe_async(struct timerd *t, bool all, timerd_event_callback callback,
                           void *userdata)
{
        const struct connection_handler handler =
            CONNECTION_TOKEN_HANDLER(deliver_event, callback, userdata);
        struct connection_request q;

        if (!t || !callback)
                return -EINVAL;
        subscribe_begin(t, &q, all);
        return connection_send_async(t, &q, 0, &handler);
}
