/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "varlink/frame.h"

#define STR_AND_LEN(s) (s), (sizeof(s) - 1)

static void make_socketpair(int fds[2])
{
        assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds),
                         0);
}

static void write_all(int fd, const void *data, size_t len)
{
        assert_int_equal(write(fd, data, len), (ssize_t)len);
}

static void assert_next(struct vl_reader *r, const char *expected)
{
        const char *msg = NULL;
        size_t len = SIZE_MAX;

        assert_int_equal(vl_reader_next(r, &msg, &len), 1);
        assert_int_equal(len, strlen(expected));
        assert_memory_equal(msg, expected, len);
        assert_int_equal(msg[len], 0);
}

static void assert_no_next(struct vl_reader *r)
{
        const char *msg;
        size_t len;

        assert_int_equal(vl_reader_next(r, &msg, &len), 0);
}

static void reader_split_message(void **state)
{
        struct vl_reader r;

        (void)state;
        vl_reader_init(&r, 1024);
        assert_false(vl_reader_partial(&r));
        assert_no_next(&r);

        assert_int_equal(vl_reader_feed(&r, STR_AND_LEN("{\"meth")), 0);
        assert_no_next(&r);
        assert_true(vl_reader_partial(&r));
        assert_int_equal(vl_reader_feed(&r, STR_AND_LEN("od\":\"a.B\"}")), 0);
        assert_no_next(&r);
        assert_int_equal(vl_reader_feed(&r, "", 1), 0);
        assert_next(&r, "{\"method\":\"a.B\"}");
        assert_false(vl_reader_partial(&r));
        assert_no_next(&r);
        vl_reader_done(&r);
}

static void reader_many_messages_in_one_feed(void **state)
{
        static const char input[] = "a\0bb\0\0ccc";
        struct vl_reader r;

        (void)state;
        vl_reader_init(&r, 1024);
        assert_int_equal(vl_reader_feed(&r, input, sizeof(input) - 1), 0);
        assert_next(&r, "a");
        assert_next(&r, "bb");
        assert_next(&r, ""); /* an empty message is a message: the caller rejects it as JSON */
        assert_no_next(&r);
        assert_true(vl_reader_partial(&r));
        assert_int_equal(vl_reader_unfinished(&r), 3);
        assert_int_equal(vl_reader_feed(&r, "\0d", 2), 0);
        /* Only the bytes after the last end: the next message's, not the one just finished. */
        assert_int_equal(vl_reader_unfinished(&r), 1);
        assert_next(&r, "ccc");
        assert_true(vl_reader_partial(&r));
        assert_int_equal(vl_reader_unfinished(&r), 1);
        vl_reader_done(&r);
}

static void reader_many_messages_in_one_read(void **state)
{
        static const char input[] = "m1\0m22\0m333\0";
        struct vl_reader r;
        int fds[2];

        (void)state;
        make_socketpair(fds);
        vl_reader_init(&r, 1024);
        write_all(fds[1], input, sizeof(input) - 1);

        assert_int_equal(vl_reader_fill(&r, fds[0]), (long)(sizeof(input) - 1));
        assert_next(&r, "m1");
        assert_next(&r, "m22");
        assert_next(&r, "m333");
        assert_no_next(&r);
        assert_int_equal(vl_reader_fill(&r, fds[0]), -EAGAIN);

        assert_int_equal(close(fds[1]), 0);
        assert_int_equal(vl_reader_fill(&r, fds[0]), 0);
        assert_false(vl_reader_partial(&r));
        vl_reader_done(&r);
        assert_int_equal(close(fds[0]), 0);
}

