/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * One connection to the service and the exchange of varlink messages on it: calls go out through
 * a bounded output buffer, their replies come back in order and are handed to each call's
 * handler. Blocking calls are the same exchange driven until their reply is in. The methods are
 * in the other files of lib/; they see struct timerd only through these functions.
 */

#include <stdbool.h>

#include "timerd/timerd.h"
#include "varlink/message.h"

/* A List page is one reply of up to the service's list-page timers (1000 by default, ~400 B
 * each, more when configured), so replies may be large; requests never are. */
#define CONNECTION_REPLY_MAX   (16U * 1024U * 1024U)
#define CONNECTION_REQUEST_MAX (16U * 1024U * 1024U)

struct connection_handler;

/*
 * Turns one reply into the arguments of the caller's callback and calls it. `error` is 0 with a
 * success reply, -TIMERD_E_* with an error reply, another negative error with reply NULL (the
 * connection broke, or the message was not a reply). Returns 0, or -TIMERD_E_PROTOCOL when a
 * success reply could not be decoded (the callback got that error).
 */
typedef int (*connection_deliver_fn)(struct timerd *t, int error, struct vl_reply *reply,
                                     const struct connection_handler *h);

struct connection_handler {
        connection_deliver_fn deliver;
        void (*callback)(void); /* the caller's callback, cast back by deliver */
        void *userdata;
        /* deliver reads a success reply from its tokens (reply->parameters is NULL): no tree */
        bool tokens;
};

#define CONNECTION_HANDLER(deliver_fn, cb, data)                                                   \
        ((struct connection_handler){                                                              \
            .deliver = (deliver_fn), .callback = (void (*)(void))(cb), .userdata = (data)})
/* The same for a deliver that reads a success reply from its tokens. */
#define CONNECTION_TOKEN_HANDLER(deliver_fn, cb, data)                                             \
        ((struct connection_handler){.deliver = (deliver_fn),                                      \
                                     .callback = (void (*)(void))(cb),                             \
                                     .userdata = (data),                                           \
                                     .tokens = true})

/*
 * A call written field by field straight into the output buffer: connection_begin() writes its
 * head, the caller adds the parameters' fields to q->text (varlink/message.h's vl_text_*), and one
 * of the connection_send*() queues it. An io.timerd.Timer call that names no owner
 * (connection_add_owner()) names the connection's. Nothing else may use t in between.
 */
struct connection_request {
        struct vl_text text;
        bool more;         /* a stream of replies */
        bool timer_method; /* an io.timerd.Timer call */
        bool has_owner;    /* it names an owner */
};

void connection_begin(struct timerd *t, struct connection_request *q, const char *method,
                      bool more);
/* The field "owner", unless it is TIMERD_OWNER_SELF. */
void connection_add_owner(struct connection_request *q, uint32_t owner);

/*
 * Each send takes q: error < 0 (its parameters could not be written: -EINVAL, -ENOMEM) drops it
 * and is returned. Queue it: -EBUSY after a stream, -ENOBUFS when the output buffer is full,
 * -EMSGSIZE for a call larger than CONNECTION_REQUEST_MAX, -ENOMEM, -TIMERD_E_DISCONNECTED when
 * broken.
 */
int connection_send_async(struct timerd *t, struct connection_request *q, int error,
                          const struct connection_handler *handler);

/*
 * One call with one reply, blocking. Returns 0 with the success reply in *ret (release it with
 * vl_reply_done), or -TIMERD_E_* for a varlink error (then *ret holds the error reply, its
 * parameters readable), or another negative error with *ret empty. -EBUSY while calls are in
 * flight. With `tokens`, a success reply as tokens only (reply->parameters NULL), read before the
 * next call on t.
 */
int connection_send(struct timerd *t, struct connection_request *q, int error, bool tokens,
                    struct vl_reply *ret);

/*
 * An asynchronous firing that came before its deadline (lib/hold.h): keep it for
 * timerd_process() to hand to h's callback when it is due. 1 when held; 0 when it is due now, or
 * there is no memory to hold it: the caller delivers it at once. `stream`: h is a stream's, whose
 * end must release it with connection_release_stream().
 */
int connection_hold(struct timerd *t, const struct timerd_firing *f,
                    const struct connection_handler *h, bool stream);

/* A blocking wait's firing that came before its deadline: return at the deadline, on the timerfd
 * t keeps for it (lib/hold.h). */
void connection_hold_sleep(struct timerd *t, const struct timerd_firing *f);

/* Before the last answer of h's call (a stream's is its end): the firings held from it, at once.
 * false when a callback closed t (then no further callback may run). */
bool connection_release_stream(struct timerd *t, const struct connection_handler *h);

/* Start a blocking `more` call; its replies are read with connection_next_in_stream(), as tokens
 * only when `tokens` (then each before the next). */
int connection_send_stream(struct timerd *t, struct connection_request *q, int error, bool tokens);

/*
 * The next reply of the open blocking stream, as connection_send() returns it. -EINVAL when none
 * is open. A reply the caller cannot decode must be reported with connection_stream_broken().
 */
int connection_next_in_stream(struct timerd *t, struct vl_reply *ret);
void connection_stream_broken(struct timerd *t);
