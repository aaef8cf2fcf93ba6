"""Durations, parsed and printed in one place.

Two spellings reach kvert: Go's ``time.Duration`` (``1m30s``, ``100ms``, ``-5s``; what
kube-apiserver, the kubelet's config file, metrics-server and the VPA's flags write) and
Prometheus' range durations (``8d``, ``1w``, ``1h30m``; what PromQL and the VPA's history
flags take). Go durations are exact integers of nanoseconds, as Go keeps them; the
``*_seconds`` forms are the float view the components compute with.
"""

from __future__ import annotations

import math
import re

NANOSECOND = 1
MICROSECOND = 1000
MILLISECOND = 1_000_000
SECOND = 1_000_000_000
MINUTE = 60 * SECOND
HOUR = 60 * MINUTE

_GO_UNITS = {"ns": NANOSECOND, "us": MICROSECOND, "µs": MICROSECOND, "μs": MICROSECOND,
             "ms": MILLISECOND, "s": SECOND, "m": MINUTE, "h": HOUR}
_GO_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)")


class DurationError(ValueError):
    """Not a duration; the message is Go's (``time: invalid duration "x"``) or Prometheus'."""


def parse_go_duration_ns(text: str) -> int:
    """Go's ``time.ParseDuration``: nanoseconds from ``"1h2m3.5s"``, ``"-100ms"``, ``"0"``."""
    s = text.strip()
    sign = -1 if s.startswith("-") else 1
    if s[:1] in "+-":
        s = s[1:]
    if s == "0":
        return 0
    total, pos = 0, 0
    while pos < len(s):
        m = _GO_PART.match(s, pos)
        if m is None:
            raise DurationError(f'time: invalid duration "{text}"')
        whole, _, frac = m.group(1).partition(".")
        scale = _GO_UNITS[m.group(2)]
        total += int(whole or 0) * scale
        if frac:
            total += int(frac) * scale // 10 ** len(frac)
        pos = m.end()
    if pos == 0:
        raise DurationError(f'time: invalid duration "{text}"')
    return sign * total


def parse_go_duration(value: object) -> float:
    """Seconds from a Go duration string; a number (not a bool) is already seconds."""
    if isinstance(value, bool):
        raise DurationError(f"invalid duration {value!r}")
    if isinstance(value, (int, float)):
        return float(value)
    if not isinstance(value, str) or not value.strip():
        raise DurationError(f"invalid duration {value!r}")
    return parse_go_duration_ns(value) / SECOND


def _fraction(value: int, digits: int) -> str:
    whole, frac = divmod(value, 10 ** digits)
    text = f"{frac:0{digits}d}".rstrip("0") if digits else ""
    return f"{whole}.{text}" if text else str(whole)


def format_go_duration_ns(ns: int) -> str:
    """Go's ``time.Duration.String``: ``"1m0s"``, ``"1.5s"``, ``"300ms"``, ``"0s"``."""
    u = abs(ns)
    if u == 0:
        return "0s"
    if u < MICROSECOND:
        text = f"{u}ns"
    elif u < MILLISECOND:
        text = _fraction(u, 3) + "µs"
    elif u < SECOND:
        text = _fraction(u, 6) + "ms"
    else:
        whole, frac = divmod(u, SECOND)
        text = _fraction((whole % 60) * SECOND + frac, 9) + "s"
        minutes = whole // 60
        if minutes:
            text = f"{minutes % 60}m" + text
            if minutes // 60:
                text = f"{minutes // 60}h" + text
    return "-" + text if ns < 0 else text


def format_go_duration(seconds: float) -> str:
    """Seconds as Go prints the duration: 300 -> ``"5m0s"``, 0.1 -> ``"100ms"``."""
    return format_go_duration_ns(round(seconds * SECOND))


_PROM_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, "w": 7 * 86400.0,
               "y": 365 * 86400.0}
_PROM_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h|d|w|y)")


def parse_prometheus_duration(value: str | float | int) -> float:
    """Seconds from a Prometheus duration (``8d``, ``1h30m``, ``500ms``) or a number of
    seconds; it must be positive."""
    if isinstance(value, bool):
        raise DurationError(f"{value!r} is not a duration")
    if isinstance(value, (int, float)):
        seconds = float(value)
    else:
        s = str(value).strip()
        try:
            seconds = float(s)
        except ValueError:
            pos, seconds = 0, 0.0
            while pos < len(s):
                m = _PROM_PART.match(s, pos)
                if m is None:
                    raise DurationError(f"{value!r} is not a duration (e.g. 8d, 1h, 90s)") from None
                seconds += float(m.group(1)) * _PROM_UNITS[m.group(2)]
                pos = m.end()
            if pos == 0:
                raise DurationError(f"{value!r} is not a duration (e.g. 8d, 1h, 90s)") from None
    if not math.isfinite(seconds) or seconds <= 0:
        raise DurationError(f"{value!r} is not a positive duration")
    return seconds


def format_prometheus_duration(seconds: float) -> str:
    """Seconds as a PromQL range (3600 -> ``1h``, 90 -> ``1m30s``, 86400 -> ``1d``)."""
    ms = int(round(seconds * 1000))
    if ms <= 0:
        raise DurationError(f"{seconds!r} is not a positive duration")
    out = []
    for unit, size in (("d", 86_400_000), ("h", 3_600_000), ("m", 60_000), ("s", 1000), ("ms", 1)):
        n, ms = divmod(ms, size)
        if n:
            out.append(f"{n}{unit}")
    return "".join(out)
