/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* Change tracking for group commit: the timers changed since the last commit, and the pre-image
 * (`before`) a client call keeps of each for a rollback. Calls list, effects and timer. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "service/core/registry-internal.h"

static void timer_image_take(const struct timer *t, struct timer_image *ret)
{
        *ret = (struct timer_image){
            .declaration = timer_declaration(t),
            .generation = t->generation,
            .session = t->session,
            .failure = (enum timerd_failure)t->failure,
            .after_run = t->after_run,
            .run_active = t->run_active,
            .has_missed_deadline = t->has_missed_deadline,
            .catching_up = t->catching_up,
            .has_runs = t->runs != NULL,
            .runs = *timer_run_state(t),
            .queued = timer_queued(t),
            .deadline_usec = timer_queued(t) ? t->deadline_usec : 0,
            .pending = timer_pending(t),
            .delivered_to = timer_delivered_to(t) ? timer_delivered_to(t)->id : 0,
        };
}

/* A pre-image holds its own reference to the calendar it declares. */
void before_free(struct before *b)
{
        if (b)
                td_calendar_unref(b->image.declaration.calendar);
        free(b);
}

/*
 * A client call is about to change t (NULL: to create a timer) that is retained or will be: keep
 * how it is, once per commit, so that a failed commit can put it back. Before anything changes;
 * the result goes to before_attach() once nothing can fail any more, or to free().
 */
int before_prepare(const struct registry *r, const struct timer *t, bool retained_after,
                   struct before **ret)
{
        struct before *b;

        *ret = NULL;
        if (!r->in_call ||
            (t ? t->has_before || (!timer_retained(t) && !retained_after) : !retained_after))
                return 0;
        b = calloc(1, sizeof(*b));
        if (!b)
                return -ENOMEM;
        b->existed = t != NULL;
        if (t) {
                timer_image_take(t, &b->image);
                td_calendar_ref(b->image.declaration.calendar);
        }
        *ret = b;
        return 0;
}

void before_attach(struct registry *r, struct timer *t, struct before *b)
{
        if (!b)
                return;
        b->timer = t;
        b->owner = t->uid;
        strcpy(b->name, t->name);
        list_append(&r->befores, &b->node);
        t->has_before = true;
        timer_changed(r, t);
}

/*
 * A control call is about to change t, and every check of its own passed: the last checks
 * (handle generations, the pre-image's memory) and the pre-image taken. Nothing fails after it.
 */
int change_begin(struct registry *r, struct timer *t)
{
        struct before *b = NULL;
        int e = handle_generations_check(r, 1);

        if (e >= 0)
                e = before_prepare(r, t, timer_retained(t), &b);
        if (e < 0)
                return e;
        before_attach(r, t, b);
        return 0;
}

void registry_call_begin(struct registry *r)
{
        r->in_call = true;
}

void registry_call_end(struct registry *r)
{
        r->in_call = false;
}

bool registry_changes_pending(const struct registry *r)
{
        return r->n_changes > 0;
}

uint64_t registry_change_count(const struct registry *r)
{
        return r->change_count;
}

int registry_changes_foreach(const struct registry *r,
                             int (*fn)(const struct td_change *change, void *userdata),
                             void *userdata)
{
        struct td_snapshot snapshot;
        int e;

        /* Removals first: a name removed and registered again ends up registered. */
        for (size_t i = 0; i < r->n_changes; i++) {
                const struct timer *t = r->changes[i];

                if (!t->removed)
                        continue;
                e = fn(&(struct td_change){.owner = t->uid, .name = t->name}, userdata);
                if (e < 0)
                        return e;
        }
        for (size_t i = 0; i < r->n_changes; i++) {
                const struct timer *t = r->changes[i];
                struct td_change c = {.owner = t->uid, .name = t->name};

                if (t->removed)
                        continue;
                /* A timer that is transient now was retained: its removal is written. */
                if (timer_retained(t)) {
                        timer_snapshot(t, &snapshot);
                        c.timer = &snapshot;
                }
                e = fn(&c, userdata);
                if (e < 0)
                        return e;
        }
        return 0;
}

void registry_changes_commit(struct registry *r)
{
        while (!list_empty(&r->befores)) {
                struct before *b = list_entry(r->befores.next, struct before, node);

                b->timer->has_before = false;
                list_remove(&b->node);
                before_free(b);
        }
        for (size_t i = 0; i < r->n_changes; i++) {
                struct timer *t = r->changes[i];

                if (t->removed)
                        timer_free(t);
                else
                        t->changed = false;
        }
        r->n_changes = 0;
}

void changes_drop_called(struct registry *r)
{
        size_t n = 0;

        for (size_t i = 0; i < r->n_changes; i++)
                if (!r->changes[i]->has_before)
                        r->changes[n++] = r->changes[i];
        r->n_changes = n;
}

/* The pre-images, the removed timers kept for the commit, and the changes' table. */
void changes_free(struct registry *r)
{
        while (!list_empty(&r->befores)) {
                struct before *b = list_entry(r->befores.next, struct before, node);

                list_remove(&b->node);
                before_free(b);
        }
        for (size_t k = 0; k < r->n_changes; k++)
                if (r->changes[k]->removed)
                        timer_free(r->changes[k]);
        free(r->changes);
}
