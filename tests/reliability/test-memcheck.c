/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * timerd under valgrind's memcheck: every method, each kind of bad input, retained timers (the
 * journal), clients that vanish mid-call, and a clean shutdown. meson runs timerd through
 * memcheck-timerd.sh, which makes any memcheck error, and any leak at exit, an exit status other
 * than 0, which harness_stop() refuses. The sanitizer builds do not run it: valgrind cannot run
 * an AddressSanitizer binary, and ASan covers the same ground there.
 */

#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"
#include "wire.h"

/* Under valgrind everything is slower: generous waits. */
#define MS 1000ull

static void expect_success(json_object *reply)
{
        if (wire_error(reply))
                fail_msg("unexpected error %s", json_object_to_json_string(reply));
        json_object_put(reply);
}

static void expect_error(json_object *reply, const char *error)
{
        const char *e = wire_error(reply);
        if (!e || strcmp(e, error) != 0)
                fail_msg("expected %s, got %s", error, json_object_to_json_string(reply));
        json_object_put(reply);
}

static void every_timer_method(struct timerd *t)
{
        struct timerd_declaration d;
        struct timerd_claim once, dog, tick;
        struct timerd_firing f;
        const struct timerd_start soon = {.kind = TIMERD_START_AFTER, .usec = 10 * MS};
        const struct timerd_start later = {.kind = TIMERD_START_AFTER, .usec = 3600 * 1000 * MS};

        timerd_declaration_init(&d, TIMERD_POLICY_ONCE, 0);
        assert_int_equal(timerd_register(t, "once", &d, &soon, false, &once), 0);
        const char *names[] = {"once"};
        assert_int_equal(timerd_wait(t, names, 1, 10000 * MS, &f), 0);
        assert_int_equal(timerd_schedule(t, NULL, &f.token, &later), 0);
        assert_int_equal(timerd_complete(t, &f.token, TIMERD_OUTCOME_EXPECTED_FAILURE,
                                         TIMERD_DIRECTIVE_CONTINUE, 5),
                         0);
        assert_int_equal(timerd_reschedule(t, &once, NULL, NULL, 0, NULL, NULL), 0);
        assert_int_equal(timerd_cancel(t, &once, NULL), 0);
        assert_int_equal(timerd_unregister(t, &once), 0);

        timerd_declaration_init(&d, TIMERD_POLICY_WATCHDOG, 3600 * 1000 * MS);
        assert_int_equal(timerd_register(t, "dog", &d, NULL, false, &dog), 0);
        assert_int_equal(timerd_kick(t, &dog, NULL, NULL), 0);
        timerd_declaration_init(&d, TIMERD_POLICY_INTERVAL, 20 * MS);
        assert_int_equal(timerd_register(t, "tick", &d, NULL, false, &tick), 0);
        /* A stream's run is left open: closing the connection ends it (expected failure). */
        assert_int_equal(timerd_wait_stream(t, (const char *[]){"tick"}, 1), 0);
        assert_int_equal(timerd_wait_next(t, &f), 0);
        timerd_close(t);
}

static void retained_and_reconciled(struct timerd *t)
{
        struct timerd_declaration d;
        struct timerd_claim kept;
        struct timerd_timer info, *all;
        struct timerd_status st;
        bool created;

        timerd_declaration_init(&d, TIMERD_POLICY_AFTER_COMPLETION, 3600 * 1000 * MS);
        d.lifetime = TIMERD_LIFETIME_RETAINED;
        assert_int_equal(
            timerd_reconcile(t, "kept", &d, TIMERD_DESIRED_SCHEDULED, 0, &kept, &created), 0);
        assert_true(created);
        assert_int_equal(timerd_get(t, "kept", TIMERD_OWNER_SELF, &info), 0);
        long n = timerd_list(t, TIMERD_OWNER_SELF, true, &all);
        assert_true(n >= 1);
        free(all);
        assert_int_equal(timerd_status(t, &st), 0);
}

static void sleeps_and_alarms(struct timerd *t)
{
        struct timerd_declaration d;
        struct timerd_claim alarm;
        struct timerd_sleep_result slept, again;
        struct timerd_finish_result finished;
        const struct timerd_start now = {.kind = TIMERD_START_AFTER, .usec = 0};
        const struct timerd_start in_a_while = {.kind = TIMERD_START_AFTER, .usec = 60000 * MS};

        timerd_declaration_init(&d, TIMERD_POLICY_INTERVAL, 50 * MS);
        d.delivery = TIMERD_DELIVERY_ALARM;
        assert_int_equal(timerd_register(t, "alarm", &d, &now, false, &alarm), 0);
        assert_int_equal(timerd_sleep(t, TIMERD_CLOCK_MONOTONIC, &in_a_while, &slept), 0);
        assert_false(slept.elapsed);
        assert_int_equal(timerd_finish(t, &slept.observation, TIMERD_FINISH_RESUME, &finished), 0);
        assert_int_equal(timerd_resume(t, &finished.ticket, &again), 0);
        assert_false(again.elapsed);
        assert_int_equal(timerd_finish(t, &again.observation, TIMERD_FINISH_INTERRUPT, &finished),
                         0);
        assert_int_equal(timerd_unregister(t, &alarm), 0);
}

