/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "service/timerq.h"

#define ARITY 4

static size_t parent_of(size_t i)
{
        return (i - 1) / ARITY;
}

static size_t first_child_of(size_t i)
{
        return i * ARITY + 1;
}

/* Keys first (in the slot); ties by (owner, name), which is unique, so the order is total. */
static bool slot_before(const struct timerq *q, const struct timerq_slot *a,
                        const struct timerq_slot *b)
{
        if (a->key != b->key)
                return a->key < b->key;
        return q->tie_before(a->entry, b->entry);
}

static void slot_place(struct timerq_heap *h, enum timerq_order order, size_t i,
                       struct timerq_slot s)
{
        h->slots[i] = s;
        s.entry->index[order] = (uint32_t)i;
}

static void sift_up(const struct timerq *q, struct timerq_heap *h, enum timerq_order order,
                    size_t i)
{
        struct timerq_slot s = h->slots[i];

        while (i > 0) {
                size_t p = parent_of(i);

                if (!slot_before(q, &s, &h->slots[p]))
                        break;
                slot_place(h, order, i, h->slots[p]);
                i = p;
        }
        slot_place(h, order, i, s);
}

static void sift_down(const struct timerq *q, struct timerq_heap *h, enum timerq_order order,
                      size_t i)
{
        struct timerq_slot s = h->slots[i];

        for (;;) {
                size_t c = first_child_of(i), best, end;

                if (c >= h->n_slots)
                        break;
                end = c + ARITY < h->n_slots ? c + ARITY : h->n_slots;
                best = c;
                for (size_t k = c + 1; k < end; k++)
                        if (slot_before(q, &h->slots[k], &h->slots[best]))
                                best = k;
                if (!slot_before(q, &h->slots[best], &s))
                        break;
                slot_place(h, order, i, h->slots[best]);
                i = best;
        }
        slot_place(h, order, i, s);
}

/* Restore heap order around slot i after its key changed either way. */
static void sift(const struct timerq *q, struct timerq_heap *h, enum timerq_order order, size_t i)
{
        if (i > 0 && slot_before(q, &h->slots[i], &h->slots[parent_of(i)]))
                sift_up(q, h, order, i);
        else
                sift_down(q, h, order, i);
}

static void heap_insert(struct timerq *q, enum timerq_order order, struct timerq_entry *e,
                        uint64_t key)
{
        struct timerq_heap *h = &q->heap[order];

        assert(h->n_slots < h->capacity);
        h->slots[h->n_slots] = (struct timerq_slot){.key = key, .entry = e};
        sift_up(q, h, order, h->n_slots++);
}

static void heap_remove(struct timerq *q, enum timerq_order order, struct timerq_entry *e)
{
        struct timerq_heap *h = &q->heap[order];
        size_t i = e->index[order];

        assert(i < h->n_slots && h->slots[i].entry == e);
        e->index[order] = TIMERQ_NOT_QUEUED;
        h->n_slots--;
        if (i == h->n_slots)
                return;
        slot_place(h, order, i, h->slots[h->n_slots]);
        sift(q, h, order, i);
}

static void heap_rekey(struct timerq *q, enum timerq_order order, struct timerq_entry *e,
                       uint64_t key)
{
        struct timerq_heap *h = &q->heap[order];
        size_t i = e->index[order];

        assert(i < h->n_slots && h->slots[i].entry == e);
        h->slots[i].key = key;
        sift(q, h, order, i);
}

static int heap_reserve(struct timerq_heap *h, size_t n)
{
        struct timerq_slot *slots;
        size_t capacity = n;

        if (n <= h->capacity)
                return 0;
        if (n > TIMERQ_CAPACITY_MAX)
                return -ENOMEM;
        if (h->capacity <= TIMERQ_CAPACITY_MAX / 2 && h->capacity * 2 > n)
                capacity = h->capacity * 2;
        slots = realloc(h->slots, capacity * sizeof(struct timerq_slot));
        if (!slots)
                return -ENOMEM;
        h->slots = slots;
        h->capacity = capacity;
        return 0;
}

void timerq_init(struct timerq *q, timerq_before_fn tie_before)
{
        *q = (struct timerq){.tie_before = tie_before};
}

void timerq_done(struct timerq *q)
{
        for (enum timerq_order o = 0; o < TIMERQ_ORDER_MAX; o++)
                free(q->heap[o].slots);
        *q = (struct timerq){.tie_before = q->tie_before};
}

