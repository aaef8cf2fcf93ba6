"""Usage history for the recommender's start (``kvert.vpa.history``): the trace file, Prometheus
range queries against a small real HTTP server speaking Prometheus' API, the pod -> VPA name
rule, and the recommender bootstrapping from history (FetchingHistory, checkpoints first)."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest
from aiohttp import web

from kvert.api.quantity import Quantity
from kvert.cli.main import main
from kvert.clock import VirtualClock
from kvert.vpa.aggregate import AggregateContainerState
from kvert.vpa.checkpoint import checkpoint_for
from kvert.vpa.history import (FileHistory, HistoryError, PrometheusHistory, format_duration, match_history,
                               name_pattern, owns_by_name, parse_duration)
from kvert.vpa.recommender import VPAS, Recommender
from kvert.vpa.samples import parse_samples, read_samples

from tests.kubelet.test_agent_support import cluster, wait_for
from tests.vpa.test_recommender_live import conditions, deployment, target_of, vpa

ROOT = Path(__file__).resolve().parents[2]
MI = 2**20
NS = "default"
CHECKPOINTS = "autoscaling.k8s.io/verticalpodautoscalercheckpoints"


# ---- durations --------------------------------------------------------------------------------------

def test_durations_are_prometheus_durations():
    assert parse_duration("8d") == 8 * 86400
    assert parse_duration("1h30m") == 5400 and parse_duration("500ms") == 0.5 and parse_duration("90") == 90
    assert parse_duration("1w") == 7 * 86400
    for bad in ("", "3q", "1h 2m", "0s", "-5", "h"):
        with pytest.raises(ValueError):
            parse_duration(bad)
    assert format_duration(3600) == "1h" and format_duration(90) == "1m30s" and format_duration(8 * 86400) == "8d"


# ---- the trace file ---------------------------------------------------------------------------------

CSV = """\
# two namespaces; rows of one container stay in file order
timestamp,pod,container,cpu,memory,event,namespace
1000,web-1,app,0.5,100,,prod
1000,web-1,app,0.1,,,
1060,web-1,app,0.6,120,,prod
1090,web-1,app,,300,oom,prod
1030,web-1,side,0.01,5,,prod
"""


def test_file_history_groups_by_namespace_pod_container(tmp_path):
    path = tmp_path / "trace.csv"
    path.write_text(CSV)
    history = asyncio.run(FileHistory(path).fetch(now=2000.0))
    assert sorted(history) == [("default", "web-1", "app"), ("prod", "web-1", "app"), ("prod", "web-1", "side")]
    prod = history[("prod", "web-1", "app")]
    assert prod.timestamps.tolist() == [1000, 1060, 1090]
    assert prod.cpu[:2].tolist() == [0.5, 0.6] and np.isnan(prod.cpu[2])
    assert prod.memory.tolist() == [100, 120, 300] and prod.oom.tolist() == [False, False, True]
    assert set(prod.namespaces.tolist()) == {"prod"}
    # an empty namespace cell is the default namespace
    assert history[("default", "web-1", "app")].cpu.tolist() == [0.1]
    # the history length leaves out older samples
    recent = asyncio.run(FileHistory(path, history_length="950s").fetch(now=2000.0))
    assert recent[("prod", "web-1", "app")].timestamps.tolist() == [1060, 1090]
    assert ("prod", "web-1", "side") not in recent


def test_old_sample_files_stay_valid_and_in_the_default_namespace():
    samples = read_samples(ROOT / "examples" / "hamster-samples.csv")
    assert samples.namespaces is None and len(samples) > 100
    history = asyncio.run(FileHistory(ROOT / "examples" / "hamster-samples.csv").fetch(now=0.0))
    assert {k[0] for k in history} == {"default"} and {k[1] for k in history} == {"hamster-1", "hamster-2"}
    assert sum(len(s) for s in history.values()) == len(samples)
    # the namespace column is optional, once only, and nothing else is new
    with pytest.raises(ValueError, match="'namespace': appears twice"):
        parse_samples("timestamp,pod,container,cpu,memory,event,namespace,namespace\n")
    with pytest.raises(ValueError, match="unknown column"):
        parse_samples("timestamp,pod,container,cpu,memory,event,node\n")


def test_file_history_errors_name_the_file_and_line(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("timestamp,pod,container,cpu,memory,event\n1000,p,c,0.5,1,\n1060,p,c,lots,1,\n")
    with pytest.raises(HistoryError, match=r"bad\.csv:3: column 'cpu': 'lots' is not a number"):
        asyncio.run(FileHistory(path).fetch(now=0.0))
    with pytest.raises(HistoryError, match=r"missing\.csv: cannot read"):
        asyncio.run(FileHistory(tmp_path / "missing.csv").fetch(now=0.0))
    path.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(HistoryError, match="not a UTF-8 text file"):
        asyncio.run(FileHistory(path).fetch(now=0.0))


# ---- a Prometheus server ----------------------------------------------------------------------------

class FakePrometheus:
    """A real HTTP server (aiohttp, its own thread) answering ``/api/v1/query_range`` with
    ``respond(query, start, end, step) -> (http status, body)``; records every request."""

    def __init__(self, respond: Callable[[str, float, float, float], tuple[int, Any]]) -> None:
        self.respond = respond
        self.requests: list[dict[str, str]] = []
        self.url = ""
        self._ready = threading.Event()

    async def _handle(self, request: web.Request) -> web.Response:
        q = dict(request.query)
        self.requests.append(q)
        status, body = self.respond(q["query"], float(q["start"]), float(q["end"]), float(q["step"]))
        if isinstance(body, str):
            return web.Response(status=status, text=body, content_type="text/html")
        return web.json_response(body, status=status)

    def _serve(self) -> None:
        self.loop = asyncio.new_event_loop()
        app = web.Application()
        app.router.add_get("/api/v1/query_range", self._handle)
        self.runner = web.AppRunner(app)
        self.loop.run_until_complete(self.runner.setup())
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        self.loop.run_until_complete(site.start())
        port = site._server.sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        self._ready.set()
        self.loop.run_forever()
        self.loop.run_until_complete(self.runner.cleanup())
        self.loop.close()

    def __enter__(self) -> "FakePrometheus":
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()
        assert self._ready.wait(10)
        return self

    def __exit__(self, *exc: Any) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


def matrix(series: list[dict]) -> dict:
    return {"status": "success", "data": {"resultType": "matrix", "result": series}}


def labels(pod: str, container: str = "app", ns: str = NS, **extra: str) -> dict:
    return {"namespace": ns, "pod": pod, "container": container, **extra}


def steps(start: float, end: float, step: float) -> np.ndarray:
    return np.arange(start, end + step / 2, step)


NOW = 1_000_000.0


def canned(query: str, start: float, end: float, step: float) -> tuple[int, dict]:
    """Ten minutes of one pod (web-5d8f-abcde: 250m, 100Mi, one OOM) and a gone pod's OOM."""
    t = steps(start, end, step)
    k = np.round((t - (NOW - 600)) / 60).astype(int)
    if query.startswith("sum by"):
        return 200, matrix([{"metric": labels("web-5d8f-abcde"), "values": [[x, "0.25"] for x in t]}])
    if query.startswith("max by"):
        values = [[x, "NaN" if i == 2 else str(100 * MI)] for x, i in zip(t, k)]
        return 200, matrix([{"metric": labels("web-5d8f-abcde"), "values": values}])
    assert query.startswith("container_oom_events_total{")
    return 200, matrix([
        # the first container instance: OOM-killed between the 4th and 5th step
        {"metric": labels("web-5d8f-abcde", name="c1", id="/c1"),
         "values": [[x, "1" if i >= 5 else "0"] for x, i in zip(t, k)]},
        # its replacement, from step 7, never killed
        {"metric": labels("web-5d8f-abcde", name="c2", id="/c2"),
         "values": [[x, "0"] for x, i in zip(t, k) if i >= 7]},
        # a pod first seen at step 3 with one OOM already; no memory series
        {"metric": labels("gone-5d8f-zzzzz", name="c3", id="/c3"),
         "values": [[x, "1"] for x, i in zip(t, k) if i >= 3]},
        # a counter that resets: 0, 2 (two OOMs), then 1 after the reset (one more)
        {"metric": labels("reset-5d8f-qqqqq", name="c4", id="/c4"),
         "values": [[x, "0" if i < 4 else ("2" if i < 8 else "1")] for x, i in zip(t, k)]},
    ])


