/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "users.h"

#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

bool users_available(void)
{
        return geteuid() == 0;
}

pid_t run_as_groups_async(uid_t uid, gid_t gid, gid_t group, int (*fn)(void *arg), void *arg)
{
        pid_t parent = getpid();
        pid_t pid = fork();
        if (pid != 0)
                return pid;
        if (setgroups(group == (gid_t)-1 ? 0 : 1, &group) < 0 || setresgid(gid, gid, gid) < 0 ||
            setresuid(uid, uid, uid) < 0)
                _exit(255);
        /* A test that fails leaves no user process behind. After the switch: changing
         * credentials clears the parent-death signal. */
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
                _exit(255);
        _exit(fn(arg) & 0xff);
}

pid_t run_as_async(uid_t uid, int (*fn)(void *arg), void *arg)
{
        return run_as_groups_async(uid, uid, (gid_t)-1, fn, arg);
}

int run_as_groups(uid_t uid, gid_t gid, gid_t group, int (*fn)(void *arg), void *arg)
{
        return run_wait(run_as_groups_async(uid, gid, group, fn, arg));
}

int run_wait(pid_t pid)
{
        int status;
        if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
            WEXITSTATUS(status) == 255)
                return -1;
        return WEXITSTATUS(status);
}

int run_as(uid_t uid, int (*fn)(void *arg), void *arg)
{
        return run_wait(run_as_async(uid, fn, arg));
}

int user_connect(const char *socket_path)
{
        struct sockaddr_un addr = {.sun_family = AF_UNIX};
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -1;
        snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", socket_path);
        if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
                close(fd);
                return -1;
        }
        return fd;
}

json_object *user_recv(int fd, int timeout_ms)
{
        char buf[4096];
        size_t len = 0;

        while (len < sizeof(buf)) {
                struct pollfd p = {.fd = fd, .events = POLLIN};
                if (poll(&p, 1, timeout_ms) <= 0)
                        return NULL;
                ssize_t n = recv(fd, buf + len, 1, 0);
                if (n <= 0)
                        return NULL;
                if (buf[len] == '\0')
                        return json_tokener_parse(buf);
                len++;
        }
        return NULL;
}

json_object *user_call(int fd, const char *fmt, ...)
{
        char msg[1024];
        va_list ap;

        va_start(ap, fmt);
        int n = vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        if (n < 0 || (size_t)n >= sizeof(msg) ||
            send(fd, msg, (size_t)n + 1, MSG_NOSIGNAL) != (ssize_t)n + 1)
                return NULL;
        return user_recv(fd, 5000);
}
