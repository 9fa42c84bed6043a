/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A count per uid (an account: subuids.h), for what a limit sums over several uids. A uid with
 * nothing counted has no entry, so a tally no subordinate uid ever used stays empty and costs a
 * look-up of an empty table.
 */

#include <stdint.h>

#include "base/hashmap.h"

struct tally {
        struct hashmap counts; /* uid → struct tally_count, none at 0 */
};

void tally_init(struct tally *t);
void tally_done(struct tally *t);

uint64_t tally_get(const struct tally *t, uint32_t uid);
/* Room for uid's count, so that tally_add() to it cannot fail. -ENOMEM. */
int tally_reserve(struct tally *t, uint32_t uid);
/* After a tally_reserve() whose change was given up: no entry is left at 0. */
void tally_unreserve(struct tally *t, uint32_t uid);
/* uid's count was reserved. */
void tally_add(struct tally *t, uint32_t uid, uint64_t n);
/* At most what uid has. */
void tally_sub(struct tally *t, uint32_t uid, uint64_t n);
/* The sum over every uid, for invariant checks. O(uids). */
uint64_t tally_total(const struct tally *t);
