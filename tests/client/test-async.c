/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libtimerd's asynchronous mode against a scripted service: answers reach the callbacks of their
 * calls in order, output is buffered and bounded, and every way a connection can break reaches
 * every call in flight exactly once.
 */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "fake-server.h"
#include "timerd/timerd.h"

#define ELEMENTSOF(a) (sizeof(a) / sizeof((a)[0]))
/* Generous: only a lost callback takes this long. */
#define PUMP_TIMEOUT_MSEC 5000

#define EMPTY_REPLY "{\"parameters\":{}}"
#define TOKEN_A     "{\"name\":\"a\",\"generation\":4,\"run\":9}"
#define FIRING(run)                                                                                \
        "{\"parameters\":{\"firing\":{\"token\":{\"name\":\"a\",\"generation\":4,\"run\":" #run    \
        "},\"clock\":\"monotonic\",\"deadline_usec\":1,\"fired_usec\":2,\"overruns\":0}},"         \
        "\"continues\":true}"

/* What the callbacks saw, in the order they ran. */
struct log {
        size_t n;
        int errors[16];
        char text[16][128];
};

static void note(struct log *log, int error, const char *text)
{
        assert_true(log->n < ELEMENTSOF(log->errors));
        log->errors[log->n] = error;
        snprintf(log->text[log->n], sizeof(log->text[0]), "%s", text ? text : "(null)");
        log->n++;
}

static void on_done(struct timerd *t, int error, void *userdata)
{
        const char *name = timerd_last_error_name(t);

        note(userdata, error, name ? name : "");
}

static void on_raw(struct timerd *t, int error, const char *parameters_json, bool continues,
                   void *userdata)
{
        char text[128];

        (void)t;
        snprintf(text, sizeof(text), "%s%s", continues ? "+" : "", parameters_json);
        note(userdata, error, parameters_json ? text : NULL);
}

static void on_claim(struct timerd *t, int error, const struct timerd_claim *claim, void *userdata)
{
        (void)t;
        note(userdata, error, claim ? claim->name : NULL);
}

static void on_firing(struct timerd *t, int error, const struct timerd_firing *firing,
                      void *userdata)
{
        char text[32];

        (void)t;
        if (firing)
                snprintf(text, sizeof(text), "run %llu", (unsigned long long)firing->token.run);
        note(userdata, error, firing ? text : NULL);
}

static void on_status(struct timerd *t, int error, const struct timerd_status *status,
                      void *userdata)
{
        (void)t;
        note(userdata, error, status ? status->epoch : NULL);
}

/* Process until log->n reaches n; returns timerd_process()'s last result. */
static int pump(struct timerd *t, const struct log *log, size_t n)
{
        int r = 0;

        while (log->n < n) {
                struct pollfd p = {.fd = timerd_get_fd(t), .events = (short)timerd_get_events(t)};

                assert_true(p.events != 0);
                if (poll(&p, 1, PUMP_TIMEOUT_MSEC) != 1)
                        fail_msg("only %zu of %zu callbacks came", log->n, n);
                r = timerd_process(t);
                if (r < 0)
                        break;
        }
        return r;
}

static struct timerd *connect_to(const struct fake_server *s)
{
        struct timerd *t = NULL;

        assert_int_equal(timerd_connect(fake_server_path(s), &t), 0);
        return t;
}

#define STATUS_REPLY                                                                               \
        "{\"parameters\":{\"epoch\":\"e1\",\"version\":\"0.1.0\",\"backend\":\"io_uring\","        \
        "\"backend_reason\":\"\",\"pid\":42,\"uptime_usec\":1000,\"timers\":5,\"scheduled\":3,"    \
        "\"running\":1,\"failed\":1,\"pending\":2,\"connections\":4,\"waiters\":1,"                \
        "\"clock_changes\":6,\"iterations\":700,\"wakeups\":600,\"firings\":50,\"overruns\":7,"    \
        "\"stale_expiries\":8,\"slowest_iteration_usec\":900,\"lateness\":{\"samples\":50,"        \
        "\"p50_usec\":10,\"p99_usec\":250,\"max_usec\":1000},\"store\":\"ok\"}}"

