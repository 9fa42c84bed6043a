/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "print.h"
#include "timespan.h"
#include "timestamp.h"
#include "users.h"
#include "zoneinfo/zoneinfo.h"

/* "Sat 2024-11-30 10:05:00 CET" */
#define TIMESTAMP_MAX 64
/* "213503982d 8h 1min 49s left" */
#define RELATIVE_MAX (TIMESPAN_FORMAT_MAX + 8)
/* Wire names spelled for people: "after_completion" → "after-completion". */
#define WORD_MAX 32

#define ELEMENTSOF(a) (sizeof(a) / sizeof((a)[0]))

static const char *human_word(const char *wire, char buf[static WORD_MAX])
{
        size_t i;

        if (!wire)
                return "?";
        for (i = 0; wire[i] != 0 && i < WORD_MAX - 1; i++)
                buf[i] = wire[i] == '_' ? '-' : wire[i];
        buf[i] = 0;
        return buf;
}

static const char *format_timestamp(char buf[static TIMESTAMP_MAX], const struct clocks *now,
                                    enum timerd_clock clock, uint64_t usec)
{
        uint64_t wall;
        struct tm tm;
        time_t seconds;

        if (!clocks_to_realtime(now, clock, usec, &wall))
                return "-";
        seconds = (time_t)(wall / USEC_PER_SEC);
        if (!localtime_r(&seconds, &tm) ||
            strftime(buf, TIMESTAMP_MAX, "%a %Y-%m-%d %H:%M:%S %Z", &tm) == 0)
                return "-";
        return buf;
}

/* The zone of the calendar timers printed last: one load per zone while they share it. */
struct zone_cache {
        char name[TIMERD_TIMEZONE_MAX];
        struct tz_zone *zone; /* NULL: UTC, or a zone that cannot be read */
        bool loaded;
};

static const struct tz_zone *zone_cache_get(struct zone_cache *c, const char *name, bool *ret_ok)
{
        if (!c->loaded || strcmp(c->name, name) != 0) {
                tz_zone_free(c->zone);
                snprintf(c->name, sizeof(c->name), "%s", name);
                c->loaded = zoneinfo_load(name, &c->zone, NULL) >= 0;
                if (!c->loaded)
                        c->zone = NULL;
        }
        *ret_ok = c->loaded;
        return c->zone;
}

static void zone_cache_done(struct zone_cache *c)
{
        tz_zone_free(c->zone);
}

/* A calendar timer's times read in its zone ("Mon 2024-04-01 03:00:00 +02:00"); the others' (and
 * a zone this host cannot read) as format_timestamp(). */
static const char *format_timer_time(char buf[static TIMESTAMP_MAX], const struct clocks *now,
                                     const struct timerd_timer *timer, struct zone_cache *zones,
                                     uint64_t usec)
{
        enum timerd_clock clock = timer->declaration.clock;
        const struct tz_zone *zone;
        uint64_t wall;
        bool ok;

        if (timer->declaration.policy != TIMERD_POLICY_CALENDAR || !timer->declaration.timezone[0])
                return format_timestamp(buf, now, clock, usec);
        zone = zone_cache_get(zones, timer->declaration.timezone, &ok);
        if (!ok || !clocks_to_realtime(now, clock, usec, &wall) || wall > INT64_MAX)
                return format_timestamp(buf, now, clock, usec);
        return timestamp_format_zoned(buf, zone, !zone, (int64_t)wall);
}

/* "4min 12s left" for a time ahead of now, "3s ago" for one behind. */
static const char *format_relative(char buf[static RELATIVE_MAX], const struct clocks *now,
                                   enum timerd_clock clock, uint64_t usec)
{
        uint64_t clock_now = clocks_now(now, clock);
        char span[TIMESPAN_FORMAT_MAX];

        if (usec > clock_now)
                snprintf(buf, RELATIVE_MAX, "%s left",
                         timespan_format(span, usec - clock_now, USEC_PER_SEC));
        else
                snprintf(buf, RELATIVE_MAX, "%s ago",
                         timespan_format(span, clock_now - usec, USEC_PER_SEC));
        return buf;
}

