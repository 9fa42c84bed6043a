/* SPDX-License-Identifier: LGPL-2.1-or-later */
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
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include <liburing.h>

#include "base/clockid.h"
#include "liburing-backend/uring-loop.h"
#include "liburing-backend/uring-probe.h"
#include "timerfd/clock-timerfd.h"

#define URING_ENTRIES  256u
#define SUBMIT_RETRIES 8
#define REAP_BATCH     64u

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

static struct uring_loop *to_uring_loop(struct loop *l)
{
        return (struct uring_loop *)l;
}

static struct uring_watch *to_uring_watch(struct loop_watch *w)
{
        return (struct uring_watch *)w;
}

static unsigned clock_timeout_flags(enum timerd_clock clock)
{
        switch (clock) {
        case TIMERD_CLOCK_BOOTTIME:
                return IORING_TIMEOUT_BOOTTIME;
        case TIMERD_CLOCK_REALTIME:
                return IORING_TIMEOUT_REALTIME;
        default:
                return 0;
        }
}

static enum uring_kind user_data_kind(uint64_t user_data)
{
        return (enum uring_kind)(user_data >> KIND_SHIFT);
}

static uint64_t tag_user_data(enum uring_kind kind)
{
        return (uint64_t)kind << KIND_SHIFT;
}

static uint64_t timeout_user_data(enum uring_kind kind, enum timerd_clock clock, uint64_t seq)
{
        return (uint64_t)kind << KIND_SHIFT | (uint64_t)clock << CLOCK_SHIFT | seq;
}

static uint64_t watch_user_data(struct uring_loop *u, enum uring_kind kind,
                                const struct uring_watch *w)
{
        return (uint64_t)kind << KIND_SHIFT | (uint64_t)w->slot << SLOT_SHIFT |
               u->slots[w->slot].seq;
}

static int backlog_push(struct uring_loop *u, const struct io_uring_cqe *cqe)
{
        if (u->n_backlog == u->backlog_allocated) {
                size_t n = u->backlog_allocated ? u->backlog_allocated * 2 : REAP_BATCH;
                struct uring_completion *b = reallocarray(u->backlog, n, sizeof(*b));

                if (!b)
                        return -ENOMEM;
                u->backlog = b;
                u->backlog_allocated = n;
        }
        u->backlog[u->n_backlog++] = (struct uring_completion){
            .user_data = cqe->user_data,
            .res = cqe->res,
            .flags = cqe->flags,
        };
        return 0;
}

/* Move every completion out of the CQ, including those the kernel parked on overflow. */
static int uring_reap(struct uring_loop *u)
{
        for (;;) {
                struct io_uring_cqe *cqes[REAP_BATCH];
                unsigned n, taken = 0;
                int r = 0;

                n = io_uring_peek_batch_cqe(&u->ring, cqes, REAP_BATCH);
                for (; taken < n; taken++) {
                        r = backlog_push(u, cqes[taken]);
                        if (r < 0)
                                break;
                }
                io_uring_cq_advance(&u->ring, taken);
                if (r < 0)
                        return r;
                if (n == REAP_BATCH)
                        continue;
                if (!io_uring_cq_has_overflow(&u->ring))
                        return 0;
                r = io_uring_get_events(&u->ring);
                if (r < 0 && r != -EINTR)
                        return r;
        }
}

static int uring_submit(struct uring_loop *u)
{
        for (int attempt = 0;; attempt++) {
                int r = io_uring_submit(&u->ring);

                if (r >= 0)
                        return 0;
                if (r == -EINTR)
                        continue;
                if ((r != -EBUSY && r != -EAGAIN) || attempt == SUBMIT_RETRIES)
                        return r;
                /* The kernel wants completions reaped before it takes more work. */
                r = uring_reap(u);
                if (r < 0)
                        return r;
        }
}

static int uring_get_sqe(struct uring_loop *u, uint64_t user_data, struct io_uring_sqe **ret)
{
        struct io_uring_sqe *sqe;

        sqe = io_uring_get_sqe(&u->ring);
        if (!sqe) {
                /* The SQ is full: hand it to the kernel to make room. */
                int r = uring_submit(u);

                if (r < 0)
                        return r;
                sqe = io_uring_get_sqe(&u->ring);
                if (!sqe)
                        return -EBUSY;
        }
        /* The prep helpers leave user_data alone. */
        io_uring_sqe_set_data64(sqe, user_data);
        *ret = sqe;
        return 0;
}

