"""The structured allocator and its CEL environment (kvert.scheduler.dra).

Cases are upstream's shared allocator tests,
``staging/src/k8s.io/dynamic-resource-allocation/structured/internal/allocatortesting/
allocator_testing.go`` (``TestAllocator``, case names as there), run against the "stable"
allocator's features (DRAAdminAccess and DRAPrioritizedList on, the rest off). As upstream
compares with ``ConsistOf``, the results of a claim are compared in any order.
"""

from __future__ import annotations

import time

import pytest

from kvert.scheduler.dra.allocator import (
    AllocationError, AllocationTimeout, Allocator, Features, SelectorCache, SliceInfo,
    gather_pools, slice_reaches_node,
)
from kvert.api.cel import MAX_EVAL_STEPS, CELError, compile_selector, device_value

T = "stable/allocator_test.go TestAllocator"  # the cases of allocatortesting/allocator_testing.go
NODE1, NODE2, REGION1, REGION2 = "node-1", "node-2", "region-1", "region-2"
CLASS_A, CLASS_B, DRIVER_A, DRIVER_B = "class-a", "class-b", "driver-a", "driver-b"
POOL1, POOL2, POOL3, POOL4 = "pool-1", "pool-2", "pool-3", "pool-4"


# ---- builders (upstream's helpers of the same names) ------------------------------------------


def node(name: str, region: str) -> dict:
    return {"metadata": {"name": name, "labels": {"region": region, "planet": "earth"}}}


def device_class(name: str, driver: str, config: str | None = None) -> dict:
    spec: dict = {"selectors": [{"cel": {"expression": f'device.driver == "{driver}"'}}]}
    if config:
        spec["config"] = [device_config(driver, config)]
    return {"metadata": {"name": name}, "spec": spec}


def device_config(driver: str, attribute: str) -> dict:
    return {"opaque": {"driver": driver, "parameters": {attribute: attribute + "Value"}}}


def request(name: str, cls: str, count: int = 1, *selectors: str, mode: str = "ExactCount",
            admin: bool | None = None) -> dict:
    body: dict = {"deviceClassName": cls, "allocationMode": mode}
    if mode == "ExactCount":
        body["count"] = count
    if selectors:
        body["selectors"] = [{"cel": {"expression": e}} for e in selectors]
    if admin is not None:
        body["adminAccess"] = admin
    return {"name": name, "exactly": body}


def sub_request(name: str, cls: str, count: int = 1, *selectors: str, mode: str = "ExactCount") -> dict:
    body = {"name": name, **request(name, cls, count, *selectors, mode=mode)["exactly"]}
    return body


def first_available(name: str, *subs: dict) -> dict:
    return {"name": name, "firstAvailable": list(subs)}


def claim(name: str, *requests: dict, constraints: list | None = None,
          config: list | None = None) -> dict:
    devices: dict = {"requests": list(requests)}
    if constraints:
        devices["constraints"] = constraints
    if config:
        devices["config"] = config
    return {"metadata": {"name": name}, "spec": {"devices": devices}}


def dev(name: str, capacity: dict | None = None, attributes: dict | None = None) -> dict:
    out: dict = {"name": name}
    if capacity:
        out["capacity"] = {k: {"value": v} for k, v in capacity.items()}
    if attributes:
        out["attributes"] = attributes
    return out


def slice_(name: str, where, pool: str, driver: str, *devices: dict, count: int = 1,
           generation: int = 1) -> dict:
    spec: dict = {"driver": driver, "pool": {"name": pool, "resourceSliceCount": count,
                                              "generation": generation},
                  "devices": list(devices)}
    if isinstance(where, dict):
        spec["nodeSelector"] = where
    elif where == "all":
        spec["allNodes"] = True
    else:
        spec["nodeName"] = where
    return {"metadata": {"name": name}, "spec": spec}


def label_selector(key: str, *values: str) -> dict:
    return {"nodeSelectorTerms": [{"matchExpressions": [
        {"key": key, "operator": "In", "values": list(values)}]}]}


def local_selector(name: str) -> dict:
    return {"nodeSelectorTerms": [{"matchFields": [
        {"key": "metadata.name", "operator": "In", "values": [name]}]}]}


def result(req: str, driver: str, pool: str, device: str, admin: bool = False) -> dict:
    out = {"request": req, "driver": driver, "pool": pool, "device": device}
    if admin:
        out["adminAccess"] = True
    return out


def mem(q: str) -> str:
    return f'device.capacity["{DRIVER_A}"].memory.compareTo(quantity("{q}")) >= 0'


def one_device(name: str, where, pool: str, driver: str) -> dict:
    return slice_(name, where, pool, driver, dev("device-1"))


def allocate(claims, classes, slices, node_obj, allocated=(), features=Features(), expired=None):
    infos = [SliceInfo(s) for s in slices]
    reach = [s for s in infos if slice_reaches_node(s, node_obj, features)]
    alloc = Allocator({c["metadata"]["name"]: c for c in classes}, set(allocated), features,
                      SelectorCache())
    return alloc.allocate(node_obj, list(claims), reach, expired)


def norm(allocation: dict) -> dict:
    """An allocation result with its results and node selector in a canonical order."""
    out = dict(allocation)
    out["devices"] = dict(allocation["devices"])
    out["devices"]["results"] = sorted(allocation["devices"]["results"],
                                       key=lambda r: (r["request"], r["driver"], r["pool"], r["device"]))
    if "nodeSelector" in out:
        terms = []
        for term in out["nodeSelector"]["nodeSelectorTerms"]:
            terms.append({k: sorted(({**r, "values": sorted(r["values"])} for r in v),
                                    key=lambda r: (r["key"], r["operator"]))
                          for k, v in term.items()})
        out["nodeSelector"] = {"nodeSelectorTerms": terms}
    return out


