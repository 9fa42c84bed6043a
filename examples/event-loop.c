/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * timerd in a program's own event loop (epoll here; sd-event and libuv work alike): nothing
 * blocks, every call is asynchronous, and its answer comes to a callback.
 *
 * Two connections: a stream of firings occupies its connection for good, so the runs are
 * completed, and the timers declared, on a second one, where many calls may be in flight at
 * once. Each connection's fd is watched for what timerd_get_events() asks, which changes as
 * requests are buffered and written; timerd_process() does the rest. The fast timer is handed
 * over 2 ms early, the medium one libtimerd's default 1 ms, the slow one not at all (exact):
 * libtimerd holds early firings until their deadline, and the loop wakes up for them when
 * timerd_get_timeout() says. SIGINT and SIGTERM arrive through a signalfd and end the loop
 * cleanly.
 *
 *   example-event-loop       three timers, forever
 *   example-event-loop N     until N runs are done (a demo, and the test)
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include <timerd/timerd.h>

#define USEC_PER_MSEC 1000ULL

struct app {
        int epoll_fd;
        struct timerd *firings; /* the Wait stream */
        struct timerd *control; /* declarations and completions, pipelined */
        unsigned long runs_wanted, runs_done;
        size_t declared;
        bool quit;
        int status;
};

static const struct {
        const char *name;
        uint64_t cadence_usec;
        uint64_t handover_usec;
} timers[] = {
    {"example-fast", 150 * USEC_PER_MSEC, 2 * USEC_PER_MSEC},
    {"example-medium", 400 * USEC_PER_MSEC, TIMERD_HANDOVER_DEFAULT}, /* 1 ms */
    {"example-slow", 1000 * USEC_PER_MSEC, 0},                        /* exact */
};

static void fail(struct app *app, const char *what, int error)
{
        fprintf(stderr, "event-loop: %s: %s\n", what, timerd_strerror(error));
        app->quit = true;
        app->status = 1;
}

/* Watch a connection's fd for what it wants now. */
static int watch(struct app *app, struct timerd *t, int op)
{
        struct epoll_event event = {.data.ptr = t};
        int events = timerd_get_events(t);

        if (events < 0)
                return events;
        event.events =
            (uint32_t)((events & POLLIN ? EPOLLIN : 0) | (events & POLLOUT ? EPOLLOUT : 0));
        return epoll_ctl(app->epoll_fd, op, timerd_get_fd(t), &event) < 0 ? -errno : 0;
}

static void on_firing(struct timerd *t, int error, const struct timerd_firing *firing,
                      void *userdata);

#define N_TIMERS (sizeof(timers) / sizeof(timers[0]))

/* The stream names only our timers (the user may have others), so it starts once they exist: a
 * Wait on a name that is not registered is NotFound. */
static void on_declared(struct timerd *t, int error, const struct timerd_claim *claim,
                        void *userdata)
{
        struct app *app = userdata;
        const char *names[N_TIMERS];
        int r;

        (void)t;
        if (error < 0) {
                fail(app, "register", error);
                return;
        }
        printf("declared %s\n", claim->name);
        if (++app->declared < N_TIMERS)
                return;
        for (size_t i = 0; i < N_TIMERS; i++)
                names[i] = timers[i].name;
        r = timerd_wait_stream_async(app->firings, names, N_TIMERS, on_firing, app);
        if (r < 0)
                fail(app, "wait", r);
}

static void on_completed(struct timerd *t, int error, void *userdata)
{
        struct app *app = userdata;

        (void)t;
        if (error < 0) {
                fail(app, "complete", error);
                return;
        }
        app->runs_done++;
        if (app->runs_wanted > 0 && app->runs_done >= app->runs_wanted)
                app->quit = true;
}

static void on_firing(struct timerd *t, int error, const struct timerd_firing *firing,
                      void *userdata)
{
        struct app *app = userdata;
        int r;

        (void)t;
        if (error < 0) {
                /* The stream ended: the service stops, or the connection broke. */
                fail(app, "wait", error);
                return;
        }
        printf("%s: run %llu\n", firing->token.name, (unsigned long long)firing->token.run);
        fflush(stdout);
        /* The work would go here; its end is reported on the other connection. */
        r = timerd_complete_async(app->control, &firing->token, TIMERD_OUTCOME_SUCCESS,
                                  TIMERD_DIRECTIVE_CONTINUE, 0, on_completed, app);
        if (r < 0)
                fail(app, "complete", r);
}

