/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The record format: every field survives a commit and a compaction, the bytes on disk are the
 * documented little-endian layout, and invalid input is refused before anything is written. */

#include <assert.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "journal-test.h"
#include "service/io/crc32c.h"

/* Format 3: the proof slots at 512 and 1024, the records from 1536. */
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

static void name_of_length(char *buf, size_t n, char fill)
{
        memset(buf, fill, n);
        buf[n] = 0;
}

/* The extremes of every field, and every value of every enum, in (owner, name) order. */
static size_t boundary_timers(struct journal_timer *t)
{
        char name[TIMERD_NAME_MAX + 1];
        size_t n = 0;

        t[n] = (struct journal_timer){.name = "a"};
        n++;

        for (uint64_t seed = 1; seed <= 60; seed++) {
                char short_name[16];

                snprintf(short_name, sizeof(short_name), "seed-%02u", (unsigned)seed);
                t[n++] = jt_timer(7, short_name, seed);
        }

        name_of_length(name, TIMERD_NAME_MAX, 'z');
        t[n] = jt_timer(UINT32_MAX, name, 3);
        t[n].policy = TIMERD_POLICY_MAX - 1;
        t[n].clock = TIMERD_CLOCK_MAX - 1;
        t[n].lifetime = TIMERD_LIFETIME_MAX - 1;
        t[n].delivery = TIMERD_DELIVERY_MAX - 1;
        t[n].state = TIMERD_STATE_MAX - 1;
        t[n].failure = TIMERD_FAILURE_MAX - 1;
        t[n].last_outcome = TIMERD_OUTCOME_MAX - 1;
        t[n].catch_up = t[n].has_deadline = t[n].pending = true;
        t[n].run_active = t[n].run_cancelled = true;
        t[n].signo = UINT8_MAX;
        t[n].run_deadline_usec = UINT64_MAX;
        t[n].has_last_start = t[n].has_last_finish = true;
        t[n].cadence_usec = t[n].accuracy_usec = t[n].randomized_delay_usec = UINT64_MAX;
        t[n].handover_usec = UINT64_MAX;
        t[n].generation = t[n].deadline_usec = t[n].run = t[n].runs = UINT64_MAX;
        t[n].consecutive_expected_failures = t[n].overruns = UINT64_MAX;
        t[n].last_start_usec = t[n].last_finish_usec = UINT64_MAX;
        t[n].last_duration_usec = t[n].total_duration_usec = UINT64_MAX;
        t[n].written_realtime_usec = t[n].written_clock_usec = UINT64_MAX;
        name_of_length(t[n].boot_id, JOURNAL_BOOT_ID_MAX, 'f');
        /* The largest record: a calendar timer with the longest schedule and zone name. */
        name_of_length(t[n].calendar, TD_CALENDAR_SOURCE_MAX, 'c');
        name_of_length(t[n].timezone, CALENDAR_ZONE_MAX - 1, 'Z');
        t[n].fixed_random_delay = true;
        n++;
        return n;
}

static void test_round_trip(void **state)
{
        struct jt_dir *d = *state;
        struct journal_timer timers[64];
        struct journal_open_result result;
        struct journal *j;
        size_t n = boundary_timers(timers);

        j = jt_open_expect(d, NULL, 0, NULL);
        /* In reverse, so that the order of the live set is the journal's doing. */
        for (size_t i = n; i > 0; i--)
                assert_int_equal(journal_put(j, &timers[i - 1]), 0);
        assert_int_equal(journal_commit(j), 0);
        journal_close(j);

        j = jt_open_expect(d, timers, n, &result);
        assert_int_equal(result.n_replayed, n);
        assert_int_equal(result.n_dropped, 0);
        assert_int_equal(result.bytes_truncated, 0);
        assert_false(result.stale_journal);

        /* The same through the snapshot. */
        assert_int_equal(journal_compact(j, timers, n), 0);
        journal_close(j);
        assert_int_equal(jt_size(d, "journal"), RECORDS_START);
        j = jt_open_expect(d, timers, n, &result);
        assert_int_equal(result.n_replayed, n);
        journal_close(j);
}

static void store_u32(uint8_t *p, uint32_t v)
{
        for (unsigned i = 0; i < 4; i++)
                p[i] = (uint8_t)(v >> (8 * i));
}

