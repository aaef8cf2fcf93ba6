"""VerticalPodAutoscaler and VerticalPodAutoscalerCheckpoint (autoscaling.k8s.io/v1).

The rules are the union of the v1 CRD schema (``deploy/vpa-v1-crd-gen.yaml``: ``spec`` and
``spec.targetRef`` with ``kind`` and ``name`` required, enums, recommendation ``target``
required) and the VPA admission controller's ``validateVPA`` (``updateMode`` required when
``updatePolicy`` is given, ``minReplicas`` > 0, ``maxAllowed`` >= ``minAllowed``, cpu in whole
millicores and memory in whole bytes, at most one recommender, ``controlledValues`` not
``RequestsAndLimits`` for a container whose ``mode`` is Off).

Choices:

* Seed 002/003 describe the pre-v1 shape with ``spec.selector`` (seed 003's hamster example
  uses ``poc.autoscaling.k8s.io/v1alpha1``). autoscaling.k8s.io/v1 has no ``selector``: a VPA
  without ``targetRef`` is rejected with the VPA's own message ("If you're using v1beta1
  version of the API, please migrate to v1").
* ``updateMode`` accepts today's values Off, Initial, Recreate, InPlaceOrRecreate, InPlace and
  the deprecated Auto (equivalent to Recreate).
* kvert additionally rejects duplicate ``containerName`` entries in ``containerPolicies`` (the
  field is merged by ``containerName``), ``controlledResources`` other than cpu/memory, and a
  recommendation without ``containerName``.
* ``startupBoost.cpu`` (spec and container policies) with validation.go's messages (type
  required, ``factor`` >= 1, ``quantity`` in whole millicores), and the CRD's two CEL rules
  (``factor`` only with type Factor, ``quantity`` only with type Quantity) worded as
  kube-apiserver reports a failed rule (``Invalid value: "object": <message>``), since kvert
  does not evaluate CEL. What needs a feature gate (startupBoost, the InPlace mode, the per-VPA
  fields) is the VPA admission controller's to refuse (``kvert.vpa.vpa_validation``), as
  upstream's: the API server accepts them.
* ``lowerBound <= target <= upperBound`` is not enforced (neither the CRD nor the VPA does;
  the recommender caps ``target`` by the policy independently of the bounds).
"""

from __future__ import annotations

from typing import Any

from kvert.api.quantity import Quantity
from kvert.api.types import Obj

from .common import (
    Causes,
    child,
    dicts,
    duplicate,
    forbidden,
    get_dict,
    get_int,
    get_list,
    get_number,
    get_str,
    invalid,
    key,
    not_supported,
    required,
    too_many,
    type_error,
    validate_time,
)
from .meta import validate_object_meta, validate_object_meta_update
from .resourcelist import parse as parse_quantity
from .resourcelist import parse_resource_list

UPDATE_MODES = ("Off", "Initial", "Recreate", "InPlaceOrRecreate", "InPlace", "Auto")
SCALING_MODES = ("Auto", "Off")
CONTROLLED_VALUES = ("RequestsAndLimits", "RequestsOnly")
CONTROLLED_RESOURCES = ("cpu", "memory")
EVICTION_CHANGE_REQUIREMENTS = ("TargetHigherThanRequests", "TargetLowerThanRequests")
STARTUP_BOOST_TYPES = ("Factor", "Quantity")
DEFAULT_CONTAINER_POLICY = "*"
TARGET_REF_MSG = "If you're using v1beta1 version of the API, please migrate to v1"


def _resource_list(value: Any, path: str, errs: Causes) -> dict[str, Quantity]:
    """A VPA resource list: any names; cpu in whole millicores, memory in whole bytes."""
    parsed = parse_resource_list(value, path, errs, name_check=None)
    for name, q in parsed.items():
        if name == "cpu" and q.nanos % 10**6:
            errs.append(invalid(key(path, name), str(q), "must be a whole number of milli CPUs"))
        elif name == "memory" and q.nanos % 10**9:
            errs.append(invalid(key(path, name), str(q), "must be a whole number of bytes"))
    return parsed


def validate_vpa(vpa: Obj) -> Causes:
    return validate_object_meta(vpa, namespaced=True) + _validate_vpa_body(vpa)


def validate_vpa_update(new: Obj, old: Obj) -> Causes:
    return validate_object_meta_update(new, old) + _validate_vpa_body(new)