static const struct fake_step pipeline_script[] = {
    FAKE_CALL("{\"method\":\"io.timerd.Service.Status\",\"parameters\":{}}"),
    FAKE_CALL("{\"method\":\"io.timerd.Timer.Cancel\",\"parameters\":{\"claim\":{\"name\":\"a\","
              "\"generation\":1}}}"),
    FAKE_CALL("{\"method\":\"org.varlink.service.GetInfo\",\"parameters\":{}}"),
    FAKE_CALL("{\"method\":\"io.timerd.Timer.Register\","
              "\"parameters\":{\"name\":\"a\",\"declaration\":{\"policy\":\"once\","
              "\"handover_usec\":1000}}}"),
    FAKE_REPLY(STATUS_REPLY),
    FAKE_REPLY("{\"error\":\"io.timerd.Timer.NotFound\",\"parameters\":{\"name\":\"a\"}}"),
    FAKE_REPLY("{\"parameters\":{\"vendor\":\"timerd\"}}"),
    /* Not JSON, but one whole message: only its own call fails. */
    FAKE_REPLY("{\"parameters\": {broken"),
    FAKE_CALL("{\"method\":\"io.timerd.Service.Status\",\"parameters\":{}}"),
    FAKE_REPLY(STATUS_REPLY),
};

/* Four calls in flight; the answers come back in order, each to its own callback. */
static void test_pipeline(void **state)
{
        const struct timerd_claim claim = {.name = "a", .generation = 1};
        struct fake_server *s = fake_server_start(pipeline_script, ELEMENTSOF(pipeline_script));
        struct timerd *t = connect_to(s);
        struct timerd_declaration d;
        struct timerd_status status;
        struct log log = {};

        (void)state;
        timerd_declaration_init(&d, TIMERD_POLICY_ONCE, 0);
        assert_int_equal(timerd_in_flight(t), 0);
        assert_int_equal(timerd_status_async(t, on_status, &log), 0);
        assert_int_equal(timerd_cancel_async(t, &claim, NULL, on_done, &log), 0);
        assert_int_equal(timerd_call_async(t, "org.varlink.service.GetInfo", NULL, 0, on_raw, &log),
                         0);
        assert_int_equal(timerd_register_async(t, "a", &d, NULL, false, on_claim, &log), 0);
        assert_int_equal(timerd_in_flight(t), 4);
        assert_int_equal(timerd_status(t, &status), -EBUSY);

        assert_true(pump(t, &log, 4) > 0);
        assert_int_equal(log.n, 4);
        assert_int_equal(log.errors[0], 0);
        assert_string_equal(log.text[0], "e1");
        assert_int_equal(log.errors[1], -TIMERD_E_NOT_FOUND);
        assert_string_equal(log.text[1], "io.timerd.Timer.NotFound");
        assert_int_equal(log.errors[2], 0);
        assert_string_equal(log.text[2], "{\"vendor\":\"timerd\"}");
        assert_int_equal(log.errors[3], -TIMERD_E_PROTOCOL);
        assert_string_equal(log.text[3], "(null)");
        assert_int_equal(timerd_in_flight(t), 0);
        /* Nothing is left buffered, and the connection is still good. */
        assert_int_equal(timerd_get_events(t), POLLIN);
        assert_int_equal(timerd_status_async(t, on_status, &log), 0);
        pump(t, &log, 5);
        assert_int_equal(log.errors[4], 0);

        timerd_close(t);
        fake_server_finish(s);
}

static const struct fake_step hang_up_script[] = {
    FAKE_ANY_CALL, FAKE_ANY_CALL, FAKE_ANY_CALL, FAKE_REPLY(EMPTY_REPLY), FAKE_CLOSE,
};

/* A service that goes away fails every call in flight, once, and the connection stays broken. */
static void test_hang_up(void **state)
{
        const struct timerd_claim claim = {.name = "a", .generation = 1};
        struct fake_server *s = fake_server_start(hang_up_script, ELEMENTSOF(hang_up_script));
        struct timerd *t = connect_to(s);
        struct log log = {};
        int fd = timerd_get_fd(t);

        (void)state;
        for (int i = 0; i < 3; i++)
                assert_int_equal(timerd_cancel_async(t, &claim, NULL, on_done, &log), 0);
        assert_int_equal(pump(t, &log, 3), -TIMERD_E_DISCONNECTED);
        assert_int_equal(log.n, 3);
        assert_int_equal(log.errors[0], 0);
        assert_int_equal(log.errors[1], -TIMERD_E_DISCONNECTED);
        assert_int_equal(log.errors[2], -TIMERD_E_DISCONNECTED);

        /* The fd stays what it was, for the event loop to drop, until timerd_close(). */
        assert_int_equal(timerd_get_fd(t), fd);
        assert_int_equal(timerd_get_events(t), 0);
        assert_int_equal(timerd_process(t), -TIMERD_E_DISCONNECTED);
        assert_int_equal(timerd_cancel_async(t, &claim, NULL, on_done, &log),
                         -TIMERD_E_DISCONNECTED);
        assert_int_equal(timerd_cancel(t, &claim, NULL), -TIMERD_E_DISCONNECTED);
        assert_int_equal(log.n, 3);
        timerd_close(t);
        fake_server_finish(s);
}

