"""DynamicResources: ResourceClaims with structured parameters (DRA), seed 001 §8.

A pod names ResourceClaims in ``spec.resourceClaims`` (directly, or through a template whose
claim the ResourceClaim controller records in ``status.resourceClaimStatuses``). The plugin,
as kube-scheduler 1.35's with its default feature gates:

* **PreEnqueue** keeps the pod out of the active queue until its claims exist (``pod
  "ns/name": ResourceClaim not created yet``, ``resourceclaim "x" is being deleted``, a
  template's claim not owned by the pod);
* **PreFilter** reads the claims: none -> Skip (the common case costs nothing more); an
  allocated claim reserved for other pods up to the limit -> "resourceclaim in use"; an
  allocated claim is only usable on the nodes of its ``allocation.nodeSelector``; an
  unallocated one needs its DeviceClasses ("request r: device class c does not exist") and no
  allocation of it may be in flight for another pod. It then prepares the allocator
  (:mod:`kvert.scheduler.dra.allocator`) over the ResourceSlices, the DeviceClasses and the
  devices in use (every allocated claim's, plus in-flight allocations);
* **Filter** answers "cannot allocate all claims" where the unallocated claims cannot be
  allocated from the devices that reach the node, then "resourceclaim not available on the
  node" where an allocated claim's node selector excludes it (both
  UnschedulableAndUnresolvable); a CEL or class error aborts the attempt with an error;
  running past ``filterTimeout`` answers "timed out trying to allocate devices";
* **PostFilter** deallocates one allocated claim that kept the pod off nodes and that no
  other pod uses ("deallocation of ResourceClaim completed"), else "still not schedulable"
  ("no new claims to deallocate" when PreFilter stopped early; no message for a pod
  without claims, which is every pod of most clusters);
* **Reserve** takes the devices the Filter found for the chosen node (in flight: later pods
  see them as taken), **Unreserve** gives them back, **PreBind** writes ``status.allocation``
  (with the ``resource.kubernetes.io/delete-protection`` finalizer) and
  ``status.reservedFor`` through the client, retrying on conflicts, as ``bindClaim``. With no
  client (``kvert schedule``) Reserve records the allocation and reservation in memory right
  away, as if the binding had completed, so the next pods of the snapshot see them.

Filter is vectorized over the nodes by *slice signature*: a node reaches the slices that
name it, the ``allNodes`` ones and those whose node selector it matches (evaluated once per
distinct label projection, as NodeAffinity does). Nodes reaching the same slices get the same
answer, so the allocator runs once per distinct set of slices (once per node only for nodes
with node-local slices), and selector verdicts are cached per (expression, device) across
pods. Args: ``filterTimeout`` (default 10s, 0 disables it), ``bindingTimeout`` refused
(its feature gates are off in 1.35).
"""

from __future__ import annotations

import copy
import logging
import weakref
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

import numpy as np

from kvert.api.errors import ApiError, Conflict
from kvert.api.nodeaffinity import NodeSelector
from kvert.client.base import Client
from kvert.clock import WallClock
from kvert.scheduler.dra.allocator import (
    AllocationError,
    AllocationTimeout,
    Allocator,
    Features,
    SelectorCache,
    SliceInfo,
)
from kvert.scheduler.dra.claims import (
    RESOURCE,
    ClaimError,
    ClaimTracker,
    allocation,
    can_be_reserved,
    claim_name,
    is_for_pod,
    is_reserved_for_pod,
    obj_key,
    pod_claims,
    with_reservation,
)
from kvert.scheduler.framework import (
    NODE,
    POD,
    QUEUE,
    QUEUE_SKIP,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    FilterResult,
    Handle,
    Plugin,
    PluginStatusError,
    Status,
)
from kvert.scheduler.listers import Listers
from kvert.scheduler.plugins.helper import LRU, canonical
from kvert.scheduler.plugins.nodeaffinity import evaluate_by_projection
from kvert.scheduler.plugins.noderesources import ConfigError, check_fields
from kvert.scheduler.plugins.volumes import parse_duration
from kvert.scheduler.snapshot import NodeSet

