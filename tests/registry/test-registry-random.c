/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * Thousands of random operations (fixed seed) against a deliberately naive reference model: a
 * flat array of timers, linear scans and sorting instead of heaps and hash tables. After every
 * step the registry must pass registry_check(), answer what the model expects, agree with the
 * model on every timer's snapshot, and keep each clock armed exactly at the model's arm time.
 * Every 25 steps the pending changes are committed to an image of the journal, which must then
 * hold exactly the retained timers: no change escapes the tracking.
 */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fixture.h"

#define N_OWNERS 3
#define N_NAMES  4
#define N_SLOTS  (N_OWNERS * N_NAMES)
#define N_CLOCKS 3 /* monotonic, boottime, realtime */
#define N_STEPS  6000

static const char *const names[N_NAMES] = {"a", "b", "c", "d"};

enum model_after_run {
        MODEL_AFTER_POLICY,
        MODEL_AFTER_DEADLINE,
        MODEL_AFTER_NONE,
};

struct model_timer {
        bool exists;
        struct td_declaration decl;
        uint64_t session;
        uint64_t generation;
        bool queued;
        uint64_t deadline;
        enum timerd_failure failure;
        bool run_active;
        uint64_t run;
        bool pending;
        uint64_t pending_seq;
        uint64_t delivered_to;
        enum model_after_run after_run;
        uint64_t deferred;
        uint64_t runs;
        uint64_t overruns;
        uint64_t reported; /* overruns when the last firing was handed over */
        uint64_t consecutive;
        uint64_t live_cadence; /* Reschedule's; 0: the declared one */
};

static uint64_t model_cadence(const struct model_timer *t)
{
        return t->live_cadence > 0 ? t->live_cadence : t->decl.cadence_usec;
}

struct model {
        struct model_timer t[N_SLOTS];
        uint64_t generation;
        uint64_t pending_seq;
        uint64_t session[N_OWNERS];
        uint64_t next_session;
        uint64_t owner_generation[N_OWNERS]; /* the last generation given to each owner */
};

struct world {
        struct fx f;
        struct model m;
        uint64_t rng;
};

static uint64_t rnd(struct world *w, uint64_t n)
{
        w->rng ^= w->rng << 13;
        w->rng ^= w->rng >> 7;
        w->rng ^= w->rng << 17;
        return w->rng % n;
}

static uint32_t slot_owner(size_t s)
{
        return (uint32_t)(1 + s / N_NAMES);
}

static const char *slot_name(size_t s)
{
        return names[s % N_NAMES];
}

static bool off_queue(const struct model_timer *t)
{
        return t->decl.policy == TIMERD_POLICY_ONCE ||
               t->decl.policy == TIMERD_POLICY_AFTER_COMPLETION;
}

static enum timerd_state model_state(const struct model_timer *t)
{
        if (t->failure != TIMERD_FAILURE_NONE)
                return TIMERD_STATE_FAILED;
        if (t->run_active)
                return TIMERD_STATE_RUNNING;
        return t->queued ? TIMERD_STATE_SCHEDULED : TIMERD_STATE_INACTIVE;
}

static uint64_t now_of(const struct world *w, const struct model_timer *t)
{
        return w->f.now.usec[t->decl.clock];
}

/* An interval or watchdog due again during its run: off the queue until the run is taken or ends.
 */
static bool held(const struct model_timer *t)
{
        return t->run_active && !off_queue(t) && t->after_run == MODEL_AFTER_DEADLINE;
}

/* The held deadlines that passed are overruns. */
static void model_settle(const struct world *w, struct model_timer *t)
{
        if (!held(t) || t->deferred > now_of(w, t))
                return;
        uint64_t k = (now_of(w, t) - t->deferred) / model_cadence(t) + 1;
        t->overruns += k;
        t->deferred += k * model_cadence(t);
}

static void model_set_wakeup(struct model_timer *t, uint64_t deadline)
{
        t->failure = TIMERD_FAILURE_NONE;
        if (t->run_active && (off_queue(t) || t->after_run == MODEL_AFTER_DEADLINE)) {
                t->after_run = MODEL_AFTER_DEADLINE;
                t->deferred = deadline;
        } else {
                t->queued = true;
                t->deadline = deadline;
        }
}

