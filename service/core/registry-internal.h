/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The registry's private state, shared by service/core/registry*.c and by nothing else: the
 * records (timer, owner, session, the registry itself), the small accessors every concern uses,
 * and what each registry file lends the others. Files call down this list, never up:
 * check, restore → run → registry → changes → list → effects, timer.
 */

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arith.h"
#include "base/clockid.h"
#include "base/hashmap.h"
#include "base/list.h"
#include "service/core/inventory.h"
#include "service/core/registry.h"
#include "service/core/subuids.h"
#include "service/core/tally.h"
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
        uint32_t account; /* the uid its limits are charged to: uid, or its person's (subuids.h) */
        size_t n_timers;
        uint64_t last_generation;           /* the highest generation given to this owner */
        uint64_t n_state[TIMERD_STATE_MAX]; /* its timers by state, for its own Status */
        uint64_t n_pending;
        struct list_node pending;       /* struct timer_runs of firings not yet handed to a waiter,
                                         * oldest first */
        struct list_node silenced_node; /* in the registry's silenced list, or unlinked */
};

/*
 * Kept from a session's first transient timer or delivered run until registry_session_closed(),
 * or, when it closed with transient timers, until the reap has freed the last of them. The counts
 * of its transient timers are kept so that closing takes them out of every count at once.
 */
struct session {
        uint64_t id;
        struct list_node transient;
        struct list_node delivered;    /* struct timer_runs of runs handed to this session */
        uint32_t uid;                  /* the owner of its transient timers, unless mixed */
        bool mixed;                    /* transient timers of more than one owner: closed at once */
        bool closing;                  /* closed: its transient timers are gone, being reaped */
        struct list_node closing_node; /* in the registry's closing list while closing */
        uint64_t n_state[TIMERD_STATE_MAX]; /* its transient timers by state */
        uint64_t n_pending;
        /* Closing, and its timers left the inventory at the close: they were all of their
         * owner's (inventory_remove_owner()). */
        bool detached;
        /* Closing, and the queues were emptied at the close: its timers were every queued one.
         * Their queue fields are stale until the reap resets them. */
        bool dequeued;
        uint64_t closed_usec; /* closing: now[TIMERD_CLOCK_REALTIME] at the close */
};

/*
 * How the registry holds a field of each kind of base/timer-fields.h: a time or count the wire
 * bounds (USEC), the live cadence (CADENCE: kept as 0 for the declared one), another value
 * (VALUE), an optional time (OPT_USEC, the pair (has, usec)) or a run's end (RESULT). FIELD_OP
 * applies op, one of the families below, to a field by its kind.
 */
#define FIELD_OP(op, kind, m, ...)         FIELD_SHAPE_##kind(op, kind, m, __VA_ARGS__)
#define FIELD_SHAPE_U64(op, ...)           op##_USEC(__VA_ARGS__)
#define FIELD_SHAPE_INTERNAL_U64(op, ...)  op##_USEC(__VA_ARGS__)
#define FIELD_SHAPE_LIVE_CADENCE(op, ...)  op##_CADENCE(__VA_ARGS__)
#define FIELD_SHAPE_BOOL(op, ...)          op##_VALUE(__VA_ARGS__)
#define FIELD_SHAPE_BOOL_ON(op, ...)       op##_VALUE(__VA_ARGS__)
#define FIELD_SHAPE_INTERNAL_BOOL(op, ...) op##_VALUE(__VA_ARGS__)
#define FIELD_SHAPE_CATCH_UP_MARK(op, ...) op##_VALUE(__VA_ARGS__)
#define FIELD_SHAPE_SIGNO(op, ...)         op##_VALUE(__VA_ARGS__)
#define FIELD_SHAPE_POLICY(op, ...)        op##_VALUE(__VA_ARGS__)
#define FIELD_SHAPE_CLOCK(op, ...)         op##_VALUE(__VA_ARGS__)
#define FIELD_SHAPE_LIFETIME(op, ...)      op##_VALUE(__VA_ARGS__)
#define FIELD_SHAPE_DELIVERY(op, ...)      op##_VALUE(__VA_ARGS__)
#define FIELD_SHAPE_STATE(op, ...)         op##_VALUE(__VA_ARGS__)
#define FIELD_SHAPE_FAILURE(op, ...)       op##_VALUE(__VA_ARGS__)
#define FIELD_SHAPE_OUTCOME(op, ...)       op##_VALUE(__VA_ARGS__)
#define FIELD_SHAPE_OPT_USEC(op, ...)      op##_OPT_USEC(__VA_ARGS__)
#define FIELD_SHAPE_DEADLINE(op, ...)      op##_OPT_USEC(__VA_ARGS__)
#define FIELD_SHAPE_RESULT(op, ...)        op##_RESULT(__VA_ARGS__)

