/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The parked queue's entry points; its records are parked-records.c's, its checker parked-check.c.
 */

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/clockid.h"
#include "service/core/parked-internal.h"

static const char *const failure_names[_PARKED_FAILURE_MAX] = {
    [PARKED_FAILURE_IDENTITY] = "identity",
    [PARKED_FAILURE_PHASE] = "phase",
    [PARKED_FAILURE_UNSUPPORTED] = "unsupported",
    [PARKED_FAILURE_OVERFLOW] = "overflow",
    [PARKED_FAILURE_UNEXPECTED_CONTROL] = "unexpected_control",
};

static const char *const limit_names[_PARKED_LIMIT_MAX] = {
    [PARKED_LIMIT_PER_SESSION] = "parked_per_session",
    [PARKED_LIMIT_PER_OWNER] = "parked_per_owner",
    [PARKED_LIMIT_NAMES] = "wait_names",
};

const char *parked_failure_to_string(enum parked_failure f)
{
        if (f < 0 || f >= _PARKED_FAILURE_MAX)
                return NULL;
        return failure_names[f];
}

const char *parked_limit_to_string(enum parked_limit l)
{
        if (l < 0 || l >= _PARKED_LIMIT_MAX)
                return NULL;
        return limit_names[l];
}

int parked_new(const struct parked_config *config, struct parked **ret)
{
        assert(config && ret);
        if (config->first_nonce == 0)
                return -EINVAL;

        struct parked *q = calloc(1, sizeof(*q));
        if (!q)
                return -ENOMEM;
        q->config = *config;
        q->last_nonce = config->first_nonce - 1;
        parked_tables_init(q);
        *ret = q;
        return 0;
}

void parked_free(struct parked *q)
{
        if (!q)
                return;
        for (struct entry *e = parked_line_first(&q->all, LINE_ALL), *next; e; e = next) {
                next = parked_line_next(&q->all, e, LINE_ALL);
                parked_entry_free(e);
        }
        struct owner *o;
        for (size_t i = 0; (o = hashmap_next(&q->owners, &i));)
                free(o);
        struct session *s;
        for (size_t i = 0; (s = hashmap_next(&q->sessions, &i));) {
                for (size_t j = 0; j < s->n_owners; j++)
                        parked_owner_session_free(s->owners[j]);
                free(s->owners);
                free(s);
        }
        hashmap_done(&q->entries);
        hashmap_done(&q->owners);
        hashmap_done(&q->sessions);
        tally_done(&q->accounts);
        for (size_t c = 0; c < TIMERD_CLOCK_MAX; c++)
                heap_done(&q->heaps[c]);
        free(q->effects);
        free(q);
}

struct parked_transition parked_wait(struct parked *q, const struct parked_wait_args *a,
                                     struct parked_continuation *ret)
{
        assert(q && a && ret);
        q->n_effects = 0;

        if (a->caller.session == 0)
                return parked_transition_of(q, -EINVAL);
        if (a->has_timeout && !clock_valid(a->clock))
                return parked_transition_of(q, -TIMERD_E_INVALID_PARAMETER);
        if (q->config.max_names > 0 && a->n_names > q->config.max_names)
                return parked_limit_exceeded(q, PARKED_LIMIT_NAMES);
        if (a->n_names > 0 && !a->names)
                return parked_transition_of(q, -TIMERD_E_INVALID_PARAMETER);
        for (size_t i = 0; i < a->n_names; i++)
                if (!parked_name_valid(a->names[i]))
                        return parked_transition_of(q, -TIMERD_E_INVALID_NAME);

        struct entry proto = {
            .kind = PARKED_KIND_WAIT,
            .cookie = a->cookie,
            .deadline_usec = a->has_timeout ? a->timeout_usec : 0,
            .stream = a->stream,
            .n_names = a->n_names,
        };
        int r = parked_names_copy(a->names, a->n_names, &proto.names);
        if (r < 0)
                return parked_transition_of(q, r);

        struct entry *e;
        struct parked_transition t =
            parked_park(q, &a->caller, a->has_timeout ? a->clock : 0, a->has_timeout, &proto, &e);
        if (t.failure < 0) {
                parked_names_free(proto.names, proto.n_names);
                return t;
        }
        *ret = parked_continuation_of(q, e);
        return t;
}

struct parked_transition parked_sleep(struct parked *q, const struct td_now *now,
                                      const struct parked_sleep_args *a,
                                      struct parked_continuation *ret)
{
        assert(q && now && a && ret);
        q->n_effects = 0;

