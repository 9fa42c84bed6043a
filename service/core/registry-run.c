/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The policy state machine, run side: expiries fire timers, runs are handed over and complete; a
 * clock set, a failed arm, a closed session. Calls registry.c, changes, effects and timer. */

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "service/core/registry-internal.h"

bool run_end_valid(const struct td_run_end *end)
{
        return end->exit > TIMERD_EXIT_NONE && end->exit < TIMERD_EXIT_MAX &&
               end->code <= UINT8_MAX;
}

/* The counters a finished run leaves, computed before anything changes. */
struct run_result {
        enum timerd_outcome outcome;
        struct td_run_end end;
        uint64_t finish_usec;
        uint64_t duration_usec;
        uint64_t runs;
        uint64_t total_duration_usec;
        uint64_t consecutive_expected_failures;
};

static int run_result_compute(const struct timer *t, uint64_t now_usec, enum timerd_outcome outcome,
                              uint64_t duration_usec, struct run_result *ret)
{
        const struct run_state *rs = &t->runs->state;

        /* The client measured the run, or the registry does (a clock set back counts 0). */
        if (duration_usec == 0 && now_usec > rs->run_fired_usec)
                duration_usec = now_usec - rs->run_fired_usec;
        *ret = (struct run_result){
            .outcome = outcome,
            .finish_usec = now_usec,
            .duration_usec = duration_usec,
        };
        if (value_add_overflow(rs->runs, 1, &ret->runs) ||
            value_add_overflow(rs->total_duration_usec, ret->duration_usec,
                               &ret->total_duration_usec))
                return -TIMERD_E_OVERFLOW;
        if (outcome != TIMERD_OUTCOME_EXPECTED_FAILURE)
                ret->consecutive_expected_failures = 0;
        else if (value_add_overflow(rs->consecutive_expected_failures, 1,
                                    &ret->consecutive_expected_failures))
                return -TIMERD_E_OVERFLOW;
        return 0;
}

/* How far ahead of the reap its hash slots are fetched: enough misses in flight to hide them. A
 * power of two: the hashes computed for the fetch wait in a ring that long for their reap. */
#define REAP_AHEAD 16

/*
 * After a calendar timer's run: its next elapse after the one that ran. When elapses passed during
 * the run, the last of them fires, at once; those before it count as overruns, up to
 * CALENDAR_OVERRUNS_COUNTED (a bound on the work: past it the firing reports the completion).
 * The elapse after that one then comes after the completion, so runs never overlap and a long
 * run costs one firing, not a burst. Inside stats_leave/enter.
 */
#define CALENDAR_OVERRUNS_COUNTED 1024

static void calendar_resume(struct registry *r, struct timer *t, uint64_t finish_usec)
{
        const struct td_declaration d = timer_declaration(t);
        struct run_state *rs = &t->runs->state;
        uint64_t next, later, passed = 0;

        if (calendar_deadline(r, t->uid, t->name, &d, rs->run_deadline_usec, &next) < 0) {
                t->failure = TIMERD_FAILURE_OVERFLOW;
                return;
        }
        while (next < finish_usec && td_calendar_next(t->calendar, next, &later) >= 0 &&
               later <= finish_usec) {
                if (passed == CALENDAR_OVERRUNS_COUNTED) {
                        next = finish_usec;
                        break;
                }
                next = later;
                passed++;
        }
        rs->overruns = value_saturating_add(rs->overruns, passed);
        r->overruns = value_saturating_add(r->overruns, passed);
        timer_enqueue(r, t, next, finish_usec);
}

/*
 * A held schedule at `now`: the deadlines it passed are overruns, and it moves past them, without
 * a wake-up. A count or deadline that would overflow fails the timer. Inside stats_leave/enter.
 */
