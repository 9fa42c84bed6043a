/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What the pieces of the journal share (service/io/journal.h is the interface): the format's
 * constants, the open journal, and the functions of each piece. The calls go one way:
 *   journal.c (the interface) → journal-compact.c (compaction, in a forked child) and
 *   journal-replay.c (journal_open's reading) → journal-file.c (the files: open, write, sync,
 *   install, repair) → journal-format.c (the bytes: records, headers, proof slots, the
 *   field-table codec; no system call).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "service/io/journal.h"

#define JOURNAL_FILE  "journal"
#define JOURNAL_TMP   "journal.tmp"
#define JOURNAL_NEXT  "journal.next" /* a compaction's new journal, until the snapshot is in */
#define SNAPSHOT_FILE "snapshot"
#define SNAPSHOT_TMP  "snapshot.tmp"
#define DAMAGED_TMP   "journal.damaged.tmp"
#define DAMAGED_FILE  "journal.damaged-" /* <epoch>-<offset>-<realtime ns> */

#define SNAPSHOT_VERSION   2u
#define JOURNAL_VERSION_V2 2u /* read and appended to until the next compaction */
#define JOURNAL_VERSION    3u /* what a new journal is: with proof slots */
#define MAGIC_SIZE         8
#define JOURNAL_MAGIC      "TIMERDJ1"
#define SNAPSHOT_MAGIC     "TIMERDS1"
#define SECTOR_SIZE        512u

/* Headers: magic, u32 version, u64 epoch, (snapshot only: u64 number of records), u32 CRC-32C of
 * the header before it. */
#define JOURNAL_HEADER_SIZE  (MAGIC_SIZE + 4 + 8 + 4)
#define SNAPSHOT_HEADER_SIZE (JOURNAL_HEADER_SIZE + 8)

/*
 * Format 3: two proof slots after the header, each alone in its 512-byte sector (a torn write of
 * one damages neither the header nor the other), then the records. A slot: u64 batch, u64 end
 * offset, u64 records (counted from the first of this journal), u32 CRC-32C of the 24 bytes:
 * every batch up to that one had been synced before the slot was written. Each commit writes the
 * slot that does not hold the best proof, in the same fdatasync as its batch.
 */
#define PROOF_SLOT_SIZE    (8 + 8 + 8 + 4)
#define PROOF_SLOT_OFFSET  SECTOR_SIZE /* slot i at (1 + i) sectors */
#define JOURNAL_RECORDS_V3 (3 * SECTOR_SIZE)

/* A record: u32 payload length, u32 CRC-32C of the payload, the payload. The payload starts with
 * u8 type, u8 flags, u64 batch sequence (0 in the snapshot), u32 owner, u8 length + name. */
#define FRAME_SIZE    8
#define PAYLOAD_FLAGS 1
#define PAYLOAD_SEQ   2
#define PAYLOAD_OWNER 10
#define PAYLOAD_NAME  14
#define PAYLOAD_MIN   (1 + 1 + 8 + 4 + 1 + 1)
/* A PUT with the longest name and boot id, a handover, a live cadence and a result is 341; a
 * calendar adds up to 322. */
#define PAYLOAD_MAX    1024
#define FLAG_BATCH_END 0x01u

#define COMPACT_SLACK (UINT64_C(1) << 20)

enum record_type {
        RECORD_PUT = 1,
        RECORD_DELETE = 2,
};

struct buffer {
        uint8_t *data;
        size_t size;
        size_t allocated;
};

/* What a proof slot says: batches 1..seq, `records` records ending at `end`, were synced. */
struct proof {
        uint64_t seq;
        uint64_t end;
        uint64_t records;
};

/* A compaction in a forked child (journal-compact.c). */
struct journal_background {
        int pidfd;  /* of the child; -1: none runs */
        int holder; /* closed, the grandchild frees the old files it holds (journal-compact.c) */
        pid_t pid;
        /* Where the journal stood at the fork: what is committed after it is the tail the new
         * journal starts with. */
        int fd;
        uint64_t epoch;
        uint64_t size;
        uint64_t next_seq;
        uint64_t records;
        int error;             /* of the last compaction, until one succeeds */
        unsigned failures;     /* in a row: the wait before the next grows */
        uint64_t retry_usec;   /* CLOCK_MONOTONIC: no new child before */
        bool next_not_renamed; /* journal.next holds the journal: rename it before appending */
};

struct journal {
        const struct journal_ops *ops;
        int dir_fd;
        int fd; /* the journal; -1 while a fresh one must be started */
        uint64_t epoch;
        unsigned version;        /* of the open journal: JOURNAL_VERSION or JOURNAL_VERSION_V2 */
        uint64_t records_start;  /* where its records start */
        uint64_t next_seq;       /* of the next batch */
        uint64_t committed_size; /* everything up to here is synced */
        uint64_t committed_records;
        unsigned proof_slot; /* the slot with the best synced proof: never the one overwritten */
        uint64_t snapshot_size;
        bool needs_truncate; /* bytes past committed_size may be on disk */
        int error;
        struct buffer batch;
        struct journal_background bg;
};

/* A checked record: its timer is decoded when taken (journal_frame_timer()). */
struct record {
        enum record_type type;
        bool ends_batch;
        uint64_t seq;
};

/* A record's key as its frame holds it: the name is not NUL-terminated. */
struct journal_key {
        uint32_t owner;
        uint8_t name_len;
        const uint8_t *name;
};

