/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The timerctl binary ($TIMERCTL) as a user meets it: its exit codes, its messages, the calls each
 * verb makes (against a scripted service) and what it prints.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <pty.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "fake-server.h"

#define ELEMENTSOF(a) (sizeof(a) / sizeof((a)[0]))
#define ARGS_MAX      16

#define EMPTY_REPLY "{\"parameters\":{}}"

#define TIMER_BACKUP TIMER_BACKUP_OF("1000")
#define TIMER_BACKUP_OF(owner)                                                                     \
        "{\"owner\":" owner ",\"name\":\"backup\",\"declaration\":{\"policy\":\"interval\","       \
        "\"cadence_usec\":300000000},\"generation\":3,\"state\":\"scheduled\","                    \
        "\"next_usec\":5000000,\"run\":0,\"run_active\":false,\"pending\":false,\"runs\":0,"       \
        "\"consecutive_expected_failures\":0,\"overruns\":0,\"last_duration_usec\":0,"             \
        "\"total_duration_usec\":0}"
#define GET_BACKUP       "{\"method\":\"io.timerd.Timer.Get\",\"parameters\":{\"name\":\"backup\"}}"
#define GET_BACKUP_REPLY "{\"parameters\":{\"timer\":" TIMER_BACKUP "}}"
#define NOT_FOUND_REPLY                                                                            \
        "{\"error\":\"io.timerd.Timer.NotFound\",\"parameters\":{\"name\":\"backup\"}}"
#define CLAIM_BACKUP "{\"name\":\"backup\",\"generation\":3}"

struct run {
        int status;
        char *out;
        char *err;
};

static char *read_all(int fd)
{
        off_t size = lseek(fd, 0, SEEK_END);
        char *text;

        assert_true(size >= 0);
        text = calloc(1, (size_t)size + 1);
        assert_non_null(text);
        assert_int_equal(pread(fd, text, (size_t)size, 0), size);
        close(fd);
        return text;
}

static const char *const sanitizer_variables[] = {"ASAN_OPTIONS", "UBSAN_OPTIONS"};

/* timerctl's environment: a fixed zone and locale, env (may be NULL), the sanitizers' settings
 * (so that a finding in timerctl fails the run as it does here; free them). */
static void child_environment(const char *const *env, const char *envp[ARGS_MAX + 1],
                              char *sanitizer_settings[ELEMENTSOF(sanitizer_variables)])
{
        size_t n_env = 0;

        envp[n_env++] = "TZ=UTC";
        envp[n_env++] = "LC_ALL=C";
        for (size_t i = 0; env && env[i]; i++) {
                assert_true(n_env < ARGS_MAX);
                envp[n_env++] = env[i];
        }
        for (size_t i = 0; i < ELEMENTSOF(sanitizer_variables); i++) {
                const char *value = getenv(sanitizer_variables[i]);

                sanitizer_settings[i] = NULL;
                if (value &&
                    asprintf(&sanitizer_settings[i], "%s=%s", sanitizer_variables[i], value) > 0) {
                        assert_true(n_env < ARGS_MAX);
                        envp[n_env++] = sanitizer_settings[i];
                }
        }
        envp[n_env] = NULL;
}

/* The binary, absolute: the child may change directory before it runs timerctl. */
static void timerctl_path(char exe[PATH_MAX])
{
        const char *variable = getenv("TIMERCTL");

        assert_non_null(variable);
        assert_non_null(realpath(variable, exe));
}

static void child_arguments(const char *const *args, const char *argv[ARGS_MAX + 2])
{
        argv[0] = "timerctl";
        for (size_t i = 0; args[i]; i++) {
                assert_true(i < ARGS_MAX);
                argv[i + 1] = args[i];
                argv[i + 2] = NULL;
        }
}

/*
 * Run timerctl with args (NULL-terminated, without argv[0]) in directory cwd (NULL: this one),
 * with only the environment given (NULL-terminated, may be NULL).
 */
static struct run run_in(const char *cwd, const char *const *env, const char *const *args)
{
        char *sanitizer_settings[ELEMENTSOF(sanitizer_variables)];
        const char *argv[ARGS_MAX + 2] = {}, *envp[ARGS_MAX + 1];
        struct run run = {};
        char exe[PATH_MAX];
        int out, err, status;
        pid_t pid;

        timerctl_path(exe);
        child_arguments(args, argv);
        child_environment(env, envp, sanitizer_settings);
        out = memfd_create("stdout", MFD_CLOEXEC);
        err = memfd_create("stderr", MFD_CLOEXEC);
        assert_true(out >= 0 && err >= 0);

        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                if (dup2(out, STDOUT_FILENO) < 0 || dup2(err, STDERR_FILENO) < 0 ||
                    (cwd && chdir(cwd) < 0))
                        _exit(127);
                execve(exe, (char *const *)argv, (char *const *)envp);
                _exit(127);
        }
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        run.status = WEXITSTATUS(status);
        run.out = read_all(out);
        run.err = read_all(err);
        for (size_t i = 0; i < ELEMENTSOF(sanitizer_settings); i++)
                free(sanitizer_settings[i]);
        return run;
}

#define RUN(...) run_in(NULL, NULL, (const char *const[]){__VA_ARGS__, NULL})

static void run_done(struct run *run)
{
        free(run->out);
        free(run->err);
}

static void assert_exit(const struct run *run, int status)
{
        if (run->status != status)
                fail_msg("exit status %d, expected %d; stderr:\n%s", run->status, status, run->err);
}

struct usage_case {
        const char *args[8];
        const char *message;
};

