/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "service/virtual-clock.h"

#include <assert.h>
#include <errno.h>

#include "service/expiry.h"
#include "service/params.h"
#include "service/io/clock.h"
#include "service/io/peer.h"
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

/* Fire what is due at the time the clocks read: true when something is still due. */
static bool settle_due(struct service *s)
{
        struct td_now now;

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

/* The clocks, and for a move the firings made since `*firings_before` was read. Out of memory,
 * p is dropped. */
static struct reply clocks_reply(struct service *s, struct peer *p, const uint64_t *firings_before)
{
        json_object *o = json_object_new_object();
        json_object *now = clocks_json(s);

        if (!o || !now) {
                json_object_put(o);
                json_object_put(now);
                service_drop_peer(s, p);
                return (struct reply){.kind = REPLY_NONE};
        }
        vl_add_object(o, "now", now);
        if (firings_before)
                vl_add_u64(o, "firings", s->metrics.firings - *firings_before);
        return reply_parameters(o);
}

/* How far a move goes: "usec" for Advance and Suspend; AdvanceTo's distance to its target. */
static int distance(const struct service *s, enum vl_idl_method_id method,
                    const struct vl_view *params, uint64_t *ret, struct param_error *err)
{
        uint64_t usec;

        if (vl_view_get_u64(params, VL_IDL_FIELD_USEC, &usec) < 0)
                return params_invalid(err, "usec");
        if (method != VL_IDL_IO_TIMERD_TEST_ADVANCE_TO) {
                *ret = usec;
                return 0;
        }
        const char *name;
        enum timerd_clock clock = vl_view_get_string(params, VL_IDL_FIELD_CLOCK, &name) < 0
                                      ? TIMERD_CLOCK_INVALID
                                      : vl_clock_from_string(name);
        if (clock == TIMERD_CLOCK_INVALID)
                return params_invalid(err, "clock");
        if (usec < s->clock.now.usec[clock])
                return params_invalid(err, "usec");
        *ret = usec - s->clock.now.usec[clock];
        return 0;
}

/* The real time a step waits for the runs it handed out to end: a client that never completes
 * gets its Advance answered Timeout rather than a test hanging. */
#define HOLD_LIMIT_USEC (5 * 1000000u)

/* Deadlines one loop iteration steps to: other clients are served between batches. */
#define STEPS_PER_ITERATION 256

enum virtual_advance_role {
        ADVANCE_NONE,      /* holds no run of this advance */
        ADVANCE_BYSTANDER, /* held a run when the advance started: it does not hold the advance */
        ADVANCE_WORKER,    /* took a run during the advance: the advance waits for it */
};

/* Peers that took a run since the last look become the advance's workers. */
static void note_workers(struct service *s)
{
        struct list_node *n;

        list_for_each (n, &s->peers.live) {
                struct peer *p = list_entry(n, struct peer, node);
                if (p->advance_role == ADVANCE_NONE &&
                    registry_session_has_runs(s->registry, p->session)) {
                        p->advance_role = ADVANCE_WORKER;
                        s->advance.workers++;
                }
        }
}

/* Whether a worker still holds a run, or a firing is pending while a worker is not back in a
 * Wait (it is about to take it: moving on would make its run end late). */
static bool workers_busy(struct service *s)
{
        struct registry_stats stats;
        struct list_node *n;

        if (s->advance.workers == 0)
                return false;
        registry_get_stats(s->registry, &stats);
        list_for_each (n, &s->peers.live) {
                const struct peer *p = list_entry(n, struct peer, node);
                if (p->advance_role != ADVANCE_WORKER || p->eof || p->doomed)
                        continue;
                if (registry_session_has_runs(s->registry, p->session) ||
                    (stats.pending > 0 && !p->call_open && !p->queued))
                        return true;
        }
        return false;
}

/* Answer the Advance (error 0: its clocks and firings) and end it. */
static void advance_end(struct service *s, struct peer *caller, int error)
{
        service_send_reply(s, caller,
                           error ? reply_error(error, NULL)
                                 : clocks_reply(s, caller, &s->advance.firings_before));
        s->advance = (struct virtual_advance){0};
}

/* Whether the advance waits for its workers: false once they are done. Past HOLD_LIMIT_USEC of
 * real time the advance is answered Timeout. */
static bool advance_held(struct service *s, struct peer *caller)
{
        struct virtual_advance *a = &s->advance;
        uint64_t real;

        if (!workers_busy(s)) {
                a->holding = false;
                return false;
        }
        if (clock_read(TIMERD_CLOCK_MONOTONIC, &real) < 0)
                real = a->held_since;
        if (!a->holding) {
                a->holding = true;
                a->held_since = real;
        } else if (real - a->held_since >= HOLD_LIMIT_USEC)
                advance_end(s, caller, TIMERD_E_TIMEOUT);
        return true;
}

/* Step the advance under way on: to each deadline on the way, a batch per loop iteration. */
static void advance_run(struct service *s)
{
        struct virtual_advance *a = &s->advance;
        struct peer *caller = service_find_session(s, a->session);

        if (!caller) { /* it hung up: the clocks stay where they are */
                *a = (struct virtual_advance){0};
                return;
        }
        /* Runs were handed out meanwhile to Waits that took pending firings. */
        note_workers(s);
        for (int steps = 0; steps < STEPS_PER_ITERATION; steps++) {
                if (!lifecycle_running(&s->lifecycle)) {
                        advance_end(s, caller, TIMERD_E_SHUTTING_DOWN);
                        return;
                }
                if (advance_held(s, caller))
                        return;
                if (a->left == 0) {
                        advance_end(s, caller, 0);
                        return;
                }
                uint64_t step = next_step(s, a->left, a->suspended);
                /* Cannot fail: the whole distance was tried when the advance began. */
                if (move(&s->clock, step, a->suspended) < 0) {
                        advance_end(s, caller, TIMERD_E_OVERFLOW);
                        return;
                }
                a->left -= step;
                uint64_t firings = s->metrics.firings;
                settle_due(s);
                if (s->metrics.firings != firings)
                        note_workers(s);
        }
}

/* Begin letting usec pass (suspended: monotonic stands still), answered once it has. */
static int advance_start(struct service *s, struct peer *p, uint64_t usec, bool suspended,
                         uint64_t firings_before)
{
        struct clock_source probe = s->clock;
        struct list_node *n;
        /* All or nothing: a move that would overflow is refused before any firing. */
        int r = move(&probe, usec, suspended);
        if (r < 0)
                return r;

        list_for_each (n, &s->peers.live) {
                struct peer *q = list_entry(n, struct peer, node);
                q->advance_role = registry_session_has_runs(s->registry, q->session)
                                      ? ADVANCE_BYSTANDER
                                      : ADVANCE_NONE;
        }
        s->advance = (struct virtual_advance){
            .session = p->session,
            .left = usec,
            .firings_before = firings_before,
            .suspended = suspended,
        };
        service_finish_reevaluation(s);
        settle_due(s);
        advance_run(s);
        return 0;
}

/* An Advance is answered when it ends (advance_end()): REPLY_NONE until then. */
static struct reply move_call(struct service *s, struct peer *p, enum vl_idl_method_id method,
                              const struct vl_view *params)
{
        uint64_t firings = s->metrics.firings, usec = 0;
        struct param_error err;
        int r;

        if (s->advance.session) /* one move at a time: another client's is under way */
                return reply_error(TIMERD_E_BUSY, NULL);
        if (distance(s, method, params, &usec, &err) < 0)
                return reply_fail(&err);
        if (method != VL_IDL_IO_TIMERD_TEST_SET_REALTIME)
                r = advance_start(s, p, usec, method == VL_IDL_IO_TIMERD_TEST_SUSPEND, firings);
        else if ((r = clock_virtual_set_realtime(&s->clock, usec)) == 0) {
                service_clock_was_set(s);
                service_finish_reevaluation(s);
                settle_due(s);
                return clocks_reply(s, p, &firings);
        }
        if (r < 0) {
                params_fail(&err, -TIMERD_E_OVERFLOW, NULL, "usec", 0);
                return reply_fail(&err);
        }
        return (struct reply){.kind = REPLY_NONE};
}

struct reply virtual_clock_call(struct service *s, struct peer *p, enum vl_idl_method_id method,
                                const struct vl_view *params)
{
        assert(s->clock.virtual);
        if (method == VL_IDL_IO_TIMERD_TEST_NOW)
                return clocks_reply(s, p, NULL);
        return move_call(s, p, method, params);
}

bool virtual_clock_settle(struct service *s)
{
        if (!s->clock.virtual)
                return false;
        bool due = settle_due(s);
        if (s->advance.session)
                advance_run(s);
        /* An advance that is not waiting for its workers goes on in the next iteration. */
        return due || (s->advance.session && !s->advance.holding);
}

int64_t virtual_clock_timeout(const struct service *s, int64_t timeout_usec)
{
        uint64_t real, left;

        if (!s->advance.session || !s->advance.holding)
                return timeout_usec;
        if (clock_read(TIMERD_CLOCK_MONOTONIC, &real) < 0 ||
            real - s->advance.held_since >= HOLD_LIMIT_USEC)
                return 0;
        left = HOLD_LIMIT_USEC - (real - s->advance.held_since);
        return timeout_usec >= 0 && (uint64_t)timeout_usec < left ? timeout_usec : (int64_t)left;
}
