"""The HorizontalPodAutoscaler controller in an in-process cluster (virtual time).

A Deployment's pods report the cpu a test sets (spread evenly over the ready pods) through
a stand-in metrics provider; the HPA controller scales the Deployment through its scale
subresource. Expected values follow upstream's ``horizontal_test.go`` (TestScaleUp,
TestScaleDown, TestTolerance, TestNormalizeDesiredReplicas*, TestScaleUpRCImmediately,
TestScaleDownRCImmediately ...) and the documented algorithm
(desired = ceil(current x utilization / target)).
"""

from __future__ import annotations

import asyncio

from kvert.api.errors import ApiError
from kvert.api.meta import format_time
from tests.controllers.helpers import DEPLOY, NS, RS, eventually, run

HPAS = "autoscaling/horizontalpodautoscalers"
CONTROLLERS = ("replicaset", "deployment", "horizontalpodautoscaling")


class Usage:
    """metrics.k8s.io as metrics-server answers it: every Running, Ready pod of the namespace
    uses ``cpu_total`` millicores split evenly, sampled now over a 15 s window."""

    def __init__(self, env, cpu_total: int):
        self.env = env
        self.cpu_total = cpu_total

    async def pod_metrics(self, namespace):
        pods = [p for p in (await self.env.client.list("pods", namespace=namespace))["items"]
                if (p.get("status") or {}).get("phase") == "Running"
                and not p["metadata"].get("deletionTimestamp")]
        now = format_time(self.env.clock.now())
        share = self.cpu_total // max(1, len(pods))
        return [{"metadata": {"name": p["metadata"]["name"], "namespace": namespace,
                              "labels": p["metadata"].get("labels") or {}},
                 "timestamp": now, "window": "15s",
                 "containers": [{"name": "app", "usage": {"cpu": f"{share}m", "memory": "64Mi"}}]}
                for p in pods]


async def start_pods(env) -> None:
    """A node agent's part: a new pod runs and is Ready 2 s after it appears."""
    while True:
        for pod in (await env.client.list("pods", namespace=NS))["items"]:
            status = pod.get("status") or {}
            if status.get("phase") == "Running" or pod["metadata"].get("deletionTimestamp"):
                continue
            now = format_time(env.clock.now())
            status.update(phase="Running", startTime=now, conditions=[
                {"type": t, "status": "True", "lastProbeTime": None, "lastTransitionTime": now}
                for t in ("Initialized", "Ready", "ContainersReady", "PodScheduled")])
            pod["status"] = status
            try:
                await env.client.update_status("pods", pod)
            except ApiError:
                pass
        await env.clock.sleep(2.0)


def web(replicas: int = 1, cpu: str = "100m") -> dict:
    labels = {"app": "web"}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": NS},
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels}, "spec": {"containers": [
                         {"name": "app", "image": "nginx",
                          "resources": {"requests": {"cpu": cpu, "memory": "128Mi"}}}]}}}}


def hpa(target: int = 50, min_replicas: int = 1, max_replicas: int = 5, **spec) -> dict:
    return {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "web", "namespace": NS},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                     "minReplicas": min_replicas, "maxReplicas": max_replicas,
                     "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {
                         "type": "Utilization", "averageUtilization": target}}}], **spec}}


async def replicas(env) -> int:
    return (await env.get(DEPLOY, "web"))["spec"]["replicas"]


async def hpa_status(env) -> dict:
    return (await env.get(HPAS, "web")).get("status") or {}


def conditions(status: dict) -> dict[str, tuple[str, str]]:
    return {c["type"]: (c["status"], c["reason"]) for c in status.get("conditions") or []}


def scenario(body, cpu_total: int = 400, deployment: dict | None = None, **hpa_spec):
    async def main(env):
        usage = Usage(env, cpu_total)
        env.start_manager(controllers=CONTROLLERS,
                          settings={"horizontalpodautoscaling": {"metrics": usage}})
        pods = asyncio.ensure_future(start_pods(env))
        try:
            workload = deployment or web()
            await env.client.create(DEPLOY if workload["kind"] == "Deployment" else RS, workload)
            body_hpa = hpa(**hpa_spec)
            body_hpa["spec"]["scaleTargetRef"]["kind"] = workload["kind"]
            await env.client.create(HPAS, body_hpa)
            return await body(env, usage)
        finally:
            pods.cancel()
    return run(main)


