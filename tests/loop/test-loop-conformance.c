/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The loop interface's conformance suite: every test runs against both backends, which must
 * behave alike, and io_uring also on a ring set up as older kernels allow (no optional flags).
 * Time-based checks only ever assert order ("not before the deadline"), never how soon something
 * happened, except with generous bounds.
 */

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <sys/capability.h>

#include "base/clockid.h"
#include "liburing-backend/uring-loop.h"
#include "loop/loop-test.h"
#include "loop/loop.h"

#define MAX_EXPIRIES  64
#define PATIENCE_USEC (5 * 1000 * 1000) /* generous: shared machines are slow */
#define MANY_FDS      1000

struct expiry {
        enum timerd_clock clock;
        uint64_t generation;
        uint64_t now_usec; /* the clock's time when it was reported */
};

struct fixture {
        enum loop_backend backend;
        bool plain_ring;
        struct loop *loop;
        struct expiry expiries[MAX_EXPIRIES];
        size_t n_expiries;
        unsigned clock_sets;
};

struct io_record {
        unsigned calls;
        uint32_t events;
        int read_bytes; /* bytes the callback reads each time (0: none) */
        struct loop_watch *unwatch_self;
        struct loop_watch *unwatch_other;
        struct loop *loop; /* to try a nested run */
        int nested_run;
};

static uint64_t now_usec(enum timerd_clock clock)
{
        struct timespec ts;

        assert_int_equal(clock_gettime(clock_readable_id(clock), &ts), 0);
        return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static void on_expired(enum timerd_clock clock, uint64_t generation, void *userdata)
{
        struct fixture *f = userdata;

        assert_true(f->n_expiries < MAX_EXPIRIES);
        f->expiries[f->n_expiries++] = (struct expiry){
            .clock = clock,
            .generation = generation,
            .now_usec = now_usec(clock),
        };
}

static void on_clock_set(void *userdata)
{
        struct fixture *f = userdata;

        f->clock_sets++;
}

static void on_io(struct loop_watch *w, int fd, uint32_t events, void *userdata)
{
        struct io_record *rec = userdata;
        char buf[64];

        (void)w;
        rec->calls++;
        rec->events |= events;
        if (rec->read_bytes > 0)
                assert_int_equal(read(fd, buf, (size_t)rec->read_bytes), rec->read_bytes);
        if (rec->loop)
                rec->nested_run = loop_run_once(rec->loop, 0);
        loop_unwatch(rec->unwatch_other);
        loop_unwatch(rec->unwatch_self);
}

static bool backend_refused(int r)
{
        return r == -EPERM || r == -ENOSYS || r == -EOPNOTSUPP || r == -EACCES;
}

/* What a group of tests runs on. */
struct variant {
        enum loop_backend backend;
        bool plain_ring; /* io_uring without optional setup flags, as older kernels have it */
};

static int setup(void **state)
{
        struct fixture *f = calloc(1, sizeof(*f));
        struct loop_callbacks cb = {
            .expired = on_expired,
            .clock_set = on_clock_set,
            .userdata = f,
        };
        int r;

        assert_non_null(f);
        const struct variant *v = *state;
        f->backend = v->backend;
        f->plain_ring = v->plain_ring;
        r = v->plain_ring ? uring_loop_new_plain(&cb, NULL, &f->loop)
                          : loop_new(f->backend, &cb, &f->loop);
        /* io_uring may be refused on this host; then its tests skip, timerfd's never do. */
        if (r < 0 && !(f->backend == LOOP_BACKEND_IO_URING && backend_refused(r))) {
                free(f);
                return -1;
        }
        *state = f;
        return 0;
}

static int teardown(void **state)
{
        struct fixture *f = *state;

        loop_free(f->loop);
        free(f);
        return 0;
}

static struct fixture *fixture(void **state)
{
        struct fixture *f = *state;

        if (!f->loop)
                skip();
        return f;
}

/* Run until `done` holds, within PATIENCE_USEC. */
static void run_until(struct fixture *f, bool (*done)(const void *ctx), const void *ctx)
{
        uint64_t start = now_usec(TIMERD_CLOCK_MONOTONIC);

        while (!done(ctx)) {
                assert_true(now_usec(TIMERD_CLOCK_MONOTONIC) - start < PATIENCE_USEC);
                assert_true(loop_run_once(f->loop, 10 * 1000) >= 0);
        }
}

/* Run for `usec` (or longer), dispatching whatever comes. */
static void run_for(struct fixture *f, uint64_t usec)
{
        uint64_t start = now_usec(TIMERD_CLOCK_MONOTONIC), elapsed;

        while ((elapsed = now_usec(TIMERD_CLOCK_MONOTONIC) - start) < usec)
                assert_true(loop_run_once(f->loop, (int64_t)(usec - elapsed)) >= 0);
}

static bool io_called(const void *ctx)
{
        return ((const struct io_record *)ctx)->calls > 0;
}

static bool expired_once(const void *ctx)
{
        return ((const struct fixture *)ctx)->n_expiries > 0;
}

static bool expired_twice(const void *ctx)
{
        return ((const struct fixture *)ctx)->n_expiries >= 2;
}

static size_t count_generation(const struct fixture *f, uint64_t generation)
{
        size_t n = 0;

        for (size_t i = 0; i < f->n_expiries; i++)
                n += f->expiries[i].generation == generation;
        return n;
}

/* A non-blocking pipe whose read end the loop watches for input, on_io() recording in rec. */
static void watch_pipe(struct fixture *f, int p[2], struct io_record *rec, struct loop_watch **ret)
{
        assert_int_equal(pipe2(p, O_NONBLOCK | O_CLOEXEC), 0);
        assert_int_equal(loop_watch(f->loop, p[0], LOOP_IN, on_io, rec, ret), 0);
}

/* The same with a stream socket pair, whose first end is writable at once. */
static void watch_socketpair(struct fixture *f, int s[2], struct io_record *rec,
                             struct loop_watch **ret)
{
        assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, s), 0);
        assert_int_equal(loop_watch(f->loop, s[0], LOOP_IN, on_io, rec, ret), 0);
}

static void close_pair(const int p[2])
{
        close(p[0]);
        close(p[1]);
}

static void test_backend_identity(void **state)
{
        struct fixture *f = fixture(state);

        assert_int_equal(loop_backend(f->loop), f->backend);
        assert_int_equal(loop_backend_from_string(loop_backend_to_string(f->backend)), f->backend);
        assert_int_equal(loop_backend_from_string("select"), LOOP_BACKEND_INVALID);
        assert_int_equal(loop_backend_from_string(NULL), LOOP_BACKEND_INVALID);
        assert_null(loop_backend_to_string(LOOP_BACKEND_MAX));
        assert_int_equal(loop_backend(NULL), LOOP_BACKEND_INVALID);
}

static void test_new_rejects_missing_callbacks(void **state)
{
        struct fixture *f = fixture(state);
        struct loop_callbacks no_expired = {.clock_set = on_clock_set};
        struct loop *l = NULL;

        assert_int_equal(loop_new(f->backend, NULL, &l), -EINVAL);
        assert_int_equal(loop_new(f->backend, &no_expired, &l), -EINVAL);
        assert_null(l);
        assert_int_equal(loop_new(LOOP_BACKEND_INVALID, &no_expired, &l), -EINVAL);
}

