/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A connection's output on io_uring goes through the loop's next wait (loop_send()), not by a
 * send(2) of its own: the test links the service's connection code with the linker's --wrap of
 * send and counts. A reply of a synchronous call costs no send(2); a reply larger than the socket
 * takes falls back to send(2) and a poll for the rest, and every byte arrives in order; timerfd
 * writes with send(2) as before. Counted, never timed.
 */

#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "loop/loop.h"
#include "service/io/peer.h"

static unsigned sends;

ssize_t __real_send(int fd, const void *buf, size_t len, int flags);
ssize_t __wrap_send(int fd, const void *buf, size_t len, int flags);

ssize_t __wrap_send(int fd, const void *buf, size_t len, int flags)
{
        sends++;
        return __real_send(fd, buf, len, flags);
}

static uint32_t reported;

static void on_io(struct loop_watch *w, int fd, uint32_t events, void *userdata)
{
        (void)w;
        (void)fd;
        (void)userdata;
        reported |= events;
}

static void on_expired(enum timerd_clock clock, uint64_t generation, void *userdata)
{
        (void)clock;
        (void)generation;
        (void)userdata;
}

struct conn {
        struct loop *loop;
        struct peer *peer;
        int client;
};

static int conn_open(struct conn *c, enum loop_backend backend)
{
        struct loop_callbacks cb = {.expired = on_expired};
        int s[2];
        int r = loop_new(backend, &cb, &c->loop);

        if (r < 0)
                return r;
        assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, s), 0);
        assert_int_equal(peer_new(s[0], 1, 65536, 1 << 20, &c->peer), 0);
        assert_int_equal(loop_watch_stream(c->loop, s[0], LOOP_IN, on_io, c->peer, &c->peer->watch),
                         0);
        c->client = s[1];
        return 0;
}

static void conn_close(struct conn *c)
{
        loop_unwatch(c->peer->watch);
        c->peer->watch = NULL;
        peer_free(c->peer);
        close(c->client);
        loop_free(c->loop);
}

/* Take what the client's end has now, without waiting: how many bytes. */
static size_t client_take(const struct conn *c, char *buf, size_t cap)
{
        size_t len = 0;
        ssize_t n;

        while (len < cap && (n = recv(c->client, buf + len, cap - len, MSG_DONTWAIT)) > 0)
                len += (size_t)n;
        return len;
}

#define REPLY "{\"parameters\":{\"claim\":{\"name\":\"t\",\"generation\":1}}}"

/* One reply per wait, as a synchronous client gets them: no send(2) at all on io_uring. */
static void test_replies_leave_without_send(void **state)
{
        struct conn c;
        char buf[256];

        (void)state;
        if (conn_open(&c, LOOP_BACKEND_IO_URING) < 0)
                skip();
        sends = 0;
        for (int i = 0; i < 3; i++) {
                assert_int_equal(vl_writer_queue(&c.peer->out, REPLY, strlen(REPLY)), 0);
                assert_true(peer_has_output(c.peer));
                assert_int_equal(peer_flush(c.peer), 0);
                /* On its way: nothing for the connection to poll for, nothing left to write. */
                assert_false(peer_has_output(c.peer));
                assert_int_equal(peer_unsent(c.peer), 0);
                assert_int_equal(loop_run_once(c.loop, 0), 0);
                assert_int_equal(client_take(&c, buf, sizeof(buf)), sizeof(REPLY));
                assert_string_equal(buf, REPLY);
        }
        /* The last one's outcome is taken by the next flush, which has nothing more to write. */
        assert_int_equal(peer_flush(c.peer), 0);
        assert_int_equal(c.peer->sending, 0);
        assert_int_equal(sends, 0);
        conn_close(&c);
}

/* The timerfd backend has no such send: send(2), as before. */
static void test_timerfd_writes_with_send(void **state)
{
        struct conn c;
        char buf[256];

        (void)state;
        assert_int_equal(conn_open(&c, LOOP_BACKEND_TIMERFD), 0);
        sends = 0;
        assert_int_equal(vl_writer_queue(&c.peer->out, REPLY, strlen(REPLY)), 0);
        assert_int_equal(peer_flush(c.peer), 0);
        assert_int_equal(sends, 1);
        assert_int_equal(client_take(&c, buf, sizeof(buf)), sizeof(REPLY));
        conn_close(&c);
}

/*
 * A reply larger than the socket takes: the ring send takes part, the rest goes by send(2) as the
 * client reads, whole and in order; once all is written the next reply goes through the ring.
 */
