/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <stdint.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "base/clockid.h"
#include "timerfd/clock-timerfd.h"

static const clockid_t clockids[TIMERD_CLOCK_MAX] = {
    [TIMERD_CLOCK_MONOTONIC] = CLOCK_MONOTONIC,
    [TIMERD_CLOCK_BOOTTIME] = CLOCK_BOOTTIME,
    [TIMERD_CLOCK_REALTIME] = CLOCK_REALTIME,
    [TIMERD_CLOCK_BOOTTIME_ALARM] = CLOCK_BOOTTIME_ALARM,
    [TIMERD_CLOCK_REALTIME_ALARM] = CLOCK_REALTIME_ALARM,
};

clockid_t clock_timerfd_clockid(enum timerd_clock clock)
{
        return clockids[clock];
}

static bool clock_is_realtime(enum timerd_clock clock)
{
        return clock == TIMERD_CLOCK_REALTIME || clock == TIMERD_CLOCK_REALTIME_ALARM;
}

static bool clock_timer_due(const struct clock_timer *t, uint64_t deadline_usec)
{
        uint64_t now;

        return loop_now_usec(clock_readable_id(t->clock), &now) >= 0 && now >= deadline_usec;
}

/* 1, 0 when nothing expired, -ECANCELED when the realtime clock was set, or -errno. */
static int timerfd_consume(int fd)
{
        uint64_t expirations;
        ssize_t n;

        n = read(fd, &expirations, sizeof(expirations));
        if (n < 0)
                return errno == EAGAIN ? 0 : -errno;
        if (n != sizeof(expirations))
                return -EIO;
        return expirations > 0;
}

static void clock_timer_ready(struct loop_watch *w, int fd, uint32_t events, void *userdata)
{
        struct clock_timer *t = userdata;
        int r;

        (void)w;
        (void)events;

        /*
         * Readable and the current arm's deadline has passed: this is its expiry, whichever arm
         * the kernel counted. The read is left to the next timerfd_settime or clock_timer_settle().
         */
        if (t->read_late && t->armed && clock_timer_due(t, t->deadline_usec)) {
                t->armed = false;
                t->unread = true;
                loop_dispatch_expiry(t->loop, t->clock, t->generation);
                return;
        }

        r = timerfd_consume(fd);
        t->unread = false;
        /*
         * Nothing to read: the timer was re-armed or disarmed after the kernel queued this event.
         * -ECANCELED: the clock was set; the clock-set watch reports that, once.
         */
        if (r <= 0 || !t->armed)
                return;
        t->armed = false;
        loop_dispatch_expiry(t->loop, t->clock, t->generation);
}

void clock_timer_init(struct clock_timer *t, struct loop *l, enum timerd_clock clock,
                      bool read_late)
{
        *t = (struct clock_timer){
            .loop = l,
            .clock = clock,
            .fd = -1,
            .read_late = read_late,
        };
}

static int clock_timer_open(struct clock_timer *t)
{
        int fd, r;

        fd = timerfd_create(clock_timerfd_clockid(t->clock), TFD_NONBLOCK | TFD_CLOEXEC);
        if (fd < 0)
                return -errno;
        r = loop_watch_internal(t->loop, fd, LOOP_IN, clock_timer_ready, t, &t->watch);
        if (r < 0) {
                close(fd);
                return r;
        }
        t->fd = fd;
        return 0;
}

static int timerfd_arm_absolute(int fd, const struct itimerspec *its, int flags)
{
        if (timerfd_settime(fd, TFD_TIMER_ABSTIME | flags, its, NULL) < 0 &&
            /* The clock was set since the last arm; the new arm took effect anyway. */
            errno != ECANCELED)
                return -errno;
        return 0;
}

