/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libtimerd's public names of the enums' values: the words a tool prints and parses, the same as
 * the service's (timerctl uses these and nothing else).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "timerd/timerd.h"

#define ELEMENTSOF(a) (sizeof(a) / sizeof((a)[0]))

/* The spelling with '-' for '_' ("after-completion"), in buf. */
static const char *hyphenated(const char *s, char *buf, size_t size)
{
        size_t len = strlen(s);

        assert_true(len < size);
        for (size_t i = 0; i <= len; i++)
                buf[i] = s[i] == '_' ? '-' : s[i];
        return buf;
}

/* Each value's name is the expected one and reads back, also hyphenated; nothing else does. */
#define ASSERT_NAMES(name, max, ...)                                                               \
        do {                                                                                       \
                static const char *const expected[] = {__VA_ARGS__};                               \
                char buf[64];                                                                      \
                                                                                                   \
                assert_int_equal(ELEMENTSOF(expected), (max));                                     \
                for (size_t i = 0; i < ELEMENTSOF(expected); i++) {                                \
                        const char *s = timerd_##name##_to_string((enum timerd_##name)i);          \
                                                                                                   \
                        assert_non_null(s);                                                        \
                        assert_string_equal(s, expected[i]);                                       \
                        assert_int_equal(timerd_##name##_from_string(s), i);                       \
                        assert_int_equal(                                                          \
                            timerd_##name##_from_string(hyphenated(s, buf, sizeof(buf))), i);      \
                }                                                                                  \
                assert_null(timerd_##name##_to_string((enum timerd_##name)(max)));                 \
                assert_null(timerd_##name##_to_string((enum timerd_##name) - 1));                  \
                assert_int_equal(timerd_##name##_from_string(NULL), -1);                           \
                assert_int_equal(timerd_##name##_from_string(""), -1);                             \
                assert_int_equal(timerd_##name##_from_string("no_such_name"), -1);                 \
        } while (0)

static void test_enum_names(void **state)
{
        (void)state;
        ASSERT_NAMES(clock, TIMERD_CLOCK_MAX, "monotonic", "boottime", "realtime", "boottime_alarm",
                     "realtime_alarm");
        ASSERT_NAMES(policy, TIMERD_POLICY_MAX, "once", "after_completion", "watchdog", "interval",
                     "calendar");
        ASSERT_NAMES(lifetime, TIMERD_LIFETIME_MAX, "transient", "retained");
        ASSERT_NAMES(delivery, TIMERD_DELIVERY_MAX, "notify", "alarm", "signal");
        ASSERT_NAMES(state, TIMERD_STATE_MAX, "inactive", "scheduled", "running", "failed");
        ASSERT_NAMES(outcome, TIMERD_OUTCOME_MAX, "none", "success", "expected_failure",
                     "invariant_failure");
        ASSERT_NAMES(exit, TIMERD_EXIT_MAX, "none", "exited", "signaled", "timed_out",
                     "interrupted");
        ASSERT_NAMES(directive, TIMERD_DIRECTIVE_MAX, "continue", "stop");
        ASSERT_NAMES(failure, TIMERD_FAILURE_MAX, "none", "invariant", "provider_binding",
                     "overflow", "target_gone", "signal_refused");
        ASSERT_NAMES(desired, TIMERD_DESIRED_MAX, "inactive", "scheduled", "exact");
}

/* A name matches whole, as spelled: no prefix, no trailing character, no other case. */
static void test_enum_names_exact(void **state)
{
        (void)state;
        assert_int_equal(timerd_policy_from_string("after"), TIMERD_POLICY_INVALID);
        assert_int_equal(timerd_policy_from_string("once-"), TIMERD_POLICY_INVALID);
        assert_int_equal(timerd_clock_from_string("Monotonic"), TIMERD_CLOCK_INVALID);
        assert_int_equal(timerd_clock_from_string("boottime alarm"), TIMERD_CLOCK_INVALID);
        assert_int_equal(timerd_outcome_from_string("expected-failure "), TIMERD_OUTCOME_INVALID);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_enum_names),
            cmocka_unit_test(test_enum_names_exact),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
