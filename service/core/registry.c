/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <assert.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "base/hashmap.h"
#include "service/core/inventory.h"
#include "base/list.h"
#include "service/core/registry.h"
#include "service/core/timerq.h"

/*
 * What a once or after-completion timer does when its run ends with directive continue. An
 * interval or watchdog due again during its run is held (AFTER_RUN_DEADLINE): it leaves the queue,
 * so that a run nobody takes costs no wake-ups, and the deadlines that pass meanwhile are counted
 * as overruns when the run is taken or ends.
 */
enum after_run {
        AFTER_RUN_POLICY,   /* once: nothing; after-completion: completion + cadence */
        AFTER_RUN_DEADLINE, /* the deadline set during the run, or the held schedule */
        AFTER_RUN_NONE,     /* cancelled during the run */
};

/* Kept once made, also without timers: last_generation tells a stale claim of this owner from
 * one it was never given (a uid that ever registered costs this record). */
struct owner {
        uint32_t uid;
        size_t n_timers;
        uint64_t last_generation;           /* the highest generation given to this owner */
        uint64_t n_state[TIMERD_STATE_MAX]; /* its timers by state, for its own Status */
        uint64_t n_pending;
        struct list_node pending;       /* struct timer_runs of firings not yet handed to a waiter,
                                         * oldest first */
        struct list_node silenced_node; /* in the registry's silenced list, or unlinked */
};

/* Kept from a session's first transient timer or delivered run until registry_session_closed(). */
struct session {
        uint64_t id;
        struct list_node transient;
        struct list_node delivered; /* struct timer_runs of runs handed to this session */
};

/* The runs of a registration so far and the current one; a replace starts it over (all zero). */
struct run_state {
        uint64_t run;
        uint64_t run_deadline_usec;
        uint64_t run_fired_usec;
        uint64_t deferred_deadline_usec; /* after_run DEADLINE: what the run's end arms */
        uint64_t missed_deadline_usec;   /* has_missed_deadline: what a delayed catch-up reports */
        uint64_t runs;
        uint64_t consecutive_expected_failures;
        uint64_t overruns;
        uint64_t overruns_reported; /* overruns when the last firing was handed over */
        uint64_t last_start_usec;
        uint64_t last_finish_usec;
        uint64_t last_duration_usec;
        uint64_t total_duration_usec;
        /* A cadence Reschedule set, which the live schedule follows; 0: the declared one. Kept out
         * of the declaration, which only Register and Reconcile change. */
        uint64_t live_cadence_usec;
        enum timerd_outcome last_outcome;
        struct td_run_end last_end;
        bool has_last_start;
        bool has_last_finish;
        bool last_catch_up; /* the last run was a catch-up (see struct timer's catching_up) */
};

/*
 * Allocated when a timer first fires (or is put back with runs, or with a delayed catch-up), so
 * that a timer that never ran carries none of it. While a run is active, waiter_node is in the
 * owner's pending list, or, once the run was handed over, in the delivering session's list.
 */
struct timer_runs {
        struct timer *timer;
        struct list_node waiter_node;
        struct session *delivered_to; /* NULL while pending */
        struct run_state state;
};

/*
 * A timer, packed: there may be millions. Its owner and session records are found by uid and
 * session id; its hash is computed from (uid, name) when the table needs it; the declaration's
 * enums and the flags share one bit-field word; the name starts in the tail padding. With a name
 * of up to 8 bytes the allocation is 120 bytes: one 128-byte malloc chunk.
 */
struct timer {
        struct timerq_entry entry; /* queued at deadline_usec - handover */
        uint64_t deadline_usec;    /* while queued: the deadline itself */
        uint64_t generation;
        uint64_t session;
        struct inventory_node inventory_node; /* in (owner, name) order */
        struct list_node transient_node;      /* transient: in its session's list */
        struct timer_runs *runs;              /* NULL until it first fires */

        /* The declaration (timer_declaration() puts it together). A calendar timer has no
         * cadence: its schedule takes the place (timer_calendar()), and a timer stays one chunk. */
        union {
                uint64_t cadence_usec;
                const struct td_calendar *calendar; /* a reference */
        };
        uint64_t accuracy_usec;
        uint64_t randomized_delay_usec;
        uint32_t uid;
        uint32_t handover_usec; /* at most TIMERD_HANDOVER_MAX_USEC */
        int signo;
        unsigned policy : 3;
        unsigned clock : 3;
        unsigned lifetime : 1;
        unsigned delivery : 2;
        bool catch_up : 1;

        unsigned failure : 3; /* enum timerd_failure */
        unsigned after_run : 2;
        bool run_active : 1;
        /* A catch-up delayed at restore: its firing reports runs->state.missed_deadline_usec. */
        bool has_missed_deadline : 1;
        /* The queued deadline passed while the service was down and fires as a catch-up. */
        bool catching_up : 1;
        bool changed : 1; /* in the registry's changes: changed since the last commit, or removed */
        bool removed : 1; /* kept until its removal is committed; found by no index */
        bool has_before : 1; /* a `before` keeps how it was at the first call since the commit */
        bool queued_past_due : 1; /* queued at a deadline already due then */
        bool may_deliver : 1;     /* timer_may_deliver() when the stats last counted it */

        char name[];
};

static_assert(TIMERD_POLICY_MAX <= 8 && TIMERD_CLOCK_MAX <= 8 && TIMERD_LIFETIME_MAX <= 2 &&
                  TIMERD_DELIVERY_MAX <= 4 && TIMERD_FAILURE_MAX <= 8 && AFTER_RUN_NONE < 4,
              "struct timer: bit-field widths");
static_assert(TIMERD_HANDOVER_MAX_USEC <= UINT32_MAX, "struct timer: handover_usec");

/* Everything a timer is, to put it back: a restored one, or one a failed commit undoes. */
struct timer_image {
        struct td_declaration declaration;
        uint64_t generation;
        uint64_t session;
        enum timerd_failure failure;
        enum after_run after_run;
        bool run_active;
        bool has_missed_deadline;
        bool catching_up;
        bool has_runs;
        struct run_state runs;
        bool queued;
        uint64_t deadline_usec;
        bool pending;
        uint64_t delivered_to; /* the session the active run was handed to; 0: none */
};

/* A retained timer before the first client call since the last commit changed it. */
struct before {
        struct list_node node; /* in the order of the calls */
        struct timer *timer;   /* live or removed */
        bool existed;          /* false: a call created it */
        uint32_t owner;
        char name[TIMERD_NAME_MAX + 1];
        struct timer_image image;
};

/* A pre-image holds its own reference to the calendar it declares. */
static void before_free(struct before *b)
{
        if (b)
                td_calendar_unref(b->image.declaration.calendar);
        free(b);
}

/* The one kernel timer of a clock, as last requested from the runtime. */
struct clock_arm {
        bool armed;
        uint64_t deadline_usec;
        uint64_t generation;
};

struct registry {
        struct registry_config config;
        struct hashmap timers;   /* (owner, name) → struct timer */
        struct hashmap owners;   /* uid → struct owner */
        struct hashmap sessions; /* id → struct session */
        /* The same timers in (owner, name) order. */
        struct inventory inventory;
        struct timerq queues[TIMERD_CLOCK_MAX];
        /* The room each queue keeps reserved, by kind (exact or coalescing). */
        size_t n_declared[TIMERD_CLOCK_MAX][TIMERQ_KIND_MAX];
        struct clock_arm arms[TIMERD_CLOCK_MAX];
        uint64_t last_generation;
        uint64_t last_handle_generation;

        /*
         * Timers changed since the last commit, live or removed (the journal may hold them), in
         * the order of their first change. Every retained timer that is not in it yet has its
         * place reserved (changes_capacity >= n_changes + retained ones not changed), so that a
         * change, a firing or a removal never needs memory: room is made when a timer becomes
         * retained, which allocates anyway.
         */
        struct timer **changes;
        size_t n_changes;
        size_t changes_capacity;
        size_t n_retained;        /* live retained timers */
        struct list_node befores; /* struct before */
        uint64_t change_count;
        bool in_call; /* a client call: keep what it changes for a rollback */

        uint64_t n_state[TIMERD_STATE_MAX];
        uint64_t n_pending;
        uint64_t firings;
        uint64_t overruns;
        uint64_t stale_expiries;
        uint64_t random_state; /* the fresh random delays of calendar timers */

        enum td_schedule_problem problem; /* why the current call is InvalidSchedule */
        struct td_effect *effects;
        size_t n_effects;
        size_t effects_capacity;
        /* struct owner: a notify timer of theirs had something to deliver and has nothing now
         * (see registry_take_silenced_owner()), in the order of the first such change. */
        struct list_node silenced;
};

struct identity {
        uint32_t owner;
        const char *name;
};

/* A sum of times or counts that the wire could not carry is an overflow (the IDL's int). */
static bool value_add_overflow(uint64_t a, uint64_t b, uint64_t *ret)
{
        return __builtin_add_overflow(a, b, ret) || *ret > TD_VALUE_MAX;
}

static uint64_t saturating_add(uint64_t a, uint64_t b)
{
        uint64_t sum;
        return value_add_overflow(a, b, &sum) ? TD_VALUE_MAX : sum;
}

static bool clock_valid(enum timerd_clock c)
{
        return c >= 0 && c < TIMERD_CLOCK_MAX;
}

static uint64_t identity_hash(uint32_t owner, const char *name)
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

static struct inventory_key timer_inventory_key(const struct inventory_node *node)
{
        const struct timer *t = inventory_entry(node, struct timer, inventory_node);

        return (struct inventory_key){.owner = t->uid, .name = t->name};
}

static struct timer *timer_find(const struct registry *r, uint32_t owner, const char *name)
{
        struct identity id = {.owner = owner, .name = name};

        return hashmap_find(&r->timers, identity_hash(owner, name), timer_matches, &id);
}

static struct owner *owner_find(const struct registry *r, uint32_t uid)
{
        return hashmap_find(&r->owners, hash_mix64(uid), owner_matches, &uid);
}

static struct session *session_find(const struct registry *r, uint64_t id)
{
        return hashmap_find(&r->sessions, hash_mix64(id), session_matches, &id);
}

/* The session's record, created on first use. -ENOMEM. */
static int session_get(struct registry *r, uint64_t id, struct session **ret)
{
        struct session *s = session_find(r, id);
        int e;

        if (!s) {
                e = hashmap_reserve(&r->sessions, r->sessions.n_entries + 1);
                if (e < 0)
                        return e;
                s = malloc(sizeof(*s));
                if (!s)
                        return -ENOMEM;
                s->id = id;
                list_init(&s->transient);
                list_init(&s->delivered);
                hashmap_insert(&r->sessions, hash_mix64(id), s);
        }
        *ret = s;
        return 0;
}

/* A run state of all zero: what a timer that never fired reports. */
static const struct run_state no_runs = {.last_outcome = TIMERD_OUTCOME_NONE};

static const struct run_state *timer_run_state(const struct timer *t)
{
        return t->runs ? &t->runs->state : &no_runs;
}

static bool run_state_empty(const struct run_state *rs)
{
        return rs->run == 0 && rs->run_deadline_usec == 0 && rs->run_fired_usec == 0 &&
               rs->deferred_deadline_usec == 0 && rs->missed_deadline_usec == 0 && rs->runs == 0 &&
               rs->consecutive_expected_failures == 0 && rs->overruns == 0 &&
               rs->last_start_usec == 0 && rs->last_finish_usec == 0 &&
               rs->last_duration_usec == 0 && rs->total_duration_usec == 0 &&
               rs->live_cadence_usec == 0 && rs->last_outcome == TIMERD_OUTCOME_NONE &&
               rs->last_end.exit == TIMERD_EXIT_NONE && rs->last_end.code == 0 &&
               !rs->has_last_start && !rs->has_last_finish;
}

static void timer_runs_adopt(struct timer *t, struct timer_runs *runs,
                             const struct run_state *state)
{
        *runs = (struct timer_runs){.timer = t, .state = *state};
        list_init(&runs->waiter_node);
        t->runs = runs;
}

/* Give t its runs record (all zero), unless it has one. Changes nothing else. -ENOMEM. */
static int timer_runs_attach(struct timer *t)
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

/* The cadence the schedule follows: Reschedule's, else the declared one. */
static uint64_t live_cadence(uint64_t declared_usec, const struct run_state *rs)
{
        return rs->live_cadence_usec > 0 ? rs->live_cadence_usec : declared_usec;
}

