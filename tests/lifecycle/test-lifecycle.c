/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>

#include <cmocka.h>

#include "service/lifecycle.h"

#define GRACE 5000000u

static void setup_all(struct lifecycle *l)
{
        for (int s = 0; s < LIFECYCLE_STEP_MAX; s++)
                assert_int_equal(lifecycle_step_done(l, (enum lifecycle_step)s, 0), 0);
}

static void test_ready_only_after_every_step(void **state)
{
        struct lifecycle l;
        (void)state;

        lifecycle_init(&l, GRACE);
        for (int s = 0; s < LIFECYCLE_STEP_MAX; s++) {
                assert_false(lifecycle_ready(&l));
                assert_false(lifecycle_running(&l));
                assert_int_equal(lifecycle_step_done(&l, (enum lifecycle_step)s, 0), 0);
        }
        assert_true(lifecycle_ready(&l));
        assert_true(lifecycle_running(&l));
        /* Ready is announced once. */
        assert_false(lifecycle_ready(&l));
}

static void test_steps_come_in_order(void **state)
{
        struct lifecycle l;
        (void)state;

        lifecycle_init(&l, GRACE);
        assert_int_equal(lifecycle_step_done(&l, (enum lifecycle_step)1, 0), -EINVAL);
        assert_int_equal(lifecycle_step_done(&l, (enum lifecycle_step)0, 0), 0);
        assert_int_equal(lifecycle_step_done(&l, (enum lifecycle_step)0, 0), -EINVAL);
        assert_int_equal(lifecycle_step_done(&l, LIFECYCLE_STEP_MAX, 0), -EINVAL);
}

/* A failure at each step: never ready, exits SETUP_FAILED naming the step, teardown still runs. */
static void test_failure_at_each_step(void **state)
{
        (void)state;
        for (int failing = 0; failing < LIFECYCLE_STEP_MAX; failing++) {
                struct lifecycle l;
                lifecycle_init(&l, GRACE);
                for (int s = 0; s < failing; s++)
                        assert_int_equal(lifecycle_step_done(&l, (enum lifecycle_step)s, 0), 0);
                assert_int_equal(lifecycle_step_done(&l, (enum lifecycle_step)failing, -EIO), 0);
                /* Nothing after a failed step. */
                if (failing + 1 < LIFECYCLE_STEP_MAX)
                        assert_int_equal(
                            lifecycle_step_done(&l, (enum lifecycle_step)(failing + 1), 0),
                            -EINVAL);
                assert_false(lifecycle_ready(&l));
                assert_int_equal(l.reason, EXIT_REASON_SETUP_FAILED);
                assert_int_equal(l.failed_step, failing);
                assert_non_null(lifecycle_step_to_string(l.failed_step));

                lifecycle_begin_teardown(&l, 100);
                assert_int_equal(l.phase, LIFECYCLE_TEARDOWN);
                assert_int_equal(lifecycle_grace_left(&l, 100), GRACE);
                lifecycle_end(&l);
                assert_int_equal(lifecycle_exit_status(&l), 1);
        }
}

static void test_each_exit_reason_has_its_status(void **state)
{
        static const struct {
                enum exit_reason reason;
                int status;
        } cases[] = {
            {EXIT_REASON_SHUTDOWN_REQUESTED, 0}, {EXIT_REASON_BACKEND_FAULT, 3},
            {EXIT_REASON_CLOCK_FAULT, 4},        {EXIT_REASON_SOCKET_FAULT, 5},
            {EXIT_REASON_STORE_FAULT, 6},
        };
        (void)state;

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                struct lifecycle l;
                lifecycle_init(&l, GRACE);
                setup_all(&l);
                assert_true(lifecycle_ready(&l));
                assert_true(lifecycle_exit(&l, cases[i].reason));
                assert_false(lifecycle_running(&l));
                assert_int_equal(lifecycle_exit_status(&l), cases[i].status);
                assert_non_null(exit_reason_to_string(cases[i].reason));
        }
}

static void test_first_reason_wins(void **state)
{
        struct lifecycle l;
        (void)state;

        lifecycle_init(&l, GRACE);
        setup_all(&l);
        assert_true(lifecycle_ready(&l));
        assert_true(lifecycle_exit(&l, EXIT_REASON_CLOCK_FAULT));
        assert_false(lifecycle_exit(&l, EXIT_REASON_SHUTDOWN_REQUESTED));
        assert_false(lifecycle_exit(&l, EXIT_REASON_NONE));
        assert_int_equal(l.reason, EXIT_REASON_CLOCK_FAULT);
        assert_int_equal(lifecycle_exit_status(&l), 4);
}

static void test_grace_deadline(void **state)
{
        struct lifecycle l;
        (void)state;

        lifecycle_init(&l, GRACE);
        setup_all(&l);
        assert_true(lifecycle_ready(&l));
        assert_int_equal(lifecycle_grace_left(&l, 1000), 0); /* not tearing down yet */
        lifecycle_exit(&l, EXIT_REASON_SHUTDOWN_REQUESTED);
        lifecycle_begin_teardown(&l, 1000);
        assert_int_equal(lifecycle_grace_left(&l, 1000), GRACE);
        assert_int_equal(lifecycle_grace_left(&l, 1000 + GRACE - 1), 1);
        assert_int_equal(lifecycle_grace_left(&l, 1000 + GRACE), 0);
        /* A second begin does not extend the deadline. */
        lifecycle_begin_teardown(&l, 1000 + GRACE);
        assert_int_equal(lifecycle_grace_left(&l, 1000 + GRACE), 0);

        /* A deadline that would overflow saturates. */
        lifecycle_init(&l, UINT64_MAX);
        lifecycle_begin_teardown(&l, 5);
        assert_int_equal(lifecycle_grace_left(&l, 5), UINT64_MAX - 5);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_ready_only_after_every_step),
            cmocka_unit_test(test_steps_come_in_order),
            cmocka_unit_test(test_failure_at_each_step),
            cmocka_unit_test(test_each_exit_reason_has_its_status),
            cmocka_unit_test(test_first_reason_wins),
            cmocka_unit_test(test_grace_deadline),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
