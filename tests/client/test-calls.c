/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Each libtimerd call against a scripted service: the call it sends (method and parameters as the
 * IDL spells them) and how it decodes the reply, including replies that break the IDL.
 */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "fake-server.h"
#include "timerd/timerd.h"

#define ELEMENTSOF(a) (sizeof(a) / sizeof((a)[0]))

#define EMPTY_REPLY "{\"parameters\":{}}"
#define CLAIM_A     "{\"name\":\"a\",\"generation\":4}"
#define TOKEN_A     "{\"name\":\"a\",\"generation\":4,\"run\":9}"

/* Every field of a Timer, optional ones included. */
#define FULL_TIMER                                                                                 \
        "{\"owner\":1000,\"name\":\"backup\",\"declaration\":{\"policy\":\"interval\","            \
        "\"cadence_usec\":300000000,\"clock\":\"boottime_alarm\",\"lifetime\":\"retained\","       \
        "\"delivery\":\"signal\",\"accuracy_usec\":1000,\"signal\":12,\"catch_up\":false,"         \
        "\"randomized_delay_usec\":60000000,\"handover_usec\":2000},\"generation\":3,"             \
        "\"state\":\"failed\",\"failure\":\"provider_binding\",\"next_usec\":5000000,"             \
        "\"remaining_usec\":250000,"                                                               \
        "\"run\":7,\"run_active\":true,\"pending\":true,\"runs\":12,"                              \
        "\"consecutive_expected_failures\":2,\"overruns\":5,\"last_start_usec\":4000000,"          \
        "\"last_finish_usec\":4100000,\"last_outcome\":\"expected_failure\","                      \
        "\"last_duration_usec\":100000,\"total_duration_usec\":900000}"

/* Only the required fields. */
#define BARE_TIMER(name)                                                                           \
        "{\"owner\":0,\"name\":\"" name "\",\"declaration\":{\"policy\":\"once\"},"                \
        "\"generation\":1,\"state\":\"inactive\",\"run\":0,\"run_active\":false,"                  \
        "\"pending\":false,\"runs\":0,\"consecutive_expected_failures\":0,\"overruns\":0,"         \
        "\"last_duration_usec\":0,\"total_duration_usec\":0}"

#define FIRING                                                                                     \
        "{\"token\":" TOKEN_A ",\"clock\":\"realtime\",\"deadline_usec\":100,\"fired_usec\":105,"  \
        "\"overruns\":1}"

#define STATUS_REPLY                                                                               \
        "{\"parameters\":{\"epoch\":\"b1d-17-1\",\"version\":\"0.1.0\",\"backend\":\"io_uring\","  \
        "\"backend_reason\":\"\",\"pid\":42,\"uptime_usec\":1000,\"timers\":5,\"scheduled\":3,"    \
        "\"running\":1,\"failed\":1,\"pending\":2,\"connections\":4,\"waiters\":1,"                \
        "\"clock_changes\":6,\"iterations\":700,\"wakeups\":600,\"firings\":50,\"overruns\":7,"    \
        "\"stale_expiries\":8,\"slowest_iteration_usec\":900,\"lateness\":{\"samples\":50,"        \
        "\"p50_usec\":10,\"p99_usec\":250,\"max_usec\":1000},\"store\":\"ok\"}}"

static struct timerd *start(const struct fake_step *steps, size_t n_steps,
                            struct fake_server **ret_server)
{
        struct timerd *t = NULL;

        *ret_server = fake_server_start(steps, n_steps);
        assert_int_equal(timerd_connect(fake_server_path(*ret_server), &t), 0);
        return t;
}

#define START(script, server) start((script), ELEMENTSOF(script), (server))

static void finish(struct timerd *t, struct fake_server *s)
{
        timerd_close(t);
        fake_server_finish(s);
}

static const struct fake_step register_script[] = {
    FAKE_CALL("{\"method\":\"io.timerd.Timer.Register\",\"parameters\":{\"name\":\"a\","
              "\"declaration\":{\"policy\":\"interval\",\"cadence_usec\":5000000,"
              "\"clock\":\"boottime\",\"lifetime\":\"retained\",\"delivery\":\"signal\","
              "\"accuracy_usec\":1000},\"start_usec\":123,\"replace\":true}}"),
    FAKE_REPLY("{\"parameters\":{\"claim\":" CLAIM_A "}}"),
    /* The defaults: optional integers at 0, the monotonic clock, a transient lifetime and notify
     * delivery are left out. */
    FAKE_CALL("{\"method\":\"io.timerd.Timer.Register\","
              "\"parameters\":{\"name\":\"b\",\"declaration\":{\"policy\":\"once\","
              "\"handover_usec\":1000}}}"),
    FAKE_REPLY("{\"parameters\":{\"claim\":{\"name\":\"b\",\"generation\":1}}}"),
    FAKE_CALL("{\"method\":\"io.timerd.Timer.Register\","
              "\"parameters\":{\"name\":\"c\",\"declaration\":{\"policy\":\"once\","
              "\"handover_usec\":1000},\"delay_usec\":7}}"),
    FAKE_REPLY("{\"parameters\":{\"claim\":{\"name\":\"c\",\"generation\":2}}}"),
    /* Catching up is the default; only its absence is said. */
    FAKE_CALL("{\"method\":\"io.timerd.Timer.Register\","
              "\"parameters\":{\"name\":\"d\",\"declaration\":{\"policy\":\"once\","
              "\"lifetime\":\"retained\",\"delivery\":\"signal\",\"signal\":10,"
              "\"catch_up\":false,\"randomized_delay_usec\":5000000}}}"),
    FAKE_REPLY("{\"parameters\":{\"claim\":{\"name\":\"d\",\"generation\":1}}}"),
    FAKE_CALL("{\"method\":\"io.timerd.Timer.Register\","
              "\"parameters\":{\"name\":\"e\",\"declaration\":{\"policy\":\"once\","
              "\"handover_usec\":1500}}}"),
    FAKE_REPLY("{\"parameters\":{\"claim\":{\"name\":\"e\",\"generation\":1}}}"),
    /* The default handover only where it is valid: not for a cadence of 1 ms or less, nor for
     * another delivery; 0 opts out. */
    FAKE_CALL("{\"method\":\"io.timerd.Timer.Register\","
              "\"parameters\":{\"name\":\"f\","
              "\"declaration\":{\"policy\":\"interval\",\"cadence_usec\":1000}}}"),
    FAKE_REPLY("{\"parameters\":{\"claim\":{\"name\":\"f\",\"generation\":1}}}"),
    FAKE_CALL("{\"method\":\"io.timerd.Timer.Register\","
              "\"parameters\":{\"name\":\"g\","
              "\"declaration\":{\"policy\":\"interval\",\"cadence_usec\":1001,"
              "\"handover_usec\":1000}}}"),
    FAKE_REPLY("{\"parameters\":{\"claim\":{\"name\":\"g\",\"generation\":1}}}"),
    FAKE_CALL("{\"method\":\"io.timerd.Timer.Register\","
              "\"parameters\":{\"name\":\"h\","
              "\"declaration\":{\"policy\":\"interval\",\"cadence_usec\":1001,"
              "\"delivery\":\"alarm\"}}}"),
    FAKE_REPLY("{\"parameters\":{\"claim\":{\"name\":\"h\",\"generation\":1}}}"),
    FAKE_CALL("{\"method\":\"io.timerd.Timer.Register\","
              "\"parameters\":{\"name\":\"i\",\"declaration\":{\"policy\":\"once\"}}}"),
    FAKE_REPLY("{\"parameters\":{\"claim\":{\"name\":\"i\",\"generation\":1}}}"),
};

static void test_register(void **state)
{
        struct timerd_declaration d;
        struct timerd_claim claim;
        struct fake_server *s;
        struct timerd *t = START(register_script, &s);

        (void)state;
        timerd_declaration_init(&d, TIMERD_POLICY_INTERVAL, 5000000);
        d.clock = TIMERD_CLOCK_BOOTTIME;
        d.lifetime = TIMERD_LIFETIME_RETAINED;
        d.delivery = TIMERD_DELIVERY_SIGNAL;
        d.accuracy_usec = 1000;
        assert_int_equal(
            timerd_register(t, "a", &d, &(struct timerd_start){TIMERD_START_AT, 123}, true, &claim),
            0);
        assert_string_equal(claim.name, "a");
        assert_int_equal(claim.generation, 4);

        timerd_declaration_init(&d, TIMERD_POLICY_ONCE, 0);
        assert_int_equal(timerd_register(t, "b", &d, NULL, false, &claim), 0);
        assert_string_equal(claim.name, "b");
        assert_int_equal(claim.generation, 1);

        assert_int_equal(timerd_register(t, "c", &d, &(struct timerd_start){TIMERD_START_AFTER, 7},
                                         false, &claim),
                         0);
        assert_int_equal(claim.generation, 2);

        d.lifetime = TIMERD_LIFETIME_RETAINED;
        d.delivery = TIMERD_DELIVERY_SIGNAL;
        d.signal = 10;
        d.catch_up = false;
        d.randomized_delay_usec = 5000000;
        assert_int_equal(timerd_register(t, "d", &d, NULL, false, &claim), 0);
        d.signal = -1;
        assert_int_equal(timerd_register(t, "d", &d, NULL, false, &claim), -EINVAL);

        timerd_declaration_init(&d, TIMERD_POLICY_ONCE, 0);
        assert_true(d.handover_usec == TIMERD_HANDOVER_DEFAULT);
        d.handover_usec = 1500;
        assert_int_equal(timerd_register(t, "e", &d, NULL, false, &claim), 0);

        timerd_declaration_init(&d, TIMERD_POLICY_INTERVAL, TIMERD_HANDOVER_DEFAULT_USEC);
        assert_int_equal(timerd_register(t, "f", &d, NULL, false, &claim), 0);
        timerd_declaration_init(&d, TIMERD_POLICY_INTERVAL, TIMERD_HANDOVER_DEFAULT_USEC + 1);
        assert_int_equal(timerd_register(t, "g", &d, NULL, false, &claim), 0);
        d.delivery = TIMERD_DELIVERY_ALARM;
        assert_int_equal(timerd_register(t, "h", &d, NULL, false, &claim), 0);
        timerd_declaration_init(&d, TIMERD_POLICY_ONCE, 0);
        d.handover_usec = 0;
        assert_int_equal(timerd_register(t, "i", &d, NULL, false, &claim), 0);
        finish(t, s);
}

