/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * Compaction: the snapshot of every retained timer replaces snapshot and journal.
 *
 * journal_compact() does it in the caller. journal_compact_start() does it off the loop, as
 * redis's BGSAVE does: a forked child builds the state from its copy-on-write view of the
 * caller's memory, writes and syncs snapshot.tmp and exits; it holds no descriptor but the state
 * directory's (no socket, signalfd, io_uring or timer of the loop), renames nothing, and runs
 * under SCHED_IDLE so that it never delays the loop on a CPU they share. The loop
 * keeps committing to the journal meanwhile. When the child's exit shows on its pidfd,
 * journal_compact_finish() swaps in the snapshot with the journal's tail since the fork, in an
 * order that a crash at any point leaves readable with everything committed:
 *   1. journal.next: a format 3 journal of the new epoch holding the tail (batches renumbered
 *      from 1, all proven), written, synced and renamed in place; the directory synced.
 *   2. snapshot.tmp renamed over the snapshot; the directory synced. A crash before this:
 *      the old snapshot and journal hold everything and open removes journal.next.
 *   3. journal.next renamed over the journal; the directory synced. A crash before this: open
 *      sees the journal.next that continues the new snapshot and renames it first.
 * A child that fails (a full disk, killed) leaves everything as it was; the failure is kept for
 * Status (journal_compact_error()) and the next attempt waits 1 s, doubling up to a minute.
 */

#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "service/io/journal-internal.h"

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

#define RETRY_FIRST_USEC UINT64_C(1000000)
#define RETRY_MAX_USEC   UINT64_C(60000000)

int journal_compact(struct journal *j, const struct journal_timer *timers, size_t n_timers)
{
        struct buffer snapshot = {};
        int fd, r;

        if (!j || (n_timers > 0 && !timers))
                return -EINVAL;
        if (j->batch.size > 0 || j->bg.pidfd >= 0)
                return -EBUSY;
        r = journal_snapshot_encode(timers, n_timers, j->epoch + 1, &snapshot);
        if (r < 0)
                return r;
        r = journal_file_install(j, SNAPSHOT_TMP, SNAPSHOT_FILE, snapshot.data, snapshot.size, &fd);
        free(snapshot.data);
        if (r < 0)
                return journal_fail(j, r);
        close(fd);

        /* The snapshot is in place and holds everything; a failure from here on leaves starting
         * the fresh journal to the next commit. */
        j->epoch++;
        j->snapshot_size = snapshot.size;
        r = journal_start_fresh(j);
        if (r < 0)
                return journal_fail(j, r);
        j->error = 0;
        return 0;
}

