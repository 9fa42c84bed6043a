/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * Uids that register as many transient timers as they may, close, and do it again, round after
 * round (one uid, and several, as one person gets from a user namespace's subordinate uids), on
 * the real timerd with low limits: the timers of closed connections still being freed count
 * against --max-timers, so live + reaping never passes it and the service's memory stays flat,
 * while root is answered and served throughout. And the honest case: a client that closes and at
 * once registers the same names again is never refused for its predecessor's leftovers.
 */

#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"
#include "proc-stats.h"
#include "users.h"
#include "wire.h"

/* Room for every attacker's live timers and root's: only gone ones can fill the table. */
#define MAX_TIMERS 1200
#define PER_OWNER  250
#define FIRST_UID  64401
#define MAX_UIDS   4
/* A deadline none reaches while the test runs: nothing fires. */
#define FAR_DECLARATION "{\"policy\":\"once\"}"
#define FAR_DELAY_USEC  3600000000

static int setup_churn(void **state)
{
        /* A reserve for root (at most half the table by default) leaves the others room for all
         * their live timers: the bound they meet is the leftovers'. */
        static const char *const args[] = {"--max-timers=1200", "--reserved-timers=100",
                                           "--max-timers-per-owner=250", NULL};
        return harness_setup_with(state, args);
}

struct churn {
        const struct harness *h;
        unsigned rounds;
};

/* Send all of buf on fd; false when the service closed it. */
static bool send_all(int fd, const char *buf, size_t len)
{
        while (len > 0) {
                ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);
                if (n <= 0)
                        return false;
                buf += n;
                len -= (size_t)n;
        }
        return true;
}

/* Read n replies on fd: how many were successes, or -1 when one was neither a success nor
 * LimitExceeded (at a round's start the previous connection's close may not be handled yet), or
 * the connection ended or went silent for WIRE_TIMEOUT_MS. */
static int replies_succeeded(int fd, unsigned n)
{
        static char buf[1 << 16];
        size_t len = 0;
        int ok = 0;

        while (n > 0) {
                struct pollfd p = {.fd = fd, .events = POLLIN};
                if (poll(&p, 1, WIRE_TIMEOUT_MS) != 1)
                        return -1;
                ssize_t got = recv(fd, buf + len, sizeof(buf) - 1 - len, 0);
                if (got <= 0)
                        return -1;
                len += (size_t)got;
                char *start = buf, *end;
                while (n > 0 && (end = memchr(start, '\0', len - (size_t)(start - buf)))) {
                        if (!strstr(start, "\"error\""))
                                ok++;
                        else if (!strstr(start, "io.timerd.Timer.LimitExceeded"))
                                return -1;
                        n--;
                        start = end + 1;
                }
                len -= (size_t)(start - buf);
                memmove(buf, start, len);
                if (len == sizeof(buf) - 1)
                        return -1;
        }
        return ok;
}

/* A uid's attack: each round a connection registers PER_OWNER transient timers (new names each
 * round), reads the answers and closes. 0 when every answer was a success or LimitExceeded and
 * most were successes. */
static int churn(void *arg)
{
        const struct churn *c = arg;
        unsigned registered = 0;
        char *calls = NULL;
        size_t size = 0;

        for (unsigned round = 0; round < c->rounds; round++) {
                FILE *f = open_memstream(&calls, &size);
                if (!f)
                        return 10;
                for (unsigned i = 0; i < PER_OWNER; i++) {
                        fprintf(f,
                                "{\"method\":\"io.timerd.Timer.Register\",\"parameters\":{\"name\":"
                                "\"r%u.%u\",\"declaration\":%s,\"delay_usec\":%" PRIu64 "}}",
                                round, i, FAR_DECLARATION, (uint64_t)FAR_DELAY_USEC);
                        fputc('\0', f);
                }
                if (fclose(f) != 0)
                        return 11;
                int fd = user_connect(c->h->socket);
                if (fd < 0) {
                        free(calls);
                        return 12;
                }
                bool sent = send_all(fd, calls, size);
                int ok = sent ? replies_succeeded(fd, PER_OWNER) : -1;
                free(calls);
                calls = NULL;
                close(fd);
                if (ok < 0)
                        return 13;
                registered += (unsigned)ok;
        }
        return registered > c->rounds * PER_OWNER / 2 ? 0 : 14;
}

