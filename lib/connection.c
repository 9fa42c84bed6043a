/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <poll.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/list.h"
#include "connection.h"
#include "hold.h"
#include "varlink/frame.h"
#include "varlink/names.h"

/* A call whose replies are still to come. */
struct call {
        struct list_node node; /* on the connection's calls */
        bool more;
        bool blocking; /* its replies go to t->blocking, not to a callback */
        struct connection_handler handler;
};

/* Asynchronous calls piling up are written each time this many more bytes are pending: a send of
 * this much costs the kernel its copying, not a wake-up per call, and fits a socket buffer. */
#define CONNECTION_BATCH_BYTES (64U * 1024U)

/* Calls ended are kept for the next ones, up to this many: no allocation per call once warm. */
#define CALLS_KEPT 256

/* Where the reply of the blocking call goes. */
struct blocking_slot {
        bool ready;
        int result;
        struct vl_reply reply;
};

struct timerd {
        int fd;
        char *path;
        bool broken; /* every later call fails as disconnected until timerd_reconnect() */
        struct vl_reader reader;
        struct vl_parser parser;
        struct vl_writer writer;
        struct list_node calls; /* in the order of the replies to come */
        size_t n_calls;
        struct list_node spare_calls; /* ended, kept for the next (CALLS_KEPT) */
        size_t n_spare_calls;
        struct blocking_slot blocking;
        unsigned dispatching; /* > 0 while a callback runs */
        bool closing;         /* timerd_close() came from a callback */
        char *error_name;
        char *error_reason;
        char *error_description;
        char *error_limit; /* a LimitExceeded's `limit`, with its `max` */
        uint64_t error_max;
        /* Firings that came before their deadline, and the timerfds blocking waits hold them on. */
        struct hold hold;
        uint64_t n_held, n_released; /* firings put on hold, and handed on from there */
        uint32_t owner;              /* whose timers the Timer calls name (timerd_set_owner()) */
};

const char *timerd_default_socket(void)
{
        const char *env = secure_getenv("TIMERD_SOCKET");

        if (env && env[0] != '\0')
                return env;
        if (access(TIMERD_SOCKET_EMBEDDED, F_OK) == 0)
                return TIMERD_SOCKET_EMBEDDED;
        return TIMERD_SOCKET_SYSTEM;
}

static int socket_address(const char *path, struct sockaddr_un *ret, socklen_t *ret_len)
{
        size_t len = strlen(path);

        if (len == 0)
                return -EINVAL;
        if (len >= sizeof(ret->sun_path))
                return -ENAMETOOLONG;
        *ret = (struct sockaddr_un){.sun_family = AF_UNIX};
        memcpy(ret->sun_path, path, len);
        *ret_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len + 1);
        return 0;
}

static int open_socket(const char *path)
{
        struct sockaddr_un address;
        socklen_t address_len;
        int fd, r;

        r = socket_address(path, &address, &address_len);
        if (r < 0)
                return r;
        /*
         * Connect blocking (a full backlog waits instead of failing), and stay blocking: every
         * read and write but a blocking call's wait for its answer asks not to block
         * (MSG_DONTWAIT), and that wait is the read itself, not a poll before it.
         */
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        if (connect(fd, (const struct sockaddr *)&address, address_len) < 0) {
                r = -errno;
                close(fd);
                return r;
        }
        return fd;
}

int timerd_connect(const char *path, struct timerd **ret)
{
        struct timerd *t;
        int fd;

        if (!ret)
                return -EINVAL;
        t = calloc(1, sizeof(*t));
        if (!t)
                return -ENOMEM;
        list_init(&t->calls);
        list_init(&t->spare_calls);
        hold_init(&t->hold);
        t->path = strdup(path ? path : timerd_default_socket());
        if (!t->path) {
                free(t);
                return -ENOMEM;
        }
        fd = open_socket(t->path);
        if (fd < 0) {
                free(t->path);
                free(t);
                return fd;
        }
        t->fd = fd;
        t->owner = TIMERD_OWNER_SELF;
        vl_reader_init(&t->reader, CONNECTION_REPLY_MAX);
        vl_parser_init(&t->parser);
        vl_writer_init(&t->writer, CONNECTION_REQUEST_MAX);
        *ret = t;
        return 0;
}

