/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The service's own signals arrive through the signalfd, never through a handler. */

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include <cmocka.h>

#include "signalfd/sigfd.h"

static int open_sigfd(void **state)
{
        int *fd = test_malloc(sizeof(*fd));

        *fd = sigfd_open();
        if (*fd < 0) {
                test_free(fd);
                return -1;
        }
        *state = fd;
        return 0;
}

static int close_sigfd(void **state)
{
        int *fd = *state;

        close(*fd);
        test_free(fd);
        return 0;
}

static void test_nothing_pending(void **state)
{
        int fd = *(int *)*state;

        assert_int_equal(sigfd_read(fd), -EAGAIN);
}

static void test_signals_are_read_not_handled(void **state)
{
        static const int signals[] = {SIGHUP, SIGTERM, SIGINT};
        int fd = *(int *)*state;

        /* Blocked, so raise() queues them instead of running the default action. */
        for (size_t i = 0; i < sizeof(signals) / sizeof(signals[0]); i++) {
                assert_int_equal(raise(signals[i]), 0);
                assert_int_equal(sigfd_read(fd), signals[i]);
                assert_int_equal(sigfd_read(fd), -EAGAIN);
        }
}

static void test_sigpipe_ignored(void **state)
{
        int p[2];

        (void)state;
        assert_int_equal(pipe2(p, O_CLOEXEC), 0);
        close(p[0]);
        assert_int_equal(write(p[1], "x", 1), -1);
        assert_int_equal(errno, EPIPE);
        close(p[1]);
}

static void test_read_errors(void **state)
{
        int p[2];

        (void)state;
        assert_int_equal(sigfd_read(-1), -EBADF);
        /* Not a signalfd: a short record is an error, not a signal. */
        assert_int_equal(pipe2(p, O_NONBLOCK | O_CLOEXEC), 0);
        assert_int_equal(write(p[1], "abcd", 4), 4);
        assert_int_equal(sigfd_read(p[0]), -EIO);
        close(p[0]);
        close(p[1]);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_nothing_pending),
            cmocka_unit_test(test_signals_are_read_not_handled),
            cmocka_unit_test(test_sigpipe_ignored),
            cmocka_unit_test(test_read_errors),
        };

        return cmocka_run_group_tests_name("sigfd", tests, open_sigfd, close_sigfd);
}