/* For requests whose success needs no answer: only a failure posts a completion. After the prep. */
static void sqe_quiet(struct uring_loop *u, struct io_uring_sqe *sqe)
{
        if (u->skip_success)
                io_uring_sqe_set_flags(sqe, IOSQE_CQE_SKIP_SUCCESS);
}

static unsigned poll_mask_from_loop(uint32_t events)
{
        return (events & LOOP_IN ? (unsigned)POLLIN : 0u) |
               (events & LOOP_OUT ? (unsigned)POLLOUT : 0u);
}

static uint32_t loop_events_from_poll(int32_t mask)
{
        return (mask & (POLLIN | POLLPRI) ? LOOP_IN : 0u) | (mask & POLLOUT ? LOOP_OUT : 0u) |
               (mask & (POLLERR | POLLHUP | POLLNVAL) ? LOOP_ERR : 0u);
}

static int slots_grow(struct uring_loop *u)
{
        uint32_t n = u->slots_allocated ? u->slots_allocated * 2 : 64;
        struct uring_slot *slots;
        uint32_t *free_slots;

        if (n > SLOT_MAX)
                n = SLOT_MAX;
        slots = reallocarray(u->slots, n, sizeof(*slots));
        if (!slots)
                return -ENOMEM;
        u->slots = slots;
        free_slots = reallocarray(u->free_slots, n, sizeof(*free_slots));
        if (!free_slots)
                return -ENOMEM;
        u->free_slots = free_slots;
        u->slots_allocated = n;
        return 0;
}

static int slot_acquire(struct uring_loop *u, struct uring_watch *w)
{
        uint32_t slot;

        if (u->n_free > 0)
                slot = u->free_slots[--u->n_free];
        else {
                if (u->n_slots == SLOT_MAX)
                        return -ENOSPC;
                if (u->n_slots == u->slots_allocated) {
                        int r = slots_grow(u);

                        if (r < 0)
                                return r;
                }
                slot = u->n_slots++;
                u->slots[slot].seq = 0;
        }
        u->slots[slot].watch = w;
        w->slot = slot;
        return 0;
}

static void slot_release(struct uring_loop *u, uint32_t slot)
{
        u->slots[slot].watch = NULL;
        /* A slot whose sequence would wrap is retired: an old completion could match again. */
        if (u->slots[slot].seq == UINT32_MAX)
                return;
        u->slots[slot].seq++;
        u->free_slots[u->n_free++] = slot;
}

static struct uring_watch *slot_lookup(struct uring_loop *u, uint64_t user_data)
{
        uint32_t slot = (uint32_t)(user_data >> SLOT_SHIFT) & (SLOT_MAX - 1);
        uint32_t seq = (uint32_t)user_data;

        if (slot >= u->n_slots || u->slots[slot].seq != seq)
                return NULL;
        return u->slots[slot].watch;
}

static int poll_add(struct uring_loop *u, struct uring_watch *w, uint32_t events)
{
        struct io_uring_sqe *sqe;
        uint64_t user_data = watch_user_data(u, URING_KIND_POLL, w);
        int r;

        r = uring_get_sqe(u, user_data, &sqe);
        if (r < 0)
                return r;
        io_uring_prep_poll_multishot(sqe, w->base.fd, poll_mask_from_loop(events));
        w->poll_live = true;
        return 0;
}

/*
 * Re-arming the live poll with `events` makes the kernel poll the file again at once: readiness
 * that is still there is reported again, as a level-triggered epoll would.
 */
static int poll_update(struct uring_loop *u, struct uring_watch *w, uint32_t events)
{
        struct io_uring_sqe *sqe;
        uint64_t target = watch_user_data(u, URING_KIND_POLL, w);
        uint64_t user_data = watch_user_data(u, URING_KIND_POLL_UPDATE, w);
        int r;

        r = uring_get_sqe(u, user_data, &sqe);
        if (r < 0)
                return r;
        io_uring_prep_poll_update(sqe, target, 0, poll_mask_from_loop(events),
                                  IORING_POLL_UPDATE_EVENTS | IORING_POLL_ADD_MULTI);
        sqe_quiet(u, sqe);
        return 0;
}

