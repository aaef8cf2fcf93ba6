"""The CPU manager's static policy. Expected values: Linux's cpuset list format
(Documentation/admin-guide/cgroup-v1/cpusets.rst), and pkg/kubelet/cm/cpumanager:
TestStaticPolicyAdd ("GuPodSingleCore ..." gets exclusive CPUs, a non-integer request
stays shared, reserved CPUs are never given), TestStaticPolicyRemove (released CPUs return
to the shared pool), TestCPUSetBuilder/TestParse in k8s.io/utils/cpuset."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kvert.clock import VirtualClock
from kvert.kubelet.config import NodeConfig, parse_eviction_thresholds
from kvert.kubelet.cpumanager import CpuAllocationError, CpuManager, exclusive_cpus, format_cpuset, parse_cpuset
from kvert.kubelet.runtime.sim import SimRuntime
from tests.kubelet.test_agent_support import GI, cluster, container, pod, run_pod, running, start_agent, stop, wait_for


def test_cpuset_list_format():
    assert parse_cpuset("0-3,6") == {0, 1, 2, 3, 6}
    assert parse_cpuset("") == frozenset()
    assert format_cpuset({0, 1, 2, 3, 6}) == "0-3,6"
    assert format_cpuset({5, 7}) == "5,7"
    with pytest.raises(ValueError):
        parse_cpuset("3-1")
    with pytest.raises(ValueError):
        parse_cpuset("a")


@given(st.frozensets(st.integers(min_value=0, max_value=127)))
def test_cpuset_round_trip(cpus):
    assert parse_cpuset(format_cpuset(cpus)) == cpus


def _pod(uid: str, cpu: str, limit: str | None = None) -> dict:
    resources = {"requests": {"cpu": cpu, "memory": "1Gi"},
                 "limits": {"cpu": limit or cpu, "memory": "1Gi"}}
    return {"metadata": {"uid": uid, "name": uid},
            "spec": {"containers": [{"name": "c", "resources": resources}]}}


def test_exclusive_only_for_whole_cpus_of_guaranteed_pods():
    assert exclusive_cpus(_pod("a", "2"), "c") == 2
    assert exclusive_cpus(_pod("b", "1500m"), "c") == 0           # not whole CPUs
    assert exclusive_cpus(_pod("c", "1", limit="2"), "c") == 0     # Burstable


def test_static_policy_assigns_releases_and_keeps_reserved_cpus_shared():
    cpus = CpuManager("static", 4, reserved_milli=500)             # reserves CPU 0
    assert cpus.reserved == {0}
    assert cpus.cpuset(_pod("a", "2"), "c") == "1-2"
    assert cpus.cpuset(_pod("a", "2"), "c") == "1-2"                # kept, not assigned twice
    assert cpus.cpuset(_pod("s", "500m"), "c") == "0,3"             # the shared pool
    with pytest.raises(CpuAllocationError, match="requested=2, available=1"):
        cpus.cpuset(_pod("b", "2"), "c")
    assert cpus.release("a") and format_cpuset(cpus.shared()) == "0-3"
    assert CpuManager("none", 4).cpuset(_pod("a", "2"), "c") == ""
    assert CpuManager("static", 4, reserved="3").cpuset(_pod("a", "3"), "c") == "0-2"


def test_a_node_pins_guaranteed_containers_and_moves_the_shared_ones():
    clock = VirtualClock()

    async def main():
        client = await cluster(clock)
        runtime = SimRuntime(clock)
        config = NodeConfig(capacity={"cpu": 4000, "memory": 16 * GI}, cpu_manager_policy="static",
                            kube_reserved={"cpu": 500},
                            eviction_hard=parse_eviction_thresholds("memory.available<100Mi"))
        agent, task = await start_agent(client, clock, runtime, config=config)

        def cpuset(name: str) -> str:
            ps = next(ps for ps in agent.pods.values() if ps.name == name)
            return runtime.status(ps.containers["c"].id).resources.linux.cpuset_cpus

        await run_pod(client, pod("shared", container("c", "500m", "256Mi")))
        await running(client, clock, "shared")
        assert cpuset("shared") == "0-3"
        await run_pod(client, pod("pinned", container("c", "2", "256Mi")))
        await running(client, clock, "pinned")
        assert cpuset("pinned") == "1-2"
        await wait_for(clock, lambda: cpuset("shared") == "0,3", what="the shared pool shrunk")
        await client.delete("pods", "pinned", namespace="default", grace_period_seconds=0)
        await wait_for(clock, lambda: cpuset("shared") == "0-3", what="the shared pool back")
        await stop(agent, task)

    clock.run(main())
