"""The scheduler's per-pod request memo: a pod counted after another pod (any other) gives
what it gives counted alone -- the memo shares results between pods and versions whose
resource inputs are the same, never between ones that differ."""

from hypothesis import given, settings
from hypothesis import strategies as st

from kvert.scheduler import cache

quantities = st.sampled_from(["100m", "250m", "1", "128Mi", "1Gi", "200Mi", "0"])
resource_lists = st.none() | st.dictionaries(st.sampled_from(["cpu", "memory"]), quantities, max_size=2)
resources = st.fixed_dictionaries({}, optional={"requests": resource_lists, "limits": resource_lists})


def _alone(pod):
    cache._MEMO.clear()
    try:
        return cache.pod_resources(pod)
    finally:
        cache._MEMO.clear()


@st.composite
def statuses(draw, names):
    status = {}
    if draw(st.booleans()):
        status["containerStatuses"] = [
            {"name": n, "containerID": draw(st.sampled_from(["x://1", "x://2"])),
             **({"allocatedResources": draw(resource_lists) or {}} if draw(st.booleans()) else {}),
             **({"resources": draw(resources)} if draw(st.booleans()) else {})} for n in names]
    conditions = draw(st.lists(st.sampled_from([
        {"type": "Ready", "status": "True"},
        {"type": "PodResizePending", "status": "True", "reason": "Infeasible"},
        {"type": "PodResizePending", "status": "True", "reason": "Deferred"}]), max_size=2))
    if conditions:
        status["conditions"] = conditions
    return status


@st.composite
def pods(draw):
    names = draw(st.lists(st.sampled_from(["a", "b", "c"]), min_size=1, max_size=2, unique=True))
    containers = [{"name": n, "image": "x", "resources": draw(resources)} for n in names]
    inits = [{"name": "init", "image": "x", "resources": draw(resources),
              **({"restartPolicy": "Always"} if draw(st.booleans()) else {})}] if draw(st.booleans()) else []
    spec = {"containers": containers}
    if inits:
        spec["initContainers"] = inits
    if draw(st.booleans()):
        spec["overhead"] = {"cpu": "50m"}
    return {"metadata": {"uid": draw(st.sampled_from(["u1", "u2", "u3"])),
                         "resourceVersion": draw(st.sampled_from(["1", "2"]))},
            "spec": spec, "status": draw(statuses(names))}


@st.composite
def replicas(draw):
    """Pods of one template (the same spec) in different states, and others."""
    base = draw(pods())
    names = [c["name"] for c in base["spec"]["containers"]]
    seq = [base]
    for _ in range(draw(st.integers(1, 3))):
        if draw(st.booleans()):
            status = draw(statuses(names)) if draw(st.booleans()) else dict(base["status"])
            if draw(st.booleans()):     # the same state but one container's reported resources
                status["containerStatuses"] = [
                    {**cs, "resources": draw(resources)} if i == 0 else cs
                    for i, cs in enumerate(status.get("containerStatuses")
                                           or [{"name": n} for n in names])]
            seq.append({"metadata": {"uid": "r", "resourceVersion": "1"}, "spec": base["spec"],
                        "status": status})
        else:
            seq.append(draw(pods()))
    return seq


@settings(max_examples=400, deadline=None)
@given(replicas())
def test_a_pod_counts_the_same_after_any_other(seq):
    for pod in seq:
        pod["metadata"] = {**pod["metadata"], "resourceVersion": pod["metadata"]["resourceVersion"] + "-" + str(id(pod))}
    expected = [_alone(p) for p in seq]
    got = [cache.pod_resources(p) for p in seq]
    cache._MEMO.clear()
    assert got == expected


def test_replicas_running_alike_share_one_count():
    cache._MEMO.clear()
    pod = {"metadata": {"uid": "u1", "resourceVersion": "7"},
           "spec": {"containers": [{"name": "app", "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}}]},
           "status": {"podIP": "10.0.0.1", "containerStatuses": [
               {"name": "app", "containerID": "x://1", "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}}]}}
    twin = {**pod, "metadata": {"uid": "u2", "resourceVersion": "9"},
            "status": {**pod["status"], "podIP": "10.0.0.2"}}
    assert cache.pod_resources(pod) is cache.pod_resources(twin)
    assert cache.pod_resources(twin)[0] == {"cpu": 100, "memory": 128 * 2**20}
    cache._MEMO.clear()
