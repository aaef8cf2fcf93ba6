"""``kvert scenario import``: a cluster snapshot and its recorded usage as an ordinary scenario.

``import_scenario(snapshot, history, out_dir)`` writes ``DIR/scenario.yaml`` (editable: the
node pools, objects and workloads of ``kvert.sim.import_cluster``; each workload's recorded
figures under ``recorded``, its usage under ``history``), one trace file per workload under
``DIR/traces/`` (``kvert.sim.tracefiles``; the slots of ``kvert.sim.import_usage``) and
``DIR/import-warnings.txt``. The scenario starts at the window's start and lasts the window;
its tick and sample interval are the history's step (at most a minute for the tick).

The policies compared (the scenario's ``policies``, first "as is"):

===================  =======================================================================
as is                the snapshot's own requests, limits, VPAs and HPAs (``vpa: existing``)
no VPA               none of the VPAs (HPAs kept)
Recreate             upstream's VPA, updateMode Recreate
InPlaceOrRecreate    upstream's VPA, InPlaceOrRecreate
InPlace              upstream's VPA 1.7+, InPlace (never evicts; an infeasible resize waits)
kvert in-place       kvert's opt-in policies: ``vpa.kvert.io/model: in-place`` and
                     ``vpa.kvert.io/capacity-aware`` on InPlaceOrRecreate
===================  =======================================================================

With ``select`` (``--select-namespace``, ``--select-kind``, ``--select-labels``) every policy
but "as is" applies its VPA to the workloads selected only; the others keep the VPAs they had
("what if every Deployment in namespace shop had a VPA").

The directory is written whole or not at all: into a temporary sibling, read back as a
scenario (every check ``kvert simulate`` makes), then renamed into place; an existing
non-empty DIR is replaced only with ``force``.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from kvert.api.meta import deep_copy, format_time
from kvert.kubelet.usage import USAGE_ANNOTATION
from kvert.sim.import_cluster import ImportedCluster, import_cluster
from kvert.sim.import_usage import WorkloadUsage, map_usage
from kvert.sim.recorded import RecordedHistory
from kvert.sim.scenario import ScenarioError, load_scenario, pod_template
from kvert.sim.tracefiles import write_history

SafeDumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
SCENARIO_FILE = "scenario.yaml"
WARNINGS_FILE = "import-warnings.txt"
MAX_TICK = 60.0
IN_PLACE_MODEL = {"vpa.kvert.io/model": "in-place", "vpa.kvert.io/capacity-aware": "true"}
WHAT_IF_POLICIES = (
    {"name": "no VPA", "vpa": "none"},
    {"name": "Recreate", "vpa": {"updateMode": "Recreate"}},
    {"name": "InPlaceOrRecreate", "vpa": {"updateMode": "InPlaceOrRecreate"}},
    {"name": "InPlace", "vpa": {"updateMode": "InPlace"}},
    {"name": "kvert in-place", "vpa": {"updateMode": "InPlaceOrRecreate", "annotations": IN_PLACE_MODEL}},
)
AS_IS = {"name": "as is", "vpa": "existing"}


class ScenarioImportError(ValueError):
    """The import cannot be done; the message says why and nothing was written."""


@dataclass
class ImportResult:
    directory: Path
    warnings: list[str] = field(default_factory=list)
    workloads: int = 0
    nodes: int = 0
    traces: int = 0


def policies(select: dict | None = None) -> list[dict]:
    """The policies an imported scenario compares ("as is" first)."""
    out: list[dict[str, Any]] = [dict(AS_IS)]
    for p in WHAT_IF_POLICIES:
        entry: dict[str, Any] = deep_copy(p)
        if select:
            entry["workloads"] = dict(select)
        out.append(entry)
    return out


def _trace_path(usage: WorkloadUsage) -> str:
    w = usage.workload
    return f"traces/{w.namespace}/{w.kind.lower()}-{w.name}.parquet"


def _workload_doc(usage: WorkloadUsage) -> dict:
    w = usage.workload
    manifest = deep_copy(w.manifest)
    doc: dict[str, Any] = {"manifest": manifest}
    if usage.exit_after is not None:
        template = pod_template(manifest)
        annotations = template.setdefault("metadata", {}).setdefault("annotations", {})
        entries = json.loads(annotations.get(USAGE_ANNOTATION) or "{}")
        for c in w.containers:
            entries.setdefault(c, {}).setdefault("exitAfter", f"{usage.exit_after:g}s")
        annotations[USAGE_ANNOTATION] = json.dumps(entries, sort_keys=True)
    if w.hpa is not None:
        doc["hpa"] = w.hpa
    if w.shared_cpu:
        doc["sharedUsage"] = ["cpu"]
    if w.existing_vpa is not None:
        doc["existingVpa"] = w.existing_vpa
    if usage.history is not None:
        doc["history"] = _trace_path(usage)
        doc["recorded"] = usage.recorded
    return doc


def scenario_document(cluster: ImportedCluster, usages: list[WorkloadUsage], history: RecordedHistory, *,
                      name: str, description: str, select: dict | None = None,
                      prices: dict[str, float] | None = None) -> dict:
    step = history.step
    doc: dict[str, Any] = {
        "name": name, "description": description, "start": format_time(history.start),
        "duration": f"{history.steps * step:g}s", "seed": 0, "tick": f"{min(step, MAX_TICK):g}s",
        "sampleInterval": f"{step:g}s", "nodes": cluster.pools,
    }
    if cluster.objects:
        doc["objects"] = cluster.objects
    doc["workloads"] = [_workload_doc(u) for u in usages]
    doc["policies"] = policies(select)
    if prices:
        doc["prices"] = dict(prices)
    return doc


def _replace(tmp: Path, out: Path, force: bool) -> None:
    if out.exists():
        if not out.is_dir():
            raise ScenarioImportError(f"{out}: exists and is not a directory")
        if any(out.iterdir()):
            if not force:
                raise ScenarioImportError(f"{out}: exists and is not empty (give another directory, or --force to "
                                   "replace it)")
            old = out.with_name(f".{out.name}.old-{os.getpid()}")
            out.rename(old)
            tmp.rename(out)
            shutil.rmtree(old, ignore_errors=True)
            return
        out.rmdir()
    tmp.rename(out)


def import_scenario(snapshot_objects: dict[str, list[dict]], history: RecordedHistory, out_dir: Path, *,
                    name: str = "", description: str = "", select: dict | None = None,
                    prices: dict[str, float] | None = None, force: bool = False,
                    extra_warnings: list[str] | None = None) -> ImportResult:
    """Write the scenario directory (see the module docstring)."""
    out_dir = Path(out_dir)
    cluster = import_cluster(snapshot_objects)
    if not cluster.pools:
        raise ScenarioImportError("the snapshot has no Nodes with a cpu and memory capacity: nothing to schedule on")
    if not cluster.workloads:
        raise ScenarioImportError("the snapshot has no workloads (Deployments, StatefulSets, DaemonSets, Jobs, "
                                  "CronJobs, ReplicaSets or Pods)")
    usages, usage_warnings = map_usage(cluster.workloads, history)
    warnings = list(extra_warnings or []) + list(history.warnings) + cluster.warnings + usage_warnings
    doc = scenario_document(cluster, usages, history, name=name or out_dir.name, description=description,
                            select=select, prices=prices)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.", dir=out_dir.parent))
    try:
        traces = 0
        for u in usages:
            if u.history is None:
                continue
            path = tmp / _trace_path(u)
            path.parent.mkdir(parents=True, exist_ok=True)
            write_history(path, u.history)
            traces += 1
        (tmp / SCENARIO_FILE).write_text(yaml.dump(doc, Dumper=SafeDumper, sort_keys=False, width=120))
        (tmp / WARNINGS_FILE).write_text("".join(f"{w}\n" for w in warnings))
        try:
            load_scenario(tmp / SCENARIO_FILE, read_traces=False)   # what kvert simulate will check
        except ScenarioError as e:
            raise ScenarioImportError(f"the imported scenario does not hold ({e}); nothing was written") from None
        _replace(tmp, out_dir, force)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return ImportResult(out_dir, warnings, len(cluster.workloads), sum(p["count"] for p in cluster.pools), traces)


__all__ = ["AS_IS", "ScenarioImportError", "ImportResult", "SCENARIO_FILE", "WARNINGS_FILE", "import_scenario",
           "policies", "scenario_document"]
