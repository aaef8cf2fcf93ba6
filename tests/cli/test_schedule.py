"""``kvert schedule``: a cluster snapshot's pending pods, scheduled offline."""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
from pathlib import Path

import yaml

from kvert.cli.main import main


def node(name, cpu="4", memory="8Gi", **extra):
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "spec": extra.get("spec", {}),
            "status": {"allocatable": {"cpu": cpu, "memory": memory, "pods": "110"}}}


def pod(name, cpu="1", *, ns="default", node_name="", created=None, **spec):
    meta = {"name": name, "namespace": ns}
    if created:
        meta["creationTimestamp"] = created
    s = {"containers": [{"name": "c", "image": "nginx",
                         "resources": {"requests": {"cpu": cpu}}}], **spec}
    if node_name:
        s["nodeName"] = node_name
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": s}


def run(tmp: Path, objects, *args, as_list=True) -> tuple[int, str, str]:
    f = tmp / "cluster.yaml"
    if as_list:
        f.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": objects}))
    else:
        f.write_text(yaml.safe_dump_all(objects))
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["schedule", str(f), *args])
    return code, out.getvalue(), err.getvalue()


def report(tmp, objects, *args, **kw) -> dict:
    code, out, err = run(tmp, objects, "-o", "json", *args, **kw)
    assert code == 0, err
    return {f"{p['namespace']}/{p['name']}": p for p in json.loads(out)["pods"]}


def test_pods_are_scheduled_in_queue_order_each_seeing_the_earlier_ones(tmp_path):
    # one node with 4 cpus, 1.5 already used: of three 1-cpu pods, the two first in queue
    # order fit (higher priority first, then the older one), the youngest does not
    objects = [node("n1"), pod("running", "1500m", node_name="n1"),
               pod("young", created="2026-01-01T00:00:10Z"),
               pod("old", created="2026-01-01T00:00:00Z"),
               pod("urgent", created="2026-01-01T00:00:20Z", priority=1000)]
    r = report(tmp_path, objects)
    assert list(r) == ["default/urgent", "default/old", "default/young"]
    assert r["default/urgent"]["node"] == r["default/old"]["node"] == "n1"
    young = r["default/young"]
    assert young["node"] is None
    assert young["filtered"] == {"n1": ["Insufficient cpu"]}
    assert young["message"].startswith("0/1 nodes are available: 1 Insufficient cpu.")
    assert "running" not in json.dumps(r)   # bound pods are not reported


def test_a_yaml_stream_works_like_a_list_and_bound_terminal_pods_free_their_node(tmp_path):
    done = pod("done", "4", node_name="n1")
    done["status"] = {"phase": "Succeeded"}
    r = report(tmp_path, [node("n1"), done, pod("p", "4")], as_list=False)
    assert r["default/p"]["node"] == "n1"


def test_scores_are_per_plugin_before_weights_and_totals_are_weighted(tmp_path):
    r = report(tmp_path, [node("small", cpu="2"), node("big", cpu="8"), pod("p", "1")])
    p = r["default/p"]
    assert p["node"] == "big" and set(p["scores"]) == {"small", "big"}
    # LeastAllocated on cpu and memory with the 200Mi non-zero memory default:
    # big: ((8000-1000)*100/8000 + (8Gi-200Mi)*100/8Gi) / 2 = (87 + 97) / 2 = 92
    assert p["scores"]["big"]["NodeResourcesFit"] == 92
    weights = {"TaintToleration": 3, "NodeResourcesFit": 1, "NodeResourcesBalancedAllocation": 1,
               "PodTopologySpread": 2, "InterPodAffinity": 2, "ImageLocality": 1, "NodeAffinity": 2}
    for n, scores in p["scores"].items():
        assert p["totals"][n] == sum(s * weights[k] for k, s in scores.items())


def test_priority_classes_resolve_priority_and_the_global_default(tmp_path):
    high = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
            "metadata": {"name": "high"}, "value": 100}
    default = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
               "metadata": {"name": "std"}, "value": 10, "globalDefault": True}
    objects = [node("n1", cpu="1"), high, default,
               pod("plain", created="2026-01-01T00:00:00Z"),
               pod("important", created="2026-01-01T00:01:00Z", priorityClassName="high")]
    r = report(tmp_path, objects)
    assert list(r) == ["default/important", "default/plain"]
    assert r["default/important"]["node"] == "n1" and r["default/plain"]["node"] is None


def test_gated_pods_stay_pending_unattempted(tmp_path):
    r = report(tmp_path, [node("n1"), pod("g", schedulingGates=[{"name": "example.com/wait"}])])
    assert r["default/g"]["node"] is None
    assert r["default/g"]["message"] == "Scheduling is blocked due to non-empty scheduling gates"
    assert r["default/g"]["filtered"] == {}


