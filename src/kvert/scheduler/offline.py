"""Scheduling a cluster snapshot offline: what ``kvert schedule`` runs.

The snapshot is the objects ``kubectl get nodes,pods,pdb,priorityclasses,namespaces,services
-A -o yaml`` prints (a ``kind: List``), or any YAML stream of them (also ReplicaSets,
StatefulSets and ReplicationControllers, which default topology spreading reads). Bound pods
(``spec.nodeName`` set, not Succeeded/Failed) occupy their nodes; the pending ones are
scheduled one at a time in queue order (PrioritySort: higher priority first, then older
``creationTimestamp``, then the file's order), each seeing the placements before it, by the
same framework, plugins and :class:`~kvert.scheduler.algorithm.SchedulingAlgorithm` as the
live scheduler, with kube-scheduler 1.36's default profile (for the given feature gates) or a given
configuration.

A pod that fits nowhere goes through PostFilter: when preemption nominates a node, its
victims are taken off the snapshot at once (in a cluster they terminate gracefully; their
controllers would recreate them, which a snapshot does not model) and the pod is scheduled
again, as the scheduler retries it once they are gone. The pod's entry then has the node it
lands on, the nominated node, the victims and the FailedScheduling message of the first
attempt. A pod a PreEnqueue plugin holds back (``spec.schedulingGates``, a gang short of
pods) is reported pending, unattempted, with that plugin's message.

Permit runs as in a cluster, in virtual time: a pod told to wait (a gang member) keeps its
node only if it is allowed before its timeout; the run ends by letting the longest Permit
timeout pass, after which a pod still waiting is rejected, unreserved and reported pending
with the timeout message.

Nothing is written anywhere; ties between equal totals are broken by a seeded generator, so
a run is repeatable (``seed``).
"""

from __future__ import annotations

import asyncio
import itertools
import random
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kvert.api.features import enabled
from kvert.api.manifests import ManifestError, documents
from kvert.api.meta import parse_time
from kvert.clock import VirtualClock
from kvert.scheduler import explain
from kvert.scheduler.algorithm import NoNodes, PluginError, SchedulingAlgorithm
from kvert.scheduler.cache import NodeCache, pod_key, without_pod_level_resources
from kvert.scheduler.config import SchedulerConfig, build_framework, load_config
from kvert.scheduler.framework import (
    MAX_PERMIT_TIMEOUT,
    Code,
    CycleState,
    FitError,
    Framework,
    Handle,
    is_success,
)
from kvert.scheduler.listers import StaticListers
from kvert.scheduler.plugins.gangscheduling import WorkloadManager

GATED_MESSAGE = "Scheduling is blocked due to non-empty scheduling gates"
DEFAULT_PREEMPTION_POLICY = "PreemptLowerPriority"

# kind -> lister resource name, for the objects plugins read besides nodes and pods
_LISTED = {"PodDisruptionBudget": "poddisruptionbudgets", "Service": "services",
           "ReplicaSet": "replicasets", "StatefulSet": "statefulsets",
           "ReplicationController": "replicationcontrollers", "ResourceClaim": "resourceclaims",
           "ResourceSlice": "resourceslices", "DeviceClass": "deviceclasses",
           "Workload": "workloads"}
_TERMINAL = ("Succeeded", "Failed")


class SnapshotError(ValueError):
    """The snapshot cannot be read or scheduled (the message says where)."""


# ---------------------------------------------------------------------------------------------
# reading
# ---------------------------------------------------------------------------------------------


def _flatten(doc: Any, where: str) -> Iterator[dict]:
    if doc is None:
        return
    if not isinstance(doc, dict):
        raise SnapshotError(f"{where}: expected a Kubernetes object (a mapping), got "
                            f"{type(doc).__name__}")
    kind = doc.get("kind")
    if isinstance(kind, str) and kind.endswith("List") and "items" in doc:
        item_kind = kind[:-4] if kind != "List" else None
        items = doc.get("items") or []
        if not isinstance(items, list):
            raise SnapshotError(f"{where}.items: must be a list")
        for i, item in enumerate(items):
            if isinstance(item, dict) and item_kind and not item.get("kind"):
                item = {**item, "kind": item_kind}
            yield from _flatten(item, f"{where}.items[{i}]")
        return
    if not isinstance(kind, str) or not kind:
        raise SnapshotError(f"{where}.kind: Required value")
    yield doc