static const struct fake_step register_bad_reply_script[] = {
    FAKE_ANY_CALL,
    FAKE_REPLY(EMPTY_REPLY),
    FAKE_ANY_CALL,
    FAKE_REPLY("{\"parameters\":{\"claim\":{\"name\":\"a\"}}}"),
    FAKE_ANY_CALL,
    /* 129 bytes: longer than any timer name, it cannot be held. */
    FAKE_REPLY("{\"parameters\":{\"claim\":{\"name\":\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
               "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
               "aaaaaaaaaaaaaa\",\"generation\":1}}}"),
    FAKE_ANY_CALL,
    FAKE_REPLY("{\"parameters\":{\"claim\":{\"name\":\"a\",\"generation\":-1}}}"),
};

static void test_register_bad_reply(void **state)
{
        struct timerd_declaration d;
        struct timerd_claim claim;
        struct fake_server *s;
        struct timerd *t = START(register_bad_reply_script, &s);

        (void)state;
        timerd_declaration_init(&d, TIMERD_POLICY_ONCE, 0);
        for (int i = 0; i < 4; i++)
                assert_int_equal(timerd_register(t, "a", &d, NULL, false, &claim),
                                 -TIMERD_E_PROTOCOL);
        finish(t, s);
}

static const struct fake_step nothing_script[] = {
    FAKE_CLOSE,
};

/* Arguments the protocol cannot carry are refused before anything is sent. */
static void test_bad_arguments(void **state)
{
        struct timerd_claim claim = {.name = "a", .generation = 1};
        struct timerd_token token = {.name = "a", .generation = 1, .run = 1};
        struct timerd_start at = {TIMERD_START_AT, 5}, deflt = {TIMERD_START_DEFAULT, 0};
        struct timerd_declaration d, bad;
        struct timerd_firing firing;
        struct timerd_timer timer, *timers;
        struct fake_server *s;
        struct timerd *t = START(nothing_script, &s);

        (void)state;
        fake_server_join(s);
        timerd_declaration_init(&d, TIMERD_POLICY_ONCE, 0);
        assert_int_equal(timerd_register(t, NULL, &d, NULL, false, &claim), -EINVAL);
        assert_int_equal(timerd_register(t, "a", NULL, NULL, false, &claim), -EINVAL);
        assert_int_equal(timerd_register(t, "a", &d, NULL, false, NULL), -EINVAL);
        assert_int_equal(timerd_register(NULL, "a", &d, NULL, false, &claim), -EINVAL);
        assert_int_equal(
            timerd_register(t, "a", &d, &(struct timerd_start){.kind = 7}, false, &claim), -EINVAL);
        bad = d;
        bad.clock = TIMERD_CLOCK_MAX;
        assert_int_equal(timerd_register(t, "a", &bad, NULL, false, &claim), -EINVAL);
        bad = d;
        bad.policy = TIMERD_POLICY_INVALID;
        assert_int_equal(timerd_register(t, "a", &bad, NULL, false, &claim), -EINVAL);
        bad = d;
        bad.lifetime = TIMERD_LIFETIME_MAX;
        assert_int_equal(timerd_register(t, "a", &bad, NULL, false, &claim), -EINVAL);
        bad = d;
        bad.delivery = TIMERD_DELIVERY_MAX;
        assert_int_equal(timerd_register(t, "a", &bad, NULL, false, &claim), -EINVAL);
        assert_int_equal(timerd_reconcile(t, "a", &d, TIMERD_DESIRED_MAX, 0, &claim, NULL),
                         -EINVAL);

        /* Control calls act through exactly one of claim and token. */
        assert_int_equal(timerd_schedule(t, NULL, NULL, &at), -EINVAL);
        assert_int_equal(timerd_schedule(t, &claim, &token, &at), -EINVAL);
        assert_int_equal(timerd_schedule(t, &claim, NULL, &deflt), -EINVAL);
        assert_int_equal(timerd_schedule(t, &claim, NULL, NULL), -EINVAL);
        assert_int_equal(timerd_reschedule(t, &claim, NULL, &deflt, 0, NULL, NULL), -EINVAL);
        assert_int_equal(timerd_cancel(t, NULL, NULL), -EINVAL);
        assert_int_equal(timerd_kick(t, &claim, &token, NULL), -EINVAL);
        assert_int_equal(timerd_unregister(t, NULL), -EINVAL);

        assert_int_equal(timerd_get(t, NULL, TIMERD_OWNER_SELF, &timer), -EINVAL);
        assert_int_equal(timerd_list(t, TIMERD_OWNER_SELF, false, NULL), -EINVAL);
        assert_int_equal(timerd_list(NULL, TIMERD_OWNER_SELF, false, &timers), -EINVAL);
        assert_int_equal(timerd_wait(t, NULL, 2, 0, &firing), -EINVAL);
        assert_int_equal(timerd_wait(t, (const char *const[]){"a", NULL}, 2, 0, &firing), -EINVAL);
        assert_int_equal(timerd_wait_stream(t, NULL, 1), -EINVAL);
        assert_int_equal(
            timerd_complete(t, &token, TIMERD_OUTCOME_NONE, TIMERD_DIRECTIVE_CONTINUE, 0), -EINVAL);
        assert_int_equal(
            timerd_complete(t, &token, TIMERD_OUTCOME_SUCCESS, TIMERD_DIRECTIVE_MAX, 0), -EINVAL);
        assert_int_equal(
            timerd_complete(t, NULL, TIMERD_OUTCOME_SUCCESS, TIMERD_DIRECTIVE_CONTINUE, 0),
            -EINVAL);
        assert_int_equal(timerd_status(t, NULL), -EINVAL);
        assert_int_equal(timerd_call_raw(t, NULL, NULL, NULL), -EINVAL);
        finish(t, s);
}

static const struct fake_step reconcile_script[] = {
    FAKE_CALL("{\"method\":\"io.timerd.Timer.Reconcile\","
              "\"parameters\":{\"name\":\"a\","
              "\"declaration\":{\"policy\":\"watchdog\",\"cadence_usec\":1000000,"
              "\"handover_usec\":1000},\"desired\":\"exact\",\"deadline_usec\":500}}"),
    FAKE_REPLY("{\"parameters\":{\"claim\":" CLAIM_A ",\"created\":true}}"),
    FAKE_CALL("{\"method\":\"io.timerd.Timer.Reconcile\","
              "\"parameters\":{\"name\":\"a\","
              "\"declaration\":{\"policy\":\"watchdog\",\"cadence_usec\":1000000,"
              "\"handover_usec\":1000},\"desired\":\"inactive\"}}"),
    FAKE_REPLY("{\"parameters\":{\"claim\":" CLAIM_A ",\"created\":false}}"),
    FAKE_ANY_CALL,
    FAKE_REPLY("{\"parameters\":{\"claim\":" CLAIM_A "}}"),
};

static void test_reconcile(void **state)
{
        struct timerd_declaration d;
        struct timerd_claim claim;
        struct fake_server *s;
        struct timerd *t = START(reconcile_script, &s);
        bool created = false;

        (void)state;
        timerd_declaration_init(&d, TIMERD_POLICY_WATCHDOG, 1000000);
        assert_int_equal(timerd_reconcile(t, "a", &d, TIMERD_DESIRED_EXACT, 500, &claim, &created),
                         0);
        assert_true(created);
        assert_string_equal(claim.name, "a");
        assert_int_equal(claim.generation, 4);
        assert_int_equal(timerd_reconcile(t, "a", &d, TIMERD_DESIRED_INACTIVE, 0, &claim, NULL), 0);
        /* "created" is required. */
        assert_int_equal(
            timerd_reconcile(t, "a", &d, TIMERD_DESIRED_SCHEDULED, 0, &claim, &created),
            -TIMERD_E_PROTOCOL);
        finish(t, s);
}

static const struct fake_step control_script[] = {
    FAKE_CALL("{\"method\":\"io.timerd.Timer.Schedule\",\"parameters\":{\"claim\":" CLAIM_A
              ",\"deadline_usec\":99}}"),
    FAKE_REPLY(EMPTY_REPLY),
    FAKE_CALL("{\"method\":\"io.timerd.Timer.Schedule\",\"parameters\":{\"token\":" TOKEN_A
              ",\"delay_usec\":5}}"),
    FAKE_REPLY(EMPTY_REPLY),
    FAKE_CALL("{\"method\":\"io.timerd.Timer.Reschedule\",\"parameters\":{\"claim\":" CLAIM_A "}}"),
    FAKE_REPLY("{\"parameters\":{\"remaining_usec\":70,\"cadence_usec\":80}}"),
    FAKE_CALL("{\"method\":\"io.timerd.Timer.Reschedule\",\"parameters\":{\"token\":" TOKEN_A
              ",\"delay_usec\":6,\"cadence_usec\":60}}"),
    FAKE_REPLY("{\"parameters\":{\"remaining_usec\":0,\"cadence_usec\":80}}"),
    FAKE_ANY_CALL,
    FAKE_REPLY("{\"parameters\":{\"remaining_usec\":0}}"),
    FAKE_CALL("{\"method\":\"io.timerd.Timer.Cancel\",\"parameters\":{\"claim\":" CLAIM_A "}}"),
    FAKE_REPLY(EMPTY_REPLY),
    FAKE_CALL("{\"method\":\"io.timerd.Timer.Cancel\",\"parameters\":{\"token\":" TOKEN_A "}}"),
    FAKE_REPLY(EMPTY_REPLY),
    FAKE_CALL("{\"method\":\"io.timerd.Timer.Kick\",\"parameters\":{\"claim\":" CLAIM_A "}}"),
    FAKE_REPLY("{\"parameters\":{\"next_usec\":12345}}"),
    FAKE_ANY_CALL,
    FAKE_REPLY("{\"parameters\":{\"next_usec\":\"soon\"}}"),
    FAKE_CALL("{\"method\":\"io.timerd.Timer.Unregister\",\"parameters\":{\"claim\":" CLAIM_A "}}"),
    FAKE_REPLY(EMPTY_REPLY),
};

static void test_control_calls(void **state)
{
        const struct timerd_claim claim = {.name = "a", .generation = 4};
        const struct timerd_token token = {.name = "a", .generation = 4, .run = 9};
        uint64_t remaining = 1, cadence = 1, next = 0;
        struct fake_server *s;
        struct timerd *t = START(control_script, &s);

        (void)state;
        assert_int_equal(
            timerd_schedule(t, &claim, NULL, &(struct timerd_start){TIMERD_START_AT, 99}), 0);
        assert_int_equal(
            timerd_schedule(t, NULL, &token, &(struct timerd_start){TIMERD_START_AFTER, 5}), 0);
        assert_int_equal(timerd_reschedule(t, &claim, NULL, NULL, 0, &remaining, &cadence), 0);
        assert_int_equal(remaining, 70);
        assert_int_equal(cadence, 80);
        assert_int_equal(timerd_reschedule(t, NULL, &token,
                                           &(struct timerd_start){TIMERD_START_AFTER, 6}, 60, NULL,
                                           NULL),
                         0);
        assert_int_equal(timerd_reschedule(t, &claim, NULL, NULL, 0, &remaining, &cadence),
                         -TIMERD_E_PROTOCOL);
        assert_int_equal(timerd_cancel(t, &claim, NULL), 0);
        assert_int_equal(timerd_cancel(t, NULL, &token), 0);
        assert_int_equal(timerd_kick(t, &claim, NULL, &next), 0);
        assert_int_equal(next, 12345);
        assert_int_equal(timerd_kick(t, &claim, NULL, &next), -TIMERD_E_PROTOCOL);
        assert_int_equal(timerd_unregister(t, &claim), 0);
        finish(t, s);
}

