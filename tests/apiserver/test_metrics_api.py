"""Node metrics through the API server (in-process, plain HTTP): the node proxy paths,
``/metrics``, and the ``metrics.k8s.io/v1beta1`` API with its discovery -- from a fake
provider, and from a real NodeAgent on a SimRuntime in wall-clock time."""

from __future__ import annotations

import asyncio
import json

import pytest
from aiohttp import ClientSession

from kvert.apiserver.admission import default_chain
from kvert.auth.tokens import ADMIN, TokenAuthenticator
from kvert.api.prometheus import CONTENT_TYPE, parse_exposition
from kvert.apiserver.metrics import METRICS_TYPES, NodeMetricsProvider, metrics_table
from kvert.cluster.metrics import LocalNodeMetrics
from kvert.api.quantity import Quantity
from kvert.apiserver.server import ApiServer
from kvert.client import InProcessClient
from kvert.clock import WallClock
from kvert.kubelet.agent import NodeAgent
from kvert.kubelet.config import NodeConfig
from kvert.kubelet.metrics import node_metrics, pod_metrics
from kvert.kubelet.runtime.sim import SimRuntime
from kvert.store import open_store

AGGREGATED = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"

CADVISOR = ('# HELP container_cpu_usage_seconds_total Cumulative cpu time consumed in seconds.\n'
            '# TYPE container_cpu_usage_seconds_total counter\n'
            'container_cpu_usage_seconds_total{container="app",cpu="total",id="/x",image="nginx",'
            'name="x",namespace="default",pod="web"} 1.5\n')


def _pod(name: str, namespace: str, labels: dict, *containers: tuple[str, int, int]) -> dict:
    spec_pod = {"metadata": {"name": name, "namespace": namespace, "labels": labels},
                "spec": {"containers": [{"name": c[0]} for c in containers]}}
    return pod_metrics(spec_pod, {c[0]: (c[1], c[2]) for c in containers}, timestamp=1e9, window=15.0)


class FakeProvider:
    """A NodeMetricsProvider with fixed answers."""

    def __init__(self) -> None:
        self.agents = {"node-1": None}
        self.nodes_ = [node_metrics("node-1", 250_000_000, 512 * 2**20, timestamp=1e9, window=15.0,
                                    labels={"kubernetes.io/hostname": "node-1"}),
                       node_metrics("node-2", 0, 0, timestamp=1e9, window=15.0,
                                    labels={"kubernetes.io/hostname": "node-2"})]
        self.pods_ = [_pod("web", "default", {"app": "web"}, ("app", 100_000_000, 64 * 2**20),
                           ("sidecar", 50_000_000, 32 * 2**20)),
                      _pod("db", "default", {"app": "db"}, ("db", 5_000_000, 2**30)),
                      _pod("dns", "kube-system", {"k8s-app": "dns"}, ("dns", 1_000_000, 16 * 2**20))]

    def register(self, agent) -> None:
        self.agents[agent.name] = agent

    def unregister(self, node: str) -> None:
        self.agents.pop(node, None)

    def nodes(self) -> list[str]:
        return sorted(self.agents)

    async def cadvisor(self, node: str) -> str | None:
        return CADVISOR if node in self.agents else None

    async def kubelet_metrics(self, node: str) -> str | None:
        return f'kubelet_node_name{{node="{node}"}} 1\n' if node in self.agents else None

    async def stats_summary(self, node: str) -> dict | None:
        return {"node": {"nodeName": node}, "pods": []} if node in self.agents else None

    def container_log(self, node, namespace, pod, container, *, previous=False):
        return None

    async def exec(self, node, namespace, pod, container, command, io) -> int:
        raise LookupError("no containers here")

    async def attach(self, node, namespace, pod, container, io) -> None:
        raise LookupError("no containers here")

    async def port_forward(self, node, namespace, pod, port):
        raise ConnectionRefusedError(port)

    def node_metrics(self) -> list[dict]:
        return self.nodes_

    def pod_metrics(self, namespace: str | None = None) -> list[dict]:
        return [p for p in self.pods_ if not namespace or p["metadata"]["namespace"] == namespace]


