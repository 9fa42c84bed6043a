/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * Built in the container against the installed libtimerd (in-container.sh): a signal timer of
 * 20 ms whose signal is left blocked for 600 ms, then what came of it. With `ack` the program
 * declares that it reports its signals (timerd_signals_acknowledge) and, at the end, reports the
 * one it took and waits for the next. Prints "signals=N overruns=M resent=R": signals queued
 * meanwhile, the timer's overruns, and whether a signal came after the report (ack only).
 * Usage: signal-overruns raw|ack. Exit 0, or 1 with a message when a call fails.
 */

#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <timerd/timerd.h>

static int fail(const char *what, int r)
{
        fprintf(stderr, "%s: %s\n", what, timerd_strerror(r));
        return 1;
}

/* The next signal within timeout_ms: true with *ret. */
static bool next_signal(int fd, int timeout_ms, struct timerd_signal *ret)
{
        struct pollfd p = {.fd = fd, .events = POLLIN};
        return poll(&p, 1, timeout_ms) == 1 && timerd_signal_read(fd, ret) == 1;
}

int main(int argc, char **argv)
{
        const struct timerd_start start = {.kind = TIMERD_START_AFTER, .usec = 20000};
        struct timerd_declaration d;
        struct timerd_signal sig;
        struct timerd_claim claim;
        struct timerd_timer info;
        struct timerd *t;
        int signo = SIGRTMIN + 1, r, signals = 0, resent = 0;

        if (argc != 2 || (strcmp(argv[1], "raw") != 0 && strcmp(argv[1], "ack") != 0)) {
                fprintf(stderr, "usage: signal-overruns raw|ack\n");
                return 2;
        }
        bool ack = strcmp(argv[1], "ack") == 0;
        int fd = timerd_signal_fd(&signo, 1);
        if (fd < 0)
                return fail("timerd_signal_fd", fd);
        if ((r = timerd_connect(NULL, &t)) < 0)
                return fail("timerd_connect", r);
        if (ack && (r = timerd_signals_acknowledge(t)) < 0)
                return fail("timerd_signals_acknowledge", r);
        timerd_declaration_init(&d, TIMERD_POLICY_INTERVAL, 20000);
        d.delivery = TIMERD_DELIVERY_SIGNAL;
        d.signal = signo;
        if ((r = timerd_register(t, "signal-overruns", &d, &start, true, &claim)) < 0)
                return fail("timerd_register", r);
        usleep(600000);
        if ((r = timerd_get(t, "signal-overruns", TIMERD_OWNER_SELF, &info)) < 0)
                return fail("timerd_get", r);
        while (next_signal(fd, 0, &sig))
                signals++;
        if (ack && signals > 0) {
                if ((r = timerd_signal_taken(t, &sig)) < 0)
                        return fail("timerd_signal_taken", r);
                resent = next_signal(fd, 5000, &sig);
        }
        printf("signals=%d overruns=%llu resent=%d\n", signals, (unsigned long long)info.overruns,
               resent);
        timerd_close(t);
        return 0;
}
