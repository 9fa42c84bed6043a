/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "service/io/zonewatch.h"

#include <errno.h>
#include <stdalign.h>
#include <sys/inotify.h>
#include <unistd.h>

#define ZONEWATCH_EVENTS                                                                           \
        (IN_CLOSE_WRITE | IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_ATTRIB |        \
         IN_DELETE_SELF | IN_MOVE_SELF)

int zonewatch_open(void)
{
        int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);

        return fd < 0 ? -errno : fd;
}

int zonewatch_add(int fd, const char *path)
{
        int wd = inotify_add_watch(fd, path, ZONEWATCH_EVENTS | IN_ONLYDIR);

        return wd < 0 ? -errno : wd;
}

int zonewatch_read(int fd, bool (*matters)(void *userdata, int wd, const char *name),
                   void *userdata)
{
        alignas(struct inotify_event) char buf[4096];
        int found = 0;

        for (;;) {
                ssize_t n = read(fd, buf, sizeof(buf));

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return errno == EAGAIN ? found : -errno;
                for (char *p = buf; p < buf + n;) {
                        const struct inotify_event *e = (const struct inotify_event *)(void *)p;

                        /* A lost event or a watched directory gone: it may have been one. */
                        if ((e->mask & (IN_Q_OVERFLOW | IN_DELETE_SELF | IN_MOVE_SELF)) ||
                            (e->len > 0 && matters(userdata, e->wd, e->name)))
                                found = 1;
                        p += sizeof(*e) + e->len;
                }
        }
}
