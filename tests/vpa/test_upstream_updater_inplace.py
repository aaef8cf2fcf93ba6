"""The updater's in-place decisions as upstream VPA 1.7-1.8 makes them, through ``Updater.run_once``
against an in-process API server whose pods are written by hand (no node agent: a pod's resize
conditions and actual resources stay as the test sets them, as upstream's tests fix them).

Vectors: pkg/updater/restriction/pods_inplace_restriction_test.go, pkg/updater/logic/updater_test.go.
"""

from __future__ import annotations

import pytest

import itertools
from typing import Any

from kvert.api.meta import format_time
from kvert.clock import VirtualClock
from kvert.vpa.features import VpaGates
from kvert.vpa.instruments import UpdaterMetrics
from kvert.vpa.updater import Updater

from tests.kubelet.test_agent_support import cluster

NS = "default"
VPAS = "autoscaling.k8s.io/verticalpodautoscalers"
IN_PLACE_ON = VpaGates.parse("InPlace=true")
_uids = itertools.count(1)


def rec(cpu: str, memory: str, container: str = "hamster", *, lower: tuple[str, str] | None = None,
        upper: tuple[str, str] | None = None) -> dict:
    lo = {"cpu": lower[0], "memory": lower[1]} if lower else {"cpu": cpu, "memory": memory}
    hi = {"cpu": upper[0], "memory": upper[1]} if upper else {"cpu": cpu, "memory": memory}
    target = {"cpu": cpu, "memory": memory}
    return {"containerRecommendations": [{"containerName": container, "target": target, "lowerBound": lo,
                                          "upperBound": hi, "uncappedTarget": target}]}


class World:
    """An API server, a Deployment (for the configured replicas and the selector), hand-made pods."""

    def __init__(self, clock: VirtualClock) -> None:
        self.clock = clock

    async def start(self, replicas: int) -> World:
        self.client = await cluster(self.clock)
        # the pods' node: 1.36's PodResizeValidator refuses a resize on a node that is missing
        await self.client.create("nodes", {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-1"},
                                           "status": {"allocatable": {"cpu": "64", "memory": "256Gi"}}})
        await self.client.create("apps/deployments", {
            "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "hamster", "namespace": NS},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "hamster"}},
                     "template": {"metadata": {"labels": {"app": "hamster"}},
                                  "spec": {"containers": [{"name": "hamster", "image": "hamster"}]}}}})
        return self

    async def vpa(self, mode: str, recommendation: dict, **spec: Any) -> dict:
        update_policy = {"updateMode": mode, **spec.pop("update_policy", {})}
        obj = await self.client.create(VPAS, {
            "apiVersion": "autoscaling.k8s.io/v1", "kind": "VerticalPodAutoscaler",
            "metadata": {"name": "hamster-vpa", "namespace": NS},
            "spec": {"targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "hamster"},
                     "updatePolicy": update_policy, **spec}})
        return await self.recommend(recommendation, obj)

    async def recommend(self, recommendation: dict, obj: dict | None = None) -> dict:
        obj = obj or await self.client.get(VPAS, "hamster-vpa", NS)
        obj["status"] = {"recommendation": recommendation}
        return await self.client.update_status(VPAS, obj)

    async def pod(self, name: str, cpu: str = "500m", memory: str = "512Mi", *, conditions: list[dict] = (),
                  actual: tuple[str, str] | None = None, phase: str = "Running", age: float = 3600.0,
                  containers: list[dict] | None = None, last_state: dict | None = None,
                  annotations: dict | None = None) -> dict:
        """A running pod of the Deployment; ``actual``: the resources its status reports (as the
        kubelet does once in-place resize is on), default the spec's."""
        containers = containers or [{"name": "hamster", "image": "hamster",
                                     "resources": {"requests": {"cpu": cpu, "memory": memory}}}]
        meta: dict[str, Any] = {"name": name, "namespace": NS, "labels": {"app": "hamster"}}
        if annotations is not None:
            meta["annotations"] = annotations
        pod = await self.client.create("pods", {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
                                                "spec": {"nodeName": "node-1", "containers": containers}})
        started = format_time(self.clock.now() - age)
        statuses = []
        for c in containers:
            requests = dict(c["resources"]["requests"])
            if actual is not None:
                requests = {"cpu": actual[0], "memory": actual[1]}
            resources = {"requests": requests}
            if c["resources"].get("limits"):
                resources["limits"] = dict(c["resources"]["limits"])
            status: dict[str, Any] = {"name": c["name"], "ready": True, "restartCount": 0, "image": c["image"],
                                      "imageID": "", "started": True,
                                      "state": {"running": {"startedAt": started}}, "resources": resources}
            if last_state is not None:
                status["lastState"] = last_state
            statuses.append(status)
        pod["status"] = {**pod["status"], "phase": phase, "startTime": started, "conditions": list(conditions),
                         "containerStatuses": statuses}
        return await self.client.update_status("pods", pod)

    async def set_conditions(self, name: str, conditions: list[dict]) -> None:
        pod = await self.client.get("pods", name, NS)
        pod["status"]["conditions"] = conditions
        await self.client.update_status("pods", pod)

    async def live(self) -> dict[str, dict]:
        pods = (await self.client.list("pods", namespace=NS))["items"]
        return {p["metadata"]["name"]: p for p in pods if not p["metadata"].get("deletionTimestamp")}

    async def requests(self, name: str) -> dict[str, str]:
        pod = await self.client.get("pods", name, NS)
        return pod["spec"]["containers"][0]["resources"]["requests"]

    async def events(self, reason: str) -> list[dict]:
        return [e for e in (await self.client.list("events", namespace=NS))["items"] if e["reason"] == reason]


