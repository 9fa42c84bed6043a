/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <string.h>

#include "connection.h"
#include "varlink/names.h"
#include "wire.h"

/*
 * Waiting for firings of notify timers: one Wait call, or a `more` stream of them. A firing that
 * comes before its deadline (a handover) reaches the caller at the deadline (lib/hold.h).
 */

#define WAIT_METHOD VL_INTERFACE_TIMER ".Wait"

static int wait_parameters(struct vl_text *text, const char *const *names, size_t n_names,
                           uint64_t timeout_usec)
{
        if (n_names > 0 && !names)
                return -EINVAL;
        for (size_t i = 0; i < n_names; i++)
                if (!names[i])
                        return -EINVAL;

        if (n_names > 0) {
                vl_text_array_begin(text, "names");
                for (size_t i = 0; i < n_names; i++)
                        vl_text_array_add_string(text, names[i], strlen(names[i]));
                vl_text_array_end(text);
        }
        if (timeout_usec > 0)
                vl_text_add_u64(text, "timeout_usec", timeout_usec);
        return 0;
}

/* The firing of a blocking call, returned at its deadline. */
static int decode_firing_reply(struct timerd *t, int r, struct vl_reply *reply,
                               struct timerd_firing *ret)
{
        if (r >= 0)
                r = wire_reply_firing(reply, ret);
        vl_reply_done(reply);
        if (r >= 0)
                connection_hold_sleep(t, ret);
        return r;
}

int timerd_wait(struct timerd *t, const char *const *names, size_t n_names, uint64_t timeout_usec,
                struct timerd_firing *ret)
{
        struct connection_request q;
        struct vl_reply reply;
        int r;

        if (!t || !ret)
                return -EINVAL;
        connection_begin(t, &q, WAIT_METHOD, false);
        r = wait_parameters(&q.text, names, n_names, timeout_usec);
        r = connection_send(t, &q, r, true, &reply);
        return decode_firing_reply(t, r, &reply, ret);
}

int timerd_wait_stream(struct timerd *t, const char *const *names, size_t n_names)
{
        struct connection_request q;
        int r;

        if (!t)
                return -EINVAL;
        connection_begin(t, &q, WAIT_METHOD, true);
        r = wait_parameters(&q.text, names, n_names, 0);
        return connection_send_stream(t, &q, r, true);
}

int timerd_wait_next(struct timerd *t, struct timerd_firing *ret)
{
        struct vl_reply reply;
        int r;

        if (!t || !ret)
                return -EINVAL;
        r = connection_next_in_stream(t, &reply);
        r = decode_firing_reply(t, r, &reply, ret);
        if (r == -TIMERD_E_PROTOCOL)
                connection_stream_broken(t);
        return r;
}

static int deliver_firing(struct timerd *t, int error, struct vl_reply *reply,
                          const struct connection_handler *h)
{
        struct timerd_firing firing;
        bool last;

        if (error >= 0)
                error = wire_reply_firing(reply, &firing);
        /* The last answer of a call (a stream ends with an error): what its stream held first. */
        last = error < 0 || !reply->continues;
        if (last && !connection_release_stream(t, h))
                return 0;
        if (error >= 0 && connection_hold(t, &firing, h, !last) > 0)
                return 0;
        ((timerd_firing_callback)h->callback)(t, error, error >= 0 ? &firing : NULL, h->userdata);
        return error == -TIMERD_E_PROTOCOL ? error : 0;
}

static int wait_async(struct timerd *t, const char *const *names, size_t n_names,
                      uint64_t timeout_usec, bool more, timerd_firing_callback callback,
                      void *userdata)
{
        const struct connection_handler handler =
            CONNECTION_TOKEN_HANDLER(deliver_firing, callback, userdata);
        struct connection_request q;
        int r;

        if (!t || !callback)
                return -EINVAL;
        connection_begin(t, &q, WAIT_METHOD, more);
        r = wait_parameters(&q.text, names, n_names, timeout_usec);
        return connection_send_async(t, &q, r, &handler);
}

int timerd_wait_async(struct timerd *t, const char *const *names, size_t n_names,
                      uint64_t timeout_usec, timerd_firing_callback callback, void *userdata)
{
        return wait_async(t, names, n_names, timeout_usec, false, callback, userdata);
}

int timerd_wait_stream_async(struct timerd *t, const char *const *names, size_t n_names,
                             timerd_firing_callback callback, void *userdata)
{
        return wait_async(t, names, n_names, 0, true, callback, userdata);
}
