/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "print.h"
#include "property.h"
#include "verbs.h"

/* --json: the reply's parameters as the service sent them. */
static int print_reply_json(struct timerd *t, const struct options *o, const char *name,
                            const char *method, json_object *parameters)
{
        const char *parameters_json = NULL;
        char *text;
        int r;

        if (parameters) {
                parameters_json = json_object_to_json_string(parameters);
                if (!parameters_json)
                        return call_failed(t, verb_name(o->verb), name, -ENOMEM);
        }
        r = timerd_call_raw(t, method, parameters_json, &text);
        if (r < 0) {
                free(text);
                return call_failed(t, verb_name(o->verb), name, r);
        }
        r = json_print(json_tokener_parse(text), o->json);
        free(text);
        return r < 0 ? call_failed(t, verb_name(o->verb), name, -TIMERD_E_PROTOCOL)
                     : EXIT_STATUS_SUCCESS;
}

/* { "KEY": VALUE } for a raw call's parameters; NULL when out of memory. */
static json_object *parameters_with(const char *key, json_object *value)
{
        json_object *parameters = json_object_new_object();

        if (!parameters || !value || json_object_object_add(parameters, key, value) < 0) {
                json_object_put(parameters);
                json_object_put(value);
                return NULL;
        }
        return parameters;
}

static int print_json_of(struct timerd *t, const struct options *o, const char *name,
                         const char *method, json_object *parameters)
{
        int r;

        if (!parameters)
                return call_failed(t, verb_name(o->verb), name, -ENOMEM);
        r = print_reply_json(t, o, name, method, parameters);
        json_object_put(parameters);
        return r;
}

/* Move the timers of a page (a JSON array's text) to the end of `timers`. */
static int take_page(const char *page, json_object *timers)
{
        json_object *array = json_tokener_parse(page);
        size_t n;
        int r = 0;

        if (!json_object_is_type(array, json_type_array)) {
                json_object_put(array);
                return -TIMERD_E_PROTOCOL;
        }
        n = json_object_array_length(array);
        for (size_t i = 0; r >= 0 && i < n; i++)
                if (json_object_array_add(timers,
                                          json_object_get(json_object_array_get_idx(array, i))) < 0)
                        r = -ENOMEM;
        json_object_put(array);
        return r;
}

/* --json: the timers of every page in one {"timers": [...]}, each as the service sent it. */
static int print_list_json(struct timerd *t, const struct options *o)
{
        struct timerd_list_cursor cursor = {0};
        json_object *timers = json_object_new_array(), *result;
        int r = timers ? 0 : -ENOMEM;

        while (r >= 0 && !cursor.done) {
                char *page;
                long n = timerd_list_page_json(t, TIMERD_OWNER_SELF, o->all, 0, &cursor, &page);

                r = n < 0 ? (int)n : take_page(page, timers);
                free(page);
        }
        if (r < 0) {
                json_object_put(timers);
                return call_failed(t, "list", NULL, r);
        }
        result = parameters_with("timers", timers);
        if (json_print(result, o->json) < 0)
                return call_failed(t, "list", NULL, -ENOMEM);
        return EXIT_STATUS_SUCCESS;
}

int verb_list(struct timerd *t, const struct options *o)
{
        const struct table_style style = {
            .legend = o->legend,
            .color = output_color(),
            .width = output_width(),
            .owners = o->all,
        };
        struct timerd_timer *timers;
        long n;
        int r = EXIT_STATUS_SUCCESS;

        if (o->json != JSON_OFF)
                return print_list_json(t, o);
        n = timerd_list(t, TIMERD_OWNER_SELF, o->all, &timers);
        if (n < 0)
                return call_failed(t, "list", NULL, (int)n);
        if (print_timer_table(stdout, timers, (size_t)n, &o->now, &style) < 0)
                r = call_failed(t, "list", NULL, -ENOMEM);
        free(timers);
        return r;
}

/* Each name of each -p, in order. */
static void print_properties(const struct timerd_timer *timer, const struct options *o)
{
        char name[64];

        for (size_t i = 0; i < o->n_properties; i++)
                for (const char *p = o->properties[i];; p++) {
                        size_t len = strcspn(p, ",");

                        /* Checked when parsed: every name fits and is known. */
                        memcpy(name, p, len);
                        name[len] = 0;
                        property_print(stdout, timer, name, o->value_only);
                        p += len;
                        if (*p == 0)
                                break;
                }
}

int verb_show(struct timerd *t, const struct options *o)
{
        const char *name = o->args[0];
        struct timerd_timer timer;
        int r;

        if (o->json != JSON_OFF)
                return print_json_of(t, o, name, TIMERD_INTERFACE_TIMER ".Get",
                                     parameters_with("name", json_object_new_string(name)));
        r = timerd_get(t, name, TIMERD_OWNER_SELF, &timer);
        if (r < 0)
                return call_failed(t, "show", name, r);
        if (o->n_properties > 0)
                print_properties(&timer, o);
        else
                print_timer(stdout, &timer, &o->now);
        return EXIT_STATUS_SUCCESS;
}

int verb_status(struct timerd *t, const struct options *o)
{
        struct timerd_status status;
        int r;

        if (o->json != JSON_OFF)
                return print_reply_json(t, o, NULL, TIMERD_INTERFACE_SERVICE ".Status", NULL);
        r = timerd_status(t, &status);
        if (r < 0)
                return call_failed(t, "status", NULL, r);
        print_status(stdout, &status);
        return EXIT_STATUS_SUCCESS;
}
