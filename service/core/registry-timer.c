/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* A timer's record: its indexes, declaration, counts, change marks and place in its clock's queue.
 * The bottom of the registry: calls no other registry file. */

#include <assert.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "service/core/registry-internal.h"

struct identity {
        uint32_t owner;
        const char *name;
};

uint64_t identity_hash(uint32_t owner, const char *name)
{
        uint64_t h = UINT64_C(0xcbf29ce484222325) ^ owner;

        for (const char *p = name; *p; p++)
                h = (h ^ (unsigned char)*p) * UINT64_C(0x100000001b3);
        return hash_mix64(h);
}

static bool timer_matches(const void *entry, const void *key)
{
        const struct timer *t = entry;
        const struct identity *id = key;

        return t->uid == id->owner && strcmp(t->name, id->name) == 0;
}

static bool owner_matches(const void *entry, const void *key)
{
        return ((const struct owner *)entry)->uid == *(const uint32_t *)key;
}

static bool session_matches(const void *entry, const void *key)
{
        return ((const struct session *)entry)->id == *(const uint64_t *)key;
}

static uint64_t timer_hash(const struct timer *t)
{
        return identity_hash(t->uid, t->name);
}

static uint64_t timer_hash_of(const void *entry)
{
        return timer_hash(entry);
}

static uint64_t owner_hash_of(const void *entry)
{
        return hash_mix64(((const struct owner *)entry)->uid);
}

static uint64_t session_hash_of(const void *entry)
{
        return hash_mix64(((const struct session *)entry)->id);
}

static struct timer *timer_lookup_hashed(const struct registry *r, uint64_t hash, uint32_t owner,
                                         const char *name)
{
        struct identity id = {.owner = owner, .name = name};

        return hashmap_find(&r->timers, hash, timer_matches, &id);
}

struct timer *timer_lookup(const struct registry *r, uint32_t owner, const char *name)
{
        return timer_lookup_hashed(r, identity_hash(owner, name), owner, name);
}

struct timer *timer_find_hashed(const struct registry *r, uint64_t hash, uint32_t owner,
                                const char *name)
{
        struct timer *t = timer_lookup_hashed(r, hash, owner, name);

        return t && !timer_gone(r, t) ? t : NULL;
}

struct timer *timer_find(const struct registry *r, uint32_t owner, const char *name)
{
        return timer_find_hashed(r, identity_hash(owner, name), owner, name);
}

struct owner *owner_find(const struct registry *r, uint32_t uid)
{
        if (r->last_owner && r->last_owner->uid == uid)
                return r->last_owner;
        return hashmap_find(&r->owners, hash_mix64(uid), owner_matches, &uid);
}

struct session *session_find(const struct registry *r, uint64_t id)
{
        if (r->last_session && r->last_session->id == id)
                return r->last_session;
        return hashmap_find(&r->sessions, hash_mix64(id), session_matches, &id);
}

struct session *session_open(const struct registry *r, uint64_t id)
{
        struct session *s = session_find(r, id);

        return s && !s->closing ? s : NULL;
}

/* The session's record, created on first use. -ENOMEM; -EINVAL for one that closed and is still
 * being reaped (a session closes once). */
int session_get(struct registry *r, uint64_t id, struct session **ret)
{
        struct session *s = session_find(r, id);
        int e;

        if (s && s->closing)
                return -EINVAL;
        if (!s) {
                e = hashmap_reserve(&r->sessions, r->sessions.n_entries + 1);
                if (e < 0)
                        return e;
                s = malloc(sizeof(*s));
                if (!s)
                        return -ENOMEM;
                *s = (struct session){.id = id};
                list_init(&s->transient);
                list_init(&s->delivered);
                list_init(&s->closing_node);
                hashmap_insert(&r->sessions, hash_mix64(id), s);
        }
        r->last_session = s;
        *ret = s;
        return 0;
}

void session_free(struct registry *r, struct session *s)
{
        if (list_linked(&s->closing_node))
                list_remove(&s->closing_node);
        hashmap_remove(&r->sessions, hash_mix64(s->id), s);
        if (r->last_session == s)
                r->last_session = NULL;
        free(s);
}

/* The session whose count a transient timer is in, else NULL. */
static struct session *counting_session(const struct registry *r, const struct timer *t)
{
        return t->lifetime == TIMERD_LIFETIME_TRANSIENT ? session_find(r, t->session) : NULL;
}