static const struct usage_case usage_cases[] = {
    {{"frobnicate"}, "unknown command \"frobnicate\""},
    {{"--bogus"}, "invalid option \"--bogus\""},
    {{"-x"}, "invalid option \"-x\""},
    {{"--json=yes", "list"}, "--json: \"yes\": not one of short, pretty, off"},
    {{"--socket"}, "option \"--socket\" needs an argument"},
    {{"show"}, "show needs exactly one timer name"},
    {{"show", "a", "b"}, "show needs exactly one timer name"},
    {{"remove"}, "remove needs exactly one timer name"},
    {{"cancel"}, "cancel needs exactly one timer name"},
    {{"kick", "a", "b"}, "kick needs exactly one timer name"},
    {{"schedule"}, "schedule needs exactly one timer name"},
    {{"status", "x"}, "status takes no arguments"},
    {{"list", "x"}, "list takes no arguments"},
    {{"monitor", "x"}, "monitor takes no arguments"},
    {{"list", "--every", "5s"}, "option \"--every\" is only valid with add, reconcile"},
    {{"status", "--no-legend"}, "option \"--no-legend\" is only valid with list"},
    {{"show", "a", "-a"}, "option \"-a\" is only valid with list, monitor"},
    {{"list", "--count", "1"}, "option \"--count\" is only valid with wait, monitor"},
    {{"add"}, "add needs exactly one timer name"},
    {{"add", "a"}, "add needs one of --once, --every, --watchdog, --interval"},
    {{"add", "a", "--every"}, "option \"--every\" needs an argument"},
    {{"add", "a", "--every", "abc"}, "--every: \"abc\": not a time span"},
    {{"add", "a", "--every", "-5s"}, "--every: \"-5s\": time span must not be negative"},
    {{"add", "a", "--every", "0"}, "--every: the span must be longer than 0"},
    {{"add", "a", "--interval", "99999999999999999999s"},
     "--interval: \"99999999999999999999s\": time span too large"},
    {{"add", "a", "--watchdog", "1s", "--every", "2s"},
     "--watchdog and --every cannot be combined"},
    {{"add", "a", "--once=5s", "--in", "3s"}, "--once and --in cannot be combined"},
    {{"add", "a", "--once", "--in", "3s", "--at", "@5"}, "--in and --at cannot be combined"},
    {{"add", "a", "--once", "--at", "soon"}, "--at: \"soon\": not a timestamp"},
    {{"add", "a", "--once", "--at", "2023-02-30 10:00"},
     "--at: \"2023-02-30 10:00\": no such time, or out of range"},
    {{"add", "a", "--once", "--at", "Mon 2026-12-01"},
     "--at: \"Mon 2026-12-01\": the weekday does not match the date"},
    {{"add", "a", "--once", "--clock", "sundial"}, "--clock: \"sundial\": not one of monotonic"},
    {{"add", "a", "--once", "--delivery", "pigeon"},
     "--delivery: \"pigeon\": not one of notify, alarm, signal"},
    {{"add", "a", "--once", "--accuracy", "fast"}, "--accuracy: \"fast\": not a time span"},
    {{"add", "a", "--once", "--randomized-delay", "x"},
     "--randomized-delay: \"x\": not a time span"},
    {{"add", "a", "--once", "--handover", "soon"}, "--handover: \"soon\": not a time span"},
    {{"list", "--handover", "1ms"}, "option \"--handover\" is only valid with add, reconcile"},
    {{"list", "--no-catch-up"}, "option \"--no-catch-up\" is only valid with add, reconcile"},
    {{"add", "a", "--once", "--retained", "--transient"},
     "--retained and --transient cannot be combined"},
    {{"reconcile", "a", "--every", "5s", "--desired", "never"},
     "--desired: \"never\": not one of inactive, scheduled, exact"},
    {{"reconcile", "a", "--every", "5s", "--desired=exact"}, "--desired=exact needs --in or --at"},
    {{"reconcile", "a", "--every", "5s", "--desired=inactive", "--in", "5s"},
     "--in needs --desired=exact"},
    {{"schedule", "a"}, "schedule needs --in or --at"},
    {{"reschedule", "a", "--cadence", "0"}, "--cadence: the span must be longer than 0"},
    {{"show", "a", "-p", "bogus"}, "-p: \"bogus\": not a property of a timer (owner, name,"},
    {{"show", "a", "-p", "state,"}, "-p: \"state,\": not a list of properties"},
    {{"show", "a", "--value"}, "--value needs -p"},
    {{"wait", "--count", "0"}, "--count: \"0\": must be a number above 0"},
    {{"wait", "-n", "x"}, "--count: \"x\": not a number"},
    {{"wait", "--timeout", "soon"}, "--timeout: \"soon\": not a time span"},
    {{"sleep"}, "sleep needs exactly one time span or timestamp"},
    {{"sleep", "forever"}, "sleep: \"forever\": neither a time span"},
    {{"sleep", "1s", "--resume"}, "--resume needs --alarm"},
    {{"sleep", "1s", "--alarm", "x"}, "--alarm: \"x\": not a time span"},
    /* The span --once was given, not a second name. */
    {{"add", "x", "--once", "abc"}, "--once: \"abc\": not a time span"},
    {{"add", "--once", "abc", "x"}, "--once: \"abc\": not a time span"},
    {{"add", "x", "--once", "300000y"}, "--once: \"300000y\": time span too large"},
    /* Every time on the wire is a signed 64-bit count of microseconds. */
    {{"add", "a", "--every", "9223372036854775808us"},
     "--every: \"9223372036854775808us\": time span too large"},
    {{"schedule", "a", "--in", "9223372036854775808us"}, "--in: \"9223372036854775808us\": time"},
    {{"add", "a", "--once", "--handover", "1001ms"}, "--handover: \"1001ms\": at most 1s"},
    {{"add", "a", "--once", "1s", "--delivery", "signal"},
     "--delivery signal: the signal goes to the process that registers the timer, and timerctl "
     "will have exited when it fires. The program that wants the signal registers the timer "
     "itself, through libtimerd"},
    {{"reconcile", "a", "--every", "1h", "--delivery=signal"}, "--delivery signal: the signal"},
    {{"show", "a", "-U", "no-such-user.timerctl"},
     "--user: \"no-such-user.timerctl\": no such user"},
    {{"show", "a", "--user", "4294967295"}, "--user: \"4294967295\": not a uid"},
    {{"cancel", "a", "--user", ""}, "--user: \"\": no such user"},
    {{"list", "-a", "-U", "0"}, "--all and --user cannot be combined"},
    {{"status", "-U", "0"},
     "option \"-U\" is only valid with list, show, add, reconcile, schedule, reschedule, cancel, "
     "kick, remove, wait"},
    {{"sleep", "1s", "--user", "root"}, "option \"--user\" is only valid with list, show,"},
    {{"monitor", "--user=root"}, "option \"--user\" is only valid with list, show,"},
};

/* Usage errors exit 2 with a message naming what is wrong, before any connection is tried. */
static void test_usage_errors(void **state)
{
        (void)state;
        for (size_t i = 0; i < ELEMENTSOF(usage_cases); i++) {
                struct run run = run_in(NULL, NULL, usage_cases[i].args);

                if (run.status != 2 || !strstr(run.err, usage_cases[i].message) ||
                    strncmp(run.err, "timerctl: ", 10) != 0)
                        fail_msg("case %zu: exit %d, stderr:\n%s\nexpected exit 2 and \"%s\"", i,
                                 run.status, run.err, usage_cases[i].message);
                assert_string_equal(run.out, "");
                run_done(&run);
        }
}

static const char *const verbs_with_help[] = {
    "list",   "show", "status", "add",  "reconcile", "schedule", "reschedule",
    "cancel", "kick", "remove", "wait", "sleep",     "monitor",
};

static void test_help_and_version(void **state)
{
        struct run run;

        (void)state;
        run = RUN("--help");
        assert_exit(&run, 0);
        assert_non_null(strstr(run.out, "Usage: timerctl"));
        assert_non_null(strstr(run.out, "Exit status:"));
        assert_non_null(strstr(run.out, "5 service unreachable, 6 timed out,\n  7 interrupted"));
        for (size_t i = 0; i < ELEMENTSOF(verbs_with_help); i++)
                if (!strstr(run.out, verbs_with_help[i]))
                        fail_msg("--help does not name %s", verbs_with_help[i]);
        run_done(&run);

        /* Each verb has its own, before anything is checked or connected. */
        for (size_t i = 0; i < ELEMENTSOF(verbs_with_help); i++) {
                char usage[64];

                run = RUN(verbs_with_help[i], "--help", "--socket", "/nonexistent");
                assert_exit(&run, 0);
                snprintf(usage, sizeof(usage), "Usage: timerctl %s%s",
                         strcmp(verbs_with_help[i], "list") == 0 ? "[" : "", verbs_with_help[i]);
                if (!strstr(run.out, usage))
                        fail_msg("%s --help:\n%s", verbs_with_help[i], run.out);
                run_done(&run);
        }
        run = RUN("sleep", "--help");
        assert_non_null(strstr(run.out, "exit status 7"));
        run_done(&run);
        run = RUN("add", "-h");
        assert_non_null(strstr(run.out, "--transient"));
        assert_non_null(strstr(run.out, "TIME is a timestamp"));
        run_done(&run);
        run = RUN("--no-pager", "--help");
        assert_exit(&run, 0);
        run_done(&run);

        run = RUN("-h");
        assert_exit(&run, 0);
        assert_non_null(strstr(run.out, "Usage: timerctl"));
        run_done(&run);

        run = RUN("--version");
        assert_exit(&run, 0);
        assert_string_equal(run.out, "timerctl 0.1.0\n");
        run_done(&run);
}

static void test_unreachable(void **state)
{
        struct run run;

        (void)state;
        run = RUN("--socket", "/nonexistent/timerd/io.timerd", "list");
        assert_exit(&run, 5);
        assert_string_equal(run.err, "timerctl: cannot connect to the service at "
                                     "/nonexistent/timerd/io.timerd: No such file or directory\n");
        run_done(&run);

        /* list is the default verb. */
        run = RUN("--socket", "/nonexistent/timerd/io.timerd");
        assert_exit(&run, 5);
        run_done(&run);
}

/* Run timerctl against a fresh scripted service; --socket is added first. */
static struct run run_against(const struct fake_step *steps, size_t n_steps,
                              const char *const *args)
{
        const char *argv[ARGS_MAX + 1] = {"--socket"};
        struct fake_server *s = fake_server_start(steps, n_steps);
        struct run run;

        argv[1] = fake_server_path(s);
        for (size_t i = 0; args[i]; i++) {
                assert_true(i + 2 < ARGS_MAX);
                argv[i + 2] = args[i];
        }
        run = run_in(NULL, NULL, argv);
        fake_server_finish(s);
        return run;
}

#define RUN_AGAINST(script, ...)                                                                   \
        run_against((script), ELEMENTSOF(script), (const char *const[]){__VA_ARGS__, NULL})

