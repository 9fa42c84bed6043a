/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Which loop backend the service runs on. loop_new() (loop/loop.h) is defined here too, so the
 * loop interface stays free of any backend.
 */

#include <stddef.h>

#include "loop/loop.h"

/*
 * Open the loop `requested`: "auto" (or NULL) tries io_uring and falls back to timerfd when
 * io_uring is refused (-ENOSYS, -EPERM from seccomp or kernel.io_uring_disabled, -EACCES) or
 * lacks a feature (-EOPNOTSUPP); "io_uring" or "timerfd" insists on one. `reason` (may be NULL)
 * receives why a fallback or a failure happened, e.g. "io_uring refused: Operation not
 * permitted", and is empty when there is nothing to explain. -EINVAL for an unknown name.
 *
 * Tests: TIMERD_TEST_IO_URING_REFUSE=1 in the environment makes io_uring act as refused (-EPERM)
 * without asking the kernel. It is read here only, and ignored in a setuid context.
 */
int backend_open(const char *requested, const struct loop_callbacks *cb, struct loop **ret,
                 char *reason, size_t reason_size);