static void hold_settle(struct registry *r, struct timer *t, uint64_t now)
{
        struct run_state *rs;
        uint64_t due, next, overruns;

        if (!timer_held(t))
                return;
        rs = &t->runs->state;
        if (schedule_skip(rs->deferred_deadline_usec, timer_cadence(t), timer_handover(r, t), now,
                          &due, &next) < 0 ||
            value_add_overflow(rs->overruns, due, &overruns)) {
                timer_drop_hold(t);
                t->failure = TIMERD_FAILURE_OVERFLOW;
                return;
        }
        r->overruns = value_saturating_add(r->overruns, due);
        rs->overruns = overruns;
        rs->deferred_deadline_usec = next;
}

/* End the active run and apply what its outcome and directive ask of the schedule. */
static void run_finish(struct registry *r, struct timer *t, const struct run_result *res,
                       enum timerd_directive directive)
{
        enum timerd_policy policy = (enum timerd_policy)t->policy;
        struct run_state *rs = &t->runs->state;
        uint64_t next;

        stats_leave(r, t);
        hold_settle(r, t, res->finish_usec);
        /* A firing nobody was handed (the service delivered it) reported its overruns. */
        if (!timer_delivered_to(t))
                rs->overruns_reported = rs->overruns;
        run_detach(t);
        t->run_active = false;
        rs->runs = res->runs;
        rs->total_duration_usec = res->total_duration_usec;
        rs->consecutive_expected_failures = res->consecutive_expected_failures;
        rs->last_duration_usec = res->duration_usec;
        rs->last_outcome = res->outcome;
        rs->last_end = res->end;
        rs->has_last_finish = true;
        rs->last_finish_usec = res->finish_usec;

        if (res->outcome == TIMERD_OUTCOME_INVARIANT_FAILURE) {
                timer_dequeue(r, t);
                t->failure = TIMERD_FAILURE_INVARIANT;
        } else if (directive == TIMERD_DIRECTIVE_STOP)
                timer_dequeue(r, t);
        else if (t->failure == TIMERD_FAILURE_NONE && t->after_run == AFTER_RUN_DEADLINE)
                timer_enqueue(r, t, rs->deferred_deadline_usec, res->finish_usec);
        else if (t->failure == TIMERD_FAILURE_NONE && t->after_run == AFTER_RUN_POLICY &&
                 policy == TIMERD_POLICY_AFTER_COMPLETION) {
                if (value_add_overflow(res->finish_usec, timer_cadence(t), &next))
                        t->failure = TIMERD_FAILURE_OVERFLOW;
                else
                        timer_enqueue(r, t, next, res->finish_usec);
        } else if (t->failure == TIMERD_FAILURE_NONE && t->after_run == AFTER_RUN_POLICY &&
                   policy == TIMERD_POLICY_CALENDAR)
                calendar_resume(r, t, res->finish_usec);
        t->after_run = AFTER_RUN_POLICY;
        rs->deferred_deadline_usec = 0;
        stats_enter(r, t);
}

struct td_transition registry_complete(struct registry *r, const struct td_now *now,
                                       const struct td_handle *token, enum timerd_outcome outcome,
                                       enum timerd_directive directive, uint64_t duration_usec,
                                       const struct td_run_end *end)
{
        struct run_result res;
        struct before *b = NULL;
        struct timer *t;
        int e;

        effects_begin(r);
        if (outcome <= TIMERD_OUTCOME_NONE || outcome >= TIMERD_OUTCOME_MAX || directive < 0 ||
            directive >= TIMERD_DIRECTIVE_MAX || (end && !run_end_valid(end)))
                return transition_failed(r, -TIMERD_E_INVALID_PARAMETER);
        e = handle_resolve(r, token, &t);
        if (e >= 0 && token->run == 0)
                e = -TIMERD_E_NOT_RUNNING;
        if (e >= 0)
                e = handle_generations_check(r, 1);
        if (e >= 0)
                e = run_result_compute(t, now->usec[t->clock], outcome, duration_usec, &res);
        if (e >= 0 && end)
                res.end = *end;
        if (e >= 0)
                e = before_prepare(r, t, timer_retained(t), &b);
        if (e < 0)
                return transition_failed(r, e);
        before_attach(r, t, b);
        run_finish(r, t, &res, directive);
        return transition_sync(r);
}

