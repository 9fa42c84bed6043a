/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * Every bound on what a client may make the service hold, against the real timerd: each is
 * reached exactly, answered with its typed error, changes nothing, and leaves the service (and
 * everyone under the bound) working.
 */

#include <json-c/json.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"
#include "probe.h"
#include "schedstat.h"
#include "wire.h"

/* The service's defaults and what the tests set (README "The service"). */
#define MAX_MESSAGE          4096
#define MAX_DEPTH            16
#define MAX_TIMERS_PER_UID   8
#define MAX_CONNECTIONS      4
#define MAX_PARKED_SESSION   1024 /* main.c setup_core, not configurable */
#define MAX_PARKED_OWNER     65536
#define MAX_OUTPUT           (64 * 1024 * 1024)
#define SLOW_ROUND_TRIP_USEC 1000000

static int setup_limits(void **state)
{
        static const char *const args[] = {"--max-message=4096", "--max-timers-per-owner=8", NULL};
        return harness_setup_with(state, args);
}

static int setup_output(void **state)
{
        static const char *const args[] = {"--max-output=4194304", NULL};
        return harness_setup_with(state, args);
}

static int setup_connections(void **state)
{
        static const char *const args[] = {"--max-connections=4", NULL};
        return harness_setup_with(state, args);
}

static int setup_connections_per_uid(void **state)
{
        static const char *const args[] = {"--max-connections-per-uid=3", NULL};
        return harness_setup_with(state, args);
}

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

/* A Register call of exactly `size` bytes (NUL excluded), padded with whitespace (an unknown
 * parameter would be refused). */
static char *register_of_size(const char *name, size_t size)
{
        const char *head = "{\"method\":\"io.timerd.Timer.Register\",\"parameters\":{\"name\":\"";
        const char *mid = "\",\"declaration\":{\"policy\":\"once\"}";
        const char *tail = "}}";
        size_t fixed = strlen(head) + strlen(name) + strlen(mid) + strlen(tail);
        assert_true(size > fixed);
        char *msg = malloc(size + 1);
        assert_non_null(msg);
        int n = snprintf(msg, size + 1, "%s%s%s", head, name, mid);
        memset(msg + n, ' ', size - fixed);
        strcpy(msg + n + (size - fixed), tail);
        assert_int_equal(strlen(msg), size);
        return msg;
}

static void expect_timer(int fd, const char *name, const char *error)
{
        json_object *r = wire_call(
            fd, "{\"method\":\"io.timerd.Timer.Get\",\"parameters\":{\"name\":\"%s\"}}", name);
        if (error)
                expect_error(r, error);
        else
                expect_success(r);
}

/* --max-message: a request of exactly the bound is served; one byte more is RequestTooLarge
 * (naming the bound), is not carried out, and ends the connection. */
static void test_message_size_is_bounded(void **state)
{
        int fd = harness_raw_connect(*state);
        char *msg = register_of_size("fits", MAX_MESSAGE);
        raw_send(fd, msg, MAX_MESSAGE + 1);
        expect_success(wire_recv(fd));
        free(msg);

        msg = register_of_size("toolarge", MAX_MESSAGE + 1);
        raw_send(fd, msg, MAX_MESSAGE + 2);
        json_object *r = wire_recv(fd);
        assert_int_equal(wire_int(r, "max"), MAX_MESSAGE);
        expect_error(r, "io.timerd.Timer.RequestTooLarge");
        wire_expect_eof(fd);
        close(fd);
        free(msg);

        /* Refused before it was parsed: the timer does not exist; the first one does. */
        fd = harness_raw_connect(*state);
        expect_timer(fd, "toolarge", "io.timerd.Timer.NotFound");
        close(fd);

        /* A message that never ends is refused as soon as it outgrows the bound. */
        fd = harness_raw_connect(*state);
        char *endless = malloc(MAX_MESSAGE + 1);
        assert_non_null(endless);
        memset(endless, ' ', MAX_MESSAGE + 1);
        raw_send(fd, endless, MAX_MESSAGE + 1);
        expect_error(wire_recv(fd), "io.timerd.Timer.RequestTooLarge");
        wire_expect_eof(fd);
        close(fd);
        free(endless);
}

/* A call whose values nest `levels` deep: the call object is level 1, its parameters level 2,
 * and the innermost value, a number, is level `levels` (json-c counts every value). */
