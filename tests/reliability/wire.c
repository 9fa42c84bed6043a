/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "wire.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"

static void wire_vsend(int fd, const char *fmt, va_list ap)
{
        char *msg;
        int n = vasprintf(&msg, fmt, ap);
        assert_true(n >= 0);
        raw_send(fd, msg, (size_t)n + 1);
        free(msg);
}

void wire_send(int fd, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        wire_vsend(fd, fmt, ap);
        va_end(ap);
}

json_object *wire_recv(int fd)
{
        static char buf[1 << 20]; /* one reply; tests are single-threaded */
        long n = raw_recv_reply(fd, buf, sizeof(buf), WIRE_TIMEOUT_MS);
        if (n < 0)
                fail_msg("no reply (%s)", n == -1 ? "connection closed" : "timeout");
        json_object *o = json_tokener_parse(buf);
        assert_non_null(o);
        return o;
}

json_object *wire_call(int fd, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        wire_vsend(fd, fmt, ap);
        va_end(ap);
        return wire_recv(fd);
}

const char *wire_error(json_object *reply)
{
        json_object *e;
        return json_object_object_get_ex(reply, "error", &e) ? json_object_get_string(e) : NULL;
}

static json_object *field_of(json_object *reply, const char *path)
{
        char copy[256];
        json_object *o;

        if (!json_object_object_get_ex(reply, "parameters", &o))
                return NULL;
        snprintf(copy, sizeof(copy), "%s", path);
        for (char *save = NULL, *part = strtok_r(copy, ".", &save); part;
             part = strtok_r(NULL, ".", &save))
                if (!json_object_object_get_ex(o, part, &o))
                        return NULL;
        return o;
}

int64_t wire_int(json_object *reply, const char *path)
{
        json_object *v = field_of(reply, path);
        return v ? json_object_get_int64(v) : -1;
}

const char *wire_string(json_object *reply, const char *path)
{
        json_object *v = field_of(reply, path);
        return v ? json_object_get_string(v) : NULL;
}

int64_t wire_status(int fd, const char *field)
{
        json_object *st = wire_call(fd, STATUS_CALL);
        int64_t v = wire_int(st, field);
        json_object_put(st);
        return v;
}

void wire_expect_status(int fd, const char *field, int64_t value)
{
        int64_t v = -1;
        for (int i = 0; i < 500 && (v = wire_status(fd, field)) != value; i++)
                usleep(10000);
        if (v != value)
                fail_msg("Status %s is %" PRId64 ", expected %" PRId64, field, v, value);
}

void wire_expect_eof(int fd)
{
        char buf[4096];
        long n = raw_recv_reply(fd, buf, sizeof(buf), WIRE_TIMEOUT_MS);
        if (n != -1)
                fail_msg("expected the service to close the connection, got %s",
                         n == -2 ? "nothing (timeout)" : buf);
}

void wire_bulk_register(int fd, const char *prefix, unsigned n, const char *declaration,
                        uint32_t owner, uint64_t spread_usec)
{
        char *calls = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&calls, &size);
        assert_non_null(f);
        for (unsigned i = 0; i < n; i++) {
                fprintf(f,
                        "{\"method\":\"io.timerd.Timer.Register\",\"parameters\":{\"name\":"
                        "\"%s%05u\",\"declaration\":%s",
                        prefix, i, declaration);
                if (owner != WIRE_OWNER_SELF)
                        fprintf(f, ",\"owner\":%" PRIu32, owner);
                if (spread_usec > 0)
                        fprintf(f, ",\"delay_usec\":%" PRIu64, spread_usec * i / n);
                fputs("}}", f);
                fputc('\0', f);
        }
        assert_int_equal(fclose(f), 0);
        raw_send(fd, calls, size);
        free(calls);

        wire_skip_replies(fd, n);
}

void wire_skip_replies(int fd, unsigned n)
{
        char buf[65536];
        unsigned replies = 0;

        while (replies < n) {
                struct pollfd pfd = {.fd = fd, .events = POLLIN};
                assert_int_equal(poll(&pfd, 1, WIRE_TIMEOUT_MS), 1);
                ssize_t got = recv(fd, buf, sizeof(buf) - 1, 0);
                assert_true(got > 0);
                buf[got] = '\0';
                for (ssize_t i = 0; i < got; i++)
                        if (buf[i] == '\0')
                                replies++;
                /* The key of an error reply; no success reply has it. */
                if (memmem(buf, (size_t)got, "\"error\"", 7))
                        fail_msg("an error reply: %s", strstr(buf, "error"));
        }
}

size_t wire_drain_to_eof(int fd, int timeout_ms)
{
        char buf[65536];
        size_t total = 0;
        for (;;) {
                struct pollfd pfd = {.fd = fd, .events = POLLIN};
                if (poll(&pfd, 1, timeout_ms) != 1)
                        fail_msg("the service did not close the connection");
                ssize_t n = recv(fd, buf, sizeof(buf), 0);
                if (n == 0 || (n < 0 && errno == ECONNRESET))
                        return total;
                assert_true(n > 0);
                total += (size_t)n;
        }
}
