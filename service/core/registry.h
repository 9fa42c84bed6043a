/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The registry of named timers: timerd's canonical state, and a PURE core. It makes no system
 * calls, reads no clock and allocates only for its own tables. Every entry point takes the
 * current time of every clock (`now`) and returns a transition: a typed failure (0 or
 * -TIMERD_E_*) and the effects the runtime must apply to the world:
 *
 *   ARM      arm the kernel timer of a clock at a deadline, with a handle generation
 *   DISARM   nothing of this clock is due any more
 *   DISPATCH a run started: hand its token to a waiter of the owner (or leave it pending)
 *
 * The runtime applies ARM/DISARM to the loop and reports each outcome with
 * registry_confirm_arm(): a failure marks the timers that needed it `failed`
 * (provider_binding_failed) and returns a follow-up transition. The registry stays consistent
 * whatever the runtime reports.
 *
 * Ordering: timers due together are dispatched in (deadline, owner, name) order; the inventory is
 * listed in (owner, name) order. Every counter is overflow-checked: overflow is -TIMERD_E_OVERFLOW,
 * never a wrap.
 *
 * Decided where the model is silent:
 *   - A failed call changes nothing and has no effects. Arguments only the runtime supplies (a
 *     session of 0, a clock out of range, NULL names with n_names > 0) are -EINVAL.
 *   - Each mutating call needs room for one handle generation per clock it may re-arm (two for
 *     a replace that changes clock, every clock for session_closed), else -TIMERD_E_OVERFLOW.
 *   - Schedule, Reschedule, Cancel, Kick and Reconcile clear a `failed` state: the owner asked
 *     for a new schedule. Nothing else revives a failed timer; its completion never re-arms it.
 *   - A provider-binding failure leaves an active run valid (it can still be completed).
 *   - A firing whose successor (interval, watchdog) or run/overrun counter would overflow fails
 *     the timer with TIMERD_FAILURE_OVERFLOW and dispatches nothing. An after-completion run whose
 *     completion + cadence overflows completes normally and leaves the timer failed (overflow).
 *   - The statistics counters firings, overruns and stale_expiries saturate instead.
 *   - After an expiry, a failed arm or a rearm the clock always gets a new ARM, or a DISARM when
 *     nothing is left on it, even if the arm time is unchanged: the kernel timer is spent, and the
 *     old handle generation goes stale (a repeated expiry of it is dropped).
 *   - Out of memory while firing a large batch (the effect table, or the record of a timer's
 *     first run): the firings done so far are dispatched and the clock is re-armed at the (past)
 *     arm time, so the rest fire on the next expiry.
 *
 * Memory: a timer that never fired, with a name of up to 10 bytes, is one 128-byte malloc chunk,
 * plus its slot in the hash table (8 B, the table at most 3/4 full) and in its clock's queue (16 B;
 * 32 with accuracy > 0): about 160 B at a million timers. Its first firing adds the record of its
 * runs (a 176-byte chunk); a retained timer keeps a place among the changes to commit (8 B). After
 * many timers went, registry_shrink() gives the tables' room back.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arith.h"
#include "base/timer-fields.h"
#include "service/core/calendar-timer.h"
#include "timerd/timerd-types.h"

/* The current time of each clock, microseconds on that clock. Alarm clocks read as their base. */
struct td_now {
        uint64_t usec[TIMERD_CLOCK_MAX];
};

/* How a run's program ended, as its runner reported it (exit TIMERD_EXIT_NONE: not reported). */
struct td_run_end {
        enum timerd_exit exit;
        uint32_t code; /* exit status or signal number, 0 to 255 */
};

/*
 * What a timer is declared as: the fields of base/timer-fields.h's TD_DECLARATION_FIELDS.
 *   cadence_usec          > 0 for all but once and calendar; 0 for those
 *   accuracy_usec         coalescing window: may fire in [deadline, deadline + accuracy]
 *   signo                 delivery signal: the signal sent (1 to TD_SIGNO_MAX); otherwise 0
 *   catch_up              retained timers: a deadline missed while the service was down fires once
 *                         at start (otherwise the missed firing is skipped), delayed by a random
 *                         part of randomized_delay_usec so that a host full of catch-ups does not
 *                         fire in one burst
 *   handover_usec         notify timers only (else 0), at most TIMERD_HANDOVER_MAX_USEC: the run
 *                         may start up to this long before the deadline, so that the firing
 *                         reaches the waiter ahead of it and the client holds it until the
 *                         deadline on its own clock (libtimerd does). The queue orders and arms by
 *                         deadline - handover; the deadline itself is what the run reports.
 */
