/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>

#include <cmocka.h>

#include "fixture.h"

void fx_init(struct fx *f, const struct registry_config *config)
{
        struct registry_config defaults = {.first_generation = 1, .first_handle_generation = 1};

        *f = (struct fx){};
        assert_int_equal(registry_new(config ? config : &defaults, &f->r), 0);
        for (enum timerd_clock c = 0; c < TIMERD_CLOCK_MAX; c++)
                f->now.usec[c] = 1000;
        assert_int_equal(registry_check(f->r), 0);
}

void fx_done(struct fx *f)
{
        assert_int_equal(registry_check(f->r), 0);
        registry_free(f->r);
}

int fx_setup(void **state)
{
        struct fx *f = malloc(sizeof(*f));

        assert_non_null(f);
        fx_init(f, NULL);
        *state = f;
        return 0;
}

int fx_teardown(void **state)
{
        fx_done(*state);
        free(*state);
        return 0;
}

int fx_apply(struct fx *f, struct td_transition t)
{
        f->last = t;
        assert_int_equal(registry_check(f->r), 0);
        if (t.failure != 0)
                assert_int_equal(t.n_effects, 0);
        for (size_t i = 0; i < t.n_effects; i++) {
                const struct td_effect *e = &t.effects[i];
                struct fx_kernel_timer *k;

                if (e->kind == TD_EFFECT_DISPATCH)
                        continue;
                k = &f->kernel[e->arm.clock];
                /* Handle generations only grow. */
                assert_true(e->arm.generation > k->generation);
                *k = (struct fx_kernel_timer){
                    .armed = e->kind == TD_EFFECT_ARM,
                    .deadline_usec = e->arm.deadline_usec,
                    .generation = e->arm.generation,
                };
        }
        return t.failure;
}

struct td_declaration fx_decl(enum timerd_policy policy, uint64_t cadence_usec)
{
        return (struct td_declaration){
            .policy = policy,
            .cadence_usec = cadence_usec,
            .clock = TIMERD_CLOCK_MONOTONIC,
            .lifetime = TIMERD_LIFETIME_TRANSIENT,
            .delivery = TIMERD_DELIVERY_NOTIFY,
        };
}

int fx_register_full(struct fx *f, uint32_t uid, uint64_t session, const char *name,
                     struct td_declaration d, bool has_start, uint64_t start_usec, bool replace,
                     uint64_t *ret_generation)
{
        struct td_register_args a = {
            .caller = {.uid = uid, .session = session},
            .name = name,
            .declaration = d,
            .has_start = has_start,
            .start_usec = start_usec,
            .replace = replace,
        };
        uint64_t generation = 0;
        int r = fx_apply(f, registry_register(f->r, &f->now, &a, &generation));

        if (ret_generation)
                *ret_generation = generation;
        return r;
}

int fx_register(struct fx *f, const char *name, struct td_declaration d, uint64_t *ret_generation)
{
        return fx_register_full(f, FX_UID, FX_SESSION, name, d, false, 0, false, ret_generation);
}

int fx_register_at(struct fx *f, const char *name, struct td_declaration d, uint64_t start_usec,
                   uint64_t *ret_generation)
{
        return fx_register_full(f, FX_UID, FX_SESSION, name, d, true, start_usec, false,
                                ret_generation);
}

struct td_handle fx_claim(const char *name, uint64_t generation)
{
        return (struct td_handle){.owner = FX_UID, .name = name, .generation = generation};
}

struct td_handle fx_token(const struct td_dispatch *d)
{
        return (struct td_handle){
            .owner = d->owner, .name = d->name, .generation = d->generation, .run = d->run};
}

int fx_schedule(struct fx *f, struct td_handle h, uint64_t deadline_usec)
{
        return fx_apply(f, registry_schedule(f->r, &f->now, &h, deadline_usec));
}

int fx_cancel(struct fx *f, struct td_handle h)
{
        return fx_apply(f, registry_cancel(f->r, &f->now, &h));
}

int fx_kick(struct fx *f, struct td_handle h, uint64_t *ret_deadline_usec)
{
        uint64_t deadline = 0;
        int r = fx_apply(f, registry_kick(f->r, &f->now, &h, &deadline));

        if (ret_deadline_usec)
                *ret_deadline_usec = deadline;
        return r;
}

int fx_unregister(struct fx *f, struct td_handle h)
{
        return fx_apply(f, registry_unregister(f->r, &f->now, &h));
}

int fx_complete(struct fx *f, struct td_handle token, enum timerd_outcome outcome,
                enum timerd_directive directive, uint64_t duration_usec)
{
        return fx_apply(
            f, registry_complete(f->r, &f->now, &token, outcome, directive, duration_usec, NULL));
}

