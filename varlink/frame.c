/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <assert.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "varlink/frame.h"

#define BUFFER_SIZE_MIN 4096

static size_t size_min(size_t a, size_t b)
{
        return a < b ? a : b;
}

/* Doubles cap from BUFFER_SIZE_MIN until it reaches need, never past limit (need <= limit). */
static size_t grown_size(size_t cap, size_t need, size_t limit)
{
        size_t n = cap > 0 ? cap : BUFFER_SIZE_MIN;

        while (n < need && n <= limit / 2)
                n *= 2;
        return size_min(n < need ? need : n, limit);
}

static size_t reader_limit(const struct vl_reader *r)
{
        /* One whole message and its NUL. */
        return r->max_message < SIZE_MAX ? r->max_message + 1 : SIZE_MAX;
}

void vl_reader_init(struct vl_reader *r, size_t max_message)
{
        *r = (struct vl_reader){.max_message = max_message};
}

void vl_reader_done(struct vl_reader *r)
{
        free(r->buf);
        *r = (struct vl_reader){.max_message = r->max_message};
}

static bool reader_holds_message(struct vl_reader *r)
{
        size_t held = r->len - r->start;

        if (memchr(r->buf + r->start + r->scanned, 0, held - r->scanned))
                return true;
        r->scanned = held;
        return false;
}

/*
 * Makes free space after the held bytes: moves them to the front, then grows the buffer when it
 * is full or the last read filled it. The buffer never holds more than one message can take, so
 * a peer cannot make it grow without bound. The held bytes stay where they are while a read that
 * did not fill its room left BUFFER_SIZE_MIN or more behind them: a service reading a few calls
 * at a time behind a burst it has yet to take moved the whole burst at every read (~19 KiB, 3 k
 * instructions per pipelined call).
 */
static int reader_make_room(struct vl_reader *r)
{
        size_t limit = reader_limit(r);
        size_t cap;
        char *buf;

        if (r->start > 0 && (r->filled || r->cap - r->len < BUFFER_SIZE_MIN)) {
                memmove(r->buf, r->buf + r->start, r->len - r->start);
                r->len -= r->start;
                r->start = 0;
        }
        if (r->len < r->cap && (!r->filled || r->cap >= limit))
                return 0;
        if (r->cap >= limit)
                /* Full: either whole messages wait to be taken, or one message is too long. */
                return reader_holds_message(r) ? -ENOBUFS : -EMSGSIZE;

        /* Doubled, or straight to the bound from past its half (not a byte a read). */
        cap = grown_size(r->cap, r->cap < limit / 2 ? r->cap + 1 : limit, limit);
        buf = realloc(r->buf, cap);
        if (!buf)
                return -ENOMEM;
        r->buf = buf;
        r->cap = cap;
        r->filled = false;
        return 0;
}

long vl_reader_fill_from(struct vl_reader *r, vl_read_fn *read_fn, void *ctx)
{
        size_t room;
        long n;
        int err;

        err = reader_make_room(r);
        if (err < 0)
                return err;

        room = r->cap - r->len;
        n = read_fn(ctx, r->buf + r->len, room);
        if (n < 0)
                return n;
        r->len += (size_t)n;
        r->filled = (size_t)n == room;
        return n;
}

struct fd_source {
        int fd;
        int flags; /* recv(2)'s, or -1: read(2) */
};

static long read_fd(void *ctx, void *buf, size_t len)
{
        const struct fd_source *src = ctx;
        ssize_t n;

        do
                n = src->flags < 0 ? read(src->fd, buf, len) : recv(src->fd, buf, len, src->flags);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return errno == EWOULDBLOCK ? -EAGAIN : -errno;
        return n;
}

long vl_reader_fill(struct vl_reader *r, int fd)
{
        struct fd_source src = {.fd = fd, .flags = -1};

        return vl_reader_fill_from(r, read_fd, &src);
}

long vl_reader_recv(struct vl_reader *r, int fd, bool wait)
{
        struct fd_source src = {.fd = fd, .flags = wait ? 0 : MSG_DONTWAIT};

        return vl_reader_fill_from(r, read_fd, &src);
}

