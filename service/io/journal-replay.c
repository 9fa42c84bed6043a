/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * Replay at open: the snapshot, then the journal's complete batches checked against its proof;
 * what follows the last complete batch is classified (torn, damaged, lost), kept aside and
 * truncated. The result is the live set: the latest change of each timer, minus deletions.
 */

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "service/io/journal-internal.h"

/* One replayed record; `index` orders the changes to one timer. */
struct change {
        uint64_t index;
        bool deleted;
        struct journal_timer timer;
};

struct changes {
        struct change *items;
        size_t n;
        size_t allocated;
};

static int changes_add(struct changes *c, const struct record *rec)
{
        if (c->n == c->allocated) {
                size_t allocated = c->allocated > 0 ? c->allocated * 2 : 64;
                struct change *items = reallocarray(c->items, allocated, sizeof(*items));

                if (!items)
                        return -ENOMEM;
                c->items = items;
                c->allocated = allocated;
        }
        c->items[c->n] = (struct change){
            .index = c->n,
            .deleted = rec->type == RECORD_DELETE,
            .timer = rec->timer,
        };
        c->n++;
        return 0;
}

static int change_compare(const void *a, const void *b)
{
        const struct change *x = a, *y = b;
        int r = journal_key_compare(x->timer.owner, x->timer.name, y->timer.owner, y->timer.name);

        if (r != 0)
                return r;
        return x->index < y->index ? -1 : x->index > y->index;
}

/*
 * The latest change of each timer, minus deletions, in (owner, name) order. The live records move
 * down to the front of the changes' own buffer, which becomes the result (c gives it up): at a
 * million timers a second array would cost as much memory again. A journal_timer is smaller than
 * a change, so no record is overwritten before it is read.
 */
static int changes_live_set(struct changes *c, struct journal_timer **ret, size_t *ret_n)
{
        struct journal_timer *timers;
        size_t n = 0;

        static_assert(sizeof(struct journal_timer) <= sizeof(struct change),
                      "the live set fits in the changes' buffer");
        if (c->n == 0) {
                timers = calloc(1, sizeof(*timers));
                if (!timers)
                        return -ENOMEM;
                *ret = timers;
                *ret_n = 0;
                return 0;
        }
        qsort(c->items, c->n, sizeof(*c->items), change_compare);
        timers = (struct journal_timer *)(void *)c->items;
        for (size_t i = 0; i < c->n; i++) {
                const struct change *latest = &c->items[i];

                if (i + 1 < c->n && journal_key_compare(latest->timer.owner, latest->timer.name,
                                                        c->items[i + 1].timer.owner,
                                                        c->items[i + 1].timer.name) == 0)
                        continue;
                if (!latest->deleted)
                        memmove(&timers[n++], &latest->timer, sizeof(*timers));
        }
        *c = (struct changes){};
        *ret = timers;
        *ret_n = n;
        return 0;
}

/* A snapshot: every record a PUT, unsequenced, in strictly ascending (owner, name) order. */
static int snapshot_replay(const struct journal *j, const struct buffer *file, uint64_t *ret_epoch,
                           struct changes *c)
{
        size_t offset = SNAPSHOT_HEADER_SIZE;
        uint64_t n_records;
        uint32_t version;
        int r;

        r = journal_header_decode(file->data, file->size, SNAPSHOT_HEADER_SIZE, SNAPSHOT_MAGIC,
                                  SNAPSHOT_VERSION, &version, ret_epoch, &n_records);
        if (r < 0)
                return r;
        for (uint64_t i = 0; i < n_records; i++) {
                struct record rec;
                size_t size;

                if (i % INTERRUPT_CHECK_EVERY == INTERRUPT_CHECK_EVERY - 1 &&
                    journal_interrupted(j))
                        return -EINTR;
                if (journal_frame_check(file->data, file->size, offset, &rec, &size) !=
                        FRAME_VALID ||
                    rec.type != RECORD_PUT || rec.seq != 0 || rec.ends_batch)
                        return -EBADMSG;
                if (i > 0 && journal_key_compare(c->items[c->n - 1].timer.owner,
                                                 c->items[c->n - 1].timer.name, rec.timer.owner,
                                                 rec.timer.name) >= 0)
                        return -EBADMSG;
                r = changes_add(c, &rec);
                if (r < 0)
                        return r;
                offset += size;
        }
        return offset == file->size ? 0 : -EBADMSG;
}

/*
 * After a damaged record of batch `seq`, look for valid records: ones of the same batch belong to
 * the torn tail (counted in *ret_n); one of another batch proves the damaged one had been synced.
 */
