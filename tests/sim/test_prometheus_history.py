"""A real cluster's usage history from Prometheus (``kvert.sim.prometheus_history``): a generated
week (``tests.support.promhistory``) backfilled into a real Prometheus 2 and read back; label
conventions; errors; the flags.

The expected values are the generated inputs. Reading at the scrape step, every sample sits on
a step's bound, so ``rate()`` has exactly the two samples at the window's ends and extrapolates
nothing: CPU comes back as generated, up to the float rounding of the cumulative counter's
differences (hence the 1e-9 tolerance); memory is a gauge read back exactly."""

from __future__ import annotations

import argparse
import asyncio
import base64
import socket
import threading
from typing import Any

import numpy as np
import pytest
from aiohttp import web

from kvert.sim import prometheus_history
from kvert.sim.prometheus_history import (
    HistoryImportError,
    LabelConfig,
    add_prometheus_flags,
    prometheus_options,
    read_prometheus,
)
from kvert.sim.recorded import hold_gaps
from tests.support.promhistory import (
    SCRAPE,
    START,
    GenPod,
    have_prometheus,
    start_prometheus,
    week_of_pods,
)

WEEK = 7 * 86400.0
ATOL = 1e-9

needs_prometheus = pytest.mark.skipif(have_prometheus() is not None, reason=have_prometheus() or "")


def read(url: str, **kw: Any):
    kw.setdefault("start", START)
    kw.setdefault("end", START + WEEK)
    kw.setdefault("step", SCRAPE)
    return asyncio.run(read_prometheus(url, **kw))


@pytest.fixture(scope="module")
def week(tmp_path_factory):
    if have_prometheus():
        pytest.skip(have_prometheus())
    pods = week_of_pods(0)
    with start_prometheus(pods, tmp_path_factory.mktemp("week")) as prom:
        fractions: list[float] = []
        history = read(prom.url, progress=fractions.append)
        yield prom, pods, history, fractions


@pytest.fixture(scope="module")
def legacy(tmp_path_factory):
    """Two days with upstream recommender's default label names (pre-1.16 cAdvisor's pod_name and
    name, kube-state-metrics relabeled to kubernetes_namespace / kubernetes_pod_name) and no
    container_oom_events_total (OOM kills come from kube-state-metrics)."""
    if have_prometheus():
        pytest.skip(have_prometheus())
    pods = week_of_pods(1, days=2)
    with start_prometheus(pods, tmp_path_factory.mktemp("legacy"), cadvisor_labels=("namespace", "pod_name", "name"),
                          ksm_labels=("kubernetes_namespace", "kubernetes_pod_name"), oom_events=False) as prom:
        yield prom, pods


def expected(pod: GenPod, values: np.ndarray, *, rate: bool, steps: int) -> np.ndarray:
    """What the reader should give for a generated array read at the scrape step: the values in
    the pod's life; a rate needs the samples at both ends of its step (none after the last
    scrape, none next to a gap), a gauge its own; missing steps inside the life hold the last
    value."""
    out = np.full(steps, np.nan)
    last = pod.last if rate else pod.last + 1
    out[pod.first:last] = values[pod.first:last]
    for a, b in pod.gaps:
        out[(a - 1 if rate else a):b] = np.nan
    hold_gaps(out, pod.first, pod.last)
    return out


def containers_of(pods: list[GenPod]):
    for pod in pods:
        for c in pod.containers:
            yield pod, c


# -- a week read back -----------------------------------------------------------------------------------

@needs_prometheus
def test_usage_per_container_and_step_is_the_generated_usage(week):
    _, pods, h, fractions = week
    assert h.start == START and h.step == SCRAPE and h.steps == 2016 and h.source.startswith("http://127.0.0.1:")
    got = {c.key: c for c in h.containers}
    # every generated container instance, and nothing else: no pod-level (container="") or
    # pause (container="POD") series
    assert sorted(got) == sorted((p.namespace, p.name, c.name) for p, c in containers_of(pods))
    for pod, c in containers_of(pods):
        s = got[(pod.namespace, pod.name, c.name)]
        np.testing.assert_allclose(s.cpu, expected(pod, c.cpu, rate=True, steps=h.steps), atol=ATOL, rtol=0,
                                   equal_nan=True, err_msg=str(s.key))
        np.testing.assert_array_equal(s.memory, expected(pod, c.memory, rate=False, steps=h.steps), err_msg=str(s.key))
        if "cpu" in c.limits:
            np.testing.assert_allclose(s.throttled, expected(pod, c.throttled, rate=True, steps=h.steps), atol=ATOL,
                                       rtol=0, equal_nan=True)
        else:
            assert s.throttled is None
    # the progress callback: after every chunk, ending at 1
    assert fractions == sorted(fractions) and fractions[-1] == 1.0 and len(fractions) >= 7


