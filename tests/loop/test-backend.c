/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The service's backend choice: names, the automatic fallback and its reason. */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "service/io/backend.h"

#define REFUSE_ENV "TIMERD_TEST_IO_URING_REFUSE"

static void on_expired(enum timerd_clock clock, uint64_t generation, void *userdata)
{
        (void)clock;
        (void)generation;
        (void)userdata;
}

static const struct loop_callbacks callbacks = {.expired = on_expired};

static bool refused(int r)
{
        return r == -EPERM || r == -ENOSYS || r == -EOPNOTSUPP || r == -EACCES;
}

static int unset_refusal(void **state)
{
        (void)state;
        return unsetenv(REFUSE_ENV);
}

static void test_timerfd_requested(void **state)
{
        char reason[128] = "stale";
        struct loop *l;

        (void)state;
        assert_int_equal(backend_open("timerfd", &callbacks, &l, reason, sizeof(reason)), 0);
        assert_int_equal(loop_backend(l), LOOP_BACKEND_TIMERFD);
        assert_string_equal(reason, "");
        loop_free(l);
}

static void test_io_uring_requested(void **state)
{
        char reason[128];
        struct loop *l;
        int r;

        (void)state;
        r = backend_open("io_uring", &callbacks, &l, reason, sizeof(reason));
        if (refused(r)) {
                /* This host refuses io_uring: the reason must say so. */
                assert_non_null(strstr(reason, "io_uring"));
                skip();
        }
        assert_int_equal(r, 0);
        assert_int_equal(loop_backend(l), LOOP_BACKEND_IO_URING);
        assert_string_equal(reason, "");
        loop_free(l);
}

static void test_auto_prefers_io_uring(void **state)
{
        char reason[128];
        struct loop *l;
        int r;

        (void)state;
        r = loop_new(LOOP_BACKEND_IO_URING, &callbacks, &l);
        if (refused(r))
                skip();
        assert_int_equal(r, 0);
        loop_free(l);

        assert_int_equal(backend_open("auto", &callbacks, &l, reason, sizeof(reason)), 0);
        assert_int_equal(loop_backend(l), LOOP_BACKEND_IO_URING);
        assert_string_equal(reason, "");
        loop_free(l);

        assert_int_equal(backend_open(NULL, &callbacks, &l, NULL, 0), 0);
        assert_int_equal(loop_backend(l), LOOP_BACKEND_IO_URING);
        loop_free(l);
}

static void test_forced_refusal_falls_back(void **state)
{
        char reason[128];
        struct loop *l;

        (void)state;
        assert_int_equal(setenv(REFUSE_ENV, "1", 1), 0);
        assert_int_equal(backend_open("auto", &callbacks, &l, reason, sizeof(reason)), 0);
        assert_int_equal(loop_backend(l), LOOP_BACKEND_TIMERFD);
        assert_non_null(strstr(reason, "io_uring refused"));
        assert_non_null(strstr(reason, REFUSE_ENV));
        loop_free(l);

        assert_int_equal(backend_open("io_uring", &callbacks, &l, reason, sizeof(reason)), -EPERM);
        assert_non_null(strstr(reason, "io_uring refused"));
        assert_int_equal(loop_new(LOOP_BACKEND_IO_URING, &callbacks, &l), -EPERM);

        assert_int_equal(backend_open("timerfd", &callbacks, &l, reason, sizeof(reason)), 0);
        assert_int_equal(loop_backend(l), LOOP_BACKEND_TIMERFD);
        loop_free(l);
}

static void test_refusal_needs_exactly_one(void **state)
{
        struct loop *l;
        int r;

        (void)state;
        assert_int_equal(setenv(REFUSE_ENV, "0", 1), 0);
        r = backend_open("io_uring", &callbacks, &l, NULL, 0);
        if (refused(r))
                skip();
        assert_int_equal(r, 0);
        loop_free(l);
}

static void test_unknown_backend(void **state)
{
        char reason[128];
        struct loop *l = NULL;

        (void)state;
        assert_int_equal(backend_open("kqueue", &callbacks, &l, reason, sizeof(reason)), -EINVAL);
        assert_non_null(strstr(reason, "kqueue"));
        assert_null(l);
        assert_int_equal(backend_open("auto", &callbacks, NULL, reason, sizeof(reason)), -EINVAL);
        assert_int_equal(loop_new(LOOP_BACKEND_INVALID, &callbacks, &l), -EINVAL);
        assert_int_equal(loop_new(LOOP_BACKEND_MAX, &callbacks, &l), -EINVAL);
}

static void test_bad_callbacks_do_not_fall_back(void **state)
{
        char reason[128];
        struct loop *l = NULL;

        (void)state;
        assert_int_equal(backend_open("auto", NULL, &l, reason, sizeof(reason)), -EINVAL);
        assert_null(l);
        assert_int_equal(backend_open("timerfd", NULL, &l, reason, sizeof(reason)), -EINVAL);
        assert_non_null(strstr(reason, "timerfd failed"));
}

/* In a child without free fds, with io_uring refused: both fail, and the reason has both. */
static int child_without_fds(void)
{
        struct rlimit none = {};
        char reason[256];
        struct loop *l;
        int r;

        if (setenv(REFUSE_ENV, "1", 1) < 0 || setrlimit(RLIMIT_NOFILE, &none) < 0)
                return 2;
        r = backend_open("auto", &callbacks, &l, reason, sizeof(reason));
        if (r != -EMFILE)
                return 3;
        if (!strstr(reason, "io_uring refused") || !strstr(reason, "timerfd failed"))
                return 4;

        if (unsetenv(REFUSE_ENV) < 0)
                return 2;
        /* Not a refusal: no fallback, and the reason does not call it one. */
        r = backend_open("auto", &callbacks, &l, reason, sizeof(reason));
        if (r != -EMFILE)
                return 5;
        if (!strstr(reason, "io_uring failed"))
                return 6;
        return 0;
}

static void test_both_fail(void **state)
{
        int status;
        pid_t pid;

        (void)state;
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0)
                _exit(child_without_fds());
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_teardown(test_timerfd_requested, unset_refusal),
            cmocka_unit_test_teardown(test_io_uring_requested, unset_refusal),
            cmocka_unit_test_teardown(test_auto_prefers_io_uring, unset_refusal),
            cmocka_unit_test_teardown(test_forced_refusal_falls_back, unset_refusal),
            cmocka_unit_test_teardown(test_refusal_needs_exactly_one, unset_refusal),
            cmocka_unit_test_teardown(test_unknown_backend, unset_refusal),
            cmocka_unit_test_teardown(test_bad_callbacks_do_not_fall_back, unset_refusal),
            cmocka_unit_test_teardown(test_both_fail, unset_refusal),
        };

        return cmocka_run_group_tests_name("loop backend choice", tests, NULL, NULL);
}
