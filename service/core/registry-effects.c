/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The transition every entry point returns: its effects, and each clock's kernel timer kept in
 * line with its queue (ARM/DISARM, handle generations). Calls no other registry file. */

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "service/core/registry-internal.h"

/* Counter room: each mutating call needs `n` handle generations (one per clock it may re-arm). */
int handle_generations_check(const struct registry *r, uint64_t n)
{
        return UINT64_MAX - r->last_handle_generation >= n ? 0 : -TIMERD_E_OVERFLOW;
}

void effects_begin(struct registry *r)
{
        /* The last reap step's removals were read: their room goes. */
        if (r->removals_capacity > REMOVALS_MIN && list_empty(&r->closing))
                removals_shrink(r);
        r->n_effects = 0;
        r->n_removals = 0;
        r->problem = TD_SCHEDULE_OK;
        r->limit = TD_LIMIT_NONE;
}

/* Room for n items of `size` in *items (*capacity of them), at least doubled when it grows. */
static int array_reserve(void **items, size_t *capacity, size_t n, size_t size)
{
        size_t want;
        void *grown;

        if (n <= *capacity)
                return 0;
        if (*capacity > SIZE_MAX / 2 / size || n > SIZE_MAX / size)
                return -ENOMEM;
        want = *capacity * 2 > n ? *capacity * 2 : n;
        grown = realloc(*items, want * size);
        if (!grown)
                return -ENOMEM;
        *items = grown;
        *capacity = want;
        return 0;
}

int effects_reserve(struct registry *r, size_t n)
{
        return array_reserve((void **)&r->effects, &r->effects_capacity, n,
                             sizeof(struct td_effect));
}

int removals_reserve(struct registry *r, size_t n)
{
        return array_reserve((void **)&r->removals, &r->removals_capacity, n,
                             sizeof(struct td_removal));
}

void removals_shrink(struct registry *r)
{
        struct td_removal *shrunk;

        if (r->removals_capacity <= REMOVALS_MIN || !list_empty(&r->closing))
                return;
        shrunk = realloc(r->removals, REMOVALS_MIN * sizeof(struct td_removal));
        /* Failing to shrink keeps the room: nothing is lost. */
        if (!shrunk)
                return;
        r->removals = shrunk;
        r->removals_capacity = REMOVALS_MIN;
}

void removal_push(struct registry *r, const struct session *s, const struct timer *t)
{
        struct td_removal *m;
        size_t len = strlen(t->name);

        assert(r->n_removals < r->removals_capacity);
        m = &r->removals[r->n_removals++];
        m->owner = t->uid;
        m->closed_usec = s->closed_usec;
        memcpy(m->name, t->name, len + 1);
}

void effect_push(struct registry *r, const struct td_effect *e)
{
        assert(r->n_effects < r->effects_capacity);
        r->effects[r->n_effects++] = *e;
}

struct td_transition transition_done(const struct registry *r)
{
        return (struct td_transition){
            .n_effects = r->n_effects,
            .effects = r->effects,
            .n_removals = r->n_removals,
            .removals = r->removals,
        };
}

struct td_transition transition_failed(struct registry *r, int failure)
{
        assert(failure < 0);
        r->n_effects = 0;
        return (struct td_transition){
            .failure = failure,
            .schedule_problem = failure == -TIMERD_E_INVALID_SCHEDULE ? r->problem : TD_SCHEDULE_OK,
            .limit = failure == -TIMERD_E_LIMIT_EXCEEDED ? r->limit : TD_LIMIT_NONE,
            .limit_max = failure == -TIMERD_E_LIMIT_EXCEEDED ? r->limit_max : 0,
            .effects = r->effects,
            .n_removals = r->n_removals,
            .removals = r->removals,
        };
}

/*
 * Bring the clock's kernel timer in line with its queue: ARM when the arm time changed, DISARM
 * when nothing is left. `spent`: the kernel timer expired, failed to arm or must be re-armed, so
 * there is always a new ARM or DISARM (and the old generation goes stale). Every entry point ends
 * with every clock in sync.
 */
void clock_sync(struct registry *r, enum timerd_clock c, bool spent)
{
        struct clock_arm *a = &r->arms[c];
        uint64_t when;

        r->unsynced &= ~(1u << c);
        if (!timerq_arm_time(&r->queues[c], &when)) {
                if (!a->armed && !spent)
                        return;
                *a = (struct clock_arm){.generation = ++r->last_handle_generation};
                effect_push(r, &(struct td_effect){
                                   .kind = TD_EFFECT_DISARM,
                                   .arm = {.clock = c, .generation = a->generation},
                               });
                return;
        }
        if (!spent && a->armed && a->deadline_usec == when)
                return;
        *a = (struct clock_arm){
            .armed = true,
            .deadline_usec = when,
            .generation = ++r->last_handle_generation,
        };
        effect_push(r, &(struct td_effect){
                           .kind = TD_EFFECT_ARM,
                           .arm = {.clock = c, .deadline_usec = when, .generation = a->generation},
                       });
}

struct td_transition transition_sync(struct registry *r)
{
        /* The clocks in order, as a walk over all five would meet them. */
        while (r->unsynced)
                clock_sync(r, (enum timerd_clock)__builtin_ctz(r->unsynced), false);
        return transition_done(r);
}