static void model_clear_wakeup(struct model_timer *t)
{
        t->failure = TIMERD_FAILURE_NONE;
        t->queued = false;
        t->after_run = t->run_active && off_queue(t) ? MODEL_AFTER_NONE : MODEL_AFTER_POLICY;
}

static void model_end_run(struct world *w, struct model_timer *t, enum timerd_outcome outcome,
                          enum timerd_directive directive)
{
        model_settle(w, t);
        if (t->delivered_to == 0)
                t->reported = t->overruns;
        t->run_active = false;
        t->pending = false;
        t->delivered_to = 0;
        t->runs++;
        t->consecutive = outcome == TIMERD_OUTCOME_EXPECTED_FAILURE ? t->consecutive + 1 : 0;
        if (outcome == TIMERD_OUTCOME_INVARIANT_FAILURE) {
                t->queued = false;
                t->failure = TIMERD_FAILURE_INVARIANT;
        } else if (directive == TIMERD_DIRECTIVE_STOP)
                t->queued = false;
        else if (t->failure == TIMERD_FAILURE_NONE && t->after_run == MODEL_AFTER_DEADLINE) {
                t->queued = true;
                t->deadline = t->deferred;
        } else if (t->failure == TIMERD_FAILURE_NONE && t->after_run == MODEL_AFTER_POLICY &&
                   t->decl.policy == TIMERD_POLICY_AFTER_COMPLETION) {
                t->queued = true;
                t->deadline = now_of(w, t) + model_cadence(t);
        }
        t->after_run = MODEL_AFTER_POLICY;
}

/* A claim or token for slot s: usually valid, sometimes stale. */
static struct td_handle pick_handle(struct world *w, size_t s, bool token)
{
        const struct model_timer *t = &w->m.t[s];
        struct td_handle h = {.owner = slot_owner(s),
                              .name = slot_name(s),
                              .generation = t->generation,
                              .run = token ? t->run : 0};

        switch (rnd(w, 12)) {
        case 0:
                h.generation++;
                break;
        case 1:
                h.run++;
                break;
        default:
                break;
        }
        return h;
}

/* What resolving h must answer, per the model. */
static int model_resolve(const struct world *w, size_t s, const struct td_handle *h)
{
        const struct model_timer *t = &w->m.t[s];

        if (!t->exists)
                return h->generation > 0 && h->generation <= w->m.owner_generation[h->owner - 1]
                           ? -TIMERD_E_REGISTRATION_EXPIRED
                           : -TIMERD_E_NOT_FOUND;
        if (h->generation != t->generation)
                return -TIMERD_E_REGISTRATION_EXPIRED;
        if (h->run != 0 && (!t->run_active || h->run != t->run))
                return -TIMERD_E_REGISTRATION_EXPIRED;
        return 0;
}

static struct td_declaration random_decl(struct world *w)
{
        /* The model has no calendar: test-registry-calendar.c covers that policy. */
        struct td_declaration d = fx_decl((enum timerd_policy)rnd(w, TIMERD_POLICY_CALENDAR), 0);

        if (d.policy != TIMERD_POLICY_ONCE)
                d.cadence_usec = 1 + rnd(w, 50);
        d.clock = (enum timerd_clock)rnd(w, N_CLOCKS);
        d.lifetime = rnd(w, 3) == 0 ? TIMERD_LIFETIME_RETAINED : TIMERD_LIFETIME_TRANSIENT;
        d.accuracy_usec = rnd(w, 2) == 0 ? 0 : rnd(w, 20);
        return d;
}

static uint64_t random_deadline(struct world *w, enum timerd_clock c)
{
        uint64_t now = w->f.now.usec[c];

        return now + rnd(w, 120) - (now >= 10 ? 10 : 0);
}

static void model_declare(struct world *w, size_t s, const struct td_declaration *d,
                          uint64_t session)
{
        struct model_timer *t = &w->m.t[s];

        *t = (struct model_timer){
            .exists = true,
            .decl = *d,
            .session = session,
            .generation = ++w->m.generation,
        };
        w->m.owner_generation[slot_owner(s) - 1] = t->generation;
}

