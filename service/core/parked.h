/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The parked-request queue: varlink calls the service answers later, and a PURE core like the
 * registry. It makes no system calls, reads no clock and allocates only for its own tables. Every
 * entry point returns a transition: a typed failure (0, -errno or -TIMERD_E_*) and the effects the
 * runtime must apply, each addressed to one varlink call by the opaque `cookie` the runtime gave.
 *
 * Two kinds of parked request, each a continuation {owner, nonce} stamped with the queue epoch:
 *
 *   WAIT   takes the next firing of one of the owner's notify timers (optionally among `names`):
 *          the oldest matching Wait takes it, exactly one. A stream Wait stays parked and goes to
 *          the back of its owner's line, as if it had parked again.
 *   SLEEP  ends at its absolute deadline (or never: a pause) unless an alarm of its owner and
 *          session interrupts it first:
 *
 *            waiting --alarm--> observing(lease) --Finish(resume)--> awaiting_resume(ticket)
 *               ^                    |   Finish(interrupt | terminate): retired       |
 *               +---------------------------- Resume(ticket) -------------------------+
 *
 *          The cycle of a continuation counts its observations and resumptions. Resume parks the
 *          SAME continuation again with its original absolute deadline. An owner has at most one
 *          observation at a time. The queue keeps no alarm: one that no Sleep takes stays pending
 *          in the registry (one per timer), and the queue says when the owner can take it
 *          (OBSERVABLE).
 *
 * Finish and Resume are checked exactly, as the hermit-detcore seed does. In this order:
 *   the owner has no parked request at all                   → unexpected-control
 *   another epoch, an unknown nonce, another owner's nonce   → identity
 *   the continuation is a Wait                               → unsupported
 *   the cycle is not the continuation's current one          → identity
 *   the continuation is not in the phase the control needs   → phase
 *   the lease or the ticket nonce does not match             → identity
 *   a counter the control needs would overflow               → overflow
 * A reused ticket therefore fails with identity (the resumption moved the cycle on), a second
 * Finish after resume with phase. Each returns -TIMERD_E_PROTOCOL_FAILURE with the kind in the
 * transition, changes nothing, and is latched on the calling owner: the first kind is kept and
 * every failure counted (parked_get_owner()); other owners are never affected.
 *
 * The Sleep an alarm goes to and the Wait a firing goes to are found through indexes (per owner
 * and session, its waiting Sleeps by age; per owner, its waiting Sleeps and its Waits in park
 * order): O(log n), never a walk over the owner's parked requests.
 *
 * Every counter (nonce, cycle, lease, ticket) is overflow-checked and never wraps. Parking a new
 * request when nonces are exhausted fails with -TIMERD_E_OVERFLOW. Statistics saturate.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "service/core/registry.h"
#include "timerd/timerd-types.h"

enum parked_kind {
        PARKED_KIND_WAIT,
        PARKED_KIND_SLEEP,
        _PARKED_KIND_MAX,
        _PARKED_KIND_INVALID = -1,
};

enum parked_action {
        PARKED_ACTION_RESUME,    /* get a resume ticket; Resume parks the same continuation */
        PARKED_ACTION_INTERRUPT, /* end the Sleep as interrupted, with the remaining time */
        PARKED_ACTION_TERMINATE, /* end the Sleep, nothing to report */
        _PARKED_ACTION_MAX,
        _PARKED_ACTION_INVALID = -1,
};

/* The kind of a -TIMERD_E_PROTOCOL_FAILURE, for the error's parameters. */
enum parked_failure {
        PARKED_FAILURE_IDENTITY,
        PARKED_FAILURE_PHASE,
        PARKED_FAILURE_UNSUPPORTED,
        PARKED_FAILURE_OVERFLOW,
        PARKED_FAILURE_UNEXPECTED_CONTROL,
        _PARKED_FAILURE_MAX,
        _PARKED_FAILURE_INVALID = -1,
};

/* Which bound a -TIMERD_E_LIMIT_EXCEEDED hit. */
enum parked_limit {
        PARKED_LIMIT_PER_SESSION,
        PARKED_LIMIT_PER_OWNER,
        PARKED_LIMIT_NAMES,
        _PARKED_LIMIT_MAX,
        _PARKED_LIMIT_INVALID = -1,
};

/* Wire spellings ("unexpected_control", "parked_per_session"); NULL when out of range. */
const char *parked_failure_to_string(enum parked_failure f);
const char *parked_limit_to_string(enum parked_limit l);

/* A continuation as the client presents it; the owner is the caller's uid. */
struct parked_continuation {
        uint64_t epoch;
        uint64_t nonce;
        uint64_t cycle;
};

/* A single-use resume ticket: the continuation at the cycle it was issued in, and its own nonce. */
struct parked_ticket {
        struct parked_continuation continuation;
        uint64_t nonce;
};

