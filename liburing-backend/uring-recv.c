/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Stream watches of the io_uring backend: while the watch asks for LOOP_IN, a multishot recv
 * takes the socket's bytes into provided buffers, and the completion that wakes the loop carries
 * them, so loop_read() copies instead of entering the kernel. Filled buffers wait on the watch,
 * oldest first, until read; LOOP_IN is reported once per batch, after every completion of the
 * batch is in, and again while bytes wait. The watch's poll asks only for what the recv does not
 * bring: LOOP_OUT, and hang-ups while LOOP_IN is not asked for.
 *
 * A peer its owner calls bulk (loop_stream_bulk()) streams: a completion per write costs more than
 * one read(2) per wake-up, which takes all that is queued, so the watch goes back to its poll and
 * read(2) until its owner says otherwise. A synchronous peer stays on the recv.
 *
 * Without LOOP_IN the recv is cancelled, so the socket fills and the peer waits, as when a poll
 * stops reading. When the buffers run out (-ENOBUFS ends the recv) the watch falls back to its
 * poll asking for LOOP_IN and loop_read() reading the socket itself, after the bytes that wait;
 * the recv starts again once half the buffers are back.
 */

#include <errno.h>
#include <string.h>

#include "liburing-backend/uring-internal.h"

static bool holds_bytes(const struct uring_watch *w)
{
        return w->head >= 0;
}

/* What loop_read() would give now: bytes, or the end the recv reported. */
static bool has_input(const struct uring_watch *w)
{
        return holds_bytes(w) || w->ended;
}

static void ready_add(struct uring_loop *u, struct uring_watch *w)
{
        if (!list_linked(&w->ready_node))
                list_append(&u->ready, &w->ready_node);
}

static void ready_remove(struct uring_watch *w)
{
        if (list_linked(&w->ready_node))
                list_remove(&w->ready_node);
}

uint32_t uring_recv_poll_mask(const struct uring_watch *w, uint32_t events)
{
        if (!w->recv)
                return events;
        return (events & LOOP_OUT) |
               ((w->starved || w->streaming) && !w->ended ? events & LOOP_IN : 0u);
}

static int recv_add(struct uring_loop *u, struct uring_watch *w)
{
        struct io_uring_sqe *sqe;
        int r;

        r = uring_get_sqe(u, uring_watch_user_data(u, URING_KIND_RECV, w), &sqe);
        if (r < 0)
                return r;
        io_uring_prep_recv_multishot(sqe, w->base.fd, NULL, 0, 0);
        sqe->flags |= IOSQE_BUFFER_SELECT;
        sqe->buf_group = URING_BUF_GROUP;
        w->recv_live = true;
        return 0;
}

static void recv_cancel(struct uring_loop *u, uint64_t target)
{
        struct io_uring_sqe *sqe;
        uint64_t user_data = tag_user_data(URING_KIND_RECV_CANCEL) | (target & ~KIND_MASK);

        /* Without an SQE the recv goes on until the socket closes; what it brings is held. */
        if (uring_get_sqe(u, user_data, &sqe) >= 0) {
                io_uring_prep_cancel64(sqe, target, 0);
                uring_sqe_quiet(u, sqe);
        }
}

void uring_handle_recv_cancel(struct uring_loop *u, const struct uring_completion *c)
{
        /* The recv was being handled: try again, or it would go on receiving. */
        if (c->res == -EALREADY)
                recv_cancel(u, tag_user_data(URING_KIND_RECV) | (c->user_data & ~KIND_MASK));
}

/*
 * Start or stop the recv as the watch's events and state ask, and the poll along with it;
 * `recheck`: the poll's report was just dispatched, so it is asked again (level-triggered).
 */
static void recv_sync(struct uring_loop *u, struct uring_watch *w, uint32_t events, bool recheck)
{
        bool want = (events & LOOP_IN) && !w->ended && !w->starved && !w->streaming;
        uint32_t mask;

        if (w->base.dead)
                return;
        if (want && !w->recv_live && recv_add(u, w) < 0)
                w->starved = true;
        else if (!want && w->recv_live && !w->recv_cancelling) {
                recv_cancel(u, uring_watch_user_data(u, URING_KIND_RECV, w));
                w->recv_cancelling = true;
        }
        mask = uring_recv_poll_mask(w, events);
        if ((recheck || mask != w->poll_mask || !w->poll_live) &&
            uring_poll_refresh(u, w, events) < 0) {
                w->pending |= LOOP_ERR;
                ready_add(u, w);
        }
        if (has_input(w) && (events & LOOP_IN))
                ready_add(u, w);
}

int uring_recv_watch(struct uring_loop *u, struct uring_watch *w)
{
        w->head = w->tail = -1;
        list_init(&w->ready_node);
        w->recv = w->base.stream && u->bufs.ring;
        if (!w->recv || !(w->base.events & LOOP_IN))
                return 0;
        return recv_add(u, w);
}

void uring_recv_update(struct uring_loop *u, struct uring_watch *w, uint32_t events)
{
        recv_sync(u, w, events, false);
        if (!(events & LOOP_IN) && !w->pending)
                ready_remove(w);
}