static void step_register(struct world *w, size_t s)
{
        struct model_timer *t = &w->m.t[s];
        struct td_declaration d = random_decl(w);
        uint64_t session = w->m.session[slot_owner(s) - 1], g;
        bool has_start = rnd(w, 2) == 0, replace = rnd(w, 2) == 0;
        uint64_t start = random_deadline(w, d.clock);
        int expect = 0;

        if (rnd(w, 20) == 0)
                d.cadence_usec = d.policy == TIMERD_POLICY_ONCE ? 5 : 0;
        if (d.policy == TIMERD_POLICY_ONCE ? d.cadence_usec != 0 : d.cadence_usec == 0)
                expect = -TIMERD_E_INVALID_SCHEDULE;
        else if (t->exists && !replace)
                expect = -TIMERD_E_ALREADY_REGISTERED;

        assert_int_equal(fx_register_full(&w->f, slot_owner(s), session, slot_name(s), d, has_start,
                                          start, replace, &g),
                         expect);
        if (expect < 0)
                return;
        model_declare(w, s, &d, session);
        assert_int_equal(g, t->generation);
        if (has_start || d.policy != TIMERD_POLICY_ONCE) {
                t->queued = true;
                t->deadline = has_start ? start : now_of(w, t) + d.cadence_usec;
        }
}

static bool decl_equal(const struct td_declaration *a, const struct td_declaration *b)
{
        return a->policy == b->policy && a->cadence_usec == b->cadence_usec &&
               a->clock == b->clock && a->lifetime == b->lifetime && a->delivery == b->delivery &&
               a->accuracy_usec == b->accuracy_usec;
}

static void step_reconcile(struct world *w, size_t s)
{
        struct model_timer *t = &w->m.t[s];
        struct td_declaration d = t->exists && rnd(w, 4) != 0 ? t->decl : random_decl(w);
        enum timerd_desired desired = (enum timerd_desired)rnd(w, TIMERD_DESIRED_MAX);
        struct td_reconcile_args a = {
            .caller = {.uid = slot_owner(s), .session = w->m.session[slot_owner(s) - 1]},
            .name = slot_name(s),
            .declaration = d,
            .desired = desired,
            .deadline_usec = random_deadline(w, d.clock),
        };
        enum { CLEAR, KEEP, RESUME, SET } plan = KEEP;
        uint64_t deadline = a.deadline_usec, g = 0;
        bool created = false;
        int expect = 0;

        if (t->exists && !decl_equal(&t->decl, &d))
                expect = -TIMERD_E_RECONCILIATION_CONFLICT;
        else if (desired == TIMERD_DESIRED_INACTIVE)
                plan = CLEAR;
        else if (desired == TIMERD_DESIRED_EXACT && d.policy == TIMERD_POLICY_WATCHDOG)
                expect = -TIMERD_E_WRONG_POLICY;
        else if (desired == TIMERD_DESIRED_EXACT)
                plan = SET;
        else if (t->exists && t->queued)
                plan = KEEP;
        else if (t->exists && t->run_active && t->after_run == MODEL_AFTER_DEADLINE)
                plan = KEEP;
        else if (t->exists && t->run_active && d.policy == TIMERD_POLICY_AFTER_COMPLETION)
                plan = RESUME;
        else if (d.policy == TIMERD_POLICY_ONCE)
                expect = -TIMERD_E_INVALID_SCHEDULE;
        else {
                plan = SET;
                deadline = w->f.now.usec[d.clock] + d.cadence_usec;
        }

        assert_int_equal(fx_apply(&w->f, registry_reconcile(w->f.r, &w->f.now, &a, &g, &created)),
                         expect);
        if (expect < 0)
                return;
        assert_int_equal(created, !t->exists);
        if (!t->exists)
                model_declare(w, s, &d, a.caller.session);
        assert_int_equal(g, t->generation);
        /* Reconcile puts the declared cadence back. */
        t->live_cadence = 0;
        if (plan == CLEAR)
                model_clear_wakeup(t);
        else if (plan == RESUME)
                t->after_run = MODEL_AFTER_POLICY;
        else if (plan == SET)
                model_set_wakeup(t, deadline);
}

static void step_schedule(struct world *w, size_t s)
{
        struct model_timer *t = &w->m.t[s];
        struct td_handle h = pick_handle(w, s, rnd(w, 2) == 0);
        uint64_t deadline = random_deadline(w, t->exists ? t->decl.clock : 0);
        int expect = model_resolve(w, s, &h);

        if (expect == 0 && t->decl.policy == TIMERD_POLICY_WATCHDOG)
                expect = -TIMERD_E_WRONG_POLICY;
        assert_int_equal(fx_schedule(&w->f, h, deadline), expect);
        if (expect == 0)
                model_set_wakeup(t, deadline);
}

