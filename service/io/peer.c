/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "service/io/peer.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "loop/loop.h"

/* Linux >= 6.5; Debian 12's headers predate it. */
#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif

static int peer_pidfd(int fd, pid_t pid)
{
        int pidfd;
        socklen_t len = sizeof(pidfd);

        if (getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &len) == 0)
                return pidfd;
        if (errno != ENOPROTOOPT && errno != EINVAL)
                return -errno;
        pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
        if (pidfd < 0)
                return -errno;
        /* Between SO_PEERCRED and pidfd_open the peer may have died and its pid been reused: it
         * is only ours if its end of the connection is still open. */
        struct pollfd p = {.fd = fd, .events = POLLRDHUP};
        if (poll(&p, 1, 0) != 0) {
                close(pidfd);
                return -ESRCH;
        }
        return pidfd;
}

int peer_new(int fd, uint64_t session, size_t max_message, size_t max_output, struct peer **ret)
{
        struct ucred cred;
        socklen_t len = sizeof(cred);

        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
                return -errno;
        struct peer *p = calloc(1, sizeof(*p));
        if (!p)
                return -ENOMEM;
        p->fd = fd;
        p->pidfd = peer_pidfd(fd, cred.pid);
        p->session = session;
        p->uid = cred.uid;
        p->gid = cred.gid;
        p->pid = cred.pid;
        list_init(&p->flush_node);
        list_init(&p->idle_node);
        list_init(&p->partial_node);
        vl_reader_init(&p->in, max_message);
        vl_parser_init(&p->parser);
        p->check = (struct vl_call_check){vl_idl_method_find, p->maps, VL_IDL_OBJECTS_MAX};
        p->parser.check = &p->check;
        vl_writer_init(&p->out, max_output);
        *ret = p;
        return 0;
}

void peer_free(struct peer *p)
{
        if (!p)
                return;
        vl_reader_done(&p->in);
        vl_parser_done(&p->parser);
        vl_writer_done(&p->out);
        if (p->fd >= 0)
                close(p->fd);
        if (p->pidfd >= 0)
                close(p->pidfd);
        free(p->signals_unacknowledged);
        free(p);
}

static long read_watch(void *ctx, void *buf, size_t len)
{
        return loop_read(ctx, buf, len);
}

#define PEER_QUIET_READS 4

static void set_bulk(struct peer *p, bool bulk)
{
        if (loop_stream_bulk(p->watch, bulk) == 0)
                p->bulk = bulk;
}

long peer_read(struct peer *p)
{
        long n = vl_reader_fill_from(&p->in, read_watch, p->watch);

        if (n > 0) {
                /*
                 * PEER_QUIET_READS reads in a row brought at most one call each: the peer waits
                 * for its answers. Not after one: a pipelining peer's window often ends in a
                 * read of a single call, and each switch costs the io_uring backend a wake-up.
                 */
                p->quiet_reads = p->calls_from_read <= 1 ? p->quiet_reads + 1 : 0;
                if (p->bulk && p->quiet_reads >= PEER_QUIET_READS)
                        set_bulk(p, false);
                p->calls_from_read = 0;
        }
        return n;
}

int peer_next_call(struct peer *p, int max_depth, struct vl_call *ret)
{
        const char *msg;
        size_t len;
        int r = vl_reader_next(&p->in, &msg, &len);
        if (r <= 0)
                return r;
        /* A second call before the next read: the peer does not wait for each answer. */
        if (++p->calls_from_read == 2 && !p->bulk)
                set_bulk(p, true);
        r = vl_call_parse_with(&p->parser, msg, len, max_depth, ret);
        return r < 0 ? r : 1;
}

struct vl_text *peer_text_begin(struct peer *p, size_t room)
{
        char *buf;
        size_t len, cap;

        vl_writer_append_begin(&p->out, &buf, &len, &cap, &p->text_position);
        vl_text_attach(&p->text, buf, len, cap, room);
        return &p->text;
}

/* Where the message being written starts in the buffer. */
static size_t text_start(const struct peer *p)
{
        return (size_t)(p->text_position - p->out.base);
}

int peer_text_end(struct peer *p, uint64_t *ret_position, size_t *ret_len)
{
        struct vl_text *t = &p->text;

        if (t->error < 0) {
                peer_text_cancel(p);
                return t->error;
        }
        *ret_position = p->text_position;
        *ret_len = t->len - text_start(p) - 1;
        return vl_writer_append_end(&p->out, t->buf, t->len, t->cap);
}

void peer_text_cancel(struct peer *p)
{
        (void)vl_writer_append_end(&p->out, p->text.buf, text_start(p), p->text.cap);
}

/* The outcome of the loop_send() in flight: its bytes leave out, and a full socket is noted. */
static int send_outcome(struct peer *p)
{
        long taken = loop_sent(p->watch);

        if (taken == -EINPROGRESS)
                return -EAGAIN;
        if (taken == -EAGAIN)
                taken = 0;
        else if (taken < 0)
                return (int)taken;
        if ((size_t)taken < p->sending)
                p->send_direct = true;
        vl_writer_written(&p->out, (size_t)taken);
        p->sending = 0;
        return 0;
}

int peer_flush(struct peer *p)
{
        int r;

        if (p->sending > 0) {
                r = send_outcome(p);
                if (r < 0)
                        return r;
        }
        if (!p->send_direct && p->watch) {
                size_t len;
                const char *bytes = vl_writer_sendable_data(&p->out, &len);

                if (len > 0 && loop_send(p->watch, bytes, len) > 0) {
                        p->sending = len;
                        return 0;
                }
        }
        r = vl_writer_flush(&p->out, p->fd);
        if (r == 0)
                p->send_direct = false;
        return r;
}

int peer_flush_now(struct peer *p)
{
        int r = peer_flush(p);

        /* The second takes the outcome of what the first sent through the loop. */
        if (r == 0 && p->sending > 0)
                r = peer_flush(p);
        return r;
}

bool peer_has_output(const struct peer *p)
{
        return vl_writer_sendable(&p->out) > p->sending;
}

size_t peer_unsent(const struct peer *p)
{
        return vl_writer_pending(&p->out) - p->sending;
}

int peer_in_group(const struct peer *p, gid_t gid)
{
        gid_t few[64], *groups = few;
        socklen_t len = sizeof(few);
        int r = 0;

        if (p->gid == gid)
                return 1;
        if (getsockopt(p->fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) < 0) {
                if (errno != ERANGE)
                        return -errno;
                /* len is now what the kernel needs: up to NGROUPS_MAX gids. */
                groups = malloc(len);
                if (!groups)
                        return -ENOMEM;
                if (getsockopt(p->fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) < 0)
                        r = -errno;
        }
        for (size_t i = 0; r == 0 && i < len / sizeof(gid_t); i++)
                if (groups[i] == gid)
                        r = 1;
        if (groups != few)
                free(groups);
        return r;
}
