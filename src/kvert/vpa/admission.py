"""The VPA admission controller: new pods get their VPA's recommendation as requests.

Upstream: ``vertical-pod-autoscaler/pkg/admission-controller`` (``resource/pod``,
``resource/pod/patch``, ``resource/vpa/matcher.go``). Three layers:

* :func:`mutate_pod` -- the pure logic. Given a pod (as created, after kvert's in-tree
  LimitRanger defaulting), the VPAs that match it and the namespace's LimitRanges, it
  returns JSONPatch operations, the annotations they add, the chosen VPA and warnings:

  - VPAs whose ``updatePolicy.updateMode`` is ``Off`` are skipped (``Initial``, ``Recreate``,
    ``Auto``, ``InPlaceOrRecreate`` all apply at creation);
  - **several VPAs match**: the *oldest* (``metadata.creationTimestamp``), then the smallest
    *name*, wins -- upstream's ``Stronger`` -- and a warning names them all;
  - per container (by index): skipped when its container policy has ``mode: Off`` or the
    recommendation has no entry for it; the request of each controlled resource
    (``controlledResources``, default cpu and memory) becomes the recommendation's
    ``target``, capped by the policy's ``minAllowed`` / ``maxAllowed`` and then by the
    ``Container`` LimitRange items (``min``, and ``max`` of the limit the request implies);
  - limits: ``controlledValues: RequestsAndLimits`` (the default) scales each existing limit
    (or the LimitRange default limit) to keep its ratio to the original request
    (``GetProportionalLimit``: request 100m / limit 200m with a target of 300m gives 600m),
    then caps it to the LimitRange ``max`` and to request x ``maxLimitRequestRatio``;
    ``RequestsOnly`` leaves limits alone and caps the request at the container's limit
    (upstream's ``capRecommendationToContainerLimit``, note ``cpu capped to container limit``:
    a request above its limit would make the pod invalid);
  - CPU startup boost (the ``CPUStartupBoost`` gate, :mod:`kvert.vpa.startup_boost`): the
    boosted CPU request (and limit), ``vpaCpuStartupBoost/<container>`` marking the original
    resources; a VPA in mode Off with a boost still boosts, without its recommendation;
  - annotations, as upstream: ``vpaUpdates: "Pod resources updated by NAME: container 0:
    cpu request, memory request, cpu limit, memory limit; container 1: ..."`` (capping notes
    such as ``cpu capped to maxAllowed`` come first within a container) and
    ``vpaObservedContainers: "a, b"`` (every container name of the pod);
  - **no recommendation** (or nothing to change): the patch is empty -- the pod passes
    unchanged, without annotations (upstream would still add ``vpaObservedContainers``).

* :class:`VpaMatcher` -- which VPAs control a pod. A VPA with a ``targetRef`` matches when
  the pod's top-most controller (its controller ownerReference, followed upward through
  ReplicaSets and Deployments that can be read) is that kind and name in the pod's
  namespace and, when the target object can be read and has ``spec.selector``, the pod's
  labels match it. A pod without a controller ownerReference matches a VPA whose target's
  ``spec.selector`` selects its labels (a kvert extension for bare pods). A VPA without
  ``targetRef`` but with a legacy ``spec.selector`` matches by that selector. Reads come
  from shared informers (:meth:`VpaMatcher.start`, or ``informers=``) or, without them,
  straight from the client.

* :class:`VpaAdmission` -- matcher + mutate + a Warning event, and VPA validation
  (:meth:`VpaAdmission.review_vpa`, upstream's gated checks of :mod:`kvert.vpa.vpa_validation`);
  :class:`VpaAdmissionPlugin` wraps it as an in-process
  :class:`~kvert.registry.admission.AdmissionChain` plugin (pod CREATE, VPA CREATE/UPDATE), and
  :mod:`kvert.vpa.webhook` serves it as a mutating webhook over HTTPS.

Events: a pod has no uid at admission (and may have no name yet), so the Warning event
``MultipleVPAs`` about an ambiguous choice is recorded on **each matching VPA** (the chosen
one and the others); its message names the controller, not the pod, so repeats for every
new replica bump one event's ``count``. The same text is returned as an admission warning
(kubectl prints it as ``Warning: ...``).

**Requires VPA** (seed 002: a pod marked so is not admitted until its VPA exists, so that
creating a VPA and its workload together is not a race): a pod whose annotations, or whose
namespace's annotations, carry ``vpa.kvert.io/requires-vpa: "true"`` is refused (403
Forbidden, :class:`VpaRequired`) while no VPA in a mode other than ``Off`` matches it. With
the value ``"recommendation"`` it is refused until that VPA also has a recommendation, for
workloads whose VPA has history (checkpoints, ``--vpa-history-*``): a brand-new workload's VPA
gets its first recommendation only from running pods, so it would wait forever. The pod's
controller retries with its back-off (``FailedCreate`` events), so creation is held until
then. Opt-in: without the annotation nothing changes; the pod's annotation wins over the
namespace's.

Otherwise the admission controller never refuses a pod: any internal error lets it through
unchanged (with the annotation too: an unreadable VPA list does not hold pods).
"""

