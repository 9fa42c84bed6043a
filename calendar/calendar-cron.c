/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * The 5-field cron form: MINUTE HOUR DAY-OF-MONTH MONTH DAY-OF-WEEK, each "*", a number, a name
 * (jan…dec, sun…sat), a range a-b, a list, with "/step" after "*", a range or a number (a/step:
 * from a to the field's end). Weekday 0 and 7 are Sunday. @yearly, @annually, @monthly, @weekly,
 * @daily, @midnight, @hourly. As in Vixie cron, when both the day of month and the weekday are
 * restricted (neither field starts with "*") a day matches if EITHER does; otherwise both must.
 */

#include <errno.h>
#include <string.h>
#include <strings.h>

#include "calendar-internal.h"

struct cron_field_def {
        enum calendar_field_id id; /* FIELD_MAX: the weekday */
        int32_t min, max;
        const char *const *names; /* names[i] is min + i */
};

static const char *const month_names[] = {"jan", "feb", "mar", "apr", "may", "jun", "jul",
                                          "aug", "sep", "oct", "nov", "dec", NULL};
static const char *const weekday_names[] = {"sun", "mon", "tue", "wed", "thu", "fri", "sat", NULL};

static const struct cron_field_def cron_fields[5] = {
    {FIELD_MINUTE, 0, 59, NULL},       {FIELD_HOUR, 0, 23, NULL},        {FIELD_DAY, 1, 31, NULL},
    {FIELD_MONTH, 1, 12, month_names}, {FIELD_MAX, 0, 7, weekday_names},
};

struct cron_parser {
        const char *text, *p;
        struct calendar_error *error;
};

static int fail_at(struct cron_parser *cp, const char *at, enum calendar_error_code code)
{
        *cp->error = (struct calendar_error){code, (size_t)(at - cp->text)};
        return -EINVAL;
}

static bool is_space(char c)
{
        return c == ' ' || c == '\t';
}

static int parse_cron_value(struct cron_parser *cp, const struct cron_field_def *def, int32_t *ret)
{
        const char *start = cp->p;
        if (def->names)
                for (int i = 0; def->names[i]; i++)
                        if (strncasecmp(cp->p, def->names[i], 3) == 0) {
                                cp->p += 3;
                                *ret = def->min + i;
                                return 0;
                        }
        int32_t value = 0;
        if (*cp->p < '0' || *cp->p > '9')
                return fail_at(cp, cp->p, CALENDAR_E_NUMBER);
        while (*cp->p >= '0' && *cp->p <= '9') {
                value = value * 10 + (*cp->p++ - '0');
                if (value > def->max)
                        return fail_at(cp, start, CALENDAR_E_RANGE);
        }
        if (value < def->min)
                return fail_at(cp, start, CALENDAR_E_RANGE);
        *ret = value;
        return 0;
}

static int parse_cron_item(struct cron_parser *cp, const struct cron_field_def *def,
                           struct calendar_range *ret)
{
        const char *start = cp->p;
        struct calendar_range r = {.stop = -1};
        int e;
        if (*cp->p == '*') {
                cp->p++;
                r = (struct calendar_range){def->min, def->max, 1};
                /* A star with a step runs from the field's start to its end, as systemd's "0/step".
                 */
                if (*cp->p == '/')
                        r.stop = -1;
        } else {
                if ((e = parse_cron_value(cp, def, &r.start)) < 0)
                        return e;
                if (*cp->p == '-') {
                        cp->p++;
                        if ((e = parse_cron_value(cp, def, &r.stop)) < 0)
                                return e;
                        if (r.stop < r.start)
                                return fail_at(cp, start, CALENDAR_E_RANGE);
                        r.repeat = 1;
                }
        }
        if (*cp->p == '/') {
                const char *step = ++cp->p;
                int32_t repeat = 0;
                while (*cp->p >= '0' && *cp->p <= '9' && repeat <= def->max)
                        repeat = repeat * 10 + (*cp->p++ - '0');
                if (step == cp->p)
                        return fail_at(cp, step, CALENDAR_E_NUMBER);
                if (repeat == 0 || repeat > def->max - def->min)
                        return fail_at(cp, step, CALENDAR_E_REPEAT);
                r.repeat = repeat;
        }
        if (*cp->p != ',' && *cp->p != '\0' && !is_space(*cp->p))
                return fail_at(cp, cp->p, CALENDAR_E_SYNTAX);
        *ret = r;
        return 0;
}

/* Weekday numbers (Sunday 0 or 7) into the spec's bits (Monday bit 0). */
static uint8_t weekday_bits(const struct calendar_range *r)
{
        uint8_t bits = 0;
        /* An open "a/step" ends at Saturday: Sunday is 0, its alias 7 would count it twice. */
        int32_t stop = r->stop >= 0 ? r->stop : r->repeat > 0 ? 6 : r->start;
        for (int32_t d = r->start; d <= stop; d += r->repeat > 0 ? r->repeat : 1)
                bits |= (uint8_t)(1u << ((d + 6) % 7));
        return bits;
}

/* One field; returns whether it starts with "*" (cron's test for "unrestricted"). */
static int parse_cron_field(struct cron_parser *cp, const struct cron_field_def *def,
                            struct calendar_spec *spec)
{
        const char *start = cp->p;
        bool star = *start == '*';
        struct calendar_field field = {0};
        int e;
        for (;;) {
                const char *item = cp->p;
                struct calendar_range r;
                if ((e = parse_cron_item(cp, def, &r)) < 0)
                        return e;
                if (def->id == FIELD_MAX) {
                        spec->weekdays |= weekday_bits(&r);
                } else {
                        if (field.n >= CALENDAR_RANGES_MAX)
                                return fail_at(cp, item, CALENDAR_E_TOO_MANY);
                        field.ranges[field.n++] = r;
                }
                if (*cp->p != ',')
                        break;
                cp->p++;
        }
        /* A bare "*" is every value. */
        if (cp->p - start == 1 && star)
                field.n = 0;
        if (def->id != FIELD_MAX)
                *calendar_field_of(spec, def->id) = field;
        return star;
}

static const char *cron_macro(const char *text)
{
        static const struct {
                const char *name, *expansion;
        } macros[] = {
            {"@yearly", "0 0 1 1 *"}, {"@annually", "0 0 1 1 *"}, {"@monthly", "0 0 1 * *"},
            {"@weekly", "0 0 * * 0"}, {"@daily", "0 0 * * *"},    {"@midnight", "0 0 * * *"},
            {"@hourly", "0 * * * *"},
        };
        for (size_t i = 0; i < sizeof(macros) / sizeof(macros[0]); i++)
                if (strcasecmp(text, macros[i].name) == 0)
                        return macros[i].expansion;
        return NULL;
}

int calendar_parse_cron(const char *text, struct calendar_spec *ret,
                        struct calendar_error *ret_error)
{
        struct calendar_spec spec = {.syntax = CALENDAR_SYNTAX_CRON};
        struct cron_parser cp = {text, text, ret_error};
        bool star[5];
        enum calendar_field_id bad;

        *ret_error = (struct calendar_error){0};
        while (is_space(*cp.p))
                cp.p++;
        if (*cp.p == '@') {
                const char *expansion = cron_macro(cp.p);
                if (!expansion)
                        return fail_at(&cp, cp.p, CALENDAR_E_SYNTAX);
                int r = calendar_parse_cron(expansion, ret, ret_error);
                ret_error->offset = 0;
                return r;
        }
        for (int f = 0; f < 5; f++) {
                if (*cp.p == '\0')
                        return fail_at(&cp, cp.p, CALENDAR_E_FIELDS);
                int r = parse_cron_field(&cp, &cron_fields[f], &spec);
                if (r < 0)
                        return r;
                star[f] = r;
                while (is_space(*cp.p))
                        cp.p++;
        }
        if (*cp.p != '\0')
                return fail_at(&cp, cp.p, CALENDAR_E_FIELDS);
        spec.usec = (struct calendar_field){.n = 1, .ranges = {{0, -1, 0}}};
        spec.day_or_weekday = !star[2] && !star[4];
        calendar_normalize(&spec);
        /* Every weekday listed: "either" matches every day. */
        if (spec.day_or_weekday && spec.weekdays == 0) {
                spec.day_or_weekday = false;
                spec.day.n = 0;
        }
        if (calendar_validate(&spec, &bad) != CALENDAR_E_NONE)
                return fail_at(&cp, text, CALENDAR_E_RANGE);
        struct calendar_wall found, epoch = {CALENDAR_YEAR_MIN, 1, 1, 0, 0, 0};
        if (calendar_next_wall(&spec, &epoch, CALENDAR_YEAR_MIN + CALENDAR_HORIZON_YEARS, &found) <
            0)
                return fail_at(&cp, text, CALENDAR_E_NEVER);
        *ret = spec;
        return 0;
}