static char *nested_register(const char *name, int levels)
{
        char *msg = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&msg, &size);
        assert_non_null(f);
        fprintf(f,
                "{\"method\":\"io.timerd.Timer.Register\",\"parameters\":{\"name\":\"%s\","
                "\"declaration\":{\"policy\":\"once\"},\"pad\":",
                name);
        for (int i = 3; i < levels; i++)
                fputs("{\"a\":", f);
        fputs("0", f);
        for (int i = 3; i < levels; i++)
                fputc('}', f);
        fputs("}}", f);
        fclose(f);
        return msg;
}

/* JSON nested 16 levels is read (and then refused for its unknown parameter, by name: no call
 * of the IDL nests that deep); 17 is InvalidMessage, not carried out, and the connection goes on
 * (the framing is intact). */
static void test_json_depth_is_bounded(void **state)
{
        int fd = harness_raw_connect(*state);
        char *msg = nested_register("deep16", MAX_DEPTH);
        wire_send(fd, "%s", msg);
        json_object *r = wire_recv(fd);
        assert_non_null(wire_string(r, "parameter"));
        assert_string_equal(wire_string(r, "parameter"), "pad");
        expect_error(r, "org.varlink.service.InvalidParameter");
        free(msg);

        msg = nested_register("deep17", MAX_DEPTH + 1);
        wire_send(fd, "%s", msg);
        expect_error(wire_recv(fd), "io.timerd.Timer.InvalidMessage");
        free(msg);

        expect_timer(fd, "deep16", "io.timerd.Timer.NotFound");
        expect_timer(fd, "deep17", "io.timerd.Timer.NotFound");
        close(fd);
}

/* Names are 1..128 bytes of [A-Za-z0-9._:@-], wherever a name is taken. */
static void test_names_are_bounded(void **state)
{
        char name128[TIMERD_NAME_MAX + 1], name129[TIMERD_NAME_MAX + 2];
        memset(name128, 'n', TIMERD_NAME_MAX);
        name128[TIMERD_NAME_MAX] = '\0';
        memset(name129, 'n', TIMERD_NAME_MAX + 1);
        name129[TIMERD_NAME_MAX + 1] = '\0';
        const char *const invalid[] = {name129, "", "a b", "a/b", "\\u00e4", "*", "a\\u0000b"};
        int fd = harness_raw_connect(*state);

        expect_success(wire_call(fd,
                                 "{\"method\":\"io.timerd.Timer.Register\",\"parameters\":{"
                                 "\"name\":\"%s\",\"declaration\":{\"policy\":\"once\"}}}",
                                 name128));
        expect_timer(fd, name128, NULL);
        for (size_t i = 0; i < sizeof(invalid) / sizeof(invalid[0]); i++) {
                const char *n = invalid[i];
                expect_error(wire_call(fd,
                                       "{\"method\":\"io.timerd.Timer.Register\",\"parameters\":{"
                                       "\"name\":\"%s\",\"declaration\":{\"policy\":\"once\"}}}",
                                       n),
                             "io.timerd.Timer.InvalidName");
                expect_timer(fd, n, "io.timerd.Timer.InvalidName");
                expect_error(wire_call(fd,
                                       "{\"method\":\"io.timerd.Timer.Cancel\",\"parameters\":{"
                                       "\"claim\":{\"name\":\"%s\",\"generation\":1}}}",
                                       n),
                             "io.timerd.Timer.InvalidName");
                expect_error(wire_call(fd,
                                       "{\"method\":\"io.timerd.Timer.Wait\",\"parameters\":{"
                                       "\"names\":[\"%s\"],\"timeout_usec\":1}}",
                                       n),
                             "io.timerd.Timer.InvalidName");
        }
        /* Nothing was created by the refused calls. */
        json_object *r = wire_call(fd, "{\"method\":\"io.timerd.Timer.List\"}");
        json_object *params, *timers;
        assert_true(json_object_object_get_ex(r, "parameters", &params));
        assert_true(json_object_object_get_ex(params, "timers", &timers));
        assert_int_equal(json_object_array_length(timers), 1);
        json_object_put(r);
        close(fd);
}