/* The members of struct run_state, wide ones first so that it packs without holes. */
#define RUN_WIDE_MEMBER(kind, snapshot, wire, public, journal, position)                           \
        FIELD_OP(RUN_WIDE, kind, snapshot, )
#define RUN_WIDE_USEC(kind, m, ...)        TD_MEMBER_##kind(m)
#define RUN_WIDE_CADENCE                   RUN_WIDE_USEC
#define RUN_WIDE_RESULT                    RUN_WIDE_USEC
#define RUN_WIDE_OPT_USEC(kind, pair, ...) uint64_t TD_SECOND(pair);
#define RUN_WIDE_VALUE(...)
#define RUN_NARROW_MEMBER(kind, snapshot, wire, public, journal, position)                         \
        FIELD_OP(RUN_NARROW, kind, snapshot, )
#define RUN_NARROW_USEC(...)
#define RUN_NARROW_CADENCE(...)
#define RUN_NARROW_RESULT(...)
#define RUN_NARROW_OPT_USEC(kind, pair, ...) bool TD_FIRST(pair);
#define RUN_NARROW_VALUE(kind, m, ...)       TD_MEMBER_##kind(m)

/* A field from run state (o) to a snapshot (d), or back: the declared cadence is `declared`. */
#define RUN_OUT_USEC(kind, m, d, o, declared)     TD_COPY_ONE(d, m, o, m)
#define RUN_OUT_VALUE                             RUN_OUT_USEC
#define RUN_OUT_RESULT                            RUN_OUT_USEC
#define RUN_OUT_OPT_USEC(kind, m, d, o, declared) TD_COPY_PAIR(d, m, o, m)
#define RUN_OUT_CADENCE(kind, m, d, o, declared)  (d)->m = live_cadence(declared, o);
#define RUN_IN_USEC                               RUN_OUT_USEC
#define RUN_IN_VALUE                              RUN_OUT_USEC
#define RUN_IN_RESULT                             RUN_OUT_USEC
#define RUN_IN_OPT_USEC                           RUN_OUT_OPT_USEC
#define RUN_IN_CADENCE(kind, m, d, o, declared)   (d)->m = (o)->m == (declared) ? 0 : (o)->m;

/* The runs of a registration so far and the current one; a replace starts it over (all zero). */
struct run_state {
        /* The RUN fields of base/timer-fields.h (struct td_snapshot says what they mean), and the
         * bookkeeping no snapshot shows. live_cadence_usec is 0 for the declared cadence: a
         * cadence Reschedule set, kept out of the declaration, which only Register and Reconcile
         * change. */
        TD_TIMER_FIELDS_HELD(TD_NO_FIELD, RUN_WIDE_MEMBER)
        uint64_t run_fired_usec;
        uint64_t deferred_deadline_usec; /* after_run DEADLINE: what the run's end arms */
        uint64_t missed_deadline_usec;   /* has_missed_deadline: what a delayed catch-up reports */
        uint64_t overruns_reported;      /* overruns when the last firing was handed over */
        TD_TIMER_FIELDS_HELD(TD_NO_FIELD, RUN_NARROW_MEMBER)
};

/* The declaration fields few timers set (nothing in libtimerd or timerctl sets them unasked):
 * kept beside the runs, so that a timer without them is a smaller record. */
struct timer_rare {
        uint64_t accuracy_usec;
        uint64_t randomized_delay_usec;
};

/*
 * Allocated when a timer first fires (or is put back with runs, or with a delayed catch-up), or
 * is declared with a rare field, so that a timer that never ran and sets none carries none of it.
 * While a run is active, waiter_node is in the owner's pending list, or, once the run was handed
 * over, in the delivering session's list.
 */
struct timer_runs {
        struct timer *timer;
        struct list_node waiter_node;
        struct session *delivered_to; /* NULL while pending */
        struct timer_rare rare;
        struct run_state state;
};