log = logging.getLogger(__name__)

REASON_CANNOT_ALLOCATE = "cannot allocate all claims"
REASON_NOT_AVAILABLE = "resourceclaim not available on the node"
REASON_TIMED_OUT = "timed out trying to allocate devices"
MSG_STILL_UNSCHEDULABLE = "still not schedulable"
MSG_NO_CLAIMS = "no new claims to deallocate"
MSG_DEALLOCATED = "deallocation of ResourceClaim completed"

RESOURCE_CLAIM, RESOURCE_SLICE, DEVICE_CLASS = "ResourceClaim", "ResourceSlice", "DeviceClass"
_OK, _CANNOT, _TIMED_OUT = 0, 1, 2
_STATE = "DynamicResources"
_UU = Code.UNSCHEDULABLE_AND_UNRESOLVABLE

# one tracker per node cache: the profiles of a scheduler share in-flight allocations
_TRACKERS: weakref.WeakKeyDictionary[Any, ClaimTracker] = weakref.WeakKeyDictionary()


_REAL_TIME = WallClock()


class DRAError(PluginStatusError):
    """An error that aborts the scheduling attempt (upstream's ``statusError``)."""


class _Inventory:
    """The ResourceSlices of one cycle, indexed by how they select nodes."""

    def __init__(self, slices: list[SliceInfo]):
        self.slices = slices
        self.everywhere: list[int] = []
        self.local: dict[str, list[int]] = {}
        self.selectors: list[tuple[str, dict, list[int]]] = []   # (canonical, selector, slices)
        by_sel: dict[str, int] = {}
        for i, s in enumerate(slices):
            if s.node_name:
                self.local.setdefault(s.node_name, []).append(i)
            elif s.all_nodes:
                self.everywhere.append(i)
            elif s.node_selector is not None:
                key = canonical(s.node_selector)
                if key not in by_sel:
                    by_sel[key] = len(self.selectors)
                    self.selectors.append((key, s.node_selector, []))
                self.selectors[by_sel[key]][2].append(i)

    def signature(self, bits: tuple[bool, ...], node_name: str | None) -> tuple[int, ...]:
        """The slices a node reaches: its selector verdicts and its local slices."""
        idx = list(self.everywhere)
        for hit, (_, _, members) in zip(bits, self.selectors):
            if hit:
                idx.extend(members)
        if node_name:
            idx.extend(self.local.get(node_name, ()))
        return tuple(sorted(idx))

    def node_signature(self, node: Mapping[str, Any] | None) -> tuple[int, ...]:
        bits = tuple(NodeSelector(sel).matches(node) for _, sel, _ in self.selectors)
        return self.signature(bits, ((node or {}).get("metadata") or {}).get("name"))


class _State:
    """The cycle's claims and allocation work (``stateData``). ``clone`` shares it, as
    upstream does: nothing in it depends on the nodes a Filter pass assumes pods on."""

    __slots__ = ("claims", "available_on", "to_allocate", "allocator", "inventory", "results",
                 "unavailable", "allocations", "previous")

    def __init__(self) -> None:
        self.claims: list[dict] = []
        self.available_on: dict[int, dict] = {}
        self.to_allocate: list[int] = []
        self.allocator: Allocator | None = None
        self.inventory: _Inventory | None = None
        self.results: dict[tuple[int, ...], list[dict] | None | str] = {}
        self.unavailable: set[int] = set()
        self.allocations: dict[int, dict] = {}
        self.previous: dict[int, tuple | None] = {}

    def clone(self) -> _State:
        return self