static const struct fake_step get_script[] = {
    FAKE_CALL("{\"method\":\"io.timerd.Timer.Get\",\"parameters\":{\"name\":\"backup\","
              "\"owner\":1000}}"),
    FAKE_REPLY("{\"parameters\":{\"timer\":" FULL_TIMER "}}"),
    FAKE_CALL("{\"method\":\"io.timerd.Timer.Get\",\"parameters\":{\"name\":\"bare\"}}"),
    FAKE_REPLY("{\"parameters\":{\"timer\":" BARE_TIMER("bare") "}}"),
};

static void test_get(void **state)
{
        struct timerd_timer timer;
        struct fake_server *s;
        struct timerd *t = START(get_script, &s);

        (void)state;
        assert_int_equal(timerd_get(t, "backup", 1000, &timer), 0);
        assert_int_equal(timer.owner, 1000);
        assert_string_equal(timer.name, "backup");
        assert_int_equal(timer.declaration.policy, TIMERD_POLICY_INTERVAL);
        assert_int_equal(timer.declaration.cadence_usec, 300000000);
        assert_int_equal(timer.declaration.clock, TIMERD_CLOCK_BOOTTIME_ALARM);
        assert_int_equal(timer.declaration.lifetime, TIMERD_LIFETIME_RETAINED);
        assert_int_equal(timer.declaration.delivery, TIMERD_DELIVERY_SIGNAL);
        assert_int_equal(timer.declaration.accuracy_usec, 1000);
        assert_int_equal(timer.declaration.signal, 12);
        assert_false(timer.declaration.catch_up);
        assert_int_equal(timer.declaration.randomized_delay_usec, 60000000);
        assert_int_equal(timer.declaration.handover_usec, 2000);
        assert_int_equal(timer.generation, 3);
        assert_int_equal(timer.state, TIMERD_STATE_FAILED);
        assert_int_equal(timer.failure, TIMERD_FAILURE_PROVIDER_BINDING);
        assert_true(timer.has_next);
        assert_int_equal(timer.next_usec, 5000000);
        assert_int_equal(timer.remaining_usec, 250000);
        assert_int_equal(timer.run, 7);
        assert_true(timer.run_active);
        assert_true(timer.pending);
        assert_int_equal(timer.runs, 12);
        assert_int_equal(timer.consecutive_expected_failures, 2);
        assert_int_equal(timer.overruns, 5);
        assert_true(timer.has_last_start);
        assert_int_equal(timer.last_start_usec, 4000000);
        assert_true(timer.has_last_finish);
        assert_int_equal(timer.last_finish_usec, 4100000);
        assert_int_equal(timer.last_outcome, TIMERD_OUTCOME_EXPECTED_FAILURE);
        assert_int_equal(timer.last_duration_usec, 100000);
        assert_int_equal(timer.total_duration_usec, 900000);

        /* Absent optional fields take the IDL's defaults. */
        assert_int_equal(timerd_get(t, "bare", TIMERD_OWNER_SELF, &timer), 0);
        assert_string_equal(timer.name, "bare");
        assert_int_equal(timer.declaration.policy, TIMERD_POLICY_ONCE);
        assert_int_equal(timer.declaration.cadence_usec, 0);
        assert_int_equal(timer.declaration.clock, TIMERD_CLOCK_MONOTONIC);
        assert_int_equal(timer.declaration.lifetime, TIMERD_LIFETIME_TRANSIENT);
        assert_int_equal(timer.declaration.delivery, TIMERD_DELIVERY_NOTIFY);
        assert_int_equal(timer.declaration.signal, 0);
        assert_true(timer.declaration.catch_up);
        assert_int_equal(timer.declaration.randomized_delay_usec, 0);
        assert_int_equal(timer.declaration.handover_usec, 0);
        assert_int_equal(timer.state, TIMERD_STATE_INACTIVE);
        assert_int_equal(timer.failure, TIMERD_FAILURE_NONE);
        assert_false(timer.has_next);
        assert_false(timer.has_last_start);
        assert_false(timer.has_last_finish);
        assert_int_equal(timer.last_outcome, TIMERD_OUTCOME_NONE);
        finish(t, s);
}

/* One field at a time broken; each reply must be refused as a protocol error. */
static const char *const broken_timers[] = {
    "{\"owner\":4294967296,\"name\":\"a\",\"declaration\":{\"policy\":\"once\"},"
    "\"generation\":1,\"state\":\"inactive\",\"run\":0,\"run_active\":false,\"pending\":false,"
    "\"runs\":0,\"consecutive_expected_failures\":0,\"overruns\":0,\"last_duration_usec\":0,"
    "\"total_duration_usec\":0}",
    "{\"owner\":0,\"name\":\"a\",\"declaration\":{\"policy\":\"sometimes\"},"
    "\"generation\":1,\"state\":\"inactive\",\"run\":0,\"run_active\":false,\"pending\":false,"
    "\"runs\":0,\"consecutive_expected_failures\":0,\"overruns\":0,\"last_duration_usec\":0,"
    "\"total_duration_usec\":0}",
    "{\"owner\":0,\"name\":\"a\",\"declaration\":{\"policy\":\"once\",\"clock\":\"sundial\"},"
    "\"generation\":1,\"state\":\"inactive\",\"run\":0,\"run_active\":false,\"pending\":false,"
    "\"runs\":0,\"consecutive_expected_failures\":0,\"overruns\":0,\"last_duration_usec\":0,"
    "\"total_duration_usec\":0}",
    "{\"owner\":0,\"name\":\"a\",\"declaration\":{\"policy\":\"once\"},"
    "\"generation\":1,\"state\":\"sleeping\",\"run\":0,\"run_active\":false,\"pending\":false,"
    "\"runs\":0,\"consecutive_expected_failures\":0,\"overruns\":0,\"last_duration_usec\":0,"
    "\"total_duration_usec\":0}",
    "{\"owner\":0,\"name\":\"a\",\"declaration\":{\"policy\":\"once\"},"
    "\"generation\":1,\"state\":\"failed\",\"failure\":\"bad luck\",\"run\":0,"
    "\"run_active\":false,\"pending\":false,\"runs\":0,\"consecutive_expected_failures\":0,"
    "\"overruns\":0,\"last_duration_usec\":0,\"total_duration_usec\":0}",
    "{\"owner\":0,\"name\":\"a\",\"declaration\":{\"policy\":\"once\"},"
    "\"generation\":1,\"state\":\"inactive\",\"next_usec\":true,\"run\":0,"
    "\"run_active\":false,\"pending\":false,\"runs\":0,\"consecutive_expected_failures\":0,"
    "\"overruns\":0,\"last_duration_usec\":0,\"total_duration_usec\":0}",
    "{\"owner\":0,\"name\":\"a\",\"declaration\":{\"policy\":\"once\"},"
    "\"generation\":1,\"state\":\"inactive\",\"run\":0,\"run_active\":\"no\","
    "\"pending\":false,\"runs\":0,\"consecutive_expected_failures\":0,\"overruns\":0,"
    "\"last_duration_usec\":0,\"total_duration_usec\":0}",
    "{\"owner\":0,\"name\":\"a\",\"declaration\":{\"policy\":\"once\"},"
    "\"generation\":1,\"state\":\"inactive\",\"run\":0,\"run_active\":false,\"pending\":false,"
    "\"runs\":0,\"consecutive_expected_failures\":0,\"overruns\":0,"
    "\"last_outcome\":\"meh\",\"last_duration_usec\":0,\"total_duration_usec\":0}",
    /* total_duration_usec missing */
    "{\"owner\":0,\"name\":\"a\",\"declaration\":{\"policy\":\"once\"},"
    "\"generation\":1,\"state\":\"inactive\",\"run\":0,\"run_active\":false,\"pending\":false,"
    "\"runs\":0,\"consecutive_expected_failures\":0,\"overruns\":0,\"last_duration_usec\":0}",
    "{\"owner\":0,\"name\":\"a\",\"declaration\":{\"policy\":\"once\",\"signal\":2147483648},"
    "\"generation\":1,\"state\":\"inactive\",\"run\":0,\"run_active\":false,\"pending\":false,"
    "\"runs\":0,\"consecutive_expected_failures\":0,\"overruns\":0,\"last_duration_usec\":0,"
    "\"total_duration_usec\":0}",
    "{\"owner\":0,\"name\":\"a\",\"declaration\":{\"policy\":\"once\",\"catch_up\":1},"
    "\"generation\":1,\"state\":\"inactive\",\"run\":0,\"run_active\":false,\"pending\":false,"
    "\"runs\":0,\"consecutive_expected_failures\":0,\"overruns\":0,\"last_duration_usec\":0,"
    "\"total_duration_usec\":0}",
    /* declaration not an object */
    "{\"owner\":0,\"name\":\"a\",\"declaration\":\"once\","
    "\"generation\":1,\"state\":\"inactive\",\"run\":0,\"run_active\":false,\"pending\":false,"
    "\"runs\":0,\"consecutive_expected_failures\":0,\"overruns\":0,\"last_duration_usec\":0,"
    "\"total_duration_usec\":0}",
};

static void test_get_broken_timer(void **state)
{
        struct fake_step steps[2 * ELEMENTSOF(broken_timers)];
        char *replies[ELEMENTSOF(broken_timers)];
        struct timerd_timer timer;
        struct fake_server *s;
        struct timerd *t;

        (void)state;
        for (size_t i = 0; i < ELEMENTSOF(broken_timers); i++) {
                assert_true(
                    asprintf(&replies[i], "{\"parameters\":{\"timer\":%s}}", broken_timers[i]) > 0);
                steps[2 * i] = (struct fake_step)FAKE_ANY_CALL;
                steps[2 * i + 1] = (struct fake_step)FAKE_REPLY(replies[i]);
        }
        t = START(steps, &s);
        for (size_t i = 0; i < ELEMENTSOF(broken_timers); i++)
                if (timerd_get(t, "a", TIMERD_OWNER_SELF, &timer) != -TIMERD_E_PROTOCOL)
                        fail_msg("accepted broken timer %zu: %s", i, broken_timers[i]);
        finish(t, s);
        for (size_t i = 0; i < ELEMENTSOF(broken_timers); i++)
                free(replies[i]);
}

