/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "liburing-backend/uring-probe.h"

static const struct {
        int opcode;
        const char *name;
} required_opcodes[] = {
    {IORING_OP_POLL_ADD, "IORING_OP_POLL_ADD"},
    {IORING_OP_POLL_REMOVE, "IORING_OP_POLL_REMOVE"},
    {IORING_OP_TIMEOUT, "IORING_OP_TIMEOUT"},
    {IORING_OP_TIMEOUT_REMOVE, "IORING_OP_TIMEOUT_REMOVE"},
};

/* Each step is one SQE; user_data is its index, and `expected` is its CQE's result. */
enum probe_step {
        STEP_POLL_MULTISHOT,
        STEP_POLL_UPDATE,
        STEP_POLL_REMOVE,
        STEP_TIMEOUT_BOOTTIME,
        STEP_TIMEOUT_UPDATE,
        STEP_TIMEOUT_REMOVE,
        STEP_TIMEOUT_REALTIME,
        STEP_TIMEOUT_REALTIME_REMOVE,
        _STEP_MAX,
};

static const struct {
        int expected;
        const char *missing;
} steps[_STEP_MAX] = {
    [STEP_POLL_MULTISHOT] = {-ECANCELED, "multishot poll (IORING_POLL_ADD_MULTI)"},
    [STEP_POLL_UPDATE] = {0, "poll update (IORING_POLL_UPDATE_EVENTS)"},
    [STEP_POLL_REMOVE] = {0, "IORING_OP_POLL_REMOVE"},
    [STEP_TIMEOUT_BOOTTIME] = {-ECANCELED, "IORING_TIMEOUT_BOOTTIME"},
    [STEP_TIMEOUT_UPDATE] = {0, "timeout update (IORING_TIMEOUT_UPDATE)"},
    [STEP_TIMEOUT_REMOVE] = {0, "IORING_OP_TIMEOUT_REMOVE"},
    [STEP_TIMEOUT_REALTIME] = {-ECANCELED, "IORING_TIMEOUT_REALTIME"},
    [STEP_TIMEOUT_REALTIME_REMOVE] = {0, "IORING_OP_TIMEOUT_REMOVE"},
};

static int probe_opcodes(struct io_uring *ring, const char **ret_missing)
{
        struct io_uring_probe *probe;
        int r = 0;

        probe = io_uring_get_probe_ring(ring);
        if (!probe) {
                *ret_missing = "IORING_REGISTER_PROBE";
                return -EOPNOTSUPP;
        }
        for (size_t i = 0; i < sizeof(required_opcodes) / sizeof(required_opcodes[0]); i++)
                if (!io_uring_opcode_supported(probe, required_opcodes[i].opcode)) {
                        *ret_missing = required_opcodes[i].name;
                        r = -EOPNOTSUPP;
                        break;
                }
        io_uring_free_probe(probe);
        return r;
}

static void probe_queue(struct io_uring *ring, int event_fd, struct __kernel_timespec *far)
{
        const unsigned boottime = IORING_TIMEOUT_ABS | IORING_TIMEOUT_BOOTTIME;
        struct io_uring_sqe *sqe[_STEP_MAX];

        /* The ring is fresh and holds more entries than there are steps. */
        for (int i = 0; i < _STEP_MAX; i++) {
                sqe[i] = io_uring_get_sqe(ring);
                io_uring_sqe_set_data64(sqe[i], (uint64_t)i);
        }

        /* An eventfd at 0 is never readable: the poll stays armed until removed. */
        io_uring_prep_poll_multishot(sqe[STEP_POLL_MULTISHOT], event_fd, POLLIN);
        io_uring_prep_poll_update(sqe[STEP_POLL_UPDATE], STEP_POLL_MULTISHOT, 0, POLLIN,
                                  IORING_POLL_UPDATE_EVENTS | IORING_POLL_ADD_MULTI);
        io_uring_prep_poll_remove(sqe[STEP_POLL_REMOVE], STEP_POLL_MULTISHOT);

        io_uring_prep_timeout(sqe[STEP_TIMEOUT_BOOTTIME], far, 0, boottime);
        io_uring_prep_timeout_update(sqe[STEP_TIMEOUT_UPDATE], far, STEP_TIMEOUT_BOOTTIME,
                                     IORING_TIMEOUT_ABS);
        io_uring_prep_timeout_remove(sqe[STEP_TIMEOUT_REMOVE], STEP_TIMEOUT_BOOTTIME, 0);

        io_uring_prep_timeout(sqe[STEP_TIMEOUT_REALTIME], far, 0,
                              IORING_TIMEOUT_ABS | IORING_TIMEOUT_REALTIME);
        io_uring_prep_timeout_remove(sqe[STEP_TIMEOUT_REALTIME_REMOVE], STEP_TIMEOUT_REALTIME, 0);
}

static int probe_behaviour(struct io_uring *ring, const char **ret_missing)
{
        struct __kernel_timespec far = {.tv_sec = INT32_MAX};
        /* Every step completes at submission; the bound only guards against a kernel bug. */
        struct __kernel_timespec patience = {.tv_sec = 1};
        int results[_STEP_MAX];
        bool seen[_STEP_MAX] = {};
        unsigned n_seen = 0;
        int event_fd, r;

        event_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        if (event_fd < 0)
                return -errno;

        if (io_uring_sq_space_left(ring) < _STEP_MAX) {
                r = -EBUSY;
                goto finish;
        }
        probe_queue(ring, event_fd, &far);
        /* Without IORING_SETUP_SUBMIT_ALL the kernel stops at an SQE it rejects: go on after it. */
        while (io_uring_sq_ready(ring) > 0) {
                r = io_uring_submit(ring);
                if (r == 0)
                        break;
                if (r < 0 && r != -EINTR)
                        goto finish;
        }

        while (n_seen < _STEP_MAX) {
                struct io_uring_cqe *cqe;

                r = io_uring_wait_cqe_timeout(ring, &cqe, &patience);
                if (r == -EINTR)
                        continue;
                if (r == -ETIME) {
                        *ret_missing = "prompt completion of the probe";
                        r = -EOPNOTSUPP;
                        goto finish;
                }
                if (r < 0)
                        goto finish;
                if (cqe->user_data < _STEP_MAX && !seen[cqe->user_data]) {
                        seen[cqe->user_data] = true;
                        results[cqe->user_data] = cqe->res;
                        n_seen++;
                }
                io_uring_cqe_seen(ring, cqe);
        }

        r = 0;
        for (int i = 0; i < _STEP_MAX; i++)
                if (results[i] != steps[i].expected) {
                        *ret_missing = steps[i].missing;
                        r = -EOPNOTSUPP;
                        break;
                }

finish:
        close(event_fd);
        return r;
}

int uring_probe_ring(struct io_uring *ring, const char **ret_missing)
{
        const char *missing = NULL;
        int r;

        r = probe_opcodes(ring, &missing);
        if (r >= 0)
                r = probe_behaviour(ring, &missing);
        if (ret_missing)
                *ret_missing = missing;
        return r;
}