/* The schedule of a calendar timer, else NULL. */
static const struct td_calendar *timer_calendar(const struct timer *t)
{
        return t->policy == TIMERD_POLICY_CALENDAR ? t->calendar : NULL;
}

/* The declared cadence: a calendar timer's schedule takes its place. */
static uint64_t timer_declared_cadence(const struct timer *t)
{
        return t->policy == TIMERD_POLICY_CALENDAR ? 0 : t->cadence_usec;
}

/* The cadence the schedule follows now. */
static uint64_t timer_cadence(const struct timer *t)
{
        return live_cadence(timer_declared_cadence(t), timer_run_state(t));
}

static void timer_free(struct timer *t)
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
static int schedule_invalid(enum td_schedule_problem *ret_problem, enum td_schedule_problem problem)
{
        *ret_problem = problem;
        return -TIMERD_E_INVALID_SCHEDULE;
}

static int declaration_validate(const struct td_declaration *d,
                                enum td_schedule_problem *ret_problem)
{
        if (d->policy < 0 || d->policy >= TIMERD_POLICY_MAX || !clock_valid(d->clock) ||
            d->lifetime < 0 || d->lifetime >= TIMERD_LIFETIME_MAX || d->delivery < 0 ||
            d->delivery >= TIMERD_DELIVERY_MAX)
                return -TIMERD_E_INVALID_PARAMETER;
        /* A signal number only with signal delivery; the runtime checks it is a real one. */
        if (d->delivery == TIMERD_DELIVERY_SIGNAL ? d->signo <= 0 : d->signo != 0)
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

static struct td_declaration timer_declaration(const struct timer *t)
{
        return (struct td_declaration){
            .policy = (enum timerd_policy)t->policy,
            .cadence_usec = timer_declared_cadence(t),
            .clock = (enum timerd_clock)t->clock,
            .lifetime = (enum timerd_lifetime)t->lifetime,
            .delivery = (enum timerd_delivery)t->delivery,
            .accuracy_usec = t->accuracy_usec,
            .signo = t->signo,
            .catch_up = t->catch_up,
            .randomized_delay_usec = t->randomized_delay_usec,
            .handover_usec = t->handover_usec,
            .calendar = timer_calendar(t),
        };
}

/* d is valid (declaration_validate()): every value fits its field. */
static void timer_set_declaration(struct timer *t, const struct td_declaration *d)
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
        t->accuracy_usec = d->accuracy_usec;
        t->signo = d->signo;
        t->catch_up = d->catch_up;
        t->randomized_delay_usec = d->randomized_delay_usec;
        t->handover_usec = (uint32_t)d->handover_usec;
}

static bool declaration_equal(const struct timer *t, const struct td_declaration *b)
{
        const struct td_declaration declaration = timer_declaration(t), *a = &declaration;

        return a->policy == b->policy && a->cadence_usec == b->cadence_usec &&
               a->clock == b->clock && a->lifetime == b->lifetime && a->delivery == b->delivery &&
               a->accuracy_usec == b->accuracy_usec && a->signo == b->signo &&
               a->catch_up == b->catch_up && a->randomized_delay_usec == b->randomized_delay_usec &&
               a->handover_usec == b->handover_usec && td_calendar_equal(a->calendar, b->calendar);
}

/* Once, after-completion and calendar timers leave the queue while a run is active; the others
 * stay. */
static bool policy_runs_off_queue(enum timerd_policy p)
{
        return p == TIMERD_POLICY_ONCE || p == TIMERD_POLICY_AFTER_COMPLETION ||
               p == TIMERD_POLICY_CALENDAR;
}

/* splitmix64 (a Weyl sequence through the table's mixer): deterministic from the configured
 * seed, so the core stays pure. */
static uint64_t random_next(struct registry *r)
{
        return hash_mix64(r->random_state += UINT64_C(0x9e3779b97f4a7c15));
}

/*
 * The deadline of a calendar timer's next elapse strictly after `after`, delayed by a random part
 * of randomized_delay_usec: fresh each elapse, or fixed by the timer's identity. 0;
 * -TIMERD_E_INVALID_SCHEDULE (calendar_never) when no elapse is left; -TIMERD_E_OVERFLOW.
 */
static int calendar_deadline(struct registry *r, uint32_t owner, const char *name,
                             const struct td_declaration *d, uint64_t after, uint64_t *ret)
{
        uint64_t elapse, delay = 0;

        if (td_calendar_next(d->calendar, after, &elapse) < 0)
                return schedule_invalid(&r->problem, TD_SCHEDULE_CALENDAR_NEVER);
        if (d->randomized_delay_usec > 0)
                delay = (d->calendar->fixed_random_delay ? identity_hash(owner, name)
                                                         : random_next(r)) %
                        d->randomized_delay_usec;
        if (__builtin_add_overflow(elapse, delay, ret))
                return -TIMERD_E_OVERFLOW;
        return 0;
}

