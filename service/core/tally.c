/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "service/core/tally.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>

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

const struct tally_count *tally_find(const struct tally *t, uint32_t uid)
{
        return count_find(t, uid);
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

/* uid's entry, made at 0 when it has none; NULL: out of memory. */
static struct tally_count *count_get(struct tally *t, uint32_t uid)
{
        struct tally_count *c = count_find(t, uid);

        if (c)
                return c;
        if (hashmap_reserve(&t->counts, t->counts.n_entries + 1) < 0)
                return NULL;
        c = malloc(sizeof(*c));
        if (!c)
                return NULL;
        *c = (struct tally_count){.uid = uid};
        hashmap_insert(&t->counts, count_hash(c), c);
        return c;
}

int tally_reserve(struct tally *t, uint32_t uid)
{
        return count_get(t, uid) ? 0 : -ENOMEM;
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

void tally_add(struct tally *t, uint32_t uid, uint64_t n, uint64_t marked)
{
        struct tally_count *c = count_find(t, uid);

        assert(c && marked <= n);
        c->n += n;
        c->marked += marked;
}

int tally_charge(struct tally *t, uint32_t uid, uint64_t n, uint64_t marked)
{
        struct tally_count *c;

        /* An entry at 0 would outlive its count. */
        assert(n > 0 && marked <= n);
        c = count_get(t, uid);
        if (!c)
                return -ENOMEM;
        c->n += n;
        c->marked += marked;
        return 0;
}

void tally_sub(struct tally *t, uint32_t uid, uint64_t n, uint64_t marked)
{
        struct tally_count *c;

        if (n == 0)
                return;
        c = count_find(t, uid);
        assert(c && c->n >= n && c->marked >= marked);
        c->n -= n;
        c->marked -= marked;
        assert(c->marked <= c->n);
        if (c->n == 0)
                count_drop(t, c);
}

const struct tally_count *tally_next(const struct tally *t, size_t *i)
{
        return hashmap_next(&t->counts, i);
}

uint64_t tally_total(const struct tally *t)
{
        const struct tally_count *c;
        uint64_t total = 0;
        size_t i = 0;

        while ((c = tally_next(t, &i)))
                total += c->n;
        return total;
}
