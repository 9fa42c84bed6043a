/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * Replay at open: the snapshot, then the journal's complete batches checked against its proof;
 * what follows the last complete batch is classified (torn, damaged, lost). The live set, the
 * latest change of each timer minus deletions, is handed to the caller; only then is the tail
 * kept aside and truncated. The files are mapped and their records read in place: the live set
 * is where they are, and a timer is decoded only when the caller takes it. Each record is
 * decoded once: at open only its outline is read (a journal's checksum too: the batches and the
 * tail depend on it), and its content is checked where it is taken or dropped (a snapshot's
 * checksum with it, so that its bytes are read once).
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "service/io/journal-internal.h"

/* A journal record, read in place: where its frame is and its key. 24 bytes, moved whole by the
 * sort (changes_sort()). */
struct change {
        const uint8_t *frame;
        /* The name's first 8 bytes, big-endian, zero-padded: most comparisons end here, without
         * reading the name from the file (a cache miss each). */
        uint64_t prefix;
        uint32_t owner;
        bool deleted;
};

struct changes {
        struct change *items;
        size_t n;
        size_t allocated;
};

/* The live set: the files stay mapped while its records are read. */
struct live {
        struct buffer snapshot;
        struct buffer journal;
        const uint8_t **frames; /* in (owner, name) order */
        size_t n;
        /* The snapshot's records were checked in full at open (a journal.next was to be settled
         * first): else their checksums are checked where they are taken or dropped. */
        bool snapshot_checked;
};

/* How far ahead live_take() fetches, and how much of a record (a typical one: a calendar's is
 * longer). */
#define LIVE_FETCH_AHEAD 4
#define LIVE_FETCH_BYTES 384

static void live_free(struct live *live)
{
        journal_file_unmap(&live->snapshot);
        journal_file_unmap(&live->journal);
        free(live->frames);
}

static bool in_snapshot(const struct live *live, const uint8_t *frame)
{
        return (uintptr_t)frame - (uintptr_t)live->snapshot.data < live->snapshot.size;
}

/* A frame whose checksum is still to be checked. */
static bool crc_unchecked(const struct live *live, const uint8_t *frame)
{
        return !live->snapshot_checked && in_snapshot(live, frame);
}

/* A frame dropped from the live set is checked all the same: a malformed record refuses the
 * files, live or not. */
static int check_dropped(const struct live *live, const uint8_t *frame,
                         struct journal_open_result *result)
{
        if (journal_frame_valid(frame, crc_unchecked(live, frame)))
                return 0;
        result->file = in_snapshot(live, frame) ? SNAPSHOT_FILE : JOURNAL_FILE;
        return -EBADMSG;
}

/* A frame's key as a change holds it. */
static struct change change_of(const uint8_t *frame, bool deleted)
{
        struct journal_key key = journal_frame_key(frame);
        struct change ch = {.frame = frame, .owner = key.owner, .deleted = deleted};

        for (size_t i = 0; i < sizeof(ch.prefix); i++)
                ch.prefix = ch.prefix << 8 | (i < key.name_len ? key.name[i] : 0);
        return ch;
}

static int changes_add(struct changes *c, const uint8_t *frame, const struct record *rec)
{
        if (c->n == c->allocated) {
                size_t allocated = c->allocated > 0 ? c->allocated * 2 : 64;
                struct change *items = reallocarray(c->items, allocated, sizeof(*items));

                if (!items)
                        return -ENOMEM;
                c->items = items;
                c->allocated = allocated;
        }
        c->items[c->n++] = change_of(frame, rec->type == RECORD_DELETE);
        return 0;
}

/* journal_frame_key_compare()'s order: a name holds no NUL, so the padding sorts a shorter name
 * first, as strcmp() does. */
static int change_key_compare(const struct change *x, const struct change *y)
{
        struct journal_key a, b;

        if (x->owner != y->owner)
                return x->owner < y->owner ? -1 : 1;
        if (x->prefix != y->prefix)
                return x->prefix < y->prefix ? -1 : 1;
        a = journal_frame_key(x->frame);
        b = journal_frame_key(y->frame);
        return journal_frame_key_compare(&a, &b);
}

/* By key, then in the journal's order (all frames are in one file). */
static int change_compare(const struct change *x, const struct change *y)
{
        int r = change_key_compare(x, y);

        if (r != 0)
                return r;
        return x->frame < y->frame ? -1 : x->frame > y->frame;
}

