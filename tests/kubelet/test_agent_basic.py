"""Node registration, lease, pod startup and status, admission, graceful deletion."""

from __future__ import annotations

import json

from kvert.clock import VirtualClock
from kvert.kubelet.config import NodeConfig, parse_eviction_thresholds
from kvert.kubelet.runtime.sim import SimRuntime

from tests.kubelet.test_agent_support import (GI, MI, cluster, container, cstatus, events, in_phase, node_config,
                                              pod, run_pod, running, start_agent, stop, wait_for)


def test_registers_the_seed_004_node_with_its_allocatable_and_a_lease():
    clock = VirtualClock()

    async def main():
        client = await cluster(clock)
        config = NodeConfig(capacity={"cpu": 8000, "memory": 32 * GI},
                            kube_reserved={"memory": 2 * GI}, system_reserved={"memory": GI},
                            eviction_hard=parse_eviction_thresholds("memory.available<100Mi"))
        agent, task = await start_agent(client, clock, config=config)
        node = await client.get("nodes", "node-1")
        status = node["status"]
        assert status["capacity"]["memory"] == "32Gi"
        assert status["allocatable"]["memory"] == "29596Mi"       # 28.9Gi
        assert 32 * GI - 3 * GI - 100 * MI == 29596 * MI
        assert status["allocatable"]["cpu"] == "8"
        assert status["allocatable"]["pods"] == "110"
        types = {c["type"]: c for c in status["conditions"]}
        assert types["Ready"]["status"] == "True" and types["Ready"]["reason"] == "KubeletReady"
        for t in ("MemoryPressure", "DiskPressure", "PIDPressure"):
            assert types[t]["status"] == "False"
        assert status["nodeInfo"]["kubeletVersion"] == "v1.36.0-kvert"
        assert status["nodeInfo"]["containerRuntimeVersion"].startswith("sim://")
        assert {"type": "InternalIP", "address": "127.0.0.1"} in status["addresses"]
        labels = node["metadata"]["labels"]
        assert labels["kubernetes.io/hostname"] == "node-1" and labels["kubernetes.io/os"] == "linux"
        lease = await client.get("coordination.k8s.io/leases", "node-1", "kube-node-lease")
        assert lease["spec"]["holderIdentity"] == "node-1"
        assert lease["spec"]["leaseDurationSeconds"] == 40
        first = lease["spec"]["renewTime"]
        await clock.sleep(25)
        lease = await client.get("coordination.k8s.io/leases", "node-1", "kube-node-lease")
        assert lease["spec"]["renewTime"] > first
        await stop(agent, task)

    clock.run(main())


def test_pod_runs_with_status_conditions_and_resources():
    clock = VirtualClock()

    async def main():
        client = await cluster(clock)
        runtime = SimRuntime(clock)
        agent, task = await start_agent(client, clock, runtime)
        await run_pod(client, pod("web", container("c", "500m", "500Mi")))
        p = await running(client, clock, "web")
        await clock.sleep(2)
        p = await client.get("pods", "web", "default")
        st = p["status"]
        assert st["qosClass"] == "Guaranteed"
        assert st["hostIP"] == "127.0.0.1" and st["podIP"].startswith("10.")
        assert st["startTime"]
        cond = {c["type"]: c["status"] for c in st["conditions"]}
        assert cond == {"PodReadyToStartContainers": "True", "Initialized": "True", "Ready": "True",
                        "ContainersReady": "True", "PodScheduled": "True"}
        cs = cstatus(p)
        assert cs["ready"] and cs["started"] and cs["restartCount"] == 0
        assert cs["containerID"].startswith("sim://")
        assert "running" in cs["state"]
        assert cs["allocatedResources"] == {"cpu": "500m", "memory": "500Mi"}
        assert cs["resources"] == {"requests": {"cpu": "500m", "memory": "500Mi"},
                                   "limits": {"cpu": "500m", "memory": "500Mi"}}
        explain = json.loads(p["metadata"]["annotations"]["explain.kvert.io/node"])
        assert explain["qosClass"] == "Guaranteed"
        assert explain["containers"][0]["oomScoreAdj"] == -997
        assert explain["containers"][0]["cgroup"]["cpu.max"] == "50000 100000"
        assert explain["admission"]["result"] == "Accepted"
        await stop(agent, task)

    clock.run(main())


def test_admission_rejects_with_out_of_cpu():
    clock = VirtualClock()

    async def main():
        client = await cluster(clock)
        agent, task = await start_agent(client, clock, config=node_config(cpu=4000))
        await run_pod(client, pod("big", container("c", "3600m", "128Mi")))
        await running(client, clock, "big")
        await run_pod(client, pod("extra", container("c", "500m", "128Mi")))
        p = await in_phase(client, clock, "extra", "Failed")
        assert p["status"]["reason"] == "OutOfcpu"
        assert p["status"]["message"] == ("Pod was rejected: Node didn't have enough resource: cpu, "
                                          "requested: 500, used: 3600, capacity: 4000")
        ev = await events(client, "extra", "OutOfcpu")
        assert ev and ev[0]["type"] == "Warning"
        await stop(agent, task)

    clock.run(main())


def test_graceful_deletion_stops_containers_and_deletes_the_pod():
    clock = VirtualClock()

    async def main():
        client = await cluster(clock)
        runtime = SimRuntime(clock)
        agent, task = await start_agent(client, clock, runtime)
        await run_pod(client, pod("web", container("c", "500m", "128Mi")))
        p = await running(client, clock, "web")
        cid = cstatus(p)["containerID"].split("://")[1]
        deleted = await client.delete("pods", "web", namespace="default")
        assert deleted["metadata"].get("deletionTimestamp")

        async def gone():
            try:
                await client.get("pods", "web", "default")
                return False
            except Exception:
                return True
        await wait_for(clock, gone)
        assert cid not in {c.id for c in await runtime.list_containers()}
        assert agent.pods == {}
        await stop(agent, task)

    clock.run(main())


class DeletedDuringStatusWrite:
    """The agent's client, but a graceful delete of ``name`` lands just before the first
    status write for it, so the write's answer is the agent's first sight of the deletion."""

    def __init__(self, client, name: str):
        self._client, self._name, self.done = client, name, False

    def __getattr__(self, attr):
        return getattr(self._client, attr)

    async def update_status(self, resource: str, body: dict, *args, **kwargs):
        if resource == "pods" and body["metadata"]["name"] == self._name and not self.done:
            self.done = True
            await self._client.delete("pods", self._name, namespace="default")
        return await self._client.update_status(resource, body, *args, **kwargs)


def test_a_deletion_first_seen_in_a_status_answer_still_stops_the_pod():
    # TestUpdatePod (pkg/kubelet/pod_workers_test.go): an update carrying a deletionTimestamp
    # moves the pod worker to terminating, however the kubelet learnt of it; the pod is gone
    # well before its 30 s grace period ends (the simulated container stops on SIGTERM).
    clock = VirtualClock()

    async def main():
        client = await cluster(clock)
        racing = DeletedDuringStatusWrite(client, "web")
        agent, task = await start_agent(racing, clock, SimRuntime(clock))
        await run_pod(client, pod("web", container("c", "500m", "128Mi")))

        async def gone():
            try:
                await client.get("pods", "web", "default")
                return False
            except Exception:
                return True
        await wait_for(clock, lambda: racing.done)
        await wait_for(clock, gone, timeout=10)
        await stop(agent, task)

    clock.run(main())
