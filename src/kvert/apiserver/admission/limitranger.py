"""LimitRanger (``plugin/pkg/admission/limitranger``): LimitRange defaults and constraints.

For every LimitRange in the pod's namespace, in turn:

- mutating: each container (and init container) lacking a limit or request for a
  resource gets the ``Container`` item's ``default`` / ``defaultRequest`` (the pod is
  annotated ``kubernetes.io/limit-ranger: LimitRanger plugin set: cpu, memory request for
  container app; ...``);
- validating: ``min``, ``max`` and ``maxLimitRequestRatio`` of ``Container`` items are
  checked against each container, those of ``Pod`` items against the pod's aggregated
  requests and limits (sidecar-aware, pod-level resources honoured, no overhead).
  A violation is 403 Forbidden with Kubernetes' messages, e.g. ``pods "web" is
  forbidden: maximum cpu usage per Container is 1, but limit is 2``; several are
  bracketed and comma-separated.

Pods are checked on creation and on in-place resize (the ``resize`` subresource), as
Kubernetes does since KEP-1287; plain pod updates cannot change resources, so they are
skipped, as are pods already being deleted. On resize the defaults still apply but the
annotation is not rewritten (the resize strategy would drop a metadata change).

kvert registers the pod's QoS class before admission runs, so when defaults change a new
pod's resources the plugin recomputes ``status.qosClass`` (Kubernetes computes it after
mutating admission).
"""

from __future__ import annotations

from typing import Any

from kvert.api import pods
from kvert.api.quantity import Quantity, QuantityError
from kvert.api.resources import ResourceList
from kvert.registry.admission import CREATE, UPDATE, Attributes
from kvert.store.base import Store

from .common import PODS, aggregate_message, forbidden, is_pod, pod_spec, render_quantity, show_quantity

LIMIT_RANGES = "limitranges"
ANNOTATION = "kubernetes.io/limit-ranger"
CONTAINER = "Container"
POD = "Pod"


class LimitRanger:
    name = "LimitRanger"
    resources = frozenset({PODS})

    def __init__(self, store: Store):
        self.store = store

    def _applies(self, attrs: Attributes) -> bool:
        if not is_pod(attrs) or not isinstance(attrs.object, dict):
            return False
        if attrs.subresource == "resize":
            if attrs.operation != UPDATE:
                return False
        elif attrs.subresource or attrs.operation != CREATE:
            return False
        old_meta = (attrs.old_object or {}).get("metadata") or {}
        return not old_meta.get("deletionTimestamp")

    def _limit_ranges(self, attrs: Attributes) -> list[dict]:
        return self.store.list(LIMIT_RANGES, namespace=attrs.namespace).items

    async def admit(self, attrs: Attributes) -> None:
        pod = attrs.object
        if pod is None or not self._applies(attrs):
            return
        changed = False
        for lr in self._limit_ranges(attrs):
            changed |= apply_defaults(pod, lr, annotate=not attrs.subresource)
        if changed and attrs.operation == CREATE and "qosClass" in (pod.get("status") or {}):
            pod["status"]["qosClass"] = pods.compute_qos_class(pod)

    async def validate(self, attrs: Attributes) -> None:
        pod = attrs.object
        if pod is None or not self._applies(attrs):
            return
        for lr in self._limit_ranges(attrs):
            problems = check_pod(pod, lr)
            if problems:
                raise forbidden(attrs, aggregate_message(problems))


# -- defaults -------------------------------------------------------------------------------------

def _items(lr: dict) -> list[dict]:
    limits = ((lr.get("spec") or {}).get("limits")) or []
    return [item for item in limits if isinstance(item, dict)]


def apply_defaults(pod: dict, lr: dict, *, annotate: bool = True) -> bool:
    """Merge one LimitRange's Container defaults into the pod; True if anything was set."""
    default_limits: dict[str, Any] = {}
    default_requests: dict[str, Any] = {}
    for item in _items(lr):
        if item.get("type") == CONTAINER:
            default_requests.update(item.get("defaultRequest") or {})
            default_limits.update(item.get("default") or {})
    if not default_limits and not default_requests:
        return False
    notes: list[str] = []
    spec = pod_spec(pod)
    for key, label in (("containers", "container"), ("initContainers", "init container")):
        for container in spec.get(key) or []:
            if isinstance(container, dict):
                notes.extend(_merge_container(container, default_requests, default_limits, label))
    if not notes:
        return False
    if annotate:
        meta = pod.setdefault("metadata", {})
        annotations = meta.get("annotations")
        if not isinstance(annotations, dict):
            annotations = meta["annotations"] = {}
        annotations[ANNOTATION] = "LimitRanger plugin set: " + "; ".join(notes)
    return True


