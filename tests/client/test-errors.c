/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Every error the IDL names comes back from libtimerd as its own -TIMERD_E_* code, with its name
 * kept for timerd_last_error_name(); a name the library does not know still fails the call.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "fake-server.h"
#include "timerd/timerd.h"

#define ELEMENTSOF(a) (sizeof(a) / sizeof((a)[0]))

struct wire_error {
        const char *name;
        int code;
};

/* Spelled out here rather than taken from the codec's table, so a typo there is caught. */
static const struct wire_error wire_errors[] = {
    {"org.varlink.service.InvalidParameter", TIMERD_E_INVALID_PARAMETER},
    {"org.varlink.service.MethodNotFound", TIMERD_E_METHOD_NOT_FOUND},
    {"org.varlink.service.InterfaceNotFound", TIMERD_E_INTERFACE_NOT_FOUND},
    {"org.varlink.service.ExpectedMore", TIMERD_E_EXPECTED_MORE},
    {"org.varlink.service.PermissionDenied", TIMERD_E_PERMISSION_DENIED},
    {"io.timerd.Timer.NotFound", TIMERD_E_NOT_FOUND},
    {"io.timerd.Timer.AlreadyRegistered", TIMERD_E_ALREADY_REGISTERED},
    {"io.timerd.Timer.RegistrationExpired", TIMERD_E_REGISTRATION_EXPIRED},
    {"io.timerd.Timer.WrongPolicy", TIMERD_E_WRONG_POLICY},
    {"io.timerd.Timer.ReconciliationConflict", TIMERD_E_RECONCILIATION_CONFLICT},
    {"io.timerd.Timer.InvalidName", TIMERD_E_INVALID_NAME},
    {"io.timerd.Timer.InvalidSchedule", TIMERD_E_INVALID_SCHEDULE},
    {"io.timerd.Timer.Overflow", TIMERD_E_OVERFLOW},
    {"io.timerd.Timer.Unsupported", TIMERD_E_UNSUPPORTED},
    {"io.timerd.Timer.ClockUnavailable", TIMERD_E_CLOCK_UNAVAILABLE},
    {"io.timerd.Timer.ProviderBindingFailed", TIMERD_E_PROVIDER_BINDING_FAILED},
    {"io.timerd.Timer.LimitExceeded", TIMERD_E_LIMIT_EXCEEDED},
    {"io.timerd.Timer.NotRunning", TIMERD_E_NOT_RUNNING},
    {"io.timerd.Timer.Timeout", TIMERD_E_TIMEOUT},
    {"io.timerd.Timer.ShuttingDown", TIMERD_E_SHUTTING_DOWN},
    {"io.timerd.Timer.Busy", TIMERD_E_BUSY},
    {"io.timerd.Timer.RequestTooLarge", TIMERD_E_REQUEST_TOO_LARGE},
    {"io.timerd.Timer.InvalidMessage", TIMERD_E_INVALID_MESSAGE},
    {"io.timerd.Timer.ProtocolFailure", TIMERD_E_PROTOCOL_FAILURE},
    {"io.timerd.Timer.StoreUnavailable", TIMERD_E_STORE_UNAVAILABLE},
    {"io.timerd.Timer.NothingToWaitFor", TIMERD_E_NOTHING_TO_WAIT_FOR},
    {"io.timerd.Timer.SignalNotOutstanding", TIMERD_E_SIGNAL_NOT_OUTSTANDING},
    {"com.example.Unheard.Of", TIMERD_E_UNKNOWN_ERROR},
};

