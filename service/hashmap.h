/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * An intrusive-friendly hash table for the pure core: open addressing with linear probing over
 * (hash, entry pointer) slots, at most 3/4 full, deletion by backward shift (no tombstones). The
 * caller computes hashes and says how a key matches an entry; the table never owns entries.
 * hashmap_reserve() allocates ahead, so an insert never fails.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hashmap_slot {
        uint64_t hash;
        void *entry; /* NULL: empty */
};

struct hashmap {
        struct hashmap_slot *slots;
        size_t n_slots; /* 0 or a power of two */
        size_t n_entries;
};

typedef bool (*hashmap_match_fn)(const void *entry, const void *key);

void hashmap_init(struct hashmap *m);
void hashmap_done(struct hashmap *m);

/* Room for n entries in total. -ENOMEM. */
int hashmap_reserve(struct hashmap *m, size_t n);

void *hashmap_find(const struct hashmap *m, uint64_t hash, hashmap_match_fn match, const void *key);
/* The key must be absent and room reserved. */
void hashmap_insert(struct hashmap *m, uint64_t hash, void *entry);
/* Remove this exact entry; no-op when absent. */
void hashmap_remove(struct hashmap *m, uint64_t hash, const void *entry);

/* Iterate: start with *i = 0; NULL at the end. Not across insertions or removals. */
void *hashmap_next(const struct hashmap *m, size_t *i);

/* Every entry is reachable from its home slot without crossing an empty one. 0 or -EUCLEAN. */
int hashmap_check(const struct hashmap *m);

/* A 64-bit finalizer (splitmix64): spreads a key over all bits, so the low bits index well. */
uint64_t hash_mix64(uint64_t x);
