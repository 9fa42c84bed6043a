/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* Delivery `signal` against the real timerd: each test body runs in a child that receives. */

#include <errno.h>
#include <json-c/json.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"

/* A raw call's whole reply, NULL when none came in time; the caller puts it. */
static json_object *reply_to(int fd, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));

static json_object *reply_to(int fd, const char *fmt, va_list ap)
{
        char msg[1024], buf[8192];

        int n = vsnprintf(msg, sizeof(msg), fmt, ap);
        raw_send(fd, msg, (size_t)n + 1);
        if (raw_recv(fd, buf, sizeof(buf), 5000) < 0)
                return NULL;
        return json_tokener_parse(buf);
}

/* A raw call; returns the reply's parameters or NULL for an error reply. */
static json_object *call(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static json_object *call(int fd, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        json_object *o = reply_to(fd, fmt, ap), *params = NULL;
        va_end(ap);
        if (o && json_object_object_get_ex(o, "parameters", &params) &&
            !json_object_object_get_ex(o, "error", NULL))
                json_object_get(params);
        else
                params = NULL;
        json_object_put(o);
        return params;
}

/* The error a raw call answered, or NULL (the caller frees). */
static char *error_of(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static char *error_of(int fd, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        json_object *o = reply_to(fd, fmt, ap), *error;
        va_end(ap);
        if (!o)
                _exit(80);
        char *name = json_object_object_get_ex(o, "error", &error)
                         ? strdup(json_object_get_string(error))
                         : NULL;
        json_object_put(o);
        return name;
}

static uint64_t register_signal_timer(int fd, const char *name, const char *policy,
                                      unsigned cadence_usec, int signo, const char *extra)
{
        json_object *p = call(fd,
                              "{\"method\":\"io.timerd.Timer.Register\",\"parameters\":{\"name\":"
                              "\"%s\"%s,\"declaration\":{\"policy\":\"%s\",\"cadence_usec\":%u,"
                              "\"delivery\":\"signal\",\"signal\":%d}}}",
                              name, extra, policy, cadence_usec, signo);
        json_object *claim, *generation;
        if (!p || !json_object_object_get_ex(p, "claim", &claim) ||
            !json_object_object_get_ex(claim, "generation", &generation))
                _exit(20);
        uint64_t g = (uint64_t)json_object_get_int64(generation);
        json_object_put(p);
        return g;
}

static int signal_fd_for(int signo)
{
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, signo);
        if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
                _exit(21);
        int fd = signalfd(-1, &set, SFD_CLOEXEC);
        if (fd < 0)
                _exit(22);
        return fd;
}

/* The next signal within timeout_ms: 1 with *ret, 0 when none came. */
static int next_signal(int sfd, int timeout_ms, struct signalfd_siginfo *ret)
{
        struct pollfd p = {.fd = sfd, .events = POLLIN};
        if (poll(&p, 1, timeout_ms) <= 0)
                return 0;
        return read(sfd, ret, sizeof(*ret)) == sizeof(*ret);
}

static void run_child(void (*body)(const struct harness *h), const struct harness *h)
{
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                body(h);
                _exit(0);
        }
        int status;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
}

static void interval_body(const struct harness *h)
{
        int signo = SIGRTMIN + 1;
        int sfd = signal_fd_for(signo);
        int fd = harness_raw_connect(h);
        uint64_t generation = register_signal_timer(fd, "tick", "interval", 30000, signo, "");
        struct signalfd_siginfo si;

        for (int i = 0; i < 3; i++) {
                if (!next_signal(sfd, 5000, &si))
                        _exit(30);
                /* Queued by the service, for this process, naming the timer. */
                if ((int)si.ssi_signo != signo || si.ssi_code != SI_QUEUE ||
                    si.ssi_ptr != generation)
                        _exit(31);
        }
}

static void test_interval_signals_carry_the_timer(void **state)
{
        run_child(interval_body, *state);
}

