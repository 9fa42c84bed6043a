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

/* What a schedule is looked up by: what td_calendar_equal() compares, with the zone entry itself
 * (one that follows the local zone is not one that names it). */
struct calendar_key {
        const char *source;
        const struct td_zone *zone;
        bool fixed_random_delay;
};

static uint64_t calendar_key_hash(const struct calendar_key *k)
{
        return hash_string((uint64_t)(uintptr_t)k->zone ^ k->fixed_random_delay, k->source);
}

static uint64_t calendar_hash_of(const void *entry)
{
        const struct td_calendar *c = entry;

        return calendar_key_hash(&(struct calendar_key){c->source, c->zone, c->fixed_random_delay});
}

static bool schedule_matches(const void *entry, const void *key)
{
        const struct td_calendar *c = entry;
        const struct calendar_key *k = key;

        return c->zone == k->zone && c->fixed_random_delay == k->fixed_random_delay &&
               strcmp(c->source, k->source) == 0;
}

void td_calendar_set_init(struct td_calendar_set *set)
{
        hashmap_init(&set->schedules, calendar_hash_of);
}

void td_calendar_set_done(struct td_calendar_set *set)
{
        hashmap_done(&set->schedules);
}

size_t td_calendar_set_size(const struct td_calendar_set *set)
{
        return set->schedules.n_entries;
}

static int calendar_parse_new(const char *source, const struct td_zone *zone,
                              bool fixed_random_delay, struct td_calendar **ret,
                              struct td_calendar_error *ret_error)
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

int td_calendar_new(struct td_calendar_set *set, const char *source, const struct td_zone *zone,
                    bool fixed_random_delay, const struct td_calendar **ret,
                    struct td_calendar_error *ret_error)
{
        struct calendar_key key = {source, zone, fixed_random_delay};
        uint64_t hash = calendar_key_hash(&key);
        struct td_calendar *c;
        int r;

        *ret_error = (struct td_calendar_error){};
        c = set ? hashmap_find(&set->schedules, hash, schedule_matches, &key) : NULL;
        if (c) {
                *ret = td_calendar_ref(c);
                return 0;
        }
        r = calendar_parse_new(source, zone, fixed_random_delay, &c, ret_error);
        if (r < 0)
                return r;
        if (set) {
                if (hashmap_reserve(&set->schedules, set->schedules.n_entries + 1) < 0) {
                        free(c);
                        return -ENOMEM;
                }
                hashmap_insert(&set->schedules, hash, c);
                c->set = set;
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

        if (!m || --m->refs > 0)
                return;
        if (m->set)
                hashmap_remove(&m->set->schedules, calendar_hash_of(m), m);
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
