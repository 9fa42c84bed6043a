/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * user_data of every SQE this backend submits:
 *
 *   63      56 55     48 47                                   0
 *   [  kind  ][ clock  ][ request sequence (48 bits)           ]   TIMEOUT, TIMEOUT_UPDATE
 *   [  kind  ][ watch slot (24 bits)  ][ slot sequence (32)    ]   POLL, POLL_UPDATE, POLL_REMOVE
 *   [  kind  ][ 0                                               ]   TIMEOUT_REMOVE
 *
 * A clock has at most one live timeout request; its sequence is fresh for each new request (an
 * update keeps the request and so its user_data). A watch owns a slot while it lives; releasing
 * the slot bumps its sequence. So a completion is current only if its sequence matches the
 * clock's live request or the slot's current sequence: one comparison, and everything else
 * (a replaced or disarmed timeout, a removed poll) is counted as stale and dropped.
 *
 * Completions are first copied out of the CQ into a backlog, then dispatched. Reaping thus never
 * calls back into the user, so a full SQ or -EBUSY met while the user arms a timer or watches
 * an fd can reap and retry on the spot.
 */

#include <assert.h>
#include <stddef.h>

#include <liburing.h>

#include "liburing-backend/uring-loop.h"
#include "timerfd/clock-timerfd.h"

#define KIND_SHIFT    56
#define KIND_MASK     (UINT64_C(0xff) << KIND_SHIFT)
#define CLOCK_SHIFT   48
#define SEQUENCE_MASK ((UINT64_C(1) << CLOCK_SHIFT) - 1)
#define SLOT_SHIFT    32
#define SLOT_MAX      (UINT32_C(1) << 24)

enum uring_kind {
        URING_KIND_NONE, /* never submitted: a zeroed user_data is not ours */
        URING_KIND_POLL,
        URING_KIND_POLL_UPDATE,
        URING_KIND_POLL_REMOVE,
        URING_KIND_TIMEOUT,
        URING_KIND_TIMEOUT_UPDATE,
        URING_KIND_TIMEOUT_REMOVE,
};

struct uring_completion {
        uint64_t user_data;
        int32_t res;
        uint32_t flags;
};

/* The io_uring timeout of one clock. */
struct uring_clock {
        /* Read by the kernel when the SQE is submitted, so it must outlive the queued SQE. */
        struct __kernel_timespec ts;
        uint64_t live;     /* sequence of the request in the kernel or the SQ; 0: none */
        uint64_t last_seq; /* last sequence handed out */
        bool active;       /* the current arm has neither expired nor been disarmed */
        uint64_t generation;
        uint64_t deadline_usec;
};

struct uring_watch {
        struct loop_watch base;
        uint32_t slot;
        bool poll_live;      /* a poll request for the slot is in the kernel or the SQ */
        uint64_t last_batch; /* the batch it was last dispatched in */
};

struct uring_slot {
        struct uring_watch *watch; /* NULL: free or retired */
        uint32_t seq;
};

struct uring_loop {
        struct loop base;
        struct io_uring ring;
        bool ring_ready;
        bool skip_success; /* IOSQE_CQE_SKIP_SUCCESS works */

        struct uring_clock clocks[TIMERD_CLOCK_MAX];
        struct clock_timer alarm_timers[TIMERD_CLOCK_MAX]; /* alarm clocks only */
        struct clock_set_watch clock_set;

        struct uring_slot *slots;
        uint32_t *free_slots; /* a stack; same capacity as slots */
        uint32_t n_slots, n_free, slots_allocated;

        struct uring_completion *backlog;
        size_t n_backlog, backlog_allocated;
        uint64_t batch;
};

static_assert(offsetof(struct uring_loop, base) == 0, "loop_free() frees the base address");
static_assert(offsetof(struct uring_watch, base) == 0, "loop.c allocates and frees watches");

static inline struct uring_loop *to_uring_loop(struct loop *l)
{
        return (struct uring_loop *)l;
}

static inline struct uring_watch *to_uring_watch(struct loop_watch *w)
{
        return (struct uring_watch *)w;
}

static inline enum uring_kind user_data_kind(uint64_t user_data)
{
        return (enum uring_kind)(user_data >> KIND_SHIFT);
}

static inline uint64_t tag_user_data(enum uring_kind kind)
{
        return (uint64_t)kind << KIND_SHIFT;
}

/* The ring (uring-loop.c). */
int uring_get_sqe(struct uring_loop *u, uint64_t user_data, struct io_uring_sqe **ret);
void uring_sqe_quiet(struct uring_loop *u, struct io_uring_sqe *sqe);

/* Fd watches: slots, polls and their completions (uring-watch.c). */
int uring_loop_watch(struct loop *l, struct loop_watch *lw);
int uring_loop_watch_update(struct loop_watch *lw, uint32_t events);
void uring_loop_unwatch(struct loop_watch *lw);
void uring_handle_poll(struct uring_loop *u, const struct uring_completion *c);
void uring_handle_poll_update(struct uring_loop *u, const struct uring_completion *c);
void uring_handle_poll_remove(struct uring_loop *u, const struct uring_completion *c);
