/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Watching the zone files and the local zone's name for changes (inotify): the directories are
 * watched, not the files, since a tzdata update and timedatectl replace files by renaming new
 * ones over them. The caller says which names in which directory matter.
 */

#include <stdbool.h>

/* A non-blocking inotify fd. -errno. */
int zonewatch_open(void);

/* Watch directory `path` for files made, replaced, rewritten or removed in it. The watch
 * descriptor (the same for the same directory), or -errno. */
int zonewatch_add(int fd, const char *path);

/*
 * Read every pending event; `matters` says whether a name in the directory of watch descriptor
 * wd matters. 1 when one did (or events were lost: the queue overflowed), 0 when none did,
 * -errno on a read error.
 */
int zonewatch_read(int fd, bool (*matters)(void *userdata, int wd, const char *name),
                   void *userdata);