static void test_watch_reports_readable(void **state)
{
        struct fixture *f = fixture(state);
        struct io_record rec = {.read_bytes = 1};
        struct loop_watch *w;
        int p[2];

        watch_pipe(f, p, &rec, &w);
        assert_int_equal(loop_run_once(f->loop, 0), 0);
        assert_int_equal(rec.calls, 0);

        assert_int_equal(write(p[1], "x", 1), 1);
        run_until(f, io_called, &rec);
        assert_int_equal(rec.calls, 1);
        assert_int_equal(rec.events, LOOP_IN);

        loop_unwatch(w);
        close_pair(p);
}

static void test_watch_is_level_triggered(void **state)
{
        struct fixture *f = fixture(state);
        struct io_record rec = {.read_bytes = 1};
        struct loop_watch *w;
        int p[2];

        watch_pipe(f, p, &rec, &w);
        /* Three bytes, one read per callback: readiness must be reported until drained. */
        assert_int_equal(write(p[1], "xyz", 3), 3);
        for (unsigned expected = 1; expected <= 3; expected++) {
                run_until(f, io_called, &rec);
                assert_int_equal(rec.calls, 1);
                rec.calls = 0;
        }
        run_for(f, 30 * 1000);
        assert_int_equal(rec.calls, 0);

        loop_unwatch(w);
        close_pair(p);
}

static void test_watch_update_changes_events(void **state)
{
        struct fixture *f = fixture(state);
        struct io_record rec = {};
        struct loop_watch *w;
        int s[2];

        /* Writable at once, never readable (nothing sent). */
        watch_socketpair(f, s, &rec, &w);
        run_for(f, 20 * 1000);
        assert_int_equal(rec.calls, 0);

        assert_int_equal(loop_watch_update(w, LOOP_IN | LOOP_OUT), 0);
        run_until(f, io_called, &rec);
        assert_int_equal(rec.events, LOOP_OUT);

        assert_int_equal(loop_watch_update(w, LOOP_IN), 0);
        /* An event already queued may still arrive once; after that, silence. */
        run_for(f, 20 * 1000);
        rec.calls = 0;
        run_for(f, 30 * 1000);
        assert_int_equal(rec.calls, 0);

        assert_int_equal(loop_watch_update(w, LOOP_IN), 0);
        assert_int_equal(loop_watch_update(w, 1u << 7), -EINVAL);
        assert_int_equal(loop_watch_update(NULL, LOOP_IN), -EINVAL);

        loop_unwatch(w);
        close_pair(s);
}

static void test_watch_rejects_bad_arguments(void **state)
{
        struct fixture *f = fixture(state);
        struct io_record rec = {};
        struct loop_watch *w = NULL;
        int p[2], closed_fd;

        assert_int_equal(pipe2(p, O_NONBLOCK | O_CLOEXEC), 0);
        assert_int_equal(loop_watch(f->loop, -1, LOOP_IN, on_io, &rec, &w), -EINVAL);
        assert_int_equal(loop_watch(f->loop, p[0], LOOP_ERR, on_io, &rec, &w), -EINVAL);
        assert_int_equal(loop_watch(f->loop, p[0], LOOP_IN, NULL, &rec, &w), -EINVAL);
        assert_int_equal(loop_watch(f->loop, p[0], LOOP_IN, on_io, &rec, NULL), -EINVAL);
        assert_int_equal(loop_watch(NULL, p[0], LOOP_IN, on_io, &rec, &w), -EINVAL);
        assert_null(w);

        closed_fd = dup(p[0]);
        assert_true(closed_fd >= 0);
        close(closed_fd);
        assert_int_equal(loop_watch(f->loop, closed_fd, LOOP_IN, on_io, &rec, &w), -EBADF);
        assert_null(w);

        loop_unwatch(NULL);
        close_pair(p);
}

static void test_unwatch_stops_events(void **state)
{
        struct fixture *f = fixture(state);
        struct io_record rec = {};
        struct loop_watch *w;
        int p[2];

        watch_pipe(f, p, &rec, &w);
        assert_int_equal(loop_run_once(f->loop, 0), 0);
        loop_unwatch(w);
        assert_int_equal(write(p[1], "x", 1), 1);
        run_for(f, 30 * 1000);
        assert_int_equal(rec.calls, 0);

        close_pair(p);
}

/* Unwatched while ready and just re-checked: the backend lets go of the file, so closing the fd
 * really closes it and the other end sees the end of the stream. */
static void test_unwatch_ready_fd_releases_it(void **state)
{
        struct fixture *f = fixture(state);
        struct io_record rec = {};
        struct loop_watch *w;
        char c;
        int s[2];

        watch_socketpair(f, s, &rec, &w);
        assert_int_equal(write(s[1], "x", 1), 1);
        run_until(f, io_called, &rec);
        loop_unwatch(w);
        close(s[0]);
        run_for(f, 30 * 1000);
        /* Closed with a byte unread: a reset rather than the end; still open: EAGAIN. */
        ssize_t n = read(s[1], &c, 1);
        assert_true(n == 0 || (n < 0 && errno == ECONNRESET));
        close(s[1]);
}

static void test_unwatch_inside_callback(void **state)
{
        struct fixture *f = fixture(state);
        struct io_record a = {}, b = {};
        struct loop_watch *wa, *wb;
        int pa[2], pb[2];

        watch_pipe(f, pa, &a, &wa);
        watch_pipe(f, pb, &b, &wb);
        /* Whichever runs first unwatches both: the other, ready in the same batch, never runs. */
        a.unwatch_self = b.unwatch_other = wa;
        a.unwatch_other = b.unwatch_self = wb;
        assert_int_equal(write(pa[1], "x", 1), 1);
        assert_int_equal(write(pb[1], "x", 1), 1);

        run_for(f, 50 * 1000);
        assert_int_equal(a.calls + b.calls, 1);

        close_pair(pa);
        close_pair(pb);
}

static void test_hangup_reports_error(void **state)
{
        struct fixture *f = fixture(state);
        struct io_record rec = {.unwatch_self = NULL};
        struct loop_watch *w;
        int p[2];

        watch_pipe(f, p, &rec, &w);
        rec.unwatch_self = w;
        close(p[1]);
        run_until(f, io_called, &rec);
        assert_true(rec.events & LOOP_ERR);
        close(p[0]);
}

static void test_run_once_is_not_reentrant(void **state)
{
        struct fixture *f = fixture(state);
        struct io_record rec = {.read_bytes = 1};
        struct loop_watch *w;
        int p[2];

        watch_pipe(f, p, &rec, &w);
        rec.loop = f->loop;
        rec.unwatch_self = w;
        assert_int_equal(write(p[1], "x", 1), 1);
        run_until(f, io_called, &rec);
        assert_int_equal(rec.nested_run, -EBUSY);
        close_pair(p);
}

static void test_run_once_timeout_returns_zero(void **state)
{
        struct fixture *f = fixture(state);
        uint64_t start = now_usec(TIMERD_CLOCK_MONOTONIC);

        assert_int_equal(loop_run_once(f->loop, 0), 0);
        assert_int_equal(loop_run_once(f->loop, 20 * 1000), 0);
        /* It waited (at least most of) the timeout instead of returning at once. */
        assert_true(now_usec(TIMERD_CLOCK_MONOTONIC) - start >= 15 * 1000);
        assert_int_equal(loop_run_once(f->loop, -2), -EINVAL);
        assert_int_equal(loop_run_once(NULL, 0), -EINVAL);
}

