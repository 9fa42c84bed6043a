/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "service/io/sd.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include "service/io/clock.h"
#include "service/io/log.h"

#define STATUS_INTERVAL_USEC 1000000u

int systemd_listen_socket(int *ret_fd)
{
        char **names = NULL;
        int fd = -1, r;

        /* Unset the environment: the fds are ours now, nothing else may take them. */
        int n = sd_listen_fds_with_names(1, &names);
        if (n < 0)
                return log_errno(n, "Cannot take the sockets systemd passed");
        for (int i = 0; i < n; i++) {
                int passed = SD_LISTEN_FDS_START + i;
                const char *name = names && names[i] ? names[i] : "unknown";
                if (fd < 0 && strcmp(name, SYSTEMD_SOCKET_NAME) == 0) {
                        fd = passed;
                        continue;
                }
                log_warning("Closing the socket \"%s\" systemd passed: only the first \"%s\" is "
                            "served",
                            name, SYSTEMD_SOCKET_NAME);
                close(passed);
        }
        for (int i = 0; names && names[i]; i++)
                free(names[i]);
        free(names);
        if (n == 0)
                return 0;
        if (fd < 0) {
                log_error("systemd passed %d socket%s, none named \"%s\" (FileDescriptorName=)", n,
                          n == 1 ? "" : "s", SYSTEMD_SOCKET_NAME);
                return -ENOENT;
        }

        r = sd_is_socket_unix(fd, SOCK_STREAM, 1, NULL, 0);
        if (r <= 0) {
                close(fd);
                log_error("The socket \"%s\" systemd passed is not a listening AF_UNIX stream "
                          "socket",
                          SYSTEMD_SOCKET_NAME);
                return r < 0 ? r : -ENOTSOCK;
        }
        int flags = fcntl(fd, F_GETFL);
        if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) {
                r = -errno;
                close(fd);
                return log_errno(r, "Cannot make the passed socket non-blocking");
        }
        *ret_fd = fd;
        return 1;
}

struct summary_copy {
        uint64_t timers;
        uint64_t waiters;
        char backend[16];
};

struct systemd_notifier {
        bool enabled; /* NOTIFY_SOCKET is set */
        int watchdog_fd;
        struct loop_watch *watchdog_watch;
        int status_fd; /* one-shot: sends the change held back by the rate limit */
        struct loop_watch *status_watch;
        struct summary_copy sent;
        struct summary_copy held;
        bool status_held;
        uint64_t status_sent_usec;
};

static void notify(const char *message)
{
        int r = sd_notify(0, message);
        if (r < 0)
                log_debug("Cannot notify systemd (%s): %s", message, strerror(-r));
}

static void summary_store(struct summary_copy *dst, const struct systemd_summary *src)
{
        dst->timers = src->timers;
        dst->waiters = src->waiters;
        snprintf(dst->backend, sizeof(dst->backend), "%s", src->backend ? src->backend : "");
}

static bool summary_equal(const struct summary_copy *a, const struct systemd_summary *b)
{
        return a->timers == b->timers && a->waiters == b->waiters &&
               strncmp(a->backend, b->backend ? b->backend : "", sizeof(a->backend)) == 0;
}

static void send_status(struct systemd_notifier *n, const char *prefix,
                        const struct summary_copy *summary)
{
        char message[192];

        snprintf(message, sizeof(message),
                 "%sSTATUS=%" PRIu64 " timer%s, %" PRIu64 " waiter%s; %s backend", prefix,
                 summary->timers, summary->timers == 1 ? "" : "s", summary->waiters,
                 summary->waiters == 1 ? "" : "s", summary->backend);
        notify(message);
        n->sent = *summary;
        n->status_held = false;
        if (clock_read(TIMERD_CLOCK_MONOTONIC, &n->status_sent_usec) < 0)
                n->status_sent_usec = 0;
}

static void on_watchdog(struct loop_watch *w, int fd, uint32_t events, void *userdata)
{
        uint64_t expirations;
        (void)w;
        (void)events;
        (void)userdata;

        if (read(fd, &expirations, sizeof(expirations)) < 0)
                return;
        notify("WATCHDOG=1");
}

static void on_status_due(struct loop_watch *w, int fd, uint32_t events, void *userdata)
{
        struct systemd_notifier *n = userdata;
        uint64_t expirations;
        (void)w;
        (void)events;

        if (read(fd, &expirations, sizeof(expirations)) < 0 || !n->status_held)
                return;
        send_status(n, "", &n->held);
}