/* The closing session a gone timer was in, else NULL. */
static const struct session *gone_session(const struct registry *r, const struct timer *t)
{
        const struct session *s = r->n_gone > 0 ? counting_session(r, t) : NULL;

        return s && s->closing ? s : NULL;
}

bool timer_gone_slow(const struct registry *r, const struct timer *t)
{
        return gone_session(r, t) != NULL;
}

/* A run-state field as a timer that never fired has it. */
#define NO_RUNS_USEC(kind, m, rs) (rs)->m == no_runs.m &&
#define NO_RUNS_CADENCE           NO_RUNS_USEC
#define NO_RUNS_VALUE             NO_RUNS_USEC
#define NO_RUNS_OPT_USEC(kind, pair, rs)                                                           \
        NO_RUNS_USEC(kind, TD_FIRST(pair), rs) NO_RUNS_USEC(kind, TD_SECOND(pair), rs)
#define NO_RUNS_RESULT(kind, m, rs)                                                                \
        (rs)->m.exit == no_runs.m.exit && (rs)->m.code == no_runs.m.code &&

bool run_state_empty(const struct run_state *rs)
{
#define RUN_EMPTY(kind, snapshot, wire, public, journal, position)                                 \
        FIELD_OP(NO_RUNS, kind, snapshot, rs)
        return TD_TIMER_FIELDS_HELD(TD_NO_FIELD, RUN_EMPTY) rs->run_fired_usec == 0 &&
               rs->deferred_deadline_usec == 0 && rs->missed_deadline_usec == 0 &&
               rs->overruns_reported == 0;
#undef RUN_EMPTY
}

/* runs becomes t's runs record, with state; the rare fields of the one t had (unlinked) stay. */
void timer_runs_adopt(struct timer *t, struct timer_runs *runs, const struct run_state *state)
{
        struct timer_rare rare = {0};

        if (t->runs) {
                assert(!list_linked(&t->runs->waiter_node));
                rare = t->runs->rare;
                free(t->runs);
        }
        *runs = (struct timer_runs){.timer = t, .rare = rare, .state = *state};
        list_init(&runs->waiter_node);
        t->runs = runs;
}

/* Give t its runs record (all zero), unless it has one. Changes nothing else. -ENOMEM. */
int timer_runs_attach(struct timer *t)
{
        struct timer_runs *runs;

        if (t->runs)
                return 0;
        runs = malloc(sizeof(*runs));
        if (!runs)
                return -ENOMEM;
        timer_runs_adopt(t, runs, &no_runs);
        return 0;
}

void timer_free(struct timer *t)
{
        td_calendar_unref(timer_calendar(t));
        free(t->runs);
        free(t);
}

bool registry_name_valid(const char *name)
{
        size_t n;

        if (!name)
                return false;
        for (n = 0; name[n]; n++) {
                char c = name[n];

                if (n >= TIMERD_NAME_MAX)
                        return false;
                if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '.' || c == '_' || c == ':' || c == '@' || c == '-'))
                        return false;
        }
        return n > 0;
}

/* -TIMERD_E_INVALID_SCHEDULE, with *ret_problem saying why. */
int schedule_invalid(enum td_schedule_problem *ret_problem, enum td_schedule_problem problem)
{
        *ret_problem = problem;
        return -TIMERD_E_INVALID_SCHEDULE;
}

int declaration_validate(const struct td_declaration *d, enum td_schedule_problem *ret_problem)
{
        if (d->policy < 0 || d->policy >= TIMERD_POLICY_MAX || !clock_valid(d->clock) ||
            d->lifetime < 0 || d->lifetime >= TIMERD_LIFETIME_MAX || d->delivery < 0 ||
            d->delivery >= TIMERD_DELIVERY_MAX)
                return -TIMERD_E_INVALID_PARAMETER;
        /* A signal number only with signal delivery; the runtime checks it is a real one. */
        if (d->delivery == TIMERD_DELIVERY_SIGNAL ? d->signo <= 0 || d->signo > TD_SIGNO_MAX
                                                  : d->signo != 0)
                return -TIMERD_E_INVALID_PARAMETER;
        if ((d->policy == TIMERD_POLICY_CALENDAR) != (d->calendar != NULL))
                return schedule_invalid(ret_problem, TD_SCHEDULE_CALENDAR_MISSING);
        if (d->calendar && d->clock != TIMERD_CLOCK_REALTIME &&
            d->clock != TIMERD_CLOCK_REALTIME_ALARM)
                return schedule_invalid(ret_problem, TD_SCHEDULE_CALENDAR_CLOCK);
        if ((d->policy == TIMERD_POLICY_ONCE || d->calendar) && d->cadence_usec != 0)
                return schedule_invalid(ret_problem, TD_SCHEDULE_CADENCE_ON_ONCE);
        if (d->policy != TIMERD_POLICY_ONCE && !d->calendar && d->cadence_usec == 0)
                return schedule_invalid(ret_problem, TD_SCHEDULE_CADENCE_MISSING);
        if (d->handover_usec > TIMERD_HANDOVER_MAX_USEC ||
            (d->handover_usec > 0 && d->delivery != TIMERD_DELIVERY_NOTIFY))
                return -TIMERD_E_INVALID_PARAMETER;
        /* A successor must not be due the moment it is queued. */
        if (d->cadence_usec > 0 && d->handover_usec >= d->cadence_usec)
                return schedule_invalid(ret_problem, TD_SCHEDULE_HANDOVER_NOT_SHORTER);
        return 0;
}

