/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * Compaction in a forked child (journal_compact_start()): what is committed while the child
 * writes survives the swap; a child that fails or is killed leaves the old journal in charge,
 * reported and retried later; closing kills a running child; a kill -9 of the service at any
 * call of the swap loses nothing committed; a state out of order is refused; and the old files
 * are freed by a grandchild only once nothing names them.
 */

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "journal-test.h"

/* What the child is to write: the committed state at the start. */
#define BIG 400
static struct journal_timer child_state[3 + BIG];
static size_t n_child_state;

static int key_compare(const void *a, const void *b)
{
        const struct journal_timer *x = *(const struct journal_timer *const *)a;
        const struct journal_timer *y = *(const struct journal_timer *const *)b;

        return x->owner != y->owner ? (x->owner < y->owner ? -1 : 1) : strcmp(x->name, y->name);
}

/* child_state in (owner, name) order, or as it stands when out_of_order. */
static bool out_of_order;

static int state_of_test(void *userdata, journal_emit_fn emit, void *emit_userdata)
{
        const struct journal_timer *sorted[3 + BIG];
        int r = 0;

        (void)userdata;
        for (size_t i = 0; i < n_child_state; i++)
                sorted[i] = &child_state[i];
        if (!out_of_order)
                qsort(sorted, n_child_state, sizeof(*sorted), key_compare);
        for (size_t i = 0; i < n_child_state && r >= 0; i++)
                r = emit(emit_userdata, sorted[i]);
        return r;
}

/* What the child's writes do, and from which process the ops are called. */
enum child_write {
        CHILD_WRITES,
        CHILD_FAILS_ENOSPC,
        CHILD_KILLED_MID_WRITE,
        CHILD_HANGS,
};

static enum child_write child_write;
static pid_t test_pid;
static unsigned parent_calls, parent_kill_at; /* kill -9 of the parent at that call; 0: never */
static bool snapshot_rename_fails;

static bool in_child(void)
{
        return getpid() != test_pid;
}

static void parent_call(void)
{
        if (!in_child() && ++parent_calls == parent_kill_at)
                raise(SIGKILL);
}

static ssize_t op_pwrite(int fd, const void *buf, size_t size, off_t offset)
{
        parent_call();
        if (in_child()) {
                switch (child_write) {
                case CHILD_WRITES:
                        break;
                case CHILD_FAILS_ENOSPC:
                        errno = ENOSPC;
                        return -1;
                case CHILD_KILLED_MID_WRITE:
                        if (pwrite(fd, buf, size / 2, offset) < 0)
                                return -1;
                        raise(SIGKILL);
                        break;
                case CHILD_HANGS:
                        for (;;)
                                pause();
                }
        }
        return pwrite(fd, buf, size, offset);
}

static int op_fdatasync(int fd)
{
        parent_call();
        return fdatasync(fd);
}

static int op_ftruncate(int fd, off_t length)
{
        parent_call();
        return ftruncate(fd, length);
}

static int op_renameat(int old_dir_fd, const char *old_path, int new_dir_fd, const char *new_path)
{
        parent_call();
        if (!in_child() && snapshot_rename_fails && strcmp(old_path, "snapshot.tmp") == 0) {
                errno = EIO;
                return -1;
        }
        return renameat(old_dir_fd, old_path, new_dir_fd, new_path);
}

static const struct journal_ops test_ops = {
    .pwrite = op_pwrite,
    .fdatasync = op_fdatasync,
    .ftruncate = op_ftruncate,
    .renameat = op_renameat,
};

static int setup(void **state)
{
        struct jt_dir *d = calloc(1, sizeof(*d));

        assert_non_null(d);
        jt_dir_make(d);
        test_pid = getpid();
        child_write = CHILD_WRITES;
        parent_calls = parent_kill_at = 0;
        out_of_order = snapshot_rename_fails = false;
        *state = d;
        return 0;
}

/* Two committed batches, one deleting; child_state is what they leave. */
static struct journal *fixture(const struct jt_dir *d)
{
        struct journal_timer t[3] = {jt_timer(1, "a", 1), jt_timer(1, "b", 2), jt_timer(2, "a", 3)};
        struct journal *j = jt_open_expect_ops(d, &test_ops, NULL, 0, NULL);

        assert_int_equal(journal_put(j, &t[0]), 0);
        assert_int_equal(journal_put(j, &t[1]), 0);
        assert_int_equal(journal_commit(j), 0);
        assert_int_equal(journal_delete(j, 1, "b"), 0);
        assert_int_equal(journal_put(j, &t[2]), 0);
        assert_int_equal(journal_commit(j), 0);
        child_state[0] = t[0];
        child_state[1] = t[2];
        n_child_state = 2;
        return j;
}