def load_objects(source: str | Path) -> list[dict]:
    """The objects of a YAML (or JSON) file: a stream of documents and/or ``kind: List``s."""
    path = Path(source)
    try:
        text = path.read_text()
    except OSError as e:
        raise SnapshotError(f"cannot read {source}: {e}") from e
    return parse_objects(text, str(source))


def parse_objects(text: str, name: str = "<snapshot>") -> list[dict]:
    """The objects of YAML or JSON text: ``---`` streams, Lists, and outputs of kubectl appended
    to one file (``kvert.api.manifests`` splits them)."""
    try:
        docs = [d.data for d in documents(text, name)]
    except ManifestError as e:
        raise SnapshotError(str(e)) from None
    out: list[dict] = []
    for i, doc in enumerate(docs):
        out.extend(_flatten(doc, f"{name}[{i}]" if len(docs) > 1 else name))
    return out


# ---------------------------------------------------------------------------------------------
# scheduling
# ---------------------------------------------------------------------------------------------


def _meta(obj: dict) -> dict:
    meta = obj.get("metadata")
    return meta if isinstance(meta, dict) else {}


@dataclass
class _Pending:
    pod: dict
    priority: int
    created: float
    order: int


@dataclass
class Snapshot:
    nodes: list[dict] = field(default_factory=list)
    bound: list[dict] = field(default_factory=list)
    pending: list[dict] = field(default_factory=list)
    namespaces: list[dict] = field(default_factory=list)
    listed: dict[str, list[dict]] = field(default_factory=dict)


def _resolve_priority(pod: dict, classes: dict[str, dict], where: str) -> dict:
    """The Priority admission plugin's work for pods written by hand: ``spec.priority`` and
    ``spec.preemptionPolicy`` from the PriorityClass (or the global default class)."""
    spec = dict(pod.get("spec") or {})
    if isinstance(spec.get("priority"), int) and not isinstance(spec.get("priority"), bool):
        spec.setdefault("preemptionPolicy", DEFAULT_PREEMPTION_POLICY)
        return {**pod, "spec": spec}
    name = spec.get("priorityClassName")
    if name:
        pc = classes.get(name)
        if pc is None:
            raise SnapshotError(f"{where}.spec.priorityClassName: Invalid value: {name!r}: "
                                f"no PriorityClass with name {name} was found")
    else:
        pc = next((c for c in classes.values() if c.get("globalDefault")), None)
    value = pc.get("value", 0) if pc else 0
    if not isinstance(value, int) or isinstance(value, bool):
        raise SnapshotError(f"PriorityClass {_meta(pc or {}).get('name')}: value must be an integer")
    spec["priority"] = value
    spec.setdefault("preemptionPolicy",
                    (pc or {}).get("preemptionPolicy") or DEFAULT_PREEMPTION_POLICY)
    return {**pod, "spec": spec}


def classify(objects: Iterable[dict]) -> Snapshot:
    """Sort the objects into nodes, bound pods, pending pods and what plugins list."""
    snap = Snapshot()
    classes: dict[str, dict] = {}
    pods: list[tuple[dict, str]] = []
    seen_nodes: set[str] = set()
    for i, obj in enumerate(objects):
        kind, meta = obj.get("kind"), _meta(obj)
        where = f"{kind} {str(meta.get('namespace')) + '/' if meta.get('namespace') else ''}" \
                f"{meta.get('name', f'#{i}')}"
        if kind in ("Node", "Pod", "Namespace", "PriorityClass") or kind in _LISTED:
            if not isinstance(meta.get("name"), str) or not meta.get("name"):
                raise SnapshotError(f"{kind} #{i}: metadata.name: Required value")
        if kind == "Node":
            if meta["name"] in seen_nodes:
                raise SnapshotError(f"{where}: Duplicate value: node {meta['name']!r}")
            seen_nodes.add(meta["name"])
            snap.nodes.append(obj)
        elif kind == "Pod":
            pods.append((obj, where))
        elif kind == "Namespace":
            snap.namespaces.append(obj)
        elif kind == "PriorityClass":
            classes[meta["name"]] = obj
        elif kind in _LISTED:
            snap.listed.setdefault(_LISTED[kind], []).append(obj)
    seen_pods: set[str] = set()
    for pod, where in pods:
        meta = dict(_meta(pod))
        meta.setdefault("namespace", "default")
        key = f"{meta['namespace']}/{meta['name']}"
        if key in seen_pods:
            raise SnapshotError(f"{where}: Duplicate value: pod {key!r}")
        seen_pods.add(key)
        meta.setdefault("uid", f"snapshot-{key}")
        pod = _resolve_priority({**pod, "metadata": meta}, classes, where)
        if ((pod.get("status") or {}).get("phase")) in _TERMINAL:
            continue
        if (pod.get("spec") or {}).get("nodeName"):
            snap.bound.append(pod)
        elif not meta.get("deletionTimestamp"):
            snap.pending.append(pod)
    return snap


