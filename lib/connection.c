/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "connection.h"
#include "varlink/frame.h"
#include "varlink/names.h"

struct timerd {
        int fd; /* -1 once the connection broke: every later call fails as disconnected */
        struct vl_reader reader;
        bool streaming;
        char *error_name;
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

int timerd_connect(const char *path, struct timerd **ret)
{
        struct sockaddr_un address;
        socklen_t address_len;
        struct timerd *t;
        int fd, r;

        if (!ret)
                return -EINVAL;
        r = socket_address(path ? path : timerd_default_socket(), &address, &address_len);
        if (r < 0)
                return r;

        /* Connect blocking (a full backlog waits instead of failing), then poll on the fd. */
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        if (connect(fd, (const struct sockaddr *)&address, address_len) < 0 ||
            fcntl(fd, F_SETFL, O_NONBLOCK) < 0) {
                r = -errno;
                close(fd);
                return r;
        }

        t = calloc(1, sizeof(*t));
        if (!t) {
                close(fd);
                return -ENOMEM;
        }
        t->fd = fd;
        vl_reader_init(&t->reader, CONNECTION_REPLY_MAX);
        *ret = t;
        return 0;
}

void timerd_close(struct timerd *t)
{
        if (!t)
                return;
        if (t->fd >= 0)
                close(t->fd);
        vl_reader_done(&t->reader);
        free(t->error_name);
        free(t);
}

const char *timerd_last_error_name(const struct timerd *t)
{
        return t ? t->error_name : NULL;
}

static void forget_error(struct timerd *t)
{
        free(t->error_name);
        t->error_name = NULL;
}

/* After this the byte stream can no longer be trusted to be in step with the service. */
static void connection_break(struct timerd *t)
{
        if (t->fd >= 0)
                close(t->fd);
        t->fd = -1;
        t->streaming = false;
}

static bool error_is_disconnect(int error)
{
        return error == -EPIPE || error == -ECONNRESET || error == -ENOTCONN ||
               error == -ECONNABORTED;
}

/* A failure of the transport breaks the connection; a gone peer is reported as disconnected. */
static int transport_error(struct timerd *t, int error)
{
        connection_break(t);
        return error_is_disconnect(error) ? -TIMERD_E_DISCONNECTED : error;
}

static int wait_fd(int fd, short events)
{
        struct pollfd p = {.fd = fd, .events = events};

        /* A blocking call: retry on signals, wait as long as the service takes (Wait may park). */
        for (;;) {
                if (poll(&p, 1, -1) >= 0)
                        break;
                if (errno != EINTR)
                        return -errno;
        }
        /* POLLHUP/POLLERR: the next read or write reports what happened. */
        return (p.revents & POLLNVAL) ? -EBADF : 0;
}

static int send_call(struct timerd *t, const char *method, json_object *parameters, bool more)
{
        struct vl_writer writer;
        char *msg;
        int r;

        forget_error(t);
        if (t->streaming) {
                json_object_put(parameters);
                return -EBUSY;
        }
        if (t->fd < 0) {
                json_object_put(parameters);
                return -TIMERD_E_DISCONNECTED;
        }
        if (!method) {
                json_object_put(parameters);
                return -EINVAL;
        }

        msg = vl_call_encode(method, parameters, more, false);
        if (!msg)
                return -ENOMEM;
        vl_writer_init(&writer, CONNECTION_REQUEST_MAX);
        r = vl_writer_queue(&writer, msg, strlen(msg));
        free(msg);
        if (r < 0) {
                vl_writer_done(&writer);
                /* Nothing was sent: the connection is still in step. */
                return r == -ENOBUFS ? -EMSGSIZE : r;
        }
        for (;;) {
                r = vl_writer_flush(&writer, t->fd);
                if (r != -EAGAIN)
                        break;
                r = wait_fd(t->fd, POLLOUT);
                if (r < 0)
                        break;
        }
        vl_writer_done(&writer);
        if (r < 0)
                return transport_error(t, r);
        t->streaming = more;
        return 0;
}

static int read_message(struct timerd *t, const char **ret_msg, size_t *ret_len)
{
        long n;
        int r;

        for (;;) {
                r = vl_reader_next(&t->reader, ret_msg, ret_len);
                if (r > 0)
                        return 0;
                if (r < 0)
                        return transport_error(t, r);

                n = vl_reader_fill(&t->reader, t->fd);
                if (n == 0) /* end of stream, possibly in the middle of a reply */
                        return transport_error(t, -ECONNRESET);
                if (n == -EAGAIN)
                        n = wait_fd(t->fd, POLLIN);
                if (n < 0)
                        return transport_error(t, (int)n);
        }
}

static int remember_error(struct timerd *t, const char *name)
{
        t->error_name = strdup(name); /* best effort: the typed code is what callers act on */
        return -vl_error_from_name(name);
}

static int receive_reply(struct timerd *t, struct vl_reply *ret)
{
        const char *msg;
        size_t len;
        int r;

        *ret = (struct vl_reply){};
        if (t->fd < 0)
                return -TIMERD_E_DISCONNECTED;
        r = read_message(t, &msg, &len);
        if (r < 0)
                return r;
        /* A reply that is not JSON is still one whole message: the stream stays in step. */
        r = vl_reply_parse(msg, len, VL_MAX_DEPTH_DEFAULT, ret);
        if (r < 0)
                return r == -ENOMEM ? r : -TIMERD_E_PROTOCOL;
        if (!ret->continues)
                t->streaming = false;
        else if (!t->streaming) {
                /* More replies follow that nobody asked for: we can no longer tell them apart. */
                vl_reply_done(ret);
                connection_break(t);
                return -TIMERD_E_PROTOCOL;
        }
        if (ret->error)
                return remember_error(t, ret->error);
        return 0;
}

int connection_call(struct timerd *t, const char *method, json_object *parameters,
                    struct vl_reply *ret)
{
        int r;

        *ret = (struct vl_reply){};
        r = send_call(t, method, parameters, false);
        if (r < 0)
                return r;
        return receive_reply(t, ret);
}

int connection_open_stream(struct timerd *t, const char *method, json_object *parameters)
{
        return send_call(t, method, parameters, true);
}

int connection_next_in_stream(struct timerd *t, struct vl_reply *ret)
{
        *ret = (struct vl_reply){};
        forget_error(t);
        if (!t->streaming)
                return -EINVAL;
        return receive_reply(t, ret);
}