enum parked_effect_kind {
        PARKED_EFFECT_REPLY,         /* a Wait took a firing: answer it (continues: stream) */
        PARKED_EFFECT_OBSERVATION,   /* a Sleep observed an alarm: answer it */
        PARKED_EFFECT_INTERRUPTED,   /* Finish(interrupt): answer the Finish call */
        PARKED_EFFECT_RETIRED,       /* Finish(terminate): answer the Finish call */
        PARKED_EFFECT_ELAPSED,       /* a Sleep reached its deadline: answer it */
        PARKED_EFFECT_TIMED_OUT,     /* a Wait reached its timeout: answer it with Timeout */
        PARKED_EFFECT_FAILED,        /* answer with ProtocolFailure(kind); the request is gone */
        PARKED_EFFECT_SHUTTING_DOWN, /* answer with ShuttingDown */
        PARKED_EFFECT_NOTHING_TO_WAIT_FOR, /* a Wait none of whose timers can fire: answer it */
        PARKED_EFFECT_OBSERVABLE, /* owner can observe and has a waiting Sleep in session: no call
                                   */
        _PARKED_EFFECT_MAX,
        _PARKED_EFFECT_INVALID = -1,
};

struct parked_effect {
        enum parked_effect_kind kind;
        uint64_t cookie;  /* the varlink call to answer */
        uint64_t session; /* the session (connection) of that call */
        uint32_t owner;
        struct parked_continuation continuation;
        union {
                struct {
                        bool continues; /* a stream Wait: more firings will follow */
                        char name[TIMERD_NAME_MAX + 1];
                } reply;
                struct {
                        uint64_t lease;
                        bool has_remaining; /* false for a Sleep without deadline */
                        uint64_t remaining_usec;
                        uint64_t alarms; /* alarms coalesced into this observation, >= 1 */
                        char name[TIMERD_NAME_MAX + 1]; /* the first of them */
                } observation;
                struct {
                        bool has_remaining;
                        uint64_t remaining_usec;
                } interrupted;
                enum parked_failure failed;
        };
};

struct parked_transition {
        int failure;                  /* 0, -errno or -TIMERD_E_* */
        enum parked_failure protocol; /* set when failure is -TIMERD_E_PROTOCOL_FAILURE */
        enum parked_limit limit;      /* set when failure is -TIMERD_E_LIMIT_EXCEEDED */
        size_t n_effects;
        const struct parked_effect *effects; /* owned by the queue; valid until its next call */
};

struct parked_config {
        uint32_t max_per_session; /* parked requests, any kind and phase; 0: unlimited */
        uint32_t max_per_owner;   /* … of a uid, or of an account's subordinate uids; 0: none */
        uint32_t max_names;       /* names in one Wait filter; 0: unlimited */
        uint64_t epoch;           /* the service start's epoch, stamped on every continuation */
        uint64_t first_nonce;     /* >= 1; tests start near UINT64_MAX */
        uint64_t first_cycle;     /* of each new continuation; tests start near UINT64_MAX */
};

struct parked;

int parked_new(const struct parked_config *config, struct parked **ret);
void parked_free(struct parked *q);

struct subuids;
struct tally;
/* The per-owner limit charged to accounts, as registry_subuids_prepare() and _commit() do it for
 * the registry: prepare counts every owner's parked requests anew for t (NULL: no ranges), -ENOMEM
 * changing nothing; commit takes that count. */
int parked_subuids_prepare(const struct parked *q, const struct subuids *t, struct tally *ret);
void parked_subuids_commit(struct parked *q, const struct subuids *t, struct tally *prepared);

/*
 * Park a Wait of caller.uid. timeout_usec is absolute on `clock`. Names are copied; each is 1..128
 * bytes (-TIMERD_E_INVALID_NAME). The runtime first offers the caller any pending firing itself.
 */
struct parked_wait_args {
        struct td_caller caller;
        uint64_t cookie;
        const char *const *names;
        size_t n_names; /* 0: any of the owner's notify timers */
        bool has_timeout;
        enum timerd_clock clock;
        uint64_t timeout_usec;
        bool stream;
};
struct parked_transition parked_wait(struct parked *q, const struct parked_wait_args *a,
                                     struct parked_continuation *ret);

/*
 * Park a Sleep of caller.uid until deadline_usec (absolute on `clock`; without it, until an alarm
 * ends it). A deadline already passed completes at the next parked_expire(). OBSERVABLE when the
 * owner is not observing: the runtime offers it a kept alarm.
 */
struct parked_sleep_args {
        struct td_caller caller;
        uint64_t cookie;
        enum timerd_clock clock;
        bool has_deadline;
        uint64_t deadline_usec;
};
struct parked_transition parked_sleep(struct parked *q, const struct td_now *now,
                                      const struct parked_sleep_args *a,
                                      struct parked_continuation *ret);

