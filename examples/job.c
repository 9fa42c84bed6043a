/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A job that runs every 5 minutes after its previous run completed, and survives restarts: of
 * itself, and of timerd.
 *
 * The timer is *retained*: it stays when this program exits, and fires while it is down (the
 * firing waits, pending, for the next Wait). On start, and again after timerd restarted, the
 * program restates the declaration with timerd_reconcile(), which is idempotent: it creates the
 * timer when missing and otherwise leaves its schedule alone.
 *
 * A restart of timerd breaks the connection: every call returns -TIMERD_E_DISCONNECTED. The
 * program reconnects, and the service's epoch (timerd_status()) tells whether it is a new start
 * of the service, whose timers must be restated, or the same one.
 *
 *   example-job          run forever, every 5 minutes
 *   example-job N        run N times, every second, then remove the timer (a demo, and the test)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <timerd/timerd.h>

#define JOB_NAME           "example-job"
#define USEC_PER_SEC       1000000ULL
#define RECONNECT_ATTEMPTS 30

static uint64_t now_usec(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * USEC_PER_SEC + (uint64_t)ts.tv_nsec / 1000;
}

static int declare(struct timerd *t, uint64_t cadence_usec, struct timerd_claim *ret)
{
        struct timerd_declaration d;
        bool created;
        int r;

        timerd_declaration_init(&d, TIMERD_POLICY_AFTER_COMPLETION, cadence_usec);
        d.lifetime = TIMERD_LIFETIME_RETAINED;
        r = timerd_reconcile(t, JOB_NAME, &d, TIMERD_DESIRED_SCHEDULED, 0, ret, &created);
        if (r < 0)
                fprintf(stderr, "job: cannot declare the timer: %s\n", timerd_strerror(r));
        else
                printf("job: timer %s\n", created ? "created" : "already there");
        return r;
}

/* Connect again; restate the timer when the service is a new one. */
static int reconnect(struct timerd *t, char epoch[static 128], uint64_t cadence_usec,
                     struct timerd_claim *claim)
{
        struct timerd_status status;
        int r = -ECONNREFUSED;

        for (int i = 0; i < RECONNECT_ATTEMPTS && r < 0; i++) {
                sleep(1);
                r = timerd_reconnect(t);
        }
        if (r >= 0)
                r = timerd_status(t, &status);
        if (r < 0) {
                fprintf(stderr, "job: timerd is gone: %s\n", timerd_strerror(r));
                return r;
        }
        if (strcmp(status.epoch, epoch) == 0)
                return 0;
        printf("job: timerd restarted (epoch %s): restating the timer\n", status.epoch);
        snprintf(epoch, 128, "%s", status.epoch);
        return declare(t, cadence_usec, claim);
}

static void run_the_job(uint64_t run)
{
        printf("job: run %llu\n", (unsigned long long)run);
        fflush(stdout);
}

int main(int argc, char *argv[])
{
        const char *const names[] = {JOB_NAME};
        unsigned long runs = argc > 1 ? strtoul(argv[1], NULL, 10) : 0;
        uint64_t cadence_usec = runs > 0 ? USEC_PER_SEC : 5 * 60 * USEC_PER_SEC;
        struct timerd_status status;
        struct timerd_firing firing;
        struct timerd_claim claim;
        char epoch[128];
        struct timerd *t;
        int r;

        r = timerd_connect(NULL, &t);
        if (r < 0) {
                fprintf(stderr, "job: cannot connect to timerd: %s\n", timerd_strerror(r));
                return 1;
        }
        r = timerd_status(t, &status);
        if (r < 0 || declare(t, cadence_usec, &claim) < 0) {
                timerd_close(t);
                return 1;
        }
        snprintf(epoch, sizeof(epoch), "%s", status.epoch);

        for (unsigned long done = 0; runs == 0 || done < runs;) {
                uint64_t start;

                r = timerd_wait(t, names, 1, 0, &firing);
                if (r == -TIMERD_E_DISCONNECTED || r == -TIMERD_E_SHUTTING_DOWN) {
                        if (reconnect(t, epoch, cadence_usec, &claim) < 0)
                                break;
                        continue;
                }
                if (r < 0) {
                        fprintf(stderr, "job: wait: %s\n", timerd_strerror(r));
                        break;
                }
                start = now_usec();
                run_the_job(firing.token.run);
                /* The next run is due 5 minutes after this call. */
                r = timerd_complete(t, &firing.token, TIMERD_OUTCOME_SUCCESS,
                                    TIMERD_DIRECTIVE_CONTINUE, now_usec() - start);
                if (r < 0)
                        fprintf(stderr, "job: complete: %s\n", timerd_strerror(r));
                done++;
        }

        if (runs > 0 && r >= 0)
                r = timerd_unregister(t, &claim);
        timerd_close(t);
        return r < 0 ? 1 : 0;
}
