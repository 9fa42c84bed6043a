/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * Durability in the pure core: retained timers restored from their durable state (claims keep
 * working, active runs end, missed deadlines catch up once or are skipped), and the change
 * tracking a group commit needs (what to write, and how to undo the calls of a failed commit).
 */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fixture.h"

#define MONO TIMERD_CLOCK_MONOTONIC

static struct td_declaration retained(enum timerd_policy policy, uint64_t cadence_usec)
{
        struct td_declaration d = fx_decl(policy, cadence_usec);

        d.lifetime = TIMERD_LIFETIME_RETAINED;
        d.catch_up = true;
        return d;
}

/* A durable state as a journal gives it back: scheduled at `deadline`, never ran. */
static struct td_snapshot durable(const char *name, struct td_declaration d, uint64_t generation,
                                  uint64_t deadline)
{
        struct td_snapshot s = {
            .owner = FX_UID,
            .declaration = d,
            .generation = generation,
            .has_deadline = true,
            .next_deadline_usec = deadline,
        };

        snprintf(s.name, sizeof(s.name), "%s", name);
        return s;
}

static int restore_clamped(struct fx *f, const struct td_snapshot *s, uint64_t random_value,
                           bool *ret_clamped)
{
        return fx_apply(f, registry_restore(f->r, &f->now, s, random_value, ret_clamped));
}

static int restore(struct fx *f, const struct td_snapshot *s, uint64_t random_value)
{
        bool clamped;

        return restore_clamped(f, s, random_value, &clamped);
}

struct change_list {
        size_t n;
        struct {
                char name[TIMERD_NAME_MAX + 1];
                bool removed;
                uint64_t generation;
        } items[16];
};

static int collect(const struct td_change *c, void *userdata)
{
        struct change_list *l = userdata;

        assert_true(l->n < 16);
        snprintf(l->items[l->n].name, sizeof(l->items[l->n].name), "%s", c->name);
        l->items[l->n].removed = !c->timer;
        l->items[l->n].generation = c->timer ? c->timer->generation : 0;
        l->n++;
        return 0;
}

static struct change_list changes(const struct fx *f)
{
        struct change_list l = {};

        assert_int_equal(registry_changes_foreach(f->r, collect, &l), 0);
        assert_int_equal(registry_changes_pending(f->r), l.n > 0);
        return l;
}

static int refuse(const struct td_change *c, void *userdata)
{
        (void)c;
        (void)userdata;
        return -EIO;
}

static int rollback(struct fx *f)
{
        return fx_apply(f, registry_changes_rollback(f->r, &f->now));
}

static void test_restore_keeps_state_and_claims(void **state)
{
        struct td_snapshot s = durable("backup", retained(TIMERD_POLICY_AFTER_COMPLETION, 500), 41,
                                       3000),
                           got;
        uint64_t generation;
        struct fx *f = *state;

        s.declaration.accuracy_usec = 7;
        s.declaration.randomized_delay_usec = 9;
        s.run = 5;
        s.runs = 5;
        s.consecutive_expected_failures = 2;
        s.overruns = 3;
        s.has_last_start = s.has_last_finish = true;
        s.last_start_usec = 400;
        s.last_finish_usec = 450;
        s.last_outcome = TIMERD_OUTCOME_EXPECTED_FAILURE;
        s.last_duration_usec = 50;
        s.total_duration_usec = 260;
        s.session = 99; /* not read: a restored timer belongs to no session */
        assert_int_equal(restore(f, &s, 0), 0);
        assert_int_equal(f->kernel[MONO].deadline_usec, 3000 + 7);

        got = fx_get(f, "backup");
        fx_assert_declaration_equal(&got.declaration, &s.declaration);
        assert_int_equal(got.generation, 41);
        assert_int_equal(got.state, TIMERD_STATE_SCHEDULED);
        assert_int_equal(got.next_deadline_usec, 3000);
        assert_int_equal(got.run, 5);
        assert_int_equal(got.runs, 5);
        assert_int_equal(got.consecutive_expected_failures, 2);
        assert_int_equal(got.overruns, 3);
        assert_int_equal(got.last_start_usec, 400);
        assert_int_equal(got.last_finish_usec, 450);
        assert_int_equal(got.last_outcome, TIMERD_OUTCOME_EXPECTED_FAILURE);
        assert_int_equal(got.total_duration_usec, 260);
        assert_int_equal(got.session, 0);
        /* Unchanged by the restart: nothing to write. */
        assert_false(registry_changes_pending(f->r));

        /* The owner's claim from before the restart still works; stale ones still do not. */
        assert_int_equal(fx_schedule(f, fx_claim("backup", 41), 5000), 0);
        assert_int_equal(fx_schedule(f, fx_claim("backup", 40), 5000),
                         -TIMERD_E_REGISTRATION_EXPIRED);
        /* New registrations never reuse a restored generation. */
        assert_int_equal(fx_register(f, "new", fx_decl(TIMERD_POLICY_ONCE, 0), &generation), 0);
        assert_int_equal(generation, 42);
        /* Nor does a replace of the restored timer. */
        assert_int_equal(fx_register_full(f, FX_UID, FX_SESSION, "backup", s.declaration, false, 0,
                                          true, &generation),
                         0);
        assert_int_equal(generation, 43);

        /* Generations start above a floor the runtime sets, never below one given out, and by
         * whole 2^32 steps: their low 32 bits (a signal's sival_int) go on from the last one. */
        registry_generations_above(f->r, 1000);
        registry_generations_above(f->r, 500);
        assert_int_equal(fx_register(f, "later", fx_decl(TIMERD_POLICY_ONCE, 0), &generation), 0);
        assert_true(generation == (UINT64_C(1) << 32) + 44);
        registry_generations_above(f->r, UINT64_C(1800000000000000));
        assert_int_equal(fx_register(f, "after", fx_decl(TIMERD_POLICY_ONCE, 0), &generation), 0);
        assert_true(generation > UINT64_C(1800000000000000));
        assert_int_equal((uint32_t)generation, 45);
}