static void watchdog_body(const struct harness *h)
{
        int sfd = signal_fd_for(SIGUSR1);
        int fd = harness_raw_connect(h);
        struct signalfd_siginfo si;

        register_signal_timer(fd, "deadman", "watchdog", 300000, SIGUSR1, "");
        json_object *p = call(fd, "{\"method\":\"io.timerd.Timer.Get\",\"parameters\":{\"name\":"
                                  "\"deadman\"}}");
        json_object *timer, *generation;
        if (!p || !json_object_object_get_ex(p, "timer", &timer) ||
            !json_object_object_get_ex(timer, "generation", &generation))
                _exit(40);
        int64_t g = json_object_get_int64(generation);
        json_object_put(p);

        /* Kicked in time: never fires. */
        for (int i = 0; i < 12; i++) {
                json_object_put(call(fd,
                                     "{\"method\":\"io.timerd.Timer.Kick\",\"parameters\":{"
                                     "\"claim\":{\"name\":\"deadman\",\"generation\":%lld}}}",
                                     (long long)g));
                if (next_signal(sfd, 50, &si))
                        _exit(41);
        }
        /* Not kicked: the deadman switch fires. */
        if (!next_signal(sfd, 5000, &si) || si.ssi_signo != SIGUSR1)
                _exit(42);
}

static void test_watchdog_signals_only_when_not_kicked(void **state)
{
        run_child(watchdog_body, *state);
}

static void no_other_target_body(const struct harness *h)
{
        int sfd = signal_fd_for(SIGUSR2);
        int fd = harness_raw_connect(h);
        struct signalfd_siginfo si;

        /* A pid in the call is no parameter (refused, not ignored): the caller is the target. */
        if (call(fd,
                 "{\"method\":\"io.timerd.Timer.Register\",\"parameters\":{\"name\":\"mine\","
                 "\"pid\":1,\"declaration\":{\"policy\":\"interval\",\"cadence_usec\":20000,"
                 "\"delivery\":\"signal\",\"signal\":%d}}}",
                 SIGUSR2))
                _exit(51);
        register_signal_timer(fd, "mine", "interval", 20000, SIGUSR2, "");
        if (!next_signal(sfd, 5000, &si) || si.ssi_signo != SIGUSR2 || (pid_t)si.ssi_pid != h->pid)
                _exit(50);
}

static void test_signals_only_reach_the_caller(void **state)
{
        run_child(no_other_target_body, *state);
}

static void blocked_body(const struct harness *h)
{
        int signo = SIGRTMIN + 2;
        int sfd = signal_fd_for(signo);
        int fd = harness_raw_connect(h);
        struct signalfd_siginfo si;

        register_signal_timer(fd, "blocked", "interval", 30000, signo, "");
        /* Not taking the signal for about ten periods. */
        usleep(300000);
        json_object *p = call(fd, "{\"method\":\"io.timerd.Timer.Get\",\"parameters\":{\"name\":"
                                  "\"blocked\"}}");
        json_object *timer, *overruns;
        if (!p || !json_object_object_get_ex(p, "timer", &timer) ||
            !json_object_object_get_ex(timer, "overruns", &overruns))
                _exit(60);
        /* The missed periods are counted, not queued: one signal waits, the rest are overruns. */
        if (json_object_get_int64(overruns) < 3)
                _exit(61);
        json_object_put(p);
        int queued = 0;
        while (next_signal(sfd, 0, &si))
                queued++;
        if (queued != 1)
                _exit(62);
}

static void test_blocked_signals_count_overruns(void **state)
{
        run_child(blocked_body, *state);
}

/* A retained signal timer outlives its process: the next firing finds the target gone. */
static void test_target_gone_stops_the_timer(void **state)
{
        struct harness *h = *state;
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                int fd = harness_raw_connect(h);
                json_object *p =
                    call(fd, "{\"method\":\"io.timerd.Timer.Register\",\"parameters\":{"
                             "\"name\":\"orphaned\",\"delay_usec\":200000,"
                             "\"declaration\":{\"policy\":\"interval\",\"cadence_usec\":"
                             "200000,\"lifetime\":\"retained\",\"delivery\":\"signal\"}}}");
                _exit(p ? 0 : 1);
        }
        int status;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_int_equal(WEXITSTATUS(status), 0);

        int fd = harness_raw_connect(h);
        const char *failure = NULL;
        for (int i = 0; i < 500 && !failure; i++) {
                json_object *p = call(fd, "{\"method\":\"io.timerd.Timer.Get\",\"parameters\":{"
                                          "\"name\":\"orphaned\"}}");
                json_object *timer, *f;
                assert_non_null(p);
                assert_true(json_object_object_get_ex(p, "timer", &timer));
                if (json_object_object_get_ex(timer, "failure", &f))
                        failure = strcmp(json_object_get_string(f), "target_gone") == 0
                                      ? "target_gone"
                                      : "other";
                json_object_put(p);
                if (!failure)
                        usleep(10000);
        }
        assert_non_null(failure);
        assert_string_equal(failure, "target_gone");
        close(fd);
}