struct td_declaration timer_declaration(const struct timer *t)
{
        return (struct td_declaration){
            .policy = (enum timerd_policy)t->policy,
            .cadence_usec = timer_declared_cadence(t),
            .clock = (enum timerd_clock)t->clock,
            .lifetime = (enum timerd_lifetime)t->lifetime,
            .delivery = (enum timerd_delivery)t->delivery,
            .accuracy_usec = timer_accuracy(t),
            .signo = t->signo,
            .catch_up = t->catch_up,
            .randomized_delay_usec = timer_randomized_delay(t),
            .handover_usec = t->handover_usec,
            .calendar = timer_calendar(t),
        };
}

/* Whether declaring d needs a runs record for its rare fields. */
static bool declaration_rare(const struct td_declaration *d)
{
        return d->accuracy_usec > 0 || d->randomized_delay_usec > 0;
}

/*
 * d is valid (declaration_validate()): every value fits its field. The runs start over: t keeps
 * a runs record (all zero, unlinked) only for d's rare fields, its own or else `spare`, which
 * declare_reserve() allocated for it.
 */
static void timer_set_declaration(struct timer *t, const struct td_declaration *d,
                                  struct timer_runs *spare)
{
        const struct td_calendar *old = timer_calendar(t);

        /* The new reference before the old one goes: they may be the same schedule. */
        if (d->calendar)
                t->calendar = td_calendar_ref(d->calendar);
        else
                t->cadence_usec = d->cadence_usec;
        td_calendar_unref(old);
        t->policy = (unsigned)d->policy & 0x7u;
        t->clock = (unsigned)d->clock & 0x7u;
        t->lifetime = (unsigned)d->lifetime & 0x1u;
        t->delivery = (unsigned)d->delivery & 0x3u;
        t->signo = (uint8_t)d->signo;
        t->catch_up = d->catch_up;
        t->handover_usec = (uint32_t)d->handover_usec;

        if (!declaration_rare(d)) {
                free(t->runs);
                t->runs = NULL;
                return;
        }
        if (!t->runs) {
                assert(spare);
                t->runs = spare;
        }
        *t->runs = (struct timer_runs){
            .timer = t,
            .rare = {.accuracy_usec = d->accuracy_usec,
                     .randomized_delay_usec = d->randomized_delay_usec},
            .state = no_runs,
        };
        list_init(&t->runs->waiter_node);
}

/* The handover aside: see registry_reconcile(). */
bool declaration_equal(const struct timer *t, const struct td_declaration *b)
{
        const struct td_declaration declaration = timer_declaration(t), *a = &declaration;

        return a->policy == b->policy && a->cadence_usec == b->cadence_usec &&
               a->clock == b->clock && a->lifetime == b->lifetime && a->delivery == b->delivery &&
               a->accuracy_usec == b->accuracy_usec && a->signo == b->signo &&
               a->catch_up == b->catch_up && a->randomized_delay_usec == b->randomized_delay_usec &&
               td_calendar_equal(a->calendar, b->calendar);
}

static const struct timer *timer_of_const_entry(const struct timerq_entry *e)
{
        return (const struct timer *)(const void *)((const char *)e -
                                                    offsetof(struct timer, entry));
}

/* Timers due at the same instant go in (owner, name) order. */
static bool timer_entry_before(const struct timerq_entry *a, const struct timerq_entry *b)
{
        const struct timer *x = timer_of_const_entry(a), *y = timer_of_const_entry(b);

        if (x->uid != y->uid)
                return x->uid < y->uid;
        return strcmp(x->name, y->name) < 0;
}

