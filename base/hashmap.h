/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * An intrusive-friendly hash table for the pure core: open addressing with linear probing over
 * entry pointers, at most 3/4 full, deletion by backward shift (no tombstones). The caller
 * computes hashes and says how a key matches an entry; the table never owns entries.
 * hashmap_reserve() allocates ahead, so an insert never fails.
 *
 * A slot is the entry pointer alone (8 bytes, not 16 with a cached hash): at a million entries
 * that is 16 MiB less. The price is that a probe reads the entry to compare it, and that moving
 * entries (growth, backward shift) asks `hash_of` for their hash again.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef uint64_t (*hashmap_hash_fn)(const void *entry);
typedef bool (*hashmap_match_fn)(const void *entry, const void *key);

struct hashmap {
        void **slots;   /* NULL: empty */
        size_t n_slots; /* 0 or a power of two */
        size_t n_entries;
        hashmap_hash_fn hash_of;
};

void hashmap_init(struct hashmap *m, hashmap_hash_fn hash_of);
void hashmap_done(struct hashmap *m);

/* Room for n entries in total. -ENOMEM. */
int hashmap_reserve(struct hashmap *m, size_t n);

/* `hash` is the key's: the one hash_of() gives for the entry it matches. */
void *hashmap_find(const struct hashmap *m, uint64_t hash, hashmap_match_fn match, const void *key);
/* The key must be absent and room reserved; hash == hash_of(entry). */
void hashmap_insert(struct hashmap *m, uint64_t hash, void *entry);
/* Remove this exact entry; no-op when absent. hash == hash_of(entry). */
void hashmap_remove(struct hashmap *m, uint64_t hash, const void *entry);

/* Iterate: start with *i = 0; NULL at the end. Not across insertions or removals. */
void *hashmap_next(const struct hashmap *m, size_t *i);

/* Every entry is reachable from its home slot without crossing an empty one. 0 or -EUCLEAN. */
int hashmap_check(const struct hashmap *m);

/* A 64-bit finalizer (splitmix64): spreads a key over all bits, so the low bits index well. */
uint64_t hash_mix64(uint64_t x);
/* A string's hash (FNV-1a over its bytes, then hash_mix64()), seeded by a key it goes with. */
uint64_t hash_string(uint64_t seed, const char *s);
