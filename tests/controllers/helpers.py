"""An in-process cluster in virtual time, a stand-in node agent that makes pods Ready, and
small builders, for the controller tests."""

from __future__ import annotations

import asyncio
from typing import Any, Awaitable, Callable

from kvert.api.errors import ApiError, NotFound
from kvert.api.meta import format_time
from kvert.apiserver.admission import bootstrap, default_chain
from kvert.client import InProcessClient, Informer
from kvert.clock import VirtualClock
from kvert.controllers import ControllerManager
from kvert.registry import Registry
from kvert.store import open_store

NS = "default"
RS = "apps/replicasets"
DEPLOY = "apps/deployments"
PDB = "policy/poddisruptionbudgets"


class Env:
    def __init__(self, clock: VirtualClock):
        self.clock = clock
        self.store = open_store("memory", clock=clock)
        self.registry = Registry(self.store, clock, default_chain(self.store, clock), seed=7)
        self.client = InProcessClient(self.registry)
        self._managers: list[tuple[ControllerManager, asyncio.Task]] = []

    async def start(self) -> "Env":
        await bootstrap(self.registry)
        return self

    def start_manager(self, **kwargs: Any) -> ControllerManager:
        manager = ControllerManager(self.client, self.clock, **kwargs)
        task = asyncio.ensure_future(manager.run())
        self._managers.append((manager, task))
        return manager

    async def stop_manager(self, manager: ControllerManager) -> None:
        for m, task in self._managers:
            if m is manager:
                manager.stop()
                task.cancel()
                try:
                    await task
                except (asyncio.CancelledError, Exception):
                    pass

    async def close(self) -> None:
        for manager, _ in list(self._managers):
            await self.stop_manager(manager)

    async def pods(self, selector: str = "", active_only: bool = True) -> list[dict]:
        items = (await self.client.list("pods", namespace=NS, label_selector=selector))["items"]
        if active_only:
            items = [p for p in items if is_active(p)]
        return sorted(items, key=lambda p: p["metadata"]["name"])

    async def get(self, resource: str, name: str) -> dict:
        return await self.client.get(resource, name, NS)

    async def events(self, reason: str | None = None) -> list[dict]:
        items = (await self.client.list("events", namespace=NS))["items"]
        return [e for e in items if reason is None or e.get("reason") == reason]


def run(scenario: Callable[[Env], Awaitable[Any]], start: float | None = None) -> Any:
    clock = VirtualClock() if start is None else VirtualClock(start)

    async def main() -> Any:
        env = await Env(clock).start()
        try:
            return await scenario(env)
        finally:
            await env.close()

    return clock.run(main())


async def eventually(env: Env, check: Callable[[], Any], timeout: float = 120.0, step: float = 0.25,
                     what: str = "condition") -> Any:
    """Poll ``check`` (sync or async) in virtual time until it returns something truthy."""
    deadline = env.clock.now() + timeout
    last: Any = None
    while True:
        result = check()
        if asyncio.iscoroutine(result):
            result = await result
        if result:
            return result
        last = result
        if env.clock.now() >= deadline:
            raise AssertionError(f"timed out waiting for {what}; last: {last!r}")
        await env.clock.sleep(step)


def is_active(pod: dict) -> bool:
    return not pod["metadata"].get("deletionTimestamp") and \
        (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed")


def is_ready(pod: dict) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (pod.get("status") or {}).get("conditions") or [])


async def mark_ready(env: Env, name: str) -> dict | None:
    """What a node agent reports for a started pod: Running, Ready."""
    for _ in range(5):
        try:
            pod = await env.client.get("pods", name, NS)
        except NotFound:
            return None
        if pod["metadata"].get("deletionTimestamp"):
            return None
        now = format_time(env.clock.now())
        pod["status"]["phase"] = "Running"
        pod["status"]["conditions"] = [
            {"type": t, "status": "True", "lastProbeTime": None, "lastTransitionTime": now}
            for t in ("Initialized", "Ready", "ContainersReady", "PodScheduled")]
        try:
            return await env.client.update_status("pods", pod)
        except ApiError:
            continue
    return None


async def mark_failed(env: Env, name: str, reason: str = "Error") -> dict:
    pod = await env.client.get("pods", name, NS)
    pod["status"]["phase"] = "Failed"
    pod["status"]["reason"] = reason
    pod["status"]["conditions"] = [{"type": "Ready", "status": "False", "lastProbeTime": None,
                                    "lastTransitionTime": format_time(env.clock.now())}]
    return await env.client.update_status("pods", pod)


class FakeNodeAgent:
    """Marks every new active pod Ready ``delay`` seconds after it appears (while enabled)."""

    def __init__(self, env: Env, delay: float = 2.0):
        self.env = env
        self.delay = delay
        self.enabled = True
        self.informer = Informer(env.client, "pods", clock=env.clock)
        self.informer.add_handlers(on_add=self._added)
        self._tasks: set[asyncio.Task] = set()
        self._runner: asyncio.Task | None = None

    def _added(self, pod: dict) -> None:
        if is_active(pod) and not is_ready(pod):
            task = asyncio.ensure_future(self._ready_later(pod["metadata"]["name"]))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _ready_later(self, name: str) -> None:
        await self.env.clock.sleep(self.delay)
        while not self.enabled:
            await self.env.clock.sleep(0.5)
        await mark_ready(self.env, name)

    async def start(self) -> "FakeNodeAgent":
        self._runner = asyncio.ensure_future(self.informer.run())
        await self.informer.wait_synced()
        return self

    def stop(self) -> None:
        self.informer.stop()
        for task in list(self._tasks):
            task.cancel()
        if self._runner is not None:
            self._runner.cancel()


def template(labels: dict[str, str], image: str = "nginx:1.27") -> dict:
    return {"metadata": {"labels": dict(labels)},
            "spec": {"containers": [{"name": "app", "image": image}]}}


def replica_set(name: str, replicas: int, labels: dict[str, str] | None = None, **spec: Any) -> dict:
    labels = labels or {"app": name}
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": name, "namespace": NS},
            "spec": {"replicas": replicas, "selector": {"matchLabels": dict(labels)},
                     "template": template(labels), **spec}}


def deployment(name: str, replicas: int, labels: dict[str, str] | None = None,
               image: str = "nginx:1.27", strategy: dict | None = None, **spec: Any) -> dict:
    labels = labels or {"app": name}
    body: dict[str, Any] = {"replicas": replicas, "selector": {"matchLabels": dict(labels)},
                            "template": template(labels, image), **spec}
    if strategy is not None:
        body["strategy"] = strategy
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": NS}, "spec": body}


def pdb(name: str, labels: dict[str, str], min_available: Any = None,
        max_unavailable: Any = None) -> dict:
    spec: dict[str, Any] = {"selector": {"matchLabels": dict(labels)}}
    if min_available is not None:
        spec["minAvailable"] = min_available
    if max_unavailable is not None:
        spec["maxUnavailable"] = max_unavailable
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": name, "namespace": NS}, "spec": spec}
