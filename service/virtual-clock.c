/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "service/virtual-clock.h"

#include <errno.h>
#include <string.h>

#include "service/expiry.h"
#include "service/params.h"
#include "service/io/clock.h"
#include "service/service.h"
#include "varlink/names.h"

/* Expiry passes in one settle: timers due again at the same instant (Reschedules to "now" in a
 * chain) cannot hold the loop; the rest fire in the next iteration. */
#define SETTLE_ROUNDS 16

static bool due_now(const struct service *s, enum timerd_clock c, const struct td_now *now)
{
        uint64_t deadline;

        return service_core_deadline(s, c, &deadline) && deadline <= now->usec[c];
}

bool virtual_clock_settle(struct service *s)
{
        struct td_now now;

        if (!s->clock.virtual)
                return false;
        for (int round = 0; round <= SETTLE_ROUNDS; round++) {
                bool fired = false;
                /* In clock order; the registry orders a clock's due timers by (deadline, owner,
                 * name). */
                for (int c = 0; c < TIMERD_CLOCK_MAX; c++) {
                        if (service_now(s, &now) < 0)
                                return false;
                        if (!due_now(s, (enum timerd_clock)c, &now))
                                continue;
                        if (round == SETTLE_ROUNDS)
                                return true;
                        service_expire(s, (enum timerd_clock)c, &now);
                        fired = true;
                }
                if (!fired)
                        return false;
        }
        return false;
}

/* During a suspend only an alarm clock wakes the machine. */
static bool wakes_suspended(enum timerd_clock c)
{
        return c == TIMERD_CLOCK_BOOTTIME_ALARM || c == TIMERD_CLOCK_REALTIME_ALARM;
}

/* How far the clocks move before the next deadline the cores want: at most `left`. */
static uint64_t next_step(const struct service *s, uint64_t left, bool suspended)
{
        uint64_t step = left, deadline;

        for (int c = 0; c < TIMERD_CLOCK_MAX; c++) {
                uint64_t now = s->clock.now.usec[c];
                if ((suspended && !wakes_suspended((enum timerd_clock)c)) ||
                    !service_core_deadline(s, (enum timerd_clock)c, &deadline) || deadline <= now)
                        continue;
                if (deadline - now < step)
                        step = deadline - now;
        }
        return step;
}

static int move(struct clock_source *clock, uint64_t usec, bool suspended)
{
        return suspended ? clock_virtual_suspend(clock, usec) : clock_virtual_pass(clock, usec);
}

/* Let usec pass (suspended: monotonic stands still), stopping at each deadline on the way. */
static int pass(struct service *s, uint64_t usec, bool suspended)
{
        struct clock_source probe = s->clock;
        /* All or nothing: a move that would overflow is refused before any firing. */
        int r = move(&probe, usec, suspended);
        if (r < 0)
                return r;

        service_finish_reevaluation(s);
        virtual_clock_settle(s);
        for (uint64_t left = usec; left > 0 && lifecycle_running(&s->lifecycle);) {
                uint64_t step = next_step(s, left, suspended);
                r = move(&s->clock, step, suspended);
                if (r < 0)
                        return r;
                left -= step;
                virtual_clock_settle(s);
        }
        return 0;
}

static json_object *clocks_json(const struct service *s)
{
        json_object *o = json_object_new_object();

        if (!o)
                return NULL;
        vl_add_u64(o, "monotonic", s->clock.now.usec[TIMERD_CLOCK_MONOTONIC]);
        vl_add_u64(o, "boottime", s->clock.now.usec[TIMERD_CLOCK_BOOTTIME]);
        vl_add_u64(o, "realtime", s->clock.now.usec[TIMERD_CLOCK_REALTIME]);
        return o;
}

/* The clocks, and for a move the firings made since `*firings_before` was read. */
static void reply_clocks(struct service *s, struct peer *p, const uint64_t *firings_before)
{
        json_object *o = json_object_new_object();
        json_object *now = clocks_json(s);

        if (!o || !now) {
                json_object_put(o);
                json_object_put(now);
                service_drop_peer(s, p);
                return;
        }
        vl_add_object(o, "now", now);
        if (firings_before)
                vl_add_u64(o, "firings", s->metrics.firings - *firings_before);
        service_reply(s, p, o, false);
}

/* How far a move goes: "usec" for Advance and Suspend; AdvanceTo's distance to its target. */
static int distance(const struct service *s, const char *method, json_object *params, uint64_t *ret,
                    struct param_error *err)
{
        uint64_t usec;

        if (vl_get_u64(params, "usec", &usec) < 0)
                return params_invalid(err, "usec");
        if (strcmp(method, "AdvanceTo") != 0) {
                *ret = usec;
                return 0;
        }
        const char *name;
        enum timerd_clock clock = vl_get_string(params, "clock", &name) < 0
                                      ? TIMERD_CLOCK_INVALID
                                      : vl_clock_from_string(name);
        if (clock == TIMERD_CLOCK_INVALID)
                return params_invalid(err, "clock");
        if (usec < s->clock.now.usec[clock])
                return params_invalid(err, "usec");
        *ret = usec - s->clock.now.usec[clock];
        return 0;
}

static void move_call(struct service *s, struct peer *p, const char *method, json_object *params)
{
        uint64_t firings = s->metrics.firings, usec = 0;
        struct param_error err;
        int r;

        if (distance(s, method, params, &usec, &err) < 0) {
                service_fail(s, p, &err);
                return;
        }
        if (strcmp(method, "SetRealtime") == 0) {
                r = clock_virtual_set_realtime(&s->clock, usec);
                if (r == 0) {
                        service_clock_was_set(s);
                        service_finish_reevaluation(s);
                        virtual_clock_settle(s);
                }
        } else
                r = pass(s, usec, strcmp(method, "Suspend") == 0);
        if (r < 0) {
                params_fail(&err, -TIMERD_E_OVERFLOW, NULL, "usec", 0);
                service_fail(s, p, &err);
                return;
        }
        reply_clocks(s, p, &firings);
}

bool virtual_clock_call(struct service *s, struct peer *p, const char *method, json_object *params)
{
        static const char prefix[] = VL_INTERFACE_TEST ".";
        static const char *const moves[] = {"Advance", "AdvanceTo", "Suspend", "SetRealtime"};

        if (!s->clock.virtual || strncmp(method, prefix, sizeof(prefix) - 1) != 0)
                return false;
        method += sizeof(prefix) - 1;
        if (strcmp(method, "Now") == 0) {
                reply_clocks(s, p, NULL);
                return true;
        }
        for (size_t i = 0; i < sizeof(moves) / sizeof(moves[0]); i++)
                if (strcmp(method, moves[i]) == 0) {
                        move_call(s, p, method, params);
                        return true;
                }
        return false;
}