/* The format is portable: these exact bytes, whatever the host. */
static void test_layout(void **state)
{
        struct jt_dir *d = *state;
        uint8_t header[24] = {
            'T', 'I', 'M', 'E', 'R', 'D', 'J', '1', /* magic */
            3,   0,   0,   0,                       /* format version */
            0,   0,   0,   0,   0,   0,   0,   0,   /* epoch */
            0,   0,   0,   0,                       /* header checksum */
        };
        /* Written with batch 2: batch 1, synced, ends at 1561 with 1 record. */
        uint8_t slot0[28] = {
            1,    0, 0, 0, 0, 0, 0, 0, /* batch 1 */
            0x19, 6, 0, 0, 0, 0, 0, 0, /* ends at 1561 */
            1,    0, 0, 0, 0, 0, 0, 0, /* 1 record */
            0,    0, 0, 0,             /* slot checksum */
        };
        /* Written with batch 1: nothing synced yet, as when the journal was started. */
        uint8_t slot1[28] = {
            0, 0, 0, 0, 0, 0, 0, 0, /* batch 0 */
            0, 6, 0, 0, 0, 0, 0, 0, /* ends at 1536 */
            0, 0, 0, 0, 0, 0, 0, 0, /* no record */
            0, 0, 0, 0,             /* slot checksum */
        };
        uint8_t record[8 + 17] = {
            17, 0,   0,   0,             /* payload length */
            0,  0,   0,   0,             /* payload checksum */
            2,                           /* DELETE */
            1,                           /* ends its batch */
            1,  0,   0,   0, 0, 0, 0, 0, /* batch 1 */
            4,  3,   2,   1,             /* owner 0x01020304 */
            2,  'a', 'b',
        };
        uint8_t expected[RECORDS_START + 2 * sizeof(record)] = {0};
        struct journal *j;
        uint8_t *data;
        size_t size;

        store_u32(header + 20, crc32c(0, header, 20));
        store_u32(slot0 + 24, crc32c(0, slot0, 24));
        store_u32(slot1 + 24, crc32c(0, slot1, 24));
        memcpy(expected, header, sizeof(header));
        memcpy(expected + 512, slot0, sizeof(slot0));
        memcpy(expected + 1024, slot1, sizeof(slot1));
        store_u32(record + 4, crc32c(0, record + 8, 17));
        memcpy(expected + RECORDS_START, record, sizeof(record));
        /* Batch 2: "cd" */
        record[10] = 2;
        record[23] = 'c';
        record[24] = 'd';
        store_u32(record + 4, crc32c(0, record + 8, 17));
        memcpy(expected + RECORDS_START + sizeof(record), record, sizeof(record));

        j = jt_open_expect(d, NULL, 0, NULL);
        assert_int_equal(journal_delete(j, 0x01020304, "ab"), 0);
        assert_int_equal(journal_commit(j), 0);
        assert_int_equal(journal_delete(j, 0x01020304, "cd"), 0);
        assert_int_equal(journal_commit(j), 0);
        journal_close(j);

        data = jt_read(d, "journal", &size);
        assert_int_equal(size, sizeof(expected));
        assert_memory_equal(data, expected, sizeof(expected));
        free(data);
}

/* The journal's one record, changed in place, sealed again with a right checksum: refused as
 * malformed. Takes data. */
static void assert_resealed_malformed(struct jt_dir *d, uint8_t *data, size_t size)
{
        struct journal *j;

        store_u32(data + RECORDS_START + 4,
                  crc32c(0, data + RECORDS_START + 8, size - RECORDS_START - 8));
        jt_write(d, "journal", data, size);
        free(data);
        assert_int_equal(journal_open(d->state, NULL, NULL, &(struct journal_open_result){}, &j),
                         -EBADMSG);
}

/* A journal as timerd wrote it before handovers: one PUT of jt_timer(1000, "old-format", 5). */
static const uint8_t format2_journal[] = {
    0x54, 0x49, 0x4d, 0x45, 0x52, 0x44, 0x4a, 0x31, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x20, 0xd6, 0x37, 0xe8, 0xcd, 0x00, 0x00, 0x00, 0x54, 0xe1, 0x0f, 0x0c,
    0x01, 0x01, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xe8, 0x03, 0x00, 0x00, 0x0a, 0x6f,
    0x6c, 0x64, 0x2d, 0x66, 0x6f, 0x72, 0x6d, 0x61, 0x74, 0x01, 0x4f, 0x4b, 0x4c, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x01, 0x02, 0x05, 0x23, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x37,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x06, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
    0x05, 0x01, 0x41, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x55, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x01, 0x27, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x5f, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x73, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x91, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x9b, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0xb9,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0xcd, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0xd7, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xeb, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x09, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x24, 0x30, 0x30, 0x30, 0x30, 0x30, 0x30, 0x30,
    0x35, 0x2d, 0x30, 0x30, 0x30, 0x30, 0x2d, 0x34, 0x30, 0x30, 0x30, 0x2d, 0x38, 0x30, 0x30, 0x30,
    0x2d, 0x30, 0x30, 0x30, 0x30, 0x30, 0x30, 0x30, 0x30, 0x30, 0x30, 0x30, 0x35,
};