/* A raw call's whole reply (error or not); the caller puts it. */
static json_object *call_reply(int fd, const char *msg)
{
        char buf[8192];

        raw_send(fd, msg, strlen(msg) + 1);
        assert_true(raw_recv(fd, buf, sizeof(buf), 5000) >= 0);
        json_object *o = json_tokener_parse(buf);
        assert_non_null(o);
        return o;
}

/* Only what a timer's signal can sensibly be: SIGALRM, SIGUSR1/2, real-time 34..64 (glibc's
 * SIGRTMIN..SIGRTMAX). Never one that stops or kills, nor glibc's reserved 32 and 33. */
static void test_bad_signal_numbers_are_refused(void **state)
{
        int fd = harness_raw_connect(*state);
        const char *bad[] = {"0",  "-1", "65", "\"TERM\"", "1",  "2",         "9",
                             "15", "17", "19", "32",       "33", "4294967306"};
        const int good[] = {SIGALRM, SIGUSR1, SIGUSR2, 34, SIGRTMIN, SIGRTMAX, 64};
        char msg[512];

        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                snprintf(msg, sizeof(msg),
                         "{\"method\":\"io.timerd.Timer.Register\",\"parameters\":{"
                         "\"name\":\"bad\",\"declaration\":{\"policy\":\"once\","
                         "\"delivery\":\"signal\",\"signal\":%s}}}",
                         bad[i]);
                json_object *r = call_reply(fd, msg), *error, *params, *parameter;
                assert_true(json_object_object_get_ex(r, "error", &error));
                assert_string_equal(json_object_get_string(error),
                                    "org.varlink.service.InvalidParameter");
                assert_true(json_object_object_get_ex(r, "parameters", &params));
                assert_true(json_object_object_get_ex(params, "parameter", &parameter));
                assert_string_equal(json_object_get_string(parameter), "declaration.signal");
                json_object_put(r);
        }
        for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
                snprintf(msg, sizeof(msg),
                         "{\"method\":\"io.timerd.Timer.Register\",\"parameters\":{"
                         "\"name\":\"good%zu\",\"declaration\":{\"policy\":\"once\","
                         "\"delivery\":\"signal\",\"signal\":%d}}}",
                         i, good[i]);
                json_object *r = call_reply(fd, msg);
                assert_false(json_object_object_get_ex(r, "error", NULL));
                json_object_put(r);
        }
        close(fd);
}

static bool error_is(char *name, const char *expected)
{
        bool same = name && strcmp(name, expected) == 0;
        free(name);
        return same;
}

#define SIGNAL_TAKEN                                                                               \
        "{\"method\":\"io.timerd.Timer.SignalTaken\",\"parameters\":{\"signal\":%d,"               \
        "\"generation\":%llu}}"
#define ACKNOWLEDGE_SIGNALS "{\"method\":\"io.timerd.Timer.AcknowledgeSignals\"}"
#define NOT_OUTSTANDING     "io.timerd.Timer.SignalNotOutstanding"

/* The timer's total overruns, as Get reports them. */
static int64_t overruns_of(int fd, const char *name)
{
        json_object *p = call(fd,
                              "{\"method\":\"io.timerd.Timer.Get\",\"parameters\":{\"name\":"
                              "\"%s\"}}",
                              name);
        json_object *timer, *overruns;
        if (!p || !json_object_object_get_ex(p, "timer", &timer) ||
            !json_object_object_get_ex(timer, "overruns", &overruns))
                _exit(81);
        int64_t n = json_object_get_int64(overruns);
        json_object_put(p);
        return n;
}

/* On a new connection that acknowledges signals, an interval timer `name` sending signo, whose
 * first signal is taken (and not reported): its generation. */
