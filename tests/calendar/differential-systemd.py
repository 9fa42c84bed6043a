#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Differential test: calendar-next against `systemd-analyze calendar` (systemd 252).

Generates calendar expressions (weekday lists and ranges, dates, times, lists, ranges,
repetitions, last days, fractions, shorthands, zone suffixes, and invalid ones), base times and
zones; asks both for the normalized form and the next N elapses; compares. A difference is
allowed only where docs/CALENDAR.md says timerd differs by design, and each such case is named:
  dst      an elapse within 26 h of a UTC-offset change of the zone (the DST table's rows)
  horizon  systemd stops after year 2199 (its MAX_YEAR), timerd goes on
  systemd-loop  systemd gives up ("Infinite loop in calendar calculation") where timerd answers
  seconds-star  systemd prints a seconds list starting with 0/1 as "*", dropping the rest
  never    timerd refuses an expression that can never elapse, systemd accepts it and never
           elapses
Anything else fails the test. Usage: differential-systemd.py CALENDAR_NEXT [CASES] [SEED]
"""

import datetime
import random
import subprocess
import sys
import zoneinfo

ZONES = ["UTC", "Asia/Tokyo", "Asia/Kolkata", "Europe/Berlin", "America/New_York",
         "Australia/Sydney", "Europe/Dublin", "Australia/Lord_Howe"]
DAYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
LONG_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
SHORTHANDS = ["minutely", "hourly", "daily", "weekly", "monthly", "yearly", "annually",
              "quarterly", "semiannually", "semi-annually", "biannually", "Daily", "HOURLY"]
ITERATIONS = 5
CALENDAR_E_NEVER = 10  # calendar.h


def chain(rng, lo, hi, width=2, star=0.4):
    if rng.random() < star:
        return "*"
    items = []
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        a = rng.randint(lo, hi)
        kind = rng.random()
        if kind < 0.45:
            items.append(f"{a:0{width}d}" if rng.random() < 0.5 else str(a))
        elif kind < 0.65:
            b = rng.randint(a, hi)
            items.append(f"{a}..{b}")
        elif kind < 0.85:
            items.append(f"{a}/{rng.randint(1, max(1, (hi - lo) // 2))}")
        else:
            b = rng.randint(a, hi)
            items.append(f"{a}..{b}/{rng.randint(1, 4)}")
    return ",".join(items)


def weekdays(rng):
    parts = []
    for _ in range(rng.choice([1, 1, 2])):
        a = rng.randint(0, 6)
        names = LONG_DAYS if rng.random() < 0.2 else DAYS
        if rng.random() < 0.4:
            b = rng.randint(a, 6)
            parts.append(f"{names[a]}{rng.choice(['..', '-'])}{names[b]}")
        else:
            parts.append(names[a])
    return ",".join(parts)


def expression(rng):
    if rng.random() < 0.08:
        return rng.choice(SHORTHANDS)
    words = []
    if rng.random() < 0.3:
        words.append(weekdays(rng))
    form = rng.random()
    if form < 0.25:
        words.append(f"{chain(rng, 2020, 2120, 4, 0.7)}-{chain(rng, 1, 12)}-{chain(rng, 1, 31)}")
    elif form < 0.4:
        words.append(f"{chain(rng, 1, 12)}-{chain(rng, 1, 31)}")
    elif form < 0.5:
        words.append(f"*-{chain(rng, 1, 12)}~{chain(rng, 1, 7, 2, 0.1)}")
    time = rng.random()
    if time < 0.4:
        words.append(f"{chain(rng, 0, 23)}:{chain(rng, 0, 59)}")
    elif time < 0.8:
        sec = chain(rng, 0, 59)
        if rng.random() < 0.1:
            sec = f"{rng.randint(0, 59)}.{rng.randint(0, 999999):06d}"
        words.append(f"{chain(rng, 0, 23)}:{chain(rng, 0, 59)}:{sec}")
    if not words:
        words.append("*-*-*")
    return " ".join(words)


def corrupt(rng, text):
    """Invalid variants: both sides must refuse them."""
    i = rng.randrange(len(text) + 1)
    return text[:i] + rng.choice(["x", ":", "..", "/0", "-", ",", "99", "~"]) + text[i:]


def utc_seconds(line):
    stamp = line.split(":", 1)[1].strip()
    wall = " ".join(stamp.split()[1:3])
    return int(datetime.datetime.strptime(wall, "%Y-%m-%d %H:%M:%S")
               .replace(tzinfo=datetime.timezone.utc).timestamp())


def systemd(zone, base, expressions):
    """{expression: (normalized, [utc seconds]) or None when refused}.

    Accepted expressions print a block each, in order (the original form only when it differs
    from the normalized one); refused ones are named on stderr."""
    run = subprocess.run(["systemd-analyze", "calendar", f"--iterations={ITERATIONS}",
                          f"--base-time=@{base}", "--"] + expressions,
                         env={"TZ": f":{zone}", "LC_ALL": "C", "SYSTEMD_COLORS": "0"},
                         capture_output=True, text=True)
    refused = {line.split("'", 1)[1].rsplit("'", 1)[0]
               for line in run.stderr.splitlines() if line.startswith("Failed to parse")}
    blocks = []
    lines = run.stdout.splitlines()
    for i, line in enumerate(lines):
        s = line.strip()
        if s.startswith("Normalized form:"):
            blocks.append([s.split(":", 1)[1].strip(), []])
        elif s.startswith("Next elapse:") or s.startswith("Iter. #"):
            if "never" in s:
                continue
            nxt = lines[i + 1].strip() if i + 1 < len(lines) else ""
            blocks[-1][1].append(utc_seconds(nxt if nxt.startswith("(in UTC)") else s))
    # systemd's own search gives up ("Infinite loop in calendar calculation", the bug family of
    # systemd #36897): no block is printed for it.
    gave_up = {line.split("'", 1)[1].rsplit("'", 1)[0]
               for line in run.stderr.splitlines()
               if line.startswith("Failed to determine next elapse")}
    accepted = [e for e in expressions if e not in refused and e not in gave_up]
    assert len(accepted) == len(blocks), (accepted, blocks, run.stderr)
    results = dict(zip(accepted, blocks))
    results.update({e: None for e in refused})
    results.update({e: "gave up" for e in gave_up})
    return results


def ours(binary, zone, base, text):
    out = subprocess.run([binary, "--zone", zone, f"--iterations={ITERATIONS}",
                          f"--base={base * 1000000}", text],
                         capture_output=True, text=True).stdout.splitlines()
    if out and out[0].startswith("error") and out[0].split()[2] == f"{CALENDAR_E_NEVER}:":
        return "never"
    if not out or out[0].startswith("error"):
        return None
    elapses = [int(x) // 1000000 for x in out[1:] if x != "end"]
    return [out[0].split(":", 1)[1].strip(), elapses]


def near_transition(zone, t):
    if zone == "UTC":
        return False
    z = zoneinfo.ZoneInfo(zone)
    offsets = {datetime.datetime.fromtimestamp(t + h * 3600, z).utcoffset()
               for h in range(-26, 27)}
    return len(offsets) > 1


def before_transition(rng, zone, t):
    """A base a few hours before the zone's next offset change after t (or t if none soon)."""
    z = zoneinfo.ZoneInfo(zone)
    start = datetime.datetime.fromtimestamp(t, z).utcoffset()
    for h in range(0, 24 * 370, 6):
        if datetime.datetime.fromtimestamp(t + h * 3600, z).utcoffset() != start:
            return t + h * 3600 - rng.randint(1, 12) * 3600
    return t


def seconds_star(mine, theirs):
    """systemd 252 prints a seconds list that starts with 0/1 as "*" and drops the rest of the
    list (which still elapses): timerd prints the whole list, so that it parses back."""
    import re
    star = re.sub(r":00/1,[^ ]*", ":*", mine, count=1)
    return star != mine and star == theirs


def classify(zone, spec_zone, a, b):
    """Why two lists of elapses differ, or None if the difference is not by design."""
    z = spec_zone or zone
    for x, y in zip(a, b):
        if x != y:
            return "dst" if near_transition(z, min(x, y)) else None
    if len(a) != len(b):
        shorter = a if len(a) < len(b) else b
        longer = b if shorter is a else a
        extra = longer[len(shorter)]
        year = datetime.datetime.fromtimestamp(extra, datetime.timezone.utc).year
        return "horizon" if shorter is b and year >= 2199 else None
    return None


def main():
    binary = sys.argv[1]
    cases = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
    rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 17)
    counts = {"same": 0, "refused": 0, "never": 0, "dst": 0, "horizon": 0, "systemd-loop": 0, "seconds-star": 0}
    failures = []
    zones_seen = set()
    batch = 40
    for _ in range(cases // batch):
        zone = rng.choice(ZONES)
        zones_seen.add(zone)
        base = rng.randint(946684800, 3786912000)  # 2000 .. 2090
        if zone != "UTC" and rng.random() < 0.5:
            base = before_transition(rng, zone, base)
        exprs = set()
        while len(exprs) < batch:
            e = expression(rng)
            if rng.random() < 0.15:
                e = corrupt(rng, e)
            if rng.random() < 0.1:
                e += " " + rng.choice(["UTC", "Asia/Tokyo", "Europe/Berlin", "America/New_York"])
            exprs.add(e)
        exprs = sorted(exprs)
        theirs = systemd(zone, base, exprs)
        for e in exprs:
            mine, sd = ours(binary, zone, base, e), theirs[e]
            if sd == "gave up":
                print(f"by design (systemd-loop): TZ={zone} base=@{base} {e!r}: timerd {mine}")
                counts["systemd-loop"] += 1
                continue
            if mine == "never":
                # timerd refuses what can never elapse; systemd accepts it and never elapses.
                if sd is not None and sd[1] == []:
                    counts["never"] += 1
                    continue
                mine = None
            if mine is None or sd is None:
                if (mine is None) != (sd is None):
                    failures.append((zone, base, e, "accepted by one only", mine, sd))
                else:
                    counts["refused"] += 1
                continue
            if mine[0] != sd[0]:
                if not seconds_star(mine[0], sd[0]):
                    failures.append((zone, base, e, "normalized form", mine[0], sd[0]))
                    continue
                counts["seconds-star"] += 1
            if mine[1] == sd[1]:
                counts["same"] += 1
                continue
            last = e.rsplit(" ", 1)[-1]
            spec_zone = last if " " in e and last[:1].isalpha() and "/" in last else None
            if e.endswith(" UTC"):
                spec_zone = "UTC"
            why = classify(zone, spec_zone, mine[1], sd[1])
            if why:
                counts[why] += 1
                print(f"by design ({why}): TZ={zone} base=@{base} {e!r}\n"
                      f"  timerd:  {mine[1]}\n  systemd: {sd[1]}")
            else:
                failures.append((zone, base, e, "elapses", mine[1], sd[1]))
    total = sum(counts.values()) + len(failures)
    print(f"{total} expressions, {cases // batch} base times, zones {sorted(zones_seen)}: "
          + ", ".join(f"{k} {v}" for k, v in counts.items()) + f", failures {len(failures)}")
    for f in failures:
        print("FAIL TZ=%s base=@%d %r: %s\n  timerd:  %s\n  systemd: %s" % f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
