"""CPU startup boost (upstream VPA 1.7-1.8, AEP-7862, behind the ``CPUStartupBoost`` gate).

A VPA's ``spec.startupBoost.cpu`` (every container) or a container policy's
``startupBoost.cpu`` (that container; it wins over the spec's) is ``{type: Factor, factor: N}``
or ``{type: Quantity, quantity: Q}``, with ``durationSeconds`` (default 0).

* Admission (:func:`boost_container`): a new pod's CPU request becomes the boosted value of its
  base -- the recommended request, or the container's own request when there is none -- that
  is ``base x factor`` or ``base + quantity``, capped by ``--max-allowed-cpu-boost``. With
  ``controlledValues: RequestsAndLimits`` (the default) the CPU limit keeps its ratio to the
  request (no limit, no change); with ``RequestsOnly`` the request stays 1m below the limit
  (``capStartupBoostToContainerLimit``: the pod keeps its QoS class). A container whose policy
  has ``mode: Off`` is not boosted. The pod is marked ``vpaCpuStartupBoost/<container>`` with
  the container's original cpu/memory requests and limits as JSON
  (``{"requests":{...},"limits":{...}}``).
* Updater (:func:`expired_boosts`): once the pod is ``Ready``, a container's boost expires when
  more than ``durationSeconds`` have passed since the Ready condition's transition; with no
  duration (0) it expires as soon as the pod is Ready -- upstream 1.8's reactive unboost. The
  updater then resizes the container in place back to the recommendation (or, without one, to
  the original resources in the annotation) and removes the annotation.

An unknown ``type`` or a factor below 1 is a :class:`BoostError` (upstream's messages); the
admission controller then admits the pod unchanged, as upstream's does.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from kvert.api.conditions import find_condition
from kvert.api.meta import parse_time
from kvert.api.quantity import Quantity
from kvert.vpa.capping import REQUESTS_ONLY, controlled_values
from kvert.vpa.recommendation import container_policy, proportional_limits, resource_quantities, scaling_disabled

ANNOTATION_PREFIX = "vpaCpuStartupBoost/"
IN_PLACE_UPDATED_ANNOTATION = "vpaInPlaceUpdated"
FACTOR, QUANTITY = "Factor", "Quantity"
ONE_MILLI = Quantity.from_milli(1)


class BoostError(ValueError):
    """A startup boost the admission controller cannot apply."""


def annotation_key(container_name: str) -> str:
    return ANNOTATION_PREFIX + container_name


def has_startup_boost(vpa: Mapping | None) -> bool:
    """``HasStartupBoost``: the spec or any container policy names a startupBoost."""
    spec = (vpa or {}).get("spec") or {}
    if spec.get("startupBoost") is not None:
        return True
    policies = (spec.get("resourcePolicy") or {}).get("containerPolicies") or []
    return any(isinstance(p, Mapping) and p.get("startupBoost") is not None for p in policies)


def container_boost(vpa: Mapping | None, container_name: str) -> Mapping | None:
    """The ``startupBoost`` that applies to a container: its policy's, else the spec's."""
    policy = container_policy(vpa, container_name)
    if policy and policy.get("startupBoost") is not None:
        boost = policy["startupBoost"]
    else:
        boost = ((vpa or {}).get("spec") or {}).get("startupBoost")
    return boost if isinstance(boost, Mapping) else None


def boost_duration(vpa: Mapping | None, container_name: str) -> int:
    """``getContainerCPUStartupBoostDuration``: the container policy's ``durationSeconds`` when
    it sets one, else the spec's, else 0."""
    duration = 0
    spec_cpu = ((((vpa or {}).get("spec") or {}).get("startupBoost") or {}).get("cpu")) or {}
    if isinstance(spec_cpu, Mapping) and spec_cpu.get("durationSeconds") is not None:
        duration = int(spec_cpu["durationSeconds"])
    policy_cpu = (((container_policy(vpa, container_name) or {}).get("startupBoost") or {}).get("cpu")) or {}
    if isinstance(policy_cpu, Mapping) and policy_cpu.get("durationSeconds") is not None:
        duration = int(policy_cpu["durationSeconds"])
    return duration


def boosted_cpu(base: Quantity, boost: Mapping, max_allowed: Quantity | None = None) -> Quantity:
    """``calculateBoostedCPU``: ``base`` raised by the boost's ``cpu`` entry, capped by
    ``max_allowed`` (None or zero: no cap)."""
    cpu = boost.get("cpu")
    if not isinstance(cpu, Mapping):
        return base
    kind = cpu.get("type") or FACTOR
    if kind == FACTOR:
        if cpu.get("factor") is None:
            raise BoostError("startupBoost.CPU.Factor is required when Type is Factor or not specified")
        factor = int(cpu["factor"])
        if factor < 1:
            raise BoostError("boost factor must be >= 1")
        boosted = Quantity.from_milli(base.milli_value() * factor)
    elif kind == QUANTITY:
        if cpu.get("quantity") is None:
            raise BoostError("startupBoost.CPU.Quantity is required when Type is Quantity")
        boosted = Quantity.from_milli(base.milli_value() + Quantity.parse(cpu["quantity"]).milli_value())
    else:
        raise BoostError(f"unsupported startup boost type: {kind}")
    if max_allowed is not None and not max_allowed.is_zero() and boosted > max_allowed:
        return max_allowed
    return boosted


