/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libtimerd's connection: finding and connecting to the socket, the transport failing under it
 * (service gone, garbage, oversize replies), and naming errors.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "fake-server.h"
#include "timerd/timerd.h"
#include "varlink/names.h"

#define STATUS_CALL "{\"method\":\"io.timerd.Service.Status\",\"parameters\":{}}"
#define GET_CALL    "{\"method\":\"io.timerd.Timer.Get\",\"parameters\":{\"name\":\"a\"}}"

static struct timerd *connect_to(const struct fake_server *s)
{
        struct timerd *t = NULL;

        assert_int_equal(timerd_connect(fake_server_path(s), &t), 0);
        assert_non_null(t);
        return t;
}

static void test_connect_missing_socket(void **state)
{
        struct timerd *t = NULL;

        (void)state;
        assert_int_equal(timerd_connect("/nonexistent/timerd/io.timerd", &t), -ENOENT);
        assert_null(t);
}

static void test_connect_refused(void **state)
{
        char directory[] = "/tmp/timerd-client-test-XXXXXX", path[96];
        struct sockaddr_un address = {.sun_family = AF_UNIX};
        struct timerd *t = NULL;
        int fd;

        (void)state;
        /* A socket left behind by a service that is gone: bound, nobody listening. */
        assert_non_null(mkdtemp(directory));
        snprintf(path, sizeof(path), "%s/io.timerd", directory);
        strcpy(address.sun_path, path);
        fd = socket(AF_UNIX, SOCK_STREAM, 0);
        assert_true(fd >= 0);
        assert_int_equal(bind(fd, (struct sockaddr *)&address, sizeof(address)), 0);

        assert_int_equal(timerd_connect(path, &t), -ECONNREFUSED);
        assert_null(t);

        close(fd);
        unlink(path);
        rmdir(directory);
}

static void test_connect_bad_arguments(void **state)
{
        char long_path[200];
        struct timerd *t = NULL;

        (void)state;
        memset(long_path, 'a', sizeof(long_path) - 1);
        long_path[sizeof(long_path) - 1] = 0;
        assert_int_equal(timerd_connect(long_path, &t), -ENAMETOOLONG);
        assert_int_equal(timerd_connect("", &t), -EINVAL);
        assert_int_equal(timerd_connect("/run/timerd/io.timerd", NULL), -EINVAL);
        assert_null(t);
}

static void test_default_socket_environment(void **state)
{
        (void)state;
        assert_int_equal(setenv("TIMERD_SOCKET", "/somewhere/else.sock", 1), 0);
        assert_string_equal(timerd_default_socket(), "/somewhere/else.sock");
        unsetenv("TIMERD_SOCKET");
}

/* In a working directory without run/io.timerd: the system socket; with it: the embedded one. */
static void test_default_socket_working_directory(void **state)
{
        char directory[] = "/tmp/timerd-client-test-XXXXXX", run[64], socket_path[96],
             cwd[PATH_MAX];
        FILE *f;

        (void)state;
        assert_non_null(getcwd(cwd, sizeof(cwd)));
        assert_non_null(mkdtemp(directory));
        assert_int_equal(chdir(directory), 0);
        unsetenv("TIMERD_SOCKET");
        assert_string_equal(timerd_default_socket(), TIMERD_SOCKET_SYSTEM);

        snprintf(run, sizeof(run), "%s/run", directory);
        snprintf(socket_path, sizeof(socket_path), "%s/io.timerd", run);
        assert_int_equal(mkdir(run, 0700), 0);
        f = fopen(socket_path, "w");
        assert_non_null(f);
        fclose(f);
        assert_string_equal(timerd_default_socket(), TIMERD_SOCKET_EMBEDDED);

        /* An empty variable counts as unset. */
        assert_int_equal(setenv("TIMERD_SOCKET", "", 1), 0);
        assert_string_equal(timerd_default_socket(), TIMERD_SOCKET_EMBEDDED);
        unsetenv("TIMERD_SOCKET");

        assert_int_equal(chdir(cwd), 0);
        unlink(socket_path);
        rmdir(run);
        rmdir(directory);
}

