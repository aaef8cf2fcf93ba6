"""Usage samples from CSV files (seed 002's History Storage, offline), and exact RFC 3339 times.

The format, one sample per line::

    timestamp,pod,container,cpu,memory,event
    2024-05-01T00:00:00Z,hamster-1,hamster,0.512,52428800,
    1714521660,hamster-1,hamster,0.498,,
    2024-05-01T00:02:00Z,hamster-1,hamster,,62914560,oom

* the header names the six columns (any order, each once), optionally with a seventh,
  ``namespace`` (the pod's namespace; a file without it, or an empty cell, means
  ``default``). Only the namespace-aware readers (``kvert.vpa.history.FileHistory``, the
  live recommender's trace history) use it; ``kvert vpa recommend --samples`` treats every
  sample as one VPA's;
* ``timestamp``: RFC 3339 with a zone (``Z`` or ``+02:00``; fractions down to microseconds)
  or Unix seconds (``1714521600``, ``1714521600.25``);
* ``pod``, ``container``: names, not empty;
* ``cpu``: the average usage over the sample's interval in cores (``0.25``), or empty;
* ``memory``: the working set in bytes (``52428800``), or empty;
* ``event``: empty for a usage sample, or ``oom``: the container was OOM-killed at that time,
  ``memory`` then holds the container's memory *request* in bytes and ``cpu`` stays empty.
  The recommender turns it into an artificial peak of max(request or the window's peak
  + 100Mi, x1.2);
* a usage sample has cpu, memory or both; blank lines and lines starting with ``#`` are ignored.

Errors name the file, the line and the column: ``samples.csv:7: column 'cpu': '0,5' is not a
number of cores (e.g. 0.25)``. Samples keep their order: the recommender, like upstream's,
takes samples as they arrive (a CPU sample no newer than the container's last one is dropped).
"""

from __future__ import annotations

import csv
import io
import math
import re
from calendar import timegm
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO

import numpy as np

COLUMNS = ("timestamp", "pod", "container", "cpu", "memory", "event")
OPTIONAL_COLUMNS = ("namespace",)
DEFAULT_NAMESPACE = "default"
EVENTS = ("", "oom")

_RFC3339 = re.compile(
    r"^(\d{4}-\d{2}-\d{2})[Tt ](\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|z|[+-]\d{2}:\d{2})$")


# -- exact times --------------------------------------------------------------------------------

def parse_time_us(text: str) -> int:
    """Microseconds since the Unix epoch from an RFC 3339 time (fraction digits past the
    sixth are dropped). Raises ValueError."""
    if not isinstance(text, str):
        raise ValueError(f"{text!r} is not an RFC 3339 time")
    m = _RFC3339.match(text.strip())
    if not m:
        raise ValueError(f"{text!r} is not an RFC 3339 time (e.g. 2024-05-01T12:00:00Z)")
    date, clock, frac, zone = m.groups()
    zone = "+00:00" if zone in ("Z", "z") else zone
    try:
        dt = datetime.fromisoformat(f"{date}T{clock}{zone}")
    except ValueError:
        raise ValueError(f"{text!r} is not a valid date and time") from None
    seconds = timegm(dt.astimezone(UTC).timetuple())
    micros = int((frac or "0").ljust(6, "0")[:6])
    return seconds * 1_000_000 + micros