static const struct fake_step list_script[] = {
    FAKE_CALL("{\"method\":\"io.timerd.Timer.List\",\"parameters\":{}}"),
    FAKE_REPLY("{\"parameters\":{\"timers\":[" TIMER_BACKUP "]}}"),
};

static void test_list(void **state)
{
        struct run run;

        (void)state;
        run = RUN_AGAINST(list_script, "list");
        assert_exit(&run, 0);
        assert_true(strncmp(run.out, "NEXT ", 5) == 0);
        assert_non_null(strstr(run.out, "  NAME    POLICY    CLOCK      STATE\n"));
        assert_non_null(strstr(run.out, "  backup  interval  monotonic  scheduled\n"));
        assert_non_null(strstr(run.out, "\n\n1 timer listed.\n"));
        assert_string_equal(run.err, "");
        run_done(&run);
}

/* --json prints the reply's parameters, and they parse back. */
static void test_list_json(void **state)
{
        json_object *printed, *expected;
        struct run run;

        (void)state;
        run = RUN_AGAINST(list_script, "--json", "list");
        assert_exit(&run, 0);
        printed = json_tokener_parse(run.out);
        expected = json_tokener_parse("{\"timers\":[" TIMER_BACKUP "]}");
        assert_non_null(printed);
        assert_true(json_object_equal(printed, expected));
        json_object_put(printed);
        json_object_put(expected);
        run_done(&run);
}

static const struct fake_step show_script[] = {
    FAKE_CALL(GET_BACKUP),
    FAKE_REPLY(GET_BACKUP_REPLY),
};

static const struct fake_step show_handover_script[] = {
    FAKE_ANY_CALL,
    FAKE_REPLY("{\"parameters\":{\"timer\":{\"owner\":1000,\"name\":\"fast\",\"declaration\":"
               "{\"policy\":\"once\",\"handover_usec\":1500},\"generation\":3,"
               "\"state\":\"scheduled\",\"run\":0,\"run_active\":false,\"pending\":false,"
               "\"runs\":0,\"consecutive_expected_failures\":0,\"overruns\":0,"
               "\"last_duration_usec\":0,\"total_duration_usec\":0}}}"),
};

static void test_show(void **state)
{
        json_object *printed, *timer;
        struct run run;

        (void)state;
        run = RUN_AGAINST(show_script, "show", "backup");
        assert_exit(&run, 0);
        assert_true(strncmp(run.out, "backup\n", 7) == 0);
        assert_non_null(strstr(run.out, "Policy: interval, every 5min\n"));
        assert_non_null(strstr(run.out, "Generation: 3\n"));
        run_done(&run);

        run = RUN_AGAINST(show_script, "show", "--json", "backup");
        assert_exit(&run, 0);
        printed = json_tokener_parse(run.out);
        assert_non_null(printed);
        assert_true(json_object_object_get_ex(printed, "timer", &timer));
        assert_int_equal(json_object_get_int(json_object_object_get(timer, "generation")), 3);
        json_object_put(printed);
        run_done(&run);
}

static const struct fake_step not_found_script[] = {
    FAKE_CALL(GET_BACKUP),
    FAKE_REPLY(NOT_FOUND_REPLY),
};

/* A missing timer exits 3 and says which call failed, why, and the error's name. */
static void test_not_found(void **state)
{
        static const char *const verbs[] = {"show", "cancel", "remove"};

        (void)state;
        for (size_t i = 0; i < ELEMENTSOF(verbs); i++) {
                struct run run = RUN_AGAINST(not_found_script, verbs[i], "backup");
                char prefix[64];

                assert_exit(&run, 3);
                snprintf(prefix, sizeof(prefix), "timerctl: %s backup: ", verbs[i]);
                assert_true(strncmp(run.err, prefix, strlen(prefix)) == 0);
                assert_non_null(strstr(run.err, " (io.timerd.Timer.NotFound)\n"));
                assert_string_equal(run.out, "");
                run_done(&run);
        }

        struct run run = RUN_AGAINST(not_found_script, "--json", "show", "backup");
        assert_exit(&run, 3);
        run_done(&run);
}

/* timerctl is not the registering process: it presents the claim of the current generation. */
static const struct fake_step remove_script[] = {
    FAKE_CALL(GET_BACKUP),
    FAKE_REPLY(GET_BACKUP_REPLY),
    FAKE_CALL("{\"method\":\"io.timerd.Timer.Unregister\",\"parameters\":{\"claim\":" CLAIM_BACKUP
              "}}"),
    FAKE_REPLY(EMPTY_REPLY),
};

static const struct fake_step cancel_script[] = {
    FAKE_CALL(GET_BACKUP),
    FAKE_REPLY(GET_BACKUP_REPLY),
    FAKE_CALL("{\"method\":\"io.timerd.Timer.Cancel\",\"parameters\":{\"claim\":" CLAIM_BACKUP
              "}}"),
    FAKE_REPLY(EMPTY_REPLY),
};

static const struct fake_step cancel_denied_script[] = {
    FAKE_CALL(GET_BACKUP),
    FAKE_REPLY(GET_BACKUP_REPLY),
    FAKE_ANY_CALL,
    FAKE_REPLY("{\"error\":\"org.varlink.service.PermissionDenied\",\"parameters\":{}}"),
};

static const struct fake_step remove_expired_script[] = {
    FAKE_CALL(GET_BACKUP),
    FAKE_REPLY(GET_BACKUP_REPLY),
    FAKE_ANY_CALL,
    FAKE_REPLY("{\"error\":\"io.timerd.Timer.RegistrationExpired\",\"parameters\":"
               "{\"name\":\"backup\"}}"),
};

static void test_cancel_and_remove(void **state)
{
        struct run run;

        (void)state;
        run = RUN_AGAINST(remove_script, "remove", "backup");
        assert_exit(&run, 0);
        assert_string_equal(run.out, "");
        run_done(&run);

        run = RUN_AGAINST(cancel_script, "cancel", "backup");
        assert_exit(&run, 0);
        run_done(&run);

        run = RUN_AGAINST(cancel_denied_script, "cancel", "backup");
        assert_exit(&run, 4);
        assert_non_null(strstr(run.err, "timerctl: cancel backup: "));
        assert_non_null(strstr(run.err, "(org.varlink.service.PermissionDenied)\n"));
        run_done(&run);

        /* Re-registered between Get and Unregister: an ordinary failure. */
        run = RUN_AGAINST(remove_expired_script, "remove", "backup");
        assert_exit(&run, 1);
        assert_non_null(strstr(run.err, "(io.timerd.Timer.RegistrationExpired)\n"));
        run_done(&run);
}

static const struct fake_step add_every_script[] = {
    FAKE_CALL("{\"method\":\"io.timerd.Timer.Register\","
              "\"parameters\":{\"name\":\"backup\","
              "\"declaration\":{\"policy\":\"after_completion\","
              "\"cadence_usec\":3600000000,\"lifetime\":\"retained\","
              "\"accuracy_usec\":1000000,\"handover_usec\":1000},"
              "\"delay_usec\":300000000}}"),
    FAKE_REPLY("{\"parameters\":{\"claim\":" CLAIM_BACKUP "}}"),
};

static const struct fake_step add_once_script[] = {
    FAKE_CALL("{\"method\":\"io.timerd.Timer.Register\","
              "\"parameters\":{\"name\":\"tea\",\"declaration\":{\"policy\":\"once\","
              "\"clock\":\"boottime_alarm\",\"handover_usec\":1000},"
              "\"delay_usec\":90000000}}"),
    FAKE_REPLY("{\"parameters\":{\"claim\":{\"name\":\"tea\",\"generation\":1}}}"),
};

static const struct fake_step add_interval_script[] = {
    FAKE_CALL("{\"method\":\"io.timerd.Timer.Register\","
              "\"parameters\":{\"name\":\"tick\","
              "\"declaration\":{\"policy\":\"interval\",\"cadence_usec\":1500000,"
              "\"clock\":\"realtime\",\"lifetime\":\"retained\","
              "\"handover_usec\":1000},\"start_usec\":5000}}"),
    FAKE_REPLY("{\"parameters\":{\"claim\":{\"name\":\"tick\",\"generation\":1}}}"),
};