def run(scenario: Any, replicas: int = 3) -> Any:
    clock = VirtualClock()

    async def main() -> Any:
        w = await World(clock).start(replicas)
        return await scenario(w)

    return clock.run(main())


RESIZING = [{"type": "PodResizeInProgress", "status": "True"}]
DEFERRED = [{"type": "PodResizePending", "status": "True", "reason": "Deferred"}]
INFEASIBLE = [{"type": "PodResizePending", "status": "True", "reason": "Infeasible"}]
RESIZE_ERROR = [{"type": "PodResizeInProgress", "status": "True", "reason": "Error", "message": "failed"}]


def sample(metrics: UpdaterMetrics, name: str, **labels: str) -> float | None:
    return metrics.registry.get_sample_value(name, labels)


def test_in_place_mode_is_deferred_while_its_gate_is_off():
    # upstream: TestInPlaceModeDisabledFeatureGate (pods_inplace_restriction_test.go): every pod
    # InPlaceDeferred; updater.go: "If the feature gate is not enabled but update mode is
    # InPlace, updater will do nothing."
    async def scenario(w: World):
        await w.vpa("InPlace", rec("1", "1Gi"))
        for i in range(3):
            await w.pod(f"p{i}")
        result = await Updater(w.client, w.clock, eviction_tolerance=1.0).run_once()
        assert not result.resized and not result.evicted
        assert result.skipped["default/hamster-vpa"] == "updateMode InPlace needs the InPlace feature gate"
        assert {n: (await w.requests(n))["cpu"] for n in await w.live()} == {"p0": "500m", "p1": "500m", "p2": "500m"}
        # the same pods with the gate on
        result = await Updater(w.client, w.clock, eviction_tolerance=1.0, gates=IN_PLACE_ON).run_once()
        assert sorted(result.resized) == ["p0", "p1", "p2"]
    run(scenario)


