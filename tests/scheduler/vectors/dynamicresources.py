"""DynamicResources vectors: upstream's plugin and allocator tests through ``kvert schedule``.

``dynamicresources/dynamicresources_test.go`` (``TestPlugin``): pod "my-pod" (uid 1234)
with claim "my-pod-my-resource" (request "req-1", class "my-resource-class"), node "worker"
and its slice with device "instance-1" of driver "some-driver". Upstream checks each
extension point's status; here the same statuses show as the node's Filter reasons and the
FailedScheduling text (the PostFilter statuses "still not schedulable" / "no new claims to
deallocate" / "deallocation of ResourceClaim completed" follow the histogram, as upstream's
FitError prints them), and a case that passes every point lands on "worker".

``structured/internal/stable/allocator_test.go`` (``TestAllocator``, whose cases are in
``allocatortesting/allocator_testing.go``): one pod using the case's claims (the scheduler
allocates a pod's claims together, as the case's ``claimsToAllocate``) on nodes "node-1"
(region-1) and "node-2" (region-2); the case's expected allocation decides which node fits. Objects are
resource.k8s.io/v1 as the API serves them.
"""

from __future__ import annotations

from . import Vector

PLUGIN = "DynamicResources"
TP = "dynamicresources/dynamicresources_test.go TestPlugin"
TA = "structured/internal/stable/allocator_test.go TestAllocator"  # cases: allocatortesting/allocator_testing.go
WORKER, DRIVER, CLASS, CLAIM = "worker", "some-driver", "my-resource-class", "my-pod-my-resource"


def node(name: str, labels: dict | None = None) -> dict:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}


def pod(name: str = "my-pod", uid: str = "1234", claims: tuple = ((("my-resource", CLAIM)),),
        created: str | None = None) -> dict:
    meta = {"name": name, "namespace": "default", "uid": uid}
    if created:
        meta["creationTimestamp"] = created
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
            "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}],
                     "resourceClaims": [{"name": n, "resourceClaimName": c} for n, c in claims]}}


def device_class(name: str = CLASS, *selectors: str) -> dict:
    spec = {"selectors": [{"cel": {"expression": e}} for e in selectors]} if selectors else {}
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name},
            "spec": spec}


def request(name: str = "req-1", cls: str = CLASS, count: int = 1, *selectors: str,
            mode: str = "ExactCount") -> dict:
    body: dict = {"deviceClassName": cls, "allocationMode": mode}
    if mode == "ExactCount":
        body["count"] = count
    if selectors:
        body["selectors"] = [{"cel": {"expression": e}} for e in selectors]
    return {"name": name, "exactly": body}


def claim(name: str = CLAIM, *requests: dict, uid: str | None = None, owner: str = "1234",
          allocation: dict | None = None, constraints: list | None = None) -> dict:
    devices: dict = {"requests": list(requests) or [request()]}
    if constraints:
        devices["constraints"] = constraints
    c: dict = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
               "metadata": {"name": name, "namespace": "default", "uid": uid or f"uid-{name}",
                            "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "my-pod",
                                                 "uid": owner, "controller": True}]},
               "spec": {"devices": devices}}
    if allocation is not None:
        c["status"] = {"allocation": allocation}
        c["metadata"]["finalizers"] = ["resource.kubernetes.io/delete-protection"]
    return c


def rslice(name: str, where, pool: str, driver: str, *devices: dict, count: int = 1) -> dict:
    spec: dict = {"driver": driver, "pool": {"name": pool, "generation": 1, "resourceSliceCount": count},
                  "devices": list(devices)}
    if isinstance(where, dict):
        spec["nodeSelector"] = where
    else:
        spec["nodeName"] = where
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": name},
            "spec": spec}


def worker_slice() -> dict:
    return rslice(f"{WORKER}-{DRIVER}", WORKER, WORKER, DRIVER, {"name": "instance-1"})


def allocation(node_selector: dict | None = None, admin: bool = False) -> dict:
    result = {"request": "req-1", "driver": DRIVER, "pool": WORKER, "device": "instance-1"}
    if admin:
        result["adminAccess"] = True
    return {"devices": {"results": [result]},
            "nodeSelector": node_selector or {"nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In", "values": [WORKER]}]}]}}


def region(value: str) -> dict:
    return {"nodeSelectorTerms": [{"matchExpressions": [
        {"key": "region", "operator": "In", "values": [value]}]}]}


NOT_HELPFUL = "preemption: 0/{n} nodes are available: {n} Preemption is not helpful for scheduling."
WORKER_NODE = node(WORKER)
NODE1 = node("node-1", {"region": "region-1", "planet": "earth"})
NODE2 = node("node-2", {"region": "region-2", "planet": "earth"})
CLASS_A = device_class("class-a", 'device.driver == "driver-a"')
CLASS_B = device_class("class-b", 'device.driver == "driver-b"')


