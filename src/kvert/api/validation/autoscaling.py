"""autoscaling/v2 HorizontalPodAutoscaler (``pkg/apis/autoscaling/validation``).

* ``minReplicas`` >= 1, ``maxReplicas`` > 0 and >= ``minReplicas``;
* ``scaleTargetRef`` needs ``kind`` and ``name`` (path segment names); only then are the
  metrics checked (a type among the five, its source and no other, Resource and
  ContainerResource targets with a name and either a utilization or an average value),
  and only then the behavior (stabilization 0..3600 s, selectPolicy Max/Min/Disabled, at
  least one Pods/Percent policy with a positive value and a period of 1..1800 s).
"""

from __future__ import annotations

from typing import Any

from kvert.api.quantity import Quantity, QuantityError
from kvert.api.types import Obj

from .common import (
    Causes,
    child,
    dict_field,
    forbidden,
    get_dict,
    get_int,
    index,
    invalid,
    list_field,
    not_supported,
    required,
    type_error,
)
from .meta import validate_object_meta, validate_object_meta_update

METRIC_TYPES = ("ContainerResource", "External", "Object", "Pods", "Resource")
_SOURCE_FIELD = {"ContainerResource": "containerResource", "External": "external",
                 "Object": "object", "Pods": "pods", "Resource": "resource"}
TARGET_TYPES = ("Utilization", "Value", "AverageValue")
SELECT_POLICIES = ("Disabled", "Max", "Min")
POLICY_TYPES = ("Percent", "Pods")
MAX_STABILIZATION_WINDOW = 3600
MAX_PERIOD_SECONDS = 1800


def _path_segment(value: str) -> list[str]:
    """``IsValidPathSegmentName``."""
    if value in (".", ".."):
        return [f"may not be '{value}'"]
    return [f"may not contain '{c}'" for c in ("/", "%") if c in value]


def _target_ref(ref: Any, path: str) -> Causes:
    if not isinstance(ref, dict):
        return [type_error(path, ref, "object")] if ref is not None else \
            [required(child(path, "kind")), required(child(path, "name"))]
    errs: Causes = []
    for field in ("kind", "name"):
        value = ref.get(field)
        if not value:
            errs.append(required(child(path, field)))
        elif isinstance(value, str):
            errs.extend(invalid(child(path, field), value, m) for m in _path_segment(value))
    return errs


def _positive_quantity(target: Obj, field: str, path: str, errs: Causes) -> None:
    value = target.get(field)
    if value is None:
        return
    try:
        q = Quantity.parse(value)
    except QuantityError as e:
        errs.append(invalid(child(path, field), value, e.reason))
        return
    if q.sign() != 1:
        errs.append(invalid(child(path, field), str(q), "must be positive"))


def _metric_target(target: Any, path: str) -> Causes:
    target = target if isinstance(target, dict) else {}
    errs: Causes = []
    ttype = target.get("type")
    if not ttype:
        errs.append(required(child(path, "type"), "must specify a metric target type"))
    if ttype not in TARGET_TYPES:
        errs.append(invalid(child(path, "type"), ttype or "",
                            "must be either Utilization, Value, or AverageValue"))
    _positive_quantity(target, "value", path, errs)
    _positive_quantity(target, "averageValue", path, errs)
    utilization = get_int(target, "averageUtilization", path, errs, bits=32)
    if utilization is not None and utilization < 1:
        errs.append(invalid(child(path, "averageUtilization"), utilization, "must be greater than 0"))
    return errs


def _resource_source(source: Obj, path: str, container: bool) -> Causes:
    errs: Causes = []
    if not source.get("name"):
        errs.append(required(child(path, "name"), "must specify a resource name"))
    if container and not source.get("container"):
        errs.append(required(child(path, "container"), "must specify a container"))
    target = dict_field(source, "target")
    target_path = child(path, "target")
    errs.extend(_metric_target(target, target_path))
    has_util, has_value = target.get("averageUtilization") is not None, target.get("averageValue") is not None
    if not has_util and not has_value:
        errs.append(required(child(target_path, "averageUtilization"),
                             "must set either a target raw value or a target utilization"))
    elif has_util and has_value:
        errs.append(forbidden(child(target_path, "averageValue"),
                              "may not set both a target raw value and a target utilization"))
    return errs


