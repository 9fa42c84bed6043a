/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "service/core/tally.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>

struct tally_count {
        uint32_t uid;
        uint64_t n;
};

static uint64_t count_hash(const void *entry)
{
        return hash_mix64(((const struct tally_count *)entry)->uid);
}

static bool count_matches(const void *entry, const void *key)
{
        return ((const struct tally_count *)entry)->uid == *(const uint32_t *)key;
}

static struct tally_count *count_find(const struct tally *t, uint32_t uid)
{
        if (t->counts.n_entries == 0)
                return NULL;
        return hashmap_find(&t->counts, hash_mix64(uid), count_matches, &uid);
}

void tally_init(struct tally *t)
{
        hashmap_init(&t->counts, count_hash);
}

void tally_done(struct tally *t)
{
        struct tally_count *c;
        size_t i = 0;

        while ((c = hashmap_next(&t->counts, &i)))
                free(c);
        hashmap_done(&t->counts);
        tally_init(t);
}

uint64_t tally_get(const struct tally *t, uint32_t uid)
{
        const struct tally_count *c = count_find(t, uid);

        return c ? c->n : 0;
}

int tally_reserve(struct tally *t, uint32_t uid)
{
        struct tally_count *c;

        if (count_find(t, uid))
                return 0;
        if (hashmap_reserve(&t->counts, t->counts.n_entries + 1) < 0)
                return -ENOMEM;
        c = malloc(sizeof(*c));
        if (!c)
                return -ENOMEM;
        *c = (struct tally_count){.uid = uid};
        hashmap_insert(&t->counts, count_hash(c), c);
        return 0;
}

static void count_drop(struct tally *t, struct tally_count *c)
{
        hashmap_remove(&t->counts, count_hash(c), c);
        free(c);
        hashmap_shrink(&t->counts);
}

void tally_unreserve(struct tally *t, uint32_t uid)
{
        struct tally_count *c = count_find(t, uid);

        if (c && c->n == 0)
                count_drop(t, c);
}

void tally_add(struct tally *t, uint32_t uid, uint64_t n)
{
        struct tally_count *c = count_find(t, uid);

        assert(c);
        c->n += n;
}

void tally_sub(struct tally *t, uint32_t uid, uint64_t n)
{
        struct tally_count *c;

        if (n == 0)
                return;
        c = count_find(t, uid);
        assert(c && c->n >= n);
        c->n -= n;
        if (c->n == 0)
                count_drop(t, c);
}

uint64_t tally_total(const struct tally *t)
{
        const struct tally_count *c;
        uint64_t total = 0;
        size_t i = 0;

        while ((c = hashmap_next(&t->counts, &i)))
                total += c->n;
        return total;
}
