/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>

#include "connection.h"
#include "varlink/names.h"
#include "wire.h"

/* The registry's events: a `more` stream of io.timerd.Service.Subscribe. */

#define SUBSCRIBE_METHOD VL_INTERFACE_STATUS ".Subscribe"

static int subscribe_parameters(bool all, json_object **ret)
{
        json_object *parameters = json_object_new_object();

        if (!parameters)
                return -ENOMEM;
        if (all && vl_add_bool(parameters, "all", true) < 0) {
                json_object_put(parameters);
                return -ENOMEM;
        }
        *ret = parameters;
        return 0;
}

static int decode_event(const struct vl_reply *reply, struct timerd_event *ret)
{
        json_object *event;

        if (wire_get_object(reply->parameters, "event", &event) < 0)
                return -TIMERD_E_PROTOCOL;
        return wire_decode_event(event, ret);
}

int timerd_subscribe(struct timerd *t, bool all)
{
        json_object *parameters;
        int r;

        if (!t)
                return -EINVAL;
        r = subscribe_parameters(all, &parameters);
        if (r < 0)
                return r;
        return connection_open_stream(t, SUBSCRIBE_METHOD, parameters, false);
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
            CONNECTION_HANDLER(deliver_event, callback, userdata);
        json_object *parameters;
        int r;

        if (!t || !callback)
                return -EINVAL;
        r = subscribe_parameters(all, &parameters);
        if (r < 0)
                return r;
        return connection_call_async(t, SUBSCRIBE_METHOD, parameters, true, &handler);
}
