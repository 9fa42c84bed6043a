/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <assert.h>
#include <errno.h>
#include <stdlib.h>

#include "base/hashmap.h"

#define N_SLOTS_MIN 16
/* Slots a rehash reads ahead of the one it moves. */
#define REHASH_AHEAD 16
/* Old slots a growing table moves per insert: the move must be over before the table is 3/4 full
 * again, after (3/4 of twice the old slots) - (3/4 of them) inserts, and at 8 it is over after an
 * eighth of the old slots (at 4M timers the old 32 MiB array is gone at 3.7M). */
#define MOVES_PER_INSERT 8

uint64_t hash_string(uint64_t seed, const char *s)
{
        uint64_t h = UINT64_C(0xcbf29ce484222325) ^ seed;

        for (const char *p = s; *p; p++)
                h = (h ^ (unsigned char)*p) * UINT64_C(0x100000001b3);
        return hash_mix64(h);
}

#if UINTPTR_MAX > UINT32_MAX
/* Every 64-bit Linux port hands out user addresses below 2^48 unless a mapping asks for more. */
/* Of a tagged slot's top 16 bits, the high 8 hold how far the entry sits from its home
 * (DISTANCE_FAR: that far or farther), the low 8 bits 48..55 of its hash. */
#define TAG_MASK       (~(uintptr_t)0 << 48)
#define DISTANCE_SHIFT 56
#define HASH_TAG_MASK  ((uintptr_t)0xff << 48)
#else
#define TAG_MASK       ((uintptr_t)0)
#define DISTANCE_SHIFT 0
#define HASH_TAG_MASK  ((uintptr_t)0)
#endif
#define DISTANCE_FAR ((size_t)0xff)

/* The hash bits a slot keeps: independent of the home's low bits. */
static uintptr_t tag_of(const struct hashmap *m, uint64_t hash)
{
        return (uintptr_t)hash & m->tag_mask & HASH_TAG_MASK;
}

static uintptr_t distance_bits(const struct hashmap *m, size_t distance)
{
        if (m->tag_mask == 0)
                return 0;
        return (uintptr_t)(distance < DISTANCE_FAR ? distance : DISTANCE_FAR) << DISTANCE_SHIFT;
}

static uintptr_t slot_of(const struct hashmap *m, uint64_t hash, const void *entry, size_t distance)
{
        return (uintptr_t)entry | tag_of(m, hash) | distance_bits(m, distance);
}

static void *entry_of(const struct hashmap *m, uintptr_t slot)
{
        return (void *)(slot & ~m->tag_mask);
}

/* Whether a slot at `distance` from the key's home may hold the key's entry. */
static bool slot_may_match(const struct hashmap *m, uintptr_t slot, uint64_t hash, size_t distance)
{
        return (slot & m->tag_mask) == (tag_of(m, hash) | distance_bits(m, distance));
}

/* The home of the entry in slot i: from its distance when the slot holds it, so that moving
 * entries reads none of them. */
static size_t slot_home(const struct hashmap *m, const uintptr_t *slots, size_t n_slots, size_t i)
{
        size_t distance = m->tag_mask ? (size_t)(slots[i] >> DISTANCE_SHIFT) : DISTANCE_FAR;

        if (distance < DISTANCE_FAR)
                return (i - distance) & (n_slots - 1);
        return hashmap_home(n_slots, m->hash_of(entry_of(m, slots[i])));
}

static void slot_insert(const struct hashmap *m, uintptr_t *slots, size_t n_slots, uint64_t hash,
                        const void *entry)
{
        size_t i = hashmap_home(n_slots, hash), distance = 0;

        for (; slots[i]; distance++)
                i = (i + 1) & (n_slots - 1);
        slots[i] = slot_of(m, hash, entry, distance);
}

/* Where a probe of the old array from `home` starts: the slots the move has emptied hold nothing,
 * and an entry whose home is among them sits where the move is or past it. */
static size_t old_probe_start(const struct hashmap *m, size_t home)
{
        size_t mask = m->n_old_slots - 1;

        if (((home - m->old_start) & mask) < m->n_moved)
                return (m->old_start + m->n_moved) & mask;
        return home;
}

void hashmap_init(struct hashmap *m, hashmap_hash_fn hash_of)
{
        *m = (struct hashmap){.tag_mask = TAG_MASK, .hash_of = hash_of};
}

void hashmap_done(struct hashmap *m)
{
        free(m->slots);
        free(m->old_slots);
        *m = (struct hashmap){.tag_mask = TAG_MASK, .hash_of = m->hash_of};
}

/* Fetch the entry a move or rehash will read `REHASH_AHEAD` slots on: the entries are scattered
 * over the heap, so that the misses overlap rather than come one after another. Its first 128
 * bytes (a timer's identity is at its end, past the first line). */
