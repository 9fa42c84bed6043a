/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "service/core/parked.h"

#define HEAP_NONE SIZE_MAX

enum phase {
        PHASE_WAITING,
        PHASE_OBSERVING,
        PHASE_AWAITING_RESUME,
        _PHASE_MAX,
        _PHASE_INVALID = -1,
};

/* Every entry is on the queue's line (park order) and its session's; a Wait, and a waiting Sleep,
 * also on its owner's (the Waits, or the waiting Sleeps, in the order they parked). */
enum line_kind {
        LINE_ALL,
        LINE_OWNER,
        LINE_SESSION,
        _LINE_MAX,
        _LINE_INVALID = -1,
};

/*
 * The heaps an entry can be on: its clock's (waiting with a deadline) and its (owner, session)'s
 * (a waiting Sleep), which finds the Sleep an alarm of that session goes to without walking.
 */
enum heap_role {
        HEAP_DEADLINE,
        HEAP_SLEEPS,
        _HEAP_ROLE_MAX,
        _HEAP_ROLE_INVALID = -1,
};

struct entry;
struct owner_session;

struct entry_link {
        struct entry *prev;
        struct entry *next;
};

struct line {
        struct entry *head;
        struct entry *tail;
        size_t n;
};

struct entry {
        uint64_t nonce;
        uint64_t cycle;
        uint32_t owner;
        uint64_t session;
        uint64_t cookie;
        enum parked_kind kind;
        enum phase phase;
        enum timerd_clock clock;
        bool has_deadline; /* the saved membership: timed (kept while observing) or queued */
        uint64_t deadline_usec;
        size_t heap_index[_HEAP_ROLE_MAX]; /* HEAP_NONE when not on that heap */
        struct owner_session *sleeps;      /* a waiting Sleep's (owner, session), else NULL */
        uint64_t lease;                    /* observing only */
        uint64_t ticket;                   /* awaiting_resume only */
        bool stream;
        char **names;
        size_t n_names;
        struct entry_link links[_LINE_MAX];
};

struct heap {
        enum heap_role role;
        struct entry **items;
        size_t n;
        size_t n_allocated;
};

struct owner {
        uint32_t uid;
        struct line waits;  /* oldest first; a stream Wait that took a firing goes to the back */
        struct line sleeps; /* waiting Sleeps of every session, oldest first */
        uint64_t waiters;
        uint64_t sleepers;
        struct entry *observing;
        size_t n_owner_sessions;
        enum parked_failure failure;
        uint64_t failures;
};

/* What an owner has in one session: its waiting Sleeps. Kept while there are any. */
struct owner_session {
        uint32_t owner;
        uint64_t session;
        struct heap sleeps; /* oldest first */
};

struct session {
        uint64_t id;
        struct line line;
        struct owner_session **owners;
        size_t n_owners;
        size_t n_owners_allocated;
};

/* Open addressing with linear probing; an empty slot has value NULL. */
struct index_slot {
        uint64_t key;
        void *value;
};

struct index {
        struct index_slot *slots;
        size_t n;
        size_t n_allocated; /* 0 or a power of two, at least twice n */
};

struct parked {
        struct parked_config config;
        uint64_t last_nonce;
        bool shutting_down;
        struct index entries;  /* nonce → entry */
        struct index owners;   /* uid → owner */
        struct index sessions; /* id → session */
        struct line all;
        struct heap heaps[TIMERD_CLOCK_MAX];
        size_t timed[TIMERD_CLOCK_MAX]; /* entries with a deadline on each clock, any phase */
        struct parked_effect *effects;
        size_t n_effects;
        size_t n_effects_allocated; /* at least entries.n + 2: emitting never allocates */
        struct parked_stats stats;
};

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

