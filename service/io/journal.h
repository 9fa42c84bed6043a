/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The journal of retained timers: their durable state in the state directory, so that a restart
 * (or a kill -9 at any moment) loses nothing that was acknowledged.
 *
 * Two files: `snapshot`, written atomically (tmp, fdatasync, rename, sync the directory) by
 * compaction, and `journal`, append-only, replayed on top of it. Each starts with a checksummed
 * header (magic "TIMERDS1"/"TIMERDJ1", format version, epoch: the snapshot names the epoch of the
 * journal that continues it, so a journal left over by a crash during compaction is recognised and
 * discarded). Records are [u32 payload length][u32 CRC-32C of the payload][payload], everything
 * little-endian, encoded field by field; a journal record also carries its batch's sequence.
 * The handover of a timer was added to format 2 compatibly: a record of a timer that has one ends
 * with it, so stores written before it replay unchanged (their timers have none), and an older
 * timerd reads a store as long as no timer in it declares a handover.
 *
 * Group commit: journal_put()/journal_delete() only append to an in-memory batch; journal_commit()
 * writes the whole batch with one write and one fdatasync. A batch is atomic on replay: its last
 * record carries an end mark, and a batch without one (a crash before its fdatasync returned) is
 * dropped whole.
 *
 * Proof of what was acknowledged (journal format 3; the snapshot stays format 2): after the
 * 24-byte header come two checksummed proof slots, each alone in a 512-byte sector, and the records
 * start at byte 1536. A slot names a batch, the offset where it ends and the number of records up
 * to it: every batch up to that one had been synced (and so acknowledged). journal_commit() of
 * batch N writes "synced through N-1" into the slot that does not hold the best proof, then the
 * batch, then the one fdatasync it always made: no extra sync, and a torn slot write never
 * damages the previous proof. Only the last batch can thus be a torn, unacknowledged write. Open
 * syncs the journal once (what it read may have been in the page cache only), a compaction starts
 * a fresh journal with empty proofs. A format 2 journal (no proof) is read and appended to as it
 * is, and journal_should_compact() says true at once: the compaction after the next commit starts a
 * format 3 journal.
 *
 * Replay (journal_open):
 *   - damage after the last complete batch is dropped: its bytes are first kept aside in
 *     `journal.damaged-<epoch>-<offset>-<realtime ns>` (written, synced and renamed in place; at
 * most JOURNAL_DAMAGED_KEEP such files, the oldest removed), then the journal is truncated, and the
 * result says what it was (enum journal_tail): proven batches lost, a torn write of the unsynced
 * last batch, or a record written whole and damaged since. If the copy cannot be made, nothing is
 * truncated and the open fails. A bad record followed by valid records of the same batch is tail
 * too: pages of an unsynced write can reach the disk in any order. When proven batches were
 * dropped, both proof slots are lowered to what is left (each synced in turn).
 *   - a bad record followed by a valid record of a later batch (which proves the bad one had been
 *     synced), a bad snapshot, records out of sequence, no valid proof slot, or batches that
 *     contradict the proof (the proven batch ends elsewhere or with another record count):
 *     -EBADMSG, a store fault. Nothing is guessed and nothing is changed on disk.
 *   - a wrong magic or format version: -EPROTONOSUPPORT.
 *   - a missing state directory (its parent must exist) or an empty one: an empty store, created.
 *     A snapshot without a journal, or a journal that continues a missing snapshot: -EBADMSG.
 *   - another journal holds the directory (flock): -EBUSY.
 *   - a file of the store that is not a regular file: -EBADFD (a FIFO, socket or device: it is
 *     never read, so it cannot block the open), -ELOOP (a symlink: never followed), -EISDIR.
 *
 * Disk trouble: a failing write or fdatasync fails the commit with its -errno and drops the batch
 * (the caller rolls its in-memory changes back). The file is truncated back to its committed length
 * so nothing half-written stays; when even that fails, the next commit repairs it first and fails
 * if it cannot. journal_error() says whether the store is degraded.
 *
 * Single-threaded: one loop owns a journal.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/timer-fields.h"
#include "calendar/calendar.h"
#include "service/core/calendar-timer.h"
#include "timerd/timerd-types.h"

/* The text of /proc/sys/kernel/random/boot_id. */
#define JOURNAL_BOOT_ID_MAX 36