/* A message much larger than the first buffer, arriving in many reads, comes out whole. */
static void reader_message_split_across_reads(void **state)
{
        enum { SIZE = 100000, CHUNK = 1000 };
        struct vl_reader r;
        const char *msg;
        size_t len;
        char *text;
        int fds[2];

        (void)state;
        text = malloc(SIZE + 1);
        assert_non_null(text);
        for (size_t i = 0; i < SIZE; i++)
                text[i] = (char)('a' + i % 26);
        text[SIZE] = 0;

        make_socketpair(fds);
        vl_reader_init(&r, 2 * SIZE);
        for (size_t off = 0; off < SIZE + 1; off += CHUNK) {
                size_t n = off + CHUNK <= SIZE + 1 ? CHUNK : SIZE + 1 - off;
                long got = 0, k;

                write_all(fds[1], text + off, n);
                while ((k = vl_reader_fill(&r, fds[0])) > 0)
                        got += k;
                assert_int_equal(k, -EAGAIN);
                assert_int_equal(got, (long)n);
                if (off + n < SIZE + 1) {
                        assert_no_next(&r);
                        assert_true(vl_reader_partial(&r));
                }
        }
        assert_int_equal(vl_reader_next(&r, &msg, &len), 1);
        assert_int_equal(len, SIZE);
        assert_memory_equal(msg, text, SIZE);
        assert_false(vl_reader_partial(&r));

        vl_reader_done(&r);
        free(text);
        assert_int_equal(close(fds[0]), 0);
        assert_int_equal(close(fds[1]), 0);
}

static void reader_message_of_max_size(void **state)
{
        struct vl_reader r;

        (void)state;
        vl_reader_init(&r, 4);
        assert_int_equal(vl_reader_feed(&r, "1234", 5), 0);
        assert_next(&r, "1234");
        assert_int_equal(vl_reader_feed(&r, "5678", 5), 0);
        assert_next(&r, "5678");
        vl_reader_done(&r);
}

static void reader_oversize_without_nul(void **state)
{
        const char *msg;
        size_t len;
        struct vl_reader r;

        (void)state;
        vl_reader_init(&r, 8);
        assert_int_equal(vl_reader_feed(&r, STR_AND_LEN("12345678")), 0);
        assert_no_next(&r);
        assert_int_equal(vl_reader_feed(&r, STR_AND_LEN("9")), 0);
        assert_int_equal(vl_reader_next(&r, &msg, &len), -EMSGSIZE);
        assert_int_equal(vl_reader_feed(&r, STR_AND_LEN("0")), -EMSGSIZE);
        vl_reader_done(&r);
}

static void reader_oversize_with_nul(void **state)
{
        const char *msg;
        size_t len;
        struct vl_reader r;

        (void)state;
        vl_reader_init(&r, 4);
        assert_int_equal(vl_reader_feed(&r, "12345", 6), -EMSGSIZE);
        assert_int_equal(vl_reader_next(&r, &msg, &len), -EMSGSIZE);
        vl_reader_done(&r);
}

/* Whole messages are handed out before the one that is too long. */
static void reader_oversize_after_good_message(void **state)
{
        const char *msg;
        size_t len;
        struct vl_reader r;

        (void)state;
        vl_reader_init(&r, 6);
        assert_int_equal(vl_reader_feed(&r, STR_AND_LEN("ok\0abcd")), 0);
        assert_next(&r, "ok");
        assert_int_equal(vl_reader_feed(&r, STR_AND_LEN("efg")), 0);
        assert_int_equal(vl_reader_next(&r, &msg, &len), -EMSGSIZE);
        vl_reader_done(&r);
}

static void reader_fill_oversize(void **state)
{
        char junk[100];
        const char *msg;
        size_t len;
        struct vl_reader r;
        int fds[2];

        (void)state;
        memset(junk, 'x', sizeof(junk));
        make_socketpair(fds);
        write_all(fds[1], junk, sizeof(junk));
        vl_reader_init(&r, 16);

        assert_int_equal(vl_reader_fill(&r, fds[0]), 17);
        assert_int_equal(vl_reader_next(&r, &msg, &len), -EMSGSIZE);
        assert_int_equal(vl_reader_fill(&r, fds[0]), -EMSGSIZE);

        vl_reader_done(&r);
        assert_int_equal(close(fds[0]), 0);
        assert_int_equal(close(fds[1]), 0);
}