/*
 * A timer, packed: there may be millions. Its owner and session records are found by uid and
 * session id; its hash is computed from (uid, name) when the table needs it; the declaration's
 * enums and the flags share one bit-field word, the signal a byte after it; the rare declaration
 * fields are in the runs record; the name starts in the tail padding. With a name of up to 10
 * bytes the allocation is at most 104 bytes: one 112-byte malloc chunk (glibc: request + 8,
 * rounded up to 16).
 */
struct timer {
        struct timerq_entry entry; /* queued at deadline_usec - handover */
        uint64_t deadline_usec;    /* while queued: the deadline itself */
        uint64_t generation;
        uint64_t session;
        struct list_node transient_node; /* transient: in its session's list */
        struct timer_runs *runs;         /* NULL until it first fires */

        /* The declaration (timer_declaration() puts it together). A calendar timer has no
         * cadence: its schedule takes the place (timer_calendar()), and a timer stays one chunk. */
        union {
                uint64_t cadence_usec;
                const struct td_calendar *calendar; /* a reference */
        };
        /* In (owner, name) order. Right before uid and name, the key an insert's descent
         * reads at each node: for half of the chunk's alignments to a cache line, node and key
         * (with a short name) share one line, one miss a level at a million timers, not two. */
        struct inventory_node inventory_node;
        uint32_t uid;
        uint32_t handover_usec; /* at most TIMERD_HANDOVER_MAX_USEC */
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
        /* A calendar timer: the re-evaluation pass its deadline was computed in (modulo 256). */
        unsigned calendar_epoch : 8;
        /* After the bit-fields, so that the name starts 3 bytes earlier: at most TD_SIGNO_MAX. */
        uint8_t signo;

        char name[];
};

static_assert(TIMERD_POLICY_MAX <= 8 && TIMERD_CLOCK_MAX <= 8 && TIMERD_LIFETIME_MAX <= 2 &&
                  TIMERD_DELIVERY_MAX <= 4 && TIMERD_FAILURE_MAX <= 8 && AFTER_RUN_NONE < 4,
              "struct timer: bit-field widths");

static_assert(TIMERD_HANDOVER_MAX_USEC <= UINT32_MAX, "struct timer: handover_usec");
static_assert(TD_SIGNO_MAX <= UINT8_MAX, "struct timer: signo");
static_assert(sizeof(void *) != 8 || offsetof(struct timer, name) + 10 + 1 <= 104,
              "struct timer: a 10-byte name fits a 112-byte chunk");

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

/* The one kernel timer of a clock, as last requested from the runtime. */
struct clock_arm {
        bool armed;
        uint64_t deadline_usec;
        uint64_t generation;
};

/*
 * A re-evaluation of the calendar timers in progress (registry_reevaluate_step()): it walks the
 * timers in (owner, name) order, those after `after` still to do; a queued calendar timer whose
 * deadline was computed before the pass began (calendar_epoch != epoch) gets the first elapse
 * after base_usec of its clock. A restart walks again from the start under a new epoch; after
 * CALENDAR_PASS_RESTARTS_MAX restarts in one pass it finishes at once, before the 8-bit epoch
 * could come round to one a timer still carries.
 */
struct calendar_pass {
        bool active;
        bool has_after;
        uint8_t epoch;
        unsigned restarts;
        uint32_t after_owner;
        char after_name[TIMERD_NAME_MAX + 1];
        uint64_t base_usec[TIMERD_CLOCK_MAX];
};

#define CALENDAR_PASS_RESTARTS_MAX 128

struct registry {
        struct registry_config config;
        struct hashmap timers;   /* (owner, name) → struct timer */
        struct hashmap owners;   /* uid → struct owner */
        struct hashmap sessions; /* id → struct session */
        /* The subordinate uid ranges (registry_set_subuids()), and the live timers of the owners
         * charged to another uid, by that account. */
        const struct subuids *subuids;
        struct tally accounts;
        /* The owner of the last timer made: a restore makes an owner's timers one after the
         * other, and looked their owner up five times a timer. Owners live as long as the
         * registry. */
        struct owner *last_owner;
        /* The session of the last timer made: a connection registers its transient timers one
         * after the other, and a Register looked its session up four times. NULL once that
         * session is freed. */
        struct session *last_session;
        /* The same timers in (owner, name) order. */
        struct inventory inventory;
        struct timerq queues[TIMERD_CLOCK_MAX];
        /* The room each queue keeps reserved, by kind (exact or coalescing). */
        size_t n_declared[TIMERD_CLOCK_MAX][TIMERQ_KIND_MAX];
        struct clock_arm arms[TIMERD_CLOCK_MAX];
        /* The clocks (1 << clock) whose queue changed since their kernel timer was last brought
         * in line with it: only these can need an ARM or a DISARM (transition_sync()). Kept
         * across a failed call, so the next call's sync still sees what it changed. */
        unsigned unsynced;
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
        struct calendar_pass calendar_pass;

