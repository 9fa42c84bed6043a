/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Who comes and goes: connections accepted from the listening socket and admitted to the
 * connection table (conns.h), the one evicted to make room, and those the table's timeouts reap.
 */

#include <stdbool.h>
#include <stdint.h>

struct loop_watch;
struct service;

struct listening {
        int fd;
        bool bound_here; /* we created the socket file: unlink it at exit */
        struct loop_watch *watch;
        bool paused; /* out of file descriptors: resumed when a connection closes */
        uint64_t last_session;
};

int service_start_listening(struct service *s, int listen_fd);
void service_stop_listening(struct service *s);

/* The monotonic clock reached now_usec: close the connections whose time is up. */
void service_reap(struct service *s, uint64_t now_usec);