from __future__ import annotations

import asyncio
import builtins
import logging
from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from math import floor
from typing import Any

import jsonpatch

from kvert.api import pods as podutil
from kvert.api.errors import ApiError, Forbidden, NotFound
from kvert.api.quantity import Quantity, QuantityError
from kvert.api.selectors import LabelSelector, SelectorError
from kvert.client.base import Client
from kvert.client.cache import InformerFactory
from kvert.client.events import EventRecorder
from kvert.clock import Clock
from kvert.registry.admission import CREATE, UPDATE, Attributes
from kvert.vpa.capping import cap_to_container_limit
from kvert.vpa.features import VpaGates
from kvert.vpa.instruments import AdmissionMetrics
from kvert.vpa.recommendation import (
    apply_policy,
    cap_to_container_limit_range,
    container_policy,
    controlled_resources,
    parse_recommendation,
    proportional_limits,
    scaling_disabled,
)
from kvert.vpa.startup_boost import BoostError, annotation_key, boost_container, has_startup_boost
from kvert.vpa.targets import ObjectReader
from kvert.vpa.vpa_validation import review_vpa

log = logging.getLogger(__name__)

RESOURCE_UPDATES_ANNOTATION = "vpaUpdates"
OBSERVED_CONTAINERS_ANNOTATION = "vpaObservedContainers"
MULTIPLE_VPAS_REASON = "MultipleVPAs"
COMPONENT = "vpa-admission-controller"

REQUIRES_VPA_ANNOTATION = "vpa.kvert.io/requires-vpa"

VPAS = "autoscaling.k8s.io/verticalpodautoscalers"
LIMIT_RANGES = "limitranges"
NAMESPACES = "namespaces"
REPLICA_SETS = "apps/replicasets"
DEPLOYMENTS = "apps/deployments"
# kinds whose objects kvert can read, to follow ownerReferences and read target selectors
_RESOURCE_BY_KIND = {"ReplicaSet": REPLICA_SETS, "Deployment": DEPLOYMENTS}
WATCHED = (VPAS, LIMIT_RANGES, REPLICA_SETS, DEPLOYMENTS, NAMESPACES)

REQUESTS_AND_LIMITS = "RequestsAndLimits"
REQUESTS_ONLY = "RequestsOnly"


# -- small helpers --------------------------------------------------------------------------------

def _meta(obj: Mapping | None) -> dict:
    meta = (obj or {}).get("metadata")
    return meta if isinstance(meta, dict) else {}


def _pointer(token: str) -> str:
    """One JSON pointer token (RFC 6901)."""
    return str(token).replace("~", "~0").replace("/", "~1")


def update_mode(vpa: Mapping) -> str:
    return (((vpa.get("spec") or {}).get("updatePolicy") or {}).get("updateMode")) or "Auto"


def stronger_key(vpa: Mapping) -> tuple[str, str]:
    """Upstream ``Stronger``: older ``creationTimestamp`` first, then name. RFC 3339 UTC times
    (``...Z``, as the API server writes them) sort as strings; a missing time sorts last."""
    meta = _meta(vpa)
    return (meta.get("creationTimestamp") or "\uffff", meta.get("name") or "")


