"""Shared helpers for the node agent tests: an in-process cluster in virtual time, pods,
waiting for conditions, and a runtime wrapper that can hold UpdateContainerResources."""

from __future__ import annotations

import asyncio
from typing import Any

from kvert.apiserver.admission import bootstrap, default_chain
from kvert.client import InProcessClient
from kvert.kubelet.agent import NodeAgent
from kvert.kubelet.config import NodeConfig, parse_eviction_thresholds
from kvert.kubelet.runtime.sim import SimRuntime
from kvert.registry import Registry
from kvert.store import open_store

GI = 2**30
MI = 2**20


async def cluster(clock) -> InProcessClient:
    store = open_store("memory", clock=clock)
    registry = Registry(store, clock, default_chain(store, clock), seed=1)
    await bootstrap(registry)
    return InProcessClient(registry)


def node_config(cpu: int = 4000, memory: int = 16 * GI, **kw: Any) -> NodeConfig:
    kw.setdefault("eviction_hard", parse_eviction_thresholds("memory.available<100Mi"))
    return NodeConfig(capacity={"cpu": cpu, "memory": memory, "ephemeral-storage": 100 * GI}, **kw)


def container(name: str = "c", cpu: str | None = "500m", memory: str | None = "128Mi", *,
              limits: bool = True, limit_cpu: str | None = None, limit_memory: str | None = None,
              policy: dict[str, str] | None = None, image: str = "busybox") -> dict:
    requests = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v is not None}
    c: dict[str, Any] = {"name": name, "image": image, "resources": {"requests": requests}}
    if limits:
        lim = dict(requests)
        if limit_cpu:
            lim["cpu"] = limit_cpu
        if limit_memory:
            lim["memory"] = limit_memory
        c["resources"]["limits"] = lim
    if policy:
        c["resizePolicy"] = [{"resourceName": r, "restartPolicy": p} for r, p in policy.items()]
    return c


def pod(name: str, *containers: dict, namespace: str = "default", restart_policy: str | None = None,
        usage: dict | None = None, init: list[dict] | None = None, **spec: Any) -> dict:
    import json
    body: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod",
                            "metadata": {"name": name, "namespace": namespace},
                            "spec": {"containers": list(containers) or [container()], **spec}}
    if restart_policy:
        body["spec"]["restartPolicy"] = restart_policy
    if init:
        body["spec"]["initContainers"] = init
    if usage is not None:
        body["metadata"]["annotations"] = {"kvert.io/usage": json.dumps(usage)}
    return body


async def run_pod(client, body: dict, node: str = "node-1") -> dict:
    created = await client.create("pods", body)
    await client.bind(created["metadata"]["namespace"], created["metadata"]["name"], node)
    return created


async def wait_for(clock, check, timeout: float = 120.0, step: float = 0.5, what: str = "") -> Any:
    """Poll ``check()`` (sync or async) in virtual time until it returns something truthy."""
    deadline = clock.now() + timeout
    while True:
        value = check()
        if asyncio.iscoroutine(value):
            value = await value
        if value:
            return value
        if clock.now() >= deadline:
            raise AssertionError(f"timed out waiting for {what or check}")
        await clock.sleep(step)


async def get_pod(client, name: str, namespace: str = "default") -> dict:
    return await client.get("pods", name, namespace)


def cstatus(pod: dict, name: str = "c") -> dict:
    for cs in (pod.get("status") or {}).get("containerStatuses") or []:
        if cs["name"] == name:
            return cs
    return {}


def condition(pod: dict, ctype: str) -> dict | None:
    for c in (pod.get("status") or {}).get("conditions") or []:
        if c.get("type") == ctype:
            return c
    return None


async def events(client, name: str, reason: str | None = None) -> list[dict]:
    items = (await client.list("events", namespace="default"))["items"]
    return [e for e in items if e["involvedObject"].get("name") == name and
            (reason is None or e["reason"] == reason)]


def start(agent: NodeAgent) -> asyncio.Task:
    return asyncio.ensure_future(agent.run())


async def start_agent(client, clock, runtime=None, *, config: NodeConfig | None = None,
                      **kw: Any) -> tuple[NodeAgent, asyncio.Task]:
    """Start the node agent of "node-1" (``node_config()`` and a SimRuntime unless given) and
    wait until it has registered its node. End it with ``stop`` or ``kill``."""
    agent = NodeAgent(client, clock, node_config() if config is None else config,
                      SimRuntime(clock) if runtime is None else runtime, name="node-1", **kw)
    task = start(agent)
    await agent.ready.wait()
    return agent, task


async def stop(agent: NodeAgent, task: asyncio.Task) -> None:
    agent.stop()
    await task


async def kill(task: asyncio.Task) -> None:
    """End the agent's task the way a crash would: no graceful stop."""
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass


async def in_phase(client, clock, name: str, phase: str, namespace: str = "default") -> dict:
    async def check():
        p = await client.get("pods", name, namespace)
        return p if (p.get("status") or {}).get("phase") == phase else None
    return await wait_for(clock, check, what=f"{name} {phase}")


async def running(client, clock, name: str, namespace: str = "default") -> dict:
    return await in_phase(client, clock, name, "Running", namespace)


class HeldRuntime:
    """A SimRuntime whose UpdateContainerResources can be held at a gate (to observe the
    states between "allocated" and "applied", or to kill the agent in between)."""

    def __init__(self, inner: SimRuntime):
        self.inner = inner
        self.hold = False
        self.gate = asyncio.Event()
        self.waiting = 0
        self.calls: list[tuple[str, Any]] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def update_container_resources(self, container_id: str, resources) -> None:
        self.calls.append(("update_container_resources", container_id))
        if self.hold:
            self.waiting += 1
            try:
                await self.gate.wait()
            finally:
                self.waiting -= 1
        await self.inner.update_container_resources(container_id, resources)

    async def update_pod_sandbox_resources(self, sandbox_id: str, resources) -> None:
        self.calls.append(("update_pod_sandbox_resources", sandbox_id))
        await self.inner.update_pod_sandbox_resources(sandbox_id, resources)

    def release(self) -> None:
        self.hold = False
        self.gate.set()


def cpu_of(q: str) -> int:
    from kvert.api.quantity import to_int
    return to_int("cpu", q)
