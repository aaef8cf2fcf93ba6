"""The VPA admission controller's pure logic (mutate_pod) and matching (VpaMatcher)."""

import asyncio
import copy

from kvert.vpa.admission import (VpaAdmission, VpaAdmissionPlugin, VpaMatcher, apply_patch,
                                 container_limit_range_item, mutate_pod)
from kvert.registry.admission import Attributes


def vpa(name="hamster-vpa", *, targets=None, mode=None, policies=None, created="2024-05-01T00:00:00Z",
        target_ref=("Deployment", "hamster"), namespace="default"):
    spec = {}
    if target_ref:
        spec["targetRef"] = {"apiVersion": "apps/v1", "kind": target_ref[0], "name": target_ref[1]}
    if mode:
        spec["updatePolicy"] = {"updateMode": mode}
    if policies:
        spec["resourcePolicy"] = {"containerPolicies": policies}
    obj = {"apiVersion": "autoscaling.k8s.io/v1", "kind": "VerticalPodAutoscaler",
           "metadata": {"name": name, "namespace": namespace, "creationTimestamp": created},
           "spec": spec}
    if targets is not None:
        obj["status"] = {"recommendation": {"containerRecommendations": [
            {"containerName": c, "target": t, "lowerBound": t, "upperBound": t, "uncappedTarget": t}
            for c, t in targets.items()]}}
    return obj


def pod(*containers, annotations=None, labels=None, owner=None):
    meta = {"name": "hamster-1", "namespace": "default", "labels": labels or {"app": "hamster"}}
    if annotations is not None:
        meta["annotations"] = annotations
    if owner:
        meta["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": owner[0], "name": owner[1],
                                    "uid": "u", "controller": True}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": {"containers": list(containers)}}


def container(name="hamster", requests=None, limits=None):
    c = {"name": name, "image": "hamster"}
    resources = {}
    if requests is not None:
        resources["requests"] = dict(requests)
    if limits is not None:
        resources["limits"] = dict(limits)
    if requests is not None or limits is not None:
        c["resources"] = resources
    return c


def limit_range(**item):
    return {"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "lr", "namespace": "default"},
            "spec": {"limits": [{"type": "Container", **item}]}}


def mutated(p, *args, **kw):
    ops, annotations, chosen, warnings = mutate_pod(p, *args, **kw)
    out = copy.deepcopy(p)
    apply_patch(out, ops)
    return out, ops, annotations, chosen, warnings


def resources(p, i=0):
    return p["spec"]["containers"][i].get("resources")


def test_target_applied_to_requests_and_annotations_as_upstream():
    p = pod(container(requests={"cpu": "100m", "memory": "50Mi"}))
    out, ops, annotations, chosen, warnings = mutated(p, [vpa(targets={"hamster": {"cpu": "587m", "memory": "262144k"}})])
    assert resources(out) == {"requests": {"cpu": "587m", "memory": "262144k"}}
    assert chosen["metadata"]["name"] == "hamster-vpa"
    assert warnings == []
    assert out["metadata"]["annotations"] == {
        "vpaUpdates": "Pod resources updated by hamster-vpa: container 0: cpu request, memory request",
        "vpaObservedContainers": "hamster"}
    assert annotations == out["metadata"]["annotations"]
    # upstream's patch shape: the annotations object is created first when missing
    assert {"op": "add", "path": "/metadata/annotations", "value": {}} in ops


def test_missing_resources_are_created():
    p = pod(container(), annotations={"keep": "me"})
    out, ops, *_ = mutated(p, [vpa(targets={"hamster": {"cpu": "250m", "memory": "256Mi"}})])
    assert ops[0] == {"op": "add", "path": "/spec/containers/0/resources", "value": {}}
    assert resources(out) == {"requests": {"cpu": "250m", "memory": "256Mi"}}
    assert out["metadata"]["annotations"]["keep"] == "me"


def test_limits_keep_the_original_ratio():
    p = pod(container(requests={"cpu": "100m", "memory": "100Mi"}, limits={"cpu": "200m", "memory": "150Mi"}))
    out, _, annotations, *_ = mutated(p, [vpa(targets={"hamster": {"cpu": "300m", "memory": "200Mi"}})])
    assert resources(out)["requests"] == {"cpu": "300m", "memory": "200Mi"}
    assert resources(out)["limits"] == {"cpu": "600m", "memory": "300Mi"}
    assert annotations["vpaUpdates"] == ("Pod resources updated by hamster-vpa: container 0: cpu request, "
                                         "memory request, cpu limit, memory limit")


def test_requests_only_leaves_limits_alone():
    p = pod(container(requests={"cpu": "100m"}, limits={"cpu": "200m"}))
    v = vpa(targets={"hamster": {"cpu": "150m"}},
            policies=[{"containerName": "*", "controlledValues": "RequestsOnly"}])
    out, *_ = mutated(p, [v])
    assert resources(out) == {"requests": {"cpu": "150m"}, "limits": {"cpu": "200m"}}


