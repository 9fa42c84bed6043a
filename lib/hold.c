/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "hold.h"

#define USEC_PER_SEC  1000000ULL
#define NSEC_PER_USEC 1000ULL

static int lane_of(enum timerd_clock clock)
{
        switch (clock) {
        case TIMERD_CLOCK_BOOTTIME:
        case TIMERD_CLOCK_BOOTTIME_ALARM:
                return HOLD_LANE_BOOTTIME;
        case TIMERD_CLOCK_REALTIME:
        case TIMERD_CLOCK_REALTIME_ALARM:
                return HOLD_LANE_REALTIME;
        default:
                return HOLD_LANE_MONOTONIC;
        }
}

static const clockid_t lane_clocks[HOLD_LANE_MAX] = {
    [HOLD_LANE_MONOTONIC] = CLOCK_MONOTONIC,
    [HOLD_LANE_BOOTTIME] = CLOCK_BOOTTIME,
    [HOLD_LANE_REALTIME] = CLOCK_REALTIME,
};

static bool read_clock(clockid_t id, uint64_t *ret)
{
        struct timespec ts;

        if (clock_gettime(id, &ts) < 0)
                return false;
        *ret = (uint64_t)ts.tv_sec * USEC_PER_SEC + (uint64_t)ts.tv_nsec / NSEC_PER_USEC;
        return true;
}

/* How long until `deadline`, seen at `now`: 0 when it is due (see hold.h). */
static uint64_t remaining(uint64_t deadline, uint64_t now)
{
        if (deadline <= now || deadline - now > TIMERD_HANDOVER_MAX_USEC)
                return 0;
        return deadline - now;
}

static uint64_t firing_remaining(const struct timerd_firing *f)
{
        uint64_t now;

        if (!read_clock(lane_clocks[lane_of(f->clock)], &now))
                return 0;
        return remaining(f->deadline_usec, now);
}

bool hold_due(const struct timerd_firing *f)
{
        return firing_remaining(f) == 0;
}

static struct timespec timespec_of(uint64_t usec)
{
        return (struct timespec){.tv_sec = (time_t)(usec / USEC_PER_SEC),
                                 .tv_nsec = (long)(usec % USEC_PER_SEC * NSEC_PER_USEC)};
}

/* Without a timerfd (out of descriptors): a plain sleep, which the kernel may stretch by the
 * thread's timer slack. */
static void sleep_without_timerfd(const struct timerd_firing *f)
{
        clockid_t id = lane_clocks[lane_of(f->clock)];
        struct timespec until = timespec_of(f->deadline_usec);

        while (!hold_due(f)) {
                int r = clock_nanosleep(id, TIMER_ABSTIME, &until, NULL);

                if (r != 0 && r != EINTR)
                        return;
        }
}

void hold_init(struct hold *h)
{
        *h = (struct hold){};
        for (int lane = 0; lane < HOLD_LANE_MAX; lane++)
                h->timerfds[lane] = -1;
}

void hold_sleep(struct hold *h, const struct timerd_firing *f)
{
        int lane = lane_of(f->clock);
        /* A wall clock set meanwhile ends the sleep, to look at the deadline again. */
        int flags = TFD_TIMER_ABSTIME | (lane == HOLD_LANE_REALTIME ? TFD_TIMER_CANCEL_ON_SET : 0);
        struct itimerspec its = {.it_value = timespec_of(f->deadline_usec)};
        uint64_t expirations;

        if (hold_due(f))
                return;
        /* A timerfd, like an in-process timer: no timer slack added to the wake-up. */
        if (h->timerfds[lane] < 0)
                h->timerfds[lane] = timerfd_create(lane_clocks[lane], TFD_CLOEXEC);
        /* Each timerfd_settime() also drops expirations a sleep ended by a signal left. */
        while (h->timerfds[lane] >= 0 && !hold_due(f)) {
                if (timerfd_settime(h->timerfds[lane], flags, &its, NULL) < 0)
                        break;
                if (read(h->timerfds[lane], &expirations, sizeof(expirations)) < 0 &&
                    errno != EINTR && errno != ECANCELED)
                        break;
        }
        /* Without a timerfd (out of descriptors) or when it failed. */
        if (!hold_due(f))
                sleep_without_timerfd(f);
}