/* One Wait filters on at most 64 names: 64 park, 65 is LimitExceeded (names). */
static void test_wait_names_are_bounded(void **state)
{
        int fd = harness_raw_connect(*state);
        /* The names must be timers that may fire: one that does not exist is NotFound. */
        for (int i = 0; i < 64; i++) {
                json_object *r =
                    wire_call(fd,
                              "{\"method\":\"io.timerd.Timer.Register\",\"parameters\":"
                              "{\"name\":\"w%d\",\"delay_usec\":3600000000,"
                              "\"declaration\":{\"policy\":\"once\"}}}",
                              i);
                assert_null(json_object_object_get(r, "error"));
                json_object_put(r);
        }
        for (int n = 64; n <= 65; n++) {
                char *msg = NULL;
                size_t size = 0;
                FILE *f = open_memstream(&msg, &size);
                assert_non_null(f);
                fputs("{\"method\":\"io.timerd.Timer.Wait\",\"parameters\":{\"timeout_usec\":1000,"
                      "\"names\":[",
                      f);
                for (int i = 0; i < n; i++)
                        fprintf(f, "%s\"w%d\"", i ? "," : "", i);
                fputs("]}}", f);
                fclose(f);
                json_object *r = wire_call(fd, "%s", msg);
                free(msg);
                if (n == 64) {
                        expect_error(r, "io.timerd.Timer.Timeout");
                        continue;
                }
                assert_string_equal(wire_string(r, "limit"), "names");
                assert_int_equal(wire_int(r, "max"), 64);
                expect_error(r, "io.timerd.Timer.LimitExceeded");
        }
        close(fd);
}

static json_object *register_for(int fd, const char *name, uint32_t owner, bool replace)
{
        return wire_call(fd,
                         "{\"method\":\"io.timerd.Timer.Register\",\"parameters\":{\"name\":\"%s\","
                         "\"owner\":%u,\"replace\":%s,\"declaration\":{\"policy\":\"once\"}}}",
                         name, owner, replace ? "true" : "false");
}

/* --max-timers-per-owner: the bound is per owner; replacing never counts; a removal makes room. */
static void test_timers_per_owner_are_bounded(void **state)
{
        const uint32_t owners[] = {0, 64001};
        int fd = harness_raw_connect(*state);
        int64_t t1_generation = -1;
        char name[32];

        for (size_t o = 0; o < 2; o++) {
                for (int i = 0; i < MAX_TIMERS_PER_UID; i++) {
                        snprintf(name, sizeof(name), "t%d", i);
                        json_object *r = register_for(fd, name, owners[o], false);
                        if (o == 0 && i == 1)
                                t1_generation = wire_int(r, "claim.generation");
                        expect_success(r);
                }
                json_object *r = register_for(fd, "one-too-many", owners[o], false);
                assert_string_equal(wire_string(r, "limit"), "timers_per_owner");
                assert_int_equal(wire_int(r, "max"), MAX_TIMERS_PER_UID);
                expect_error(r, "io.timerd.Timer.LimitExceeded");
                expect_success(register_for(fd, "t0", owners[o], true));
        }
        expect_timer(fd, "one-too-many", "io.timerd.Timer.NotFound");

        expect_success(wire_call(fd,
                                 "{\"method\":\"io.timerd.Timer.Unregister\",\"parameters\":{"
                                 "\"claim\":{\"name\":\"t1\",\"generation\":%lld}}}",
                                 (long long)t1_generation));
        expect_success(register_for(fd, "in-its-place", 0, false));
        expect_error(register_for(fd, "one-too-many", 0, false), "io.timerd.Timer.LimitExceeded");

        json_object *st = wire_call(fd, STATUS_CALL);
        assert_int_equal(wire_int(st, "timers"), 2 * MAX_TIMERS_PER_UID);
        json_object_put(st);
        close(fd);
}

/* --max-connections: the connection over the bound is told LimitExceeded and closed; the others
 * keep working, and a freed place can be taken again. */
