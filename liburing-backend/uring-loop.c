/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The io_uring backend's ring and clocks: submitting and reaping, the timeout of each clock, the
 * dispatch of a batch of completions, and opening the ring. Fd watches are in uring-watch.c; the
 * layout of user_data in uring-internal.h.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/clockid.h"
#include "liburing-backend/uring-internal.h"
#include "liburing-backend/uring-probe.h"

#define URING_ENTRIES  256u
#define SUBMIT_RETRIES 8
#define REAP_BATCH     64u

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

static uint64_t timeout_user_data(enum uring_kind kind, enum timerd_clock clock, uint64_t seq)
{
        return (uint64_t)kind << KIND_SHIFT | (uint64_t)clock << CLOCK_SHIFT | seq;
}

static int backlog_push(struct uring_loop *u, const struct io_uring_cqe *cqe)
{
        if (u->n_backlog == u->backlog_allocated) {
                size_t n = u->backlog_allocated * 2;
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

/*
 * Move every completion out of the CQ, including those the kernel parked on overflow. Out of
 * memory to grow the backlog, the rest stay in the CQ for the next wait, which returns at once
 * for them: the backlog (REAP_BATCH at least, from the start) is dispatched meanwhile. A send's
 * failure is recorded on its watch instead, so that it needs no room.
 */
int uring_reap(struct uring_loop *u)
{
        u->reap_cut = true;
        for (;;) {
                struct io_uring_cqe *cqes[REAP_BATCH];
                unsigned n, taken = 0;
                int r = 0;

                n = io_uring_peek_batch_cqe(&u->ring, cqes, REAP_BATCH);
                for (; taken < n; taken++) {
                        if (user_data_kind(cqes[taken]->user_data) == URING_KIND_SEND) {
                                uring_handle_send(u, cqes[taken]);
                                continue;
                        }
                        r = backlog_push(u, cqes[taken]);
                        if (r < 0)
                                break;
                }
                io_uring_cq_advance(&u->ring, taken);
                if (r < 0)
                        return 0;
                if (n == REAP_BATCH)
                        continue;
                if (!io_uring_cq_has_overflow(&u->ring)) {
                        u->reap_cut = false;
                        return 0;
                }
                r = io_uring_get_events(&u->ring);
                if (r < 0 && r != -EINTR)
                        return r;
        }
}

int uring_submit(struct uring_loop *u)
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

int uring_get_sqe(struct uring_loop *u, uint64_t user_data, struct io_uring_sqe **ret)
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
void uring_sqe_quiet(struct uring_loop *u, struct io_uring_sqe *sqe)
{
        if (u->skip_success)
                io_uring_sqe_set_flags(sqe, IOSQE_CQE_SKIP_SUCCESS);
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
        uring_sqe_quiet(u, sqe);
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
                uring_sqe_quiet(u, sqe);
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

/*
 * The clock whose live request a timeout completion answers; NULL when the completion is not for
 * a clock of ours or is stale (counted).
 */
static struct uring_clock *timeout_completion_clock(struct uring_loop *u,
                                                    const struct uring_completion *comp,
                                                    enum timerd_clock *ret_clock)
{
        enum timerd_clock clock = (enum timerd_clock)((comp->user_data >> CLOCK_SHIFT) & 0xff);
        uint64_t seq = comp->user_data & SEQUENCE_MASK;
        struct uring_clock *c;

        if (clock >= TIMERD_CLOCK_MAX || clock_is_alarm(clock))
                return NULL;
        c = &u->clocks[clock];
        if (seq != c->live) {
                u->base.stats.stale++;
                return NULL;
        }
        *ret_clock = clock;
        return c;
}

static void handle_timeout(struct uring_loop *u, const struct uring_completion *comp)
{
        enum timerd_clock clock;
        struct uring_clock *c = timeout_completion_clock(u, comp, &clock);
        uint64_t now;

        if (!c)
                return;
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
        enum timerd_clock clock;
        struct uring_clock *c = timeout_completion_clock(u, comp, &clock);

        if (!c)
                return;
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

typedef void uring_handler(struct uring_loop *u, const struct uring_completion *c);

/* A timeout's removal has none: its outcome changes nothing. */
static uring_handler *const uring_handlers[] = {
    [URING_KIND_POLL] = uring_handle_poll,
    [URING_KIND_POLL_UPDATE] = uring_handle_poll_update,
    [URING_KIND_POLL_REMOVE] = uring_handle_poll_remove,
    [URING_KIND_TIMEOUT] = handle_timeout,
    [URING_KIND_TIMEOUT_UPDATE] = handle_timeout_update,
    [URING_KIND_RECV] = uring_handle_recv,
    [URING_KIND_RECV_CANCEL] = uring_handle_recv_cancel,
};

static void uring_handle(struct uring_loop *u, const struct uring_completion *c)
{
        enum uring_kind kind = user_data_kind(c->user_data);

        if ((size_t)kind < sizeof(uring_handlers) / sizeof(uring_handlers[0]) &&
            uring_handlers[kind])
                uring_handlers[kind](u, c);
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
        uring_recv_dispatch_ready(u);
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

        /* What waits in the backlog or on a stream watch is reported without waiting. */
        bool waiting = u->n_backlog > 0 || !list_empty(&u->ready);

        if (timeout_usec > 0 && !waiting)
                timespec_from_usec(&ts, (uint64_t)timeout_usec);

        r = io_uring_submit_and_wait_timeout(&u->ring, &cqe, 1,
                                             timeout_usec < 0 && !waiting ? NULL : &ts, NULL);
        if (r == -EINTR)
                return 0;
        /* -ETIME: nothing came. -EBUSY/-EAGAIN: reaping below makes room; submitted next time. */
        if (r < 0 && r != -ETIME && r != -EBUSY && r != -EAGAIN)
                return r;
        l->stats.wakeups++;

        bool consumed = io_uring_sq_ready(&u->ring) == 0;
        r = uring_reap(u);
        if (r < 0)
                return r;
        uring_send_round_end(u, consumed);
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
        uring_bufs_free(u);
        free(u->staging);
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
    .read = uring_loop_read,
    .stream_bulk = uring_loop_stream_bulk,
    .send = uring_loop_send,
    .sent = uring_loop_sent,
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
 * the kernel every iteration, so nothing waits longer than it would have. Not DEFER_TASKRUN: it
 * measured no better for the recv (sessions 26, 27), made pipelined calls slower (session 25), and
 * with the sends through the ring saves no system call and costs more instructions per pipelined
 * call (session 32).
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
        list_init(&u->ready);
        for (int c = 0; c < TIMERD_CLOCK_MAX; c++)
                clock_timer_init(&u->alarm_timers[c], &u->base, (enum timerd_clock)c, false);
        /* A reap always has room for a batch, whatever memory is left later. */
        u->backlog = reallocarray(NULL, REAP_BATCH, sizeof(*u->backlog));
        if (!u->backlog) {
                r = -ENOMEM;
                goto fail;
        }
        u->backlog_allocated = REAP_BATCH;

        r = ring_open(&u->ring, first_setup);
        if (r < 0)
                goto fail;
        u->ring_ready = true;
        u->skip_success = u->ring.features & IORING_FEAT_CQE_SKIP;

        r = uring_probe_ring(&u->ring, ret_missing);
        if (r < 0)
                goto fail;
        /* As older kernels have it, the plain ring's stream watches poll and read(2). */
        if (first_setup != RING_SETUP_PLAIN) {
                r = uring_bufs_open(u);
                if (r < 0)
                        goto fail;
        }
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