@needs_prometheus
def test_oom_kills_restarts_requests_and_limits(week):
    _, pods, h, _ = week
    got = {c.key: c for c in h.containers}
    for pod, c in containers_of(pods):
        s = got[(pod.namespace, pod.name, c.name)]
        assert s.ooms.tolist() == c.oom_at, s.key
        assert s.restarts.tolist() == sorted(c.oom_at + c.restarts_at), s.key
        assert s.requests == c.requests and s.limits == c.limits, s.key
        limit = np.full(h.steps, np.nan)
        if "memory" in c.limits:
            limit[pod.first:pod.last + 1] = c.limits["memory"]
            np.testing.assert_array_equal(s.memory_limit, limit)
        else:
            assert s.memory_limit is None or np.isnan(s.memory_limit).all()
    worker = next(s for s in h.containers if s.container == "worker")
    assert worker.ooms.size >= 5 and worker.restarts.size == worker.ooms.size + 1


@needs_prometheus
def test_owners_are_resolved(week):
    _, pods, h, _ = week
    assert set(h.pods) == {(p.namespace, p.name) for p in pods}
    for pod in pods:
        record = h.pods[(pod.namespace, pod.name)]
        want = pod.replicaset_owner or pod.job_owner or ((pod.owner_kind, pod.owner_name) if pod.owner_kind else
                                                         (None, None))
        assert (record.owner_kind, record.owner_name) == want, pod.name
        assert record.node == pod.node
    kinds = {(r.owner_kind, r.owner_name) for r in h.pods.values()}
    assert {("Deployment", "web"), ("StatefulSet", "db"), ("Deployment", "worker"), ("CronJob", "report"),
            (None, None)} == kinds


@needs_prometheus
def test_a_gap_and_an_unexplained_counter_reset_are_warned_about(week):
    _, pods, h, _ = week
    db1 = next(p for p in pods if p.name == "db-1")
    [(a, b)] = db1.gaps
    db0 = next(p for p in pods if p.name == "db-0")
    [reset] = db0.containers[0].cpu_resets_at
    assert len(h.warnings) == 2, h.warnings
    gap, counter = sorted(h.warnings, key=lambda w: "went down" in w)
    assert "shop/db-1/postgres" in gap and "container_memory_working_set_bytes" in gap
    assert "container_cpu_usage_seconds_total" in gap and "the last value is held" in gap
    assert f"({b - a} steps from step {a})" in gap                 # memory: the missed scrapes
    assert f"({b - a + 1} steps from step {a - 1})" in gap         # CPU: and the rate across the gap's start
    assert "shop/db-0/postgres" in counter and "container_cpu_usage_seconds_total" in counter
    assert f"step {reset}" in counter and "without a restart" in counter and "reset to 0" in counter
    # the restarts' counter drops are explained by them: no warning for the worker
    assert not any("worker" in w for w in h.warnings)


@needs_prometheus
def test_small_chunks_read_the_same(week, monkeypatch):
    prom, _, h, _ = week
    monkeypatch.setattr(prometheus_history, "POINTS_PER_QUERY", 1000)    # under 100 steps a chunk here
    fractions: list[float] = []
    small = read(prom.url, progress=fractions.append)
    assert len(fractions) > 12
    assert [c.key for c in small.containers] == [c.key for c in h.containers]
    for a, b in zip(small.containers, h.containers):
        np.testing.assert_array_equal(a.cpu, b.cpu)
        np.testing.assert_array_equal(a.memory, b.memory)
        assert a.ooms.tolist() == b.ooms.tolist() and a.restarts.tolist() == b.restarts.tolist()
    assert small.warnings == h.warnings


