/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "service/lifecycle.h"

#include <errno.h>
#include <stddef.h>

#include "base/arith.h"

static const char *const reason_names[EXIT_REASON_MAX] = {
    [EXIT_REASON_NONE] = "none",
    [EXIT_REASON_SHUTDOWN_REQUESTED] = "shutdown requested",
    [EXIT_REASON_SETUP_FAILED] = "setup failed",
    [EXIT_REASON_BACKEND_FAULT] = "backend fault",
    [EXIT_REASON_STORE_FAULT] = "store fault",
    [EXIT_REASON_CLOCK_FAULT] = "clock fault",
    [EXIT_REASON_SOCKET_FAULT] = "socket fault",
};

/* Distinct statuses so systemd and scripts can tell faults apart; 2 is usage (config.c). */
static const int reason_status[EXIT_REASON_MAX] = {
    [EXIT_REASON_NONE] = 0,         [EXIT_REASON_SHUTDOWN_REQUESTED] = 0,
    [EXIT_REASON_SETUP_FAILED] = 1, [EXIT_REASON_BACKEND_FAULT] = 3,
    [EXIT_REASON_CLOCK_FAULT] = 4,  [EXIT_REASON_SOCKET_FAULT] = 5,
    [EXIT_REASON_STORE_FAULT] = 6,
};

static const char *const step_names[LIFECYCLE_STEP_MAX] = {
    [LIFECYCLE_STEP_SIGNALS] = "signals", [LIFECYCLE_STEP_BACKEND] = "backend",
    [LIFECYCLE_STEP_CORE] = "core",       [LIFECYCLE_STEP_STORE] = "store",
    [LIFECYCLE_STEP_SOCKET] = "socket",   [LIFECYCLE_STEP_PRIVILEGES] = "privileges",
};

void lifecycle_init(struct lifecycle *l, uint64_t grace_usec)
{
        *l = (struct lifecycle){.phase = LIFECYCLE_SETUP, .grace_usec = grace_usec};
}

int lifecycle_step_done(struct lifecycle *l, enum lifecycle_step step, int error)
{
        if (l->phase != LIFECYCLE_SETUP || step < 0 || step >= LIFECYCLE_STEP_MAX ||
            l->steps_done != (1u << step) - 1 || l->reason != EXIT_REASON_NONE)
                return -EINVAL;
        if (error < 0) {
                l->reason = EXIT_REASON_SETUP_FAILED;
                l->failed_step = step;
                return 0;
        }
        l->steps_done |= 1u << step;
        return 0;
}

bool lifecycle_ready(struct lifecycle *l)
{
        if (l->phase != LIFECYCLE_SETUP || l->reason != EXIT_REASON_NONE ||
            l->steps_done != (1u << LIFECYCLE_STEP_MAX) - 1)
                return false;
        l->phase = LIFECYCLE_RUNNING;
        return true;
}

bool lifecycle_exit(struct lifecycle *l, enum exit_reason reason)
{
        if (l->reason != EXIT_REASON_NONE || reason <= EXIT_REASON_NONE ||
            reason >= EXIT_REASON_MAX)
                return false;
        l->reason = reason;
        return true;
}

bool lifecycle_running(const struct lifecycle *l)
{
        return l->phase == LIFECYCLE_RUNNING && l->reason == EXIT_REASON_NONE;
}

void lifecycle_begin_teardown(struct lifecycle *l, uint64_t now_usec)
{
        if (l->phase == LIFECYCLE_TEARDOWN || l->phase == LIFECYCLE_DONE)
                return;
        l->phase = LIFECYCLE_TEARDOWN;
        l->teardown_deadline_usec = saturating_add(now_usec, l->grace_usec);
}

uint64_t lifecycle_grace_left(const struct lifecycle *l, uint64_t now_usec)
{
        if (l->phase != LIFECYCLE_TEARDOWN || now_usec >= l->teardown_deadline_usec)
                return 0;
        return l->teardown_deadline_usec - now_usec;
}

void lifecycle_end(struct lifecycle *l)
{
        l->phase = LIFECYCLE_DONE;
}

int lifecycle_exit_status(const struct lifecycle *l)
{
        return reason_status[l->reason];
}

const char *exit_reason_to_string(enum exit_reason r)
{
        return r >= 0 && r < EXIT_REASON_MAX ? reason_names[r] : NULL;
}

const char *lifecycle_step_to_string(enum lifecycle_step s)
{
        return s >= 0 && s < LIFECYCLE_STEP_MAX ? step_names[s] : NULL;
}