def expect(selector: dict | None, *results: dict, config: list | None = None) -> dict:
    out: dict = {"devices": {"results": list(results)}}
    if config:
        out["devices"]["config"] = config
    if selector is not None:
        out["nodeSelector"] = selector
    return norm(out)


CA, CB = device_class(CLASS_A, DRIVER_A), device_class(CLASS_B, DRIVER_B)
N1 = node(NODE1, REGION1)
ATTRS = {"driverVersion": {"version": "1.0.0"}, "numa": {"int": 1},
         "stringAttribute": {"string": "stringAttributeValue"}, "boolAttribute": {"bool": True}}

# name -> (claims, classes, slices, node, allocated, expected results | None | error substring)
CASES = {
    "simple": ([claim("claim-0", request("req-0", CLASS_A))], [CA],
               [one_device("slice-1", NODE1, POOL1, DRIVER_A)], N1, (),
               [expect(local_selector(NODE1), result("req-0", DRIVER_A, POOL1, "device-1"))]),
    "other-node": ([claim("claim-0", request("req-0", CLASS_A))], [CA],
                   [one_device("slice-1", NODE1, POOL1, DRIVER_B),
                    one_device("slice-2", NODE2, POOL2, DRIVER_A)], node(NODE2, REGION2), (),
                   [expect(local_selector(NODE2), result("req-0", DRIVER_A, POOL2, "device-1"))]),
    "small-and-large": (
        [claim("claim-0", request("req-0", CLASS_A, 1, mem("1Gi")), request("req-1", CLASS_A, 1, mem("2Gi")))],
        [CA], [slice_("slice-1", NODE1, POOL1, DRIVER_A, dev("device-1", {"memory": "1Gi"}),
                      dev("device-2", {"memory": "2Gi"}))], N1, (),
        [expect(local_selector(NODE1), result("req-0", DRIVER_A, POOL1, "device-1"),
                result("req-1", DRIVER_A, POOL1, "device-2"))]),
    "small-and-large-backtrack-requests": (
        [claim("claim-0", request("req-0", CLASS_A, 1, mem("1Gi")), request("req-1", CLASS_A, 1, mem("2Gi")))],
        [CA], [slice_("slice-1", NODE1, POOL1, DRIVER_A, dev("device-2", {"memory": "2Gi"}),
                      dev("device-1", {"memory": "1Gi"}))], N1, (),
        [expect(local_selector(NODE1), result("req-0", DRIVER_A, POOL1, "device-1"),
                result("req-1", DRIVER_A, POOL1, "device-2"))]),
    "small-and-large-backtrack-claims": (
        [claim("claim-0", request("req-0", CLASS_A, 1, mem("1Gi"))),
         claim("claim-1", request("req-1", CLASS_A, 1, mem("2Gi")))],
        [CA], [slice_("slice-1", NODE1, POOL1, DRIVER_A, dev("device-2", {"memory": "2Gi"}),
                      dev("device-1", {"memory": "1Gi"}))], N1, (),
        [expect(local_selector(NODE1), result("req-0", DRIVER_A, POOL1, "device-1")),
         expect(local_selector(NODE1), result("req-1", DRIVER_A, POOL1, "device-2"))]),
    "devices-split-across-different-slices": (
        [claim("claim-0", request("req-0", CLASS_A, 2))], [CA],
        [one_device("slice-1", NODE1, POOL1, DRIVER_A), one_device("slice-2", NODE1, POOL2, DRIVER_A)],
        N1, (), [expect(local_selector(NODE1), result("req-0", DRIVER_A, POOL1, "device-1"),
                        result("req-0", DRIVER_A, POOL2, "device-1"))]),
    "obsolete-slice": (
        [claim("claim-0", request("req-0", CLASS_A))], [CA],
        [slice_("slice-1-obsolete", NODE1, POOL1, DRIVER_A, dev("device-1"), count=2),
         slice_("slice-1-obsolete", NODE1, POOL1, DRIVER_A, dev("device-2"), count=2, generation=2)],
        N1, (), None),
    "duplicate-slice": (
        [claim("claim-0", request("req-0", CLASS_A))], [CA],
        [slice_("slice-1", NODE1, POOL1, DRIVER_A, dev("device-1"), count=2),
         slice_("slice-1-2", NODE1, POOL1, DRIVER_A, dev("device-1"), count=2)],
        N1, (), "invalid resource pools were encountered"),
    "no-slices": ([claim("claim-0", request("req-0", CLASS_A))], [CA], [], N1, (), None),
    "not-enough-suitable-devices": (
        [claim("claim-0", request("req-0", CLASS_A)), claim("claim-0", request("req-1", CLASS_A))],
        [CA], [one_device("slice-1", NODE1, POOL1, DRIVER_A)], N1, (), None),
    "no-classes": ([claim("claim-0", request("req-0", CLASS_A))], [],
                   [one_device("slice-1", NODE1, POOL1, DRIVER_A)], N1, (),
                   "could not retrieve device class class-a"),
    "unknown-class": ([claim("claim-0", request("req-0", "unknown-class"))], [CA],
                      [one_device("slice-1", NODE1, POOL1, DRIVER_A)], N1, (),
                      "could not retrieve device class unknown-class"),
    "empty-class": ([claim("claim-0", request("req-0", ""))], [CA],
                    [one_device("slice-1", NODE1, POOL1, DRIVER_A)], N1, (),
                    "claim claim-0, request req-0: missing device class name (unsupported request type?)"),
    "all-devices-single": ([claim("claim-0", request("req-0", CLASS_A, mode="All"))], [CA],
                           [one_device("slice-1", NODE1, POOL1, DRIVER_A)], N1, (),
                           [expect(local_selector(NODE1), result("req-0", DRIVER_A, POOL1, "device-1"))]),
    "all-devices-many": ([claim("claim-0", request("req-0", CLASS_A, mode="All"))], [CA],
                         [one_device("slice-1", NODE1, POOL1, DRIVER_A),
                          one_device("slice-1", NODE1, POOL2, DRIVER_A)], N1, (),
                         [expect(local_selector(NODE1), result("req-0", DRIVER_A, POOL1, "device-1"),
                                 result("req-0", DRIVER_A, POOL2, "device-1"))]),
    "all-devices-of-the-incomplete-pool": (
        [claim("claim-0", request("req-0", CLASS_A, mode="All"))], [CA],
        [slice_("slice-1", NODE1, POOL1, DRIVER_A, dev("device-1"), count=2)], N1, (),
        "claim claim-0, request req-0: asks for all devices, but resource pool driver-a/pool-1 "
        "is currently being updated"),
    "all-devices-plus-another": (
        [claim("claim-0", request("req-0", CLASS_A, mode="All")), claim("claim-1", request("req-0", CLASS_B))],
        [CA, CB], [one_device("slice-1", NODE1, POOL1, DRIVER_A), one_device("slice-1", NODE1, POOL1, DRIVER_B)],
        N1, (), [expect(local_selector(NODE1), result("req-0", DRIVER_A, POOL1, "device-1")),
                 expect(local_selector(NODE1), result("req-0", DRIVER_B, POOL1, "device-1"))]),
    "all-devices-many-plus-another-reversed": (
        [claim("claim-1", request("req-0", CLASS_B)), claim("claim-0", request("req-0", CLASS_A, mode="All"))],
        [CA, CB], [slice_("slice-1", NODE1, POOL1, DRIVER_A, dev("device-1"), dev("device-2")),
                   one_device("slice-1", NODE1, POOL1, DRIVER_B)],
        N1, (), [expect(local_selector(NODE1), result("req-0", DRIVER_B, POOL1, "device-1")),
                 expect(local_selector(NODE1), result("req-0", DRIVER_A, POOL1, "device-1"),
                        result("req-0", DRIVER_A, POOL1, "device-2"))]),
    "all-devices-no-solution": (
        [claim("claim-1", request("req-0", CLASS_A)), claim("claim-0", request("req-0", CLASS_A, mode="All"))],
        [CA], [one_device("slice-1", NODE1, POOL1, DRIVER_A)], N1, (), None),
    "all-devices-slice-without-devices": (
        [claim("claim-0", request("req-0", CLASS_A, mode="All"))], [CA],
        [slice_("slice-1", NODE1, POOL1, DRIVER_A)], N1, (), None),
    "all-devices-some-allocated": (
        [claim("claim-0", request("req-0", CLASS_A, mode="All"))], [CA],
        [slice_("slice-1", NODE1, POOL1, DRIVER_A, dev("device-1"), dev("device-2"))], N1,
        [(DRIVER_A, POOL1, "device-1")], None),
    "all-devices-some-allocated-admin-access": (
        [claim("claim-0", request("req-0", CLASS_A, mode="All", admin=True))], [CA],
        [slice_("slice-1", NODE1, POOL1, DRIVER_A, dev("device-1"), dev("device-2"))], N1,
        [(DRIVER_A, POOL1, "device-1")],
        [expect(local_selector(NODE1), result("req-0", DRIVER_A, POOL1, "device-1", True),
                result("req-0", DRIVER_A, POOL1, "device-2", True))]),
    "count-devices-some-allocated-admin-access": (
        [claim("claim-0", request("req-0", CLASS_A, 2, admin=True))], [CA],
        [slice_("slice-1", NODE1, POOL1, DRIVER_A, dev("device-1"), dev("device-2"))], N1,
        [(DRIVER_A, POOL1, "device-1")],
        [expect(local_selector(NODE1), result("req-0", DRIVER_A, POOL1, "device-1", True),
                result("req-0", DRIVER_A, POOL1, "device-2", True))]),
    "separate-claims-share-device-admin-access": (
        [claim("claim-0", request("req-0", CLASS_A, admin=True)),
         claim("claim-1", request("req-0", CLASS_A, admin=True))], [CA],
        [slice_("slice-1", NODE1, POOL1, DRIVER_A, dev("device-1"), dev("device-2"))], N1, (),
        [expect(local_selector(NODE1), result("req-0", DRIVER_A, POOL1, "device-1", True)),
         expect(local_selector(NODE1), result("req-0", DRIVER_A, POOL1, "device-1", True))]),
    "network-attached-device": (
        [claim("claim-0", request("req-0", CLASS_A))], [CA],
        [one_device("slice-1", label_selector("region", REGION1), POOL1, DRIVER_A)], N1, (),
        [expect(label_selector("region", REGION1), result("req-0", DRIVER_A, POOL1, "device-1"))]),
    "unsuccessful-allocation-network-attached-device": (
        [claim("claim-0", request("req-0", CLASS_A))], [CA],
        [one_device("slice-1", label_selector("region", REGION1), POOL1, DRIVER_A)],
        node(NODE2, REGION2), (), None),
    "many-network-attached-devices": (
        [claim("claim-0", request("req-0", CLASS_A, 4))], [CA],
        [one_device("slice-1", label_selector("region", REGION1), POOL1, DRIVER_A),
         one_device("slice-1", "all", POOL2, DRIVER_A),
         one_device("slice-1", label_selector("planet", "earth"), POOL3, DRIVER_A),
         one_device("slice-1", local_selector(NODE1), POOL4, DRIVER_A)], N1, (),
        [expect({"nodeSelectorTerms": [{
            "matchExpressions": [{"key": "region", "operator": "In", "values": [REGION1]},
                                 {"key": "planet", "operator": "In", "values": ["earth"]}],
            "matchFields": [{"key": "metadata.name", "operator": "In", "values": [NODE1]}]}]},
            *(result("req-0", DRIVER_A, p, "device-1") for p in (POOL1, POOL2, POOL3, POOL4)))]),
    "local-and-network-attached-devices": (
        [claim("claim-0", request("req-0", CLASS_A, 2))], [CA],
        [one_device("slice-1", label_selector("region", REGION1), POOL1, DRIVER_A),
         one_device("slice-1", NODE1, POOL2, DRIVER_A)], N1, (),
        [expect(local_selector(NODE1), result("req-0", DRIVER_A, POOL1, "device-1"),
                result("req-0", DRIVER_A, POOL2, "device-1"))]),
    "several-different-drivers": (
        [claim("claim-0", request("req-0", CLASS_A)), claim("claim-0", request("req-0", CLASS_B))],
        [CA, CB], [slice_("slice-1", NODE1, POOL1, DRIVER_A, dev("device-1"), dev("device-2")),
                   one_device("slice-1", NODE1, POOL1, DRIVER_B)], N1, (),
        [expect(local_selector(NODE1), result("req-0", DRIVER_A, POOL1, "device-1")),
         expect(local_selector(NODE1), result("req-0", DRIVER_B, POOL1, "device-1"))]),
    "already-allocated-devices": (
        [claim("claim-0", request("req-0", CLASS_A))], [CA],
        [one_device("slice-1", NODE1, POOL1, DRIVER_A)], N1,
        [(DRIVER_A, POOL1, "device-1"), (DRIVER_A, POOL1, "device-2")], None),
    "admin-access-enabled": (
        [claim("claim-0", request("req-0", CLASS_A, admin=True))], [CA],
        [one_device("slice-1", NODE1, POOL1, DRIVER_A)], N1,
        [(DRIVER_A, POOL1, "device-1"), (DRIVER_A, POOL1, "device-2")],
        [expect(local_selector(NODE1), result("req-0", DRIVER_A, POOL1, "device-1", True))]),
    "with-constraint": (
        [claim("claim-0", request("req-0", CLASS_A), request("req-1", CLASS_A), constraints=[
            {"matchAttribute": f"{DRIVER_A}/{a}"} for a in ("numa", "driverVersion", "stringAttribute",
                                                           "boolAttribute")])],
        [CA], [slice_("slice-1", NODE1, POOL1, DRIVER_A, dev("device-1", None, ATTRS),
                      dev("device-2", None, ATTRS))], N1, (),
        [expect(local_selector(NODE1), result("req-0", DRIVER_A, POOL1, "device-1"),
                result("req-1", DRIVER_A, POOL1, "device-2"))]),
    "with-constraint-non-existent-attribute": (
        [claim("claim-0", request("req-0", CLASS_A),
               constraints=[{"matchAttribute": f"{DRIVER_A}/NonExistentAttribute"}])],
        [CA], [one_device("slice-1", NODE1, POOL1, DRIVER_A)], N1, (), None),
    "with-constraint-not-matching-int-attribute": (
        [claim("claim-0", request("req-0", CLASS_A, 2), constraints=[{"matchAttribute": f"{DRIVER_A}/numa"}])],
        [CA, CB], [slice_("slice-1", NODE1, POOL1, DRIVER_A, dev("device-1", None, {"numa": {"int": 1}}),
                          dev("device-2", None, {"numa": {"int": 2}}))], N1, (), None),
    "with-constraint-not-matching-int-attribute-all-devices": (
        [claim("claim-0", request("req-0", CLASS_A, mode="All"),
               constraints=[{"matchAttribute": f"{DRIVER_A}/numa"}])],
        [CA, CB], [slice_("slice-1", NODE1, POOL1, DRIVER_A, dev("device-1", None, {"numa": {"int": 1}}),
                          dev("device-2", None, {"numa": {"int": 2}}))], N1, (),
        "claim claim-0, request req-0: cannot add device driver-a/pool-1/device-2 because a claim "
        "constraint would not be satisfied"),
    "with-constraint-not-matching-version-attribute": (
        [claim("claim-0", request("req-0", CLASS_A, 2),
               constraints=[{"matchAttribute": f"{DRIVER_A}/driverVersion"}])],
        [CA, CB], [slice_("slice-1", NODE1, POOL1, DRIVER_A,
                          dev("device-1", None, {"driverVersion": {"version": "1.0.0"}}),
                          dev("device-2", None, {"driverVersion": {"version": "2.0.0"}}))], N1, (), None),
    "with-constraint-for-request": (
        [claim("claim-0", request("req-0", CLASS_A), request("req-1", CLASS_A), constraints=[
            {"requests": ["req-0"], "matchAttribute": f"{DRIVER_A}/driverVersion"}])],
        [CA, CB], [slice_("slice-1", NODE1, POOL1, DRIVER_A,
                          dev("device-1", None, {"driverVersion": {"version": "1.0.0"}}),
                          dev("device-2", None, {"driverVersion": {"version": "2.0.0"}}))], N1, (),
        [expect(local_selector(NODE1), result("req-0", DRIVER_A, POOL1, "device-1"),
                result("req-1", DRIVER_A, POOL1, "device-2"))]),
    "with-constraint-for-request-retry": (
        [claim("claim-0", request("req-0", CLASS_A), request("req-1", CLASS_A), constraints=[
            {"requests": ["req-0"], "matchAttribute": f"{DRIVER_A}/driverVersion"},
            {"matchAttribute": f"{DRIVER_A}/stringAttribute"}])],
        [CA, CB], [slice_("slice-1", NODE1, POOL1, DRIVER_A,
                          dev("device-1", None, {"driverVersion": {"version": "1.0.0"},
                                                 "stringAttribute": {"string": "a"}}),
                          dev("device-2", None, {"driverVersion": {"version": "2.0.0"},
                                                 "stringAttribute": {"string": "b"}}),
                          dev("device-3", None, {"driverVersion": {"version": "3.0.0"},
                                                 "stringAttribute": {"string": "b"}}))], N1, (),
        [expect(local_selector(NODE1), result("req-0", DRIVER_A, POOL1, "device-2"),
                result("req-1", DRIVER_A, POOL1, "device-3"))]),
    "with-class-device-config": (
        [claim("claim-0", request("req-0", CLASS_A))], [device_class(CLASS_A, DRIVER_A, "classAttribute")],
        [one_device("slice-1", NODE1, POOL1, DRIVER_A)], N1, (),
        [expect(local_selector(NODE1), result("req-0", DRIVER_A, POOL1, "device-1"), config=[
            {"source": "FromClass", "requests": ["req-0"],
             **device_config(DRIVER_A, "classAttribute")}])]),
    "with-class-device-config-with-multiple-request-and-configs": (
        [claim("claim-0", request("req-0", CLASS_A), request("req-1", CLASS_A), request("req-2", CLASS_B))],
        [device_class(CLASS_A, DRIVER_A, "classAttribute-A"), device_class(CLASS_B, DRIVER_B, "classAttribute-B")],
        [slice_("slice-1", NODE1, POOL1, DRIVER_A, dev("device-0"), dev("device-1")),
         one_device("slice-2", NODE1, POOL1, DRIVER_B)], N1, (),
        [expect(local_selector(NODE1), result("req-0", DRIVER_A, POOL1, "device-0"),
                result("req-1", DRIVER_A, POOL1, "device-1"), result("req-2", DRIVER_B, POOL1, "device-1"),
                config=[{"source": "FromClass", "requests": ["req-0", "req-1"],
                         **device_config(DRIVER_A, "classAttribute-A")},
                        {"source": "FromClass", "requests": ["req-2"],
                         **device_config(DRIVER_B, "classAttribute-B")}])]),
    "claim-with-device-config": (
        [claim("claim-0", request("req-0", CLASS_A), config=[device_config(DRIVER_A, "deviceAttribute")])],
        [CA], [one_device("slice-1", NODE1, POOL1, DRIVER_A)], N1, (),
        [expect(local_selector(NODE1), result("req-0", DRIVER_A, POOL1, "device-1"), config=[
            {"source": "FromClaim", **device_config(DRIVER_A, "deviceAttribute")}])]),
    "unknown-selector": (
        [claim("claim-0", {"name": "req-0", "exactly": {"deviceClassName": CLASS_A, "selectors": [{}]}})],
        [CA], [one_device("slice-1", NODE1, POOL1, DRIVER_A)], N1, (),
        "CEL expression empty (unsupported selector type?)"),
    "unknown-allocation-mode": (
        [claim("claim-0", request("req-0", CLASS_A, mode="future-mode"))], [CA],
        [one_device("slice-1", NODE1, POOL1, DRIVER_A)], N1, (), "unsupported count mode future-mode"),
    "unknown-constraint": (
        [claim("claim-0", request("req-0", CLASS_A), constraints=[{}])], [CA],
        [one_device("slice-1", NODE1, POOL1, DRIVER_A)], N1, (),
        "empty constraint (unsupported constraint type?)"),
    "invalid-CEL-one-device": (
        [claim("claim-0", request("req-0", CLASS_A, 1, "noSuchVar"))], [CA],
        [one_device("slice-1", NODE1, POOL1, DRIVER_A)], N1, (), "undeclared reference"),
    "invalid-CEL-one-device-class": (
        [claim("claim-0", request("req-0", CLASS_A))],
        [{"metadata": {"name": CLASS_A}, "spec": {"selectors": [{"cel": {"expression": "noSuchVar"}}]}}],
        [one_device("slice-1", NODE1, POOL1, DRIVER_A)], N1, (), "undeclared reference"),
    "invalid-CEL-all-devices": (
        [claim("claim-0", request("req-0", CLASS_A, 1, "noSuchVar", mode="All"))], [CA],
        [one_device("slice-1", NODE1, POOL1, DRIVER_A)], N1, (), "undeclared reference"),
    "too-many-devices-single-request": (
        [claim("claim-0", request("req-0", CLASS_A, 500))], [CA], [], N1, (), "exceeds the claim limit"),
    "too-many-devices-total": (
        [claim("claim-0", request("req-0", CLASS_A, 32), request("req-1", CLASS_A, 1))], [CA],
        [slice_("slice-1", NODE1, POOL1, DRIVER_A, *(dev(f"device-{i}") for i in range(33)))], N1, (),
        "exceeds the claim limit"),
    "prioritized-list-first-unavailable": (
        [claim("claim-0", first_available("req-0", sub_request("subReq-0", CLASS_B), sub_request("subReq-1", CLASS_A)))],
        [CA, CB], [one_device("slice-1", NODE1, POOL1, DRIVER_A)], N1, (),
        [expect(local_selector(NODE1), result("req-0/subReq-1", DRIVER_A, POOL1, "device-1"))]),
    "prioritized-list-non-available": (
        [claim("claim-0", first_available("req-0", sub_request("subReq-0", CLASS_B, 2),
                                          sub_request("subReq-1", CLASS_A, 2)))],
        [CA, CB], [one_device("slice-1", NODE1, POOL1, DRIVER_A), one_device("slice-2", NODE1, POOL2, DRIVER_B)],
        N1, (), None),
    "prioritized-list-device-config": (
        [claim("claim-0", first_available("req-0", sub_request("subReq-0", CLASS_A), sub_request("subReq-1", CLASS_B, 2)),
               config=[{"requests": ["req-0/subReq-0"], **device_config(DRIVER_A, "foo")},
                       {"requests": ["req-0/subReq-1"], **device_config(DRIVER_B, "bar")}])],
        [CA, CB], [slice_("slice-1", NODE1, POOL1, DRIVER_B, dev("device-1"), dev("device-2"))], N1, (),
        [expect(local_selector(NODE1), result("req-0/subReq-1", DRIVER_B, POOL1, "device-1"),
                result("req-0/subReq-1", DRIVER_B, POOL1, "device-2"), config=[
                    {"source": "FromClaim", "requests": ["req-0/subReq-1"], **device_config(DRIVER_B, "bar")}])]),
    "prioritized-list-class-config": (
        [claim("claim-0", first_available("req-0", sub_request("subReq-0", CLASS_A, 2),
                                          sub_request("subReq-1", CLASS_B, 2)))],
        [device_class(CLASS_A, DRIVER_A, "foo"), device_class(CLASS_B, DRIVER_B, "bar")],
        [slice_("slice-1", NODE1, POOL1, DRIVER_B, dev("device-1"), dev("device-2")),
         slice_("slice-2", NODE1, POOL2, DRIVER_A, dev("device-3"))], N1, (),
        [expect(local_selector(NODE1), result("req-0/subReq-1", DRIVER_B, POOL1, "device-1"),
                result("req-0/subReq-1", DRIVER_B, POOL1, "device-2"), config=[
                    {"source": "FromClass", "requests": ["req-0/subReq-1"], **device_config(DRIVER_B, "bar")}])]),
    "prioritized-list-subrequests-with-expressions": (
        [claim("claim-0", request("req-0", CLASS_A, 1, mem("1Gi")),
               first_available("req-1", sub_request("subReq-0", CLASS_A, 1, mem("4Gi")),
                               sub_request("subReq-1", CLASS_A, 2, mem("2Gi"))))],
        [CA], [slice_("slice-1", NODE1, POOL1, DRIVER_A, dev("device-1", {"memory": "2Gi"}),
                      dev("device-2", {"memory": "2Gi"}), dev("device-3", {"memory": "1Gi"}))], N1, (),
        [expect(local_selector(NODE1), result("req-0", DRIVER_A, POOL1, "device-3"),
                result("req-1/subReq-1", DRIVER_A, POOL1, "device-1"),
                result("req-1/subReq-1", DRIVER_A, POOL1, "device-2"))]),
    "prioritized-list-subrequests-with-constraints-ref-parent-request": (
        [claim("claim-0", request("req-0", CLASS_A, 1, mem("8Gi")),
               first_available("req-1", sub_request("subReq-0", CLASS_A, 1, mem("2Gi")),
                               sub_request("subReq-1", CLASS_A, 1, mem("1Gi"))),
               constraints=[{"requests": ["req-0", "req-1"], "matchAttribute": f"{DRIVER_A}/driverVersion"}])],
        [CA], [slice_("slice-1", NODE1, POOL1, DRIVER_A,
                      dev("device-1", {"memory": "8Gi"}, {"driverVersion": {"version": "1.0.0"}})),
               slice_("slice-2", NODE1, POOL2, DRIVER_A,
                      dev("device-2", {"memory": "2Gi"}, {"driverVersion": {"version": "2.0.0"}}),
                      dev("device-3", {"memory": "1Gi"}, {"driverVersion": {"version": "1.0.0"}}))], N1, (),
        [expect(local_selector(NODE1), result("req-0", DRIVER_A, POOL1, "device-1"),
                result("req-1/subReq-1", DRIVER_A, POOL2, "device-3"))]),
    "prioritized-list-subrequests-with-constraints-ref-sub-request": (
        [claim("claim-0", request("req-0", CLASS_A, 1, mem("8Gi")),
               first_available("req-1", sub_request("subReq-0", CLASS_A, 1, mem("2Gi")),
                               sub_request("subReq-1", CLASS_A, 1, mem("1Gi"))),
               constraints=[{"requests": ["req-0", "req-1/subReq-0"],
                             "matchAttribute": f"{DRIVER_A}/driverVersion"}])],
        [CA], [slice_("slice-1", NODE1, POOL1, DRIVER_A,
                      dev("device-1", {"memory": "8Gi"}, {"driverVersion": {"version": "1.0.0"}})),
               slice_("slice-2", NODE1, POOL2, DRIVER_A,
                      dev("device-2", {"memory": "2Gi"}, {"driverVersion": {"version": "2.0.0"}}))], N1, (),
        [expect(local_selector(NODE1), result("req-0", DRIVER_A, POOL1, "device-1"),
                result("req-1/subReq-1", DRIVER_A, POOL2, "device-2"))]),
    "prioritized-list-subrequests-with-allocation-mode-all": (
        [claim("claim-0", first_available("req-0", sub_request("subReq-0", CLASS_A, mode="All"),
                                          sub_request("subReq-1", CLASS_A)))],
        [CA], [slice_("slice-1", NODE1, POOL1, DRIVER_A, dev("device-1"), dev("device-2"))], N1,
        [(DRIVER_A, POOL1, "device-1")],
        [expect(local_selector(NODE1), result("req-0/subReq-1", DRIVER_A, POOL1, "device-2"))]),
    "prioritized-list-allocation-mode-all-multiple-requests": (
        [claim("claim-0", request("req-0", CLASS_A),
               first_available("req-1", sub_request("subReq-0", CLASS_A, mode="All"),
                               sub_request("subReq-1", CLASS_A)))],
        [CA], [slice_("slice-1", NODE1, POOL1, DRIVER_A, dev("device-1"), dev("device-2"))], N1, (),
        [expect(local_selector(NODE1), result("req-0", DRIVER_A, POOL1, "device-1"),
                result("req-1/subReq-1", DRIVER_A, POOL1, "device-2"))]),
    "prioritized-list-multi-request": (
        [claim("claim-0", request("req-1", CLASS_A, 1, mem("8Gi")),
               first_available("req-0", sub_request("subReq-0", CLASS_A, 1, mem("8Gi")),
                               sub_request("subReq-1", CLASS_A, 1, mem("4Gi"))))],
        [CA], [slice_("slice-1", NODE1, POOL1, DRIVER_A, dev("device-1", {"memory": "8Gi"})),
               slice_("slice-2", NODE1, POOL2, DRIVER_A, dev("device-2", {"memory": "4Gi"}))], N1, (),
        [expect(local_selector(NODE1), result("req-1", DRIVER_A, POOL1, "device-1"),
                result("req-0/subReq-1", DRIVER_A, POOL2, "device-2"))]),
    "all-devices-slice-without-devices-prioritized-list": (
        [claim("claim-0", first_available("req-0", sub_request("subReq-0", CLASS_A, mode="All"),
                                          sub_request("subReq-1", CLASS_B)))],
        [CA, CB], [slice_("slice-1", NODE1, POOL1, DRIVER_A), one_device("slice-2", NODE1, POOL2, DRIVER_B)],
        N1, (), [expect(local_selector(NODE1), result("req-0/subReq-1", DRIVER_B, POOL2, "device-1"))]),
}


