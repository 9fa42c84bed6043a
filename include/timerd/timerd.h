/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * libtimerd — the client library of timerd, the host's timer service.
 *
 * A struct timerd is one connection to the service. Every call blocks until the service answers.
 * Calls return 0 (or a count) on success and a negative number on failure: either -errno for a
 * system error (-ECONNREFUSED: the service is not running) or -TIMERD_E_* for an error the service
 * answered (-TIMERD_E_NOT_FOUND). timerd_strerror() names both.
 *
 * Thread safety: a connection belongs to one thread at a time; use one connection per thread.
 * Nothing in the library is global.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "timerd/timerd-types.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TIMERD_SOCKET_SYSTEM   "/run/timerd/io.timerd"
#define TIMERD_SOCKET_EMBEDDED "run/io.timerd" /* relative to the working directory */

struct timerd;

/*
 * Connect. `path` NULL picks, in order: $TIMERD_SOCKET, ./run/io.timerd when it exists (the
 * embedded default), /run/timerd/io.timerd.
 */
int timerd_connect(const char *path, struct timerd **ret);
/* The path timerd_connect(NULL, …) would use; static storage or the environment's string. */
const char *timerd_default_socket(void);
void timerd_close(struct timerd *t);

/* The message for a negative return value of any call. Never NULL. */
const char *timerd_strerror(int error);
/* The varlink error name of the last failed call on t ("io.timerd.Timer.NotFound"), or NULL. */
const char *timerd_last_error_name(const struct timerd *t);

struct timerd_declaration {
        enum timerd_policy policy;
        uint64_t cadence_usec;
        enum timerd_clock clock;
        enum timerd_lifetime lifetime;
        enum timerd_delivery delivery;
        uint64_t accuracy_usec;
};

/* A once, transient, notify, monotonic declaration with no cadence. */
void timerd_declaration_init(struct timerd_declaration *d, enum timerd_policy policy,
                             uint64_t cadence_usec);

struct timerd_claim {
        char name[TIMERD_NAME_MAX + 1];
        uint64_t generation;
};

struct timerd_token {
        char name[TIMERD_NAME_MAX + 1];
        uint64_t generation;
        uint64_t run;
};

/* Which schedule to start with. */
struct timerd_start {
        enum {
                TIMERD_START_DEFAULT,  /* once: inactive; others: now + cadence */
                TIMERD_START_AT,       /* usec: absolute on the timer's clock */
                TIMERD_START_AFTER,    /* usec: relative to now */
        } kind;
        uint64_t usec;
};

/* Owner: the uid whose timer is meant; TIMERD_OWNER_SELF for the caller's own (uid 0 may name
 * another). */
#define TIMERD_OWNER_SELF UINT32_MAX

int timerd_register(struct timerd *t, const char *name, const struct timerd_declaration *d,
                    const struct timerd_start *start, bool replace, struct timerd_claim *ret);

int timerd_reconcile(struct timerd *t, const char *name, const struct timerd_declaration *d,
                     enum timerd_desired desired, uint64_t deadline_usec,
                     struct timerd_claim *ret, bool *ret_created);

/*
 * Control calls act through a claim, or through the token of an active run (pass NULL for the
 * other). `start` kind AT or AFTER.
 */
int timerd_schedule(struct timerd *t, const struct timerd_claim *claim,
                    const struct timerd_token *token, const struct timerd_start *start);
/* start NULL: disarm. cadence_usec 0: keep. Returns the previous remaining time and cadence. */
int timerd_reschedule(struct timerd *t, const struct timerd_claim *claim,
                      const struct timerd_token *token, const struct timerd_start *start,
                      uint64_t cadence_usec, uint64_t *ret_remaining_usec,
                      uint64_t *ret_cadence_usec);
int timerd_cancel(struct timerd *t, const struct timerd_claim *claim,
                  const struct timerd_token *token);
int timerd_kick(struct timerd *t, const struct timerd_claim *claim,
                const struct timerd_token *token, uint64_t *ret_next_usec);
int timerd_unregister(struct timerd *t, const struct timerd_claim *claim);

struct timerd_timer {
        uint32_t owner;
        char name[TIMERD_NAME_MAX + 1];
        struct timerd_declaration declaration;
        uint64_t generation;
        enum timerd_state state;
        enum timerd_failure failure;
        bool has_next;
        uint64_t next_usec;      /* absolute on the timer's clock */
        uint64_t remaining_usec; /* next - now, when has_next */
        uint64_t run;
        bool run_active;
        bool pending;
        uint64_t runs;
        uint64_t consecutive_expected_failures;
        uint64_t overruns;
        bool has_last_start;
        uint64_t last_start_usec;
        bool has_last_finish;
        uint64_t last_finish_usec;
        enum timerd_outcome last_outcome;
        uint64_t last_duration_usec;
        uint64_t total_duration_usec;
};

/* owner TIMERD_OWNER_SELF for the caller's own. */
int timerd_get(struct timerd *t, const char *name, uint32_t owner, struct timerd_timer *ret);
/*
 * The caller's timers in name order (all owners when `all` and the caller is uid 0). Returns the
 * count and a malloc'd array in *ret (free it).
 */
long timerd_list(struct timerd *t, uint32_t owner, bool all, struct timerd_timer **ret);

struct timerd_firing {
        struct timerd_token token;
        enum timerd_clock clock;
        uint64_t deadline_usec;
        uint64_t fired_usec;
        uint64_t overruns;
};

/*
 * Block for the next firing of one of the caller's notify timers (among `names` if n_names > 0).
 * timeout_usec 0: no timeout (-TIMERD_E_TIMEOUT otherwise when it passes).
 */
int timerd_wait(struct timerd *t, const char *const *names, size_t n_names,
                uint64_t timeout_usec, struct timerd_firing *ret);

/*
 * A stream of firings on this connection: start it once, then read each firing with
 * timerd_wait_next(). While a stream is open the connection is used only for it.
 */
int timerd_wait_stream(struct timerd *t, const char *const *names, size_t n_names);
int timerd_wait_next(struct timerd *t, struct timerd_firing *ret);

int timerd_complete(struct timerd *t, const struct timerd_token *token,
                    enum timerd_outcome outcome, enum timerd_directive directive,
                    uint64_t duration_usec);

struct timerd_status {
        char epoch[128];
        char version[32];
        char backend[32];
        char backend_reason[128];
        char store[32];
        uint64_t pid;
        uint64_t uptime_usec;
        uint64_t timers, scheduled, running, failed, pending;
        uint64_t connections, waiters;
        uint64_t clock_changes, iterations, wakeups, firings, overruns, stale_expiries;
        uint64_t slowest_iteration_usec;
        uint64_t lateness_samples, lateness_p50_usec, lateness_p99_usec, lateness_max_usec;
};

int timerd_status(struct timerd *t, struct timerd_status *ret);

/*
 * Any varlink call, for tools: parameters_json is a JSON object text (NULL for {}). On success
 * *ret_reply_json gets the reply's parameters as malloc'd JSON text. A varlink error returns its
 * typed code and leaves the error's parameters in *ret_reply_json.
 */
int timerd_call_raw(struct timerd *t, const char *method, const char *parameters_json,
                    char **ret_reply_json);

#ifdef __cplusplus
}
#endif
