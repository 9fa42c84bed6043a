/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What a firing costs the timerfd backend in system calls, counted: the test links the backend
 * with the linker's --wrap of read, timerfd_settime and epoll_wait, so every call it makes passes
 * through a counter here. A firing the caller re-arms is one epoll_wait and at most one
 * timerfd_settime (none when the new arm is already due on a clock that never goes back), with no
 * read of the timerfd; one nothing re-arms is read once before the next wait, so the loop does not
 * wake for it again. Nothing here depends on how long anything takes.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "timerfd/timerfd-loop.h"

#define FIRINGS 100

struct syscalls {
        unsigned reads, settimes, waits;
};

static struct syscalls counted;

ssize_t __real_read(int fd, void *buf, size_t count);
int __real_timerfd_settime(int fd, int flags, const struct itimerspec *new_value,
                           struct itimerspec *old_value);
int __real_epoll_wait(int epfd, struct epoll_event *events, int maxevents, int timeout);

ssize_t __wrap_read(int fd, void *buf, size_t count);
int __wrap_timerfd_settime(int fd, int flags, const struct itimerspec *new_value,
                           struct itimerspec *old_value);
int __wrap_epoll_wait(int epfd, struct epoll_event *events, int maxevents, int timeout);

ssize_t __wrap_read(int fd, void *buf, size_t count)
{
        counted.reads++;
        return __real_read(fd, buf, count);
}

int __wrap_timerfd_settime(int fd, int flags, const struct itimerspec *new_value,
                           struct itimerspec *old_value)
{
        counted.settimes++;
        return __real_timerfd_settime(fd, flags, new_value, old_value);
}

int __wrap_epoll_wait(int epfd, struct epoll_event *events, int maxevents, int timeout)
{
        counted.waits++;
        return __real_epoll_wait(epfd, events, maxevents, timeout);
}

struct fixture {
        struct loop *loop;
        unsigned expiries;
        uint64_t generation; /* of the last expiry */
};

static void on_expired(enum timerd_clock clock, uint64_t generation, void *userdata)
{
        struct fixture *f = userdata;

        (void)clock;
        f->expiries++;
        f->generation = generation;
}

static int setup(void **state)
{
        static struct fixture f;
        const struct loop_callbacks cb = {.expired = on_expired, .userdata = &f};

        f = (struct fixture){0};
        if (timerfd_loop_new(&cb, &f.loop) < 0)
                return -1;
        *state = &f;
        return 0;
}

static int teardown(void **state)
{
        struct fixture *f = *state;

        loop_free(f->loop);
        return 0;
}

