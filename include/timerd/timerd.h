/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * libtimerd — the client library of timerd, the host's timer service.
 *
 * A struct timerd is one connection to the service. It can be used in two ways:
 *
 *   Blocking: every call sends its request and waits for the answer (timerd_register(), …).
 *
 *   Asynchronous, for programs with an event loop (epoll, sd-event, libuv): the *_async() calls
 *   queue the request and return at once; the answer comes to a callback from timerd_process(),
 *   which the program calls whenever timerd_get_fd() is ready for timerd_get_events().
 *   Many calls may be in flight on one connection (pipelining): the service answers them
 *   strictly in order, and so the callbacks run in the order the calls were made.
 *
 * The two ways do not mix while calls are in flight: a blocking call made while asynchronous calls
 * (or a stream) are in flight fails with -EBUSY.
 *
 * Streams. A Wait or Subscribe with a stream of answers occupies its connection for good: the
 * service takes the next call on it only once the stream has ended, so any call made after one
 * fails with -EBUSY. Use a second connection for control calls (Complete, Kick, …).
 *
 * Return values. Calls return 0 (or a count) on success and a negative number on failure: either
 * -errno for a system error (-ECONNREFUSED: the service is not running) or -TIMERD_E_* for an
 * error the service answered (-TIMERD_E_NOT_FOUND) or a client-side one (-TIMERD_E_DISCONNECTED:
 * the connection broke; -TIMERD_E_PROTOCOL: the service's answer breaks the protocol).
 * timerd_strerror() names both kinds. No call aborts, on bad arguments or on a dead service: a
 * NULL where an object is needed, or a value out of its enum, is -EINVAL.
 *
 * A broken connection stays broken (every later call returns -TIMERD_E_DISCONNECTED) until
 * timerd_reconnect(). A service restart is seen as a broken connection; the service's epoch
 * (timerd_status()) tells a restart from a lost connection. Transient timers die with their
 * connection; retained ones are restated after a restart with timerd_reconcile(), which is
 * idempotent. The pattern, in examples/job.c:
 *
 *     r = timerd_wait(t, …);
 *     if (r == -TIMERD_E_DISCONNECTED) {
 *             while (timerd_reconnect(t) < 0)
 *                     sleep(1);
 *             timerd_status(t, &status);
 *             if (strcmp(status.epoch, known_epoch) != 0)
 *                     … the service restarted: timerd_reconcile() each retained timer
 *                       (which also re-pins a signal timer to this process, after
 *                       timerd_signals_acknowledge() when the program acknowledges them) …
 *     }
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
/*
 * Close the connection and free t (NULL is fine). Callbacks of calls still in flight are not
 * called. May be called from a callback: t is freed once the callback returns.
 */
void timerd_close(struct timerd *t);

/*
 * Connect again to the socket t was connected to, in place: t keeps its identity, its file
 * descriptor changes (an event loop must watch the new one). Calls in flight on the old connection
 * fail first with -TIMERD_E_DISCONNECTED (their callbacks run). On failure (-ECONNREFUSED or
 * -ENOENT while the service is down) t is left broken and the call may be repeated. Not from a
 * callback (-EBUSY).
 */
int timerd_reconnect(struct timerd *t);

/* The message for a negative return value of any call. Never NULL. */
const char *timerd_strerror(int error);
/*
 * The varlink error name of the last failed call on t ("io.timerd.Timer.NotFound"), or NULL.
 * In a callback: the error of the answer being delivered.
 */
const char *timerd_last_error_name(const struct timerd *t);
/*
 * The `reason` parameter of that error when it has one, else NULL; it lives as long. For
 * -TIMERD_E_INVALID_SCHEDULE a stable value for programs: "cadence_missing", "cadence_on_once",
 * "cadence_below_minimum", "handover_not_shorter", "deadline_missing", "calendar_invalid",
 * "calendar_never", "calendar_missing" or "calendar_clock" (see the IDL).
 */
const char *timerd_last_error_reason(const struct timerd *t);
/*
 * The `description` parameter of that error when it has one, else NULL; it lives as long. For
 * people, not a stable value: for an expression that does not parse or never elapses it names
 * the expression and the byte where the bad part starts ("declaration.cron[0] at byte 6
 * (\"13 *\"): value out of range").
 */
const char *timerd_last_error_description(const struct timerd *t);
/*
 * For -TIMERD_E_LIMIT_EXCEEDED: the bound the call met, as the error's `limit` parameter names it
 * ("timers_share", "timers_per_owner", "timers", "parked_per_owner", "connections", … see the
 * IDL), with its `max` in *ret_max (when not NULL); else NULL and *ret_max untouched. It lives as
 * long as timerd_last_error_name().
 */
const char *timerd_last_error_limit(const struct timerd *t, uint64_t *ret_max);

/*
 * The names of the enums' values as the service spells them ("after_completion"), for tools and
 * logs. *_to_string() returns static storage, NULL for a value out of range. *_from_string()
 * returns the value, or the type's _INVALID (-1) for NULL or a name it does not know; '-' may
 * stand for '_' ("after-completion"). Outcome, exit and failure name their absence "none".
 */
const char *timerd_clock_to_string(enum timerd_clock value);
enum timerd_clock timerd_clock_from_string(const char *s);
const char *timerd_policy_to_string(enum timerd_policy value);
enum timerd_policy timerd_policy_from_string(const char *s);
const char *timerd_lifetime_to_string(enum timerd_lifetime value);
enum timerd_lifetime timerd_lifetime_from_string(const char *s);
const char *timerd_delivery_to_string(enum timerd_delivery value);
enum timerd_delivery timerd_delivery_from_string(const char *s);
const char *timerd_state_to_string(enum timerd_state value);
enum timerd_state timerd_state_from_string(const char *s);
const char *timerd_outcome_to_string(enum timerd_outcome value);
enum timerd_outcome timerd_outcome_from_string(const char *s);
const char *timerd_exit_to_string(enum timerd_exit value);
enum timerd_exit timerd_exit_from_string(const char *s);
const char *timerd_directive_to_string(enum timerd_directive value);
enum timerd_directive timerd_directive_from_string(const char *s);
const char *timerd_failure_to_string(enum timerd_failure value);
enum timerd_failure timerd_failure_from_string(const char *s);
const char *timerd_desired_to_string(enum timerd_desired value);
enum timerd_desired timerd_desired_from_string(const char *s);

struct timerd_declaration {
        enum timerd_policy policy;
        uint64_t cadence_usec;
        enum timerd_clock clock;
        enum timerd_lifetime lifetime;
        enum timerd_delivery delivery;
        uint64_t accuracy_usec;
        /* Delivery signal: the signal sent to the registering process; 0 for SIGALRM. Else
         * SIGALRM, SIGUSR1, SIGUSR2 or a real-time signal 34..64 (glibc's SIGRTMIN..SIGRTMAX;
         * musl's from 35); any other is -TIMERD_E_INVALID_PARAMETER. */
        int signal;
        /* Retained timers: a deadline missed while the service was down fires once when it
         * starts (like systemd's Persistent=), or with false is skipped to the next one. */
        bool catch_up;
        /* Delay such a catch-up firing by a random part of this. */
        uint64_t randomized_delay_usec;
        /*
         * Early handover, notify timers only: at most TIMERD_HANDOVER_MAX_USEC (1 s) and shorter
         * than the cadence. The service starts the run up to this long before the deadline and
         * sends the firing at once; libtimerd holds it and hands it to the program at its
         * deadline_usec, on the program's own clock. A firing then costs the program one wake-up
         * of lateness, as an in-process timer does, instead of the service's and then its own.
         * A Cancel or Reschedule made inside this window finds the run already started. 0: none,
         * the service fires at the deadline itself (exact, two wake-ups of lateness).
         * TIMERD_HANDOVER_DEFAULT (what timerd_declaration_init() sets): libtimerd sends 1 ms for
         * a notify timer whose cadence, if it has one, is longer than that, else 0; so the default
         * never makes a declaration invalid, whatever delivery or cadence is set after init. A
         * timer read back shows what was sent. A Reschedule to a cadence not longer than the
         * handover is refused (handover_not_shorter): declare 0 for a timer that goes that fast.
         */
        uint64_t handover_usec;
        /*
         * Calendar timers (TIMERD_POLICY_CALENDAR) only, else empty: the expressions, one per
         * line, systemd.time(7) ones as they are and 5-field cron ones after
         * TIMERD_CALENDAR_CRON_PREFIX ("Mon..Fri *-*-* 03:00\ncron:0 3 * * 1-5"); the IANA zone
         * they are read in ("": the service's local zone; a timer read back names the zone in
         * effect); and whether randomized_delay_usec delays every elapse by one fixed part of it
         * derived from the timer's identity (systemd's FixedRandomDelay=) instead of a fresh one.
         */
        char calendar[TIMERD_CALENDAR_MAX + 1];
        char timezone[TIMERD_TIMEZONE_MAX];
        bool fixed_random_delay;
};

/* A once, transient, notify, monotonic declaration with no cadence, that catches up, with
 * libtimerd's default handover (TIMERD_HANDOVER_DEFAULT); a calendar one is on the realtime
 * clock. */
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
                TIMERD_START_DEFAULT, /* once: inactive; others: now + cadence */
                TIMERD_START_AT,      /* usec: absolute on the timer's clock */
                TIMERD_START_AFTER,   /* usec: relative to now */
        } kind;
        uint64_t usec;
};