def choose_vpa(vpas: Iterable[Mapping], *, boost: bool = False) -> tuple[dict | None, list[dict]]:
    """The controlling VPA among ``vpas`` and all the candidates, strongest first. Mode Off is
    skipped, unless ``boost`` (the CPUStartupBoost gate) and the VPA has a startup boost (upstream's
    matcher: an Off VPA still boosts)."""
    candidates = sorted((dict(v) for v in vpas if isinstance(v, Mapping)
                         and (update_mode(v) != "Off" or (boost and has_startup_boost(v)))),
                        key=stronger_key)
    return (candidates[0] if candidates else None), candidates


def _quantities(rl: Any) -> dict[str, Quantity]:
    out: dict[str, Quantity] = {}
    if isinstance(rl, Mapping):
        for name, value in rl.items():
            try:
                out[name] = Quantity.parse(value)
            except QuantityError:
                continue
    return out


def container_limit_range_item(limit_ranges: Iterable[Mapping]) -> dict | None:
    """Every ``Container`` item of the namespace's LimitRanges as one (upstream
    ``GetContainerLimitRangeItem``): the lowest ``max``, the highest ``min``, the lowest
    ``default`` and ``maxLimitRequestRatio``. None when there is none."""
    merged: dict[str, dict[str, Quantity]] = {}
    found = False
    for lr in limit_ranges or ():
        for item in ((lr or {}).get("spec") or {}).get("limits") or []:
            if not isinstance(item, Mapping) or item.get("type") != "Container":
                continue
            found = True
            for field, pick_lower in (("max", True), ("min", False), ("default", True),
                                      ("maxLimitRequestRatio", True)):
                for r, q in _quantities(item.get(field)).items():
                    current = merged.setdefault(field, {}).get(r)
                    if current is None or (q < current if pick_lower else current < q):
                        merged[field][r] = q
    if not found:
        return None
    return {field: {r: str(q) for r, q in values.items()} for field, values in merged.items()}


def _cap_limits(limits: dict[str, Quantity], requests: Mapping[str, Quantity],
                item: Mapping | None) -> list[str]:
    """Cap new limits to the LimitRange ``max`` and to request x ``maxLimitRequestRatio``."""
    if not item:
        return []
    notes: list[str] = []
    lr_max = _quantities(item.get("max"))
    ratios = _quantities(item.get("maxLimitRequestRatio"))
    for r, limit in list(limits.items()):
        hi = lr_max.get(r)
        if hi is not None and not hi.is_zero() and hi < limit:
            limit = hi
            notes.append(f"{r} limit capped to fit Max in container LimitRange")
        ratio, request = ratios.get(r), requests.get(r)
        if ratio is not None and not ratio.is_zero() and request is not None and not request.is_zero():
            factor = Fraction(ratio.amount)
            if r == "cpu":
                bound = Quantity.from_milli(floor(request.milli_value() * factor), request.format)
            else:
                bound = Quantity.from_int(floor(request.value() * factor), request.format)
            if bound < limit:
                limit = bound
                notes.append(f"{r} limit capped to fit MaxLimitRequestRatio in container LimitRange")
        limits[r] = limit
    return notes


# -- the pure logic -------------------------------------------------------------------------------

def container_resources(container: Mapping, vpa: Mapping, recommendation: Mapping[str, Any],
                        limit_range_item: Mapping | None
                        ) -> tuple[dict[str, Quantity], dict[str, Quantity], list[str]] | None:
    """New (requests, limits, notes) for one container, or None when VPA leaves it alone."""
    name = container.get("name") or ""
    policy = container_policy(vpa, name)
    if scaling_disabled(policy):
        return None
    rec = recommendation.get(name)
    if rec is None:
        return None
    controlled = controlled_resources(policy)
    target = {r: q for r, q in rec.target.items() if r in controlled and not q.is_zero()}
    if not target:
        return None
    notes: list[str] = []
    target, capped = apply_policy(target, policy)
    notes += capped
    target, capped = cap_to_container_limit_range(target, container, limit_range_item)
    notes += capped
    # the request itself may not exceed the LimitRange max either (LimitRanger would refuse it)
    for r, hi in _quantities((limit_range_item or {}).get("max")).items():
        if r in target and not hi.is_zero() and hi < target[r]:
            target[r] = hi
            notes.append(f"{r} capped to fit Max in container LimitRange")
    limits: dict[str, Quantity] = {}
    mode = (policy or {}).get("controlledValues") or REQUESTS_AND_LIMITS
    if mode == REQUESTS_ONLY:
        # limits stay, so a request above one would make the pod invalid (capping.go)
        target, capped = cap_to_container_limit(target, _quantities((container.get("resources") or {}).get("limits")))
        notes += capped
    if mode == REQUESTS_AND_LIMITS:
        resources = container.get("resources") or {}
        limits, limit_notes = proportional_limits(resources.get("limits"), resources.get("requests"), target,
                                                  (limit_range_item or {}).get("default"))
        notes += limit_notes
        notes += _cap_limits(limits, target, limit_range_item)
    return target, limits, notes