/* A full buffer of whole messages is not an oversize message: take them, then read on. */
static void reader_full_of_whole_messages(void **state)
{
        struct vl_reader r;

        (void)state;
        vl_reader_init(&r, 4);
        assert_int_equal(vl_reader_feed(&r, STR_AND_LEN("ab\0cd\0")), -ENOBUFS);
        assert_next(&r, "ab");
        assert_no_next(&r);
        assert_int_equal(vl_reader_feed(&r, "", 1), 0);
        assert_next(&r, "cd");
        vl_reader_done(&r);
}

static void reader_fill_full_of_whole_messages(void **state)
{
        struct vl_reader r;
        int fds[2];

        (void)state;
        make_socketpair(fds);
        write_all(fds[1], STR_AND_LEN("ab\0cd\0"));
        vl_reader_init(&r, 4);
        assert_int_equal(vl_reader_fill(&r, fds[0]), 5);
        assert_int_equal(vl_reader_fill(&r, fds[0]), -ENOBUFS);
        assert_next(&r, "ab");
        assert_int_equal(vl_reader_fill(&r, fds[0]), 1);
        assert_next(&r, "cd");
        assert_no_next(&r);
        vl_reader_done(&r);
        assert_int_equal(close(fds[0]), 0);
        assert_int_equal(close(fds[1]), 0);
}

/* Messages of 100 bytes with their NUL, n of them, into fd in one write. */
static void write_messages(int fd, size_t n)
{
        char *text = malloc(n * 100);

        assert_non_null(text);
        memset(text, 'm', n * 100);
        for (size_t i = 0; i < n; i++)
                text[i * 100 + 99] = 0;
        write_all(fd, text, n * 100);
        free(text);
}

/* Take what the reader holds; how many messages that was. */
static size_t take_all(struct vl_reader *r)
{
        const char *msg;
        size_t len, n = 0;

        while (vl_reader_next(r, &msg, &len) == 1) {
                assert_int_equal(len, 99);
                n++;
        }
        return n;
}

/*
 * 100 KiB of small messages waiting: a read that took all its room doubles the room of the next
 * (4, 8, 16, 32, 64 KiB), so five reads take them where reads of the first size took 25.
 */
static void reader_fill_grows_for_bulk(void **state)
{
        enum { MESSAGES = 1000 };
        struct vl_reader r;
        size_t taken = 0, reads = 0;
        long n;
        int fds[2];

        (void)state;
        make_socketpair(fds);
        write_messages(fds[1], MESSAGES);
        vl_reader_init(&r, 1024 * 1024);
        while ((n = vl_reader_fill(&r, fds[0])) > 0) {
                reads++;
                taken += take_all(&r);
        }
        assert_int_equal(n, -EAGAIN);
        assert_int_equal(taken, MESSAGES);
        assert_int_equal(reads, 5);
        assert_int_equal(r.cap, 64 * 1024);
        /* Reads that do not fill the room leave it as it is. */
        write_messages(fds[1], 10);
        assert_int_equal(vl_reader_fill(&r, fds[0]), 1000);
        assert_int_equal(take_all(&r), 10);
        assert_int_equal(r.cap, 64 * 1024);
        vl_reader_done(&r);
        assert_int_equal(close(fds[0]), 0);
        assert_int_equal(close(fds[1]), 0);
}

/* The growth stops at one message's bound: the reads go on at that size. */
static void reader_fill_growth_bounded(void **state)
{
        enum { MESSAGES = 500, MAX_MESSAGE = 6000 };
        struct vl_reader r;
        size_t taken = 0;
        long n;
        int fds[2];

        (void)state;
        make_socketpair(fds);
        write_messages(fds[1], MESSAGES);
        vl_reader_init(&r, MAX_MESSAGE);
        while ((n = vl_reader_fill(&r, fds[0])) > 0) {
                assert_true(r.cap <= MAX_MESSAGE + 1);
                taken += take_all(&r);
        }
        assert_int_equal(n, -EAGAIN);
        assert_int_equal(taken, MESSAGES);
        assert_int_equal(r.cap, MAX_MESSAGE + 1);
        vl_reader_done(&r);
        assert_int_equal(close(fds[0]), 0);
        assert_int_equal(close(fds[1]), 0);
}

/* Held messages are not moved at a read that finds room enough behind them: a service reading a
 * few calls at a time behind a burst it has yet to take moved the burst at every read. */
