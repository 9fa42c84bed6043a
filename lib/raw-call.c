/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "connection.h"
#include "varlink/json.h"
#include "varlink/utf8.h"

/* Any method by name, with parameters and reply as JSON text: for tools like timerctl --json. */

/* Exactly one JSON object, nothing but white space around it; read as the service reads it. */
static int parse_parameters(const char *text, json_object **ret)
{
        struct vl_parser parser;
        json_object *obj = NULL;
        size_t len;
        int r;

        if (!text) {
                *ret = NULL;
                return 0;
        }
        len = strlen(text);
        if (len > CONNECTION_REQUEST_MAX) /* could never be sent */
                return -EMSGSIZE;
        if (!vl_json_text_valid(text, len))
                return -EINVAL;
        vl_parser_init(&parser);
        r = vl_json_parse(&parser, text, len, VL_MAX_DEPTH_DEFAULT, &obj);
        vl_parser_done(&parser);
        if (r == -ENOMEM)
                return r;
        if (r < 0 || !json_object_is_type(obj, json_type_object)) {
                json_object_put(obj);
                return -EINVAL;
        }
        *ret = obj;
        return 0;
}

/* Begin a call of method with parameters_json (NULL for {}): 0, -EINVAL, -EMSGSIZE or -ENOMEM,
 * with nothing begun on an error. */
static int raw_begin(struct timerd *t, struct connection_request *q, const char *method,
                     const char *parameters_json, bool more)
{
        json_object *parameters;
        int r = parse_parameters(parameters_json, &parameters);

        if (r < 0)
                return r;
        connection_begin(t, q, method, more);
        if (parameters) {
                vl_text_add_members(&q->text, parameters);
                q->has_owner = json_object_object_get_ex(parameters, "owner", NULL);
        }
        json_object_put(parameters);
        return 0;
}

/* The reply's parameters as malloc'd text, written as the messages are. */
static char *parameters_text(const struct vl_reply *reply)
{
        return vl_json_encode(reply->parameters);
}

int timerd_call_raw(struct timerd *t, const char *method, const char *parameters_json,
                    char **ret_reply_json)
{
        struct connection_request q;
        struct vl_reply reply;
        int r;

        if (ret_reply_json)
                *ret_reply_json = NULL;
        if (!t || !method)
                return -EINVAL;
        r = raw_begin(t, &q, method, parameters_json, false);
        if (r < 0)
                return r;

        r = connection_send(t, &q, 0, false, &reply);
        /* A varlink error leaves its parameters too: they say what went wrong. */
        if (reply.root && ret_reply_json) {
                *ret_reply_json = parameters_text(&reply);
                if (!*ret_reply_json && r >= 0)
                        r = -ENOMEM;
        }
        vl_reply_done(&reply);
        return r;
}

static int deliver_raw(struct timerd *t, int error, struct vl_reply *reply,
                       const struct connection_handler *h)
{
        char *text = reply ? parameters_text(reply) : NULL;

        if (reply && !text && error >= 0)
                error = -ENOMEM;
        ((timerd_reply_callback)h->callback)(t, error, text, reply && reply->continues,
                                             h->userdata);
        free(text);
        return 0;
}

int timerd_call_async(struct timerd *t, const char *method, const char *parameters_json,
                      uint64_t flags, timerd_reply_callback callback, void *userdata)
{
        const struct connection_handler handler =
            CONNECTION_HANDLER(deliver_raw, callback, userdata);
        struct connection_request q;
        int r;

        if (!t || !method || !callback || (flags & ~TIMERD_CALL_MORE) != 0)
                return -EINVAL;
        r = raw_begin(t, &q, method, parameters_json, flags & TIMERD_CALL_MORE);
        if (r < 0)
                return r;
        return connection_send_async(t, &q, 0, &handler);
}
