"""Pod requests, limits and QoS, checked against Kubernetes' docs and component-helpers tests."""

from __future__ import annotations

import copy

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kvert.api.pods import (
    BEST_EFFORT,
    BURSTABLE,
    GUARANTEED,
    compute_qos_class,
    container_limits,
    container_requests,
    is_pod_resize_infeasible,
    is_restartable_init_container,
    pod_level_resources,
    pod_limits,
    pod_requests,
    qos_class,
)
from kvert.api.quantity import QuantityError
from kvert.api.resources import add, less_or_equal, max_of, parse_resource_list

Mi = 2**20
Gi = 2**30


def ctr(name="c", requests=None, limits=None, restart=None):
    c = {"name": name, "image": "busybox"}
    res = {}
    if requests is not None:
        res["requests"] = requests
    if limits is not None:
        res["limits"] = limits
    if res:
        c["resources"] = res
    if restart:
        c["restartPolicy"] = restart
    return c


def sidecar(name, requests=None, limits=None):
    return ctr(name, requests, limits, restart="Always")


def pod(containers=(), init=(), overhead=None, resources=None, status=None):
    spec = {"containers": list(containers)}
    if init:
        spec["initContainers"] = list(init)
    if overhead is not None:
        spec["overhead"] = overhead
    if resources is not None:
        spec["resources"] = resources
    p = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": spec}
    if status is not None:
        p["status"] = status
    return p


def cpu(x):
    return {"cpu": x}


# --- containers ------------------------------------------------------------------------------

def test_container_requests_default_from_limits():
    c = ctr(requests={"memory": "100Mi"}, limits={"cpu": "700m", "memory": "200Mi", "nvidia.com/gpu": 1})
    assert container_requests(c) == {"memory": 100 * Mi, "cpu": 700, "nvidia.com/gpu": 1}
    assert container_limits(c) == {"cpu": 700, "memory": 200 * Mi, "nvidia.com/gpu": 1}
    assert container_requests(ctr()) == {} and container_limits(ctr()) == {}
    assert container_requests({"name": "x", "resources": None}) == {}


def test_restartable_init_container():
    assert is_restartable_init_container(sidecar("s"))
    assert not is_restartable_init_container(ctr("i"))
    assert not is_restartable_init_container(ctr("i", restart="Never"))


def test_bad_quantity_names_the_field():
    p = pod([ctr("a", requests=cpu("1")), ctr("b", requests={"memory": "1.2.3"})])
    with pytest.raises(QuantityError) as info:
        pod_requests(p)
    assert info.value.field == "spec.containers[1].resources.requests[memory]"
    assert "cannot parse '1.2.3'" in str(info.value)


# --- component-helpers TestPodRequestsAndLimits ----------------------------------------------

@pytest.mark.parametrize(
    "res, overhead, want_req, want_lim",
    [
        # Kubernetes' table expects requests {} here because it skips API defaulting; a stored
        # pod has request = limit, which is what we count.
        ({"limits": cpu("9")}, None, cpu(9000), cpu(9000)),
        ({}, {"cpu": "5", "memory": "5"}, {"cpu": 5000, "memory": 5}, {}),
        ({"requests": {"cpu": "1", "memory": "10"}}, {"cpu": "5", "memory": "5"},
         {"cpu": 6000, "memory": 15}, {}),
        ({"requests": {"cpu": "1", "memory": "10"}, "limits": {"cpu": "2", "memory": "12"}},
         {"cpu": "5", "memory": "5"}, {"cpu": 6000, "memory": 15}, {"cpu": 7000, "memory": 17}),
        ({"requests": {"cpu": "1", "memory": "10"}, "limits": {"cpu": "2"}},
         {"cpu": "5", "memory": "5"}, {"cpu": 6000, "memory": 15}, {"cpu": 7000}),
    ],
)
def test_requests_and_limits_with_overhead(res, overhead, want_req, want_lim):
    p = pod([ctr("foo", res.get("requests"), res.get("limits"))], overhead=overhead)
    assert pod_requests(p) == want_req
    assert pod_limits(p) == want_lim


