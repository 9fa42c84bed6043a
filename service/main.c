/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * timerd's lifecycle: setup → Ready → loop → teardown. Ready is announced only after everything
 * is declared; teardown runs whatever ended the loop, answers every parked request, and closes
 * within the grace deadline.
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "service/api.h"
#include "service/io/backend.h"
#include "service/io/caps.h"
#include "service/io/clock.h"
#include "service/events.h"
#include "service/io/listener.h"
#include "service/io/log.h"
#include "service/core/parked.h"
#include "service/io/peer.h"
#include "service/io/sd.h"
#include "service/zones.h"
#include "service/accounts.h"
#include "service/store.h"
#include "service/service.h"
#include "signalfd/sigfd.h"

/* A tzdata update or a new local zone (the administrator's SIGHUP says so): every calendar
 * timer's next elapse is computed again in the zones as they are now. */
static void reload_zones(struct service *s)
{
        struct td_now now;

        zones_reload(s->zones);
        if (service_now(s, &now) < 0)
                return;
        registry_reevaluate_calendars(s->registry, &now);
        log_info("Time zones reloaded; re-evaluating the calendar timers");
}

/* A zone file in use, /etc/localtime or /etc/timezone changed (a tzdata update, timedatectl). */
static void on_zone_files(struct loop_watch *w, int fd, uint32_t events, void *userdata)
{
        struct service *s = userdata;
        int r;
        (void)w;
        (void)fd;
        (void)events;

        service_note_work(s);
        r = zones_changed(s->zones);
        if (r < 0) {
                /* Not fatal: SIGHUP still reloads them. */
                log_errno(r, "Cannot read the zone files' changes; no longer watching them");
                loop_unwatch(s->zones_watch);
                s->zones_watch = NULL;
        } else if (r > 0) {
                log_info("The time zone files or the local zone changed");
                reload_zones(s);
        }
}

static void on_signal(struct loop_watch *w, int fd, uint32_t events, void *userdata)
{
        struct service *s = userdata;
        (void)w;
        (void)events;

        service_note_work(s);
        for (;;) {
                int signo = sigfd_read(fd);
                if (signo < 0) {
                        if (signo != -EAGAIN) {
                                log_errno(signo, "Cannot read signals");
                                service_exit(s, EXIT_REASON_BACKEND_FAULT);
                        }
                        return;
                }
                if (signo == SIGTERM || signo == SIGINT) {
                        log_info("Received %s, shutting down", strsignal(signo));
                        service_exit(s, EXIT_REASON_SHUTDOWN_REQUESTED);
                } else {
                        systemd_notify_reloading();
                        log_info("Received %s, reloading the configuration and the time zones",
                                 strsignal(signo));
                        if (config_reload(&s->config, s->argc, s->argv) == 0) {
                                log_set_max_level(s->config.log_level);
                                s->lifecycle.grace_usec = s->config.shutdown_grace_usec;
                        }
                        accounts_load(s);
                        reload_zones(s);
                        systemd_notify_reloaded();
                }
        }
}

/* An identity for this start: boot id, start time and pid. Clients compare it to see a restart. */
static void make_epoch(struct service *s)
{
        char boot_id[64] = "unknown";
        uint64_t realtime = 0;
        int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
        if (fd >= 0) {
                ssize_t n = read(fd, boot_id, sizeof(boot_id) - 1);
                boot_id[n > 0 ? n : 0] = '\0';
                boot_id[strcspn(boot_id, "\n")] = '\0';
                close(fd);
        }
        (void)clock_read(TIMERD_CLOCK_REALTIME, &realtime);
        snprintf(s->epoch, sizeof(s->epoch), "%.36s-%" PRIu64 "-%d", boot_id, realtime,
                 (int)getpid());
}

/* Before privileges are dropped, since binding may need them; watched once the loop exists. */
static int take_socket(struct service *s)
{
        int fd;
        int r = systemd_listen_socket(&fd);
        if (r < 0)
                return r;
        if (r > 0)
                log_info("Listening on the socket passed by systemd");
        else {
                r = listener_bind(s->config.socket_path, &fd);
                if (r < 0)
                        return log_errno(r, "Cannot listen on %s", s->config.socket_path);
                s->listen.bound_here = true;
                log_info("Listening on %s", s->config.socket_path);
        }
        s->listen.fd = fd;
        return 0;
}

static void summarize(const struct service *s, struct systemd_summary *ret)
{
        struct registry_stats rs;

        registry_get_stats(s->registry, &rs);
        *ret = (struct systemd_summary){
            .timers = rs.timers,
            .waiters = api_waiters(s),
            .backend = loop_backend_to_string(loop_backend(s->loop)),
        };
}