/*
 * The durable state of one retained timer: the fields of base/timer-fields.h (declaration and
 * runtime state, times absolute on `clock`), under the journal's names; a live cadence of 0 is
 * the declared one. signo is 0..255; a calendar timer's schedule is kept as text.
 */
struct journal_timer {
        uint32_t owner;
        char name[TIMERD_NAME_MAX + 1]; /* 1..TIMERD_NAME_MAX bytes, NUL-terminated */
        TD_DECLARATION_FIELDS(TD_JOURNAL_MEMBER)
        TD_TIMER_FIELDS(TD_JOURNAL_MEMBER)

        /* Calendar timers: the expressions (service/core/calendar-timer.h), their zone and whether
         * the randomized delay is fixed; "" otherwise. */
        char calendar[TD_CALENDAR_SOURCE_MAX + 1];
        char timezone[CALENDAR_ZONE_MAX];
        bool fixed_random_delay;

        /* When this state was written, to re-base a monotonic or boottime deadline after a reboot
         * (a different boot id): realtime and `clock` read at the same moment. */
        uint64_t written_realtime_usec;
        uint64_t written_clock_usec;
        char boot_id[JOURNAL_BOOT_ID_MAX + 1]; /* "" when unknown */
};

/*
 * The journal's writes go through these, with the system calls' contract (-1 and errno). Tests
 * replace them to inject ENOSPC or EIO at any call; production passes NULL to journal_open().
 */
struct journal_ops {
        ssize_t (*pwrite)(int fd, const void *buf, size_t size, off_t offset);
        int (*fdatasync)(int fd);
        int (*ftruncate)(int fd, off_t length);
        int (*renameat)(int old_dir_fd, const char *old_path, int new_dir_fd, const char *new_path);
        /* Asked now and then during a long replay: true ends journal_open() with -EINTR, changing
         * nothing. NULL: never. */
        bool (*interrupted)(void);
};

/* What the bytes after the last complete batch look like; they are dropped either way. */
enum journal_tail {
        JOURNAL_TAIL_NONE,
        /* What a crash during an append leaves: the record runs past the end of the file or has
         * zeroed 512-byte sectors, after the proven batches. The last batch, never synced, never
         * acknowledged. (Format 2 proves nothing: there a zeroed or cut-off end can also hide
         * acknowledged batches.) */
        JOURNAL_TAIL_TORN,
        /* A record after the proven batches, present in full, whose checksum fails with no zeroed
         * sector: written whole and altered since, so possibly synced and acknowledged. */
        JOURNAL_TAIL_DAMAGED,
        /* Damage (or the end of the file) at or before the end of the proven batches: synced and
         * acknowledged changes lost, counted in lost_*. */
        JOURNAL_TAIL_LOST,
};

/* At most this many journal.damaged-* files are kept; the oldest go first. */
#define JOURNAL_DAMAGED_KEEP 8

/*
 * How journal_open() hands over the live set: each timer once, in (owner, name) order, decoded
 * from the files where they are. A snapshot's records are checked as they are taken (one read of
 * each: its checksum and decode together), so a malformed one may come after timers were handed
 * over: the open then fails as a whole, and the caller drops what it took.
 */
struct journal_take {
        /* Once, before the first timer: how many come. NULL: not told. */
        int (*reserve)(void *userdata, size_t n_timers);
        /* A negative return ends the open with it. */
        int (*timer)(void *userdata, const struct journal_timer *timer);
        void *userdata;
};

struct journal_open_result {
        size_t n_timers;          /* in the live set */
        uint64_t n_replayed;      /* snapshot and journal records applied */
        uint64_t n_dropped;       /* torn-tail records truncated away (those of the incomplete
                                   * last batch, a damaged one counted once): never acknowledged */
        uint64_t bytes_truncated; /* the size of that tail */
        unsigned format_version;  /* of the journal replayed: 2 (proves nothing) or 3 */
        uint64_t proven_batch;    /* batches up to this one were proven acknowledged (0: none) */
        enum journal_tail tail;
        uint64_t tail_batch;        /* the sequence of the batch the tail starts in */
        uint64_t tail_readable;     /* records of it that passed their checksum */
        char tail_file[64];         /* where its bytes were kept before the truncation; "" when the
                                     * file ended there (JOURNAL_TAIL_LOST only) */
        uint64_t lost_batches;      /* JOURNAL_TAIL_LOST: proven batches not replayed, */
        uint64_t lost_records;      /* their records */
        uint64_t lost_bytes;        /* and their bytes (from the tail to the proven end) */
        unsigned n_damaged_removed; /* older journal.damaged-* files removed to keep the bound */
        bool stale_journal;         /* a journal the snapshot already covers was replaced */
        bool created;               /* there was no store: the first start on this directory */
        const char *file; /* also set on failure: the file it is about ("journal", ...), or NULL */
};

