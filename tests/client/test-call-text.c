/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The exact text of every call libtimerd makes, byte for byte: the golden texts are what the
 * json-c tree encoder wrote before calls were written field by field (with the default handover
 * of 9a56305 in the four declarations it applies to), so a service (or a varlink
 * peer) that compares or logs requests sees no change. Each call gets an error reply: only what
 * went out is checked here (tests/client/test-calls.c checks what comes back).
 */
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "fake-server.h"
#include "timerd/timerd-test.h"
#include "timerd/timerd.h"

#define ELEMENTSOF(a) (sizeof(a) / sizeof((a)[0]))

#define ERROR_REPLY "{\"error\":\"io.timerd.Timer.NoSuchTimer\",\"parameters\":{}}"

static const struct timerd_claim claim = {.name = "job", .generation = 3};
static const struct timerd_token token = {.name = "job", .generation = 3, .run = 7};

/* Every field that has a wire form set away from its default. */
static void full_declaration(struct timerd_declaration *d)
{
        timerd_declaration_init(d, TIMERD_POLICY_CALENDAR, 0);
        d->clock = TIMERD_CLOCK_REALTIME_ALARM;
        d->lifetime = TIMERD_LIFETIME_RETAINED;
        d->delivery = TIMERD_DELIVERY_SIGNAL;
        d->accuracy_usec = 5;
        d->signal = 10;
        d->catch_up = false;
        d->randomized_delay_usec = 6;
        d->handover_usec = 7;
        d->fixed_random_delay = true;
        snprintf(d->calendar, sizeof(d->calendar), "%s",
                 "Mon *-*-* 10:00\n" TIMERD_CALENDAR_CRON_PREFIX
                 "0 5 * * *\n*-*-* \"x\\y\"\n" TIMERD_CALENDAR_CRON_PREFIX "1 2 3 4 5");
        snprintf(d->timezone, sizeof(d->timezone), "%s", "Europe/Berlin");
}

static void ignore_done(struct timerd *t, int error, void *userdata)
{
        (void)t, (void)error, (void)userdata;
}

static void ignore_claim(struct timerd *t, int error, const struct timerd_claim *c, void *userdata)
{
        (void)t, (void)error, (void)c, (void)userdata;
}

static void ignore_reconcile(struct timerd *t, int error, const struct timerd_claim *c,
                             bool created, void *userdata)
{
        (void)t, (void)error, (void)c, (void)created, (void)userdata;
}

static void ignore_kick(struct timerd *t, int error, uint64_t next, void *userdata)
{
        (void)t, (void)error, (void)next, (void)userdata;
}

static void ignore_firing(struct timerd *t, int error, const struct timerd_firing *f,
                          void *userdata)
{
        (void)t, (void)error, (void)f, (void)userdata;
}

static void ignore_event(struct timerd *t, int error, const struct timerd_event *e, void *userdata)
{
        (void)t, (void)error, (void)e, (void)userdata;
}

static void ignore_status(struct timerd *t, int error, const struct timerd_status *s,
                          void *userdata)
{
        (void)t, (void)error, (void)s, (void)userdata;
}

static void ignore_raw(struct timerd *t, int error, const char *json, bool continues,
                       void *userdata)
{
        (void)t, (void)error, (void)json, (void)continues, (void)userdata;
}

static void register_once(struct timerd *t)
{
        struct timerd_declaration d;
        struct timerd_claim c;

        timerd_declaration_init(&d, TIMERD_POLICY_ONCE, 0);
        (void)timerd_register(t, "job", &d, &(struct timerd_start){TIMERD_START_AFTER, 1000}, false,
                              &c);
}

static void register_full(struct timerd *t)
{
        struct timerd_declaration d;
        struct timerd_claim c;

        full_declaration(&d);
        (void)timerd_register(t, "job", &d, &(struct timerd_start){TIMERD_START_AT, 99}, true, &c);
}

/* A clock is sent when it is not its policy's default: realtime for a calendar, else monotonic. */
static void register_calendar_default_clock(struct timerd *t)
{
        struct timerd_declaration d;
        struct timerd_claim c;

        timerd_declaration_init(&d, TIMERD_POLICY_CALENDAR, 0);
        snprintf(d.calendar, sizeof(d.calendar), "%s", "daily");
        (void)timerd_register(t, "cal", &d, NULL, false, &c);
}