/* The journal keeps a signal number in a byte; the runtime accepts only real ones (≤ SIGRTMAX). */
#define TD_SIGNO_MAX UINT8_MAX

struct td_declaration {
        TD_DECLARATION_FIELDS(TD_SNAPSHOT_MEMBER)
        /* Calendar timers only (else NULL), on the realtime or realtime_alarm clock: the
         * schedule. The registry keeps a reference; a snapshot's is borrowed (valid until the
         * next mutating call). randomized_delay_usec then delays every elapse by a fresh random
         * part of it, or by a fixed part derived from the timer's identity. */
        const struct td_calendar *calendar;
};

/* Who asks: the owner uid, and the session (connection) that transient timers and runs bind to. */
struct td_caller {
        uint32_t uid;
        uint64_t session; /* > 0 */
};

/* A claim or a run token, as the client presents it. run == 0: a plain claim. */
struct td_handle {
        uint32_t owner;
        const char *name;
        uint64_t generation;
        uint64_t run;
};

enum td_effect_kind {
        TD_EFFECT_ARM,
        TD_EFFECT_DISARM,
        TD_EFFECT_DISPATCH,
};

struct td_dispatch {
        uint32_t owner;
        const char *name; /* valid until the next mutating registry call */
        uint64_t generation;
        uint64_t run;
        enum timerd_clock clock;
        enum timerd_delivery delivery;
        uint64_t deadline_usec; /* when it was due */
        uint64_t fired_usec;    /* now[clock] when the run started */
        /* When the service owed the run: the end of its window, deadline - handover + accuracy */
        uint64_t due_usec;
        /* It was due already when it was queued (a past start or deadline, a catch-up): how late
         * it fired is the client's doing, not the service's. */
        bool past_due;
        /* Its deadline passed while the service was down: fired once at restore (catch_up). */
        bool catch_up;
        uint64_t overruns; /* periods missed since the previous firing was handed over */
};

struct td_effect {
        enum td_effect_kind kind;
        union {
                struct {
                        enum timerd_clock clock;
                        uint64_t deadline_usec; /* absolute on clock */
                        uint64_t generation;    /* the provider handle's generation */
                } arm;                          /* ARM and DISARM (deadline 0) */
                struct td_dispatch dispatch;
        };
};

/* Why a schedule is -TIMERD_E_INVALID_SCHEDULE. */
enum td_schedule_problem {
        TD_SCHEDULE_OK,
        TD_SCHEDULE_CADENCE_MISSING,       /* a policy other than once without a cadence */
        TD_SCHEDULE_CADENCE_ON_ONCE,       /* a once timer with a cadence */
        TD_SCHEDULE_CADENCE_BELOW_MINIMUM, /* shorter than registry_config.min_cadence_usec */
        TD_SCHEDULE_HANDOVER_NOT_SHORTER,  /* a handover not shorter than the cadence */
        TD_SCHEDULE_DEADLINE_MISSING,      /* a once timer asked to be scheduled, at no time */
        TD_SCHEDULE_CALENDAR_MISSING,      /* a calendar timer without a schedule, or another
                                            * policy with one */
        TD_SCHEDULE_CALENDAR_CLOCK,        /* a calendar on a clock other than realtime(_alarm) */
        TD_SCHEDULE_CALENDAR_NEVER,        /* no elapse is left (past year 9999) */
};

/* Which bound a -TIMERD_E_LIMIT_EXCEEDED reached. */
enum td_limit {
        TD_LIMIT_NONE,
        TD_LIMIT_TIMERS_PER_OWNER, /* registry_config.max_timers_per_owner */
        TD_LIMIT_TIMERS,           /* the table: max_timers, less the reserved share for a caller
                                    * that is not privileged */
        TD_LIMIT_TIMERS_SHARE,     /* a caller that is not privileged: half of what the others
                                    * leave of the table's bound (timer_limits_check()) */
};

