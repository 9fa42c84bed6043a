/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * Calendar timers in the pure core, on a fake realtime clock, with zone data the test loads
 * (Europe/Berlin from the system's zone files): the DST rows of docs/CALENDAR.md fire at the
 * table's instants through register, expiry and completion; matches passed during a run; the
 * re-evaluation after a clock set or a zone reload; restore and catch-up; the randomized delays.
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
#include "zoneinfo/zoneinfo.h"

#define SEC    UINT64_C(1000000)
#define MINUTE (60 * SEC)
#define HOUR   (60 * MINUTE)

/* UTC instants (seconds since the epoch). */
#define T_2024_03_30_1200 UINT64_C(1711800000)
#define T_2024_03_31_0100 UINT64_C(1711846800) /* 03:00 CEST, the end of the gap */
#define T_2024_04_01_0030 UINT64_C(1711931400) /* 02:30 CEST */
#define T_2024_10_26_2350 UINT64_C(1729986600)
#define T_2024_10_27_0000 UINT64_C(1729987200) /* 02:00 CEST */
#define T_2024_10_27_0100 UINT64_C(1729990800) /* 02:00 CET */
#define T_2024_10_27_0200 UINT64_C(1729994400) /* 03:00 CET */
#define T_2024_06_01_0000 UINT64_C(1717200000)
#define T_2024_06_01_0300 UINT64_C(1717210800)
#define T_2024_06_02_0300 UINT64_C(1717297200)
#define T_2024_05_31_1200 UINT64_C(1717156800)
#define T_2024_06_01_1200 UINT64_C(1717243200)

struct zones_fixture {
        struct td_zone berlin;
        struct td_zone utc;
};

static int setup(void **state)
{
        struct zones_fixture *z = calloc(1, sizeof(*z));

        if (!z)
                return -1;
        strcpy(z->berlin.name, "Europe/Berlin");
        if (zoneinfo_load("Europe/Berlin", &z->berlin.tz, NULL) < 0) {
                free(z);
                return -1;
        }
        strcpy(z->utc.name, "UTC");
        *state = z;
        return 0;
}

static int teardown(void **state)
{
        struct zones_fixture *z = *state;

        tz_zone_free(z->berlin.tz);
        tz_zone_free(z->utc.tz);
        free(z);
        return 0;
}

static const struct td_calendar *calendar(const char *source, const struct td_zone *zone,
                                          bool fixed)
{
        struct td_calendar_error error;
        const struct td_calendar *c;

        assert_int_equal(td_calendar_new(NULL, source, zone, fixed, &c, &error), 0);
        return c;
}

/* A calendar declaration on realtime; the registry takes its own reference. */
static struct td_declaration calendar_decl(const struct td_calendar *c)
{
        struct td_declaration d = fx_decl(TIMERD_POLICY_CALENDAR, 0);

        d.clock = TIMERD_CLOCK_REALTIME;
        d.calendar = c;
        return d;
}

/* Run the re-evaluation pass to its end in one step; how many it computed again. */
static uint64_t reevaluate_all(struct fx *f)
{
        uint64_t count;

        assert_int_equal(
            fx_apply(f, registry_reevaluate_step(f->r, &f->now, SIZE_MAX / 16, &count)), 0);
        assert_false(registry_reevaluation_pending(f->r));
        return count;
}

static struct fx start_at(uint64_t utc_seconds)
{
        struct fx f;

        fx_init(&f, NULL);
        fx_set_now(&f, TIMERD_CLOCK_REALTIME, utc_seconds * SEC);
        return f;
}

static uint64_t next_of(const struct fx *f, const char *name)
{
        struct td_snapshot s = fx_get(f, name);

        assert_true(s.has_deadline);
        return s.next_deadline_usec;
}

/* Fire at `at` (one dispatch, reporting `at`), then complete at `done`. */
static void fire_and_complete(struct fx *f, uint64_t at, uint64_t done)
{
        struct td_handle token;

        assert_int_equal(fx_advance(f, TIMERD_CLOCK_REALTIME, at), 1);
        assert_int_equal(fx_dispatch(f, 0)->deadline_usec, at);
        token = fx_token(fx_dispatch(f, 0));
        fx_set_now(f, TIMERD_CLOCK_REALTIME, done);
        assert_int_equal(
            fx_complete(f, token, TIMERD_OUTCOME_SUCCESS, TIMERD_DIRECTIVE_CONTINUE, 0), 0);
}

static void test_spring_forward_gap(void **state)
{
        struct zones_fixture *z = *state;
        const struct td_calendar *c = calendar("*-*-* 02:30", &z->berlin, false);
        struct fx f = start_at(T_2024_03_30_1200);

        assert_int_equal(fx_register(&f, "nightly", calendar_decl(c), NULL), 0);
        td_calendar_unref(c);
        /* 02:30 does not exist on 2024-03-31: once, at the first instant after the gap. */
        assert_int_equal(next_of(&f, "nightly"), T_2024_03_31_0100 * SEC);
        fire_and_complete(&f, T_2024_03_31_0100 * SEC, T_2024_03_31_0100 * SEC + MINUTE);
        assert_int_equal(next_of(&f, "nightly"), T_2024_04_01_0030 * SEC);
        fx_done(&f);
}

static void test_fall_back_every_hour(void **state)
{
        struct zones_fixture *z = *state;
        const struct td_calendar *c = calendar("*:00", &z->berlin, false);
        struct fx f = start_at(T_2024_10_26_2350);

        assert_int_equal(fx_register(&f, "hourly", calendar_decl(c), NULL), 0);
        td_calendar_unref(c);
        /* Every real hour: 02:00 CEST, 02:00 CET, 03:00 CET. */
        assert_int_equal(next_of(&f, "hourly"), T_2024_10_27_0000 * SEC);
        fire_and_complete(&f, T_2024_10_27_0000 * SEC, T_2024_10_27_0000 * SEC + SEC);
        assert_int_equal(next_of(&f, "hourly"), T_2024_10_27_0100 * SEC);
        fire_and_complete(&f, T_2024_10_27_0100 * SEC, T_2024_10_27_0100 * SEC + SEC);
        assert_int_equal(next_of(&f, "hourly"), T_2024_10_27_0200 * SEC);
        fx_done(&f);
}

static void test_fall_back_time_of_day_once(void **state)
{
        struct zones_fixture *z = *state;
        const struct td_calendar *c = calendar("*-*-* 02:00", &z->berlin, false);
        struct fx f = start_at(T_2024_10_26_2350);

        assert_int_equal(fx_register(&f, "two", calendar_decl(c), NULL), 0);
        td_calendar_unref(c);
        /* 02:00 occurs twice: once, at its first occurrence; the next is a day later (CET). */
        assert_int_equal(next_of(&f, "two"), T_2024_10_27_0000 * SEC);
        fire_and_complete(&f, T_2024_10_27_0000 * SEC, T_2024_10_27_0000 * SEC + SEC);
        assert_int_equal(next_of(&f, "two"), (T_2024_10_27_0100 + 24 * 3600) * SEC);
        fx_done(&f);
}

/* Runs never overlap: of the elapses that passed during a run, the last fires once at its end,
 * the others are overruns. */
static void test_matches_during_run(void **state)
{
        struct zones_fixture *z = *state;
        const struct td_calendar *c = calendar("*:0/15", &z->utc, false);
        struct fx f = start_at(T_2024_06_01_0000 - 60);
        uint64_t t0 = T_2024_06_01_0000 * SEC;
        struct td_handle token;
        struct td_snapshot s;

        assert_int_equal(fx_register(&f, "q", calendar_decl(c), NULL), 0);
        td_calendar_unref(c);
        assert_int_equal(fx_advance(&f, TIMERD_CLOCK_REALTIME, t0), 1);
        token = fx_token(fx_dispatch(&f, 0));
        /* No second run while this one is active, at 00:15, 00:30 or 00:45. */
        assert_int_equal(fx_advance(&f, TIMERD_CLOCK_REALTIME, t0 + 50 * MINUTE), 0);
        assert_false(fx_get(&f, "q").has_deadline);
        assert_int_equal(
            fx_complete(&f, token, TIMERD_OUTCOME_SUCCESS, TIMERD_DIRECTIVE_CONTINUE, 0), 0);
        s = fx_get(&f, "q");
        assert_true(s.has_deadline);
        assert_int_equal(s.next_deadline_usec, t0 + 45 * MINUTE);
        assert_int_equal(s.overruns, 2);
        /* It fires at once (the kernel timer is armed in the past), reporting 00:45. */
        assert_int_equal(fx_advance(&f, TIMERD_CLOCK_REALTIME, t0 + 50 * MINUTE), 1);
        assert_int_equal(fx_dispatch(&f, 0)->deadline_usec, t0 + 45 * MINUTE);
        assert_true(fx_dispatch(&f, 0)->past_due);
        token = fx_token(fx_dispatch(&f, 0));
        assert_int_equal(
            fx_complete(&f, token, TIMERD_OUTCOME_SUCCESS, TIMERD_DIRECTIVE_CONTINUE, 0), 0);
        s = fx_get(&f, "q");
        assert_int_equal(s.next_deadline_usec, t0 + 60 * MINUTE);
        assert_int_equal(s.overruns, 2);
        assert_int_equal(s.runs, 2);
        fx_done(&f);
}

/* A run longer than the bound on counted overruns fires once at its completion. */
static void test_long_run_bounded(void **state)
{
        struct zones_fixture *z = *state;
        const struct td_calendar *c = calendar("minutely", &z->utc, false);
        struct fx f = start_at(T_2024_06_01_0000 - 60);
        uint64_t t0 = T_2024_06_01_0000 * SEC, done = t0 + 3 * 24 * HOUR + 30 * SEC;
        struct td_handle token;
        struct td_snapshot s;

        assert_int_equal(fx_register(&f, "m", calendar_decl(c), NULL), 0);
        td_calendar_unref(c);
        assert_int_equal(fx_advance(&f, TIMERD_CLOCK_REALTIME, t0), 1);
        token = fx_token(fx_dispatch(&f, 0));
        fx_set_now(&f, TIMERD_CLOCK_REALTIME, done);
        assert_int_equal(
            fx_complete(&f, token, TIMERD_OUTCOME_SUCCESS, TIMERD_DIRECTIVE_CONTINUE, 0), 0);
        s = fx_get(&f, "m");
        assert_int_equal(s.overruns, 1024);
        assert_int_equal(s.next_deadline_usec, done);
        fire_and_complete(&f, done, done);
        assert_int_equal(next_of(&f, "m"), done + 30 * SEC);
        fx_done(&f);
}

/* A clock set re-evaluates: set back a day, a daily timer is due at the next 03:00 of the new
 * time, not two days away. */
static void test_clock_set_reevaluates(void **state)
{
        struct zones_fixture *z = *state;
        const struct td_calendar *c = calendar("*-*-* 03:00", &z->utc, false);
        struct fx f = start_at(T_2024_06_01_1200);

        assert_int_equal(fx_register(&f, "d", calendar_decl(c), NULL), 0);
        td_calendar_unref(c);
        assert_int_equal(next_of(&f, "d"), T_2024_06_02_0300 * SEC);
        fx_set_now(&f, TIMERD_CLOCK_REALTIME, T_2024_05_31_1200 * SEC);
        assert_int_equal(fx_apply(&f, registry_rearm(f.r, &f.now, TIMERD_CLOCK_REALTIME)), 0);
        assert_true(registry_reevaluation_pending(f.r));
        assert_int_equal(reevaluate_all(&f), 1);
        assert_int_equal(next_of(&f, "d"), T_2024_06_01_0300 * SEC);
        assert_true(f.kernel[TIMERD_CLOCK_REALTIME].armed);
        assert_int_equal(f.kernel[TIMERD_CLOCK_REALTIME].deadline_usec, T_2024_06_01_0300 * SEC);
        fx_done(&f);
}

/* A zone reload (the edge swaps the data) re-evaluates: 03:00 UTC becomes 03:00 Berlin (CEST). */
static void test_zone_reload_reevaluates(void **state)
{
        struct zones_fixture *z = *state;
        struct td_zone local = {.name = "UTC"};
        const struct td_calendar *c = calendar("*-*-* 03:00", &local, false);
        struct fx f = start_at(T_2024_06_01_1200);

        assert_int_equal(fx_register(&f, "d", calendar_decl(c), NULL), 0);
        td_calendar_unref(c);
        assert_int_equal(next_of(&f, "d"), T_2024_06_02_0300 * SEC);
        /* The local zone became Berlin. */
        local.tz = z->berlin.tz;
        strcpy(local.name, "Europe/Berlin");
        registry_reevaluate_calendars(f.r, &f.now);
        assert_int_equal(reevaluate_all(&f), 1);
        assert_int_equal(next_of(&f, "d"), T_2024_06_02_0300 * SEC - 2 * HOUR);
        assert_int_equal(f.kernel[TIMERD_CLOCK_REALTIME].deadline_usec,
                         T_2024_06_02_0300 * SEC - 2 * HOUR);
        fx_done(&f);
}

/* A retained calendar timer restored after missing elapses fires once (catch-up), or without
 * catch-up moves to the next elapse after now. */
static void test_restore_catch_up(void **state)
{
        struct zones_fixture *z = *state;
        const struct td_calendar *c = calendar("*-*-* 03:00", &z->utc, false);
        struct fx f = start_at(T_2024_05_31_1200), g;
        struct td_declaration d = calendar_decl(c);
        struct td_snapshot s;
        bool clamped;

        d.lifetime = TIMERD_LIFETIME_RETAINED;
        d.catch_up = true;
        assert_int_equal(fx_register(&f, "d", d, NULL), 0);
        assert_int_equal(fx_register(&f, "skip", (d.catch_up = false, d), NULL), 0);
        td_calendar_unref(c);

        /* Down from 2024-05-31 12:00 to 2024-06-02 12:00: two elapses missed. */
        g = start_at(T_2024_06_01_1200 + 24 * 3600);
        s = fx_get(&f, "d");
        assert_int_equal(fx_apply(&g, registry_restore(g.r, &g.now, &s, 0, &clamped)), 0);
        s = fx_get(&f, "skip");
        assert_int_equal(fx_apply(&g, registry_restore(g.r, &g.now, &s, 0, &clamped)), 0);
        assert_int_equal(next_of(&g, "skip"), T_2024_06_02_0300 * SEC + 24 * HOUR);
        assert_int_equal(fx_advance(&g, TIMERD_CLOCK_REALTIME, g.now.usec[TIMERD_CLOCK_REALTIME]),
                         1);
        assert_string_equal(fx_dispatch(&g, 0)->name, "d");
        assert_int_equal(fx_dispatch(&g, 0)->deadline_usec, T_2024_06_01_0300 * SEC);
        assert_true(fx_dispatch(&g, 0)->past_due);
        assert_true(fx_get(&g, "d").declaration.calendar != NULL);
        fx_done(&f);
        fx_done(&g);
}

/* A fixed delay is the same for the timer's identity (also in another registry: after a
 * restart); a fresh one is drawn at each computation (here: each re-evaluation). Both stay
 * below the bound. */
static void test_randomized_delays(void **state)
{
        struct zones_fixture *z = *state;
        const struct td_calendar *fixed = calendar("*:00", &z->utc, true);
        const struct td_calendar *fresh = calendar("*:00", &z->utc, false);
        struct fx f = start_at(T_2024_06_01_0000 - 60), g = start_at(T_2024_06_01_0000 - 60);
        struct td_declaration d = calendar_decl(fixed), e = calendar_decl(fresh);
        uint64_t delays[4];
        bool differ = false;

        d.randomized_delay_usec = e.randomized_delay_usec = 30 * MINUTE;
        assert_int_equal(fx_register(&f, "fixed", d, NULL), 0);
        assert_int_equal(fx_register(&g, "fixed", d, NULL), 0);
        assert_int_equal(next_of(&f, "fixed"), next_of(&g, "fixed"));
        assert_true(next_of(&f, "fixed") - T_2024_06_01_0000 * SEC < 30 * MINUTE);
        assert_int_equal(fx_register(&f, "fresh", e, NULL), 0);
        for (int i = 0; i < 4; i++) {
                assert_int_equal(fx_apply(&f, registry_rearm(f.r, &f.now, TIMERD_CLOCK_REALTIME)),
                                 0);
                assert_int_equal(reevaluate_all(&f), 2);
                delays[i] = next_of(&f, "fresh") - T_2024_06_01_0000 * SEC;
                assert_true(delays[i] < 30 * MINUTE);
                differ = differ || (i > 0 && delays[i] != delays[0]);
        }
        assert_true(differ);
        td_calendar_unref(fixed);
        td_calendar_unref(fresh);
        fx_done(&f);
        fx_done(&g);
}

static void test_refusals(void **state)
{
        struct zones_fixture *z = *state;
        const struct td_calendar *c = calendar("daily", &z->utc, false);
        struct fx f = start_at(T_2024_06_01_1200);
        struct td_declaration d = calendar_decl(c);
        struct td_reschedule_result rr;
        struct td_handle claim;
        uint64_t generation;

        d.clock = TIMERD_CLOCK_MONOTONIC;
        assert_int_equal(fx_register(&f, "a", d, NULL), -TIMERD_E_INVALID_SCHEDULE);
        assert_int_equal(f.last.schedule_problem, TD_SCHEDULE_CALENDAR_CLOCK);
        d.clock = TIMERD_CLOCK_REALTIME;
        d.cadence_usec = SEC;
        assert_int_equal(fx_register(&f, "a", d, NULL), -TIMERD_E_INVALID_SCHEDULE);
        d.cadence_usec = 0;
        d.policy = TIMERD_POLICY_AFTER_COMPLETION;
        assert_int_equal(fx_register(&f, "a", d, NULL), -TIMERD_E_INVALID_SCHEDULE);
        assert_int_equal(f.last.schedule_problem, TD_SCHEDULE_CALENDAR_MISSING);
        d.policy = TIMERD_POLICY_CALENDAR;
        assert_int_equal(fx_register(&f, "a", d, &generation), 0);
        claim = fx_claim("a", generation);
        /* Its elapses come from the schedule, not a cadence. */
        assert_int_equal(
            fx_apply(&f, registry_reschedule(f.r, &f.now, &claim, false, 0, true, SEC, &rr)),
            -TIMERD_E_WRONG_POLICY);
        td_calendar_unref(c);
        fx_done(&f);
}

/* Reconcile compares schedules by content: the same expressions in another object match. */
static void test_reconcile_compares_schedules(void **state)
{
        struct zones_fixture *z = *state;
        const struct td_calendar *a = calendar("daily", &z->utc, false);
        const struct td_calendar *same = calendar("daily", &z->utc, false);
        const struct td_calendar *other = calendar("weekly", &z->utc, false);
        struct fx f = start_at(T_2024_06_01_1200);
        struct td_reconcile_args args = {
            .caller = {.uid = FX_UID, .session = FX_SESSION},
            .name = "r",
            .declaration = calendar_decl(a),
            .desired = TIMERD_DESIRED_SCHEDULED,
        };
        uint64_t generation, g2;
        bool created;

        assert_int_equal(
            fx_apply(&f, registry_reconcile(f.r, &f.now, &args, &generation, &created)), 0);
        assert_true(created);
        assert_int_equal(next_of(&f, "r"), (T_2024_06_01_0000 + 24 * 3600) * SEC);
        args.declaration.calendar = same;
        assert_int_equal(fx_apply(&f, registry_reconcile(f.r, &f.now, &args, &g2, &created)), 0);
        assert_false(created);
        assert_int_equal(g2, generation);
        args.declaration.calendar = other;
        assert_int_equal(fx_apply(&f, registry_reconcile(f.r, &f.now, &args, &g2, &created)),
                         -TIMERD_E_RECONCILIATION_CONFLICT);
        td_calendar_unref(a);
        td_calendar_unref(same);
        td_calendar_unref(other);
        fx_done(&f);
}

/* A client that names the service's local zone and one that leaves the zone out declare the same
 * schedule: Reconcile matches either way (restarting a client that spells it the other way); a
 * different zone still conflicts. */
static void test_reconcile_local_zone_by_name(void **state)
{
        struct zones_fixture *z = *state;
        struct td_zone local = {.name = "Europe/Berlin", .tz = z->berlin.tz};
        const struct td_calendar *implicit = calendar("daily", &local, false);
        const struct td_calendar *named = calendar("daily", &z->berlin, false);
        const struct td_calendar *utc = calendar("daily", &z->utc, false);
        struct fx f = start_at(T_2024_06_01_1200);
        struct td_reconcile_args args = {
            .caller = {.uid = FX_UID, .session = FX_SESSION},
            .name = "r",
            .declaration = calendar_decl(implicit),
            .desired = TIMERD_DESIRED_SCHEDULED,
        };
        uint64_t generation, g2;
        bool created;

        assert_int_equal(
            fx_apply(&f, registry_reconcile(f.r, &f.now, &args, &generation, &created)), 0);
        args.declaration.calendar = named;
        assert_int_equal(fx_apply(&f, registry_reconcile(f.r, &f.now, &args, &g2, &created)), 0);
        assert_false(created);
        assert_int_equal(g2, generation);
        args.declaration.calendar = utc;
        assert_int_equal(fx_apply(&f, registry_reconcile(f.r, &f.now, &args, &g2, &created)),
                         -TIMERD_E_RECONCILIATION_CONFLICT);
        td_calendar_unref(implicit);
        td_calendar_unref(named);
        td_calendar_unref(utc);
        fx_done(&f);
}

/* Timers declared alike share one parsed schedule (4.7 KiB an expression); another zone, fixed
 * flag or expression is another; a refused one is not kept; the last release takes it out. */
static void test_shared_schedules(void **state)
{
        struct zones_fixture *z = *state;
        struct td_calendar_set set;
        const struct td_calendar *a, *b, *berlin, *fixed, *other;
        struct td_calendar_error error;
        struct fx f = start_at(T_2024_06_01_1200);
        uint64_t generation;

        td_calendar_set_init(&set);
        assert_int_equal(td_calendar_new(&set, "daily\ncron:0 3 * * *", &z->utc, false, &a, &error),
                         0);
        assert_int_equal(td_calendar_new(&set, "daily\ncron:0 3 * * *", &z->utc, false, &b, &error),
                         0);
        assert_ptr_equal(a, b);
        td_calendar_unref(b);
        assert_int_equal(
            td_calendar_new(&set, "daily\ncron:0 3 * * *", &z->berlin, false, &berlin, &error), 0);
        assert_int_equal(
            td_calendar_new(&set, "daily\ncron:0 3 * * *", &z->utc, true, &fixed, &error), 0);
        assert_int_equal(td_calendar_new(&set, "weekly", &z->utc, false, &other, &error), 0);
        assert_ptr_not_equal(a, berlin);
        assert_ptr_not_equal(a, fixed);
        assert_ptr_not_equal(a, other);
        assert_int_equal(td_calendar_set_size(&set), 4);
        assert_int_equal(td_calendar_new(&set, "*-02-30", &z->utc, false, &b, &error), -EINVAL);
        assert_int_equal(error.error.code, CALENDAR_E_NEVER);
        assert_int_equal(td_calendar_set_size(&set), 4);

        /* A thousand timers on one schedule: still one, until the last goes. */
        for (int i = 0; i < 1000; i++) {
                char name[16];

                snprintf(name, sizeof(name), "t%d", i);
                assert_int_equal(
                    td_calendar_new(&set, "daily\ncron:0 3 * * *", &z->utc, false, &b, &error), 0);
                assert_ptr_equal(b, a);
                assert_int_equal(fx_register(&f, name, calendar_decl(b), &generation), 0);
                td_calendar_unref(b);
        }
        assert_int_equal(td_calendar_set_size(&set), 4);
        assert_int_equal(next_of(&f, "t999"), (T_2024_06_01_0000 + 24 * 3600) * SEC);
        td_calendar_unref(a);
        td_calendar_unref(berlin);
        td_calendar_unref(fixed);
        td_calendar_unref(other);
        assert_int_equal(td_calendar_set_size(&set), 1);
        fx_done(&f);
        assert_int_equal(td_calendar_set_size(&set), 0);
        td_calendar_set_done(&set);
}

/* 100 timers on "03:00" in a local zone, re-evaluated ten per step after the zone changed from
 * `from` to `to`: the state after the first step. */
static struct fx spread_start(struct td_zone *local, const struct td_zone *from,
                              const struct td_zone *to)
{
        const struct td_calendar *c;
        struct fx f = start_at(T_2024_06_01_1200);
        uint64_t count;

        *local = *from;
        c = calendar("*-*-* 03:00", local, false);
        for (int i = 0; i < 100; i++) {
                char name[16];

                snprintf(name, sizeof(name), "t%03d", i);
                assert_int_equal(fx_register(&f, name, calendar_decl(c), NULL), 0);
        }
        td_calendar_unref(c);
        *local = *to;
        registry_reevaluate_calendars(f.r, &f.now);
        assert_int_equal(fx_apply(&f, registry_reevaluate_step(f.r, &f.now, 10, &count)), 0);
        assert_int_equal(count, 10);
        assert_true(registry_reevaluation_pending(f.r));
        return f;
}

/*
 * Issue 17: re-evaluating is spread over steps. Berlin → UTC moves every elapse two hours later:
 * the ten done fire at the new one; the ninety not reached yet come due on their old deadline
 * meanwhile, are computed again then and do not fire early; the pass then finds nothing left to
 * do, and all hundred fire once, at 03:00 UTC.
 */
static void test_spread_old_deadline_due_meanwhile(void **state)
{
        struct zones_fixture *z = *state;
        struct td_zone local;
        struct fx f = spread_start(&local, &z->berlin, &z->utc);

        assert_int_equal(next_of(&f, "t000"), T_2024_06_02_0300 * SEC);
        assert_int_equal(next_of(&f, "t099"), T_2024_06_02_0300 * SEC - 2 * HOUR);
        assert_int_equal(fx_advance(&f, TIMERD_CLOCK_REALTIME, T_2024_06_02_0300 * SEC - 2 * HOUR),
                         0);
        assert_int_equal(next_of(&f, "t099"), T_2024_06_02_0300 * SEC);
        assert_int_equal(reevaluate_all(&f), 0);
        assert_int_equal(fx_advance(&f, TIMERD_CLOCK_REALTIME, T_2024_06_02_0300 * SEC), 100);
        fx_done(&f);
}

/*
 * UTC → Berlin moves every elapse two hours earlier: the ten done fire at the new one; the ninety
 * not reached fire when the pass reaches them (late, past due), each once.
 */
static void test_spread_new_deadline_earlier(void **state)
{
        struct zones_fixture *z = *state;
        struct td_zone local;
        struct fx f = spread_start(&local, &z->utc, &z->berlin);

        assert_int_equal(fx_advance(&f, TIMERD_CLOCK_REALTIME, T_2024_06_02_0300 * SEC - 2 * HOUR),
                         10);
        fx_set_now(&f, TIMERD_CLOCK_REALTIME, T_2024_06_02_0300 * SEC - 2 * HOUR + MINUTE);
        assert_int_equal(reevaluate_all(&f), 90);
        assert_int_equal(next_of(&f, "t099"), T_2024_06_02_0300 * SEC - 2 * HOUR);
        assert_int_equal(
            fx_advance(&f, TIMERD_CLOCK_REALTIME, T_2024_06_02_0300 * SEC - 2 * HOUR + MINUTE), 90);
        assert_int_equal(fx_dispatch(&f, 0)->deadline_usec, T_2024_06_02_0300 * SEC - 2 * HOUR);
        fx_done(&f);
}

/* A change during a pass starts it again: the timers done already are done again, in the zone
 * as it is now. */
static void test_spread_restart(void **state)
{
        struct zones_fixture *z = *state;
        struct td_zone local;
        struct fx f = spread_start(&local, &z->utc, &z->berlin);

        local = z->utc;
        registry_reevaluate_calendars(f.r, &f.now);
        assert_int_equal(reevaluate_all(&f), 100);
        assert_int_equal(next_of(&f, "t000"), T_2024_06_02_0300 * SEC);
        assert_int_equal(next_of(&f, "t099"), T_2024_06_02_0300 * SEC);
        fx_done(&f);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_spring_forward_gap),
            cmocka_unit_test(test_fall_back_every_hour),
            cmocka_unit_test(test_fall_back_time_of_day_once),
            cmocka_unit_test(test_matches_during_run),
            cmocka_unit_test(test_long_run_bounded),
            cmocka_unit_test(test_clock_set_reevaluates),
            cmocka_unit_test(test_zone_reload_reevaluates),
            cmocka_unit_test(test_restore_catch_up),
            cmocka_unit_test(test_randomized_delays),
            cmocka_unit_test(test_refusals),
            cmocka_unit_test(test_reconcile_compares_schedules),
            cmocka_unit_test(test_reconcile_local_zone_by_name),
            cmocka_unit_test(test_shared_schedules),
            cmocka_unit_test(test_spread_old_deadline_due_meanwhile),
            cmocka_unit_test(test_spread_new_deadline_earlier),
            cmocka_unit_test(test_spread_restart),
        };

        return cmocka_run_group_tests(tests, setup, teardown);
}
