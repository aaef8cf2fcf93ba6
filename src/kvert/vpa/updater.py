"""The VPA updater (seed 002's Updater, seed 003's eviction tolerance; ``updater/`` upstream).

``Updater(client, clock, interval=60, eviction_tolerance=0.5, min_replicas=2,
in_place_timeout=3600, deferred_timeout=300)``; ``await u.run()`` until ``u.stop()``;
``run_once()`` is one pass. Per VPA whose ``updatePolicy.updateMode`` is ``Recreate``,
``Auto``, ``InPlaceOrRecreate`` or ``InPlace`` (``Off`` and ``Initial`` never touch running
pods) and that has a recommendation:

* the live pods its ``targetRef`` selects; with fewer than ``updatePolicy.minReplicas``
  (default ``min_replicas``, 2) nothing is done ("Too few replicas");
* a pod is a candidate (``UpdatePriorityCalculator.AddPod``) when a controlled resource's
  request is outside [lowerBound, upperBound] (a missing request counts as outside), or it
  has lived 12h and its requests differ from the target by at least 10% (the sum over
  resources of |request - target| / request), or a container OOMed less than 10 minutes
  after it started (and something would change). Containers with policy ``mode: Off`` and
  resources outside ``controlledResources`` are ignored; the target is capped to the
  policy's minAllowed/maxAllowed. Candidates go scale-ups first, then by the largest
  relative change;
* the disruption budget (``podsEvictionRestriction``): ``configured`` is the workload's
  replicas, ``tolerance = int(configured * eviction_tolerance)``; a pod may be disrupted while
  ``running - (evicted + resized in place) this pass > configured - tolerance``, or, when the
  tolerance is 0, as the single disruption of a pass when every configured pod runs. Pending
  pods may always be evicted;
* ``Recreate`` evicts (``client.evict``: PodDisruptionBudgets apply; a 429 means "not now");
* ``InPlaceOrRecreate`` -- and ``Auto``, which kvert treats as InPlaceOrRecreate -- resizes
  through ``client.resize``: requests to the target, limits scaled to keep the limit/request
  ratio (``controlledValues: RequestsAndLimits``, the default) or left alone
  (``RequestsOnly``; the target is then capped to the limit). A resize the node reports
  ``Infeasible``, or ``Deferred`` for more than ``deferred_timeout``, or in progress for more
  than ``in_place_timeout``, or one the API server refuses, falls back to eviction;
* ``InPlace`` resizes the same way and never evicts.

Events (upstream's reasons): on the pod ``EvictedByVPA`` / ``InPlaceResizedByVPA``; on the VPA
``EvictedPod`` / ``InPlaceResizedPod``; a fallback adds ``InPlaceResizeFallbackToEviction``.
"""

from __future__ import annotations

import asyncio
import copy
import json
import logging
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

import orjson

from kvert.api.errors import ApiError, NotFound, TooManyRequests
from kvert.api.meta import parse_time
from kvert.api.quantity import Quantity
from kvert.client.base import Client
from kvert.client.cache import InformerFactory
from kvert.client.events import EventRecorder
from kvert.clock import Clock
from kvert.clock.periodic import run_every
from kvert.vpa.capacity import NodeRoom, capacity_aware, replacement_requests
from kvert.vpa.recommendation import (
    DEFAULT_CONFIG,
    apply_policy,
    container_policy,
    container_requests,
    controlled_resources,
    parse_recommendation,
    proportional_limits,
    resource_quantities,
    scaling_disabled,
)
from kvert.vpa.targets import ObjectReader, PodIndex, configured_replicas, is_live, resolve_target

log = logging.getLogger(__name__)

VPAS = "autoscaling.k8s.io/verticalpodautoscalers"
EVICTING_MODES = ("Recreate",)
IN_PLACE_MODES = ("InPlaceOrRecreate", "Auto", "InPlace")
POD_LIFETIME_UPDATE_THRESHOLD = 12 * 3600.0
EVICT_AFTER_OOM_THRESHOLD = 600.0
MIN_CHANGE_PRIORITY = 0.1


