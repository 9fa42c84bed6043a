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
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "fake-server.h"

#define ELEMENTSOF(a) (sizeof(a) / sizeof((a)[0]))
#define ARGS_MAX      16

#define EMPTY_REPLY "{\"parameters\":{}}"

#define TIMER_BACKUP                                                                               \
        "{\"owner\":1000,\"name\":\"backup\",\"declaration\":{\"policy\":\"interval\","            \
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

/*
 * Run timerctl with args (NULL-terminated, without argv[0]) in directory cwd (NULL: this one),
 * with only the environment given (NULL-terminated, may be NULL).
 */
static struct run run_in(const char *cwd, const char *const *env, const char *const *args)
{
        const char *variable = getenv("TIMERCTL");
        char exe[PATH_MAX];
        const char *argv[ARGS_MAX + 2] = {"timerctl"};
        static const char *const sanitizer_variables[] = {"ASAN_OPTIONS", "UBSAN_OPTIONS"};
        char *sanitizer_settings[ELEMENTSOF(sanitizer_variables)] = {};
        const char *envp[ARGS_MAX + 1] = {"TZ=UTC", "LC_ALL=C"};
        struct run run = {};
        int out, err, status;
        size_t n_env = 2;
        pid_t pid;

        /* Absolute: the child may change directory before it runs timerctl. */
        assert_non_null(variable);
        assert_non_null(realpath(variable, exe));
        for (size_t i = 0; args[i]; i++) {
                assert_true(i < ARGS_MAX);
                argv[i + 1] = args[i];
        }
        for (size_t i = 0; env && env[i]; i++) {
                assert_true(n_env < ARGS_MAX);
                envp[n_env++] = env[i];
        }
        /* Under sanitizers, a finding in timerctl must fail the run as it does here. */
        for (size_t i = 0; i < ELEMENTSOF(sanitizer_variables); i++) {
                const char *value = getenv(sanitizer_variables[i]);

                if (value &&
                    asprintf(&sanitizer_settings[i], "%s=%s", sanitizer_variables[i], value) > 0) {
                        assert_true(n_env < ARGS_MAX);
                        envp[n_env++] = sanitizer_settings[i];
                }
        }
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
    {{"--json=yes", "list"}, "invalid option \"--json=yes\""},
    {{"--socket"}, "option \"--socket\" needs an argument"},
    {{"show"}, "show needs exactly one timer name"},
    {{"show", "a", "b"}, "show needs exactly one timer name"},
    {{"remove"}, "remove needs exactly one timer name"},
    {{"cancel"}, "cancel needs exactly one timer name"},
    {{"status", "x"}, "status takes no arguments"},
    {{"list", "x"}, "list takes no arguments"},
    {{"list", "--every", "5s"}, "option \"--every\" is only valid with add"},
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
    {{"add", "a", "--once", "--in", "3s", "--at", "5"}, "--in and --at cannot be combined"},
    {{"add", "a", "--once", "--at", "soon"}, "--at: \"soon\": not a number of microseconds"},
    {{"add", "a", "--once", "--at", "-5"}, "--at: \"-5\": not a number of microseconds"},
    {{"add", "a", "--once", "--at", "99999999999999999999"},
     "--at: \"99999999999999999999\": too large"},
    {{"add", "a", "--once", "--clock", "sundial"}, "--clock: \"sundial\": not a clock"},
    {{"add", "a", "--once", "--accuracy", "fast"}, "--accuracy: \"fast\": not a time span"},
    {{"add", "a", "--once", "--retained", "--transient"},
     "--retained and --transient cannot be combined"},
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

static void test_help_and_version(void **state)
{
        struct run run;

        (void)state;
        run = RUN("--help");
        assert_exit(&run, 0);
        assert_non_null(strstr(run.out, "Usage: timerctl"));
        assert_non_null(strstr(run.out, "Exit status:"));
        assert_non_null(strstr(run.out, "5 service unreachable"));
        assert_non_null(strstr(run.out, "--transient"));
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
        assert_non_null(strstr(run.out, "  NAME    POLICY    STATE\n"));
        assert_non_null(strstr(run.out, "  backup  interval  scheduled\n"));
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
    FAKE_CALL("{\"method\":\"io.timerd.Timer.Register\",\"parameters\":{\"name\":\"backup\","
              "\"declaration\":{\"policy\":\"after_completion\",\"cadence_usec\":3600000000,"
              "\"clock\":\"monotonic\",\"lifetime\":\"retained\",\"delivery\":\"notify\","
              "\"accuracy_usec\":1000000},\"delay_usec\":300000000}}"),
    FAKE_REPLY("{\"parameters\":{\"claim\":" CLAIM_BACKUP "}}"),
};

static const struct fake_step add_once_script[] = {
    FAKE_CALL("{\"method\":\"io.timerd.Timer.Register\",\"parameters\":{\"name\":\"tea\","
              "\"declaration\":{\"policy\":\"once\",\"clock\":\"boottime_alarm\","
              "\"lifetime\":\"transient\",\"delivery\":\"notify\"},\"delay_usec\":90000000}}"),
    FAKE_REPLY("{\"parameters\":{\"claim\":{\"name\":\"tea\",\"generation\":1}}}"),
};

static const struct fake_step add_interval_script[] = {
    FAKE_CALL("{\"method\":\"io.timerd.Timer.Register\",\"parameters\":{\"name\":\"tick\","
              "\"declaration\":{\"policy\":\"interval\",\"cadence_usec\":1500000,"
              "\"clock\":\"realtime\",\"lifetime\":\"retained\",\"delivery\":\"notify\"},"
              "\"start_usec\":5000}}"),
    FAKE_REPLY("{\"parameters\":{\"claim\":{\"name\":\"tick\",\"generation\":1}}}"),
};

static const struct fake_step add_watchdog_script[] = {
    FAKE_CALL("{\"method\":\"io.timerd.Timer.Register\",\"parameters\":{\"name\":\"dog\","
              "\"declaration\":{\"policy\":\"watchdog\",\"cadence_usec\":30000000,"
              "\"clock\":\"monotonic\",\"lifetime\":\"retained\",\"delivery\":\"notify\"}}}"),
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
                          "realtime", "--at", "5000", "--retained");
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

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_usage_errors),  cmocka_unit_test(test_help_and_version),
            cmocka_unit_test(test_unreachable),   cmocka_unit_test(test_list),
            cmocka_unit_test(test_list_json),     cmocka_unit_test(test_show),
            cmocka_unit_test(test_not_found),     cmocka_unit_test(test_cancel_and_remove),
            cmocka_unit_test(test_add),           cmocka_unit_test(test_status),
            cmocka_unit_test(test_service_fails), cmocka_unit_test(test_default_socket),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
