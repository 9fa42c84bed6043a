/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * Hostile connections against the io_uring backend's provided buffers (64 of 4 KiB that every
 * connection's multishot recv takes from), on the real timerd and on timerfd alike: more
 * connections than buffers, from several unprivileged uids, each leaving bytes the service holds
 * and cannot act on yet: half a message never finished, a buffer full of calls behind a Wait that
 * stays parked (the service stops reading, the recv's buffers stay filled), calls whose replies
 * are never read. While they sit there root and a fresh unprivileged uid are served (Status, a
 * Register, a timer that fires to a Wait), and the service does not spin: its loop iterations and
 * CPU stay those of an idle service. Counted, not timed.
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"
#include "idle.h"
#include "users.h"
#include "wire.h"

/* Four uids, 30 connections each: 120, more than the 64 buffers. */
#define N_UIDS    4
#define PER_UID   30
#define N_HOSTILE (N_UIDS * PER_UID)
#define FIRST_UID 64801
#define FRESH_UID 64901
#define N_KINDS   3
/* Two kinds of three end with a parked Wait. */
#define N_PARKED (2 * N_HOSTILE / N_KINDS)
/* The calls piled behind a parked Wait: twice the service's message buffer (--max-message). */
#define MAX_MESSAGE 16384
#define PILED_BYTES (2 * MAX_MESSAGE)
/* Calls whose replies are never read: more than the sockets hold (~150 of a uid's Status). */
#define UNREAD_CALLS 300

#define WAIT_CALL "{\"method\":\"io.timerd.Timer.Wait\",\"parameters\":{}}"

static int setup_pool(void **state)
{
        /* The hostile connections stay as long as the test needs them, however loaded the
         * machine: no reaping of half messages or idle connections in between. */
        static const char *const args[] = {"--max-message=16384", "--partial-timeout=600000000",
                                           "--idle-timeout=600000000", NULL};
        harness_setup_with(state, args);
        if (!users_available())
                fail_msg("needs root to switch uids");
        /* The other uids reach the socket. */
        assert_int_equal(chmod(((struct harness *)*state)->dir, 0755), 0);
        return 0;
}

/* Send what the socket takes of len bytes without waiting: the bytes it took, or -1. */
static ssize_t send_what_fits(int fd, const char *data, size_t len)
{
        size_t sent = 0;

        while (sent < len) {
                ssize_t n = send(fd, data + sent, len - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return errno == EAGAIN ? (ssize_t)sent : -1;
                sent += (size_t)n;
        }
        return (ssize_t)sent;
}

/* count Status calls back to back, with their NULs, in a buffer to free. */
static char *status_calls(size_t count, size_t *ret_len)
{
        char *calls = malloc(count * sizeof(STATUS_CALL));

        if (calls)
                for (size_t i = 0; i < count; i++)
                        memcpy(calls + i * sizeof(STATUS_CALL), STATUS_CALL, sizeof(STATUS_CALL));
        *ret_len = count * sizeof(STATUS_CALL);
        return calls;
}

struct hostile {
        const struct harness *h;
        int report;  /* pipe: 0 once every connection is made, else what failed */
        int release; /* pipe: closed by the parent when the child may leave */
};

/*
 * One uid's hostile client, in a child: PER_UID connections, by turns half a message, a parked
 * Wait with PILED_BYTES of calls behind it, and UNREAD_CALLS calls whose replies it never reads
 * with a Wait after them. Holds them until released; reports 0, or which step failed.
 */
static int be_hostile(void *arg)
{
        const struct hostile *c = arg;
        static const char half[] = "{\"method\":\"io.timerd.Timer.Reg";
        size_t piled_len, unread_len;
        char *piled = status_calls(PILED_BYTES / sizeof(STATUS_CALL), &piled_len);
        char *unread = status_calls(UNREAD_CALLS, &unread_len);
        int fds[PER_UID], result = 0;
        char byte;

        for (int other = 3; other < 1024; other++)
                if (other != c->report && other != c->release)
                        close(other);
        if (!piled || !unread)
                result = 1;
        for (int i = 0; i < PER_UID && result == 0; i++) {
                fds[i] = user_connect(c->h->socket);
                if (fds[i] < 0) {
                        result = 2;
                        break;
                }
                switch (i % N_KINDS) {
                case 0:
                        if (send_what_fits(fds[i], half, sizeof(half) - 1) != sizeof(half) - 1)
                                result = 3;
                        break;
                case 1:
                        if (send_what_fits(fds[i], WAIT_CALL, sizeof(WAIT_CALL)) !=
                                sizeof(WAIT_CALL) ||
                            send_what_fits(fds[i], piled, piled_len) <= 0)
                                result = 4;
                        break;
                default:
                        /* The Wait parks once the calls before it are answered: the parent
                         * counts it to know the service is done with them. */
                        if (send_what_fits(fds[i], unread, unread_len) != (ssize_t)unread_len ||
                            send_what_fits(fds[i], WAIT_CALL, sizeof(WAIT_CALL)) !=
                                sizeof(WAIT_CALL))
                                result = 5;
                        break;
                }
        }
        free(piled);
        free(unread);
        if (write(c->report, &result, sizeof(result)) != sizeof(result))
                return 100;
        while (read(c->release, &byte, 1) > 0)
                ;
        return 0;
}

struct crowd {
        int release[N_UIDS];
        pid_t pid[N_UIDS];
};

static void crowd_start(const struct harness *h, struct crowd *crowd)
{
        for (int u = 0; u < N_UIDS; u++) {
                int report[2], release[2], result = -1;

                assert_int_equal(pipe2(report, O_CLOEXEC), 0);
                assert_int_equal(pipe2(release, O_CLOEXEC), 0);
                struct hostile arg = {.h = h, .report = report[1], .release = release[0]};
                crowd->pid[u] = run_as_async(FIRST_UID + u, be_hostile, &arg);
                assert_true(crowd->pid[u] > 0);
                close(report[1]);
                close(release[0]);
                assert_int_equal(read(report[0], &result, sizeof(result)), sizeof(result));
                assert_int_equal(result, 0);
                close(report[0]);
                crowd->release[u] = release[1];
        }
}

static void crowd_leave(struct crowd *crowd)
{
        for (int u = 0; u < N_UIDS; u++) {
                close(crowd->release[u]);
                assert_int_equal(run_wait(crowd->pid[u]), 0);
        }
}

/* A fresh uid's client: Status answered with its own figures, a Register taken. 0, or which call
 * failed. */
static int fresh_uid_is_served(void *arg)
{
        const struct harness *h = arg;
        int fd = user_connect(h->socket), result = 0;

        if (fd < 0)
                return 100;
        json_object *r = user_call(fd, STATUS_CALL);
        if (!r || wire_error(r) || wire_int(r, "connections") != 1)
                result = 101;
        json_object_put(r);
        r = user_call(fd, "{\"method\":\"io.timerd.Timer.Register\",\"parameters\":{\"name\":"
                          "\"fresh\",\"declaration\":{\"policy\":\"once\"},\"delay_usec\":"
                          "3600000000}}");
        if (result == 0 && (!r || wire_error(r)))
                result = 102;
        json_object_put(r);
        close(fd);
        return result;
}

/* Root on a fresh connection: Status, and a timer that fires to its Wait. */
static void expect_root_served(const struct harness *h)
{
        int fd = harness_raw_connect(h);
        json_object *r = wire_call(fd, STATUS_CALL);

        assert_null(wire_error(r));
        assert_string_equal(wire_string(r, "store"), "journal");
        json_object_put(r);
        r = wire_call(fd, "{\"method\":\"io.timerd.Timer.Register\",\"parameters\":{\"name\":"
                          "\"root\",\"declaration\":{\"policy\":\"once\"},\"delay_usec\":1000}}");
        assert_null(wire_error(r));
        json_object_put(r);
        r = wire_call(fd, "{\"method\":\"io.timerd.Timer.Wait\",\"parameters\":"
                          "{\"names\":[\"root\"],\"timeout_usec\":60000000}}");
        assert_null(wire_error(r));
        assert_string_equal(wire_string(r, "firing.token.name"), "root");
        json_object_put(r);
        close(fd);
}

/*
 * The hostile crowd holds its connections: every one is accepted and its Waits parked (so the
 * calls before them are done: what follows is idle, not a backlog worked off), root and a
 * fresh uid are served, and the service idles while the crowd sits still; once the crowd leaves,
 * nothing of it remains and the service still idles.
 */
static void test_hostile_connections_leave_root_and_newcomers_served(void **state)
{
        struct harness *h = *state;
        int control = harness_raw_connect(h);
        struct crowd crowd;

        crowd_start(h, &crowd);
        wire_expect_status(control, "connections", N_HOSTILE + 1);
        wire_expect_status(control, "waiters", N_PARKED);
        expect_root_served(h);
        assert_int_equal(run_as(FRESH_UID, fresh_uid_is_served, h), 0);
        expect_idle(h, control);
        /* Still all there: nothing was dropped to make room (root's and the fresh uid's are
         * gone once their closes are read). */
        wire_expect_status(control, "connections", N_HOSTILE + 1);
        assert_int_equal(wire_status(control, "waiters"), N_PARKED);

        crowd_leave(&crowd);
        wire_expect_status(control, "connections", 1);
        wire_expect_status(control, "waiters", 0);
        expect_root_served(h);
        assert_int_equal(run_as(FRESH_UID + 1, fresh_uid_is_served, h), 0);
        expect_idle(h, control);
        close(control);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(
                test_hostile_connections_leave_root_and_newcomers_served, setup_pool,
                harness_teardown),
        };
        return cmocka_run_group_tests_name(harness_backend(), tests, NULL, NULL);
}
