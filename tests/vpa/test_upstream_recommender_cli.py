"""``kvert vpa recommender`` with upstream VPA 1.8's flags (docs/flags.md, config.go,
common/flags.go), its Prometheus history flags (the reader's queries, labels and credentials), and
the recommender's metrics and health check on ``--address``, against upstream's definitions."""

from __future__ import annotations

import asyncio
import base64
import math

import aiohttp
import numpy as np
import pytest
from aiohttp import web

from kvert.api.prometheus import parse_exposition
from kvert.cli import vpa_components
from kvert.cli.history_flags import history_from_args
from kvert.cli.main import build_parser
from kvert.clock import VirtualClock
from kvert.vpa.features import VpaGates
from kvert.vpa.history import PrometheusHistory
from kvert.vpa.instruments import HealthCheck, RecommenderMetrics
from kvert.vpa.metrics_source import UsageTable
from kvert.vpa.recommender import VPAS, Recommender
from kvert.vpa.serving import MetricsServer

from tests.vpa.upstream_recommender_support import DEPLOY, NS, deployment, pod, run, vpa


def parse(*argv: str):
    return build_parser().parse_args(["vpa", "recommender", *argv])


# upstream's docs/flags.md, "What are the parameters to VPA recommender?": the flags of the
# behaviour kvert has (not klog's log-file flags, the external metrics provider, humanize-memory)
UPSTREAM_FLAGS = """address checkpoints-gc-interval checkpoints-timeout confidence-interval-cpu
confidence-interval-memory container-name-label container-namespace-label container-pod-name-label
container-recommendation-max-allowed-cpu container-recommendation-max-allowed-memory
cpu-histogram-decay-half-life cpu-integer-post-processor-enabled feature-gates history-cpu-metric
history-length history-memory-metric history-resolution ignored-vpa-object-namespaces kube-api-burst
kube-api-qps kubeconfig leader-elect leader-elect-lease-duration leader-elect-renew-deadline
leader-elect-resource-name leader-elect-resource-namespace leader-elect-retry-period
memory-aggregation-interval memory-aggregation-interval-count memory-histogram-decay-half-life
memory-saver metric-for-pod-labels min-checkpoints oom-bump-up-ratio oom-min-bump-up-bytes password
pod-label-prefix pod-name-label pod-namespace-label pod-recommendation-min-cpu-millicores
pod-recommendation-min-memory-mb profiling prometheus-address prometheus-bearer-token
prometheus-bearer-token-file prometheus-cadvisor-job-name prometheus-insecure prometheus-query-timeout
recommendation-lower-bound-cpu-percentile recommendation-lower-bound-memory-percentile
recommendation-margin-fraction recommendation-upper-bound-cpu-percentile
recommendation-upper-bound-memory-percentile recommender-interval recommender-name round-cpu-millicores
round-memory-bytes stderrthreshold storage target-cpu-percentile target-memory-percentile
update-worker-count username v vpa-object-namespace""".split()


def test_help_has_upstreams_flags(capsys):
    with pytest.raises(SystemExit):
        parse("--help")
    out = capsys.readouterr().out
    assert [f for f in UPSTREAM_FLAGS if f"--{f} " not in out and f"--{f}," not in out and f"--{f}\n" not in out] == []


def test_defaults_are_upstreams():
    # upstream: DefaultRecommenderConfig (config.go), DefaultCommonConfig (common/flags.go), docs/flags.md
    a = parse()
    assert (a.address, a.interval, a.checkpoints_gc_interval, a.checkpoints_timeout, a.update_worker_count,
            a.min_checkpoints, a.memory_saver, a.recommender_name, a.storage) == (
        ":8942", 60.0, 600.0, 60.0, 10, 10, False, "default", "")          # "" is upstream's checkpoint mode
    assert (a.history_length, a.history_resolution, a.history_cpu_metric, a.history_memory_metric,
            a.prometheus_query_timeout, a.pod_label_prefix, a.metric_for_pod_labels, a.pod_namespace_label,
            a.pod_name_label, a.container_namespace_label, a.prometheus_insecure) == (
        "8d", "1h", "container_cpu_usage_seconds_total", "container_memory_working_set_bytes", "5m", "pod_label_",
        'up{job="kubernetes-pods"}', "kubernetes_namespace", "kubernetes_pod_name", "namespace", False)
    assert (a.kube_api_qps, a.kube_api_burst, a.profiling, a.vpa_object_namespace, a.ignored_vpa_object_namespaces,
            a.feature_gates, a.leader_elect, a.leader_elect_resource_name, a.leader_elect_resource_namespace) == (
        50.0, 100.0, False, "", "", "", False, "vpa-recommender-lease", "kube-system")
    # kvert's documented differences: today's cAdvisor labels, any scrape job
    assert (a.container_pod_name_label, a.container_name_label, a.prometheus_cadvisor_job_name) == (
        "pod", "container", "")
    options = vpa_components.recommender_options(a)
    assert options["gates"] == VpaGates() and options["checkpoint_interval"] == 0.0    # checkpoints every loop
    assert (options["use_checkpoints"], options["memory_saver"], options["namespace"]) == (True, False, None)