class Api:
    def __init__(self, base: str, token: str):
        self.base = base
        self.headers = {"Authorization": f"Bearer {token}"}
        self.session = ClientSession()

    async def call(self, method: str, path: str, *, headers=None, auth: bool = True, body=None):
        h = {**(self.headers if auth else {}), "Content-Type": "application/json", **(headers or {})}
        data = None if body is None else json.dumps(body).encode()
        async with self.session.request(method, self.base + path, headers=h, data=data) as r:
            text = await r.text()
            if r.content_type.startswith("application/json") and text:
                return r.status, json.loads(text), r.headers
            return r.status, text, r.headers

    async def close(self) -> None:
        await self.session.close()


def run(tmp_path, scenario, provider=None):
    async def main():
        clock = WallClock()
        store = open_store("memory", clock=clock)
        tokens = TokenAuthenticator.load_or_create(tmp_path / "tokens.csv")
        server = ApiServer(store, clock, authenticator=tokens, seed=1,
                           admission=default_chain(store, clock), metrics_provider=provider)
        await server.bootstrap()
        url = await server.start("127.0.0.1", 0)
        api = Api(url, tokens.token_for(ADMIN))
        try:
            return await scenario(api, server)
        finally:
            await api.close()
            await server.stop()
            store.close()

    return asyncio.run(main())


def test_fake_provider_satisfies_the_protocol():
    assert isinstance(FakeProvider(), NodeMetricsProvider)
    assert isinstance(LocalNodeMetrics(WallClock()), NodeMetricsProvider)
    assert all(not rt.stored and rt.verbs == ("get", "list") for rt in METRICS_TYPES)


def test_discovery_lists_metrics_api_only_with_a_provider(tmp_path):
    async def scenario(api, server):
        out = {}
        out["group"] = await api.call("GET", "/apis/metrics.k8s.io")
        out["resources"] = await api.call("GET", "/apis/metrics.k8s.io/v1beta1")
        out["groups"] = await api.call("GET", "/apis")
        out["aggregated"] = await api.call("GET", "/apis", headers={"Accept": AGGREGATED})
        return out

    out = run(tmp_path, scenario, FakeProvider())
    status, group, _ = out["group"]
    assert status == 200 and group["preferredVersion"]["groupVersion"] == "metrics.k8s.io/v1beta1"
    status, resources, _ = out["resources"]
    assert status == 200
    assert resources["resources"] == [
        {"name": "nodes", "singularName": "nodemetrics", "namespaced": False, "kind": "NodeMetrics",
         "verbs": ["get", "list"]},
        {"name": "pods", "singularName": "podmetrics", "namespaced": True, "kind": "PodMetrics",
         "verbs": ["get", "list"]}]
    assert "metrics.k8s.io" in [g["name"] for g in out["groups"][1]["groups"]]
    items = {i["metadata"]["name"]: i for i in out["aggregated"][1]["items"]}
    version = items["metrics.k8s.io"]["versions"][0]
    assert version["version"] == "v1beta1"
    assert {(r["resource"], r["scope"], r["responseKind"]["kind"]) for r in version["resources"]} == {
        ("nodes", "Cluster", "NodeMetrics"), ("pods", "Namespaced", "PodMetrics")}

    async def without(api, server):
        return [await api.call("GET", p) for p in
                ("/apis/metrics.k8s.io", "/apis/metrics.k8s.io/v1beta1", "/apis/metrics.k8s.io/v1beta1/nodes",
                 "/apis")]

    *missing, groups = run(tmp_path, without)
    assert [m[0] for m in missing] == [404, 404, 404]
    assert missing[2][1]["kind"] == "Status"
    assert "metrics.k8s.io" not in [g["name"] for g in groups[1]["groups"]]