static void prefetch_ahead(const struct hashmap *m, const uintptr_t *slots, size_t n_slots,
                           size_t i)
{
        uintptr_t ahead = slots[(i + REHASH_AHEAD) & (n_slots - 1)];

        if (ahead) {
                const char *e = entry_of(m, ahead);
                __builtin_prefetch(e);
                __builtin_prefetch(e + 64);
                __builtin_prefetch(e + 127);
        }
}

/* Move up to n more of the old array's slots into the current one; free it when all are. */
static void move_some(struct hashmap *m, size_t n)
{
        size_t mask = m->n_old_slots - 1;

        for (; n > 0 && m->n_moved < m->n_old_slots; n--, m->n_moved++) {
                size_t i = (m->old_start + m->n_moved) & mask;

                prefetch_ahead(m, m->old_slots, m->n_old_slots, i);
                if (m->old_slots[i]) {
                        void *entry = entry_of(m, m->old_slots[i]);
                        slot_insert(m, m->slots, m->n_slots, m->hash_of(entry), entry);
                        m->old_slots[i] = 0;
                }
        }
        if (m->n_moved == m->n_old_slots) {
                free(m->old_slots);
                m->old_slots = NULL;
                m->n_old_slots = m->old_start = m->n_moved = 0;
        }
}

static void finish_move(struct hashmap *m)
{
        if (m->old_slots)
                move_some(m, m->n_old_slots);
}

/* Move every entry into a table of n_slots (0: none), at once. -ENOMEM, changing nothing. */
static int rehash(struct hashmap *m, size_t n_slots)
{
        uintptr_t *slots = NULL;

        assert(!m->old_slots);
        if (n_slots > 0) {
                slots = calloc(n_slots, sizeof(uintptr_t));
                if (!slots)
                        return -ENOMEM;
        }
        for (size_t i = 0; i < m->n_slots; i++) {
                prefetch_ahead(m, m->slots, m->n_slots, i);
                if (m->slots[i]) {
                        void *entry = entry_of(m, m->slots[i]);
                        slot_insert(m, slots, n_slots, m->hash_of(entry), entry);
                }
        }
        free(m->slots);
        m->slots = slots;
        m->n_slots = n_slots;
        return 0;
}

/* Grow into n_slots: the entries move there a few per insert, from an empty slot of the array
 * they leave on. -ENOMEM, changing nothing. */
static int grow(struct hashmap *m, size_t n_slots)
{
        uintptr_t *slots;
        size_t start = 0;

        assert(!m->old_slots);
        slots = calloc(n_slots, sizeof(uintptr_t));
        if (!slots)
                return -ENOMEM;
        if (m->n_entries == 0) {
                free(m->slots);
        } else {
                /* At most 3/4 full: there is an empty slot. */
                while (m->slots[start])
                        start++;
                m->old_slots = m->slots;
                m->n_old_slots = m->n_slots;
                m->old_start = start;
                m->n_moved = 0;
        }
        m->slots = slots;
        m->n_slots = n_slots;
        return 0;
}

/* The fewest slots that hold n entries: at most 3/4 full keeps linear probes short. 0 when too
 * many. */
static size_t slots_for(size_t n, size_t n_slots)
{
        while (n > n_slots / 4 * 3) {
                if (n_slots > SIZE_MAX / 2 / sizeof(uintptr_t))
                        return 0;
                n_slots *= 2;
        }
        return n_slots;
}

int hashmap_reserve(struct hashmap *m, size_t n)
{
        size_t n_slots = slots_for(n, m->n_slots > 0 ? m->n_slots : N_SLOTS_MIN);

        if (n_slots == 0)
                return -ENOMEM;
        if (n_slots == m->n_slots)
                return 0;
        /* Growing again before the last move is over (a reserve for many at once): finish it, so
         * that there are never more than two arrays. */
        finish_move(m);
        return grow(m, n_slots);
}

void hashmap_shrink(struct hashmap *m)
{
        /* Twice the fewest, so that the next few insertions do not grow it straight back. */
        size_t n_slots = m->n_entries > 0 ? slots_for(m->n_entries, N_SLOTS_MIN) * 2 : 0;

        /* Out of memory keeps the table as it is: it still holds every entry. */
        if (n_slots <= m->n_slots / 2 && (n_slots > 0 || m->n_entries == 0)) {
                finish_move(m);
                (void)rehash(m, n_slots);
        }
}

/* The entry matching the key in one array, probing from `start` (home, or past it). */
static void *probe(const struct hashmap *m, const uintptr_t *slots, size_t n_slots, size_t home,
                   size_t start, uint64_t hash, hashmap_match_fn match, const void *key)
{
        size_t mask = n_slots - 1;

        for (size_t i = start, distance = (start - home) & mask; slots[i];
             i = (i + 1) & mask, distance++)
                if (slot_may_match(m, slots[i], hash, distance) &&
                    match(entry_of(m, slots[i]), key))
                        return entry_of(m, slots[i]);
        return NULL;
}

