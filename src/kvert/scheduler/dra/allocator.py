"""The structured-parameters allocator (``k8s.io/dynamic-resource-allocation/structured``).

Given the ResourceSlices whose devices a node can reach, the devices already in use, the
DeviceClasses and some ResourceClaims, :meth:`Allocator.allocate` finds devices for every
request of every claim or reports that there are none. It is the "stable" implementation
kube-scheduler 1.35 runs with its default feature gates (DRAAdminAccess and
DRAPrioritizedList on; partitionable devices, device taints, binding conditions and
consumable capacity off):

* devices come from *pools* (driver + pool name). A pool's slices of an older generation
  are ignored; a pool missing some of its ``resourceSliceCount`` slices is *incomplete* and
  one with duplicate device names *invalid*: neither gives devices, an "All" request over
  one is an error, and an allocation that fails with an invalid pool around says so;
* a request (``exactly``) asks for ``count`` devices (``ExactCount``) or every matching
  device (``All``) of a DeviceClass; the class's selectors and the request's (CEL,
  :mod:`.cel`) must all accept a device; ``adminAccess`` may take a device in use;
* a request with ``firstAvailable`` is satisfied by its first subrequest that can be;
* ``constraints`` with ``matchAttribute`` make the devices of the named requests (all
  requests when none are named) agree on an attribute;
* the search is exhaustive with backtracking (claims in order, requests in order, devices
  in pool order) and takes the first solution, as upstream does;
* the result of a claim is its devices, the class and claim configs that apply to them
  and a node selector: the node's name when any device is node-local, else the merged
  selectors of the slices, else none (the devices are reachable from everywhere).

Errors (a missing class, a CEL error, an impossible "All" request) raise
:class:`AllocationError` with upstream's message; running past a deadline raises
:class:`AllocationTimeout`. Selector verdicts are memoized across calls per (expression,
device) in a :class:`SelectorCache`, so a device is judged once per selector for as long as
its ResourceSlice is unchanged.
"""

from __future__ import annotations

import itertools
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kvert.api.cel import CELError, compile_selector, device_value
from kvert.api.nodeaffinity import NodeSelector

# resourceapi.AllocationResultsMaxSize
ALLOCATION_RESULTS_MAX_SIZE = 32
EXACT_COUNT, ALL = "ExactCount", "All"
FROM_CLASS, FROM_CLAIM = "FromClass", "FromClaim"

DeviceID = tuple[str, str, str]    # driver, pool, device


class AllocationError(Exception):
    """The claims cannot be allocated anywhere as written (upstream returns an error)."""


class AllocationTimeout(Exception):
    """The allocation ran past its deadline."""


@dataclass(frozen=True)
class Features:
    """The allocator's feature switches; defaults are kube-scheduler 1.35's feature gates."""

    admin_access: bool = True
    prioritized_list: bool = True
    partitionable_devices: bool = False
    device_taints: bool = False
    device_binding: bool = False


def claim_key(claim: Mapping[str, Any]) -> str:
    """``klog.KObj`` of a claim: ``namespace/name``."""
    meta = claim.get("metadata") or {}
    ns = meta.get("namespace") or ""
    return f"{ns}/{meta.get('name', '')}" if ns else str(meta.get("name", ""))


def device_id_str(device_id: DeviceID) -> str:
    return "/".join(device_id)


# ---------------------------------------------------------------------------------------------
# slices and devices
# ---------------------------------------------------------------------------------------------


_keys = itertools.count(1)


class DeviceInfo:
    """One device of a ResourceSlice, with its CEL value built once."""

    __slots__ = ("id", "obj", "slice", "key", "_cel")

    def __init__(self, obj: Mapping[str, Any], slice_: SliceInfo):
        self.obj = obj
        self.slice = slice_
        self.id: DeviceID = (slice_.driver, slice_.pool, str(obj.get("name", "")))
        self.key = next(_keys)     # identity of this device version in selector caches
        self._cel: Any = None

    def cel_value(self) -> Any:
        if self._cel is None:
            try:
                self._cel = device_value(self.slice.driver, self.obj)
            except CELError as e:
                self._cel = e
        if isinstance(self._cel, CELError):
            raise self._cel
        return self._cel

    @property
    def attributes(self) -> Mapping[str, Any]:
        return self.obj.get("attributes") or {}


