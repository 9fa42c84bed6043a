/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The service's lifecycle as a pure state machine (the phoxal seed's): setup steps in order →
 * ready → running → teardown → done. It decides; main.c does. The first exit reason wins; a
 * failure at any step after setup began still runs the whole teardown, which has a grace
 * deadline after which it closes anyway.
 */

#include <stdbool.h>
#include <stdint.h>

enum lifecycle_phase {
        LIFECYCLE_SETUP,
        LIFECYCLE_RUNNING, /* ready was announced */
        LIFECYCLE_TEARDOWN,
        LIFECYCLE_DONE,
        LIFECYCLE_PHASE_MAX,
};

/* Setup steps, in the order they run. */
enum lifecycle_step {
        /* First: once the socket is bound a client may connect and take the service for started,
         * so SIGTERM must already be blocked (read from the signalfd) rather than kill it. */
        LIFECYCLE_STEP_SIGNALS,
        LIFECYCLE_STEP_SOCKET,     /* taken from systemd or bound: may need privileges */
        LIFECYCLE_STEP_PRIVILEGES, /* dropped to CAP_KILL + CAP_WAKE_ALARM */
        LIFECYCLE_STEP_BACKEND,
        LIFECYCLE_STEP_CORE,
        LIFECYCLE_STEP_STORE, /* the journal replayed into the registry */
        LIFECYCLE_STEP_MAX,
};

enum exit_reason {
        EXIT_REASON_NONE,
        EXIT_REASON_SHUTDOWN_REQUESTED,
        EXIT_REASON_SETUP_FAILED,
        EXIT_REASON_BACKEND_FAULT,
        EXIT_REASON_STORE_FAULT,
        EXIT_REASON_CLOCK_FAULT,
        EXIT_REASON_SOCKET_FAULT,
        EXIT_REASON_MAX,
};

struct lifecycle {
        enum lifecycle_phase phase;
        unsigned steps_done;             /* bit per step */
        enum lifecycle_step failed_step; /* valid when reason is SETUP_FAILED */
        enum exit_reason reason;
        uint64_t grace_usec;
        uint64_t teardown_deadline_usec; /* monotonic */
};

void lifecycle_init(struct lifecycle *l, uint64_t grace_usec);

/* A setup step finished (error 0) or failed (-errno). Steps must come in order: -EINVAL
 * otherwise. A failure records SETUP_FAILED and the step. */
int lifecycle_step_done(struct lifecycle *l, enum lifecycle_step step, int error);

/* All steps done and no failure: announce ready, go RUNNING. false otherwise. */
bool lifecycle_ready(struct lifecycle *l);

/* Request the end (shutdown, or a fault). The first reason wins; returns whether this one did. */
bool lifecycle_exit(struct lifecycle *l, enum exit_reason reason);

/* Whether the loop should go on. */
bool lifecycle_running(const struct lifecycle *l);

/* Enter teardown at monotonic `now`; its deadline is now + grace. Idempotent. */
void lifecycle_begin_teardown(struct lifecycle *l, uint64_t now_usec);

/* Time left for teardown at `now`; 0 once the grace deadline passed. */
uint64_t lifecycle_grace_left(const struct lifecycle *l, uint64_t now_usec);

void lifecycle_end(struct lifecycle *l);

/* The process exit status for how it ended: 0 after a requested shutdown. */
int lifecycle_exit_status(const struct lifecycle *l);

const char *exit_reason_to_string(enum exit_reason r);
const char *lifecycle_step_to_string(enum lifecycle_step s);
