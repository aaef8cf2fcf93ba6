"""The scheduler's node cache: capacity and usage of every node in numpy arrays.

One row per node (rows are reused after a node is deleted, so a node keeps its row for
its lifetime); one column per resource the scheduler counts (cpu in millicores, memory and
ephemeral-storage in bytes, then extended resources, hugepages-*, ... as they appear):

* ``alloc[row, col]``      ``status.allocatable``
* ``req[row, col]``        sum of the requests of the pods on the node, assumed pods included
* ``nonzero[row, 0|1]``    the same for cpu/memory with Kubernetes' non-zero defaults (100m,
                           200Mi for a container that requests nothing), used by scoring
* ``pod_count[row]``, ``allowed_pods[row]`` (allocatable ``pods``)
* ``unschedulable[row]``, ``taint_sig[row]`` (id of the node's taint list, interned by
  content), and lazily built per-label-key columns of interned value ids (:meth:`label_ids`)

A pod's requests are ``kvert.api.pods.pod_requests(pod, use_status_resources=True)``: while
an in-place resize is pending the larger of spec and allocated resources counts (seed 000),
as kube-scheduler counts a running pod with InPlacePodVerticalScaling. Pod overhead is in.

Assumed pods (Reserve): the scheduling cycle adds the pod to its node at once
(:meth:`assume_pod`); the binding cycle confirms it when the informer reports the pod bound,
or :meth:`forget_pod` takes it back if binding fails.
"""

from __future__ import annotations

import logging
from collections import Counter, OrderedDict
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import orjson

from kvert.api.pods import pod_level_resources, pod_requests
from kvert.api.quantity import QuantityError
from kvert.api.resources import ResourceList, is_extended_resource, parse_resource_list
from kvert.scheduler.nodeinfo import NodeInfo
from kvert.scheduler.podentry import HostPort, PodEntry, host_ports, pod_key, pod_uid
from kvert.scheduler.podindex import PodCounts, PodQuery
from kvert.scheduler.reader import PodListener
from kvert.scheduler.snapshot import Snapshot

log = logging.getLogger(__name__)

CPU, MEMORY, EPHEMERAL_STORAGE, PODS = "cpu", "memory", "ephemeral-storage", "pods"
CORE_RESOURCES = (CPU, MEMORY, EPHEMERAL_STORAGE)
DEFAULT_MILLI_CPU_REQUEST = 100                  # schedutil.DefaultMilliCPURequest
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024       # schedutil.DefaultMemoryRequest
ZONE_LABEL, REGION_LABEL = "topology.kubernetes.io/zone", "topology.kubernetes.io/region"
_LEGACY_ZONE, _LEGACY_REGION = ("failure-domain.beta.kubernetes.io/zone",
                                "failure-domain.beta.kubernetes.io/region")
NO_VALUE = -1


def is_scalar_resource(name: str) -> bool:
    """``IsScalarResourceName``: extended, hugepages-*, kubernetes.io/-prefixed, attachable volumes."""
    return (is_extended_resource(name) or name.startswith("hugepages-")
            or name.startswith("kubernetes.io/") or name.startswith("attachable-volumes-"))


def is_scheduled_resource(name: str) -> bool:
    """Resources the scheduler accounts (others in a request are ignored, as in Kubernetes)."""
    return name in CORE_RESOURCES or is_scalar_resource(name)


_MEMO: OrderedDict[tuple[str, str] | bytes, tuple[ResourceList, int, int]] = OrderedDict()
_MEMO_SIZE = 8192


def _memo_key(pod: Mapping[str, Any]) -> tuple[str, str] | None:
    meta = pod.get("metadata") or {}
    uid, rv = meta.get("uid"), meta.get("resourceVersion")
    return (uid, rv) if uid and rv else None


