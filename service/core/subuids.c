/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "service/core/subuids.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct numbered {
        struct subuid_range range;
        size_t line; /* its place among the ranges given */
};

static int by_first_then_line(const void *a, const void *b)
{
        const struct numbered *x = a, *y = b;

        if (x->range.first != y->range.first)
                return x->range.first < y->range.first ? -1 : 1;
        return x->line < y->line ? -1 : x->line > y->line;
}

int subuids_build(struct subuids *ret, const struct subuid_range *ranges, size_t n,
                  size_t *ret_clipped)
{
        struct numbered *sorted;
        struct subuid_range *kept;
        /* uid 0 counts as taken before the first range: root is its own account, always. */
        uint64_t covered = 1;
        size_t n_kept = 0, clipped = 0;

        *ret = (struct subuids){0};
        if (ret_clipped)
                *ret_clipped = 0;
        if (n == 0)
                return 0;
        sorted = calloc(n, sizeof(*sorted));
        kept = calloc(n, sizeof(*kept));
        if (!sorted || !kept) {
                free(sorted);
                free(kept);
                return -ENOMEM;
        }
        for (size_t i = 0; i < n; i++)
                sorted[i] = (struct numbered){.range = ranges[i], .line = i};
        qsort(sorted, n, sizeof(*sorted), by_first_then_line);
        /* By start: what a range shares with those before lies at its beginning, up to the
         * farthest end so far. */
        for (size_t i = 0; i < n; i++) {
                struct subuid_range r = sorted[i].range;
                uint64_t end = (uint64_t)r.first + r.count;

                if (r.count == 0)
                        continue;
                /* Past the last uid there is nothing to charge. */
                if (end > UINT64_C(1) << 32) {
                        end = UINT64_C(1) << 32;
                        r.count = (uint32_t)(end - r.first);
                }
                if (r.first < covered) {
                        clipped++;
                        if (end <= covered)
                                continue;
                        r.first = (uint32_t)covered;
                        r.count = (uint32_t)(end - covered);
                }
                kept[n_kept++] = r;
                covered = end;
        }
        free(sorted);
        if (n_kept == 0) {
                free(kept);
                kept = NULL;
        }
        *ret = (struct subuids){.ranges = kept, .n = n_kept};
        if (ret_clipped)
                *ret_clipped = clipped;
        return 0;
}

void subuids_done(struct subuids *t)
{
        free(t->ranges);
        *t = (struct subuids){0};
}

uint32_t subuids_account(const struct subuids *t, uint32_t uid)
{
        size_t lo = 0, hi = t->n;

        /* The last range starting at or before uid, if it reaches uid. */
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (t->ranges[mid].first <= uid)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        if (lo == 0)
                return uid;
        const struct subuid_range *r = &t->ranges[lo - 1];
        return (uint64_t)uid - r->first < r->count ? r->account : uid;
}
