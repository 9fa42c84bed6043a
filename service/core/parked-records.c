/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * The parked queue's records: entries, owners, sessions and (owner, session)s, the lines, tables
 * and heaps that find them, the effects a transition returns, and parking itself.
 */

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/arith.h"
#include "service/core/parked-internal.h"

bool parked_name_valid(const char *name)
{
        if (!name)
                return false;
        size_t len = strnlen(name, TIMERD_NAME_MAX + 1);
        return len >= 1 && len <= TIMERD_NAME_MAX;
}

void parked_line_init(struct line *l)
{
        list_init(&l->head);
        l->n = 0;
}

void parked_line_append(struct line *l, struct entry *e, enum line_kind k)
{
        list_append(&l->head, &e->links[k]);
        l->n++;
}

void parked_line_remove(struct line *l, struct entry *e, enum line_kind k)
{
        list_remove(&e->links[k]);
        l->n--;
}

/* The entry whose k-th link n is. */
static struct entry *entry_of_link(const struct list_node *n, enum line_kind k)
{
        if (!n)
                return NULL;
        return (struct entry *)(void *)((char *)(uintptr_t)(n - k) - offsetof(struct entry, links));
}

struct entry *parked_line_first(const struct line *l, enum line_kind k)
{
        return entry_of_link(list_first(&l->head), k);
}

struct entry *parked_line_next(const struct line *l, const struct entry *e, enum line_kind k)
{
        return entry_of_link(list_next(&l->head, &e->links[k]), k);
}

/* Nonces, uids and session ids are sequential: hash_mix64 spreads them. */
static uint64_t entry_hash(const void *e)
{
        return hash_mix64(((const struct entry *)e)->nonce);
}

static bool entry_matches(const void *e, const void *nonce)
{
        return ((const struct entry *)e)->nonce == *(const uint64_t *)nonce;
}

static uint64_t owner_hash(const void *o)
{
        return hash_mix64(((const struct owner *)o)->uid);
}

static bool owner_matches(const void *o, const void *uid)
{
        return ((const struct owner *)o)->uid == *(const uint32_t *)uid;
}

static uint64_t session_hash(const void *s)
{
        return hash_mix64(((const struct session *)s)->id);
}

static bool session_matches(const void *s, const void *id)
{
        return ((const struct session *)s)->id == *(const uint64_t *)id;
}

/* Deadlines tie by nonce; a heap of Sleeps is keyed by nonce, so it never ties. */
static bool entry_nonce_before(const void *a, const void *b, const void *userdata)
{
        (void)userdata;
        return ((const struct entry *)a)->nonce < ((const struct entry *)b)->nonce;
}

static void sleeps_heap_init(struct heap *h)
{
        heap_init(h, offsetof(struct entry, heap_index[HEAP_SLEEPS]), entry_nonce_before, NULL);
}

void parked_tables_init(struct parked *q)
{
        hashmap_init(&q->entries, entry_hash);
        hashmap_init(&q->owners, owner_hash);
        hashmap_init(&q->sessions, session_hash);
        tally_init(&q->accounts);
        parked_line_init(&q->all);
        for (size_t c = 0; c < TIMERD_CLOCK_MAX; c++)
                heap_init(&q->heaps[c], offsetof(struct entry, heap_index[HEAP_DEADLINE]),
                          entry_nonce_before, NULL);
}

struct entry *parked_entry_get(const struct parked *q, uint64_t nonce)
{
        return hashmap_find(&q->entries, hash_mix64(nonce), entry_matches, &nonce);
}

struct owner *parked_owner_get(const struct parked *q, uint32_t uid)
{
        return hashmap_find(&q->owners, hash_mix64(uid), owner_matches, &uid);
}

struct session *parked_session_get(const struct parked *q, uint64_t id)
{
        return hashmap_find(&q->sessions, hash_mix64(id), session_matches, &id);
}

void parked_entries_put(struct parked *q, struct entry *e)
{
        hashmap_insert(&q->entries, entry_hash(e), e);
}

void parked_entries_remove(struct parked *q, struct entry *e)
{
        hashmap_remove(&q->entries, entry_hash(e), e);
}

static int effects_reserve(struct parked *q, size_t n)
{
        if (n <= q->n_effects_allocated)
                return 0;
        /* callers grow by one at a time */
        size_t n_allocated = q->n_effects_allocated ? q->n_effects_allocated * 2 : 8;
        assert(n <= n_allocated);
        struct parked_effect *effects = reallocarray(q->effects, n_allocated, sizeof(*effects));
        if (!effects)
                return -ENOMEM;
        q->effects = effects;
        q->n_effects_allocated = n_allocated;
        return 0;
}