/* The call the next reply answers, or NULL. */
static struct call *first_call(const struct timerd *t)
{
        return list_empty(&t->calls) ? NULL : list_entry(t->calls.next, struct call, node);
}

/* Whether the next reply goes to a blocking call (with `stream`: a blocking stream). */
static bool blocking_first(const struct timerd *t, bool stream)
{
        const struct call *c = first_call(t);

        return c && c->blocking && (!stream || c->more);
}

static struct call *call_new(struct timerd *t)
{
        struct call *c;

        if (list_empty(&t->spare_calls))
                return malloc(sizeof(*c));
        c = list_entry(t->spare_calls.next, struct call, node);
        list_remove(&c->node);
        t->n_spare_calls--;
        return c;
}

/* c is on no list. */
static void call_free(struct timerd *t, struct call *c)
{
        if (t->n_spare_calls >= CALLS_KEPT) {
                free(c);
                return;
        }
        list_append(&t->spare_calls, &c->node);
        t->n_spare_calls++;
}

static void free_list(struct list_node *head)
{
        while (!list_empty(head)) {
                struct list_node *n = head->next;

                list_remove(n);
                free(list_entry(n, struct call, node));
        }
}

static void connection_free(struct timerd *t)
{
        close(t->fd);
        free_list(&t->calls);
        free_list(&t->spare_calls);
        vl_reply_done(&t->blocking.reply);
        vl_reader_done(&t->reader);
        vl_parser_done(&t->parser);
        vl_writer_done(&t->writer);
        hold_done(&t->hold);
        free(t->error_name);
        free(t->error_reason);
        free(t->error_description);
        free(t->error_limit);
        free(t->path);
        free(t);
}

void timerd_close(struct timerd *t)
{
        if (!t)
                return;
        if (t->dispatching > 0) {
                /* The callback's caller still uses t: it frees it once the callback returns. */
                t->closing = true;
                return;
        }
        connection_free(t);
}

int timerd_set_owner(struct timerd *t, uint32_t owner)
{
        if (!t)
                return -EINVAL;
        t->owner = owner;
        return 0;
}

const char *timerd_last_error_name(const struct timerd *t)
{
        return t ? t->error_name : NULL;
}

const char *timerd_last_error_reason(const struct timerd *t)
{
        return t ? t->error_reason : NULL;
}

const char *timerd_last_error_description(const struct timerd *t)
{
        return t ? t->error_description : NULL;
}

const char *timerd_last_error_limit(const struct timerd *t, uint64_t *ret_max)
{
        if (!t || !t->error_limit)
                return NULL;
        if (ret_max)
                *ret_max = t->error_max;
        return t->error_limit;
}

int timerd_get_fd(const struct timerd *t)
{
        return t ? t->fd : -EINVAL;
}

int timerd_get_events(const struct timerd *t)
{
        if (!t)
                return -EINVAL;
        if (t->broken)
                return 0;
        /* Always POLLIN: a service that goes away is noticed even with nothing in flight. */
        return POLLIN | (vl_writer_pending(&t->writer) > 0 ? POLLOUT : 0);
}

size_t timerd_in_flight(const struct timerd *t)
{
        return t ? t->n_calls + hold_count(&t->hold) : 0;
}

int timerd_get_timeout(const struct timerd *t, uint64_t *ret_usec)
{
        if (!t || !ret_usec)
                return -EINVAL;
        if (hold_next(&t->hold, ret_usec))
                return 1;
        *ret_usec = UINT64_MAX;
        return 0;
}

static void set_error_name(struct timerd *t, const char *name)
{
        /* Most calls succeed, one after another: nothing to free or copy. */
        if (!name && !t->error_name && !t->error_reason && !t->error_description && !t->error_limit)
                return;
        free(t->error_name);
        free(t->error_reason);
        free(t->error_description);
        free(t->error_limit);
        /* Best effort: the typed code is what callers act on. */
        t->error_name = name ? strdup(name) : NULL;
        t->error_reason = t->error_description = t->error_limit = NULL;
}

/* The error's "reason" and "description" parameters, when it has them; a LimitExceeded's "limit"
 * and "max", when it has both. */
