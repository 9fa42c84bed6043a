/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "service/service.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "service/api.h"
#include "service/io/clock.h"
#include "service/events.h"
#include "service/io/log.h"
#include "service/core/parked.h"
#include "service/io/peer.h"
#include "service/store.h"
#include "service/virtual-clock.h"
#include "varlink/names.h"

int service_now(struct service *s, struct td_now *ret)
{
        int r = clock_source_now(&s->clock, ret);
        if (r < 0) {
                log_errno(r, "Cannot read the clocks");
                service_exit(s, EXIT_REASON_CLOCK_FAULT);
        }
        return r;
}

void service_exit(struct service *s, enum exit_reason reason)
{
        if (lifecycle_exit(&s->lifecycle, reason) && reason != EXIT_REASON_SHUTDOWN_REQUESTED)
                log_error("Fault: %s", exit_reason_to_string(reason));
}

bool service_core_deadline(const struct service *s, enum timerd_clock c, uint64_t *ret)
{
        const struct clock_wake *w = &s->wake[c];
        uint64_t deadline = UINT64_MAX;

        if (w->registry_armed)
                deadline = w->registry_deadline;
        if (w->parked_armed && w->parked_deadline < deadline)
                deadline = w->parked_deadline;
        *ret = deadline;
        return w->registry_armed || w->parked_armed;
}

int service_sync_wake(struct service *s, enum timerd_clock c)
{
        struct clock_wake *w = &s->wake[c];
        uint64_t deadline = UINT64_MAX;
        /* Virtual clocks are stepped, not woken: only the connection table's reaps, on the real
         * monotonic clock, reach the kernel. */
        bool want = !s->clock.virtual && service_core_deadline(s, c, &deadline);

        if (w->conns_armed && w->conns_deadline < deadline)
                deadline = w->conns_deadline;
        want = want || w->conns_armed;

        if (!want) {
                if (!w->kernel_armed)
                        return 0;
                w->kernel_armed = false;
                return loop_disarm(s->loop, c);
        }
        if (w->kernel_armed && w->kernel_deadline == deadline)
                return 0;
        uint64_t generation = ++s->last_kernel_generation;
        int r = loop_arm(s->loop, c, deadline, generation);
        if (r < 0) {
                w->kernel_armed = false;
                return r;
        }
        w->kernel_armed = true;
        w->kernel_deadline = deadline;
        w->kernel_generation = generation;
        /* Loop lag counts from the later of deadline and arming: one armed in the past is due
         * only from then. Only the monotonic clock neither jumps nor stops in a suspend. */
        if (c == TIMERD_CLOCK_MONOTONIC && clock_read(c, &w->kernel_armed_usec) < 0)
                w->kernel_armed_usec = UINT64_MAX;
        return 0;
}

/* The loop runs the monotonic clock's kernel wake-up: how long after it was due. */
static void record_loop_lag(struct service *s, const struct clock_wake *w, const struct td_now *now)
{
        uint64_t due =
            w->kernel_deadline > w->kernel_armed_usec ? w->kernel_deadline : w->kernel_armed_usec;
        uint64_t ran = now->usec[TIMERD_CLOCK_MONOTONIC];

        if (w->kernel_armed_usec == UINT64_MAX)
                return;
        histogram_record(&s->metrics.loop_lag, ran > due ? ran - due : 0);
}

/* Effects are copied out first: applying one calls back into the registry, which reuses its
 * effect buffer and may move the names dispatches point to. */
struct applied_effect {
        struct td_effect effect;
        char name[TIMERD_NAME_MAX + 1];
};

/* Effects applied from the stack, without an allocation; larger transitions allocate. */
#define APPLIED_ON_STACK 4

/* Names are at most TIMERD_NAME_MAX: a copy, not a format, per firing. */
static void copy_dispatch(struct applied_effect *dst, const struct td_effect *e)
{
        size_t len = strnlen(e->dispatch.name, TIMERD_NAME_MAX);

        dst->effect = *e;
        memcpy(dst->name, e->dispatch.name, len);
        dst->name[len] = '\0';
        dst->effect.dispatch.name = dst->name;
}