@pytest.mark.parametrize("name", sorted(CASES), ids=[f"{T}/{n}" for n in sorted(CASES)])
def test_allocator(name: str) -> None:
    claims, classes, slices, node_obj, allocated, want = CASES[name]
    if isinstance(want, str):
        with pytest.raises(AllocationError) as err:
            allocate(claims, classes, slices, node_obj, allocated)
        assert want in str(err.value)
        return
    got = allocate(claims, classes, slices, node_obj, allocated)
    if want is None:
        assert got is None
    else:
        assert got is not None and [norm(g) for g in got] == want


def test_admin_access_disabled() -> None:
    # TestAllocator/admin-access-disabled: the request asks for admin access, the feature is off
    with pytest.raises(AllocationError, match="claim claim-0, request req-0: admin access is "
                                              "requested, but the feature is disabled"):
        allocate([claim("claim-0", request("req-0", CLASS_A, admin=True))], [CA],
                 [one_device("slice-1", NODE1, POOL1, DRIVER_A)], N1,
                 features=Features(admin_access=False))


def test_prioritized_list_disabled() -> None:
    # TestAllocator/prioritized-list-disabled
    with pytest.raises(AllocationError, match="claim claim-0, request req-0: has subrequests, but "
                                              "the DRAPrioritizedList feature is disabled"):
        allocate([claim("claim-0", first_available("req-0", sub_request("subReq-0", CLASS_A)))], [CA],
                 [one_device("slice-1", NODE1, POOL1, DRIVER_A)], N1,
                 features=Features(prioritized_list=False))


