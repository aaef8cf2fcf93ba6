"""CPU startup boost (upstream VPA 1.7-1.8, behind CPUStartupBoost): the admission controller
raising a new pod's CPU (``mutate_pod`` and the in-process plugin), and the updater taking the
boost back once it expired (``Updater.run_once`` on hand-made pods; see
test_startup_boost_live for the whole cycle on simulated nodes)."""

from __future__ import annotations

import asyncio
import copy
import json

import pytest

from kvert.api.meta import format_time
from kvert.api.quantity import Quantity
from kvert.registry.admission import Attributes
from kvert.vpa.admission import BoostError, VpaAdmissionPlugin, apply_patch, mutate_pod
from kvert.vpa.features import VpaGates
from kvert.vpa.instruments import UpdaterMetrics
from kvert.vpa.updater import Updater

from tests.vpa.test_admission import cluster as fake_cluster
from tests.vpa.test_upstream_updater_inplace import NS, World, run, sample

BOOST_ON = VpaGates.parse("CPUStartupBoost=true")


def boost(kind: str, value: object, duration: int | None = 10) -> dict:
    cpu: dict = {"type": kind}
    if value is not None:
        cpu["factor" if kind != "Quantity" else "quantity"] = value
    if duration is not None:
        cpu["durationSeconds"] = duration
    return {"cpu": cpu}


def vpa(*, startup_boost: dict | None = None, target: dict | None = None, policies: list | None = None,
        mode: str = "Recreate") -> dict:
    spec: dict = {"targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "hamster"},
                  "updatePolicy": {"updateMode": mode}}
    if startup_boost is not None:
        spec["startupBoost"] = startup_boost
    if policies:
        spec["resourcePolicy"] = {"containerPolicies": policies}
    obj = {"apiVersion": "autoscaling.k8s.io/v1", "kind": "VerticalPodAutoscaler",
           "metadata": {"name": "name", "namespace": "default", "creationTimestamp": "2024-05-01T00:00:00Z"},
           "spec": spec}
    if target is not None:
        obj["status"] = {"recommendation": {"containerRecommendations": [
            {"containerName": "container1", "target": target, "lowerBound": target, "upperBound": target,
             "uncappedTarget": target}]}}
    return obj


def pod(requests: dict, limits: dict | None = None) -> dict:
    resources = {"requests": requests}
    if limits is not None:
        resources["limits"] = limits
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
            "spec": {"containers": [{"name": "container1", "image": "x", "resources": resources}]}}


def admitted(p: dict, v: dict, *, gates: VpaGates = BOOST_ON, max_boost: str | None = None) -> tuple[dict, list]:
    ops, *_ = mutate_pod(p, [v], gates=gates,
                         max_allowed_cpu_boost=Quantity.parse(max_boost) if max_boost else None)
    out = copy.deepcopy(p)
    apply_patch(out, ops)
    return out, ops


def resources(p: dict) -> dict:
    return p["spec"]["containers"][0]["resources"]


def annotations(p: dict) -> dict:
    return p["metadata"].get("annotations") or {}


FACTOR2, FACTOR3 = boost("Factor", 2), boost("Factor", 3)

