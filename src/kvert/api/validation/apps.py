"""apps/v1 StatefulSet, DaemonSet and ControllerRevision (``pkg/apis/apps/validation``).

* Both workloads need a valid, non-empty selector matching the template labels, a template
  with ``restartPolicy: Always`` and no ``activeDeadlineSeconds``; counts are >= 0.
* StatefulSet: ``podManagementPolicy`` OrderedReady or Parallel; ``updateStrategy``
  RollingUpdate (``partition`` >= 0, ``maxUnavailable`` a positive int or percent up to
  100 %) or OnDelete (then no ``rollingUpdate``); claim retention Retain or Delete; only
  replicas, ordinals, template, updateStrategy, revisionHistoryLimit, the claim retention
  policy and minReadySeconds may change.
* DaemonSet: ``updateStrategy`` RollingUpdate (exactly one of ``maxUnavailable`` and
  ``maxSurge`` non-zero) or OnDelete; the selector is immutable.
* ControllerRevision: ``data`` is mandatory and immutable, ``revision`` >= 0.
"""

from __future__ import annotations

from typing import Any

from kvert.api.types import Obj

from . import names
from .common import (
    IS_NEGATIVE_MSG,
    Causes,
    child,
    dict_field,
    forbidden,
    get_dict,
    get_int,
    immutable,
    index,
    invalid,
    not_supported,
    required,
    type_error,
)
from .diff import normalized
from .meta import validate_object_meta, validate_object_meta_update
from .storage import validate_claim_template
from .workloads import (
    int_or_percent,
    not_more_than_100_percent,
    selector_immutable,
    validate_replica_set_like,
)

POD_MANAGEMENT_POLICIES = ("OrderedReady", "Parallel")
STATEFULSET_STRATEGIES = ("RollingUpdate", "OnDelete")
DAEMONSET_STRATEGIES = ("OnDelete", "RollingUpdate")
RETENTION_POLICIES = ("Retain", "Delete")
STATEFULSET_UPDATABLE = ("replicas", "ordinals", "template", "updateStrategy", "revisionHistoryLimit",
                         "persistentVolumeClaimRetentionPolicy", "minReadySeconds")


def _nonnegative(spec: Obj, fields: tuple[str, ...], path: str, errs: Causes) -> None:
    for field in fields:
        value = get_int(spec, field, path, errs, bits=32)
        if value is not None and value < 0:
            errs.append(invalid(child(path, field), value, IS_NEGATIVE_MSG))


# ---- StatefulSet ------------------------------------------------------------------------------

def _statefulset_strategy(strategy: Any, path: str) -> Causes:
    if not isinstance(strategy, dict):
        return [type_error(path, strategy, "object")] if strategy is not None else [required(child(path, "type"))]
    errs: Causes = []
    stype = strategy.get("type")
    rolling = strategy.get("rollingUpdate")
    ru_path = child(path, "rollingUpdate")
    if not stype:
        errs.append(required(child(path, "type")))
    elif stype == "OnDelete":
        if rolling is not None:
            errs.append(invalid(ru_path, rolling, "only allowed for updateStrategy 'RollingUpdate'"))
    elif stype == "RollingUpdate":
        if isinstance(rolling, dict):
            partition = get_int(rolling, "partition", ru_path, errs, bits=32)
            if partition is not None and partition < 0:
                errs.append(invalid(child(ru_path, "partition"), partition, IS_NEGATIVE_MSG))
            if rolling.get("maxUnavailable") is not None:
                value = rolling["maxUnavailable"]
                mu_path = child(ru_path, "maxUnavailable")
                mu_errs, number, pct = int_or_percent(value, mu_path)
                errs.extend(mu_errs)
                errs.extend(not_more_than_100_percent(value, number, pct, mu_path))
                if not mu_errs and number is not None and number < 1:
                    errs.append(invalid(mu_path, value, "must be greater than 0"))
        elif rolling is not None:
            errs.append(type_error(ru_path, rolling, "object"))
    else:
        errs.append(not_supported(child(path, "type"), stype, STATEFULSET_STRATEGIES))
    return errs


