/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>

#include "property.h"

enum property {
        PROPERTY_OWNER,
        PROPERTY_NAME,
        PROPERTY_POLICY,
        PROPERTY_CADENCE_USEC,
        PROPERTY_CLOCK,
        PROPERTY_LIFETIME,
        PROPERTY_DELIVERY,
        PROPERTY_ACCURACY_USEC,
        PROPERTY_SIGNAL,
        PROPERTY_CATCH_UP,
        PROPERTY_RANDOMIZED_DELAY_USEC,
        PROPERTY_HANDOVER_USEC,
        PROPERTY_GENERATION,
        PROPERTY_STATE,
        PROPERTY_FAILURE,
        PROPERTY_NEXT_USEC,
        PROPERTY_REMAINING_USEC,
        PROPERTY_RUN,
        PROPERTY_RUN_ACTIVE,
        PROPERTY_PENDING,
        PROPERTY_RUNS,
        PROPERTY_CONSECUTIVE_EXPECTED_FAILURES,
        PROPERTY_OVERRUNS,
        PROPERTY_LIVE_CADENCE_USEC,
        PROPERTY_LAST_START_USEC,
        PROPERTY_LAST_FINISH_USEC,
        PROPERTY_LAST_OUTCOME,
        PROPERTY_LAST_DURATION_USEC,
        PROPERTY_TOTAL_DURATION_USEC,
        PROPERTY_LAST_EXIT,
        PROPERTY_LAST_EXIT_CODE,
        PROPERTY_MAX,
        PROPERTY_INVALID = -1,
};

static const char *const property_table[PROPERTY_MAX] = {
    [PROPERTY_OWNER] = "owner",
    [PROPERTY_NAME] = "name",
    [PROPERTY_POLICY] = "policy",
    [PROPERTY_CADENCE_USEC] = "cadence_usec",
    [PROPERTY_CLOCK] = "clock",
    [PROPERTY_LIFETIME] = "lifetime",
    [PROPERTY_DELIVERY] = "delivery",
    [PROPERTY_ACCURACY_USEC] = "accuracy_usec",
    [PROPERTY_SIGNAL] = "signal",
    [PROPERTY_CATCH_UP] = "catch_up",
    [PROPERTY_RANDOMIZED_DELAY_USEC] = "randomized_delay_usec",
    [PROPERTY_HANDOVER_USEC] = "handover_usec",
    [PROPERTY_GENERATION] = "generation",
    [PROPERTY_STATE] = "state",
    [PROPERTY_FAILURE] = "failure",
    [PROPERTY_NEXT_USEC] = "next_usec",
    [PROPERTY_REMAINING_USEC] = "remaining_usec",
    [PROPERTY_RUN] = "run",
    [PROPERTY_RUN_ACTIVE] = "run_active",
    [PROPERTY_PENDING] = "pending",
    [PROPERTY_RUNS] = "runs",
    [PROPERTY_CONSECUTIVE_EXPECTED_FAILURES] = "consecutive_expected_failures",
    [PROPERTY_OVERRUNS] = "overruns",
    [PROPERTY_LIVE_CADENCE_USEC] = "live_cadence_usec",
    [PROPERTY_LAST_START_USEC] = "last_start_usec",
    [PROPERTY_LAST_FINISH_USEC] = "last_finish_usec",
    [PROPERTY_LAST_OUTCOME] = "last_outcome",
    [PROPERTY_LAST_DURATION_USEC] = "last_duration_usec",
    [PROPERTY_TOTAL_DURATION_USEC] = "total_duration_usec",
    [PROPERTY_LAST_EXIT] = "last_exit",
    [PROPERTY_LAST_EXIT_CODE] = "last_exit_code",
};

static enum property property_from_string(const char *name)
{
        for (int i = 0; i < PROPERTY_MAX; i++)
                if (strcmp(property_table[i], name) == 0)
                        return (enum property)i;
        return PROPERTY_INVALID;
}

bool property_known(const char *name)
{
        return property_from_string(name) != PROPERTY_INVALID;
}

void property_print_names(FILE *f)
{
        for (int i = 0; i < PROPERTY_MAX; i++)
                fprintf(f, "%s%s", i > 0 ? ", " : "", property_table[i]);
}

static void print_u64(FILE *f, bool present, uint64_t value)
{
        if (present)
                fprintf(f, "%" PRIu64, value);
}

static void print_string(FILE *f, const char *value)
{
        if (value)
                fputs(value, f);
}