static void register_once_realtime(struct timerd *t)
{
        struct timerd_declaration d;
        struct timerd_claim c;

        timerd_declaration_init(&d, TIMERD_POLICY_ONCE, 0);
        d.clock = TIMERD_CLOCK_REALTIME;
        d.handover_usec = 0;
        (void)timerd_register(t, "job", &d, NULL, false, &c);
}

static void register_async(struct timerd *t)
{
        struct timerd_declaration d;

        timerd_declaration_init(&d, TIMERD_POLICY_INTERVAL, 500);
        (void)timerd_register_async(t, "tick", &d, &(struct timerd_start){TIMERD_START_DEFAULT, 0},
                                    false, ignore_claim, NULL);
}

static void register_as_owner(struct timerd *t)
{
        (void)timerd_set_owner(t, 1000);
        register_once(t);
}

static void reconcile(struct timerd *t)
{
        struct timerd_declaration d;
        struct timerd_claim c;
        bool created;

        timerd_declaration_init(&d, TIMERD_POLICY_WATCHDOG, 2000);
        (void)timerd_reconcile(t, "dog", &d, TIMERD_DESIRED_EXACT, 0, &c, &created);
}

static void reconcile_async(struct timerd *t)
{
        struct timerd_declaration d;

        timerd_declaration_init(&d, TIMERD_POLICY_AFTER_COMPLETION, 3000);
        (void)timerd_reconcile_async(t, "dog", &d, TIMERD_DESIRED_INACTIVE, 42, ignore_reconcile,
                                     NULL);
}

static void schedule_claim(struct timerd *t)
{
        (void)timerd_schedule(t, &claim, NULL, &(struct timerd_start){TIMERD_START_AT, 5});
}

static void schedule_token(struct timerd *t)
{
        (void)timerd_schedule(t, NULL, &token, &(struct timerd_start){TIMERD_START_AFTER, 6});
}

static void reschedule(struct timerd *t)
{
        (void)timerd_reschedule(t, &claim, NULL, &(struct timerd_start){TIMERD_START_AFTER, 6}, 77,
                                NULL, NULL);
}

static void cancel(struct timerd *t)
{
        (void)timerd_cancel(t, NULL, &token);
}

static void cancel_async(struct timerd *t)
{
        (void)timerd_cancel_async(t, &claim, NULL, ignore_done, NULL);
}

static void kick(struct timerd *t)
{
        uint64_t next;

        (void)timerd_kick(t, &claim, NULL, &next);
}

static void kick_async(struct timerd *t)
{
        (void)timerd_kick_async(t, NULL, &token, ignore_kick, NULL);
}

static void unregister(struct timerd *t)
{
        (void)timerd_unregister(t, &claim);
}

static void unregister_async(struct timerd *t)
{
        (void)timerd_unregister_async(t, &claim, ignore_done, NULL);
}

static void acknowledge(struct timerd *t)
{
        (void)timerd_signals_acknowledge(t);
}

static void signal_taken(struct timerd *t)
{
        (void)timerd_signal_taken(t, &(struct timerd_signal){.signo = 14, .generation = 8});
}

static void signal_taken_async(struct timerd *t)
{
        (void)timerd_signal_taken_async(t, &(struct timerd_signal){.signo = 14, .generation = 8},
                                        ignore_done, NULL);
}

static void get_own(struct timerd *t)
{
        struct timerd_timer timer;

        (void)timerd_get(t, "job", TIMERD_OWNER_SELF, &timer);
}

static void get_other(struct timerd *t)
{
        struct timerd_timer timer;

        (void)timerd_set_owner(t, 1000);
        (void)timerd_get(t, "job", 0, &timer);
}

static void complete_result(struct timerd *t)
{
        (void)timerd_complete_result(t, &token, TIMERD_OUTCOME_EXPECTED_FAILURE,
                                     TIMERD_DIRECTIVE_STOP, 1234,
                                     &(struct timerd_run_result){TIMERD_EXIT_EXITED, 3});
}

