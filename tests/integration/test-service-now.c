/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * service_now() while a drain shares one reading of the clocks (service_now_share()): the same
 * reading until it is unshared or sharing ends, a fresh one after; never a virtual clock's, which
 * a call may move.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "service/io/clock.h"
#include "service/service.h"

/* Long enough for the monotonic clock to move at microseconds. */
static void pause_a_little(void)
{
        nanosleep(&(struct timespec){.tv_nsec = 200000}, NULL);
}

static uint64_t monotonic_of(struct service *s)
{
        struct td_now now;

        assert_int_equal(service_now(s, &now), 0);
        return now.usec[TIMERD_CLOCK_MONOTONIC];
}

static void shared_until_unshared(void **state)
{
        static struct service s;
        struct td_now a, b;

        (void)state;
        clock_source_init(&s.clock, false);
        uint64_t before = monotonic_of(&s);
        pause_a_little();
        assert_true(monotonic_of(&s) > before);
        assert_int_equal(service_now_shared_age(&s, before), UINT64_MAX);

        service_now_share(&s, true);
        assert_int_equal(service_now(&s, &a), 0);
        pause_a_little();
        assert_int_equal(service_now(&s, &b), 0);
        assert_memory_equal(&a, &b, sizeof(a));
        /* The alarm clocks read as their base clock. */
        assert_int_equal(a.usec[TIMERD_CLOCK_BOOTTIME_ALARM], a.usec[TIMERD_CLOCK_BOOTTIME]);
        assert_int_equal(a.usec[TIMERD_CLOCK_REALTIME_ALARM], a.usec[TIMERD_CLOCK_REALTIME]);
        assert_int_equal(service_now_shared_age(&s, a.usec[TIMERD_CLOCK_MONOTONIC] + 7), 7);
        assert_int_equal(service_now_shared_age(&s, a.usec[TIMERD_CLOCK_MONOTONIC] - 1), 0);

        /* Unshared: the next reading is fresh, and shared in turn. */
        service_now_unshare(&s);
        assert_int_equal(service_now(&s, &b), 0);
        assert_true(b.usec[TIMERD_CLOCK_MONOTONIC] > a.usec[TIMERD_CLOCK_MONOTONIC]);
        pause_a_little();
        assert_int_equal(monotonic_of(&s), b.usec[TIMERD_CLOCK_MONOTONIC]);

        /* Sharing ended: every reading is fresh. */
        service_now_share(&s, false);
        before = monotonic_of(&s);
        pause_a_little();
        assert_true(monotonic_of(&s) > before);
}

static void virtual_never_shared(void **state)
{
        static struct service s;

        (void)state;
        clock_source_init(&s.clock, true);
        service_now_share(&s, true);
        uint64_t before = monotonic_of(&s);
        /* What an Advance does to it mid-drain. */
        s.clock.now.usec[TIMERD_CLOCK_MONOTONIC] += 1000;
        assert_int_equal(monotonic_of(&s), before + 1000);
        service_now_share(&s, false);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(shared_until_unshared),
            cmocka_unit_test(virtual_never_shared),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