static const struct fake_step unasked_script[] = {
    FAKE_ANY_CALL,
    FAKE_RAW(EMPTY_REPLY "\0" EMPTY_REPLY "\0"),
    FAKE_EXPECT_CLOSE,
};

/* An answer to nothing: the service is out of step, the connection is dropped at once. */
static void test_unasked_answer(void **state)
{
        const struct timerd_claim claim = {.name = "a", .generation = 1};
        struct fake_server *s = fake_server_start(unasked_script, ELEMENTSOF(unasked_script));
        struct timerd *t = connect_to(s);
        struct log log = {};

        (void)state;
        assert_int_equal(timerd_cancel_async(t, &claim, NULL, on_done, &log), 0);
        assert_int_equal(pump(t, &log, 1), -TIMERD_E_DISCONNECTED);
        assert_int_equal(log.n, 1);
        assert_int_equal(log.errors[0], 0);
        /* The fake service sees the hang-up while t is still open. */
        fake_server_join(s);
        timerd_close(t);
        fake_server_finish(s);
}

static const struct fake_step single_continues_script[] = {
    FAKE_ANY_CALL,
    FAKE_ANY_CALL,
    FAKE_REPLY("{\"parameters\":{},\"continues\":true}"),
};

/* A call that asked for one answer gets several: the first fails, the rest are disconnected. */
static void test_unasked_continues(void **state)
{
        struct fake_server *s =
            fake_server_start(single_continues_script, ELEMENTSOF(single_continues_script));
        struct timerd *t = connect_to(s);
        struct log log = {};

        (void)state;
        assert_int_equal(timerd_status_async(t, on_status, &log), 0);
        assert_int_equal(timerd_status_async(t, on_status, &log), 0);
        assert_int_equal(pump(t, &log, 2), -TIMERD_E_DISCONNECTED);
        assert_int_equal(log.errors[0], -TIMERD_E_PROTOCOL);
        assert_int_equal(log.errors[1], -TIMERD_E_DISCONNECTED);
        timerd_close(t);
        fake_server_finish(s);
}

static const struct fake_step stream_script[] = {
    FAKE_CALL("{\"method\":\"io.timerd.Timer.Wait\",\"parameters\":{\"names\":[\"a\"]},"
              "\"more\":true}"),
    FAKE_REPLY(FIRING(1)),
    FAKE_REPLY(FIRING(2)),
    FAKE_REPLY("{\"error\":\"io.timerd.Timer.ShuttingDown\",\"parameters\":{}}"),
    /* The stream is over: the connection takes calls again. */
    FAKE_CALL("{\"method\":\"io.timerd.Timer.Wait\",\"parameters\":{},\"more\":true}"),
    FAKE_REPLY(FIRING(3)),
    /* A firing that cannot be decoded ends the stream, and the connection with it. */
    FAKE_REPLY("{\"parameters\":{\"firing\":{}},\"continues\":true}"),
};

static void test_wait_stream(void **state)
{
        const char *const names[] = {"a"};
        struct fake_server *s = fake_server_start(stream_script, ELEMENTSOF(stream_script));
        struct timerd *t = connect_to(s);
        struct log log = {};

        (void)state;
        assert_int_equal(timerd_wait_stream_async(t, names, 1, on_firing, &log), 0);
        /* The stream occupies the connection. */
        assert_int_equal(timerd_status_async(t, on_status, &log), -EBUSY);
        assert_int_equal(timerd_wait_stream_async(t, NULL, 0, on_firing, &log), -EBUSY);
        assert_true(pump(t, &log, 3) > 0);
        assert_string_equal(log.text[0], "run 1");
        assert_string_equal(log.text[1], "run 2");
        assert_int_equal(log.errors[2], -TIMERD_E_SHUTTING_DOWN);
        assert_int_equal(timerd_in_flight(t), 0);

        assert_int_equal(timerd_wait_stream_async(t, NULL, 0, on_firing, &log), 0);
        assert_int_equal(pump(t, &log, 5), -TIMERD_E_DISCONNECTED);
        assert_string_equal(log.text[3], "run 3");
        assert_int_equal(log.errors[4], -TIMERD_E_PROTOCOL);
        assert_int_equal(log.n, 5); /* told once */
        timerd_close(t);
        fake_server_finish(s);
}

