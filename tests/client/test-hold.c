/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Firings handed over before their deadline, against a scripted service: the blocking waits
 * return them at their deadline on their own clock, the asynchronous mode holds them until
 * timerd_get_timeout() says and timerd_process() finds them due, and a broken connection, the end
 * of a stream or timerd_close() never lose or duplicate one.
 */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <dirent.h>
#include <unistd.h>

#include <cmocka.h>

#include "fake-server.h"
#include "timerd/timerd.h"

#define ELEMENTSOF(a) (sizeof(a) / sizeof((a)[0]))
#define MSEC          1000ULL
#define SEC           1000000ULL
/* Generous: only a lost callback takes this long. */
#define LOOP_TIMEOUT_USEC (5 * SEC)
/* How late a held firing may come back on a shared machine before the test calls it lost. */
#define LATE_BOUND_USEC (500 * MSEC)

static uint64_t now_on(clockid_t clock)
{
        struct timespec ts;

        assert_int_equal(clock_gettime(clock, &ts), 0);
        return (uint64_t)ts.tv_sec * SEC + (uint64_t)ts.tv_nsec / 1000;
}

/* A Wait answer: the firing of run `run` of timer "a", due at `deadline` on `clock`. */
static char *firing_reply(unsigned run, const char *clock, uint64_t deadline, bool continues)
{
        char *text;

        assert_true(
            asprintf(&text,
                     "{\"parameters\":{\"firing\":{\"token\":{\"name\":\"a\",\"generation\":"
                     "4,\"run\":%u},\"clock\":\"%s\",\"deadline_usec\":%llu,"
                     "\"fired_usec\":%llu,\"overruns\":0}}%s}",
                     run, clock, (unsigned long long)deadline, (unsigned long long)deadline - 1,
                     continues ? ",\"continues\":true" : "") > 0);
        return text;
}

/* What the callbacks saw, in the order they ran. */
struct log {
        size_t n;
        int errors[16];
        uint64_t run[16];
        uint64_t deadline[16];
        uint64_t at[16]; /* CLOCK_MONOTONIC when the callback ran */
        bool close;      /* the first callback closes its connection */
};

static void on_firing(struct timerd *t, int error, const struct timerd_firing *firing,
                      void *userdata)
{
        struct log *log = userdata;

        assert_true(log->n < ELEMENTSOF(log->errors));
        assert_true(error < 0 ? firing == NULL : firing != NULL);
        log->errors[log->n] = error;
        log->run[log->n] = firing ? firing->token.run : 0;
        log->deadline[log->n] = firing ? firing->deadline_usec : 0;
        log->at[log->n] = now_on(CLOCK_MONOTONIC);
        log->n++;
        if (log->close)
                timerd_close(t);
}

static void on_status(struct timerd *t, int error, const struct timerd_status *status,
                      void *userdata)
{
        (void)status;
        on_firing(t, error, NULL, userdata);
}

/* The program's event loop: the fd, and the time timerd_get_timeout() names. Runs until log->n
 * reaches n; returns timerd_process()'s last result. */
