/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "timerd/timerd.h"

int timerd_signal_fd(const int *signals, size_t n_signals)
{
        sigset_t set;

        if (!signals || n_signals == 0)
                return -EINVAL;
        sigemptyset(&set);
        for (size_t i = 0; i < n_signals; i++)
                if (sigaddset(&set, signals[i]) < 0)
                        return -EINVAL;
        /* Blocked first, so a signal that arrives before the fd is read waits for it. */
        if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
                return -errno;
        int fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
        return fd < 0 ? -errno : fd;
}

/* The generation the service put in si_value: the low half where sival_int lies (the union's
 * first bytes), the high half after it (see service/signals.c). */
static uint64_t signal_generation(uint64_t ssi_ptr)
{
        union sigval v = {.sival_ptr = (void *)(uintptr_t)ssi_ptr};
        uint32_t halves[2] = {0, 0};

        memcpy(halves, &v, sizeof(v) < sizeof(halves) ? sizeof(v) : sizeof(halves));
        return (uint64_t)halves[1] << 32 | halves[0];
}

int timerd_signal_read(int fd, struct timerd_signal *ret)
{
        struct signalfd_siginfo si;

        if (!ret)
                return -EINVAL;
        ssize_t n = read(fd, &si, sizeof(si));
        if (n < 0)
                return errno == EAGAIN ? 0 : -errno;
        if (n != sizeof(si))
                return -EIO;
        *ret = (struct timerd_signal){
            .signo = (int)si.ssi_signo,
            .generation = si.ssi_code == SI_QUEUE ? signal_generation(si.ssi_ptr) : 0,
            .sender_pid = (int32_t)si.ssi_pid,
        };
        return 1;
}
