/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>

#include "print.h"
#include "verbs.h"

static json_object *event_json(const struct timerd_event *e)
{
        json_object *event = json_object_new_object(), *reply;

        if (!event ||
            json_object_object_add(
                event, "kind", json_object_new_string(timerd_event_kind_to_string(e->kind))) < 0 ||
            json_object_object_add(event, "owner", json_object_new_uint64(e->owner)) < 0 ||
            json_object_object_add(event, "name", json_object_new_string(e->name)) < 0 ||
            (e->has_run &&
             json_object_object_add(event, "run", json_object_new_uint64(e->run)) < 0) ||
            (e->has_state &&
             json_object_object_add(
                 event, "state", json_object_new_string(timerd_state_to_string(e->state))) < 0) ||
            json_object_object_add(event, "realtime_usec",
                                   json_object_new_uint64(e->realtime_usec)) < 0) {
                json_object_put(event);
                return NULL;
        }
        reply = json_object_new_object();
        if (!reply || json_object_object_add(reply, "event", event) < 0) {
                json_object_put(reply);
                json_object_put(event);
                return NULL;
        }
        return reply;
}

int verb_monitor(struct timerd *t, const struct options *o)
{
        struct timerd_event event;
        int r;

        r = timerd_subscribe(t, o->all);
        if (r < 0)
                return call_failed(t, "monitor", NULL, r);
        for (uint64_t n = 0; o->count == 0 || n < o->count; n++) {
                r = timerd_subscribe_next(t, &event);
                if (r < 0)
                        return call_failed(t, "monitor", NULL, r);
                if (o->json != JSON_OFF) {
                        if (json_print(event_json(&event), o->json) < 0)
                                return call_failed(t, "monitor", NULL, -ENOMEM);
                } else
                        print_event(stdout, &event, o->all);
                /* One line as each event comes, also into a pipe. */
                if (fflush(stdout) != 0)
                        return call_failed(t, "monitor", NULL, -errno);
        }
        return EXIT_STATUS_SUCCESS;
}