static const struct fake_step list_script[] = {
    FAKE_CALL("{\"method\":\"io.timerd.Timer.List\",\"parameters\":{}}"),
    FAKE_REPLY("{\"parameters\":{\"timers\":[" BARE_TIMER("one") "," FULL_TIMER "]}}"),
    FAKE_CALL("{\"method\":\"io.timerd.Timer.List\",\"parameters\":{\"all\":true}}"),
    FAKE_REPLY("{\"parameters\":{\"timers\":[]}}"),
    FAKE_CALL("{\"method\":\"io.timerd.Timer.List\",\"parameters\":{\"owner\":5}}"),
    FAKE_REPLY("{\"parameters\":{\"timers\":{}}}"),
    FAKE_ANY_CALL,
    FAKE_REPLY("{\"parameters\":{\"timers\":[" BARE_TIMER("one") ",{}]}}"),
};

static void test_list(void **state)
{
        struct timerd_timer *timers = NULL;
        struct fake_server *s;
        struct timerd *t = START(list_script, &s);

        (void)state;
        assert_int_equal(timerd_list(t, TIMERD_OWNER_SELF, false, &timers), 2);
        assert_string_equal(timers[0].name, "one");
        assert_string_equal(timers[1].name, "backup");
        assert_int_equal(timers[1].owner, 1000);
        free(timers);

        assert_int_equal(timerd_list(t, TIMERD_OWNER_SELF, true, &timers), 0);
        assert_null(timers);
        assert_int_equal(timerd_list(t, 5, false, &timers), -TIMERD_E_PROTOCOL);
        assert_int_equal(timerd_list(t, TIMERD_OWNER_SELF, false, &timers), -TIMERD_E_PROTOCOL);
        finish(t, s);
}

#define MANY_TIMERS 5000

/* A List of thousands of timers is one large reply; it must come through whole. */
static void test_list_large(void **state)
{
        static const char head[] = "{\"parameters\":{\"timers\":[";
        size_t timer_len = strlen(BARE_TIMER("t00000")), size;
        struct timerd_timer *timers = NULL;
        struct fake_step steps[2];
        struct fake_server *s;
        struct timerd *t;
        char *reply, *p;
        long n;

        (void)state;
        size = sizeof(head) + MANY_TIMERS * (timer_len + 1) + 8;
        reply = malloc(size);
        assert_non_null(reply);
        p = stpcpy(reply, head);
        for (int i = 0; i < MANY_TIMERS; i++) {
                char name[8];

                snprintf(name, sizeof(name), "t%05d", i);
                p += sprintf(p, "%s" BARE_TIMER("%s"), i > 0 ? "," : "", name);
        }
        strcpy(p, "]}}");
        steps[0] = (struct fake_step)FAKE_ANY_CALL;
        steps[1] = (struct fake_step)FAKE_REPLY(reply);

        t = START(steps, &s);
        n = timerd_list(t, TIMERD_OWNER_SELF, false, &timers);
        assert_int_equal(n, MANY_TIMERS);
        assert_string_equal(timers[0].name, "t00000");
        assert_string_equal(timers[MANY_TIMERS - 1].name, "t04999");
        free(timers);
        finish(t, s);
        free(reply);
}

/* timerd_list() asks for the next page after the cursor of each reply until one has none. */
static const struct fake_step list_pages_script[] = {
    FAKE_CALL("{\"method\":\"io.timerd.Timer.List\",\"parameters\":{\"all\":true}}"),
    FAKE_REPLY("{\"parameters\":{\"timers\":[" BARE_TIMER("a") "," BARE_TIMER(
        "b") "],"
             "\"next\":{\"owner\":0,\"name\":\"b\"}}}"),
    FAKE_CALL("{\"method\":\"io.timerd.Timer.List\",\"parameters\":{\"all\":true,"
              "\"after\":{\"owner\":0,\"name\":\"b\"}}}"),
    FAKE_REPLY("{\"parameters\":{\"timers\":[" BARE_TIMER("c") "]}}"),
    /* A failure on a later page fails the whole list. */
    FAKE_ANY_CALL,
    FAKE_REPLY(
        "{\"parameters\":{\"timers\":[" BARE_TIMER("a") "],"
                                                        "\"next\":{\"owner\":0,\"name\":\"a\"}}}"),
    FAKE_ANY_CALL,
    FAKE_REPLY("{\"error\":\"io.timerd.Timer.Busy\",\"parameters\":{}}"),
};

static void test_list_follows_pages(void **state)
{
        struct timerd_timer *timers = NULL;
        struct fake_server *s;
        struct timerd *t = START(list_pages_script, &s);

        (void)state;
        assert_int_equal(timerd_list(t, TIMERD_OWNER_SELF, true, &timers), 3);
        assert_string_equal(timers[0].name, "a");
        assert_string_equal(timers[1].name, "b");
        assert_string_equal(timers[2].name, "c");
        free(timers);
        timers = NULL;
        assert_int_equal(timerd_list(t, TIMERD_OWNER_SELF, false, &timers), -TIMERD_E_BUSY);
        assert_null(timers);
        finish(t, s);
}

static const struct fake_step list_page_script[] = {
    FAKE_CALL("{\"method\":\"io.timerd.Timer.List\",\"parameters\":{\"owner\":5,\"limit\":2}}"),
    FAKE_REPLY("{\"parameters\":{\"timers\":[" BARE_TIMER("a") "," BARE_TIMER(
        "b") "],"
             "\"next\":{\"owner\":5,\"name\":\"b\"}}}"),
    FAKE_CALL("{\"method\":\"io.timerd.Timer.List\",\"parameters\":{\"owner\":5,\"limit\":2,"
              "\"after\":{\"owner\":5,\"name\":\"b\"}}}"),
    FAKE_REPLY("{\"parameters\":{\"timers\":[]}}"),
    /* A cursor set by hand; replies that break the IDL leave it where it was. */
    FAKE_CALL("{\"method\":\"io.timerd.Timer.List\",\"parameters\":{"
              "\"after\":{\"owner\":7,\"name\":\"x\"}}}"),
    FAKE_REPLY("{\"parameters\":{\"timers\":[" BARE_TIMER("y") "],\"next\":{\"owner\":-1,"
                                                               "\"name\":\"y\"}}}"),
    FAKE_ANY_CALL,
    FAKE_REPLY("{\"parameters\":{\"timers\":[" BARE_TIMER("y") "],\"next\":{\"owner\":7}}}"),
    FAKE_ANY_CALL,
    FAKE_REPLY("{\"parameters\":{\"timers\":[" BARE_TIMER("y") "],\"next\":\"y\"}}"),
    /* More to come but nothing in this page, or a cursor that does not move on: a listing that
     * would never end. */
    FAKE_ANY_CALL,
    FAKE_REPLY("{\"parameters\":{\"timers\":[],\"next\":{\"owner\":7,\"name\":\"y\"}}}"),
    FAKE_ANY_CALL,
    FAKE_REPLY("{\"parameters\":{\"timers\":[" BARE_TIMER("y") "],\"next\":{\"owner\":7,"
                                                               "\"name\":\"x\"}}}"),
    FAKE_ANY_CALL,
    FAKE_REPLY("{\"parameters\":{\"timers\":[" BARE_TIMER("y") "],\"next\":{\"owner\":6,"
                                                               "\"name\":\"z\"}}}"),
    FAKE_ANY_CALL,
    FAKE_REPLY("{\"parameters\":{\"timers\":[" BARE_TIMER("y") ",{}]}}"),
};

static void test_list_page(void **state)
{
        struct timerd_list_cursor cursor = {0};
        struct timerd_timer *timers = NULL;
        struct fake_server *s;
        struct timerd *t = START(list_page_script, &s);

        (void)state;
        assert_int_equal(timerd_list_page(t, 5, false, 2, &cursor, &timers), 2);
        assert_string_equal(timers[1].name, "b");
        assert_true(cursor.has_after);
        assert_int_equal(cursor.after_owner, 5);
        assert_string_equal(cursor.after_name, "b");
        assert_false(cursor.done);
        free(timers);
        assert_int_equal(timerd_list_page(t, 5, false, 2, &cursor, &timers), 0);
        assert_null(timers);
        assert_true(cursor.done);
        /* Done: no call, nothing. */
        assert_int_equal(timerd_list_page(t, 5, false, 2, &cursor, &timers), 0);
        assert_null(timers);

        cursor = (struct timerd_list_cursor){.has_after = true, .after_owner = 7};
        strcpy(cursor.after_name, "x");
        for (int i = 0; i < 7; i++) {
                assert_int_equal(timerd_list_page(t, TIMERD_OWNER_SELF, false, 0, &cursor, &timers),
                                 -TIMERD_E_PROTOCOL);
                assert_null(timers);
                assert_int_equal(cursor.after_owner, 7);
                assert_string_equal(cursor.after_name, "x");
                assert_false(cursor.done);
        }
        assert_int_equal(timerd_list_page(NULL, 0, false, 0, &cursor, &timers), -EINVAL);
        assert_int_equal(timerd_list_page(t, 0, false, 0, NULL, &timers), -EINVAL);
        assert_int_equal(timerd_list_page(t, 0, false, 0, &cursor, NULL), -EINVAL);
        finish(t, s);
}

/* The same pages as the service sent them: the cursor moves alike, the timers are not decoded. */
static void test_list_page_json(void **state)
{
        struct timerd_list_cursor cursor = {0};
        json_object *page, *expected;
        struct fake_server *s;
        struct timerd *t = START(list_page_script, &s);
        char *text = NULL;

        (void)state;
        assert_int_equal(timerd_list_page_json(t, 5, false, 2, &cursor, &text), 2);
        page = json_tokener_parse(text);
        expected = json_tokener_parse("[" BARE_TIMER("a") "," BARE_TIMER("b") "]");
        assert_non_null(page);
        assert_true(json_object_equal(page, expected));
        json_object_put(page);
        json_object_put(expected);
        free(text);
        assert_string_equal(cursor.after_name, "b");
        assert_false(cursor.done);
        assert_int_equal(timerd_list_page_json(t, 5, false, 2, &cursor, &text), 0);
        assert_string_equal(text, "[]");
        free(text);
        assert_true(cursor.done);
        assert_int_equal(timerd_list_page_json(t, 5, false, 2, &cursor, &text), 0);
        assert_null(text);

        cursor = (struct timerd_list_cursor){.has_after = true, .after_owner = 7};
        strcpy(cursor.after_name, "x");
        for (int i = 0; i < 6; i++) {
                assert_int_equal(
                    timerd_list_page_json(t, TIMERD_OWNER_SELF, false, 0, &cursor, &text),
                    -TIMERD_E_PROTOCOL);
                assert_null(text);
                assert_string_equal(cursor.after_name, "x");
                assert_false(cursor.done);
        }
        /* A timer the library could not decode passes as it came. */
        assert_int_equal(timerd_list_page_json(t, TIMERD_OWNER_SELF, false, 0, &cursor, &text), 2);
        assert_non_null(strstr(text, ",{}]"));
        free(text);
        assert_true(cursor.done);
        assert_int_equal(timerd_list_page_json(NULL, 0, false, 0, &cursor, &text), -EINVAL);
        assert_int_equal(timerd_list_page_json(t, 0, false, 0, NULL, &text), -EINVAL);
        assert_int_equal(timerd_list_page_json(t, 0, false, 0, &cursor, NULL), -EINVAL);
        finish(t, s);
}