static int uring_loop_watch(struct loop *l, struct loop_watch *lw)
{
        struct uring_loop *u = to_uring_loop(l);
        struct uring_watch *w = to_uring_watch(lw);
        int r;

        /* Fail here like epoll_ctl() would, not later in a completion. */
        if (fcntl(lw->fd, F_GETFD) < 0)
                return -errno;
        r = slot_acquire(u, w);
        if (r < 0)
                return r;
        r = poll_add(u, w, lw->events);
        if (r < 0)
                slot_release(u, w->slot);
        return r;
}

static int uring_loop_watch_update(struct loop_watch *lw, uint32_t events)
{
        struct uring_loop *u = to_uring_loop(lw->loop);
        struct uring_watch *w = to_uring_watch(lw);

        if (!w->poll_live)
                return poll_add(u, w, events);
        return poll_update(u, w, events);
}

/*
 * Remove the poll `target` (its slot may be released already). The kernel refuses with -EALREADY
 * while the poll is being handled (an update just re-armed it and found the fd ready): the
 * removal is tried again then, or the poll would hold the file open for good.
 */
static void poll_remove(struct uring_loop *u, uint64_t target)
{
        struct io_uring_sqe *sqe;
        uint64_t user_data = tag_user_data(URING_KIND_POLL_REMOVE) | (target & ~KIND_MASK);

        /* Without an SQE the poll stays until the ring closes; its completions are stale once the
         * slot is released, so only the file reference lingers. */
        if (uring_get_sqe(u, user_data, &sqe) >= 0) {
                io_uring_prep_poll_remove(sqe, target);
                sqe_quiet(u, sqe);
        }
}

static void handle_poll_remove(struct uring_loop *u, const struct uring_completion *c)
{
        if (c->res == -EALREADY)
                poll_remove(u, tag_user_data(URING_KIND_POLL) | (c->user_data & ~KIND_MASK));
}

static void uring_loop_unwatch(struct loop_watch *lw)
{
        struct uring_loop *u = to_uring_loop(lw->loop);
        struct uring_watch *w = to_uring_watch(lw);

        if (w->poll_live) {
                poll_remove(u, watch_user_data(u, URING_KIND_POLL, w));
                w->poll_live = false;
        }
        slot_release(u, w->slot);
}

static void timespec_from_usec(struct __kernel_timespec *ts, uint64_t usec)
{
        ts->tv_sec = (long long)(usec / 1000000);
        ts->tv_nsec = (long long)(usec % 1000000) * 1000;
}

static int timeout_submit_fresh(struct uring_loop *u, enum timerd_clock clock)
{
        struct uring_clock *c = &u->clocks[clock];
        struct io_uring_sqe *sqe;
        uint64_t seq, user_data;
        int r;

        if (c->last_seq == SEQUENCE_MASK)
                return -EOVERFLOW;
        seq = c->last_seq + 1;
        user_data = timeout_user_data(URING_KIND_TIMEOUT, clock, seq);

        r = uring_get_sqe(u, user_data, &sqe);
        if (r < 0)
                return r;
        /* Count 0: only time completes it, never other completions. */
        io_uring_prep_timeout(sqe, &c->ts, 0, IORING_TIMEOUT_ABS | clock_timeout_flags(clock));
        c->last_seq = seq;
        c->live = seq;
        return 0;
}

static int timeout_submit_update(struct uring_loop *u, enum timerd_clock clock)
{
        struct uring_clock *c = &u->clocks[clock];
        struct io_uring_sqe *sqe;
        uint64_t user_data = timeout_user_data(URING_KIND_TIMEOUT_UPDATE, clock, c->live);
        int r;

        r = uring_get_sqe(u, user_data, &sqe);
        if (r < 0)
                return r;
        /* The request keeps its clock; the kernel rejects clock flags on an update. */
        io_uring_prep_timeout_update(
            sqe, &c->ts, timeout_user_data(URING_KIND_TIMEOUT, clock, c->live), IORING_TIMEOUT_ABS);
        sqe_quiet(u, sqe);
        return 0;
}