static int setup_privileges(struct service *s)
{
        if (mkdir(s->config.state_dir, 0700) < 0 && errno != EEXIST)
                return log_errno(-errno, "Cannot create the state directory %s",
                                 s->config.state_dir);
        return caps_drop(s->config.user, s->config.state_dir);
}

static int setup_signals(struct service *s)
{
        s->signal_fd = sigfd_open();
        if (s->signal_fd < 0)
                return log_errno(s->signal_fd, "Cannot set up signal handling");
        return 0;
}

static int setup_backend(struct service *s)
{
        struct loop_callbacks cb;
        int r;

        service_loop_callbacks(s, &cb);
        r = backend_open(s->config.backend, &cb, &s->loop, s->backend_reason,
                         sizeof(s->backend_reason));
        if (r < 0)
                return log_errno(r, "No usable event loop backend (%s)", s->backend_reason);
        log_info("Backend %s%s%s", loop_backend_to_string(loop_backend(s->loop)),
                 s->backend_reason[0] ? ": " : "", s->backend_reason);
        /* After the privileges step: what is probed is what the service may do. */
        /* Virtual alarm clocks arm no kernel timer: they need no capability. */
        s->alarm_clocks = s->clock.virtual || clock_alarm_available();
        if (!s->alarm_clocks)
                log_info("Alarm clocks unavailable (no CAP_WAKE_ALARM)");
        r = loop_watch(s->loop, s->signal_fd, LOOP_IN, on_signal, s, &s->signal_watch);
        if (r < 0)
                return log_errno(r, "Cannot watch signals");
        r = service_start_listening(s, s->listen.fd);
        if (r < 0)
                return log_errno(r, "Cannot watch the listening socket");
        return 0;
}

static int setup_core(struct service *s)
{
        struct registry_config rc = {
            .max_timers = s->config.max_timers,
            .reserved_timers = s->config.reserved_timers,
            .max_timers_per_owner = s->config.max_timers_per_owner,
            .min_cadence_usec = s->config.min_cadence_usec,
            .first_generation = 1,
            .first_handle_generation = 1,
            .ignore_handover = s->clock.virtual,
        };
        struct parked_config pc = {
            .max_per_session = s->config.max_parked_per_connection,
            .max_per_owner = s->config.max_parked_per_owner,
            .max_names = 64,
            .epoch = s->started_usec,
            .first_nonce = 1,
            .first_cycle = 1,
        };
        int r;

        /* Only spreads calendar elapses: without entropy yet, the start time will do. */
        if (getrandom(&rc.random_seed, sizeof(rc.random_seed), GRND_NONBLOCK) !=
            (ssize_t)sizeof(rc.random_seed))
                rc.random_seed = s->started_usec;
        r = registry_new(&rc, &s->registry);
        if (r < 0)
                return log_errno(r, "Cannot create the registry");
        r = zones_new(&s->zones);
        if (r < 0)
                return log_errno(r, "Cannot load the local time zone");
        if (zones_watch_fd(s->zones) < 0)
                log_info("Cannot watch the time zone files; SIGHUP reloads them");
        else if ((r = loop_watch(s->loop, zones_watch_fd(s->zones), LOOP_IN, on_zone_files, s,
                                 &s->zones_watch)) < 0)
                return log_errno(r, "Cannot watch the time zone files");
        r = parked_new(&pc, &s->parked);
        if (r < 0)
                return log_errno(r, "Cannot create the parked-request queue");
        r = intent_queue_init(&s->intents, s->config.max_intents);
        if (r < 0)
                return log_errno(r, "Cannot create the intent queue");
        accounts_load(s);
        return 0;
}

static int setup_store(struct service *s)
{
        int r = store_open(s);
        /* The runs the restore dispatched go to whoever takes them. */
        if (r >= 0)
                api_hand_over(s);
        return r;
}

/* Once the signals step blocked SIGTERM, nothing reads it until the loop runs: start-up looks
 * for it between steps (and the store step during a long replay). */
static bool stop_requested(struct service *s, const char *before)
{
        if (!sigfd_stop_pending())
                return false;
        log_info("Stop requested during start-up, before %s", before);
        lifecycle_exit(&s->lifecycle, EXIT_REASON_SHUTDOWN_REQUESTED);
        return true;
}