/* What the timer was declared with: PROPERTY_OWNER to PROPERTY_HANDOVER_USEC. */
static void print_declared(FILE *f, const struct timerd_timer *t, enum property p)
{
        const struct timerd_declaration *d = &t->declaration;

        switch (p) {
        case PROPERTY_OWNER:
                print_u64(f, true, t->owner);
                break;
        case PROPERTY_NAME:
                print_string(f, t->name);
                break;
        case PROPERTY_POLICY:
                print_string(f, timerd_policy_to_string(d->policy));
                break;
        case PROPERTY_CADENCE_USEC:
                print_u64(f, true, d->cadence_usec);
                break;
        case PROPERTY_CLOCK:
                print_string(f, timerd_clock_to_string(d->clock));
                break;
        case PROPERTY_LIFETIME:
                print_string(f, timerd_lifetime_to_string(d->lifetime));
                break;
        case PROPERTY_DELIVERY:
                print_string(f, timerd_delivery_to_string(d->delivery));
                break;
        case PROPERTY_ACCURACY_USEC:
                print_u64(f, true, d->accuracy_usec);
                break;
        case PROPERTY_SIGNAL:
                /* Only signal delivery sends one; SIGALRM unless another was named. */
                print_u64(f, d->delivery == TIMERD_DELIVERY_SIGNAL,
                          (uint64_t)(d->signal > 0 ? d->signal : SIGALRM));
                break;
        case PROPERTY_CATCH_UP:
                print_string(f, d->catch_up ? "yes" : "no");
                break;
        case PROPERTY_RANDOMIZED_DELAY_USEC:
                print_u64(f, true, d->randomized_delay_usec);
                break;
        case PROPERTY_HANDOVER_USEC:
                print_u64(f, true, d->handover_usec);
                break;
        default:
                break;
        }
}

/* What the timer is doing and has done: the properties after PROPERTY_HANDOVER_USEC. */
static void print_live(FILE *f, const struct timerd_timer *t, enum property p)
{
        switch (p) {
        case PROPERTY_GENERATION:
                print_u64(f, true, t->generation);
                break;
        case PROPERTY_STATE:
                print_string(f, timerd_state_to_string(t->state));
                break;
        case PROPERTY_FAILURE:
                print_string(f, t->failure == TIMERD_FAILURE_NONE
                                    ? NULL
                                    : timerd_failure_to_string(t->failure));
                break;
        case PROPERTY_NEXT_USEC:
                print_u64(f, t->has_next, t->next_usec);
                break;
        case PROPERTY_REMAINING_USEC:
                print_u64(f, t->has_next, t->remaining_usec);
                break;
        case PROPERTY_RUN:
                print_u64(f, true, t->run);
                break;
        case PROPERTY_RUN_ACTIVE:
                print_string(f, t->run_active ? "yes" : "no");
                break;
        case PROPERTY_PENDING:
                print_string(f, t->pending ? "yes" : "no");
                break;
        case PROPERTY_RUNS:
                print_u64(f, true, t->runs);
                break;
        case PROPERTY_CONSECUTIVE_EXPECTED_FAILURES:
                print_u64(f, true, t->consecutive_expected_failures);
                break;
        case PROPERTY_OVERRUNS:
                print_u64(f, true, t->overruns);
                break;
        case PROPERTY_LIVE_CADENCE_USEC:
                print_u64(f, true, t->live_cadence_usec);
                break;
        case PROPERTY_LAST_START_USEC:
                print_u64(f, t->has_last_start, t->last_start_usec);
                break;
        case PROPERTY_LAST_FINISH_USEC:
                print_u64(f, t->has_last_finish, t->last_finish_usec);
                break;
        case PROPERTY_LAST_OUTCOME:
                print_string(f, t->last_outcome == TIMERD_OUTCOME_NONE
                                    ? NULL
                                    : timerd_outcome_to_string(t->last_outcome));
                break;
        case PROPERTY_LAST_DURATION_USEC:
                print_u64(f, true, t->last_duration_usec);
                break;
        case PROPERTY_TOTAL_DURATION_USEC:
                print_u64(f, true, t->total_duration_usec);
                break;
        case PROPERTY_LAST_EXIT:
                print_string(f, t->last_result.exit == TIMERD_EXIT_NONE
                                    ? NULL
                                    : timerd_exit_to_string(t->last_result.exit));
                break;
        case PROPERTY_LAST_EXIT_CODE:
                print_u64(f, t->last_result.exit != TIMERD_EXIT_NONE, t->last_result.code);
                break;
        default:
                break;
        }
}

static void print_value(FILE *f, const struct timerd_timer *t, enum property p)
{
        if (p <= PROPERTY_HANDOVER_USEC)
                print_declared(f, t, p);
        else
                print_live(f, t, p);
}

void property_print(FILE *f, const struct timerd_timer *timer, const char *name, bool value_only)
{
        if (!value_only)
                fprintf(f, "%s=", name);
        print_value(f, timer, property_from_string(name));
        fputc('\n', f);
}
