"""``kvert vpa recommender`` / ``kvert vpa updater``: flags, errors, and both run as their own
processes against a `kvert up --no-vpa` cluster over HTTPS (the recommender writes a recommendation
and a checkpoint and answers RecommendationQuery; the updater resizes the pods; both stop on
SIGINT)."""

from __future__ import annotations

import asyncio
import re
import signal
import ssl
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from kvert.api.errors import NotFound
from kvert.cli import vpa_components
from kvert.cli.main import build_parser, main
from kvert.client.http import HttpClient

from tests.e2e.conftest import KvertUp

ROOT = Path(__file__).resolve().parents[2]
HAMSTER = ROOT / "examples" / "hamster.yaml"
QUERY = ROOT / "examples" / "hamster-query.yaml"
VPAS = "autoscaling.k8s.io/verticalpodautoscalers"
CHECKPOINTS = "autoscaling.k8s.io/verticalpodautoscalercheckpoints"


def test_help_lists_upstream_flags_and_examples(capsys):
    with pytest.raises(SystemExit) as done:
        main(["vpa", "recommender", "--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    for flag in ("--kubeconfig", "--recommender-interval", "--checkpoints-gc-interval", "--target-cpu-percentile",
                 "--recommendation-margin-fraction", "--pod-recommendation-min-cpu-millicores",
                 "--pod-recommendation-min-memory-mb", "--oom-bump-up-ratio", "--oom-min-bump-up-bytes",
                 "--listen", "--tls-cert-file", "--tls-private-key-file", "--cert-dir", "--history-prometheus",
                 "--history-file", "--history-length", "--history-resolution"):
        assert flag in out, flag
    assert "examples:" in out and "kvert up --no-vpa" in out and "--history-prometheus http" in out
    with pytest.raises(SystemExit) as done:
        main(["vpa", "updater", "--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    for flag in ("--kubeconfig", "--updater-interval", "--eviction-tolerance", "--min-replicas",
                 "--in-recommendation-bounds-eviction-lifetime-threshold", "--evict-after-oom-threshold",
                 "--pod-update-threshold"):
        assert flag in out, flag
    assert "examples:" in out


def test_every_flag_sourced_config_field_is_a_flag():
    from dataclasses import fields
    from kvert.vpa.recommendation import RecommenderConfig
    flagged = {f.name for f in fields(RecommenderConfig) if f.metadata["source"] == "flag"}
    assert {name for _, name, _, _ in vpa_components.config_flags()} == flagged


def test_recommender_flags_become_the_config():
    args = build_parser().parse_args([
        "vpa", "recommender", "--target-cpu-percentile", "0.8", "--recommendation-margin-fraction", "0.3",
        "--pod-recommendation-min-memory-mb", "100", "--confidence-interval-cpu", "36h",
        "--container-recommendation-max-allowed-memory", "4Gi", "--cpu-integer-post-processor-enabled",
        "--interval", "1m30s", "--checkpoints-gc-interval", "5m"])
    config = vpa_components.recommender_config(args)
    assert config.target_cpu_percentile == 0.8 and config.safety_margin_fraction == 0.3
    assert config.pod_min_memory_mb == 100.0 and config.confidence_interval_cpu == 36 * 3600
    assert config.max_allowed_memory == 4 * 2**30 and config.cpu_integer_post_processor_enabled is True
    assert config.target_memory_percentile == 0.9                       # untouched: upstream's default
    assert args.interval == 90.0 and args.checkpoints_gc_interval == 300.0
    u = build_parser().parse_args(["vpa", "updater", "--eviction-tolerance", "0.25", "--min-replicas", "1",
                                   "--in-recommendation-bounds-eviction-lifetime-threshold", "6h"])
    assert (u.eviction_tolerance, u.min_replicas, u.in_recommendation_bounds_eviction_lifetime_threshold,
            u.interval) == (0.25, 1, 6 * 3600.0, 60.0)


def test_bad_values_are_refused_naming_the_flag(tmp_path, capsys):
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text("apiVersion: v1\n")
    assert main(["vpa", "recommender", "--kubeconfig", str(kubeconfig), "--target-cpu-percentile", "1.5"]) == 1
    assert "--target-cpu-percentile: '1.5' must be in (0, 1]" in capsys.readouterr().err
    assert main(["vpa", "recommender", "--kubeconfig", str(kubeconfig), "--target-cpu-percentile", "0.99"]) == 1
    assert "percentile" in capsys.readouterr().err              # above the 0.95 upper bound percentile
    assert main(["vpa", "recommender", "--kubeconfig", str(tmp_path / "missing")]) == 1
    assert "not found" in capsys.readouterr().err
    assert main(["vpa", "recommender", "--kubeconfig", str(kubeconfig), "--listen", "nowhere"]) == 1
    assert "HOST:PORT" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["vpa", "updater", "--eviction-tolerance", "2"])
    with pytest.raises(SystemExit):
        main(["vpa", "recommender", "--interval", "soon"])


def test_default_kubeconfig_is_kubectls(monkeypatch, tmp_path):
    monkeypatch.setenv("KUBECONFIG", f"{tmp_path / 'a'}:{tmp_path / 'b'}")
    assert vpa_components.default_kubeconfig() == tmp_path / "a"
    monkeypatch.delenv("KUBECONFIG")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert vpa_components.default_kubeconfig() == tmp_path / ".kube" / "config"
    assert vpa_components.parse_listen("127.0.0.1:8942") == ("127.0.0.1", 8942)
    assert vpa_components.parse_listen("[::1]:0") == ("::1", 0)


def test_history_flags_build_the_provider_as_kvert_up_does(tmp_path):
    from kvert.cli.history_flags import history_from_args
    from kvert.vpa.history import FileHistory, PrometheusHistory
    trace = ROOT / "examples" / "hamster-samples.csv"
    parse = build_parser().parse_args
    assert history_from_args(parse(["vpa", "recommender"])) is None
    from_file = history_from_args(parse(["vpa", "recommender", "--history-file", str(trace),
                                         "--history-length", "2d"]))
    assert isinstance(from_file, FileHistory) and from_file.path == trace
    assert from_file.history_length == 2 * 86400
    prom = history_from_args(parse(["vpa", "recommender", "--history-prometheus", "http://127.0.0.1:9090/",
                                    "--history-resolution", "5m"]))
    assert isinstance(prom, PrometheusHistory) and prom.url == "http://127.0.0.1:9090"
    assert (prom.history_length, prom.resolution) == (8 * 86400, 300)     # upstream's 8d; 5m
    # kvert up's --vpa-history-* flags are the same flags, built by the same code
    up = history_from_args(parse(["up", "--vpa-history-prometheus", "http://127.0.0.1:9090",
                                  "--vpa-history-length", "1d"]), prefix="vpa-")
    assert isinstance(up, PrometheusHistory) and (up.history_length, up.resolution) == (86400, 3600)
    with pytest.raises(SystemExit):                                       # one source at most
        parse(["vpa", "recommender", "--history-file", str(trace), "--history-prometheus", "http://x:1"])
    with pytest.raises(ValueError, match=r"^--history-file .*missing\.csv: no such file"):
        history_from_args(parse(["vpa", "recommender", "--history-file", str(tmp_path / "missing.csv")]))
    with pytest.raises(ValueError, match=r"^--history-prometheus .*not an http"):
        history_from_args(parse(["vpa", "recommender", "--history-prometheus", "ftp://x"]))
    with pytest.raises(ValueError, match=r"^--vpa-history-length/--vpa-history-resolution: 'soon'"):
        history_from_args(parse(["up", "--vpa-history-length", "soon"]), prefix="vpa-")


def test_recommender_gets_the_history_and_an_informer_cache(tmp_path, monkeypatch, capsys):
    """serve_recommender hands the provider and its own InformerFactory to the recommender, and
    stops the cache when it stops; a bad history flag stops it before it connects."""
    import kvert.vpa.recommender as recommender_module
    from kvert.client.cache import InformerFactory
    from kvert.vpa.history import FileHistory
    made = {}

    class FakeClient:
        server = "https://fake"

        async def close(self):
            made["closed"] = True

    class FakeRecommender:
        def __init__(self, client, clock, metrics, **kw):
            made.update(kw, client=client)

        async def run(self):
            return None

        def stop(self):
            pass

    stopped = []
    monkeypatch.setattr(InformerFactory, "stop", lambda self: stopped.append(self))
    monkeypatch.setattr(vpa_components, "_client", lambda args, manager: FakeClient())
    monkeypatch.setattr(recommender_module, "Recommender", FakeRecommender)
    trace = ROOT / "examples" / "hamster-samples.csv"
    args = build_parser().parse_args(["vpa", "recommender", "--history-file", str(trace)])
    assert asyncio.run(vpa_components.serve_recommender(args)) == 0
    assert isinstance(made["history"], FileHistory) and made["history"].path == trace
    assert isinstance(made["informers"], InformerFactory) and made["informers"].client is made["client"]
    assert stopped == [made["informers"]] and made["closed"]
    assert f"history from {trace}" in capsys.readouterr().out
    made.clear()
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text("apiVersion: v1\n")
    assert main(["vpa", "recommender", "--kubeconfig", str(kubeconfig),
                 "--history-file", str(tmp_path / "nope.csv")]) == 1
    assert "--history-file" in capsys.readouterr().err and made == {}


async def _api(kubeconfig: Path, work):
    client = HttpClient.from_kubeconfig(kubeconfig)
    try:
        return await work(client)
    finally:
        await client.close()


def test_recommender_against_kvert_up_without_vpa(tmp_path):
    up = KvertUp(tmp_path / "cluster", args=("--nodes", "1", "--metrics-resolution", "1", "--no-vpa")).start()
    recommender = updater = None
    try:
        docs = [d for d in yaml.safe_load_all(HAMSTER.read_text()) if d]

        async def setup(client):
            for d in docs:
                d.setdefault("metadata", {})["namespace"] = "default"
            await client.create("apps/deployments", docs[0])
            await client.create(VPAS, docs[1])
            try:
                await client.get("admissionregistration.k8s.io/mutatingwebhookconfigurations", "vpa-webhook-config")
                return True
            except NotFound:
                return False

        assert asyncio.run(_api(up.kubeconfig, setup)) is False      # --no-vpa: no VPA webhook either
        cmd = [sys.executable, "-m", "kvert.cli.main", "vpa", "recommender", "--kubeconfig", str(up.kubeconfig),
               "--recommender-interval", "1s", "--checkpoints-gc-interval", "2s", "--listen", "127.0.0.1:0",
               "--cert-dir", str(tmp_path / "certs"), "--log-level", "warning", "--address", "127.0.0.1:0"]
        recommender = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        first = recommender.stdout.readline()
        m = re.search(r"serving (https://\S+?)/apis", first)
        assert m, first
        url = m.group(1)
        assert "running against" in recommender.stdout.readline()

        async def wait_for_recommendation(client):
            deadline = time.monotonic() + 20
            vpa, checkpoints = {}, []
            while time.monotonic() < deadline:
                vpa = await client.get(VPAS, "hamster-vpa", "default")
                checkpoints = (await client.list(CHECKPOINTS, namespace="default"))["items"]
                # as upstream, the first loops before the pods' first samples recommend the pod
                # minimum (raised to the example's minAllowed 100m): wait for one from usage
                recs = ((vpa.get("status") or {}).get("recommendation") or {}).get("containerRecommendations")
                if recs and recs[0]["target"]["cpu"] not in ("25m", "100m") and checkpoints:
                    break
                await asyncio.sleep(0.5)
            return vpa, checkpoints

        vpa, checkpoints = asyncio.run(_api(up.kubeconfig, wait_for_recommendation))
        [rec] = vpa["status"]["recommendation"]["containerRecommendations"]
        assert rec["containerName"] == "hamster" and rec["target"]["cpu"].endswith("m")
        assert 300 < int(rec["target"]["cpu"][:-1]) < 1000          # ~500m of use, 15 % margin
        conditions = {c["type"]: c["status"] for c in vpa["status"]["conditions"]}
        assert conditions["RecommendationProvided"] == "True"
        assert [c["spec"]["containerName"] for c in checkpoints] == ["hamster"]

        async def ask():
            import aiohttp
            tls = ssl.create_default_context(cafile=str(tmp_path / "certs" / "ca.crt"))
            body = yaml.safe_load(QUERY.read_text())
            async with aiohttp.ClientSession() as session:
                path = "/apis/autoscaling.kvert.io/v1/namespaces/default/recommendationqueries"
                async with session.post(url + path, json=body, ssl=tls) as r:
                    answered = (r.status, await r.json())
                async with session.get(url + path, ssl=tls) as r:
                    listed = r.status
            return answered, listed

        (status, answer), listed = asyncio.run(ask())
        assert status == 201 and listed == 405
        [queried] = answer["status"]["recommendation"]["containerRecommendations"]
        assert queried["containerName"] == "hamster"
        assert int(queried["target"]["cpu"][:-1]) > 300
        recommender.send_signal(signal.SIGINT)
        assert recommender.wait(timeout=15) == 0
        assert "vpa recommender stopped" in recommender.stdout.read()

        # the updater, its own process too, resizes the hamster pods in place toward the target
        # no admission controller here, so its status Lease is not waited for (upstream's default waits)
        updater = subprocess.Popen([sys.executable, "-m", "kvert.cli.main", "vpa", "updater", "--kubeconfig",
                                    str(up.kubeconfig), "--updater-interval", "1s", "--log-level", "warning",
                                    "--use-admission-controller-status=false", "--address", "127.0.0.1:0"],
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        assert "vpa updater running against" in updater.stdout.readline()

        async def wait_for_resize(client):
            deadline = time.monotonic() + 20
            requests: list[str] = []
            while time.monotonic() < deadline:
                pods = (await client.list("pods", namespace="default", label_selector="app=hamster"))["items"]
                requests = [p["spec"]["containers"][0]["resources"]["requests"]["cpu"] for p in pods]
                if any(r != "100m" for r in requests):
                    break
                await asyncio.sleep(0.5)
            return requests

        requests = asyncio.run(_api(up.kubeconfig, wait_for_resize))
        assert any(r != "100m" for r in requests), requests
        updater.send_signal(signal.SIGINT)
        assert updater.wait(timeout=15) == 0
        assert "vpa updater stopped" in updater.stdout.read()
    finally:
        for proc in (recommender, updater):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait()
        up.stop()


def test_updaters_with_leader_election_take_turns(tmp_path):
    """`kvert vpa updater --leader-elect`: of two replicas one holds the vpa-updater Lease; the
    leader stopping cleanly releases it and the other leads at once (client-go's
    ReleaseOnCancel), not after the 15 s lease."""
    up = KvertUp(tmp_path / "cluster", args=("--nodes", "0", "--no-vpa")).start()
    # two replicas on one host: each its own metrics port (upstream's :8943 would be taken twice)
    cmd = [sys.executable, "-m", "kvert.cli.main", "vpa", "updater", "--kubeconfig", str(up.kubeconfig),
           "--leader-elect", "--log-level", "warning", "--address", "127.0.0.1:0"]
    replicas: list[subprocess.Popen] = []

    async def lease(client):
        try:
            return (await client.get("coordination.k8s.io/leases", "vpa-updater", "kube-system"))["spec"]
        except NotFound:
            return {}

    def wait_holder(unlike: str = "", timeout: float = 20.0) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = asyncio.run(_api(up.kubeconfig, lease)).get("holderIdentity", "")
            if found and found != unlike:
                return found
            time.sleep(0.2)
        raise AssertionError("no new holder of the vpa-updater Lease")

    try:
        replicas.append(subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
        first = wait_holder()                       # the only replica leads
        replicas.append(subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
        time.sleep(5)
        spec = asyncio.run(_api(up.kubeconfig, lease))
        assert spec["holderIdentity"] == first and spec["leaseDurationSeconds"] == 15
        replicas[0].send_signal(signal.SIGTERM)
        replicas[0].wait(timeout=15)
        released = time.monotonic()
        wait_holder(unlike=first)
        assert time.monotonic() - released < 5      # well before the 15 s lease ran out
        assert asyncio.run(_api(up.kubeconfig, lease))["leaseTransitions"] >= 1
    finally:
        for p in replicas:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                p.wait(timeout=15)
        up.stop()


def test_leader_elect_takes_gos_boolean_form():
    # upstream's Helm chart passes --leader-elect=true (component-base's pflag boolean)
    from kvert.cli.main import build_parser
    parser = build_parser()
    assert parser.parse_args(["vpa", "recommender", "--leader-elect=true"]).leader_elect is True
    assert parser.parse_args(["vpa", "updater", "--leader-elect"]).leader_elect is True
    assert parser.parse_args(["vpa", "updater"]).leader_elect is False
    assert parser.parse_args(["up", "--leader-elect=false"]).leader_elect is False
    assert parser.parse_args(["up", "--no-leader-elect"]).leader_elect is False
    assert parser.parse_args(["up"]).leader_elect is True