static void test_connections_are_bounded(void **state)
{
        struct harness *h = *state;
        int held[MAX_CONNECTIONS];

        for (int i = 0; i < MAX_CONNECTIONS; i++) {
                held[i] = harness_raw_connect(h);
                expect_success(wire_call(held[i], STATUS_CALL));
        }
        int over = harness_raw_connect(h);
        json_object *r = wire_recv(over);
        assert_string_equal(wire_string(r, "limit"), "connections");
        assert_int_equal(wire_int(r, "max"), MAX_CONNECTIONS);
        expect_error(r, "io.timerd.Timer.LimitExceeded");
        wire_expect_eof(over);
        close(over);

        for (int i = 0; i < MAX_CONNECTIONS; i++)
                expect_success(wire_call(held[i], STATUS_CALL));
        close(held[0]);
        /* The service notices the hang-up in its own time. */
        int again = -1;
        for (int i = 0; i < 200 && again < 0; i++) {
                int fd = harness_raw_connect(h);
                json_object *reply = wire_call(fd, STATUS_CALL);
                if (!wire_error(reply))
                        again = fd;
                else {
                        close(fd);
                        usleep(10000);
                }
                json_object_put(reply);
        }
        assert_true(again >= 0);
        close(again);
        for (int i = 1; i < MAX_CONNECTIONS; i++)
                close(held[i]);
}

/* One uid cannot take every connection: past its bound it is refused, another uid is not. */
static void test_connections_per_uid_are_bounded(void **state)
{
        struct harness *h = *state;
        int held[3];

        if (getuid() != 0)
                skip();
        for (int i = 0; i < 3; i++) {
                held[i] = harness_raw_connect(h);
                expect_success(wire_call(held[i], STATUS_CALL));
        }
        int over = harness_raw_connect(h);
        json_object *r = wire_recv(over);
        assert_string_equal(wire_string(r, "limit"), "connections_per_uid");
        assert_int_equal(wire_int(r, "max"), 3);
        expect_error(r, "io.timerd.Timer.LimitExceeded");
        wire_expect_eof(over);
        close(over);

        assert_int_equal(chmod(h->dir, 0755), 0);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                if (setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0)
                        _exit(10);
                int fd = harness_raw_connect(h);
                json_object *reply = wire_call(fd, STATUS_CALL);
                _exit(wire_error(reply) ? 11 : 0);
        }
        int status;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
        for (int i = 0; i < 3; i++)
                close(held[i]);
}

/*
 * Park one Sleep continuation on t: an alarm interrupts the Sleep with an observation, resumed
 * with a ticket that is never used. The continuation stays parked (awaiting resume) with no call
 * open, so a connection can hold as many as the bound allows.
 */
static int park_continuation(struct timerd *t)
{
        struct timerd_sleep_result slept;
        struct timerd_finish_result finished;
        int r = timerd_sleep(t, TIMERD_CLOCK_MONOTONIC, NULL, &slept);
        if (r < 0)
                return r;
        assert_false(slept.elapsed);
        r = timerd_finish(t, &slept.observation, TIMERD_FINISH_RESUME, &finished);
        assert_int_equal(r, 0);
        assert_true(finished.has_ticket);
        return 0;
}

/* An alarm on t's connection every 1 ms (the shortest cadence), so each Sleep is soon interrupted.
 */
static void start_alarms(struct timerd *t, const char *name, struct timerd_claim *ret)
{
        struct timerd_declaration d;
        struct timerd_start now = {.kind = TIMERD_START_AFTER, .usec = 0};
        timerd_declaration_init(&d, TIMERD_POLICY_INTERVAL, 1000);
        d.delivery = TIMERD_DELIVERY_ALARM;
        assert_int_equal(timerd_register(t, name, &d, &now, false, ret), 0);
}

static void expect_parked_limit(struct timerd *t, const char *limit, uint64_t max)
{
        char *reply = NULL;
        int r = timerd_call_raw(t, "io.timerd.Timer.Sleep", "{\"for_usec\":1000000}", &reply);
        assert_int_equal(r, -TIMERD_E_LIMIT_EXCEEDED);
        json_object *o = json_tokener_parse(reply);
        json_object *v;
        assert_true(json_object_object_get_ex(o, "limit", &v));
        assert_string_equal(json_object_get_string(v), limit);
        assert_true(json_object_object_get_ex(o, "max", &v));
        assert_int_equal(json_object_get_int64(v), max);
        json_object_put(o);
        free(reply);
        /* libtimerd says the same to a program. */
        uint64_t said = 0;
        assert_string_equal(timerd_last_error_limit(t, &said), limit);
        assert_int_equal(said, max);
}

static uint64_t waiters(struct timerd *t)
{
        struct timerd_status st;
        assert_int_equal(timerd_status(t, &st), 0);
        return st.waiters;
}

/* 1024 parked requests per connection: the next is LimitExceeded (parked_per_session); closing
 * the connection retires them all. */