class SliceInfo:
    """A ResourceSlice, read once: where its devices are reachable from and the devices."""

    __slots__ = ("obj", "name", "driver", "pool", "generation", "count", "node_name",
                 "all_nodes", "node_selector", "per_device", "devices")

    def __init__(self, obj: Mapping[str, Any]):
        spec = obj.get("spec") or {}
        pool = spec.get("pool") or {}
        self.obj = obj
        self.name = str((obj.get("metadata") or {}).get("name", ""))
        self.driver = str(spec.get("driver", ""))
        self.pool = str(pool.get("name", ""))
        self.generation = int(pool.get("generation") or 0)
        self.count = int(pool.get("resourceSliceCount") or 0)
        self.node_name = spec.get("nodeName") or None
        self.all_nodes = bool(spec.get("allNodes"))
        self.node_selector = spec.get("nodeSelector")
        self.per_device = spec.get("perDeviceNodeSelection")
        self.devices = [DeviceInfo(d, self) for d in spec.get("devices") or () if isinstance(d, dict)]


class SelectorCache:
    """Selector verdicts per (expression, device version), shared across allocations."""

    def __init__(self, size: int = 65536):
        self.size = size
        self._data: OrderedDict[tuple[str, int], bool | CELError] = OrderedDict()

    def matches(self, expression: str, device: DeviceInfo) -> bool:
        key = (expression, device.key)
        hit = self._data.get(key)
        if hit is None:
            try:
                hit = compile_selector(expression).evaluate(device.cel_value())
            except CELError as e:
                hit = e
            self._data[key] = hit
            if len(self._data) > self.size:
                self._data.popitem(last=False)
        if isinstance(hit, CELError):
            raise hit
        return hit


@dataclass
class Pool:
    driver: str
    name: str
    slices: list[SliceInfo] = field(default_factory=list)
    incomplete: bool = False
    invalid: bool = False
    invalid_reason: str = ""

    @property
    def id(self) -> str:
        return f"{self.driver}/{self.name}"


def slice_reaches_node(s: SliceInfo, node: Mapping[str, Any] | None,
                       features: Features = Features()) -> bool:
    """Whether a slice's devices are reachable from ``node`` (``nodeMatches``)."""
    if s.per_device is not None and not features.partitionable_devices:
        return False
    if s.node_name:
        if not node:
            return False
        return (node.get("metadata") or {}).get("name") == s.node_name
    if s.all_nodes:
        return True
    if s.node_selector is not None:
        return NodeSelector(s.node_selector).matches(node)
    return False    # per-device node selection (partitionable devices) or a future field


def gather_pools(slices: Iterable[SliceInfo]) -> list[Pool]:
    """The pools of the given (node-reachable) slices, in (driver, pool) order."""
    pools: dict[tuple[str, str], Pool] = {}
    for s in slices:
        pool = pools.get((s.driver, s.pool))
        if pool is None:
            pools[(s.driver, s.pool)] = Pool(s.driver, s.pool, [s])
            continue
        current = pool.slices[0].generation
        if s.generation < current:
            continue                      # out-dated
        if s.generation > current:
            pool.slices = []              # newer, replaces all older slices
        pool.slices.append(s)
    out = []
    for key in sorted(pools):
        pool = pools[key]
        pool.slices.sort(key=lambda s: s.name)
        pool.incomplete = len(pool.slices) != pool.slices[0].count
        seen: set[str] = set()
        for s in pool.slices:
            for d in s.devices:
                if d.id[2] in seen and not pool.invalid:
                    pool.invalid, pool.invalid_reason = True, f"duplicate device name {d.id[2]}"
                seen.add(d.id[2])
        out.append(pool)
    return out


