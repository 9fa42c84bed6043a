/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "options.h"
#include "output.h"
#include "verbs.h"

static const verb_run_fn verb_functions[VERB_MAX] = {
    [VERB_LIST] = verb_list,
    [VERB_SHOW] = verb_show,
    [VERB_STATUS] = verb_status,
    [VERB_ADD] = verb_add,
    [VERB_RECONCILE] = verb_reconcile,
    [VERB_SCHEDULE] = verb_schedule,
    [VERB_RESCHEDULE] = verb_reschedule,
    [VERB_CANCEL] = verb_cancel,
    [VERB_KICK] = verb_kick,
    [VERB_REMOVE] = verb_remove,
    [VERB_WAIT] = verb_wait,
    [VERB_SLEEP] = verb_sleep,
    [VERB_MONITOR] = verb_monitor,
    [VERB_RUN] = verb_run,
    [VERB_ADVANCE] = verb_advance,
    [VERB_NOW] = verb_now,
    /* VERB_CALENDAR needs no service: see main(). */
};

static int connect_failed(const char *path, int error)
{
        fprintf(stderr, "timerctl: cannot connect to the service at %s: %s\n", path,
                timerd_strerror(error));
        return error == -EACCES || error == -EPERM ? EXIT_STATUS_PERMISSION_DENIED
                                                   : EXIT_STATUS_UNREACHABLE;
}

/* The verb's status, unless its output could not be written. */
static int finish_output(int status)
{
        if (fflush(stdout) != 0 || ferror(stdout)) {
                fprintf(stderr, "timerctl: cannot write the output: %s\n", strerror(errno));
                return status == EXIT_STATUS_SUCCESS ? EXIT_STATUS_FAILURE : status;
        }
        return status;
}

int main(int argc, char *argv[])
{
        struct options o = {.legend = true,
                            .owner = TIMERD_OWNER_SELF,
                            .desired = TIMERD_DESIRED_SCHEDULED,
                            .iterations = 1};
        struct timerd *t;
        int r;

        /* timerctl's timers outlive it unless told otherwise: see --transient. */
        timerd_declaration_init(&o.declaration, TIMERD_POLICY_ONCE, 0);
        o.declaration.lifetime = TIMERD_LIFETIME_RETAINED;
        r = clocks_read(&o.now);
        if (r < 0) {
                fprintf(stderr, "timerctl: cannot read the clocks: %s\n", timerd_strerror(r));
                return EXIT_STATUS_FAILURE;
        }

        r = parse_command_line(argc, argv, &o);
        if (r != PARSE_CONTINUE)
                return r;
        if (o.verb == VERB_CALENDAR)
                return finish_output(verb_calendar(&o));

        if (!o.socket)
                o.socket = timerd_default_socket();
        r = timerd_connect(o.socket, &t);
        if (r < 0)
                return connect_failed(o.socket, r);
        /* Cannot fail on a connection: t is not NULL. */
        (void)timerd_set_owner(t, o.owner);
        r = verb_functions[o.verb](t, &o);
        timerd_close(t);
        return finish_output(r);
}