static struct timer *timer_of_entry(struct timerq_entry *e)
{
        return (struct timer *)(void *)((char *)e - offsetof(struct timer, entry));
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

static bool timer_queued(const struct timer *t)
{
        return timerq_entry_queued(&t->entry);
}

static bool timer_pending(const struct timer *t)
{
        return t->runs && !t->runs->delivered_to && list_linked(&t->runs->waiter_node);
}

static struct session *timer_delivered_to(const struct timer *t)
{
        return t->runs ? t->runs->delivered_to : NULL;
}

static enum timerd_state timer_state(const struct timer *t)
{
        if (t->failure != TIMERD_FAILURE_NONE)
                return TIMERD_STATE_FAILED;
        if (t->run_active)
                return TIMERD_STATE_RUNNING;
        if (timer_queued(t))
                return TIMERD_STATE_SCHEDULED;
        return TIMERD_STATE_INACTIVE;
}

static bool timer_retained(const struct timer *t)
{
        return t->lifetime == TIMERD_LIFETIME_RETAINED;
}

/* Its place is reserved (see struct registry). */
static void changes_add(struct registry *r, struct timer *t)
{
        if (t->changed)
                return;
        assert(r->n_changes < r->changes_capacity);
        r->changes[r->n_changes++] = t;
        t->changed = true;
}

/* A change to a retained timer (or to one a call made transient) is pending until committed. */
static void timer_changed(struct registry *r, struct timer *t)
{
        if (!timer_retained(t) && !t->has_before)
                return;
        r->change_count = saturating_add(r->change_count, 1);
        changes_add(r, t);
}

/* Room in the changes for n more retained timers besides every one there is. -ENOMEM. */
static int changes_reserve(struct registry *r, size_t more)
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
static void stats_leave(struct registry *r, const struct timer *t)
{
        struct owner *o = owner_find(r, t->uid);

        r->n_state[timer_state(t)]--;
        o->n_state[timer_state(t)]--;
        if (timer_pending(t)) {
                r->n_pending--;
                o->n_pending--;
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

static void stats_enter(struct registry *r, struct timer *t)
{
        struct owner *o = owner_find(r, t->uid);

        if (!timer_may_deliver(t))
                owner_silenced(r, o, t);
        t->may_deliver = timer_may_deliver(t);

        r->n_state[timer_state(t)]++;
        o->n_state[timer_state(t)]++;
        if (timer_pending(t)) {
                r->n_pending++;
                o->n_pending++;
        }
        timer_changed(r, t);
}

/* When a deadline is due in the queue: early by the declared handover, never before 0. */
static uint64_t handover_instant(const struct timer *t, uint64_t deadline_usec)
{
        return deadline_usec > t->handover_usec ? deadline_usec - t->handover_usec : 0;
}

static void timer_forget_missed_deadline(struct timer *t)
{
        t->has_missed_deadline = false;
        t->catching_up = false;
        if (t->runs)
                t->runs->state.missed_deadline_usec = 0;
}

/* A new schedule supersedes a catch-up. */
static void timer_enqueue(struct registry *r, struct timer *t, uint64_t deadline_usec, uint64_t now)
{
        timerq_put(&r->queues[t->clock], &t->entry, handover_instant(t, deadline_usec),
                   t->accuracy_usec);
        t->deadline_usec = deadline_usec;
        t->queued_past_due = handover_instant(t, deadline_usec) <= now;
        timer_forget_missed_deadline(t);
}

static void timer_dequeue(struct registry *r, struct timer *t)
{
        timerq_remove(&r->queues[t->clock], &t->entry);
        timer_forget_missed_deadline(t);
}

/* Detach an active run from its waiter bookkeeping (pending list or receiving session). */
static void run_detach(struct timer *t)
{
        if (!t->runs)
                return;
        if (list_linked(&t->runs->waiter_node))
                list_remove(&t->runs->waiter_node);
        t->runs->delivered_to = NULL;
}

/* Counter room: each mutating call needs `n` handle generations (one per clock it may re-arm). */
static int handle_generations_check(const struct registry *r, uint64_t n)
{
        return UINT64_MAX - r->last_handle_generation >= n ? 0 : -TIMERD_E_OVERFLOW;
}

static int generation_check(const struct registry *r)
{
        return r->last_generation < TD_VALUE_MAX ? 0 : -TIMERD_E_OVERFLOW;
}

static void effects_begin(struct registry *r)
{
        r->n_effects = 0;
        r->problem = TD_SCHEDULE_OK;
}

static int effects_reserve(struct registry *r, size_t n)
{
        struct td_effect *effects;
        size_t capacity;

        if (n <= r->effects_capacity)
                return 0;
        if (r->effects_capacity > SIZE_MAX / 2 / sizeof(struct td_effect))
                return -ENOMEM;
        capacity = r->effects_capacity * 2 > n ? r->effects_capacity * 2 : n;
        effects = realloc(r->effects, capacity * sizeof(struct td_effect));
        if (!effects)
                return -ENOMEM;
        r->effects = effects;
        r->effects_capacity = capacity;
        return 0;
}

static void effect_push(struct registry *r, const struct td_effect *e)
{
        assert(r->n_effects < r->effects_capacity);
        r->effects[r->n_effects++] = *e;
}

static struct td_transition transition_done(const struct registry *r)
{
        return (struct td_transition){.n_effects = r->n_effects, .effects = r->effects};
}

static struct td_transition transition_failed(struct registry *r, int failure)
{
        assert(failure < 0);
        r->n_effects = 0;
        return (struct td_transition){
            .failure = failure,
            .schedule_problem = failure == -TIMERD_E_INVALID_SCHEDULE ? r->problem : TD_SCHEDULE_OK,
            .effects = r->effects,
        };
}

/*
 * Bring the clock's kernel timer in line with its queue: ARM when the arm time changed, DISARM
 * when nothing is left. `spent`: the kernel timer expired, failed to arm or must be re-armed, so
 * there is always a new ARM or DISARM (and the old generation goes stale). Every entry point ends
 * with every clock in sync.
 */
static void clock_sync(struct registry *r, enum timerd_clock c, bool spent)
{
        struct clock_arm *a = &r->arms[c];
        uint64_t when;

        if (!timerq_arm_time(&r->queues[c], &when)) {
                if (!a->armed && !spent)
                        return;
                *a = (struct clock_arm){.generation = ++r->last_handle_generation};
                effect_push(r, &(struct td_effect){
                                   .kind = TD_EFFECT_DISARM,
                                   .arm = {.clock = c, .generation = a->generation},
                               });
                return;
        }
        if (!spent && a->armed && a->deadline_usec == when)
                return;
        *a = (struct clock_arm){
            .armed = true,
            .deadline_usec = when,
            .generation = ++r->last_handle_generation,
        };
        effect_push(r, &(struct td_effect){
                           .kind = TD_EFFECT_ARM,
                           .arm = {.clock = c, .deadline_usec = when, .generation = a->generation},
                       });
}

static struct td_transition transition_sync(struct registry *r)
{
        for (enum timerd_clock c = 0; c < TIMERD_CLOCK_MAX; c++)
                clock_sync(r, c, false);
        return transition_done(r);
}

static int session_validate(uint64_t session)
{
        return session > 0 ? 0 : -EINVAL;
}

/* Where a new registration starts: start_usec, or now + cadence, or the next calendar elapse, or
 * nowhere (once). A periodic timer whose next deadline after that could not be carried overflows
 * now, not at its firing. */
static int first_deadline(struct registry *r, const struct td_register_args *a,
                          const struct td_now *now, bool *ret_has, uint64_t *ret_deadline)
{
        const struct td_declaration *d = &a->declaration;
        bool has_start = a->has_start;
        uint64_t start_usec = a->start_usec, successor;

        *ret_has = has_start || d->policy != TIMERD_POLICY_ONCE;
        if (has_start)
                *ret_deadline = start_usec;
        else if (d->calendar)
                return calendar_deadline(r, a->caller.uid, a->name, d, now->usec[d->clock],
                                         ret_deadline);
        else if (*ret_has && value_add_overflow(now->usec[d->clock], d->cadence_usec, ret_deadline))
                return -TIMERD_E_OVERFLOW;
        if (d->policy != TIMERD_POLICY_ONCE && !d->calendar &&
            value_add_overflow(*ret_deadline, d->cadence_usec, &successor))
                return -TIMERD_E_OVERFLOW;
        return 0;
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

/* Give t a declaration and a generation. Its session record must exist when transient. */
static void timer_declare(struct registry *r, struct timer *t, const struct td_caller *caller,
                          const struct td_declaration *d, uint64_t generation,
                          struct session *transient_of)
{
        timer_set_declaration(t, d);
        t->session = caller->session;
        t->generation = generation;
        if (generation > r->last_generation)
                r->last_generation = generation;
        struct owner *owner = owner_find(r, t->uid);
        if (generation > owner->last_generation)
                owner->last_generation = generation;
        if (d->lifetime == TIMERD_LIFETIME_TRANSIENT)
                list_append(&transient_of->transient, &t->transient_node);
        (*declared_count(r, d->clock, d->accuracy_usec))++;
        r->n_retained += d->lifetime == TIMERD_LIFETIME_RETAINED;
        t->failure = TIMERD_FAILURE_NONE;
        t->after_run = AFTER_RUN_POLICY;
        t->run_active = false;
        t->has_missed_deadline = false;
        t->catching_up = false;
        free(t->runs);
        t->runs = NULL;
}

/* The other way: what declaring t counted and linked. */
static void timer_undeclare(struct registry *r, struct timer *t)
{
        if (list_linked(&t->transient_node))
                list_remove(&t->transient_node);
        (*declared_count(r, t->clock, t->accuracy_usec))--;
        r->n_retained -= timer_retained(t);
}

/* Room for one more timer of uid. Restored timers do not count against the limits. */
static int timer_limits_check(const struct registry *r, uint32_t uid)
{
        const struct owner *owner = owner_find(r, uid);

        if (r->config.max_timers > 0 && r->timers.n_entries >= r->config.max_timers)
                return -TIMERD_E_LIMIT_EXCEEDED;
        if (r->config.max_timers_per_owner > 0 && owner &&
            owner->n_timers >= r->config.max_timers_per_owner)
                return -TIMERD_E_LIMIT_EXCEEDED;
        return 0;
}

/* The allocation for a timer named with len bytes. */
static size_t timer_size(size_t len)
{
        size_t size = offsetof(struct timer, name) + len + 1;

        return size > sizeof(struct timer) ? size : sizeof(struct timer);
}

static int timer_create(struct registry *r, const struct td_caller *caller, const char *name,
                        const struct td_declaration *d, uint64_t generation, struct timer **ret)
{
        struct owner *owner = owner_find(r, caller->uid), *new_owner = NULL;
        struct session *session = NULL;
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
        if (e >= 0)
                e = queue_reserve(r, d);
        if (e >= 0 && d->lifetime == TIMERD_LIFETIME_RETAINED)
                e = changes_reserve(r, 1);
        if (e >= 0 && d->lifetime == TIMERD_LIFETIME_TRANSIENT)
                e = session_get(r, caller->session, &session);
        if (e < 0)
                goto fail;

        if (new_owner) {
                *new_owner = (struct owner){.uid = caller->uid};
                list_init(&new_owner->pending);
                list_init(&new_owner->silenced_node);
                hashmap_insert(&r->owners, hash_mix64(caller->uid), new_owner);
                owner = new_owner;
        }
        memcpy(t->name, name, len + 1);
        timerq_entry_init(&t->entry);
        t->uid = caller->uid;
        list_init(&t->transient_node);
        owner->n_timers++;
        hashmap_insert(&r->timers, timer_hash(t), t);
        inventory_insert(&r->inventory, &t->inventory_node);
        timer_declare(r, t, caller, d, generation, session);
        stats_enter(r, t);
        *ret = t;
        return 0;

fail:
        free(new_owner);
        free(t);
        return e;
}

/* Register(replace): the same identity starts over with a new declaration and generation. */
static int timer_redeclare(struct registry *r, struct timer *t, const struct td_caller *caller,
                           const struct td_declaration *d, uint64_t generation)
{
        struct session *session = NULL;
        int e = 0;

        if (d->clock != (enum timerd_clock)t->clock ||
            timerq_kind_of(d->accuracy_usec) != timerq_kind_of(t->accuracy_usec))
                e = queue_reserve(r, d);
        if (e >= 0 && d->lifetime == TIMERD_LIFETIME_RETAINED)
                e = changes_reserve(r, 1);
        if (e >= 0 && d->lifetime == TIMERD_LIFETIME_TRANSIENT)
                e = session_get(r, caller->session, &session);
        if (e < 0)
                return e;

        /* While it is still what it was: a retained timer replaced by a transient one must be
         * written as removed. */
        timer_changed(r, t);
        stats_leave(r, t);
        timer_dequeue(r, t);
        run_detach(t);
        timer_undeclare(r, t);
        timer_declare(r, t, caller, d, generation, session);
        stats_enter(r, t);
        return 0;
}

/* Take t out of every index and list; the caller frees it or keeps it as a removal. */
static void timer_unlink(struct registry *r, struct timer *t)
{
        struct owner *owner = owner_find(r, t->uid);

        stats_leave(r, t);
        timer_dequeue(r, t);
        run_detach(t);
        timer_undeclare(r, t);
        hashmap_remove(&r->timers, timer_hash(t), t);
        inventory_remove(&r->inventory, &t->inventory_node);

        owner->n_timers--;
        owner_silenced(r, owner, t);
}

/* A timer the journal may hold (retained, or changed since the commit) is kept until its
 * removal is committed: its place in the changes is reserved, so removing never fails. */
static void timer_destroy(struct registry *r, struct timer *t)
{
        bool keep = timer_retained(t) || t->changed;

        if (keep)
                changes_add(r, t);
        timer_unlink(r, t);
        if (!keep) {
                timer_free(t);
                return;
        }
        t->removed = true;
}

/*
 * Make `deadline` the timer's next wake-up: queued now, or, for a once or after-completion timer
 * during a run, armed when the run completes. An explicit schedule also clears a failure.
 */
static void timer_set_wakeup(struct registry *r, struct timer *t, uint64_t deadline_usec,
                             const struct td_now *now)
{
        stats_leave(r, t);
        t->failure = TIMERD_FAILURE_NONE;
        if (t->run_active && (policy_runs_off_queue((enum timerd_policy)t->policy) ||
                              t->after_run == AFTER_RUN_DEADLINE)) {
                t->after_run = AFTER_RUN_DEADLINE;
                t->runs->state.deferred_deadline_usec = deadline_usec;
        } else
                timer_enqueue(r, t, deadline_usec, now->usec[t->clock]);
        stats_enter(r, t);
}

/* Clear the live wake-up (and the one an active run would arm); the declaration stays. */
static void timer_clear_wakeup(struct registry *r, struct timer *t)
{
        stats_leave(r, t);
        t->failure = TIMERD_FAILURE_NONE;
        timer_dequeue(r, t);
        t->after_run = t->run_active && policy_runs_off_queue((enum timerd_policy)t->policy)
                           ? AFTER_RUN_NONE
                           : AFTER_RUN_POLICY;
        if (t->runs)
                t->runs->state.deferred_deadline_usec = 0;
        stats_enter(r, t);
}

/* An interval or watchdog held behind its run: its schedule is in deferred_deadline_usec. */
static bool timer_held(const struct timer *t)
{
        return t->after_run == AFTER_RUN_DEADLINE &&
               !policy_runs_off_queue((enum timerd_policy)t->policy);
}

static void timer_drop_hold(struct timer *t)
{
        if (!timer_held(t))
                return;
        t->after_run = AFTER_RUN_POLICY;
        t->runs->state.deferred_deadline_usec = 0;
}

/*
 * The deadlines of a recurring schedule at `deadline` due by `now` (a handover makes them due
 * early): how many (*ret_due) and the first deadline after them (*ret_next). -TIMERD_E_OVERFLOW
 * when that is past the clock's range.
 */
static int schedule_skip(uint64_t deadline, uint64_t cadence_usec, uint64_t handover_usec,
                         uint64_t now, uint64_t *ret_due, uint64_t *ret_next)
{
        uint64_t reach = saturating_add(now, handover_usec), advance;

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

/*
 * A held schedule at `now`: the deadlines it passed are overruns, and it moves past them, without
 * a wake-up. A count or deadline that would overflow fails the timer. Inside stats_leave/enter.
 */
static void hold_settle(struct registry *r, struct timer *t, uint64_t now)
{
        struct run_state *rs;
        uint64_t due, next, overruns;

        if (!timer_held(t))
                return;
        rs = &t->runs->state;
        if (schedule_skip(rs->deferred_deadline_usec, timer_cadence(t), t->handover_usec, now, &due,
                          &next) < 0 ||
            value_add_overflow(rs->overruns, due, &overruns)) {
                timer_drop_hold(t);
                t->failure = TIMERD_FAILURE_OVERFLOW;
                return;
        }
        r->overruns = saturating_add(r->overruns, due);
        rs->overruns = overruns;
        rs->deferred_deadline_usec = next;
}

static void timer_fail(struct registry *r, struct timer *t, enum timerd_failure failure)
{
        stats_leave(r, t);
        timer_dequeue(r, t);
        timer_drop_hold(t);
        t->failure = (unsigned)failure & 0x7u;
        stats_enter(r, t);
}

/* The next wake-up, if any: the queued one, or the one a running timer arms at completion. */
static bool timer_next_deadline(const struct timer *t, uint64_t *ret)
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

static void timer_dispatch(const struct timer *t, struct td_dispatch *ret)
{
        const struct run_state *rs = timer_run_state(t);

        *ret = (struct td_dispatch){
            .owner = t->uid,
            .name = t->name,
            .generation = t->generation,
            .run = rs->run,
            .clock = (enum timerd_clock)t->clock,
            .delivery = (enum timerd_delivery)t->delivery,
            .deadline_usec = rs->run_deadline_usec,
            .fired_usec = rs->run_fired_usec,
            .due_usec =
                saturating_add(handover_instant(t, rs->run_deadline_usec), t->accuracy_usec),
            .overruns = rs->overruns - rs->overruns_reported,
            .catch_up = rs->last_catch_up,
        };
}

/* A claim, or the token of the active run acting as one. */
static int handle_resolve(const struct registry *r, const struct td_handle *h, struct timer **ret)
{
        struct timer *t;

        if (!registry_name_valid(h->name))
                return -TIMERD_E_INVALID_NAME;
        t = timer_find(r, h->owner, h->name);
        if (!t) {
                /* Gone, or never given: only the owner's own history decides. */
                const struct owner *o = owner_find(r, h->owner);
                return o && h->generation > 0 && h->generation <= o->last_generation
                           ? -TIMERD_E_REGISTRATION_EXPIRED
                           : -TIMERD_E_NOT_FOUND;
        }
        if (h->generation != t->generation)
                return -TIMERD_E_REGISTRATION_EXPIRED;
        if (h->run != 0 && (!t->run_active || h->run != t->runs->state.run))
                return -TIMERD_E_REGISTRATION_EXPIRED;
        *ret = t;
        return 0;
}

static void timer_image_take(const struct timer *t, struct timer_image *ret)
{
        *ret = (struct timer_image){
            .declaration = timer_declaration(t),
            .generation = t->generation,
            .session = t->session,
            .failure = (enum timerd_failure)t->failure,
            .after_run = t->after_run,
            .run_active = t->run_active,
            .has_missed_deadline = t->has_missed_deadline,
            .catching_up = t->catching_up,
            .has_runs = t->runs != NULL,
            .runs = *timer_run_state(t),
            .queued = timer_queued(t),
            .deadline_usec = timer_queued(t) ? t->deadline_usec : 0,
            .pending = timer_pending(t),
            .delivered_to = timer_delivered_to(t) ? timer_delivered_to(t)->id : 0,
        };
}

/*
 * A client call is about to change t (NULL: to create a timer) that is retained or will be: keep
 * how it is, once per commit, so that a failed commit can put it back. Before anything changes;
 * the result goes to before_attach() once nothing can fail any more, or to free().
 */
static int before_prepare(const struct registry *r, const struct timer *t, bool retained_after,
                          struct before **ret)
{
        struct before *b;

        *ret = NULL;
        if (!r->in_call ||
            (t ? t->has_before || (!timer_retained(t) && !retained_after) : !retained_after))
                return 0;
        b = calloc(1, sizeof(*b));
        if (!b)
                return -ENOMEM;
        b->existed = t != NULL;
        if (t) {
                timer_image_take(t, &b->image);
                td_calendar_ref(b->image.declaration.calendar);
        }
        *ret = b;
        return 0;
}

static void before_attach(struct registry *r, struct timer *t, struct before *b)
{
        if (!b)
                return;
        b->timer = t;
        b->owner = t->uid;
        strcpy(b->name, t->name);
        list_append(&r->befores, &b->node);
        t->has_before = true;
        timer_changed(r, t);
}

/*
 * A control call is about to change t, and every check of its own passed: the last checks
 * (handle generations, the pre-image's memory) and the pre-image taken. Nothing fails after it.
 */
static int change_begin(struct registry *r, struct timer *t)
{
        struct before *b = NULL;
        int e = handle_generations_check(r, 1);

        if (e >= 0)
                e = before_prepare(r, t, timer_retained(t), &b);
        if (e < 0)
                return e;
        before_attach(r, t, b);
        return 0;
}

int registry_new(const struct registry_config *config, struct registry **ret)
{
        struct registry *r;

        if (!config || config->first_generation < 1 || config->first_handle_generation < 1)
                return -EINVAL;
        r = calloc(1, sizeof(*r));
        if (!r)
                return -ENOMEM;
        r->config = *config;
        r->last_generation = config->first_generation - 1;
        r->last_handle_generation = config->first_handle_generation - 1;
        r->random_state = config->random_seed;
        list_init(&r->befores);
        list_init(&r->silenced);
        hashmap_init(&r->timers, timer_hash_of);
        hashmap_init(&r->owners, owner_hash_of);
        hashmap_init(&r->sessions, session_hash_of);
        inventory_init(&r->inventory, timer_inventory_key);
        for (enum timerd_clock c = 0; c < TIMERD_CLOCK_MAX; c++)
                timerq_init(&r->queues[c], timer_entry_before);
        /* Transitions other than expiries emit at most one ARM or DISARM per clock. */
        if (effects_reserve(r, TIMERD_CLOCK_MAX) < 0) {
                free(r);
                return -ENOMEM;
        }
        *ret = r;
        return 0;
}

void registry_free(struct registry *r)
{
        size_t i = 0;
        void *p;

        if (!r)
                return;
        while (!list_empty(&r->befores)) {
                struct before *b = list_entry(r->befores.next, struct before, node);

                list_remove(&b->node);
                before_free(b);
        }
        for (size_t k = 0; k < r->n_changes; k++)
                if (r->changes[k]->removed)
                        timer_free(r->changes[k]);
        free(r->changes);
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
        for (enum timerd_clock c = 0; c < TIMERD_CLOCK_MAX; c++)
                timerq_done(&r->queues[c]);
        free(r->effects);
        free(r);
}

/* A cadence below the configured minimum would let one timer cost a wake-up that often. */
static int cadence_allowed(struct registry *r, uint64_t cadence_usec)
{
        return cadence_usec == 0 || cadence_usec >= r->config.min_cadence_usec
                   ? 0
                   : schedule_invalid(&r->problem, TD_SCHEDULE_CADENCE_BELOW_MINIMUM);
}

/* What Register and Reconcile check before looking at the registry. */
static int declare_args_validate(struct registry *r, const struct td_caller *caller,
                                 const char *name, const struct td_declaration *d)
{
        int e = session_validate(caller->session);

        if (e < 0)
                return e;
        if (!registry_name_valid(name))
                return -TIMERD_E_INVALID_NAME;
        e = declaration_validate(d, &r->problem);
        if (e < 0)
                return e;
        return cadence_allowed(r, d->cadence_usec);
}

struct td_transition registry_register(struct registry *r, const struct td_now *now,
                                       const struct td_register_args *a, uint64_t *ret_generation)
{
        struct before *b = NULL;
        struct timer *t;
        uint64_t deadline = 0;
        bool has_deadline;
        int e;

        effects_begin(r);
        e = declare_args_validate(r, &a->caller, a->name, &a->declaration);
        if (e < 0)
                return transition_failed(r, e);
        e = first_deadline(r, a, now, &has_deadline, &deadline);
        if (e < 0)
                return transition_failed(r, e);

        t = timer_find(r, a->caller.uid, a->name);
        if (t && !a->replace)
                return transition_failed(r, -TIMERD_E_ALREADY_REGISTERED);
        e = generation_check(r);
        if (e >= 0)
                e = handle_generations_check(
                    r, t && (enum timerd_clock)t->clock != a->declaration.clock ? 2 : 1);
        if (e >= 0 && !t)
                e = timer_limits_check(r, a->caller.uid);
        if (e >= 0)
                e = before_prepare(r, t, a->declaration.lifetime == TIMERD_LIFETIME_RETAINED, &b);
        if (e >= 0)
                e = t ? timer_redeclare(r, t, &a->caller, &a->declaration, r->last_generation + 1)
                      : timer_create(r, &a->caller, a->name, &a->declaration,
                                     r->last_generation + 1, &t);
        if (e < 0) {
                before_free(b);
                return transition_failed(r, e);
        }

        before_attach(r, t, b);
        if (has_deadline)
                timer_set_wakeup(r, t, deadline, now);
        *ret_generation = t->generation;
        return transition_sync(r);
}

/* What Reconcile must do to the live schedule, decided before anything changes. */
enum reconcile_step {
        RECONCILE_CLEAR,
        RECONCILE_KEEP,
        RECONCILE_RESUME_POLICY, /* after-completion cancelled during its run: re-arm at completion
                                  */
        RECONCILE_SET,
};

static int reconcile_plan(struct registry *r, const struct timer *t, const struct td_now *now,
                          const struct td_reconcile_args *a, enum reconcile_step *ret_step,
                          uint64_t *ret_deadline)
{
        const struct td_declaration *d = &a->declaration;

        switch (a->desired) {
        case TIMERD_DESIRED_INACTIVE:
                *ret_step = RECONCILE_CLEAR;
                return 0;
        case TIMERD_DESIRED_EXACT:
                if (d->policy == TIMERD_POLICY_WATCHDOG)
                        return -TIMERD_E_WRONG_POLICY;
                *ret_step = RECONCILE_SET;
                *ret_deadline = a->deadline_usec;
                return 0;
        case TIMERD_DESIRED_SCHEDULED:
                if (a->has_deadline && d->policy == TIMERD_POLICY_WATCHDOG)
                        return -TIMERD_E_WRONG_POLICY;
                /* Queued, held behind its run, or armed by the run's end: kept. */
                if (t &&
                    (timer_queued(t) || (t->run_active && t->after_run == AFTER_RUN_DEADLINE))) {
                        *ret_step = RECONCILE_KEEP;
                        return 0;
                }
                if (t && t->run_active && policy_runs_off_queue(d->policy)) {
                        if (d->policy == TIMERD_POLICY_AFTER_COMPLETION ||
                            d->policy == TIMERD_POLICY_CALENDAR) {
                                *ret_step = RECONCILE_RESUME_POLICY;
                                return 0;
                        }
                }
                *ret_step = RECONCILE_SET;
                if (a->has_deadline) {
                        *ret_deadline = a->deadline_usec;
                        return 0;
                }
                /* A once timer has no cadence to invent a wake-up from. */
                if (d->policy == TIMERD_POLICY_ONCE)
                        return schedule_invalid(&r->problem, TD_SCHEDULE_DEADLINE_MISSING);
                if (d->calendar)
                        return calendar_deadline(r, a->caller.uid, a->name, d, now->usec[d->clock],
                                                 ret_deadline);
                if (value_add_overflow(now->usec[d->clock], d->cadence_usec, ret_deadline))
                        return -TIMERD_E_OVERFLOW;
                return 0;
        default:
                return -TIMERD_E_INVALID_PARAMETER;
        }
}

struct td_transition registry_reconcile(struct registry *r, const struct td_now *now,
                                        const struct td_reconcile_args *a, uint64_t *ret_generation,
                                        bool *ret_created)
{
        enum reconcile_step step;
        struct before *b = NULL;
        uint64_t deadline = 0;
        struct timer *t;
        bool created, rescheduled;
        int e;

        effects_begin(r);
        e = declare_args_validate(r, &a->caller, a->name, &a->declaration);
        if (e < 0)
                return transition_failed(r, e);
        t = timer_find(r, a->caller.uid, a->name);
        if (t && !declaration_equal(t, &a->declaration))
                return transition_failed(r, -TIMERD_E_RECONCILIATION_CONFLICT);
        e = reconcile_plan(r, t, now, a, &step, &deadline);
        if (e >= 0)
                e = handle_generations_check(r, 1);
        if (e >= 0 && !t)
                e = generation_check(r);
        created = !t;
        if (e >= 0 && created)
                e = timer_limits_check(r, a->caller.uid);
        /* Keeping an existing timer as it is changes nothing to undo or write; a cadence set by
         * Reschedule goes back to the declared one. */
        rescheduled = t && timer_run_state(t)->live_cadence_usec > 0;
        if (e >= 0 && (created || step != RECONCILE_KEEP || rescheduled))
                e = before_prepare(r, t, a->declaration.lifetime == TIMERD_LIFETIME_RETAINED, &b);
        if (e >= 0 && created)
                e = timer_create(r, &a->caller, a->name, &a->declaration, r->last_generation + 1,
                                 &t);
        if (e < 0) {
                before_free(b);
                return transition_failed(r, e);
        }

        before_attach(r, t, b);
        if (!created && a->caller_is_owner && t->delivery == TIMERD_DELIVERY_SIGNAL &&
            timer_retained(t))
                t->session = a->caller.session;
        if (rescheduled) {
                t->runs->state.live_cadence_usec = 0;
                timer_changed(r, t);
        }
        switch (step) {
        case RECONCILE_CLEAR:
                timer_clear_wakeup(r, t);
                break;
        case RECONCILE_KEEP:
                break;
        case RECONCILE_RESUME_POLICY:
                t->after_run = AFTER_RUN_POLICY;
                timer_changed(r, t);
                break;
        case RECONCILE_SET:
                timer_set_wakeup(r, t, deadline, now);
                break;
        }
        *ret_generation = t->generation;
        *ret_created = created;
        return transition_sync(r);
}

struct td_transition registry_schedule(struct registry *r, const struct td_now *now,
                                       const struct td_handle *h, uint64_t deadline_usec)
{
        struct timer *t;
        int e;

        effects_begin(r);
        e = handle_resolve(r, h, &t);
        if (e >= 0 && t->policy == TIMERD_POLICY_WATCHDOG)
                e = -TIMERD_E_WRONG_POLICY;
        if (e >= 0)
                e = change_begin(r, t);
        if (e < 0)
                return transition_failed(r, e);
        timer_set_wakeup(r, t, deadline_usec, now);
        return transition_sync(r);
}

struct td_transition registry_reschedule(struct registry *r, const struct td_now *now,
                                         const struct td_handle *h, bool has_deadline,
                                         uint64_t deadline_usec, bool has_cadence,
                                         uint64_t cadence_usec, struct td_reschedule_result *ret)
{
        uint64_t previous = 0, n;
        struct timer *t;
        int e;

        effects_begin(r);
        e = handle_resolve(r, h, &t);
        if (e < 0)
                return transition_failed(r, e);
        /* A watchdog's deadline moves only by Kick; disarming and a new cadence are fine. */
        if (has_deadline && t->policy == TIMERD_POLICY_WATCHDOG)
                return transition_failed(r, -TIMERD_E_WRONG_POLICY);
        /* A calendar timer's elapses come from its schedule. */
        if (has_cadence && timer_calendar(t))
                return transition_failed(r, -TIMERD_E_WRONG_POLICY);
        if (has_cadence) {
                /* The new cadence must suit the declaration, its handover included. */
                struct td_declaration d = timer_declaration(t);

                d.cadence_usec = cadence_usec;
                e = declaration_validate(&d, &r->problem);
                if (e >= 0)
                        e = cadence_allowed(r, cadence_usec);
                /* The live cadence is kept with the runs, not in the declaration. */
                if (e >= 0)
                        e = timer_runs_attach(t);
                if (e < 0)
                        return transition_failed(r, e);
        }
        e = change_begin(r, t);
        if (e < 0)
                return transition_failed(r, e);
        n = now->usec[t->clock];
        if (timer_next_deadline(t, &previous))
                previous = previous > n ? previous - n : 0;
        *ret = (struct td_reschedule_result){
            .previous_remaining_usec = previous,
            .previous_cadence_usec = timer_cadence(t),
        };
        /* One encoding: the declared cadence is kept as 0. */
        if (has_cadence)
                t->runs->state.live_cadence_usec =
                    cadence_usec == t->cadence_usec ? 0 : cadence_usec;
        timer_changed(r, t);
        if (has_deadline)
                timer_set_wakeup(r, t, deadline_usec, now);
        else
                timer_clear_wakeup(r, t);
        return transition_sync(r);
}

struct td_transition registry_cancel(struct registry *r, const struct td_now *now,
                                     const struct td_handle *h)
{
        struct timer *t;
        int e;

        (void)now;
        effects_begin(r);
        e = handle_resolve(r, h, &t);
        if (e >= 0)
                e = change_begin(r, t);
        if (e < 0)
                return transition_failed(r, e);
        timer_clear_wakeup(r, t);
        return transition_sync(r);
}

struct td_transition registry_kick(struct registry *r, const struct td_now *now,
                                   const struct td_handle *h, uint64_t *ret_deadline_usec)
{
        uint64_t deadline;
        struct timer *t;
        int e;

        effects_begin(r);
        e = handle_resolve(r, h, &t);
        if (e < 0)
                return transition_failed(r, e);
        if (t->policy != TIMERD_POLICY_WATCHDOG)
                return transition_failed(r, -TIMERD_E_WRONG_POLICY);
        if (value_add_overflow(now->usec[t->clock], timer_cadence(t), &deadline))
                return transition_failed(r, -TIMERD_E_OVERFLOW);
        e = change_begin(r, t);
        if (e < 0)
                return transition_failed(r, e);
        timer_set_wakeup(r, t, deadline, now);
        *ret_deadline_usec = deadline;
        return transition_sync(r);
}

struct td_transition registry_unregister(struct registry *r, const struct td_now *now,
                                         const struct td_handle *h)
{
        struct timer *t;
        int e;

        (void)now;
        effects_begin(r);
        /* Unregister needs the claim itself: a run token delegates control, not ownership. */
        if (h->run != 0)
                return transition_failed(r, -TIMERD_E_INVALID_PARAMETER);
        e = handle_resolve(r, h, &t);
        if (e >= 0)
                e = change_begin(r, t);
        if (e < 0)
                return transition_failed(r, e);
        timer_destroy(r, t);
        return transition_sync(r);
}

struct td_transition registry_fail(struct registry *r, const struct td_now *now,
                                   const struct td_handle *h, enum timerd_failure failure)
{
        struct timer *t;
        int e;

        (void)now;
        effects_begin(r);
        if (failure <= TIMERD_FAILURE_NONE || failure >= TIMERD_FAILURE_MAX)
                return transition_failed(r, -TIMERD_E_INVALID_PARAMETER);
        e = handle_resolve(r, h, &t);
        if (e >= 0)
                e = change_begin(r, t);
        if (e < 0)
                return transition_failed(r, e);
        timer_fail(r, t, failure);
        return transition_sync(r);
}

struct td_transition registry_note_overrun(struct registry *r, const struct td_now *now,
                                           const struct td_handle *h)
{
        uint64_t overruns;
        struct timer *t;
        int e;

        (void)now;
        effects_begin(r);
        e = handle_resolve(r, h, &t);
        if (e < 0)
                return transition_failed(r, e);
        if (value_add_overflow(timer_run_state(t)->overruns, 1, &overruns))
                return transition_failed(r, -TIMERD_E_OVERFLOW);
        e = timer_runs_attach(t);
        if (e < 0)
                return transition_failed(r, e);
        stats_leave(r, t);
        t->runs->state.overruns = overruns;
        r->overruns = saturating_add(r->overruns, 1);
        stats_enter(r, t);
        return transition_done(r);
}

static bool run_end_valid(const struct td_run_end *end)
{
        return end->exit > TIMERD_EXIT_NONE && end->exit < TIMERD_EXIT_MAX &&
               end->code <= UINT8_MAX;
}

/* The counters a finished run leaves, computed before anything changes. */
struct run_result {
        enum timerd_outcome outcome;
        struct td_run_end end;
        uint64_t finish_usec;
        uint64_t duration_usec;
        uint64_t runs;
        uint64_t total_duration_usec;
        uint64_t consecutive_expected_failures;
};

static int run_result_compute(const struct timer *t, uint64_t now_usec, enum timerd_outcome outcome,
                              uint64_t duration_usec, struct run_result *ret)
{
        const struct run_state *rs = &t->runs->state;

        /* The client measured the run, or the registry does (a clock set back counts 0). */
        if (duration_usec == 0 && now_usec > rs->run_fired_usec)
                duration_usec = now_usec - rs->run_fired_usec;
        *ret = (struct run_result){
            .outcome = outcome,
            .finish_usec = now_usec,
            .duration_usec = duration_usec,
        };
        if (value_add_overflow(rs->runs, 1, &ret->runs) ||
            value_add_overflow(rs->total_duration_usec, ret->duration_usec,
                               &ret->total_duration_usec))
                return -TIMERD_E_OVERFLOW;
        if (outcome != TIMERD_OUTCOME_EXPECTED_FAILURE)
                ret->consecutive_expected_failures = 0;
        else if (value_add_overflow(rs->consecutive_expected_failures, 1,
                                    &ret->consecutive_expected_failures))
                return -TIMERD_E_OVERFLOW;
        return 0;
}

/*
 * After a calendar timer's run: its next elapse after the one that ran. When elapses passed during
 * the run, the last of them fires, at once; those before it count as overruns, up to
 * CALENDAR_OVERRUNS_COUNTED (a bound on the work: past it the firing reports the completion).
 * The elapse after that one then comes after the completion, so runs never overlap and a long
 * run costs one firing, not a burst. Inside stats_leave/enter.
 */
#define CALENDAR_OVERRUNS_COUNTED 1024
static void calendar_resume(struct registry *r, struct timer *t, uint64_t finish_usec)
{
        const struct td_declaration d = timer_declaration(t);
        struct run_state *rs = &t->runs->state;
        uint64_t next, later, passed = 0;

        if (calendar_deadline(r, t->uid, t->name, &d, rs->run_deadline_usec, &next) < 0) {
                t->failure = TIMERD_FAILURE_OVERFLOW;
                return;
        }
        while (next < finish_usec && td_calendar_next(t->calendar, next, &later) >= 0 &&
               later <= finish_usec) {
                if (passed == CALENDAR_OVERRUNS_COUNTED) {
                        next = finish_usec;
                        break;
                }
                next = later;
                passed++;
        }
        rs->overruns = saturating_add(rs->overruns, passed);
        r->overruns = saturating_add(r->overruns, passed);
        timer_enqueue(r, t, next, finish_usec);
}

/* End the active run and apply what its outcome and directive ask of the schedule. */
static void run_finish(struct registry *r, struct timer *t, const struct run_result *res,
                       enum timerd_directive directive)
{
        enum timerd_policy policy = (enum timerd_policy)t->policy;
        struct run_state *rs = &t->runs->state;
        uint64_t next;

        stats_leave(r, t);
        hold_settle(r, t, res->finish_usec);
        /* A firing nobody was handed (the service delivered it) reported its overruns. */
        if (!timer_delivered_to(t))
                rs->overruns_reported = rs->overruns;
        run_detach(t);
        t->run_active = false;
        rs->runs = res->runs;
        rs->total_duration_usec = res->total_duration_usec;
        rs->consecutive_expected_failures = res->consecutive_expected_failures;
        rs->last_duration_usec = res->duration_usec;
        rs->last_outcome = res->outcome;
        rs->last_end = res->end;
        rs->has_last_finish = true;
        rs->last_finish_usec = res->finish_usec;

        if (res->outcome == TIMERD_OUTCOME_INVARIANT_FAILURE) {
                timer_dequeue(r, t);
                t->failure = TIMERD_FAILURE_INVARIANT;
        } else if (directive == TIMERD_DIRECTIVE_STOP)
                timer_dequeue(r, t);
        else if (t->failure == TIMERD_FAILURE_NONE && t->after_run == AFTER_RUN_DEADLINE)
                timer_enqueue(r, t, rs->deferred_deadline_usec, res->finish_usec);
        else if (t->failure == TIMERD_FAILURE_NONE && t->after_run == AFTER_RUN_POLICY &&
                 policy == TIMERD_POLICY_AFTER_COMPLETION) {
                if (value_add_overflow(res->finish_usec, timer_cadence(t), &next))
                        t->failure = TIMERD_FAILURE_OVERFLOW;
                else
                        timer_enqueue(r, t, next, res->finish_usec);
        } else if (t->failure == TIMERD_FAILURE_NONE && t->after_run == AFTER_RUN_POLICY &&
                   policy == TIMERD_POLICY_CALENDAR)
                calendar_resume(r, t, res->finish_usec);
        t->after_run = AFTER_RUN_POLICY;
        rs->deferred_deadline_usec = 0;
        stats_enter(r, t);
}

struct td_transition registry_complete(struct registry *r, const struct td_now *now,
                                       const struct td_handle *token, enum timerd_outcome outcome,
                                       enum timerd_directive directive, uint64_t duration_usec,
                                       const struct td_run_end *end)
{
        struct run_result res;
        struct before *b = NULL;
        struct timer *t;
        int e;

        effects_begin(r);
        if (outcome <= TIMERD_OUTCOME_NONE || outcome >= TIMERD_OUTCOME_MAX || directive < 0 ||
            directive >= TIMERD_DIRECTIVE_MAX || (end && !run_end_valid(end)))
                return transition_failed(r, -TIMERD_E_INVALID_PARAMETER);
        e = handle_resolve(r, token, &t);
        if (e >= 0 && token->run == 0)
                e = -TIMERD_E_NOT_RUNNING;
        if (e >= 0)
                e = handle_generations_check(r, 1);
        if (e >= 0)
                e = run_result_compute(t, now->usec[t->clock], outcome, duration_usec, &res);
        if (e >= 0 && end)
                res.end = *end;
        if (e >= 0)
                e = before_prepare(r, t, timer_retained(t), &b);
        if (e < 0)
                return transition_failed(r, e);
        before_attach(r, t, b);
        run_finish(r, t, &res, directive);
        return transition_sync(r);
}

/* A run no client holds any more ends as an expected failure; the policy goes on. */
static void run_abandon(struct registry *r, struct timer *t, const struct td_now *now)
{
        struct run_result res;

        if (run_result_compute(t, now->usec[t->clock], TIMERD_OUTCOME_EXPECTED_FAILURE, 0, &res) <
            0) {
                /* Its counters cannot take the run: end it uncounted, failed. */
                stats_leave(r, t);
                run_detach(t);
                t->run_active = false;
                t->after_run = AFTER_RUN_POLICY;
                t->runs->state.deferred_deadline_usec = 0;
                stats_enter(r, t);
                timer_fail(r, t, TIMERD_FAILURE_OVERFLOW);
        } else
                run_finish(r, t, &res, TIMERD_DIRECTIVE_CONTINUE);
}

static void effect_push_dispatch(struct registry *r, const struct timer *t, bool past_due)
{
        struct td_effect effect = {.kind = TD_EFFECT_DISPATCH};

        timer_dispatch(t, &effect.dispatch);
        effect.dispatch.past_due = past_due;
        effect_push(r, &effect);
}

/*
 * Fire one due timer at `now`: move or drop its queue entry, count overruns, start a run unless
 * one is active. Watchdog and interval successors are queued here, before any DISPATCH is emitted;
 * one due while the run is still active is held instead (see enum after_run).
 * A successor or counter that would overflow fails the timer instead (FAILURE_OVERFLOW).
 * t has its runs record.
 */
static void timer_fire(struct registry *r, struct timer *t, uint64_t now)
{
        enum timerd_policy policy = (enum timerd_policy)t->policy;
        struct run_state *rs = &t->runs->state;
        uint64_t deadline = t->has_missed_deadline ? rs->missed_deadline_usec : t->deadline_usec;
        /* A handover fires early: deadlines up to `reach` are due (handover < cadence). */
        uint64_t reach = saturating_add(now, t->handover_usec);
        uint64_t next = 0, missed = 0, periods, overruns, run = rs->run;
        bool requeue = policy == TIMERD_POLICY_WATCHDOG || policy == TIMERD_POLICY_INTERVAL;
        /* Taken before the successor is queued. */
        bool past_due = t->queued_past_due || t->has_missed_deadline;
        bool catch_up = t->catching_up;
        bool overflow = false;

        assert(deadline <= reach);
        if (policy == TIMERD_POLICY_WATCHDOG)
                overflow =
                    value_add_overflow(deadline > now ? deadline : now, timer_cadence(t), &next);
        else if (policy == TIMERD_POLICY_INTERVAL) {
                /* The first deadline + k*cadence after reach; the k-1 skipped are overruns. */
                overflow = schedule_skip(deadline, timer_cadence(t), t->handover_usec, now,
                                         &periods, &next) < 0;
                missed = overflow ? 0 : periods - 1;
        }
        overflow = overflow || value_add_overflow(rs->overruns, missed, &overruns) ||
                   value_add_overflow(overruns, t->run_active ? 1 : 0, &overruns) ||
                   (!t->run_active && value_add_overflow(run, 1, &run));
        if (overflow) {
                timer_fail(r, t, TIMERD_FAILURE_OVERFLOW);
                return;
        }

        stats_leave(r, t);
        if (requeue && !t->run_active)
                timer_enqueue(r, t, next, now);
        else
                timer_dequeue(r, t);
        r->overruns = saturating_add(r->overruns, overruns - rs->overruns);
        rs->overruns = overruns;
        if (t->run_active) {
                /* Nothing to deliver until the run is taken or ends: no wake-up before. */
                if (requeue) {
                        t->after_run = AFTER_RUN_DEADLINE;
                        rs->deferred_deadline_usec = next;
                }
                stats_enter(r, t);
                return;
        }
        rs->run = run;
        t->run_active = true;
        t->after_run = AFTER_RUN_POLICY;
        rs->run_deadline_usec = deadline;
        rs->run_fired_usec = now;
        rs->has_last_start = true;
        rs->last_start_usec = now;
        rs->last_catch_up = catch_up;
        list_append(&owner_find(r, t->uid)->pending, &t->runs->waiter_node);
        r->firings = saturating_add(r->firings, 1);
        stats_enter(r, t);
        effect_push_dispatch(r, t, past_due);
}

struct td_transition registry_expire(struct registry *r, const struct td_now *now,
                                     enum timerd_clock clock, uint64_t generation, bool *ret_stale)
{
        struct timerq_entry *e;
        uint64_t n;
        int error;

        effects_begin(r);
        *ret_stale = false;
        if (!clock_valid(clock))
                return transition_failed(r, -EINVAL);
        if (!r->arms[clock].armed || r->arms[clock].generation != generation) {
                *ret_stale = true;
                r->stale_expiries = saturating_add(r->stale_expiries, 1);
                return transition_done(r);
        }
        error = handle_generations_check(r, 1);
        if (error < 0)
                return transition_failed(r, error);

        n = now->usec[clock];
        while ((e = timerq_peek(&r->queues[clock])) &&
               timerq_entry_deadline(&r->queues[clock], e) <= n) {
                struct timer *t = timer_of_entry(e);

                /*
                 * Out of memory for effects or for a first run's record: stop here; the rest
                 * stays due and the clock is re-armed in the past, so it fires again at once.
                 */
                if (effects_reserve(r, r->n_effects + 2) < 0 || timer_runs_attach(t) < 0)
                        break;
                timer_fire(r, t, n);
        }

        /* The kernel timer is one-shot and spent. Successors are armed before any run is
         * dispatched: the ARM (or DISARM) goes first. */
        clock_sync(r, clock, true);
        if (r->n_effects > 1) {
                struct td_effect arm = r->effects[r->n_effects - 1];

                memmove(r->effects + 1, r->effects, (r->n_effects - 1) * sizeof(struct td_effect));
                r->effects[0] = arm;
        }
        return transition_done(r);
}

/*
 * The calendar timers queued on `clock` and not due yet get their next elapse after now again
 * (one due stays due: it fires as it would have). Returns how many.
 */
static uint64_t calendars_reevaluate(struct registry *r, const struct td_now *now,
                                     enum timerd_clock clock)
{
        uint64_t n = now->usec[clock], count = 0, deadline;
        size_t i = 0;
        struct timer *t;

        while ((t = hashmap_next(&r->timers, &i))) {
                const struct td_declaration d = timer_declaration(t);

                if (!timer_calendar(t) || (enum timerd_clock)t->clock != clock ||
                    !timer_queued(t) || t->has_missed_deadline || t->deadline_usec <= n)
                        continue;
                count++;
                stats_leave(r, t);
                if (calendar_deadline(r, t->uid, t->name, &d, n, &deadline) < 0) {
                        timer_dequeue(r, t);
                        t->failure = TIMERD_FAILURE_OVERFLOW;
                } else
                        timer_enqueue(r, t, deadline, n);
                stats_enter(r, t);
        }
        return count;
}

struct td_transition registry_rearm(struct registry *r, const struct td_now *now,
                                    enum timerd_clock clock)
{
        int e;

        effects_begin(r);
        if (!clock_valid(clock))
                return transition_failed(r, -EINVAL);
        if (!r->arms[clock].armed)
                return transition_done(r);
        e = handle_generations_check(r, 1);
        if (e < 0)
                return transition_failed(r, e);
        calendars_reevaluate(r, now, clock);
        clock_sync(r, clock, true);
        return transition_done(r);
}

struct td_transition registry_reevaluate_calendars(struct registry *r, const struct td_now *now,
                                                   uint64_t *ret_count)
{
        int e;

        effects_begin(r);
        *ret_count = 0;
        e = handle_generations_check(r, 2);
        if (e < 0)
                return transition_failed(r, e);
        *ret_count = calendars_reevaluate(r, now, TIMERD_CLOCK_REALTIME) +
                     calendars_reevaluate(r, now, TIMERD_CLOCK_REALTIME_ALARM);
        return transition_sync(r);
}

struct td_transition registry_confirm_arm(struct registry *r, const struct td_now *now,
                                          enum timerd_clock clock, uint64_t generation, int error)
{
        struct timerq_entry *entry;
        struct clock_arm *a;
        int e;

        (void)now;
        effects_begin(r);
        if (!clock_valid(clock))
                return transition_failed(r, -EINVAL);
        a = &r->arms[clock];
        /* A success, a superseded arm or a failed disarm (its expiry is stale anyway): no-op. */
        if (error == 0 || !a->armed || a->generation != generation)
                return transition_done(r);
        e = handle_generations_check(r, 1);
        if (e < 0)
                return transition_failed(r, e);

        while ((entry = timerq_peek(&r->queues[clock])) &&
               timerq_entry_deadline(&r->queues[clock], entry) <= a->deadline_usec)
                timer_fail(r, timer_of_entry(entry), TIMERD_FAILURE_PROVIDER_BINDING);
        clock_sync(r, clock, true);
        return transition_done(r);
}

/* The firing goes to a waiter: what it reports as overruns starts over. */
static void timer_hand_over(struct registry *r, struct timer *t, struct session *s)
{
        stats_leave(r, t);
        t->runs->state.overruns_reported = t->runs->state.overruns;
        list_remove(&t->runs->waiter_node);
        t->runs->delivered_to = s;
        list_append(&s->delivered, &t->runs->waiter_node);
        stats_enter(r, t);
}

int registry_deliver(struct registry *r, const struct td_dispatch *d, uint64_t session)
{
        struct session *s;
        struct timer *t;
        int e;

        e = session_validate(session);
        if (e < 0)
                return e;
        if (!registry_name_valid(d->name))
                return -TIMERD_E_INVALID_NAME;
        t = timer_find(r, d->owner, d->name);
        if (!t)
                return -TIMERD_E_NOT_FOUND;
        if (t->generation != d->generation || !t->run_active || t->runs->state.run != d->run)
                return -TIMERD_E_REGISTRATION_EXPIRED;
        if (!timer_pending(t))
                return -EALREADY;
        e = session_get(r, session, &s);
        if (e < 0)
                return e;
        timer_hand_over(r, t, s);
        return 0;
}

static bool name_listed(const char *name, const char *const *names, size_t n_names)
{
        for (size_t i = 0; i < n_names; i++)
                if (strcmp(name, names[i]) == 0)
                        return true;
        return false;
}

int registry_take_pending(struct registry *r, const struct td_now *now, uint32_t owner,
                          enum timerd_delivery delivery, const char *const *names, size_t n_names,
                          uint64_t session, struct td_dispatch *ret)
{
        struct owner *o;
        struct session *s;
        int e;

        e = session_validate(session);
        if (e < 0)
                return e;
        if (n_names > 0 && !names)
                return -EINVAL;
        for (size_t i = 0; i < n_names; i++)
                if (!names[i])
                        return -EINVAL;
        o = owner_find(r, owner);
        if (!o)
                return 0;
        for (struct list_node *n = o->pending.next; n != &o->pending; n = n->next) {
                struct timer *t = list_entry(n, struct timer_runs, waiter_node)->timer;

                if ((enum timerd_delivery)t->delivery != delivery ||
                    (n_names > 0 && !name_listed(t->name, names, n_names)))
                        continue;
                e = session_get(r, session, &s);
                if (e < 0)
                        return e;
                /* The periods it missed while pending are this firing's overruns. */
                stats_leave(r, t);
                hold_settle(r, t, now->usec[t->clock]);
                stats_enter(r, t);
                timer_dispatch(t, ret);
                timer_hand_over(r, t, s);
                return 1;
        }
        return 0;
}

bool registry_take_silenced_owner(struct registry *r, uint32_t *ret_owner)
{
        struct owner *o;

        if (list_empty(&r->silenced))
                return false;
        o = list_entry(r->silenced.next, struct owner, silenced_node);
        list_remove(&o->silenced_node);
        *ret_owner = o->uid;
        return true;
}

struct td_transition registry_session_closed(struct registry *r, const struct td_now *now,
                                             uint64_t session)
{
        struct session *s;
        int e;

        effects_begin(r);
        e = session_validate(session);
        if (e < 0)
                return transition_failed(r, e);
        s = session_find(r, session);
        if (!s)
                return transition_done(r);
        e = handle_generations_check(r, TIMERD_CLOCK_MAX);
        if (e < 0)
                return transition_failed(r, e);

        while (!list_empty(&s->transient))
                timer_destroy(r, list_entry(s->transient.next, struct timer, transient_node));
        while (!list_empty(&s->delivered))
                run_abandon(r, list_entry(s->delivered.next, struct timer_runs, waiter_node)->timer,
                            now);
        hashmap_remove(&r->sessions, hash_mix64(session), s);
        free(s);
        return transition_sync(r);
}

static void timer_snapshot(const struct timer *t, struct td_snapshot *ret)
{
        const struct run_state *rs = timer_run_state(t);

        *ret = (struct td_snapshot){
            .owner = t->uid,
            .declaration = timer_declaration(t),
            .generation = t->generation,
            .state = timer_state(t),
            .failure = (enum timerd_failure)t->failure,
            .run = rs->run,
            .run_active = t->run_active,
            .pending = timer_pending(t),
            .run_deadline_usec = rs->run_deadline_usec,
            .run_cancelled = t->run_active && t->after_run == AFTER_RUN_NONE,
            .runs = rs->runs,
            .consecutive_expected_failures = rs->consecutive_expected_failures,
            .overruns = rs->overruns,
            .has_last_start = rs->has_last_start,
            .last_start_usec = rs->last_start_usec,
            .has_last_finish = rs->has_last_finish,
            .last_finish_usec = rs->last_finish_usec,
            .last_catch_up = rs->last_catch_up,
            .last_outcome = rs->last_outcome,
            .last_duration_usec = rs->last_duration_usec,
            .total_duration_usec = rs->total_duration_usec,
            .last_end = rs->last_end,
            .live_cadence_usec = timer_cadence(t),
            .session = t->session,
        };
        ret->has_deadline = timer_next_deadline(t, &ret->next_deadline_usec);
        strcpy(ret->name, t->name);
}

void registry_snapshot_at(struct td_snapshot *timer, const struct td_now *now)
{
        const struct td_declaration *d = &timer->declaration;
        uint64_t due, next;

        if (!timer->run_active || policy_runs_off_queue(d->policy) || !timer->has_deadline ||
            timer->failure != TIMERD_FAILURE_NONE || !clock_valid(d->clock) ||
            timer->live_cadence_usec == 0)
                return;
        if (schedule_skip(timer->next_deadline_usec, timer->live_cadence_usec, d->handover_usec,
                          now->usec[d->clock], &due, &next) < 0)
                return;
        timer->overruns = saturating_add(timer->overruns, due);
        timer->next_deadline_usec = next;
}

int registry_get(const struct registry *r, uint32_t owner, const char *name,
                 struct td_snapshot *ret)
{
        const struct timer *t;

        if (!registry_name_valid(name))
                return -TIMERD_E_INVALID_NAME;
        t = timer_find(r, owner, name);
        if (!t)
                return -TIMERD_E_NOT_FOUND;
        timer_snapshot(t, ret);
        return 0;
}

long registry_list_page(const struct registry *r, const struct td_list_page *page,
                        struct td_snapshot **ret, bool *ret_more)
{
        const struct owner *o = page->all_owners ? NULL : owner_find(r, page->owner);
        size_t room = page->all_owners ? r->timers.n_entries : o ? o->n_timers : 0, n = 0;
        const struct inventory_key first_of_owner = {.owner = page->owner, .name = ""},
                                   after = {.owner = page->after_owner, .name = page->after_name};
        const struct inventory_key *from = page->has_after ? &after : NULL;
        const struct inventory_node *node;
        struct inventory_cursor c;
        struct td_snapshot *list;

        *ret = NULL;
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
        list = calloc(room, sizeof(struct td_snapshot));
        if (!list)
                return -ENOMEM;
        inventory_seek(&r->inventory, from, &c);
        while ((node = inventory_next(&c))) {
                const struct timer *t = inventory_entry(node, struct timer, inventory_node);

                if (!page->all_owners && t->uid != page->owner)
                        break;
                if (n == room) {
                        *ret_more = true;
                        break;
                }
                timer_snapshot(t, &list[n++]);
        }
        if (n == 0)
                free(list);
        else
                *ret = list;
        return (long)n;
}

long registry_list_transient(const struct registry *r, uint64_t session, struct td_snapshot **ret)
{
        const struct session *s = session_find(r, session);
        struct td_snapshot *list;
        size_t n = 0;

        *ret = NULL;
        if (!s || list_empty(&s->transient))
                return 0;
        for (const struct list_node *p = s->transient.next; p != &s->transient; p = p->next)
                n++;
        list = calloc(n, sizeof(*list));
        if (!list)
                return -ENOMEM;
        n = 0;
        for (const struct list_node *p = s->transient.next; p != &s->transient; p = p->next)
                timer_snapshot(list_entry(p, struct timer, transient_node), &list[n++]);
        *ret = list;
        return (long)n;
}

long registry_list(const struct registry *r, uint32_t owner, bool all_owners,
                   struct td_snapshot **ret)
{
        const struct td_list_page page = {
            .owner = owner, .all_owners = all_owners, .limit = SIZE_MAX};

        return registry_list_page(r, &page, ret, &(bool){false});
}

/*
 * Create the timer `img` describes as (owner, name), which must be absent. A transient one whose
 * session closed meanwhile is not created (*ret NULL); a run handed to a session that closed, or
 * to none, is abandoned. -ENOMEM.
 */
static int timer_install(struct registry *r, const struct td_now *now, uint32_t owner,
                         const char *name, const struct timer_image *img, struct timer **ret)
{
        const struct td_caller caller = {.uid = owner, .session = img->session};
        struct session *delivered = NULL;
        struct timer_runs *runs = NULL;
        struct timer *t;
        int e;

        *ret = NULL;
        if (img->declaration.lifetime == TIMERD_LIFETIME_TRANSIENT &&
            !session_find(r, img->session))
                return 0;
        if (img->delivered_to > 0)
                delivered = session_find(r, img->delivered_to);
        if (img->has_missed_deadline || !run_state_empty(&img->runs)) {
                runs = malloc(sizeof(*runs));
                if (!runs)
                        return -ENOMEM;
        }
        e = timer_create(r, &caller, name, &img->declaration, img->generation, &t);
        if (e < 0) {
                free(runs);
                return e;
        }

        stats_leave(r, t);
        if (runs)
                timer_runs_adopt(t, runs, &img->runs);
        t->failure = (unsigned)img->failure & 0x7u;
        t->after_run = (unsigned)img->after_run & 0x3u;
        t->run_active = img->run_active;
        if (img->queued) {
                timer_enqueue(r, t, img->deadline_usec, now->usec[t->clock]);
                t->has_missed_deadline = img->has_missed_deadline;
                t->catching_up = img->catching_up;
                if (runs)
                        runs->state.missed_deadline_usec = img->runs.missed_deadline_usec;
        }
        if (img->pending)
                list_append(&owner_find(r, t->uid)->pending, &runs->waiter_node);
        else if (delivered) {
                runs->delivered_to = delivered;
                list_append(&delivered->delivered, &runs->waiter_node);
        }
        stats_enter(r, t);
        if (t->run_active && !img->pending && !delivered)
                run_abandon(r, t, now);
        *ret = t;
        return 0;
}

/* A durable state this registry could have written. */
static bool snapshot_restorable(const struct td_snapshot *s)
{
        bool ran = s->run_active || s->has_last_start;

        return s->declaration.lifetime == TIMERD_LIFETIME_RETAINED && s->generation > 0 &&
               s->failure >= TIMERD_FAILURE_NONE && s->failure < TIMERD_FAILURE_MAX &&
               s->last_outcome >= TIMERD_OUTCOME_NONE && s->last_outcome < TIMERD_OUTCOME_MAX &&
               (s->last_end.exit == TIMERD_EXIT_NONE ? s->last_end.code == 0
                                                     : run_end_valid(&s->last_end)) &&
               (!s->pending || s->run_active) && (!s->run_active || s->has_last_start) &&
               (!ran || s->run > 0) && s->runs <= s->run &&
               s->consecutive_expected_failures <= s->runs &&
               /* No generation beyond the wire's int64 was ever given out (2^63 calls). */
               s->generation <= TD_VALUE_MAX;
}

static void image_of_snapshot(const struct td_snapshot *s, struct timer_image *ret)
{
        bool off_queue = s->run_active && policy_runs_off_queue(s->declaration.policy);
        enum after_run after_run = AFTER_RUN_POLICY;

        /* A once or after-completion timer's deadline during a run is the one its end arms. */
        if (off_queue && s->has_deadline)
                after_run = AFTER_RUN_DEADLINE;
        else if (off_queue && s->run_cancelled)
                after_run = AFTER_RUN_NONE;
        *ret = (struct timer_image){
            .declaration = s->declaration,
            .generation = s->generation,
            .failure = s->failure,
            .after_run = after_run,
            .run_active = s->run_active,
            .runs =
                {
                    .deferred_deadline_usec =
                        after_run == AFTER_RUN_DEADLINE ? s->next_deadline_usec : 0,
                    .run = s->run,
                    .run_deadline_usec = s->run_deadline_usec,
                    .run_fired_usec = s->last_start_usec,
                    .runs = s->runs,
                    .consecutive_expected_failures = s->consecutive_expected_failures,
                    .overruns = s->overruns,
                    /* Not durable: a firing after a restart reports the periods since. */
                    .overruns_reported = s->overruns,
                    .has_last_start = s->has_last_start,
                    .last_start_usec = s->last_start_usec,
                    .has_last_finish = s->has_last_finish,
                    .last_finish_usec = s->last_finish_usec,
                    .last_catch_up = s->last_catch_up,
                    .last_outcome = s->last_outcome,
                    .last_duration_usec = s->last_duration_usec,
                    .total_duration_usec = s->total_duration_usec,
                    .last_end = s->last_end,
                    .live_cadence_usec = s->live_cadence_usec == s->declaration.cadence_usec
                                             ? 0
                                             : s->live_cadence_usec,
                },
            .queued = s->failure == TIMERD_FAILURE_NONE && s->has_deadline && !off_queue,
            .deadline_usec = s->next_deadline_usec,
            .pending = s->pending,
        };
}

static bool value_clamp(uint64_t *v)
{
        bool beyond = *v > TD_VALUE_MAX;
        if (beyond)
                *v = TD_VALUE_MAX;
        return beyond;
}

/* A journal of a timerd that did not bound values to the wire's int64 may hold larger ones:
 * each is clamped, so that nothing listed is out of range, and the timer stops, failed
 * (overflow), as one whose arithmetic overflowed. Returns whether the image changed. */
static bool image_clamp_to_wire(struct timer_image *img)
{
        struct td_declaration *d = &img->declaration;
        struct run_state *rs = &img->runs;
        uint64_t *values[] = {&d->cadence_usec,
                              &d->accuracy_usec,
                              &d->randomized_delay_usec,
                              &d->handover_usec,
                              &img->deadline_usec,
                              &rs->run,
                              &rs->run_deadline_usec,
                              &rs->run_fired_usec,
                              &rs->deferred_deadline_usec,
                              &rs->runs,
                              &rs->consecutive_expected_failures,
                              &rs->overruns,
                              &rs->overruns_reported,
                              &rs->live_cadence_usec,
                              &rs->last_start_usec,
                              &rs->last_finish_usec,
                              &rs->last_duration_usec,
                              &rs->total_duration_usec};
        bool clamped = false;

        for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++)
                clamped = value_clamp(values[i]) || clamped;
        if (clamped) {
                img->queued = false;
                img->failure = TIMERD_FAILURE_OVERFLOW;
        }
        return clamped;
}

bool registry_snapshot_in_range(const struct td_snapshot *s)
{
        struct timer_image img;

        image_of_snapshot(s, &img);
        return !image_clamp_to_wire(&img);
}

/* A queued deadline that passed while the service was down: fire it once (perhaps delayed), or
 * skip it. Returns whether the image changed. */
static bool catch_up_plan(struct timer_image *img, uint64_t now_usec, uint64_t random_value)
{
        const struct td_declaration *d = &img->declaration;
        uint64_t periods, advance, when, cadence;

        if (!img->queued || img->deadline_usec > now_usec)
                return false;
        if (d->catch_up) {
                uint64_t delay =
                    d->randomized_delay_usec > 0 ? random_value % d->randomized_delay_usec : 0;

                /* Not journaled: a restart before it fires finds the missed deadline again. */
                img->catching_up = true;

                if (delay == 0 || value_add_overflow(now_usec, delay, &when))
                        return false;
                img->has_missed_deadline = true;
                img->runs.missed_deadline_usec = img->deadline_usec;
                img->deadline_usec = when;
                return true;
        }
        if (d->policy == TIMERD_POLICY_ONCE) {
                img->queued = false;
                return true;
        }
        if (d->calendar) {
                img->queued = td_calendar_next(d->calendar, now_usec, &img->deadline_usec) >= 0;
                return true;
        }
        cadence = live_cadence(d->cadence_usec, &img->runs);
        periods = (now_usec - img->deadline_usec) / cadence;
        if (value_add_overflow(periods, 1, &periods) ||
            __builtin_mul_overflow(periods, cadence, &advance) ||
            value_add_overflow(img->deadline_usec, advance, &when)) {
                img->queued = false;
                img->failure = TIMERD_FAILURE_OVERFLOW;
        } else
                img->deadline_usec = when;
        return true;
}

struct td_transition registry_restore(struct registry *r, const struct td_now *now,
                                      const struct td_snapshot *timer, uint64_t random_value)
{
        struct timer_image img;
        struct timer *t;
        bool adjusted;
        int e;

        effects_begin(r);
        if (!registry_name_valid(timer->name))
                return transition_failed(r, -TIMERD_E_INVALID_NAME);
        e = declaration_validate(&timer->declaration, &r->problem);
        if (e >= 0 && timer->live_cadence_usec > 0) {
                /* A live cadence must have suited the declaration when Reschedule set it. */
                struct td_declaration live = timer->declaration;

                live.cadence_usec = timer->live_cadence_usec;
                e = declaration_validate(&live, &r->problem);
        }
        if (e >= 0 && !snapshot_restorable(timer))
                e = -EINVAL;
        if (e >= 0 && timer_find(r, timer->owner, timer->name))
                e = -TIMERD_E_ALREADY_REGISTERED;
        if (e >= 0)
                e = handle_generations_check(r, 1);
        if (e < 0)
                return transition_failed(r, e);

        image_of_snapshot(timer, &img);
        adjusted = image_clamp_to_wire(&img);
        adjusted = catch_up_plan(&img, now->usec[img.declaration.clock], random_value) || adjusted;
        e = timer_install(r, now, timer->owner, timer->name, &img, &t);
        if (e < 0)
                return transition_failed(r, e);
        /* A run handed to a client was abandoned. */
        adjusted = adjusted || (img.run_active && !img.pending);
        if (!adjusted) {
                /* As durable as it was: the change its creation recorded goes (the last one). */
                assert(r->n_changes > 0 && r->changes[r->n_changes - 1] == t);
                r->n_changes--;
                t->changed = false;
        }
        return transition_sync(r);
}

int registry_reserve(struct registry *r, size_t n)
{
        int e;

        if (n > SIZE_MAX - r->timers.n_entries)
                return -ENOMEM;
        e = hashmap_reserve(&r->timers, r->timers.n_entries + n);
        if (e >= 0)
                e = changes_reserve(r, n);
        return e;
}

void registry_call_begin(struct registry *r)
{
        r->in_call = true;
}

void registry_call_end(struct registry *r)
{
        r->in_call = false;
}

void registry_generations_above(struct registry *r, uint64_t floor)
{
        /* By whole 2^32 steps: the low halves (a signal's sival_int) go on from the restored
         * timers' as if there had been no restart, so live timers' stay distinct. */
        const uint64_t step = UINT64_C(1) << 32;
        uint64_t gap, jump;

        if (floor <= r->last_generation)
                return;
        gap = floor - r->last_generation;
        jump = gap / step * step + (gap % step ? step : 0);
        if (value_add_overflow(r->last_generation, jump, &r->last_generation))
                r->last_generation = TD_VALUE_MAX; /* none left: registrations overflow */
}

bool registry_changes_pending(const struct registry *r)
{
        return r->n_changes > 0;
}

uint64_t registry_change_count(const struct registry *r)
{
        return r->change_count;
}

int registry_changes_foreach(const struct registry *r,
                             int (*fn)(const struct td_change *change, void *userdata),
                             void *userdata)
{
        struct td_snapshot snapshot;
        int e;

        /* Removals first: a name removed and registered again ends up registered. */
        for (size_t i = 0; i < r->n_changes; i++) {
                const struct timer *t = r->changes[i];

                if (!t->removed)
                        continue;
                e = fn(&(struct td_change){.owner = t->uid, .name = t->name}, userdata);
                if (e < 0)
                        return e;
        }
        for (size_t i = 0; i < r->n_changes; i++) {
                const struct timer *t = r->changes[i];
                struct td_change c = {.owner = t->uid, .name = t->name};

                if (t->removed)
                        continue;
                /* A timer that is transient now was retained: its removal is written. */
                if (timer_retained(t)) {
                        timer_snapshot(t, &snapshot);
                        c.timer = &snapshot;
                }
                e = fn(&c, userdata);
                if (e < 0)
                        return e;
        }
        return 0;
}

void registry_changes_commit(struct registry *r)
{
        while (!list_empty(&r->befores)) {
                struct before *b = list_entry(r->befores.next, struct before, node);

                b->timer->has_before = false;
                list_remove(&b->node);
                before_free(b);
        }
        for (size_t i = 0; i < r->n_changes; i++) {
                struct timer *t = r->changes[i];

                if (t->removed)
                        timer_free(t);
                else
                        t->changed = false;
        }
        r->n_changes = 0;
}

static void changes_drop_called(struct registry *r)
{
        size_t n = 0;

        for (size_t i = 0; i < r->n_changes; i++)
                if (!r->changes[i]->has_before)
                        r->changes[n++] = r->changes[i];
        r->n_changes = n;
}

struct td_transition registry_changes_rollback(struct registry *r, const struct td_now *now)
{
        struct td_transition result;
        int failure = 0, e;

        effects_begin(r);
        e = handle_generations_check(r, TIMERD_CLOCK_MAX);
        if (e < 0)
                return transition_failed(r, e);

        /* Every timer a call changed goes (each has a `before`, and is in the changes). */
        changes_drop_called(r);
        /* Latest first: a name removed and registered again gets its first timer back. What a
         * call made goes without a trace; what it removed comes back. */
        while (!list_empty(&r->befores)) {
                struct before *b = list_entry(r->befores.prev, struct before, node);
                struct timer *t = b->timer;

                list_remove(&b->node);
                if (!t->removed)
                        timer_unlink(r, t);
                timer_free(t);
                if (b->existed) {
                        e = timer_install(r, now, b->owner, b->name, &b->image, &t);
                        if (e < 0 && failure == 0)
                                failure = e;
                }
                before_free(b);
        }
        result = transition_sync(r);
        result.failure = failure;
        return result;
}

void registry_get_stats(const struct registry *r, struct registry_stats *ret)
{
        *ret = (struct registry_stats){
            .timers = r->timers.n_entries,
            .scheduled = r->n_state[TIMERD_STATE_SCHEDULED],
            .running = r->n_state[TIMERD_STATE_RUNNING],
            .failed = r->n_state[TIMERD_STATE_FAILED],
            .pending = r->n_pending,
            .firings = r->firings,
            .overruns = r->overruns,
            .stale_expiries = r->stale_expiries,
        };
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
        const struct session *s = session_find(r, session);

        return s && (!list_empty(&s->transient) || !list_empty(&s->delivered));
}

static size_t list_length(const struct list_node *head)
{
        size_t n = 0;

        for (const struct list_node *p = head->next; p != head; p = p->next) {
                if (p->next->prev != p)
                        return SIZE_MAX;
                n++;
        }
        return n;
}

static bool timer_consistent(const struct registry *r, const struct timer *t)
{
        const struct td_declaration declaration = timer_declaration(t), *d = &declaration;
        const struct run_state *rs = timer_run_state(t);
        enum td_schedule_problem problem;

        if (!registry_name_valid(t->name) || declaration_validate(d, &problem) < 0 ||
            timer_find(r, t->uid, t->name) != t || !owner_find(r, t->uid))
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
                    timerq_entry_deadline(q, &t->entry) != handover_instant(t, t->deadline_usec))
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

/* The inventory holds exactly the live timers, each owner's n_timers of them. */
static int inventory_check_owners(const struct registry *r)
{
        const struct inventory_node *node;
        const struct owner *o = NULL;
        struct inventory_cursor c;
        size_t run = 0;

        if (inventory_check(&r->inventory) < 0 || r->inventory.n_nodes != r->timers.n_entries)
                return -EUCLEAN;
        inventory_seek(&r->inventory, NULL, &c);
        while ((node = inventory_next(&c))) {
                const struct timer *t = inventory_entry(node, struct timer, inventory_node);

                if (t->removed || timer_find(r, t->uid, t->name) != t)
                        return -EUCLEAN;
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

int registry_check(const struct registry *r)
{
        uint64_t n_state[TIMERD_STATE_MAX] = {}, n_pending = 0;
        size_t n_declared[TIMERD_CLOCK_MAX][TIMERQ_KIND_MAX] = {}, n_queued[TIMERD_CLOCK_MAX] = {};
        size_t i = 0, n_owner_timers = 0, n_transient = 0, n_delivered = 0, n_before = 0;
        size_t n_changed = 0, n_retained = 0, n_retained_unchanged = 0;
        const struct session *s;
        const struct owner *o;
        const struct timer *t;

        if (hashmap_check(&r->timers) < 0 || hashmap_check(&r->owners) < 0 ||
            hashmap_check(&r->sessions) < 0)
                return -EUCLEAN;
        if (r->n_effects > r->effects_capacity || r->effects_capacity < TIMERD_CLOCK_MAX)
                return -EUCLEAN;

        while ((t = hashmap_next(&r->timers, &i))) {
                if (!timer_consistent(r, t))
                        return -EUCLEAN;
                n_state[timer_state(t)]++;
                n_pending += timer_pending(t);
                n_declared[t->clock][timerq_kind_of(t->accuracy_usec)]++;
                n_queued[t->clock] += timer_queued(t);
                n_before += t->has_before;
                n_changed += t->changed;
                n_retained += timer_retained(t);
                n_retained_unchanged += timer_retained(t) && !t->changed;
        }
        /* Each changed timer once; removed ones are in no index and keep their `before` until
         * the commit. */
        for (size_t k = 0; k < r->n_changes; k++) {
                const struct timer *c = r->changes[k];

                if (!c->changed)
                        return -EUCLEAN;
                if (!c->removed) {
                        n_changed--;
                        continue;
                }
                if (timer_find(r, c->uid, c->name) == c)
                        return -EUCLEAN;
                n_before += c->has_before;
        }
        for (const struct list_node *p = r->befores.next; p != &r->befores; p = p->next) {
                const struct before *b = list_entry(p, struct before, node);

                if (p->next->prev != p || !b->timer->has_before)
                        return -EUCLEAN;
                n_before--;
        }
        if (n_before != 0 || n_changed != 0 || n_retained != r->n_retained ||
            r->changes_capacity < r->n_changes + n_retained_unchanged)
                return -EUCLEAN;
        for (enum timerd_state st = 0; st < TIMERD_STATE_MAX; st++)
                if (n_state[st] != r->n_state[st])
                        return -EUCLEAN;
        if (n_pending != r->n_pending)
                return -EUCLEAN;

        for (enum timerd_clock c = 0; c < TIMERD_CLOCK_MAX; c++) {
                const struct timerq *q = &r->queues[c];
                const struct clock_arm *a = &r->arms[c];
                uint64_t when;

                if (timerq_check(q) < 0 || timerq_size(q) != n_queued[c])
                        return -EUCLEAN;
                for (enum timerq_kind k = 0; k < TIMERQ_KIND_MAX; k++)
                        if (n_declared[c][k] != r->n_declared[c][k] ||
                            timerq_capacity(q, k) < n_declared[c][k])
                                return -EUCLEAN;
                /* In sync: armed exactly at the queue's arm time, or not armed when empty. */
                if (timerq_arm_time(q, &when) ? !a->armed || a->deadline_usec != when : a->armed)
                        return -EUCLEAN;
                if (a->generation > r->last_handle_generation)
                        return -EUCLEAN;
        }

        if (inventory_check_owners(r) < 0)
                return -EUCLEAN;
        i = 0;
        while ((o = hashmap_next(&r->owners, &i))) {
                size_t n = 0, n_in_states = 0;

                /* An owner stays after its last timer: it remembers its last generation. */
                if (o->last_generation > r->last_generation || o->n_pending > o->n_timers)
                        return -EUCLEAN;
                /* Each owner's counts add up to its timers, and all owners' to the registry's. */
                for (enum timerd_state st = 0; st < TIMERD_STATE_MAX; st++) {
                        n_in_states += o->n_state[st];
                        n_state[st] -= o->n_state[st];
                }
                n_pending -= o->n_pending;
                if (n_in_states != o->n_timers)
                        return -EUCLEAN;
                for (const struct list_node *p = o->pending.next; p != &o->pending; p = p->next) {
                        const struct timer_runs *runs =
                            list_entry(p, struct timer_runs, waiter_node);
                        const struct timer *pt = runs->timer;

                        if (pt->uid != o->uid || !pt->run_active || runs->delivered_to)
                                return -EUCLEAN;
                        n++;
                }
                if (list_length(&o->pending) != n)
                        return -EUCLEAN;
                n_owner_timers += o->n_timers;
        }
        if (n_owner_timers != r->timers.n_entries || n_pending != 0)
                return -EUCLEAN;
        for (enum timerd_state st = 0; st < TIMERD_STATE_MAX; st++)
                if (n_state[st] != 0)
                        return -EUCLEAN;
        if (r->config.max_timers > 0 && r->timers.n_entries > r->config.max_timers)
                return -EUCLEAN;

        i = 0;
        while ((s = hashmap_next(&r->sessions, &i))) {
                for (const struct list_node *p = s->transient.next; p != &s->transient;
                     p = p->next) {
                        const struct timer *tt = list_entry(p, struct timer, transient_node);

                        if (tt->session != s->id || tt->lifetime != TIMERD_LIFETIME_TRANSIENT)
                                return -EUCLEAN;
                        n_transient++;
                }
                for (const struct list_node *p = s->delivered.next; p != &s->delivered;
                     p = p->next) {
                        if (list_entry(p, struct timer_runs, waiter_node)->delivered_to != s)
                                return -EUCLEAN;
                        n_delivered++;
                }
        }
        i = 0;
        while ((t = hashmap_next(&r->timers, &i))) {
                n_transient -= list_linked(&t->transient_node);
                n_delivered -= !!timer_delivered_to(t);
        }
        if (n_transient != 0 || n_delivered != 0)
                return -EUCLEAN;
        return 0;
}
