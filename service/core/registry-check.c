/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* registry_check(): every invariant, structure by structure (timers, changes, clocks, owners,
 * sessions), recounted from scratch. For tests; changes nothing; calls registry-timer.c alone. */

#include <errno.h>
#include <string.h>

#include "service/core/registry-internal.h"

static bool timer_consistent(const struct registry *r, const struct timer *t)
{
        const struct td_declaration declaration = timer_declaration(t), *d = &declaration;
        const struct run_state *rs = timer_run_state(t);
        enum td_schedule_problem problem;

        if (!registry_name_valid(t->name) || declaration_validate(d, &problem) < 0 ||
            timer_lookup(r, t->uid, t->name) != t || !owner_find(r, t->uid))
                return false;
        /* Restored timers keep their generations and belong to no session. */
        if (t->generation == 0 || t->generation > r->last_generation ||
            (t->session == 0 && !timer_retained(t)))
                return false;
        if (t->removed || (t->has_before && !t->changed))
                return false;
        if (t->has_missed_deadline &&
            (!timer_queued(t) || !t->runs || rs->missed_deadline_usec > t->deadline_usec))
                return false;
        if ((t->has_missed_deadline && !t->catching_up) || (t->catching_up && !timer_queued(t)))
                return false;
        /* Transient timers are in their session's list (registry_check() says which); retained
         * ones in none. */
        if ((d->lifetime == TIMERD_LIFETIME_TRANSIENT) != list_linked(&t->transient_node) ||
            (list_linked(&t->transient_node) && !session_find(r, t->session)))
                return false;
        if (t->failure >= TIMERD_FAILURE_MAX)
                return false;
        /* A failed timer is never queued; once and after-completion leave it while running. */
        if (timer_queued(t) && (t->failure != TIMERD_FAILURE_NONE ||
                                (t->run_active && policy_runs_off_queue(d->policy))))
                return false;
        if (timer_queued(t)) {
                const struct timerq *q = &r->queues[d->clock];

                if (!timerq_contains(q, &t->entry) ||
                    timerq_entry_deadline(q, &t->entry) != handover_instant(r, t, t->deadline_usec))
                        return false;
        }
        if (t->after_run != AFTER_RUN_POLICY && !t->run_active)
                return false;
        if ((t->after_run == AFTER_RUN_NONE && !policy_runs_off_queue(d->policy)) ||
            (timer_held(t) && timer_queued(t)))
                return false;
        if (rs->overruns_reported > rs->overruns)
                return false;
        if (t->after_run != AFTER_RUN_DEADLINE && rs->deferred_deadline_usec != 0)
                return false;
        /* An active run has its record, and is either pending or handed to one session. */
        if (t->run_active && !t->runs)
                return false;
        if (t->runs && (t->runs->timer != t || t->run_active != list_linked(&t->runs->waiter_node)))
                return false;
        if (timer_delivered_to(t) &&
            session_find(r, timer_delivered_to(t)->id) != timer_delivered_to(t))
                return false;
        if ((t->run_active || rs->has_last_start) && rs->run == 0)
                return false;
        if (rs->runs > rs->run || rs->consecutive_expected_failures > rs->runs)
                return false;
        return true;
}

/* The inventory holds exactly the live timers, each owner's n_timers of them, and the gone ones
 * of closing sessions that were not detached from it. */
static int inventory_check_owners(const struct registry *r)
{
        const struct inventory_node *node;
        const struct owner *o = NULL;
        struct inventory_cursor c;
        size_t run = 0, n_detached = 0;

        for (const struct list_node *p = r->closing.next; p != &r->closing; p = p->next) {
                const struct session *s = list_entry(p, struct session, closing_node);

                n_detached += s->detached ? list_length(&s->transient) : 0;
        }
        if (inventory_check(&r->inventory) < 0 ||
            r->inventory.n_nodes != r->timers.n_entries - n_detached)
                return -EUCLEAN;
        inventory_seek(&r->inventory, NULL, &c);
        while ((node = inventory_next(&c))) {
                const struct timer *t = inventory_entry(node, struct timer, inventory_node);

                if (t->removed || timer_lookup(r, t->uid, t->name) != t)
                        return -EUCLEAN;
                /* A gone one is no longer its owner's. */
                if (timer_gone(r, t)) {
                        if (session_find(r, t->session)->detached)
                                return -EUCLEAN;
                        continue;
                }
                if (!o || t->uid != o->uid) {
                        if (o && run != o->n_timers)
                                return -EUCLEAN;
                        o = owner_find(r, t->uid);
                        if (!o)
                                return -EUCLEAN;
                        run = 0;
                }
                run++;
        }
        return o && run != o->n_timers ? -EUCLEAN : 0;
}

/* What the walk over the timers counted, to compare with what the registry keeps. */
struct timer_counts {
        uint64_t n_state[TIMERD_STATE_MAX];
        uint64_t n_pending;
        size_t n_declared[TIMERD_CLOCK_MAX][TIMERQ_KIND_MAX];
        size_t n_queued[TIMERD_CLOCK_MAX];
        size_t n_before;
        size_t n_changed;
        size_t n_retained;
        size_t n_retained_unchanged;
        size_t n_gone;
};