int vl_reader_feed(struct vl_reader *r, const void *data, size_t len)
{
        const char *p = data;

        while (len > 0) {
                size_t n;
                int err;

                err = reader_make_room(r);
                if (err < 0)
                        return err;

                n = size_min(len, r->cap - r->len);
                memcpy(r->buf + r->len, p, n);
                r->len += n;
                p += n;
                len -= n;
        }
        return 0;
}

int vl_reader_next(struct vl_reader *r, const char **ret_msg, size_t *ret_len)
{
        size_t held = r->len - r->start;
        const char *msg, *nul;
        size_t len;

        nul =
            held > r->scanned ? memchr(r->buf + r->start + r->scanned, 0, held - r->scanned) : NULL;
        if (!nul) {
                r->scanned = held;
                return held > r->max_message ? -EMSGSIZE : 0;
        }
        msg = r->buf + r->start;

        len = (size_t)(nul - msg);
        /* The buffer holds at most max_message bytes before a NUL. */
        assert(len <= r->max_message);

        r->start += len + 1;
        r->scanned = 0;
        if (r->start == r->len)
                r->start = r->len = 0;

        *ret_msg = msg;
        *ret_len = len;
        return 1;
}

size_t vl_reader_unfinished(const struct vl_reader *r)
{
        size_t held = r->len - r->start;
        const char *last_nul;

        if (held == 0)
                return 0;
        last_nul = memrchr(r->buf + r->start, 0, held);
        return last_nul ? (size_t)(r->buf + r->len - (last_nul + 1)) : held;
}

bool vl_reader_partial(const struct vl_reader *r)
{
        return vl_reader_unfinished(r) > 0;
}

void vl_writer_init(struct vl_writer *w, size_t max_buffered)
{
        *w = (struct vl_writer){.max_buffered = max_buffered};
}

void vl_writer_done(struct vl_writer *w)
{
        free(w->buf);
        *w = (struct vl_writer){.max_buffered = w->max_buffered};
}

bool vl_writer_appending(const struct vl_writer *w)
{
        return w->appending;
}

size_t vl_writer_pending(const struct vl_writer *w)
{
        return w->len - w->start;
}

/* The end of what may be written now. */
static size_t sendable_end(const struct vl_writer *w)
{
        if (!w->holding || w->hold - w->base >= w->len)
                return w->len;
        return (size_t)(w->hold - w->base);
}

size_t vl_writer_sendable(const struct vl_writer *w)
{
        return sendable_end(w) - w->start;
}

/* What was written makes room at the front. */
static void writer_compact(struct vl_writer *w)
{
        if (w->start == 0)
                return;
        memmove(w->buf, w->buf + w->start, w->len - w->start);
        w->base += w->start;
        w->len -= w->start;
        w->start = 0;
}

int vl_writer_queue(struct vl_writer *w, const char *msg, size_t len)
{
        size_t pending = vl_writer_pending(w);
        size_t need;

        assert(!w->appending);
        if (len >= w->max_buffered || pending > w->max_buffered - len - 1)
                return -ENOBUFS;
        need = pending + len + 1;

        if (w->cap - w->len < len + 1)
                writer_compact(w);
        if (w->cap < need) {
                size_t cap = grown_size(w->cap, need, w->max_buffered);
                char *buf = realloc(w->buf, cap);

                if (!buf)
                        return -ENOMEM;
                w->buf = buf;
                w->cap = cap;
        }

        memcpy(w->buf + w->len, msg, len);
        w->buf[w->len + len] = 0;
        w->len += len + 1;
        return 0;
}

void vl_writer_append_begin(struct vl_writer *w, char **buf, size_t *len, size_t *cap,
                            uint64_t *ret_position)
{
        assert(!w->appending);
        w->appending = true;
        /* Moved only once more was written than is pending: each byte moves once on average. */
        if (w->start >= vl_writer_pending(w))
                writer_compact(w);
        *buf = w->buf;
        *len = w->len;
        *cap = w->cap;
        *ret_position = w->base + w->len;
}

