/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The backend-independent half of the loop interface: argument checks, the watch list, deferred
 * free of watches unwatched while a batch is dispatched, stats, and run_once's retry of the
 * backend's wait until something was dispatched or the timeout passed.
 */

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clockid.h"
#include "loop/loop-backend.h"
#include "loop/loop-test.h"

static const char *const backend_names[LOOP_BACKEND_MAX] = {
    [LOOP_BACKEND_TIMERFD] = "timerfd",
    [LOOP_BACKEND_IO_URING] = "io_uring",
};

const char *loop_backend_to_string(enum loop_backend b)
{
        if (b < 0 || b >= LOOP_BACKEND_MAX)
                return NULL;
        return backend_names[b];
}

enum loop_backend loop_backend_from_string(const char *s)
{
        if (!s)
                return LOOP_BACKEND_INVALID;
        for (int b = 0; b < LOOP_BACKEND_MAX; b++)
                if (strcmp(s, backend_names[b]) == 0)
                        return (enum loop_backend)b;
        return LOOP_BACKEND_INVALID;
}

enum loop_backend loop_backend(const struct loop *l)
{
        if (!l)
                return LOOP_BACKEND_INVALID;
        return l->ops->backend;
}

int loop_init(struct loop *l, const struct loop_backend_ops *ops, const struct loop_callbacks *cb)
{
        if (!cb || !cb->expired)
                return -EINVAL;
        *l = (struct loop){
            .ops = ops,
            .cb = *cb,
        };
        list_init(&l->watches);
        list_init(&l->graveyard);
        return 0;
}

int loop_now_usec(clockid_t clockid, uint64_t *ret)
{
        struct timespec ts;

        if (clock_gettime(clockid, &ts) < 0)
                return -errno;
        *ret = (uint64_t)ts.tv_sec * UINT64_C(1000000) + (uint64_t)ts.tv_nsec / 1000;
        return 0;
}

static void watch_free_all(struct list_node *head)
{
        while (!list_empty(head)) {
                struct loop_watch *w = list_entry(head->next, struct loop_watch, node);

                list_remove(&w->node);
                free(w);
        }
}

static int watch_new(struct loop *l, int fd, uint32_t events, loop_io_fn cb, void *userdata,
                     bool internal, bool stream, struct loop_watch **ret)
{
        struct loop_watch *w;
        int r;

        if (!l || fd < 0 || !cb || !ret || (events & ~(LOOP_IN | LOOP_OUT)))
                return -EINVAL;

        w = calloc(1, l->ops->watch_size);
        if (!w)
                return -ENOMEM;
        w->loop = l;
        w->fd = fd;
        w->events = events;
        w->cb = cb;
        w->userdata = userdata;
        w->internal = internal;
        w->stream = stream;

        r = l->ops->watch(l, w);
        if (r < 0) {
                free(w);
                return r;
        }
        list_append(&l->watches, &w->node);
        *ret = w;
        return 0;
}

int loop_watch(struct loop *l, int fd, uint32_t events, loop_io_fn cb, void *userdata,
               struct loop_watch **ret)
{
        return watch_new(l, fd, events, cb, userdata, false, false, ret);
}

int loop_watch_stream(struct loop *l, int fd, uint32_t events, loop_io_fn cb, void *userdata,
                      struct loop_watch **ret)
{
        return watch_new(l, fd, events, cb, userdata, false, true, ret);
}

long loop_read_fd(int fd, void *buf, size_t len)
{
        ssize_t n;

        do
                n = read(fd, buf, len);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return errno == EWOULDBLOCK ? -EAGAIN : -errno;
        return n;
}

long loop_read(struct loop_watch *w, void *buf, size_t len)
{
        if (!w || w->dead || !w->stream || (!buf && len > 0))
                return -EINVAL;
        if (w->loop->ops->read)
                return w->loop->ops->read(w, buf, len);
        return loop_read_fd(w->fd, buf, len);
}

int loop_stream_bulk(struct loop_watch *w, bool bulk)
{
        if (!w || w->dead || !w->stream)
                return -EINVAL;
        if (w->loop->ops->stream_bulk)
                w->loop->ops->stream_bulk(w, bulk);
        return 0;
}

