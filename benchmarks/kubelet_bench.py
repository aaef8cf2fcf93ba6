"""Resizes handled per second by one node agent (sim runtime, in-process cluster, virtual time).

Each round patches every pod's cpu through pods/resize and waits until the node agent has
decided, applied and reported all of them. Prints figures; asserts nothing.

usage: python benchmarks/kubelet_bench.py [--pods N] [--rounds R]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time

from kvert.apiserver.admission import bootstrap, default_chain
from kvert.client import InProcessClient
from kvert.clock import VirtualClock
from kvert.kubelet.agent import NodeAgent
from kvert.kubelet.config import NodeConfig
from kvert.kubelet.runtime.sim import SimRuntime
from kvert.registry import Registry
from kvert.store import open_store


def pod(i: int) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{i}", "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "busybox", "resources": {
                "requests": {"cpu": "100m", "memory": "64Mi"},
                "limits": {"cpu": "100m", "memory": "64Mi"}}}]}}


async def bench(pods: int, rounds: int, clock: VirtualClock) -> None:
    store = open_store("memory", clock=clock)
    registry = Registry(store, clock, default_chain(store, clock), seed=1)
    await bootstrap(registry)
    client = InProcessClient(registry)
    config = NodeConfig.from_flags(capacity=f"cpu={pods},memory={pods}Gi,pods={pods + 10}",
                                   node_name="node-1")
    agent = NodeAgent(client, clock, config, SimRuntime(clock), name="node-1")
    task = asyncio.ensure_future(agent.run())
    for i in range(pods):
        await client.create("pods", pod(i))
        await client.bind("default", f"p{i}", "node-1")

    async def all_applied(cpu: str) -> bool:
        items = (await client.list("pods", namespace="default"))["items"]
        return all(p["status"].get("containerStatuses") and
                   p["status"]["containerStatuses"][0].get("resources", {}).get("limits", {}).get("cpu") == cpu
                   for p in items)

    while not await all_applied("100m"):
        await clock.sleep(0.5)
    started, virtual_start = time.perf_counter(), clock.elapsed
    for r in range(rounds):
        cpu = f"{200 + 100 * (r % 5)}m"
        for i in range(pods):
            await client.resize("default", f"p{i}", {"spec": {"containers": [{
                "name": "c", "resources": {"requests": {"cpu": cpu}, "limits": {"cpu": cpu}}}]}})
        while not await all_applied(cpu):
            await clock.sleep(0.5)
    wall = time.perf_counter() - started
    print(f"  {pods} pods x {rounds} rounds: {pods * rounds / wall:8.0f} resizes/s (wall), "
          f"{clock.elapsed - virtual_start:6.1f} s virtual")
    agent.stop()
    task.cancel()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pods", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    print("node agent resizes:")
    clock = VirtualClock()
    clock.run(bench(args.pods, args.rounds, clock))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
