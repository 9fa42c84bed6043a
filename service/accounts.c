/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "service/accounts.h"

#include <errno.h>
#include <stdlib.h>

#include "service/conns.h"
#include "service/core/parked.h"
#include "service/core/registry.h"
#include "service/core/subuids.h"
#include "service/core/tally.h"
#include "service/io/log.h"
#include "service/io/subuid-file.h"
#include "service/service.h"

/* Re-charge everything to t's accounts: all of it, or (-ENOMEM) nothing. */
static int charge(struct service *s, const struct subuids *t)
{
        struct tally timers, parked, conns;
        int r = registry_subuids_prepare(s->registry, t, &timers);

        if (r < 0)
                return r;
        r = parked_subuids_prepare(s->parked, t, &parked);
        if (r < 0) {
                tally_done(&timers);
                return r;
        }
        r = conns_subuids_prepare(s, t, &conns);
        if (r < 0) {
                tally_done(&timers);
                tally_done(&parked);
                return r;
        }
        registry_subuids_commit(s->registry, t, &timers);
        parked_subuids_commit(s->parked, t, &parked);
        conns_subuids_commit(s, t, &conns);
        return 0;
}

void accounts_load(struct service *s)
{
        struct subuid_range *ranges;
        /* Where the core finds it until the next load: not moved once charged. */
        struct subuids *table;
        size_t n, clipped = 0;
        int r = subuid_file_load(s->config.subuid_file, &ranges, &n);

        if (r < 0) {
                log_errno(r, "Cannot read %s; the subordinate uid ranges stay as they were",
                          s->config.subuid_file);
                return;
        }
        table = calloc(1, sizeof(*table));
        r = table ? subuids_build(table, ranges, n, &clipped) : -ENOMEM;
        free(ranges);
        if (r >= 0)
                r = charge(s, table);
        if (r < 0) {
                if (table)
                        subuids_done(table);
                free(table);
                log_errno(r,
                          "Cannot charge the uids of %s to their accounts; the subordinate uid "
                          "ranges stay as they were",
                          s->config.subuid_file);
                return;
        }
        accounts_free(s);
        s->subuids = table;
        if (clipped > 0)
                log_warning("%s: %zu ranges overlap an earlier-starting one or hold uid 0: a uid "
                            "is charged to the first range holding it, uid 0 to itself",
                            s->config.subuid_file, clipped);
        log_info("%s: %zu subordinate uid ranges charged to their accounts", s->config.subuid_file,
                 s->subuids->n);
}

void accounts_free(struct service *s)
{
        if (s->subuids)
                subuids_done(s->subuids);
        free(s->subuids);
        s->subuids = NULL;
}
