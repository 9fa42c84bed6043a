/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "fake-server.h"

/* Generous: only a broken client makes the server wait this long. */
#define FAKE_TIMEOUT_MSEC 5000
#define FAKE_MAX_STEPS    64

struct fake_server {
        char directory[64];
        char run[80];
        char path[96];
        int listen_fd;
        pthread_t thread;
        bool joined;
        const struct fake_step *steps;
        size_t n_steps;
        size_t steps_done;
        char *calls[FAKE_MAX_STEPS];
        char failure[256]; /* set by the thread; checked in the test's thread */
        char *input;       /* bytes read past the last call */
        size_t input_len;
};

static void server_failed(struct fake_server *s, const char *format, ...)
{
        va_list ap;

        va_start(ap, format);
        vsnprintf(s->failure, sizeof(s->failure), format, ap);
        va_end(ap);
}

static bool wait_fd(int fd, short events)
{
        struct pollfd p = {.fd = fd, .events = events};

        return poll(&p, 1, FAKE_TIMEOUT_MSEC) == 1;
}

/* One NUL-terminated message, or NULL at the end of the stream or on timeout. */
static char *read_call(struct fake_server *s, int fd)
{
        char chunk[65536];

        for (;;) {
                char *nul = s->input ? memchr(s->input, 0, s->input_len) : NULL;
                char *grown;
                ssize_t n;

                if (nul) {
                        size_t len = (size_t)(nul - s->input) + 1;
                        char *call = strdup(s->input);

                        memmove(s->input, s->input + len, s->input_len - len);
                        s->input_len -= len;
                        return call;
                }
                if (!wait_fd(fd, POLLIN))
                        return NULL;
                n = read(fd, chunk, sizeof(chunk));
                if (n <= 0)
                        return NULL;
                grown = realloc(s->input, s->input_len + (size_t)n);
                if (!grown)
                        return NULL;
                s->input = grown;
                memcpy(s->input + s->input_len, chunk, (size_t)n);
                s->input_len += (size_t)n;
        }
}

static bool send_all(int fd, const char *data, size_t len)
{
        while (len > 0) {
                ssize_t n;

                if (!wait_fd(fd, POLLOUT))
                        return false;
                n = send(fd, data, len, MSG_NOSIGNAL);
                if (n < 0)
                        return false;
                data += n;
                len -= (size_t)n;
        }
        return true;
}

static bool flood(int fd, size_t size)
{
        char chunk[65536];

        memset(chunk, 'x', sizeof(chunk));
        while (size > 0) {
                size_t n = size < sizeof(chunk) ? size : sizeof(chunk);

                if (!send_all(fd, chunk, n))
                        return false;
                size -= n;
        }
        return true;
}

/* True once the client has closed its end, within the timeout. */
static bool await_hang_up(int fd)
{
        char chunk[4096];

        for (;;) {
                ssize_t n;

                if (!wait_fd(fd, POLLIN))
                        return false;
                n = read(fd, chunk, sizeof(chunk));
                if (n <= 0)
                        return n == 0 || errno == ECONNRESET;
        }
}

static void *serve(void *userdata)
{
        struct fake_server *s = userdata;
        int fd = -1;

        if (!wait_fd(s->listen_fd, POLLIN) || (fd = accept(s->listen_fd, NULL, NULL)) < 0) {
                server_failed(s, "no client connected");
                return NULL;
        }
        for (; s->steps_done < s->n_steps; s->steps_done++) {
                const struct fake_step *step = &s->steps[s->steps_done];

                switch (step->kind) {
                case FAKE_EXPECT_CALL:
                case FAKE_EXPECT_TEXT:
                        s->calls[s->steps_done] = read_call(s, fd);
                        if (!s->calls[s->steps_done]) {
                                server_failed(s, "step %zu: no call came", s->steps_done);
                                goto out;
                        }
                        break;
                case FAKE_SEND:
                        if (!send_all(fd, step->text,
                                      step->size > 0 ? step->size : strlen(step->text) + 1)) {
                                server_failed(s, "step %zu: cannot send: %s", s->steps_done,
                                              strerror(errno));
                                goto out;
                        }
                        break;
                case FAKE_FLOOD:
                        /* The client is expected to hang up before taking it all. */
                        (void)flood(fd, step->size);
                        break;
                case FAKE_HANG_UP:
                        close(fd);
                        fd = -1;
                        break;
                case FAKE_AWAIT_HANG_UP:
                        if (!await_hang_up(fd)) {
                                server_failed(s, "step %zu: the client did not hang up",
                                              s->steps_done);
                                goto out;
                        }
                        break;
                }
        }
out:
        if (fd >= 0)
                close(fd);
        return NULL;
}