@needs_prometheus
def test_a_coarser_step_averages_cpu_and_takes_the_peak_memory(week):
    prom, pods, _, _ = week
    per = 12                                                       # an hour of 5-minute scrapes
    day = 86400.0
    h = read(prom.url, start=START + day, end=START + 2 * day, step=per * SCRAPE, namespaces=["shop"])
    assert h.steps == 24 and {c.namespace for c in h.containers} == {"shop"}
    db0 = next(p for p in pods if p.name == "db-0").containers[0]
    s = next(c for c in h.containers if c.pod == "db-0")
    base = int(day / SCRAPE)
    for k in range(h.steps):
        scrapes = slice(base + k * per, base + (k + 1) * per)
        assert s.cpu[k] == pytest.approx(np.mean(db0.cpu[scrapes]), abs=ATOL)
        assert s.memory[k] == np.max(db0.memory[scrapes])


@needs_prometheus
def test_a_longer_rate_window_smooths_and_stops_with_the_container(week):
    prom, pods, _, _ = week
    h = read(prom.url, end=START + 86400, rate_window=2 * SCRAPE, namespaces=["shop", "batch"])
    got = {c.pod: c for c in h.containers}
    db0 = next(p for p in pods if p.name == "db-0").containers[0]
    # the rate over two intervals: their mean
    np.testing.assert_allclose(got["db-0"].cpu[1:], (db0.cpu[:287] + db0.cpu[1:288]) / 2, atol=ATOL, rtol=0)
    report = next(p for p in pods if p.name.startswith("report-") and p.last < 288)
    s = got[report.name]
    assert np.flatnonzero(s.seen()).tolist() == list(range(report.first, report.last + 1))
    assert np.isnan(s.cpu[report.last + 1:]).all()


@needs_prometheus
def test_namespaces_select(week):
    prom, pods, _, _ = week
    h = read(prom.url, namespaces=["batch", "default"])
    assert {c.namespace for c in h.containers} == {"batch", "default"}
    assert set(h.pods) <= {(p.namespace, p.name) for p in pods if p.namespace in ("batch", "default")}


@needs_prometheus
def test_no_kube_state_metrics_one_warning(week):
    prom, pods, _, _ = week
    h = read(prom.url, labels=LabelConfig(ksm_job="no-such-job"), end=START + 86400)
    [warning] = [w for w in h.warnings if "kube_pod_owner" in w]
    assert "no kube_pod_owner series" in warning and "owners are inferred from pod names" in warning
    assert "restarts are not recorded" in warning and 'job="no-such-job"' in warning
    assert all(r.owner_kind is None for r in h.pods.values())
    # OOM kills still come from cAdvisor's counter
    worker = next(c for c in h.containers if c.container == "worker")
    gen = next(c for p, c in containers_of(pods) if c.name == "worker")
    assert worker.ooms.tolist() == [k for k in gen.oom_at if k < 288] and worker.restarts.size == 0
    assert all(c.requests == {} for c in h.containers)


@needs_prometheus
def test_wrong_labels_name_the_flags(week):
    prom, _, _, _ = week
    with pytest.raises(HistoryImportError) as e:
        read(prom.url, labels=LabelConfig(container_pod_name_label="pod_name"))
    message = str(e.value)
    assert message.startswith(prom.url) and "no cAdvisor series" in message
    assert 'pod_name!=""' in message and "--container-pod-name-label" in message
    assert "--container-name-label" in message and "--container-namespace-label" in message
    # what Prometheus has instead
    assert "the labels container, id, image, instance, job, name, namespace, pod (jobs: kubernetes-cadvisor)" \
        in message
    with pytest.raises(HistoryImportError, match="--prometheus-cadvisor-job-name"):
        read(prom.url, labels=LabelConfig(cadvisor_job="cadvisor"))
    # a window without data
    with pytest.raises(HistoryImportError, match="no container_cpu_usage_seconds_total or "
                                                 "container_memory_working_set_bytes series at all"):
        read(prom.url, start=START - WEEK, end=START - 86400)


