/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * timerd under systemd: the listening socket the service manager passes, and what the service
 * tells it (READY, STATUS, RELOADING, STOPPING, WATCHDOG). Without systemd nothing is passed and
 * every notification is dropped, so the same calls serve both cases.
 */

#include <stdint.h>

#include "loop/loop.h"

/* The name the socket unit gives the varlink socket (FileDescriptorName=). */
#define SYSTEMD_SOCKET_NAME "varlink"

/*
 * Take the socket passed under SYSTEMD_SOCKET_NAME, made non-blocking: 1 and *ret_fd, or 0 when
 * systemd passed none. -ENOENT when sockets were passed but none by that name, -ENOTSOCK when it
 * is not a listening AF_UNIX stream socket. Every other passed fd is closed.
 */
int systemd_listen_socket(int *ret_fd);

/* What the one-line STATUS= says. */
struct systemd_summary {
        uint64_t timers;
        uint64_t waiters;
        const char *backend;
};

/* The notifications that keep state: watchdog pings and rate-limited status updates. */
struct systemd_notifier;

/*
 * When systemd asks for watchdog pings, they are sent from `loop` at half the interval, so a loop
 * that stops turning gets the service restarted. -errno when the pings cannot be set up.
 */
int systemd_notifier_new(struct loop *loop, struct systemd_notifier **ret);
void systemd_notifier_free(struct systemd_notifier *n);

/* READY=1 with the first STATUS=: call once everything is declared. */
void systemd_notify_ready(struct systemd_notifier *n, const struct systemd_summary *summary);

/*
 * A new summary, cheap enough for every loop iteration: sent only when it changed, at most once a
 * second; a change held back is sent when the second is over.
 */
void systemd_notify_status(struct systemd_notifier *n, const struct systemd_summary *summary);

/* A configuration reload: RELOADING=1 before, READY=1 after. */
void systemd_notify_reloading(void);
void systemd_notify_reloaded(void);

/* The first thing teardown does. */
void systemd_notify_stopping(void);