static void reader_fill_leaves_held_messages_in_place(void **state)
{
        enum { N = 10, SIZE = 1000 };
        char text[N * SIZE];
        struct vl_reader r;
        const char *third, *msg;
        size_t len;
        int fds[2];

        (void)state;
        for (size_t i = 0; i < sizeof(text); i++)
                text[i] = i % SIZE == SIZE - 1 ? 0 : (char)('a' + i / SIZE);
        make_socketpair(fds);
        vl_reader_init(&r, 1 << 16);
        write_all(fds[1], text, sizeof(text));
        /* 4 KiB, filled; 8 KiB, filled; 16 KiB, the rest: 6 KiB free behind the messages. */
        assert_int_equal(vl_reader_fill(&r, fds[0]), 4096);
        assert_int_equal(vl_reader_fill(&r, fds[0]), 4096);
        assert_int_equal(vl_reader_fill(&r, fds[0]), (long)sizeof(text) - 8192);
        assert_int_equal(vl_reader_next(&r, &msg, &len), 1);
        assert_int_equal(vl_reader_next(&r, &msg, &len), 1);
        assert_int_equal(vl_reader_next(&r, &third, &len), 1);
        assert_int_equal(third[0], 'c');
        write_all(fds[1], "ab", 3);
        assert_int_equal(vl_reader_fill(&r, fds[0]), 3);
        for (size_t i = 3; i < N; i++) {
                assert_int_equal(vl_reader_next(&r, &msg, &len), 1);
                assert_ptr_equal(msg, third + (i - 2) * SIZE);
                assert_int_equal(len, SIZE - 1);
                assert_int_equal(msg[0], 'a' + (char)i);
        }
        assert_next(&r, "ab");
        assert_no_next(&r);
        vl_reader_done(&r);
        assert_int_equal(close(fds[0]), 0);
        assert_int_equal(close(fds[1]), 0);
}

static void reader_fill_errors(void **state)
{
        struct vl_reader r;
        int fds[2];

        (void)state;
        vl_reader_init(&r, 64);
        assert_int_equal(vl_reader_fill(&r, -1), -EBADF);
        assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
        assert_int_equal(vl_reader_fill(&r, fds[1]), -EBADF); /* the write end */
        vl_reader_done(&r);
        assert_int_equal(close(fds[0]), 0);
        assert_int_equal(close(fds[1]), 0);
}

/* A source other than an fd: what it gives, the end and its errors come through as from read(2),
 * and the reader's limits hold. */
struct chunks {
        const char *const *parts; /* NULL ends them: then `end` */
        long end;
        size_t next;
};

static long read_chunks(void *ctx, void *buf, size_t len)
{
        struct chunks *c = ctx;
        const char *part = c->parts[c->next];
        size_t n;

        if (!part)
                return c->end;
        n = strlen(part);
        assert_true(n <= len);
        memcpy(buf, part, n);
        c->next++;
        return (long)n;
}

static void reader_fill_from_source(void **state)
{
        static const char *const parts[] = {"ab", "c", NULL};
        struct chunks c = {.parts = parts, .end = -EAGAIN};
        struct vl_reader r;

        (void)state;
        vl_reader_init(&r, 4);
        assert_int_equal(vl_reader_fill_from(&r, read_chunks, &c), 2);
        assert_no_next(&r);
        assert_int_equal(vl_reader_fill_from(&r, read_chunks, &c), 1);
        assert_int_equal(vl_reader_fill_from(&r, read_chunks, &c), -EAGAIN);
        c.end = 0;
        assert_int_equal(vl_reader_fill_from(&r, read_chunks, &c), 0);
        c.end = -ECONNRESET;
        assert_int_equal(vl_reader_fill_from(&r, read_chunks, &c), -ECONNRESET);
        /* Five bytes and no NUL: past the limit of 4. */
        static const char *const more[] = {"de", NULL};
        c = (struct chunks){.parts = more, .end = -EAGAIN};
        assert_int_equal(vl_reader_fill_from(&r, read_chunks, &c), 2);
        assert_int_equal(vl_reader_fill_from(&r, read_chunks, &c), -EMSGSIZE);
        vl_reader_done(&r);
}