def test_partitionable_devices_off_ignores_per_device_slices_and_counter_consumers() -> None:
    per_device = slice_("slice-1", NODE1, POOL1, DRIVER_A, dev("device-1"))
    per_device["spec"] = {k: v for k, v in per_device["spec"].items() if k != "nodeName"}
    per_device["spec"]["perDeviceNodeSelection"] = True
    per_device["spec"]["devices"][0]["nodeName"] = NODE1
    assert allocate([claim("claim-0", request("req-0", CLASS_A))], [CA], [per_device], N1) is None
    consumer = slice_("slice-1", NODE1, POOL1, DRIVER_A, {
        "name": "device-1", "consumesCounters": [{"counterSet": "s", "counters": {"c": {"value": "1"}}}]})
    assert allocate([claim("claim-0", request("req-0", CLASS_A))], [CA], [consumer], N1) is None


def test_deadline_stops_a_long_search() -> None:
    # 12 devices, 13 wanted one at a time through separate claims: no solution, and the
    # exhaustive search over orderings would run for ages without a deadline
    devices = [dev(f"device-{i}", None, {"numa": {"int": i}}) for i in range(12)]
    claims = [claim(f"claim-{i}", request("req-0", CLASS_A, 1, 'device.attributes["driver-a"].numa >= 0'))
              for i in range(13)]
    start = time.monotonic()
    end = time.monotonic() + 0.2
    with pytest.raises(AllocationTimeout):
        allocate(claims, [CA], [slice_("slice-1", NODE1, POOL1, DRIVER_A, *devices)], N1,
                 expired=lambda: time.monotonic() > end)
    assert time.monotonic() - start < 5


