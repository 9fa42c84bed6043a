/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The I/O edge of the tests: a zone read from the system's compiled zone files. */

#include "calendar/tzif.h"

#define ZONEINFO_DIR "/usr/share/zoneinfo"

/* "UTC" and "" give NULL (UTC) and 0; otherwise 0, or a negative errno (-EINVAL for a name with
 * "..", a file that is no valid TZif). */
int zone_load(const char *name, struct tz_zone **ret);
