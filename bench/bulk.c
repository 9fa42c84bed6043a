/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "bench/bulk.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench/calls.h"
#include "bench/harness.h"
#include "timerd/timerd.h"

/* One connection's share: timers first, first + step, … (replies come in the order of calls). */
struct bulk_state {
        const struct bulk_spec *spec;
        bool cancel;
        size_t next;
        size_t step;
        size_t answered; /* the next reply is for timer next_answer */
        size_t next_answer;
};

static size_t bulk_next(void *userdata, char *buf, size_t size)
{
        struct bulk_state *b = userdata;
        const struct bulk_spec *spec = b->spec;
        char name[64];

        if (b->next >= spec->n)
                return 0;
        size_t i = b->next;
        b->next += b->step;
        snprintf(name, sizeof(name), "%s%zu", spec->prefix, i);
        if (b->cancel)
                return call_cancel(buf, size, name, spec->generations[i]);
        if (spec->calendar)
                return call_register_calendar(buf, size, name, spec->calendar, spec->timezone);
        return call_register(buf, size, name, spec->deadline(spec->userdata, i),
                             spec->accuracy_usec, spec->retained);
}

static void bulk_reply(void *userdata, const char *msg, size_t len)
{
        struct bulk_state *b = userdata;
        size_t i = b->next_answer;
        (void)len;

        b->next_answer += b->step;
        b->answered++;
        if (reply_is_error(msg))
                die("call for timer %zu of %zu (%s) failed: %s", i, b->spec->n,
                    b->cancel ? "Cancel" : "Register", msg);
        if (!b->cancel && b->spec->generations &&
            !reply_u64(msg, "generation", &b->spec->generations[i]))
                die("a Register reply without a generation: %s", msg);
}

static const struct pipeline_ops bulk_ops = {.next = bulk_next, .reply = bulk_reply};

static void bulk_run(struct raw_conn *conns, size_t n_conns, const struct bulk_spec *spec,
                     bool cancel)
{
        struct bulk_state *states = xcalloc(n_conns, sizeof(*states));
        void **userdata = xcalloc(n_conns, sizeof(void *));
        size_t answered = 0;

        for (size_t k = 0; k < n_conns; k++) {
                states[k] = (struct bulk_state){
                    .spec = spec, .cancel = cancel, .next = k, .step = n_conns, .next_answer = k};
                userdata[k] = &states[k];
        }
        pipeline_run(conns, userdata, n_conns, n_conns > 1 ? 1 : BULK_WINDOW, &bulk_ops);
        for (size_t k = 0; k < n_conns; k++)
                answered += states[k].answered;
        if (answered != spec->n)
                die("%zu of %zu calls answered", answered, spec->n);
        free(states);
        free(userdata);
}

void bulk_register(struct raw_conn *conns, size_t n_conns, const struct bulk_spec *spec)
{
        bulk_run(conns, n_conns, spec, false);
}

void bulk_cancel(struct raw_conn *conns, size_t n_conns, const struct bulk_spec *spec)
{
        if (!spec->generations)
                die("bulk_cancel needs the generations");
        bulk_run(conns, n_conns, spec, true);
}

void libtimerd_turn(struct timerd *t)
{
        struct pollfd p = {.fd = timerd_get_fd(t), .events = (short)timerd_get_events(t)};

        if (poll(&p, 1, -1) < 0 && errno != EINTR)
                die("poll: %m");
        int r = timerd_process(t);
        if (r < 0)
                die("timerd_process: %s", timerd_strerror(r));
}

static void on_bulk_registered(struct timerd *t, int error, const struct timerd_claim *claim,
                               void *userdata)
{
        size_t *answered = userdata;
        (void)t;

        if (error < 0)
                die("Register %s: %s", claim ? claim->name : "a timer", timerd_strerror(error));
        (*answered)++;
}

void bulk_register_libtimerd(struct timerd *t, const struct bulk_spec *spec)
{
        struct timerd_declaration decl;
        size_t sent = 0, answered = 0;
        char name[64];
        int r;

        if (spec->calendar || spec->generations)
                die("bulk_register_libtimerd: once timers without generations only");
        timerd_declaration_init(&decl, TIMERD_POLICY_ONCE, 0);
        /* Exact, as the raw path declares them: bench-firing's rows fire at the deadline. */
        decl.handover_usec = 0;
        decl.accuracy_usec = spec->accuracy_usec;
        decl.lifetime = spec->retained ? TIMERD_LIFETIME_RETAINED : TIMERD_LIFETIME_TRANSIENT;
        while (answered < spec->n) {
                while (sent < spec->n && timerd_in_flight(t) < BULK_WINDOW) {
                        struct timerd_start start = {.kind = TIMERD_START_AT,
                                                     .usec = spec->deadline(spec->userdata, sent)};
                        snprintf(name, sizeof(name), "%s%zu", spec->prefix, sent++);
                        r = timerd_register_async(t, name, &decl, &start, false, on_bulk_registered,
                                                  &answered);
                        if (r < 0)
                                die("timerd_register_async: %s", timerd_strerror(r));
                }
                libtimerd_turn(t);
        }
}
