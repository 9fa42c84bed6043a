/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The timer queue of one clock, internal to the pure core.
 *
 * 4-ary min-heaps over intrusive entries. Exact entries (accuracy 0) sit in one heap ordered by
 * (deadline, owner, name). Coalescing entries (accuracy > 0) sit in two: one by (deadline, owner,
 * name) and one by (deadline + accuracy, owner, name), their latest instant. Due timers pop in
 * deterministic order from the smaller top of the two deadline heaps. The clock is armed at the
 * latest instant it may fire without delaying anyone: the smaller of the exact heap's top (an exact
 * timer's latest is its deadline) and the latest heap's top; then everything whose deadline has
 * passed fires (coalescing). Keeping exact timers out of the latest heap saves them a slot, and
 * the arm time stays exact: min over all timers of latest = min(exact deadlines, latest instants).
 *
 * Why heaps and not a timing wheel: deadlines are exact absolute microseconds up to 2^64 with no
 * tick to round to, and the kernel is armed at the single earliest instant, so a heap's O(1) peek
 * and O(log n) insert/remove with total (deadline, owner, name) ordering fit; a wheel would need
 * cascading and would still have to sort a slot to order ties. The heaps are base/heap.h's (4-ary,
 * keys cached in the slots); entries store their position in each heap, so removing or moving any
 * timer is O(log n).
 *
 * Memory: timerq_reserve() grows the heaps of a kind ahead of time, so timerq_put() never
 * allocates and a caller can finish a transition without a failure point. An entry is two 32-bit
 * heap positions (8 bytes): its keys live only in its heap slots, and the owner and name that
 * break ties stay in the structure that embeds it, reached through the queue's `tie_before`.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/heap.h"

enum timerq_kind {
        TIMERQ_EXACT,      /* accuracy 0 */
        TIMERQ_COALESCING, /* accuracy > 0 */
        TIMERQ_KIND_MAX,
};

enum timerq_heap_id {
        TIMERQ_HEAP_EXACT,
        TIMERQ_HEAP_COALESCING,
        TIMERQ_HEAP_LATEST,
        TIMERQ_HEAP_MAX,
};

#define TIMERQ_NOT_QUEUED   HEAP_NOT_QUEUED
#define TIMERQ_CAPACITY_MAX HEAP_CAPACITY_MAX

/* Embedded in what it queues. */
struct timerq_entry {
        uint32_t index;  /* in the exact or the coalescing heap */
        uint32_t latest; /* in the latest heap; TIMERQ_NOT_QUEUED for an exact entry */
};

/* Whether a goes before b among entries with equal keys: a total order, (owner, name). */
typedef bool (*timerq_before_fn)(const struct timerq_entry *a, const struct timerq_entry *b);

/* Must not move after timerq_init(): its heaps point back at it for tie_before. */
struct timerq {
        struct heap heap[TIMERQ_HEAP_MAX];
        timerq_before_fn tie_before;
};

static inline enum timerq_kind timerq_kind_of(uint64_t accuracy_usec)
{
        return accuracy_usec > 0 ? TIMERQ_COALESCING : TIMERQ_EXACT;
}

void timerq_init(struct timerq *q, timerq_before_fn tie_before);
void timerq_done(struct timerq *q);

/* Room for n entries of a kind: until then timerq_put() of that kind cannot fail. -ENOMEM. */
int timerq_reserve(struct timerq *q, enum timerq_kind kind, size_t n);
/* Give memory back after removals, keeping room for `keep` entries of a kind (heap_shrink()). */
void timerq_shrink(struct timerq *q, enum timerq_kind kind, size_t keep);
size_t timerq_capacity(const struct timerq *q, enum timerq_kind kind);
size_t timerq_size(const struct timerq *q);

void timerq_entry_init(struct timerq_entry *e);
bool timerq_entry_queued(const struct timerq_entry *e);
/* Whether e is queued in q (and not in another queue). */
bool timerq_contains(const struct timerq *q, const struct timerq_entry *e);
/* The deadline of a queued entry. */
uint64_t timerq_entry_deadline(const struct timerq *q, const struct timerq_entry *e);

/* Insert e, or move it when it is queued already. Needs reserved room of the kind of
 * accuracy_usec for a new entry, or for one whose kind changes. */
void timerq_put(struct timerq *q, struct timerq_entry *e, uint64_t deadline_usec,
                uint64_t accuracy_usec);
/* No-op when e is not queued. */
void timerq_remove(struct timerq *q, struct timerq_entry *e);
/* Every entry off at once, touching none of them (heap_clear()): each must be reset with
 * timerq_entry_init() before its fields are read again. The room stays reserved. */
void timerq_clear(struct timerq *q);

/* The entry with the smallest (deadline, owner, name), or NULL. */
struct timerq_entry *timerq_peek(const struct timerq *q);
/* When the clock must fire: the smallest deadline + accuracy. false when empty. */
bool timerq_arm_time(const struct timerq *q, uint64_t *ret_usec);

/* Heap order and position back-pointers of every heap. 0 or -EUCLEAN. */
int timerq_check(const struct timerq *q);
