/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * One person's many uids, on the real timerd: the uids of a person's subordinate range
 * (--subuid-file, subuid(5)) share that person's per-uid limits. Two subordinate uids of one
 * person together are refused at the person's --max-timers-per-owner and --max-connections-per-uid
 * while another person is served; the person's own uid keeps its own limit; a SIGHUP that reads a
 * new file re-charges the timers already registered; and a client in a real user namespace, whose
 * host uid is a subordinate one, is charged to the person. The timer table's share
 * (timers_share) charges the person's uids as one too, while another person and root are served.
 */

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"
#include "users.h"
#include "wire.h"

/* Two persons and a range each; OUTSIDER is in no range. */
#define PERSON_A  64700
#define PERSON_B  64701
#define A_FIRST   100000
#define B_FIRST   101000
#define RANGE     1000
#define OUTSIDER  102000
#define PER_OWNER 4
#define PER_UID   2
/* The fairness test's table: 8 connections, 6 of them shared by the unprivileged. */
#define TABLE  8
#define SHARED 6
/* The timer share's table: 20 timers, 16 of them shared by the unprivileged. */
#define TIMERS 20
#define PART   16

#define RANGES "# two persons\n64700:100000:1000\n\n64701:101000:1000\n"
#define REGISTER_CALL                                                                              \
        "{\"method\":\"io.timerd.Timer.Register\",\"parameters\":{\"name\":\"t%d\","               \
        "\"declaration\":{\"policy\":\"once\",\"lifetime\":\"retained\"},"                         \
        "\"delay_usec\":3600000000}}"

/* The subordinate uid file of the running test: a directory of its own, since timerd's is made
 * by the harness after the arguments are fixed. */
static char subuid_dir[64], subuid_path[96], subuid_arg[128];

static void write_ranges(const char *text)
{
        char tmp[128];
        snprintf(tmp, sizeof(tmp), "%s.new", subuid_path);
        FILE *f = fopen(tmp, "we");
        assert_non_null(f);
        assert_int_equal(fputs(text, f) >= 0, 1);
        assert_int_equal(fclose(f), 0);
        assert_int_equal(rename(tmp, subuid_path), 0);
}

static int setup_with(void **state, const char *const *args)
{

        snprintf(subuid_dir, sizeof(subuid_dir), "/tmp/timerd-subuid-XXXXXX");
        assert_non_null(mkdtemp(subuid_dir));
        snprintf(subuid_path, sizeof(subuid_path), "%s/subuid", subuid_dir);
        snprintf(subuid_arg, sizeof(subuid_arg), "--subuid-file=%s", subuid_path);
        write_ranges(RANGES);
        harness_setup_with(state, args);
        if (!users_available())
                fail_msg("needs root to switch uids");
        /* The other uids reach the socket. */
        assert_int_equal(chmod(((struct harness *)*state)->dir, 0755), 0);
        return 0;
}

static int setup_ranges(void **state)
{
        const char *const args[] = {subuid_arg, "--max-timers-per-owner=4",
                                    "--max-connections-per-uid=2", NULL};
        return setup_with(state, args);
}

static int setup_ranges_table(void **state)
{
        const char *const args[] = {subuid_arg, "--max-connections=8", "--reserved-connections=2",
                                    NULL};
        return setup_with(state, args);
}

static int setup_ranges_timers(void **state)
{
        const char *const args[] = {subuid_arg, "--max-timers=20", "--reserved-timers=4",
                                    "--max-timers-per-owner=16", NULL};
        return setup_with(state, args);
}

static int teardown_ranges(void **state)
{
        harness_teardown(state);
        unlink(subuid_path);
        rmdir(subuid_dir);
        return 0;
}

/* --- Clients in child processes: no cmocka there, plain results. --- */

struct job {
        const struct harness *h;
        int first;         /* the name of its first timer: t<first> */
        int want;          /* timers to register at most */
        const char *limit; /* the limit that may refuse it */
        int64_t max;       /* and its max */
};

/*
 * Registers until it is refused or has `want`: how many it registered (0..want), or 100 and more
 * when a call failed or a refusal was not j->limit at j->max.
 */
static int register_some(void *arg)
{
        const struct job *j = arg;
        int fd = user_connect(j->h->socket), got;

        if (fd < 0)
                return 100;
        for (got = 0; got < j->want; got++) {
                json_object *r = user_call(fd, REGISTER_CALL, j->first + got);
                if (!r)
                        return 101;
                const char *error = wire_error(r), *limit = error ? wire_string(r, "limit") : NULL;
                bool at_limit = error && strcmp(error, "io.timerd.Timer.LimitExceeded") == 0 &&
                                limit && strcmp(limit, j->limit) == 0 &&
                                wire_int(r, "max") == j->max;
                json_object_put(r);
                if (error && !at_limit)
                        return 102;
                if (error)
                        break;
        }
        close(fd);
        return got;
}