static int journal_scan_damage(const struct buffer *file, size_t offset, uint64_t seq,
                               uint64_t *ret_n)
{
        uint64_t n = 0;

        while (offset < file->size) {
                struct record rec;
                size_t size;

                switch (journal_frame_check(file->data, file->size, offset, &rec, &size)) {
                case FRAME_DAMAGED:
                        offset++;
                        break;
                case FRAME_MALFORMED:
                        return -EBADMSG;
                case FRAME_VALID:
                        if (rec.seq != seq)
                                return -EBADMSG;
                        n++;
                        offset += size;
                        break;
                }
        }
        *ret_n = n;
        return 0;
}

struct journal_replay {
        uint64_t next_seq;
        size_t valid_size; /* up to the end of the last complete batch */
        uint64_t n_replayed;
        uint64_t n_dropped;
        enum journal_tail tail;
        uint64_t tail_readable;
        /* JOURNAL_TAIL_LOST: the proven batches, records and bytes that are not there */
        uint64_t lost_batches;
        uint64_t lost_records;
        uint64_t lost_bytes;
};

/*
 * Whether the damaged record at `offset` looks like what a crash during its append leaves: the
 * record runs past the end of the file, or a 512-byte sector of it that never reached the disk
 * reads as zeros (the sectors that did hold the right bytes). Anything else was written whole and
 * altered since.
 */
static bool looks_torn(const struct buffer *file, size_t offset)
{
        const uint8_t *frame = file->data + offset;
        size_t end;
        uint32_t payload_size;

        if (file->size - offset < FRAME_SIZE)
                return true;
        payload_size = journal_load_u32(frame);
        if (payload_size > PAYLOAD_MAX)
                return false;
        if (payload_size > file->size - offset - FRAME_SIZE)
                return true;
        end = offset + FRAME_SIZE + payload_size;
        for (size_t start = offset; start < end;) {
                size_t next = (start / SECTOR_SIZE + 1) * SECTOR_SIZE;
                bool zeros = true;

                if (next > end)
                        next = end;
                for (size_t i = start; zeros && i < next; i++)
                        zeros = file->data[i] == 0;
                if (zeros)
                        return true;
                start = next;
        }
        return false;
}

/*
 * The records from `start`; only complete batches are added to `c`. A complete batch must agree
 * with the proof: the proven one ends where the proof says, with as many records, and earlier
 * ones end before it. Proven batches that are not all there are JOURNAL_TAIL_LOST.
 */
static int journal_replay(const struct journal *j, const struct buffer *file, size_t start,
                          const struct proof *proof, struct changes *c, struct journal_replay *ret)
{
        size_t offset = start, n_before = c->n, n_committed = c->n;
        uint64_t seq = 1, n_damaged = 0;
        int r;

        ret->valid_size = offset;
        while (offset < file->size) {
                struct record rec;
                size_t size;
                enum frame_check check;

                if ((c->n - n_before) % INTERRUPT_CHECK_EVERY == INTERRUPT_CHECK_EVERY - 1 &&
                    journal_interrupted(j))
                        return -EINTR;
                check = journal_frame_check(file->data, file->size, offset, &rec, &size);
                if (check == FRAME_MALFORMED)
                        return -EBADMSG;
                if (check == FRAME_DAMAGED) {
                        r = journal_scan_damage(file, offset + 1, seq, &n_damaged);
                        if (r < 0)
                                return r;
                        ret->tail_readable = n_damaged;
                        ret->tail =
                            looks_torn(file, offset) ? JOURNAL_TAIL_TORN : JOURNAL_TAIL_DAMAGED;
                        n_damaged++;
                        break;
                }
                if (rec.seq != seq)
                        return -EBADMSG;
                r = changes_add(c, &rec);
                if (r < 0)
                        return r;
                offset += size;
                if (rec.ends_batch) {
                        uint64_t n = c->n - n_before;

                        if (seq < proof->seq ? offset >= proof->end || n >= proof->records
                                             : seq == proof->seq &&
                                                   (offset != proof->end || n != proof->records))
                                return -EBADMSG;
                        seq++;
                        ret->valid_size = offset;
                        n_committed = c->n;
                }
        }
        ret->n_replayed = n_committed - n_before;
        ret->n_dropped = (c->n - n_committed) + n_damaged;
        ret->tail_readable += c->n - n_committed;
        /* Valid records without the end mark: the file ends where a crash cut the batch. */
        if (ret->tail == JOURNAL_TAIL_NONE && ret->valid_size < file->size)
                ret->tail = JOURNAL_TAIL_TORN;
        if (seq <= proof->seq) {
                /* What the checks above leave: each figure at least 1. */
                ret->tail = JOURNAL_TAIL_LOST;
                ret->lost_batches = proof->seq - (seq - 1);
                ret->lost_bytes = proof->end - ret->valid_size;
                ret->lost_records = proof->records - ret->n_replayed;
        }
        c->n = n_committed;
        ret->next_seq = seq;
        return 0;
}

