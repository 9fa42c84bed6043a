/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>

#include "output.h"
#include "timerd/timerd-test.h"
#include "timestamp.h"
#include "verbs.h"

/* The clocks of a virtual-clock instance, moved and read through libtimerd's test helpers. */

static int print_clocks(const struct timerd_test_clocks *now, const uint64_t *firings,
                        const struct options *o)
{
        char utc[ZONED_TIME_MAX];

        if (o->json != JSON_OFF) {
                json_object *obj = json_object_new_object();
                if (!obj)
                        return EXIT_STATUS_FAILURE;
                if (firings)
                        json_object_object_add(obj, "firings",
                                               json_object_new_int64((int64_t)*firings));
                json_object_object_add(obj, "monotonic",
                                       json_object_new_int64((int64_t)now->monotonic));
                json_object_object_add(obj, "boottime",
                                       json_object_new_int64((int64_t)now->boottime));
                json_object_object_add(obj, "realtime",
                                       json_object_new_int64((int64_t)now->realtime));
                return json_print(obj, o->json);
        }
        if (firings)
                printf("Firings: %llu\n", (unsigned long long)*firings);
        printf("Monotonic: %llu\n", (unsigned long long)now->monotonic);
        printf(" Boottime: %llu\n", (unsigned long long)now->boottime);
        printf(" Realtime: %llu (%s)\n", (unsigned long long)now->realtime,
               timestamp_format_zoned(utc, NULL, true, (int64_t)now->realtime));
        return EXIT_STATUS_SUCCESS;
}

static int clock_call_failed(struct timerd *t, const char *verb, int r)
{
        if (r == -TIMERD_E_INTERFACE_NOT_FOUND)
                fprintf(stderr,
                        "timerctl: %s: the service runs on the real clock; only a "
                        "virtual-clock instance (timerd --clock virtual) moves its "
                        "clocks\n",
                        verb);
        return call_failed(t, verb, NULL, r);
}

int verb_advance(struct timerd *t, const struct options *o)
{
        struct timerd_test_clocks now;
        uint64_t firings;
        int r = timerd_test_advance(t, o->advance_usec, &firings);

        if (r >= 0)
                r = timerd_test_now(t, &now);
        if (r < 0)
                return clock_call_failed(t, "advance", r);
        return print_clocks(&now, &firings, o);
}

int verb_now(struct timerd *t, const struct options *o)
{
        struct timerd_test_clocks now;
        int r = timerd_test_now(t, &now);

        if (r < 0)
                return clock_call_failed(t, "now", r);
        return print_clocks(&now, NULL, o);
}