def _merge_container(container: dict, default_requests: dict, default_limits: dict,
                     label: str) -> list[str]:
    resources = container.get("resources")
    if not isinstance(resources, dict):
        resources = container["resources"] = {}
    limits = resources.get("limits")
    if not isinstance(limits, dict):
        limits = {}
    requests = resources.get("requests")
    if not isinstance(requests, dict):
        requests = {}
    set_limits = sorted(k for k in default_limits if k not in limits)
    set_requests = sorted(k for k in default_requests if k not in requests)
    for k in set_limits:
        limits[k] = default_limits[k]
    for k in set_requests:
        requests[k] = default_requests[k]
    if limits:
        resources["limits"] = limits
    if requests:
        resources["requests"] = requests
    name = container.get("name", "")
    notes = []
    if set_requests:
        notes.append(f"{', '.join(set_requests)} request for {label} {name}")
    if set_limits:
        notes.append(f"{', '.join(set_limits)} limit for {label} {name}")
    return notes


# -- constraints ----------------------------------------------------------------------------------

class _Value:
    """A request or limit: the milli-value compared and the text shown."""

    __slots__ = ("milli", "text")

    def __init__(self, milli: int, text: str):
        self.milli, self.text = milli, text


def _from_quantities(rl: Any) -> dict[str, _Value]:
    result: dict[str, _Value] = {}
    if not isinstance(rl, dict):
        return result
    for name, raw in rl.items():
        try:
            q = Quantity.parse(raw)
        except (QuantityError, TypeError, ValueError):
            continue  # validation reports malformed quantities
        result[name] = _Value(q.milli_value(), str(q))
    return result


def _from_ints(rl: ResourceList) -> dict[str, _Value]:
    # kvert's resource lists hold millicores for cpu and base units otherwise.
    return {name: _Value(v if name == "cpu" else v * 1000, render_quantity(name, v))
            for name, v in rl.items()}


def check_pod(pod: dict, lr: dict) -> list[str]:
    """Every violation of one LimitRange by the pod, in Kubernetes' words."""
    problems: list[str] = []
    spec = pod_spec(pod)
    for item in _items(lr):
        ltype = item.get("type")
        if ltype == CONTAINER:
            for key in ("containers", "initContainers"):
                for c in spec.get(key) or []:
                    if not isinstance(c, dict):
                        continue
                    res = c.get("resources") or {}
                    problems.extend(_check(CONTAINER, item, _from_quantities(res.get("requests")),
                                           _from_quantities(res.get("limits"))))
        elif ltype == POD:
            try:
                requests = pods.pod_requests(pod, include_overhead=False)
                limits = pods.pod_limits(pod, include_overhead=False)
            except QuantityError:
                continue
            problems.extend(_check(POD, item, _from_ints(requests), _from_ints(limits)))
    return problems


def _check(ltype: str, item: dict, requests: dict[str, _Value],
           limits: dict[str, _Value]) -> list[str]:
    problems = []
    for name, enforced in (item.get("min") or {}).items():
        problems.extend(_min(ltype, name, enforced, requests.get(name), limits.get(name)))
    for name, enforced in (item.get("max") or {}).items():
        problems.extend(_max(ltype, name, enforced, requests.get(name), limits.get(name)))
    for name, enforced in (item.get("maxLimitRequestRatio") or {}).items():
        problems.extend(_ratio(ltype, name, enforced, requests.get(name), limits.get(name)))
    return problems


def _enforced(raw: Any) -> tuple[int, str] | None:
    try:
        q = Quantity.parse(raw)
    except (QuantityError, TypeError, ValueError):
        return None
    return q.milli_value(), show_quantity(raw)


def _min(ltype: str, name: str, raw: Any, req: _Value | None, lim: _Value | None) -> list[str]:
    enforced = _enforced(raw)
    if enforced is None:
        return []
    value, shown = enforced
    if req is None:
        return [f"minimum {name} usage per {ltype} is {shown}.  No request is specified"]
    if req.milli < value:
        return [f"minimum {name} usage per {ltype} is {shown}, but request is {req.text}"]
    if lim is not None and lim.milli < value:
        return [f"minimum {name} usage per {ltype} is {shown}, but limit is {lim.text}"]
    return []


def _max(ltype: str, name: str, raw: Any, req: _Value | None, lim: _Value | None) -> list[str]:
    enforced = _enforced(raw)
    if enforced is None:
        return []
    value, shown = enforced
    if lim is None:
        return [f"maximum {name} usage per {ltype} is {shown}.  No limit is specified"]
    if lim.milli > value:
        return [f"maximum {name} usage per {ltype} is {shown}, but limit is {lim.text}"]
    if req is not None and req.milli > value:
        return [f"maximum {name} usage per {ltype} is {shown}, but request is {req.text}"]
    return []


def _ratio(ltype: str, name: str, raw: Any, req: _Value | None, lim: _Value | None) -> list[str]:
    enforced = _enforced(raw)
    if enforced is None:
        return []
    value, shown = enforced
    if req is None or req.milli == 0:
        return [f"{name} max limit to request ratio per {ltype} is {shown}, but no request is "
                "specified or request is 0"]
    if lim is None or lim.milli == 0:
        return [f"{name} max limit to request ratio per {ltype} is {shown}, but no limit is "
                "specified or limit is 0"]
    observed = lim.milli / req.milli
    if observed * 1000 > value:
        return [f"{name} max limit to request ratio per {ltype} is {shown}, but provided ratio "
                f"is {observed:f}"]
    return []
