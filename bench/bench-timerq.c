/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * Insert and cancel cost of the timer queue, directly and through the registry
 * (registry_register / registry_unregister), beside a plain binary heap written here as the
 * anchor (about 15 ns to insert and 20-50 ns to cancel at a million timers). Cancels go in random
 * order. Each size is repeated until about a million operations were timed; the best repetition
 * counts. Beside the times, the registry's heap per timer: malloc's bytes in use (chunk headers
 * and rounding included, mallinfo2()) after registering them all, minus before, divided by the
 * count; deterministic where the service's RSS per timer (bench-scale) is not.
 * Usage: bench-timerq [N...] (default 10000 100000 1000000).
 */

#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "service/core/registry.h"
#include "service/core/timerq.h"

#define NAME_LEN 16 /* "t" and a uint32_t */

struct workload {
        size_t n;
        uint64_t *deadlines;
        size_t *cancel_order; /* a permutation of 0..n-1 */
        char (*names)[NAME_LEN];
};

struct result {
        double insert_ns;
        double cancel_ns;
        double heap_bytes; /* per timer, while they are all registered (registry only) */
};

static uint64_t rng_next(uint64_t *s)
{
        *s ^= *s << 13;
        *s ^= *s >> 7;
        *s ^= *s << 17;
        return *s;
}

static uint64_t now_ns(void)
{
        struct timespec ts;

        if (clock_gettime(CLOCK_MONOTONIC, &ts) < 0) {
                perror("clock_gettime");
                exit(EXIT_FAILURE);
        }
        return (uint64_t)ts.tv_sec * UINT64_C(1000000000) + (uint64_t)ts.tv_nsec;
}

static void *xcalloc(size_t n, size_t size)
{
        void *p = calloc(n, size);

        if (!p) {
                fprintf(stderr, "out of memory\n");
                exit(EXIT_FAILURE);
        }
        return p;
}

static void workload_init(struct workload *w, size_t n)
{
        uint64_t seed = UINT64_C(0x2545f4914f6cdd1d) ^ n;

        w->n = n;
        w->deadlines = xcalloc(n, sizeof(uint64_t));
        w->cancel_order = xcalloc(n, sizeof(size_t));
        w->names = xcalloc(n, NAME_LEN);
        for (size_t i = 0; i < n; i++) {
                w->deadlines[i] = rng_next(&seed) >> 24; /* about 12 days in microseconds */
                w->cancel_order[i] = i;
                snprintf(w->names[i], NAME_LEN, "t%" PRIu32, (uint32_t)i);
        }
        for (size_t i = n - 1; i > 0; i--) {
                size_t j = rng_next(&seed) % (i + 1), t = w->cancel_order[i];

                w->cancel_order[i] = w->cancel_order[j];
                w->cancel_order[j] = t;
        }
}

static void workload_done(struct workload *w)
{
        free(w->deadlines);
        free(w->cancel_order);
        free(w->names);
}

/* The anchor: a textbook binary min-heap with a position index for removal. */
struct anchor_heap {
        uint64_t *keys;
        uint32_t *ids;
        size_t *position; /* by id */
        size_t n;
};

static void anchor_place(struct anchor_heap *h, size_t i, uint64_t key, uint32_t id)
{
        h->keys[i] = key;
        h->ids[i] = id;
        h->position[id] = i;
}

static void anchor_sift_up(struct anchor_heap *h, size_t i)
{
        uint64_t key = h->keys[i];
        uint32_t id = h->ids[i];

        while (i > 0 && key < h->keys[(i - 1) / 2]) {
                anchor_place(h, i, h->keys[(i - 1) / 2], h->ids[(i - 1) / 2]);
                i = (i - 1) / 2;
        }
        anchor_place(h, i, key, id);
}

static void anchor_sift_down(struct anchor_heap *h, size_t i)
{
        uint64_t key = h->keys[i];
        uint32_t id = h->ids[i];

        for (;;) {
                size_t c = 2 * i + 1;

                if (c >= h->n)
                        break;
                if (c + 1 < h->n && h->keys[c + 1] < h->keys[c])
                        c++;
                if (h->keys[c] >= key)
                        break;
                anchor_place(h, i, h->keys[c], h->ids[c]);
                i = c;
        }
        anchor_place(h, i, key, id);
}