/* TIMERD_NAME_MAX + 1 bytes. */
#define NAME_16   "abcdefghijklmnop"
#define LONG_NAME NAME_16 NAME_16 NAME_16 NAME_16 NAME_16 NAME_16 NAME_16 NAME_16 "q"

static const struct fake_step wait_script[] = {
    FAKE_CALL("{\"method\":\"io.timerd.Timer.Wait\",\"parameters\":{\"names\":[\"a\",\"b\"],"
              "\"timeout_usec\":1000000}}"),
    FAKE_REPLY("{\"parameters\":{\"firing\":" FIRING "}}"),
    FAKE_CALL("{\"method\":\"io.timerd.Timer.Wait\",\"parameters\":{}}"),
    FAKE_REPLY("{\"error\":\"io.timerd.Timer.Timeout\",\"parameters\":{}}"),
    FAKE_ANY_CALL,
    FAKE_REPLY("{\"parameters\":{\"firing\":{\"token\":{\"name\":\"a\"},\"clock\":\"realtime\","
               "\"deadline_usec\":1,\"fired_usec\":1,\"overruns\":0}}}"),
    FAKE_ANY_CALL,
    FAKE_REPLY("{\"parameters\":{\"firing\":{\"token\":" TOKEN_A ",\"clock\":\"water\","
               "\"deadline_usec\":1,\"fired_usec\":1,\"overruns\":0}}}"),
    /* Escapes in a name are read as what they spell; duplicate fields as the last of them. */
    FAKE_ANY_CALL,
    FAKE_REPLY("{\"parameters\":{\"firing\":{\"token\":{\"name\":\"\\u0061\\u00e9\\n\","
               "\"generation\":4,\"run\":9},\"clock\":\"realtime\",\"deadline_usec\":7,"
               "\"fired_usec\":8,\"overruns\":0,\"overruns\":2}}}"),
    /* A name longer than struct timerd_token holds would name another timer. */
    FAKE_ANY_CALL,
    FAKE_REPLY("{\"parameters\":{\"firing\":{\"token\":{\"name\":\"" LONG_NAME "\","
               "\"generation\":4,\"run\":9},\"clock\":\"realtime\",\"deadline_usec\":7,"
               "\"fired_usec\":8,\"overruns\":0}}}"),
};

static void test_wait(void **state)
{
        const char *const names[] = {"a", "b"};
        struct timerd_firing firing;
        struct fake_server *s;
        struct timerd *t = START(wait_script, &s);

        (void)state;
        assert_int_equal(timerd_wait(t, names, 2, 1000000, &firing), 0);
        assert_string_equal(firing.token.name, "a");
        assert_int_equal(firing.token.generation, 4);
        assert_int_equal(firing.token.run, 9);
        assert_int_equal(firing.clock, TIMERD_CLOCK_REALTIME);
        assert_int_equal(firing.deadline_usec, 100);
        assert_int_equal(firing.fired_usec, 105);
        assert_int_equal(firing.overruns, 1);

        assert_int_equal(timerd_wait(t, NULL, 0, 0, &firing), -TIMERD_E_TIMEOUT);
        assert_int_equal(timerd_wait(t, NULL, 0, 0, &firing), -TIMERD_E_PROTOCOL);
        assert_int_equal(timerd_wait(t, NULL, 0, 0, &firing), -TIMERD_E_PROTOCOL);
        assert_int_equal(timerd_wait(t, NULL, 0, 0, &firing), 0);
        assert_string_equal(firing.token.name, "a\xc3\xa9\n");
        assert_int_equal(firing.overruns, 2);
        assert_int_equal(timerd_wait(t, NULL, 0, 0, &firing), -TIMERD_E_PROTOCOL);
        finish(t, s);
}

static const struct fake_step stream_script[] = {
    FAKE_CALL("{\"method\":\"io.timerd.Timer.Wait\",\"parameters\":{\"names\":[\"a\"]},"
              "\"more\":true}"),
    FAKE_REPLY("{\"parameters\":{\"firing\":" FIRING "},\"continues\":true}"),
    FAKE_REPLY("{\"parameters\":{\"firing\":{\"token\":{\"name\":\"a\",\"generation\":4,"
               "\"run\":10},\"clock\":\"realtime\",\"deadline_usec\":200,\"fired_usec\":201,"
               "\"overruns\":0}},\"continues\":true}"),
    FAKE_REPLY("{\"error\":\"io.timerd.Timer.ShuttingDown\",\"parameters\":{}}"),
    /* The stream is over: the connection serves calls again. */
    FAKE_CALL("{\"method\":\"io.timerd.Timer.Wait\",\"parameters\":{},\"more\":true}"),
    FAKE_REPLY("{\"parameters\":{\"firing\":" FIRING "}}"),
};

static void test_wait_stream(void **state)
{
        const char *const names[] = {"a"};
        struct timerd_firing firing;
        struct timerd_status status;
        struct fake_server *s;
        struct timerd *t = START(stream_script, &s);

        (void)state;
        assert_int_equal(timerd_wait_next(t, &firing), -EINVAL);
        assert_int_equal(timerd_wait_stream(t, names, 1), 0);
        assert_int_equal(timerd_wait_stream(t, names, 1), -EBUSY);
        assert_int_equal(timerd_status(t, &status), -EBUSY);
        assert_int_equal(timerd_wait_next(t, &firing), 0);
        assert_int_equal(firing.token.run, 9);
        assert_int_equal(timerd_wait_next(t, &firing), 0);
        assert_int_equal(firing.token.run, 10);
        assert_int_equal(firing.deadline_usec, 200);
        assert_int_equal(timerd_wait_next(t, &firing), -TIMERD_E_SHUTTING_DOWN);
        assert_string_equal(timerd_last_error_name(t), "io.timerd.Timer.ShuttingDown");
        assert_int_equal(timerd_wait_next(t, &firing), -EINVAL);

        /* A last reply without "continues" ends the stream too. */
        assert_int_equal(timerd_wait_stream(t, NULL, 0), 0);
        assert_int_equal(timerd_wait_next(t, &firing), 0);
        assert_int_equal(timerd_wait_next(t, &firing), -EINVAL);
        finish(t, s);
}

static const struct fake_step complete_script[] = {
    FAKE_CALL("{\"method\":\"io.timerd.Timer.Complete\",\"parameters\":{\"token\":" TOKEN_A
              ",\"outcome\":\"expected_failure\",\"directive\":\"stop\","
              "\"duration_usec\":250}}"),
    FAKE_REPLY(EMPTY_REPLY),
    FAKE_CALL("{\"method\":\"io.timerd.Timer.Complete\",\"parameters\":{\"token\":" TOKEN_A
              ",\"outcome\":\"success\",\"directive\":\"continue\"}}"),
    FAKE_REPLY("{\"error\":\"io.timerd.Timer.NotRunning\",\"parameters\":{\"name\":\"a\"}}"),
};

static void test_complete(void **state)
{
        const struct timerd_token token = {.name = "a", .generation = 4, .run = 9};
        struct fake_server *s;
        struct timerd *t = START(complete_script, &s);

        (void)state;
        assert_int_equal(
            timerd_complete(t, &token, TIMERD_OUTCOME_EXPECTED_FAILURE, TIMERD_DIRECTIVE_STOP, 250),
            0);
        assert_int_equal(
            timerd_complete(t, &token, TIMERD_OUTCOME_SUCCESS, TIMERD_DIRECTIVE_CONTINUE, 0),
            -TIMERD_E_NOT_RUNNING);
        finish(t, s);
}

static const struct fake_step status_script[] = {
    FAKE_CALL("{\"method\":\"io.timerd.Service.Status\",\"parameters\":{}}"),
    FAKE_REPLY(STATUS_REPLY),
    /* Loop lag, past-due firings, and percentiles left out for want of samples. */
    FAKE_ANY_CALL,
    FAKE_REPLY("{\"parameters\":{\"epoch\":\"b1d-17-1\",\"version\":\"0.1.0\","
               "\"backend\":\"io_uring\",\"backend_reason\":\"\",\"pid\":42,"
               "\"uptime_usec\":1000,\"timers\":5,\"scheduled\":3,\"running\":1,\"failed\":1,"
               "\"pending\":2,\"connections\":4,\"waiters\":1,\"clock_changes\":6,"
               "\"iterations\":700,\"wakeups\":600,\"firings\":50,\"overruns\":7,"
               "\"stale_expiries\":8,\"slowest_iteration_usec\":900,\"lateness\":{"
               "\"samples\":50,\"past_due\":3,\"p50_usec\":10,\"max_usec\":1000},"
               "\"loop_lag\":{\"samples\":120,\"p50_usec\":4,\"p99_usec\":40,"
               "\"max_usec\":90},\"store\":\"ok\"}}"),
    FAKE_ANY_CALL,
    FAKE_REPLY("{\"parameters\":{\"epoch\":\"x\"}}"),
    FAKE_ANY_CALL,
    /* A backend name longer than the struct holds is refused, not cut. */
    FAKE_REPLY("{\"parameters\":{\"epoch\":\"b1d-17-1\",\"version\":\"0.1.0\","
               "\"backend\":\"io_uring_with_a_very_long_name_indeed\","
               "\"backend_reason\":\"\",\"pid\":42,\"uptime_usec\":1000,\"timers\":5,"
               "\"scheduled\":3,\"running\":1,\"failed\":1,\"pending\":2,\"connections\":4,"
               "\"waiters\":1,\"clock_changes\":6,\"iterations\":700,\"wakeups\":600,"
               "\"firings\":50,\"overruns\":7,\"stale_expiries\":8,"
               "\"slowest_iteration_usec\":900,\"lateness\":{\"samples\":50,\"p50_usec\":10,"
               "\"p99_usec\":250,\"max_usec\":1000},\"store\":\"ok\"}}"),
    FAKE_ANY_CALL,
    /* Another caller than root: its own counts, no activity figures. */
    FAKE_REPLY("{\"parameters\":{\"epoch\":\"b1d-17-1\",\"version\":\"0.1.0\","
               "\"backend\":\"io_uring\",\"backend_reason\":\"\",\"pid\":42,"
               "\"uptime_usec\":1000,\"scope\":\"caller\",\"timers\":1,\"scheduled\":1,"
               "\"running\":0,\"failed\":0,\"pending\":0,\"connections\":1,\"waiters\":0,"
               "\"clock_changes\":6,\"store\":\"ok\"}}"),
    FAKE_ANY_CALL,
    /* A scope the library does not know is not guessed at. */
    FAKE_REPLY("{\"parameters\":{\"epoch\":\"b1d-17-1\",\"version\":\"0.1.0\","
               "\"backend\":\"io_uring\",\"backend_reason\":\"\",\"pid\":42,"
               "\"uptime_usec\":1000,\"scope\":\"galaxy\",\"timers\":1,\"scheduled\":1,"
               "\"running\":0,\"failed\":0,\"pending\":0,\"connections\":1,\"waiters\":0,"
               "\"clock_changes\":6,\"store\":\"ok\"}}"),
};

