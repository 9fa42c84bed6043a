/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * Early handover against the real timerd: a notify timer with handover_usec fires that much
 * before its deadline, the firing says the deadline itself, bad handovers are refused with typed
 * errors and change nothing, and Get/List report the field. libtimerd hands the early firing to
 * the program at its deadline, blocking and asynchronously.
 */

#include <json-c/json.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"
#include "schedstat.h"

#define MS         1000ull
#define SEC        1000000ull
#define TIMEOUT_MS 5000
/* How late libtimerd may hand on a held firing before the test calls it wrong: one wake-up of the
 * test's own thread, with room for a sanitized build. What the test's thread and the service
 * waited for a CPU meanwhile is not libtimerd's lateness and comes on top (see waited()). */
#define LATE_BOUND (200 * MS)

/* The time this thread and the service have waited for a CPU (schedstat.h): a counter, whose
 * growth between two instants is the part of a wall-clock interval that the load took. */
static uint64_t waited(const struct harness *h)
{
        uint64_t usec;

        assert_int_equal(schedstat_waited(h->pid, &usec), 0);
        return usec;
}

static void send_msg(int fd, const char *json)
{
        raw_send(fd, json, strlen(json) + 1);
}

/* The next reply, parsed; *ret_usec (may be NULL) gets when it came, on CLOCK_MONOTONIC. */
static json_object *recv_json(int fd, unsigned long long *ret_usec)
{
        char buf[65536];
        long n = raw_recv_reply(fd, buf, sizeof(buf), TIMEOUT_MS);
        json_object *o;

        assert_true(n >= 0);
        if (ret_usec)
                *ret_usec = harness_now_usec();
        o = json_tokener_parse(buf);
        assert_non_null(o);
        return o;
}

static json_object *field(json_object *obj, const char *path)
{
        char key[64];
        const char *dot = strchr(path, '.');
        json_object *v;

        snprintf(key, sizeof(key), "%.*s", dot ? (int)(dot - path) : (int)strlen(path), path);
        if (!json_object_object_get_ex(obj, key, &v))
                fail_msg("no %s in %s", path, json_object_to_json_string(obj));
        return dot ? field(v, dot + 1) : v;
}

static uint64_t u64_at(json_object *obj, const char *path)
{
        return (uint64_t)json_object_get_uint64(field(obj, path));
}

/* A call answered with parameters (returned, the caller puts them). */
static json_object *call(int fd, const char *json)
{
        json_object *reply, *parameters;

        send_msg(fd, json);
        reply = recv_json(fd, NULL);
        if (json_object_object_get_ex(reply, "error", NULL))
                fail_msg("%s: %s", json, json_object_to_json_string(reply));
        parameters = json_object_get(field(reply, "parameters"));
        json_object_put(reply);
        return parameters;
}

/* A call answered with the error `name`; returns the error's parameters (the caller puts them). */
static json_object *call_fails(int fd, const char *json, const char *name)
{
        json_object *reply, *parameters;

        send_msg(fd, json);
        reply = recv_json(fd, NULL);
        assert_string_equal(json_object_get_string(field(reply, "error")), name);
        parameters = json_object_get(field(reply, "parameters"));
        json_object_put(reply);
        return parameters;
}

/* The timer's Get answer (the caller puts it). */
static json_object *get_timer(int fd, const char *name)
{
        char json[256];

        snprintf(json, sizeof(json),
                 "{\"method\":\"io.timerd.Timer.Get\",\"parameters\":{\"name\":\"%s\"}}", name);
        return call(fd, json);
}

/* The firing arrives before the deadline (by up to the handover) and names the deadline. */
static void test_raw_wait_gets_the_firing_early(void **state)
{
        int fd = harness_raw_connect(*state);
        unsigned long long deadline = harness_now_usec() + 1200 * MS, arrived;
        uint64_t waited_before = waited(*state), load;
        json_object *reply, *firing;
        char json[512];

        snprintf(
            json, sizeof(json),
            "{\"method\":\"io.timerd.Timer.Register\",\"parameters\":{\"name\":\"early\","
            "\"start_usec\":%llu,\"declaration\":{\"policy\":\"once\",\"handover_usec\":%llu}}}",
            deadline, SEC);
        json_object_put(call(fd, json));
        send_msg(fd,
                 "{\"method\":\"io.timerd.Timer.Wait\",\"parameters\":{\"names\":[\"early\"]}}");
        reply = recv_json(fd, &arrived);
        load = waited(*state) - waited_before;
        firing = field(reply, "parameters.firing");
        assert_int_equal(u64_at(firing, "deadline_usec"), deadline);
        assert_true(u64_at(firing, "fired_usec") >= deadline - SEC);
        /* The firing is here before its deadline, but for the time the service and this thread
         * waited for a CPU on the way. */
        assert_true(u64_at(firing, "fired_usec") - load < deadline);
        assert_true(arrived >= deadline - SEC);
        assert_true(arrived - load < deadline);
        json_object_put(reply);
        close(fd);
}