/* Drop the live request: whatever it still completes with is stale from now on. */
static void timeout_submit_remove(struct uring_loop *u, enum timerd_clock clock)
{
        struct uring_clock *c = &u->clocks[clock];
        struct io_uring_sqe *sqe;
        uint64_t user_data = tag_user_data(URING_KIND_TIMEOUT_REMOVE);

        /* Without an SQE the request simply runs out later, as a stale completion. */
        if (uring_get_sqe(u, user_data, &sqe) >= 0) {
                io_uring_prep_timeout_remove(
                    sqe, timeout_user_data(URING_KIND_TIMEOUT, clock, c->live), 0);
                sqe_quiet(u, sqe);
        }
        c->live = 0;
}

static int uring_loop_arm(struct loop *l, enum timerd_clock clock, uint64_t deadline_usec,
                          uint64_t generation)
{
        struct uring_loop *u = to_uring_loop(l);
        struct uring_clock *c = &u->clocks[clock];
        int r;

        if (clock_is_alarm(clock))
                return clock_timer_arm(&u->alarm_timers[clock], deadline_usec, generation);

        /* Every SQE still queued for this clock reads the new time at submission, as it should. */
        timespec_from_usec(&c->ts, deadline_usec);
        r = c->live ? timeout_submit_update(u, clock) : timeout_submit_fresh(u, clock);
        if (r < 0) {
                c->active = false;
                return r;
        }
        c->active = true;
        c->generation = generation;
        c->deadline_usec = deadline_usec;
        return 0;
}

static int uring_loop_disarm(struct loop *l, enum timerd_clock clock)
{
        struct uring_loop *u = to_uring_loop(l);
        struct uring_clock *c = &u->clocks[clock];

        if (clock_is_alarm(clock))
                return clock_timer_disarm(&u->alarm_timers[clock]);

        c->active = false;
        if (c->live)
                timeout_submit_remove(u, clock);
        return 0;
}

/* After a dispatch, the poll goes on: a fresh one if it ended, else a level re-check. */
static void poll_continue(struct uring_loop *u, struct uring_watch *w)
{
        int r;

        if (w->base.dead)
                return;
        r = w->poll_live ? poll_update(u, w, w->base.events) : poll_add(u, w, w->base.events);
        if (r < 0)
                loop_dispatch_io(&w->base, LOOP_ERR);
}

static void handle_poll(struct uring_loop *u, const struct uring_completion *c)
{
        struct uring_watch *w = slot_lookup(u, c->user_data);
        uint32_t events;

        if (!w) {
                u->base.stats.stale++;
                return;
        }
        if (!(c->flags & IORING_CQE_F_MORE))
                w->poll_live = false;

        if (c->res == -ECANCELED) {
                /* Cancelled by the kernel, not by us (our removals make it stale): re-arm. */
                poll_continue(u, w);
                return;
        }
        if (c->res < 0) {
                /* The poll cannot go on (re-arming would fail alike): say so, once. */
                loop_dispatch_io(&w->base, LOOP_ERR);
                return;
        }

        events = loop_events_from_poll(c->res);
        /* Reported already in this batch: the re-check queued after it covers this one. */
        if (events == 0 || w->last_batch == u->batch) {
                if (!w->poll_live)
                        poll_continue(u, w);
                return;
        }
        w->last_batch = u->batch;
        loop_dispatch_io(&w->base, events);
        poll_continue(u, w);
}

static void handle_poll_update(struct uring_loop *u, const struct uring_completion *c)
{
        struct uring_watch *w = slot_lookup(u, c->user_data);

        if (!w) {
                u->base.stats.stale++;
                return;
        }
        switch (c->res) {
        case 0:
                /* Only without IOSQE_CQE_SKIP_SUCCESS. */
                return;
        case -ENOENT:
                /* The poll ended: its last completion re-arms it with the current events. */
                return;
        case -EALREADY:
                /* A wake-up was being handled; try again so a changed mask is not lost. */
                if (!w->poll_live || poll_update(u, w, w->base.events) >= 0)
                        return;
                loop_dispatch_io(&w->base, LOOP_ERR);
                return;
        default:
                loop_dispatch_io(&w->base, LOOP_ERR);
                return;
        }
}

