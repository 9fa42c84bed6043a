/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The I/O edge of calendar/: time zones read from the system's compiled zone files
 * ($TZDIR, else /usr/share/zoneinfo), and the name of the local zone. A static library of its own
 * so that both timerctl and the service use one loader while calendar/ stays pure.
 */

#include <stdbool.h>
#include <stddef.h>

#include "calendar/calendar.h"
#include "calendar/tzif.h"

#define ZONEINFO_DIR "/usr/share/zoneinfo"
/* Where the local zone is named: ZONEINFO_TIMEZONE (Debian's) and the ZONEINFO_LOCALTIME link. */
#define ZONEINFO_CONFIG_DIR "/etc"
#define ZONEINFO_TIMEZONE   "timezone"
#define ZONEINFO_LOCALTIME  "localtime"
/* The largest real zone file is under 4 KiB; a bigger one is not a zone file. */
#define ZONEINFO_FILE_MAX (256 * 1024)

/* $TZDIR, else ZONEINFO_DIR. */
const char *zoneinfo_dir(void);
/* $TIMERD_ZONE_CONFIG_DIR (for tests), else ZONEINFO_CONFIG_DIR. */
const char *zoneinfo_config_dir(void);

/* A name as IANA spells them: [A-Za-z0-9_+-/] only, no "..", not absolute, shorter than
 * CALENDAR_ZONE_MAX. */
bool zoneinfo_name_valid(const char *name);

/*
 * The zone NAME. "UTC" and "" give NULL (UTC everywhere) and 0. Otherwise 0, or -EINVAL for a
 * name zoneinfo_name_valid() refuses or a file that is no valid TZif (*ret_tz_error says why,
 * when given), -ENOENT for no such zone, -EISDIR / -EBADF for a directory or another file that is
 * not regular, -EFBIG for a file larger than ZONEINFO_FILE_MAX, another negative errno.
 */
int zoneinfo_load(const char *name, struct tz_zone **ret, enum tz_error *ret_tz_error);

enum zoneinfo_local_source {
        ZONEINFO_LOCAL_ETC_TIMEZONE, /* /etc/timezone names it */
        ZONEINFO_LOCAL_LOCALTIME,    /* /etc/localtime links into the zoneinfo directory */
        ZONEINFO_LOCAL_FALLBACK,     /* neither: "UTC" */
};

/* The local zone's name into buf (CALENDAR_ZONE_MAX bytes), and where it came from. Never fails:
 * without a usable name it is "UTC". */
enum zoneinfo_local_source zoneinfo_local_name(char buf[static CALENDAR_ZONE_MAX]);