/* Each bad handover gets its typed error, and neither a new timer nor a replaced one changes. */
static void test_invalid_handovers_change_nothing(void **state)
{
        static const struct {
                const char *declaration;
                const char *error;
                const char *detail; /* the error's parameter or reason */
        } bad[] = {
            {"{\"policy\":\"once\",\"handover_usec\":1000001}",
             "org.varlink.service.InvalidParameter", "declaration"},
            {"{\"policy\":\"once\",\"delivery\":\"alarm\",\"handover_usec\":10}",
             "org.varlink.service.InvalidParameter", "declaration"},
            {"{\"policy\":\"once\",\"delivery\":\"signal\",\"handover_usec\":10}",
             "org.varlink.service.InvalidParameter", "declaration"},
            {"{\"policy\":\"once\",\"handover_usec\":\"1ms\"}",
             "org.varlink.service.InvalidParameter", "declaration.handover_usec"},
            {"{\"policy\":\"once\",\"handover_usec\":-1}", "org.varlink.service.InvalidParameter",
             "declaration.handover_usec"},
            {"{\"policy\":\"interval\",\"cadence_usec\":1000,\"handover_usec\":1000}",
             "io.timerd.Timer.InvalidSchedule", "handover"},
        };
        int fd = harness_raw_connect(*state);
        json_object *before, *after, *e;
        char json[512];

        json_object_put(call(fd,
                             "{\"method\":\"io.timerd.Timer.Register\",\"parameters\":{\"name\":"
                             "\"kept\",\"delay_usec\":60000000,\"declaration\":{\"policy\":"
                             "\"interval\",\"cadence_usec\":5000,\"handover_usec\":100}}}"));
        before = get_timer(fd, "kept");
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                static const char *const calls[] = {
                    "{\"method\":\"io.timerd.Timer.Register\",\"parameters\":{\"name\":\"%s\","
                    "\"replace\":true,\"declaration\":%s}}",
                    "{\"method\":\"io.timerd.Timer.Reconcile\",\"parameters\":{\"name\":\"%s\","
                    "\"desired\":\"scheduled\",\"declaration\":%s}}",
                };
                for (size_t c = 0; c < 2; c++)
                        for (size_t n = 0; n < 2; n++) {
                                const char *name = n == 0 ? "fresh" : "kept";

                                snprintf(json, sizeof(json), calls[c], name, bad[i].declaration);
                                e = call_fails(fd, json, bad[i].error);
                                json_object_object_foreach(e, key, value)
                                {
                                        (void)key;
                                        assert_non_null(
                                            strstr(json_object_get_string(value), bad[i].detail));
                                }
                                json_object_put(e);
                        }
        }
        /* A new cadence no longer than the handover, likewise. */
        e = call(fd, "{\"method\":\"io.timerd.Timer.Get\",\"parameters\":{\"name\":\"kept\"}}");
        snprintf(json, sizeof(json),
                 "{\"method\":\"io.timerd.Timer.Reschedule\",\"parameters\":{\"claim\":{\"name\":"
                 "\"kept\",\"generation\":%llu},\"delay_usec\":1000,\"cadence_usec\":100}}",
                 (unsigned long long)u64_at(e, "timer.generation"));
        json_object_put(e);
        json_object_put(call_fails(fd, json, "io.timerd.Timer.InvalidSchedule"));

        json_object_put(call_fails(
            fd, "{\"method\":\"io.timerd.Timer.Get\",\"parameters\":{\"name\":\"fresh\"}}",
            "io.timerd.Timer.NotFound"));
        after = get_timer(fd, "kept");
        json_object_object_del(field(before, "timer"), "remaining_usec");
        json_object_object_del(field(after, "timer"), "remaining_usec");
        assert_string_equal(json_object_to_json_string(after), json_object_to_json_string(before));
        json_object_put(before);
        json_object_put(after);
        close(fd);
}

static void test_get_and_list_report_the_handover(void **state)
{
        int fd = harness_raw_connect(*state);
        json_object *timer, *list;

        json_object_put(call(fd,
                             "{\"method\":\"io.timerd.Timer.Register\",\"parameters\":{\"name\":"
                             "\"with\",\"declaration\":{\"policy\":\"once\",\"handover_usec\":"
                             "2500}}}"));
        json_object_put(call(fd,
                             "{\"method\":\"io.timerd.Timer.Register\",\"parameters\":{\"name\":"
                             "\"without\",\"declaration\":{\"policy\":\"once\"}}}"));
        timer = get_timer(fd, "with");
        assert_int_equal(u64_at(timer, "timer.declaration.handover_usec"), 2500);
        json_object_put(timer);
        timer = get_timer(fd, "without");
        assert_int_equal(u64_at(timer, "timer.declaration.handover_usec"), 0);
        json_object_put(timer);

        list = call(fd, "{\"method\":\"io.timerd.Timer.List\",\"parameters\":{}}");
        assert_int_equal(json_object_array_length(field(list, "timers")), 2);
        assert_int_equal(u64_at(json_object_array_get_idx(field(list, "timers"), 0),
                                "declaration.handover_usec"),
                         2500);
        json_object_put(list);
        close(fd);
}