int loop_send(struct loop_watch *w, const void *buf, size_t len)
{
        if (!w || w->dead || !w->stream || (!buf && len > 0))
                return -EINVAL;
        if (!w->loop->ops->send)
                return 0;
        return w->loop->ops->send(w, buf, len);
}

long loop_sent(struct loop_watch *w)
{
        if (!w || w->dead || !w->stream)
                return -EINVAL;
        if (!w->loop->ops->sent)
                return -ENOENT;
        return w->loop->ops->sent(w);
}

int loop_watch_internal(struct loop *l, int fd, uint32_t events, loop_io_fn cb, void *userdata,
                        struct loop_watch **ret)
{
        return watch_new(l, fd, events, cb, userdata, true, false, ret);
}

int loop_watch_update(struct loop_watch *w, uint32_t events)
{
        int r;

        if (!w || w->dead || (events & ~(LOOP_IN | LOOP_OUT)))
                return -EINVAL;
        if (events == w->events)
                return 0;
        r = w->loop->ops->watch_update(w, events);
        if (r < 0)
                return r;
        w->events = events;
        return 0;
}

void loop_unwatch(struct loop_watch *w)
{
        struct loop *l;

        if (!w || w->dead)
                return;
        l = w->loop;
        w->dead = true;
        l->ops->unwatch(w);
        list_remove(&w->node);
        /* Later entries of the batch being dispatched may still point here. */
        if (l->running)
                list_append(&l->graveyard, &w->node);
        else
                free(w);
}

void loop_free(struct loop *l)
{
        if (!l)
                return;
        l->ops->done(l);
        watch_free_all(&l->watches);
        watch_free_all(&l->graveyard);
        free(l);
}

void loop_dispatch_io(struct loop_watch *w, uint32_t events)
{
        if (w->dead)
                return;
        if (!w->internal)
                w->loop->dispatched++;
        w->cb(w, w->fd, events, w->userdata);
}

void loop_dispatch_expiry(struct loop *l, enum timerd_clock clock, uint64_t generation)
{
        l->stats.expiries++;
        l->dispatched++;
        l->cb.expired(clock, generation, l->cb.userdata);
}

void loop_dispatch_clock_set(struct loop *l)
{
        l->stats.clock_sets++;
        l->dispatched++;
        if (l->cb.clock_set)
                l->cb.clock_set(l->cb.userdata);
}

void loop_inject_clock_set(struct loop *l)
{
        l->ops->clock_was_set(l);
}

int loop_arm(struct loop *l, enum timerd_clock clock, uint64_t deadline_usec, uint64_t generation)
{
        int r;

        if (!l || !clock_valid(clock))
                return -EINVAL;
        r = l->ops->arm(l, clock, deadline_usec, generation);
        if (r < 0)
                return r;
        l->stats.arms++;
        return 0;
}

int loop_disarm(struct loop *l, enum timerd_clock clock)
{
        if (!l || !clock_valid(clock))
                return -EINVAL;
        return l->ops->disarm(l, clock);
}

int loop_run_once(struct loop *l, int64_t timeout_usec)
{
        uint64_t start = 0, now;
        int64_t remaining = timeout_usec;
        int r;

        if (!l || timeout_usec < -1)
                return -EINVAL;
        if (l->running)
                return -EBUSY;

        if (timeout_usec > 0) {
                r = loop_now_usec(CLOCK_MONOTONIC, &start);
                if (r < 0)
                        return r;
        }

        l->running = true;
        l->dispatched = 0;
        for (;;) {
                r = l->ops->wait(l, remaining);
                /* A wake-up for the backend's own bookkeeping only is no event: wait on. */
                if (r < 0 || l->dispatched > 0 || timeout_usec == 0)
                        break;
                if (timeout_usec > 0) {
                        r = loop_now_usec(CLOCK_MONOTONIC, &now);
                        if (r < 0)
                                break;
                        if (now - start >= (uint64_t)timeout_usec)
                                break;
                        remaining = timeout_usec - (int64_t)(now - start);
                }
        }
        l->running = false;
        watch_free_all(&l->graveyard);

        if (r < 0)
                return r;
        return l->dispatched > INT_MAX ? INT_MAX : (int)l->dispatched;
}

void loop_get_stats(const struct loop *l, struct loop_stats *ret)
{
        if (!l || !ret)
                return;
        *ret = l->stats;
}