const char *format_run_result(char buf[static RUN_RESULT_MAX], const struct timerd_timer *timer)
{
        const struct timerd_run_result *result = &timer->last_result;
        const char *signal = result->code ? sigabbrev_np((int)result->code) : NULL;
        char word[WORD_MAX];

        switch (result->exit) {
        case TIMERD_EXIT_EXITED:
                snprintf(buf, RUN_RESULT_MAX, "exit %" PRIu32, result->code);
                return buf;
        case TIMERD_EXIT_SIGNALED:
                if (signal)
                        snprintf(buf, RUN_RESULT_MAX, "signal %s", signal);
                else
                        snprintf(buf, RUN_RESULT_MAX, "signal %" PRIu32, result->code);
                return buf;
        case TIMERD_EXIT_TIMED_OUT:
        case TIMERD_EXIT_INTERRUPTED:
                /* The signal that ended it, when one did. */
                snprintf(buf, RUN_RESULT_MAX, "%s%s%s%s",
                         result->exit == TIMERD_EXIT_TIMED_OUT ? "timeout" : "interrupted",
                         signal && result->code ? " (" : "", signal && result->code ? signal : "",
                         signal && result->code ? ")" : "");
                return buf;
        default:
                break;
        }
        if (timer->last_outcome == TIMERD_OUTCOME_NONE)
                return "-";
        snprintf(buf, RUN_RESULT_MAX, "%s",
                 human_word(timerd_outcome_to_string(timer->last_outcome), word));
        return buf;
}

enum column {
        COLUMN_NEXT,
        COLUMN_LEFT,
        COLUMN_LAST,
        COLUMN_PASSED,
        COLUMN_LAST_RESULT,
        COLUMN_OWNER,
        COLUMN_NAME,
        COLUMN_POLICY,
        COLUMN_CLOCK,
        COLUMN_STATE,
        COLUMN_MAX,
};

static const char *const column_titles[COLUMN_MAX] = {
    [COLUMN_NEXT] = "NEXT",
    [COLUMN_LEFT] = "LEFT",
    [COLUMN_LAST] = "LAST",
    [COLUMN_PASSED] = "PASSED",
    [COLUMN_LAST_RESULT] = "LAST-RESULT",
    [COLUMN_OWNER] = "OWNER",
    [COLUMN_NAME] = "NAME",
    [COLUMN_POLICY] = "POLICY",
    [COLUMN_CLOCK] = "CLOCK",
    [COLUMN_STATE] = "STATE",
};

/* Left out, in this order, when the table is wider than the terminal. */
static const enum column droppable_columns[] = {COLUMN_LAST, COLUMN_PASSED, COLUMN_LAST_RESULT,
                                                COLUMN_CLOCK, COLUMN_POLICY};

/* NAME gives way down to this before any column is dropped, and down to the other after. */
#define NAME_WIDTH_COMFORTABLE 16
#define NAME_WIDTH_MIN         8
#define ELLIPSIS               "..."

#define ANSI_UNDERLINE "\033[4m"
#define ANSI_RED       "\033[1;31m"
#define ANSI_GREEN     "\033[32m"
#define ANSI_RESET     "\033[0m"

struct row {
        bool has_next_wall;
        uint64_t next_wall; /* the sort key */
        const char *name;
        uint32_t owner;
        enum timerd_state state;
        const char *cells[COLUMN_MAX];
        char next[TIMESTAMP_MAX], left[RELATIVE_MAX], last[TIMESTAMP_MAX], passed[RELATIVE_MAX];
        char owner_name[USER_NAME_MAX], policy[WORD_MAX], clock[WORD_MAX], state_word[WORD_MAX];
        char last_result[RUN_RESULT_MAX];
};

/*
 * The OWNER cell, only when the column is shown: a user database lookup per row would cost much
 * with many timers, so the name of the row before is reused while the owner stays the same (the
 * service lists every owner's timers by owner).
 */
