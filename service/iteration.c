/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "service/iteration.h"

#include <inttypes.h>
#include <malloc.h>

#include "service/accept.h"
#include "service/api.h"
#include "service/events.h"
#include "service/expiry.h"
#include "service/io/clock.h"
#include "service/io/log.h"
#include "service/io/peer.h"
#include "service/service.h"
#include "service/store.h"
#include "service/virtual-clock.h"
#include "varlink/names.h"

/* A connection is gone: its parked requests, its transient timers and the runs it held. */
static void on_session_closed(struct service *s, struct peer *p)
{
        struct td_now now;

        api_session_closed(s, p->session);
        if (service_now(s, &now) < 0)
                return;
        /* Its transient timers and the runs it held are gone: Waits on them learn it there. */
        api_apply(s, &now, registry_session_closed(s->registry, &now, p->session));
}

/* Retire the sessions of the connections dropped so far, and hand over what applying left.
 * Whether a session was retired (its changes may wait for a commit). */
static bool settle(struct service *s)
{
        bool retired = false;
        struct peer *p;

        while ((p = service_take_closing(s))) {
                on_session_closed(s, p);
                retired = true;
        }
        api_hand_over(s);
        return retired;
}

void service_retire_closed(struct service *s)
{
        (void)settle(s);
}

