/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/clockid.h"
#include "service/io/crc32c.h"
#include "service/io/journal.h"

#define JOURNAL_FILE  "journal"
#define JOURNAL_TMP   "journal.tmp"
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

/* The format stores these enums by value: changing them changes the format version. */
static_assert(TIMERD_POLICY_ONCE == 0 && TIMERD_POLICY_AFTER_COMPLETION == 1 &&
                  TIMERD_POLICY_WATCHDOG == 2 && TIMERD_POLICY_INTERVAL == 3 &&
                  TIMERD_POLICY_CALENDAR == 4 && TIMERD_POLICY_MAX == 5,
              "journal format: policy");
static_assert(TIMERD_CLOCK_MONOTONIC == 0 && TIMERD_CLOCK_BOOTTIME == 1 &&
                  TIMERD_CLOCK_REALTIME == 2 && TIMERD_CLOCK_BOOTTIME_ALARM == 3 &&
                  TIMERD_CLOCK_REALTIME_ALARM == 4 && TIMERD_CLOCK_MAX == 5,
              "journal format: clock");
static_assert(TIMERD_LIFETIME_TRANSIENT == 0 && TIMERD_LIFETIME_RETAINED == 1 &&
                  TIMERD_LIFETIME_MAX == 2,
              "journal format: lifetime");
static_assert(TIMERD_DELIVERY_NOTIFY == 0 && TIMERD_DELIVERY_ALARM == 1 &&
                  TIMERD_DELIVERY_SIGNAL == 2 && TIMERD_DELIVERY_MAX == 3,
              "journal format: delivery");
static_assert(TIMERD_STATE_INACTIVE == 0 && TIMERD_STATE_SCHEDULED == 1 &&
                  TIMERD_STATE_RUNNING == 2 && TIMERD_STATE_FAILED == 3 && TIMERD_STATE_MAX == 4,
              "journal format: state");
static_assert(TIMERD_FAILURE_NONE == 0 && TIMERD_FAILURE_INVARIANT == 1 &&
                  TIMERD_FAILURE_PROVIDER_BINDING == 2 && TIMERD_FAILURE_OVERFLOW == 3 &&
                  TIMERD_FAILURE_TARGET_GONE == 4 && TIMERD_FAILURE_SIGNAL_REFUSED == 5 &&
                  TIMERD_FAILURE_MAX == 6,
              "journal format: failure");
static_assert(TIMERD_OUTCOME_NONE == 0 && TIMERD_OUTCOME_SUCCESS == 1 &&
                  TIMERD_OUTCOME_EXPECTED_FAILURE == 2 && TIMERD_OUTCOME_INVARIANT_FAILURE == 3 &&
                  TIMERD_OUTCOME_MAX == 4,
              "journal format: outcome");
static_assert(TIMERD_EXIT_NONE == 0 && TIMERD_EXIT_EXITED == 1 && TIMERD_EXIT_SIGNALED == 2 &&
                  TIMERD_EXIT_TIMED_OUT == 3 && TIMERD_EXIT_INTERRUPTED == 4 &&
                  TIMERD_EXIT_MAX == 5,
              "journal format: exit");
static_assert(TIMERD_NAME_MAX <= UINT8_MAX && JOURNAL_BOOT_ID_MAX <= UINT8_MAX &&
                  TD_CALENDAR_SOURCE_MAX <= UINT8_MAX && CALENDAR_ZONE_MAX <= UINT8_MAX,
              "journal format: one length byte");

static const struct journal_ops system_ops = {
    .pwrite = pwrite,
    .fdatasync = fdatasync,
    .ftruncate = ftruncate,
    .renameat = renameat,
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
};

/* A decoded record. For a DELETE only owner and name of the timer are set. */
struct record {
        enum record_type type;
        bool ends_batch;
        uint64_t seq;
        struct journal_timer timer;
};

enum frame_check {
        FRAME_VALID,
        FRAME_DAMAGED,   /* runs past the end, or its checksum fails: a torn or rotten write */
        FRAME_MALFORMED, /* checksum right, content wrong: never written by this code */
};

static int negative_errno(void)
{
        return errno > 0 ? -errno : -EIO;
}

static int buffer_reserve(struct buffer *b, size_t more)
{
        size_t need, allocated;
        uint8_t *p;

        if (more > SIZE_MAX - b->size)
                return -ENOMEM;
        need = b->size + more;
        if (need <= b->allocated)
                return 0;
        allocated = b->allocated > 0 ? b->allocated : 4096;
        while (allocated < need)
                allocated = allocated > SIZE_MAX / 2 ? need : allocated * 2;
        p = realloc(b->data, allocated);
        if (!p)
                return -ENOMEM;
        b->data = p;
        b->allocated = allocated;
        return 0;
}

static void put_u8(uint8_t **p, uint8_t v)
{
        *(*p)++ = v;
}

static void put_u32(uint8_t **p, uint32_t v)
{
        for (unsigned i = 0; i < 4; i++)
                put_u8(p, (uint8_t)(v >> (8 * i)));
}

static void put_u64(uint8_t **p, uint64_t v)
{
        for (unsigned i = 0; i < 8; i++)
                put_u8(p, (uint8_t)(v >> (8 * i)));
}

static void put_string(uint8_t **p, const char *s)
{
        size_t n = strlen(s);

        put_u8(p, (uint8_t)n);
        memcpy(*p, s, n);
        *p += n;
}

