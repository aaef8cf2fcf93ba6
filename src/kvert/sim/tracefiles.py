"""Columnar trace files: one workload's recorded usage, per replica slot, in Parquet.

``kvert scenario import`` writes one file per workload (``traces/NAMESPACE/KIND-NAME.parquet``)
and the workload's ``history:`` names it. A file holds what the cluster recorded, on the
import's time grid: a row per step (``step`` seconds, the first at ``start``), and per
container ``c`` and replica slot ``k`` (``kvert.sim.importer`` gives each recorded pod the
slot it held):

``cpu/c/k``      float32 millicores (the mean over the step), NaN where the slot had no pod
``memory/c/k``   float32 bytes (the working set), NaN likewise
``oom/c/k``      float32: 0, or the memory limit (bytes) of a container OOM-killed in the step

and in its schema metadata ``kvert.step``, ``kvert.start`` (unix seconds), ``kvert.slots`` and
``kvert.containers`` (JSON). Nothing in it is filled in or assumed: ``load_history`` does that,
the same way for every file, when a scenario is read:

* a container OOM-killed in a step demanded more than its limit, by how much is not recorded:
  kvert assumes what upstream VPA's recommender assumes of an OOM kill, the larger of
  ``limit * 1.2`` and ``limit + 100Mi`` (``--oom-bump-up-ratio``, ``--oom-min-bump-up-bytes``),
  a peak that an OOM kill spends (``kvert.kubelet.runtime.tracebank``);
* a slot without a pod at a step takes the mean of the slots that had one then (a replica
  the simulation runs where the recorded cluster ran fewer); a step at which no slot had a pod
  holds the last step that had one (the first such step before it);
* a workload whose CPU is shared (``sharedUsage: [cpu]``) keeps the total over its pods per
  step instead (0 where none ran): its running pods divide it in the simulation.

``load_bank`` puts every workload's arrays in one ``TraceBank`` (kubelet layer), the rows
of each workload a group named by the workload's key.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from kvert.kubelet.runtime.tracebank import TraceBank, TraceGroup

OOM_BUMP_RATIO = 1.2                  # upstream's --oom-bump-up-ratio default
OOM_MIN_BUMP_BYTES = 100 * 2**20      # upstream's --oom-min-bump-up-bytes default


class TraceFileError(ValueError):
    """A trace file kvert cannot read; the message names the file."""


@dataclass
class WorkloadHistory:
    """One workload's recorded usage as the file holds it (NaN where no pod)."""
    start: float
    step: float
    containers: list[str]
    cpu: dict[str, np.ndarray]        # container -> (slots, steps) millicores (float32)
    memory: dict[str, np.ndarray]     # container -> (slots, steps) bytes (float32)
    oom: dict[str, np.ndarray]        # container -> (slots, steps) limit at an OOM kill, else 0 (float32)

    @property
    def slots(self) -> int:
        return int(next(iter(self.memory.values())).shape[0]) if self.memory else 0

    @property
    def steps(self) -> int:
        return int(next(iter(self.memory.values())).shape[1]) if self.memory else 0


def write_history(path: Path, history: WorkloadHistory) -> None:
    """Write ``history`` as a Parquet file (the caller chooses where: the importer writes
    into a directory it renames into place once complete)."""
    # pyarrow loads only where a trace file is written or read: a scenario without one never pays for it
    import pyarrow as pa
    import pyarrow.parquet as pq

    columns: dict[str, np.ndarray] = {}
    for c in history.containers:
        for k in range(history.slots):
            columns[f"cpu/{c}/{k}"] = history.cpu[c][k].astype(np.float32)
            columns[f"memory/{c}/{k}"] = history.memory[c][k].astype(np.float32)
            columns[f"oom/{c}/{k}"] = history.oom[c][k].astype(np.float32)
    table = pa.table(columns)
    meta = {"kvert.step": repr(float(history.step)), "kvert.start": repr(float(history.start)),
            "kvert.slots": str(history.slots), "kvert.containers": json.dumps(history.containers)}
    table = table.replace_schema_metadata({k.encode(): v.encode() for k, v in meta.items()})
    # no dictionary pages: the values of a float column are nearly all distinct (three times
    # slower to write, half again as large); the byte-stream split compresses floats better
    pq.write_table(table, path, compression="zstd", use_dictionary=False, use_byte_stream_split=True)


@dataclass
class TraceLayout:
    """What a trace file holds, from its metadata alone (no data read)."""
    path: Path
    start: float
    step: float
    slots: int
    containers: list[str]
    steps: int


def _metadata(path: Path, meta: dict[str, str], rows: int, names: set[str]) -> TraceLayout:
    try:
        step, start = float(meta["kvert.step"]), float(meta["kvert.start"])
        slots = int(meta["kvert.slots"])
        containers = json.loads(meta["kvert.containers"])
    except (KeyError, ValueError) as e:
        raise TraceFileError(f"{path}: not a kvert trace file (its metadata lacks {e})") from None
    if step <= 0 or slots < 1 or not containers or rows == 0:
        raise TraceFileError(f"{path}: empty trace (step {step:g}, {slots} slots, {rows} steps)")
    for c in containers:
        for part in ("cpu", "memory", "oom"):
            missing = [f"{part}/{c}/{k}" for k in range(slots) if f"{part}/{c}/{k}" not in names]
            if missing:
                raise TraceFileError(f"{path}: column {missing[0]!r} is missing")
    return TraceLayout(path, start, step, slots, list(containers), rows)