static void test_every_error_mapped(void **state)
{
        struct fake_step steps[2 * ELEMENTSOF(wire_errors)];
        char *replies[ELEMENTSOF(wire_errors)];
        struct timerd_claim claim = {.name = "a", .generation = 1};
        struct fake_server *s;
        struct timerd *t = NULL;

        (void)state;
        for (size_t i = 0; i < ELEMENTSOF(wire_errors); i++) {
                assert_true(asprintf(&replies[i], "{\"error\":\"%s\",\"parameters\":{}}",
                                     wire_errors[i].name) > 0);
                steps[2 * i] = (struct fake_step)FAKE_ANY_CALL;
                steps[2 * i + 1] = (struct fake_step)FAKE_REPLY(replies[i]);
        }
        s = fake_server_start(steps, ELEMENTSOF(steps));
        assert_int_equal(timerd_connect(fake_server_path(s), &t), 0);

        for (size_t i = 0; i < ELEMENTSOF(wire_errors); i++) {
                int r = timerd_cancel(t, &claim, NULL);

                if (r != -wire_errors[i].code)
                        fail_msg("%s: got %d, expected %d", wire_errors[i].name, r,
                                 -wire_errors[i].code);
                assert_string_equal(timerd_last_error_name(t), wire_errors[i].name);
        }

        timerd_close(t);
        fake_server_finish(s);
        for (size_t i = 0; i < ELEMENTSOF(wire_errors); i++)
                free(replies[i]);
}

/* A LimitExceeded's limit and max are kept with its name; the next answer replaces or clears
 * them; a LimitExceeded without both, and another error with a max, give none. */
static void test_limit_detail(void **state)
{
        static const char *const replies[] = {
            "{\"error\":\"io.timerd.Timer.LimitExceeded\",\"parameters\":"
            "{\"limit\":\"timers_share\",\"max\":5}}",
            "{\"error\":\"io.timerd.Timer.LimitExceeded\",\"parameters\":"
            "{\"limit\":\"parked_per_owner\",\"max\":65536}}",
            "{\"parameters\":{}}",
            "{\"error\":\"io.timerd.Timer.LimitExceeded\",\"parameters\":"
            "{\"limit\":\"timers\",\"max\":40}}",
            "{\"error\":\"io.timerd.Timer.RequestTooLarge\",\"parameters\":{\"max\":256}}",
            "{\"error\":\"io.timerd.Timer.LimitExceeded\",\"parameters\":"
            "{\"limit\":\"timers\"}}",
        };
        struct fake_step steps[2 * ELEMENTSOF(replies)];
        struct timerd_claim claim = {.name = "a", .generation = 1};
        struct fake_server *s;
        struct timerd *t = NULL;
        uint64_t max = 0;

        (void)state;
        for (size_t i = 0; i < ELEMENTSOF(replies); i++) {
                steps[2 * i] = (struct fake_step)FAKE_ANY_CALL;
                steps[2 * i + 1] = (struct fake_step)FAKE_REPLY(replies[i]);
        }
        s = fake_server_start(steps, ELEMENTSOF(steps));
        assert_int_equal(timerd_connect(fake_server_path(s), &t), 0);
        assert_null(timerd_last_error_limit(t, &max));
        assert_null(timerd_last_error_limit(NULL, &max));

        assert_int_equal(timerd_cancel(t, &claim, NULL), -TIMERD_E_LIMIT_EXCEEDED);
        assert_string_equal(timerd_last_error_limit(t, &max), "timers_share");
        assert_int_equal(max, 5);
        assert_string_equal(timerd_last_error_limit(t, NULL), "timers_share");

        assert_int_equal(timerd_cancel(t, &claim, NULL), -TIMERD_E_LIMIT_EXCEEDED);
        assert_string_equal(timerd_last_error_limit(t, &max), "parked_per_owner");
        assert_int_equal(max, 65536);

        assert_int_equal(timerd_cancel(t, &claim, NULL), 0);
        max = 7;
        assert_null(timerd_last_error_limit(t, &max));
        assert_int_equal(max, 7);

        assert_int_equal(timerd_cancel(t, &claim, NULL), -TIMERD_E_LIMIT_EXCEEDED);
        assert_string_equal(timerd_last_error_limit(t, &max), "timers");
        assert_int_equal(max, 40);

        assert_int_equal(timerd_cancel(t, &claim, NULL), -TIMERD_E_REQUEST_TOO_LARGE);
        assert_null(timerd_last_error_limit(t, &max));

        assert_int_equal(timerd_cancel(t, &claim, NULL), -TIMERD_E_LIMIT_EXCEEDED);
        assert_null(timerd_last_error_limit(t, &max));

        timerd_close(t);
        fake_server_finish(s);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_every_error_mapped),
            cmocka_unit_test(test_limit_detail),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