static void row_fill_owner(struct row *row, const struct row *before, bool owners)
{
        if (!owners)
                row->owner_name[0] = 0;
        else if (before && before->owner == row->owner)
                memcpy(row->owner_name, before->owner_name, sizeof(row->owner_name));
        else
                user_name(row->owner, row->owner_name);
        row->cells[COLUMN_OWNER] = row->owner_name;
}

static void row_fill(struct row *row, const struct timerd_timer *timer, const struct clocks *now,
                     struct zone_cache *zones)
{
        enum timerd_clock clock = timer->declaration.clock;
        const char **cells = row->cells;

        row->name = timer->name;
        row->state = timer->state;
        row->has_next_wall =
            timer->has_next && clocks_to_realtime(now, clock, timer->next_usec, &row->next_wall);

        cells[COLUMN_NEXT] = timer->has_next
                                 ? format_timer_time(row->next, now, timer, zones, timer->next_usec)
                                 : "-";
        cells[COLUMN_LEFT] =
            timer->has_next ? format_relative(row->left, now, clock, timer->next_usec) : "-";
        cells[COLUMN_LAST] = timer->has_last_start
                                 ? format_timestamp(row->last, now, clock, timer->last_start_usec)
                                 : "-";
        cells[COLUMN_PASSED] =
            timer->has_last_start ? format_relative(row->passed, now, clock, timer->last_start_usec)
                                  : "-";
        cells[COLUMN_LAST_RESULT] = format_run_result(row->last_result, timer);
        row->owner = timer->owner;
        cells[COLUMN_NAME] = timer->name;
        cells[COLUMN_POLICY] =
            human_word(timerd_policy_to_string(timer->declaration.policy), row->policy);
        cells[COLUMN_CLOCK] = human_word(timerd_clock_to_string(clock), row->clock);
        cells[COLUMN_STATE] = human_word(timerd_state_to_string(timer->state), row->state_word);
}

/* Soonest first, timers with nothing due last, ties by owner and name: like systemctl
 * list-timers. */
static int row_compare(const void *a, const void *b)
{
        const struct row *x = *(const struct row *const *)a, *y = *(const struct row *const *)b;
        int r;

        if (x->has_next_wall != y->has_next_wall)
                return x->has_next_wall ? -1 : 1;
        if (x->has_next_wall && x->next_wall != y->next_wall)
                return x->next_wall < y->next_wall ? -1 : 1;
        r = strcmp(x->name, y->name);
        if (r != 0 || x->owner == y->owner)
                return r;
        return x->owner < y->owner ? -1 : 1;
}

struct layout {
        bool shown[COLUMN_MAX];
        size_t widths[COLUMN_MAX];
};

static size_t layout_width(const struct layout *l)
{
        size_t total = 0, n = 0;

        for (size_t c = 0; c < COLUMN_MAX; c++)
                if (l->shown[c]) {
                        total += l->widths[c];
                        n++;
                }
        return n > 0 ? total + 2 * (n - 1) : 0;
}

static void shrink_name(struct layout *l, size_t width, size_t name_min)
{
        size_t total = layout_width(l);

        if (total <= width || l->widths[COLUMN_NAME] <= name_min)
                return;
        l->widths[COLUMN_NAME] -= total - width < l->widths[COLUMN_NAME] - name_min
                                      ? total - width
                                      : l->widths[COLUMN_NAME] - name_min;
}

/* Fit the terminal: NAME gives way first, then whole columns. */
static void layout_fit(struct layout *l, size_t width)
{
        if (width == 0)
                return;
        shrink_name(l, width, NAME_WIDTH_COMFORTABLE);
        for (size_t i = 0; i < ELEMENTSOF(droppable_columns) && layout_width(l) > width; i++)
                l->shown[droppable_columns[i]] = false;
        shrink_name(l, width, NAME_WIDTH_MIN);
}

