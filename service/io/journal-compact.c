/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * Compaction: the snapshot of every retained timer replaces snapshot and journal.
 *
 * journal_compact() does it in the caller. journal_compact_start() does it off the loop, as
 * redis's BGSAVE does: a forked child walks its copy-on-write view of the caller's memory and
 * writes snapshot.tmp as it goes, a step at a time, each on the disk before the next (so that the
 * loop's commits never wait behind a flood of its data), then syncs it and exits; it holds no
 * descriptor but the state directory's and the old files' (no socket, signalfd, io_uring or timer
 * of the loop), renames nothing, and runs under SCHED_IDLE so that it never delays the loop on a
 * CPU they share. The loop keeps committing to the journal meanwhile. When the child's exit shows
 * on its pidfd, journal_compact_finish() swaps in the snapshot with the journal's tail since the
 * fork, in an order that a crash at any point leaves readable with everything committed:
 *   1. journal.next: a format 3 journal of the new epoch holding the tail (batches renumbered
 *      from 1, all proven), written in place, synced; the directory synced.
 *   2. snapshot.tmp renamed over the snapshot; the directory synced. A crash before this:
 *      the old snapshot and journal hold everything and open removes journal.next.
 *   3. journal.next renamed over the journal, not synced: until that reaches the disk, open sees
 *      the journal.next that continues the new snapshot and renames it first.
 * The old snapshot and journal, renamed over, are freed by a grandchild (hold_old_files()).
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

/* Written in steps, each on the disk before the next is written: the loop's commits, which on
 * ext4 wait for every file's data the commit's metadata names, wait for one step at most. */
#define WRITE_STEP (UINT64_C(1) << 20)

/* `size` bytes at `offset`, on the disk before this returns (best effort: a write-back error
 * shows in the fdatasync at the end). */
static int write_step(struct journal *j, int fd, const uint8_t *data, size_t size, uint64_t offset)
{
        int r = journal_write_all(j, fd, data, size, offset);

        if (r >= 0 && size > 0)
                (void)sync_file_range(fd, (off_t)offset, (off_t)size,
                                      SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE |
                                          SYNC_FILE_RANGE_WAIT_AFTER);
        return r;
}

/* The snapshot as the child writes it: encoded as the state is walked, a step at a time. */
struct snapshot_writer {
        struct journal *j;
        int fd;
        struct buffer pending; /* encoded, not yet written; starts at `offset` in the file */
        uint64_t offset;
        uint64_t n_timers;
        uint32_t last_owner;
        char last_name[TIMERD_NAME_MAX + 1];
};

static int writer_flush(struct snapshot_writer *w)
{
        int r = write_step(w->j, w->fd, w->pending.data, w->pending.size, w->offset);

        w->offset += w->pending.size;
        w->pending.size = 0;
        return r;
}

/* A journal_emit_fn: the timers come in (owner, name) order, each once. */
static int writer_emit(void *userdata, const struct journal_timer *t)
{
        struct snapshot_writer *w = userdata;
        size_t offset = w->pending.size;
        int r;

        if (!t || !journal_timer_valid(t) ||
            (w->n_timers > 0 &&
             journal_key_compare(w->last_owner, w->last_name, t->owner, t->name) >= 0))
                return -EINVAL;
        r = journal_record_append(&w->pending, t->owner, t->name, t);
        if (r < 0)
                return r;
        journal_record_seal(w->pending.data + offset, 0, false);
        w->n_timers++;
        w->last_owner = t->owner;
        strcpy(w->last_name, t->name);
        return w->pending.size >= WRITE_STEP ? writer_flush(w) : 0;
}

/* The child's work: the snapshot of the state in snapshot.tmp, synced. No rename: the parent
 * decides whether it goes in. Memory: one step of records, whatever the number of timers. */
static int child_write(struct journal *j, journal_state_fn state, void *userdata)
{
        struct snapshot_writer w = {.j = j, .offset = SNAPSHOT_HEADER_SIZE};
        uint8_t header[SNAPSHOT_HEADER_SIZE];
        int r;

        if (unlinkat(j->dir_fd, SNAPSHOT_TMP, 0) < 0 && errno != ENOENT)
                return journal_negative_errno();
        w.fd = openat(j->dir_fd, SNAPSHOT_TMP, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
                      0600);
        if (w.fd < 0)
                return journal_negative_errno();
        r = state(userdata, writer_emit, &w);
        if (r >= 0)
                r = writer_flush(&w);
        if (r < 0)
                return r;
        /* The header counts the records: written last, synced with them. */
        journal_header_encode(header, sizeof(header), SNAPSHOT_MAGIC, SNAPSHOT_VERSION,
                              j->epoch + 1, w.n_timers);
        r = journal_write_all(j, w.fd, header, sizeof(header), 0);
        return r < 0 ? r : journal_sync_fd(j, w.fd);
}

/* Close every descriptor from 3 on but the `n` in `keep` (ascending). */
static int close_all_but(const int *keep, size_t n)
{
        unsigned from = 3;

        for (size_t i = 0; i <= n; i++) {
                unsigned to = i < n ? (unsigned)keep[i] : ~0u;

                if (i < n && keep[i] < 3)
                        continue;
                if (to > from && close_range(from, i < n ? to - 1 : to, 0) < 0)
                        return journal_negative_errno();
                from = to + 1;
        }
        return 0;
}

/* A file no name leads to any more, emptied in steps each synced before the next: with online
 * discard, ext4 discards what a commit freed before the next commit, the loop's. */
static void free_paced(int fd)
{
        struct stat st;

        if (fstat(fd, &st) < 0 || st.st_nlink > 0)
                return;
        for (off_t size = st.st_size; size > 0;) {
                size = size > (off_t)WRITE_STEP * 4 ? size - (off_t)WRITE_STEP * 4 : 0;
                if (ftruncate(fd, size) < 0 || fdatasync(fd) < 0)
                        return;
        }
}

/*
 * Renamed over, the old snapshot and journal are freed by whoever closes them last, which takes
 * as long as truncating them (31 ms at 1M timers), and the commit after pays for discarding them:
 * not the loop. A grandchild holds them until the loop closes its end of `holder` after the swap
 * (or exits), then frees them in steps and exits; files that still have a name (the swap failed)
 * it only closes. Best effort: without it the loop frees them.
 */
static void hold_old_files(struct journal *j, int holder)
{
        int snapshot = openat(j->dir_fd, SNAPSHOT_FILE, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
        pid_t pid = fork();

        if (pid == 0) {
                char c;

                close(j->dir_fd);
                while (read(holder, &c, 1) < 0 && errno == EINTR)
                        ;
                if (snapshot >= 0)
                        free_paced(snapshot);
                free_paced(j->fd);
                _exit(0);
        }
        if (snapshot >= 0)
                close(snapshot);
}

/* Exits with 0, or the errno it failed with. Memory is left to _exit(). */
static _Noreturn void child_run(struct journal *j, pid_t parent, journal_state_fn state,
                                void *userdata, int holder)
{
        int keep[] = {j->dir_fd, j->fd, holder};
        int r;

        /* Nothing of the loop's: only the state directory, the old journal and the holder's pipe
         * stay open (and stdio, unused). */
        for (size_t a = 0; a < 3; a++)
                for (size_t b = a + 1; b < 3; b++)
                        if (keep[b] < keep[a]) {
                                int t = keep[a];

                                keep[a] = keep[b];
                                keep[b] = t;
                        }
        r = close_all_but(keep, 3);
        /* The directory anew, without the loop's lock on it: neither this child nor its
         * grandchild may keep a restarted service from opening the store. */
        if (r >= 0) {
                int dir_fd = openat(j->dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

                if (dir_fd < 0)
                        r = journal_negative_errno();
                close(j->dir_fd);
                j->dir_fd = dir_fd;
        }
        /* The loop comes first: its wake-ups preempt the child at once (best effort: a system
         * call filter may refuse it). */
        (void)sched_setscheduler(0, SCHED_IDLE, &(struct sched_param){});
        /* With the service gone (kill -9), no one would install the snapshot. */
        if (r >= 0 && (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent))
                r = -ESRCH;
        if (r >= 0) {
                hold_old_files(j, holder);
                close(holder);
                r = child_write(j, state, userdata);
        }
        _exit(r >= 0 ? 0 : -r <= 255 ? -r : EIO);
}

int journal_compact_start(struct journal *j, journal_state_fn state, void *userdata)
{
        pid_t parent = getpid(), pid;
        int holder[2], pidfd, r;

        if (!j || !state)
                return -EINVAL;
        if (j->batch.size > 0 || j->bg.pidfd >= 0)
                return -EBUSY;
        /* The tail starts after what is committed: nothing half-written past it. */
        r = journal_repair(j);
        if (r < 0)
                return compact_failed(j, r);
        if (pipe2(holder, O_CLOEXEC) < 0)
                return compact_failed(j, journal_negative_errno());
        pid = fork();
        if (pid == 0)
                child_run(j, parent, state, userdata, holder[0]);
        close(holder[0]);
        if (pid < 0) {
                close(holder[1]);
                return compact_failed(j, journal_negative_errno());
        }
        pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
        if (pidfd < 0) {
                r = journal_negative_errno();
                close(holder[1]);
                (void)kill(pid, SIGKILL);
                (void)waitpid(pid, NULL, 0);
                return compact_failed(j, r);
        }
        j->bg.pidfd = pidfd;
        j->bg.holder = holder[1];
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

/* journal.next with the tail, durable under that name. Written in place, not through a tmp file:
 * until the snapshot is renamed, open removes a journal.next whatever it holds. */
static int next_write(struct journal *j, const struct buffer *next, int *ret_fd)
{
        int fd, r;

        if (unlinkat(j->dir_fd, JOURNAL_NEXT, 0) < 0 && errno != ENOENT)
                return journal_negative_errno();
        fd = openat(j->dir_fd, JOURNAL_NEXT, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
                    0600);
        if (fd < 0)
                return journal_negative_errno();
        r = journal_write_all(j, fd, next->data, next->size, 0);
        if (r >= 0)
                r = journal_sync_fd(j, fd);
        if (r >= 0)
                r = journal_sync_fd(j, j->dir_fd);
        if (r < 0) {
                close(fd);
                return r;
        }
        *ret_fd = fd;
        return 0;
}

/* The child's snapshot.tmp in place with the tail (the steps at the top of this file). */
static int swap_in(struct journal *j)
{
        struct buffer next = {};
        struct stat st;
        int fd = -1, r;

        /* A journal started afresh since the fork: the tail is not where the child left it. */
        if (j->fd < 0 || j->fd != j->bg.fd || j->epoch != j->bg.epoch)
                return -ESTALE;
        if (fstatat(j->dir_fd, SNAPSHOT_TMP, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return journal_negative_errno();
        r = tail_encode(j, &next);
        if (r < 0)
                return r;
        r = next_write(j, &next, &fd);
        free(next.data);
        if (r >= 0 && j->ops->renameat(j->dir_fd, SNAPSHOT_TMP, j->dir_fd, SNAPSHOT_FILE) < 0) {
                r = journal_negative_errno();
                close(fd);
        }
        if (r < 0) {
                (void)unlinkat(j->dir_fd, JOURNAL_NEXT, 0);
                return r;
        }
        /* The snapshot is in: from here the new journal is the one to append to. */
        switch_to_next(j, fd, (uint64_t)st.st_size);
        j->bg.next_not_renamed = true;
        /* The snapshot's rename reaches the disk before the journal's can. That one need not be
         * synced: until it is, open finds the journal.next that continues the snapshot. */
        r = journal_sync_fd(j, j->dir_fd);
        if (r >= 0 && j->ops->renameat(j->dir_fd, JOURNAL_NEXT, j->dir_fd, JOURNAL_FILE) < 0)
                r = journal_negative_errno();
        if (r >= 0)
                j->bg.next_not_renamed = false;
        /* Else the next commit renames it first; an open would too. */
        return r < 0 ? journal_fail(j, r) : 0;
}

/* The grandchild frees the files it holds and exits. */
static void release_holder(struct journal *j)
{
        if (j->bg.holder < 0)
                return;
        close(j->bg.holder);
        j->bg.holder = -1;
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
        release_holder(j);
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
        release_holder(j);
}
