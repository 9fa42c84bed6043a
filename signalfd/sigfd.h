/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>

/*
 * The service's own signals, read from a signalfd instead of handled: SIGTERM and SIGINT (stop),
 * SIGHUP (reload). No handler ever runs; SIGPIPE is ignored so a peer that hangs up turns into
 * EPIPE on write.
 */

/*
 * Ignore SIGPIPE, block SIGTERM, SIGINT and SIGHUP in the calling thread and return a signalfd
 * for them (non-blocking, close-on-exec) or -errno. Call before starting any other thread.
 */
int sigfd_open(void);

/* Read one pending signal: its number, -EAGAIN when none is pending, or -errno. */
int sigfd_read(int fd);

/* Whether SIGTERM or SIGINT waits to be read, without reading it: start-up checks it between
 * steps, before the loop reads the signalfd. */
bool sigfd_stop_pending(void);
