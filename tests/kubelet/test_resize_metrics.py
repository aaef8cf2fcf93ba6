"""The kubelet's six resize metrics on the node agent's ``/metrics`` (names, types, labels,
buckets and HELP as upstream's pkg/kubelet/metrics, recorded where upstream records them)."""

from __future__ import annotations

from kvert.api import features
from kvert.api.prometheus import parse_exposition
from kvert.clock import VirtualClock
from kvert.cluster.metrics import kubelet_metrics_text
from kvert.kubelet.resize import ResizeScope
from kvert.kubelet.resize import metrics as rzm
from kvert.kubelet.resize.state import ResizeState
from kvert.kubelet.runtime.sim import SimRuntime

from tests.kubelet.test_agent_support import (cluster, condition, container, node_config, pod, run_pod, running,
                                              start_agent, stop, wait_for)


def _samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {(s.name, tuple(sorted(s.labels.items()))): s.value for s in parse_exposition(text)}


def test_help_and_type_lines_as_upstream():
    """upstream: allocation_manager_test TestRetryPendingResizes expectedMetrics ('# HELP
    kubelet_pod_infeasible_resizes_total [ALPHA] Number of infeasible resizes for pods.', '# HELP
    kubelet_pod_deferred_accepted_resizes_total [ALPHA] Cumulative number of resizes that were
    accepted after being deferred.'); the others from the kubelet metrics reference."""
    text = rzm.ResizeMetrics().text([])
    lines = text.splitlines()
    assert "# HELP kubelet_pod_infeasible_resizes_total [ALPHA] Number of infeasible resizes for pods." in lines
    assert "# TYPE kubelet_pod_infeasible_resizes_total counter" in lines
    assert ("# HELP kubelet_pod_deferred_accepted_resizes_total [ALPHA] Cumulative number of resizes that "
            "were accepted after being deferred.") in lines
    assert "# TYPE kubelet_pod_deferred_accepted_resizes_total counter" in lines
    assert "# HELP kubelet_pod_resize_duration_milliseconds [ALPHA] Duration in milliseconds to actuate a pod resize" \
        in lines
    assert "# TYPE kubelet_pod_resize_duration_milliseconds histogram" in lines
    assert "# HELP kubelet_pod_pending_resizes [ALPHA] Number of pending resizes for pods." in lines
    assert "# TYPE kubelet_pod_pending_resizes gauge" in lines
    assert "# HELP kubelet_pod_in_progress_resizes [ALPHA] Number of in-progress resizes for pods." in lines
    assert "# TYPE kubelet_pod_in_progress_resizes gauge" in lines
    assert "# TYPE kubelet_container_requested_resizes_total counter" in lines
    assert "kubelet_pod_in_progress_resizes 0" in lines


def test_duration_buckets_and_observations():
    """Buckets 10 .. 600000 ms (pkg/kubelet/metrics PodResizeDurationMilliseconds)."""
    assert rzm.DURATION_BUCKETS == (10, 50, 100, 500, 1000, 2000, 5000, 10000, 20000, 30000, 60000, 120000,
                                    300000, 600000)
    m = rzm.ResizeMetrics()
    m.resize_actuated(42, True)
    m.resize_actuated(700, False)
    got = _samples(m.text([]))
    name = "kubelet_pod_resize_duration_milliseconds"
    assert got[(f"{name}_bucket", (("le", "10"), ("success", "true")))] == 0
    assert got[(f"{name}_bucket", (("le", "50"), ("success", "true")))] == 1
    assert got[(f"{name}_bucket", (("le", "+Inf"), ("success", "true")))] == 1
    assert got[(f"{name}_sum", (("success", "true"),))] == 42
    assert got[(f"{name}_bucket", (("le", "500"), ("success", "false")))] == 0
    assert got[(f"{name}_bucket", (("le", "1000"), ("success", "false")))] == 1
    assert got[(f"{name}_count", (("success", "false"),))] == 1


def test_resize_operation_for_resources():
    """upstream resizeOperationForResources: remove, add, decrease, increase, or nothing."""
    assert rzm.resize_operation(0, 500) == "remove"
    assert rzm.resize_operation(500, 0) == "add"
    assert rzm.resize_operation(200, 500) == "decrease"
    assert rzm.resize_operation(700, 500) == "increase"
    assert rzm.resize_operation(500, 500) == ""


def test_requested_resizes_counted_per_container_resource_and_requirement():
    """KEP-1287 Instrumentation: one count per container, resource and requirement that changed;
    sidecars count, regular init containers only while the node resizes them."""
    old = {"spec": {"initContainers": [
        {"name": "side", "restartPolicy": "Always", "resources": {"requests": {"cpu": "100m"}}},
        {"name": "init", "resources": {"requests": {"cpu": "100m"}}}],
        "containers": [{"name": "c", "resources": {"requests": {"cpu": "500m", "memory": "1Gi"},
                                                    "limits": {"memory": "2Gi"}}}]}}
    new = {"spec": {"initContainers": [
        {"name": "side", "restartPolicy": "Always", "resources": {"requests": {"cpu": "200m"}}},
        {"name": "init", "resources": {"requests": {"cpu": "300m"}}}],
        "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"},
                                                    "limits": {"memory": "1Gi", "cpu": "2"}}}]}}
    m = rzm.ResizeMetrics()
    m.pod_updated(old, new)
    got = _samples(m.text([]))
    name = "kubelet_container_requested_resizes_total"
    key = lambda op, req, res: (name, (("operation", op), ("requirement", req), ("resource", res)))  # noqa: E731
    assert got[key("increase", "requests", "cpu")] == 3        # side, init, c
    assert got[key("remove", "requests", "memory")] == 1
    assert got[key("decrease", "limits", "memory")] == 1
    assert got[key("add", "limits", "cpu")] == 1
    m = rzm.ResizeMetrics()
    m.pod_updated(old, new, ResizeScope(init_containers=False))
    assert _samples(m.text([]))[key("increase", "requests", "cpu")] == 2


