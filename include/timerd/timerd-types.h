/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The vocabulary of timerd: the model's enums and the typed errors. Shared by the service's pure
 * core, the varlink codec and libtimerd, so that one failure has one name end to end. Data only:
 * no functions, no includes of the project.
 */

#define TIMERD_NAME_MAX 128
/* The longest early handover a notify timer may declare (handover_usec): one second. */
#define TIMERD_HANDOVER_MAX_USEC 1000000
/* The handover_usec timerd_declaration_init() sets: libtimerd's default, which it sends as
 * TIMERD_HANDOVER_DEFAULT_USEC (1 ms) for a notify timer whose cadence, if it has one, is longer,
 * and as 0 (exact) for any other. */
#define TIMERD_HANDOVER_DEFAULT      UINT64_MAX
#define TIMERD_HANDOVER_DEFAULT_USEC 1000
/* A calendar timer's expressions, one per line, a cron one marked TIMERD_CALENDAR_CRON_PREFIX
 * ("Mon..Fri *-*-* 03:00\ncron:0 3 * * 1-5"): at most this many bytes together. */
#define TIMERD_CALENDAR_MAX         255
#define TIMERD_CALENDAR_CRON_PREFIX "cron:"
/* An IANA zone name and its NUL. */
#define TIMERD_TIMEZONE_MAX 64

/* The varlink interfaces the service publishes; a method is named INTERFACE ".Method"
 * ("io.timerd.Timer.Get"), as timerd_call_raw() takes it. */
#define TIMERD_INTERFACE_TIMER   "io.timerd.Timer"
#define TIMERD_INTERFACE_SERVICE "io.timerd.Service"
#define TIMERD_INTERFACE_TEST    "io.timerd.Test" /* timerd --clock virtual only: timerd-test.h */

enum timerd_clock {
        TIMERD_CLOCK_MONOTONIC,
        TIMERD_CLOCK_BOOTTIME,
        TIMERD_CLOCK_REALTIME,
        TIMERD_CLOCK_BOOTTIME_ALARM,
        TIMERD_CLOCK_REALTIME_ALARM,
        TIMERD_CLOCK_MAX,
        TIMERD_CLOCK_INVALID = -1,
};

enum timerd_policy {
        TIMERD_POLICY_ONCE,
        TIMERD_POLICY_AFTER_COMPLETION,
        TIMERD_POLICY_WATCHDOG,
        TIMERD_POLICY_INTERVAL,
        /* At the elapses of calendar expressions; the next one after max(completion, the last). */
        TIMERD_POLICY_CALENDAR,
        TIMERD_POLICY_MAX,
        TIMERD_POLICY_INVALID = -1,
};

enum timerd_lifetime {
        TIMERD_LIFETIME_TRANSIENT,
        TIMERD_LIFETIME_RETAINED,
        TIMERD_LIFETIME_MAX,
        TIMERD_LIFETIME_INVALID = -1,
};

enum timerd_delivery {
        TIMERD_DELIVERY_NOTIFY,
        TIMERD_DELIVERY_ALARM,
        TIMERD_DELIVERY_SIGNAL,
        TIMERD_DELIVERY_MAX,
        TIMERD_DELIVERY_INVALID = -1,
};

enum timerd_state {
        TIMERD_STATE_INACTIVE,
        TIMERD_STATE_SCHEDULED,
        TIMERD_STATE_RUNNING,
        TIMERD_STATE_FAILED,
        TIMERD_STATE_MAX,
        TIMERD_STATE_INVALID = -1,
};

enum timerd_outcome {
        TIMERD_OUTCOME_NONE, /* no run has finished yet */
        TIMERD_OUTCOME_SUCCESS,
        TIMERD_OUTCOME_EXPECTED_FAILURE,
        TIMERD_OUTCOME_INVARIANT_FAILURE,
        TIMERD_OUTCOME_MAX,
        TIMERD_OUTCOME_INVALID = -1,
};

/* How the program a run started ended, as its runner reports it (timerd_complete_result()). */
enum timerd_exit {
        TIMERD_EXIT_NONE,      /* not reported */
        TIMERD_EXIT_EXITED,    /* code: its exit status */
        TIMERD_EXIT_SIGNALED,  /* code: the signal that killed it */
        TIMERD_EXIT_TIMED_OUT, /* ended by its runner's timeout; code: the signal, 0 if it exited */
        TIMERD_EXIT_INTERRUPTED, /* ended as its runner stopped; code: as TIMED_OUT */
        TIMERD_EXIT_MAX,
        TIMERD_EXIT_INVALID = -1,
};