int hold_put(struct hold *h, const struct held_firing *item)
{
        struct hold_lane *l = &h->lanes[lane_of(item->firing.clock)];
        size_t i;

        if (l->n == l->allocated && l->head > 0) {
                memmove(l->items, l->items + l->head, (l->n - l->head) * sizeof(*l->items));
                l->n -= l->head;
                l->head = 0;
        }
        if (l->n == l->allocated) {
                size_t allocated = l->allocated > 0 ? 2 * l->allocated : 16;
                struct held_firing *items = reallocarray(l->items, allocated, sizeof(*items));

                if (!items)
                        return -ENOMEM;
                l->items = items;
                l->allocated = allocated;
        }
        /* From the back: firings mostly come in deadline order. */
        for (i = l->n;
             i > l->head && l->items[i - 1].firing.deadline_usec > item->firing.deadline_usec; i--)
                ;
        memmove(l->items + i + 1, l->items + i, (l->n - i) * sizeof(*l->items));
        l->items[i] = *item;
        l->n++;
        return 0;
}

static void lane_remove(struct hold_lane *l, size_t i, struct held_firing *ret)
{
        *ret = l->items[i];
        if (i == l->head)
                l->head++;
        else {
                memmove(l->items + i, l->items + i + 1, (l->n - i - 1) * sizeof(*l->items));
                l->n--;
        }
        if (l->head == l->n)
                l->head = l->n = 0;
}

bool hold_take(struct hold *h, bool all, struct held_firing *ret)
{
        for (int lane = 0; lane < HOLD_LANE_MAX; lane++) {
                struct hold_lane *l = &h->lanes[lane];

                if (l->head < l->n && (all || hold_due(&l->items[l->head].firing))) {
                        lane_remove(l, l->head, ret);
                        return true;
                }
        }
        return false;
}

bool hold_take_stream(struct hold *h, const void *stream, struct held_firing *ret)
{
        for (int lane = 0; lane < HOLD_LANE_MAX; lane++) {
                struct hold_lane *l = &h->lanes[lane];

                for (size_t i = l->head; i < l->n; i++)
                        if (l->items[i].stream == stream) {
                                lane_remove(l, i, ret);
                                return true;
                        }
        }
        return false;
}

size_t hold_count(const struct hold *h)
{
        size_t n = 0;

        for (int lane = 0; lane < HOLD_LANE_MAX; lane++)
                n += h->lanes[lane].n - h->lanes[lane].head;
        return n;
}

bool hold_next(const struct hold *h, uint64_t *ret_usec)
{
        uint64_t monotonic = 0, earliest = UINT64_MAX;

        if (hold_count(h) == 0)
                return false;
        /* Unreadable, it is 0: whatever is held is due at once. */
        (void)read_clock(CLOCK_MONOTONIC, &monotonic);
        for (int lane = 0; lane < HOLD_LANE_MAX; lane++) {
                const struct hold_lane *l = &h->lanes[lane];
                uint64_t now = monotonic, due;

                if (l->head == l->n)
                        continue;
                if (lane != HOLD_LANE_MONOTONIC && !read_clock(lane_clocks[lane], &now))
                        now = l->items[l->head].firing.deadline_usec;
                due = monotonic + remaining(l->items[l->head].firing.deadline_usec, now);
                if (due < earliest)
                        earliest = due;
        }
        *ret_usec = earliest;
        return true;
}

void hold_done(struct hold *h)
{
        for (int lane = 0; lane < HOLD_LANE_MAX; lane++) {
                free(h->lanes[lane].items);
                if (h->timerfds[lane] >= 0)
                        close(h->timerfds[lane]);
        }
        hold_init(h);
}
