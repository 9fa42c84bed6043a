/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What a loop backend implements, and the bookkeeping all backends share. Private to loop/,
 * timerfd/ and liburing-backend/: the service sees only loop.h.
 *
 * A backend embeds `struct loop` as the FIRST member of its state (loop_free() frees that
 * address) and sizes its watches with `watch_size` (its watch embeds `struct loop_watch` first).
 * loop.c owns the watch list, the deferred free of watches unwatched during a dispatch, the stats
 * and the callbacks; a backend reports what the kernel said through loop_dispatch_*().
 */

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "base/list.h"
#include "loop/loop.h"

struct loop_watch {
        struct loop *loop;
        int fd;
        uint32_t events; /* LOOP_IN|LOOP_OUT, as requested */
        loop_io_fn cb;
        void *userdata;
        bool internal;         /* the backend's own fd: not counted as a dispatched event */
        bool stream;           /* loop_watch_stream(): its bytes are taken with loop_read() */
        bool dead;             /* unwatched: no more callbacks, freed when the iteration ends */
        struct list_node node; /* on the loop's watches, or its graveyard once unwatched */
};

struct loop_backend_ops {
        enum loop_backend backend;
        size_t watch_size;
        int (*watch)(struct loop *l, struct loop_watch *w);
        /* w->events still holds the old mask; loop.c stores the new one on success. */
        int (*watch_update)(struct loop_watch *w, uint32_t events);
        void (*unwatch)(struct loop_watch *w);
        /* loop_read() of a stream watch; NULL: read(2). */
        long (*read)(struct loop_watch *w, void *buf, size_t len);
        /* loop_stream_bulk() of a stream watch; NULL: its reads are read(2) already. */
        void (*stream_bulk)(struct loop_watch *w, bool bulk);
        /* loop_send() and loop_sent() of a stream watch; NULL: the caller writes with send(2). */
        int (*send)(struct loop_watch *w, const void *buf, size_t len);
        long (*sent)(struct loop_watch *w);
        int (*arm)(struct loop *l, enum timerd_clock clock, uint64_t deadline_usec,
                   uint64_t generation);
        int (*disarm)(struct loop *l, enum timerd_clock clock);
        /*
         * One kernel wait of at most timeout_usec (-1: unbounded), then dispatch what it returned.
         * 0 or -errno; an interrupted wait returns 0 (loop.c waits again for the remaining time).
         */
        int (*wait)(struct loop *l, int64_t timeout_usec);
        /* The realtime clock was set: re-arm the clock-set watch and report it. */
        void (*clock_was_set)(struct loop *l);
        /* Release the backend's kernel objects; loop.c frees the watches and the loop after. */
        void (*done)(struct loop *l);
};

struct loop {
        const struct loop_backend_ops *ops;
        struct loop_callbacks cb;
        struct loop_stats stats;
        struct list_node watches;   /* live watches */
        struct list_node graveyard; /* unwatched during the current loop_run_once() */
        bool running;
        uint64_t dispatched; /* events dispatched in the current loop_run_once() */
};

/* -EINVAL when the callbacks lack `expired`. */
int loop_init(struct loop *l, const struct loop_backend_ops *ops, const struct loop_callbacks *cb);

/* A watch for the backend's own fds (clock timerfds): same semantics, not counted. */
int loop_watch_internal(struct loop *l, int fd, uint32_t events, loop_io_fn cb, void *userdata,
                        struct loop_watch **ret);

/* Report to the user; an unwatched watch is skipped, so a stale batch entry is harmless. */
void loop_dispatch_io(struct loop_watch *w, uint32_t events);
void loop_dispatch_expiry(struct loop *l, enum timerd_clock clock, uint64_t generation);
void loop_dispatch_clock_set(struct loop *l);

/* read(2) as loop_read() reports it: >0, 0 at the end, -EAGAIN, -errno (EINTR retried). */
long loop_read_fd(int fd, void *buf, size_t len);

/* The current time of `clockid` in microseconds. */
int loop_now_usec(clockid_t clockid, uint64_t *ret);