        enum td_schedule_problem problem; /* why the current call is InvalidSchedule */
        enum td_limit limit;              /* … LimitExceeded, and the bound's value */
        uint32_t limit_max;
        struct td_effect *effects;
        size_t n_effects;
        size_t effects_capacity;
        /* The current call's td_removals; room for REMOVALS_MIN always, a reap step's until the
         * call after the last one. */
        struct td_removal *removals;
        size_t n_removals;
        size_t removals_capacity;
        /* Closed sessions whose transient timers are still to free (registry_reap_step()), oldest
         * first, and how many such timers there are: found by no lookup and in no count. */
        struct list_node closing;
        size_t n_gone;
        /* struct owner: a notify timer of theirs had something to deliver and has nothing now
         * (see registry_take_silenced_owner()), in the order of the first such change. */
        struct list_node silenced;
};

/* An owner's live timers counted in, or out, of its own count and its account's (inline: every
 * Register and removal passes here, and an owner charged to itself costs a comparison). */
static inline void owner_timers_add(struct registry *r, struct owner *o, size_t n)
{
        o->n_timers += n;
        if (o->account != o->uid)
                tally_add(&r->accounts, o->account, n, 0);
}

static inline void owner_timers_sub(struct registry *r, struct owner *o, size_t n)
{
        o->n_timers -= n;
        if (o->account != o->uid)
                tally_sub(&r->accounts, o->account, n, 0);
}

/* A run state of all zero: what a timer that never fired reports. */
static const struct run_state no_runs = {.last_outcome = TIMERD_OUTCOME_NONE};

static inline const struct run_state *timer_run_state(const struct timer *t)
{
        return t->runs ? &t->runs->state : &no_runs;
}

static inline uint64_t timer_accuracy(const struct timer *t)
{
        return t->runs ? t->runs->rare.accuracy_usec : 0;
}

static inline uint64_t timer_randomized_delay(const struct timer *t)
{
        return t->runs ? t->runs->rare.randomized_delay_usec : 0;
}

/* The cadence the schedule follows: Reschedule's, else the declared one. */
static inline uint64_t live_cadence(uint64_t declared_usec, const struct run_state *rs)
{
        return rs->live_cadence_usec > 0 ? rs->live_cadence_usec : declared_usec;
}

/* The schedule of a calendar timer, else NULL. */
static inline const struct td_calendar *timer_calendar(const struct timer *t)
{
        return t->policy == TIMERD_POLICY_CALENDAR ? t->calendar : NULL;
}

/* The declared cadence: a calendar timer's schedule takes its place. */
static inline uint64_t timer_declared_cadence(const struct timer *t)
{
        return t->policy == TIMERD_POLICY_CALENDAR ? 0 : t->cadence_usec;
}

/* The cadence the schedule follows now. */
static inline uint64_t timer_cadence(const struct timer *t)
{
        return live_cadence(timer_declared_cadence(t), timer_run_state(t));
}

/* Once, after-completion and calendar timers leave the queue while a run is active; the others
 * stay. */
static inline bool policy_runs_off_queue(enum timerd_policy p)
{
        return p == TIMERD_POLICY_ONCE || p == TIMERD_POLICY_AFTER_COMPLETION ||
               p == TIMERD_POLICY_CALENDAR;
}

static inline struct timer *timer_of_entry(struct timerq_entry *e)
{
        return (struct timer *)(void *)((char *)e - offsetof(struct timer, entry));
}

static inline bool timer_queued(const struct timer *t)
{
        return timerq_entry_queued(&t->entry);
}

static inline bool timer_pending(const struct timer *t)
{
        return t->runs && !t->runs->delivered_to && list_linked(&t->runs->waiter_node);
}

static inline struct session *timer_delivered_to(const struct timer *t)
{
        return t->runs ? t->runs->delivered_to : NULL;
}

