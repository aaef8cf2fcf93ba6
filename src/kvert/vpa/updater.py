"""The VPA updater (seed 002's Updater, seed 003's eviction tolerance; upstream VPA 1.8's
``pkg/updater``).

``Updater(client, clock, interval=60, eviction_tolerance=0.5, min_replicas=2, ...,
gates=VpaGates())``; ``await u.run()`` until ``u.stop()``; ``run_once()`` is one pass. Per VPA
whose ``updatePolicy.updateMode`` is ``Recreate``, ``Auto``, ``InPlaceOrRecreate`` or
``InPlace`` -- or any mode, ``Off`` and ``Initial`` included, when it has a startup boost --
and that has a recommendation:

* the live pods its ``targetRef`` selects; with fewer than ``updatePolicy.minReplicas``
  (default ``min_replicas``, 2) nothing is done ("Too few replicas") unless one of them is
  still CPU-boosted, or ``in_place_skip_disruption_budget`` is set and the mode is in place
  (then only in-place updates, never evictions);
* a pod is a candidate (``UpdatePriorityCalculator.AddPod``) when a controlled resource's
  request -- the container's actual one from its status, else the spec's -- is outside
  [lowerBound, upperBound] (a missing request counts as outside), or it has lived 12h and its
  requests differ from the target by at least 10% (the sum over resources of
  |request - target| / request), or a container OOMed less than ``evict_after_oom_threshold``
  (10 minutes; the VPA's ``updatePolicy.evictAfterOOMSeconds`` with the PerVPAConfig gate)
  after it started, that OOM itself being no older than the same threshold (upstream 1.8.1: a
  pod that is never re-created keeps reporting an old OOM in ``lastState``), and something
  would change. Containers with policy ``mode: Off``, those the admission controller did not
  observe (``vpaObservedContainers``) and resources outside ``controlledResources`` are
  ignored; the target is capped to the policy's minAllowed/maxAllowed and, with
  ``controlledValues: RequestsOnly``, to the container's limits (bounds too). Candidates go
  scale-ups first, then by the largest relative change;
* the disruption budget (``podsEvictionRestriction``): ``configured`` is the workload's
  replicas, ``tolerance = int(configured * eviction_tolerance)``; a pod may be disrupted while
  ``running - (evicted + resized in place) this pass > configured - tolerance``, or, when the
  tolerance is 0, as the single disruption of a pass when every configured pod runs. Pending
  pods may always be evicted. ``in_place_skip_disruption_budget`` (upstream's
  ``--in-place-skip-disruption-budget``) approves an in-place update outright when no
  container's ``resizePolicy`` says RestartContainer;
* ``Recreate`` evicts (``client.evict``: PodDisruptionBudgets apply; a 429 means "not now");
* ``InPlaceOrRecreate`` -- and ``Auto``, which kvert treats as InPlaceOrRecreate -- resizes
  through ``client.resize``: requests to the target, limits scaled to keep the limit/request
  ratio (``controlledValues: RequestsAndLimits``, the default) or left alone
  (``RequestsOnly``). A resize the node reports ``Infeasible``, or ``Deferred`` for more than
  ``deferred_timeout``, or in progress for more than ``in_place_timeout``, or one the API
  server refuses, falls back to eviction (troubled resizes first: they may use the pass's
  disruption);
* ``InPlace`` (upstream 1.7, behind the ``InPlace`` gate: without it the VPA is left alone)
  resizes the same way and never evicts: a resize stays Deferred or in progress as long as the
  node says; one reported Infeasible (or refused with a NodeCapacity cause) is remembered with
  the recommendation it tried, and the pod is resized again only once the recommendation asks
  for less of something (``RecommendationHasLowerResource``; until then the event
  ``InPlaceResizeSkipped``); ``Deferred`` candidates are sent their resize as upstream's
  updater does;
* CPU startup boost (the ``CPUStartupBoost`` gate; :mod:`kvert.vpa.startup_boost`): a pod whose
  boost expired (Ready, and ``durationSeconds`` passed) is resized in place back to the
  recommendation (``CanUnboost``: not Pending, not resizing, within the disruption budget),
  its ``vpaCpuStartupBoost/<container>`` annotations removed; a pod still boosted is otherwise
  left alone.

Every in-place resize also marks the pod ``vpaInPlaceUpdated: "true"``, as upstream's.
``eviction_rate_limit`` / ``eviction_rate_burst`` (upstream's token bucket; <= 0: no limit)
pace evictions and, separately, resizes; a wait longer than the pass ends it. With
``use_admission_controller_status`` a pass does nothing unless the admission controller's
status Lease is fresh (:mod:`kvert.vpa.admission_status`). ``vpa_object_namespace`` limits
the updater to one namespace; ``ignored_vpa_object_namespaces`` leaves those out. With
``metrics`` (:class:`~kvert.vpa.instruments.UpdaterMetrics`) each pass sets upstream's
gauges and counters; ``health`` is told of each pass.

Events (upstream's reasons and messages): on the pod ``EvictedByVPA``, ``InPlaceResizedByVPA``,
``InPlaceResizeSkipped``; on the VPA ``EvictedPod``; kvert adds ``InPlaceResizeFallbackToEviction``
on both when a resize falls back to eviction.
"""

from __future__ import annotations

import asyncio
import copy
import json
import logging
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

import orjson

from kvert.api.conditions import find_condition
from kvert.api.errors import ApiError, NotFound, TooManyRequests
from kvert.api.meta import parse_time
from kvert.api.quantity import Quantity
from kvert.client.base import Client
from kvert.client.cache import InformerFactory
from kvert.client.events import EventRecorder
from kvert.clock import Clock
from kvert.clock.periodic import run_every
from kvert.vpa.admission_status import (
    STATUS_NAME,
    STATUS_NAMESPACE,
    STATUS_TIMEOUT,
    admission_controller_status_valid,
)
from kvert.vpa.capacity import NodeRoom, capacity_aware, replacement_requests
from kvert.vpa.capping import cap_to_container_limit, container_requests_and_limits, requests_only
from kvert.vpa.features import VpaGates
from kvert.vpa.instruments import ExecutionTimer, HealthCheck, UpdaterMetrics, vpa_size_log2
from kvert.vpa.recommendation import (
    DEFAULT_CONFIG,
    apply_policy,
    container_policy,
    controlled_resources,
    parse_recommendation,
    proportional_limits,
    resource_quantities,
    scaling_disabled,
)
from kvert.vpa.startup_boost import (
    IN_PLACE_UPDATED_ANNOTATION,
    annotation_key,
    boost_expiry,
    boost_in_progress,
    expired_boosts,
    has_startup_boost,
    original_from_annotation,
)
from kvert.vpa.targets import ObjectReader, PodIndex, configured_replicas, is_live, resolve_target

