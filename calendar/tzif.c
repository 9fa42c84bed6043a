/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * RFC 8536 TZif: a header, a version-1 block of 32-bit data, and for versions 2 and later a second
 * header with a block of 64-bit data and a footer ("\n" POSIX-TZ "\n") for times after the last
 * transition. Version-1 files use their only block and have no footer.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "civil.h"
#include "tzif.h"
#include "tzrule.h"

/* Real zones have fewer than 2000 transitions and 20 types; the bounds keep a hostile file from
 * asking for much memory. */
#define TZIF_TRANSITIONS_MAX 65536
#define TZIF_HEADER_SIZE     44
/* Rule arithmetic stays exact within ±2^40 s (about 35,000 years); times are clamped to it. */
#define TZ_TIME_LIMIT (INT64_C(1) << 40)

struct tz_zone {
        size_t n_transitions;
        int64_t *transitions;   /* ascending */
        struct tz_local *after; /* the local time type from each transition on */
        struct tz_local first;  /* before the first transition */
        bool has_rule;
        struct tz_rule rule; /* from the last transition on */
};

struct tzif_header {
        unsigned version;
        uint32_t isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt;
};

struct reader {
        const uint8_t *p;
        size_t left;
};

static int take(struct reader *r, size_t n, const uint8_t **ret)
{
        if (r->left < n)
                return -EINVAL;
        *ret = r->p;
        r->p += n;
        r->left -= n;
        return 0;
}