static inline enum timerd_state timer_state(const struct timer *t)
{
        if (t->failure != TIMERD_FAILURE_NONE)
                return TIMERD_STATE_FAILED;
        if (t->run_active)
                return TIMERD_STATE_RUNNING;
        if (timer_queued(t))
                return TIMERD_STATE_SCHEDULED;
        return TIMERD_STATE_INACTIVE;
}

static inline bool timer_retained(const struct timer *t)
{
        return t->lifetime == TIMERD_LIFETIME_RETAINED;
}

/* How early a run with this declared handover starts: 0 when the registry ignores handovers. */
static inline uint64_t registry_handover(const struct registry *r, uint64_t declared_usec)
{
        return r->config.ignore_handover ? 0 : declared_usec;
}

static inline uint64_t timer_handover(const struct registry *r, const struct timer *t)
{
        return registry_handover(r, t->handover_usec);
}

/* When a deadline is due in the queue: early by the handover, never before 0. */
static inline uint64_t handover_instant(const struct registry *r, const struct timer *t,
                                        uint64_t deadline_usec)
{
        uint64_t handover = timer_handover(r, t);

        return deadline_usec > handover ? deadline_usec - handover : 0;
}

/* An interval or watchdog held behind its run: its schedule is in deferred_deadline_usec. */
static inline bool timer_held(const struct timer *t)
{
        return t->after_run == AFTER_RUN_DEADLINE &&
               !policy_runs_off_queue((enum timerd_policy)t->policy);
}

/* registry-timer.c: a timer's record, its indexes, counts, change marks and queue place. */
uint64_t identity_hash(uint32_t owner, const char *name);
/* Any timer of that identity, also one that is gone (its session closed, not reaped yet). */
struct timer *timer_lookup(const struct registry *r, uint32_t owner, const char *name);
/* The live timer of that identity, else NULL. */
struct timer *timer_find(const struct registry *r, uint32_t owner, const char *name);
/* timer_find() with the identity's hash known (identity_hash()). */
struct timer *timer_find_hashed(const struct registry *r, uint64_t hash, uint32_t owner,
                                const char *name);
struct owner *owner_find(const struct registry *r, uint32_t uid);

/* registry-accounts.c: the account uid's timers are charged to. */
uint32_t registry_account_of(const struct registry *r, uint32_t uid);
struct session *session_find(const struct registry *r, uint64_t id);
/* The session's record unless it closed (or has none). */
struct session *session_open(const struct registry *r, uint64_t id);
/* Whether t's session closed: t is in no count and no lookup finds it; it waits to be freed. */
bool timer_gone_slow(const struct registry *r, const struct timer *t);
static inline bool timer_gone(const struct registry *r, const struct timer *t)
{
        return r->n_gone > 0 && timer_gone_slow(r, t);
}
/* The timers that are not gone. */
static inline size_t timers_live(const struct registry *r)
{
        return r->timers.n_entries - r->n_gone;
}
/* Free a gone timer of closing session s now (the reap, or a call that takes its name), with
 * room for its removal (removals_reserve()); hash is the one timer_reap_prefetch() returned. */
void timer_reap(struct registry *r, const struct session *s, struct timer *t, uint64_t hash);
/* Start fetching the hash slot a reap of t reads first (a cache miss per timer otherwise); its
 * hash, which the reap needs again. */
uint64_t timer_reap_prefetch(const struct registry *r, const struct timer *t);
/* Free one gone timer (n_gone > 0), the next registry_reap_step() would: room the table's limit
 * needs now, without waiting for it. */