static void test_parked_requests_per_connection_are_bounded(void **state)
{
        struct harness *h = *state;
        struct timerd *t = harness_connect(h), *other = harness_connect(h);
        struct timerd_claim alarm;

        start_alarms(t, "alarm", &alarm);
        for (int i = 0; i < MAX_PARKED_SESSION; i++)
                assert_int_equal(park_continuation(t), 0);
        expect_parked_limit(t, "parked_per_session", MAX_PARKED_SESSION);
        /* Another connection of the same owner parks on. */
        struct timerd_firing f;
        assert_int_equal(timerd_wait(other, NULL, 0, 1000, &f), -TIMERD_E_TIMEOUT);

        timerd_close(t);
        for (int i = 0; i < 500 && waiters(other) != 0; i++)
                usleep(10000);
        assert_int_equal(waiters(other), 0);
        timerd_close(other);
}

static uint64_t connections(int fd)
{
        json_object *st = wire_call(fd, STATUS_CALL);
        uint64_t n = (uint64_t)wire_int(st, "connections");
        json_object_put(st);
        return n;
}

/*
 * --max-output with replies that are each small: they wait for the iteration's flush instead of
 * being written one by one, and a client that pipelines calls and reads none of the answers is
 * still disconnected once 4 MiB wait for it.
 */
static void test_small_replies_unread_are_bounded(void **state)
{
        enum { N_CALLS = 20000 }; /* Status answers are about 550 B: 11 MB in all */
        struct harness *h = *state;
        int control = harness_raw_connect(h), idle = harness_raw_connect(h);
        int small = 4096;
        assert_int_equal(setsockopt(idle, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small)), 0);
        assert_int_equal(connections(control), 2);

        size_t len = N_CALLS * sizeof(STATUS_CALL), sent = 0;
        char *calls = malloc(len);
        assert_non_null(calls);
        for (int i = 0; i < N_CALLS; i++)
                memcpy(calls + i * sizeof(STATUS_CALL), STATUS_CALL, sizeof(STATUS_CALL));
        /* Until the service hangs up on it. */
        while (sent < len) {
                ssize_t n = send(idle, calls + sent, len - sent, MSG_NOSIGNAL);
                if (n <= 0)
                        break;
                sent += (size_t)n;
        }
        free(calls);

        uint64_t n = 0;
        for (int i = 0; i < 1000 && (n = connections(control)) != 1; i++)
                usleep(10000);
        assert_int_equal(n, 1);
        size_t got = wire_drain_to_eof(idle, WIRE_TIMEOUT_MS);
        assert_true(got < (size_t)4 * 1024 * 1024 + (size_t)1024 * 1024);
        close(idle);
        close(control);
}

/*
 * --max-output: a client that asks for List after List (each a page of 1000 timers, ~430 KB) and
 * reads none of them is disconnected once 4 MiB wait for it. Meanwhile another client's round
 * trips stay fast: the loop never waits for the reader that does not read.
 */
static void test_output_is_bounded_per_connection(void **state)
{
        enum { N_TIMERS = 1000, N_LISTS = 40 };
        struct harness *h = *state;
        int owner = harness_raw_connect(h), control = harness_raw_connect(h);
        wire_bulk_register(owner, "listed", N_TIMERS, "{\"policy\":\"once\"}", WIRE_OWNER_SELF, 0);

        int idle = harness_raw_connect(h);
        /* A small receive buffer: what the kernel holds for it is not what the bound is about. */
        int small = 4096;
        assert_int_equal(setsockopt(idle, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small)), 0);

        struct probe probe;
        probe_start(&probe, h->socket, h->pid);
        uint64_t before = 0, n = 0;
        /* The probe's connection makes four. */
        for (int i = 0; i < 500 && (before = connections(control)) != 4; i++)
                usleep(10000);
        assert_int_equal(before, 4);
        for (int i = 0; i < N_LISTS; i++)
                wire_send(idle, "{\"method\":\"io.timerd.Timer.List\"}");
        /* 10 s for the service to write 4 MiB of pages: not counting its waits for a CPU. */
        struct schedstat_watch dropping;
        schedstat_watch_start(&dropping, h->pid);
        while ((n = connections(control)) != before - 1 &&
               schedstat_watch_usec(&dropping) < 10 * 1000000)
                usleep(10000);
        probe_stop(&probe);

        assert_int_equal(n, before - 1);
        size_t got = wire_drain_to_eof(idle, WIRE_TIMEOUT_MS);
        /* Far from all of it: 40 pages of 1000 timers are 17 MB. */
        assert_true(got < (size_t)MAX_OUTPUT);
        close(idle);
        print_message("probe: %" PRIu64 " round trips, slowest %" PRIu64 " us (%" PRIu64
                      " us less the CPU waits), %" PRIu64 " failed\n",
                      (uint64_t)atomic_load(&probe.calls), probe.max_wall_usec, probe.max_usec,
                      probe.failures);
        assert_int_equal(probe.failures, 0);
        assert_true(probe.max_usec < SLOW_ROUND_TRIP_USEC);

        /* The owner's timers are all there. */
        json_object *st = wire_call(control, STATUS_CALL);
        assert_int_equal(wire_int(st, "timers"), N_TIMERS);
        json_object_put(st);
        close(control);
        close(owner);
}