/* Runs this short are sorted by insertion before they are merged. */
#define SORT_RUN 16

/* change_compare()'s order, by a merge sort whose comparison is inlined: glibc's qsort() calls
 * the comparison through a pointer, and was 6 % of a start-up's instructions. */
static int changes_sort(struct changes *c)
{
        struct change *from = c->items, *to, *spare;

        for (size_t run = 0; run < c->n; run += SORT_RUN) {
                size_t end = run + SORT_RUN < c->n ? run + SORT_RUN : c->n;

                for (size_t i = run + 1; i < end; i++) {
                        struct change item = from[i];
                        size_t k = i;

                        for (; k > run && change_compare(&item, &from[k - 1]) < 0; k--)
                                from[k] = from[k - 1];
                        from[k] = item;
                }
        }
        if (c->n <= SORT_RUN)
                return 0;
        to = spare = reallocarray(NULL, c->n, sizeof(*spare));
        if (!spare)
                return -ENOMEM;
        for (size_t width = SORT_RUN; width < c->n; width *= 2) {
                for (size_t lo = 0; lo < c->n; lo += 2 * width) {
                        size_t mid = lo + width < c->n ? lo + width : c->n;
                        size_t hi = mid + width < c->n ? mid + width : c->n;
                        size_t a = lo, b = mid, k = lo;

                        /* Equal keys keep their order: the left run's first. */
                        while (a < mid && b < hi)
                                to[k++] =
                                    change_compare(&from[b], &from[a]) < 0 ? from[b++] : from[a++];
                        while (a < mid)
                                to[k++] = from[a++];
                        while (b < hi)
                                to[k++] = from[b++];
                }
                struct change *swap = from;

                from = to;
                to = swap;
        }
        if (from != c->items)
                memcpy(c->items, from, c->n * sizeof(*from));
        free(spare);
        return 0;
}

/*
 * The latest change of each timer, minus deletions, in (owner, name) order: the snapshot's records
 * are in that order already, so only the journal's changes are sorted, then the two are merged.
 */
static int live_merge(struct live *live, struct changes *c, struct journal_open_result *result)
{
        const uint8_t **frames;
        size_t s = 0, k = 0, n = 0;
        int r;

        if (c->n == 0)
                return 0;
        r = changes_sort(c);
        if (r < 0)
                return r;
        frames = reallocarray(NULL, live->n + c->n, sizeof(*frames));
        if (!frames)
                return -ENOMEM;
        while (s < live->n || k < c->n) {
                int order = k == c->n ? -1 : 1;

                if (s < live->n && k < c->n) {
                        struct change snapshot = change_of(live->frames[s], false);

                        order = change_key_compare(&snapshot, &c->items[k]);
                }
                if (order < 0) {
                        frames[n++] = live->frames[s++];
                        continue;
                }
                /* The journal's last change of the timer replaces the snapshot's record. */
                r = order == 0 ? check_dropped(live, live->frames[s++], result) : 0;
                for (; r >= 0 && k + 1 < c->n &&
                       change_key_compare(&c->items[k], &c->items[k + 1]) == 0;
                     k++)
                        r = check_dropped(live, c->items[k].frame, result);
                if (r >= 0 && c->items[k].deleted)
                        r = check_dropped(live, c->items[k].frame, result);
                else if (r >= 0)
                        frames[n++] = c->items[k].frame;
                if (r < 0) {
                        free(frames);
                        return r;
                }
                k++;
        }
        free(live->frames);
        live->frames = frames;
        live->n = n;
        return 0;
}

/* A snapshot's header: its epoch, and how many records it holds. */
static int snapshot_header(const struct buffer *file, uint64_t *ret_epoch, uint64_t *ret_n_records)
{
        uint32_t version;
        int r;

        r = journal_header_decode(file->data, file->size, SNAPSHOT_HEADER_SIZE, SNAPSHOT_MAGIC,
                                  SNAPSHOT_VERSION, &version, ret_epoch, ret_n_records);
        if (r < 0)
                return r;
        /* Room for them all at once; more than the file can hold is damage. */
        if (*ret_n_records > (file->size - SNAPSHOT_HEADER_SIZE) / (FRAME_SIZE + PAYLOAD_MIN))
                return -EBADMSG;
        return 0;
}

/* A snapshot's records: every one a PUT, unsequenced, in strictly ascending (owner, name) order.
 * They become the live set as they are. Checked in full with `check`; else only their outline,
 * each one's checksum with its content where it is taken (live_take()) or dropped
 * (live_merge()). */