/* Take the registry's demand for clock c's kernel timer; the outcome is confirmed by the caller. */
static int take_arm(struct service *s, const struct td_effect *e)
{
        struct clock_wake *w = &s->wake[e->arm.clock];
        w->registry_armed = e->kind == TD_EFFECT_ARM;
        w->registry_deadline = e->arm.deadline_usec;
        w->registry_generation = e->arm.generation;
        int r = service_sync_wake(s, e->arm.clock);
        if (r < 0)
                log_warning("Cannot arm the %s timer: %s", vl_clock_to_string(e->arm.clock),
                            strerror(-r));
        return r;
}

/* Runs ended without a copy of the effects: a few on the stack, the rest wait (see below). */
#define OOM_ENDED_RUNS 16

/*
 * Without memory for a copy: take the kernel-timer demands in place (they call nothing that
 * reuses the effect buffer) and confirm them afterwards. Notify and alarm dispatches stay pending
 * in the registry, where a Wait or the next Sleep of the owner finds them; signal runs, which only
 * the service ends, are ended (up to OOM_ENDED_RUNS per transition, copied to the stack first) so
 * their timers keep firing.
 */
static void apply_arms_only(struct service *s, const struct td_now *now, struct td_transition t)
{
        struct {
                bool taken;
                uint64_t generation;
                int result;
        } arms[TIMERD_CLOCK_MAX] = {0};
        struct applied_effect ended[OOM_ENDED_RUNS];
        size_t n_ended = 0;

        log_error("Out of memory applying %zu effects: deliveries wait for a Wait", t.n_effects);
        for (size_t i = 0; i < t.n_effects; i++) {
                const struct td_effect *e = &t.effects[i];
                if (e->kind == TD_EFFECT_DISPATCH) {
                        if (e->dispatch.delivery == TIMERD_DELIVERY_SIGNAL &&
                            n_ended < OOM_ENDED_RUNS) {
                                copy_dispatch(&ended[n_ended++], e);
                        }
                        continue;
                }
                arms[e->arm.clock].taken = true;
                arms[e->arm.clock].generation = e->arm.generation;
                arms[e->arm.clock].result = take_arm(s, e);
        }
        for (int c = 0; c < TIMERD_CLOCK_MAX; c++)
                if (arms[c].taken)
                        service_apply(s, now,
                                      registry_confirm_arm(s->registry, now, (enum timerd_clock)c,
                                                           arms[c].generation, arms[c].result));
        for (size_t i = 0; i < n_ended; i++)
                service_end_run(s, now, &ended[i].effect.dispatch, TIMERD_OUTCOME_SUCCESS,
                                TIMERD_DIRECTIVE_CONTINUE);
}

/*
 * Whatever call or firing left a notify timer with nothing more to deliver (failed, removed, ended,
 * of any owner), the parked Waits of its owner are re-checked here, at once.
 */
static void recheck_silenced_waits(struct service *s)
{
        uint32_t owner;

        while (registry_take_silenced_owner(s->registry, &owner))
                api_waits_recheck(s, owner);
}

static void apply_effects(struct service *s, const struct td_now *now, struct td_transition t);

void service_apply(struct service *s, const struct td_now *now, struct td_transition t)
{
        apply_effects(s, now, t);
        recheck_silenced_waits(s);
}