static void reader_reusable_after_done(void **state)
{
        struct vl_reader r;

        (void)state;
        vl_reader_init(&r, 64);
        assert_int_equal(vl_reader_feed(&r, STR_AND_LEN("half")), 0);
        vl_reader_done(&r);
        assert_false(vl_reader_partial(&r));
        assert_no_next(&r);
        assert_int_equal(vl_reader_feed(&r, "new", 4), 0);
        assert_next(&r, "new");
        vl_reader_done(&r);
        vl_reader_done(&r);
}

static void read_exactly(int fd, const char *expected, size_t len)
{
        char buf[256];

        assert_true(len <= sizeof(buf));
        assert_int_equal(read(fd, buf, sizeof(buf)), (ssize_t)len);
        assert_memory_equal(buf, expected, len);
}

static void writer_queue_and_flush(void **state)
{
        struct vl_writer w;
        int fds[2];

        (void)state;
        make_socketpair(fds);
        vl_writer_init(&w, 1024);
        assert_int_equal(vl_writer_pending(&w), 0);
        assert_int_equal(vl_writer_flush(&w, fds[0]), 0);

        assert_int_equal(vl_writer_queue(&w, STR_AND_LEN("a")), 0);
        assert_int_equal(vl_writer_queue(&w, STR_AND_LEN("bc")), 0);
        assert_int_equal(vl_writer_queue(&w, "", 0), 0);
        assert_int_equal(vl_writer_pending(&w), 6);
        assert_int_equal(vl_writer_flush(&w, fds[0]), 0);
        assert_int_equal(vl_writer_pending(&w), 0);
        read_exactly(fds[1], "a\0bc\0\0", 6);

        vl_writer_done(&w);
        assert_int_equal(close(fds[0]), 0);
        assert_int_equal(close(fds[1]), 0);
}

/* A message written straight into the writer's buffer, as a text writer does: where it starts. */
static uint64_t append(struct vl_writer *w, const char *msg, int expected)
{
        char *buf;
        size_t len, cap, n = strlen(msg) + 1;
        uint64_t position;

        vl_writer_append_begin(w, &buf, &len, &cap, &position);
        if (cap - len < n) {
                cap = len + n;
                buf = realloc(buf, cap);
                assert_non_null(buf);
        }
        memcpy(buf + len, msg, n);
        assert_int_equal(vl_writer_append_end(w, buf, len + n, cap), expected);
        return position;
}

static void writer_append_in_place(void **state)
{
        struct vl_writer w;
        char *buf;
        size_t len, cap;
        uint64_t position;
        int fds[2];

        (void)state;
        make_socketpair(fds);
        vl_writer_init(&w, 10);
        assert_int_equal(vl_writer_queue(&w, STR_AND_LEN("a")), 0);
        assert_int_equal(append(&w, "bc", 0), 2);
        assert_int_equal(vl_writer_pending(&w), 5);
        /* Past the bound, and a message that failed: nothing is queued. */
        append(&w, "defgh", -ENOBUFS);
        vl_writer_append_begin(&w, &buf, &len, &cap, &position);
        assert_int_equal(position, 5);
        assert_int_equal(vl_writer_append_end(&w, buf, len, cap), 0);
        assert_int_equal(vl_writer_pending(&w), 5);
        assert_int_equal(vl_writer_flush(&w, fds[0]), 0);
        read_exactly(fds[1], "a\0bc\0", 5);
        /* Positions count on across flushes. */
        assert_int_equal(append(&w, "d", 0), 5);

        vl_writer_done(&w);
        assert_int_equal(close(fds[0]), 0);
        assert_int_equal(close(fds[1]), 0);
}

