"""RequestsOnly capping at admission (upstream VPA's ``capRecommendationToContainerLimit``,
pkg/utils/vpa/capping.go): with ``controlledValues: RequestsOnly`` the limits stay, so the
recommendation given to a new pod's requests is capped at its limits -- else the pod is invalid
(issue 26: a 712m target written into requests with a 200m limit, every pod refused)."""

from __future__ import annotations

import asyncio
import copy

from kvert.apiserver.admission import bootstrap, default_chain
from kvert.client import InProcessClient
from kvert.clock import WallClock
from kvert.registry import Registry
from kvert.store import open_store
from kvert.vpa.admission import VpaAdmissionPlugin, apply_patch, mutate_pod

from tests.vpa.test_admission import container, limit_range, pod, resources, vpa

REQUESTS_ONLY = [{"containerName": "*", "controlledValues": "RequestsOnly"}]


def mutated(p: dict, v: dict, limit_ranges: list = ()) -> tuple[dict, dict]:
    ops, annotations, *_ = mutate_pod(p, [v], limit_ranges)
    out = copy.deepcopy(p)
    apply_patch(out, ops)
    return out, annotations


def test_recommendation_capped_to_limits_for_requests_only():
    # upstream: TestRecommendationToLimitCapping (capping_test.go): limits 3x10 cpu / 7000x10 memory,
    # target 2x10 / 8000x10: "no capping for default policy", "no capping for RequestsAndLimits
    # policy", "capping for RequestsOnly policy" (memory to 7000x10, "memory capped to container limit")
    p = pod(container(requests={"cpu": "1", "memory": "10k"}, limits={"cpu": "30", "memory": "70k"}))
    target = {"hamster": {"cpu": "20", "memory": "80k"}}
    for policies in (None, [{"containerName": "*", "controlledValues": "RequestsAndLimits"}]):
        out, annotations = mutated(p, vpa(targets=target, policies=policies))
        assert resources(out)["requests"] == {"cpu": "20", "memory": "80k"}
        assert "capped to container limit" not in annotations["vpaUpdates"]
    out, annotations = mutated(p, vpa(targets=target, policies=REQUESTS_ONLY))
    assert resources(out) == {"requests": {"cpu": "20", "memory": "70k"}, "limits": {"cpu": "30", "memory": "70k"}}
    assert annotations["vpaUpdates"] == ("Pod resources updated by hamster-vpa: container 0: memory capped to "
                                         "container limit, cpu request, memory request")


def test_limit_range_min_then_container_limit():
    # upstream: TestApplyLimitRangeMinToRequest "caps to container limit if below container limit":
    # requests 1 / 50M, limits 1 / 100M, a container LimitRange min memory 500M, RequestsOnly, target
    # 1 / 200M -> 1 / 100M, annotations "memory capped to fit Min in container LimitRange", "memory
    # capped to container limit"
    p = pod(container(requests={"cpu": "1", "memory": "50M"}, limits={"cpu": "1", "memory": "100M"}))
    out, annotations = mutated(p, vpa(targets={"hamster": {"cpu": "1", "memory": "200M"}}, policies=REQUESTS_ONLY),
                               [limit_range(min={"memory": "500M"})])
    assert resources(out)["requests"] == {"cpu": "1", "memory": "100M"}
    assert annotations["vpaUpdates"] == ("Pod resources updated by hamster-vpa: container 0: memory capped to fit "
                                         "Min in container LimitRange, memory capped to container limit, cpu request, "
                                         "memory request")


def test_issue_26_requests_only_pods_are_admitted_by_the_api_server():
    # the issue's case: target 712m, limit 200m, RequestsOnly -- capped at 200m, so the API server
    # takes the pod (request <= limit) where it refused every one before
    async def go():
        clock = WallClock()
        store = open_store("memory", clock=clock)
        registry = Registry(store, clock, default_chain(store, clock))
        await bootstrap(registry)
        client = InProcessClient(registry)
        registry.admission.plugins.append(VpaAdmissionPlugin(client))
        labels = {"app": "hamster"}
        deploy = await client.create("apps/deployments", {
            "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "hamster", "namespace": "default"},
            "spec": {"replicas": 1, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"containers": [{"name": "hamster", "image": "hamster"}]}}}})
        rs = await client.create("apps/replicasets", {
            "apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": "hamster-abc", "namespace": "default", "ownerReferences": [
                {"apiVersion": "apps/v1", "kind": "Deployment", "name": "hamster", "uid": deploy["metadata"]["uid"],
                 "controller": True}]},
            "spec": {"replicas": 1, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"containers": [{"name": "hamster", "image": "hamster"}]}}}})
        v = vpa(targets={"hamster": {"cpu": "712m", "memory": "100Mi"}}, policies=REQUESTS_ONLY, mode="Recreate")
        status = v.pop("status")
        del v["metadata"]["creationTimestamp"]
        created = await client.create("autoscaling.k8s.io/verticalpodautoscalers", v)
        created["status"] = status
        await client.update_status("autoscaling.k8s.io/verticalpodautoscalers", created)
        p = pod(container(requests={"cpu": "100m", "memory": "50Mi"}, limits={"cpu": "200m", "memory": "500Mi"}),
                owner=("ReplicaSet", "hamster-abc"))
        p["metadata"]["ownerReferences"][0]["uid"] = rs["metadata"]["uid"]
        made = await client.create("pods", p)
        store.close()
        return made
    made = asyncio.run(go())
    assert made["spec"]["containers"][0]["resources"] == {"requests": {"cpu": "200m", "memory": "100Mi"},
                                                          "limits": {"cpu": "200m", "memory": "500Mi"}}
    assert "cpu capped to container limit" in made["metadata"]["annotations"]["vpaUpdates"]


def test_reviews_are_counted_as_upstreams_admission_metrics():
    # upstream: logic/server.go: OnAdmittedPod(applied) for pods, admission latency by status
    # (applied / skipped) and resource (Pod / VPA)
    from kvert.registry.admission import Attributes
    from kvert.vpa.instruments import AdmissionMetrics

    from tests.vpa.test_admission import cluster as fake_cluster

    metrics = AdmissionMetrics()
    v = vpa(targets={"hamster": {"cpu": "712m"}}, policies=REQUESTS_ONLY)
    plugin = VpaAdmissionPlugin(fake_cluster(v), WallClock(), metrics=metrics)
    matched = pod(container(requests={"cpu": "100m"}, limits={"cpu": "200m"}), owner=("ReplicaSet", "hamster-abc"))
    unmatched = pod(container(requests={"cpu": "100m"}), labels={"app": "other"})
    for p in (matched, unmatched):
        asyncio.run(plugin.admit(Attributes("CREATE", "pods", "default", "hamster-1", p)))
    plugin.admission.review_vpa(vpa(mode="Recreate"))      # nothing to default: skipped
    value = metrics.registry.get_sample_value
    assert value("vpa_admission_controller_admission_pods_total", {"applied": "true"}) == 1
    assert value("vpa_admission_controller_admission_pods_total", {"applied": "false"}) == 1
    assert value("vpa_admission_controller_admission_latency_seconds_count", {"status": "applied", "resource": "Pod"}) == 1
    assert value("vpa_admission_controller_admission_latency_seconds_count", {"status": "skipped", "resource": "VPA"}) == 1
    assert matched["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "200m"}