int timerq_reserve(struct timerq *q, size_t n)
{
        for (enum timerq_order o = 0; o < TIMERQ_ORDER_MAX; o++) {
                int r = heap_reserve(&q->heap[o], n);

                if (r < 0)
                        return r;
        }
        return 0;
}

size_t timerq_capacity(const struct timerq *q)
{
        size_t capacity = SIZE_MAX;

        for (enum timerq_order o = 0; o < TIMERQ_ORDER_MAX; o++)
                if (q->heap[o].capacity < capacity)
                        capacity = q->heap[o].capacity;
        return capacity;
}

size_t timerq_size(const struct timerq *q)
{
        return q->heap[TIMERQ_BY_DEADLINE].n_slots;
}

void timerq_entry_init(struct timerq_entry *e)
{
        *e = (struct timerq_entry){.index = {TIMERQ_NOT_QUEUED, TIMERQ_NOT_QUEUED}};
}

bool timerq_entry_queued(const struct timerq_entry *e)
{
        return e->index[TIMERQ_BY_DEADLINE] != TIMERQ_NOT_QUEUED;
}

uint64_t timerq_entry_deadline(const struct timerq *q, const struct timerq_entry *e)
{
        assert(timerq_entry_queued(e));
        return q->heap[TIMERQ_BY_DEADLINE].slots[e->index[TIMERQ_BY_DEADLINE]].key;
}

void timerq_put(struct timerq *q, struct timerq_entry *e, uint64_t deadline_usec,
                uint64_t accuracy_usec)
{
        uint64_t keys[TIMERQ_ORDER_MAX] = {
            [TIMERQ_BY_DEADLINE] = deadline_usec,
            [TIMERQ_BY_LATEST] = deadline_usec > UINT64_MAX - accuracy_usec
                                     ? UINT64_MAX
                                     : deadline_usec + accuracy_usec,
        };
        bool queued = timerq_entry_queued(e);

        for (enum timerq_order o = 0; o < TIMERQ_ORDER_MAX; o++) {
                if (queued)
                        heap_rekey(q, o, e, keys[o]);
                else
                        heap_insert(q, o, e, keys[o]);
        }
}

void timerq_remove(struct timerq *q, struct timerq_entry *e)
{
        if (!timerq_entry_queued(e))
                return;
        for (enum timerq_order o = 0; o < TIMERQ_ORDER_MAX; o++)
                heap_remove(q, o, e);
}

struct timerq_entry *timerq_peek(const struct timerq *q)
{
        const struct timerq_heap *h = &q->heap[TIMERQ_BY_DEADLINE];

        return h->n_slots > 0 ? h->slots[0].entry : NULL;
}

bool timerq_arm_time(const struct timerq *q, uint64_t *ret_usec)
{
        const struct timerq_heap *h = &q->heap[TIMERQ_BY_LATEST];

        if (h->n_slots == 0)
                return false;
        *ret_usec = h->slots[0].key;
        return true;
}

static int heap_check(const struct timerq *q, enum timerq_order order)
{
        enum timerq_order other_order =
            order == TIMERQ_BY_DEADLINE ? TIMERQ_BY_LATEST : TIMERQ_BY_DEADLINE;
        const struct timerq_heap *h = &q->heap[order], *other = &q->heap[other_order];

        if (h->n_slots > h->capacity || h->n_slots != other->n_slots)
                return -EUCLEAN;
        for (size_t i = 0; i < h->n_slots; i++) {
                const struct timerq_slot *s = &h->slots[i];
                size_t j;

                if (!s->entry || s->entry->index[order] != i)
                        return -EUCLEAN;
                j = s->entry->index[other_order];
                if (j >= other->n_slots || other->slots[j].entry != s->entry)
                        return -EUCLEAN;
                /* The latest instant is never before the deadline. */
                if (order == TIMERQ_BY_LATEST && s->key < other->slots[j].key)
                        return -EUCLEAN;
                if (i > 0 && slot_before(q, s, &h->slots[parent_of(i)]))
                        return -EUCLEAN;
        }
        return 0;
}

int timerq_check(const struct timerq *q)
{
        for (enum timerq_order o = 0; o < TIMERQ_ORDER_MAX; o++) {
                int r = heap_check(q, o);

                if (r < 0)
                        return r;
        }
        return 0;
}