def _shape(containers: list) -> bytes | str:
    """The containers' names and resources as one key (replicas share it)."""
    shape = [(c.get("name"), c.get("resources")) for c in containers]
    try:
        return orjson.dumps(shape, option=orjson.OPT_SORT_KEYS)
    except TypeError:           # what orjson does not write (integers beyond 64 bits)
        return json.dumps(shape, sort_keys=True)


def update_mode(vpa: Mapping) -> str:
    return (((vpa.get("spec") or {}).get("updatePolicy") or {}).get("updateMode")) or "Auto"


@dataclass
class Priority:
    outside_range: bool = False
    scale_up: bool = False
    resource_diff: float = 0.0

    def key(self) -> tuple:
        return (self.scale_up, self.resource_diff)


@dataclass
class GroupStats:
    """``singleGroupStats``: one workload's pods in one pass."""

    configured: int
    tolerance: int
    running: int
    pending: int
    evicted: int = 0
    in_place: int = 0

    def disruptable(self) -> bool:
        should_be_alive = self.configured - self.tolerance
        alive = self.running - (self.evicted + self.in_place)
        return alive > should_be_alive or (self.configured == self.running and self.tolerance == 0
                                           and self.evicted == 0 and self.in_place == 0)


@dataclass
class PassResult:
    evicted: list[str] = field(default_factory=list)
    resized: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)      # VPA -> why nothing was done
    active: set[str] = field(default_factory=set)              # VPAs with candidates or resizes under way
    held: list[str] = field(default_factory=list)              # pods not evicted: no node has room (capacity-aware)


def resize_condition(pod: Mapping) -> dict | None:
    for c in (pod.get("status") or {}).get("conditions") or []:
        if c.get("type") in ("PodResizePending", "PodResizeInProgress"):
            return c
    return None


def _age(vpa: Mapping) -> tuple[str, str, str]:
    """Older VPAs first (a pod two VPAs select belongs to the older)."""
    meta = vpa.get("metadata") or {}
    return meta.get("creationTimestamp") or "", meta.get("namespace") or "default", meta.get("name", "")


Key = tuple[str, str]