/* Its place is reserved (see struct registry). */
void changes_add(struct registry *r, struct timer *t)
{
        if (t->changed)
                return;
        assert(r->n_changes < r->changes_capacity);
        r->changes[r->n_changes++] = t;
        t->changed = true;
}

/* A change to a retained timer (or to one a call made transient) is pending until committed. */
void timer_changed(struct registry *r, struct timer *t)
{
        if (!timer_retained(t) && !t->has_before)
                return;
        r->change_count = value_saturating_add(r->change_count, 1);
        changes_add(r, t);
}

/* Room in the changes for n more retained timers besides every one there is. -ENOMEM. */
int changes_reserve(struct registry *r, size_t more)
{
        size_t n = r->n_changes + r->n_retained, capacity;
        struct timer **changes;

        if (more > SIZE_MAX - n)
                return -ENOMEM;
        n += more;
        if (n <= r->changes_capacity)
                return 0;
        if (r->changes_capacity > SIZE_MAX / 2 / sizeof(struct timer *))
                return -ENOMEM;
        capacity = r->changes_capacity * 2 > n ? r->changes_capacity * 2 : n;
        changes = realloc(r->changes, capacity * sizeof(struct timer *));
        if (!changes)
                return -ENOMEM;
        r->changes = changes;
        r->changes_capacity = capacity;
        return 0;
}

/* Every change of a timer's state, pending flag or counters is bracketed by these two, to keep
 * counts and to track what must be written. */
/* A gone timer is in no count: closing its session took them all out at once. */
void stats_leave(struct registry *r, const struct timer *t)
{
        struct owner *o = owner_find(r, t->uid);
        struct session *s = counting_session(r, t);

        if (s && s->closing)
                return;
        r->n_state[timer_state(t)]--;
        o->n_state[timer_state(t)]--;
        if (s)
                s->n_state[timer_state(t)]--;
        if (timer_pending(t)) {
                r->n_pending--;
                o->n_pending--;
                if (s)
                        s->n_pending--;
        }
}

/* Whether a Wait on t may still get a firing: one is pending, or t may fire again. */
static bool timer_may_deliver(const struct timer *t)
{
        return timer_pending(t) ||
               (t->failure == TIMERD_FAILURE_NONE && (timer_queued(t) || t->run_active));
}

/* A notify timer of o that had something to deliver has nothing any more: its Waits learn it. */
static void owner_silenced(struct registry *r, struct owner *o, const struct timer *t)
{
        if (t->may_deliver && (enum timerd_delivery)t->delivery == TIMERD_DELIVERY_NOTIFY &&
            !list_linked(&o->silenced_node))
                list_append(&r->silenced, &o->silenced_node);
}

void stats_enter(struct registry *r, struct timer *t)
{
        struct owner *o = owner_find(r, t->uid);
        struct session *s = counting_session(r, t);

        if (s && s->closing)
                return;
        if (!timer_may_deliver(t))
                owner_silenced(r, o, t);
        t->may_deliver = timer_may_deliver(t);

        r->n_state[timer_state(t)]++;
        o->n_state[timer_state(t)]++;
        if (s)
                s->n_state[timer_state(t)]++;
        if (timer_pending(t)) {
                r->n_pending++;
                o->n_pending++;
                if (s)
                        s->n_pending++;
        }
        timer_changed(r, t);
}

static void timer_forget_missed_deadline(struct timer *t)
{
        t->has_missed_deadline = false;
        t->catching_up = false;
        if (t->runs)
                t->runs->state.missed_deadline_usec = 0;
}

/* A new schedule supersedes a catch-up. */
void timer_enqueue(struct registry *r, struct timer *t, uint64_t deadline_usec, uint64_t now)
{
        timerq_put(&r->queues[t->clock], &t->entry, handover_instant(r, t, deadline_usec),
                   timer_accuracy(t));
        r->unsynced |= 1u << t->clock;
        t->deadline_usec = deadline_usec;
        t->calendar_epoch = r->calendar_pass.epoch;
        t->queued_past_due = handover_instant(r, t, deadline_usec) <= now;
        timer_forget_missed_deadline(t);
}