static void step_reschedule(struct world *w, size_t s)
{
        struct model_timer *t = &w->m.t[s];
        struct td_handle h = pick_handle(w, s, rnd(w, 2) == 0);
        bool has_deadline = rnd(w, 3) != 0;
        uint64_t deadline = random_deadline(w, t->exists ? t->decl.clock : 0);
        uint64_t cadence = 1 + rnd(w, 40), next = 0;
        bool has_cadence = t->exists && t->decl.policy != TIMERD_POLICY_ONCE && rnd(w, 2) == 0;
        struct td_reschedule_result rr;
        int expect = model_resolve(w, s, &h);

        if (expect == 0 && has_deadline && t->decl.policy == TIMERD_POLICY_WATCHDOG)
                expect = -TIMERD_E_WRONG_POLICY;
        assert_int_equal(fx_apply(&w->f, registry_reschedule(w->f.r, &w->f.now, &h, has_deadline,
                                                             deadline, has_cadence, cadence, &rr)),
                         expect);
        if (expect < 0)
                return;
        if (t->queued)
                next = t->deadline;
        else if (t->run_active && t->after_run == MODEL_AFTER_DEADLINE)
                next = t->deferred;
        assert_int_equal(rr.previous_remaining_usec, next > now_of(w, t) ? next - now_of(w, t) : 0);
        assert_int_equal(rr.previous_cadence_usec, model_cadence(t));
        /* The live schedule's, never the declaration's. */
        if (has_cadence)
                t->live_cadence = cadence == t->decl.cadence_usec ? 0 : cadence;
        if (has_deadline)
                model_set_wakeup(t, deadline);
        else
                model_clear_wakeup(t);
}

static void step_cancel(struct world *w, size_t s)
{
        struct td_handle h = pick_handle(w, s, rnd(w, 2) == 0);
        int expect = model_resolve(w, s, &h);

        assert_int_equal(fx_cancel(&w->f, h), expect);
        if (expect == 0)
                model_clear_wakeup(&w->m.t[s]);
}

static void step_kick(struct world *w, size_t s)
{
        struct model_timer *t = &w->m.t[s];
        struct td_handle h = pick_handle(w, s, rnd(w, 2) == 0);
        int expect = model_resolve(w, s, &h);
        uint64_t next = 0;

        if (expect == 0 && t->decl.policy != TIMERD_POLICY_WATCHDOG)
                expect = -TIMERD_E_WRONG_POLICY;
        assert_int_equal(fx_kick(&w->f, h, &next), expect);
        if (expect < 0)
                return;
        assert_int_equal(next, now_of(w, t) + model_cadence(t));
        model_set_wakeup(t, next);
}

static void step_unregister(struct world *w, size_t s)
{
        struct td_handle h = pick_handle(w, s, false);
        int expect = h.run != 0 ? -TIMERD_E_INVALID_PARAMETER : model_resolve(w, s, &h);

        assert_int_equal(fx_unregister(&w->f, h), expect);
        if (expect == 0)
                w->m.t[s].exists = false;
}

static void step_complete(struct world *w, size_t s)
{
        struct model_timer *t = &w->m.t[s];
        struct td_handle h = pick_handle(w, s, rnd(w, 8) != 0);
        enum timerd_outcome outcome = (enum timerd_outcome)(1 + rnd(w, 3));
        enum timerd_directive directive =
            rnd(w, 4) == 0 ? TIMERD_DIRECTIVE_STOP : TIMERD_DIRECTIVE_CONTINUE;
        int expect = model_resolve(w, s, &h);

        if (outcome == TIMERD_OUTCOME_INVARIANT_FAILURE && rnd(w, 3) != 0)
                outcome = TIMERD_OUTCOME_SUCCESS;
        if (expect == 0 && h.run == 0)
                expect = -TIMERD_E_NOT_RUNNING;
        assert_int_equal(fx_complete(&w->f, h, outcome, directive, 0), expect);
        if (expect == 0)
                model_end_run(w, t, outcome, directive);
}

static int due_compare(const void *a, const void *b, void *ctx)
{
        const struct model *m = ctx;
        size_t x = *(const size_t *)a, y = *(const size_t *)b;

        if (m->t[x].deadline != m->t[y].deadline)
                return m->t[x].deadline < m->t[y].deadline ? -1 : 1;
        /* Slots are laid out in (owner, name) order. */
        return x < y ? -1 : 1;
}