def _read(path: Path, footer_only: bool) -> tuple[TraceLayout, Any]:
    """The file's layout, and its table unless ``footer_only``. Raises TraceFileError."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        if footer_only:
            footer = pq.read_metadata(path)
            schema, rows, table = footer.schema.to_arrow_schema(), footer.num_rows, None
        else:
            table = pq.read_table(path)
            schema, rows = table.schema, table.num_rows
    except FileNotFoundError:
        raise TraceFileError(f"{path}: no such file") from None
    except (OSError, pa.ArrowException) as e:
        raise TraceFileError(f"{path}: not a readable Parquet trace file ({e})") from None
    meta = {k.decode(): v.decode() for k, v in (schema.metadata or {}).items()}
    return _metadata(path, meta, rows, set(schema.names)), table


def read_layout(path: Path) -> TraceLayout:
    """A trace file's grid, slots and containers from its Parquet footer. Raises TraceFileError."""
    return _read(path, footer_only=True)[0]


def read_history(path: Path) -> WorkloadHistory:
    """The file as written (nothing filled in). Raises TraceFileError naming the file."""
    layout, table = _read(path, footer_only=False)
    slots, containers = layout.slots, layout.containers
    out: dict[str, dict[str, np.ndarray]] = {"cpu": {}, "memory": {}, "oom": {}}
    for c in containers:
        for part in ("cpu", "memory", "oom"):
            out[part][c] = np.stack([table.column(f"{part}/{c}/{k}").to_numpy(zero_copy_only=False)
                                     for k in range(slots)]).astype(np.float32, copy=False)
    return WorkloadHistory(layout.start, layout.step, list(containers), out["cpu"], out["memory"], out["oom"])


def oom_demand(limit: np.ndarray | np.float64) -> np.ndarray | np.float64:
    """The memory an OOM-killed container is taken to have demanded (upstream's OOM bump), per
    value of an array or of one value."""
    return np.maximum(limit * OOM_BUMP_RATIO, limit + OOM_MIN_BUMP_BYTES)


def _filled(values: np.ndarray) -> np.ndarray:
    """(slots, steps) with NaN where no pod: each missing slot the mean of the present ones,
    each step with none the last step with some (the first such step before it)."""
    present = ~np.isnan(values)
    any_present = present.any(axis=0)
    if not any_present.any():
        return np.zeros_like(values)
    with np.errstate(invalid="ignore"):
        mean = (np.nansum(values, axis=0) / np.maximum(present.sum(axis=0), 1)).astype(values.dtype)
    out = np.where(present, values, mean[None, :])
    idx = np.where(any_present, np.arange(values.shape[1]), -1)
    np.maximum.accumulate(idx, out=idx)
    first = int(np.argmax(any_present))
    idx[idx < 0] = first
    return out[:, idx]


def replay_arrays(history: WorkloadHistory, container: str, shared_cpu: bool
                  ) -> tuple[np.ndarray, np.ndarray, dict[tuple[int, int], float]]:
    """(cpu rows, memory rows, peaks) the simulation replays for one container (the rules
    above); ``peaks``: (slot, step) of each recorded OOM kill -> the memory under its peak."""
    memory = _filled(history.memory[container])
    oom = history.oom[container]
    peaks: dict[tuple[int, int], float] = {}
    killed = np.argwhere(oom > 0)
    for k, t in killed.tolist():
        peaks[(k, t)] = float(memory[k, t])
        memory[k, t] = max(float(memory[k, t]), float(oom_demand(np.float64(oom[k, t]))))
    cpu = history.cpu[container]
    cpu_rows = np.nansum(cpu, axis=0, keepdims=True) if shared_cpu else _filled(cpu)
    return cpu_rows, memory, peaks


def load_bank(entries: list[tuple[str, TraceLayout, bool, bool]]) -> TraceBank:
    """One bank from (group key, layout, shared cpu, ordinal slots) per workload, every layout on
    one grid (checked by the caller). The bank's matrices are allocated once and each file is
    read, filled in and copied into its rows in turn, so loading holds one workload's arrays
    beside the bank, not every workload's."""
    if not entries:
        raise ValueError("no histories")
    first = entries[0][1]
    width = max(layout.steps for _, layout, _, _ in entries)
    groups = []
    cpu_rows_total = memory_rows_total = 0
    for key, layout, shared, ordinal in entries:
        cpu_rows: dict[str, int] = {}
        memory_rows: dict[str, int] = {}
        for c in layout.containers:
            cpu_rows[c], memory_rows[c] = cpu_rows_total, memory_rows_total
            cpu_rows_total += 1 if shared else layout.slots
            memory_rows_total += layout.slots
        groups.append(TraceGroup(key, layout.slots, cpu_rows, memory_rows, shared_cpu=shared, ordinal=ordinal))
    cpu = np.empty((cpu_rows_total, width), dtype=np.float32)
    memory = np.empty((memory_rows_total, width), dtype=np.float32)
    peaks: dict[tuple[int, int], float] = {}

    def put(into: np.ndarray, row: int, values: np.ndarray) -> None:
        n = values.shape[1]
        into[row:row + values.shape[0], :n] = values
        if n < width:                       # a shorter file holds its last step to the longest's end
            into[row:row + values.shape[0], n:] = values[:, -1:]

    for (_key, layout, shared, _), group in zip(entries, groups):
        history = read_history(layout.path)
        for c in history.containers:
            c_rows, m_rows, own = replay_arrays(history, c, shared)
            put(cpu, group.cpu_rows[c], c_rows)
            put(memory, group.memory_rows[c], m_rows)
            peaks.update({(group.memory_rows[c] + k, t): v for (k, t), v in own.items()})
        del history
    return TraceBank(first.step, cpu, memory, groups, origin=first.start, peaks=peaks)


__all__ = ["OOM_BUMP_RATIO", "OOM_MIN_BUMP_BYTES", "TraceFileError", "TraceLayout", "WorkloadHistory", "load_bank",
           "oom_demand", "read_history", "read_layout", "replay_arrays", "write_history"]
