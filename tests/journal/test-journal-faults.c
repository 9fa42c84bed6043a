/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * Disk trouble, injected through the journal's ops table: group commit costs two writes (the proof
 * slot and the batch) and one fdatasync; a failing write, sync, truncate or rename fails the call
 * with its errno, leaves nothing of the failed batch on disk and no proof damaged, and the journal
 * works again when the disk does.
 */

#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "journal-test.h"

static int setup(void **state)
{
        struct jt_dir *d = calloc(1, sizeof(*d));

        assert_non_null(d);
        jt_dir_make(d);
        jt_faults_reset();
        *state = d;
        return 0;
}

static void test_group_commit(void **state)
{
        struct jt_dir *d = *state;
        struct journal_timer t[64];
        struct journal *j;

        j = jt_open_expect(d, NULL, 0, NULL);
        jt_faults_reset();
        for (size_t i = 0; i < 64; i++) {
                char name[16];

                snprintf(name, sizeof(name), "t%03zu", i);
                t[i] = jt_timer(1, name, i);
                assert_int_equal(journal_put(j, &t[i]), 0);
        }
        assert_int_equal(journal_delete(j, 1, "gone"), 0);
        assert_int_equal(jt_calls(), 0);
        assert_int_equal(journal_commit(j), 0);
        assert_int_equal(jt_faults.calls[JT_PWRITE], 2);
        assert_int_equal(jt_faults.calls[JT_FDATASYNC], 1);
        assert_int_equal(jt_calls(), 3);

        /* Nothing to commit costs nothing. */
        assert_int_equal(journal_commit(j), 0);
        assert_int_equal(jt_calls(), 3);
        journal_close(j);

        j = jt_open_expect(d, t, 64, NULL);
        journal_close(j);
}

/* The batch's write fails (after writing part of it, or nothing), then a working disk. */
static void test_write_fails(void **state)
{
        struct jt_dir *d = *state;
        const size_t partials[] = {0, 100, 300};
        const int errors[] = {ENOSPC, EIO};

        for (size_t e = 0; e < 2; e++)
                for (size_t p = 0; p < 3; p++) {
                        struct journal_timer t[4] = {jt_timer(1, "a", 1), jt_timer(1, "b", 2),
                                                     jt_timer(1, "c", 3), jt_timer(1, "d", 4)};
                        struct journal_timer kept[2] = {t[0], t[3]};
                        struct journal_open_result result;
                        struct journal *j;
                        size_t committed;

                        jt_dir_remove(d);
                        jt_dir_make(d);
                        j = jt_open_expect(d, NULL, 0, NULL);
                        jt_put_commit(j, &t[0]);
                        committed = jt_size(d, "journal");

                        jt_faults_reset();
                        /* The first write is the proof slot's. */
                        jt_faults_arm(1u << JT_PWRITE, 2, 1, errors[e]);
                        jt_faults.partial = partials[p];
                        assert_int_equal(journal_put(j, &t[1]), 0);
                        assert_int_equal(journal_put(j, &t[2]), 0);
                        assert_int_equal(journal_commit(j), -errors[e]);
                        assert_int_equal(journal_error(j), -errors[e]);
                        /* Truncated back at once, and that made durable. */
                        assert_int_equal(jt_faults.calls[JT_FTRUNCATE], 1);
                        assert_int_equal(jt_faults.calls[JT_FDATASYNC], 1);
                        assert_int_equal(jt_size(d, "journal"), committed);

                        /* The failed batch is gone; the next one works. */
                        jt_put_commit(j, &t[3]);
                        assert_int_equal(journal_error(j), 0);
                        journal_close(j);

                        j = jt_open_expect(d, kept, 2, &result);
                        assert_int_equal(result.n_dropped, 0);
                        assert_int_equal(result.bytes_truncated, 0);
                        journal_close(j);
                }
}

/* The proof slot's write fails, with none or part of it written (a torn slot): the commit fails,
 * the slot with the previous proof is intact, and the journal works again with the disk. */