static uint32_t be32(const uint8_t *p)
{
        return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int64_t be64(const uint8_t *p)
{
        return (int64_t)((uint64_t)be32(p) << 32 | be32(p + 4));
}

static int fail(enum tz_error error, enum tz_error *ret_error)
{
        *ret_error = error;
        return error == TZ_E_NOMEM ? -ENOMEM : -EINVAL;
}

static enum tz_error read_header(struct reader *r, struct tzif_header *ret)
{
        const uint8_t *h;
        if (take(r, TZIF_HEADER_SIZE, &h) < 0)
                return TZ_E_TRUNCATED;
        if (memcmp(h, "TZif", 4) != 0)
                return TZ_E_MAGIC;
        if (h[4] == 0)
                ret->version = 1;
        else if (h[4] >= '2' && h[4] <= '4')
                ret->version = (unsigned)(h[4] - '0');
        else
                return TZ_E_VERSION;
        ret->isutcnt = be32(h + 20);
        ret->isstdcnt = be32(h + 24);
        ret->leapcnt = be32(h + 28);
        ret->timecnt = be32(h + 32);
        ret->typecnt = be32(h + 36);
        ret->charcnt = be32(h + 40);
        if (ret->typecnt == 0 || ret->typecnt > 256 || ret->charcnt == 0 || ret->charcnt > 65536 ||
            ret->timecnt > TZIF_TRANSITIONS_MAX ||
            (ret->isutcnt != 0 && ret->isutcnt != ret->typecnt) ||
            (ret->isstdcnt != 0 && ret->isstdcnt != ret->typecnt))
                return TZ_E_COUNTS;
        if (ret->leapcnt != 0)
                return TZ_E_LEAP;
        return TZ_E_NONE;
}

static size_t block_size(const struct tzif_header *h, size_t time_size)
{
        return h->timecnt * time_size + h->timecnt + h->typecnt * 6 + h->charcnt +
               h->leapcnt * (time_size + 4) + h->isstdcnt + h->isutcnt;
}

static enum tz_error read_types(const uint8_t *p, const struct tzif_header *h,
                                struct tz_local *types)
{
        for (uint32_t i = 0; i < h->typecnt; i++, p += 6) {
                int32_t utoff = (int32_t)be32(p);
                if (utoff > TZ_UTOFF_MAX || utoff < -TZ_UTOFF_MAX)
                        return TZ_E_OFFSET;
                if (p[4] > 1)
                        return TZ_E_COUNTS;
                if (p[5] >= h->charcnt)
                        return TZ_E_DESIGNATION;
                types[i] = (struct tz_local){.utoff = utoff, .isdst = p[4] == 1};
        }
        return TZ_E_NONE;
}

static enum tz_error read_block(struct reader *r, const struct tzif_header *h, size_t time_size,
                                struct tz_zone *zone)
{
        const uint8_t *block;
        struct tz_local types[256];

        if (take(r, block_size(h, time_size), &block) < 0)
                return TZ_E_TRUNCATED;
        const uint8_t *times = block, *indices = block + h->timecnt * time_size;
        enum tz_error e = read_types(indices + h->timecnt, h, types);
        if (e != TZ_E_NONE)
                return e;
        for (uint32_t i = 0; i < h->timecnt; i++) {
                int64_t at =
                    time_size == 8 ? be64(times + 8 * i) : (int64_t)(int32_t)be32(times + 4 * i);
                if (i > 0 && at <= zone->transitions[i - 1])
                        return TZ_E_ORDER;
                if (indices[i] >= h->typecnt)
                        return TZ_E_TYPE_INDEX;
                zone->transitions[i] = at;
                zone->after[i] = types[indices[i]];
        }
        zone->n_transitions = h->timecnt;
        zone->first = types[0];
        return TZ_E_NONE;
}

static enum tz_error read_footer(struct reader *r, struct tz_zone *zone)
{
        const uint8_t *nl;
        if (take(r, 1, &nl) < 0)
                return TZ_E_TRUNCATED;
        if (*nl != '\n')
                return TZ_E_FOOTER;
        const uint8_t *end = memchr(r->p, '\n', r->left);
        if (!end)
                return TZ_E_TRUNCATED;
        size_t size = (size_t)(end - r->p);
        if (size == 0)
                return TZ_E_NONE; /* no rule: the last type holds for ever */
        if (tz_rule_parse((const char *)r->p, size, &zone->rule) < 0)
                return TZ_E_FOOTER;
        zone->has_rule = true;
        return TZ_E_NONE;
}

static int64_t clamp_time(int64_t t)
{
        return t > TZ_TIME_LIMIT ? TZ_TIME_LIMIT : t < -TZ_TIME_LIMIT ? -TZ_TIME_LIMIT : t;
}

/* RFC 8536 §3.3: the footer continues the table. One whose offset at the last transition is not
 * that transition's would move local time at the table's end with no transition to say so, and a
 * wall time there would resolve to no instant. */
static bool footer_continues_table(const struct tz_zone *zone)
{
        if (!zone->has_rule || zone->n_transitions == 0)
                return true;
        int64_t last = zone->transitions[zone->n_transitions - 1];
        return tz_rule_local(&zone->rule, clamp_time(last)).utoff ==
               zone->after[zone->n_transitions - 1].utoff;
}

static struct tz_zone *zone_new(size_t n_transitions)
{
        struct tz_zone *zone = calloc(1, sizeof(*zone));
        if (!zone)
                return NULL;
        if (n_transitions > 0) {
                zone->transitions = calloc(n_transitions, sizeof(*zone->transitions));
                zone->after = calloc(n_transitions, sizeof(*zone->after));
                if (!zone->transitions || !zone->after) {
                        tz_zone_free(zone);
                        return NULL;
                }
        }
        return zone;
}

int tz_zone_parse_tzif(const uint8_t *data, size_t size, struct tz_zone **ret,
                       enum tz_error *ret_error)
{
        struct reader r = {data, size};
        struct tzif_header h;
        size_t time_size = 4;

        enum tz_error e = read_header(&r, &h);
        if (e != TZ_E_NONE)
                return fail(e, ret_error);
        if (h.version >= 2) {
                const uint8_t *v1;
                if (take(&r, block_size(&h, 4), &v1) < 0)
                        return fail(TZ_E_TRUNCATED, ret_error);
                e = read_header(&r, &h);
                if (e != TZ_E_NONE)
                        return fail(e, ret_error);
                time_size = 8;
        }
        struct tz_zone *zone = zone_new(h.timecnt);
        if (!zone)
                return fail(TZ_E_NOMEM, ret_error);
        e = read_block(&r, &h, time_size, zone);
        if (e == TZ_E_NONE && h.version >= 2)
                e = read_footer(&r, zone);
        if (e == TZ_E_NONE && !footer_continues_table(zone))
                e = TZ_E_FOOTER;
        if (e != TZ_E_NONE) {
                tz_zone_free(zone);
                return fail(e, ret_error);
        }
        *ret = zone;
        *ret_error = TZ_E_NONE;
        return 0;
}

int tz_zone_parse_rule(const char *rule, struct tz_zone **ret, enum tz_error *ret_error)
{
        struct tz_rule parsed;
        if (tz_rule_parse(rule, strlen(rule), &parsed) < 0)
                return fail(TZ_E_FOOTER, ret_error);
        struct tz_zone *zone = zone_new(0);
        if (!zone)
                return fail(TZ_E_NOMEM, ret_error);
        zone->rule = parsed;
        zone->has_rule = true;
        zone->first = parsed.std;
        *ret = zone;
        *ret_error = TZ_E_NONE;
        return 0;
}

void tz_zone_free(struct tz_zone *zone)
{
        if (!zone)
                return;
        free(zone->transitions);
        free(zone->after);
        free(zone);
}

const char *tz_error_message(enum tz_error error)
{
        static const char *const messages[TZ_E_MAX] = {
            [TZ_E_NONE] = "no error",
            [TZ_E_TRUNCATED] = "the zone data is truncated",
            [TZ_E_MAGIC] = "not a TZif file",
            [TZ_E_VERSION] = "unknown TZif version",
            [TZ_E_COUNTS] = "invalid counts in the TZif header",
            [TZ_E_ORDER] = "transition times are not ascending",
            [TZ_E_TYPE_INDEX] = "a transition names a local time type that does not exist",
            [TZ_E_OFFSET] = "a UT offset beyond 26 hours",
            [TZ_E_DESIGNATION] = "an abbreviation index outside the designations",
            [TZ_E_LEAP] = "zones with leap seconds are not supported",
            [TZ_E_FOOTER] = "the TZ rule string is invalid",
            [TZ_E_NOMEM] = "out of memory",
        };
        return error < TZ_E_MAX ? messages[error] : "unknown error";
}

/* The index of the last transition at or before t, or -1. */
static ptrdiff_t transition_at(const struct tz_zone *zone, int64_t t)
{
        size_t lo = 0, hi = zone->n_transitions;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (zone->transitions[mid] <= t)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return (ptrdiff_t)lo - 1;
}

static bool past_table(const struct tz_zone *zone, int64_t t)
{
        return zone->n_transitions == 0 || t >= zone->transitions[zone->n_transitions - 1];
}

struct tz_local tz_zone_local(const struct tz_zone *zone, int64_t utc)
{
        if (!zone)
                return (struct tz_local){0};
        if (past_table(zone, utc) && zone->has_rule)
                return tz_rule_local(&zone->rule, clamp_time(utc));
        ptrdiff_t i = transition_at(zone, utc);
        return i < 0 ? zone->first : zone->after[i];
}

bool tz_zone_next_transition(const struct tz_zone *zone, int64_t after, struct tz_transition *ret)
{
        if (!zone)
                return false;
        if (!past_table(zone, after)) {
                size_t i = (size_t)(transition_at(zone, after) + 1);
                struct tz_local before = i == 0 ? zone->first : zone->after[i - 1];
                *ret = (struct tz_transition){zone->transitions[i], before.utoff,
                                              zone->after[i].utoff};
                return true;
        }
        if (!zone->has_rule || after >= TZ_TIME_LIMIT)
                return false;
        return tz_rule_next_transition(&zone->rule, clamp_time(after), ret);
}

/* Windows a little wider than any offset (±26 h) hold every instant a local time can map to. */
#define RESOLVE_WINDOW      (30 * 3600)
#define RESOLVE_OFFSETS_MAX 8

unsigned tz_zone_resolve(const struct tz_zone *zone, int64_t local, int64_t ret_instants[2],
                         int64_t *ret_gap_end)
{
        int32_t offsets[RESOLVE_OFFSETS_MAX];
        size_t n_offsets = 0;
        int64_t t = local - RESOLVE_WINDOW;
        struct tz_transition tr;
        unsigned n = 0;

        offsets[n_offsets++] = tz_zone_local(zone, t).utoff;
        *ret_gap_end = local;
        while (n_offsets < RESOLVE_OFFSETS_MAX && tz_zone_next_transition(zone, t, &tr) &&
               tr.at <= local + RESOLVE_WINDOW) {
                offsets[n_offsets++] = tr.after;
                /* A gap: the clock jumped from before `local` to after it. */
                if (tr.at + tr.before <= local && local < tr.at + tr.after)
                        *ret_gap_end = tr.at;
                t = tr.at;
        }
        /* Each offset in effect near `local` gives one candidate instant; keep those that are
         * real, ascending and distinct, at most two. */
        for (size_t i = 0; i < n_offsets; i++) {
                int64_t instant = local - offsets[i];
                if (tz_zone_local(zone, instant).utoff != offsets[i])
                        continue;
                bool seen = false;
                for (unsigned j = 0; j < n; j++)
                        seen = seen || ret_instants[j] == instant;
                if (seen)
                        continue;
                if (n < 2) {
                        ret_instants[n++] = instant;
                } else if (instant < ret_instants[1]) {
                        ret_instants[1] = instant;
                }
                if (n == 2 && ret_instants[0] > ret_instants[1]) {
                        int64_t swap = ret_instants[0];
                        ret_instants[0] = ret_instants[1];
                        ret_instants[1] = swap;
                }
        }
        return n;
}

void tz_zone_offset_range(const struct tz_zone *zone, int64_t from, int64_t to, int32_t *ret_min,
                          int32_t *ret_max)
{
        int32_t lo = tz_zone_local(zone, from).utoff, hi = lo;
        struct tz_transition tr;
        for (int64_t t = from; tz_zone_next_transition(zone, t, &tr) && tr.at <= to; t = tr.at) {
                lo = tr.after < lo ? tr.after : lo;
                hi = tr.after > hi ? tr.after : hi;
        }
        *ret_min = lo;
        *ret_max = hi;
}