/* A run no client holds any more ends as an expected failure; the policy goes on. */
void run_abandon(struct registry *r, struct timer *t, const struct td_now *now)
{
        struct run_result res;

        if (run_result_compute(t, now->usec[t->clock], TIMERD_OUTCOME_EXPECTED_FAILURE, 0, &res) <
            0) {
                /* Its counters cannot take the run: end it uncounted, failed. */
                stats_leave(r, t);
                run_detach(t);
                t->run_active = false;
                t->after_run = AFTER_RUN_POLICY;
                t->runs->state.deferred_deadline_usec = 0;
                stats_enter(r, t);
                timer_fail(r, t, TIMERD_FAILURE_OVERFLOW);
        } else
                run_finish(r, t, &res, TIMERD_DIRECTIVE_CONTINUE);
}

static void timer_dispatch(const struct registry *r, const struct timer *t, struct td_dispatch *ret)
{
        const struct run_state *rs = timer_run_state(t);

        *ret = (struct td_dispatch){
            .owner = t->uid,
            .name = t->name,
            .generation = t->generation,
            .run = rs->run,
            .clock = (enum timerd_clock)t->clock,
            .delivery = (enum timerd_delivery)t->delivery,
            .deadline_usec = rs->run_deadline_usec,
            .fired_usec = rs->run_fired_usec,
            .due_usec = value_saturating_add(handover_instant(r, t, rs->run_deadline_usec),
                                             timer_accuracy(t)),
            .overruns = rs->overruns - rs->overruns_reported,
            .catch_up = rs->last_catch_up,
        };
}

static void effect_push_dispatch(struct registry *r, const struct timer *t, bool past_due)
{
        struct td_effect effect = {.kind = TD_EFFECT_DISPATCH};

        timer_dispatch(r, t, &effect.dispatch);
        effect.dispatch.past_due = past_due;
        effect_push(r, &effect);
}

/*
 * Whether t is a calendar timer whose queued deadline the running pass has still to compute
 * again: computed before the pass began, and not due when it began (one due then fires as it
 * would have).
 */
static bool calendar_stale(const struct registry *r, const struct timer *t)
{
        const struct calendar_pass *p = &r->calendar_pass;

        return p->active && timer_calendar(t) && timer_queued(t) && !t->has_missed_deadline &&
               t->calendar_epoch != p->epoch && t->deadline_usec > p->base_usec[t->clock];
}

/* The first elapse after the pass's base, in the zones as they are now. */
static void calendar_reevaluate(struct registry *r, struct timer *t, uint64_t now)
{
        const struct td_declaration d = timer_declaration(t);
        uint64_t deadline;

        stats_leave(r, t);
        if (calendar_deadline(r, t->uid, t->name, &d, r->calendar_pass.base_usec[t->clock],
                              &deadline) < 0) {
                timer_dequeue(r, t);
                t->failure = TIMERD_FAILURE_OVERFLOW;
        } else
                timer_enqueue(r, t, deadline, now);
        stats_enter(r, t);
}

/*
 * Fire one due timer at `now`: move or drop its queue entry, count overruns, start a run unless
 * one is active. Watchdog and interval successors are queued here, before any DISPATCH is emitted;
 * one due while the run is still active is held instead (see enum after_run).
 * A successor or counter that would overflow fails the timer instead (FAILURE_OVERFLOW).
 * t has its runs record.
 */