/* Stores written before the handover replay as they are, their timers without one. */
static void test_replays_records_without_handover(void **state)
{
        struct jt_dir *d = *state;
        struct journal_timer expected = jt_timer(1000, "old-format", 5);
        struct journal_open_result result;
        struct journal *j;
        uint8_t *data;
        size_t size;

        expected.handover_usec = 0;
        assert_true(mkdir(d->state, 0700) == 0);
        jt_write(d, "journal", format2_journal, sizeof(format2_journal));
        j = jt_open_expect(d, &expected, 1, &result);
        assert_int_equal(result.n_replayed, 1);
        assert_int_equal(result.n_dropped, 0);
        /* Written again (after the header of a new epoch), the record is the same bytes. */
        assert_int_equal(journal_compact(j, &expected, 1), 0);
        assert_int_equal(journal_put(j, &expected), 0);
        assert_int_equal(journal_commit(j), 0);
        journal_close(j);
        data = jt_read(d, "journal", &size);
        assert_int_equal(size, RECORDS_START + sizeof(format2_journal) - 24);
        assert_memory_equal(data + RECORDS_START, format2_journal + 24,
                            sizeof(format2_journal) - 24);
        free(data);
        j = jt_open_expect(d, &expected, 1, NULL);
        journal_close(j);
}

/*
 * A format 2 journal as timerd wrote it before the proof slots (main at a467309): batch 1 puts
 * v2-a and v2-c, batch 2 puts v2-b, batch 3 deletes v2-c (owners 1000, 1000, 1001).
 */
static const uint8_t format2_batches[] = {
    0x54, 0x49, 0x4d, 0x45, 0x52, 0x44, 0x4a, 0x31, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x20, 0xd6, 0x37, 0xe8, 0xa3, 0x00, 0x00, 0x00, 0x29, 0xa9, 0x28, 0xb1,
    0x01, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xe8, 0x03, 0x00, 0x00, 0x04, 0x76,
    0x32, 0x2d, 0x61, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x07, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0xa3, 0x00, 0x00, 0x00, 0x7e, 0x31, 0xcc, 0x40, 0x01, 0x01, 0x01, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0xe9, 0x03, 0x00, 0x00, 0x04, 0x76, 0x32, 0x2d, 0x63, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x09, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xa3, 0x00,
    0x00, 0x00, 0x12, 0x8e, 0x0e, 0x9a, 0x01, 0x01, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0xe8, 0x03, 0x00, 0x00, 0x04, 0x76, 0x32, 0x2d, 0x62, 0x03, 0x00, 0x87, 0x93, 0x03, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
    0x00, 0x01, 0x15, 0xcd, 0x5b, 0x07, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x13, 0x00, 0x00, 0x00, 0x41, 0x65, 0xb6,
    0x85, 0x02, 0x01, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xe9, 0x03, 0x00, 0x00, 0x04,
    0x76, 0x32, 0x2d, 0x63,
};

static struct journal_timer format2_timer(const char *name)
{
        struct journal_timer t = {
            .owner = 1000,
            .lifetime = TIMERD_LIFETIME_RETAINED,
            .generation = 7,
            .catch_up = true,
        };

        snprintf(t.name, sizeof(t.name), "%s", name);
        if (strcmp(name, "v2-c") == 0) {
                t.owner = 1001;
                t.generation = 9;
                t.catch_up = false;
        }
        if (strcmp(name, "v2-b") == 0)
                t = (struct journal_timer){
                    .owner = 1000,
                    .name = "v2-b",
                    .lifetime = TIMERD_LIFETIME_RETAINED,
                    .generation = 8,
                    .policy = TIMERD_POLICY_INTERVAL,
                    .cadence_usec = 60000000,
                    .state = TIMERD_STATE_SCHEDULED,
                    .has_deadline = true,
                    .deadline_usec = 123456789,
                };
        return t;
}

/* A format 2 journal loads as it is, proves nothing, takes appends in its own format, and the
 * compaction its first commit asks for starts a format 3 journal. */
