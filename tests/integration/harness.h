/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Integration tests run the real timerd: built by meson ($TIMERD_BIN), on a socket and state
 * directory in a fresh temporary directory, with the backend named by $TIMERD_TEST_BACKEND.
 */

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "timerd/timerd.h"

struct harness {
        char dir[64];
        char socket[96];
        pid_t pid;
};

/* Start timerd with extra arguments (NULL-terminated, may be NULL); waits until it answers. */
void harness_start(struct harness *h, const char *const *extra_args);
/* Stop timerd (SIGTERM, asserting it exits 0) and start it again on the same state. */
void harness_restart(struct harness *h, const char *const *extra_args);
/* SIGTERM, and assert it exits 0. */
void harness_stop(struct harness *h);
/* The exit status of timerd after a signal (for tests that expect something else). */
int harness_kill(struct harness *h, int signo);

struct timerd *harness_connect(const struct harness *h);

/* A raw AF_UNIX connection to the service, for protocol tests. */
int harness_raw_connect(const struct harness *h);
/* Send bytes as they are (the caller includes NULs). */
void raw_send(int fd, const void *data, size_t len);
/* Receive one NUL-terminated message into buf within timeout_ms; returns its length, -1 on EOF,
 * -2 on timeout. */
long raw_recv(int fd, char *buf, size_t size, int timeout_ms);
/* The same for a reply that must come, where the timeout detects a hang: it counts only the time
 * in which neither this thread nor the service (the socket's peer) waited for a CPU
 * (schedstat.h). A loaded machine delays the reply; it is no hang. */
long raw_recv_reply(int fd, char *buf, size_t size, int timeout_ms);

/* cmocka fixtures: a harness started with no extra arguments in *state, stopped and freed. */
int harness_setup(void **state);
int harness_teardown(void **state);
/* Started with extra arguments (NULL-terminated). */
int harness_setup_with(void **state, const char *const *extra_args);

/* The backend the tests were asked to run on. */
const char *harness_backend(void);

/* Microseconds on CLOCK_MONOTONIC. */
unsigned long long harness_now_usec(void);
