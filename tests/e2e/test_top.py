"""Node metrics from a real ``kvert up --nodes 1``: ``kubectl top nodes|pods`` (the
metrics.k8s.io API), the node proxy's cAdvisor metrics through ``kubectl get --raw``, and a
real Prometheus scraping kvert over HTTPS with the CA and a bearer token."""

from __future__ import annotations

import base64
import json
import re
import shutil
import subprocess
import urllib.parse
import urllib.request

import pytest
import yaml

from kvert.api.prometheus import parse_exposition

from .conftest import Kubectl, KvertUp, free_port, wait_for

POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "busy", "labels": {"app": "busy"}},
       "spec": {"containers": [{"name": "app", "image": "nginx",
                                "resources": {"requests": {"cpu": "250m", "memory": "64Mi"},
                                              "limits": {"cpu": "250m", "memory": "64Mi"}}}]}}

CPU = r"\d+m"
MEMORY = r"\d+(Ki|Mi|Gi)"


@pytest.fixture(scope="module")
def top_cluster(tmp_path_factory, kubectl_binary):
    up = KvertUp(tmp_path_factory.mktemp("top"), args=("--nodes", "1", "--metrics-resolution", "1")).start()
    kubectl = Kubectl(kubectl_binary, up.kubeconfig, tmp_path_factory.mktemp("home"))
    try:
        kubectl("create", "-f", "-", input=json.dumps(POD))
        wait_for(lambda: kubectl.json("get", "pod", "busy")["status"].get("phase") == "Running")
        yield up, kubectl
    finally:
        up.stop()


def test_kubectl_top_pods_prints_usage(top_cluster):
    _, kubectl = top_cluster

    def top():
        result = kubectl("top", "pods", check=False)
        return result.returncode == 0 and "busy" in result.stdout and result.stdout

    out = wait_for(top)
    header, *rows = out.strip().splitlines()
    assert header.split() == ["NAME", "CPU(cores)", "MEMORY(bytes)"]
    [row] = [r.split() for r in rows if r.split()[0] == "busy"]
    assert re.fullmatch(CPU, row[1]) and re.fullmatch(MEMORY, row[2]), row
    containers = kubectl("top", "pods", "busy", "--containers").stdout
    assert re.search(rf"busy\s+app\s+{CPU}\s+{MEMORY}", containers), containers
    everywhere = kubectl("top", "pods", "-A", "-l", "app=busy").stdout
    assert re.search(rf"default\s+busy\s+{CPU}\s+{MEMORY}", everywhere), everywhere
    missing = kubectl("top", "pods", "nope", check=False)
    assert missing.returncode != 0 and 'podmetrics.metrics.k8s.io "default/nope" not found' in missing.stderr


def test_kubectl_top_nodes_prints_usage_and_percentages(top_cluster):
    _, kubectl = top_cluster

    def top():
        result = kubectl("top", "nodes", check=False)
        return result.returncode == 0 and "node-1" in result.stdout and result.stdout

    out = wait_for(top)
    header, row = out.strip().splitlines()
    assert header.split() == ["NAME", "CPU(cores)", "CPU(%)", "MEMORY(bytes)", "MEMORY(%)"]
    assert re.fullmatch(rf"node-1\s+{CPU}\s+\d+%\s+{MEMORY}\s+\d+%", row.strip()), row
    listed = kubectl.json("get", "nodes.metrics.k8s.io")
    assert [n["metadata"]["name"] for n in listed["items"]] == ["node-1"]
    resources = kubectl("api-resources", "--api-group=metrics.k8s.io", "--no-headers").stdout
    assert re.search(r"nodes\s+metrics.k8s.io/v1beta1\s+false\s+NodeMetrics", resources), resources
    assert re.search(r"pods\s+metrics.k8s.io/v1beta1\s+true\s+PodMetrics", resources), resources


