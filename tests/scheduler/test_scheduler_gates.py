"""The scheduler's feature gates (kube-scheduler's --feature-gates): the default profile per
gate (``getDefaultPlugins`` + ``applyFeatureGates``, 1.36), PodLevelResources in the fit
(component-helpers ``PodRequests`` with ``SkipPodLevelResources = !PodLevelResources``), and
a gated pod never scheduled, its PodScheduled condition left as the API server wrote it."""

from __future__ import annotations

import asyncio

import pytest

from kvert.api.features import FeatureGateError
from kvert.cli.main import main as kvert_main
from kvert.scheduler import Scheduler
from kvert.scheduler.offline import schedule_snapshot

from .helpers import Cluster, condition, node, pod


def default_filter_plugins(gates: dict) -> list[str]:
    c = Cluster()
    s = Scheduler(c.client, c.clock, gates=gates)
    c.store.close()
    return [p.name for p in s.frameworks["default-scheduler"].points["filter"]]


def test_node_declared_features_follows_its_gate():
    assert default_filter_plugins({})[-1] == "NodeDeclaredFeatures"
    assert "NodeDeclaredFeatures" not in default_filter_plugins({"NodeDeclaredFeatures": False})


def test_resize_preemption_gate_adds_deferred_pod_scheduling():
    names = default_filter_plugins({"InPlacePodVerticalScalingSchedulerPreemption": True})
    assert names[:4] == ["NodeUnschedulable", "NodeName", "DeferredPodScheduling", "TaintToleration"]
    assert "DeferredPodScheduling" not in default_filter_plugins({})


def test_unknown_gate_is_refused():
    c = Cluster()
    with pytest.raises(FeatureGateError, match="unrecognized feature gate: Nope"):
        Scheduler(c.client, c.clock, gates={"Nope": True})
    c.store.close()


def pod_level(name: str) -> dict:
    """Containers asking 100m + 50m; pod-level requests of 200m (KEP-2837: they replace the
    containers' sum)."""
    p = pod(name, containers=[
        {"name": "c1", "image": "pause", "resources": {"requests": {"cpu": "100m"}}},
        {"name": "c2", "image": "pause", "resources": {"requests": {"cpu": "50m"}}}])
    p["spec"]["resources"] = {"requests": {"cpu": "200m"}}
    return p


@pytest.mark.parametrize("gates,placed", [
    ({}, None),                                  # 200m (pod level) > 180m
    ({"PodLevelResources": False}, "n1"),         # 150m (containers' sum) fits
])
def test_pod_level_requests_count_only_with_the_gate(gates, placed):
    """upstream: component-helpers TestPodRequests semantics (pod-level requests override the
    container aggregate when PodLevelResources is on; the HPA's 'Sum container requests if
    pod-level feature is disabled' = 150)."""
    report = schedule_snapshot([node("n1", cpu="180m"), pod_level("p")], gates=gates)
    [entry] = report["pods"]
    assert entry["node"] == placed


def test_schedule_cli_takes_feature_gates(tmp_path, capsys):
    import yaml
    snap = tmp_path / "cluster.yaml"
    snap.write_text(yaml.safe_dump_all([node("n1", cpu="180m"), pod_level("p")]))
    assert kvert_main(["schedule", str(snap), "-o", "json",
                       "--feature-gates", "PodLevelResources=false"]) == 0
    out = capsys.readouterr().out
    assert '"node": "n1"' in out
    assert kvert_main(["schedule", str(snap), "--feature-gates", "Bogus=true"]) == 2
    assert "unrecognized feature gate: Bogus" in capsys.readouterr().err


def test_gated_pod_is_never_scheduled_and_keeps_scheduling_gated():
    """upstream: test/integration/scheduler/queueing TestSchedulingGates -- a pod with
    scheduling gates is not scheduled; its PodScheduled condition stays False/SchedulingGated
    (written at creation by the API server) with no FailedScheduling event."""
    c = Cluster()

    async def main():
        await c.create_node(node("a", cpu="8"))
        s = Scheduler(c.client, c.clock, seed=1)
        task = asyncio.ensure_future(s.run())
        await s.synced.wait()
        await c.create_pod(pod("gated", cpu="1", schedulingGates=[{"name": "example.com/foo"}]))
        await c.settle(5)
        gated = await c.get_pod("gated")
        events = await c.events("gated")
        await s.wait_idle()
        s.stop()
        await task
        return gated, events

    gated, events = c.run(main)
    assert "nodeName" not in gated["spec"]
    cond = condition(gated)
    assert (cond["status"], cond["reason"], cond["message"]) == (
        "False", "SchedulingGated", "Scheduling is blocked due to non-empty scheduling gates")
    assert events == []


def test_scheduler_component_refuses_an_unknown_gate(capsys):
    """kvert scheduler --feature-gates: an unknown gate is an error before anything runs
    (kube-scheduler: "unrecognized feature gate: ...")."""
    code = kvert_main(["scheduler", "--kubeconfig", "/nonexistent", "--feature-gates", "Bogus=true"])
    assert code == 1
    assert "--feature-gates: unrecognized feature gate: Bogus" in capsys.readouterr().err
