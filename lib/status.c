/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>

#include "connection.h"
#include "varlink/names.h"
#include "wire.h"

/* The io.timerd.Service interface: the service's own state. */

#define STATUS_METHOD VL_INTERFACE_STATUS ".Status"

static int decode_status(const struct vl_reply *reply, struct timerd_status *ret)
{
        struct wire_object p;

        return wire_reply_parameters(reply, &p) < 0 ? -TIMERD_E_PROTOCOL
                                                    : wire_decode_status(&p, ret);
}

int timerd_status(struct timerd *t, struct timerd_status *ret)
{
        struct connection_request q;
        struct vl_reply reply;
        int r;

        if (!t || !ret)
                return -EINVAL;
        connection_begin(t, &q, STATUS_METHOD, false);
        r = connection_send(t, &q, 0, true, &reply);
        if (r >= 0)
                r = decode_status(&reply, ret);
        vl_reply_done(&reply);
        return r;
}

static int deliver_status(struct timerd *t, int error, struct vl_reply *reply,
                          const struct connection_handler *h)
{
        struct timerd_status status;

        if (error >= 0)
                error = decode_status(reply, &status);
        ((timerd_status_callback)h->callback)(t, error, error >= 0 ? &status : NULL, h->userdata);
        return error == -TIMERD_E_PROTOCOL ? error : 0;
}

int timerd_status_async(struct timerd *t, timerd_status_callback callback, void *userdata)
{
        const struct connection_handler handler =
            CONNECTION_TOKEN_HANDLER(deliver_status, callback, userdata);
        struct connection_request q;

        if (!t || !callback)
                return -EINVAL;
        connection_begin(t, &q, STATUS_METHOD, false);
        return connection_send_async(t, &q, 0, &handler);
}