def test_flags_become_the_recommenders_options():
    a = parse("--memory-saver", "--update-worker-count", "3", "--checkpoints-timeout", "30s",
              "--feature-gates", "PerVPAConfig=true", "--ignored-vpa-object-namespaces", "kube-system,monitoring",
              "--storage=prometheus", "--checkpoint-exact=true", "--recommender-name", "performance", "--v=6")
    options = vpa_components.recommender_options(a)
    assert options["gates"].per_vpa_config and options["memory_saver"] and not options["use_checkpoints"]
    assert (options["update_worker_count"], options["checkpoints_timeout"], options["ignored_namespaces"],
            options["exact_checkpoints"], options["name"]) == (3, 30.0, ("kube-system", "monitoring"), True,
                                                              "performance")
    assert a.log_level == "debug" and parse("--v=0").log_level == "warning"
    # upstream: ValidateCommonConfig
    with pytest.raises(ValueError, match="^--vpa-object-namespace and --ignored-vpa-object-namespaces are mutually "
                                         "exclusive and can't be set together.$"):
        vpa_components.recommender_options(parse("--vpa-object-namespace", "a", "--ignored-vpa-object-namespaces", "b"))
    with pytest.raises(ValueError, match="--feature-gates: unrecognized feature gate: Nope"):
        vpa_components.recommender_options(parse("--feature-gates", "Nope=true"))


def test_storage_modes():
    # upstream: initHistoryProvider: checkpoints unless --storage=prometheus, which reads
    # --prometheus-address (default http://prometheus.monitoring.svc)
    provider = history_from_args(parse("--storage=prometheus"))
    assert isinstance(provider, PrometheusHistory) and provider.url == "http://prometheus.monitoring.svc"
    assert history_from_args(parse("--storage=checkpoint", "--prometheus-address", "http://p:9090")) is None
    # kvert: without --storage, a given source loads the history of VPAs without checkpoints
    assert history_from_args(parse("--prometheus-address", "http://p:9090")).url == "http://p:9090"
    assert history_from_args(parse()) is None
    with pytest.raises(ValueError, match="--storage=prometheus reads Prometheus"):
        history_from_args(parse("--storage=prometheus", "--history-file", "x.csv"))


def test_prometheus_flags_map_to_the_reader(tmp_path, monkeypatch):
    # upstream: TestNewPrometheusHistoryProviderConfig "maps every flag to the correct field"
    # (configWithPrometheusFlagsSet) and "returns an error for an invalid query timeout"
    monkeypatch.delenv("PROMETHEUS_USERNAME", raising=False)
    monkeypatch.delenv("PROMETHEUS_PASSWORD", raising=False)
    p = history_from_args(parse(
        "--storage=prometheus", "--prometheus-address", "http://prometheus.example:9090", "--prometheus-insecure",
        "--prometheus-query-timeout", "7m", "--history-length", "9d", "--history-resolution", "2h",
        "--pod-label-prefix", "label_", "--metric-for-pod-labels", "kube_pod_labels", "--pod-namespace-label",
        "namespace", "--pod-name-label", "pod", "--container-namespace-label", "container_namespace",
        "--container-pod-name-label", "container_pod", "--container-name-label", "container",
        "--prometheus-cadvisor-job-name", "cadvisor-job", "--vpa-object-namespace", "vpa-namespace",
        "--history-cpu-metric", "custom_cpu_metric", "--history-memory-metric", "custom_memory_metric",
        "--prometheus-bearer-token", "bearer-token", "--username", "user", "--password", "pass"))
    assert isinstance(p, PrometheusHistory)
    n = p.names
    assert (p.url, p.ssl, p.timeout, p.history_length, p.resolution, p.job, p.namespace) == (
        "http://prometheus.example:9090", False, 420.0, 9 * 86400.0, 7200.0, "cadvisor-job", "vpa-namespace")
    assert (n.pod_label_prefix, n.pod_labels_metric, n.pod_labels_namespace_label, n.pod_labels_name_label,
            n.namespace_label, n.pod_label, n.container_label, n.cpu_metric, n.memory_metric) == (
        "label_", "kube_pod_labels", "namespace", "pod", "container_namespace", "container_pod", "container",
        "custom_cpu_metric", "custom_memory_metric")
    assert p.headers == {"Authorization": "Bearer bearer-token"}        # the token wins (TestPrometheusAuth)
    with pytest.raises(ValueError, match="--prometheus-query-timeout"):
        history_from_args(parse("--storage=prometheus", "--prometheus-query-timeout", "not-a-duration"))
    token = tmp_path / "token"
    token.write_text("from-file\n")
    assert history_from_args(parse("--storage=prometheus", "--prometheus-bearer-token-file", str(token))).headers == {
        "Authorization": "Bearer from-file"}


