"""The official kubernetes Python client and kr8s against `kvert up`."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

kubernetes = pytest.importorskip("kubernetes")
kr8s = pytest.importorskip("kr8s")


def _pod(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"lib": "yes"}},
            "spec": {"containers": [{"name": "app", "image": "nginx",
                                     "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}]}}


def test_official_client_crud_and_watch(cluster):
    from kubernetes import client, config, watch

    api_client = config.new_client_from_config(config_file=str(cluster.kubeconfig))
    v1 = client.CoreV1Api(api_client)
    names = [ns.metadata.name for ns in v1.list_namespace().items]
    assert {"default", "kube-system"} <= set(names)

    seen: list[tuple[str, str]] = []

    def follow():
        w = watch.Watch()
        for event in w.stream(v1.list_namespaced_pod, "default", label_selector="lib=yes",
                              timeout_seconds=10):
            seen.append((event["type"], event["object"].metadata.name))
            if event["type"] == "DELETED":
                w.stop()

    thread = threading.Thread(target=follow)
    thread.start()
    time.sleep(1)
    created = v1.create_namespaced_pod("default", _pod("official"))
    assert created.status.qos_class == "Burstable"
    v1.patch_namespaced_pod("official", "default", {"metadata": {"labels": {"patched": "1"}}})
    assert v1.read_namespaced_pod("official", "default").metadata.labels["patched"] == "1"
    with pytest.raises(client.ApiException) as info:
        v1.create_namespaced_pod("default", _pod("official"))
    assert info.value.status == 409
    v1.delete_namespaced_pod("official", "default")
    thread.join(15)
    assert seen[0] == ("ADDED", "official") and seen[-1] == ("DELETED", "official")
    apps = client.AppsV1Api(api_client)
    assert apps.list_namespaced_deployment("default").kind == "DeploymentList"


def test_kr8s_objects(cluster):
    async def main():
        api = await kr8s.asyncio.api(kubeconfig=str(cluster.kubeconfig))
        pod = await kr8s.asyncio.objects.Pod(_pod("via-kr8s"), api=api)
        await pod.create()
        await pod.label({"kr8s": "yes"})
        got = [p async for p in api.get("pods", namespace="default", label_selector="kr8s=yes")]
        assert [p.name for p in got] == ["via-kr8s"]
        await pod.patch({"metadata": {"annotations": {"a": "b"}}})
        await pod.refresh()
        assert pod.annotations["a"] == "b"
        await pod.delete()
        # graceful deletion: the pod goes once its node has stopped it, as on any cluster
        for _ in range(100):
            if not await pod.exists():
                break
            await asyncio.sleep(0.1)
        assert not await pod.exists()
        version = await api.version()
        assert version["major"] == "1"

    asyncio.run(main())