class DynamicResources(Plugin):
    name = "DynamicResources"
    ARGS_FIELDS: ClassVar[dict] = {"filterTimeout": None, "bindingTimeout": None}

    def __init__(self, args: dict[str, Any] | None = None, handle: Handle | None = None):
        super().__init__(args, handle)
        check_fields(self.args, self.ARGS_FIELDS)
        self.filter_timeout = 10.0
        if self.args.get("filterTimeout") is not None:
            self.filter_timeout = parse_duration(self.args["filterTimeout"], "filterTimeout")
            if self.filter_timeout < 0:
                raise ConfigError(f"filterTimeout: Invalid value: {self.args['filterTimeout']!r}: "
                                  "must be zero or positive")
        if self.args.get("bindingTimeout") is not None:
            raise ConfigError("bindingTimeout: Forbidden: DRADeviceBindingConditions or "
                              "DRAResourceClaimDeviceStatus feature gate is disabled")
        self.features = Features()
        self.selector_cache = SelectorCache()
        self._slices: dict[int, tuple[dict, SliceInfo]] = {}
        self._inventory_key: tuple = ()
        self._inventory: _Inventory | None = None
        self._masks = LRU(256)          # node selector -> {label projection: verdict}
        cache = getattr(handle, "cache", None)
        if cache is not None:
            try:
                self.tracker = _TRACKERS.setdefault(cache, ClaimTracker())
            except TypeError:
                self.tracker = ClaimTracker()
        else:
            self.tracker = ClaimTracker()

    # ---- reading the cluster ---------------------------------------------------------

    @property
    def _listers(self) -> Listers:
        return self.bound_handle.listers

    @property
    def _client(self) -> Client | None:
        return self.handle.client if self.handle is not None else None

    def _foreach_claim(self, pod: dict) -> list[Mapping[str, Any]]:
        """``foreachPodResourceClaim``: the pod's existing claims, in order; ClaimError
        when one is missing, being deleted or (from a template) not the pod's."""
        ns = (pod.get("metadata") or {}).get("namespace") or ""
        out = []
        for pc in pod_claims(pod):
            name, must_own = claim_name(pod, pc)
            if name is None:
                continue
            claim = self.tracker.get(self._listers, ns, name)
            if claim is None:
                raise ClaimError(f'resourceclaim.resource.k8s.io "{name}" not found')
            if (claim.get("metadata") or {}).get("deletionTimestamp"):
                raise ClaimError(f'resourceclaim "{name}" is being deleted')
            if must_own:
                is_for_pod(pod, claim)
            out.append(claim)
        return out

    def _classes(self) -> dict[str, dict]:
        return {(c.get("metadata") or {}).get("name", ""): c
                for c in self._listers.list("deviceclasses")}

    def _current_inventory(self) -> _Inventory:
        objs = self._listers.list("resourceslices")
        key = tuple(id(o) for o in objs)
        if key != self._inventory_key or self._inventory is None:
            known = self._slices
            self._slices = {id(o): known.get(id(o)) or (o, SliceInfo(o)) for o in objs}
            infos = [self._slices[id(o)][1] for o in objs]
            if not self.features.partitionable_devices:
                infos = [s for s in infos if s.per_device is None]
            self._inventory, self._inventory_key = _Inventory(infos), key
        return self._inventory

    # ---- PreEnqueue / PreFilter ------------------------------------------------------

    def pre_enqueue(self, pod: dict) -> Status | None:
        if not pod_claims(pod):
            return None
        try:
            self._foreach_claim(pod)
        except ClaimError as e:
            return Status(_UU, str(e))
        return None

    def pre_filter(self, state: CycleState, pod: dict, nodes):
        s = _State()
        state.write(_STATE, s)
        if not pod_claims(pod):
            return None, Status(Code.SKIP)
        try:
            claims = self._foreach_claim(pod)
        except ClaimError as e:
            return None, Status(_UU, str(e))
        if not claims:
            return None, Status(Code.SKIP)
        classes = self._classes()
        for index, claim in enumerate(claims):
            alloc = allocation(claim)
            if alloc is not None:
                if not can_be_reserved(claim) and not is_reserved_for_pod(pod, claim):
                    return None, Status(_UU, "resourceclaim in use")
                if alloc.get("nodeSelector") is not None:
                    s.available_on[index] = alloc["nodeSelector"]
                continue
            s.to_allocate.append(index)
            uid = (claim.get("metadata") or {}).get("uid", "")
            if self.tracker.has_pending(uid):
                return None, Status(_UU, f"resource claim {obj_key(claim)} is in the process of "
                                         "being allocated")
            for request in ((claim.get("spec") or {}).get("devices") or {}).get("requests") or ():
                st = self._check_request(claim, request, classes)
                if st is not None:
                    return None, st
        if s.to_allocate:
            s.allocator = Allocator(classes, self.tracker.allocated_devices(self._listers),
                                    self.features, self.selector_cache)
            s.inventory = self._current_inventory()
        s.claims = [dict(c) for c in claims]
        return None, None

    def _check_request(self, claim: Mapping[str, Any], request: dict, classes: dict) -> Status | None:
        name = request.get("name", "")
        subs = request.get("firstAvailable") or []
        exact = request.get("exactly")
        if exact is None and request.get("deviceClassName") is not None and not subs:
            exact = request                      # v1beta1: the request is the body
        if exact is not None:
            return _check_class(exact.get("deviceClassName") or "", name, classes)
        if subs:
            if not self.features.prioritized_list:
                return Status(_UU, f"resource claim {obj_key(claim)}, request {name}: has "
                                   "subrequests, but the DRAPrioritizedList feature is disabled")
            for sub in subs:
                st = _check_class(sub.get("deviceClassName") or "",
                                  f"{name}/{sub.get('name', '')}", classes)
                if st is not None:
                    return st
            return None
        return Status(_UU, f"resource claim {obj_key(claim)}, request {name}: unknown request type")

    # ---- Filter ----------------------------------------------------------------------

    def filter(self, state: CycleState, pod: dict, nodes: NodeSet) -> FilterResult:
        n = len(nodes)
        s = state.get(_STATE)
        if s is None or not s.claims or n == 0:
            return FilterResult.ok(n)
        verdict = np.zeros(n, np.int8)        # _OK, _CANNOT or _TIMED_OUT per node
        if s.allocator is not None:
            verdict = self._allocate_all(s, nodes)
        cannot, timed_out = verdict == _CANNOT, verdict == _TIMED_OUT
        unavailable = np.zeros(n, bool)
        for index, selector in s.available_on.items():
            # upstream records an unavailable claim only where allocation succeeded
            off = ~self._selector_mask(selector, nodes) & (verdict == _OK)
            if off.any():
                s.unavailable.add(index)
                unavailable |= off
        codes = np.where(cannot | timed_out | unavailable, np.int8(_UU), np.int8(0)).astype(np.int8)
        return FilterResult(codes, [(REASON_CANNOT_ALLOCATE, cannot), (REASON_TIMED_OUT, timed_out),
                                    (REASON_NOT_AVAILABLE, unavailable)])

    def _allocate_all(self, s: _State, nodes: NodeSet) -> np.ndarray:
        """The allocation verdict per node, the allocator running once per slice signature:
        nodes without node-local slices share one per pattern of node-selector verdicts."""
        inv = s.inventory
        if inv is None:   # PreFilter builds it whenever a claim needs allocating
            raise RuntimeError("DynamicResources: no device inventory in the cycle state")
        cache, rows = nodes.cache, nodes.rows
        n = len(rows)
        if inv.selectors:
            bits = np.stack([self._selector_mask(sel, nodes) for _, sel, _ in inv.selectors], axis=1)
            patterns, inverse = np.unique(bits, axis=0, return_inverse=True)
            inverse = inverse.reshape(-1)
        else:
            patterns, inverse = np.zeros((1, 0), bool), np.zeros(n, np.int64)
        local = np.zeros(n, bool)
        if inv.local:
            local_rows = [cache.row_of[name] for name in inv.local if name in cache.row_of]
            local = np.isin(rows, np.asarray(local_rows, np.int64))
        claims = [s.claims[i] for i in s.to_allocate]
        by_pattern = np.zeros(len(patterns), np.int8)
        for k in np.unique(inverse[~local]):
            sig = inv.signature(tuple(bool(b) for b in patterns[k]), None)
            by_pattern[k] = _verdict(self._allocate_group(s, sig, None, claims))
        verdict = by_pattern[inverse]
        for pos in np.flatnonzero(local):
            row = int(rows[pos])
            sig = inv.signature(tuple(bool(b) for b in patterns[inverse[pos]]), cache.names[row])
            verdict[pos] = _verdict(self._allocate_group(s, sig, cache.node_objs[row], claims))
        return verdict

    def _allocate_group(self, s: _State, sig: tuple[int, ...], node: dict | None,
                        claims: list[dict]) -> Any:
        if sig in s.results:
            return s.results[sig]
        expired: Callable[[], bool] | None = None
        if self.filter_timeout > 0:
            # a budget of real computing time, as kube-scheduler's: in a simulation too, where
            # the virtual clock stands still while the allocator searches
            end = _REAL_TIME.now() + self.filter_timeout

            def past_end() -> bool:
                return _REAL_TIME.now() > end
            expired = past_end
        if s.inventory is None or s.allocator is None:
            raise RuntimeError("DynamicResources: no device inventory in the cycle state")
        slices = [s.inventory.slices[i] for i in sig]
        try:
            result: Any = s.allocator.allocate(node, claims, slices, expired)
        except AllocationTimeout:
            result = REASON_TIMED_OUT
        except AllocationError as e:
            raise DRAError(str(e)) from None
        s.results[sig] = result
        return result

    def _selector_mask(self, selector: dict, nodes: NodeSet) -> np.ndarray:
        key = canonical(selector)
        compiled = NodeSelector(selector)
        keys, fields = set(), False
        for term in (selector or {}).get("nodeSelectorTerms") or ():
            for req in (term or {}).get("matchExpressions") or ():
                keys.add(req.get("key"))
            fields = fields or bool((term or {}).get("matchFields"))
        if fields:
            names = _field_names(selector)
            if names is not None:             # metadata.name In [...]: a lookup, not a loop
                rows = [nodes.cache.row_of[x] for x in names if x in nodes.cache.row_of]
                return np.isin(nodes.rows, np.asarray(rows, np.int64))
        memo = self._masks.get_or_create(key, dict)
        return evaluate_by_projection(nodes, tuple(sorted(k for k in keys if k)), fields,
                                      compiled.matches, memo, bool)

    # ---- PostFilter ------------------------------------------------------------------

    def post_filter(self, state: CycleState, pod: dict, diagnosis):
        if not pod_claims(pod):
            return None, Status(Code.UNSCHEDULABLE)
        s = state.get(_STATE)
        if s is None or not s.claims:
            return None, Status(Code.UNSCHEDULABLE, MSG_NO_CLAIMS)
        uid = (pod.get("metadata") or {}).get("uid")
        for index in sorted(s.unavailable):
            claim = s.claims[index]
            users = (claim.get("status") or {}).get("reservedFor") or []
            if not users or (len(users) == 1 and users[0].get("uid") == uid):
                self._deallocate(claim)
                return None, Status(Code.UNSCHEDULABLE, MSG_DEALLOCATED)
        return None, Status(Code.UNSCHEDULABLE, MSG_STILL_UNSCHEDULABLE)

    def _deallocate(self, claim: dict) -> None:
        freed = copy.deepcopy(claim)
        for k in ("allocation", "reservedFor", "devices"):
            (freed.get("status") or {}).pop(k, None)
        client = self._client
        if client is None:
            self.tracker.assume(freed, written=False)
            return

        async def write() -> None:
            try:
                self.tracker.assume(await client.update_status(RESOURCE, freed))
            except ApiError as e:
                log.warning("deallocating ResourceClaim %s failed: %s", obj_key(claim), e)
        self.bound_handle.spawn(write())

    # ---- Reserve / Unreserve ---------------------------------------------------------

    def reserve(self, state: CycleState, pod: dict, node: str) -> Status | None:
        s = state.get(_STATE)
        if s is None or not s.claims:
            return None
        if s.to_allocate:
            cache = self.bound_handle.cache
            row = cache.row_of.get(node)
            node_obj = cache.node_objs[row] if row is not None else {"metadata": {"name": node}}
            sig = s.inventory.node_signature(node_obj)
            results = s.results.get(sig)
            if not isinstance(results, list):
                return Status(Code.ERROR, "claim allocation not found for node")
            if len(results) != len(s.to_allocate):
                return Status(Code.ERROR, f"internal error, have {len(results)} allocations, "
                                          f"{len(s.to_allocate)} claims to allocate")
            for index, alloc in zip(s.to_allocate, results):
                claim = s.claims[index]
                s.allocations[index] = alloc
                pending = with_reservation(claim, pod, alloc)
                pending["status"].pop("reservedFor", None)
                self.tracker.signal_pending((claim.get("metadata") or {}).get("uid", ""), pending)
        if self._client is None:
            self._bind_in_memory(s, pod)
        return None

    def _bind_in_memory(self, s: _State, pod: dict) -> None:
        """Offline there is no PreBind that writes: the claims are assumed allocated and
        reserved for the pod now."""
        for index, claim in enumerate(s.claims):
            if is_reserved_for_pod(pod, claim):
                continue
            uid = (claim.get("metadata") or {}).get("uid", "")
            bound = with_reservation(claim, pod, s.allocations.get(index))
            prev = self.tracker.assume(bound, written=False)
            self.tracker.remove_pending(uid)
            s.previous[index] = prev
            s.claims[index] = bound

    def unreserve(self, state: CycleState, pod: dict, node: str) -> None:
        s = state.get(_STATE)
        if s is None or not s.claims:
            return
        client = self._client
        for index, claim in enumerate(s.claims):
            meta = claim.get("metadata") or {}
            if self.tracker.remove_pending(meta.get("uid", "")):
                self.tracker.restore(meta.get("namespace", ""), meta.get("name", ""))
            if index in s.previous:
                self.tracker.restore(meta.get("namespace", ""), meta.get("name", ""),
                                     s.previous.pop(index))
                continue
            if client is not None and allocation(claim) and is_reserved_for_pod(pod, claim):
                self.bound_handle.spawn(self._unreserve_claim(client, claim, pod))

    async def _unreserve_claim(self, client: Client, claim: dict, pod: dict) -> None:
        meta = claim.get("metadata") or {}
        patch = {"metadata": {"uid": meta.get("uid")},
                 "status": {"reservedFor": [{"$patch": "delete",
                                             "uid": (pod.get("metadata") or {}).get("uid")}]}}
        try:
            await client.patch(RESOURCE, meta.get("name", ""), patch, "strategic",
                               namespace=meta.get("namespace", ""), subresource="status")
        except ApiError as e:
            log.warning("unreserve of ResourceClaim %s failed: %s", obj_key(claim), e)

    # ---- PreBind ---------------------------------------------------------------------

    async def pre_bind(self, state: CycleState, pod: dict, node: str) -> Status | None:
        s = state.get(_STATE)
        if s is None or not s.claims or self._client is None:
            return None
        for index, claim in enumerate(s.claims):
            if is_reserved_for_pod(pod, claim):
                continue
            try:
                s.claims[index] = await self._bind_claim(s, index, pod)
            except (ApiError, DRAError) as e:
                return Status(Code.ERROR, str(e))
        return None

    async def _bind_claim(self, s: _State, index: int, pod: dict) -> dict:
        """``bindClaim``: store the allocation Reserve made (finalizer first) and the
        reservation, fetching the claim again after a conflict."""
        client = self._client
        if client is None:   # pre_bind binds only with a client
            raise DRAError("no API client to bind the claim with")
        claim = copy.deepcopy(s.claims[index])
        meta = claim.get("metadata") or {}
        ns, name, uid = meta.get("namespace", ""), meta.get("name", ""), meta.get("uid", "")
        alloc = s.allocations.get(index)
        try:
            for attempt in range(5):
                if attempt:
                    claim = await client.get(RESOURCE, name, ns)
                if (claim.get("metadata") or {}).get("deletionTimestamp"):
                    raise DRAError(f"claim {ns}/{name} got deleted in the meantime")
                try:
                    if alloc is not None:
                        if allocation(claim):
                            raise DRAError(f"claim {ns}/{name} got allocated elsewhere in the "
                                           "meantime")
                        with_finalizer = with_reservation(claim, pod, alloc)
                        if with_finalizer["metadata"].get("finalizers") != \
                                (claim.get("metadata") or {}).get("finalizers"):
                            update = copy.deepcopy(claim)
                            update.setdefault("metadata", {})["finalizers"] = \
                                with_finalizer["metadata"]["finalizers"]
                            claim = await client.update(RESOURCE, update)
                    updated = await client.update_status(RESOURCE, with_reservation(claim, pod, alloc))
                except Conflict:
                    continue
                except ApiError as e:
                    what = "add allocation and reservation to" if alloc is not None else \
                        "add reservation to"
                    raise DRAError(f"{what} claim {ns}/{name}: {e}") from e
                if alloc is not None:
                    self.tracker.assume(updated)
                return updated
            raise DRAError(f"add reservation to claim {ns}/{name}: conflicting updates")
        finally:
            if alloc is not None:
                self.tracker.remove_pending(uid)

    # ---- queueing hints ---------------------------------------------------------------

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(ClusterEvent(NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL
                                              | ActionType.UPDATE_NODE_ALLOCATABLE)),
            ClusterEventWithHint(ClusterEvent(RESOURCE_CLAIM, ActionType.ADD | ActionType.UPDATE),
                                 self._after_claim_change),
            ClusterEventWithHint(ClusterEvent(POD, ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM),
                                 self._after_pod_change),
            ClusterEventWithHint(ClusterEvent(DEVICE_CLASS, ActionType.ADD | ActionType.UPDATE)),
            ClusterEventWithHint(ClusterEvent(RESOURCE_SLICE, ActionType.ADD | ActionType.UPDATE)),
        ]

    def _after_claim_change(self, pod: dict, old: dict | None, new: dict | None) -> bool:
        """``isSchedulableAfterClaimChange``."""
        if new is None:
            return QUEUE
        uid = (new.get("metadata") or {}).get("uid")
        try:
            uses = any((c.get("metadata") or {}).get("uid") == uid for c in self._foreach_claim(pod))
        except ClaimError:
            return QUEUE_SKIP
        if old is not None and allocation(old) and not allocation(new):
            return QUEUE                 # deallocated: devices came free
        if not uses:
            return QUEUE_SKIP
        if old is None:
            return QUEUE
        return QUEUE if (old.get("status") or {}) != (new.get("status") or {}) else QUEUE_SKIP

    def _after_pod_change(self, pod: dict, old: dict | None, new: dict | None) -> bool:
        """``isSchedulableAfterPodChange``: the pod's own update made its claims resolvable."""
        if new is None or (new.get("metadata") or {}).get("uid") != (pod.get("metadata") or {}).get("uid"):
            return QUEUE_SKIP
        try:
            self._foreach_claim(new)
        except ClaimError:
            return QUEUE_SKIP
        return QUEUE


def _verdict(result: Any) -> int:
    if isinstance(result, list):
        return _OK
    return _TIMED_OUT if result == REASON_TIMED_OUT else _CANNOT


def _check_class(class_name: str, request_name: str, classes: dict) -> Status | None:
    """``validateDeviceClass``."""
    if not class_name:
        return Status(Code.ERROR, f"request {request_name}: unsupported request type")
    if class_name not in classes:
        return Status(_UU, f"request {request_name}: device class {class_name} does not exist")
    return None


def _field_names(selector: dict) -> list[str] | None:
    """The node names of a selector that is only ``metadata.name In [...]`` terms (what an
    allocation of node-local devices carries), else None."""
    names: list[str] = []
    for term in (selector or {}).get("nodeSelectorTerms") or ():
        reqs = (term or {}).get("matchFields") or []
        if (term or {}).get("matchExpressions") or len(reqs) != 1:
            return None
        req = reqs[0]
        if req.get("key") != "metadata.name" or req.get("operator") != "In":
            return None
        names.extend(req.get("values") or ())
    return names


__all__ = ["DynamicResources", "REASON_CANNOT_ALLOCATE", "REASON_NOT_AVAILABLE"]
