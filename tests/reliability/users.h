/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Clients of other users: a child process that switches to an unprivileged uid (and the gid of
 * the same number, no supplementary groups, unless it names others) before it connects, since the
 * service takes a client's identity from the socket (SO_PEERCRED) at connect time. Needs root; no
 * account needs to exist.
 */

#include <json-c/json.h>
#include <stdbool.h>
#include <sys/types.h>

/* Two uids no test user owns. */
#define USER_A 64001
#define USER_B 64002

/* Whether this process may switch uids (root). */
bool users_available(void);

/* Run fn(arg) in a child as uid; returns its result (0..255), or -1 when the child died of a
 * signal or could not switch. */
int run_as(uid_t uid, int (*fn)(void *arg), void *arg);

/* The same, without waiting: returns the child's pid (reap it with run_wait()). */
pid_t run_as_async(uid_t uid, int (*fn)(void *arg), void *arg);

/* Run fn(arg) in a child as uid with primary group gid and the supplementary group `group`
 * ((gid_t)-1: none); returns its result as run_as(). */
int run_as_groups(uid_t uid, gid_t gid, gid_t group, int (*fn)(void *arg), void *arg);
pid_t run_as_groups_async(uid_t uid, gid_t gid, gid_t group, int (*fn)(void *arg), void *arg);
int run_wait(pid_t pid);

/* In such a child: a connection to the service's socket, or -1 (no cmocka assertion: the child
 * reports through its result). */
int user_connect(const char *socket_path);

/* In such a child: one message within timeout_ms, parsed; NULL on EOF, timeout or garbage. */
json_object *user_recv(int fd, int timeout_ms);
/* Send a printf-formatted call (its NUL added) and receive the reply within 5 s, as user_recv(). */
json_object *user_call(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