static void test_restore_refuses(void **state)
{
        struct td_snapshot good = durable("t", retained(TIMERD_POLICY_INTERVAL, 100), 3, 2000), s;
        struct fx *f = *state;

        s = good;
        s.name[0] = '/';
        assert_int_equal(restore(f, &s, 0), -TIMERD_E_INVALID_NAME);
        s = good;
        s.declaration.cadence_usec = 0;
        assert_int_equal(restore(f, &s, 0), -TIMERD_E_INVALID_SCHEDULE);
        s = good;
        s.declaration.lifetime = TIMERD_LIFETIME_TRANSIENT;
        assert_int_equal(restore(f, &s, 0), -EINVAL);
        s = good;
        s.generation = 0;
        assert_int_equal(restore(f, &s, 0), -EINVAL);
        s = good;
        s.failure = TIMERD_FAILURE_MAX;
        assert_int_equal(restore(f, &s, 0), -EINVAL);
        s = good;
        s.last_outcome = TIMERD_OUTCOME_MAX;
        assert_int_equal(restore(f, &s, 0), -EINVAL);
        s = good;
        s.pending = true; /* pending without an active run */
        assert_int_equal(restore(f, &s, 0), -EINVAL);
        s = good;
        s.run_active = true; /* a run that never started */
        s.run = 1;
        assert_int_equal(restore(f, &s, 0), -EINVAL);
        s = good;
        s.has_last_start = true; /* started run 0 */
        assert_int_equal(restore(f, &s, 0), -EINVAL);
        s = good;
        s.run = 2;
        s.runs = 3;
        assert_int_equal(restore(f, &s, 0), -EINVAL);
        s = good;
        s.run = s.runs = 2;
        s.consecutive_expected_failures = 3;
        assert_int_equal(restore(f, &s, 0), -EINVAL);

        assert_int_equal(registry_list(f->r, 0, true, &(struct td_snapshot *){NULL}), 0);
        assert_int_equal(restore(f, &good, 0), 0);
        assert_int_equal(restore(f, &good, 0), -TIMERD_E_ALREADY_REGISTERED);
}

/* A journal written before values were bound to the wire's int64 may hold a cadence of 2^63 and
 * a next deadline beyond it: the timer loads, failed (overflow), every value clamped to INT64_MAX,
 * so that List never emits one a varlink client cannot read; it is written back so. A generation
 * beyond int64 was never given out: such a state is refused as inconsistent. */
static void test_restore_clamps_values_beyond_int64(void **state)
{
        struct td_snapshot s = durable("huge", retained(TIMERD_POLICY_INTERVAL, 1ULL << 63), 7,
                                       UINT64_MAX - 5),
                           in_range =
                               durable("fine", retained(TIMERD_POLICY_INTERVAL, 100), 8, 2000),
                           got;
        bool clamped;
        struct fx *f = *state;

        s.overruns = UINT64_MAX;
        assert_int_equal(restore_clamped(f, &s, 0, &clamped), 0);
        assert_true(clamped);
        got = fx_get(f, "huge");
        assert_int_equal(got.state, TIMERD_STATE_FAILED);
        assert_int_equal(got.failure, TIMERD_FAILURE_OVERFLOW);
        assert_false(got.has_deadline);
        assert_true(got.declaration.cadence_usec == (uint64_t)INT64_MAX);
        assert_true(got.next_deadline_usec <= (uint64_t)INT64_MAX);
        assert_true(got.overruns == (uint64_t)INT64_MAX);
        assert_int_equal(got.generation, 7);
        /* Nothing armed for it, and the clamped state is what gets written. */
        assert_false(f->kernel[MONO].armed);
        struct change_list l = changes(f);
        assert_int_equal(l.n, 1);
        assert_string_equal(l.items[0].name, "huge");
        assert_int_equal(restore_clamped(f, &in_range, 0, &clamped), 0);
        assert_false(clamped);

        s = in_range;
        s.generation = 1ULL << 63;
        s.overruns = UINT64_MAX;
        snprintf(s.name, sizeof(s.name), "refused");
        assert_int_equal(restore_clamped(f, &s, 0, &clamped), -EINVAL);
        assert_false(clamped);
}