static void complete(struct timerd *t)
{
        (void)timerd_complete(t, &token, TIMERD_OUTCOME_SUCCESS, TIMERD_DIRECTIVE_CONTINUE, 0);
}

static void complete_async(struct timerd *t)
{
        (void)timerd_complete_async(t, &token, TIMERD_OUTCOME_SUCCESS, TIMERD_DIRECTIVE_CONTINUE, 9,
                                    ignore_done, NULL);
}

static const char *const names[] = {"a", "b.c"};

static void wait_names(struct timerd *t)
{
        struct timerd_firing f;

        (void)timerd_wait(t, names, ELEMENTSOF(names), 250, &f);
}

static void wait_any(struct timerd *t)
{
        struct timerd_firing f;

        (void)timerd_wait(t, NULL, 0, 0, &f);
}

static void wait_stream(struct timerd *t)
{
        struct timerd_firing f;

        if (timerd_wait_stream(t, names, 1) >= 0)
                (void)timerd_wait_next(t, &f);
}

static void wait_async(struct timerd *t)
{
        (void)timerd_wait_async(t, names, ELEMENTSOF(names), 0, ignore_firing, NULL);
}

static void wait_stream_async(struct timerd *t)
{
        (void)timerd_wait_stream_async(t, NULL, 0, ignore_firing, NULL);
}

static void sleep_until(struct timerd *t)
{
        struct timerd_sleep_result s;

        (void)timerd_sleep(t, TIMERD_CLOCK_BOOTTIME, &(struct timerd_start){TIMERD_START_AT, 50},
                           &s);
}

static void sleep_for(struct timerd *t)
{
        struct timerd_sleep_result s;

        (void)timerd_sleep(t, TIMERD_CLOCK_MONOTONIC,
                           &(struct timerd_start){TIMERD_START_AFTER, 60}, &s);
}

static void finish(struct timerd *t)
{
        const struct timerd_observation o = {.continuation = {1, 2, 3}, .lease = 4};
        struct timerd_finish_result f;

        (void)timerd_finish(t, &o, TIMERD_FINISH_RESUME, &f);
}

static void resume(struct timerd *t)
{
        const struct timerd_ticket ticket = {.continuation = {1, 2, 3}, .nonce = 5};
        struct timerd_sleep_result s;

        (void)timerd_resume(t, &ticket, &s);
}

static void list(struct timerd *t)
{
        struct timerd_timer *timers = NULL;

        (void)timerd_list(t, TIMERD_OWNER_SELF, false, &timers);
        free(timers);
}

static void list_page(struct timerd *t)
{
        struct timerd_list_cursor c = {.has_after = true, .after_owner = 0, .after_name = "x"};
        struct timerd_timer *timers = NULL;

        (void)timerd_list_page(t, 12, true, 10, &c, &timers);
        free(timers);
}

static void list_page_json(struct timerd *t)
{
        struct timerd_list_cursor c = {0};
        char *json = NULL;

        (void)timerd_set_owner(t, 1000);
        (void)timerd_list_page_json(t, TIMERD_OWNER_SELF, false, 0, &c, &json);
        free(json);
}

static void status(struct timerd *t)
{
        struct timerd_status s;

        (void)timerd_status(t, &s);
}

static void status_async(struct timerd *t)
{
        (void)timerd_status_async(t, ignore_status, NULL);
}

static void subscribe(struct timerd *t)
{
        struct timerd_event e;

        if (timerd_subscribe(t, true) >= 0)
                (void)timerd_subscribe_next(t, &e);
}

static void subscribe_async(struct timerd *t)
{
        (void)timerd_subscribe_async(t, false, ignore_event, NULL);
}

static void test_advance(struct timerd *t)
{
        (void)timerd_test_advance(t, 1000, NULL);
}

static void test_advance_to(struct timerd *t)
{
        (void)timerd_test_advance_to(t, TIMERD_CLOCK_REALTIME, 2000, NULL);
}

static void test_suspend(struct timerd *t)
{
        (void)timerd_test_suspend(t, 3000, NULL);
}

