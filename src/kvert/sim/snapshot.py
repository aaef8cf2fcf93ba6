"""Cluster snapshots: what ``kvert snapshot`` captures from an API server, and the loader
``kvert scenario import`` reads them with.

A snapshot is one ``apiVersion: v1, kind: List`` of the objects a simulation can rebuild a
cluster from (:data:`SNAPSHOT_KINDS`): Nodes (capacity, allocatable, labels, taints,
unschedulable), Namespaces, the workload controllers, bare Pods (no controller owner
reference: the simulation's controllers recreate the others), VPAs, HPAs (autoscaling/v2),
PodDisruptionBudgets, PriorityClasses, LimitRanges, ResourceQuotas and RuntimeClasses.

Every object, captured or loaded, goes through :func:`sanitize`: server-set metadata
(``managedFields``, uid, resourceVersion, generation, timestamps, controller bookkeeping
annotations) goes, owner references lose their uid, ``status`` goes except what a
simulation starts from (a Node's capacity and allocatable, a Pod's phase, a VPA's
recommendation, an HPA's current and desired replicas), and nothing secret is copied:
Secrets are never kept and every container's ``env`` entries keep only their names.

:func:`parse_snapshot` / :func:`load_snapshot` accept what ``kvert snapshot`` writes and what
``kubectl get ... -A -o yaml`` (or ``-o json``) prints: Lists (typed ones too), ``---``
streams, and several outputs appended to one file without a separator (each starts with a
top-level ``apiVersion:`` line; YAML itself would silently keep only the last one's keys).
"""

from __future__ import annotations

import asyncio
import copy
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import yaml

from kvert.api.errors import ApiError, Expired
from kvert.api.kinds import ResourceType, by_key
from kvert.api.manifests import ManifestError, read_objects
from kvert.client.base import Client

# kind -> the resource key it is listed by, in the snapshot's kind order
_RESOURCES = {
    "Node": "nodes",
    "Namespace": "namespaces",
    "Deployment": "apps/deployments",
    "ReplicaSet": "apps/replicasets",
    "StatefulSet": "apps/statefulsets",
    "DaemonSet": "apps/daemonsets",
    "Job": "batch/jobs",
    "CronJob": "batch/cronjobs",
    "Pod": "pods",
    "VerticalPodAutoscaler": "autoscaling.k8s.io/verticalpodautoscalers",
    "HorizontalPodAutoscaler": "autoscaling/horizontalpodautoscalers",
    "PodDisruptionBudget": "policy/poddisruptionbudgets",
    "PriorityClass": "scheduling.k8s.io/priorityclasses",
    "LimitRange": "limitranges",
    "ResourceQuota": "resourcequotas",
    "RuntimeClass": "node.k8s.io/runtimeclasses",
}
SNAPSHOT_KINDS: tuple[str, ...] = tuple(_RESOURCES)
_TYPES: dict[str, ResourceType] = {kind: by_key(res) for kind, res in _RESOURCES.items()}
_ORDER = {kind: i for i, kind in enumerate(SNAPSHOT_KINDS)}

PAGE_SIZE = 500

# Metadata the API server or a controller sets: not part of what a user declared.
_DROPPED_METADATA = ("managedFields", "uid", "resourceVersion", "generation", "creationTimestamp",
                     "selfLink", "deletionTimestamp", "deletionGracePeriodSeconds")
# Bookkeeping annotations written by kubectl, controllers, the kubelet and the VPA (the
# well-known annotations of kubernetes.io/docs/reference/labels-annotations-taints and the
# VPA admission controller's): their values describe a past state of the real cluster.
DROPPED_ANNOTATIONS = frozenset({
    "kubectl.kubernetes.io/last-applied-configuration",   # also holds env values in clear
    "deployment.kubernetes.io/revision",
    "deployment.kubernetes.io/revision-history",
    "deployment.kubernetes.io/desired-replicas",
    "deployment.kubernetes.io/max-replicas",
    "deprecated.daemonset.template.generation",
    "batch.kubernetes.io/job-tracking",
    "batch.kubernetes.io/cronjob-scheduled-timestamp",
    "autoscaling.alpha.kubernetes.io/conditions",
    "autoscaling.alpha.kubernetes.io/current-metrics",
    "node.alpha.kubernetes.io/ttl",
    "volumes.kubernetes.io/controller-managed-attach-detach",
    "kubeadm.alpha.kubernetes.io/cri-socket",
    "csi.volume.kubernetes.io/nodeid",
    "vpaUpdates",
    "vpaObservedContainers",
})
# the part of status kept per kind (everything else in status is dropped)
_KEPT_STATUS = {
    "Node": ("capacity", "allocatable"),
    "Pod": ("phase",),
    "VerticalPodAutoscaler": ("recommendation",),
    "HorizontalPodAutoscaler": ("currentReplicas", "desiredReplicas"),
}
_CONTAINER_LISTS = ("containers", "initContainers", "ephemeralContainers")
_UNKNOWN_WARNINGS_PER_KIND = 10