/*
 * A transient timer of a closed connection that left the registry: registry_reap_step() frees them
 * in the order they were registered, a step at a time; a call that takes its name (registering it
 * again) frees it first; a connection whose timers have more than one owner, or one rolled back to
 * transient since the commit, loses them at the close.
 */
struct td_removal {
        uint32_t owner;
        uint64_t closed_usec; /* now[TIMERD_CLOCK_REALTIME] when the connection closed */
        char name[TIMERD_NAME_MAX + 1];
};

struct td_transition {
        int failure;                               /* 0 or -TIMERD_E_* */
        enum td_schedule_problem schedule_problem; /* failure -TIMERD_E_INVALID_SCHEDULE: why */
        enum td_limit limit;                       /* failure -TIMERD_E_LIMIT_EXCEEDED: which */
        uint32_t limit_max;                        /* … and its value for this caller */
        size_t n_effects;
        const struct td_effect *effects; /* owned by the registry; valid until its next call */
        /* Timers removed by the call, even a failed one (a call that frees a gone timer of the
         * name it registers and then fails); owned by the registry, valid until its next call. */
        size_t n_removals;
        const struct td_removal *removals;
};

/*
 * A coherent copy of one timer: its identity, declaration and the fields of base/timer-fields.h's
 * TD_TIMER_FIELDS. What they mean:
 *   has_deadline, next_deadline_usec  the next wake-up, absolute on the clock
 *   run                  sequence of the current (or last) run; 0 = never ran
 *   pending              fired, not yet handed to a waiter
 *   run_deadline_usec    when the current (or last) run was due
 *   run_cancelled        cancelled during the active run: its end arms nothing
 *   runs                 completed runs
 *   live_cadence_usec    the cadence the schedule follows: one Reschedule set, else the declared
 *                        one (0 in a snapshot given to registry_restore() also means the declared
 *                        one)
 *   last_catch_up        the last run was a catch-up (td_dispatch.catch_up)
 *   last_end             how the last run's program ended
 */
struct td_snapshot {
        uint32_t owner;
        char name[TIMERD_NAME_MAX + 1];
        struct td_declaration declaration;
        TD_TIMER_FIELDS(TD_SNAPSHOT_MEMBER)
        uint64_t session; /* the registering session (0: none, restored); transient timers die
                           * with it */
};

struct registry_config {
        /* Live timers of one owner, or of the subordinate uids of one account together
         * (registry_subuids_commit()); 0: unlimited */
        uint32_t max_timers_per_owner;
        /* All timers, gone ones not freed yet too (registry_session_closed()); 0: unlimited */
        uint32_t max_timers;
        /* Of max_timers, the places only a privileged caller (td_register_args.privileged) takes,
         * so that no set of other uids keeps uid 0 and the admin group out; at most half. */
        uint32_t reserved_timers;
        uint64_t min_cadence_usec; /* a shorter cadence is -TIMERD_E_INVALID_SCHEDULE; 0: none */
        uint64_t first_generation; /* >= 1; journal replay or tests start elsewhere */
        uint64_t first_handle_generation; /* >= 1 */
        uint64_t random_seed; /* the fresh random delays of calendar timers derive from it */
        /* Runs start at their deadlines whatever handover is declared (a virtual clock: test
         * suites see exact times); Get and List still show the declared one. */
        bool ignore_handover;
};

struct registry;

int registry_new(const struct registry_config *config, struct registry **ret);
void registry_free(struct registry *r);

struct subuids;
struct tally;
/*
 * Charge the per-owner limit of the uids in t's ranges to their accounts (subuids.h; NULL: no
 * ranges), t outliving its use here. The registry starts with none. prepare counts the live
 * timers of every owner anew for t (-ENOMEM: nothing changed) into *ret, which commit then takes:
 * two steps, so that a caller re-charging several tables changes all of them or none.
 */
int registry_subuids_prepare(const struct registry *r, const struct subuids *t, struct tally *ret);
void registry_subuids_commit(struct registry *r, const struct subuids *t, struct tally *prepared);

