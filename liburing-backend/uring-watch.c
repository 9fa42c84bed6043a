/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Fd watches of the io_uring backend: each watch owns a slot (its user_data names the slot and
 * the slot's sequence) and a multishot poll, re-armed or updated after each dispatch so that
 * readiness is level-triggered, as with epoll. A stream watch's poll asks only for what its recv
 * does not bring (uring_recv_poll_mask(), uring-recv.c), and its events wait for the batch's end.
 */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>

#include "liburing-backend/uring-internal.h"

uint64_t uring_watch_user_data(struct uring_loop *u, enum uring_kind kind,
                               const struct uring_watch *w)
{
        return (uint64_t)kind << KIND_SHIFT | (uint64_t)w->slot << SLOT_SHIFT |
               u->slots[w->slot].seq;
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

struct uring_watch *uring_slot_lookup(struct uring_loop *u, uint64_t user_data)
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
        uint64_t user_data = uring_watch_user_data(u, URING_KIND_POLL, w);
        int r;

        r = uring_get_sqe(u, user_data, &sqe);
        if (r < 0)
                return r;
        w->poll_mask = uring_recv_poll_mask(w, events);
        io_uring_prep_poll_multishot(sqe, w->base.fd, poll_mask_from_loop(w->poll_mask));
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
        uint64_t target = uring_watch_user_data(u, URING_KIND_POLL, w);
        uint64_t user_data = uring_watch_user_data(u, URING_KIND_POLL_UPDATE, w);
        int r;

        r = uring_get_sqe(u, user_data, &sqe);
        if (r < 0)
                return r;
        w->poll_mask = uring_recv_poll_mask(w, events);
        io_uring_prep_poll_update(sqe, target, 0, poll_mask_from_loop(w->poll_mask),
                                  IORING_POLL_UPDATE_EVENTS | IORING_POLL_ADD_MULTI);
        uring_sqe_quiet(u, sqe);
        return 0;
}

int uring_loop_watch(struct loop *l, struct loop_watch *lw)
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
        r = uring_recv_watch(u, w);
        if (r >= 0)
                r = poll_add(u, w, lw->events);
        if (r < 0) {
                uring_recv_unwatch(u, w);
                slot_release(u, w->slot);
        }
        return r;
}

int uring_poll_refresh(struct uring_loop *u, struct uring_watch *w, uint32_t events)
{
        if (!w->poll_live)
                return poll_add(u, w, events);
        return poll_update(u, w, events);
}

int uring_loop_watch_update(struct loop_watch *lw, uint32_t events)
{
        struct uring_loop *u = to_uring_loop(lw->loop);
        struct uring_watch *w = to_uring_watch(lw);

        if (w->recv) {
                uring_recv_update(u, w, events);
                return 0;
        }
        return uring_poll_refresh(u, w, events);
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
                uring_sqe_quiet(u, sqe);
        }
}

void uring_handle_poll_remove(struct uring_loop *u, const struct uring_completion *c)
{
        if (c->res == -EALREADY)
                poll_remove(u, tag_user_data(URING_KIND_POLL) | (c->user_data & ~KIND_MASK));
}

void uring_loop_unwatch(struct loop_watch *lw)
{
        struct uring_loop *u = to_uring_loop(lw->loop);
        struct uring_watch *w = to_uring_watch(lw);

        uring_send_unwatch(u, w);
        if (w->poll_live) {
                poll_remove(u, uring_watch_user_data(u, URING_KIND_POLL, w));
                w->poll_live = false;
        }
        uring_recv_unwatch(u, w);
        slot_release(u, w->slot);
}

/* After a dispatch, the poll goes on: a fresh one if it ended, else a level re-check. */
static void poll_continue(struct uring_loop *u, struct uring_watch *w)
{
        int r;

        if (w->base.dead)
                return;
        r = uring_poll_refresh(u, w, w->base.events);
        if (r < 0)
                loop_dispatch_io(&w->base, LOOP_ERR);
}

void uring_handle_poll(struct uring_loop *u, const struct uring_completion *c)
{
        struct uring_watch *w = uring_slot_lookup(u, c->user_data);
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
        if (w->recv) {
                /* Reported with what the batch received, at its end, and re-checked after that
                 * dispatch (uring-recv.c): a re-check now would report what is not read yet. */
                if (events)
                        uring_recv_note_poll(u, w, events);
                if (!w->poll_live)
                        poll_continue(u, w);
                return;
        }
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

void uring_handle_poll_update(struct uring_loop *u, const struct uring_completion *c)
{
        struct uring_watch *w = uring_slot_lookup(u, c->user_data);

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
