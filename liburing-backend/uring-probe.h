/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What the io_uring backend needs from the kernel, checked on a fresh ring before use: the
 * opcodes (IORING_OP_POLL_ADD, POLL_REMOVE, TIMEOUT, TIMEOUT_REMOVE) through the probe, then the
 * behaviour the opcode probe cannot show — multishot and updatable polls, updatable absolute
 * timeouts on CLOCK_BOOTTIME and CLOCK_REALTIME — by trying each once.
 */

#include <liburing.h>

/*
 * 0 when everything works; -EOPNOTSUPP with *ret_missing naming the first missing piece (a static
 * string); other -errno when the check itself failed. The ring must be fresh and is left empty.
 */
int uring_probe_ring(struct io_uring *ring, const char **ret_missing);
