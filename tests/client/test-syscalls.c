/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libtimerd's system calls per blocking call, counted through the linker's --wrap (libtimerd's
 * objects are linked into this test): a call is one send and one blocking read, as a raw
 * ping-pong's client needs, without a poll; the poll comes back only where a blocking read cannot
 * wait (an fd an event loop made non-blocking) or the call was not all written.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "fake-server.h"
#include "timerd/timerd.h"

#define CANCEL_CALL                                                                                \
        "{\"method\":\"io.timerd.Timer.Cancel\",\"parameters\":{\"claim\":{\"name\":\"a\","        \
        "\"generation\":1}}}"
#define EMPTY_REPLY "{\"parameters\":{}}"
#define CALLS       20

/* Counted on the test's thread only: the fake server's thread makes its own. */
static _Thread_local bool counting;
static unsigned n_send, n_recv, n_recv_blocking, n_poll, n_read, n_eintr;

ssize_t __real_send(int fd, const void *buf, size_t len, int flags);
ssize_t __real_recv(int fd, void *buf, size_t len, int flags);
int __real_poll(struct pollfd *fds, nfds_t n, int timeout);
ssize_t __real_read(int fd, void *buf, size_t len);
ssize_t __wrap_send(int fd, const void *buf, size_t len, int flags);
ssize_t __wrap_recv(int fd, void *buf, size_t len, int flags);
int __wrap_poll(struct pollfd *fds, nfds_t n, int timeout);
ssize_t __wrap_read(int fd, void *buf, size_t len);

ssize_t __wrap_send(int fd, const void *buf, size_t len, int flags)
{
        n_send += counting;
        return __real_send(fd, buf, len, flags);
}

ssize_t __wrap_recv(int fd, void *buf, size_t len, int flags)
{
        if (counting) {
                n_recv++;
                n_recv_blocking += !(flags & MSG_DONTWAIT);
                /* A signal's interruption, as the kernel reports it when the handler does not ask
                 * for SA_RESTART: the wait goes on. */
                if (n_eintr > 0 && !(flags & MSG_DONTWAIT)) {
                        n_eintr--;
                        errno = EINTR;
                        return -1;
                }
        }
        return __real_recv(fd, buf, len, flags);
}

int __wrap_poll(struct pollfd *fds, nfds_t n, int timeout)
{
        n_poll += counting;
        return __real_poll(fds, n, timeout);
}

ssize_t __wrap_read(int fd, void *buf, size_t len)
{
        n_read += counting;
        return __real_read(fd, buf, len);
}

static void count_from_zero(void)
{
        n_send = n_recv = n_recv_blocking = n_poll = n_read = 0;
        counting = true;
}

static struct fake_step cancel_script[2 * CALLS];

static struct fake_server *start_cancels(size_t calls)
{
        for (size_t i = 0; i < calls; i++) {
                cancel_script[2 * i] = (struct fake_step)FAKE_CALL(CANCEL_CALL);
                cancel_script[2 * i + 1] = (struct fake_step)FAKE_REPLY(EMPTY_REPLY);
        }
        return fake_server_start(cancel_script, 2 * calls);
}

static const struct timerd_claim claim = {.name = "a", .generation = 1};

/* The ping-pong's system calls: a send and a blocking read a call, no poll. */
static void test_call_is_send_and_read(void **state)
{
        struct fake_server *s = start_cancels(CALLS);
        struct timerd *t = NULL;

        (void)state;
        assert_int_equal(timerd_connect(fake_server_path(s), &t), 0);
        count_from_zero();
        for (int i = 0; i < CALLS; i++)
                assert_int_equal(timerd_cancel(t, &claim, NULL), 0);
        counting = false;
        assert_int_equal(n_send, CALLS);
        assert_int_equal(n_recv, CALLS);
        assert_int_equal(n_recv_blocking, CALLS);
        assert_int_equal(n_poll, 0);
        assert_int_equal(n_read, 0);
        timerd_close(t);
        fake_server_finish(s);
}

/* A blocking read that a signal interrupts is made again: the call still gets its answer. */
static void test_interrupted_read(void **state)
{
        struct fake_server *s = start_cancels(1);
        struct timerd *t = NULL;

        (void)state;
        assert_int_equal(timerd_connect(fake_server_path(s), &t), 0);
        count_from_zero();
        n_eintr = 2;
        assert_int_equal(timerd_cancel(t, &claim, NULL), 0);
        counting = false;
        assert_int_equal(n_eintr, 0);
        assert_int_equal(n_recv, 3);
        assert_int_equal(n_poll, 0);
        timerd_close(t);
        fake_server_finish(s);
}

/*
 * An event loop may make the fd non-blocking (libuv's uv_poll_init() does): a read that says
 * EAGAIN is followed by a poll, never by another read at once.
 */
static void test_nonblocking_fd(void **state)
{
        struct fake_server *s = start_cancels(CALLS);
        struct timerd *t = NULL;

        (void)state;
        assert_int_equal(timerd_connect(fake_server_path(s), &t), 0);
        assert_int_equal(fcntl(timerd_get_fd(t), F_SETFL, O_NONBLOCK), 0);
        for (int i = 0; i < CALLS; i++) {
                count_from_zero();
                assert_int_equal(timerd_cancel(t, &claim, NULL), 0);
                counting = false;
                assert_int_equal(n_send, 1);
                assert_true(n_poll <= 1);
                assert_int_equal(n_recv, n_poll + 1);
        }
        timerd_close(t);
        fake_server_finish(s);
}

static const struct fake_step large_call_script[] = {
    FAKE_ANY_CALL,
    FAKE_REPLY(EMPTY_REPLY),
};

/* A call larger than the socket takes at once: poll for writing until it is out, then the
 * answer is one blocking read. */
static void test_call_larger_than_socket(void **state)
{
        struct fake_server *s = fake_server_start(large_call_script, 2);
        struct timerd *t = NULL;
        char *text = fake_padded_parameters(8U * 1024U * 1024U), *reply = NULL;

        (void)state;
        assert_int_equal(timerd_connect(fake_server_path(s), &t), 0);
        count_from_zero();
        assert_int_equal(timerd_call_raw(t, "io.timerd.Timer.Get", text, &reply), 0);
        counting = false;
        assert_string_equal(reply, "{}");
        assert_true(n_send >= 2);
        assert_true(n_poll >= 1);
        assert_int_equal(n_recv_blocking, 1);
        free(reply);
        free(text);
        timerd_close(t);
        fake_server_finish(s);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_call_is_send_and_read),
            cmocka_unit_test(test_interrupted_read),
            cmocka_unit_test(test_nonblocking_fd),
            cmocka_unit_test(test_call_larger_than_socket),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
