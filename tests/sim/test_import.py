"""``kvert scenario import`` without Prometheus: a snapshot and a recorded history made here,
imported, and the "as is" replay checked against what the history recorded.

The expected figures are computed from the recorded inputs below, not from kvert."""

from __future__ import annotations

import json

import numpy as np
import pytest
import yaml

from kvert.sim.engine import run_policy
from kvert.sim.fidelity import replay_fidelity
from kvert.sim.importer import SCENARIO_FILE, WARNINGS_FILE, ScenarioImportError, import_scenario
from kvert.sim.recorded import ContainerSeries, PodRecord, RecordedHistory
from kvert.sim.scenario import load_scenario
from kvert.sim.snapshot import parse_snapshot
from kvert.sim.tracefiles import read_history

MI = 2**20
STEP = 300.0
STEPS = 72                          # 6 hours
START = 1_790_000_000.0             # 2026-09-22, on the step grid

NODE = {"apiVersion": "v1", "kind": "Node",
        "metadata": {"name": "ip-10-0-0-{i}", "labels": {"kubernetes.io/hostname": "ip-10-0-0-{i}",
                                                         "topology.kubernetes.io/zone": "a",
                                                         "node.kubernetes.io/instance-type": "m5.xlarge"}},
        "spec": {"taints": [{"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}]},
        "status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                   "allocatable": {"cpu": "3900m", "memory": "7Gi", "pods": "110"}}}


def _container(name, cpu="200m", memory="256Mi", limit=None):
    resources = {"requests": {"cpu": cpu, "memory": memory}}
    if limit:
        resources["limits"] = {"memory": limit}
    return {"name": name, "image": "app:1", "resources": resources,
            "env": [{"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}]}


def snapshot_text() -> str:
    items = [json.loads(json.dumps(NODE).replace("{i}", str(i))) for i in (1, 2)]
    items += [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}},
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "shop"},
         "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                  "template": {"metadata": {"labels": {"app": "web"}},
                               "spec": {"serviceAccountName": "web", "containers": [_container("app", limit="1Gi")],
                                        "volumes": [{"name": "conf", "configMap": {"name": "web"}}]}}}},
        {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db", "namespace": "shop"},
         "spec": {"replicas": 2, "serviceName": "db", "selector": {"matchLabels": {"app": "db"}},
                  "template": {"metadata": {"labels": {"app": "db"}},
                               "spec": {"containers": [_container("postgres", "100m", "200Mi", "300Mi")]}},
                  "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"]}}]}},
        {"apiVersion": "autoscaling.k8s.io/v1", "kind": "VerticalPodAutoscaler",
         "metadata": {"name": "db-vpa", "namespace": "shop"},
         "spec": {"targetRef": {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "db"},
                  "updatePolicy": {"updateMode": "Off"}}},
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "web", "namespace": "shop"}},
    ]
    return yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": items})


def series(ns, pod, container, cpu, memory, ooms=(), restarts=()):
    return ContainerSeries(ns, pod, container, np.asarray(cpu, float), np.asarray(memory, float),
                           ooms=np.asarray(ooms, dtype=np.int64), restarts=np.asarray(restarts, dtype=np.int64))


