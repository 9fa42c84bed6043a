/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The listening socket: bound here when systemd passed none. A stale socket file (nobody
 * listening) is replaced; a live one is never stolen.
 */

#include <stdbool.h>

/* Create the parent directory if needed, bind and listen. -EADDRINUSE when a service answers. */
int listener_bind(const char *path, int *ret_fd);

/* Remove the socket file we bound. */
void listener_unlink(const char *path);