def test_gather_pools_generations_and_order() -> None:
    old = SliceInfo(slice_("a", NODE1, POOL1, DRIVER_B, dev("x"), generation=1))
    new = SliceInfo(slice_("b", NODE1, POOL1, DRIVER_B, dev("y"), generation=2))
    other = SliceInfo(slice_("c", NODE1, POOL2, DRIVER_A, dev("z")))
    pools = gather_pools([old, new, other])
    assert [(p.driver, p.name, [s.name for s in p.slices]) for p in pools] == \
        [(DRIVER_A, POOL2, ["c"]), (DRIVER_B, POOL1, ["b"])]


def test_selector_verdicts_are_cached_per_device() -> None:
    cache = SelectorCache()
    info = SliceInfo(one_device("slice-1", NODE1, POOL1, DRIVER_A))
    d = info.devices[0]
    assert cache.matches('device.driver == "driver-a"', d)
    d._cel = "not a device value any more"     # a second evaluation would fail
    assert cache.matches('device.driver == "driver-a"', d)


# ---- CEL -----------------------------------------------------------------------------------


DEVICE = device_value(DRIVER_A, dev("d", {"memory": "2Gi"}, {
    "numa": {"int": 1}, "healthy": {"bool": True}, "model": {"string": "A100"},
    "driverVersion": {"version": "1.2.3"}, "example.com/rack": {"string": "r1"}}))


