/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The loop interface: the seam between timerd's core and the kernel. A backend watches fds and
 * keeps ONE kernel timer per clock, armed at an absolute deadline the service chooses. Every arm
 * carries a generation; an expiry is reported with the generation it was armed with, so the
 * caller can drop a stale one in O(1). Backends: timerfd (epoll + one timerfd per clock) and
 * io_uring. Single-threaded: all calls come from the thread that runs the loop.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "timerd/timerd-types.h"

enum loop_backend {
        LOOP_BACKEND_TIMERFD,
        LOOP_BACKEND_IO_URING,
        LOOP_BACKEND_MAX,
        LOOP_BACKEND_INVALID = -1,
};

/* fd readiness, as a mask. */
#define LOOP_IN  (1u << 0)
#define LOOP_OUT (1u << 1)
#define LOOP_ERR (1u << 2) /* error or hang-up; always reported, never requested */

struct loop;
struct loop_watch;

/*
 * An fd is ready. Level-triggered on every backend: readiness left unconsumed is reported again
 * on a later iteration. The callback may unwatch this or any other watch.
 */
typedef void (*loop_io_fn)(struct loop_watch *w, int fd, uint32_t events, void *userdata);

/* The kernel timer of `clock` armed with `generation` expired. */
typedef void (*loop_expiry_fn)(enum timerd_clock clock, uint64_t generation, void *userdata);

/* The realtime clock was set (TFD_TIMER_CANCEL_ON_SET): realtime deadlines need re-evaluation. */
typedef void (*loop_clock_set_fn)(void *userdata);

struct loop_callbacks {
        loop_expiry_fn expired;
        loop_clock_set_fn clock_set;
        void *userdata;
};

/* Create a loop on `backend`. -ENOSYS/-EPERM/-EOPNOTSUPP when the backend is refused here. */
int loop_new(enum loop_backend backend, const struct loop_callbacks *cb, struct loop **ret);
void loop_free(struct loop *l);

enum loop_backend loop_backend(const struct loop *l);
const char *loop_backend_to_string(enum loop_backend b);
enum loop_backend loop_backend_from_string(const char *s);

/* Watch fd for `events` (LOOP_IN|LOOP_OUT). The fd stays the caller's to close (unwatch first). */
int loop_watch(struct loop *l, int fd, uint32_t events, loop_io_fn cb, void *userdata,
               struct loop_watch **ret);
int loop_watch_update(struct loop_watch *w, uint32_t events);
/* Safe inside any callback; NULL is ignored. */
void loop_unwatch(struct loop_watch *w);

/*
 * Watch a stream socket whose bytes the caller takes with loop_read() and nothing else. Events
 * as loop_watch(); LOOP_IN means loop_read() has bytes, the end of the stream or an error to give,
 * and is reported again while it has. The io_uring backend receives into buffers of its own with
 * the completion (multishot recv into provided buffers, where the kernel has them), which saves
 * the read(2) of each wake-up; elsewhere this is loop_watch() and loop_read() is read(2).
 */
int loop_watch_stream(struct loop *l, int fd, uint32_t events, loop_io_fn cb, void *userdata,
                      struct loop_watch **ret);
/* Take up to len bytes of w's stream, as read(2) of its fd: >0, 0 at its end, -EAGAIN, -errno. */
long loop_read(struct loop_watch *w, void *buf, size_t len);
/*
 * The peer of stream watch w sends more than one wake-up's worth (bulk) or one message per
 * wake-up (not bulk, the default). A completion per write of the peer costs more than one
 * read(2) of all that is queued, so a bulk stream is taken by poll and read(2) on io_uring; a
 * peer that waits for each answer saves that read(2) with the recv. What loop_read() gives is
 * the same either way. 0, or -EINVAL for a watch that is not a live stream watch.
 */
int loop_stream_bulk(struct loop_watch *w, bool bulk);

/*
 * Send len bytes of buf on stream watch w when the loop next enters the kernel to wait, without a
 * system call of their own (io_uring: a send in the io_uring_enter() of the wait). The bytes are
 * copied. 1 when queued; 0 when the backend has no such send here (the caller writes with
 * send(2)); -EBUSY while w's last send's outcome was not taken with loop_sent(); -ENOMEM, -errno.
 * A send that did not take every byte is reported to w's callback as LOOP_OUT. The watch's fd
 * may be closed right after loop_unwatch(): what was queued has left.
 */
int loop_send(struct loop_watch *w, const void *buf, size_t len);
/*
 * The outcome of w's last loop_send(), once: the bytes the socket took (all of them unless it
 * filled: the rest is the caller's to write), -EAGAIN when it was full and took none, another
 * -errno when the connection broke, -EINPROGRESS when not known yet (w then reports LOOP_OUT
 * once it is), -ENOENT when there is none to give.
 */
long loop_sent(struct loop_watch *w);

/*
 * Arm `clock`'s kernel timer at absolute `deadline_usec` on that clock, replacing any earlier arm.
 * A deadline in the past expires at once. -EPERM for an alarm clock without CAP_WAKE_ALARM,
 * -EINVAL for a bad clock, other -errno from the kernel.
 */
int loop_arm(struct loop *l, enum timerd_clock clock, uint64_t deadline_usec, uint64_t generation);
/* Disarm `clock`. Idempotent. */
int loop_disarm(struct loop *l, enum timerd_clock clock);

/*
 * Wait for events and dispatch them: at most `timeout_usec` (-1: until something happens).
 * Returns the number of events dispatched (0 on timeout) or -errno (-EINTR is retried inside).
 */
int loop_run_once(struct loop *l, int64_t timeout_usec);

/* Counters for Status. */
struct loop_stats {
        uint64_t wakeups;    /* returns from the kernel wait */
        uint64_t expiries;   /* expiries reported (stale ones included) */
        uint64_t clock_sets; /* realtime clock-set events seen */
        uint64_t arms;       /* loop_arm calls that succeeded (some need no syscall) */
        uint64_t stale;      /* kernel completions of replaced arms or watches, dropped */
};
void loop_get_stats(const struct loop *l, struct loop_stats *ret);