static void test_large_reply_arrives_whole(void **state)
{
        enum { LEN = 60000 };
        int sndbuf = 4096;
        char *msg = malloc(LEN), *got = malloc(LEN + 1);
        size_t have = 0;
        struct conn c;

        (void)state;
        assert_non_null(msg);
        assert_non_null(got);
        if (conn_open(&c, LOOP_BACKEND_IO_URING) < 0)
                skip();
        assert_int_equal(setsockopt(c.peer->fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf)), 0);
        for (size_t i = 0; i < LEN; i++)
                msg[i] = (char)('a' + i % 26);
        assert_int_equal(vl_writer_queue(&c.peer->out, msg, LEN), 0);
        sends = 0;
        assert_int_equal(peer_flush(c.peer), 0);
        /* The send that did not take it all is reported (LOOP_OUT); the flush then writes on. */
        reported = 0;
        while (!(reported & LOOP_OUT))
                assert_true(loop_run_once(c.loop, 1000 * 1000) >= 0);
        assert_int_equal(peer_flush(c.peer), -EAGAIN);
        assert_true(c.peer->send_direct);
        while (have < LEN + 1) {
                struct pollfd p = {.fd = c.client, .events = POLLIN};

                assert_int_equal(poll(&p, 1, 10 * 1000), 1);
                have += client_take(&c, got + have, LEN + 1 - have);
                int r = peer_flush(c.peer);
                assert_true(r == 0 || r == -EAGAIN);
        }
        assert_memory_equal(got, msg, LEN);
        assert_int_equal(got[LEN], 0);
        assert_true(sends > 0);
        assert_false(c.peer->send_direct);
        assert_int_equal(peer_unsent(c.peer), 0);

        /* All written: the next reply is the ring's again. */
        sends = 0;
        assert_int_equal(vl_writer_queue(&c.peer->out, REPLY, strlen(REPLY)), 0);
        assert_int_equal(peer_flush(c.peer), 0);
        assert_int_equal(loop_run_once(c.loop, 0), 0);
        assert_int_equal(client_take(&c, got, LEN), sizeof(REPLY));
        assert_int_equal(sends, 0);
        conn_close(&c);
        free(msg);
        free(got);
}

/* The client is gone: the outcome says so and the flush fails, as send(2) would. */
static void test_broken_connection_fails_the_flush(void **state)
{
        struct conn c;

        (void)state;
        if (conn_open(&c, LOOP_BACKEND_IO_URING) < 0)
                skip();
        close(c.client);
        c.client = -1;
        assert_int_equal(vl_writer_queue(&c.peer->out, REPLY, strlen(REPLY)), 0);
        assert_int_equal(peer_flush(c.peer), 0);
        reported = 0;
        while (!(reported & LOOP_OUT))
                assert_true(loop_run_once(c.loop, 1000 * 1000) >= 0);
        int r = peer_flush(c.peer);
        assert_true(r == -EPIPE || r == -ECONNRESET);
        conn_close(&c);
}

/*
 * A connection about to close (doomed, or the service stopping) writes and learns at once whether
 * its output went: a reply that fits has left without a wait; one the socket does not take whole
 * is left to write (-EAGAIN), nothing of it taken for written.
 */
static void test_flush_now_knows_the_outcome(void **state)
{
        enum { LEN = 60000 };
        int sndbuf = 4096;
        char *msg = calloc(1, LEN), buf[256];
        struct conn c;

        (void)state;
        assert_non_null(msg);
        if (conn_open(&c, LOOP_BACKEND_IO_URING) < 0)
                skip();
        assert_int_equal(vl_writer_queue(&c.peer->out, REPLY, strlen(REPLY)), 0);
        assert_int_equal(peer_flush_now(c.peer), 0);
        assert_int_equal(c.peer->sending, 0);
        assert_int_equal(peer_unsent(c.peer), 0);
        assert_int_equal(client_take(&c, buf, sizeof(buf)), sizeof(REPLY));

        assert_int_equal(setsockopt(c.peer->fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf)), 0);
        memset(msg, 'x', LEN - 1);
        assert_int_equal(vl_writer_queue(&c.peer->out, msg, LEN - 1), 0);
        assert_int_equal(peer_flush_now(c.peer), -EAGAIN);
        assert_int_equal(c.peer->sending, 0);
        assert_true(c.peer->send_direct);
        assert_true(peer_unsent(c.peer) > 0 && peer_unsent(c.peer) < LEN);
        assert_true(peer_has_output(c.peer));
        conn_close(&c);
        free(msg);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_replies_leave_without_send),
            cmocka_unit_test(test_timerfd_writes_with_send),
            cmocka_unit_test(test_large_reply_arrives_whole),
            cmocka_unit_test(test_broken_connection_fails_the_flush),
            cmocka_unit_test(test_flush_now_knows_the_outcome),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