void timer_set_handover(struct registry *r, struct timer *t, uint64_t handover_usec)
{
        t->handover_usec = (uint32_t)handover_usec;
        if (timer_queued(t)) {
                timerq_put(&r->queues[t->clock], &t->entry,
                           handover_instant(r, t, t->deadline_usec), timer_accuracy(t));
                r->unsynced |= 1u << t->clock;
        }
        timer_changed(r, t);
}

void timer_dequeue(struct registry *r, struct timer *t)
{
        timerq_remove(&r->queues[t->clock], &t->entry);
        r->unsynced |= 1u << t->clock;
        timer_forget_missed_deadline(t);
}

/* Detach an active run from its waiter bookkeeping (pending list or receiving session). */
void run_detach(struct timer *t)
{
        if (!t->runs)
                return;
        if (list_linked(&t->runs->waiter_node))
                list_remove(&t->runs->waiter_node);
        t->runs->delivered_to = NULL;
}

/* How many timers declared on clock with that accuracy must find room in its queue. */
static size_t *declared_count(struct registry *r, enum timerd_clock clock, uint64_t accuracy_usec)
{
        return &r->n_declared[clock][timerq_kind_of(accuracy_usec)];
}

/* Room in the queue for one more timer declared like d. -ENOMEM. */
static int queue_reserve(struct registry *r, const struct td_declaration *d)
{
        return timerq_reserve(&r->queues[d->clock], timerq_kind_of(d->accuracy_usec),
                              *declared_count(r, d->clock, d->accuracy_usec) + 1);
}

/* Give t a declaration and a generation. Its session record must exist when transient; spare is
 * declare_reserve()'s. */
static void timer_declare(struct registry *r, struct timer *t, const struct td_caller *caller,
                          const struct td_declaration *d, uint64_t generation,
                          struct session *transient_of, struct timer_runs *spare)
{
        timer_set_declaration(t, d, spare);
        t->session = caller->session;
        t->generation = generation;
        if (generation > r->last_generation)
                r->last_generation = generation;
        struct owner *owner = owner_find(r, t->uid);
        if (generation > owner->last_generation)
                owner->last_generation = generation;
        if (d->lifetime == TIMERD_LIFETIME_TRANSIENT) {
                if (list_empty(&transient_of->transient))
                        transient_of->uid = t->uid;
                transient_of->mixed |= transient_of->uid != t->uid;
                list_append(&transient_of->transient, &t->transient_node);
        }
        (*declared_count(r, d->clock, d->accuracy_usec))++;
        r->n_retained += d->lifetime == TIMERD_LIFETIME_RETAINED;
        t->failure = TIMERD_FAILURE_NONE;
        t->after_run = AFTER_RUN_POLICY;
        t->run_active = false;
        t->has_missed_deadline = false;
        t->catching_up = false;
}

/* The other way: what declaring t counted and linked. */
static void timer_undeclare(struct registry *r, struct timer *t)
{
        if (list_linked(&t->transient_node))
                list_remove(&t->transient_node);
        (*declared_count(r, t->clock, timer_accuracy(t)))--;
        r->n_retained -= timer_retained(t);
}

/*
 * How many timers the table holds for a caller: all of max_timers for uid 0 and the admin group,
 * less the reserved share (at most half the table) for the others. 0: unlimited.
 */
static uint32_t table_bound(const struct registry_config *c, bool privileged)
{
        uint32_t reserved =
            c->reserved_timers < c->max_timers / 2 ? c->reserved_timers : c->max_timers / 2;

        return privileged ? c->max_timers : c->max_timers - reserved;
}

/* What the per-owner limit holds uid (owner record o, or NULL) to: its own live timers when it
 * is charged to itself, else all its account's. */
static uint64_t owner_charged(const struct registry *r, const struct owner *o, uint32_t uid)
{
        uint32_t account = o ? o->account : registry_account_of(r, uid);
        const struct owner *a;

        if (account == uid)
                return o ? o->n_timers : 0;
        a = owner_find(r, account);
        return (a ? a->n_timers : 0) + tally_get(&r->accounts, account);
}

static int limit_exceeded(struct registry *r, enum td_limit limit, uint32_t max)
{
        r->limit = limit;
        r->limit_max = max;
        return -TIMERD_E_LIMIT_EXCEEDED;
}

