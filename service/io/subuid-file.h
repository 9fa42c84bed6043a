/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The subordinate uid file (subuid(5), /etc/subuid by default): "user:first:count" lines, the
 * user a name or a uid. Read at start and on SIGHUP into the table the core charges limits by
 * (service/core/subuids.h). A missing file is no ranges; a line that is not such a range (a
 * number out of range, first + count past 2^32, a count of 0, an unknown user) is logged and
 * skipped; blank lines and lines starting with '#' are skipped silently.
 */

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "service/core/subuids.h"

/* A user name's uid (getpwnam() for the service): 0, or -ENOENT when there is no such user. */
typedef int (*subuid_resolve_fn)(const char *name, uint32_t *ret_uid);

/* The ranges of f's lines in their order (*ret: free() it) and how many lines were skipped as
 * bad; `path` names f in the log. -ENOMEM, or -EIO when f cannot be read. */
int subuid_file_parse(FILE *f, const char *path, subuid_resolve_fn resolve,
                      struct subuid_range **ret, size_t *ret_n, size_t *ret_bad);

/* subuid_file_parse() of the file at path, users resolved with getpwnam(). A missing file has
 * no ranges. -errno when it cannot be read, -ENOMEM. */
int subuid_file_load(const char *path, struct subuid_range **ret, size_t *ret_n);
