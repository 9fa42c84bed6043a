/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The parked queue's invariant checker: every index, line, heap, phase and count agrees. */

#include <assert.h>
#include <errno.h>

#include "base/clockid.h"
#include "service/core/parked-internal.h"

static bool line_valid(const struct line *l)
{
        size_t n = 0;
        const struct list_node *prev = &l->head;
        for (const struct list_node *node = l->head.next; node != &l->head; node = node->next) {
                /* the back link first: a broken one must not be followed */
                if (!node || node->prev != prev || ++n > l->n)
                        return false;
                prev = node;
        }
        return n == l->n && l->head.prev == prev;
}

/* Every member of a table is found under its own key. */
static bool tables_valid(const struct parked *q)
{
        const struct entry *e;
        const struct owner *o;
        const struct session *s;

        if (hashmap_check(&q->entries) < 0 || hashmap_check(&q->owners) < 0 ||
            hashmap_check(&q->sessions) < 0)
                return false;
        for (size_t i = 0; (e = hashmap_next(&q->entries, &i));)
                if (parked_entry_get(q, e->nonce) != e)
                        return false;
        for (size_t i = 0; (o = hashmap_next(&q->owners, &i));)
                if (parked_owner_get(q, o->uid) != o)
                        return false;
        for (size_t i = 0; (s = hashmap_next(&q->sessions, &i));)
                if (parked_session_get(q, s->id) != s)
                        return false;
        return true;
}

/* e is at its place on h, or on no heap of that role. */
static bool heap_place_valid(const struct heap *h, enum heap_role role, const struct entry *e,
                             bool on)
{
        return on ? heap_contains(h, e) : e->heap_index[role] == HEAP_NOT_QUEUED;
}

static bool heap_valid(const struct heap *h, enum heap_role role)
{
        return h->position_offset == offsetof(struct entry, heap_index) + role * sizeof(uint32_t) &&
               heap_check(h) == 0;
}

static bool entry_indexes_valid(const struct parked *q, const struct entry *e)
{
        const struct owner *o = parked_owner_get(q, e->owner);
        if (!o || !heap_place_valid(&q->heaps[e->clock], HEAP_DEADLINE, e,
                                    e->phase == PHASE_WAITING && e->has_deadline))
                return false;
        bool sleeping = e->kind == PARKED_KIND_SLEEP && e->phase == PHASE_WAITING;
        const struct owner_session *os = e->sleeps;
        if ((os != NULL) != sleeping)
                return false;
        if (!sleeping)
                return e->heap_index[HEAP_SLEEPS] == HEAP_NOT_QUEUED;
        return os->owner == e->owner && os->session == e->session &&
               heap_place_valid(&os->sleeps, HEAP_SLEEPS, e, true);
}

static bool entry_valid(const struct parked *q, const struct entry *e)
{
        if (e->nonce < q->config.first_nonce || e->nonce > q->last_nonce ||
            e->cycle < q->config.first_cycle || e->session == 0 || !clock_valid(e->clock))
                return false;
        if (!entry_indexes_valid(q, e))
                return false;
        for (size_t i = 0; i < e->n_names; i++)
                if (!parked_name_valid(e->names[i]))
                        return false;
        switch (e->kind) {
        case PARKED_KIND_WAIT:
                return e->phase == PHASE_WAITING && e->cycle == q->config.first_cycle &&
                       e->lease == 0 && e->ticket == 0;
        case PARKED_KIND_SLEEP:
                if (e->n_names > 0 || e->stream)
                        return false;
                switch (e->phase) {
                case PHASE_WAITING:
                        return e->lease == 0 && e->ticket == 0;
                case PHASE_OBSERVING:
                        return e->lease > e->nonce && e->lease <= q->last_nonce && e->ticket == 0 &&
                               e->cycle > q->config.first_cycle;
                case PHASE_AWAITING_RESUME:
                        return e->ticket > e->nonce && e->ticket <= q->last_nonce &&
                               e->lease == 0 && e->cycle < UINT64_MAX;
                default:
                        return false;
                }
        default:
                return false;
        }
}

static bool heaps_valid(const struct parked *q)
{
        size_t timed[TIMERD_CLOCK_MAX] = {};
        for (const struct entry *e = parked_line_first(&q->all, LINE_ALL); e;
             e = parked_line_next(&q->all, e, LINE_ALL))
                if (e->has_deadline)
                        timed[e->clock]++;
        for (size_t c = 0; c < TIMERD_CLOCK_MAX; c++) {
                const struct heap *h = &q->heaps[c];
                if (timed[c] != q->timed[c] || h->capacity < timed[c] || heap_size(h) > timed[c] ||
                    !heap_valid(h, HEAP_DEADLINE))
                        return false;
                for (size_t i = 0; i < heap_size(h); i++)
                        if ((size_t)((const struct entry *)h->slots[i].entry)->clock != c)
                                return false;
        }
        return true;
}