static void test_proof_write_fails(void **state)
{
        struct jt_dir *d = *state;
        const size_t partials[] = {0, 10};
        struct journal_timer t[4] = {jt_timer(1, "a", 1), jt_timer(1, "b", 2), jt_timer(1, "c", 3),
                                     jt_timer(1, "d", 4)};

        for (size_t p = 0; p < 2; p++)
                for (int killed = 0; killed <= 1; killed++) {
                        struct journal_open_result result;
                        struct journal *j;
                        size_t committed;

                        jt_dir_remove(d);
                        jt_dir_make(d);
                        j = jt_open_expect(d, NULL, 0, NULL);
                        jt_put_commit(j, &t[0]);
                        jt_put_commit(j, &t[1]);
                        jt_put_commit(j, &t[2]);
                        committed = jt_size(d, "journal");

                        jt_faults_reset();
                        jt_faults_arm(1u << JT_PWRITE, 1, 1, ENOSPC);
                        jt_faults.partial = partials[p];
                        assert_int_equal(journal_put(j, &t[3]), 0);
                        assert_int_equal(journal_commit(j), -ENOSPC);
                        assert_int_equal(journal_error(j), -ENOSPC);
                        /* The batch was never written. */
                        assert_int_equal(jt_faults.calls[JT_PWRITE], 1);
                        assert_int_equal(jt_size(d, "journal"), committed);
                        if (!killed) {
                                jt_faults_reset();
                                jt_put_commit(j, &t[3]);
                                assert_int_equal(journal_error(j), 0);
                        }
                        journal_close(j);

                        /* Batch 3's commit proved batch 2: that proof survived. */
                        jt_faults_reset();
                        j = jt_open_expect(d, t, killed ? 3 : 4, &result);
                        assert_int_equal(result.tail, JOURNAL_TAIL_NONE);
                        assert_int_equal(result.proven_batch, killed ? 2 : 3);
                        if (killed) {
                                jt_put_commit(j, &t[3]);
                                journal_close(j);
                                j = jt_open_expect(d, t, 4, &result);
                                assert_int_equal(result.proven_batch, 3);
                        }
                        journal_close(j);
                }
}

static void test_sync_fails(void **state)
{
        struct jt_dir *d = *state;
        struct journal_timer t[3] = {jt_timer(1, "a", 1), jt_timer(1, "b", 2), jt_timer(1, "c", 3)};
        struct journal_timer kept[2] = {t[0], t[2]};
        struct journal_open_result result;
        struct journal *j;
        size_t committed;

        j = jt_open_expect(d, NULL, 0, NULL);
        jt_put_commit(j, &t[0]);
        committed = jt_size(d, "journal");

        jt_faults_reset();
        jt_faults_arm(1u << JT_FDATASYNC, 1, 1, EIO);
        assert_int_equal(journal_put(j, &t[1]), 0);
        assert_int_equal(journal_commit(j), -EIO);
        assert_int_equal(journal_error(j), -EIO);
        assert_int_equal(jt_faults.calls[JT_FTRUNCATE], 1);
        assert_int_equal(jt_size(d, "journal"), committed);

        jt_put_commit(j, &t[2]);
        assert_int_equal(journal_error(j), 0);
        journal_close(j);
        j = jt_open_expect(d, kept, 2, &result);
        assert_int_equal(result.n_dropped, 0);
        journal_close(j);
}