static void apply_effects(struct service *s, const struct td_now *now, struct td_transition t)
{
        /* Most transitions are a firing or two: they need no allocation. */
        struct applied_effect local[APPLIED_ON_STACK];
        struct applied_effect *copy = local;

        if (t.n_effects == 0)
                return;
        if (t.n_effects > APPLIED_ON_STACK) {
                copy = calloc(t.n_effects, sizeof(*copy));
                if (!copy) {
                        apply_arms_only(s, now, t);
                        return;
                }
        }
        size_t n = t.n_effects;
        for (size_t i = 0; i < n; i++) {
                copy[i].effect = t.effects[i];
                if (t.effects[i].kind == TD_EFFECT_DISPATCH)
                        copy_dispatch(&copy[i], &t.effects[i]);
        }

        for (size_t i = 0; i < n; i++) {
                struct td_effect *e = &copy[i].effect;
                switch (e->kind) {
                case TD_EFFECT_ARM:
                case TD_EFFECT_DISARM: {
                        int r = take_arm(s, e);
                        service_apply(s, now,
                                      registry_confirm_arm(s->registry, now, e->arm.clock,
                                                           e->arm.generation, r));
                        break;
                }
                case TD_EFFECT_DISPATCH: {
                        const struct td_dispatch *d = &e->dispatch;
                        s->metrics.firings++;
                        events_publish(s, EVENT_FIRED, d->owner, d->name, d->run);
                        /* From when it was owed: a handover is early on purpose, an accuracy
                         * window late on purpose, and one due when queued was late already. */
                        if (d->past_due)
                                s->metrics.lateness_past_due++;
                        else
                                histogram_record(
                                    &s->metrics.lateness,
                                    d->fired_usec > d->due_usec ? d->fired_usec - d->due_usec : 0);
                        api_offer_firing(s, now, d);
                        break;
                }
                }
        }
        if (copy != local)
                free(copy);
}

void service_end_run(struct service *s, const struct td_now *now, const struct td_dispatch *d,
                     enum timerd_outcome outcome, enum timerd_directive directive)
{
        const struct td_handle token = {
            .owner = d->owner, .name = d->name, .generation = d->generation, .run = d->run};
        service_apply(s, now,
                      registry_complete(s->registry, now, &token, outcome, directive, 0, NULL));
}

void service_sync_parked_wake(struct service *s)
{
        for (int c = 0; c < TIMERD_CLOCK_MAX; c++) {
                struct clock_wake *w = &s->wake[c];
                uint64_t deadline;
                w->parked_armed =
                    parked_next_deadline(s->parked, (enum timerd_clock)c, &deadline) > 0;
                w->parked_deadline = w->parked_armed ? deadline : 0;
                int r = service_sync_wake(s, (enum timerd_clock)c);
                if (r < 0) {
                        log_errno(r, "Cannot arm the %s timer for parked requests",
                                  vl_clock_to_string((enum timerd_clock)c));
                        service_exit(s, EXIT_REASON_BACKEND_FAULT);
                }
        }
}

void service_expire(struct service *s, enum timerd_clock c, const struct td_now *now)
{
        struct clock_wake *w = &s->wake[c];

        if (w->registry_armed) {
                bool stale;
                service_apply(s, now,
                              registry_expire(s->registry, now, c, w->registry_generation, &stale));
        }
        api_expire_parked(s, now);
}

static void on_expired(enum timerd_clock clock, uint64_t generation, void *userdata)
{
        struct service *s = userdata;
        struct clock_wake *w = &s->wake[clock];
        struct td_now now;

        service_note_work(s);
        if (!w->kernel_armed || generation != w->kernel_generation) {
                s->stale_wakeups++;
                return;
        }
        w->kernel_armed = false;
        if (s->clock.virtual) {
                /* It served the connection table only, on the real clock. */
                uint64_t real;
                if (clock_read(TIMERD_CLOCK_MONOTONIC, &real) == 0)
                        conns_reap(s, real);
                (void)service_sync_wake(s, clock);
                return;
        }
        if (service_now(s, &now) < 0)
                return;
        if (clock == TIMERD_CLOCK_MONOTONIC)
                record_loop_lag(s, w, &now);
        service_expire(s, clock, &now);
        if (clock == TIMERD_CLOCK_MONOTONIC)
                conns_reap(s, now.usec[TIMERD_CLOCK_MONOTONIC]);
        /* The kernel timer is spent: arm it again for whatever is due next. */
        int r = service_sync_wake(s, clock);
        if (r < 0) {
                log_errno(r, "Cannot re-arm the %s timer", vl_clock_to_string(clock));
                service_apply(
                    s, &now,
                    registry_confirm_arm(s->registry, &now, clock, w->registry_generation, r));
        }
}

