/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "varlink/idl.h"
#include "varlink/names.h"

#define ELEMENTSOF(a) (sizeof(a) / sizeof((a)[0]))

/* The timerctl spelling: '-' for '_'. */
static char *hyphenated(const char *s)
{
        char *copy = strdup(s);

        assert_non_null(copy);
        for (char *p = copy; *p; p++)
                if (*p == '_')
                        *p = '-';
        return copy;
}

/* name is a whole word of the description: an IDL enum value or field name. */
static bool idl_has_word(const char *interface, const char *name)
{
        const char *text = vl_idl_lookup(interface);
        size_t len = strlen(name);

        assert_non_null(text);
        for (const char *p = strstr(text, name); p; p = strstr(p + 1, name)) {
                bool starts = p == text || strchr(" (,\n", p[-1]);
                bool ends = p[len] != 0 && strchr(" ),\n", p[len]);

                if (starts && ends)
                        return true;
        }
        return false;
}

/*
 * Checks one enum: the wire names are exactly `expected` in value order, each reads back (also
 * hyphenated) and is an enum value of io.timerd.Timer; out-of-range values and unknown names are
 * refused.
 */
#define ASSERT_ENUM_NAMES(name, max, invalid, ...)                                                 \
        do {                                                                                       \
                static const char *const expected[] = {__VA_ARGS__};                               \
                assert_int_equal(ELEMENTSOF(expected), (max));                                     \
                for (int v = 0; v < (max); v++) {                                                  \
                        const char *s = vl_##name##_to_string(v);                                  \
                        char *h;                                                                   \
                                                                                                   \
                        assert_non_null(s);                                                        \
                        assert_string_equal(s, expected[v]);                                       \
                        assert_int_equal(vl_##name##_from_string(s), v);                           \
                        h = hyphenated(s);                                                         \
                        assert_int_equal(vl_##name##_from_string(h), v);                           \
                        free(h);                                                                   \
                        if (strcmp(s, "none") != 0)                                                \
                                assert_true(idl_has_word(VL_INTERFACE_TIMER, s));                  \
                }                                                                                  \
                assert_null(vl_##name##_to_string(-1));                                            \
                assert_null(vl_##name##_to_string(max));                                           \
                assert_null(vl_##name##_to_string(INT_MAX));                                       \
                assert_int_equal(vl_##name##_from_string(NULL), (invalid));                        \
                assert_int_equal(vl_##name##_from_string(""), (invalid));                          \
                assert_int_equal(vl_##name##_from_string("bogus"), (invalid));                     \
                assert_int_equal(vl_##name##_from_string(expected[0] + 1), (invalid));             \
        } while (0)

static void enum_names(void **state)
{
        (void)state;
        ASSERT_ENUM_NAMES(clock, TIMERD_CLOCK_MAX, TIMERD_CLOCK_INVALID, "monotonic", "boottime",
                          "realtime", "boottime_alarm", "realtime_alarm");
        ASSERT_ENUM_NAMES(policy, TIMERD_POLICY_MAX, TIMERD_POLICY_INVALID, "once",
                          "after_completion", "watchdog", "interval", "calendar");
        ASSERT_ENUM_NAMES(lifetime, TIMERD_LIFETIME_MAX, TIMERD_LIFETIME_INVALID, "transient",
                          "retained");
        ASSERT_ENUM_NAMES(delivery, TIMERD_DELIVERY_MAX, TIMERD_DELIVERY_INVALID, "notify", "alarm",
                          "signal");
        ASSERT_ENUM_NAMES(state, TIMERD_STATE_MAX, TIMERD_STATE_INVALID, "inactive", "scheduled",
                          "running", "failed");
        ASSERT_ENUM_NAMES(outcome, TIMERD_OUTCOME_MAX, TIMERD_OUTCOME_INVALID, "none", "success",
                          "expected_failure", "invariant_failure");
        ASSERT_ENUM_NAMES(directive, TIMERD_DIRECTIVE_MAX, TIMERD_DIRECTIVE_INVALID, "continue",
                          "stop");
        ASSERT_ENUM_NAMES(failure, TIMERD_FAILURE_MAX, TIMERD_FAILURE_INVALID, "none", "invariant",
                          "provider_binding", "overflow", "target_gone", "signal_refused");
        ASSERT_ENUM_NAMES(desired, TIMERD_DESIRED_MAX, TIMERD_DESIRED_INVALID, "inactive",
                          "scheduled", "exact");
}

static void enum_spellings(void **state)
{
        (void)state;
        assert_int_equal(vl_policy_from_string("after-completion"), TIMERD_POLICY_AFTER_COMPLETION);
        assert_int_equal(vl_clock_from_string("realtime-alarm"), TIMERD_CLOCK_REALTIME_ALARM);
        assert_int_equal(vl_failure_from_string("provider-binding"),
                         TIMERD_FAILURE_PROVIDER_BINDING);
        /* Only '-' stands for '_', never the other way round, and case matters. */
        assert_int_equal(vl_clock_from_string("boottime-alarm-"), TIMERD_CLOCK_INVALID);
        assert_int_equal(vl_clock_from_string("boottime alarm"), TIMERD_CLOCK_INVALID);
        assert_int_equal(vl_clock_from_string("Monotonic"), TIMERD_CLOCK_INVALID);
        assert_int_equal(vl_policy_from_string("after"), TIMERD_POLICY_INVALID);
        assert_int_equal(vl_policy_from_string("once-"), TIMERD_POLICY_INVALID);
        assert_int_equal(vl_directive_from_string("stopp"), TIMERD_DIRECTIVE_INVALID);
}

static const struct {
        int error;
        const char *name;
} wire_errors[] = {
    {TIMERD_E_INVALID_PARAMETER, "org.varlink.service.InvalidParameter"},
    {TIMERD_E_METHOD_NOT_FOUND, "org.varlink.service.MethodNotFound"},
    {TIMERD_E_INTERFACE_NOT_FOUND, "org.varlink.service.InterfaceNotFound"},
    {TIMERD_E_EXPECTED_MORE, "org.varlink.service.ExpectedMore"},
    {TIMERD_E_PERMISSION_DENIED, "org.varlink.service.PermissionDenied"},
    {TIMERD_E_NOT_FOUND, "io.timerd.Timer.NotFound"},
    {TIMERD_E_ALREADY_REGISTERED, "io.timerd.Timer.AlreadyRegistered"},
    {TIMERD_E_REGISTRATION_EXPIRED, "io.timerd.Timer.RegistrationExpired"},
    {TIMERD_E_WRONG_POLICY, "io.timerd.Timer.WrongPolicy"},
    {TIMERD_E_RECONCILIATION_CONFLICT, "io.timerd.Timer.ReconciliationConflict"},
    {TIMERD_E_INVALID_NAME, "io.timerd.Timer.InvalidName"},
    {TIMERD_E_INVALID_SCHEDULE, "io.timerd.Timer.InvalidSchedule"},
    {TIMERD_E_OVERFLOW, "io.timerd.Timer.Overflow"},
    {TIMERD_E_UNSUPPORTED, "io.timerd.Timer.Unsupported"},
    {TIMERD_E_CLOCK_UNAVAILABLE, "io.timerd.Timer.ClockUnavailable"},
    {TIMERD_E_PROVIDER_BINDING_FAILED, "io.timerd.Timer.ProviderBindingFailed"},
    {TIMERD_E_LIMIT_EXCEEDED, "io.timerd.Timer.LimitExceeded"},
    {TIMERD_E_NOT_RUNNING, "io.timerd.Timer.NotRunning"},
    {TIMERD_E_TIMEOUT, "io.timerd.Timer.Timeout"},
    {TIMERD_E_SHUTTING_DOWN, "io.timerd.Timer.ShuttingDown"},
    {TIMERD_E_BUSY, "io.timerd.Timer.Busy"},
    {TIMERD_E_REQUEST_TOO_LARGE, "io.timerd.Timer.RequestTooLarge"},
    {TIMERD_E_INVALID_MESSAGE, "io.timerd.Timer.InvalidMessage"},
    {TIMERD_E_PROTOCOL_FAILURE, "io.timerd.Timer.ProtocolFailure"},
    {TIMERD_E_STORE_UNAVAILABLE, "io.timerd.Timer.StoreUnavailable"},
    {TIMERD_E_NOTHING_TO_WAIT_FOR, "io.timerd.Timer.NothingToWaitFor"},
    {TIMERD_E_SIGNAL_NOT_OUTSTANDING, "io.timerd.Timer.SignalNotOutstanding"},
};

static void error_names(void **state)
{
        static const int client_only[] = {TIMERD_E_DISCONNECTED, TIMERD_E_PROTOCOL,
                                          TIMERD_E_UNKNOWN_ERROR};

        (void)state;
        assert_int_equal(ELEMENTSOF(wire_errors) + ELEMENTSOF(client_only),
                         TIMERD_E_MAX - TIMERD_E_BASE);
        for (size_t i = 0; i < ELEMENTSOF(wire_errors); i++) {
                assert_string_equal(vl_error_to_name(wire_errors[i].error), wire_errors[i].name);
                assert_int_equal(vl_error_from_name(wire_errors[i].name), wire_errors[i].error);
        }
        for (size_t i = 0; i < ELEMENTSOF(client_only); i++)
                assert_null(vl_error_to_name(client_only[i]));
}

static void error_unknown(void **state)
{
        static const char *const unknown[] = {
            "",
            "NotFound",
            "io.timerd.Timer.Nope",
            "io.timerd.Timer.notfound",
            "io.timerd.Timer.NotFound.",
            "io.timerd.Service.NotFound",
            "org.varlink.service.MethodNotImplemented",
            "org.example.Failure",
        };
        static const int out_of_range[] = {
            0, -1, INT_MIN, INT_MAX, TIMERD_E_BASE - 1, TIMERD_E_MAX, -TIMERD_E_NOT_FOUND,
        };

        (void)state;
        for (size_t i = 0; i < ELEMENTSOF(unknown); i++)
                assert_int_equal(vl_error_from_name(unknown[i]), TIMERD_E_UNKNOWN_ERROR);
        assert_int_equal(vl_error_from_name(NULL), TIMERD_E_UNKNOWN_ERROR);
        for (size_t i = 0; i < ELEMENTSOF(out_of_range); i++) {
                assert_null(vl_error_to_name(out_of_range[i]));
                assert_null(vl_error_message(out_of_range[i]));
        }
}

static void error_messages(void **state)
{
        (void)state;
        for (int e = TIMERD_E_BASE; e < TIMERD_E_MAX; e++) {
                const char *m = vl_error_message(e);

                assert_non_null(m);
                assert_true(strlen(m) > 3);
                for (int other = TIMERD_E_BASE; other < e; other++)
                        assert_string_not_equal(m, vl_error_message(other));
        }
        assert_string_equal(vl_error_message(TIMERD_E_REGISTRATION_EXPIRED),
                            "the registration is no longer current (stale claim)");
}

/* Each "error Name" line of interface's description, one at a time from *cursor. */
static bool next_idl_error(const char **cursor, char *name, size_t size)
{
        const char *p = strstr(*cursor, "\nerror ");
        size_t len;

        if (!p)
                return false;
        p += strlen("\nerror ");
        len = strcspn(p, " (\n");
        assert_true(len > 0 && len < size);
        memcpy(name, p, len);
        name[len] = 0;
        *cursor = p + len;
        return true;
}

/* The errors the service sends are exactly the errors of io.timerd.Timer, and
 * org.varlink.service errors it sends are declared there. */
static void errors_match_idl(void **state)
{
        const char *cursor = vl_idl_lookup(VL_INTERFACE_TIMER);
        size_t timer_errors = 0, declared = 0;
        char name[128], qualified[256];

        (void)state;
        assert_non_null(cursor);
        while (next_idl_error(&cursor, name, sizeof(name))) {
                int e;

                snprintf(qualified, sizeof(qualified), "%s.%s", VL_INTERFACE_TIMER, name);
                e = vl_error_from_name(qualified);
                assert_true(e != TIMERD_E_UNKNOWN_ERROR);
                assert_string_equal(vl_error_to_name(e), qualified);
                declared++;
        }

        for (size_t i = 0; i < ELEMENTSOF(wire_errors); i++) {
                const char *n = wire_errors[i].name;
                const char *dot = strrchr(n, '.');
                char interface[64];
                bool found = false;

                assert_non_null(dot);
                assert_true((size_t)(dot - n) < sizeof(interface));
                memcpy(interface, n, (size_t)(dot - n));
                interface[dot - n] = 0;
                if (strcmp(interface, VL_INTERFACE_TIMER) == 0)
                        timer_errors++;

                cursor = vl_idl_lookup(interface);
                assert_non_null(cursor);
                while (!found && next_idl_error(&cursor, name, sizeof(name)))
                        found = strcmp(name, dot + 1) == 0;
                assert_true(found);
        }
        assert_int_equal(declared, timer_errors);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(enum_names),     cmocka_unit_test(enum_spellings),
            cmocka_unit_test(error_names),    cmocka_unit_test(error_unknown),
            cmocka_unit_test(error_messages), cmocka_unit_test(errors_match_idl),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