static void test_set_realtime(struct timerd *t)
{
        (void)timerd_test_set_realtime(t, 4000, NULL);
}

static void test_now(struct timerd *t)
{
        struct timerd_test_clocks c;

        (void)timerd_test_now(t, &c);
}

static void call_raw(struct timerd *t)
{
        char *reply = NULL;

        (void)timerd_call_raw(t, "io.timerd.Timer.Get",
                              "{ \"name\": \"a/b\", \"x\": [1, -2, 2.50, null, true, {}] }",
                              &reply);
        free(reply);
}

static void call_async_raw(struct timerd *t)
{
        (void)timerd_call_async(t, "io.timerd.Timer.Wait", NULL, TIMERD_CALL_MORE, ignore_raw,
                                NULL);
}

struct call_case {
        const char *name;
        void (*make)(struct timerd *t);
        const char *text;
};

#define CASE(f, text)                                                                              \
        {                                                                                          \
#f, f, text                                                                        \
        }

static const struct call_case cases[] = {
    CASE(register_once, "{\"method\":\"io.timerd.Timer.Register\","
                        "\"parameters\":{\"name\":\"job\",\"declaration\":{\"policy\":\"once\","
                        "\"handover_usec\":1000},\"delay_usec\":1000}}"),
    CASE(register_full,
         "{\"method\":\"io.timerd.Timer.Register\",\"parameters\":{\"name\":\"job\","
         "\"declaration\":{\"policy\":\"calendar\",\"clock\":\"realtime_alarm\",\"lifetime\":"
         "\"retained\",\"delivery\":\"signal\",\"accuracy_usec\":5,\"signal\":10,\"catch_up\":"
         "false,\"randomized_delay_usec\":6,\"handover_usec\":7,\"calendar\":[\"Mon *-*-* "
         "10:00\",\"*-*-* \\\"x\\\\y\\\"\"],\"cron\":[\"0 5 * * *\",\"1 2 3 4 "
         "5\"],\"timezone\":\"Europe/"
         "Berlin\",\"fixed_random_delay\":true},\"start_usec\":99,\"replace\":true}}"),
    CASE(register_calendar_default_clock,
         "{\"method\":\"io.timerd.Timer.Register\",\"parameters\":{\"name\":\"cal\","
         "\"declaration\":{\"policy\":\"calendar\",\"handover_usec\":1000,"
         "\"calendar\":[\"daily\"]}}}"),
    CASE(register_once_realtime,
         "{\"method\":\"io.timerd.Timer.Register\",\"parameters\":{\"name\":\"job\","
         "\"declaration\":{\"policy\":\"once\",\"clock\":\"realtime\"}}}"),
    CASE(register_async, "{\"method\":\"io.timerd.Timer.Register\","
                         "\"parameters\":{\"name\":\"tick\","
                         "\"declaration\":{\"policy\":\"interval\",\"cadence_usec\":500}}}"),
    CASE(register_as_owner, "{\"method\":\"io.timerd.Timer.Register\","
                            "\"parameters\":{\"name\":\"job\",\"declaration\":{\"policy\":\"once\","
                            "\"handover_usec\":1000},\"delay_usec\":1000,\"owner\":1000}}"),
    CASE(reconcile, "{\"method\":\"io.timerd.Timer.Reconcile\","
                    "\"parameters\":{\"name\":\"dog\","
                    "\"declaration\":{\"policy\":\"watchdog\",\"cadence_usec\":2000,"
                    "\"handover_usec\":1000},\"desired\":\"exact\",\"deadline_usec\":0}}"),
    CASE(reconcile_async, "{\"method\":\"io.timerd.Timer.Reconcile\","
                          "\"parameters\":{\"name\":\"dog\","
                          "\"declaration\":{\"policy\":\"after_completion\","
                          "\"cadence_usec\":3000,\"handover_usec\":1000},"
                          "\"desired\":\"inactive\",\"deadline_usec\":42}}"),
    CASE(schedule_claim, "{\"method\":\"io.timerd.Timer.Schedule\",\"parameters\":{\"claim\":{"
                         "\"name\":\"job\",\"generation\":3},\"deadline_usec\":5}}"),
    CASE(schedule_token, "{\"method\":\"io.timerd.Timer.Schedule\",\"parameters\":{\"token\":{"
                         "\"name\":\"job\",\"generation\":3,\"run\":7},\"delay_usec\":6}}"),
    CASE(reschedule, "{\"method\":\"io.timerd.Timer.Reschedule\",\"parameters\":{\"claim\":{"
                     "\"name\":\"job\",\"generation\":3},\"delay_usec\":6,\"cadence_usec\":77}}"),
    CASE(cancel, "{\"method\":\"io.timerd.Timer.Cancel\",\"parameters\":{\"token\":{\"name\":"
                 "\"job\",\"generation\":3,\"run\":7}}}"),
    CASE(cancel_async, "{\"method\":\"io.timerd.Timer.Cancel\",\"parameters\":{\"claim\":{\"name\":"
                       "\"job\",\"generation\":3}}}"),
    CASE(kick, "{\"method\":\"io.timerd.Timer.Kick\",\"parameters\":{\"claim\":{\"name\":\"job\","
               "\"generation\":3}}}"),
    CASE(kick_async, "{\"method\":\"io.timerd.Timer.Kick\",\"parameters\":{\"token\":{\"name\":"
                     "\"job\",\"generation\":3,\"run\":7}}}"),
    CASE(unregister, "{\"method\":\"io.timerd.Timer.Unregister\",\"parameters\":{\"claim\":{"
                     "\"name\":\"job\",\"generation\":3}}}"),
    CASE(unregister_async, "{\"method\":\"io.timerd.Timer.Unregister\",\"parameters\":{\"claim\":{"
                           "\"name\":\"job\",\"generation\":3}}}"),
    CASE(acknowledge, "{\"method\":\"io.timerd.Timer.AcknowledgeSignals\",\"parameters\":{}}"),
    CASE(signal_taken, "{\"method\":\"io.timerd.Timer.SignalTaken\",\"parameters\":{\"signal\":14,"
                       "\"generation\":8}}"),
    CASE(signal_taken_async, "{\"method\":\"io.timerd.Timer.SignalTaken\",\"parameters\":{"
                             "\"signal\":14,\"generation\":8}}"),
    CASE(get_own, "{\"method\":\"io.timerd.Timer.Get\",\"parameters\":{\"name\":\"job\"}}"),
    CASE(get_other,
         "{\"method\":\"io.timerd.Timer.Get\",\"parameters\":{\"name\":\"job\",\"owner\":0}}"),
    CASE(complete_result,
         "{\"method\":\"io.timerd.Timer.Complete\",\"parameters\":{\"token\":{\"name\":\"job\","
         "\"generation\":3,\"run\":7},\"outcome\":\"expected_failure\",\"directive\":\"stop\","
         "\"duration_usec\":1234,\"result\":{\"exit\":\"exited\",\"code\":3}}}"),
    CASE(complete,
         "{\"method\":\"io.timerd.Timer.Complete\",\"parameters\":{\"token\":{\"name\":\"job\","
         "\"generation\":3,\"run\":7},\"outcome\":\"success\",\"directive\":\"continue\"}}"),
    CASE(complete_async, "{\"method\":\"io.timerd.Timer.Complete\",\"parameters\":{\"token\":{"
                         "\"name\":\"job\",\"generation\":3,\"run\":7},\"outcome\":\"success\","
                         "\"directive\":\"continue\",\"duration_usec\":9}}"),
    CASE(wait_names, "{\"method\":\"io.timerd.Timer.Wait\",\"parameters\":{\"names\":[\"a\",\"b."
                     "c\"],\"timeout_usec\":250}}"),
    CASE(wait_any, "{\"method\":\"io.timerd.Timer.Wait\",\"parameters\":{}}"),
    CASE(wait_stream,
         "{\"method\":\"io.timerd.Timer.Wait\",\"more\":true,\"parameters\":{\"names\":[\"a\"]}}"),
    CASE(wait_async,
         "{\"method\":\"io.timerd.Timer.Wait\",\"parameters\":{\"names\":[\"a\",\"b.c\"]}}"),
    CASE(wait_stream_async,
         "{\"method\":\"io.timerd.Timer.Wait\",\"more\":true,\"parameters\":{}}"),
    CASE(sleep_until, "{\"method\":\"io.timerd.Timer.Sleep\",\"parameters\":{\"clock\":"
                      "\"boottime\",\"until_usec\":50}}"),
    CASE(sleep_for, "{\"method\":\"io.timerd.Timer.Sleep\",\"parameters\":{\"clock\":\"monotonic\","
                    "\"for_usec\":60}}"),
    CASE(finish, "{\"method\":\"io.timerd.Timer.Finish\",\"parameters\":{\"continuation\":{"
                 "\"epoch\":1,\"nonce\":2,\"cycle\":3},\"lease\":4,\"action\":\"resume\"}}"),
    CASE(resume, "{\"method\":\"io.timerd.Timer.Resume\",\"parameters\":{\"ticket\":{"
                 "\"continuation\":{\"epoch\":1,\"nonce\":2,\"cycle\":3},\"nonce\":5}}}"),
    CASE(list, "{\"method\":\"io.timerd.Timer.List\",\"parameters\":{}}"),
    CASE(list_page, "{\"method\":\"io.timerd.Timer.List\",\"parameters\":{\"owner\":12,\"all\":"
                    "true,\"limit\":10,\"after\":{\"owner\":0,\"name\":\"x\"}}}"),
    CASE(list_page_json, "{\"method\":\"io.timerd.Timer.List\",\"parameters\":{\"owner\":1000}}"),
    CASE(status, "{\"method\":\"io.timerd.Service.Status\",\"parameters\":{}}"),
    CASE(status_async, "{\"method\":\"io.timerd.Service.Status\",\"parameters\":{}}"),
    CASE(
        subscribe,
        "{\"method\":\"io.timerd.Service.Subscribe\",\"more\":true,\"parameters\":{\"all\":true}}"),
    CASE(subscribe_async,
         "{\"method\":\"io.timerd.Service.Subscribe\",\"more\":true,\"parameters\":{}}"),
    CASE(test_advance, "{\"method\":\"io.timerd.Test.Advance\",\"parameters\":{\"usec\":1000}}"),
    CASE(test_advance_to, "{\"method\":\"io.timerd.Test.AdvanceTo\",\"parameters\":{\"usec\":2000,"
                          "\"clock\":\"realtime\"}}"),
    CASE(test_suspend, "{\"method\":\"io.timerd.Test.Suspend\",\"parameters\":{\"usec\":3000}}"),
    CASE(test_set_realtime,
         "{\"method\":\"io.timerd.Test.SetRealtime\",\"parameters\":{\"usec\":4000}}"),
    CASE(test_now, "{\"method\":\"io.timerd.Test.Now\",\"parameters\":{}}"),
    CASE(call_raw, "{\"method\":\"io.timerd.Timer.Get\",\"parameters\":{\"name\":\"a/"
                   "b\",\"x\":[1,-2,2.50,null,true,{}]}}"),
    CASE(call_async_raw, "{\"method\":\"io.timerd.Timer.Wait\",\"more\":true,\"parameters\":{}}"),
};

/* Asynchronous calls: until their answers are in. */
static void pump(struct timerd *t)
{
        while (timerd_in_flight(t) > 0) {
                struct pollfd p = {.fd = timerd_get_fd(t), .events = (short)timerd_get_events(t)};

                assert_int_equal(poll(&p, 1, 5000), 1);
                if (timerd_process(t) < 0)
                        break;
        }
}

static void test_call_texts(void **state)
{
        (void)state;
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                const struct fake_step steps[] = {
                    FAKE_CALL_TEXT(cases[i].text),
                    FAKE_REPLY(ERROR_REPLY),
                };
                struct fake_server *s = fake_server_start(steps, ELEMENTSOF(steps));
                struct timerd *t;

                print_message("%s\n", cases[i].name);
                assert_int_equal(timerd_connect(fake_server_path(s), &t), 0);
                cases[i].make(t);
                pump(t);
                timerd_close(t);
                fake_server_finish(s);
        }
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_call_texts),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