/* timerd_connect(NULL) reached the fake server when its scripted answer comes back. */
static void status_on_default_socket(void)
{
        struct timerd_status status;
        struct timerd *t = NULL;

        assert_int_equal(timerd_connect(NULL, &t), 0);
        assert_int_equal(timerd_status(t, &status), -TIMERD_E_BUSY);
        timerd_close(t);
}

static const struct fake_step busy_script[] = {
    FAKE_CALL(STATUS_CALL),
    FAKE_REPLY("{\"error\":\"io.timerd.Timer.Busy\",\"parameters\":{}}"),
};

static void test_connect_default_from_environment(void **state)
{
        struct fake_server *s = fake_server_start(busy_script, 2);

        (void)state;
        assert_int_equal(setenv("TIMERD_SOCKET", fake_server_path(s), 1), 0);
        status_on_default_socket();
        unsetenv("TIMERD_SOCKET");
        fake_server_finish(s);
}

static void test_connect_default_embedded(void **state)
{
        struct fake_server *s = fake_server_start(busy_script, 2);
        char cwd[PATH_MAX];

        (void)state;
        unsetenv("TIMERD_SOCKET");
        assert_non_null(getcwd(cwd, sizeof(cwd)));
        assert_int_equal(chdir(fake_server_directory(s)), 0);
        status_on_default_socket();
        assert_int_equal(chdir(cwd), 0);
        fake_server_finish(s);
}

static const struct fake_step eof_mid_reply_script[] = {
    FAKE_CALL(STATUS_CALL),
    FAKE_RAW("{\"parameters\":{\"epoch\":"),
    FAKE_CLOSE,
};

static void test_eof_mid_reply(void **state)
{
        struct fake_server *s = fake_server_start(eof_mid_reply_script, 3);
        struct timerd *t = connect_to(s);
        struct timerd_status status;

        (void)state;
        assert_int_equal(timerd_status(t, &status), -TIMERD_E_DISCONNECTED);
        assert_null(timerd_last_error_name(t));
        /* No silent reconnect: the connection stays dead. */
        assert_int_equal(timerd_status(t, &status), -TIMERD_E_DISCONNECTED);
        timerd_close(t);
        fake_server_finish(s);
}

static const struct fake_step hang_up_script[] = {
    FAKE_CLOSE,
};

/* Writing to a service that is gone must not raise SIGPIPE (which would kill this test). */
static void test_service_gone_before_call(void **state)
{
        struct fake_server *s = fake_server_start(hang_up_script, 1);
        struct timerd *t = connect_to(s);
        struct timerd_status status;

        (void)state;
        fake_server_join(s);
        assert_int_equal(timerd_status(t, &status), -TIMERD_E_DISCONNECTED);
        timerd_close(t);
        fake_server_finish(s);
}

static const struct fake_step garbage_script[] = {
    FAKE_CALL(GET_CALL),
    FAKE_REPLY("{\"parameters\": {not json"),
    FAKE_CALL(GET_CALL),
    FAKE_REPLY("[1, 2]"),
    FAKE_CALL(GET_CALL),
    FAKE_REPLY("{\"parameters\":{\"timer\":[]}}"),
    FAKE_CALL(GET_CALL),
    FAKE_REPLY("{\"error\":\"io.timerd.Timer.NotFound\",\"parameters\":{\"name\":\"a\"}}"),
};

/* A reply that is whole but wrong is a protocol error; the connection stays usable. */
static void test_bad_replies(void **state)
{
        struct fake_server *s = fake_server_start(garbage_script, 8);
        struct timerd *t = connect_to(s);
        struct timerd_timer timer;

        (void)state;
        assert_int_equal(timerd_get(t, "a", TIMERD_OWNER_SELF, &timer), -TIMERD_E_PROTOCOL);
        assert_int_equal(timerd_get(t, "a", TIMERD_OWNER_SELF, &timer), -TIMERD_E_PROTOCOL);
        assert_int_equal(timerd_get(t, "a", TIMERD_OWNER_SELF, &timer), -TIMERD_E_PROTOCOL);
        assert_int_equal(timerd_get(t, "a", TIMERD_OWNER_SELF, &timer), -TIMERD_E_NOT_FOUND);
        timerd_close(t);
        fake_server_finish(s);
}

