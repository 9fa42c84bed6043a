/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "bench/daemon.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/harness.h"

/* Replaying a million retained timers may take a while; a start that takes longer is a hang. */
#define START_TIMEOUT_USEC (300 * UINT64_C(1000000))

void daemon_dir_new(char *buf, size_t size)
{
        if (snprintf(buf, size, "/tmp/timerd-bench.XXXXXX") >= (int)size || !mkdtemp(buf))
                die("cannot make a temporary directory: %m");
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
        (void)st;
        (void)flag;
        (void)ftw;
        if (remove(path) < 0)
                note("cannot remove %s: %m", path);
        return 0;
}

void daemon_dir_remove(const char *dir)
{
        if (nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS) < 0)
                note("cannot remove %s: %m", dir);
}

static int notify_socket_open(const char *path)
{
        struct sockaddr_un a = {.sun_family = AF_UNIX};
        int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

        if (fd < 0)
                die("socket: %m");
        if (strlen(path) >= sizeof(a.sun_path))
                die("notify socket path too long: %s", path);
        strcpy(a.sun_path, path);
        (void)unlink(path);
        if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
                die("bind %s: %m", path);
        return fd;
}

/* True once a datagram held READY=1. */
static bool notify_read_ready(int fd)
{
        char buf[4096];

        for (;;) {
                ssize_t n = recv(fd, buf, sizeof(buf) - 1, 0);
                if (n < 0) {
                        if (errno == EAGAIN)
                                return false;
                        die("recv on the notify socket: %m");
                }
                buf[n] = '\0';
                if (strncmp(buf, "READY=1", 7) == 0 || strstr(buf, "\nREADY=1"))
                        return true;
        }
}

static void child_exec(const struct daemon_options *o, const struct daemon *d,
                       const char *notify_path, int time_fd)
{
        char state[300], backend[64];

        snprintf(state, sizeof(state), "%s/state", d->dir);
        snprintf(backend, sizeof(backend), "--backend=%s", o->backend);
        const char *argv[] = {o->binary,
                              "--socket",
                              d->socket,
                              "--state-dir",
                              state,
                              backend,
                              "--log-level=warning",
                              o->virtual_clock ? "--clock=virtual" : NULL,
                              NULL};

        bench_pin(0, BENCH_CPU_SERVICE);
        /* A bench that dies (or is interrupted) takes its timerd with it. */
        /* As units/timerd.service runs it: malloc on huge pages (GLIBC_TUNABLES= runs it without).
         */
        if (prctl(PR_SET_PDEATHSIG, SIGTERM) < 0 || setenv("NOTIFY_SOCKET", notify_path, 1) < 0 ||
            setenv("GLIBC_TUNABLES", "glibc.malloc.hugetlb=1", 0) < 0)
                _exit(127);
        uint64_t exec_usec = now_usec();
        if (write(time_fd, &exec_usec, sizeof(exec_usec)) != sizeof(exec_usec))
                _exit(127);
        execv(o->binary, (char *const *)argv);
        _exit(127);
}

void daemon_start(const struct daemon_options *o, struct daemon *ret)
{
        char notify_path[300];
        int time_pipe[2], status;
        uint64_t exec_usec = 0;

        *ret = (struct daemon){};
        if (o->dir)
                snprintf(ret->dir, sizeof(ret->dir), "%s", o->dir);
        else {
                daemon_dir_new(ret->dir, sizeof(ret->dir));
                ret->owns_dir = true;
        }
        snprintf(ret->socket, sizeof(ret->socket), "%s/io.timerd", ret->dir);
        snprintf(notify_path, sizeof(notify_path), "%s/notify", ret->dir);
        int notify_fd = notify_socket_open(notify_path);
        if (pipe2(time_pipe, O_CLOEXEC) < 0)
                die("pipe: %m");

        ret->pid = fork();
        if (ret->pid < 0)
                die("fork: %m");
        if (ret->pid == 0)
                child_exec(o, ret, notify_path, time_pipe[1]);
        close(time_pipe[1]);
        if (read(time_pipe[0], &exec_usec, sizeof(exec_usec)) != sizeof(exec_usec))
                die("%s did not start", o->binary);
        close(time_pipe[0]);

        for (;;) {
                struct pollfd p = {.fd = notify_fd, .events = POLLIN};
                if (poll(&p, 1, 100) < 0 && errno != EINTR)
                        die("poll: %m");
                if (notify_read_ready(notify_fd))
                        break;
                if (waitpid(ret->pid, &status, WNOHANG) == ret->pid)
                        die("timerd exited at start (status 0x%x)", (unsigned)status);
                if (now_usec() - exec_usec > START_TIMEOUT_USEC)
                        die("timerd did not send READY=1 within %llu s",
                            (unsigned long long)(START_TIMEOUT_USEC / 1000000));
        }
        ret->start_usec = now_usec() - exec_usec;
        /* Later status updates have nobody to read them: let them fail at once. */
        close(notify_fd);
        (void)unlink(notify_path);
        if (clock_getcpuclockid(ret->pid, &ret->cpu_clock) != 0)
                die("clock_getcpuclockid: no CPU clock for timerd");
}

void daemon_stop(struct daemon *d)
{
        int status;

        if (kill(d->pid, SIGTERM) < 0)
                die("kill: %m");
        while (waitpid(d->pid, &status, 0) < 0)
                if (errno != EINTR)
                        die("waitpid: %m");
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                note("timerd did not exit cleanly (status 0x%x)", (unsigned)status);
        if (d->owns_dir)
                daemon_dir_remove(d->dir);
}

uint64_t daemon_cpu_nsec(const struct daemon *d)
{
        struct timespec ts;

        if (clock_gettime(d->cpu_clock, &ts) < 0)
                die("clock_gettime(timerd CPU clock): %m");
        return (uint64_t)ts.tv_sec * UINT64_C(1000000000) + (uint64_t)ts.tv_nsec;
}

uint64_t daemon_rss_bytes(const struct daemon *d)
{
        char path[64], line[256];
        unsigned long long kib = 0;

        snprintf(path, sizeof(path), "/proc/%d/status", (int)d->pid);
        FILE *f = fopen(path, "re");
        if (!f)
                die("%s: %m", path);
        while (fgets(line, sizeof(line), f))
                if (sscanf(line, "VmRSS: %llu kB", &kib) == 1)
                        break;
        fclose(f);
        return kib * 1024;
}