def test_pending_and_in_progress_gauges_follow_the_pods():
    m = rzm.ResizeMetrics()
    deferred = ResizeState(pending_reason="Deferred")
    infeasible = ResizeState(pending_reason="Infeasible", in_progress=True)
    got = _samples(m.text([deferred, infeasible]))
    assert got[("kubelet_pod_pending_resizes", (("reason", "deferred"),))] == 1
    assert got[("kubelet_pod_pending_resizes", (("reason", "infeasible"),))] == 1
    assert got[("kubelet_pod_in_progress_resizes", ())] == 1
    got = _samples(m.text([]))
    assert got[("kubelet_pod_pending_resizes", (("reason", "deferred"),))] == 0
    assert got[("kubelet_pod_in_progress_resizes", ())] == 0


def _cpu(name: str, cpu: str) -> dict:
    return {"spec": {"containers": [{"name": name, "resources": {"requests": {"cpu": cpu}, "limits": {"cpu": cpu}}}]}}


def test_node_agent_metrics_move_with_resizes():
    """A resize accepted, one Deferred then accepted once another pod shrinks (retry_trigger
    pod_resized), one Infeasible (reason_detail insufficient_node_allocatable): the counters on
    the node agent's /metrics (kubectl get --raw /api/v1/nodes/NODE/proxy/metrics)."""
    clock = VirtualClock()

    async def main():
        client = await cluster(clock)
        agent, task = await start_agent(client, clock, SimRuntime(clock), config=node_config(cpu=4000))
        await run_pod(client, pod("big", container("c", "2", "128Mi")))
        await run_pod(client, pod("p", container("c", "1", "128Mi")))
        await running(client, clock, "big")
        await running(client, clock, "p")

        await client.resize("default", "p", _cpu("c", "1500m"))

        async def settled(name, cpu):
            got = await client.get("pods", name, "default")
            cs = got["status"]["containerStatuses"][0]
            busy = condition(got, "PodResizeInProgress") or condition(got, "PodResizePending")
            return got if cs.get("resources", {}).get("limits", {}).get("cpu") == cpu and not busy else None
        await wait_for(clock, lambda: settled("p", "1500m"), what="p 1500m")

        # 1500m + 2 cpus held: 2500m does not fit now -> Deferred
        await client.resize("default", "p", _cpu("c", "2500m"))

        async def deferred():
            got = await client.get("pods", "p", "default")
            c = condition(got, "PodResizePending")
            return got if c and c["reason"] == "Deferred" else None
        await wait_for(clock, deferred, what="Deferred")
        text = await kubelet_metrics_text(agent)
        got = _samples(text)
        assert got[("kubelet_pod_pending_resizes", (("reason", "deferred"),))] == 1
        # big shrinks: the deferred resize is accepted on that pod's resize
        await client.resize("default", "big", _cpu("c", "1"))
        await wait_for(clock, lambda: settled("p", "2500m"), what="p 2500m")
        # far above the node: Infeasible (the node decides it with KvertResizeInfeasibleAtNode)
        await client.resize("default", "p", _cpu("c", "64"))

        async def infeasible():
            got = await client.get("pods", "p", "default")
            c = condition(got, "PodResizePending")
            return got if c and c["reason"] == "Infeasible" else None
        await wait_for(clock, infeasible, what="Infeasible")

        got = _samples(await kubelet_metrics_text(agent))
        req = "kubelet_container_requested_resizes_total"
        assert got[(req, (("operation", "increase"), ("requirement", "requests"), ("resource", "cpu")))] == 3
        assert got[(req, (("operation", "increase"), ("requirement", "limits"), ("resource", "cpu")))] == 3
        assert got[(req, (("operation", "decrease"), ("requirement", "limits"), ("resource", "cpu")))] == 1
        assert got[("kubelet_pod_deferred_accepted_resizes_total", (("retry_trigger", "pod_resized"),))] == 1
        assert got[("kubelet_pod_infeasible_resizes_total", (("reason_detail", "insufficient_node_allocatable"),))] == 1
        assert got[("kubelet_pod_pending_resizes", (("reason", "deferred"),))] == 0
        assert got[("kubelet_pod_pending_resizes", (("reason", "infeasible"),))] == 1
        assert got[("kubelet_pod_in_progress_resizes", ())] == 0
        assert got[("kubelet_pod_resize_duration_milliseconds_count", (("success", "true"),))] >= 3
        await stop(agent, task)

    with features.overridden(KvertResizeInfeasibleAtNode=True):     # the API server lets it through
        clock.run(main())