/* Owner: the uid whose timer is meant; TIMERD_OWNER_SELF for the connection's (the caller's own
 * unless timerd_set_owner() names another). Only uid 0 may name another owner. */
#define TIMERD_OWNER_SELF UINT32_MAX
/* Room for the normalized forms of a calendar timer's expressions. */
#define TIMERD_CALENDAR_NORMALIZED_MAX 4096

/*
 * Act on another uid's timers, as an administrator: from now on every io.timerd.Timer call on t
 * (register, reconcile, control, get, list, wait, complete, sleep; asynchronous and
 * timerd_call_raw() ones too) names `owner`, unless it names an owner itself. The service allows
 * this to uid 0 only: for anyone else those calls fail with -TIMERD_E_PERMISSION_DENIED (naming
 * one's own uid is allowed). TIMERD_OWNER_SELF goes back to the caller's own timers. It stays
 * across timerd_reconnect(). Returns 0, or -EINVAL when t is NULL.
 */
int timerd_set_owner(struct timerd *t, uint32_t owner);

/*
 * Declare a timer. `start` NULL is TIMERD_START_DEFAULT. With `replace`, an existing timer of the
 * name is replaced (a new generation); without, it is -TIMERD_E_ALREADY_REGISTERED.
 */
int timerd_register(struct timerd *t, const char *name, const struct timerd_declaration *d,
                    const struct timerd_start *start, bool replace, struct timerd_claim *ret);