void service_clock_was_set(struct service *s)
{
        struct td_now now;

        s->clock_changes++;
        log_notice("The realtime clock was set; re-evaluating realtime deadlines");
        if (service_now(s, &now) < 0)
                return;
        for (int c = 0; c < TIMERD_CLOCK_MAX; c++) {
                if (c != TIMERD_CLOCK_REALTIME && c != TIMERD_CLOCK_REALTIME_ALARM)
                        continue;
                s->wake[c].kernel_armed = false;
                service_apply(s, &now, registry_rearm(s->registry, &now, (enum timerd_clock)c));
                api_expire_parked(s, &now);
        }
}

static void on_clock_set(void *userdata)
{
        struct service *s = userdata;

        /* A virtual instance's wall clock is set by io.timerd.Test alone. */
        if (!s->clock.virtual)
                service_clock_was_set(s);
}

void service_loop_callbacks(struct service *s, struct loop_callbacks *ret)
{
        *ret = (struct loop_callbacks){
            .expired = on_expired,
            .clock_set = on_clock_set,
            .userdata = s,
        };
}

struct peer *service_find_session(struct service *s, uint64_t session)
{
        struct list_node *n;

        list_for_each (n, &s->peers) {
                struct peer *p = list_entry(n, struct peer, node);
                if (p->session == session)
                        return p;
        }
        return NULL;
}

static void peer_update_watch(struct service *s, struct peer *p)
{
        /* Nothing more to read after end of stream, or while the input buffer is full of calls
         * that wait their turn (level-triggered polling would spin). A hang-up still shows as
         * LOOP_ERR. */
        uint32_t events = p->doomed || p->eof || p->input_full ? 0 : LOOP_IN;
        if (peer_has_output(p))
                events |= LOOP_OUT;
        if (events == p->watched_events)
                return;
        int r = loop_watch_update(p->watch, events);
        if (r < 0) {
                log_errno(r, "Cannot watch connection %" PRIu64, p->session);
                service_drop_peer(s, p);
                return;
        }
        p->watched_events = events;
}

/* Output past this is written at once rather than at the iteration's flush: a long reply (a List)
 * starts moving, and a connection's output waiting for the flush stays small. */
#define FLUSH_THRESHOLD (64 * 1024)

static void flush_list(struct service *s, struct peer *p)
{
        if (!list_linked(&p->flush_node))
                list_append(&s->flushes, &p->flush_node);
}

static void flush_unlist(struct peer *p)
{
        if (list_linked(&p->flush_node))
                list_remove(&p->flush_node);
}

/* Write what p has queued; a broken connection, or a doomed one with nothing left, is dropped. */
static void peer_write(struct service *s, struct peer *p)
{
        flush_unlist(p);
        int r = peer_flush(p);
        if ((r < 0 && r != -EAGAIN) || (p->doomed && !peer_has_output(p))) {
                service_drop_peer(s, p);
                return;
        }
        peer_update_watch(s, p);
}

bool service_queue(struct service *s, struct peer *p, char *msg)
{
        int r = peer_queue(p, msg);
        if (r < 0) {
                log_warning("Dropping connection %" PRIu64 " (uid %u): %s", p->session,
                            (unsigned)p->uid,
                            r == -ENOBUFS ? "it does not read its replies" : strerror(-r));
                service_drop_peer(s, p);
                return false;
        }
        flush_list(s, p);
        return true;
}

