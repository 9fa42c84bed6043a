/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>

#include "connection.h"
#include "varlink/names.h"
#include "wire.h"

/* The io.timerd.Service interface: the service's own state. */

int timerd_status(struct timerd *t, struct timerd_status *ret)
{
        struct vl_reply reply;
        int r;

        if (!t || !ret)
                return -EINVAL;
        r = connection_call(t, VL_INTERFACE_STATUS ".Status", NULL, &reply);
        if (r >= 0)
                r = wire_decode_status(reply.parameters, ret);
        vl_reply_done(&reply);
        return r;
}