static const struct fake_step raw_stream_script[] = {
    FAKE_CALL("{\"method\":\"io.timerd.Service.Subscribe\",\"parameters\":{},\"more\":true}"),
    FAKE_REPLY("{\"parameters\":{\"n\":1},\"continues\":true}"),
    FAKE_REPLY("{\"parameters\":{\"n\":2}}"),
    FAKE_ANY_CALL,
    FAKE_REPLY("{\"error\":\"org.varlink.service.MethodNotFound\",\"parameters\":"
               "{\"method\":\"x.Y\"}}"),
};

/* Any method with a stream of answers: continues tells the last one. */
static void test_raw_stream(void **state)
{
        struct fake_server *s = fake_server_start(raw_stream_script, ELEMENTSOF(raw_stream_script));
        struct timerd *t = connect_to(s);
        struct log log = {};

        (void)state;
        assert_int_equal(timerd_call_async(t, "io.timerd.Service.Subscribe", " {} ",
                                           TIMERD_CALL_MORE, on_raw, &log),
                         0);
        assert_true(pump(t, &log, 2) > 0);
        assert_string_equal(log.text[0], "+{\"n\":1}");
        assert_string_equal(log.text[1], "{\"n\":2}");
        assert_int_equal(timerd_call_async(t, "x.Y", NULL, 0, on_raw, &log), 0);
        pump(t, &log, 3);
        assert_int_equal(log.errors[2], -TIMERD_E_METHOD_NOT_FOUND);
        assert_string_equal(log.text[2], "{\"method\":\"x.Y\"}");

        assert_int_equal(timerd_call_async(t, "x.Y", "[]", 0, on_raw, &log), -EINVAL);
        assert_int_equal(timerd_call_async(t, "x.Y", NULL, 4, on_raw, &log), -EINVAL);
        timerd_close(t);
        fake_server_finish(s);
}

static void close_in_callback(struct timerd *t, int error, void *userdata)
{
        on_done(t, error, userdata);
        timerd_close(t);
        /* Calls on a closing connection fail; they do not touch freed memory. */
        assert_int_equal(timerd_process(t), -EBUSY);
}

static void reconnect_in_callback(struct timerd *t, int error, void *userdata)
{
        on_done(t, error, userdata);
        assert_int_equal(timerd_reconnect(t), -EBUSY);
        assert_int_equal(timerd_process(t), -EBUSY);
}

/* All three answers at once: the connection closes before the third is read. */
static const struct fake_step three_answers_script[] = {
    FAKE_ANY_CALL,
    FAKE_ANY_CALL,
    FAKE_ANY_CALL,
    FAKE_RAW(EMPTY_REPLY "\0" EMPTY_REPLY "\0" EMPTY_REPLY "\0"),
};

/* A callback may close its connection: later calls in flight are dropped without a call. */
static void test_close_in_callback(void **state)
{
        const struct timerd_claim claim = {.name = "a", .generation = 1};
        struct fake_server *s =
            fake_server_start(three_answers_script, ELEMENTSOF(three_answers_script));
        struct timerd *t = connect_to(s);
        struct log log = {};

        (void)state;
        assert_int_equal(timerd_cancel_async(t, &claim, NULL, reconnect_in_callback, &log), 0);
        assert_int_equal(timerd_cancel_async(t, &claim, NULL, close_in_callback, &log), 0);
        assert_int_equal(timerd_cancel_async(t, &claim, NULL, on_done, &log), 0);
        while (log.n < 2) {
                struct pollfd p = {.fd = timerd_get_fd(t), .events = (short)timerd_get_events(t)};

                assert_int_equal(poll(&p, 1, PUMP_TIMEOUT_MSEC), 1);
                assert_true(timerd_process(t) >= 0);
        }
        assert_int_equal(log.n, 2);
        fake_server_finish(s);
}