void gone_reap_one(struct registry *r);
int session_get(struct registry *r, uint64_t id, struct session **ret);
/* Out of the sessions (and the closing list): the record is freed. */
void session_free(struct registry *r, struct session *s);
bool run_state_empty(const struct run_state *rs);
void timer_runs_adopt(struct timer *t, struct timer_runs *runs, const struct run_state *state);
int timer_runs_attach(struct timer *t);
void timer_free(struct timer *t);
int schedule_invalid(enum td_schedule_problem *ret_problem, enum td_schedule_problem problem);
int declaration_validate(const struct td_declaration *d, enum td_schedule_problem *ret_problem);
struct td_declaration timer_declaration(const struct timer *t);
bool declaration_equal(const struct timer *t, const struct td_declaration *b);
/* A new handover (valid for t's declaration), its queue place moved with it. */
void timer_set_handover(struct registry *r, struct timer *t, uint64_t handover_usec);
void changes_add(struct registry *r, struct timer *t);
void timer_changed(struct registry *r, struct timer *t);
int changes_reserve(struct registry *r, size_t more);
void stats_leave(struct registry *r, const struct timer *t);
void stats_enter(struct registry *r, struct timer *t);
void timer_enqueue(struct registry *r, struct timer *t, uint64_t deadline_usec, uint64_t now);
void timer_dequeue(struct registry *r, struct timer *t);
void run_detach(struct timer *t);
int timer_limits_check(struct registry *r, uint32_t uid, bool privileged);
/* Where a new timer goes, as its caller knows it from the look-up that found the name free: its
 * identity's hash (identity_hash()), and whether it comes after every timer in (uid, name) order
 * (false: not known). */
struct timer_place {
        uint64_t hash;
        bool after_last;
};
int timer_new(struct registry *r, const struct td_caller *caller, const char *name,
              const struct td_declaration *d, uint64_t generation, const struct timer_place *place,
              struct timer **ret);

/* timer_new() without the stats_enter() that puts it in the counts: for a caller that sets its
 * state first (a restore) and then counts it once. */
int timer_new_uncounted(struct registry *r, const struct td_caller *caller, const char *name,
                        const struct td_declaration *d, uint64_t generation,
                        const struct timer_place *place, struct timer **ret);
int timer_redeclare(struct registry *r, struct timer *t, const struct td_caller *caller,
                    const struct td_declaration *d, uint64_t generation);
void timer_unlink(struct registry *r, struct timer *t);
void timer_destroy(struct registry *r, struct timer *t);
int schedule_skip(uint64_t deadline, uint64_t cadence_usec, uint64_t handover_usec, uint64_t now,
                  uint64_t *ret_due, uint64_t *ret_next);
bool timer_next_deadline(const struct timer *t, uint64_t *ret);
void registry_indexes_init(struct registry *r);
void registry_indexes_free(struct registry *r);

/* registry-effects.c: the transition returned, the clocks kept in sync. */
int handle_generations_check(const struct registry *r, uint64_t n);
void effects_begin(struct registry *r);
int effects_reserve(struct registry *r, size_t n);
void effect_push(struct registry *r, const struct td_effect *e);
/* A call that registers one timer frees at most two gone ones: one of its name, and the oldest to
 * keep within max_timers. */
#define REMOVALS_MIN 2
/* Room for n removals in this call; -ENOMEM. */
int removals_reserve(struct registry *r, size_t n);
/* Give the room above REMOVALS_MIN back once the reap is over (at the next call, or
 * registry_shrink(): the last step's transition holds them until then). */
void removals_shrink(struct registry *r);
/* t, a transient timer of session s, leaves the registry: told in the transition. */
void removal_push(struct registry *r, const struct session *s, const struct timer *t);
struct td_transition transition_done(const struct registry *r);
struct td_transition transition_failed(struct registry *r, int failure);
void clock_sync(struct registry *r, enum timerd_clock c, bool spent);
struct td_transition transition_sync(struct registry *r);

/* registry-list.c: snapshots and listings. */
void timer_snapshot(const struct timer *t, struct td_snapshot *ret);

/* registry-changes.c: the changes to commit, the pre-images to roll back to. */
void before_free(struct before *b);
int before_prepare(const struct registry *r, const struct timer *t, bool retained_after,
                   struct before **ret);
void before_attach(struct registry *r, struct timer *t, struct before *b);
int change_begin(struct registry *r, struct timer *t);
void changes_drop_called(struct registry *r);
void changes_free(struct registry *r);

/* registry.c: the control calls. */
int calendar_deadline(struct registry *r, uint32_t owner, const char *name,
                      const struct td_declaration *d, uint64_t after, uint64_t *ret);
int session_validate(uint64_t session);
void timer_drop_hold(struct timer *t);
void timer_fail(struct registry *r, struct timer *t, enum timerd_failure failure);
int handle_resolve(const struct registry *r, const struct td_handle *h, struct timer **ret);

/* registry-run.c: firing, runs, delivery, sessions. */
bool run_end_valid(const struct td_run_end *end);
void run_abandon(struct registry *r, struct timer *t, const struct td_now *now);
