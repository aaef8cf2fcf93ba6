"""The node agent's pure parts: admission and resize decisions, pending order, status
resources read back from cgroup values, the checkpoint file."""

from __future__ import annotations

import json
import os

import pytest

from kvert.kubelet import admission as adm
from kvert.kubelet import resize as rz
from kvert.kubelet.cgroups import container_resources
from kvert.kubelet.checkpoint import FILENAME, Checkpoint

GI = 2**30


def test_admission_order_and_messages():
    alloc = {"cpu": 4000, "memory": 8 * GI, "pods": 2, "ephemeral-storage": 10 * GI}
    ok = adm.admit_pod({"cpu": 500}, [{"cpu": 1000}], alloc)
    assert ok.ok
    d = adm.admit_pod({"cpu": 500, "memory": 9 * GI}, [{"cpu": 3600}], alloc)
    assert (d.reason, d.message) == ("OutOfcpu", "Node didn't have enough resource: cpu, requested: 500, "
                                                 "used: 3600, capacity: 4000")
    assert adm.rejection_message(d).startswith("Pod was rejected: Node didn't have enough resource: cpu")
    d = adm.admit_pod({"memory": 9 * GI}, [], alloc)
    assert d.reason == "OutOfmemory"
    d = adm.admit_pod({"cpu": 1}, [{"cpu": 1}, {"cpu": 1}], alloc)
    assert (d.reason, d.message) == ("OutOfpods", "Node didn't have enough resource: pods, requested: 1, "
                                                  "used: 2, capacity: 2")
    # an extended resource the node does not advertise is not the node's business
    assert adm.admit_pod({"cpu": 1, "example.com/gpu": 1}, [], alloc).ok
    assert adm.admit_pod({"hugepages-2Mi": 1}, [], alloc).reason == "OutOfhugepages-2Mi"


def test_resize_decisions_of_the_kubectl_walkthrough():
    alloc = {"cpu": 4000, "memory": 16 * GI, "pods": 110}
    others = [{"cpu": 100, "memory": 70 * 2**20}, {"cpu": 250, "memory": 64 * 2**20}]
    assert adm.decide_resize({"cpu": 650, "memory": 500 * 2**20}, others, alloc).ok
    d = adm.decide_resize({"cpu": 3950, "memory": 500 * 2**20}, others, alloc)
    assert (d.reason, d.message) == ("Deferred", "Node didn't have enough resource: cpu, requested: 3950, "
                                                 "used: 350, capacity: 4000")
    d = adm.decide_resize({"cpu": 4650, "memory": 500 * 2**20}, others, alloc)
    assert (d.reason, d.message) == ("Infeasible", "Node didn't have enough capacity: cpu, requested: 4650, "
                                                   "capacity: 4000")
    # memory is reported first, as Kubernetes does
    d = adm.decide_resize({"cpu": 9000, "memory": 20 * GI}, [], alloc)
    assert d.message.startswith("Node didn't have enough capacity: memory")


def test_static_cpu_rule():
    # TestRetryPendingResizesGuanteedQOSPods: any cpu change of a Guaranteed pod is refused
    refuse = adm.static_cpu_refusal
    message = 'Resize is infeasible for Guaranteed Pods alongside CPU Manager policy "static"'
    assert refuse("Guaranteed", "static", {"c": 1000}, {"c": 1500}) == message
    assert refuse("Guaranteed", "static", {"c": 1000}, {"c": 2000}) == message
    assert not refuse("Guaranteed", "static", {"c": 1500}, {"c": 1500})     # cpu unchanged
    assert not refuse("Burstable", "static", {"c": 1000}, {"c": 1500})
    assert not refuse("Guaranteed", "none", {"c": 1000}, {"c": 1500})
    # InPlacePodVerticalScalingExclusiveCPUs: seed 000's rule, whole CPUs only
    assert refuse("Guaranteed", "static", {"c": 1000}, {"c": 1500}, exclusive_cpus=True)
    assert not refuse("Guaranteed", "static", {"c": 1000}, {"c": 2000}, exclusive_cpus=True)


def test_infeasible_is_judged_against_the_absolute_allocatable():
    # TestRetryPendingResizes: absolute allocatable 4 CPUs / 4Gi (no eviction threshold); the
    # node's status allocatable decides Deferred
    absolute = {"cpu": 4000, "memory": 4 * GI}
    status = {"cpu": 4000, "memory": 4 * GI - 100 * 2**20, "pods": 40}
    others = [{"cpu": 1000, "memory": GI}, {"cpu": 1000, "memory": GI}]
    d = adm.decide_resize({"cpu": 1000, "memory": 4500 * 2**20}, others, status, absolute=absolute)
    assert (d.reason, d.message) == ("Infeasible", "Node didn't have enough capacity: memory, requested: "
                                                   "4718592000, capacity: 4294967296")
    d = adm.decide_resize({"cpu": 5000, "memory": GI}, others, status, absolute=absolute)
    assert (d.reason, d.message) == ("Infeasible", "Node didn't have enough capacity: cpu, requested: 5000, "
                                                   "capacity: 4000")
    d = adm.decide_resize({"cpu": 2500, "memory": 2500 * 2**20}, others, status, absolute=absolute)
    assert d.reason == "Deferred" and d.message.startswith("Node didn't have enough resource: cpu")
    # between the two allocatables: Deferred, not Infeasible
    d = adm.decide_resize({"cpu": 1000, "memory": 4 * GI - 50 * 2**20}, [], status, absolute=absolute)
    assert d.reason == "Deferred"