/* register_some() as uid, which may be refused at limit with max only. */
static int registered_at(const struct harness *h, uid_t uid, int first, int want, const char *limit,
                         int64_t max)
{
        struct job j = {.h = h, .first = first, .want = want, .limit = limit, .max = max};
        return run_as(uid, register_some, &j);
}

/* register_some() as uid, which may be refused at the per-owner limit only. */
static int registered_as(const struct harness *h, uid_t uid, int first, int want)
{
        return registered_at(h, uid, first, want, "timers_per_owner", PER_OWNER);
}

/* Its own timers in Status: 0..99, or 100 when the call failed. */
static int own_timers(void *arg)
{
        const struct harness *h = arg;
        int fd = user_connect(h->socket);

        if (fd < 0)
                return 100;
        json_object *r = user_call(fd, STATUS_CALL);
        if (!r || wire_error(r))
                return 100;
        int64_t n = wire_int(r, "timers");
        json_object_put(r);
        close(fd);
        return n >= 0 && n < 100 ? (int)n : 100;
}

/* Two subordinate uids of A together reach A's limit; B's uids and an outsider are served; A's
 * own uid keeps its own limit; each uid's Status shows its own timers. */
static void test_subordinate_uids_share_the_persons_timers(void **state)
{
        struct harness *h = *state;

        assert_int_equal(registered_as(h, A_FIRST, 0, 3), 3);
        assert_int_equal(registered_as(h, A_FIRST + 1, 0, PER_OWNER), 1);
        assert_int_equal(registered_as(h, A_FIRST + RANGE - 1, 0, 1), 0);
        assert_int_equal(registered_as(h, B_FIRST, 0, PER_OWNER), PER_OWNER);
        assert_int_equal(registered_as(h, B_FIRST + 1, 0, 1), 0);
        assert_int_equal(registered_as(h, OUTSIDER, 0, PER_OWNER + 1), PER_OWNER);
        assert_int_equal(registered_as(h, A_FIRST - 1, 0, PER_OWNER + 1), PER_OWNER);
        assert_int_equal(registered_as(h, PERSON_A, 0, PER_OWNER + 1), PER_OWNER);
        assert_int_equal(run_as(A_FIRST + 1, own_timers, h), 1);
        assert_int_equal(run_as(A_FIRST, own_timers, h), 3);
}

/* A SIGHUP reads the file again: uids taken out of A's range get their own limits, uids put in
 * it are charged to A at once with the timers they hold. */
static void test_reload_recharges(void **state)
{
        struct harness *h = *state;
        int got = 0;

        assert_int_equal(registered_as(h, A_FIRST, 0, PER_OWNER), PER_OWNER);
        assert_int_equal(registered_as(h, B_FIRST, 0, 2), 2);
        assert_int_equal(registered_as(h, A_FIRST + 1, 0, 1), 0);
        /* Now A has one uid only, the one with four timers, and B's range is A's. */
        write_ranges("64700:100000:1\n64700:101000:1000\n");
        assert_int_equal(kill(h->pid, SIGHUP), 0);
        /* The reload is the service's next iteration: until then the old ranges hold (up to 30 s
         * of a loaded machine; the first success ends the wait). */
        for (int i = 0; i < 3000 && got == 0; i++) {
                got = registered_as(h, A_FIRST + 1, 0, 1);
                if (got == 0)
                        usleep(10000);
        }
        assert_int_equal(got, 1);
        /* A holds 4 + 2: B's uids, A's now, are refused. */
        assert_int_equal(registered_as(h, B_FIRST + 5, 0, 1), 0);
        assert_int_equal(registered_as(h, B_FIRST, 2, 1), 0);
}

/* --- Connections: a child holds its connections until the parent lets it go. --- */

struct holder {
        const struct harness *h;
        int report;  /* pipe: 0 once connected and answered, else what failed */
        int release; /* pipe: closed by the parent when the child may leave */
};

/* Connects and calls Status; reports 0 when it was served, 1 when refused at the per-uid
 * limit at PER_UID, 3 when refused at the table (TABLE), 2 otherwise. */