static const struct fake_step add_no_catch_up_script[] = {
    FAKE_CALL("{\"method\":\"io.timerd.Timer.Register\","
              "\"parameters\":{\"name\":\"nightly\","
              "\"declaration\":{\"policy\":\"after_completion\","
              "\"cadence_usec\":86400000000,\"clock\":\"realtime\","
              "\"lifetime\":\"retained\",\"catch_up\":false,"
              "\"randomized_delay_usec\":600000000,\"handover_usec\":1000}}}"),
    FAKE_REPLY("{\"parameters\":{\"claim\":{\"name\":\"nightly\",\"generation\":1}}}"),
};

static const struct fake_step add_handover_script[] = {
    FAKE_CALL("{\"method\":\"io.timerd.Timer.Register\","
              "\"parameters\":{\"name\":\"fast\","
              "\"declaration\":{\"policy\":\"interval\",\"cadence_usec\":10000,"
              "\"lifetime\":\"retained\",\"handover_usec\":1500}}}"),
    FAKE_REPLY("{\"parameters\":{\"claim\":{\"name\":\"fast\",\"generation\":1}}}"),
};

static const struct fake_step add_watchdog_script[] = {
    FAKE_CALL("{\"method\":\"io.timerd.Timer.Register\","
              "\"parameters\":{\"name\":\"dog\","
              "\"declaration\":{\"policy\":\"watchdog\",\"cadence_usec\":30000000,"
              "\"lifetime\":\"retained\",\"handover_usec\":1000}}}"),
    FAKE_REPLY("{\"error\":\"io.timerd.Timer.AlreadyRegistered\",\"parameters\":"
               "{\"name\":\"dog\",\"generation\":2}}"),
};

static void test_add(void **state)
{
        struct run run;

        (void)state;
        /* Retained unless --transient: timerctl's connection closes as soon as it exits. */
        run = RUN_AGAINST(add_every_script, "add", "backup", "--every", "1h", "--accuracy", "1s",
                          "--in", "5min");
        assert_exit(&run, 0);
        run_done(&run);

        run = RUN_AGAINST(add_once_script, "add", "--once", "90s", "tea", "--transient", "--clock",
                          "boottime-alarm");
        assert_exit(&run, 0);
        run_done(&run);

        run = RUN_AGAINST(add_interval_script, "add", "tick", "--interval", "1.5s", "--clock",
                          "realtime", "--at", "@0.005", "--retained");
        assert_exit(&run, 0);
        run_done(&run);

        run = RUN_AGAINST(add_no_catch_up_script, "add", "nightly", "--every", "1d", "--clock",
                          "realtime", "--no-catch-up", "--randomized-delay", "10min");
        assert_exit(&run, 0);
        run_done(&run);

        run = RUN_AGAINST(add_handover_script, "add", "fast", "--interval", "10ms", "--handover",
                          "1.5ms");
        assert_exit(&run, 0);
        run_done(&run);

        run = RUN_AGAINST(add_watchdog_script, "add", "dog", "--watchdog=30s");
        assert_exit(&run, 1);
        assert_non_null(strstr(run.err, "timerctl: add dog: "));
        assert_non_null(strstr(run.err, "(io.timerd.Timer.AlreadyRegistered)\n"));
        run_done(&run);
}

#define STATUS_REPLY                                                                               \
        "{\"parameters\":{\"epoch\":\"b1d-17-1\",\"version\":\"0.1.0\",\"backend\":\"io_uring\","  \
        "\"backend_reason\":\"\",\"pid\":42,\"uptime_usec\":1000,\"timers\":5,\"scheduled\":3,"    \
        "\"running\":1,\"failed\":1,\"pending\":2,\"connections\":4,\"waiters\":1,"                \
        "\"clock_changes\":6,\"iterations\":700,\"wakeups\":600,\"firings\":50,\"overruns\":7,"    \
        "\"stale_expiries\":8,\"slowest_iteration_usec\":900,\"lateness\":{\"samples\":50,"        \
        "\"p50_usec\":10,\"p99_usec\":250,\"max_usec\":1000},\"store\":\"ok\"}}"

static const struct fake_step status_script[] = {
    FAKE_CALL("{\"method\":\"io.timerd.Service.Status\",\"parameters\":{}}"),
    FAKE_REPLY(STATUS_REPLY),
};

static void test_status(void **state)
{
        json_object *printed;
        struct run run;

        (void)state;
        run = RUN_AGAINST(status_script, "status");
        assert_exit(&run, 0);
        assert_non_null(strstr(run.out, "Backend: io_uring\n"));
        assert_non_null(strstr(run.out, "PID: 42\n"));
        run_done(&run);

        run = RUN_AGAINST(status_script, "status", "--json");
        assert_exit(&run, 0);
        printed = json_tokener_parse(run.out);
        assert_non_null(printed);
        assert_int_equal(json_object_get_int(json_object_object_get(printed, "pid")), 42);
        json_object_put(printed);
        run_done(&run);
}

static const struct fake_step hang_up_script[] = {
    FAKE_CALL(GET_BACKUP),
    FAKE_CLOSE,
};

static const struct fake_step garbage_script[] = {
    FAKE_CALL(GET_BACKUP),
    FAKE_REPLY("{\"parameters\":{\"timer\":42}}"),
};

static void test_service_fails(void **state)
{
        struct run run;

        (void)state;
        run = RUN_AGAINST(hang_up_script, "show", "backup");
        assert_exit(&run, 5);
        assert_non_null(strstr(run.err, "timerctl: show backup: "));
        run_done(&run);

        run = RUN_AGAINST(garbage_script, "show", "backup");
        assert_exit(&run, 1);
        run_done(&run);
}

/* Without --socket: $TIMERD_SOCKET, else ./run/io.timerd when it exists. */
static void test_default_socket(void **state)
{
        struct fake_server *s;
        char variable[128];
        struct run run;

        (void)state;
        s = fake_server_start(status_script, ELEMENTSOF(status_script));
        run = run_in(fake_server_directory(s), NULL, (const char *const[]){"status", NULL});
        fake_server_finish(s);
        assert_exit(&run, 0);
        run_done(&run);

        s = fake_server_start(status_script, ELEMENTSOF(status_script));
        snprintf(variable, sizeof(variable), "TIMERD_SOCKET=%s", fake_server_path(s));
        run = run_in("/", (const char *const[]){variable, NULL},
                     (const char *const[]){"status", NULL});
        fake_server_finish(s);
        assert_exit(&run, 0);
        run_done(&run);
}

#define TOKEN_BACKUP "{\"name\":\"backup\",\"generation\":3,\"run\":7}"
#define FIRING_BACKUP                                                                              \
        "{\"token\":" TOKEN_BACKUP ",\"clock\":\"realtime\",\"deadline_usec\":1700000000000000,"   \
        "\"fired_usec\":1700000000002500,\"overruns\":0}"
#define COMPLETE_BACKUP                                                                            \
        "{\"method\":\"io.timerd.Timer.Complete\",\"parameters\":{\"token\":" TOKEN_BACKUP         \
        ",\"outcome\":\"success\",\"directive\":\"continue\"}}"

static const struct fake_step wait_script[] = {
    FAKE_CALL("{\"method\":\"io.timerd.Timer.Wait\",\"parameters\":{\"names\":[\"backup\","
              "\"other\"]}}"),
    FAKE_REPLY("{\"parameters\":{\"firing\":" FIRING_BACKUP "}}"),
    FAKE_CALL(COMPLETE_BACKUP),
    FAKE_REPLY(EMPTY_REPLY),
    FAKE_CALL("{\"method\":\"io.timerd.Timer.Wait\",\"parameters\":{\"names\":[\"backup\","
              "\"other\"]}}"),
    FAKE_REPLY("{\"parameters\":{\"firing\":" FIRING_BACKUP "}}"),
    FAKE_CALL(COMPLETE_BACKUP),
    FAKE_REPLY(EMPTY_REPLY),
};

/* Handed over 1 ms before a deadline long past: nothing to hold. */
static const struct fake_step wait_early_script[] = {
    FAKE_ANY_CALL,
    FAKE_REPLY("{\"parameters\":{\"firing\":{\"token\":" TOKEN_BACKUP ",\"clock\":\"realtime\","
               "\"deadline_usec\":1700000000000000,\"fired_usec\":1699999999999000,"
               "\"overruns\":0}}}"),
    FAKE_CALL(COMPLETE_BACKUP),
    FAKE_REPLY(EMPTY_REPLY),
};