static void step_advance(struct world *w, enum timerd_clock c)
{
        uint64_t now = w->f.now.usec[c] + rnd(w, 60);
        size_t due[N_SLOTS], n_due = 0, n_dispatch = 0, first;

        if (!w->f.kernel[c].armed || w->f.kernel[c].deadline_usec > now) {
                fx_set_now(&w->f, c, now);
                return;
        }
        for (size_t s = 0; s < N_SLOTS; s++)
                if (w->m.t[s].exists && w->m.t[s].queued && w->m.t[s].decl.clock == c &&
                    w->m.t[s].deadline <= now)
                        due[n_due++] = s;
        qsort_r(due, n_due, sizeof(size_t), due_compare, &w->m);

        fx_advance(&w->f, c, now);
        /* The spent kernel timer is always followed by an ARM or a DISARM, first. */
        fx_effect(&w->f, 0, w->f.kernel[c].armed ? TD_EFFECT_ARM : TD_EFFECT_DISARM);
        first = 1;
        for (size_t i = 0; i < n_due; i++) {
                struct model_timer *t = &w->m.t[due[i]];

                if (t->decl.policy == TIMERD_POLICY_WATCHDOG)
                        t->deadline = now + model_cadence(t);
                else if (t->decl.policy == TIMERD_POLICY_INTERVAL) {
                        uint64_t k = (now - t->deadline) / model_cadence(t) + 1;

                        t->overruns += k - 1;
                        t->deadline += k * model_cadence(t);
                } else
                        t->queued = false;
                if (t->run_active) {
                        t->overruns++;
                        if (!off_queue(t)) {
                                t->queued = false;
                                t->after_run = MODEL_AFTER_DEADLINE;
                                t->deferred = t->deadline;
                        }
                        continue;
                }
                t->run++;
                t->run_active = true;
                t->pending = true;
                t->pending_seq = ++w->m.pending_seq;
                t->after_run = MODEL_AFTER_POLICY;

                const struct td_effect *e =
                    fx_effect(&w->f, first + n_dispatch++, TD_EFFECT_DISPATCH);
                assert_int_equal(e->dispatch.owner, slot_owner(due[i]));
                assert_string_equal(e->dispatch.name, slot_name(due[i]));
                assert_int_equal(e->dispatch.run, t->run);
                assert_int_equal(e->dispatch.overruns, t->overruns - t->reported);
        }
        assert_int_equal(w->f.last.n_effects, first + n_dispatch);
}

static void step_take(struct world *w, uint32_t owner)
{
        size_t best = SIZE_MAX;
        struct td_dispatch d;
        uint64_t session = w->m.session[owner - 1];

        for (size_t s = 0; s < N_SLOTS; s++)
                if (slot_owner(s) == owner && w->m.t[s].exists && w->m.t[s].pending &&
                    (best == SIZE_MAX || w->m.t[s].pending_seq < w->m.t[best].pending_seq))
                        best = s;
        assert_int_equal(registry_take_pending(w->f.r, &w->f.now, owner, TIMERD_DELIVERY_NOTIFY,
                                               NULL, 0, session, &d),
                         best != SIZE_MAX);
        assert_int_equal(registry_check(w->f.r), 0);
        if (best == SIZE_MAX)
                return;
        assert_string_equal(d.name, slot_name(best));
        assert_int_equal(d.run, w->m.t[best].run);
        model_settle(w, &w->m.t[best]);
        assert_int_equal(d.overruns, w->m.t[best].overruns - w->m.t[best].reported);
        w->m.t[best].reported = w->m.t[best].overruns;
        w->m.t[best].pending = false;
        w->m.t[best].delivered_to = session;
}

static void step_session_closed(struct world *w, uint32_t owner)
{
        uint64_t session = w->m.session[owner - 1];

        assert_int_equal(fx_apply(&w->f, registry_session_closed(w->f.r, &w->f.now, session)), 0);
        for (size_t s = 0; s < N_SLOTS; s++) {
                struct model_timer *t = &w->m.t[s];

                if (!t->exists)
                        continue;
                if (t->session == session && t->decl.lifetime == TIMERD_LIFETIME_TRANSIENT)
                        t->exists = false;
                else if (t->run_active && t->delivered_to == session)
                        model_end_run(w, t, TIMERD_OUTCOME_EXPECTED_FAILURE,
                                      TIMERD_DIRECTIVE_CONTINUE);
        }
        w->m.session[owner - 1] = ++w->m.next_session;
}