static uint32_t load_u32(const uint8_t *p)
{
        return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t load_u64(const uint8_t *p)
{
        return (uint64_t)load_u32(p) | (uint64_t)load_u32(p + 4) << 32;
}

struct reader {
        const uint8_t *p;
        size_t left;
        bool bad;
};

static const uint8_t *take(struct reader *r, size_t n)
{
        const uint8_t *p = r->p;

        if (r->bad || r->left < n) {
                r->bad = true;
                return NULL;
        }
        r->p += n;
        r->left -= n;
        return p;
}

static uint8_t get_u8(struct reader *r)
{
        const uint8_t *p = take(r, 1);

        return p ? p[0] : 0;
}

static uint32_t get_u32(struct reader *r)
{
        const uint8_t *p = take(r, 4);

        return p ? load_u32(p) : 0;
}

static uint64_t get_u64(struct reader *r)
{
        const uint8_t *p = take(r, 8);

        return p ? load_u64(p) : 0;
}

static bool get_bool(struct reader *r)
{
        uint8_t v = get_u8(r);

        if (v > 1)
                r->bad = true;
        return v == 1;
}

static int get_enum(struct reader *r, int max)
{
        uint8_t v = get_u8(r);

        if (v >= max)
                r->bad = true;
        return v;
}

static void get_string(struct reader *r, char *dst, size_t min, size_t max)
{
        size_t n = get_u8(r);
        const uint8_t *p;

        if (n < min || n > max)
                r->bad = true;
        p = take(r, n);
        if (!p || memchr(p, 0, n)) {
                r->bad = true;
                return;
        }
        memcpy(dst, p, n);
        dst[n] = 0;
}

static bool name_valid(const char *name)
{
        size_t n;

        if (!name)
                return false;
        n = strnlen(name, TIMERD_NAME_MAX + 1);
        return n >= 1 && n <= TIMERD_NAME_MAX;
}

static bool timer_valid(const struct journal_timer *t)
{
        return name_valid(t->name) &&
               strnlen(t->boot_id, sizeof(t->boot_id)) <= JOURNAL_BOOT_ID_MAX &&
               (unsigned)t->policy < TIMERD_POLICY_MAX && clock_valid(t->clock) &&
               (unsigned)t->lifetime < TIMERD_LIFETIME_MAX &&
               (unsigned)t->delivery < TIMERD_DELIVERY_MAX && t->signo >= 0 &&
               t->signo <= UINT8_MAX && (unsigned)t->state < TIMERD_STATE_MAX &&
               (unsigned)t->failure < TIMERD_FAILURE_MAX &&
               (unsigned)t->last_outcome < TIMERD_OUTCOME_MAX &&
               (unsigned)t->last_exit < TIMERD_EXIT_MAX && t->last_exit_code <= UINT8_MAX &&
               (t->last_exit != TIMERD_EXIT_NONE || t->last_exit_code == 0);
}

/*
 * The body of a PUT record: the fields of base/timer-fields.h and the journal's own, each at its
 * position, in position order. From TD_JOURNAL_TRAILING_FROM on, the record carries the fields up
 * to the last one that is set (a calendar schedule: only for a calendar timer, which always has
 * it), so that one encoding stands for each state and a store written before a field existed
 * reads unchanged.
 */
enum codec {
        CODEC_U64 = 1,
        CODEC_BOOL,
        CODEC_SIGNO,    /* an int, 0..255, as a u8 */
        CODEC_ENUM,     /* an enum as a u8, below `max` */
        CODEC_OPT_USEC, /* bool at offset, u64 at offset2 */
        CODEC_RESULT,   /* enum timerd_exit at offset, uint32_t code (0..255) at offset2 */
        CODEC_BOOT_ID,
        CODEC_CALENDAR, /* calendar, timezone, fixed_random_delay */
};

struct field_layout {
        enum codec codec;
        int max;
        size_t offset;
        size_t offset2;
};

#define CODEC_OF_U64           CODEC_U64, 0
#define CODEC_OF_INTERNAL_U64  CODEC_U64, 0
#define CODEC_OF_LIVE_CADENCE  CODEC_U64, 0
#define CODEC_OF_BOOL          CODEC_BOOL, 0
#define CODEC_OF_BOOL_ON       CODEC_BOOL, 0
#define CODEC_OF_INTERNAL_BOOL CODEC_BOOL, 0
#define CODEC_OF_CATCH_UP_MARK CODEC_BOOL, 0
#define CODEC_OF_SIGNO         CODEC_SIGNO, 0
#define CODEC_OF_POLICY        CODEC_ENUM, TIMERD_POLICY_MAX
#define CODEC_OF_CLOCK         CODEC_ENUM, TIMERD_CLOCK_MAX
#define CODEC_OF_LIFETIME      CODEC_ENUM, TIMERD_LIFETIME_MAX
#define CODEC_OF_DELIVERY      CODEC_ENUM, TIMERD_DELIVERY_MAX
#define CODEC_OF_STATE         CODEC_ENUM, TIMERD_STATE_MAX
#define CODEC_OF_FAILURE       CODEC_ENUM, TIMERD_FAILURE_MAX
#define CODEC_OF_OUTCOME       CODEC_ENUM, TIMERD_OUTCOME_MAX
#define CODEC_OF_DEADLINE      CODEC_OPT_USEC, 0
#define CODEC_OF_OPT_USEC      CODEC_OPT_USEC, 0
#define CODEC_OF_RESULT        CODEC_RESULT, TIMERD_EXIT_MAX

/* Where a kind's members are: one, or a pair. */
#define OFFSETS_ONE(m) offsetof(struct journal_timer, m), 0
#define OFFSETS_PAIR(pr)                                                                           \
        offsetof(struct journal_timer, TD_FIRST(pr)), offsetof(struct journal_timer, TD_SECOND(pr))
#define OFFSETS_OF_U64           OFFSETS_ONE
#define OFFSETS_OF_INTERNAL_U64  OFFSETS_ONE
#define OFFSETS_OF_LIVE_CADENCE  OFFSETS_ONE
#define OFFSETS_OF_BOOL          OFFSETS_ONE
#define OFFSETS_OF_BOOL_ON       OFFSETS_ONE
#define OFFSETS_OF_INTERNAL_BOOL OFFSETS_ONE
#define OFFSETS_OF_CATCH_UP_MARK OFFSETS_ONE
#define OFFSETS_OF_SIGNO         OFFSETS_ONE
#define OFFSETS_OF_POLICY        OFFSETS_ONE
#define OFFSETS_OF_CLOCK         OFFSETS_ONE
#define OFFSETS_OF_LIFETIME      OFFSETS_ONE
#define OFFSETS_OF_DELIVERY      OFFSETS_ONE
#define OFFSETS_OF_STATE         OFFSETS_ONE
#define OFFSETS_OF_FAILURE       OFFSETS_ONE
#define OFFSETS_OF_OUTCOME       OFFSETS_ONE
#define OFFSETS_OF_DEADLINE      OFFSETS_PAIR
#define OFFSETS_OF_OPT_USEC      OFFSETS_PAIR
#define OFFSETS_OF_RESULT        OFFSETS_PAIR

#define LAYOUT(kind, snapshot, wire, public, journal, position)                                    \
        [(position)-1] = {CODEC_OF_##kind, OFFSETS_OF_##kind(journal)},
#define COUNT(kind, snapshot, wire, public, journal, position) +1

/* The journal's own fields among them. */
#define JOURNAL_POSITION_WRITTEN_REALTIME 27
#define JOURNAL_POSITION_WRITTEN_CLOCK    28
#define JOURNAL_POSITION_BOOT_ID          29
#define JOURNAL_POSITION_CALENDAR         31
#define JOURNAL_OWN_FIELDS                4

/* Position p at [p - 1]. Two fields at one position fail the build (-Woverride-init); the
 * count rules out gaps. */
/* clang-format off */
static const struct field_layout record_layout[] = {
    TD_DECLARATION_FIELDS(LAYOUT)
    TD_TIMER_FIELDS(LAYOUT)
    [JOURNAL_POSITION_WRITTEN_REALTIME - 1] = {CODEC_U64, 0, OFFSETS_ONE(written_realtime_usec)},
    [JOURNAL_POSITION_WRITTEN_CLOCK - 1] = {CODEC_U64, 0, OFFSETS_ONE(written_clock_usec)},
    [JOURNAL_POSITION_BOOT_ID - 1] = {CODEC_BOOT_ID, 0, OFFSETS_ONE(boot_id)},
    [JOURNAL_POSITION_CALENDAR - 1] = {CODEC_CALENDAR, 0, OFFSETS_ONE(calendar)},
};
/* clang-format on */
#define RECORD_FIELDS (sizeof(record_layout) / sizeof(record_layout[0]))
static_assert(RECORD_FIELDS ==
                  0 TD_DECLARATION_FIELDS(COUNT) TD_TIMER_FIELDS(COUNT) + JOURNAL_OWN_FIELDS,
              "journal record: every position from 1 holds one field");
/* Enum fields are read and written as int. */
static_assert(sizeof(enum timerd_policy) == sizeof(int) &&
                  sizeof(enum timerd_exit) == sizeof(int) &&
                  sizeof(enum timerd_state) == sizeof(int),
              "journal record: enums");

static const struct field_layout *field_at(size_t position)
{
        return &record_layout[position - 1];
}

static bool field_set(const struct field_layout *f, const struct journal_timer *t)
{
        const char *base = (const char *)t;

        switch (f->codec) {
        case CODEC_U64:
                return *(const uint64_t *)(base + f->offset) != 0;
        case CODEC_BOOL:
        case CODEC_OPT_USEC:
                return *(const bool *)(base + f->offset);
        case CODEC_SIGNO:
        case CODEC_ENUM:
        case CODEC_RESULT:
                return *(const int *)(base + f->offset) != 0;
        case CODEC_BOOT_ID:
                return *(base + f->offset) != 0;
        case CODEC_CALENDAR:
                return t->policy == TIMERD_POLICY_CALENDAR;
        }
        return false;
}

static void field_encode(uint8_t **p, const struct field_layout *f, const struct journal_timer *t)
{
        const char *base = (const char *)t;

        switch (f->codec) {
        case CODEC_U64:
                put_u64(p, *(const uint64_t *)(base + f->offset));
                break;
        case CODEC_BOOL:
                put_u8(p, *(const bool *)(base + f->offset));
                break;
        case CODEC_SIGNO:
        case CODEC_ENUM:
                put_u8(p, (uint8_t) * (const int *)(base + f->offset));
                break;
        case CODEC_OPT_USEC:
                put_u8(p, *(const bool *)(base + f->offset));
                put_u64(p, *(const uint64_t *)(base + f->offset2));
                break;
        case CODEC_RESULT:
                put_u8(p, (uint8_t) * (const int *)(base + f->offset));
                put_u8(p, (uint8_t) * (const uint32_t *)(base + f->offset2));
                break;
        case CODEC_BOOT_ID:
                put_string(p, t->boot_id);
                break;
        case CODEC_CALENDAR:
                put_string(p, t->calendar);
                put_string(p, t->timezone);
                put_u8(p, t->fixed_random_delay);
                break;
        }
}

/*
 * A decoded value into its member. Not inlined: GCC's -O2 object-size tracking (with the
 * sanitizers) takes an offset from record_layout for one into the first member (owner) and warns
 * of an overflow that cannot happen: every offset comes from offsetof() of a member of the kind's
 * type, and the journal tests' round trips run under ASan.
 */
__attribute__((noinline)) static void store_u64(char *p, uint64_t v)
{
        memcpy(p, &v, sizeof(v));
}

__attribute__((noinline)) static void store_u32(char *p, uint32_t v)
{
        memcpy(p, &v, sizeof(v));
}

static void store_int(char *p, int v)
{
        memcpy(p, &v, sizeof(v));
}

static void store_bool(char *p, bool v)
{
        memcpy(p, &v, sizeof(v));
}

static void field_decode(struct reader *r, const struct field_layout *f, struct journal_timer *t)
{
        char *base = (char *)t;

        switch (f->codec) {
        case CODEC_U64:
                store_u64(base + f->offset, get_u64(r));
                break;
        case CODEC_BOOL:
                store_bool(base + f->offset, get_bool(r));
                break;
        case CODEC_SIGNO:
                store_int(base + f->offset, get_u8(r));
                break;
        case CODEC_ENUM:
                store_int(base + f->offset, get_enum(r, f->max));
                break;
        case CODEC_OPT_USEC:
                store_bool(base + f->offset, get_bool(r));
                store_u64(base + f->offset2, get_u64(r));
                break;
        case CODEC_RESULT:
                store_int(base + f->offset, get_enum(r, f->max));
                store_u32(base + f->offset2, get_u8(r));
                break;
        case CODEC_BOOT_ID:
                get_string(r, t->boot_id, 0, JOURNAL_BOOT_ID_MAX);
                break;
        case CODEC_CALENDAR:
                get_string(r, t->calendar, 1, TD_CALENDAR_SOURCE_MAX);
                get_string(r, t->timezone, 0, CALENDAR_ZONE_MAX - 1); /* "": the local zone */
                t->fixed_random_delay = get_bool(r);
                break;
        }
}

/* Whether a record carries an optional field at all: a calendar schedule by the policy. */
static bool trailing_written(size_t position, size_t last_set, const struct journal_timer *t)
{
        if (field_at(position)->codec == CODEC_CALENDAR)
                return t->policy == TIMERD_POLICY_CALENDAR;
        return position <= last_set;
}

static void encode_timer(uint8_t **p, const struct journal_timer *t)
{
        size_t last_set = 0;

        for (size_t i = TD_JOURNAL_TRAILING_FROM; i <= RECORD_FIELDS; i++)
                if (field_set(field_at(i), t))
                        last_set = i;
        for (size_t i = 1; i <= RECORD_FIELDS; i++)
                if (i < TD_JOURNAL_TRAILING_FROM || trailing_written(i, last_set, t))
                        field_encode(p, field_at(i), t);
}

static void decode_timer(struct reader *r, struct journal_timer *t)
{
        size_t last = 0;

        for (size_t i = 1; i <= RECORD_FIELDS; i++) {
                if (i >= TD_JOURNAL_TRAILING_FROM) {
                        bool present = field_at(i)->codec == CODEC_CALENDAR
                                           ? t->policy == TIMERD_POLICY_CALENDAR
                                           : r->left > 0;
                        if (!present)
                                continue;
                        last = i;
                }
                field_decode(r, field_at(i), t);
        }
        /* One encoding per state: the last optional field is one that is set. */
        if (last > 0 && !field_set(field_at(last), t))
                r->bad = true;
}

/* Append an unsealed record (sequence, flags and checksum come with record_seal()); `t` is NULL
 * for a DELETE. */
static int record_append(struct buffer *b, uint32_t owner, const char *name,
                         const struct journal_timer *t)
{
        uint8_t *frame, *payload, *p;
        size_t payload_size;
        int r;

        r = buffer_reserve(b, FRAME_SIZE + PAYLOAD_MAX);
        if (r < 0)
                return r;
        frame = b->data + b->size;
        payload = p = frame + FRAME_SIZE;
        put_u8(&p, t ? RECORD_PUT : RECORD_DELETE);
        put_u8(&p, 0);
        put_u64(&p, 0);
        put_u32(&p, owner);
        put_string(&p, name);
        if (t)
                encode_timer(&p, t);
        payload_size = (size_t)(p - payload);
        assert(payload_size <= PAYLOAD_MAX);

        p = frame;
        put_u32(&p, (uint32_t)payload_size);
        put_u32(&p, 0);
        b->size += FRAME_SIZE + payload_size;
        return 0;
}

static size_t record_size(const uint8_t *frame)
{
        return FRAME_SIZE + load_u32(frame);
}

static void record_seal(uint8_t *frame, uint64_t seq, bool ends_batch)
{
        uint8_t *payload = frame + FRAME_SIZE, *p;
        uint32_t payload_size = load_u32(frame);

        payload[PAYLOAD_FLAGS] = ends_batch ? FLAG_BATCH_END : 0;
        p = payload + PAYLOAD_SEQ;
        put_u64(&p, seq);
        p = frame + 4;
        put_u32(&p, crc32c(0, payload, payload_size));
}

static bool record_decode(const uint8_t *payload, size_t size, struct record *ret)
{
        struct reader r = {.p = payload, .left = size};
        uint8_t type, flags;

        *ret = (struct record){};
        type = get_u8(&r);
        flags = get_u8(&r);
        ret->seq = get_u64(&r);
        ret->timer.owner = get_u32(&r);
        get_string(&r, ret->timer.name, 1, TIMERD_NAME_MAX);
        if (type == RECORD_PUT)
                decode_timer(&r, &ret->timer);
        else if (type != RECORD_DELETE)
                return false;
        if (flags & ~FLAG_BATCH_END)
                return false;
        ret->type = type;
        ret->ends_batch = flags & FLAG_BATCH_END;
        return !r.bad && r.left == 0;
}

static enum frame_check frame_check(const uint8_t *data, size_t size, size_t offset,
                                    struct record *ret, size_t *ret_size)
{
        const uint8_t *frame = data + offset;
        uint32_t payload_size;

        if (size - offset < FRAME_SIZE)
                return FRAME_DAMAGED;
        payload_size = load_u32(frame);
        if (payload_size < PAYLOAD_MIN || payload_size > PAYLOAD_MAX ||
            payload_size > size - offset - FRAME_SIZE)
                return FRAME_DAMAGED;
        if (crc32c(0, frame + FRAME_SIZE, payload_size) != load_u32(frame + 4))
                return FRAME_DAMAGED;
        if (!record_decode(frame + FRAME_SIZE, payload_size, ret))
                return FRAME_MALFORMED;
        *ret_size = FRAME_SIZE + payload_size;
        return FRAME_VALID;
}

static void header_encode(uint8_t *header, size_t header_size, const char *magic, uint32_t version,
                          uint64_t epoch, uint64_t n_records)
{
        uint8_t *p = header + MAGIC_SIZE;

        memcpy(header, magic, MAGIC_SIZE);
        put_u32(&p, version);
        put_u64(&p, epoch);
        if (header_size == SNAPSHOT_HEADER_SIZE)
                put_u64(&p, n_records);
        put_u32(&p, crc32c(0, header, header_size - 4));
}

/* The format first, so that a file of another version is named as such, not as damage. Versions
 * 2..max_version are read. */
static int header_decode(const uint8_t *data, size_t size, size_t header_size, const char *magic,
                         uint32_t max_version, uint32_t *ret_version, uint64_t *ret_epoch,
                         uint64_t *ret_n_records)
{
        uint32_t version;

        if (size < MAGIC_SIZE + 4)
                return -EBADMSG;
        version = load_u32(data + MAGIC_SIZE);
        if (memcmp(data, magic, MAGIC_SIZE) != 0 || version < 2 || version > max_version)
                return -EPROTONOSUPPORT;
        if (size < header_size ||
            crc32c(0, data, header_size - 4) != load_u32(data + header_size - 4))
                return -EBADMSG;
        *ret_version = version;
        *ret_epoch = load_u64(data + MAGIC_SIZE + 4);
        if (ret_n_records)
                *ret_n_records = load_u64(data + MAGIC_SIZE + 4 + 8);
        return 0;
}

static void proof_encode(uint8_t *slot, const struct proof *proof)
{
        uint8_t *p = slot;

        put_u64(&p, proof->seq);
        put_u64(&p, proof->end);
        put_u64(&p, proof->records);
        put_u32(&p, crc32c(0, slot, PROOF_SLOT_SIZE - 4));
}

/* A slot as commit writes it: checksummed, and no batch without a record. */
static bool proof_decode(const uint8_t *slot, struct proof *ret)
{
        if (crc32c(0, slot, PROOF_SLOT_SIZE - 4) != load_u32(slot + PROOF_SLOT_SIZE - 4))
                return false;
        *ret = (struct proof){
            .seq = load_u64(slot),
            .end = load_u64(slot + 8),
            .records = load_u64(slot + 16),
        };
        if (ret->seq == 0)
                return ret->end == JOURNAL_RECORDS_V3 && ret->records == 0;
        return ret->end > JOURNAL_RECORDS_V3 && ret->records >= ret->seq;
}

/* The best proof of a format 3 journal: the valid slot naming the later batch. Neither valid is
 * damage to a synced slot: a commit only ever overwrites the other one. */
static int proof_read(const struct buffer *file, struct proof *ret, unsigned *ret_slot)
{
        struct proof slots[2];
        bool valid[2];

        if (file->size < JOURNAL_RECORDS_V3)
                return -EBADMSG;
        for (unsigned i = 0; i < 2; i++)
                valid[i] =
                    proof_decode(file->data + PROOF_SLOT_OFFSET + i * SECTOR_SIZE, &slots[i]);
        if (!valid[0] && !valid[1])
                return -EBADMSG;
        *ret_slot = !valid[0] || (valid[1] && slots[1].seq > slots[0].seq);
        *ret = slots[*ret_slot];
        return 0;
}

static int key_compare(uint32_t a_owner, const char *a_name, uint32_t b_owner, const char *b_name)
{
        if (a_owner != b_owner)
                return a_owner < b_owner ? -1 : 1;
        return strcmp(a_name, b_name);
}

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
        int r = key_compare(x->timer.owner, x->timer.name, y->timer.owner, y->timer.name);

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

                if (i + 1 < c->n &&
                    key_compare(latest->timer.owner, latest->timer.name,
                                c->items[i + 1].timer.owner, c->items[i + 1].timer.name) == 0)
                        continue;
                if (!latest->deleted)
                        memmove(&timers[n++], &latest->timer, sizeof(*timers));
        }
        *c = (struct changes){};
        *ret = timers;
        *ret_n = n;
        return 0;
}