def _pod(name, cpu, new_cpu=None, priority=0, limits=True, qos=None):
    res = {"requests": {"cpu": new_cpu or cpu, "memory": "64Mi"}}
    if limits:
        res["limits"] = dict(res["requests"])
    pod = {"metadata": {"name": name, "namespace": "default", "creationTimestamp": "2026-01-01T00:00:00Z"},
           "spec": {"priority": priority, "containers": [{"name": "c", "resources": res}]},
           "status": {"qosClass": qos or ("Guaranteed" if limits else "Burstable")}}
    from kvert.api.quantity import to_int
    allocated = {"c": {"requests": {"cpu": to_int("cpu", cpu), "memory": 64 * 2**20},
                       "limits": {"cpu": to_int("cpu", cpu), "memory": 64 * 2**20} if limits else {}}}
    return pod, allocated


def test_pending_order_follows_kubernetes():
    shrink = _pod("shrink", "2", "1", priority=0, limits=False)
    high = _pod("high", "1", "2", priority=100)
    guaranteed = _pod("guaranteed", "1", "2")
    burstable = _pod("burstable", "1", "2", limits=False)
    old_wait = _pod("old", "1", "2")
    items = []
    for (pod, allocated), since in ((burstable, 0), (guaranteed, 50.0), (high, 90.0), (shrink, 99.0),
                                    (old_wait, 10.0)):
        state = rz.ResizeState()
        if since:
            state.set_pending("Deferred", "m", 1, since)
        items.append((pod, allocated, state))
    order = [p["metadata"]["name"] for p, _, _ in sorted(items, key=rz.pending_order)]
    assert order == ["shrink", "high", "old", "guaranteed", "burstable"]


def test_actual_resources_read_back_from_cgroup_values():
    for cpu in ("1m", "2m", "10m", "100m", "650m", "1", "1500m", "1600m", "3950m", "100"):
        pod = {"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu, "memory": "1Gi"},
                                                                   "limits": {"cpu": cpu, "memory": "1Gi"}}}]},
               "status": {"qosClass": "Guaranteed"}}
        linux = container_resources(pod, "c", 16 * GI)
        allocated = rz.spec_allocation(pod)["c"]
        assert rz.actual_requirements(linux, allocated) == allocated, cpu


def test_checkpoint_is_written_atomically_and_reloaded(tmp_path):
    cp = Checkpoint(tmp_path)
    cp.set_allocated("uid-1", "default", "web", {"c": {"requests": {"cpu": 500}, "limits": {"cpu": 500}}})
    cp.update("uid-1", sandbox="sb", resize={"in_progress": True})
    assert sorted(os.listdir(tmp_path)) == [FILENAME]          # no temporary file left behind
    data = json.loads((tmp_path / FILENAME).read_text())
    assert data["version"] == 1 and data["pods"]["uid-1"]["sandbox"] == "sb"
    again = Checkpoint(tmp_path)
    assert again.allocated("uid-1") == {"c": {"requests": {"cpu": 500}, "limits": {"cpu": 500}}}
    writes = again.writes
    again.update("uid-1", sandbox="sb")                         # unchanged: not written
    assert again.writes == writes
    again.remove_orphans({"other"})
    assert Checkpoint(tmp_path).uids() == []
    (tmp_path / FILENAME).write_text("{not json")
    assert Checkpoint(tmp_path).uids() == []                    # a corrupt file is not trusted
    assert Checkpoint(None).allocated("x") is None


def _resources(cpu, mem):
    return {"requests": {"cpu": cpu, "memory": mem}} if cpu else {}


@pytest.mark.parametrize("c1, c2, c3, increasing", [
    # TestIsResizeIncreasingRequests (containers c1, c2 at 1 CPU / 1Gi; c3 requests nothing)
    (("1500m", "1500Mi"), ("1", "1Gi"), None, True),
    (("500m", "500Mi"), ("1", "1Gi"), None, False),
    (("1500m", "500Mi"), ("1", "1Gi"), None, True),
    (("500m", "1500Mi"), ("1", "1Gi"), None, True),
    (("1500m", "1Gi"), ("500m", "1Gi"), None, False),      # c1 +500m, c2 -500m: net neutral
    (("500m", "500Mi"), ("500m", "500Mi"), None, False),
    (None, ("1", "1Gi"), None, False),                      # c1's requests removed
    (("1", "1Gi"), ("1", "1Gi"), ("1", "1Gi"), True),       # c3 gains requests
])
def test_is_resize_increasing_requests(c1, c2, c3, increasing):
    allocated = {"c1": {"requests": {"cpu": 1000, "memory": GI}, "limits": {}},
                 "c2": {"requests": {"cpu": 1000, "memory": GI}, "limits": {}},
                 "c3": {"requests": {}, "limits": {}}}
    containers = [{"name": name, "image": "x", "resources": _resources(*(spec or (None, None)))}
                  for name, spec in (("c1", c1), ("c2", c2), ("c3", c3))]
    pod = {"metadata": {"name": "p"}, "spec": {"containers": containers}}
    assert rz.is_increasing(pod, allocated) == increasing