static const char *state_color(enum timerd_state state)
{
        switch (state) {
        case TIMERD_STATE_FAILED:
                return ANSI_RED;
        case TIMERD_STATE_RUNNING:
                return ANSI_GREEN;
        default:
                return NULL;
        }
}

/* One cell, cut with an ellipsis when wider than its column, padded unless it is the last. */
static void print_cell(FILE *f, const char *text, size_t width, bool last, const char *color)
{
        size_t len = strlen(text);

        if (color)
                fputs(color, f);
        if (len > width && width > strlen(ELLIPSIS)) {
                fprintf(f, "%.*s" ELLIPSIS, (int)(width - strlen(ELLIPSIS)), text);
                len = width;
        } else
                fputs(text, f);
        if (color)
                fputs(ANSI_RESET, f);
        if (!last)
                fprintf(f, "%*s", (int)(width - (len < width ? len : width) + 2), "");
}

static void print_row(FILE *f, const char *const cells[COLUMN_MAX], const struct layout *l,
                      const char *row_color, const char *state_colour)
{
        size_t last = 0;

        for (size_t c = 0; c < COLUMN_MAX; c++)
                if (l->shown[c])
                        last = c;
        for (size_t c = 0; c < COLUMN_MAX; c++)
                if (l->shown[c])
                        print_cell(f, cells[c], l->widths[c], c == last,
                                   c == COLUMN_STATE && state_colour ? state_colour : row_color);
        fputc('\n', f);
}

int print_timer_table(FILE *f, const struct timerd_timer *timers, size_t n,
                      const struct clocks *now, const struct table_style *style)
{
        struct zone_cache zones = {};
        struct layout layout = {};
        struct row *rows, **order;

        if (n == 0) {
                if (style->legend)
                        fprintf(f, "0 timers listed.\n");
                return 0;
        }
        rows = calloc(n, sizeof(*rows));
        order = calloc(n, sizeof(*order));
        if (!rows || !order) {
                free(rows);
                free(order);
                return -ENOMEM;
        }

        for (size_t c = 0; c < COLUMN_MAX; c++) {
                layout.shown[c] = c != COLUMN_OWNER || style->owners;
                layout.widths[c] = style->legend ? strlen(column_titles[c]) : 0;
        }
        for (size_t i = 0; i < n; i++) {
                row_fill(&rows[i], &timers[i], now, &zones);
                row_fill_owner(&rows[i], i > 0 ? &rows[i - 1] : NULL, style->owners);
                order[i] = &rows[i];
                for (size_t c = 0; c < COLUMN_MAX; c++) {
                        size_t len = strlen(rows[i].cells[c]);

                        if (len > layout.widths[c])
                                layout.widths[c] = len;
                }
        }
        zone_cache_done(&zones);
        layout_fit(&layout, style->width);
        /* Sorting pointers: a row's cells point into the row itself. */
        qsort(order, n, sizeof(*order), row_compare);

        if (style->legend)
                print_row(f, column_titles, &layout, style->color ? ANSI_UNDERLINE : NULL, NULL);
        for (size_t i = 0; i < n; i++)
                print_row(f, order[i]->cells, &layout, NULL,
                          style->color ? state_color(order[i]->state) : NULL);
        if (style->legend)
                fprintf(f, "\n%zu %s listed.\n", n, n == 1 ? "timer" : "timers");

        free(order);
        free(rows);
        return 0;
}

#define LABEL_WIDTH 18

static void print_field(FILE *f, const char *label, const char *value)
{
        fprintf(f, "%*s: %s\n", LABEL_WIDTH, label, value);
}

static void print_u64_field(FILE *f, const char *label, uint64_t value)
{
        fprintf(f, "%*s: %" PRIu64 "\n", LABEL_WIDTH, label, value);
}

static void print_span_field(FILE *f, const char *label, uint64_t usec)
{
        char span[TIMESPAN_FORMAT_MAX];

        print_field(f, label, timespan_format(span, usec, 1));
}

