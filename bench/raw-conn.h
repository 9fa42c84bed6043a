/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Raw varlink connections, beside libtimerd: many calls in flight on a connection (the service
 * answers the calls of one connection in order), many connections driven from one thread,
 * firings read from several streams at once. Calls are written as text and replies read with a
 * few string searches, so the client costs little beside the service and the numbers show the
 * service, not the client library (B2 measures libtimerd itself too).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "varlink/frame.h"

struct raw_conn {
        int fd;
        struct vl_reader in;
        struct vl_writer out;
        size_t in_flight;
};

/* max_reply: the largest reply accepted (a List page of 1000 timers is ~430 KB). */
void raw_conn_open(const char *path, size_t max_reply, struct raw_conn *ret);
void raw_conn_close(struct raw_conn *c);

/* What a pipeline sends and what it does with the replies, for one connection. */
struct pipeline_ops {
        /* Write the next call (without its NUL) into buf; its length, or 0 when none is ready. */
        size_t (*next)(void *userdata, char *buf, size_t size);
        /* The reply to the oldest call in flight. */
        void (*reply)(void *userdata, const char *msg, size_t len);
};

/*
 * Keep up to `window` calls in flight on each of n connections (userdata[i] for conns[i]) until
 * every connection has nothing to send and nothing in flight. Window 1 is a synchronous client.
 */
void pipeline_run(struct raw_conn *conns, void *const *userdata, size_t n, size_t window,
                  const struct pipeline_ops *ops);

/* One call and its reply (malloc'd, free it); NULL when timerd closed the connection instead. */
char *raw_call(struct raw_conn *c, const char *msg);

/* Send a call without waiting for its reply (a stream's opening Wait). */
void raw_send(struct raw_conn *c, const char *msg);

/* Read what c has and hand each whole message to fn; false at end of stream. Never blocks. */
bool raw_receive(struct raw_conn *c, void (*fn)(void *userdata, const char *msg, size_t len),
                 void *userdata);

/* The unsigned number after the first "field": in msg; false when there is none. */
bool reply_u64(const char *msg, const char *field, uint64_t *ret);
bool reply_is_error(const char *msg);