class SnapshotError(ManifestError):
    """A snapshot file cannot be read (the message names the file and the line or item)."""


class CaptureError(RuntimeError):
    """The API server refused or could not be reached (the message names it and the kind)."""


@dataclass
class ClusterSnapshot:
    objects: dict[str, list[dict]] = field(default_factory=dict)   # kind -> objects, file order
    warnings: list[str] = field(default_factory=list)
    source: str = ""

    def of(self, kind: str) -> list[dict]:
        return self.objects.get(kind, [])


def plural(kind: str) -> str:
    return kind + ("es" if kind.endswith("s") else "s")


def _ref(obj: dict) -> str:
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        meta = {}
    name, namespace = meta.get("name", ""), meta.get("namespace", "")
    return f"{namespace}/{name}" if namespace else str(name)


# ---------------------------------------------------------------------------------------------
# sanitizing
# ---------------------------------------------------------------------------------------------


def sanitize(obj: dict) -> dict | None:
    """A copy of ``obj`` without server-set metadata, status (but what a simulation starts
    from) and secret values; None for a Secret, which is never kept."""
    if obj.get("kind") == "Secret":
        return None
    out = copy.deepcopy(obj)
    meta = out.get("metadata")
    if isinstance(meta, dict):
        _clean_metadata(meta)
    if "status" in out:
        kept = _KEPT_STATUS.get(out.get("kind", ""), ())
        status = out["status"] if isinstance(out["status"], dict) else {}
        status = {k: status[k] for k in kept if k in status}
        if status:
            out["status"] = status
        else:
            del out["status"]
    _scrub(out)
    head = {k: out.pop(k) for k in ("apiVersion", "kind", "metadata") if k in out}
    status = {"status": out.pop("status")} if "status" in out else {}
    return {**head, **out, **status}              # the order kubectl users read objects in


def _clean_metadata(meta: dict) -> None:
    for key in _DROPPED_METADATA:
        meta.pop(key, None)
    annotations = meta.get("annotations")
    if isinstance(annotations, dict):
        for key in DROPPED_ANNOTATIONS & annotations.keys():
            del annotations[key]
        if not annotations:
            del meta["annotations"]
    owners = meta.get("ownerReferences")
    if isinstance(owners, list):
        for owner in owners:
            if isinstance(owner, dict):
                owner.pop("uid", None)