static int run_loop(struct timerd *t, const struct log *log, size_t n)
{
        uint64_t give_up = now_on(CLOCK_MONOTONIC) + LOOP_TIMEOUT_USEC;
        int r = 0;

        while (log->n < n) {
                struct pollfd p = {.fd = timerd_get_fd(t), .events = (short)timerd_get_events(t)};
                uint64_t now = now_on(CLOCK_MONOTONIC), wake = give_up;

                if (now >= give_up)
                        fail_msg("only %zu of %zu callbacks came", log->n, n);
                if (timerd_get_timeout(t, &wake) > 0 && wake > give_up)
                        wake = give_up;
                /* Rounded up: poll's milliseconds must not wake it early for ever. */
                assert_true(poll(&p, 1, wake > now ? (int)((wake - now + MSEC - 1) / MSEC) : 0) >=
                            0);
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

/* Connect to s, Wait asynchronously, and read the answer, an early firing: it is held. */
static struct timerd *hold_one(const struct fake_server *s, struct log *log)
{
        struct timerd *t = connect_to(s);
        struct pollfd p = {.fd = timerd_get_fd(t), .events = POLLIN};

        assert_int_equal(timerd_wait_async(t, NULL, 0, 0, on_firing, log), 0);
        assert_int_equal(poll(&p, 1, (int)(LOOP_TIMEOUT_USEC / MSEC)), 1);
        assert_int_equal(timerd_process(t), 0);
        assert_int_equal(log->n, 0);
        assert_int_equal(timerd_in_flight(t), 1);
        return t;
}

static void assert_returned_at_deadline(const struct timerd_firing *f, clockid_t clock,
                                        uint64_t deadline)
{
        uint64_t now = now_on(clock);

        assert_int_equal(f->deadline_usec, deadline);
        assert_true(now >= deadline);
        assert_true(now < deadline + LATE_BOUND_USEC);
}

/* timerd_wait() and timerd_wait_next() return an early firing at its deadline, on its clock. */
static void test_blocking_waits_hold(void **state)
{
        uint64_t mono = now_on(CLOCK_MONOTONIC) + 150 * MSEC;
        uint64_t wall = now_on(CLOCK_REALTIME) + 150 * MSEC;
        uint64_t boot = now_on(CLOCK_BOOTTIME) + 150 * MSEC;
        /* Further ahead than any handover: a wall clock set back since, not to be waited for. */
        uint64_t set_back = now_on(CLOCK_REALTIME) + 3600 * SEC;
        char *replies[] = {
            firing_reply(1, "monotonic", mono, false),
            firing_reply(2, "realtime_alarm", wall, false),
            firing_reply(3, "realtime", set_back, false),
            firing_reply(4, "boottime_alarm", boot, true),
            firing_reply(5, "monotonic", mono + 100 * MSEC, true),
        };
        const struct fake_step script[] = {
            FAKE_ANY_CALL,          FAKE_REPLY(replies[0]), FAKE_ANY_CALL,
            FAKE_REPLY(replies[1]), FAKE_ANY_CALL,          FAKE_REPLY(replies[2]),
            FAKE_ANY_CALL,          FAKE_REPLY(replies[3]), FAKE_REPLY(replies[4]),
        };
        struct fake_server *s = fake_server_start(script, ELEMENTSOF(script));
        struct timerd *t = connect_to(s);
        struct timerd_firing f;
        uint64_t before;

        (void)state;
        assert_int_equal(timerd_wait(t, NULL, 0, 0, &f), 0);
        assert_returned_at_deadline(&f, CLOCK_MONOTONIC, mono);
        assert_int_equal(timerd_wait(t, NULL, 0, 0, &f), 0);
        assert_returned_at_deadline(&f, CLOCK_REALTIME, wall);
        before = now_on(CLOCK_MONOTONIC);
        assert_int_equal(timerd_wait(t, NULL, 0, 0, &f), 0);
        assert_int_equal(f.token.run, 3);
        assert_true(now_on(CLOCK_MONOTONIC) - before < LATE_BOUND_USEC);

        assert_int_equal(timerd_wait_stream(t, NULL, 0), 0);
        assert_int_equal(timerd_wait_next(t, &f), 0);
        assert_returned_at_deadline(&f, CLOCK_BOOTTIME, boot);
        assert_int_equal(timerd_wait_next(t, &f), 0);
        assert_returned_at_deadline(&f, CLOCK_MONOTONIC, mono + 100 * MSEC);
        timerd_close(t);
        fake_server_finish(s);
        for (size_t i = 0; i < ELEMENTSOF(replies); i++)
                free(replies[i]);
}

/* The timerfds this process has open (the fake server, a thread of it, opens none). */
static size_t count_timerfds(void)
{
        DIR *d = opendir("/proc/self/fd");
        struct dirent *e;
        size_t n = 0;

        assert_non_null(d);
        while ((e = readdir(d))) {
                char path[300], target[64];
                ssize_t len;

                snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
                len = readlink(path, target, sizeof(target) - 1);
                if (len < 0)
                        continue;
                target[len] = '\0';
                n += strcmp(target, "anon_inode:[timerfd]") == 0;
        }
        closedir(d);
        return n;
}

/* A blocking wait holds each early firing on one timerfd the connection keeps (no timerfd made
 * and closed around each: nothing but the wake-up between the deadline and the return), returns
 * a late one at once without it, and timerd_close() closes it. */
static void test_blocking_hold_keeps_one_timerfd(void **state)
{
        uint64_t first = now_on(CLOCK_MONOTONIC) + 100 * MSEC;
        char *replies[] = {
            firing_reply(1, "monotonic", first, true),
            firing_reply(2, "monotonic", first + 50 * MSEC, true),
            firing_reply(3, "monotonic", first - 90 * MSEC, true),
        };
        const struct fake_step script[] = {
            FAKE_ANY_CALL,          FAKE_REPLY(replies[0]), FAKE_REPLY(replies[1]),
            FAKE_REPLY(replies[2]), FAKE_EXPECT_CLOSE,
        };
        struct fake_server *s = fake_server_start(script, ELEMENTSOF(script));
        size_t before = count_timerfds();
        struct timerd *t = connect_to(s);
        struct timerd_firing f;
        uint64_t start;

        (void)state;
        assert_int_equal(timerd_wait_stream(t, NULL, 0), 0);
        assert_int_equal(timerd_wait_next(t, &f), 0);
        assert_returned_at_deadline(&f, CLOCK_MONOTONIC, first);
        assert_int_equal(count_timerfds(), before + 1);
        assert_int_equal(timerd_wait_next(t, &f), 0);
        assert_returned_at_deadline(&f, CLOCK_MONOTONIC, first + 50 * MSEC);
        assert_int_equal(count_timerfds(), before + 1);
        /* Its deadline passed before it came: handed on at once. */
        start = now_on(CLOCK_MONOTONIC);
        assert_int_equal(timerd_wait_next(t, &f), 0);
        assert_int_equal(f.token.run, 3);
        assert_true(now_on(CLOCK_MONOTONIC) - start < LATE_BOUND_USEC);
        timerd_close(t);
        assert_int_equal(count_timerfds(), before);
        fake_server_finish(s);
        for (size_t i = 0; i < ELEMENTSOF(replies); i++)
                free(replies[i]);
}

/* An early asynchronous firing waits for its deadline; the event loop learns when to wake. */
static void test_async_wait_holds(void **state)
{
        uint64_t deadline = now_on(CLOCK_MONOTONIC) + 200 * MSEC, wake;
        char *reply = firing_reply(1, "monotonic", deadline, false);
        const struct fake_step script[] = {FAKE_ANY_CALL, FAKE_REPLY(reply), FAKE_EXPECT_CLOSE};
        struct fake_server *s = fake_server_start(script, ELEMENTSOF(script));
        struct log log = {};
        struct timerd *t = hold_one(s, &log);

        (void)state;
        /* In, and held: still to come, at the deadline. */
        assert_int_equal(timerd_get_timeout(t, &wake), 1);
        assert_int_equal(wake, deadline);

        assert_true(run_loop(t, &log, 1) > 0);
        assert_int_equal(log.errors[0], 0);
        assert_int_equal(log.run[0], 1);
        assert_true(log.at[0] >= deadline);
        assert_true(log.at[0] < deadline + LATE_BOUND_USEC);
        assert_int_equal(timerd_in_flight(t), 0);
        assert_int_equal(timerd_get_timeout(t, &wake), 0);
        assert_int_equal(wake, UINT64_MAX);
        assert_int_equal(timerd_get_timeout(NULL, &wake), -EINVAL);
        assert_int_equal(timerd_get_timeout(t, NULL), -EINVAL);
        timerd_close(t);
        fake_server_finish(s);
        free(reply);
}

/* On a stream, firings reach the callback in deadline order, and the ones still held come before
 * the error that ends it. */
static void test_stream_end_releases_held(void **state)
{
        uint64_t now = now_on(CLOCK_MONOTONIC);
        char *replies[] = {
            firing_reply(1, "monotonic", now + 900 * MSEC, true),
            firing_reply(2, "monotonic", 1, true),
            firing_reply(3, "monotonic", now + 600 * MSEC, true),
            firing_reply(4, "monotonic", now + 100 * MSEC, true),
        };
        const struct fake_step script[] = {
            FAKE_ANY_CALL,          FAKE_REPLY(replies[0]), FAKE_REPLY(replies[1]),
            FAKE_REPLY(replies[2]), FAKE_REPLY(replies[3]), FAKE_EXPECT_CLOSE,
        };
        char *last = firing_reply(5, "monotonic", 1, false);
        /* A stream that ends with a firing rather than an error (timerd never does). */
        const struct fake_step last_script[] = {
            FAKE_ANY_CALL,
            FAKE_REPLY(replies[0]),
            FAKE_REPLY(last),
            FAKE_EXPECT_CLOSE,
        };
        const struct fake_step end_script[] = {
            FAKE_ANY_CALL,
            FAKE_REPLY(replies[0]),
            FAKE_REPLY("{\"error\":\"io.timerd.Timer.ShuttingDown\",\"parameters\":{}}"),
            FAKE_EXPECT_CLOSE,
        };
        struct fake_server *s = fake_server_start(script, ELEMENTSOF(script));
        struct timerd *t = connect_to(s);
        struct log log = {};

        (void)state;
        assert_int_equal(timerd_wait_stream_async(t, NULL, 0, on_firing, &log), 0);
        assert_true(run_loop(t, &log, 2) > 0);
        assert_int_equal(log.run[0], 2);
        assert_int_equal(log.run[1], 4);
        assert_true(log.at[1] >= log.deadline[1]);
        assert_int_equal(timerd_in_flight(t), 3); /* the stream, and two held firings */
        timerd_close(t);
        fake_server_finish(s);

        /* The end of the stream releases its held firing at once, before the error. */
        log = (struct log){};
        s = fake_server_start(end_script, ELEMENTSOF(end_script));
        t = connect_to(s);
        assert_int_equal(timerd_wait_stream_async(t, NULL, 0, on_firing, &log), 0);
        assert_int_equal(run_loop(t, &log, 2), 2);
        assert_int_equal(log.errors[0], 0);
        assert_int_equal(log.run[0], 1);
        assert_true(log.at[0] < log.deadline[0]);
        assert_int_equal(log.errors[1], -TIMERD_E_SHUTTING_DOWN);
        assert_int_equal(timerd_in_flight(t), 0);
        timerd_close(t);
        fake_server_finish(s);

        /* So does its last answer: nothing stays held for a call that is gone. */
        log = (struct log){};
        s = fake_server_start(last_script, ELEMENTSOF(last_script));
        t = connect_to(s);
        assert_int_equal(timerd_wait_stream_async(t, NULL, 0, on_firing, &log), 0);
        assert_true(run_loop(t, &log, 2) > 0);
        assert_int_equal(log.run[0], 1);
        assert_int_equal(log.run[1], 5);
        assert_int_equal(timerd_in_flight(t), 0);
        timerd_close(t);
        fake_server_finish(s);
        free(last);
        for (size_t i = 0; i < ELEMENTSOF(replies); i++)
                free(replies[i]);
}

/* A connection that breaks delivers what it held at once, before failing the calls in flight;
 * timerd_close() drops it without a callback. */
static void test_break_and_close(void **state)
{
        uint64_t deadline = now_on(CLOCK_MONOTONIC) + 800 * MSEC;
        char *reply = firing_reply(1, "monotonic", deadline, false);
        const struct fake_step break_script[] = {
            FAKE_ANY_CALL,
            FAKE_ANY_CALL,
            FAKE_REPLY(reply),
            FAKE_CLOSE,
        };
        const struct fake_step blocking_break_script[] = {
            FAKE_ANY_CALL,
            FAKE_REPLY(reply),
            FAKE_ANY_CALL,
            FAKE_CLOSE,
        };
        const struct fake_step close_script[] = {
            FAKE_ANY_CALL,
            FAKE_REPLY(reply),
            FAKE_EXPECT_CLOSE,
        };
        struct fake_server *s = fake_server_start(break_script, ELEMENTSOF(break_script));
        struct timerd *t = connect_to(s);
        struct timerd_status status;
        struct log log = {};

        (void)state;
        assert_int_equal(timerd_wait_async(t, NULL, 0, 0, on_firing, &log), 0);
        assert_int_equal(timerd_status_async(t, on_status, &log), 0);
        assert_int_equal(run_loop(t, &log, 2), -TIMERD_E_DISCONNECTED);
        assert_int_equal(log.n, 2);
        assert_int_equal(log.errors[0], 0);
        assert_int_equal(log.run[0], 1);
        assert_int_equal(log.errors[1], -TIMERD_E_DISCONNECTED);
        assert_int_equal(timerd_in_flight(t), 0);
        timerd_close(t);
        fake_server_finish(s);

        /* A break seen by a blocking call runs no callback there: the next process() does. */
        log = (struct log){};
        s = fake_server_start(blocking_break_script, ELEMENTSOF(blocking_break_script));
        t = hold_one(s, &log);
        assert_int_equal(timerd_status(t, &status), -TIMERD_E_DISCONNECTED);
        assert_int_equal(log.n, 0);
        assert_int_equal(timerd_in_flight(t), 1);
        assert_int_equal(timerd_process(t), -TIMERD_E_DISCONNECTED);
        assert_int_equal(log.n, 1);
        assert_int_equal(log.run[0], 1);
        assert_int_equal(timerd_in_flight(t), 0);
        timerd_close(t);
        fake_server_finish(s);

        log = (struct log){};
        s = fake_server_start(close_script, ELEMENTSOF(close_script));
        t = hold_one(s, &log);
        timerd_close(t);
        assert_int_equal(log.n, 0);
        fake_server_finish(s);
        free(reply);
}

/* A callback of a held firing may close the connection: nothing runs after it. */
static void test_close_from_held_callback(void **state)
{
        uint64_t deadline = now_on(CLOCK_MONOTONIC) + 800 * MSEC;
        char *replies[] = {
            firing_reply(1, "monotonic", deadline, true),
            firing_reply(2, "monotonic", deadline + 1, true),
        };
        const struct fake_step script[] = {
            FAKE_ANY_CALL,
            FAKE_REPLY(replies[0]),
            FAKE_REPLY(replies[1]),
            FAKE_CLOSE,
        };
        struct fake_server *s = fake_server_start(script, ELEMENTSOF(script));
        struct timerd *t = connect_to(s);
        struct log log = {.close = true};

        (void)state;
        assert_int_equal(timerd_wait_stream_async(t, NULL, 0, on_firing, &log), 0);
        while (log.n == 0) {
                struct pollfd p = {.fd = timerd_get_fd(t), .events = POLLIN};

                assert_int_equal(poll(&p, 1, (int)(LOOP_TIMEOUT_USEC / MSEC)), 1);
                assert_true(timerd_process(t) >= 0);
        }
        assert_int_equal(log.n, 1);
        assert_int_equal(log.run[0], 1);
        fake_server_finish(s);
        for (size_t i = 0; i < ELEMENTSOF(replies); i++)
                free(replies[i]);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_blocking_waits_hold),
            cmocka_unit_test(test_blocking_hold_keeps_one_timerfd),
            cmocka_unit_test(test_async_wait_holds),
            cmocka_unit_test(test_stream_end_releases_held),
            cmocka_unit_test(test_break_and_close),
            cmocka_unit_test(test_close_from_held_callback),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