static uint64_t acknowledged_timer(const struct harness *h, int signo, const char *name,
                                   int *ret_sfd, int *ret_fd)
{
        struct signalfd_siginfo si;

        *ret_sfd = signal_fd_for(signo);
        *ret_fd = harness_raw_connect(h);
        if (error_of(*ret_fd, ACKNOWLEDGE_SIGNALS))
                _exit(90);
        uint64_t generation = register_signal_timer(*ret_fd, name, "interval", 30000, signo, "");
        if (!next_signal(*ret_sfd, 5000, &si) || si.ssi_ptr != generation)
                _exit(91);
        return generation;
}

static void acknowledged_body(const struct harness *h)
{
        int signo = SIGRTMIN + 4, sfd, fd;
        struct signalfd_siginfo si;

        /* Taken, so /proc shows nothing pending, but not reported: the service counts what it
         * knows from the acknowledgements, not what /proc says, so about ten periods are
         * overruns and no second signal comes, as under ProtectProc=invisible. */
        uint64_t generation = acknowledged_timer(h, signo, "acked", &sfd, &fd);
        usleep(300000);
        if (next_signal(sfd, 0, &si))
                _exit(92);
        int64_t overruns = overruns_of(fd, "acked");
        if (overruns < 3)
                _exit(93);
        /* Reported: the next firing sends again, and counts no overrun meanwhile. */
        if (error_of(fd, SIGNAL_TAKEN, signo, (unsigned long long)generation))
                _exit(94);
        if (!next_signal(sfd, 5000, &si) || si.ssi_ptr != generation)
                _exit(95);
        int64_t after = overruns_of(fd, "acked");
        if (after < overruns || after > overruns + 2)
                _exit(96);
}

/* A process that acknowledges its signals gets overruns counted without the service reading its
 * /proc: the same count whether the unit hides /proc or not. */
static void test_acknowledged_signals_count_overruns_without_proc(void **state)
{
        run_child(acknowledged_body, *state);
}

static void acknowledge_errors_body(const struct harness *h)
{
        int signo = SIGRTMIN + 5;
        int sfd = signal_fd_for(signo);
        int fd = harness_raw_connect(h), other = harness_raw_connect(h);
        struct signalfd_siginfo si;

        uint64_t generation = register_signal_timer(fd, "once", "interval", 30000, signo, "");
        if (!next_signal(sfd, 5000, &si))
                _exit(100);
        /* Not declared: nothing is outstanding, whatever was sent. */
        if (!error_is(error_of(fd, SIGNAL_TAKEN, signo, (unsigned long long)generation),
                      NOT_OUTSTANDING))
                _exit(101);
        json_object_put(call(fd,
                             "{\"method\":\"io.timerd.Timer.Unregister\",\"parameters\":{"
                             "\"claim\":{\"name\":\"once\",\"generation\":%llu}}}",
                             (unsigned long long)generation));
        while (next_signal(sfd, 100, &si))
                ;

        if (error_of(fd, ACKNOWLEDGE_SIGNALS) || error_of(other, ACKNOWLEDGE_SIGNALS))
                _exit(102);
        generation = register_signal_timer(fd, "acked", "interval", 30000, signo, "");
        if (!next_signal(sfd, 5000, &si))
                _exit(103);
        /* Another timer's generation, another signal, another connection of the owner, a
         * signal no timer may have, a missing generation: refused, and it stays outstanding. */
        const struct {
                int fd, signo;
                unsigned long long generation;
                const char *error;
        } bad[] = {
            {fd, signo, generation + 1, NOT_OUTSTANDING},
            {fd, SIGUSR1, generation, NOT_OUTSTANDING},
            {other, signo, generation, NOT_OUTSTANDING},
            {fd, SIGKILL, generation, "org.varlink.service.InvalidParameter"},
            {fd, signo, 0, NOT_OUTSTANDING},
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
                if (!error_is(error_of(bad[i].fd, SIGNAL_TAKEN, bad[i].signo, bad[i].generation),
                              bad[i].error))
                        _exit(104);
        if (!error_is(error_of(fd,
                               "{\"method\":\"io.timerd.Timer.SignalTaken\",\"parameters\":"
                               "{\"signal\":%d}}",
                               signo),
                      "org.varlink.service.InvalidParameter"))
                _exit(105);
        usleep(100000);
        if (next_signal(sfd, 0, &si) || overruns_of(fd, "acked") < 1)
                _exit(106);
        /* The right one, once: a second report of it is stale. */
        if (error_of(fd, SIGNAL_TAKEN, signo, (unsigned long long)generation))
                _exit(107);
        if (!error_is(error_of(fd, SIGNAL_TAKEN, signo, (unsigned long long)generation),
                      NOT_OUTSTANDING))
                _exit(108);
        if (!next_signal(sfd, 5000, &si) || si.ssi_ptr != generation)
                _exit(109);
}

/* A report of a signal that is not outstanding on the connection is a typed error and changes
 * nothing. */
static void test_acknowledgement_errors_change_nothing(void **state)
{
        run_child(acknowledge_errors_body, *state);
}

static void other_owner_body(const struct harness *h)
{
        int signo = SIGRTMIN + 6, sfd, fd;
        struct signalfd_siginfo si;

        uint64_t generation = acknowledged_timer(h, signo, "mine", &sfd, &fd);
        pid_t pid = fork();
        if (pid == 0) {
                if (setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0)
                        _exit(1);
                int theirs = harness_raw_connect(h);
                if (error_of(theirs, ACKNOWLEDGE_SIGNALS))
                        _exit(2);
                _exit(
                    error_is(error_of(theirs, SIGNAL_TAKEN, signo, (unsigned long long)generation),
                             NOT_OUTSTANDING)
                        ? 0
                        : 3);
        }
        int status;
        if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
            WEXITSTATUS(status) != 0)
                _exit(112);
        usleep(100000);
        if (next_signal(sfd, 0, &si))
                _exit(113);
}

