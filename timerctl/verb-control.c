/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "print.h"
#include "timespan.h"
#include "verbs.h"

/*
 * The service adds a span to now on the timer's clock: a sum past what its wire carries is the
 * command line's fault. Returns 0, or reports it and returns EXIT_STATUS_USAGE.
 */
static int check_span_from_now(const struct options *o, const char *option, enum timerd_clock clock,
                               uint64_t span)
{
        const struct timestamp from_now = {.relative = true, .usec = span};
        uint64_t usec;

        if (timestamp_on_clock(&from_now, &o->now, clock, &usec) < 0)
                return usage_error("%s: too far in the future for the timer's clock", option);
        return 0;
}

/*
 * The first firing the command line asked for, on the timer's clock. Returns 0, or reports a
 * time the clock cannot express and returns EXIT_STATUS_USAGE.
 */
static int start_on_clock(const struct options *o, enum timerd_clock clock,
                          struct timerd_start *ret)
{
        uint64_t usec;

        if (!o->start_option) {
                *ret = (struct timerd_start){.kind = TIMERD_START_DEFAULT};
                /* Without a first firing, a declared cadence starts from now. */
                return o->policy_option && o->declaration.policy != TIMERD_POLICY_ONCE
                           ? check_span_from_now(o, o->policy_option, clock,
                                                 o->declaration.cadence_usec)
                           : 0;
        }
        if (o->start.relative) {
                *ret = (struct timerd_start){.kind = TIMERD_START_AFTER, .usec = o->start.usec};
                return check_span_from_now(o, o->start_option, clock, o->start.usec);
        }
        if (timestamp_on_clock(&o->start, &o->now, clock, &usec) < 0)
                return usage_error("%s: the time falls before the timer's clock started",
                                   o->start_option);
        *ret = (struct timerd_start){.kind = TIMERD_START_AT, .usec = usec};
        return 0;
}

static json_object *claim_json(const struct timerd_claim *claim)
{
        json_object *obj = json_object_new_object();

        if (!obj || json_object_object_add(obj, "name", json_object_new_string(claim->name)) < 0 ||
            json_object_object_add(obj, "generation", json_object_new_uint64(claim->generation)) <
                0) {
                json_object_put(obj);
                return NULL;
        }
        return obj;
}

/* {"claim": …} and, for reconcile, "created". */
static int print_claim_json(const struct options *o, const struct timerd_claim *claim,
                            const bool *created)
{
        json_object *reply = json_object_new_object(), *c = claim_json(claim);

        if (!reply || !c || json_object_object_add(reply, "claim", c) < 0) {
                json_object_put(reply);
                json_object_put(c);
                return -ENOMEM;
        }
        if (created &&
            json_object_object_add(reply, "created", json_object_new_boolean(*created)) < 0) {
                json_object_put(reply);
                return -ENOMEM;
        }
        return json_print(reply, o->json);
}

int verb_add(struct timerd *t, const struct options *o)
{
        const char *name = o->args[0];
        struct timerd_start start;
        struct timerd_claim claim;
        int r;

        r = start_on_clock(o, o->declaration.clock, &start);
        if (r != 0)
                return r;
        r = timerd_register(t, name, &o->declaration, &start, false, &claim);
        if (r < 0)
                return call_failed(t, "add", name, r);
        if (o->json != JSON_OFF && print_claim_json(o, &claim, NULL) < 0)
                return call_failed(t, "add", name, -ENOMEM);
        return EXIT_STATUS_SUCCESS;
}

int verb_reconcile(struct timerd *t, const struct options *o)
{
        const char *name = o->args[0];
        struct timerd_start start;
        struct timerd_claim claim;
        bool created;
        int r;

        r = start_on_clock(o, o->declaration.clock, &start);
        if (r != 0)
                return r;
        /* Reconcile names an absolute deadline: a span from now becomes one on the clock. */
        if (start.kind == TIMERD_START_AFTER &&
            timestamp_on_clock(&o->start, &o->now, o->declaration.clock, &start.usec) < 0)
                return usage_error("%s: too far in the future", o->start_option);
        r = timerd_reconcile(t, name, &o->declaration, o->desired, start.usec, &claim, &created);
        if (r < 0)
                return call_failed(t, "reconcile", name, r);
        if (o->json != JSON_OFF) {
                if (print_claim_json(o, &claim, &created) < 0)
                        return call_failed(t, "reconcile", name, -ENOMEM);
        } else
                printf("%s: %s\n", name, created ? "created" : "already declared");
        return EXIT_STATUS_SUCCESS;
}

/*
 * timerctl did not register the timer: it learns the current generation to present a claim, and
 * the timer's clock to place --at on. Returns EXIT_STATUS_SUCCESS or reports the failure.
 */
static int current_timer(struct timerd *t, const struct options *o, struct timerd_claim *ret_claim,
                         enum timerd_clock *ret_clock)
{
        const char *name = o->args[0];
        struct timerd_timer timer;
        int r;