static void bad_input(const struct harness *h)
{
        int fd = harness_raw_connect(h);
        expect_success(wire_call(fd, "{\"method\":\"org.varlink.service.GetInfo\"}"));
        expect_success(wire_call(fd, "{\"method\":\"org.varlink.service.GetInterfaceDescription\","
                                     "\"parameters\":{\"interface\":\"io.timerd.Timer\"}}"));
        expect_error(wire_call(fd, "not json"), "io.timerd.Timer.InvalidMessage");
        expect_error(
            wire_call(fd, "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]"),
            "io.timerd.Timer.InvalidMessage");
        expect_error(wire_call(fd, "{\"method\":\"io.timerd.Timer.Nope\"}"),
                     "org.varlink.service.MethodNotFound");
        expect_error(wire_call(fd, "{\"method\":\"io.timerd.Timer.Register\",\"parameters\":{"
                                   "\"name\":\"bad name\",\"declaration\":{\"policy\":\"once\"}}}"),
                     "io.timerd.Timer.InvalidName");
        expect_error(wire_call(fd, "{\"method\":\"io.timerd.Timer.Complete\",\"parameters\":{"
                                   "\"token\":{\"name\":\"x\",\"generation\":9,\"run\":9},"
                                   "\"outcome\":\"success\"}}"),
                     "io.timerd.Timer.NotFound");
        expect_error(wire_call(fd, "{\"method\":\"io.timerd.Timer.Finish\",\"parameters\":{"
                                   "\"continuation\":{\"epoch\":1,\"nonce\":1,\"cycle\":1},"
                                   "\"lease\":1,\"action\":\"resume\"}}"),
                     "io.timerd.Timer.ProtocolFailure");
        /* Over --max-message: answered, then the connection is closed. */
        char big[70000];
        memset(big, ' ', sizeof(big));
        raw_send(fd, big, sizeof(big));
        expect_error(wire_recv(fd), "io.timerd.Timer.RequestTooLarge");
        wire_expect_eof(fd);
        close(fd);
}

static void clients_that_vanish(const struct harness *h)
{
        /* Mid-call: a parked Wait and a subscription, then the process is killed. */
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                int a = harness_raw_connect(h), b = harness_raw_connect(h);
                wire_send(a, "{\"method\":\"io.timerd.Timer.Wait\",\"parameters\":{}}");
                wire_send(b, "{\"method\":\"io.timerd.Service.Subscribe\",\"more\":true}");
                pause();
                _exit(0);
        }
        usleep(500000);
        assert_int_equal(kill(pid, SIGKILL), 0);
        assert_int_equal(waitpid(pid, NULL, 0), pid);

        /* Mid-reply: a reply the client does not stay for; half a message and a hang-up. */
        for (int i = 0; i < 5; i++) {
                int fd = harness_raw_connect(h);
                wire_send(fd,
                          "{\"method\":\"io.timerd.Timer.List\",\"parameters\":{\"all\":true}}");
                raw_send(fd, "{\"method\":\"io.ti", 16);
                close(fd);
        }
}

/* A parked Wait and a subscription are open when the service stops: both are answered
 * ShuttingDown, and memcheck's verdict is timerd's exit status. */
static void test_memcheck_workout(void **state)
{
        struct harness *h = *state;

        every_timer_method(harness_connect(h));
        struct timerd *t = harness_connect(h);
        retained_and_reconciled(t);
        sleeps_and_alarms(t);
        timerd_close(t);
        bad_input(h);
        clients_that_vanish(h);

        int waiting = harness_raw_connect(h), subscribed = harness_raw_connect(h);
        wire_send(waiting, "{\"method\":\"io.timerd.Timer.Wait\",\"parameters\":{}}");
        wire_send(subscribed, "{\"method\":\"io.timerd.Service.Subscribe\",\"more\":true}");
        usleep(500000);
        harness_stop(h);
        expect_error(wire_recv(waiting), "io.timerd.Timer.ShuttingDown");
        expect_error(wire_recv(subscribed), "io.timerd.Timer.ShuttingDown");
        close(waiting);
        close(subscribed);
}

static int free_harness(void **state)
{
        free(*state);
        return 0;
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_memcheck_workout, harness_setup, free_harness),
        };
        return cmocka_run_group_tests_name(harness_backend(), tests, NULL, NULL);
}