/* Another owner cannot report this process's signal taken. */
static void test_other_owners_acknowledgement_is_refused(void **state)
{
        struct harness *h = *state;

        if (getuid() != 0)
                skip();
        assert_int_equal(chmod(h->dir, 0755), 0);
        run_child(other_owner_body, h);
}

/* Waits for the next signal on sfd and reads it through libtimerd: 1, or 0 when none came. */
static int read_signal(int sfd, int timeout_ms, struct timerd_signal *ret)
{
        struct pollfd p = {.fd = sfd, .events = POLLIN};
        return poll(&p, 1, timeout_ms) == 1 && timerd_signal_read(sfd, ret) == 1;
}

static void taken_async(struct timerd *t, int error, void *userdata)
{
        (void)t;
        *(int *)userdata = error;
}

static void library_body(const struct harness *h)
{
        const int signo = SIGRTMIN + 7;
        const struct timerd_start start = {.kind = TIMERD_START_AFTER, .usec = 30000};
        struct timerd_declaration d;
        struct timerd_claim claim;
        struct timerd_signal sig;
        struct timerd_timer info;
        struct timerd *t;

        int sfd = timerd_signal_fd(&signo, 1);
        if (sfd < 0 || timerd_connect(h->socket, &t) < 0)
                _exit(120);
        timerd_declaration_init(&d, TIMERD_POLICY_INTERVAL, 30000);
        d.delivery = TIMERD_DELIVERY_SIGNAL;
        d.signal = signo;
        if (timerd_signals_acknowledge(t) != 0 ||
            timerd_register(t, "lib", &d, &start, false, &claim) != 0)
                _exit(121);
        if (!read_signal(sfd, 5000, &sig) || sig.generation != claim.generation)
                _exit(122);
        /* Not reported: the later periods are overruns, not signals. */
        usleep(200000);
        if (read_signal(sfd, 0, &sig) || timerd_get(t, "lib", TIMERD_OWNER_SELF, &info) != 0 ||
            info.overruns < 2)
                _exit(123);
        if (timerd_signal_taken(t, &sig) != 0 ||
            timerd_signal_taken(t, &sig) != -TIMERD_E_SIGNAL_NOT_OUTSTANDING)
                _exit(124);
        /* The next one comes, and is reported from an event loop. */
        int error = 1;
        if (!read_signal(sfd, 5000, &sig) ||
            timerd_signal_taken_async(t, &sig, taken_async, &error) != 0)
                _exit(125);
        while (error == 1)
                if (timerd_process(t) < 0)
                        _exit(126);
        if (error != 0 || !read_signal(sfd, 5000, &sig))
                _exit(127);
        const struct timerd_signal forged = {.signo = signo, .generation = 0};
        if (timerd_signal_taken(t, &forged) != -EINVAL || timerd_signal_taken(t, NULL) != -EINVAL)
                _exit(128);
        timerd_close(t);
}

