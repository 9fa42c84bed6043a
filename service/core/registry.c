/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The policy state machine, control side: the registry made and freed, and the calls that declare
 * and schedule timers. Calls changes, effects and timer; never run or restore. */

#include <errno.h>
#include <stdlib.h>

#include "service/core/registry-internal.h"

/* splitmix64 (a Weyl sequence through the table's mixer): deterministic from the configured
 * seed, so the core stays pure. */
static uint64_t random_next(struct registry *r)
{
        return hash_mix64(r->random_state += UINT64_C(0x9e3779b97f4a7c15));
}

/*
 * The deadline of a calendar timer's next elapse strictly after `after`, delayed by a random part
 * of randomized_delay_usec: fresh each elapse, or fixed by the timer's identity. 0;
 * -TIMERD_E_INVALID_SCHEDULE (calendar_never) when no elapse is left; -TIMERD_E_OVERFLOW.
 */
int calendar_deadline(struct registry *r, uint32_t owner, const char *name,
                      const struct td_declaration *d, uint64_t after, uint64_t *ret)
{
        uint64_t elapse, delay = 0;

        if (td_calendar_next(d->calendar, after, &elapse) < 0)
                return schedule_invalid(&r->problem, TD_SCHEDULE_CALENDAR_NEVER);
        if (d->randomized_delay_usec > 0)
                delay = (d->calendar->fixed_random_delay ? identity_hash(owner, name)
                                                         : random_next(r)) %
                        d->randomized_delay_usec;
        if (__builtin_add_overflow(elapse, delay, ret))
                return -TIMERD_E_OVERFLOW;
        return 0;
}

static int generation_check(const struct registry *r)
{
        return r->last_generation < TD_VALUE_MAX ? 0 : -TIMERD_E_OVERFLOW;
}

int session_validate(uint64_t session)
{
        return session > 0 ? 0 : -EINVAL;
}

/* Where a new registration starts: start_usec, or now + cadence, or the next calendar elapse, or
 * nowhere (once). A periodic timer whose next deadline after that could not be carried overflows
 * now, not at its firing. */
static int first_deadline(struct registry *r, const struct td_register_args *a,
                          const struct td_now *now, bool *ret_has, uint64_t *ret_deadline)
{
        const struct td_declaration *d = &a->declaration;
        bool has_start = a->has_start;
        uint64_t start_usec = a->start_usec, successor;

        *ret_has = has_start || d->policy != TIMERD_POLICY_ONCE;
        if (has_start)
                *ret_deadline = start_usec;
        else if (d->calendar)
                return calendar_deadline(r, a->caller.uid, a->name, d, now->usec[d->clock],
                                         ret_deadline);
        else if (*ret_has && value_add_overflow(now->usec[d->clock], d->cadence_usec, ret_deadline))
                return -TIMERD_E_OVERFLOW;
        if (d->policy != TIMERD_POLICY_ONCE && !d->calendar &&
            value_add_overflow(*ret_deadline, d->cadence_usec, &successor))
                return -TIMERD_E_OVERFLOW;
        return 0;
}

/*
 * Make `deadline` the timer's next wake-up: queued now, or, for a once or after-completion timer
 * during a run, armed when the run completes. An explicit schedule also clears a failure.
 */
static void timer_set_wakeup(struct registry *r, struct timer *t, uint64_t deadline_usec,
                             const struct td_now *now)
{
        stats_leave(r, t);
        t->failure = TIMERD_FAILURE_NONE;
        if (t->run_active && (policy_runs_off_queue((enum timerd_policy)t->policy) ||
                              t->after_run == AFTER_RUN_DEADLINE)) {
                t->after_run = AFTER_RUN_DEADLINE;
                t->runs->state.deferred_deadline_usec = deadline_usec;
        } else
                timer_enqueue(r, t, deadline_usec, now->usec[t->clock]);
        stats_enter(r, t);
}

/* Clear the live wake-up (and the one an active run would arm); the declaration stays. */
static void timer_clear_wakeup(struct registry *r, struct timer *t)
{
        stats_leave(r, t);
        t->failure = TIMERD_FAILURE_NONE;
        timer_dequeue(r, t);
        t->after_run = t->run_active && policy_runs_off_queue((enum timerd_policy)t->policy)
                           ? AFTER_RUN_NONE
                           : AFTER_RUN_POLICY;
        if (t->runs)
                t->runs->state.deferred_deadline_usec = 0;
        stats_enter(r, t);
}