def test_capped_by_max_allowed_and_min_allowed():
    p = pod(container(requests={"cpu": "100m", "memory": "50Mi"}))
    v = vpa(targets={"hamster": {"cpu": "5", "memory": "10Mi"}},
            policies=[{"containerName": "hamster", "maxAllowed": {"cpu": "1"}, "minAllowed": {"memory": "64Mi"}}])
    out, _, annotations, *_ = mutated(p, [v])
    assert resources(out)["requests"] == {"cpu": "1", "memory": "64Mi"}
    assert annotations["vpaUpdates"] == ("Pod resources updated by hamster-vpa: container 0: cpu capped to "
                                         "maxAllowed, memory capped to minAllowed, cpu request, memory request")


def test_capped_by_limit_range_max_of_the_implied_limit():
    # request 100m / limit 200m; the LimitRange allows limits up to 1: the request may reach 500m
    p = pod(container(requests={"cpu": "100m"}, limits={"cpu": "200m"}))
    out, *_ = mutated(p, [vpa(targets={"hamster": {"cpu": "2"}})], [limit_range(max={"cpu": "1"})])
    assert resources(out) == {"requests": {"cpu": "500m"}, "limits": {"cpu": "1"}}


def test_limit_range_min_and_max_limit_request_ratio():
    p = pod(container(requests={"memory": "100Mi"}, limits={"memory": "400Mi"}))
    lr = limit_range(min={"memory": "128Mi"}, maxLimitRequestRatio={"memory": "2"})
    out, _, annotations, *_ = mutated(p, [vpa(targets={"hamster": {"memory": "64Mi"}})], [lr])
    assert resources(out)["requests"] == {"memory": "128Mi"}
    assert resources(out)["limits"] == {"memory": "256Mi"}   # 512Mi by ratio, capped to 2 x request
    assert "memory limit capped to fit MaxLimitRequestRatio in container LimitRange" in annotations["vpaUpdates"]


def test_limit_range_default_limit_scales():
    p = pod(container(requests={"cpu": "100m"}))
    out, *_ = mutated(p, [vpa(targets={"hamster": {"cpu": "200m"}})], [limit_range(default={"cpu": "300m"})])
    assert resources(out) == {"requests": {"cpu": "200m"}, "limits": {"cpu": "600m"}}


def test_merged_container_limit_range_items():
    item = container_limit_range_item([limit_range(max={"cpu": "2"}, min={"cpu": "10m"}),
                                       limit_range(max={"cpu": "1"}, min={"cpu": "50m"})])
    assert item == {"max": {"cpu": "1"}, "min": {"cpu": "50m"}}
    assert container_limit_range_item([]) is None


def test_no_recommendation_passes_unchanged():
    p = pod(container(requests={"cpu": "100m"}))
    assert mutate_pod(p, [vpa()])[:2] == ([], {})
    # a recommendation for another container only
    assert mutate_pod(p, [vpa(targets={"other": {"cpu": "1"}})])[:2] == ([], {})
    # no VPA at all
    assert mutate_pod(p, []) == ([], {}, None, [])


def test_mode_off_vpa_and_container_mode_off_are_skipped():
    p = pod(container("a", requests={"cpu": "100m"}), container("b", requests={"cpu": "100m"}))
    targets = {"a": {"cpu": "1"}, "b": {"cpu": "2"}}
    assert mutate_pod(p, [vpa(targets=targets, mode="Off")]) == ([], {}, None, [])
    v = vpa(targets=targets, mode="Initial", policies=[{"containerName": "a", "mode": "Off"}])
    out, _, annotations, *_ = mutated(p, [v])
    assert resources(out, 0) == {"requests": {"cpu": "100m"}}
    assert resources(out, 1) == {"requests": {"cpu": "2"}}
    assert annotations["vpaUpdates"] == "Pod resources updated by hamster-vpa: container 1: cpu request"
    assert annotations["vpaObservedContainers"] == "a, b"


def test_controlled_resources_limit_what_changes():
    p = pod(container(requests={"cpu": "100m", "memory": "50Mi"}))
    v = vpa(targets={"hamster": {"cpu": "1", "memory": "1Gi"}},
            policies=[{"containerName": "*", "controlledResources": ["memory"]}])
    out, *_ = mutated(p, [v])
    assert resources(out)["requests"] == {"cpu": "100m", "memory": "1Gi"}


def test_two_vpas_oldest_then_name_wins_with_a_warning():
    p = pod(container(requests={"cpu": "100m"}))
    old = vpa("zeta", targets={"hamster": {"cpu": "1"}}, created="2024-01-01T00:00:00Z")
    new = vpa("alpha", targets={"hamster": {"cpu": "2"}}, created="2024-06-01T00:00:00Z")
    for order in ([old, new], [new, old]):
        out, _, _, chosen, warnings = mutated(p, order)
        assert chosen["metadata"]["name"] == "zeta"
        assert resources(out)["requests"] == {"cpu": "1"}
        assert warnings == ["2 VerticalPodAutoscalers (zeta, alpha) match pods of Deployment/hamster; "
                            "using zeta (the oldest by creationTimestamp, then by name)"]
    same = vpa("beta", targets={"hamster": {"cpu": "3"}}, created="2024-01-01T00:00:00Z")
    assert mutate_pod(p, [old, same])[2]["metadata"]["name"] == "beta"
    # an Off VPA does not compete
    off = vpa("aaa", targets={"hamster": {"cpu": "9"}}, mode="Off", created="2020-01-01T00:00:00Z")
    _, _, _, chosen, warnings = mutated(p, [off, new])
    assert chosen["metadata"]["name"] == "alpha" and warnings == []