def test_node_proxy_serves_cadvisor_metrics_for_the_running_pod(top_cluster):
    _, kubectl = top_cluster
    text = kubectl("get", "--raw", "/api/v1/nodes/node-1/proxy/metrics/cadvisor").stdout
    assert re.search(r'^container_cpu_usage_seconds_total\{.*pod="busy".*\} \S+', text, re.M), text[:2000]
    samples = parse_exposition(text)
    cpu = [s for s in samples if s.name == "container_cpu_usage_seconds_total" and s.labels["pod"] == "busy"]
    assert len(cpu) == 1 and cpu[0].labels["container"] == "app" and cpu[0].labels["namespace"] == "default"
    memory = [s for s in samples if s.name == "container_memory_working_set_bytes" and s.labels["pod"] == "busy"]
    assert memory and memory[0].value > 0
    kubelet = kubectl("get", "--raw", "/api/v1/nodes/node-1/proxy/metrics").stdout
    assert 'kubelet_node_name{node="node-1"} 1' in kubelet
    apiserver = kubectl("get", "--raw", "/metrics").stdout
    assert re.search(r'^apiserver_request_total\{.*resource="pods".*\} \d+', apiserver, re.M)
    missing = kubectl("get", "--raw", "/api/v1/nodes/node-9/proxy/metrics/cadvisor", check=False)
    assert missing.returncode != 0 and "NotFound" in missing.stderr


def _query(base: str, promql: str) -> list[dict]:
    url = f"{base}/api/v1/query?{urllib.parse.urlencode({'query': promql})}"
    with urllib.request.urlopen(url, timeout=5) as r:
        body = json.load(r)
    assert body["status"] == "success", body
    return body["data"]["result"]


def test_prometheus_scrapes_the_node_proxy_over_https(top_cluster, tmp_path):
    binary = shutil.which("prometheus")
    if binary is None:
        pytest.skip("prometheus is not installed (scripts/setup --test installs the Debian package "
                    "'prometheus' when run as root)")
    up, _ = top_cluster
    config = yaml.safe_load(up.kubeconfig.read_text())
    (tmp_path / "ca.crt").write_bytes(base64.b64decode(config["clusters"][0]["cluster"]["certificate-authority-data"]))
    (tmp_path / "token").write_text(config["users"][0]["user"]["token"])
    target = urllib.parse.urlsplit(up.url).netloc
    common = {"scheme": "https", "tls_config": {"ca_file": str(tmp_path / "ca.crt")},
              "authorization": {"type": "Bearer", "credentials_file": str(tmp_path / "token")},
              "static_configs": [{"targets": [target]}]}
    (tmp_path / "prometheus.yml").write_text(yaml.safe_dump({
        "global": {"scrape_interval": "1s", "scrape_timeout": "1s"},
        "scrape_configs": [
            {"job_name": "kvert-cadvisor", "metrics_path": "/api/v1/nodes/node-1/proxy/metrics/cadvisor", **common},
            {"job_name": "kvert-apiserver", "metrics_path": "/metrics", **common},
        ]}))
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    log = (tmp_path / "prometheus.log").open("w")
    proc = subprocess.Popen([binary, f"--config.file={tmp_path / 'prometheus.yml'}",
                             f"--storage.tsdb.path={tmp_path / 'data'}", f"--web.listen-address=127.0.0.1:{port}"],
                            stdout=log, stderr=subprocess.STDOUT)
    try:
        def scraped():
            assert proc.poll() is None, (tmp_path / "prometheus.log").read_text()[-3000:]
            try:
                result = _query(base, 'container_cpu_usage_seconds_total{pod="busy"}')
                return result and _query(base, "apiserver_request_total") and result
            except OSError:
                return None

        try:
            series = wait_for(scraped, timeout=30, every=0.5)
        except AssertionError:
            try:
                with urllib.request.urlopen(f"{base}/api/v1/targets", timeout=5) as r:
                    targets = json.load(r)["data"]["activeTargets"]
            except OSError as e:
                targets = str(e)
            raise AssertionError(f"no series scraped; targets: {targets}\n"
                                 f"{(tmp_path / 'prometheus.log').read_text()[-3000:]}") from None
        [s] = series
        assert s["metric"]["job"] == "kvert-cadvisor" and s["metric"]["namespace"] == "default"
        assert s["metric"]["container"] == "app" and float(s["value"][1]) > 0
        up_series = {r["metric"]["job"]: r["value"][1] for r in _query(base, "up")}
        assert up_series == {"kvert-cadvisor": "1", "kvert-apiserver": "1"}
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