@pytest.mark.parametrize("expression,want", [
    ('device.driver == "driver-a"', True),
    ('device.attributes["driver-a"].numa == 1 && device.attributes["driver-a"].healthy', True),
    ('device.attributes["example.com"].rack == "r1"', True),
    ('device.capacity["driver-a"].memory.compareTo(quantity("1Gi")) >= 0', True),
    ('device.capacity["driver-a"].memory.isGreaterThan(quantity("2Gi"))', False),
    ('device.capacity["driver-a"].memory == quantity("2048Mi")', True),
    ('device.attributes["driver-a"].driverVersion.isGreaterThan(semver("1.2.0"))', True),
    ('device.attributes["driver-a"].driverVersion.major() == 1', True),
    ('semver("1.0.0-alpha").isLessThan(semver("1.0.0"))', True),
    ('cel.bind(a, device.attributes["driver-a"], a.numa == 1 && a.model.lowerAscii() == "a100")', True),
    ('device.attributes["driver-a"].exists(k, k == "healthy")', True),
    ('"healthy" in device.attributes["driver-a"]', True),
    ('has(device.attributes["driver-a"].nope)', False),
    ('device.attributes["driver-a"].model.matches("^A1")', True),
    ('false && 1 / 0 == 1', False),
    ('1 / 0 == 1 || true', True),
])
def test_cel_selector(expression: str, want: bool) -> None:
    assert compile_selector(expression).evaluate(DEVICE) is want