/* What root saw while the attackers ran. */
struct watch {
        unsigned answers; /* root's calls answered (each must be) */
        int64_t most;     /* the largest timers + reaping a Status showed */
        int64_t most_reaping;
        long rss_first;  /* the largest RSS in the first half of the samples, KiB */
        long rss_second; /* … in the second half */
        unsigned samples;
};

static void expect_success(json_object *reply)
{
        if (wire_error(reply))
                fail_msg("root was refused: %s", json_object_to_json_string(reply));
        json_object_put(reply);
}

/* Until every attacker is done: Status (live + reaping within the bound), a Register and a Get
 * of root's, and the service's RSS. Then each attacker's result must be 0. */
static void watch_attack(const struct harness *h, pid_t *pids, unsigned n, struct watch *w)
{
        enum { MAX_SAMPLES = 100000 };
        static long rss[MAX_SAMPLES];
        int root = harness_raw_connect(h);
        unsigned running = n;

        *w = (struct watch){};
        while (running > 0) {
                json_object *st = wire_call(root, STATUS_CALL);
                int64_t held = wire_int(st, "timers") + wire_int(st, "reaping");
                assert_null(wire_error(st));
                if (held > MAX_TIMERS)
                        fail_msg("the service holds %" PRId64 " timers (%" PRId64
                                 " reaping), over --max-timers=%d",
                                 held, wire_int(st, "reaping"), MAX_TIMERS);
                if (held > w->most)
                        w->most = held;
                if (wire_int(st, "reaping") > w->most_reaping)
                        w->most_reaping = wire_int(st, "reaping");
                json_object_put(st);
                w->answers++;

                /* A new timer of root's each time: it needs room in the table. */
                json_object *r =
                    wire_call(root,
                              "{\"method\":\"io.timerd.Timer.Register\",\"parameters\":"
                              "{\"name\":\"root\",\"declaration\":%s,\"delay_usec\":"
                              "%" PRIu64 "}}",
                              FAR_DECLARATION, (uint64_t)FAR_DELAY_USEC);
                int64_t generation = wire_int(r, "claim.generation");
                expect_success(r);
                expect_success(wire_call(
                    root,
                    "{\"method\":\"io.timerd.Timer.Get\",\"parameters\":{\"name\":\"root\"}}"));
                expect_success(
                    wire_call(root,
                              "{\"method\":\"io.timerd.Timer.Unregister\",\"parameters\":"
                              "{\"claim\":{\"name\":\"root\",\"generation\":%" PRId64 "}}}",
                              generation));
                w->answers += 3;

                if (w->samples < MAX_SAMPLES)
                        rss[w->samples++] = proc_rss_kib(h->pid);
                for (unsigned i = 0; i < n; i++) {
                        int status;
                        if (pids[i] <= 0 || waitpid(pids[i], &status, WNOHANG) != pids[i])
                                continue;
                        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                                fail_msg("attacker %u ended with status 0x%x", i, status);
                        pids[i] = 0;
                        running--;
                }
        }
        close(root);
        for (unsigned i = 0; i < w->samples; i++) {
                long *half = i < w->samples / 2 ? &w->rss_first : &w->rss_second;
                assert_true(rss[i] > 0);
                if (rss[i] > *half)
                        *half = rss[i];
        }
}