class _Dirty:
    """Which VPAs a pass must look at, from informer events: those whose object changed or one
    of whose pods did (found through the label pairs their selectors require), and those due
    again (``evaluated``'s time: a candidate or resize left for the next pass, a pod reaching
    the lifetime threshold). Pods are selected through an index of the pods' label pairs, so
    a pass costs what changed, not the size of the cluster."""

    def __init__(self, vpas: Any, pods: Any) -> None:
        self.vpas = vpas
        self.pods = pods
        self.dirty: set[Key] = set()
        self.due: dict[Key, float] = {}
        self.owner: dict[Key, Key] = {}                       # (namespace, pod) -> its VPA
        self.watching: dict[Key, list[Key]] = {}              # VPA -> the (namespace, label pair)s it watches
        self.by_pair: dict[Key, set[Key]] = {}                # (namespace, "k=v") -> VPAs
        self.anywhere: dict[str, set[Key]] = {}               # namespace -> VPAs requiring no pair
        self._gone: list[str] = []
        pods.add_index("label-pairs", lambda p: [_pair_key(p, k, v) for k, v in _labels(p).items()])
        vpas.add_handlers(self._vpa_changed, lambda old, new: self._vpa_changed(new), self._vpa_deleted)
        pods.add_handlers(self._pod_changed, lambda old, new: self._pod_changed(new), self._pod_deleted)

    @classmethod
    async def start(cls, factory: InformerFactory) -> _Dirty:
        return cls(await factory.synced(VPAS), await factory.synced("pods"))

    # -- events --------------------------------------------------------------------------------

    def _vpa_changed(self, vpa: dict) -> None:
        self.dirty.add(_obj_key(vpa))

    def _vpa_deleted(self, vpa: dict) -> None:
        key = _obj_key(vpa)
        self._unwatch(key)
        self.due.pop(key, None)
        self.dirty.discard(key)
        if any(owner == key for owner in self.owner.values()):       # its pods may go to another VPA
            self.dirty.update(_obj_key(v) for v in self.vpas.list())

    def _pod_changed(self, pod: dict) -> None:
        ns = (pod.get("metadata") or {}).get("namespace") or "default"
        owner = self.owner.get(_obj_key(pod))
        if owner is not None:
            self.dirty.add(owner)
        for k, v in _labels(pod).items():
            self.dirty.update(self.by_pair.get((ns, f"{k}={v}"), ()))
        self.dirty.update(self.anywhere.get(ns, ()))

    def _pod_deleted(self, pod: dict) -> None:
        self._pod_changed(pod)
        self.owner.pop(_obj_key(pod), None)
        self._gone.append((pod.get("metadata") or {}).get("uid", ""))

    # -- a pass --------------------------------------------------------------------------------

    def gone_pods(self) -> list[str]:
        gone, self._gone = self._gone, []
        return gone

    def take(self, now: float) -> list[dict]:
        keys = self.dirty | {k for k, at in self.due.items() if at <= now}
        self.dirty = set()
        out = []
        for key in keys:
            self.due.pop(key, None)
            vpa = self.vpas.get(key[1], key[0])
            if vpa is not None:
                out.append(vpa)
        return out

    def selector_for(self, vpa: Mapping) -> Any:
        """``select(namespace, selector)`` for this VPA's pass; it watches what it selects by."""
        key = _obj_key(vpa)

        def select(namespace: str, selector: Any) -> list[dict]:
            self._unwatch(key)
            required = selector.required_values()
            if required is None:
                self.anywhere.setdefault(namespace, set()).add(key)
                self.watching[key] = [(namespace, "")]
                candidates = [p for p in self.pods.list()
                              if ((p.get("metadata") or {}).get("namespace") or "default") == namespace]
            else:
                label, values = required
                pairs = [(namespace, f"{label}={v}") for v in sorted(values)]
                self.watching[key] = pairs
                for pair in pairs:
                    self.by_pair.setdefault(pair, set()).add(key)
                candidates = [p for v in sorted(values)
                              for p in self.pods.by_index("label-pairs", _pair_text(namespace, label, v))]
            out = [p for p in candidates if selector.matches(_labels(p))]
            out.sort(key=lambda p: p["metadata"]["name"])
            return out
        return select

    def taken_by_older(self, vpa: Mapping) -> _Taken:
        return _Taken(self, vpa)

    def evaluated(self, vpa: Mapping, pods: list[dict] | None, due: float) -> None:
        key = _obj_key(vpa)
        for p in pods or ():
            self.owner[_obj_key(p)] = key
        if due != math.inf:
            self.due[key] = due

    def _unwatch(self, key: Key) -> None:
        for namespace, pair in self.watching.pop(key, ()):
            group = self.anywhere.get(namespace) if not pair else self.by_pair.get((namespace, pair))
            if group is not None:
                group.discard(key)


class _PodKeys(Protocol):
    """The pods older VPAs took, as a pass asks of them: whether one is among them."""

    def __contains__(self, pod: Key, /) -> bool: ...


class _Taken:
    """The pods an older VPA manages (the ``taken`` set of a full pass, from ``_Dirty``'s
    owners, which ``_Dirty.evaluated`` records)."""

    def __init__(self, dirty: _Dirty, vpa: Mapping) -> None:
        self.dirty = dirty
        self.key = _obj_key(vpa)
        self.age = _age(vpa)

    def __contains__(self, pod: Key) -> bool:
        owner = self.dirty.owner.get(pod)
        if owner is None or owner == self.key:
            return False
        other = self.dirty.vpas.get(owner[1], owner[0])
        return other is not None and _age(other) < self.age


def _obj_key(obj: Mapping) -> Key:
    meta = obj.get("metadata") or {}
    return meta.get("namespace") or "default", meta.get("name", "")


def _labels(pod: Mapping) -> dict[str, str]:
    return (pod.get("metadata") or {}).get("labels") or {}


def _pair_text(namespace: str, key: str, value: str) -> str:
    return f"{namespace}/{key}={value}"


def _pair_key(pod: Mapping, key: str, value: str) -> str:
    return _pair_text((pod.get("metadata") or {}).get("namespace") or "default", key, value)