/*
 * Make sure the timer exists as declared, idempotently: the call a restarting client makes for
 * its retained timers. *ret_created (may be NULL) tells whether it was missing.
 * -TIMERD_E_RECONCILIATION_CONFLICT when it exists with another declaration. deadline_usec
 * (absolute on the timer's clock) is the wake-up for TIMERD_DESIRED_EXACT; for
 * TIMERD_DESIRED_SCHEDULED (> 0) the one to set when the timer has none, which a once timer needs
 * (without: -TIMERD_E_INVALID_SCHEDULE, reason "deadline_missing"; a recurring one starts at
 * now + cadence).
 */
int timerd_reconcile(struct timerd *t, const char *name, const struct timerd_declaration *d,
                     enum timerd_desired desired, uint64_t deadline_usec, struct timerd_claim *ret,
                     bool *ret_created);

/*
 * Control calls act through a claim, or through the token of an active run (pass NULL for the
 * other). `start` kind AT or AFTER.
 */
int timerd_schedule(struct timerd *t, const struct timerd_claim *claim,
                    const struct timerd_token *token, const struct timerd_start *start);
/* start NULL: disarm. cadence_usec 0: keep. Returns the previous remaining time and cadence.
 * Like setitimer(2) it changes the live schedule (timerd_timer.live_cadence_usec), not the
 * declaration: a later timerd_reconcile() with the declaration matches and puts its cadence back,
 * as a replacing timerd_register() does. */
int timerd_reschedule(struct timerd *t, const struct timerd_claim *claim,
                      const struct timerd_token *token, const struct timerd_start *start,
                      uint64_t cadence_usec, uint64_t *ret_remaining_usec,
                      uint64_t *ret_cadence_usec);
/* Clear the next firing; the declaration stays. */
int timerd_cancel(struct timerd *t, const struct timerd_claim *claim,
                  const struct timerd_token *token);
