/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "signalfd/sigfd.h"

int sigfd_open(void)
{
        struct sigaction ignore = {
            .sa_handler = SIG_IGN,
        };
        sigset_t mask;
        int fd, r;

        if (sigemptyset(&mask) < 0 || sigaddset(&mask, SIGTERM) < 0 ||
            sigaddset(&mask, SIGINT) < 0 || sigaddset(&mask, SIGHUP) < 0)
                return -EINVAL;
        if (sigaction(SIGPIPE, &ignore, NULL) < 0)
                return -errno;
        r = pthread_sigmask(SIG_BLOCK, &mask, NULL);
        if (r != 0)
                return -r;

        fd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
        if (fd < 0)
                return -errno;
        return fd;
}

int sigfd_read(int fd)
{
        struct signalfd_siginfo info;
        ssize_t n;

        n = read(fd, &info, sizeof(info));
        if (n < 0)
                return -errno;
        if (n != sizeof(info))
                return -EIO;
        return (int)info.ssi_signo;
}

bool sigfd_stop_pending(void)
{
        sigset_t pending;

        if (sigpending(&pending) < 0)
                return false;
        return sigismember(&pending, SIGTERM) == 1 || sigismember(&pending, SIGINT) == 1;
}