struct parked_effect *parked_effect_push(struct parked *q, enum parked_effect_kind kind,
                                         const struct entry *e, uint64_t cookie, uint64_t session)
{
        assert(q->n_effects < q->n_effects_allocated);
        struct parked_effect *f = &q->effects[q->n_effects++];
        *f = (struct parked_effect){
            .kind = kind,
            .cookie = cookie,
            .session = session,
            .owner = e->owner,
            .continuation = {.epoch = q->config.epoch, .nonce = e->nonce, .cycle = e->cycle},
        };
        return f;
}

struct parked_transition parked_transition_of(const struct parked *q, int failure)
{
        return (struct parked_transition){
            .failure = failure,
            .protocol = _PARKED_FAILURE_INVALID,
            .limit = _PARKED_LIMIT_INVALID,
            .n_effects = q->n_effects,
            .effects = q->effects,
        };
}

struct parked_transition parked_limit_exceeded(const struct parked *q, enum parked_limit limit)
{
        struct parked_transition t = parked_transition_of(q, -TIMERD_E_LIMIT_EXCEEDED);
        t.limit = limit;
        return t;
}

static uint32_t account_of(const struct parked *q, uint32_t uid)
{
        return q->subuids ? subuids_account(q->subuids, uid) : uid;
}

static int owner_acquire(struct parked *q, uint32_t uid, struct owner **ret)
{
        struct owner *o = parked_owner_get(q, uid);
        if (!o) {
                if (hashmap_reserve(&q->owners, q->owners.n_entries + 1) < 0)
                        return -ENOMEM;
                o = calloc(1, sizeof(*o));
                if (!o)
                        return -ENOMEM;
                o->uid = uid;
                o->account = account_of(q, uid);
                o->failure = _PARKED_FAILURE_INVALID;
                parked_line_init(&o->waits);
                parked_line_init(&o->sleeps);
                hashmap_insert(&q->owners, owner_hash(o), o);
        }
        *ret = o;
        return 0;
}

int parked_session_acquire(struct parked *q, uint64_t id, struct session **ret)
{
        struct session *s = parked_session_get(q, id);
        if (!s) {
                if (hashmap_reserve(&q->sessions, q->sessions.n_entries + 1) < 0)
                        return -ENOMEM;
                s = calloc(1, sizeof(*s));
                if (!s)
                        return -ENOMEM;
                s->id = id;
                parked_line_init(&s->line);
                hashmap_insert(&q->sessions, session_hash(s), s);
        }
        *ret = s;
        return 0;
}

uint64_t parked_owner_parked(const struct owner *o)
{
        return o->waiters + o->sleepers;
}

uint64_t parked_owner_charged(const struct parked *q, const struct owner *o, uint32_t uid)
{
        uint32_t account = o ? o->account : account_of(q, uid);
        const struct owner *a;

        if (account == uid)
                return o ? parked_owner_parked(o) : 0;
        a = parked_owner_get(q, account);
        return (a ? parked_owner_parked(a) : 0) + tally_get(&q->accounts, account);
}

int parked_subuids_prepare(const struct parked *q, const struct subuids *t, struct tally *ret)
{
        const struct owner *o;

        tally_init(ret);
        for (size_t i = 0; (o = hashmap_next(&q->owners, &i));) {
                uint32_t account = t ? subuids_account(t, o->uid) : o->uid;
                if (account == o->uid || parked_owner_parked(o) == 0)
                        continue;
                if (tally_charge(ret, account, parked_owner_parked(o), 0) < 0) {
                        tally_done(ret);
                        return -ENOMEM;
                }
        }
        return 0;
}

void parked_subuids_commit(struct parked *q, const struct subuids *t, struct tally *prepared)
{
        struct owner *o;

        for (size_t i = 0; (o = hashmap_next(&q->owners, &i));)
                o->account = t ? subuids_account(t, o->uid) : o->uid;
        tally_done(&q->accounts);
        q->accounts = *prepared;
        q->subuids = t;
}

/* A latched failure keeps its owner's record for Status. */
bool parked_owner_unused(const struct owner *o)
{
        return parked_owner_parked(o) == 0 && o->n_owner_sessions == 0 && o->failures == 0;
}

void parked_owner_release_if_unused(struct parked *q, struct owner *o)
{
        if (!parked_owner_unused(o))
                return;
        hashmap_remove(&q->owners, owner_hash(o), o);
        free(o);
}

bool parked_session_unused(const struct session *s)
{
        return s->line.n == 0 && s->n_owners == 0;
}