def _validate_vpa_body(vpa: Obj) -> Causes:
    """``spec`` (required) and ``status``: the same rules on create and update."""
    if vpa.get("spec") is None:
        return [required("spec")]
    errs: Causes = []
    errs.extend(_validate_spec(get_dict(vpa, "spec", "", errs)))
    errs.extend(_validate_status(get_dict(vpa, "status", "", errs)))
    return errs


def validate_vpa_status_update(new: Obj, old: Obj) -> Causes:
    errs = validate_object_meta_update(new, old)
    errs.extend(_validate_status(get_dict(new, "status", "", errs)))
    return errs


def _validate_spec(spec: Obj) -> Causes:
    errs: Causes = []
    target = spec.get("targetRef")
    if target is None:
        errs.append(required("spec.targetRef", TARGET_REF_MSG))
    elif not isinstance(target, dict):
        errs.append(type_error("spec.targetRef", target, "object"))
    else:
        get_str(target, "apiVersion", "spec.targetRef", errs)
        for field in ("kind", "name"):
            if not get_str(target, field, "spec.targetRef", errs):
                errs.append(required(f"spec.targetRef.{field}"))

    if spec.get("updatePolicy") is not None:
        errs.extend(_validate_update_policy(get_dict(spec, "updatePolicy", "spec", errs),
                                            "spec.updatePolicy"))
    if spec.get("resourcePolicy") is not None:
        policy = get_dict(spec, "resourcePolicy", "spec", errs)
        errs.extend(_validate_container_policies(
            get_list(policy, "containerPolicies", "spec.resourcePolicy", errs),
            "spec.resourcePolicy.containerPolicies"))
    recommenders = get_list(spec, "recommenders", "spec", errs)
    if len(recommenders) > 1:
        errs.append(too_many("spec.recommenders", len(recommenders), 1))
    for _, p, rec in dicts(recommenders, "spec.recommenders", errs):
        if not get_str(rec, "name", p, errs):
            errs.append(required(child(p, "name")))
    if spec.get("startupBoost") is not None:
        errs.extend(_validate_startup_boost(spec.get("startupBoost"), "spec.startupBoost"))
    return errs


def _validate_update_policy(policy: Obj, path: str) -> Causes:
    errs: Causes = []
    mode = policy.get("updateMode")
    if mode is None:
        errs.append(required(child(path, "updateMode"), "updateMode is required if UpdatePolicy is used"))
    elif mode not in UPDATE_MODES:
        errs.append(not_supported(child(path, "updateMode"), mode, UPDATE_MODES))
    min_replicas = get_int(policy, "minReplicas", path, errs, bits=32)
    if min_replicas is not None and min_replicas <= 0:
        errs.append(invalid(child(path, "minReplicas"), min_replicas, "minReplicas has to be positive"))
    evict_after = get_int(policy, "evictAfterOOMSeconds", path, errs, bits=32)
    if evict_after is not None and evict_after < 1:
        errs.append(invalid(child(path, "evictAfterOOMSeconds"), evict_after,
                            "must be greater than or equal to 1"))
    req_path = child(path, "evictionRequirements")
    for _, p, req in dicts(get_list(policy, "evictionRequirements", path, errs), req_path, errs):
        resources = get_list(req, "resources", p, errs)
        if not resources:
            errs.append(required(child(p, "resources")))
        for i, r in enumerate(resources):
            if r not in CONTROLLED_RESOURCES:
                errs.append(not_supported(f"{p}.resources[{i}]", r, CONTROLLED_RESOURCES))
        change = req.get("changeRequirement")
        if change is None:
            errs.append(required(child(p, "changeRequirement")))
        elif change not in EVICTION_CHANGE_REQUIREMENTS:
            errs.append(not_supported(child(p, "changeRequirement"), change,
                                      EVICTION_CHANGE_REQUIREMENTS))
    return errs