static void register_early(struct timerd *t, const char *name, enum timerd_policy policy,
                           uint64_t cadence, uint64_t handover, uint64_t deadline)
{
        struct timerd_declaration d;
        struct timerd_claim claim;

        timerd_declaration_init(&d, policy, cadence);
        d.handover_usec = handover;
        assert_int_equal(timerd_register(t, name, &d,
                                         &(struct timerd_start){TIMERD_START_AT, deadline}, false,
                                         &claim),
                         0);
}

/* `load`: the CPU waits of the test's thread and the service since before the timer was
 * registered. */
static void assert_at_deadline(const struct timerd_firing *f, uint64_t deadline, uint64_t now,
                               uint64_t load)
{
        assert_int_equal(f->deadline_usec, deadline);
        /* Handed over early, handed on at the deadline. */
        assert_true(f->fired_usec - load < deadline);
        assert_true(now >= deadline);
        assert_true(now - load < deadline + LATE_BOUND);
}

/* timerd_wait() returns the early firing at its deadline, also when that is past its timeout:
 * the timeout bounds the wait for the firing, not the hold. */
static void test_libtimerd_wait_returns_at_the_deadline(void **state)
{
        struct timerd *t = harness_connect(*state), *control = harness_connect(*state);
        uint64_t deadline = harness_now_usec() + 300 * MS, waited_before = waited(*state);
        struct timerd_firing f;
        struct timerd_timer timer;

        register_early(t, "held", TIMERD_POLICY_ONCE, 0, 250 * MS, deadline);
        assert_int_equal(timerd_get(t, "held", TIMERD_OWNER_SELF, &timer), 0);
        assert_int_equal(timer.declaration.handover_usec, 250 * MS);
        assert_int_equal(timerd_wait(t, (const char *[]){"held"}, 1, 200 * MS, &f), 0);
        assert_at_deadline(&f, deadline, harness_now_usec(), waited(*state) - waited_before);
        assert_int_equal(
            timerd_complete(t, &f.token, TIMERD_OUTCOME_SUCCESS, TIMERD_DIRECTIVE_CONTINUE, 0), 0);

        /* A stream: each firing of an interval at its own deadline (its runs completed on a
         * second connection, the stream holds the first). Each deadline is on the interval's
         * grid, after the last one: a period that came while the test had not completed the run
         * yet (a loaded machine) may be held or skipped (interval semantics). */
        deadline = harness_now_usec() + 200 * MS;
        waited_before = waited(*state);
        register_early(control, "tick", TIMERD_POLICY_INTERVAL, 100 * MS, 50 * MS, deadline);
        assert_int_equal(timerd_wait_stream(t, (const char *[]){"tick"}, 1), 0);
        for (uint64_t i = 0, next = 0, period; i < 3; i++, next = period + 1) {
                assert_int_equal(timerd_wait_next(t, &f), 0);
                assert_true(f.deadline_usec >= deadline);
                period = (f.deadline_usec - deadline) / (100 * MS);
                assert_true(period >= next);
                assert_at_deadline(&f, deadline + period * 100 * MS, harness_now_usec(),
                                   waited(*state) - waited_before);
                assert_int_equal(timerd_complete(control, &f.token, TIMERD_OUTCOME_SUCCESS,
                                                 TIMERD_DIRECTIVE_CONTINUE, 0),
                                 0);
        }
        timerd_close(t);
        timerd_close(control);
}

struct held_log {
        const struct harness *h;
        size_t n;
        struct timerd_firing firing[4];
        uint64_t at[4], waited[4];
        int error;
};

static void on_firing(struct timerd *t, int error, const struct timerd_firing *firing,
                      void *userdata)
{
        struct held_log *log = userdata;

        (void)t;
        if (error < 0) {
                log->error = error;
                return;
        }
        assert_true(log->n < 4);
        log->firing[log->n] = *firing;
        log->at[log->n] = harness_now_usec();
        log->waited[log->n] = waited(log->h);
        log->n++;
}

/* The asynchronous mode: the event loop wakes at timerd_get_timeout() and timerd_process() hands
 * each early firing on at its deadline. */