def _resource_order(resources: Mapping[str, Quantity]) -> list[str]:
    return sorted(resources, key=lambda r: ({"cpu": 0, "memory": 1}.get(r, 2), r))


def mutate_pod(pod: Mapping, vpas: Iterable[Mapping], limit_ranges: Iterable[Mapping] = (), *,
               gates: VpaGates | None = None, max_allowed_cpu_boost: Quantity | None = None
               ) -> tuple[list[dict], dict[str, str], dict | None, list[str]]:
    """(JSONPatch operations, annotations added, chosen VPA or None, warnings) for a new pod.

    ``vpas`` are the VPAs that match the pod (see :class:`VpaMatcher`); ``limit_ranges`` the
    LimitRange objects of its namespace. An empty patch means the pod passes unchanged. With
    the CPUStartupBoost gate, a VPA's startup boost raises each container's CPU
    (:mod:`kvert.vpa.startup_boost`, capped by ``max_allowed_cpu_boost``), also for a VPA in
    mode Off or without a recommendation; :class:`~kvert.vpa.startup_boost.BoostError` for a
    boost that cannot be applied.
    """
    boost = (gates or VpaGates()).cpu_startup_boost
    chosen, candidates = choose_vpa(vpas, boost=boost)
    warnings: list[str] = []
    if chosen is None:
        return [], {}, None, warnings
    if len(candidates) > 1:
        warnings.append(ambiguity_message(pod, candidates))
    boost = boost and has_startup_boost(chosen)
    # mode Off applies no recommendation, only the boost (upstream's resource_updates.go)
    recommendation = {} if update_mode(chosen) == "Off" else \
        parse_recommendation((chosen.get("status") or {}).get("recommendation"))
    if not recommendation and not boost:
        return [], {}, chosen, warnings
    item = container_limit_range_item(limit_ranges)
    containers = ((pod.get("spec") or {}).get("containers")) or []
    ops: list[dict] = []
    updates: list[str] = []
    boosted: dict[str, str] = {}
    for i, container in enumerate(containers):
        if not isinstance(container, Mapping):
            continue
        result = container_resources(container, chosen, recommendation, item) if recommendation else None
        if boost:
            requests, limits, notes = result if result is not None else ({}, {}, [])
            raised = boost_container(container, chosen, requests, limits, max_allowed_cpu_boost)
            if raised is not None:
                requests, limits, original = raised
                result = requests, limits, notes
                boosted[annotation_key(str(container.get("name") or ""))] = original
        if result is None:
            continue
        requests, limits, notes = result
        base = f"/spec/containers/{i}/resources"
        resources = container.get("resources")
        if not isinstance(resources, Mapping):
            ops.append({"op": "add", "path": base, "value": {}})
            resources = {}
        entries = list(notes)
        for field, word, values in (("requests", "request", requests), ("limits", "limit", limits)):
            if not values:
                continue
            if not isinstance(resources.get(field), Mapping):
                ops.append({"op": "add", "path": f"{base}/{field}", "value": {}})
            for r in _resource_order(values):
                ops.append({"op": "add", "path": f"{base}/{field}/{_pointer(r)}", "value": str(values[r])})
                entries.append(f"{r} {word}")
        updates.append(f"container {i}: " + ", ".join(entries))
    if not ops:
        return [], {}, chosen, warnings
    annotations = {
        RESOURCE_UPDATES_ANNOTATION: f"Pod resources updated by {_meta(chosen).get('name', '')}: "
                                     + "; ".join(updates),
        OBSERVED_CONTAINERS_ANNOTATION: ", ".join(str((c or {}).get("name", "")) for c in containers),
        **boosted,
    }
    if not isinstance(_meta(pod).get("annotations"), Mapping):
        ops.append({"op": "add", "path": "/metadata/annotations", "value": {}})
    for key, value in annotations.items():
        ops.append({"op": "add", "path": f"/metadata/annotations/{_pointer(key)}", "value": value})
    return ops, annotations, chosen, warnings


