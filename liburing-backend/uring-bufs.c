/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The io_uring backend's provided buffers: one ring of URING_BUF_COUNT buffers the kernel fills
 * with what a stream watch's multishot recv receives. A buffer goes back to the ring once its
 * bytes are read (or dropped with a stale completion). Set up only when the kernel shows, on a
 * socket pair, that a multishot recv takes from it (Linux 6.0); otherwise stream watches poll.
 */

#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "liburing-backend/uring-internal.h"

#define RING_BYTES (URING_BUF_COUNT * sizeof(struct io_uring_buf))

static_assert((URING_BUF_COUNT & (URING_BUF_COUNT - 1)) == 0, "a buffer ring is a power of two");

char *uring_buf_data(struct uring_loop *u, uint32_t bid)
{
        return u->bufs.mem + (size_t)bid * URING_BUF_SIZE;
}

static void buf_add(struct uring_loop *u, uint32_t bid, int offset)
{
        io_uring_buf_ring_add(u->bufs.ring, uring_buf_data(u, bid), URING_BUF_SIZE,
                              (unsigned short)bid, io_uring_buf_ring_mask(URING_BUF_COUNT), offset);
}

void uring_bufs_give_back(struct uring_loop *u, uint32_t bid)
{
        buf_add(u, bid, 0);
        io_uring_buf_ring_advance(u->bufs.ring, 1);
        u->bufs.n_held--;
}

/* Wait for `n` completions of the probe, whose user_data is its step (1, 2). */
static int probe_reap(struct io_uring *ring, unsigned n, struct io_uring_cqe *ret)
{
        struct __kernel_timespec patience = {.tv_sec = 1};

        for (unsigned seen = 0; seen < n;) {
                struct io_uring_cqe *cqe;
                int r = io_uring_wait_cqe_timeout(ring, &cqe, &patience);

                if (r == -EINTR)
                        continue;
                if (r < 0)
                        return r == -ETIME ? -EOPNOTSUPP : r;
                if (cqe->user_data >= 1 && cqe->user_data <= 2) {
                        ret[cqe->user_data - 1] = *cqe;
                        seen++;
                }
                io_uring_cqe_seen(ring, cqe);
        }
        return 0;
}

/* Submit what is queued and take `n` completions of the probe. */
static int probe_run(struct io_uring *ring, unsigned n, struct io_uring_cqe *ret)
{
        int r = io_uring_submit(ring);

        return r < 0 ? r : probe_reap(ring, n, ret);
}

/* A byte waits on a socket pair: the recv must hand it over in a buffer and go on. */
static int probe_recv(struct uring_loop *u)
{
        struct io_uring_cqe got[2] = {};
        struct io_uring_sqe *sqe;
        int fds[2], r;

        /* The ring is fresh: get_sqe below finds room. */
        if (io_uring_sq_space_left(&u->ring) < 2)
                return -EBUSY;
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds) < 0)
                return -errno;
        r = write(fds[1], "x", 1) == 1 ? 0 : -EIO;
        if (r == 0) {
                sqe = io_uring_get_sqe(&u->ring);
                io_uring_prep_recv_multishot(sqe, fds[0], NULL, 0, 0);
                sqe->flags |= IOSQE_BUFFER_SELECT;
                sqe->buf_group = URING_BUF_GROUP;
                io_uring_sqe_set_data64(sqe, 1);
                r = probe_run(&u->ring, 1, got);
        }
        if (r == 0 && (got[0].flags & IORING_CQE_F_BUFFER)) {
                u->bufs.n_held++;
                uring_bufs_give_back(u, got[0].flags >> IORING_CQE_BUFFER_SHIFT);
        }
        if (r == 0 && (got[0].res != 1 || !(got[0].flags & IORING_CQE_F_BUFFER) ||
                       !(got[0].flags & IORING_CQE_F_MORE)))
                r = -EOPNOTSUPP;
        if (r == 0) {
                /* Cancelled, the recv ends; both completions are taken: the ring is left empty. */
                sqe = io_uring_get_sqe(&u->ring);
                io_uring_prep_cancel64(sqe, 1, 0);
                io_uring_sqe_set_data64(sqe, 2);
                r = probe_run(&u->ring, 2, got);
        }
        if (r == 0 && (got[0].res != -ECANCELED || got[1].res != 0))
                r = -EOPNOTSUPP;
        close(fds[0]);
        close(fds[1]);
        return r;
}

void uring_bufs_free(struct uring_loop *u)
{
        if (u->bufs.ring)
                munmap(u->bufs.ring, RING_BYTES);
        free(u->bufs.mem);
        free(u->bufs.bufs);
        u->bufs = (struct uring_bufs){};
}

/* On a ring that stays open. */
static void bufs_close(struct uring_loop *u)
{
        if (u->bufs.ring)
                (void)io_uring_unregister_buf_ring(&u->ring, URING_BUF_GROUP);
        uring_bufs_free(u);
}

int uring_bufs_open(struct uring_loop *u)
{
        struct io_uring_buf_reg reg = {.ring_entries = URING_BUF_COUNT, .bgid = URING_BUF_GROUP};
        void *ring;
        int r;

        /* The kernel reads the ring: page-aligned memory of its own. */
        ring = mmap(NULL, RING_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (ring == MAP_FAILED)
                return -errno;
        reg.ring_addr = (uint64_t)(uintptr_t)ring;
        r = io_uring_register_buf_ring(&u->ring, &reg, 0);
        if (r < 0) {
                munmap(ring, RING_BYTES);
                /* An older kernel: stream watches poll and read(2). */
                return r == -EINVAL || r == -EOPNOTSUPP || r == -ENOSYS ? 0 : r;
        }
        u->bufs.ring = ring;
        /* Zeroed: a memory checker cannot see the kernel write into it. */
        u->bufs.mem = calloc(URING_BUF_COUNT, URING_BUF_SIZE);
        u->bufs.bufs = calloc(URING_BUF_COUNT, sizeof(*u->bufs.bufs));
        if (!u->bufs.mem || !u->bufs.bufs) {
                bufs_close(u);
                return -ENOMEM;
        }
        io_uring_buf_ring_init(u->bufs.ring);
        for (uint32_t bid = 0; bid < URING_BUF_COUNT; bid++)
                buf_add(u, bid, (int)bid);
        io_uring_buf_ring_advance(u->bufs.ring, URING_BUF_COUNT);

        r = probe_recv(u);
        if (r < 0) {
                bufs_close(u);
                return r == -EOPNOTSUPP || r == -EINVAL ? 0 : r;
        }
        return 0;
}
