/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zone-load.h"

/* The largest real zone file is under 4 KiB. */
#define ZONE_FILE_MAX (1 << 20)

int zone_load(const char *name, struct tz_zone **ret)
{
        char path[512];
        enum tz_error error;

        *ret = NULL;
        if (name[0] == '\0' || strcmp(name, "UTC") == 0)
                return 0;
        if (name[0] == '/' || strstr(name, ".."))
                return -EINVAL;
        if (snprintf(path, sizeof(path), "%s/%s", ZONEINFO_DIR, name) >= (int)sizeof(path))
                return -ENAMETOOLONG;
        FILE *f = fopen(path, "re");
        if (!f)
                return -errno;
        uint8_t *data = malloc(ZONE_FILE_MAX);
        if (!data) {
                fclose(f);
                return -ENOMEM;
        }
        size_t size = fread(data, 1, ZONE_FILE_MAX, f);
        int r = ferror(f) ? -EIO : 0;
        fclose(f);
        if (r == 0)
                r = tz_zone_parse_tzif(data, size, ret, &error);
        free(data);
        return r;
}