        r = timerd_get(t, name, TIMERD_OWNER_SELF, &timer);
        if (r < 0)
                return call_failed(t, verb_name(o->verb), name, r);
        memcpy(ret_claim->name, timer.name, sizeof(ret_claim->name));
        ret_claim->generation = timer.generation;
        if (ret_clock)
                *ret_clock = timer.declaration.clock;
        return EXIT_STATUS_SUCCESS;
}

/* The named timer's claim, and the start --in or --at give on the timer's clock. */
static int current_timer_start(struct timerd *t, const struct options *o,
                               struct timerd_claim *ret_claim, struct timerd_start *ret_start)
{
        enum timerd_clock clock = TIMERD_CLOCK_MONOTONIC;
        int r = current_timer(t, o, ret_claim, &clock);

        if (r == EXIT_STATUS_SUCCESS)
                r = start_on_clock(o, clock, ret_start);
        return r;
}

/* How a control call on the current timer ended (r), its failure reported. */
static int control_done(struct timerd *t, const struct options *o, int r)
{
        return r < 0 ? call_failed(t, verb_name(o->verb), o->args[0], r) : EXIT_STATUS_SUCCESS;
}

int verb_schedule(struct timerd *t, const struct options *o)
{
        struct timerd_claim claim;
        struct timerd_start start;
        int r;

        r = current_timer_start(t, o, &claim, &start);
        if (r != EXIT_STATUS_SUCCESS)
                return r;
        return control_done(t, o, timerd_schedule(t, &claim, NULL, &start));
}

/* The --json reply of a verb whose answer is n numbers: {"NAME": VALUE, ...}. */
static int print_json_numbers(struct timerd *t, const struct options *o, const char *verb,
                              const char *const names[], const uint64_t values[], size_t n)
{
        json_object *reply = json_object_new_object();
        bool built = reply != NULL;

        for (size_t i = 0; built && i < n; i++)
                built =
                    json_object_object_add(reply, names[i], json_object_new_uint64(values[i])) >= 0;
        if (!built) {
                json_object_put(reply);
                return call_failed(t, verb, o->args[0], -ENOMEM);
        }
        if (json_print(reply, o->json) < 0)
                return call_failed(t, verb, o->args[0], -ENOMEM);
        return EXIT_STATUS_SUCCESS;
}

int verb_reschedule(struct timerd *t, const struct options *o)
{
        uint64_t remaining, cadence;
        char span[TIMESPAN_FORMAT_MAX];
        struct timerd_claim claim;
        struct timerd_start start;
        int r;

        r = current_timer_start(t, o, &claim, &start);
        if (r != EXIT_STATUS_SUCCESS)
                return r;
        r = timerd_reschedule(t, &claim, NULL, o->start_option ? &start : NULL, o->cadence_usec,
                              &remaining, &cadence);
        if (r < 0)
                return call_failed(t, "reschedule", o->args[0], r);
        if (o->json == JSON_OFF) {
                printf("Was: %s left", timespan_format(span, remaining, USEC_PER_SEC));
                printf(cadence > 0 ? ", every %s\n" : "\n", timespan_format(span, cadence, 1));
                return EXIT_STATUS_SUCCESS;
        }
        return print_json_numbers(t, o, "reschedule",
                                  (const char *const[]){"remaining_usec", "cadence_usec"},
                                  (const uint64_t[]){remaining, cadence}, 2);
}

/* Cancel and remove send the current timer's claim alone. */
static int claim_call(struct timerd *t, const struct options *o, bool remove)
{
        struct timerd_claim claim;
        int r = current_timer(t, o, &claim, NULL);

        if (r != EXIT_STATUS_SUCCESS)
                return r;
        return control_done(t, o,
                            remove ? timerd_unregister(t, &claim) : timerd_cancel(t, &claim, NULL));
}

int verb_cancel(struct timerd *t, const struct options *o)
{
        return claim_call(t, o, false);
}

int verb_kick(struct timerd *t, const struct options *o)
{
        struct timerd_claim claim;
        enum timerd_clock clock = TIMERD_CLOCK_MONOTONIC;
        uint64_t next;
        int r;

        r = current_timer(t, o, &claim, &clock);
        if (r != EXIT_STATUS_SUCCESS)
                return r;
        r = timerd_kick(t, &claim, NULL, &next);
        if (r < 0)
                return call_failed(t, "kick", o->args[0], r);
        if (o->json == JSON_OFF) {
                print_next(stdout, clock, next, &o->now);
                return EXIT_STATUS_SUCCESS;
        }
        return print_json_numbers(t, o, "kick", (const char *const[]){"next_usec"},
                                  (const uint64_t[]){next}, 1);
}

int verb_remove(struct timerd *t, const struct options *o)
{
        return claim_call(t, o, true);
}