static void anchor_insert(struct anchor_heap *h, uint64_t key, uint32_t id)
{
        h->keys[h->n] = key;
        h->ids[h->n] = id;
        anchor_sift_up(h, h->n++);
}

static void anchor_remove(struct anchor_heap *h, uint32_t id)
{
        size_t i = h->position[id];

        if (i != --h->n) {
                anchor_place(h, i, h->keys[h->n], h->ids[h->n]);
                if (i > 0 && h->keys[i] < h->keys[(i - 1) / 2])
                        anchor_sift_up(h, i);
                else
                        anchor_sift_down(h, i);
        }
}

static struct result run_anchor(const struct workload *w)
{
        struct anchor_heap h = {
            .keys = xcalloc(w->n, sizeof(uint64_t)),
            .ids = xcalloc(w->n, sizeof(uint32_t)),
            .position = xcalloc(w->n, sizeof(size_t)),
        };
        struct result r;
        uint64_t t0, t1, t2;

        t0 = now_ns();
        for (size_t i = 0; i < w->n; i++)
                anchor_insert(&h, w->deadlines[i], (uint32_t)i);
        t1 = now_ns();
        for (size_t i = 0; i < w->n; i++)
                anchor_remove(&h, (uint32_t)w->cancel_order[i]);
        t2 = now_ns();
        r = (struct result){.insert_ns = (double)(t1 - t0) / (double)w->n,
                            .cancel_ns = (double)(t2 - t1) / (double)w->n};
        free(h.keys);
        free(h.ids);
        free(h.position);
        return r;
}

/* What the registry's timers give the queue: an entry, and the owner and name that break ties. */
struct queued {
        struct timerq_entry entry;
        uint32_t owner;
        const char *name;
};

static bool queued_tie_before(const struct timerq_entry *a, const struct timerq_entry *b)
{
        const struct queued *x = (const void *)((const char *)a - offsetof(struct queued, entry)),
                            *y = (const void *)((const char *)b - offsetof(struct queued, entry));

        if (x->owner != y->owner)
                return x->owner < y->owner;
        return strcmp(x->name, y->name) < 0;
}

static struct result run_timerq(const struct workload *w)
{
        struct queued *entries = xcalloc(w->n, sizeof(struct queued));
        struct timerq q;
        struct result r;
        uint64_t t0, t1, t2;

        timerq_init(&q, queued_tie_before);
        /* The registry reserves as timers are declared; reserving here keeps growth out. */
        if (timerq_reserve(&q, TIMERQ_EXACT, w->n) < 0) {
                fprintf(stderr, "out of memory\n");
                exit(EXIT_FAILURE);
        }
        for (size_t i = 0; i < w->n; i++) {
                timerq_entry_init(&entries[i].entry);
                entries[i].owner = (uint32_t)(i % 64);
                entries[i].name = w->names[i];
        }

        t0 = now_ns();
        for (size_t i = 0; i < w->n; i++)
                timerq_put(&q, &entries[i].entry, w->deadlines[i], 0);
        t1 = now_ns();
        for (size_t i = 0; i < w->n; i++)
                timerq_remove(&q, &entries[w->cancel_order[i]].entry);
        t2 = now_ns();
        r = (struct result){.insert_ns = (double)(t1 - t0) / (double)w->n,
                            .cancel_ns = (double)(t2 - t1) / (double)w->n};
        timerq_done(&q);
        free(entries);
        return r;
}

static size_t heap_in_use(void)
{
        struct mallinfo2 mi = mallinfo2();

        return mi.uordblks + mi.hblkhd;
}

static void check_transition(struct td_transition t, const char *what)
{
        if (t.failure < 0) {
                fprintf(stderr, "%s failed: %d\n", what, t.failure);
                exit(EXIT_FAILURE);
        }
}

static struct result run_registry(const struct workload *w)
{
        struct registry_config config = {.first_generation = 1, .first_handle_generation = 1};
        uint64_t *generations = xcalloc(w->n, sizeof(uint64_t)), t0, t1, t2;
        struct td_now now = {};
        struct registry *reg;
        struct result r;
        size_t heap0 = heap_in_use(), heap1;

