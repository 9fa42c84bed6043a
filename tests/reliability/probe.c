/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "probe.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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
                uint64_t start = now_usec();
                /* A connection the service dropped is a failure; the next round reconnects. */
                int r = t ? 0 : timerd_connect(p->socket, &t);
                if (r == 0)
                        r = timerd_status(t, &st);
                uint64_t took = now_usec() - start;
                p->calls++;
                if (r < 0) {
                        record_failure(p, r);
                        timerd_close(t);
                        t = NULL;
                } else if (took > p->max_usec)
                        p->max_usec = took;
                usleep(PROBE_INTERVAL_USEC);
        }
        timerd_close(t);
        return NULL;
}

void probe_start(struct probe *p, const char *socket)
{
        *p = (struct probe){0};
        snprintf(p->socket, sizeof(p->socket), "%s", socket);
        if (pthread_create(&p->thread, NULL, probe_run, p) != 0)
                abort();
}

void probe_stop(struct probe *p)
{
        atomic_store(&p->stop, true);
        if (pthread_join(p->thread, NULL) != 0)
                abort();
}