static bool interrupted(const struct journal *j)
{
        return j->ops->interrupted && j->ops->interrupted();
}

/* Now and then in a loop over records: not a call per record. */
#define INTERRUPT_CHECK_EVERY 4096u

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
                return negative_errno();
        if (fstat(fd, &st) < 0) {
                int r = negative_errno();

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
static int file_read(const struct journal *j, const char *name, int *ret_fd, struct buffer *ret)
{
        struct buffer b = {};
        int fd, r;

        fd = file_open(j->dir_fd, name, ret_fd ? O_RDWR : O_RDONLY);
        if (fd < 0)
                return fd;
        for (;;) {
                ssize_t n;

                if (interrupted(j)) {
                        r = -EINTR;
                        goto fail;
                }
                r = buffer_reserve(&b, 64 * 1024);
                if (r < 0)
                        goto fail;
                n = pread(fd, b.data + b.size, b.allocated - b.size, (off_t)b.size);
                if (n < 0) {
                        r = negative_errno();
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

/* A snapshot: every record a PUT, unsequenced, in strictly ascending (owner, name) order. */
static int snapshot_replay(const struct journal *j, const struct buffer *file, uint64_t *ret_epoch,
                           struct changes *c)
{
        size_t offset = SNAPSHOT_HEADER_SIZE;
        uint64_t n_records;
        uint32_t version;
        int r;

        r = header_decode(file->data, file->size, SNAPSHOT_HEADER_SIZE, SNAPSHOT_MAGIC,
                          SNAPSHOT_VERSION, &version, ret_epoch, &n_records);
        if (r < 0)
                return r;
        for (uint64_t i = 0; i < n_records; i++) {
                struct record rec;
                size_t size;

                if (i % INTERRUPT_CHECK_EVERY == INTERRUPT_CHECK_EVERY - 1 && interrupted(j))
                        return -EINTR;
                if (frame_check(file->data, file->size, offset, &rec, &size) != FRAME_VALID ||
                    rec.type != RECORD_PUT || rec.seq != 0 || rec.ends_batch)
                        return -EBADMSG;
                if (i > 0 &&
                    key_compare(c->items[c->n - 1].timer.owner, c->items[c->n - 1].timer.name,
                                rec.timer.owner, rec.timer.name) >= 0)
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

                switch (frame_check(file->data, file->size, offset, &rec, &size)) {
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
        payload_size = load_u32(frame);
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
                    interrupted(j))
                        return -EINTR;
                check = frame_check(file->data, file->size, offset, &rec, &size);
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

static int write_all(const struct journal *j, int fd, const void *data, size_t size,
                     uint64_t offset)
{
        const uint8_t *p = data;

        while (size > 0) {
                ssize_t n = j->ops->pwrite(fd, p, size, (off_t)offset);

                if (n < 0)
                        return negative_errno();
                if (n == 0)
                        return -EIO;
                p += n;
                size -= (size_t)n;
                offset += (uint64_t)n;
        }
        return 0;
}

static int sync_fd(const struct journal *j, int fd)
{
        return j->ops->fdatasync(fd) < 0 ? negative_errno() : 0;
}

/*
 * Put `size` bytes in place as `name`, whole or not at all: a tmp file, synced, renamed over it.
 * The directory is synced before the rename, so that a snapshot renamed earlier is durable before
 * the journal that continues it. Fails with nothing renamed; returns the new file's fd.
 */
static int file_install(struct journal *j, const char *tmp, const char *name, const void *data,
                        size_t size, int *ret_fd)
{
        int fd, r;

        /* A new file of ours, whatever was left under that name. */
        if (unlinkat(j->dir_fd, tmp, 0) < 0 && errno != ENOENT)
                return negative_errno();
        fd = openat(j->dir_fd, tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0)
                return negative_errno();
        r = write_all(j, fd, data, size, 0);
        if (r >= 0)
                r = sync_fd(j, fd);
        if (r >= 0)
                r = sync_fd(j, j->dir_fd);
        if (r >= 0 && j->ops->renameat(j->dir_fd, tmp, j->dir_fd, name) < 0)
                r = negative_errno();
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
static int proof_write(struct journal *j, unsigned *ret_slot)
{
        uint8_t slot[PROOF_SLOT_SIZE];
        struct proof proof = committed_proof(j);

        *ret_slot = 1 - j->proof_slot;
        proof_encode(slot, &proof);
        return write_all(j, j->fd, slot, sizeof(slot),
                         PROOF_SLOT_OFFSET + *ret_slot * (uint64_t)SECTOR_SIZE);
}

/* After proven batches were dropped: both slots say what is left, one synced before the other
 * is overwritten, so that no proof names a batch the journal no longer holds. */
static int proof_lower(struct journal *j)
{
        for (unsigned i = 0; i < 2; i++) {
                unsigned slot;
                int r = proof_write(j, &slot);

                if (r >= 0)
                        r = sync_fd(j, j->fd);
                if (r < 0)
                        return r;
                j->proof_slot = slot;
        }
        return 0;
}

static int journal_start_fresh(struct journal *j)
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

        header_encode(header, JOURNAL_HEADER_SIZE, JOURNAL_MAGIC, JOURNAL_VERSION, j->epoch, 0);
        for (unsigned i = 0; i < 2; i++)
                proof_encode(header + PROOF_SLOT_OFFSET + i * SECTOR_SIZE, &none);
        r = file_install(j, JOURNAL_TMP, JOURNAL_FILE, header, sizeof(header), &fd);
        if (r < 0)
                return r;
        /* Appends to it must not be lost to a rename that did not reach the disk. */
        r = sync_fd(j, j->dir_fd);
        if (r < 0) {
                close(fd);
                return r;
        }
        j->fd = fd;
        j->next_seq = 1;
        return 0;
}

/* Undo what a failure may have left behind before anything new is written. */
static int journal_repair(struct journal *j)
{
        int r;

        if (j->fd < 0)
                return journal_start_fresh(j);
        if (!j->needs_truncate)
                return 0;
        if (j->ops->ftruncate(j->fd, (off_t)j->committed_size) < 0)
                return negative_errno();
        /* The shorter size must be durable too, or a crash could bring the failed batch back. */
        r = sync_fd(j, j->fd);
        if (r < 0)
                return r;
        j->needs_truncate = false;
        return 0;
}

static int journal_fail(struct journal *j, int error)
{
        j->error = error;
        return error;
}

static int journal_open_dir(struct journal *j, const char *state_dir, const char **ret_file)
{
        if (mkdir(state_dir, 0700) < 0 && errno != EEXIST)
                return negative_errno();
        j->dir_fd = open(state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (j->dir_fd < 0)
                return negative_errno();
        if (flock(j->dir_fd, LOCK_EX | LOCK_NB) < 0)
                return errno == EWOULDBLOCK ? -EBUSY : negative_errno();
        for (size_t i = 0; i < 3; i++) {
                const char *tmp = i == 0 ? SNAPSHOT_TMP : i == 1 ? JOURNAL_TMP : DAMAGED_TMP;

                if (unlinkat(j->dir_fd, tmp, 0) < 0 && errno != ENOENT) {
                        *ret_file = tmp;
                        return negative_errno();
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
                return negative_errno();
        d = fdopendir(fd);
        if (!d) {
                r = negative_errno();
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
                        r = negative_errno();
                        break;
                }
                (*ret_removed)++;
        }
        closedir(d);
        return r;
}

/* Keep the bytes about to be truncated away, durably, before anything is truncated. */
static int damaged_keep(struct journal *j, const struct buffer *file, size_t offset,
                        struct journal_open_result *result)
{
        struct timespec now;
        int fd, r;

        /* The time too: the same place may be damaged again, and no copy replaces another. */
        if (clock_gettime(CLOCK_REALTIME, &now) < 0)
                return negative_errno();
        snprintf(result->tail_file, sizeof(result->tail_file),
                 DAMAGED_FILE "%" PRIu64 "-%zu-%lld%09ld", j->epoch, offset, (long long)now.tv_sec,
                 now.tv_nsec);
        r = file_install(j, DAMAGED_TMP, result->tail_file, file->data + offset,
                         file->size - offset, &fd);
        if (r < 0)
                return r;
        close(fd);
        /* The rename must be durable before the truncation is. */
        r = sync_fd(j, j->dir_fd);
        if (r < 0)
                return r;
        return damaged_prune(j, &result->n_damaged_removed);
}

static int journal_load(struct journal *j, struct changes *c, struct journal_open_result *result)
{
        struct buffer snapshot = {}, file = {};
        struct journal_replay replay = {};
        struct proof proof = {};
        uint64_t epoch;
        bool has_snapshot;
        int r;

        result->file = SNAPSHOT_FILE;
        r = file_read(j, SNAPSHOT_FILE, NULL, &snapshot);
        if (r < 0 && r != -ENOENT)
                return r;
        has_snapshot = r >= 0;
        if (has_snapshot) {
                r = snapshot_replay(j, &snapshot, &j->epoch, c);
                j->snapshot_size = snapshot.size;
                free(snapshot.data);
                if (r < 0)
                        return r;
        }
        result->n_replayed = c->n;

        result->file = JOURNAL_FILE;
        r = file_read(j, JOURNAL_FILE, &j->fd, &file);
        if (r == -ENOENT && !has_snapshot)
                result->created = true;
        if (r == -ENOENT)
                return has_snapshot ? -EBADMSG : journal_start_fresh(j);
        if (r < 0)
                return r;
        r = header_decode(file.data, file.size, JOURNAL_HEADER_SIZE, JOURNAL_MAGIC, JOURNAL_VERSION,
                          &j->version, &epoch, NULL);
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
                r = proof_read(&file, &proof, &j->proof_slot);
        if (r >= 0)
                r = journal_replay(j, &file, j->records_start, &proof, c, &replay);
        if (r >= 0 && replay.valid_size < file.size)
                r = damaged_keep(j, &file, replay.valid_size, result);
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
                r = sync_fd(j, j->fd);
        }
        if (r >= 0 && replay.tail == JOURNAL_TAIL_LOST)
                r = proof_lower(j);
        return r;
}

int journal_open(const char *state_dir, const struct journal_ops *ops,
                 struct journal_open_result *ret_result, struct journal **ret_journal)
{
        struct journal_open_result result = {};
        struct changes c = {};
        struct journal *j;
        int r;

        if (!state_dir || !ret_result || !ret_journal)
                return -EINVAL;
        j = calloc(1, sizeof(*j));
        if (!j)
                return -ENOMEM;
        *j = (struct journal){.ops = ops ? ops : &system_ops, .dir_fd = -1, .fd = -1};

        r = journal_open_dir(j, state_dir, &result.file);
        if (r >= 0)
                r = journal_load(j, &c, &result);
        if (r >= 0) {
                result.file = NULL;
                result.format_version = j->version;
                r = changes_live_set(&c, &result.timers, &result.n_timers);
        }
        free(c.items);
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
        if (j->fd >= 0)
                close(j->fd);
        if (j->dir_fd >= 0)
                close(j->dir_fd);
        free(j->batch.data);
        free(j);
}

int journal_put(struct journal *j, const struct journal_timer *timer)
{
        if (!j || !timer || !timer_valid(timer))
                return -EINVAL;
        return record_append(&j->batch, timer->owner, timer->name, timer);
}

int journal_delete(struct journal *j, uint32_t owner, const char *name)
{
        if (!j || !name_valid(name))
                return -EINVAL;
        return record_append(&j->batch, owner, name, NULL);
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
                size_t next = offset + record_size(b->data + offset);

                record_seal(b->data + offset, j->next_seq, next == b->size);
                offset = next;
        }
        /* Everything committed so far is synced: proven in the same fdatasync as the batch. */
        if (j->version == JOURNAL_VERSION)
                r = proof_write(j, &slot);
        if (r >= 0)
                r = write_all(j, j->fd, b->data, b->size, j->committed_size);
        if (r >= 0)
                r = sync_fd(j, j->fd);
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

static int timer_ptr_compare(const void *a, const void *b)
{
        const struct journal_timer *x = *(const struct journal_timer *const *)a;
        const struct journal_timer *y = *(const struct journal_timer *const *)b;

        return key_compare(x->owner, x->name, y->owner, y->name);
}

static int snapshot_encode(const struct journal_timer *timers, size_t n_timers, uint64_t epoch,
                           struct buffer *ret)
{
        const struct journal_timer **sorted;
        struct buffer b = {};
        int r;

        for (size_t i = 0; i < n_timers; i++)
                if (!timer_valid(&timers[i]))
                        return -EINVAL;
        sorted = calloc(n_timers > 0 ? n_timers : 1, sizeof(*sorted));
        if (!sorted)
                return -ENOMEM;
        for (size_t i = 0; i < n_timers; i++)
                sorted[i] = &timers[i];
        if (n_timers > 0)
                qsort(sorted, n_timers, sizeof(*sorted), timer_ptr_compare);

        r = buffer_reserve(&b, SNAPSHOT_HEADER_SIZE);
        if (r < 0)
                goto finish;
        header_encode(b.data, SNAPSHOT_HEADER_SIZE, SNAPSHOT_MAGIC, SNAPSHOT_VERSION, epoch,
                      n_timers);
        b.size = SNAPSHOT_HEADER_SIZE;
        for (size_t i = 0; i < n_timers; i++) {
                size_t offset = b.size;

                if (i > 0 && timer_ptr_compare(&sorted[i - 1], &sorted[i]) == 0) {
                        r = -EINVAL;
                        goto finish;
                }
                r = record_append(&b, sorted[i]->owner, sorted[i]->name, sorted[i]);
                if (r < 0)
                        goto finish;
                record_seal(b.data + offset, 0, false);
        }
        *ret = b;
        b = (struct buffer){};
finish:
        free(sorted);
        free(b.data);
        return r;
}

int journal_compact(struct journal *j, const struct journal_timer *timers, size_t n_timers)
{
        struct buffer snapshot = {};
        int fd, r;

        if (!j || (n_timers > 0 && !timers))
                return -EINVAL;
        if (j->batch.size > 0)
                return -EBUSY;
        r = snapshot_encode(timers, n_timers, j->epoch + 1, &snapshot);
        if (r < 0)
                return r;
        r = file_install(j, SNAPSHOT_TMP, SNAPSHOT_FILE, snapshot.data, snapshot.size, &fd);
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

bool journal_should_compact(const struct journal *j)
{
        uint64_t records = j->committed_size - j->records_start;

        /* A version 2 journal proves nothing: the compaction starts a version 3 one. */
        return j->version != JOURNAL_VERSION || records > 2 * j->snapshot_size + COMPACT_SLACK;
}

int journal_error(const struct journal *j)
{
        return j->error;
}