def _metric(spec: Any, path: str) -> Causes:
    if not isinstance(spec, dict):
        return [type_error(path, spec, "object")]
    errs: Causes = []
    mtype = spec.get("type")
    if not mtype:
        errs.append(required(child(path, "type"), "must specify a metric source type"))
    if mtype not in METRIC_TYPES:
        errs.append(not_supported(child(path, "type"), mtype or "", METRIC_TYPES))
    present = [f for f in _SOURCE_FIELD.values() if spec.get(f) is not None]
    expected = _SOURCE_FIELD.get(mtype or "")
    if expected and expected not in present:
        errs.append(required(child(path, expected), "must populate information for the given metric source"))
    if len(present) != 1:
        errs.extend(forbidden(child(path, f), "must populate the given metric source only")
                    for f in present if f != expected)
    for field, container in (("resource", False), ("containerResource", True)):
        if isinstance(spec.get(field), dict):
            errs.extend(_resource_source(spec[field], child(path, field), container))
    return errs


def _scaling_rules(rules: Any, path: str) -> Causes:
    if rules is None:
        return []
    if not isinstance(rules, dict):
        return [type_error(path, rules, "object")]
    errs: Causes = []
    window = get_int(rules, "stabilizationWindowSeconds", path, errs, bits=32)
    if window is not None and window < 0:
        errs.append(invalid(child(path, "stabilizationWindowSeconds"), window,
                            "must be greater than or equal to zero"))
    elif window is not None and window > MAX_STABILIZATION_WINDOW:
        errs.append(invalid(child(path, "stabilizationWindowSeconds"), window,
                            f"must be less than or equal to {MAX_STABILIZATION_WINDOW}"))
    select = rules.get("selectPolicy")
    if select is not None and select not in SELECT_POLICIES:
        errs.append(not_supported(child(path, "selectPolicy"), select, SELECT_POLICIES))
    policies = list_field(rules, "policies")
    if not policies:
        errs.append(required(child(path, "policies"), "must specify at least one Policy"))
    for i, policy in enumerate(policies):
        p_path = index(child(path, "policies"), i)
        policy = policy if isinstance(policy, dict) else {}
        if policy.get("type") not in POLICY_TYPES:
            errs.append(not_supported(child(p_path, "type"), policy.get("type") or "", POLICY_TYPES))
        value = get_int(policy, "value", p_path, errs, bits=32) or 0
        if value <= 0:
            errs.append(invalid(child(p_path, "value"), value, "must be greater than zero"))
        period = get_int(policy, "periodSeconds", p_path, errs, bits=32) or 0
        if period <= 0:
            errs.append(invalid(child(p_path, "periodSeconds"), period, "must be greater than zero"))
        elif period > MAX_PERIOD_SECONDS:
            errs.append(invalid(child(p_path, "periodSeconds"), period,
                                f"must be less than or equal to {MAX_PERIOD_SECONDS}"))
    return errs


def _validate_spec(spec: Obj, path: str) -> Causes:
    errs: Causes = []
    min_replicas = get_int(spec, "minReplicas", path, errs, bits=32)
    max_replicas = get_int(spec, "maxReplicas", path, errs, bits=32) or 0
    if min_replicas is not None and min_replicas < 1:
        errs.append(invalid(child(path, "minReplicas"), min_replicas, "must be greater than or equal to 1"))
    if max_replicas < 1:
        errs.append(invalid(child(path, "maxReplicas"), max_replicas, "must be greater than 0"))
    if min_replicas is not None and max_replicas < min_replicas:
        errs.append(invalid(child(path, "maxReplicas"), max_replicas,
                            "must be greater than or equal to `minReplicas`"))
    ref_errs = _target_ref(spec.get("scaleTargetRef"), child(path, "scaleTargetRef"))
    if ref_errs:
        return errs + ref_errs
    metrics = list_field(spec, "metrics")
    metric_errs = [c for i, m in enumerate(metrics) for c in _metric(m, index(child(path, "metrics"), i))]
    if metric_errs:
        return errs + metric_errs
    behavior = get_dict(spec, "behavior", path, errs)
    for field in ("scaleUp", "scaleDown"):
        errs.extend(_scaling_rules(behavior.get(field), child(child(path, "behavior"), field)))
    return errs


def validate_hpa(hpa: Obj) -> Causes:
    errs = validate_object_meta(hpa, namespaced=True)
    errs.extend(_validate_spec(get_dict(hpa, "spec", "", errs), "spec"))
    return errs


def validate_hpa_update(new: Obj, old: Obj) -> Causes:
    errs = validate_object_meta_update(new, old)
    errs.extend(_validate_spec(get_dict(new, "spec", "", errs), "spec"))
    return errs


def validate_hpa_status_update(new: Obj, old: Obj) -> Causes:
    """``validateHorizontalPodAutoscalerStatus``: replica counts >= 0."""
    errs = validate_object_meta_update(new, old)
    status = get_dict(new, "status", "", errs)
    for field in ("currentReplicas", "desiredReplicas"):
        value = get_int(status, field, "status", errs, bits=32)
        if value is not None and value < 0:
            errs.append(invalid(child("status", field), value, "must be greater than or equal to 0"))
    return errs
