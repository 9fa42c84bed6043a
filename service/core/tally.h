/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A count per uid (an account: subuids.h), for what a limit sums over several uids, and of that
 * count the part its user marks: the connection table (service/conns.c) counts each uid's and
 * account's connections and marks the unprivileged ones, the only ones it may evict. A uid with
 * nothing counted has no entry, so a tally no subordinate uid ever used stays empty and costs a
 * look-up of an empty table.
 */

#include <stddef.h>
#include <stdint.h>

#include "base/hashmap.h"

struct tally {
        struct hashmap counts; /* uid → struct tally_count, none at 0 */
};

struct tally_count {
        uint32_t uid;
        uint64_t n;
        uint64_t marked; /* ≤ n */
};

void tally_init(struct tally *t);
void tally_done(struct tally *t);

/* uid's counts, or NULL when it has none. */
const struct tally_count *tally_find(const struct tally *t, uint32_t uid);
uint64_t tally_get(const struct tally *t, uint32_t uid);
/* Room for uid's count, so that tally_add() to it cannot fail. -ENOMEM. */
int tally_reserve(struct tally *t, uint32_t uid);
/* After a tally_reserve() whose change was given up: no entry is left at 0. */
void tally_unreserve(struct tally *t, uint32_t uid);
/* uid's count was reserved: n more, `marked` of them marked. */
void tally_add(struct tally *t, uint32_t uid, uint64_t n, uint64_t marked);
/* tally_reserve() and tally_add() in one (n > 0): -ENOMEM changes nothing. */
int tally_charge(struct tally *t, uint32_t uid, uint64_t n, uint64_t marked);
/* At most what uid has, marked at most what it has marked. */
void tally_sub(struct tally *t, uint32_t uid, uint64_t n, uint64_t marked);
/* Iterate the uids counted: start with *i = 0; NULL at the end. Not across changes. */
const struct tally_count *tally_next(const struct tally *t, size_t *i);
/* The sum over every uid, for invariant checks. O(uids). */
uint64_t tally_total(const struct tally *t);