class Updater:
    def __init__(self, client: Client, clock: Clock, *, interval: float = 60.0, eviction_tolerance: float = 0.5,
                 min_replicas: int = 2, in_place_timeout: float = 3600.0, deferred_timeout: float = 300.0,
                 pod_lifetime_threshold: float = POD_LIFETIME_UPDATE_THRESHOLD,
                 evict_after_oom_threshold: float = EVICT_AFTER_OOM_THRESHOLD,
                 min_change_priority: float = MIN_CHANGE_PRIORITY,
                 recorder: EventRecorder | None = None, informers: InformerFactory | None = None) -> None:
        self.client = client
        self.reader: ObjectReader = informers or client       # shared informer caches when given
        self.informers = informers
        self.clock = clock
        self.interval = float(interval)
        self.eviction_tolerance = float(eviction_tolerance)
        self.min_replicas = int(min_replicas)
        self.in_place_timeout = float(in_place_timeout)
        self.deferred_timeout = float(deferred_timeout)
        self.pod_lifetime_threshold = float(pod_lifetime_threshold)
        self.evict_after_oom_threshold = float(evict_after_oom_threshold)
        self.min_change_priority = float(min_change_priority)
        self.recorder = recorder or EventRecorder(client, clock, "vpa-updater")
        self.in_place_attempts: dict[str, float] = {}     # pod uid -> time of the last resize
        self._dirty: _Dirty | None = None
        self._node_room: NodeRoom | None = None
        self._stop = asyncio.Event()

    # -- running -----------------------------------------------------------------------------------

    async def run(self) -> None:
        await run_every(self.clock, self.interval, self.run_once, self._stop,
                        log=log, failure="updater loop failed")

    def stop(self) -> None:
        self._stop.set()

    # -- one pass ----------------------------------------------------------------------------------

    async def run_once(self) -> PassResult:
        """One pass. With informers, only the VPAs something happened to are looked at (see
        ``_Dirty``); with a plain client, all of them."""
        if self._dirty is None and self.informers is not None:
            self._dirty = await _Dirty.start(self.informers)
        if self._dirty is not None:
            return await self._pass(self._dirty)
        self._node_room = None
        result = PassResult()
        vpas = (await self.reader.list(VPAS))["items"]
        pods = [p for p in (await self.reader.list("pods"))["items"] if is_live(p)]
        index = PodIndex(pods)
        live_uids = {p["metadata"].get("uid") for p in pods}
        for uid in [u for u in self.in_place_attempts if u not in live_uids]:
            del self.in_place_attempts[uid]
        taken: set[tuple[str, str]] = set()
        for vpa in sorted(vpas, key=_age):
            mine = await self._vpa_pass(vpa, lambda ns, selector: index.select(ns, selector), taken, result)
            taken.update(_obj_key(p) for p in mine or ())
        return result

    async def _pass(self, dirty: _Dirty) -> PassResult:
        self._node_room = None
        result = PassResult()
        now = self.clock.now()
        for uid in dirty.gone_pods():
            self.in_place_attempts.pop(uid, None)
        for vpa in sorted(dirty.take(now), key=_age):
            mine = await self._vpa_pass(vpa, dirty.selector_for(vpa), dirty.taken_by_older(vpa), result)
            dirty.evaluated(vpa, mine, self._next_look(vpa, mine, result, now))
        return result

    def _next_look(self, vpa: Mapping, pods: list[dict] | None, result: PassResult, now: float) -> float:
        """When a VPA nothing happens to must be looked at again: at the next pass while it
        has candidates or resizes under way, else when its next pod reaches the lifetime
        threshold (infinity: not before something changes)."""
        if pods is None:
            return math.inf
        if f"{vpa['metadata'].get('namespace', 'default')}/{vpa['metadata']['name']}" in result.active:
            return now + self.interval
        due = math.inf
        for pod in pods:
            start = (pod.get("status") or {}).get("startTime")
            if start:
                try:
                    at = parse_time(start) + self.pod_lifetime_threshold
                except ValueError:
                    continue
                if at > now:
                    due = min(due, at)
        return due

    async def _vpa_pass(self, vpa: dict, select: Any, taken: _PodKeys,
                        result: PassResult) -> list[dict] | None:
        """One VPA's part of a pass, leaving out the pods ``taken`` by older VPAs; the pods it
        manages (None when it manages none)."""
        name = f"{vpa['metadata'].get('namespace', 'default')}/{vpa['metadata']['name']}"
        mode = update_mode(vpa)
        if mode not in EVICTING_MODES + IN_PLACE_MODES:
            result.skipped[name] = f"updateMode {mode}"
            return None
        recommendation = parse_recommendation((vpa.get("status") or {}).get("recommendation"))
        target = await resolve_target(self.reader, vpa)
        if not target.ok:
            result.skipped[name] = target.problem or "bad targetRef"
            return None
        ns = vpa["metadata"].get("namespace") or "default"
        mine = [p for p in select(ns, target.selector) if is_live(p) and (ns, p["metadata"]["name"]) not in taken]
        if not recommendation:
            result.skipped[name] = "no recommendation"
            return mine
        await self._update_vpa(vpa, mode, recommendation, target.workload, mine, result)
        return mine

    async def _update_vpa(self, vpa: dict, mode: str, recommendation: Mapping, workload: dict | None,
                          pods: list[dict], result: PassResult) -> None:
        name = f"{vpa['metadata'].get('namespace', 'default')}/{vpa['metadata']['name']}"
        policy = (vpa.get("spec") or {}).get("updatePolicy") or {}
        required = policy.get("minReplicas")
        required = self.min_replicas if required is None else int(required)
        if len(pods) < required:
            result.skipped[name] = f"too few replicas: {len(pods)} < {required}"
            return
        configured = configured_replicas(workload)
        if configured is None:
            configured = len(pods)
        pending = sum(1 for p in pods if (p.get("status") or {}).get("phase") == "Pending")
        stats = GroupStats(configured, int(configured * self.eviction_tolerance), len(pods) - pending, pending)
        now = self.clock.now()
        to_evict: list[dict] = []
        in_place = mode in IN_PLACE_MODES
        if in_place:
            # pods with a resize under way: wait, or fall back to eviction
            for pod in pods:
                cond = resize_condition(pod)
                if cond is None:
                    self.in_place_attempts.pop(pod["metadata"].get("uid"), None)
                    continue
                started = self.in_place_attempts.setdefault(pod["metadata"].get("uid"), now)
                if mode == "InPlace":
                    continue
                why = self._fallback_reason(cond, now - started)
                if why:
                    to_evict.append(pod)
                    await self._event(pod, vpa, "InPlaceResizeFallbackToEviction",
                                      f"In-place resize {why}; falling back to eviction.",
                                      f"In-place resize of Pod {pod['metadata']['name']} {why}; "
                                      "falling back to eviction.")
            # troubled resizes go first: they may use this pass's disruption
            await self._evict_all(vpa, recommendation, to_evict, stats, result)
            to_evict = []
        # kvert's in-place model: a resize restarts nothing, so pods need not age before one
        lifetime = 0.0 if in_place and DEFAULT_CONFIG.for_vpa(vpa)[0].model == "in-place" \
            else self.pod_lifetime_threshold
        candidates = self._ordered_candidates(vpa, recommendation, pods, now, lifetime)
        if candidates or (in_place and any(resize_condition(p) is not None for p in pods)):
            result.active.add(name)
        for pod, _priority in candidates:
            if in_place and resize_condition(pod) is not None:
                continue
            if not in_place:
                to_evict.append(pod)
                continue
            if (pod.get("status") or {}).get("phase") == "Pending" or not stats.disruptable():
                continue
            patch = self._resize_patch(vpa, recommendation, pod)
            if patch is None:
                continue
            try:
                await self.client.resize(pod["metadata"]["namespace"], pod["metadata"]["name"], patch)
            except NotFound:
                continue
            except ApiError as e:
                log.info("in-place resize of %s refused: %s", pod["metadata"]["name"], e)
                if mode != "InPlace" and not isinstance(e, TooManyRequests):
                    to_evict.append(pod)
                continue
            stats.in_place += 1
            self.in_place_attempts[pod["metadata"].get("uid")] = now
            result.resized.append(pod["metadata"]["name"])
            await self._event(pod, vpa, "InPlaceResizedByVPA", "Pod was resized in place by VPA Updater.",
                              f"VPA Updater resized Pod {pod['metadata']['name']} in place.",
                              vpa_reason="InPlaceResizedPod")
        if mode != "InPlace":
            await self._evict_all(vpa, recommendation, to_evict, stats, result)

    async def _room(self) -> NodeRoom:
        """The nodes' room this pass (made once a pass needs it)."""
        if self._node_room is None:
            self._node_room = NodeRoom((await self.reader.list("nodes"))["items"],
                                       (await self.reader.list("pods"))["items"])
        return self._node_room

    async def _evict_all(self, vpa: dict, recommendation: Mapping, pods: list[dict], stats: GroupStats,
                         result: PassResult) -> None:
        aware = capacity_aware(vpa)
        for pod in pods:
            if not self._can_evict(pod, stats):
                continue
            requests = None
            if aware and (pod.get("status") or {}).get("phase") != "Pending":
                # kvert's capacity-aware VPA: a replacement no node can take now would only wait
                # Pending, so the pod keeps running at its current size
                targets = {c.get("name", ""): (self._targets(vpa, recommendation, c) or {}).get("target") or {}
                           for c in (pod.get("spec") or {}).get("containers") or []}
                requests = replacement_requests(pod, targets)
                room = await self._room()
                if not room.fits(pod, requests):
                    result.held.append(pod["metadata"]["name"])
                    continue
            try:
                await self.client.evict(pod["metadata"]["namespace"], pod["metadata"]["name"])
            except NotFound:
                continue
            except TooManyRequests as e:
                log.info("eviction of %s not allowed now: %s", pod["metadata"]["name"], e)
                continue
            except ApiError as e:
                log.warning("eviction of %s failed: %s", pod["metadata"]["name"], e)
                continue
            stats.evicted += 1
            if requests is not None:
                (await self._room()).moved(pod, requests)
            self.in_place_attempts.pop(pod["metadata"].get("uid"), None)
            result.evicted.append(pod["metadata"]["name"])
            await self._event(pod, vpa, "EvictedByVPA",
                              "Pod was evicted by VPA Updater to apply resource recommendation.",
                              f"VPA Updater evicted Pod {pod['metadata']['name']} to apply resource recommendation.",
                              vpa_reason="EvictedPod")

    def _fallback_reason(self, cond: Mapping, waited: float) -> str | None:
        if cond.get("type") == "PodResizePending":
            reason = cond.get("reason")
            if reason == "Deferred":
                return f"deferred for more than {self.deferred_timeout:g}s" if waited > self.deferred_timeout else None
            return "infeasible" if reason == "Infeasible" else f"pending ({reason or 'unknown'})"
        if waited > self.in_place_timeout:
            return f"in progress for more than {self.in_place_timeout:g}s"
        return None

    @staticmethod
    def _can_evict(pod: Mapping, stats: GroupStats) -> bool:
        if (pod.get("status") or {}).get("phase") == "Pending":
            return True
        return stats.disruptable()

    # -- priorities --------------------------------------------------------------------------------

    def _targets(self, vpa: Mapping, recommendation: Mapping,
                 container: Mapping) -> dict[str, dict[str, Quantity]] | None:
        """target/lowerBound/upperBound of a container, policy applied (None: not managed)."""
        name = container.get("name", "")
        rec = recommendation.get(name)
        policy = container_policy(vpa, name)
        if rec is None or scaling_disabled(policy):
            return None
        controlled = controlled_resources(policy)
        out = {}
        for bound in ("target", "lowerBound", "upperBound"):
            values = {r: q for r, q in rec.bound(bound).items() if r in controlled}
            out[bound], _ = apply_policy(values, policy)
        if (policy or {}).get("controlledValues") == "RequestsOnly":
            limits = resource_quantities((container.get("resources") or {}).get("limits"))
            for r, q in list(out["target"].items()):
                if r in limits and not limits[r].is_zero() and q > limits[r]:
                    out["target"][r] = limits[r]
        return out

    def priority(self, vpa: Mapping, recommendation: Mapping, pod: Mapping) -> Priority:
        """``GetUpdatePriority``."""
        p = Priority()
        total_request: dict[str, int] = {}
        total_recommended: dict[str, int] = {}
        for c in (pod.get("spec") or {}).get("containers") or []:
            bounds = self._targets(vpa, recommendation, c)
            if bounds is None:
                continue
            requests = container_requests(c)
            for r, target in bounds["target"].items():
                total_recommended[r] = total_recommended.get(r, 0) + target.milli_value()
                lo, hi = bounds["lowerBound"].get(r), bounds["upperBound"].get(r)
                request = requests.get(r)
                if request is None:
                    p.scale_up = p.outside_range = True
                    continue
                total_request[r] = total_request.get(r, 0) + request.milli_value()
                if target.milli_value() > request.milli_value():
                    p.scale_up = True
                if (lo is not None and request < lo) or (hi is not None and request > hi):
                    p.outside_range = True
        for r, recommended in total_recommended.items():
            total = max(float(total_request.get(r, 0)), 1.0)
            p.resource_diff += abs(total - recommended) / total
        return p

    def _quick_oom(self, vpa: Mapping, pod: Mapping) -> bool:
        for cs in (pod.get("status") or {}).get("containerStatuses") or []:
            if scaling_disabled(container_policy(vpa, cs.get("name", ""))):
                continue
            term = (cs.get("lastState") or {}).get("terminated") or {}
            if term.get("reason") != "OOMKilled" or not term.get("finishedAt") or not term.get("startedAt"):
                continue
            try:
                if parse_time(term["finishedAt"]) - parse_time(term["startedAt"]) < self.evict_after_oom_threshold:
                    return True
            except ValueError:
                continue
        return False

    def _ordered_candidates(self, vpa: Mapping, recommendation: Mapping, pods: list[dict],
                            now: float, lifetime: float) -> list[tuple[dict, Priority]]:
        out = []
        known: dict[bytes | str, Priority] = {}      # replicas share their resources, so their priority
        for pod in pods:
            containers = (pod.get("spec") or {}).get("containers") or []
            shape = _shape(containers)
            if shape not in known:
                known[shape] = self.priority(vpa, recommendation, pod)
            p = known[shape]              # copied below for the pods that stay candidates
            quick_oom = self._quick_oom(vpa, pod)
            if not p.outside_range and not quick_oom:
                start = (pod.get("status") or {}).get("startTime")
                if not start:
                    continue
                try:
                    if now < parse_time(start) + lifetime:
                        continue
                except ValueError:
                    continue
                if p.resource_diff < self.min_change_priority:
                    continue
            if quick_oom and p.resource_diff == 0:
                continue
            out.append((pod, replace(p)))
        out.sort(key=lambda item: item[1].key(), reverse=True)
        return out

    # -- in place ----------------------------------------------------------------------------------

    def _resize_patch(self, vpa: Mapping, recommendation: Mapping, pod: Mapping) -> dict | None:
        containers = []
        for c in (pod.get("spec") or {}).get("containers") or []:
            bounds = self._targets(vpa, recommendation, c)
            if not bounds or not bounds["target"]:
                continue
            target = bounds["target"]
            res = c.get("resources") or {}
            requests = {r: str(q) for r, q in target.items()}
            entry: dict[str, Any] = {"name": c["name"], "resources": {"requests": requests}}
            policy = container_policy(vpa, c["name"]) or {}
            if policy.get("controlledValues", "RequestsAndLimits") == "RequestsAndLimits" and res.get("limits"):
                limits, _ = proportional_limits(res.get("limits"), res.get("requests"), target)
                if limits:
                    entry["resources"]["limits"] = {r: str(q) for r, q in limits.items()}
            current = resource_quantities(res.get("requests"))
            if all(r in current and current[r] == q for r, q in target.items()) and "limits" not in entry["resources"]:
                continue
            containers.append(entry)
        if not containers:
            return None
        return {"spec": {"containers": containers}}

    async def _event(self, pod: dict, vpa: dict, reason: str, pod_message: str, vpa_message: str,
                     vpa_reason: str | None = None) -> None:
        pod_ref = copy.copy(pod)
        pod_ref.setdefault("kind", "Pod")
        pod_ref.setdefault("apiVersion", "v1")
        await self.recorder.record(pod_ref, "Normal", reason, pod_message)
        await self.recorder.record(vpa, "Normal", vpa_reason or reason, vpa_message)


__all__ = ["GroupStats", "PassResult", "Priority", "Updater", "update_mode", "resize_condition"]