def original_resources(container: Mapping) -> str:
    """``GetOriginalResourcesAnnotationValue``: the container's cpu and memory requests and
    limits, as Go marshals ``OriginalResources`` (compact, keys sorted, canonical quantities)."""
    resources = container.get("resources") or {}
    out: dict[str, dict[str, str]] = {}
    for field in ("requests", "limits"):
        values = resource_quantities(resources.get(field))
        out[field] = {r: str(values[r]) for r in ("cpu", "memory") if r in values}
    return json.dumps(out, separators=(",", ":"))


def original_from_annotation(pod: Mapping, container_name: str) -> dict[str, dict[str, Quantity]] | None:
    """The original resources a boost annotation holds (None: no annotation); ValueError for
    an annotation that is not upstream's JSON."""
    value = (((pod.get("metadata") or {}).get("annotations")) or {}).get(annotation_key(container_name))
    if value is None:
        return None
    parsed = json.loads(value) if value else {}
    if not isinstance(parsed, Mapping):
        raise ValueError(f"{annotation_key(container_name)}: not an object")
    return {field: resource_quantities(parsed.get(field)) for field in ("requests", "limits")}


def boost_container(container: Mapping, vpa: Mapping, requests: Mapping[str, Quantity],
                    limits: Mapping[str, Quantity], max_allowed: Quantity | None = None
                    ) -> tuple[dict[str, Quantity], dict[str, Quantity], str] | None:
    """``applyCPUStartupBoost`` for one container of a new pod: (requests, limits, the boost
    annotation's value) with the CPU boosted, from the ``requests``/``limits`` admission
    computed from the recommendation (empty when it has none); None when no boost applies."""
    name = container.get("name") or ""
    if scaling_disabled(container_policy(vpa, name)):
        return None
    boost = container_boost(vpa, name)
    if boost is None:
        return None
    own = container.get("resources") or {}
    own_requests = resource_quantities(own.get("requests"))
    own_limits = resource_quantities(own.get("limits"))
    base = requests.get("cpu")
    if base is None or base.is_zero():
        base = own_requests.get("cpu", Quantity(0))
    boosted = boosted_cpu(base, boost, max_allowed)
    new_requests = dict(requests)
    new_limits = dict(limits)
    new_requests["cpu"] = boosted
    if controlled_values(vpa, name) == REQUESTS_ONLY:
        limit = own_limits.get("cpu")
        if limit is not None and boosted.milli_value() > limit.milli_value():
            new_requests["cpu"] = limit - ONE_MILLI if limit > ONE_MILLI else limit
    else:
        scaled, _ = proportional_limits(own.get("limits"), own.get("requests"), {"cpu": boosted})
        if "cpu" in scaled:
            new_limits["cpu"] = scaled["cpu"]
    return new_requests, new_limits, original_resources(container)


def boost_in_progress(pod: Mapping) -> bool:
    """``PodHasCPUBoostInProgressAnnotation``."""
    return any(k.startswith(ANNOTATION_PREFIX) for k in ((pod.get("metadata") or {}).get("annotations") or {}))


def boosted_containers(pod: Mapping) -> list[str]:
    return [k[len(ANNOTATION_PREFIX):] for k in ((pod.get("metadata") or {}).get("annotations") or {})
            if k.startswith(ANNOTATION_PREFIX)]


def ready_since(pod: Mapping) -> float | None:
    """When the pod last became Ready (None: it is not Ready); a Ready condition without a
    readable time counts as long ago, as Go's zero time does."""
    ready = find_condition(pod.get("status"), "Ready")
    if ready is None or ready.get("status") != "True":
        return None
    try:
        return parse_time(str(ready.get("lastTransitionTime") or ""))
    except ValueError:
        return float("-inf")


def expired_boosts(pod: Mapping, vpa: Mapping, now: float) -> list[str]:
    """``GetExpiredStartupCPUBoostAnnotations``: the boost annotations whose container passed
    its boost duration since the pod became Ready (a duration of 0: as soon as it is)."""
    since = ready_since(pod)
    if since is None:
        return []
    out = []
    for name in boosted_containers(pod):
        duration = boost_duration(vpa, name)
        if duration == 0 or now - since > duration:
            out.append(annotation_key(name))
    return out


def boost_expiry(pod: Mapping, vpa: Mapping) -> float | None:
    """The earliest time one of the pod's boosts will have expired (None: not Ready, or none)."""
    since = ready_since(pod)
    if since is None:
        return None
    times = [since + boost_duration(vpa, name) for name in boosted_containers(pod)]
    return min(times) if times else None


__all__ = ["ANNOTATION_PREFIX", "BoostError", "FACTOR", "IN_PLACE_UPDATED_ANNOTATION", "QUANTITY",
           "annotation_key", "boost_container", "boost_duration", "boost_expiry", "boost_in_progress",
           "boosted_containers", "boosted_cpu", "container_boost", "expired_boosts", "has_startup_boost",
           "original_from_annotation", "original_resources", "ready_since"]
