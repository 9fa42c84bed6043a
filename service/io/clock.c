/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "service/io/clock.h"

#include <errno.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "base/clockid.h"

int clock_read(enum timerd_clock clock, uint64_t *ret)
{
        /* Alarm clocks count like their base clock; reading the base needs no privilege. */
        static const clockid_t readable[TIMERD_CLOCK_MAX] = {
            [TIMERD_CLOCK_MONOTONIC] = CLOCK_MONOTONIC,
            [TIMERD_CLOCK_BOOTTIME] = CLOCK_BOOTTIME,
            [TIMERD_CLOCK_REALTIME] = CLOCK_REALTIME,
            [TIMERD_CLOCK_BOOTTIME_ALARM] = CLOCK_BOOTTIME,
            [TIMERD_CLOCK_REALTIME_ALARM] = CLOCK_REALTIME,
        };
        struct timespec ts;

        if (!clock_valid(clock))
                return -EINVAL;
        if (clock_gettime(readable[clock], &ts) < 0)
                return -errno;
        if (ts.tv_sec < 0)
                return -ERANGE;
        *ret = (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
        return 0;
}

int clock_read_all(struct td_now *ret)
{
        for (int c = 0; c < TIMERD_CLOCK_MAX; c++) {
                int r = clock_read((enum timerd_clock)c, &ret->usec[c]);
                if (r < 0)
                        return r;
        }
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
