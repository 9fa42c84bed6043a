/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "service/signals.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "service/log.h"
#include "service/peer.h"
#include "service/service.h"

static int pidfd_send(int pidfd, int signo, uint64_t value)
{
        siginfo_t info;

        memset(&info, 0, sizeof(info));
        info.si_signo = signo;
        info.si_code = SI_QUEUE;
        info.si_pid = getpid();
        info.si_uid = getuid();
        info.si_value.sival_ptr = (void *)(uintptr_t)value;
        if (syscall(SYS_pidfd_send_signal, pidfd, signo, &info, 0) < 0)
                return -errno;
        return 0;
}

void signals_deliver(struct service *s, const struct td_now *now, const struct td_dispatch *d)
{
        struct td_snapshot t;
        int r = -ESRCH;

        if (registry_get(s->registry, d->owner, d->name, &t) < 0)
                return;
        struct peer *p = service_find_session(s, t.session);
        if (p && p->pidfd >= 0)
                r = pidfd_send(p->pidfd, t.declaration.signo, d->generation);

        const struct td_handle token = {
                .owner = d->owner, .name = t.name, .generation = d->generation, .run = d->run};
        if (r >= 0) {
                s->signals.sent++;
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
        service_apply(s, now, registry_fail(s->registry, now, &token, failure));
}
