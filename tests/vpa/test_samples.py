import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kvert.vpa.samples import SampleError, format_time_us, parse_samples, parse_time_us, read_samples

HEADER = "timestamp,pod,container,cpu,memory,event\n"


def test_reads_both_time_forms_comments_and_empty_columns():
    s = parse_samples(HEADER +
                      "# a comment\n"
                      "2024-05-01T00:00:00Z,h1,hamster,0.5,52428800,\n"
                      "\n"
                      "1714521660,h1,hamster,0.25,,\n"
                      "2024-05-01T02:02:00.5+02:00,h2,hamster,,1000,\n"
                      "1714521720.25,h2,hamster,,314572800,OOM\n")
    assert len(s) == 4
    assert s.timestamps.tolist() == [1714521600.0, 1714521660.0, 1714521720.5, 1714521720.25]
    assert s.pods.tolist() == ["h1", "h1", "h2", "h2"]
    assert s.cpu[0] == 0.5 and math.isnan(s.cpu[2]) and math.isnan(s.memory[1])
    assert s.oom.tolist() == [False, False, False, True] and s.memory[3] == 314572800


def test_columns_may_come_in_any_order():
    s = parse_samples("pod,container,event,memory,cpu,timestamp\nh1,c,,100,0.1,1714521600\n")
    assert (s.pods[0], s.memory[0], s.cpu[0], s.timestamps[0]) == ("h1", 100.0, 0.1, 1714521600.0)


@pytest.mark.parametrize("text, line, column, fragment", [
    ("", 1, None, "no header"),
    ("timestamp,pod,container,cpu,memory\n", 1, "event", "missing from the header"),
    ("timestamp,pod,container,cpu,memory,event,extra\n", 1, "extra", "unknown column"),
    ("timestamp,pod,pod,cpu,memory,event\n", 1, "pod", "appears twice"),
    (HEADER + "1714521600,h,c,0.5\n", 2, None, "expected 6 fields"),
    (HEADER + "1714521600,h,c,\"0,5\",,\n", 2, "cpu", "'0,5' is not a number of cores"),
    (HEADER + "1714521600,h,c,0.5,-1,\n", 2, "memory", "negative"),
    (HEADER + "1714521600,h,c,nan,,\n", 2, "cpu", "not a number of cores"),
    (HEADER + "yesterday,h,c,0.5,,\n", 2, "timestamp", "not an RFC 3339 time"),
    (HEADER + "2024-05-01T00:00:00,h,c,0.5,,\n", 2, "timestamp", "not an RFC 3339 time"),
    (HEADER + "2024-13-01T00:00:00Z,h,c,0.5,,\n", 2, "timestamp", "not a valid date"),
    (HEADER + "-5,h,c,0.5,,\n", 2, "timestamp", "nor Unix seconds"),
    (HEADER + "1714521600,,c,0.5,,\n", 2, "pod", "empty"),
    (HEADER + "1714521600,h,,0.5,,\n", 2, "container", "empty"),
    (HEADER + "1714521600,h,c,0.5,,restart\n", 2, "event", "'restart' is not an event"),
    (HEADER + "1714521600,h,c,,,\n", 2, None, "needs cpu, memory or both"),
    (HEADER + "# comment\n1714521600,h,c,0.5,,oom\n", 3, "cpu", "must be empty for an oom event"),
    (HEADER + "1714521600,h,c,,,oom\n", 2, "memory", "memory request"),
])
def test_errors_name_the_line_and_column(text, line, column, fragment):
    with pytest.raises(SampleError) as info:
        parse_samples(text, "usage.csv")
    e = info.value
    assert (e.source, e.line, e.column) == ("usage.csv", line, column)
    assert fragment in str(e)
    assert str(e).startswith(f"usage.csv:{line}: " + (f"column '{column}': " if column else ""))


def test_read_samples_from_a_file(tmp_path):
    path = tmp_path / "s.csv"
    path.write_text(HEADER + "1714521600,h,c,0.5,100,\n")
    assert len(read_samples(path)) == 1
    path.write_text(HEADER + "1714521600,h,c,zero,100,\n")
    with pytest.raises(SampleError, match=r"s\.csv:2: column 'cpu'"):
        read_samples(path)


def test_the_example_file_parses():
    s = read_samples("examples/hamster-samples.csv")
    assert len(s) > 800 and s.oom.sum() == 1 and set(s.containers) == {"hamster"}
    assert np.all(np.diff(s.timestamps[~s.oom]) >= 0)


@given(st.integers(0, 4102444800 * 10**6))
def test_times_round_trip_to_the_microsecond(us):
    assert parse_time_us(format_time_us(us)) == us


def test_time_formats():
    assert format_time_us(1714521600 * 10**6) == "2024-05-01T00:00:00Z"
    assert format_time_us(1714521600 * 10**6 + 500000) == "2024-05-01T00:00:00.5Z"
    assert parse_time_us("2024-05-01T02:00:00+02:00") == 1714521600 * 10**6
    assert parse_time_us("2024-05-01T00:00:00.123456789Z") == 1714521600 * 10**6 + 123456