/* Every live timer is consistent; count them by state, queue and change. */
static int timers_check(const struct registry *r, struct timer_counts *ret)
{
        const struct timer *t;
        size_t i = 0;

        *ret = (struct timer_counts){};
        while ((t = hashmap_next(&r->timers, &i))) {
                /* A gone one met on the way (due, pending) is set aside for the reap, out of its
                 * queue or its waiters' list: no longer a timer in any state, only a name. */
                if (!timer_gone(r, t) && !timer_consistent(r, t))
                        return -EUCLEAN;
                if (timer_gone(r, t))
                        ret->n_gone++;
                else {
                        ret->n_state[timer_state(t)]++;
                        ret->n_pending += timer_pending(t);
                }
                ret->n_declared[t->clock][timerq_kind_of(timer_accuracy(t))]++;
                /* Emptying the queues at its session's close left its queue fields stale. */
                if (!timer_gone(r, t) || !session_find(r, t->session)->dequeued)
                        ret->n_queued[t->clock] += timer_queued(t);
                ret->n_before += t->has_before;
                ret->n_changed += t->changed;
                ret->n_retained += timer_retained(t);
                ret->n_retained_unchanged += timer_retained(t) && !t->changed;
        }
        for (enum timerd_state st = 0; st < TIMERD_STATE_MAX; st++)
                if (ret->n_state[st] != r->n_state[st])
                        return -EUCLEAN;
        return ret->n_pending == r->n_pending && ret->n_gone == r->n_gone ? 0 : -EUCLEAN;
}

/* Each changed timer once, every `before` of one, and room for every retained timer's change. */
static int changes_check(const struct registry *r, const struct timer_counts *counts)
{
        size_t n_before = counts->n_before, n_changed = counts->n_changed;

        /* Removed ones are in no index and keep their `before` until the commit. */
        for (size_t k = 0; k < r->n_changes; k++) {
                const struct timer *c = r->changes[k];

                if (!c->changed)
                        return -EUCLEAN;
                if (!c->removed) {
                        n_changed--;
                        continue;
                }
                if (timer_lookup(r, c->uid, c->name) == c)
                        return -EUCLEAN;
                n_before += c->has_before;
        }
        for (const struct list_node *p = r->befores.next; p != &r->befores; p = p->next) {
                const struct before *b = list_entry(p, struct before, node);

                if (p->next->prev != p || !b->timer->has_before)
                        return -EUCLEAN;
                n_before--;
        }
        if (n_before != 0 || n_changed != 0 || counts->n_retained != r->n_retained ||
            r->changes_capacity < r->n_changes + counts->n_retained_unchanged)
                return -EUCLEAN;
        return 0;
}

/* Each clock's queue holds its timers, has room for those declared on it, and is armed in sync. */
static int clocks_check(const struct registry *r, const struct timer_counts *counts)
{
        for (enum timerd_clock c = 0; c < TIMERD_CLOCK_MAX; c++) {
                const struct timerq *q = &r->queues[c];
                const struct clock_arm *a = &r->arms[c];
                uint64_t when;

                if (timerq_check(q) < 0 || timerq_size(q) != counts->n_queued[c])
                        return -EUCLEAN;
                for (enum timerq_kind k = 0; k < TIMERQ_KIND_MAX; k++)
                        if (counts->n_declared[c][k] != r->n_declared[c][k] ||
                            timerq_capacity(q, k) < counts->n_declared[c][k])
                                return -EUCLEAN;
                /* In sync: armed exactly at the queue's arm time, or not armed when empty. */
                if (timerq_arm_time(q, &when) ? !a->armed || a->deadline_usec != when : a->armed)
                        return -EUCLEAN;
                if (a->generation > r->last_handle_generation)
                        return -EUCLEAN;
        }
        return 0;
}

/* An owner's pending firings: active runs of its own, not handed over yet. */
static int owner_pending_check(const struct owner *o)
{
        size_t n = 0;

        for (const struct list_node *p = o->pending.next; p != &o->pending; p = p->next) {
                const struct timer_runs *runs = list_entry(p, struct timer_runs, waiter_node);
                const struct timer *pt = runs->timer;

                if (pt->uid != o->uid || !pt->run_active || runs->delivered_to)
                        return -EUCLEAN;
                n++;
        }
        return list_length(&o->pending) == n ? 0 : -EUCLEAN;
}