static void test_format2_journal(void **state)
{
        struct jt_dir *d = *state;
        struct journal_timer live[2] = {format2_timer("v2-a"), format2_timer("v2-b")};
        struct journal_timer after[3] = {live[0], live[1], jt_timer(1000, "v3", 3)};
        struct journal_timer before_delete[3] = {live[0], live[1], format2_timer("v2-c")};
        struct journal_open_result result;
        struct journal *j;
        uint8_t *data;
        size_t size;

        assert_int_equal(mkdir(d->state, 0700), 0);
        jt_write(d, "journal", format2_batches, sizeof(format2_batches));
        j = jt_open_expect(d, live, 2, &result);
        assert_int_equal(result.format_version, 2);
        assert_int_equal(result.proven_batch, 0);
        assert_int_equal(result.n_replayed, 4);
        assert_int_equal(result.tail, JOURNAL_TAIL_NONE);
        assert_true(journal_should_compact(j));

        /* Appended as format 2: the old bytes untouched, batch 4 after them. */
        assert_int_equal(journal_put(j, &after[2]), 0);
        assert_int_equal(journal_commit(j), 0);
        journal_close(j);
        data = jt_read(d, "journal", &size);
        assert_true(size > sizeof(format2_batches));
        assert_memory_equal(data, format2_batches, sizeof(format2_batches));
        free(data);
        j = jt_open_expect(d, after, 3, &result);
        assert_int_equal(result.format_version, 2);
        assert_true(journal_should_compact(j));

        /* A torn tail of a format 2 journal (batch 3 cut): nothing proves what it hid. */
        journal_close(j);
        jt_write(d, "journal", format2_batches, sizeof(format2_batches) - 5);
        j = jt_open_expect(d, before_delete, 3, &result);
        assert_int_equal(result.format_version, 2);
        assert_int_equal(result.tail, JOURNAL_TAIL_TORN);
        assert_int_equal(result.proven_batch, 0);

        /* The compaction upgrades. */
        assert_int_equal(journal_compact(j, live, 2), 0);
        assert_false(journal_should_compact(j));
        assert_int_equal(journal_put(j, &after[2]), 0);
        assert_int_equal(journal_commit(j), 0);
        journal_close(j);
        data = jt_read(d, "journal", &size);
        assert_int_equal(data[8], 3);
        assert_true(size > RECORDS_START);
        free(data);
        j = jt_open_expect(d, after, 3, &result);
        assert_int_equal(result.format_version, 3);
        assert_false(journal_should_compact(j));
        journal_close(j);
}

/* A handover is the last 8 bytes of its record; a record that carries a zero one was never
 * written by timerd and is refused as malformed. */
static void test_handover_layout(void **state)
{
        struct jt_dir *d = *state;
        static const uint8_t handover_bytes[8] = {8, 7, 6, 5, 4, 3, 2, 1};
        struct journal_timer t = jt_timer(1000, "old-format", 5);
        uint8_t *data;
        size_t size;
        struct journal *j;

        t.handover_usec = 0x0102030405060708;
        j = jt_open_expect(d, NULL, 0, NULL);
        assert_int_equal(journal_put(j, &t), 0);
        assert_int_equal(journal_commit(j), 0);
        journal_close(j);
        data = jt_read(d, "journal", &size);
        assert_int_equal(size, RECORDS_START + sizeof(format2_journal) - 24 + 8);
        /* The payload checksum aside, the old record plus the handover. */
        assert_memory_equal(data + RECORDS_START + 8, format2_journal + 32,
                            sizeof(format2_journal) - 32);
        assert_memory_equal(data + size - 8, handover_bytes, 8);
        j = jt_open_expect(d, &t, 1, NULL);
        journal_close(j);

        /* The same record with a zero handover, sealed with a right checksum. */
        memset(data + size - 8, 0, 8);
        assert_resealed_malformed(d, data, size);
}

/* How the last run's program ended comes last, after the handover and the live cadence, which
 * are then written even when zero: a record that ends at the boot id still reads as before, and a
 * result of NONE is malformed. */
static void test_run_result_layout(void **state)
{
        struct jt_dir *d = *state;
        static const uint8_t tail[18] = {
            0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, TIMERD_EXIT_SIGNALED, 9};
        struct journal_timer t = jt_timer(1000, "old-format", 5);
        uint8_t *data;
        size_t size;
        struct journal *j;

        t.handover_usec = 0;
        t.last_exit = TIMERD_EXIT_SIGNALED;
        t.last_exit_code = 9;
        j = jt_open_expect(d, NULL, 0, NULL);
        assert_int_equal(journal_put(j, &t), 0);
        assert_int_equal(journal_commit(j), 0);
        journal_close(j);
        data = jt_read(d, "journal", &size);
        assert_int_equal(size, RECORDS_START + sizeof(format2_journal) - 24 + sizeof(tail));
        assert_memory_equal(data + size - sizeof(tail), tail, sizeof(tail));
        j = jt_open_expect(d, &t, 1, NULL);
        journal_close(j);

        /* A result of NONE is never written: refused as malformed. */
        data[size - 2] = TIMERD_EXIT_NONE;
        data[size - 1] = 0;
        assert_resealed_malformed(d, data, size);
}

