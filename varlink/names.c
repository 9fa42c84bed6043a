/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <stdbool.h>
#include <stddef.h>

#include "varlink/names.h"

#define ELEMENTSOF(a) (sizeof(a) / sizeof((a)[0]))

/* A wire name matches itself and its spelling with '-' for '_'. */
static bool name_matches(const char *wire, const char *s)
{
        for (; *wire; wire++, s++)
                if (*s != *wire && !(*wire == '_' && *s == '-'))
                        return false;
        return *s == 0;
}

static const char *name_lookup(const char *const *table, size_t n, int value)
{
        if (value < 0 || (size_t)value >= n)
                return NULL;
        return table[value];
}

/* The index of s in table (entries may be NULL), or -1. */
static int value_lookup(const char *const *table, size_t n, const char *s)
{
        if (!s)
                return -1;
        for (size_t i = 0; i < n; i++)
                if (table[i] && name_matches(table[i], s))
                        return (int)i;
        return -1;
}

/* The pair of lookups of one enum, over its table of wire names indexed by value. */
#define DEFINE_NAME_LOOKUP(name, type, table, max)                                                 \
        _Static_assert(ELEMENTSOF(table) == (max), "one name per value of " #type);                \
        const char *vl_##name##_to_string(type v)                                                  \
        {                                                                                          \
                return name_lookup(table, ELEMENTSOF(table), (int)v);                              \
        }                                                                                          \
        type vl_##name##_from_string(const char *s)                                                \
        {                                                                                          \
                return (type)value_lookup(table, ELEMENTSOF(table), s);                            \
        }

static const char *const clock_names[] = {
    [TIMERD_CLOCK_MONOTONIC] = "monotonic",
    [TIMERD_CLOCK_BOOTTIME] = "boottime",
    [TIMERD_CLOCK_REALTIME] = "realtime",
    [TIMERD_CLOCK_BOOTTIME_ALARM] = "boottime_alarm",
    [TIMERD_CLOCK_REALTIME_ALARM] = "realtime_alarm",
};
DEFINE_NAME_LOOKUP(clock, enum timerd_clock, clock_names, TIMERD_CLOCK_MAX)

static const char *const policy_names[] = {
    [TIMERD_POLICY_ONCE] = "once",         [TIMERD_POLICY_AFTER_COMPLETION] = "after_completion",
    [TIMERD_POLICY_WATCHDOG] = "watchdog", [TIMERD_POLICY_INTERVAL] = "interval",
    [TIMERD_POLICY_CALENDAR] = "calendar",
};
DEFINE_NAME_LOOKUP(policy, enum timerd_policy, policy_names, TIMERD_POLICY_MAX)

static const char *const lifetime_names[] = {
    [TIMERD_LIFETIME_TRANSIENT] = "transient",
    [TIMERD_LIFETIME_RETAINED] = "retained",
};
DEFINE_NAME_LOOKUP(lifetime, enum timerd_lifetime, lifetime_names, TIMERD_LIFETIME_MAX)

static const char *const delivery_names[] = {
    [TIMERD_DELIVERY_NOTIFY] = "notify",
    [TIMERD_DELIVERY_ALARM] = "alarm",
    [TIMERD_DELIVERY_SIGNAL] = "signal",
};
DEFINE_NAME_LOOKUP(delivery, enum timerd_delivery, delivery_names, TIMERD_DELIVERY_MAX)

static const char *const state_names[] = {
    [TIMERD_STATE_INACTIVE] = "inactive",
    [TIMERD_STATE_SCHEDULED] = "scheduled",
    [TIMERD_STATE_RUNNING] = "running",
    [TIMERD_STATE_FAILED] = "failed",
};
DEFINE_NAME_LOOKUP(state, enum timerd_state, state_names, TIMERD_STATE_MAX)

/* "none" never goes on the wire (the optional field is left out) but names the value for people. */
static const char *const outcome_names[] = {
    [TIMERD_OUTCOME_NONE] = "none",
    [TIMERD_OUTCOME_SUCCESS] = "success",
    [TIMERD_OUTCOME_EXPECTED_FAILURE] = "expected_failure",
    [TIMERD_OUTCOME_INVARIANT_FAILURE] = "invariant_failure",
};
DEFINE_NAME_LOOKUP(outcome, enum timerd_outcome, outcome_names, TIMERD_OUTCOME_MAX)

/* "none" never goes on the wire (the optional result is left out). */
static const char *const exit_names[] = {
    [TIMERD_EXIT_NONE] = "none",
    [TIMERD_EXIT_EXITED] = "exited",
    [TIMERD_EXIT_SIGNALED] = "signaled",
    [TIMERD_EXIT_TIMED_OUT] = "timed_out",
    [TIMERD_EXIT_INTERRUPTED] = "interrupted",
};
DEFINE_NAME_LOOKUP(exit, enum timerd_exit, exit_names, TIMERD_EXIT_MAX)

static const char *const directive_names[] = {
    [TIMERD_DIRECTIVE_CONTINUE] = "continue",
    [TIMERD_DIRECTIVE_STOP] = "stop",
};
DEFINE_NAME_LOOKUP(directive, enum timerd_directive, directive_names, TIMERD_DIRECTIVE_MAX)

static const char *const failure_names[] = {
    [TIMERD_FAILURE_NONE] = "none",
    [TIMERD_FAILURE_INVARIANT] = "invariant",
    [TIMERD_FAILURE_PROVIDER_BINDING] = "provider_binding",
    [TIMERD_FAILURE_OVERFLOW] = "overflow",
    [TIMERD_FAILURE_TARGET_GONE] = "target_gone",
    [TIMERD_FAILURE_SIGNAL_REFUSED] = "signal_refused",
};
DEFINE_NAME_LOOKUP(failure, enum timerd_failure, failure_names, TIMERD_FAILURE_MAX)

static const char *const desired_names[] = {
    [TIMERD_DESIRED_INACTIVE] = "inactive",
    [TIMERD_DESIRED_SCHEDULED] = "scheduled",
    [TIMERD_DESIRED_EXACT] = "exact",
};
DEFINE_NAME_LOOKUP(desired, enum timerd_desired, desired_names, TIMERD_DESIRED_MAX)

#define ERROR_INDEX(e) [(e)-TIMERD_E_BASE]
#define SERVICE_ERROR  "org.varlink.service."
#define TIMER_ERROR    VL_INTERFACE_TIMER "."

/* Client-only errors have no wire name: NULL. */
static const char *const error_names[] = {
    ERROR_INDEX(TIMERD_E_INVALID_PARAMETER) = SERVICE_ERROR "InvalidParameter",
    ERROR_INDEX(TIMERD_E_METHOD_NOT_FOUND) = SERVICE_ERROR "MethodNotFound",
    ERROR_INDEX(TIMERD_E_INTERFACE_NOT_FOUND) = SERVICE_ERROR "InterfaceNotFound",
    ERROR_INDEX(TIMERD_E_EXPECTED_MORE) = SERVICE_ERROR "ExpectedMore",
    ERROR_INDEX(TIMERD_E_PERMISSION_DENIED) = SERVICE_ERROR "PermissionDenied",
    ERROR_INDEX(TIMERD_E_NOT_FOUND) = TIMER_ERROR "NotFound",
    ERROR_INDEX(TIMERD_E_ALREADY_REGISTERED) = TIMER_ERROR "AlreadyRegistered",
    ERROR_INDEX(TIMERD_E_REGISTRATION_EXPIRED) = TIMER_ERROR "RegistrationExpired",
    ERROR_INDEX(TIMERD_E_WRONG_POLICY) = TIMER_ERROR "WrongPolicy",
    ERROR_INDEX(TIMERD_E_RECONCILIATION_CONFLICT) = TIMER_ERROR "ReconciliationConflict",
    ERROR_INDEX(TIMERD_E_INVALID_NAME) = TIMER_ERROR "InvalidName",
    ERROR_INDEX(TIMERD_E_INVALID_SCHEDULE) = TIMER_ERROR "InvalidSchedule",
    ERROR_INDEX(TIMERD_E_OVERFLOW) = TIMER_ERROR "Overflow",
    ERROR_INDEX(TIMERD_E_UNSUPPORTED) = TIMER_ERROR "Unsupported",
    ERROR_INDEX(TIMERD_E_CLOCK_UNAVAILABLE) = TIMER_ERROR "ClockUnavailable",
    ERROR_INDEX(TIMERD_E_PROVIDER_BINDING_FAILED) = TIMER_ERROR "ProviderBindingFailed",
    ERROR_INDEX(TIMERD_E_LIMIT_EXCEEDED) = TIMER_ERROR "LimitExceeded",
    ERROR_INDEX(TIMERD_E_NOT_RUNNING) = TIMER_ERROR "NotRunning",
    ERROR_INDEX(TIMERD_E_TIMEOUT) = TIMER_ERROR "Timeout",
    ERROR_INDEX(TIMERD_E_SHUTTING_DOWN) = TIMER_ERROR "ShuttingDown",
    ERROR_INDEX(TIMERD_E_BUSY) = TIMER_ERROR "Busy",
    ERROR_INDEX(TIMERD_E_REQUEST_TOO_LARGE) = TIMER_ERROR "RequestTooLarge",
    ERROR_INDEX(TIMERD_E_INVALID_MESSAGE) = TIMER_ERROR "InvalidMessage",
    ERROR_INDEX(TIMERD_E_PROTOCOL_FAILURE) = TIMER_ERROR "ProtocolFailure",
    ERROR_INDEX(TIMERD_E_STORE_UNAVAILABLE) = TIMER_ERROR "StoreUnavailable",
    ERROR_INDEX(TIMERD_E_DISCONNECTED) = NULL,
    ERROR_INDEX(TIMERD_E_PROTOCOL) = NULL,
    ERROR_INDEX(TIMERD_E_UNKNOWN_ERROR) = NULL,
    ERROR_INDEX(TIMERD_E_NOTHING_TO_WAIT_FOR) = TIMER_ERROR "NothingToWaitFor",
    ERROR_INDEX(TIMERD_E_SIGNAL_NOT_OUTSTANDING) = TIMER_ERROR "SignalNotOutstanding",
};
_Static_assert(ELEMENTSOF(error_names) == TIMERD_E_MAX - TIMERD_E_BASE, "one name per error");

static const char *const error_messages[] = {
    ERROR_INDEX(TIMERD_E_INVALID_PARAMETER) = "a parameter is missing or invalid",
    ERROR_INDEX(TIMERD_E_METHOD_NOT_FOUND) = "the service has no such method",
    ERROR_INDEX(TIMERD_E_INTERFACE_NOT_FOUND) = "the service has no such interface",
    ERROR_INDEX(TIMERD_E_EXPECTED_MORE) = "the method must be called with more set",
    ERROR_INDEX(TIMERD_E_PERMISSION_DENIED) = "permission denied",
    ERROR_INDEX(TIMERD_E_NOT_FOUND) = "no timer of that name",
    ERROR_INDEX(TIMERD_E_ALREADY_REGISTERED) = "a timer of that name is already registered",
    ERROR_INDEX(TIMERD_E_REGISTRATION_EXPIRED) =
        "the registration is no longer current (stale claim)",
    ERROR_INDEX(TIMERD_E_WRONG_POLICY) = "the timer's policy does not allow this",
    ERROR_INDEX(TIMERD_E_RECONCILIATION_CONFLICT) =
        "the timer is already declared with a different policy",
    ERROR_INDEX(TIMERD_E_INVALID_NAME) =
        "invalid timer name (1-128 bytes of A-Z a-z 0-9 . _ : @ -)",
    ERROR_INDEX(TIMERD_E_INVALID_SCHEDULE) = "the schedule is invalid",
    ERROR_INDEX(TIMERD_E_OVERFLOW) = "a time or counter would overflow",
    ERROR_INDEX(TIMERD_E_UNSUPPORTED) = "the service does not support this",
    ERROR_INDEX(TIMERD_E_CLOCK_UNAVAILABLE) = "the clock is not available",
    ERROR_INDEX(TIMERD_E_PROVIDER_BINDING_FAILED) = "the kernel timer could not be armed",
    ERROR_INDEX(TIMERD_E_LIMIT_EXCEEDED) = "a limit was exceeded",
    ERROR_INDEX(TIMERD_E_NOT_RUNNING) = "the timer has no active run",
    ERROR_INDEX(TIMERD_E_TIMEOUT) = "timed out",
    ERROR_INDEX(TIMERD_E_SHUTTING_DOWN) = "the service is shutting down",
    ERROR_INDEX(TIMERD_E_BUSY) = "the service is busy",
    ERROR_INDEX(TIMERD_E_REQUEST_TOO_LARGE) = "the request is too large",
    ERROR_INDEX(TIMERD_E_INVALID_MESSAGE) = "the message is not a valid varlink call",
    ERROR_INDEX(TIMERD_E_PROTOCOL_FAILURE) =
        "the continuation, lease or ticket does not match the parked request",
    ERROR_INDEX(TIMERD_E_STORE_UNAVAILABLE) =
        "the service cannot save retained timers: the change was not made",
    ERROR_INDEX(TIMERD_E_DISCONNECTED) = "the connection to the service was lost",
    ERROR_INDEX(TIMERD_E_PROTOCOL) = "the service sent a message that breaks the protocol",
    ERROR_INDEX(TIMERD_E_UNKNOWN_ERROR) = "the service answered an error unknown to this client",
    ERROR_INDEX(TIMERD_E_NOTHING_TO_WAIT_FOR) =
        "none of the timers waited for can fire any more (cancelled, removed, done or failed)",
    ERROR_INDEX(TIMERD_E_SIGNAL_NOT_OUTSTANDING) =
        "no signal of that timer awaits its acknowledgement on this connection",
};
_Static_assert(ELEMENTSOF(error_messages) == TIMERD_E_MAX - TIMERD_E_BASE, "one message per error");

static int error_index(int error)
{
        return error >= TIMERD_E_BASE ? error - TIMERD_E_BASE : -1;
}

const char *vl_error_to_name(int error)
{
        return name_lookup(error_names, ELEMENTSOF(error_names), error_index(error));
}

int vl_error_from_name(const char *name)
{
        int i = value_lookup(error_names, ELEMENTSOF(error_names), name);

        return i < 0 ? TIMERD_E_UNKNOWN_ERROR : TIMERD_E_BASE + i;
}

const char *vl_error_message(int error)
{
        return name_lookup(error_messages, ELEMENTSOF(error_messages), error_index(error));
}