/* A run handed to a client before the restart has no client any more: it ends, the policy goes
 * on. A pending one is still there for the next Wait. */
static void test_restore_active_runs(void **state)
{
        struct td_snapshot handed = durable("handed", retained(TIMERD_POLICY_AFTER_COMPLETION, 500),
                                            7, 0),
                           pending = durable("pending", retained(TIMERD_POLICY_ONCE, 0), 8, 6000),
                           got;
        struct change_list l;
        struct td_dispatch d;
        struct fx *f = *state;

        fx_set_now(f, MONO, 2000);
        handed.has_deadline = false;
        handed.run_active = handed.has_last_start = true;
        handed.run = 3;
        handed.runs = 2;
        handed.last_start_usec = 1500;
        assert_int_equal(restore(f, &handed, 0), 0);
        got = fx_get(f, "handed");
        assert_false(got.run_active);
        assert_int_equal(got.runs, 3);
        assert_int_equal(got.last_outcome, TIMERD_OUTCOME_EXPECTED_FAILURE);
        assert_int_equal(got.consecutive_expected_failures, 1);
        assert_int_equal(got.last_duration_usec, 500);
        assert_int_equal(got.next_deadline_usec, 2500);
        l = changes(f);
        assert_int_equal(l.n, 1);
        assert_string_equal(l.items[0].name, "handed");

        /* Pending, with a deadline set during the run: armed when the run ends. */
        pending.run_active = pending.pending = pending.has_last_start = true;
        pending.run = 1;
        pending.run_deadline_usec = 1200;
        pending.last_start_usec = 1300;
        assert_int_equal(restore(f, &pending, 0), 0);
        got = fx_get(f, "pending");
        assert_true(got.pending);
        assert_int_equal(got.state, TIMERD_STATE_RUNNING);
        assert_int_equal(got.next_deadline_usec, 6000);
        assert_int_equal(
            registry_take_pending(f->r, &f->now, FX_UID, TIMERD_DELIVERY_NOTIFY, NULL, 0, 3, &d),
            1);
        assert_string_equal(d.name, "pending");
        assert_int_equal(d.run, 1);
        assert_int_equal(d.deadline_usec, 1200);
        assert_int_equal(d.fired_usec, 1300);
        assert_int_equal(
            fx_complete(f, fx_token(&d), TIMERD_OUTCOME_SUCCESS, TIMERD_DIRECTIVE_CONTINUE, 0), 0);
        got = fx_get(f, "pending");
        assert_int_equal(got.state, TIMERD_STATE_SCHEDULED);
        assert_int_equal(got.next_deadline_usec, 6000);
}

/* A run cancelled while pending stays cancelled across the restart. */
static void test_restore_cancelled_run(void **state)
{
        struct td_snapshot s = durable("job", retained(TIMERD_POLICY_AFTER_COMPLETION, 500), 2, 0);
        struct td_dispatch d;
        struct fx *f = *state;

        s.has_deadline = false;
        s.run_active = s.pending = s.has_last_start = s.run_cancelled = true;
        s.run = 1;
        assert_int_equal(restore(f, &s, 0), 0);
        assert_true(fx_get(f, "job").run_cancelled);
        assert_int_equal(
            registry_take_pending(f->r, &f->now, FX_UID, TIMERD_DELIVERY_NOTIFY, NULL, 0, 3, &d),
            1);
        assert_int_equal(
            fx_complete(f, fx_token(&d), TIMERD_OUTCOME_SUCCESS, TIMERD_DIRECTIVE_CONTINUE, 0), 0);
        assert_int_equal(fx_get(f, "job").state, TIMERD_STATE_INACTIVE);
}

/* Missed three and a half periods while down: one firing at once, reporting the missed deadline;
 * the periods in between are overruns; then the normal schedule. */
