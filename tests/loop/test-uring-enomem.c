/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The io_uring backend out of memory while it reaps: the test links the backend with the linker's
 * --wrap of reallocarray, so the backlog the completions are copied into cannot grow. More
 * completions than one reap batch are ready at once; every one is still dispatched, a batch per
 * wait, and no wait fails (a failed wait stops the service). Counted, never timed. And --wrap of
 * calloc: opening the ring fails with -ENOMEM at each of its allocations in turn (the provided
 * buffers' among them), leaving nothing behind (ASan's leak check). And --wrap of malloc: a send
 * through the ring without memory for its staging buffer.
 */

#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "liburing-backend/uring-loop.h"

/* More than one reap batch (64) of completions at once. */
#define WATCHES   100
#define HANG_USEC INT64_C(30000000)

static bool refusing;
static unsigned refused;

void *__real_reallocarray(void *p, size_t n, size_t size);
void *__wrap_reallocarray(void *p, size_t n, size_t size);

void *__wrap_reallocarray(void *p, size_t n, size_t size)
{
        if (refusing) {
                refused++;
                errno = ENOMEM;
                return NULL;
        }
        return __real_reallocarray(p, n, size);
}

static bool refusing_malloc;

void *__real_malloc(size_t size);
void *__wrap_malloc(size_t size);

void *__wrap_malloc(size_t size)
{
        if (refusing_malloc) {
                errno = ENOMEM;
                return NULL;
        }
        return __real_malloc(size);
}

/* The callocs counted since the last reset; the one numbered `refuse_calloc` fails. */
static unsigned callocs, refuse_calloc = UINT_MAX;

void *__real_calloc(size_t n, size_t size);
void *__wrap_calloc(size_t n, size_t size);

void *__wrap_calloc(size_t n, size_t size)
{
        if (callocs++ == refuse_calloc) {
                errno = ENOMEM;
                return NULL;
        }
        return __real_calloc(n, size);
}

struct watched {
        int fds[2];
        struct loop_watch *watch;
        unsigned calls;
};

static void on_expired(enum timerd_clock clock, uint64_t generation, void *userdata)
{
        (void)clock;
        (void)generation;
        (void)userdata;
}

/* Each watch is reported once: it reads its byte and ends. */
static void on_ready(struct loop_watch *w, int fd, uint32_t events, void *userdata)
{
        struct watched *x = userdata;
        char byte;

        assert_true(events & LOOP_IN);
        assert_int_equal(read(fd, &byte, 1), 1);
        x->calls++;
        loop_unwatch(w);
        x->watch = NULL;
}

static void every_completion_dispatched(bool plain_ring)
{
        struct loop_callbacks cb = {.expired = on_expired};
        struct watched *x = calloc(WATCHES, sizeof(*x));
        struct loop *l;
        unsigned dispatched = 0, waits = 0;

        assert_non_null(x);
        refusing = false;
        refused = 0;
        int r = plain_ring ? uring_loop_new_plain(&cb, NULL, &l) : uring_loop_new(&cb, NULL, &l);
        assert_int_equal(r, 0);
        for (int i = 0; i < WATCHES; i++) {
                assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, x[i].fds), 0);
                assert_int_equal(loop_watch(l, x[i].fds[0], LOOP_IN, on_ready, &x[i], &x[i].watch),
                                 0);
        }
        /* The polls are in the kernel before anything is ready. */
        assert_int_equal(loop_run_once(l, 0), 0);

        refusing = true;
        for (int i = 0; i < WATCHES; i++)
                assert_int_equal(write(x[i].fds[1], "x", 1), 1);
        while (dispatched < WATCHES) {
                /* Bounded only so that a lost completion fails rather than hangs. */
                r = loop_run_once(l, HANG_USEC);
                assert_true(r > 0);
                dispatched += (unsigned)r;
                waits++;
        }
        refusing = false;

        /* The backlog could not grow, and the completions past it waited in the CQ. */
        assert_true(refused > 0);
        assert_true(waits >= 2);
        for (int i = 0; i < WATCHES; i++) {
                assert_int_equal(x[i].calls, 1);
                close(x[i].fds[0]);
                close(x[i].fds[1]);
        }
        loop_free(l);
        free(x);
}

static void test_backlog_cannot_grow(void **state)
{
        (void)state;
        every_completion_dispatched(false);
}