static void peer_send(struct service *s, struct peer *p, char *msg)
{
        /* Nothing leaves before the changes it may describe are durable (store.c). */
        if (store_hold(s, p, msg) || !service_queue(s, p, msg))
                return;
        if (vl_writer_pending(&p->out) >= FLUSH_THRESHOLD)
                peer_write(s, p);
}

static void peer_pump(struct service *s, struct peer *p);

static void call_finished(struct service *s, struct peer *p)
{
        p->call_open = false;
        p->call_more = false;
        p->call_oneway = false;
        conns_note_call(s, p);
        if (p->input_full) {
                p->input_full = false;
                peer_update_watch(s, p);
        }
        peer_pump(s, p);
}

bool service_reply_continues(const struct peer *p, bool continues)
{
        return continues && p->call_more;
}

void service_reply_encoded(struct service *s, struct peer *p, char *msg, bool continues)
{
        bool more = service_reply_continues(p, continues);
        if (p->call_oneway)
                free(msg);
        else
                peer_send(s, p, msg);
        if (!more && !p->doomed && p->fd >= 0)
                call_finished(s, p);
}

void service_reply(struct service *s, struct peer *p, json_object *parameters, bool continues)
{
        char *msg = NULL;

        if (p->call_oneway) {
                json_object_put(parameters);
                service_reply_encoded(s, p, NULL, continues);
                return;
        }
        /* NULL, or a tree missing a part: an allocation failed on the way. */
        if (parameters)
                msg = vl_reply_encode(parameters, service_reply_continues(p, continues));
        if (!msg)
                service_error(s, p, TIMERD_E_BUSY, NULL);
        else
                service_reply_encoded(s, p, msg, continues);
}

/* The errors whose IDL declares no parameters: any other one without them lost them to a failed
 * allocation. */
static bool error_without_parameters(int error)
{
        switch (error) {
        case TIMERD_E_EXPECTED_MORE:
        case TIMERD_E_PERMISSION_DENIED:
        case TIMERD_E_TIMEOUT:
        case TIMERD_E_SHUTTING_DOWN:
        case TIMERD_E_BUSY:
        case TIMERD_E_NOTHING_TO_WAIT_FOR:
                return true;
        default:
                return false;
        }
}

/*
 * Out of memory is answered Busy (try again), with nothing else in the answer: an errno (no wire
 * name) from below, an error whose parameters could not be made, or one whose text could not be.
 */
void service_error(struct service *s, struct peer *p, int error, json_object *parameters)
{
        const char *name = vl_error_to_name(error);
        char *msg = NULL;

        if (p->call_oneway)
                json_object_put(parameters);
        else if (name && (parameters || error_without_parameters(error)))
                msg = vl_error_encode(name, parameters);
        else
                json_object_put(parameters);
        if (!p->call_oneway && !msg)
                msg = vl_error_encode(vl_error_to_name(TIMERD_E_BUSY), NULL);
        if (!p->call_oneway)
                peer_send(s, p, msg);
        if (!p->doomed && p->fd >= 0)
                call_finished(s, p);
}

/* An error outside any call (bad framing): answer it, then hang up once it is written. */
static void peer_protocol_error(struct service *s, struct peer *p, int error, json_object *params)
{
        p->doomed = true;
        peer_send(s, p, vl_error_encode(vl_error_to_name(error), params));
}