/*
 * A notify timer of `owner` fired: the oldest Wait whose filter matches takes it (REPLY).
 * *ret_taken is false when none did: the firing stays pending in the registry.
 */
struct parked_transition parked_offer_firing(struct parked *q, uint32_t owner, const char *name,
                                             bool *ret_taken);

/*
 * An alarm firing of `owner`'s timer registered by `session` (open or gone) is offered, with the
 * `alarms` (>= 1) it stands for: unless the owner is already observing, the oldest waiting Sleep of
 * that owner and session observes it (OBSERVATION), or else the owner's longest waiting Sleep on
 * any session. Nothing is kept here: *ret_taken is false when no Sleep took it, and the registry
 * keeps it pending. An observation whose counters would overflow ends the Sleep with FAILED.
 */
struct parked_transition parked_offer_alarm(struct parked *q, const struct td_now *now,
                                            uint32_t owner, uint64_t session, const char *name,
                                            uint64_t alarms, bool *ret_taken);

/*
 * The timers of `owner` changed: each of its Waits with names for which can_fire() says none of
 * them can fire any more is answered NOTHING_TO_WAIT_FOR and retired, in park order. A Wait
 * without names takes any notify timer of the owner, also one registered later: it is never
 * ended here. can_fire must not call back into the queue.
 */
struct parked_transition parked_end_waits(struct parked *q, uint32_t owner,
                                          bool (*can_fire)(const char *const *names, size_t n_names,
                                                           void *userdata),
                                          void *userdata);

/*
 * Finish the observation of `c` held with `lease`, for caller.uid. `cookie` is the Finish call (of
 * caller.session): INTERRUPTED and RETIRED answer it; for resume the runtime answers it with
 * *ret_ticket. An out-of-range action is -TIMERD_E_INVALID_PARAMETER (bad input, not latched).
 * The observation ends: OBSERVABLE when the owner has a Sleep waiting.
 */
struct parked_transition parked_finish(struct parked *q, const struct td_now *now,
                                       const struct td_caller *caller,
                                       const struct parked_continuation *c, uint64_t lease,
                                       enum parked_action action, uint64_t cookie,
                                       struct parked_ticket *ret_ticket);

/*
 * Park again the continuation of `ticket` as the call `cookie` of caller.session, with its original
 * deadline. The ticket is spent. The new session's limit applies. OBSERVABLE when the owner is
 * not observing.
 */
struct parked_transition parked_resume(struct parked *q, const struct td_now *now,
                                       const struct td_caller *caller,
                                       const struct parked_ticket *ticket, uint64_t cookie);

/*
 * Answer every Sleep whose deadline passed (ELAPSED) and every Wait whose timeout passed
 * (TIMED_OUT), per clock in (deadline, nonce) order.
 */
struct parked_transition parked_expire(struct parked *q, const struct td_now *now);

/* The earliest deadline on `clock`: 1 and *ret_usec, or 0 when nothing is due on it. */
int parked_next_deadline(const struct parked *q, enum timerd_clock clock, uint64_t *ret_usec);

/*
 * The session's connection is gone: its parked requests are dropped without a reply
 * (*ret_retired counts them). A repeat retires nothing. Effects: OBSERVABLE for an owner whose
 * observation ended and who has a Sleep waiting on another session.
 */
struct parked_transition parked_session_closed(struct parked *q, const struct td_now *now,
                                               uint64_t session, size_t *ret_retired);

/*
 * SHUTTING_DOWN for every parked call (in park order), then empty. Observations and tickets held
 * by clients end with no call to answer. Afterwards parking fails with -TIMERD_E_SHUTTING_DOWN.
 */
struct parked_transition parked_shutdown(struct parked *q);

struct parked_owner_snapshot {
        uint32_t owner;
        uint64_t waiters;
        uint64_t sleepers;         /* Sleep continuations in any phase */
        uint64_t waiting_sleepers; /* of them, those an alarm could interrupt now */
        bool observing;
        enum parked_failure failure; /* the first latched failure, or _INVALID */
        uint64_t failures;           /* protocol failures of this owner */
};
/* -TIMERD_E_NOT_FOUND when the queue holds nothing of `owner`. */
int parked_get_owner(const struct parked *q, uint32_t owner, struct parked_owner_snapshot *ret);

/* Whether `session` holds anything its closing would drop: a parked request, a continuation
 * awaiting resume, a pending alarm. O(1). */
bool parked_session_holds(const struct parked *q, uint64_t session);

struct parked_stats {
        uint64_t waiters;
        uint64_t sleepers;
        uint64_t observing;
        uint64_t awaiting_resume;
        uint64_t latched_owners; /* owners with a latched protocol failure */
        uint64_t protocol_failures;
};
void parked_get_stats(const struct parked *q, struct parked_stats *ret);

/* Verify every internal invariant (indexes, lines, heaps, phases, counts). 0 or -EUCLEAN. */
int parked_check(const struct parked *q);
