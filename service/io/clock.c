/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "service/io/clock.h"

#include <errno.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "base/arith.h"
#include "base/clockid.h"

int clock_read(enum timerd_clock clock, uint64_t *ret)
{
        struct timespec ts;

        if (!clock_valid(clock))
                return -EINVAL;
        if (clock_gettime(clock_readable_id(clock), &ts) < 0)
                return -errno;
        if (ts.tv_sec < 0)
                return -ERANGE;
        *ret = (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
        return 0;
}

int clock_read_all(struct td_now *ret)
{
        /* An alarm clock reads as its base clock: three readings, not five. */
        int r = clock_read(TIMERD_CLOCK_MONOTONIC, &ret->usec[TIMERD_CLOCK_MONOTONIC]);
        if (r >= 0)
                r = clock_read(TIMERD_CLOCK_BOOTTIME, &ret->usec[TIMERD_CLOCK_BOOTTIME]);
        if (r >= 0)
                r = clock_read(TIMERD_CLOCK_REALTIME, &ret->usec[TIMERD_CLOCK_REALTIME]);
        if (r < 0)
                return r;
        ret->usec[TIMERD_CLOCK_BOOTTIME_ALARM] = ret->usec[TIMERD_CLOCK_BOOTTIME];
        ret->usec[TIMERD_CLOCK_REALTIME_ALARM] = ret->usec[TIMERD_CLOCK_REALTIME];
        return 0;
}

bool clock_alarm_available(void)
{
        int fd = timerfd_create(CLOCK_BOOTTIME_ALARM, TFD_CLOEXEC);
        if (fd < 0)
                return false;
        close(fd);
        return true;
}

void clock_source_init(struct clock_source *src, bool virtual)
{
        *src = (struct clock_source){.virtual = virtual};
        if (!virtual)
                return;
        src->now.usec[TIMERD_CLOCK_MONOTONIC] = CLOCK_VIRTUAL_START_USEC;
        src->now.usec[TIMERD_CLOCK_BOOTTIME] = CLOCK_VIRTUAL_START_USEC;
        src->now.usec[TIMERD_CLOCK_BOOTTIME_ALARM] = CLOCK_VIRTUAL_START_USEC;
        src->now.usec[TIMERD_CLOCK_REALTIME] = CLOCK_VIRTUAL_START_REALTIME_USEC;
        src->now.usec[TIMERD_CLOCK_REALTIME_ALARM] = CLOCK_VIRTUAL_START_REALTIME_USEC;
}

int clock_source_now(const struct clock_source *src, struct td_now *ret)
{
        if (!src->virtual)
                return clock_read_all(ret);
        *ret = src->now;
        return 0;
}

/* Move the clocks in `which` (a mask of 1 << clock) by usec, all or none. */
static int virtual_move(struct clock_source *src, unsigned which, uint64_t usec)
{
        if (!src->virtual)
                return -EINVAL;
        struct td_now moved = src->now;

        for (int c = 0; c < TIMERD_CLOCK_MAX; c++)
                if ((which & (1u << c)) &&
                    value_add_overflow(src->now.usec[c], usec, &moved.usec[c]))
                        return -EOVERFLOW;
        src->now = moved;
        return 0;
}

#define ALL_CLOCKS ((1u << TIMERD_CLOCK_MAX) - 1)

int clock_virtual_pass(struct clock_source *src, uint64_t usec)
{
        return virtual_move(src, ALL_CLOCKS, usec);
}

int clock_virtual_suspend(struct clock_source *src, uint64_t usec)
{
        return virtual_move(src, ALL_CLOCKS & ~(1u << TIMERD_CLOCK_MONOTONIC), usec);
}

int clock_virtual_set_realtime(struct clock_source *src, uint64_t usec)
{
        if (!src->virtual)
                return -EINVAL;
        if (usec > TD_VALUE_MAX)
                return -EOVERFLOW;
        src->now.usec[TIMERD_CLOCK_REALTIME] = usec;
        src->now.usec[TIMERD_CLOCK_REALTIME_ALARM] = usec;
        return 0;
}