void fx_set_now(struct fx *f, enum timerd_clock clock, uint64_t usec)
{
        f->now.usec[clock] = usec;
        if (clock == TIMERD_CLOCK_BOOTTIME)
                f->now.usec[TIMERD_CLOCK_BOOTTIME_ALARM] = usec;
        if (clock == TIMERD_CLOCK_REALTIME)
                f->now.usec[TIMERD_CLOCK_REALTIME_ALARM] = usec;
}

size_t fx_advance(struct fx *f, enum timerd_clock clock, uint64_t usec)
{
        struct fx_kernel_timer *k = &f->kernel[clock];
        bool stale = true;

        fx_set_now(f, clock, usec);
        f->last = (struct td_transition){};
        if (!k->armed || k->deadline_usec > usec)
                return 0;
        /* One-shot, like the real kernel timer. */
        k->armed = false;
        assert_int_equal(fx_apply(f, registry_expire(f->r, &f->now, clock, k->generation, &stale)),
                         0);
        assert_false(stale);
        return fx_count(f, TD_EFFECT_DISPATCH);
}

const struct td_effect *fx_effect(const struct fx *f, size_t i, enum td_effect_kind kind)
{
        assert_true(i < f->last.n_effects);
        assert_int_equal(f->last.effects[i].kind, kind);
        return &f->last.effects[i];
}

size_t fx_count(const struct fx *f, enum td_effect_kind kind)
{
        size_t n = 0;

        for (size_t i = 0; i < f->last.n_effects; i++)
                n += f->last.effects[i].kind == kind;
        return n;
}

const struct td_dispatch *fx_dispatch(const struct fx *f, size_t n)
{
        size_t seen = 0;

        for (size_t i = 0; i < f->last.n_effects; i++)
                if (f->last.effects[i].kind == TD_EFFECT_DISPATCH && seen++ == n)
                        return &f->last.effects[i].dispatch;
        fail_msg("no DISPATCH #%zu", n);
        return NULL;
}

struct td_snapshot fx_get(const struct fx *f, const char *name)
{
        struct td_snapshot s;

        assert_int_equal(registry_get(f->r, FX_UID, name, &s), 0);
        return s;
}

void fx_assert_declaration_equal(const struct td_declaration *a, const struct td_declaration *b)
{
        assert_int_equal(a->policy, b->policy);
        assert_int_equal(a->cadence_usec, b->cadence_usec);
        assert_int_equal(a->clock, b->clock);
        assert_int_equal(a->lifetime, b->lifetime);
        assert_int_equal(a->delivery, b->delivery);
        assert_int_equal(a->accuracy_usec, b->accuracy_usec);
        assert_int_equal(a->signo, b->signo);
        assert_int_equal(a->catch_up, b->catch_up);
        assert_int_equal(a->randomized_delay_usec, b->randomized_delay_usec);
        assert_int_equal(a->handover_usec, b->handover_usec);
}

void fx_assert_snapshot_equal(const struct td_snapshot *a, const struct td_snapshot *b)
{
        assert_int_equal(a->owner, b->owner);
        assert_string_equal(a->name, b->name);
        fx_assert_declaration_equal(&a->declaration, &b->declaration);
        assert_int_equal(a->generation, b->generation);
        assert_int_equal(a->state, b->state);
        assert_int_equal(a->failure, b->failure);
        assert_int_equal(a->has_deadline, b->has_deadline);
        assert_int_equal(a->next_deadline_usec, b->next_deadline_usec);
        assert_int_equal(a->run, b->run);
        assert_int_equal(a->run_active, b->run_active);
        assert_int_equal(a->pending, b->pending);
        assert_int_equal(a->run_deadline_usec, b->run_deadline_usec);
        assert_int_equal(a->run_cancelled, b->run_cancelled);
        assert_int_equal(a->runs, b->runs);
        assert_int_equal(a->consecutive_expected_failures, b->consecutive_expected_failures);
        assert_int_equal(a->overruns, b->overruns);
        assert_int_equal(a->has_last_start, b->has_last_start);
        assert_int_equal(a->last_start_usec, b->last_start_usec);
        assert_int_equal(a->has_last_finish, b->has_last_finish);
        assert_int_equal(a->last_finish_usec, b->last_finish_usec);
        assert_int_equal(a->last_catch_up, b->last_catch_up);
        assert_int_equal(a->last_outcome, b->last_outcome);
        assert_int_equal(a->last_duration_usec, b->last_duration_usec);
        assert_int_equal(a->total_duration_usec, b->total_duration_usec);
        assert_int_equal(a->session, b->session);
}
