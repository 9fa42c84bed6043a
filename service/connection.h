/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Each connection's I/O state machine: read, take one call at a time onto the intent queue,
 * answer it, write what is queued, and drop the connection when it breaks or is told to go.
 * Live connections are found by session in O(1). A dropped connection is reported to the layer
 * above (service_take_closing()), which retires what its session left. Whether output waits for
 * the store's commit is the store's to say (store_hold()).
 */

#include <stdbool.h>
#include <stdint.h>

#include <json-c/json.h>

#include "base/hashmap.h"
#include "base/list.h"
#include "varlink/message.h"

struct param_error;
struct peer;
struct service;

/* The connections of the service, live and closed: this file's part of struct service. */
struct peers {
        struct list_node live; /* oldest first */
        uint32_t n_live;
        struct hashmap sessions; /* session → its live struct peer */
        uint32_t n_subscribers;
        struct list_node closing; /* dropped, what their sessions held not yet retired */
        struct list_node closed;  /* peers freed at the end of the iteration */
        struct list_node flushes; /* peers with output queued since their last write */
        uint64_t last_cookie;     /* of the last call taken */
};

/* Before the first connection. */
void service_peers_init(struct peers *peers);

struct peer *service_find_session(struct service *s, uint64_t session);

/* Watch an admitted connection and make it live, after any eviction that made room for it.
 * -errno (p is not live; the caller frees it). */
int service_add_peer(struct service *s, struct peer *p);

/* Send what the store released after its commit (store_take_released()), then write. */
void service_send_released(struct service *s);
/* Write what peers queued since their last write; peers whose connection broke are dropped. Once
 * per iteration, after the intents are drained and the store committed. */
void service_flush_all(struct service *s);

/*
 * What a method decided for its call, returned to the dispatcher (api.c), which sends it: the
 * method itself sends nothing.
 */
enum reply_kind {
        REPLY_NONE,       /* no answer now: the call is parked, or a stream goes on */
        REPLY_PARAMETERS, /* the reply's parameters (owned; NULL: out of memory, answered Busy) */
        REPLY_WRITTEN,    /* the method wrote its reply (service_reply_begin()): end it */
        REPLY_ERROR,      /* error, with its parameters (owned; may be NULL) */
};

struct reply {
        enum reply_kind kind;
        bool continues; /* REPLY_WRITTEN: a part of a stream; call the method again for the next */
        int error;
        json_object *parameters;
};

static inline struct reply reply_written(bool continues)
{
        return (struct reply){.kind = REPLY_WRITTEN, .continues = continues};
}

static inline struct reply reply_parameters(json_object *parameters)
{
        return (struct reply){.kind = REPLY_PARAMETERS, .parameters = parameters};
}

static inline struct reply reply_error(int error, json_object *parameters)
{
        return (struct reply){.kind = REPLY_ERROR, .error = error, .parameters = parameters};
}

/* err's typed error. */
struct reply reply_fail(const struct param_error *err);

/* Send what a method decided for the open call of p. */
void service_send_reply(struct service *s, struct peer *p, struct reply r);

/*
 * A reply written straight into p's output, without a tree: begin it (room: bytes had at once, so
 * that a reply that fits cannot fail later; continues: a part of a stream, which says so when the
 * call asked for more), write its fields into
 * the text returned, and end it, which sends it (after the store's commit when it must wait) and
 * ends the call unless it goes on; out of memory is answered Busy. Nothing else is sent to p in
 * between; a reply not to be sent after all is cancelled instead.
 */
struct vl_text *service_reply_begin(struct service *s, struct peer *p, bool continues, size_t room);
void service_reply_end(struct service *s, struct peer *p);
void service_reply_cancel(struct service *s, struct peer *p);
/* Answer p's call with error (parameters owned; may be NULL). */
void service_error(struct service *s, struct peer *p, int error, json_object *parameters);

/* Tell p `error` (parameters owned) as far as its socket takes it now, and drop it. */
void service_hang_up(struct service *s, struct peer *p, int error, json_object *parameters);

/* A peer is gone: close its connection, exactly once. What its session held is its caller's to
 * retire: the peer waits for service_take_closing(). */
void service_drop_peer(struct service *s, struct peer *p);
/* The next dropped peer whose session is to be retired (it stays allocated until
 * service_free_closed_peers()), or NULL. */
struct peer *service_take_closing(struct service *s);
/* Free the peers dropped so far (their connections are closed). */
void service_free_closed_peers(struct service *s);

/* p's event stream ends (its connection, or the service, is going). */
void service_unsubscribe(struct service *s, struct peer *p);