static void set_error(struct timerd *t, const struct vl_reply *reply)
{
        const char *reason, *description, *limit;

        set_error_name(t, reply->error);
        if (!reply->error)
                return;
        if (vl_get_string(reply->parameters, "reason", &reason) == 0)
                t->error_reason = strdup(reason);
        if (vl_get_string(reply->parameters, "description", &description) == 0)
                t->error_description = strdup(description);
        if (vl_error_from_name(reply->error) == TIMERD_E_LIMIT_EXCEEDED &&
            vl_get_string(reply->parameters, "limit", &limit) == 0 &&
            vl_get_u64(reply->parameters, "max", &t->error_max) == 0)
                t->error_limit = strdup(limit);
}

static struct call *pop_call(struct timerd *t)
{
        struct call *c = first_call(t);

        list_remove(&c->node);
        t->n_calls--;
        return c;
}

/* Hand one reply (or failure) to a call's handler; the handler may make calls or close t. */
static int deliver(struct timerd *t, const struct call *c, int error, struct vl_reply *reply)
{
        int r;

        t->dispatching++;
        r = c->handler.deliver(t, error, reply, &c->handler);
        t->dispatching--;
        return r;
}

static bool error_is_disconnect(int error)
{
        return error == -EPIPE || error == -ECONNRESET || error == -ENOTCONN ||
               error == -ECONNABORTED || error == -TIMERD_E_DISCONNECTED;
}

static void run_held(struct timerd *t, const struct held_firing *h)
{
        t->n_released++;
        t->dispatching++;
        h->callback(t, 0, &h->firing, h->userdata);
        t->dispatching--;
}

/* Run the callbacks of held firings: the due ones, or all of them. */
static void deliver_held(struct timerd *t, bool all)
{
        struct held_firing h;

        while (!t->closing && hold_take(&t->hold, all, &h))
                run_held(t, &h);
}

int connection_hold(struct timerd *t, const struct timerd_firing *f,
                    const struct connection_handler *h, bool stream)
{
        const struct held_firing item = {
            .firing = *f,
            .callback = (timerd_firing_callback)h->callback,
            .userdata = h->userdata,
            .stream = stream ? h : NULL,
        };

        if (hold_due(f) || hold_put(&t->hold, &item) < 0)
                return 0;
        t->n_held++;
        return 1;
}

void connection_hold_sleep(struct timerd *t, const struct timerd_firing *f)
{
        hold_sleep(&t->hold, f);
}

bool connection_release_stream(struct timerd *t, const struct connection_handler *h)
{
        struct held_firing held;

        while (!t->closing && hold_take_stream(&t->hold, h, &held))
                run_held(t, &held);
        return !t->closing;
}

/*
 * After this the byte stream can no longer be trusted to be in step with the service. Firings
 * still held go first, at once (their runs end with the connection), or with the next
 * timerd_process() when a blocking call saw the break. Then the first call in flight learns the
 * cause, the others that the connection is gone. The fd stays open (an event loop may still watch
 * it) but says end-of-stream from now on.
 */
static void connection_break(struct timerd *t, int cause)
{
        int error = error_is_disconnect(cause) ? -TIMERD_E_DISCONNECTED : cause;

        if (t->broken)
                return;
        t->broken = true;
        (void)shutdown(t->fd, SHUT_RDWR);
        /* Not from inside a blocking call: no callback runs there. */
        if (!blocking_first(t, false))
                deliver_held(t, true);
        while (first_call(t) && !t->closing) {
                struct call *c = pop_call(t);

                set_error_name(t, NULL);
                (void)deliver(t, c, error, NULL);
                call_free(t, c);
                error = -TIMERD_E_DISCONNECTED;
        }
}

void connection_begin(struct timerd *t, struct connection_request *q, const char *method, bool more)
{
        static const char timer_prefix[] = VL_INTERFACE_TIMER ".";

        q->more = more;
        q->has_owner = false;
        q->timer_method = strncmp(method, timer_prefix, sizeof(timer_prefix) - 1) == 0;
        vl_text_call_begin(&q->text, &t->writer, method, more, false);
}

void connection_add_owner(struct connection_request *q, uint32_t owner)
{
        if (owner == TIMERD_OWNER_SELF)
                return;
        vl_text_add_u64(&q->text, "owner", owner);
        q->has_owner = true;
}

/* Drop the call begun, returning error. */
static int drop(struct timerd *t, struct connection_request *q, int error)
{
        vl_text_call_drop(&q->text, &t->writer);
        return error;
}