def test_without_overhead_and_massive_init():
    app = [ctr("foobar", {"cpu": "1", "memory": "5"}, {"cpu": "2", "memory": "10"}),
           ctr("foobar2", {"cpu": "4", "memory": "12"}, {"cpu": "8", "memory": "24"})]
    p = pod(app, overhead={"cpu": "3", "memory": "8"})
    assert pod_requests(p, include_overhead=False) == {"cpu": 5000, "memory": 17}
    assert pod_limits(p, include_overhead=False) == {"cpu": 10000, "memory": 34}
    init = [ctr("small-init", {"cpu": "1", "memory": "5"}, {"cpu": "1", "memory": "5"}),
            ctr("big-init", {"cpu": "40", "memory": "120"}, {"cpu": "80", "memory": "240"})]
    p = pod(app, init, overhead={"cpu": "3", "memory": "8"})
    assert pod_requests(p, include_overhead=False) == {"cpu": 40000, "memory": 120}
    assert pod_limits(p, include_overhead=False) == {"cpu": 80000, "memory": 240}


def test_overhead_added_only_to_non_zero_limits():
    p = pod([ctr("a", limits=cpu("2")), ctr("b", limits=cpu("3"))], [ctr("i", limits=cpu("2"))],
            overhead={"cpu": "1", "memory": "1Gi"})
    assert pod_limits(p) == {"cpu": 6000}  # no memory limit anywhere, so none is invented
    assert pod_requests(p) == {"cpu": 6000, "memory": Gi}


def test_unlimited_container_does_not_limit_the_pod():
    p = pod([ctr("a", limits={"cpu": "2", "memory": "2Gi"}), ctr("b")])
    assert pod_limits(p) == {"cpu": 2000, "memory": 2 * Gi}
    assert pod_limits(pod([ctr("a")])) == {}


# --- docs: Pod Overhead ----------------------------------------------------------------------

def test_pod_overhead_docs_example():
    """kubernetes.io Pod Overhead: kata-fc overhead 250m/120Mi, containers 500m/100Mi and
    1500m/100Mi (limits only): requests 2250m/320Mi, pod cgroup limits 2250m/335544320."""
    p = pod([ctr("busybox-ctr", limits={"cpu": "500m", "memory": "100Mi"}),
             ctr("nginx-ctr", limits={"cpu": "1500m", "memory": "100Mi"})],
            overhead={"memory": "120Mi", "cpu": "250m"})
    assert pod_requests(p) == {"cpu": 2250, "memory": 320 * Mi}
    assert pod_limits(p) == {"cpu": 2250, "memory": 335544320}
    assert pod_requests(p, include_overhead=False) == {"cpu": 2000, "memory": 200 * Mi}
    assert qos_class(p) == GUARANTEED


# --- init containers and sidecars (KEP-753; component-helpers TestPodResourceRequests) -------

def test_init_container_classic():
    """Effective init request is the largest init container; pod takes the larger phase."""
    p = pod([ctr("app", {"memory": "1Gi", "cpu": "500m"}, {"memory": "1Gi", "cpu": "500m"}),
             ctr("log-aggregator", {"memory": "1Gi", "cpu": "250m"}, {"memory": "1Gi", "cpu": "250m"})],
            [ctr("config-generator", {"memory": "256Mi", "cpu": "250m"}, {"memory": "256Mi", "cpu": "250m"}),
             ctr("mysql-checker", {"memory": "1Gi", "cpu": "500m"}, {"memory": "1Gi", "cpu": "500m"})])
    assert pod_requests(p) == {"cpu": 750, "memory": 2 * Gi}
    assert pod_limits(p) == {"cpu": 750, "memory": 2 * Gi}
    assert pod_requests(pod([ctr("c", cpu("1"))], [ctr("i", cpu("4"))])) == cpu(4000)
    assert pod_requests(pod([ctr("a", cpu("2")), ctr("b", cpu("3"))], [ctr("i", cpu("2"))])) == cpu(5000)


@pytest.mark.parametrize(
    "init, want",
    [
        ([sidecar("r1", cpu("1"))], 2000),  # restartable init + regular container
        # max(5, sidecars 1+2+3 + regular 1) = 7
        ([ctr("init-1", cpu("5")), sidecar("r1", cpu("1")), sidecar("r2", cpu("2")), sidecar("r3", cpu("3"))],
         7000),
        # init-2 needs 5 + the sidecars already running (1+2) = 8; r3 starts after it
        ([ctr("init-1", cpu("5")), sidecar("r1", cpu("1")), sidecar("r2", cpu("2")), ctr("init-2", cpu("5")),
          sidecar("r3", cpu("3"))], 8000),
    ],
)
def test_sidecars(init, want):
    assert pod_requests(pod([ctr("container-1", cpu("1"))], init)) == cpu(want)


def test_sidecar_then_big_init():
    p = pod([ctr("container-1", cpu("100"))], [sidecar("r1", cpu("10")), ctr("init-1", cpu("200"))])
    assert pod_requests(p) == cpu(210000)


