/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The connection table: who may take a place in it, who is evicted when it is full, and when a
 * connection that does nothing is closed. Per-uid limits bound a uid, not a person (a user
 * namespace gives one user 65,536 uids), so:
 *   - uid 0 and the members of `admin-group` are privileged: `reserved-connections` places are
 *     theirs alone, and when the whole table is full they evict an unprivileged connection. No
 *     set of other uids can keep them out.
 *   - The unprivileged connections share the rest. When it is full, a newcomer whose account
 *     holds fewer than the heaviest account's unprivileged connections minus one evicts that
 *     account's least recently active unprivileged connection (max-min fairness: an account under
 *     its fair share gets in; an account with one connection is never evicted by another
 *     unprivileged account).
 *   - An account is a person: a uid in a subordinate range (subuids.h) is charged to the person
 *     it was given to, for the fairness above and for `max-connections-per-uid` (an account's own
 *     uid is held to its own connections, so the uids charged to it never keep it out).
 *     Privilege follows the uid alone.
 *   - A connection whose message is not finished `partial-timeout` after its first byte (however
 *     it trickles) is told InvalidMessage and closed; one with no call, parked request,
 *     subscription, transient timer or delivered run for `idle-timeout` is told LimitExceeded
 *     {limit: "idle_usec"} and closed.
 * The timeouts share the monotonic kernel timer with the cores (wake.h, struct clock_wake): it
 * is armed for the earliest reap, rounded up to REAP_GRANULARITY_USEC so reaps batch, and never
 * re-armed later just because a connection was busy (a wake-up that finds nothing due re-arms for
 * what is due then). With no connection that could be reaped it is not armed for them at all.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/list.h"
#include "service/core/tally.h"

struct peer;
struct service;

struct subuids;

struct conns {
        struct tally uids; /* uid → its connections */
        struct tally
            accounts; /* account → the connections charged to it, the unprivileged marked */
        const struct subuids *subuids; /* conns_subuids_commit(); NULL: none */
        uint32_t n_unprivileged;       /* connections neither of uid 0 nor of the admin group */
        uint32_t fd_capacity;          /* connections the descriptor limit leaves room for */
        struct list_node idle;         /* peers with no call, least recently active first */
        struct list_node partial; /* peers holding part of a message, least recently fed first */
};

/* Before the first connection: how many connections the descriptor limit holds. */
void conns_init(struct conns *c, uint32_t max_connections);

/* Whether p (accepted, not yet watched) takes a place: false after telling it why (the caller
 * frees it). To make room, *ret_victim (else NULL) is a connection the caller must evict. */
bool conns_admit(struct service *s, struct peer *p, struct peer **ret_victim);
/* p, admitted, is dropped: its place is free. */
void conns_forget(struct service *s, struct peer *p);

/* The connections of uid. O(1). */
uint32_t conns_of(const struct conns *c, uid_t uid);

/* Charge the connections to the accounts of t (NULL: no ranges), as registry_subuids_prepare()
 * and _commit() do for the registry: prepare counts them anew into *ret (-ENOMEM changing
 * nothing), commit takes it and charges each connection to its new account. */
int conns_subuids_prepare(const struct service *s, const struct subuids *t, struct tally *ret);
void conns_subuids_commit(struct service *s, const struct subuids *t, struct tally *prepared);

/* n_read bytes came from p, in an iteration service_note_work() began. */
void conns_note_input(struct service *s, struct peer *p, size_t n_read);
/* p's call opened or ended (p->call_open). */
void conns_note_call(struct service *s, struct peer *p);

enum conns_reap_kind {
        CONNS_REAP_PARTIAL, /* its message was not finished in time */
        CONNS_REAP_IDLE,    /* it held nothing and did nothing for the idle timeout */
};

/* The monotonic clock reached now_usec: the next connection whose time is up (the caller closes
 * it), or NULL. */
struct peer *conns_next_reap(struct service *s, uint64_t now_usec, enum conns_reap_kind *ret_kind);
/* After the reaps: leave the next one in the service's wake-up demand. */
void conns_reaped(struct service *s);