static void step_provider_failure(struct world *w, enum timerd_clock c)
{
        const struct fx_kernel_timer k = w->f.kernel[c];

        assert_int_equal(fx_apply(&w->f, registry_confirm_arm(w->f.r, &w->f.now, c, k.generation,
                                                              k.armed ? -EPERM : 0)),
                         0);
        if (!k.armed)
                return;
        for (size_t s = 0; s < N_SLOTS; s++) {
                struct model_timer *t = &w->m.t[s];

                if (t->exists && t->queued && t->decl.clock == c &&
                    t->deadline <= k.deadline_usec) {
                        t->queued = false;
                        t->failure = TIMERD_FAILURE_PROVIDER_BINDING;
                }
        }
}

/* The registry and the model agree on every timer and on every clock's arm time. */
static void compare(const struct world *w)
{
        for (size_t s = 0; s < N_SLOTS; s++) {
                const struct model_timer *t = &w->m.t[s];
                struct td_snapshot snap;
                int r = registry_get(w->f.r, slot_owner(s), slot_name(s), &snap);

                if (!t->exists) {
                        assert_int_equal(r, -TIMERD_E_NOT_FOUND);
                        continue;
                }
                assert_int_equal(r, 0);
                assert_int_equal(snap.generation, t->generation);
                assert_int_equal(snap.state, model_state(t));
                assert_int_equal(snap.failure, t->failure);
                assert_int_equal(snap.run, t->run);
                assert_int_equal(snap.run_active, t->run_active);
                assert_int_equal(snap.pending, t->pending);
                assert_int_equal(snap.runs, t->runs);
                assert_int_equal(snap.overruns, t->overruns);
                assert_int_equal(snap.consecutive_expected_failures, t->consecutive);
                assert_int_equal(snap.declaration.cadence_usec, t->decl.cadence_usec);
                assert_int_equal(snap.live_cadence_usec, model_cadence(t));
                if (t->queued) {
                        assert_true(snap.has_deadline);
                        assert_int_equal(snap.next_deadline_usec, t->deadline);
                } else if (t->run_active && t->after_run == MODEL_AFTER_DEADLINE) {
                        assert_true(snap.has_deadline);
                        assert_int_equal(snap.next_deadline_usec, t->deferred);
                } else
                        assert_false(snap.has_deadline);
        }
        for (enum timerd_clock c = 0; c < N_CLOCKS; c++) {
                bool any = false;
                uint64_t when = UINT64_MAX;

                for (size_t s = 0; s < N_SLOTS; s++) {
                        const struct model_timer *t = &w->m.t[s];

                        if (t->exists && t->queued && t->decl.clock == c) {
                                any = true;
                                if (t->deadline + t->decl.accuracy_usec < when)
                                        when = t->deadline + t->decl.accuracy_usec;
                        }
                }
                /* Timers of closed sessions not freed yet may still arm it earlier. */
                if (registry_reap_pending(w->f.r) && w->f.kernel[c].armed) {
                        assert_true(!any || w->f.kernel[c].deadline_usec <= when);
                        continue;
                }
                assert_int_equal(w->f.kernel[c].armed, any);
                if (any)
                        assert_int_equal(w->f.kernel[c].deadline_usec, when);
        }
}

/* Outside expiries and re-arms an ARM is only sent when the clock's arm time changes. */
static void assert_no_redundant_arm(const struct fx_kernel_timer before[TIMERD_CLOCK_MAX],
                                    const struct td_transition *t)
{
        for (size_t i = 0; i < t->n_effects; i++) {
                const struct td_effect *e = &t->effects[i];

                if (e->kind == TD_EFFECT_ARM)
                        assert_false(before[e->arm.clock].armed &&
                                     before[e->arm.clock].deadline_usec == e->arm.deadline_usec);
                if (e->kind == TD_EFFECT_DISARM)
                        assert_true(before[e->arm.clock].armed);
        }
}

/* What a journal written from the registry's changes holds, per slot. */
struct durable_image {
        bool present[N_SLOTS];
        struct td_snapshot timer[N_SLOTS];
};