def _validate_container_policies(policies: list[Any], path: str) -> Causes:
    errs: Causes = []
    seen: set[str] = set()
    for _, p, policy in dicts(policies, path, errs):
        name = get_str(policy, "containerName", p, errs)
        if not name:
            errs.append(required(child(p, "containerName")))
        elif name in seen:
            errs.append(duplicate(child(p, "containerName"), name))
        seen.add(name)
        mode = policy.get("mode")
        if mode is not None and mode not in SCALING_MODES:
            errs.append(not_supported(child(p, "mode"), mode, SCALING_MODES))
        mins = _resource_list(policy.get("minAllowed"), child(p, "minAllowed"), errs)
        maxs = _resource_list(policy.get("maxAllowed"), child(p, "maxAllowed"), errs)
        for resource, lo in mins.items():
            hi = maxs.get(resource)
            if hi is not None and hi < lo:
                errs.append(invalid(key(child(p, "maxAllowed"), resource), str(hi),
                                    f'max resource for {resource} is lower than min of "{lo}"'))
        controlled = policy.get("controlledResources")
        if controlled is not None:
            if not isinstance(controlled, list):
                errs.append(type_error(child(p, "controlledResources"), controlled, "array"))
            else:
                for i, r in enumerate(controlled):
                    rp = f"{child(p, 'controlledResources')}[{i}]"
                    if r not in CONTROLLED_RESOURCES:
                        errs.append(not_supported(rp, r, CONTROLLED_RESOURCES))
                    elif r in controlled[:i]:
                        errs.append(duplicate(rp, r))
        values = policy.get("controlledValues")
        if values is not None and values not in CONTROLLED_VALUES:
            errs.append(not_supported(child(p, "controlledValues"), values, CONTROLLED_VALUES))
        if mode == "Off" and values == "RequestsAndLimits":
            errs.append(forbidden(child(p, "controlledValues"),
                                  "controlledValues shouldn't be specified if container scaling "
                                  "mode is off"))
        if "oomBumpUpRatio" in policy:
            ratio = parse_quantity(policy["oomBumpUpRatio"], child(p, "oomBumpUpRatio"), errs)
            if ratio is not None and ratio.milli_value() < 1000:
                # upstream shows the ratio as the float64 it compares (MilliValue / 1000)
                shown = ratio.milli_value() / 1000.0
                errs.append(invalid(child(p, "oomBumpUpRatio"), int(shown) if shown.is_integer() else shown,
                                    "must be greater than or equal to 1.0"))
        if "oomMinBumpUp" in policy:
            bump = parse_quantity(policy["oomMinBumpUp"], child(p, "oomMinBumpUp"), errs)
            if bump is not None and bump.value() < 0:
                errs.append(invalid(child(p, "oomMinBumpUp"), bump.value(), "must be greater than or equal to 0"))
        for field in ("targetCPUPercentile", "targetMemoryPercentile"):
            if field in policy:
                q = _resource_list({field: policy[field]}, p, errs).get(field)
                if q is not None and not 0 < q.nanos <= 10**9:
                    errs.append(invalid(child(p, field), str(q), "must be in (0, 1]"))
        for field in ("memoryAggregationIntervalCount", "memoryAggregationIntervalSeconds"):
            value = get_int(policy, field, p, errs)
            if value is not None and value < 1:
                errs.append(invalid(child(p, field), value, "must be greater than or equal to 1"))
        if policy.get("startupBoost") is not None:
            errs.extend(_validate_startup_boost(policy.get("startupBoost"), child(p, "startupBoost")))
    return errs


def _validate_startup_boost(boost: Any, path: str) -> Causes:
    if not isinstance(boost, dict):
        return [type_error(path, boost, "object")]
    cpu = boost.get("cpu")
    if cpu is None:
        return []
    cpu_path = child(path, "cpu")
    if not isinstance(cpu, dict):
        return [type_error(cpu_path, cpu, "object")]
    errs: Causes = []
    get_int(cpu, "durationSeconds", cpu_path, errs, bits=32)
    btype = cpu.get("type")
    if not btype:
        return errs + [required(child(cpu_path, "type"), "must be either Factor or Quantity")]
    if btype == "Factor":
        factor = get_int(cpu, "factor", cpu_path, errs, bits=32)
        if "factor" not in cpu:
            errs.append(required(child(cpu_path, "factor"), "required when type is Factor"))
        elif factor is not None and factor < 1:
            errs.append(invalid(child(cpu_path, "factor"), factor, "must be >= 1 for type Factor"))
        if "quantity" in cpu:
            # the CRD's CEL rule, as kube-apiserver reports one (the object, then the rule's message)
            errs.append(invalid(cpu_path, "object", "quantity is required when type is Quantity and "
                                                    "forbidden otherwise"))
    elif btype == "Quantity":
        if "quantity" not in cpu:
            errs.append(required(child(cpu_path, "quantity"), "required when type is Quantity"))
        else:
            q = parse_quantity(cpu["quantity"], child(cpu_path, "quantity"), errs)
            if q is not None and q.nanos % 10**6:
                errs.append(invalid(child(cpu_path, "quantity"), str(q), "must be a whole number of milli CPUs"))
        if "factor" in cpu:
            errs.append(invalid(cpu_path, "object", "factor is required when type is Factor and "
                                                    "forbidden otherwise"))
    else:
        errs.append(not_supported(child(cpu_path, "type"), btype, STARTUP_BOOST_TYPES))
    return errs