/*
 * Room for one more timer of uid. Restored timers do not count against the limits. The owner's
 * limit counts its live timers only (a subordinate uid's, its account's: owner_charged()):
 * closing a connection gives its room back at once. Only live
 * timers fill the table too, up to the caller's bound: a caller that is not privileged stops
 * short of the reserved share, so whatever the other uids hold, uid 0 and the admin group find
 * room (the gone timers must not count there: the other uids would take the share back as they
 * replaced them). The table's memory counts gone timers as well, until freed: at max_timers one
 * of them is freed first (and only for a call within the limits), so a client is never refused
 * for its predecessor's leftovers.
 *
 * Timers are never evicted, so the others' part of the table is shared by a dynamic threshold
 * (Choudhury and Hahne's, from switch buffers): what one charge holds stays below what the part
 * has free, so it may hold at most half of what the rest of them leave. One uid alone gets half
 * the part; each that fills its share after it gets half of what is left, and a uid that holds
 * nothing finds room while any is free.
 */
int timer_limits_check(struct registry *r, uint32_t uid, bool privileged)
{
        const struct owner *owner = owner_find(r, uid);
        uint32_t bound = table_bound(&r->config, privileged);
        uint64_t charged = owner_charged(r, owner, uid), live = timers_live(r);

        if (r->config.max_timers_per_owner > 0 && charged >= r->config.max_timers_per_owner)
                return limit_exceeded(r, TD_LIMIT_TIMERS_PER_OWNER, r->config.max_timers_per_owner);
        if (r->config.max_timers == 0)
                return 0;
        if (live >= bound)
                return limit_exceeded(r, TD_LIMIT_TIMERS, bound);
        if (!privileged) {
                /* charged < bound - live, that is charged < the share, (bound - others) / 2
                 * rounded up. Only live timers are charged, so others <= live < bound. */
                uint64_t others = live - (charged < live ? charged : live);
                uint32_t share = (uint32_t)((bound - others + 1) / 2);

                if (charged >= share)
                        return limit_exceeded(r, TD_LIMIT_TIMERS_SHARE, share);
        }
        /* Fewer live timers than max_timers: at it, one is gone. */
        if (r->timers.n_entries >= r->config.max_timers)
                gone_reap_one(r);
        return 0;
}

/* The allocation for a timer named with len bytes. */
static size_t timer_size(size_t len)
{
        size_t size = offsetof(struct timer, name) + len + 1;

        return size > sizeof(struct timer) ? size : sizeof(struct timer);
}

/*
 * The memory declaring t as d needs (t NULL: a new timer), before anything changes: room in its
 * queue unless it stays in the one it has, room in the changes for a retained one, the session
 * of a transient one (*ret_session, else NULL) and a runs record for rare fields when t has none
 * (*ret_spare, else NULL; on a failure nothing is kept).
 */
static int declare_reserve(struct registry *r, const struct timer *t,
                           const struct td_caller *caller, const struct td_declaration *d,
                           struct session **ret_session, struct timer_runs **ret_spare)
{
        int e = 0;

        *ret_session = NULL;
        *ret_spare = NULL;
        if (declaration_rare(d) && !(t && t->runs)) {
                *ret_spare = malloc(sizeof(**ret_spare));
                if (!*ret_spare)
                        return -ENOMEM;
        }
        if (!t || d->clock != (enum timerd_clock)t->clock ||
            timerq_kind_of(d->accuracy_usec) != timerq_kind_of(timer_accuracy(t)))
                e = queue_reserve(r, d);
        if (e >= 0 && d->lifetime == TIMERD_LIFETIME_RETAINED)
                e = changes_reserve(r, 1);
        /* Last: nothing after it fails, so a session it makes is used. */
        if (e >= 0 && d->lifetime == TIMERD_LIFETIME_TRANSIENT)
                e = session_get(r, caller->session, ret_session);
        if (e < 0) {
                free(*ret_spare);
                *ret_spare = NULL;
        }
        return e;
}

/* Out of the statistics, its queue, its runs and its declared counts: what a replace declares
 * again and an unlink drops. A gone timer (closing: its session) is in no count. */
static void timer_retire(struct registry *r, struct timer *t, const struct session *closing)
{
        if (!closing)
                stats_leave(r, t);
        if (closing && closing->dequeued)
                timerq_entry_init(&t->entry);
        else
                timer_dequeue(r, t);
        run_detach(t);
        timer_undeclare(r, t);
}

