/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "timerfd/clock-timerfd.h"
#include "timerfd/timerfd-loop.h"

#define EPOLL_BATCH 64

struct timerfd_loop {
        struct loop base;
        int epoll_fd;
        struct clock_timer timers[TIMERD_CLOCK_MAX];
        struct clock_set_watch clock_set;
};

static_assert(offsetof(struct timerfd_loop, base) == 0, "loop_free() frees the base address");

static struct timerfd_loop *to_timerfd_loop(struct loop *l)
{
        return (struct timerfd_loop *)l;
}

static uint32_t epoll_events_from_loop(uint32_t events)
{
        return (events & LOOP_IN ? EPOLLIN : 0u) | (events & LOOP_OUT ? EPOLLOUT : 0u);
}

static uint32_t loop_events_from_epoll(uint32_t events)
{
        return (events & (EPOLLIN | EPOLLPRI) ? LOOP_IN : 0u) |
               (events & EPOLLOUT ? LOOP_OUT : 0u) |
               (events & (EPOLLERR | EPOLLHUP) ? LOOP_ERR : 0u);
}

static int epoll_ctl_watch(struct loop_watch *w, int op, uint32_t events)
{
        struct epoll_event ev = {
            .events = epoll_events_from_loop(events),
            .data.ptr = w,
        };

        if (epoll_ctl(to_timerfd_loop(w->loop)->epoll_fd, op, w->fd, &ev) < 0)
                return -errno;
        return 0;
}

static int timerfd_loop_watch(struct loop *l, struct loop_watch *w)
{
        (void)l;
        return epoll_ctl_watch(w, EPOLL_CTL_ADD, w->events);
}

static int timerfd_loop_watch_update(struct loop_watch *w, uint32_t events)
{
        return epoll_ctl_watch(w, EPOLL_CTL_MOD, events);
}

static void timerfd_loop_unwatch(struct loop_watch *w)
{
        /* Fails only if the caller closed the fd first, which already removed it from epoll. */
        (void)epoll_ctl(to_timerfd_loop(w->loop)->epoll_fd, EPOLL_CTL_DEL, w->fd, NULL);
}

static int timerfd_loop_arm(struct loop *l, enum timerd_clock clock, uint64_t deadline_usec,
                            uint64_t generation)
{
        return clock_timer_arm(&to_timerfd_loop(l)->timers[clock], deadline_usec, generation);
}

static int timerfd_loop_disarm(struct loop *l, enum timerd_clock clock)
{
        return clock_timer_disarm(&to_timerfd_loop(l)->timers[clock]);
}

static int timeout_msec(int64_t timeout_usec)
{
        int64_t msec;

        if (timeout_usec < 0)
                return -1;
        /* Round up: waking before the deadline would only spin. */
        msec = timeout_usec / 1000 + (timeout_usec % 1000 != 0);
        return msec > INT_MAX ? INT_MAX : (int)msec;
}

static int timerfd_loop_wait(struct loop *l, int64_t timeout_usec)
{
        struct timerfd_loop *t = to_timerfd_loop(l);
        struct epoll_event events[EPOLL_BATCH];
        int n, r;

        for (int c = 0; c < TIMERD_CLOCK_MAX; c++) {
                r = clock_timer_settle(&t->timers[c]);
                if (r < 0)
                        return r;
        }
        n = epoll_wait(t->epoll_fd, events, EPOLL_BATCH, timeout_msec(timeout_usec));
        if (n < 0)
                return errno == EINTR ? 0 : -errno;
        l->stats.wakeups++;

        for (int i = 0; i < n; i++)
                loop_dispatch_io(events[i].data.ptr, loop_events_from_epoll(events[i].events));
        return 0;
}

static void timerfd_loop_clock_was_set(struct loop *l)
{
        clock_set_watch_fire(&to_timerfd_loop(l)->clock_set);
}

static void timerfd_loop_done(struct loop *l)
{
        struct timerfd_loop *t = to_timerfd_loop(l);

        for (int c = 0; c < TIMERD_CLOCK_MAX; c++)
                clock_timer_close(&t->timers[c]);
        clock_set_watch_close(&t->clock_set);
        if (t->epoll_fd >= 0)
                close(t->epoll_fd);
}

static const struct loop_backend_ops timerfd_loop_ops = {
    .backend = LOOP_BACKEND_TIMERFD,
    .watch_size = sizeof(struct loop_watch),
    .watch = timerfd_loop_watch,
    .watch_update = timerfd_loop_watch_update,
    .unwatch = timerfd_loop_unwatch,
    .arm = timerfd_loop_arm,
    .disarm = timerfd_loop_disarm,
    .wait = timerfd_loop_wait,
    .clock_was_set = timerfd_loop_clock_was_set,
    .done = timerfd_loop_done,
};

int timerfd_loop_new(const struct loop_callbacks *cb, struct loop **ret)
{
        struct timerfd_loop *t;
        int r;

        if (!ret)
                return -EINVAL;
        t = calloc(1, sizeof(*t));
        if (!t)
                return -ENOMEM;
        r = loop_init(&t->base, &timerfd_loop_ops, cb);
        if (r < 0) {
                free(t);
                return r;
        }
        t->clock_set.fd = -1;
        for (int c = 0; c < TIMERD_CLOCK_MAX; c++)
                clock_timer_init(&t->timers[c], &t->base, (enum timerd_clock)c, true);

        t->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
        if (t->epoll_fd < 0) {
                r = -errno;
                goto fail;
        }
        r = clock_set_watch_open(&t->clock_set, &t->base);
        if (r < 0)
                goto fail;

        *ret = &t->base;
        return 0;

fail:
        loop_free(&t->base);
        return r;
}