/* 1..128 bytes of [A-Za-z0-9._:@-]. Wherever a timer is looked up by name, one that is not valid
 * is -TIMERD_E_INVALID_NAME. */
bool registry_name_valid(const char *name);

/*
 * Register `name` for caller.uid. The first deadline is `start_usec` (absolute on the clock) when
 * has_start, else: once → inactive; watchdog/interval/after-completion → now + cadence.
 * An existing name → -TIMERD_E_ALREADY_REGISTERED unless `replace` (then its claim, run and
 * pending firing expire and a new generation is given; the timer starts over: counters reset, it
 * binds to the replacing session). Limits: -TIMERD_E_LIMIT_EXCEEDED (a replace never counts),
 * td_transition.limit says which.
 */
struct td_register_args {
        struct td_caller caller;
        const char *name;
        struct td_declaration declaration;
        bool has_start;
        uint64_t start_usec;
        bool replace;
        bool privileged; /* uid 0 or the admin group calls: the reserved timers are open to it */
};
struct td_transition registry_register(struct registry *r, const struct td_now *now,
                                       const struct td_register_args *a, uint64_t *ret_generation);

/*
 * Idempotent: create the declaration if missing, reuse the claim if it matches, else
 * -TIMERD_E_RECONCILIATION_CONFLICT (nothing changes). Then make the live schedule exactly
 * `desired`: EXACT at deadline_usec (has_deadline); SCHEDULED keeps a wake-up the timer has,
 * else sets one at deadline_usec when has_deadline, else at now + cadence (a once timer without
 * a deadline: -TIMERD_E_INVALID_SCHEDULE, deadline missing).
 * During a run of a once or after-completion timer, SCHEDULED and EXACT act on the wake-up the run
 * arms at completion. EXACT on a watchdog is -TIMERD_E_WRONG_POLICY (its deadline moves by Kick).
 * A cadence Reschedule set goes: the schedule follows the declaration again (a kept wake-up
 * stays where it is). A reused timer keeps its registering session, but a retained signal timer
 * reconciled from its owner's own connection (caller_is_owner) is re-pinned to it: its signals go
 * to the caller's process from then on (the old target's pidfd died with its connection, or with
 * the service when it was restored).
 * The handover is not part of the match: it is how the caller's library takes firings, so a
 * reused timer takes the caller's (a client upgraded to libtimerd's default handover meets the
 * retained timer it declared without one).
 */
struct td_reconcile_args {
        struct td_caller caller;
        const char *name;
        struct td_declaration declaration;
        enum timerd_desired desired;
        bool has_deadline;
        uint64_t deadline_usec;
        bool caller_is_owner; /* not root acting for another owner */
        bool privileged;      /* as td_register_args.privileged, when it creates the timer */
};
struct td_transition registry_reconcile(struct registry *r, const struct td_now *now,
                                        const struct td_reconcile_args *a, uint64_t *ret_generation,
                                        bool *ret_created);

/*
 * Control calls take a handle: a claim (run == 0) or, while that run is active, a run token that
 * acts as a delegated claim. A stale generation or finished run → -TIMERD_E_REGISTRATION_EXPIRED;
 * an unknown name → -TIMERD_E_NOT_FOUND.
 */

/* Set the next deadline (absolute). Not for watchdogs (-TIMERD_E_WRONG_POLICY: use kick). */
struct td_transition registry_schedule(struct registry *r, const struct td_now *now,
                                       const struct td_handle *h, uint64_t deadline_usec);

/*
 * setitimer-style: replace deadline and/or cadence, return the previous remaining time (0 when it
 * was not scheduled) and live cadence. has_deadline false → disarm. The cadence changes the live
 * schedule, not the declaration (a Reconcile with it still matches; Register and Reconcile put
 * the declared cadence back).
 * A watchdog takes a cadence or a disarm, but a deadline is -TIMERD_E_WRONG_POLICY (use kick).
 */
struct td_reschedule_result {
        uint64_t previous_remaining_usec;
        uint64_t previous_cadence_usec;
};
struct td_transition registry_reschedule(struct registry *r, const struct td_now *now,
                                         const struct td_handle *h, bool has_deadline,
                                         uint64_t deadline_usec, bool has_cadence,
                                         uint64_t cadence_usec, struct td_reschedule_result *ret);

