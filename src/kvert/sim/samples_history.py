"""A recorded history from a samples CSV file: ``read_samples_file(path, step=60)`` gives a
``kvert.sim.recorded.RecordedHistory`` (the input of ``kvert scenario import --samples``).

The file is the samples format of ``kvert.vpa.samples`` (``timestamp,pod,container,cpu,memory,
event``, optionally ``namespace``, ``default`` when absent or empty), read as
``kvert.vpa.history.FileHistory`` reads it; its errors name the file and the line. Each
(namespace, pod, container) is one instance, resampled onto the grid (step ``k`` covers
``[start + k*step, start + (k+1)*step)``):

* CPU at a step: the mean of the instance's CPU samples in it (cores);
* memory at a step: the max of its memory samples in it (bytes), OOM rows left out;
* an ``oom`` row is an OOM kill at its step (``ooms``) and, as the kill restarts the container,
  a restart (``restarts``); its memory column, the container's memory request, is the
  instance's ``requests["memory"]`` (the last one in the window).

``start`` defaults to the file's first timestamp; ``end`` to just after its last, so that the
last sample's step is the last step (``steps = floor((last - start) / step) + 1``); given, ``steps
= ceil((end - start) / step)`` and samples outside ``[start, end)`` are left out. Inside an
instance's life (its first to its last step with a value) a step with no sample holds the last
value, and a gap longer than 2 steps gives a warning, as for Prometheus
(``kvert.sim.recorded.settle``). The file has no owners: the importer goes by pod names.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from kvert.sim.recorded import (
    ContainerSeries,
    HistoryImportError,
    PodRecord,
    RecordedHistory,
    _when,
    settle_all,
)
from kvert.vpa.history import FileHistory, HistoryError

NAMES = {"cpu": "cpu samples", "memory": "memory samples"}


def read_samples_file(path: str | Path, *, start: float | None = None, end: float | None = None,
                      step: float) -> RecordedHistory:
    """The samples file's history on the grid (see the module docstring). Raises
    HistoryImportError naming the file (and the line) or ValueError (the arguments)."""
    for name, value in (("start", start), ("end", end), ("step", step)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))
                                  or not math.isfinite(value)):
            raise ValueError(f"{name}: {value!r} is not a number of seconds")
    if step <= 0:
        raise ValueError(f"step: {step!r} is not a positive number of seconds")
    try:
        samples = FileHistory(path).read()
    except HistoryError as e:
        raise HistoryImportError(str(e)) from None
    source = str(path)
    if len(samples) == 0:
        raise HistoryImportError(f"{source}: no samples (only a header, comments or blank lines)")
    t = samples.timestamps
    first = float(start) if start is not None else float(t.min())
    if end is not None:
        if end <= first:
            raise ValueError(f"the window ends ({_when(end)}) before it starts ({_when(first)})")
        steps = max(1, math.ceil((float(end) - first) / step - 1e-9))
    else:
        last = float(t.max())
        if last < first:
            raise ValueError(f"{source}: every sample is before the window's start ({_when(first)})")
        steps = int(math.floor((last - first) / step + 1e-9)) + 1
    k = np.floor((t - first) / step + 1e-9).astype(np.int64)
    inside = (k >= 0) & (k < steps)
    ns = samples.namespace_column()
    keys = ns + "\x1f" + samples.pods + "\x1f" + samples.containers
    unique, inverse = np.unique(keys[inside], return_inverse=True)
    k = k[inside]
    cpu_in = samples.cpu[inside]
    mem_in = samples.memory[inside]
    oom = samples.oom[inside]
    t_in = t[inside]
    n = unique.size
    cell = inverse * steps + k                        # (instance, step) as one index
    # mean CPU per step
    has_cpu = ~oom & ~np.isnan(cpu_in)
    sums = np.bincount(cell[has_cpu], weights=cpu_in[has_cpu], minlength=n * steps)
    counts = np.bincount(cell[has_cpu], minlength=n * steps)
    with np.errstate(invalid="ignore", divide="ignore"):
        cpu = np.where(counts > 0, sums / np.maximum(counts, 1), np.nan).reshape(n, steps)
    # max memory per step
    flat_memory = np.full(n * steps, np.nan)
    has_mem = ~oom & ~np.isnan(mem_in)
    np.fmax.at(flat_memory, cell[has_mem], mem_in[has_mem])
    memory = flat_memory.reshape(n, steps)
    # OOM rows
    oom_rows = np.flatnonzero(oom)
    oom_rows = oom_rows[np.lexsort((t_in[oom_rows], inverse[oom_rows]))]
    bounds = np.searchsorted(inverse[oom_rows], np.arange(n + 1))
    warnings: list[str] = []
    containers: list[ContainerSeries] = []
    pods: dict[tuple[str, str], PodRecord] = {}
    for i, key in enumerate(unique.tolist()):
        namespace, pod, container = key.split("\x1f")
        rows = oom_rows[bounds[i]:bounds[i + 1]]
        steps_of_ooms = np.sort(k[rows])
        series = ContainerSeries(namespace, pod, container, cpu=cpu[i], memory=memory[i],
                                 ooms=steps_of_ooms, restarts=steps_of_ooms.copy())
        if rows.size:
            series.requests = {"memory": int(round(mem_in[rows[-1]]))}
        containers.append(series)
        pods.setdefault((namespace, pod), PodRecord(namespace, pod))
    warnings.extend(settle_all(containers, NAMES, first, step, interval="samples' interval"))
    return RecordedHistory(start=first, step=float(step), steps=steps, containers=containers, pods=pods,
                           warnings=warnings, source=source)


__all__ = ["read_samples_file"]