        if (a->caller.session == 0)
                return parked_transition_of(q, -EINVAL);
        if (!clock_valid(a->clock))
                return parked_transition_of(q, -TIMERD_E_INVALID_PARAMETER);

        struct entry proto = {
            .kind = PARKED_KIND_SLEEP,
            .cookie = a->cookie,
            .deadline_usec = a->has_deadline ? a->deadline_usec : 0,
        };
        struct entry *e;
        struct parked_transition t =
            parked_park(q, &a->caller, a->clock, a->has_deadline, &proto, &e);
        if (t.failure < 0)
                return t;
        *ret = parked_continuation_of(q, e);
        parked_announce_observable(q, parked_owner_get(q, a->caller.uid));
        return parked_transition_of(q, 0);
}

static bool wait_matches(const struct entry *e, const char *name)
{
        if (e->n_names == 0)
                return true;
        for (size_t i = 0; i < e->n_names; i++)
                if (strcmp(e->names[i], name) == 0)
                        return true;
        return false;
}

struct parked_transition parked_offer_firing(struct parked *q, uint32_t owner, const char *name,
                                             bool *ret_taken)
{
        assert(q && ret_taken);
        q->n_effects = 0;
        *ret_taken = false;

        if (!parked_name_valid(name))
                return parked_transition_of(q, -TIMERD_E_INVALID_NAME);

        struct owner *o = parked_owner_get(q, owner);
        struct entry *e = o ? parked_line_first(&o->waits, LINE_OWNER) : NULL;
        while (e && !wait_matches(e, name))
                e = parked_line_next(&o->waits, e, LINE_OWNER);
        if (!e)
                return parked_transition_of(q, 0);

        struct parked_effect *f =
            parked_effect_push(q, PARKED_EFFECT_REPLY, e, e->cookie, e->session);
        f->reply.continues = e->stream;
        memcpy(f->reply.name, name, strlen(name) + 1);
        *ret_taken = true;

        if (e->stream) {
                parked_line_remove(&o->waits, e, LINE_OWNER);
                parked_line_append(&o->waits, e, LINE_OWNER);
        } else
                parked_retire_and_release(q, e);
        return parked_transition_of(q, 0);
}

struct parked_transition parked_offer_alarm(struct parked *q, const struct td_now *now,
                                            uint32_t owner, uint64_t session, const char *name,
                                            uint64_t alarms, bool *ret_taken)
{
        assert(q && now && ret_taken);
        q->n_effects = 0;
        *ret_taken = false;

        if (session == 0 || alarms == 0)
                return parked_transition_of(q, -EINVAL);
        if (!parked_name_valid(name))
                return parked_transition_of(q, -TIMERD_E_INVALID_NAME);
        if (q->shutting_down)
                return parked_transition_of(q, -TIMERD_E_SHUTTING_DOWN);
        struct owner *o = parked_owner_get(q, owner);
        if (!o || o->observing || o->sleeps.n == 0)
                return parked_transition_of(q, 0);
        struct session *s = parked_session_get(q, session);
        struct owner_session *os = s ? parked_session_find_owner(s, owner) : NULL;
        parked_begin_observation(q, now, o,
                                 os ? heap_top(&os->sleeps)->entry
                                    : parked_line_first(&o->sleeps, LINE_OWNER),
                                 name, alarms);
        /* A Sleep that cannot be observed ended with FAILED: the alarm stays with the registry. */
        *ret_taken = o->observing != NULL;
        return parked_transition_of(q, 0);
}

struct parked_transition parked_end_waits(struct parked *q, uint32_t owner,
                                          bool (*can_fire)(const char *const *names, size_t n_names,
                                                           void *userdata),
                                          void *userdata)
{
        assert(q && can_fire);
        q->n_effects = 0;

        struct owner *o = parked_owner_get(q, owner);
        struct entry *next;
        for (struct entry *e = o ? parked_line_first(&o->waits, LINE_OWNER) : NULL; e; e = next) {
                /* While another Wait follows, the owner keeps its record. */
                next = parked_line_next(&o->waits, e, LINE_OWNER);
                if (e->n_names == 0 ||
                    can_fire((const char *const *)e->names, e->n_names, userdata))
                        continue;
                parked_effect_push(q, PARKED_EFFECT_NOTHING_TO_WAIT_FOR, e, e->cookie, e->session);
                parked_retire_and_release(q, e);
        }
        return parked_transition_of(q, 0);
}