def recorded() -> tuple[RecordedHistory, dict]:
    """web: pods web-a1/web-a2 for the first half, replaced by web-b1/web-b2; db: db-0 and db-1,
    db-1 OOM-killed (and restarted) at steps 20 and 50. Returns the history and the expected
    recorded figures."""
    t = np.arange(STEPS)
    nan = np.full(STEPS, np.nan)
    half = STEPS // 2
    web = []
    for i, (name, live) in enumerate((("web-7f9c-a1", t < half), ("web-7f9c-a2", t < half),
                                      ("web-5d4b-b1", t >= half), ("web-5d4b-b2", t >= half))):
        cpu = np.where(live, 0.15 + 0.05 * i + 0.1 * np.sin(t / 10) ** 2, nan)
        memory = np.where(live, (300 + 10 * i) * MI + t * MI, nan)
        web.append(series("shop", name, "app", cpu, memory))
    db = [series("shop", "db-0", "postgres", np.full(STEPS, 0.08), np.full(STEPS, 150 * MI)),
          series("shop", "db-1", "postgres", np.full(STEPS, 0.05), np.full(STEPS, 220 * MI), ooms=[20, 50],
                 restarts=[20, 50])]
    # a pod no workload of the snapshot owns, and the source's own owner records
    stray = series("shop", "batch-x9", "main", np.full(STEPS, 0.5), np.full(STEPS, 100 * MI))
    pods = {("shop", s.pod): PodRecord("shop", s.pod, "ReplicaSet", s.pod.rsplit("-", 1)[0]) for s in web}
    pods[("shop", "db-0")] = PodRecord("shop", "db-0", "StatefulSet", "db")
    history = RecordedHistory(START, STEP, STEPS, web + db + [stray], pods, warnings=["from the source"],
                              source="test")
    expected = {
        "web": {"cpu_cores_mean": sum(np.nansum(s.cpu) for s in web) / STEPS,
                "memory_bytes_mean": sum(np.nansum(s.memory) for s in web) / STEPS, "oom_kills": 0, "pods": 4},
        "db": {"cpu_cores_mean": (0.08 + 0.05), "memory_bytes_mean": (150 + 220) * MI, "oom_kills": 2,
               "restarts": 2, "pods": 2},
    }
    return history, expected


def test_import_writes_an_editable_scenario_with_traces(tmp_path):
    history, expected = recorded()
    snap = parse_snapshot(snapshot_text(), "cluster.yaml")
    out = tmp_path / "imported"
    result = import_scenario(snap.objects, history, out, name="shop")
    assert sorted(p.name for p in out.iterdir()) == [WARNINGS_FILE, SCENARIO_FILE, "traces"]
    doc = yaml.safe_load((out / SCENARIO_FILE).read_text())
    # one pool of the two alike nodes, their names kept, the controller's taint and kubelet labels gone
    assert doc["nodes"] == [{"name": "m5-xlarge-1", "count": 2, "names": ["ip-10-0-0-1", "ip-10-0-0-2"],
                             "capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                             "allocatable": {"cpu": "3900m", "memory": "7Gi", "pods": "110"},
                             "labels": {"topology.kubernetes.io/zone": "a",
                                        "node.kubernetes.io/instance-type": "m5.xlarge"}}]
    assert [p["name"] for p in doc["policies"]][0] == "as is"
    web, db = doc["workloads"]
    spec = web["manifest"]["spec"]["template"]["spec"]
    assert spec["volumes"] == [{"name": "conf", "emptyDir": {}}] and "serviceAccountName" not in spec
    assert "volumeClaimTemplates" not in db["manifest"]["spec"]
    assert db["existingVpa"]["metadata"]["name"] == "db-vpa"
    assert db["recorded"]["oom_kills"] == 2 and db["recorded"]["restarts"] == 2
    assert web["recorded"]["cpu_cores_mean"] == pytest.approx(expected["web"]["cpu_cores_mean"], rel=1e-6)
    trace = read_history(out / db["history"])
    assert trace.slots == 2 and trace.containers == ["postgres"]
    assert np.flatnonzero(trace.oom["postgres"][1]).tolist() == [20, 50]
    assert trace.oom["postgres"][1][20] == 300 * MI                         # the template's limit at the kill
    web_trace = read_history(out / web["history"])
    assert web_trace.slots == 2                                            # four pods, two at a time
    warnings = result.warnings
    assert "from the source" in warnings
    assert any(w.startswith("pod shop/batch-x9: no workload") for w in warnings)
    assert any("ConfigMap shop/web" in w for w in snap.warnings)
    assert (out / WARNINGS_FILE).read_text().splitlines() == warnings
    assert "TOKEN" in (out / SCENARIO_FILE).read_text() and "secretKeyRef" not in (out / SCENARIO_FILE).read_text()