enum timerd_directive {
        TIMERD_DIRECTIVE_CONTINUE,
        TIMERD_DIRECTIVE_STOP,
        TIMERD_DIRECTIVE_MAX,
        TIMERD_DIRECTIVE_INVALID = -1,
};

/* Why a timer is in state `failed`. */
enum timerd_failure {
        TIMERD_FAILURE_NONE,
        TIMERD_FAILURE_INVARIANT,        /* a run completed with invariant-failure */
        TIMERD_FAILURE_PROVIDER_BINDING, /* the kernel timer could not be armed */
        TIMERD_FAILURE_OVERFLOW,         /* a deadline or counter would overflow */
        TIMERD_FAILURE_TARGET_GONE,      /* the process a signal was for has exited */
        TIMERD_FAILURE_SIGNAL_REFUSED,   /* the kernel refused the signal (EPERM) */
        TIMERD_FAILURE_MAX,
        TIMERD_FAILURE_INVALID = -1,
};

/* What `Reconcile` should leave live. */
enum timerd_desired {
        TIMERD_DESIRED_INACTIVE,  /* keep the declaration, clear its wake-up */
        TIMERD_DESIRED_SCHEDULED, /* ensure one wake-up exists */
        TIMERD_DESIRED_EXACT,     /* the wake-up is exactly the given deadline */
        TIMERD_DESIRED_MAX,
        TIMERD_DESIRED_INVALID = -1,
};

/*
 * Typed errors. Functions return them negated (-TIMERD_E_NOT_FOUND); they start above every errno
 * value so one int carries either a timerd error or a negative errno.
 */
enum timerd_error {
        TIMERD_E_BASE = 10000,
        /* org.varlink.service */
        TIMERD_E_INVALID_PARAMETER = TIMERD_E_BASE,
        TIMERD_E_METHOD_NOT_FOUND,
        TIMERD_E_INTERFACE_NOT_FOUND,
        TIMERD_E_EXPECTED_MORE,
        TIMERD_E_PERMISSION_DENIED,
        /* io.timerd.Timer */
        TIMERD_E_NOT_FOUND,
        TIMERD_E_ALREADY_REGISTERED,
        TIMERD_E_REGISTRATION_EXPIRED,
        TIMERD_E_WRONG_POLICY,
        TIMERD_E_RECONCILIATION_CONFLICT,
        TIMERD_E_INVALID_NAME,
        TIMERD_E_INVALID_SCHEDULE,
        TIMERD_E_OVERFLOW,
        TIMERD_E_UNSUPPORTED,
        TIMERD_E_CLOCK_UNAVAILABLE,
        TIMERD_E_PROVIDER_BINDING_FAILED,
        TIMERD_E_LIMIT_EXCEEDED,
        TIMERD_E_NOT_RUNNING,
        TIMERD_E_TIMEOUT,
        TIMERD_E_SHUTTING_DOWN,
        TIMERD_E_BUSY,
        TIMERD_E_REQUEST_TOO_LARGE,
        TIMERD_E_INVALID_MESSAGE, /* not JSON, or not a varlink call */
        /* a Finish/Resume broke the parked-request protocol; the kind is in service/core/parked.h
         */
        TIMERD_E_PROTOCOL_FAILURE,
        /* a change to a retained timer could not be made durable; it was not made */
        TIMERD_E_STORE_UNAVAILABLE,
        /* client side only: never sent by the service */
        TIMERD_E_DISCONNECTED,
        TIMERD_E_PROTOCOL,
        TIMERD_E_UNKNOWN_ERROR, /* a varlink error name this library does not know */
        /* io.timerd.Timer, added later (appended: the values above stay) */
        TIMERD_E_NOTHING_TO_WAIT_FOR, /* none of the timers a Wait names can fire any more */
        /* a SignalTaken for a signal the service has not sent this connection's process, or one
         * already acknowledged */
        TIMERD_E_SIGNAL_NOT_OUTSTANDING,
        TIMERD_E_MAX,
};