/* Each step in order; the first failure stops setup (teardown still runs). */
static bool setup(struct service *s)
{
        static int (*const steps[LIFECYCLE_STEP_MAX])(struct service * s) = {
            [LIFECYCLE_STEP_SOCKET] = take_socket,
            [LIFECYCLE_STEP_PRIVILEGES] = setup_privileges,
            [LIFECYCLE_STEP_SIGNALS] = setup_signals,
            [LIFECYCLE_STEP_BACKEND] = setup_backend,
            [LIFECYCLE_STEP_CORE] = setup_core,
            [LIFECYCLE_STEP_STORE] = setup_store,
        };

        if (clock_read(TIMERD_CLOCK_MONOTONIC, &s->started_usec) < 0) {
                log_error("Cannot read the monotonic clock");
                lifecycle_exit(&s->lifecycle, EXIT_REASON_CLOCK_FAULT);
                return false;
        }
        make_epoch(s);
        for (int step = 0; step < LIFECYCLE_STEP_MAX; step++) {
                int r;

                if (step > LIFECYCLE_STEP_SIGNALS &&
                    stop_requested(s, lifecycle_step_to_string((enum lifecycle_step)step)))
                        return false;
                r = steps[step](s);
                lifecycle_step_done(&s->lifecycle, (enum lifecycle_step)step, r);
                if (r < 0 && s->lifecycle.reason == EXIT_REASON_SHUTDOWN_REQUESTED)
                        return false;
                if (r < 0) {
                        log_error("Start-up failed at step %s",
                                  lifecycle_step_to_string((enum lifecycle_step)step));
                        return false;
                }
        }
        if (stop_requested(s, "ready"))
                return false;
        return lifecycle_ready(&s->lifecycle);
}

/* Write what can be written to every peer, until the grace deadline. */
static void flush_peers(struct service *s)
{
        uint64_t now;

        for (;;) {
                bool pending = false;
                struct list_node *n;
                list_for_each (n, &s->peers.live) {
                        struct peer *p = list_entry(n, struct peer, node);
                        /* What went by loop_send() may have filled the socket. */
                        if ((peer_has_output(p) || p->sending > 0) && peer_flush_now(p) == -EAGAIN)
                                pending = true;
                }
                if (!pending)
                        return;
                uint64_t left = clock_read(TIMERD_CLOCK_MONOTONIC, &now) < 0
                                    ? 0
                                    : lifecycle_grace_left(&s->lifecycle, now);
                if (left == 0) {
                        log_warning("Grace period over: closing connections with unsent replies");
                        return;
                }
                if (!s->loop || loop_run_once(s->loop, (int64_t)left) < 0)
                        return;
        }
}

static void teardown(struct service *s, struct systemd_notifier *notifier)
{
        uint64_t now = 0;

        systemd_notify_stopping();
        (void)clock_read(TIMERD_CLOCK_MONOTONIC, &now);
        lifecycle_begin_teardown(&s->lifecycle, now);
        if (s->listen.watch)
                service_stop_listening(s);
        if (s->parked)
                api_shutdown_parked(s);
        events_shutdown(s);
        flush_peers(s);
        while (!list_empty(&s->peers.live))
                service_drop_peer(s, list_entry(s->peers.live.next, struct peer, node));
        if (s->registry && s->parked)
                service_retire_closed(s);
        service_free_closed_peers(s);
        intent_queue_done(&s->intents);
        loop_unwatch(s->signal_watch);
        loop_unwatch(s->zones_watch);
        if (s->listen.fd >= 0)
                close(s->listen.fd);
        if (s->listen.bound_here)
                listener_unlink(s->config.socket_path);
        store_close(s);
        parked_free(s->parked);
        registry_free(s->registry);
        accounts_free(s);
        zones_free(s->zones);
        systemd_notifier_free(notifier);
        loop_free(s->loop);
        if (s->signal_fd >= 0)
                close(s->signal_fd);
        lifecycle_end(&s->lifecycle);
}

int main(int argc, char **argv)
{
        struct service s = {.listen.fd = -1, .signal_fd = -1, .argc = argc, .argv = argv};
        struct systemd_notifier *notifier = NULL;
        struct systemd_summary summary;

        service_peers_init(&s.peers);
        config_defaults(&s.config);
        switch (config_parse_args(&s.config, argc, argv)) {
        case CONFIG_EXIT_OK:
                return EXIT_SUCCESS;
        case CONFIG_EXIT_USAGE:
                return 2;
        case CONFIG_RUN:
                break;
        }
        log_set_max_level(s.config.log_level);
        clock_source_init(&s.clock, strcmp(s.config.clock, "virtual") == 0);
        lifecycle_init(&s.lifecycle, s.config.shutdown_grace_usec);

        if (setup(&s) && systemd_notifier_new(s.loop, &notifier) >= 0) {
                summarize(&s, &summary);
                systemd_notify_ready(notifier, &summary);
                log_info("timerd %s ready (epoch %s)", TIMERD_VERSION, s.epoch);
                while (lifecycle_running(&s.lifecycle)) {
                        service_iterate(&s, -1);
                        summarize(&s, &summary);
                        systemd_notify_status(notifier, &summary);
                }
        } else
                lifecycle_exit(&s.lifecycle, EXIT_REASON_SETUP_FAILED);

        log_info("Stopping: %s", exit_reason_to_string(s.lifecycle.reason));
        teardown(&s, notifier);
        return lifecycle_exit_status(&s.lifecycle);
}