# upstream: TestCalculatePatches_StartupBoost (pkg/admission-controller/resource/pod/patch/
# resource_updates_test.go); the fake recommendation provider's requests are the VPA's target
# here, its limits what GetProportionalLimit gives for them
CASES = [
    ("startup boost factor", pod({"cpu": "1m"}, {"cpu": "1m"}), vpa(startup_boost=FACTOR2, target={"cpu": "100m"}),
     None, {"requests": {"cpu": "200m"}, "limits": {"cpu": "200m"}}, '{"requests":{"cpu":"1m"},"limits":{"cpu":"1m"}}',
     "cpu request, cpu limit"),
    ("startup boost factor with 0s duration", pod({"cpu": "1m"}, {"cpu": "1m"}),
     vpa(startup_boost=boost("Factor", 2, 0), target={"cpu": "100m"}), None,
     {"requests": {"cpu": "200m"}, "limits": {"cpu": "200m"}}, '{"requests":{"cpu":"1m"},"limits":{"cpu":"1m"}}',
     "cpu request, cpu limit"),
    ("startup boost quantity", pod({"cpu": "1m"}, {"cpu": "1m"}),
     vpa(startup_boost=boost("Quantity", "500m"), target={"cpu": "100m"}), None,
     {"requests": {"cpu": "600m"}, "limits": {"cpu": "600m"}}, '{"requests":{"cpu":"1m"},"limits":{"cpu":"1m"}}',
     "cpu request, cpu limit"),
    ("quantity less than request", pod({"cpu": "400m"}, {"cpu": "400m"}),
     vpa(startup_boost=boost("Quantity", "200m"), target={"cpu": "500m"}), None,
     {"requests": {"cpu": "700m"}, "limits": {"cpu": "700m"}}, '{"requests":{"cpu":"400m"},"limits":{"cpu":"400m"}}',
     "cpu request, cpu limit"),
    ("startup boost capped", pod({"cpu": "1m"}, {"cpu": "1m"}),
     vpa(startup_boost=boost("Factor", 3, 1), target={"cpu": "20m"}), "40m",
     {"requests": {"cpu": "40m"}, "limits": {"cpu": "40m"}}, '{"requests":{"cpu":"1m"},"limits":{"cpu":"1m"}}',
     "cpu request, cpu limit"),
    ("startup boost no recommendation", pod({"cpu": "100m"}, {"cpu": "100m"}), vpa(startup_boost=FACTOR2), None,
     {"requests": {"cpu": "200m"}, "limits": {"cpu": "200m"}},
     '{"requests":{"cpu":"100m"},"limits":{"cpu":"100m"}}', "cpu request, cpu limit"),
    ("startup boost with ControlledValues=RequestsOnly", pod({"cpu": "100m"}, {"cpu": "300m"}),
     vpa(startup_boost=FACTOR2, target={"cpu": "100m"},
         policies=[{"containerName": "container1", "controlledValues": "RequestsOnly"}]), None,
     {"requests": {"cpu": "200m"}, "limits": {"cpu": "300m"}},
     '{"requests":{"cpu":"100m"},"limits":{"cpu":"300m"}}', "cpu request"),
    ("startup boost with RequestsOnly - capped below limit to preserve pod Qos", pod({"cpu": "100m"}, {"cpu": "150m"}),
     vpa(startup_boost=FACTOR2, target={"cpu": "100m"},
         policies=[{"containerName": "container1", "controlledValues": "RequestsOnly"}]), None,
     {"requests": {"cpu": "149m"}, "limits": {"cpu": "150m"}},
     '{"requests":{"cpu":"100m"},"limits":{"cpu":"150m"}}', "cpu request"),
    ("startup boost with ControlledValues=RequestsandLimits and limits set", pod({"cpu": "100m"}, {"cpu": "300m"}),
     vpa(startup_boost=FACTOR2, target={"cpu": "150m"},
         policies=[{"containerName": "container1", "controlledValues": "RequestsAndLimits"}]), None,
     {"requests": {"cpu": "300m"}, "limits": {"cpu": "900m"}},
     '{"requests":{"cpu":"100m"},"limits":{"cpu":"300m"}}', "cpu request, cpu limit"),
    ("startup boost with ControlledValues=RequestsandLimits and limits not set", pod({"cpu": "100m"}),
     vpa(startup_boost=FACTOR2, target={"cpu": "150m"},
         policies=[{"containerName": "container1", "controlledValues": "RequestsAndLimits"}]), None,
     {"requests": {"cpu": "300m"}}, '{"requests":{"cpu":"100m"},"limits":{}}', "cpu request"),
    ("startup boost container policy takes precedence", pod({"cpu": "1m"}, {"cpu": "1m"}),
     vpa(startup_boost=FACTOR2, target={"cpu": "100m"},
         policies=[{"containerName": "container1", "startupBoost": FACTOR3}]), None,
     {"requests": {"cpu": "300m"}, "limits": {"cpu": "300m"}}, '{"requests":{"cpu":"1m"},"limits":{"cpu":"1m"}}',
     "cpu request, cpu limit"),
]


@pytest.mark.parametrize("name,p,v,max_boost,expected,original,updates", CASES, ids=[c[0] for c in CASES])
def test_admission_boosts_cpu_as_upstream(name, p, v, max_boost, expected, original, updates):
    out, ops = admitted(p, v, max_boost=max_boost)
    assert resources(out) == expected
    assert annotations(out)["vpaCpuStartupBoost/container1"] == original
    assert annotations(out)["vpaUpdates"] == f"Pod resources updated by name: container 0: {updates}"
    # upstream's escaped JSONPatch path for the annotation (cc3bc92fec)
    assert {"op": "add", "path": "/metadata/annotations/vpaCpuStartupBoost~1container1", "value": original} in ops


