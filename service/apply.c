/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "service/apply.h"

#include <stdlib.h>
#include <string.h>

#include "service/io/log.h"
#include "service/service.h"

/* Names are at most TIMERD_NAME_MAX: a copy, not a format, per firing. */
static void copy_effect(struct queued_effect *dst, const struct td_now *now,
                        const struct td_effect *e)
{
        dst->effect = *e;
        dst->now = *now;
        if (e->kind != TD_EFFECT_DISPATCH)
                return;
        size_t len = strnlen(e->dispatch.name, TIMERD_NAME_MAX);
        memcpy(dst->name, e->dispatch.name, len);
        dst->name[len] = '\0';
        dst->effect.dispatch.name = dst->name;
}

/* Room for n more effects behind the queue; false without memory. */
static bool reserve(struct applier *a, size_t n)
{
        if (!a->queue) {
                a->queue = a->inline_queue;
                a->capacity = APPLY_INLINE;
        }
        if (a->head > 0 && a->capacity - a->tail < n) {
                memmove(a->queue, a->queue + a->head, (a->tail - a->head) * sizeof(*a->queue));
                a->tail -= a->head;
                a->head = 0;
        }
        if (a->capacity - a->tail >= n)
                return true;
        size_t capacity = a->capacity;
        while (capacity - a->tail < n) {
                if (capacity > SIZE_MAX / 2 / sizeof(*a->queue))
                        return false;
                capacity *= 2;
        }
        struct queued_effect *q = a->queue == a->inline_queue
                                      ? malloc(capacity * sizeof(*q))
                                      : reallocarray(a->queue, capacity, sizeof(*q));
        if (!q)
                return false;
        if (a->queue == a->inline_queue)
                memcpy(q, a->inline_queue, a->tail * sizeof(*q));
        a->queue = q;
        a->capacity = capacity;
        return true;
}

/* Queue entries keep their own name: re-point a dispatch's name at the copy it is in. */
static void take_entry(struct queued_effect *dst, const struct queued_effect *src)
{
        *dst = *src;
        if (dst->effect.kind == TD_EFFECT_DISPATCH)
                dst->effect.dispatch.name = dst->name;
}

/*
 * Without memory to queue the transition: take the kernel-timer demands in place (they call
 * nothing that reuses the effect buffer) and confirm them in turn. Notify and alarm dispatches
 * stay pending in the registry, where a Wait or the next Sleep of the owner finds them; signal
 * runs, which only the service ends, are ended in turn (up to APPLY_OOM_ENDED waiting) so their
 * timers keep firing.
 */
static void take_without_queue(struct service *s, const struct td_now *now, struct td_transition t)
{
        struct applier *a = &s->applying;

        log_error("Out of memory applying %zu effects: deliveries wait for a Wait", t.n_effects);
        for (size_t i = 0; i < t.n_effects; i++) {
                const struct td_effect *e = &t.effects[i];
                if (e->kind == TD_EFFECT_DISPATCH) {
                        if (e->dispatch.delivery == TIMERD_DELIVERY_SIGNAL &&
                            a->n_ended < APPLY_OOM_ENDED)
                                copy_effect(&a->ended[a->n_ended++], now, e);
                        continue;
                }
                a->confirm[e->arm.clock].result = wake_take_registry_arm(s, e);
                a->confirm[e->arm.clock].generation = e->arm.generation;
                a->confirm[e->arm.clock].now = *now;
                a->confirm_due |= 1u << e->arm.clock;
        }
}

static void apply_arm(struct service *s, const struct queued_effect *q)
{
        const struct td_effect *e = &q->effect;

        int r = wake_take_registry_arm(s, e);
        service_apply(
            s, &q->now,
            registry_confirm_arm(s->registry, &q->now, e->arm.clock, e->arm.generation, r));
}

/* The next piece of work, in order: queued effects up to a dispatch (its caller takes it), then
 * what the out-of-memory path left. false when a dispatch waits or nothing is left. */
static bool apply_next(struct service *s)
{
        struct applier *a = &s->applying;
        struct queued_effect q;

        if (a->head < a->tail) {
                if (a->queue[a->head].effect.kind == TD_EFFECT_DISPATCH)
                        return false;
                take_entry(&q, &a->queue[a->head++]);
                apply_arm(s, &q);
                return true;
        }
        if (a->confirm_due) {
                int c = __builtin_ctz(a->confirm_due); /* the clocks in order, as they were */

                a->confirm_due &= ~(1u << c);
                service_apply(s, &a->confirm[c].now,
                              registry_confirm_arm(s->registry, &a->confirm[c].now,
                                                   (enum timerd_clock)c, a->confirm[c].generation,
                                                   a->confirm[c].result));
                return true;
        }
        if (a->ended_head < a->n_ended) {
                take_entry(&q, &a->ended[a->ended_head++]);
                service_end_run(s, &q.now, &q.effect.dispatch, TIMERD_OUTCOME_SUCCESS,
                                TIMERD_DIRECTIVE_CONTINUE);
                return true;
        }
        return false;
}

/* Apply what is queued up to the next dispatch; the first call on the stack does it. */
static void drain(struct service *s)
{
        struct applier *a = &s->applying;

        /* Nothing queued, nothing left by the out-of-memory path: the loop's settles find this
         * several times a call. (An empty queue was reset, its memory given back.) */
        if (a->applying || apply_idle(a))
                return;
        a->applying = true;
        while (apply_next(s))
                ;
        a->applying = false;
        if (a->ended_head == a->n_ended)
                a->ended_head = a->n_ended = 0;
        if (a->head < a->tail)
                return;
        a->head = a->tail = 0;
        /* A backlog that outgrew the inline queue was a burst: its memory goes with it. */
        if (a->queue != a->inline_queue) {
                free(a->queue);
                a->queue = NULL;
        }
}

void service_apply(struct service *s, const struct td_now *now, struct td_transition t)
{
        struct applier *a = &s->applying;

        if (t.n_effects > 0) {
                if (reserve(a, t.n_effects))
                        for (size_t i = 0; i < t.n_effects; i++)
                                copy_effect(&a->queue[a->tail++], now, &t.effects[i]);
                else
                        take_without_queue(s, now, t);
        }
        drain(s);
}

bool apply_take_outcome(struct service *s, struct apply_outcome *ret)
{
        struct applier *a = &s->applying;

        drain(s);
        if (a->head < a->tail) {
                ret->kind = APPLY_DISPATCHED;
                take_entry(&ret->dispatched, &a->queue[a->head++]);
                return true;
        }
        /* Whatever call or firing left a notify timer with nothing more to deliver (failed,
         * removed, ended, of any owner), the parked Waits of its owner are re-checked, at once. */
        if (!registry_take_silenced_owner(s->registry, &ret->owner))
                return false;
        ret->kind = APPLY_SILENCED;
        return true;
}

void service_end_run(struct service *s, const struct td_now *now, const struct td_dispatch *d,
                     enum timerd_outcome outcome, enum timerd_directive directive)
{
        const struct td_handle token = {
            .owner = d->owner, .name = d->name, .generation = d->generation, .run = d->run};
        service_apply(s, now,
                      registry_complete(s->registry, now, &token, outcome, directive, 0, NULL));
}