def test_in_place_waits_however_long_a_resize_is_in_progress_where_in_place_or_recreate_evicts():
    # upstream: TestCanInPlaceUpdate "InPlace mode - waits indefinitely for in-progress updates"
    # (InPlaceDeferred, 2h after the attempt) and "CanInPlaceUpdate=InPlaceEvict - resize inProgress
    # for more too long" (InPlaceOrRecreate): 3 replicas, tolerance 0.5
    for mode, evicted in (("InPlace", []), ("InPlaceOrRecreate", ["p0"])):
        async def scenario(w: World, mode=mode):
            await w.vpa(mode, rec("1", "1Gi"))
            # p0 asked for the target already; the node has not applied it
            await w.pod("p0", "1", "1Gi", actual=("500m", "512Mi"), conditions=RESIZING)
            await w.pod("p1", "1", "1Gi")
            await w.pod("p2", "1", "1Gi")
            u = Updater(w.client, w.clock, gates=IN_PLACE_ON)
            passes = []
            for _ in range(3):
                passes.append(await u.run_once())
                await w.clock.sleep(3600)          # an hour each: past the in-progress timeout
            return [n for p in passes for n in p.evicted], set(await w.live())
        got, live = run(scenario)
        assert got == evicted, mode
        assert live == {"p0", "p1", "p2"} - set(evicted)


def test_in_place_never_evicts_a_long_deferred_resize():
    # upstream: TestInPlaceModeResizeStatuses "InPlace mode - ResizeStatusDeferred returns
    # InPlaceDeferred" and "InPlaceOrRecreate mode - ResizeStatusDeferred past timeout returns
    # InPlaceEvict" (DeferredResizeUpdateTimeout 5 minutes)
    for mode, evicted in (("InPlace", False), ("InPlaceOrRecreate", True)):
        async def scenario(w: World, mode=mode):
            await w.vpa(mode, rec("1", "1Gi"))
            await w.pod("p0", "1", "1Gi", actual=("500m", "512Mi"), conditions=DEFERRED)
            await w.pod("p1", "1", "1Gi")
            await w.pod("p2", "1", "1Gi")
            u = Updater(w.client, w.clock, gates=IN_PLACE_ON)
            out = []
            for _ in range(4):
                out += (await u.run_once()).evicted
                await w.clock.sleep(180)
            return out, await w.events("EvictedByVPA")
        out, events = run(scenario)
        assert (out == ["p0"]) is evicted, mode
        assert bool(events) is evicted


def test_in_place_infeasible_is_cached_until_the_recommendation_asks_for_less():
    # upstream: TestCanInPlaceUpdate "InPlace mode - infeasible returns InPlaceInfeasible",
    # "InfeasibleCaching - same recommendation returns cached", "... higher recommendation returns
    # cached" (last 1000m/1Gi, now 2000m/2Gi), "... lower recommendation allows retry" (last
    # 2000m/2Gi, now 1000m/2Gi); updater.go: the InPlaceResizeSkipped event and
    # vpa_updater_in_place_infeasible_skip_pods_total (e906ff3f60)
    async def scenario(w: World):
        await w.vpa("InPlace", rec("2000m", "2Gi"))
        await w.pod("p0", "500m", "512Mi", conditions=INFEASIBLE)
        metrics = UpdaterMetrics()
        u = Updater(w.client, w.clock, gates=IN_PLACE_ON, min_replicas=1, metrics=metrics)
        first = await u.run_once()                  # InPlaceInfeasible: tried (and remembered)
        assert first.resized == ["p0"] and await w.requests("p0") == {"cpu": "2", "memory": "2Gi"}
        skipped = lambda: sample(metrics, "vpa_updater_in_place_infeasible_skip_pods_total",  # noqa: E731
                                 vpa_size_log2="0", vpa_name="hamster-vpa", vpa_namespace=NS)
        second = await u.run_once()                 # same recommendation: cached
        assert not second.resized and not second.evicted
        [event] = await w.events("InPlaceResizeSkipped")
        assert event["involvedObject"]["name"] == "p0" and event["type"] == "Normal"
        assert event["message"] == ("Previously recorded in-place update was infeasible, current recommendation "
                                    "is not lower than previous, skipping resize")
        assert skipped() == 1.0
        await w.recommend(rec("3000m", "3Gi"))      # higher: still cached
        assert not (await u.run_once()).resized
        assert skipped() == 2.0
        await w.recommend(rec("1000m", "2Gi"))      # lower cpu: retried at the new target
        retried = await u.run_once()
        assert retried.resized == ["p0"] and await w.requests("p0") == {"cpu": "1", "memory": "2Gi"}
        assert not await w.events("EvictedByVPA")
    run(scenario, replicas=1)