static int queue_call(struct timerd *t, struct connection_request *q, bool blocking,
                      const struct connection_handler *handler)
{
        struct call *c;
        int r;

        if (t->closing || t->broken)
                return drop(t, q, -TIMERD_E_DISCONNECTED);
        /* A stream occupies the connection: the service would never take a later call. */
        if (!list_empty(&t->calls) && list_entry(t->calls.prev, struct call, node)->more)
                return drop(t, q, -EBUSY);
        /* An io.timerd.Timer call that names no owner names the connection's, when it has one. */
        if (q->timer_method && !q->has_owner)
                connection_add_owner(q, t->owner);

        c = call_new(t);
        if (!c)
                return drop(t, q, -ENOMEM);
        r = vl_text_call_end(&q->text, &t->writer, CONNECTION_REQUEST_MAX);
        if (r < 0) {
                /* Nothing was queued: the connection is still in step. */
                call_free(t, c);
                return r;
        }

        *c = (struct call){.more = q->more, .blocking = blocking, .handler = *handler};
        list_append(&t->calls, &c->node);
        t->n_calls++;
        return 0;
}

int connection_send_async(struct timerd *t, struct connection_request *q, int error,
                          const struct connection_handler *handler)
{
        /* The call is written after what is pending (nothing is queued while q is begun). */
        size_t before = vl_writer_pending(&t->writer);
        int r = error < 0 ? drop(t, q, error) : queue_call(t, q, false, handler);

        if (r < 0)
                return r;
        /*
         * A call alone in flight goes out at once (its latency); calls made behind others wait
         * for timerd_process() (the loop is told by POLLOUT), so that one send
         * carries them all, unless they pile up: a send each time CONNECTION_BATCH_BYTES more are
         * pending, not one per call while the socket is full. A failure stays with the buffered
         * output and reaches the callbacks from timerd_process(), not from in here.
         */
        if ((t->n_calls == 1 && t->dispatching == 0) ||
            before / CONNECTION_BATCH_BYTES !=
                vl_writer_pending(&t->writer) / CONNECTION_BATCH_BYTES)
                (void)vl_writer_flush(&t->writer, t->fd);
        return 0;
}

/*
 * Take the next whole message held and hand it to the call it answers. Returns 1 when one was
 * dispatched, 0 when none is held, or a negative error when the connection broke.
 */
static int dispatch_next(struct timerd *t)
{
        struct vl_reply reply;
        const char *msg;
        struct call *c;
        size_t len;
        bool last;
        int r;

        r = vl_reader_next(&t->reader, &msg, &len);
        if (r <= 0) {
                if (r < 0)
                        connection_break(t, r);
                return r;
        }
        c = first_call(t);
        if (!c) {
                /* An answer to nothing: the service is out of step with us. */
                connection_break(t, -TIMERD_E_PROTOCOL);
                return -TIMERD_E_PROTOCOL;
        }

        r = vl_reply_tokenize(&t->parser, msg, len, VL_MAX_DEPTH_DEFAULT, &reply);
        if (r >= 0 && (reply.failed || !c->handler.tokens))
                r = vl_reply_tree(&t->parser, &reply);
        if (r < 0) {
                /* Still one whole message: a single call stays in step, a stream cannot tell
                 * whether it goes on. */
                r = r == -ENOMEM ? r : -TIMERD_E_PROTOCOL;
                if (c->more) {
                        connection_break(t, r);
                        return r;
                }
                set_error_name(t, NULL);
                c = pop_call(t);
                (void)deliver(t, c, r, NULL);
                call_free(t, c);
                return 1;
        }
        if (reply.continues && !c->more) {
                /* More replies follow that nobody asked for: we can no longer tell them apart. */
                vl_reply_done(&reply);
                connection_break(t, -TIMERD_E_PROTOCOL);
                return -TIMERD_E_PROTOCOL;
        }

        last = !reply.continues;
        if (last)
                (void)pop_call(t);
        set_error(t, &reply);
        r = deliver(t, c, reply.error ? -vl_error_from_name(reply.error) : 0, &reply);
        vl_reply_done(&reply);
        if (last)
                call_free(t, c);
        else if (r < 0 && !t->broken && !t->closing) {
                /* A stream's reply that cannot be decoded ended it (its callback was told), and
                 * the stream holds the connection. */
                call_free(t, pop_call(t));
                connection_break(t, -TIMERD_E_DISCONNECTED);
                return -TIMERD_E_PROTOCOL;
        }
        return 1;
}

