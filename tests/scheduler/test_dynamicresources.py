"""The DynamicResources plugin, extension point by extension point.

Cases and expected statuses are upstream's ``pkg/scheduler/framework/plugins/
dynamicresources/dynamicresources_test.go`` (``TestPlugin``, case names as there): a pod
"my-pod" (uid 1234) with claim "my-pod-my-resource" (request "req-1" of class
"my-resource-class"), node "worker" and its slice of device "instance-1" (driver
"some-driver", pool "worker"). Objects are written as resource.k8s.io/v1 would serve them.
"""

from __future__ import annotations

import asyncio
import copy
import time

import numpy as np
import pytest

from kvert.api.errors import Conflict
from kvert.scheduler.cache import NodeCache
from kvert.scheduler.config import build_framework, load_config
from kvert.scheduler.dra import allocator as allocator_mod
from kvert.scheduler.framework import Code, CycleState, Diagnosis, Handle
from kvert.scheduler.listers import StaticListers
from kvert.scheduler.plugins.dynamicresources import DynamicResources
from kvert.scheduler.plugins.noderesources import ConfigError

from .helpers import node

T = "dynamicresources_test.go TestPlugin"
NODE, DRIVER, CLASS, CLAIM = "worker", "some-driver", "my-resource-class", "my-pod-my-resource"
UID = "1234"
ATTR = "healthy"
BROKEN = f'device.attributes["{DRIVER}"].{ATTR}'


def pod(claims=(("my-resource", CLAIM, False),), uid: str = UID, name: str = "my-pod",
        statuses: list | None = None) -> dict:
    refs = [{"name": n, "resourceClaimTemplateName" if tmpl else "resourceClaimName": c}
            for n, c, tmpl in claims]
    p = {"apiVersion": "v1", "kind": "Pod",
         "metadata": {"name": name, "namespace": "default", "uid": uid},
         "spec": {"containers": [{"name": "c", "image": "x"}], "resourceClaims": refs},
         "status": {}}
    if statuses is not None:
        p["status"]["resourceClaimStatuses"] = statuses
    return p


def device_class(*selectors: str) -> dict:
    spec = {"selectors": [{"cel": {"expression": e}} for e in selectors]} if selectors else {}
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
            "metadata": {"name": CLASS}, "spec": spec}


def claim(name: str = CLAIM, *, selectors=(), owner: str | None = UID, uid: str = "claim-uid",
          allocation: dict | None = None, reserved: list | None = None) -> dict:
    req: dict = {"deviceClassName": CLASS, "allocationMode": "ExactCount", "count": 1}
    if selectors:
        req["selectors"] = [{"cel": {"expression": e}} for e in selectors]
    c: dict = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
               "metadata": {"name": name, "namespace": "default", "uid": uid, "resourceVersion": "1"},
               "spec": {"devices": {"requests": [{"name": "req-1", "exactly": req}]}}, "status": {}}
    if owner:
        c["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": "my-pod",
                                             "uid": owner, "controller": True}]
    if allocation is not None:
        c["status"]["allocation"] = allocation
        c["metadata"]["finalizers"] = ["resource.kubernetes.io/delete-protection"]
    if reserved is not None:
        c["status"]["reservedFor"] = reserved
    return c


def allocation_result(node_selector: dict | None = None, admin: bool = False) -> dict:
    result = {"request": "req-1", "driver": DRIVER, "pool": NODE, "device": "instance-1"}
    if admin:
        result["adminAccess"] = True
    return {"devices": {"results": [result]},
            "nodeSelector": node_selector or {"nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In", "values": [NODE]}]}]}}


def worker_slice(node_name: str = NODE, *devices: dict) -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"name": f"{node_name}-{DRIVER}"},
            "spec": {"driver": DRIVER, "nodeName": node_name,
                     "pool": {"name": node_name, "generation": 1, "resourceSliceCount": 1},
                     "devices": list(devices) or [{"name": "instance-1"}]}}