static void test_status(void **state)
{
        struct timerd_status status;
        struct fake_server *s;
        struct timerd *t = START(status_script, &s);

        (void)state;
        assert_int_equal(timerd_status(t, &status), 0);
        assert_string_equal(status.epoch, "b1d-17-1");
        assert_string_equal(status.version, "0.1.0");
        assert_string_equal(status.backend, "io_uring");
        assert_string_equal(status.backend_reason, "");
        assert_string_equal(status.store, "ok");
        assert_int_equal(status.pid, 42);
        assert_int_equal(status.uptime_usec, 1000);
        assert_int_equal(status.timers, 5);
        assert_int_equal(status.scheduled, 3);
        assert_int_equal(status.running, 1);
        assert_int_equal(status.failed, 1);
        assert_int_equal(status.pending, 2);
        assert_int_equal(status.connections, 4);
        assert_int_equal(status.waiters, 1);
        assert_int_equal(status.clock_changes, 6);
        assert_int_equal(status.iterations, 700);
        assert_int_equal(status.wakeups, 600);
        assert_int_equal(status.firings, 50);
        assert_int_equal(status.overruns, 7);
        assert_int_equal(status.stale_expiries, 8);
        assert_int_equal(status.slowest_iteration_usec, 900);
        assert_int_equal(status.lateness_samples, 50);
        assert_int_equal(status.lateness_p50_usec, 10);
        assert_int_equal(status.lateness_p99_usec, 250);
        assert_true(status.has_lateness_p99);
        assert_int_equal(status.lateness_max_usec, 1000);
        /* A reply without a scope is from a service that told everyone everything. */
        assert_true(status.host_wide);
        assert_int_equal(status.loop_lag_samples, 0);

        assert_int_equal(timerd_status(t, &status), 0);
        assert_int_equal(status.lateness_samples, 50);
        assert_int_equal(status.lateness_past_due, 3);
        assert_false(status.has_lateness_p99);
        assert_int_equal(status.loop_lag_samples, 120);
        assert_int_equal(status.loop_lag_p50_usec, 4);
        assert_true(status.has_loop_lag_p99);
        assert_int_equal(status.loop_lag_p99_usec, 40);
        assert_int_equal(status.loop_lag_max_usec, 90);

        assert_int_equal(timerd_status(t, &status), -TIMERD_E_PROTOCOL);
        assert_int_equal(timerd_status(t, &status), -TIMERD_E_PROTOCOL);

        assert_int_equal(timerd_status(t, &status), 0);
        assert_false(status.host_wide);
        assert_int_equal(status.timers, 1);
        assert_int_equal(status.connections, 1);
        assert_int_equal(status.iterations + status.firings + status.lateness_samples, 0);
        assert_int_equal(timerd_status(t, &status), -TIMERD_E_PROTOCOL);
        finish(t, s);
}

/* An administrator acting on uid 64001's timers: every Timer call names it, unless it names
 * an owner itself; Service calls never do; TIMERD_OWNER_SELF goes back to the caller's own. */
static const struct fake_step owner_script[] = {
    FAKE_CALL("{\"method\":\"io.timerd.Timer.Register\","
              "\"parameters\":{\"name\":\"a\",\"declaration\":{\"policy\":\"once\","
              "\"lifetime\":\"retained\",\"handover_usec\":1000},\"owner\":64001}}"),
    FAKE_REPLY("{\"parameters\":{\"claim\":" CLAIM_A "}}"),
    FAKE_CALL("{\"method\":\"io.timerd.Timer.Cancel\",\"parameters\":{\"claim\":" CLAIM_A
              ",\"owner\":64001}}"),
    FAKE_REPLY(EMPTY_REPLY),
    FAKE_CALL("{\"method\":\"io.timerd.Timer.Get\",\"parameters\":{\"name\":\"a\","
              "\"owner\":64001}}"),
    FAKE_REPLY("{\"parameters\":{\"timer\":" BARE_TIMER("a") "}}"),
    FAKE_CALL("{\"method\":\"io.timerd.Timer.Get\",\"parameters\":{\"name\":\"a\",\"owner\":7}}"),
    FAKE_REPLY("{\"parameters\":{\"timer\":" BARE_TIMER("a") "}}"),
    FAKE_CALL("{\"method\":\"io.timerd.Timer.Wait\",\"parameters\":{\"names\":[\"a\"],"
              "\"owner\":64001}}"),
    FAKE_REPLY("{\"parameters\":{\"firing\":" FIRING "}}"),
    FAKE_CALL("{\"method\":\"io.timerd.Timer.Complete\",\"parameters\":{\"token\":" TOKEN_A
              ",\"outcome\":\"success\",\"directive\":\"continue\",\"owner\":64001}}"),
    FAKE_REPLY(EMPTY_REPLY),
    FAKE_CALL("{\"method\":\"io.timerd.Timer.List\",\"parameters\":{\"owner\":64001}}"),
    FAKE_REPLY("{\"parameters\":{\"timers\":[]}}"),
    FAKE_CALL("{\"method\":\"io.timerd.Timer.Unregister\",\"parameters\":{\"claim\":" CLAIM_A
              ",\"owner\":64001}}"),
    FAKE_REPLY(EMPTY_REPLY),
    FAKE_CALL("{\"method\":\"io.timerd.Service.Status\",\"parameters\":{}}"),
    FAKE_REPLY(STATUS_REPLY),
    FAKE_CALL("{\"method\":\"io.timerd.Timer.Kick\",\"parameters\":{\"claim\":" CLAIM_A
              ",\"owner\":64001}}"),
    FAKE_REPLY("{\"parameters\":{\"next_usec\":5}}"),
    FAKE_CALL("{\"method\":\"io.timerd.Timer.Cancel\",\"parameters\":{\"claim\":" CLAIM_A "}}"),
    FAKE_REPLY(EMPTY_REPLY),
};

static void on_kick(struct timerd *t, int error, uint64_t next_usec, void *userdata)
{
        (void)t;
        *(int *)userdata = error == 0 && next_usec == 5 ? 1 : -1;
}

static void test_set_owner(void **state)
{
        const struct timerd_claim claim = {.name = "a", .generation = 4};
        const char *const names[] = {"a"};
        struct timerd_declaration d;
        struct timerd_claim got;
        struct timerd_timer timer;
        struct timerd_firing firing;
        struct timerd_status status;
        struct timerd_timer *timers;
        struct fake_server *s;
        struct timerd *t = START(owner_script, &s);
        int kicked = 0;

        (void)state;
        assert_int_equal(timerd_set_owner(NULL, 64001), -EINVAL);
        assert_int_equal(timerd_set_owner(t, 64001), 0);
        timerd_declaration_init(&d, TIMERD_POLICY_ONCE, 0);
        d.lifetime = TIMERD_LIFETIME_RETAINED;
        assert_int_equal(timerd_register(t, "a", &d, NULL, false, &got), 0);
        assert_int_equal(timerd_cancel(t, &claim, NULL), 0);
        assert_int_equal(timerd_get(t, "a", TIMERD_OWNER_SELF, &timer), 0);
        assert_int_equal(timerd_get(t, "a", 7, &timer), 0);
        assert_int_equal(timerd_wait(t, names, 1, 0, &firing), 0);
        assert_int_equal(
            timerd_complete(t, &firing.token, TIMERD_OUTCOME_SUCCESS, TIMERD_DIRECTIVE_CONTINUE, 0),
            0);
        assert_int_equal(timerd_list(t, TIMERD_OWNER_SELF, false, &timers), 0);
        free(timers);
        assert_int_equal(
            timerd_call_raw(t, "io.timerd.Timer.Unregister", "{\"claim\":" CLAIM_A "}", NULL), 0);
        assert_int_equal(timerd_status(t, &status), 0);
        assert_int_equal(timerd_kick_async(t, &claim, NULL, on_kick, &kicked), 0);
        while (kicked == 0) {
                struct pollfd ready = {.fd = timerd_get_fd(t),
                                       .events = (short)timerd_get_events(t)};

                assert_true(poll(&ready, 1, 5000) > 0);
                assert_true(timerd_process(t) >= 0);
        }
        assert_int_equal(kicked, 1);

        assert_int_equal(timerd_set_owner(t, TIMERD_OWNER_SELF), 0);
        assert_int_equal(timerd_cancel(t, &claim, NULL), 0);
        finish(t, s);
}

static const struct fake_step raw_script[] = {
    FAKE_CALL("{\"method\":\"org.varlink.service.GetInfo\",\"parameters\":{}}"),
    FAKE_REPLY("{\"parameters\":{\"vendor\":\"timerd\",\"interfaces\":[\"io.timerd.Timer\"]}}"),
    FAKE_CALL("{\"method\":\"io.timerd.Timer.Get\",\"parameters\":{\"name\":\"x\"}}"),
    FAKE_REPLY("{\"error\":\"io.timerd.Timer.NotFound\",\"parameters\":{\"name\":\"x\"}}"),
    FAKE_CALL("{\"method\":\"io.timerd.Timer.List\",\"parameters\":{\"all\":true}}"),
    FAKE_REPLY("{\"parameters\":{\"timers\":[]}}"),
};