static const struct fake_step batch_script[] = {
    FAKE_CALL("{\"method\":\"x.A\",\"parameters\":{}}"),
    FAKE_CALL("{\"method\":\"x.B\",\"parameters\":{}}"),
    FAKE_CALL("{\"method\":\"x.C\",\"parameters\":{}}"),
    FAKE_RAW(
        "{\"parameters\":{\"n\":1}}\0{\"parameters\":{\"n\":2}}\0{\"parameters\":{\"n\":3}}\0"),
};

/* A call alone in flight goes out at once; the calls behind it wait for timerd_process() to go
 * out together, and arrive in order. */
static void test_calls_batched(void **state)
{
        struct fake_server *s = fake_server_start(batch_script, ELEMENTSOF(batch_script));
        struct timerd *t = connect_to(s);
        struct log log = {};

        (void)state;
        assert_int_equal(timerd_call_async(t, "x.A", NULL, 0, on_raw, &log), 0);
        assert_int_equal(timerd_get_events(t), POLLIN);
        assert_int_equal(timerd_call_async(t, "x.B", NULL, 0, on_raw, &log), 0);
        assert_int_equal(timerd_call_async(t, "x.C", NULL, 0, on_raw, &log), 0);
        assert_int_equal(timerd_get_events(t), POLLIN | POLLOUT);
        assert_true(pump(t, &log, 3) > 0);
        assert_int_equal(log.n, 3);
        for (size_t i = 0; i < 3; i++) {
                char expected[16];

                snprintf(expected, sizeof(expected), "{\"n\":%zu}", i + 1);
                assert_int_equal(log.errors[i], 0);
                assert_string_equal(log.text[i], expected);
        }
        assert_int_equal(timerd_get_events(t), POLLIN);
        timerd_close(t);
        fake_server_finish(s);
}

/* Three calls, the last two still waiting to be written when the service (playing script) has
 * gone away; then one timerd_process(). What the callbacks saw is in *log. */
static void three_calls_to_a_leaver(const struct fake_step *script, size_t n_steps, struct log *log)
{
        struct fake_server *s = fake_server_start(script, n_steps);
        struct timerd *t = connect_to(s);

        for (int i = 0; i < 3; i++)
                assert_int_equal(timerd_call_async(t, "x.Y", NULL, 0, on_raw, log), 0);
        assert_int_equal(timerd_get_events(t), POLLIN | POLLOUT);
        fake_server_join(s);
        assert_int_equal(timerd_process(t), -TIMERD_E_DISCONNECTED);
        /* Each callback ran once: nothing is left to fail. */
        assert_int_equal(log->n, 3);
        assert_int_equal(timerd_process(t), -TIMERD_E_DISCONNECTED);
        assert_int_equal(log->n, 3);
        timerd_close(t);
        fake_server_finish(s);
}

static const struct fake_step hang_up_after_one_script[] = {
    FAKE_ANY_CALL,
    FAKE_CLOSE,
};

/* The service goes away while calls wait to be written: the failed write reaches every call's
 * callback, once. */
static void test_send_failure(void **state)
{
        struct log log = {};

        (void)state;
        three_calls_to_a_leaver(hang_up_after_one_script, ELEMENTSOF(hang_up_after_one_script),
                                &log);
        for (size_t i = 0; i < 3; i++)
                assert_int_equal(log.errors[i], -TIMERD_E_DISCONNECTED);
}

static const struct fake_step answer_then_hang_up_script[] = {
    FAKE_ANY_CALL,
    FAKE_REPLY("{\"parameters\":{\"n\":1}}"),
    FAKE_CLOSE,
};

/* The service answers the call it took and goes away with calls still waiting to be written: the
 * answer still reaches its callback, the calls it never took fail. */
static void test_answer_before_hang_up(void **state)
{
        struct log log = {};

        (void)state;
        three_calls_to_a_leaver(answer_then_hang_up_script, ELEMENTSOF(answer_then_hang_up_script),
                                &log);
        assert_int_equal(log.errors[0], 0);
        assert_string_equal(log.text[0], "{\"n\":1}");
        assert_int_equal(log.errors[1], -TIMERD_E_DISCONNECTED);
        assert_int_equal(log.errors[2], -TIMERD_E_DISCONNECTED);
}

static const struct fake_step piled_up_script[] = {
    FAKE_ANY_CALL,
    FAKE_ANY_CALL,
    FAKE_ANY_CALL,
    FAKE_RAW(EMPTY_REPLY "\0" EMPTY_REPLY "\0" EMPTY_REPLY "\0"),
};