int timer_new_uncounted(struct registry *r, const struct td_caller *caller, const char *name,
                        const struct td_declaration *d, uint64_t generation,
                        const struct timer_place *place, struct timer **ret)
{
        struct owner *owner = owner_find(r, caller->uid), *new_owner = NULL;
        uint32_t account = owner ? owner->account : registry_account_of(r, caller->uid);
        struct session *session = NULL;
        struct timer_runs *spare = NULL;
        size_t len = strlen(name);
        struct timer *t;
        int e = -ENOMEM;

        /* Every allocation first: past this block nothing can fail. The name starts inside the
         * structure's tail padding. */
        t = calloc(1, timer_size(len));
        if (!t)
                return -ENOMEM;
        if (!owner) {
                new_owner = malloc(sizeof(*new_owner));
                if (!new_owner)
                        goto fail;
                e = hashmap_reserve(&r->owners, r->owners.n_entries + 1);
                if (e < 0)
                        goto fail;
        }
        e = hashmap_reserve(&r->timers, r->timers.n_entries + 1);
        if (e >= 0 && account != caller->uid)
                e = tally_reserve(&r->accounts, account);
        if (e >= 0)
                e = declare_reserve(r, NULL, caller, d, &session, &spare);
        if (e < 0)
                goto fail;

        if (new_owner) {
                *new_owner = (struct owner){.uid = caller->uid, .account = account};
                list_init(&new_owner->pending);
                list_init(&new_owner->silenced_node);
                hashmap_insert(&r->owners, hash_mix64(caller->uid), new_owner);
                owner = new_owner;
        }
        r->last_owner = owner;
        /* The name of a gone timer is free at once: its record goes before the new one comes. */
        uint64_t hash = place->hash;
        struct timer *gone = r->n_gone > 0 ? timer_lookup_hashed(r, hash, caller->uid, name) : NULL;
        if (gone)
                timer_reap(r, session_find(r, gone->session), gone, hash);
        memcpy(t->name, name, len + 1);
        timerq_entry_init(&t->entry);
        t->uid = caller->uid;
        list_init(&t->transient_node);
        owner_timers_add(r, owner, 1);
        hashmap_insert(&r->timers, hash, t);
        if (place->after_last)
                inventory_append(&r->inventory, &t->inventory_node);
        else
                inventory_insert(&r->inventory, &t->inventory_node);
        timer_declare(r, t, caller, d, generation, session, spare);
        *ret = t;
        return 0;

fail:
        if (account != caller->uid)
                tally_unreserve(&r->accounts, account);
        free(new_owner);
        free(t);
        return e;
}

int timer_new(struct registry *r, const struct td_caller *caller, const char *name,
              const struct td_declaration *d, uint64_t generation, const struct timer_place *place,
              struct timer **ret)
{
        int e = timer_new_uncounted(r, caller, name, d, generation, place, ret);

        if (e >= 0)
                stats_enter(r, *ret);
        return e;
}

/* Register(replace): the same identity starts over with a new declaration and generation. */
int timer_redeclare(struct registry *r, struct timer *t, const struct td_caller *caller,
                    const struct td_declaration *d, uint64_t generation)
{
        struct timer_runs *spare;
        struct session *session;
        int e = declare_reserve(r, t, caller, d, &session, &spare);

        if (e < 0)
                return e;

        /* While it is still what it was: a retained timer replaced by a transient one must be
         * written as removed. */
        timer_changed(r, t);
        timer_retire(r, t, NULL);
        timer_declare(r, t, caller, d, generation, session, spare);
        stats_enter(r, t);
        return 0;
}

/* Take t (gone when closing is its session, else NULL; hash is its timer_hash()) out of every
 * index and list. */
static void timer_unlink_known(struct registry *r, struct timer *t, const struct session *closing,
                               uint64_t hash)
{
        timer_retire(r, t, closing);
        hashmap_remove(&r->timers, hash, t);
        if (!closing || !closing->detached)
                inventory_remove(&r->inventory, &t->inventory_node);
        if (closing)
                return;

        struct owner *owner = owner_find(r, t->uid);
        owner_timers_sub(r, owner, 1);
        owner_silenced(r, owner, t);
}

void timer_unlink(struct registry *r, struct timer *t)
{
        timer_unlink_known(r, t, gone_session(r, t), timer_hash(t));
}

/* A timer the journal may hold (retained, or changed since the commit) is kept until its
 * removal is committed: its place in the changes is reserved, so removing never fails. */
static void timer_destroy_known(struct registry *r, struct timer *t, const struct session *closing,
                                uint64_t hash)
{
        bool keep = timer_retained(t) || t->changed;

        if (keep)
                changes_add(r, t);
        timer_unlink_known(r, t, closing, hash);
        if (!keep) {
                timer_free(t);
                return;
        }
        t->removed = true;
}