/*
 * Read what has arrived, or with `wait` wait for it. Returns 1 when bytes came, 0 when none are
 * ready, or a negative error when the connection broke. *ret_drained: the read took less than it
 * had room for, so the socket held no more then (a stream socket's read takes all it has up to the
 * room; what comes later makes the fd ready again): reading again now would only say so.
 */
static int read_input(struct timerd *t, bool wait, bool *ret_drained)
{
        long n = vl_reader_recv(&t->reader, t->fd, wait);

        *ret_drained = n <= 0 || t->reader.len < t->reader.cap;
        if (n > 0)
                return 1;
        if (n == -EAGAIN || n == -ENOBUFS) /* ENOBUFS: whole messages wait to be dispatched */
                return 0;
        /* End of stream, possibly in the middle of a reply. */
        n = n == 0 ? -ECONNRESET : n;
        connection_break(t, (int)n);
        return (int)n;
}

/*
 * Asynchronous calls waited to be written and the service went away (or the write failed): what
 * it answered before is still in the socket. Hand that out first, so that only the calls it never
 * took fail.
 */
static void drain_input(struct timerd *t)
{
        bool drained = false;

        while (!t->broken && !t->closing && !blocking_first(t, false)) {
                int r = dispatch_next(t);

                if (r > 0)
                        continue;
                if (r < 0 || drained || read_input(t, false, &drained) <= 0)
                        break;
        }
}

/* Write what the socket takes now; a failure breaks the connection. */
static int flush_output(struct timerd *t)
{
        int r;

        if (t->broken || vl_writer_pending(&t->writer) == 0)
                return 0;
        r = vl_writer_flush(&t->writer, t->fd);
        if (r < 0 && r != -EAGAIN) {
                drain_input(t);
                connection_break(t, r);
                return r;
        }
        return 0;
}

int timerd_process(struct timerd *t)
{
        uint64_t n_held, n_released;
        bool drained = false;
        int n = 0, r = 0;

        if (!t)
                return -EINVAL;
        if (t->dispatching > 0 || blocking_first(t, false))
                return -EBUSY;

        n_held = t->n_held;
        n_released = t->n_released;
        t->dispatching++;
        (void)flush_output(t);
        /* Once broken, all: a break seen by a blocking call left them for here. */
        deliver_held(t, t->broken);
        while (!t->closing && !t->broken) {
                if (blocking_first(t, false))
                        break; /* a callback opened a blocking stream */
                r = dispatch_next(t);
                if (r > 0) {
                        n++;
                        continue;
                }
                if (r < 0 || drained)
                        break;
                /* The calls the callbacks made go out before the next read: one send for all. */
                if (flush_output(t) < 0)
                        break;
                r = read_input(t, false, &drained);
                if (r <= 0)
                        break;
        }
        /* Held firings that came due meanwhile; callbacks may have made calls. */
        if (!t->broken)
                deliver_held(t, false);
        (void)flush_output(t);
        t->dispatching--;
        /* Answers delivered: a held one counts when it is handed on. */
        n += (int)(t->n_released - n_released) - (int)(t->n_held - n_held);

        if (t->closing) {
                if (t->dispatching == 0)
                        connection_free(t);
                return n;
        }
        return t->broken ? -TIMERD_E_DISCONNECTED : n;
}

static int wait_fd(struct timerd *t, short events)
{
        struct pollfd p = {.fd = t->fd, .events = events};

        /* A blocking call: retry on signals, wait as long as the service takes (Wait may park). */
        for (;;) {
                if (poll(&p, 1, -1) >= 0)
                        break;
                if (errno != EINTR) {
                        connection_break(t, -errno);
                        return -1;
                }
        }
        /* POLLHUP/POLLERR: the next read or write reports what happened. */
        if (p.revents & POLLNVAL) {
                connection_break(t, -EBADF);
                return -1;
        }
        return 0;
}

/*
 * Drive the connection until the blocking call's next reply is in t->blocking. With nothing left
 * to write, the wait is one blocking read: the ping-pong's system calls, a send and a read a call.
 * With output the socket did not take yet, poll for both ways. `wait_first`: the call was just
 * written and its answer is hardly there yet: wait before reading, not after a read that says
 * EAGAIN.
 */
