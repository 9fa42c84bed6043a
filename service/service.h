/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The service context: everything the event loop owns (the registry, the parked queue, every
 * connection, the kernel timers), grouped by the file that owns each part. Nothing here is
 * touched by anything but the loop's thread.
 */

#include <stdbool.h>
#include <stdint.h>

#include "loop/loop.h"
#include "base/hashmap.h"
#include "service/io/clock.h"
#include "base/list.h"
#include "service/accept.h"
#include "service/apply.h"
#include "service/connection.h"
#include "service/conns.h"
#include "service/core/metrics.h"
#include "service/core/registry.h"
#include "service/intent.h"
#include "service/io/config.h"
#include "service/iteration.h"
#include "service/lifecycle.h"
#include "service/signals.h"
#include "service/virtual-clock.h"
#include "service/wake.h"

struct parked;
struct peer;
struct store;
struct subuids;

/*
 * Dependencies between the files of service/ point one way (meson.build lists the order;
 * tools/service-layers checks it): what a lower file leaves for the layers above returns to them
 * or waits in its part of this struct for them to take (apply.c's outcomes, connection.c's
 * closing peers, the store's released messages).
 */
struct service {
        struct config config;
        int argc; /* as at start, for reloading the configuration */
        char **argv;
        struct loop *loop;
        struct clock_source clock; /* what service_now() reads: real, or virtual (--clock) */
        bool virtual_due;          /* virtual deadlines left due by the last settle */
        struct virtual_advance advance;
        char backend_reason[160];
        bool alarm_clocks;

        struct registry *registry;
        struct parked *parked;
        struct subuids *subuids; /* what accounts_load() read: the core's, NULL before */
        struct zones *zones;     /* of calendar timers */
        struct store *store;

        struct listening listen;
        int signal_fd;
        struct loop_watch *signal_watch;
        struct loop_watch *zones_watch; /* NULL: zone files not watched */

        struct peers peers;
        struct conns conns;

        struct intent_queue intents;
        uint64_t drains;
        /* While a drain shares one reading of the clocks between calls (service_now_share()). */
        bool now_sharing, now_shared;
        struct td_now shared_now;

        struct applier applying;
        struct wakes wake;

        struct metrics metrics;
        struct signal_stats signals;
        uint64_t clock_changes;
        uint64_t calendar_reevaluations; /* passes over the calendar timers completed */
        uint64_t reevaluated;            /* calendar timers re-evaluated in the pass under way */
        size_t reevaluate_budget;        /* calendar timers a step of the pass computes */
        uint64_t reap_steps;             /* steps that freed timers of closed connections */
        size_t reap_budget;              /* timers such a step frees */
        uint64_t started_usec;           /* monotonic */
        uint64_t iteration_start_usec;   /* monotonic; 0 until work starts */
        uint64_t peak_timers;            /* the most timers since memory was last given back */
        char epoch[96];

        struct lifecycle lifecycle;
};

/* Read the clocks; a failure is a clock fault that ends the loop. */
int service_now(struct service *s, struct td_now *ret);
/*
 * Between _share(true) and _share(false), service_now() reads the real clocks once and answers
 * that reading until service_now_unshare(): calls read from a socket before that reading may all
 * be decided at its instant. The virtual clock is never shared (a call may move it).
 */
void service_now_share(struct service *s, bool share);
void service_now_unshare(struct service *s);
/* How long ago (monotonic usec, from now_usec) the shared reading was taken; UINT64_MAX: none. */
uint64_t service_now_shared_age(const struct service *s, uint64_t now_usec);

/* Mark that this iteration started doing work (for the slowest-iteration figure). */
void service_note_work(struct service *s);

/* Request the loop to end with `reason` (the first reason wins). */
void service_exit(struct service *s, enum exit_reason reason);