void parked_session_release_if_unused(struct parked *q, struct session *s)
{
        if (!s || !parked_session_unused(s))
                return;
        hashmap_remove(&q->sessions, session_hash(s), s);
        free(s->owners);
        free(s);
}

/* A session usually has one owner: its peer. */
struct owner_session *parked_session_find_owner(const struct session *s, uint32_t owner)
{
        for (size_t i = 0; i < s->n_owners; i++)
                if (s->owners[i]->owner == owner)
                        return s->owners[i];
        return NULL;
}

static int owner_session_acquire(struct owner *o, struct session *s, struct owner_session **ret)
{
        struct owner_session *os = parked_session_find_owner(s, o->uid);
        if (!os) {
                if (s->n_owners == s->n_owners_allocated) {
                        size_t n = s->n_owners_allocated ? s->n_owners_allocated * 2 : 1;
                        struct owner_session **owners = reallocarray(s->owners, n, sizeof(*owners));
                        if (!owners)
                                return -ENOMEM;
                        s->owners = owners;
                        s->n_owners_allocated = n;
                }
                os = calloc(1, sizeof(*os));
                if (!os)
                        return -ENOMEM;
                os->owner = o->uid;
                os->session = s->id;
                sleeps_heap_init(&os->sleeps);
                s->owners[s->n_owners++] = os;
                o->n_owner_sessions++;
        }
        *ret = os;
        return 0;
}

/* Room for one more waiting Sleep at (o, s); *ret is set for the caller to release on failure. */
int parked_sleep_reserve(struct owner *o, struct session *s, struct owner_session **ret)
{
        int r = owner_session_acquire(o, s, ret);
        if (r < 0)
                return r;
        return heap_reserve(&(*ret)->sleeps, heap_size(&(*ret)->sleeps) + 1);
}

void parked_owner_session_release_if_unused(struct parked *q, struct owner_session *os)
{
        if (heap_size(&os->sleeps) > 0)
                return;
        struct session *s = parked_session_get(q, os->session);
        struct owner *o = parked_owner_get(q, os->owner);
        assert(s && o && o->n_owner_sessions > 0);
        for (size_t i = 0; i < s->n_owners; i++)
                if (s->owners[i] == os) {
                        s->owners[i] = s->owners[--s->n_owners];
                        break;
                }
        o->n_owner_sessions--;
        parked_owner_session_free(os);
}

void parked_owner_session_free(struct owner_session *os)
{
        heap_done(&os->sleeps);
        free(os);
}

void parked_deadline_enqueue(struct parked *q, struct entry *e)
{
        heap_insert(&q->heaps[e->clock], e, e->deadline_usec);
}

/* e becomes a waiting Sleep of os, which has room for it. */
void parked_sleep_enqueue(struct owner *o, struct owner_session *os, struct entry *e)
{
        heap_insert(&os->sleeps, e, e->nonce);
        e->sleeps = os;
        parked_line_append(&o->sleeps, e, LINE_OWNER);
}

/* e stops waiting; its owner_session may go. */
static void sleep_dequeue(struct parked *q, struct owner *o, struct entry *e)
{
        struct owner_session *os = e->sleeps;
        parked_line_remove(&o->sleeps, e, LINE_OWNER);
        heap_remove(&os->sleeps, e);
        e->sleeps = NULL;
        parked_owner_session_release_if_unused(q, os);
}

static void latch_failure(struct parked *q, struct owner *o, enum parked_failure kind)
{
        q->stats.protocol_failures = saturating_add(q->stats.protocol_failures, 1);
        if (!o)
                return;
        if (o->failures == 0) {
                o->failure = kind;
                q->stats.latched_owners++;
        }
        o->failures = saturating_add(o->failures, 1);
}

/* Without memory for a record, the failure is still counted queue-wide and returned. */
struct parked_transition parked_control_failure(struct parked *q, uint32_t uid,
                                                enum parked_failure kind)
{
        struct owner *o = NULL;
        (void)owner_acquire(q, uid, &o);
        latch_failure(q, o, kind);
        struct parked_transition t = parked_transition_of(q, -TIMERD_E_PROTOCOL_FAILURE);
        t.protocol = kind;
        return t;
}

void parked_names_free(char **names, size_t n)
{
        for (size_t i = 0; i < n; i++)
                free(names[i]);
        free(names);
}

void parked_entry_free(struct entry *e)
{
        parked_names_free(e->names, e->n_names);
        free(e);
}