/* In a child: lend out a message, then do `touch` to the writer, which must abort. */
static void assert_aborts_while_lent(void (*touch)(struct vl_writer *w, int fd))
{
        int fds[2], status;

        make_socketpair(fds);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                struct vl_writer w;
                char *buf;
                size_t len, cap;
                uint64_t position;

                /* The abort is expected: no core, no report of it. */
                signal(SIGABRT, SIG_DFL);
                (void)dup2(open("/dev/null", O_WRONLY), STDERR_FILENO);
                vl_writer_init(&w, 1024);
                vl_writer_append_begin(&w, &buf, &len, &cap, &position);
                touch(&w, fds[0]);
                _exit(0);
        }
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFSIGNALED(status));
        assert_int_equal(WTERMSIG(status), SIGABRT);
        assert_int_equal(close(fds[0]), 0);
        assert_int_equal(close(fds[1]), 0);
}

static void touch_flush(struct vl_writer *w, int fd)
{
        (void)vl_writer_flush(w, fd);
}

static void touch_queue(struct vl_writer *w, int fd)
{
        (void)fd;
        (void)vl_writer_queue(w, STR_AND_LEN("x"));
}

static void touch_append(struct vl_writer *w, int fd)
{
        char *buf;
        size_t len, cap;
        uint64_t position;

        (void)fd;
        vl_writer_append_begin(w, &buf, &len, &cap, &position);
}

/* While a message is lent out nothing else touches the writer (its buffer may have moved): an
 * invariant, which aborts when broken; given back, the writer is free again. */
static void writer_lent_is_exclusive(void **state)
{
        struct vl_writer w;
        char *buf;
        size_t len, cap;
        uint64_t position;

        (void)state;
        vl_writer_init(&w, 1024);
        assert_false(vl_writer_appending(&w));
        vl_writer_append_begin(&w, &buf, &len, &cap, &position);
        assert_true(vl_writer_appending(&w));
        assert_int_equal(vl_writer_append_end(&w, buf, len, cap), 0);
        assert_false(vl_writer_appending(&w));
        assert_int_equal(vl_writer_queue(&w, STR_AND_LEN("a")), 0);
        vl_writer_done(&w);
#ifdef NDEBUG
        skip();
#else
        assert_aborts_while_lent(touch_flush);
        assert_aborts_while_lent(touch_queue);
        assert_aborts_while_lent(touch_append);
#endif
}

/* Held output waits for its release; a held message may be replaced, also after what was before
 * it was written; dropped, the held output is gone. */
static void writer_hold(void **state)
{
        struct vl_writer w;
        uint64_t bc, e;
        int fds[2];

        (void)state;
        make_socketpair(fds);
        vl_writer_init(&w, 1024);
        assert_int_equal(vl_writer_queue(&w, STR_AND_LEN("a")), 0);
        bc = append(&w, "bc", 0);
        vl_writer_hold(&w, bc);
        append(&w, "d", 0);
        e = append(&w, "eee", 0);
        vl_writer_hold(&w, e); /* the earlier hold stands */
        assert_int_equal(vl_writer_pending(&w), 11);
        assert_int_equal(vl_writer_sendable(&w), 2);
        assert_int_equal(vl_writer_flush(&w, fds[0]), 0);
        read_exactly(fds[1], "a\0", 2);
        assert_int_equal(vl_writer_sendable(&w), 0);
        /* The last first, so that the earlier position holds. */
        assert_int_equal(vl_writer_replace(&w, e, 3, STR_AND_LEN("X")), 0);
        append(&w, "f", 0); /* moves what is held to the front */
        assert_int_equal(vl_writer_replace(&w, bc, 2, STR_AND_LEN("YYYYYY")), 0);
        assert_int_equal(vl_writer_flush(&w, fds[0]), 0);
        assert_int_equal(vl_writer_pending(&w), 13);
        vl_writer_release(&w);
        assert_int_equal(vl_writer_sendable(&w), 13);
        assert_int_equal(vl_writer_flush(&w, fds[0]), 0);
        read_exactly(fds[1], "YYYYYY\0d\0X\0f\0", 13);

        assert_int_equal(vl_writer_queue(&w, STR_AND_LEN("g")), 0);
        vl_writer_hold(&w, append(&w, "h", 0));
        append(&w, "i", 0);
        vl_writer_drop_held(&w);
        assert_int_equal(vl_writer_pending(&w), 2);
        append(&w, "j", 0);
        assert_int_equal(vl_writer_flush(&w, fds[0]), 0);
        read_exactly(fds[1], "g\0j\0", 4);

        vl_writer_done(&w);
        assert_int_equal(close(fds[0]), 0);
        assert_int_equal(close(fds[1]), 0);
}