/* "Sat 2024-11-30 10:05:00 UTC (4min 12s left)" */
static void print_time_field(FILE *f, const char *label, const struct clocks *now,
                             enum timerd_clock clock, bool has, uint64_t usec)
{
        char timestamp[TIMESTAMP_MAX], relative[RELATIVE_MAX];

        if (!has) {
                print_field(f, label, "-");
                return;
        }
        fprintf(f, "%*s: %s (%s)\n", LABEL_WIDTH, label,
                format_timestamp(timestamp, now, clock, usec),
                format_relative(relative, now, clock, usec));
}

void print_next(FILE *f, enum timerd_clock clock, uint64_t usec, const struct clocks *now)
{
        char timestamp[TIMESTAMP_MAX], relative[RELATIVE_MAX];

        fprintf(f, "Next: %s (%s)\n", format_timestamp(timestamp, now, clock, usec),
                format_relative(relative, now, clock, usec));
}

/* "signal SIGUSR1"; 0 is the service's default, SIGALRM. */
static void print_signal(FILE *f, int signal)
{
        const char *name = sigabbrev_np(signal > 0 ? signal : SIGALRM);

        if (name)
                fprintf(f, "%*s: signal SIG%s\n", LABEL_WIDTH, "Delivery", name);
        else
                fprintf(f, "%*s: signal %d\n", LABEL_WIDTH, "Delivery", signal);
}

static void print_declaration(FILE *f, const struct timerd_declaration *d)
{
        char word[WORD_MAX], span[TIMESPAN_FORMAT_MAX];

        if (d->policy == TIMERD_POLICY_ONCE || d->policy == TIMERD_POLICY_CALENDAR)
                print_field(f, "Policy", human_word(timerd_policy_to_string(d->policy), word));
        else
                fprintf(f, "%*s: %s, every %s\n", LABEL_WIDTH, "Policy",
                        human_word(timerd_policy_to_string(d->policy), word),
                        timespan_format(span, d->cadence_usec, 1));
        print_field(f, "Clock", human_word(timerd_clock_to_string(d->clock), word));
        print_field(f, "Lifetime", human_word(timerd_lifetime_to_string(d->lifetime), word));
        if (d->delivery == TIMERD_DELIVERY_SIGNAL)
                print_signal(f, d->signal);
        else
                print_field(f, "Delivery",
                            human_word(timerd_delivery_to_string(d->delivery), word));
        print_span_field(f, "Accuracy", d->accuracy_usec);
        print_field(f, "Catch-up", d->catch_up ? "yes" : "no");
        print_span_field(f, "Randomized delay", d->randomized_delay_usec);
        print_span_field(f, "Handover", d->handover_usec);
        if (d->policy == TIMERD_POLICY_CALENDAR) {
                print_field(f, "Time zone", d->timezone[0] ? d->timezone : "local");
                print_field(f, "Fixed delay", d->fixed_random_delay ? "yes" : "no");
        }
}

/* The schedule in normalized form, a line each, and the next elapse in the timer's zone. */
static void print_calendar(FILE *f, const struct timerd_timer *timer, const struct clocks *now)
{
        char timestamp[TIMESTAMP_MAX], relative[RELATIVE_MAX];
        const char *p = timer->calendar_normalized;
        struct zone_cache zones = {};
        enum timerd_clock clock = timer->declaration.clock;
        bool first = true;

        do {
                size_t l = strcspn(p, "\n");

                fprintf(f, "%*s%s %.*s\n", LABEL_WIDTH, first ? "Calendar" : "", first ? ":" : " ",
                        (int)l, p);
                p += l + (p[l] == '\n');
                first = false;
        } while (*p);
        if (!timer->has_next)
                print_field(f, "Next", "-");
        else
                fprintf(f, "%*s: %s (%s)\n", LABEL_WIDTH, "Next",
                        format_timer_time(timestamp, now, timer, &zones, timer->next_usec),
                        format_relative(relative, now, clock, timer->next_usec));
        zone_cache_done(&zones);
}

