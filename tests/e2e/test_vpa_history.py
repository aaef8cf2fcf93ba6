"""Seed 002's History Storage end to end: a real Prometheus scrapes a real ``kvert up`` (the
node's cAdvisor metrics over HTTPS with the CA and a bearer token) while a workload burns a
known CPU (``kvert.io/usage``); then

* ``kvert vpa recommend --prometheus URL --vpa VPA.yaml`` recommends from Prometheus' history,
* ``kvert up --vpa-history-prometheus URL`` (restarted on the same data directory, so the VPA
  has no checkpoint yet) bootstraps its recommender from Prometheus: the VPA has a
  recommendation and ``FetchingHistory`` False with what was loaded at the first loop, long
  before a live-metrics loop could give one (the recommender interval is 60 s)."""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
import sys
import urllib.parse
import urllib.request

import pytest
import yaml

from kvert.api.quantity import Quantity

from .conftest import Kubectl, KvertUp, free_port, wait_for

USAGE_CPU_MILLI = 300
DEPLOYMENT = {
    "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "busy", "namespace": "default"},
    "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "busy"}},
             "template": {"metadata": {"labels": {"app": "busy"},
                                       "annotations": {"kvert.io/usage": json.dumps(
                                           {"app": {"cpu": f"{USAGE_CPU_MILLI}m", "memory": "64Mi"}})}},
                          "spec": {"containers": [{"name": "app", "image": "busy",
                                                   "resources": {"requests": {"cpu": "100m",
                                                                              "memory": "32Mi"}}}]}}}}
VPA = {"apiVersion": "autoscaling.k8s.io/v1", "kind": "VerticalPodAutoscaler",
       "metadata": {"name": "busy-vpa", "namespace": "default"},
       "spec": {"targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "busy"},
                "updatePolicy": {"updateMode": "Off"}}}
HISTORY = ("--history-length", "5m", "--history-resolution", "3s")


def _query(base: str, promql: str) -> list[dict]:
    url = f"{base}/api/v1/query?{urllib.parse.urlencode({'query': promql})}"
    with urllib.request.urlopen(url, timeout=5) as r:
        body = json.load(r)
    assert body["status"] == "success", body
    return body["data"]["result"]


def _milli(text: str) -> int:
    return Quantity.parse(text).milli_value()


def test_recommendations_from_prometheus_history(tmp_path, kubectl_binary):
    binary = shutil.which("prometheus")
    if binary is None:
        pytest.skip("prometheus is not installed (scripts/setup --test installs the Debian package "
                    "'prometheus' when run as root)")
    port = free_port()                      # the same port after the restart: Prometheus' target
    data = tmp_path / "data"
    # one recommender loop per run (at start): the first run then writes no checkpoint, which
    # would make the second skip the history it is here to load
    common = ("--nodes", "1", "--metrics-resolution", "1", "--port", str(port), "--vpa-recommender-interval", "3600")
    up = KvertUp(data, args=common).start()
    kubectl = Kubectl(kubectl_binary, up.kubeconfig, tmp_path / "home")
    prom_port = free_port()
    base = f"http://127.0.0.1:{prom_port}"
    proc = None
    log = (tmp_path / "prometheus.log").open("w")
    try:
        kubectl("create", "-f", "-", input=json.dumps(DEPLOYMENT))
        (tmp_path / "vpa.yaml").write_text(yaml.safe_dump(VPA))
        kubectl("create", "-f", str(tmp_path / "vpa.yaml"))
        config = yaml.safe_load(up.kubeconfig.read_text())
        (tmp_path / "ca.crt").write_bytes(
            base64.b64decode(config["clusters"][0]["cluster"]["certificate-authority-data"]))
        (tmp_path / "token").write_text(config["users"][0]["user"]["token"])
        (tmp_path / "prometheus.yml").write_text(yaml.safe_dump({
            "global": {"scrape_interval": "1s", "scrape_timeout": "1s"},
            "scrape_configs": [{
                "job_name": "kvert-cadvisor", "metrics_path": "/api/v1/nodes/node-1/proxy/metrics/cadvisor",
                "scheme": "https", "tls_config": {"ca_file": str(tmp_path / "ca.crt")},
                "authorization": {"type": "Bearer", "credentials_file": str(tmp_path / "token")},
                "static_configs": [{"targets": [f"127.0.0.1:{port}"]}]}]}))
        proc = subprocess.Popen([binary, f"--config.file={tmp_path / 'prometheus.yml'}",
                                 f"--storage.tsdb.path={tmp_path / 'tsdb'}", f"--web.listen-address=127.0.0.1:{prom_port}"],
                                stdout=log, stderr=subprocess.STDOUT)

        def scraped_enough():
            assert proc.poll() is None, (tmp_path / "prometheus.log").read_text()[-3000:]
            try:
                result = _query(base, 'count_over_time(container_cpu_usage_seconds_total{pod=~"busy-.*"}[1m])')
            except OSError:
                return None
            return result and float(result[0]["value"][1]) >= 10

        wait_for(scraped_enough, timeout=40, every=0.5)

        # 1. kvert vpa recommend --prometheus: the pods of the VPA's Deployment, by name
        out = subprocess.run([sys.executable, "-m", "kvert.cli.main", "vpa", "recommend", "--prometheus", base,
                              "--vpa", str(tmp_path / "vpa.yaml"), *HISTORY, "-o", "json"],
                             capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        [rec] = json.loads(out.stdout)["containerRecommendations"]
        assert rec["containerName"] == "app"
        # 300m used (the request is 100m): the 90th percentile plus the 15% margin
        assert USAGE_CPU_MILLI <= _milli(rec["target"]["cpu"]) <= USAGE_CPU_MILLI * 1.5, rec
        assert _milli(rec["lowerBound"]["cpu"]) <= _milli(rec["target"]["cpu"]) <= _milli(rec["upperBound"]["cpu"])
    finally:
        assert up.stop() == 0

    # 2. the recommender of a restarted cluster bootstraps from Prometheus
    up = KvertUp(data, args=(*common, "--vpa-history-prometheus", base,
                             "--vpa-history-length", "5m", "--vpa-history-resolution", "3s")).start()
    try:
        def recommended():
            vpa = kubectl.json("get", "vpa", "busy-vpa")
            conditions = {c["type"]: c for c in (vpa.get("status") or {}).get("conditions") or []}
            recs = ((vpa.get("status") or {}).get("recommendation") or {}).get("containerRecommendations")
            return recs and conditions.get("FetchingHistory", {}).get("status") == "False" and (recs, conditions)

        recs, conditions = wait_for(recommended, timeout=20, every=0.5)
        message = conditions["FetchingHistory"]["message"]
        assert message.startswith("Loaded ") and message.endswith(f" from {base}"), message
        # >= 10 s scraped at a 3 s resolution: at least 3 rows of CPU and memory, of the one pod
        assert int(message.split()[1]) >= 3 and " of 1 pods " in message
        [rec] = recs
        assert USAGE_CPU_MILLI <= _milli(rec["target"]["cpu"]) <= USAGE_CPU_MILLI * 1.5, rec
        assert conditions["RecommendationProvided"]["status"] == "True"
    finally:
        assert up.stop() == 0
        if proc is not None:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        log.close()