static void test_arm_future_fires_once(void **state)
{
        struct fixture *f = fixture(state);
        uint64_t deadline = now_usec(TIMERD_CLOCK_MONOTONIC) + 20 * 1000;

        assert_int_equal(loop_arm(f->loop, TIMERD_CLOCK_MONOTONIC, deadline, 7), 0);
        run_until(f, expired_once, f);
        assert_int_equal(f->n_expiries, 1);
        assert_int_equal(f->expiries[0].clock, TIMERD_CLOCK_MONOTONIC);
        assert_int_equal(f->expiries[0].generation, 7);
        assert_true(f->expiries[0].now_usec >= deadline);

        run_for(f, 50 * 1000);
        assert_int_equal(f->n_expiries, 1);
}

static void test_rearm_many_reports_last(void **state)
{
        struct fixture *f = fixture(state);
        uint64_t base = now_usec(TIMERD_CLOCK_MONOTONIC), deadline = 0;

        for (uint64_t g = 1; g <= 100; g++) {
                deadline = base + 10 * 1000 + g * 200;
                assert_int_equal(loop_arm(f->loop, TIMERD_CLOCK_MONOTONIC, deadline, g), 0);
        }
        while (count_generation(f, 100) == 0) {
                assert_true(now_usec(TIMERD_CLOCK_MONOTONIC) - base < PATIENCE_USEC);
                assert_true(loop_run_once(f->loop, 10 * 1000) >= 0);
        }
        run_for(f, 30 * 1000);
        assert_int_equal(count_generation(f, 100), 1);
        /* The current generation is the last report, and not before its deadline. */
        assert_int_equal(f->expiries[f->n_expiries - 1].generation, 100);
        assert_true(f->expiries[f->n_expiries - 1].now_usec >= deadline);
}

static void test_rearm_across_iterations(void **state)
{
        struct fixture *f = fixture(state);
        uint64_t deadline = 0;

        /* Each arm reaches the kernel before the next replaces it (io_uring: timeout update). */
        for (uint64_t g = 1; g <= 50; g++) {
                deadline = now_usec(TIMERD_CLOCK_MONOTONIC) + 200 * 1000;
                assert_int_equal(loop_arm(f->loop, TIMERD_CLOCK_MONOTONIC, deadline, g), 0);
                assert_int_equal(loop_run_once(f->loop, 0), 0);
        }
        deadline = now_usec(TIMERD_CLOCK_MONOTONIC) + 10 * 1000;
        assert_int_equal(loop_arm(f->loop, TIMERD_CLOCK_MONOTONIC, deadline, 51), 0);
        run_until(f, expired_once, f);
        assert_int_equal(f->n_expiries, 1);
        assert_int_equal(f->expiries[0].generation, 51);
        assert_true(f->expiries[0].now_usec >= deadline);
}

static void test_arm_earlier_then_later(void **state)
{
        struct fixture *f = fixture(state);
        uint64_t now = now_usec(TIMERD_CLOCK_MONOTONIC), later;

        /* Earlier: the new, closer deadline is what fires. */
        assert_int_equal(loop_arm(f->loop, TIMERD_CLOCK_MONOTONIC, now + 10 * 1000 * 1000, 1), 0);
        assert_int_equal(loop_run_once(f->loop, 0), 0);
        assert_int_equal(loop_arm(f->loop, TIMERD_CLOCK_MONOTONIC, now + 10 * 1000, 2), 0);
        run_until(f, expired_once, f);
        assert_int_equal(f->n_expiries, 1);
        assert_int_equal(f->expiries[0].generation, 2);

        /* Later: nothing fires at the first deadline. */
        now = now_usec(TIMERD_CLOCK_MONOTONIC);
        later = now + 60 * 1000;
        assert_int_equal(loop_arm(f->loop, TIMERD_CLOCK_MONOTONIC, now + 10 * 1000, 3), 0);
        assert_int_equal(loop_run_once(f->loop, 0), 0);
        assert_int_equal(loop_arm(f->loop, TIMERD_CLOCK_MONOTONIC, later, 4), 0);
        f->n_expiries = 0;
        run_until(f, expired_once, f);
        assert_int_equal(f->n_expiries, 1);
        assert_int_equal(f->expiries[0].generation, 4);
        assert_true(f->expiries[0].now_usec >= later);
}

/* Arm the monotonic clock, then see that arm reported once and not before its deadline. */
static void expect_only_expiry(struct fixture *f, uint64_t deadline, uint64_t generation)
{
        assert_int_equal(loop_arm(f->loop, TIMERD_CLOCK_MONOTONIC, deadline, generation), 0);
        run_until(f, expired_once, f);
        run_for(f, 20 * 1000);
        assert_int_equal(f->n_expiries, 1);
        assert_int_equal(f->expiries[0].generation, generation);
        assert_true(f->expiries[0].now_usec >= deadline);
}

static void test_rearm_after_kernel_fired(void **state)
{
        struct fixture *f = fixture(state);
        struct loop_stats stats;

        /* The old arm fires in the kernel before the re-arm reaches it: the update loses. */
        for (int attempt = 0; attempt < 3; attempt++) {
                uint64_t deadline = now_usec(TIMERD_CLOCK_MONOTONIC) + 20 * 1000;

                f->n_expiries = 0;
                assert_int_equal(loop_arm(f->loop, TIMERD_CLOCK_MONOTONIC, deadline, 1), 0);
                if (loop_run_once(f->loop, 0) != 0) {
                        /* This machine was too slow to set the scene; try again. */
                        continue;
                }
                while (now_usec(TIMERD_CLOCK_MONOTONIC) < deadline + 20 * 1000)
                        usleep(5 * 1000);

                expect_only_expiry(f, now_usec(TIMERD_CLOCK_MONOTONIC) + 30 * 1000, 2);

                loop_get_stats(f->loop, &stats);
                if (f->backend == LOOP_BACKEND_IO_URING)
                        assert_true(stats.stale >= 1);
                else
                        assert_int_equal(stats.stale, 0);
                return;
        }
        skip();
}

/* Each re-arm at a passed deadline is reported once, with its own generation, then a future
 * one not before its deadline (the timerfd backend leaves a fired count unread between them). */
static void test_due_rearms_fire_each_time(void **state)
{
        struct fixture *f = fixture(state);

        for (uint64_t g = 1; g <= 20; g++) {
                f->n_expiries = 0;
                assert_int_equal(loop_arm(f->loop, TIMERD_CLOCK_MONOTONIC, g % 2 ? 0 : 1000, g), 0);
                run_until(f, expired_once, f);
                assert_int_equal(f->n_expiries, 1);
                assert_int_equal(f->expiries[0].generation, g);
        }
        f->n_expiries = 0;
        expect_only_expiry(f, now_usec(TIMERD_CLOCK_MONOTONIC) + 30 * 1000, 21);
}

struct rearm_record {
        struct io_record io;
        struct loop *loop;
        uint64_t deadline;
};

static void on_io_rearm(struct loop_watch *w, int fd, uint32_t events, void *userdata)
{
        struct rearm_record *rec = userdata;

        on_io(w, fd, events, &rec->io);
        assert_int_equal(loop_arm(rec->loop, TIMERD_CLOCK_MONOTONIC, rec->deadline, 2), 0);
}

/*
 * The kernel timer fired and a watch ready in the same batch re-arms it far ahead: whichever the
 * backend dispatches first, the future arm is never reported.
 */