class FakePrometheus:
    """Prometheus' query and query_range answered in this loop; requests recorded with headers."""

    def __init__(self, instant: list) -> None:
        self.instant = instant
        self.requests: list[tuple[str, dict, str]] = []

    async def _range(self, request: web.Request) -> web.Response:
        self.requests.append(("query_range", dict(request.query), request.headers.get("Authorization", "")))
        return web.json_response({"status": "success", "data": {"resultType": "matrix", "result": []}})

    async def _query(self, request: web.Request) -> web.Response:
        self.requests.append(("query", dict(request.query), request.headers.get("Authorization", "")))
        return web.json_response({"status": "success", "data": {"resultType": "matrix", "result": self.instant}})

    async def __aenter__(self) -> str:
        app = web.Application()
        app.router.add_get("/api/v1/query_range", self._range)
        app.router.add_get("/api/v1/query", self._query)
        self.runner = web.AppRunner(app)
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        return f"http://127.0.0.1:{site._server.sockets[0].getsockname()[1]}"

    async def __aexit__(self, *exc: object) -> None:
        await self.runner.cleanup()


def test_the_prometheus_reader_uses_the_names_the_labels_and_the_credentials(monkeypatch):
    # upstream: history_provider_test.go's queries (job, pod label =~".+", container label !=
    # "POD" and != "", the CPU rate over the resolution), TestGetLabels (each pod's labels from its
    # newest labels sample: x=z), TestPrometheusAuth "Basic auth" (user:password ->
    # dXNlcjpwYXNzd29yZA==); the requests counted in prometheus_client_api_requests_count
    # {code="200", method="get"}
    monkeypatch.delenv("PROMETHEUS_USERNAME", raising=False)
    monkeypatch.delenv("PROMETHEUS_PASSWORD", raising=False)
    labels = [{"metric": {"kubernetes_namespace": "default", "kubernetes_pod_name": "pod", "pod_label_x": "y"},
               "values": [[1, "12345"]]},
              {"metric": {"kubernetes_namespace": "default", "kubernetes_pod_name": "pod", "pod_label_x": "z"},
               "values": [[20, "12345"]]}]

    async def main():
        fake = FakePrometheus(labels)
        async with fake as url:
            instruments = RecommenderMetrics()
            p = history_from_args(parse("--storage=prometheus", "--prometheus-address", url, "--history-length", "10m",
                                        "--history-resolution", "30s", "--prometheus-cadvisor-job-name",
                                        "kubernetes-cadvisor", "--container-pod-name-label", "pod_name",
                                        "--container-name-label", "name", "--history-cpu-metric", "my_cpu",
                                        "--username", "user", "--password", "password"),
                                  instruments=instruments, clock=VirtualClock(1000.0))
            assert isinstance(p, PrometheusHistory)
            await p.fetch(1_000_000.0)
            return fake.requests, p.pod_labels, instruments

    requests, pod_labels, instruments = asyncio.run(main())
    queries = [q["query"] for _, q, _ in requests]
    sel = 'job="kubernetes-cadvisor",name!="",name!="POD",pod_name!=""'
    assert queries[0] == (f"sum by (namespace, pod_name, name) (rate(my_cpu{{{sel}}}[30s]) "
                          f"and ignoring(cpu) (container_memory_working_set_bytes{{{sel}}} > 0))")
    assert queries[-1] == 'up{job="kubernetes-pods"}' and requests[-1][0] == "query"
    assert {auth for _, _, auth in requests} == {"Basic " + base64.b64encode(b"user:password").decode()}
    assert base64.b64encode(b"user:password").decode() == "dXNlcjpwYXNzd29yZA=="
    assert pod_labels == {("default", "pod"): {"x": "z"}}
    samples = {(s.name, tuple(sorted(s.labels.items()))): s.value
               for s in parse_exposition(instruments.exposition().decode())}
    assert samples[("vpa_recommender_prometheus_client_api_requests_count_total",
                    (("code", "200"), ("method", "get")))] == len(requests)


