/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "bench/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/harness.h"

void samples_init(struct samples *s, size_t cap)
{
        *s = (struct samples){.v = xcalloc(cap ? cap : 1, sizeof(uint64_t)), .cap = cap};
}

void samples_done(struct samples *s)
{
        free(s->v);
        *s = (struct samples){};
}

void samples_clear(struct samples *s)
{
        s->n = 0;
        s->sorted = 0;
}

void samples_add(struct samples *s, uint64_t v)
{
        if (s->n < s->cap)
                s->v[s->n++] = v;
}

static int compare_u64(const void *a, const void *b)
{
        uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
        return (x > y) - (x < y);
}

static void samples_sort(struct samples *s)
{
        if (s->sorted == s->n)
                return;
        qsort(s->v, s->n, sizeof(uint64_t), compare_u64);
        s->sorted = s->n;
}

uint64_t samples_percentile(struct samples *s, double p)
{
        if (s->n == 0)
                return 0;
        samples_sort(s);
        size_t rank = (size_t)ceil(p / 100.0 * (double)s->n);
        return s->v[rank > 0 ? rank - 1 : 0];
}

uint64_t samples_max(struct samples *s)
{
        return samples_percentile(s, 100.0);
}

static int compare_double(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;
        return (x > y) - (x < y);
}

void spread_of(const double *v, size_t n, struct spread *ret)
{
        if (n == 0) {
                *ret = (struct spread){};
                return;
        }
        double *copy = xcalloc(n, sizeof(double));
        memcpy(copy, v, n * sizeof(double));
        qsort(copy, n, sizeof(double), compare_double);
        *ret = (struct spread){
            .median = n % 2 ? copy[n / 2] : (copy[n / 2 - 1] + copy[n / 2]) / 2,
            .min = copy[0],
            .max = copy[n - 1],
        };
        free(copy);
}