RESERVED = [{"resource": "pods", "name": "my-pod", "uid": UID}]


class FakeClient:
    """The claims an API server holds; update_status checks resourceVersion like one."""

    def __init__(self, claims=()):
        self.claims = {c["metadata"]["name"]: copy.deepcopy(c) for c in claims}
        self.calls: list[str] = []
        self.conflicts = 0

    async def get(self, resource, name, namespace=""):
        self.calls.append(f"get {name}")
        return copy.deepcopy(self.claims[name])

    async def update(self, resource, obj, subresource="", dry_run=False):
        return self._write("update", obj, keep_status=True)

    async def update_status(self, resource, obj):
        return self._write("update_status", obj, keep_status=False)

    def _write(self, verb, obj, keep_status):
        name = obj["metadata"]["name"]
        self.calls.append(f"{verb} {name}")
        stored = self.claims[name]
        if self.conflicts:
            self.conflicts -= 1
            stored["metadata"]["resourceVersion"] = str(int(stored["metadata"]["resourceVersion"]) + 1)
        if obj["metadata"].get("resourceVersion") != stored["metadata"]["resourceVersion"]:
            raise Conflict("resourceclaims", name, "the object has been modified")
        new = copy.deepcopy(obj)
        if keep_status:
            new["status"] = stored.get("status", {})
        else:
            new["metadata"] = stored["metadata"]
        new["metadata"] = {**new["metadata"],
                           "resourceVersion": str(int(stored["metadata"]["resourceVersion"]) + 1)}
        self.claims[name] = new
        return copy.deepcopy(new)

    async def patch(self, resource, name, patch, patch_type="merge", *, namespace="", subresource="",
                    dry_run=False):
        self.calls.append(f"patch {name}")
        uid = patch["status"]["reservedFor"][0]["uid"]
        stored = self.claims[name]
        stored["status"]["reservedFor"] = [r for r in stored["status"].get("reservedFor", [])
                                           if r["uid"] != uid]
        return copy.deepcopy(stored)


class Env:
    """A node cache, static listers and a profile with only DynamicResources (+ binder)."""

    def __init__(self, claims=(), classes=(device_class(),), slices=(), nodes=None, client=None,
                 args: dict | None = None):
        self.cache = NodeCache()
        for n in nodes if nodes is not None else [node(NODE)]:
            self.cache.add_node(n)
        self.listers = StaticListers({"resourceclaims": list(claims), "deviceclasses": list(classes),
                                      "resourceslices": list(slices)})
        self.tasks: list = []
        profile = {"schedulerName": "default-scheduler", "plugins": {"multiPoint": {
            "disabled": [{"name": "*"}],
            "enabled": [{"name": "PrioritySort"}, {"name": "DynamicResources"},
                        {"name": "DefaultBinder"}]}}}
        if args is not None:
            profile["pluginConfig"] = [{"name": "DynamicResources", "args": args}]
        cfg = load_config({"apiVersion": "kubescheduler.config.k8s.io/v1",
                           "kind": "KubeSchedulerConfiguration", "profiles": [profile]})
        self.handle = Handle(self.cache, client=client, listers=self.listers, spawn=self.tasks.append)
        self.fw = build_framework(cfg.profiles[0], self.handle)
        self.pl: DynamicResources = self.fw.plugin("DynamicResources")

    def prefilter(self, p: dict):
        state = CycleState()
        _, st = self.pl.pre_filter(state, p, self.cache.snapshot().all())
        return state, st

    def filter(self, p: dict, state: CycleState | None = None):
        if state is None:
            state, st = self.prefilter(p)
            assert st is None, st
        nodes = self.cache.snapshot().all()
        res = self.pl.filter(state, p, nodes)
        return {self.cache.names[int(r)]: res.node_reasons(i) for i, r in enumerate(nodes.rows)
                if res.codes[i]}, res, state

    def run(self, coro_or_status):
        if asyncio.iscoroutine(coro_or_status):
            return asyncio.run(coro_or_status)
        return coro_or_status

    def drain(self):
        async def go():
            while self.tasks:
                await self.tasks.pop(0)
        asyncio.run(go())