static void test_catch_up_fires_once(void **state)
{
        struct td_snapshot s = durable("tick", retained(TIMERD_POLICY_INTERVAL, 1000), 5, 2000);
        const struct td_dispatch *d;
        struct fx *f = *state;

        fx_set_now(f, MONO, 5500);
        assert_int_equal(restore(f, &s, 12345), 0);
        assert_false(registry_changes_pending(f->r));
        assert_true(f->kernel[MONO].armed);
        assert_int_equal(f->kernel[MONO].deadline_usec, 2000);

        assert_int_equal(fx_advance(f, MONO, 5500), 1);
        d = fx_dispatch(f, 0);
        assert_int_equal(d->deadline_usec, 2000);
        assert_int_equal(d->fired_usec, 5500);
        assert_int_equal(d->overruns, 3);
        assert_true(d->catch_up);
        assert_int_equal(fx_get(f, "tick").next_deadline_usec, 6000);
        assert_int_equal(
            fx_complete(f, fx_token(d), TIMERD_OUTCOME_SUCCESS, TIMERD_DIRECTIVE_CONTINUE, 0), 0);
        assert_true(fx_get(f, "tick").last_catch_up);
        assert_int_equal(fx_advance(f, MONO, 5999), 0);
        assert_int_equal(fx_advance(f, MONO, 6000), 1);
        assert_int_equal(fx_dispatch(f, 0)->deadline_usec, 6000);
        assert_false(fx_dispatch(f, 0)->catch_up);
        assert_false(fx_get(f, "tick").last_catch_up);
}

static void test_catch_up_false_skips(void **state)
{
        struct td_declaration d = retained(TIMERD_POLICY_INTERVAL, 1000), once;
        struct td_snapshot s = durable("tick", d, 5, 2000), got;
        struct change_list l;
        struct fx *f = *state;

        fx_set_now(f, MONO, 5500);
        s.declaration.catch_up = false;
        assert_int_equal(restore(f, &s, 0), 0);
        got = fx_get(f, "tick");
        assert_int_equal(got.next_deadline_usec, 6000);
        assert_int_equal(got.overruns, 0);
        assert_int_equal(f->kernel[MONO].deadline_usec, 6000);
        assert_int_equal(fx_advance(f, MONO, 5500), 0);

        /* Exactly on a period boundary: the next one, not now. */
        s = durable("edge", d, 6, 3500);
        s.declaration.catch_up = false;
        assert_int_equal(restore(f, &s, 0), 0);
        assert_int_equal(fx_get(f, "edge").next_deadline_usec, 6500);

        once = retained(TIMERD_POLICY_ONCE, 0);
        once.catch_up = false;
        s = durable("once", once, 7, 5000);
        assert_int_equal(restore(f, &s, 0), 0);
        assert_int_equal(fx_get(f, "once").state, TIMERD_STATE_INACTIVE);

        /* The skip is a change the journal must learn. */
        l = changes(f);
        assert_int_equal(l.n, 3);

        /* A deadline still ahead is left alone. */
        s = durable("ahead", once, 8, 9000);
        assert_int_equal(restore(f, &s, 0), 0);
        assert_int_equal(fx_get(f, "ahead").next_deadline_usec, 9000);
        assert_int_equal(changes(f).n, 3);

        /* A successor beyond every clock: failed, not wrapped. */
        d.catch_up = false;
        d.cadence_usec = UINT64_MAX - 10;
        s = durable("huge", d, 9, 20);
        assert_int_equal(restore(f, &s, 0), 0);
        got = fx_get(f, "huge");
        assert_int_equal(got.state, TIMERD_STATE_FAILED);
        assert_int_equal(got.failure, TIMERD_FAILURE_OVERFLOW);
}

static void test_catch_up_randomized_delay(void **state)
{
        struct td_declaration d = retained(TIMERD_POLICY_WATCHDOG, 1000);
        struct td_snapshot s;
        const struct td_dispatch *dispatch;
        struct fx *f = *state;

        fx_set_now(f, MONO, 5000);
        d.randomized_delay_usec = 300;
        s = durable("late", d, 1, 2000);
        assert_int_equal(restore(f, &s, 3 * 300 + 217), 0);
        assert_int_equal(fx_get(f, "late").next_deadline_usec, 5217);
        assert_true(registry_changes_pending(f->r));
        assert_int_equal(fx_advance(f, MONO, 5216), 0);
        assert_int_equal(fx_advance(f, MONO, 5217), 1);
        dispatch = fx_dispatch(f, 0);
        assert_int_equal(dispatch->deadline_usec, 2000);
        assert_int_equal(dispatch->fired_usec, 5217);
        assert_true(dispatch->catch_up);
        assert_int_equal(fx_get(f, "late").next_deadline_usec, 6217);

        /* A random value that picks no delay fires at once; a new schedule drops the delay. */
        s = durable("now", d, 2, 2000);
        assert_int_equal(restore(f, &s, 600), 0);
        assert_int_equal(fx_get(f, "now").next_deadline_usec, 2000);
        s = durable("moved", d, 3, 2000);
        assert_int_equal(restore(f, &s, 50), 0);
        assert_int_equal(fx_kick(f, fx_claim("moved", 3), NULL), 0);
        /* "late" is still running: its second firing is an overrun. */
        assert_int_equal(fx_advance(f, MONO, 6217), 2);
        assert_string_equal(fx_dispatch(f, 0)->name, "now");
        assert_int_equal(fx_dispatch(f, 0)->deadline_usec, 2000);
        assert_true(fx_dispatch(f, 0)->catch_up);
        assert_string_equal(fx_dispatch(f, 1)->name, "moved");
        assert_int_equal(fx_dispatch(f, 1)->deadline_usec, 6217);
        assert_false(fx_dispatch(f, 1)->catch_up); /* the kick superseded the catch-up */
        assert_int_equal(fx_get(f, "late").overruns, 1);
}