/* The truncate back fails too: the journal stays degraded, and every commit repairs first. */
static void test_repair_fails(void **state)
{
        struct jt_dir *d = *state;
        struct journal_timer t[5] = {jt_timer(1, "a", 1), jt_timer(1, "b", 2), jt_timer(1, "c", 3),
                                     jt_timer(1, "d", 4), jt_timer(1, "e", 5)};
        struct journal_timer kept[2] = {t[0], t[4]};
        struct journal_open_result result;
        struct journal *j;
        size_t committed;
        unsigned writes;

        j = jt_open_expect(d, NULL, 0, NULL);
        jt_put_commit(j, &t[0]);
        committed = jt_size(d, "journal");

        jt_faults_reset();
        /* The batch's write (after the proof slot's) and the truncation after it. */
        jt_faults_arm((1u << JT_PWRITE) | (1u << JT_FTRUNCATE), 2, 2, ENOSPC);
        jt_faults.partial = 300;
        assert_int_equal(journal_put(j, &t[1]), 0);
        assert_int_equal(journal_put(j, &t[2]), 0);
        assert_int_equal(journal_commit(j), -ENOSPC);
        assert_int_equal(jt_size(d, "journal"), committed + 300);

        /* The repair fails: the batch is refused without writing it. */
        jt_faults_arm(1u << JT_FTRUNCATE, 1, 1, EIO);
        writes = jt_faults.calls[JT_PWRITE];
        assert_int_equal(journal_put(j, &t[3]), 0);
        assert_int_equal(journal_commit(j), -EIO);
        assert_int_equal(journal_error(j), -EIO);
        assert_int_equal(jt_faults.calls[JT_PWRITE], writes);

        /* Truncated, but the sync that makes it durable fails: still degraded. */
        jt_faults_arm(1u << JT_FDATASYNC, 1, 1, EIO);
        assert_int_equal(journal_commit(j), -EIO);
        assert_int_equal(jt_size(d, "journal"), committed);

        /* An empty commit repairs, but proves nothing about the disk's room. */
        jt_faults_arm(0, 0, 0, 0);
        assert_int_equal(journal_commit(j), 0);
        assert_int_equal(journal_error(j), -EIO);

        jt_put_commit(j, &t[4]);
        assert_int_equal(journal_error(j), 0);
        journal_close(j);
        j = jt_open_expect(d, kept, 2, &result);
        assert_int_equal(result.n_dropped, 0);
        assert_int_equal(result.bytes_truncated, 0);
        journal_close(j);
}

/* Killed while degraded: what the failed write left is a torn tail, never applied. */
static void test_crash_while_degraded(void **state)
{
        struct jt_dir *d = *state;
        struct journal_timer t[3] = {jt_timer(1, "a", 1), jt_timer(1, "b", 2), jt_timer(1, "c", 3)};
        struct journal_open_result result;
        struct journal *j;
        uint8_t *data;
        size_t size, first_record;

        j = jt_open_expect(d, NULL, 0, NULL);
        jt_put_commit(j, &t[0]);

        jt_faults_reset();
        jt_faults_arm((1u << JT_PWRITE) | (1u << JT_FTRUNCATE), 2, 2, ENOSPC);
        jt_faults.partial = 300;
        assert_int_equal(journal_put(j, &t[1]), 0);
        assert_int_equal(journal_put(j, &t[2]), 0);
        assert_int_equal(journal_commit(j), -ENOSPC);
        journal_close(j);

        /* The garbage holds one whole record of the failed batch and part of the next. */
        data = jt_read(d, "journal", &size);
        first_record = 8 + ((size_t)data[size - 300] | (size_t)data[size - 299] << 8);
        assert_true(first_record < 300);
        free(data);

        jt_faults_reset();
        j = jt_open_expect(d, t, 1, &result);
        assert_int_equal(result.n_dropped, 2);
        assert_int_equal(result.bytes_truncated, 300);
        /* The failed commit proved batch 1, truly: what it left is after the proof. */
        assert_int_equal(result.proven_batch, 1);
        assert_int_equal(result.tail, JOURNAL_TAIL_TORN);
        journal_close(j);
}

/* A state directory with retained state: two batches, one of them deleting. */
static struct journal *compaction_fixture(const struct jt_dir *d, struct journal_timer *ret_live)
{
        struct journal_timer t[3] = {jt_timer(1, "a", 1), jt_timer(1, "b", 2), jt_timer(2, "a", 3)};
        struct journal *j = jt_open_expect(d, NULL, 0, NULL);

        assert_int_equal(journal_put(j, &t[0]), 0);
        assert_int_equal(journal_put(j, &t[1]), 0);
        assert_int_equal(journal_commit(j), 0);
        assert_int_equal(journal_delete(j, 1, "b"), 0);
        assert_int_equal(journal_put(j, &t[2]), 0);
        assert_int_equal(journal_commit(j), 0);
        ret_live[0] = t[0];
        ret_live[1] = t[2];
        return j;
}

/* Compaction interrupted at each of its writes, syncs and renames: killed right there, or going
 * on with the next commit. Either way nothing committed is lost and no tmp file survives. */
