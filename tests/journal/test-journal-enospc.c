/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * A real full disk: the state directory on a 64 KiB tmpfs, mounted in a private mount namespace
 * (so nothing stays mounted if the test dies). Filled until commits fail with ENOSPC, then freed:
 * nothing of a failed commit is ever visible and the journal works again. Needs root for the
 * mount; skipped (exit 77) without it.
 */

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cmocka.h>

#include "journal-test.h"

#define MAX_TIMERS 200

static struct jt_dir dir;

/* Write a file until the disk is full; returns its path. */
static char *fill(void)
{
        char block[4096], *path;
        int fd;

        memset(block, 0xaa, sizeof(block));
        assert_true(asprintf(&path, "%s/filler", dir.root) > 0);
        fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
        assert_true(fd >= 0);
        for (unsigned i = 0;; i++) {
                ssize_t n = write(fd, block, sizeof(block));

                assert_true(i < 64);
                if (n < 0) {
                        assert_int_equal(errno, ENOSPC);
                        break;
                }
        }
        assert_int_equal(close(fd), 0);
        return path;
}

static struct journal_timer timer_number(unsigned i)
{
        char name[16];

        snprintf(name, sizeof(name), "t%03u", i);
        return jt_timer(1, name, i);
}

static void test_full_disk(void **state)
{
        struct journal_timer committed[MAX_TIMERS], t;
        struct journal_open_result result;
        struct journal *j;
        size_t n = 0, size;
        char *filler;
        int r;

        (void)state;
        j = jt_open_expect_ops(&dir, NULL, NULL, 0, NULL);
        for (; n < 5; n++) {
                committed[n] = timer_number((unsigned)n);
                assert_int_equal(journal_put(j, &committed[n]), 0);
        }
        assert_int_equal(journal_commit(j), 0);

        filler = fill();
        /* The journal's last page may still have room for a few records. */
        for (;;) {
                assert_true(n < MAX_TIMERS);
                t = timer_number((unsigned)n);
                assert_int_equal(journal_put(j, &t), 0);
                size = jt_size(&dir, "journal");
                r = journal_commit(j);
                if (r < 0)
                        break;
                committed[n++] = t;
        }
        assert_int_equal(r, -ENOSPC);
        assert_int_equal(journal_error(j), -ENOSPC);
        assert_int_equal(jt_size(&dir, "journal"), size);

        /* Still full: no compaction, no commit, nothing lost, nothing half-written. */
        assert_int_equal(journal_compact(j, committed, n), -ENOSPC);
        assert_false(jt_exists(&dir, "snapshot"));
        assert_false(jt_exists(&dir, "snapshot.tmp"));
        assert_int_equal(journal_put(j, &t), 0);
        assert_int_equal(journal_commit(j), -ENOSPC);
        journal_close(j);
        j = jt_open_expect_ops(&dir, NULL, committed, n, &result);
        assert_int_equal(result.n_dropped, 0);
        assert_int_equal(result.bytes_truncated, 0);

        /* Room again: the journal recovers. */
        assert_int_equal(unlink(filler), 0);
        free(filler);
        assert_int_equal(journal_put(j, &t), 0);
        assert_int_equal(journal_commit(j), 0);
        assert_int_equal(journal_error(j), 0);
        committed[n++] = t;
        assert_int_equal(journal_compact(j, committed, n), 0);
        journal_close(j);

        j = jt_open_expect_ops(&dir, NULL, committed, n, &result);
        assert_int_equal(result.n_replayed, n);
        journal_close(j);
}

/* Say why and exit 77: no code can mount without the privilege to. */
static int skip_test(const char *why)
{
        fprintf(stderr, "skipped: %s: a tmpfs must be mounted to fill a real disk\n", why);
        return 77;
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_full_disk),
        };
        int r;

        if (geteuid() != 0)
                return skip_test("not root");
        if (unshare(CLONE_NEWNS) < 0)
                return skip_test(strerror(errno));
        if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
                return skip_test(strerror(errno));
        snprintf(dir.root, sizeof(dir.root), "journal-enospc-XXXXXX");
        if (!mkdtemp(dir.root)) {
                perror("mkdtemp");
                return EXIT_FAILURE;
        }
        snprintf(dir.state, sizeof(dir.state), "%s/state", dir.root);
        if (mount("tmpfs", dir.root, "tmpfs", 0, "size=64k,mode=0700") < 0) {
                r = errno;
                rmdir(dir.root);
                return skip_test(strerror(r));
        }

        r = cmocka_run_group_tests(tests, NULL, NULL);
        if (umount2(dir.root, MNT_DETACH) < 0 || rmdir(dir.root) < 0) {
                perror("cleanup");
                return EXIT_FAILURE;
        }
        return r;
}