def allocated_device_ids(claims: Iterable[Mapping[str, Any]]) -> set[DeviceID]:
    """Devices allocated to claims (admin-access results do not count as in use)."""
    out: set[DeviceID] = set()
    for claim in claims:
        allocation = (claim.get("status") or {}).get("allocation")
        if not allocation:
            continue
        for r in ((allocation.get("devices") or {}).get("results")) or ():
            if r.get("adminAccess"):
                continue
            out.add((str(r.get("driver", "")), str(r.get("pool", "")), str(r.get("device", ""))))
    return out


# ---------------------------------------------------------------------------------------------
# requests
# ---------------------------------------------------------------------------------------------


class _Request:
    """A request or subrequest, as ``requestAccessor`` reads it."""

    __slots__ = ("name", "class_name", "mode", "count", "admin", "has_admin", "selectors",
                 "tolerations")

    def __init__(self, body: Mapping[str, Any], name: str, exact: bool):
        self.name = name
        self.class_name = str(body.get("deviceClassName") or "")
        self.mode = body.get("allocationMode") or EXACT_COUNT
        count = body.get("count")
        self.count = 1 if count is None and self.mode == EXACT_COUNT else int(count or 0)
        self.has_admin = exact and body.get("adminAccess") is not None
        self.admin = exact and bool(body.get("adminAccess"))
        self.selectors = list(body.get("selectors") or ())
        self.tolerations = list(body.get("tolerations") or ())


