/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "bench/local-timers.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <systemd/sd-event.h>
#include <time.h>
#include <unistd.h>

#include "bench/harness.h"

/* A min-heap of deadlines; which timer a deadline belongs to does not matter here. */
struct heap {
        uint64_t *v;
        size_t n;
};

static void heap_push(struct heap *h, uint64_t key)
{
        size_t i = h->n++;

        while (i > 0 && key < h->v[(i - 1) / 2]) {
                h->v[i] = h->v[(i - 1) / 2];
                i = (i - 1) / 2;
        }
        h->v[i] = key;
}

static void heap_pop(struct heap *h)
{
        uint64_t key = h->v[--h->n];
        size_t i = 0;

        for (;;) {
                size_t c = 2 * i + 1;
                if (c >= h->n)
                        break;
                if (c + 1 < h->n && h->v[c + 1] < h->v[c])
                        c++;
                if (h->v[c] >= key)
                        break;
                h->v[i] = h->v[c];
                i = c;
        }
        if (h->n > 0)
                h->v[i] = key;
}

static void timerfd_arm(int fd, uint64_t usec)
{
        struct itimerspec its = {
            .it_value = {.tv_sec = (time_t)(usec / 1000000),
                         .tv_nsec = (long)(usec % 1000000) * 1000},
        };

        if (timerfd_settime(fd, TFD_TIMER_ABSTIME, &its, NULL) < 0)
                die("timerfd_settime: %m");
}

void local_timerfd_run(const struct schedule_spec *spec, struct samples *ret_lateness)
{
        struct heap h = {.v = xcalloc(spec->active, sizeof(uint64_t))};
        struct schedule s;
        size_t fired = 0;

        schedule_init(&s, spec);
        for (size_t i = spec->window; i < spec->active; i++)
                heap_push(&h, schedule_background(&s));
        schedule_start_probes(&s);
        for (size_t i = 0; i < spec->window; i++)
                heap_push(&h, schedule_next_probe(&s));

        int fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
        if (fd < 0)
                die("timerfd_create: %m");
        while (fired < spec->warmup + spec->probes) {
                uint64_t expirations;

                timerfd_arm(fd, h.v[0]);
                if (read(fd, &expirations, sizeof(expirations)) < 0 && errno != EINTR)
                        die("read timerfd: %m");
                uint64_t now = now_usec();
                while (h.n > 0 && h.v[0] <= now) {
                        if (fired++ >= spec->warmup)
                                samples_add(ret_lateness, now - h.v[0]);
                        heap_pop(&h);
                        heap_push(&h, schedule_next_probe(&s));
                }
        }
        close(fd);
        free(h.v);
}

struct sd_event_probes {
        const struct schedule_spec *spec;
        struct schedule schedule;
        struct samples *lateness;
        size_t fired;
};

static int on_background(sd_event_source *source, uint64_t usec, void *userdata)
{
        (void)source;
        (void)usec;
        (void)userdata;
        die("a background timer fired");
}

static int on_probe(sd_event_source *source, uint64_t usec, void *userdata)
{
        struct sd_event_probes *p = userdata;
        uint64_t now = now_usec(), deadline;
        int r;
        (void)usec;

        r = sd_event_source_get_time(source, &deadline);
        if (r < 0)
                die("sd_event_source_get_time: %s", strerror(-r));
        if (p->fired++ >= p->spec->warmup)
                samples_add(p->lateness, now > deadline ? now - deadline : 0);
        r = sd_event_source_set_time(source, schedule_next_probe(&p->schedule));
        if (r >= 0)
                r = sd_event_source_set_enabled(source, SD_EVENT_ONESHOT);
        if (r < 0)
                die("re-arming an sd-event timer: %s", strerror(-r));
        return 0;
}

void local_sd_event_run(const struct schedule_spec *spec, struct samples *ret_lateness)
{
        struct sd_event_probes p = {.spec = spec, .lateness = ret_lateness};
        sd_event_source **probes = xcalloc(spec->window, sizeof(*probes));
        sd_event *e;
        int r;

        r = sd_event_new(&e);
        if (r < 0)
                die("sd_event_new: %s", strerror(-r));
        schedule_init(&p.schedule, spec);
        /* Accuracy 1 µs: sd-event's default (0 → 250 ms) would coalesce everything. */
        for (size_t i = spec->window; i < spec->active && r >= 0; i++)
                r = sd_event_add_time(e, NULL, CLOCK_MONOTONIC, schedule_background(&p.schedule), 1,
                                      on_background, NULL);
        schedule_start_probes(&p.schedule);
        for (size_t i = 0; i < spec->window && r >= 0; i++)
                r = sd_event_add_time(e, &probes[i], CLOCK_MONOTONIC,
                                      schedule_next_probe(&p.schedule), 1, on_probe, &p);
        if (r < 0)
                die("sd_event_add_time: %s", strerror(-r));
        while (p.fired < spec->warmup + spec->probes) {
                r = sd_event_run(e, UINT64_MAX);
                if (r < 0)
                        die("sd_event_run: %s", strerror(-r));
        }
        for (size_t i = 0; i < spec->window; i++)
                sd_event_source_unref(probes[i]);
        free(probes);
        sd_event_unref(e);
}