/* Room made ahead for a journal's timers; a count no memory can hold changes nothing. */
static void test_reserve_then_restore(void **state)
{
        enum { N = 300 };
        struct registry_stats st;
        struct fx *f = *state;

        fx_set_now(f, MONO, 1000);
        assert_int_equal(registry_reserve(f->r, SIZE_MAX), -ENOMEM);
        assert_int_equal(registry_reserve(f->r, SIZE_MAX / 2), -ENOMEM);
        assert_int_equal(registry_check(f->r), 0);
        assert_int_equal(registry_reserve(f->r, N), 0);
        for (int i = 0; i < N; i++) {
                char name[16];
                struct td_snapshot s;

                snprintf(name, sizeof(name), "r%d", i);
                s = durable(name, retained(TIMERD_POLICY_ONCE, 0), (uint64_t)i + 1,
                            5000 + (uint64_t)i);
                assert_int_equal(restore(f, &s, 0), 0);
        }
        registry_get_stats(f->r, &st);
        assert_int_equal(st.timers, N);
        assert_int_equal(st.scheduled, N);
        assert_false(registry_changes_pending(f->r));
        assert_int_equal(fx_advance(f, MONO, 5000 + N), N);
}

/* A restore syncs the clock of the timer it makes, and every clock when it freed a gone timer of
 * the name (a closed session's, not reaped yet) that was queued on another. */
static void test_restore_syncs_its_clock(void **state)
{
        struct td_declaration realtime = fx_decl(TIMERD_POLICY_ONCE, 0);
        struct td_snapshot s;
        struct fx *f = *state;

        realtime.clock = TIMERD_CLOCK_REALTIME;
        assert_int_equal(fx_register_full(f, FX_UID, 2, "x", realtime, true, 3000, false, NULL), 0);
        assert_int_equal(fx_register_full(f, FX_UID, 2, "y", realtime, true, 4000, false, NULL), 0);
        assert_true(f->kernel[TIMERD_CLOCK_REALTIME].armed);
        assert_int_equal(f->kernel[TIMERD_CLOCK_REALTIME].deadline_usec, 3000);

        /* Another clock: its own armed, the realtime one left as it is. */
        s = durable("a", retained(TIMERD_POLICY_ONCE, 0), 1, 5000);
        assert_int_equal(restore(f, &s, 0), 0);
        assert_int_equal(fx_count(f, TD_EFFECT_ARM), 1);
        assert_int_equal(fx_effect(f, 0, TD_EFFECT_ARM)->arm.clock, MONO);
        assert_int_equal(f->kernel[MONO].deadline_usec, 5000);

        /* "x" and "y" gone with their session, still queued until reaped. Restoring a retained "x"
         * frees the gone one: the realtime clock moves on to "y", "x"'s monotonic deadline is
         * later than "a"'s. */
        assert_int_equal(fx_apply(f, registry_session_closed(f->r, &f->now, 2)), 0);
        s = durable("x", retained(TIMERD_POLICY_ONCE, 0), 2, 6000);
        assert_int_equal(restore(f, &s, 0), 0);
        assert_true(f->kernel[TIMERD_CLOCK_REALTIME].armed);
        assert_int_equal(f->kernel[TIMERD_CLOCK_REALTIME].deadline_usec, 4000);
        assert_int_equal(f->kernel[MONO].deadline_usec, 5000);
}

/* Restored in (owner, name) order, each timer comes after every one there is and no lookup is
 * needed; out of order, or twice, the lookup still decides. */
static void test_restore_any_order(void **state)
{
        static const char *const names[] = {"m", "x", "b", "a", "y", "c"};
        struct td_declaration d = retained(TIMERD_POLICY_ONCE, 0);
        struct td_snapshot s, *all;
        struct fx *f = *state;

        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
                s = durable(names[i], d, i + 1, 5000);
                assert_int_equal(restore(f, &s, 0), 0);
        }
        /* The last in order, one in the middle, the first: each is there already. */
        for (size_t i = 0; i < 3; i++) {
                s = durable((const char *[]){"y", "c", "a"}[i], d, 10, 5000);
                assert_int_equal(restore(f, &s, 0), -TIMERD_E_ALREADY_REGISTERED);
        }
        /* Another owner's timer of the same name is another timer. */
        s = durable("a", d, 11, 5000);
        s.owner = FX_UID + 1;
        assert_int_equal(restore(f, &s, 0), 0);
        s.owner = FX_UID - 1;
        assert_int_equal(restore(f, &s, 0), 0);
        assert_int_equal(registry_list(f->r, 0, true, &all), 8);
        free(all);
}

