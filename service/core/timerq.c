/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/arith.h"
#include "service/core/timerq.h"

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

/* Where an entry records its position in heap `id`. */
static uint32_t *position_in(struct timerq_entry *e, enum timerq_heap_id id)
{
        return id == TIMERQ_HEAP_LATEST ? &e->latest : &e->index;
}

static uint32_t position_of(const struct timerq_entry *e, enum timerq_heap_id id)
{
        return id == TIMERQ_HEAP_LATEST ? e->latest : e->index;
}

static void slot_place(struct timerq *q, enum timerq_heap_id id, size_t i, struct timerq_slot s)
{
        q->heap[id].slots[i] = s;
        *position_in(s.entry, id) = (uint32_t)i;
}

static void sift_up(struct timerq *q, enum timerq_heap_id id, size_t i)
{
        struct timerq_heap *h = &q->heap[id];
        struct timerq_slot s = h->slots[i];

        while (i > 0) {
                size_t p = parent_of(i);

                if (!slot_before(q, &s, &h->slots[p]))
                        break;
                slot_place(q, id, i, h->slots[p]);
                i = p;
        }
        slot_place(q, id, i, s);
}

static void sift_down(struct timerq *q, enum timerq_heap_id id, size_t i)
{
        struct timerq_heap *h = &q->heap[id];
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
                slot_place(q, id, i, h->slots[best]);
                i = best;
        }
        slot_place(q, id, i, s);
}

/* Restore heap order around slot i after its key changed either way. */
static void sift(struct timerq *q, enum timerq_heap_id id, size_t i)
{
        const struct timerq_heap *h = &q->heap[id];

        if (i > 0 && slot_before(q, &h->slots[i], &h->slots[parent_of(i)]))
                sift_up(q, id, i);
        else
                sift_down(q, id, i);
}

static void heap_insert(struct timerq *q, enum timerq_heap_id id, struct timerq_entry *e,
                        uint64_t key)
{
        struct timerq_heap *h = &q->heap[id];

        assert(h->n_slots < h->capacity);
        h->slots[h->n_slots] = (struct timerq_slot){.key = key, .entry = e};
        sift_up(q, id, h->n_slots++);
}

static void heap_remove(struct timerq *q, enum timerq_heap_id id, struct timerq_entry *e)
{
        struct timerq_heap *h = &q->heap[id];
        size_t i = position_of(e, id);

        assert(i < h->n_slots && h->slots[i].entry == e);
        *position_in(e, id) = TIMERQ_NOT_QUEUED;
        h->n_slots--;
        if (i == h->n_slots)
                return;
        slot_place(q, id, i, h->slots[h->n_slots]);
        sift(q, id, i);
}

static void heap_rekey(struct timerq *q, enum timerq_heap_id id, struct timerq_entry *e,
                       uint64_t key)
{
        struct timerq_heap *h = &q->heap[id];
        size_t i = position_of(e, id);

        assert(i < h->n_slots && h->slots[i].entry == e);
        h->slots[i].key = key;
        sift(q, id, i);
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
        *q = (struct timerq){.tie_before = tie_before};
}

void timerq_done(struct timerq *q)
{
        for (enum timerq_heap_id id = 0; id < TIMERQ_HEAP_MAX; id++)
                free(q->heap[id].slots);
        *q = (struct timerq){.tie_before = q->tie_before};
}

int timerq_reserve(struct timerq *q, enum timerq_kind kind, size_t n)
{
        int r = heap_reserve(&q->heap[deadline_heap_of(kind)], n);

        if (r >= 0 && kind == TIMERQ_COALESCING)
                r = heap_reserve(&q->heap[TIMERQ_HEAP_LATEST], n);
        return r;
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
        return q->heap[TIMERQ_HEAP_EXACT].n_slots + q->heap[TIMERQ_HEAP_COALESCING].n_slots;
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
        const struct timerq_heap *h = &q->heap[deadline_heap_of(kind_of_entry(e))];

        return timerq_entry_queued(e) && e->index < h->n_slots && h->slots[e->index].entry == e;
}

uint64_t timerq_entry_deadline(const struct timerq *q, const struct timerq_entry *e)
{
        assert(timerq_entry_queued(e));
        return q->heap[deadline_heap_of(kind_of_entry(e))].slots[e->index].key;
}