# -- matching through a client ------------------------------------------------------------------

class FakeClient:
    def __init__(self, objects):
        self.objects = objects   # resource -> list
        self.events = []

    async def list(self, resource, *, namespace=None, **kw):
        return {"items": [o for o in self.objects.get(resource, [])
                          if namespace is None or o["metadata"].get("namespace") == namespace]}

    async def get(self, resource, name, namespace=""):
        from kvert.api.errors import NotFound
        for o in self.objects.get(resource, []):
            if o["metadata"]["name"] == name and o["metadata"].get("namespace", "") == namespace:
                return o
        raise NotFound(resource, name)

    async def create(self, resource, obj, namespace=None, **kw):
        self.events.append(obj)
        return obj


def owned(kind, name, owner=None, selector=None):
    meta = {"name": name, "namespace": "default"}
    if owner:
        meta["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": owner[0], "name": owner[1], "controller": True}]
    return {"apiVersion": "apps/v1", "kind": kind, "metadata": meta,
            "spec": {"selector": {"matchLabels": selector or {"app": "hamster"}}}}


def cluster(*vpas):
    return FakeClient({
        "autoscaling.k8s.io/verticalpodautoscalers": list(vpas),
        "apps/deployments": [owned("Deployment", "hamster"), owned("Deployment", "other", selector={"app": "o"})],
        "apps/replicasets": [owned("ReplicaSet", "hamster-abc", ("Deployment", "hamster"))],
        "limitranges": [limit_range(max={"cpu": "800m"})],
    })


def run(coro):
    return asyncio.run(coro)


def test_matcher_follows_replicaset_to_deployment():
    client = cluster(vpa(targets={"hamster": {"cpu": "1"}}),
                     vpa("rs-vpa", target_ref=("ReplicaSet", "hamster-abc")),
                     vpa("other-vpa", target_ref=("Deployment", "other")))
    m = VpaMatcher(client)
    p = pod(container(), owner=("ReplicaSet", "hamster-abc"))
    assert [v["metadata"]["name"] for v in run(m.matching_vpas(p))] == ["hamster-vpa"]
    # pod labels must match the target's selector too
    assert run(m.matching_vpas(pod(container(), owner=("ReplicaSet", "hamster-abc"), labels={"app": "x"}))) == []
    # a bare pod matches by the target's selector (the ReplicaSet's too)
    assert [v["metadata"]["name"] for v in run(m.matching_vpas(pod(container())))] == ["hamster-vpa", "rs-vpa"]
    assert run(m.matching_vpas(pod(container(), labels={"app": "nothing"}))) == []


def test_plugin_mutates_and_caps_by_namespace_limit_range():
    client = cluster(vpa(targets={"hamster": {"cpu": "1"}}))
    plugin = VpaAdmissionPlugin(client)
    p = pod(container(requests={"cpu": "100m"}), owner=("ReplicaSet", "hamster-abc"))
    attrs = Attributes("CREATE", "pods", "default", "hamster-1", p)
    run(plugin.admit(attrs))
    assert p["spec"]["containers"][0]["resources"] == {"requests": {"cpu": "800m"}}
    assert p["metadata"]["annotations"]["vpaObservedContainers"] == "hamster"


def test_two_vpas_record_a_warning_event_on_each_vpa():
    from kvert.client.events import EventRecorder
    from kvert.clock import VirtualClock
    client = cluster(vpa("b-vpa", targets={"hamster": {"cpu": "100m"}}),
                     vpa("a-vpa", targets={"hamster": {"cpu": "200m"}}))

    async def go():
        admission = VpaAdmission(VpaMatcher(client), EventRecorder(client, VirtualClock(), "vpa-admission-controller"))
        ops, warnings = await admission.review(pod(container(), owner=("ReplicaSet", "hamster-abc")))
        await admission.drain()
        return ops, warnings

    ops, warnings = run(go())
    assert {"op": "add", "path": "/spec/containers/0/resources/requests/cpu", "value": "200m"} in ops
    assert len(warnings) == 1 and "using a-vpa" in warnings[0]
    assert [(e["involvedObject"]["kind"], e["involvedObject"]["name"], e["type"], e["reason"])
            for e in client.events] == [("VerticalPodAutoscaler", "a-vpa", "Warning", "MultipleVPAs"),
                                        ("VerticalPodAutoscaler", "b-vpa", "Warning", "MultipleVPAs")]