# ---- PreEnqueue / PreFilter ------------------------------------------------------------------


def test_empty() -> None:
    # TestPlugin/empty: no claims -> PreFilter Skip; PostFilter Unschedulable without a message
    env = Env()
    p = pod(claims=())
    state, st = env.prefilter(p)
    assert st.code == Code.SKIP
    assert env.pl.pre_enqueue(p) is None
    _, st = env.pl.post_filter(state, p, Diagnosis())
    assert st.code == Code.UNSCHEDULABLE and st.message() == ""


def test_pods_without_claims_read_nothing() -> None:
    class Exploding(StaticListers):
        def list(self, resource, namespace=None):
            raise AssertionError(f"listed {resource}")
    env = Env()
    env.pl.handle.listers = Exploding()
    state, st = env.prefilter(pod(claims=()))
    assert st.code == Code.SKIP
    assert env.pl.filter(state, pod(claims=()), env.cache.snapshot().all()).passed.all()


@pytest.mark.parametrize("case,p,claims,message", [
    ("missing-claim", pod(claims=(("my-resource", CLAIM, True),)), [claim()],
     'pod "default/my-pod": ResourceClaim not created yet'),
    ("deleted-claim", pod(claims=(("my-resource", CLAIM, True),),
                          statuses=[{"name": "my-resource", "resourceClaimName": CLAIM}]),
     [dict(claim(), metadata={**claim()["metadata"], "deletionTimestamp": "2026-01-01T00:00:00Z"})],
     'resourceclaim "my-pod-my-resource" is being deleted'),
    ("wrong-claim", pod(claims=(("my-resource", CLAIM, True),),
                        statuses=[{"name": "my-resource", "resourceClaimName": CLAIM}]),
     [claim(owner=UID + "123")],
     "ResourceClaim default/my-pod-my-resource was not created for pod default/my-pod (pod is not owner)"),
])
def test_pre_enqueue(case, p, claims, message) -> None:
    # TestPlugin/<case>: preenqueue is UnschedulableAndUnresolvable with upstream's message
    env = Env(claims=claims)
    st = env.pl.pre_enqueue(p)
    assert st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE and st.message() == message


def test_claim_template_in_status_is_used() -> None:
    # TestPlugin/claim-template: the template's claim is found through the pod's status
    p = pod(claims=(("my-resource", CLAIM, True),),
            statuses=[{"name": "my-resource", "resourceClaimName": CLAIM}])
    env = Env(claims=[claim(allocation=allocation_result())])
    assert env.pl.pre_enqueue(p) is None
    filtered, _, _ = env.filter(p)
    assert filtered == {}


def test_missing_class() -> None:
    # TestPlugin/missing-class and claim-with-request-with-unknown-device-class
    env = Env(claims=[claim()], classes=())
    state, st = env.prefilter(pod())
    assert st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert st.message() == "request req-1: device class my-resource-class does not exist"
    _, st = env.pl.post_filter(state, pod(), Diagnosis())
    assert st.message() == "no new claims to deallocate"


def test_prioritized_list_unknown_class() -> None:
    # TestPlugin/claim-with-prioritized-list-unknown-device-class
    c = claim()
    c["spec"]["devices"]["requests"] = [{"name": "req-1", "firstAvailable": [
        {"name": "subreq-1", "deviceClassName": "does-not-exist", "allocationMode": "ExactCount",
         "count": 1}]}]
    env = Env(claims=[c])
    _, st = env.prefilter(pod())
    assert st.message() == "request req-1/subreq-1: device class does-not-exist does not exist"


