"""ResourceQuota (``staging/.../admission/plugin/resourcequota`` with the evaluators of
``pkg/quota/v1/evaluator/core``) and the usage recalculation the quota controller does.

Admission (validating, last in the chain):

- pods are charged on creation and on in-place resize (``pods/resize``: the charge is the
  increase only); every other namespaced object is charged its object count
  (``count/<resource>[.<group>]``, and the legacy names ``configmaps``, ``services``,
  ``resourcequotas``, ``services.loadbalancers``, ``services.nodeports``) on creation;
- a pod's usage, as Kubernetes counts it: ``count/pods`` always; unless the pod is
  terminal (or stuck terminating past its grace period) also ``pods``, ``cpu`` /
  ``requests.cpu``, ``limits.cpu``, ``memory`` / ``requests.memory``, ``limits.memory``,
  ``ephemeral-storage`` likewise, ``hugepages-*`` / ``requests.hugepages-*`` and
  ``requests.<extended resource>``. Requests include ``spec.overhead`` (seed 001 section
  3: quota counts the containers' requests plus the overhead) and, for a resized pod,
  the larger of the spec and what the kubelet allocated or actuated (KEP-1287);
- a quota applies when it limits at least one of those resources and every scope
  matches: ``Terminating`` / ``NotTerminating`` (``activeDeadlineSeconds``),
  ``BestEffort`` / ``NotBestEffort`` (QoS class), ``PriorityClass`` (``scopeSelector`` with
  In / NotIn / Exists / DoesNotExist on ``priorityClassName``) and
  ``CrossNamespacePodAffinity``; scoped quotas never match objects other than pods;
- when a matching quota limits cpu or memory, every container must state it, else 403
  ``failed quota: NAME: must specify limits.cpu for: app; ...``;
- ``used + requested`` must stay within ``hard`` for every quota, else 403 ``exceeded
  quota: NAME, requested: requests.cpu=500m, used: requests.cpu=1, limited:
  requests.cpu=1``;
- on success each affected quota's ``status.used`` is raised through the store (retrying
  on conflicts) before the object is stored, as kube-apiserver does; a dry run checks
  but charges nothing.

Usage is never lowered by admission. :func:`recalculate_quota_usage` recomputes
``status.hard`` (= ``spec.hard``) and ``status.used`` from the live objects, which is the
ResourceQuota controller's job in Kubernetes. kvert runs it:

- from admission, for a quota whose status is missing or stale (new quota, or ``spec.hard``
  changed), before checking it, so the check never fails with "status unknown";
- right after the registry stores a change that can lower usage or that a quota must
  reflect at once: a delete in a namespace with quotas, a pod status turning Succeeded or
  Failed, a ResourceQuota created or updated (scheduled from the admission call with
  ``loop.call_soon``, so it runs once the registry has written the change);
- and the API server should call it periodically (Kubernetes resyncs every 5 minutes),
  which also releases the usage of pods that became terminal, were resized down, or
  whose create failed after admission charged them.

Not modelled: ``limitedResources`` admission configuration, PVC and storage-class
resources, matchConditions of scope selectors other than the ones listed.
"""

from __future__ import annotations

import asyncio
from typing import Any

from kvert.api import pods as podutil
from kvert.api.errors import Conflict, InternalError, NotFound
from kvert.api.kinds import by_key
from kvert.api.meta import parse_time
from kvert.api.quantity import Quantity, QuantityError, to_int
from kvert.api.resources import ResourceList, add, is_extended_resource, subtract
from kvert.api.selectors import DOES_NOT_EXIST, EXISTS, IN, NOT_IN, SelectorError, make_requirement
from kvert.clock import Clock, WallClock
from kvert.registry.admission import CREATE, DELETE, UPDATE, Attributes
from kvert.store.base import Store

from .common import forbidden, render_quantity

RESOURCE_QUOTAS = "resourcequotas"
PODS = "pods"
COUNT_PODS = "count/pods"

# pods' compute resources tracked by quota (podResources in the pod evaluator)
_POD_RESOURCES = frozenset({
    COUNT_PODS, "pods", "cpu", "memory", "ephemeral-storage", "requests.cpu", "requests.memory",
    "requests.ephemeral-storage", "limits.cpu", "limits.memory", "limits.ephemeral-storage"})
