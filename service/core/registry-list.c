/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* What the registry shows: snapshots, the inventory listed and paged in (owner, name) order, a
 * session's transient timers, the statistics. Reads only; calls registry-timer.c alone. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "service/core/registry-internal.h"

void timer_snapshot(const struct timer *t, struct td_snapshot *ret)
{
        const struct run_state *rs = timer_run_state(t);

        *ret = (struct td_snapshot){
            .owner = t->uid,
            .declaration = timer_declaration(t),
            .generation = t->generation,
            .state = timer_state(t),
            .failure = (enum timerd_failure)t->failure,
            .run_active = t->run_active,
            .pending = timer_pending(t),
            .run_cancelled = t->run_active && t->after_run == AFTER_RUN_NONE,
            .session = t->session,
        };
        ret->has_deadline = timer_next_deadline(t, &ret->next_deadline_usec);
#define RUN_TO_SNAPSHOT(kind, snapshot, wire, public, journal, position)                           \
        FIELD_OP(RUN_OUT, kind, snapshot, ret, rs, timer_declared_cadence(t))
        TD_TIMER_FIELDS_HELD(TD_NO_FIELD, RUN_TO_SNAPSHOT)
#undef RUN_TO_SNAPSHOT
        strcpy(ret->name, t->name);
}

void registry_snapshot_at(const struct registry *r, struct td_snapshot *timer,
                          const struct td_now *now)
{
        const struct td_declaration *d = &timer->declaration;
        uint64_t due, next;

        if (!timer->run_active || policy_runs_off_queue(d->policy) || !timer->has_deadline ||
            timer->failure != TIMERD_FAILURE_NONE || !clock_valid(d->clock) ||
            timer->live_cadence_usec == 0)
                return;
        if (schedule_skip(timer->next_deadline_usec, timer->live_cadence_usec,
                          registry_handover(r, d->handover_usec), now->usec[d->clock], &due,
                          &next) < 0)
                return;
        timer->overruns = value_saturating_add(timer->overruns, due);
        timer->next_deadline_usec = next;
}

/* A timer by its identity, as a call names it: -TIMERD_E_INVALID_NAME, -TIMERD_E_NOT_FOUND. */
static int timer_named(const struct registry *r, uint32_t owner, const char *name,
                       const struct timer **ret)
{
        if (!registry_name_valid(name))
                return -TIMERD_E_INVALID_NAME;
        *ret = timer_find(r, owner, name);
        return *ret ? 0 : -TIMERD_E_NOT_FOUND;
}

int registry_get(const struct registry *r, uint32_t owner, const char *name,
                 struct td_snapshot *ret)
{
        const struct timer *t;
        int e = timer_named(r, owner, name, &t);

        if (e < 0)
                return e;
        timer_snapshot(t, ret);
        return 0;
}

int registry_get_brief(const struct registry *r, uint32_t owner, const char *name,
                       struct td_brief *ret)
{
        const struct timer *t;
        int e = timer_named(r, owner, name, &t);

        if (e < 0)
                return e;
        *ret = (struct td_brief){
            .clock = (enum timerd_clock)t->clock,
            .state = timer_state(t),
            .failure = (enum timerd_failure)t->failure,
        };
        return 0;
}

