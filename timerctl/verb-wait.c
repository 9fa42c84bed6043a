/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <unistd.h>

#include "print.h"
#include "timespan.h"
#include "verbs.h"

/* Builders of JSON objects, spelled like the wire; each returns NULL when out of memory. */

static json_object *add_u64(json_object *obj, const char *key, uint64_t value)
{
        json_object *v = json_object_new_uint64(value);

        if (!obj || !v || json_object_object_add(obj, key, v) < 0) {
                json_object_put(v);
                json_object_put(obj);
                return NULL;
        }
        return obj;
}

static json_object *add_value(json_object *obj, const char *key, json_object *value)
{
        if (!obj || !value || json_object_object_add(obj, key, value) < 0) {
                json_object_put(value);
                json_object_put(obj);
                return NULL;
        }
        return obj;
}

static json_object *token_json(const struct timerd_token *token)
{
        json_object *obj = json_object_new_object();

        obj = add_value(obj, "name", json_object_new_string(token->name));
        obj = add_u64(obj, "generation", token->generation);
        return add_u64(obj, "run", token->run);
}

static json_object *firing_json(const struct timerd_firing *f)
{
        json_object *firing = json_object_new_object();

        firing = add_value(firing, "token", token_json(&f->token));
        firing =
            add_value(firing, "clock", json_object_new_string(timerd_clock_to_string(f->clock)));
        firing = add_u64(firing, "deadline_usec", f->deadline_usec);
        firing = add_u64(firing, "fired_usec", f->fired_usec);
        firing = add_u64(firing, "overruns", f->overruns);
        firing = add_value(firing, "catch_up", json_object_new_boolean(f->catch_up));
        return add_value(json_object_new_object(), "firing", firing);
}

static json_object *continuation_json(const struct timerd_continuation *c)
{
        json_object *obj = json_object_new_object();

        obj = add_u64(obj, "epoch", c->epoch);
        obj = add_u64(obj, "nonce", c->nonce);
        return add_u64(obj, "cycle", c->cycle);
}

static json_object *sleep_json(const struct timerd_sleep_result *s)
{
        json_object *reply = json_object_new_object(), *observation;

        reply = add_value(reply, "elapsed", json_object_new_boolean(s->elapsed));
        if (s->elapsed)
                return reply;
        observation = json_object_new_object();
        observation =
            add_value(observation, "continuation", continuation_json(&s->observation.continuation));
        observation = add_u64(observation, "lease", s->observation.lease);
        if (s->observation.has_remaining)
                observation = add_u64(observation, "remaining_usec", s->observation.remaining_usec);
        observation = add_value(observation, "timer", json_object_new_string(s->observation.timer));
        observation = add_u64(observation, "alarms", s->observation.alarms);
        return add_value(reply, "observation", observation);
}

static json_object *finish_json(const struct timerd_finish_result *f)
{
        json_object *reply = json_object_new_object(), *ticket;

        if (f->has_remaining)
                reply = add_u64(reply, "remaining_usec", f->remaining_usec);
        if (!f->has_ticket)
                return reply;
        ticket = json_object_new_object();
        ticket = add_value(ticket, "continuation", continuation_json(&f->ticket.continuation));
        ticket = add_u64(ticket, "nonce", f->ticket.nonce);
        return add_value(reply, "ticket", ticket);
}

static uint64_t monotonic_now(void)
{
        struct clocks now;

        return clocks_read(&now) < 0 ? 0 : now.monotonic_usec;
}

static int timed_out(const struct options *o)
{
        char span[TIMESPAN_FORMAT_MAX];

        fprintf(stderr, "timerctl: wait: no firing within %s\n",
                timespan_format(span, o->timeout_usec, 1));
        return EXIT_STATUS_TIMEOUT;
}

/* Wait for a firing and complete it; EXIT_STATUS_SUCCESS or the failure, reported. */
static int wait_once(struct timerd *t, const struct options *o, uint64_t deadline)
{
        struct timerd_firing firing;
        uint64_t timeout = 0, now;
        struct clocks clocks;
        int r;

        if (deadline > 0) {
                now = monotonic_now();
                if (now >= deadline)
                        return timed_out(o);
                timeout = deadline - now;
        }
        r = timerd_wait(t, (const char *const *)o->args, o->n_args, timeout, &firing);
        if (r == -TIMERD_E_TIMEOUT)
                return timed_out(o);
        if (r < 0)
                return call_failed(t, "wait", NULL, r);

        if (o->json != JSON_OFF)
                r = json_print(firing_json(&firing), o->json);
        else if (clocks_read(&clocks) >= 0)
                print_firing(stdout, &firing, &clocks);
        else
                r = -errno;
        if (r < 0)
                return call_failed(t, "wait", firing.token.name, r);
        /* Shown before it is completed: a pipe reader sees each firing as it comes. */
        if (fflush(stdout) != 0)
                return call_failed(t, "wait", firing.token.name, -errno);

        r = timerd_complete(t, &firing.token, TIMERD_OUTCOME_SUCCESS, TIMERD_DIRECTIVE_CONTINUE, 0);
        if (r < 0)
                return call_failed(t, "wait", firing.token.name, r);
        return EXIT_STATUS_SUCCESS;
}

