/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * The timer of a Get reply, byte for byte: what api_timer_json() makes of a snapshot, as the
 * service writes it. The golden texts are what the service wrote before the timer's fields became
 * one table (base/timer-fields.h); a reply that changes breaks clients that compare, so a change
 * here must be deliberate. libtimerd reads the same text back (tests/client covers its decoder).
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>

#include <cmocka.h>

#include "service/api.h"
#include "varlink/message.h"

/* Written by the encoder of commit 28308fb. */
static const char GOLDEN_FULL[] =
    "{\"parameters\":{\"timer\":{\"owner\":1000,\"name\":\"backup\",\"declaration\":{\"po"
    "licy\":\"interval\",\"cadence_usec\":300000000,\"clock\":\"boottime_alarm\",\"lifeti"
    "me\":\"retained\",\"delivery\":\"signal\",\"accuracy_usec\":1000,\"signal\":12,\"cat"
    "ch_up\":false,\"randomized_delay_usec\":60000000,\"handover_usec\":2000},\"generatio"
    "n\":3,\"state\":\"failed\",\"failure\":\"provider_binding\",\"next_usec\":5000000,\""
    "remaining_usec\":250000,\"run\":7,\"run_active\":true,\"pending\":true,\"runs\":6,\""
    "consecutive_expected_failures\":2,\"overruns\":5,\"live_cadence_usec\":600000000,\"l"
    "ast_start_usec\":4000001,\"last_catch_up\":true,\"last_finish_usec\":4100000,\"last_"
    "outcome\":\"expected_failure\",\"last_duration_usec\":100000,\"total_duration_usec\""
    ":900000,\"last_result\":{\"exit\":\"signaled\",\"code\":9}}}}";
static const char GOLDEN_BARE[] =
    "{\"parameters\":{\"timer\":{\"owner\":0,\"name\":\"once\",\"declaration\":{\"policy\""
    ":\"once\",\"cadence_usec\":0,\"clock\":\"monotonic\",\"lifetime\":\"transient\",\"de"
    "livery\":\"notify\",\"accuracy_usec\":0,\"catch_up\":true,\"randomized_delay_usec\":"
    "0,\"handover_usec\":0},\"generation\":1,\"state\":\"inactive\",\"run\":0,\"run_activ"
    "e\":false,\"pending\":false,\"runs\":0,\"consecutive_expected_failures\":0,\"overrun"
    "s\":0,\"live_cadence_usec\":0,\"last_duration_usec\":0,\"total_duration_usec\":0}}}";

static void assert_reply(const struct td_snapshot *t, const struct td_now *now, const char *golden)
{
        const struct registry_config config = {.first_generation = 1, .first_handle_generation = 1};
        json_object *reply = json_object_new_object();
        struct registry *r;
        char *text;

        assert_non_null(reply);
        assert_int_equal(registry_new(&config, &r), 0);
        assert_int_equal(vl_add_object(reply, "timer", api_timer_json(r, t, now)), 0);
        registry_free(r);
        text = vl_reply_encode(reply, false); /* takes reply */
        assert_non_null(text);
        assert_string_equal(text, golden);
        free(text);
}

/* Every field set, each to a value of its own. */
static void test_full_timer(void **state)
{
        const struct td_now now = {.usec = {[TIMERD_CLOCK_BOOTTIME_ALARM] = 4750000}};
        struct td_snapshot t = {
            .owner = 1000,
            .name = "backup",
            .declaration =
                {
                    .policy = TIMERD_POLICY_INTERVAL,
                    .cadence_usec = 300000000,
                    .clock = TIMERD_CLOCK_BOOTTIME_ALARM,
                    .lifetime = TIMERD_LIFETIME_RETAINED,
                    .delivery = TIMERD_DELIVERY_SIGNAL,
                    .accuracy_usec = 1000,
                    .signo = 12,
                    .catch_up = false,
                    .randomized_delay_usec = 60000000,
                    .handover_usec = 2000,
                },
            .generation = 3,
            .state = TIMERD_STATE_FAILED,
            .failure = TIMERD_FAILURE_PROVIDER_BINDING,
            .has_deadline = true,
            .next_deadline_usec = 5000000,
            .run = 7,
            .run_active = true,
            .pending = true,
            .run_deadline_usec = 4000000,
            .run_cancelled = true,
            .runs = 6,
            .consecutive_expected_failures = 2,
            .overruns = 5,
            .has_last_start = true,
            .last_start_usec = 4000001,
            .has_last_finish = true,
            .last_finish_usec = 4100000,
            .last_catch_up = true,
            .last_outcome = TIMERD_OUTCOME_EXPECTED_FAILURE,
            .last_duration_usec = 100000,
            .total_duration_usec = 900000,
            .last_end = {.exit = TIMERD_EXIT_SIGNALED, .code = 9},
            .live_cadence_usec = 600000000,
            .session = 44,
        };

        (void)state;
        assert_reply(&t, &now, GOLDEN_FULL);
}

/* Nothing optional: what a once timer that never ran shows. */
static void test_bare_timer(void **state)
{
        const struct td_now now = {.usec = {0}};
        struct td_snapshot t = {
            .owner = 0,
            .name = "once",
            .declaration = {.policy = TIMERD_POLICY_ONCE, .catch_up = true},
            .generation = 1,
            .state = TIMERD_STATE_INACTIVE,
        };

        (void)state;
        assert_reply(&t, &now, GOLDEN_BARE);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_full_timer),
            cmocka_unit_test(test_bare_timer),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
