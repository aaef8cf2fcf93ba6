"""The pod garbage collector (kube-controller-manager's ``podgc``), every 20 s:

* terminated pods (phase neither Pending, Running nor Unknown) beyond
  ``--terminated-pod-gc-threshold`` (12 500; 0 turns it off) are deleted, evicted pods
  first, then the oldest, then by name;
* pods being deleted on a node that is not Ready and carries the
  ``node.kubernetes.io/out-of-service`` taint are finished;
* pods bound to a node that does not exist are finished once the node has been missing
  for 40 s (a live GET confirms it is gone), with the ``DisruptionTarget`` condition
  (reason ``DeletionByPodGC``, "PodGC: node no longer exists");
* pods being deleted that were never scheduled are finished.

"Finished": a pod not yet Succeeded or Failed is first marked ``Failed`` (with the
condition, for orphans) through a status patch, then deleted with grace period 0.
"""

from __future__ import annotations

import logging
from typing import Any

from kvert.api.errors import ApiError, NotFound
from kvert.api.meta import format_time
from kvert.client.base import Client
from kvert.clock import Clock
from kvert.controllers.base import Controller, InformerFactory
from kvert.controllers.util import creation_time, is_deleting

log = logging.getLogger(__name__)

GC_PERIOD = 20.0
QUARANTINE = 40.0
DEFAULT_THRESHOLD = 12500
OUT_OF_SERVICE_TAINT = "node.kubernetes.io/out-of-service"
_KEY = "gc"


def is_terminated(pod: dict) -> bool:
    """``isPodTerminated``: an empty phase counts too, as upstream."""
    return (pod.get("status") or {}).get("phase", "") not in ("Pending", "Running", "Unknown")


def is_evicted(pod: dict) -> bool:
    status = pod.get("status") or {}
    return status.get("phase") == "Failed" and status.get("reason") == "Evicted"


def gc_order(pod: dict) -> tuple:
    """``byEvictionAndCreationTimestamp``: evicted first, then the oldest, then by name."""
    meta = pod.get("metadata") or {}
    return (0 if is_evicted(pod) else 1, creation_time(pod), meta.get("namespace", ""), meta.get("name", ""))


def terminated_to_delete(pods: list[dict], threshold: int) -> list[dict]:
    """The terminated pods past the threshold, in deletion order."""
    if threshold <= 0:
        return []
    terminated = [p for p in pods if is_terminated(p)]
    excess = len(terminated) - threshold
    if excess <= 0:
        return []
    return sorted(terminated, key=gc_order)[:excess]


def _ready(node: dict) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (node.get("status") or {}).get("conditions") or [])


def _out_of_service(node: dict) -> bool:
    return any(t.get("key") == OUT_OF_SERVICE_TAINT for t in (node.get("spec") or {}).get("taints") or [])


class PodGC(Controller):
    name = "pod-garbage-collector"

    def __init__(self, client: Client, clock: Clock, *, informers: InformerFactory | None = None,
                 workers: int = 1, terminated_pod_gc_threshold: int = DEFAULT_THRESHOLD):
        super().__init__(client, clock, informers=informers, workers=1)
        self.threshold = terminated_pod_gc_threshold
        self.pods = self.use("pods")
        self.nodes = self.use("nodes")
        self._missing: dict[str, float] = {}      # node name -> when first seen missing
        self.deleted: list[tuple[str, str, str]] = []   # (namespace, name, why), latest 1000
        # kept from the pod events, so a pass costs the pods that matter, not all of them
        self._terminated: dict[tuple[str, str], dict] = {}
        self._deleting: dict[tuple[str, str], dict] = {}
        self._on_node: dict[str, dict[tuple[str, str], dict]] = {}
        self._node_of: dict[tuple[str, str], str] = {}
        self.pods.add_handlers(self._seen, lambda old, new: self._seen(new), self._forget)
        # whether a node or the set of nodes with pods changed since the last orphan check:
        # a pass with neither (and no node in quarantine) has nothing to look at
        self._nodes_changed = True
        self.nodes.add_handlers(self._node_changed, None, self._node_changed)
        self.enqueue(_KEY)

    def _seen(self, pod: dict) -> None:
        key = self._forget(pod)
        if is_terminated(pod):
            self._terminated[key] = pod
        if is_deleting(pod):
            self._deleting[key] = pod
        node = (pod.get("spec") or {}).get("nodeName")
        if node:
            if node not in self._on_node:
                self._nodes_changed = True
            self._on_node.setdefault(node, {})[key] = pod
            self._node_of[key] = node

    def _forget(self, pod: dict) -> tuple[str, str]:
        meta = pod.get("metadata") or {}
        key = (meta.get("namespace", ""), meta.get("name", ""))
        self._terminated.pop(key, None)
        self._deleting.pop(key, None)
        node = self._node_of.pop(key, None)
        if node is not None:
            pods = self._on_node[node]
            pods.pop(key, None)
            if not pods:
                del self._on_node[node]
        return key

    async def sync(self, key: str) -> None:
        try:
            await self.gc()
        finally:
            self.enqueue_after(_KEY, GC_PERIOD)

    async def gc(self) -> None:
        for pod in terminated_to_delete(list(self._terminated.values()), self.threshold):
            await self._finish(pod, "terminated", None)
        deleting = list(self._deleting.values())
        for pod in sorted(deleting, key=gc_order):
            node = self.nodes.get((pod.get("spec") or {}).get("nodeName") or "")
            if node is not None and not _ready(node) and _out_of_service(node):
                await self._finish(pod, "out-of-service", None)
        await self._orphans()
        for pod in deleting:
            if not (pod.get("spec") or {}).get("nodeName"):
                await self._finish(pod, "unscheduled-terminating", None)

    def _node_changed(self, node: dict) -> None:
        self._nodes_changed = True

    async def _orphans(self) -> None:
        if not self._nodes_changed and not self._missing:
            return
        self._nodes_changed = False
        now = self.clock.now()
        wanted = {n for n in self._on_node if self.nodes.get(n) is None}
        self._missing = {n: t for n, t in self._missing.items() if n in wanted}
        gone = set()
        for name in wanted:
            first = self._missing.setdefault(name, now)
            if now - first < QUARANTINE:
                continue
            try:
                await self.client.get("nodes", name)
                self._missing.pop(name, None)       # it exists after all: the cache lags
            except NotFound:
                gone.add(name)
        condition = {"type": "DisruptionTarget", "status": "True", "reason": "DeletionByPodGC",
                     "message": "PodGC: node no longer exists"}
        for name in sorted(gone):
            for pod in list(self._on_node.get(name, {}).values()):
                await self._finish(pod, "orphaned", condition)

    async def _finish(self, pod: dict, why: str, condition: dict | None) -> None:
        meta = pod.get("metadata") or {}
        name, namespace = meta.get("name", ""), meta.get("namespace", "")
        try:
            if (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed"):
                status: dict[str, Any] = {"phase": "Failed"}
                if condition is not None:
                    status["conditions"] = [{**condition, "lastProbeTime": None,
                                             "lastTransitionTime": format_time(self.clock.now())}]
                await self.client.patch("pods", name, {"status": status}, "strategic",
                                        namespace=namespace, subresource="status")
            await self.client.delete("pods", name, namespace=namespace, grace_period_seconds=0)
        except NotFound:
            return
        except ApiError as e:
            log.warning("%s: deleting pod %s/%s (%s) failed: %s", self.name, namespace, name, why, e)
            return
        self.deleted.append((namespace, name, why))
        del self.deleted[:-1000]
        log.info("%s: deleted %s pod %s/%s", self.name, why, namespace, name)