void print_timer(FILE *f, const struct timerd_timer *timer, const struct clocks *now)
{
        enum timerd_clock clock = timer->declaration.clock;
        char word[WORD_MAX], failure[WORD_MAX], result[RUN_RESULT_MAX];

        fprintf(f, "%s\n", timer->name);
        print_u64_field(f, "Owner", timer->owner);
        print_declaration(f, &timer->declaration);
        print_u64_field(f, "Generation", timer->generation);
        if (timer->state == TIMERD_STATE_FAILED)
                fprintf(f, "%*s: failed (%s)\n", LABEL_WIDTH, "State",
                        human_word(timerd_failure_to_string(timer->failure), failure));
        else
                print_field(f, "State", human_word(timerd_state_to_string(timer->state), word));
        if (timer->declaration.policy == TIMERD_POLICY_CALENDAR)
                print_calendar(f, timer, now);
        else
                print_time_field(f, "Next", now, clock, timer->has_next, timer->next_usec);
        fprintf(f, "%*s: %" PRIu64 "%s\n", LABEL_WIDTH, "Run", timer->run,
                timer->run_active ? " (active)" : "");
        print_field(f, "Pending", timer->pending ? "yes" : "no");
        print_u64_field(f, "Runs", timer->runs);
        print_u64_field(f, "Failures in a row", timer->consecutive_expected_failures);
        print_u64_field(f, "Overruns", timer->overruns);
        /* Only where a reschedule moved it off the declaration. */
        if (timer->live_cadence_usec != timer->declaration.cadence_usec)
                print_span_field(f, "Live cadence", timer->live_cadence_usec);
        print_time_field(f, "Last start", now, clock, timer->has_last_start,
                         timer->last_start_usec);
        print_field(f, "Last run",
                    !timer->has_last_start ? "-"
                    : timer->last_catch_up ? "catch-up (due while the service was down)"
                                           : "on schedule");
        print_time_field(f, "Last finish", now, clock, timer->has_last_finish,
                         timer->last_finish_usec);
        print_field(f, "Last outcome",
                    timer->last_outcome == TIMERD_OUTCOME_NONE
                        ? "-"
                        : human_word(timerd_outcome_to_string(timer->last_outcome), word));
        print_field(f, "Last result", format_run_result(result, timer));
        print_span_field(f, "Last duration", timer->last_duration_usec);
        print_span_field(f, "Total duration", timer->total_duration_usec);
}

/* "p50 1ms, p99 2ms, max 3ms (150 samples"; no p99 below 100 samples. The caller closes it. */
static void print_delays(FILE *f, const char *label, uint64_t samples, uint64_t p50_usec,
                         bool has_p99, uint64_t p99_usec, uint64_t max_usec)
{
        char p50[TIMESPAN_FORMAT_MAX], p99[TIMESPAN_FORMAT_MAX], max[TIMESPAN_FORMAT_MAX];

        if (samples == 0) {
                fprintf(f, "%*s: - (0 samples", LABEL_WIDTH, label);
                return;
        }
        fprintf(f, "%*s: p50 %s", LABEL_WIDTH, label, timespan_format(p50, p50_usec, 1));
        if (has_p99)
                fprintf(f, ", p99 %s", timespan_format(p99, p99_usec, 1));
        fprintf(f, ", max %s (%" PRIu64 " samples", timespan_format(max, max_usec, 1), samples);
}

static void print_lateness(FILE *f, const struct timerd_status *s)
{
        print_delays(f, "Lateness", s->lateness_samples, s->lateness_p50_usec, s->has_lateness_p99,
                     s->lateness_p99_usec, s->lateness_max_usec);
        fprintf(f, ", %" PRIu64 " past due when scheduled, not measured)\n", s->lateness_past_due);
        print_delays(f, "Loop lag", s->loop_lag_samples, s->loop_lag_p50_usec, s->has_loop_lag_p99,
                     s->loop_lag_p99_usec, s->loop_lag_max_usec);
        fputs(")\n", f);
}