void timer_drop_hold(struct timer *t)
{
        if (!timer_held(t))
                return;
        t->after_run = AFTER_RUN_POLICY;
        t->runs->state.deferred_deadline_usec = 0;
}

void timer_fail(struct registry *r, struct timer *t, enum timerd_failure failure)
{
        stats_leave(r, t);
        timer_dequeue(r, t);
        timer_drop_hold(t);
        t->failure = (unsigned)failure & 0x7u;
        stats_enter(r, t);
}

/* A claim, or the token of the active run acting as one. */
int handle_resolve(const struct registry *r, const struct td_handle *h, struct timer **ret)
{
        struct timer *t;

        if (!registry_name_valid(h->name))
                return -TIMERD_E_INVALID_NAME;
        t = timer_find(r, h->owner, h->name);
        if (!t) {
                /* Gone, or never given: only the owner's own history decides. */
                const struct owner *o = owner_find(r, h->owner);
                return o && h->generation > 0 && h->generation <= o->last_generation
                           ? -TIMERD_E_REGISTRATION_EXPIRED
                           : -TIMERD_E_NOT_FOUND;
        }
        if (h->generation != t->generation)
                return -TIMERD_E_REGISTRATION_EXPIRED;
        if (h->run != 0 && (!t->run_active || h->run != t->runs->state.run))
                return -TIMERD_E_REGISTRATION_EXPIRED;
        *ret = t;
        return 0;
}

int registry_new(const struct registry_config *config, struct registry **ret)
{
        struct registry *r;

        if (!config || config->first_generation < 1 || config->first_handle_generation < 1)
                return -EINVAL;
        r = calloc(1, sizeof(*r));
        if (!r)
                return -ENOMEM;
        r->config = *config;
        r->last_generation = config->first_generation - 1;
        r->last_handle_generation = config->first_handle_generation - 1;
        r->random_state = config->random_seed;
        list_init(&r->befores);
        list_init(&r->silenced);
        list_init(&r->closing);
        registry_indexes_init(r);
        /* Transitions other than expiries emit at most one ARM or DISARM per clock. */
        if (effects_reserve(r, TIMERD_CLOCK_MAX) < 0 || removals_reserve(r, REMOVALS_MIN) < 0) {
                free(r->effects);
                free(r);
                return -ENOMEM;
        }
        *ret = r;
        return 0;
}

void registry_free(struct registry *r)
{
        if (!r)
                return;
        changes_free(r);
        registry_indexes_free(r);
        free(r->effects);
        free(r->removals);
        free(r);
}

/* A cadence below the configured minimum would let one timer cost a wake-up that often. */
static int cadence_allowed(struct registry *r, uint64_t cadence_usec)
{
        return cadence_usec == 0 || cadence_usec >= r->config.min_cadence_usec
                   ? 0
                   : schedule_invalid(&r->problem, TD_SCHEDULE_CADENCE_BELOW_MINIMUM);
}

/* What Register and Reconcile check before looking at the registry. */
static int declare_args_validate(struct registry *r, const struct td_caller *caller,
                                 const char *name, const struct td_declaration *d)
{
        int e = session_validate(caller->session);

        if (e < 0)
                return e;
        if (!registry_name_valid(name))
                return -TIMERD_E_INVALID_NAME;
        e = declaration_validate(d, &r->problem);
        if (e < 0)
                return e;
        return cadence_allowed(r, d->cadence_usec);
}