def test_scales_up_then_down_without_behavior():
    async def body(env, usage):
        # 1 pod at 400 % of its request against a 50 % target wants 8; without behavior the
        # scale-up is limited to max(2 x 1, 4) = 4 (TestNormalizeDesiredReplicas, ScaleUpLimit)
        await eventually(env, lambda: replicas_is(env, 4), timeout=40, what="scale up to 4")
        status = await hpa_status(env)
        assert status["currentReplicas"] == 1 and status["desiredReplicas"] == 4
        assert conditions(status) == {"AbleToScale": ("True", "SucceededRescale"),
                                      "ScalingActive": ("True", "ValidMetricFound"),
                                      "ScalingLimited": ("True", "ScaleUpLimit")}
        assert status["currentMetrics"] == [{"type": "Resource", "resource": {
            "name": "cpu", "current": {"averageUtilization": 400, "averageValue": "400m"}}}]
        assert status["lastScaleTime"]
        events = await env.events("SuccessfulRescale")
        assert [e["message"] for e in events] == [
            "New size: 4; reason: cpu resource utilization (percentage of request) above target"]
        assert events[0]["source"]["component"] == "horizontal-pod-autoscaler"
        # 4 pods at 100 % want 8, held at maxReplicas 5
        await eventually(env, lambda: replicas_is(env, 5), timeout=60, what="scale up to 5")
        await eventually(env, lambda: limited_by(env, "TooManyReplicas"), timeout=40,
                         what="TooManyReplicas")
        # the load goes: 50m over 5 pods is 10 %, 1 pod suffices; the 300 s downscale
        # stabilization window holds 5 until the high recommendations age out
        usage.cpu_total = 50
        dropped = env.clock.now()
        await eventually(env, lambda: stabilized(env), timeout=60, what="ScaleDownStabilized")
        assert await replicas(env) == 5
        await eventually(env, lambda: replicas_is(env, 1), timeout=400, what="scale down to 1")
        assert env.clock.now() - dropped >= 300
        messages = [e["message"] for e in await env.events("SuccessfulRescale")]
        assert messages[-1] == "New size: 1; reason: All metrics below target"
    scenario(body)


def test_scales_a_replicaset_through_its_scale_subresource():
    async def body(env, usage):
        await eventually(env, lambda: rs_replicas_is(env, 4), timeout=40, what="the ReplicaSet at 4")
    replica_set = web()
    replica_set["kind"] = "ReplicaSet"
    scenario(body, deployment=replica_set)


async def rs_replicas_is(env, n: int) -> bool:
    return (await env.get(RS, "web"))["spec"]["replicas"] == n


def test_upstream_scale_up():
    # TestScaleUp: 3 replicas requesting 1 cpu use 300m + 500m + 700m against a 30 % target:
    # 50 % utilization, 5 replicas (min 2, max 6)
    async def body(env, usage):
        await eventually(env, lambda: replicas_is(env, 5), timeout=60, what="scale up to 5")
        status = await hpa_status(env)
        assert status["currentMetrics"][0]["resource"]["current"] == {"averageUtilization": 50,
                                                                      "averageValue": "500m"}
        assert conditions(status)["ScalingLimited"] == ("False", "DesiredWithinRange")
        assert [e["message"] for e in await env.events("SuccessfulRescale")] == [
            "New size: 5; reason: cpu resource utilization (percentage of request) above target"]
    scenario(body, cpu_total=1500, deployment=web(3, "1"), target=30, min_replicas=2, max_replicas=6)


def test_upstream_scale_down():
    # TestScaleDown: 5 replicas requesting 1 cpu use 100m + 300m + 500m + 250m + 250m against
    # a 50 % target: 28 %, 3 replicas (min 2, max 6) -- here once the 300 s downscale window
    # has passed since the controller first saw 5
    async def body(env, usage):
        await eventually(env, lambda: active(env), timeout=60, what="a computed status")
        status = await hpa_status(env)
        assert status["desiredReplicas"] == 5
        assert conditions(status)["AbleToScale"] == ("True", "ScaleDownStabilized")
        await eventually(env, lambda: replicas_is(env, 3), timeout=330, what="scale down to 3")
        status = await hpa_status(env)
        assert status["currentMetrics"][0]["resource"]["current"]["averageUtilization"] == 28
        assert [e["message"] for e in await env.events("SuccessfulRescale")] == [
            "New size: 3; reason: All metrics below target"]
    scenario(body, cpu_total=1400, deployment=web(5, "1"), target=50, min_replicas=2, max_replicas=6)