static void handle_timeout(struct uring_loop *u, const struct uring_completion *comp)
{
        enum timerd_clock clock = (enum timerd_clock)((comp->user_data >> CLOCK_SHIFT) & 0xff);
        uint64_t seq = comp->user_data & SEQUENCE_MASK;
        struct uring_clock *c;
        uint64_t now;

        if (clock >= TIMERD_CLOCK_MAX || clock_is_alarm(clock))
                return;
        c = &u->clocks[clock];
        if (seq != c->live) {
                u->base.stats.stale++;
                return;
        }
        c->live = 0;
        if (!c->active)
                return;

        if (comp->res == -ETIME) {
                /*
                 * An update may have lost the race with the old deadline: then this is the old
                 * expiry, and the current arm still needs a timeout of its own.
                 */
                if (loop_now_usec(clock_timerfd_clockid(clock), &now) >= 0 &&
                    now < c->deadline_usec) {
                        if (timeout_submit_fresh(u, clock) >= 0)
                                return;
                }
        } else if (comp->res == -ECANCELED) {
                if (timeout_submit_fresh(u, clock) >= 0)
                        return;
        }
        /* Expired, or the timer failed: reporting lets the caller look at its clock. */
        c->active = false;
        loop_dispatch_expiry(&u->base, clock, c->generation);
}

static void handle_timeout_update(struct uring_loop *u, const struct uring_completion *comp)
{
        enum timerd_clock clock = (enum timerd_clock)((comp->user_data >> CLOCK_SHIFT) & 0xff);
        uint64_t seq = comp->user_data & SEQUENCE_MASK;
        struct uring_clock *c;

        if (clock >= TIMERD_CLOCK_MAX || clock_is_alarm(clock))
                return;
        c = &u->clocks[clock];
        if (seq != c->live) {
                u->base.stats.stale++;
                return;
        }
        if (comp->res == 0)
                return;

        /*
         * -ENOENT/-EALREADY: the request fired (or is firing) with its old deadline. Anything
         * else left it with the old deadline. Either way it is replaced by a fresh one.
         */
        if (comp->res == -ENOENT || comp->res == -EALREADY)
                c->live = 0;
        else
                timeout_submit_remove(u, clock);
        if (c->active && timeout_submit_fresh(u, clock) < 0) {
                c->active = false;
                loop_dispatch_expiry(&u->base, clock, c->generation);
        }
}

static void uring_handle(struct uring_loop *u, const struct uring_completion *c)
{
        switch (user_data_kind(c->user_data)) {
        case URING_KIND_POLL:
                handle_poll(u, c);
                break;
        case URING_KIND_POLL_UPDATE:
                handle_poll_update(u, c);
                break;
        case URING_KIND_POLL_REMOVE:
                handle_poll_remove(u, c);
                break;
        case URING_KIND_TIMEOUT:
                handle_timeout(u, c);
                break;
        case URING_KIND_TIMEOUT_UPDATE:
                handle_timeout_update(u, c);
                break;
        default:
                /* A timeout's removal: its outcome changes nothing. */
                break;
        }
}

static void uring_dispatch_backlog(struct uring_loop *u)
{
        size_t n = u->n_backlog;

        u->batch++;
        for (size_t i = 0; i < n; i++) {
                /* A copy: handlers may reap more and move the backlog. */
                struct uring_completion c = u->backlog[i];

                uring_handle(u, &c);
        }
        /* What was reaped during the dispatch goes first next time. */
        if (u->n_backlog > n)
                memmove(u->backlog, u->backlog + n, (u->n_backlog - n) * sizeof(*u->backlog));
        u->n_backlog -= n;
}

static int uring_loop_wait(struct loop *l, int64_t timeout_usec)
{
        struct uring_loop *u = to_uring_loop(l);
        struct __kernel_timespec ts = {};
        struct io_uring_cqe *cqe;
        int r;

        if (timeout_usec > 0 && u->n_backlog == 0)
                timespec_from_usec(&ts, (uint64_t)timeout_usec);

        r = io_uring_submit_and_wait_timeout(
            &u->ring, &cqe, 1, timeout_usec < 0 && u->n_backlog == 0 ? NULL : &ts, NULL);
        if (r == -EINTR)
                return 0;
        /* -ETIME: nothing came. -EBUSY/-EAGAIN: reaping below makes room; submitted next time. */
        if (r < 0 && r != -ETIME && r != -EBUSY && r != -EAGAIN)
                return r;
        l->stats.wakeups++;

        r = uring_reap(u);
        if (r < 0)
                return r;
        uring_dispatch_backlog(u);
        return 0;
}