struct td_transition registry_register(struct registry *r, const struct td_now *now,
                                       const struct td_register_args *a, uint64_t *ret_generation)
{
        struct timer_place place = {0};
        struct before *b = NULL;
        struct timer *t;
        uint64_t deadline = 0;
        bool has_deadline;
        int e;

        effects_begin(r);
        e = declare_args_validate(r, &a->caller, a->name, &a->declaration);
        if (e < 0)
                return transition_failed(r, e);
        /* The name's slot is fetched while the deadline is computed: at a million timers the
         * table outgrows the caches, and the look-up would wait for the miss. */
        place.hash = identity_hash(a->caller.uid, a->name);
        hashmap_prefetch(&r->timers, place.hash);
        e = first_deadline(r, a, now, &has_deadline, &deadline);
        if (e < 0)
                return transition_failed(r, e);

        t = timer_find_hashed(r, place.hash, a->caller.uid, a->name);
        if (t && !a->replace)
                return transition_failed(r, -TIMERD_E_ALREADY_REGISTERED);
        e = generation_check(r);
        if (e >= 0)
                e = handle_generations_check(
                    r, t && (enum timerd_clock)t->clock != a->declaration.clock ? 2 : 1);
        if (e >= 0 && !t)
                e = timer_limits_check(r, a->caller.uid, a->privileged);
        if (e >= 0)
                e = before_prepare(r, t, a->declaration.lifetime == TIMERD_LIFETIME_RETAINED, &b);
        bool created = !t;
        if (e >= 0)
                e = t ? timer_redeclare(r, t, &a->caller, &a->declaration, r->last_generation + 1)
                      : timer_new_uncounted(r, &a->caller, a->name, &a->declaration,
                                            r->last_generation + 1, &place, &t);
        if (e < 0) {
                before_free(b);
                return transition_failed(r, e);
        }

        before_attach(r, t, b);
        /* A new timer is counted once, with its first wake-up queued (no failure to clear, no
         * run to defer it to): not counted, then uncounted and counted again around it. */
        if (created) {
                if (has_deadline)
                        timer_enqueue(r, t, deadline, now->usec[t->clock]);
                stats_enter(r, t);
        } else if (has_deadline)
                timer_set_wakeup(r, t, deadline, now);
        *ret_generation = t->generation;
        return transition_sync(r);
}

/* What Reconcile must do to the live schedule, decided before anything changes. */
enum reconcile_step {
        RECONCILE_CLEAR,
        RECONCILE_KEEP,
        RECONCILE_RESUME_POLICY, /* after-completion cancelled during its run: re-arm at completion
                                  */
        RECONCILE_SET,
};

static int reconcile_plan(struct registry *r, const struct timer *t, const struct td_now *now,
                          const struct td_reconcile_args *a, enum reconcile_step *ret_step,
                          uint64_t *ret_deadline)
{
        const struct td_declaration *d = &a->declaration;

        switch (a->desired) {
        case TIMERD_DESIRED_INACTIVE:
                *ret_step = RECONCILE_CLEAR;
                return 0;
        case TIMERD_DESIRED_EXACT:
                if (d->policy == TIMERD_POLICY_WATCHDOG)
                        return -TIMERD_E_WRONG_POLICY;
                *ret_step = RECONCILE_SET;
                *ret_deadline = a->deadline_usec;
                return 0;
        case TIMERD_DESIRED_SCHEDULED:
                if (a->has_deadline && d->policy == TIMERD_POLICY_WATCHDOG)
                        return -TIMERD_E_WRONG_POLICY;
                /* Queued, held behind its run, or armed by the run's end: kept. */
                if (t &&
                    (timer_queued(t) || (t->run_active && t->after_run == AFTER_RUN_DEADLINE))) {
                        *ret_step = RECONCILE_KEEP;
                        return 0;
                }
                if (t && t->run_active && policy_runs_off_queue(d->policy)) {
                        if (d->policy == TIMERD_POLICY_AFTER_COMPLETION ||
                            d->policy == TIMERD_POLICY_CALENDAR) {
                                *ret_step = RECONCILE_RESUME_POLICY;
                                return 0;
                        }
                }
                *ret_step = RECONCILE_SET;
                if (a->has_deadline) {
                        *ret_deadline = a->deadline_usec;
                        return 0;
                }
                /* A once timer has no cadence to invent a wake-up from. */
                if (d->policy == TIMERD_POLICY_ONCE)
                        return schedule_invalid(&r->problem, TD_SCHEDULE_DEADLINE_MISSING);
                if (d->calendar)
                        return calendar_deadline(r, a->caller.uid, a->name, d, now->usec[d->clock],
                                                 ret_deadline);
                if (value_add_overflow(now->usec[d->clock], d->cadence_usec, ret_deadline))
                        return -TIMERD_E_OVERFLOW;
                return 0;
        default:
                return -TIMERD_E_INVALID_PARAMETER;
        }
}