def test_boost_needs_its_gate():
    # upstream: TestCalculatePatches_StartupBoost "feature gate disabled": the recommendation only
    out, _ = admitted(pod({"cpu": "100m"}), vpa(startup_boost=FACTOR2, target={"cpu": "100m"}), gates=VpaGates())
    assert resources(out) == {"requests": {"cpu": "100m"}}
    assert "vpaCpuStartupBoost/container1" not in annotations(out)
    assert annotations(out)["vpaUpdates"] == "Pod resources updated by name: container 0: cpu request"


def test_no_boost_for_a_container_in_mode_off():
    # upstream: TestCalculatePatches_StartupBoost "startup boost with scaling mode off": no patch
    v = vpa(startup_boost=FACTOR2, target={"cpu": "1"}, policies=[{"containerName": "container1", "mode": "Off"}])
    assert mutate_pod(pod({"cpu": "100m"}), [v], gates=BOOST_ON)[0] == []


def test_a_boost_that_cannot_be_applied_admits_the_pod_unchanged():
    # upstream: TestCalculatePatches_StartupBoost "invalid factor" ("boost factor must be >= 1") and
    # "startup boost invalid type" ("unsupported startup boost type: Invalid"): CalculatePatches
    # fails, and the pod handler admits the pod without patches
    for b, message in ((boost("Factor", 0), "boost factor must be >= 1"),
                       (boost("Invalid", 2), "unsupported startup boost type: Invalid")):
        with pytest.raises(BoostError, match=message):
            mutate_pod(pod({"cpu": "1m"}), [vpa(startup_boost=b, target={"cpu": "100m"})], gates=BOOST_ON)
        v = vpa(startup_boost=b, target={"cpu": "100m"})
        client = fake_cluster(v)
        plugin = VpaAdmissionPlugin(client, gates=BOOST_ON)
        p = pod({"cpu": "1m"})
        p["metadata"]["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "hamster-abc",
                                             "uid": "u", "controller": True}]
        p["metadata"]["labels"] = {"app": "hamster"}
        before = copy.deepcopy(p)
        asyncio.run(plugin.admit(Attributes("CREATE", "pods", "default", "p", p)))
        assert p == before


def test_an_off_vpa_with_a_boost_still_boosts():
    # upstream: the matcher keeps an Off VPA that has a startupBoost, and resource_updates.go drops
    # its recommendation but applies the boost (AEP-7862 "Startup CPU Boost Enabled & VPA Disabled")
    out, _ = admitted(pod({"cpu": "100m"}), vpa(startup_boost=FACTOR3, target={"cpu": "1"}, mode="Off"))
    assert resources(out) == {"requests": {"cpu": "300m"}}
    assert annotations(out)["vpaCpuStartupBoost/container1"] == '{"requests":{"cpu":"100m"},"limits":{}}'
    assert mutate_pod(pod({"cpu": "100m"}), [vpa(startup_boost=FACTOR3, mode="Off")], gates=VpaGates())[2] is None


# -- the updater takes the boost back -------------------------------------------------------------

def ready(w: World, ago: float | None) -> list[dict]:
    if ago is None:
        return [{"type": "Ready", "status": "False"}]
    return [{"type": "Ready", "status": "True", "lastTransitionTime": format_time(w.clock.now() - ago)}]


def target_rec(*containers: str) -> dict:
    t = {"cpu": "2", "memory": "200M"}
    return {"containerRecommendations": [{"containerName": c, "target": t, "lowerBound": t, "upperBound": t,
                                          "uncappedTarget": t} for c in containers]}


def boosted_containers(*names: str) -> list[dict]:
    return [{"name": n, "image": "x", "resources": {"requests": {"cpu": "3", "memory": "200M"}}} for n in names]


ORIGINAL = json.dumps({"requests": {"cpu": "1", "memory": "200M"}, "limits": {}}, separators=(",", ":"))