static const struct fake_step wait_timeout_script[] = {
    FAKE_ANY_CALL,
    FAKE_REPLY("{\"error\":\"io.timerd.Timer.Timeout\",\"parameters\":{}}"),
};

static const struct fake_step wait_complete_fails_script[] = {
    FAKE_ANY_CALL,
    FAKE_REPLY("{\"parameters\":{\"firing\":" FIRING_BACKUP "}}"),
    FAKE_CALL(COMPLETE_BACKUP),
    FAKE_REPLY("{\"error\":\"io.timerd.Timer.NotRunning\",\"parameters\":{\"name\":\"backup\"}}"),
};

/* wait prints each firing and completes it; a timeout exits 6. */
static void test_wait(void **state)
{
        json_object *printed, *token;
        struct run run;

        (void)state;
        run = RUN_AGAINST(wait_script, "wait", "backup", "other", "--count", "2");
        assert_exit(&run, 0);
        assert_string_equal(run.out,
                            "backup: run 7 fired Tue 2023-11-14 22:13:20 UTC, 2ms 500us late\n"
                            "backup: run 7 fired Tue 2023-11-14 22:13:20 UTC, 2ms 500us late\n");
        run_done(&run);

        run = RUN_AGAINST(wait_early_script, "wait", "backup");
        assert_exit(&run, 0);
        assert_string_equal(
            run.out, "backup: run 7 fired Tue 2023-11-14 22:13:19 UTC, 1ms early (handover)\n");
        run_done(&run);

        run = RUN_AGAINST(wait_script, "wait", "backup", "other", "-n", "2", "--json");
        assert_exit(&run, 0);
        /* Short JSON: one firing per line. */
        assert_non_null(strchr(run.out, '\n'));
        *strchr(run.out, '\n') = 0;
        printed = json_tokener_parse(run.out);
        assert_non_null(printed);
        assert_true(
            json_object_object_get_ex(json_object_object_get(printed, "firing"), "token", &token));
        assert_int_equal(json_object_get_int(json_object_object_get(token, "run")), 7);
        json_object_put(printed);
        run_done(&run);

        run = RUN_AGAINST(wait_timeout_script, "wait", "--timeout", "1s");
        assert_exit(&run, 6);
        assert_string_equal(run.err, "timerctl: wait: no firing within 1s\n");
        run_done(&run);

        run = RUN_AGAINST(wait_complete_fails_script, "wait");
        assert_exit(&run, 1);
        assert_non_null(strstr(run.err, "timerctl: wait backup: "));
        assert_non_null(strstr(run.err, "(io.timerd.Timer.NotRunning)"));
        run_done(&run);
}

#define CONTINUATION "{\"epoch\":5,\"nonce\":6,\"cycle\":1}"
#define OBSERVATION                                                                                \
        "{\"parameters\":{\"elapsed\":false,\"observation\":{\"continuation\":" CONTINUATION       \
        ",\"lease\":9,\"remaining_usec\":1500000,\"timer\":\"poke\",\"alarms\":2}}}"

static const struct fake_step sleep_interrupted_script[] = {
    FAKE_ANY_CALL, /* the Register of the alarm */
    FAKE_REPLY("{\"parameters\":{\"claim\":{\"name\":\"poke\",\"generation\":1}}}"),
    FAKE_CALL("{\"method\":\"io.timerd.Timer.Sleep\",\"parameters\":{\"clock\":\"boottime\","
              "\"for_usec\":2000000}}"),
    FAKE_REPLY(OBSERVATION),
    FAKE_CALL(
        "{\"method\":\"io.timerd.Timer.Finish\",\"parameters\":{\"continuation\":" CONTINUATION
        ",\"lease\":9,\"action\":\"interrupt\"}}"),
    FAKE_REPLY("{\"parameters\":{\"remaining_usec\":1400000}}"),
};

static const struct fake_step sleep_resumed_script[] = {
    FAKE_ANY_CALL,
    FAKE_REPLY("{\"parameters\":{\"claim\":{\"name\":\"poke\",\"generation\":1}}}"),
    FAKE_ANY_CALL,
    FAKE_REPLY(OBSERVATION),
    FAKE_CALL(
        "{\"method\":\"io.timerd.Timer.Finish\",\"parameters\":{\"continuation\":" CONTINUATION
        ",\"lease\":9,\"action\":\"resume\"}}"),
    FAKE_REPLY("{\"parameters\":{\"ticket\":{\"continuation\":" CONTINUATION ",\"nonce\":77}}}"),
    FAKE_CALL("{\"method\":\"io.timerd.Timer.Resume\",\"parameters\":{\"ticket\":{"
              "\"continuation\":" CONTINUATION ",\"nonce\":77}}}"),
    FAKE_REPLY("{\"parameters\":{\"elapsed\":true}}"),
};

static const struct fake_step sleep_until_script[] = {
    FAKE_CALL("{\"method\":\"io.timerd.Timer.Sleep\",\"parameters\":{\"clock\":\"realtime\","
              "\"until_usec\":1796115600000000}}"),
    FAKE_REPLY("{\"parameters\":{\"elapsed\":true}}"),
};

static void test_sleep(void **state)
{
        struct run run;

        (void)state;
        /* Interrupted: said, and exit status 7, so that a script can tell. */
        run = RUN_AGAINST(sleep_interrupted_script, "sleep", "2s", "--alarm", "100ms", "--clock",
                          "boottime");
        assert_exit(&run, 7);
        assert_string_equal(run.out, "Interrupted by alarm poke (2 alarms), 1s 500ms left.\n");
        run_done(&run);

        run = RUN_AGAINST(sleep_interrupted_script, "sleep", "2s", "--alarm", "100ms", "--clock",
                          "boottime", "--json");
        assert_exit(&run, 7);
        assert_non_null(strstr(run.out, "\"elapsed\":false"));
        assert_non_null(strstr(run.out, "\"timer\":\"poke\""));
        assert_non_null(strstr(run.out, "\n{\"remaining_usec\":1400000}\n"));
        run_done(&run);

        run = RUN_AGAINST(sleep_resumed_script, "sleep", "2s", "--alarm", "1s", "--resume");
        assert_exit(&run, 0);
        assert_non_null(strstr(run.out, "Interrupted by alarm poke (2 alarms), 1s 500ms left; "
                                        "sleeping on.\nSlept "));
        run_done(&run);

        run = RUN_AGAINST(sleep_until_script, "sleep", "2026-12-01 09:00", "--clock", "realtime");
        assert_exit(&run, 0);
        assert_non_null(strstr(run.out, "Slept "));
        run_done(&run);
}

#define EVENT(kind, extra)                                                                         \
        "{\"parameters\":{\"event\":{\"kind\":\"" kind                                             \
        "\",\"owner\":1000,\"name\":\"backup\"," extra                                             \
        "\"realtime_usec\":1700000000000000}},\"continues\":true}"

static const struct fake_step monitor_script[] = {
    FAKE_CALL("{\"method\":\"io.timerd.Service.Subscribe\",\"parameters\":{},\"more\":true}"),
    FAKE_REPLY(EVENT("registered", "\"state\":\"scheduled\",")),
    FAKE_REPLY(EVENT("fired", "\"run\":4,\"state\":\"running\",")),
    FAKE_REPLY(EVENT("unregistered", "")),
    FAKE_REPLY("{\"error\":\"io.timerd.Timer.ShuttingDown\",\"parameters\":{}}"),
};

/* Two events for a monitor that stops after two: the service sends no more than it is read, or a
 * third would race the client's exit. */
static const struct fake_step monitor_two_script[] = {
    FAKE_CALL("{\"method\":\"io.timerd.Service.Subscribe\",\"parameters\":{},\"more\":true}"),
    FAKE_REPLY(EVENT("registered", "\"state\":\"scheduled\",")),
    FAKE_REPLY(EVENT("fired", "\"run\":4,\"state\":\"running\",")),
    FAKE_EXPECT_CLOSE,
};

static const struct fake_step monitor_all_script[] = {
    FAKE_CALL("{\"method\":\"io.timerd.Service.Subscribe\",\"parameters\":{\"all\":true},"
              "\"more\":true}"),
    FAKE_REPLY(EVENT("registered", "\"state\":\"scheduled\",")),
};

static const struct fake_step monitor_denied_script[] = {
    FAKE_ANY_CALL,
    FAKE_REPLY("{\"error\":\"org.varlink.service.PermissionDenied\",\"parameters\":{}}"),
};