struct td_transition registry_reconcile(struct registry *r, const struct td_now *now,
                                        const struct td_reconcile_args *a, uint64_t *ret_generation,
                                        bool *ret_created)
{
        struct timer_place place = {0};
        enum reconcile_step step;
        struct before *b = NULL;
        uint64_t deadline = 0;
        struct timer *t;
        bool created, rescheduled, handover_changed;
        int e;

        effects_begin(r);
        e = declare_args_validate(r, &a->caller, a->name, &a->declaration);
        if (e < 0)
                return transition_failed(r, e);
        place.hash = identity_hash(a->caller.uid, a->name);
        t = timer_find_hashed(r, place.hash, a->caller.uid, a->name);
        if (t && !declaration_equal(t, &a->declaration))
                return transition_failed(r, -TIMERD_E_RECONCILIATION_CONFLICT);
        e = reconcile_plan(r, t, now, a, &step, &deadline);
        if (e >= 0)
                e = handle_generations_check(r, 1);
        if (e >= 0 && !t)
                e = generation_check(r);
        created = !t;
        if (e >= 0 && created)
                e = timer_limits_check(r, a->caller.uid, a->privileged);
        /* Keeping an existing timer as it is changes nothing to undo or write; a cadence set by
         * Reschedule goes back to the declared one. */
        rescheduled = t && timer_run_state(t)->live_cadence_usec > 0;
        handover_changed = t && t->handover_usec != a->declaration.handover_usec;
        if (e >= 0 && (created || step != RECONCILE_KEEP || rescheduled || handover_changed))
                e = before_prepare(r, t, a->declaration.lifetime == TIMERD_LIFETIME_RETAINED, &b);
        if (e >= 0 && created)
                e = timer_new(r, &a->caller, a->name, &a->declaration, r->last_generation + 1,
                              &place, &t);
        if (e < 0) {
                before_free(b);
                return transition_failed(r, e);
        }

        before_attach(r, t, b);
        if (!created && a->caller_is_owner && t->delivery == TIMERD_DELIVERY_SIGNAL &&
            timer_retained(t))
                t->session = a->caller.session;
        if (rescheduled) {
                t->runs->state.live_cadence_usec = 0;
                timer_changed(r, t);
        }
        if (handover_changed)
                timer_set_handover(r, t, a->declaration.handover_usec);
        switch (step) {
        case RECONCILE_CLEAR:
                timer_clear_wakeup(r, t);
                break;
        case RECONCILE_KEEP:
                break;
        case RECONCILE_RESUME_POLICY:
                t->after_run = AFTER_RUN_POLICY;
                timer_changed(r, t);
                break;
        case RECONCILE_SET:
                timer_set_wakeup(r, t, deadline, now);
                break;
        }
        *ret_generation = t->generation;
        *ret_created = created;
        return transition_sync(r);
}

/* How a call on a claim (or token) starts: its effects begun, the claim resolved. */
static int claim_begin(struct registry *r, const struct td_handle *h, struct timer **ret)
{
        effects_begin(r);
        return handle_resolve(r, h, ret);
}

/* Schedule and Kick, their checks passed: the change begun, t wakes at deadline_usec. */
static struct td_transition wakeup_change(struct registry *r, struct timer *t,
                                          uint64_t deadline_usec, const struct td_now *now)
{
        int e = change_begin(r, t);

        if (e < 0)
                return transition_failed(r, e);
        timer_set_wakeup(r, t, deadline_usec, now);
        return transition_sync(r);
}

struct td_transition registry_schedule(struct registry *r, const struct td_now *now,
                                       const struct td_handle *h, uint64_t deadline_usec)
{
        struct timer *t;
        int e = claim_begin(r, h, &t);

        if (e >= 0 && t->policy == TIMERD_POLICY_WATCHDOG)
                e = -TIMERD_E_WRONG_POLICY;
        if (e < 0)
                return transition_failed(r, e);
        return wakeup_change(r, t, deadline_usec, now);
}