static uint64_t saturating_add(uint64_t a, uint64_t b)
{
        return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static bool clock_valid(enum timerd_clock clock)
{
        return clock >= 0 && clock < TIMERD_CLOCK_MAX;
}

/* The registry checks the alphabet; the queue only bounds what it copies. */
static bool name_valid(const char *name)
{
        if (!name)
                return false;
        size_t len = strnlen(name, TIMERD_NAME_MAX + 1);
        return len >= 1 && len <= TIMERD_NAME_MAX;
}

static void line_append(struct line *l, struct entry *e, enum line_kind k)
{
        e->links[k].prev = l->tail;
        e->links[k].next = NULL;
        if (l->tail)
                l->tail->links[k].next = e;
        else
                l->head = e;
        l->tail = e;
        l->n++;
}

static void line_remove(struct line *l, struct entry *e, enum line_kind k)
{
        if (e->links[k].prev)
                e->links[k].prev->links[k].next = e->links[k].next;
        else
                l->head = e->links[k].next;
        if (e->links[k].next)
                e->links[k].next->links[k].prev = e->links[k].prev;
        else
                l->tail = e->links[k].prev;
        e->links[k].prev = e->links[k].next = NULL;
        l->n--;
}

static size_t index_hash(uint64_t key)
{
        /* splitmix64's finalizer: nonces and session ids are sequential */
        key ^= key >> 30;
        key *= UINT64_C(0xbf58476d1ce4e5b9);
        key ^= key >> 27;
        key *= UINT64_C(0x94d049bb133111eb);
        key ^= key >> 31;
        return (size_t)key;
}

static size_t index_find_slot(const struct index *x, uint64_t key)
{
        size_t mask = x->n_allocated - 1;
        size_t i = index_hash(key) & mask;
        while (x->slots[i].value && x->slots[i].key != key)
                i = (i + 1) & mask;
        return i;
}

static void *index_get(const struct index *x, uint64_t key)
{
        if (x->n_allocated == 0)
                return NULL;
        return x->slots[index_find_slot(x, key)].value;
}

static int index_reserve(struct index *x, size_t n_more)
{
        if (x->n + n_more <= x->n_allocated / 2)
                return 0;
        size_t n_allocated = x->n_allocated ? x->n_allocated * 2 : 16;
        struct index_slot *slots = calloc(n_allocated, sizeof(*slots));
        if (!slots)
                return -ENOMEM;
        struct index grown = {.slots = slots, .n = x->n, .n_allocated = n_allocated};
        for (size_t i = 0; i < x->n_allocated; i++)
                if (x->slots[i].value)
                        grown.slots[index_find_slot(&grown, x->slots[i].key)] = x->slots[i];
        free(x->slots);
        *x = grown;
        return 0;
}

static void index_put(struct index *x, uint64_t key, void *value)
{
        assert(value && x->n < x->n_allocated / 2);
        size_t i = index_find_slot(x, key);
        assert(!x->slots[i].value);
        x->slots[i] = (struct index_slot){.key = key, .value = value};
        x->n++;
}

/* Backward-shift deletion: later members of the probe run move into the hole. */
static void index_remove(struct index *x, uint64_t key)
{
        size_t mask = x->n_allocated - 1;
        size_t hole = index_find_slot(x, key);
        assert(x->slots[hole].value);
        x->slots[hole].value = NULL;
        x->n--;
        for (size_t i = (hole + 1) & mask; x->slots[i].value; i = (i + 1) & mask) {
                size_t home = index_hash(x->slots[i].key) & mask;
                /* move unless home lies cyclically in (hole, i] */
                bool stays = hole <= i ? (hole < home && home <= i) : (hole < home || home <= i);
                if (stays)
                        continue;
                x->slots[hole] = x->slots[i];
                x->slots[i].value = NULL;
                hole = i;
        }
}

static bool entry_before(const struct entry *a, const struct entry *b)
{
        if (a->deadline_usec != b->deadline_usec)
                return a->deadline_usec < b->deadline_usec;
        return a->nonce < b->nonce;
}

/* Sleeps are observed in park order, which a Resume keeps. */
static bool heap_before(const struct heap *h, const struct entry *a, const struct entry *b)
{
        return h->role == HEAP_DEADLINE ? entry_before(a, b) : a->nonce < b->nonce;
}

static void heap_place(struct heap *h, size_t i, struct entry *e)
{
        h->items[i] = e;
        e->heap_index[h->role] = i;
}

static void heap_sift_up(struct heap *h, size_t i)
{
        struct entry *e = h->items[i];
        while (i > 0 && heap_before(h, e, h->items[(i - 1) / 2])) {
                heap_place(h, i, h->items[(i - 1) / 2]);
                i = (i - 1) / 2;
        }
        heap_place(h, i, e);
}

static void heap_sift_down(struct heap *h, size_t i)
{
        struct entry *e = h->items[i];
        for (;;) {
                size_t child = 2 * i + 1;
                if (child >= h->n)
                        break;
                if (child + 1 < h->n && heap_before(h, h->items[child + 1], h->items[child]))
                        child++;
                if (!heap_before(h, h->items[child], e))
                        break;
                heap_place(h, i, h->items[child]);
                i = child;
        }
        heap_place(h, i, e);
}

static int heap_reserve(struct heap *h, size_t n)
{
        if (n <= h->n_allocated)
                return 0;
        /* callers grow by one at a time */
        size_t n_allocated = h->n_allocated ? h->n_allocated * 2 : 8;
        assert(n <= n_allocated);
        struct entry **items = reallocarray(h->items, n_allocated, sizeof(*items));
        if (!items)
                return -ENOMEM;
        h->items = items;
        h->n_allocated = n_allocated;
        return 0;
}

static void heap_push(struct heap *h, struct entry *e)
{
        assert(h->n < h->n_allocated);
        heap_place(h, h->n++, e);
        heap_sift_up(h, e->heap_index[h->role]);
}

static void heap_remove(struct heap *h, struct entry *e)
{
        size_t i = e->heap_index[h->role];
        struct entry *last = h->items[--h->n];
        e->heap_index[h->role] = HEAP_NONE;
        if (last == e)
                return;
        heap_place(h, i, last);
        heap_sift_up(h, i);
        heap_sift_down(h, last->heap_index[h->role]);
}

static bool heap_holds(const struct heap *h, const struct entry *e)
{
        return e->heap_index[h->role] != HEAP_NONE;
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

static struct parked_effect *effect_push(struct parked *q, enum parked_effect_kind kind,
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

static struct parked_transition transition(const struct parked *q, int failure)
{
        return (struct parked_transition){
            .failure = failure,
            .protocol = _PARKED_FAILURE_INVALID,
            .limit = _PARKED_LIMIT_INVALID,
            .n_effects = q->n_effects,
            .effects = q->effects,
        };
}

static struct parked_transition limit_exceeded(const struct parked *q, enum parked_limit limit)
{
        struct parked_transition t = transition(q, -TIMERD_E_LIMIT_EXCEEDED);
        t.limit = limit;
        return t;
}

static struct owner *owner_get(const struct parked *q, uint32_t uid)
{
        return index_get(&q->owners, uid);
}

static struct session *session_get(const struct parked *q, uint64_t id)
{
        return index_get(&q->sessions, id);
}

static int owner_acquire(struct parked *q, uint32_t uid, struct owner **ret)
{
        struct owner *o = owner_get(q, uid);
        if (!o) {
                if (index_reserve(&q->owners, 1) < 0)
                        return -ENOMEM;
                o = calloc(1, sizeof(*o));
                if (!o)
                        return -ENOMEM;
                o->uid = uid;
                o->failure = _PARKED_FAILURE_INVALID;
                index_put(&q->owners, uid, o);
        }
        *ret = o;
        return 0;
}

static int session_acquire(struct parked *q, uint64_t id, struct session **ret)
{
        struct session *s = session_get(q, id);
        if (!s) {
                if (index_reserve(&q->sessions, 1) < 0)
                        return -ENOMEM;
                s = calloc(1, sizeof(*s));
                if (!s)
                        return -ENOMEM;
                s->id = id;
                index_put(&q->sessions, id, s);
        }
        *ret = s;
        return 0;
}

static uint64_t owner_parked(const struct owner *o)
{
        return o->waiters + o->sleepers;
}

/* A latched failure keeps its owner's record for Status. */
static bool owner_unused(const struct owner *o)
{
        return owner_parked(o) == 0 && o->n_owner_sessions == 0 && o->failures == 0;
}

static void owner_release_if_unused(struct parked *q, struct owner *o)
{
        if (!owner_unused(o))
                return;
        index_remove(&q->owners, o->uid);
        free(o);
}

static bool session_unused(const struct session *s)
{
        return s->line.n == 0 && s->n_owners == 0;
}

static void session_release_if_unused(struct parked *q, struct session *s)
{
        if (!s || !session_unused(s))
                return;
        index_remove(&q->sessions, s->id);
        free(s->owners);
        free(s);
}

/* A session usually has one owner: its peer. */
static struct owner_session *session_find_owner(const struct session *s, uint32_t owner)
{
        for (size_t i = 0; i < s->n_owners; i++)
                if (s->owners[i]->owner == owner)
                        return s->owners[i];
        return NULL;
}

static int owner_session_acquire(struct owner *o, struct session *s, struct owner_session **ret)
{
        struct owner_session *os = session_find_owner(s, o->uid);
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
                os->sleeps.role = HEAP_SLEEPS;
                s->owners[s->n_owners++] = os;
                o->n_owner_sessions++;
        }
        *ret = os;
        return 0;
}

/* Room for one more waiting Sleep at (o, s); *ret is set for the caller to release on failure. */
static int sleep_reserve(struct owner *o, struct session *s, struct owner_session **ret)
{
        int r = owner_session_acquire(o, s, ret);
        if (r < 0)
                return r;
        return heap_reserve(&(*ret)->sleeps, (*ret)->sleeps.n + 1);
}

static void owner_session_release_if_unused(struct parked *q, struct owner_session *os)
{
        if (os->sleeps.n > 0)
                return;
        struct session *s = session_get(q, os->session);
        struct owner *o = owner_get(q, os->owner);
        assert(s && o && o->n_owner_sessions > 0);
        for (size_t i = 0; i < s->n_owners; i++)
                if (s->owners[i] == os) {
                        s->owners[i] = s->owners[--s->n_owners];
                        break;
                }
        o->n_owner_sessions--;
        free(os->sleeps.items);
        free(os);
}

/* e becomes a waiting Sleep of os, which has room for it. */
static void sleep_enqueue(struct owner *o, struct owner_session *os, struct entry *e)
{
        heap_push(&os->sleeps, e);
        e->sleeps = os;
        line_append(&o->sleeps, e, LINE_OWNER);
}

/* e stops waiting; its owner_session may go. */
static void sleep_dequeue(struct parked *q, struct owner *o, struct entry *e)
{
        struct owner_session *os = e->sleeps;
        line_remove(&o->sleeps, e, LINE_OWNER);
        heap_remove(&os->sleeps, e);
        e->sleeps = NULL;
        owner_session_release_if_unused(q, os);
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
static struct parked_transition control_failure(struct parked *q, uint32_t uid,
                                                enum parked_failure kind)
{
        struct owner *o = NULL;
        (void)owner_acquire(q, uid, &o);
        latch_failure(q, o, kind);
        struct parked_transition t = transition(q, -TIMERD_E_PROTOCOL_FAILURE);
        t.protocol = kind;
        return t;
}

static void names_free(char **names, size_t n)
{
        for (size_t i = 0; i < n; i++)
                free(names[i]);
        free(names);
}

static void entry_free(struct entry *e)
{
        names_free(e->names, e->n_names);
        free(e);
}

/* Unlinks and frees e; the owner and session records stay for the caller to release. */
static void retire(struct parked *q, struct entry *e)
{
        struct owner *o = owner_get(q, e->owner);
        struct session *s = session_get(q, e->session);
        assert(o && s);

        line_remove(&q->all, e, LINE_ALL);
        if (e->kind == PARKED_KIND_WAIT)
                line_remove(&o->waits, e, LINE_OWNER);
        line_remove(&s->line, e, LINE_SESSION);
        if (heap_holds(&q->heaps[e->clock], e))
                heap_remove(&q->heaps[e->clock], e);
        if (e->sleeps)
                sleep_dequeue(q, o, e);
        if (e->has_deadline)
                q->timed[e->clock]--;
        index_remove(&q->entries, e->nonce);

        if (e->kind == PARKED_KIND_WAIT) {
                o->waiters--;
                q->stats.waiters--;
        } else {
                o->sleepers--;
                q->stats.sleepers--;
        }
        if (e->phase == PHASE_OBSERVING) {
                o->observing = NULL;
                q->stats.observing--;
        } else if (e->phase == PHASE_AWAITING_RESUME)
                q->stats.awaiting_resume--;
        entry_free(e);
}

static void retire_and_release(struct parked *q, struct entry *e)
{
        struct owner *o = owner_get(q, e->owner);
        struct session *s = session_get(q, e->session);
        retire(q, e);
        session_release_if_unused(q, s);
        owner_release_if_unused(q, o);
}

static void remaining(const struct entry *e, const struct td_now *now, bool *ret_has,
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
static void begin_observation(struct parked *q, const struct td_now *now, struct owner *o,
                              struct entry *e, const char *name, uint64_t alarms)
{
        assert(!o->observing && e->kind == PARKED_KIND_SLEEP && e->phase == PHASE_WAITING);

        if (e->cycle == UINT64_MAX || q->last_nonce == UINT64_MAX) {
                effect_push(q, PARKED_EFFECT_FAILED, e, e->cookie, e->session)->failed =
                    PARKED_FAILURE_OVERFLOW;
                latch_failure(q, o, PARKED_FAILURE_OVERFLOW);
                struct session *s = session_get(q, e->session);
                retire(q, e);
                session_release_if_unused(q, s);
                return;
        }

        e->cycle++;
        e->lease = ++q->last_nonce;
        e->phase = PHASE_OBSERVING;
        if (heap_holds(&q->heaps[e->clock], e))
                heap_remove(&q->heaps[e->clock], e);
        sleep_dequeue(q, o, e);
        o->observing = e;
        q->stats.observing++;

        struct parked_effect *f =
            effect_push(q, PARKED_EFFECT_OBSERVATION, e, e->cookie, e->session);
        f->observation.lease = e->lease;
        f->observation.alarms = alarms;
        remaining(e, now, &f->observation.has_remaining, &f->observation.remaining_usec);
        memcpy(f->observation.name, name, strnlen(name, TIMERD_NAME_MAX) + 1);
}

/*
 * The owner may observe again and has a waiting Sleep: tell the runtime (OBSERVABLE, addressed to
 * that Sleep's session), which offers it an alarm the registry keeps.
 */
static void announce_observable(struct parked *q, const struct owner *o)
{
        if (!o || o->observing || !o->sleeps.head)
                return;
        const struct entry *e = o->sleeps.head;
        effect_push(q, PARKED_EFFECT_OBSERVABLE, e, 0, e->session);
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
        *ret = q;
        return 0;
}

void parked_free(struct parked *q)
{
        if (!q)
                return;
        for (struct entry *e = q->all.head, *next; e; e = next) {
                next = e->links[LINE_ALL].next;
                entry_free(e);
        }
        for (size_t i = 0; i < q->owners.n_allocated; i++) {
                struct owner *o = q->owners.slots[i].value;
                free(o);
        }
        for (size_t i = 0; i < q->sessions.n_allocated; i++) {
                struct session *s = q->sessions.slots[i].value;
                if (!s)
                        continue;
                for (size_t j = 0; j < s->n_owners; j++) {
                        free(s->owners[j]->sleeps.items);
                        free(s->owners[j]);
                }
                free(s->owners);
                free(s);
        }
        free(q->entries.slots);
        free(q->owners.slots);
        free(q->sessions.slots);
        for (size_t c = 0; c < TIMERD_CLOCK_MAX; c++)
                free(q->heaps[c].items);
        free(q->effects);
        free(q);
}

static int names_copy(const char *const *names, size_t n, char ***ret)
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
                        names_free(copy, i);
                        return -ENOMEM;
                }
        }
        *ret = copy;
        return 0;
}

/* Park a copy of proto for caller within the limits: every allocation comes before any change. */
static struct parked_transition park(struct parked *q, const struct td_caller *caller,
                                     enum timerd_clock clock, bool has_deadline,
                                     struct entry *proto, struct entry **ret)
{
        if (q->shutting_down)
                return transition(q, -TIMERD_E_SHUTTING_DOWN);
        if (q->last_nonce == UINT64_MAX)
                return transition(q, -TIMERD_E_OVERFLOW);

        struct owner *o = owner_get(q, caller->uid);
        struct session *s = session_get(q, caller->session);
        if (q->config.max_per_session > 0 && s && s->line.n >= q->config.max_per_session)
                return limit_exceeded(q, PARKED_LIMIT_PER_SESSION);
        if (q->config.max_per_owner > 0 && o && owner_parked(o) >= q->config.max_per_owner)
                return limit_exceeded(q, PARKED_LIMIT_PER_OWNER);

        struct entry *e = NULL;
        struct owner_session *os = NULL;
        int r = owner_acquire(q, caller->uid, &o);
        if (r < 0)
                return transition(q, r);
        r = session_acquire(q, caller->session, &s);
        if (r >= 0 && proto->kind == PARKED_KIND_SLEEP)
                r = sleep_reserve(o, s, &os);
        if (r >= 0)
                r = index_reserve(&q->entries, 1);
        if (r >= 0 && has_deadline)
                r = heap_reserve(&q->heaps[clock], q->timed[clock] + 1);
        if (r >= 0)
                r = effects_reserve(q, q->entries.n + 3);
        if (r >= 0) {
                e = malloc(sizeof(*e));
                if (!e)
                        r = -ENOMEM;
        }
        if (r < 0) {
                if (os)
                        owner_session_release_if_unused(q, os);
                session_release_if_unused(q, s);
                owner_release_if_unused(q, o);
                return transition(q, r);
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
                e->heap_index[i] = HEAP_NONE;
        e->sleeps = NULL;
        line_append(&q->all, e, LINE_ALL);
        if (e->kind == PARKED_KIND_WAIT)
                line_append(&o->waits, e, LINE_OWNER);
        line_append(&s->line, e, LINE_SESSION);
        index_put(&q->entries, e->nonce, e);
        if (has_deadline) {
                q->timed[clock]++;
                heap_push(&q->heaps[clock], e);
        }
        if (e->kind == PARKED_KIND_WAIT) {
                o->waiters++;
                q->stats.waiters++;
        } else {
                sleep_enqueue(o, os, e);
                o->sleepers++;
                q->stats.sleepers++;
        }
        *ret = e;
        return transition(q, 0);
}

static struct parked_continuation continuation_of(const struct parked *q, const struct entry *e)
{
        return (struct parked_continuation){
            .epoch = q->config.epoch,
            .nonce = e->nonce,
            .cycle = e->cycle,
        };
}

struct parked_transition parked_wait(struct parked *q, const struct parked_wait_args *a,
                                     struct parked_continuation *ret)
{
        assert(q && a && ret);
        q->n_effects = 0;

        if (a->caller.session == 0)
                return transition(q, -EINVAL);
        if (a->has_timeout && !clock_valid(a->clock))
                return transition(q, -TIMERD_E_INVALID_PARAMETER);
        if (q->config.max_names > 0 && a->n_names > q->config.max_names)
                return limit_exceeded(q, PARKED_LIMIT_NAMES);
        if (a->n_names > 0 && !a->names)
                return transition(q, -TIMERD_E_INVALID_PARAMETER);
        for (size_t i = 0; i < a->n_names; i++)
                if (!name_valid(a->names[i]))
                        return transition(q, -TIMERD_E_INVALID_NAME);

        struct entry proto = {
            .kind = PARKED_KIND_WAIT,
            .cookie = a->cookie,
            .deadline_usec = a->has_timeout ? a->timeout_usec : 0,
            .stream = a->stream,
            .n_names = a->n_names,
        };
        int r = names_copy(a->names, a->n_names, &proto.names);
        if (r < 0)
                return transition(q, r);

        struct entry *e;
        struct parked_transition t =
            park(q, &a->caller, a->has_timeout ? a->clock : 0, a->has_timeout, &proto, &e);
        if (t.failure < 0) {
                names_free(proto.names, proto.n_names);
                return t;
        }
        *ret = continuation_of(q, e);
        return t;
}

struct parked_transition parked_sleep(struct parked *q, const struct td_now *now,
                                      const struct parked_sleep_args *a,
                                      struct parked_continuation *ret)
{
        assert(q && now && a && ret);
        q->n_effects = 0;

        if (a->caller.session == 0)
                return transition(q, -EINVAL);
        if (!clock_valid(a->clock))
                return transition(q, -TIMERD_E_INVALID_PARAMETER);

        struct entry proto = {
            .kind = PARKED_KIND_SLEEP,
            .cookie = a->cookie,
            .deadline_usec = a->has_deadline ? a->deadline_usec : 0,
        };
        struct entry *e;
        struct parked_transition t = park(q, &a->caller, a->clock, a->has_deadline, &proto, &e);
        if (t.failure < 0)
                return t;
        *ret = continuation_of(q, e);
        announce_observable(q, owner_get(q, a->caller.uid));
        return transition(q, 0);
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

        if (!name_valid(name))
                return transition(q, -TIMERD_E_INVALID_NAME);

        struct owner *o = owner_get(q, owner);
        struct entry *e = o ? o->waits.head : NULL;
        while (e && !wait_matches(e, name))
                e = e->links[LINE_OWNER].next;
        if (!e)
                return transition(q, 0);

        struct parked_effect *f = effect_push(q, PARKED_EFFECT_REPLY, e, e->cookie, e->session);
        f->reply.continues = e->stream;
        memcpy(f->reply.name, name, strlen(name) + 1);
        *ret_taken = true;

        if (e->stream) {
                line_remove(&o->waits, e, LINE_OWNER);
                line_append(&o->waits, e, LINE_OWNER);
        } else
                retire_and_release(q, e);
        return transition(q, 0);
}

struct parked_transition parked_offer_alarm(struct parked *q, const struct td_now *now,
                                            uint32_t owner, uint64_t session, const char *name,
                                            uint64_t alarms, bool *ret_taken)
{
        assert(q && now && ret_taken);
        q->n_effects = 0;
        *ret_taken = false;

        if (session == 0 || alarms == 0)
                return transition(q, -EINVAL);
        if (!name_valid(name))
                return transition(q, -TIMERD_E_INVALID_NAME);
        if (q->shutting_down)
                return transition(q, -TIMERD_E_SHUTTING_DOWN);
        struct owner *o = owner_get(q, owner);
        if (!o || o->observing || !o->sleeps.head)
                return transition(q, 0);
        struct session *s = session_get(q, session);
        struct owner_session *os = s ? session_find_owner(s, owner) : NULL;
        begin_observation(q, now, o, os ? os->sleeps.items[0] : o->sleeps.head, name, alarms);
        /* A Sleep that cannot be observed ended with FAILED: the alarm stays with the registry. */
        *ret_taken = o->observing != NULL;
        return transition(q, 0);
}

struct parked_transition parked_end_waits(struct parked *q, uint32_t owner,
                                          bool (*can_fire)(const char *const *names, size_t n_names,
                                                           void *userdata),
                                          void *userdata)
{
        assert(q && can_fire);
        q->n_effects = 0;

        struct owner *o = owner_get(q, owner);
        struct entry *next;
        for (struct entry *e = o ? o->waits.head : NULL; e; e = next) {
                /* While another Wait follows, the owner keeps its record. */
                next = e->links[LINE_OWNER].next;
                if (e->n_names == 0 ||
                    can_fire((const char *const *)e->names, e->n_names, userdata))
                        continue;
                effect_push(q, PARKED_EFFECT_NOTHING_TO_WAIT_FOR, e, e->cookie, e->session);
                retire_and_release(q, e);
        }
        return transition(q, 0);
}

/* The checks Finish and Resume share; _PARKED_FAILURE_INVALID when c names a live Sleep. */
static enum parked_failure control_lookup(const struct parked *q, uint32_t uid,
                                          const struct parked_continuation *c, struct entry **ret)
{
        const struct owner *o = owner_get(q, uid);
        if (!o || owner_parked(o) == 0)
                return PARKED_FAILURE_UNEXPECTED_CONTROL;
        if (c->epoch != q->config.epoch)
                return PARKED_FAILURE_IDENTITY;
        struct entry *e = index_get(&q->entries, c->nonce);
        if (!e || e->owner != uid)
                return PARKED_FAILURE_IDENTITY;
        if (e->kind != PARKED_KIND_SLEEP)
                return PARKED_FAILURE_UNSUPPORTED;
        if (e->cycle != c->cycle)
                return PARKED_FAILURE_IDENTITY;
        *ret = e;
        return _PARKED_FAILURE_INVALID;
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
                return transition(q, -EINVAL);
        if (action < 0 || action >= _PARKED_ACTION_MAX)
                return transition(q, -TIMERD_E_INVALID_PARAMETER);

        struct entry *e = NULL;
        enum parked_failure kind = control_lookup(q, caller->uid, c, &e);
        if (kind != _PARKED_FAILURE_INVALID)
                return control_failure(q, caller->uid, kind);
        if (e->phase != PHASE_OBSERVING)
                return control_failure(q, caller->uid, PARKED_FAILURE_PHASE);
        if (e->lease != lease)
                return control_failure(q, caller->uid, PARKED_FAILURE_IDENTITY);
        /* Resume will need the next cycle: reserve it now so the ticket can always be used. */
        if (action == PARKED_ACTION_RESUME &&
            (q->last_nonce == UINT64_MAX || e->cycle == UINT64_MAX))
                return control_failure(q, caller->uid, PARKED_FAILURE_OVERFLOW);

        struct owner *o = owner_get(q, caller->uid);
        if (action == PARKED_ACTION_RESUME) {
                e->ticket = ++q->last_nonce;
                e->lease = 0;
                e->phase = PHASE_AWAITING_RESUME;
                o->observing = NULL;
                q->stats.observing--;
                q->stats.awaiting_resume++;
                *ret_ticket = (struct parked_ticket){
                    .continuation = continuation_of(q, e),
                    .nonce = e->ticket,
                };
        } else if (action == PARKED_ACTION_INTERRUPT) {
                struct parked_effect *f =
                    effect_push(q, PARKED_EFFECT_INTERRUPTED, e, cookie, caller->session);
                remaining(e, now, &f->interrupted.has_remaining, &f->interrupted.remaining_usec);
                retire_and_release(q, e);
        } else {
                effect_push(q, PARKED_EFFECT_RETIRED, e, cookie, caller->session);
                retire_and_release(q, e);
        }

        announce_observable(q, owner_get(q, caller->uid));
        return transition(q, 0);
}

struct parked_transition parked_resume(struct parked *q, const struct td_now *now,
                                       const struct td_caller *caller,
                                       const struct parked_ticket *ticket, uint64_t cookie)
{
        assert(q && now && caller && ticket);
        q->n_effects = 0;

        if (caller->session == 0)
                return transition(q, -EINVAL);
        if (q->shutting_down)
                return transition(q, -TIMERD_E_SHUTTING_DOWN);

        struct entry *e = NULL;
        enum parked_failure kind = control_lookup(q, caller->uid, &ticket->continuation, &e);
        if (kind != _PARKED_FAILURE_INVALID)
                return control_failure(q, caller->uid, kind);
        if (e->phase != PHASE_AWAITING_RESUME)
                return control_failure(q, caller->uid, PARKED_FAILURE_PHASE);
        if (e->ticket != ticket->nonce)
                return control_failure(q, caller->uid, PARKED_FAILURE_IDENTITY);
        assert(e->cycle < UINT64_MAX); /* reserved by Finish */

        struct owner *o = owner_get(q, caller->uid);
        struct session *from = session_get(q, e->session), *to = from;
        if (caller->session != e->session) {
                to = session_get(q, caller->session);
                if (q->config.max_per_session > 0 && to && to->line.n >= q->config.max_per_session)
                        return limit_exceeded(q, PARKED_LIMIT_PER_SESSION);
        }
        struct owner_session *os = NULL;
        int r = session_acquire(q, caller->session, &to);
        if (r >= 0)
                r = sleep_reserve(o, to, &os);
        if (r < 0) {
                if (os)
                        owner_session_release_if_unused(q, os);
                session_release_if_unused(q, to);
                return transition(q, r);
        }
        if (to != from) {
                line_remove(&from->line, e, LINE_SESSION);
                line_append(&to->line, e, LINE_SESSION);
                e->session = caller->session;
                session_release_if_unused(q, from);
        }

        e->cycle++;
        e->ticket = 0;
        e->cookie = cookie;
        e->phase = PHASE_WAITING;
        q->stats.awaiting_resume--;
        if (e->has_deadline)
                heap_push(&q->heaps[e->clock], e);
        sleep_enqueue(o, os, e);
        announce_observable(q, o);
        return transition(q, 0);
}

struct parked_transition parked_expire(struct parked *q, const struct td_now *now)
{
        assert(q && now);
        q->n_effects = 0;

        for (size_t c = 0; c < TIMERD_CLOCK_MAX; c++) {
                struct heap *h = &q->heaps[c];
                while (h->n > 0 && h->items[0]->deadline_usec <= now->usec[c]) {
                        struct entry *e = h->items[0];
                        effect_push(q,
                                    e->kind == PARKED_KIND_SLEEP ? PARKED_EFFECT_ELAPSED
                                                                 : PARKED_EFFECT_TIMED_OUT,
                                    e, e->cookie, e->session);
                        retire_and_release(q, e);
                }
        }
        return transition(q, 0);
}

int parked_next_deadline(const struct parked *q, enum timerd_clock clock, uint64_t *ret_usec)
{
        assert(q && ret_usec);
        if (!clock_valid(clock))
                return -EINVAL;
        const struct heap *h = &q->heaps[clock];
        if (h->n == 0)
                return 0;
        *ret_usec = h->items[0]->deadline_usec;
        return 1;
}

struct parked_transition parked_session_closed(struct parked *q, const struct td_now *now,
                                               uint64_t session, size_t *ret_retired)
{
        assert(q && now && ret_retired);
        q->n_effects = 0;
        *ret_retired = 0;

        struct session *s = session_get(q, session);
        if (!s)
                return transition(q, 0);

        /* Observations last, so that none is announced to a Sleep about to be dropped. */
        for (int observations = 0; observations < 2; observations++) {
                struct entry *next;
                for (struct entry *e = s->line.head; e; e = next) {
                        next = e->links[LINE_SESSION].next;
                        if ((e->phase == PHASE_OBSERVING) != observations)
                                continue;
                        struct owner *o = owner_get(q, e->owner);
                        retire(q, e);
                        (*ret_retired)++;
                        if (observations)
                                announce_observable(q, o);
                        owner_release_if_unused(q, o);
                }
        }
        session_release_if_unused(q, s);
        return transition(q, 0);
}

struct parked_transition parked_shutdown(struct parked *q)
{
        assert(q);
        q->n_effects = 0;
        q->shutting_down = true;

        while (q->all.head) {
                struct entry *e = q->all.head;
                if (e->phase == PHASE_WAITING)
                        effect_push(q, PARKED_EFFECT_SHUTTING_DOWN, e, e->cookie, e->session);
                retire_and_release(q, e);
        }
        for (size_t i = 0; i < q->sessions.n_allocated;) {
                struct session *s = q->sessions.slots[i].value;
                if (!s) {
                        i++;
                        continue;
                }
                /* the removal may shift another session into slot i: look at it again */
                session_release_if_unused(q, s);
        }
        return transition(q, 0);
}

int parked_get_owner(const struct parked *q, uint32_t owner, struct parked_owner_snapshot *ret)
{
        assert(q && ret);
        const struct owner *o = owner_get(q, owner);
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
        return session_get(q, session) != NULL;
}

void parked_get_stats(const struct parked *q, struct parked_stats *ret)
{
        assert(q && ret);
        *ret = q->stats;
}

static bool line_valid(const struct line *l, enum line_kind k)
{
        size_t n = 0;
        const struct entry *prev = NULL;
        for (const struct entry *e = l->head; e; e = e->links[k].next) {
                if (e->links[k].prev != prev || ++n > l->n)
                        return false;
                prev = e;
        }
        return n == l->n && l->tail == prev;
}

static bool index_valid(const struct index *x)
{
        size_t n = 0;
        for (size_t i = 0; i < x->n_allocated; i++)
                if (x->slots[i].value) {
                        if (index_get(x, x->slots[i].key) != x->slots[i].value)
                                return false;
                        n++;
                }
        return n == x->n && (x->n_allocated == 0 || x->n <= x->n_allocated / 2);
}

/* e is at its place on h, or on no heap of h's role. */
static bool heap_place_valid(const struct heap *h, const struct entry *e, bool on)
{
        size_t i = e->heap_index[h->role];
        if (!on)
                return i == HEAP_NONE;
        return i < h->n && h->items[i] == e;
}

static bool heap_valid(const struct heap *h, enum heap_role role)
{
        if (h->role != role || h->n > h->n_allocated)
                return false;
        for (size_t i = 0; i < h->n; i++)
                if (h->items[i]->heap_index[role] != i ||
                    (i > 0 && heap_before(h, h->items[i], h->items[(i - 1) / 2])))
                        return false;
        return true;
}

static bool entry_indexes_valid(const struct parked *q, const struct entry *e)
{
        const struct owner *o = owner_get(q, e->owner);
        if (!o ||
            !heap_place_valid(&q->heaps[e->clock], e, e->phase == PHASE_WAITING && e->has_deadline))
                return false;
        bool sleeping = e->kind == PARKED_KIND_SLEEP && e->phase == PHASE_WAITING;
        const struct owner_session *os = e->sleeps;
        if ((os != NULL) != sleeping)
                return false;
        if (!sleeping)
                return e->heap_index[HEAP_SLEEPS] == HEAP_NONE;
        return os->owner == e->owner && os->session == e->session &&
               heap_place_valid(&os->sleeps, e, true);
}

static bool entry_valid(const struct parked *q, const struct entry *e)
{
        if (e->nonce < q->config.first_nonce || e->nonce > q->last_nonce ||
            e->cycle < q->config.first_cycle || e->session == 0 || !clock_valid(e->clock))
                return false;
        if (!entry_indexes_valid(q, e))
                return false;
        for (size_t i = 0; i < e->n_names; i++)
                if (!name_valid(e->names[i]))
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
        for (const struct entry *e = q->all.head; e; e = e->links[LINE_ALL].next)
                if (e->has_deadline)
                        timed[e->clock]++;
        for (size_t c = 0; c < TIMERD_CLOCK_MAX; c++) {
                const struct heap *h = &q->heaps[c];
                if (timed[c] != q->timed[c] || h->n_allocated < timed[c] || h->n > timed[c] ||
                    !heap_valid(h, HEAP_DEADLINE))
                        return false;
                for (size_t i = 0; i < h->n; i++)
                        if ((size_t)h->items[i]->clock != c)
                                return false;
        }
        return true;
}

static bool owner_valid(const struct parked *q, const struct owner *o, uint64_t *ret_sleepers)
{
        if (owner_unused(o) || !line_valid(&o->waits, LINE_OWNER) || o->waits.n != o->waiters)
                return false;
        for (const struct entry *e = o->waits.head; e; e = e->links[LINE_OWNER].next)
                if (e->owner != o->uid || e->kind != PARKED_KIND_WAIT ||
                    index_get(&q->entries, e->nonce) != e)
                        return false;
        if (!line_valid(&o->sleeps, LINE_OWNER))
                return false;
        for (const struct entry *e = o->sleeps.head; e; e = e->links[LINE_OWNER].next)
                if (e->owner != o->uid || e->kind != PARKED_KIND_SLEEP ||
                    e->phase != PHASE_WAITING || !e->sleeps)
                        return false;
        uint64_t sleepers = 0;
        const struct entry *observing = NULL;
        size_t waiting = 0;
        for (const struct entry *e = q->all.head; e; e = e->links[LINE_ALL].next) {
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
        for (size_t i = 0; i < q->owners.n_allocated; i++) {
                const struct owner *o = q->owners.slots[i].value;
                if (!o)
                        continue;
                uint64_t sleepers;
                if (o->uid != q->owners.slots[i].key || !owner_valid(q, o, &sleepers))
                        return false;
                entries += o->waiters + sleepers;
                counted->waiters += o->waiters;
                counted->sleepers += sleepers;
                counted->observing += o->observing != NULL;
                counted->latched_owners += o->failures > 0;
        }
        return entries == q->entries.n;
}

static bool owner_session_valid(const struct parked *q, const struct session *s,
                                const struct owner_session *os)
{
        if (os->session != s->id || !owner_get(q, os->owner) ||
            session_find_owner(s, os->owner) != os || os->sleeps.n == 0 ||
            !heap_valid(&os->sleeps, HEAP_SLEEPS))
                return false;
        for (size_t i = 0; i < os->sleeps.n; i++)
                if (os->sleeps.items[i]->sleeps != os)
                        return false;
        return true;
}

static bool sessions_valid(const struct parked *q)
{
        size_t entries = 0, sleeping = 0;
        for (size_t i = 0; i < q->sessions.n_allocated; i++) {
                const struct session *s = q->sessions.slots[i].value;
                if (!s)
                        continue;
                if (s->id != q->sessions.slots[i].key || session_unused(s) ||
                    !line_valid(&s->line, LINE_SESSION) || s->n_owners > s->n_owners_allocated)
                        return false;
                for (const struct entry *e = s->line.head; e; e = e->links[LINE_SESSION].next)
                        if (e->session != s->id || index_get(&q->entries, e->nonce) != e)
                                return false;
                for (size_t j = 0; j < s->n_owners; j++) {
                        if (!owner_session_valid(q, s, s->owners[j]))
                                return false;
                        sleeping += s->owners[j]->sleeps.n;
                }
                entries += s->line.n;
        }
        if (entries != q->entries.n)
                return false;
        size_t waiting = 0;
        for (const struct entry *e = q->all.head; e; e = e->links[LINE_ALL].next)
                waiting += e->sleeps != NULL;
        if (waiting != sleeping)
                return false;
        for (size_t i = 0; i < q->owners.n_allocated; i++) {
                const struct owner *o = q->owners.slots[i].value;
                if (!o)
                        continue;
                size_t owner_sessions = 0;
                for (size_t j = 0; j < q->sessions.n_allocated; j++) {
                        const struct session *s = q->sessions.slots[j].value;
                        const struct owner_session *os = s ? session_find_owner(s, o->uid) : NULL;
                        owner_sessions += os != NULL;
                }
                if (owner_sessions != o->n_owner_sessions)
                        return false;
        }
        return true;
}

int parked_check(const struct parked *q)
{
        assert(q);
        if (!index_valid(&q->entries) || !index_valid(&q->owners) || !index_valid(&q->sessions) ||
            !line_valid(&q->all, LINE_ALL) || q->all.n != q->entries.n)
                return -EUCLEAN;
        if (q->entries.n > 0 && q->n_effects_allocated < q->entries.n + 2)
                return -EUCLEAN;
        if (q->shutting_down && q->entries.n > 0)
                return -EUCLEAN;

        struct parked_stats counted = {};
        for (const struct entry *e = q->all.head; e; e = e->links[LINE_ALL].next) {
                if (index_get(&q->entries, e->nonce) != e || !entry_valid(q, e))
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