@needs_prometheus
def test_upstream_label_conventions_and_oom_kills_from_kube_state_metrics(legacy):
    prom, pods = legacy
    labels = LabelConfig(cadvisor_job="kubernetes-cadvisor", ksm_job="kube-state-metrics",
                         container_pod_name_label="pod_name", container_name_label="name",
                         pod_namespace_label="kubernetes_namespace", pod_name_label="kubernetes_pod_name")
    h = read(prom.url, end=START + 2 * 86400, labels=labels)
    got = {c.key: c for c in h.containers}
    assert sorted(got) == sorted((p.namespace, p.name, c.name) for p, c in containers_of(pods))
    for pod, c in containers_of(pods):
        s = got[(pod.namespace, pod.name, c.name)]
        np.testing.assert_array_equal(s.memory, expected(pod, c.memory, rate=False, steps=h.steps))
        np.testing.assert_allclose(s.cpu, expected(pod, c.cpu, rate=True, steps=h.steps), atol=ATOL, rtol=0,
                                   equal_nan=True)
        # no container_oom_events_total: restarts while the last terminated reason is OOMKilled
        assert s.ooms.tolist() == c.oom_at and s.restarts.tolist() == sorted(c.oom_at + c.restarts_at)
        assert s.requests == c.requests
    assert next(s for s in h.containers if s.container == "worker").ooms.size >= 1
    assert h.pods[next((p.namespace, p.name) for p in pods if p.name.startswith("web-"))].owner_name == "web"
    assert not any("kube_pod_owner" in w for w in h.warnings)
    # today's defaults find nothing there
    with pytest.raises(HistoryImportError, match="no cAdvisor series.*name, namespace, pod_name"):
        read(prom.url, end=START + 86400)


# -- servers that are not (working) Prometheus ------------------------------------------------------------

class Server:
    """A real HTTP server (aiohttp, its own thread) answering every GET with ``respond(request)``."""

    def __init__(self, respond) -> None:
        self.respond = respond
        self.requests: list[web.Request] = []
        self._ready = threading.Event()

    async def _handle(self, request: web.Request) -> web.Response:
        self.requests.append(request)
        return self.respond(request)

    def _serve(self) -> None:
        self.loop = asyncio.new_event_loop()
        app = web.Application()
        app.router.add_route("GET", "/{tail:.*}", self._handle)
        self.runner = web.AppRunner(app)
        self.loop.run_until_complete(self.runner.setup())
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        self.loop.run_until_complete(site.start())
        self.url = f"http://127.0.0.1:{site._server.sockets[0].getsockname()[1]}"
        self._ready.set()
        self.loop.run_forever()
        self.loop.run_until_complete(self.runner.cleanup())
        self.loop.close()

    def __enter__(self) -> Server:
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()
        assert self._ready.wait(10)
        return self

    def __exit__(self, *exc: Any) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


def test_an_unreachable_url_names_the_url():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    with pytest.raises(HistoryImportError, match=f"^{url}/api/v1/label/__name__/values: cannot reach Prometheus"):
        read(url)
    with pytest.raises(HistoryImportError, match="not an http"):
        read("prometheus:9090")


def test_a_server_that_is_not_prometheus_names_the_url():
    html = (lambda request: web.Response(text="<html><body>Grafana login</body></html>", content_type="text/html"))
    with Server(html) as server:
        with pytest.raises(HistoryImportError) as e:
            read(server.url)
    assert str(e.value).startswith(server.url + "/api/v1/label/__name__/values (match[] {__name__=~")
    assert "not a Prometheus API response (HTTP 200, text/html" in str(e.value) and "Grafana login" in str(e.value)


def test_a_prometheus_error_names_the_url_and_query():
    """Canned answers: the names exist, then the first range query fails as Prometheus fails."""
    def respond(request: web.Request) -> web.Response:
        if request.path.startswith("/api/v1/label/"):
            return web.json_response({"status": "success", "data": [prometheus_history.CPU, prometheus_history.MEMORY]})
        return web.json_response({"status": "error", "errorType": "execution",
                                  "error": "query processing would load too many samples into memory"}, status=422)

    with Server(respond) as server:
        with pytest.raises(HistoryImportError) as e:
            read(server.url, headers={"Authorization": "Bearer t0ken"})
    message = str(e.value)
    assert message.startswith(server.url + "/api/v1/query_range (query count(count by (namespace, pod, container)")
    assert "HTTP 422: execution: query processing would load too many samples" in message
    assert all(r.headers.get("Authorization") == "Bearer t0ken" for r in server.requests)


