/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "connection.h"
#include "timerd/timerd-test.h"
#include "wire.h"

/* A private timerd on a virtual clock, and io.timerd.Test's calls: the test helpers. */

#define TEST_METHOD(m) TIMERD_INTERFACE_TEST "." m

/* How long a started timerd may take to answer, and how often it is asked. */
#define START_TIMEOUT_NSEC (INT64_C(10) * 1000000000)
#define START_POLL_NSEC    (INT64_C(5) * 1000000)

struct timerd_test {
        pid_t pid;
        char dir[PATH_MAX];
        char socket[sizeof(((struct sockaddr_un *)0)->sun_path)];
};

const char *timerd_test_socket(const struct timerd_test *vt)
{
        return vt ? vt->socket : NULL;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
        (void)st;
        (void)flag;
        (void)ftw;
        return remove(path) < 0 ? -errno : 0;
}

static void remove_tree(const char *dir)
{
        (void)nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* The exit status of pid as a positive number (128 + a signal), or -errno. */
static int reap(pid_t pid, int options)
{
        int status;
        pid_t r;

        do
                r = waitpid(pid, &status, options);
        while (r < 0 && errno == EINTR);
        if (r < 0)
                return -errno;
        if (r == 0)
                return -EAGAIN;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int64_t monotonic_nsec(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Until the service answers: -ECHILD when it exited first, -ETIMEDOUT after the timeout. */
static int wait_ready(struct timerd_test *vt)
{
        const struct timespec poll = {.tv_nsec = START_POLL_NSEC};
        int64_t deadline = monotonic_nsec() + START_TIMEOUT_NSEC;

        for (;;) {
                struct timerd *t;
                if (timerd_connect(vt->socket, &t) == 0) {
                        timerd_close(t);
                        return 0;
                }
                if (reap(vt->pid, WNOHANG) >= 0) {
                        vt->pid = -1;
                        return -ECHILD;
                }
                if (monotonic_nsec() >= deadline)
                        return -ETIMEDOUT;
                nanosleep(&poll, NULL);
        }
}

static int spawn(struct timerd_test *vt)
{
        const char *binary = getenv("TIMERD_BINARY");
        char state[PATH_MAX + 8];
        sigset_t all;

        if (!binary || !binary[0])
                binary = TIMERD_SBINDIR "/timerd";
        snprintf(state, sizeof(state), "%s/state", vt->dir);
        /* Everything the child needs is ready before the fork: it only execs. */
        char *const argv[] = {"timerd",      "--clock", "virtual",     "--socket", vt->socket,
                              "--state-dir", state,     "--log-level", "warning",  NULL};
        pid_t parent = getpid();

        vt->pid = fork();
        if (vt->pid < 0)
                return -errno;
        if (vt->pid == 0) {
                sigemptyset(&all);
                sigprocmask(SIG_SETMASK, &all, NULL);
                if (prctl(PR_SET_PDEATHSIG, SIGTERM) < 0 || getppid() != parent)
                        _exit(127);
                execv(binary, argv);
                _exit(127);
        }
        return 0;
}

int timerd_test_start(struct timerd_test **ret)
{
        const char *tmp = getenv("TMPDIR");
        struct timerd_test *vt;
        int r;

        if (!ret)
                return -EINVAL;
        vt = calloc(1, sizeof(*vt));
        if (!vt)
                return -ENOMEM;
        vt->pid = -1;
        if (!tmp || !tmp[0])
                tmp = "/tmp";
        if ((size_t)snprintf(vt->dir, sizeof(vt->dir), "%s/timerd-test.XXXXXX", tmp) >=
                sizeof(vt->dir) ||
            (size_t)snprintf(vt->socket, sizeof(vt->socket), "%s/io.timerd", vt->dir) >=
                sizeof(vt->socket)) {
                free(vt);
                return -ENAMETOOLONG;
        }
        if (!mkdtemp(vt->dir)) {
                r = -errno;
                free(vt);
                return r;
        }
        /* The directory's name is as long as its template was. */
        memcpy(vt->socket, vt->dir, strlen(vt->dir));
        r = spawn(vt);
        if (r >= 0)
                r = wait_ready(vt);
        if (r < 0) {
                (void)timerd_test_stop(vt);
                return r;
        }
        *ret = vt;
        return 0;
}

int timerd_test_stop(struct timerd_test *vt)
{
        int r = 0;

        if (!vt)
                return 0;
        if (vt->pid > 0) {
                (void)kill(vt->pid, SIGTERM);
                r = reap(vt->pid, 0);
        }
        remove_tree(vt->dir);
        free(vt);
        return r;
}

/* "now" of a reply as the clocks; -TIMERD_E_PROTOCOL when it is not one. */
static int decode_clocks(const struct vl_reply *reply, struct timerd_test_clocks *ret)
{
        struct wire_object p, now;

        if (wire_reply_parameters(reply, &p) < 0 || wire_get_object(&p, "now", &now) < 0 ||
            wire_get_u64(&now, "monotonic", &ret->monotonic) < 0 ||
            wire_get_u64(&now, "boottime", &ret->boottime) < 0 ||
            wire_get_u64(&now, "realtime", &ret->realtime) < 0)
                return -TIMERD_E_PROTOCOL;
        return 0;
}

/* A call that moves the clocks, begun in q. */
static int move(struct timerd *t, struct connection_request *q, uint64_t *ret_firings)
{
        struct timerd_test_clocks clocks;
        struct vl_reply reply;
        uint64_t firings;
        int r;

        r = connection_send(t, q, 0, true, &reply);
        if (r >= 0 &&
            (decode_clocks(&reply, &clocks) < 0 || wire_reply_u64(&reply, "firings", &firings) < 0))
                r = -TIMERD_E_PROTOCOL;
        if (r >= 0 && ret_firings)
                *ret_firings = firings;
        vl_reply_done(&reply);
        return r;
}

/* A move by usec. */
static int move_by(struct timerd *t, const char *method, uint64_t usec, uint64_t *ret_firings)
{
        struct connection_request q;

        if (!t)
                return -EINVAL;
        connection_begin(t, &q, method, false);
        vl_text_add_u64(&q.text, "usec", usec);
        return move(t, &q, ret_firings);
}

int timerd_test_advance(struct timerd *t, uint64_t usec, uint64_t *ret_firings)
{
        return move_by(t, TEST_METHOD("Advance"), usec, ret_firings);
}

int timerd_test_advance_to(struct timerd *t, enum timerd_clock clock, uint64_t usec,
                           uint64_t *ret_firings)
{
        const char *name = timerd_clock_to_string(clock);
        struct connection_request q;

        if (!name || !t)
                return -EINVAL;
        connection_begin(t, &q, TEST_METHOD("AdvanceTo"), false);
        vl_text_add_u64(&q.text, "usec", usec);
        vl_text_add_string(&q.text, "clock", name);
        return move(t, &q, ret_firings);
}

int timerd_test_suspend(struct timerd *t, uint64_t usec, uint64_t *ret_firings)
{
        return move_by(t, TEST_METHOD("Suspend"), usec, ret_firings);
}

int timerd_test_set_realtime(struct timerd *t, uint64_t usec, uint64_t *ret_firings)
{
        return move_by(t, TEST_METHOD("SetRealtime"), usec, ret_firings);
}

int timerd_test_now(struct timerd *t, struct timerd_test_clocks *ret)
{
        struct connection_request q;
        struct vl_reply reply;
        int r;

        if (!t || !ret)
                return -EINVAL;
        connection_begin(t, &q, TEST_METHOD("Now"), false);
        r = connection_send(t, &q, 0, true, &reply);
        if (r >= 0)
                r = decode_clocks(&reply, ret);
        vl_reply_done(&reply);
        return r;
}