class OneSample:
    def __init__(self, clock, keys) -> None:
        self.clock, self.keys = clock, keys

    async def usage_table(self) -> UsageTable:
        n = len(self.keys)
        return UsageTable(self.keys, 0, np.full(n, self.clock.now()), np.full(n, 0.5), np.full(n, 2e8))


def test_metrics_and_health_check_on_the_address():
    # upstream: TestObjectCounter (update_mode defaults to Recreate, api from the VPA's version,
    # matches_pods false under NoPodsMatched, unsupported_config under ConfigUnsupported; every
    # combination reported, 0 when empty: NewObjectCounter), the step names of RunOnce's
    # ExecutionTimer, RecordAggregateContainerStatesCount, RecordMetricsServerResponse(err,
    # "default-metrics-client"), ObserveRecommendationLatency on a VPA's first recommendation;
    # main.go's health check timeout: five recommender intervals
    async def scenario(clock, client):
        await client.create(DEPLOY, deployment())
        await client.create(VPAS, vpa("off-vpa", mode="Off"))
        await client.create(VPAS, vpa("idle-vpa", "idle"))
        await client.create(DEPLOY, deployment("idle"))
        await client.create(VPAS, vpa("broken-vpa", "missing"))
        await pod(client, "hamster-1", {"app": "hamster"})
        instruments = RecommenderMetrics()
        health = HealthCheck(clock, 60.0 * 5)
        r = Recommender(client, clock, OneSample(clock, [(NS, "hamster-1", "hamster")]), interval=60.0,
                        instruments=instruments, health=health, checkpoint_interval=math.inf)
        task = asyncio.ensure_future(r.run())
        await clock.sleep(90)
        server = MetricsServer(instruments, health, "127.0.0.1:0")
        await server.start()
        try:
            async with aiohttp.ClientSession() as s:
                base = f"http://127.0.0.1:{server.port}"
                async with s.get(base + "/metrics") as resp:
                    text = await resp.text()
                async with s.get(base + "/health-check") as resp:
                    healthy = (resp.status, await resp.text())
                r.stop()
                await task
                await clock.sleep(6 * 60)
                async with s.get(base + "/health-check") as resp:
                    stale = (resp.status, await resp.text())
        finally:
            await server.stop()
        return text, healthy, stale

    text, healthy, stale = run(scenario)
    samples = parse_exposition(text)
    objects = {tuple(sorted(s.labels.items())): s.value for s in samples if s.name == "vpa_recommender_vpa_objects_count"}
    assert len(objects) == 6 * 2 * 3 * 2 * 2
    key = lambda mode, has, matches, unsupported: (("api", "v1"), ("has_recommendation", has),  # noqa: E731
                                                   ("matches_pods", matches), ("unsupported_config", unsupported),
                                                   ("update_mode", mode))
    assert {k: v for k, v in objects.items() if v} == {
        key("Off", "true", "true", "false"): 1.0, key("Recreate", "false", "false", "false"): 1.0,
        key("Recreate", "false", "false", "true"): 1.0}
    steps = {s.labels["step"] for s in samples if s.name == "vpa_recommender_execution_latency_seconds_count"}
    assert steps == {"LoadVPAs", "LoadPods", "LoadMetrics", "DeleteRemovedPods", "UpdateVPAs", "MaintainCheckpoints",
                     "GarbageCollect", "total"}
    value = {(s.name, tuple(sorted(s.labels.items()))): s.value for s in samples}
    assert value[("vpa_recommender_aggregate_container_states_count", ())] == 1.0
    assert value[("vpa_recommender_metric_server_responses_total",
                  (("client_name", "default-metrics-client"), ("is_error", "false")))] == 2.0
    assert value[("vpa_recommender_recommendation_latency_seconds_count", ())] == 1.0
    assert healthy == (200, "OK")
    assert stale[0] == 500 and stale[1].startswith("Error: last activity more than ")