static void test_monitor(void **state)
{
        json_object *printed;
        struct run run;

        (void)state;
        /* Until the service goes away. */
        run = RUN_AGAINST(monitor_script, "monitor");
        assert_exit(&run, 5);
        assert_string_equal(run.out,
                            "Tue 2023-11-14 22:13:20 UTC  registered    backup (scheduled)\n"
                            "Tue 2023-11-14 22:13:20 UTC  fired         backup run 4 (running)\n"
                            "Tue 2023-11-14 22:13:20 UTC  unregistered  backup\n");
        assert_non_null(strstr(run.err, "timerctl: monitor: "));
        assert_non_null(strstr(run.err, "(io.timerd.Timer.ShuttingDown)"));
        run_done(&run);

        run = RUN_AGAINST(monitor_two_script, "monitor", "-n", "2", "--json=short");
        assert_exit(&run, 0);
        assert_non_null(strstr(run.out, "\n"));
        *strchr(run.out, '\n') = 0;
        printed = json_tokener_parse(run.out);
        assert_non_null(printed);
        assert_string_equal(json_object_get_string(json_object_object_get(
                                json_object_object_get(printed, "event"), "kind")),
                            "registered");
        json_object_put(printed);
        run_done(&run);

        run = RUN_AGAINST(monitor_all_script, "monitor", "--all", "--count", "1");
        assert_exit(&run, 0);
        assert_string_equal(run.out,
                            "Tue 2023-11-14 22:13:20 UTC  registered    1000/backup (scheduled)\n");
        run_done(&run);

        run = RUN_AGAINST(monitor_denied_script, "monitor", "-a");
        assert_exit(&run, 4);
        run_done(&run);
}

#define DECLARATION_JOB                                                                            \
        "{\"policy\":\"after_completion\",\"cadence_usec\":3600000000,"                            \
        "\"lifetime\":\"retained\",\"handover_usec\":1000}"

static const struct fake_step reconcile_script[] = {
    FAKE_CALL("{\"method\":\"io.timerd.Timer.Reconcile\",\"parameters\":{\"name\":\"job\","
              "\"declaration\":" DECLARATION_JOB ",\"desired\":\"scheduled\"}}"),
    FAKE_REPLY("{\"parameters\":{\"claim\":{\"name\":\"job\",\"generation\":2},"
               "\"created\":false}}"),
};

static const struct fake_step reconcile_exact_script[] = {
    FAKE_CALL("{\"method\":\"io.timerd.Timer.Reconcile\",\"parameters\":{\"name\":\"job\","
              "\"declaration\":{\"policy\":\"once\",\"clock\":\"realtime\","
              "\"lifetime\":\"retained\",\"delivery\":\"alarm\"},\"desired\":\"exact\","
              "\"deadline_usec\":1796115600000000}}"),
    FAKE_REPLY("{\"parameters\":{\"claim\":{\"name\":\"job\",\"generation\":1},"
               "\"created\":true}}"),
};

static const struct fake_step reconcile_conflict_script[] = {
    FAKE_ANY_CALL,
    FAKE_REPLY("{\"error\":\"io.timerd.Timer.ReconciliationConflict\",\"parameters\":"
               "{\"name\":\"job\"}}"),
};

static void test_reconcile(void **state)
{
        struct run run;

        (void)state;
        run = RUN_AGAINST(reconcile_script, "reconcile", "job", "--every", "1h");
        assert_exit(&run, 0);
        assert_string_equal(run.out, "job: already declared\n");
        run_done(&run);

        run = RUN_AGAINST(reconcile_exact_script, "reconcile", "job", "--once", "--clock",
                          "realtime", "--delivery", "alarm", "--at", "2026-12-01 09:00");
        assert_exit(&run, 0);
        assert_string_equal(run.out, "job: created\n");
        run_done(&run);

        run = RUN_AGAINST(reconcile_exact_script, "reconcile", "job", "--once", "--clock",
                          "realtime", "--delivery", "alarm", "--at", "2026-12-01 09:00", "--json");
        assert_exit(&run, 0);
        assert_string_equal(run.out,
                            "{\"claim\":{\"name\":\"job\",\"generation\":1},\"created\":true}\n");
        run_done(&run);

        run = RUN_AGAINST(reconcile_conflict_script, "reconcile", "job", "--every", "1h");
        assert_exit(&run, 1);
        assert_non_null(strstr(run.err, "(io.timerd.Timer.ReconciliationConflict)"));
        run_done(&run);
}

static const struct fake_step schedule_script[] = {
    FAKE_CALL(GET_BACKUP),
    FAKE_REPLY(GET_BACKUP_REPLY),
    FAKE_CALL("{\"method\":\"io.timerd.Timer.Schedule\",\"parameters\":{\"claim\":" CLAIM_BACKUP
              ",\"delay_usec\":300000000}}"),
    FAKE_REPLY(EMPTY_REPLY),
};

static const struct fake_step reschedule_script[] = {
    FAKE_CALL(GET_BACKUP),
    FAKE_REPLY(GET_BACKUP_REPLY),
    FAKE_CALL("{\"method\":\"io.timerd.Timer.Reschedule\",\"parameters\":{\"claim\":" CLAIM_BACKUP
              ",\"cadence_usec\":600000000}}"),
    FAKE_REPLY("{\"parameters\":{\"remaining_usec\":240000000,\"cadence_usec\":300000000}}"),
};

static const struct fake_step kick_script[] = {
    FAKE_CALL(GET_BACKUP),
    FAKE_REPLY(GET_BACKUP_REPLY),
    FAKE_CALL("{\"method\":\"io.timerd.Timer.Kick\",\"parameters\":{\"claim\":" CLAIM_BACKUP "}}"),
    FAKE_REPLY("{\"parameters\":{\"next_usec\":5000000}}"),
};

static void test_schedule_reschedule_kick(void **state)
{
        struct run run;

        (void)state;
        run = RUN_AGAINST(schedule_script, "schedule", "backup", "--at", "+5min");
        assert_exit(&run, 0);
        assert_string_equal(run.out, "");
        run_done(&run);

        run = RUN_AGAINST(reschedule_script, "reschedule", "backup", "--cadence", "10min");
        assert_exit(&run, 0);
        assert_string_equal(run.out, "Was: 4min left, every 5min\n");
        run_done(&run);

        run =
            RUN_AGAINST(reschedule_script, "reschedule", "backup", "--cadence", "10min", "--json");
        assert_exit(&run, 0);
        assert_string_equal(run.out, "{\"remaining_usec\":240000000,\"cadence_usec\":300000000}\n");
        run_done(&run);

        run = RUN_AGAINST(kick_script, "kick", "backup");
        assert_exit(&run, 0);
        assert_true(strncmp(run.out, "Next: ", 6) == 0);
        run_done(&run);

        run = RUN_AGAINST(kick_script, "kick", "backup", "--json=pretty");
        assert_exit(&run, 0);
        assert_string_equal(run.out, "{\n  \"next_usec\": 5000000\n}\n");
        run_done(&run);

        run = RUN_AGAINST(not_found_script, "kick", "backup");
        assert_exit(&run, 3);
        run_done(&run);
}

/* root's, and a uid without a user name. */
static const struct fake_step list_all_script[] = {
    FAKE_CALL("{\"method\":\"io.timerd.Timer.List\",\"parameters\":{\"all\":true}}"),
    FAKE_REPLY("{\"parameters\":{\"timers\":[" TIMER_BACKUP_OF("0") "," TIMER_BACKUP_OF(
        "4000000000") "]}}"),
};

static void test_list_options(void **state)
{
        struct run run;

        (void)state;
        /* OWNER by user name, by number where the uid has none. */
        run = RUN_AGAINST(list_all_script, "list", "--all", "--no-legend", "--no-pager");
        assert_exit(&run, 0);
        assert_non_null(strstr(run.out, "  root        backup  interval  monotonic  scheduled\n"));
        assert_non_null(strstr(run.out, "  4000000000  backup  interval  monotonic  scheduled\n"));
        assert_true(strstr(run.out, "root") < strstr(run.out, "4000000000"));
        assert_null(strstr(run.out, "NEXT"));
        assert_null(strstr(run.out, "listed"));
        run_done(&run);

        run = RUN_AGAINST(list_all_script, "-a", "--json=pretty");
        assert_exit(&run, 0);
        assert_true(strncmp(run.out, "{\n  \"timers\": [\n", 16) == 0);
        run_done(&run);

        run = RUN_AGAINST(list_all_script, "list", "-a", "--json");
        assert_exit(&run, 0);
        assert_true(strncmp(run.out, "{\"timers\":[{\"owner\":0,", 22) == 0);
        assert_int_equal(strchr(run.out, '\n') - run.out, strlen(run.out) - 1);
        run_done(&run);
}