/* Calls that pile up past 64 KiB go out without waiting for timerd_process(): the first alone,
 * then the two behind it (40 KiB each) once the second brings the pending bytes past 64 KiB. */
static void test_piled_up_calls_written(void **state)
{
        struct fake_server *s = fake_server_start(piled_up_script, ELEMENTSOF(piled_up_script));
        struct timerd *t = connect_to(s);
        char *parameters = fake_padded_parameters(40 * 1024);
        struct log log = {};

        (void)state;
        for (int i = 0; i < 3; i++)
                assert_int_equal(timerd_call_async(t, "x.Y", parameters, 0, on_raw, &log), 0);
        /* The service took all three before any timerd_process(). */
        fake_server_join(s);
        assert_true(pump(t, &log, 3) != 0);
        for (size_t i = 0; i < 3; i++)
                assert_int_equal(log.errors[i], 0);
        timerd_close(t);
        fake_server_finish(s);
        free(parameters);
}

/* Drive t until *answered reaches n, then nothing is left in flight. */
static void process_until(struct timerd *t, const size_t *answered, size_t n)
{
        while (*answered < n) {
                struct pollfd p = {.fd = timerd_get_fd(t), .events = (short)timerd_get_events(t)};

                assert_int_equal(poll(&p, 1, PUMP_TIMEOUT_MSEC), 1);
                assert_true(timerd_process(t) >= 0);
        }
        assert_int_equal(timerd_in_flight(t), 0);
}

#define HUGE_BATCH_CALLS 40
#define HUGE_BATCH_PAD   (16 * 1024)

static void on_numbered(struct timerd *t, int error, const char *parameters_json, bool continues,
                        void *userdata)
{
        size_t *n = userdata;
        char expected[32];

        (void)t;
        (void)continues;
        snprintf(expected, sizeof(expected), "{\"i\":%zu}", *n);
        assert_int_equal(error, 0);
        assert_string_equal(parameters_json, expected);
        (*n)++;
}

/* More calls than the socket's buffer takes, made at once: all arrive, in order, and each answer
 * reaches its own callback. */
static void test_huge_batch(void **state)
{
        static struct fake_step script[HUGE_BATCH_CALLS + 1];
        static char *calls[HUGE_BATCH_CALLS];
        static char replies[HUGE_BATCH_CALLS * 32];
        char *parameters = malloc(HUGE_BATCH_PAD + 64);
        size_t replies_len = 0, answered = 0;
        struct fake_server *s;
        struct timerd *t;

        (void)state;
        assert_non_null(parameters);
        for (size_t i = 0; i < HUGE_BATCH_CALLS; i++) {
                int n = snprintf(parameters, HUGE_BATCH_PAD + 64, "{\"i\":%zu,\"pad\":\"%0*d\"}", i,
                                 HUGE_BATCH_PAD, 0);

                assert_true(n > 0);
                assert_true(
                    asprintf(&calls[i], "{\"method\":\"x.Y\",\"parameters\":%s}", parameters) > 0);
                script[i] = (struct fake_step)FAKE_CALL(calls[i]);
                replies_len +=
                    (size_t)snprintf(replies + replies_len, sizeof(replies) - replies_len,
                                     "{\"parameters\":{\"i\":%zu}}", i) +
                    1;
        }
        script[HUGE_BATCH_CALLS] = (struct fake_step){FAKE_SEND, replies, replies_len};
        s = fake_server_start(script, ELEMENTSOF(script));
        t = connect_to(s);
        for (size_t i = 0; i < HUGE_BATCH_CALLS; i++) {
                snprintf(parameters, HUGE_BATCH_PAD + 64, "{\"i\":%zu,\"pad\":\"%0*d\"}", i,
                         HUGE_BATCH_PAD, 0);
                assert_int_equal(timerd_call_async(t, "x.Y", parameters, 0, on_numbered, &answered),
                                 0);
        }
        process_until(t, &answered, HUGE_BATCH_CALLS);
        timerd_close(t);
        fake_server_finish(s);
        for (size_t i = 0; i < HUGE_BATCH_CALLS; i++)
                free(calls[i]);
        free(parameters);
}

#define BURST_CALLS 60
#define BURST_BIG   (BURST_CALLS / 2)

/* Reply i's padding: ~1-3 KB, one of 100 KiB. */
static size_t burst_pad(size_t i)
{
        return i == BURST_BIG ? 100 * 1024 : 1000 + 37 * i;
}

