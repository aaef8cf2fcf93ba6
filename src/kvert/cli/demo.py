"""``kvert demo``: the main job, run end to end.

Until the cluster components land, the demo walks the foundation in virtual time: a
versioned store, the registry's write path, an informer following a watch, a pod
resize through ``pods/resize`` and an eviction refused by a PodDisruptionBudget.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
from pathlib import Path

import kvert
from kvert.api import pods
from kvert.api.errors import ApiError
from kvert.client import InProcessClient, Informer
from kvert.clock import VirtualClock
from kvert.registry import Registry
from kvert.store import open_store


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "demo", help="run the demonstration",
        description="Run kvert's demonstration: objects written through the API path into a "
                    "store, followed by an informer, a pod resized in place through pods/resize, "
                    "and an eviction refused by a PodDisruptionBudget (HTTP 429), all in "
                    "virtual time.",
        epilog="example: kvert demo --store memory")
    p.add_argument("--store", default="sqlite",
                   help="'sqlite' (a temporary file, the default), 'memory', or 'sqlite:PATH'")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:{Path(tmp) / 'kvert.db'}" if args.store == "sqlite" else args.store
        clock = VirtualClock()
        return clock.run(_demo(url, clock))


def _say(text: str) -> None:
    print(text, flush=True)


def _pod(name: str, cpu: str, memory: str) -> dict:
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": "hamster"}},
        "spec": {"containers": [{
            "name": "hamster", "image": "registry.k8s.io/ubuntu-slim:0.14",
            "resources": {"requests": {"cpu": cpu, "memory": memory},
                          "limits": {"cpu": cpu, "memory": memory}},
            "resizePolicy": [{"resourceName": "cpu", "restartPolicy": "NotRequired"},
                             {"resourceName": "memory", "restartPolicy": "NotRequired"}],
        }]},
    }


async def _demo(url: str, clock: VirtualClock) -> int:
    _say(f"kvert {kvert.__version__} demo: the foundation, in virtual time (store {url})")
    store = open_store(url, clock=clock)
    client = InProcessClient(Registry(store, clock, seed=1))
    seen: list[str] = []
    informer = Informer(client, "pods", clock=clock)
    informer.add_handlers(on_add=lambda o: seen.append(f"ADDED {o['metadata']['name']}"),
                          on_update=lambda old, new: seen.append(
                              f"MODIFIED {new['metadata']['name']} rv={new['metadata']['resourceVersion']}"),
                          on_delete=lambda o: seen.append(f"DELETED {o['metadata']['name']}"))
    task = asyncio.ensure_future(informer.run())
    await informer.wait_synced()
    try:
        await client.create("namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                           "metadata": {"name": "default"}})
        pod = await client.create("pods", _pod("hamster-1", "100m", "50Mi"), namespace="default")
        await client.create("pods", _pod("hamster-2", "100m", "50Mi"), namespace="default")
        _say(f"created pods hamster-1 and hamster-2: qosClass={pod['status']['qosClass']}, "
             f"pod requests={pods.pod_requests(pod)} (cpu in millicores, memory in bytes)")
        await client.bind("default", "hamster-1", "node-1")
        resized = await client.resize("default", "hamster-1", {"spec": {"containers": [{
            "name": "hamster", "resources": {"requests": {"cpu": "650m", "memory": "50Mi"},
                                             "limits": {"cpu": "650m", "memory": "50Mi"}}}]}})
        cpu = resized["spec"]["containers"][0]["resources"]["requests"]["cpu"]
        _say(f"resized hamster-1 through pods/resize to cpu {cpu}; generation "
             f"{resized['metadata']['generation']}, still {resized['status']['qosClass']}")
        try:
            await client.resize("default", "hamster-1", {"spec": {"containers": [{
                "name": "hamster", "resources": {"requests": {"cpu": "500m"},
                                                 "limits": {"cpu": "650m", "memory": "50Mi"}}}]}})
        except ApiError as e:
            _say(f"a resize that would change the QoS class is refused: {e.code} {e.reason}: {e}")
        await client.create("policy/poddisruptionbudgets", {
            "apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": "hamster"},
            "spec": {"minAvailable": 2, "selector": {"matchLabels": {"app": "hamster"}}}},
            namespace="default")
        pdb = await client.get("policy/poddisruptionbudgets", "hamster", "default")
        pdb["status"] = {"observedGeneration": pdb["metadata"]["generation"],
                         "disruptionsAllowed": 0, "currentHealthy": 2, "desiredHealthy": 2,
                         "expectedPods": 2}
        await client.update_status("policy/poddisruptionbudgets", pdb)
        running = await client.get("pods", "hamster-1", "default")
        running["status"]["phase"] = "Running"
        running["status"]["conditions"].append({"type": "Ready", "status": "True"})
        await client.update_status("pods", running)
        try:
            await client.evict("default", "hamster-1")
        except ApiError as e:
            _say(f"eviction of hamster-1 refused by its PodDisruptionBudget: {e.code} {e.reason}: {e}")
        await clock.sleep(30)
        await client.delete("pods", "hamster-2", namespace="default")
        await asyncio.sleep(0)
        await clock.sleep(1)
        _say("the informer saw, in order:")
        for line in seen:
            _say(f"  {line}")
        _say(f"virtual time elapsed: {clock.elapsed:.0f}s; store revision {store.current_revision()}")
        return 0
    finally:
        informer.stop()
        task.cancel()
        store.close()