def ambiguity_message(pod: Mapping, candidates: Sequence[Mapping]) -> str:
    names = ", ".join(_meta(v).get("name", "") for v in candidates)
    target = ((candidates[0].get("spec") or {}).get("targetRef")) or {}
    what = f"{target.get('kind')}/{target.get('name')}" if target.get("name") else "the same pods"
    return (f"{len(candidates)} VerticalPodAutoscalers ({names}) match pods of {what}; using "
            f"{_meta(candidates[0]).get('name', '')} (the oldest by creationTimestamp, then by name)")


class VpaRequired(Forbidden):
    """A pod that requires a VPA and has none with a recommendation yet."""


REQUIRE_VPA, REQUIRE_RECOMMENDATION = "true", "recommendation"


def required_vpa(pod: Mapping, namespace: Mapping | None) -> str | None:
    """What the pod waits for: ``"true"`` (its VPA), ``"recommendation"`` (its VPA's
    recommendation) or None. The pod's annotation wins over its namespace's."""
    for obj in (pod, namespace):
        value = str((_meta(obj).get("annotations") or {}).get(REQUIRES_VPA_ANNOTATION, "")).lower()
        if value in (REQUIRE_VPA, REQUIRE_RECOMMENDATION):
            return value
        if value:
            return None
    return None


def missing_vpa_message(pod: Mapping, vpas: Iterable[Mapping], required: str) -> str | None:
    """Why a pod that requires a VPA (``required``: see :func:`required_vpa`) cannot be
    admitted yet, or None when it can."""
    chosen, _ = choose_vpa(vpas)
    what = f"pod {_meta(pod).get('name') or _meta(pod).get('generateName', '')}"
    if chosen is None:
        return (f"{what} requires a VerticalPodAutoscaler ({REQUIRES_VPA_ANNOTATION}) and none in a "
                f"mode other than Off matches it")
    if required == REQUIRE_RECOMMENDATION and \
            not parse_recommendation((chosen.get("status") or {}).get("recommendation")):
        return (f"{what} requires a VerticalPodAutoscaler recommendation ({REQUIRES_VPA_ANNOTATION}) and "
                f"{_meta(chosen).get('name', '')} has none yet")
    return None


def apply_patch(obj: dict, ops: list[dict]) -> None:
    """Apply JSONPatch ``ops`` to ``obj`` in place."""
    if not ops:
        return
    patched = jsonpatch.JsonPatch(ops).apply(obj)
    obj.clear()
    obj.update(patched)


# -- matching -------------------------------------------------------------------------------------

def _controller_ref(obj: Mapping | None) -> dict | None:
    for ref in _meta(obj).get("ownerReferences") or []:
        if isinstance(ref, Mapping) and ref.get("controller"):
            return dict(ref)
    return None


def _selector(raw: Any) -> LabelSelector | None:
    if not isinstance(raw, Mapping):
        return None
    try:
        return LabelSelector.from_dict(raw)
    except SelectorError:
        return None


_TARGET_INDEX = "vpa-target"


def _target_keys(vpa: Mapping) -> list[str]:
    """``namespace/kind/name`` of a VPA's targetRef (``namespace//`` without one)."""
    namespace = _meta(vpa).get("namespace") or "default"
    target = (vpa.get("spec") or {}).get("targetRef")
    if isinstance(target, Mapping) and target.get("name"):
        return [f"{namespace}/{target.get('kind')}/{target.get('name')}"]
    return [f"{namespace}//"]