static void assert_json_equal(const char *actual, const char *expected)
{
        json_object *a = json_tokener_parse(actual), *e = json_tokener_parse(expected);

        assert_non_null(a);
        assert_true(json_object_equal(a, e));
        json_object_put(a);
        json_object_put(e);
}

static void test_call_raw(void **state)
{
        struct fake_server *s;
        struct timerd *t = START(raw_script, &s);
        char *reply = NULL;

        (void)state;
        assert_int_equal(timerd_call_raw(t, "org.varlink.service.GetInfo", NULL, &reply), 0);
        assert_json_equal(reply, "{\"vendor\":\"timerd\",\"interfaces\":[\"io.timerd.Timer\"]}");
        free(reply);

        /* An error's parameters say what went wrong. */
        assert_int_equal(timerd_call_raw(t, "io.timerd.Timer.Get", "{\"name\":\"x\"}", &reply),
                         -TIMERD_E_NOT_FOUND);
        assert_json_equal(reply, "{\"name\":\"x\"}");
        free(reply);

        assert_int_equal(timerd_call_raw(t, "io.timerd.Timer.Get", "{\"name\":", &reply), -EINVAL);
        assert_null(reply);
        assert_int_equal(timerd_call_raw(t, "io.timerd.Timer.Get", "[1]", &reply), -EINVAL);
        assert_null(reply);
        assert_int_equal(timerd_call_raw(t, "io.timerd.Timer.Get", "{} {}", &reply), -EINVAL);
        assert_int_equal(timerd_call_raw(t, "io.timerd.Timer.Get", "{}x", &reply), -EINVAL);
        assert_int_equal(timerd_call_raw(t, "io.timerd.Timer.Get", "", &reply), -EINVAL);
        assert_int_equal(timerd_call_raw(t, "io.timerd.Timer.List", " {\"all\": true}\n", NULL), 0);
        finish(t, s);
}

#define CONTINUATION "{\"epoch\":5,\"nonce\":6,\"cycle\":1}"
#define OBSERVATION                                                                                \
        "{\"continuation\":" CONTINUATION ",\"lease\":9,\"remaining_usec\":1500,"                  \
        "\"timer\":\"poke\",\"alarms\":2}"

static const struct fake_step sleep_script[] = {
    FAKE_CALL("{\"method\":\"io.timerd.Timer.Sleep\",\"parameters\":{\"clock\":\"boottime\","
              "\"for_usec\":2000}}"),
    FAKE_REPLY("{\"parameters\":{\"elapsed\":true}}"),
    FAKE_CALL("{\"method\":\"io.timerd.Timer.Sleep\",\"parameters\":{\"clock\":\"realtime\","
              "\"until_usec\":77}}"),
    FAKE_REPLY("{\"parameters\":{\"elapsed\":false,\"observation\":" OBSERVATION "}}"),
    /* Until an alarm: no deadline, and none left to report. */
    FAKE_CALL("{\"method\":\"io.timerd.Timer.Sleep\",\"parameters\":{\"clock\":\"monotonic\"}}"),
    FAKE_REPLY("{\"parameters\":{\"elapsed\":false,\"observation\":{\"continuation\":" CONTINUATION
               ",\"lease\":9,\"timer\":\"poke\",\"alarms\":1}}}"),
    FAKE_ANY_CALL,
    FAKE_REPLY("{\"error\":\"io.timerd.Timer.ShuttingDown\",\"parameters\":{}}"),
    /* Replies that break the IDL: neither outcome, both, a broken observation. */
    FAKE_ANY_CALL,
    FAKE_REPLY("{\"parameters\":{\"elapsed\":false}}"),
    FAKE_ANY_CALL,
    FAKE_REPLY("{\"parameters\":{\"elapsed\":true,\"observation\":" OBSERVATION "}}"),
    FAKE_ANY_CALL,
    FAKE_REPLY("{\"parameters\":{\"elapsed\":false,\"observation\":{\"continuation\":"
               "{\"epoch\":5},\"lease\":9,\"timer\":\"poke\",\"alarms\":1}}}"),
    FAKE_ANY_CALL,
    FAKE_REPLY("{\"parameters\":{}}"),
};

static void test_sleep(void **state)
{
        const struct timerd_start after = {TIMERD_START_AFTER, 2000};
        const struct timerd_start at = {TIMERD_START_AT, 77};
        const struct timerd_start none = {TIMERD_START_DEFAULT, 0};
        struct timerd_sleep_result result;
        struct fake_server *s;
        struct timerd *t = START(sleep_script, &s);

        (void)state;
        assert_int_equal(timerd_sleep(t, TIMERD_CLOCK_BOOTTIME, &after, &result), 0);
        assert_true(result.elapsed);

        assert_int_equal(timerd_sleep(t, TIMERD_CLOCK_REALTIME, &at, &result), 0);
        assert_false(result.elapsed);
        assert_int_equal(result.observation.continuation.epoch, 5);
        assert_int_equal(result.observation.continuation.nonce, 6);
        assert_int_equal(result.observation.continuation.cycle, 1);
        assert_int_equal(result.observation.lease, 9);
        assert_true(result.observation.has_remaining);
        assert_int_equal(result.observation.remaining_usec, 1500);
        assert_string_equal(result.observation.timer, "poke");
        assert_int_equal(result.observation.alarms, 2);

        assert_int_equal(timerd_sleep(t, TIMERD_CLOCK_MONOTONIC, NULL, &result), 0);
        assert_false(result.observation.has_remaining);
        assert_int_equal(timerd_sleep(t, TIMERD_CLOCK_MONOTONIC, &none, &result),
                         -TIMERD_E_SHUTTING_DOWN);
        for (int i = 0; i < 4; i++)
                assert_int_equal(timerd_sleep(t, TIMERD_CLOCK_MONOTONIC, NULL, &result),
                                 -TIMERD_E_PROTOCOL);

        assert_int_equal(timerd_sleep(NULL, TIMERD_CLOCK_MONOTONIC, NULL, &result), -EINVAL);
        assert_int_equal(timerd_sleep(t, TIMERD_CLOCK_INVALID, NULL, &result), -EINVAL);
        assert_int_equal(timerd_sleep(t, TIMERD_CLOCK_MONOTONIC, NULL, NULL), -EINVAL);
        assert_int_equal(
            timerd_sleep(t, TIMERD_CLOCK_MONOTONIC, &(struct timerd_start){.kind = 7}, &result),
            -EINVAL);
        finish(t, s);
}

static const struct fake_step finish_script[] = {
    FAKE_CALL(
        "{\"method\":\"io.timerd.Timer.Finish\",\"parameters\":{\"continuation\":" CONTINUATION
        ",\"lease\":9,\"action\":\"resume\"}}"),
    FAKE_REPLY("{\"parameters\":{\"ticket\":{\"continuation\":" CONTINUATION ",\"nonce\":77}}}"),
    FAKE_CALL("{\"method\":\"io.timerd.Timer.Resume\",\"parameters\":{\"ticket\":{"
              "\"continuation\":" CONTINUATION ",\"nonce\":77}}}"),
    FAKE_REPLY("{\"parameters\":{\"elapsed\":true}}"),
    FAKE_CALL(
        "{\"method\":\"io.timerd.Timer.Finish\",\"parameters\":{\"continuation\":" CONTINUATION
        ",\"lease\":9,\"action\":\"interrupt\"}}"),
    FAKE_REPLY("{\"parameters\":{\"remaining_usec\":1400}}"),
    FAKE_CALL(
        "{\"method\":\"io.timerd.Timer.Finish\",\"parameters\":{\"continuation\":" CONTINUATION
        ",\"lease\":9,\"action\":\"terminate\"}}"),
    FAKE_REPLY("{\"parameters\":{}}"),
    FAKE_ANY_CALL,
    FAKE_REPLY("{\"error\":\"io.timerd.Timer.ProtocolFailure\",\"parameters\":"
               "{\"kind\":\"identity\"}}"),
    FAKE_ANY_CALL,
    FAKE_REPLY("{\"parameters\":{\"ticket\":{\"continuation\":" CONTINUATION "}}}"),
    FAKE_ANY_CALL,
    FAKE_REPLY("{\"parameters\":{\"remaining_usec\":\"soon\"}}"),
};

static void test_finish_and_resume(void **state)
{
        struct timerd_observation observation = {
            .continuation = {.epoch = 5, .nonce = 6, .cycle = 1},
            .lease = 9,
        };
        struct timerd_finish_result result;
        struct timerd_sleep_result sleep;
        struct fake_server *s;
        struct timerd *t = START(finish_script, &s);

        (void)state;
        assert_int_equal(timerd_finish(t, &observation, TIMERD_FINISH_RESUME, &result), 0);
        assert_true(result.has_ticket);
        assert_false(result.has_remaining);
        assert_int_equal(result.ticket.nonce, 77);
        assert_int_equal(result.ticket.continuation.nonce, 6);
        assert_int_equal(timerd_resume(t, &result.ticket, &sleep), 0);
        assert_true(sleep.elapsed);

        assert_int_equal(timerd_finish(t, &observation, TIMERD_FINISH_INTERRUPT, &result), 0);
        assert_false(result.has_ticket);
        assert_true(result.has_remaining);
        assert_int_equal(result.remaining_usec, 1400);
        assert_int_equal(timerd_finish(t, &observation, TIMERD_FINISH_TERMINATE, &result), 0);
        assert_false(result.has_ticket);
        assert_false(result.has_remaining);

        assert_int_equal(timerd_finish(t, &observation, TIMERD_FINISH_TERMINATE, &result),
                         -TIMERD_E_PROTOCOL_FAILURE);
        assert_string_equal(timerd_last_error_name(t), "io.timerd.Timer.ProtocolFailure");
        assert_int_equal(timerd_finish(t, &observation, TIMERD_FINISH_RESUME, &result),
                         -TIMERD_E_PROTOCOL);
        assert_int_equal(timerd_finish(t, &observation, TIMERD_FINISH_INTERRUPT, &result),
                         -TIMERD_E_PROTOCOL);

        assert_int_equal(timerd_finish(t, &observation, TIMERD_FINISH_MAX, &result), -EINVAL);
        assert_int_equal(timerd_finish(t, &observation, TIMERD_FINISH_INVALID, &result), -EINVAL);
        assert_int_equal(timerd_finish(t, NULL, TIMERD_FINISH_RESUME, &result), -EINVAL);
        assert_int_equal(timerd_finish(t, &observation, TIMERD_FINISH_RESUME, NULL), -EINVAL);
        assert_int_equal(timerd_resume(t, NULL, &sleep), -EINVAL);
        assert_int_equal(timerd_resume(NULL, &result.ticket, &sleep), -EINVAL);
        finish(t, s);
}