static void writer_bound(void **state)
{
        struct vl_writer w;
        int fds[2];

        (void)state;
        vl_writer_init(&w, 10);
        assert_int_equal(vl_writer_queue(&w, STR_AND_LEN("0123456789")), -ENOBUFS);
        assert_int_equal(vl_writer_queue(&w, (const char *)"x", SIZE_MAX), -ENOBUFS);
        assert_int_equal(vl_writer_queue(&w, STR_AND_LEN("01234")), 0);
        assert_int_equal(vl_writer_queue(&w, STR_AND_LEN("567")), 0);
        assert_int_equal(vl_writer_pending(&w), 10);
        assert_int_equal(vl_writer_queue(&w, "", 0), -ENOBUFS);
        assert_int_equal(vl_writer_pending(&w), 10);

        /* Once flushed, the room is there again. */
        make_socketpair(fds);
        assert_int_equal(vl_writer_flush(&w, fds[0]), 0);
        assert_int_equal(vl_writer_queue(&w, STR_AND_LEN("012345678")), 0);
        assert_int_equal(vl_writer_flush(&w, fds[0]), 0);
        read_exactly(fds[1],
                     "01234\0"
                     "567\0"
                     "012345678\0",
                     20);

        vl_writer_done(&w);
        assert_int_equal(close(fds[0]), 0);
        assert_int_equal(close(fds[1]), 0);
}

/* Appends what the socket holds to out[*len], never past room. */
static void drain(int fd, char *out, size_t *len, size_t room)
{
        char buf[65536];
        ssize_t n;

        while ((n = read(fd, buf, sizeof(buf))) > 0) {
                assert_true((size_t)n <= room - *len);
                memcpy(out + *len, buf, (size_t)n);
                *len += (size_t)n;
        }
        assert_int_equal(n, -1);
        assert_int_equal(errno, EAGAIN);
}

