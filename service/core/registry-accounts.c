/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The registry's accounts: the per-owner limit counts an owner's live timers together with those
 * of every uid charged to the same account (subuids.h). An owner charged to itself is counted by
 * its own record alone; the tally holds what the others hold, by account. So a table of no
 * ranges costs a comparison, and an account's subordinate uids never keep the account's own uid
 * out: it is held to its own timers only.
 */
#include <errno.h>

#include "service/core/registry-internal.h"

uint32_t registry_account_of(const struct registry *r, uint32_t uid)
{
        return r->subuids ? subuids_account(r->subuids, uid) : uid;
}

int registry_subuids_prepare(const struct registry *r, const struct subuids *t, struct tally *ret)
{
        const struct owner *o;
        size_t i = 0;

        tally_init(ret);
        while ((o = hashmap_next(&r->owners, &i))) {
                uint32_t account = t ? subuids_account(t, o->uid) : o->uid;
                if (account == o->uid || o->n_timers == 0)
                        continue;
                if (tally_charge(ret, account, o->n_timers, 0) < 0) {
                        tally_done(ret);
                        return -ENOMEM;
                }
        }
        return 0;
}

void registry_subuids_commit(struct registry *r, const struct subuids *t, struct tally *prepared)
{
        struct owner *o;
        size_t i = 0;

        while ((o = hashmap_next(&r->owners, &i)))
                o->account = t ? subuids_account(t, o->uid) : o->uid;
        tally_done(&r->accounts);
        r->accounts = *prepared;
        r->subuids = t;
}