static void test_rearm_in_batch_not_reported_early(void **state)
{
        struct fixture *f = fixture(state);
        struct rearm_record rec = {.io.read_bytes = 1, .loop = f->loop};
        struct loop_watch *w;
        int p[2];

        assert_int_equal(pipe2(p, O_NONBLOCK | O_CLOEXEC), 0);
        assert_int_equal(loop_watch(f->loop, p[0], LOOP_IN, on_io_rearm, &rec, &w), 0);
        rec.deadline = now_usec(TIMERD_CLOCK_MONOTONIC) + 60 * 1000 * 1000;
        assert_int_equal(write(p[1], "x", 1), 1);
        assert_int_equal(loop_arm(f->loop, TIMERD_CLOCK_MONOTONIC, 0, 1), 0);
        usleep(5 * 1000);
        run_until(f, io_called, &rec.io);
        run_for(f, 30 * 1000);
        assert_int_equal(count_generation(f, 2), 0);
        assert_true(count_generation(f, 1) <= 1);

        loop_unwatch(w);
        close_pair(p);
}

static void test_disarm_before_expiry(void **state)
{
        struct fixture *f = fixture(state);
        uint64_t deadline = now_usec(TIMERD_CLOCK_MONOTONIC) + 250 * 1000;

        assert_int_equal(loop_arm(f->loop, TIMERD_CLOCK_MONOTONIC, deadline, 5), 0);
        assert_int_equal(loop_run_once(f->loop, 0), 0);
        assert_int_equal(loop_disarm(f->loop, TIMERD_CLOCK_MONOTONIC), 0);
        assert_int_equal(loop_disarm(f->loop, TIMERD_CLOCK_MONOTONIC), 0);
        while (now_usec(TIMERD_CLOCK_MONOTONIC) < deadline + 50 * 1000)
                assert_true(loop_run_once(f->loop, 20 * 1000) >= 0);
        assert_int_equal(count_generation(f, 5), 0);
}

static void test_disarm_when_due_before_dispatch(void **state)
{
        struct fixture *f = fixture(state);

        /* Due at once in the kernel, but disarmed before the loop looked: never reported. */
        assert_int_equal(loop_arm(f->loop, TIMERD_CLOCK_MONOTONIC, 0, 6), 0);
        usleep(5 * 1000);
        assert_int_equal(loop_disarm(f->loop, TIMERD_CLOCK_MONOTONIC), 0);
        run_for(f, 30 * 1000);
        assert_int_equal(f->n_expiries, 0);
}

static void test_disarm_unarmed_clocks(void **state)
{
        struct fixture *f = fixture(state);

        for (int c = 0; c < TIMERD_CLOCK_MAX; c++)
                assert_int_equal(loop_disarm(f->loop, (enum timerd_clock)c), 0);
        assert_int_equal(loop_disarm(f->loop, TIMERD_CLOCK_MAX), -EINVAL);
        assert_int_equal(loop_disarm(f->loop, TIMERD_CLOCK_INVALID), -EINVAL);
        assert_int_equal(loop_disarm(NULL, TIMERD_CLOCK_MONOTONIC), -EINVAL);
}

static void test_arm_rejects_bad_clock(void **state)
{
        struct fixture *f = fixture(state);
        struct loop_stats stats;

        assert_int_equal(loop_arm(f->loop, TIMERD_CLOCK_MAX, 0, 1), -EINVAL);
        assert_int_equal(loop_arm(f->loop, TIMERD_CLOCK_INVALID, 0, 1), -EINVAL);
        assert_int_equal(loop_arm(NULL, TIMERD_CLOCK_MONOTONIC, 0, 1), -EINVAL);
        loop_get_stats(f->loop, &stats);
        assert_int_equal(stats.arms, 0);
}

static void test_arm_in_past_fires_at_once(void **state)
{
        struct fixture *f = fixture(state);

        assert_int_equal(loop_arm(f->loop, TIMERD_CLOCK_MONOTONIC, 0, 9), 0);
        run_until(f, expired_once, f);
        assert_int_equal(f->expiries[0].generation, 9);

        f->n_expiries = 0;
        assert_int_equal(loop_arm(f->loop, TIMERD_CLOCK_MONOTONIC,
                                  now_usec(TIMERD_CLOCK_MONOTONIC) - 1000 * 1000, 10),
                         0);
        run_until(f, expired_once, f);
        assert_int_equal(f->n_expiries, 1);
        assert_int_equal(f->expiries[0].generation, 10);
}

static void test_each_clock_fires(void **state)
{
        struct fixture *f = fixture(state);
        static const enum timerd_clock clocks[] = {
            TIMERD_CLOCK_MONOTONIC,
            TIMERD_CLOCK_BOOTTIME,
            TIMERD_CLOCK_REALTIME,
        };

        for (size_t i = 0; i < sizeof(clocks) / sizeof(clocks[0]); i++) {
                uint64_t deadline = now_usec(clocks[i]) + 10 * 1000;

                f->n_expiries = 0;
                assert_int_equal(loop_arm(f->loop, clocks[i], deadline, 100 + i), 0);
                run_until(f, expired_once, f);
                assert_int_equal(f->n_expiries, 1);
                assert_int_equal(f->expiries[0].clock, clocks[i]);
                assert_int_equal(f->expiries[0].generation, 100 + i);
                assert_true(f->expiries[0].now_usec >= deadline);
        }
}

static void test_clocks_are_independent(void **state)
{
        struct fixture *f = fixture(state);
        uint64_t mono = now_usec(TIMERD_CLOCK_MONOTONIC), boot = now_usec(TIMERD_CLOCK_BOOTTIME);

        assert_int_equal(loop_arm(f->loop, TIMERD_CLOCK_MONOTONIC, mono + 10 * 1000, 1), 0);
        assert_int_equal(loop_arm(f->loop, TIMERD_CLOCK_BOOTTIME, boot + 20 * 1000, 2), 0);
        assert_int_equal(loop_disarm(f->loop, TIMERD_CLOCK_REALTIME), 0);
        run_until(f, expired_twice, f);
        assert_int_equal(count_generation(f, 1), 1);
        assert_int_equal(count_generation(f, 2), 1);
}

static void test_alarm_clocks_fire_or_refuse(void **state)
{
        struct fixture *f = fixture(state);
        static const enum timerd_clock clocks[] = {
            TIMERD_CLOCK_BOOTTIME_ALARM,
            TIMERD_CLOCK_REALTIME_ALARM,
        };

        for (size_t i = 0; i < sizeof(clocks) / sizeof(clocks[0]); i++) {
                uint64_t deadline = now_usec(clocks[i]) + 10 * 1000;
                int r;

                f->n_expiries = 0;
                r = loop_arm(f->loop, clocks[i], deadline, 200 + i);
                if (r == -EPERM)
                        continue;
                assert_int_equal(r, 0);
                run_until(f, expired_once, f);
                assert_int_equal(f->n_expiries, 1);
                assert_int_equal(f->expiries[0].clock, clocks[i]);
                assert_int_equal(f->expiries[0].generation, 200 + i);
                assert_true(f->expiries[0].now_usec >= deadline);
        }
}