struct parked_transition parked_finish(struct parked *q, const struct td_now *now,
                                       const struct td_caller *caller,
                                       const struct parked_continuation *c, uint64_t lease,
                                       enum parked_action action, uint64_t cookie,
                                       struct parked_ticket *ret_ticket)
{
        assert(q && now && caller && c && ret_ticket);
        q->n_effects = 0;
        *ret_ticket = (struct parked_ticket){};

        if (caller->session == 0)
                return parked_transition_of(q, -EINVAL);
        if (action < 0 || action >= _PARKED_ACTION_MAX)
                return parked_transition_of(q, -TIMERD_E_INVALID_PARAMETER);

        struct entry *e = NULL;
        enum parked_failure kind = parked_control_lookup(q, caller->uid, c, &e);
        if (kind != _PARKED_FAILURE_INVALID)
                return parked_control_failure(q, caller->uid, kind);
        if (e->phase != PHASE_OBSERVING)
                return parked_control_failure(q, caller->uid, PARKED_FAILURE_PHASE);
        if (e->lease != lease)
                return parked_control_failure(q, caller->uid, PARKED_FAILURE_IDENTITY);
        /* Resume will need the next cycle: reserve it now so the ticket can always be used. */
        if (action == PARKED_ACTION_RESUME &&
            (q->last_nonce == UINT64_MAX || e->cycle == UINT64_MAX))
                return parked_control_failure(q, caller->uid, PARKED_FAILURE_OVERFLOW);

        struct owner *o = parked_owner_get(q, caller->uid);
        if (action == PARKED_ACTION_RESUME) {
                e->ticket = ++q->last_nonce;
                e->lease = 0;
                e->phase = PHASE_AWAITING_RESUME;
                o->observing = NULL;
                q->stats.observing--;
                q->stats.awaiting_resume++;
                *ret_ticket = (struct parked_ticket){
                    .continuation = parked_continuation_of(q, e),
                    .nonce = e->ticket,
                };
        } else if (action == PARKED_ACTION_INTERRUPT) {
                struct parked_effect *f =
                    parked_effect_push(q, PARKED_EFFECT_INTERRUPTED, e, cookie, caller->session);
                parked_remaining(e, now, &f->interrupted.has_remaining,
                                 &f->interrupted.remaining_usec);
                parked_retire_and_release(q, e);
        } else {
                parked_effect_push(q, PARKED_EFFECT_RETIRED, e, cookie, caller->session);
                parked_retire_and_release(q, e);
        }

        parked_announce_observable(q, parked_owner_get(q, caller->uid));
        return parked_transition_of(q, 0);
}

struct parked_transition parked_resume(struct parked *q, const struct td_now *now,
                                       const struct td_caller *caller,
                                       const struct parked_ticket *ticket, uint64_t cookie)
{
        assert(q && now && caller && ticket);
        q->n_effects = 0;

        if (caller->session == 0)
                return parked_transition_of(q, -EINVAL);
        if (q->shutting_down)
                return parked_transition_of(q, -TIMERD_E_SHUTTING_DOWN);

        struct entry *e = NULL;
        enum parked_failure kind = parked_control_lookup(q, caller->uid, &ticket->continuation, &e);
        if (kind != _PARKED_FAILURE_INVALID)
                return parked_control_failure(q, caller->uid, kind);
        if (e->phase != PHASE_AWAITING_RESUME)
                return parked_control_failure(q, caller->uid, PARKED_FAILURE_PHASE);
        if (e->ticket != ticket->nonce)
                return parked_control_failure(q, caller->uid, PARKED_FAILURE_IDENTITY);
        assert(e->cycle < UINT64_MAX); /* reserved by Finish */

        struct owner *o = parked_owner_get(q, caller->uid);
        struct session *from = parked_session_get(q, e->session), *to = from;
        if (caller->session != e->session) {
                to = parked_session_get(q, caller->session);
                if (q->config.max_per_session > 0 && to && to->line.n >= q->config.max_per_session)
                        return parked_limit_exceeded(q, PARKED_LIMIT_PER_SESSION);
        }
        struct owner_session *os = NULL;
        int r = parked_session_acquire(q, caller->session, &to);
        if (r >= 0)
                r = parked_sleep_reserve(o, to, &os);
        if (r < 0) {
                if (os)
                        parked_owner_session_release_if_unused(q, os);
                parked_session_release_if_unused(q, to);
                return parked_transition_of(q, r);
        }
        if (to != from) {
                parked_line_remove(&from->line, e, LINE_SESSION);
                parked_line_append(&to->line, e, LINE_SESSION);
                e->session = caller->session;
                parked_session_release_if_unused(q, from);
        }

        e->cycle++;
        e->ticket = 0;
        e->cookie = cookie;
        e->phase = PHASE_WAITING;
        q->stats.awaiting_resume--;
        if (e->has_deadline)
                parked_deadline_enqueue(q, e);
        parked_sleep_enqueue(o, os, e);
        parked_announce_observable(q, o);
        return parked_transition_of(q, 0);
}