def test_behavior_policies_and_stabilization():
    async def body(env, usage):
        # default rules when behavior is given: up by max(4 pods, 100 %) per 15 s -> 1 to 5
        # is allowed at once (TestScaleUpRCImmediately-like); maxReplicas 10
        await eventually(env, lambda: replicas_is(env, 5), timeout=40, what="scale up by 4")
        # then 5 pods at 80 % want 8 = within max(5 + 4, 10) of the policies
        await eventually(env, lambda: replicas_is(env, 8), timeout=60, what="scale up to 8")
        usage.cpu_total = 40
        start = env.clock.now()
        # scaleDown.stabilizationWindowSeconds: 60 (given), 100 % per 15 s
        await eventually(env, lambda: replicas_is(env, 1), timeout=200, what="scale down")
        assert env.clock.now() - start >= 60
    scenario(body, max_replicas=10, behavior={"scaleDown": {"stabilizationWindowSeconds": 60}})


def test_tolerance_keeps_the_count():
    async def body(env, usage):
        # 1 pod at 105 % of a 100 % target is within the 0.1 tolerance (TestTolerance)
        await eventually(env, lambda: active(env), timeout=60, what="a computed status")
        await env.clock.sleep(60)
        assert await replicas(env) == 1
        status = await hpa_status(env)
        assert status["desiredReplicas"] == 1
        assert status["currentMetrics"][0]["resource"]["current"]["averageUtilization"] == 105
        assert conditions(status)["ScalingLimited"] == ("False", "DesiredWithinRange")
    scenario(body, cpu_total=105, target=100)


def test_missing_metrics_api_is_reported():
    async def main(env):
        env.start_manager(controllers=CONTROLLERS)   # no metrics provider, in-process client
        await env.client.create(DEPLOY, web())
        await env.client.create(HPAS, hpa())
        status = await eventually(env, lambda: failed(env), timeout=60, what="ScalingActive False")
        condition = {c["type"]: c for c in status["conditions"]}["ScalingActive"]
        assert condition["reason"] == "FailedGetResourceMetric"
        assert condition["message"] == (
            "the HPA was unable to compute the replica count: failed to get cpu utilization: unable "
            "to get metrics for resource cpu: unable to fetch metrics from resource metrics API: the "
            "server could not find the requested resource (get pods.metrics.k8s.io)")
        events = await env.events("FailedComputeMetricsReplicas")
        assert events and events[0]["message"].startswith(
            "invalid metrics (1 invalid out of 1), first error is: failed to get cpu resource metric "
            "value: failed to get cpu utilization: unable to get metrics for resource cpu")
        assert await replicas(env) == 1
    run(main)


def test_missing_target_is_reported():
    async def main(env):
        env.start_manager(controllers=CONTROLLERS)
        await env.client.create(HPAS, hpa())
        status = await eventually(env, lambda: able(env, "False"), timeout=60, what="AbleToScale False")
        condition = {c["type"]: c for c in status["conditions"]}["AbleToScale"]
        assert condition["reason"] == "FailedGetScale"
        assert condition["message"] == ('the HPA controller was unable to get the target\'s current '
                                        'scale: deployments.apps "web" not found')
    run(main)


