"""The live recommender on an in-process cluster in virtual time: registry, controllers,
scheduler, node agents with SimRuntime, pods using more than they request (``kvert.io/usage``)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from kvert.api.quantity import Quantity
from kvert.cluster.metrics import LocalNodeMetrics
from kvert.clock import VirtualClock
from kvert.controllers import ControllerManager
from kvert.kubelet.agent import NodeAgent
from kvert.kubelet.runtime.sim import SimRuntime
from kvert.scheduler import Scheduler
from kvert.vpa.metrics_source import LocalMetricsSource, NodeAgentsMetricsSource
from kvert.vpa.recommender import VPAS, Recommender

from tests.kubelet.test_agent_support import cluster, node_config, wait_for

NS = "default"
DEPLOY = "apps/deployments"
CHECKPOINTS = "autoscaling.k8s.io/verticalpodautoscalercheckpoints"
MI = 2**20


class Cluster:
    """registry + controller manager + scheduler + node agents, all in one event loop."""

    def __init__(self, clock: VirtualClock) -> None:
        self.clock = clock
        self.tasks: list[asyncio.Task] = []
        self.stoppers: list[Any] = []
        self.agents: list[NodeAgent] = []

    async def start(self, nodes: int = 1, cpu: int = 4000, memory: int = 16 * 2**30, **agent_kw: Any) -> "Cluster":
        self.client = await cluster(self.clock)
        for i in range(nodes):
            agent = NodeAgent(self.client, self.clock, node_config(cpu=cpu, memory=memory),
                              SimRuntime(self.clock), name=f"node-{i + 1}", **agent_kw)
            self.agents.append(agent)
            self.spawn(agent, agent.run())
            await agent.ready.wait()
        self.manager = ControllerManager(self.client, self.clock)
        self.spawn(self.manager, self.manager.run())
        self.scheduler = Scheduler(self.client, self.clock, seed=3)
        self.spawn(self.scheduler, self.scheduler.run())
        return self

    def spawn(self, component: Any, coro: Any) -> asyncio.Task:
        task = asyncio.ensure_future(coro)
        self.tasks.append(task)
        self.stoppers.append(component)
        return task

    async def close(self) -> None:
        for component in reversed(self.stoppers):
            stop = getattr(component, "stop", None)
            if callable(stop):
                stop()
        for task in self.tasks:
            if not task.done():
                task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)

    async def pods(self, app: str = "hamster") -> list[dict]:
        items = (await self.client.list("pods", namespace=NS, label_selector=f"app={app}"))["items"]
        return sorted((p for p in items if not p["metadata"].get("deletionTimestamp")),
                      key=lambda p: p["metadata"]["name"])

    async def running_pods(self, app: str = "hamster") -> list[dict]:
        return [p for p in await self.pods(app) if (p.get("status") or {}).get("phase") == "Running"]


def deployment(name: str = "hamster", replicas: int = 2, cpu: str = "100m", memory: str = "50Mi",
               usage: dict | None = None, limits: dict | None = None, resize_policy: list | None = None) -> dict:
    container: dict[str, Any] = {"name": name, "image": "registry.k8s.io/ubuntu-slim:0.1",
                                 "resources": {"requests": {"cpu": cpu, "memory": memory}}}
    if limits:
        container["resources"]["limits"] = limits
    if resize_policy:
        container["resizePolicy"] = resize_policy
    usage = usage if usage is not None else {name: {"cpu": "500m", "memory": "200Mi"}}
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": NS},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name},
                                               "annotations": {"kvert.io/usage": json.dumps(usage)}},
                                  "spec": {"containers": [container]}}}}


def vpa(name: str = "hamster-vpa", target: str = "hamster", mode: str = "Off", **update_policy: Any) -> dict:
    return {"apiVersion": "autoscaling.k8s.io/v1", "kind": "VerticalPodAutoscaler",
            "metadata": {"name": name, "namespace": NS},
            "spec": {"targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": target},
                     "updatePolicy": {"updateMode": mode, **update_policy}}}


def conditions(obj: dict) -> dict[str, dict]:
    return {c["type"]: c for c in (obj.get("status") or {}).get("conditions") or []}


def target_of(obj: dict, container: str = "hamster") -> dict | None:
    for item in ((obj.get("status") or {}).get("recommendation") or {}).get("containerRecommendations") or []:
        if item["containerName"] == container:
            return item
    return None


def run(scenario, **kw: Any) -> Any:
    clock = VirtualClock()

    async def main() -> Any:
        c = await Cluster(clock).start(**kw)
        try:
            return await scenario(c)
        finally:
            await c.close()

    return clock.run(main())


async def recommendation(c: Cluster, name: str = "hamster-vpa", timeout: float = 600.0) -> dict:
    """The VPA once its recommendation comes from usage: as upstream, a container without
    samples yet is recommended the pod minimum (25m), which these pods use more than."""
    async def check():
        obj = await c.client.get(VPAS, name, NS)
        item = target_of(obj)
        return obj if item and Quantity.parse(item["target"]["cpu"]).milli_value() > 25 else None
    return await wait_for(c.clock, check, timeout=timeout, step=5.0, what="a recommendation")


# ---- tests -------------------------------------------------------------------------------------------


def test_recommendation_for_hamster_within_a_few_intervals():
    async def scenario(c: Cluster):
        await c.client.create(DEPLOY, deployment())
        await c.client.create(VPAS, vpa())
        await wait_for(c.clock, lambda: c.running_pods(), timeout=120, what="pods running")
        r = Recommender(c.client, c.clock, NodeAgentsMetricsSource(c.agents), interval=60.0)
        c.spawn(r, r.run())
        start = c.clock.now()
        obj = await recommendation(c)
        assert c.clock.now() - start <= 3 * 60.0 + 5
        item = target_of(obj)
        # the pods use 500m / 200Mi while requesting 100m / 50Mi
        assert Quantity.parse(item["target"]["cpu"]).milli_value() >= 500
        assert Quantity.parse(item["target"]["memory"]).value() >= 200 * MI
        assert Quantity.parse(item["lowerBound"]["cpu"]).milli_value() <= Quantity.parse(
            item["target"]["cpu"]).milli_value() <= Quantity.parse(item["upperBound"]["cpu"]).milli_value()
        conds = conditions(obj)
        assert conds["RecommendationProvided"]["status"] == "True"
        assert "NoPodsMatched" not in conds
        assert conds["LowConfidence"]["status"] == "True"
        # written only when changed: a loop at the same time (no new sample) writes nothing
        r.stop()
        await r.run_once()
        rv = (await c.client.get(VPAS, "hamster-vpa", NS))["metadata"]["resourceVersion"]
        await r.run_once()
        assert (await c.client.get(VPAS, "hamster-vpa", NS))["metadata"]["resourceVersion"] == rv
    run(scenario)


def test_no_pods_matched_and_unsupported_target():
    async def scenario(c: Cluster):
        await c.client.create(VPAS, vpa("lonely", target="nothing-here"))
        await c.client.create(DEPLOY, deployment("idle", replicas=0))
        await c.client.create(VPAS, vpa("idle-vpa", target="idle"))
        r = Recommender(c.client, c.clock, NodeAgentsMetricsSource(c.agents))
        await r.run_once()
        lonely = conditions(await c.client.get(VPAS, "lonely", NS))
        assert lonely["ConfigUnsupported"]["status"] == "True"
        assert lonely["ConfigUnsupported"]["message"].startswith("Cannot read targetRef")
        idle = conditions(await c.client.get(VPAS, "idle-vpa", NS))
        assert "ConfigUnsupported" not in idle
        assert idle["NoPodsMatched"] == {"type": "NoPodsMatched", "status": "True", "reason": "NoPodsMatched",
                                         "message": "No pods match this VPA object",
                                         "lastTransitionTime": idle["NoPodsMatched"]["lastTransitionTime"]}
        assert idle["RecommendationProvided"]["status"] == "False"
        assert idle["RecommendationProvided"]["reason"] == "NoPodsMatched"
    run(scenario)


def test_oom_raises_the_memory_target():
    async def scenario(c: Cluster):
        leak = {"hamster": {"cpu": "200m", "memory": {"profile": "linear", "start": "300Mi", "rate": "20Mi/min"}}}
        await c.client.create(DEPLOY, deployment(replicas=1, memory="350Mi", usage=leak,
                                                 limits={"cpu": "1", "memory": "400Mi"}))
        await c.client.create(VPAS, vpa())
        await wait_for(c.clock, lambda: c.running_pods(), timeout=120, what="pods running")
        r = Recommender(c.client, c.clock, NodeAgentsMetricsSource(c.agents), interval=30.0)
        c.spawn(r, r.run())
        before = target_of(await recommendation(c))
        assert Quantity.parse(before["target"]["memory"]).value() < 450 * MI

        async def oomed():
            pods = await c.pods()
            return any(((cs.get("lastState") or {}).get("terminated") or {}).get("reason") == "OOMKilled"
                       for p in pods for cs in (p.get("status") or {}).get("containerStatuses") or [])
        await wait_for(c.clock, oomed, timeout=900, step=5.0, what="an OOM kill")
        await c.clock.sleep(61)
        after = target_of(await c.client.get(VPAS, "hamster-vpa", NS))
        # the OOM counts as a peak of max(request + 100Mi, request * 1.2) = 450Mi
        assert Quantity.parse(after["target"]["memory"]).value() >= 450 * MI
        # each OOM is recorded once, however many loops see it in the pod's status
        assert len(r._ooms_seen) >= 1
        seen = set(r._ooms_seen)
        await r.run_once()
        assert r._ooms_seen == seen or len(r._ooms_seen) > len(seen)
    run(scenario)


def test_restart_from_checkpoints_gives_the_same_recommendation():
    async def scenario(c: Cluster):
        provider = LocalNodeMetrics(c.clock, resolution=30.0)
        for agent in c.agents:
            provider.register(agent)
        c.spawn(None, provider.run())
        source = LocalMetricsSource(provider)
        await c.client.create(DEPLOY, deployment())
        await c.client.create(VPAS, vpa())
        await wait_for(c.clock, lambda: c.running_pods(), timeout=120, what="pods running")
        first = Recommender(c.client, c.clock, source, interval=60.0, checkpoint_interval=600.0)
        task = c.spawn(first, first.run())
        await c.clock.sleep(20 * 60)
        first.stop()
        await task
        first.last_checkpoint = None                    # a final loop that writes the checkpoints
        await first.run_once()
        before = await c.client.get(VPAS, "hamster-vpa", NS)
        checkpoints = (await c.client.list(CHECKPOINTS, namespace=NS))["items"]
        assert [cp["metadata"]["name"] for cp in checkpoints] == ["hamster-vpa-hamster"]
        assert checkpoints[0]["status"]["totalSamplesCount"] >= 10

        restarted = Recommender(c.client, c.clock, source, interval=60.0, checkpoint_interval=600.0)
        assert await restarted.restore_checkpoints() == 1
        status = (await restarted.run_once())[(NS, "hamster-vpa")]
        assert status["recommendation"] == before["status"]["recommendation"]
        after = await c.client.get(VPAS, "hamster-vpa", NS)
        assert after["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]

        # without the checkpoints the history starts over: far less confident bounds
        fresh = Recommender(c.client, c.clock, source, interval=60.0)
        fresh.restored = True
        fresh_status = (await fresh.run_once())[(NS, "hamster-vpa")]
        assert fresh_status["recommendation"] != before["status"]["recommendation"]
    run(scenario)
