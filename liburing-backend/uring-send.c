/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Sends through the ring (loop_send()): a stream watch's output goes as an io_uring send in the
 * io_uring_enter() of the loop's next wait, so an answer costs no system call of its own.
 *
 * The send asks for every byte and must not wait (MSG_WAITALL | MSG_DONTWAIT): the kernel issues
 * it inline while it takes the SQE, and then either took every byte, which posts nothing
 * (IOSQE_CQE_SKIP_SUCCESS, so the wait does not end on it), or posts its failure: the bytes taken
 * before the socket filled, -EAGAIN when it took none, or -errno. So the kernel never parks the
 * send on a full socket and is done with the bytes once it has consumed the SQE; the caller
 * writes the rest itself, with send(2) and a poll. The bytes are copied into the loop's staging
 * buffer when queued, so the caller's own buffer may move or change at once.
 *
 * A failure is recorded on its watch while the CQ is reaped, never lost in the backlog, and
 * reported as LOOP_OUT at the batch's end. A send's outcome is known once the round it was queued
 * in ends: its SQE consumed, then the CQ reaped to its end. loop_sent() gives it, ending the round
 * on the spot (a system call) in the rare case that the send has not left yet.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "liburing-backend/uring-internal.h"

/* Larger output is written with send(2): the staging buffer holds at least one send this size. */
#define URING_STAGING_SIZE (64u * 1024u)

static bool send_settled(const struct uring_loop *u, const struct uring_watch *w)
{
        return w->send_round != u->send_round || w->send_failed;
}

void uring_send_round_end(struct uring_loop *u, bool sq_consumed)
{
        if (!sq_consumed)
                return;
        /* The kernel has copied what the consumed sends carried. */
        u->staging_len = 0;
        if (!u->reap_cut)
                u->send_round++;
}

/* Submit and reap now, so that the sends queued so far leave and their outcome is known. */
static int send_round_force(struct uring_loop *u)
{
        int r = uring_submit(u);

        if (r < 0)
                return r;
        bool consumed = io_uring_sq_ready(&u->ring) == 0;
        r = uring_reap(u);
        if (r < 0)
                return r;
        uring_send_round_end(u, consumed);
        return consumed ? 0 : -EBUSY;
}

/* Room for len bytes in the staging buffer: what it holds leaves first when it is full. */
static int staging_reserve(struct uring_loop *u, size_t len)
{
        if (!u->staging) {
                u->staging = malloc(URING_STAGING_SIZE);
                if (!u->staging)
                        return -ENOMEM;
        }
        if (URING_STAGING_SIZE - u->staging_len >= len)
                return 0;
        return send_round_force(u);
}

int uring_loop_send(struct loop_watch *lw, const void *buf, size_t len)
{
        struct uring_loop *u = to_uring_loop(lw->loop);
        struct uring_watch *w = to_uring_watch(lw);
        struct io_uring_sqe *sqe;
        char *bytes;
        int r;

        /* Without the skip, the send's completion would end the wait it went with. */
        if (!w->recv || !u->skip_success || len == 0 || len > URING_STAGING_SIZE)
                return 0;
        if (w->send_len > 0)
                return -EBUSY;
        r = staging_reserve(u, len);
        if (r < 0)
                return r;
        r = uring_get_sqe(u, uring_watch_user_data(u, URING_KIND_SEND, w), &sqe);
        if (r < 0)
                return r;
        bytes = u->staging + u->staging_len;
        memcpy(bytes, buf, len);
        u->staging_len += len;
        io_uring_prep_send(sqe, lw->fd, bytes, len, MSG_WAITALL | MSG_DONTWAIT | MSG_NOSIGNAL);
        io_uring_sqe_set_flags(sqe, IOSQE_CQE_SKIP_SUCCESS);
        w->send_len = (uint32_t)len;
        w->send_round = u->send_round;
        w->send_failed = false;
        return 1;
}

long uring_loop_sent(struct loop_watch *lw)
{
        struct uring_loop *u = to_uring_loop(lw->loop);
        struct uring_watch *w = to_uring_watch(lw);
        long taken;

        if (w->send_len == 0)
                return -ENOENT;
        if (!send_settled(u, w) && (send_round_force(u) < 0 || !send_settled(u, w))) {
                /* Not known yet (no memory to reap it all): asked again after the next wait. */
                uring_recv_note_poll(u, w, LOOP_OUT);
                return -EINPROGRESS;
        }
        taken = w->send_failed ? w->send_res : (long)w->send_len;
        w->send_len = 0;
        w->send_failed = false;
        return taken;
}

void uring_handle_send(struct uring_loop *u, const struct io_uring_cqe *cqe)
{
        struct uring_watch *w = uring_slot_lookup(u, cqe->user_data);

        if (!w || w->send_len == 0) {
                u->base.stats.stale++;
                return;
        }
        w->send_failed = true;
        w->send_res = cqe->res;
        uring_recv_note_poll(u, w, LOOP_OUT);
}

void uring_send_unwatch(struct uring_loop *u, struct uring_watch *w)
{
        /* The fd is closed after this, and could be another connection's by the next wait. */
        if (w->send_len > 0 && !send_settled(u, w) && io_uring_sq_ready(&u->ring) > 0)
                (void)uring_submit(u);
}