def test_metrics_api_list_get_selectors_and_errors(tmp_path):
    async def scenario(api, server):
        calls = {
            "nodes": ("GET", "/apis/metrics.k8s.io/v1beta1/nodes"),
            "node": ("GET", "/apis/metrics.k8s.io/v1beta1/nodes/node-1"),
            "node_missing": ("GET", "/apis/metrics.k8s.io/v1beta1/nodes/node-9"),
            "node_labels": ("GET", "/apis/metrics.k8s.io/v1beta1/nodes?labelSelector=kubernetes.io%2Fhostname%3Dnode-2"),
            "all_pods": ("GET", "/apis/metrics.k8s.io/v1beta1/pods"),
            "ns_pods": ("GET", "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods"),
            "pod": ("GET", "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/web"),
            "pod_missing": ("GET", "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/nope"),
            "pod_labels": ("GET", "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods?labelSelector=app%20in%20(db)"),
            "pod_fields": ("GET", "/apis/metrics.k8s.io/v1beta1/pods?fieldSelector=metadata.namespace%3Dkube-system"),
            "bad_selector": ("GET", "/apis/metrics.k8s.io/v1beta1/pods?labelSelector=%3D%3D%3D"),
            "create": ("POST", "/apis/metrics.k8s.io/v1beta1/nodes"),
            "delete": ("DELETE", "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/web"),
            "watch": ("GET", "/apis/metrics.k8s.io/v1beta1/nodes?watch=true"),
            "other_version": ("GET", "/apis/metrics.k8s.io/v1/nodes"),
            "other_resource": ("GET", "/apis/metrics.k8s.io/v1beta1/services"),
            "namespaced_nodes": ("GET", "/apis/metrics.k8s.io/v1beta1/namespaces/default/nodes"),
        }
        out = {k: await api.call(m, p, body={} if m == "POST" else None) for k, (m, p) in calls.items()}
        out["noauth"] = await api.call("GET", "/apis/metrics.k8s.io/v1beta1/nodes", auth=False)
        return out

    out = run(tmp_path, scenario, FakeProvider())
    status, nodes, _ = out["nodes"]
    assert status == 200 and nodes["kind"] == "NodeMetricsList" and nodes["apiVersion"] == "metrics.k8s.io/v1beta1"
    assert [n["metadata"]["name"] for n in nodes["items"]] == ["node-1", "node-2"]
    assert out["node"][1]["kind"] == "NodeMetrics" and out["node"][1]["usage"] == {"cpu": "250m", "memory": "512Mi"}
    assert out["node_missing"][0] == 404
    assert out["node_missing"][1]["message"] == 'nodemetrics.metrics.k8s.io "node-9" not found'
    assert [n["metadata"]["name"] for n in out["node_labels"][1]["items"]] == ["node-2"]
    assert [p["metadata"]["name"] for p in out["all_pods"][1]["items"]] == ["web", "db", "dns"]
    assert out["all_pods"][1]["kind"] == "PodMetricsList"
    assert [p["metadata"]["name"] for p in out["ns_pods"][1]["items"]] == ["web", "db"]
    pod = out["pod"][1]
    assert pod["kind"] == "PodMetrics" and [c["name"] for c in pod["containers"]] == ["app", "sidecar"]
    assert out["pod_missing"][0] == 404
    assert out["pod_missing"][1]["message"] == 'podmetrics.metrics.k8s.io "default/nope" not found'
    assert [p["metadata"]["name"] for p in out["pod_labels"][1]["items"]] == ["db"]
    assert [p["metadata"]["name"] for p in out["pod_fields"][1]["items"]] == ["dns"]
    assert out["bad_selector"][0] == 400 and out["bad_selector"][1]["reason"] == "BadRequest"
    for key in ("create", "delete", "watch"):
        assert out[key][0] == 405 and out[key][1]["reason"] == "MethodNotAllowed", key
    for key in ("other_version", "other_resource", "namespaced_nodes"):
        assert out[key][0] == 404 and out[key][1]["kind"] == "Status", key
    assert out["noauth"][0] == 401


def test_metrics_api_tables_for_kubectl_get(tmp_path):
    async def scenario(api, server):
        return (await api.call("GET", "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods",
                               headers={"Accept": TABLE}),
                await api.call("GET", "/apis/metrics.k8s.io/v1beta1/nodes/node-1", headers={"Accept": TABLE}))

    (status, pods, _), (_, node, _) = run(tmp_path, scenario, FakeProvider())
    assert status == 200 and pods["kind"] == "Table"
    assert [c["name"] for c in pods["columnDefinitions"]] == ["Name", "cpu", "memory", "Window"]
    # a pod's usage is summed over its containers: 100m + 50m, 64Mi + 32Mi
    assert pods["rows"][0]["cells"] == ["web", "150m", "96Mi", "15s"]
    assert pods["rows"][0]["object"]["kind"] == "PartialObjectMetadata"
    assert node["rows"][0]["cells"] == ["node-1", "250m", "512Mi", "15s"]
    assert metrics_table(METRICS_TYPES[0], [], "None")["rows"] == []


