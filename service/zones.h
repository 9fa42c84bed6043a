/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The time zones of calendar timers, at the service's edge: loaded from the system's zone files
 * (zoneinfo/) the first time a timer names them, one copy per name, kept for the service's life
 * (bounded by the zones installed: a name that has no file is not kept). The core reads them
 * through the struct td_zone it is handed, so a reload (SIGHUP) swaps the data under every timer
 * at once. One entry stands for "the service's local zone": timers declared without a zone follow
 * it, also when it changes. The calendar schedules in use are kept here too, one per distinct
 * declaration, since they point into the zones: zones_free() comes after every timer is gone.
 */

#include <stdbool.h>

#include "service/core/calendar-timer.h"

struct zones;

int zones_new(struct zones **ret);
void zones_free(struct zones *z);

/*
 * The zone NAME, or the local zone for NULL. 0; -EINVAL for a name zoneinfo refuses or a file
 * that is no zone; -ENOENT for no such zone; -ENOMEM; another negative errno.
 */
int zones_get(struct zones *z, const char *name, const struct td_zone **ret);

/* Read every zone again (a tzdata update) and the local zone's name (a new local zone). A zone
 * whose file cannot be read any more keeps its data. */
void zones_reload(struct zones *z);

/*
 * The zones' files and the local zone's name are watched (inotify on their directories): an fd
 * to poll, -1 when the kernel refused (then only SIGHUP reloads). zones_changed() reads what
 * happened: 1 when a zone in use, /etc/localtime or /etc/timezone changed (zones_reload() is
 * due), 0 when nothing that matters did, -errno.
 */
int zones_watch_fd(const struct zones *z);
int zones_changed(struct zones *z);

/* The calendar schedules read in these zones, shared among the timers declared alike. */
struct td_calendar_set *zones_calendars(struct zones *z);

/* Whether zone is the local-zone entry (what a declaration without a zone gets). */
bool zones_is_local(const struct zones *z, const struct td_zone *zone);