def test_in_use_by_others() -> None:
    # TestPlugin/in-use-by-other (ReservedFor at its limit and not for this pod)
    reserved = [{"resource": "pods", "name": f"p{i}", "uid": f"u{i}"} for i in range(256)]
    env = Env(claims=[claim(allocation=allocation_result(), reserved=reserved)])
    _, st = env.prefilter(pod())
    assert st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE and st.message() == "resourceclaim in use"
    env2 = Env(claims=[claim(allocation=allocation_result(), reserved=reserved[:255])])
    assert env2.prefilter(pod())[1] is None


# ---- Filter ---------------------------------------------------------------------------------


def test_no_resources() -> None:
    # TestPlugin/no-resources
    env = Env(claims=[claim()])
    filtered, res, state = env.filter(pod())
    assert filtered == {NODE: ["cannot allocate all claims"]}
    assert res.codes[0] == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    _, st = env.pl.post_filter(state, pod(), Diagnosis())
    assert st.code == Code.UNSCHEDULABLE and st.message() == "still not schedulable"


def test_exhausted_resources() -> None:
    # TestPlugin/exhausted-resources: another claim holds the only device
    other = claim("not-my-claim", owner=None, uid="other", allocation=allocation_result())
    env = Env(claims=[claim(), other], slices=[worker_slice()])
    assert env.filter(pod())[0] == {NODE: ["cannot allocate all claims"]}


def test_allocated_admin_access_does_not_block() -> None:
    # TestPlugin/structured-ignore-allocated-admin-access
    other = claim("not-my-claim", owner=None, uid="other", allocation=allocation_result(admin=True))
    env = Env(claims=[claim(), other], slices=[worker_slice()])
    assert env.filter(pod())[0] == {}


@pytest.mark.parametrize("case,in_claim,message", [
    ("claim-parameters-CEL-runtime-error", True,
     "claim default/my-pod-my-resource: selector #0: CEL runtime error: no such key: healthy"),
    ("class-parameters-CEL-runtime-error", False,
     "class my-resource-class: selector #0: CEL runtime error: no such key: healthy"),
])
def test_cel_runtime_error_aborts(case, in_claim, message) -> None:
    # TestPlugin/<case>: Filter fails with an error status carrying the CEL error
    env = Env(claims=[claim(selectors=[BROKEN] if in_claim else ())],
              classes=[device_class(*(() if in_claim else (BROKEN,)))], slices=[worker_slice()])
    state, st = env.prefilter(pod())
    assert st is None
    with pytest.raises(Exception) as err:
        env.pl.filter(state, pod(), env.cache.snapshot().all())
    assert str(err.value) == message


def test_wrong_topology_then_deallocation() -> None:
    # TestPlugin/wrong-topology: the allocation's node selector excludes the node; PostFilter
    # deallocates the claim
    wrong = allocation_result({"nodeSelectorTerms": [{"matchExpressions": [
        {"key": "no-such-label", "operator": "In", "values": ["no-such-value"]}]}]})
    env = Env(claims=[claim(allocation=wrong)])
    filtered, _, state = env.filter(pod())
    assert filtered == {NODE: ["resourceclaim not available on the node"]}
    _, st = env.pl.post_filter(state, pod(), Diagnosis())
    assert st.code == Code.UNSCHEDULABLE and st.message() == "deallocation of ResourceClaim completed"
    # offline the deallocation is in memory: the next attempt allocates afresh
    env.listers.add("resourceslices", worker_slice())
    assert env.filter(pod())[0] == {}


def test_good_topology() -> None:
    # TestPlugin/good-topology
    good = allocation_result({"nodeSelectorTerms": [{"matchExpressions": [
        {"key": "nodename", "operator": "In", "values": [NODE]}]}]})
    env = Env(claims=[claim(allocation=good)], nodes=[node(NODE, labels={"nodename": NODE}),
                                                      node("other", labels={"nodename": "other"})])
    assert env.filter(pod())[0] == {"other": ["resourceclaim not available on the node"]}