/* Take the next message of p, if it may: one open call per connection. */
static void peer_pump(struct service *s, struct peer *p)
{
        while (!p->call_open && !p->queued && !p->doomed && p->fd >= 0) {
                struct vl_call call;
                int r = peer_next_call(p, s->config.max_depth, &call);
                if (r == 0) {
                        if (p->eof)
                                service_drop_peer(s, p);
                        return;
                }
                if (r == -EMSGSIZE) {
                        json_object *params = json_object_new_object();
                        vl_add_u64(params, "max", s->config.max_message);
                        peer_protocol_error(s, p, TIMERD_E_REQUEST_TOO_LARGE, params);
                        return;
                }
                if (r < 0) {
                        /* The framing is intact: answer and go on with the next message. */
                        json_object *params = r == -ENOMEM ? NULL : json_object_new_object();
                        vl_add_string(params, "reason",
                                      r == -EILSEQ    ? "not valid UTF-8"
                                      : r == -EBADMSG ? "not JSON, or nested too deep"
                                                      : "not a varlink call");
                        p->call_open = true;
                        conns_note_call(s, p);
                        service_error(s, p, r == -ENOMEM ? TIMERD_E_BUSY : TIMERD_E_INVALID_MESSAGE,
                                      params);
                        continue;
                }
                p->call_open = true;
                p->call_more = call.more;
                p->call_oneway = call.oneway;
                p->call_cookie = ++s->last_cookie;
                conns_note_call(s, p);
                r = intent_post(&s->intents, p, p->session, &call);
                if (r < 0) {
                        vl_call_done(&call);
                        service_error(s, p, TIMERD_E_BUSY, NULL);
                        continue;
                }
                p->queued = true;
        }
}

static void on_peer_io(struct loop_watch *w, int fd, uint32_t events, void *userdata)
{
        struct peer *p = userdata;
        struct service *s = p->service;
        (void)w;
        (void)fd;

        service_note_work(s);
        if (events & LOOP_OUT) {
                peer_write(s, p);
                if (p->fd < 0)
                        return;
        }
        if (!(events & (LOOP_IN | LOOP_ERR)))
                return;
        long n = peer_read(p);
        if (n > 0)
                conns_note_input(s, p, (size_t)n);
        if (n == -ENOBUFS) {
                /* The buffer is full of calls waiting their turn. A hang-up now means the open
                 * call has nobody to answer; otherwise stop reading until the call ends. */
                if ((events & LOOP_ERR) && p->call_open && !p->queued) {
                        service_drop_peer(s, p);
                        return;
                }
                p->input_full = true;
                peer_update_watch(s, p);
                return;
        }
        if (n == 0 || (n < 0 && n != -EAGAIN && n != -EMSGSIZE)) {
                /* Gone, or only half-closed: calls already received are still answered, but a
                 * parked call has nobody left to answer. */
                p->eof = true;
                if (n < 0 || (p->call_open && !p->queued)) {
                        service_drop_peer(s, p);
                        return;
                }
                peer_update_watch(s, p);
        }
        peer_pump(s, p);
}

/* The peer's process exited: whatever it left is retired, even if its socket lives on elsewhere. */
static void on_peer_exit(struct loop_watch *w, int fd, uint32_t events, void *userdata)
{
        struct peer *p = userdata;
        (void)w;
        (void)fd;
        (void)events;

        service_note_work(p->service);
        service_drop_peer(p->service, p);
}

static void on_accept(struct loop_watch *w, int fd, uint32_t events, void *userdata)
{
        struct service *s = userdata;
        (void)w;
        (void)events;

        service_note_work(s);
        for (int i = 0; i < 64; i++) {
                int cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
                if (cfd < 0) {
                        if (errno == EMFILE || errno == ENFILE) {
                                /* Level-triggered, the pending connection would wake the loop
                                 * again at once: pause accepting until a connection closes. */
                                log_warning("accept: %s; pausing new connections until one "
                                            "closes",
                                            strerror(errno));
                                if (loop_watch_update(s->listen_watch, 0) >= 0)
                                        s->accept_paused = true;
                        } else if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
                                log_warning("accept: %s", strerror(errno));
                        return;
                }
                struct peer *p;
                int r = peer_new(cfd, ++s->last_session, s->config.max_message,
                                 s->config.max_output, &p);
                if (r < 0) {
                        log_errno(r, "Cannot take a connection");
                        close(cfd);
                        continue;
                }
                p->service = s;
                if (!conns_admit(s, p)) {
                        peer_free(p);
                        continue;
                }
                r = loop_watch(s->loop, cfd, LOOP_IN, on_peer_io, p, &p->watch);
                if (r < 0) {
                        log_errno(r, "Cannot watch a connection");
                        conns_forget(s, p);
                        peer_free(p);
                        continue;
                }
                p->watched_events = LOOP_IN;
                if (p->pidfd >= 0 &&
                    loop_watch(s->loop, p->pidfd, LOOP_IN, on_peer_exit, p, &p->pidfd_watch) < 0) {
                        close(p->pidfd);
                        p->pidfd = -1;
                }
                list_append(&s->peers, &p->node);
                s->n_peers++;
        }
}