struct journal;

/* Replay `state_dir`, hand the live set to `take` (NULL: only checked), repair a torn tail, and
 * keep the journal open for appending. The files change only once every record was read and
 * taken. On failure only ret_result->file is set. -errno for system errors, -EINTR when
 * ops->interrupted() said so, what take->timer() or take->reserve() failed with; see the top of
 * this file for the store faults. */
int journal_open(const char *state_dir, const struct journal_ops *ops,
                 const struct journal_take *take, struct journal_open_result *ret_result,
                 struct journal **ret_journal);

/* Drops an uncommitted batch: commit first. A compaction's child is killed and waited for. */
void journal_close(struct journal *j);

/* Append to the batch. -EINVAL for a name that is not 1..TIMERD_NAME_MAX bytes, a boot id longer
 * than JOURNAL_BOOT_ID_MAX, an enum or signal number out of range (the batch is unchanged);
 * -ENOMEM. */
int journal_put(struct journal *j, const struct journal_timer *timer);
int journal_delete(struct journal *j, uint32_t owner, const char *name);

/* Make the batch durable: one write, one fdatasync. 0 with an empty batch (after a pending repair).
 * On failure the batch is dropped and the journal is as it was before it. */
int journal_commit(struct journal *j);

/* Drop the batch unwritten (the caller could not complete it). */
void journal_abort(struct journal *j);

/*
 * Replace snapshot and journal by a snapshot of `timers` (any order, unique (owner, name)) and an
 * empty journal. `timers` must be the committed state, every retained timer as a replay would
 * return it now: the snapshot becomes the truth. -EBUSY while a batch is uncommitted, -EINVAL for
 * an invalid or duplicate timer (nothing written). A failure before the new snapshot is in place
 * leaves everything as it was; after, the snapshot is authoritative and the next commit first
 * starts the fresh journal.
 */
int journal_compact(struct journal *j, const struct journal_timer *timers, size_t n_timers);

/* Whether the journal outgrew its snapshot: more than 2 × snapshot + 1 MiB of records. False
 * while a compaction runs in a child, and for a while after one failed (1 s, doubling up to a
 * minute). */
bool journal_should_compact(const struct journal *j);

/*
 * Compaction off the caller's loop (the steps and their crash safety: journal-compact.c). In a
 * forked child, `state` hands every timer of the committed state, as journal_compact() takes it,
 * to `emit` in (owner, name) order (the child frees nothing: it exits); the child writes and
 * syncs the snapshot as they come. `emit` fails with -EINVAL for an invalid timer or one out of
 * order, and `state` returns what it failed with. The caller keeps committing and watches the
 * returned pidfd: readable when the child exited, then journal_compact_finish(). -EBUSY while a
 * batch is uncommitted or a child runs (one at a time); -errno when no child could be started.
 */
typedef int (*journal_emit_fn)(void *emit_userdata, const struct journal_timer *timer);
typedef int (*journal_state_fn)(void *userdata, journal_emit_fn emit, void *emit_userdata);
int journal_compact_start(struct journal *j, journal_state_fn state, void *userdata);

/* Reap the child without waiting and, if it wrote the snapshot, put it in place with what was
 * committed since the start. -EAGAIN while it runs, -ECHILD without one. Its failure (the errno
 * it exited with, -ECANCELED when killed) leaves the store as it was and is returned. */
int journal_compact_finish(struct journal *j);

/* Kill a running child and wait for it (SIGKILL: short); the store stays as it was. */
void journal_compact_cancel(struct journal *j);

/* 0, or the error of the last compaction while none has succeeded since. */
int journal_compact_error(const struct journal *j);

/* 0 while healthy; else the -errno of the last failed commit, compaction or repair, until a
 * non-empty commit or a compaction succeeds: the store is degraded. */
int journal_error(const struct journal *j);