static void test_compact_fails_at_every_call(void **state)
{
        struct jt_dir *d = *state;
        struct journal_timer live[3], after = jt_timer(3, "later", 9);
        struct journal *j;
        unsigned n_calls;

        j = compaction_fixture(d, live);
        jt_faults_reset();
        assert_int_equal(journal_compact(j, live, 2), 0);
        n_calls = jt_calls();
        assert_int_equal(n_calls, 9);
        journal_close(j);

        for (unsigned k = 1; k <= n_calls; k++)
                for (int killed = 0; killed <= 1; killed++) {
                        struct journal_open_result result;

                        jt_dir_remove(d);
                        jt_dir_make(d);
                        j = compaction_fixture(d, live);
                        jt_faults_reset();
                        jt_faults_arm(JT_ALL_OPS, k, killed ? 1 : UINT_MAX, EIO);
                        assert_int_equal(journal_compact(j, live, 2), -EIO);
                        assert_int_equal(journal_error(j), -EIO);
                        if (!killed) {
                                /* The disk is still failing: so does the commit. */
                                assert_int_equal(journal_put(j, &after), 0);
                                assert_int_equal(journal_commit(j), -EIO);
                                jt_faults_reset();
                                jt_put_commit(j, &after);
                                assert_int_equal(journal_error(j), 0);
                                live[2] = after;
                        }
                        journal_close(j);

                        jt_faults_reset();
                        j = jt_open_expect(d, live, killed ? 2 : 3, &result);
                        assert_int_equal(result.n_dropped, 0);
                        assert_false(jt_exists(d, "snapshot.tmp"));
                        assert_false(jt_exists(d, "journal.tmp"));
                        journal_close(j);
                }
}

/* Opening writes too: the first journal, a truncated tail, a replaced stale journal. */
static void test_open_fails(void **state)
{
        struct jt_dir *d = *state;
        struct journal_timer t[2] = {jt_timer(1, "a", 1), jt_timer(1, "b", 2)};
        struct journal_open_result result;
        struct journal *j = NULL;
        uint8_t *data;
        size_t size;

        for (unsigned k = 1; k <= 5; k++) {
                jt_faults_reset();
                jt_faults_arm(JT_ALL_OPS, k, 1, ENOSPC);
                assert_int_equal(journal_open(d->state, &jt_ops, NULL, &result, &j), -ENOSPC);
                assert_false(jt_exists(d, "journal.tmp"));
        }
        jt_faults_reset();
        j = jt_open_expect(d, NULL, 0, NULL);
        jt_put_commit(j, &t[0]);
        jt_put_commit(j, &t[1]);
        journal_close(j);

        /* A torn tail that cannot be truncated: refuse to start, change nothing. */
        data = jt_read(d, "journal", &size);
        jt_write(d, "journal", data, size - 1);
        jt_faults_arm(1u << JT_FTRUNCATE, 1, 1, EIO);
        assert_int_equal(journal_open(d->state, &jt_ops, NULL, &result, &j), -EIO);
        jt_faults_arm(1u << JT_FDATASYNC, 1, 1, EIO);
        assert_int_equal(journal_open(d->state, &jt_ops, NULL, &result, &j), -EIO);
        jt_write(d, "journal", data, size - 1);
        jt_faults_reset();
        j = jt_open_expect(d, t, 1, &result);
        assert_int_equal(result.n_dropped, 1);
        journal_close(j);
        free(data);

        /* A stale journal (compaction killed before the fresh journal) that cannot be replaced. */
        data = jt_read(d, "journal", &size);
        j = jt_open_expect(d, t, 1, NULL);
        assert_int_equal(journal_compact(j, t, 2), 0);
        journal_close(j);
        jt_write(d, "journal", data, size);
        free(data);
        jt_faults_arm(1u << JT_RENAMEAT, 1, 1, EIO);
        assert_int_equal(journal_open(d->state, &jt_ops, NULL, &result, &j), -EIO);
        jt_faults_reset();
        j = jt_open_expect(d, t, 2, &result);
        assert_true(result.stale_journal);
        journal_close(j);
}