enum frame_check {
        FRAME_VALID,
        FRAME_DAMAGED,   /* runs past the end, or its checksum fails: a torn or rotten write */
        FRAME_MALFORMED, /* checksum right, content wrong: never written by this code */
};

/* Now and then in a loop over records: not a call per record. */
#define INTERRUPT_CHECK_EVERY 4096u

/* journal-format.c: the bytes. */
int journal_buffer_reserve(struct buffer *b, size_t more);
uint32_t journal_load_u32(const uint8_t *p);
bool journal_name_valid(const char *name);
bool journal_timer_valid(const struct journal_timer *t);
int journal_key_compare(uint32_t a_owner, const char *a_name, uint32_t b_owner, const char *b_name);
/* Append an unsealed record (sequence, flags and checksum come with journal_record_seal()); `t`
 * is NULL for a DELETE. */
int journal_record_append(struct buffer *b, uint32_t owner, const char *name,
                          const struct journal_timer *t);
size_t journal_record_size(const uint8_t *frame);
void journal_record_seal(uint8_t *frame, uint64_t seq, bool ends_batch);
/* A sealed record of batch s as one of batch s - minus, its end mark kept. */
void journal_record_renumber(uint8_t *frame, uint64_t minus);
enum frame_check journal_frame_check(const uint8_t *data, size_t size, size_t offset,
                                     struct record *ret, size_t *ret_size);
/*
 * What a record gets at open where its content is checked later, when it is taken or dropped
 * (journal_frame_decode(), journal_frame_valid()), so that a start decodes it once: the frame fits
 * in the file, and its type, flags, sequence and key are read from where they are, the key inside
 * the payload. A snapshot's outline, without the checksum; a journal's sealed, with it (the
 * batches and the tail depend on it).
 */
bool journal_frame_outline(const uint8_t *data, size_t size, size_t offset, struct record *ret,
                           size_t *ret_size);
enum frame_check journal_frame_sealed(const uint8_t *data, size_t size, size_t offset,
                                      struct record *ret, size_t *ret_size);
/* A frame's timer decoded, each member written (a DELETE's owner and name only); false when it is
 * malformed or, with `crc`, when its checksum fails. */
bool journal_frame_decode(const uint8_t *frame, bool crc, struct journal_timer *ret);
/* The same check without the decode's copies. */
bool journal_frame_valid(const uint8_t *frame, bool crc);
/* A frame's key read in place: the frame passed journal_frame_check() or its outline. */
struct journal_key journal_frame_key(const uint8_t *frame);
/* journal_key_compare()'s order. */
int journal_frame_key_compare(const struct journal_key *a, const struct journal_key *b);
void journal_header_encode(uint8_t *header, size_t header_size, const char *magic, uint32_t version,
                           uint64_t epoch, uint64_t n_records);
int journal_header_decode(const uint8_t *data, size_t size, size_t header_size, const char *magic,
                          uint32_t max_version, uint32_t *ret_version, uint64_t *ret_epoch,
                          uint64_t *ret_n_records);
void journal_proof_encode(uint8_t *slot, const struct proof *proof);
int journal_proof_read(const struct buffer *file, struct proof *ret, unsigned *ret_slot);
/* The snapshot of `timers` (any order), sorted; -EINVAL for an invalid or duplicate timer. */
int journal_snapshot_encode(const struct journal_timer *timers, size_t n_timers, uint64_t epoch,
                            struct buffer *ret);

/* journal-file.c: the files. */
int journal_negative_errno(void); /* -errno, -EIO if errno is not set */
bool journal_interrupted(const struct journal *j);
int journal_file_read(const struct journal *j, const char *name, int *ret_fd, struct buffer *ret);
/* The whole file mapped read-only, or -ENOENT; `ret_fd` keeps it open for writing. Nothing may
 * write to the buffer; give it back with journal_file_unmap(). A file of the store is changed
 * only by the journal that holds its directory: it cannot shrink under the mapping, except by
 * journal_repair(), which cuts only what follows the complete batches. */
int journal_file_map(const struct journal *j, const char *name, int *ret_fd, struct buffer *ret);
void journal_file_unmap(struct buffer *b);
int journal_write_all(const struct journal *j, int fd, const void *data, size_t size,
                      uint64_t offset);
int journal_sync_fd(const struct journal *j, int fd);
int journal_file_install(struct journal *j, const char *tmp, const char *name, const void *data,
                         size_t size, int *ret_fd);
int journal_proof_write(struct journal *j, unsigned *ret_slot);
int journal_proof_lower(struct journal *j);
int journal_start_fresh(struct journal *j);
int journal_repair(struct journal *j);
int journal_fail(struct journal *j, int error);
int journal_open_dir(struct journal *j, const char *state_dir, const char **ret_file);
/* At open, after the header of the snapshot of `epoch` was read: what is to be done with a
 * journal.next. One that continues the snapshot becomes the journal (a crash came between the
 * renames of a compaction); any other is removed. journal_next_settle() does it. */
enum next_step {
        NEXT_NONE, /* there is none */
        NEXT_INSTALL,
        NEXT_REMOVE,
};
int journal_next_step(const struct journal *j, uint64_t epoch, enum next_step *ret);
int journal_next_settle(struct journal *j, enum next_step step);
/* Rename journal.next over the journal and make that durable. */
int journal_next_install(struct journal *j);
int journal_damaged_keep(struct journal *j, const struct buffer *file, size_t offset,
                         struct journal_open_result *result);

/* journal-replay.c: snapshot and journal read, their live set handed to `take`, the tail
 * repaired. */
int journal_load(struct journal *j, const struct journal_take *take,
                 struct journal_open_result *result);