class VpaMatcher:
    """Which VPAs control a pod, and the LimitRanges of its namespace.

    ``client`` is any :class:`~kvert.client.Client`. Reads go through ``informers`` (an
    :class:`~kvert.client.cache.InformerFactory`, possibly shared with other components)
    when given or once :meth:`start` has made one; else straight through the client on
    every call (fine in process and in tests).
    """

    def __init__(self, client: Client, clock: Clock | None = None, *,
                 informers: InformerFactory | None = None):
        self.client = client
        self.clock = clock
        self.informers = informers
        self._own_informers = False

    async def start(self) -> None:
        """Read from informers from now on (this matcher's own unless it was given some),
        synced for :data:`WATCHED` before returning."""
        if self.informers is None:
            if self.clock is None:
                raise ValueError("a VpaMatcher needs a clock to start informers (they retry on it)")
            self.informers = InformerFactory(self.client, self.clock)
            self._own_informers = True
        for resource in WATCHED:
            await self.informers.synced(resource)

    def stop(self) -> None:
        if self._own_informers and self.informers is not None:
            self.informers.stop()
            self.informers = None
            self._own_informers = False

    async def list(self, resource: str, namespace: str) -> list[dict]:
        reader: ObjectReader = self.informers or self.client
        try:
            return list((await reader.list(resource, namespace=namespace)).get("items") or [])
        except NotFound:
            return []

    async def get(self, resource: str, namespace: str, name: str) -> dict | None:
        reader: ObjectReader = self.informers or self.client
        try:
            return await reader.get(resource, name, namespace)
        except NotFound:
            return None

    async def limit_ranges(self, namespace: str) -> builtins.list[dict[str, Any]]:
        return await self.list(LIMIT_RANGES, namespace)

    async def vpas_for(self, namespace: str, controller: Mapping | None) -> builtins.list[dict[str, Any]]:
        """The namespace's VPAs that may control a pod of ``controller``: those targeting it
        and those with no targetRef (an index lookup with informers, not the whole list)."""
        if self.informers is None or controller is None:
            return await self.list(VPAS, namespace)
        informer = await self.informers.synced(VPAS)
        if not informer.has_index(_TARGET_INDEX):
            informer.add_index(_TARGET_INDEX, _target_keys)
        key = f"{namespace}/{controller.get('kind')}/{controller.get('name')}"
        return informer.by_index(_TARGET_INDEX, key) + informer.by_index(_TARGET_INDEX, f"{namespace}//")

    async def top_controller(self, pod: Mapping, namespace: str) -> dict | None:
        """The top-most controller ownerReference (``{kind, name, ...}``), or None."""
        ref = _controller_ref(pod)
        seen = 0
        while ref is not None and seen < 8:
            seen += 1
            resource = _RESOURCE_BY_KIND.get(str(ref.get("kind")))
            if resource is None:
                return ref
            owner = await self.get(resource, namespace, str(ref.get("name", "")))
            parent = _controller_ref(owner) if owner is not None else None
            if parent is None:
                return ref
            ref = parent
        return ref

    async def _target_selector(self, target: Mapping, namespace: str) -> LabelSelector | None:
        resource = _RESOURCE_BY_KIND.get(str(target.get("kind")))
        if resource is None:
            return None
        obj = await self.get(resource, namespace, str(target.get("name", "")))
        return _selector(((obj or {}).get("spec") or {}).get("selector")) if obj else None

    async def matching_vpas(self, pod: Mapping, namespace: str = "") -> builtins.list[dict[str, Any]]:
        """Every VPA of the pod's namespace that controls it (any mode), strongest first."""
        namespace = namespace or _meta(pod).get("namespace") or "default"
        labels = _meta(pod).get("labels") or {}
        controller = await self.top_controller(pod, namespace)
        out = []
        for vpa in await self.vpas_for(namespace, controller):
            spec = vpa.get("spec") or {}
            target = spec.get("targetRef")
            if isinstance(target, Mapping) and target.get("name"):
                if controller is not None:
                    if (target.get("kind"), target.get("name")) != (controller.get("kind"), controller.get("name")):
                        continue
                    selector = await self._target_selector(target, namespace)
                    if selector is not None and not selector.matches(labels):
                        continue
                else:
                    selector = await self._target_selector(target, namespace)
                    if selector is None or selector.empty or not selector.matches(labels):
                        continue
            else:
                selector = _selector(spec.get("selector"))
                if selector is None or selector.empty or not selector.matches(labels):
                    continue
            out.append(vpa)
        return sorted(out, key=stronger_key)