def test_as_is_replay_reproduces_the_recorded_history(tmp_path):
    history, expected = recorded()
    snap = parse_snapshot(snapshot_text(), "cluster.yaml")
    import_scenario(snap.objects, history, tmp_path / "imported")
    scn = load_scenario(tmp_path / "imported" / SCENARIO_FILE)
    assert scn.start == START and scn.duration == STEPS * STEP and scn.node_count == 2
    as_is = next(p for p in scn.policies if p.name == "as is")
    run = run_policy(scn, as_is)
    fidelity = {e["workload"]: e for e in replay_fidelity(scn, [run])}
    for name, want in expected.items():
        got = fidelity[name]["replayed"]
        assert got["cpu_cores_mean"] == pytest.approx(want["cpu_cores_mean"], rel=0.05), name
        assert got["memory_bytes_mean"] == pytest.approx(want["memory_bytes_mean"], rel=0.05), name
        assert abs(got["oom_kills"] - want["oom_kills"]) <= 1, name
        assert fidelity[name]["within"]
    assert fidelity["db"]["replayed"]["oom_kills"] == 2           # each recorded peak kills once


def test_bad_inputs_change_nothing(tmp_path):
    history, _ = recorded()
    snap = parse_snapshot(snapshot_text(), "cluster.yaml")
    out = tmp_path / "imported"
    out.mkdir()
    (out / "mine.txt").write_text("keep me")
    with pytest.raises(ScenarioImportError, match="not empty"):
        import_scenario(snap.objects, history, out)
    assert [p.name for p in out.iterdir()] == ["mine.txt"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["imported"]     # no temporary left behind
    no_nodes = {k: v for k, v in snap.objects.items() if k != "Node"}
    with pytest.raises(ScenarioImportError, match="no Nodes"):
        import_scenario(no_nodes, history, tmp_path / "other")
    assert not (tmp_path / "other").exists()
    import_scenario(snap.objects, history, out, force=True)
    assert (out / SCENARIO_FILE).exists() and not (out / "mine.txt").exists()


@pytest.mark.parametrize("pod, owner, expected", [
    ("web-5d8f7c9b-x2b9q", None, ("Deployment", "web")),
    ("web-api-5d8f7c9b-x2b9q", None, ("Deployment", "web-api")),       # the longest name wins
    ("db-3", None, ("StatefulSet", "db")),
    ("report-29012345-k4m7p", None, ("CronJob", "report")),
    ("migrate-k4m7p", None, ("Job", "migrate")),
    ("node-exporter-z8xq2", None, ("DaemonSet", "node-exporter")),
    ("debug", None, ("Pod", "debug")),
    ("web-0", None, None),                                             # not a name a Deployment gives
    ("web-6c8b7d9f4e-abcde", ("ReplicaSet", "web-6c8b7d9f4e"), ("Deployment", "web")),   # an old ReplicaSet
    ("report-29012345-k4m7p", ("Job", "report-29012345"), ("CronJob", "report")),
    ("kube-apiserver-node-1", ("Node", "node-1"), None),                 # a static pod
])
def test_owners_from_the_source_or_from_names(pod, owner, expected):
    from kvert.sim.import_cluster import ImportedWorkload
    from kvert.sim.import_usage import _Owners
    workloads = [ImportedWorkload(kind, "ns", name, {}) for kind, name in (
        ("Deployment", "web"), ("Deployment", "web-api"), ("StatefulSet", "db"), ("CronJob", "report"),
        ("Job", "migrate"), ("DaemonSet", "node-exporter"), ("Pod", "debug"))]
    found = _Owners(workloads).find("ns", pod, *(owner or (None, None)))
    assert (None if found is None else (found.kind, found.name)) == expected