static int connect_and_hold(void *arg)
{
        const struct holder *c = arg;
        int fd, result = 2;
        char byte;

        /* The parent's pipe ends, and the other children's, are not ours to hold open. */
        for (int other = 3; other < 1024; other++)
                if (other != c->report && other != c->release)
                        close(other);
        fd = user_connect(c->h->socket);
        if (fd >= 0) {
                (void)!send(fd, STATUS_CALL, sizeof(STATUS_CALL), MSG_NOSIGNAL);
                json_object *r = user_recv(fd, 5000);
                const char *error = r ? wire_error(r) : NULL;
                const char *limit = error ? wire_string(r, "limit") : NULL;
                if (r && !error)
                        result = 0;
                else if (limit && strcmp(limit, "connections_per_uid") == 0 &&
                         wire_int(r, "max") == PER_UID)
                        result = 1;
                else if (limit && strcmp(limit, "connections") == 0 && wire_int(r, "max") == TABLE)
                        result = 3;
                json_object_put(r);
        }
        if (write(c->report, &result, sizeof(result)) != sizeof(result))
                return 100;
        while (read(c->release, &byte, 1) > 0)
                ;
        return 0;
}

struct held {
        int report[2], release[2];
        pid_t pid;
};

/* A connection of uid, held open: what connect_and_hold() reported. */
static int hold_as(const struct harness *h, uid_t uid, struct held *c)
{
        int result = -1;

        assert_int_equal(pipe2(c->report, O_CLOEXEC), 0);
        assert_int_equal(pipe2(c->release, O_CLOEXEC), 0);
        struct holder arg = {.h = h, .report = c->report[1], .release = c->release[0]};
        c->pid = run_as_async(uid, connect_and_hold, &arg);
        assert_true(c->pid > 0);
        close(c->report[1]);
        close(c->release[0]);
        assert_int_equal(read(c->report[0], &result, sizeof(result)), sizeof(result));
        close(c->report[0]);
        return result;
}

static void let_go(struct held *c)
{
        close(c->release[1]);
        assert_int_equal(run_wait(c->pid), 0);
}

/* A's two subordinate uids hold a connection each: a third of A's uids is refused at
 * --max-connections-per-uid, B's uid and A's own uid are served. */
static void test_subordinate_uids_share_the_persons_connections(void **state)
{
        struct harness *h = *state;
        struct held c[5];

        assert_int_equal(hold_as(h, A_FIRST, &c[0]), 0);
        assert_int_equal(hold_as(h, A_FIRST + 7, &c[1]), 0);
        assert_int_equal(hold_as(h, A_FIRST + 8, &c[2]), 1);
        assert_int_equal(hold_as(h, B_FIRST, &c[3]), 0);
        assert_int_equal(hold_as(h, PERSON_A, &c[4]), 0);
        for (int i = 0; i < 5; i++)
                let_go(&c[i]);
}

/*
 * A person's uids, one connection each, fill the unprivileged share: the table's fairness counts
 * the person, so another person's uid under its fair share evicts one of them and gets in. Before:
 * each uid held one, and a newcomer with none was refused (an account with one connection is
 * never evicted by another).
 */
static void test_a_person_under_its_share_evicts_another_persons_uids(void **state)
{
        struct harness *h = *state;
        struct held c[SHARED + 3];

        for (int i = 0; i < SHARED; i++)
                assert_int_equal(hold_as(h, A_FIRST + i, &c[i]), 0);
        assert_int_equal(hold_as(h, B_FIRST, &c[SHARED]), 0);
        assert_int_equal(hold_as(h, OUTSIDER, &c[SHARED + 1]), 0);
        /* A holds four, B and the outsider one each: a new uid of A's is A, and A is no less
         * than the heaviest less one: refused at the table. */
        assert_int_equal(hold_as(h, A_FIRST + SHARED, &c[SHARED + 2]), 3);
        for (int i = 0; i < SHARED + 3; i++)
                let_go(&c[i]);
}

/* --- A real user namespace --- */

/*
 * Run fn(arg) in a child in a new user namespace whose only uid and gid, 0, are the host's
 * `outer`: the parent writes the maps (root needs no newuidmap), the child becomes uid 0 in it,
 * which is `outer` to everyone outside, timerd included. fn's result, or -1.
 */
static int run_in_userns(uid_t outer, int (*fn)(void *arg), void *arg)
{
        int ready[2], mapped[2];
        char path[64], map[64];
        char byte = 0;

        assert_int_equal(pipe2(ready, O_CLOEXEC), 0);
        assert_int_equal(pipe2(mapped, O_CLOEXEC), 0);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || unshare(CLONE_NEWUSER) < 0 ||
                    write(ready[1], &byte, 1) != 1 || read(mapped[0], &byte, 1) != 1)
                        _exit(255);
                if (setresgid(0, 0, 0) < 0 || setgroups(0, NULL) < 0 || setresuid(0, 0, 0) < 0)
                        _exit(255);
                _exit(fn(arg) & 0xff);
        }
        close(ready[1]);
        close(mapped[0]);
        assert_int_equal(read(ready[0], &byte, 1), 1);
        snprintf(map, sizeof(map), "0 %u 1\n", (unsigned)outer);
        static const char *const maps[] = {"uid_map", "gid_map"};
        for (size_t i = 0; i < 2; i++) {
                snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, maps[i]);
                int fd = open(path, O_WRONLY | O_CLOEXEC);
                assert_true(fd >= 0);
                assert_int_equal(write(fd, map, strlen(map)), (ssize_t)strlen(map));
                close(fd);
        }
        assert_int_equal(write(mapped[1], &byte, 1), 1);
        close(mapped[1]);
        close(ready[0]);
        return run_wait(pid);
}