struct td_transition registry_reschedule(struct registry *r, const struct td_now *now,
                                         const struct td_handle *h, bool has_deadline,
                                         uint64_t deadline_usec, bool has_cadence,
                                         uint64_t cadence_usec, struct td_reschedule_result *ret)
{
        uint64_t previous = 0, n;
        struct timer *t;
        int e = claim_begin(r, h, &t);

        if (e < 0)
                return transition_failed(r, e);
        /* A watchdog's deadline moves only by Kick; disarming and a new cadence are fine. */
        if (has_deadline && t->policy == TIMERD_POLICY_WATCHDOG)
                return transition_failed(r, -TIMERD_E_WRONG_POLICY);
        /* A calendar timer's elapses come from its schedule. */
        if (has_cadence && timer_calendar(t))
                return transition_failed(r, -TIMERD_E_WRONG_POLICY);
        if (has_cadence) {
                /* The new cadence must suit the declaration, its handover included. */
                struct td_declaration d = timer_declaration(t);

                d.cadence_usec = cadence_usec;
                e = declaration_validate(&d, &r->problem);
                if (e >= 0)
                        e = cadence_allowed(r, cadence_usec);
                /* The live cadence is kept with the runs, not in the declaration. */
                if (e >= 0)
                        e = timer_runs_attach(t);
                if (e < 0)
                        return transition_failed(r, e);
        }
        e = change_begin(r, t);
        if (e < 0)
                return transition_failed(r, e);
        n = now->usec[t->clock];
        if (timer_next_deadline(t, &previous))
                previous = previous > n ? previous - n : 0;
        *ret = (struct td_reschedule_result){
            .previous_remaining_usec = previous,
            .previous_cadence_usec = timer_cadence(t),
        };
        /* One encoding: the declared cadence is kept as 0. */
        if (has_cadence)
                t->runs->state.live_cadence_usec =
                    cadence_usec == t->cadence_usec ? 0 : cadence_usec;
        timer_changed(r, t);
        if (has_deadline)
                timer_set_wakeup(r, t, deadline_usec, now);
        else
                timer_clear_wakeup(r, t);
        return transition_sync(r);
}

/* How a control call on a claim (or token) starts: claim_begin(), its own refusal (< 0) before
 * any error of the claim, then the change begun. */
static int control_begin(struct registry *r, const struct td_handle *h, int refusal,
                         struct timer **ret)
{
        int e = claim_begin(r, h, ret);

        if (refusal < 0)
                return refusal;
        return e < 0 ? e : change_begin(r, *ret);
}

/* Cancel and Unregister: act on the claim once control_begin() let it. */
static struct td_transition control_call(struct registry *r, const struct td_handle *h, int refusal,
                                         void (*act)(struct registry *r, struct timer *t))
{
        struct timer *t;
        int e = control_begin(r, h, refusal, &t);

        if (e < 0)
                return transition_failed(r, e);
        act(r, t);
        return transition_sync(r);
}

struct td_transition registry_cancel(struct registry *r, const struct td_now *now,
                                     const struct td_handle *h)
{
        (void)now;
        return control_call(r, h, 0, timer_clear_wakeup);
}

struct td_transition registry_kick(struct registry *r, const struct td_now *now,
                                   const struct td_handle *h, uint64_t *ret_deadline_usec)
{
        uint64_t deadline;
        struct timer *t;
        int e = claim_begin(r, h, &t);

        if (e < 0)
                return transition_failed(r, e);
        if (t->policy != TIMERD_POLICY_WATCHDOG)
                return transition_failed(r, -TIMERD_E_WRONG_POLICY);
        if (value_add_overflow(now->usec[t->clock], timer_cadence(t), &deadline))
                return transition_failed(r, -TIMERD_E_OVERFLOW);
        *ret_deadline_usec = deadline;
        return wakeup_change(r, t, deadline, now);
}

struct td_transition registry_unregister(struct registry *r, const struct td_now *now,
                                         const struct td_handle *h)
{
        (void)now;
        /* Unregister needs the claim itself: a run token delegates control, not ownership. */
        return control_call(r, h, h->run != 0 ? -TIMERD_E_INVALID_PARAMETER : 0, timer_destroy);
}

struct td_transition registry_fail(struct registry *r, const struct td_now *now,
                                   const struct td_handle *h, enum timerd_failure failure)
{
        bool valid = failure > TIMERD_FAILURE_NONE && failure < TIMERD_FAILURE_MAX;
        struct timer *t;
        int e = control_begin(r, h, valid ? 0 : -TIMERD_E_INVALID_PARAMETER, &t);

        (void)now;
        if (e < 0)
                return transition_failed(r, e);
        timer_fail(r, t, failure);
        return transition_sync(r);
}

struct td_transition registry_note_overrun(struct registry *r, const struct td_now *now,
                                           const struct td_handle *h)
{
        uint64_t overruns;
        struct timer *t;
        int e = claim_begin(r, h, &t);

        (void)now;
        if (e < 0)
                return transition_failed(r, e);
        if (value_add_overflow(timer_run_state(t)->overruns, 1, &overruns))
                return transition_failed(r, -TIMERD_E_OVERFLOW);
        e = timer_runs_attach(t);
        if (e < 0)
                return transition_failed(r, e);
        stats_leave(r, t);
        t->runs->state.overruns = overruns;
        r->overruns = value_saturating_add(r->overruns, 1);
        stats_enter(r, t);
        return transition_done(r);
}