log = logging.getLogger(__name__)

VPAS = "autoscaling.k8s.io/verticalpodautoscalers"
EVICTING_MODES = ("Recreate",)
IN_PLACE_MODES = ("InPlaceOrRecreate", "Auto", "InPlace")
UPDATE_MODES = EVICTING_MODES + IN_PLACE_MODES
POD_LIFETIME_UPDATE_THRESHOLD = 12 * 3600.0
EVICT_AFTER_OOM_THRESHOLD = 600.0
MIN_CHANGE_PRIORITY = 0.1
OBSERVED_CONTAINERS_ANNOTATION = "vpaObservedContainers"
INFEASIBLE_CAUSE_NODE_CAPACITY = "NodeCapacity"
SIZE_LABELS = tuple(str(i) for i in range(20))      # upstream's SizeBasedGauge: 0 .. MaxVpaSizeLog-1

# CanInPlaceUpdate's decisions (pkg/updater/utils/types.go)
APPROVED, DEFERRED, EVICT = "InPlaceApproved", "InPlaceDeferred", "InPlaceEvict"
INFEASIBLE, INFEASIBLE_CACHED = "InPlaceInfeasible", "InPlaceInfeasibleCached"
# getResizeStatus
RESIZE_NONE, RESIZE_DEFERRED, RESIZE_INFEASIBLE = "ResizeNone", "ResizeDeferred", "ResizeInfeasible"
RESIZE_IN_PROGRESS, RESIZE_ERROR, RESIZE_UNKNOWN = "ResizeInProgress", "ResizeError", "ResizeUnknown"

_DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
Targets = dict[str, dict[str, Quantity]]           # container -> resource -> target


def _shape(pod: Mapping) -> bytes | str:
    """What a pod's update priority depends on besides the VPA (replicas share it): its
    containers' resources, the resources its status reports, the containers admission observed."""
    containers = (pod.get("spec") or {}).get("containers") or []
    statuses = (pod.get("status") or {}).get("containerStatuses") or []
    observed = ((pod.get("metadata") or {}).get("annotations") or {}).get(OBSERVED_CONTAINERS_ANNOTATION)
    shape = [[(c.get("name"), c.get("resources")) for c in containers],
             [(s.get("name"), s.get("resources")) for s in statuses if isinstance(s, Mapping)], observed]
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
    below_min_replicas: bool = False       # let through for in-place updates only

    def disruptable(self) -> bool:
        should_be_alive = self.configured - self.tolerance
        alive = self.running - (self.evicted + self.in_place)
        return alive > should_be_alive or (self.configured == self.running and self.tolerance == 0
                                           and self.evicted == 0 and self.in_place == 0)


@dataclass
class PassResult:
    evicted: list[str] = field(default_factory=list)
    resized: list[str] = field(default_factory=list)
    unboosted: list[str] = field(default_factory=list)         # pods resized back from their startup boost
    skipped: dict[str, str] = field(default_factory=dict)      # VPA -> why nothing was done
    active: set[str] = field(default_factory=set)              # VPAs with candidates or resizes under way
    held: list[str] = field(default_factory=list)              # pods not evicted: no node has room (capacity-aware)
    blocked: str | None = None                                 # why the whole pass did nothing


def resize_condition(pod: Mapping) -> dict | None:
    for c in (pod.get("status") or {}).get("conditions") or []:
        if c.get("type") in ("PodResizePending", "PodResizeInProgress"):
            return c
    return None


def in_place_updating(pod: Mapping) -> bool:
    """``isInPlaceUpdating``: the first resize condition is True."""
    cond = resize_condition(pod)
    return cond is not None and cond.get("status") == "True"


def resize_status(pod: Mapping) -> str:
    """``getResizeStatus``."""
    if not in_place_updating(pod):
        return RESIZE_NONE
    status = pod.get("status")
    pending = find_condition(status, "PodResizePending")
    if pending is not None:
        return {"Deferred": RESIZE_DEFERRED, "Infeasible": RESIZE_INFEASIBLE}.get(str(pending.get("reason")),
                                                                                  RESIZE_UNKNOWN)
    progress = find_condition(status, "PodResizeInProgress")
    if progress is not None:
        if not progress.get("reason") and not progress.get("message"):
            return RESIZE_IN_PROGRESS
        if progress.get("reason") == "Error":
            return RESIZE_ERROR
    return RESIZE_UNKNOWN


def non_disruptive_resize(pod: Mapping) -> bool:
    """``IsNonDisruptiveResize``: no container's resizePolicy says RestartContainer."""
    for c in (pod.get("spec") or {}).get("containers") or []:
        for policy in (c or {}).get("resizePolicy") or []:
            if (policy or {}).get("restartPolicy") == "RestartContainer":
                return False
    return True


def infeasible_error(error: ApiError) -> bool:
    """``isInfeasibleError``: a Forbidden resize naming the NodeCapacity cause (Kubernetes
    1.36's PodResizeValidator)."""
    return error.reason == "Forbidden" and any(c.reason == INFEASIBLE_CAUSE_NODE_CAPACITY for c in error.causes)


def has_lower_resource(last: Targets, new: Targets) -> bool:
    """``RecommendationHasLowerResource``: ``new`` asks for less of some resource of some
    container than ``last``."""
    for name, resources in new.items():
        before = last.get(name)
        if before is None:
            continue
        for r, q in resources.items():
            if r in before and q < before[r]:
                return True
    return False


def _raw_targets(recommendation: Mapping) -> Targets:
    return {name: dict(rec.target) for name, rec in recommendation.items()}


def observed_containers(pod: Mapping) -> set[str] | None:
    """The containers the admission controller observed (``vpaObservedContainers``), None
    when the pod has no such annotation (or an unreadable one, as upstream)."""
    value = ((pod.get("metadata") or {}).get("annotations") or {}).get(OBSERVED_CONTAINERS_ANNOTATION)
    if value is None:
        return None
    if value == "":
        return set()
    names = str(value).split(", ")
    if any(len(n) > 63 or not _DNS1123_LABEL.match(n) for n in names):
        return None
    return set(names)


