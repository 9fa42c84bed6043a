/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * The journal's bytes: records (the codec generated from base/timer-fields.h), their CRC-32C
 * framing, file headers and proof slots, and the encoding of a snapshot. No system call: what is
 * here turns timers into bytes and back.
 */

#include <assert.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "base/clockid.h"
#include "service/io/crc32c.h"
#include "service/io/journal-internal.h"

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

int journal_buffer_reserve(struct buffer *b, size_t more)
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

uint32_t journal_load_u32(const uint8_t *p)
{
        return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t load_u64(const uint8_t *p)
{
        return (uint64_t)journal_load_u32(p) | (uint64_t)journal_load_u32(p + 4) << 32;
}

struct reader {
        const uint8_t *p;
        size_t left;
        bool bad;
        /* Strings are copied out; false when a record is only checked (journal_frame_check()). */
        bool keep_strings;
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

        return p ? journal_load_u32(p) : 0;
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

/* Inlined, so that a record's reader stays in registers. */
static inline __attribute__((always_inline)) void get_string(struct reader *r, char *dst,
                                                             size_t min, size_t max)
{
        size_t n = get_u8(r);
        const uint8_t *p;

        p = take(r, n);
        /* Longer than max: never copied, dst has room for max bytes and the NUL. */
        if (!p || n < min || n > max) {
                r->bad = true;
                return;
        }
        /* Every record holds a boot id of 36 bytes, copied byte by byte it was a tenth of a
         * start-up's instructions; whole words cost less even for a short name. */
        if (memchr(p, 0, n))
                r->bad = true;
        if (!r->keep_strings)
                return;
        memcpy(dst, p, n);
        dst[n] = 0;
}

bool journal_name_valid(const char *name)
{
        size_t n;

        if (!name)
                return false;
        n = strnlen(name, TIMERD_NAME_MAX + 1);
        return n >= 1 && n <= TIMERD_NAME_MAX;
}

bool journal_timer_valid(const struct journal_timer *t)
{
        return journal_name_valid(t->name) &&
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

static void store_u64(char *p, uint64_t v)
{
        memcpy(p, &v, sizeof(v));
}

static void store_u32(char *p, uint32_t v)
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

/* An optional field a record leaves out: its zero. The take writes each member so, rather than
 * zeroing the 700-byte timer first (a tenth of a record's decode). */
static void field_clear(const struct field_layout *f, struct journal_timer *t)
{
        char *base = (char *)t;

        switch (f->codec) {
        case CODEC_U64:
                store_u64(base + f->offset, 0);
                break;
        case CODEC_BOOL:
                store_bool(base + f->offset, false);
                break;
        case CODEC_SIGNO:
        case CODEC_ENUM:
                store_int(base + f->offset, 0);
                break;
        case CODEC_OPT_USEC:
                store_bool(base + f->offset, false);
                store_u64(base + f->offset2, 0);
                break;
        case CODEC_RESULT:
                store_int(base + f->offset, 0);
                store_u32(base + f->offset2, 0);
                break;
        case CODEC_BOOT_ID:
                t->boot_id[0] = '\0';
                break;
        case CODEC_CALENDAR:
                t->calendar[0] = '\0';
                t->timezone[0] = '\0';
                t->fixed_random_delay = false;
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

        /* Unrolled, each field's codec and offsets are constants: a start-up decodes every record
         * (a journal's twice: checked at open, taken at restore), and the table walk was most of
         * it. */
#pragma GCC unroll 64
        for (size_t i = 1; i <= RECORD_FIELDS; i++) {
                if (i >= TD_JOURNAL_TRAILING_FROM) {
                        bool present = field_at(i)->codec == CODEC_CALENDAR
                                           ? t->policy == TIMERD_POLICY_CALENDAR
                                           : r->left > 0;
                        if (!present) {
                                field_clear(field_at(i), t);
                                continue;
                        }
                        last = i;
                }
                field_decode(r, field_at(i), t);
        }
        /* One encoding per state: the last optional field is one that is set. */
        if (last > 0 && !field_set(field_at(last), t))
                r->bad = true;
}

/* Append an unsealed record (sequence, flags and checksum come with journal_record_seal()); `t` is
 * NULL for a DELETE. */
int journal_record_append(struct buffer *b, uint32_t owner, const char *name,
                          const struct journal_timer *t)
{
        uint8_t *frame, *payload, *p;
        size_t payload_size;
        int r;

        r = journal_buffer_reserve(b, FRAME_SIZE + PAYLOAD_MAX);
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

size_t journal_record_size(const uint8_t *frame)
{
        return FRAME_SIZE + journal_load_u32(frame);
}

void journal_record_seal(uint8_t *frame, uint64_t seq, bool ends_batch)
{
        uint8_t *payload = frame + FRAME_SIZE, *p;
        uint32_t payload_size = journal_load_u32(frame);

        payload[PAYLOAD_FLAGS] = ends_batch ? FLAG_BATCH_END : 0;
        p = payload + PAYLOAD_SEQ;
        put_u64(&p, seq);
        p = frame + 4;
        put_u32(&p, crc32c(0, payload, payload_size));
}

/* The payload's timer into *timer, each member written (a DELETE's: owner and name only); false
 * when malformed. With !keep_strings only what validity depends on is written: a journal's record
 * is checked at open and decoded again when its timer is taken, and copying its strings was a
 * third of the check. */
static bool payload_decode(const uint8_t *payload, size_t size, bool keep_strings,
                           uint8_t *ret_type, uint8_t *ret_flags, uint64_t *ret_seq,
                           struct journal_timer *timer)
{
        struct reader r = {.p = payload, .left = size, .keep_strings = keep_strings};
        uint8_t type, flags;

        type = get_u8(&r);
        flags = get_u8(&r);
        *ret_seq = get_u64(&r);
        timer->owner = get_u32(&r);
        get_string(&r, timer->name, 1, TIMERD_NAME_MAX);
        if (type == RECORD_PUT)
                decode_timer(&r, timer);
        else if (type != RECORD_DELETE)
                return false;
        if (flags & ~FLAG_BATCH_END)
                return false;
        *ret_type = type;
        *ret_flags = flags;
        return !r.bad && r.left == 0;
}

static bool record_decode(const uint8_t *payload, size_t size, struct record *ret)
{
        /* Written only where the decoder reads it back (the policy, the last optional field). */
        struct journal_timer scratch;
        uint8_t type = 0, flags = 0;
        uint64_t seq;
        bool valid = payload_decode(payload, size, false, &type, &flags, &seq, &scratch);

        ret->type = type;
        ret->ends_batch = flags & FLAG_BATCH_END;
        ret->seq = seq;
        return valid;
}

/* Whether the frame at offset fits in the file, and its size. */
static bool frame_fits(const uint8_t *data, size_t size, size_t offset, size_t *ret_size)
{
        uint32_t payload_size;

        if (size - offset < FRAME_SIZE)
                return false;
        payload_size = journal_load_u32(data + offset);
        if (payload_size < PAYLOAD_MIN || payload_size > PAYLOAD_MAX ||
            payload_size > size - offset - FRAME_SIZE)
                return false;
        *ret_size = FRAME_SIZE + payload_size;
        return true;
}

static bool frame_crc_valid(const uint8_t *frame)
{
        return crc32c(0, frame + FRAME_SIZE, journal_load_u32(frame)) ==
               journal_load_u32(frame + 4);
}

/* The frame's type, flags, sequence and key read from where they are, the key inside the payload;
 * false when they are malformed. */
static bool frame_outline(const uint8_t *frame, size_t frame_size, struct record *ret)
{
        const uint8_t *payload = frame + FRAME_SIZE;
        uint8_t flags = payload[PAYLOAD_FLAGS];

        /* The key must lie inside the payload: it is compared before the record is checked. */
        if ((payload[0] != RECORD_PUT && payload[0] != RECORD_DELETE) ||
            (flags & ~FLAG_BATCH_END) ||
            payload[PAYLOAD_NAME] > frame_size - FRAME_SIZE - PAYLOAD_NAME - 1)
                return false;
        *ret = (struct record){
            .type = payload[0],
            .ends_batch = flags & FLAG_BATCH_END,
            .seq = load_u64(payload + PAYLOAD_SEQ),
        };
        return true;
}

bool journal_frame_outline(const uint8_t *data, size_t size, size_t offset, struct record *ret,
                           size_t *ret_size)
{
        return frame_fits(data, size, offset, ret_size) &&
               frame_outline(data + offset, *ret_size, ret);
}

enum frame_check journal_frame_sealed(const uint8_t *data, size_t size, size_t offset,
                                      struct record *ret, size_t *ret_size)
{
        const uint8_t *frame = data + offset;

        if (!frame_fits(data, size, offset, ret_size) || !frame_crc_valid(frame))
                return FRAME_DAMAGED;
        return frame_outline(frame, *ret_size, ret) ? FRAME_VALID : FRAME_MALFORMED;
}

bool journal_frame_decode(const uint8_t *frame, bool crc, struct journal_timer *ret)
{
        uint8_t type, flags;
        uint64_t seq;

        return (!crc || frame_crc_valid(frame)) &&
               payload_decode(frame + FRAME_SIZE, journal_load_u32(frame), true, &type, &flags,
                              &seq, ret);
}

bool journal_frame_valid(const uint8_t *frame, bool crc)
{
        struct record rec;

        return (!crc || frame_crc_valid(frame)) &&
               record_decode(frame + FRAME_SIZE, journal_load_u32(frame), &rec);
}

struct journal_key journal_frame_key(const uint8_t *frame)
{
        const uint8_t *payload = frame + FRAME_SIZE;

        return (struct journal_key){
            .owner = journal_load_u32(payload + PAYLOAD_OWNER),
            .name_len = payload[PAYLOAD_NAME],
            .name = payload + PAYLOAD_NAME + 1,
        };
}

int journal_frame_key_compare(const struct journal_key *a, const struct journal_key *b)
{
        int r;

        if (a->owner != b->owner)
                return a->owner < b->owner ? -1 : 1;
        /* strcmp()'s order: names hold no NUL. */
        r = memcmp(a->name, b->name, a->name_len < b->name_len ? a->name_len : b->name_len);
        if (r != 0)
                return r;
        return (a->name_len > b->name_len) - (a->name_len < b->name_len);
}

void journal_record_renumber(uint8_t *frame, uint64_t minus)
{
        const uint8_t *payload = frame + FRAME_SIZE;

        journal_record_seal(frame, load_u64(payload + PAYLOAD_SEQ) - minus,
                            payload[PAYLOAD_FLAGS] & FLAG_BATCH_END);
}

enum frame_check journal_frame_check(const uint8_t *data, size_t size, size_t offset,
                                     struct record *ret, size_t *ret_size)
{
        const uint8_t *frame = data + offset;
        size_t frame_size;

        if (!frame_fits(data, size, offset, &frame_size) || !frame_crc_valid(frame))
                return FRAME_DAMAGED;
        if (!record_decode(frame + FRAME_SIZE, frame_size - FRAME_SIZE, ret))
                return FRAME_MALFORMED;
        *ret_size = frame_size;
        return FRAME_VALID;
}

void journal_header_encode(uint8_t *header, size_t header_size, const char *magic, uint32_t version,
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
int journal_header_decode(const uint8_t *data, size_t size, size_t header_size, const char *magic,
                          uint32_t max_version, uint32_t *ret_version, uint64_t *ret_epoch,
                          uint64_t *ret_n_records)
{
        uint32_t version;

        if (size < MAGIC_SIZE + 4)
                return -EBADMSG;
        version = journal_load_u32(data + MAGIC_SIZE);
        if (memcmp(data, magic, MAGIC_SIZE) != 0 || version < 2 || version > max_version)
                return -EPROTONOSUPPORT;
        if (size < header_size ||
            crc32c(0, data, header_size - 4) != journal_load_u32(data + header_size - 4))
                return -EBADMSG;
        *ret_version = version;
        *ret_epoch = load_u64(data + MAGIC_SIZE + 4);
        if (ret_n_records)
                *ret_n_records = load_u64(data + MAGIC_SIZE + 4 + 8);
        return 0;
}

void journal_proof_encode(uint8_t *slot, const struct proof *proof)
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
        if (crc32c(0, slot, PROOF_SLOT_SIZE - 4) != journal_load_u32(slot + PROOF_SLOT_SIZE - 4))
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
int journal_proof_read(const struct buffer *file, struct proof *ret, unsigned *ret_slot)
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

int journal_key_compare(uint32_t a_owner, const char *a_name, uint32_t b_owner, const char *b_name)
{
        if (a_owner != b_owner)
                return a_owner < b_owner ? -1 : 1;
        return strcmp(a_name, b_name);
}

static int timer_ptr_compare(const void *a, const void *b)
{
        const struct journal_timer *x = *(const struct journal_timer *const *)a;
        const struct journal_timer *y = *(const struct journal_timer *const *)b;

        return journal_key_compare(x->owner, x->name, y->owner, y->name);
}

int journal_snapshot_encode(const struct journal_timer *timers, size_t n_timers, uint64_t epoch,
                            struct buffer *ret)
{
        const struct journal_timer **sorted;
        struct buffer b = {};
        int r;

        for (size_t i = 0; i < n_timers; i++)
                if (!journal_timer_valid(&timers[i]))
                        return -EINVAL;
        sorted = calloc(n_timers > 0 ? n_timers : 1, sizeof(*sorted));
        if (!sorted)
                return -ENOMEM;
        for (size_t i = 0; i < n_timers; i++)
                sorted[i] = &timers[i];
        if (n_timers > 0)
                qsort(sorted, n_timers, sizeof(*sorted), timer_ptr_compare);

        r = journal_buffer_reserve(&b, SNAPSHOT_HEADER_SIZE);
        if (r < 0)
                goto finish;
        journal_header_encode(b.data, SNAPSHOT_HEADER_SIZE, SNAPSHOT_MAGIC, SNAPSHOT_VERSION, epoch,
                              n_timers);
        b.size = SNAPSHOT_HEADER_SIZE;
        for (size_t i = 0; i < n_timers; i++) {
                size_t offset = b.size;

                if (i > 0 && timer_ptr_compare(&sorted[i - 1], &sorted[i]) == 0) {
                        r = -EINVAL;
                        goto finish;
                }
                r = journal_record_append(&b, sorted[i]->owner, sorted[i]->name, sorted[i]);
                if (r < 0)
                        goto finish;
                journal_record_seal(b.data + offset, 0, false);
        }
        *ret = b;
        b = (struct buffer){};
finish:
        free(sorted);
        free(b.data);
        return r;
}