/* In a child: drop CAP_WAKE_ALARM, then an alarm arm must say -EPERM. Exit status 0 if so. */
static int child_arm_alarm_without_capability(enum loop_backend backend)
{
        struct loop_callbacks cb = {.expired = on_expired};
        struct loop *l;
        cap_value_t wake = CAP_WAKE_ALARM;
        cap_t caps = cap_get_proc();
        int r;

        if (!caps || cap_set_flag(caps, CAP_EFFECTIVE, 1, &wake, CAP_CLEAR) < 0 ||
            cap_set_flag(caps, CAP_PERMITTED, 1, &wake, CAP_CLEAR) < 0 || cap_set_proc(caps) < 0)
                return 2;
        cap_free(caps);
        if (loop_new(backend, &cb, &l) < 0)
                return 3;
        r = loop_arm(l, TIMERD_CLOCK_BOOTTIME_ALARM, 0, 1);
        if (r == -EPERM)
                r = loop_arm(l, TIMERD_CLOCK_REALTIME_ALARM, 0, 1);
        loop_free(l);
        return r == -EPERM ? 0 : 1;
}

static void test_alarm_clock_without_capability(void **state)
{
        struct fixture *f = fixture(state);
        int status;
        pid_t pid;

        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0)
                _exit(child_arm_alarm_without_capability(f->backend));
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
}

static void test_clock_set_injected(void **state)
{
        struct fixture *f = fixture(state);
        struct loop_stats stats;

        loop_inject_clock_set(f->loop);
        assert_int_equal(f->clock_sets, 1);
        loop_get_stats(f->loop, &stats);
        assert_int_equal(stats.clock_sets, 1);

        /* The watch is re-armed, not left firing. */
        run_for(f, 20 * 1000);
        assert_int_equal(f->clock_sets, 1);

        loop_inject_clock_set(f->loop);
        assert_int_equal(f->clock_sets, 2);
}

static void test_clock_set_without_callback(void **state)
{
        struct fixture *f = fixture(state);
        struct loop_callbacks cb = {.expired = on_expired, .userdata = f};
        struct loop_stats stats;
        struct loop *l;

        assert_int_equal(loop_new(f->backend, &cb, &l), 0);
        loop_inject_clock_set(l);
        loop_get_stats(l, &stats);
        assert_int_equal(stats.clock_sets, 1);
        assert_int_equal(f->clock_sets, 0);
        loop_free(l);
}

static void test_stats_counted(void **state)
{
        struct fixture *f = fixture(state);
        struct io_record rec = {.read_bytes = 1};
        struct loop_stats stats;
        struct loop_watch *w;
        int p[2];

        watch_pipe(f, p, &rec, &w);
        assert_int_equal(write(p[1], "x", 1), 1);
        run_until(f, io_called, &rec);

        assert_int_equal(loop_arm(f->loop, TIMERD_CLOCK_MONOTONIC, 0, 1), 0);
        assert_int_equal(loop_arm(f->loop, TIMERD_CLOCK_BOOTTIME, 0, 2), 0);
        run_until(f, expired_twice, f);
        loop_inject_clock_set(f->loop);

        loop_get_stats(f->loop, &stats);
        assert_true(stats.wakeups >= 2);
        assert_int_equal(stats.expiries, 2);
        assert_int_equal(stats.arms, 2);
        assert_int_equal(stats.clock_sets, 1);

        loop_unwatch(w);
        close_pair(p);
}

static void test_stale_completion_counted(void **state)
{
        struct fixture *f = fixture(state);
        struct loop_stats stats;

        /* A timeout that reached the kernel and was then disarmed completes as cancelled. */
        assert_int_equal(loop_arm(f->loop, TIMERD_CLOCK_MONOTONIC,
                                  now_usec(TIMERD_CLOCK_MONOTONIC) + 60 * 1000 * 1000, 1),
                         0);
        assert_int_equal(loop_run_once(f->loop, 0), 0);
        assert_int_equal(loop_disarm(f->loop, TIMERD_CLOCK_MONOTONIC), 0);
        run_for(f, 30 * 1000);
        loop_get_stats(f->loop, &stats);
        assert_int_equal(f->n_expiries, 0);
        if (f->backend == LOOP_BACKEND_IO_URING)
                assert_int_equal(stats.stale, 1);
        else
                assert_int_equal(stats.stale, 0);
}

static void on_many(struct loop_watch *w, int fd, uint32_t events, void *userdata)
{
        unsigned *calls = userdata;
        uint64_t value;

        assert_int_equal(events, LOOP_IN);
        assert_int_equal(read(fd, &value, sizeof(value)), sizeof(value));
        (*calls)++;
        loop_unwatch(w);
}

static bool all_called(const void *ctx)
{
        return *(const unsigned *)ctx == MANY_FDS;
}

static void test_many_fds(void **state)
{
        struct fixture *f = fixture(state);
        int *fds = calloc(MANY_FDS, sizeof(int));
        unsigned calls = 0;
        struct rlimit rl;

        assert_non_null(fds);
        assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
        if (rl.rlim_cur < MANY_FDS + 64) {
                free(fds);
                skip();
        }
        for (int i = 0; i < MANY_FDS; i++) {
                struct loop_watch *w;

                fds[i] = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
                assert_true(fds[i] >= 0);
                assert_int_equal(loop_watch(f->loop, fds[i], LOOP_IN, on_many, &calls, &w), 0);
        }
        assert_int_equal(loop_run_once(f->loop, 0), 0);
        /* All ready at once: more completions than the io_uring CQ holds. */
        for (int i = 0; i < MANY_FDS; i++)
                assert_int_equal(eventfd_write(fds[i], 1), 0);
        run_until(f, all_called, &calls);
        assert_int_equal(calls, MANY_FDS);
        run_for(f, 20 * 1000);
        assert_int_equal(calls, MANY_FDS);

        for (int i = 0; i < MANY_FDS; i++)
                close(fds[i]);
        free(fds);
}

static void test_free_with_live_watches(void **state)
{
        struct fixture *f = fixture(state);
        struct io_record rec = {};
        struct loop_watch *w;
        int p[2];

        watch_pipe(f, p, &rec, &w);
        assert_int_equal(loop_watch(f->loop, p[1], LOOP_OUT, on_io, &rec, &w), 0);
        assert_int_equal(loop_arm(f->loop, TIMERD_CLOCK_MONOTONIC, UINT64_MAX / 2, 1), 0);
        assert_int_equal(loop_run_once(f->loop, 0), 1);
        /* teardown frees the loop with both watches and the arm live: ASan finds no leak. */
        loop_free(NULL);
        close_pair(p);
}

/* A stream watch's callback: counts, and takes what loop_read() gives while `reading`. */
struct stream_record {
        unsigned calls;
        uint32_t events;
        bool reading;
        size_t per_call; /* bytes taken per callback at most (0: all there is) */
        char *buf;
        size_t cap, len;
        long last; /* loop_read()'s last result */
        bool end;
};

static void on_stream(struct loop_watch *w, int fd, uint32_t events, void *userdata)
{
        struct stream_record *rec = userdata;
        (void)fd;

        rec->calls++;
        rec->events |= events;
        while (rec->reading && rec->len < rec->cap) {
                size_t room = rec->cap - rec->len;
                long n = loop_read(w, rec->buf + rec->len,
                                   rec->per_call && rec->per_call < room ? rec->per_call : room);

                rec->last = n;
                if (n <= 0) {
                        rec->end = n == 0;
                        break;
                }
                rec->len += (size_t)n;
                if (rec->per_call)
                        break;
        }
}

