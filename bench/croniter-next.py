#!/usr/bin/python3
# croniter-next.py EXPRESSION ZONE BASE_SECONDS N [--and]: N next elapses of EXPRESSION after BASE
# in ZONE, each from the same base with a fresh croniter (parse + next, as systemd-analyze
# calendar does for each of its arguments); prints the last. --and: day of month AND weekday
# (croniter's default is cron's OR). bench/calendar-compare times this process at N and at 1.
import sys
from datetime import datetime
from zoneinfo import ZoneInfo

from croniter import croniter

expression, zone, base, n = sys.argv[1], ZoneInfo(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
day_or = "--and" not in sys.argv[5:]
start = datetime.fromtimestamp(base, zone)
for _ in range(n):
    elapse = croniter(expression, start, day_or=day_or).get_next(datetime)
print(int(elapse.timestamp()))