static void writer_partial_writes(void **state)
{
        /* The bound holds both messages only once part of the first is written. */
        enum { FIRST = 300000, SECOND = 1000, TOTAL = FIRST + 1 + SECOND + 1, BOUND = TOTAL - 1 };
        struct vl_writer w;
        size_t received = 0;
        char *first, *second, *out;
        int fds[2], small = 4096, r = -1;

        (void)state;
        first = malloc(FIRST);
        second = malloc(SECOND);
        out = malloc(TOTAL);
        assert_non_null(first);
        assert_non_null(second);
        assert_non_null(out);
        memset(first, 'f', FIRST);
        memset(second, 's', SECOND);

        make_socketpair(fds);
        assert_int_equal(setsockopt(fds[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof(small)), 0);
        assert_int_equal(setsockopt(fds[1], SOL_SOCKET, SO_RCVBUF, &small, sizeof(small)), 0);
        vl_writer_init(&w, BOUND);

        assert_int_equal(vl_writer_queue(&w, first, FIRST), 0);
        assert_int_equal(vl_writer_queue(&w, second, SECOND), -ENOBUFS);
        assert_int_equal(vl_writer_flush(&w, fds[0]), -EAGAIN);
        assert_true(vl_writer_pending(&w) > 0);
        assert_true(vl_writer_pending(&w) < FIRST + 1);

        /* Queueing behind a half-written message keeps both whole and in order. */
        assert_int_equal(vl_writer_queue(&w, second, SECOND), 0);

        for (unsigned i = 0; i < 100000; i++) {
                drain(fds[1], out, &received, TOTAL);
                r = vl_writer_flush(&w, fds[0]);
                if (r == 0)
                        break;
                assert_int_equal(r, -EAGAIN);
        }
        assert_int_equal(r, 0);
        assert_int_equal(vl_writer_pending(&w), 0);
        drain(fds[1], out, &received, TOTAL);

        assert_int_equal(received, TOTAL);
        assert_memory_equal(out, first, FIRST);
        assert_int_equal(out[FIRST], 0);
        assert_memory_equal(out + FIRST + 1, second, SECOND);
        assert_int_equal(out[TOTAL - 1], 0);

        vl_writer_done(&w);
        free(first);
        free(second);
        free(out);
        assert_int_equal(close(fds[0]), 0);
        assert_int_equal(close(fds[1]), 0);
}

/* With SIGPIPE's default action a raised SIGPIPE would kill the test. */
static void writer_closed_peer_socket(void **state)
{
        struct vl_writer w;
        int fds[2];

        (void)state;
        assert_true(signal(SIGPIPE, SIG_DFL) != SIG_ERR);
        make_socketpair(fds);
        assert_int_equal(close(fds[1]), 0);
        vl_writer_init(&w, 64);
        assert_int_equal(vl_writer_queue(&w, STR_AND_LEN("lost")), 0);
        assert_int_equal(vl_writer_flush(&w, fds[0]), -EPIPE);
        assert_int_equal(vl_writer_pending(&w), 5);
        vl_writer_done(&w);
        assert_int_equal(close(fds[0]), 0);
}

static void writer_pipe(void **state)
{
        struct vl_writer w;
        sigset_t pending;
        int fds[2];

        (void)state;
        assert_true(signal(SIGPIPE, SIG_DFL) != SIG_ERR);
        assert_int_equal(pipe2(fds, O_NONBLOCK | O_CLOEXEC), 0);
        vl_writer_init(&w, 64);

        assert_int_equal(vl_writer_queue(&w, STR_AND_LEN("via pipe")), 0);
        assert_int_equal(vl_writer_flush(&w, fds[1]), 0);
        read_exactly(fds[0], "via pipe", 9);

        assert_int_equal(close(fds[0]), 0);
        assert_int_equal(vl_writer_queue(&w, STR_AND_LEN("lost")), 0);
        assert_int_equal(vl_writer_flush(&w, fds[1]), -EPIPE);
        assert_int_equal(sigpending(&pending), 0);
        assert_int_equal(sigismember(&pending, SIGPIPE), 0);

        vl_writer_done(&w);
        assert_int_equal(close(fds[1]), 0);
}

static void writer_bad_fd(void **state)
{
        struct vl_writer w;

        (void)state;
        vl_writer_init(&w, 64);
        assert_int_equal(vl_writer_queue(&w, STR_AND_LEN("x")), 0);
        assert_int_equal(vl_writer_flush(&w, -1), -EBADF);
        assert_int_equal(vl_writer_pending(&w), 2);
        vl_writer_done(&w);
        assert_int_equal(vl_writer_pending(&w), 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(reader_split_message),
            cmocka_unit_test(reader_many_messages_in_one_feed),
            cmocka_unit_test(reader_many_messages_in_one_read),
            cmocka_unit_test(reader_message_split_across_reads),
            cmocka_unit_test(reader_message_of_max_size),
            cmocka_unit_test(reader_oversize_without_nul),
            cmocka_unit_test(reader_oversize_with_nul),
            cmocka_unit_test(reader_oversize_after_good_message),
            cmocka_unit_test(reader_fill_oversize),
            cmocka_unit_test(reader_full_of_whole_messages),
            cmocka_unit_test(reader_fill_full_of_whole_messages),
            cmocka_unit_test(reader_fill_grows_for_bulk),
            cmocka_unit_test(reader_fill_growth_bounded),
            cmocka_unit_test(reader_fill_leaves_held_messages_in_place),
            cmocka_unit_test(reader_fill_errors),
            cmocka_unit_test(reader_reusable_after_done),
            cmocka_unit_test(writer_queue_and_flush),
            cmocka_unit_test(writer_bound),
            cmocka_unit_test(writer_append_in_place),
            cmocka_unit_test(writer_lent_is_exclusive),
            cmocka_unit_test(writer_hold),
            cmocka_unit_test(writer_partial_writes),
            cmocka_unit_test(writer_closed_peer_socket),
            cmocka_unit_test(writer_pipe),
            cmocka_unit_test(writer_bad_fd),
            cmocka_unit_test(reader_fill_from_source),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