static void stream_record_init(struct stream_record *rec, size_t cap, bool reading)
{
        *rec = (struct stream_record){.reading = reading, .cap = cap, .buf = malloc(cap)};
        assert_non_null(rec->buf);
}

static uint8_t pattern_byte(size_t i)
{
        return (uint8_t)(i % 251);
}

/* Write bytes [from, from + len) of the pattern as far as fd takes them; how many it took. */
static size_t write_pattern(int fd, size_t from, size_t len)
{
        uint8_t chunk[4096];
        size_t done = 0;

        while (done < len) {
                size_t n = len - done < sizeof(chunk) ? len - done : sizeof(chunk);
                ssize_t k;

                for (size_t i = 0; i < n; i++)
                        chunk[i] = pattern_byte(from + done + i);
                k = write(fd, chunk, n);
                if (k < 0) {
                        assert_int_equal(errno, EAGAIN);
                        break;
                }
                done += (size_t)k;
        }
        return done;
}

static void assert_pattern(const struct stream_record *rec, size_t len)
{
        assert_int_equal(rec->len, len);
        for (size_t i = 0; i < len; i++)
                if ((uint8_t)rec->buf[i] != pattern_byte(i))
                        fail_msg("byte %zu is %u, not %u", i, (uint8_t)rec->buf[i],
                                 pattern_byte(i));
}

static bool stream_has(const void *ctx)
{
        const struct stream_record *rec = ctx;

        return rec->len == rec->cap;
}

static bool io_called_stream(const void *ctx)
{
        return ((const struct stream_record *)ctx)->calls > 0;
}

static bool stream_ended(const void *ctx)
{
        return ((const struct stream_record *)ctx)->end;
}

/* Larger than several of the io_uring backend's buffers: read whole and in order. */
static void test_stream_reads_across_buffers(void **state)
{
        struct fixture *f = fixture(state);
        const size_t total = 5 * 4096 + 123;
        struct stream_record rec;
        struct loop_watch *w;
        int s[2];

        stream_record_init(&rec, total + 1, true);
        rec.cap = total;
        assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, s), 0);
        assert_int_equal(loop_watch_stream(f->loop, s[0], LOOP_IN, on_stream, &rec, &w), 0);
        assert_int_equal(loop_run_once(f->loop, 0), 0);
        assert_int_equal(rec.calls, 0);

        assert_int_equal(write_pattern(s[1], 0, total), total);
        run_until(f, stream_has, &rec);
        assert_pattern(&rec, total);
        assert_int_equal(rec.events & LOOP_OUT, 0);

        /* The end of the stream comes after the bytes, as read(2)'s 0. */
        rec.cap++;
        close(s[1]);
        run_until(f, stream_ended, &rec);
        assert_int_equal(rec.len, total);
        assert_int_equal(rec.last, 0);
        assert_int_equal(loop_read(NULL, rec.buf, 1), -EINVAL);

        loop_unwatch(w);
        close(s[0]);
        free(rec.buf);
}

/* Bytes left unread are reported again, one callback at a time; once taken, silence. */
static void test_stream_is_level_triggered(void **state)
{
        struct fixture *f = fixture(state);
        struct stream_record rec;
        struct loop_watch *w;
        int s[2];

        stream_record_init(&rec, 3, true);
        rec.per_call = 1;
        assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, s), 0);
        assert_int_equal(loop_watch_stream(f->loop, s[0], LOOP_IN, on_stream, &rec, &w), 0);
        assert_int_equal(write(s[1], "xyz", 3), 3);
        run_until(f, stream_has, &rec);
        assert_int_equal(rec.calls, 3);
        assert_memory_equal(rec.buf, "xyz", 3);
        run_for(f, 30 * 1000);
        assert_int_equal(rec.calls, 3);

        /* Not a stream watch: loop_read() is refused. */
        struct io_record other = {};
        struct loop_watch *plain;
        char c;
        assert_int_equal(loop_watch(f->loop, s[1], LOOP_IN, on_io, &other, &plain), 0);
        assert_int_equal(loop_read(plain, &c, 1), -EINVAL);
        loop_unwatch(plain);

        loop_unwatch(w);
        close(s[0]);
        close(s[1]);
        free(rec.buf);
}

/* Without LOOP_IN nothing is taken from the socket (the peer feels it fill), a hang-up is still
 * reported, and with LOOP_IN again what waited comes whole. */
static void test_stream_pauses_without_in(void **state)
{
        struct fixture *f = fixture(state);
        struct stream_record rec;
        struct loop_watch *w;
        int s[2], queued = 0;

        stream_record_init(&rec, 1000, true);
        assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, s), 0);
        assert_int_equal(loop_watch_stream(f->loop, s[0], LOOP_IN, on_stream, &rec, &w), 0);
        assert_int_equal(loop_run_once(f->loop, 0), 0);
        assert_int_equal(loop_watch_update(w, 0), 0);
        run_for(f, 20 * 1000);

        assert_int_equal(write_pattern(s[1], 0, 1000), 1000);
        run_for(f, 30 * 1000);
        assert_int_equal(rec.calls, 0);
        assert_int_equal(ioctl(s[0], FIONREAD, &queued), 0);
        assert_int_equal(queued, 1000);

        assert_int_equal(loop_watch_update(w, LOOP_IN), 0);
        run_until(f, stream_has, &rec);
        assert_pattern(&rec, 1000);

        assert_int_equal(loop_watch_update(w, 0), 0);
        run_for(f, 20 * 1000);
        rec.calls = 0;
        rec.events = 0;
        close(s[1]);
        run_until(f, io_called_stream, &rec);
        assert_true(rec.events & LOOP_ERR);

        loop_unwatch(w);
        close(s[0]);
        free(rec.buf);
}

/* On io_uring with provided buffers, `times` receives (at least) found them run out. */
static void assert_exhausted(const struct fixture *f, uint64_t times)
{
        if (f->backend != LOOP_BACKEND_IO_URING)
                return;
        if (f->plain_ring)
                assert_int_equal(uring_loop_buffers_exhausted(f->loop), 0);
        else
                assert_true(uring_loop_buffers_exhausted(f->loop) >= times);
}

/*
 * More peers than the io_uring backend has buffers each send a little that their watches do not
 * read, so the buffers run out: another watch still gets its bytes (the poll and read(2)
 * fallback), and once read every peer's bytes arrive whole, those held before the rest.
 */
#define HOLDERS    80
#define HELD_BYTES 100

