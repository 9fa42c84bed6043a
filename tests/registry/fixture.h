/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A fake runtime for registry tests: it owns the registry, a fake clock per clock id, and a fake
 * kernel timer per clock that follows the ARM/DISARM effects exactly as the loop would. Every
 * call goes through fx_apply(), which asserts registry_check() after every step.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "service/core/registry.h"

#define FX_SESSION 7
#define FX_UID     1000

struct fx_kernel_timer {
        bool armed;
        uint64_t deadline_usec;
        uint64_t generation;
};

struct fx {
        struct registry *r;
        struct td_now now;
        struct fx_kernel_timer kernel[TIMERD_CLOCK_MAX];
        struct td_transition last;
};

void fx_init(struct fx *f, const struct registry_config *config);
void fx_done(struct fx *f);
/* A cmocka fixture: *state is a struct fx of the default config, fx_done() after the test (its
 * registry_check() included), failed or not. */
int fx_setup(void **state);
int fx_teardown(void **state);
#define FX_TEST(test) cmocka_unit_test_setup_teardown(test, fx_setup, fx_teardown)

/* Record the transition, follow its ARM/DISARM effects, check invariants; returns its failure. */
int fx_apply(struct fx *f, struct td_transition t);

struct td_declaration fx_decl(enum timerd_policy policy, uint64_t cadence_usec);

int fx_register(struct fx *f, const char *name, struct td_declaration d, uint64_t *ret_generation);
int fx_register_at(struct fx *f, const char *name, struct td_declaration d, uint64_t start_usec,
                   uint64_t *ret_generation);
int fx_register_full(struct fx *f, uint32_t uid, uint64_t session, const char *name,
                     struct td_declaration d, bool has_start, uint64_t start_usec, bool replace,
                     uint64_t *ret_generation);

struct td_handle fx_claim(const char *name, uint64_t generation);
struct td_handle fx_token(const struct td_dispatch *d);

int fx_schedule(struct fx *f, struct td_handle h, uint64_t deadline_usec);
int fx_cancel(struct fx *f, struct td_handle h);
int fx_kick(struct fx *f, struct td_handle h, uint64_t *ret_deadline_usec);
int fx_unregister(struct fx *f, struct td_handle h);
int fx_complete(struct fx *f, struct td_handle token, enum timerd_outcome outcome,
                enum timerd_directive directive, uint64_t duration_usec);

/*
 * Set now[clock] (alarm twins follow their base) and, when the fake kernel timer of that clock is
 * armed at or before it, report its expiry. Returns the number of DISPATCH effects.
 */
size_t fx_advance(struct fx *f, enum timerd_clock clock, uint64_t usec);
void fx_set_now(struct fx *f, enum timerd_clock clock, uint64_t usec);

/* The i-th effect of the last transition, which must be of `kind`. */
const struct td_effect *fx_effect(const struct fx *f, size_t i, enum td_effect_kind kind);
size_t fx_count(const struct fx *f, enum td_effect_kind kind);
/* The n-th DISPATCH of the last transition. */
const struct td_dispatch *fx_dispatch(const struct fx *f, size_t n);

struct td_snapshot fx_get(const struct fx *f, const char *name);

/* Every field equal. */
void fx_assert_declaration_equal(const struct td_declaration *a, const struct td_declaration *b);
void fx_assert_snapshot_equal(const struct td_snapshot *a, const struct td_snapshot *b);
