"""An HPA and a VPA on one simulated workload (seed 002, "combining vertical and horizontal
scaling"): scenarios declare HPAs, the HPA controller reads pod metrics from the fleet, the
load of a ``sharedUsage`` workload is split among its running pods, and the conflicting
configuration (both on cpu) is reported.

Expected replica counts come from upstream's HPA algorithm
(https://kubernetes.io/docs/concepts/workloads/autoscaling/horizontal-pod-autoscale/#algorithm-details):
``desiredReplicas = ceil(currentReplicas * currentUtilization / targetUtilization)``, no
change within the 0.1 tolerance, scale-downs held for the 300 s downscale stabilization
window, and without ``behavior`` a scale-up limited to ``max(2 * currentReplicas, 4)`` per
sync (``normalizeDesiredReplicas``). With a workload's total cpu load ``L`` spread over ``n``
pods requesting ``r`` each, utilization is ``L / (n * r)``, so the HPA settles at
``ceil(L / (r * target))`` replicas whatever ``n`` it starts from.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from kvert.clock import VirtualClock
from kvert.cluster.fleetmetrics import FleetPodMetrics
from kvert.controllers.vpaconflict import CONFLICT, CONFLICT_REASON
from kvert.kubelet.runtime.base import ContainerConfig, ContainerResources, PodSandboxConfig
from kvert.kubelet.runtime.fleet import Fleet
from kvert.kubelet.runtime.sim import SimRuntime
from kvert.kubelet.usage import USAGE_ANNOTATION, parse_container_usage
from kvert.sim.engine import run_policy
from kvert.sim.load import SharedLoad, scale_usage
from kvert.sim.report import report_html, report_json
from kvert.sim.scenario import ScenarioError, parse_scenario

MI = 2**20
REQUEST_CPU = 500            # millicores per pod (the template's)
REQUEST_MEMORY = 2048 * MI
TARGET = 60                  # % of the cpu request
LOW, HIGH = 600, 3000        # the workload's total cpu load, millicores
HIGH_FROM, HIGH_UNTIL = 1800.0, 5400.0     # seconds after the start: [30 min, 90 min)


def expected_replicas(load: float) -> int:
    """Where the HPA settles: ceil(L / (r * target))."""
    return math.ceil(load / (REQUEST_CPU * TARGET / 100))


def doc(policies: list[dict], hours: float = 2, **workload) -> dict:
    web = {"name": "web", "replicas": 2, "sharedUsage": ["cpu"],
           "containers": [{"name": "app", "requests": {"cpu": f"{REQUEST_CPU}m", "memory": "2Gi"},
                           # the whole workload's cpu: LOW, HIGH during [30 min, 90 min) of every 2 h
                           "usage": {"cpu": {"profile": "spikes", "base": f"{LOW}m", "peak": f"{HIGH}m",
                                             "every": "2h", "duration": "1h", "offset": "30m"},
                                     "memory": "200Mi"}}],
           "hpa": {"minReplicas": 1, "maxReplicas": 12,
                   "metrics": [{"type": "Resource", "resource": {
                       "name": "cpu", "target": {"type": "Utilization", "averageUtilization": TARGET}}}]}}
    web.update(workload)
    return {"duration": f"{hours}h", "seed": 4, "tick": "15s", "sampleInterval": "60s",
            "nodes": {"count": 2, "capacity": {"cpu": "8", "memory": "32Gi"}},
            "workloads": [web], "policies": policies}


VPA_MEMORY = {"name": "HPA on cpu, VPA on memory",
              "vpa": {"updateMode": "InPlaceOrRecreate", "recommender": {"interval": "1m"},
                      "updater": {"interval": "1m"},
                      "spec": {"resourcePolicy": {"containerPolicies": [
                          {"containerName": "*", "controlledResources": ["memory"]}]}}}}
VPA_BOTH = {"name": "HPA and VPA on cpu",
            "vpa": {"updateMode": "InPlaceOrRecreate",
                    "spec": {"resourcePolicy": {"containerPolicies": [
                        {"containerName": "*", "controlledResources": ["cpu", "memory"]}]}}}}


@pytest.fixture(scope="module")
def runs():
    scn = parse_scenario(doc([{"name": "HPA only", "vpa": "none"}, VPA_MEMORY]))
    return scn, {p.name: run_policy(scn, p) for p in scn.policies}


def at(run, seconds: float, series: str) -> float:
    """The sample that ends at ``seconds`` after the start."""
    i = int(round(seconds / run.interval)) - 1
    return float(run.workloads["web"][series][i])


# -- the scenario -----------------------------------------------------------------------------------------

def test_a_workload_declares_an_hpa_on_its_deployment():
    scn = parse_scenario(doc([{"name": "none", "vpa": "none"}, {"name": "off", "vpa": "none", "hpa": "none"}]))
    w = scn.workloads[0]
    hpa = scn.hpa_object(w)
    assert hpa["apiVersion"] == "autoscaling/v2" and hpa["kind"] == "HorizontalPodAutoscaler"
    assert hpa["metadata"] == {"name": "web", "namespace": "default"}
    assert hpa["spec"]["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}
    assert hpa["spec"]["maxReplicas"] == 12 and hpa["spec"]["minReplicas"] == 1
    assert w.shared == ("cpu",)
    assert [p.hpa for p in scn.policies] == [True, False]


@pytest.mark.parametrize("hpa, message", [
    ({"minReplicas": 1}, "workloads[0].hpa.maxReplicas: required"),
    ({"maxReplicas": 3, "minReplicas": 0}, "workloads[0].hpa.minReplicas: Invalid value: 0: must be greater than "
                                           "or equal to 1"),
    ({"maxReplicas": 2, "minReplicas": 3}, "workloads[0].hpa.maxReplicas: Invalid value: 2: must be greater than "
                                           "or equal to `minReplicas`"),
    ({"maxReplicas": 3, "scaleTargetRef": {}}, "workloads[0].hpa: unknown field 'scaleTargetRef'"),
    ({"maxReplicas": 3, "metrics": [{"type": "Pods", "pods": {"metric": {"name": "qps"}, "target": {
        "type": "AverageValue", "averageValue": "10"}}}]},
     "workloads[0].hpa.metrics[0].type: the simulator serves only Resource and ContainerResource metrics"),
    ({"maxReplicas": 3, "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {
        "type": "Utilization"}}}]}, "workloads[0].hpa.metrics[0].resource.target.averageUtilization"),
    ({"maxReplicas": 3, "metrics": [{"type": "ContainerResource", "containerResource": {
        "name": "cpu", "container": "sidecar", "target": {"type": "Utilization", "averageUtilization": 50}}}]},
     "workloads[0].hpa.metrics[0].containerResource.container: no container 'sidecar'"),
    ({"maxReplicas": 3, "behavior": {"scaleDown": {"stabilizationWindowSeconds": 7200}}},
     "workloads[0].hpa.behavior.scaleDown.stabilizationWindowSeconds"),
])
def test_hpa_errors_name_the_field(hpa, message):
    with pytest.raises(ScenarioError) as e:
        parse_scenario(doc([{"name": "none"}], hpa=hpa))
    assert str(e.value).startswith(message), str(e.value)


def test_a_utilization_target_needs_the_request():
    containers = [{"name": "app", "requests": {"memory": "64Mi"}}]
    with pytest.raises(ScenarioError, match=r"^workloads\[0\]\.hpa \(the default metric, cpu Utilization 80\): "
                                            r"a cpu Utilization target needs a cpu request in every container"):
        parse_scenario(doc([{"name": "none"}], containers=containers, hpa={"maxReplicas": 3}))
    bad = [{"name": "x", "hpa": "sometimes"}]
    with pytest.raises(ScenarioError, match=r"^policies\[0\]\.hpa: expected none"):
        parse_scenario(doc(bad))
    with pytest.raises(ScenarioError, match=r"^workloads\[0\]\.sharedUsage: expected a list of cpu and memory"):
        parse_scenario(doc([{"name": "none"}], sharedUsage=["disk"]))


# -- the pieces -------------------------------------------------------------------------------------------

def test_pod_metrics_from_the_fleet_with_the_pods_labels_and_a_window_of_whole_ticks():
    clock = VirtualClock()
    pods = {("ns", "pod-0"): {"metadata": {"name": "pod-0", "namespace": "ns", "uid": "u0", "labels": {"app": "web"}},
                              "spec": {"containers": [{"name": "app"}]}}}

    class Pods:
        def get(self, name, namespace=""):
            return pods.get((namespace, name))

    async def main():
        fleet = Fleet(clock, tick=15)
        runtime = SimRuntime(clock, name="n1", fleet=fleet)
        for i in range(2):      # pod-1 is not known to the API (left out)
            sandbox = await runtime.run_pod_sandbox(PodSandboxConfig(uid=f"u{i}", namespace="ns", name=f"pod-{i}"))
            cid = await runtime.create_container(sandbox, ContainerConfig("app", "img", ContainerResources()))
            await runtime.start_container(cid)
            runtime.set_usage(cid, cpu="250m", memory="100Mi")
        metrics = FleetPodMetrics(fleet, Pods(), resolution=30)
        assert metrics.pod_metrics("ns") == []                 # one scrape: no rate yet
        await clock.sleep(20)
        assert metrics.pod_metrics("ns") == [] and metrics.scrapes == 1      # within the resolution
        await clock.sleep(25)
        items = metrics.pod_metrics("ns")
        assert metrics.scrapes == 2
        assert [m["metadata"]["name"] for m in items] == ["pod-0"]
        assert items[0]["metadata"]["labels"] == {"app": "web"}
        assert items[0]["window"] == "45s"                    # ticks 15..45 after the first scrape at 0
        assert items[0]["containers"] == [{"name": "app", "usage": {"cpu": "250m", "memory": "100Mi"}}]
        assert metrics.pod_metrics("other") == []

    clock.run(main())


def test_shared_load_splits_the_declared_profile_among_running_pods():
    usage = parse_container_usage({"cpu": {"profile": "diurnal", "min": "1", "max": "4", "noise": 0.1},
                                   "memory": "64Mi"}, "app")
    half = scale_usage(usage, ("cpu",), 0.5)
    assert (half.cpu.min, half.cpu.max, half.cpu.noise) == (500.0, 2000.0, 0.1)
    assert half.memory == usage.memory
    clock = VirtualClock()
    annotation = '{"cpu": "3", "memory": "64Mi"}'

    async def main():
        fleet = Fleet(clock, tick=10)
        nodes = [SimRuntime(clock, name=f"n{i}", fleet=fleet) for i in range(2)]
        workload_of_pod = {}
        load = SharedLoad(fleet, {"web": ("cpu",)}, workload_of_pod)

        async def start(i):
            workload_of_pod[("ns", f"web-{i}")] = "web"
            runtime = nodes[i % 2]
            sandbox = await runtime.run_pod_sandbox(PodSandboxConfig(uid=f"u{i}", namespace="ns", name=f"web-{i}"))
            config = ContainerConfig("app", "img", ContainerResources(), annotations={USAGE_ANNOTATION: annotation})
            cid = await runtime.create_container(sandbox, config)
            await runtime.start_container(cid)
            return runtime, cid

        started = [await start(i) for i in range(2)]
        load.balance()
        fleet.advance()
        before = fleet.rows.cpu_ns[fleet.running()].copy()
        await clock.sleep(100)
        fleet.advance()
        used = (fleet.rows.cpu_ns[fleet.running()] - before) / 100 / 1e6      # millicores
        assert used.tolist() == pytest.approx([1500, 1500])
        started.append(await start(2))
        load.balance()
        before = fleet.rows.cpu_ns[fleet.running()].copy()
        await clock.sleep(100)
        fleet.advance()
        used = (fleet.rows.cpu_ns[fleet.running()] - before) / 100 / 1e6
        assert used.tolist() == pytest.approx([1000, 1000, 1000])           # the same 3 cores, over 3 pods
        runtime, cid = started[0]
        await runtime.stop_container(cid)
        load.balance()
        before = fleet.rows.cpu_ns[fleet.running()].copy()
        await clock.sleep(100)
        fleet.advance()
        used = (fleet.rows.cpu_ns[fleet.running()] - before) / 100 / 1e6
        assert used.tolist() == pytest.approx([1500, 1500])

    clock.run(main())


# -- simulations --------------------------------------------------------------------------------------------

def test_the_hpa_scales_up_with_the_load_and_back_down(runs):
    _, by_policy = runs
    run = by_policy["HPA only"]
    low, high = expected_replicas(LOW), expected_replicas(HIGH)
    assert (low, high) == (2, 10)
    rescales = run.hpa["web"]["rescales"]
    # up from 2 when the load rises, by at most max(2 * current, 4) per sync: 2 -> 4 -> 8 -> 10
    assert [(r["from"], r["to"]) for r in rescales[:3]] == [(2, 4), (4, 8), (8, 10)]
    assert HIGH_FROM <= rescales[0]["time"] < HIGH_FROM + 60
    # down to 2 once the load fell and the 300 s stabilization window passed
    assert (rescales[-1]["from"], rescales[-1]["to"]) == (10, 2)
    assert HIGH_UNTIL + 300 <= rescales[-1]["time"] <= HIGH_UNTIL + 300 + 60
    assert len(rescales) == 4
    assert at(run, HIGH_FROM - 60, "replicas") == low
    assert at(run, HIGH_UNTIL - 60, "replicas") == high and at(run, HIGH_UNTIL - 60, "pods_running") == high
    assert at(run, 7200, "replicas") == low and at(run, 7200, "pods_running") == low
    # the load is the workload's, whatever the number of pods
    assert at(run, HIGH_UNTIL - 60, "cpu_use") == pytest.approx(HIGH, rel=0.01)
    assert at(run, 7200, "cpu_use") == pytest.approx(LOW, rel=0.01)
    status = run.hpa["web"]["status"]
    # 2 pods at 300m of 500m each: 60 %, within the tolerance of the target
    assert status["currentReplicas"] == status["desiredReplicas"] == low
    utilization = status["currentMetrics"][0]["resource"]["current"]["averageUtilization"]
    assert 59 <= utilization <= 60
    assert not any(c["type"] == CONFLICT for c in status["conditions"])
    # a scale-down deletes pods; that is no eviction
    assert run.counters["web"]["evictions"] == 0
    assert run.hpa["web"]["pods_deleted_by_scale_down"] == high - low


def test_with_the_vpa_on_memory_only_cpu_requests_stay_and_replicas_follow_the_load(runs):
    _, by_policy = runs
    run = by_policy["HPA on cpu, VPA on memory"]
    s = run.workloads["web"]
    running = s["pods_running"] > 0
    per_pod_cpu = s["cpu_request"][running] / s["pods_running"][running]
    assert np.all(per_pod_cpu == REQUEST_CPU)                  # the template's, at every sample
    # the same replicas as without the VPA: its memory requests do not move the HPA
    assert at(run, HIGH_FROM - 60, "replicas") == expected_replicas(LOW)
    assert at(run, HIGH_UNTIL - 60, "replicas") == expected_replicas(HIGH)
    assert at(run, 7200, "replicas") == expected_replicas(LOW)
    # the VPA sized memory: pods created after its first recommendation ask for far less than 2Gi
    per_pod_memory = s["memory_request"][running] / s["pods_running"][running]
    assert per_pod_memory.min() < REQUEST_MEMORY / 2
    assert run.vpa_recommendations["web"]["containerRecommendations"][0]["target"].keys() == {"memory"}
    assert not any(c["type"] == CONFLICT for c in run.hpa["web"]["status"]["conditions"])


def test_an_hpa_and_a_vpa_both_on_cpu_are_reported_and_hpa_none_leaves_it_out():
    scn = parse_scenario(doc([VPA_BOTH, {"name": "VPA alone", "vpa": VPA_BOTH["vpa"], "hpa": "none"}], hours=0.25))
    both = run_policy(scn, scn.policies[0])
    condition = next(c for c in both.hpa["web"]["status"]["conditions"] if c["type"] == CONFLICT)
    assert condition["status"] == "True" and condition["reason"] == CONFLICT_REASON
    assert condition["message"].startswith("VerticalPodAutoscaler web also sets the cpu requests of Deployment/web")
    doc_ = report_json(scn, [both])
    assert doc_["results"][0]["hpa"]["web"]["status"]["conditions"]
    page = report_html(doc_)
    assert "Horizontal scaling of web" in page and CONFLICT in page
    alone = run_policy(scn, scn.policies[1])
    assert alone.hpa == {}
    assert np.all(alone.workloads["web"]["replicas"] == 2)


def test_the_example_compares_the_hpa_alone_with_a_vpa_on_memory_and_on_both():
    from pathlib import Path

    from kvert.sim.scenario import load_scenario
    scn = load_scenario(Path(__file__).parents[2] / "examples" / "scenarios" / "hpa-vpa.yaml")
    web = scn.workloads[0]
    assert web.shared == ("cpu",) and web.hpa["maxReplicas"] == 20
    # 1 to 6 cores over the day, 60 % of 500m: ceil(L / 300m) = 4 at midnight, 20 at noon
    assert [math.ceil(load / 300) for load in (1000, 6000)] == [4, 20]
    names = [p.name for p in scn.policies]
    assert names == ["HPA only", "HPA on cpu, VPA on memory", "HPA and VPA both on cpu"]
    scn.duration = 1200.0
    conflicts = {}
    for policy in scn.policies:
        run = run_policy(scn, policy)
        status = run.hpa["web"]["status"]
        conflicts[policy.name] = any(c["type"] == CONFLICT and c["status"] == "True" for c in status["conditions"])
        if policy.name == "HPA and VPA both on cpu":
            # as upstream, the VPA's first recommendation comes before the pods' first CPU sample
            # (the pod minimum, raised to minAllowed 100m), and the conflict's climb starts there
            assert at(run, 1200, "replicas") >= 4
        else:
            assert at(run, 1200, "replicas") == 4           # midnight's load
    assert conflicts == {"HPA only": False, "HPA on cpu, VPA on memory": False, "HPA and VPA both on cpu": True}