static void timer_fire(struct registry *r, struct timer *t, uint64_t now)
{
        enum timerd_policy policy = (enum timerd_policy)t->policy;
        struct run_state *rs = &t->runs->state;
        uint64_t deadline = t->has_missed_deadline ? rs->missed_deadline_usec : t->deadline_usec;
        /* A handover fires early: deadlines up to `reach` are due (handover < cadence). */
        uint64_t reach = value_saturating_add(now, timer_handover(r, t));
        uint64_t next = 0, missed = 0, periods, overruns, run = rs->run;
        bool requeue = policy == TIMERD_POLICY_WATCHDOG || policy == TIMERD_POLICY_INTERVAL;
        /* Taken before the successor is queued. */
        bool past_due = t->queued_past_due || t->has_missed_deadline;
        bool catch_up = t->catching_up;
        bool overflow = false;

        assert(deadline <= reach);
        if (policy == TIMERD_POLICY_WATCHDOG)
                overflow =
                    value_add_overflow(deadline > now ? deadline : now, timer_cadence(t), &next);
        else if (policy == TIMERD_POLICY_INTERVAL) {
                /* The first deadline + k*cadence after reach; the k-1 skipped are overruns. */
                overflow = schedule_skip(deadline, timer_cadence(t), timer_handover(r, t), now,
                                         &periods, &next) < 0;
                missed = overflow ? 0 : periods - 1;
        }
        overflow = overflow || value_add_overflow(rs->overruns, missed, &overruns) ||
                   value_add_overflow(overruns, t->run_active ? 1 : 0, &overruns) ||
                   (!t->run_active && value_add_overflow(run, 1, &run));
        if (overflow) {
                timer_fail(r, t, TIMERD_FAILURE_OVERFLOW);
                return;
        }

        stats_leave(r, t);
        if (requeue && !t->run_active)
                timer_enqueue(r, t, next, now);
        else
                timer_dequeue(r, t);
        r->overruns = value_saturating_add(r->overruns, overruns - rs->overruns);
        rs->overruns = overruns;
        if (t->run_active) {
                /* Nothing to deliver until the run is taken or ends: no wake-up before. */
                if (requeue) {
                        t->after_run = AFTER_RUN_DEADLINE;
                        rs->deferred_deadline_usec = next;
                }
                stats_enter(r, t);
                return;
        }
        rs->run = run;
        t->run_active = true;
        t->after_run = AFTER_RUN_POLICY;
        rs->run_deadline_usec = deadline;
        rs->run_fired_usec = now;
        rs->has_last_start = true;
        rs->last_start_usec = now;
        rs->last_catch_up = catch_up;
        list_append(&owner_find(r, t->uid)->pending, &t->runs->waiter_node);
        r->firings = value_saturating_add(r->firings, 1);
        stats_enter(r, t);
        effect_push_dispatch(r, t, past_due);
}

struct td_transition registry_expire(struct registry *r, const struct td_now *now,
                                     enum timerd_clock clock, uint64_t generation, bool *ret_stale)
{
        struct timerq_entry *e;
        uint64_t n;
        int error;

        effects_begin(r);
        *ret_stale = false;
        if (!clock_valid(clock))
                return transition_failed(r, -EINVAL);
        if (!r->arms[clock].armed || r->arms[clock].generation != generation) {
                *ret_stale = true;
                r->stale_expiries = value_saturating_add(r->stale_expiries, 1);
                return transition_done(r);
        }
        error = handle_generations_check(r, 1);
        if (error < 0)
                return transition_failed(r, error);