_POD_RESOURCE_PREFIXES = ("hugepages-", "requests.hugepages-")
# quota names whose use obliges every container to state the resource (validationSet)
_VALIDATION_SET = ("cpu", "memory", "requests.cpu", "requests.memory", "limits.cpu", "limits.memory")
# object-count quota names predating count/<resource>
_LEGACY_COUNTS = {"configmaps": "configmaps", "services": "services",
                  "resourcequotas": "resourcequotas", "secrets": "secrets",
                  "persistentvolumeclaims": "persistentvolumeclaims",
                  "replicationcontrollers": "replicationcontrollers"}
_RETRIES = 8


# -- usage ---------------------------------------------------------------------------------------

def _compute_usage(requests: ResourceList, limits: ResourceList) -> ResourceList:
    """``podComputeUsageHelper``: the quota names a set of requests and limits charges."""
    result: ResourceList = {"pods": 1}
    for base in ("cpu", "memory", "ephemeral-storage"):
        if base in requests:
            result[base] = requests[base]
            result[f"requests.{base}"] = requests[base]
        if base in limits:
            result[f"limits.{base}"] = limits[base]
    for name, value in requests.items():
        if name.startswith("hugepages-"):
            result[name] = value
            result[f"requests.{name}"] = value
        elif is_extended_resource(name):
            result[f"requests.{name}"] = value
    return result


def pod_counts_for_compute(pod: dict, now: float) -> bool:
    """``QuotaV1Pod``: terminal pods, and pods stuck terminating past their grace period,
    no longer use compute quota."""
    if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
        return False
    meta = pod.get("metadata") or {}
    deletion, grace = meta.get("deletionTimestamp"), meta.get("deletionGracePeriodSeconds")
    if deletion and grace is not None:
        try:
            if now > parse_time(deletion) + float(grace):
                return False
        except (TypeError, ValueError):
            pass
    return True


def pod_usage(pod: dict, now: float) -> ResourceList:
    """What one pod charges (``PodUsageFunc``), cpu in millicores, the rest in base units."""
    result: ResourceList = {COUNT_PODS: 1}
    if not pod_counts_for_compute(pod, now):
        return result
    requests = podutil.pod_requests(pod, use_status_resources=True)
    limits = podutil.pod_limits(pod, use_status_resources=True)
    return add(result, _compute_usage(requests, limits))


def _pod_matching_resources(names: list[str]) -> list[str]:
    return [n for n in names if n in _POD_RESOURCES or n.startswith(_POD_RESOURCE_PREFIXES)
            or (n.startswith("requests.") and is_extended_resource(n[len("requests."):]))]


def count_name(resource: str) -> str:
    """``count/pods``, ``count/deployments.apps``."""
    group, _, plural = resource.rpartition("/")
    return f"count/{plural}.{group}" if group else f"count/{plural}"


def _object_matching_resources(resource: str, names: list[str]) -> list[str]:
    wanted = {count_name(resource)}
    if resource in _LEGACY_COUNTS:
        wanted.add(_LEGACY_COUNTS[resource])
    if resource == "services":
        wanted.update({"services.loadbalancers", "services.nodeports"})
    return [n for n in names if n in wanted]


def object_usage(resource: str, obj: dict) -> ResourceList:
    result: ResourceList = {count_name(resource): 1}
    if resource in _LEGACY_COUNTS:
        result[_LEGACY_COUNTS[resource]] = 1
    if resource == "services":
        spec = obj.get("spec") or {}
        kind = spec.get("type") or "ClusterIP"
        result["services.loadbalancers"] = 1 if kind == "LoadBalancer" else 0
        ports = len(spec.get("ports") or []) if kind in ("NodePort", "LoadBalancer") else 0
        result["services.nodeports"] = ports
    return result


# -- scopes --------------------------------------------------------------------------------------

def quota_scope_selectors(quota: dict) -> list[dict]:
    """``getScopeSelectorsFromQuota``: ``spec.scopes`` (as Exists) plus ``scopeSelector``."""
    spec = quota.get("spec") or {}
    result = [{"scopeName": s, "operator": "Exists"} for s in spec.get("scopes") or []]
    result.extend(e for e in ((spec.get("scopeSelector") or {}).get("matchExpressions") or [])
                  if isinstance(e, dict))
    return result


def _is_terminating(pod: dict) -> bool:
    deadline = (pod.get("spec") or {}).get("activeDeadlineSeconds")
    return isinstance(deadline, int) and deadline >= 0


