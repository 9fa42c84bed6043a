#!/bin/bash
# timerctl calendar against systemd-analyze calendar (normalized forms and next elapses in fixed
# zones and base times, away from DST changes: docs/CALENDAR.md lists where the two differ), its
# usage errors, and the completion of zone names.
# Usage: timerctl-calendar.sh TIMERCTL COMPLETION
set -eu
timerctl=$1
completion=$2

dir=$(mktemp -d /tmp/timerctl-calendar.XXXXXX)
trap 'rm -rf "$dir"' EXIT
fail() {
        echo "FAIL: $*" >&2
        exit 1
}
expect_exit() {
        local want=$1 got
        shift
        set +e
        "$@" >"$dir/out" 2>"$dir/err"
        got=$?
        set -e
        [ "$got" -eq "$want" ] || fail "$* exited $got, wanted $want: $(cat "$dir/err")"
}

# "From now" depends on when the test runs, and the zone after a local time is an abbreviation
# (CEST) for systemd, an offset (+02:00) for timerctl: both are left out of the comparison.
comparable() {
        sed -E '/From now:/d; /(Next elapse|Iter\. #[0-9]+):/ s/ [^ ]+$//'
}

expressions=(daily "Mon..Fri 03:00" "*:0/15" "*-*~1 12:00" "Sat,Sun *-*-* 10:30:15" quarterly
        "Mon *-02-29" "2030..2040-01-01" "*:*:0/7.5" "Mon *-*-1..7 09:00 Asia/Tokyo" minutely)
# 2024-01-15 06:40 UTC and 2025-06-15 12:00 UTC: no offset change within the elapses compared.
for zone in UTC Europe/Berlin America/New_York Asia/Kolkata; do
        for base in 1705300800 1749988800; do
                if command -v systemd-analyze >/dev/null; then
                        TZ=$zone systemd-analyze calendar --iterations=5 --base-time="@$base" \
                                "${expressions[@]}" | comparable >"$dir/systemd"
                        "$timerctl" calendar --timezone "$zone" --iterations 5 --base-time "@$base" \
                                "${expressions[@]}" | comparable >"$dir/timerctl"
                        diff -u "$dir/systemd" "$dir/timerctl" >&2 ||
                                fail "timerctl calendar and systemd-analyze calendar differ in $zone from @$base"
                fi
        done
done

# The same, spelled out, so that the check holds without systemd-analyze too.
"$timerctl" calendar --timezone Europe/Berlin --iterations 2 --base-time "@1711800000" \
        "Mon..Fri 03:00" >"$dir/out"
cat >"$dir/want" <<'WANT'
  Original form: Mon..Fri 03:00
Normalized form: Mon..Fri *-*-* 03:00:00
    Next elapse: Mon 2024-04-01 03:00:00 +02:00
       (in UTC): Mon 2024-04-01 01:00:00 UTC
       Iter. #2: Tue 2024-04-02 03:00:00 +02:00
       (in UTC): Tue 2024-04-02 01:00:00 UTC
WANT
grep -v "From now:" "$dir/out" | diff -u "$dir/want" - >&2 || fail "Europe/Berlin preview"
grep -q "From now: .* ago" "$dir/out" || fail "an elapse in 2024 is in the past"
# In a UTC zone there is no second line in UTC, as with systemd-analyze.
"$timerctl" calendar --timezone Etc/UTC --base-time "@1711800000" daily >"$dir/out"
grep -q "Next elapse: Sun 2024-03-31 00:00:00 UTC" "$dir/out" || fail "Etc/UTC: $(cat "$dir/out")"
grep -q "(in UTC)" "$dir/out" && fail "Etc/UTC shows UTC twice"
# The cron form normalizes to its systemd equivalent and elapses on weekdays.
"$timerctl" calendar --cron --timezone UTC --iterations 2 --base-time "@1705300800" \
        "30 3 * * mon-fri" >"$dir/out"
