/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Varlink spoken by hand on a raw connection (harness_raw_connect), for tests that send what
 * libtimerd never would. Failures are cmocka assertions.
 */

#include <json-c/json.h>
#include <stdint.h>

#define WIRE_TIMEOUT_MS 5000
#define STATUS_CALL     "{\"method\":\"io.timerd.Service.Status\"}"

/* Send a printf-formatted message (its NUL is added). */
void wire_send(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The next reply, parsed (json_object_put it). */
json_object *wire_recv(int fd);
/* Send and receive. */
json_object *wire_call(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The reply's error name, or NULL for a success. */
const char *wire_error(json_object *reply);
/* A field of the reply's parameters by dotted path ("claim.generation"): a number (-1 when
 * absent) or a string (NULL). */
int64_t wire_int(json_object *reply, const char *path);
const char *wire_string(json_object *reply, const char *path);

/* A number of Status (wire_int()'s path). */
int64_t wire_status(int fd, const char *field);
/* Wait (up to 5 s) until Status says `field` is `value`. */
void wire_expect_status(int fd, const char *field, int64_t value);

/* Expect the connection to be closed by the service within the timeout (no more replies). */
void wire_expect_eof(int fd);

/*
 * Register n timers "<prefix>00000"… on fd, pipelined: every call is sent before the replies are
 * read, each must succeed. `declaration` is the JSON of the declaration; `owner` the uid they are
 * for (WIRE_OWNER_SELF: the caller's). With spread_usec > 0 their first deadlines are spread
 * evenly over that span from now.
 */
#define WIRE_OWNER_SELF UINT32_MAX
void wire_bulk_register(int fd, const char *prefix, unsigned n, const char *declaration,
                        uint32_t owner, uint64_t spread_usec);

/* Read n replies, each a success, and drop them (however large). */
void wire_skip_replies(int fd, unsigned n);

/* Read and drop until the service closes the connection; returns the bytes read. */
size_t wire_drain_to_eof(int fd, int timeout_ms);
