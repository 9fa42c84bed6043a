/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <assert.h>
#include <errno.h>
#include <stdlib.h>

#include "base/hashmap.h"

#define N_SLOTS_MIN 16
/* Slots a rehash reads ahead of the one it moves. */
#define REHASH_AHEAD 16

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

/* Whether slot i (at `distance` from the key's home) may hold the key's entry. */
static bool slot_may_match(const struct hashmap *m, size_t i, uint64_t hash, size_t distance)
{
        return (m->slots[i] & m->tag_mask) == (tag_of(m, hash) | distance_bits(m, distance));
}

/* The home of the entry in slot i: from its distance when the slot holds it, so that moving
 * entries reads none of them. */
static size_t slot_home(const struct hashmap *m, size_t i)
{
        size_t distance = m->tag_mask ? (size_t)(m->slots[i] >> DISTANCE_SHIFT) : DISTANCE_FAR;

        if (distance < DISTANCE_FAR)
                return (i - distance) & (m->n_slots - 1);
        return hashmap_home(m->n_slots, m->hash_of(hashmap_slot_entry(m, i)));
}

static void slot_insert(const struct hashmap *m, uintptr_t *slots, size_t n_slots, uint64_t hash,
                        const void *entry)
{
        size_t i = hashmap_home(n_slots, hash), distance = 0;

        for (; slots[i]; distance++)
                i = (i + 1) & (n_slots - 1);
        slots[i] = slot_of(m, hash, entry, distance);
}

void hashmap_init(struct hashmap *m, hashmap_hash_fn hash_of)
{
        *m = (struct hashmap){.tag_mask = TAG_MASK, .hash_of = hash_of};
}

void hashmap_done(struct hashmap *m)
{
        free(m->slots);
        *m = (struct hashmap){.tag_mask = TAG_MASK, .hash_of = m->hash_of};
}

/* Move every entry into a table of n_slots (0: none). -ENOMEM, changing nothing. */
static int rehash(struct hashmap *m, size_t n_slots)
{
        uintptr_t *slots = NULL;

        if (n_slots > 0) {
                slots = calloc(n_slots, sizeof(uintptr_t));
                if (!slots)
                        return -ENOMEM;
        }
        for (size_t i = 0; i < m->n_slots; i++) {
                /* hash_of() reads each entry, scattered over the heap: fetch ahead, so that the
                 * misses overlap rather than come one after another. Its first 128 bytes (a
                 * timer's identity is at its end, past the first line). */
                if (i + REHASH_AHEAD < m->n_slots && m->slots[i + REHASH_AHEAD]) {
                        const char *ahead = hashmap_slot_entry(m, i + REHASH_AHEAD);
                        __builtin_prefetch(ahead);
                        __builtin_prefetch(ahead + 64);
                        __builtin_prefetch(ahead + 127);
                }
                if (m->slots[i]) {
                        void *entry = hashmap_slot_entry(m, i);
                        slot_insert(m, slots, n_slots, m->hash_of(entry), entry);
                }
        }
        free(m->slots);
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
        return rehash(m, n_slots);
}

void hashmap_shrink(struct hashmap *m)
{
        /* Twice the fewest, so that the next few insertions do not grow it straight back. */
        size_t n_slots = m->n_entries > 0 ? slots_for(m->n_entries, N_SLOTS_MIN) * 2 : 0;

        /* Out of memory keeps the table as it is: it still holds every entry. */
        if (n_slots <= m->n_slots / 2 && (n_slots > 0 || m->n_entries == 0))
                (void)rehash(m, n_slots);
}

void *hashmap_find(const struct hashmap *m, uint64_t hash, hashmap_match_fn match, const void *key)
{
        if (m->n_slots == 0)
                return NULL;
        for (size_t i = hashmap_home(m->n_slots, hash), distance = 0; m->slots[i];
             i = (i + 1) & (m->n_slots - 1), distance++)
                if (slot_may_match(m, i, hash, distance) && match(hashmap_slot_entry(m, i), key))
                        return hashmap_slot_entry(m, i);
        return NULL;
}

/* An entry whose address has bits where the tags go: keep the addresses whole from now on. */
static void untag(struct hashmap *m)
{
        for (size_t i = 0; i < m->n_slots; i++)
                m->slots[i] &= ~m->tag_mask;
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
}

/* True when home h lies cyclically in (hole, i]: then the entry at i must stay behind the hole. */
static bool home_between(size_t hole, size_t i, size_t h)
{
        return hole <= i ? hole < h && h <= i : hole < h || h <= i;
}

void hashmap_remove(struct hashmap *m, uint64_t hash, const void *entry)
{
        size_t mask = m->n_slots - 1, hole, i;

        if (m->n_slots == 0)
                return;
        for (hole = hashmap_home(m->n_slots, hash); hashmap_slot_entry(m, hole) != entry;
             hole = (hole + 1) & mask)
                if (!m->slots[hole])
                        return;

        /* Backward shift: pull later entries of the probe run into the hole when they may. */
        for (i = (hole + 1) & mask; m->slots[i]; i = (i + 1) & mask) {
                size_t home = slot_home(m, i);
                uintptr_t keep = m->slots[i] & ~(m->tag_mask & ~HASH_TAG_MASK);

                if (home_between(hole, i, home))
                        continue;
                m->slots[hole] = keep | distance_bits(m, (hole - home) & mask);
                hole = i;
        }
        m->slots[hole] = 0;
        m->n_entries--;
}

void *hashmap_next(const struct hashmap *m, size_t *i)
{
        for (; *i < m->n_slots; (*i)++)
                if (m->slots[*i])
                        return hashmap_slot_entry(m, (*i)++);
        return NULL;
}

int hashmap_check(const struct hashmap *m)
{
        size_t n = 0, mask = m->n_slots - 1;

        for (size_t i = 0; i < m->n_slots; i++) {
                uint64_t hash;

                if (!m->slots[i])
                        continue;
                n++;
                hash = m->hash_of(hashmap_slot_entry(m, i));
                if (!slot_may_match(m, i, hash, (i - hashmap_home(m->n_slots, hash)) & mask))
                        return -EUCLEAN;
                for (size_t j = hashmap_home(m->n_slots, hash); j != i; j = (j + 1) & mask)
                        if (!m->slots[j])
                                return -EUCLEAN;
        }
        if (n != m->n_entries || (m->n_slots > 0 && n > m->n_slots / 4 * 3))
                return -EUCLEAN;
        return 0;
}