def mem(q: str) -> str:
    return f'device.capacity["driver-a"].memory.compareTo(quantity("{q}")) >= 0'


def alloc_vector(case: str, claims: list[dict], classes: list[dict], slices: list[dict], *,
                 node, message: str | None = None, filtered: dict | None = None,
                 allocated: list[dict] = ()) -> Vector:
    """An allocator case: one pod uses the case's claims (the scheduler allocates a pod's
    claims together, in the pod's order, as the case's ``claimsToAllocate``)."""
    p = pod(claims=tuple((f"r{i}", c["metadata"]["name"]) for i, c in enumerate(claims)))
    return Vector(f"{TA}/{case}", PLUGIN, p, [NODE1, NODE2],
                  objects=[*classes, *slices, *claims, *allocated], mode="schedule",
                  node=node, message=message, filtered=filtered)


VECTORS: list[Vector] = [
    # ---- TestPlugin ---------------------------------------------------------------------------
    Vector(f"{TP}/no-resources", PLUGIN, pod(), [WORKER_NODE],
           objects=[device_class(), claim()], mode="filter", node=None,
           filtered={WORKER: ["cannot allocate all claims"]},
           message="0/1 nodes are available: 1 cannot allocate all claims. still not schedulable"),
    Vector(f"{TP}/no-resources", PLUGIN, pod(), [WORKER_NODE],
           objects=[device_class(), claim()], mode="schedule", node=None,
           message="0/1 nodes are available: 1 cannot allocate all claims. still not schedulable, "
                   + NOT_HELPFUL.format(n=1)),
    Vector(f"{TP}/with-resources", PLUGIN, pod(), [WORKER_NODE],
           objects=[device_class(), claim(), worker_slice()], mode="schedule", node=WORKER),
    Vector(f"{TP}/exhausted-resources", PLUGIN, pod(), [WORKER_NODE],
           objects=[device_class(), claim(), worker_slice(),
                    claim("not-my-claim", owner="other", allocation=allocation())],
           mode="filter", node=None, filtered={WORKER: ["cannot allocate all claims"]}),
    # the device taken by the allocation of an older pod of the snapshot (Reserve)
    Vector(f"{TP}/exhausted-resources", PLUGIN, pod(created="2026-01-01T00:00:05Z"), [WORKER_NODE],
           objects=[device_class(), claim(), worker_slice(), claim("not-my-claim", owner="other"),
                    pod("other", "other", (("r", "not-my-claim"),), "2026-01-01T00:00:00Z")],
           mode="schedule", node=None, filtered={WORKER: ["cannot allocate all claims"]}),
    Vector(f"{TP}/structured-ignore-allocated-admin-access", PLUGIN, pod(), [WORKER_NODE],
           objects=[device_class(), claim(), worker_slice(),
                    claim("not-my-claim", owner="other", allocation=allocation(admin=True))],
           mode="filter", node=WORKER, filtered={}),
    Vector(f"{TP}/missing-class", PLUGIN, pod(), [WORKER_NODE], objects=[claim()], mode="filter",
           node=None, message="0/1 nodes are available: request req-1: device class "
                              "my-resource-class does not exist. no new claims to deallocate"),
    Vector(f"{TP}/claim-with-request-with-unknown-device-class", PLUGIN, pod(), [WORKER_NODE],
           objects=[device_class(), claim(CLAIM, request("req-1", "does-not-exist"))], mode="filter",
           node=None, message="0/1 nodes are available: request req-1: device class "
                              "does-not-exist does not exist. no new claims to deallocate"),
    Vector(f"{TP}/wrong-topology", PLUGIN, pod(), [WORKER_NODE],
           objects=[claim(allocation=allocation({"nodeSelectorTerms": [{"matchExpressions": [
               {"key": "no-such-label", "operator": "In", "values": ["no-such-value"]}]}]}))],
           mode="filter", node=None, filtered={WORKER: ["resourceclaim not available on the node"]},
           message="0/1 nodes are available: 1 resourceclaim not available on the node. "
                   "deallocation of ResourceClaim completed"),
    Vector(f"{TP}/good-topology", PLUGIN, pod(), [node(WORKER, {"nodename": WORKER}), node("other")],
           objects=[claim(allocation=allocation({"nodeSelectorTerms": [{"matchExpressions": [
               {"key": "nodename", "operator": "In", "values": [WORKER]}]}]}))],
           mode="filter", node=WORKER, filtered={"other": ["resourceclaim not available on the node"]}),
    Vector(f"{TP}/claim-with-prioritized-list", PLUGIN, pod(), [WORKER_NODE],
           objects=[device_class(), worker_slice(), claim(CLAIM, {"name": "req-1", "firstAvailable": [
               {"name": "subreq-1", "deviceClassName": CLASS, "allocationMode": "ExactCount",
                "count": 1}]})], mode="schedule", node=WORKER),
    Vector(f"{TP}/claim-parameters-CEL-runtime-error", PLUGIN, pod(), [WORKER_NODE],
           objects=[device_class(), worker_slice(),
                    claim(CLAIM, request("req-1", CLASS, 1, f'device.attributes["{DRIVER}"].healthy'))],
           mode="filter", node=None),
    Vector(f"{TP}/in-use-by-other", PLUGIN, pod(uid="1234-II"), [WORKER_NODE],
           objects=[dict(claim(allocation=allocation()), status={
               "allocation": allocation(),
               "reservedFor": [{"resource": "pods", "name": f"p{i}", "uid": f"u{i}"} for i in range(256)]})],
           mode="filter", node=None,
           message="0/1 nodes are available: resourceclaim in use. no new claims to deallocate"),

    # ---- TestAllocator ----------------------------------------------------------------------------
    alloc_vector("simple", [claim("claim-0", request("req-0", "class-a"))], [CLASS_A],
                 [rslice("slice-1", "node-1", "pool-1", "driver-a", {"name": "device-1"})],
                 node="node-1", filtered={"node-2": ["cannot allocate all claims"]}),
    alloc_vector("other-node", [claim("claim-0", request("req-0", "class-a"))], [CLASS_A],
                 [rslice("slice-1", "node-1", "pool-1", "driver-b", {"name": "device-1"}),
                  rslice("slice-2", "node-2", "pool-2", "driver-a", {"name": "device-1"})],
                 node="node-2", filtered={"node-1": ["cannot allocate all claims"]}),
    alloc_vector("small-and-large-backtrack-claims",
                 [claim("claim-0", request("req-0", "class-a", 1, mem("1Gi"))),
                  claim("claim-1", request("req-1", "class-a", 1, mem("2Gi")))], [CLASS_A],
                 [rslice("slice-1", "node-1", "pool-1", "driver-a",
                         {"name": "device-2", "capacity": {"memory": {"value": "2Gi"}}},
                         {"name": "device-1", "capacity": {"memory": {"value": "1Gi"}}})],
                 node="node-1", filtered={"node-2": ["cannot allocate all claims"]}),
    alloc_vector("network-attached-device", [claim("claim-0", request("req-0", "class-a"))], [CLASS_A],
                 [rslice("slice-1", region("region-1"), "pool-1", "driver-a", {"name": "device-1"})],
                 node="node-1", filtered={"node-2": ["cannot allocate all claims"]}),
    alloc_vector("all-devices-some-allocated",
                 [claim("claim-0", request("req-0", "class-a", mode="All"))], [CLASS_A],
                 [rslice("slice-1", "node-1", "pool-1", "driver-a", {"name": "device-1"}, {"name": "device-2"})],
                 allocated=[claim("holder", request("req-0", "class-a"), owner="x", allocation={
                     "devices": {"results": [{"request": "req-0", "driver": "driver-a", "pool": "pool-1",
                                              "device": "device-1"}]}})],
                 node=None, message="0/2 nodes are available: 2 cannot allocate all claims. still not "
                                    "schedulable, " + NOT_HELPFUL.format(n=2)),
    alloc_vector("with-constraint-not-matching-int-attribute",
                 [claim("claim-0", request("req-0", "class-a", 2),
                        constraints=[{"matchAttribute": "driver-a/numa"}])], [CLASS_A],
                 [rslice("slice-1", "node-1", "pool-1", "driver-a",
                         {"name": "device-1", "attributes": {"numa": {"int": 1}}},
                         {"name": "device-2", "attributes": {"numa": {"int": 2}}})],
                 node=None, filtered={"node-1": ["cannot allocate all claims"],
                                      "node-2": ["cannot allocate all claims"]}),
    alloc_vector("prioritized-list-first-unavailable",
                 [claim("claim-0", {"name": "req-0", "firstAvailable": [
                     {"name": "subReq-0", "deviceClassName": "class-b", "allocationMode": "ExactCount",
                      "count": 1},
                     {"name": "subReq-1", "deviceClassName": "class-a", "allocationMode": "ExactCount",
                      "count": 1}]})], [CLASS_A, CLASS_B],
                 [rslice("slice-1", "node-1", "pool-1", "driver-a", {"name": "device-1"})],
                 node="node-1", filtered={"node-2": ["cannot allocate all claims"]}),
    alloc_vector("no-slices", [claim("claim-0", request("req-0", "class-a"))], [CLASS_A], [],
                 node=None, message="0/2 nodes are available: 2 cannot allocate all claims. still not "
                                    "schedulable, " + NOT_HELPFUL.format(n=2)),
]
