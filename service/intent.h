/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The bounded queue between connection code and the loop. A connection parses a request into an
 * intent and posts it; the loop drains the queue at one point per iteration, in order. A full
 * queue refuses the post (the caller answers Busy) and changes nothing else.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "varlink/message.h"

struct peer;

struct intent {
        struct peer *peer;
        uint64_t session; /* to notice a peer that went away before the drain */
        /* Read in place in the peer's parser, which takes no next message while it is queued. */
        struct vl_call call;
};

struct intent_queue {
        struct intent *items;
        size_t capacity;
        size_t head;
        size_t count;
};

int intent_queue_init(struct intent_queue *q, size_t capacity);
void intent_queue_done(struct intent_queue *q);

/* -EBUSY when full. */
int intent_post(struct intent_queue *q, struct peer *peer, uint64_t session,
                const struct vl_call *call);
/* 1 and *ret filled, 0 when empty. */
int intent_take(struct intent_queue *q, struct intent *ret);