void timer_destroy(struct registry *r, struct timer *t)
{
        timer_destroy_known(r, t, gone_session(r, t), timer_hash(t));
}

uint64_t timer_reap_prefetch(const struct registry *r, const struct timer *t)
{
        uint64_t hash = timer_hash(t);

        hashmap_prefetch(&r->timers, hash);
        return hash;
}

void timer_reap(struct registry *r, const struct session *s, struct timer *t, uint64_t hash)
{
        /* What timer_gone() finds, without its lookup. */
        assert(s->closing && t->lifetime == TIMERD_LIFETIME_TRANSIENT && t->session == s->id);
        removal_push(r, s, t);
        timer_destroy_known(r, t, s, hash);
        r->n_gone--;
}

void gone_reap_one(struct registry *r)
{
        assert(r->n_gone > 0);
        for (;;) {
                struct session *s = list_entry(r->closing.next, struct session, closing_node);

                if (!list_empty(&s->transient)) {
                        struct timer *t =
                            list_entry(s->transient.next, struct timer, transient_node);

                        timer_reap(r, s, t, timer_hash(t));
                        return;
                }
                session_free(r, s);
        }
}

/*
 * The deadlines of a recurring schedule at `deadline` due by `now` (a handover makes them due
 * early): how many (*ret_due) and the first deadline after them (*ret_next). -TIMERD_E_OVERFLOW
 * when that is past the clock's range.
 */
int schedule_skip(uint64_t deadline, uint64_t cadence_usec, uint64_t handover_usec, uint64_t now,
                  uint64_t *ret_due, uint64_t *ret_next)
{
        uint64_t reach = value_saturating_add(now, handover_usec), advance;

        *ret_due = 0;
        *ret_next = deadline;
        if (deadline > reach)
                return 0;
        if (value_add_overflow((reach - deadline) / cadence_usec, 1, ret_due) ||
            __builtin_mul_overflow(*ret_due, cadence_usec, &advance) ||
            value_add_overflow(deadline, advance, ret_next))
                return -TIMERD_E_OVERFLOW;
        return 0;
}

/* The next wake-up, if any: the queued one, or the one a running timer arms at completion. */
bool timer_next_deadline(const struct timer *t, uint64_t *ret)
{
        if (timer_queued(t)) {
                *ret = t->deadline_usec;
                return true;
        }
        if (t->run_active && t->after_run == AFTER_RUN_DEADLINE) {
                *ret = t->runs->state.deferred_deadline_usec;
                return true;
        }
        return false;
}

/* The indexes and queues of an empty registry. */
void registry_indexes_init(struct registry *r)
{
        hashmap_init(&r->timers, timer_hash_of);
        hashmap_init(&r->owners, owner_hash_of);
        hashmap_init(&r->sessions, session_hash_of);
        tally_init(&r->accounts);
        inventory_init(&r->inventory, INVENTORY_OFFSET(struct timer, inventory_node, uid),
                       INVENTORY_OFFSET(struct timer, inventory_node, name));
        for (enum timerd_clock c = 0; c < TIMERD_CLOCK_MAX; c++)
                timerq_init(&r->queues[c], timer_entry_before);
}

/* Every live timer, owner and session record, and the indexes and queues that held them. */
void registry_shrink(struct registry *r)
{
        removals_shrink(r);
        hashmap_shrink(&r->timers);
        hashmap_shrink(&r->sessions);
        for (enum timerd_clock c = 0; c < TIMERD_CLOCK_MAX; c++)
                for (enum timerq_kind k = 0; k < TIMERQ_KIND_MAX; k++)
                        timerq_shrink(&r->queues[c], k, r->n_declared[c][k]);
}

void registry_indexes_free(struct registry *r)
{
        size_t i = 0;
        void *p;

        while ((p = hashmap_next(&r->timers, &i)))
                timer_free(p);
        i = 0;
        while ((p = hashmap_next(&r->owners, &i)))
                free(p);
        i = 0;
        while ((p = hashmap_next(&r->sessions, &i)))
                free(p);
        hashmap_done(&r->timers);
        hashmap_done(&r->owners);
        hashmap_done(&r->sessions);
        tally_done(&r->accounts);
        for (enum timerd_clock c = 0; c < TIMERD_CLOCK_MAX; c++)
                timerq_done(&r->queues[c]);
}