def _uses_cross_namespace_affinity(pod: dict) -> bool:
    affinity = (pod.get("spec") or {}).get("affinity") or {}
    for kind in ("podAffinity", "podAntiAffinity"):
        block = affinity.get(kind) or {}
        terms = list(block.get("requiredDuringSchedulingIgnoredDuringExecution") or [])
        terms += [w.get("podAffinityTerm") or {}
                  for w in block.get("preferredDuringSchedulingIgnoredDuringExecution") or []]
        for term in terms:
            if term.get("namespaceSelector") is not None or term.get("namespaces"):
                return True
    return False


def pod_matches_scope(selector: dict, pod: dict) -> bool:
    """``podMatchesScopeFunc``."""
    scope = selector.get("scopeName")
    if scope == "Terminating":
        return _is_terminating(pod)
    if scope == "NotTerminating":
        return not _is_terminating(pod)
    if scope == "BestEffort":
        return podutil.qos_class(pod) == podutil.BEST_EFFORT
    if scope == "NotBestEffort":
        return podutil.qos_class(pod) != podutil.BEST_EFFORT
    if scope == "CrossNamespacePodAffinity":
        return _uses_cross_namespace_affinity(pod)
    if scope == "PriorityClass":
        class_name = (pod.get("spec") or {}).get("priorityClassName") or ""
        operator = selector.get("operator")
        if operator == "Exists":
            return bool(class_name)
        try:
            req = make_requirement("PriorityClass", _OPERATORS.get(operator or "", ""),
                                   selector.get("values") or [])
        except (SelectorError, KeyError, TypeError, ValueError) as e:
            raise InternalError(f"Internal error occurred: {e}") from e
        return req.matches({"PriorityClass": class_name})
    return False


_OPERATORS = {"In": IN, "NotIn": NOT_IN, "Exists": EXISTS, "DoesNotExist": DOES_NOT_EXIST}


def _parse_list(rl: Any) -> ResourceList:
    result: ResourceList = {}
    for name, value in (rl or {}).items() if isinstance(rl, dict) else ():
        try:
            result[name] = to_int(name, value)
        except (QuantityError, TypeError, ValueError):
            continue
    return result


class _Evaluator:
    """What quota knows about one kind of object."""

    def __init__(self, resource: str):
        self.resource = resource

    @property
    def is_pods(self) -> bool:
        return self.resource == PODS

    def matching_resources(self, names: list[str]) -> list[str]:
        if self.is_pods:
            return _pod_matching_resources(names)
        return _object_matching_resources(self.resource, names)

    def matches(self, quota: dict, obj: dict, hard_names: list[str]) -> bool:
        """``generic.Matches``: the quota limits something this kind uses and every scope
        matches (no object but a pod matches a scoped quota)."""
        if not self.matching_resources(hard_names):
            return False
        for selector in quota_scope_selectors(quota):
            if not self.is_pods or not pod_matches_scope(selector, obj):
                return False
        return True

    def usage(self, obj: dict, now: float) -> ResourceList:
        return pod_usage(obj, now) if self.is_pods else object_usage(self.resource, obj)


# -- recalculation (the quota controller's job) ---------------------------------------------------

def _known_counted_resources(names: list[str]) -> list[str]:
    """Resource keys (``pods``, ``apps/deployments``) a quota's names count objects of."""
    keys = set()
    for name in names:
        if name in _POD_RESOURCES or name.startswith(_POD_RESOURCE_PREFIXES) or (
                name.startswith("requests.") and is_extended_resource(name[len("requests."):])):
            keys.add(PODS)
        elif name in _LEGACY_COUNTS:
            keys.add(_LEGACY_COUNTS[name])
        elif name in ("services.loadbalancers", "services.nodeports"):
            keys.add("services")
        elif name.startswith("count/"):
            rest = name[len("count/"):]
            plural, _, group = rest.partition(".")
            keys.add(f"{group}/{plural}" if group else plural)
    result = []
    for key in sorted(keys):
        try:
            if by_key(key).namespaced:
                result.append(key)
        except KeyError:
            continue
    return result


def compute_quota_status(store: Store, quota: dict[str, Any], now: float) -> dict[str, Any]:
    """``status`` for a quota: ``hard`` = ``spec.hard``, ``used`` from the live objects."""
    hard = dict(((quota.get("spec") or {}).get("hard")) or {})
    names = list(hard)
    namespace = (quota.get("metadata") or {}).get("namespace", "")
    used: ResourceList = {}
    for key in _known_counted_resources(names):
        evaluator = _Evaluator(key)
        tracked = evaluator.matching_resources(names)
        if not tracked:
            continue
        total: ResourceList = dict.fromkeys(tracked, 0)
        scoped = bool(quota_scope_selectors(quota))
        if scoped and not evaluator.is_pods:
            used.update(total)
            continue
        for obj in store.list(key, namespace=namespace).items:
            if not evaluator.matches(quota, obj, names):
                continue
            try:
                usage = evaluator.usage(obj, now)
            except QuantityError:
                continue
            total = add(total, {k: v for k, v in usage.items() if k in total})
        used.update(total)
    return {"hard": hard, "used": {name: render_quantity(name, v) for name, v in used.items()}}