static void on_burst_reply(struct timerd *t, int error, const char *parameters_json, bool continues,
                           void *userdata)
{
        size_t *n = userdata;
        char expected[32];
        int len;

        (void)t;
        (void)continues;
        len = snprintf(expected, sizeof(expected), "{\"i\":%zu,\"pad\":\"", *n);
        assert_int_equal(error, 0);
        assert_memory_equal(parameters_json, expected, (size_t)len);
        assert_int_equal(strlen(parameters_json), (size_t)len + burst_pad(*n) + 2);
        (*n)++;
}

/*
 * The replies to pipelined calls sent at once (~190 KB: the reader's buffer grows as its reads
 * fill it, replies straddle the reads), one of them larger than 64 KiB: each reaches its own
 * callback, whole and in call order.
 */
static void test_reply_burst(void **state)
{
        static struct fake_step script[BURST_CALLS + 1];
        size_t size = 256 * 1024, len = 0, answered = 0;
        char *replies = malloc(size);
        struct fake_server *s;
        struct timerd *t;

        (void)state;
        assert_non_null(replies);
        for (size_t i = 0; i < BURST_CALLS; i++) {
                script[i] = (struct fake_step)FAKE_ANY_CALL;
                len += (size_t)snprintf(replies + len, size - len,
                                        "{\"parameters\":{\"i\":%zu,\"pad\":\"%0*d\"}}", i,
                                        (int)burst_pad(i), 0) +
                       1;
                assert_true(len < size);
        }
        script[BURST_CALLS] = (struct fake_step){FAKE_SEND, replies, len};
        s = fake_server_start(script, ELEMENTSOF(script));
        t = connect_to(s);
        for (size_t i = 0; i < BURST_CALLS; i++)
                assert_int_equal(timerd_call_async(t, "x.Y", NULL, 0, on_burst_reply, &answered),
                                 0);
        process_until(t, &answered, BURST_CALLS);
        timerd_close(t);
        fake_server_finish(s);
        free(replies);
}

/* A listening socket nobody accepts from or reads: output piles up. */
static int deaf_service(char path[static 108])
{
        struct sockaddr_un address = {.sun_family = AF_UNIX};
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

        assert_true(fd >= 0);
        snprintf(path, 108, "/tmp/timerd-deaf-%ld", (long)getpid());
        (void)unlink(path);
        strcpy(address.sun_path, path);
        assert_int_equal(bind(fd, (struct sockaddr *)&address, sizeof(address)), 0);
        assert_int_equal(listen(fd, 1), 0);
        return fd;
}

/* Output the socket does not take waits in a buffer (POLLOUT wanted), up to 16 MiB. */
static void test_output_buffered(void **state)
{
        char path[108];
        int listener = deaf_service(path);
        char *big = fake_padded_parameters(1024 * 1024);
        struct timerd *t = NULL;
        struct log log = {};
        size_t queued = 0;
        int r;

        (void)state;
        assert_int_equal(timerd_connect(path, &t), 0);
        assert_int_equal(timerd_get_events(t), POLLIN);
        while ((r = timerd_call_async(t, "x.Y", big, 0, on_raw, &log)) == 0)
                queued++;
        assert_int_equal(r, -ENOBUFS);
        /* 16 MiB buffered, plus what the socket took. */
        assert_true(queued >= 15 && queued < 64);
        assert_int_equal(timerd_get_events(t), POLLIN | POLLOUT);
        assert_int_equal(timerd_in_flight(t), queued);
        assert_int_equal(timerd_process(t), 0);
        assert_int_equal(log.n, 0);
        free(big);

        big = fake_padded_parameters(16 * 1024 * 1024);
        assert_int_equal(timerd_call_async(t, "x.Y", big, 0, on_raw, &log), -EMSGSIZE);
        free(big);

        /* Closing with calls in flight: no callbacks, no leaks. */
        timerd_close(t);
        assert_int_equal(log.n, 0);
        close(listener);
        unlink(path);
}