def _retention_policy(policy: Any, path: str) -> Causes:
    if policy is None:
        return []
    if not isinstance(policy, dict):
        return [type_error(path, policy, "object")]
    errs: Causes = []
    for field in ("whenDeleted", "whenScaled"):
        value = policy.get(field)
        if value not in RETENTION_POLICIES:
            errs.append(not_supported(child(path, field), value, RETENTION_POLICIES))
    return errs


def _validate_statefulset_spec(spec: Obj, path: str) -> Causes:
    errs = validate_replica_set_like(spec, path, "StatefulSet", "statefulset", pod_spec=False)
    policy = spec.get("podManagementPolicy")
    if not policy:
        errs.append(required(child(path, "podManagementPolicy")))
    elif policy not in POD_MANAGEMENT_POLICIES:
        errs.append(not_supported(child(path, "podManagementPolicy"), policy, POD_MANAGEMENT_POLICIES))
    errs.extend(_statefulset_strategy(spec.get("updateStrategy"), child(path, "updateStrategy")))
    _nonnegative(spec, ("revisionHistoryLimit",), path, errs)
    ordinals = get_dict(spec, "ordinals", path, errs)
    _nonnegative(ordinals, ("start",), child(path, "ordinals"), errs)
    errs.extend(_retention_policy(spec.get("persistentVolumeClaimRetentionPolicy"),
                                  child(path, "persistentVolumeClaimRetentionPolicy")))
    templates = spec.get("volumeClaimTemplates")
    vct_path = child(path, "volumeClaimTemplates")
    if isinstance(templates, list):
        for i, claim in enumerate(templates):
            errs.extend(validate_claim_template(claim, index(vct_path, i)))
    elif templates is not None:
        errs.append(type_error(vct_path, templates, "array"))
    return errs


def validate_stateful_set(sts: Obj) -> Causes:
    """The name is a DNS label (``ValidateStatefulSetName``): it is the pods' hostname prefix."""
    errs = validate_object_meta(sts, namespaced=True, name_fn=names.name_is_dns_label)
    errs.extend(_validate_statefulset_spec(get_dict(sts, "spec", "", errs), "spec"))
    return errs


def validate_stateful_set_update(new: Obj, old: Obj) -> Causes:
    """``ValidateStatefulSetUpdate``: the spec rules, then the fields that may change."""
    errs = validate_object_meta_update(new, old)
    errs.extend(_validate_statefulset_spec(get_dict(new, "spec", "", errs), "spec"))
    new_spec = dict_field(new, "spec")
    old_spec = dict_field(old, "spec")
    fixed = [k for k in set(new_spec) | set(old_spec) if k not in STATEFULSET_UPDATABLE]
    if any(normalized(new_spec.get(k)) != normalized(old_spec.get(k)) for k in fixed):
        errs.append(forbidden("spec", "updates to statefulset spec for fields other than 'replicas', "
                              "'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', "
                              "'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are "
                              "forbidden"))
    return errs


# ---- DaemonSet -------------------------------------------------------------------------------

def _daemonset_strategy(strategy: Any, path: str) -> Causes:
    if not isinstance(strategy, dict):
        return [type_error(path, strategy, "object")] if strategy is not None else []
    errs: Causes = []
    stype = strategy.get("type")
    if stype not in DAEMONSET_STRATEGIES:
        errs.append(not_supported(child(path, "type"), stype, DAEMONSET_STRATEGIES))
    if stype != "RollingUpdate":
        return errs
    rolling = strategy.get("rollingUpdate")
    ru_path = child(path, "rollingUpdate")
    if not isinstance(rolling, dict):
        return errs + [required(ru_path)]
    numbers = {}
    for field in ("maxUnavailable", "maxSurge"):
        value = rolling.get(field, 0)
        f_path = child(ru_path, field)
        f_errs, number, pct = int_or_percent(value, f_path)
        errs.extend(f_errs)
        errs.extend(not_more_than_100_percent(value, number, pct, f_path))
        numbers[field] = number or 0
    if numbers["maxUnavailable"] and numbers["maxSurge"]:
        errs.append(invalid(child(ru_path, "maxSurge"), rolling.get("maxSurge"),
                            "may not be set when maxUnavailable is non-zero"))
    elif not numbers["maxUnavailable"] and not numbers["maxSurge"]:
        errs.append(required(child(ru_path, "maxUnavailable"), "cannot be 0 when maxSurge is 0"))
    return errs


