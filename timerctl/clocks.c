/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <time.h>

#include "clocks.h"

#include "timerd/timerd-test.h"

static int read_clock(clockid_t id, uint64_t *ret)
{
        struct timespec ts;

        if (clock_gettime(id, &ts) < 0)
                return -errno;
        *ret = (uint64_t)ts.tv_sec * 1000000U + (uint64_t)ts.tv_nsec / 1000U;
        return 0;
}

int clocks_read(struct clocks *ret)
{
        struct clocks c;
        int r;

        r = read_clock(CLOCK_REALTIME, &c.realtime_usec);
        if (r >= 0)
                r = read_clock(CLOCK_MONOTONIC, &c.monotonic_usec);
        if (r >= 0)
                r = read_clock(CLOCK_BOOTTIME, &c.boottime_usec);
        if (r < 0)
                return r;
        *ret = c;
        return 0;
}

uint64_t clocks_now(const struct clocks *c, enum timerd_clock clock)
{
        switch (clock) {
        case TIMERD_CLOCK_MONOTONIC:
                return c->monotonic_usec;
        case TIMERD_CLOCK_BOOTTIME:
        case TIMERD_CLOCK_BOOTTIME_ALARM:
                return c->boottime_usec;
        default:
                return c->realtime_usec;
        }
}

bool clocks_to_realtime(const struct clocks *c, enum timerd_clock clock, uint64_t usec,
                        uint64_t *ret)
{
        uint64_t now = clocks_now(c, clock);

        if (usec >= now)
                return !__builtin_add_overflow(c->realtime_usec, usec - now, ret);
        return !__builtin_sub_overflow(c->realtime_usec, now - usec, ret);
}

void clocks_of_service(struct timerd *t, const struct clocks *machine, struct clocks *ret)
{
        struct timerd_test_clocks virtual;

        *ret = *machine;
        if (timerd_test_now(t, &virtual) == 0)
                *ret = (struct clocks){.realtime_usec = virtual.realtime,
                                       .monotonic_usec = virtual.monotonic,
                                       .boottime_usec = virtual.boottime};
}
