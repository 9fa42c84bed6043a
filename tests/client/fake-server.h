/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A scripted stand-in for timerd: it listens on <tmpdir>/run/io.timerd, accepts one connection and
 * plays a script of steps on it in a thread of its own — read a call, send a reply, flood, hang
 * up. The calls it read are checked against the script in the test's thread, where cmocka may
 * fail.
 */

#include <stddef.h>

enum fake_step_kind {
        FAKE_EXPECT_CALL,   /* read one call; text: the JSON it must equal, NULL for any */
        FAKE_SEND,          /* send text and its NUL, or exactly `size` bytes of it when size > 0 */
        FAKE_FLOOD,         /* send `size` bytes without a NUL: a reply too long to take */
        FAKE_HANG_UP,       /* close the connection */
        FAKE_AWAIT_HANG_UP, /* wait for the client to close its end (what it sends is dropped) */
        FAKE_EXPECT_TEXT,   /* read one call; text: the bytes it must be, exactly */
};

struct fake_step {
        enum fake_step_kind kind;
        const char *text;
        size_t size;
};

#define FAKE_CALL(json)                                                                            \
        {                                                                                          \
                FAKE_EXPECT_CALL, (json), 0                                                        \
        }
#define FAKE_CALL_TEXT(text)                                                                       \
        {                                                                                          \
                FAKE_EXPECT_TEXT, (text), 0                                                        \
        }
#define FAKE_ANY_CALL                                                                              \
        {                                                                                          \
                FAKE_EXPECT_CALL, NULL, 0                                                          \
        }
#define FAKE_REPLY(json)                                                                           \
        {                                                                                          \
                FAKE_SEND, (json), 0                                                               \
        }
#define FAKE_CLOSE                                                                                 \
        {                                                                                          \
                FAKE_HANG_UP, NULL, 0                                                              \
        }
#define FAKE_FLOOD_OF(n)                                                                           \
        {                                                                                          \
                FAKE_FLOOD, NULL, (n)                                                              \
        }
#define FAKE_EXPECT_CLOSE                                                                          \
        {                                                                                          \
                FAKE_AWAIT_HANG_UP, NULL, 0                                                        \
        }
/* Exactly the bytes of a string literal, without its final NUL: part of a message, or several
 * messages with their NULs written out, sent at once. */
#define FAKE_RAW(literal)                                                                          \
        {                                                                                          \
                FAKE_SEND, (literal), sizeof(literal) - 1                                          \
        }

struct fake_server;

/* Listen and start the script; the steps must outlive the server. Fails the test on error. */
struct fake_server *fake_server_start(const struct fake_step *steps, size_t n_steps);

/* The socket's path, and the directory that holds run/io.timerd. */
const char *fake_server_path(const struct fake_server *s);
const char *fake_server_directory(const struct fake_server *s);

/* Wait for the script to end (the server hangs up at its end). */
void fake_server_join(struct fake_server *s);

/* Join, check every step ran and every call matched, and remove the socket. */
void fake_server_finish(struct fake_server *s);

/* {"pad":"aaa…"}, `size` (at least 10) bytes long and malloc'd: parameters of a large call. */
char *fake_padded_parameters(size_t size);