def test_two_nodes_one_with_devices() -> None:
    env = Env(claims=[claim()], slices=[worker_slice()], nodes=[node(NODE), node("cpu")])
    assert env.filter(pod())[0] == {"cpu": ["cannot allocate all claims"]}


def test_filter_runs_the_allocator_once_per_slice_signature(monkeypatch) -> None:
    calls = []
    real = allocator_mod.Allocator.allocate

    def counting(self, node_obj, claims, slices, deadline=None):
        calls.append(node_obj)
        return real(self, node_obj, claims, slices, deadline)
    monkeypatch.setattr(allocator_mod.Allocator, "allocate", counting)
    rack = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "rack-a"},
            "spec": {"driver": DRIVER, "nodeSelector": {"nodeSelectorTerms": [{"matchExpressions": [
                {"key": "rack", "operator": "In", "values": ["a"]}]}]},
                     "pool": {"name": "rack-a", "generation": 1, "resourceSliceCount": 1},
                     "devices": [{"name": "nic-0"}]}}
    nodes = [node(f"n{i}", labels={"rack": "a" if i % 2 else "b"}) for i in range(200)]
    env = Env(claims=[claim()], slices=[rack, worker_slice("n7")], nodes=nodes)
    filtered, _, _ = env.filter(pod())
    assert sorted(filtered) == sorted(f"n{i}" for i in range(200) if i % 2 == 0)
    # rack a, rack b, and n7 with its local slice
    assert len(calls) == 3


def test_filter_timeout() -> None:
    # DynamicResourcesArgs.filterTimeout: an allocation running past it is unschedulable
    devices = [{"name": f"d{i}", "attributes": {"numa": {"int": i}}} for i in range(12)]
    claims = [claim(f"c{i}", uid=f"u{i}", selectors=[f'device.attributes["{DRIVER}"].numa >= 0'])
              for i in range(13)]
    p = pod(claims=[(f"r{i}", f"c{i}", False) for i in range(13)])
    env = Env(claims=claims, slices=[worker_slice(NODE, *devices)], args={"filterTimeout": "100ms"})
    start = time.monotonic()
    assert env.filter(p)[0] == {NODE: ["timed out trying to allocate devices"]}
    assert time.monotonic() - start < 5


# ---- Reserve / Unreserve / PreBind --------------------------------------------------------------


def test_reserve_takes_devices_and_unreserve_returns_them() -> None:
    # TestPlugin/with-resources (reserve: the claim is in flight) and skip-bind (unreserve)
    c2 = claim("second", uid="claim-2", owner="5678")
    env = Env(claims=[claim(), c2], slices=[worker_slice()], client=FakeClient([claim(), c2]))
    p, p2 = pod(), pod(claims=(("my-resource", "second", False),), uid="5678", name="other")
    _, _, state = env.filter(p)
    assert env.pl.reserve(state, p, NODE) is None
    assert env.pl.tracker.has_pending("claim-uid")
    assert env.filter(p2)[0] == {NODE: ["cannot allocate all claims"]}
    # a pod sharing the claim waits for the allocation in flight
    _, st = env.prefilter(pod(uid="9999", name="third"))
    assert st.message() == "resource claim default/my-pod-my-resource is in the process of being allocated"
    env.pl.unreserve(state, p, NODE)
    assert not env.pl.tracker.has_pending("claim-uid")
    assert env.filter(p2)[0] == {}


