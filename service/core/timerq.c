/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <assert.h>
#include <errno.h>
#include <stddef.h>

#include "base/arith.h"
#include "service/core/timerq.h"

/* Ties by (owner, name), which is unique, so each heap's order is total. */
static bool entry_tie_before(const void *a, const void *b, const void *userdata)
{
        const struct timerq *q = userdata;

        return q->tie_before(a, b);
}

/* The heap an entry of `kind` is ordered by deadline in. */
static enum timerq_heap_id deadline_heap_of(enum timerq_kind kind)
{
        return kind == TIMERQ_EXACT ? TIMERQ_HEAP_EXACT : TIMERQ_HEAP_COALESCING;
}

static enum timerq_kind kind_of_entry(const struct timerq_entry *e)
{
        return e->latest == TIMERQ_NOT_QUEUED ? TIMERQ_EXACT : TIMERQ_COALESCING;
}

void timerq_init(struct timerq *q, timerq_before_fn tie_before)
{
        q->tie_before = tie_before;
        for (enum timerq_heap_id id = 0; id < TIMERQ_HEAP_MAX; id++)
                heap_init(&q->heap[id],
                          id == TIMERQ_HEAP_LATEST ? offsetof(struct timerq_entry, latest)
                                                   : offsetof(struct timerq_entry, index),
                          entry_tie_before, q);
}

void timerq_done(struct timerq *q)
{
        for (enum timerq_heap_id id = 0; id < TIMERQ_HEAP_MAX; id++)
                heap_done(&q->heap[id]);
}

int timerq_reserve(struct timerq *q, enum timerq_kind kind, size_t n)
{
        int r = heap_reserve(&q->heap[deadline_heap_of(kind)], n);

        if (r >= 0 && kind == TIMERQ_COALESCING)
                r = heap_reserve(&q->heap[TIMERQ_HEAP_LATEST], n);
        return r;
}

void timerq_shrink(struct timerq *q, enum timerq_kind kind, size_t keep)
{
        heap_shrink(&q->heap[deadline_heap_of(kind)], keep);
        if (kind == TIMERQ_COALESCING)
                heap_shrink(&q->heap[TIMERQ_HEAP_LATEST], keep);
}

size_t timerq_capacity(const struct timerq *q, enum timerq_kind kind)
{
        size_t capacity = q->heap[deadline_heap_of(kind)].capacity;

        if (kind == TIMERQ_COALESCING && q->heap[TIMERQ_HEAP_LATEST].capacity < capacity)
                capacity = q->heap[TIMERQ_HEAP_LATEST].capacity;
        return capacity;
}

size_t timerq_size(const struct timerq *q)
{
        return heap_size(&q->heap[TIMERQ_HEAP_EXACT]) + heap_size(&q->heap[TIMERQ_HEAP_COALESCING]);
}

void timerq_entry_init(struct timerq_entry *e)
{
        *e = (struct timerq_entry){.index = TIMERQ_NOT_QUEUED, .latest = TIMERQ_NOT_QUEUED};
}

bool timerq_entry_queued(const struct timerq_entry *e)
{
        return e->index != TIMERQ_NOT_QUEUED;
}

bool timerq_contains(const struct timerq *q, const struct timerq_entry *e)
{
        return timerq_entry_queued(e) &&
               heap_contains(&q->heap[deadline_heap_of(kind_of_entry(e))], e);
}

uint64_t timerq_entry_deadline(const struct timerq *q, const struct timerq_entry *e)
{
        assert(timerq_entry_queued(e));
        return heap_key_of(&q->heap[deadline_heap_of(kind_of_entry(e))], e);
}

void timerq_put(struct timerq *q, struct timerq_entry *e, uint64_t deadline_usec,
                uint64_t accuracy_usec)
{
        enum timerq_kind kind = timerq_kind_of(accuracy_usec);
        uint64_t latest = saturating_add(deadline_usec, accuracy_usec);

        if (timerq_entry_queued(e) && kind_of_entry(e) != kind)
                timerq_remove(q, e);
        if (timerq_entry_queued(e)) {
                heap_rekey(&q->heap[deadline_heap_of(kind)], e, deadline_usec);
                if (kind == TIMERQ_COALESCING)
                        heap_rekey(&q->heap[TIMERQ_HEAP_LATEST], e, latest);
                return;
        }
        heap_insert(&q->heap[deadline_heap_of(kind)], e, deadline_usec);
        if (kind == TIMERQ_COALESCING)
                heap_insert(&q->heap[TIMERQ_HEAP_LATEST], e, latest);
}

void timerq_remove(struct timerq *q, struct timerq_entry *e)
{
        enum timerq_kind kind = kind_of_entry(e);

        if (!timerq_entry_queued(e))
                return;
        heap_remove(&q->heap[deadline_heap_of(kind)], e);
        if (kind == TIMERQ_COALESCING)
                heap_remove(&q->heap[TIMERQ_HEAP_LATEST], e);
}

void timerq_clear(struct timerq *q)
{
        for (enum timerq_heap_id id = 0; id < TIMERQ_HEAP_MAX; id++)
                heap_clear(&q->heap[id]);
}

struct timerq_entry *timerq_peek(const struct timerq *q)
{
        const struct heap *exact_heap = &q->heap[TIMERQ_HEAP_EXACT];
        const struct heap_slot *exact = heap_top(exact_heap),
                               *coalescing = heap_top(&q->heap[TIMERQ_HEAP_COALESCING]);

        if (!exact || !coalescing)
                return exact ? exact->entry : coalescing ? coalescing->entry : NULL;
        /* Both heaps order by the same (deadline, owner, name). */
        return heap_slot_before(exact_heap, exact, coalescing) ? exact->entry : coalescing->entry;
}

bool timerq_arm_time(const struct timerq *q, uint64_t *ret_usec)
{
        const struct heap_slot *exact = heap_top(&q->heap[TIMERQ_HEAP_EXACT]),
                               *latest = heap_top(&q->heap[TIMERQ_HEAP_LATEST]);

        if (!exact && !latest)
                return false;
        *ret_usec = !latest || (exact && exact->key < latest->key) ? exact->key : latest->key;
        return true;
}

/* A coalescing entry is in both its heaps, an exact one in one; the latest instant is never
 * before the deadline. */
static int entries_check(const struct timerq *q, enum timerq_heap_id id)
{
        const struct heap *h = &q->heap[id], *deadlines = &q->heap[TIMERQ_HEAP_COALESCING],
                          *latests = &q->heap[TIMERQ_HEAP_LATEST];

        for (size_t i = 0; i < h->n_slots; i++) {
                const struct timerq_entry *e = h->slots[i].entry;

                if ((id == TIMERQ_HEAP_EXACT) != (kind_of_entry(e) == TIMERQ_EXACT))
                        return -EUCLEAN;
                if (id == TIMERQ_HEAP_EXACT)
                        continue;
                if (!heap_contains(deadlines, e) || !heap_contains(latests, e) ||
                    heap_key_of(latests, e) < heap_key_of(deadlines, e))
                        return -EUCLEAN;
        }
        return 0;
}

int timerq_check(const struct timerq *q)
{
        if (heap_size(&q->heap[TIMERQ_HEAP_COALESCING]) != heap_size(&q->heap[TIMERQ_HEAP_LATEST]))
                return -EUCLEAN;
        for (enum timerq_heap_id id = 0; id < TIMERQ_HEAP_MAX; id++) {
                int r = heap_check(&q->heap[id]);

                if (r >= 0)
                        r = entries_check(q, id);
                if (r < 0)
                        return r;
        }
        return 0;
}