static void attack(void **state, unsigned n_uids, unsigned rounds)
{
        struct harness *h = *state;
        struct churn c = {.h = h, .rounds = rounds};
        pid_t pids[MAX_UIDS];
        struct watch w;
        const char *sanitize = getenv("TIMERD_TEST_SANITIZE");
        bool sanitized = sanitize && sanitize[0] && strcmp(sanitize, "none") != 0;

        if (!users_available())
                fail_msg("needs root to switch uids");
        /* The other uids reach the socket. */
        assert_int_equal(chmod(h->dir, 0755), 0);
        long rss_before = proc_rss_kib(h->pid);
        for (unsigned i = 0; i < n_uids; i++) {
                pids[i] = run_as_async(FIRST_UID + i, churn, &c);
                assert_true(pids[i] > 0);
        }
        watch_attack(h, pids, n_uids, &w);

        print_message("%u uid(s) x %u rounds of %d: root's %u calls answered; at most %" PRId64
                      " timers held (%" PRId64 " reaping); RSS %ld KiB before, %ld KiB at most "
                      "in the first half, %ld KiB in the second (%u samples)\n",
                      n_uids, rounds, PER_OWNER, w.answers, w.most, w.most_reaping, rss_before,
                      w.rss_first, w.rss_second, w.samples);
        /* Each sample is 4 calls, all answered (wire_call fails otherwise). */
        assert_true(w.samples >= 2);
        assert_int_equal(w.answers, 4 * w.samples);
        /* The attack took place: the attackers' timers were seen. */
        assert_true(w.most > PER_OWNER / 2);
        /* Memory settles in the first half; more rounds do not add to it. Sanitizers keep freed
         * memory in quarantine. */
        long slack = sanitized ? 256 * 1024 : w.rss_first / 40 + 1024;
        if (w.rss_second > w.rss_first + slack)
                fail_msg("RSS grew from %ld KiB to %ld KiB over the attack", w.rss_first,
                         w.rss_second);

        /* Afterwards everything is freed, and root registers as many as a uid may. */
        json_object *st = NULL;
        int root = harness_raw_connect(h);
        for (int i = 0; i < 500; i++) {
                json_object_put(st);
                st = wire_call(root, STATUS_CALL);
                if (wire_int(st, "reaping") == 0 && wire_int(st, "timers") == 0)
                        break;
                usleep(10000);
        }
        assert_int_equal(wire_int(st, "reaping"), 0);
        assert_int_equal(wire_int(st, "timers"), 0);
        json_object_put(st);
        wire_bulk_register(root, "after", PER_OWNER, FAR_DECLARATION, WIRE_OWNER_SELF, 0);
        close(root);
}

/* One uid: at most PER_OWNER live, the rest of the table is its closed connections' leftovers. */
static void test_one_uid_closing_and_registering_is_bounded(void **state)
{
        attack(state, 1, 60);
}

/* Several uids at once: their live timers together (MAX_UIDS * PER_OWNER) and the leftovers. */
static void test_many_uids_closing_and_registering_are_bounded(void **state)
{
        attack(state, MAX_UIDS, 30);
}

/*
 * A client that restarts: it closes with as many timers as the table holds and at once registers
 * the same names again on a new connection, every time served (wire_bulk_register asserts each
 * answer), whatever of its predecessor's timers the service has not freed yet.
 */
static void test_reconnect_registers_the_same_names(void **state)
{
        struct harness *h = *state;
        int fd = harness_raw_connect(h);

        wire_bulk_register(fd, "same", MAX_TIMERS, FAR_DECLARATION, WIRE_OWNER_SELF, 0);
        for (int round = 0; round < 10; round++) {
                close(fd);
                fd = harness_raw_connect(h);
                wire_bulk_register(fd, "same", MAX_TIMERS, FAR_DECLARATION, WIRE_OWNER_SELF, 0);
                json_object *st = wire_call(fd, STATUS_CALL);
                assert_int_equal(wire_int(st, "timers"), MAX_TIMERS);
                assert_true(wire_int(st, "timers") + wire_int(st, "reaping") <= MAX_TIMERS);
                json_object_put(st);
        }
        /* Live timers fill the table: that refuses, naming the table's limit. */
        json_object *r = wire_call(fd,
                                   "{\"method\":\"io.timerd.Timer.Register\",\"parameters\":{"
                                   "\"name\":\"over\",\"declaration\":%s}}",
                                   FAR_DECLARATION);
        assert_string_equal(wire_error(r), "io.timerd.Timer.LimitExceeded");
        assert_string_equal(wire_string(r, "limit"), "timers");
        assert_int_equal(wire_int(r, "max"), MAX_TIMERS);
        json_object_put(r);
        close(fd);
}

/* For the honest client: root's own limit is above the table's, so it can fill the table alone. */
static int setup_restart(void **state)
{
        static const char *const args[] = {"--max-timers=1200", "--max-timers-per-owner=2000",
                                           NULL};
        return harness_setup_with(state, args);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_one_uid_closing_and_registering_is_bounded,
                                            setup_churn, harness_teardown),
            cmocka_unit_test_setup_teardown(test_many_uids_closing_and_registering_are_bounded,
                                            setup_churn, harness_teardown),
            cmocka_unit_test_setup_teardown(test_reconnect_registers_the_same_names, setup_restart,
                                            harness_teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