def _validate_status(status: Obj) -> Causes:
    errs: Causes = []
    recommendation = get_dict(status, "recommendation", "status", errs)
    rec_path = "status.recommendation.containerRecommendations"
    items = get_list(recommendation, "containerRecommendations", "status.recommendation", errs)
    for _, p, rec in dicts(items, rec_path, errs):
        if not get_str(rec, "containerName", p, errs):
            errs.append(required(child(p, "containerName")))
        if rec.get("target") is None:
            errs.append(required(child(p, "target")))
        for field in ("target", "lowerBound", "upperBound", "uncappedTarget"):
            if field in rec:
                parse_resource_list(rec.get(field), child(p, field), errs, name_check=None)
    for _, p, cond in dicts(get_list(status, "conditions", "status", errs), "status.conditions", errs):
        for field in ("type", "status"):
            if not get_str(cond, field, p, errs):
                errs.append(required(child(p, field)))
        validate_time(cond, "lastTransitionTime", p, errs)
    for field in ("observedGeneration",):
        value = get_int(status, field, "status", errs)
        if value is not None and value < 0:
            errs.append(invalid(f"status.{field}", value, "must be greater than or equal to 0"))
    return errs


# -- checkpoints ----------------------------------------------------------------------------------

def validate_vpa_checkpoint(cp: Obj) -> Causes:
    errs = validate_object_meta(cp, namespaced=True)
    errs.extend(_validate_checkpoint_body(cp))
    return errs


def validate_vpa_checkpoint_update(new: Obj, old: Obj) -> Causes:
    errs = validate_object_meta_update(new, old)
    errs.extend(_validate_checkpoint_body(new))
    return errs


def _validate_checkpoint_body(cp: Obj) -> Causes:
    errs: Causes = []
    spec = get_dict(cp, "spec", "", errs)
    for field in ("containerName", "vpaObjectName"):
        if not get_str(spec, field, "spec", errs):
            errs.append(required(f"spec.{field}"))
    status = get_dict(cp, "status", "", errs)
    for field in ("lastUpdateTime", "firstSampleStart", "lastSampleStart"):
        validate_time(status, field, "status", errs)
    get_str(status, "version", "status", errs)
    count = get_int(status, "totalSamplesCount", "status", errs)
    if count is not None and count < 0:
        errs.append(invalid("status.totalSamplesCount", count, "must be greater than or equal to 0"))
    for field in ("cpuHistogram", "memoryHistogram"):
        if status.get(field) is not None:
            errs.extend(_validate_histogram(get_dict(status, field, "status", errs), f"status.{field}"))
    return errs


def _validate_histogram(hist: Obj, path: str) -> Causes:
    errs: Causes = []
    validate_time(hist, "referenceTimestamp", path, errs)
    total = get_number(hist, "totalWeight", path, errs)
    if total is not None and total < 0:
        errs.append(invalid(child(path, "totalWeight"), total, "must be greater than or equal to 0"))
    weights = get_dict(hist, "bucketWeights", path, errs)
    wp = child(path, "bucketWeights")
    for bucket, weight in weights.items():
        p = key(wp, bucket)
        text = str(bucket)
        if not (text.isascii() and text.lstrip("-").isdigit()) or int(text) < 0:
            errs.append(invalid(p, text, "bucket index must be a non-negative integer"))
        if isinstance(weight, float) and weight.is_integer():
            weight = int(weight)
        if isinstance(weight, bool) or not isinstance(weight, int):
            errs.append(type_error(p, weight, "integer"))
        elif not 0 <= weight <= 0xFFFFFFFF:
            errs.append(invalid(p, weight, "must be between 0 and 4294967295, inclusive"))
    return errs
