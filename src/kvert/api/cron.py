"""CronJob schedules: parsed as ``github.com/robfig/cron/v3`` ``ParseStandard`` does (the
parser Kubernetes uses), with its error messages, which validation reports verbatim; the
times a schedule fires come from croniter, given the parsed fields as explicit lists so
both agree on what each field means.

A day-of-month and a day-of-week both restricted (neither ``*``/``?``, nor a ``*/1``) fire
on either day; one of them unrestricted leaves the other to decide, as in cron(8).
``@every <duration>`` (robfig's extension) is refused here: see docs/kubernetes-choices.md.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from croniter import croniter

_DESCRIPTORS = {
    "@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *", "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0", "@daily": "0 0 * * *", "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}
_MONTHS = {m: i + 1 for i, m in enumerate(
    ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"))}
_DAYS = {d: i for i, d in enumerate(("sun", "mon", "tue", "wed", "thu", "fri", "sat"))}
# (min, max, names) of minute, hour, day of month, month, day of week
_FIELDS = ((0, 59, None), (0, 23, None), (1, 31, None), (1, 12, _MONTHS), (0, 6, _DAYS))


class CronError(ValueError):
    """A schedule robfig/cron refuses; the message is robfig's."""


@dataclass(frozen=True)
class Schedule:
    minutes: frozenset[int]
    hours: frozenset[int]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]
    any_day: bool        # day of month given as * or ?
    any_weekday: bool    # day of week given as * or ?

    def _expression(self) -> str:
        def text(values: frozenset[int], star: bool) -> str:
            return "*" if star else ",".join(str(v) for v in sorted(values))
        return " ".join((text(self.minutes, False), text(self.hours, False),
                         text(self.days, self.any_day), text(self.months, False),
                         text(self.weekdays, self.any_weekday)))

    def next_after(self, t: datetime) -> datetime:
        """The first time strictly after ``t`` (aware, in the schedule's zone) it fires."""
        fire: datetime = croniter(self._expression(), t).get_next(datetime)
        return fire

    def previous_before(self, t: datetime) -> datetime:
        """The last time strictly before ``t`` it fired."""
        fired: datetime = croniter(self._expression(), t).get_prev(datetime)
        return fired


def _int(expr: str) -> int:
    if not re.fullmatch(r"[+-]?[0-9]+", expr):
        raise CronError(f'failed to parse int from {expr}: strconv.Atoi: parsing "{expr}": invalid syntax')
    number = int(expr)
    if number < 0:
        raise CronError(f"negative number ({number}) not allowed: {expr}")
    return number


def _int_or_name(expr: str, names: dict[str, int] | None) -> int:
    if names and expr.lower() in names:
        return names[expr.lower()]
    return _int(expr)


def _range(expr: str, low: int, high: int, names: dict[str, int] | None) -> tuple[set[int], bool]:
    """``getRange``: the values of one comma-separated part and whether it is a star."""
    range_and_step = expr.split("/")
    low_and_high = range_and_step[0].split("-")
    star = False
    if low_and_high[0] in ("*", "?"):
        start, end, star = low, high, True
    else:
        start = _int_or_name(low_and_high[0], names)
        if len(low_and_high) == 1:
            end = start
        elif len(low_and_high) == 2:
            end = _int_or_name(low_and_high[1], names)
        else:
            raise CronError(f"too many hyphens: {expr}")
    if len(range_and_step) == 1:
        step = 1
    elif len(range_and_step) == 2:
        step = _int(range_and_step[1])
        if len(low_and_high) == 1:
            end = high    # "N/step" means "N-max/step"
        if step > 1:
            star = False
    else:
        raise CronError(f"too many slashes: {expr}")
    if start < low:
        raise CronError(f"beginning of range ({start}) below minimum ({low}): {expr}")
    if end > high:
        raise CronError(f"end of range ({end}) above maximum ({high}): {expr}")
    if start > end:
        raise CronError(f"beginning of range ({start}) beyond end of range ({end}): {expr}")
    if step == 0:
        raise CronError(f"step of range should be a positive number: {expr}")
    return set(range(start, end + 1, step)), star


def _field(text: str, low: int, high: int, names: dict[str, int] | None) -> tuple[frozenset[int], bool]:
    values: set[int] = set()
    star = False
    for part in (p for p in text.split(",") if p):
        part_values, part_star = _range(part, low, high, names)
        values |= part_values
        star = star or part_star
    return frozenset(values), star


def parse(spec: str) -> Schedule:
    """``cron.ParseStandard`` without time zone prefixes (validation refuses ``TZ=``)."""
    if not spec:
        raise CronError("empty spec string")
    spec = spec.strip()
    if spec.startswith("@"):
        if spec not in _DESCRIPTORS:
            raise CronError(f"unrecognized descriptor: {spec}")
        spec = _DESCRIPTORS[spec]
    fields = spec.split()
    if len(fields) != 5:
        raise CronError(f"expected exactly 5 fields, found {len(fields)}: [{' '.join(fields)}]")
    parsed = [_field(text, low, high, names) for text, (low, high, names) in zip(fields, _FIELDS)]
    return Schedule(parsed[0][0], parsed[1][0], parsed[2][0], parsed[3][0], parsed[4][0],
                    any_day=parsed[2][1], any_weekday=parsed[4][1])