int clock_timer_arm(struct clock_timer *t, uint64_t deadline_usec, uint64_t generation)
{
        struct itimerspec its = {
            .it_value.tv_sec = (time_t)(deadline_usec / 1000000),
            .it_value.tv_nsec = (long)(deadline_usec % 1000000) * 1000,
        };
        int r;

        /*
         * The unread count keeps the fd readable: a due arm is reported on the next wait as it
         * is. Not on a realtime clock, which may be set back before that report.
         */
        if (t->unread && !clock_is_realtime(t->clock) && clock_timer_due(t, deadline_usec)) {
                t->armed = true;
                t->deadline_usec = deadline_usec;
                t->generation = generation;
                return 0;
        }
        if (t->fd < 0) {
                r = clock_timer_open(t);
                if (r < 0)
                        return r;
        }
        /* it_value 0 would disarm; the epoch's first nanosecond is as past as any other time. */
        if (its.it_value.tv_sec == 0 && its.it_value.tv_nsec == 0)
                its.it_value.tv_nsec = 1;

        r = timerfd_arm_absolute(t->fd, &its,
                                 clock_is_realtime(t->clock) ? TFD_TIMER_CANCEL_ON_SET : 0);
        if (r < 0) {
                t->armed = false;
                return r;
        }
        t->armed = true;
        t->unread = false;
        t->deadline_usec = deadline_usec;
        t->generation = generation;
        return 0;
}

int clock_timer_disarm(struct clock_timer *t)
{
        static const struct itimerspec off = {};

        t->armed = false;
        if (t->fd < 0)
                return 0;
        if (timerfd_settime(t->fd, 0, &off, NULL) < 0)
                return -errno;
        t->unread = false;
        return 0;
}

int clock_timer_settle(struct clock_timer *t)
{
        int r;

        /* Armed, an unread count is the current arm's expiry still to be reported. */
        if (!t->unread || t->armed)
                return 0;
        r = timerfd_consume(t->fd);
        t->unread = false;
        return r == -ECANCELED ? 0 : r < 0 ? r : 0;
}

void clock_timer_close(struct clock_timer *t)
{
        if (t->fd < 0)
                return;
        loop_unwatch(t->watch);
        close(t->fd);
        t->watch = NULL;
        t->fd = -1;
        t->armed = false;
        t->unread = false;
}

static int clock_set_watch_arm(int fd)
{
        /* Never expires: it exists to be cancelled by a clock change. */
        static const struct itimerspec far = {
            .it_value.tv_sec = (time_t)INT64_MAX,
        };

        return timerfd_arm_absolute(fd, &far, TFD_TIMER_CANCEL_ON_SET);
}

static void clock_set_watch_ready(struct loop_watch *w, int fd, uint32_t events, void *userdata)
{
        (void)w;
        (void)events;

        if (timerfd_consume(fd) == -ECANCELED)
                clock_set_watch_fire(userdata);
}

int clock_set_watch_open(struct clock_set_watch *c, struct loop *l)
{
        int fd, r;

        *c = (struct clock_set_watch){
            .loop = l,
            .fd = -1,
        };

        fd = timerfd_create(CLOCK_REALTIME, TFD_NONBLOCK | TFD_CLOEXEC);
        if (fd < 0)
                return -errno;
        r = clock_set_watch_arm(fd);
        if (r < 0)
                goto fail;
        r = loop_watch_internal(l, fd, LOOP_IN, clock_set_watch_ready, c, &c->watch);
        if (r < 0)
                goto fail;
        c->fd = fd;
        return 0;

fail:
        close(fd);
        return r;
}

void clock_set_watch_close(struct clock_set_watch *c)
{
        if (c->fd < 0)
                return;
        loop_unwatch(c->watch);
        close(c->fd);
        c->watch = NULL;
        c->fd = -1;
}

void clock_set_watch_fire(struct clock_set_watch *c)
{
        /*
         * A cancelled read leaves the timer armed and cancelable; re-arming starts it afresh. If
         * that fails the old arm keeps watching, so the event is still worth reporting.
         */
        (void)clock_set_watch_arm(c->fd);
        loop_dispatch_clock_set(c->loop);
}