/* Clear the live wake-up; the declaration stays (state inactive). An active run stays valid but
 * will not re-arm the timer when it completes. */
struct td_transition registry_cancel(struct registry *r, const struct td_now *now,
                                     const struct td_handle *h);

/* Watchdogs only: push the deadline to now + cadence. */
struct td_transition registry_kick(struct registry *r, const struct td_now *now,
                                   const struct td_handle *h, uint64_t *ret_deadline_usec);

/*
 * The runtime could not deliver what the timer promises (a signal whose target process is gone):
 * the timer goes failed with `failure` and leaves the queue. Its claim stays valid, so the owner
 * can see why and reschedule it.
 */
struct td_transition registry_fail(struct registry *r, const struct td_now *now,
                                   const struct td_handle *h, enum timerd_failure failure);

/*
 * The delivery of this run coalesced with an earlier one still pending at the target (a signal
 * not yet taken): count it as an overrun, like a POSIX timer's. The run itself goes on.
 */
struct td_transition registry_note_overrun(struct registry *r, const struct td_now *now,
                                           const struct td_handle *h);

/* Remove the timer; its claims, run tokens and pending firing expire. Takes the claim itself: a
 * run token (run > 0) is -TIMERD_E_INVALID_PARAMETER. */
struct td_transition registry_unregister(struct registry *r, const struct td_now *now,
                                         const struct td_handle *h);

/*
 * End the run of `token` (run > 0). Outcome success / expected-failure (counted; consecutive count
 * resets on success) / invariant-failure (timer → failed). Directive stop → inactive. Otherwise
 * the policy goes on: once → inactive unless a deadline was set during the run; after-completion →
 * now + cadence (or the deadline set during the run); watchdog/interval keep their armed schedule.
 * duration_usec is the client's measurement of the run (0: now - start); end (NULL: not reported)
 * how its program ended, kept as the timer's last_end (an invalid one: InvalidParameter).
 * Invariant-failure and stop win over a deadline set during the run.
 */
struct td_transition registry_complete(struct registry *r, const struct td_now *now,
                                       const struct td_handle *token, enum timerd_outcome outcome,
                                       enum timerd_directive directive, uint64_t duration_usec,
                                       const struct td_run_end *end);

/*
 * The kernel timer of `clock` expired with handle generation `generation`. A stale generation
 * changes nothing (returns failure 0 and no effects; *ret_stale = true). Otherwise every timer of
 * that clock whose deadline <= now is fired, in (deadline, owner, name) order:
 *   - a notify/alarm/signal timer without an active run starts run n+1 and yields DISPATCH;
 *   - one whose run is still active counts an overrun instead (never a second run, never a queue);
 *   - watchdog: its successor deadline (now + cadence) is armed BEFORE the dispatch;
 *   - interval: next = deadline + k*cadence, the first such time > now; k-1 missed periods count
 *     as overruns;
 *   - an interval or watchdog due while its run is active is held: it leaves the queue (no more
 *     wake-ups for a run nobody takes) and keeps its schedule; the deadlines that pass meanwhile
 *     are counted as overruns when the run is taken or ends, which queues it again;
 *   - once/after-completion leave the queue until the run completes.
 * Then ARM/DISARM for the clock's new earliest deadline. That ARM is the first effect, ahead of
 * every DISPATCH.
 */
struct td_transition registry_expire(struct registry *r, const struct td_now *now,
                                     enum timerd_clock clock, uint64_t generation, bool *ret_stale);

/* The clock was set (realtime): re-arm it with a fresh generation so deadlines are re-evaluated.
 * The calendar timers get their next elapse after now again (registry_reevaluate_calendars()). */
struct td_transition registry_rearm(struct registry *r, const struct td_now *now,
                                    enum timerd_clock clock);

/*
 * The wall clock or the zone data changed (a clock set, a tzdata update, a new local zone): start
 * computing again the next elapse of every calendar timer waiting for it (queued, not due yet),
 * as the first after now, spread over registry_reevaluate_step() calls so that the loop goes on
 * serving meanwhile. One due now stays due; a running one computes its next at completion anyway.
 * While the pass runs, a timer whose old deadline comes due is computed again first and fires
 * only if its new deadline is due too; one whose new deadline is earlier than its old one fires
 * when the pass reaches it. A change during a pass starts it again.
 */
