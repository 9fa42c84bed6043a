/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "service/signals.h"

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "service/io/log.h"
#include "service/io/peer.h"
#include "service/service.h"

/*
 * si_value carries the timer's generation: its low 32 bits in the union's first four bytes, where
 * sival_int lies whatever the byte order, and the high 32 bits after them. A handler reading the
 * POSIX sival_int gets timerd_signal_int(generation), which tells the owner's live timers apart
 * (the registry keeps their generations' low halves distinct); libtimerd's timerd_signal_read()
 * puts the whole generation back together.
 */
static union sigval signal_value(uint64_t generation)
{
        const uint32_t halves[2] = {(uint32_t)generation, (uint32_t)(generation >> 32)};
        union sigval v;

        memset(&v, 0, sizeof(v));
        memcpy(&v, halves, sizeof(v) < sizeof(halves) ? sizeof(v) : sizeof(halves));
        return v;
}

static int pidfd_send(int pidfd, int signo, uint64_t generation)
{
        siginfo_t info;

        memset(&info, 0, sizeof(info));
        info.si_signo = signo;
        info.si_code = SI_QUEUE;
        info.si_pid = getpid();
        info.si_uid = getuid();
        info.si_value = signal_value(generation);
        if (syscall(SYS_pidfd_send_signal, pidfd, signo, &info, 0) < 0)
                return -errno;
        return 0;
}

/*
 * Whether signo is still pending for the whole process (sent, not yet taken): 1 or 0, or -errno
 * when it cannot be told (/proc hidden, as under ProtectProc=invisible: then the signal is sent
 * and queues or merges like any; see signals.h).
 */
static int signal_pending(const struct peer *p, int signo)
{
        char path[64], line[256];
        int r = -ENOENT;

        snprintf(path, sizeof(path), "/proc/%d/status", (int)p->pid);
        FILE *f = fopen(path, "re");
        if (!f)
                return -errno;
        while (fgets(line, sizeof(line), f))
                if (strncmp(line, "ShdPnd:", 7) == 0) {
                        unsigned long long mask = strtoull(line + 7, NULL, 16);
                        r = (int)((mask >> (signo - 1)) & 1);
                        break;
                }
        fclose(f);
        /* The pid read is the peer's only while its pidfd still names a live process. */
        if (r == 1 && syscall(SYS_pidfd_send_signal, p->pidfd, 0, NULL, 0) < 0)
                return -errno;
        return r;
}

int signals_acknowledge(struct peer *p)
{
        if (!p->signals_unacknowledged)
                p->signals_unacknowledged = calloc(NSIG, sizeof(*p->signals_unacknowledged));
        return p->signals_unacknowledged ? 0 : -ENOMEM;
}

int signals_taken(struct peer *p, int signo, uint64_t generation)
{
        if (!p->signals_unacknowledged || signo < 1 || signo >= NSIG || generation == 0 ||
            p->signals_unacknowledged[signo] != generation)
                return -TIMERD_E_SIGNAL_NOT_OUTSTANDING;
        p->signals_unacknowledged[signo] = 0;
        return 0;
}

/* Whether the last signo sent to p is not taken yet: by its acknowledgements, else by /proc. */
static bool signal_outstanding(const struct peer *p, int signo)
{
        if (p->signals_unacknowledged)
                return p->signals_unacknowledged[signo] != 0;
        return signal_pending(p, signo) == 1;
}

void signals_deliver(struct service *s, const struct td_now *now, const struct td_dispatch *d)
{
        struct td_snapshot t;
        int r = -ESRCH;

        if (registry_get(s->registry, d->owner, d->name, &t) < 0)
                return;
        const struct td_handle token = {
            .owner = d->owner, .name = t.name, .generation = d->generation, .run = d->run};
        struct peer *p = service_find_session(s, t.session);
        /* Restored (no session): its process is not known until its owner reconciles from it.
         * The firing waits, like an alarm without a Sleep, instead of finding the target gone. */
        if (!p && t.session == 0)
                return;
        if (p && p->pidfd >= 0 && signal_outstanding(p, t.declaration.signo)) {
                /* setitimer semantics: a period whose signal would queue behind the last one is
                 * an overrun, never a burst. */
                s->signals.coalesced++;
                service_apply(s, now, registry_note_overrun(s->registry, now, &token));
                service_end_run(s, now, d, TIMERD_OUTCOME_SUCCESS, TIMERD_DIRECTIVE_CONTINUE);
                return;
        }
        if (p && p->pidfd >= 0)
                r = pidfd_send(p->pidfd, t.declaration.signo, d->generation);

        if (r >= 0) {
                s->signals.sent++;
                if (p->signals_unacknowledged)
                        p->signals_unacknowledged[t.declaration.signo] = d->generation;
                service_end_run(s, now, d, TIMERD_OUTCOME_SUCCESS, TIMERD_DIRECTIVE_CONTINUE);
                return;
        }
        /* Not retried: the process will not come back, and a refusal will not change. */
        enum timerd_failure failure =
            r == -EPERM ? TIMERD_FAILURE_SIGNAL_REFUSED : TIMERD_FAILURE_TARGET_GONE;
        if (r == -EPERM)
                s->signals.refused++;
        else
                s->signals.target_gone++;
        log_info("Timer %s of uid %u stops: %s", t.name, (unsigned)d->owner,
                 r == -EPERM ? "the signal was refused" : "its process is gone");
        service_end_run(s, now, d, TIMERD_OUTCOME_EXPECTED_FAILURE, TIMERD_DIRECTIVE_STOP);
        /* The run is over: the failure is recorded through the claim. */
        const struct td_handle claim = {
            .owner = d->owner, .name = t.name, .generation = d->generation};
        service_apply(s, now, registry_fail(s->registry, now, &claim, failure));
}

void signals_deliver_held(struct service *s, const struct td_now *now, uint32_t owner,
                          const char *name, uint64_t session)
{
        struct td_dispatch d;

        /* Without memory it stays held, for the next Reconcile. */
        if (registry_take_pending(s->registry, now, owner, TIMERD_DELIVERY_SIGNAL, &name, 1,
                                  session, &d) > 0)
                signals_deliver(s, now, &d);
}
