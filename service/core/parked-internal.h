/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The parked queue's records, shared by its parts: parked-records.c (the records, their lines,
 * indexes and heaps, and parking), parked.c (the entry points) and parked-check.c (the invariant
 * checker). Nothing outside service/core/parked*.c includes this but the white-box test.
 */

#include "base/hashmap.h"
#include "base/heap.h"
#include "base/list.h"
#include "service/core/parked.h"
#include "service/core/subuids.h"
#include "service/core/tally.h"

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
 * The heaps an entry can be on: its clock's (waiting with a deadline), keyed by deadline, and its
 * (owner, session)'s (a waiting Sleep), keyed by nonce, which finds the Sleep an alarm of that
 * session goes to without walking. Ties go by nonce: unique, so the order is total.
 */
enum heap_role {
        HEAP_DEADLINE,
        HEAP_SLEEPS,
        _HEAP_ROLE_MAX,
        _HEAP_ROLE_INVALID = -1,
};

struct owner_session;

struct line {
        struct list_node head;
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
        uint32_t heap_index[_HEAP_ROLE_MAX]; /* HEAP_NOT_QUEUED when not on that heap */
        struct owner_session *sleeps;        /* a waiting Sleep's (owner, session), else NULL */
        uint64_t lease;                      /* observing only */
        uint64_t ticket;                     /* awaiting_resume only */
        bool stream;
        char **names;
        size_t n_names;
        struct list_node links[_LINE_MAX];
};

struct owner {
        uint32_t uid;
        uint32_t account;   /* the uid its limit is charged to: uid, or its person's (subuids.h) */
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

struct parked {
        struct parked_config config;
        uint64_t last_nonce;
        bool shutting_down;
        struct hashmap entries;  /* nonce → entry */
        struct hashmap owners;   /* uid → owner */
        struct hashmap sessions; /* id → session */
        /* The subordinate uid ranges (parked_subuids_commit()), and the parked requests of the
         * owners charged to another uid, by that account. */
        const struct subuids *subuids;
        struct tally accounts;
        struct line all;
        struct heap heaps[TIMERD_CLOCK_MAX];
        size_t timed[TIMERD_CLOCK_MAX]; /* entries with a deadline on each clock, any phase */
        struct parked_effect *effects;
        size_t n_effects;
        size_t n_effects_allocated; /* at least entries.n_entries + 2: emitting never allocates */
        struct parked_stats stats;
};

/* The registry checks the alphabet; the queue only bounds what it copies. */
bool parked_name_valid(const char *name);

void parked_line_init(struct line *l);
void parked_line_append(struct line *l, struct entry *e, enum line_kind k);
void parked_line_remove(struct line *l, struct entry *e, enum line_kind k);
/* The front entry, or the one after e; NULL at the end. */
struct entry *parked_line_first(const struct line *l, enum line_kind k);
struct entry *parked_line_next(const struct line *l, const struct entry *e, enum line_kind k);

/* The queue's tables, keyed by nonce, uid and session id. */
void parked_tables_init(struct parked *q);
struct entry *parked_entry_get(const struct parked *q, uint64_t nonce);
struct owner *parked_owner_get(const struct parked *q, uint32_t uid);
struct session *parked_session_get(const struct parked *q, uint64_t id);
void parked_entries_put(struct parked *q, struct entry *e);
void parked_entries_remove(struct parked *q, struct entry *e);

struct parked_effect *parked_effect_push(struct parked *q, enum parked_effect_kind kind,
                                         const struct entry *e, uint64_t cookie, uint64_t session);
struct parked_transition parked_transition_of(const struct parked *q, int failure);
struct parked_transition parked_limit_exceeded(const struct parked *q, enum parked_limit limit);

uint64_t parked_owner_parked(const struct owner *o);
/* What the per-owner limit holds uid (record o, or NULL) to: its own parked requests when it is
 * charged to itself, else all its account's (an account's own uid is never kept out by the uids
 * charged to it). */
uint64_t parked_owner_charged(const struct parked *q, const struct owner *o, uint32_t uid);
bool parked_owner_unused(const struct owner *o);
void parked_owner_release_if_unused(struct parked *q, struct owner *o);
int parked_session_acquire(struct parked *q, uint64_t id, struct session **ret);
bool parked_session_unused(const struct session *s);
void parked_session_release_if_unused(struct parked *q, struct session *s);
struct owner_session *parked_session_find_owner(const struct session *s, uint32_t owner);
void parked_owner_session_release_if_unused(struct parked *q, struct owner_session *os);
void parked_owner_session_free(struct owner_session *os);

/* Room for one more waiting Sleep at (o, s); *ret is set for the caller to release on failure. */
int parked_sleep_reserve(struct owner *o, struct session *s, struct owner_session **ret);
/* e becomes a waiting Sleep of os, which has room for it. */
void parked_sleep_enqueue(struct owner *o, struct owner_session *os, struct entry *e);
/* e goes (back) on its clock's heap, which has room for it. */
void parked_deadline_enqueue(struct parked *q, struct entry *e);

struct parked_transition parked_control_failure(struct parked *q, uint32_t uid,
                                                enum parked_failure kind);
/* The checks Finish and Resume share; _PARKED_FAILURE_INVALID when c names a live Sleep. */
enum parked_failure parked_control_lookup(const struct parked *q, uint32_t uid,
                                          const struct parked_continuation *c, struct entry **ret);

int parked_names_copy(const char *const *names, size_t n, char ***ret);
void parked_names_free(char **names, size_t n);
void parked_entry_free(struct entry *e);

/* Unlinks and frees e; the owner and session records stay for the caller to release. */
void parked_retire(struct parked *q, struct entry *e);
void parked_retire_and_release(struct parked *q, struct entry *e);

void parked_remaining(const struct entry *e, const struct td_now *now, bool *ret_has,
                      uint64_t *ret_usec);
void parked_begin_observation(struct parked *q, const struct td_now *now, struct owner *o,
                              struct entry *e, const char *name, uint64_t alarms);
void parked_announce_observable(struct parked *q, const struct owner *o);

/* Park a copy of proto for caller within the limits: every allocation comes before any change. */
struct parked_transition parked_park(struct parked *q, const struct td_caller *caller,
                                     enum timerd_clock clock, bool has_deadline,
                                     struct entry *proto, struct entry **ret);
struct parked_continuation parked_continuation_of(const struct parked *q, const struct entry *e);
