/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * timerctl run: a timer that runs a command. The runner declares its retained timer (Reconcile:
 * idempotent), takes each firing with Wait, runs the command and completes the run with how the
 * command ended. It is a client like any other: two runners on one timer share its firings (each
 * goes to one Wait), and a runner that dies leaves its run to be ended by the service.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <syslog.h>
#include <systemd/sd-journal.h>
#include <unistd.h>

#include "print.h"
#include "timespan.h"
#include "verbs.h"

extern char **environ;

#define GRACE_DEFAULT_USEC   (10 * USEC_PER_SEC)
#define BACKOFF_FIRST_USEC   (100 * USEC_PER_MSEC)
#define BACKOFF_LONGEST_USEC (5 * USEC_PER_SEC)

struct runner {
        struct timerd *t;
        const struct options *o;
        const char *name;
        int signal_fd; /* SIGTERM, SIGINT, SIGCHLD */
        int out_fd;    /* the command's stdout and stderr; -1: the runner's */
        int err_fd;
        bool stopping; /* SIGTERM or SIGINT came */
        char **argv;   /* the command as executed */
};

/* How one run went, as the Complete reports it. */
struct run_end {
        struct timerd_run_result result;
        enum timerd_outcome outcome;
        uint64_t duration_usec;
};

static uint64_t monotonic_usec(void)
{
        struct clocks now;

        return clocks_read(&now) < 0 ? 0 : now.monotonic_usec;
}

/* Reads the signals that came: notes a stop, reports whether the child was among them. */
static bool read_signals(struct runner *rn)
{
        struct signalfd_siginfo si;
        bool child = false;

        while (read(rn->signal_fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
                if (si.ssi_signo == SIGCHLD)
                        child = true;
                else
                        rn->stopping = true;
        }
        return child;
}

/* Wait up to timeout_usec (UINT64_MAX: no limit) for the signal fd or `fd` (-1: none). */
static int poll_for(struct runner *rn, int fd, short events, uint64_t timeout_usec)
{
        struct pollfd fds[2] = {{.fd = rn->signal_fd, .events = POLLIN},
                                {.fd = fd, .events = events}};
        int timeout_ms = timeout_usec == UINT64_MAX ? -1
                         : timeout_usec / USEC_PER_MSEC > INT32_MAX
                             ? INT32_MAX
                             : (int)((timeout_usec + USEC_PER_MSEC - 1) / USEC_PER_MSEC);

        if (poll(fds, fd >= 0 ? 2 : 1, timeout_ms) < 0 && errno != EINTR)
                return -errno;
        return 0;
}

/* The timer as the command line declares it; a once timer that already has its firing (or had
 * it) is left as it is, so that restarting the runner does not run the command again. */
static int declare(struct runner *rn)
{
        const struct options *o = rn->o;
        struct timerd_claim claim;
        struct timerd_timer timer;
        uint64_t deadline = 0;
        bool created;
        int r;

        /* Another declaration is left to Reconcile, to refuse. */
        if (o->declaration.policy == TIMERD_POLICY_ONCE &&
            timerd_get(rn->t, rn->name, TIMERD_OWNER_SELF, &timer) >= 0 &&
            timer.declaration.policy == TIMERD_POLICY_ONCE &&
            timer.declaration.clock == o->declaration.clock &&
            timer.declaration.lifetime == o->declaration.lifetime &&
            timer.declaration.delivery == o->declaration.delivery &&
            (timer.has_next || timer.pending || timer.run_active || timer.runs > 0))
                return 0;
        if (o->start_option &&
            timestamp_on_clock(&o->start, &o->now, o->declaration.clock, &deadline) < 0)
                return -TIMERD_E_OVERFLOW;
        r = timerd_reconcile(rn->t, rn->name, &o->declaration, TIMERD_DESIRED_SCHEDULED, deadline,
                             &claim, &created);
        return r < 0 ? r : 0;
}

/* A broken connection is mended: reconnect with backoff, declare again. 1 when stopped. */
static int reconnect(struct runner *rn)
{
        uint64_t backoff = BACKOFF_FIRST_USEC;
        int r;

        fprintf(stderr, "timerctl: run %s: lost the service, reconnecting\n", rn->name);
        for (;;) {
                r = poll_for(rn, -1, 0, backoff);
                if (r < 0)
                        return r;
                read_signals(rn);
                if (rn->stopping)
                        return 1;
                if (timerd_reconnect(rn->t) >= 0 && declare(rn) >= 0)
                        return 0;
                backoff = backoff * 2 > BACKOFF_LONGEST_USEC ? BACKOFF_LONGEST_USEC : backoff * 2;
        }
}

struct firing_wait {
        bool done;
        int error;
        struct timerd_firing firing;
};

static void on_firing(struct timerd *t, int error, const struct timerd_firing *firing,
                      void *userdata)
{
        struct firing_wait *w = userdata;

        (void)t;
        w->done = true;
        w->error = error;
        if (error == 0)
                w->firing = *firing;
}

/* The next firing; 1 when stopped first (the Wait goes with the connection). */
static int wait_firing(struct runner *rn, struct timerd_firing *ret)
{
        struct firing_wait w = {};
        uint64_t when, timeout;
        int r;

        r = timerd_wait_async(rn->t, &rn->name, 1, 0, on_firing, &w);
        if (r < 0)
                return r;
        while (!w.done) {
                timeout = UINT64_MAX;
                if (timerd_get_timeout(rn->t, &when) > 0) {
                        uint64_t now = monotonic_usec();
                        timeout = when > now ? when - now : 0;
                }
                r = poll_for(rn, timerd_get_fd(rn->t), (short)timerd_get_events(rn->t), timeout);
                if (r < 0)
                        return r;
                read_signals(rn);
                if (rn->stopping)
                        return 1;
                r = timerd_process(rn->t);
                if (r < 0 && !w.done)
                        return r;
        }
        if (w.error < 0)
                return w.error;
        *ret = w.firing;
        return 0;
}

static int spawn_command(struct runner *rn, pid_t *ret)
{
        posix_spawn_file_actions_t actions;
        posix_spawnattr_t attr;
        sigset_t none, defaults;
        int r;

        sigemptyset(&none);
        sigemptyset(&defaults);
        sigaddset(&defaults, SIGTERM);
        sigaddset(&defaults, SIGINT);
        sigaddset(&defaults, SIGCHLD);
        sigaddset(&defaults, SIGPIPE);
        r = posix_spawnattr_init(&attr);
        if (r != 0)
                return -r;
        r = posix_spawn_file_actions_init(&actions);
        if (r != 0) {
                posix_spawnattr_destroy(&attr);
                return -r;
        }
        /* The command starts with no signal blocked, each at its default, in its own process
         * group: a timeout's signals reach what it started too. */
        r = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF |
                                                POSIX_SPAWN_SETPGROUP);
        if (r == 0)
                r = posix_spawnattr_setsigmask(&attr, &none);
        if (r == 0)
                r = posix_spawnattr_setsigdefault(&attr, &defaults);
        if (r == 0 && rn->out_fd >= 0)
                r = posix_spawn_file_actions_adddup2(&actions, rn->out_fd, STDOUT_FILENO);
        if (r == 0 && rn->err_fd >= 0)
                r = posix_spawn_file_actions_adddup2(&actions, rn->err_fd, STDERR_FILENO);
        if (r == 0)
                r = posix_spawnp(ret, rn->argv[0], &actions, &attr, rn->argv, environ);
        posix_spawn_file_actions_destroy(&actions);
        posix_spawnattr_destroy(&attr);
        return -r;
}