/* Watchdogs: push the deadline out to now + cadence; *ret_next_usec (may be NULL) gets it. */
int timerd_kick(struct timerd *t, const struct timerd_claim *claim,
                const struct timerd_token *token, uint64_t *ret_next_usec);
int timerd_unregister(struct timerd *t, const struct timerd_claim *claim);

/* How a run's program ended: exit TIMERD_EXIT_NONE when not reported. */
struct timerd_run_result {
        enum timerd_exit exit;
        uint32_t code; /* the exit status or signal number, 0 to 255 */
};

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
        uint64_t overruns; /* periods missed in all, as of the call */
        /* The cadence the live schedule follows: timerd_reschedule()'s, else the declared one. */
        uint64_t live_cadence_usec;
        bool has_last_start;
        uint64_t last_start_usec;
        bool has_last_finish;
        uint64_t last_finish_usec;
        enum timerd_outcome last_outcome;
        uint64_t last_duration_usec;
        uint64_t total_duration_usec;
        struct timerd_run_result last_result; /* as the last run's Complete reported it */
        /* Calendar timers: each expression in normalized form (as `systemd-analyze calendar`
         * prints it), one per line, in the order of declaration.calendar. */
        char calendar_normalized[TIMERD_CALENDAR_NORMALIZED_MAX];
        bool last_catch_up; /* the last run was a catch-up (see struct timerd_firing) */
};

/* owner TIMERD_OWNER_SELF for the caller's own. */
int timerd_get(struct timerd *t, const char *name, uint32_t owner, struct timerd_timer *ret);
/*
 * The caller's timers in name order (all owners, by owner then name, when `all` and the caller is
 * uid 0). Returns the count and a malloc'd array in *ret (free it). The service answers a page at
 * a time; this follows the pages to the end, so it holds every timer at once: with very many,
 * timerd_list_page() walks them with bounded memory.
 */
long timerd_list(struct timerd *t, uint32_t owner, bool all, struct timerd_timer **ret);

/*
 * Where a paged listing stands. Zero it to start at the first timer (or set after_owner and
 * after_name, with has_after, to start after that place); each page moves it on, and sets done
 * once the last page is read.
 */
struct timerd_list_cursor {
        bool has_after;
        uint32_t after_owner;
        char after_name[TIMERD_NAME_MAX + 1];
        bool done;
};

/*
 * The next page of timerd_list(): up to `limit` timers after the cursor (0, or more than the
 * service's list-page setting: that many, 1000 by default), then moves the cursor past them. A
 * cursor whose timer was removed meanwhile still holds its place. Returns the count (0 once done)
 * and a malloc'd array in *ret (free it; NULL when empty); on an error the cursor stays.
 *
 *         struct timerd_list_cursor c = {0};
 *         while (!c.done) {
 *                 long n = timerd_list_page(t, TIMERD_OWNER_SELF, false, 0, &c, &timers);
 *                 ...
 *         }
 */
long timerd_list_page(struct timerd *t, uint32_t owner, bool all, size_t limit,
                      struct timerd_list_cursor *cursor, struct timerd_timer **ret);
/*
 * timerd_list_page() for tools that print JSON: the page's timers as the service sent them, a
 * JSON array's text in *ret_json (malloc'd, free it; "[]" for an empty page, NULL once the cursor
 * was done already). The cursor, the count returned and the errors are timerd_list_page()'s; the
 * timers are not decoded, so an unknown field passes through.
 */
long timerd_list_page_json(struct timerd *t, uint32_t owner, bool all, size_t limit,
                           struct timerd_list_cursor *cursor, char **ret_json);

struct timerd_firing {
        struct timerd_token token;
        enum timerd_clock clock;
        uint64_t deadline_usec;
        /* When the service started the run: with a handover (libtimerd's default) up to
         * handover_usec before deadline_usec, though the firing is returned at the deadline. */
        uint64_t fired_usec;
        /* Periods missed since the previous firing was handed over, as timer_getoverrun(2);
         * struct timerd_timer's overruns is the total. */
        uint64_t overruns;
        /* A catch-up: its deadline passed while the service was down (a retained timer with
         * catch_up), and it fired once at restore. */
        bool catch_up;
};

