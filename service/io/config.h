/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The service's settings: defaults, then the config file (--config), then the environment, then
 * the command line. SIGHUP re-reads them all and applies what can change while running.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct config {
        char config_path[4096]; /* "": none */
        bool config_missing_ok; /* --config=-FILE: a missing file is an empty one */
        char socket_path[108];  /* sun_path size */
        char state_dir[4096];
        char backend[16]; /* auto | io_uring | timerfd */
        char clock[8];    /* real | virtual (moved only by io.timerd.Test: for client tests) */
        char user[256];   /* switch to this user at start (root only); "": stay */
        int log_level;
        size_t max_message; /* bytes of one request */
        int max_depth;      /* JSON nesting of one request */
        size_t max_output;  /* bytes buffered for one connection before it is dropped */
        uint32_t max_connections;
        uint32_t max_connections_per_uid;
        gid_t admin_gid; /* its members are privileged like uid 0; (gid_t)-1: no admin group */
        uint32_t reserved_connections; /* kept for them and uid 0 (at most half the table) */
        uint64_t idle_timeout_usec;    /* a connection holding nothing is closed after this */
        uint64_t partial_timeout_usec; /* … one whose message is unfinished this after its start */
        uint32_t max_timers;
        uint32_t reserved_timers; /* of them, kept for uid 0 and the admin group (at most half) */
        uint32_t max_timers_per_owner;
        uint64_t min_cadence_usec; /* a shorter cadence is refused: bounds a timer's wake-ups */
        uint32_t max_intents;      /* requests handled per loop iteration */
        uint32_t max_parked_per_connection;
        uint32_t max_parked_per_owner;
        /* subuid(5): the uids in a person's ranges are charged to the person (per-uid limits) */
        char subuid_file[4096];
        uint32_t list_page; /* timers in one List reply: its default and its maximum */
        uint64_t shutdown_grace_usec;
};

void config_defaults(struct config *c);

enum config_parse_result {
        CONFIG_RUN,
        CONFIG_EXIT_OK,    /* --help, --version */
        CONFIG_EXIT_USAGE, /* a bad argument; already reported */
};

/* Apply the --config file, $TIMERD_SOCKET and argv on top of what c holds. */
enum config_parse_result config_parse_args(struct config *c, int argc, char **argv);

/*
 * Apply "name = value" lines (# comments) of a file; a missing file changes nothing when
 * missing_ok. -errno; the error is logged.
 */
int config_parse_file(struct config *c, const char *path, bool missing_ok);

/*
 * SIGHUP: parse everything again (argv as at start). A bad file changes nothing (-EINVAL, logged);
 * otherwise the settings that can change while running are taken and the others logged as
 * waiting for a restart.
 */
int config_reload(struct config *c, int argc, char **argv);