static uint64_t now_usec(clockid_t clockid)
{
        struct timespec ts;

        assert_int_equal(clock_gettime(clockid, &ts), 0);
        return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/* Arm `clock` at `deadline`, wait without a timeout and see exactly that arm's expiry. */
static void arm_and_fire(struct fixture *f, enum timerd_clock clock, uint64_t deadline,
                         uint64_t generation)
{
        unsigned before = f->expiries;

        assert_int_equal(loop_arm(f->loop, clock, deadline, generation), 0);
        assert_int_equal(loop_run_once(f->loop, -1), 1);
        assert_int_equal(f->expiries, before + 1);
        assert_int_equal(f->generation, generation);
}

static void test_rearmed_firing_reads_nothing(void **state)
{
        struct fixture *f = *state;

        arm_and_fire(f, TIMERD_CLOCK_MONOTONIC, 0, 1);
        counted = (struct syscalls){0};
        for (uint64_t g = 2; g < 2 + FIRINGS; g++)
                arm_and_fire(f, TIMERD_CLOCK_MONOTONIC, now_usec(CLOCK_MONOTONIC) + 200, g);
        assert_int_equal(counted.reads, 0);
        assert_int_equal(counted.waits, FIRINGS);
        /* One each, or none where the machine was slow enough for the deadline to pass first. */
        assert_true(counted.settimes <= FIRINGS);
}

static void test_due_rearm_needs_no_settime(void **state)
{
        static const struct {
                enum timerd_clock clock;
                clockid_t clockid;
        } clocks[] = {
            {TIMERD_CLOCK_MONOTONIC, CLOCK_MONOTONIC},
            {TIMERD_CLOCK_BOOTTIME, CLOCK_BOOTTIME},
        };
        struct fixture *f = *state;

        for (size_t c = 0; c < sizeof(clocks) / sizeof(clocks[0]); c++) {
                arm_and_fire(f, clocks[c].clock, 0, 1);
                counted = (struct syscalls){0};
                /* Re-armed already due, each time before the loop waits again. */
                for (uint64_t g = 2; g < 2 + FIRINGS; g++)
                        arm_and_fire(f, clocks[c].clock, g % 2 ? 0 : now_usec(clocks[c].clockid),
                                     g);
                assert_int_equal(counted.reads, 0);
                assert_int_equal(counted.settimes, 0);
                assert_int_equal(counted.waits, FIRINGS);
                assert_int_equal(loop_disarm(f->loop, clocks[c].clock), 0);
        }
}

static void test_due_realtime_rearm_reaches_the_kernel(void **state)
{
        struct fixture *f = *state;

        /* The realtime clock may be set back before the next wait: its arm must be the kernel's. */
        arm_and_fire(f, TIMERD_CLOCK_REALTIME, 0, 1);
        counted = (struct syscalls){0};
        for (uint64_t g = 2; g < 2 + FIRINGS; g++)
                arm_and_fire(f, TIMERD_CLOCK_REALTIME, 0, g);
        assert_int_equal(counted.reads, 0);
        assert_int_equal(counted.settimes, FIRINGS);
        assert_int_equal(counted.waits, FIRINGS);
}

static void test_firing_left_alone_is_read_once(void **state)
{
        struct fixture *f = *state;

        arm_and_fire(f, TIMERD_CLOCK_MONOTONIC, 0, 1);
        counted = (struct syscalls){0};
        /* Nothing re-armed it: read before the next wait, which then has nothing to report. */
        assert_int_equal(loop_run_once(f->loop, 0), 0);
        assert_int_equal(counted.reads, 1);
        assert_int_equal(counted.waits, 1);
        assert_int_equal(loop_run_once(f->loop, 0), 0);
        assert_int_equal(counted.reads, 1);
        assert_int_equal(f->expiries, 1);

        /* A disarm resets the timerfd itself: no read. */
        arm_and_fire(f, TIMERD_CLOCK_MONOTONIC, 0, 2);
        counted = (struct syscalls){0};
        assert_int_equal(loop_disarm(f->loop, TIMERD_CLOCK_MONOTONIC), 0);
        assert_int_equal(loop_run_once(f->loop, 0), 0);
        assert_int_equal(counted.reads, 0);
        assert_int_equal(counted.settimes, 1);
        assert_int_equal(f->expiries, 2);
}

static void test_future_rearm_after_firing_waits(void **state)
{
        struct fixture *f = *state;
        uint64_t deadline;

        /* The unread count of the fired arm must not pass for the next, future one's expiry. */
        arm_and_fire(f, TIMERD_CLOCK_MONOTONIC, 0, 1);
        deadline = now_usec(CLOCK_MONOTONIC) + 60 * 1000 * 1000;
        assert_int_equal(loop_arm(f->loop, TIMERD_CLOCK_MONOTONIC, deadline, 2), 0);
        assert_int_equal(loop_run_once(f->loop, 0), 0);
        assert_int_equal(f->expiries, 1);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_rearmed_firing_reads_nothing, setup, teardown),
            cmocka_unit_test_setup_teardown(test_due_rearm_needs_no_settime, setup, teardown),
            cmocka_unit_test_setup_teardown(test_due_realtime_rearm_reaches_the_kernel, setup,
                                            teardown),
            cmocka_unit_test_setup_teardown(test_firing_left_alone_is_read_once, setup, teardown),
            cmocka_unit_test_setup_teardown(test_future_rearm_after_firing_waits, setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