def test_in_place_resize_error_is_deferred_not_infeasible():
    # upstream: 40aee9af4f, TestInPlaceModeResizeStatuses "InPlace mode - ResizeStatusError returns
    # InPlaceDeferred": no infeasible cache, so the pod is never skipped as infeasible; under
    # InPlaceOrRecreate the same error falls back to eviction (CanEvictInPlacingPod)
    async def scenario(w: World):
        await w.vpa("InPlace", rec("1", "1Gi"))
        await w.pod("p0", "500m", "512Mi", conditions=RESIZE_ERROR)
        metrics = UpdaterMetrics()
        u = Updater(w.client, w.clock, gates=IN_PLACE_ON, min_replicas=1, metrics=metrics)
        first = await u.run_once()
        assert first.resized == ["p0"]
        await w.recommend(rec("2", "2Gi"))          # higher: a cached Infeasible would skip this one
        second = await u.run_once()
        assert second.resized == ["p0"] and await w.requests("p0") == {"cpu": "2", "memory": "2Gi"}
        assert not await w.events("InPlaceResizeSkipped") and not await w.events("EvictedByVPA")
        assert sample(metrics, "vpa_updater_in_place_infeasible_skip_pods_total", vpa_size_log2="0",
                      vpa_name="hamster-vpa", vpa_namespace=NS) is None
    run(scenario, replicas=1)


def test_in_place_or_recreate_evicts_on_a_resize_error():
    # upstream: CanEvictInPlacingPod, "In-place update error, falling back to eviction"
    async def scenario(w: World):
        await w.vpa("InPlaceOrRecreate", rec("1", "1Gi"))
        await w.pod("p0", "1", "1Gi", actual=("500m", "512Mi"), conditions=RESIZE_ERROR)
        await w.pod("p1", "1", "1Gi")
        await w.pod("p2", "1", "1Gi")
        return (await Updater(w.client, w.clock).run_once()).evicted
    assert run(scenario) == ["p0"]


def test_in_place_deferred_candidates_are_sent_their_resize():
    # upstream: TestCanInPlaceUpdate "InPlace mode - deferred pod with changed recommendations
    # retries" (alsoTestInPlaceUpdate) and updater.go's InPlaceDeferred case, which under InPlace
    # goes on to InPlaceUpdate: with tolerance 0.5 of 3 pods, the budget defers p1 and p2, and
    # InPlace resizes them all in one pass (InPlaceOrRecreate resizes one)
    for mode, resized in (("InPlace", ["p0", "p1", "p2"]), ("InPlaceOrRecreate", ["p0"])):
        async def scenario(w: World, mode=mode):
            await w.vpa(mode, rec("1", "1Gi"))
            for i in range(3):
                await w.pod(f"p{i}")
            return sorted((await Updater(w.client, w.clock, gates=IN_PLACE_ON).run_once()).resized)
        assert run(scenario) == resized, mode


