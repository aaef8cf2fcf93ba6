"""The Prometheus text exposition format (0.0.4): writing samples and reading them back.

Node agents write cAdvisor and kubelet metrics in it, the API server its own ``/metrics``,
and tests and scrapers read it back with :func:`parse_exposition`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def format_value(value: float) -> str:
    """A sample value as Prometheus writes it (integers without a fraction, ``+Inf``, ``NaN``)."""
    if isinstance(value, int):
        return str(value)
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return repr(value)


def line(name: str, labels: Mapping[str, str], value: float, timestamp_ms: int | None) -> str:
    body = ",".join(f'{k}="{_escape(str(v))}"' for k, v in sorted(labels.items()))
    text = f"{name}{{{body}}} {format_value(value)}" if labels else f"{name} {format_value(value)}"
    return f"{text} {timestamp_ms}" if timestamp_ms is not None else text


def exposition(families: Sequence[tuple[str, str, str, Sequence[tuple[Mapping[str, str], float]]]]) -> str:
    """Prometheus text (0.0.4) of ``(name, type, help, [(labels, value)])`` families."""
    out = []
    for name, kind, help_text, samples in families:
        out.append(f"# HELP {name} {help_text}")
        out.append(f"# TYPE {name} {kind}")
        out.extend(line(name, labels, value, None) for labels, value in samples)
    return "\n".join(out) + "\n"


@dataclass(frozen=True)
class Sample:
    name: str
    labels: dict[str, str]
    value: float
    timestamp_ms: int | None = None


_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
_LABEL = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*(,|(?=\}))')


def _unescape(value: str) -> str:
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "\\": "\\", '"': '"'}.get(m.group(1), "\\" + m.group(1)), value)


def _parse_float(text: str) -> float:
    return {"+Inf": math.inf, "Inf": math.inf, "-Inf": -math.inf, "NaN": math.nan}.get(text) or float(text)


def parse_exposition(text: str) -> list[Sample]:
    """Samples of a Prometheus text exposition; raises ValueError on a malformed line.
    ``# TYPE`` lines are checked against the samples' names."""
    samples: list[Sample] = []
    types: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            parts = line.split(None, 3)
            if len(parts) >= 4 and parts[1] == "TYPE":
                if parts[3] not in ("counter", "gauge", "histogram", "summary", "untyped"):
                    raise ValueError(f"line {number}: unknown metric type {parts[3]!r}")
                if parts[2] in types:
                    raise ValueError(f"line {number}: second TYPE line for {parts[2]}")
                types[parts[2]] = parts[3]
            continue
        m = _NAME.match(line)
        if not m:
            raise ValueError(f"line {number}: no metric name in {raw!r}")
        name, pos = m.group(0), m.end()
        labels: dict[str, str] = {}
        if pos < len(line) and line[pos] == "{":
            pos += 1
            while True:
                if line[pos:pos + 1] == "}":
                    pos += 1
                    break
                lm = _LABEL.match(line, pos)
                if not lm:
                    raise ValueError(f"line {number}: malformed labels in {raw!r}")
                if lm.group(1) in labels:
                    raise ValueError(f"line {number}: duplicate label {lm.group(1)!r}")
                labels[lm.group(1)] = _unescape(lm.group(2))
                pos = lm.end()
        rest = line[pos:].split()
        if not 1 <= len(rest) <= 2:
            raise ValueError(f"line {number}: expected a value and an optional timestamp in {raw!r}")
        try:
            value = _parse_float(rest[0])
            stamp = int(rest[1]) if len(rest) == 2 else None
        except ValueError:
            raise ValueError(f"line {number}: bad number in {raw!r}") from None
        if types and name not in types and not any(name.startswith(t + "_") for t in types):
            raise ValueError(f"line {number}: sample {name} has no TYPE")
        samples.append(Sample(name, labels, value, stamp))
    return samples