static void test_async_delivers_at_the_deadline(void **state)
{
        struct timerd *waiter = harness_connect(*state);
        struct timerd *control = harness_connect(*state);
        uint64_t deadline = harness_now_usec() + 300 * MS, give_up = deadline + 10 * SEC;
        uint64_t waited_before = waited(*state);
        struct held_log log = {.h = *state};
        bool held = false;

        register_early(control, "a1", TIMERD_POLICY_ONCE, 0, 200 * MS, deadline);
        register_early(control, "a2", TIMERD_POLICY_ONCE, 0, 200 * MS, deadline + 50 * MS);
        assert_int_equal(timerd_wait_stream_async(waiter, NULL, 0, on_firing, &log), 0);
        while (log.n < 2) {
                struct pollfd p = {.fd = timerd_get_fd(waiter),
                                   .events = (short)timerd_get_events(waiter)};
                uint64_t now = harness_now_usec(), wake = give_up;

                assert_true(now < give_up);
                if (timerd_get_timeout(waiter, &wake) > 0) {
                        held = true;
                        assert_true(wake <= deadline + 50 * MS);
                }
                assert_true(poll(&p, 1, wake > now ? (int)((wake - now + MS - 1) / MS) : 0) >= 0);
                assert_true(timerd_process(waiter) >= 0);
        }
        /* Handed over 200 ms early, the firings were held, unless the load (the CPU waits of the
         * test's thread and the service) took that much. */
        assert_true(held || log.waited[1] - waited_before >= 200 * MS);
        assert_int_equal(log.error, 0);
        assert_string_equal(log.firing[0].token.name, "a1");
        assert_at_deadline(&log.firing[0], deadline, log.at[0], log.waited[0] - waited_before);
        assert_string_equal(log.firing[1].token.name, "a2");
        assert_at_deadline(&log.firing[1], deadline + 50 * MS, log.at[1],
                           log.waited[1] - waited_before);
        timerd_close(waiter);
        timerd_close(control);
}

/* A client upgraded to libtimerd's default handover reconciles the retained timer it declared
 * without one: no conflict, the same claim, and the timer takes the caller's handover; a client
 * that opts out (0) gets the exact timer back. */
static void test_reconcile_adopts_the_default(void **state)
{
        struct timerd *t = harness_connect(*state);
        struct timerd_declaration old, d;
        struct timerd_claim first, again;
        struct timerd_timer timer;
        bool created;

        timerd_declaration_init(&old, TIMERD_POLICY_AFTER_COMPLETION, SEC);
        old.lifetime = TIMERD_LIFETIME_RETAINED;
        old.handover_usec = 0;
        assert_int_equal(
            timerd_reconcile(t, "upgraded", &old, TIMERD_DESIRED_SCHEDULED, 0, &first, &created),
            0);
        assert_true(created);
        d = old;
        d.handover_usec = TIMERD_HANDOVER_DEFAULT;
        assert_int_equal(
            timerd_reconcile(t, "upgraded", &d, TIMERD_DESIRED_SCHEDULED, 0, &again, &created), 0);
        assert_false(created);
        assert_int_equal(again.generation, first.generation);
        assert_int_equal(timerd_get(t, "upgraded", TIMERD_OWNER_SELF, &timer), 0);
        assert_int_equal(timer.declaration.handover_usec, TIMERD_HANDOVER_DEFAULT_USEC);
        assert_int_equal(
            timerd_reconcile(t, "upgraded", &old, TIMERD_DESIRED_SCHEDULED, 0, &again, &created),
            0);
        assert_int_equal(timerd_get(t, "upgraded", TIMERD_OWNER_SELF, &timer), 0);
        assert_int_equal(timer.declaration.handover_usec, 0);
        /* Anything else that differs is still a conflict. */
        d.accuracy_usec = 1;
        assert_int_equal(
            timerd_reconcile(t, "upgraded", &d, TIMERD_DESIRED_SCHEDULED, 0, &again, &created),
            -TIMERD_E_RECONCILIATION_CONFLICT);
        assert_int_equal(timerd_unregister(t, &first), 0);
        timerd_close(t);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_raw_wait_gets_the_firing_early, harness_setup,
                                            harness_teardown),
            cmocka_unit_test_setup_teardown(test_invalid_handovers_change_nothing, harness_setup,
                                            harness_teardown),
            cmocka_unit_test_setup_teardown(test_get_and_list_report_the_handover, harness_setup,
                                            harness_teardown),
            cmocka_unit_test_setup_teardown(test_libtimerd_wait_returns_at_the_deadline,
                                            harness_setup, harness_teardown),
            cmocka_unit_test_setup_teardown(test_reconcile_adopts_the_default, harness_setup,
                                            harness_teardown),
            cmocka_unit_test_setup_teardown(test_async_delivers_at_the_deadline, harness_setup,
                                            harness_teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
