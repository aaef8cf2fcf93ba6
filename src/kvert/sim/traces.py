"""Workload traces from files: a scenario container's ``usage: {trace: ...}``.

A trace file is the samples CSV that ``kvert vpa recommend --samples`` reads
(``timestamp,pod,container,cpu,memory,event``; see ``kvert.vpa.samples``)::

    usage: {trace: traces/web.csv}                       # this container's rows, first pod
    usage:
      trace: {file: traces/web.csv, pod: web-1, container: app, loop: true,
              interpolation: linear, step: 5m}

The rows of one container of one pod (``container`` defaults to the scenario container's
name, ``pod`` to the first pod the file has for it) become the container's ``replay``
profile (``kvert.kubelet.usage``), times relative to the first row. An empty cpu or
memory cell holds the previous value; OOM rows are left out (the simulated container is
OOM-killed by the simulation itself). ``step`` keeps one point per step -- the mean cpu
and the peak memory within it -- since the profile travels in the pod template's
``kvert.io/usage`` annotation, which Kubernetes limits to 256 KiB. A relative path is
relative to the scenario file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from kvert.kubelet.config import ConfigError, parse_duration_or_days
from kvert.vpa.samples import SampleError, read_samples

ANNOTATION_BUDGET = 200 * 1024       # of the 256 KiB Kubernetes allows all annotations together


class TraceError(ValueError):
    pass


def trace_usage(spec: Any, container: str, base_dir: Path, path: str) -> dict:
    """The ``{"replay": {...}}`` usage entry for ``spec`` (a file name or an object)."""
    if isinstance(spec, str):
        spec = {"file": spec}
    if not isinstance(spec, dict):
        raise TraceError(f"{path}: expected a file name or an object with 'file'")
    unknown = set(spec) - {"file", "pod", "container", "loop", "interpolation", "step"}
    if unknown:
        raise TraceError(f"{path}.{sorted(unknown)[0]}: unknown field (known: file, pod, container, "
                         "loop, interpolation, step)")
    if not isinstance(spec.get("file"), str) or not spec["file"]:
        raise TraceError(f"{path}.file: required, the path of a samples CSV file")
    file = Path(spec["file"])
    if not file.is_absolute():
        file = base_dir / file
    try:
        samples = read_samples(file)
    except SampleError as e:
        raise TraceError(f"{path}.file: {e}") from None
    except OSError as e:
        raise TraceError(f"{path}.file: cannot read {file}: {e.strerror or e}") from None
    except UnicodeDecodeError:
        raise TraceError(f"{path}.file: {file} is not a UTF-8 text file") from None
    name = spec.get("container", container)
    rows = samples.select((samples.containers == name) & ~samples.oom)
    if not len(rows):
        raise TraceError(f"{path}.container: {file} has no usage rows of container {name!r}")
    pod = spec.get("pod", rows.pods[0])
    rows = rows.select(rows.pods == pod)
    if not len(rows):
        raise TraceError(f"{path}.pod: {file} has no rows of pod {pod!r} for container {name!r}")
    order = np.argsort(rows.timestamps, kind="stable")
    t = rows.timestamps[order] - rows.timestamps[order][0]
    cpu, memory = _hold(rows.cpu[order]), _hold(rows.memory[order])
    known = ~(np.isnan(cpu) | np.isnan(memory))
    if not known.any():
        raise TraceError(f"{path}: no row of pod {pod!r} has both cpu and memory so far")
    t, cpu, memory = t[known], cpu[known], memory[known]
    if "step" in spec:
        try:
            step = parse_duration_or_days(spec["step"])
        except (ConfigError, ValueError) as e:
            raise TraceError(f"{path}.step: {e}") from None
        if step <= 0:
            raise TraceError(f"{path}.step: must be positive")
        t, cpu, memory = _resample(t, cpu, memory, step)
    replay: dict[str, Any] = {"samples": [[round(float(a), 3), f"{round(float(c) * 1000)}m", int(m)]
                                          for a, c, m in zip(t, cpu, memory)]}
    for key in ("loop", "interpolation"):
        if key in spec:
            replay[key] = spec[key]
    size = sum(len(str(s)) for s in replay["samples"])
    if size > ANNOTATION_BUDGET:
        raise TraceError(f"{path}: {len(t)} points do not fit in the pod template's annotation "
                         f"(Kubernetes allows 256 KiB); set {path}.step, e.g. 5m")
    return {"replay": replay}


def _hold(values: np.ndarray) -> np.ndarray:
    """Each NaN replaced by the last value before it (NaN until the first value)."""
    idx = np.where(np.isnan(values), 0, np.arange(values.size))
    np.maximum.accumulate(idx, out=idx)
    return values[idx]


def _resample(t: np.ndarray, cpu: np.ndarray, memory: np.ndarray, step: float):
    """One point per ``step``: its start, the mean cpu and the peak memory of the rows in it."""
    bucket = np.floor(t / step).astype(np.int64)
    starts, inverse = np.unique(bucket, return_inverse=True)
    counts = np.bincount(inverse)
    mean_cpu = np.bincount(inverse, weights=cpu) / counts
    peak = np.full(starts.size, -np.inf)
    np.maximum.at(peak, inverse, memory)
    return starts * step, mean_cpu, peak


__all__ = ["ANNOTATION_BUDGET", "TraceError", "trace_usage"]