static int snapshot_replay(const struct journal *j, const struct buffer *file, uint64_t n_records,
                           bool check, struct live *live)
{
        struct journal_key last = {};
        size_t offset = SNAPSHOT_HEADER_SIZE;

        live->frames = reallocarray(NULL, n_records > 0 ? n_records : 1, sizeof(*live->frames));
        if (!live->frames)
                return -ENOMEM;
        for (uint64_t i = 0; i < n_records; i++) {
                const uint8_t *frame = file->data + offset;
                struct journal_key key;
                struct record rec;
                size_t size;

                if (i % INTERRUPT_CHECK_EVERY == INTERRUPT_CHECK_EVERY - 1 &&
                    journal_interrupted(j))
                        return -EINTR;
                if (!(check ? journal_frame_check(file->data, file->size, offset, &rec, &size) ==
                                  FRAME_VALID
                            : journal_frame_outline(file->data, file->size, offset, &rec, &size)) ||
                    rec.type != RECORD_PUT || rec.seq != 0 || rec.ends_batch)
                        return -EBADMSG;
                key = journal_frame_key(frame);
                if (i > 0 && journal_frame_key_compare(&last, &key) >= 0)
                        return -EBADMSG;
                last = key;
                live->frames[live->n++] = frame;
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
                check = journal_frame_sealed(file->data, file->size, offset, &rec, &size);
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
                r = changes_add(c, file->data + offset, &rec);
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
        /* The records of the incomplete last batch are dropped, not taken: checked now. */
        for (size_t at = ret->valid_size, size; at < offset; at += size) {
                struct record rec;

                if (journal_frame_check(file->data, file->size, at, &rec, &size) != FRAME_VALID)
                        return -EBADMSG;
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
static int snapshot_load(struct journal *j, struct live *live, struct journal_open_result *result,
                         bool *ret_has_snapshot)
{
        enum next_step step;
        uint64_t n_records = 0;
        int r;

        result->file = SNAPSHOT_FILE;
        r = journal_file_map(j, SNAPSHOT_FILE, NULL, &live->snapshot);
        if (r < 0 && r != -ENOENT)
                return r;
        *ret_has_snapshot = r >= 0;
        if (*ret_has_snapshot) {
                j->snapshot_size = live->snapshot.size;
                r = snapshot_header(&live->snapshot, &j->epoch, &n_records);
                if (r < 0)
                        return r;
        }
        result->file = JOURNAL_NEXT;
        r = journal_next_step(j, j->epoch, &step);
        if (r < 0)
                return r;
        /* Settling it changes the files: the snapshot is checked in full before. */
        live->snapshot_checked = step != NEXT_NONE;
        if (*ret_has_snapshot) {
                result->file = SNAPSHOT_FILE;
                r = snapshot_replay(j, &live->snapshot, n_records, live->snapshot_checked, live);
                if (r < 0)
                        return r;
        }
        result->n_replayed = live->n;
        result->file = JOURNAL_NEXT;
        return journal_next_settle(j, step);
}

/* What the open does to the journal once the live set is taken. */
struct settle {
        bool fresh; /* start a fresh journal: there was none, or the snapshot holds all of it */
        struct journal_replay replay;
        struct proof proof;
};

/* The files read, nothing changed on them (but a journal.next settled). */
static int load_files(struct journal *j, struct live *live, struct changes *c,
                      struct settle *settle, struct journal_open_result *result)
{
        const struct buffer *file = &live->journal;
        struct journal_replay *replay = &settle->replay;
        uint64_t epoch;
        bool has_snapshot;
        int r;

        r = snapshot_load(j, live, result, &has_snapshot);
        if (r < 0)
                return r;

        result->file = JOURNAL_FILE;
        r = journal_file_map(j, JOURNAL_FILE, &j->fd, &live->journal);
        if (r == -ENOENT && !has_snapshot)
                result->created = true;
        if (r == -ENOENT) {
                settle->fresh = true;
                return has_snapshot ? -EBADMSG : 0;
        }
        if (r < 0)
                return r;
        r = journal_header_decode(file->data, file->size, JOURNAL_HEADER_SIZE, JOURNAL_MAGIC,
                                  JOURNAL_VERSION, &j->version, &epoch, NULL);
        if (r >= 0 && epoch > j->epoch)
                r = -EBADMSG;
        if (r >= 0 && epoch < j->epoch) {
                /* Left by a crash during compaction: the snapshot holds all of it. */
                journal_file_unmap(&live->journal);
                result->stale_journal = true;
                settle->fresh = true;
                return 0;
        }
        j->records_start = j->version == JOURNAL_VERSION ? JOURNAL_RECORDS_V3 : JOURNAL_HEADER_SIZE;
        if (r >= 0 && j->version == JOURNAL_VERSION)
                r = journal_proof_read(file, &settle->proof, &j->proof_slot);
        if (r >= 0)
                r = journal_replay(j, file, j->records_start, &settle->proof, c, replay);
        if (r < 0)
                return r;

        j->committed_size = replay->valid_size;
        j->committed_records = replay->n_replayed;
        j->next_seq = replay->next_seq;
        result->proven_batch = settle->proof.seq;
        result->n_replayed += replay->n_replayed;
        result->n_dropped = replay->n_dropped;
        result->bytes_truncated = file->size - replay->valid_size;
        result->tail = replay->tail;
        result->tail_batch = replay->next_seq;
        result->tail_readable = replay->tail_readable;
        result->lost_batches = replay->lost_batches;
        result->lost_records = replay->lost_records;
        result->lost_bytes = replay->lost_bytes;
        return 0;
}

/* Each live timer decoded, checked, and handed to `take` in order. */
static int live_take(const struct journal *j, const struct live *live,
                     const struct journal_take *take, struct journal_open_result *result)
{
        struct journal_timer timer;
        int r;

        if (take && take->reserve) {
                r = take->reserve(take->userdata, live->n);
                if (r < 0) {
                        result->file = NULL;
                        return r;
                }
        }
        for (size_t i = 0; i < live->n; i++) {
                const uint8_t *frame = live->frames[i];
                bool crc = crc_unchecked(live, frame);

                if (i % INTERRUPT_CHECK_EVERY == INTERRUPT_CHECK_EVERY - 1 &&
                    journal_interrupted(j))
                        return -EINTR;
                /* Taken in order, and the files outgrow the caches: a later record is fetched
                 * meanwhile. */
                if (i + LIVE_FETCH_AHEAD < live->n)
                        for (size_t b = 0; b < LIVE_FETCH_BYTES; b += 64)
                                __builtin_prefetch(live->frames[i + LIVE_FETCH_AHEAD] + b);
                if (!take ? !journal_frame_valid(frame, crc)
                          : !journal_frame_decode(frame, crc, &timer)) {
                        result->file = in_snapshot(live, frame) ? SNAPSHOT_FILE : JOURNAL_FILE;
                        return -EBADMSG;
                }
                if (!take)
                        continue;
                r = take->timer(take->userdata, &timer);
                if (r < 0) {
                        result->file = NULL;
                        return r;
                }
        }
        return 0;
}

/* The journal made what the replay found: a fresh one, or the damaged tail kept aside and cut
 * off, or what was read made durable. */
static int journal_settle(struct journal *j, const struct live *live, const struct settle *settle,
                          struct journal_open_result *result)
{
        int r;

        result->file = JOURNAL_FILE;
        if (settle->fresh)
                return journal_start_fresh(j);
        if (settle->replay.valid_size < live->journal.size) {
                r = journal_damaged_keep(j, &live->journal, settle->replay.valid_size, result);
                if (r < 0)
                        return r;
                j->needs_truncate = true;
                r = journal_repair(j);
        } else {
                /* What was read may have been in the page cache only (a crash before its
                 * fdatasync): durable before a commit proves it. */
                r = journal_sync_fd(j, j->fd);
        }
        if (r >= 0 && settle->replay.tail == JOURNAL_TAIL_LOST)
                r = journal_proof_lower(j);
        return r;
}

int journal_load(struct journal *j, const struct journal_take *take,
                 struct journal_open_result *result)
{
        struct live live = {};
        struct settle settle = {};
        struct changes c = {};
        int r;

        r = load_files(j, &live, &c, &settle, result);
        if (r >= 0)
                r = live_merge(&live, &c, result);
        free(c.items);
        if (r >= 0)
                r = live_take(j, &live, take, result);
        if (r >= 0)
                r = journal_settle(j, &live, &settle, result);
        live_free(&live);
        if (r < 0)
                return r;
        result->file = NULL;
        result->format_version = j->version;
        result->n_timers = live.n;
        return 0;
}
