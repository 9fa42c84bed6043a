/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The service context: everything the event loop owns (the registry, the parked queue, every
 * connection, the kernel timers) and the one place where the core's transitions are applied to
 * the world. Nothing here is touched by anything but the loop's thread.
 */

#include <stdbool.h>
#include <stdint.h>

#include "loop/loop.h"
#include "service/io/clock.h"
#include "service/io/config.h"
#include "service/conns.h"
#include "service/intent.h"
#include "service/lifecycle.h"
#include "base/list.h"
#include "service/core/metrics.h"
#include "service/core/registry.h"
#include "service/signals.h"

struct parked;
struct peer;
struct store;

/* The kernel timer of one clock serves two cores, and on the monotonic clock the connection
 * table's reaps: it is armed at the earliest of their demands. */
struct clock_wake {
        bool registry_armed;
        uint64_t registry_deadline;
        uint64_t registry_generation;
        bool parked_armed;
        uint64_t parked_deadline;
        bool conns_armed;
        uint64_t conns_deadline;
        bool kernel_armed;
        uint64_t kernel_deadline;
        uint64_t kernel_generation;
        uint64_t kernel_armed_usec; /* monotonic clock: when it was armed; UINT64_MAX unknown */
};

struct service {
        struct config config;
        int argc; /* as at start, for reloading the configuration */
        char **argv;
        struct loop *loop;
        struct clock_source clock; /* what service_now() reads: real, or virtual (--clock) */
        bool virtual_due;          /* virtual deadlines left due by the last settle */
        char backend_reason[160];
        bool alarm_clocks;

        struct registry *registry;
        struct parked *parked;
        struct zones *zones; /* of calendar timers */
        struct store *store;

        int listen_fd;
        bool listen_bound_here; /* we created the socket file: unlink it at exit */
        struct loop_watch *listen_watch;
        bool accept_paused; /* out of file descriptors: resumed when a connection closes */
        int signal_fd;
        struct loop_watch *signal_watch;
        struct loop_watch *zones_watch; /* NULL: zone files not watched */

        struct list_node peers; /* live, oldest first */
        uint32_t n_peers;
        struct conns conns;
        uint32_t n_subscribers;
        struct list_node closed;  /* peers freed at the end of the iteration */
        struct list_node flushes; /* peers with output queued since their last write */
        uint64_t last_session;
        uint64_t last_cookie;

        struct intent_queue intents;
        uint64_t drains;

        struct clock_wake wake[TIMERD_CLOCK_MAX];
        uint64_t last_kernel_generation;

        struct metrics metrics;
        struct signal_stats signals;
        uint64_t clock_changes;
        uint64_t calendar_reevaluations; /* passes over the calendar timers completed */
        uint64_t reevaluated;            /* calendar timers re-evaluated in the pass under way */
        size_t reevaluate_budget;        /* calendar timers a step of the pass computes */
        uint64_t stale_wakeups;
        uint64_t started_usec;         /* monotonic */
        uint64_t iteration_start_usec; /* monotonic; 0 until work starts */
        char epoch[96];

        struct lifecycle lifecycle;
};

/* Read the clocks; a failure is a clock fault that ends the loop. */
int service_now(struct service *s, struct td_now *ret);

/* The earliest deadline the registry and the parked queue want clock c woken at; false when
 * neither wants it. On a virtual clock no kernel timer serves it: virtual-clock.c steps to it. */
bool service_core_deadline(const struct service *s, enum timerd_clock c, uint64_t *ret);

/* What a kernel expiry of clock c does: fire the registry's due timers, expire parked requests. */
void service_expire(struct service *s, enum timerd_clock c, const struct td_now *now);

/* The realtime clock was set: realtime deadlines and calendar schedules are evaluated again. */
void service_clock_was_set(struct service *s);
/* Finish a calendar re-evaluation under way at once, rather than a step per iteration: a virtual
 * clock answers only once the world is settled. */
void service_finish_reevaluation(struct service *s);

/* Apply a transition of the registry: arm kernel timers, deliver dispatches. */
void service_apply(struct service *s, const struct td_now *now, struct td_transition t);

/* End a run the service delivered itself (an alarm, a signal): there is no client to complete it.
 */
void service_end_run(struct service *s, const struct td_now *now, const struct td_dispatch *d,
                     enum timerd_outcome outcome, enum timerd_directive directive);

/* Arm clock's kernel timer at the earliest demand on it (or disarm it). -errno from the loop. */
int service_sync_wake(struct service *s, enum timerd_clock clock);

/* Re-arm the parked queue's wake-up of every clock after it changed. */
void service_sync_parked_wake(struct service *s);

/*
 * Queue msg (owned) for p without writing it; it is written by the next service_flush_all(). false
 * when p could not take it and was dropped.
 */
bool service_queue(struct service *s, struct peer *p, char *msg);
/* Write what peers queued since their last write; peers whose connection broke are dropped. Once
 * per iteration, after the intents are drained and the store committed. */
void service_flush_all(struct service *s);

/* Answer the open call of p. */
void service_reply(struct service *s, struct peer *p, json_object *parameters, bool continues);
/* Whether a reply with `continues` keeps p's call open: the flag its encoding must carry. */
bool service_reply_continues(const struct peer *p, bool continues);
/* Answer with a reply the caller encoded (owned; NULL when encoding ran out of memory, which
 * drops p) with the flag service_reply_continues() gave. */
void service_reply_encoded(struct service *s, struct peer *p, char *msg, bool continues);
void service_error(struct service *s, struct peer *p, int error, json_object *parameters);

/* Tell p `error` (parameters owned) as far as its socket takes it now, and drop it. */
void service_hang_up(struct service *s, struct peer *p, int error, json_object *parameters);

/* A peer is gone: retire what it held, exactly once. */
void service_drop_peer(struct service *s, struct peer *p);
/* Free the peers dropped so far (their connections are closed). */
void service_free_closed_peers(struct service *s);

struct peer *service_find_session(struct service *s, uint64_t session);

void service_loop_callbacks(struct service *s, struct loop_callbacks *ret);
int service_start_listening(struct service *s, int listen_fd);
void service_stop_listening(struct service *s);

/* Mark that this iteration started doing work (for the slowest-iteration figure). */
void service_note_work(struct service *s);

/* One loop iteration: wait at most timeout_usec (-1: forever), dispatch, drain intents. */
int service_iterate(struct service *s, int64_t timeout_usec);

/* Request the loop to end with `reason` (the first reason wins). */
void service_exit(struct service *s, enum exit_reason reason);