/* A string's length byte beyond its field's room, in a record whose checksum is right and with
 * the bytes there, is refused as malformed before anything is copied: the boot id is the last
 * member of struct journal_timer, and 255 bytes copied there would run past it (ASan). */
static void test_string_longer_than_its_field(void **state)
{
        static const char boot_id[] = "0123456789abcdef0123456789abcdef0123";
        struct jt_dir *d = *state;
        struct journal_timer t = jt_timer(1000, "long-boot-id", 5);
        uint8_t *data, *found = NULL;
        size_t size;
        struct journal *j;

        static_assert(sizeof(boot_id) - 1 == JOURNAL_BOOT_ID_MAX, "a full boot id");
        t.policy = TIMERD_POLICY_CALENDAR;
        memset(t.calendar, 'x', TD_CALENDAR_SOURCE_MAX);
        t.calendar[TD_CALENDAR_SOURCE_MAX] = '\0';
        snprintf(t.boot_id, sizeof(t.boot_id), "%s", boot_id);
        j = jt_open_expect(d, NULL, 0, NULL);
        assert_int_equal(journal_put(j, &t), 0);
        assert_int_equal(journal_commit(j), 0);
        journal_close(j);
        data = jt_read(d, "journal", &size);
        for (size_t i = RECORDS_START + 1; i + sizeof(boot_id) - 1 <= size && !found; i++)
                if (memcmp(data + i, boot_id, sizeof(boot_id) - 1) == 0)
                        found = data + i - 1;
        assert_non_null(found);
        assert_int_equal(*found, JOURNAL_BOOT_ID_MAX);
        assert_true(data + size - found > UINT8_MAX);

        *found = UINT8_MAX;
        assert_resealed_malformed(d, data, size);
}

/* Where `text` is stored in the journal (its length byte first): a copy of the file, or NULL. */
static uint8_t *stored_string(struct jt_dir *d, const char *text, size_t *ret_size,
                              uint8_t **ret_at)
{
        size_t n = strlen(text), size;
        uint8_t *data = jt_read(d, "journal", &size);

        *ret_at = NULL;
        for (size_t i = RECORDS_START + 1; i + n <= size && !*ret_at; i++)
                if (data[i - 1] == n && memcmp(data + i, text, n) == 0)
                        *ret_at = data + i - 1;
        *ret_size = size;
        return data;
}

/* A NUL inside a stored string (a name, a boot id, a calendar, a zone), at its first, a middle
 * or its last byte, in a record whose checksum is right, is refused as malformed: it would cut
 * the string short where it is read back. */
static void test_string_with_nul(void **state)
{
        static const char boot_id[] = "0123456789abcdef0123456789abcdef0123";
        struct jt_dir *d = *state;
        struct journal_timer t = jt_timer(1000, "nul-inside-name", 5);
        const char *const strings[] = {t.name, boot_id, "*-*-* 04:00", "Europe/Berlin"};

        t.policy = TIMERD_POLICY_CALENDAR;
        snprintf(t.calendar, sizeof(t.calendar), "%s", strings[2]);
        snprintf(t.timezone, sizeof(t.timezone), "%s", strings[3]);
        snprintf(t.boot_id, sizeof(t.boot_id), "%s", boot_id);
        for (size_t s = 0; s < sizeof(strings) / sizeof(strings[0]); s++) {
                size_t n = strlen(strings[s]);

                for (size_t k = 0; k < 3; k++) {
                        size_t where = k == 0 ? 0 : k == 1 ? n / 2 : n - 1;
                        struct journal *j;
                        uint8_t *data, *found;
                        size_t size;

                        jt_dir_remove(d);
                        jt_dir_make(d);
                        j = jt_open_expect(d, NULL, 0, NULL);
                        assert_int_equal(journal_put(j, &t), 0);
                        assert_int_equal(journal_commit(j), 0);
                        journal_close(j);
                        data = stored_string(d, strings[s], &size, &found);
                        assert_non_null(found);
                        found[1 + where] = 0;
                        assert_resealed_malformed(d, data, size);
                }
        }
}

/* A live cadence (Reschedule's) follows the handover, written even when zero; with no result
 * after it, a zero one was never written by timerd and is refused as malformed. */
