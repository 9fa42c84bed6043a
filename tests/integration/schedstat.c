/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "schedstat.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

int schedstat_read(pid_t pid, struct schedstat *ret)
{
        char path[64], buf[128];
        uint64_t ran_nsec, waited_nsec;
        ssize_t n;
        int fd;

        if (pid == 0)
                snprintf(path, sizeof(path), "/proc/thread-self/schedstat");
        else
                snprintf(path, sizeof(path), "/proc/%d/schedstat", (int)pid);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        n = read(fd, buf, sizeof(buf) - 1);
        if (n < 0) {
                int error = -errno;
                close(fd);
                return error;
        }
        close(fd);
        buf[n] = '\0';
        if (sscanf(buf, "%" SCNu64 " %" SCNu64, &ran_nsec, &waited_nsec) != 2)
                return -EBADMSG;
        *ret = (struct schedstat){.ran_usec = ran_nsec / 1000, .waited_usec = waited_nsec / 1000};
        return 0;
}

int schedstat_waited(pid_t pid, uint64_t *ret_usec)
{
        struct schedstat self, other;
        int r = schedstat_read(0, &self);

        if (r < 0)
                return r;
        other.waited_usec = 0;
        r = pid > 0 ? schedstat_read(pid, &other) : 0;
        if (r < 0)
                return r;
        *ret_usec = self.waited_usec + other.waited_usec;
        return 0;
}

/* The waits of this thread and of pid, or of this thread alone when pid's cannot be read. */
static uint64_t waits_usec(pid_t pid)
{
        uint64_t usec = 0;

        if (pid > 0 && schedstat_waited(pid, &usec) == 0)
                return usec;
        return schedstat_waited(0, &usec) == 0 ? usec : 0;
}

static uint64_t monotonic_usec(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

void schedstat_watch_start(struct schedstat_watch *w, pid_t pid)
{
        *w = (struct schedstat_watch){
            .start_usec = monotonic_usec(), .waits_usec = waits_usec(pid), .pid = pid};
}

uint64_t schedstat_watch_usec(const struct schedstat_watch *w)
{
        uint64_t elapsed = monotonic_usec() - w->start_usec;
        uint64_t waits = waits_usec(w->pid),
                 waited = waits > w->waits_usec ? waits - w->waits_usec : 0;

        return elapsed > waited ? elapsed - waited : 0;
}
