"""What the cluster's nodes can hold, for the capacity-aware VPA (kvert's opt-in
``vpa.kvert.io/capacity-aware: "true"``, ``RecommenderConfig.capacity_aware``; see
docs/kubernetes-choices.md).

``NodeRoom`` is a snapshot of the nodes a pod could be scheduled to (Ready, schedulable,
taints tolerated, ``nodeSelector`` matched) with their allocatable and what the pods bound
to them request. It answers the two questions the capacity-aware VPA asks: the most a pod
could ever request on one node (the recommender caps its target there), and whether a
replacement pod at new requests would fit somewhere now (the updater does not evict a pod
whose replacement would stay Pending).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kvert.api.pods import pod_requests
from kvert.api.quantity import Quantity, to_int
from kvert.api.taints import tolerates_taints
from kvert.vpa.recommendation import DEFAULT_CONFIG

RESOURCES = ("cpu", "memory")


def capacity_aware(vpa: Mapping) -> bool:
    """Whether the VPA opted in (``vpa.kvert.io/capacity-aware: "true"``)."""
    return DEFAULT_CONFIG.for_vpa(vpa)[0].capacity_aware


def _ready(node: Mapping) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (node.get("status") or {}).get("conditions") or [])


def _allocatable(node: Mapping) -> dict[str, int]:
    alloc = (node.get("status") or {}).get("allocatable") or {}
    return {r: to_int(r, alloc[r]) for r in RESOURCES if r in alloc}


def _terminal(pod: Mapping) -> bool:
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


class NodeRoom:
    def __init__(self, nodes: Iterable[Mapping], pods: Iterable[Mapping]) -> None:
        self.nodes = {n["metadata"]["name"]: n for n in nodes
                      if _ready(n) and not (n.get("spec") or {}).get("unschedulable")}
        self.allocatable = {name: _allocatable(n) for name, n in self.nodes.items()}
        self.used: dict[str, dict[str, int]] = {name: dict.fromkeys(RESOURCES, 0) for name in self.nodes}
        for pod in pods:
            node = (pod.get("spec") or {}).get("nodeName")
            if node in self.used and not _terminal(pod):
                self._add(node, pod_requests(pod, use_status_resources=True))

    def _add(self, node: str, requests: Mapping[str, int], sign: int = 1) -> None:
        used = self.used[node]
        for r in RESOURCES:
            used[r] += sign * requests.get(r, 0)

    def hosts(self, pod: Mapping) -> list[str]:
        """The nodes the pod could be scheduled to, by their labels and taints."""
        spec = pod.get("spec") or {}
        selector = spec.get("nodeSelector") or {}
        tolerations = spec.get("tolerations") or []
        out = []
        for name, node in self.nodes.items():
            labels = (node.get("metadata") or {}).get("labels") or {}
            if any(labels.get(k) != v for k, v in selector.items()):
                continue
            if not tolerates_taints((node.get("spec") or {}).get("taints"), tolerations):
                continue
            out.append(name)
        return out

    def largest(self, pod: Mapping) -> dict[str, int]:
        """Per resource, the most allocatable of a node that could host the pod."""
        out: dict[str, int] = {}
        for name in self.hosts(pod):
            for r, v in self.allocatable[name].items():
                out[r] = max(out.get(r, 0), v)
        return out

    def fits(self, pod: Mapping, requests: Mapping[str, int]) -> bool:
        """Whether a replacement of ``pod`` requesting ``requests`` fits on some node now (the
        pod itself gone from its node)."""
        current = (pod.get("spec") or {}).get("nodeName")
        own = pod_requests(pod, use_status_resources=True)
        for name in self.hosts(pod):
            alloc, used = self.allocatable[name], self.used[name]
            free = {r: alloc.get(r, 0) - used[r] + (own.get(r, 0) if name == current else 0) for r in RESOURCES}
            if all(requests.get(r, 0) <= free[r] for r in RESOURCES if r in alloc):
                return True
        return False

    def moved(self, pod: Mapping, requests: Mapping[str, int]) -> None:
        """Count an eviction decided: the pod's requests leave its node (its replacement is
        placed by the scheduler, not here)."""
        node = (pod.get("spec") or {}).get("nodeName")
        if node in self.used:
            self._add(node, pod_requests(pod, use_status_resources=True), -1)


def replacement_requests(pod: Mapping, targets: Mapping[str, Mapping[str, Any]]) -> dict[str, int]:
    """The pod's requests with each container's ``targets`` (resource -> Quantity) applied, as
    the admission controller would set them on the replacement."""
    total: dict[str, int] = dict.fromkeys(RESOURCES, 0)
    for c in (pod.get("spec") or {}).get("containers") or []:
        requests = (c.get("resources") or {}).get("requests") or {}
        target = targets.get(c.get("name", "")) or {}
        for r in RESOURCES:
            if r in target:
                total[r] += _amount(r, target[r])
            elif r in requests:
                total[r] += to_int(r, requests[r])
    return total




def cap_to_room(items: list[Any], largest: Mapping[str, int], fixed: Mapping[str, int]) -> None:
    """Cap the recommendations ``items`` (``ContainerRecommendation`` of one pod's containers)
    so that, with the ``fixed`` requests of the containers not recommended, the pod fits in
    ``largest``. A container may have what the others' targets leave; when the targets
    together do not fit, each gets its targets' share of the room. Every bound is capped
    there; the uncapped target is kept."""
    for r in RESOURCES:
        if r not in largest:
            continue
        room = max(0, largest[r] - fixed.get(r, 0))
        targets = {id(item): _amount(r, item.target[r]) for item in items if r in item.target}
        wanted = sum(targets.values())
        for item in items:
            if r not in item.target:
                continue
            mine = targets[id(item)]
            share = mine * room // wanted if wanted > room else room - (wanted - mine)
            capped = Quantity.from_milli(share) if r == "cpu" else Quantity.from_int(share)
            hit = False
            for bound in (item.target, item.lower_bound, item.upper_bound):
                if r in bound and _amount(r, bound[r]) > share:
                    bound[r] = capped
                    hit = True
            if hit:
                item.capping.append(f"{r} capped to the largest node's allocatable")


def _amount(resource: str, q: Any) -> int:
    return q.milli_value() if resource == "cpu" else q.value()


__all__ = ["NodeRoom", "cap_to_room", "capacity_aware", "replacement_requests"]