# -- matcher + logic + events ---------------------------------------------------------------------

class VpaAdmission:
    """What the webhook and the in-process plugin share: find the VPAs of a new pod, compute
    its patch, and record a Warning event on the VPAs when more than one matched; and validate
    VPA objects (:meth:`review_vpa`).

    ``gates`` are the admission controller's feature gates (``--feature-gates``; upstream's
    defaults, all off, when None), ``max_allowed_cpu_boost`` its ``--max-allowed-cpu-boost``
    (None: no cap); with ``metrics`` (and ``clock``) each review is counted and timed under
    upstream's admission metrics."""

    def __init__(self, matcher: VpaMatcher, recorder: EventRecorder | None = None, *,
                 gates: VpaGates | None = None, max_allowed_cpu_boost: Quantity | None = None,
                 metrics: AdmissionMetrics | None = None, clock: Clock | None = None):
        self.matcher = matcher
        self.recorder = recorder
        self.gates = gates or VpaGates()
        self.max_allowed_cpu_boost = max_allowed_cpu_boost
        self.metrics = metrics
        self.clock = clock or matcher.clock
        self._pending: set[asyncio.Task] = set()

    async def review(self, pod: Mapping, namespace: str = "") -> tuple[list[dict], list[str]]:
        """(JSONPatch operations, warnings) for a pod being created; raises
        :class:`VpaRequired` for a pod held until its VPA has a recommendation."""
        if self.metrics is None or self.clock is None:
            return await self._review(pod, namespace)
        with self.metrics.admission(self.clock, "Pod") as status:
            ops, warnings = await self._review(pod, namespace)
            status[0] = "applied" if ops else "skipped"
            self.metrics.admission_pods.labels("true" if ops else "false").inc()
        return ops, warnings

    async def _review(self, pod: Mapping, namespace: str) -> tuple[list[dict], list[str]]:
        namespace = namespace or _meta(pod).get("namespace") or "default"
        vpas = await self.matcher.matching_vpas(pod, namespace)
        required = required_vpa(pod, await self.matcher.get(NAMESPACES, "", namespace))
        if required is not None:
            message = missing_vpa_message(pod, vpas, required)
            if message is not None:
                raise VpaRequired(message)
        if not vpas:
            return [], []
        limit_ranges = await self.matcher.limit_ranges(namespace)
        ops, _, chosen, warnings = mutate_pod(pod, vpas, limit_ranges, gates=self.gates,
                                              max_allowed_cpu_boost=self.max_allowed_cpu_boost)
        if warnings and self.recorder is not None:
            _, candidates = choose_vpa(vpas, boost=self.gates.cpu_startup_boost)
            self._record(self.recorder, candidates, warnings[0])
        return ops, warnings

    def review_vpa(self, vpa: Mapping, old: Mapping | None = None) -> tuple[list[dict], list[str]]:
        """A VPA create (``old`` None) or update, as upstream's admission controller validates
        it (:mod:`kvert.vpa.vpa_validation`): (JSONPatch operations, warnings); raises
        :class:`~kvert.api.errors.Invalid` (422) for one it refuses."""
        if self.metrics is None or self.clock is None:
            return review_vpa(vpa, old, self.gates)
        with self.metrics.admission(self.clock, "VPA") as status:
            ops, warnings = review_vpa(vpa, old, self.gates)
            status[0] = "applied" if ops else "skipped"
        return ops, warnings

    def _record(self, recorder: EventRecorder, vpas: list[dict], message: str) -> None:
        # In a task: the pod create in flight may hold the store; an event must not wait for it.
        async def record() -> None:
            for vpa in vpas:
                obj = dict(vpa)
                obj.setdefault("apiVersion", "autoscaling.k8s.io/v1")
                obj.setdefault("kind", "VerticalPodAutoscaler")
                await recorder.record(obj, "Warning", MULTIPLE_VPAS_REASON, message)
        task = asyncio.ensure_future(record())
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    async def drain(self) -> None:
        """Wait for events being recorded (tests, shutdown)."""
        if self._pending:
            await asyncio.gather(*list(self._pending), return_exceptions=True)


