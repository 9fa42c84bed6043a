/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * An intrusive 4-ary min-heap, the one every part uses (the timer queue, the parked queue).
 *
 * A slot holds a 64-bit key and the entry; ties between equal keys are broken by the caller's
 * `tie_before`, which must be a total order over the entries of one heap. Each entry records its
 * own slot in a uint32_t at `position_offset` inside it (HEAP_NOT_QUEUED when not on the heap),
 * so removing or re-keying any entry is O(log n) without a search. One entry may be on several
 * heaps, each with its own position field.
 *
 * 4-ary rather than binary: half the depth, and the four children of a node sit next to each
 * other in memory (one or two cache lines), which is what dominates sift-down at a million entries.
 * Caching the key in the slot means most comparisons never touch the entry.
 *
 * heap_reserve() grows ahead of time, so heap_insert() never allocates and a caller can finish a
 * transition without a failure point.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HEAP_NOT_QUEUED UINT32_MAX
/* Positions are 32-bit: a heap holds fewer entries than that. */
#define HEAP_CAPACITY_MAX (UINT32_MAX - 1)

/* Whether entry a goes before entry b when their keys are equal. */
typedef bool (*heap_tie_fn)(const void *a, const void *b, const void *userdata);

struct heap_slot {
        uint64_t key;
        void *entry;
};

struct heap {
        struct heap_slot *slots;
        size_t n_slots;
        size_t capacity;
        size_t position_offset; /* of the entry's uint32_t position on this heap */
        heap_tie_fn tie_before;
        const void *userdata; /* for tie_before */
};

void heap_init(struct heap *h, size_t position_offset, heap_tie_fn tie_before,
               const void *userdata);
void heap_done(struct heap *h);

/* Room for n entries in total: until then heap_insert() cannot fail. -ENOMEM, changing nothing. */
int heap_reserve(struct heap *h, size_t n);
/* Give memory back: a heap whose room is over four times `keep` (at least its size: the room the
 * caller still needs) keeps twice that; nothing when it is 0. Out of memory changes nothing. */
void heap_shrink(struct heap *h, size_t keep);

/* Insert an entry that is not on the heap, into reserved room. */
void heap_insert(struct heap *h, void *entry, uint64_t key);
/* Remove an entry that is on the heap; its position becomes HEAP_NOT_QUEUED. */
void heap_remove(struct heap *h, void *entry);
/* Take every entry off at once, reading and writing none of them: their position fields keep
 * stale values, which the caller must reset (heap_position_init()) before it reads them or puts
 * the entry on a heap again. The room stays reserved. */
void heap_clear(struct heap *h);
/* Give an entry on the heap a new key. */
void heap_rekey(struct heap *h, void *entry, uint64_t key);

/* Whether two slots are in heap order: by key, ties by tie_before. */
bool heap_slot_before(const struct heap *h, const struct heap_slot *a, const struct heap_slot *b);

/* Heap order and every position back-pointer. 0 or -EUCLEAN. */
int heap_check(const struct heap *h);

static inline uint32_t *heap_position_of(const struct heap *h, const void *entry)
{
        return (uint32_t *)(void *)((char *)(uintptr_t)entry + h->position_offset);
}

static inline void heap_position_init(const struct heap *h, void *entry)
{
        *heap_position_of(h, entry) = HEAP_NOT_QUEUED;
}

/* Whether entry is on h (and not only on another heap using the same position field). */
static inline bool heap_contains(const struct heap *h, const void *entry)
{
        uint32_t i = *heap_position_of(h, entry);

        return i < h->n_slots && h->slots[i].entry == entry;
}

static inline size_t heap_size(const struct heap *h)
{
        return h->n_slots;
}

/* The smallest slot, or NULL when empty. */
static inline const struct heap_slot *heap_top(const struct heap *h)
{
        return h->n_slots > 0 ? &h->slots[0] : NULL;
}

/* The key of an entry on the heap. */
static inline uint64_t heap_key_of(const struct heap *h, const void *entry)
{
        return h->slots[*heap_position_of(h, entry)].key;
}
