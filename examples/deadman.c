/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A deadman switch: a worker process kicks watchdog timers while it makes progress; when it hangs,
 * the watchdogs fire anyway, because they live in timerd.
 *
 * Two watchdogs, two deliveries:
 *   - the worker's own, delivery `signal`: timerd sends SIGALRM to the process that registered it
 *     (through its pidfd, never to a pid someone names). Its default action ends the hung worker.
 *   - the supervisor's, delivery `notify`: the firing goes to the supervisor's Wait, so it learns
 *     of the hang, also when the worker is already gone. The worker kicks it with the claim the
 *     supervisor got: both run as the same user, who owns the timer.
 * The worker's deadline is the shorter: by the time the supervisor hears, the worker is ended.
 *
 *   example-deadman      a worker that stops kicking after 3 rounds; it is ended, the supervisor
 *                        notices; exit status 0 when it went so
 */
#define _GNU_SOURCE /* sigabbrev_np() */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <timerd/timerd.h>

#define SUPERVISOR_WATCHDOG      "example-deadman"
#define WORKER_WATCHDOG          "example-deadman-worker"
#define WORKER_DEADLINE_USEC     400000ULL /* the worker must kick within this, or die */
#define SUPERVISOR_DEADLINE_USEC 600000ULL
#define KICK_USEC                100000U
#define ROUNDS                   3
#define REAP_ATTEMPTS            100 /* of 10 ms: how long the supervisor waits for the end */

static int worker_watchdog(struct timerd *t, struct timerd_claim *ret)
{
        struct timerd_declaration d;

        timerd_declaration_init(&d, TIMERD_POLICY_WATCHDOG, WORKER_DEADLINE_USEC);
        d.delivery = TIMERD_DELIVERY_SIGNAL; /* SIGALRM, the default */
        return timerd_register(t, WORKER_WATCHDOG, &d, NULL, false, ret);
}

/* Work, and kick both watchdogs after each round; then hang as a stuck worker would. */
static int work(const struct timerd_claim *supervisor)
{
        struct timerd_claim own;
        struct timerd *t;
        int r;

        r = timerd_connect(NULL, &t);
        if (r >= 0)
                r = worker_watchdog(t, &own);
        for (int round = 0; r >= 0 && round < ROUNDS; round++) {
                usleep(KICK_USEC);
                r = timerd_kick(t, &own, NULL, NULL);
                if (r >= 0)
                        r = timerd_kick(t, supervisor, NULL, NULL);
                printf("worker: round %d done, kicked\n", round + 1);
                fflush(stdout);
        }
        if (r < 0) {
                fprintf(stderr, "worker: %s\n", timerd_strerror(r));
                return 1;
        }
        printf("worker: stuck\n");
        fflush(stdout);
        for (;;)
                pause();
}

/* The worker's end: by its watchdog's signal, or stopped here when that did not come. */
static bool reap(pid_t worker)
{
        int status;

        for (int i = 0; i < REAP_ATTEMPTS; i++) {
                if (waitpid(worker, &status, WNOHANG) == worker) {
                        if (WIFSIGNALED(status))
                                printf("supervisor: the worker was ended by SIG%s\n",
                                       sigabbrev_np(WTERMSIG(status)));
                        return WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM;
                }
                usleep(10000);
        }
        printf("supervisor: the worker is still there: stopping it\n");
        kill(worker, SIGKILL);
        waitpid(worker, NULL, 0);
        return false;
}

int main(void)
{
        const char *const names[] = {SUPERVISOR_WATCHDOG};
        struct timerd_declaration d;
        struct timerd_firing firing;
        struct timerd_claim claim;
        struct timerd *t;
        pid_t worker;
        bool ended;
        int r;

        r = timerd_connect(NULL, &t);
        if (r < 0) {
                fprintf(stderr, "deadman: cannot connect to timerd: %s\n", timerd_strerror(r));
                return 1;
        }
        /* Transient: it goes away with the supervisor, the one who reacts to it. */
        timerd_declaration_init(&d, TIMERD_POLICY_WATCHDOG, SUPERVISOR_DEADLINE_USEC);
        r = timerd_register(t, SUPERVISOR_WATCHDOG, &d, NULL, false, &claim);
        if (r < 0) {
                fprintf(stderr, "deadman: cannot register: %s\n", timerd_strerror(r));
                timerd_close(t);
                return 1;
        }

        fflush(stdout);
        worker = fork();
        if (worker < 0) {
                perror("deadman: fork");
                timerd_close(t);
                return 1;
        }
        if (worker == 0)
                _exit(work(&claim)); /* on a connection of its own: t is the parent's */

        r = timerd_wait(t, names, 1, 0, &firing);
        if (r >= 0) {
                printf("supervisor: the worker missed its deadline\n");
                r = timerd_complete(t, &firing.token, TIMERD_OUTCOME_SUCCESS, TIMERD_DIRECTIVE_STOP,
                                    0);
        }
        if (r < 0)
                fprintf(stderr, "supervisor: %s\n", timerd_strerror(r));
        ended = reap(worker);
        if (r >= 0)
                r = timerd_unregister(t, &claim);
        timerd_close(t);
        return r >= 0 && ended ? 0 : 1;
}