class VpaAdmissionPlugin:
    """The admission controller as an in-process AdmissionChain plugin (simulator).

    ``source`` is a :class:`VpaAdmission`, a :class:`VpaMatcher`, or a client (then ``clock``
    names the event clock; events are recorded only when one is given). Pod CREATE gets its
    VPA's recommendation; errors let the pod through unchanged (failurePolicy Ignore). VPA
    CREATE and UPDATE are validated as upstream's admission controller does
    (:meth:`VpaAdmission.review_vpa`: a refused VPA is a 422). ``gates``,
    ``max_allowed_cpu_boost`` and ``metrics`` as :class:`VpaAdmission` takes them (used when
    ``source`` is not a ready VpaAdmission)."""

    name = "VerticalPodAutoscaler"
    resources = frozenset({"pods", VPAS})

    def __init__(self, source: VpaAdmission | VpaMatcher | Client, clock: Clock | None = None, *,
                 recorder: EventRecorder | None = None, gates: VpaGates | None = None,
                 max_allowed_cpu_boost: Quantity | None = None, metrics: AdmissionMetrics | None = None):
        if isinstance(source, VpaAdmission):
            self.admission = source
        else:
            matcher = source if isinstance(source, VpaMatcher) else VpaMatcher(source, clock)
            if recorder is None and clock is not None:
                recorder = EventRecorder(matcher.client, clock, COMPONENT)
            self.admission = VpaAdmission(matcher, recorder, gates=gates, max_allowed_cpu_boost=max_allowed_cpu_boost,
                                          metrics=metrics, clock=clock)

    async def admit(self, attrs: Attributes) -> None:
        if attrs.resource == VPAS and not attrs.subresource and attrs.operation in (CREATE, UPDATE):
            self._admit_vpa(attrs)
            return
        if attrs.operation != CREATE or attrs.resource != "pods" or attrs.subresource:
            return
        if not isinstance(attrs.object, dict):
            return
        try:
            ops, warnings = await self.admission.review(attrs.object, attrs.namespace)
            if ops:
                patched = jsonpatch.JsonPatch(ops).apply(attrs.object)
                attrs.object.clear()
                attrs.object.update(patched)
                status = attrs.object.get("status")
                if isinstance(status, dict) and "qosClass" in status:   # requests changed
                    status["qosClass"] = podutil.compute_qos_class(attrs.object)
        except VpaRequired:
            raise
        except (ApiError, OSError, ValueError, KeyError, TypeError, IndexError,
                jsonpatch.JsonPatchException, jsonpatch.JsonPointerException) as e:
            log.warning("vpa admission of pod %s/%s failed, admitted unchanged: %s",
                        attrs.namespace, attrs.name, e)
            return
        if warnings:
            attrs.options.setdefault("warnings", []).extend(warnings)

    def _admit_vpa(self, attrs: Attributes) -> None:
        """Upstream's VPA handler disallows incorrect objects: its Invalid goes to the client."""
        if not isinstance(attrs.object, dict):
            return
        old = attrs.old_object if attrs.operation == UPDATE and isinstance(attrs.old_object, Mapping) else None
        ops, warnings = self.admission.review_vpa(attrs.object, old)
        if ops:
            patched = jsonpatch.JsonPatch(ops).apply(attrs.object)
            attrs.object.clear()
            attrs.object.update(patched)
        if warnings:
            attrs.options.setdefault("warnings", []).extend(warnings)


__all__ = [
    "COMPONENT", "MULTIPLE_VPAS_REASON", "OBSERVED_CONTAINERS_ANNOTATION", "REQUIRES_VPA_ANNOTATION",
    "RESOURCE_UPDATES_ANNOTATION", "VpaAdmission", "VpaAdmissionPlugin", "VpaMatcher", "VpaRequired",
    "apply_patch", "BoostError", "choose_vpa", "container_limit_range_item", "container_resources",
    "missing_vpa_message", "mutate_pod", "required_vpa", "stronger_key", "update_mode",
]