static int drive_blocking(struct timerd *t, bool wait_first, struct vl_reply *ret)
{
        struct blocking_slot *slot = &t->blocking;
        bool drained = wait_first;
        int r;

        while (!slot->ready) {
                if (flush_output(t) < 0)
                        continue; /* broken: the slot has the error */
                r = dispatch_next(t);
                if (r != 0)
                        continue;
                if (vl_writer_pending(&t->writer) == 0 && read_input(t, true, &drained) != 0)
                        continue; /* bytes to dispatch, or broken: the slot has the error */
                /* Output waits, or the fd was made non-blocking (libuv's uv_poll_init() does):
                 * poll. */
                if (!drained && read_input(t, false, &drained) != 0)
                        continue; /* bytes to dispatch, or broken: the slot has the error */
                (void)wait_fd(t,
                              (short)(POLLIN | (vl_writer_pending(&t->writer) > 0 ? POLLOUT : 0)));
                drained = false;
        }
        slot->ready = false;
        *ret = slot->reply;
        slot->reply = (struct vl_reply){};
        return slot->result;
}

static int deliver_blocking(struct timerd *t, int error, struct vl_reply *reply,
                            const struct connection_handler *h)
{
        struct blocking_slot *slot = &t->blocking;

        (void)h;
        slot->ready = true;
        slot->result = error;
        if (reply) {
                slot->reply = *reply;
                *reply = (struct vl_reply){}; /* taken */
        }
        return 0;
}

static int start_blocking(struct timerd *t, struct connection_request *q, int error, bool tokens)
{
        struct connection_handler handler = CONNECTION_HANDLER(deliver_blocking, NULL, NULL);

        handler.tokens = tokens;
        if (error < 0)
                return drop(t, q, error);
        set_error_name(t, NULL);
        if (first_call(t))
                return drop(t, q, -EBUSY);
        /* A reply left by a break nobody was driving for (timerd_reconnect()) is stale. */
        vl_reply_done(&t->blocking.reply);
        t->blocking = (struct blocking_slot){};
        return queue_call(t, q, true, &handler);
}

int connection_send(struct timerd *t, struct connection_request *q, int error, bool tokens,
                    struct vl_reply *ret)
{
        int r;

        *ret = (struct vl_reply){};
        r = start_blocking(t, q, error, tokens);
        if (r < 0)
                return r;
        return drive_blocking(t, true, ret);
}

int connection_send_stream(struct timerd *t, struct connection_request *q, int error, bool tokens)
{
        int r = start_blocking(t, q, error, tokens);

        if (r < 0)
                return r;
        /* The call goes out now, so the service starts it even before the first read. */
        while (vl_writer_pending(&t->writer) > 0 && !t->broken)
                if (flush_output(t) >= 0 && vl_writer_pending(&t->writer) > 0)
                        (void)wait_fd(t, POLLOUT);
        return t->broken ? -TIMERD_E_DISCONNECTED : 0;
}

int connection_next_in_stream(struct timerd *t, struct vl_reply *ret)
{
        *ret = (struct vl_reply){};
        set_error_name(t, NULL);
        if (t->broken)
                return -TIMERD_E_DISCONNECTED;
        if (!blocking_first(t, true))
                return -EINVAL;
        return drive_blocking(t, false, ret);
}

void connection_stream_broken(struct timerd *t)
{
        if (blocking_first(t, true)) {
                call_free(t, pop_call(t));
                connection_break(t, -TIMERD_E_DISCONNECTED);
        }
}

int timerd_reconnect(struct timerd *t)
{
        int fd;

        if (!t)
                return -EINVAL;
        if (t->dispatching > 0)
                return -EBUSY;
        fd = open_socket(t->path);
        connection_break(t, -TIMERD_E_DISCONNECTED);
        if (t->closing) {
                /* A callback closed t while its calls were failed. */
                if (fd >= 0)
                        close(fd);
                connection_free(t);
                return -ECANCELED;
        }
        if (fd < 0)
                return fd;
        close(t->fd);
        t->fd = fd;
        t->broken = false;
        set_error_name(t, NULL);
        vl_reader_done(&t->reader);
        vl_writer_done(&t->writer);
        vl_reader_init(&t->reader, CONNECTION_REPLY_MAX);
        vl_writer_init(&t->writer, CONNECTION_REQUEST_MAX);
        return 0;
}
