/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "service/zones.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "calendar/tzif.h"
#include "base/list.h"
#include "service/io/zonewatch.h"
#include "zoneinfo/zoneinfo.h"

struct zone_entry {
        struct list_node node;
        struct td_zone zone;
};

/* A watched directory of zone files: "" is the zone directory itself, else one below it. */
struct zone_dir {
        int wd;
        char dir[CALENDAR_ZONE_MAX];
};

struct zones {
        struct list_node named; /* struct zone_entry */
        struct td_zone local;
        struct td_calendar_set calendars;
        int watch_fd; /* -1: not watching */
        int config_wd;
        struct zone_dir *dirs;
        size_t n_dirs;
};

/* Watch the directory zone `name` is in (once). A directory that cannot be watched is left to
 * SIGHUP. */
static void watch_zone_dir(struct zones *z, const char *name)
{
        const char *slash = strrchr(name, '/');
        size_t length = slash ? (size_t)(slash - name) : 0;
        char path[PATH_MAX];
        struct zone_dir *dirs;
        int wd;

        if (z->watch_fd < 0 || strcmp(name, "UTC") == 0)
                return;
        for (size_t i = 0; i < z->n_dirs; i++)
                if (strlen(z->dirs[i].dir) == length && strncmp(z->dirs[i].dir, name, length) == 0)
                        return;
        snprintf(path, sizeof(path), "%s/%.*s", zoneinfo_dir(), (int)length, name);
        wd = zonewatch_add(z->watch_fd, path);
        dirs = wd < 0 ? NULL : realloc(z->dirs, (z->n_dirs + 1) * sizeof(*dirs));
        if (!dirs)
                return;
        z->dirs = dirs;
        dirs[z->n_dirs].wd = wd;
        snprintf(dirs[z->n_dirs].dir, sizeof(dirs[0].dir), "%.*s", (int)length, name);
        z->n_dirs++;
}

static void watch_start(struct zones *z)
{
        z->config_wd = -1;
        z->watch_fd = zonewatch_open();
        if (z->watch_fd < 0)
                return;
        z->config_wd = zonewatch_add(z->watch_fd, zoneinfo_config_dir());
}

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
        watch_start(z);
        watch_zone_dir(z, z->local.name);
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
        if (z->watch_fd >= 0)
                close(z->watch_fd);
        free(z->dirs);
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
        watch_zone_dir(z, name);
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
        watch_zone_dir(z, local.name);
}

int zones_watch_fd(const struct zones *z)
{
        return z->watch_fd;
}

/* Whether `name` in the directory of wd is a zone in use or names the local zone. */
static bool zone_file_matters(void *userdata, int wd, const char *name)
{
        const struct zones *z = userdata;
        char path[PATH_MAX];

        if (wd == z->config_wd)
                return strcmp(name, ZONEINFO_LOCALTIME) == 0 ||
                       strcmp(name, ZONEINFO_TIMEZONE) == 0;
        for (size_t i = 0; i < z->n_dirs; i++) {
                if (z->dirs[i].wd != wd)
                        continue;
                snprintf(path, sizeof(path), "%s%s%s", z->dirs[i].dir, z->dirs[i].dir[0] ? "/" : "",
                         name);
                if (strcmp(path, z->local.name) == 0)
                        return true;
                for (struct list_node *n = z->named.next; n != &z->named; n = n->next)
                        if (strcmp(list_entry(n, struct zone_entry, node)->zone.name, path) == 0)
                                return true;
        }
        return false;
}

int zones_changed(struct zones *z)
{
        return zonewatch_read(z->watch_fd, zone_file_matters, z);
}

struct td_calendar_set *zones_calendars(struct zones *z)
{
        return &z->calendars;
}

bool zones_is_local(const struct zones *z, const struct td_zone *zone)
{
        return zone == &z->local;
}