#define EVENT_REPLY(kind, extra)                                                                   \
        "{\"parameters\":{\"event\":{\"kind\":\"" kind "\",\"owner\":1000,\"name\":\"a\"," extra   \
        "\"realtime_usec\":42}},\"continues\":true}"

static const struct fake_step subscribe_script[] = {
    FAKE_CALL("{\"method\":\"io.timerd.Service.Subscribe\",\"parameters\":{\"all\":true},"
              "\"more\":true}"),
    FAKE_REPLY(EVENT_REPLY("registered", "\"state\":\"scheduled\",")),
    FAKE_REPLY(EVENT_REPLY("completed", "\"run\":3,\"state\":\"inactive\",")),
    FAKE_REPLY(EVENT_REPLY("removed", "")),
    FAKE_REPLY("{\"error\":\"io.timerd.Timer.ShuttingDown\",\"parameters\":{}}"),
    FAKE_CALL("{\"method\":\"io.timerd.Service.Subscribe\",\"parameters\":{},\"more\":true}"),
    /* An event the library cannot decode ends the stream and the connection. */
    FAKE_REPLY(EVENT_REPLY("exploded", "")),
};

static void test_subscribe(void **state)
{
        struct timerd_event event;
        struct fake_server *s;
        struct timerd *t = START(subscribe_script, &s);

        (void)state;
        assert_int_equal(timerd_subscribe_next(t, &event), -EINVAL);
        assert_int_equal(timerd_subscribe(t, true), 0);
        assert_int_equal(timerd_subscribe(t, true), -EBUSY);
        assert_int_equal(timerd_subscribe_next(t, &event), 0);
        assert_int_equal(event.kind, TIMERD_EVENT_REGISTERED);
        assert_int_equal(event.owner, 1000);
        assert_string_equal(event.name, "a");
        assert_false(event.has_run);
        assert_true(event.has_state);
        assert_int_equal(event.state, TIMERD_STATE_SCHEDULED);
        assert_int_equal(event.realtime_usec, 42);
        assert_int_equal(timerd_subscribe_next(t, &event), 0);
        assert_int_equal(event.kind, TIMERD_EVENT_COMPLETED);
        assert_true(event.has_run);
        assert_int_equal(event.run, 3);
        assert_int_equal(timerd_subscribe_next(t, &event), 0);
        assert_int_equal(event.kind, TIMERD_EVENT_REMOVED);
        assert_false(event.has_state);
        assert_int_equal(timerd_subscribe_next(t, &event), -TIMERD_E_SHUTTING_DOWN);
        assert_int_equal(timerd_subscribe_next(t, &event), -EINVAL);

        assert_int_equal(timerd_subscribe(t, false), 0);
        assert_int_equal(timerd_subscribe_next(t, &event), -TIMERD_E_PROTOCOL);
        assert_int_equal(timerd_subscribe_next(t, &event), -TIMERD_E_DISCONNECTED);
        assert_int_equal(timerd_subscribe(t, false), -TIMERD_E_DISCONNECTED);

        assert_int_equal(timerd_subscribe(NULL, false), -EINVAL);
        assert_int_equal(timerd_subscribe_next(t, NULL), -EINVAL);
        finish(t, s);
}

static void test_event_kind_names(void **state)
{
        static const char *const names[] = {
            "registered", "reconciled",   "scheduled", "rescheduled", "cancelled",
            "kicked",     "unregistered", "fired",     "completed",   "removed",
        };

        (void)state;
        for (int i = 0; i < TIMERD_EVENT_MAX; i++)
                assert_string_equal(timerd_event_kind_to_string((enum timerd_event_kind)i),
                                    names[i]);
        assert_null(timerd_event_kind_to_string(TIMERD_EVENT_MAX));
        assert_null(timerd_event_kind_to_string(TIMERD_EVENT_INVALID));
}

#define STATUS_WITH(capabilities)                                                                  \
        "{\"parameters\":{\"epoch\":\"e\",\"version\":\"0.1.0\",\"backend\":\"io_uring\","         \
        "\"backend_reason\":\"\",\"pid\":42,\"uptime_usec\":1000,\"timers\":5,\"scheduled\":3,"    \
        "\"running\":1,\"failed\":1,\"pending\":2,\"connections\":4,\"waiters\":1,"                \
        "\"clock_changes\":6,\"iterations\":700,\"wakeups\":600,\"firings\":50,\"overruns\":7,"    \
        "\"stale_expiries\":8,\"slowest_iteration_usec\":900,\"lateness\":{\"samples\":50,"        \
        "\"p50_usec\":10,\"p99_usec\":250,\"max_usec\":1000},\"store\":\"ok\"" capabilities "}}"

static const struct fake_step capabilities_script[] = {
    FAKE_ANY_CALL,
    FAKE_REPLY(STATUS_WITH(",\"capabilities\":[\"wake_alarm\",\"signal\"],\"signals_sent\":3,"
                           "\"signals_failed\":1")),
    FAKE_ANY_CALL,
    FAKE_REPLY(STATUS_WITH(",\"capabilities\":{\"wake_alarm\":true,\"signal\":false,"
                           "\"journal\":true}")),
    FAKE_ANY_CALL,
    FAKE_REPLY(STATUS_WITH(",\"capabilities\":null")),
    FAKE_ANY_CALL,
    FAKE_REPLY(STATUS_WITH(",\"capabilities\":\"all\"")),
    FAKE_ANY_CALL,
    FAKE_REPLY(STATUS_WITH(",\"capabilities\":[1]")),
    FAKE_ANY_CALL,
    FAKE_REPLY(STATUS_WITH(",\"capabilities\":{\"signal\":\"yes\"}")),
    FAKE_ANY_CALL,
    /* More than the struct holds is refused, not cut. */
    FAKE_REPLY(
        STATUS_WITH(",\"capabilities\":["
                    "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
                    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\","
                    "\"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
                    "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
                    "bbbbbbbbbbbbb"
                    "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\"]")),
};

/* Status names capabilities and counts signals when the service says them; only in the shapes
 * it may say them. */
static void test_status_capabilities(void **state)
{
        struct timerd_status status;
        struct fake_server *s;
        struct timerd *t = START(capabilities_script, &s);

        (void)state;
        assert_int_equal(timerd_status(t, &status), 0);
        assert_string_equal(status.capabilities, "wake_alarm signal");
        assert_int_equal(status.signals_sent, 3);
        assert_int_equal(status.signals_failed, 1);
        assert_int_equal(timerd_status(t, &status), 0);
        assert_string_equal(status.capabilities, "wake_alarm journal");
        assert_int_equal(status.signals_sent, 0); /* not said: none */
        assert_int_equal(timerd_status(t, &status), 0);
        assert_string_equal(status.capabilities, "");
        for (int i = 0; i < 4; i++)
                assert_int_equal(timerd_status(t, &status), -TIMERD_E_PROTOCOL);
        finish(t, s);
}

/* A timer whose strings are escaped: read as the service meant them (the decoder reads tokens). */
#define ESCAPED_TIMER(calendar)                                                                    \
        "{\"owner\":0,\"name\":\"n\\u0061me\",\"declaration\":{\"policy\":\"calendar\","           \
        "\"calendar\":[\"Mon *-*-* 10:00\"," calendar "],\"cron\":[\"0 5 * * *\"],"                \
        "\"timezone\":\"Europe\\/Berlin\"},\"generation\":1,\"state\":\"inactive\",\"run\":0,"     \
        "\"run_active\":false,\"pending\":false,\"runs\":0,\"consecutive_expected_failures\":0,"   \
        "\"overruns\":0,\"last_duration_usec\":0,\"total_duration_usec\":0,"                       \
        "\"calendar_normalized\":[\"a\\tb\"]}"

static const struct fake_step escaped_script[] = {
    FAKE_ANY_CALL,
    FAKE_REPLY("{\"parameters\":{\"timer\":" ESCAPED_TIMER("\"\\u002a-*-* \\\"x\\\"\"") "}}"),
    FAKE_ANY_CALL,
    /* A C string cannot hold a NUL. */
    FAKE_REPLY("{\"parameters\":{\"timer\":" ESCAPED_TIMER("\"a\\u0000b\"") "}}"),
    FAKE_ANY_CALL,
    FAKE_REPLY("{\"parameters\":{\"timer\":" ESCAPED_TIMER("7") "}}"),
    FAKE_ANY_CALL,
    FAKE_REPLY(STATUS_WITH(",\"capabilities\":{\"w\\u0061ke_alarm\":true,\"sign\\u0061l\":false}")),
};

static void test_escaped_strings(void **state)
{
        struct timerd_status status;
        struct timerd_timer timer;
        struct fake_server *s;
        struct timerd *t = START(escaped_script, &s);

        (void)state;
        assert_int_equal(timerd_get(t, "name", TIMERD_OWNER_SELF, &timer), 0);
        assert_string_equal(timer.name, "name");
        assert_string_equal(timer.declaration.calendar,
                            "Mon *-*-* 10:00\n*-*-* \"x\"\n" TIMERD_CALENDAR_CRON_PREFIX
                            "0 5 * * *");
        assert_string_equal(timer.declaration.timezone, "Europe/Berlin");
        assert_string_equal(timer.calendar_normalized, "a\tb");
        assert_int_equal(timerd_get(t, "name", TIMERD_OWNER_SELF, &timer), -TIMERD_E_PROTOCOL);
        assert_int_equal(timerd_get(t, "name", TIMERD_OWNER_SELF, &timer), -TIMERD_E_PROTOCOL);
        assert_int_equal(timerd_status(t, &status), 0);
        assert_string_equal(status.capabilities, "wake_alarm");
        finish(t, s);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_register),
            cmocka_unit_test(test_register_bad_reply),
            cmocka_unit_test(test_bad_arguments),
            cmocka_unit_test(test_reconcile),
            cmocka_unit_test(test_control_calls),
            cmocka_unit_test(test_get),
            cmocka_unit_test(test_get_broken_timer),
            cmocka_unit_test(test_list),
            cmocka_unit_test(test_list_large),
            cmocka_unit_test(test_list_follows_pages),
            cmocka_unit_test(test_list_page),
            cmocka_unit_test(test_list_page_json),
            cmocka_unit_test(test_wait),
            cmocka_unit_test(test_wait_stream),
            cmocka_unit_test(test_complete),
            cmocka_unit_test(test_status),
            cmocka_unit_test(test_call_raw),
            cmocka_unit_test(test_set_owner),
            cmocka_unit_test(test_sleep),
            cmocka_unit_test(test_finish_and_resume),
            cmocka_unit_test(test_subscribe),
            cmocka_unit_test(test_event_kind_names),
            cmocka_unit_test(test_status_capabilities),
            cmocka_unit_test(test_escaped_strings),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