void service_hang_up(struct service *s, struct peer *p, int error, json_object *parameters)
{
        if (p->fd < 0) {
                json_object_put(parameters);
                return;
        }
        /* Queued after whole messages, so the framing holds; what the socket does not take at
         * once is lost with the connection. */
        if (peer_queue(p, vl_error_encode(vl_error_to_name(error), parameters)) == 0)
                (void)peer_flush(p);
        service_drop_peer(s, p);
}

void service_drop_peer(struct service *s, struct peer *p)
{
        struct td_now now;

        if (p->fd < 0)
                return;
        loop_unwatch(p->watch);
        p->watch = NULL;
        loop_unwatch(p->pidfd_watch);
        p->pidfd_watch = NULL;
        close(p->fd);
        p->fd = -1;
        list_remove(&p->node);
        s->n_peers--;
        conns_forget(s, p);
        flush_unlist(p);
        if (s->accept_paused && loop_watch_update(s->listen_watch, LOOP_IN) >= 0)
                s->accept_paused = false;
        list_append(&s->closed, &p->node);

        events_unsubscribe(s, p);
        api_session_closed(s, p->session);
        events_session_closing(s, p->session);
        if (service_now(s, &now) < 0)
                return;
        /* Its transient timers and the runs it held are gone: Waits on them learn it there. */
        service_apply(s, &now, registry_session_closed(s->registry, &now, p->session));
}

int service_start_listening(struct service *s, int listen_fd)
{
        conns_init(&s->conns, s->config.max_connections);
        s->listen_fd = listen_fd;
        return loop_watch(s->loop, listen_fd, LOOP_IN, on_accept, s, &s->listen_watch);
}

void service_stop_listening(struct service *s)
{
        loop_unwatch(s->listen_watch);
        s->listen_watch = NULL;
}

/* The one point per iteration where intents are handled. */
/* A connection's next pipelined call is taken in the same drain while it has had fewer calls
 * than this and the drain is younger than the slice: cheap calls amortize a wake-up, expensive
 * ones (a List of thousands) cannot hold the loop. */
#define PIPELINE_BURST      64
#define PIPELINE_SLICE_USEC 1000

static void drain_intents(struct service *s)
{
        uint64_t drain = ++s->drains, start = 0, now;
        struct intent it;

        (void)clock_read(TIMERD_CLOCK_MONOTONIC, &start);
        /* What is queued when the drain begins, plus each connection's next pipelined calls up to
         * its burst; the rest wait for the next iteration. */
        size_t budget = s->intents.count;
        for (size_t n = 0; n < budget && intent_take(&s->intents, &it) > 0; n++) {
                struct peer *p = it.peer;
                /* A peer that went away before its turn is on the closed list, fd -1. */
                if (p->fd < 0 || p->session != it.session) {
                        vl_call_done(&it.call);
                        continue;
                }
                if (p->burst_drain != drain) {
                        p->burst_drain = drain;
                        p->burst = 0;
                }
                p->queued = false;
                api_handle_call(s, p, &it.call);
                vl_call_done(&it.call);
                if (p->fd >= 0 && p->queued && ++p->burst < PIPELINE_BURST &&
                    clock_read(TIMERD_CLOCK_MONOTONIC, &now) == 0 &&
                    now - start < PIPELINE_SLICE_USEC)
                        budget++;
        }
}