static void test_live_cadence_layout(void **state)
{
        struct jt_dir *d = *state;
        static const uint8_t cadence_bytes[8] = {0x11, 0x22, 0x33, 0, 0, 0, 0, 0};
        struct journal_timer t = jt_timer(1000, "old-format", 5);
        uint8_t *data;
        size_t size;
        struct journal *j;

        t.handover_usec = 0;
        t.live_cadence_usec = 0x332211;
        j = jt_open_expect(d, NULL, 0, NULL);
        assert_int_equal(journal_put(j, &t), 0);
        assert_int_equal(journal_commit(j), 0);
        journal_close(j);
        data = jt_read(d, "journal", &size);
        assert_int_equal(size, RECORDS_START + sizeof(format2_journal) - 24 + 16);
        assert_memory_equal(data + RECORDS_START + 8, format2_journal + 32,
                            sizeof(format2_journal) - 32);
        assert_memory_equal(data + size - 16, (const uint8_t[8]){0}, 8);
        assert_memory_equal(data + size - 8, cadence_bytes, 8);
        /* Read back as written: the restart keeps the live cadence. */
        j = jt_open_expect(d, &t, 1, NULL);
        journal_close(j);

        memset(data + size - 8, 0, 8);
        assert_resealed_malformed(d, data, size);
}

/* Whether the last run was a catch-up comes last, after the handover, the live cadence and a
 * result, which are then written even when zero or NONE: records without it read false, and a
 * mark of false (never written) is malformed. */
static void test_catch_up_layout(void **state)
{
        struct jt_dir *d = *state;
        static const uint8_t tail[19] = {
            0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, TIMERD_EXIT_NONE, 0, 1};
        struct journal_timer t = jt_timer(1000, "old-format", 5);
        uint8_t *data;
        size_t size;
        struct journal *j;

        t.handover_usec = 0;
        t.last_exit = TIMERD_EXIT_NONE;
        t.last_exit_code = 0;
        t.last_catch_up = true;
        j = jt_open_expect(d, NULL, 0, NULL);
        assert_int_equal(journal_put(j, &t), 0);
        assert_int_equal(journal_commit(j), 0);
        journal_close(j);
        data = jt_read(d, "journal", &size);
        assert_int_equal(size, RECORDS_START + sizeof(format2_journal) - 24 + sizeof(tail));
        assert_memory_equal(data + size - sizeof(tail), tail, sizeof(tail));
        j = jt_open_expect(d, &t, 1, NULL);
        journal_close(j);

        data[size - 1] = 0;
        assert_resealed_malformed(d, data, size);
}

static void test_invalid_input(void **state)
{
        struct jt_dir *d = *state;
        struct journal_timer good = jt_timer(1, "ok", 1), t;
        char long_name[TIMERD_NAME_MAX + 2];
        struct journal *j;

        j = jt_open_expect(d, NULL, 0, NULL);
        jt_faults_reset();

        t = good;
        t.name[0] = 0;
        assert_int_equal(journal_put(j, &t), -EINVAL);
        t = good;
        memset(t.name, 'x', sizeof(t.name)); /* no terminating NUL: 129 bytes */
        assert_int_equal(journal_put(j, &t), -EINVAL);
        t = good;
        memset(t.boot_id, 'x', sizeof(t.boot_id));
        assert_int_equal(journal_put(j, &t), -EINVAL);
        t = good;
        t.signo = -1;
        assert_int_equal(journal_put(j, &t), -EINVAL);
        t.signo = UINT8_MAX + 1;
        assert_int_equal(journal_put(j, &t), -EINVAL);

        for (int bad = -1; bad <= 0; bad++) {
                t = good;
                t.policy = bad < 0 ? TIMERD_POLICY_INVALID : TIMERD_POLICY_MAX;
                assert_int_equal(journal_put(j, &t), -EINVAL);
                t = good;
                t.clock = bad < 0 ? TIMERD_CLOCK_INVALID : TIMERD_CLOCK_MAX;
                assert_int_equal(journal_put(j, &t), -EINVAL);
                t = good;
                t.lifetime = bad < 0 ? TIMERD_LIFETIME_INVALID : TIMERD_LIFETIME_MAX;
                assert_int_equal(journal_put(j, &t), -EINVAL);
                t = good;
                t.delivery = bad < 0 ? TIMERD_DELIVERY_INVALID : TIMERD_DELIVERY_MAX;
                assert_int_equal(journal_put(j, &t), -EINVAL);
                t = good;
                t.state = bad < 0 ? TIMERD_STATE_INVALID : TIMERD_STATE_MAX;
                assert_int_equal(journal_put(j, &t), -EINVAL);
                t = good;
                t.failure = bad < 0 ? TIMERD_FAILURE_INVALID : TIMERD_FAILURE_MAX;
                assert_int_equal(journal_put(j, &t), -EINVAL);
                t = good;
                t.last_outcome = bad < 0 ? TIMERD_OUTCOME_INVALID : TIMERD_OUTCOME_MAX;
                assert_int_equal(journal_put(j, &t), -EINVAL);
        }
        assert_int_equal(journal_put(j, NULL), -EINVAL);
        assert_int_equal(journal_put(NULL, &good), -EINVAL);

        name_of_length(long_name, TIMERD_NAME_MAX + 1, 'y');
        assert_int_equal(journal_delete(j, 1, long_name), -EINVAL);
        assert_int_equal(journal_delete(j, 1, ""), -EINVAL);
        assert_int_equal(journal_delete(j, 1, NULL), -EINVAL);
        assert_int_equal(journal_delete(NULL, 1, "ok"), -EINVAL);
        assert_int_equal(journal_commit(NULL), -EINVAL);

        /* Nothing reached the batch: the commit writes nothing. */
        assert_int_equal(journal_commit(j), 0);
        assert_int_equal(jt_calls(), 0);
        assert_int_equal(jt_size(d, "journal"), RECORDS_START);
        journal_close(j);
}

