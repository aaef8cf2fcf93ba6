"""The VPA webhook over HTTPS (kvert PKI cert), called by kvert's own API server admission chain."""

import asyncio
import base64
import datetime
import json
import ssl

import aiohttp

from kvert.apiserver.admission import bootstrap, default_chain
from kvert.apiserver.certs import ensure_pki
from kvert.client import InProcessClient
from kvert.clock import WallClock
from kvert.registry import Registry
from kvert.store import open_store
from kvert.vpa.webhook import VpaWebhookServer, register_webhook, webhook_configuration

MWC = "admissionregistration.k8s.io/mutatingwebhookconfigurations"
VPAS = "autoscaling.k8s.io/verticalpodautoscalers"
LABELS = {"app": "hamster"}


def deployment():
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "hamster", "namespace": "default"},
            "spec": {"replicas": 1, "selector": {"matchLabels": LABELS},
                     "template": {"metadata": {"labels": LABELS},
                                  "spec": {"containers": [{"name": "hamster", "image": "hamster"}]}}}}


def replica_set(owner):
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": "hamster-6db596f5b4", "namespace": "default",
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "hamster",
                                              "uid": owner["metadata"]["uid"], "controller": True}]},
            "spec": {"replicas": 1, "selector": {"matchLabels": LABELS},
                     "template": {"metadata": {"labels": LABELS},
                                  "spec": {"containers": [{"name": "hamster", "image": "hamster"}]}}}}


def vpa(name, mode="Auto"):
    return {"apiVersion": "autoscaling.k8s.io/v1", "kind": "VerticalPodAutoscaler",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "hamster"},
                     "updatePolicy": {"updateMode": mode}}}


RECOMMENDATION = {"containerRecommendations": [
    {"containerName": "hamster", "target": {"cpu": "587m", "memory": "262144k"},
     "lowerBound": {"cpu": "100m", "memory": "100Mi"}, "upperBound": {"cpu": "1", "memory": "500Mi"},
     "uncappedTarget": {"cpu": "587m", "memory": "262144k"}}]}


def pod(name, rs, requests=None, limits=None):
    resources = {}
    if requests:
        resources["requests"] = requests
    if limits:
        resources["limits"] = limits
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "labels": dict(LABELS),
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                              "name": rs["metadata"]["name"], "uid": rs["metadata"]["uid"],
                                              "controller": True}]},
            "spec": {"containers": [{"name": "hamster", "image": "hamster", "resources": resources}]}}


class Cluster:
    def __init__(self, tmp_path):
        self.tmp_path = tmp_path

    async def __aenter__(self):
        self.clock = WallClock()
        self.store = open_store("memory", clock=self.clock)
        self.registry = Registry(self.store, self.clock, default_chain(self.store, self.clock))
        await bootstrap(self.registry)
        self.client = InProcessClient(self.registry)
        pki = ensure_pki(self.tmp_path / "pki", datetime.datetime.now(datetime.timezone.utc),
                         ("127.0.0.1", "localhost"))
        self.server = VpaWebhookServer(self.client, self.clock, ssl_context=pki.server_context())
        await self.server.run()
        await register_webhook(self.client, webhook_configuration(self.server.url, pki.ca_pem()))
        dep = await self.client.create("apps/deployments", deployment())
        self.rs = await self.client.create("apps/replicasets", replica_set(dep))
        return self

    async def __aexit__(self, *exc):
        await self.server.stop()
        self.store.close()

    async def add_vpa(self, name, mode="Auto", recommendation=RECOMMENDATION):
        created = await self.client.create(VPAS, vpa(name, mode))
        if recommendation is not None:
            created["status"] = {"recommendation": recommendation}
            created = await self.client.update_status(VPAS, created)
        return created


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 20))


