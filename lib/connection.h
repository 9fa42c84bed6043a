/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * One connection to the service and the exchange of varlink messages on it: a call goes out, its
 * reply (or the next reply of an open stream) comes back decoded. The methods are in the other
 * files of lib/; they see struct timerd only through these functions.
 */

#include <json-c/json.h>
#include <stdbool.h>

#include "timerd/timerd.h"
#include "varlink/message.h"

/* List answers every timer in one reply, so replies may be large; requests never are. */
#define CONNECTION_REPLY_MAX   (16U * 1024U * 1024U)
#define CONNECTION_REQUEST_MAX (16U * 1024U * 1024U)

/*
 * One call with one reply. Takes `parameters` (NULL for {}). Returns 0 with the success reply in
 * *ret (release it with vl_reply_done), or -TIMERD_E_* for a varlink error (then *ret holds the
 * error reply, its parameters readable), or another negative error with *ret empty. -EBUSY while a
 * stream is open.
 */
int connection_call(struct timerd *t, const char *method, json_object *parameters,
                    struct vl_reply *ret);

/* Start a `more` call; its replies are read with connection_next_in_stream(). */
int connection_open_stream(struct timerd *t, const char *method, json_object *parameters);

/* The next reply of the open stream, as connection_call() returns it. -EINVAL when none is open. */
int connection_next_in_stream(struct timerd *t, struct vl_reply *ret);
