/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* libtimerd's signal helpers: a queued signal decodes to its timer; others to generation 0. */

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <unistd.h>

#include <cmocka.h>

#include "timerd/timerd.h"

static void test_queued_signal_names_its_timer(void **state)
{
        const int signals[] = {SIGRTMIN + 3, SIGUSR2};
        struct timerd_signal sig;
        (void)state;

        int fd = timerd_signal_fd(signals, 2);
        assert_true(fd >= 0);
        assert_int_equal(timerd_signal_read(fd, &sig), 0); /* nothing pending */

        /* As the service sends it: SI_QUEUE with the generation in si_value. */
        union sigval value = {.sival_ptr = (void *)(uintptr_t)UINT64_C(0x123456789)};
        assert_int_equal(sigqueue(getpid(), SIGRTMIN + 3, value), 0);
        assert_int_equal(timerd_signal_read(fd, &sig), 1);
        assert_int_equal(sig.signo, SIGRTMIN + 3);
        assert_int_equal(sig.generation, UINT64_C(0x123456789));
        assert_int_equal(sig.sender_pid, getpid());

        /* Not queued by anyone: no timer to name. */
        assert_int_equal(raise(SIGUSR2), 0);
        assert_int_equal(timerd_signal_read(fd, &sig), 1);
        assert_int_equal(sig.signo, SIGUSR2);
        assert_int_equal(sig.generation, 0);
        close(fd);
}

static void test_bad_arguments(void **state)
{
        const int bad[] = {0};
        (void)state;

        assert_int_equal(timerd_signal_fd(NULL, 1), -EINVAL);
        assert_int_equal(timerd_signal_fd(bad, 0), -EINVAL);
        assert_int_equal(timerd_signal_fd(bad, 1), -EINVAL);
        assert_int_equal(timerd_signal_read(-1, NULL), -EINVAL);
        struct timerd_signal sig;
        assert_int_equal(timerd_signal_read(-1, &sig), -EBADF);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_queued_signal_names_its_timer),
            cmocka_unit_test(test_bad_arguments),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
