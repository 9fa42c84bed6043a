/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <assert.h>
#include <errno.h>
#include <stdlib.h>

#include "base/hashmap.h"

#define N_SLOTS_MIN 16

uint64_t hash_mix64(uint64_t x)
{
        x ^= x >> 30;
        x *= UINT64_C(0xbf58476d1ce4e5b9);
        x ^= x >> 27;
        x *= UINT64_C(0x94d049bb133111eb);
        x ^= x >> 31;
        return x;
}

uint64_t hash_string(uint64_t seed, const char *s)
{
        uint64_t h = UINT64_C(0xcbf29ce484222325) ^ seed;

        for (const char *p = s; *p; p++)
                h = (h ^ (unsigned char)*p) * UINT64_C(0x100000001b3);
        return hash_mix64(h);
}

static size_t home_of(size_t n_slots, uint64_t hash)
{
        return (size_t)hash & (n_slots - 1);
}

static void slot_insert(void **slots, size_t n_slots, uint64_t hash, void *entry)
{
        size_t i = home_of(n_slots, hash);

        while (slots[i])
                i = (i + 1) & (n_slots - 1);
        slots[i] = entry;
}

void hashmap_init(struct hashmap *m, hashmap_hash_fn hash_of)
{
        *m = (struct hashmap){.hash_of = hash_of};
}

void hashmap_done(struct hashmap *m)
{
        free(m->slots);
        *m = (struct hashmap){.hash_of = m->hash_of};
}

int hashmap_reserve(struct hashmap *m, size_t n)
{
        size_t n_slots = m->n_slots > 0 ? m->n_slots : N_SLOTS_MIN;
        void **slots;

        /* At most 3/4 full keeps linear probes short. */
        while (n > n_slots / 4 * 3) {
                if (n_slots > SIZE_MAX / 2 / sizeof(void *))
                        return -ENOMEM;
                n_slots *= 2;
        }
        if (n_slots == m->n_slots)
                return 0;

        slots = calloc(n_slots, sizeof(void *));
        if (!slots)
                return -ENOMEM;
        for (size_t i = 0; i < m->n_slots; i++)
                if (m->slots[i])
                        slot_insert(slots, n_slots, m->hash_of(m->slots[i]), m->slots[i]);
        free(m->slots);
        m->slots = slots;
        m->n_slots = n_slots;
        return 0;
}

void *hashmap_find(const struct hashmap *m, uint64_t hash, hashmap_match_fn match, const void *key)
{
        if (m->n_slots == 0)
                return NULL;
        for (size_t i = home_of(m->n_slots, hash); m->slots[i]; i = (i + 1) & (m->n_slots - 1))
                if (match(m->slots[i], key))
                        return m->slots[i];
        return NULL;
}

void hashmap_insert(struct hashmap *m, uint64_t hash, void *entry)
{
        assert(entry);
        assert(m->n_entries < m->n_slots / 4 * 3);
        slot_insert(m->slots, m->n_slots, hash, entry);
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
        for (hole = home_of(m->n_slots, hash); m->slots[hole] != entry; hole = (hole + 1) & mask)
                if (!m->slots[hole])
                        return;

        /* Backward shift: pull later entries of the probe run into the hole when they may. */
        for (i = (hole + 1) & mask; m->slots[i]; i = (i + 1) & mask) {
                if (home_between(hole, i, home_of(m->n_slots, m->hash_of(m->slots[i]))))
                        continue;
                m->slots[hole] = m->slots[i];
                hole = i;
        }
        m->slots[hole] = NULL;
        m->n_entries--;
}

void *hashmap_next(const struct hashmap *m, size_t *i)
{
        for (; *i < m->n_slots; (*i)++)
                if (m->slots[*i])
                        return m->slots[(*i)++];
        return NULL;
}

int hashmap_check(const struct hashmap *m)
{
        size_t n = 0, mask = m->n_slots - 1;

        for (size_t i = 0; i < m->n_slots; i++) {
                if (!m->slots[i])
                        continue;
                n++;
                for (size_t j = home_of(m->n_slots, m->hash_of(m->slots[i])); j != i;
                     j = (j + 1) & mask)
                        if (!m->slots[j])
                                return -EUCLEAN;
        }
        if (n != m->n_entries || (m->n_slots > 0 && n > m->n_slots / 4 * 3))
                return -EUCLEAN;
        return 0;
}
