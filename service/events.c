/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "service/events.h"

#include <errno.h>

#include "service/io/clock.h"
#include "service/io/peer.h"
#include "service/service.h"
#include "varlink/names.h"

static const char *const kind_names[EVENT_KIND_MAX] = {
    [EVENT_REGISTERED] = "registered",     [EVENT_RECONCILED] = "reconciled",
    [EVENT_SCHEDULED] = "scheduled",       [EVENT_RESCHEDULED] = "rescheduled",
    [EVENT_CANCELLED] = "cancelled",       [EVENT_KICKED] = "kicked",
    [EVENT_UNREGISTERED] = "unregistered", [EVENT_FIRED] = "fired",
    [EVENT_COMPLETED] = "completed",       [EVENT_REMOVED] = "removed",
};

struct reply events_subscribe(struct service *s, struct peer *p, const struct vl_view *params)
{
        bool all = false;

        if (!p->call_more)
                return reply_error(TIMERD_E_EXPECTED_MORE, NULL);
        if (vl_view_get_bool(params, VL_IDL_FIELD_ALL, &all) == -EINVAL) {
                json_object *e = json_object_new_object();
                vl_add_string(e, "parameter", "all");
                return reply_error(TIMERD_E_INVALID_PARAMETER, e);
        }
        if (all && !p->privileged)
                return reply_error(TIMERD_E_PERMISSION_DENIED, NULL);
        p->subscriber = true;
        p->subscribe_all = all;
        s->peers.n_subscribers++;
        /* The stream's parts are the events. */
        return (struct reply){.kind = REPLY_NONE};
}

/* Room for any event: a name of at most 128 bytes (nothing in it to escape), the rest under 300. */
#define EVENT_TEXT_ROOM 512

static void event_write(struct vl_text *o, enum event_kind kind, uint32_t owner, const char *name,
                        uint64_t run, const struct td_snapshot *t, uint64_t realtime)
{
        vl_text_object_begin(o, "event");
        vl_text_add_string(o, "kind", kind_names[kind]);
        vl_text_add_u64(o, "owner", owner);
        vl_text_add_string(o, "name", name);
        if (run > 0)
                vl_text_add_u64(o, "run", run);
        if (t)
                vl_text_add_string(o, "state", vl_state_to_string(t->state));
        vl_text_add_u64(o, "realtime_usec", realtime);
        vl_text_object_end(o);
}

/* The event to every subscriber that sees owner's timers; t: the timer as it is now, if it is. */
static void publish(struct service *s, enum event_kind kind, uint32_t owner, const char *name,
                    uint64_t run, const struct td_snapshot *t, uint64_t realtime)
{
        struct list_node *n, *next;
        /* safe: a subscriber that cannot keep up is dropped */
        list_for_each_safe (n, next, &s->peers.live) {
                struct peer *p = list_entry(n, struct peer, node);
                if (!p->subscriber || (!p->subscribe_all && p->uid != owner))
                        continue;
                struct vl_text *o = service_reply_begin(s, p, true, EVENT_TEXT_ROOM);
                event_write(o, kind, owner, name, run, t, realtime);
                if (o->error == 0)
                        service_reply_end(s, p);
                else {
                        /* Out of memory: the stream ends, so that no event goes missing unsaid. */
                        service_reply_cancel(s, p);
                        service_unsubscribe(s, p);
                        service_error(s, p, TIMERD_E_BUSY, NULL);
                }
        }
}

void events_publish(struct service *s, enum event_kind kind, uint32_t owner, const char *name,
                    uint64_t run)
{
        struct td_snapshot t;
        uint64_t realtime = 0;

        if (s->peers.n_subscribers == 0)
                return;
        bool exists = kind != EVENT_REMOVED && kind != EVENT_UNREGISTERED &&
                      registry_get(s->registry, owner, name, &t) == 0;
        /* The service's time: a virtual instance's events carry its virtual wall clock. */
        struct td_now now;
        if (clock_source_now(&s->clock, &now) == 0)
                realtime = now.usec[TIMERD_CLOCK_REALTIME];
        publish(s, kind, owner, name, run, exists ? &t : NULL, realtime);
}

void events_removals(struct service *s, const struct td_transition *t)
{
        if (s->peers.n_subscribers == 0)
                return;
        for (size_t i = 0; i < t->n_removals; i++) {
                const struct td_removal *m = &t->removals[i];

                publish(s, EVENT_REMOVED, m->owner, m->name, 0, NULL, m->closed_usec);
        }
}

void events_shutdown(struct service *s)
{
        struct list_node *n, *next;
        list_for_each_safe (n, next, &s->peers.live) {
                struct peer *p = list_entry(n, struct peer, node);
                if (p->subscriber) {
                        service_unsubscribe(s, p);
                        service_error(s, p, TIMERD_E_SHUTTING_DOWN, NULL);
                }
        }
}