@pytest.mark.parametrize("expression,error", [
    # dynamicresources_test.go TestPlugin/claim-parameters-CEL-runtime-error: "no such key"
    ('device.attributes["driver-a"].nope', "no such key: nope"),
    ('device.attributes["other.example.com"].model == "x"', "no such key: model"),
    ('device.attributes["driver-a"].numa > "x"', "no such overload"),
    ("device.driver", "CEL result of type string could not be converted to bool"),
    ("9223372036854775807 + 1 > 0", "integer overflow"),
])
def test_cel_runtime_errors(expression: str, error: str) -> None:
    with pytest.raises(CELError) as err:
        compile_selector(expression).evaluate(DEVICE)
    assert str(err.value) == error


def test_cel_compile_errors() -> None:
    with pytest.raises(CELError) as err:
        compile_selector("noSuchVar")
    assert str(err.value).startswith(
        "compilation failed: ERROR: <input>:1:1: undeclared reference to 'noSuchVar' (in container '')")
    with pytest.raises(CELError, match="undeclared reference to 'nope'"):
        compile_selector("nope(1)")
    with pytest.raises(CELError, match="Syntax error"):
        compile_selector("device.driver ==")
    with pytest.raises(CELError, match="too long"):
        compile_selector("true && " * 2000 + "true")
    # comprehension variables and cel.bind's are declared inside their bodies only
    compile_selector("[1].all(x, x > 0)")
    with pytest.raises(CELError, match="undeclared reference to 'x'"):
        compile_selector("[1].all(x, x > 0) && x > 0")


def test_cel_cost_is_bounded() -> None:
    big = "[" + ",".join(["1"] * 100) + "]"
    expression = f"{big}.all(a, {big}.all(b, {big}.all(c, true)))"
    assert 100 ** 3 > MAX_EVAL_STEPS
    with pytest.raises(CELError, match="cost limit exceeded"):
        compile_selector(expression).evaluate(DEVICE)