def pod_resources(pod: Mapping[str, Any]) -> tuple[ResourceList, int, int]:
    """(scheduler requests, non-zero cpu, non-zero memory) of a pod, memoized per pod version
    (uid + resourceVersion: any change of the pod makes a new version). Parsing quantities is
    the costly part of a scheduling cycle; a pod is looked at several times per cycle."""
    key = _memo_key(pod)
    if key is not None:
        hit = _MEMO.get(key)
        if hit is not None:
            _MEMO.move_to_end(key)
            return hit
    inputs = _inputs_key(pod)
    if inputs is not None:
        hit = _MEMO.get(inputs)
        if hit is not None:
            _MEMO.move_to_end(inputs)
            if key is not None:
                _MEMO[key] = hit
            return hit
    status = pod.get("status") or {}
    # Without container statuses (a pending pod) the in-place resize rule reduces to the
    # spec; counting the spec alone parses each quantity once instead of three times.
    with_status = bool(status.get("containerStatuses") or status.get("initContainerStatuses")
                       or status.get("conditions"))
    reqs = pod_requests(pod, use_status_resources=with_status)
    req = {k: v for k, v in reqs.items() if v and is_scheduled_resource(k)}
    value = (req, *_non_zero(pod, reqs, with_status))
    for k in (key, inputs):
        if k is not None:
            _MEMO[k] = value
    while len(_MEMO) > _MEMO_SIZE:
        _MEMO.popitem(last=False)
    return value


def _inputs_key(pod: Mapping[str, Any]) -> bytes | None:
    """Everything the accounted requests are computed from, as one key: a pod's new version
    that changed none of it (a status write of its phase or IPs), and the replicas of one
    template once running alike, are counted once (a thousand-node resize wave recounted
    every pod at each of its status writes)."""
    spec = pod.get("spec") or {}
    status = pod.get("status") or {}
    try:
        return orjson.dumps((
            [(c.get("name"), c.get("resources"), c.get("restartPolicy")) for c in spec.get("containers") or ()],
            [(c.get("name"), c.get("resources"), c.get("restartPolicy")) for c in spec.get("initContainers") or ()],
            spec.get("overhead"), spec.get("resources"),
            [(s.get("name"), s.get("allocatedResources"), s.get("resources"))
             for s in status.get("containerStatuses") or ()],
            [(s.get("name"), s.get("allocatedResources"), s.get("resources"))
             for s in status.get("initContainerStatuses") or ()],
            [c.get("reason") for c in status.get("conditions") or () if c.get("type") == "PodResizePending"],
            bool(status.get("conditions"))))
    except (AttributeError, TypeError, orjson.JSONEncodeError):
        return None       # not JSON-shaped: counted without the memo


def without_pod_level_resources(pod: Mapping[str, Any]) -> dict[str, Any]:
    """The pod as a scheduler with the PodLevelResources gate off counts it: without
    ``spec.resources`` and its resourceVersion (so the requests memo keys this copy by its
    inputs, not by the pod's version)."""
    spec = pod.get("spec") or {}
    if "resources" not in spec:
        return dict(pod)
    meta = {k: v for k, v in (pod.get("metadata") or {}).items() if k != "resourceVersion"}
    return {**pod, "metadata": meta, "spec": {k: v for k, v in spec.items() if k != "resources"}}


def scheduler_requests(pod: Mapping[str, Any]) -> ResourceList:
    """The pod's requests as the scheduler accounts them (in-place resize rule, overhead)."""
    return dict(pod_resources(pod)[0])


def non_zero_requests(pod: Mapping[str, Any]) -> tuple[int, int]:
    """(cpu, memory) requests with Kubernetes' defaults for containers that request none."""
    _, cpu, mem = pod_resources(pod)
    return cpu, mem


def _non_zero(pod: Mapping[str, Any], reqs: ResourceList, with_status: bool = True
              ) -> tuple[int, int]:
    """(cpu, memory) requests with Kubernetes' defaults for containers that request none.

    ``NonMissingContainerRequests``: a container (app or init) without a cpu request counts
    100m, without a memory request 200Mi -- unless pod-level ``spec.resources`` sets it.
    The pod is rewritten with those defaults and counted by the same helper, so sidecars,
    init containers, overhead and the resize rule apply unchanged.
    """
    spec = pod.get("spec") or {}
    level = None
    if spec.get("resources") is not None:
        try:
            level = pod_level_resources(pod)
        except QuantityError:
            level = None
    set_at_pod = level[0] if level is not None else {}
    changed = False

    def fix(c: Mapping[str, Any]) -> Mapping[str, Any]:
        nonlocal changed
        res = c.get("resources") or {}
        # a request defaults from the limit (container_requests); key presence is enough
        have = set(res.get("requests") or ()) | set(res.get("limits") or ())
        need = {}
        if CPU not in have and CPU not in set_at_pod:
            need[CPU] = f"{DEFAULT_MILLI_CPU_REQUEST}m"
        if MEMORY not in have and MEMORY not in set_at_pod:
            need[MEMORY] = str(DEFAULT_MEMORY_REQUEST)
        if not need:
            return c
        changed = True
        res = dict(c.get("resources") or {})
        res["requests"] = {**(res.get("requests") or {}), **need}
        return {**c, "resources": res}

    containers = [fix(c) for c in spec.get("containers") or []]
    inits = [fix(c) for c in spec.get("initContainers") or []]
    if changed:
        pod = {**pod, "spec": {**spec, "containers": containers, "initContainers": inits}}
        reqs = pod_requests(pod, use_status_resources=with_status)
    return reqs.get(CPU, 0), reqs.get(MEMORY, 0)