void uring_recv_unwatch(struct uring_loop *u, struct uring_watch *w)
{
        ready_remove(w);
        if (!w->recv)
                return;
        /* Its later completions are stale and give their buffers back. */
        if (w->recv_live && !w->recv_cancelling)
                recv_cancel(u, uring_watch_user_data(u, URING_KIND_RECV, w));
        while (w->head >= 0) {
                uint32_t bid = (uint32_t)w->head;

                w->head = u->bufs.bufs[bid].next;
                uring_bufs_give_back(u, bid);
        }
        w->tail = -1;
}

void uring_recv_note_poll(struct uring_loop *u, struct uring_watch *w, uint32_t events)
{
        w->pending |= events;
        ready_add(u, w);
}

static void hold(struct uring_loop *u, struct uring_watch *w, uint32_t bid, uint32_t len)
{
        u->bufs.bufs[bid] = (struct uring_buf){.len = len, .next = -1};
        if (w->tail >= 0)
                u->bufs.bufs[w->tail].next = (int32_t)bid;
        else
                w->head = (int32_t)bid;
        w->tail = (int32_t)bid;
}

void uring_handle_recv(struct uring_loop *u, const struct uring_completion *c)
{
        struct uring_watch *w = uring_slot_lookup(u, c->user_data);
        uint32_t bid = c->flags >> IORING_CQE_BUFFER_SHIFT;
        bool buffer = c->flags & IORING_CQE_F_BUFFER;

        if (buffer)
                u->bufs.n_held++;
        if (!w) {
                u->base.stats.stale++;
                if (buffer)
                        uring_bufs_give_back(u, bid);
                return;
        }
        if (!(c->flags & IORING_CQE_F_MORE)) {
                w->recv_live = false;
                w->recv_cancelling = false;
        }

        if (c->res > 0 && buffer)
                hold(u, w, bid, (uint32_t)c->res);
        else {
                if (buffer)
                        uring_bufs_give_back(u, bid);
                if (c->res == -ENOBUFS) {
                        u->no_buffers++;
                        w->starved = true;
                } else if (c->res == 0 || (c->res < 0 && c->res != -ECANCELED)) {
                        w->ended = true;
                        w->end_error = c->res;
                }
        }
        if (w->recv_live) {
                if (has_input(w) && (w->base.events & LOOP_IN))
                        ready_add(u, w);
                return;
        }
        /* Ended: at the end of the stream, cancelled by us or the kernel, or out of buffers. */
        recv_sync(u, w, w->base.events, false);
}

long uring_loop_read(struct loop_watch *lw, void *buf, size_t len)
{
        struct uring_loop *u = to_uring_loop(lw->loop);
        struct uring_watch *w = to_uring_watch(lw);
        size_t done = 0;

        while (done < len && w->head >= 0) {
                uint32_t bid = (uint32_t)w->head;
                struct uring_buf *b = &u->bufs.bufs[bid];
                size_t take = b->len - b->off;

                if (take > len - done)
                        take = len - done;
                memcpy((char *)buf + done, uring_buf_data(u, bid) + b->off, take);
                b->off += (uint32_t)take;
                done += take;
                if (b->off < b->len)
                        break;
                w->head = b->next;
                if (w->head < 0)
                        w->tail = -1;
                uring_bufs_give_back(u, bid);
        }
        if (done > 0)
                return (long)done;
        if (w->ended)
                return w->end_error;
        /* What comes next is the recv's to bring; without one, the socket has it. */
        if (w->recv_live)
                return -EAGAIN;
        return loop_read_fd(lw->fd, buf, len);
}

void uring_recv_dispatch_ready(struct uring_loop *u)
{
        struct list_node batch;

        if (list_empty(&u->ready))
                return;
        /* Watches made ready by this dispatch wait for the next batch. */
        batch = u->ready;
        batch.next->prev = &batch;
        batch.prev->next = &batch;
        list_init(&u->ready);

        while (!list_empty(&batch)) {
                struct uring_watch *w = list_entry(batch.next, struct uring_watch, ready_node);
                uint32_t events = w->pending;
                bool polled = events != 0;

                list_remove(&w->ready_node);
                w->pending = 0;
                if (has_input(w) && (w->base.events & LOOP_IN))
                        events |= LOOP_IN;
                if (w->base.dead || events == 0)
                        continue;
                loop_dispatch_io(&w->base, events);
                if (w->base.dead)
                        continue;
                if (w->starved && u->bufs.n_held <= URING_BUF_COUNT / 2)
                        w->starved = false;
                recv_sync(u, w, w->base.events, polled);
        }
}

void uring_loop_stream_bulk(struct loop_watch *lw, bool bulk)
{
        struct uring_watch *w = to_uring_watch(lw);

        if (!w->recv || w->streaming == bulk)
                return;
        w->streaming = bulk;
        recv_sync(to_uring_loop(lw->loop), w, lw->events, false);
}

uint64_t uring_loop_buffers_exhausted(const struct loop *l)
{
        return ((const struct uring_loop *)l)->no_buffers;
}
