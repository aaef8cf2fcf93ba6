"""``format_micro_time`` against the standard library's formatting of the same instant."""

from __future__ import annotations

from datetime import datetime, timezone

from hypothesis import given, strategies as st

from kvert.api.meta import format_micro_time


def _reference(t: float) -> str:
    return datetime.fromtimestamp(t, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@given(st.floats(min_value=-2e9, max_value=4e9, allow_nan=False))
def test_micro_time_formats_as_datetime_does(t):
    assert format_micro_time(t) == _reference(t)


def test_micro_time_rounds_to_the_next_second():
    assert format_micro_time(1.9999996) == "1970-01-01T00:00:02.000000Z"
    assert format_micro_time(1700000000.25) == "2023-11-14T22:13:20.250000Z"