        n = now->usec[clock];
        while ((e = timerq_peek(&r->queues[clock])) &&
               timerq_entry_deadline(&r->queues[clock], e) <= n) {
                struct timer *t = timer_of_entry(e);

                /* Out of the way: the reap frees it, and tells its removal, in its turn. */
                if (timer_gone(r, t)) {
                        timer_dequeue(r, t);
                        continue;
                }
                /* Due on a deadline the running pass has not computed again yet: compute it
                 * first, and fire only if the new one is due too. */
                if (calendar_stale(r, t)) {
                        calendar_reevaluate(r, t, n);
                        if (!timer_queued(t) || timerq_entry_deadline(&r->queues[clock], e) > n)
                                continue;
                }
                /*
                 * Out of memory for effects or for a first run's record: stop here; the rest
                 * stays due and the clock is re-armed in the past, so it fires again at once.
                 */
                if (effects_reserve(r, r->n_effects + 2) < 0 || timer_runs_attach(t) < 0)
                        break;
                timer_fire(r, t, n);
        }

        /* The kernel timer is one-shot and spent. Successors are armed before any run is
         * dispatched: the ARM (or DISARM) goes first. */
        clock_sync(r, clock, true);
        if (r->n_effects > 1) {
                struct td_effect arm = r->effects[r->n_effects - 1];

                memmove(r->effects + 1, r->effects, (r->n_effects - 1) * sizeof(struct td_effect));
                r->effects[0] = arm;
        }
        return transition_done(r);
}

/* Walk on in (owner, name) order: at most `budget` re-evaluations and 16 × budget timers
 * looked at. Returns how many were re-evaluated; the pass ends at the last timer. */
static uint64_t calendar_pass_walk(struct registry *r, const struct td_now *now, size_t budget)
{
        struct calendar_pass *p = &r->calendar_pass;
        struct inventory_key after = {.owner = p->after_owner, .name = p->after_name};
        struct inventory_cursor cursor;
        struct inventory_node *node;
        uint64_t count = 0;
        size_t looked = 0;

        inventory_seek(&r->inventory, p->has_after ? &after : NULL, &cursor);
        while ((node = inventory_next(&cursor))) {
                struct timer *t = inventory_entry(node, struct timer, inventory_node);

                if (calendar_stale(r, t) && !timer_gone(r, t)) {
                        calendar_reevaluate(r, t, now->usec[t->clock]);
                        count++;
                }
                p->has_after = true;
                p->after_owner = t->uid;
                memcpy(p->after_name, t->name, strlen(t->name) + 1);
                if (count >= budget || ++looked >= budget * 16)
                        return count;
        }
        p->active = false;
        p->restarts = 0;
        return count;
}

/* (Re)start the pass from now; see struct calendar_pass. */
static void calendar_pass_start(struct registry *r, const struct td_now *now)
{
        struct calendar_pass *p = &r->calendar_pass;

        if (p->active && ++p->restarts >= CALENDAR_PASS_RESTARTS_MAX)
                calendar_pass_walk(r, now, SIZE_MAX / 16);
        p->active = true;
        p->has_after = false;
        p->epoch++;
        memcpy(p->base_usec, now->usec, sizeof(p->base_usec));
}

struct td_transition registry_rearm(struct registry *r, const struct td_now *now,
                                    enum timerd_clock clock)
{
        int e;

        effects_begin(r);
        if (!clock_valid(clock))
                return transition_failed(r, -EINVAL);
        if (clock == TIMERD_CLOCK_REALTIME || clock == TIMERD_CLOCK_REALTIME_ALARM)
                calendar_pass_start(r, now);
        if (!r->arms[clock].armed)
                return transition_done(r);
        e = handle_generations_check(r, 1);
        if (e < 0)
                return transition_failed(r, e);
        clock_sync(r, clock, true);
        return transition_done(r);
}

void registry_reevaluate_calendars(struct registry *r, const struct td_now *now)
{
        calendar_pass_start(r, now);
}

bool registry_reevaluation_pending(const struct registry *r)
{
        return r->calendar_pass.active;
}

struct td_transition registry_reevaluate_step(struct registry *r, const struct td_now *now,
                                              size_t budget, uint64_t *ret_count)
{
        int e;

        effects_begin(r);
        *ret_count = 0;
        if (!r->calendar_pass.active || budget == 0)
                return transition_done(r);
        e = handle_generations_check(r, 2);
        if (e < 0)
                return transition_failed(r, e);
        *ret_count = calendar_pass_walk(r, now, budget);
        return transition_sync(r);
}

