#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Differential test of the 5-field cron form: calendar-next --cron against Debian's
python3-croniter, in UTC (croniter's DST handling is not an oracle), over generated expressions
and base times. Where Vixie cron and croniter disagree (see vixie_star) timerd follows Vixie
cron and the case is counted, not compared. Usage: differential-croniter.py CALENDAR_NEXT [CASES] [SEED]"""

import datetime
import random
import subprocess
import sys

from croniter import croniter

ITERATIONS = 5
MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
WEEKDAYS = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"]


def field(rng, lo, hi, names=None):
    if rng.random() < 0.35:
        return "*" if rng.random() < 0.7 else f"*/{rng.randint(1, max(1, (hi - lo) // 2))}"
    items = []
    for _ in range(rng.choice([1, 1, 2, 3])):
        a = rng.randint(lo, hi)
        name = (lambda v: names[v - lo] if names and rng.random() < 0.3 and v - lo < len(names)
                else str(v))
        if rng.random() < 0.4:
            b = rng.randint(a, hi)
            step = f"/{rng.randint(1, 3)}" if rng.random() < 0.3 else ""
            items.append(f"{name(a)}-{name(b)}{step}")
        else:
            items.append(name(a))
    return ",".join(items)


def expression(rng):
    if rng.random() < 0.05:
        return rng.choice(["@daily", "@hourly", "@weekly", "@monthly", "@yearly", "@annually"])
    return " ".join([field(rng, 0, 59), field(rng, 0, 23), field(rng, 1, 28),
                     field(rng, 1, 12, MONTHS), field(rng, 0, 6, WEEKDAYS)])


def vixie_star(e):
    """By design: Vixie cron (Debian's cron), and timerd, apply the day-of-month OR weekday rule
    when neither field starts with "*"; croniter applies it when neither field expands to every
    value ("*/2" is restricted for croniter, "0-6" is not). Cases where the two rules disagree
    are counted, not compared."""
    fields = e.split()
    if len(fields) != 5:
        return False
    vixie_or = not fields[2].startswith("*") and not fields[4].startswith("*")
    expanded = croniter(e).expanded
    croniter_or = expanded[2] != ["*"] and expanded[4] != ["*"]
    return vixie_or != croniter_or


def main():
    binary = sys.argv[1]
    cases = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 17)
    same, star, failures = 0, 0, []
    for _ in range(cases):
        e = expression(rng)
        base = rng.randint(946684800, 3786912000)
        out = subprocess.run([binary, "--cron", f"--iterations={ITERATIONS}",
                              f"--base={base * 1000000}", e],
                             capture_output=True, text=True).stdout.splitlines()
        mine = [int(x) // 1000000 for x in out[1:] if x != "end"] if out and \
            not out[0].startswith("error") else None
        it = croniter(e, datetime.datetime.fromtimestamp(base, datetime.timezone.utc))
        theirs = [int(it.get_next(float)) for _ in range(ITERATIONS)]
        if mine == theirs:
            same += 1
        elif vixie_star(e):
            star += 1
        else:
            failures.append((e, base, out[:1], mine, theirs))
    print(f"{cases} cron expressions and base times (UTC): same {same}, "
          f"vixie-star {star}, failures {len(failures)}")
    for e, base, form, mine, theirs in failures:
        print(f"FAIL {e!r} base=@{base} {form}\n  timerd:   {mine}\n  croniter: {theirs}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