/* Unlinks and frees e; the owner and session records stay for the caller to release. */
void parked_retire(struct parked *q, struct entry *e)
{
        struct owner *o = parked_owner_get(q, e->owner);
        struct session *s = parked_session_get(q, e->session);
        assert(o && s);

        parked_line_remove(&q->all, e, LINE_ALL);
        if (e->kind == PARKED_KIND_WAIT)
                parked_line_remove(&o->waits, e, LINE_OWNER);
        parked_line_remove(&s->line, e, LINE_SESSION);
        if (heap_contains(&q->heaps[e->clock], e))
                heap_remove(&q->heaps[e->clock], e);
        if (e->sleeps)
                sleep_dequeue(q, o, e);
        if (e->has_deadline)
                q->timed[e->clock]--;
        parked_entries_remove(q, e);

        if (e->kind == PARKED_KIND_WAIT) {
                o->waiters--;
                q->stats.waiters--;
        } else {
                o->sleepers--;
                q->stats.sleepers--;
        }
        if (o->account != o->uid)
                tally_sub(&q->accounts, o->account, 1, 0);
        if (e->phase == PHASE_OBSERVING) {
                o->observing = NULL;
                q->stats.observing--;
        } else if (e->phase == PHASE_AWAITING_RESUME)
                q->stats.awaiting_resume--;
        parked_entry_free(e);
}

void parked_retire_and_release(struct parked *q, struct entry *e)
{
        struct owner *o = parked_owner_get(q, e->owner);
        struct session *s = parked_session_get(q, e->session);
        parked_retire(q, e);
        parked_session_release_if_unused(q, s);
        parked_owner_release_if_unused(q, o);
}

void parked_remaining(const struct entry *e, const struct td_now *now, bool *ret_has,
                      uint64_t *ret_usec)
{
        uint64_t t = now->usec[e->clock];
        *ret_has = e->has_deadline;
        *ret_usec = e->has_deadline && e->deadline_usec > t ? e->deadline_usec - t : 0;
}

/*
 * The Sleep's call is answered with the observation; its deadline stays saved for Resume. If the
 * cycle or the lease cannot be numbered the Sleep can never be observed: it ends with FAILED (the
 * owner stays, holding the latched failure).
 */
void parked_begin_observation(struct parked *q, const struct td_now *now, struct owner *o,
                              struct entry *e, const char *name, uint64_t alarms)
{
        assert(!o->observing && e->kind == PARKED_KIND_SLEEP && e->phase == PHASE_WAITING);

        if (e->cycle == UINT64_MAX || q->last_nonce == UINT64_MAX) {
                parked_effect_push(q, PARKED_EFFECT_FAILED, e, e->cookie, e->session)->failed =
                    PARKED_FAILURE_OVERFLOW;
                latch_failure(q, o, PARKED_FAILURE_OVERFLOW);
                struct session *s = parked_session_get(q, e->session);
                parked_retire(q, e);
                parked_session_release_if_unused(q, s);
                return;
        }

        e->cycle++;
        e->lease = ++q->last_nonce;
        e->phase = PHASE_OBSERVING;
        if (heap_contains(&q->heaps[e->clock], e))
                heap_remove(&q->heaps[e->clock], e);
        sleep_dequeue(q, o, e);
        o->observing = e;
        q->stats.observing++;

        struct parked_effect *f =
            parked_effect_push(q, PARKED_EFFECT_OBSERVATION, e, e->cookie, e->session);
        f->observation.lease = e->lease;
        f->observation.alarms = alarms;
        parked_remaining(e, now, &f->observation.has_remaining, &f->observation.remaining_usec);
        memcpy(f->observation.name, name, strnlen(name, TIMERD_NAME_MAX) + 1);
}

/*
 * The owner may observe again and has a waiting Sleep: tell the runtime (OBSERVABLE, addressed to
 * that Sleep's session), which offers it an alarm the registry keeps.
 */
void parked_announce_observable(struct parked *q, const struct owner *o)
{
        const struct entry *e = o ? parked_line_first(&o->sleeps, LINE_OWNER) : NULL;
        if (!e || o->observing)
                return;
        parked_effect_push(q, PARKED_EFFECT_OBSERVABLE, e, 0, e->session);
}

int parked_names_copy(const char *const *names, size_t n, char ***ret)
{
        if (n == 0) {
                *ret = NULL;
                return 0;
        }
        char **copy = calloc(n, sizeof(*copy));
        if (!copy)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                copy[i] = strdup(names[i]);
                if (!copy[i]) {
                        parked_names_free(copy, i);
                        return -ENOMEM;
                }
        }
        *ret = copy;
        return 0;
}