static void test_bad_arguments(void **state)
{
        const struct timerd_claim claim = {.name = "a", .generation = 1};
        const struct timerd_token token = {.name = "a", .generation = 1, .run = 1};
        struct fake_server *s = fake_server_start(NULL, 0);
        struct timerd *t = connect_to(s);
        struct timerd_declaration d;
        struct log log = {};

        (void)state;
        timerd_declaration_init(&d, TIMERD_POLICY_ONCE, 0);
        assert_int_equal(timerd_process(NULL), -EINVAL);
        assert_int_equal(timerd_get_fd(NULL), -EINVAL);
        assert_int_equal(timerd_get_events(NULL), -EINVAL);
        assert_int_equal(timerd_in_flight(NULL), 0);
        assert_int_equal(timerd_reconnect(NULL), -EINVAL);
        assert_int_equal(timerd_register_async(t, "a", &d, NULL, false, NULL, &log), -EINVAL);
        assert_int_equal(timerd_register_async(t, NULL, &d, NULL, false, on_claim, &log), -EINVAL);
        assert_int_equal(timerd_register_async(NULL, "a", &d, NULL, false, on_claim, &log),
                         -EINVAL);
        d.policy = TIMERD_POLICY_MAX;
        assert_int_equal(timerd_register_async(t, "a", &d, NULL, false, on_claim, &log), -EINVAL);
        assert_int_equal(timerd_cancel_async(t, &claim, &token, on_done, &log), -EINVAL);
        assert_int_equal(timerd_cancel_async(t, NULL, NULL, on_done, &log), -EINVAL);
        assert_int_equal(timerd_cancel_async(t, &claim, NULL, NULL, &log), -EINVAL);
        assert_int_equal(timerd_unregister_async(t, NULL, on_done, &log), -EINVAL);
        assert_int_equal(timerd_kick_async(t, &claim, NULL, NULL, &log), -EINVAL);
        assert_int_equal(timerd_complete_async(t, &token, TIMERD_OUTCOME_NONE,
                                               TIMERD_DIRECTIVE_CONTINUE, 0, on_done, &log),
                         -EINVAL);
        assert_int_equal(timerd_complete_async(t, &token, TIMERD_OUTCOME_SUCCESS,
                                               TIMERD_DIRECTIVE_MAX, 0, on_done, &log),
                         -EINVAL);
        assert_int_equal(timerd_wait_async(t, NULL, 1, 0, on_firing, &log), -EINVAL);
        assert_int_equal(timerd_wait_stream_async(t, NULL, 0, NULL, &log), -EINVAL);
        assert_int_equal(timerd_subscribe_async(t, false, NULL, &log), -EINVAL);
        assert_int_equal(timerd_subscribe_async(NULL, false, NULL, &log), -EINVAL);
        assert_int_equal(timerd_status_async(t, NULL, &log), -EINVAL);
        assert_int_equal(timerd_in_flight(t), 0);
        assert_int_equal(log.n, 0);
        timerd_close(t);
        fake_server_finish(s);
}

static const struct fake_step blocking_stream_script[] = {
    FAKE_ANY_CALL,
    FAKE_REPLY(FIRING(1)),
};

/* A blocking stream is read with timerd_wait_next() only. */
static void test_blocking_stream_refuses_process(void **state)
{
        struct fake_server *s =
            fake_server_start(blocking_stream_script, ELEMENTSOF(blocking_stream_script));
        struct timerd *t = connect_to(s);
        struct timerd_firing firing;
        struct log log = {};

        (void)state;
        assert_int_equal(timerd_wait_stream(t, NULL, 0), 0);
        assert_int_equal(timerd_process(t), -EBUSY);
        assert_int_equal(timerd_status_async(t, on_status, &log), -EBUSY);
        assert_int_equal(timerd_wait_next(t, &firing), 0);
        assert_int_equal(firing.token.run, 1);
        timerd_close(t);
        fake_server_finish(s);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_pipeline),
            cmocka_unit_test(test_hang_up),
            cmocka_unit_test(test_unasked_answer),
            cmocka_unit_test(test_unasked_continues),
            cmocka_unit_test(test_wait_stream),
            cmocka_unit_test(test_raw_stream),
            cmocka_unit_test(test_close_in_callback),
            cmocka_unit_test(test_calls_batched),
            cmocka_unit_test(test_send_failure),
            cmocka_unit_test(test_answer_before_hang_up),
            cmocka_unit_test(test_piled_up_calls_written),
            cmocka_unit_test(test_huge_batch),
            cmocka_unit_test(test_reply_burst),
            cmocka_unit_test(test_output_buffered),
            cmocka_unit_test(test_bad_arguments),
            cmocka_unit_test(test_blocking_stream_refuses_process),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