/*
 * Block for the next firing of one of the caller's notify timers (among `names` if n_names > 0).
 * timeout_usec 0: no timeout (-TIMERD_E_TIMEOUT otherwise when it passes). Each firing starts a
 * run, which the caller ends with timerd_complete().
 *
 * A firing is returned at or after its deadline_usec on its clock (the alarm clocks count like
 * boottime and realtime): one handed over early (handover_usec) is held until then on a timerfd,
 * through signals. The timeout bounds the wait for the firing, not that hold: a firing handed
 * over just before the timeout is returned at its deadline, up to its handover later.
 */
int timerd_wait(struct timerd *t, const char *const *names, size_t n_names, uint64_t timeout_usec,
                struct timerd_firing *ret);

/*
 * A stream of firings on this connection: start it once, then read each firing with
 * timerd_wait_next(), which holds an early firing until its deadline like timerd_wait(); firings
 * come in the order the service handed them over, so with different handovers on one stream a
 * firing may wait behind one due later. While a stream is open the connection is used only for
 * it. The stream ends
 * with an error (-TIMERD_E_SHUTTING_DOWN when the service stops; -TIMERD_E_PROTOCOL for a firing
 * that cannot be decoded, which also breaks the connection); timerd_wait_next() returns -EINVAL
 * once it has ended.
 */
int timerd_wait_stream(struct timerd *t, const char *const *names, size_t n_names);
int timerd_wait_next(struct timerd *t, struct timerd_firing *ret);

/* End a run. duration_usec 0: not measured. */
int timerd_complete(struct timerd *t, const struct timerd_token *token, enum timerd_outcome outcome,
                    enum timerd_directive directive, uint64_t duration_usec);
/*
 * timerd_complete() for a run that started a program: how it ended is kept with the run (the
 * timer's last_result; across restarts for a retained timer). result NULL: as timerd_complete().
 */
int timerd_complete_result(struct timerd *t, const struct timerd_token *token,
                           enum timerd_outcome outcome, enum timerd_directive directive,
                           uint64_t duration_usec, const struct timerd_run_result *result);

/*
 * Interruptible sleeps. timerd_sleep() parks until a deadline passes; an alarm timer (delivery
 * TIMERD_DELIVERY_ALARM) registered on the same connection that fires meanwhile ends it early
 * with an *observation*: a signal without signals. The observation is then finished: RESUME
 * gives a single-use ticket that timerd_resume() parks again with the original deadline;
 * INTERRUPT ends the sleep with the time that was left (like EINTR from nanosleep); TERMINATE
 * ends it. An observation must be finished before the connection sleeps again.
 */
struct timerd_continuation {
        uint64_t epoch;
        uint64_t nonce;
        uint64_t cycle;
};

struct timerd_ticket {
        struct timerd_continuation continuation;
        uint64_t nonce;
};

struct timerd_observation {
        struct timerd_continuation continuation;
        uint64_t lease;
        bool has_remaining;
        uint64_t remaining_usec;         /* to the deadline, when the sleep had one */
        char timer[TIMERD_NAME_MAX + 1]; /* the alarm timer that fired */
        uint64_t alarms;                 /* firings it stands for */
};

struct timerd_sleep_result {
        bool elapsed;                          /* the deadline passed */
        struct timerd_observation observation; /* when not elapsed */
};

enum timerd_finish_action {
        TIMERD_FINISH_RESUME,
        TIMERD_FINISH_INTERRUPT,
        TIMERD_FINISH_TERMINATE,
        TIMERD_FINISH_MAX,
        TIMERD_FINISH_INVALID = -1,
};

struct timerd_finish_result {
        bool has_ticket; /* RESUME */
        struct timerd_ticket ticket;
        bool has_remaining; /* INTERRUPT of a sleep with a deadline */
        uint64_t remaining_usec;
};

/*
 * Sleep on `clock` until `until` (kind AT: absolute on the clock; AFTER: from now). `until` NULL
 * (or kind DEFAULT): until an alarm fires.
 */
int timerd_sleep(struct timerd *t, enum timerd_clock clock, const struct timerd_start *until,
                 struct timerd_sleep_result *ret);
int timerd_finish(struct timerd *t, const struct timerd_observation *observation,
                  enum timerd_finish_action action, struct timerd_finish_result *ret);
int timerd_resume(struct timerd *t, const struct timerd_ticket *ticket,
                  struct timerd_sleep_result *ret);

