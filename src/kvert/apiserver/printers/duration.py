"""Human-readable durations and ``metav1.Time`` handling for Table cells.

Ports ``k8s.io/apimachinery/pkg/util/duration`` (``HumanDuration``, ``ShortHumanDuration``)
and the printers' ``translateTimestampSince``. Everything works on integer nanoseconds so
that a duration of exactly ten seconds never prints as "9s" through float rounding; the
current time always comes from the caller (the server's Clock), never from the wall clock.
"""

from __future__ import annotations

import calendar
import re
from datetime import datetime, timedelta
from fractions import Fraction

SECOND = 10**9
MINUTE = 60 * SECOND
HOUR = 60 * MINUTE

# Go's zero time.Time, 0001-01-01T00:00:00Z, in nanoseconds since the Unix epoch: what a
# missing metav1.Time decodes to, and what ``IsZero`` tests for.
ZERO_TIME = calendar.timegm((1, 1, 1, 0, 0, 0)) * SECOND

_RFC3339 = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?([Zz]|[+-]\d{2}:\d{2})$")


def epoch_ns(seconds: float | int) -> int:
    """Epoch seconds (a Clock reading) as integer nanoseconds, rounded to the nearest ns."""
    if isinstance(seconds, int):
        return seconds * SECOND
    return round(Fraction(seconds) * SECOND)


def parse_time_ns(value: object) -> int | None:
    """An RFC 3339 timestamp (``metav1.Time``/``MicroTime`` JSON) as nanoseconds since the epoch.

    None for a missing, null or unparseable value. Go's zero time parses to ``ZERO_TIME``.
    """
    if not isinstance(value, str):
        return None
    m = _RFC3339.match(value)
    if not m:
        return None
    year, month, day, hour, minute, sec = (int(g) for g in m.groups()[:6])
    frac, zone = m.group(7) or "", m.group(8)
    if not (1 <= month <= 12 and 1 <= day <= 31 and hour <= 23 and minute <= 59 and sec <= 59):
        return None
    try:
        datetime(year, month, day)  # rejects Feb 30 and friends, as time.Parse does
    except ValueError:
        return None
    seconds = calendar.timegm((year, month, day, hour, minute, sec))
    if zone not in ("Z", "z"):
        sign = 1 if zone[0] == "+" else -1
        zh, zm = int(zone[1:3]), int(zone[4:6])
        if zh > 23 or zm > 59:
            return None
        seconds -= sign * (zh * 3600 + zm * 60)
    nanos = int((frac + "000000000")[:9]) if frac else 0
    return seconds * SECOND + nanos


def is_zero(ns: int | None) -> bool:
    return ns is None or ns == ZERO_TIME


def format_rfc3339(ns: int | None) -> str:
    """``t.UTC().Format(time.RFC3339)``: second precision, ``Z``; Go's zero time when unset."""
    if ns is None:
        ns = ZERO_TIME
    t = datetime(1, 1, 1) + timedelta(seconds=(ns - ZERO_TIME) // SECOND)
    return (f"{t.year:04d}-{t.month:02d}-{t.day:02d}"
            f"T{t.hour:02d}:{t.minute:02d}:{t.second:02d}Z")


def _truncated_seconds(d: int) -> int:
    """``int(d.Seconds())``: whole seconds, truncated toward zero."""
    q = abs(d) // SECOND
    return q if d >= 0 else -q


def _negative(seconds: int) -> str:
    """Both durations' text for a negative one: less than two seconds in the future is
    clock skew, printed as now ("0s"); further ahead is "<invalid>"."""
    return "0s" if seconds >= -1 else "<invalid>"


def human_duration(d: int) -> str:
    """``duration.HumanDuration`` of ``d`` nanoseconds: ~2-3 significant figures."""
    seconds = _truncated_seconds(d)
    if seconds < 0:
        return _negative(seconds)
    if seconds < 60 * 2:
        return f"{seconds}s"
    minutes = d // MINUTE
    if minutes < 10:
        s = d // SECOND % 60
        return f"{minutes}m" if s == 0 else f"{minutes}m{s}s"
    if minutes < 60 * 3:
        return f"{minutes}m"
    hours = d // HOUR
    if hours < 8:
        m = d // MINUTE % 60
        return f"{hours}h" if m == 0 else f"{hours}h{m}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        h = hours % 24
        return f"{hours // 24}d" if h == 0 else f"{hours // 24}d{h}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        dy = hours // 24 % 365
        years = hours // 24 // 365
        return f"{years}y" if dy == 0 else f"{years}y{dy}d"
    return f"{hours // 24 // 365}y"


def short_human_duration(d: int) -> str:
    """``duration.ShortHumanDuration`` of ``d`` nanoseconds: one unit only."""
    seconds = _truncated_seconds(d)
    if seconds < 0:
        return _negative(seconds)
    if seconds < 60:
        return f"{seconds}s"
    minutes = d // MINUTE
    if minutes < 60:
        return f"{minutes}m"
    hours = d // HOUR
    if hours < 24:
        return f"{hours}h"
    if hours < 24 * 365:
        return f"{hours // 24}d"
    return f"{hours // 24 // 365}y"


def since(value: object, now_ns: int) -> str:
    """``translateTimestampSince`` of a JSON timestamp: its age, ``<unknown>`` when unset."""
    return since_ns(parse_time_ns(value), now_ns)


def since_ns(ns: int | None, now_ns: int) -> str:
    """``translateTimestampSince`` of a parsed timestamp (nanoseconds since the epoch)."""
    if ns is None or is_zero(ns):
        return "<unknown>"
    return human_duration(now_ns - ns)