/* --user: every call names the owner, the claim looked up included. */
#define GET_BACKUP_OF(owner)                                                                       \
        "{\"method\":\"io.timerd.Timer.Get\",\"parameters\":{\"name\":\"backup\",\"owner\":" owner \
        "}}"

static const struct fake_step cancel_as_script[] = {
    FAKE_CALL(GET_BACKUP_OF("64001")),
    FAKE_REPLY(GET_BACKUP_REPLY),
    FAKE_CALL("{\"method\":\"io.timerd.Timer.Cancel\",\"parameters\":{\"claim\":" CLAIM_BACKUP
              ",\"owner\":64001}}"),
    FAKE_REPLY(EMPTY_REPLY),
};

static const struct fake_step show_as_root_script[] = {
    FAKE_CALL(GET_BACKUP_OF("0")),
    FAKE_REPLY(GET_BACKUP_REPLY),
};

static const struct fake_step kick_as_script[] = {
    FAKE_CALL(GET_BACKUP_OF("64001")),
    FAKE_REPLY(GET_BACKUP_REPLY),
    FAKE_CALL("{\"method\":\"io.timerd.Timer.Kick\",\"parameters\":{\"claim\":" CLAIM_BACKUP
              ",\"owner\":64001}}"),
    FAKE_REPLY("{\"parameters\":{\"next_usec\":9000000}}"),
};

static const struct fake_step remove_denied_script[] = {
    FAKE_CALL(GET_BACKUP_OF("0")),
    FAKE_REPLY("{\"error\":\"org.varlink.service.PermissionDenied\",\"parameters\":{}}"),
};

static const struct fake_step add_as_script[] = {
    FAKE_CALL("{\"method\":\"io.timerd.Timer.Register\","
              "\"parameters\":{\"name\":\"tea\",\"declaration\":{\"policy\":\"once\","
              "\"lifetime\":\"retained\",\"handover_usec\":1000},\"owner\":64001}}"),
    FAKE_REPLY("{\"parameters\":{\"claim\":{\"name\":\"tea\",\"generation\":1}}}"),
};

static const struct fake_step wait_as_script[] = {
    FAKE_CALL("{\"method\":\"io.timerd.Timer.Wait\",\"parameters\":{\"names\":[\"backup\"],"
              "\"owner\":64001}}"),
    FAKE_REPLY("{\"parameters\":{\"firing\":" FIRING_BACKUP "}}"),
    FAKE_CALL("{\"method\":\"io.timerd.Timer.Complete\",\"parameters\":{\"token\":" TOKEN_BACKUP
              ",\"outcome\":\"success\",\"directive\":\"continue\",\"owner\":64001}}"),
    FAKE_REPLY(EMPTY_REPLY),
};

static const struct fake_step list_as_script[] = {
    FAKE_CALL("{\"method\":\"io.timerd.Timer.List\",\"parameters\":{\"owner\":64001}}"),
    FAKE_REPLY("{\"parameters\":{\"timers\":[" TIMER_BACKUP_OF("64001") "]}}"),
};

static void test_user(void **state)
{
        struct run run;

        (void)state;
        run = RUN_AGAINST(cancel_as_script, "cancel", "backup", "--user", "64001");
        assert_exit(&run, 0);
        run_done(&run);

        run = RUN_AGAINST(show_as_root_script, "-U", "root", "show", "backup", "--json");
        assert_exit(&run, 0);
        assert_non_null(strstr(run.out, "\"name\":\"backup\""));
        run_done(&run);

        run = RUN_AGAINST(show_as_root_script, "show", "backup", "--user=0", "-p", "state");
        assert_exit(&run, 0);
        assert_string_equal(run.out, "state=scheduled\n");
        run_done(&run);

        run = RUN_AGAINST(kick_as_script, "kick", "-U", "64001", "backup", "--json");
        assert_exit(&run, 0);
        assert_string_equal(run.out, "{\"next_usec\":9000000}\n");
        run_done(&run);

        /* The service decides who may: anyone but root may name only themselves. */
        run = RUN_AGAINST(remove_denied_script, "remove", "backup", "-U", "root");
        assert_exit(&run, 4);
        assert_non_null(strstr(run.err, "timerctl: remove backup: permission denied"));
        run_done(&run);

        run = RUN_AGAINST(add_as_script, "add", "tea", "--once", "-U", "64001");
        assert_exit(&run, 0);
        run_done(&run);

        run = RUN_AGAINST(wait_as_script, "wait", "backup", "-U", "64001");
        assert_exit(&run, 0);
        assert_non_null(strstr(run.out, "backup: run 7 fired "));
        run_done(&run);

        /* One owner's list has no OWNER column; its JSON asks for that owner too. */
        run = RUN_AGAINST(list_as_script, "list", "-U", "64001");
        assert_exit(&run, 0);
        assert_null(strstr(run.out, "OWNER"));
        assert_non_null(strstr(run.out, "  backup  interval  monotonic  scheduled\n"));
        run_done(&run);

        run = RUN_AGAINST(list_as_script, "list", "-U", "64001", "--json");
        assert_exit(&run, 0);
        assert_true(strncmp(run.out, "{\"timers\":[{\"owner\":64001,", 26) == 0);
        run_done(&run);
}

/* Nothing is sent: timerctl finds the error itself, once it knows the timer's clock. */
static const struct fake_step no_call_script[] = {
    FAKE_EXPECT_CLOSE,
};

static const struct fake_step schedule_too_far_script[] = {
    FAKE_CALL(GET_BACKUP),
    FAKE_REPLY(GET_BACKUP_REPLY),
    FAKE_EXPECT_CLOSE,
};

/* A span that fits the wire, but not once the service adds it to now on the timer's clock. */
static void test_too_far(void **state)
{
        struct run run;

        (void)state;
        run = RUN_AGAINST(no_call_script, "add", "a", "--clock", "realtime", "--once",
                          "9223372036854775807us");
        assert_exit(&run, 2);
        assert_non_null(strstr(run.err, "timerctl: --once: too far in the future"));
        run_done(&run);

        run = RUN_AGAINST(no_call_script, "add", "a", "--clock", "realtime", "--every",
                          "9223372036854775000us");
        assert_exit(&run, 2);
        assert_non_null(strstr(run.err, "timerctl: --every: too far in the future"));
        run_done(&run);

        run = RUN_AGAINST(no_call_script, "sleep", "9223372036854775807us", "--clock", "realtime");
        assert_exit(&run, 2);
        assert_non_null(strstr(run.err, "timerctl: sleep: \"9223372036854775807us\": too far"));
        run_done(&run);

        run = RUN_AGAINST(schedule_too_far_script, "schedule", "backup", "--in",
                          "9223372036854775807us");
        assert_exit(&run, 2);
        assert_non_null(strstr(run.err, "timerctl: --in: too far in the future"));
        run_done(&run);
}

/* Two pages: the second is asked for after the first's cursor. */
#define LIST_PAGES_SCRIPT(all_prefix)                                                              \
        FAKE_CALL("{\"method\":\"io.timerd.Timer.List\",\"parameters\":{" all_prefix "}}"),        \
            FAKE_REPLY("{\"parameters\":{\"timers\":[" TIMER_BACKUP "],\"next\":{\"owner\":1000,"  \
                       "\"name\":\"backup\"}}}"),                                                  \
            FAKE_CALL("{\"method\":\"io.timerd.Timer.List\",\"parameters\":{" all_prefix           \
                      "\"after\":{\"owner\":1000,\"name\":\"backup\"}}}"),                         \
            FAKE_REPLY("{\"parameters\":{\"timers\":[" TIMER_BACKUP "]}}")

static const struct fake_step list_pages_script[] = {LIST_PAGES_SCRIPT("")};
static const struct fake_step list_all_pages_script[] = {LIST_PAGES_SCRIPT("\"all\":true,")};

