/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * The timer of a Get or List reply, byte for byte: what api_timer_write() makes of a snapshot, as
 * the service writes it. The golden texts are what the service wrote before the timer's fields
 * became one table (base/timer-fields.h), and (timer-goldens.txt) before the reply was written
 * without a json-c tree; a reply that changes breaks clients that compare, so a change here must
 * be deliberate. libtimerd reads the same text back (tests/client covers its decoder).
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "service/api.h"
#include "service/core/calendar-timer.h"
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

/* The registry a snapshot is brought up to now by (an empty one, on a real clock). */
static struct registry *registry_make(void)
{
        const struct registry_config config = {.first_generation = 1, .first_handle_generation = 1};
        struct registry *r;

        assert_int_equal(registry_new(&config, &r), 0);
        return r;
}

static char *written_text(const struct td_snapshot *t, const struct td_now *now)
{
        struct registry *r = registry_make();
        struct vl_text o;

        vl_text_reply_begin(&o, false, 0);
        api_timer_write(&o, "timer", r, t, now);
        registry_free(r);
        return vl_text_reply_end(&o);
}

static void assert_reply(const struct td_snapshot *t, const struct td_now *now, const char *golden)
{
        char *text = written_text(t, now);

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

/* The schedules of the matrix: none, systemd lines, cron lines, both mixed. */
static const char *const calendar_sources[] = {
    NULL,
    "Mon..Fri *-*-* 09:00",
    "cron:*/5 * * * *",
    "*-*-01 00:00:00\ncron:0 12 * * 1\nSat,Sun 10:30",
};
#define N_CALENDARS (sizeof(calendar_sources) / sizeof(calendar_sources[0]))
#define N_MATRIX    120

static const struct td_zone utc = {.name = "UTC"};
static const char *goldens_path;
static const struct td_calendar *calendars[N_CALENDARS];

static void calendars_make(void)
{
        for (size_t i = 1; i < N_CALENDARS; i++) {
                struct td_calendar_error e;

                assert_int_equal(
                    td_calendar_new(NULL, calendar_sources[i], &utc, i % 2 == 0, &calendars[i], &e),
                    0);
        }
}

static void calendars_free(void)
{
        for (size_t i = 1; i < N_CALENDARS; i++)
                td_calendar_unref(calendars[i]);
}

/*
 * Case i of the matrix: each enum walks through all its values at its own pace, every optional
 * field is there or not by a bit of i, so that the cases hold every value of every field, and
 * every policy with and without a calendar.
 */
static void matrix_timer(unsigned i, struct td_snapshot *t, struct td_now *now)
{
        static const char *const names[] = {"a", "backup.daily", "x:y@z-1_2", "Z9"};
        uint64_t k = i + 1;

        *t = (struct td_snapshot){
            .owner = (uint32_t)(i % 3 == 0 ? 0 : 1000 + i),
            .declaration =
                {
                    .policy = (enum timerd_policy)(i % TIMERD_POLICY_MAX),
                    .cadence_usec = i % 2 ? 0 : k * 1000003,
                    .clock = (enum timerd_clock)(i % TIMERD_CLOCK_MAX),
                    .lifetime = (enum timerd_lifetime)(i / 2 % TIMERD_LIFETIME_MAX),
                    .delivery = (enum timerd_delivery)(i / 3 % TIMERD_DELIVERY_MAX),
                    .accuracy_usec = i % 4 ? k * 7 : 0,
                    .signo = (int)(1 + i % 31),
                    .catch_up = i % 5 != 0,
                    .randomized_delay_usec = i % 6 ? 0 : k * 1000,
                    .handover_usec = i % 7 ? 0 : k * 11,
                    .calendar = calendars[i / 5 % N_CALENDARS],
                },
            .generation = k * 3,
            .state = (enum timerd_state)(i % TIMERD_STATE_MAX),
            .failure = (enum timerd_failure)(i / 4 % TIMERD_FAILURE_MAX),
            .has_deadline = i % 3 != 1,
            .next_deadline_usec = k * 999983,
            .run = i % 9,
            .run_active = i % 8 == 3,
            .pending = i % 10 == 4,
            .runs = k * 5,
            .consecutive_expected_failures = i % 4,
            .overruns = i % 11,
            .has_last_start = i % 2 == 1,
            .last_start_usec = k * 1234567,
            .has_last_finish = i % 4 == 1,
            .last_finish_usec = k * 1234577,
            .last_catch_up = i % 3 == 2,
            .last_outcome = (enum timerd_outcome)(i / 2 % TIMERD_OUTCOME_MAX),
            .last_duration_usec = k * 10,
            .total_duration_usec = k * 100,
            .last_end = {.exit = (enum timerd_exit)(i / 3 % TIMERD_EXIT_MAX),
                         .code = (int)(i % 256)},
            .live_cadence_usec = i % 2 ? k * 1000 : 0,
        };
        snprintf(t->name, sizeof(t->name), "%s%u", names[i % 4], i);
        *now = (struct td_now){0};
        for (int c = 0; c < TIMERD_CLOCK_MAX; c++)
                now->usec[c] = k * 999983 + (i % 2 ? 1000 : 0) - (i % 3 ? 0 : 500);
}

/* Every case of the matrix is the line of timer-goldens.txt (written by the tree encoder this
 * one replaced, commit 351c026) of its number. */
static void test_matrix(void **state)
{
        FILE *f = fopen(goldens_path, "re");
        char *line = NULL;
        size_t size = 0;

        (void)state;
        assert_non_null(f);
        calendars_make();
        for (unsigned i = 0; i < N_MATRIX; i++) {
                struct td_snapshot t;
                struct td_now now;
                ssize_t n = getline(&line, &size, f);

                assert_true(n > 1);
                line[n - 1] = 0;
                matrix_timer(i, &t, &now);
                char *text = written_text(&t, &now);
                assert_non_null(text);
                assert_string_equal(text, line);
                free(text);
        }
        assert_int_equal(getline(&line, &size, f), -1);
        calendars_free();
        free(line);
        fclose(f);
}

/* A List page's timers are elements of an array, each as a Get's timer. */
static void test_list_elements(void **state)
{
        struct vl_text o;
        struct td_snapshot t;
        struct td_now now;

        struct registry *r = registry_make();

        (void)state;
        calendars_make();
        vl_text_reply_begin(&o, false, 0);
        vl_text_array_begin(&o, "timers");
        for (unsigned i = 0; i < 3; i++) {
                matrix_timer(i + 4, &t, &now);
                api_timer_write(&o, NULL, r, &t, &now);
        }
        vl_text_array_end(&o);
        registry_free(r);
        char *list = vl_text_reply_end(&o);
        assert_non_null(list);
        char *expected = NULL;
        size_t len = 0;
        FILE *m = open_memstream(&expected, &len);
        assert_non_null(m);
        fputs("{\"parameters\":{\"timers\":[", m);
        for (unsigned i = 0; i < 3; i++) {
                matrix_timer(i + 4, &t, &now);
                char *one = written_text(&t, &now);
                const char *body = one + strlen("{\"parameters\":{\"timer\":");
                fprintf(m, "%s%.*s", i ? "," : "", (int)(strlen(body) - 2), body);
                free(one);
        }
        fputs("]}}", m);
        fclose(m);
        assert_string_equal(list, expected);
        free(list);
        free(expected);
        calendars_free();
}

int main(int argc, char **argv)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_full_timer),
            cmocka_unit_test(test_bare_timer),
            cmocka_unit_test(test_matrix),
            cmocka_unit_test(test_list_elements),
        };

        if (argc != 2) {
                fprintf(stderr, "usage: %s GOLDENS\n", argv[0]);
                return 2;
        }
        goldens_path = argv[1];
        return cmocka_run_group_tests(tests, NULL, NULL);
}