/* Reap the command if it ended: 1 with its wait status, 0 while it runs. */
static int reap(pid_t pid, int *ret_status)
{
        pid_t r = waitpid(pid, ret_status, WNOHANG);

        if (r < 0)
                return -errno;
        return r == pid;
}

static void end_from_status(struct runner *rn, int status, enum timerd_exit ended_by,
                            struct run_end *ret)
{
        bool expected = rn->o->failure_is_expected;

        if (WIFEXITED(status)) {
                ret->result =
                    (struct timerd_run_result){TIMERD_EXIT_EXITED, (uint32_t)WEXITSTATUS(status)};
                ret->outcome = WEXITSTATUS(status) == 0 ? TIMERD_OUTCOME_SUCCESS
                                                        : TIMERD_OUTCOME_EXPECTED_FAILURE;
        } else {
                ret->result = (struct timerd_run_result){TIMERD_EXIT_SIGNALED,
                                                         (uint32_t)WTERMSIG(status) & 0xff};
                ret->outcome =
                    expected ? TIMERD_OUTCOME_EXPECTED_FAILURE : TIMERD_OUTCOME_INVARIANT_FAILURE;
        }
        if (ended_by == TIMERD_EXIT_NONE)
                return;
        /* Ended by the runner: what signal did it (0: it exited after SIGTERM). */
        ret->result = (struct timerd_run_result){
            ended_by, WIFSIGNALED(status) ? (uint32_t)WTERMSIG(status) & 0xff : 0};
        /* A stop asked of the runner is no fault of the job: the timer goes on. */
        ret->outcome = ended_by == TIMERD_EXIT_INTERRUPTED || expected
                           ? TIMERD_OUTCOME_EXPECTED_FAILURE
                           : TIMERD_OUTCOME_INVARIANT_FAILURE;
}

/*
 * Run the command once and wait for its end: its timeout or a stop sends SIGTERM to its process
 * group, then SIGKILL after the grace.
 */