def _validate_daemonset_spec(spec: Obj, path: str) -> Causes:
    # DaemonSets have no replicas; the shared rules read an absent one as fine
    errs = validate_replica_set_like(spec, path, "DaemonSet", "daemonset")
    errs.extend(_daemonset_strategy(spec.get("updateStrategy"), child(path, "updateStrategy")))
    _nonnegative(spec, ("revisionHistoryLimit", "templateGeneration"), path, errs)
    return errs


def validate_daemon_set(ds: Obj) -> Causes:
    errs = validate_object_meta(ds, namespaced=True)
    errs.extend(_validate_daemonset_spec(get_dict(ds, "spec", "", errs), "spec"))
    return errs


def validate_daemon_set_update(new: Obj, old: Obj) -> Causes:
    errs = validate_object_meta_update(new, old)
    errs.extend(_validate_daemonset_spec(get_dict(new, "spec", "", errs), "spec"))
    errs.extend(selector_immutable(new, old))
    return errs


# ---- status ---------------------------------------------------------------------------------

_STATEFULSET_COUNTS = ("observedGeneration", "replicas", "readyReplicas", "currentReplicas",
                       "updatedReplicas", "availableReplicas", "collisionCount")
_DAEMONSET_COUNTS = ("currentNumberScheduled", "numberMisscheduled", "desiredNumberScheduled",
                     "numberReady", "observedGeneration", "updatedNumberScheduled",
                     "numberAvailable", "numberUnavailable", "collisionCount")


def _status_counts(new: Obj, fields: tuple[str, ...], errs: Causes) -> dict[str, int]:
    status = get_dict(new, "status", "", errs)
    values: dict[str, int] = {}
    for field in fields:
        value = get_int(status, field, "status", errs)
        if value is not None:
            values[field] = value
            if value < 0:
                errs.append(invalid(f"status.{field}", value, IS_NEGATIVE_MSG))
    return values


def _collision_count_kept(values: dict[str, int], old: Obj, errs: Causes) -> None:
    old_count = (old.get("status") or {}).get("collisionCount") if isinstance(old.get("status"), dict) \
        else None
    new_count = values.get("collisionCount")
    if isinstance(old_count, int) and (new_count is None or new_count < old_count):
        errs.append(invalid("status.collisionCount", new_count or 0, "cannot be decremented"))


def validate_stateful_set_status_update(new: Obj, old: Obj) -> Causes:
    """``ValidateStatefulSetStatus``."""
    errs = validate_object_meta_update(new, old)
    values = _status_counts(new, _STATEFULSET_COUNTS, errs)
    replicas = values.get("replicas", 0)
    for field in ("readyReplicas", "currentReplicas", "updatedReplicas"):
        if values.get(field, 0) > replicas:
            errs.append(invalid(f"status.{field}", values[field], "cannot be greater than status.replicas"))
    if values.get("availableReplicas", 0) > values.get("readyReplicas", 0):
        errs.append(invalid("status.availableReplicas", values["availableReplicas"],
                            "cannot be greater than status.readyReplicas"))
    _collision_count_kept(values, old, errs)
    return errs


def validate_daemon_set_status_update(new: Obj, old: Obj) -> Causes:
    """``ValidateDaemonSetStatusUpdate``."""
    errs = validate_object_meta_update(new, old)
    _collision_count_kept(_status_counts(new, _DAEMONSET_COUNTS, errs), old, errs)
    return errs


# ---- ControllerRevision -------------------------------------------------------------------------

def validate_controller_revision(rev: Obj) -> Causes:
    errs = validate_object_meta(rev, namespaced=True)
    if rev.get("data") is None:
        errs.append(required("data", "data is mandatory"))
    revision = get_int(rev, "revision", "", errs)
    if revision is not None and revision < 0:
        errs.append(invalid("revision", revision, IS_NEGATIVE_MSG))
    return errs


def validate_controller_revision_update(new: Obj, old: Obj) -> Causes:
    errs = validate_object_meta_update(new, old)
    errs.extend(c for c in validate_controller_revision(new) if not c.field.startswith("metadata"))
    if normalized(new.get("data")) != normalized(old.get("data")):
        errs.append(immutable("data", new.get("data")))
    return errs