void print_status(FILE *f, const struct timerd_status *s)
{
        char span[TIMESPAN_FORMAT_MAX];

        print_field(f, "Version", s->version);
        print_u64_field(f, "PID", s->pid);
        print_field(f, "Epoch", s->epoch);
        if (s->backend_reason[0] != 0)
                fprintf(f, "%*s: %s (%s)\n", LABEL_WIDTH, "Backend", s->backend, s->backend_reason);
        else
                print_field(f, "Backend", s->backend);
        print_field(f, "Store", s->store);
        print_field(f, "Uptime", timespan_format(span, s->uptime_usec, USEC_PER_SEC));
        fprintf(f,
                "%*s: %" PRIu64 " (%" PRIu64 " scheduled, %" PRIu64 " running, %" PRIu64
                " failed, %" PRIu64 " pending)\n",
                LABEL_WIDTH, "Timers", s->timers, s->scheduled, s->running, s->failed, s->pending);
        fprintf(f, "%*s: %" PRIu64 " (%" PRIu64 " waiting)\n", LABEL_WIDTH, "Connections",
                s->connections, s->waiters);
        print_u64_field(f, "Clock changes", s->clock_changes);
        /* Another user than root is told its own counts and none of the activity. */
        if (!s->host_wide) {
                print_field(f, "Scope", "your own timers and connections");
                if (s->capabilities[0] != 0)
                        print_field(f, "Capabilities", s->capabilities);
                return;
        }
        fprintf(f, "%*s: %" PRIu64 " (%" PRIu64 " wake-ups)\n", LABEL_WIDTH, "Iterations",
                s->iterations, s->wakeups);
        fprintf(f, "%*s: %" PRIu64 " (%" PRIu64 " overruns, %" PRIu64 " stale expiries)\n",
                LABEL_WIDTH, "Firings", s->firings, s->overruns, s->stale_expiries);
        fprintf(f, "%*s: %" PRIu64 " sent, %" PRIu64 " failed\n", LABEL_WIDTH, "Signals",
                s->signals_sent, s->signals_failed);
        print_span_field(f, "Slowest iteration", s->slowest_iteration_usec);
        print_lateness(f, s);
        if (s->capabilities[0] != 0)
                print_field(f, "Capabilities", s->capabilities);
}

void print_firing(FILE *f, const struct timerd_firing *firing, const struct clocks *now)
{
        char fired[TIMESTAMP_MAX], late[TIMESPAN_FORMAT_MAX];

        fprintf(f, "%s: run %" PRIu64 " fired %s, ", firing->token.name, firing->token.run,
                format_timestamp(fired, now, firing->clock, firing->fired_usec));
        /* A handover fires early; the wait returned it at the deadline all the same. */
        if (firing->fired_usec < firing->deadline_usec)
                fprintf(f, "%s early (handover)",
                        timespan_format(late, firing->deadline_usec - firing->fired_usec, 1));
        else
                fprintf(f, "%s late",
                        timespan_format(late, firing->fired_usec - firing->deadline_usec, 1));
        if (firing->overruns > 0)
                fprintf(f, ", %" PRIu64 " overruns", firing->overruns);
        if (firing->catch_up)
                fputs(", catch-up (due while the service was down)", f);
        fputc('\n', f);
}

void print_event(FILE *f, const struct timerd_event *e, bool owners)
{
        char timestamp[TIMESTAMP_MAX], word[WORD_MAX];
        const struct clocks wall = {.realtime_usec = e->realtime_usec};

        fprintf(f, "%s  %-12s  ",
                format_timestamp(timestamp, &wall, TIMERD_CLOCK_REALTIME, e->realtime_usec),
                timerd_event_kind_to_string(e->kind));
        if (owners)
                fprintf(f, "%" PRIu32 "/", e->owner);
        fputs(e->name, f);
        if (e->has_run)
                fprintf(f, " run %" PRIu64, e->run);
        if (e->has_state)
                fprintf(f, " (%s)", human_word(timerd_state_to_string(e->state), word));
        fputc('\n', f);
}