def unboost(mode: str, ready_ago: float | None, spec_boost: dict | None, policies: list | None = None,
            containers: tuple[str, ...] = ("hamster",), pods: int = 1, gates: VpaGates = BOOST_ON,
            phase: str = "Running", conditions: list[dict] | None = None, recommendation: dict | None = None,
            **options) -> tuple[list[str], dict[str, dict], UpdaterMetrics]:
    """Pods the admission controller boosted (3 CPUs, annotations naming 1 CPU); what one pass does."""
    async def scenario(w: World):
        extra = {}
        if spec_boost is not None:
            extra["startupBoost"] = spec_boost
        if policies is not None:
            extra["resourcePolicy"] = {"containerPolicies": policies}
        await w.vpa(mode, recommendation if recommendation is not None else target_rec(*containers), **extra)
        for i in range(pods):
            await w.pod(f"p{i}", containers=boosted_containers(*containers), phase=phase,
                        conditions=(conditions or []) + ready(w, ready_ago),
                        annotations={f"vpaCpuStartupBoost/{c}": ORIGINAL for c in containers})
        metrics = UpdaterMetrics()
        result = await Updater(w.client, w.clock, gates=gates, metrics=metrics, min_replicas=1,
                               **options).run_once()
        return result.unboosted, await w.live(), metrics
    return run(scenario, replicas=pods)


def requests_of(pod: dict) -> dict[str, dict]:
    return {c["name"]: c["resources"]["requests"] for c in pod["spec"]["containers"]}


def boost_annotations(pod: dict) -> set[str]:
    return {k for k in (pod["metadata"].get("annotations") or {}) if k.startswith("vpaCpuStartupBoost/")}


def test_unboost_when_ready_without_a_duration():
    # upstream: TestGetExpiredStartupCPUBoostAnnotations "No duration in StartupBoost, with annotation
    # and pod ready" (expired at once: 1.8's reactive unboost) and "Pod not ready" (not yet)
    done, pods, _ = unboost("Recreate", 0, boost("Factor", 3, None))
    assert done == ["p0"] and requests_of(pods["p0"]) == {"hamster": {"cpu": "2", "memory": "200M"}}
    assert boost_annotations(pods["p0"]) == set()
    assert pods["p0"]["metadata"]["annotations"]["vpaInPlaceUpdated"] == "true"
    done, pods, _ = unboost("Recreate", None, boost("Factor", 3, None))
    assert done == [] and requests_of(pods["p0"]) == {"hamster": {"cpu": "3", "memory": "200M"}}


def test_unboost_after_the_duration_since_ready():
    # upstream: TestGetExpiredStartupCPUBoostAnnotations "Duration passed" (Ready 2 minutes ago,
    # 60 s) and "Duration not passed" (Ready now, 60 s)
    assert unboost("Recreate", 120, boost("Factor", 3, 60))[0] == ["p0"]
    assert unboost("Recreate", 0, boost("Factor", 3, 60))[0] == []


def test_container_durations_unboost_each_container_in_its_time():
    # upstream: TestGetExpiredStartupCPUBoostAnnotations "Container-level boost duration" (c1 180 s,
    # c2 60 s, Ready 2 minutes ago: c2 only), "... duration passed" (4 minutes: both) and "Pod-level
    # boost duration is higher" (the container's 180 s wins over the spec's 300 s)
    per_container = [{"containerName": "c1", "startupBoost": boost("Factor", 3, 180)},
                     {"containerName": "c2", "startupBoost": boost("Factor", 3, 60)}]
    done, pods, _ = unboost("Recreate", 120, None, per_container, containers=("c1", "c2"))
    assert done == ["p0"]
    assert requests_of(pods["p0"]) == {"c1": {"cpu": "3", "memory": "200M"}, "c2": {"cpu": "2", "memory": "200M"}}
    assert boost_annotations(pods["p0"]) == {"vpaCpuStartupBoost/c1"}
    _, pods, _ = unboost("Recreate", 240, None, per_container, containers=("c1", "c2"))
    assert boost_annotations(pods["p0"]) == set()
    _, pods, _ = unboost("Recreate", 240, boost("Factor", 3, 300), per_container, containers=("c1", "c2"))
    assert boost_annotations(pods["p0"]) == set()