int verb_wait(struct timerd *t, const struct options *o)
{
        uint64_t count = o->count > 0 ? o->count : 1;
        uint64_t deadline = o->timeout_usec > 0 ? monotonic_now() + o->timeout_usec : 0;
        int r = EXIT_STATUS_SUCCESS;

        for (uint64_t i = 0; i < count && r == EXIT_STATUS_SUCCESS; i++)
                r = wait_once(t, o, deadline);
        return r;
}

/* The end of the sleep on its clock. */
static int sleep_until(const struct options *o, struct timerd_start *ret)
{
        uint64_t usec;

        if (timestamp_on_clock(&o->until, &o->now, o->declaration.clock, &usec) < 0)
                return usage_error("sleep: \"%s\": %s", o->args[0],
                                   o->until.relative || o->until.usec >= o->now.realtime_usec
                                       ? "too far in the future for the clock"
                                       : "before the clock started");
        if (o->until.relative) {
                *ret = (struct timerd_start){.kind = TIMERD_START_AFTER, .usec = o->until.usec};
                return PARSE_CONTINUE;
        }
        *ret = (struct timerd_start){.kind = TIMERD_START_AT, .usec = usec};
        return PARSE_CONTINUE;
}

/* A one-shot alarm on this connection: it is what can interrupt the sleep. */
static int arm_alarm(struct timerd *t, const struct options *o)
{
        const struct timerd_start start = {.kind = TIMERD_START_AFTER, .usec = o->alarm_usec};
        struct timerd_declaration d;
        struct timerd_claim claim;
        char name[64];
        int r;

        snprintf(name, sizeof(name), "timerctl-sleep-%ld", (long)getpid());
        timerd_declaration_init(&d, TIMERD_POLICY_ONCE, 0);
        d.delivery = TIMERD_DELIVERY_ALARM;
        d.clock = o->declaration.clock;
        r = timerd_register(t, name, &d, &start, false, &claim);
        if (r < 0)
                return call_failed(t, "sleep", name, r);
        return EXIT_STATUS_SUCCESS;
}

static void print_observation(const struct timerd_observation *obs, bool resuming)
{
        char span[TIMESPAN_FORMAT_MAX];

        printf("Interrupted by alarm %s", obs->timer);
        if (obs->alarms > 1)
                printf(" (%" PRIu64 " alarms)", obs->alarms);
        if (obs->has_remaining)
                printf(", %s left", timespan_format(span, obs->remaining_usec, USEC_PER_MSEC));
        printf(resuming ? "; sleeping on.\n" : ".\n");
}

int verb_sleep(struct timerd *t, const struct options *o)
{
        char span[TIMESPAN_FORMAT_MAX];
        struct timerd_sleep_result result;
        struct timerd_finish_result finish;
        struct timerd_start until;
        uint64_t start;
        int r;

        r = sleep_until(o, &until);
        if (r != PARSE_CONTINUE)
                return r;
        if (o->has_alarm) {
                r = arm_alarm(t, o);
                if (r != EXIT_STATUS_SUCCESS)
                        return r;
        }

        start = monotonic_now();
        r = timerd_sleep(t, o->declaration.clock, &until, &result);
        for (;;) {
                if (r < 0)
                        return call_failed(t, "sleep", NULL, r);
                if (o->json != JSON_OFF && json_print(sleep_json(&result), o->json) < 0)
                        return call_failed(t, "sleep", NULL, -ENOMEM);
                if (result.elapsed) {
                        if (o->json == JSON_OFF)
                                printf("Slept %s.\n", timespan_format(span, monotonic_now() - start,
                                                                      USEC_PER_MSEC));
                        return EXIT_STATUS_SUCCESS;
                }
                if (o->json == JSON_OFF)
                        print_observation(&result.observation, o->resume);
                fflush(stdout);

                r = timerd_finish(t, &result.observation,
                                  o->resume ? TIMERD_FINISH_RESUME : TIMERD_FINISH_INTERRUPT,
                                  &finish);
                if (r < 0)
                        return call_failed(t, "sleep", NULL, r);
                if (o->json != JSON_OFF && json_print(finish_json(&finish), o->json) < 0)
                        return call_failed(t, "sleep", NULL, -ENOMEM);
                if (!o->resume)
                        return EXIT_STATUS_INTERRUPTED;
                if (!finish.has_ticket)
                        return call_failed(t, "sleep", NULL, -TIMERD_E_PROTOCOL);
                r = timerd_resume(t, &finish.ticket, &result);
        }
}