void timerq_put(struct timerq *q, struct timerq_entry *e, uint64_t deadline_usec,
                uint64_t accuracy_usec)
{
        enum timerq_kind kind = timerq_kind_of(accuracy_usec);
        uint64_t latest = saturating_add(deadline_usec, accuracy_usec);

        if (timerq_entry_queued(e) && kind_of_entry(e) != kind)
                timerq_remove(q, e);
        if (timerq_entry_queued(e)) {
                heap_rekey(q, deadline_heap_of(kind), e, deadline_usec);
                if (kind == TIMERQ_COALESCING)
                        heap_rekey(q, TIMERQ_HEAP_LATEST, e, latest);
                return;
        }
        heap_insert(q, deadline_heap_of(kind), e, deadline_usec);
        if (kind == TIMERQ_COALESCING)
                heap_insert(q, TIMERQ_HEAP_LATEST, e, latest);
}

void timerq_remove(struct timerq *q, struct timerq_entry *e)
{
        enum timerq_kind kind = kind_of_entry(e);

        if (!timerq_entry_queued(e))
                return;
        heap_remove(q, deadline_heap_of(kind), e);
        if (kind == TIMERQ_COALESCING)
                heap_remove(q, TIMERQ_HEAP_LATEST, e);
}

static const struct timerq_slot *heap_top(const struct timerq *q, enum timerq_heap_id id)
{
        const struct timerq_heap *h = &q->heap[id];

        return h->n_slots > 0 ? &h->slots[0] : NULL;
}

struct timerq_entry *timerq_peek(const struct timerq *q)
{
        const struct timerq_slot *exact = heap_top(q, TIMERQ_HEAP_EXACT),
                                 *coalescing = heap_top(q, TIMERQ_HEAP_COALESCING);

        if (!exact || !coalescing)
                return exact ? exact->entry : coalescing ? coalescing->entry : NULL;
        return slot_before(q, exact, coalescing) ? exact->entry : coalescing->entry;
}

bool timerq_arm_time(const struct timerq *q, uint64_t *ret_usec)
{
        const struct timerq_slot *exact = heap_top(q, TIMERQ_HEAP_EXACT),
                                 *latest = heap_top(q, TIMERQ_HEAP_LATEST);

        if (!exact && !latest)
                return false;
        *ret_usec = !latest || (exact && exact->key < latest->key) ? exact->key : latest->key;
        return true;
}

/* Order and back-pointers of one heap; a coalescing entry is in both its heaps, an exact one in
 * one. */
static int heap_check(const struct timerq *q, enum timerq_heap_id id)
{
        const struct timerq_heap *h = &q->heap[id];

        if (h->n_slots > h->capacity)
                return -EUCLEAN;
        for (size_t i = 0; i < h->n_slots; i++) {
                const struct timerq_slot *s = &h->slots[i];
                const struct timerq_heap *deadlines = &q->heap[TIMERQ_HEAP_COALESCING],
                                         *latests = &q->heap[TIMERQ_HEAP_LATEST];

                if (!s->entry || position_of(s->entry, id) != i)
                        return -EUCLEAN;
                if (i > 0 && slot_before(q, s, &h->slots[parent_of(i)]))
                        return -EUCLEAN;
                if ((id == TIMERQ_HEAP_EXACT) != (kind_of_entry(s->entry) == TIMERQ_EXACT))
                        return -EUCLEAN;
                if (id == TIMERQ_HEAP_EXACT)
                        continue;
                if (s->entry->index >= deadlines->n_slots ||
                    deadlines->slots[s->entry->index].entry != s->entry ||
                    s->entry->latest >= latests->n_slots ||
                    latests->slots[s->entry->latest].entry != s->entry)
                        return -EUCLEAN;
                /* The latest instant is never before the deadline. */
                if (latests->slots[s->entry->latest].key < deadlines->slots[s->entry->index].key)
                        return -EUCLEAN;
        }
        return 0;
}

int timerq_check(const struct timerq *q)
{
        if (q->heap[TIMERQ_HEAP_COALESCING].n_slots != q->heap[TIMERQ_HEAP_LATEST].n_slots)
                return -EUCLEAN;
        for (enum timerq_heap_id id = 0; id < TIMERQ_HEAP_MAX; id++) {
                int r = heap_check(q, id);

                if (r < 0)
                        return r;
        }
        return 0;
}
