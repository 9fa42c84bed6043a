/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* Timers put back from an image: a retained timer restored after a restart (clamped, caught up),
 * and what a failed commit rolls back. Calls run, changes, effects and timer. */

#include <assert.h>
#include <errno.h>
#include <stdlib.h>

#include "service/core/registry-internal.h"

/*
 * Create the timer `img` describes as (owner, name), which must be absent (place: where it
 * goes). A transient one whose session closed meanwhile is not created (*ret
 * NULL); a run handed to a session that closed, or to none, is abandoned. -ENOMEM.
 */
static int timer_install(struct registry *r, const struct td_now *now, uint32_t owner,
                         const char *name, const struct timer_place *place,
                         const struct timer_image *img, struct timer **ret)
{
        const struct td_caller caller = {.uid = owner, .session = img->session};
        struct session *delivered = NULL;
        struct timer_runs *runs = NULL;
        struct timer *t;
        int e;

        *ret = NULL;
        /* A closed session (one still being reaped too) takes nothing back. */
        if (img->declaration.lifetime == TIMERD_LIFETIME_TRANSIENT &&
            !session_open(r, img->session))
                return 0;
        if (img->delivered_to > 0)
                delivered = session_open(r, img->delivered_to);
        if (img->has_missed_deadline || !run_state_empty(&img->runs)) {
                runs = malloc(sizeof(*runs));
                if (!runs)
                        return -ENOMEM;
        }
        e = timer_new_uncounted(r, &caller, name, &img->declaration, img->generation, place, &t);
        if (e < 0) {
                free(runs);
                return e;
        }

        if (runs)
                timer_runs_adopt(t, runs, &img->runs);
        t->failure = (unsigned)img->failure & 0x7u;
        t->after_run = (unsigned)img->after_run & 0x3u;
        t->run_active = img->run_active;
        if (img->queued) {
                timer_enqueue(r, t, img->deadline_usec, now->usec[t->clock]);
                t->has_missed_deadline = img->has_missed_deadline;
                t->catching_up = img->catching_up;
                if (runs)
                        runs->state.missed_deadline_usec = img->runs.missed_deadline_usec;
        }
        if (img->pending)
                list_append(&owner_find(r, t->uid)->pending, &runs->waiter_node);
        else if (delivered) {
                runs->delivered_to = delivered;
                list_append(&delivered->delivered, &runs->waiter_node);
        }
        stats_enter(r, t);
        if (t->run_active && !img->pending && !delivered)
                run_abandon(r, t, now);
        *ret = t;
        return 0;
}

/*
 * Whether (owner, name) comes after every timer, as each does when a journal's live set is
 * restored in its (owner, name) order: then it is absent without probing the hash table (at a
 * million timers the probe was a cache miss each, a sixth of the start), and it is appended to the
 * inventory without comparing it again.
 */
static bool timer_after_last(const struct registry *r, uint32_t owner, const char *name)
{
        const struct inventory_node *last = inventory_last(&r->inventory);
        const struct inventory_key key = {.owner = owner, .name = name};
        struct inventory_key last_key;

        if (!last)
                return true;
        last_key = inventory_key_of(&r->inventory, last);
        return inventory_key_compare(&key, &last_key) > 0;
}

/* A durable state this registry could have written. */
static bool snapshot_restorable(const struct td_snapshot *s)
{
        bool ran = s->run_active || s->has_last_start;

        return s->declaration.lifetime == TIMERD_LIFETIME_RETAINED && s->generation > 0 &&
               s->failure >= TIMERD_FAILURE_NONE && s->failure < TIMERD_FAILURE_MAX &&
               s->last_outcome >= TIMERD_OUTCOME_NONE && s->last_outcome < TIMERD_OUTCOME_MAX &&
               (s->last_end.exit == TIMERD_EXIT_NONE ? s->last_end.code == 0
                                                     : run_end_valid(&s->last_end)) &&
               (!s->pending || s->run_active) && (!s->run_active || s->has_last_start) &&
               (!ran || s->run > 0) && s->runs <= s->run &&
               s->consecutive_expected_failures <= s->runs &&
               /* No generation beyond the wire's int64 was ever given out (2^63 calls). */
               s->generation <= TD_VALUE_MAX;
}