/* libtimerd's side: declare, read, report (blocking and asynchronous). */
static void test_library_reports_signals_taken(void **state)
{
        run_child(library_body, *state);
}

static uint64_t generation_of(int fd, const char *name)
{
        char msg[256];
        snprintf(msg, sizeof(msg),
                 "{\"method\":\"io.timerd.Timer.Get\",\"parameters\":{\"name\":\"%s\"}}", name);
        json_object *r = call_reply(fd, msg), *params, *timer, *generation;
        if (!json_object_object_get_ex(r, "parameters", &params) ||
            !json_object_object_get_ex(params, "timer", &timer) ||
            !json_object_object_get_ex(timer, "generation", &generation))
                _exit(70);
        uint64_t g = (uint64_t)json_object_get_int64(generation);
        json_object_put(r);
        return g;
}

static void after_restart_body(const struct harness *h)
{
        int signo = SIGRTMIN + 3;
        int sfd = signal_fd_for(signo);
        int fd = harness_raw_connect(h);
        struct signalfd_siginfo si;
        struct timerd_signal decoded;

        uint64_t kept = generation_of(fd, "kept");
        uint64_t generation = register_signal_timer(fd, "tick", "interval", 30000, signo, "");
        /* Above the restart's floor (the wall clock in µs), its low half right after the kept
         * timer's: sival_int tells them apart. */
        if (generation < (UINT64_C(1) << 40) || (uint32_t)generation != (uint32_t)kept + 1)
                _exit(71);
        if (!next_signal(sfd, 5000, &si) || si.ssi_code != SI_QUEUE)
                _exit(72);
        if (si.ssi_int != timerd_signal_int(generation) || si.ssi_int == timerd_signal_int(kept) ||
            si.ssi_ptr != generation)
                _exit(73);
        /* libtimerd puts the whole generation back together. */
        struct pollfd p = {.fd = sfd, .events = POLLIN};
        if (poll(&p, 1, 5000) != 1 || timerd_signal_read(sfd, &decoded) != 1)
                _exit(74);
        if (decoded.signo != signo || decoded.generation != generation)
                _exit(75);
}

/* After a restart generations are about 1.8e15: the 32-bit sival_int still names the timer. */
static void test_signal_value_identifies_the_timer_after_restart(void **state)
{
        struct harness *h = *state;
        int fd = harness_raw_connect(h);

        json_object_put(call(fd, "{\"method\":\"io.timerd.Timer.Register\",\"parameters\":{"
                                 "\"name\":\"kept\",\"delay_usec\":3600000000,\"declaration\":{"
                                 "\"policy\":\"once\",\"lifetime\":\"retained\"}}}"));
        close(fd);
        harness_restart(h, NULL);
        run_child(after_restart_body, h);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_interval_signals_carry_the_timer),
            cmocka_unit_test(test_watchdog_signals_only_when_not_kicked),
            cmocka_unit_test(test_signals_only_reach_the_caller),
            cmocka_unit_test(test_blocked_signals_count_overruns),
            cmocka_unit_test(test_target_gone_stops_the_timer),
            cmocka_unit_test(test_bad_signal_numbers_are_refused),
            cmocka_unit_test(test_acknowledged_signals_count_overruns_without_proc),
            cmocka_unit_test(test_acknowledgement_errors_change_nothing),
            cmocka_unit_test(test_other_owners_acknowledgement_is_refused),
            cmocka_unit_test(test_library_reports_signals_taken),
            cmocka_unit_test_setup_teardown(test_signal_value_identifies_the_timer_after_restart,
                                            harness_setup, harness_teardown),
        };
        return cmocka_run_group_tests_name(harness_backend(), tests, harness_setup,
                                           harness_teardown);
}