static void wait_exit(int pidfd)
{
        struct pollfd p = {.fd = pidfd, .events = POLLIN};

        assert_int_equal(poll(&p, 1, 30000), 1);
}

static void reopen_expect(const struct jt_dir *d, const struct journal_timer *expected, size_t n)
{
        struct journal_open_result result;
        struct journal *j = jt_open_expect_ops(d, NULL, expected, n, &result);

        assert_int_equal(result.n_dropped, 0);
        assert_int_equal(result.tail, JOURNAL_TAIL_NONE);
        assert_false(jt_exists(d, "snapshot.tmp"));
        assert_false(jt_exists(d, "journal.next"));
        journal_close(j);
}

/* Batches committed while the child writes go on in the new journal, renumbered; so do later
 * ones; the old journal's bytes are gone. */
static void test_commits_during_compaction_survive(void **state)
{
        struct jt_dir *d = *state;
        struct journal_timer later = jt_timer(3, "later", 4), after = jt_timer(4, "after", 5);
        struct journal_timer expected[4];
        struct journal *j = fixture(d);
        size_t journal_before = jt_size(d, "journal");
        int pidfd;

        pidfd = journal_compact_start(j, state_of_test, NULL);
        assert_true(pidfd >= 0);
        assert_int_equal(journal_compact_start(j, state_of_test, NULL), -EBUSY);
        assert_false(journal_should_compact(j));
        jt_put_commit(j, &later);
        assert_int_equal(journal_delete(j, 1, "a"), 0);
        assert_int_equal(journal_commit(j), 0);
        wait_exit(pidfd);
        assert_int_equal(journal_compact_finish(j), 0);
        assert_int_equal(journal_compact_error(j), 0);
        assert_int_equal(journal_compact_finish(j), -ECHILD);
        assert_true(jt_size(d, "snapshot") > 0);
        assert_true(jt_size(d, "journal") < journal_before);
        jt_put_commit(j, &after);
        journal_close(j);

        expected[0] = child_state[1]; /* (1, "a") deleted during the compaction */
        expected[1] = later;
        expected[2] = after;
        reopen_expect(d, expected, 3);
}

/* A child killed halfway through the snapshot, or failing on a full disk: the old journal stays
 * in charge, the failure is reported, and the next compaction waits before it starts. */
static void child_fails(const struct jt_dir *d, enum child_write how, int error)
{
        struct journal_timer later = jt_timer(3, "later", 4);
        struct journal *j = fixture(d);
        int pidfd;

        /* More than 1 MiB of journal over no snapshot: due for compaction. */
        for (size_t round = 0; round < 16; round++) {
                for (size_t k = 0; k < BIG; k++) {
                        char name[32];

                        snprintf(name, sizeof(name), "big-%03zu", k);
                        child_state[3 + k] = jt_timer(5, name, round * 1000 + k);
                        assert_int_equal(journal_put(j, &child_state[3 + k]), 0);
                }
                assert_int_equal(journal_commit(j), 0);
        }
        jt_put_commit(j, &later);
        child_state[2] = later;
        n_child_state = 3 + BIG;
        assert_true(journal_should_compact(j));

        child_write = how;
        pidfd = journal_compact_start(j, state_of_test, NULL);
        assert_true(pidfd >= 0);
        wait_exit(pidfd);
        assert_int_equal(journal_compact_finish(j), error);
        assert_int_equal(journal_compact_error(j), error);
        assert_int_equal(journal_error(j), 0);
        assert_false(jt_exists(d, "snapshot.tmp"));
        assert_false(journal_should_compact(j)); /* a second before the next try */

        /* The journal goes on; the next compaction (started at once here) succeeds. */
        child_write = CHILD_WRITES;
        assert_int_equal(journal_delete(j, 5, "big-000"), 0);
        assert_int_equal(journal_commit(j), 0);
        memmove(&child_state[3], &child_state[4], (BIG - 1) * sizeof(*child_state));
        n_child_state--;
        pidfd = journal_compact_start(j, state_of_test, NULL);
        assert_true(pidfd >= 0);
        wait_exit(pidfd);
        assert_int_equal(journal_compact_finish(j), 0);
        assert_int_equal(journal_compact_error(j), 0);
        journal_close(j);
        reopen_expect(d, child_state, n_child_state);
}

static void test_child_fails_enospc(void **state)
{
        child_fails(*state, CHILD_FAILS_ENOSPC, -ENOSPC);
}

static void test_child_killed_mid_write(void **state)
{
        child_fails(*state, CHILD_KILLED_MID_WRITE, -ECANCELED);
}

/* The service stops while the child writes: the child is killed and reaped, nothing is lost. */
static void test_close_while_child_runs(void **state)
{
        struct jt_dir *d = *state;
        struct journal *j = fixture(d);
        int pidfd;

        child_write = CHILD_HANGS;
        pidfd = journal_compact_start(j, state_of_test, NULL);
        assert_true(pidfd >= 0);
        assert_int_equal(journal_compact_finish(j), -EAGAIN);
        journal_close(j);
        /* Reaped: no child of ours is left. */
        assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
        assert_int_equal(errno, ECHILD);
        reopen_expect(d, child_state, n_child_state);
}