def test_bad_arguments():
    for kw, message in (({"step": 0}, "step"), ({"end": START - 1}, "before it starts"),
                        ({"rate_window": -1.0}, "rate window"), ({"namespaces": []}, "namespaces"),
                        ({"labels": LabelConfig(container_name_label="container-name")}, "--container-name-label")):
        with pytest.raises(ValueError, match=message):
            read("http://127.0.0.1:9", **kw)


# -- the flags -------------------------------------------------------------------------------------------

def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_prometheus_flags(parser)
    return parser.parse_args(list(argv))


def test_flags_defaults_and_labels(monkeypatch):
    monkeypatch.delenv("PROMETHEUS_USERNAME", raising=False)
    monkeypatch.delenv("PROMETHEUS_PASSWORD", raising=False)
    options = prometheus_options(parse())
    assert options == {"labels": LabelConfig(), "headers": {}, "ssl": None, "timeout": 300.0}
    options = prometheus_options(parse("--prometheus-cadvisor-job-name", "kubernetes-cadvisor",
                                       "--kube-state-metrics-job-name", "ksm", "--container-namespace-label", "ns",
                                       "--container-pod-name-label", "pod_name", "--container-name-label", "name",
                                       "--pod-namespace-label", "kubernetes_namespace",
                                       "--pod-name-label", "kubernetes_pod_name", "--prometheus-insecure",
                                       "--prometheus-query-timeout", "90s"))
    assert options["labels"] == LabelConfig("kubernetes-cadvisor", "ksm", "ns", "pod_name", "name",
                                            "kubernetes_namespace", "kubernetes_pod_name")
    assert options["ssl"] is False and options["timeout"] == 90.0


def test_flags_auth(tmp_path, monkeypatch):
    monkeypatch.delenv("PROMETHEUS_USERNAME", raising=False)
    monkeypatch.delenv("PROMETHEUS_PASSWORD", raising=False)
    assert prometheus_options(parse("--prometheus-bearer-token", "abc"))["headers"] == {"Authorization": "Bearer abc"}
    token = tmp_path / "token"
    token.write_text("from-file\n")
    assert prometheus_options(parse("--prometheus-bearer-token-file", str(token)))["headers"] == \
        {"Authorization": "Bearer from-file"}
    basic = prometheus_options(parse("--username", "me", "--password", "secret"))["headers"]["Authorization"]
    assert base64.b64decode(basic.split()[1]) == b"me:secret"
    monkeypatch.setenv("PROMETHEUS_USERNAME", "env-user")
    monkeypatch.setenv("PROMETHEUS_PASSWORD", "env-pass")
    basic = prometheus_options(parse())["headers"]["Authorization"]
    assert base64.b64decode(basic.split()[1]) == b"env-user:env-pass"
    basic = prometheus_options(parse("--username", "flag-user"))["headers"]["Authorization"]
    assert base64.b64decode(basic.split()[1]) == b"flag-user:env-pass"


@pytest.mark.parametrize("argv,message", [
    (("--prometheus-query-timeout", "soon"), "^--prometheus-query-timeout: 'soon' is not a duration"),
    (("--prometheus-bearer-token", "a", "--prometheus-bearer-token-file", "f"), "give one of them"),
    (("--prometheus-bearer-token-file", "/nonexistent/token"), "^--prometheus-bearer-token-file: /nonexistent/token: cannot read"),
    (("--password", "p"), "^--password .* needs --username"),
    (("--prometheus-bearer-token", "a", "--username", "u"), "one kind of auth"),
    (("--pod-name-label", "pod name"), "^--pod-name-label: 'pod name' is not a Prometheus label name"),
])
def test_flag_errors_name_the_flag(argv, message, monkeypatch):
    monkeypatch.delenv("PROMETHEUS_USERNAME", raising=False)
    monkeypatch.delenv("PROMETHEUS_PASSWORD", raising=False)
    with pytest.raises(ValueError, match=message):
        prometheus_options(parse(*argv))