def test_node_proxy_paths_and_apiserver_metrics(tmp_path):
    async def scenario(api, server):
        out = {}
        out["cadvisor"] = await api.call("GET", "/api/v1/nodes/node-1/proxy/metrics/cadvisor")
        out["with_port"] = await api.call("GET", "/api/v1/nodes/https:node-1:10250/proxy/metrics/cadvisor")
        out["kubelet"] = await api.call("GET", "/api/v1/nodes/node-1/proxy/metrics")
        out["healthz"] = await api.call("GET", "/api/v1/nodes/node-1/proxy/healthz")
        out["other"] = await api.call("GET", "/api/v1/nodes/node-1/proxy/configz")
        out["summary"] = await api.call("GET", "/api/v1/nodes/node-1/proxy/stats/summary")
        out["unknown_node"] = await api.call("GET", "/api/v1/nodes/node-9/proxy/metrics/cadvisor")
        out["post"] = await api.call("POST", "/api/v1/nodes/node-1/proxy/metrics", body={})
        out["noauth"] = await api.call("GET", "/api/v1/nodes/node-1/proxy/metrics/cadvisor", auth=False)
        await api.call("GET", "/api/v1/namespaces/default/pods")
        await api.call("GET", "/api/v1/namespaces/default/pods/nope")
        out["metrics"] = await api.call("GET", "/metrics")
        out["metrics_noauth"] = await api.call("GET", "/metrics", auth=False)
        return out

    out = run(tmp_path, scenario, FakeProvider())
    status, text, headers = out["cadvisor"]
    assert status == 200 and text == CADVISOR
    assert headers["Content-Type"] == CONTENT_TYPE
    assert out["with_port"][1] == CADVISOR
    assert out["kubelet"][1] == 'kubelet_node_name{node="node-1"} 1\n'
    assert out["healthz"][:2] == (200, "ok")
    assert out["other"][0] == 404
    # the Summary API (KEP-4205: PSI in it), JSON
    status, body, _ = out["summary"]
    assert status == 200 and body == {"node": {"nodeName": "node-1"}, "pods": []}
    status, body, _ = out["unknown_node"]
    assert status == 404 and body["kind"] == "Status" and body["reason"] == "NotFound"
    assert body["details"] == {"name": "node-9", "kind": "nodes"}
    assert out["post"][0] == 405
    assert out["noauth"][0] == 401 and out["metrics_noauth"][0] == 401
    status, text, headers = out["metrics"]
    assert status == 200 and headers["Content-Type"] == CONTENT_TYPE
    samples = parse_exposition(text)

    def value(name, **labels):
        found = [s.value for s in samples if s.name == name and all(s.labels.get(k) == v for k, v in labels.items())]
        assert len(found) == 1, (name, labels, found)
        return found[0]

    assert value("apiserver_request_total", verb="LIST", resource="pods", code="200", scope="namespace",
                 version="v1", group="") == 1
    assert value("apiserver_request_total", verb="GET", resource="pods", code="404", scope="resource") == 1
    assert value("apiserver_request_total", verb="CONNECT", resource="nodes", subresource="proxy",
                 code="404") == 2
    assert value("apiserver_request_total", verb="CONNECT", resource="nodes", subresource="proxy", code="405") == 1
    assert value("apiserver_storage_objects", resource="namespaces") >= 4
    assert value("apiserver_storage_objects", resource="priorityclasses.scheduling.k8s.io") >= 2


def test_node_proxy_without_a_provider_is_not_found(tmp_path):
    async def scenario(api, server):
        return await api.call("GET", "/api/v1/nodes/node-1/proxy/metrics/cadvisor")

    status, body, _ = run(tmp_path, scenario)
    assert status == 404 and body["reason"] == "NotFound"


class _Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def now(self) -> float:
        return self.t


class _IdleAgent:
    """A node agent that runs nothing: no rates, so no NodeMetrics of its own."""

    name = "idle"
    node = {"metadata": {"name": "idle", "labels": {"kubernetes.io/hostname": "idle"}}}

    def __init__(self) -> None:
        self.fail = False

    async def pod_metrics(self) -> list[dict]:
        if self.fail:
            raise RuntimeError("runtime down")
        return []

    def node_metrics(self) -> dict | None:
        return None