struct td_transition registry_confirm_arm(struct registry *r, const struct td_now *now,
                                          enum timerd_clock clock, uint64_t generation, int error)
{
        struct timerq_entry *entry;
        struct clock_arm *a;
        int e;

        (void)now;
        effects_begin(r);
        if (!clock_valid(clock))
                return transition_failed(r, -EINVAL);
        a = &r->arms[clock];
        /* A success, a superseded arm or a failed disarm (its expiry is stale anyway): no-op. */
        if (error == 0 || !a->armed || a->generation != generation)
                return transition_done(r);
        e = handle_generations_check(r, 1);
        if (e < 0)
                return transition_failed(r, e);

        while ((entry = timerq_peek(&r->queues[clock])) &&
               timerq_entry_deadline(&r->queues[clock], entry) <= a->deadline_usec) {
                struct timer *t = timer_of_entry(entry);

                if (timer_gone(r, t))
                        timer_dequeue(r, t);
                else
                        timer_fail(r, t, TIMERD_FAILURE_PROVIDER_BINDING);
        }
        clock_sync(r, clock, true);
        return transition_done(r);
}

/* The firing goes to a waiter: what it reports as overruns starts over. */
static void timer_hand_over(struct registry *r, struct timer *t, struct session *s)
{
        stats_leave(r, t);
        t->runs->state.overruns_reported = t->runs->state.overruns;
        list_remove(&t->runs->waiter_node);
        t->runs->delivered_to = s;
        list_append(&s->delivered, &t->runs->waiter_node);
        stats_enter(r, t);
}

int registry_deliver(struct registry *r, const struct td_dispatch *d, uint64_t session)
{
        struct session *s;
        struct timer *t;
        int e;

        e = session_validate(session);
        if (e < 0)
                return e;
        if (!registry_name_valid(d->name))
                return -TIMERD_E_INVALID_NAME;
        t = timer_find(r, d->owner, d->name);
        if (!t)
                return -TIMERD_E_NOT_FOUND;
        if (t->generation != d->generation || !t->run_active || t->runs->state.run != d->run)
                return -TIMERD_E_REGISTRATION_EXPIRED;
        if (!timer_pending(t))
                return -EALREADY;
        e = session_get(r, session, &s);
        if (e < 0)
                return e;
        timer_hand_over(r, t, s);
        return 0;
}

static bool name_listed(const char *name, const char *const *names, size_t n_names)
{
        for (size_t i = 0; i < n_names; i++)
                if (strcmp(name, names[i]) == 0)
                        return true;
        return false;
}

int registry_take_pending(struct registry *r, const struct td_now *now, uint32_t owner,
                          enum timerd_delivery delivery, const char *const *names, size_t n_names,
                          uint64_t session, struct td_dispatch *ret)
{
        struct owner *o;
        struct session *s;
        int e;

        e = session_validate(session);
        if (e < 0)
                return e;
        if (n_names > 0 && !names)
                return -EINVAL;
        for (size_t i = 0; i < n_names; i++)
                if (!names[i])
                        return -EINVAL;
        o = owner_find(r, owner);
        if (!o)
                return 0;
        for (struct list_node *n = o->pending.next, *next; n != &o->pending; n = next) {
                struct timer *t = list_entry(n, struct timer_runs, waiter_node)->timer;

                next = n->next;
                if (timer_gone(r, t)) {
                        run_detach(t);
                        continue;
                }
                if ((enum timerd_delivery)t->delivery != delivery ||
                    (n_names > 0 && !name_listed(t->name, names, n_names)))
                        continue;
                e = session_get(r, session, &s);
                if (e < 0)
                        return e;
                /* The periods it missed while pending are this firing's overruns. */
                stats_leave(r, t);
                hold_settle(r, t, now->usec[t->clock]);
                stats_enter(r, t);
                timer_dispatch(r, t, ret);
                timer_hand_over(r, t, s);
                return 1;
        }
        return 0;
}

