/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "probe.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "schedstat.h"
#include "timerd/timerd.h"

#define PROBE_INTERVAL_USEC 5000

static uint64_t now_usec(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static void record_failure(struct probe *p, int error)
{
        if (p->failures++ == 0)
                p->first_error = error;
}

static void *probe_run(void *userdata)
{
        struct probe *p = userdata;
        struct timerd *t = NULL;

        while (!atomic_load(&p->stop)) {
                struct timerd_status st;
                uint64_t waited_before = 0, waited_after = 0;
                int waits = schedstat_waited(p->service, &waited_before);
                uint64_t start = now_usec();
                /* A connection the service dropped is a failure; the next round reconnects. */
                int r = t ? 0 : timerd_connect(p->socket, &t);
                if (r == 0)
                        r = timerd_status(t, &st);
                uint64_t took = now_usec() - start;
                if (waits == 0)
                        waits = schedstat_waited(p->service, &waited_after);
                if (r < 0) {
                        record_failure(p, r);
                        timerd_close(t);
                        t = NULL;
                } else if (waits < 0)
                        record_failure(p, waits);
                else {
                        uint64_t waited = waited_after - waited_before;
                        uint64_t net = took > waited ? took - waited : 0;

                        p->max_usec = net > p->max_usec ? net : p->max_usec;
                        p->max_wall_usec = took > p->max_wall_usec ? took : p->max_wall_usec;
                }
                atomic_fetch_add(&p->calls, 1);
                usleep(PROBE_INTERVAL_USEC);
        }
        timerd_close(t);
        return NULL;
}

void probe_start(struct probe *p, const char *socket, pid_t service)
{
        *p = (struct probe){.service = service};
        snprintf(p->socket, sizeof(p->socket), "%s", socket);
        if (pthread_create(&p->thread, NULL, probe_run, p) != 0)
                abort();
        probe_wait(p, 1);
}

void probe_wait(struct probe *p, uint64_t calls)
{
        while (atomic_load(&p->calls) < calls)
                usleep(1000);
}

void probe_stop(struct probe *p)
{
        atomic_store(&p->stop, true);
        if (pthread_join(p->thread, NULL) != 0)
                abort();
}