def _exact(request: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The request's ``exactly`` body (v1); a v1beta1 request carries it inline."""
    if isinstance(request.get("exactly"), dict):
        return request["exactly"]
    if request.get("deviceClassName") is not None:
        return request
    return None


@dataclass
class _RequestData:
    request: _Request
    parent: str | None
    cls: Mapping[str, Any] | None = None
    num_devices: int = 0
    selected_sub: int = 0
    all_devices: list[DeviceInfo] = field(default_factory=list)

    def request_name(self) -> str:
        return f"{self.parent}/{self.request.name}" if self.parent else self.request.name


@dataclass
class _Result:
    request: str
    parent: str | None
    device: DeviceInfo
    admin: bool

    def request_name(self) -> str:
        return f"{self.parent}/{self.request}" if self.parent else self.request


class _MatchAttribute:
    """``matchAttributeConstraint``: the devices of the named requests share an attribute."""

    def __init__(self, requests: Iterable[str], attribute: str):
        self.requests = set(requests)
        self.attribute = attribute
        self.value: tuple[str, Any] | None = None
        self.num = 0

    def _applies(self, request: str, sub: str | None) -> bool:
        if not self.requests:
            return True
        if sub is None:
            return request in self.requests
        return request in self.requests or f"{request}/{sub}" in self.requests

    def add(self, request: str, sub: str | None, device: DeviceInfo) -> bool:
        if not self._applies(request, sub):
            return True
        value = _lookup_attribute(device, self.attribute)
        if value is None:
            return False
        if self.num == 0:
            self.value, self.num = value, 1
            return True
        if value != self.value:
            return False
        self.num += 1
        return True

    def remove(self, request: str, sub: str | None, device: DeviceInfo) -> None:
        if self._applies(request, sub):
            self.num -= 1


def _lookup_attribute(device: DeviceInfo, name: str) -> tuple[str, Any] | None:
    """(type, value) of a fully qualified attribute; an attribute of the device's driver may
    be written without its domain."""
    attrs = device.attributes
    attr = attrs.get(name)
    if attr is None:
        domain, sep, ident = name.partition("/")
        if not sep or domain != device.id[0]:
            return None
        attr = attrs.get(ident)
    if not isinstance(attr, Mapping):
        return None
    for kind in ("string", "int", "bool", "version"):
        if attr.get(kind) is not None:
            return kind, attr[kind]
    return None


# ---------------------------------------------------------------------------------------------
# the allocator
# ---------------------------------------------------------------------------------------------


class Allocator:
    """Allocates claims on one node from the slices that reach it (shared across nodes)."""

    def __init__(self, classes: Mapping[str, Mapping[str, Any]], allocated: set[DeviceID],
                 features: Features = Features(), selectors: SelectorCache | None = None):
        self.classes = classes
        self.allocated = allocated
        self.features = features
        self.selectors = selectors if selectors is not None else SelectorCache()

    def allocate(self, node: Mapping[str, Any] | None, claims: Sequence[Mapping[str, Any]],
                 slices: Iterable[SliceInfo],
                 expired: Callable[[], bool] | None = None) -> list[dict] | None:
        """One allocation result per claim (``status.allocation``), or None when the claims
        cannot all be allocated from ``slices`` (the slices reaching ``node``). ``expired``
        says when the time allowed (``filterTimeout``, on the scheduler's clock) is up."""
        run = _Run(self, node, claims, gather_pools(slices), expired)
        return run.allocate()


class _Run:
    """One ``Allocate`` call (upstream's ``allocator``)."""

    def __init__(self, alloc: Allocator, node: Mapping[str, Any] | None,
                 claims: Sequence[Mapping[str, Any]], pools: list[Pool],
                 expired: Callable[[], bool] | None):
        self.a = alloc
        self.features = alloc.features
        self.node = node
        self.claims = claims
        self.pools = pools
        self.expired = expired
        self.request_data: dict[tuple[int, int, int], _RequestData] = {}
        self.constraints: list[list[_MatchAttribute]] = []
        self.matches: dict[tuple[int, int, int, DeviceID], bool] = {}
        self.allocating: dict[DeviceID, set[int]] = {}
        self.results: list[list[_Result]] = [[] for _ in claims]
        self.calls = 0

    # ---- validation -----------------------------------------------------------------

    def allocate(self) -> list[dict] | None:
        for ci, claim in enumerate(self.claims):
            devices = (claim.get("spec") or {}).get("devices") or {}
            min_devices = 0
            for ri, request in enumerate(devices.get("requests") or ()):
                subs = request.get("firstAvailable") or []
                name = str(request.get("name", ""))
                if subs and not self.features.prioritized_list:
                    raise AllocationError(f"claim {claim_key(claim)}, request {name}: has "
                                          "subrequests, but the DRAPrioritizedList feature is "
                                          "disabled")
                if subs:
                    least = None
                    for si, sub in enumerate(subs):
                        rd = self._validate((ci, ri, si), _Request(sub, str(sub.get("name", "")), False),
                                            name)
                        self.request_data[(ci, ri, si)] = rd
                        least = rd.num_devices if least is None else min(least, rd.num_devices)
                    min_devices += least or 0
                else:
                    body = _exact(request)
                    if body is None:
                        raise AllocationError(f"claim {claim_key(claim)}, request {name}: missing "
                                              "device class name (unsupported request type?)")
                    rd = self._validate((ci, ri, 0), _Request(body, name, True),
                                        None)
                    self.request_data[(ci, ri, 0)] = rd
                    min_devices += rd.num_devices
            if min_devices > ALLOCATION_RESULTS_MAX_SIZE:
                raise AllocationError(f"claim {claim_key(claim)}: number of requested devices "
                                      f"{min_devices} exceeds the claim limit of "
                                      f"{ALLOCATION_RESULTS_MAX_SIZE}")
            constraints = []
            for i, c in enumerate(devices.get("constraints") or ()):
                if not c.get("matchAttribute"):
                    raise AllocationError(f"claim {claim_key(claim)}, constraint #{i}: empty "
                                          "constraint (unsupported constraint type?)")
                constraints.append(_MatchAttribute(c.get("requests") or (), str(c["matchAttribute"])))
            self.constraints.append(constraints)

        try:
            done = self._allocate_one(0, 0, 0, 0, False)
        except _MaxSizeExceeded:
            done = False
        if not done:
            for pool in self.pools:
                if pool.invalid:
                    raise AllocationError("invalid resource pools were encountered")
            return None
        return [self._result(ci) for ci in range(len(self.claims))]

    def _validate(self, key: tuple[int, int, int], request: _Request,
                  parent: str | None) -> _RequestData:
        claim = self.claims[key[0]]
        rd = _RequestData(request, parent)
        shown = rd.request_name() if parent else request.name
        for i, selector in enumerate(request.selectors):
            if not isinstance(selector, Mapping) or not (selector.get("cel") or {}).get("expression"):
                raise AllocationError(f"claim {claim_key(claim)}, request {shown}, selector #{i}: "
                                      "CEL expression empty (unsupported selector type?)")
        if request.has_admin and not self.features.admin_access:
            raise AllocationError(f"claim {claim_key(claim)}, request {shown}: admin access is "
                                  "requested, but the feature is disabled")
        if not request.class_name:
            raise AllocationError(f"claim {claim_key(claim)}, request {shown}: missing device "
                                  "class name (unsupported request type?)")
        cls = self.a.classes.get(request.class_name)
        if cls is None:
            raise AllocationError(
                f"claim {claim_key(claim)}, request {shown}: could not retrieve device class "
                f"{request.class_name}: deviceclass.resource.k8s.io \"{request.class_name}\" "
                "not found")
        rd.cls = cls
        if request.mode == EXACT_COUNT:
            rd.num_devices = request.count
        elif request.mode == ALL:
            for pool in self.pools:
                if pool.incomplete:
                    raise AllocationError(f"claim {claim_key(claim)}, request {shown}: asks for "
                                          f"all devices, but resource pool {pool.id} is "
                                          "currently being updated")
                if pool.invalid:
                    raise AllocationError(f"claim {claim_key(claim)}, request {shown}: asks for "
                                          f"all devices, but resource pool {pool.id} is "
                                          "currently invalid")
                for s in pool.slices:
                    for d in s.devices:
                        if self._selectable(key, rd, d):
                            rd.all_devices.append(d)
            rd.num_devices = len(rd.all_devices)
        else:
            raise AllocationError(f"claim {claim_key(claim)}, request {shown}: unsupported "
                                  f"count mode {request.mode}")
        return rd

    # ---- search ---------------------------------------------------------------------

    def _allocate_one(self, ci: int, ri: int, si: int, di: int, in_sub: bool) -> bool:
        self.calls += 1
        if self.expired is not None and (self.calls & 63) == 0 and self.expired():
            raise AllocationTimeout()
        if ci >= len(self.claims):
            return True
        requests = ((self.claims[ci].get("spec") or {}).get("devices") or {}).get("requests") or ()
        if ri >= len(requests):
            try:
                return self._allocate_one(ci + 1, 0, 0, 0, False)
            except _MaxSizeExceeded:
                return False
        rd = self.request_data[(ci, ri, si)]
        if not in_sub and rd.parent is not None:
            all_exceeded = True
            for sub in itertools.count():
                if (ci, ri, sub) not in self.request_data:
                    if all_exceeded:
                        raise _MaxSizeExceeded()
                    return False
                try:
                    ok = self._allocate_one(ci, ri, sub, di, True)
                except _MaxSizeExceeded:
                    continue
                all_exceeded = False
                if ok:
                    self.request_data[(ci, ri, 0)].selected_sub = sub
                    return True
        request = rd.request
        do_all = request.mode == ALL
        if do_all and not rd.all_devices:
            return False
        if di >= rd.num_devices:
            return self._allocate_one(ci, ri + 1, 0, 0, False)
        if len(self.results[ci]) + rd.num_devices - di > ALLOCATION_RESULTS_MAX_SIZE:
            raise _MaxSizeExceeded()
        if do_all:
            device = rd.all_devices[di]
            undo = self._allocate_device(ci, ri, si, device, must=True)
            if undo is None:
                return False
            try:
                done = self._allocate_one(ci, ri, si, di + 1, in_sub)
            except BaseException:
                undo()
                raise
            if not done:
                undo()
            return done
        key = (ci, ri, si)
        for pool in self.pools:
            if pool.incomplete or pool.invalid:
                continue
            for s in pool.slices:
                for device in s.devices:
                    if self._in_use(device.id, ci, request.admin):
                        continue
                    if not self._selectable(key, rd, device):
                        continue
                    undo = self._allocate_device(ci, ri, si, device, must=False)
                    if undo is None:
                        continue
                    try:
                        done = self._allocate_one(ci, ri, si, di + 1, in_sub)
                    except BaseException:
                        undo()
                        raise
                    if done:
                        return True
                    undo()
        return False

    def _in_use(self, device_id: DeviceID, ci: int, admin: bool) -> bool:
        if admin:
            return ci in self.allocating.get(device_id, ())
        return device_id in self.a.allocated or bool(self.allocating.get(device_id))

    def _selectable(self, key: tuple, rd: _RequestData, device: DeviceInfo) -> bool:
        if not self.features.device_binding and device.obj.get("bindingConditions"):
            return False
        mkey = key + (device.id,)
        hit = self.matches.get(mkey)
        if hit is not None:
            return hit
        cls = rd.cls
        assert cls is not None   # _validate sets it before judging any device
        ok = (self._selectors_match(key[0], device, cls, (cls.get("spec") or {}).get("selectors"))
              and self._selectors_match(key[0], device, None, rd.request.selectors))
        self.matches[mkey] = ok
        return ok

    def _selectors_match(self, ci: int, device: DeviceInfo, cls: Mapping[str, Any] | None,
                         selectors: Iterable[Any] | None) -> bool:
        for i, selector in enumerate(selectors or ()):
            expression = ((selector or {}).get("cel") or {}).get("expression") or ""
            where = (f"class {(cls.get('metadata') or {}).get('name', '')}" if cls is not None
                     else f"claim {claim_key(self.claims[ci])}")
            try:
                compile_selector(expression)
            except CELError as e:
                raise AllocationError(f"{where}: selector #{i}: CEL compile error: {e}") from None
            try:
                if not self.a.selectors.matches(expression, device):
                    return False
            except CELError as e:
                raise AllocationError(f"{where}: selector #{i}: CEL runtime error: {e}") from None
        return True

    def _allocate_device(self, ci: int, ri: int, si: int, device: DeviceInfo, must: bool):
        """Take ``device`` for the request if it is free and the constraints allow it; the
        function that undoes it, or None."""
        rd = self.request_data[(ci, ri, si)]
        request = rd.request
        if self._in_use(device.id, ci, request.admin):
            return None
        if device.obj.get("consumesCounters") and not self.features.partitionable_devices:
            return None
        base = rd.parent if rd.parent else request.name
        sub = request.name if rd.parent else None
        constraints = self.constraints[ci]
        for i, c in enumerate(constraints):
            if not c.add(base, sub, device):
                if must:
                    raise AllocationError(
                        f"claim {claim_key(self.claims[ci])}, request {request.name}: cannot add "
                        f"device {device_id_str(device.id)} because a claim constraint would not "
                        "be satisfied")
                for prev in constraints[:i]:
                    prev.remove(base, sub, device)
                return None
        self.allocating.setdefault(device.id, set()).add(ci)
        self.results[ci].append(_Result(request.name, rd.parent, device, request.admin))
        n = len(self.results[ci]) - 1

        def undo() -> None:
            for c in constraints:
                c.remove(base, sub, device)
            self.allocating[device.id].discard(ci)
            del self.results[ci][n:]
        return undo

    # ---- results --------------------------------------------------------------------

    def _result(self, ci: int) -> dict:
        claim = self.claims[ci]
        requests = ((claim.get("spec") or {}).get("devices") or {}).get("requests") or []
        results = []
        for r in self.results[ci]:
            entry: dict[str, Any] = {"request": r.request_name(), "driver": r.device.id[0],
                                     "pool": r.device.id[1], "device": r.device.id[2]}
            if r.admin:
                entry["adminAccess"] = True
            tolerations = self._tolerations(requests, r)
            if tolerations:
                entry["tolerations"] = tolerations
            results.append(entry)
        configs: list[dict] = []
        class_ranges: dict[str, tuple[int, int]] = {}
        for ri in range(len(requests)):
            rd = self.request_data[(ci, ri, 0)]
            if rd.parent is not None:
                rd = self.request_data[(ci, ri, rd.selected_sub)]
            cls = rd.cls
            if cls is None:
                continue
            cname = (cls.get("metadata") or {}).get("name", "")
            if cname in class_ranges:
                start, end = class_ranges[cname]
                for i in range(start, end):
                    configs[i]["requests"].append(rd.request_name())
                continue
            start = len(configs)
            for cfg in (cls.get("spec") or {}).get("config") or ():
                configs.append({"source": FROM_CLASS, "requests": [rd.request_name()],
                                **{k: v for k, v in cfg.items() if k != "requests"}})
            class_ranges[cname] = (start, len(configs))
        for cfg in ((claim.get("spec") or {}).get("devices") or {}).get("config") or ():
            names = list(cfg.get("requests") or ())
            body = {k: v for k, v in cfg.items() if k != "requests"}
            if not names:
                configs.append({"source": FROM_CLAIM, "requests": [], **body})
                continue
            for ri, request in enumerate(requests):
                if request.get("name") in names:
                    configs.append({"source": FROM_CLAIM, "requests": names, **body})
                    continue
                rd = self.request_data[(ci, ri, 0)]
                if rd.parent is None:
                    continue
                chosen = request["firstAvailable"][rd.selected_sub]
                if f"{request.get('name')}/{chosen.get('name')}" in names:
                    configs.append({"source": FROM_CLAIM, "requests": names, **body})
        for cfg in configs:
            if not cfg["requests"]:
                del cfg["requests"]
        out: dict[str, Any] = {"devices": {"results": results}}
        if configs:
            out["devices"]["config"] = configs
        selector = self._node_selector(self.results[ci])
        if selector is not None:
            out["nodeSelector"] = selector
        return out

    @staticmethod
    def _tolerations(requests: list, r: _Result) -> list:
        for request in requests:
            if request.get("name") != (r.parent or r.request):
                continue
            if r.parent is None:
                return list((_exact(request) or {}).get("tolerations") or ())
            for sub in request.get("firstAvailable") or ():
                if sub.get("name") == r.request:
                    return list(sub.get("tolerations") or ())
        return []

    @staticmethod
    def _node_selector(results: list[_Result]) -> dict | None:
        fields: list[dict] = []
        exprs: list[dict] = []
        for r in results:
            s = r.device.slice
            if s.node_name:
                return {"nodeSelectorTerms": [{"matchFields": [
                    {"key": "metadata.name", "operator": "In", "values": [s.node_name]}]}]}
            terms = (s.node_selector or {}).get("nodeSelectorTerms") or []
            if len(terms) > 1:
                raise AllocationError(f"create NodeSelector for claim: unsupported "
                                      f"ResourceSlice.NodeSelector with {len(terms)} terms")
            if terms:
                _merge(terms[0].get("matchFields") or (), fields)
                _merge(terms[0].get("matchExpressions") or (), exprs)
        if not fields and not exprs:
            return None
        term: dict[str, Any] = {}
        if exprs:
            term["matchExpressions"] = exprs
        if fields:
            term["matchFields"] = fields
        return {"nodeSelectorTerms": [term]}


def _merge(src: Iterable[Mapping[str, Any]], dst: list[dict]) -> None:
    for req in src:
        values = set(req.get("values") or ())
        if not any(d.get("key") == req.get("key") and d.get("operator") == req.get("operator")
                   and set(d.get("values") or ()) == values for d in dst):
            dst.append(dict(req))


class _MaxSizeExceeded(Exception):
    pass


__all__ = ["ALLOCATION_RESULTS_MAX_SIZE", "AllocationError", "AllocationTimeout", "Allocator",
           "DeviceID", "DeviceInfo", "Features", "Pool", "SelectorCache", "SliceInfo",
           "allocated_device_ids", "claim_key", "device_id_str", "gather_pools",
           "slice_reaches_node"]