def zone_key(labels: Mapping[str, str]) -> str:
    """``utilnode.GetZoneKey``: region and zone, "" when the node has neither."""
    region = labels.get(REGION_LABEL) or labels.get(_LEGACY_REGION) or ""
    zone = labels.get(ZONE_LABEL) or labels.get(_LEGACY_ZONE) or ""
    if not region and not zone:
        return ""
    return f"{region}:\x00:{zone}"


def taint_key(taints: Iterable[Mapping[str, Any]] | None) -> tuple:
    return tuple((t.get("key") or "", t.get("value") or "", t.get("effect") or "")
                 for t in taints or ())


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


def _request_inputs(pod: Mapping[str, Any]) -> tuple:
    """Everything a pod's accounted requests depend on (to skip recounting unchanged pods)."""
    spec = pod.get("spec") or {}
    status = pod.get("status") or {}
    resize = [c for c in status.get("conditions") or () if c.get("type") == "PodResizePending"]
    return (spec.get("containers"), spec.get("initContainers"), spec.get("overhead"),
            spec.get("resources"), status.get("containerStatuses"),
            status.get("initContainerStatuses"), resize)


def count_ports(used: Counter[HostPort], ports: Iterable[HostPort], sign: int) -> None:
    """Add (sign +1) or take away (-1) host ports in use on a node."""
    if sign > 0:
        used.update(ports)
        return
    used.subtract(ports)
    for p in ports:
        if used[p] <= 0:
            del used[p]


def _counted_meta(pod: Mapping[str, Any]) -> tuple:
    """The metadata pod-aware plugins count by: labels and whether the pod is terminating."""
    meta = _meta(pod)
    return meta.get("labels"), bool(meta.get("deletionTimestamp"))


def _counts_alike(a: PodEntry, b: PodEntry) -> bool:
    """Whether two entries of a pod count the same on the same node (all but the pod object)."""
    return (a.node == b.node and a.req == b.req and a.nz_cpu == b.nz_cpu and a.nz_mem == b.nz_mem
            and a.key == b.key and a.ns == b.ns and a.labels == b.labels and a.terminating == b.terminating
            and a.priority == b.priority and a.ports == b.ports)