static int setup(struct app *app)
{
        struct timerd_declaration d;
        int r;

        r = timerd_connect(NULL, &app->firings);
        if (r >= 0)
                r = timerd_connect(NULL, &app->control);
        if (r < 0)
                return r;
        /* All in flight at once; the callbacks run in this order. */
        for (size_t i = 0; i < N_TIMERS && r >= 0; i++) {
                timerd_declaration_init(&d, TIMERD_POLICY_AFTER_COMPLETION, timers[i].cadence_usec);
                d.handover_usec = timers[i].handover_usec;
                r = timerd_register_async(app->control, timers[i].name, &d, NULL, true, on_declared,
                                          app);
        }
        if (r >= 0)
                r = watch(app, app->firings, EPOLL_CTL_ADD);
        if (r >= 0)
                r = watch(app, app->control, EPOLL_CTL_ADD);
        return r;
}

static int signals_fd(void)
{
        sigset_t mask;

        sigemptyset(&mask);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGTERM);
        if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
                return -errno;
        return signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
}

/* epoll_wait()'s timeout for a held firing's deadline: -1 when none is held. */
static int held_timeout(struct app *app)
{
        struct timespec ts;
        uint64_t wake, now;

        if (timerd_get_timeout(app->firings, &wake) <= 0 || clock_gettime(CLOCK_MONOTONIC, &ts) < 0)
                return -1;
        now = (uint64_t)ts.tv_sec * 1000000ULL + (uint64_t)ts.tv_nsec / 1000;
        /* Rounded up: waking before the deadline would only spin. */
        return wake > now ? (int)((wake - now + USEC_PER_MSEC - 1) / USEC_PER_MSEC) : 0;
}

static void run(struct app *app)
{
        while (!app->quit) {
                struct epoll_event events[4];
                int n = epoll_wait(app->epoll_fd, events, 4, held_timeout(app));

                if (n < 0 && errno != EINTR) {
                        fail(app, "epoll_wait", -errno);
                        return;
                }
                for (int i = 0; i < n && !app->quit; i++) {
                        struct timerd *t = events[i].data.ptr;
                        int r;

                        if (!t) {
                                printf("signal: quitting\n");
                                app->quit = true;
                                break;
                        }
                        r = timerd_process(t);
                        if (r < 0) {
                                fail(app, "connection", r);
                                return;
                        }
                }
                /* A held firing that came due; processing at any time is harmless. */
                if (n == 0) {
                        int r = timerd_process(app->firings);

                        if (r < 0) {
                                fail(app, "connection", r);
                                return;
                        }
                }
                /* Processing, and calls from callbacks, change what each fd waits for. */
                if (watch(app, app->firings, EPOLL_CTL_MOD) < 0 ||
                    watch(app, app->control, EPOLL_CTL_MOD) < 0)
                        fail(app, "epoll_ctl", -errno);
        }
}

int main(int argc, char *argv[])
{
        struct app app = {.runs_wanted = argc > 1 ? strtoul(argv[1], NULL, 10) : 0};
        struct epoll_event event = {.events = EPOLLIN, .data.ptr = NULL};
        int signal_fd, r;

        app.epoll_fd = epoll_create1(EPOLL_CLOEXEC);
        signal_fd = signals_fd();
        if (app.epoll_fd < 0 || signal_fd < 0 ||
            epoll_ctl(app.epoll_fd, EPOLL_CTL_ADD, signal_fd, &event) < 0) {
                perror("event-loop: setup");
                return 1;
        }
        r = setup(&app);
        if (r < 0)
                fail(&app, "setup", r);
        run(&app);
        printf("%lu runs done\n", app.runs_done);

        /* Closing drops the stream; the transient timers go with the connection. */
        timerd_close(app.firings);
        timerd_close(app.control);
        close(signal_fd);
        close(app.epoll_fd);
        return app.status;
}