long registry_list_each(const struct registry *r, const struct td_list_page *page,
                        registry_list_fn fn, void *userdata, bool *ret_more)
{
        const struct owner *o = page->all_owners ? NULL : owner_find(r, page->owner);
        size_t room = page->all_owners ? timers_live(r) : o ? o->n_timers : 0, n = 0;
        const struct inventory_key first_of_owner = {.owner = page->owner, .name = ""},
                                   after = {.owner = page->after_owner, .name = page->after_name};
        const struct inventory_key *from = page->has_after ? &after : NULL;
        const struct inventory_node *node;
        struct inventory_cursor c;
        struct td_snapshot snapshot;
        bool go_on = true;

        *ret_more = false;
        if (page->limit == 0)
                return -EINVAL;
        if (page->has_after && !registry_name_valid(page->after_name))
                return -TIMERD_E_INVALID_NAME;
        if (room > page->limit)
                room = page->limit;
        if (room == 0)
                return 0;
        /* Names are never empty: after (owner, "") is the owner's first timer. */
        if (!page->all_owners && (!from || inventory_key_compare(from, &first_of_owner) < 0))
                from = &first_of_owner;
        inventory_seek(&r->inventory, from, &c);
        while ((node = inventory_next(&c))) {
                const struct timer *t = inventory_entry(node, struct timer, inventory_node);

                if (!page->all_owners && t->uid != page->owner)
                        break;
                if (timer_gone(r, t))
                        continue;
                if (n == room || !go_on) {
                        *ret_more = true;
                        break;
                }
                timer_snapshot(t, &snapshot);
                n++;
                go_on = fn(&snapshot, userdata);
        }
        return (long)n;
}

struct page_copy {
        struct td_snapshot *list;
        size_t n;
};

static bool page_copy_add(const struct td_snapshot *t, void *userdata)
{
        struct page_copy *copy = userdata;

        copy->list[copy->n++] = *t;
        return true;
}

long registry_list_page(const struct registry *r, const struct td_list_page *page,
                        struct td_snapshot **ret, bool *ret_more)
{
        const struct owner *o = page->all_owners ? NULL : owner_find(r, page->owner);
        size_t room = page->all_owners ? timers_live(r) : o ? o->n_timers : 0;
        struct page_copy copy = {0};
        long n;

        *ret = NULL;
        *ret_more = false;
        if (page->limit > 0 && room > 0) {
                copy.list = calloc(room < page->limit ? room : page->limit, sizeof(*copy.list));
                if (!copy.list)
                        return -ENOMEM;
        }
        n = registry_list_each(r, page, page_copy_add, &copy, ret_more);
        if (n <= 0)
                free(copy.list);
        else
                *ret = copy.list;
        return n;
}

long registry_list(const struct registry *r, uint32_t owner, bool all_owners,
                   struct td_snapshot **ret)
{
        const struct td_list_page page = {
            .owner = owner, .all_owners = all_owners, .limit = SIZE_MAX};

        return registry_list_page(r, &page, ret, &(bool){false});
}

void registry_get_stats(const struct registry *r, struct registry_stats *ret)
{
        *ret = (struct registry_stats){
            .timers = timers_live(r),
            .scheduled = r->n_state[TIMERD_STATE_SCHEDULED],
            .running = r->n_state[TIMERD_STATE_RUNNING],
            .failed = r->n_state[TIMERD_STATE_FAILED],
            .pending = r->n_pending,
            .firings = r->firings,
            .overruns = r->overruns,
            .stale_expiries = r->stale_expiries,
            .reaping = r->n_gone,
        };
}

bool registry_has_failed(const struct registry *r)
{
        return r->n_state[TIMERD_STATE_FAILED] > 0;
}

void registry_get_owner_stats(const struct registry *r, uint32_t owner, struct registry_stats *ret)
{
        const struct owner *o = owner_find(r, owner);

        *ret = (struct registry_stats){0};
        if (!o)
                return;
        ret->timers = o->n_timers;
        ret->scheduled = o->n_state[TIMERD_STATE_SCHEDULED];
        ret->running = o->n_state[TIMERD_STATE_RUNNING];
        ret->failed = o->n_state[TIMERD_STATE_FAILED];
        ret->pending = o->n_pending;
}

bool registry_session_holds(const struct registry *r, uint64_t session)
{
        const struct session *s = session_open(r, session);

        return s && (!list_empty(&s->transient) || !list_empty(&s->delivered));
}

bool registry_session_has_runs(const struct registry *r, uint64_t session)
{
        const struct session *s = session_open(r, session);

        return s && !list_empty(&s->delivered);
}