def test_prometheus_history_queries_and_parses_the_cadvisor_metrics():
    with FakePrometheus(canned) as prom:
        provider = PrometheusHistory(prom.url, history_length="10m", resolution="1m", namespace=NS)
        history = asyncio.run(provider.fetch(NOW))
    # three range queries over [now - 10m, now] every minute; CPU as a rate over the resolution
    assert len(prom.requests) == 3
    assert {(r["start"], r["end"], r["step"]) for r in prom.requests} == {("999400", "1000000", "60")}
    cpu_q, mem_q, oom_q = (r["query"] for r in prom.requests)
    sel = 'namespace="default",container!="",container!="POD",pod!=""'
    assert cpu_q == (f"sum by (namespace, pod, container) (rate(container_cpu_usage_seconds_total{{{sel}}}[1m]) "
                     f"and ignoring(cpu) (container_memory_working_set_bytes{{{sel}}} > 0))")
    assert mem_q == f"max by (namespace, pod, container) (container_memory_working_set_bytes{{{sel}}} > 0)"
    assert oom_q == f"container_oom_events_total{{{sel}}}"

    web = history[(NS, "web-5d8f-abcde", "app")]
    usage = ~web.oom
    assert web.timestamps[usage].tolist() == steps(NOW - 600, NOW, 60).tolist()
    assert np.all(web.cpu[usage] == 0.25)
    assert np.isnan(web.memory[usage][2]) and np.nansum(web.memory[usage] == 100 * MI) == 10   # NaN dropped
    # one OOM at the step it was first seen, bumping from the last working set
    assert web.timestamps[web.oom].tolist() == [NOW - 600 + 5 * 60]
    assert web.memory[web.oom].tolist() == [100 * MI] and np.isnan(web.cpu[web.oom]).all()
    assert np.all(np.diff(web.timestamps) >= 0)
    # a series that appears with OOMs counts them; no working set known -> 0
    gone = history[(NS, "gone-5d8f-zzzzz", "app")]
    assert gone.timestamps.tolist() == [NOW - 600 + 3 * 60] and gone.oom.all() and gone.memory.tolist() == [0.0]
    # a counter reset counts its new value: 2 + 1
    reset = history[(NS, "reset-5d8f-qqqqq", "app")]
    assert reset.timestamps.tolist() == [NOW - 600 + 4 * 60] * 2 + [NOW - 600 + 8 * 60]