def test_a_configuration_changes_the_scoring(tmp_path):
    cfg = tmp_path / "sched.yaml"
    cfg.write_text(yaml.safe_dump({
        "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "default-scheduler", "pluginConfig": [{
            "name": "NodeResourcesFit",
            "args": {"scoringStrategy": {"type": "MostAllocated"}}}]}]}))
    r = report(tmp_path, [node("small", cpu="2"), node("big", cpu="8"), pod("p", "1")],
               "--config", str(cfg))
    assert r["default/p"]["node"] == "small"


def test_bad_input_names_the_problem_and_exits_2(tmp_path):
    code, out, err = run(tmp_path, [node("n1"), pod("p", priorityClassName="nope")])
    assert code == 2 and out == ""
    assert "spec.priorityClassName" in err and "nope" in err
    code, _, err = run(tmp_path, [node("n1"), node("n1")])
    assert code == 2 and "Duplicate value" in err
    (tmp_path / "bad.yaml").write_text("kind: [")
    code = main(["schedule", str(tmp_path / "bad.yaml")])
    assert code == 2
    cfg = tmp_path / "c.yaml"
    cfg.write_text("profiles: [{plugins: {score: {enabled: [{name: NoSuchPlugin}]}}}]")
    code, _, err = run(tmp_path, [node("n1")], "--config", str(cfg))
    assert code == 2 and "NoSuchPlugin" in err


def test_table_output_for_a_person(tmp_path):
    code, out, _ = run(tmp_path, [node("n1", cpu="2"), node("n2", cpu="8"), node("n3", cpu="6"),
                                  pod("p", "4")], "-o", "table")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "default/p -> n2"
    assert "n1: Insufficient cpu" in out
    assert any(line.split()[:1] == ["NODE"] and "TOTAL" in line for line in lines)


def test_the_installed_command_runs(tmp_path):
    f = tmp_path / "c.yaml"
    f.write_text(yaml.safe_dump_all([node("n1"), pod("p")]))
    out = subprocess.run([sys.executable, "-m", "kvert.cli.main", "schedule", str(f), "-o", "json"],
                         capture_output=True, text=True, check=True).stdout
    assert json.loads(out)["pods"][0]["node"] == "n1"


def test_the_documented_example(tmp_path):
    """examples/scheduling/cluster.yaml, as the README describes it."""
    example = Path(__file__).parents[2] / "examples" / "scheduling" / "cluster.yaml"
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["schedule", str(example), "-o", "json"]) == 0
    r = {p["name"]: p for p in json.loads(out.getvalue())["pods"]}
    # priority first: payments-0 (1000), then by age web-3, cache-0; batch-0 (-10) last
    assert list(r) == ["payments-0", "web-3", "cache-0", "batch-0"]
    # every node is short of cpu; node-c's only possible victim is budget-protected, node-a
    # and node-b each lose one priority-0 report pod: the one that started later goes
    pay = r["payments-0"]
    assert (pay["nominatedNode"], pay["victims"], pay["node"]) == ("node-b", ["shop/report-b"], "node-b")
    assert pay["message"] == "0/3 nodes are available: 3 Insufficient cpu."
    # two web pods in zone-1, none in zone-2: maxSkew 1 leaves zone-2 only
    assert r["web-3"]["node"] == "node-c"
    assert r["web-3"]["filtered"] == {
        n: ["node(s) didn't match pod topology spread constraints"] for n in ("node-a", "node-b")}
    assert r["cache-0"]["filtered"] == {"node-c": ["node(s) didn't match pod anti-affinity rules"]}
    assert r["cache-0"]["node"] in ("node-a", "node-b")
    assert r["batch-0"]["node"] is None
    assert r["batch-0"]["message"] == ("0/3 nodes are available: 3 Insufficient cpu. preemption: "
                                       "not eligible due to preemptionPolicy=Never.")


def test_kvert_up_refuses_a_bad_scheduler_config_naming_the_field(tmp_path, capsys):
    import pytest
    cfg = tmp_path / "sched.yaml"
    cfg.write_text("profiles: [{pluginConfig: [{name: InterPodAffinity, "
                   "args: {hardPodAffinityWeight: 500}}]}]")
    with pytest.raises(SystemExit) as info:
        main(["up", "--data-dir", str(tmp_path / "d"), "--port", "0", "--scheduler-config", str(cfg)])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "--scheduler-config" in err and "hardPodAffinityWeight" in err


def test_kubectl_outputs_appended_to_one_file_are_all_read(tmp_path):
    """``kubectl get nodes -o yaml > f; kubectl get pods -A -o yaml >> f``: two Lists with no
    ``---`` between them (YAML alone would keep only the second's items)."""
    from kvert.scheduler.offline import parse_objects
    nodes = yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}]})
    pods = yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p1", "namespace": "default"}}]})
    assert [o["kind"] for o in parse_objects(nodes + pods, "f")] == ["Node", "Pod"]