struct timerd_status {
        char epoch[128]; /* differs after every start of the service */
        char version[32];
        char backend[32];
        char backend_reason[128];
        char store[160]; /* "journal", or "degraded: <why>" */
        uint64_t pid;
        uint64_t uptime_usec;
        uint64_t timers, scheduled, running, failed, pending;
        uint64_t connections, waiters;
        uint64_t clock_changes, iterations, wakeups, firings, overruns, stale_expiries;
        uint64_t signals_sent, signals_failed;
        uint64_t slowest_iteration_usec;
        /* Firing lateness the service caused (from when a run was owed to its start), over
         * lateness_samples firings; those already due when scheduled are lateness_past_due, not
         * measured. p99 only from 100 samples on (has_lateness_p99). */
        uint64_t lateness_samples, lateness_p50_usec, lateness_p99_usec, lateness_max_usec;
        /* What the service can do, space-separated ("wake_alarm signal"); empty when it does not
         * say. */
        char capabilities[256];
        /* true for uid 0: the counts are the whole service's. false for any other caller: timers
         * … waiters are its own, and the activity figures (iterations … lateness_max_usec) are
         * not told (0). */
        bool host_wide;
        uint64_t lateness_past_due;
        bool has_lateness_p99;
        /* Loop lag: from a monotonic kernel wake-up being due to the loop running it, over
         * loop_lag_samples wake-ups; p99 only from 100 samples on (has_loop_lag_p99). */
        bool has_loop_lag_p99;
        uint64_t loop_lag_samples, loop_lag_p50_usec, loop_lag_p99_usec, loop_lag_max_usec;
};

int timerd_status(struct timerd *t, struct timerd_status *ret);

/*
 * Delivery signal without boilerplate. timerd_signal_fd() blocks the given signals in the calling
 * thread and returns a signalfd for them (non-blocking, close-on-exec): put it in a poll set.
 * timerd_signal_read() takes one signal from it: 1 and *ret when a timer's signal was read, 0
 * when none is pending, -errno. A signal that timerd did not send (not SI_QUEUE) is read and
 * reported with generation 0.
 *
 * The signal's si_value carries the timer's claim generation. A handler that reads the POSIX
 * si_value.sival_int (32 bits) gets timerd_signal_int(generation): the service keeps that
 * distinct among the live timers of an owner (unless 2^32 registrations apart), also across
 * restarts, when generations are about 1.8e15.
 */
int timerd_signal_fd(const int *signals, size_t n_signals);

static inline int timerd_signal_int(uint64_t generation)
{
        return (int)(uint32_t)generation;
}

struct timerd_signal {
        int signo;
        uint64_t generation; /* the timer's claim generation: which timer fired */
        int32_t sender_pid;  /* the service */
};

int timerd_signal_read(int fd, struct timerd_signal *ret);

/*
 * Overruns whatever the service can see. A firing whose signal would wait behind the previous one
 * not yet taken is an overrun (Timer.overruns), never a second signal. Without these calls the
 * service tells by reading the process's /proc/PID/status, which the shipped unit hides from it
 * (ProtectProc=invisible): there every firing is sent, a real-time signal queues, a standard one
 * merges with the pending one, and no overrun is counted.
 *
 * timerd_signals_acknowledge() declares that this process reports each signal it takes: call it
 * on the connection that registers (or reconciles) the signal timers, before that, and again
 * after a timerd_reconnect(). Then report each signal read with timerd_signal_taken() on that
 * connection: until then the signal is outstanding and later firings of the same signal number
 * are overruns. A signal that is not outstanding (reported twice, not the service's, another
 * connection's) is -TIMERD_E_SIGNAL_NOT_OUTSTANDING and changes nothing.
 */
int timerd_signals_acknowledge(struct timerd *t);
int timerd_signal_taken(struct timerd *t, const struct timerd_signal *signal);

/* Registry events, as timerctl monitor shows them. */
enum timerd_event_kind {
        TIMERD_EVENT_REGISTERED,
        TIMERD_EVENT_RECONCILED,
        TIMERD_EVENT_SCHEDULED,
        TIMERD_EVENT_RESCHEDULED,
        TIMERD_EVENT_CANCELLED,
        TIMERD_EVENT_KICKED,
        TIMERD_EVENT_UNREGISTERED,
        TIMERD_EVENT_FIRED,
        TIMERD_EVENT_COMPLETED,
        TIMERD_EVENT_REMOVED, /* a transient timer whose connection closed */
        TIMERD_EVENT_MAX,
        TIMERD_EVENT_INVALID = -1,
};