def test_skip_disruption_budget_approves_non_disruptive_resizes():
    # upstream: TestInPlaceSkipDisruptionBudgetWithResizePolicy (5 replicas, tolerance 0.1):
    # "No resize policy with flag enabled" 5, "No resize policy with flag disabled" 1, "Only
    # RestartContainer policy with flag enabled" 1, "Multiple containers - one with policy, one
    # without" 5, "Multiple containers - one NotRequired, one RestartContainer" 1
    def containers(*policies: list[dict] | None) -> list[dict]:
        out = []
        for i, policy in enumerate(policies):
            c = {"name": "hamster" if i == 0 else f"side{i}", "image": "hamster",
                 "resources": {"requests": {"cpu": "500m", "memory": "512Mi"}}}
            if policy is not None:
                c["resizePolicy"] = policy
            out.append(c)
        return out

    not_required = [{"resourceName": "cpu", "restartPolicy": "NotRequired"},
                    {"resourceName": "memory", "restartPolicy": "NotRequired"}]
    restart = [{"resourceName": "cpu", "restartPolicy": "RestartContainer"},
               {"resourceName": "memory", "restartPolicy": "RestartContainer"}]
    cases = [(containers(None), True, 5), (containers(None), False, 1),
             (containers([{"resourceName": "cpu", "restartPolicy": "RestartContainer"}]), True, 1),
             (containers([not_required[0]], None), True, 5), (containers(not_required, restart), True, 1),
             (containers(not_required), True, 5)]
    for cs, skip, expected in cases:
        async def scenario(w: World, cs=cs, skip=skip):
            await w.vpa("InPlaceOrRecreate", rec("1", "1Gi"))
            for i in range(5):
                await w.pod(f"p{i}", containers=cs)
            u = Updater(w.client, w.clock, eviction_tolerance=0.1, in_place_skip_disruption_budget=skip)
            return len((await u.run_once()).resized)
        assert run(scenario, replicas=5) == expected, (cs, skip)


def test_skip_disruption_budget_below_min_replicas_resizes_but_never_evicts():
    # upstream: TestEvictionToleranceForInPlaceWithSkipDisruptionBudgetWithLessThanMinimumPods
    # (e47e655fcf): 1 live pod of 5, minReplicas 2: the in-place update is approved, eviction is not
    async def scenario(w: World):
        await w.vpa("InPlaceOrRecreate", rec("1", "1Gi"))
        await w.pod("p0", conditions=[])
        plain = await Updater(w.client, w.clock).run_once()
        assert not plain.resized and plain.skipped["default/hamster-vpa"] == "too few replicas: 1 < 2"
        u = Updater(w.client, w.clock, in_place_skip_disruption_budget=True, eviction_tolerance=0.8)
        assert (await u.run_once()).resized == ["p0"]
        # the node calls that resize Infeasible: InPlaceOrRecreate would evict, but not below minReplicas
        await w.set_conditions("p0", INFEASIBLE)
        assert not (await u.run_once()).evicted
        assert set(await w.live()) == {"p0"}
    run(scenario, replicas=5)


def test_in_place_tolerance_and_at_least_one():
    # upstream: TestEvictionToleranceForInPlace (5 replicas, tolerance 0.8: 4 resized) and
    # TestInPlaceAtLeastOne (tolerance 0.1: the first approved, the rest InPlaceDeferred)
    for tolerance, expected in ((0.8, 4), (0.1, 1)):
        async def scenario(w: World, tolerance=tolerance):
            await w.vpa("InPlaceOrRecreate", rec("1", "1Gi"))
            for i in range(5):
                await w.pod(f"p{i}")
            return len((await Updater(w.client, w.clock, eviction_tolerance=tolerance).run_once()).resized)
        assert run(scenario, replicas=5) == expected, tolerance


def test_every_in_place_resize_marks_the_pod_and_says_so():
    # upstream: TestInPlaceUpdate_EventEmission (InPlaceResizedByVPA) and the updater's
    # NewInPlaceUpdatedCalculator (annotation vpaInPlaceUpdated: "true")
    async def scenario(w: World):
        await w.vpa("InPlaceOrRecreate", rec("1", "1Gi"))
        await w.pod("p0")
        await Updater(w.client, w.clock, min_replicas=1).run_once()
        pod = (await w.live())["p0"]
        [event] = await w.events("InPlaceResizedByVPA")
        return pod["metadata"].get("annotations"), event["message"], pod["spec"]["containers"][0]["resources"]
    annotations, message, resources = run(scenario, replicas=1)
    assert annotations == {"vpaInPlaceUpdated": "true"}
    assert message == "Pod was resized in place by VPA Updater."
    assert resources == {"requests": {"cpu": "1", "memory": "1Gi"}}


