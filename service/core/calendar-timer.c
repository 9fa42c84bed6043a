/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "service/core/calendar-timer.h"

static size_t source_lines(const char *source)
{
        size_t n = 1;

        for (const char *p = source; *p; p++)
                n += *p == '\n';
        return n;
}

int td_calendar_new(const char *source, const struct td_zone *zone, bool fixed_random_delay,
                    struct td_calendar **ret, struct td_calendar_error *ret_error)
{
        size_t len = strnlen(source, TD_CALENDAR_SOURCE_MAX + 1), n = source_lines(source);
        char line[TD_CALENDAR_SOURCE_MAX + 1];
        struct td_calendar *c;
        const char *p = source;

        *ret_error = (struct td_calendar_error){};
        if (len == 0 || len > TD_CALENDAR_SOURCE_MAX)
                return -E2BIG;
        c = calloc(1, sizeof(*c) + n * sizeof(c->specs[0]));
        if (!c)
                return -ENOMEM;
        c->refs = 1;
        c->zone = zone;
        c->fixed_random_delay = fixed_random_delay;
        memcpy(c->source, source, len + 1);
        c->n_specs = n;
        for (size_t i = 0; i < n; i++) {
                size_t l = strcspn(p, "\n");
                bool cron =
                    strncmp(p, TD_CALENDAR_CRON_PREFIX, strlen(TD_CALENDAR_CRON_PREFIX)) == 0;
                const char *text = line + (cron ? strlen(TD_CALENDAR_CRON_PREFIX) : 0);
                int e;

                memcpy(line, p, l);
                line[l] = 0;
                e = cron ? calendar_parse_cron(text, &c->specs[i], &ret_error->error)
                         : calendar_parse(text, &c->specs[i], &ret_error->error);
                /* An expression that names a zone of its own is read in it only when that is the
                 * timer's: the core is handed one zone. */
                if (e >= 0 && c->specs[i].zone[0] && strcmp(c->specs[i].zone, zone->name) != 0) {
                        ret_error->error = (struct calendar_error){
                            .code = CALENDAR_E_ZONE,
                            .offset = (size_t)(strstr(text, c->specs[i].zone) - text)};
                        e = -EINVAL;
                }
                if (e < 0) {
                        ret_error->line = i;
                        free(c);
                        return -EINVAL;
                }
                p += l + (p[l] == '\n');
        }
        *ret = c;
        return 0;
}

const struct td_calendar *td_calendar_ref(const struct td_calendar *c)
{
        if (c)
                ((struct td_calendar *)c)->refs++;
        return c;
}

void td_calendar_unref(const struct td_calendar *c)
{
        struct td_calendar *m = (struct td_calendar *)c;

        if (m && --m->refs == 0)
                free(m);
}

bool td_calendar_equal(const struct td_calendar *a, const struct td_calendar *b)
{
        if (!a || !b)
                return a == b;
        /* By the zone's name: "the local zone" and the zone it is now read the same. */
        return strcmp(a->zone->name, b->zone->name) == 0 &&
               a->fixed_random_delay == b->fixed_random_delay && strcmp(a->source, b->source) == 0;
}

int td_calendar_next(const struct td_calendar *c, uint64_t after_usec, uint64_t *ret_usec)
{
        int64_t best = INT64_MAX, next;
        int e = -ENOENT;

        if (after_usec > INT64_MAX)
                return -ERANGE;
        for (size_t i = 0; i < c->n_specs; i++) {
                int k = calendar_next(&c->specs[i], c->zone->tz, (int64_t)after_usec, &next);

                if (k == -ERANGE)
                        return k;
                if (k >= 0 && next < best) {
                        best = next;
                        e = 0;
                }
        }
        /* Before the epoch is never after a realtime instant that is not. */
        if (e >= 0)
                *ret_usec = (uint64_t)best;
        return e;
}