static void image_of_snapshot(const struct td_snapshot *s, struct timer_image *ret)
{
        bool off_queue = s->run_active && policy_runs_off_queue(s->declaration.policy);
        enum after_run after_run = AFTER_RUN_POLICY;

        /* A once or after-completion timer's deadline during a run is the one its end arms. */
        if (off_queue && s->has_deadline)
                after_run = AFTER_RUN_DEADLINE;
        else if (off_queue && s->run_cancelled)
                after_run = AFTER_RUN_NONE;
        *ret = (struct timer_image){
            .declaration = s->declaration,
            .generation = s->generation,
            .failure = s->failure,
            .after_run = after_run,
            .run_active = s->run_active,
            .runs =
                {
                    .deferred_deadline_usec =
                        after_run == AFTER_RUN_DEADLINE ? s->next_deadline_usec : 0,
                    .run_fired_usec = s->last_start_usec,
                    /* Not durable: a firing after a restart reports the periods since. */
                    .overruns_reported = s->overruns,
                },
            .queued = s->failure == TIMERD_FAILURE_NONE && s->has_deadline && !off_queue,
            .deadline_usec = s->next_deadline_usec,
            .pending = s->pending,
        };
#define RUN_OF_SNAPSHOT(kind, snapshot, wire, public, journal, position)                           \
        FIELD_OP(RUN_IN, kind, snapshot, &ret->runs, s, s->declaration.cadence_usec)
        TD_TIMER_FIELDS_HELD(TD_NO_FIELD, RUN_OF_SNAPSHOT)
#undef RUN_OF_SNAPSHOT
}

static bool value_clamp(uint64_t *v)
{
        bool beyond = *v > TD_VALUE_MAX;
        if (beyond)
                *v = TD_VALUE_MAX;
        return beyond;
}

/* A time or count beyond the wire's int64 is bounded to it (clamped: whether one was). */
#define CLAMP_USEC(kind, m, v, clamped)        clamped = value_clamp(&(v)->m) || clamped;
#define CLAMP_CADENCE                          CLAMP_USEC
#define CLAMP_OPT_USEC(kind, pair, v, clamped) CLAMP_USEC(kind, TD_SECOND(pair), v, clamped)
#define CLAMP_VALUE(...)
#define CLAMP_RESULT(...)

/* A journal of a timerd that did not bound values to the wire's int64 may hold larger ones:
 * each is clamped, so that nothing listed is out of range, and the timer stops, failed
 * (overflow), as one whose arithmetic overflowed. Returns whether the image changed. */
static bool image_clamp_to_wire(struct timer_image *img)
{
        struct run_state *rs = &img->runs;
        uint64_t *values[] = {&img->deadline_usec, &rs->run_fired_usec, &rs->deferred_deadline_usec,
                              &rs->overruns_reported};
        bool clamped = false;

        for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++)
                clamped = value_clamp(values[i]) || clamped;
#define CLAMP_DECLARATION(kind, snapshot, wire, public, journal, position)                         \
        FIELD_OP(CLAMP, kind, snapshot, &img->declaration, clamped)
        TD_DECLARATION_FIELDS(CLAMP_DECLARATION)
#undef CLAMP_DECLARATION
#define CLAMP_RUN(kind, snapshot, wire, public, journal, position)                                 \
        FIELD_OP(CLAMP, kind, snapshot, rs, clamped)
        TD_TIMER_FIELDS_HELD(TD_NO_FIELD, CLAMP_RUN)
#undef CLAMP_RUN
        if (clamped) {
                img->queued = false;
                img->failure = TIMERD_FAILURE_OVERFLOW;
        }
        return clamped;
}

/* A queued deadline that passed while the service was down: fire it once (perhaps delayed), or
 * skip it. Returns whether the image changed. */
static bool catch_up_plan(struct timer_image *img, uint64_t now_usec, uint64_t random_value)
{
        const struct td_declaration *d = &img->declaration;
        uint64_t periods, advance, when, cadence;

        if (!img->queued || img->deadline_usec > now_usec)
                return false;
        if (d->catch_up) {
                uint64_t delay =
                    d->randomized_delay_usec > 0 ? random_value % d->randomized_delay_usec : 0;

                /* Not journaled: a restart before it fires finds the missed deadline again. */
                img->catching_up = true;

                if (delay == 0 || value_add_overflow(now_usec, delay, &when))
                        return false;
                img->has_missed_deadline = true;
                img->runs.missed_deadline_usec = img->deadline_usec;
                img->deadline_usec = when;
                return true;
        }
        if (d->policy == TIMERD_POLICY_ONCE) {
                img->queued = false;
                return true;
        }
        if (d->calendar) {
                img->queued = td_calendar_next(d->calendar, now_usec, &img->deadline_usec) >= 0;
                return true;
        }
        cadence = live_cadence(d->cadence_usec, &img->runs);
        periods = (now_usec - img->deadline_usec) / cadence;
        if (value_add_overflow(periods, 1, &periods) ||
            __builtin_mul_overflow(periods, cadence, &advance) ||
            value_add_overflow(img->deadline_usec, advance, &when)) {
                img->queued = false;
                img->failure = TIMERD_FAILURE_OVERFLOW;
        } else
                img->deadline_usec = when;
        return true;
}

