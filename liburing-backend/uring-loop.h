/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The io_uring backend: one ring; fd readiness through multishot polls (level-triggered, like
 * the timerfd backend); a stream watch's bytes with the completion, by multishot recv into
 * provided buffers (when the kernel has it); completions handled at the loop's own kernel entries
 * (COOP_TASKRUN, when the kernel has it); monotonic, boottime and realtime timers as one absolute
 * IORING_OP_TIMEOUT per clock, moved with timeout updates; alarm clocks and the realtime
 * clock-set watch as timerfds polled through the ring.
 */

#include "loop/loop.h"

/*
 * -ENOSYS or -EPERM when io_uring is refused here (old kernel, seccomp, kernel.io_uring_disabled),
 * -EOPNOTSUPP when the kernel lacks something the backend needs: then *ret_missing (when not NULL)
 * names it, as a static string.
 */
int uring_loop_new(const struct loop_callbacks *cb, const char **ret_missing, struct loop **ret);

/* The same on a ring set up without any optional flag, as older kernels give it: so that the
 * conformance suite runs the fallback on a kernel that takes the flags. */
int uring_loop_new_plain(const struct loop_callbacks *cb, const char **ret_missing,
                         struct loop **ret);

/* For tests: how many receives found the provided buffers exhausted (0 on a loop without them). */
uint64_t uring_loop_buffers_exhausted(const struct loop *l);