void registry_reevaluate_calendars(struct registry *r, const struct td_now *now);
bool registry_reevaluation_pending(const struct registry *r);
/* Go on with the pass: at most `budget` timers computed again (*ret_count), at most 16 × budget
 * looked at. registry_reevaluation_pending() is false once the last timer was reached. */
struct td_transition registry_reevaluate_step(struct registry *r, const struct td_now *now,
                                              size_t budget, uint64_t *ret_count);

/*
 * The runtime applied (or failed to apply) the ARM/DISARM with this generation. On error the
 * timers that made it necessary (those due by the attempted deadline) go failed with
 * provider_binding_failed and leave the queue; the follow-up transition arms the rest.
 * A confirmation for a superseded generation is ignored.
 */
struct td_transition registry_confirm_arm(struct registry *r, const struct td_now *now,
                                          enum timerd_clock clock, uint64_t generation, int error);

/*
 * Delivery bookkeeping. A DISPATCH leaves the run pending until the runtime hands it to a waiter:
 * registry_deliver() records the session it went to (a run whose session closes is ended as an
 * expected failure). registry_take_pending() finds the oldest pending firing of `owner` with that
 * delivery (notify for a Wait; alarm for a Sleep, when its registering session is gone), among
 * `names` if n_names > 0, marks it delivered to `session` and fills *ret; 1 when found, 0 when
 * none. Oldest means first fired: each owner's pending firings are kept in firing order, which for
 * one expiry is (deadline, owner, name). A firing's overruns are the periods missed since the
 * previous firing was handed over (as timer_getoverrun(2)), those of a held schedule counted up to
 * `now`; the snapshot's overruns stay the total.
 * deliver: -TIMERD_E_NOT_FOUND / -TIMERD_E_REGISTRATION_EXPIRED for a run that is gone, -EALREADY
 * when it was handed over already. Both may allocate (-ENOMEM) and both leave the effects of the
 * last transition intact, so the runtime may call them while it walks those DISPATCH effects.
 */
int registry_deliver(struct registry *r, const struct td_dispatch *d, uint64_t session);
int registry_take_pending(struct registry *r, const struct td_now *now, uint32_t owner,
                          enum timerd_delivery delivery, const char *const *names, size_t n_names,
                          uint64_t session, struct td_dispatch *ret);

/*
 * The owners of notify timers that had something to deliver (a pending firing, a wake-up, a run)
 * and have nothing any more, since they were last taken: failed (a kernel timer that could not be
 * armed, a counter overflow), removed, cancelled, or a run ended with no next wake-up, whatever
 * call or firing did it. Each owner is listed once, oldest first; false when none is left. The
 * runtime re-checks their parked Waits.
 */
bool registry_take_silenced_owner(struct registry *r, uint32_t *ret_owner);
/* Whether registry_take_silenced_owner() has an owner to give. */
bool registry_silenced_pending(const struct registry *r);

/*
 * A session (connection) closed: its transient timers are removed, the runs delivered to it are
 * ended as expected failures (the policy goes on). Exactly once per session; a repeat is a no-op.
 * However many transient timers it had, they go at once from every lookup, listing, count and
 * owner's limit, and never fire, but their memory is freed by registry_reap_step() (a name
 * registered again frees its gone timer there and then; so does a new timer that would pass
 * max_timers, which counts them until freed, the oldest gone one). Each is a td_removal of the
 * transition that frees it. O(runs delivered to it); a mixed session's timers go at the close,
 * O(them), as removals of this transition.
 */
struct td_transition registry_session_closed(struct registry *r, const struct td_now *now,
                                             uint64_t session);
/* Whether closed sessions still have timers to free. */
bool registry_reap_pending(const struct registry *r);
/* Free at most `budget` of them (*ret_count), oldest session first, each in the order they were
 * registered: the transition's removals. */
struct td_transition registry_reap_step(struct registry *r, const struct td_now *now, size_t budget,
                                        uint64_t *ret_count);