static void on_expired(enum timerd_clock clock, uint64_t generation, void *userdata)
{
        struct service *s = userdata;
        struct clock_wake *w = &s->wake.clock[clock];
        struct td_now now;

        service_note_work(s);
        /* What a connection dropped in this wake-up left goes before its deadlines are met. */
        (void)settle(s);
        if (!wake_expired(s, clock, generation))
                return;
        if (s->clock.virtual) {
                /* It served the connection table only, on the real clock. */
                uint64_t real;
                if (clock_read(TIMERD_CLOCK_MONOTONIC, &real) == 0)
                        service_reap(s, real);
                (void)settle(s);
                (void)service_sync_wake(s, clock);
                return;
        }
        if (service_now(s, &now) < 0)
                return;
        if (clock == TIMERD_CLOCK_MONOTONIC)
                wake_record_loop_lag(s, &now);
        service_expire(s, clock, &now);
        if (clock == TIMERD_CLOCK_MONOTONIC)
                service_reap(s, now.usec[TIMERD_CLOCK_MONOTONIC]);
        (void)settle(s);
        /* The kernel timer is spent: arm it again for whatever is due next. */
        int r = service_sync_wake(s, clock);
        if (r < 0) {
                log_errno(r, "Cannot re-arm the %s timer", vl_clock_to_string(clock));
                api_apply(
                    s, &now,
                    registry_confirm_arm(s->registry, &now, clock, w->registry_generation, r));
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

/* The one point per iteration where intents are handled. */
/* A connection's next pipelined call is taken in the same drain while it has had fewer calls
 * than this and the drain is younger than the slice: cheap calls amortize a wake-up, expensive
 * ones cannot hold the loop. A List page (up to 128 KiB of reply) ends the burst outright, so
 * a client that pipelines pages gets one a loop turn, whatever the clock says. */
#define PIPELINE_BURST      128
#define PIPELINE_SLICE_USEC 1000
/* The calls of one connection's burst share a reading of the clocks this young: they were read
 * from its socket before it was taken (reading them costs more than a cheap call). */
#define SHARED_NOW_USEC 50

static void drain_intents(struct service *s)
{
        uint64_t drain = ++s->drains, start = 0, now;
        const struct peer *last = NULL;
        bool young = false; /* the shared reading was found young since the last call */
        struct intent it;

        (void)clock_read(TIMERD_CLOCK_MONOTONIC, &start);
        service_now_share(s, true);
        /* What is queued when the drain begins, plus each connection's next pipelined calls up to
         * its burst; the rest wait for the next iteration. */
        size_t budget = s->intents.count;
        for (size_t n = 0; n < budget && intent_take(&s->intents, &it) > 0; n++) {
                struct peer *p = it.peer;
                /* A peer that went away before its turn is on the closed list, fd -1. */
                if (p->fd < 0 || p->session != it.session)
                        continue;
                if (p->burst_drain != drain) {
                        p->burst_drain = drain;
                        p->burst = 0;
                }
                if (p != last || !young)
                        service_now_unshare(s);
                last = p;
                young = false;
                p->queued = false;
                p->paged = false;
                api_handle_call(s, p, &it.call);
                (void)settle(s);
                if (p->fd >= 0 && p->queued && !p->paged && ++p->burst < PIPELINE_BURST &&
                    clock_read(TIMERD_CLOCK_MONOTONIC, &now) == 0 &&
                    now - start < PIPELINE_SLICE_USEC) {
                        budget++;
                        young = service_now_shared_age(s, now) < SHARED_NOW_USEC;
                }
        }
        service_now_share(s, false);
}

/*
 * Freed timer records stay in the allocator's free lists (glibc returns to the system only what
 * is free at the top of its heap), and the registry's tables stay sized for the most timers there
 * were. Once the timers fell to half their peak, by at least this many (8 MiB and more: a
 * connection with its transient timers closed, or a mass Unregister), both are given back, at
 * the end of an iteration whose replies are out.
 */
#define RELEASE_AFTER_TIMERS 65536

static void release_memory(struct service *s)
{
        struct registry_stats stats;
        uint64_t start, end;

        /* The tables still hold timers being reaped: after the last of them. */
        if (registry_reap_pending(s->registry))
                return;
        registry_get_stats(s->registry, &stats);
        if (stats.timers >= s->peak_timers) {
                s->peak_timers = stats.timers;
                return;
        }
        if (s->peak_timers - stats.timers < RELEASE_AFTER_TIMERS ||
            stats.timers > s->peak_timers / 2)
                return;
        bool timed = clock_read(TIMERD_CLOCK_MONOTONIC, &start) == 0;
        registry_shrink(s->registry);
        int trimmed = malloc_trim(0);
        timed = clock_read(TIMERD_CLOCK_MONOTONIC, &end) == 0 && timed;
        log_debug("Timers down from %" PRIu64 " to %" PRIu64 ": memory %s in %" PRIu64 " µs",
                  s->peak_timers, stats.timers,
                  trimmed ? "given back to the system" : "kept, none was free",
                  timed ? end - start : 0);
        s->peak_timers = stats.timers;
}

static void free_closed(struct service *s)
{
        /* Queued intents may still name a closed peer: free only once none is queued. */
        if (s->intents.count > 0)
                return;
        service_free_closed_peers(s);
}

int service_iterate(struct service *s, int64_t timeout_usec)
{
        uint64_t end;
        bool busy = s->intents.count > 0 || registry_reevaluation_pending(s->registry) ||
                    registry_reap_pending(s->registry) || s->virtual_due;

        s->iteration_start_usec = 0;
        /* Intents left over from a bounded drain, a re-evaluation or a reap under way, or
         * virtual deadlines still due, must not wait for another event. */
        int r = loop_run_once(s->loop, busy ? 0 : virtual_clock_timeout(s, timeout_usec));
        if (r < 0) {
                log_errno(r, "The event loop failed");
                service_exit(s, EXIT_REASON_BACKEND_FAULT);
                return r;
        }
        service_note_work(s);
        (void)settle(s);
        drain_intents(s);
        if (registry_reevaluation_pending(s->registry))
                service_reevaluate_step(s);
        bool reaping = registry_reap_pending(s->registry);
        if (reaping)
                service_reap_step(s);
        s->virtual_due = virtual_clock_settle(s);
        (void)settle(s);
        store_commit(s);
        service_send_released(s);
        /* Releasing the held answers may have dropped a peer (its session's changes), and the
         * undo of a failed commit may have dispatched runs (their answers): those too. */
        (void)settle(s);
        store_commit(s);
        service_send_released(s);
        service_flush_all(s);
        /* A peer the flush dropped: its session's changes are committed by the next iteration,
         * and what they tell others is held until then. */
        if (settle(s))
                service_flush_all(s);
        free_closed(s);
        release_memory(s);
        s->metrics.iterations++;
        if (clock_read(TIMERD_CLOCK_MONOTONIC, &end) == 0 && end >= s->iteration_start_usec) {
                uint64_t took = end - s->iteration_start_usec;

                if (took > s->metrics.slowest_iteration_usec)
                        s->metrics.slowest_iteration_usec = took;
                if ((reaping || registry_reap_pending(s->registry)) &&
                    took > s->metrics.slowest_reaping_iteration_usec)
                        s->metrics.slowest_reaping_iteration_usec = took;
        }
        return r;
}