def test_configuration_shape():
    config = webhook_configuration("https://127.0.0.1:8443/mutate", b"PEM", ignored_namespaces=("kube-system",))
    hook = config["webhooks"][0]
    assert config["metadata"]["name"] == "vpa-webhook-config"
    assert hook["name"] == "vpa.k8s.io"
    assert hook["failurePolicy"] == "Ignore" and hook["sideEffects"] == "None"
    assert hook["admissionReviewVersions"] == ["v1"] and hook["timeoutSeconds"] == 10
    assert hook["rules"][0]["operations"] == ["CREATE"] and hook["rules"][0]["resources"] == ["pods"]
    assert base64.b64decode(hook["clientConfig"]["caBundle"]) == b"PEM"
    assert hook["namespaceSelector"]["matchExpressions"][0]["values"] == ["kube-system"]


def test_pod_of_a_vpa_deployment_gets_the_target(tmp_path):
    async def go():
        async with Cluster(tmp_path) as c:
            await c.add_vpa("hamster-vpa")
            created = await c.client.create("pods", pod("hamster-1", c.rs, {"cpu": "100m", "memory": "50Mi"},
                                                        {"cpu": "200m", "memory": "100Mi"}))
            # the VPA's create and the pod's: upstream registers the webhook for both (issue 26)
            assert c.server.requests == 2
            res = created["spec"]["containers"][0]["resources"]
            assert res["requests"] == {"cpu": "587m", "memory": "262144k"}
            assert res["limits"] == {"cpu": "1174m", "memory": "500Mi"}   # 2 x 262144k
            assert created["metadata"]["annotations"] == {
                "vpaUpdates": "Pod resources updated by hamster-vpa: container 0: cpu request, memory request, "
                              "cpu limit, memory limit",
                "vpaObservedContainers": "hamster"}
            # registering again updates in place
            await register_webhook(c.client, webhook_configuration(c.server.url, b"x"))
            assert len(c.registry.store.list(MWC).items) == 1
    run(go())


def test_no_recommendation_or_mode_off_leaves_the_pod_alone(tmp_path):
    async def go():
        async with Cluster(tmp_path) as c:
            await c.add_vpa("off-vpa", mode="Off")
            p = await c.client.create("pods", pod("p1", c.rs, {"cpu": "100m"}))
            assert p["spec"]["containers"][0]["resources"] == {"requests": {"cpu": "100m"}}
            await c.add_vpa("empty-vpa", recommendation=None)
            p = await c.client.create("pods", pod("p2", c.rs, {"cpu": "100m"}))
            assert p["spec"]["containers"][0]["resources"] == {"requests": {"cpu": "100m"}}
            assert "vpaUpdates" not in (p["metadata"].get("annotations") or {})
    run(go())


def test_two_vpas_warning_event_and_admission_warning(tmp_path):
    async def go():
        async with Cluster(tmp_path) as c:
            await c.add_vpa("first")
            await asyncio.sleep(1.05)   # creationTimestamp has one-second resolution
            await c.add_vpa("a-second", recommendation={"containerRecommendations": [
                {"containerName": "hamster", "target": {"cpu": "9"}}]})
            p = await c.client.create("pods", pod("p1", c.rs))
            assert p["spec"]["containers"][0]["resources"]["requests"]["cpu"] == "587m"
            assert p["metadata"]["annotations"]["vpaUpdates"].startswith("Pod resources updated by first:")
            await c.server.admission.drain()
            events = (await c.client.list("events", namespace="default"))["items"]
            assert sorted(e["involvedObject"]["name"] for e in events if e["reason"] == "MultipleVPAs") == \
                ["a-second", "first"]
            assert all(e["type"] == "Warning" for e in events)
    run(go())


def test_server_never_denies(tmp_path):
    async def go():
        async with Cluster(tmp_path) as c:
            ctx = ssl.create_default_context(cafile=str(tmp_path / "pki" / "ca.crt"))
            review = {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                      "request": {"uid": "u-1", "operation": "CREATE",
                                  "resource": {"group": "", "version": "v1", "resource": "pods"},
                                  "namespace": "default", "object": {"spec": "garbage"}}}
            async with aiohttp.ClientSession() as s:
                async with s.post(c.server.url, data=json.dumps(review), ssl=ctx) as r:
                    body = await r.json()
            assert body["response"] == {"uid": "u-1", "allowed": True}
    run(go())


