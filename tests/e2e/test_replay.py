"""Replay your own cluster, end to end with real components: a ``kvert up`` cluster with
Deployments, a StatefulSet, a CronJob, VPAs, an HPA and a PDB is captured by ``kvert snapshot``
and by real ``kubectl get -o yaml``; a real Prometheus holds four days of generated history with
cAdvisor's and kube-state-metrics' series (backfilled with ``promtool tsdb
create-blocks-from openmetrics``); ``kvert scenario import`` + ``kvert simulate`` give a report
whose replay-fidelity table matches the recorded history (mean CPU and memory within 5%, the
recorded OOM kills within one) and whose policy columns differ where they should.

The expected figures are the generated history's (``tests.support.promhistory``), computed
here from the generator's arrays, not from kvert."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
import yaml

from tests.support.promhistory import SCRAPE, START, have_prometheus, start_prometheus, week_of_pods

from .conftest import Kubectl, KvertUp

DAYS = 4       # four OOM kills of the leaking worker (one a day); a week took the suite 4 minutes
WINDOW = DAYS * 86400
MI = 2**20


def _container(name, cpu, memory, limits=None):
    resources = {"requests": {"cpu": cpu, "memory": memory}}
    if limits:
        resources["limits"] = limits
    return {"name": name, "image": f"registry.example/{name}:1", "resources": resources}


def _workload(kind, name, namespace, replicas, containers, **spec):
    labels = {"app": name}
    body = {"selector": {"matchLabels": labels}, "template": {"metadata": {"labels": labels},
                                                              "spec": {"containers": containers}}}
    if replicas is not None:
        body["replicas"] = replicas
    body.update(spec)
    return {"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": name, "namespace": namespace},
            "spec": body}


OBJECTS = [
    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}},
    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "batch"}},
    _workload("Deployment", "web", "shop", 2, [
        _container("app", "250m", "256Mi", {"cpu": "1", "memory": "512Mi"}),
        _container("istio-proxy", "50m", "64Mi", {"memory": "128Mi"})]),
    _workload("StatefulSet", "db", "shop", 2, [_container("postgres", "500m", "1Gi", {"memory": "2Gi"})],
              serviceName="db"),
    _workload("Deployment", "worker", "batch", 1, [_container("worker", "100m", "200Mi",
                                                              {"cpu": "500m", "memory": "300Mi"})]),
    {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "report", "namespace": "batch"},
     "spec": {"schedule": "0 2 * * *", "jobTemplate": {"spec": {"template": {"spec": {
         "restartPolicy": "OnFailure", "containers": [_container("report", "200m", "128Mi")]}}}}}},
    {"apiVersion": "autoscaling.k8s.io/v1", "kind": "VerticalPodAutoscaler",
     "metadata": {"name": "db", "namespace": "shop"},
     "spec": {"targetRef": {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "db"},
              "updatePolicy": {"updateMode": "Off"}}},
    {"apiVersion": "autoscaling.k8s.io/v1", "kind": "VerticalPodAutoscaler",
     "metadata": {"name": "worker", "namespace": "batch"},
     "spec": {"targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "worker"},
              "updatePolicy": {"updateMode": "Off"}}},
    # a utilization the recorded days never reach: the recorded cluster kept 2 replicas
    {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
     "metadata": {"name": "web", "namespace": "shop"},
     "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
              "minReplicas": 2, "maxReplicas": 6,
              "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {
                  "type": "Utilization", "averageUtilization": 900}}}]}},
    {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "db", "namespace": "shop"},
     "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "db"}}}},
]
KINDS = ("nodes,namespaces,deployments,replicasets,statefulsets,daemonsets,jobs,cronjobs,pods,"
         "verticalpodautoscalers,horizontalpodautoscalers,poddisruptionbudgets,priorityclasses,limitranges,"
         "resourcequotas,runtimeclasses")


def kvert(*args, timeout=900) -> subprocess.CompletedProcess:
    result = subprocess.run([sys.executable, "-m", "kvert.cli.main", *args], capture_output=True, text=True,
                            timeout=timeout)
    assert result.returncode == 0, f"kvert {' '.join(args)}:\n{result.stdout}\n{result.stderr}"
    return result


def expected_figures(pods) -> dict[str, dict]:
    """Per workload of the generated days: the mean over the window of the CPU (cores) and the
    working set (bytes) summed over its pods, and its OOM kills. The generator's CPU is per
    scrape interval, its memory per scrape: both are the value of one 5-minute step."""
    steps = int(WINDOW / SCRAPE)
    owner = {"web": "web", "db": "db", "worker": "worker", "report": "report"}
    out: dict[str, dict] = {}
    for pod in pods:
        name = next((w for w in owner if pod.name.startswith(w + "-")), None)
        if name is None:
            continue
        entry = out.setdefault(name, {"cpu": 0.0, "memory": 0.0, "oom_kills": 0})
        for c in pod.containers:
            entry["cpu"] += float(np.nansum(c.cpu[:steps])) / steps
            # the working set at scrape j is the peak of the step that ends there: step j - 1
            memory = c.memory[1:steps + 1]
            entry["memory"] += float(np.nansum(memory)) / steps
            entry["oom_kills"] += len(c.oom_at)
    return out


@pytest.mark.slow
def test_replay_a_recorded_cluster(tmp_path, kubectl_binary):
    reason = have_prometheus()
    if reason:
        pytest.skip(reason)
    up = KvertUp(tmp_path / "kvert", args=("--nodes", "3")).start()
    try:
        kubectl = Kubectl(kubectl_binary, up.kubeconfig, tmp_path / "home")
        kubectl("apply", "-f", "-", input=yaml.safe_dump_all(OBJECTS))
        kvert("snapshot", "--kubeconfig", str(up.kubeconfig), "-o", str(tmp_path / "cluster.yaml"))
        (tmp_path / "kubectl.yaml").write_text(kubectl("get", KINDS, "-A", "-o", "yaml").stdout)
    finally:
        up.stop()

    pods = week_of_pods(seed=1, days=DAYS)
    expected = expected_figures(pods)
    with start_prometheus(pods, tmp_path / "prom") as prom:
        window = ["--from", str(START), "--to", str(START + WINDOW), "--step", f"{SCRAPE:g}s", "--no-progress"]
        imported = kvert("scenario", "import", str(tmp_path / "cluster.yaml"), "--prometheus", prom.url, *window,
                         "--prometheus-cadvisor-job-name", "kubernetes-cadvisor", "-o", str(tmp_path / "replay"))
        kvert("scenario", "import", str(tmp_path / "kubectl.yaml"), "--prometheus", prom.url, *window,
              "-o", str(tmp_path / "replay-kubectl"))
    # the pod no workload of the snapshot owns is said, not silently dropped
    assert "pod default/debug" in imported.stderr
    scenario = yaml.safe_load((tmp_path / "replay" / "scenario.yaml").read_text())
    from_kubectl = yaml.safe_load((tmp_path / "replay-kubectl" / "scenario.yaml").read_text())
    names = lambda doc: sorted((w["manifest"]["kind"], w["manifest"]["metadata"]["name"]) for w in doc["workloads"])  # noqa: E731
    assert names(scenario) == names(from_kubectl) == [
        ("CronJob", "report"), ("Deployment", "web"), ("Deployment", "worker"), ("StatefulSet", "db")]
    assert [p["name"] for p in scenario["policies"]][0] == "as is"

    # the scenario is the user's to edit: upstream's updater leaves single-replica workloads alone
    # (--min-replicas 2), so a policy that lets it resize the leaking worker too
    scenario["policies"].append({"name": "InPlaceOrRecreate, min 1 replica",
                                 "vpa": {"updateMode": "InPlaceOrRecreate", "updater": {"minReplicas": 1}}})
    (tmp_path / "replay" / "scenario.yaml").write_text(yaml.safe_dump(scenario, sort_keys=False))
    out = tmp_path / "report"
    kvert("simulate", str(tmp_path / "replay"), "--parallel", "2", "--policy", "as is", "--policy", "no VPA",
          "--policy", "InPlaceOrRecreate", "--policy", "InPlaceOrRecreate, min 1 replica",
          "--json-only", "--no-progress", "-o", str(out))
    report = json.loads((out / "report.json").read_text())
    assert report["policies"] == ["as is", "no VPA", "InPlaceOrRecreate", "InPlaceOrRecreate, min 1 replica"]
    fidelity = {e["workload"]: e for e in report["replay_fidelity"]}
    assert set(fidelity) == {"web", "db", "worker", "report"}
    for name in ("web", "db", "worker"):
        e, want = fidelity[name], expected[name]
        assert e["recorded"]["cpu_cores_mean"] == pytest.approx(want["cpu"], rel=0.02), name
        assert e["recorded"]["memory_bytes_mean"] == pytest.approx(want["memory"], rel=0.02), name
        assert e["recorded"]["oom_kills"] == want["oom_kills"], name
        assert e["replayed"]["cpu_cores_mean"] == pytest.approx(want["cpu"], rel=0.05), name
        assert e["replayed"]["memory_bytes_mean"] == pytest.approx(want["memory"], rel=0.05), name
        assert abs(e["replayed"]["oom_kills"] - want["oom_kills"]) <= 1, name
    assert expected["worker"]["oom_kills"] >= 3

    by_policy = {p["name"]: p for p in report["results"]}
    requests = {name: {w: float(np.mean(s["cpu_request"])) for w, s in p["series"]["workloads"].items()}
                for name, p in by_policy.items()}
    # no VPA in the snapshot controls requests: as is and no VPA ask for the same
    assert requests["as is"]["db"] == pytest.approx(requests["no VPA"]["db"])
    # a VPA on every workload moves them: web's 250m+50m per pod is far below its use
    assert requests["InPlaceOrRecreate"]["web"] > 1.5 * requests["as is"]["web"]
    ooms = {name: p["metrics"]["workloads"]["worker"]["oom_kills"] for name, p in by_policy.items()}
    assert ooms["InPlaceOrRecreate"] == ooms["as is"]                      # one replica: not updated
    assert ooms["InPlaceOrRecreate, min 1 replica"] < ooms["as is"]        # the leak's limit raised in place
    assert by_policy["InPlaceOrRecreate, min 1 replica"]["metrics"]["workloads"]["worker"]["in_place_resizes"] > 0