static void test_changes_tracked(void **state)
{
        struct td_declaration d = retained(TIMERD_POLICY_ONCE, 0);
        struct change_list l;
        struct td_dispatch dispatch;
        uint64_t g, count;
        struct fx *f = *state;

        /* Transient timers never touch the disk. */
        count = registry_change_count(f->r);
        assert_int_equal(fx_register_at(f, "t", fx_decl(TIMERD_POLICY_ONCE, 0), 2000, NULL), 0);
        assert_int_equal(registry_change_count(f->r), count);
        assert_false(registry_changes_pending(f->r));

        assert_int_equal(fx_register_at(f, "r", d, 2000, &g), 0);
        assert_true(registry_change_count(f->r) > count);
        l = changes(f);
        assert_int_equal(l.n, 1);
        assert_string_equal(l.items[0].name, "r");
        assert_false(l.items[0].removed);
        assert_int_equal(l.items[0].generation, g);
        assert_int_equal(registry_changes_foreach(f->r, refuse, NULL), -EIO);
        registry_changes_commit(f->r);
        assert_int_equal(changes(f).n, 0);

        /* A firing, a delivery, a closed session: no call, still written. */
        assert_int_equal(fx_advance(f, MONO, 2000), 2);
        assert_int_equal(changes(f).n, 1);
        registry_changes_commit(f->r);
        assert_int_equal(registry_take_pending(f->r, &f->now, FX_UID, TIMERD_DELIVERY_NOTIFY,
                                               (const char *[]){"r"}, 1, 30, &dispatch),
                         1);
        assert_int_equal(changes(f).n, 1);
        registry_changes_commit(f->r);
        assert_int_equal(fx_apply(f, registry_session_closed(f->r, &f->now, 30)), 0);
        assert_int_equal(fx_get(f, "r").last_outcome, TIMERD_OUTCOME_EXPECTED_FAILURE);
        assert_int_equal(changes(f).n, 1);
        registry_changes_commit(f->r);

        /* Removed and registered again in one batch: the removal is written first. */
        assert_int_equal(fx_unregister(f, fx_claim("r", g)), 0);
        l = changes(f);
        assert_int_equal(l.n, 1);
        assert_true(l.items[0].removed);
        assert_int_equal(fx_register_at(f, "r", d, 3000, &g), 0);
        l = changes(f);
        assert_int_equal(l.n, 2);
        assert_true(l.items[0].removed);
        assert_false(l.items[1].removed);
        assert_int_equal(l.items[1].generation, g);
        registry_changes_commit(f->r);

        /* Replaced by a transient timer: no longer retained, so gone from the journal. */
        assert_int_equal(fx_register_full(f, FX_UID, FX_SESSION, "r",
                                          fx_decl(TIMERD_POLICY_ONCE, 0), false, 0, true, NULL),
                         0);
        l = changes(f);
        assert_int_equal(l.n, 1);
        assert_true(l.items[0].removed);
        /* … and still when its session closes before the commit. */
        assert_int_equal(fx_apply(f, registry_session_closed(f->r, &f->now, FX_SESSION)), 0);
        l = changes(f);
        assert_int_equal(l.n, 1);
        assert_true(l.items[0].removed);
        registry_changes_commit(f->r);
        assert_int_equal(changes(f).n, 0);
}

/* Reconcile that keeps an existing timer as it is changes nothing to write. */
static void test_reconcile_keep_is_no_change(void **state)
{
        struct td_reconcile_args a = {
            .caller = {.uid = FX_UID, .session = FX_SESSION},
            .name = "r",
            .declaration = retained(TIMERD_POLICY_INTERVAL, 100),
            .desired = TIMERD_DESIRED_SCHEDULED,
        };
        uint64_t g, count;
        bool created;
        struct fx *f = *state;

        assert_int_equal(fx_apply(f, registry_reconcile(f->r, &f->now, &a, &g, &created)), 0);
        assert_true(created);
        registry_changes_commit(f->r);
        count = registry_change_count(f->r);
        assert_int_equal(fx_apply(f, registry_reconcile(f->r, &f->now, &a, &g, &created)), 0);
        assert_false(created);
        assert_int_equal(registry_change_count(f->r), count);
        assert_false(registry_changes_pending(f->r));
}

