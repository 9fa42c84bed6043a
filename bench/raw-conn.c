/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "bench/raw-conn.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "bench/harness.h"

#define CALL_MAX   1024
#define OUTPUT_MAX (64u << 20)
#define POLL_CONNS 256

void raw_conn_open(const char *path, size_t max_reply, struct raw_conn *ret)
{
        struct sockaddr_un a = {.sun_family = AF_UNIX};

        if (strlen(path) >= sizeof(a.sun_path))
                die("socket path too long: %s", path);
        strcpy(a.sun_path, path);
        *ret = (struct raw_conn){.fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)};
        if (ret->fd < 0)
                die("socket: %m");
        if (connect(ret->fd, (struct sockaddr *)&a, sizeof(a)) < 0)
                die("connect %s: %m", path);
        if (fcntl(ret->fd, F_SETFL, O_NONBLOCK) < 0)
                die("fcntl: %m");
        vl_reader_init(&ret->in, max_reply);
        vl_writer_init(&ret->out, OUTPUT_MAX);
}

void raw_conn_close(struct raw_conn *c)
{
        close(c->fd);
        vl_reader_done(&c->in);
        vl_writer_done(&c->out);
        c->fd = -1;
}

static void queue(struct raw_conn *c, const char *msg, size_t len)
{
        int r = vl_writer_queue(&c->out, msg, len);
        if (r < 0)
                die("cannot queue a call: %s", strerror(-r));
}

static void flush(struct raw_conn *c)
{
        int r = vl_writer_flush(&c->out, c->fd);
        if (r < 0 && r != -EAGAIN)
                die("write to timerd: %s", strerror(-r));
}

static void dispatch(struct raw_conn *c, void (*fn)(void *userdata, const char *msg, size_t len),
                     void *userdata)
{
        const char *msg;
        size_t len;
        int r;

        while ((r = vl_reader_next(&c->in, &msg, &len)) > 0)
                fn(userdata, msg, len);
        if (r < 0)
                die("reply from timerd: %s", strerror(-r));
}

/* One read per call: poll is level-triggered, so what is left wakes the caller again. */
bool raw_receive(struct raw_conn *c, void (*fn)(void *userdata, const char *msg, size_t len),
                 void *userdata)
{
        dispatch(c, fn, userdata);
        long n = vl_reader_fill(&c->in, c->fd);
        if (n == -EAGAIN)
                return true;
        if (n == 0 || n == -ECONNRESET)
                return false;
        if (n < 0)
                die("read from timerd: %s", strerror((int)-n));
        dispatch(c, fn, userdata);
        return true;
}

struct pipeline_slot {
        struct raw_conn *conn;
        const struct pipeline_ops *ops;
        void *userdata;
};

static void pipeline_reply(void *userdata, const char *msg, size_t len)
{
        struct pipeline_slot *slot = userdata;

        if (slot->conn->in_flight == 0)
                die("a reply to no call: %.*s", (int)(len < 200 ? len : 200), msg);
        slot->conn->in_flight--;
        slot->ops->reply(slot->userdata, msg, len);
}

/* Fill c's window; true while it has calls in flight or output to write. */
static bool pipeline_feed(struct raw_conn *c, void *userdata, size_t window,
                          const struct pipeline_ops *ops)
{
        char buf[CALL_MAX];

        while (c->in_flight < window) {
                size_t len = ops->next(userdata, buf, sizeof(buf));
                if (len == 0)
                        break;
                queue(c, buf, len);
                c->in_flight++;
        }
        if (vl_writer_pending(&c->out) > 0)
                flush(c);
        return c->in_flight > 0 || vl_writer_pending(&c->out) > 0;
}

void pipeline_run(struct raw_conn *conns, void *const *userdata, size_t n, size_t window,
                  const struct pipeline_ops *ops)
{
        struct pollfd pfd[POLL_CONNS];

        if (n > POLL_CONNS)
                die("at most %d connections in one pipeline", POLL_CONNS);
        for (;;) {
                size_t busy = 0;

                for (size_t i = 0; i < n; i++) {
                        pfd[i] = (struct pollfd){.fd = -1};
                        if (!pipeline_feed(&conns[i], userdata[i], window, ops))
                                continue;
                        pfd[i] = (struct pollfd){
                            .fd = conns[i].fd,
                            .events =
                                (short)(POLLIN | (vl_writer_pending(&conns[i].out) ? POLLOUT : 0)),
                        };
                        busy++;
                }
                if (busy == 0)
                        return;
                if (poll(pfd, (nfds_t)n, -1) < 0) {
                        if (errno == EINTR)
                                continue;
                        die("poll: %m");
                }
                for (size_t i = 0; i < n; i++) {
                        if (pfd[i].fd < 0 || pfd[i].revents == 0)
                                continue;
                        if (pfd[i].revents & POLLOUT)
                                flush(&conns[i]);
                        if (!(pfd[i].revents & (POLLIN | POLLHUP | POLLERR)))
                                continue;
                        struct pipeline_slot slot = {
                            .conn = &conns[i], .ops = ops, .userdata = userdata[i]};
                        if (!raw_receive(&conns[i], pipeline_reply, &slot))
                                die("timerd closed the connection");
                }
        }
}

void raw_send(struct raw_conn *c, const char *msg)
{
        queue(c, msg, strlen(msg));
        while (vl_writer_pending(&c->out) > 0) {
                struct pollfd p = {.fd = c->fd, .events = POLLOUT};
                flush(c);
                if (vl_writer_pending(&c->out) > 0 && poll(&p, 1, -1) < 0 && errno != EINTR)
                        die("poll: %m");
        }
}

struct call_reply {
        char *msg;
};

static void keep_reply(void *userdata, const char *msg, size_t len)
{
        struct call_reply *r = userdata;

        if (r->msg)
                die("two replies to one call");
        r->msg = malloc(len + 1);
        if (!r->msg)
                die("out of memory for a reply of %zu bytes", len);
        memcpy(r->msg, msg, len + 1);
}

char *raw_call(struct raw_conn *c, const char *msg)
{
        struct call_reply r = {};

        raw_send(c, msg);
        while (!r.msg) {
                struct pollfd p = {.fd = c->fd, .events = POLLIN};
                if (poll(&p, 1, -1) < 0) {
                        if (errno == EINTR)
                                continue;
                        die("poll: %m");
                }
                if (!raw_receive(c, keep_reply, &r))
                        return NULL;
        }
        return r.msg;
}

bool reply_u64(const char *msg, const char *field, uint64_t *ret)
{
        char key[64];

        snprintf(key, sizeof(key), "\"%s\":", field);
        const char *p = strstr(msg, key);
        if (!p)
                return false;
        char *end;
        errno = 0;
        unsigned long long v = strtoull(p + strlen(key), &end, 10);
        if (errno != 0 || end == p + strlen(key))
                return false;
        *ret = v;
        return true;
}

bool reply_is_error(const char *msg)
{
        return strncmp(msg, "{\"error\":", 9) == 0;
}