class NodeCache:
    """Nodes and the pods on them, as arrays (see the module docstring)."""

    def __init__(self, capacity: int = 64):
        cap = max(int(capacity), 8)
        self.cols: dict[str, int] = {CPU: 0, MEMORY: 1, EPHEMERAL_STORAGE: 2}
        self.col_names: list[str] = [CPU, MEMORY, EPHEMERAL_STORAGE]
        ncol = len(self.col_names)
        self.alloc = np.zeros((cap, ncol), np.int64)
        self.req = np.zeros((cap, ncol), np.int64)
        self.nonzero = np.zeros((cap, 2), np.int64)
        self.pod_count = np.zeros(cap, np.int64)
        self.allowed_pods = np.zeros(cap, np.int64)
        self.unschedulable = np.zeros(cap, bool)
        self.taint_sig = np.zeros(cap, np.int32)
        self.valid = np.zeros(cap, bool)
        # alloc_has[row, col]: the resource is listed in the node's allocatable (scoring skips
        # scalar resources a node does not list)
        self.alloc_has = np.zeros((cap, ncol), bool)
        self.names: list[str | None] = [None] * cap
        self.node_objs: list[dict | None] = [None] * cap
        self.row_of: dict[str, int] = {}
        self._free_rows: list[int] = []
        self._next_row = 0
        # taints interned by content; id 0 = no taints
        self.taint_sigs: list[tuple[dict, ...]] = [()]
        self._taint_ids: dict[tuple, int] = {(): 0}
        # label key -> value ids per row; per key: value -> id and id -> value
        self._label_cols: dict[str, np.ndarray] = {}
        self._label_ids: dict[str, dict[str, int]] = {}
        self._label_values: dict[str, list[str]] = {}
        # pods
        self.pods: dict[str, PodEntry] = {}
        self.node_pods: dict[str, set[str]] = {}
        # host ports in use per node name, and per row whether any is (NodePorts)
        self.used_ports: dict[str, Counter[HostPort]] = {}
        self.port_count = np.zeros(cap, np.int64)
        # node images: per row {image name: size}; per name the number of nodes having it
        self.node_images: list[dict[str, int] | None] = [None] * cap
        self.image_node_count: Counter[str] = Counter()
        # namespaces' labels (namespaceSelector of affinity terms); a missing one has none
        self.namespace_labels: dict[str, Mapping[str, str]] = {}
        # per-query counts of matching pods per row (inter-pod affinity, topology spread)
        self.pod_counts = PodCounts(cap, lambda ns: self.namespace_labels.get(ns) or {})
        # indexes plugins keep over the accounted pods (see add_pod_listener)
        self._listeners: list[PodListener] = [self.pod_counts]
        # pods nominated to nodes by preemption (the queue's nominator): node -> uid -> pod
        self.nominated: dict[str, dict[str, dict]] = {}
        self._nominated_node: dict[str, str] = {}
        # walk order (node tree)
        self._zones: dict[str, list[str]] = {}
        self._zone_of: dict[str, str] = {}
        self._order: np.ndarray | None = None
        self.generation = 0          # bumps on every change
        self.node_generation = 0     # bumps when a node is added, changed or removed
        # the PodLevelResources gate: off, a pod's spec.resources is not counted (upstream's
        # SkipPodLevelResources)
        self.pod_level_resources = True

    # ---- sizes ------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.row_of)

    @property
    def capacity(self) -> int:
        return len(self.valid)

    def _grow_rows(self, need: int) -> None:
        cap = self.capacity
        if need <= cap:
            return
        new = max(need, cap * 2)

        def grow(a: np.ndarray) -> np.ndarray:
            shape = (new,) + a.shape[1:]
            b = np.zeros(shape, a.dtype)
            b[:cap] = a
            return b

        self.alloc, self.req, self.nonzero = grow(self.alloc), grow(self.req), grow(self.nonzero)
        self.pod_count, self.allowed_pods = grow(self.pod_count), grow(self.allowed_pods)
        self.port_count = grow(self.port_count)
        for listener in self._listeners:
            listener.grow(new)
        self.node_images.extend([None] * (new - cap))
        self.unschedulable, self.taint_sig = grow(self.unschedulable), grow(self.taint_sig)
        self.valid, self.alloc_has = grow(self.valid), grow(self.alloc_has)
        for key, col in list(self._label_cols.items()):
            b = np.full(new, NO_VALUE, np.int32)
            b[:cap] = col
            self._label_cols[key] = b
        self.names.extend([None] * (new - cap))
        self.node_objs.extend([None] * (new - cap))

    def col(self, name: str) -> int:
        """Column of a resource, or -1 if no node or pod has mentioned it yet."""
        return self.cols.get(name, -1)

    def ensure_col(self, name: str) -> int:
        c = self.cols.get(name)
        if c is not None:
            return c
        c = len(self.col_names)
        self.cols[name] = c
        self.col_names.append(name)
        cap = self.capacity
        self.alloc = np.hstack([self.alloc, np.zeros((cap, 1), np.int64)])
        self.req = np.hstack([self.req, np.zeros((cap, 1), np.int64)])
        self.alloc_has = np.hstack([self.alloc_has, np.zeros((cap, 1), bool)])
        return c

    # ---- nodes --------------------------------------------------------------------------

    def add_node(self, node: dict) -> None:
        name = _meta(node).get("name", "")
        if name in self.row_of:
            self.update_node(self.node_objs[self.row_of[name]], node)
            return
        if self._free_rows:
            row = self._free_rows.pop()
        else:
            row = self._next_row
            self._next_row += 1
            self._grow_rows(self._next_row)
        self.row_of[name] = row
        self.names[row] = name
        self.valid[row] = True
        self._set_node(row, node)
        self._zone_add(name, zone_key(_meta(node).get("labels") or {}))
        # pods the informer reported before their node
        self.req[row] = 0
        self.nonzero[row] = 0
        self.pod_count[row] = 0
        self.port_count[row] = 0
        for listener in self._listeners:
            listener.clear_row(row)
        for uid in self.node_pods.get(name, ()):
            self._account(self.pods[uid], row, +1)
        self._changed(nodes=True, order=True)

    def update_node(self, old: dict | None, node: dict) -> None:
        name = _meta(node).get("name", "")
        row = self.row_of.get(name)
        if row is None:
            self.add_node(node)
            return
        self._set_node(row, node)
        zone = zone_key(_meta(node).get("labels") or {})
        moved = self._zone_of.get(name) != zone
        if moved:
            self._zone_remove(name)
            self._zone_add(name, zone)
        self._changed(nodes=True, order=moved)

    def remove_node(self, node: dict) -> None:
        name = _meta(node).get("name", "")
        row = self.row_of.pop(name, None)
        if row is None:
            return
        self.valid[row] = False
        self.names[row] = None
        self.node_objs[row] = None
        self.alloc[row] = 0
        self.alloc_has[row] = False
        self.req[row] = 0
        self.nonzero[row] = 0
        self.pod_count[row] = 0
        self.allowed_pods[row] = 0
        self.unschedulable[row] = False
        self.taint_sig[row] = 0
        self.port_count[row] = 0
        for listener in self._listeners:
            listener.clear_row(row)
        self._set_images(row, None)
        for col in self._label_cols.values():
            col[row] = NO_VALUE
        self._free_rows.append(row)
        self._zone_remove(name)
        self._changed(nodes=True, order=True)

    def _set_node(self, row: int, node: dict) -> None:
        self.node_objs[row] = node
        try:
            alloc = parse_resource_list((node.get("status") or {}).get("allocatable"))
        except QuantityError as e:
            log.warning("node %s: bad allocatable (%s); counting it as empty", self.names[row], e)
            alloc = {}
        self.alloc[row] = 0
        self.alloc_has[row] = False
        for res, value in alloc.items():
            if res == PODS:
                continue
            if is_scheduled_resource(res):
                c = self.ensure_col(res)
                self.alloc[row, c] = value
                self.alloc_has[row, c] = True
        self.allowed_pods[row] = alloc.get(PODS, 0)
        spec = node.get("spec") or {}
        self.unschedulable[row] = bool(spec.get("unschedulable"))
        self.taint_sig[row] = self._intern_taints(spec.get("taints"))
        labels = _meta(node).get("labels") or {}
        for key, col in self._label_cols.items():
            col[row] = self._intern_label(key, labels.get(key))
        self._set_images(row, (node.get("status") or {}).get("images"))

    def _set_images(self, row: int, images: list | None) -> None:
        """``status.images`` of the node at ``row`` (ImageLocality's image states)."""
        old = self.node_images[row]
        sizes: dict[str, int] = {}
        for img in images or ():
            size = img.get("sizeBytes") if isinstance(img, dict) else None
            size = size if isinstance(size, int) and not isinstance(size, bool) else 0
            for n in (img.get("names") or ()) if isinstance(img, dict) else ():
                if isinstance(n, str):
                    sizes[n] = size
        if old == (sizes or None):
            return
        if old:
            self.image_node_count.subtract(old.keys())
            for n in old:
                if self.image_node_count[n] <= 0:
                    del self.image_node_count[n]
        self.node_images[row] = sizes or None
        if sizes:
            self.image_node_count.update(sizes.keys())

    def _intern_taints(self, taints: list | None) -> int:
        key = taint_key(taints)
        tid = self._taint_ids.get(key)
        if tid is None:
            tid = len(self.taint_sigs)
            self._taint_ids[key] = tid
            self.taint_sigs.append(tuple({"key": k, "value": v, "effect": e} if v else
                                         {"key": k, "effect": e} for k, v, e in key))
        return tid

    # ---- labels ---------------------------------------------------------------------------

    def _intern_label(self, key: str, value: str | None) -> int:
        if value is None:
            return NO_VALUE
        ids = self._label_ids[key]
        vid = ids.get(value)
        if vid is None:
            vid = len(self._label_values[key])
            ids[value] = vid
            self._label_values[key].append(value)
        return vid

    def label_ids(self, key: str) -> np.ndarray:
        """Per row: the interned id of the node's value for label ``key`` (-1 when absent).
        Built on first use (one pass over the nodes), then kept up to date."""
        col = self._label_cols.get(key)
        if col is None:
            self._label_ids[key] = {}
            self._label_values[key] = []
            col = np.full(self.capacity, NO_VALUE, np.int32)
            for row in self.row_of.values():
                labels = _meta(self.node_objs[row] or {}).get("labels") or {}
                col[row] = self._intern_label(key, labels.get(key))
            self._label_cols[key] = col
        return col

    def label_value(self, key: str, vid: int) -> str | None:
        return None if vid < 0 else self._label_values[key][vid]

    # ---- pods -----------------------------------------------------------------------------

    def _entry(self, pod: dict, node: str, assumed: bool = False) -> PodEntry:
        try:
            req, nz_cpu, nz_mem = pod_resources(
                pod if self.pod_level_resources else without_pod_level_resources(pod))
        except QuantityError as e:
            log.warning("pod %s: bad resources (%s); counting none", pod_key(pod), e)
            req, nz_cpu, nz_mem = {}, 0, 0
        return PodEntry.of(pod, node, req, nz_cpu, nz_mem, assumed)

    def _account(self, e: PodEntry, row: int, sign: int) -> None:
        for res, value in e.req.items():
            c = self.ensure_col(res)
            self.req[row, c] += sign * value
        self.nonzero[row, 0] += sign * e.nz_cpu
        self.nonzero[row, 1] += sign * e.nz_mem
        self.pod_count[row] += sign
        if e.ports:
            count_ports(self.used_ports.setdefault(e.node, Counter()), e.ports, sign)
            if not self.used_ports[e.node]:
                del self.used_ports[e.node]
            self.port_count[row] += sign * len(e.ports)
        for listener in self._listeners:
            listener.account(e, row, sign)

    def add_pod_listener(self, listener: PodListener) -> None:
        """Keep ``listener`` told of every pod counted on a node row or taken off it:
        ``account(entry, row, sign)`` (+1 / -1), ``clear_row(row)`` (a node went away or was
        recounted), ``grow(capacity)`` (rows were added). It is first told of the pods already
        counted. Plugins keep incremental indexes this way (as :class:`PodCounts` does)."""
        listener.grow(self.capacity)
        for entry, row in self.accounted_entries():
            listener.account(entry, row, +1)
        self._listeners.append(listener)

    def _attach(self, e: PodEntry) -> None:
        self.pods[e.uid] = e
        self.node_pods.setdefault(e.node, set()).add(e.uid)
        row = self.row_of.get(e.node)
        if row is not None:
            self._account(e, row, +1)

    def _detach(self, e: PodEntry) -> None:
        self.pods.pop(e.uid, None)
        members = self.node_pods.get(e.node)
        if members is not None:
            members.discard(e.uid)
            if not members:
                del self.node_pods[e.node]
        row = self.row_of.get(e.node)
        if row is not None:
            self._account(e, row, -1)

    def add_pod(self, pod: dict) -> None:
        """An assigned pod seen by the informer (confirms an assumed pod)."""
        node = (pod.get("spec") or {}).get("nodeName") or ""
        if not node:
            return
        uid = pod_uid(pod)
        old = self.pods.get(uid)
        if old is not None:
            self._detach(old)
        self._attach(self._entry(pod, node))
        self._changed()

    def update_pod(self, old: dict | None, pod: dict) -> tuple[ResourceList, ResourceList] | None:
        """Returns (old requests, new requests) when the pod's accounted requests changed."""
        uid = pod_uid(pod)
        before = self.pods.get(uid)
        node = (pod.get("spec") or {}).get("nodeName") or ""
        if not node:
            if before is not None and not before.assumed:
                self._detach(before)
                self._changed()
            return None
        if before is not None and before.node == node and not before.assumed and old is not None \
                and old.get("spec") == pod.get("spec") and old.get("status") == pod.get("status") \
                and _counted_meta(old) == _counted_meta(pod):
            before.pod = pod
            return None
        new: PodEntry | None = None
        if before is not None and _request_inputs(before.pod) == _request_inputs(pod):
            if not (before.node == node and _counted_meta(before.pod) == _counted_meta(pod)
                    and before.pod.get("spec") == pod.get("spec")):
                # same requests: e.g. the binding of an assumed pod, now confirmed
                new = before.with_pod(pod, node)
        else:
            new = self._entry(pod, node)
        if before is not None and not before.assumed and (new is None or _counts_alike(before, new)):
            # e.g. a status write that changed nothing counted: the entry takes the new
            # version in place, as the listeners' indexes would end where they began
            before.pod = pod
            self._changed()
            return None
        if new is None:           # an assumed pod confirmed unchanged
            assert before is not None   # new is None only when before's requests matched
            new = before.with_pod(pod, node)
        if before is not None:
            self._detach(before)
        self._attach(new)
        self._changed()
        if before is not None and before.req != new.req:
            return before.req, new.req
        return None

    def remove_pod(self, pod: dict) -> PodEntry | None:
        e = self.pods.get(pod_uid(pod))
        if e is None:
            return None
        self._detach(e)
        self._changed()
        return e

    def assume_pod(self, pod: dict, node: str) -> dict:
        """Reserve: account the pod on ``node`` now; returns the assumed copy (nodeName set)."""
        assumed = {**pod, "spec": {**(pod.get("spec") or {}), "nodeName": node}}
        uid = pod_uid(pod)
        if uid in self.pods:
            raise ValueError(f"pod {pod_key(pod)} is already in the cache")
        self._attach(self._entry(assumed, node, assumed=True))
        self._changed()
        return assumed

    def finish_binding(self, pod: dict) -> None:
        e = self.pods.get(pod_uid(pod))
        if e is not None:
            e.binding_finished = True

    def forget_pod(self, pod: dict) -> None:
        e = self.pods.get(pod_uid(pod))
        if e is not None and e.assumed:
            self._detach(e)
            self._changed()

    def is_assumed(self, pod: dict) -> bool:
        e = self.pods.get(pod_uid(pod))
        return e is not None and e.assumed

    def has_pod(self, pod: dict) -> bool:
        return pod_uid(pod) in self.pods

    def entry(self, uid: str) -> PodEntry | None:
        return self.pods.get(uid)

    def node_entries(self, name: str) -> list[PodEntry]:
        """The pods on node ``name`` (assumed ones included), in no particular order."""
        pods = self.pods
        return [pods[u] for u in self.node_pods.get(name, ())]

    def accounted_entries(self) -> Iterable[tuple[PodEntry, int]]:
        """(pod, row) of every pod counted on a known node."""
        row_of = self.row_of
        for name, uids in self.node_pods.items():
            row = row_of.get(name)
            if row is None:
                continue
            for u in uids:
                yield self.pods[u], row

    def count_matching(self, query: PodQuery) -> np.ndarray:
        """Per row, the number of pods on the node matching ``query`` (read-only array of
        length :attr:`capacity`; index it with a NodeSet's rows)."""
        return self.pod_counts.counts(query, self.accounted_entries)

    # ---- namespaces ----------------------------------------------------------------------

    def set_namespace(self, ns: dict) -> None:
        meta = _meta(ns)
        name = meta.get("name") or ""
        labels = meta.get("labels") or {}
        if self.namespace_labels.get(name) != labels:
            self.namespace_labels[name] = labels
            self.pod_counts.namespaces_changed()
            self._changed()

    def remove_namespace(self, ns: dict) -> None:
        if self.namespace_labels.pop(_meta(ns).get("name") or "", None) is not None:
            self.pod_counts.namespaces_changed()
            self._changed()

    # ---- nominated pods (preemption) --------------------------------------------------------

    def add_nominated(self, pod: dict, node: str) -> None:
        """``nominator.AddNominatedPod``: ``pod`` (not yet bound) is expected on ``node``."""
        self.delete_nominated(pod)
        if not node:
            return
        uid = pod_uid(pod)
        self.nominated.setdefault(node, {})[uid] = pod
        self._nominated_node[uid] = node
        self._changed()

    def delete_nominated(self, pod: dict) -> None:
        uid = pod_uid(pod)
        node = self._nominated_node.pop(uid, None)
        if node is None:
            return
        members = self.nominated.get(node)
        if members is not None:
            members.pop(uid, None)
            if not members:
                del self.nominated[node]
        self._changed()

    def update_nominated(self, old: dict | None, pod: dict) -> None:
        """An unscheduled pod was added or changed (``updateNominatedPod``): its nomination
        follows ``status.nominatedNodeName``, except that a nomination the scheduler made
        and the API has not reported yet (the field empty before and after) is kept."""
        uid = pod_uid(pod)
        node = (pod.get("status") or {}).get("nominatedNodeName") or ""
        was = ((old or {}).get("status") or {}).get("nominatedNodeName") or ""
        current = self._nominated_node.get(uid)
        if not node and not was and current is not None:
            self.nominated[current][uid] = pod
        elif node:
            if node != current:
                self.add_nominated(pod, node)
            else:
                self.nominated[node][uid] = pod
        elif current is not None:
            self.delete_nominated(pod)

    def nominated_node(self, pod: dict) -> str:
        return self._nominated_node.get(pod_uid(pod), "")

    def nominated_pods(self, node: str) -> list[dict]:
        return list((self.nominated.get(node) or {}).values())

    # ---- views --------------------------------------------------------------------------

    def node(self, name: str) -> dict | None:
        row = self.row_of.get(name)
        return None if row is None else self.node_objs[row]

    def node_info(self, row: int) -> NodeInfo:
        name = self.names[row] or ""
        alloc = {n: int(self.alloc[row, c]) for n, c in self.cols.items() if self.alloc_has[row, c]}
        req = {n: int(self.req[row, c]) for n, c in self.cols.items() if self.req[row, c]}
        pods = [self.pods[u].pod for u in sorted(self.node_pods.get(name, ()))]
        return NodeInfo(self.node_objs[row] or {}, row, alloc, req,
                        {CPU: int(self.nonzero[row, 0]), MEMORY: int(self.nonzero[row, 1])},
                        int(self.allowed_pods[row]), pods)

    def node_info_by_name(self, name: str) -> NodeInfo | None:
        row = self.row_of.get(name)
        return None if row is None else self.node_info(row)

    def snapshot(self) -> Snapshot:
        if self._order is None:
            self._order = self._build_order()
        return Snapshot(self, self._order, self.generation)

    # ---- node tree ----------------------------------------------------------------------

    def _zone_add(self, name: str, zone: str) -> None:
        self._zones.setdefault(zone, []).append(name)
        self._zone_of[name] = zone

    def _zone_remove(self, name: str) -> None:
        zone = self._zone_of.pop(name, None)
        if zone is None:
            return
        members = self._zones.get(zone)
        if members is not None:
            members.remove(name)
            if not members:
                del self._zones[zone]

    def _build_order(self) -> np.ndarray:
        zones = [z for z in self._zones.values() if z]
        if len(zones) <= 1:
            names = zones[0] if zones else []
        else:
            names = []
            depth = max(len(z) for z in zones)
            for i in range(depth):
                for z in zones:
                    if i < len(z):
                        names.append(z[i])
        return np.fromiter((self.row_of[n] for n in names), dtype=np.int64, count=len(names))

    def _changed(self, nodes: bool = False, order: bool = False) -> None:
        self.generation += 1
        if nodes:
            self.node_generation += 1
        if order:
            self._order = None


# what other modules import from here (PodEntry and the pod identity helpers live in
# podentry, NodeInfo in nodeinfo, the extended-resource predicate in kvert.api.resources)
__all__ = ["CORE_RESOURCES", "CPU", "DEFAULT_MEMORY_REQUEST", "DEFAULT_MILLI_CPU_REQUEST",
           "EPHEMERAL_STORAGE", "MEMORY", "NO_VALUE", "PODS", "REGION_LABEL", "ZONE_LABEL",
           "NodeCache", "NodeInfo", "PodEntry", "count_ports", "host_ports", "is_extended_resource",
           "is_scalar_resource", "is_scheduled_resource", "non_zero_requests", "pod_key",
           "pod_resources", "pod_uid", "scheduler_requests", "taint_key", "zone_key"]