def test_prometheus_history_splits_long_ranges_and_joins_the_series():
    oom_at = NOW - 5000

    def respond(query, start, end, step):
        t = steps(start, end, step)
        if query.startswith("container_oom_events_total"):
            return 200, matrix([{"metric": labels("web-5d8f-abcde", name="c1"),
                                 "values": [[x, "1" if x >= oom_at else "0"] for x in t]}])
        return 200, matrix([{"metric": labels("web-5d8f-abcde"), "values": [[x, "0.5"] for x in t]}])

    with FakePrometheus(respond) as prom:
        provider = PrometheusHistory(prom.url, history_length="3h", resolution="1s", job="kvert-cadvisor")
        history = asyncio.run(provider.fetch(NOW))
    # 10801 steps: two pieces of at most 10,000 (Prometheus refuses over 11,000 points)
    pieces = sorted({(float(r["start"]), float(r["end"])) for r in prom.requests})
    assert pieces == [(NOW - 10800, NOW - 10800 + 9999), (NOW - 10800 + 10000, NOW)]
    assert all('job="kvert-cadvisor"' in r["query"] for r in prom.requests)
    web = history[(NS, "web-5d8f-abcde", "app")]
    assert int((~web.oom).sum()) == 10801
    # the OOM counter's pieces are one series: its value in the second piece is no new OOM
    assert web.timestamps[web.oom].tolist() == [oom_at]