grep -q "Normalized form: Mon..Fri \*-\*-\* 03:30:00" "$dir/out" || fail "cron: $(cat "$dir/out")"
grep -q "Iter. #2: Wed 2024-01-17 03:30:00 UTC" "$dir/out" || fail "cron: $(cat "$dir/out")"
# A time zone named in the expression wins; the elapse is shown in --timezone.
"$timerctl" calendar --timezone UTC --base-time "@1705300800" "*-*-* 09:00 Asia/Tokyo" >"$dir/out"
grep -q "Next elapse: Tue 2024-01-16 00:00:00 UTC" "$dir/out" || fail "expression zone: $(cat "$dir/out")"
# An expression that stops elapsing.
"$timerctl" calendar --timezone UTC --base-time "@1705300800" --iterations 3 "2024-06-01" >"$dir/out"
[ "$(grep -c "Next elapse:\|Iter\." "$dir/out")" = 1 ] || fail "one elapse only: $(cat "$dir/out")"
"$timerctl" calendar --timezone UTC --base-time "@1717300000" "2024-06-01" >"$dir/out"
grep -q "Next elapse: never" "$dir/out" || fail "never: $(cat "$dir/out")"

# Usage errors exit 2, with the reason and a caret under the bad part; nothing on stdout.
expect_exit 2 "$timerctl" calendar "Mon..Fro 03:00"
grep -q "weekday" "$dir/err" || fail "bad weekday reason: $(cat "$dir/err")"
[ "$(sed -n 2p "$dir/err")" = "    Mon..Fro 03:00" ] || fail "bad weekday text: $(cat "$dir/err")"
[ "$(sed -n 3p "$dir/err")" = "         ^" ] || fail "caret under Fro: $(cat "$dir/err")"
[ -s "$dir/out" ] && fail "a bad expression printed a preview"
expect_exit 2 "$timerctl" calendar "*-02-30"
grep -q "never elapse" "$dir/err" || fail "*-02-30: $(cat "$dir/err")"
expect_exit 2 "$timerctl" calendar "Mon *-*-* 03:61"
[ "$(sed -n 3p "$dir/err")" = "                 ^" ] || fail "caret under 61: $(cat "$dir/err")"
expect_exit 2 "$timerctl" calendar --cron "0 3 * *"
grep -q "five fields" "$dir/err" || fail "cron fields: $(cat "$dir/err")"
expect_exit 2 "$timerctl" calendar
expect_exit 2 "$timerctl" calendar daily --iterations 0
expect_exit 2 "$timerctl" calendar daily --iterations many
expect_exit 2 "$timerctl" calendar daily --base-time yesterdayish
expect_exit 2 "$timerctl" calendar daily --timezone Mars/Olympus_Mons
grep -q "no such time zone" "$dir/err" || fail "unknown zone: $(cat "$dir/err")"
expect_exit 2 "$timerctl" calendar daily --timezone ../../../etc/passwd
expect_exit 2 "$timerctl" calendar daily --timezone /etc/passwd
expect_exit 2 "$timerctl" calendar "daily Mars/Olympus_Mons"
expect_exit 2 "$timerctl" list --cron
expect_exit 2 "$timerctl" calendar daily --socket /nonexistent
# Good and bad together: the good one is shown, the status is the failure's.
expect_exit 2 "$timerctl" calendar --base-time @1705300800 daily "Mon..Fro"
grep -q "Normalized form: \*-\*-\* 00:00:00" "$dir/out" || fail "the good expression is shown"
expect_exit 0 "$timerctl" calendar --help
grep -q "Usage: timerctl calendar" "$dir/out" || fail "calendar --help"

# Completion: zone names for --timezone, without posix/, right/ or the data files.
# shellcheck source=/dev/null
source "$completion"
complete_words() {
        COMP_WORDS=("$@")
        COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
        COMPREPLY=()
        _timerctl
        printf '%s\n' "${COMPREPLY[@]}"
}
[ "$(complete_words timerctl calendar --timezone Europe/Berl)" = Europe/Berlin ] ||
        fail "complete Europe/Berl: $(complete_words timerctl calendar --timezone Europe/Berl)"
complete_words timerctl calendar daily --timezone "" >"$dir/zones"
for zone in UTC Europe/Berlin America/New_York Australia/Lord_Howe; do
        grep -qx "$zone" "$dir/zones" || fail "zone completion lacks $zone"
done
grep -E '^(posix|right)/|\.|^(localtime|posixrules|leapseconds)$' "$dir/zones" &&
        fail "zone completion offers what is no zone"
# Every name offered is a zone timerctl reads.
while read -r zone; do
        "$timerctl" calendar --timezone "$zone" --base-time @0 daily >/dev/null ||
                fail "completion offers $zone, which timerctl refuses"
done <"$dir/zones"
complete_words timerctl calendar --ti >"$dir/options"
grep -qx -- --timezone "$dir/options" || fail "--timezone is a calendar option"
complete_words timerctl cal >"$dir/verbs"
grep -qx calendar "$dir/verbs" || fail "calendar is a verb"
echo ok
