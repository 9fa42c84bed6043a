/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Testing a program that uses timerd without waiting for time to pass: a daily report, run at
 * 03:00 UTC every day, tested over 30 days in a fraction of a second.
 *
 * The test starts a private timerd on a virtual clock (timerd_test_start(): timerd --clock
 * virtual on a temporary socket) and moves its clocks itself: each timerd_test_advance_to() lets
 * time pass up to the next 03:00, where the report's timer fires, exactly at its deadline. The
 * code under test is unchanged: it connects, declares its timer, waits and completes, as it does
 * against the system's timerd.
 *
 *   example-test-daily-job     $TIMERD_BINARY, else the installed timerd
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <timerd/timerd-test.h>
#include <timerd/timerd.h>

#define USEC_PER_SEC 1000000ULL
#define USEC_PER_DAY (86400 * USEC_PER_SEC)
#define DAYS         30

/* ---- The program under test: a daily report. ---- */

struct report {
        unsigned count;
        uint64_t last_deadline_usec; /* on the wall clock */
};

static int report_declare(struct timerd *t)
{
        struct timerd_declaration d;
        struct timerd_claim claim;
        bool created;

        timerd_declaration_init(&d, TIMERD_POLICY_CALENDAR, 0);
        snprintf(d.calendar, sizeof(d.calendar), "*-*-* 03:00");
        snprintf(d.timezone, sizeof(d.timezone), "UTC");
        return timerd_reconcile(t, "daily-report", &d, TIMERD_DESIRED_SCHEDULED, 0, &claim,
                                &created);
}

/* One day's work: take the firing, write the report, complete the run. */
static int report_run_once(struct timerd *t, struct report *r)
{
        const char *names[] = {"daily-report"};
        struct timerd_firing f;
        int e = timerd_wait(t, names, 1, 5 * USEC_PER_SEC, &f);

        if (e < 0)
                return e;
        r->count++;
        r->last_deadline_usec = f.deadline_usec;
        return timerd_complete(t, &f.token, TIMERD_OUTCOME_SUCCESS, TIMERD_DIRECTIVE_CONTINUE, 0);
}

/* ---- The test. ---- */

static uint64_t real_usec(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * USEC_PER_SEC + (uint64_t)ts.tv_nsec / 1000;
}

static int check(int e, const char *what)
{
        if (e < 0)
                fprintf(stderr, "test-daily-job: %s: %s\n", what, timerd_strerror(e));
        return e;
}

/* 30 days: each report at 03:00 UTC of its day, exactly, and only one a day. */
static int run_test(struct timerd *t)
{
        struct timerd_test_clocks start;
        struct report r = {0};
        uint64_t firings;

        if (check(timerd_test_now(t, &start), "now") < 0 || check(report_declare(t), "declare") < 0)
                return 1;
        /* The virtual wall clock starts at midnight UTC: the first report is due at 03:00. */
        uint64_t first = start.realtime - start.realtime % USEC_PER_DAY + 3 * 3600 * USEC_PER_SEC;
        for (unsigned day = 0; day < DAYS; day++) {
                uint64_t due = first + day * USEC_PER_DAY;

                if (check(timerd_test_advance_to(t, TIMERD_CLOCK_REALTIME, due, &firings),
                          "advance") < 0 ||
                    check(report_run_once(t, &r), "report") < 0)
                        return 1;
                if (firings != 1 || r.count != day + 1 || r.last_deadline_usec != due) {
                        fprintf(stderr,
                                "test-daily-job: day %u: %llu firings, %u reports, the last due "
                                "%llu, expected %llu\n",
                                day + 1, (unsigned long long)firings, r.count,
                                (unsigned long long)r.last_deadline_usec, (unsigned long long)due);
                        return 1;
                }
        }
        /* Half a day more: no report before the next 03:00. */
        if (check(timerd_test_advance(t, USEC_PER_DAY / 2, &firings), "advance") < 0)
                return 1;
        if (firings != 0) {
                fprintf(stderr, "test-daily-job: a report between two 03:00s\n");
                return 1;
        }
        return 0;
}

int main(void)
{
        struct timerd_test *vt;
        struct timerd *t;
        uint64_t began = real_usec();
        int failed;

        if (check(timerd_test_start(&vt), "start a virtual-clock timerd") < 0)
                return 1;
        if (check(timerd_connect(timerd_test_socket(vt), &t), "connect") < 0) {
                timerd_test_stop(vt);
                return 1;
        }
        failed = run_test(t);
        timerd_close(t);
        if (timerd_test_stop(vt) != 0)
                failed = 1;
        if (!failed)
                printf("test-daily-job: %d daily reports over %d virtual days, each at 03:00 UTC, "
                       "in %.3f s\n",
                       DAYS, DAYS, (double)(real_usec() - began) / 1e6);
        return failed;
}