@pytest.mark.parametrize("status,body,message", [
    (400, {"status": "error", "errorType": "bad_data", "error": "1:2: parse error: unexpected"},
     "HTTP 400: bad_data: 1:2: parse error: unexpected"),
    (200, "<html>login</html>", "not a Prometheus API response (HTTP 200"),
    (200, {"status": "success", "data": {"resultType": "vector", "result": []}}, "expected a matrix result, got 'vector'"),
    (200, matrix([{"metric": {"namespace": NS, "container": "app"}, "values": []}]), "series without a pod label"),
    (200, matrix([{"metric": labels("p"), "values": [[1, "x"]]}]), "has a value that is not"),
])
def test_prometheus_errors_name_the_url_and_query(status, body, message):
    with FakePrometheus(lambda *a: (status, body)) as prom:
        with pytest.raises(HistoryError) as e:
            asyncio.run(PrometheusHistory(prom.url, history_length="10m", resolution="1m").fetch(NOW))
    assert message in str(e.value) and prom.url + "/api/v1/query_range" in str(e.value)


def test_unreachable_prometheus_and_bad_urls():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    with pytest.raises(HistoryError, match=f"{url}/api/v1/query_range: cannot reach Prometheus"):
        asyncio.run(PrometheusHistory(url, history_length="1h").fetch(NOW))
    with pytest.raises(HistoryError, match="not an http"):
        PrometheusHistory("prometheus:9090")
    with pytest.raises(ValueError, match="not a duration"):
        PrometheusHistory("http://x:9090", resolution="fast")


# ---- which VPA a pod's history goes to -----------------------------------------------------------------

def test_name_rule_per_kind():
    assert owns_by_name("Deployment", "web", "web-5d8f9c7b4-x2x7k")
    assert not owns_by_name("Deployment", "web", "web-x2x7k")             # a ReplicaSet's pod shape
    assert not owns_by_name("Deployment", "web", "webber-5d8f9c7b4-x2x7k")
    assert owns_by_name("ReplicaSet", "web-5d8f9c7b4", "web-5d8f9c7b4-x2x7k")
    assert owns_by_name("StatefulSet", "db", "db-0") and owns_by_name("StatefulSet", "db", "db-12")
    assert not owns_by_name("StatefulSet", "db", "db-a")
    assert owns_by_name("DaemonSet", "agent", "agent-k8x2p") and owns_by_name("Job", "batch", "batch-q9z2w")
    assert owns_by_name("CronJob", "nightly", "nightly-29000000-abcde")
    assert owns_by_name("Deployment", "v1.web", "v1.web-5d8f-abcde")
    assert not owns_by_name("Deployment", "v1.web", "v1xweb-5d8f-abcde")   # '.' is literal
    assert name_pattern("StatefulSet", "db") == "db-[0-9]+"


def _vpa(name: str, target: str, kind: str = "Deployment", ns: str = NS, created: str = "2026-01-01T00:00:00Z") -> dict:
    body = vpa(name, target)
    body["metadata"].update(namespace=ns, creationTimestamp=created)
    body["spec"]["targetRef"]["kind"] = kind
    return body


def _pod(name: str, app: str, ns: str = NS) -> dict:
    return {"metadata": {"name": name, "namespace": ns, "labels": {"app": app}}, "status": {"phase": "Running"}}


def test_match_history_live_by_selector_gone_by_name():
    from kvert.api.selectors import LabelSelector
    from kvert.vpa.targets import Target

    vpas = [_vpa("web-vpa", "web", created="2026-01-01T00:00:00Z"),
            _vpa("web-api-vpa", "web-api", created="2026-01-02T00:00:00Z"),
            _vpa("db-vpa", "db", kind="StatefulSet"),
            _vpa("other-ns", "web", ns="prod")]
    targets = {("default", "web-vpa"): Target(LabelSelector.from_dict({"matchLabels": {"app": "web"}})),
               ("default", "web-api-vpa"): Target(LabelSelector.from_dict({"matchLabels": {"app": "api"}})),
               ("default", "db-vpa"): Target(LabelSelector.nothing(), problem="Cannot read targetRef"),
               ("prod", "other-ns"): Target(LabelSelector.from_dict({"matchLabels": {"app": "web"}}))}
    live = [_pod("web-aaaa-11111", "web"), _pod("odd-name", "api"), _pod("web-bbbb-22222", "nothing")]
    history_pods = [("default", "web-aaaa-11111"), ("default", "odd-name"), ("default", "web-bbbb-22222"),
                    ("default", "web-cccc-33333"), ("default", "web-api-dddd-44444"), ("default", "db-3"),
                    ("default", "stranger-eeee-55555"), ("prod", "web-ffff-66666"), ("staging", "web-gggg-77777")]
    assigned, dropped = match_history(history_pods, vpas, targets, live)
    assert assigned == {
        ("default", "web-aaaa-11111"): ("default", "web-vpa"),      # live: by selector
        ("default", "odd-name"): ("default", "web-api-vpa"),        # live: by selector, whatever its name
        ("default", "web-cccc-33333"): ("default", "web-vpa"),      # gone: Deployment web's name shape
        ("default", "web-api-dddd-44444"): ("default", "web-api-vpa"),  # longest target name wins
        ("default", "db-3"): ("default", "db-vpa"),                 # gone: StatefulSet ordinal (target unreadable)
        ("prod", "web-ffff-66666"): ("prod", "other-ns"),           # the VPA of the pod's namespace
    }
    # a live pod no VPA selects is no VPA's, even if its name fits; strangers and other namespaces
    assert dropped == [("default", "stranger-eeee-55555"), ("default", "web-bbbb-22222"),
                       ("staging", "web-gggg-77777")]


