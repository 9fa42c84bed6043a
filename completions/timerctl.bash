# bash completion for timerctl                                       -*- shell-script -*-
# SPDX-License-Identifier: LGPL-2.1-or-later

# The caller's timers (or --user's), asked of the service the command line names (its --socket,
# if any).
# Names never need quoting in JSON: they are [A-Za-z0-9._:@-]+.
__timerctl_timers()
{
        "$@" list --json=short 2>/dev/null | grep -o '"name":"[^"]*"' | cut -d'"' -f4
}

# The IANA zone names: every file under the zoneinfo directory whose name could be a zone
# (capitalized, no dot: not zone.tab, tzdata.zi, leapseconds, posixrules, localtime), except the
# posix/ and right/ copies.
__timerctl_zones()
{
        local dir=${TZDIR:-/usr/share/zoneinfo}
        (cd "$dir" 2>/dev/null && find . \( -path ./posix -o -path ./right \) -prune -o \
                \( -type f -o -type l \) -print) | sed -n 's|^\./||; /^[A-Z][A-Za-z0-9_+\/-]*$/p'
}

__timerctl_reply()
{
        mapfile -t COMPREPLY < <(compgen -W "$1" -- "$2")
}

_timerctl()
{
        local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
        local verbs="list show status add reconcile schedule reschedule cancel kick remove wait sleep monitor calendar run advance now"
        local global="--socket --json --json=short --json=pretty --json=off --no-pager --help --version"
        local declaring="--once --every --watchdog --interval --retained --transient --clock --delivery --accuracy --no-catch-up --randomized-delay --handover --in --at --calendar --cron --timezone --fixed-random-delay"
        local with_argument=" --socket -U --user --every --watchdog --interval --clock --accuracy --delivery --randomized-delay --handover --calendar --in --at --desired --cadence -p --property -n --count --timeout --alarm --iterations --base-time --timezone --grace --max-failures "
        local properties="owner name policy cadence_usec clock lifetime delivery accuracy_usec signal catch_up randomized_delay_usec handover_usec generation state failure next_usec remaining_usec run run_active pending runs consecutive_expected_failures overruns live_cadence_usec last_start_usec last_finish_usec last_outcome last_duration_usec total_duration_usec last_exit last_exit_code"
        local -A verb_options=(
                [list]="-a --all --no-legend -U --user"
                [show]="-p --property --value -U --user"
                [status]=""
                [add]="$declaring -U --user"
                [reconcile]="$declaring --desired -U --user"
                [schedule]="--in --at -U --user"
                [reschedule]="--in --at --cadence -U --user"
                [cancel]="-U --user"
                [kick]="-U --user"
                [remove]="-U --user"
                [wait]="-n --count --timeout -U --user"
                [sleep]="--clock --alarm --resume"
                [monitor]="-a --all -n --count"
                [calendar]="--iterations --base-time --timezone --cron"
                [run]="$declaring --timeout --grace --max-failures --failure-is-expected --shell --journal"
                [advance]=""
                [now]=""
        )
        local command=("${COMP_WORDS[0]}") verb="" word i

        # The verb is the first word that is neither an option nor an option's argument.
        # Readline splits "--clock=boottime" into "--clock", "=", "boottime".
        for ((i = 1; i < COMP_CWORD; i++)); do
                word=${COMP_WORDS[i]}
                # run's command: a program first, then its arguments.
                if [[ $word == "--" ]]; then
                        if ((i + 1 == COMP_CWORD)); then
                                mapfile -t COMPREPLY < <(compgen -c -- "$cur")
                        else
                                mapfile -t COMPREPLY < <(compgen -f -- "$cur")
                        fi
                        return
                fi
                if [[ $word == -* && ${COMP_WORDS[i + 1]} == "=" ]]; then
                        [[ " --socket --user " == *" $word "* ]] && command+=("$word" "${COMP_WORDS[i + 2]}")
                        ((i += 2))
                elif [[ $word == -* ]]; then
                        [[ " --socket -U --user " == *" $word "* ]] && command+=("$word" "${COMP_WORDS[i + 1]}")
                        [[ $with_argument == *" $word "* ]] && ((i++))
                elif [[ -z $verb ]]; then
                        verb=$word
                fi
        done

        # The option whose value is being typed, if any.
        local option=$prev equals=false
        if [[ $prev == "=" ]]; then
                option=${COMP_WORDS[COMP_CWORD - 2]}
                equals=true
        elif [[ $cur == "=" ]]; then
                cur=""
                equals=true
        fi
        case $option in
        --socket)
                mapfile -t COMPREPLY < <(compgen -f -- "$cur")
                return
                ;;
        --json)
                if $equals; then
                        __timerctl_reply "short pretty off" "$cur"
                        return
                fi
                ;;
        -U | --user)
                mapfile -t COMPREPLY < <(compgen -u -- "$cur")
                return
                ;;
        --clock)
                __timerctl_reply "monotonic boottime realtime boottime-alarm realtime-alarm" "$cur"
                return
                ;;
        --delivery)
                __timerctl_reply "notify alarm signal" "$cur"
                return
                ;;
        --desired)
                __timerctl_reply "inactive scheduled exact" "$cur"
                return
                ;;
        --timezone)
                __timerctl_reply "$(__timerctl_zones)" "$cur"
                return
                ;;
        -p | --property)
                __timerctl_reply "$properties" "$cur"
                return
                ;;
        --every | --watchdog | --interval | --accuracy | --randomized-delay | --handover | --in | \
                --calendar | --at | --cadence | --timeout | --alarm | -n | --count | --iterations | --base-time | \
                --grace | --max-failures)
                return # a span, a time or a number: nothing to offer
                ;;
        esac

        if [[ $cur == -* ]]; then
                __timerctl_reply "$global ${verb_options[${verb:-list}]}" "$cur"
        elif [[ -z $verb ]]; then
                __timerctl_reply "$verbs" "$cur"
        elif [[ " show schedule reschedule cancel kick remove wait run " == *" $verb "* ]]; then
                __timerctl_reply "$(__timerctl_timers "${command[@]}")" "$cur"
        fi
}

complete -F _timerctl timerctl
