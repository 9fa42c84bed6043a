/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "zoneinfo.h"

bool zoneinfo_name_valid(const char *name)
{
        size_t length = strnlen(name, CALENDAR_ZONE_MAX);

        if (length == 0 || length >= CALENDAR_ZONE_MAX || name[0] == '/' || strstr(name, ".."))
                return false;
        for (const char *p = name; *p; p++)
                if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
                      (*p >= '0' && *p <= '9') || strchr("_+-/", *p)))
                        return false;
        return true;
}

const char *zoneinfo_dir(void)
{
        const char *dir = secure_getenv("TZDIR");

        return dir && dir[0] ? dir : ZONEINFO_DIR;
}

const char *zoneinfo_config_dir(void)
{
        const char *dir = secure_getenv("TIMERD_ZONE_CONFIG_DIR");

        return dir && dir[0] ? dir : ZONEINFO_CONFIG_DIR;
}

/* The whole of a regular file of at most ZONEINFO_FILE_MAX bytes, into a buffer of that size. */
static int read_zone_file(const char *path, uint8_t *data, size_t *ret_size)
{
        struct stat st;
        size_t size = 0;
        int r = 0;

        /* Not O_NOFOLLOW: zoneinfo links names to each other. O_NONBLOCK: a FIFO planted in
         * TZDIR must not block the open; fstat() then refuses it. */
        int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0)
                r = -errno;
        else if (S_ISDIR(st.st_mode))
                r = -EISDIR;
        else if (!S_ISREG(st.st_mode))
                r = -EBADF;
        else if (st.st_size > ZONEINFO_FILE_MAX)
                r = -EFBIG;
        while (r == 0) {
                ssize_t n = read(fd, data + size, ZONEINFO_FILE_MAX - size);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        r = -errno;
                else if (n == 0)
                        break;
                else if ((size += (size_t)n) == ZONEINFO_FILE_MAX)
                        r = -EFBIG; /* it grew since fstat() */
        }
        close(fd);
        *ret_size = size;
        return r;
}

int zoneinfo_load(const char *name, struct tz_zone **ret, enum tz_error *ret_tz_error)
{
        enum tz_error tz_error = TZ_E_NONE;
        char path[PATH_MAX];
        size_t size = 0;

        *ret = NULL;
        if (ret_tz_error)
                *ret_tz_error = TZ_E_NONE;
        if (name[0] == '\0' || strcmp(name, "UTC") == 0)
                return 0;
        if (!zoneinfo_name_valid(name))
                return -EINVAL;
        int length = snprintf(path, sizeof(path), "%s/%s", zoneinfo_dir(), name);
        if (length < 0 || (size_t)length >= sizeof(path))
                return -ENAMETOOLONG;
        uint8_t *data = malloc(ZONEINFO_FILE_MAX);
        if (!data)
                return -ENOMEM;
        int r = read_zone_file(path, data, &size);
        if (r == 0)
                r = tz_zone_parse_tzif(data, size, ret, &tz_error);
        free(data);
        if (ret_tz_error)
                *ret_tz_error = tz_error;
        return r;
}

/* The first line of /etc/timezone (Debian's), when it is a zone name. */
static bool name_from_etc_timezone(char buf[static CALENDAR_ZONE_MAX])
{
        char path[PATH_MAX];
        bool found = false;
        FILE *f;

        snprintf(path, sizeof(path), "%s/" ZONEINFO_TIMEZONE, zoneinfo_config_dir());
        f = fopen(path, "re");
        if (!f)
                return false;
        if (fgets(buf, CALENDAR_ZONE_MAX, f)) {
                buf[strcspn(buf, "\n")] = '\0';
                found = zoneinfo_name_valid(buf);
        }
        fclose(f);
        return found;
}

/* The part of /etc/localtime's link target after ".../zoneinfo/". */
static bool name_from_localtime_link(char buf[static CALENDAR_ZONE_MAX])
{
        char target[PATH_MAX], path[PATH_MAX];

        snprintf(path, sizeof(path), "%s/" ZONEINFO_LOCALTIME, zoneinfo_config_dir());
        ssize_t n = readlink(path, target, sizeof(target) - 1);

        if (n < 0)
                return false;
        target[n] = '\0';
        const char *zone = strstr(target, "/zoneinfo/");
        if (!zone)
                return false;
        zone += strlen("/zoneinfo/");
        /* posix/Europe/Berlin is Europe/Berlin; right/… (leap seconds) is refused below. */
        if (strncmp(zone, "posix/", strlen("posix/")) == 0)
                zone += strlen("posix/");
        if (!zoneinfo_name_valid(zone) || strncmp(zone, "right/", strlen("right/")) == 0)
                return false;
        snprintf(buf, CALENDAR_ZONE_MAX, "%s", zone);
        return true;
}

enum zoneinfo_local_source zoneinfo_local_name(char buf[static CALENDAR_ZONE_MAX])
{
        if (name_from_etc_timezone(buf))
                return ZONEINFO_LOCAL_ETC_TIMEZONE;
        if (name_from_localtime_link(buf))
                return ZONEINFO_LOCAL_LOCALTIME;
        snprintf(buf, CALENDAR_ZONE_MAX, "UTC");
        return ZONEINFO_LOCAL_FALLBACK;
}