/* The snapshot, if there is one, and the journal.next a compaction may have left. */
static int snapshot_load(struct journal *j, struct changes *c, struct journal_open_result *result,
                         bool *ret_has_snapshot)
{
        struct buffer snapshot = {};
        int r;

        result->file = SNAPSHOT_FILE;
        r = journal_file_read(j, SNAPSHOT_FILE, NULL, &snapshot);
        if (r < 0 && r != -ENOENT)
                return r;
        *ret_has_snapshot = r >= 0;
        if (*ret_has_snapshot) {
                r = snapshot_replay(j, &snapshot, &j->epoch, c);
                j->snapshot_size = snapshot.size;
                free(snapshot.data);
                if (r < 0)
                        return r;
        }
        result->n_replayed = c->n;
        result->file = JOURNAL_NEXT;
        return journal_next_settle(j, j->epoch);
}

static int load_files(struct journal *j, struct changes *c, struct journal_open_result *result)
{
        struct buffer file = {};
        struct journal_replay replay = {};
        struct proof proof = {};
        uint64_t epoch;
        bool has_snapshot;
        int r;

        r = snapshot_load(j, c, result, &has_snapshot);
        if (r < 0)
                return r;

        result->file = JOURNAL_FILE;
        r = journal_file_read(j, JOURNAL_FILE, &j->fd, &file);
        if (r == -ENOENT && !has_snapshot)
                result->created = true;
        if (r == -ENOENT)
                return has_snapshot ? -EBADMSG : journal_start_fresh(j);
        if (r < 0)
                return r;
        r = journal_header_decode(file.data, file.size, JOURNAL_HEADER_SIZE, JOURNAL_MAGIC,
                                  JOURNAL_VERSION, &j->version, &epoch, NULL);
        if (r >= 0 && epoch > j->epoch)
                r = -EBADMSG;
        if (r >= 0 && epoch < j->epoch) {
                /* Left by a crash during compaction: the snapshot holds all of it. */
                free(file.data);
                result->stale_journal = true;
                return journal_start_fresh(j);
        }
        j->records_start = j->version == JOURNAL_VERSION ? JOURNAL_RECORDS_V3 : JOURNAL_HEADER_SIZE;
        if (r >= 0 && j->version == JOURNAL_VERSION)
                r = journal_proof_read(&file, &proof, &j->proof_slot);
        if (r >= 0)
                r = journal_replay(j, &file, j->records_start, &proof, c, &replay);
        if (r >= 0 && replay.valid_size < file.size)
                r = journal_damaged_keep(j, &file, replay.valid_size, result);
        free(file.data);
        if (r < 0)
                return r;

        j->committed_size = replay.valid_size;
        j->committed_records = replay.n_replayed;
        j->next_seq = replay.next_seq;
        result->proven_batch = proof.seq;
        result->n_replayed += replay.n_replayed;
        result->n_dropped = replay.n_dropped;
        result->bytes_truncated = file.size - replay.valid_size;
        result->tail = replay.tail;
        result->tail_batch = replay.next_seq;
        result->tail_readable = replay.tail_readable;
        result->lost_batches = replay.lost_batches;
        result->lost_records = replay.lost_records;
        result->lost_bytes = replay.lost_bytes;
        if (result->bytes_truncated > 0) {
                j->needs_truncate = true;
                r = journal_repair(j);
        } else {
                /* What was read may have been in the page cache only (a crash before its
                 * fdatasync): durable before a commit proves it. */
                r = journal_sync_fd(j, j->fd);
        }
        if (r >= 0 && replay.tail == JOURNAL_TAIL_LOST)
                r = journal_proof_lower(j);
        return r;
}

int journal_load(struct journal *j, struct journal_open_result *result)
{
        struct changes c = {};
        int r;

        r = load_files(j, &c, result);
        if (r >= 0) {
                result->file = NULL;
                result->format_version = j->version;
                r = changes_live_set(&c, &result->timers, &result->n_timers);
        }
        free(c.items);
        return r;
}
