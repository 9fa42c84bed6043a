/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * user_data of every SQE this backend submits:
 *
 *   63      56 55     48 47                                   0
 *   [  kind  ][ clock  ][ request sequence (48 bits)           ]   TIMEOUT, TIMEOUT_UPDATE
 *   [  kind  ][ watch slot (24 bits)  ][ slot sequence (32)    ]   POLL, POLL_UPDATE, POLL_REMOVE,
 *                                                                   RECV, RECV_CANCEL, SEND
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
        URING_KIND_RECV,
        URING_KIND_RECV_CANCEL,
        URING_KIND_SEND,
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
        uint32_t poll_mask;  /* the events the live poll asks for */
        uint64_t last_batch; /* the batch it was last dispatched in */

        /* A stream watch on a ring with provided buffers (uring-recv.c). */
        bool recv;      /* its bytes come by multishot recv */
        bool recv_live; /* a recv is in the kernel or the SQ (until its last completion) */
        bool recv_cancelling;
        bool starved;       /* the buffers ran out: poll and read(2) until enough are back */
        bool streaming;     /* loop_stream_bulk(): poll and read(2) until it is called off */
        bool ended;         /* the recv reported the end of the stream or an error ... */
        int end_error;      /* ... which (0: the end), for loop_read() once the bytes are taken */
        uint32_t pending;   /* poll events waiting for the batch's end */
        int32_t head, tail; /* buffers received and not yet read, oldest first; -1: none */
        struct list_node ready_node; /* on the loop's ready list */

        /* Its send through the ring (uring-send.c). */
        uint32_t send_len; /* bytes of the send whose outcome loop_sent() has not given; 0: none */
        uint64_t send_round; /* the loop's send round when it was queued */
        bool send_failed;    /* the kernel posted its failure: ... */
        int32_t send_res;    /* ... the bytes it took before the socket filled, or -errno */
};

/* One provided buffer: what a recv put in it and how much of that was read. */
struct uring_buf {
        uint32_t len, off;
        int32_t next; /* the watch's next buffer; -1: none */
};

/* The provided-buffer ring of group 0 (uring-bufs.c). */
struct uring_bufs {
        struct io_uring_buf_ring *ring; /* NULL: not set up, stream watches poll and read(2) */
        char *mem;
        struct uring_buf *bufs;
        uint32_t n_held; /* buffers the kernel filled and the loop has not given back */
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

        struct uring_bufs bufs;
        struct list_node ready; /* stream watches with something to report */
        uint64_t no_buffers;    /* recvs that found the buffers exhausted */
        bool reap_cut;          /* the last reap left completions in the CQ (no memory) */

        /* Sends through the ring (uring-send.c): their bytes, copied until the kernel takes them.
         */
        char *staging;
        size_t staging_len;
        /* Sends queued before the last round ended have their outcome: a round ends when the SQ
         * was consumed and the CQ then reaped to its end. */
        uint64_t send_round;
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
/* Hand the SQ to the kernel now (retrying while it wants completions reaped first). */
int uring_submit(struct uring_loop *u);
/* Copy the CQ's completions into the backlog (sends' failures go to their watches). */
int uring_reap(struct uring_loop *u);
void uring_sqe_quiet(struct uring_loop *u, struct io_uring_sqe *sqe);

/* Fd watches: slots, polls and their completions (uring-watch.c). */
uint64_t uring_watch_user_data(struct uring_loop *u, enum uring_kind kind,
                               const struct uring_watch *w);
struct uring_watch *uring_slot_lookup(struct uring_loop *u, uint64_t user_data);
/* Ask the live poll for the events w's mask now calls for, or start one. */
int uring_poll_refresh(struct uring_loop *u, struct uring_watch *w, uint32_t events);
int uring_loop_watch(struct loop *l, struct loop_watch *lw);
int uring_loop_watch_update(struct loop_watch *lw, uint32_t events);
void uring_loop_unwatch(struct loop_watch *lw);
void uring_handle_poll(struct uring_loop *u, const struct uring_completion *c);
void uring_handle_poll_update(struct uring_loop *u, const struct uring_completion *c);
void uring_handle_poll_remove(struct uring_loop *u, const struct uring_completion *c);

/* The provided buffers (uring-bufs.c). */
#define URING_BUF_GROUP 0
#define URING_BUF_COUNT 64u
#define URING_BUF_SIZE  4096u
/* Register the ring of buffers and check that a multishot recv takes from it; when the kernel
 * cannot, u->bufs stays unset and stream watches poll. -ENOMEM, other -errno. */
int uring_bufs_open(struct uring_loop *u);
/* Once the ring is closed: the kernel no longer writes into them. */
void uring_bufs_free(struct uring_loop *u);
/* The kernel may fill buffer `bid` again. */
void uring_bufs_give_back(struct uring_loop *u, uint32_t bid);
char *uring_buf_data(struct uring_loop *u, uint32_t bid);

/* Stream watches' receives (uring-recv.c). */
int uring_recv_watch(struct uring_loop *u, struct uring_watch *w);
void uring_recv_update(struct uring_loop *u, struct uring_watch *w, uint32_t events);
void uring_recv_unwatch(struct uring_loop *u, struct uring_watch *w);
/* The events the poll of w asks for, given the watch's events. */
uint32_t uring_recv_poll_mask(const struct uring_watch *w, uint32_t events);
void uring_recv_note_poll(struct uring_loop *u, struct uring_watch *w, uint32_t events);
void uring_handle_recv(struct uring_loop *u, const struct uring_completion *c);
void uring_handle_recv_cancel(struct uring_loop *u, const struct uring_completion *c);
/* Report what the batch left for stream watches, once each. */
void uring_recv_dispatch_ready(struct uring_loop *u);
long uring_loop_read(struct loop_watch *lw, void *buf, size_t len);
void uring_loop_stream_bulk(struct loop_watch *lw, bool bulk);

/* Sends through the ring (uring-send.c). */
int uring_loop_send(struct loop_watch *lw, const void *buf, size_t len);
long uring_loop_sent(struct loop_watch *lw);
/* A send's failure, recorded on its watch while the CQ is reaped (no callback, no allocation). */
void uring_handle_send(struct uring_loop *u, const struct io_uring_cqe *cqe);
/* The SQ was consumed (sq_consumed) and the CQ then reaped: end the round. */
void uring_send_round_end(struct uring_loop *u, bool sq_consumed);
/* The watch goes and its fd will be closed: its queued send leaves first. */
void uring_send_unwatch(struct uring_loop *u, struct uring_watch *w);