def test_two_vpas_on_one_target_the_oldest_gets_the_gone_pods():
    from kvert.api.selectors import LabelSelector
    from kvert.vpa.targets import Target
    vpas = [_vpa("old", "web", created="2026-01-01T00:00:00Z"), _vpa("new", "web", created="2026-01-05T00:00:00Z")]
    sel = Target(LabelSelector.from_dict({"matchLabels": {"app": "web"}}))
    assigned, _ = match_history([(NS, "web-aaaa-11111")], vpas, {(NS, "old"): sel, (NS, "new"): sel}, [])
    assert assigned == {(NS, "web-aaaa-11111"): (NS, "old")}


# ---- the recommender with history -----------------------------------------------------------------------

class NoMetrics:
    async def pod_metrics(self) -> list[dict]:
        return []


class RecordingClient:
    """The in-process client, recording each VPA status written (FetchingHistory's flips)."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self.statuses: list[tuple[str, dict]] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)

    async def update_status(self, resource: str, obj: dict) -> dict:
        if resource == VPAS:
            self.statuses.append((obj["metadata"]["name"], json.loads(json.dumps(obj.get("status") or {}))))
        return await self._client.update_status(resource, obj)


def write_trace(path: Path, now: float, rows: list[tuple[str, str, float | str, float | str, str]],
                minutes: int = 120) -> None:
    """Every row (pod, container, cpu, memory, event) once a minute for ``minutes`` before ``now``
    (an 'oom' row once, a minute before now)."""
    lines = ["timestamp,namespace,pod,container,cpu,memory,event"]
    for pod, container, cpu, memory, event in rows:
        if event == "oom":
            lines.append(f"{now - 60},{NS},{pod},{container},,{memory},oom")
            continue
        for k in range(minutes, 0, -1):
            lines.append(f"{now - 60 * k},{NS},{pod},{container},{cpu},{memory},")
    path.write_text("\n".join(lines) + "\n")


def in_virtual_time(scenario) -> Any:
    clock = VirtualClock()

    async def main() -> Any:
        client = RecordingClient(await cluster(clock))
        return await scenario(clock, client)

    return clock.run(main())


def test_recommender_starts_from_a_trace_file(tmp_path):
    async def scenario(clock, client):
        await client.create("apps/deployments", deployment("hamster", replicas=0, memory="300Mi"))
        await client.create(VPAS, vpa("hamster-vpa", "hamster"))
        # a live pod the Deployment's selector matches, requesting 300Mi, OOM-killed per the trace
        live = deployment("hamster")["spec"]["template"]
        await client.create("pods", {"apiVersion": "v1", "kind": "Pod",
                                     "metadata": {"name": "hamster-live", "namespace": NS, **live["metadata"]},
                                     "spec": {**live["spec"], "containers": [
                                         {**live["spec"]["containers"][0],
                                          "resources": {"requests": {"cpu": "100m", "memory": "300Mi"}}}]}})
        path = tmp_path / "trace.csv"
        write_trace(path, clock.now(), [
            ("hamster-7d9f5b-abcde", "hamster", 0.5, 200 * MI, ""),     # gone pods of the Deployment
            ("hamster-7d9f5b-fghij", "hamster", 0.5, 200 * MI, ""),
            ("hamster-live", "hamster", "", 100 * MI, "oom"),           # bumps from its 300Mi request
            ("stranger-xyz12", "app", 2.0, 10 * MI, ""),                # no VPA's: dropped
        ])
        r = Recommender(client, clock, NoMetrics(), interval=60.0, history=FileHistory(path))
        task = asyncio.ensure_future(r.run())
        await wait_for(clock, lambda: r.loops >= 1, timeout=30, step=0.5, what="the first loop")
        first_loop_status = (await client.get(VPAS, "hamster-vpa", NS))
        r.stop()
        await task
        return r, client, first_loop_status

    r, client, obj = in_virtual_time(scenario)
    # FetchingHistory: True while loading, then False with what was loaded
    written = [conditions({"status": st}) for name, st in client.statuses if name == "hamster-vpa"]
    flips = [c["FetchingHistory"]["status"] for c in written if "FetchingHistory" in c]
    assert flips[:2] == ["True", "False"] and flips[-1] == "False"
    assert written[0]["FetchingHistory"]["message"].startswith("Loading usage history from ")
    assert "recommendation" not in client.statuses[0][1]
    cond = conditions(obj)["FetchingHistory"]
    assert cond["status"] == "False"
    assert cond["message"] == f"Loaded 241 samples of 3 pods from {tmp_path / 'trace.csv'}"
    assert r.history_stats["dropped_pods"] == 1 and r.history_stats["dropped_samples"] == 120
    # the first loop already recommends: 500m used -> target above it; memory from the OOM bump
    # of the 300Mi request (max(300Mi + 100Mi, 360Mi) = 400Mi), not of the trace's 100Mi
    item = target_of(obj)
    assert item is not None and conditions(obj)["RecommendationProvided"]["status"] == "True"
    assert 500 <= Quantity.parse(item["target"]["cpu"]).milli_value() <= 650
    assert Quantity.parse(item["target"]["memory"]).value() >= 400 * MI
    # gone pods leave their samples, not their per-pod state
    agg = r.store.find(NS, "hamster-vpa", "hamster")
    assert agg.pod_names() == ["hamster-live"] and agg.total_samples_count == 240


def test_checkpoints_win_over_history(tmp_path):
    async def scenario(clock, client):
        now = clock.now()
        for name in ("hamster", "other"):
            await client.create("apps/deployments", deployment(name, replicas=0))
            await client.create(VPAS, vpa(f"{name}-vpa", name))
        # hamster-vpa has a checkpoint: 100m for a day
        agg = AggregateContainerState()
        t = now - 86400 + np.arange(0, 86400, 60.0)
        agg.add_samples("hamster-old-xxxxx", t, cpu=np.full(t.size, 0.1), memory=np.full(t.size, 50.0 * MI))
        await client.create(CHECKPOINTS, checkpoint_for(agg, NS, "hamster-vpa", "hamster", now))
        path = tmp_path / "trace.csv"
        write_trace(path, now, [("hamster-7d9f5b-abcde", "hamster", 2.0, 900 * MI, ""),
                                ("other-7d9f5b-abcde", "other", 0.5, 200 * MI, "")])
        r = Recommender(client, clock, NoMetrics(), history=FileHistory(path))
        assert await r.restore_checkpoints() == 1
        assert await r.load_history() == 120
        await r.run_once()
        return r, client, await client.get(VPAS, "hamster-vpa", NS), await client.get(VPAS, "other-vpa", NS)

    r, client, hamster, other = in_virtual_time(scenario)
    assert r.history_stats["checkpointed_vpas"] == 1 and r.history_stats["vpas"] == 1
    # the checkpointed VPA keeps its checkpoint's 100m, not the trace's 2 cores, and never fetches
    assert Quantity.parse(target_of(hamster)["target"]["cpu"]).milli_value() < 200
    assert "FetchingHistory" not in conditions(hamster)
    assert not any(name == "hamster-vpa" and "FetchingHistory" in conditions({"status": st})
                   for name, st in client.statuses)
    assert Quantity.parse(target_of(other, "other")["target"]["cpu"]).milli_value() >= 500
    assert conditions(other)["FetchingHistory"]["status"] == "False"


def test_history_that_cannot_be_read_leaves_the_recommender_running(tmp_path):
    async def scenario(clock, client):
        await client.create("apps/deployments", deployment("hamster", replicas=0))
        await client.create(VPAS, vpa("hamster-vpa", "hamster"))
        r = Recommender(client, clock, NoMetrics(), history=FileHistory(tmp_path / "missing.csv"))
        assert await r.load_history() == 0
        await r.run_once()
        return await client.get(VPAS, "hamster-vpa", NS)

    obj = in_virtual_time(scenario)
    cond = conditions(obj)["FetchingHistory"]
    assert cond["status"] == "False" and cond["message"].startswith("Usage history not loaded: ")
    assert "missing.csv: cannot read" in cond["message"]


def test_a_fetch_left_true_is_cleared_by_the_next_loop():
    async def scenario(clock, client):
        await client.create("apps/deployments", deployment("hamster", replicas=0))
        created = await client.create(VPAS, vpa("hamster-vpa", "hamster"))
        created["status"] = {"conditions": [{"type": "FetchingHistory", "status": "True",
                                             "lastTransitionTime": "2025-12-31T00:00:00Z"}]}
        await client.update_status(VPAS, created)
        r = Recommender(client, clock, NoMetrics())         # a restarted recommender without history
        await r.run_once()
        return await client.get(VPAS, "hamster-vpa", NS)

    cond = conditions(in_virtual_time(scenario))["FetchingHistory"]
    assert cond["status"] == "False" and cond["message"] == "Usage history loading did not finish"


# ---- kvert vpa recommend --prometheus -------------------------------------------------------------------

def test_cli_recommends_from_prometheus(capsys, tmp_path):
    def respond(query, start, end, step):
        t = steps(start, end, step)
        pods = ["hamster-5d8f-abcde", "hamster-5d8f-fghij", "other-5d8f-zzzzz"]
        if query.startswith("sum by"):
            return 200, matrix([{"metric": labels(p, "hamster"), "values": [[x, "0.4"] for x in t]} for p in pods])
        if query.startswith("max by"):
            return 200, matrix([{"metric": labels(p, "hamster"), "values": [[x, str(150 * MI)] for x in t]}
                                for p in pods])
        return 200, matrix([])

    hamster_vpa = tmp_path / "vpa.yaml"
    hamster_vpa.write_text(json.dumps(vpa("hamster-vpa", "hamster")))
    with FakePrometheus(respond) as prom:
        code = main(["vpa", "recommend", "--prometheus", prom.url, "--vpa", str(hamster_vpa),
                     "--history-length", "2h", "--history-resolution", "1m", "-o", "json"])
        out = capsys.readouterr()
        by_prefix = main(["vpa", "recommend", "--prometheus", prom.url, "--pod-prefix", "hamster-",
                          "--history-length", "2h", "--history-resolution", "1m"])
        table = capsys.readouterr().out
    assert code == 0 and out.err == ""
    [c] = json.loads(out.out)["containerRecommendations"]
    assert c["containerName"] == "hamster"
    assert 400 <= Quantity.parse(c["target"]["cpu"]).milli_value() <= 500
    # the pods were picked on the server: the name rule of the targetRef, in the VPA's namespace
    assert 'namespace="default"' in prom.requests[0]["query"]
    assert 'pod=~"hamster-[a-z0-9]+-[a-z0-9]{5}"' in prom.requests[0]["query"]
    assert by_prefix == 0 and 'pod=~"hamster-.*"' in prom.requests[-1]["query"]
    assert "hamster: 242 CPU samples from 2 pod(s)" in table


def test_cli_prometheus_usage_errors(capsys):
    def run(argv):
        code = main(argv)
        return code, capsys.readouterr().err

    code, err = run(["vpa", "recommend", "--prometheus", "http://127.0.0.1:9"])
    assert code == 2 and "--pod-prefix NAME or --vpa" in err
    code, err = run(["vpa", "recommend", "--prometheus", "http://127.0.0.1:9", "--pod-prefix", "x",
                     "--history-length", "forever"])
    assert code == 2 and "--history-length: 'forever' is not a duration" in err
    code, err = run(["vpa", "recommend", "--prometheus", "http://127.0.0.1:9", "--pod-prefix", "x"])
    assert code == 1 and "http://127.0.0.1:9/api/v1/query_range: cannot reach Prometheus" in err