/* Each owner's counts add up to its timers, and all owners' to the registry's. */
static int owners_check(const struct registry *r, const struct timer_counts *counts)
{
        uint64_t n_state[TIMERD_STATE_MAX], n_pending = counts->n_pending;
        size_t i = 0, n_owner_timers = 0, n_charged_elsewhere = 0;
        bool last_owner_found = !r->last_owner;
        const struct owner *o;

        memcpy(n_state, counts->n_state, sizeof(n_state));
        if (inventory_check_owners(r) < 0)
                return -EUCLEAN;
        while ((o = hashmap_next(&r->owners, &i))) {
                size_t n_in_states = 0;

                /* An owner stays after its last timer: it remembers its last generation. */
                if (o->last_generation > r->last_generation || o->n_pending > o->n_timers)
                        return -EUCLEAN;
                for (enum timerd_state st = 0; st < TIMERD_STATE_MAX; st++) {
                        n_in_states += o->n_state[st];
                        n_state[st] -= o->n_state[st];
                }
                n_pending -= o->n_pending;
                if (n_in_states != o->n_timers || owner_pending_check(o) < 0)
                        return -EUCLEAN;
                n_owner_timers += o->n_timers;
                /* The tally holds what the owners charged to another account hold. */
                if (o->account != registry_account_of(r, o->uid) ||
                    (o->account != o->uid && tally_get(&r->accounts, o->account) < o->n_timers))
                        return -EUCLEAN;
                n_charged_elsewhere += o->account != o->uid ? o->n_timers : 0;
                last_owner_found = last_owner_found || o == r->last_owner;
        }
        /* owner_find() answers the last owner without the table: it must be the table's. */
        if (!last_owner_found || n_owner_timers != timers_live(r) || n_pending != 0 ||
            n_charged_elsewhere != tally_total(&r->accounts))
                return -EUCLEAN;
        for (enum timerd_state st = 0; st < TIMERD_STATE_MAX; st++)
                if (n_state[st] != 0)
                        return -EUCLEAN;
        return 0;
}

/*
 * A session's transient timers: its own, of its one owner unless mixed, and counted by state in
 * it; a closing one's are all gone (and it is neither mixed nor in its counts any more).
 */
static int session_transient_check(const struct session *s, size_t *ret_n)
{
        uint64_t n_state[TIMERD_STATE_MAX] = {0}, n_pending = 0;

        *ret_n = 0;
        for (const struct list_node *p = s->transient.next; p != &s->transient; p = p->next) {
                const struct timer *tt = list_entry(p, struct timer, transient_node);

                if (tt->session != s->id || tt->lifetime != TIMERD_LIFETIME_TRANSIENT ||
                    (!s->mixed && tt->uid != s->uid))
                        return -EUCLEAN;
                n_state[timer_state(tt)]++;
                n_pending += timer_pending(tt);
                (*ret_n)++;
        }
        if (s->closing)
                return s->mixed || !list_linked(&s->closing_node) ? -EUCLEAN : 0;
        if (s->detached || s->dequeued)
                return -EUCLEAN;
        if (list_linked(&s->closing_node) || n_pending != s->n_pending)
                return -EUCLEAN;
        return memcmp(n_state, s->n_state, sizeof(n_state)) == 0 ? 0 : -EUCLEAN;
}

/* Each session lists exactly its transient timers and the runs handed to it; the closing ones
 * are those in the closing list, holding the gone timers; a closing one holds no other run. */
static int sessions_check(const struct registry *r)
{
        size_t i = 0, n_transient = 0, n_delivered = 0, n_gone = 0, n_closing = 0;
        bool last_session_found = !r->last_session;
        const struct session *s;
        const struct timer *t;

        while ((s = hashmap_next(&r->sessions, &i))) {
                size_t n;

                last_session_found = last_session_found || s == r->last_session;
                if (session_transient_check(s, &n) < 0)
                        return -EUCLEAN;
                n_transient += n;
                n_gone += s->closing ? n : 0;
                n_closing += s->closing;
                for (const struct list_node *p = s->delivered.next; p != &s->delivered;
                     p = p->next) {
                        const struct timer_runs *runs =
                            list_entry(p, struct timer_runs, waiter_node);

                        if (runs->delivered_to != s ||
                            (s->closing && runs->timer->session != s->id))
                                return -EUCLEAN;
                        n_delivered++;
                }
        }
        /* session_find() answers the last session without the table: it must be the table's. */
        if (!last_session_found || n_gone != r->n_gone || n_closing != list_length(&r->closing))
                return -EUCLEAN;
        i = 0;
        while ((t = hashmap_next(&r->timers, &i))) {
                n_transient -= list_linked(&t->transient_node);
                n_delivered -= !!timer_delivered_to(t);
        }
        return n_transient == 0 && n_delivered == 0 ? 0 : -EUCLEAN;
}

int registry_check(const struct registry *r)
{
        struct timer_counts counts;

        if (hashmap_check(&r->timers) < 0 || hashmap_check(&r->owners) < 0 ||
            hashmap_check(&r->sessions) < 0)
                return -EUCLEAN;
        if (r->n_effects > r->effects_capacity || r->effects_capacity < TIMERD_CLOCK_MAX)
                return -EUCLEAN;
        if (r->n_removals > r->removals_capacity || r->removals_capacity < REMOVALS_MIN)
                return -EUCLEAN;
        if (timers_check(r, &counts) < 0 || changes_check(r, &counts) < 0 ||
            clocks_check(r, &counts) < 0 || owners_check(r, &counts) < 0 || sessions_check(r) < 0)
                return -EUCLEAN;
        if (r->config.max_timers > 0 && r->timers.n_entries > r->config.max_timers)
                return -EUCLEAN;
        return 0;
}
