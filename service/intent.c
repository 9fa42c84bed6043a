/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "service/intent.h"

#include <errno.h>
#include <stdlib.h>

int intent_queue_init(struct intent_queue *q, size_t capacity)
{
        *q = (struct intent_queue){.capacity = capacity};
        q->items = calloc(capacity, sizeof(*q->items));
        return q->items ? 0 : -ENOMEM;
}

void intent_queue_done(struct intent_queue *q)
{
        free(q->items);
        *q = (struct intent_queue){0};
}

int intent_post(struct intent_queue *q, struct peer *peer, uint64_t session,
                const struct vl_call *call)
{
        if (q->count == q->capacity)
                return -EBUSY;
        struct intent *it = &q->items[(q->head + q->count) % q->capacity];
        *it = (struct intent){.peer = peer, .session = session, .call = *call};
        q->count++;
        return 0;
}

int intent_take(struct intent_queue *q, struct intent *ret)
{
        if (q->count == 0)
                return 0;
        *ret = q->items[q->head];
        q->head = (q->head + 1) % q->capacity;
        q->count--;
        return 1;
}