static uint64_t monotonic_usec(void)
{
        struct timespec ts;

        /* Cannot fail with a valid clock and pointer. */
        (void)clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

bool journal_should_compact(const struct journal *j)
{
        uint64_t records = j->committed_size - j->records_start;

        if (j->bg.pidfd >= 0 || (j->bg.failures > 0 && monotonic_usec() < j->bg.retry_usec))
                return false;
        /* A version 2 journal proves nothing: the compaction starts a version 3 one. */
        return j->version != JOURNAL_VERSION || records > 2 * j->snapshot_size + COMPACT_SLACK;
}

int journal_compact_error(const struct journal *j)
{
        return j->bg.error;
}

static int compact_failed(struct journal *j, int error)
{
        uint64_t wait = RETRY_MAX_USEC;

        if (j->bg.failures < 6)
                wait = RETRY_FIRST_USEC << j->bg.failures;
        j->bg.failures++;
        j->bg.retry_usec = monotonic_usec() + wait;
        j->bg.error = error;
        return error;
}

/* The child's work: the snapshot of the state in snapshot.tmp, synced. No rename: the parent
 * decides whether it goes in. */
static int child_write(struct journal *j, journal_state_fn state, void *userdata)
{
        struct journal_timer *timers = NULL;
        struct buffer snapshot = {};
        size_t n = 0;
        int fd, r;

        r = state(userdata, &timers, &n);
        if (r < 0)
                return r;
        r = journal_snapshot_encode(timers, n, j->epoch + 1, &snapshot);
        if (r < 0)
                return r;
        if (unlinkat(j->dir_fd, SNAPSHOT_TMP, 0) < 0 && errno != ENOENT)
                return journal_negative_errno();
        fd = openat(j->dir_fd, SNAPSHOT_TMP, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
                    0600);
        if (fd < 0)
                return journal_negative_errno();
        r = journal_write_all(j, fd, snapshot.data, snapshot.size, 0);
        return r < 0 ? r : journal_sync_fd(j, fd);
}

/* Exits with 0, or the errno it failed with. Memory is left to _exit(). */
static _Noreturn void child_run(struct journal *j, pid_t parent, journal_state_fn state,
                                void *userdata)
{
        int r = 0;

        /* Nothing of the loop's: only the state directory stays open (and stdio, unused). */
        if (j->dir_fd > 3 && close_range(3, (unsigned)j->dir_fd - 1, 0) < 0)
                r = journal_negative_errno();
        if (r >= 0 && close_range((unsigned)j->dir_fd + 1, ~0u, 0) < 0)
                r = journal_negative_errno();
        /* The loop comes first: its wake-ups preempt the child at once (best effort: a system
         * call filter may refuse it). */
        (void)sched_setscheduler(0, SCHED_IDLE, &(struct sched_param){});
        /* With the service gone (kill -9), no one would install the snapshot. */
        if (r >= 0 && (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent))
                r = -ESRCH;
        if (r >= 0)
                r = child_write(j, state, userdata);
        _exit(r >= 0 ? 0 : -r <= 255 ? -r : EIO);
}

int journal_compact_start(struct journal *j, journal_state_fn state, void *userdata)
{
        pid_t parent = getpid(), pid;
        int pidfd, r;

        if (!j || !state)
                return -EINVAL;
        if (j->batch.size > 0 || j->bg.pidfd >= 0)
                return -EBUSY;
        /* The tail starts after what is committed: nothing half-written past it. */
        r = journal_repair(j);
        if (r < 0)
                return compact_failed(j, r);
        pid = fork();
        if (pid < 0)
                return compact_failed(j, journal_negative_errno());
        if (pid == 0)
                child_run(j, parent, state, userdata);
        pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
        if (pidfd < 0) {
                r = journal_negative_errno();
                (void)kill(pid, SIGKILL);
                (void)waitpid(pid, NULL, 0);
                return compact_failed(j, r);
        }
        j->bg.pidfd = pidfd;
        j->bg.pid = pid;
        j->bg.fd = j->fd;
        j->bg.epoch = j->epoch;
        j->bg.size = j->committed_size;
        j->bg.next_seq = j->next_seq;
        j->bg.records = j->committed_records;
        return pidfd;
}

/* The journal that continues the new snapshot: the committed batches since the fork, renumbered
 * from 1 and all proven. */
static int tail_encode(const struct journal *j, struct buffer *ret)
{
        uint64_t tail = j->committed_size - j->bg.size;
        struct proof proven = {
            .seq = j->next_seq - j->bg.next_seq,
            .end = JOURNAL_RECORDS_V3 + tail,
            .records = j->committed_records - j->bg.records,
        };
        struct proof none = {.end = JOURNAL_RECORDS_V3};
        struct buffer b = {};
        int r;

        r = journal_buffer_reserve(&b, JOURNAL_RECORDS_V3 + tail);
        if (r < 0)
                return r;
        memset(b.data, 0, JOURNAL_RECORDS_V3);
        for (size_t done = 0; done < tail;) {
                ssize_t n = pread(j->fd, b.data + JOURNAL_RECORDS_V3 + done, tail - done,
                                  (off_t)(j->bg.size + done));

                if (n <= 0) {
                        r = n < 0 ? journal_negative_errno() : -EIO;
                        free(b.data);
                        return r;
                }
                done += (size_t)n;
        }
        b.size = JOURNAL_RECORDS_V3 + tail;
        for (size_t offset = JOURNAL_RECORDS_V3; offset < b.size;) {
                journal_record_renumber(b.data + offset, j->bg.next_seq - 1);
                offset += journal_record_size(b.data + offset);
        }
        journal_header_encode(b.data, JOURNAL_HEADER_SIZE, JOURNAL_MAGIC, JOURNAL_VERSION,
                              j->epoch + 1, 0);
        journal_proof_encode(b.data + PROOF_SLOT_OFFSET, proven.seq > 0 ? &proven : &none);
        journal_proof_encode(b.data + PROOF_SLOT_OFFSET + SECTOR_SIZE, &none);
        *ret = b;
        return 0;
}

/* The journal is now the one in journal.next, continuing the new snapshot. */
static void switch_to_next(struct journal *j, int fd, uint64_t snapshot_size)
{
        close(j->fd);
        j->fd = fd;
        j->epoch++;
        j->version = JOURNAL_VERSION;
        j->records_start = JOURNAL_RECORDS_V3;
        j->committed_size = JOURNAL_RECORDS_V3 + (j->committed_size - j->bg.size);
        j->committed_records -= j->bg.records;
        j->next_seq -= j->bg.next_seq - 1;
        j->proof_slot = 0;
        j->needs_truncate = false;
        j->snapshot_size = snapshot_size;
}

/* The child's snapshot.tmp in place with the tail (the steps at the top of this file). */
static int swap_in(struct journal *j)
{
        struct buffer next = {};
        struct stat st;
        int fd, r;

        /* A journal started afresh since the fork: the tail is not where the child left it. */
        if (j->fd < 0 || j->fd != j->bg.fd || j->epoch != j->bg.epoch)
                return -ESTALE;
        if (fstatat(j->dir_fd, SNAPSHOT_TMP, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return journal_negative_errno();
        r = tail_encode(j, &next);
        if (r < 0)
                return r;
        r = journal_file_install(j, JOURNAL_TMP, JOURNAL_NEXT, next.data, next.size, &fd);
        free(next.data);
        if (r < 0)
                return r;
        r = journal_sync_fd(j, j->dir_fd);
        if (r >= 0 && j->ops->renameat(j->dir_fd, SNAPSHOT_TMP, j->dir_fd, SNAPSHOT_FILE) < 0)
                r = journal_negative_errno();
        if (r < 0) {
                close(fd);
                (void)unlinkat(j->dir_fd, JOURNAL_NEXT, 0);
                return r;
        }
        /* The snapshot is in: from here the new journal is the one to append to. */
        switch_to_next(j, fd, (uint64_t)st.st_size);
        j->bg.next_not_renamed = true;
        r = journal_sync_fd(j, j->dir_fd);
        if (r >= 0)
                r = journal_next_install(j);
        /* Else the next commit renames it first; an open would too. */
        return r < 0 ? journal_fail(j, r) : 0;
}

/* 0, or the errno the child exited with; -ECANCELED when a signal ended it. */
static int child_result(const siginfo_t *info)
{
        if (info->si_code != CLD_EXITED)
                return -ECANCELED;
        return -info->si_status;
}

int journal_compact_finish(struct journal *j)
{
        siginfo_t info = {};
        int r;

        if (!j || j->bg.pidfd < 0)
                return -ECHILD;
        if (waitid((idtype_t)P_PIDFD, (id_t)j->bg.pidfd, &info, WEXITED | WNOHANG) < 0)
                return journal_negative_errno();
        if (info.si_pid == 0)
                return -EAGAIN;
        close(j->bg.pidfd);
        j->bg.pidfd = -1;
        r = child_result(&info);
        if (r >= 0)
                r = swap_in(j);
        /* Best effort: a leftover is removed by the next open. */
        (void)unlinkat(j->dir_fd, SNAPSHOT_TMP, 0);
        if (r < 0)
                return compact_failed(j, r);
        j->bg.error = 0;
        j->bg.failures = 0;
        return 0;
}

void journal_compact_cancel(struct journal *j)
{
        siginfo_t info;

        if (j->bg.pidfd < 0)
                return;
        /* SIGKILL ends it at once: the wait is short, and only at close. */
        (void)syscall(SYS_pidfd_send_signal, j->bg.pidfd, SIGKILL, NULL, 0);
        (void)waitid((idtype_t)P_PIDFD, (id_t)j->bg.pidfd, &info, WEXITED);
        close(j->bg.pidfd);
        j->bg.pidfd = -1;
        (void)unlinkat(j->dir_fd, SNAPSHOT_TMP, 0);
}