/*
 * A kill -9 of the service at each call of the swap (a forked stand-in for the service runs it):
 * whatever was committed, before and during the compaction, is there after the restart.
 */
static void test_kill_during_swap(void **state)
{
        struct jt_dir *d = *state;
        struct journal_timer later = jt_timer(3, "later", 4), expected[3];
        unsigned n_calls = 0;

        for (unsigned k = 0;; k++) {
                pid_t pid;
                int status;

                jt_dir_remove(d);
                jt_dir_make(d);
                pid = fork();
                assert_true(pid >= 0);
                if (pid == 0) {
                        struct journal *j;
                        int pidfd;

                        test_pid = getpid();
                        j = fixture(d);
                        pidfd = journal_compact_start(j, state_of_test, NULL);
                        jt_put_commit(j, &later);
                        wait_exit(pidfd);
                        parent_calls = 0;
                        parent_kill_at = k;
                        if (journal_compact_finish(j) < 0)
                                _exit(2);
                        /* Without a kill: how many calls the swap made. */
                        _exit(k == 0 ? (int)parent_calls : 0);
                }
                assert_int_equal(waitpid(pid, &status, 0), pid);
                if (k == 0) {
                        assert_true(WIFEXITED(status));
                        n_calls = (unsigned)WEXITSTATUS(status);
                        assert_true(n_calls >= 6);
                } else if (k <= n_calls) {
                        assert_true(WIFSIGNALED(status));
                } else {
                        assert_true(WIFEXITED(status));
                        assert_int_equal(WEXITSTATUS(status), 0);
                        break;
                }
                expected[0] = child_state[0];
                expected[1] = child_state[1];
                expected[2] = later;
                reopen_expect(d, expected, 3);
        }
}

/* A state not in (owner, name) order is refused: the child fails, the store stays as it was. */
static void test_state_out_of_order(void **state)
{
        struct jt_dir *d = *state;
        struct journal *j = fixture(d);
        int pidfd;

        /* (2, "a") before (1, "a"). */
        struct journal_timer first = child_state[0];
        child_state[0] = child_state[1];
        child_state[1] = first;
        out_of_order = true;
        pidfd = journal_compact_start(j, state_of_test, NULL);
        assert_true(pidfd >= 0);
        wait_exit(pidfd);
        assert_int_equal(journal_compact_finish(j), -EINVAL);
        assert_false(jt_exists(d, "snapshot"));
        journal_close(j);
        child_state[1] = child_state[0];
        child_state[0] = first;
        reopen_expect(d, child_state, n_child_state);
}

/* Reap the grandchild that held the old files (this process is its subreaper): it has freed
 * them, or only closed them when they still had a name. */
static void reap_holder(void)
{
        int status;

        assert_true(waitpid(-1, &status, 0) > 0);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
}

/* The grandchild frees the files the swap renamed over, and never the journal when the swap
 * failed and it is still the one in charge. */
static void test_old_files_holder(void **state)
{
        struct jt_dir *d = *state;
        struct journal_timer later = jt_timer(3, "later", 4), expected[3];
        struct journal *j;
        int pidfd;

        assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
        for (int failing = 1; failing >= 0; failing--) {
                j = fixture(d);
                snapshot_rename_fails = failing;
                pidfd = journal_compact_start(j, state_of_test, NULL);
                assert_true(pidfd >= 0);
                wait_exit(pidfd);
                assert_int_equal(journal_compact_finish(j), failing ? -EIO : 0);
                reap_holder();
                assert_int_equal(jt_exists(d, "snapshot"), !failing);
                jt_put_commit(j, &later);
                journal_close(j);
                expected[0] = child_state[0];
                expected[1] = child_state[1];
                expected[2] = later;
                reopen_expect(d, expected, 3);
                jt_dir_remove(d);
                jt_dir_make(d);
        }
        assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 0), 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_commits_during_compaction_survive, setup,
                                            jt_teardown),
            cmocka_unit_test_setup_teardown(test_child_fails_enospc, setup, jt_teardown),
            cmocka_unit_test_setup_teardown(test_child_killed_mid_write, setup, jt_teardown),
            cmocka_unit_test_setup_teardown(test_close_while_child_runs, setup, jt_teardown),
            cmocka_unit_test_setup_teardown(test_kill_during_swap, setup, jt_teardown),
            cmocka_unit_test_setup_teardown(test_state_out_of_order, setup, jt_teardown),
            cmocka_unit_test_setup_teardown(test_old_files_holder, setup, jt_teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
