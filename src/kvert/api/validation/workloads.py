"""apps/v1 Deployment and ReplicaSet (``pkg/apis/apps/validation`` and the registry strategies).

* ``spec.selector`` is required, valid, non-empty and must match the template labels
  ("`selector` does not match template `labels`"); it is immutable on update (apps/v1).
* The template is validated as a pod template (paths ``spec.template.spec...``); only
  ``restartPolicy: Always`` and no ``activeDeadlineSeconds``.
* ``replicas``, ``minReadySeconds``, ``revisionHistoryLimit`` >= 0; ``progressDeadlineSeconds``
  > ``minReadySeconds``; strategy ``RollingUpdate`` (maxSurge/maxUnavailable int or percent,
  not both zero, maxUnavailable <= 100%) or ``Recreate``.
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
    invalid,
    not_supported,
    required,
    type_error,
)
from .diff import normalized
from .meta import selector_from, validate_label_selector, validate_object_meta, validate_object_meta_update
from .pod import validate_pod_template_spec

STRATEGY_TYPES = ("Recreate", "RollingUpdate")


def int_or_percent(value: Any, path: str) -> tuple[Causes, int | None, bool]:
    """``ValidatePositiveIntOrPercent``; returns (causes, number, is_percent)."""
    if isinstance(value, bool) or value is None:
        return [invalid(path, str(value), "must be an integer or percentage (e.g '5%%')")], None, False
    if isinstance(value, int):
        if value < 0:
            return [invalid(path, value, IS_NEGATIVE_MSG)], value, False
        return [], value, False
    if isinstance(value, str):
        msgs = names.is_valid_percent(value)
        if msgs:
            return [invalid(path, value, m) for m in msgs], None, True
        return [], int(value[:-1]), True
    return [invalid(path, str(value), "must be an integer or percentage (e.g '5%%')")], None, False


def not_more_than_100_percent(value: Any, number: int | None, is_percent: bool, path: str) -> Causes:
    if is_percent and number is not None and number > 100:
        return [invalid(path, value, "must not be greater than 100%")]
    return []


def _counts(spec: Obj, path: str) -> Causes:
    """``replicas`` and ``minReadySeconds``: int32, not negative."""
    errs: Causes = []
    for field in ("replicas", "minReadySeconds"):
        value = get_int(spec, field, path, errs, bits=32)
        if value is not None and value < 0:
            errs.append(invalid(child(path, field), value, IS_NEGATIVE_MSG))
    return errs


def _template(spec: Obj, tpl_path: str, errs: Causes) -> Obj | None:
    """The required pod template, or None (with the cause added)."""
    template = spec.get("template")
    if template is None:
        errs.append(required(tpl_path))
        return None
    if not isinstance(template, dict):
        errs.append(type_error(tpl_path, template, "object"))
        return None
    return template


def _restart_always(tpl_spec: Obj, tpl_path: str) -> Causes:
    restart = tpl_spec.get("restartPolicy") or "Always"
    if restart != "Always":
        return [not_supported(child(tpl_path, "spec.restartPolicy"), restart, ["Always"])]
    return []


def validate_replica_set_like(spec: Obj, path: str, kind_word: str,
                               selector_word: str = "deployment", pod_spec: bool = True) -> Causes:
    """The shared part of ReplicaSet, Deployment, StatefulSet and DaemonSet specs (selector,
    template, replicas); ``selector_word`` names the kind in the empty-selector message
    (ReplicaSets say "deployment" upstream too)."""
    errs: Causes = []
    errs.extend(_counts(spec, path))
    selector = spec.get("selector")
    sel_path = child(path, "selector")
    selector_ok = False
    if selector is None:
        errs.append(required(sel_path))
    elif not isinstance(selector, dict):
        errs.append(type_error(sel_path, selector, "object"))
    else:
        sel_errs = validate_label_selector(selector, sel_path)
        errs.extend(sel_errs)
        if not selector.get("matchLabels") and not selector.get("matchExpressions"):
            errs.append(invalid(sel_path, selector, f"empty selector is invalid for {selector_word}"))
        else:
            selector_ok = not sel_errs
    tpl_path = child(path, "template")
    template = _template(spec, tpl_path, errs)
    if template is None:
        return errs
    meta = dict_field(template, "metadata")
    labels = dict_field(meta, "labels")
    if selector_ok:
        matcher = selector_from(selector)
        if matcher is None:
            errs.append(invalid(sel_path, selector, "invalid label selector"))
        elif not matcher.empty and not matcher.matches(labels):
            errs.append(invalid(child(tpl_path, "metadata.labels"), labels,
                                "`selector` does not match template `labels`"))
    if pod_spec:
        errs.extend(validate_pod_template_spec(template, tpl_path))
    else:
        # ValidatePodTemplateSpecForStatefulSet: the pod spec is left to the pods (its volumes
        # come from the claim templates); labels and annotations under "template" itself
        errs.extend(names.validate_labels(labels, child(tpl_path, "labels")))
        annotations = dict_field(meta, "annotations")
        errs.extend(names.validate_annotations(annotations, child(tpl_path, "annotations")))
    tpl_spec = dict_field(template, "spec")
    errs.extend(_restart_always(tpl_spec, tpl_path))
    if tpl_spec.get("activeDeadlineSeconds") is not None:
        errs.append(forbidden(child(tpl_path, "spec.activeDeadlineSeconds"),
                              f"activeDeadlineSeconds in {kind_word} is not Supported"))
    return errs


def validate_replica_set(rs: Obj) -> Causes:
    errs = validate_object_meta(rs, namespaced=True)
    spec = get_dict(rs, "spec", "", errs)
    errs.extend(validate_replica_set_like(spec, "spec", "ReplicaSet"))
    return errs


def validate_deployment(deploy: Obj) -> Causes:
    errs = validate_object_meta(deploy, namespaced=True)
    spec = get_dict(deploy, "spec", "", errs)
    errs.extend(validate_replica_set_like(spec, "spec", "ReplicaSet"))
    errs.extend(_validate_strategy(spec.get("strategy"), "spec.strategy"))
    revision_limit = get_int(spec, "revisionHistoryLimit", "spec", errs, bits=32)
    if revision_limit is not None and revision_limit < 0:
        errs.append(invalid("spec.revisionHistoryLimit", revision_limit, IS_NEGATIVE_MSG))
    deadline = get_int(spec, "progressDeadlineSeconds", "spec", errs, bits=32)
    if deadline is not None:
        if deadline < 0:
            errs.append(invalid("spec.progressDeadlineSeconds", deadline, IS_NEGATIVE_MSG))
        min_ready = spec.get("minReadySeconds")
        if deadline <= (min_ready if isinstance(min_ready, int) else 0):
            errs.append(invalid("spec.progressDeadlineSeconds", deadline,
                                "must be greater than minReadySeconds"))
    return errs


def _validate_strategy(strategy: Any, path: str) -> Causes:
    if strategy is None:
        return []  # defaults to RollingUpdate 25%/25%
    if not isinstance(strategy, dict):
        return [type_error(path, strategy, "object")]
    errs: Causes = []
    stype = strategy.get("type") or "RollingUpdate"
    rolling = strategy.get("rollingUpdate")
    ru_path = child(path, "rollingUpdate")
    if stype == "Recreate":
        if rolling is not None:
            errs.append(forbidden(ru_path, "may not be specified when strategy `type` is 'Recreate'"))
    elif stype == "RollingUpdate":
        if rolling is None:
            return errs  # defaulting fills in 25%/25%
        if not isinstance(rolling, dict):
            return [type_error(ru_path, rolling, "object")]
        unavailable = rolling.get("maxUnavailable", "25%")
        surge = rolling.get("maxSurge", "25%")
        u_errs, u_num, u_pct = int_or_percent(unavailable, child(ru_path, "maxUnavailable"))
        s_errs, s_num, _ = int_or_percent(surge, child(ru_path, "maxSurge"))
        errs.extend(u_errs + s_errs)
        if u_num == 0 and s_num == 0:
            errs.append(invalid(child(ru_path, "maxUnavailable"), unavailable,
                                "may not be 0 when `maxSurge` is 0"))
        errs.extend(not_more_than_100_percent(unavailable, u_num, u_pct,
                                              child(ru_path, "maxUnavailable")))
    else:
        errs.append(not_supported(child(path, "type"), stype, STRATEGY_TYPES))
    return errs


def selector_immutable(new: Obj, old: Obj) -> Causes:
    new_sel = (new.get("spec") or {}).get("selector") if isinstance(new.get("spec"), dict) else None
    old_sel = (old.get("spec") or {}).get("selector") if isinstance(old.get("spec"), dict) else None
    if normalized(new_sel) != normalized(old_sel):
        return [immutable("spec.selector", new_sel)]
    return []


def validate_replica_set_update(new: Obj, old: Obj) -> Causes:
    errs = validate_object_meta_update(new, old)
    spec = get_dict(new, "spec", "", errs)
    errs.extend(validate_replica_set_like(spec, "spec", "ReplicaSet"))
    errs.extend(selector_immutable(new, old))
    return errs


def validate_deployment_update(new: Obj, old: Obj) -> Causes:
    errs = validate_object_meta_update(new, old)
    body = validate_deployment(new)
    errs.extend(c for c in body if not c.field.startswith("metadata"))
    errs.extend(selector_immutable(new, old))
    return errs


_STATUS_COUNTS = {
    "ReplicaSet": ("replicas", "fullyLabeledReplicas", "readyReplicas", "availableReplicas",
                   "observedGeneration"),
    "Deployment": ("observedGeneration", "replicas", "updatedReplicas", "readyReplicas",
                   "availableReplicas", "unavailableReplicas", "terminatingReplicas",
                   "collisionCount"),
}


def validate_workload_status_update(new: Obj, old: Obj, kind: str) -> Causes:
    """``ValidateReplicaSetStatus`` / ``ValidateDeploymentStatus``."""
    errs = validate_object_meta_update(new, old)
    status = get_dict(new, "status", "", errs)
    values: dict[str, int] = {}
    for field in _STATUS_COUNTS[kind]:
        value = get_int(status, field, "status", errs)
        if value is not None:
            values[field] = value
            if value < 0:
                errs.append(invalid(f"status.{field}", value, IS_NEGATIVE_MSG))
    replicas = values.get("replicas", 0)
    fields = ("fullyLabeledReplicas", "readyReplicas", "availableReplicas") if kind == "ReplicaSet" \
        else ("updatedReplicas", "readyReplicas", "availableReplicas")
    for field in fields:
        if values.get(field, 0) > replicas:
            errs.append(invalid(f"status.{field}", values[field], "cannot be greater than status.replicas"))
    if values.get("availableReplicas", 0) > values.get("readyReplicas", 0):
        errs.append(invalid("status.availableReplicas", values["availableReplicas"],
                            "cannot be greater than readyReplicas"))
    if kind == "Deployment":
        old_status = dict_field(old, "status")
        old_count = old_status.get("collisionCount")
        new_count = values.get("collisionCount")
        if isinstance(old_count, int) and (new_count is None or new_count < old_count):
            errs.append(invalid("status.collisionCount", new_count or 0, "cannot be decremented"))
    return errs


# ---- core/v1 ReplicationController ------------------------------------------------------------

def _validate_rc_spec(spec: Obj, path: str) -> Causes:
    """``ValidateReplicationControllerSpec``: a non-empty selector map matching the template's
    labels (the template is required), counts >= 0, restartPolicy Always."""
    errs: Causes = []
    errs.extend(_counts(spec, path))
    sel_path = child(path, "selector")
    selector = spec.get("selector")
    if selector is not None and not isinstance(selector, dict):
        errs.append(type_error(sel_path, selector, "object"))
        selector = {}
    selector = selector or {}
    if not selector:
        errs.append(required(sel_path))
    else:
        errs.extend(names.validate_labels(selector, sel_path))
    tpl_path = child(path, "template")
    template = _template(spec, tpl_path, errs)
    if template is None:
        return errs
    meta = dict_field(template, "metadata")
    labels = dict_field(meta, "labels")
    if selector and any(labels.get(k) != v for k, v in selector.items()):
        errs.append(invalid(child(tpl_path, "metadata.labels"), labels,
                            "`selector` does not match template `labels`"))
    errs.extend(validate_pod_template_spec(template, tpl_path))
    tpl_spec = dict_field(template, "spec")
    errs.extend(_restart_always(tpl_spec, tpl_path))
    if tpl_spec.get("activeDeadlineSeconds") is not None:
        errs.append(forbidden(child(tpl_path, "spec.activeDeadlineSeconds"),
                              "activeDeadlineSeconds in ReplicationController is not Supported"))
    return errs


def validate_replication_controller(rc: Obj) -> Causes:
    errs = validate_object_meta(rc, namespaced=True)
    errs.extend(_validate_rc_spec(get_dict(rc, "spec", "", errs), "spec"))
    return errs


def validate_replication_controller_update(new: Obj, old: Obj) -> Causes:
    """An RC's selector may change (core/v1 never made it immutable)."""
    errs = validate_object_meta_update(new, old)
    errs.extend(_validate_rc_spec(get_dict(new, "spec", "", errs), "spec"))
    return errs