/* Snapshots. get: -TIMERD_E_NOT_FOUND. A snapshot is as the registry holds the timer: an interval
 * or watchdog held behind its run counts the deadlines it passed only when the run is taken or
 * ends. registry_snapshot_at() brings one up to `now` (overruns, next deadline), as a reader should
 * see it. */
void registry_snapshot_at(const struct registry *r, struct td_snapshot *timer,
                          const struct td_now *now);
int registry_get(const struct registry *r, uint32_t owner, const char *name,
                 struct td_snapshot *ret);

/* What a call on a timer asks of it before and after, without a whole snapshot (a copy of its
 * every field): as registry_get(), -TIMERD_E_INVALID_NAME, -TIMERD_E_NOT_FOUND. */
struct td_brief {
        enum timerd_clock clock;
        enum timerd_state state;
        enum timerd_failure failure;
};
int registry_get_brief(const struct registry *r, uint32_t owner, const char *name,
                       struct td_brief *ret);
/* Whether any timer a look-up finds is in state failed (registry_get_stats()'s failed > 0), in
 * O(1): none is, and no look-up can find one. */
bool registry_has_failed(const struct registry *r);

/*
 * The inventory in (owner, name) order: of `owner`, or of everyone when all_owners. Returns the
 * number of timers (>= 0) and a malloc'd array in *ret (free() it), or -ENOMEM.
 */
long registry_list(const struct registry *r, uint32_t owner, bool all_owners,
                   struct td_snapshot **ret);

/*
 * One page of it, in O(log n + limit): up to `limit` timers after the cursor
 * (after_owner, after_name) in (owner, name) order, of `owner` or of everyone. The cursor need not
 * name a timer (it may have been removed since): the page starts after where it would stand.
 * Returns the count and a malloc'd array in *ret (free() it; NULL when empty), and whether more
 * timers follow the page in *ret_more. -EINVAL for limit 0, -TIMERD_E_INVALID_NAME for a cursor
 * name that is not valid, -ENOMEM.
 */
struct td_list_page {
        uint32_t owner;
        bool all_owners;
        bool has_after;
        uint32_t after_owner;
        const char *after_name;
        size_t limit;
};
long registry_list_page(const struct registry *r, const struct td_list_page *page,
                        struct td_snapshot **ret, bool *ret_more);
/*
 * The same page without a copy: each timer's snapshot to fn, in order, until fn returns false
 * (the page ends after that timer) or the limit. The count, or -EINVAL, -TIMERD_E_INVALID_NAME.
 * fn must not change the registry.
 */
typedef bool (*registry_list_fn)(const struct td_snapshot *t, void *userdata);
long registry_list_each(const struct registry *r, const struct td_list_page *page,
                        registry_list_fn fn, void *userdata, bool *ret_more);

struct registry_stats {
        uint64_t timers;
        uint64_t scheduled;
        uint64_t running;
        uint64_t failed;
        uint64_t pending;
        uint64_t firings;
        uint64_t overruns;
        uint64_t stale_expiries;
        uint64_t reaping; /* timers of closed sessions not freed yet (counted in none above) */
};
void registry_get_stats(const struct registry *r, struct registry_stats *ret);

/* After many timers went (a session with millions of transient ones closed): the hash table and
 * the queues give back the room they kept for them, keeping what the declared timers reserve.
 * Changes no timer; out of memory keeps the tables as they are. */
void registry_shrink(struct registry *r);
/* The same counts of one owner's timers (timers, scheduled, running, failed, pending; the rest 0),
 * in O(1): what an unprivileged caller's Status shows. */
void registry_get_owner_stats(const struct registry *r, uint32_t owner, struct registry_stats *ret);

/* Whether closing `session` would remove or end anything: a transient timer, or a run handed to
 * it and not completed. O(1). */
bool registry_session_holds(const struct registry *r, uint64_t session);
/* Whether a run was handed to `session` and has not ended (Complete, Fail, the session closed). */
bool registry_session_has_runs(const struct registry *r, uint64_t session);