/* A failed commit: each kind of call is undone, exactly. */
static void test_rollback_undoes_calls(void **state)
{
        struct td_declaration d = retained(TIMERD_POLICY_INTERVAL, 1000);
        struct td_reschedule_result previous;
        struct td_snapshot before, after;
        uint64_t g, g2;
        struct fx *f = *state;

        /* Every call here is a client's, to be undone by a rollback. */
        registry_call_begin(f->r);
        assert_int_equal(fx_register_at(f, "keep", d, 4000, &g), 0);
        registry_changes_commit(f->r);
        before = fx_get(f, "keep");

        /* Created: removed again. */
        assert_int_equal(fx_register(f, "new", d, NULL), 0);
        /* Changed twice: back to the first state. */
        assert_int_equal(fx_apply(f, registry_reschedule(f->r, &f->now,
                                                         &(struct td_handle){
                                                             .owner = FX_UID,
                                                             .name = "keep",
                                                             .generation = g,
                                                         },
                                                         true, 9000, true, 3000, &previous)),
                         0);
        assert_int_equal(fx_cancel(f, fx_claim("keep", g)), 0);
        assert_int_equal(rollback(f), 0);
        assert_int_equal(registry_get(f->r, FX_UID, "new", &after), -TIMERD_E_NOT_FOUND);
        after = fx_get(f, "keep");
        fx_assert_snapshot_equal(&after, &before);
        assert_true(f->kernel[MONO].armed);
        assert_int_equal(f->kernel[MONO].deadline_usec, 4000);
        /* Undone, but memory may still differ from the journal: pending until written. */
        assert_true(registry_changes_pending(f->r));
        registry_changes_commit(f->r);

        /* Removed, then a new one of the name: the first comes back, with its claim. */
        assert_int_equal(fx_unregister(f, fx_claim("keep", g)), 0);
        assert_int_equal(fx_register(f, "keep", d, &g2), 0);
        assert_int_equal(rollback(f), 0);
        after = fx_get(f, "keep");
        fx_assert_snapshot_equal(&after, &before);
        assert_int_equal(fx_cancel(f, fx_claim("keep", g)), 0);
        assert_int_equal(fx_cancel(f, fx_claim("keep", g2)), -TIMERD_E_REGISTRATION_EXPIRED);
        assert_int_equal(rollback(f), 0);

        /* Replaced by a transient timer, whose session then closed: retained again. */
        assert_int_equal(fx_register_full(f, FX_UID, 50, "keep", fx_decl(TIMERD_POLICY_ONCE, 0),
                                          false, 0, true, NULL),
                         0);
        assert_int_equal(fx_apply(f, registry_session_closed(f->r, &f->now, 50)), 0);
        assert_int_equal(rollback(f), 0);
        after = fx_get(f, "keep");
        fx_assert_snapshot_equal(&after, &before);
}

/* A transient timer a call made retained goes back to its session — unless that closed. */
static void test_rollback_to_transient(void **state)
{
        struct td_declaration d = retained(TIMERD_POLICY_ONCE, 0);
        struct td_snapshot s;
        struct fx *f = *state;

        /* Every call here is a client's, to be undone by a rollback. */
        registry_call_begin(f->r);
        assert_int_equal(fx_register_full(f, FX_UID, 50, "a", fx_decl(TIMERD_POLICY_ONCE, 0), true,
                                          3000, false, NULL),
                         0);
        assert_int_equal(fx_register_full(f, FX_UID, 51, "b", fx_decl(TIMERD_POLICY_ONCE, 0), true,
                                          3000, false, NULL),
                         0);
        assert_int_equal(fx_register_full(f, FX_UID, 60, "a", d, false, 0, true, NULL), 0);
        assert_int_equal(fx_register_full(f, FX_UID, 60, "b", d, false, 0, true, NULL), 0);
        assert_int_equal(changes(f).n, 2);
        assert_int_equal(fx_apply(f, registry_session_closed(f->r, &f->now, 51)), 0);
        assert_int_equal(rollback(f), 0);
        s = fx_get(f, "a");
        assert_int_equal(s.declaration.lifetime, TIMERD_LIFETIME_TRANSIENT);
        assert_int_equal(s.session, 50);
        assert_int_equal(s.next_deadline_usec, 3000);
        assert_int_equal(registry_get(f->r, FX_UID, "b", &s), -TIMERD_E_NOT_FOUND);
        /* Nothing retained came back: nothing to write. */
        assert_int_equal(changes(f).n, 0);
        assert_int_equal(fx_apply(f, registry_session_closed(f->r, &f->now, 50)), 0);
        assert_int_equal(registry_get(f->r, FX_UID, "a", &s), -TIMERD_E_NOT_FOUND);
}