struct timerd_event {
        enum timerd_event_kind kind;
        uint32_t owner;
        char name[TIMERD_NAME_MAX + 1];
        bool has_run;
        uint64_t run; /* fired, completed */
        bool has_state;
        enum timerd_state state; /* after the event; absent once the timer is gone */
        uint64_t realtime_usec;  /* when it happened, on the wall clock */
};

/* "registered", …; NULL for a value out of range. */
const char *timerd_event_kind_to_string(enum timerd_event_kind kind);

/*
 * A stream of registry events on this connection (the caller's own timers; every owner's with
 * `all`, for uid 0): start it once, then read each event with timerd_subscribe_next(). Like a
 * Wait stream, it occupies the connection.
 */
int timerd_subscribe(struct timerd *t, bool all);
int timerd_subscribe_next(struct timerd *t, struct timerd_event *ret);

/*
 * Any varlink call, for tools: parameters_json is a JSON object text (NULL for {}). On success
 * *ret_reply_json gets the reply's parameters as malloc'd JSON text. A varlink error returns its
 * typed code and leaves the error's parameters in *ret_reply_json. Answers come as the service
 * sent them: a Wait's firing is not held until its deadline.
 */
int timerd_call_raw(struct timerd *t, const char *method, const char *parameters_json,
                    char **ret_reply_json);

/*
 * Asynchronous mode.
 *
 * Put timerd_get_fd() into the event loop, watching timerd_get_events() (POLLIN, plus POLLOUT
 * while requests wait to be written) level-triggered (poll(2), epoll without EPOLLET, sd-event's
 * default); ask for the events again after each timerd_process() and after each *_async() call,
 * since both change what is buffered. When the fd is ready (or at any time: nothing blocks), call
 * timerd_process(): it writes what it can, reads what has arrived and runs the callbacks of the
 * answers, in the order of the calls.
 *
 * A call made while no other is in flight is written at once. Calls made behind others wait in
 * the buffer (POLLOUT) until the next timerd_process(), or until 64 KiB of them are buffered, so
 * that one write carries them all; those made from callbacks go out when timerd_process() has
 * run them. The order is kept.
 *
 * Every *_async() call queues its request (nothing is written that would block) and returns 0,
 * or fails at once without calling the callback: -EBUSY after a stream, -ENOBUFS when 16 MiB of
 * requests wait to be written, -TIMERD_E_DISCONNECTED on a broken connection. Otherwise the
 * callback runs exactly once (for a stream: once per answer) from timerd_process() or
 * timerd_reconnect(), unless timerd_close() comes first. It receives error 0 with the decoded
 * answer, or a negative error and NULL: an error the service answered, -TIMERD_E_PROTOCOL for
 * an answer that breaks the protocol, -TIMERD_E_DISCONNECTED when the connection broke first.
 * Decoded answers are valid during the callback only. From a callback, new calls may be made,
 * and t may be closed.
 */

/*
 * The connection's file descriptor, also once broken (remove it from the loop, then close t). It
 * is left blocking, so that a blocking call waits for its answer in the read that takes it; every
 * other read and write asks not to block. A loop may set O_NONBLOCK on it (blocking calls then
 * poll before they read).
 */
int timerd_get_fd(const struct timerd *t);
/* poll.h's POLLIN, | POLLOUT while output is buffered; 0 once broken. */
int timerd_get_events(const struct timerd *t);
/*
 * Firings that came before their deadline (handover_usec) are held, and timerd_process() hands
 * them to their callbacks once their deadline_usec has come on their clock: the event loop must
 * then wake up without the fd being ready. This is when: the absolute CLOCK_MONOTONIC time in
 * microseconds (like sd_bus_get_timeout(); round up if the loop's timeout is coarser), and 1; or
 * 0 and UINT64_MAX when nothing is held. Ask again after each timerd_process().
 * A held firing goes to its callback at once instead when the connection breaks (its run ends
 * with it) or, for a stream, before the error that ends the stream; timerd_close() drops it.
 */
