/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * An intrusive-friendly hash table for the pure core: open addressing with linear probing over
 * entry pointers, at most 3/4 full, deletion by backward shift (no tombstones). The caller
 * computes hashes and says how a key matches an entry; the table never owns entries.
 * hashmap_reserve() allocates ahead, so an insert never fails.
 *
 * A slot is one word (8 bytes, not 16 with a cached hash): at a million entries that is 16 MiB
 * less. On 64-bit, where user addresses fit in 48 bits, the word's top 16 bits carry a tag: 8 bits
 * of the entry's hash and its distance from its home slot (up to 254; 255: that or farther). A
 * probe reads an entry only when both match the key's (its home and 1 in 256 of its hashes): the
 * entries are scattered over the heap and each read is a cache miss. A backward shift takes a
 * moved entry's home from its distance, reading no entry (hash_of only for a far one), which is
 * most of what freeing millions of entries costs. An entry whose address uses those bits turns
 * tagging off for the whole table (it works the same, a probe reading every entry it passes and
 * a shift asking hash_of). Growing asks `hash_of` for every entry's hash again.
 *
 * Growing moves the entries a few at a time, not in one go (at a million entries that took one
 * loop iteration ~35 ms): hashmap_reserve() allocates the larger array and keeps the old one
 * beside it, and each insert then moves MOVES_PER_INSERT of its slots, in order from one of its
 * empty slots on (cyclically, so that no probe run crosses where the move began). Finds and
 * removes look in both. The old array's slots the move has passed are empty, so a probe whose home
 * is among them starts where the move is (the distance tags still count from the home) and a
 * backward shift never reaches them. The move is over, and the old array freed, before the table
 * can fill again.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef uint64_t (*hashmap_hash_fn)(const void *entry);
typedef bool (*hashmap_match_fn)(const void *entry, const void *key);

struct hashmap {
        uintptr_t *slots; /* the entry's address | its tag; 0: empty */
        size_t n_slots;   /* 0 or a power of two */
        size_t n_entries;
        uintptr_t tag_mask; /* the bits of a slot that hold the tag; 0: untagged */
        hashmap_hash_fn hash_of;
        /* While growing: the previous array, whose entries are moving into `slots`. NULL: none. */
        uintptr_t *old_slots;
        size_t n_old_slots;
        size_t old_start; /* the empty old slot the move began at */
        size_t n_moved;   /* old slots from old_start on (cyclically) that the move emptied */
};

void hashmap_init(struct hashmap *m, hashmap_hash_fn hash_of);
void hashmap_done(struct hashmap *m);

/* Room for n entries in total. -ENOMEM, when a move in progress may have been finished: the
 * table holds the same entries and stays usable. */
int hashmap_reserve(struct hashmap *m, size_t n);
/* Give memory back after removals: a table at most 3/16 full shrinks to 3/8 full (an empty one
 * frees its slots). Drops room reserved beyond the entries; out of memory changes nothing. */
void hashmap_shrink(struct hashmap *m);

/* `hash` is the key's: the one hash_of() gives for the entry it matches. */
void *hashmap_find(const struct hashmap *m, uint64_t hash, hashmap_match_fn match, const void *key);
/* Where a probe for `hash` starts (n_slots a power of two). */
static inline size_t hashmap_home(size_t n_slots, uint64_t hash)
{
        return (size_t)hash & (n_slots - 1);
}

/* Start fetching the slot a find or insert of `hash` reads first, so that the cache miss overlaps
 * the caller's work until then. Changes nothing. */
static inline void hashmap_prefetch(const struct hashmap *m, uint64_t hash)
{
        if (m->n_slots > 0)
                __builtin_prefetch(&m->slots[hashmap_home(m->n_slots, hash)]);
}
/* The key must be absent and room reserved; hash == hash_of(entry). */
void hashmap_insert(struct hashmap *m, uint64_t hash, void *entry);
/* Remove this exact entry; no-op when absent. hash == hash_of(entry). */
void hashmap_remove(struct hashmap *m, uint64_t hash, const void *entry);

/* Iterate: start with *i = 0; NULL at the end. Not across insertions or removals (while
 * growing, *i counts the new array's slots, then the old one's; a removal's backward shift fills
 * the removed entry's slot as it does in a table that is not growing). */
void *hashmap_next(const struct hashmap *m, size_t *i);

/* The entry in slot i (< n_slots) of the current array, or NULL. */
static inline void *hashmap_slot_entry(const struct hashmap *m, size_t i)
{
        return (void *)(m->slots[i] & ~m->tag_mask);
}

/* Every entry is reachable from its home slot (in the old array: from where the move is, when
 * the move has passed its home) without crossing an empty one, and carries its tag; the old
 * slots the move has passed are empty. 0 or -EUCLEAN. */
int hashmap_check(const struct hashmap *m);

/* A 64-bit finalizer (splitmix64): spreads a key over all bits, so the low bits index well.
 * Inline: a few instructions, on the path of every look-up that mixes a key. */
static inline uint64_t hash_mix64(uint64_t x)
{
        x ^= x >> 30;
        x *= UINT64_C(0xbf58476d1ce4e5b9);
        x ^= x >> 27;
        x *= UINT64_C(0x94d049bb133111eb);
        x ^= x >> 31;
        return x;
}
/* A string's hash (FNV-1a over its bytes, then hash_mix64()), seeded by a key it goes with. */
uint64_t hash_string(uint64_t seed, const char *s);
