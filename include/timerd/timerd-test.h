/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * libtimerd's helpers for testing programs that use timerd: a private timerd on a virtual clock
 * (timerd --clock virtual), which moves only when the test moves it. A daily job is tested over
 * 30 virtual days in well under a second, with the same firings every run:
 *
 *     struct timerd_test *vt;
 *     struct timerd *t;
 *
 *     timerd_test_start(&vt);                     // a private timerd on a temporary socket
 *     timerd_connect(timerd_test_socket(vt), &t);  // the program under test connects there
 *     … register the job …
 *     timerd_test_advance(t, 24 * 3600 * 1000000ull, NULL);  // a day passes: the job fires
 *     … timerd_wait(), check, timerd_complete() …
 *     timerd_close(t);
 *     timerd_test_stop(vt);
 *
 * The clocks start at a fixed instant: monotonic and boottime at 10^9 s (beyond any real uptime),
 * realtime at 2030-01-01 00:00 UTC. An advance fires every timer that comes due on the way at its
 * own deadline, in (deadline, clock, owner, name) order, and returns once each firing was handed to
 * a parked Wait or left pending. A run ends at the virtual time its Complete arrives, and the
 * advance waits for it: at each deadline the clocks stand still until every run handed to a
 * client during the advance has ended (Complete, Fail, or its connection closed) and, while a
 * firing is pending, until such a client is back in a Wait. So a worker thread looping
 * Wait/Complete on an after-completion timer sees every deadline exact under one long advance. A
 * firing left pending with no such client holds nothing: a single-threaded test advances, then
 * takes it itself (examples/test-daily-job.c). A run not ended within 5 s of real time fails the
 * advance with -TIMERD_E_TIMEOUT, the clocks stopped at its deadline. A long advance steps in
 * batches: the service serves other clients meanwhile; another move then is -TIMERD_E_BUSY.
 *
 * The calls on a struct timerd work on any connection to a virtual-clock instance (timerctl's
 * advance and now use them); a service on the real clock answers
 * -TIMERD_E_INTERFACE_NOT_FOUND. Errors as in timerd.h.
 */

#include <stdint.h>

#include "timerd/timerd.h"

#ifdef __cplusplus
extern "C" {
#endif

struct timerd_test;

/*
 * Start a private timerd on a virtual clock, on a socket and state directory in a new temporary
 * directory (under $TMPDIR, else /tmp), and wait until it answers (at most 10 s: -ETIMEDOUT).
 * The binary is $TIMERD_BINARY when set, else the installed one (the sbindir libtimerd was built
 * for). Its log goes to the caller's stderr (warnings and worse). It gets SIGTERM if the thread
 * that started it exits first (PR_SET_PDEATHSIG): stop it from that thread.
 */
int timerd_test_start(struct timerd_test **ret);
/* Its socket, for timerd_connect() or $TIMERD_SOCKET. Valid until timerd_test_stop(). */
const char *timerd_test_socket(const struct timerd_test *vt);
/* SIGTERM, wait for it, remove the temporary directory, free vt (NULL is fine). Its exit status:
 * 0 for a clean stop, 128 + the signal when one killed it; -errno when it cannot be waited for. */
int timerd_test_stop(struct timerd_test *vt);

/* What the virtual clocks read, microseconds on each; the alarm clocks read as their base. */
struct timerd_test_clocks {
        uint64_t monotonic;
        uint64_t boottime;
        uint64_t realtime;
};

/* Let usec pass: every clock moves by it. ret_firings (may be NULL): the firings on the way.
 * -TIMERD_E_TIMEOUT: a run handed out on the way did not end within 5 s of real time. */
int timerd_test_advance(struct timerd *t, uint64_t usec, uint64_t *ret_firings);
/* Advance until `clock` reads usec; a time it passed already is -TIMERD_E_INVALID_PARAMETER. */
int timerd_test_advance_to(struct timerd *t, enum timerd_clock clock, uint64_t usec,
                           uint64_t *ret_firings);
/* A suspend of usec: every clock moves but monotonic. Alarm timers fire on time, the others
 * that came due meanwhile when they would on a real machine (at the next wake-up). */
int timerd_test_suspend(struct timerd *t, uint64_t usec, uint64_t *ret_firings);
/* Set the wall clock to usec, as clock_settime(2) would: realtime and calendar timers are
 * evaluated again. */
int timerd_test_set_realtime(struct timerd *t, uint64_t usec, uint64_t *ret_firings);
/* Read the virtual clocks. */
int timerd_test_now(struct timerd *t, struct timerd_test_clocks *ret);

#ifdef __cplusplus
}
#endif