int timerd_get_timeout(const struct timerd *t, uint64_t *ret_usec);
/*
 * Write, read and dispatch without blocking, and deliver the held firings that are due. Returns
 * the number of answers delivered, or -TIMERD_E_DISCONNECTED once the connection broke (the
 * callbacks of the calls in flight have then run with that error), -EBUSY from a callback or
 * while a blocking stream is open.
 */
int timerd_process(struct timerd *t);
/* Calls whose answers (or, for a stream, whose end) are still to come, and held firings. */
size_t timerd_in_flight(const struct timerd *t);

/* Ask for a stream of answers: each comes to the callback; the last one has continues false. */
#define TIMERD_CALL_MORE (UINT64_C(1) << 0)

/*
 * Any method, asynchronously: parameters_json as for timerd_call_raw(). The callback gets the
 * answer's parameters (or the error's) as JSON text, NULL when the connection broke.
 */
typedef void (*timerd_reply_callback)(struct timerd *t, int error, const char *parameters_json,
                                      bool continues, void *userdata);
int timerd_call_async(struct timerd *t, const char *method, const char *parameters_json,
                      uint64_t flags, timerd_reply_callback callback, void *userdata);

/* Typed asynchronous calls; each works like its blocking sibling. */
typedef void (*timerd_done_callback)(struct timerd *t, int error, void *userdata);
typedef void (*timerd_claim_callback)(struct timerd *t, int error, const struct timerd_claim *claim,
                                      void *userdata);
typedef void (*timerd_reconcile_callback)(struct timerd *t, int error,
                                          const struct timerd_claim *claim, bool created,
                                          void *userdata);
typedef void (*timerd_kick_callback)(struct timerd *t, int error, uint64_t next_usec,
                                     void *userdata);
typedef void (*timerd_firing_callback)(struct timerd *t, int error,
                                       const struct timerd_firing *firing, void *userdata);
typedef void (*timerd_event_callback)(struct timerd *t, int error, const struct timerd_event *event,
                                      void *userdata);
typedef void (*timerd_status_callback)(struct timerd *t, int error,
                                       const struct timerd_status *status, void *userdata);

int timerd_register_async(struct timerd *t, const char *name, const struct timerd_declaration *d,
                          const struct timerd_start *start, bool replace,
                          timerd_claim_callback callback, void *userdata);
int timerd_reconcile_async(struct timerd *t, const char *name, const struct timerd_declaration *d,
                           enum timerd_desired desired, uint64_t deadline_usec,
                           timerd_reconcile_callback callback, void *userdata);
int timerd_cancel_async(struct timerd *t, const struct timerd_claim *claim,
                        const struct timerd_token *token, timerd_done_callback callback,
                        void *userdata);
int timerd_kick_async(struct timerd *t, const struct timerd_claim *claim,
                      const struct timerd_token *token, timerd_kick_callback callback,
                      void *userdata);
int timerd_unregister_async(struct timerd *t, const struct timerd_claim *claim,
                            timerd_done_callback callback, void *userdata);
int timerd_signal_taken_async(struct timerd *t, const struct timerd_signal *signal,
                              timerd_done_callback callback, void *userdata);
int timerd_complete_async(struct timerd *t, const struct timerd_token *token,
                          enum timerd_outcome outcome, enum timerd_directive directive,
                          uint64_t duration_usec, timerd_done_callback callback, void *userdata);
int timerd_status_async(struct timerd *t, timerd_status_callback callback, void *userdata);
/* One firing, at its deadline: an early one is held (timerd_get_timeout()). */
int timerd_wait_async(struct timerd *t, const char *const *names, size_t n_names,
                      uint64_t timeout_usec, timerd_firing_callback callback, void *userdata);
/*
 * Streams: the callback runs once per firing (event), and a last time with an error when the
 * stream ends (timerd ends its streams only with an error). A firing that cannot be decoded
 * ends the stream with -TIMERD_E_PROTOCOL and breaks the connection. Firings are held until
 * their deadline like timerd_wait_async()'s, so they reach the callback in deadline order.
 */
int timerd_wait_stream_async(struct timerd *t, const char *const *names, size_t n_names,
                             timerd_firing_callback callback, void *userdata);
int timerd_subscribe_async(struct timerd *t, bool all, timerd_event_callback callback,
                           void *userdata);

#ifdef __cplusplus
}
#endif