def _scrub(value: Any) -> None:
    """Everywhere below ``value``: containers' ``env`` entries reduced to their names (a pod
    spec may sit in a Pod, a template, a CronJob's jobTemplate, a custom resource), and the
    ``creationTimestamp: null`` kubectl prints in pod template metadata dropped."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key in _CONTAINER_LISTS and isinstance(item, list):
                for container in item:
                    if isinstance(container, dict) and "env" in container:
                        container["env"] = _env_names(container["env"])
            elif key == "metadata" and isinstance(item, dict) and "creationTimestamp" in item \
                    and item["creationTimestamp"] is None:
                del item["creationTimestamp"]
            _scrub(item)
    elif isinstance(value, list):
        for item in value:
            _scrub(item)


def _env_names(env: Any) -> list[dict]:
    if not isinstance(env, list):
        return []
    return [{"name": e["name"]} for e in env if isinstance(e, dict) and "name" in e]


def controlled(obj: dict) -> bool:
    """Whether an owner reference marks a controller (the pod is its controller's to recreate)."""
    owners = (obj.get("metadata") or {}).get("ownerReferences") or []
    return any(isinstance(o, dict) and o.get("controller") for o in owners)


def sort_key(obj: dict) -> tuple:
    """Cluster-scoped kinds first, then by namespace, kind (in SNAPSHOT_KINDS order) and name."""
    kind = obj.get("kind", "")
    meta = obj.get("metadata") or {}
    rt = _TYPES.get(kind)
    namespace = meta.get("namespace", "") if rt is None or rt.namespaced else ""
    return (1 if namespace else 0, namespace, _ORDER.get(kind, len(_ORDER)), kind,
            meta.get("name", ""))


# ---------------------------------------------------------------------------------------------
# capturing
# ---------------------------------------------------------------------------------------------


class _NotServed(Exception):
    pass


def _status_of(error: Exception) -> int:
    if isinstance(error, ApiError):
        if error.code != 500:
            return error.code
        m = re.search(r": HTTP (\d{3})\b", error.message)   # an error answer that is no Status
        return int(m.group(1)) if m else 500
    return 0


async def capture(client: Client, namespaces: Sequence[str] | None = None, *,
                  request_timeout: float | None = None,
                  page_size: int = PAGE_SIZE) -> tuple[dict, list[str]]:
    """(the ``v1 List`` of the snapshot, warnings), read through ``client`` page by page.

    ``namespaces`` restricts the namespaced kinds to those namespaces and the Namespaces to
    those named; cluster-scoped kinds are always read. A kind the server does not serve
    (404) is a warning; any other refusal, or a server that cannot be reached, raises
    :class:`CaptureError`."""
    server = getattr(client, "server", "") or "the API server"
    warnings: list[str] = []
    items: list[dict] = []
    wanted = list(dict.fromkeys(namespaces)) if namespaces else None

    async def call(what: str, op):
        try:
            return await asyncio.wait_for(op, request_timeout)
        except TimeoutError:
            raise CaptureError(f"cannot read {what} from {server}: no answer within "
                               f"{request_timeout:g} s") from None
        except ApiError:
            raise
        except (aiohttp.ClientError, OSError) as e:
            raise CaptureError(f"cannot reach {server} (reading {what}): {e}") from None

    def refused(what: str, e: ApiError) -> CaptureError:
        code = _status_of(e)
        return CaptureError(f"cannot read {what} from {server}: {e.reason or 'error'} "
                            f"({code}): {e.message}")

    async def list_all(kind: str, namespace: str | None) -> list[dict]:
        rt, token, limit = _TYPES[kind], "", page_size
        out: list[dict] = []
        while True:
            try:
                page = await call(plural(kind), client.list(
                    _RESOURCES[kind], namespace=namespace, limit=limit, continue_token=token))
            except Expired as e:
                if not token:
                    raise refused(plural(kind), e) from None
                out, token, limit = [], "", 0    # the continue token expired: one full list
                continue
            except ApiError as e:
                if _status_of(e) == 404:
                    raise _NotServed() from None
                raise refused(plural(kind), e) from None
            for item in page.get("items") or []:     # the version asked for, the List's kind
                if not item.get("kind") or not item.get("apiVersion"):
                    item = {"apiVersion": rt.api_version, "kind": kind, **item}
                out.append(item)
            token = (page.get("metadata") or {}).get("continue") or ""
            if not token:
                return out

    present = wanted
    for kind in SNAPSHOT_KINDS:
        rt = _TYPES[kind]
        try:
            if kind == "Namespace" and wanted is not None:
                found, present = [], []
                for name in wanted:
                    try:
                        ns = await call(f"Namespace {name}", client.get(_RESOURCES[kind], name))
                    except ApiError as e:
                        if _status_of(e) == 404:
                            warnings.append(f"Namespace {name}: not found on {server}; "
                                            f"nothing captured from it")
                            continue
                        raise refused(f"Namespace {name}", e) from None
                    found.append({"apiVersion": rt.api_version, "kind": kind, **ns})
                    present.append(name)
            elif rt.namespaced and present is not None:
                found = [o for ns in present for o in await list_all(kind, ns)]
            else:
                found = await list_all(kind, None)
        except _NotServed:
            warnings.append(f"{plural(kind)}: not served by {server}; none captured")
            continue
        for obj in found:
            if kind == "Pod" and controlled(obj):
                continue
            clean = sanitize(obj)
            if clean is not None:
                items.append(clean)
    items.sort(key=sort_key)
    return {"apiVersion": "v1", "kind": "List", "metadata": {}, "items": items}, warnings


def counts(snapshot_list: dict) -> dict[str, int]:
    """Objects per kind of a snapshot List, in SNAPSHOT_KINDS order."""
    out: dict[str, int] = {}
    for obj in snapshot_list.get("items") or []:
        out[obj.get("kind", "")] = out.get(obj.get("kind", ""), 0) + 1
    return dict(sorted(out.items(), key=lambda kv: _ORDER.get(kv[0], len(_ORDER))))


def dump(snapshot_list: dict) -> str:
    """The snapshot as YAML (keys in the objects' own order)."""
    return yaml.dump(snapshot_list, Dumper=_Dumper, sort_keys=False, default_flow_style=False,
                     allow_unicode=True, width=1 << 16)


_Dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


# ---------------------------------------------------------------------------------------------
# loading
# ---------------------------------------------------------------------------------------------

def _group(api_version: str) -> str:
    return api_version.split("/", 1)[0] if "/" in api_version else ""


def _hpa_v1_to_v2(obj: dict) -> dict:
    """An ``autoscaling/v1`` HPA in v2's shape (the API server's own conversion)."""
    spec = dict(obj.get("spec") or {})
    target = spec.pop("targetCPUUtilizationPercentage", None)
    if target is not None:
        spec["metrics"] = [{"type": "Resource", "resource": {
            "name": "cpu", "target": {"type": "Utilization", "averageUtilization": target}}}]
    return {**obj, "apiVersion": "autoscaling/v2", "spec": spec}


class _Builder:
    def __init__(self, source: str):
        self.snapshot = ClusterSnapshot(source=source)
        self._at: dict[tuple[str, str, str], tuple[str, int]] = {}   # key -> (where, index)
        self._unknown: dict[str, int] = {}
        self._owned = 0

    def add(self, obj: dict, where: str) -> None:
        kind, api_version = obj["kind"], obj["apiVersion"]
        warn = self.snapshot.warnings.append
        if kind == "Secret":
            warn(f"Secret {_ref(obj)}: dropped (kvert never keeps Secrets)")
            return
        rt = _TYPES.get(kind)
        if rt is not None and kind == "HorizontalPodAutoscaler":
            if api_version == "autoscaling/v1":
                obj = _hpa_v1_to_v2(obj)
            elif api_version == "autoscaling/v2beta2":
                obj = {**obj, "apiVersion": "autoscaling/v2"}
            elif api_version != "autoscaling/v2":
                warn(f"HorizontalPodAutoscaler {_ref(obj)}: ignored ({api_version} is not "
                     f"read; capture autoscaling/v2)")
                return
        if rt is None or _group(api_version) != rt.group:
            seen = self._unknown[kind] = self._unknown.get(kind, 0) + 1
            if seen <= _UNKNOWN_WARNINGS_PER_KIND:
                why = f"kvert does not simulate {plural(kind)}" if rt is None else \
                    f"{api_version} is not the Kubernetes {kind}"
                warn(f"{kind} {_ref(obj)}: ignored ({why})")
            return
        if kind == "Pod" and controlled(obj):
            self._owned += 1
            return
        clean = sanitize(obj)
        assert clean is not None
        meta = clean["metadata"]
        if rt.namespaced:
            meta.setdefault("namespace", "default")
        key = (kind, meta.get("namespace", "") if rt.namespaced else "", meta["name"])
        objects = self.snapshot.objects.setdefault(kind, [])
        if key in self._at:
            first, index = self._at[key]
            warn(f"{kind} {_ref(clean)}: duplicate ({first} and {where}); the later is kept")
            objects[index] = clean
            self._at[key] = (where, index)
        else:
            self._at[key] = (where, len(objects))
            objects.append(clean)

    def result(self) -> ClusterSnapshot:
        for kind, n in self._unknown.items():
            if n > _UNKNOWN_WARNINGS_PER_KIND:
                self.snapshot.warnings.append(
                    f"{kind}: {n - _UNKNOWN_WARNINGS_PER_KIND} more ignored")
        if self._owned:
            self.snapshot.warnings.append(
                f"Pods: {self._owned} owned by a controller not loaded (the simulation's "
                f"controllers recreate them)")
        return self.snapshot


def _read_objects(text: str, name: str) -> Iterator[tuple[dict, str]]:
    try:
        yield from read_objects(text, name)
    except ManifestError as e:
        raise SnapshotError(str(e)) from None


def parse_snapshot(text: str, name: str = "<snapshot>") -> ClusterSnapshot:
    """The snapshot in ``text`` (YAML or JSON; ``name`` is the file named in errors)."""
    builder = _Builder(name)
    for obj, where in _read_objects(text, name):
        builder.add(obj, where)
    return builder.result()


def load_snapshot(paths: Sequence[str | Path]) -> ClusterSnapshot:
    """The snapshot of several files merged, in order; an object in two of them (same kind,
    namespace and name) is a warning, and the later one is kept (at the earlier's place)."""
    if isinstance(paths, (str, Path)):
        paths = [paths]
    if not paths:
        raise SnapshotError("no snapshot file given")
    builder = _Builder(", ".join(str(p) for p in paths))
    for path in paths:
        try:
            text = Path(path).read_text()
        except (OSError, UnicodeDecodeError) as e:
            raise SnapshotError(f"cannot read {path}: {e}") from None
        for obj, where in _read_objects(text, str(path)):
            builder.add(obj, where)
    return builder.result()


__all__ = ["SNAPSHOT_KINDS", "CaptureError", "ClusterSnapshot", "SnapshotError", "capture",
           "controlled", "counts", "dump", "load_snapshot", "parse_snapshot", "sanitize",
           "sort_key"]