/* A completed run comes back active, handed to the same session, or abandoned if that closed. */
static void test_rollback_runs(void **state)
{
        struct td_declaration d = retained(TIMERD_POLICY_AFTER_COMPLETION, 1000);
        struct td_dispatch one, two;
        struct td_snapshot s;
        struct fx *f = *state;

        /* Every call here is a client's, to be undone by a rollback. */
        registry_call_begin(f->r);
        assert_int_equal(fx_register_at(f, "one", d, 2000, NULL), 0);
        assert_int_equal(fx_register_at(f, "two", d, 2000, NULL), 0);
        assert_int_equal(fx_advance(f, MONO, 2000), 2);
        assert_int_equal(
            registry_take_pending(f->r, &f->now, FX_UID, TIMERD_DELIVERY_NOTIFY, NULL, 0, 70, &one),
            1);
        assert_int_equal(
            registry_take_pending(f->r, &f->now, FX_UID, TIMERD_DELIVERY_NOTIFY, NULL, 0, 71, &two),
            1);
        registry_changes_commit(f->r);

        fx_set_now(f, MONO, 2500);
        assert_int_equal(
            fx_complete(f, fx_token(&one), TIMERD_OUTCOME_SUCCESS, TIMERD_DIRECTIVE_CONTINUE, 0),
            0);
        assert_int_equal(
            fx_complete(f, fx_token(&two), TIMERD_OUTCOME_SUCCESS, TIMERD_DIRECTIVE_CONTINUE, 0),
            0);
        assert_int_equal(fx_apply(f, registry_session_closed(f->r, &f->now, 71)), 0);
        assert_int_equal(rollback(f), 0);

        s = fx_get(f, "one");
        assert_true(s.run_active);
        assert_int_equal(s.runs, 0);
        /* Still the session's run: its token completes it (the dispatch's name went with the
         * timer that the rollback replaced). */
        one.name = "one";
        assert_int_equal(
            fx_complete(f, fx_token(&one), TIMERD_OUTCOME_SUCCESS, TIMERD_DIRECTIVE_CONTINUE, 0),
            0);
        s = fx_get(f, "two");
        assert_false(s.run_active);
        assert_int_equal(s.runs, 1);
        assert_int_equal(s.last_outcome, TIMERD_OUTCOME_EXPECTED_FAILURE);
}

/* What no call changed stays changed: a firing is not undone. */
/* What the runtime did outside a client call stays: a firing, a run it completed itself. */
static void test_rollback_keeps_runtime_changes(void **state)
{
        struct td_declaration d = retained(TIMERD_POLICY_ONCE, 0);
        struct td_dispatch dispatch;
        struct td_snapshot s;
        struct fx *f = *state;

        assert_int_equal(fx_register_at(f, "fired", d, 2000, NULL), 0);
        assert_int_equal(fx_register_at(f, "done", d, 2000, NULL), 0);
        registry_changes_commit(f->r);
        assert_int_equal(fx_advance(f, MONO, 2000), 2);
        assert_int_equal(registry_take_pending(f->r, &f->now, FX_UID, TIMERD_DELIVERY_NOTIFY,
                                               (const char *[]){"done"}, 1, 40, &dispatch),
                         1);
        assert_int_equal(fx_complete(f, fx_token(&dispatch), TIMERD_OUTCOME_SUCCESS,
                                     TIMERD_DIRECTIVE_CONTINUE, 0),
                         0);
        registry_call_begin(f->r);
        assert_int_equal(fx_register(f, "call", d, NULL), 0);
        registry_call_end(f->r);
        assert_int_equal(rollback(f), 0);
        s = fx_get(f, "fired");
        assert_true(s.pending);
        assert_int_equal(s.run, 1);
        assert_int_equal(fx_get(f, "done").runs, 1);
        assert_int_equal(registry_get(f->r, FX_UID, "call", &s), -TIMERD_E_NOT_FOUND);
        assert_int_equal(changes(f).n, 2);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            FX_TEST(test_restore_keeps_state_and_claims),
            FX_TEST(test_restore_refuses),
            FX_TEST(test_restore_clamps_values_beyond_int64),
            FX_TEST(test_restore_active_runs),
            FX_TEST(test_restore_cancelled_run),
            FX_TEST(test_catch_up_fires_once),
            FX_TEST(test_catch_up_false_skips),
            FX_TEST(test_catch_up_randomized_delay),
            FX_TEST(test_reserve_then_restore),
            FX_TEST(test_restore_any_order),
            FX_TEST(test_restore_syncs_its_clock),
            FX_TEST(test_changes_tracked),
            FX_TEST(test_reconcile_keep_is_no_change),
            FX_TEST(test_rollback_undoes_calls),
            FX_TEST(test_rollback_to_transient),
            FX_TEST(test_rollback_runs),
            FX_TEST(test_rollback_keeps_runtime_changes),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