static const struct fake_step list_stuck_script[] = {
    FAKE_ANY_CALL,
    FAKE_REPLY("{\"parameters\":{\"timers\":[],\"next\":{\"owner\":1000,\"name\":\"a\"}}}"),
};

/* list follows the pages: one table, one JSON array, without the cursors. */
static void test_list_pages(void **state)
{
        json_object *printed, *timers;
        struct run run;

        (void)state;
        run = RUN_AGAINST(list_pages_script, "list");
        assert_exit(&run, 0);
        assert_non_null(strstr(run.out, "\n\n2 timers listed.\n"));
        run_done(&run);

        run = RUN_AGAINST(list_all_pages_script, "list", "--all", "--json");
        assert_exit(&run, 0);
        printed = json_tokener_parse(run.out);
        assert_non_null(printed);
        assert_true(json_object_object_get_ex(printed, "timers", &timers));
        assert_int_equal(json_object_array_length(timers), 2);
        assert_int_equal(json_object_object_length(printed), 1);
        json_object_put(printed);
        run_done(&run);

        run = RUN_AGAINST(list_stuck_script, "list", "--json");
        assert_exit(&run, 1);
        assert_string_equal(run.out, "");
        run_done(&run);
}

static void test_show_properties(void **state)
{
        struct run run;

        (void)state;
        run = RUN_AGAINST(show_script, "show", "backup", "-p", "state,next_usec", "--property",
                          "policy", "-p", "last_start_usec,run_active,failure");
        assert_exit(&run, 0);
        assert_string_equal(run.out, "state=scheduled\nnext_usec=5000000\npolicy=interval\n"
                                     "last_start_usec=\nrun_active=no\nfailure=\n");
        run_done(&run);

        run = RUN_AGAINST(show_script, "show", "backup", "-p", "signal,catch_up", "-p",
                          "randomized_delay_usec");
        assert_exit(&run, 0);
        assert_string_equal(run.out, "signal=\ncatch_up=yes\nrandomized_delay_usec=0\n");
        run_done(&run);

        run = RUN_AGAINST(show_handover_script, "show", "fast", "-p", "handover_usec");
        assert_exit(&run, 0);
        assert_string_equal(run.out, "handover_usec=1500\n");
        run_done(&run);

        run = RUN_AGAINST(show_script, "show", "backup", "-p", "cadence_usec", "--value");
        assert_exit(&run, 0);
        assert_string_equal(run.out, "300000000\n");
        run_done(&run);
}

#define STATUS_WITH_CAPABILITIES                                                                   \
        "{\"parameters\":{\"epoch\":\"b1d-17-1\",\"version\":\"0.1.0\",\"backend\":\"io_uring\","  \
        "\"backend_reason\":\"\",\"pid\":42,\"uptime_usec\":1000,\"timers\":5,\"scheduled\":3,"    \
        "\"running\":1,\"failed\":1,\"pending\":2,\"connections\":4,\"waiters\":1,"                \
        "\"clock_changes\":6,\"iterations\":700,\"wakeups\":600,\"firings\":50,\"overruns\":7,"    \
        "\"stale_expiries\":8,\"slowest_iteration_usec\":900,\"lateness\":{\"samples\":50,"        \
        "\"p50_usec\":10,\"p99_usec\":250,\"max_usec\":1000},\"store\":\"ok\","                    \
        "\"capabilities\":[\"wake_alarm\",\"signal\"]}}"

static const struct fake_step status_capabilities_script[] = {
    FAKE_ANY_CALL,
    FAKE_REPLY(STATUS_WITH_CAPABILITIES),
};

static void test_status_capabilities(void **state)
{
        struct run run;

        (void)state;
        run = RUN_AGAINST(status_capabilities_script, "status");
        assert_exit(&run, 0);
        assert_non_null(strstr(run.out, "      Capabilities: wake_alarm signal\n"));
        assert_non_null(strstr(run.out, "     Clock changes: 6\n"));
        assert_non_null(strstr(run.out, "             Epoch: b1d-17-1\n"));
        assert_non_null(strstr(run.out, "             Store: ok\n"));
        run_done(&run);
}

/* On a terminal: colors, and a table as wide as the terminal. */
static struct run run_on_terminal(const struct fake_step *steps, size_t n_steps,
                                  unsigned short columns, const char *const *env)
{
        char *sanitizer_settings[ELEMENTSOF(sanitizer_variables)];
        const char *argv[ARGS_MAX + 2] = {}, *envp[ARGS_MAX + 1];
        struct winsize size = {.ws_row = 24, .ws_col = columns};
        struct fake_server *s = fake_server_start(steps, n_steps);
        struct run run = {.out = calloc(1, 65536), .err = strdup("")};
        char exe[PATH_MAX];
        size_t len = 0;
        int terminal, status;
        pid_t pid;

        assert_non_null(run.out);
        timerctl_path(exe);
        child_arguments((const char *const[]){"--socket", fake_server_path(s), "list", NULL}, argv);
        child_environment(env, envp, sanitizer_settings);
        pid = forkpty(&terminal, NULL, NULL, &size);
        assert_true(pid >= 0);
        if (pid == 0) {
                execve(exe, (char *const *)argv, (char *const *)envp);
                _exit(127);
        }
        /* Until the child's side closes (EIO), without the terminal's \r. */
        for (;;) {
                char chunk[4096];
                ssize_t n = read(terminal, chunk, sizeof(chunk));

                if (n <= 0)
                        break;
                for (ssize_t i = 0; i < n; i++)
                        if (chunk[i] != '\r' && len < 65535)
                                run.out[len++] = chunk[i];
        }
        close(terminal);
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        run.status = WEXITSTATUS(status);
        fake_server_finish(s);
        for (size_t i = 0; i < ELEMENTSOF(sanitizer_settings); i++)
                free(sanitizer_settings[i]);
        return run;
}

static void test_terminal(void **state)
{
        static const char *const color_env[] = {"TERM=xterm", NULL};
        static const char *const no_color_env[] = {"TERM=xterm", "NO_COLOR=1", NULL};
        struct run run;

        (void)state;
        run = run_on_terminal(list_script, ELEMENTSOF(list_script), 200, color_env);
        assert_exit(&run, 0);
        assert_non_null(strstr(run.out, "\033[4mNEXT\033[0m"));
        assert_non_null(strstr(run.out, "CLOCK"));
        run_done(&run);

        /* 70 columns: the columns that do not fit are left out. */
        run = run_on_terminal(list_script, ELEMENTSOF(list_script), 70, no_color_env);
        assert_exit(&run, 0);
        assert_null(strchr(run.out, '\033'));
        assert_non_null(strstr(run.out, "NEXT"));
        assert_null(strstr(run.out, "CLOCK"));
        for (char *line = strtok(run.out, "\n"); line; line = strtok(NULL, "\n"))
                if (strlen(line) > 70)
                        fail_msg("\"%s\" is wider than the terminal", line);
        run_done(&run);

        /* $COLUMNS wins; TERM=dumb has no colors. */
        run = run_on_terminal(list_script, ELEMENTSOF(list_script), 70,
                              (const char *const[]){"TERM=dumb", "COLUMNS=300", NULL});
        assert_exit(&run, 0);
        assert_null(strchr(run.out, '\033'));
        assert_non_null(strstr(run.out, "CLOCK"));
        run_done(&run);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_usage_errors),
            cmocka_unit_test(test_help_and_version),
            cmocka_unit_test(test_unreachable),
            cmocka_unit_test(test_list),
            cmocka_unit_test(test_list_json),
            cmocka_unit_test(test_show),
            cmocka_unit_test(test_not_found),
            cmocka_unit_test(test_cancel_and_remove),
            cmocka_unit_test(test_add),
            cmocka_unit_test(test_status),
            cmocka_unit_test(test_service_fails),
            cmocka_unit_test(test_default_socket),
            cmocka_unit_test(test_wait),
            cmocka_unit_test(test_sleep),
            cmocka_unit_test(test_monitor),
            cmocka_unit_test(test_reconcile),
            cmocka_unit_test(test_schedule_reschedule_kick),
            cmocka_unit_test(test_list_options),
            cmocka_unit_test(test_user),
            cmocka_unit_test(test_too_far),
            cmocka_unit_test(test_list_pages),
            cmocka_unit_test(test_show_properties),
            cmocka_unit_test(test_status_capabilities),
            cmocka_unit_test(test_terminal),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
