/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* Interruptible sleeps against the real timerd: observations, resume tickets, interrupts. */

#include <json-c/json.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"

#define TIMEOUT_MS 10000
#define MS         1000ull

static json_object *call(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Send one call and return its whole reply. */
static json_object *call(int fd, const char *fmt, ...)
{
        char msg[2048], buf[65536];
        va_list ap;

        va_start(ap, fmt);
        int n = vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        assert_true(n > 0 && (size_t)n < sizeof(msg));
        raw_send(fd, msg, (size_t)n + 1);
        long len = raw_recv(fd, buf, sizeof(buf), TIMEOUT_MS);
        assert_true(len >= 0);
        json_object *o = json_tokener_parse(buf);
        assert_non_null(o);
        return o;
}

static json_object *field(json_object *o, const char *path)
{
        char copy[256];
        snprintf(copy, sizeof(copy), "%s", path);
        for (char *save = NULL, *part = strtok_r(copy, ".", &save); part;
             part = strtok_r(NULL, ".", &save)) {
                json_object *next;
                if (!json_object_object_get_ex(o, part, &next))
                        return NULL;
                o = next;
        }
        return o;
}

static const char *error_of(json_object *reply)
{
        json_object *e = field(reply, "error");
        return e ? json_object_get_string(e) : NULL;
}

/* A once alarm, transient or (retained) kept across its connection closing. */
static void register_alarm_for(int fd, const char *name, unsigned long long delay_usec,
                               bool retained)
{
        json_object *r = call(fd,
                              "{\"method\":\"io.timerd.Timer.Register\",\"parameters\":{\"name\":"
                              "\"%s\",\"delay_usec\":%llu,\"declaration\":{\"policy\":\"once\","
                              "\"delivery\":\"alarm\"%s}}}",
                              name, delay_usec, retained ? ",\"lifetime\":\"retained\"" : "");
        assert_null(error_of(r));
        json_object_put(r);
}

static void register_alarm(int fd, const char *name, unsigned long long delay_usec)
{
        register_alarm_for(fd, name, delay_usec, false);
}

/* The observation's continuation and lease, as JSON text for Finish. */
static void observation_of(json_object *reply, char *continuation, size_t size,
                           unsigned long long *lease)
{
        json_object *obs = field(reply, "parameters.observation");
        assert_non_null(obs);
        snprintf(
            continuation, size, "%s",
            json_object_to_json_string_ext(field(obs, "continuation"), JSON_C_TO_STRING_PLAIN));
        *lease = (unsigned long long)json_object_get_int64(field(obs, "lease"));
}

/* Finish(continuation, lease, action): the whole reply. */
static json_object *finish(int fd, const char *continuation, unsigned long long lease,
                           const char *action)
{
        return call(fd,
                    "{\"method\":\"io.timerd.Timer.Finish\",\"parameters\":{\"continuation\":%s,"
                    "\"lease\":%llu,\"action\":\"%s\"}}",
                    continuation, lease, action);
}

/* A 30 s Sleep that the alarm `name` interrupts within `within_ms` of `start`: the reply. */
static json_object *sleep_observes(int fd, const char *name, unsigned long long start,
                                   unsigned long long within_ms)
{
        json_object *r = call(fd, "{\"method\":\"io.timerd.Timer.Sleep\",\"parameters\":"
                                  "{\"for_usec\":30000000}}");
        assert_null(error_of(r));
        assert_string_equal(json_object_get_string(field(r, "parameters.observation.timer")), name);
        assert_true(harness_now_usec() - start < within_ms * MS);
        return r;
}

static void test_sleep_elapses(void **state)
{
        int fd = harness_raw_connect(*state);
        unsigned long long start = harness_now_usec();
        json_object *r = call(fd, "{\"method\":\"io.timerd.Timer.Sleep\",\"parameters\":"
                                  "{\"for_usec\":50000}}");
        assert_null(error_of(r));
        assert_true(json_object_get_boolean(field(r, "parameters.elapsed")));
        assert_true(harness_now_usec() - start >= 50 * MS);
        json_object_put(r);
        close(fd);
}

static void test_observation_resume_keeps_the_original_deadline(void **state)
{
        int fd = harness_raw_connect(*state);
        char continuation[512], ticket[1024];
        unsigned long long lease;

        register_alarm(fd, "poke", 30 * MS);
        unsigned long long start = harness_now_usec();
        json_object *r = call(fd, "{\"method\":\"io.timerd.Timer.Sleep\",\"parameters\":"
                                  "{\"for_usec\":600000}}");
        assert_null(error_of(r));
        assert_false(json_object_get_boolean(field(r, "parameters.elapsed")));
        assert_string_equal(json_object_get_string(field(r, "parameters.observation.timer")),
                            "poke");
        unsigned long long remaining = (unsigned long long)json_object_get_int64(
            field(r, "parameters.observation.remaining_usec"));
        assert_true(remaining > 0 && remaining <= 600 * MS);
        observation_of(r, continuation, sizeof(continuation), &lease);
        json_object_put(r);

        r = finish(fd, continuation, lease, "resume");
        assert_null(error_of(r));
        snprintf(
            ticket, sizeof(ticket), "%s",
            json_object_to_json_string_ext(field(r, "parameters.ticket"), JSON_C_TO_STRING_PLAIN));
        json_object_put(r);

        /* Resumed, it ends at the deadline of the original Sleep, not 600 ms after Resume. */
        r = call(fd, "{\"method\":\"io.timerd.Timer.Resume\",\"parameters\":{\"ticket\":%s}}",
                 ticket);
        assert_null(error_of(r));
        assert_true(json_object_get_boolean(field(r, "parameters.elapsed")));
        unsigned long long took = harness_now_usec() - start;
        assert_true(took >= 600 * MS);
        json_object_put(r);

        /* The ticket was single-use. */
        r = call(fd, "{\"method\":\"io.timerd.Timer.Resume\",\"parameters\":{\"ticket\":%s}}",
                 ticket);
        assert_string_equal(error_of(r), "io.timerd.Timer.ProtocolFailure");
        json_object_put(r);
        close(fd);
}

static void test_observation_interrupt_reports_remaining_time(void **state)
{
        int fd = harness_raw_connect(*state);
        char continuation[512];
        unsigned long long lease;

        register_alarm(fd, "stop", 20 * MS);
        json_object *r = call(fd, "{\"method\":\"io.timerd.Timer.Sleep\",\"parameters\":"
                                  "{\"for_usec\":30000000}}");
        observation_of(r, continuation, sizeof(continuation), &lease);
        json_object_put(r);

        /* A wrong lease changes nothing. */
        r = finish(fd, continuation, lease + 1, "interrupt");
        assert_string_equal(error_of(r), "io.timerd.Timer.ProtocolFailure");
        assert_string_equal(json_object_get_string(field(r, "parameters.kind")), "identity");
        json_object_put(r);

        r = finish(fd, continuation, lease, "interrupt");
        assert_null(error_of(r));
        unsigned long long remaining =
            (unsigned long long)json_object_get_int64(field(r, "parameters.remaining_usec"));
        assert_true(remaining > 20000000ull && remaining <= 30000000ull);
        json_object_put(r);

        /* It is over: a second Finish finds nothing parked. */
        r = finish(fd, continuation, lease, "interrupt");
        assert_string_equal(error_of(r), "io.timerd.Timer.ProtocolFailure");
        assert_string_equal(json_object_get_string(field(r, "parameters.kind")),
                            "unexpected_control");
        json_object_put(r);
        close(fd);
}

static void test_terminate_retires_the_sleep(void **state)
{
        int fd = harness_raw_connect(*state);
        char continuation[512];
        unsigned long long lease;

        register_alarm(fd, "bye", 10 * MS);
        json_object *r = call(fd, "{\"method\":\"io.timerd.Timer.Sleep\",\"parameters\":{}}");
        observation_of(r, continuation, sizeof(continuation), &lease);
        assert_null(field(r, "parameters.observation.remaining_usec"));
        json_object_put(r);
        r = finish(fd, continuation, lease, "terminate");
        assert_null(error_of(r));
        json_object_put(r);

        r = call(fd, "{\"method\":\"io.timerd.Service.Status\"}");
        assert_int_equal(json_object_get_int64(field(r, "parameters.waiters")), 0);
        json_object_put(r);
        close(fd);
}

static void test_alarm_before_sleep_stays_pending(void **state)
{
        int fd = harness_raw_connect(*state);
        register_alarm(fd, "early", 1);
        usleep(100000);
        /* Fired with nobody sleeping: the next Sleep observes it at once. */
        unsigned long long start = harness_now_usec();
        json_object_put(sleep_observes(fd, "early", start, 5000));
        close(fd);
}

/* Get(name): whether a firing is pending, and how many runs were delivered. */
static void assert_timer(int fd, const char *name, bool pending, int64_t runs)
{
        json_object *r = call(fd,
                              "{\"method\":\"io.timerd.Timer.Get\",\"parameters\":{\"name\":"
                              "\"%s\"}}",
                              name);
        assert_null(error_of(r));
        assert_int_equal(json_object_get_boolean(field(r, "parameters.timer.pending")), pending);
        assert_int_equal(json_object_get_int64(field(r, "parameters.timer.runs")), runs);
        json_object_put(r);
}

/* Issue 15 item 1: a retained alarm whose connection is gone interrupts a Sleep of its owner on
 * another connection; fired with no Sleep, it is kept (Get: pending) for the next one. */
static void test_alarm_of_a_gone_connection(void **state)
{
        int fd = harness_raw_connect(*state);
        register_alarm_for(fd, "orphan", 600 * MS, true);
        register_alarm_for(fd, "orphan-kept", 150 * MS, true);
        close(fd);
        usleep(350000);

        fd = harness_raw_connect(*state);
        /* orphan-kept fired while nobody slept: the service holds it, one firing. */
        assert_timer(fd, "orphan-kept", true, 0);
        unsigned long long start = harness_now_usec();
        json_object *r = sleep_observes(fd, "orphan-kept", start, 5000);
        char continuation[256];
        unsigned long long lease;
        observation_of(r, continuation, sizeof(continuation), &lease);
        json_object_put(r);
        r = finish(fd, continuation, lease, "terminate");
        assert_null(error_of(r));
        json_object_put(r);
        assert_timer(fd, "orphan-kept", false, 1);

        /* orphan fires while this Sleep is parked: it interrupts it. */
        json_object_put(sleep_observes(fd, "orphan", start, 10000));
        close(fd);
}

/* Issue 15 item 1: an alarm that fired while its registering connection was open, with no Sleep
 * parked, is kept by the service when that connection closes: a later Sleep of the owner on
 * another connection observes it. */
static void test_alarm_kept_across_its_connection_closing(void **state)
{
        int fd = harness_raw_connect(*state);
        register_alarm_for(fd, "outlives", 50 * MS, true);
        usleep(250000);
        /* Fired, with the registering connection open and no Sleep anywhere. */
        assert_timer(fd, "outlives", true, 0);
        close(fd);

        fd = harness_raw_connect(*state);
        assert_timer(fd, "outlives", true, 0);
        unsigned long long start = harness_now_usec();
        json_object *r = sleep_observes(fd, "outlives", start, 5000);
        assert_int_equal(json_object_get_int64(field(r, "parameters.observation.alarms")), 1);
        json_object_put(r);
        assert_timer(fd, "outlives", false, 1);
        close(fd);
}

static void test_bad_sleep_parameters(void **state)
{
        int fd = harness_raw_connect(*state);
        json_object *r = call(fd, "{\"method\":\"io.timerd.Timer.Sleep\",\"parameters\":"
                                  "{\"for_usec\":1,\"until_usec\":1}}");
        assert_string_equal(error_of(r), "org.varlink.service.InvalidParameter");
        json_object_put(r);
        r = call(fd,
                 "{\"method\":\"io.timerd.Timer.Sleep\",\"parameters\":{\"clock\":\"sundial\"}}");
        assert_string_equal(error_of(r), "org.varlink.service.InvalidParameter");
        json_object_put(r);
        r = call(fd, "{\"method\":\"io.timerd.Timer.Finish\",\"parameters\":{\"continuation\":"
                     "{\"epoch\":1,\"nonce\":1,\"cycle\":1},\"lease\":1,\"action\":\"pause\"}}");
        assert_string_equal(error_of(r), "org.varlink.service.InvalidParameter");
        json_object_put(r);
        close(fd);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_sleep_elapses),
            cmocka_unit_test(test_observation_resume_keeps_the_original_deadline),
            cmocka_unit_test(test_observation_interrupt_reports_remaining_time),
            cmocka_unit_test(test_terminate_retires_the_sleep),
            cmocka_unit_test(test_alarm_before_sleep_stays_pending),
            cmocka_unit_test(test_alarm_of_a_gone_connection),
            cmocka_unit_test(test_alarm_kept_across_its_connection_closing),
            cmocka_unit_test(test_bad_sleep_parameters),
        };
        return cmocka_run_group_tests_name(harness_backend(), tests, harness_setup,
                                           harness_teardown);
}