def test_vpa_on_the_same_resource_is_reported():
    async def body(env, usage):
        crds = await install_vpa_crd(env)
        vpa = {"apiVersion": "autoscaling.k8s.io/v1", "kind": "VerticalPodAutoscaler",
               "metadata": {"name": "web-vpa", "namespace": NS},
               "spec": {"targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                        "updatePolicy": {"updateMode": "InPlaceOrRecreate"}}}
        await env.client.create("autoscaling.k8s.io/verticalpodautoscalers", vpa)
        status = await eventually(env, lambda: conflict(env), timeout=60, what="the conflict condition")
        condition = {c["type"]: c for c in status["conditions"]}["VerticalPodAutoscalerConflict"]
        assert condition["status"] == "True" and condition["reason"] == "SameResource"
        assert condition["message"].startswith(
            "VerticalPodAutoscaler web-vpa also sets the cpu requests of Deployment/web")
        assert await env.events("SameResource")
        # the supported combination: the VPA keeps to memory -> the condition goes
        vpa = await env.client.get("autoscaling.k8s.io/verticalpodautoscalers", "web-vpa", NS)
        vpa["spec"]["resourcePolicy"] = {"containerPolicies": [
            {"containerName": "*", "controlledResources": ["memory"]}]}
        await env.client.update("autoscaling.k8s.io/verticalpodautoscalers", vpa)
        await eventually(env, lambda: no_conflict(env), timeout=60, what="the condition gone")
        crds.stop()
    scenario(body, cpu_total=50)


# ---- helpers ----------------------------------------------------------------------------------

async def install_vpa_crd(env):
    from kvert.apiserver.crds import CRDController, vpa_crds
    controller = CRDController(env.client, env.clock)
    asyncio.ensure_future(controller.run())
    await controller.install(vpa_crds())
    for crd in vpa_crds():
        await controller.wait_established(crd["metadata"]["name"])
    return controller


async def replicas_is(env, n: int) -> bool:
    return await replicas(env) == n


async def limited_by(env, reason: str) -> bool:
    return conditions(await hpa_status(env)).get("ScalingLimited", ("", ""))[1] == reason


async def stabilized(env) -> bool:
    return conditions(await hpa_status(env)).get("AbleToScale", ("", ""))[1] == "ScaleDownStabilized"


async def active(env) -> dict | None:
    status = await hpa_status(env)
    return status if conditions(status).get("ScalingActive", ("",))[0] == "True" else None


async def failed(env) -> dict | None:
    status = await hpa_status(env)
    return status if conditions(status).get("ScalingActive", ("",))[0] == "False" else None


async def able(env, value: str) -> dict | None:
    status = await hpa_status(env)
    return status if conditions(status).get("AbleToScale", ("",))[0] == value else None


async def conflict(env) -> dict | None:
    status = await hpa_status(env)
    return status if "VerticalPodAutoscalerConflict" in conditions(status) else None


async def no_conflict(env) -> bool:
    return "VerticalPodAutoscalerConflict" not in conditions(await hpa_status(env))


def test_metrics_through_the_api_server_path():
    # without a provider the controller asks metrics.k8s.io through the client, as upstream's
    # resource metrics client lists PodMetrics with the target's selector
    from kvert.api.selectors import LabelSelector
    from kvert.clock import VirtualClock
    from kvert.controllers.horizontal import HorizontalController

    calls = []

    class Client:
        async def get_path(self, path, query=None):
            calls.append((path, query))
            return {"items": [{"metadata": {"name": "p"}}]}

    controller = HorizontalController(Client(), VirtualClock(0))
    items = asyncio.run(controller._pod_metrics("team-a", LabelSelector.parse("app=web")))
    assert items == [{"metadata": {"name": "p"}}]
    assert calls == [("/apis/metrics.k8s.io/v1beta1/namespaces/team-a/pods", {"labelSelector": "app=web"})]


def test_custom_and_external_metrics_fail_as_without_their_apis():
    # no adapter serves custom.metrics.k8s.io / external.metrics.k8s.io: upstream's messages
    # ("unable to fetch metrics from custom metrics API: no custom metrics API
    # (custom.metrics.k8s.io) registered", kubectl describe of such an HPA)
    async def body(env, usage):
        status = await eventually(env, lambda: failed(env), timeout=60, what="ScalingActive False")
        condition = {c["type"]: c for c in status["conditions"]}["ScalingActive"]
        assert condition["reason"] == "FailedGetPodsMetric"
        assert condition["message"] == (
            "the HPA was unable to compute the replica count: unable to get metric http_requests: "
            "unable to fetch metrics from custom metrics API: no custom metrics API "
            "(custom.metrics.k8s.io) registered")
        events = await env.events("FailedComputeMetricsReplicas")
        assert events[0]["message"].startswith(
            "invalid metrics (2 invalid out of 2), first error is: failed to get pods metric value: "
            "unable to get metric http_requests")
        external = [e["message"] for e in await env.events("FailedGetExternalMetric")]
        assert external == [
            "unable to get external metric default/queue_depth/&LabelSelector{MatchLabels:"
            "map[string]string{queue: jobs,},MatchExpressions:[]LabelSelectorRequirement{},}: unable to "
            "fetch metrics from external metrics API: the server could not find the requested resource "
            "(get queue_depth.external.metrics.k8s.io)"]
    scenario(body, metrics=[
        {"type": "Pods", "pods": {"metric": {"name": "http_requests"},
                                  "target": {"type": "AverageValue", "averageValue": "10"}}},
        {"type": "External", "external": {"metric": {"name": "queue_depth", "selector": {"matchLabels": {
            "queue": "jobs"}}}, "target": {"type": "Value", "value": "30"}}}])
