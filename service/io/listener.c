/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "service/io/listener.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

static int make_parent(const char *path)
{
        char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
        snprintf(dir, sizeof(dir), "%s", path);
        char *slash = strrchr(dir, '/');
        if (!slash || slash == dir)
                return 0;
        *slash = '\0';
        if (mkdir(dir, 0755) < 0 && errno != EEXIST)
                return -errno;
        return 0;
}

static int fill_address(const char *path, struct sockaddr_un *ret)
{
        *ret = (struct sockaddr_un){.sun_family = AF_UNIX};
        if (strlen(path) >= sizeof(ret->sun_path) || path[0] == '\0')
                return -ENAMETOOLONG;
        memcpy(ret->sun_path, path, strlen(path) + 1);
        return 0;
}

/* Whether a service answers on path. */
static bool socket_alive(const struct sockaddr_un *addr)
{
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return false;
        bool alive = connect(fd, (const struct sockaddr *)addr, sizeof(*addr)) == 0;
        close(fd);
        return alive;
}

int listener_bind(const char *path, int *ret_fd)
{
        struct sockaddr_un addr, temporary;
        char temporary_path[sizeof(addr.sun_path)];
        int r = fill_address(path, &addr);
        if (r < 0)
                return r;
        if (socket_alive(&addr))
                return -EADDRINUSE;
        r = make_parent(path);
        if (r < 0)
                return r;
        /* Bound and listening under a temporary name, then renamed into place: whoever sees the
         * socket file can connect. */
        if (snprintf(temporary_path, sizeof(temporary_path), "%s.%d", path, (int)getpid()) >=
            (int)sizeof(temporary_path))
                return -ENAMETOOLONG;
        r = fill_address(temporary_path, &temporary);
        if (r < 0)
                return r;
        (void)unlink(temporary_path);

        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        if (bind(fd, (const struct sockaddr *)&temporary, sizeof(temporary)) < 0) {
                r = -errno;
                close(fd);
                return r;
        }
        /* Authorization is by peer credentials, so anyone may connect. */
        if (chmod(temporary_path, 0666) < 0 || listen(fd, SOMAXCONN) < 0 ||
            rename(temporary_path, path) < 0) {
                r = -errno;
                close(fd);
                (void)unlink(temporary_path);
                return r;
        }
        *ret_fd = fd;
        return 0;
}

void listener_unlink(const char *path)
{
        (void)unlink(path);
}
