"""The recommender's usage read from a fleet: cpu as the rate between two scrapes, working
sets at the scrape, a container only from its second scrape (as metrics-server)."""

from __future__ import annotations

import numpy as np

from kvert.clock import VirtualClock
from kvert.cluster.fleetmetrics import FleetMetricsSource
from kvert.kubelet.runtime.base import ContainerConfig, ContainerResources, PodSandboxConfig
from kvert.kubelet.runtime.fleet import Fleet
from kvert.kubelet.runtime.sim import SimRuntime


def test_rates_and_working_sets_per_container_from_the_second_scrape():
    clock = VirtualClock()

    async def main():
        fleet = Fleet(clock, tick=60)
        nodes = [SimRuntime(clock, name=f"n{i}", fleet=fleet) for i in range(2)]
        for i, (runtime, cpu, memory) in enumerate(zip(nodes, ("250m", "1500m"), ("100Mi", "2Gi"))):
            sandbox = await runtime.run_pod_sandbox(PodSandboxConfig(uid=f"u{i}", namespace="ns", name=f"pod-{i}"))
            cid = await runtime.create_container(sandbox, ContainerConfig("app", "img", ContainerResources()))
            await runtime.start_container(cid)
            runtime.set_usage(cid, cpu=cpu, memory=memory)
        source = FleetMetricsSource(fleet)
        first = await source.usage_table()
        assert first.keys == []                          # no rate yet
        await clock.sleep(600)
        table = await source.usage_table()
        rows = dict(zip(table.keys, zip(table.cpu.tolist(), table.memory.tolist())))
        assert rows == {("ns", "pod-0", "app"): (0.25, 100 * 2**20), ("ns", "pod-1", "app"): (1.5, 2 * 2**30)}
        assert np.all(table.time == clock.now())
        await clock.sleep(60)
        again = await source.usage_table()               # same containers: same keys, same generation
        assert again.generation == table.generation and again.keys is table.keys

    clock.run(main())