static void test_compact_refuses(void **state)
{
        struct jt_dir *d = *state;
        struct journal_timer timers[2] = {jt_timer(1, "same", 1), jt_timer(1, "same", 2)};
        struct journal *j;

        j = jt_open_expect(d, NULL, 0, NULL);
        jt_faults_reset();
        assert_int_equal(journal_compact(j, timers, 2), -EINVAL);
        timers[1].name[0] = 0;
        assert_int_equal(journal_compact(j, timers, 2), -EINVAL);
        assert_int_equal(journal_compact(j, NULL, 1), -EINVAL);
        assert_int_equal(journal_compact(NULL, timers, 1), -EINVAL);

        assert_int_equal(journal_put(j, &timers[0]), 0);
        assert_int_equal(journal_compact(j, timers, 1), -EBUSY);
        assert_int_equal(jt_calls(), 0);
        assert_false(jt_exists(d, "snapshot"));
        assert_int_equal(journal_error(j), 0);

        /* The batch survived the refusal. */
        assert_int_equal(journal_commit(j), 0);
        journal_close(j);
        j = jt_open_expect(d, timers, 1, NULL);

        /* An empty store compacts to an empty snapshot. */
        assert_int_equal(journal_compact(j, NULL, 0), 0);
        journal_close(j);
        j = jt_open_expect(d, NULL, 0, NULL);
        journal_close(j);
}

/* An aborted batch is never written; the next one is written alone. */
static void test_abort(void **state)
{
        struct jt_dir *d = *state;
        struct journal_timer kept = jt_timer(1, "kept", 1), dropped = jt_timer(1, "dropped", 2);
        struct journal *j;

        j = jt_open_expect(d, NULL, 0, NULL);
        jt_faults_reset();
        assert_int_equal(journal_put(j, &dropped), 0);
        assert_int_equal(journal_delete(j, 1, "other"), 0);
        journal_abort(j);
        journal_abort(NULL);
        assert_int_equal(journal_commit(j), 0);
        assert_int_equal(jt_calls(), 0);
        assert_int_equal(jt_size(d, "journal"), RECORDS_START);

        assert_int_equal(journal_put(j, &dropped), 0);
        journal_abort(j);
        assert_int_equal(journal_put(j, &kept), 0);
        assert_int_equal(journal_commit(j), 0);
        journal_close(j);
        j = jt_open_expect(d, &kept, 1, NULL);
        journal_close(j);
}

static void test_should_compact(void **state)
{
        struct jt_dir *d = *state;
        struct journal_timer t = jt_timer(5, "churn", 5);
        struct journal *j;
        unsigned n = 0;

        j = jt_open_expect(d, NULL, 0, NULL);
        assert_false(journal_should_compact(j));
        while (!journal_should_compact(j)) {
                t.runs = n++;
                assert_int_equal(journal_put(j, &t), 0);
                if (n % 256 == 0)
                        assert_int_equal(journal_commit(j), 0);
                assert_true(n < 10000);
        }
        /* More than 1 MiB of records over an empty snapshot. */
        assert_true(jt_size(d, "journal") > (1u << 20));
        assert_true(n > (1u << 20) / 400);

        assert_int_equal(journal_compact(j, &t, 1), 0);
        assert_false(journal_should_compact(j));
        journal_close(j);
        j = jt_open_expect(d, &t, 1, NULL);
        assert_false(journal_should_compact(j));
        journal_close(j);
}