def test_unboost_in_every_mode_in_place_and_never_by_eviction():
    # upstream: TestRunOnce_Mode "with Recreate mode and unboost", "with Auto mode and unboost",
    # "with InPlaceOrRecreate mode and unboost" (5 in-place, 0 evictions); with updateMode Off the
    # pod goes back to its own resources (AEP-7862: "revert the CPU resources to the values
    # specified in the pod spec")
    for mode in ("Recreate", "Auto", "InPlaceOrRecreate", "Initial"):
        done, pods, _ = unboost(mode, 0, boost("Factor", 3, None), pods=5, eviction_tolerance=1.0)
        assert sorted(done) == [f"p{i}" for i in range(5)] and len(pods) == 5, mode
        assert {n: requests_of(p)["hamster"]["cpu"] for n, p in pods.items()} == dict.fromkeys(pods, "2"), mode
    done, pods, _ = unboost("Off", 0, boost("Factor", 3, None))
    assert done == ["p0"] and requests_of(pods["p0"]) == {"hamster": {"cpu": "1", "memory": "200M"}}


def test_can_unboost_rules():
    # upstream: CanUnboost: not with the gate off, not Pending, not while resizing, and within the
    # disruption budget (5 pods, tolerance 0.5: two a pass)
    assert unboost("Recreate", 0, boost("Factor", 3, None), gates=VpaGates())[0] == []
    assert unboost("Recreate", 0, boost("Factor", 3, None), phase="Pending")[0] == []
    resizing = [{"type": "PodResizeInProgress", "status": "True"}]
    assert unboost("Recreate", 0, boost("Factor", 3, None), conditions=resizing)[0] == []
    assert len(unboost("Recreate", 0, boost("Factor", 3, None), pods=5)[0]) == 2


def test_a_failed_unboost_is_counted_and_evicts_nothing():
    # upstream: TestRunOnce_Mode "with InPlaceOrRecreate mode and unboost and In-place fails": no
    # eviction; updater.go records the failure as UnboostError. Nothing to go back to (no
    # recommendation for the container, an empty annotation): the in-place update fails
    async def scenario(w: World):
        await w.vpa("InPlaceOrRecreate", {"containerRecommendations": []}, startupBoost=boost("Factor", 3, None))
        await w.pod("p0", containers=boosted_containers("hamster"), conditions=ready(w, 0),
                    annotations={"vpaCpuStartupBoost/hamster": ""})
        metrics = UpdaterMetrics()
        result = await Updater(w.client, w.clock, gates=BOOST_ON, metrics=metrics, min_replicas=1).run_once()
        return result, metrics
    result, metrics = run(scenario, replicas=1)
    assert result.unboosted == [] and result.evicted == []
    assert sample(metrics, "vpa_updater_failed_in_place_update_attempts_total", vpa_size_log2="0",
                  reason="UnboostError", vpa_name="hamster-vpa", vpa_namespace=NS) == 1.0


def test_unboost_then_the_regular_update():
    # upstream: TestRunOnce_AutoUnboostThenEvict / TestRunOnce_AutoUnboostThenInPlace: the boosted
    # pods are only unboosted in the first cycle; once the annotations are gone they are updated as
    # any other pod (Recreate: evicted; InPlaceOrRecreate: resized)
    for mode, evicts in (("Recreate", True), ("InPlaceOrRecreate", False)):
        async def scenario(w: World, mode=mode):
            await w.vpa(mode, target_rec("hamster"), startupBoost=boost("Factor", 3, None))
            await w.pod("p0", containers=boosted_containers("hamster"), conditions=ready(w, 0),
                        annotations={"vpaCpuStartupBoost/hamster": ORIGINAL})
            u = Updater(w.client, w.clock, gates=BOOST_ON, min_replicas=1)
            first = await u.run_once()
            assert first.unboosted == ["p0"] and not first.evicted and not first.resized
            # a new recommendation: an ordinary update now
            obj = await w.client.get("autoscaling.k8s.io/verticalpodautoscalers", "hamster-vpa", NS)
            t = {"cpu": "4", "memory": "400M"}
            obj["status"]["recommendation"]["containerRecommendations"][0].update(
                target=t, lowerBound=t, upperBound=t, uncappedTarget=t)
            await w.client.update_status("autoscaling.k8s.io/verticalpodautoscalers", obj)
            pod = (await w.live())["p0"]
            pod["status"]["containerStatuses"][0]["resources"] = pod["spec"]["containers"][0]["resources"]
            await w.client.update_status("pods", pod)
            return await u.run_once()
        second = run(scenario, replicas=1)
        assert (second.evicted == ["p0"]) is evicts and (second.resized == ["p0"]) is not evicts, mode