bool registry_silenced_pending(const struct registry *r)
{
        return !list_empty(&r->silenced);
}

bool registry_take_silenced_owner(struct registry *r, uint32_t *ret_owner)
{
        struct owner *o;

        if (list_empty(&r->silenced))
                return false;
        o = list_entry(r->silenced.next, struct owner, silenced_node);
        list_remove(&o->silenced_node);
        *ret_owner = o->uid;
        return true;
}

/* Whether the inventory holds timers of uid other than the n live ones of its owner record: gone
 * ones of another closing session. O(closing sessions). */
static bool owner_has_gone(const struct registry *r, uint32_t uid)
{
        for (const struct list_node *p = r->closing.next; p != &r->closing; p = p->next) {
                const struct session *c = list_entry(p, struct session, closing_node);

                if (c->uid == uid && !c->detached && !list_empty(&c->transient))
                        return true;
        }
        return false;
}

static size_t queued_total(const struct registry *r)
{
        size_t n = 0;

        for (enum timerd_clock c = 0; c < TIMERD_CLOCK_MAX; c++)
                n += timerq_size(&r->queues[c]);
        return n;
}

/* Its transient timers (of one owner) leave every count and lookup at once, whatever their
 * number; registry_reap_step() frees them a batch at a time. When they are all of their owner's
 * timers (a connection per uid holding them all), they leave the inventory at once too, so that
 * freeing one walks no tree. */
static void session_close(struct registry *r, struct session *s)
{
        struct owner *o = owner_find(r, s->uid);
        uint64_t n = 0;

        for (enum timerd_state st = 0; st < TIMERD_STATE_MAX; st++) {
                r->n_state[st] -= s->n_state[st];
                o->n_state[st] -= s->n_state[st];
                n += s->n_state[st];
        }
        if (o->n_timers == n && !owner_has_gone(r, s->uid)) {
                inventory_remove_owner(&r->inventory, s->uid, n);
                s->detached = true;
        }
        /* Every queued timer is one of its scheduled ones (each of those is queued): the queues
         * are emptied at once, and freeing one sifts no heap. */
        if (queued_total(r) == s->n_state[TIMERD_STATE_SCHEDULED]) {
                for (enum timerd_clock c = 0; c < TIMERD_CLOCK_MAX; c++)
                        timerq_clear(&r->queues[c]);
                r->unsynced = (1u << TIMERD_CLOCK_MAX) - 1;
                s->dequeued = true;
        }
        r->n_pending -= s->n_pending;
        o->n_pending -= s->n_pending;
        owner_timers_sub(r, o, n);
        r->n_gone += n;
        s->closing = true;
        list_append(&r->closing, &s->closing_node);
        /* Its Waits look again: what they waited for may be gone. */
        if (!list_linked(&o->silenced_node))
                list_append(&r->silenced, &o->silenced_node);
}

/* t, a transient timer of session, would be retained again by a rollback of the changes. */
static bool rolled_back(const struct timer *t, uint64_t session)
{
        return !t->removed && list_linked(&t->transient_node) && t->session == session;
}

static size_t n_rolled_back(const struct registry *r, uint64_t session)
{
        size_t n = 0;

        for (const struct list_node *p = r->befores.next; p != &r->befores; p = p->next)
                n += rolled_back(list_entry(p, struct before, node)->timer, session);
        return n;
}

/* A transient timer of closing session s goes at the close, not in the reap. */
static void session_timer_drop(struct registry *r, const struct session *s, struct timer *t)
{
        removal_push(r, s, t);
        timer_destroy(r, t);
}