def test_pre_bind_writes_allocation_and_reservation() -> None:
    # TestPlugin/with-resources: PreBind adds the finalizer, then status.allocation and
    # status.reservedFor
    client = FakeClient([claim()])
    env = Env(claims=[claim()], slices=[worker_slice()], client=client)
    p = pod()
    _, _, state = env.filter(p)
    assert env.pl.reserve(state, p, NODE) is None
    assert env.run(env.pl.pre_bind(state, p, NODE)) is None
    stored = client.claims[CLAIM]
    assert stored["metadata"]["finalizers"] == ["resource.kubernetes.io/delete-protection"]
    assert stored["status"]["allocation"] == allocation_result()
    assert stored["status"]["reservedFor"] == RESERVED
    assert client.calls == [f"update {CLAIM}", f"update_status {CLAIM}"]
    assert not env.pl.tracker.has_pending("claim-uid")
    # the assumed claim is what the next cycle reads until the informer catches up
    assert env.pl.tracker.get(env.listers, "default", CLAIM)["status"]["reservedFor"] == RESERVED


def test_pre_bind_retries_after_conflict() -> None:
    # TestPlugin/with-resources-finalizer-gets-added: a concurrent update -> fetch and retry
    client = FakeClient([claim()])
    client.conflicts = 1
    env = Env(claims=[claim()], slices=[worker_slice()], client=client)
    p = pod()
    _, _, state = env.filter(p)
    env.pl.reserve(state, p, NODE)
    assert env.run(env.pl.pre_bind(state, p, NODE)) is None
    assert client.calls[:2] == [f"update {CLAIM}", f"get {CLAIM}"]
    assert client.claims[CLAIM]["status"]["reservedFor"] == RESERVED


def test_reserved_okay_and_bind_failure_unreserves() -> None:
    # TestPlugin/good-topology + bind-failure: an allocated claim only gets the reservation;
    # Unreserve after a failed bind removes it with a patch
    client = FakeClient([claim(allocation=allocation_result())])
    env = Env(claims=[claim(allocation=allocation_result())], client=client)
    p = pod()
    _, _, state = env.filter(p)
    assert env.pl.reserve(state, p, NODE) is None
    assert env.run(env.pl.pre_bind(state, p, NODE)) is None
    assert client.claims[CLAIM]["status"]["reservedFor"] == RESERVED
    env.pl.unreserve(state, p, NODE)
    env.drain()
    assert client.claims[CLAIM]["status"]["reservedFor"] == []


def test_offline_reserve_binds_in_memory() -> None:
    env = Env(claims=[claim()], slices=[worker_slice()])
    p = pod()
    _, _, state = env.filter(p)
    assert env.pl.reserve(state, p, NODE) is None
    got = env.pl.tracker.get(env.listers, "default", CLAIM)
    assert got["status"]["allocation"] == allocation_result()
    assert got["status"]["reservedFor"] == RESERVED
    assert env.run(env.pl.pre_bind(state, p, NODE)) is None
    env.pl.unreserve(state, p, NODE)
    assert "allocation" not in env.pl.tracker.get(env.listers, "default", CLAIM)["status"]


def test_state_clone_is_shared() -> None:
    env = Env(claims=[claim()], slices=[worker_slice()])
    state, _ = env.prefilter(pod())
    clone = state.clone()
    assert clone.get("DynamicResources") is state.get("DynamicResources")


# ---- args, queueing hints ------------------------------------------------------------------------


def test_args() -> None:
    assert DynamicResources({}, None).filter_timeout == 10.0
    assert DynamicResources({"filterTimeout": "1m30s"}, None).filter_timeout == 90.0
    with pytest.raises(ConfigError, match="filterTimeout: Invalid value: '-1s': must be zero or positive"):
        DynamicResources({"filterTimeout": "-1s"}, None)
    with pytest.raises(ConfigError, match="bindingTimeout: Forbidden"):
        DynamicResources({"bindingTimeout": "10m"}, None)
    with pytest.raises(ConfigError):
        DynamicResources({"nope": 1}, None)


