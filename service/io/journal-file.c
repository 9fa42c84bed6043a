/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * The journal's files: opening and reading them without following or blocking on anything that is
 * not a regular file, writing and syncing, installing a file whole (tmp, sync, rename), the proof
 * slots, starting a fresh journal, repairing after a failed write, and keeping a damaged tail
 * aside in journal.damaged-* files.
 */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "service/io/journal-internal.h"

int journal_negative_errno(void)
{
        return errno > 0 ? -errno : -EIO;
}

bool journal_interrupted(const struct journal *j)
{
        return j->ops->interrupted && j->ops->interrupted();
}

/*
 * Open a file of the store, only if it is a regular file: never through a symlink, and never
 * waiting (O_NONBLOCK: a FIFO or a device opens at once and is then refused unread).
 */
static int file_open(int dir_fd, const char *name, int flags)
{
        struct stat st;
        int fd;

        fd = openat(dir_fd, name, flags | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
        if (fd < 0)
                return journal_negative_errno();
        if (fstat(fd, &st) < 0) {
                int r = journal_negative_errno();

                close(fd);
                return r;
        }
        if (!S_ISREG(st.st_mode)) {
                close(fd);
                return S_ISDIR(st.st_mode) ? -EISDIR : -EBADFD;
        }
        return fd;
}

/* The whole file, or -ENOENT. `ret_fd` keeps it open for writing. */
int journal_file_read(const struct journal *j, const char *name, int *ret_fd, struct buffer *ret)
{
        struct buffer b = {};
        int fd, r;

        fd = file_open(j->dir_fd, name, ret_fd ? O_RDWR : O_RDONLY);
        if (fd < 0)
                return fd;
        for (;;) {
                ssize_t n;

                if (journal_interrupted(j)) {
                        r = -EINTR;
                        goto fail;
                }
                r = journal_buffer_reserve(&b, 64 * 1024);
                if (r < 0)
                        goto fail;
                n = pread(fd, b.data + b.size, b.allocated - b.size, (off_t)b.size);
                if (n < 0) {
                        r = journal_negative_errno();
                        goto fail;
                }
                if (n == 0)
                        break;
                b.size += (size_t)n;
        }
        if (ret_fd)
                *ret_fd = fd;
        else
                close(fd);
        *ret = b;
        return 0;
fail:
        free(b.data);
        close(fd);
        return r;
}

/* Mapped, the pages are the page cache's: no copy, and faults that map a run of pages each. */
int journal_file_map(const struct journal *j, const char *name, int *ret_fd, struct buffer *ret)
{
        struct stat st;
        void *data = NULL;
        int fd, r;

        fd = file_open(j->dir_fd, name, ret_fd ? O_RDWR : O_RDONLY);
        if (fd < 0)
                return fd;
        if (fstat(fd, &st) < 0) {
                r = journal_negative_errno();
                goto fail;
        }
        if ((uint64_t)st.st_size > SIZE_MAX) {
                r = -EFBIG;
                goto fail;
        }
        if (st.st_size > 0) {
                data = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
                if (data == MAP_FAILED) {
                        r = journal_negative_errno();
                        goto fail;
                }
                /* Read front to back, once: read ahead. */
                (void)madvise(data, (size_t)st.st_size, MADV_SEQUENTIAL);
        }
        if (ret_fd)
                *ret_fd = fd;
        else
                close(fd);
        *ret = (struct buffer){.data = data, .size = (size_t)st.st_size};
        return 0;
fail:
        close(fd);
        return r;
}

void journal_file_unmap(struct buffer *b)
{
        if (b->data)
                (void)munmap(b->data, b->size);
        *b = (struct buffer){};
}

int journal_write_all(const struct journal *j, int fd, const void *data, size_t size,
                      uint64_t offset)
{
        const uint8_t *p = data;

        while (size > 0) {
                ssize_t n = j->ops->pwrite(fd, p, size, (off_t)offset);

                if (n < 0)
                        return journal_negative_errno();
                if (n == 0)
                        return -EIO;
                p += n;
                size -= (size_t)n;
                offset += (uint64_t)n;
        }
        return 0;
}

int journal_sync_fd(const struct journal *j, int fd)
{
        return j->ops->fdatasync(fd) < 0 ? journal_negative_errno() : 0;
}

/*
 * Put `size` bytes in place as `name`, whole or not at all: a tmp file, synced, renamed over it.
 * The directory is synced before the rename, so that a snapshot renamed earlier is durable before
 * the journal that continues it. Fails with nothing renamed; returns the new file's fd.
 */
int journal_file_install(struct journal *j, const char *tmp, const char *name, const void *data,
                         size_t size, int *ret_fd)
{
        int fd, r;

        /* A new file of ours, whatever was left under that name. */
        if (unlinkat(j->dir_fd, tmp, 0) < 0 && errno != ENOENT)
                return journal_negative_errno();
        fd = openat(j->dir_fd, tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0)
                return journal_negative_errno();
        r = journal_write_all(j, fd, data, size, 0);
        if (r >= 0)
                r = journal_sync_fd(j, fd);
        if (r >= 0)
                r = journal_sync_fd(j, j->dir_fd);
        if (r >= 0 && j->ops->renameat(j->dir_fd, tmp, j->dir_fd, name) < 0)
                r = journal_negative_errno();
        if (r < 0) {
                close(fd);
                /* Best effort: a leftover tmp file is ignored and removed by the next open. */
                (void)unlinkat(j->dir_fd, tmp, 0);
                return r;
        }
        *ret_fd = fd;
        return 0;
}

/* What the journal holds up to its committed size, all of it synced. */
static struct proof committed_proof(const struct journal *j)
{
        return (struct proof){
            .seq = j->next_seq - 1,
            .end = j->committed_size,
            .records = j->committed_records,
        };
}

/* Write the committed state into the slot that does not hold the best proof; not synced. */
int journal_proof_write(struct journal *j, unsigned *ret_slot)
{
        uint8_t slot[PROOF_SLOT_SIZE];
        struct proof proof = committed_proof(j);

        *ret_slot = 1 - j->proof_slot;
        journal_proof_encode(slot, &proof);
        return journal_write_all(j, j->fd, slot, sizeof(slot),
                                 PROOF_SLOT_OFFSET + *ret_slot * (uint64_t)SECTOR_SIZE);
}

/* After proven batches were dropped: both slots say what is left, one synced before the other
 * is overwritten, so that no proof names a batch the journal no longer holds. */
int journal_proof_lower(struct journal *j)
{
        for (unsigned i = 0; i < 2; i++) {
                unsigned slot;
                int r = journal_proof_write(j, &slot);

                if (r >= 0)
                        r = journal_sync_fd(j, j->fd);
                if (r < 0)
                        return r;
                j->proof_slot = slot;
        }
        return 0;
}

int journal_start_fresh(struct journal *j)
{
        uint8_t header[JOURNAL_RECORDS_V3] = {};
        struct proof none = {.end = JOURNAL_RECORDS_V3};
        int fd, r;

        /* Whatever happens below, the old journal is superseded: never append to it again. */
        if (j->fd >= 0)
                close(j->fd);
        j->fd = -1;
        j->version = JOURNAL_VERSION;
        j->records_start = j->committed_size = JOURNAL_RECORDS_V3;
        j->committed_records = 0;
        j->proof_slot = 0;
        j->needs_truncate = false;

        journal_header_encode(header, JOURNAL_HEADER_SIZE, JOURNAL_MAGIC, JOURNAL_VERSION, j->epoch,
                              0);
        for (unsigned i = 0; i < 2; i++)
                journal_proof_encode(header + PROOF_SLOT_OFFSET + i * SECTOR_SIZE, &none);
        r = journal_file_install(j, JOURNAL_TMP, JOURNAL_FILE, header, sizeof(header), &fd);
        if (r < 0)
                return r;
        /* Appends to it must not be lost to a rename that did not reach the disk. */
        r = journal_sync_fd(j, j->dir_fd);
        if (r < 0) {
                close(fd);
                return r;
        }
        j->fd = fd;
        j->next_seq = 1;
        return 0;
}

/* Undo what a failure may have left behind before anything new is written. */
int journal_repair(struct journal *j)
{
        int r;

        if (j->bg.next_not_renamed) {
                r = journal_next_install(j);
                if (r < 0)
                        return r;
        }
        if (j->fd < 0)
                return journal_start_fresh(j);
        if (!j->needs_truncate)
                return 0;
        if (j->ops->ftruncate(j->fd, (off_t)j->committed_size) < 0)
                return journal_negative_errno();
        /* The shorter size must be durable too, or a crash could bring the failed batch back. */
        r = journal_sync_fd(j, j->fd);
        if (r < 0)
                return r;
        j->needs_truncate = false;
        return 0;
}

int journal_fail(struct journal *j, int error)
{
        j->error = error;
        return error;
}

int journal_open_dir(struct journal *j, const char *state_dir, const char **ret_file)
{
        if (mkdir(state_dir, 0700) < 0 && errno != EEXIST)
                return journal_negative_errno();
        j->dir_fd = open(state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (j->dir_fd < 0)
                return journal_negative_errno();
        if (flock(j->dir_fd, LOCK_EX | LOCK_NB) < 0)
                return errno == EWOULDBLOCK ? -EBUSY : journal_negative_errno();
        for (size_t i = 0; i < 3; i++) {
                const char *tmp = i == 0 ? SNAPSHOT_TMP : i == 1 ? JOURNAL_TMP : DAMAGED_TMP;

                if (unlinkat(j->dir_fd, tmp, 0) < 0 && errno != ENOENT) {
                        *ret_file = tmp;
                        return journal_negative_errno();
                }
        }
        return 0;
}

/* Remove the oldest journal.damaged-* files (by modification time) beyond the bound. */
static int damaged_prune(const struct journal *j, unsigned *ret_removed)
{
        DIR *d;
        int fd = dup(j->dir_fd), r = 0;

        if (fd < 0)
                return journal_negative_errno();
        d = fdopendir(fd);
        if (!d) {
                r = journal_negative_errno();
                close(fd);
                return r;
        }
        for (;;) {
                char oldest[256] = "";
                struct timespec oldest_time = {};
                unsigned n = 0;
                struct dirent *e;

                rewinddir(d);
                while ((e = readdir(d))) {
                        struct stat st;

                        if (strncmp(e->d_name, DAMAGED_FILE, strlen(DAMAGED_FILE)) != 0 ||
                            fstatat(j->dir_fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                                continue;
                        n++;
                        if (!oldest[0] || st.st_mtim.tv_sec < oldest_time.tv_sec ||
                            (st.st_mtim.tv_sec == oldest_time.tv_sec &&
                             st.st_mtim.tv_nsec < oldest_time.tv_nsec)) {
                                snprintf(oldest, sizeof(oldest), "%s", e->d_name);
                                oldest_time = st.st_mtim;
                        }
                }
                if (n <= JOURNAL_DAMAGED_KEEP)
                        break;
                if (unlinkat(j->dir_fd, oldest, 0) < 0) {
                        r = journal_negative_errno();
                        break;
                }
                (*ret_removed)++;
        }
        closedir(d);
        return r;
}

/* Keep the bytes about to be truncated away, durably, before anything is truncated. */
int journal_damaged_keep(struct journal *j, const struct buffer *file, size_t offset,
                         struct journal_open_result *result)
{
        struct timespec now;
        int fd, r;

        /* The time too: the same place may be damaged again, and no copy replaces another. */
        if (clock_gettime(CLOCK_REALTIME, &now) < 0)
                return journal_negative_errno();
        snprintf(result->tail_file, sizeof(result->tail_file),
                 DAMAGED_FILE "%" PRIu64 "-%zu-%lld%09ld", j->epoch, offset, (long long)now.tv_sec,
                 now.tv_nsec);
        r = journal_file_install(j, DAMAGED_TMP, result->tail_file, file->data + offset,
                                 file->size - offset, &fd);
        if (r < 0)
                return r;
        close(fd);
        /* The rename must be durable before the truncation is. */
        r = journal_sync_fd(j, j->dir_fd);
        if (r < 0)
                return r;
        return damaged_prune(j, &result->n_damaged_removed);
}

int journal_next_install(struct journal *j)
{
        int r;

        if (j->ops->renameat(j->dir_fd, JOURNAL_NEXT, j->dir_fd, JOURNAL_FILE) < 0)
                return journal_negative_errno();
        r = journal_sync_fd(j, j->dir_fd);
        if (r < 0)
                return r;
        j->bg.next_not_renamed = false;
        return 0;
}

int journal_next_step(const struct journal *j, uint64_t epoch, enum next_step *ret)
{
        struct buffer next = {};
        uint64_t next_epoch;
        uint32_t version;
        int r;

        *ret = NEXT_NONE;
        r = journal_file_read(j, JOURNAL_NEXT, NULL, &next);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        r = journal_header_decode(next.data, next.size, JOURNAL_HEADER_SIZE, JOURNAL_MAGIC,
                                  JOURNAL_VERSION, &version, &next_epoch, NULL);
        free(next.data);
        /* Written and synced whole before the snapshot was renamed: with the snapshot it continues,
         * it holds what was committed during the compaction. Otherwise the snapshot never came. */
        *ret = r >= 0 && next_epoch == epoch ? NEXT_INSTALL : NEXT_REMOVE;
        return 0;
}

int journal_next_settle(struct journal *j, enum next_step step)
{
        if (step == NEXT_NONE)
                return 0;
        if (step == NEXT_INSTALL)
                return journal_next_install(j);
        if (unlinkat(j->dir_fd, JOURNAL_NEXT, 0) < 0)
                return journal_negative_errno();
        return journal_sync_fd(j, j->dir_fd);
}