/* Park a copy of proto for caller within the limits: every allocation comes before any change. */
struct parked_transition parked_park(struct parked *q, const struct td_caller *caller,
                                     enum timerd_clock clock, bool has_deadline,
                                     struct entry *proto, struct entry **ret)
{
        if (q->shutting_down)
                return parked_transition_of(q, -TIMERD_E_SHUTTING_DOWN);
        if (q->last_nonce == UINT64_MAX)
                return parked_transition_of(q, -TIMERD_E_OVERFLOW);

        struct owner *o = parked_owner_get(q, caller->uid);
        struct session *s = parked_session_get(q, caller->session);
        if (q->config.max_per_session > 0 && s && s->line.n >= q->config.max_per_session)
                return parked_limit_exceeded(q, PARKED_LIMIT_PER_SESSION);
        if (q->config.max_per_owner > 0 &&
            parked_owner_charged(q, o, caller->uid) >= q->config.max_per_owner)
                return parked_limit_exceeded(q, PARKED_LIMIT_PER_OWNER);

        struct entry *e = NULL;
        struct owner_session *os = NULL;
        int r = owner_acquire(q, caller->uid, &o);
        if (r < 0)
                return parked_transition_of(q, r);
        if (o->account != o->uid)
                r = tally_reserve(&q->accounts, o->account);
        if (r >= 0)
                r = parked_session_acquire(q, caller->session, &s);
        if (r >= 0 && proto->kind == PARKED_KIND_SLEEP)
                r = parked_sleep_reserve(o, s, &os);
        if (r >= 0)
                r = hashmap_reserve(&q->entries, q->entries.n_entries + 1);
        if (r >= 0 && has_deadline)
                r = heap_reserve(&q->heaps[clock], q->timed[clock] + 1);
        if (r >= 0)
                r = effects_reserve(q, q->entries.n_entries + 3);
        if (r >= 0) {
                e = malloc(sizeof(*e));
                if (!e)
                        r = -ENOMEM;
        }
        if (r < 0) {
                if (os)
                        parked_owner_session_release_if_unused(q, os);
                parked_session_release_if_unused(q, s);
                if (o->account != o->uid)
                        tally_unreserve(&q->accounts, o->account);
                parked_owner_release_if_unused(q, o);
                return parked_transition_of(q, r);
        }

        *e = *proto;
        e->nonce = ++q->last_nonce;
        e->cycle = q->config.first_cycle;
        e->owner = caller->uid;
        e->session = caller->session;
        e->phase = PHASE_WAITING;
        e->clock = clock;
        e->has_deadline = has_deadline;
        for (size_t i = 0; i < _HEAP_ROLE_MAX; i++)
                e->heap_index[i] = HEAP_NOT_QUEUED;
        e->sleeps = NULL;
        parked_line_append(&q->all, e, LINE_ALL);
        if (e->kind == PARKED_KIND_WAIT)
                parked_line_append(&o->waits, e, LINE_OWNER);
        parked_line_append(&s->line, e, LINE_SESSION);
        parked_entries_put(q, e);
        if (has_deadline) {
                q->timed[clock]++;
                parked_deadline_enqueue(q, e);
        }
        if (e->kind == PARKED_KIND_WAIT) {
                o->waiters++;
                q->stats.waiters++;
        } else {
                parked_sleep_enqueue(o, os, e);
                o->sleepers++;
                q->stats.sleepers++;
        }
        if (o->account != o->uid)
                tally_add(&q->accounts, o->account, 1, 0);
        *ret = e;
        return parked_transition_of(q, 0);
}

struct parked_continuation parked_continuation_of(const struct parked *q, const struct entry *e)
{
        return (struct parked_continuation){
            .epoch = q->config.epoch,
            .nonce = e->nonce,
            .cycle = e->cycle,
        };
}

/* The checks Finish and Resume share; _PARKED_FAILURE_INVALID when c names a live Sleep. */
enum parked_failure parked_control_lookup(const struct parked *q, uint32_t uid,
                                          const struct parked_continuation *c, struct entry **ret)
{
        const struct owner *o = parked_owner_get(q, uid);
        if (!o || parked_owner_parked(o) == 0)
                return PARKED_FAILURE_UNEXPECTED_CONTROL;
        if (c->epoch != q->config.epoch)
                return PARKED_FAILURE_IDENTITY;
        struct entry *e = parked_entry_get(q, c->nonce);
        if (!e || e->owner != uid)
                return PARKED_FAILURE_IDENTITY;
        if (e->kind != PARKED_KIND_SLEEP)
                return PARKED_FAILURE_UNSUPPORTED;
        if (e->cycle != c->cycle)
                return PARKED_FAILURE_IDENTITY;
        *ret = e;
        return _PARKED_FAILURE_INVALID;
}