struct fake_server *fake_server_start(const struct fake_step *steps, size_t n_steps)
{
        struct fake_server *s = calloc(1, sizeof(*s));
        struct sockaddr_un address = {.sun_family = AF_UNIX};

        assert_non_null(s);
        assert_true(n_steps <= FAKE_MAX_STEPS);
        s->steps = steps;
        s->n_steps = n_steps;

        strcpy(s->directory, "/tmp/timerd-client-test-XXXXXX");
        assert_non_null(mkdtemp(s->directory));
        snprintf(s->run, sizeof(s->run), "%s/run", s->directory);
        assert_int_equal(mkdir(s->run, 0700), 0);
        snprintf(s->path, sizeof(s->path), "%s/io.timerd", s->run);

        s->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        assert_true(s->listen_fd >= 0);
        strcpy(address.sun_path, s->path);
        assert_int_equal(bind(s->listen_fd, (struct sockaddr *)&address, sizeof(address)), 0);
        assert_int_equal(listen(s->listen_fd, 1), 0);
        assert_int_equal(pthread_create(&s->thread, NULL, serve, s), 0);
        return s;
}

const char *fake_server_path(const struct fake_server *s)
{
        return s->path;
}

const char *fake_server_directory(const struct fake_server *s)
{
        return s->directory;
}

void fake_server_join(struct fake_server *s)
{
        if (s->joined)
                return;
        assert_int_equal(pthread_join(s->thread, NULL), 0);
        s->joined = true;
}

static void check_call(const struct fake_server *s, size_t i)
{
        json_object *expected, *actual;
        bool equal;

        if (!s->steps[i].text)
                return;
        if (s->steps[i].kind == FAKE_EXPECT_TEXT) {
                if (strcmp(s->calls[i], s->steps[i].text) != 0)
                        fail_msg("step %zu: call\n  %s\nexpected exactly\n  %s", i, s->calls[i],
                                 s->steps[i].text);
                return;
        }
        expected = json_tokener_parse(s->steps[i].text);
        actual = json_tokener_parse(s->calls[i]);
        if (!expected)
                fail_msg("step %zu: the script's JSON does not parse: %s", i, s->steps[i].text);
        equal = json_object_equal(expected, actual);
        json_object_put(expected);
        json_object_put(actual);
        if (!equal)
                fail_msg("step %zu: call\n  %s\nexpected\n  %s", i, s->calls[i], s->steps[i].text);
}

void fake_server_finish(struct fake_server *s)
{
        fake_server_join(s);
        if (s->failure[0] != 0)
                fail_msg("fake server: %s", s->failure);
        for (size_t i = 0; i < s->n_steps; i++)
                if (s->steps[i].kind == FAKE_EXPECT_CALL || s->steps[i].kind == FAKE_EXPECT_TEXT)
                        check_call(s, i);

        for (size_t i = 0; i < s->n_steps; i++)
                free(s->calls[i]);
        free(s->input);
        close(s->listen_fd);
        unlink(s->path);
        rmdir(s->run);
        rmdir(s->directory);
        free(s);
}

char *fake_padded_parameters(size_t size)
{
        char *text;

        assert_true(size >= 10);
        text = malloc(size + 1);
        assert_non_null(text);
        memset(text, 'a', size);
        memcpy(text, "{\"pad\":\"", 8);
        memcpy(text + size - 2, "\"}", 2);
        text[size] = 0;
        return text;
}
