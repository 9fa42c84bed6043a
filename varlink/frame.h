/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Varlink framing: NUL-terminated messages on a byte stream. A reader accumulates input and hands
 * out whole messages; a writer queues output up to a bound. Neither blocks (the caller polls) but
 * vl_reader_recv() asked to wait. Shared by the service and libtimerd.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct vl_reader {
        char *buf;
        size_t len;   /* bytes held */
        size_t start; /* first byte not yet handed out */
        size_t cap;
        size_t max_message; /* a message longer than this is refused */
        size_t scanned;     /* bytes from start known to hold no NUL: each byte is searched once */
        bool filled;        /* the last read took all the room: the peer may have more */
};

/* max_message: the largest message accepted, NUL excluded. */
void vl_reader_init(struct vl_reader *r, size_t max_message);
void vl_reader_done(struct vl_reader *r);

/*
 * Read what the fd has. A read that took all the room it had doubles the buffer for the next one
 * (up to one message's bound), so a peer that sends in bulk is read in a few large reads, not in
 * many of the first size. Returns bytes read (>0), 0 at end of stream, -EAGAIN when nothing is
 * ready, -EMSGSIZE when the pending message outgrew max_message, -ENOBUFS when the buffer (one
 * message long) is full of whole messages not yet taken with vl_reader_next, or another -errno.
 */
long vl_reader_fill(struct vl_reader *r, int fd);

/*
 * vl_reader_fill by recv(2) from a socket: without `wait` it does not block whatever the socket's
 * O_NONBLOCK; with it, on a blocking socket, it waits for the first bytes (a signal does not end
 * the wait). Same returns.
 */
long vl_reader_recv(struct vl_reader *r, int fd, bool wait);

/* Where vl_reader_fill_from() takes bytes, as read(2) would: >0, 0 at the end, -EAGAIN, -errno. */
typedef long vl_read_fn(void *ctx, void *buf, size_t len);
/* vl_reader_fill() from a source other than an fd (the service's loop_read()). Same results. */
long vl_reader_fill_from(struct vl_reader *r, vl_read_fn *read_fn, void *ctx);

/* Add bytes as if read (tests, fuzzers). Same errors as vl_reader_fill. */
int vl_reader_feed(struct vl_reader *r, const void *data, size_t len);

/*
 * Hand out the next whole message: returns 1 and sets *ret_msg (NUL-terminated, valid until the
 * next call on r) and *ret_len, 0 when no whole message is held, -EMSGSIZE when the pending one is
 * too long.
 */
int vl_reader_next(struct vl_reader *r, const char **ret_msg, size_t *ret_len);

/* True when bytes of an unfinished message are held. */
bool vl_reader_partial(const struct vl_reader *r);
/* How many: the bytes held after the last message's end. */
size_t vl_reader_unfinished(const struct vl_reader *r);

struct vl_writer {
        char *buf;
        size_t len;
        size_t start; /* first byte not yet written */
        size_t cap;
        size_t max_buffered; /* more queued output than this is refused */
        uint64_t base;       /* the stream position of buf[0]: bytes ever queued before it */
        uint64_t hold;       /* while holding: output from this position waits */
        bool holding;
        bool appending; /* a message is lent out (append_begin … _end): nothing else may touch w */
};

void vl_writer_init(struct vl_writer *w, size_t max_buffered);
void vl_writer_done(struct vl_writer *w);

/* Queue one message (a NUL is appended). -ENOBUFS past max_buffered, -ENOMEM. */
int vl_writer_queue(struct vl_writer *w, const char *msg, size_t len);

/*
 * A message written straight into the buffer: *buf (cap bytes, of which *len hold what is queued)
 * is lent to the caller, who writes after *len, reallocating as it grows, and gives it back, with
 * the message's bytes (its NUL included) up to len, to vl_writer_append_end(): 0, or -ENOBUFS
 * past max_buffered (the message is dropped). A message that failed is dropped by giving back the
 * len lent. Nothing else may touch w in between (an invariant: asserted, it aborts).
 * *ret_position: where the message starts.
 */
void vl_writer_append_begin(struct vl_writer *w, char **buf, size_t *len, size_t *cap,
                            uint64_t *ret_position);
int vl_writer_append_end(struct vl_writer *w, char *buf, size_t len, size_t cap);

/* Output from `position` on (a message's start; its end while nothing is held: nothing yet) waits
 * until vl_writer_release(); a later hold while one stands keeps the earlier. */
void vl_writer_hold(struct vl_writer *w, uint64_t position);
void vl_writer_release(struct vl_writer *w);
/* Drop what is held (its connection is going). */
void vl_writer_drop_held(struct vl_writer *w);
/* Put msg (len bytes, NUL excluded) in place of the held message of len_old bytes (NUL excluded)
 * at `position`. -ENOMEM (unchanged). Later positions move by the difference. */
int vl_writer_replace(struct vl_writer *w, uint64_t position, size_t len_old, const char *msg,
                      size_t len);

/*
 * Write what is queued and not held. Returns 0 when all of that is written, -EAGAIN when the fd
 * would block with bytes left, or another -errno (e.g. -EPIPE). Never raises SIGPIPE.
 */
int vl_writer_flush(struct vl_writer *w, int fd);

/* The bytes a flush would write now: *ret_len of them at the address returned, valid until w
 * changes. */
const char *vl_writer_sendable_data(const struct vl_writer *w, size_t *ret_len);
/* n of those bytes (n <= vl_writer_sendable()) were written by other means: as a flush would. */
void vl_writer_written(struct vl_writer *w, size_t n);

/* Whether a message is lent out (between vl_writer_append_begin() and _end()). */
bool vl_writer_appending(const struct vl_writer *w);
/* Bytes queued and not yet written, held ones too. */
size_t vl_writer_pending(const struct vl_writer *w);
/* Of those, the ones a flush may write now. */
size_t vl_writer_sendable(const struct vl_writer *w);
