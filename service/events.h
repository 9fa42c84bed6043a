/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * io.timerd.Service.Subscribe: a stream of registry events to the connections that asked for one.
 * Publishing costs one counter check while nobody subscribes.
 */

#include <stdint.h>

#include <json-c/json.h>

#include "service/connection.h"

struct service;
struct peer;
struct vl_view;
struct td_transition;

enum event_kind {
        EVENT_REGISTERED,
        EVENT_RECONCILED,
        EVENT_SCHEDULED,
        EVENT_RESCHEDULED,
        EVENT_CANCELLED,
        EVENT_KICKED,
        EVENT_UNREGISTERED,
        EVENT_FIRED,
        EVENT_COMPLETED,
        EVENT_REMOVED,
        EVENT_KIND_MAX,
};

/* Answer p's Subscribe call: it becomes a stream (ExpectedMore without `more`). */
struct reply events_subscribe(struct service *s, struct peer *p, const struct vl_view *params);

/* Tell the subscribers who may see owner's timers. run 0: not about a run. */
void events_publish(struct service *s, enum event_kind kind, uint32_t owner, const char *name,
                    uint64_t run);

/* The transient timers of closed connections a transition removed, as `removed` events stamped
 * with the close: a connection's in the order they were registered, a reap step at a time
 * (registry_reap_step()). */
void events_removals(struct service *s, const struct td_transition *t);

/* Teardown: end every stream with ShuttingDown. */
void events_shutdown(struct service *s);