struct td_transition registry_restore(struct registry *r, const struct td_now *now,
                                      const struct td_snapshot *timer, uint64_t random_value,
                                      bool *ret_clamped)
{
        size_t n_gone = r->n_gone;
        struct timer_image img;
        struct timer_place place;
        bool adjusted;
        struct timer *t;
        int e;

        effects_begin(r);
        *ret_clamped = false;
        if (!registry_name_valid(timer->name))
                return transition_failed(r, -TIMERD_E_INVALID_NAME);
        /* Its slot is fetched while the rest is checked and built: at a million timers the table
         * outgrows the caches, and restoring them in order would wait for a miss on each. */
        place.hash = identity_hash(timer->owner, timer->name);
        hashmap_prefetch(&r->timers, place.hash);
        e = declaration_validate(&timer->declaration, &r->problem);
        if (e >= 0 && timer->live_cadence_usec > 0) {
                /* A live cadence must have suited the declaration when Reschedule set it. */
                struct td_declaration live = timer->declaration;

                live.cadence_usec = timer->live_cadence_usec;
                e = declaration_validate(&live, &r->problem);
        }
        if (e >= 0 && !snapshot_restorable(timer))
                e = -EINVAL;
        place.after_last = e >= 0 && timer_after_last(r, timer->owner, timer->name);
        if (e >= 0 && !place.after_last &&
            timer_find_hashed(r, place.hash, timer->owner, timer->name))
                e = -TIMERD_E_ALREADY_REGISTERED;
        if (e >= 0)
                e = handle_generations_check(r, 1);
        if (e < 0)
                return transition_failed(r, e);

        image_of_snapshot(timer, &img);
        *ret_clamped = image_clamp_to_wire(&img);
        adjusted =
            catch_up_plan(&img, now->usec[img.declaration.clock], random_value) || *ret_clamped;
        e = timer_install(r, now, timer->owner, timer->name, &place, &img, &t);
        if (e < 0)
                return transition_failed(r, e);
        /* A run handed to a client was abandoned. */
        adjusted = adjusted || (img.run_active && !img.pending);
        if (!adjusted) {
                /* As durable as it was: the change its creation recorded goes (the last one). */
                assert(r->n_changes > 0 && r->changes[r->n_changes - 1] == t);
                r->n_changes--;
                t->changed = false;
        }
        /* Only t's queue changed (a run abandoned stays on t's clock), unless a gone timer of its
         * name was freed to make room: the other clocks are as in sync as the last entry point
         * left them. At a million timers syncing all five was a twentieth of the start. */
        if (r->n_gone != n_gone)
                return transition_sync(r);
        clock_sync(r, (enum timerd_clock)t->clock, false);
        return transition_done(r);
}

int registry_reserve(struct registry *r, size_t n)
{
        int e;

        if (n > SIZE_MAX - r->timers.n_entries)
                return -ENOMEM;
        e = hashmap_reserve(&r->timers, r->timers.n_entries + n);
        if (e >= 0)
                e = changes_reserve(r, n);
        return e;
}

void registry_generations_above(struct registry *r, uint64_t floor)
{
        /* By whole 2^32 steps: the low halves (a signal's sival_int) go on from the restored
         * timers' as if there had been no restart, so live timers' stay distinct. */
        const uint64_t step = UINT64_C(1) << 32;
        uint64_t gap, jump;

        if (floor <= r->last_generation)
                return;
        gap = floor - r->last_generation;
        jump = gap / step * step + (gap % step ? step : 0);
        if (value_add_overflow(r->last_generation, jump, &r->last_generation))
                r->last_generation = TD_VALUE_MAX; /* none left: registrations overflow */
}

struct td_transition registry_changes_rollback(struct registry *r, const struct td_now *now)
{
        struct td_transition result;
        int failure = 0, e;

        effects_begin(r);
        e = handle_generations_check(r, TIMERD_CLOCK_MAX);
        if (e < 0)
                return transition_failed(r, e);

        /* Every timer a call changed goes (each has a `before`, and is in the changes). */
        changes_drop_called(r);
        /* Latest first: a name removed and registered again gets its first timer back. What a
         * call made goes without a trace; what it removed comes back. */
        while (!list_empty(&r->befores)) {
                struct before *b = list_entry(r->befores.prev, struct before, node);
                struct timer *t = b->timer;

                list_remove(&b->node);
                if (!t->removed)
                        timer_unlink(r, t);
                timer_free(t);
                if (b->existed) {
                        const struct timer_place place = {.hash = identity_hash(b->owner, b->name)};

                        e = timer_install(r, now, b->owner, b->name, &place, &b->image, &t);
                        if (e < 0 && failure == 0)
                                failure = e;
                }
                before_free(b);
        }
        result = transition_sync(r);
        result.failure = failure;
        return result;
}