/*
 * Durability. Only retained timers are durable; transient ones never show up here.
 *
 * Restore: put back a retained timer from its durable state (`timer` as registry_get() gave it;
 * state and session are not read) after a restart. It belongs to no session. Its generation stays
 * (the generation counter moves past it), so its owner's claims keep working. What a restart
 * changes:
 *   - a run that was handed to a client is ended as an expected failure (no client holds it any
 *     more; the policy goes on); a pending one stays pending, for the next Wait;
 *   - a queued deadline that passed while the service was down (<= now) with catch_up fires once,
 *     at the next expiry, reporting that deadline and marked catch_up (never once per missed
 *     period: an interval counts the periods in between as overruns, as always). With
 *     randomized_delay_usec > 0 it is delayed by random_value % randomized_delay_usec, still
 *     reporting the missed deadline.
 *     Without catch_up the missed firing is skipped: a once timer goes inactive, the others move
 *     to the first deadline + k * cadence after now.
 *   - a value beyond the wire's int64 (a journal of an older timerd) is clamped to INT64_MAX and
 *     the timer restored failed (overflow), not queued; a generation beyond it is inconsistent.
 * A timer the restart changed counts as changed (see below); one it did not is as durable as it
 * was. *ret_clamped: whether a value was clamped (false on a failure), for the caller to say so.
 * -TIMERD_E_ALREADY_REGISTERED, -TIMERD_E_INVALID_NAME, -EINVAL for a state that is not retained
 * or not consistent (runs > run, a pending run that is not active, …), -ENOMEM.
 */
struct td_transition registry_restore(struct registry *r, const struct td_now *now,
                                      const struct td_snapshot *timer, uint64_t random_value,
                                      bool *ret_clamped);

/* Room for n more retained timers in the tables that grow with them, ahead of restoring that
 * many: one allocation each instead of growing (and rehashing) step by step. Optional. -ENOMEM. */
int registry_reserve(struct registry *r, size_t n);

/* New generations will be above `floor` (never lowered): so that claims of timers that were not
 * restored (transient ones) cannot match a timer of the next start. The counter moves by whole
 * 2^32 steps, so that the generations' low 32 bits (what a signal's sival_int carries) go on from
 * the restored timers': two live timers' differ unless 2^32 generations apart. */
void registry_generations_above(struct registry *r, uint64_t floor);

/*
 * Change tracking, for group commit. Every change to a retained timer (by a call, a firing, a
 * delivery, a session that closed, a restore that adjusted it), and every retained timer that was
 * removed or replaced by a transient one, is pending until registry_changes_commit().
 *
 * The runtime brackets each client call with registry_call_begin()/registry_call_end(). Inside a
 * bracket, register, reconcile, schedule, reschedule, cancel, kick, unregister and complete keep
 * the state of each retained timer they change as it was before the first such change since the
 * commit (allocating: -ENOMEM), so that a commit that failed can be undone with
 * registry_changes_rollback(). What the runtime does outside a bracket (firings, deliveries,
 * closed sessions, runs it completes itself) is never undone.
 */
void registry_call_begin(struct registry *r);
void registry_call_end(struct registry *r);

struct td_change {
        uint32_t owner;
        const char *name;
        const struct td_snapshot *timer; /* its state to write; NULL: no longer retained */
};

bool registry_changes_pending(const struct registry *r);

/* How many changes to retained timers were made so far: a call made one when this moved. */
uint64_t registry_change_count(const struct registry *r);

/* Hand each pending change to fn, in the order to write them (removals first); the first
 * negative return of fn stops the walk and is returned. Changes nothing. */
int registry_changes_foreach(const struct registry *r,
                             int (*fn)(const struct td_change *change, void *userdata),
                             void *userdata);

/* The pending changes are durable. */
void registry_changes_commit(struct registry *r);

/*
 * The pending changes could not be made durable: every timer a client call changed since the last
 * commit goes back to how it was before (a created one is removed, a removed one comes back,
 * with its run handed to the same session when that is still open). What happened to those
 * timers in between (a delivery, a closed session) is undone with them; other changes stay.
 * What is put back stays pending: it may still differ from the journal. Failure -ENOMEM: a timer
 * could not be put back; the registry is
 * consistent but no longer what the journal holds, so the runtime must restart from the journal.
 */
struct td_transition registry_changes_rollback(struct registry *r, const struct td_now *now);

/* Verify every internal invariant (queues, indexes, states, counters). 0 or -EUCLEAN, for tests. */
int registry_check(const struct registry *r);