static const struct fake_step unasked_continues_script[] = {
    FAKE_CALL(STATUS_CALL),
    FAKE_REPLY("{\"parameters\":{},\"continues\":true}"),
};

/* Replies nobody asked for would be taken for later calls' replies: the connection is dropped. */
static void test_unasked_continues(void **state)
{
        struct fake_server *s = fake_server_start(unasked_continues_script, 2);
        struct timerd *t = connect_to(s);
        struct timerd_status status;

        (void)state;
        assert_int_equal(timerd_status(t, &status), -TIMERD_E_PROTOCOL);
        assert_int_equal(timerd_status(t, &status), -TIMERD_E_DISCONNECTED);
        timerd_close(t);
        fake_server_finish(s);
}

static const struct fake_step oversize_script[] = {
    FAKE_CALL(STATUS_CALL),
    FAKE_FLOOD_OF(16U * 1024U * 1024U + 4096U),
};

static void test_oversize_reply(void **state)
{
        struct fake_server *s = fake_server_start(oversize_script, 2);
        struct timerd *t = connect_to(s);
        struct timerd_status status;

        (void)state;
        assert_int_equal(timerd_status(t, &status), -EMSGSIZE);
        assert_int_equal(timerd_status(t, &status), -TIMERD_E_DISCONNECTED);
        timerd_close(t);
        fake_server_finish(s);
}

static const struct fake_step split_reply_script[] = {
    FAKE_CALL(GET_CALL),
    FAKE_RAW("{\"error\":\"io.timerd.Timer.No"),
    FAKE_RAW("tFound\",\"parameters\":{\"name\":"),
    FAKE_REPLY("\"a\"}}"),
};

static void test_reply_in_pieces(void **state)
{
        struct fake_server *s = fake_server_start(split_reply_script, 4);
        struct timerd *t = connect_to(s);
        struct timerd_timer timer;

        (void)state;
        assert_int_equal(timerd_get(t, "a", TIMERD_OWNER_SELF, &timer), -TIMERD_E_NOT_FOUND);
        assert_string_equal(timerd_last_error_name(t), "io.timerd.Timer.NotFound");
        timerd_close(t);
        fake_server_finish(s);
}

/* A success reply read as tokens, cut inside its envelope's keys and values, with a member it
 * does not know: the claim is whole. */
static const struct fake_step split_success_script[] = {
    FAKE_ANY_CALL,
    FAKE_RAW("{\"conti"),
    FAKE_RAW("nues\":false,\"para"),
    FAKE_RAW("meters\":{\"claim\":{\"name\":\"a\",\"generation\":7"),
    FAKE_REPLY("}},\"extra\":[1]}"),
};

static void test_success_in_pieces(void **state)
{
        struct fake_server *s = fake_server_start(split_success_script, 5);
        struct timerd *t = connect_to(s);
        struct timerd_declaration d;
        struct timerd_claim claim;

        (void)state;
        timerd_declaration_init(&d, TIMERD_POLICY_ONCE, 0);
        assert_int_equal(timerd_register(t, "a", &d, NULL, false, &claim), 0);
        assert_string_equal(claim.name, "a");
        assert_int_equal(claim.generation, 7);
        assert_null(timerd_last_error_name(t));
        timerd_close(t);
        fake_server_finish(s);
}

static const struct fake_step error_then_success_script[] = {
    FAKE_CALL(GET_CALL),
    FAKE_REPLY("{\"error\":\"io.timerd.Timer.NotFound\",\"parameters\":{\"name\":\"a\"}}"),
    FAKE_CALL("{\"method\":\"io.timerd.Timer.Cancel\",\"parameters\":{\"claim\":{\"name\":"
              "\"a\",\"generation\":1}}}"),
    FAKE_REPLY("{\"parameters\":{}}"),
};