struct td_transition registry_session_closed(struct registry *r, const struct td_now *now,
                                             uint64_t session)
{
        struct session *s;
        int e;

        effects_begin(r);
        e = session_validate(session);
        if (e < 0)
                return transition_failed(r, e);
        s = session_find(r, session);
        if (!s)
                return transition_done(r);
        e = handle_generations_check(r, TIMERD_CLOCK_MAX);
        if (e < 0)
                return transition_failed(r, e);

        if (s->closing)
                return transition_done(r);

        /* Room for the removals of the timers that go now, not in the reap. */
        e = removals_reserve(r, s->mixed ? list_length(&s->transient) : n_rolled_back(r, session));
        if (e < 0)
                return transition_failed(r, e);
        s->closed_usec = now->usec[TIMERD_CLOCK_REALTIME];
        /* Rare (the runtime gives each connection one uid): the counts cannot go at once. */
        if (s->mixed)
                while (!list_empty(&s->transient))
                        session_timer_drop(
                            r, s, list_entry(s->transient.next, struct timer, transient_node));
        /* One a call since the commit made transient may be rolled back to retained: it goes now,
         * kept as a removal. O(calls since the commit). */
        for (struct list_node *n = r->befores.next; n != &r->befores; n = n->next) {
                struct timer *t = list_entry(n, struct before, node)->timer;

                if (rolled_back(t, session))
                        session_timer_drop(r, s, t);
        }
        /* Runs handed to it end; those of its own transient timers go with them. */
        for (struct list_node *n = s->delivered.next, *next; n != &s->delivered; n = next) {
                struct timer *t = list_entry(n, struct timer_runs, waiter_node)->timer;

                next = n->next;
                if (timer_gone(r, t))
                        run_detach(t);
                else if (!(t->lifetime == TIMERD_LIFETIME_TRANSIENT && t->session == session))
                        run_abandon(r, t, now);
        }
        if (list_empty(&s->transient)) {
                session_free(r, s);
                return transition_sync(r);
        }
        session_close(r, s);
        return transition_sync(r);
}

bool registry_reap_pending(const struct registry *r)
{
        return !list_empty(&r->closing);
}

struct td_transition registry_reap_step(struct registry *r, const struct td_now *now, size_t budget,
                                        uint64_t *ret_count)
{
        int e;

        (void)now;
        effects_begin(r);
        *ret_count = 0;
        if (list_empty(&r->closing) || budget == 0)
                return transition_done(r);
        e = handle_generations_check(r, TIMERD_CLOCK_MAX);
        if (e < 0)
                return transition_failed(r, e);
        /* Out of memory for all of their removals: a smaller step, still one. */
        if (removals_reserve(r, budget) < 0)
                budget = r->removals_capacity;
        /* The next to prefetch, up to REAP_AHEAD timers before its turn (NULL: start again),
         * and the hashes of those fetched and not reaped yet, oldest at `reaped`. */
        struct list_node *ahead = NULL;
        uint64_t hashes[REAP_AHEAD];
        size_t fetched = 0, reaped = 0;

        while (*ret_count < budget && !list_empty(&r->closing)) {
                struct session *s = list_entry(r->closing.next, struct session, closing_node);

                if (list_empty(&s->transient)) {
                        session_free(r, s);
                        ahead = NULL;
                        fetched = reaped = 0;
                        continue;
                }
                if (!ahead)
                        ahead = s->transient.next;
                while (fetched - reaped < REAP_AHEAD && ahead != &s->transient) {
                        hashes[fetched++ % REAP_AHEAD] =
                            timer_reap_prefetch(r, list_entry(ahead, struct timer, transient_node));
                        ahead = ahead->next;
                }
                /* In the order they were registered: the order their removals are told in. */
                timer_reap(r, s, list_entry(s->transient.next, struct timer, transient_node),
                           hashes[reaped++ % REAP_AHEAD]);
                (*ret_count)++;
        }
        return transition_sync(r);
}
