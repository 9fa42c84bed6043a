/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>

#include "connection.h"
#include "hold.h"
#include "varlink/names.h"
#include "wire.h"

/*
 * Waiting for firings of notify timers: one Wait call, or a `more` stream of them. A firing that
 * comes before its deadline (a handover) reaches the caller at the deadline (lib/hold.h).
 */

#define WAIT_METHOD VL_INTERFACE_TIMER ".Wait"

static int wait_parameters(const char *const *names, size_t n_names, uint64_t timeout_usec,
                           json_object **ret)
{
        json_object *parameters, *array;

        if (n_names > 0 && !names)
                return -EINVAL;
        for (size_t i = 0; i < n_names; i++)
                if (!names[i])
                        return -EINVAL;

        parameters = json_object_new_object();
        if (!parameters)
                return -ENOMEM;
        if (n_names > 0) {
                array = json_object_new_array();
                if (!array || json_object_object_add(parameters, "names", array) < 0) {
                        json_object_put(array);
                        json_object_put(parameters);
                        return -ENOMEM;
                }
                for (size_t i = 0; i < n_names; i++) {
                        json_object *name = json_object_new_string(names[i]);

                        if (!name || json_object_array_add(array, name) < 0) {
                                json_object_put(name);
                                json_object_put(parameters);
                                return -ENOMEM;
                        }
                }
        }
        if (timeout_usec > 0 && vl_add_u64(parameters, "timeout_usec", timeout_usec) < 0) {
                json_object_put(parameters);
                return -ENOMEM;
        }
        *ret = parameters;
        return 0;
}

/* The firing of a blocking call, returned at its deadline. */
static int decode_firing_reply(int r, struct vl_reply *reply, struct timerd_firing *ret)
{
        if (r >= 0)
                r = wire_reply_firing(reply, ret);
        vl_reply_done(reply);
        if (r >= 0)
                hold_sleep(ret);
        return r;
}

int timerd_wait(struct timerd *t, const char *const *names, size_t n_names, uint64_t timeout_usec,
                struct timerd_firing *ret)
{
        json_object *parameters;
        struct vl_reply reply;
        int r;

        if (!t || !ret)
                return -EINVAL;
        r = wait_parameters(names, n_names, timeout_usec, &parameters);
        if (r < 0)
                return r;
        r = connection_call_tokens(t, WAIT_METHOD, parameters, &reply);
        return decode_firing_reply(r, &reply, ret);
}

int timerd_wait_stream(struct timerd *t, const char *const *names, size_t n_names)
{
        json_object *parameters;
        int r;

        if (!t)
                return -EINVAL;
        r = wait_parameters(names, n_names, 0, &parameters);
        if (r < 0)
                return r;
        return connection_open_stream(t, WAIT_METHOD, parameters, true);
}

int timerd_wait_next(struct timerd *t, struct timerd_firing *ret)
{
        struct vl_reply reply;
        int r;

        if (!t || !ret)
                return -EINVAL;
        r = connection_next_in_stream(t, &reply);
        r = decode_firing_reply(r, &reply, ret);
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
        json_object *parameters;
        int r;

        if (!t || !callback)
                return -EINVAL;
        r = wait_parameters(names, n_names, timeout_usec, &parameters);
        if (r < 0)
                return r;
        return connection_call_async(t, WAIT_METHOD, parameters, more, &handler);
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