int vl_writer_append_end(struct vl_writer *w, char *buf, size_t len, size_t cap)
{
        assert(w->appending);
        w->appending = false;
        w->buf = buf;
        w->cap = cap;
        if (len - w->start > w->max_buffered)
                return -ENOBUFS;
        w->len = len;
        return 0;
}

void vl_writer_hold(struct vl_writer *w, uint64_t position)
{
        assert(!w->appending);
        if (w->holding)
                return;
        w->holding = true;
        w->hold = position;
}

void vl_writer_release(struct vl_writer *w)
{
        w->holding = false;
}

void vl_writer_drop_held(struct vl_writer *w)
{
        assert(!w->appending);
        w->len = sendable_end(w);
        w->holding = false;
}

int vl_writer_replace(struct vl_writer *w, uint64_t position, size_t len_old, const char *msg,
                      size_t len)
{
        size_t at = (size_t)(position - w->base), total = w->len - len_old + len;

        assert(!w->appending);
        if (total > w->cap) {
                char *buf = realloc(w->buf, total);

                if (!buf)
                        return -ENOMEM;
                w->buf = buf;
                w->cap = total;
        }
        memmove(w->buf + at + len, w->buf + at + len_old, w->len - at - len_old);
        memcpy(w->buf + at, msg, len);
        w->len = total;
        return 0;
}

/*
 * write() for what is not a socket (pipes in tests): SIGPIPE is blocked around the write and a
 * SIGPIPE the write raised is taken back, so the caller sees -EPIPE like send(MSG_NOSIGNAL).
 */
static ssize_t write_without_sigpipe(int fd, const void *data, size_t len)
{
        sigset_t pipe_set, old_set, pending;
        bool was_pending;
        ssize_t n;
        int saved_errno, err;

        sigemptyset(&pipe_set);
        sigaddset(&pipe_set, SIGPIPE);
        err = pthread_sigmask(SIG_BLOCK, &pipe_set, &old_set);
        if (err != 0) {
                errno = err;
                return -1;
        }
        was_pending = sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) == 1;

        n = write(fd, data, len);
        saved_errno = errno;
        if (n < 0 && saved_errno == EPIPE && !was_pending) {
                const struct timespec zero = {0};

                (void)sigtimedwait(&pipe_set, NULL, &zero);
        }

        (void)pthread_sigmask(SIG_SETMASK, &old_set, NULL);
        errno = saved_errno;
        return n;
}

const char *vl_writer_sendable_data(const struct vl_writer *w, size_t *ret_len)
{
        assert(!w->appending);
        *ret_len = vl_writer_sendable(w);
        return w->buf ? w->buf + w->start : NULL;
}

/* All written: the buffer starts over. */
static void writer_rewind_if_empty(struct vl_writer *w)
{
        if (w->start == w->len) {
                w->base += w->len;
                w->start = w->len = 0;
        }
}

void vl_writer_written(struct vl_writer *w, size_t n)
{
        assert(n <= vl_writer_sendable(w));
        w->start += n;
        writer_rewind_if_empty(w);
}

int vl_writer_flush(struct vl_writer *w, int fd)
{
        /* A lent buffer may have moved (realloc): what w holds is stale until it is given back. */
        assert(!w->appending);
        size_t end = sendable_end(w);

        while (w->start < end) {
                const char *p = w->buf + w->start;
                size_t left = end - w->start;
                ssize_t n;

                n = send(fd, p, left, MSG_NOSIGNAL | MSG_DONTWAIT);
                if (n < 0 && errno == ENOTSOCK)
                        n = write_without_sigpipe(fd, p, left);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return errno == EWOULDBLOCK ? -EAGAIN : -errno;
                }
                if (n == 0)
                        /* A stream that takes nothing without an error will not take more later. */
                        return -EIO;
                w->start += (size_t)n;
        }
        writer_rewind_if_empty(w);
        return 0;
}