/* The error name belongs to the call that failed; the next call starts afresh. */
static void test_last_error_name(void **state)
{
        struct fake_server *s = fake_server_start(error_then_success_script, 4);
        struct timerd_claim claim = {.name = "a", .generation = 1};
        struct timerd *t = connect_to(s);
        struct timerd_timer timer;

        (void)state;
        assert_null(timerd_last_error_name(t));
        assert_int_equal(timerd_get(t, "a", TIMERD_OWNER_SELF, &timer), -TIMERD_E_NOT_FOUND);
        assert_string_equal(timerd_last_error_name(t), "io.timerd.Timer.NotFound");
        assert_int_equal(timerd_cancel(t, &claim, NULL), 0);
        assert_null(timerd_last_error_name(t));
        timerd_close(t);
        fake_server_finish(s);

        assert_null(timerd_last_error_name(NULL));
        timerd_close(NULL);
}

static const struct fake_step after_large_request_script[] = {
    FAKE_CALL(GET_CALL),
    FAKE_REPLY("{\"error\":\"io.timerd.Timer.NotFound\",\"parameters\":{\"name\":\"a\"}}"),
};

/* A request past 16 MiB is refused before anything is sent: the connection stays usable. */
static void test_request_too_large(void **state)
{
        struct fake_server *s = fake_server_start(after_large_request_script, 2);
        struct timerd *t = connect_to(s);
        struct timerd_timer timer;
        char *text;

        (void)state;
        text = fake_padded_parameters(16U * 1024U * 1024U + 1U);
        assert_int_equal(timerd_call_raw(t, "io.timerd.Timer.Get", text, NULL), -EMSGSIZE);
        free(text);
        /* The parameters fit, the whole call with its method does not. */
        text = fake_padded_parameters(16U * 1024U * 1024U - 4U);
        assert_int_equal(timerd_call_raw(t, "io.timerd.Timer.Get", text, NULL), -EMSGSIZE);
        free(text);

        assert_int_equal(timerd_get(t, "a", TIMERD_OWNER_SELF, &timer), -TIMERD_E_NOT_FOUND);
        timerd_close(t);
        fake_server_finish(s);
}

static void test_strerror(void **state)
{
        const char *unknown = timerd_strerror(-99999);

        (void)state;
        assert_string_equal(timerd_strerror(-ENOENT), "No such file or directory");
        assert_string_equal(timerd_strerror(-ECONNREFUSED), "Connection refused");
        assert_string_equal(timerd_strerror(ENOENT), "No such file or directory");
        assert_string_equal(timerd_strerror(0), "Success");
        assert_string_equal(timerd_strerror(-TIMERD_E_NOT_FOUND),
                            vl_error_message(TIMERD_E_NOT_FOUND));
        assert_string_equal(timerd_strerror(-TIMERD_E_DISCONNECTED),
                            vl_error_message(TIMERD_E_DISCONNECTED));

        /* Every typed error has its own sentence. */
        for (int e = TIMERD_E_BASE; e < TIMERD_E_MAX; e++) {
                const char *message = timerd_strerror(-e);

                assert_non_null(message);
                assert_string_not_equal(message, unknown);
                for (int other = TIMERD_E_BASE; other < e; other++)
                        assert_string_not_equal(message, timerd_strerror(-other));
        }

        assert_string_equal(unknown, "Unknown error");
        assert_string_equal(timerd_strerror(-TIMERD_E_MAX), "Unknown error");
        assert_string_equal(timerd_strerror(-(TIMERD_E_BASE - 1)), "Unknown error");
        assert_string_equal(timerd_strerror(INT_MIN), "Unknown error");
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_connect_missing_socket),
            cmocka_unit_test(test_connect_refused),
            cmocka_unit_test(test_connect_bad_arguments),
            cmocka_unit_test(test_default_socket_environment),
            cmocka_unit_test(test_default_socket_working_directory),
            cmocka_unit_test(test_connect_default_from_environment),
            cmocka_unit_test(test_connect_default_embedded),
            cmocka_unit_test(test_eof_mid_reply),
            cmocka_unit_test(test_service_gone_before_call),
            cmocka_unit_test(test_bad_replies),
            cmocka_unit_test(test_unasked_continues),
            cmocka_unit_test(test_oversize_reply),
            cmocka_unit_test(test_reply_in_pieces),
            cmocka_unit_test(test_success_in_pieces),
            cmocka_unit_test(test_last_error_name),
            cmocka_unit_test(test_request_too_large),
            cmocka_unit_test(test_strerror),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
