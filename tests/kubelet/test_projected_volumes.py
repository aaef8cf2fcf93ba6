"""The node agent's projected volumes: a token bound to the pod, the cluster CA and the
namespace in kube-api-access-*, refreshed at 80% of the token's life, removed with the pod
(pkg/kubelet/token/token_manager.go, pkg/volume/projected)."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import stat

from kvert.apiserver.admission import bootstrap, default_chain
from kvert.auth.serviceaccount import ServiceAccountTokens
from kvert.client import InProcessClient
from kvert.clock import VirtualClock
from kvert.controllers import ControllerManager
from kvert.kubelet.tokens import ProjectedVolumes, REFRESH_FRACTION
from kvert.registry import Registry
from kvert.registry.tokenrequest import TokenRequests
from kvert.store import open_store

from tests.kubelet.test_agent_support import (events, in_phase, pod, run_pod, running, start_agent,
                                              stop, wait_for)

CA = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
MOUNT = "/var/run/secrets/kubernetes.io/serviceaccount"


def _claims(token: str) -> dict:
    part = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))


async def _cluster(clock, key_dir):
    store = open_store("memory", clock=clock)
    signer = ServiceAccountTokens.load_or_create(key_dir / "sa.key")
    registry = Registry(store, clock, default_chain(store, clock, service_accounts=True), seed=1,
                        token_requests=TokenRequests(signer))
    await bootstrap(registry)
    client = InProcessClient(registry)
    publisher = "root-ca-cert-publisher"
    manager = ControllerManager(client, clock, controllers=("serviceaccount", publisher),
                                settings={publisher: {"ca_pem": CA}})
    task = asyncio.ensure_future(manager.run())
    await wait_for(clock, lambda: manager.synced, what="controllers")
    return client, manager, task


def test_pod_gets_its_token_ca_and_namespace_as_private_files(tmp_path):
    clock = VirtualClock()
    node_dir = tmp_path / "nodes" / "node-1"

    async def main():
        client, manager, task = await _cluster(clock, tmp_path)
        agent, agent_task = await start_agent(client, clock, checkpoint_dir=node_dir)
        accounts = client.registry.store
        await wait_for(clock, lambda: accounts.list("serviceaccounts", namespace="default").items,
                       what="the default ServiceAccount")
        web = await run_pod(client, pod("web"))
        await running(client, clock, "web")
        volume = next(v["name"] for v in web["spec"]["volumes"])
        assert volume.startswith("kube-api-access-")
        assert web["spec"]["containers"][0]["volumeMounts"][0]["mountPath"] == MOUNT
        uid = web["metadata"]["uid"]
        directory = node_dir / "pods" / uid / "volumes" / "kubernetes.io~projected" / volume
        files = {p.name: p for p in directory.iterdir()}
        assert sorted(files) == ["ca.crt", "namespace", "token"]
        for p in files.values():
            assert stat.S_IMODE(os.stat(p).st_mode) == 0o600
        assert files["ca.crt"].read_text() == CA
        assert files["namespace"].read_text() == "default"
        first = files["token"].read_text()
        found = _claims(first)
        assert found["sub"] == "system:serviceaccount:default:default"
        assert found["kubernetes.io"]["pod"] == {"name": "web", "uid": uid}
        assert found["kubernetes.io"]["node"]["name"] == "node-1"
        # the 3607 s token is issued for a year, warning after 3607 s (extended expiration)
        assert found["kubernetes.io"]["warnafter"] - found["iat"] == 3607

        # refreshed once 80% of the 3607 s it was requested for has passed
        await clock.sleep(REFRESH_FRACTION * 3607 - 60)
        assert (directory / "token").read_text() == first
        await clock.sleep(120)
        second = (directory / "token").read_text()
        assert second != first and _claims(second)["iat"] > found["iat"]

        await client.delete("pods", "web", namespace="default")
        await wait_for(clock, lambda: not (node_dir / "pods" / uid).exists(), what="files removed")

        # a pod that ends has its volumes torn down too (and no more tokens asked for it)
        job = await run_pod(client, pod("job", restart_policy="Never",
                                        usage={"c": {"cpu": "10m", "memory": "8Mi",
                                                     "exitAfter": "5s"}}))
        job_dir = node_dir / "pods" / job["metadata"]["uid"]
        await wait_for(clock, job_dir.exists, what="job volumes")
        await in_phase(client, clock, "job", "Succeeded")
        assert not job_dir.exists() and agent.volumes.next_refresh() is None
        await stop(agent, agent_task)
        manager.stop()
        task.cancel()

    clock.run(main())


def test_a_missing_config_map_fails_the_mount_and_is_retried(tmp_path):
    clock = VirtualClock()

    async def main():
        store = open_store("memory", clock=clock)
        signer = ServiceAccountTokens.load_or_create(tmp_path / "sa.key")
        registry = Registry(store, clock, default_chain(store, clock), seed=1,
                            token_requests=TokenRequests(signer))
        await bootstrap(registry)
        client = InProcessClient(registry)
        await client.create("serviceaccounts", {"metadata": {"name": "default"}}, namespace="default")
        agent, agent_task = await start_agent(client, clock)
        body = pod("web", volumes=[{"name": "cfg", "projected": {"sources": [
            {"configMap": {"name": "settings"}}]}}])
        await run_pod(client, body)
        failed = await wait_for(clock, lambda: events(client, "web", "FailedMount"), what="event")
        assert failed[0]["message"] == ('MountVolume.SetUp failed for volume "cfg" : configmaps '
                                        '"settings" not found')
        assert (await client.get("pods", "web", "default"))["status"]["phase"] == "Pending"
        await client.create("configmaps", {"metadata": {"name": "settings"}, "data": {"a": "1"}},
                            namespace="default")
        await running(client, clock, "web")
        assert agent.volumes.files[(agent.pods[next(iter(agent.pods))].uid, "cfg")] == {"a": b"1"}
        await stop(agent, agent_task)

    clock.run(main())


def test_projected_sources_without_a_cluster():
    # the downward API items and optional sources, straight from a pod object
    clock = VirtualClock()

    class Client:
        async def get(self, resource, name, namespace=""):
            from kvert.api.errors import NotFound
            if (resource, name) == ("secrets", "s"):
                return {"data": {"user": base64.b64encode(b"admin").decode(), "x": ""}}
            raise NotFound(resource, name)

    volumes = ProjectedVolumes(Client(), clock, None)
    body = {"metadata": {"name": "web", "namespace": "ns", "uid": "u1",
                         "labels": {"b": "2", "a": "1"}, "annotations": {"k": "v"}},
            "spec": {"volumes": [{"name": "all", "projected": {"sources": [
                {"downwardAPI": {"items": [
                    {"path": "labels", "fieldRef": {"fieldPath": "metadata.labels"}},
                    {"path": "name", "fieldRef": {"fieldPath": "metadata.name"}},
                    {"path": "uid", "fieldRef": {"fieldPath": "metadata.uid"}},
                    {"path": "k", "fieldRef": {"fieldPath": "metadata.annotations['k']"}}]}},
                {"secret": {"name": "s", "items": [{"key": "user", "path": "creds/user"}]}},
                {"configMap": {"name": "absent", "optional": True}},
            ]}}]}}
    clock.run(volumes.mount(body))
    assert volumes.files[("u1", "all")] == {"labels": b'a="1"\nb="2"', "name": b"web", "uid": b"u1",
                                            "k": b"v", "creds/user": b"admin"}
    assert volumes.mounted("u1")
    volumes.remove("u1")
    assert not volumes.mounted("u1") and volumes.files == {}