/* 65536 parked requests per owner, over 64 connections of 1024: the next is LimitExceeded
 * (parked_per_owner), on any connection of that owner; another owner parks on. */
static void test_parked_requests_per_owner_are_bounded(void **state)
{
        struct harness *h = *state;
        struct timerd *conns[MAX_PARKED_OWNER / MAX_PARKED_SESSION];
        const size_t n = sizeof(conns) / sizeof(conns[0]);

        for (size_t c = 0; c < n; c++) {
                struct timerd_claim alarm;
                char name[32];
                snprintf(name, sizeof(name), "alarm-%zu", c);
                conns[c] = harness_connect(h);
                start_alarms(conns[c], name, &alarm);
                for (int i = 0; i < MAX_PARKED_SESSION; i++)
                        assert_int_equal(park_continuation(conns[c]), 0);
                /* Its alarms are not needed any more: spare the service 5000 firings a second. */
                assert_int_equal(timerd_cancel(conns[c], &alarm, NULL), 0);
        }
        struct timerd *last = harness_connect(h);
        expect_parked_limit(last, "parked_per_owner", MAX_PARKED_OWNER);

        char *reply = NULL;
        assert_int_equal(timerd_call_raw(last, "io.timerd.Timer.Sleep",
                                         "{\"owner\":64001,\"for_usec\":1}", &reply),
                         0);
        free(reply);

        timerd_close(last);
        for (size_t c = 0; c < n; c++)
                timerd_close(conns[c]);
}

int main(int argc, char **argv)
{
        /* The default bound of 65536 parked requests per owner takes about 15 s (131,072 round
         * trips) to reach: it runs with the soak tests (tools/soak). */
        const struct CMUnitTest soak[] = {
            cmocka_unit_test_setup_teardown(test_parked_requests_per_owner_are_bounded,
                                            harness_setup, harness_teardown),
        };
        if (argc > 1 && strcmp(argv[1], "--soak") == 0)
                return cmocka_run_group_tests_name("soak", soak, NULL, NULL);

        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_message_size_is_bounded, setup_limits,
                                            harness_teardown),
            cmocka_unit_test_setup_teardown(test_json_depth_is_bounded, setup_limits,
                                            harness_teardown),
            cmocka_unit_test_setup_teardown(test_names_are_bounded, setup_limits, harness_teardown),
            cmocka_unit_test_setup_teardown(test_wait_names_are_bounded, harness_setup,
                                            harness_teardown),
            cmocka_unit_test_setup_teardown(test_timers_per_owner_are_bounded, setup_limits,
                                            harness_teardown),
            cmocka_unit_test_setup_teardown(test_connections_are_bounded, setup_connections,
                                            harness_teardown),
            cmocka_unit_test_setup_teardown(test_connections_per_uid_are_bounded,
                                            setup_connections_per_uid, harness_teardown),
            cmocka_unit_test_setup_teardown(test_parked_requests_per_connection_are_bounded,
                                            harness_setup, harness_teardown),
            cmocka_unit_test_setup_teardown(test_output_is_bounded_per_connection, setup_output,
                                            harness_teardown),
            cmocka_unit_test_setup_teardown(test_small_replies_unread_are_bounded, setup_output,
                                            harness_teardown),
        };
        return cmocka_run_group_tests_name(harness_backend(), tests, NULL, NULL);
}