def test_sampler_reports_an_idle_node_as_zero_after_two_samples_and_survives_errors():
    async def main():
        clock = _Clock()
        provider = LocalNodeMetrics(clock, resolution=5)
        agent = _IdleAgent()
        provider.register(agent)
        await provider.sample()
        first = provider.node_metrics()
        clock.t += 5
        await provider.sample()
        second = provider.node_metrics()
        agent.fail = True
        clock.t += 5
        await provider.sample()             # logged, the last sample kept
        kept = provider.node_metrics()
        provider.unregister("idle")
        return first, second, kept, provider.node_metrics(), await provider.cadvisor("idle")

    first, second, kept, after, cadvisor = asyncio.run(main())
    assert first == []
    assert [(n["metadata"]["name"], n["usage"], n["window"]) for n in second] == [
        ("idle", {"cpu": "0", "memory": "0"}, "5s")]
    assert second[0]["metadata"]["labels"] == {"kubernetes.io/hostname": "idle"}
    assert kept == second
    assert after == [] and cadvisor is None
    with pytest.raises(ValueError):
        LocalNodeMetrics(_Clock(), resolution=0)


POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "labels": {"app": "web"}},
       "spec": {"nodeName": "node-1", "containers": [{
           "name": "app", "image": "nginx",
           "resources": {"requests": {"cpu": "200m", "memory": "64Mi"},
                         "limits": {"cpu": "200m", "memory": "64Mi"}}}]}}


def test_real_node_agent_in_wall_clock_time(tmp_path):
    """A NodeAgent on a SimRuntime (wall clock), sampled every 0.2 s: kubectl top's reads and
    Prometheus' scrape path answer with the running pod's usage."""
    clock = WallClock()
    provider = LocalNodeMetrics(clock, resolution=0.2)

    async def scenario(api, server):
        config = NodeConfig(capacity={"cpu": 4000, "memory": 16 * 2**30, "pods": 110})
        agent = NodeAgent(InProcessClient(server.registry, user="system:node-agent"), clock, config,
                          SimRuntime(clock, tick=0.1, cpu_capacity=4000, memory_capacity=16 * 2**30),
                          name="node-1", pleg_seconds=0.1)
        provider.register(agent)
        tasks = [asyncio.ensure_future(agent.run()), asyncio.ensure_future(provider.run())]
        try:
            await asyncio.wait_for(agent.ready.wait(), 10)
            status, _, _ = await api.call("POST", "/api/v1/namespaces/default/pods", body=POD)
            assert status == 201
            pods = nodes = None
            for _ in range(100):
                _, pods, _ = await api.call("GET", "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods")
                _, nodes, _ = await api.call("GET", "/apis/metrics.k8s.io/v1beta1/nodes")
                if pods["items"] and nodes["items"]:
                    break
                await clock.sleep(0.1)
            _, text, _ = await api.call("GET", "/api/v1/nodes/node-1/proxy/metrics/cadvisor")
            _, kubelet, _ = await api.call("GET", "/api/v1/nodes/node-1/proxy/metrics")
            return pods, nodes, text, kubelet
        finally:
            agent.stop()
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    pods, nodes, text, kubelet = run(tmp_path, scenario, provider)
    [pod] = pods["items"]
    assert pod["metadata"]["name"] == "web" and pod["metadata"]["labels"] == {"app": "web"}
    [container] = pod["containers"]
    assert container["name"] == "app"
    assert Quantity.parse(container["usage"]["memory"]).value() > 0
    assert Quantity.parse(container["usage"]["cpu"]).milli_value() > 0
    [node] = nodes["items"]
    assert node["metadata"]["name"] == "node-1" and node["usage"]["cpu"] != "0"
    assert node["metadata"]["labels"]["kubernetes.io/hostname"] == "node-1"
    samples = parse_exposition(text)
    cpu = [s for s in samples if s.name == "container_cpu_usage_seconds_total" and s.labels.get("pod") == "web"]
    assert len(cpu) == 1 and cpu[0].labels["namespace"] == "default" and cpu[0].labels["container"] == "app"
    assert cpu[0].value > 0
    kubelet_samples = {(s.name, tuple(sorted(s.labels.items()))): s.value for s in parse_exposition(kubelet)}
    assert kubelet_samples[("kubelet_running_pods", ())] == 1
    assert kubelet_samples[("kubelet_running_containers", (("container_state", "running"),))] == 1