def test_queueing_hints() -> None:
    # isSchedulableAfterClaimChange / isSchedulableAfterPodChange
    env = Env(claims=[claim()])
    hints = {str(e.event.resource): e.hint for e in env.pl.events_to_register()}
    on_claim, on_pod = hints["ResourceClaim"], hints["Pod"]
    p = pod()
    mine, other = claim(), claim("other", uid="other-uid", owner=None)
    assert on_claim(p, None, mine) is True                     # claim for pod got created
    assert on_claim(p, None, other) is False                   # unrelated claim
    assert on_claim(p, mine, dict(mine, metadata={**mine["metadata"], "labels": {"a": "b"}})) is False
    allocated_other = claim("other", uid="other-uid", owner=None, allocation=allocation_result())
    assert on_claim(p, allocated_other, other) is True         # deallocated: devices free
    waiting = pod(claims=(("my-resource", CLAIM, True),))
    assert on_pod(waiting, waiting, waiting) is False          # still no claim in status
    ready = pod(claims=(("my-resource", CLAIM, True),),
                statuses=[{"name": "my-resource", "resourceClaimName": CLAIM}])
    assert on_pod(waiting, waiting, ready) is True
    assert on_pod(waiting, waiting, dict(ready, metadata={**ready["metadata"], "uid": "x"})) is False
    assert {str(e.event.resource) for e in env.pl.events_to_register()} == \
        {"Node", "ResourceClaim", "Pod", "DeviceClass", "ResourceSlice"}


def test_node_masks_for_allocated_claims_use_names() -> None:
    nodes = [node(f"n{i}") for i in range(50)]
    sel = {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In",
                                                   "values": ["n3", "n40"]}]}]}
    env = Env(nodes=nodes)
    mask = env.pl._selector_mask(sel, env.cache.snapshot().all())
    names = [env.cache.names[int(r)] for r in env.cache.snapshot().all().rows[np.flatnonzero(mask)]]
    assert sorted(names) == ["n3", "n40"]


# ---- live: the scheduler against the in-process API server ---------------------------------------


def test_live_scheduler_allocates_and_binds_claims() -> None:
    # TestPlugin/with-resources end to end: the pod lands on the node with the device and the
    # claim is written allocated (with the finalizer) and reserved for the pod; a second pod
    # wanting the same kind of device finds none left
    from kvert.scheduler import Scheduler

    from .helpers import Cluster, condition

    c = Cluster()

    async def main():
        await c.create_node(node(NODE))
        await c.create_node(node("cpu-only"))
        await c.client.create("resource.k8s.io/deviceclasses", device_class())
        await c.client.create("resource.k8s.io/resourceslices", worker_slice())
        for name in (CLAIM, "second"):
            body = claim(name, owner=None)
            body["metadata"] = {"name": name, "namespace": "default"}
            body.pop("status")
            await c.client.create("resource.k8s.io/resourceclaims", body, namespace="default")
        s = Scheduler(c.client, c.clock, None, seed=11)
        task = asyncio.ensure_future(s.run())
        await s.synced.wait()
        first = pod()
        await c.create_pod(first)
        await c.settle(2)
        await c.create_pod(pod(claims=(("my-resource", "second", False),), name="other", uid="x"))
        await c.settle(2)
        bound = await c.get_pod("my-pod")
        other = await c.get_pod("other")
        stored = await c.client.get("resource.k8s.io/resourceclaims", CLAIM, "default")
        await s.wait_idle()
        s.stop()
        await task
        return bound, other, stored

    bound, other, stored = c.run(main)
    assert bound["spec"]["nodeName"] == NODE
    assert stored["metadata"]["finalizers"] == ["resource.kubernetes.io/delete-protection"]
    assert stored["status"]["allocation"]["devices"]["results"] == \
        allocation_result()["devices"]["results"]
    assert stored["status"]["reservedFor"] == [
        {"resource": "pods", "name": "my-pod", "uid": bound["metadata"]["uid"]}]
    assert not other["spec"].get("nodeName")
    assert condition(other)["message"].startswith("0/2 nodes are available: 2 cannot allocate all claims.")