def _age(vpa: Mapping) -> tuple[str, str, str]:
    """Older VPAs first (a pod two VPAs select belongs to the older)."""
    meta = vpa.get("metadata") or {}
    return meta.get("creationTimestamp") or "", meta.get("namespace") or "default", meta.get("name", "")


Key = tuple[str, str]


class _PassAborted(Exception):
    """A rate limiter's wait would outlast the pass (upstream's RunOnce returns)."""


class RateLimiter:
    """``golang.org/x/time/rate``'s ``Limiter.Wait`` on a clock: ``rate`` tokens a second up to
    ``burst``; a rate <= 0 is no limit. :meth:`wait` returns False, taking nothing, when the
    wait would end after ``deadline``."""

    def __init__(self, clock: Clock, rate: float, burst: int) -> None:
        self.clock = clock
        self.rate = float(rate)
        self.burst = int(burst)
        self.tokens = float(self.burst)
        self.last = clock.now()

    async def wait(self, deadline: float) -> bool:
        if self.rate <= 0:
            return True
        if self.burst < 1:
            return False
        now = self.clock.now()
        self.tokens = min(float(self.burst), self.tokens + (now - self.last) * self.rate)
        self.last = now
        delay = 0.0 if self.tokens >= 1.0 else (1.0 - self.tokens) / self.rate
        if now + delay > deadline:
            return False
        self.tokens -= 1.0
        if delay > 0:
            await self.clock.sleep(delay)
        return True


