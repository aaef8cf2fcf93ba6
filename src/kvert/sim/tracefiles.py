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
    pq.write_table(table, path, compression="zstd")


def read_history(path: Path) -> WorkloadHistory:
    """The file as written (nothing filled in). Raises TraceFileError naming the file."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path)
    except FileNotFoundError:
        raise TraceFileError(f"{path}: no such file") from None
    except (OSError, pa.ArrowException) as e:
        raise TraceFileError(f"{path}: not a readable Parquet trace file ({e})") from None
    meta = {k.decode(): v.decode() for k, v in (table.schema.metadata or {}).items()}
    try:
        step, start = float(meta["kvert.step"]), float(meta["kvert.start"])
        slots = int(meta["kvert.slots"])
        containers = json.loads(meta["kvert.containers"])
    except (KeyError, ValueError) as e:
        raise TraceFileError(f"{path}: not a kvert trace file (its metadata lacks {e})") from None
    if step <= 0 or slots < 1 or not containers or table.num_rows == 0:
        raise TraceFileError(f"{path}: empty trace (step {step:g}, {slots} slots, {table.num_rows} steps)")
    names = set(table.column_names)
    out: dict[str, dict[str, np.ndarray]] = {"cpu": {}, "memory": {}, "oom": {}}
    for c in containers:
        for part in ("cpu", "memory", "oom"):
            missing = [f"{part}/{c}/{k}" for k in range(slots) if f"{part}/{c}/{k}" not in names]
            if missing:
                raise TraceFileError(f"{path}: column {missing[0]!r} is missing")
            out[part][c] = np.stack([table.column(f"{part}/{c}/{k}").to_numpy(zero_copy_only=False)
                                     for k in range(slots)]).astype(np.float32, copy=False)
    return WorkloadHistory(start, step, list(containers), out["cpu"], out["memory"], out["oom"])


def oom_demand(limit: np.ndarray) -> np.ndarray:
    """The memory an OOM-killed container is taken to have demanded (upstream's OOM bump)."""
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


def load_bank(histories: list[tuple[str, WorkloadHistory, bool, bool]]) -> TraceBank:
    """One bank from (group key, history, shared cpu, ordinal slots) per workload; every
    history on the same grid (the scenario's, checked by the caller)."""
    if not histories:
        raise ValueError("no histories")
    step = histories[0][1].step
    start = histories[0][1].start
    cpu_parts: list[np.ndarray] = []
    memory_parts: list[np.ndarray] = []
    groups = []
    peaks: dict[tuple[int, int], float] = {}
    cpu_row = memory_row = 0
    for key, history, shared, ordinal in histories:
        cpu_rows: dict[str, int] = {}
        memory_rows: dict[str, int] = {}
        for c in history.containers:
            cpu, memory, own = replay_arrays(history, c, shared)
            peaks.update({(memory_row + k, t): v for (k, t), v in own.items()})
            cpu_rows[c], memory_rows[c] = cpu_row, memory_row
            cpu_parts.append(cpu)
            memory_parts.append(memory)
            cpu_row += cpu.shape[0]
            memory_row += memory.shape[0]
        groups.append(TraceGroup(key, history.slots, cpu_rows, memory_rows, shared_cpu=shared, ordinal=ordinal))
    width = max(h.steps for _, h, _, _ in histories)

    def padded(parts: list[np.ndarray]) -> np.ndarray:
        # a shorter file holds its last step to the longest's end
        return np.concatenate([p if p.shape[1] == width else np.concatenate(
            [p, np.repeat(p[:, -1:], width - p.shape[1], axis=1)], axis=1) for p in parts]).astype(np.float32)

    return TraceBank(step, padded(cpu_parts), padded(memory_parts), groups, origin=start, peaks=peaks)


__all__ = ["OOM_BUMP_RATIO", "OOM_MIN_BUMP_BYTES", "TraceFileError", "WorkloadHistory", "load_bank",
           "oom_demand", "read_history", "replay_arrays", "write_history"]