void *hashmap_find(const struct hashmap *m, uint64_t hash, hashmap_match_fn match, const void *key)
{
        void *entry = NULL;
        size_t home;

        if (m->n_slots > 0) {
                home = hashmap_home(m->n_slots, hash);
                entry = probe(m, m->slots, m->n_slots, home, home, hash, match, key);
        }
        if (!entry && m->old_slots) {
                home = hashmap_home(m->n_old_slots, hash);
                entry = probe(m, m->old_slots, m->n_old_slots, home, old_probe_start(m, home), hash,
                              match, key);
        }
        return entry;
}

/* An entry whose address has bits where the tags go: keep the addresses whole from now on. */
static void untag(struct hashmap *m)
{
        for (size_t i = 0; i < m->n_slots; i++)
                m->slots[i] &= ~m->tag_mask;
        for (size_t i = 0; i < m->n_old_slots; i++)
                m->old_slots[i] &= ~m->tag_mask;
        m->tag_mask = 0;
}

void hashmap_insert(struct hashmap *m, uint64_t hash, void *entry)
{
        assert(entry);
        assert(m->n_entries < m->n_slots / 4 * 3);
        if ((uintptr_t)entry & m->tag_mask)
                untag(m);
        slot_insert(m, m->slots, m->n_slots, hash, entry);
        m->n_entries++;
        if (m->old_slots)
                move_some(m, MOVES_PER_INSERT);
}

/* True when home h lies cyclically in (hole, i]: then the entry at i must stay behind the hole. */
static bool home_between(size_t hole, size_t i, size_t h)
{
        return hole <= i ? hole < h && h <= i : hole < h || h <= i;
}

/* Remove the entry from one array, its probe starting at `start`; false when it is not there. In
 * the old array the holes are all past where the move is, and so are the shifts. */
static bool remove_from(const struct hashmap *m, uintptr_t *slots, size_t n_slots, size_t start,
                        const void *entry)
{
        size_t mask = n_slots - 1, hole, i;

        for (hole = start; entry_of(m, slots[hole]) != entry; hole = (hole + 1) & mask)
                if (!slots[hole])
                        return false;

        /* Backward shift: pull later entries of the probe run into the hole when they may. */
        for (i = (hole + 1) & mask; slots[i]; i = (i + 1) & mask) {
                size_t home = slot_home(m, slots, n_slots, i);
                uintptr_t keep = slots[i] & ~(m->tag_mask & ~HASH_TAG_MASK);

                if (home_between(hole, i, home))
                        continue;
                slots[hole] = keep | distance_bits(m, (hole - home) & mask);
                hole = i;
        }
        slots[hole] = 0;
        return true;
}

void hashmap_remove(struct hashmap *m, uint64_t hash, const void *entry)
{
        bool removed = false;

        if (m->n_slots > 0)
                removed =
                    remove_from(m, m->slots, m->n_slots, hashmap_home(m->n_slots, hash), entry);
        if (!removed && m->old_slots)
                removed =
                    remove_from(m, m->old_slots, m->n_old_slots,
                                old_probe_start(m, hashmap_home(m->n_old_slots, hash)), entry);
        if (removed)
                m->n_entries--;
}

void *hashmap_next(const struct hashmap *m, size_t *i)
{
        for (; *i < m->n_slots + m->n_old_slots; (*i)++) {
                uintptr_t slot = *i < m->n_slots ? m->slots[*i] : m->old_slots[*i - m->n_slots];

                if (slot) {
                        (*i)++;
                        return entry_of(m, slot);
                }
        }
        return NULL;
}

/* Count one array's entries into *n; -EUCLEAN when one is out of place. */
static int check_slots(const struct hashmap *m, const uintptr_t *slots, size_t n_slots, bool old,
                       size_t *n)
{
        size_t mask = n_slots - 1;

        for (size_t i = 0; i < n_slots; i++) {
                uint64_t hash;
                size_t home;

                if (!slots[i])
                        continue;
                (*n)++;
                if (old && ((i - m->old_start) & mask) < m->n_moved)
                        return -EUCLEAN;
                hash = m->hash_of(entry_of(m, slots[i]));
                home = hashmap_home(n_slots, hash);
                if (!slot_may_match(m, slots[i], hash, (i - home) & mask))
                        return -EUCLEAN;
                for (size_t j = old ? old_probe_start(m, home) : home; j != i; j = (j + 1) & mask)
                        if (!slots[j])
                                return -EUCLEAN;
        }
        return 0;
}

int hashmap_check(const struct hashmap *m)
{
        size_t n = 0;

        if (check_slots(m, m->slots, m->n_slots, false, &n) < 0 ||
            check_slots(m, m->old_slots, m->n_old_slots, true, &n) < 0)
                return -EUCLEAN;
        if (m->old_slots && (m->n_moved >= m->n_old_slots || m->old_slots[m->old_start] != 0 ||
                             m->n_slots <= m->n_old_slots))
                return -EUCLEAN;
        if (n != m->n_entries || (m->n_slots > 0 && n > m->n_slots / 4 * 3))
                return -EUCLEAN;
        return 0;
}