/* A write that lands in pieces (7 bytes per call) still commits whole. */
static ssize_t pwrite_piecemeal(int fd, const void *buf, size_t size, off_t offset)
{
        jt_faults.calls[JT_PWRITE]++;
        return pwrite(fd, buf, size < 7 ? size : 7, offset);
}

/* A write that makes no progress. */
static ssize_t pwrite_nothing(int fd, const void *buf, size_t size, off_t offset)
{
        (void)fd;
        (void)buf;
        (void)size;
        (void)offset;
        jt_faults.calls[JT_PWRITE]++;
        return 0;
}

static void test_short_writes(void **state)
{
        struct jt_dir *d = *state;
        struct journal_timer t[3] = {jt_timer(1, "a", 1), jt_timer(1, "b", 2), jt_timer(1, "c", 3)};
        struct journal_ops piecemeal = jt_ops, nothing = jt_ops;
        struct journal_timer kept[2] = {t[0], t[2]};
        struct journal_open_result result;
        struct journal *j;

        piecemeal.pwrite = pwrite_piecemeal;
        nothing.pwrite = pwrite_nothing;
        assert_int_equal(journal_open(d->state, &piecemeal, NULL, &result, &j), 0);
        jt_faults_reset();
        jt_put_commit(j, &t[0]);
        assert_true(jt_faults.calls[JT_PWRITE] > 20);
        journal_close(j);

        assert_int_equal(journal_open(d->state, &nothing, NULL, &result, &j), 0);
        assert_int_equal(journal_put(j, &t[1]), 0);
        assert_int_equal(journal_commit(j), -EIO);
        journal_close(j);

        j = jt_open_expect(d, t, 1, NULL);
        jt_put_commit(j, &t[2]);
        journal_close(j);
        j = jt_open_expect(d, kept, 2, NULL);
        journal_close(j);
}

/* A tmp file that cannot be created: before the snapshot is in place nothing changes; after, the
 * next commits start the fresh journal as soon as they can. */
static void test_tmp_in_the_way(void **state)
{
        struct jt_dir *d = *state;
        struct journal_timer live[3], after = jt_timer(3, "later", 9);
        char *snapshot_tmp = jt_path(d, "snapshot.tmp"), *journal_tmp = jt_path(d, "journal.tmp");
        struct journal *j = compaction_fixture(d, live);

        assert_int_equal(mkdir(snapshot_tmp, 0700), 0);
        assert_int_equal(journal_compact(j, live, 2), -EISDIR);
        assert_int_equal(journal_error(j), -EISDIR);
        assert_false(jt_exists(d, "snapshot"));
        assert_int_equal(rmdir(snapshot_tmp), 0);

        assert_int_equal(mkdir(journal_tmp, 0700), 0);
        assert_int_equal(journal_compact(j, live, 2), -EISDIR);
        assert_true(jt_exists(d, "snapshot"));
        assert_int_equal(journal_put(j, &after), 0);
        assert_int_equal(journal_commit(j), -EISDIR);
        assert_int_equal(rmdir(journal_tmp), 0);
        jt_put_commit(j, &after);
        assert_int_equal(journal_error(j), 0);
        journal_close(j);

        live[2] = after;
        j = jt_open_expect(d, live, 3, NULL);
        journal_close(j);
        free(snapshot_tmp);
        free(journal_tmp);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_group_commit, setup, jt_teardown),
            cmocka_unit_test_setup_teardown(test_write_fails, setup, jt_teardown),
            cmocka_unit_test_setup_teardown(test_proof_write_fails, setup, jt_teardown),
            cmocka_unit_test_setup_teardown(test_sync_fails, setup, jt_teardown),
            cmocka_unit_test_setup_teardown(test_repair_fails, setup, jt_teardown),
            cmocka_unit_test_setup_teardown(test_crash_while_degraded, setup, jt_teardown),
            cmocka_unit_test_setup_teardown(test_compact_fails_at_every_call, setup, jt_teardown),
            cmocka_unit_test_setup_teardown(test_open_fails, setup, jt_teardown),
            cmocka_unit_test_setup_teardown(test_short_writes, setup, jt_teardown),
            cmocka_unit_test_setup_teardown(test_tmp_in_the_way, setup, jt_teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
