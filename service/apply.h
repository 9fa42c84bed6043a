/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Applying the registry's transitions to the world: ARM/DISARM to the kernel timers (wake.h).
 * A transition is queued, and the first service_apply() on the stack applies the queue in order:
 * an effect whose application makes another transition (a confirmed arm, a run a signal delivery
 * ends) queues it behind the others instead of applying it from inside, so no caller ever sees
 * its effects reused under it. A DISPATCH, and an owner left with nothing to deliver, are for the
 * layer above (waits.c): the queue stops at a dispatch until apply_take_outcome() hands it over,
 * so what follows it is applied after the run went to whoever waits for it, as before.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "service/core/registry.h"

struct service;

/* An effect waiting its turn, with the time of its transition and its own copy of the name
 * (the registry reuses its effect buffer at its next call). */
struct queued_effect {
        struct td_effect effect;
        struct td_now now;
        char name[TIMERD_NAME_MAX + 1];
};

/* Effects queued without an allocation; a larger backlog allocates until it is applied. */
#define APPLY_INLINE 8
/* Signal runs the out-of-memory path ends (see apply.c). */
#define APPLY_OOM_ENDED 16

struct applier {
        struct queued_effect inline_queue[APPLY_INLINE];
        struct queued_effect *queue; /* inline_queue or allocated; NULL until first used */
        size_t capacity, head, tail; /* effects [head, tail) wait */
        bool applying;               /* a service_apply() on the stack drains the queue */
        /* Out of memory for the queue: arm outcomes and signal runs to end, applied in turn. */
        unsigned confirm_due; /* a bit for each clock whose confirm[] waits: one test when none */
        struct {
                uint64_t generation;
                int result;
                struct td_now now;
        } confirm[TIMERD_CLOCK_MAX];
        struct queued_effect ended[APPLY_OOM_ENDED];
        size_t ended_head, n_ended;
        bool handing_over; /* api_hand_over() takes the outcomes: a nested call leaves them */
};

/* What applying leaves to the layer above, in order. */
enum apply_outcome_kind {
        APPLY_DISPATCHED, /* a run was dispatched: hand it to whoever waits for it */
        APPLY_SILENCED, /* owner's notify timers have nothing more to deliver: recheck its Waits */
};

struct apply_outcome {
        enum apply_outcome_kind kind;
        struct queued_effect dispatched; /* APPLY_DISPATCHED: the run, its time, its name */
        uint32_t owner;                  /* APPLY_SILENCED */
};

/* Apply a transition of the registry (queued behind those being applied, if any), up to its first
 * dispatch: what is left waits for apply_take_outcome(). */
void service_apply(struct service *s, const struct td_now *now, struct td_transition t);

/* Apply what is queued up to the next outcome and take it; false when nothing is left. */
bool apply_take_outcome(struct service *s, struct apply_outcome *ret);

/* Nothing queued, nothing left by the out-of-memory path: no effect waits to be applied. */
static inline bool apply_idle(const struct applier *a)
{
        return a->tail == 0 && !a->confirm_due && a->n_ended == 0;
}

/* End a run the service delivered itself (an alarm, a signal): there is no client to complete it.
 */
void service_end_run(struct service *s, const struct td_now *now, const struct td_dispatch *d,
                     enum timerd_outcome outcome, enum timerd_directive directive);
