"""The pod-resources view: figures from the Kubernetes documentation's examples, and the
cache by pod version.

Pages quoted: "Resource Management for Pods and Containers", "Init Containers" and "Sidecar
Containers" (resource sharing within containers), "Pod Overhead", and "Configure Quality of
Service for Pods".
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from kvert.api import podresources
from kvert.api.podresources import (
    APP,
    INIT,
    SIDECAR,
    compute_pod_resources,
    pod_resources,
)
from kvert.api.pods import BEST_EFFORT, BURSTABLE, GUARANTEED
from kvert.api.quantity import QuantityError

Mi = 2**20


def ctr(name: str, requests: dict[str, str] | None = None, limits: dict[str, str] | None = None,
        restart: str | None = None) -> dict[str, Any]:
    c: dict[str, Any] = {"name": name, "image": "registry.k8s.io/pause"}
    res: dict[str, Any] = {}
    if requests is not None:
        res["requests"] = requests
    if limits is not None:
        res["limits"] = limits
    if res:
        c["resources"] = res
    if restart is not None:
        c["restartPolicy"] = restart
    return c


def pod(*containers: dict[str, Any], init: tuple[dict[str, Any], ...] = (), uid: str = "",
        rv: str = "", overhead: dict[str, str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "p", "namespace": "default"}
    if uid:
        meta["uid"] = uid
    if rv:
        meta["resourceVersion"] = rv
    spec: dict[str, Any] = {"containers": list(containers)}
    if init:
        spec["initContainers"] = list(init)
    if overhead is not None:
        spec["overhead"] = overhead
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


@pytest.fixture(autouse=True)
def _empty_cache() -> None:
    podresources.clear_cache()


# ---- Resource Management for Pods and Containers -----------------------------------------------

def test_frontend_example_two_containers_add_up() -> None:
    # "Each container has a request of 0.25 CPU and 64MiB of memory. Each container has a
    # limit of 0.5 CPU and 128MiB of memory. You can say the Pod has a request of 0.5 CPU and
    # 128 MiB of memory, and a limit of 1 CPU and 256MiB of memory."
    each = {"requests": {"memory": "64Mi", "cpu": "250m"}, "limits": {"memory": "128Mi", "cpu": "500m"}}
    view = compute_pod_resources(pod(ctr("app", **each), ctr("log-aggregator", **each)))

    assert [c.name for c in view.containers] == ["app", "log-aggregator"]
    for c in view.containers:
        assert c.kind == APP
        assert dict(c.requests) == {"cpu": 250, "memory": 64 * Mi}
        assert dict(c.limits) == {"cpu": 500, "memory": 128 * Mi}
    assert dict(view.requests) == {"cpu": 500, "memory": 128 * Mi}
    assert dict(view.limits) == {"cpu": 1000, "memory": 256 * Mi}
    assert view.qos_class == BURSTABLE


# ---- Init containers and sidecars --------------------------------------------------------------

def test_largest_init_container_is_the_effective_init_request() -> None:
    # "The highest of any particular resource request or limit defined on all init containers
    # is the effective init request/limit"; the pod's is the higher of that and the sum of the
    # app containers.
    view = compute_pod_resources(pod(
        ctr("app", requests={"cpu": "500m", "memory": "100Mi"}),
        init=(ctr("init-1", requests={"cpu": "1"}), ctr("init-2", requests={"cpu": "2", "memory": "50Mi"}))))

    assert [(c.name, c.kind) for c in view.init_containers] == [("init-1", INIT), ("init-2", INIT)]
    assert view.sidecars == ()
    assert dict(view.requests) == {"cpu": 2000, "memory": 100 * Mi}


def test_sidecars_run_beside_the_app_and_the_init_containers_after_them() -> None:
    # A sidecar (an init container with restartPolicy Always) adds to the app containers, and
    # an init container started after it runs next to it.
    log_shipper = ctr("log-shipper", requests={"cpu": "100m", "memory": "50Mi"}, restart="Always")
    view = compute_pod_resources(pod(
        ctr("app", requests={"cpu": "500m", "memory": "200Mi"}),
        init=(log_shipper, ctr("migrate", requests={"cpu": "1", "memory": "100Mi"}))))

    assert [c.name for c in view.sidecars] == ["log-shipper"]
    assert view.sidecars[0].kind == SIDECAR
    # cpu: the init phase (1 + 0.1) beats app + sidecar (0.6); memory: app + sidecar (250Mi)
    # beats the init phase (150Mi).
    assert dict(view.requests) == {"cpu": 1100, "memory": 250 * Mi}


def test_an_init_container_before_the_sidecar_runs_alone() -> None:
    view = compute_pod_resources(pod(
        ctr("app", requests={"cpu": "500m"}),
        init=(ctr("setup", requests={"cpu": "1"}),
              ctr("proxy", requests={"cpu": "100m"}, restart="Always"))))

    assert dict(view.requests) == {"cpu": 1000}
    proxy = view.container("proxy")
    assert proxy is not None and proxy.kind == SIDECAR
    assert view.container("absent") is None


# ---- Pod Overhead ------------------------------------------------------------------------------

def test_overhead_example() -> None:
    # RuntimeClass overhead cpu 250m, memory 120Mi; "the scheduler adds the requests and the
    # overhead, then looks for a node that has 2.25 CPU and 320 MiB of memory available."
    view = compute_pod_resources(pod(
        ctr("busybox-ctr", requests={"cpu": "500m", "memory": "100Mi"},
            limits={"cpu": "500m", "memory": "100Mi"}),
        ctr("nginx-ctr", requests={"cpu": "1500m", "memory": "100Mi"},
            limits={"cpu": "1500m", "memory": "100Mi"}),
        overhead={"cpu": "250m", "memory": "120Mi"}))

    assert dict(view.requests) == {"cpu": 2250, "memory": 320 * Mi}
    assert dict(view.limits) == {"cpu": 2250, "memory": 320 * Mi}
    assert view.qos_class == GUARANTEED


# ---- Configure Quality of Service for Pods ---------------------------------------------------

def test_qos_demo_guaranteed() -> None:
    limits = {"memory": "200Mi", "cpu": "700m"}
    view = compute_pod_resources(pod(ctr("qos-demo-ctr", requests=dict(limits), limits=limits)))
    assert view.qos_class == GUARANTEED


def test_limits_only_default_the_requests_and_stay_guaranteed() -> None:
    # "If a Container specifies its own memory limit, but does not specify a memory request,
    # Kubernetes automatically assigns a memory request that matches the limit."
    view = compute_pod_resources(pod(ctr("c", limits={"memory": "200Mi", "cpu": "700m"})))
    assert dict(view.containers[0].requests) == {"memory": 200 * Mi, "cpu": 700}
    assert view.qos_class == GUARANTEED


def test_qos_demo_2_burstable() -> None:
    view = compute_pod_resources(pod(ctr("qos-demo-2-ctr", requests={"memory": "100Mi"},
                                         limits={"memory": "200Mi"})))
    assert view.qos_class == BURSTABLE


def test_qos_demo_3_best_effort() -> None:
    view = compute_pod_resources(pod(ctr("qos-demo-3-ctr")))
    assert view.qos_class == BEST_EFFORT
    assert dict(view.requests) == {} and dict(view.limits) == {}
    assert dict(view.containers[0].requests) == {}


def test_qos_demo_4_one_container_with_a_request_is_burstable() -> None:
    view = compute_pod_resources(pod(ctr("qos-demo-4-ctr-1", requests={"memory": "200Mi"}),
                                     ctr("qos-demo-4-ctr-2")))
    assert view.qos_class == BURSTABLE


def test_status_qos_class_wins_as_in_get_pod_qos() -> None:
    p = pod(ctr("c", requests={"cpu": "1"}))
    p["status"] = {"qosClass": GUARANTEED}
    assert compute_pod_resources(p).qos_class == GUARANTEED


# ---- the view itself ---------------------------------------------------------------------------

def test_the_view_is_immutable() -> None:
    view = compute_pod_resources(pod(ctr("c", requests={"cpu": "1"})))
    with pytest.raises(dataclasses.FrozenInstanceError):
        view.qos_class = GUARANTEED
    with pytest.raises(TypeError):
        view.requests["cpu"] = 2
    with pytest.raises(TypeError):
        view.containers[0].limits["cpu"] = 2


def test_a_bad_quantity_names_its_field() -> None:
    with pytest.raises(QuantityError, match=r"spec\.initContainers\[0\]\.resources\.requests\[cpu\]"):
        pod_resources(pod(ctr("app"), init=(ctr("i", requests={"cpu": "lots"}),), uid="u", rv="1"))
    assert podresources.cached_count() == 0


# ---- the cache by (uid, resourceVersion) -------------------------------------------------------

def test_one_version_is_computed_once() -> None:
    first = pod(ctr("c", requests={"cpu": "1"}), uid="u1", rv="7")
    view = pod_resources(first)
    # the same version read again (a fresh copy from a watch, say) gives the same view
    assert pod_resources(pod(ctr("c", requests={"cpu": "1"}), uid="u1", rv="7")) is view
    assert (view.uid, view.resource_version) == ("u1", "7")


def test_a_new_version_is_computed_again() -> None:
    view = pod_resources(pod(ctr("c", requests={"cpu": "1"}), uid="u1", rv="7"))
    resized = pod_resources(pod(ctr("c", requests={"cpu": "2"}), uid="u1", rv="8"))
    assert resized is not view
    assert dict(resized.requests) == {"cpu": 2000}
    assert dict(view.requests) == {"cpu": 1000}


def test_pods_not_stored_yet_are_not_cached() -> None:
    p = pod(ctr("c", requests={"cpu": "1"}))
    assert pod_resources(p) is not pod_resources(p)
    assert podresources.cached_count() == 0


def test_the_cache_is_bounded_and_keeps_the_recently_used(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(podresources, "_CACHE", podresources._LRU(2))
    a = pod_resources(pod(ctr("c"), uid="a", rv="1"))
    pod_resources(pod(ctr("c"), uid="b", rv="1"))
    assert pod_resources(pod(ctr("c"), uid="a", rv="1")) is a  # a is now the most recent
    pod_resources(pod(ctr("c"), uid="c", rv="1"))             # so b goes
    assert podresources.cached_count() == 2
    assert pod_resources(pod(ctr("c"), uid="a", rv="1")) is a
    assert pod_resources(pod(ctr("c"), uid="b", rv="1")) is not None
    assert podresources.cached_count() == 2