static void test_stream_buffers_exhausted(void **state)
{
        struct fixture *f = fixture(state);
        struct stream_record *held = calloc(HOLDERS, sizeof(*held)), b;
        struct loop_watch *wh[HOLDERS], *wb;
        int sh[HOLDERS][2], sb[2];

        assert_non_null(held);
        for (int i = 0; i < HOLDERS; i++) {
                stream_record_init(&held[i], 2 * HELD_BYTES, false);
                held[i].cap = HELD_BYTES;
                assert_int_equal(
                    socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sh[i]), 0);
                assert_int_equal(
                    loop_watch_stream(f->loop, sh[i][0], LOOP_IN, on_stream, &held[i], &wh[i]), 0);
                assert_int_equal(write_pattern(sh[i][1], 0, HELD_BYTES), HELD_BYTES);
        }
        stream_record_init(&b, 10, true);
        b.cap = 5;
        assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sb), 0);
        assert_int_equal(loop_watch_stream(f->loop, sb[0], LOOP_IN, on_stream, &b, &wb), 0);
        run_for(f, 20 * 1000);
        assert_exhausted(f, 1);

        assert_int_equal(write(sb[1], "hello", 5), 5);
        run_until(f, stream_has, &b);
        assert_memory_equal(b.buf, "hello", 5);
        assert_exhausted(f, 2);

        for (int i = 0; i < HOLDERS; i++) {
                held[i].reading = true;
                run_until(f, stream_has, &held[i]);
                /* With the buffers back, it goes on. */
                held[i].cap = 2 * HELD_BYTES;
                assert_int_equal(write_pattern(sh[i][1], HELD_BYTES, HELD_BYTES), HELD_BYTES);
                run_until(f, stream_has, &held[i]);
                assert_pattern(&held[i], 2 * HELD_BYTES);
        }
        b.cap = 10;
        assert_int_equal(write(sb[1], "world", 5), 5);
        run_until(f, stream_has, &b);
        assert_memory_equal(b.buf, "helloworld", 10);

        for (int i = 0; i < HOLDERS; i++) {
                loop_unwatch(wh[i]);
                close(sh[i][0]);
                close(sh[i][1]);
                free(held[i].buf);
        }
        loop_unwatch(wb);
        close(sb[0]);
        close(sb[1]);
        free(held);
        free(b.buf);
}

/*
 * A bulk stream (loop_stream_bulk()) is taken by read(2), not a completion per write: more
 * writes than the io_uring backend has buffers, each waited for while the watch does not read,
 * take none of them. Bytes held when it turns bulk come first, and after it turns back the
 * recv brings the rest, all in order.
 */
#define BULK_WRITES 80
#define BULK_BYTES  100

static void test_stream_bulk(void **state)
{
        struct fixture *f = fixture(state);
        size_t total = 2 * BULK_BYTES + 2 * BULK_WRITES * BULK_BYTES;
        struct stream_record rec;
        struct loop_watch *w, *plain;
        size_t sent = 0;
        int s[2];

        stream_record_init(&rec, total, false);
        assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, s), 0);
        assert_int_equal(loop_watch_stream(f->loop, s[0], LOOP_IN, on_stream, &rec, &w), 0);
        assert_int_equal(loop_watch(f->loop, s[1], 0, on_io, NULL, &plain), 0);
        assert_int_equal(loop_stream_bulk(plain, true), -EINVAL);
        assert_int_equal(loop_stream_bulk(NULL, true), -EINVAL);
        assert_int_equal(loop_run_once(f->loop, 0), 0);

        /* Received and held, then bulk: what follows waits in the socket. */
        sent += write_pattern(s[1], sent, BULK_BYTES);
        run_until(f, io_called_stream, &rec);
        assert_int_equal(loop_stream_bulk(w, true), 0);
        for (int i = 0; i < BULK_WRITES; i++) {
                sent += write_pattern(s[1], sent, BULK_BYTES);
                run_for(f, 1000);
        }
        if (f->backend == LOOP_BACKEND_IO_URING)
                assert_int_equal(uring_loop_buffers_exhausted(f->loop), 0);
        rec.cap = sent;
        rec.reading = true;
        run_until(f, stream_has, &rec);
        assert_pattern(&rec, sent);

        /* Back on the recv, mid-stream, reading as it comes. */
        rec.cap = total;
        sent += write_pattern(s[1], sent, BULK_BYTES);
        run_for(f, 1000);
        assert_int_equal(loop_stream_bulk(w, false), 0);
        for (int i = 0; i < BULK_WRITES; i++) {
                sent += write_pattern(s[1], sent, BULK_BYTES);
                run_for(f, 1000);
        }
        assert_int_equal(sent, total);
        run_until(f, stream_has, &rec);
        assert_pattern(&rec, total);
        if (f->backend == LOOP_BACKEND_IO_URING)
                assert_int_equal(uring_loop_buffers_exhausted(f->loop), 0);

        loop_unwatch(plain);
        loop_unwatch(w);
        close(s[0]);
        close(s[1]);
        free(rec.buf);
}

/* Whether this loop sends through its ring (loop_send()): io_uring with its provided buffers. */
static bool sends_through_loop(const struct fixture *f)
{
        return f->backend == LOOP_BACKEND_IO_URING && !f->plain_ring;
}

/* Take what fd has now, without waiting: how many bytes (0: none). */
static size_t take_now(int fd, char *buf, size_t cap)
{
        size_t len = 0;
        ssize_t n;

        while (len < cap && (n = recv(fd, buf + len, cap - len, MSG_DONTWAIT)) > 0)
                len += (size_t)n;
        return len;
}

static bool stream_out(const void *ctx)
{
        return ((const struct stream_record *)ctx)->events & LOOP_OUT;
}

/*
 * A send through the loop leaves with the next wait, posts nothing when the socket takes it all
 * (the wait returns nothing, the callback is not called) and its outcome is given once; one asked
 * for before the wait leaves at once. Elsewhere loop_send() declines and the caller writes.
 */
static void test_send_leaves_with_the_wait(void **state)
{
        struct fixture *f = fixture(state);
        struct stream_record rec;
        struct io_record plain_rec = {0};
        struct loop_watch *w, *plain;
        char buf[64];
        int s[2];

        stream_record_init(&rec, 16, false);
        assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, s), 0);
        assert_int_equal(loop_watch_stream(f->loop, s[0], LOOP_IN, on_stream, &rec, &w), 0);
        assert_int_equal(loop_watch(f->loop, s[1], 0, on_io, &plain_rec, &plain), 0);
        assert_int_equal(loop_send(NULL, "x", 1), -EINVAL);
        assert_int_equal(loop_send(plain, "x", 1), -EINVAL);
        assert_int_equal(loop_send(w, NULL, 1), -EINVAL);
        assert_int_equal(loop_sent(NULL), -EINVAL);
        assert_int_equal(loop_sent(plain), -EINVAL);
        assert_int_equal(loop_sent(w), -ENOENT);
        if (!sends_through_loop(f)) {
                assert_int_equal(loop_send(w, "hello", 5), 0);
                assert_int_equal(take_now(s[1], buf, sizeof(buf)), 0);
                goto out;
        }

        assert_int_equal(loop_send(w, "hello", 5), 1);
        assert_int_equal(loop_send(w, "again", 5), -EBUSY);
        /* Nothing has left before the loop enters the kernel. */
        assert_int_equal(take_now(s[1], buf, sizeof(buf)), 0);
        assert_int_equal(loop_run_once(f->loop, 0), 0);
        assert_int_equal(rec.calls, 0);
        assert_int_equal(take_now(s[1], buf, sizeof(buf)), 5);
        assert_memory_equal(buf, "hello", 5);
        assert_int_equal(loop_sent(w), 5);
        assert_int_equal(loop_sent(w), -ENOENT);

        /* Its outcome asked for before any wait: the send leaves then. */
        assert_int_equal(loop_send(w, "world!", 6), 1);
        assert_int_equal(loop_sent(w), 6);
        assert_int_equal(take_now(s[1], buf, sizeof(buf)), 6);
        assert_memory_equal(buf, "world!", 6);

        /* Unwatched right after: the bytes leave before the caller closes the fd. */
        assert_int_equal(loop_send(w, "bye", 3), 1);
        loop_unwatch(w);
        w = NULL;
        close(s[0]);
        s[0] = -1;
        assert_int_equal(take_now(s[1], buf, sizeof(buf)), 3);
        assert_memory_equal(buf, "bye", 3);
        (void)loop_run_once(f->loop, 0);
        assert_int_equal(rec.calls, 0);