/* Owners compare as numbers, names as bytes; the last change of a timer wins, even in one batch. */
static void test_live_set(void **state)
{
        struct jt_dir *d = *state;
        struct journal_timer expected[4] = {
            jt_timer(9, "b", 100),
            jt_timer(10, "A", 101),
            jt_timer(10, "a", 102),
            jt_timer(10, "a.b", 103),
        };
        struct journal_timer stale = jt_timer(10, "a", 1);
        struct journal *j;

        j = jt_open_expect(d, NULL, 0, NULL);
        assert_int_equal(journal_put(j, &expected[3]), 0);
        assert_int_equal(journal_put(j, &stale), 0);
        assert_int_equal(journal_put(j, &expected[1]), 0);
        assert_int_equal(journal_commit(j), 0);

        assert_int_equal(journal_delete(j, 10, "a"), 0);
        assert_int_equal(journal_delete(j, 10, "never-existed"), 0);
        assert_int_equal(journal_put(j, &expected[0]), 0);
        assert_int_equal(journal_commit(j), 0);
        assert_int_equal(journal_put(j, &expected[2]), 0);
        assert_int_equal(journal_commit(j), 0);

        /* Deleted and put again in one batch, and a delete as the last word. */
        assert_int_equal(journal_put(j, &stale), 0);
        assert_int_equal(journal_delete(j, 9, "b"), 0);
        assert_int_equal(journal_put(j, &expected[0]), 0);
        assert_int_equal(journal_put(j, &stale), 0);
        assert_int_equal(journal_put(j, &expected[2]), 0);
        assert_int_equal(journal_commit(j), 0);
        journal_close(j);

        j = jt_open_expect(d, expected, 4, NULL);
        assert_int_equal(journal_delete(j, 10, "A"), 0);
        assert_int_equal(journal_commit(j), 0);
        journal_close(j);

        expected[1] = expected[2];
        expected[2] = expected[3];
        j = jt_open_expect(d, expected, 3, NULL);
        journal_close(j);
}

/* The real system calls, where the other tests count and inject through their own. */
static void test_system_calls(void **state)
{
        struct jt_dir *d = *state;
        struct journal_timer t[3] = {jt_timer(1, "a", 1), jt_timer(1, "b", 2), jt_timer(1, "c", 3)};
        struct journal *j;

        j = jt_open_expect_ops(d, NULL, NULL, 0, NULL);
        assert_int_equal(journal_put(j, &t[0]), 0);
        assert_int_equal(journal_put(j, &t[1]), 0);
        assert_int_equal(journal_commit(j), 0);
        assert_int_equal(journal_compact(j, t, 2), 0);
        assert_int_equal(journal_put(j, &t[2]), 0);
        assert_int_equal(journal_commit(j), 0);
        journal_close(j);
        j = jt_open_expect_ops(d, NULL, t, 3, NULL);
        journal_close(j);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_system_calls, setup, jt_teardown),
            cmocka_unit_test_setup_teardown(test_round_trip, setup, jt_teardown),
            cmocka_unit_test_setup_teardown(test_layout, setup, jt_teardown),
            cmocka_unit_test_setup_teardown(test_replays_records_without_handover, setup,
                                            jt_teardown),
            cmocka_unit_test_setup_teardown(test_handover_layout, setup, jt_teardown),
            cmocka_unit_test_setup_teardown(test_run_result_layout, setup, jt_teardown),
            cmocka_unit_test_setup_teardown(test_string_longer_than_its_field, setup, jt_teardown),
            cmocka_unit_test_setup_teardown(test_string_with_nul, setup, jt_teardown),
            cmocka_unit_test_setup_teardown(test_live_cadence_layout, setup, jt_teardown),
            cmocka_unit_test_setup_teardown(test_catch_up_layout, setup, jt_teardown),
            cmocka_unit_test_setup_teardown(test_format2_journal, setup, jt_teardown),
            cmocka_unit_test_setup_teardown(test_invalid_input, setup, jt_teardown),
            cmocka_unit_test_setup_teardown(test_compact_refuses, setup, jt_teardown),
            cmocka_unit_test_setup_teardown(test_abort, setup, jt_teardown),
            cmocka_unit_test_setup_teardown(test_should_compact, setup, jt_teardown),
            cmocka_unit_test_setup_teardown(test_live_set, setup, jt_teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