static int image_apply(const struct td_change *c, void *userdata)
{
        struct durable_image *image = userdata;

        for (size_t s = 0; s < N_SLOTS; s++) {
                if (slot_owner(s) != c->owner || strcmp(slot_name(s), c->name) != 0)
                        continue;
                image->present[s] = c->timer != NULL;
                if (c->timer)
                        image->timer[s] = *c->timer;
                return 0;
        }
        fail_msg("a change to %u/%s, which no step made", (unsigned)c->owner, c->name);
        return -EINVAL;
}

/* Every change was tracked: once committed, the image holds exactly the retained timers. */
static void commit_and_compare(struct world *w, struct durable_image *image)
{
        assert_int_equal(registry_changes_foreach(w->f.r, image_apply, image), 0);
        registry_changes_commit(w->f.r);
        assert_false(registry_changes_pending(w->f.r));
        assert_int_equal(registry_check(w->f.r), 0);
        for (size_t s = 0; s < N_SLOTS; s++) {
                struct td_snapshot now;
                bool retained = registry_get(w->f.r, slot_owner(s), slot_name(s), &now) == 0 &&
                                now.declaration.lifetime == TIMERD_LIFETIME_RETAINED;

                assert_int_equal(image->present[s], retained);
                if (retained)
                        fx_assert_snapshot_equal(&image->timer[s], &now);
        }
}

static void test_random_operations(void **state)
{
        struct world *w = calloc(1, sizeof(*w));
        struct durable_image *image = calloc(1, sizeof(*image));
        struct fx_kernel_timer before[TIMERD_CLOCK_MAX];
        size_t histogram[14] = {};

        (void)state;
        assert_non_null(w);
        assert_non_null(image);
        w->rng = UINT64_C(0x9e3779b97f4a7c15);
        fx_init(&w->f, NULL);
        for (size_t o = 0; o < N_OWNERS; o++)
                w->m.session[o] = ++w->m.next_session;

        for (size_t step = 0; step < N_STEPS; step++) {
                size_t s = rnd(w, N_SLOTS), op = rnd(w, 100);
                uint32_t owner = (uint32_t)(1 + rnd(w, N_OWNERS));
                enum timerd_clock c = (enum timerd_clock)rnd(w, N_CLOCKS);
                bool expiry = false;

                memcpy(before, w->f.kernel, sizeof(before));
                w->f.last = (struct td_transition){};
                if (op < 16) {
                        step_register(w, s);
                        histogram[0]++;
                } else if (op < 22) {
                        step_reconcile(w, s);
                        histogram[1]++;
                } else if (op < 30) {
                        step_schedule(w, s);
                        histogram[2]++;
                } else if (op < 34) {
                        step_reschedule(w, s);
                        histogram[3]++;
                } else if (op < 38) {
                        step_cancel(w, s);
                        histogram[4]++;
                } else if (op < 44) {
                        step_kick(w, s);
                        histogram[5]++;
                } else if (op < 47) {
                        step_unregister(w, s);
                        histogram[6]++;
                } else if (op < 62) {
                        step_complete(w, s);
                        histogram[7]++;
                } else if (op < 86) {
                        step_advance(w, c);
                        expiry = true;
                        histogram[8]++;
                } else if (op < 94) {
                        step_take(w, owner);
                        histogram[9]++;
                } else if (op < 97) {
                        step_session_closed(w, owner);
                        histogram[10]++;
                } else if (op < 98) {
                        step_provider_failure(w, c);
                        expiry = true;
                        histogram[11]++;
                } else {
                        assert_int_equal(fx_apply(&w->f, registry_rearm(w->f.r, &w->f.now, c)), 0);
                        expiry = true;
                        histogram[12]++;
                }
                if (!expiry)
                        assert_no_redundant_arm(before, &w->f.last);
                /* The timers of closed sessions are freed a few at a time, between the calls. */
                if (registry_reap_pending(w->f.r) && rnd(w, 4) == 0) {
                        uint64_t count;
                        assert_int_equal(fx_apply(&w->f, registry_reap_step(w->f.r, &w->f.now,
                                                                            1 + rnd(w, 3), &count)),
                                         0);
                        histogram[13]++;
                }
                compare(w);
                if (step % 25 == 24)
                        commit_and_compare(w, image);
        }

        /* The walk reached the interesting states, not just the error paths. */
        assert_true(w->m.pending_seq > 300);
        for (size_t i = 0; i < 14; i++)
                assert_true(histogram[i] > 20);
        fx_done(&w->f);
        free(image);
        free(w);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_random_operations),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