out:
        loop_unwatch(plain);
        loop_unwatch(w);
        if (s[0] >= 0)
                close(s[0]);
        close(s[1]);
        free(rec.buf);
}

/* The send's outcome once the loop reported it (LOOP_OUT). */
static long sent_after_report(struct fixture *f, struct stream_record *rec, struct loop_watch *w)
{
        rec->events = 0;
        run_until(f, stream_out, rec);
        return loop_sent(w);
}

/*
 * A send the socket does not take whole is reported, never parked: the bytes it took (the rest is
 * the caller's), -EAGAIN when the socket is full, -EPIPE or -ECONNRESET once the peer closed, and
 * nothing of the failed sends reaches the peer out of order.
 */
static void test_send_failures_are_reported(void **state)
{
        struct fixture *f = fixture(state);
        enum { TOTAL = 60000 };
        int sndbuf = 4096;
        struct stream_record rec;
        struct loop_watch *w;
        char *bytes = malloc(TOTAL), *got = malloc(TOTAL);
        size_t taken;
        long n;
        int s[2];

        assert_non_null(bytes);
        assert_non_null(got);
        for (size_t i = 0; i < TOTAL; i++)
                bytes[i] = (char)pattern_byte(i);
        stream_record_init(&rec, 16, false);
        assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, s), 0);
        assert_int_equal(setsockopt(s[0], SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf)), 0);
        assert_int_equal(loop_watch_stream(f->loop, s[0], LOOP_IN, on_stream, &rec, &w), 0);
        if (!sends_through_loop(f)) {
                assert_int_equal(loop_send(w, bytes, TOTAL), 0);
                goto out;
        }

        /* Short: part of it went, in order, and the rest is the caller's. */
        assert_int_equal(loop_send(w, bytes, TOTAL), 1);
        n = sent_after_report(f, &rec, w);
        assert_true(n > 0 && n < TOTAL);
        taken = (size_t)n;
        /* Full: nothing went. */
        assert_int_equal(loop_send(w, bytes + taken, TOTAL - taken), 1);
        assert_int_equal(sent_after_report(f, &rec, w), -EAGAIN);
        assert_int_equal(take_now(s[1], got, TOTAL), taken);
        assert_memory_equal(got, bytes, taken);

        /* Full again, and the peer goes before the send leaves. */
        while (write(s[0], bytes, TOTAL) > 0)
                ;
        assert_int_equal(loop_send(w, bytes, TOTAL), 1);
        close(s[1]);
        s[1] = -1;
        n = sent_after_report(f, &rec, w);
        assert_true(n == -EPIPE || n == -ECONNRESET);
        /* Its report is the watch's: one that is gone gets none. */
        assert_int_equal(loop_send(w, bytes, 10), 1);
        loop_unwatch(w);
        w = NULL;
        rec.calls = 0;
        assert_int_equal(loop_run_once(f->loop, 0), 0);
        assert_int_equal(rec.calls, 0);
out:
        loop_unwatch(w);
        close(s[0]);
        if (s[1] >= 0)
                close(s[1]);
        free(rec.buf);
        free(bytes);
        free(got);
}

#define FOR_EACH_CONFORMANCE_TEST(X)                                                               \
        X(test_backend_identity)                                                                   \
        X(test_new_rejects_missing_callbacks)                                                      \
        X(test_watch_reports_readable)                                                             \
        X(test_watch_is_level_triggered)                                                           \
        X(test_watch_update_changes_events)                                                        \
        X(test_watch_rejects_bad_arguments)                                                        \
        X(test_unwatch_stops_events)                                                               \
        X(test_unwatch_ready_fd_releases_it)                                                       \
        X(test_unwatch_inside_callback)                                                            \
        X(test_hangup_reports_error)                                                               \
        X(test_run_once_is_not_reentrant)                                                          \
        X(test_run_once_timeout_returns_zero)                                                      \
        X(test_arm_future_fires_once)                                                              \
        X(test_rearm_many_reports_last)                                                            \
        X(test_rearm_across_iterations)                                                            \
        X(test_arm_earlier_then_later)                                                             \
        X(test_rearm_after_kernel_fired)                                                           \
        X(test_due_rearms_fire_each_time)                                                          \
        X(test_rearm_in_batch_not_reported_early)                                                  \
        X(test_disarm_before_expiry)                                                               \
        X(test_disarm_when_due_before_dispatch)                                                    \
        X(test_disarm_unarmed_clocks)                                                              \
        X(test_arm_rejects_bad_clock)                                                              \
        X(test_arm_in_past_fires_at_once)                                                          \
        X(test_each_clock_fires)                                                                   \
        X(test_clocks_are_independent)                                                             \
        X(test_alarm_clocks_fire_or_refuse)                                                        \
        X(test_alarm_clock_without_capability)                                                     \
        X(test_clock_set_injected)                                                                 \
        X(test_clock_set_without_callback)                                                         \
        X(test_stats_counted)                                                                      \
        X(test_stale_completion_counted)                                                           \
        X(test_many_fds)                                                                           \
        X(test_free_with_live_watches)                                                             \
        X(test_stream_reads_across_buffers)                                                        \
        X(test_stream_is_level_triggered)                                                          \
        X(test_stream_pauses_without_in)                                                           \
        X(test_stream_buffers_exhausted)                                                           \
        X(test_stream_bulk)                                                                        \
        X(test_send_leaves_with_the_wait)                                                          \
        X(test_send_failures_are_reported)

int main(void)
{
        struct variant timerfd = {LOOP_BACKEND_TIMERFD, false};
        struct variant io_uring = {LOOP_BACKEND_IO_URING, false};
        struct variant io_uring_plain = {LOOP_BACKEND_IO_URING, true};
#define ON_TIMERFD(t)  cmocka_unit_test_prestate_setup_teardown(t, setup, teardown, &timerfd),
#define ON_IO_URING(t) cmocka_unit_test_prestate_setup_teardown(t, setup, teardown, &io_uring),
#define ON_IO_URING_PLAIN(t)                                                                       \
        cmocka_unit_test_prestate_setup_teardown(t, setup, teardown, &io_uring_plain),
        const struct CMUnitTest timerfd_tests[] = {FOR_EACH_CONFORMANCE_TEST(ON_TIMERFD)};
        const struct CMUnitTest io_uring_tests[] = {FOR_EACH_CONFORMANCE_TEST(ON_IO_URING)};
        const struct CMUnitTest io_uring_plain_tests[] = {
            FOR_EACH_CONFORMANCE_TEST(ON_IO_URING_PLAIN)};
        struct rlimit rl;
        int failed = 0;

        /* Room for the 1000-fd test where the hard limit allows it. */
        if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
                rl.rlim_cur = rl.rlim_max < 4096 ? rl.rlim_max : 4096;
                (void)setrlimit(RLIMIT_NOFILE, &rl);
        }
        failed +=
            cmocka_run_group_tests_name("loop conformance: timerfd", timerfd_tests, NULL, NULL);
        failed +=
            cmocka_run_group_tests_name("loop conformance: io_uring", io_uring_tests, NULL, NULL);
        failed += cmocka_run_group_tests_name("loop conformance: io_uring, plain ring",
                                              io_uring_plain_tests, NULL, NULL);
        return failed;
}