static void uring_loop_clock_was_set(struct loop *l)
{
        clock_set_watch_fire(&to_uring_loop(l)->clock_set);
}

static void uring_loop_done(struct loop *l)
{
        struct uring_loop *u = to_uring_loop(l);

        for (int c = 0; c < TIMERD_CLOCK_MAX; c++)
                clock_timer_close(&u->alarm_timers[c]);
        clock_set_watch_close(&u->clock_set);
        if (u->ring_ready)
                io_uring_queue_exit(&u->ring);
        free(u->slots);
        free(u->free_slots);
        free(u->backlog);
}

static const struct loop_backend_ops uring_loop_ops = {
    .backend = LOOP_BACKEND_IO_URING,
    .watch_size = sizeof(struct uring_watch),
    .watch = uring_loop_watch,
    .watch_update = uring_loop_watch_update,
    .unwatch = uring_loop_unwatch,
    .arm = uring_loop_arm,
    .disarm = uring_loop_disarm,
    .wait = uring_loop_wait,
    .clock_was_set = uring_loop_clock_was_set,
    .done = uring_loop_done,
};

/*
 * Setup flags, the wanted ones first; a kernel refuses flags it does not know with -EINVAL and the
 * next set is tried. SUBMIT_ALL (5.18): submit past an SQE the kernel rejects. COOP_TASKRUN and
 * TASKRUN_FLAG (5.19): a completion (a poll's wake-up) waits for the loop's next entry into the
 * kernel instead of interrupting it with an inter-processor interrupt, and the flag tells
 * liburing to enter the kernel for such work when it reaps. The loop is single-threaded and enters
 * the kernel every iteration, so nothing waits longer than it would have.
 */
static const unsigned ring_setups[] = {
    IORING_SETUP_SUBMIT_ALL | IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG,
    IORING_SETUP_SUBMIT_ALL,
    0,
};
#define RING_SETUP_PLAIN (sizeof(ring_setups) / sizeof(ring_setups[0]) - 1)

static int ring_open(struct io_uring *ring, size_t first_setup)
{
        int r = -EINVAL;

        for (size_t i = first_setup; i <= RING_SETUP_PLAIN && r == -EINVAL; i++)
                r = io_uring_queue_init(URING_ENTRIES, ring, ring_setups[i]);
        return r;
}

static int uring_loop_open(const struct loop_callbacks *cb, size_t first_setup,
                           const char **ret_missing, struct loop **ret)
{
        struct uring_loop *u;
        int r;

        if (ret_missing)
                *ret_missing = NULL;
        if (!ret)
                return -EINVAL;
        u = calloc(1, sizeof(*u));
        if (!u)
                return -ENOMEM;
        r = loop_init(&u->base, &uring_loop_ops, cb);
        if (r < 0) {
                free(u);
                return r;
        }
        u->clock_set.fd = -1;
        for (int c = 0; c < TIMERD_CLOCK_MAX; c++)
                clock_timer_init(&u->alarm_timers[c], &u->base, (enum timerd_clock)c);

        r = ring_open(&u->ring, first_setup);
        if (r < 0)
                goto fail;
        u->ring_ready = true;
        u->skip_success = u->ring.features & IORING_FEAT_CQE_SKIP;

        r = uring_probe_ring(&u->ring, ret_missing);
        if (r < 0)
                goto fail;
        r = clock_set_watch_open(&u->clock_set, &u->base);
        if (r < 0)
                goto fail;

        *ret = &u->base;
        return 0;

fail:
        loop_free(&u->base);
        return r;
}

int uring_loop_new(const struct loop_callbacks *cb, const char **ret_missing, struct loop **ret)
{
        return uring_loop_open(cb, 0, ret_missing, ret);
}

int uring_loop_new_plain(const struct loop_callbacks *cb, const char **ret_missing,
                         struct loop **ret)
{
        return uring_loop_open(cb, RING_SETUP_PLAIN, ret_missing, ret);
}
