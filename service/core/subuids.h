/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Subordinate uids (subuid(5)): the uid ranges a person may map into user namespaces, each
 * charged to that person's own uid, its account. Per-uid limits count per account, so that one
 * person's 65,536 uids share one person's limits. The table is sorted and its ranges do not
 * overlap, so a lookup is a binary search. Ownership, visibility and privilege still follow the
 * uid itself; only what the limits count follows the account.
 */

#include <stddef.h>
#include <stdint.h>

struct subuid_range {
        uint32_t first;
        uint32_t count;   /* > 0; first + count <= 2^32 */
        uint32_t account; /* the person the range was given to */
};

struct subuids {
        struct subuid_range *ranges; /* by first, none overlapping; NULL when n == 0 */
        size_t n;
};

/*
 * The table of the n ranges given (in the file's order). A uid in more than one range is
 * charged to the range that starts first (the earlier line among equal starts): a later range
 * loses the part an earlier one covers, and one covered whole is dropped (*ret_clipped counts
 * the ranges cut or dropped). uid 0 is never charged to anyone: the range that holds it loses
 * it. -ENOMEM.
 */
int subuids_build(struct subuids *ret, const struct subuid_range *ranges, size_t n,
                  size_t *ret_clipped);
void subuids_done(struct subuids *t);

/* The account uid is charged to: uid itself when no range holds it. O(log n). */
uint32_t subuids_account(const struct subuids *t, uint32_t uid);