/* A drop may queue output for others (events to subscribers): they join the list. */
void service_flush_all(struct service *s)
{
        while (!list_empty(&s->flushes))
                peer_write(s, list_entry(s->flushes.next, struct peer, flush_node));
}

static void free_closed(struct service *s)
{
        /* Queued intents may still name a closed peer: free only once none is queued. */
        if (s->intents.count > 0)
                return;
        service_free_closed_peers(s);
}

void service_free_closed_peers(struct service *s)
{
        while (!list_empty(&s->closed)) {
                struct peer *p = list_entry(s->closed.next, struct peer, node);
                list_remove(&p->node);
                peer_free(p);
        }
}

void service_note_work(struct service *s)
{
        if (s->iteration_start_usec == 0 &&
            clock_read(TIMERD_CLOCK_MONOTONIC, &s->iteration_start_usec) < 0)
                s->iteration_start_usec = 0;
}

/* A step of a calendar re-evaluation: about this much work, from a first batch this big. */
#define REEVALUATE_SLICE_USEC   2000
#define REEVALUATE_BUDGET_FIRST 256

/*
 * One step of a calendar re-evaluation (registry_reevaluate_calendars()): a batch sized to take
 * about REEVALUATE_SLICE_USEC, so that each iteration still serves the peers.
 */
static void reevaluate_step(struct service *s)
{
        uint64_t start, end, count;
        struct td_now now;

        if (s->reevaluate_budget == 0)
                s->reevaluate_budget = REEVALUATE_BUDGET_FIRST;
        if (service_now(s, &now) < 0 || clock_read(TIMERD_CLOCK_MONOTONIC, &start) < 0)
                return;
        service_apply(s, &now,
                      registry_reevaluate_step(s->registry, &now, s->reevaluate_budget, &count));
        s->reevaluated += count;
        if (clock_read(TIMERD_CLOCK_MONOTONIC, &end) == 0 && count == s->reevaluate_budget) {
                if (end - start < REEVALUATE_SLICE_USEC / 2 && s->reevaluate_budget < 65536)
                        s->reevaluate_budget *= 2;
                else if (end - start > REEVALUATE_SLICE_USEC && s->reevaluate_budget > 16)
                        s->reevaluate_budget /= 2;
        }
        if (!registry_reevaluation_pending(s->registry)) {
                s->calendar_reevaluations++;
                log_info("%" PRIu64 " calendar timers re-evaluated", s->reevaluated);
                s->reevaluated = 0;
        }
}

void service_finish_reevaluation(struct service *s)
{
        while (registry_reevaluation_pending(s->registry) && lifecycle_running(&s->lifecycle))
                reevaluate_step(s);
}

int service_iterate(struct service *s, int64_t timeout_usec)
{
        uint64_t end;
        bool busy =
            s->intents.count > 0 || registry_reevaluation_pending(s->registry) || s->virtual_due;

        s->iteration_start_usec = 0;
        /* Intents left over from a bounded drain, a re-evaluation under way, or virtual
         * deadlines still due, must not wait for another event. */
        int r = loop_run_once(s->loop, busy ? 0 : timeout_usec);
        if (r < 0) {
                log_errno(r, "The event loop failed");
                service_exit(s, EXIT_REASON_BACKEND_FAULT);
                return r;
        }
        service_note_work(s);
        drain_intents(s);
        if (registry_reevaluation_pending(s->registry))
                reevaluate_step(s);
        s->virtual_due = virtual_clock_settle(s);
        store_commit(s);
        service_flush_all(s);
        free_closed(s);
        s->metrics.iterations++;
        if (clock_read(TIMERD_CLOCK_MONOTONIC, &end) == 0 && end >= s->iteration_start_usec &&
            end - s->iteration_start_usec > s->metrics.slowest_iteration_usec)
                s->metrics.slowest_iteration_usec = end - s->iteration_start_usec;
        return r;
}
