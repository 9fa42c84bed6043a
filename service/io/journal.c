/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "service/io/journal-internal.h"

static const struct journal_ops system_ops = {
    .pwrite = pwrite,
    .fdatasync = fdatasync,
    .ftruncate = ftruncate,
    .renameat = renameat,
};

int journal_open(const char *state_dir, const struct journal_ops *ops,
                 const struct journal_take *take, struct journal_open_result *ret_result,
                 struct journal **ret_journal)
{
        struct journal_open_result result = {};
        struct journal *j;
        int r;

        if (!state_dir || !ret_result || !ret_journal)
                return -EINVAL;
        j = calloc(1, sizeof(*j));
        if (!j)
                return -ENOMEM;
        *j = (struct journal){.ops = ops ? ops : &system_ops,
                              .dir_fd = -1,
                              .fd = -1,
                              .bg = {.pidfd = -1, .holder = -1}};

        r = journal_open_dir(j, state_dir, &result.file);
        if (r >= 0)
                r = journal_load(j, take, &result);
        if (r < 0) {
                journal_close(j);
                *ret_result = (struct journal_open_result){.file = result.file};
                return r;
        }
        *ret_result = result;
        *ret_journal = j;
        return 0;
}

void journal_close(struct journal *j)
{
        if (!j)
                return;
        journal_compact_cancel(j);
        if (j->fd >= 0)
                close(j->fd);
        if (j->dir_fd >= 0)
                close(j->dir_fd);
        free(j->batch.data);
        free(j);
}

int journal_put(struct journal *j, const struct journal_timer *timer)
{
        if (!j || !timer || !journal_timer_valid(timer))
                return -EINVAL;
        return journal_record_append(&j->batch, timer->owner, timer->name, timer);
}

int journal_delete(struct journal *j, uint32_t owner, const char *name)
{
        if (!j || !journal_name_valid(name))
                return -EINVAL;
        return journal_record_append(&j->batch, owner, name, NULL);
}

int journal_commit(struct journal *j)
{
        struct buffer *b;
        uint64_t n_records = 0;
        unsigned slot;
        int r;

        if (!j)
                return -EINVAL;
        b = &j->batch;
        slot = j->proof_slot;
        r = journal_repair(j);
        if (r < 0) {
                b->size = 0;
                return journal_fail(j, r);
        }
        if (b->size == 0)
                return 0;

        for (size_t offset = 0; offset < b->size; n_records++) {
                size_t next = offset + journal_record_size(b->data + offset);

                journal_record_seal(b->data + offset, j->next_seq, next == b->size);
                offset = next;
        }
        /* Everything committed so far is synced: proven in the same fdatasync as the batch. */
        if (j->version == JOURNAL_VERSION)
                r = journal_proof_write(j, &slot);
        if (r >= 0)
                r = journal_write_all(j, j->fd, b->data, b->size, j->committed_size);
        if (r >= 0)
                r = journal_sync_fd(j, j->fd);
        if (r < 0) {
                b->size = 0;
                j->needs_truncate = true;
                /* At once if the disk lets us; else the next commit tries again first. */
                (void)journal_repair(j);
                return journal_fail(j, r);
        }
        j->committed_size += b->size;
        j->committed_records += n_records;
        j->proof_slot = slot;
        j->next_seq++;
        b->size = 0;
        j->error = 0;
        return 0;
}

void journal_abort(struct journal *j)
{
        if (j)
                j->batch.size = 0;
}

int journal_error(const struct journal *j)
{
        return j->error;
}