        if (registry_new(&config, &reg) < 0) {
                fprintf(stderr, "out of memory\n");
                exit(EXIT_FAILURE);
        }

        t0 = now_ns();
        for (size_t i = 0; i < w->n; i++) {
                struct td_register_args a = {
                    .caller = {.uid = (uint32_t)(i % 64), .session = 1 + i % 64},
                    .name = w->names[i],
                    .declaration = {.policy = TIMERD_POLICY_ONCE},
                    .has_start = true,
                    .start_usec = w->deadlines[i],
                };

                check_transition(registry_register(reg, &now, &a, &generations[i]), "register");
        }
        t1 = now_ns();
        heap1 = heap_in_use();
        for (size_t i = 0; i < w->n; i++) {
                size_t k = w->cancel_order[i];
                struct td_handle h = {
                    .owner = (uint32_t)(k % 64),
                    .name = w->names[k],
                    .generation = generations[k],
                };

                check_transition(registry_unregister(reg, &now, &h), "unregister");
        }
        t2 = now_ns();
        r = (struct result){
            .insert_ns = (double)(t1 - t0) / (double)w->n,
            .cancel_ns = (double)(t2 - t1) / (double)w->n,
            .heap_bytes = ((double)heap1 - (double)heap0) / (double)w->n,
        };
        registry_free(reg);
        free(generations);
        return r;
}

static struct result best_of(struct result (*run)(const struct workload *),
                             const struct workload *w, size_t reps)
{
        struct result best = run(w);

        for (size_t i = 1; i < reps; i++) {
                struct result r = run(w);

                if (r.insert_ns < best.insert_ns)
                        best.insert_ns = r.insert_ns;
                if (r.cancel_ns < best.cancel_ns)
                        best.cancel_ns = r.cancel_ns;
        }
        return best;
}

static int parse_size(const char *s, size_t *ret)
{
        char *end;
        unsigned long long v;

        errno = 0;
        v = strtoull(s, &end, 10);
        if (errno != 0 || end == s || *end != '\0' || v == 0 || v > UINT32_MAX)
                return -EINVAL;
        *ret = (size_t)v;
        return 0;
}

int main(int argc, char *argv[])
{
        static const size_t default_sizes[] = {10000, 100000, 1000000};
        size_t n_sizes = argc > 1 ? (size_t)argc - 1 : 3;

        printf("%-9s %-7s %11s %11s %13s %9s %9s %14s\n", "timers", "op", "heap2 ns", "timerq ns",
               "registry ns", "timerq/x", "registry/x", "registry B/tmr");
        for (size_t s = 0; s < n_sizes; s++) {
                size_t n = default_sizes[s < 3 ? s : 0], reps;
                struct result anchor, queue, registry;
                struct workload w;

                if (argc > 1 && parse_size(argv[s + 1], &n) < 0) {
                        fprintf(stderr, "usage: %s [N...] (N: 1..%" PRIu32 ")\n", argv[0],
                                UINT32_MAX);
                        return EXIT_FAILURE;
                }
                reps = n >= 1000000 ? 1 : 1000000 / n;
                workload_init(&w, n);
                anchor = best_of(run_anchor, &w, reps);
                queue = best_of(run_timerq, &w, reps);
                registry = best_of(run_registry, &w, reps < 10 ? reps : 10);
                printf("%-9zu %-7s %11.1f %11.1f %13.1f %9.2f %9.2f %14.0f\n", n, "insert",
                       anchor.insert_ns, queue.insert_ns, registry.insert_ns,
                       queue.insert_ns / anchor.insert_ns, registry.insert_ns / anchor.insert_ns,
                       registry.heap_bytes);
                printf("%-9zu %-7s %11.1f %11.1f %13.1f %9.2f %9.2f\n", n, "cancel",
                       anchor.cancel_ns, queue.cancel_ns, registry.cancel_ns,
                       queue.cancel_ns / anchor.cancel_ns, registry.cancel_ns / anchor.cancel_ns);
                workload_done(&w);
        }
        printf(
            "x: the binary heap anchor. registry = register/unregister (transient, exact, names "
            "\"t0\"..): allocation, hash table, queue, arm effects; B/tmr: its heap per timer.\n");
        return EXIT_SUCCESS;
}
