/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * Replay of damaged files: a torn or corrupt tail is truncated and counted, anything that proves a
 * synced record was lost is a store fault that changes nothing, and the files of an interrupted
 * compaction combine correctly.
 */

#include <dirent.h>
#include <errno.h>
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
#include "service/io/crc32c.h"

#define HEADER_SIZE          24
#define SNAPSHOT_HEADER_SIZE 32
/* Format 3: the proof slots at 512 and 1024, the records from 1536. */
#define SLOT_OFFSET   512
#define SLOT_SIZE     28
#define RECORDS_START 1536

static int setup(void **state)
{
        struct jt_dir *d = calloc(1, sizeof(*d));

        assert_non_null(d);
        jt_dir_make(d);
        jt_faults_reset();
        *state = d;
        return 0;
}

static uint32_t load_u32(const uint8_t *p)
{
        return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void store_u32(uint8_t *p, uint32_t v)
{
        for (unsigned i = 0; i < 4; i++)
                p[i] = (uint8_t)(v >> (8 * i));
}

/* A frame's payload byte set, the frame sealed again with a right checksum. */
static void reseal(uint8_t *frame, size_t payload_offset, uint8_t value)
{
        frame[8 + payload_offset] = value;
        store_u32(frame + 4, crc32c(0, frame + 8, load_u32(frame)));
}

/* Commit each group of timers as one batch; ret_ends[i] is the journal size after batch i. */
static void write_batches(const struct jt_dir *d, const struct journal_timer *timers,
                          const size_t *batch_sizes, size_t n_batches, size_t *ret_ends)
{
        struct journal *j = jt_open_expect(d, NULL, 0, NULL);
        size_t k = 0;

        for (size_t b = 0; b < n_batches; b++) {
                for (size_t i = 0; i < batch_sizes[b]; i++)
                        assert_int_equal(journal_put(j, &timers[k++]), 0);
                assert_int_equal(journal_commit(j), 0);
                ret_ends[b] = jt_size(d, "journal");
        }
        journal_close(j);
}

static void assert_open_fails(const struct jt_dir *d, int error)
{
        struct journal_open_result result;
        struct journal *j = NULL;

        assert_int_equal(journal_open(d->state, &jt_ops, NULL, &result, &j), error);
        assert_null(j);
}

/* The open refuses, and leaves the journal exactly as it was. */
static void assert_store_fault(const struct jt_dir *d, const char *file, const uint8_t *data,
                               size_t size, int error)
{
        uint8_t *after;
        size_t after_size;

        jt_write(d, file, data, size);
        assert_open_fails(d, error);
        after = jt_read(d, file, &after_size);
        assert_int_equal(after_size, size);
        assert_memory_equal(after, data, size);
        free(after);
}

static void test_fresh_state_dir(void **state)
{
        struct jt_dir *d = *state;
        struct journal_open_result result;
        struct journal *j;
        char *missing;

        j = jt_open_expect(d, NULL, 0, &result);
        assert_int_equal(result.n_replayed, 0);
        assert_true(result.created);
        assert_int_equal(result.format_version, 3);
        assert_int_equal(jt_size(d, "journal"), RECORDS_START);
        assert_false(jt_exists(d, "snapshot"));

        /* One journal per directory. */
        assert_open_fails(d, -EBUSY);
        journal_close(j);

        /* Leftovers of an interrupted compaction are ignored and removed. */
        jt_write(d, "snapshot.tmp", "garbage", 7);
        jt_write(d, "journal.tmp", "TIMERDJ1", 8);
        j = jt_open_expect(d, NULL, 0, &result);
        assert_false(result.created);
        assert_false(jt_exists(d, "snapshot.tmp"));
        assert_false(jt_exists(d, "journal.tmp"));
        journal_close(j);

        assert_true(asprintf(&missing, "%s/no/such/dir", d->root) > 0);
        assert_int_equal(journal_open(missing, NULL, NULL, &result, &j), -ENOENT);
        free(missing);
        assert_int_equal(journal_open(NULL, NULL, NULL, &result, &j), -EINVAL);
}

/* Every prefix of the last batch: it is dropped and counted, the rest is kept and appendable. */
static void test_torn_tail_every_offset(void **state)
{
        struct jt_dir *d = *state;
        struct journal_timer t[5] = {jt_timer(1, "a", 1), jt_timer(1, "b", 2), jt_timer(1, "c", 3),
                                     jt_timer(1, "d", 4), jt_timer(1, "e", 5)};
        size_t batches[2] = {1, 3}, ends[2], starts[4], n_starts = 0, size;
        uint8_t *data;

        write_batches(d, t, batches, 2, ends);
        data = jt_read(d, "journal", &size);
        assert_int_equal(size, ends[1]);
        for (size_t o = ends[0]; o < ends[1]; o += 8 + load_u32(data + o))
                starts[n_starts++] = o;
        assert_int_equal(n_starts, 3);

        for (size_t cut = ends[0]; cut < ends[1]; cut++) {
                struct journal_timer kept[2] = {t[0], jt_timer(2, "after", cut)};
                struct journal_open_result result;
                struct journal *j;
                uint64_t dropped = 0;

                for (size_t i = 0; i < n_starts; i++)
                        dropped += starts[i] < cut;
                jt_write(d, "journal", data, cut);
                j = jt_open_expect(d, kept, 1, &result);
                assert_int_equal(result.n_replayed, 1);
                assert_int_equal(result.n_dropped, dropped);
                assert_int_equal(result.bytes_truncated, cut - ends[0]);
                assert_int_equal(jt_size(d, "journal"), ends[0]);

                assert_int_equal(journal_put(j, &kept[1]), 0);
                assert_int_equal(journal_commit(j), 0);
                journal_close(j);
                j = jt_open_expect(d, kept, 2, &result);
                assert_int_equal(result.n_dropped, 0);
                assert_int_equal(result.bytes_truncated, 0);
                journal_close(j);
        }
        free(data);
}

static void flip(uint8_t *data, size_t i)
{
        data[i] ^= 0x5a;
}

static void test_corrupt_tail(void **state)
{
        struct jt_dir *d = *state;
        struct journal_timer t[3] = {jt_timer(1, "a", 1), jt_timer(1, "b", 2), jt_timer(1, "c", 3)};
        size_t batches[2] = {1, 1}, ends[2], size;
        uint8_t *data;

        write_batches(d, t, batches, 2, ends);
        data = jt_read(d, "journal", &size);
        for (size_t i = ends[0]; i < ends[1]; i++) {
                struct journal_open_result result;
                struct journal *j;

                flip(data, i);
                jt_write(d, "journal", data, size);
                flip(data, i);
                j = jt_open_expect(d, t, 1, &result);
                assert_int_equal(result.n_dropped, 1);
                assert_int_equal(result.bytes_truncated, ends[1] - ends[0]);
                journal_close(j);
        }
        free(data);

        /* The first record of a two-record last batch: its pages may have reached the disk in any
         * order before the fdatasync, so a valid record of the same batch after it is tail too. */
        batches[1] = 2;
        jt_dir_remove(d);
        jt_dir_make(d);
        write_batches(d, t, batches, 2, ends);
        data = jt_read(d, "journal", &size);
        for (size_t i = ends[0] + 8; i < ends[0] + 8 + load_u32(data + ends[0]); i++) {
                struct journal_open_result result;
                struct journal *j;

                flip(data, i);
                jt_write(d, "journal", data, size);
                flip(data, i);
                j = jt_open_expect(d, t, 1, &result);
                assert_int_equal(result.n_dropped, 2);
                assert_int_equal(result.bytes_truncated, ends[1] - ends[0]);
                journal_close(j);
        }
        free(data);
}

/* A damaged record followed by a later batch had been synced: refuse, whatever the byte. */
static void test_corrupt_middle(void **state)
{
        struct jt_dir *d = *state;
        struct journal_timer t[3] = {jt_timer(1, "a", 1), jt_timer(1, "b", 2), jt_timer(1, "c", 3)};
        size_t batches[3] = {1, 1, 1}, ends[3], size;
        uint8_t *data;

        write_batches(d, t, batches, 3, ends);
        data = jt_read(d, "journal", &size);
        for (size_t i = RECORDS_START; i < ends[1]; i++) {
                flip(data, i);
                assert_store_fault(d, "journal", data, size, -EBADMSG);
                flip(data, i);
        }
        free(data);

        /* Bytes that are no record between two batches. */
        data = jt_read(d, "journal", &size);
        data = realloc(data, size + 3);
        assert_non_null(data);
        memmove(data + ends[0] + 3, data + ends[0], size - ends[0]);
        assert_store_fault(d, "journal", data, size + 3, -EBADMSG);
        free(data);
}

/* A record whose checksum matches but whose content is not ours is never a torn write. */
static void test_malformed_record(void **state)
{
        struct jt_dir *d = *state;
        struct journal_timer t[2] = {jt_timer(1, "a", 1), jt_timer(1, "b", 2)};
        size_t batches[2] = {1, 1}, ends[2], size;
        /* Payload offsets: type, flags, sequence, owner, name length, name "b", policy. */
        const struct {
                size_t offset;
                uint8_t value;
        } edits[] = {
            {0, 3},    /* unknown type */
            {1, 0x03}, /* unknown flag */
            {2, 7},    /* batch 7 where 2 is due */
            {14, 0},   /* empty name */
            {15, 0},   /* NUL in the name */
            {16, 99},  /* policy out of range */
        };
        uint8_t *data;

        write_batches(d, t, batches, 2, ends);
        data = jt_read(d, "journal", &size);
        for (size_t i = 0; i < sizeof(edits) / sizeof(edits[0]); i++) {
                uint8_t *frame = data + ends[0], *payload = frame + 8, saved;

                saved = payload[edits[i].offset];
                payload[edits[i].offset] = edits[i].value;
                store_u32(frame + 4, crc32c(0, payload, load_u32(frame)));
                assert_store_fault(d, "journal", data, size, -EBADMSG);
                payload[edits[i].offset] = saved;
        }
        free(data);
}

/* Records that are read but not taken are checked all the same, resealed malformed (a policy out of
 * range, a NUL in the name): one the next change of its timer replaces, a deletion, one of the
 * incomplete last batch (its end cut off by a crash). */
static void test_malformed_dropped_record(void **state)
{
        struct jt_dir *d = *state;
        struct journal_timer t[3] = {jt_timer(1, "a", 1), jt_timer(1, "a", 2), jt_timer(1, "b", 3)};
        size_t batches[2] = {1, 2}, ends[2], size;
        struct journal *j;
        uint8_t *data, *frame;

        /* "a" put twice: the first is replaced. */
        write_batches(d, t, batches, 2, ends);
        data = jt_read(d, "journal", &size);
        frame = data + RECORDS_START;
        reseal(frame, 16, 99);
        assert_store_fault(d, "journal", data, size, -EBADMSG);
        free(data);

        /* "a" deleted: the deletion is dropped from the live set. */
        jt_dir_remove(d);
        jt_dir_make(d);
        j = jt_open_expect(d, NULL, 0, NULL);
        jt_put_commit(j, &t[0]);
        assert_int_equal(journal_delete(j, 1, "a"), 0);
        assert_int_equal(journal_commit(j), 0);
        journal_close(j);
        data = jt_read(d, "journal", &size);
        frame = data + RECORDS_START;
        frame += 8 + load_u32(frame);
        reseal(frame, 15, 0);
        assert_store_fault(d, "journal", data, size, -EBADMSG);
        free(data);

        /* Batch 2 cut after its first record, which is dropped: it replays as a torn tail, and
         * refuses the journal when malformed. */
        jt_dir_remove(d);
        jt_dir_make(d);
        write_batches(d, t, batches, 2, ends);
        data = jt_read(d, "journal", &size);
        frame = data + ends[0];
        size = ends[0] + 8 + load_u32(frame);
        jt_write(d, "journal", data, size);
        j = jt_open_expect(d, t, 1, NULL);
        journal_close(j);
        reseal(frame, 16, 99);
        assert_store_fault(d, "journal", data, size, -EBADMSG);
        free(data);
}

static void test_headers(void **state)
{
        struct jt_dir *d = *state;
        struct journal_timer t = jt_timer(1, "a", 1);
        struct journal *j;
        uint8_t *journal, *snapshot;
        size_t journal_size, snapshot_size;

        j = jt_open_expect(d, NULL, 0, NULL);
        assert_int_equal(journal_compact(j, &t, 1), 0);
        journal_close(j);
        journal = jt_read(d, "journal", &journal_size);
        snapshot = jt_read(d, "snapshot", &snapshot_size);
        assert_memory_equal(snapshot, "TIMERDS1", 8);

        for (int file = 0; file < 2; file++) {
                const char *name = file == 0 ? "journal" : "snapshot";
                uint8_t *data = file == 0 ? journal : snapshot;
                size_t size = file == 0 ? journal_size : snapshot_size;

                uint8_t version = data[8];

                /* The journal is format 3, the snapshot format 2. */
                assert_int_equal(version, file == 0 ? 3 : 2);
                data[7] = '2';
                assert_store_fault(d, name, data, size, -EPROTONOSUPPORT);
                data[7] = '1';
                /* The first format, and one from the future. */
                data[8] = 1;
                assert_store_fault(d, name, data, size, -EPROTONOSUPPORT);
                data[8] = (uint8_t)(version + 1);
                assert_store_fault(d, name, data, size, -EPROTONOSUPPORT);
                data[8] = version;
                assert_store_fault(d, name, data, 11, -EBADMSG);
                assert_store_fault(d, name, data, HEADER_SIZE - 1, -EBADMSG);
                data[12] ^= 1; /* the epoch */
                assert_store_fault(d, name, data, size, -EBADMSG);
                data[12] ^= 1;
                jt_write(d, name, data, size);
        }
        j = jt_open_expect(d, &t, 1, NULL);
        journal_close(j);
        free(journal);
        free(snapshot);
}

static void test_snapshot_damage(void **state)
{
        struct jt_dir *d = *state;
        struct journal_timer t[3] = {jt_timer(1, "a", 1), jt_timer(1, "b", 2), jt_timer(2, "a", 3)};
        size_t size, first;
        struct journal *j;
        uint8_t *data, *swapped;

        j = jt_open_expect(d, NULL, 0, NULL);
        assert_int_equal(journal_compact(j, t, 3), 0);
        journal_close(j);
        data = jt_read(d, "snapshot", &size);

        /* It was written whole and synced before it was renamed: no damage is a torn tail. The
         * header's epoch and count are checksummed too. */
        for (size_t i = 12; i < size; i++) {
                flip(data, i);
                assert_store_fault(d, "snapshot", data, size, -EBADMSG);
                flip(data, i);
        }
        assert_store_fault(d, "snapshot", data, size - 1, -EBADMSG);
        first = SNAPSHOT_HEADER_SIZE + 8 + load_u32(data + SNAPSHOT_HEADER_SIZE);
        assert_store_fault(d, "snapshot", data, first, -EBADMSG);

        /* Valid records out of order. */
        swapped = malloc(size);
        assert_non_null(swapped);
        memcpy(swapped, data, SNAPSHOT_HEADER_SIZE);
        memcpy(swapped + SNAPSHOT_HEADER_SIZE, data + first, size - first);
        memcpy(swapped + SNAPSHOT_HEADER_SIZE + size - first, data + SNAPSHOT_HEADER_SIZE,
               first - SNAPSHOT_HEADER_SIZE);
        assert_store_fault(d, "snapshot", swapped, size, -EBADMSG);
        free(swapped);

        /* A count beyond what the file can hold, checksummed: refused before room is made. */
        swapped = malloc(size);
        assert_non_null(swapped);
        memcpy(swapped, data, size);
        memset(swapped + SNAPSHOT_HEADER_SIZE - 12, 0xff, 8);
        store_u32(swapped + SNAPSHOT_HEADER_SIZE - 4, crc32c(0, swapped, SNAPSHOT_HEADER_SIZE - 4));
        assert_store_fault(d, "snapshot", swapped, size, -EBADMSG);
        free(swapped);

        jt_write(d, "snapshot", data, size);
        j = jt_open_expect(d, t, 3, NULL);
        journal_close(j);
        free(data);
}

/* Every file of the state directory as it is now, to compare with later. */
struct files_copy {
        uint8_t *data[3];
        size_t size[3];
};

static const char *const copied_files[3] = {"snapshot", "journal", "journal.next"};

static void files_copy(const struct jt_dir *d, struct files_copy *ret)
{
        for (size_t i = 0; i < 3; i++)
                ret->data[i] = jt_exists(d, copied_files[i])
                                   ? jt_read(d, copied_files[i], &ret->size[i])
                                   : NULL;
}

/* The files are exactly the copy, and nothing else was written (no journal.damaged-*). */
static void assert_files_are(const struct jt_dir *d, struct files_copy *copy)
{
        size_t n = 0;
        DIR *dir = opendir(d->state);

        for (size_t i = 0; i < 3; i++) {
                uint8_t *now;
                size_t size;

                assert_int_equal(jt_exists(d, copied_files[i]), copy->data[i] != NULL);
                if (!copy->data[i])
                        continue;
                n++;
                now = jt_read(d, copied_files[i], &size);
                assert_int_equal(size, copy->size[i]);
                assert_memory_equal(now, copy->data[i], size);
                free(now);
                free(copy->data[i]);
        }
        assert_non_null(dir);
        for (struct dirent *e; (e = readdir(dir));)
                n -= e->d_name[0] != '.';
        closedir(dir);
        assert_int_equal(n, 0);
}

/* A snapshot's record is checked where it is taken, after the timers before it were handed over:
 * the open fails as a whole, as a refusal before any take did, and changes no file (the journal's
 * torn tail is not cut, a journal.next is not installed). Its checksum, or its content resealed.
 * A record the journal replaces is checked too, before anything is taken. */
static void test_snapshot_refused_after_takes(void **state)
{
        struct jt_dir *d = *state;
        struct journal_timer t[3] = {jt_timer(1, "a", 1), jt_timer(1, "b", 2), jt_timer(1, "c", 3)};
        struct journal_timer b2 = jt_timer(1, "b", 20), d4 = jt_timer(1, "d", 4);
        struct journal_open_result result;
        struct files_copy copy;
        uint8_t *snapshot, *journal, *frame[3];
        size_t size, journal_size;
        struct journal *j;

        j = jt_open_expect(d, NULL, 0, NULL);
        assert_int_equal(journal_compact(j, t, 3), 0);
        jt_put_commit(j, &d4);
        journal_close(j);
        snapshot = jt_read(d, "snapshot", &size);
        frame[0] = snapshot + SNAPSHOT_HEADER_SIZE;
        for (size_t i = 1; i < 3; i++)
                frame[i] = frame[i - 1] + 8 + load_u32(frame[i - 1]);
        /* A torn tail: a crash during the next append. */
        journal = jt_read(d, "journal", &journal_size);
        journal = realloc(journal, journal_size + 3);
        assert_non_null(journal);
        memset(journal + journal_size, 0x55, 3);
        jt_write(d, "journal", journal, journal_size + 3);

        for (unsigned variant = 0; variant < 3; variant++) {
                struct jt_taken taken;
                struct journal_take take = jt_take(&taken);
                /* The last record: a policy out of range, resealed; its checksum; and the same
                 * content error with a journal.next that continues the snapshot. */
                uint8_t saved = frame[2][8 + 16];

                if (variant == 1)
                        frame[2][8 + 16] = 99;
                else
                        reseal(frame[2], 16, 99);
                jt_write(d, "snapshot", snapshot, size);
                if (variant == 2)
                        jt_write(d, "journal.next", journal, journal_size);
                files_copy(d, &copy);
                assert_int_equal(journal_open(d->state, &jt_ops, &take, &result, &j), -EBADMSG);
                assert_string_equal(result.file, "snapshot");
                /* The journal.next is read first: the snapshot is checked in full before it. */
                assert_int_equal(taken.n, variant == 2 ? 0 : 2);
                assert_files_are(d, &copy);
                if (variant == 2) {
                        char *next = jt_path(d, "journal.next");

                        assert_int_equal(unlink(next), 0);
                        free(next);
                }
                free(taken.timers);
                reseal(frame[2], 16, saved);
        }

        /* "b" replaced by the journal, malformed in the snapshot: refused before any take. */
        jt_write(d, "snapshot", snapshot, size);
        jt_write(d, "journal", journal, journal_size);
        j = jt_open_expect(d, (struct journal_timer[]){t[0], t[1], t[2], d4}, 4, NULL);
        jt_put_commit(j, &b2);
        journal_close(j);
        reseal(frame[1], 16, 99);
        jt_write(d, "snapshot", snapshot, size);
        files_copy(d, &copy);
        {
                struct jt_taken taken;
                struct journal_take take = jt_take(&taken);

                assert_int_equal(journal_open(d->state, &jt_ops, &take, &result, &j), -EBADMSG);
                assert_string_equal(result.file, "snapshot");
                assert_int_equal(taken.n, 0);
                free(taken.timers);
        }
        assert_files_are(d, &copy);
        free(journal);
        free(snapshot);
}

static void test_snapshot_plus_journal(void **state)
{
        struct jt_dir *d = *state;
        struct journal_timer t[3] = {jt_timer(1, "a", 1), jt_timer(1, "b", 2), jt_timer(1, "c", 3)};
        struct journal_timer expected[3] = {jt_timer(1, "a", 10), t[2], jt_timer(1, "d", 4)};
        struct journal_open_result result;
        struct journal *j;

        j = jt_open_expect(d, NULL, 0, NULL);
        assert_int_equal(journal_compact(j, t, 3), 0);
        assert_int_equal(journal_delete(j, 1, "b"), 0);
        assert_int_equal(journal_put(j, &expected[0]), 0);
        assert_int_equal(journal_commit(j), 0);
        assert_int_equal(journal_put(j, &expected[2]), 0);
        assert_int_equal(journal_commit(j), 0);
        journal_close(j);

        j = jt_open_expect(d, expected, 3, &result);
        assert_int_equal(result.n_replayed, 3 + 3);
        journal_close(j);
}

/* The journal's changes merged into the snapshot's order: new timers before, between and after
 * its records, names that share their first 8 bytes or end early, the last change of a timer
 * winning, deletions. */
static void test_snapshot_plus_journal_order(void **state)
{
        struct jt_dir *d = *state;
        struct journal_timer snap[4] = {jt_timer(1, "abcdefgh", 1), jt_timer(1, "abcdefgh1", 2),
                                        jt_timer(1, "b", 3), jt_timer(2, "a", 4)};
        struct journal_timer puts[9] = {
            jt_timer(3, "a", 10),          jt_timer(1, "c", 11),
            jt_timer(1, "abcdefgh12", 12), jt_timer(1, "abcdefgh0", 13),
            jt_timer(1, "abcdefg", 14),    jt_timer(1, "a", 15),
            jt_timer(0, "z", 16),          jt_timer(1, "abcdefgh0", 17),
            jt_timer(2, "a", 18),
        };
        struct journal_timer expected[10] = {puts[6], puts[5], puts[4], snap[0], puts[7],
                                             snap[1], puts[2], puts[1], puts[8], puts[0]};
        struct journal *j;

        j = jt_open_expect(d, NULL, 0, NULL);
        assert_int_equal(journal_compact(j, snap, 4), 0);
        for (size_t i = 0; i < 9; i++) {
                assert_int_equal(journal_put(j, &puts[i]), 0);
                if (i == 4) {
                        assert_int_equal(journal_delete(j, 2, "a"), 0);
                        assert_int_equal(journal_delete(j, 1, "b"), 0);
                }
                assert_int_equal(journal_commit(j), 0);
        }
        journal_close(j);
        j = jt_open_expect(d, expected, 10, NULL);
        journal_close(j);
}

#define MANY_KEYS 300

static void many_key(size_t k, uint32_t *ret_owner, char *name, size_t size)
{
        *ret_owner = (uint32_t)(k % 3);
        /* All share their first 8 bytes with many others: the sort reads past its prefix. */
        snprintf(name, size, "name-%05zu", k * 37 % 1000);
}

static int timer_order(const void *a, const void *b)
{
        const struct journal_timer *x = a, *y = b;

        if (x->owner != y->owner)
                return x->owner < y->owner ? -1 : 1;
        return strcmp(x->name, y->name);
}

/* Many more changes than the sort puts in one run, every timer changed several times in a
 * scrambled order over many batches, some deleted and some of those put again: the live set is
 * the last change of each in (owner, name) order. */
static void test_many_changes_order(void **state)
{
        struct jt_dir *d = *state;
        struct journal_timer expected[MANY_KEYS], t;
        size_t n_expected = 0, n_ops = 0;
        struct journal *j;
        char name[32];
        uint32_t owner;

        j = jt_open_expect(d, NULL, 0, NULL);
        for (size_t round = 0; round < 4; round++)
                for (size_t i = 0; i < MANY_KEYS; i++) {
                        size_t k = (i * 7 + round * 13) % MANY_KEYS;

                        many_key(k, &owner, name, sizeof(name));
                        t = jt_timer(owner, name, round * 1000 + k);
                        assert_int_equal(journal_put(j, &t), 0);
                        if (++n_ops % 50 == 0)
                                assert_int_equal(journal_commit(j), 0);
                }
        for (size_t k = 0; k < MANY_KEYS; k += 10) {
                many_key(k, &owner, name, sizeof(name));
                assert_int_equal(journal_delete(j, owner, name), 0);
        }
        assert_int_equal(journal_commit(j), 0);
        for (size_t k = 0; k < MANY_KEYS; k += 20) {
                many_key(k, &owner, name, sizeof(name));
                t = jt_timer(owner, name, 9000 + k);
                assert_int_equal(journal_put(j, &t), 0);
        }
        assert_int_equal(journal_commit(j), 0);
        journal_close(j);

        for (size_t k = 0; k < MANY_KEYS; k++) {
                if (k % 10 == 0 && k % 20 != 0)
                        continue;
                many_key(k, &owner, name, sizeof(name));
                expected[n_expected++] = jt_timer(owner, name, k % 20 == 0 ? 9000 + k : 3000 + k);
        }
        qsort(expected, n_expected, sizeof(expected[0]), timer_order);
        j = jt_open_expect(d, expected, n_expected, NULL);
        journal_close(j);
}

/* A crash after the new snapshot was renamed but before the fresh journal was: the old journal is
 * covered by the snapshot, and replaying it again would undo newer state. */
static void test_stale_journal(void **state)
{
        struct jt_dir *d = *state;
        struct journal_timer old = jt_timer(1, "a", 1), newer = jt_timer(1, "a", 2);
        struct journal_timer after = jt_timer(1, "b", 3), both[2] = {newer, after};
        struct journal_open_result result;
        struct journal *j;
        uint8_t *stale;
        size_t size;

        j = jt_open_expect(d, NULL, 0, NULL);
        assert_int_equal(journal_put(j, &old), 0);
        assert_int_equal(journal_commit(j), 0);
        stale = jt_read(d, "journal", &size);
        assert_int_equal(journal_compact(j, &newer, 1), 0);
        journal_close(j);

        jt_write(d, "journal", stale, size);
        free(stale);
        j = jt_open_expect(d, &newer, 1, &result);
        assert_true(result.stale_journal);
        assert_int_equal(result.n_replayed, 1);
        assert_int_equal(jt_size(d, "journal"), RECORDS_START);
        assert_int_equal(journal_put(j, &after), 0);
        assert_int_equal(journal_commit(j), 0);
        journal_close(j);

        j = jt_open_expect(d, both, 2, &result);
        assert_false(result.stale_journal);
        journal_close(j);
}

/* Files that cannot both be ours: a journal continuing a missing snapshot, or the reverse. */
static void test_inconsistent_files(void **state)
{
        struct jt_dir *d = *state;
        struct journal_timer t = jt_timer(1, "a", 1);
        uint8_t *snapshot;
        struct journal *j;
        char *path;
        size_t size;

        j = jt_open_expect(d, NULL, 0, NULL);
        assert_int_equal(journal_compact(j, &t, 1), 0);
        journal_close(j);
        snapshot = jt_read(d, "snapshot", &size);

        path = jt_path(d, "snapshot");
        assert_int_equal(unlink(path), 0);
        free(path);
        assert_open_fails(d, -EBADMSG);

        jt_write(d, "snapshot", snapshot, size);
        path = jt_path(d, "journal");
        assert_int_equal(unlink(path), 0);
        free(path);
        assert_open_fails(d, -EBADMSG);
        assert_false(jt_exists(d, "journal"));
        free(snapshot);
}

/* Something else where the store's files belong: an error, and nothing is removed. */
static void test_not_files(void **state)
{
        struct jt_dir *d = *state;
        const char *const files[] = {"snapshot", "journal", "journal.tmp"};
        struct journal_open_result result;
        struct journal *j;
        char *path, *inner;

        assert_int_equal(mkdir(d->state, 0700), 0);
        for (size_t i = 0; i < 3; i++) {
                path = jt_path(d, files[i]);
                assert_true(asprintf(&inner, "%s/inner", path) > 0);
                assert_int_equal(mkdir(path, 0700), 0);
                assert_int_equal(mkdir(inner, 0700), 0);
                assert_open_fails(d, -EISDIR);
                assert_int_equal(rmdir(inner), 0);
                assert_int_equal(rmdir(path), 0);
                free(inner);
                free(path);
        }
        j = jt_open_expect(d, NULL, 0, NULL);
        journal_close(j);

        /* The state directory is a file. */
        jt_dir_remove(d);
        jt_dir_make(d);
        fclose(fopen(d->state, "we"));
        assert_int_equal(access(d->state, F_OK), 0);
        assert_int_equal(journal_open(d->state, NULL, NULL, &result, &j), -ENOTDIR);
        assert_int_equal(journal_open(d->state, NULL, NULL, NULL, &j), -EINVAL);
        assert_int_equal(journal_open(d->state, NULL, NULL, &result, NULL), -EINVAL);
}

/* The names of the journal.damaged-* files in the state directory. */
static unsigned count_damaged(const struct jt_dir *d)
{
        unsigned n = 0;
        struct dirent *e;
        DIR *dir = opendir(d->state);

        assert_non_null(dir);
        while ((e = readdir(dir)))
                n += strncmp(e->d_name, "journal.damaged-", 16) == 0;
        closedir(dir);
        return n;
}

/* Open on `data`; the tail from `valid` on is dropped as `tail`, kept byte for byte. */
static void assert_tail_kept(const struct jt_dir *d, const uint8_t *data, size_t size, size_t valid,
                             enum journal_tail tail, uint64_t readable,
                             const struct journal_timer *expected, size_t n_expected)
{
        struct journal_open_result result;
        struct journal *j;
        uint8_t *kept;
        size_t kept_size;

        jt_write(d, "journal", data, size);
        j = jt_open_expect(d, expected, n_expected, &result);
        assert_int_equal(result.tail, tail);
        assert_int_equal(result.tail_readable, readable);
        assert_int_equal(result.bytes_truncated, size - valid);
        assert_int_equal(jt_size(d, "journal"), valid);
        journal_close(j);
        /* The open also returned it: the same file name. */
        kept = jt_read(d, result.tail_file, &kept_size);
        assert_int_equal(kept_size, size - valid);
        assert_memory_equal(kept, data + valid, size - valid);
        free(kept);
}

/* A torn last batch, a record damaged after it was written whole, a zeroed block among
 * committed batches: each told apart, the dropped bytes kept aside. */
static void test_dropped_tail_kept(void **state)
{
        struct jt_dir *d = *state;
        struct journal_timer t[4] = {jt_timer(1, "a", 1), jt_timer(1, "b", 2), jt_timer(1, "c", 3),
                                     jt_timer(1, "d", 4)};
        size_t batches[2] = {1, 3}, ends[2], size, second;
        uint8_t *data;

        write_batches(d, t, batches, 2, ends);
        data = jt_read(d, "journal", &size);
        second = ends[0] + 8 + load_u32(data + ends[0]);

        /* Cut inside the last batch's second record: its first is readable. */
        assert_tail_kept(d, data, second + 20, ends[0], JOURNAL_TAIL_TORN, 1, t, 1);
        /* The part of the second record in a sector that never reached the disk: zeros. */
        {
                size_t second_end = second + 8 + load_u32(data + second);
                size_t sector = (second + 8) / 512 * 512;
                size_t from = sector > second ? sector : second;
                size_t to = sector + 512 < second_end ? sector + 512 : second_end;

                memset(data + from, 0, to - from);
        }
        /* The first and the third record of the batch are readable. */
        assert_tail_kept(d, data, size, ends[0], JOURNAL_TAIL_TORN, 2, t, 1);
        free(data);

        assert_int_equal(count_damaged(d), 2);

        /* One byte changed in a record present in full: not a torn write. */
        jt_dir_remove(d);
        jt_dir_make(d);
        write_batches(d, t, batches, 2, ends);
        data = jt_read(d, "journal", &size);
        flip(data, size - 10);
        assert_tail_kept(d, data, size, ends[0], JOURNAL_TAIL_DAMAGED, 2, t, 1);
        free(data);
        assert_int_equal(count_damaged(d), 1);
}

/* A zeroed 4 KiB block among committed batches, a later batch after it: refused, nothing
 * truncated, nothing kept aside. */
static void test_zeroed_block_before_commits(void **state)
{
        struct jt_dir *d = *state;
        struct journal_timer t[80];
        size_t batches[80], ends[80], size;
        uint8_t *data;

        for (size_t i = 0; i < 80; i++) {
                char name[8];

                snprintf(name, sizeof(name), "t%02zu", i);
                t[i] = jt_timer(1, name, i + 1);
                batches[i] = 1;
        }
        write_batches(d, t, batches, 80, ends);
        data = jt_read(d, "journal", &size);
        assert_true(size > 3 * 4096);
        memset(data + 4096, 0, 4096);
        assert_store_fault(d, "journal", data, size, -EBADMSG);
        assert_int_equal(count_damaged(d), 0);
        free(data);
}

/* `n` batches of one timer each, named t00.. with seeds from 1; ret_ends[i]: the end of batch
 * i + 1. */
static void write_one_per_batch(const struct jt_dir *d, struct journal_timer *t, size_t n,
                                size_t *ret_ends)
{
        size_t batches[64];

        assert_true(n <= 64);
        for (size_t i = 0; i < n; i++) {
                char name[8];

                snprintf(name, sizeof(name), "t%02zu", i);
                t[i] = jt_timer(1, name, i + 1);
                batches[i] = 1;
        }
        write_batches(d, t, batches, n, ret_ends);
}

/* The example: a zeroed 4 KiB block at the end of the journal hides several batches the
 * proof names as acknowledged. Told as such, counted exactly, kept aside; the proof is lowered, so
 * the next start finds nothing wrong, and the journal goes on from what is left. */
static void test_zeroed_end_loses_proven_batches(void **state)
{
        struct jt_dir *d = *state;
        struct journal_timer t[40], later = jt_timer(2, "later", 99);
        size_t ends[40], size, first_damaged = 0;
        struct journal_open_result result;
        struct journal *j;
        uint8_t *data;

        write_one_per_batch(d, t, 40, ends);
        data = jt_read(d, "journal", &size);
        memset(data + size - 4096, 0, 4096);
        while (ends[first_damaged] <= size - 4096)
                first_damaged++;
        /* Batches first_damaged + 1 .. 40 are hit: 39 of them proven (by batch 40's commit). */
        assert_true(40 - first_damaged >= 8);
        assert_tail_kept(d, data, size, ends[first_damaged - 1], JOURNAL_TAIL_LOST, 0, t,
                         first_damaged);

        jt_write(d, "journal", data, size);
        j = jt_open_expect(d, t, first_damaged, &result);
        assert_int_equal(result.format_version, 3);
        assert_int_equal(result.proven_batch, 39);
        assert_int_equal(result.tail, JOURNAL_TAIL_LOST);
        assert_int_equal(result.tail_batch, first_damaged + 1);
        assert_int_equal(result.lost_batches, 39 - first_damaged);
        assert_int_equal(result.lost_records, 39 - first_damaged);
        assert_int_equal(result.lost_bytes, ends[38] - ends[first_damaged - 1]);
        assert_int_equal(result.bytes_truncated, size - ends[first_damaged - 1]);
        /* The last batch is one of the records dropped: 40 - first_damaged in all. */
        assert_int_equal(result.n_dropped, 1);
        journal_close(j);
        free(data);

        /* Lowered to what is left: nothing is reported twice, and appends are proven again. */
        j = jt_open_expect(d, t, first_damaged, &result);
        assert_int_equal(result.tail, JOURNAL_TAIL_NONE);
        assert_int_equal(result.proven_batch, first_damaged);
        assert_int_equal(journal_put(j, &later), 0);
        assert_int_equal(journal_commit(j), 0);
        assert_int_equal(journal_put(j, &later), 0);
        assert_int_equal(journal_commit(j), 0);
        journal_close(j);
        t[first_damaged] = later;
        j = jt_open_expect(d, t, first_damaged + 1, &result);
        assert_int_equal(result.tail, JOURNAL_TAIL_NONE);
        assert_int_equal(result.proven_batch, first_damaged + 1);
        journal_close(j);
}

/* Only the last batch is after the proof: cut or zeroed, it is a torn write, never acknowledged;
 * one byte changed in it is damage. A cut inside a proven batch is a loss, even one that looks
 * like a torn write. */
static void test_tail_against_the_proof(void **state)
{
        struct jt_dir *d = *state;
        struct journal_timer t[4];
        struct journal_open_result result;
        size_t ends[4], size;
        struct journal *j;
        uint8_t *data;

        write_one_per_batch(d, t, 4, ends);
        data = jt_read(d, "journal", &size);

        for (size_t cut = ends[2] + 1; cut < size; cut += 37) {
                assert_tail_kept(d, data, cut, ends[2], JOURNAL_TAIL_TORN, 0, t, 3);
                jt_write(d, "journal", data, cut);
                j = jt_open_expect(d, t, 3, &result);
                assert_int_equal(result.proven_batch, 3);
                assert_int_equal(result.lost_batches, 0);
                journal_close(j);
        }
        flip(data, size - 10);
        assert_tail_kept(d, data, size, ends[2], JOURNAL_TAIL_DAMAGED, 0, t, 3);
        flip(data, size - 10);

        /* Cut inside batch 3, proven by batch 4's commit. */
        assert_tail_kept(d, data, ends[1] + 100, ends[1], JOURNAL_TAIL_LOST, 0, t, 2);
        jt_write(d, "journal", data, ends[1] + 100);
        j = jt_open_expect(d, t, 2, &result);
        assert_int_equal(result.lost_batches, 1);
        assert_int_equal(result.lost_records, 1);
        assert_int_equal(result.lost_bytes, ends[2] - ends[1]);
        journal_close(j);

        /* The file ends exactly after batch 1: nothing is left to keep, the loss is still told. */
        jt_write(d, "journal", data, ends[0]);
        j = jt_open_expect(d, t, 1, &result);
        assert_int_equal(result.tail, JOURNAL_TAIL_LOST);
        assert_int_equal(result.bytes_truncated, 0);
        assert_string_equal(result.tail_file, "");
        assert_int_equal(result.lost_batches, 2);
        assert_int_equal(result.lost_records, 2);
        assert_int_equal(result.lost_bytes, ends[2] - ends[0]);
        journal_close(j);
        j = jt_open_expect(d, t, 1, &result);
        assert_int_equal(result.tail, JOURNAL_TAIL_NONE);
        assert_int_equal(result.proven_batch, 1);
        journal_close(j);
        free(data);
}

/* A torn write of a proof slot (any byte of it): the other slot's proof is used, nothing is lost.
 * Both slots damaged, or a proof the records contradict: a store fault that changes nothing. */
static void test_proof_slots(void **state)
{
        struct jt_dir *d = *state;
        struct journal_timer t[3];
        struct journal_open_result result;
        size_t ends[3], size;
        struct journal *j;
        uint8_t *data;
        /* Batch 3's commit wrote "through 2" into slot 1, batch 2's "through 1" into slot 0. */
        const size_t best = 2 * SLOT_OFFSET, other = SLOT_OFFSET;

        write_one_per_batch(d, t, 3, ends);
        data = jt_read(d, "journal", &size);
        assert_int_equal(data[best], 2);
        assert_int_equal(data[other], 1);
        for (size_t i = 0; i < SLOT_SIZE; i++) {
                flip(data, best + i);
                jt_write(d, "journal", data, size);
                j = jt_open_expect(d, t, 3, &result);
                assert_int_equal(result.proven_batch, 1);
                assert_int_equal(result.tail, JOURNAL_TAIL_NONE);
                journal_close(j);
                flip(data, best + i);
        }
        /* Zeroed, as a sector that never reached the disk. */
        memset(data + best, 0, SLOT_SIZE);
        jt_write(d, "journal", data, size);
        j = jt_open_expect(d, t, 3, &result);
        assert_int_equal(result.proven_batch, 1);
        journal_close(j);
        memset(data + other, 0, SLOT_SIZE);
        assert_store_fault(d, "journal", data, size, -EBADMSG);
        free(data);

        /* A valid slot that names batch 2 with another end or record count. */
        jt_dir_remove(d);
        jt_dir_make(d);
        write_one_per_batch(d, t, 3, ends);
        data = jt_read(d, "journal", &size);
        for (size_t field = 8; field <= 16; field += 8) {
                data[best + field]++;
                store_u32(data + best + 24, crc32c(0, data + best, 24));
                assert_store_fault(d, "journal", data, size, -EBADMSG);
                data[best + field]--;
        }
        /* Naming batch 3 (and 3 records) where batch 2 ends: batch 3 ends elsewhere. */
        data[best]++;
        data[best + 16]++;
        store_u32(data + best + 24, crc32c(0, data + best, 24));
        assert_store_fault(d, "journal", data, size, -EBADMSG);
        assert_int_equal(count_damaged(d), 0);
        free(data);
}

/* At most JOURNAL_DAMAGED_KEEP files: the oldest go. */
static void test_damaged_files_bounded(void **state)
{
        struct jt_dir *d = *state;
        struct journal_timer t[2] = {jt_timer(1, "a", 1), jt_timer(1, "b", 2)};
        size_t batches[2] = {1, 1}, ends[2], size;
        unsigned removed = 0;
        uint8_t *data;

        write_batches(d, t, batches, 2, ends);
        data = jt_read(d, "journal", &size);
        for (size_t i = 0; i < JOURNAL_DAMAGED_KEEP + 3; i++) {
                struct journal_open_result result;
                struct journal *j;

                jt_write(d, "journal", data, size - 1 - i);
                j = jt_open_expect(d, t, 1, &result);
                removed += result.n_damaged_removed;
                journal_close(j);
                assert_true(count_damaged(d) <= JOURNAL_DAMAGED_KEEP);
        }
        assert_int_equal(count_damaged(d), JOURNAL_DAMAGED_KEEP);
        assert_int_equal(removed, 3);
        free(data);
}

/* When the bytes cannot be kept aside, nothing is truncated. */
static void test_no_truncation_without_copy(void **state)
{
        struct jt_dir *d = *state;
        struct journal_timer t[2] = {jt_timer(1, "a", 1), jt_timer(1, "b", 2)};
        size_t batches[2] = {1, 1}, ends[2], size;
        uint8_t *data;

        write_batches(d, t, batches, 2, ends);
        data = jt_read(d, "journal", &size);
        jt_faults_arm(1u << JT_PWRITE, 1, 1, ENOSPC);
        assert_store_fault(d, "journal", data, size - 1, -ENOSPC);
        jt_faults_reset();
        assert_int_equal(count_damaged(d), 0);
        free(data);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_fresh_state_dir, setup, jt_teardown),
            cmocka_unit_test_setup_teardown(test_torn_tail_every_offset, setup, jt_teardown),
            cmocka_unit_test_setup_teardown(test_corrupt_tail, setup, jt_teardown),
            cmocka_unit_test_setup_teardown(test_corrupt_middle, setup, jt_teardown),
            cmocka_unit_test_setup_teardown(test_malformed_record, setup, jt_teardown),
            cmocka_unit_test_setup_teardown(test_malformed_dropped_record, setup, jt_teardown),
            cmocka_unit_test_setup_teardown(test_snapshot_refused_after_takes, setup, jt_teardown),
            cmocka_unit_test_setup_teardown(test_headers, setup, jt_teardown),
            cmocka_unit_test_setup_teardown(test_snapshot_damage, setup, jt_teardown),
            cmocka_unit_test_setup_teardown(test_snapshot_plus_journal, setup, jt_teardown),
            cmocka_unit_test_setup_teardown(test_snapshot_plus_journal_order, setup, jt_teardown),
            cmocka_unit_test_setup_teardown(test_many_changes_order, setup, jt_teardown),
            cmocka_unit_test_setup_teardown(test_stale_journal, setup, jt_teardown),
            cmocka_unit_test_setup_teardown(test_inconsistent_files, setup, jt_teardown),
            cmocka_unit_test_setup_teardown(test_not_files, setup, jt_teardown),
            cmocka_unit_test_setup_teardown(test_dropped_tail_kept, setup, jt_teardown),
            cmocka_unit_test_setup_teardown(test_zeroed_block_before_commits, setup, jt_teardown),
            cmocka_unit_test_setup_teardown(test_zeroed_end_loses_proven_batches, setup,
                                            jt_teardown),
            cmocka_unit_test_setup_teardown(test_tail_against_the_proof, setup, jt_teardown),
            cmocka_unit_test_setup_teardown(test_proof_slots, setup, jt_teardown),
            cmocka_unit_test_setup_teardown(test_damaged_files_bounded, setup, jt_teardown),
            cmocka_unit_test_setup_teardown(test_no_truncation_without_copy, setup, jt_teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