static void test_backlog_cannot_grow_plain_ring(void **state)
{
        (void)state;
        every_completion_dispatched(true);
}

static void test_open_out_of_memory(void **state)
{
        struct loop_callbacks cb = {.expired = on_expired};
        struct loop *l = NULL;
        unsigned needed;

        (void)state;
        callocs = 0;
        assert_int_equal(uring_loop_new(&cb, NULL, &l), 0);
        needed = callocs;
        loop_free(l);
        /* The loop, the provided buffers and their table, at least. */
        assert_true(needed >= 3);
        for (refuse_calloc = 0; refuse_calloc < needed; refuse_calloc++) {
                callocs = 0;
                l = NULL;
                assert_int_equal(uring_loop_new(&cb, NULL, &l), -ENOMEM);
                assert_null(l);
        }
        refuse_calloc = UINT_MAX;
}

static unsigned watches_called(const struct watched *x)
{
        unsigned called = 0;

        for (int i = 0; i < WATCHES; i++)
                called += x[i].calls;
        return called;
}

static void on_stream(struct loop_watch *w, int fd, uint32_t events, void *userdata)
{
        uint32_t *reported = userdata;
        (void)w;
        (void)fd;

        *reported |= events;
}

/*
 * A send through the ring with no memory for its staging buffer is refused (-ENOMEM: the caller
 * writes itself), nothing queued. And a send's outcome is never taken from a CQ only partly
 * reaped: asked for while completions the backlog has no room for wait ahead of it, it is not
 * known yet (-EINPROGRESS), the watch reports LOOP_OUT once the CQ is reaped to its end, and the
 * failure is given then.
 */
static void test_send_out_of_memory(void **state)
{
        struct loop_callbacks cb = {.expired = on_expired};
        struct watched *x = calloc(WATCHES, sizeof(*x));
        struct loop_watch *w;
        struct loop *l;
        uint32_t reported = 0;
        int s[2], r;
        long sent;

        (void)state;
        assert_non_null(x);
        assert_int_equal(uring_loop_new(&cb, NULL, &l), 0);
        assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, s), 0);
        assert_int_equal(loop_watch_stream(l, s[0], LOOP_IN, on_stream, &reported, &w), 0);

        refusing_malloc = true;
        r = loop_send(w, "x", 1);
        refusing_malloc = false;
        assert_int_equal(r, -ENOMEM);
        assert_int_equal(loop_sent(w), -ENOENT);
        assert_int_equal(loop_run_once(l, 0), 0);

        for (int i = 0; i < WATCHES; i++) {
                assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, x[i].fds), 0);
                assert_int_equal(loop_watch(l, x[i].fds[0], LOOP_IN, on_ready, &x[i], &x[i].watch),
                                 0);
        }
        assert_int_equal(loop_run_once(l, 0), 0);
        refused = 0;
        refusing = true;
        for (int i = 0; i < WATCHES; i++)
                assert_int_equal(write(x[i].fds[1], "x", 1), 1);
        close(s[1]);
        /* The polls' completions are in the CQ (the writes ran the ring's task work), ahead of the
         * send's: more than the backlog takes. */
        assert_int_equal(loop_send(w, "x", 1), 1);
        assert_int_equal(loop_sent(w), -EINPROGRESS);
        do {
                reported = 0;
                assert_true(loop_run_once(l, HANG_USEC) > 0);
        } while (!(reported & LOOP_OUT));
        sent = loop_sent(w);
        assert_true(sent == -EPIPE || sent == -ECONNRESET);
        assert_int_equal(loop_sent(w), -ENOENT);
        /* The stream's end is reported too: each watch is counted by its own callback. */
        while (watches_called(x) < WATCHES)
                assert_true(loop_run_once(l, HANG_USEC) > 0);
        refusing = false;
        assert_true(refused > 0);
        for (int i = 0; i < WATCHES; i++) {
                assert_int_equal(x[i].calls, 1);
                close(x[i].fds[0]);
                close(x[i].fds[1]);
        }
        loop_unwatch(w);
        close(s[0]);
        loop_free(l);
        free(x);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_backlog_cannot_grow),
            cmocka_unit_test(test_backlog_cannot_grow_plain_ring),
            cmocka_unit_test(test_open_out_of_memory),
            cmocka_unit_test(test_send_out_of_memory),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
