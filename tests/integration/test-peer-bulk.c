/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * When a connection tells its loop watch that the peer streams (loop_stream_bulk(), which makes
 * the io_uring backend read by poll and read(2) instead of a recv completion per write): a read
 * that brings a second call before the next read turns it on; a read after four in a row that
 * brought at most one call each turns it off again. Counted in calls, on the timerfd backend (where
 * the switch changes nothing but the peer's mark; tests/loop checks what it does on io_uring).
 */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "loop/loop.h"
#include "service/io/peer.h"

#define CALL "{\"method\":\"org.varlink.service.GetInfo\"}"

static void on_io(struct loop_watch *w, int fd, uint32_t events, void *userdata)
{
        (void)w;
        (void)fd;
        (void)events;
        (void)userdata;
}

static void on_expired(enum timerd_clock clock, uint64_t generation, void *userdata)
{
        (void)clock;
        (void)generation;
        (void)userdata;
}

/* Send `calls` calls in one write, then read once and take every whole one: how many. */
static int send_and_take(struct peer *p, int client, int calls)
{
        char buf[8 * sizeof(CALL)];
        size_t len = 0;
        struct vl_call call;
        int taken = 0, r;

        for (int i = 0; i < calls; i++) {
                memcpy(buf + len, CALL, sizeof(CALL));
                len += sizeof(CALL);
        }
        assert_int_equal(write(client, buf, len), (ssize_t)len);
        assert_int_equal(peer_read(p), (long)len);
        while ((r = peer_next_call(p, 16, &call)) == 1)
                taken++;
        assert_int_equal(r, 0);
        return taken;
}

static void test_bulk_follows_calls_per_read(void **state)
{
        struct loop_callbacks cb = {.expired = on_expired};
        struct loop *l;
        struct peer *p;
        int s[2];

        (void)state;
        assert_int_equal(loop_new(LOOP_BACKEND_TIMERFD, &cb, &l), 0);
        assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, s), 0);
        assert_int_equal(peer_new(s[0], 1, 65536, 1 << 20, &p), 0);
        assert_int_equal(loop_watch_stream(l, s[0], LOOP_IN, on_io, p, &p->watch), 0);

        /* One call a read: a peer that waits for its answers. */
        for (int i = 0; i < 3; i++) {
                assert_int_equal(send_and_take(p, s[1], 1), 1);
                assert_false(p->bulk);
        }
        /* A call split across two reads is still one. */
        assert_int_equal(write(s[1], CALL, 10), 10);
        assert_int_equal(peer_read(p), 10);
        assert_int_equal(write(s[1], &CALL[10], sizeof(CALL) - 10), (ssize_t)(sizeof(CALL) - 10));
        assert_int_equal(peer_read(p), (long)(sizeof(CALL) - 10));
        struct vl_call call;
        assert_int_equal(peer_next_call(p, 16, &call), 1);
        assert_false(p->bulk);

        /* Two in one read: bulk, and it stays while reads bring more than one. */
        assert_int_equal(send_and_take(p, s[1], 2), 2);
        assert_true(p->bulk);
        assert_int_equal(send_and_take(p, s[1], 5), 5);
        assert_true(p->bulk);
        /* Four reads in a row that brought a single call each end it, at the read after them;
         * a read of two in between starts the count again. */
        for (int i = 0; i < 3; i++) {
                assert_int_equal(send_and_take(p, s[1], 1), 1);
                assert_true(p->bulk);
        }
        assert_int_equal(send_and_take(p, s[1], 2), 2);
        for (int i = 0; i < 4; i++) {
                assert_int_equal(send_and_take(p, s[1], 1), 1);
                assert_true(p->bulk);
        }
        assert_int_equal(send_and_take(p, s[1], 1), 1);
        assert_false(p->bulk);

        /* Bulk is the watch's to know: without a watch the mark stays as it was. */
        loop_unwatch(p->watch);
        p->watch = NULL;
        assert_int_equal(loop_stream_bulk(NULL, true), -EINVAL);
        peer_free(p);
        close(s[1]);
        loop_free(l);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_bulk_follows_calls_per_read),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