static int run_command(struct runner *rn, struct run_end *ret)
{
        const struct options *o = rn->o;
        uint64_t grace = o->grace_usec > 0 ? o->grace_usec : GRACE_DEFAULT_USEC;
        uint64_t start = monotonic_usec(), now, until;
        enum timerd_exit ended_by = TIMERD_EXIT_NONE;
        enum { RUNNING, TERMINATING, KILLED } phase = RUNNING;
        int status, r;
        pid_t pid;

        r = spawn_command(rn, &pid);
        if (r < 0) {
                /* As a shell's 127: the command could not be started. */
                fprintf(stderr, "timerctl: run %s: cannot start %s: %s\n", rn->name, rn->argv[0],
                        strerror(-r));
                *ret = (struct run_end){.result = {TIMERD_EXIT_EXITED, 127},
                                        .outcome = TIMERD_OUTCOME_EXPECTED_FAILURE};
                return 0;
        }
        until = o->timeout_usec > 0 ? start + o->timeout_usec : UINT64_MAX;
        while ((r = reap(pid, &status)) == 0) {
                now = monotonic_usec();
                if (rn->stopping && ended_by == TIMERD_EXIT_NONE) {
                        ended_by = TIMERD_EXIT_INTERRUPTED;
                        until = now;
                }
                if (now >= until) {
                        if (phase == RUNNING) {
                                if (ended_by == TIMERD_EXIT_NONE)
                                        ended_by = TIMERD_EXIT_TIMED_OUT;
                                (void)kill(-pid, SIGTERM);
                                phase = TERMINATING;
                                until = now + grace;
                        } else {
                                (void)kill(-pid, SIGKILL);
                                phase = KILLED;
                                until = UINT64_MAX;
                        }
                        continue;
                }
                r = poll_for(rn, -1, 0, until == UINT64_MAX ? UINT64_MAX : until - now);
                if (r < 0)
                        break;
                read_signals(rn);
        }
        if (r < 0) {
                (void)kill(-pid, SIGKILL);
                (void)waitpid(pid, &status, 0);
                return r;
        }
        end_from_status(rn, status, ended_by, ret);
        ret->duration_usec = monotonic_usec() - start;
        return 0;
}

static int run_failures_stop(struct runner *rn, const struct run_end *end,
                             enum timerd_directive *ret)
{
        struct timerd_timer timer;
        int r;

        *ret = TIMERD_DIRECTIVE_CONTINUE;
        if (rn->o->max_failures == 0 || end->outcome != TIMERD_OUTCOME_EXPECTED_FAILURE)
                return 0;
        /* The service counts failures in a row, across runners and their restarts. */
        r = timerd_get(rn->t, rn->name, TIMERD_OWNER_SELF, &timer);
        if (r < 0)
                return r;
        if (timer.consecutive_expected_failures + 1 >= rn->o->max_failures) {
                fprintf(stderr,
                        "timerctl: run %s: %" PRIu64 " failures in a row, stopping the timer\n",
                        rn->name, rn->o->max_failures);
                *ret = TIMERD_DIRECTIVE_STOP;
        }
        return 0;
}

static void report_end(const struct runner *rn, const struct timerd_firing *firing,
                       const struct run_end *end)
{
        char span[TIMESPAN_FORMAT_MAX], result[RUN_RESULT_MAX], word[32];
        struct timerd_timer as_timer = {.last_result = end->result, .last_outcome = end->outcome};
        const char *outcome = timerd_outcome_to_string(end->outcome);
        size_t i;

        for (i = 0; outcome && outcome[i] != 0 && i < sizeof(word) - 1; i++)
                word[i] = outcome[i] == '_' ? '-' : outcome[i];
        word[i] = 0;
        fprintf(stderr, "timerctl: run %s: run %" PRIu64 ": %s after %s (%s)\n", rn->name,
                firing->token.run, format_run_result(result, &as_timer),
                timespan_format(span, end->duration_usec, USEC_PER_MSEC), word);
}

/* Complete the run, once more on a new connection if this one broke meanwhile. */
static int complete(struct runner *rn, const struct timerd_firing *firing,
                    const struct run_end *end)
{
        enum timerd_directive directive;
        int r;

        r = run_failures_stop(rn, end, &directive);
        for (int attempt = 0; attempt < 2; attempt++) {
                if (r >= 0)
                        r = timerd_complete_result(rn->t, &firing->token, end->outcome, directive,
                                                   end->duration_usec, &end->result);
                if (r != -TIMERD_E_DISCONNECTED && r != -TIMERD_E_SHUTTING_DOWN)
                        break;
                r = reconnect(rn);
                if (r != 0)
                        return r < 0 ? r : -TIMERD_E_DISCONNECTED;
                if (attempt == 0)
                        r = run_failures_stop(rn, end, &directive);
        }
        if (r < 0)
                fprintf(stderr, "timerctl: run %s: cannot complete run %" PRIu64 ": %s\n", rn->name,
                        firing->token.run, timerd_strerror(r));
        return r;
}

