"""What the tests of the recommender against upstream VPA 1.8 share: an in-process API server in
virtual time, workloads, pods in a given phase, VPAs, and metrics sources (none, or a fixed table)."""

from __future__ import annotations

from typing import Any

import numpy as np

from kvert.clock import VirtualClock
from kvert.vpa.metrics_source import UsageTable
from kvert.vpa.recommender import VPAS

from tests.kubelet.test_agent_support import cluster

NS = "default"
DEPLOY = "apps/deployments"
CHECKPOINTS = "autoscaling.k8s.io/verticalpodautoscalercheckpoints"
MI = 2**20
GI = 2**30


def run(scenario: Any) -> Any:
    """``await scenario(clock, client)`` on a fresh in-process API server, in virtual time."""
    clock = VirtualClock()

    async def main() -> Any:
        client = await cluster(clock)
        return await scenario(clock, client)

    return clock.run(main())


def deployment(name: str = "hamster", containers: tuple[str, ...] = ("hamster",), ns: str = NS,
               selector: dict | None = None, labels: dict | None = None) -> dict:
    labels = labels or {"app": name}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": ns},
            "spec": {"replicas": 0, "selector": selector or {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"containers": [{"name": c, "image": "busybox"} for c in containers]}}}}


def vpa(name: str = "hamster-vpa", target: str = "hamster", ns: str = NS, policies: list | None = None,
        recommenders: list[str] | None = None, mode: str | None = None, annotations: dict | None = None) -> dict:
    spec: dict[str, Any] = {"targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": target}}
    if policies is not None:
        spec["resourcePolicy"] = {"containerPolicies": policies}
    if recommenders is not None:
        spec["recommenders"] = [{"name": r} for r in recommenders]
    if mode is not None:
        spec["updatePolicy"] = {"updateMode": mode}
    meta: dict[str, Any] = {"name": name, "namespace": ns}
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": "autoscaling.k8s.io/v1", "kind": "VerticalPodAutoscaler", "metadata": meta, "spec": spec}


async def pod(client: Any, name: str, labels: dict, *, containers: tuple[str, ...] = ("hamster",), ns: str = NS,
              phase: str = "Running", memory: str = "100Mi", restart_policy: str = "Always",
              status: dict | None = None) -> dict:
    """A pod created as a controller would, then given ``phase`` (and ``status``) as a kubelet would."""
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns, "labels": labels},
            "spec": {"restartPolicy": restart_policy, "containers": [
                {"name": c, "image": "busybox", "resources": {"requests": {"cpu": "100m", "memory": memory}}}
                for c in containers]}}
    created = await client.create("pods", body)
    if phase == "Pending" and not status:
        return created
    created["status"] = {**(created.get("status") or {}), "phase": phase, **(status or {})}
    return await client.update_status("pods", created)


def conditions(obj: dict) -> dict[str, dict]:
    return {c["type"]: c for c in (obj.get("status") or {}).get("conditions") or []}


def recommendations(obj: dict) -> dict[str, dict]:
    items = ((obj.get("status") or {}).get("recommendation") or {}).get("containerRecommendations") or []
    return {item["containerName"]: item for item in items}


async def get_vpa(client: Any, name: str = "hamster-vpa", ns: str = NS) -> dict:
    return await client.get(VPAS, name, ns)


class NoMetrics:
    """A metrics API that knows no pod (upstream's recommender with metrics-server absent)."""

    async def usage_table(self) -> UsageTable:
        return UsageTable([], 0, np.zeros(0), np.zeros(0), np.zeros(0))


class FixedUsage:
    """Every listed container using ``cpu`` cores and ``memory`` bytes, at the clock's time."""

    def __init__(self, clock: VirtualClock, keys: list[tuple[str, str, str]], cpu: float = 0.5,
                 memory: float = 200.0 * MI) -> None:
        self.clock, self.keys, self.cpu, self.memory = clock, keys, cpu, memory

    async def usage_table(self) -> UsageTable:
        n = len(self.keys)
        return UsageTable(self.keys, 0, np.full(n, self.clock.now()), np.full(n, self.cpu), np.full(n, self.memory))
