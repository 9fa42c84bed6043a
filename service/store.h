/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Durability of retained timers: the bridge between the registry (pure) and the journal (disk).
 * At start the journal is replayed into the registry; during the loop every change to a retained
 * timer is made durable with one group commit per iteration before any reply for it is sent.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct service;
struct peer;

/* The lifecycle's STORE step: open the journal in the state directory and restore from it. A
 * journal that cannot be trusted ends the service with EXIT_REASON_STORE_FAULT. */
int store_open(struct service *s);

/* Teardown: commit what is pending and close. Safe when store_open() never ran. */
void store_close(struct service *s);

/* Around each io.timerd.Timer call of p: an answer to a call that changed a retained timer is
 * replaced by StoreUnavailable when its commit fails. */
void store_call_begin(struct service *s, struct peer *p);
void store_call_end(struct service *s);

enum store_hold {
        STORE_SEND,     /* nothing waits for a commit: send it now */
        STORE_HELD,     /* it waits, in p's output, until the iteration's commit releases it */
        STORE_RELEASED, /* no room to hold it: everything was committed now; send what
                         * store_take_released() gives, then it */
        STORE_BROKEN,   /* the same, but StoreUnavailable could not be put in its place (out of
                         * memory): drop p */
};

/* Whether the message just queued for p (at `position` of its output, len bytes without its NUL)
 * waits for changes to retained timers to be durable. STORE_RELEASED may have put StoreUnavailable
 * in its place. Asked by connection.c for every message it queues. */
enum store_hold store_hold(struct service *s, struct peer *p, uint64_t position, size_t len);

/*
 * The end of the iteration's work: write every pending change with one commit, and release what
 * was held (store_take_released()) — with StoreUnavailable for the calls whose changes were undone
 * because the commit failed. Compacts the journal when it outgrew its snapshot. The runs the
 * undo dispatched wait for the caller's hand-over (api_hand_over()).
 */
void store_commit(struct service *s);

/* The next peer whose held output goes out now, in the order it was held (a peer may come more
 * than once); *ret_broken when StoreUnavailable could not be put in place of an answer (out of
 * memory: drop it). false when none is left. */
bool store_take_released(struct service *s, struct peer **ret_peer, bool *ret_broken);

/* For Status: "journal" while healthy, "degraded: <strerror>" while commits fail; "memory"
 * without a store. */
const char *store_status(struct service *s);