def format_time_us(us: int) -> str:
    """RFC 3339 in UTC: ``2024-05-01T12:00:00Z``, with a fraction only when there is one
    (``metav1.Time`` readers, Go's included, accept fractional seconds)."""
    seconds, micros = divmod(int(us), 1_000_000)
    text = datetime.fromtimestamp(seconds, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S")
    if micros:
        text += "." + f"{micros:06d}".rstrip("0")
    return text + "Z"


def seconds_to_us(seconds: np.ndarray | float) -> np.ndarray:
    """Float seconds to int64 microseconds (rounded to the nearest)."""
    return np.round(np.asarray(seconds, dtype=np.float64) * 1e6).astype(np.int64)


# -- samples --------------------------------------------------------------------------------------

@dataclass
class Samples:
    """Columns of samples, in file order. ``cpu``/``memory`` are NaN where empty; for an OOM
    event ``memory`` is the container's memory request. ``namespaces`` (object, str) is None
    when the source had no namespace column (every sample then is in ``default``)."""

    timestamps: np.ndarray   # float64, Unix seconds
    pods: np.ndarray         # object (str)
    containers: np.ndarray   # object (str)
    cpu: np.ndarray          # float64 cores
    memory: np.ndarray       # float64 bytes
    oom: np.ndarray          # bool
    namespaces: np.ndarray | None = None   # object (str), or None: all "default"

    def __len__(self) -> int:
        return int(self.timestamps.size)

    def select(self, mask: np.ndarray) -> Samples:
        return Samples(self.timestamps[mask], self.pods[mask], self.containers[mask],
                       self.cpu[mask], self.memory[mask], self.oom[mask],
                       None if self.namespaces is None else self.namespaces[mask])

    def namespace_column(self) -> np.ndarray:
        """The namespace of every sample (``default`` where the source had none)."""
        if self.namespaces is not None:
            return self.namespaces
        out = np.empty(len(self), dtype=object)
        out[:] = DEFAULT_NAMESPACE
        return out

    @classmethod
    def empty(cls) -> Samples:
        return cls(np.zeros(0), np.zeros(0, dtype=object), np.zeros(0, dtype=object),
                   np.zeros(0), np.zeros(0), np.zeros(0, dtype=bool))


class SampleError(ValueError):
    """A line of a samples file that cannot be read: ``FILE:LINE: column 'X': why``."""

    def __init__(self, source: str, line: int, column: str | None, message: str) -> None:
        self.source, self.line, self.column, self.message = source, line, column, message
        where = f"{source}:{line}"
        super().__init__(f"{where}: column '{column}': {message}" if column else f"{where}: {message}")


def read_samples(path: str | Path) -> Samples:
    """Read a samples CSV file (see the module docstring). Raises SampleError or OSError."""
    path = Path(path)
    with path.open(newline="", encoding="utf-8") as f:
        return parse_samples(f, str(path))


def parse_samples(lines: IO[str] | Iterable[str] | str, source: str = "<samples>") -> Samples:
    """Parse samples CSV text (a string, a file or an iterable of lines)."""
    if isinstance(lines, str):
        lines = io.StringIO(lines)
    reader = csv.reader(_content(lines))
    header: list[str] | None = None
    header_line = 0
    ts: list[float] = []
    pods: list[str] = []
    containers: list[str] = []
    cpu: list[float] = []
    mem: list[float] = []
    oom: list[bool] = []
    namespaces: list[str] = []
    ns_index: int | None = None
    time_cache: dict[str, float] = {}
    nan = math.nan
    for row in reader:
        line = reader.line_num
        if not row or all(not f.strip() for f in row):
            continue
        if header is None:
            header, header_line = [f.strip().lower() for f in row], line
            _check_header(header, source, line)
            order = [header.index(c) for c in COLUMNS]
            ns_index = header.index("namespace") if "namespace" in header else None
            continue
        if len(row) != len(header):
            raise SampleError(source, line, None,
                              f"expected {len(header)} fields ({','.join(header)}), got {len(row)}")
        t_text, pod, container, c_text, m_text, e_text = (row[i].strip() for i in order)
        t = time_cache.get(t_text)
        if t is None:
            t = time_cache[t_text] = _timestamp(t_text, source, line)
        if not pod:
            raise SampleError(source, line, "pod", "empty; every sample names its pod")
        if not container:
            raise SampleError(source, line, "container", "empty; every sample names its container")
        event = e_text.lower()
        if event not in EVENTS:
            raise SampleError(source, line, "event", f"'{e_text}' is not an event; use 'oom' or leave it empty")
        c = _number(c_text, source, line, "cpu", "a number of cores (e.g. 0.25)") if c_text else nan
        m = _number(m_text, source, line, "memory", "a number of bytes (e.g. 52428800)") if m_text else nan
        if event == "oom":
            if c_text:
                raise SampleError(source, line, "cpu", "must be empty for an oom event (its memory "
                                                       "column holds the container's memory request)")
            if not m_text:
                raise SampleError(source, line, "memory", "an oom event needs the container's memory "
                                                          "request in bytes")
        elif not c_text and not m_text:
            raise SampleError(source, line, None, "a sample needs cpu, memory or both")
        ts.append(t)
        pods.append(pod)
        containers.append(container)
        cpu.append(c)
        mem.append(m)
        oom.append(event == "oom")
        if ns_index is not None:
            namespaces.append(row[ns_index].strip() or DEFAULT_NAMESPACE)
    if header is None:
        raise SampleError(source, max(header_line, 1), None,
                          f"no header; the first line must be {','.join(COLUMNS)}")
    return Samples(np.array(ts, dtype=np.float64), _strings(pods), _strings(containers),
                   np.array(cpu, dtype=np.float64), np.array(mem, dtype=np.float64),
                   np.array(oom, dtype=bool), _strings(namespaces) if ns_index is not None else None)


def _content(lines: Iterable[str]) -> Iterable[str]:
    """Comment lines become empty lines, so line numbers still match the file."""
    for text in lines:
        yield "\n" if text.lstrip().startswith("#") else text


def _strings(values: list[str]) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def _check_header(header: list[str], source: str, line: int) -> None:
    unknown = [h for h in header if h not in COLUMNS and h not in OPTIONAL_COLUMNS]
    if unknown:
        raise SampleError(source, line, unknown[0],
                          f"unknown column in the header; the columns are {','.join(COLUMNS)} "
                          f"and optionally {','.join(OPTIONAL_COLUMNS)}")
    for c in COLUMNS + OPTIONAL_COLUMNS:
        n = header.count(c)
        if n == 0 and c in COLUMNS:
            raise SampleError(source, line, c, f"missing from the header; the columns are {','.join(COLUMNS)}")
        if n > 1:
            raise SampleError(source, line, c, "appears twice in the header")


def _timestamp(text: str, source: str, line: int) -> float:
    if not text:
        raise SampleError(source, line, "timestamp", "empty; give an RFC 3339 time or Unix seconds")
    try:
        value = float(text)
    except ValueError:
        try:
            return parse_time_us(text) / 1e6
        except ValueError as e:
            raise SampleError(source, line, "timestamp",
                              f"{e}; give an RFC 3339 time (2024-05-01T12:00:00Z) or Unix seconds") from None
    if not math.isfinite(value) or value < 0:
        raise SampleError(source, line, "timestamp",
                          f"'{text}' is neither an RFC 3339 time (2024-05-01T12:00:00Z) nor Unix seconds")
    return value


def _number(text: str, source: str, line: int, column: str, what: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise SampleError(source, line, column, f"'{text}' is not {what}") from None
    if not math.isfinite(value):
        raise SampleError(source, line, column, f"'{text}' is not {what}")
    if value < 0:
        raise SampleError(source, line, column, f"'{text}' is negative; usage cannot be")
    return value