static bool owner_valid(const struct parked *q, const struct owner *o, uint64_t *ret_sleepers)
{
        if (parked_owner_unused(o) || !line_valid(&o->waits) || o->waits.n != o->waiters)
                return false;
        for (const struct entry *e = parked_line_first(&o->waits, LINE_OWNER); e;
             e = parked_line_next(&o->waits, e, LINE_OWNER))
                if (e->owner != o->uid || e->kind != PARKED_KIND_WAIT ||
                    parked_entry_get(q, e->nonce) != e)
                        return false;
        if (!line_valid(&o->sleeps))
                return false;
        for (const struct entry *e = parked_line_first(&o->sleeps, LINE_OWNER); e;
             e = parked_line_next(&o->sleeps, e, LINE_OWNER))
                if (e->owner != o->uid || e->kind != PARKED_KIND_SLEEP ||
                    e->phase != PHASE_WAITING || !e->sleeps)
                        return false;
        uint64_t sleepers = 0;
        const struct entry *observing = NULL;
        size_t waiting = 0;
        for (const struct entry *e = parked_line_first(&q->all, LINE_ALL); e;
             e = parked_line_next(&q->all, e, LINE_ALL)) {
                if (e->owner != o->uid || e->kind != PARKED_KIND_SLEEP)
                        continue;
                sleepers++;
                waiting += e->sleeps != NULL;
                if (e->phase == PHASE_OBSERVING) {
                        if (observing)
                                return false;
                        observing = e;
                }
        }
        if (sleepers != o->sleepers || observing != o->observing || waiting != o->sleeps.n)
                return false;
        if ((o->failures > 0) != (o->failure != _PARKED_FAILURE_INVALID) ||
            (o->failures > 0 && parked_failure_to_string(o->failure) == NULL))
                return false;
        *ret_sleepers = sleepers;
        return true;
}

static bool owners_valid(const struct parked *q, struct parked_stats *counted)
{
        size_t entries = 0;
        uint64_t charged_elsewhere = 0;
        const struct owner *o;
        for (size_t i = 0; (o = hashmap_next(&q->owners, &i));) {
                uint64_t sleepers;
                if (!owner_valid(q, o, &sleepers))
                        return false;
                /* The tally holds what the owners charged to another account hold. */
                if (o->account != (q->subuids ? subuids_account(q->subuids, o->uid) : o->uid))
                        return false;
                if (o->account != o->uid)
                        charged_elsewhere += o->waiters + sleepers;
                entries += o->waiters + sleepers;
                counted->waiters += o->waiters;
                counted->sleepers += sleepers;
                counted->observing += o->observing != NULL;
                counted->latched_owners += o->failures > 0;
        }
        return entries == q->entries.n_entries && charged_elsewhere == tally_total(&q->accounts);
}

static bool owner_session_valid(const struct parked *q, const struct session *s,
                                const struct owner_session *os)
{
        if (os->session != s->id || !parked_owner_get(q, os->owner) ||
            parked_session_find_owner(s, os->owner) != os || heap_size(&os->sleeps) == 0 ||
            !heap_valid(&os->sleeps, HEAP_SLEEPS))
                return false;
        for (size_t i = 0; i < heap_size(&os->sleeps); i++)
                if (((const struct entry *)os->sleeps.slots[i].entry)->sleeps != os)
                        return false;
        return true;
}

static bool sessions_valid(const struct parked *q)
{
        size_t entries = 0, sleeping = 0;
        const struct session *s;
        for (size_t i = 0; (s = hashmap_next(&q->sessions, &i));) {
                if (parked_session_unused(s) || !line_valid(&s->line) ||
                    s->n_owners > s->n_owners_allocated)
                        return false;
                for (const struct entry *e = parked_line_first(&s->line, LINE_SESSION); e;
                     e = parked_line_next(&s->line, e, LINE_SESSION))
                        if (e->session != s->id || parked_entry_get(q, e->nonce) != e)
                                return false;
                for (size_t j = 0; j < s->n_owners; j++) {
                        if (!owner_session_valid(q, s, s->owners[j]))
                                return false;
                        sleeping += heap_size(&s->owners[j]->sleeps);
                }
                entries += s->line.n;
        }
        if (entries != q->entries.n_entries)
                return false;
        size_t waiting = 0;
        for (const struct entry *e = parked_line_first(&q->all, LINE_ALL); e;
             e = parked_line_next(&q->all, e, LINE_ALL))
                waiting += e->sleeps != NULL;
        if (waiting != sleeping)
                return false;
        const struct owner *o;
        for (size_t i = 0; (o = hashmap_next(&q->owners, &i));) {
                size_t owner_sessions = 0;
                for (size_t j = 0; (s = hashmap_next(&q->sessions, &j));)
                        owner_sessions += parked_session_find_owner(s, o->uid) != NULL;
                if (owner_sessions != o->n_owner_sessions)
                        return false;
        }
        return true;
}

int parked_check(const struct parked *q)
{
        assert(q);
        if (!tables_valid(q) || !line_valid(&q->all) || q->all.n != q->entries.n_entries)
                return -EUCLEAN;
        if (q->entries.n_entries > 0 && q->n_effects_allocated < q->entries.n_entries + 2)
                return -EUCLEAN;
        if (q->shutting_down && q->entries.n_entries > 0)
                return -EUCLEAN;

        struct parked_stats counted = {};
        for (const struct entry *e = parked_line_first(&q->all, LINE_ALL); e;
             e = parked_line_next(&q->all, e, LINE_ALL)) {
                if (parked_entry_get(q, e->nonce) != e || !entry_valid(q, e))
                        return -EUCLEAN;
                counted.awaiting_resume += e->phase == PHASE_AWAITING_RESUME;
        }
        if (!heaps_valid(q) || !owners_valid(q, &counted) || !sessions_valid(q))
                return -EUCLEAN;

        if (counted.waiters != q->stats.waiters || counted.sleepers != q->stats.sleepers ||
            counted.observing != q->stats.observing ||
            counted.awaiting_resume != q->stats.awaiting_resume ||
            counted.latched_owners != q->stats.latched_owners ||
            q->stats.protocol_failures < q->stats.latched_owners)
                return -EUCLEAN;
        return 0;
}