def recalculate_quota_usage(store: Store, namespace: str | None = None,
                            now: float | None = None, clock: Clock | None = None) -> list[dict[str, Any]]:
    """Recompute ``status`` of every ResourceQuota in ``namespace`` (all namespaces when
    None) from the live objects and store those that changed; returns the quotas updated.

    This is the ResourceQuota controller's sync: call it periodically and after deletes.
    """
    if now is None:
        now = clock.now() if clock is not None else _wall_now()
    updated = []
    for quota in store.list(RESOURCE_QUOTAS, namespace=namespace).items:
        for _ in range(_RETRIES):
            status = compute_quota_status(store, quota, now)
            if quota.get("status") == status:
                break
            quota["status"] = status
            try:
                updated.append(store.update(RESOURCE_QUOTAS, quota))
                break
            except Conflict:
                try:
                    quota = store.get(RESOURCE_QUOTAS, quota["metadata"].get("namespace", ""),
                                      quota["metadata"]["name"])
                except NotFound:
                    break
            except NotFound:
                break
    return updated


def _wall_now() -> float:
    return WallClock().now()


def _status_in_sync(quota: dict, tracked: list[str]) -> bool:
    """``hasUsageStats`` plus status.hard == spec.hard (what the controller keeps)."""
    status = quota.get("status") or {}
    hard = (quota.get("spec") or {}).get("hard") or {}
    if _parse_list(status.get("hard")) != _parse_list(hard):
        return False
    used = status.get("used") or {}
    return all(name in used for name in tracked)


# -- the admission plugin ----------------------------------------------------------------------

def _pretty(rl: dict[str, str]) -> str:
    return ",".join(f"{k}={rl[k]}" for k in sorted(rl))