struct parked_transition parked_expire(struct parked *q, const struct td_now *now)
{
        assert(q && now);
        q->n_effects = 0;

        for (size_t c = 0; c < TIMERD_CLOCK_MAX; c++) {
                const struct heap_slot *top;
                while ((top = heap_top(&q->heaps[c])) && top->key <= now->usec[c]) {
                        struct entry *e = top->entry;
                        parked_effect_push(q,
                                           e->kind == PARKED_KIND_SLEEP ? PARKED_EFFECT_ELAPSED
                                                                        : PARKED_EFFECT_TIMED_OUT,
                                           e, e->cookie, e->session);
                        parked_retire_and_release(q, e);
                }
        }
        return parked_transition_of(q, 0);
}

int parked_next_deadline(const struct parked *q, enum timerd_clock clock, uint64_t *ret_usec)
{
        assert(q && ret_usec);
        if (!clock_valid(clock))
                return -EINVAL;
        const struct heap_slot *top = heap_top(&q->heaps[clock]);
        if (!top)
                return 0;
        *ret_usec = top->key;
        return 1;
}

struct parked_transition parked_session_closed(struct parked *q, const struct td_now *now,
                                               uint64_t session, size_t *ret_retired)
{
        assert(q && now && ret_retired);
        q->n_effects = 0;
        *ret_retired = 0;

        struct session *s = parked_session_get(q, session);
        if (!s)
                return parked_transition_of(q, 0);

        /* Observations last, so that none is announced to a Sleep about to be dropped. */
        for (int observations = 0; observations < 2; observations++) {
                struct entry *next;
                for (struct entry *e = parked_line_first(&s->line, LINE_SESSION); e; e = next) {
                        next = parked_line_next(&s->line, e, LINE_SESSION);
                        if ((e->phase == PHASE_OBSERVING) != observations)
                                continue;
                        struct owner *o = parked_owner_get(q, e->owner);
                        parked_retire(q, e);
                        (*ret_retired)++;
                        if (observations)
                                parked_announce_observable(q, o);
                        parked_owner_release_if_unused(q, o);
                }
        }
        parked_session_release_if_unused(q, s);
        return parked_transition_of(q, 0);
}

struct parked_transition parked_shutdown(struct parked *q)
{
        assert(q);
        q->n_effects = 0;
        q->shutting_down = true;

        struct entry *e;
        while ((e = parked_line_first(&q->all, LINE_ALL))) {
                if (e->phase == PHASE_WAITING)
                        parked_effect_push(q, PARKED_EFFECT_SHUTTING_DOWN, e, e->cookie,
                                           e->session);
                parked_retire_and_release(q, e);
        }
        struct session *s;
        for (size_t i = 0; (s = hashmap_next(&q->sessions, &i));) {
                size_t before = q->sessions.n_entries;
                parked_session_release_if_unused(q, s);
                /* the removal may shift another session into its slot: look at that again */
                if (q->sessions.n_entries < before)
                        i--;
        }
        return parked_transition_of(q, 0);
}

int parked_get_owner(const struct parked *q, uint32_t owner, struct parked_owner_snapshot *ret)
{
        assert(q && ret);
        const struct owner *o = parked_owner_get(q, owner);
        if (!o)
                return -TIMERD_E_NOT_FOUND;
        *ret = (struct parked_owner_snapshot){
            .owner = o->uid,
            .waiters = o->waiters,
            .sleepers = o->sleepers,
            .waiting_sleepers = o->sleeps.n,
            .observing = o->observing != NULL,
            .failure = o->failure,
            .failures = o->failures,
        };
        return 0;
}

bool parked_session_holds(const struct parked *q, uint64_t session)
{
        /* A session's record lives exactly as long as it holds something. */
        return parked_session_get(q, session) != NULL;
}

void parked_get_stats(const struct parked *q, struct parked_stats *ret)
{
        assert(q && ret);
        *ret = q->stats;
}