def test_sidecar_limits_accumulate_too():
    p = pod([ctr("app", limits={"memory": "1Gi"})],
            [sidecar("proxy", limits={"memory": "256Mi"}), ctr("migrate", limits={"memory": "2Gi"})])
    assert pod_limits(p) == {"memory": 2 * Gi + 256 * Mi}
    assert pod_requests(p) == {"memory": 2 * Gi + 256 * Mi}


# --- in-place resize: use_status_resources ----------------------------------------------------

INFEASIBLE = [{"type": "PodResizePending", "status": "True", "reason": "Infeasible"}]
DEFERRED = [{"type": "PodResizePending", "status": "True", "reason": "Deferred"}]


def status(container_statuses=(), init_statuses=(), conditions=None):
    s = {"containerStatuses": list(container_statuses)}
    if init_statuses:
        s["initContainerStatuses"] = list(init_statuses)
    if conditions is not None:
        s["conditions"] = conditions
    return s


def cstatus(name, allocated=None, actual_requests=None, actual_limits=None):
    cs = {"name": name}
    if allocated is not None:
        cs["allocatedResources"] = allocated
    if actual_requests is not None or actual_limits is not None:
        cs["resources"] = {}
        if actual_requests is not None:
            cs["resources"]["requests"] = actual_requests
        if actual_limits is not None:
            cs["resources"]["limits"] = actual_limits
    return cs


@pytest.mark.parametrize(
    "spec_cpu, cs, conditions, want",
    [
        ("4", cstatus("c1", actual_requests=cpu("2")), INFEASIBLE, 2000),  # infeasible: spec ignored
        ("6", cstatus("c1", allocated=cpu("4"), actual_requests=cpu("2")), INFEASIBLE, 4000),
        ("4", cstatus("c1", actual_requests=cpu("2")), None, 4000),  # no resize status: spec counts
        ("4", cstatus("c1", actual_requests=cpu("2")), DEFERRED, 4000),
        ("2", cstatus("c1", allocated=cpu("3"), actual_requests=cpu("3")), None, 3000),  # downsize pending
        ("5", cstatus("c1", allocated=cpu("3"), actual_requests=cpu("3")), None, 5000),  # upsize reserved
        ("4", None, INFEASIBLE, 0),  # infeasible and nothing reported yet
    ],
)
def test_resize(spec_cpu, cs, conditions, want):
    p = pod([ctr("c1", cpu(spec_cpu))], status=status([cs] if cs else [], conditions=conditions))
    assert pod_requests(p, use_status_resources=True) == ({"cpu": want} if want else {})
    assert pod_requests(p) == cpu(int(float(spec_cpu) * 1000))  # without status: spec only


def test_resize_three_way_max_per_resource():
    p = pod([ctr("c1", {"cpu": "30m", "memory": "20M", "ephemeral-storage": "10G"})],
            status=status([cstatus("c1", allocated={"cpu": "20m", "memory": "10M", "ephemeral-storage": "30G"},
                                   actual_requests={"cpu": "10m", "memory": "30M", "ephemeral-storage": "20G"})]))
    assert pod_requests(p, use_status_resources=True) == {"cpu": 30, "memory": 30_000_000,
                                                          "ephemeral-storage": 30_000_000_000}


def test_resize_max_of_sums_not_sum_of_maxes():
    p = pod([ctr("c1", cpu("1")), ctr("c2", cpu("2"))],
            status=status([cstatus("c1", allocated=cpu("2")), cstatus("c2", allocated=cpu("1"))]))
    assert pod_requests(p, use_status_resources=True) == cpu(3000)


def test_resize_sidecar_uses_init_container_status():
    init = [sidecar("restartable-init-1", cpu("4"))]
    infeasible = pod(init=init, status=status([], [cstatus("restartable-init-1", actual_requests=cpu("2"))],
                                              INFEASIBLE))
    assert pod_requests(infeasible, use_status_resources=True) == cpu(2000)
    assert pod_requests(infeasible) == cpu(4000)
    pending = copy.deepcopy(infeasible)
    del pending["status"]["conditions"]
    assert pod_requests(pending, use_status_resources=True) == cpu(4000)


def test_resize_limits():
    p = pod([ctr("c1", limits={"cpu": "1", "memory": "1Gi"})],
            status=status([cstatus("c1", actual_limits={"cpu": "2", "memory": "512Mi"})]))
    assert pod_limits(p, use_status_resources=True) == {"cpu": 2000, "memory": Gi}
    p["status"]["conditions"] = INFEASIBLE
    assert pod_limits(p, use_status_resources=True) == {"cpu": 2000, "memory": 512 * Mi}
    assert is_pod_resize_infeasible(p)
    assert pod_limits(p) == {"cpu": 1000, "memory": Gi}