static struct timespec timespec_from_usec(uint64_t usec)
{
        return (struct timespec){
            .tv_sec = (time_t)(usec / 1000000u),
            .tv_nsec = (long)(usec % 1000000u) * 1000,
        };
}

static int timerfd_watch(struct loop *loop, uint64_t first_usec, uint64_t interval_usec,
                         loop_io_fn cb, void *userdata, int *ret_fd, struct loop_watch **ret)
{
        struct itimerspec spec = {
            .it_value = timespec_from_usec(first_usec),
            .it_interval = timespec_from_usec(interval_usec),
        };
        int r;

        int fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
        if (fd < 0)
                return -errno;
        if (first_usec > 0 && timerfd_settime(fd, 0, &spec, NULL) < 0) {
                r = -errno;
                close(fd);
                return r;
        }
        r = loop_watch(loop, fd, LOOP_IN, cb, userdata, ret);
        if (r < 0) {
                close(fd);
                return r;
        }
        *ret_fd = fd;
        return 0;
}

int systemd_notifier_new(struct loop *loop, struct systemd_notifier **ret)
{
        uint64_t watchdog_usec = 0;
        int r;

        struct systemd_notifier *n = calloc(1, sizeof(*n));
        if (!n)
                return -ENOMEM;
        n->watchdog_fd = -1;
        n->status_fd = -1;
        n->enabled = getenv("NOTIFY_SOCKET") != NULL;

        r = sd_watchdog_enabled(0, &watchdog_usec);
        if (r < 0)
                log_warning("Ignoring the watchdog settings systemd passed: %s", strerror(-r));
        if (r > 0) {
                uint64_t ping_usec = watchdog_usec / 2 > 0 ? watchdog_usec / 2 : 1;
                r = timerfd_watch(loop, ping_usec, ping_usec, on_watchdog, n, &n->watchdog_fd,
                                  &n->watchdog_watch);
                if (r < 0) {
                        systemd_notifier_free(n);
                        return log_errno(r, "Cannot set up watchdog pings");
                }
                log_info("Watchdog pings every %" PRIu64 " ms", ping_usec / 1000);
        }
        if (n->enabled) {
                r = timerfd_watch(loop, 0, 0, on_status_due, n, &n->status_fd, &n->status_watch);
                if (r < 0) {
                        systemd_notifier_free(n);
                        return log_errno(r, "Cannot set up status updates");
                }
        }
        *ret = n;
        return 0;
}

void systemd_notifier_free(struct systemd_notifier *n)
{
        if (!n)
                return;
        loop_unwatch(n->watchdog_watch);
        loop_unwatch(n->status_watch);
        if (n->watchdog_fd >= 0)
                close(n->watchdog_fd);
        if (n->status_fd >= 0)
                close(n->status_fd);
        free(n);
}

void systemd_notify_ready(struct systemd_notifier *n, const struct systemd_summary *summary)
{
        struct summary_copy copy;

        summary_store(&copy, summary);
        send_status(n, "READY=1\n", &copy);
}

void systemd_notify_status(struct systemd_notifier *n, const struct systemd_summary *summary)
{
        uint64_t now;

        if (!n->enabled)
                return;
        if (summary_equal(&n->sent, summary)) {
                n->status_held = false;
                return;
        }
        summary_store(&n->held, summary);
        if (n->status_held)
                return;
        if (clock_read(TIMERD_CLOCK_MONOTONIC, &now) < 0 ||
            now - n->status_sent_usec >= STATUS_INTERVAL_USEC) {
                send_status(n, "", &n->held);
                return;
        }
        uint64_t due = n->status_sent_usec + STATUS_INTERVAL_USEC;
        struct itimerspec spec = {.it_value = timespec_from_usec(due)};
        if (timerfd_settime(n->status_fd, TFD_TIMER_ABSTIME, &spec, NULL) < 0) {
                send_status(n, "", &n->held);
                return;
        }
        n->status_held = true;
}

void systemd_notify_reloading(void)
{
        notify("RELOADING=1");
}

void systemd_notify_reloaded(void)
{
        notify("READY=1");
}

void systemd_notify_stopping(void)
{
        notify("STOPPING=1\nSTATUS=Shutting down");
}
