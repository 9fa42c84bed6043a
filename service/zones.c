/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "service/zones.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "calendar/tzif.h"
#include "base/list.h"
#include "zoneinfo/zoneinfo.h"

struct zone_entry {
        struct list_node node;
        struct td_zone zone;
};

struct zones {
        struct list_node named; /* struct zone_entry */
        struct td_zone local;
        struct td_calendar_set calendars;
};

/* The local zone's name and data; UTC when its file cannot be read. */
static void local_load(struct td_zone *ret)
{
        struct tz_zone *tz = NULL;

        zoneinfo_local_name(ret->name);
        if (zoneinfo_load(ret->name, &tz, NULL) < 0)
                strcpy(ret->name, "UTC");
        ret->tz = tz;
}

int zones_new(struct zones **ret)
{
        struct zones *z = calloc(1, sizeof(*z));

        if (!z)
                return -ENOMEM;
        list_init(&z->named);
        local_load(&z->local);
        td_calendar_set_init(&z->calendars);
        *ret = z;
        return 0;
}

void zones_free(struct zones *z)
{
        if (!z)
                return;
        td_calendar_set_done(&z->calendars);
        while (!list_empty(&z->named)) {
                struct zone_entry *e = list_entry(z->named.next, struct zone_entry, node);

                list_remove(&e->node);
                tz_zone_free(e->zone.tz);
                free(e);
        }
        tz_zone_free(z->local.tz);
        free(z);
}

int zones_get(struct zones *z, const char *name, const struct td_zone **ret)
{
        struct zone_entry *e;
        struct tz_zone *tz;
        int r;

        if (!name) {
                *ret = &z->local;
                return 0;
        }
        for (struct list_node *n = z->named.next; n != &z->named; n = n->next) {
                e = list_entry(n, struct zone_entry, node);
                if (strcmp(e->zone.name, name) == 0) {
                        *ret = &e->zone;
                        return 0;
                }
        }
        /* "" is UTC to zoneinfo_load(); a timer names UTC as "UTC". */
        if (!name[0])
                return -EINVAL;
        r = zoneinfo_load(name, &tz, NULL);
        if (r < 0)
                return r;
        e = calloc(1, sizeof(*e));
        if (!e) {
                tz_zone_free(tz);
                return -ENOMEM;
        }
        strcpy(e->zone.name, name);
        e->zone.tz = tz;
        list_append(&z->named, &e->node);
        *ret = &e->zone;
        return 0;
}

void zones_reload(struct zones *z)
{
        struct td_zone local;

        for (struct list_node *n = z->named.next; n != &z->named; n = n->next) {
                struct zone_entry *e = list_entry(n, struct zone_entry, node);
                struct tz_zone *tz;

                if (strcmp(e->zone.name, "UTC") == 0 || zoneinfo_load(e->zone.name, &tz, NULL) < 0)
                        continue;
                tz_zone_free(e->zone.tz);
                e->zone.tz = tz;
        }
        local_load(&local);
        tz_zone_free(z->local.tz);
        z->local = local;
}

struct td_calendar_set *zones_calendars(struct zones *z)
{
        return &z->calendars;
}

bool zones_is_local(const struct zones *z, const struct td_zone *zone)
{
        return zone == &z->local;
}