class ResourceQuota:
    name = "ResourceQuota"

    def __init__(self, store: Store, clock: Clock | None = None):
        self.store = store
        self.clock = clock

    def _now(self) -> float:
        return self.clock.now() if self.clock is not None else _wall_now()

    def _handles(self, attrs: Attributes) -> bool:
        if not attrs.namespace or not isinstance(attrs.object, dict):
            return False
        try:
            if not by_key(attrs.resource).namespaced:
                return False
        except KeyError:
            return False
        if attrs.resource == PODS:
            return ((attrs.operation == CREATE and not attrs.subresource)
                    or (attrs.operation == UPDATE and attrs.subresource == "resize"))
        return attrs.operation == CREATE and not attrs.subresource

    async def validate(self, attrs: Attributes) -> None:
        if attrs.operation == DELETE or _became_terminal(attrs):
            self._recalculate_soon(attrs)
            return
        if attrs.resource == RESOURCE_QUOTAS and not attrs.subresource:
            # a new or changed quota gets its status computed once it is stored
            self._recalculate_soon(attrs, always=True)
        if not self._handles(attrs):
            return
        for _ in range(_RETRIES):
            try:
                self._check(attrs)
                return
            except Conflict:
                continue
        raise InternalError("Internal error occurred: resource quota: too many conflicting "
                            "quota status updates; try again")

    def _check(self, attrs: Attributes) -> None:
        quotas = self.store.list(RESOURCE_QUOTAS, namespace=attrs.namespace).items
        if not quotas:
            return
        evaluator = _Evaluator(attrs.resource)
        obj = attrs.object
        if obj is None:   # _handles admits objects only
            return
        now = self._now()
        interesting: list[tuple[dict, list[str]]] = []
        for quota in quotas:
            hard_names = list(((quota.get("spec") or {}).get("hard")) or {})
            if not evaluator.matches(quota, obj, hard_names):
                continue
            restricted = evaluator.matching_resources(hard_names)
            if evaluator.is_pods:
                missing = _missing_constraints(obj, restricted)
                if missing:
                    raise forbidden(attrs, f"failed quota: {quota['metadata']['name']}: {missing}")
            if not _status_in_sync(quota, restricted):
                quota["status"] = compute_quota_status(self.store, quota, now)
                quota = self.store.update(RESOURCE_QUOTAS, quota)
            interesting.append((quota, restricted))
        if not interesting:
            return
        try:
            delta = evaluator.usage(obj, now)
            negative = sorted(k for k, v in delta.items() if v < 0)
            if negative:
                raise forbidden(attrs, "quota usage is negative for resource(s): "
                                       f"{', '.join(negative)}")
            if attrs.operation == UPDATE and isinstance(attrs.old_object, dict) and \
                    (attrs.old_object.get("metadata") or {}).get("resourceVersion"):
                # charge the increase only (SubtractWithNonNegativeResult)
                previous = evaluator.usage(attrs.old_object, now)
                delta = {k: max(0, v) for k, v in subtract(delta, previous).items()}
        except QuantityError:
            return  # validation has already refused malformed quantities
        delta = {k: v for k, v in delta.items() if v != 0}
        if not delta:
            return
        updates = []
        for quota, _ in interesting:
            status = quota.get("status") or {}
            hard = _parse_list(status.get("hard"))
            used = _parse_list(status.get("used"))
            requested = {k: v for k, v in delta.items() if k in hard}
            if not requested:
                continue
            exceeded = sorted(k for k, v in requested.items() if used.get(k, 0) + v > hard[k])
            if exceeded:
                raise forbidden(attrs, "exceeded quota: {}, requested: {}, used: {}, limited: {}".format(
                    quota["metadata"]["name"],
                    _pretty({k: render_quantity(k, requested[k]) for k in exceeded}),
                    _pretty({k: _shown(status.get("used"), k, used) for k in exceeded}),
                    _pretty({k: _shown(status.get("hard"), k, hard) for k in exceeded})))
            new_used = dict(status.get("used") or {})
            for k, v in requested.items():
                new_used[k] = render_quantity(k, used.get(k, 0) + v)
            updates.append((quota, new_used))
        if attrs.dry_run:
            return
        for quota, new_used in updates:
            quota.setdefault("status", {})["used"] = new_used
            self.store.update(RESOURCE_QUOTAS, quota)  # Conflict -> evaluate again

    def _recalculate_soon(self, attrs: Attributes, always: bool = False) -> None:
        """Replenishment: once the registry has written the delete (or the terminal pod
        status, or the quota itself), recompute the namespace's quotas."""
        if attrs.dry_run or not attrs.namespace:
            return
        try:
            if not always and not self.store.list(RESOURCE_QUOTAS, namespace=attrs.namespace,
                                                  limit=1).items:
                return
            loop = asyncio.get_running_loop()
        except (RuntimeError, NotFound):
            return
        store, namespace, now = self.store, attrs.namespace, self._now

        def recalc() -> None:
            try:
                recalculate_quota_usage(store, namespace, now=now())
            except Exception:  # noqa: BLE001 - a failed resync is retried by the periodic one
                pass

        loop.call_soon(recalc)


def _became_terminal(attrs: Attributes) -> bool:
    """A pod status update that moves the pod to Succeeded or Failed."""
    if attrs.resource != PODS or attrs.subresource != "status" or attrs.operation != UPDATE:
        return False
    terminal = ("Succeeded", "Failed")
    new_phase = ((attrs.object or {}).get("status") or {}).get("phase")
    old_phase = ((attrs.old_object or {}).get("status") or {}).get("phase")
    return new_phase in terminal and old_phase not in terminal


def _shown(raw: Any, name: str, parsed: ResourceList) -> str:
    """A stored quantity as Kubernetes prints it (its own text when canonical)."""
    if isinstance(raw, dict) and name in raw:
        try:
            return str(Quantity.parse(raw[name]))
        except (QuantityError, TypeError, ValueError):
            pass
    return render_quantity(name, parsed.get(name, 0))


def _missing_constraints(pod: dict, restricted: list[str]) -> str:
    """``podEvaluator.Constraints``: containers that do not state a cpu/memory resource a
    quota limits; empty when all do."""
    required = sorted(set(restricted) & set(_VALIDATION_SET))
    if not required:
        return ""
    missing: dict[str, set[str]] = {}
    spec = pod.get("spec") or {}
    for key in ("containers", "initContainers"):
        for c in spec.get(key) or []:
            if not isinstance(c, dict):
                continue
            try:
                stated = _compute_usage(podutil.container_requests(c), podutil.container_limits(c))
            except QuantityError:
                continue
            for name in required:
                if name not in stated:
                    missing.setdefault(name, set()).add(c.get("name", ""))
    if not missing:
        return ""
    parts = [f"{name} for: {','.join(sorted(missing[name]))}" for name in sorted(missing)]
    return "must specify " + "; ".join(parts)