@dataclass
class _VpaTally:
    """One VPA's part of a pass's gauges."""

    size: int
    mode: str
    evictable: int = 0
    in_place_updatable: int = 0
    evicted: bool = False
    in_place_updated: bool = False


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
                 gates: VpaGates | None = None, in_place_skip_disruption_budget: bool = False,
                 eviction_rate_limit: float = -1.0, eviction_rate_burst: int = 1,
                 use_admission_controller_status: bool = False,
                 admission_controller_status_lease_name: str = STATUS_NAME,
                 admission_controller_status_lease_namespace: str = STATUS_NAMESPACE,
                 admission_controller_status_lease_timeout: float = STATUS_TIMEOUT,
                 vpa_object_namespace: str = "", ignored_vpa_object_namespaces: Iterable[str] = (),
                 metrics: UpdaterMetrics | None = None, health: HealthCheck | None = None,
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
        self.gates = gates or VpaGates()
        self.in_place_skip_disruption_budget = bool(in_place_skip_disruption_budget)
        # upstream gives resizes a limiter of their own with the eviction limiter's settings
        self.eviction_limiter = RateLimiter(clock, eviction_rate_limit, eviction_rate_burst)
        self.in_place_limiter = RateLimiter(clock, eviction_rate_limit, eviction_rate_burst)
        self.use_admission_controller_status = bool(use_admission_controller_status)
        self.status_lease = (admission_controller_status_lease_name, admission_controller_status_lease_namespace)
        self.status_timeout = float(admission_controller_status_lease_timeout)
        self.namespace = vpa_object_namespace
        self.ignored_namespaces = frozenset(n for n in ignored_vpa_object_namespaces if n)
        self.metrics = metrics
        self.health = health
        self.recorder = recorder or EventRecorder(client, clock, "vpa-updater")
        self.in_place_attempts: dict[str, float] = {}     # pod uid -> time of the last resize
        self.infeasible_attempts: dict[str, Targets] = {}  # pod uid -> the targets found infeasible
        self._tallies: dict[Key, _VpaTally] = {}
        self._deadline = math.inf
        self._dirty: _Dirty | None = None
        self._node_room: NodeRoom | None = None
        self._stop = asyncio.Event()

    # -- running -----------------------------------------------------------------------------------

    async def run(self) -> None:
        if self.health is not None:
            self.health.start_monitoring()
        await run_every(self.clock, self.interval, self.run_once, self._stop,
                        log=log, failure="updater loop failed")

    def stop(self) -> None:
        self._stop.set()

    # -- one pass ----------------------------------------------------------------------------------

    async def run_once(self) -> PassResult:
        """One pass. With informers, only the VPAs something happened to are looked at (see
        ``_Dirty``); with a plain client, all of them."""
        timer = ExecutionTimer(self.metrics.execution_latency, self.clock) if self.metrics is not None else None
        # a pass may wait on the rate limiters no longer than an interval (upstream's context)
        self._deadline = self.clock.now() + self.interval
        try:
            return await self._run_once(timer)
        finally:
            if timer is not None:
                timer.observe_total()
            if self.health is not None:
                self.health.update_last_activity()

    async def _status_blocks(self) -> str | None:
        if not self.use_admission_controller_status:
            return None
        name, namespace = self.status_lease
        try:
            valid = await admission_controller_status_valid(self.client, self.clock, name=name, namespace=namespace,
                                                            timeout=self.status_timeout)
        except ApiError as e:
            log.error("Error getting Admission Controller status. Skipping update loop: %s", e)
            return f"Error getting Admission Controller status: {e}"
        if not valid:
            log.info("Admission Controller status is not valid. Skipping update loop (timeout %gs)",
                     self.status_timeout)
            return "Admission Controller status is not valid"
        return None

    async def _run_once(self, timer: ExecutionTimer | None) -> PassResult:
        blocked = await self._status_blocks()
        if blocked is not None:
            return PassResult(blocked=blocked)
        if self._dirty is None and self.informers is not None:
            self._dirty = await _Dirty.start(self.informers)
        if self._dirty is not None:
            return await self._pass(self._dirty, timer)
        self._node_room = None
        result = PassResult()
        vpas = (await self.reader.list(VPAS))["items"]
        _step(timer, "ListVPAs")
        pods = [p for p in (await self.reader.list("pods"))["items"] if is_live(p)]
        _step(timer, "ListPods")
        index = PodIndex(pods)
        live_uids = {p["metadata"].get("uid") for p in pods}
        for attempts in (self.in_place_attempts, self.infeasible_attempts):
            for uid in [u for u in attempts if u not in live_uids]:
                del attempts[uid]
        _step(timer, "FilterPods")
        self._tallies = {}
        taken: set[tuple[str, str]] = set()
        try:
            for vpa in sorted(vpas, key=_age):
                mine = await self._vpa_pass(vpa, lambda ns, selector: index.select(ns, selector), taken, result)
                taken.update(_obj_key(p) for p in mine or ())
        except _PassAborted:
            log.info("rate limiter wait would outlast the pass; the rest waits for the next one")
        self._observe()
        _step(timer, "EvictPods")
        return result

    async def _pass(self, dirty: _Dirty, timer: ExecutionTimer | None) -> PassResult:
        self._node_room = None
        result = PassResult()
        now = self.clock.now()
        for uid in dirty.gone_pods():
            self.in_place_attempts.pop(uid, None)
            self.infeasible_attempts.pop(uid, None)
        _step(timer, "FilterPods")
        for tally in self._tallies.values():        # what happened belongs to the pass it happened in
            tally.evicted = tally.in_place_updated = False
        todo = sorted(dirty.take(now), key=_age)
        for i, vpa in enumerate(todo):
            try:
                mine = await self._vpa_pass(vpa, dirty.selector_for(vpa), dirty.taken_by_older(vpa), result)
            except _PassAborted:
                log.info("rate limiter wait would outlast the pass; the rest waits for the next one")
                dirty.dirty.update(_obj_key(v) for v in todo[i:])
                break
            dirty.evaluated(vpa, mine, self._next_look(vpa, mine, result, now))
        for key in [k for k in self._tallies if dirty.vpas.get(k[1], k[0]) is None]:
            del self._tallies[key]
        self._observe()
        _step(timer, "EvictPods")
        return result

    def _next_look(self, vpa: Mapping, pods: list[dict] | None, result: PassResult, now: float) -> float:
        """When a VPA nothing happens to must be looked at again: at the next pass while it
        has candidates or resizes under way, else when its next pod reaches the lifetime
        threshold or a boost expires (infinity: not before something changes)."""
        if pods is None:
            return math.inf
        if f"{vpa['metadata'].get('namespace', 'default')}/{vpa['metadata']['name']}" in result.active:
            return now + self.interval
        due = math.inf
        boost = self.gates.cpu_startup_boost and has_startup_boost(vpa)
        for pod in pods:
            start = (pod.get("status") or {}).get("startTime")
            if start:
                try:
                    at = parse_time(start) + self.pod_lifetime_threshold
                except ValueError:
                    continue
                if at > now:
                    due = min(due, at)
            if boost and boost_in_progress(pod):
                expiry = boost_expiry(pod, vpa)
                if expiry is not None:
                    # a boost expires once strictly more than its duration has passed
                    due = min(due, max(now, math.nextafter(expiry, math.inf)))
        return due

    async def _vpa_pass(self, vpa: dict, select: Any, taken: _PodKeys,
                        result: PassResult) -> list[dict] | None:
        """One VPA's part of a pass, leaving out the pods ``taken`` by older VPAs; the pods it
        manages (None when it manages none)."""
        name = f"{vpa['metadata'].get('namespace', 'default')}/{vpa['metadata']['name']}"
        ns = vpa["metadata"].get("namespace") or "default"
        self._tallies.pop(_obj_key(vpa), None)
        if (self.namespace and ns != self.namespace) or ns in self.ignored_namespaces:
            result.skipped[name] = f"namespace {ns} not watched"
            return None
        mode = update_mode(vpa)
        if mode not in UPDATE_MODES and not has_startup_boost(vpa):
            result.skipped[name] = f"updateMode {mode}"
            return None
        target = await resolve_target(self.reader, vpa)
        if not target.ok:
            result.skipped[name] = target.problem or "bad targetRef"
            return None
        mine = [p for p in select(ns, target.selector) if is_live(p) and (ns, p["metadata"]["name"]) not in taken]
        if not mine:
            result.skipped[name] = "no pods"
            return mine
        recommendation = parse_recommendation((vpa.get("status") or {}).get("recommendation"))
        await self._update_vpa(vpa, mode, recommendation, target.workload, mine, result)
        return mine

    def _group(self, vpa: Mapping, mode: str, workload: dict | None,
               pods: list[dict]) -> tuple[GroupStats | None, int]:
        """``GetCreatorMaps`` for the VPA's pods: their stats, or None with too few replicas
        (unless one is still boosted, or in-place updates may skip the budget); the
        ``minReplicas`` that applied."""
        required = ((vpa.get("spec") or {}).get("updatePolicy") or {}).get("minReplicas")
        required = self.min_replicas if required is None else int(required)
        below = False
        if len(pods) < required:
            skip_check = mode in IN_PLACE_MODES and self.in_place_skip_disruption_budget
            if not skip_check and not any(boost_in_progress(p) for p in pods):
                return None, required
            below = skip_check
        configured = configured_replicas(workload)
        if configured is None:
            configured = len(pods)
        pending = sum(1 for p in pods if (p.get("status") or {}).get("phase") == "Pending")
        return GroupStats(configured, int(configured * self.eviction_tolerance), len(pods) - pending, pending,
                          below_min_replicas=below), required

    async def _update_vpa(self, vpa: dict, mode: str, recommendation: Mapping, workload: dict | None,
                          pods: list[dict], result: PassResult) -> None:
        name = f"{vpa['metadata'].get('namespace', 'default')}/{vpa['metadata']['name']}"
        tally = self._tallies[_obj_key(vpa)] = _VpaTally(len(pods), mode)
        self._init_counters(vpa, tally)
        now = self.clock.now()
        stats, required = self._group(vpa, mode, workload, pods)
        available = pods
        if self.gates.cpu_startup_boost and has_startup_boost(vpa):
            available = [p for p in pods if not boost_in_progress(p)]
            await self._unboost(vpa, mode, recommendation, pods, stats, tally, result, now)
        if mode not in UPDATE_MODES:
            result.skipped[name] = f"updateMode {mode}"
            return
        if stats is None:
            result.skipped[name] = f"too few replicas: {len(pods)} < {required}"
            return
        if mode == "InPlace" and not self.gates.in_place:
            log.info("Warning: feature gate is not enabled for this updateMode (featuregate InPlace, vpa %s)", name)
            result.skipped[name] = "updateMode InPlace needs the InPlace feature gate"
            return
        if not recommendation:
            result.skipped[name] = "no recommendation"
            return
        # kvert's in-place model: a resize restarts nothing, so pods need not age before one
        in_place = mode in IN_PLACE_MODES
        lifetime = 0.0 if in_place and DEFAULT_CONFIG.for_vpa(vpa)[0].model == "in-place" \
            else self.pod_lifetime_threshold
        if in_place:
            await self._in_place_pass(vpa, mode, recommendation, available, stats, tally, result, now, lifetime)
            return
        evictable = [p for p in available if self._can_evict(p, stats, now)]
        candidates = self._ordered_candidates(vpa, mode, recommendation, evictable, now, lifetime)
        tally.evictable = len(candidates)
        if candidates:
            result.active.add(name)
        await self._evict_all(vpa, mode, recommendation, [p for p, _ in candidates], stats, tally, result)

    async def _unboost(self, vpa: dict, mode: str, recommendation: Mapping, pods: list[dict],
                       stats: GroupStats | None, tally: _VpaTally, result: PassResult, now: float) -> None:
        """Resize the pods whose startup boost expired back to the recommendation."""
        name = f"{vpa['metadata'].get('namespace', 'default')}/{vpa['metadata']['name']}"
        for pod in pods:
            expired = expired_boosts(pod, vpa, now)
            if not expired:
                continue
            if not self._can_unboost(pod, stats):
                result.active.add(name)
                continue
            if not await self.in_place_limiter.wait(self._deadline):
                raise _PassAborted
            try:
                patch = self._resize_patch(vpa, mode, recommendation, pod, expired)
                if patch is None:
                    raise ValueError("no resource patches were calculated to apply")
                assert stats is not None          # _can_unboost
                await self._in_place_update(pod, vpa, patch, expired, stats, now)
            except NotFound:
                continue
            except (ApiError, ValueError) as e:
                log.info("unboosting %s failed: %s", pod["metadata"]["name"], e)
                self._failed_in_place(vpa, tally, "UnboostError")
                result.active.add(name)
                continue
            result.unboosted.append(pod["metadata"]["name"])
            self._in_place_updated(vpa, tally)

    def _can_unboost(self, pod: Mapping, stats: GroupStats | None) -> bool:
        """``CanUnboost`` (the boost known expired): not Pending, not resizing, and within the
        disruption budget."""
        if not self.gates.cpu_startup_boost or stats is None:
            return False
        if (pod.get("status") or {}).get("phase") == "Pending" or in_place_updating(pod):
            return False
        return stats.disruptable()

    async def _in_place_pass(self, vpa: dict, mode: str, recommendation: Mapping, pods: list[dict],
                             stats: GroupStats, tally: _VpaTally, result: PassResult, now: float,
                             lifetime: float) -> None:
        name = f"{vpa['metadata'].get('namespace', 'default')}/{vpa['metadata']['name']}"
        in_place_only = mode == "InPlace"
        for pod in pods:
            if resize_condition(pod) is None:
                self.in_place_attempts.pop(pod["metadata"].get("uid"), None)
        done: set[str] = set()
        if not in_place_only:
            # troubled resizes go first: they may use this pass's disruption
            troubled = []
            for pod in pods:
                if resize_status(pod) == RESIZE_NONE:
                    continue
                if self._in_place_decision(pod, vpa, mode, recommendation, stats, now) != EVICT:
                    continue
                troubled.append(pod)
                why = self._fallback_reason(pod, now)
                await self._event(pod, vpa, "InPlaceResizeFallbackToEviction",
                                  f"In-place resize {why}; falling back to eviction.",
                                  f"In-place resize of Pod {pod['metadata']['name']} {why}; falling back to eviction.")
            done = set(await self._evict_all(vpa, mode, recommendation, troubled, stats, tally, result))
        updatable = []
        for pod in pods:
            if pod["metadata"]["name"] in done:
                continue
            decision = self._in_place_decision(pod, vpa, mode, recommendation, stats, now)
            if decision == APPROVED or (decision in (INFEASIBLE, DEFERRED) and in_place_only) or \
                    (decision == EVICT and not in_place_only):
                updatable.append(pod)
            elif decision == INFEASIBLE_CACHED:
                await self._pod_event(pod, "InPlaceResizeSkipped",
                                      "Previously recorded in-place update was infeasible, current recommendation "
                                      "is not lower than previous, skipping resize")
                if self.metrics is not None:
                    self.metrics.in_place_infeasible_skips.labels(*self._labels(vpa, tally)).inc()
        candidates = self._ordered_candidates(vpa, mode, recommendation, updatable, now, lifetime)
        tally.in_place_updatable = len(candidates)
        if candidates or any(resize_condition(p) is not None for p in pods):
            result.active.add(name)
        to_evict: list[dict] = []
        for pod, _priority in candidates:
            decision = self._in_place_decision(pod, vpa, mode, recommendation, stats, now)
            if decision == DEFERRED and not in_place_only:
                continue
            if decision == EVICT:
                to_evict.append(pod)
                continue
            if decision == INFEASIBLE:
                self._record_infeasible(pod, recommendation)
            elif decision not in (APPROVED, DEFERRED):
                continue
            patch = self._resize_patch(vpa, mode, recommendation, pod, expired_boosts(pod, vpa, now))
            if patch is None:
                continue                  # already asked for: nothing new to send
            if not await self.in_place_limiter.wait(self._deadline):
                self._failed_in_place(vpa, tally, "InPlaceUpdateRateLimiterWaitFailed")
                raise _PassAborted
            try:
                await self._in_place_update(pod, vpa, patch, expired_boosts(pod, vpa, now), stats, now)
            except NotFound:
                continue
            except ApiError as e:
                reason = "InPlaceUpdateError"
                if in_place_only:
                    if infeasible_error(e):
                        reason = "InPlaceUpdateInfeasible"
                        self._record_infeasible(pod, recommendation)
                    log.info("in-place resize of %s failed (%s): %s", pod["metadata"]["name"], reason, e)
                    self._failed_in_place(vpa, tally, reason)
                    continue
                log.info("in-place resize of %s refused, falling back to eviction: %s", pod["metadata"]["name"], e)
                self._failed_in_place(vpa, tally, reason)
                if not isinstance(e, TooManyRequests):
                    to_evict.append(pod)
                continue
            result.resized.append(pod["metadata"]["name"])
            self._in_place_updated(vpa, tally)
        if not in_place_only:
            await self._evict_all(vpa, mode, recommendation, to_evict, stats, tally, result)

    def _in_place_decision(self, pod: Mapping, vpa: Mapping, mode: str, recommendation: Mapping,
                           stats: GroupStats | None, now: float) -> str:
        """``CanInPlaceUpdate``."""
        if mode == "InPlace" and not self.gates.in_place:
            return DEFERRED
        if stats is None or (pod.get("status") or {}).get("phase") == "Pending" or not recommendation:
            return DEFERRED
        uid = (pod.get("metadata") or {}).get("uid", "")
        if mode == "InPlace" and uid in self.infeasible_attempts and \
                not has_lower_resource(self.infeasible_attempts[uid], _raw_targets(recommendation)):
            return INFEASIBLE_CACHED
        status = resize_status(pod)
        if status != RESIZE_NONE:
            if mode == "InPlace":
                # wait for the node however long it takes; only Infeasible is worth another try
                return INFEASIBLE if status == RESIZE_INFEASIBLE else DEFERRED
            return EVICT if self._can_evict_in_placing(pod, stats, now) else DEFERRED
        if self.in_place_skip_disruption_budget and non_disruptive_resize(pod):
            return APPROVED
        return APPROVED if stats.disruptable() else DEFERRED

    def _can_evict_in_placing(self, pod: Mapping, stats: GroupStats, now: float) -> bool:
        """``CanEvictInPlacingPod``: a resize under way has failed or stalled."""
        if not in_place_updating(pod):
            return False
        started = self.in_place_attempts.setdefault((pod.get("metadata") or {}).get("uid", ""), now)
        if not stats.disruptable():
            return False
        status = pod.get("status")
        pending = find_condition(status, "PodResizePending")
        if pending is not None:
            return now - started > self.deferred_timeout if pending.get("reason") == "Deferred" else True
        progress = find_condition(status, "PodResizeInProgress")
        if progress is not None:
            if not progress.get("reason") and not progress.get("message"):
                return now - started > self.in_place_timeout
            return True
        return False

    def _fallback_reason(self, pod: Mapping, now: float) -> str:
        cond = resize_condition(pod) or {}
        waited = now - self.in_place_attempts.get((pod.get("metadata") or {}).get("uid", ""), now)
        if cond.get("type") == "PodResizePending":
            reason = cond.get("reason")
            if reason == "Deferred":
                return f"deferred for more than {self.deferred_timeout:g}s"
            return "infeasible" if reason == "Infeasible" else f"pending ({reason or 'unknown'})"
        if cond.get("reason") == "Error":
            return "failed"
        if cond.get("reason") or cond.get("message"):
            return f"in progress ({cond.get('reason') or cond.get('message')})"
        return f"in progress for more than {self.in_place_timeout:g}s" if waited > self.in_place_timeout \
            else "in progress"

    def _record_infeasible(self, pod: Mapping, recommendation: Mapping) -> None:
        """``recordInfeasibleAttempt``: retry only once the recommendation asks for less."""
        self.infeasible_attempts[(pod.get("metadata") or {}).get("uid", "")] = _raw_targets(recommendation)

    async def _room(self) -> NodeRoom:
        """The nodes' room this pass (made once a pass needs it)."""
        if self._node_room is None:
            self._node_room = NodeRoom((await self.reader.list("nodes"))["items"],
                                       (await self.reader.list("pods"))["items"])
        return self._node_room

    async def _evict_all(self, vpa: dict, mode: str, recommendation: Mapping, pods: list[dict],
                         stats: GroupStats, tally: _VpaTally, result: PassResult) -> list[str]:
        """Evict ``pods`` as far as the budget allows; the names evicted."""
        aware = capacity_aware(vpa)
        evicted: list[str] = []
        now = self.clock.now()
        for pod in pods:
            if not self._can_evict(pod, stats, now):
                continue
            pending = (pod.get("status") or {}).get("phase") == "Pending"
            requests = None
            if aware and not pending:
                # kvert's capacity-aware VPA: a replacement no node can take now would only wait
                # Pending, so the pod keeps running at its current size
                targets = {c.get("name", ""): (self._targets(vpa, recommendation, c, pod) or {}).get("target") or {}
                           for c in (pod.get("spec") or {}).get("containers") or []}
                requests = replacement_requests(pod, targets)
                room = await self._room()
                if not room.fits(pod, requests):
                    result.held.append(pod["metadata"]["name"])
                    continue
            if not await self.eviction_limiter.wait(self._deadline):
                self._failed_eviction(vpa, tally, "EvictionRateLimiterWaitFailed")
                raise _PassAborted
            try:
                await self.client.evict(pod["metadata"]["namespace"], pod["metadata"]["name"])
            except NotFound:
                continue
            except ApiError as e:
                if isinstance(e, TooManyRequests):
                    log.info("eviction of %s not allowed now: %s", pod["metadata"]["name"], e)
                else:
                    log.warning("eviction of %s failed: %s", pod["metadata"]["name"], e)
                self._failed_eviction(vpa, tally, "EvictionError")
                continue
            if not pending:
                stats.evicted += 1
            if requests is not None:
                (await self._room()).moved(pod, requests)
            self.in_place_attempts.pop(pod["metadata"].get("uid"), None)
            evicted.append(pod["metadata"]["name"])
            result.evicted.append(pod["metadata"]["name"])
            tally.evicted = True
            if self.metrics is not None:
                self.metrics.evicted_pods.labels(vpa_size_log2(tally.size), mode, *self._names(vpa)).inc()
            await self._event(pod, vpa, "EvictedByVPA",
                              "Pod was evicted by VPA Updater to apply resource recommendation.",
                              f"VPA Updater evicted Pod {pod['metadata']['name']} to apply resource recommendation.",
                              vpa_reason="EvictedPod")
        return evicted

    def _can_evict(self, pod: Mapping, stats: GroupStats | None, now: float) -> bool:
        """``CanEvict``."""
        if stats is None:
            return False
        if (pod.get("status") or {}).get("phase") == "Pending":
            return True
        if stats.below_min_replicas:
            return False
        if in_place_updating(pod):
            return self._can_evict_in_placing(pod, stats, now)
        return stats.disruptable()

    # -- metrics -----------------------------------------------------------------------------------

    @staticmethod
    def _names(vpa: Mapping) -> tuple[str, str]:
        meta = vpa.get("metadata") or {}
        return meta.get("name", ""), meta.get("namespace") or "default"

    def _labels(self, vpa: Mapping, tally: _VpaTally) -> tuple[str, str, str]:
        return (vpa_size_log2(tally.size), *self._names(vpa))

    def _init_counters(self, vpa: Mapping, tally: _VpaTally) -> None:
        """``InitCounters``: a VPA's counters exist, at zero, before anything happens to it."""
        if self.metrics is not None:
            log2, vpa_name, vpa_namespace = self._labels(vpa, tally)
            self.metrics.evicted_pods.labels(log2, tally.mode, vpa_name, vpa_namespace)
            self.metrics.in_place_updated_pods.labels(log2, vpa_name, vpa_namespace)

    def _failed_in_place(self, vpa: Mapping, tally: _VpaTally, reason: str) -> None:
        if self.metrics is not None:
            log2, vpa_name, vpa_namespace = self._labels(vpa, tally)
            self.metrics.failed_in_place_update_attempts.labels(log2, reason, vpa_name, vpa_namespace).inc()

    def _failed_eviction(self, vpa: Mapping, tally: _VpaTally, reason: str) -> None:
        if self.metrics is not None:
            log2, vpa_name, vpa_namespace = self._labels(vpa, tally)
            self.metrics.failed_eviction_attempts.labels(log2, tally.mode, reason, vpa_name, vpa_namespace).inc()

    def _in_place_updated(self, vpa: Mapping, tally: _VpaTally) -> None:
        tally.in_place_updated = True
        if self.metrics is not None:
            self.metrics.in_place_updated_pods.labels(*self._labels(vpa, tally)).inc()

    def _observe(self) -> None:
        """The per-pass gauges, as upstream's counters ``Observe()`` them: reset, then the
        sums by VPA size (and mode); the size-only ones for every size."""
        m = self.metrics
        if m is None:
            return
        by_mode: dict[str, dict[tuple[str, str], int]] = {"controlled": {}, "evictable": {}, "with_evictable": {},
                                                          "with_evicted": {}}
        by_size: dict[str, dict[str, int]] = {k: dict.fromkeys(SIZE_LABELS, 0) for k in
                                              ("updatable", "with_updatable", "with_updated")}

        def add(table: dict, key: Any, value: int) -> None:
            table[key] = table.get(key, 0) + value

        for t in self._tallies.values():
            log2 = vpa_size_log2(t.size)
            add(by_mode["controlled"], (log2, t.mode), t.size)
            if t.mode in EVICTING_MODES:
                add(by_mode["evictable"], (log2, t.mode), t.evictable)
                if t.evictable:
                    add(by_mode["with_evictable"], (log2, t.mode), 1)
                if t.evicted:
                    add(by_mode["with_evicted"], (log2, t.mode), 1)
            add(by_size["updatable"], log2, t.in_place_updatable)
            if t.in_place_updatable:
                add(by_size["with_updatable"], log2, 1)
            if t.in_place_updated:
                add(by_size["with_updated"], log2, 1)
            # an in-place VPA's pods that fell back to eviction count as evicted too
            if t.mode not in EVICTING_MODES and t.evicted:
                add(by_mode["with_evicted"], (log2, t.mode), 1)
        for gauge, table in ((m.controlled_pods, by_mode["controlled"]), (m.evictable_pods, by_mode["evictable"]),
                             (m.vpas_with_evictable_pods, by_mode["with_evictable"]),
                             (m.vpas_with_evicted_pods, by_mode["with_evicted"])):
            gauge.clear()
            for (log2, mode), value in table.items():
                gauge.labels(log2, mode).set(value)
        for gauge, sizes in ((m.in_place_updatable_pods, by_size["updatable"]),
                             (m.vpas_with_in_place_updatable_pods, by_size["with_updatable"]),
                             (m.vpas_with_in_place_updated_pods, by_size["with_updated"])):
            gauge.clear()
            for log2, value in sizes.items():
                gauge.labels(log2).set(value)

    # -- priorities --------------------------------------------------------------------------------

    def _targets(self, vpa: Mapping, recommendation: Mapping, container: Mapping,
                 pod: Mapping | None = None) -> dict[str, dict[str, Quantity]] | None:
        """target/lowerBound/upperBound of a container, policy applied and, with RequestsOnly,
        capped at the container's limits (None: not managed)."""
        name = container.get("name", "")
        rec = recommendation.get(name)
        policy = container_policy(vpa, name)
        if rec is None or scaling_disabled(policy):
            return None
        controlled = controlled_resources(policy)
        cap = requests_only(vpa, name)
        limits = (container_requests_and_limits(pod, name)[1] if pod is not None
                  else resource_quantities((container.get("resources") or {}).get("limits")))
        out = {}
        for bound in ("target", "lowerBound", "upperBound"):
            values = {r: q for r, q in rec.bound(bound).items() if r in controlled}
            out[bound], _ = apply_policy(values, policy)
            if cap:
                out[bound], _ = cap_to_container_limit(out[bound], limits)
        return out

    def priority(self, vpa: Mapping, recommendation: Mapping, pod: Mapping) -> Priority:
        """``GetUpdatePriority``: requests as the container runs them (its status)."""
        p = Priority()
        total_request: dict[str, int] = {}
        total_recommended: dict[str, int] = {}
        observed = observed_containers(pod)
        for c in (pod.get("spec") or {}).get("containers") or []:
            if observed is not None and c.get("name") not in observed:
                continue
            bounds = self._targets(vpa, recommendation, c, pod)
            if bounds is None:
                continue
            requests = container_requests_and_limits(pod, c.get("name", ""))[0]
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

    def _oom_threshold(self, vpa: Mapping) -> float:
        """``getEvictOOMThreshold``: the VPA's ``evictAfterOOMSeconds`` with the PerVPAConfig gate."""
        seconds = ((vpa.get("spec") or {}).get("updatePolicy") or {}).get("evictAfterOOMSeconds")
        if seconds is None or not self.gates.per_vpa_config:
            return self.evict_after_oom_threshold
        return float(seconds)

    def _quick_oom(self, vpa: Mapping, pod: Mapping, now: float) -> bool:
        threshold = self._oom_threshold(vpa)
        observed = observed_containers(pod)
        for cs in (pod.get("status") or {}).get("containerStatuses") or []:
            name = cs.get("name", "")
            if observed is not None and name not in observed:
                continue
            if scaling_disabled(container_policy(vpa, name)):
                continue
            term = (cs.get("lastState") or {}).get("terminated") or {}
            if term.get("reason") != "OOMKilled" or not term.get("finishedAt") or not term.get("startedAt"):
                continue
            try:
                finished = parse_time(term["finishedAt"])
                if finished - parse_time(term["startedAt"]) < threshold and now - finished < threshold:
                    return True
            except ValueError:
                continue
        return False

    def _ordered_candidates(self, vpa: Mapping, mode: str, recommendation: Mapping, pods: list[dict],
                            now: float, lifetime: float) -> list[tuple[dict, Priority]]:
        """``UpdatePriorityCalculator``: ``AddPod`` for each pod, then ``GetSortedPods``."""
        out = []
        known: dict[bytes | str, tuple[Priority, Targets]] = {}   # replicas share their priority
        for pod in pods:
            shape = _shape(pod)
            if shape not in known:
                targets = {c.get("name", ""): b["target"] for c in (pod.get("spec") or {}).get("containers") or []
                           if (b := self._targets(vpa, recommendation, c, pod)) is not None}
                known[shape] = (self.priority(vpa, recommendation, pod), targets)
            p, processed = known[shape]              # copied below for the pods that stay candidates
            if mode == "InPlace":
                last = self.infeasible_attempts.get((pod.get("metadata") or {}).get("uid", ""))
                if last is not None and not has_lower_resource(last, processed):
                    continue
            quick_oom = self._quick_oom(vpa, pod, now)
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

    def _resize_patch(self, vpa: Mapping, mode: str, recommendation: Mapping, pod: Mapping,
                      expired: list[str]) -> dict | None:
        """The ``pods/resize`` patch (upstream's in-place calculator): containers whose boost
        expired go back to their target (or, with none, their original resources); those still
        boosted are left alone; the others get their target where it differs."""
        annotations = (pod.get("metadata") or {}).get("annotations") or {}
        containers = []
        for c in (pod.get("spec") or {}).get("containers") or []:
            key = annotation_key(c.get("name", ""))
            if key in expired:
                entry = self._unboost_entry(vpa, mode, recommendation, pod, c)
                if entry is not None:
                    containers.append(entry)
                continue
            if key in annotations or mode == "Off":
                continue
            bounds = self._targets(vpa, recommendation, c, pod)
            if not bounds or not bounds["target"]:
                continue
            target = bounds["target"]
            res = c.get("resources") or {}
            entry = self._resources_entry(vpa, c, target)
            current = resource_quantities(res.get("requests"))
            if all(r in current and current[r] == q for r, q in target.items()) and "limits" not in entry["resources"]:
                continue
            containers.append(entry)
        if not containers:
            return None
        return {"spec": {"containers": containers}}

    def _resources_entry(self, vpa: Mapping, container: Mapping, target: Mapping[str, Quantity]) -> dict[str, Any]:
        res = container.get("resources") or {}
        requests = {r: str(q) for r, q in target.items()}
        entry: dict[str, Any] = {"name": container["name"], "resources": {"requests": requests}}
        if not requests_only(vpa, container["name"]) and res.get("limits"):
            limits, _ = proportional_limits(res.get("limits"), res.get("requests"), target)
            if limits:
                entry["resources"]["limits"] = {r: str(q) for r, q in limits.items()}
        return entry

    def _unboost_entry(self, vpa: Mapping, mode: str, recommendation: Mapping, pod: Mapping,
                       container: Mapping) -> dict[str, Any] | None:
        """``getContainerResourcesForUnboost``: the recommendation, else the annotation's
        original resources (ValueError for an annotation that is not upstream's JSON)."""
        bounds = None if mode == "Off" else self._targets(vpa, recommendation, container, pod)
        if bounds and bounds["target"]:
            return self._resources_entry(vpa, container, bounds["target"])
        original = original_from_annotation(pod, container.get("name", ""))
        if not original or not (original["requests"] or original["limits"]):
            return None
        resources = {field: {r: str(q) for r, q in values.items()} for field, values in original.items() if values}
        return {"name": container["name"], "resources": resources}

    async def _in_place_update(self, pod: dict, vpa: Mapping, patch: dict, expired: list[str],
                               stats: GroupStats, now: float) -> None:
        """``InPlaceUpdate``: the resize, then the pod's annotations (``vpaInPlaceUpdated``, the
        expired boosts removed); an annotation patch that fails is only logged, as upstream."""
        ns, name = pod["metadata"]["namespace"], pod["metadata"]["name"]
        await self.client.resize(ns, name, patch)
        annotations = (pod.get("metadata") or {}).get("annotations")
        ops: list[dict[str, Any]] = []
        if not isinstance(annotations, Mapping):
            ops.append({"op": "add", "path": "/metadata/annotations", "value": {}})
        if not isinstance(annotations, Mapping) or annotations.get(IN_PLACE_UPDATED_ANNOTATION) != "true":
            ops.append({"op": "add", "path": f"/metadata/annotations/{IN_PLACE_UPDATED_ANNOTATION}",
                        "value": "true"})
        ops += [{"op": "remove", "path": f"/metadata/annotations/{_pointer(key)}"} for key in expired]
        # upstream patches the annotation at every resize; a pod that already has it and no
        # boost to drop would come out of that patch unchanged, so it is not sent
        if ops:
            try:
                await self.client.patch("pods", name, ops, "json", namespace=ns)
            except ApiError as e:
                log.info("Failed to patch pod annotations of %s/%s: %s", ns, name, e)
        await self._pod_event(pod, "InPlaceResizedByVPA", "Pod was resized in place by VPA Updater.")
        stats.in_place += 1
        self.in_place_attempts[pod["metadata"].get("uid")] = now

    async def _pod_event(self, pod: dict, reason: str, message: str) -> None:
        pod_ref = copy.copy(pod)
        pod_ref.setdefault("kind", "Pod")
        pod_ref.setdefault("apiVersion", "v1")
        await self.recorder.record(pod_ref, "Normal", reason, message)

    async def _event(self, pod: dict, vpa: dict, reason: str, pod_message: str, vpa_message: str,
                     vpa_reason: str | None = None) -> None:
        await self._pod_event(pod, reason, pod_message)
        await self.recorder.record(vpa, "Normal", vpa_reason or reason, vpa_message)


def _step(timer: ExecutionTimer | None, step: str) -> None:
    if timer is not None:
        timer.observe_step(step)


def _pointer(token: str) -> str:
    """One JSON pointer token (RFC 6901), as upstream escapes annotation names (cc3bc92fec)."""
    return token.replace("~", "~0").replace("/", "~1")


__all__ = ["APPROVED", "DEFERRED", "EVICT", "GroupStats", "INFEASIBLE", "INFEASIBLE_CACHED", "PassResult",
           "Priority", "RateLimiter", "Updater", "has_lower_resource", "in_place_updating", "resize_condition",
           "resize_status", "update_mode"]
