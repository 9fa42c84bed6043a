/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <assert.h>
#include <errno.h>
#include <stdlib.h>

#include "base/heap.h"

#define ARITY 4

static size_t parent_of(size_t i)
{
        return (i - 1) / ARITY;
}

static size_t first_child_of(size_t i)
{
        return i * ARITY + 1;
}

bool heap_slot_before(const struct heap *h, const struct heap_slot *a, const struct heap_slot *b)
{
        if (a->key != b->key)
                return a->key < b->key;
        return h->tie_before(a->entry, b->entry, h->userdata);
}

static void slot_place(struct heap *h, size_t i, struct heap_slot s)
{
        h->slots[i] = s;
        *heap_position_of(h, s.entry) = (uint32_t)i;
}

static void sift_up(struct heap *h, size_t i)
{
        struct heap_slot s = h->slots[i];

        while (i > 0) {
                size_t p = parent_of(i);

                if (!heap_slot_before(h, &s, &h->slots[p]))
                        break;
                slot_place(h, i, h->slots[p]);
                i = p;
        }
        slot_place(h, i, s);
}

static void sift_down(struct heap *h, size_t i)
{
        struct heap_slot s = h->slots[i];

        for (;;) {
                size_t c = first_child_of(i), best, end;

                if (c >= h->n_slots)
                        break;
                end = c + ARITY < h->n_slots ? c + ARITY : h->n_slots;
                best = c;
                for (size_t k = c + 1; k < end; k++)
                        if (heap_slot_before(h, &h->slots[k], &h->slots[best]))
                                best = k;
                if (!heap_slot_before(h, &h->slots[best], &s))
                        break;
                slot_place(h, i, h->slots[best]);
                i = best;
        }
        slot_place(h, i, s);
}

/* Restore heap order around slot i after its key changed either way. */
static void sift(struct heap *h, size_t i)
{
        if (i > 0 && heap_slot_before(h, &h->slots[i], &h->slots[parent_of(i)]))
                sift_up(h, i);
        else
                sift_down(h, i);
}

void heap_init(struct heap *h, size_t position_offset, heap_tie_fn tie_before, const void *userdata)
{
        *h = (struct heap){
            .position_offset = position_offset,
            .tie_before = tie_before,
            .userdata = userdata,
        };
}

void heap_done(struct heap *h)
{
        free(h->slots);
        heap_init(h, h->position_offset, h->tie_before, h->userdata);
}

int heap_reserve(struct heap *h, size_t n)
{
        struct heap_slot *slots;
        size_t capacity = n;

        if (n <= h->capacity)
                return 0;
        if (n > HEAP_CAPACITY_MAX)
                return -ENOMEM;
        /* Doubling keeps a one-at-a-time caller amortized O(1). */
        if (h->capacity <= HEAP_CAPACITY_MAX / 2 && h->capacity * 2 > n)
                capacity = h->capacity * 2;
        slots = realloc(h->slots, capacity * sizeof(struct heap_slot));
        if (!slots)
                return -ENOMEM;
        h->slots = slots;
        h->capacity = capacity;
        return 0;
}

void heap_shrink(struct heap *h, size_t keep)
{
        struct heap_slot *slots;

        if (keep < h->n_slots)
                keep = h->n_slots;
        if (keep == 0) {
                free(h->slots);
                h->slots = NULL;
                h->capacity = 0;
                return;
        }
        if (h->capacity / 4 <= keep)
                return;
        slots = realloc(h->slots, keep * 2 * sizeof(struct heap_slot));
        if (!slots)
                return;
        h->slots = slots;
        h->capacity = keep * 2;
}

void heap_insert(struct heap *h, void *entry, uint64_t key)
{
        assert(h->n_slots < h->capacity);
        h->slots[h->n_slots] = (struct heap_slot){.key = key, .entry = entry};
        sift_up(h, h->n_slots++);
}

void heap_remove(struct heap *h, void *entry)
{
        size_t i = *heap_position_of(h, entry);

        assert(heap_contains(h, entry));
        *heap_position_of(h, entry) = HEAP_NOT_QUEUED;
        h->n_slots--;
        if (i == h->n_slots)
                return;
        slot_place(h, i, h->slots[h->n_slots]);
        sift(h, i);
}

void heap_clear(struct heap *h)
{
        h->n_slots = 0;
}

void heap_rekey(struct heap *h, void *entry, uint64_t key)
{
        size_t i = *heap_position_of(h, entry);

        assert(heap_contains(h, entry));
        h->slots[i].key = key;
        sift(h, i);
}

int heap_check(const struct heap *h)
{
        if (h->n_slots > h->capacity)
                return -EUCLEAN;
        for (size_t i = 0; i < h->n_slots; i++) {
                const struct heap_slot *s = &h->slots[i];

                if (!s->entry || *heap_position_of(h, s->entry) != i)
                        return -EUCLEAN;
                if (i > 0 && heap_slot_before(h, s, &h->slots[parent_of(i)]))
                        return -EUCLEAN;
        }
        return 0;
}