def _created(pod: dict) -> float:
    ts = _meta(pod).get("creationTimestamp")
    if not ts:
        return float("-inf")
    try:
        return parse_time(ts)
    except (ValueError, TypeError) as e:
        raise SnapshotError(f"pod {pod_key(pod)}: metadata.creationTimestamp: Invalid value: "
                            f"{ts!r}") from e


def queue_order(pending: list[dict]) -> list[dict]:
    """PrioritySort: higher priority first, then the older pod, then the file's order."""
    entries = [_Pending(p, int((p.get("spec") or {}).get("priority") or 0), _created(p), i)
               for i, p in enumerate(pending)]
    entries.sort(key=lambda e: (-e.priority, e.created, e.order))
    return [e.pod for e in entries]


class OfflineScheduler:
    """The framework over a snapshot: ``run()`` schedules every pending pod and returns the
    report (``{"pods": [entry, ...]}``, see :func:`entry`)."""

    def __init__(self, objects: Iterable[dict], config: Any = None, *, seed: int = 0,
                 gates: Mapping[str, bool] | None = None):
        self.snapshot = classify(objects)
        # the scheduler's feature gates (kvert.api.features.GATES; defaults when unset)
        self.gates: dict[str, bool] = dict(gates or {})
        try:
            self.config: SchedulerConfig = load_config(config)
        except ValueError as e:
            raise SnapshotError(str(e)) from e
        self.cache = NodeCache(capacity=max(64, len(self.snapshot.nodes)))
        self.cache.pod_level_resources = enabled(self.gates, "PodLevelResources")
        for ns in self.snapshot.namespaces:
            self.cache.set_namespace(ns)
        for node in self.snapshot.nodes:
            self.cache.add_node(node)
        for pod in self.snapshot.bound:
            self.cache.add_pod(pod)
        listers = StaticListers(self.snapshot.listed)
        # every pod of the snapshot is known before the first is scheduled (gangs count them)
        self.workloads = WorkloadManager()
        for pod in self.snapshot.bound + self.snapshot.pending:
            self.workloads.add_pod(pod)
        self.frameworks: dict[str, Framework] = {}
        for profile in self.config.profiles:
            fw = build_framework(profile, Handle(self.cache, listers=listers,
                                                 workload_manager=self.workloads,
                                                 gates=self.gates))
            if fw.percentage_of_nodes_to_score is None:
                fw.percentage_of_nodes_to_score = self.config.percentage_of_nodes_to_score
            self.frameworks[profile.scheduler_name] = fw
        self.algorithm = SchedulingAlgorithm(self.cache, random.Random(seed))
        self._attempts = itertools.count(1)
        # pods waiting at Permit: (index in the report, framework, assumed pod, node, wait)
        self._waiting: list[tuple[int, Framework, dict, str, asyncio.Future]] = []
        self._index = 0

    def run(self) -> dict:
        self._clock = VirtualClock()
        return self._clock.run(self._run())

    async def _run(self) -> dict:
        out: list[dict] = []
        for pod in queue_order(self.snapshot.pending):
            fw = self.frameworks.get((pod.get("spec") or {}).get("schedulerName")
                                     or "default-scheduler")
            if fw is None:
                continue   # another scheduler's pod
            self._index = len(out)
            out.append(self.schedule(fw, pod))
        if self._waiting:
            await self._clock.sleep(MAX_PERMIT_TIMEOUT)    # virtual time: every wait ends
            for i, fw, assumed, node, wait in self._waiting:
                st = wait.result() if wait.done() else None
                if st is not None and not st.is_success:
                    fw.run_unreserve(CycleState(), assumed, node)
                    self.cache.forget_pod(assumed)
                    out[i] = {**out[i], "node": None, "scores": {}, "totals": {},
                              "message": st.message()}
        return {"pods": out}

    def schedule(self, fw: Framework, pod: dict) -> dict:
        gate = fw.run_pre_enqueue(pod)
        if gate is not None and not gate.is_success:
            message = GATED_MESSAGE if gate.plugin == "SchedulingGates" else gate.message()
            return entry(pod, {"node": None, "message": message})
        first = self._attempt(fw, pod)
        if first.get("node") or not first.get("nominatedNode"):
            return entry(pod, first)
        # the victims are gone: the retry tries the nominated node first
        nominated = first["nominatedNode"]
        self.cache.add_nominated(pod, nominated)
        retry = self._attempt(fw, {**pod, "status": {**(pod.get("status") or {}),
                                                     "nominatedNodeName": nominated}})
        self.cache.delete_nominated(pod)
        return entry(pod, {**first, "node": retry.get("node"), "scores": retry.get("scores", {}),
                           "totals": retry.get("totals", {})})

    def _attempt(self, fw: Framework, pod: dict) -> dict:
        state = CycleState()
        kw: dict[str, Any] = {"attempt": next(self._attempts), "now": 0.0, "limit": None}
        counted = pod if self.cache.pod_level_resources else without_pod_level_resources(pod)
        try:
            r = self.algorithm.schedule_pod(fw, state, counted)
        except FitError as fit:
            post, victims, nominated = None, [], ""
            if fw.points.get("postFilter"):
                post, st = fw.run_post_filter(state, pod, fit.diagnosis)
                if st is not None and st.message():
                    fit.diagnosis.post_filter_msg = st.message()
                if st is not None and st.code == Code.ERROR:
                    # the error is PostFilter's, in the message; the FitError that ran it is no cause
                    raise SnapshotError(f"pod {pod_key(pod)}: PostFilter: {st.message()}") from None
            if post is not None and post.nominated_node_name:
                nominated, victims = post.nominated_node_name, list(post.victims)
                for v in victims:
                    self.cache.remove_pod(v)
            return explain.build(fw, state, pod, result="Unschedulable", message=str(fit),
                                 total_nodes=fit.num_all_nodes, diagnosis=fit.diagnosis,
                                 nominated=nominated, victims=victims, **kw)
        except PluginError as e:
            return explain.build(fw, state, pod, result="Error", message=e.status.message(), **kw)
        except NoNodes as e:
            return explain.build(fw, state, pod, result="Unschedulable", message=str(e), **kw)
        assumed = self.cache.assume_pod(pod, r.node)
        st = fw.run_reserve(state, assumed, r.node)
        if is_success(st):
            st = fw.run_permit(state, assumed, r.node)
            if st is not None and st.is_wait:
                self._waiting.append((self._index, fw, assumed, r.node,
                                      asyncio.ensure_future(fw.wait_on_permit(assumed))))
                st = None
        if st is not None and not st.is_success:
            fw.run_unreserve(state, assumed, r.node)
            self.cache.forget_pod(assumed)
            return explain.build(fw, state, pod, result="Unschedulable", message=st.message(), **kw)
        return explain.build(fw, state, pod, result="Scheduled", node=r.node,
                             total_nodes=r.diagnosis.num_all_nodes, evaluated=r.evaluated,
                             feasible=r.feasible, diagnosis=r.diagnosis, scored_rows=r.scored_rows,
                             per_plugin=r.per_plugin, total=r.total, **kw)


def entry(pod: dict, ex: dict) -> dict:
    """One pod's line of the report: where it goes and why."""
    meta = _meta(pod)
    return {"namespace": meta.get("namespace", ""), "name": meta.get("name", ""),
            "node": ex.get("node"), "filtered": ex.get("filtered", {}),
            "scores": ex.get("scores", {}), "totals": ex.get("totals", {}),
            "nominatedNode": ex.get("nominatedNode"), "victims": ex.get("victims", []),
            "message": ex.get("message", "")}


def schedule_snapshot(objects: Iterable[dict], config: Any = None, *, seed: int = 0,
                      gates: Mapping[str, bool] | None = None) -> dict:
    """Schedule a snapshot's pending pods; the report ``{"pods": [...]}``."""
    return OfflineScheduler(objects, config, seed=seed, gates=gates).run()


__all__ = ["GATED_MESSAGE", "OfflineScheduler", "SnapshotError", "classify", "entry",
           "load_objects", "parse_objects", "queue_order", "schedule_snapshot"]