def test_cli_against_an_http_api_server(tmp_path):
    """``kvert vpa admission-controller`` against kvert's API server over HTTPS: own PKI,
    self-registration, informers over the kubeconfig."""
    import argparse

    from kvert.auth.tokens import ADMIN, TokenAuthenticator
    from kvert.apiserver.kubeconfig import write_kubeconfig
    from kvert.apiserver.server import ApiServer
    from kvert.cli.vpa_admission import _serve, register_subcommand
    from kvert.client.http import HttpClient

    parser = argparse.ArgumentParser()
    register_subcommand(parser.add_subparsers())
    # registered by URL: upstream's default, by Service, needs a Service network (issue 26)
    args = parser.parse_args(["admission-controller", "--kubeconfig", str(tmp_path / "kubeconfig"),
                              "--port", "0", "--cert-dir", str(tmp_path / "vpa-certs"), "--register-by-url",
                              "--host", "127.0.0.1", "--address", "127.0.0.1:0"])

    async def go():
        clock = WallClock()
        store = open_store("memory", clock=clock)
        tokens = TokenAuthenticator.load_or_create(tmp_path / "tokens.csv")
        api = ApiServer(store, clock, authenticator=tokens, admission=default_chain(store, clock))
        await api.bootstrap()
        api_pki = ensure_pki(tmp_path / "api-pki", datetime.datetime.now(datetime.timezone.utc))
        url = await api.start("127.0.0.1", 0, ssl_context=api_pki.server_context())
        write_kubeconfig(tmp_path / "kubeconfig", url, api_pki.ca_pem(), tokens.token_for(ADMIN))
        client = HttpClient.from_kubeconfig(tmp_path / "kubeconfig")
        ready, stop = asyncio.Event(), asyncio.Event()
        task = asyncio.ensure_future(_serve(args, ready, stop))
        try:
            dep = await client.create("apps/deployments", deployment(), namespace="default")
            rs = await client.create("apps/replicasets", replica_set(dep), namespace="default")
            created = await client.create(VPAS, vpa("hamster-vpa"), namespace="default")
            created["status"] = {"recommendation": RECOMMENDATION}
            await client.update_status(VPAS, created)
            await asyncio.wait_for(ready.wait(), 10)
            config = await client.get(MWC, "vpa-webhook-config")
            assert config["webhooks"][0]["clientConfig"]["url"].startswith("https://127.0.0.1:")
            for _ in range(100):   # the webhook's informers catch up with the status update
                p = await client.create("pods", pod("probe", rs), namespace="default", dry_run=True)
                if (p["metadata"].get("annotations") or {}).get("vpaUpdates"):
                    break
                await asyncio.sleep(0.05)
            p = await client.create("pods", pod("hamster-1", rs), namespace="default")
            assert p["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "587m", "memory": "262144k"}
            assert p["metadata"]["annotations"]["vpaObservedContainers"] == "hamster"
        finally:
            stop.set()
            assert await asyncio.wait_for(task, 10) == 0
            await client.close()
            await api.stop()
            store.close()

    run(go())


def test_in_process_plugin_in_the_registry_chain(tmp_path):
    """The simulator's way: VpaAdmissionPlugin inserted before MutatingAdmissionWebhook."""
    from kvert.vpa.admission import VpaAdmissionPlugin

    async def go():
        clock = WallClock()
        store = open_store("memory", clock=clock)
        chain = default_chain(store, clock)
        registry = Registry(store, clock, chain)
        await bootstrap(registry)
        client = InProcessClient(registry)
        at = [p.name for p in chain.plugins].index("MutatingAdmissionWebhook")
        chain.plugins.insert(at, VpaAdmissionPlugin(client, clock))
        dep = await client.create("apps/deployments", deployment())
        rs = await client.create("apps/replicasets", replica_set(dep))
        created = await client.create(VPAS, vpa("hamster-vpa"))
        created["status"] = {"recommendation": RECOMMENDATION}
        await client.update_status(VPAS, created)
        p = await client.create("pods", pod("hamster-1", rs, {"cpu": "100m"}))
        assert p["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "587m", "memory": "262144k"}
        store.close()

    run(go())