/* In the namespace, as uid 0 there (not root outside: timerd sees the host uid): register_some().
 */
static int registers_in_userns(void *arg)
{
        if (getuid() != 0 || geteuid() != 0)
                return 110;
        return register_some(arg);
}

/* A client in a user namespace whose uid 0 is A's subordinate uid is held to A's limit; one whose
 * uid 0 is an outsider's is served to its own. */
static void test_user_namespace_client_is_charged_to_the_person(void **state)
{
        struct harness *h = *state;
        struct job j = {
            .h = h, .first = 0, .want = PER_OWNER, .limit = "timers_per_owner", .max = PER_OWNER};

        assert_int_equal(registered_as(h, A_FIRST, 0, 3), 3);
        assert_int_equal(run_in_userns(A_FIRST + 5, registers_in_userns, &j), 1);
        assert_int_equal(run_in_userns(A_FIRST + 6, registers_in_userns, &j), 0);
        assert_int_equal(run_in_userns(OUTSIDER, registers_in_userns, &j), PER_OWNER);
        /* The timer the namespace's client registered is its host uid's own. */
        assert_int_equal(run_as(A_FIRST + 5, own_timers, h), 1);
}

/*
 * The timer table's share charges a person too: A's subordinate uids, one of them in a user
 * namespace, together hold A's share of the others' part (half of it) and are refused naming it;
 * B, then an outsider, each get half of what the ones before left; root still registers up to the
 * whole table.
 */
static void test_subordinate_uids_share_the_persons_table_share(void **state)
{
        struct harness *h = *state;
        struct job j = {.h = h, .first = 0, .want = 1, .limit = "timers_share", .max = PART / 2};
        int root = harness_raw_connect(h);

        assert_int_equal(registered_at(h, A_FIRST, 0, 5, "timers_share", PART / 2), 5);
        assert_int_equal(registered_at(h, A_FIRST + 1, 0, PART, "timers_share", PART / 2),
                         PART / 2 - 5);
        assert_int_equal(run_in_userns(A_FIRST + 5, registers_in_userns, &j), 0);
        assert_int_equal(registered_at(h, A_FIRST + RANGE - 1, 0, 1, "timers_share", PART / 2), 0);
        /* B: (16 - 8 + 1) / 2 rounded down; the outsider (16 - 12 + 1) / 2. */
        assert_int_equal(registered_at(h, B_FIRST + 3, 0, PART, "timers_share", 4), 4);
        assert_int_equal(registered_at(h, OUTSIDER, 0, PART, "timers_share", 2), 2);
        assert_int_equal(wire_status(root, "timers"), PART / 2 + 4 + 2);
        for (int i = PART / 2 + 4 + 2; i < TIMERS; i++) {
                json_object *r = wire_call(root, REGISTER_CALL, i);
                assert_null(wire_error(r));
                json_object_put(r);
        }
        json_object *r = wire_call(root, REGISTER_CALL, TIMERS);
        assert_string_equal(wire_error(r), "io.timerd.Timer.LimitExceeded");
        assert_string_equal(wire_string(r, "limit"), "timers");
        assert_int_equal(wire_int(r, "max"), TIMERS);
        json_object_put(r);
        close(root);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_subordinate_uids_share_the_persons_timers,
                                            setup_ranges, teardown_ranges),
            cmocka_unit_test_setup_teardown(test_reload_recharges, setup_ranges, teardown_ranges),
            cmocka_unit_test_setup_teardown(test_subordinate_uids_share_the_persons_connections,
                                            setup_ranges, teardown_ranges),
            cmocka_unit_test_setup_teardown(test_user_namespace_client_is_charged_to_the_person,
                                            setup_ranges, teardown_ranges),
            cmocka_unit_test_setup_teardown(
                test_a_person_under_its_share_evicts_another_persons_uids, setup_ranges_table,
                teardown_ranges),
            cmocka_unit_test_setup_teardown(test_subordinate_uids_share_the_persons_table_share,
                                            setup_ranges_timers, teardown_ranges),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