# --- pod-level resources (KEP-2837) ----------------------------------------------------------

def test_pod_level_requests_override_containers():
    p = pod([ctr("a", {"cpu": "100m", "memory": "100Mi", "ephemeral-storage": "1Gi"}), ctr("b", cpu("200m"))],
            resources={"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "2", "memory": "2Gi"}},
            overhead={"cpu": "100m"})
    assert pod_requests(p) == {"cpu": 1100, "memory": Gi, "ephemeral-storage": Gi}
    assert pod_limits(p) == {"cpu": 2100, "memory": 2 * Gi}
    assert qos_class(p) == BURSTABLE


def test_pod_level_request_defaults():
    # Pod limits only, no container requests: pod requests default to pod limits -> Guaranteed.
    p = pod([ctr("a"), ctr("b")], resources={"limits": {"cpu": "1", "memory": "1Gi"}})
    assert pod_level_resources(p) == ({"cpu": 1000, "memory": Gi}, {"cpu": 1000, "memory": Gi})
    assert pod_requests(p) == {"cpu": 1000, "memory": Gi}
    assert compute_qos_class(p) == GUARANTEED
    # With container requests, the pod request is their aggregate (KEP example 6/9).
    p = pod([ctr("a", {"memory": "10Gi"}), ctr("b", {"memory": "20Gi"}), ctr("c", {"memory": "20Gi"})],
            resources={"limits": {"memory": "100Gi"}})
    assert pod_requests(p) == {"memory": 50 * Gi}
    assert compute_qos_class(p) == BURSTABLE
    assert pod_level_resources(pod([ctr("a")])) is None


# --- QoS: "Configure Quality of Service for Pods" and qos_test.go ----------------------------

@pytest.mark.parametrize(
    "containers, init, want",
    [
        ([ctr("qos-demo-ctr", {"memory": "200Mi", "cpu": "700m"}, {"memory": "200Mi", "cpu": "700m"})], [],
         GUARANTEED),
        ([ctr("qos-demo-ctr", limits={"memory": "200Mi", "cpu": "700m"})], [], GUARANTEED),  # defaulted
        ([ctr("qos-demo-2-ctr", {"memory": "100Mi"}, {"memory": "200Mi"})], [], BURSTABLE),
        ([ctr("qos-demo-3-ctr")], [], BEST_EFFORT),
        ([ctr("qos-demo-4-ctr-1", {"memory": "200Mi"}), ctr("qos-demo-4-ctr-2")], [], BURSTABLE),
        # only cpu and memory count
        ([ctr("a", {"ephemeral-storage": "1Gi", "nvidia.com/gpu": "1"}, {"nvidia.com/gpu": "1"})], [], BEST_EFFORT),
        ([ctr("a", {"cpu": "1", "memory": "1Gi", "nvidia.com/gpu": "1"},
              {"cpu": "1", "memory": "1Gi", "nvidia.com/gpu": "2"})], [], GUARANTEED),
        # zero quantities are ignored
        ([ctr("a", {"cpu": "0", "memory": "0"})], [], BEST_EFFORT),
        ([ctr("a", {"cpu": "0"}, {"cpu": "1", "memory": "1Gi"})], [], BURSTABLE),
        # a guaranteed container next to a best-effort one
        ([ctr("a", {"cpu": "1", "memory": "1Gi"}, {"cpu": "1", "memory": "1Gi"}), ctr("b")], [], BURSTABLE),
        # cpu only is not enough for Guaranteed
        ([ctr("a", cpu("1"), cpu("1"))], [], BURSTABLE),
        # init containers count: a best-effort init container spoils Guaranteed
        ([ctr("a", limits={"cpu": "1", "memory": "1Gi"})], [ctr("i")], BURSTABLE),
        ([ctr("a", limits={"cpu": "1", "memory": "1Gi"})], [ctr("i", limits={"cpu": "2", "memory": "2Gi"})],
         GUARANTEED),
        ([ctr("a")], [sidecar("s", {"memory": "10Mi"})], BURSTABLE),
    ],
)
def test_qos(containers, init, want):
    p = pod(containers, init)
    assert compute_qos_class(p) == want
    assert qos_class(p) == want


def test_qos_prefers_status():
    p = pod([ctr("a")], status={"qosClass": "Burstable"})
    assert qos_class(p) == BURSTABLE  # fixed at creation, even if the spec changed since
    assert compute_qos_class(p) == BEST_EFFORT


# --- properties ------------------------------------------------------------------------------

amount = st.integers(0, 4000)


@st.composite
def resource_block(draw):
    req = {}
    lim = {}
    for name, unit in (("cpu", "m"), ("memory", "Mi")):
        r = draw(st.one_of(st.none(), amount))
        lim_extra = draw(st.one_of(st.none(), amount))
        if r is not None:
            req[name] = f"{r}{unit}"
        if lim_extra is not None:
            lim[name] = f"{(r or 0) + lim_extra}{unit}"  # valid pods have request <= limit
    return req, lim


@st.composite
def containers(draw, prefix, allow_sidecar=False):
    out = []
    for i in range(draw(st.integers(0 if allow_sidecar else 1, 4))):
        req, lim = draw(resource_block())
        restart = "Always" if allow_sidecar and draw(st.booleans()) else None
        out.append(ctr(f"{prefix}{i}", req or None, lim or None, restart))
    return out


@st.composite
def pods(draw):
    overhead = draw(st.one_of(st.none(), st.fixed_dictionaries({"cpu": st.just("250m"), "memory": st.just("120Mi")})))
    return pod(draw(containers("c")), draw(containers("i", allow_sidecar=True)), overhead=overhead)


def phases(p, getter):
    """Every moment's total: each init step (with earlier sidecars) and the running phase."""
    steps, sidecars = [], {}
    for c in p["spec"].get("initContainers", []):
        if c.get("restartPolicy") == "Always":
            sidecars = add(sidecars, getter(c))
            steps.append(dict(sidecars))
        else:
            steps.append(add(getter(c), sidecars))
    running = sidecars
    for c in p["spec"]["containers"]:
        running = add(running, getter(c))
    return steps + [running]


@settings(max_examples=150, deadline=None)
@given(pods())
def test_requests_are_the_peak_phase(p):
    want = {}
    for phase in phases(p, container_requests):
        assert less_or_equal(phase, pod_requests(p, include_overhead=False))
        want = max_of(want, phase)
    got = pod_requests(p, include_overhead=False)
    assert all(got.get(k, 0) == want.get(k, 0) for k in set(got) | set(want))


@settings(max_examples=150, deadline=None)
@given(pods())
def test_overhead_adds_exactly(p):
    overhead = parse_resource_list(p["spec"].get("overhead"))
    assert pod_requests(p) == add(pod_requests(p, include_overhead=False), overhead)
    bare = pod_limits(p, include_overhead=False)
    assert pod_limits(p) == {k: v + (overhead.get(k, 0) if v else 0) for k, v in bare.items()}


@settings(max_examples=150, deadline=None)
@given(pods())
def test_status_equal_to_spec_changes_nothing(p):
    statuses = [cstatus(c["name"], allocated=c.get("resources", {}).get("requests", {}),
                        actual_requests=c.get("resources", {}).get("requests", {}))
                for c in p["spec"]["containers"]]
    with_status = copy.deepcopy(p)
    # allocatedResources holds the defaulted requests, as the kubelet reports them
    for cs, c in zip(statuses, p["spec"]["containers"]):
        cs["allocatedResources"] = cs["resources"]["requests"] = {
            k: f"{v}m" if k == "cpu" else str(v) for k, v in container_requests(c).items()}
    with_status["status"] = status(statuses)
    assert pod_requests(with_status, use_status_resources=True) == pod_requests(p)


@settings(max_examples=150, deadline=None)
@given(pods())
def test_qos_properties(p):
    every = p["spec"]["containers"] + p["spec"].get("initContainers", [])
    qos = compute_qos_class(p)
    has_any = any(container_requests(c).get(r, 0) > 0 or container_limits(c).get(r, 0) > 0
                  for c in every for r in ("cpu", "memory"))
    assert (qos == BEST_EFFORT) == (not has_any)
    all_equal = all(
        container_limits(c).get(r, 0) > 0 and container_requests(c).get(r, 0) == container_limits(c).get(r, 0)
        for c in every for r in ("cpu", "memory"))
    assert (qos == GUARANTEED) == all_equal


def test_bad_status_quantity_names_the_status_field():
    p = pod([ctr("c1", cpu("1"))], status=status([cstatus("c0"), cstatus("c1", allocated=cpu("x"))]))
    assert pod_requests(p) == cpu(1000)  # status is not read unless asked for
    with pytest.raises(QuantityError) as info:
        pod_requests(p, use_status_resources=True)
    assert info.value.field == "status.containerStatuses[1].allocatedResources[cpu]"