class CountingPatches:
    """The world's client, counting the pod patches the updater sends (the API server turns
    a patch that changes nothing into no write, so only the requests tell)."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.pod_patches: list[list] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.client, name)

    async def patch(self, resource: str, name: str, body: Any, patch_type: str = "merge", **kw: Any) -> Any:
        if resource == "pods":
            self.pod_patches.append(body)
        return await self.client.patch(resource, name, body, patch_type, **kw)


@pytest.mark.parametrize("marked,patches", [(True, 0), (False, 1)])
def test_a_marked_pod_is_resized_without_a_second_annotation_write(marked, patches):
    # upstream patches vpaInPlaceUpdated again at every resize; on a pod that has it already
    # (and no boost to drop) that patch changes nothing, so kvert does not send it
    async def scenario(w: World):
        await w.vpa("InPlaceOrRecreate", rec("1", "1Gi"))
        await w.pod("p0", annotations={"vpaInPlaceUpdated": "true"} if marked else None)
        client = CountingPatches(w.client)
        await Updater(client, w.clock, min_replicas=1).run_once()
        return client.pod_patches, (await w.live())["p0"]
    sent, pod = run(scenario, replicas=1)
    assert pod["spec"]["containers"][0]["resources"] == {"requests": {"cpu": "1", "memory": "1Gi"}}
    assert pod["metadata"]["annotations"] == {"vpaInPlaceUpdated": "true"}
    assert len(sent) == patches


def test_gauges_and_counters_of_a_pass():
    # upstream: updater.go counts controlled pods per VPA, in-place updatable and updated pods, and
    # initialises each VPA's evicted / in-place counters at zero (a48532fc6d, eda54cc538;
    # TestInitCountersAreZero)
    async def scenario(w: World):
        await w.vpa("InPlaceOrRecreate", rec("1", "1Gi"))
        for i in range(3):
            await w.pod(f"p{i}")
        metrics = UpdaterMetrics()
        await Updater(w.client, w.clock, metrics=metrics).run_once()
        return metrics
    m = run(scenario)
    vpa = {"vpa_name": "hamster-vpa", "vpa_namespace": NS}
    assert sample(m, "vpa_updater_controlled_pods_total", vpa_size_log2="1", update_mode="InPlaceOrRecreate") == 3
    assert sample(m, "vpa_updater_in_place_updatable_pods_total", vpa_size_log2="1") == 3
    assert sample(m, "vpa_updater_in_place_updatable_pods_total", vpa_size_log2="0") == 0
    assert sample(m, "vpa_updater_vpas_with_in_place_updatable_pods_total", vpa_size_log2="1") == 1
    assert sample(m, "vpa_updater_vpas_with_in_place_updated_pods_total", vpa_size_log2="1") == 1
    assert sample(m, "vpa_updater_in_place_updated_pods_total", vpa_size_log2="1", **vpa) == 1
    assert sample(m, "vpa_updater_evicted_pods_total", vpa_size_log2="1", update_mode="InPlaceOrRecreate",
                  **vpa) == 0
    assert sample(m, "vpa_updater_evictable_pods_total", vpa_size_log2="1", update_mode="InPlaceOrRecreate") is None
    assert m.registry.get_sample_value("vpa_updater_execution_latency_seconds_count", {"step": "total"}) == 1


def test_in_place_update_sizes_from_the_running_resources():
    # upstream: GetUpdatePriority reads ContainerRequestsAndLimits -- the status's resources once
    # the kubelet reports them: a pod whose spec already says 1 CPU but runs with 500m is still
    # off target (and, under InPlaceOrRecreate, its stalled resize is what is acted on)
    async def scenario(w: World):
        await w.vpa("InPlaceOrRecreate", rec("1", "1Gi"))
        await w.pod("p0", "1", "1Gi", actual=("500m", "512Mi"))
        await w.pod("p1", "1", "1Gi")
        metrics = UpdaterMetrics()
        await Updater(w.client, w.clock, metrics=metrics).run_once()
        return sample(metrics, "vpa_updater_in_place_updatable_pods_total", vpa_size_log2="1")
    assert run(scenario, replicas=2) == 1