/* The command line, or "sh -c 'WORDS…'" with --shell; NULL when out of memory. */
static char **command_argv(const struct options *o)
{
        size_t size = 1;
        char **argv, *line;

        if (!o->shell) {
                argv = calloc(o->n_command + 1, sizeof(char *));
                if (argv)
                        memcpy(argv, o->command, o->n_command * sizeof(char *));
                return argv;
        }
        for (size_t i = 0; i < o->n_command; i++)
                size += strlen(o->command[i]) + 1;
        argv = calloc(4 + 1, sizeof(char *));
        line = calloc(size, 1);
        if (!argv || !line) {
                free(argv);
                free(line);
                return NULL;
        }
        for (size_t i = 0; i < o->n_command; i++) {
                if (i > 0)
                        strcat(line, " ");
                strcat(line, o->command[i]);
        }
        argv[0] = (char *)"/bin/sh";
        argv[1] = (char *)"-c";
        argv[2] = line;
        return argv;
}

static void command_argv_free(const struct options *o, char **argv)
{
        if (argv && o->shell)
                free(argv[2]);
        free(argv);
}

/* Under systemd ($JOURNAL_STREAM) or with --journal, the command's output goes to the journal
 * under the job's name. */
static int open_output(struct runner *rn)
{
        if (!rn->o->journal && !getenv("JOURNAL_STREAM"))
                return 0;
        rn->out_fd = sd_journal_stream_fd(rn->name, LOG_INFO, 0);
        if (rn->out_fd < 0)
                return rn->out_fd;
        rn->err_fd = sd_journal_stream_fd(rn->name, LOG_WARNING, 0);
        return rn->err_fd < 0 ? rn->err_fd : 0;
}

/* Firings until stopped: EXIT_STATUS_SUCCESS after a stop, or when the timer has no more
 * firings and its last run succeeded. */
static int run_loop(struct runner *rn)
{
        struct timerd_firing firing;
        struct run_end end;
        bool last_success = true;
        int r;

        for (;;) {
                r = wait_firing(rn, &firing);
                if (r == -TIMERD_E_DISCONNECTED || r == -TIMERD_E_SHUTTING_DOWN) {
                        r = reconnect(rn);
                        if (r == 0)
                                continue;
                }
                if (r == 1)
                        return EXIT_STATUS_SUCCESS;
                if (r == -TIMERD_E_NOTHING_TO_WAIT_FOR) {
                        fprintf(stderr, "timerctl: run %s: the timer will not fire again\n",
                                rn->name);
                        return last_success ? EXIT_STATUS_SUCCESS : EXIT_STATUS_FAILURE;
                }
                if (r < 0)
                        return call_failed(rn->t, "run", rn->name, r);

                r = run_command(rn, &end);
                if (r < 0) {
                        fprintf(stderr, "timerctl: run %s: %s\n", rn->name, strerror(-r));
                        return EXIT_STATUS_FAILURE;
                }
                report_end(rn, &firing, &end);
                last_success = end.outcome == TIMERD_OUTCOME_SUCCESS;
                r = complete(rn, &firing, &end);
                if (rn->stopping)
                        return EXIT_STATUS_SUCCESS;
                if (r < 0 && r != -TIMERD_E_NOT_RUNNING && r != -TIMERD_E_NOT_FOUND &&
                    r != -TIMERD_E_REGISTRATION_EXPIRED)
                        return exit_status_of(r);
        }
}

int verb_run(struct timerd *t, const struct options *o)
{
        struct runner rn = {.t = t, .o = o, .name = o->args[0], .out_fd = -1, .err_fd = -1};
        sigset_t mask;
        int r, status;

        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGCHLD);
        if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0 ||
            (rn.signal_fd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC)) < 0) {
                fprintf(stderr, "timerctl: run: cannot take signals: %s\n", strerror(errno));
                return EXIT_STATUS_FAILURE;
        }
        rn.argv = command_argv(o);
        if (!rn.argv) {
                close(rn.signal_fd);
                return call_failed(t, "run", rn.name, -ENOMEM);
        }
        r = open_output(&rn);
        if (r < 0) {
                fprintf(stderr, "timerctl: run %s: cannot open the journal: %s\n", rn.name,
                        strerror(-r));
                status = EXIT_STATUS_FAILURE;
        } else if ((r = declare(&rn)) < 0)
                status = call_failed(t, "run", rn.name, r);
        else
                status = run_loop(&rn);
        if (rn.out_fd >= 0)
                close(rn.out_fd);
        if (rn.err_fd >= 0)
                close(rn.err_fd);
        command_argv_free(o, rn.argv);
        close(rn.signal_fd);
        return status;
}
