"""Namespace, Event (core/v1 and events.k8s.io/v1), Lease, ConfigMap, LimitRange, ResourceQuota.

Events: core/v1 keeps Kubernetes' lenient legacy rules (namespace agreement with the
involved object, and for events that set ``eventTime`` the reporting fields), plus a kvert
rule that ``involvedObject`` must name something (kind and name). events.k8s.io/v1 gets the
strict rules (``eventTime``, ``type`` Normal/Warning, ``reportingController``,
``reportingInstance``, ``action``, ``reason``, deprecated fields unset).
"""

from __future__ import annotations

import base64
import binascii

from kvert.api.errors import Cause
from kvert.api.gostrings import quote
from kvert.api.types import Obj

from . import names
from .common import (
    Causes,
    child,
    dict_field,
    dicts,
    duplicate,
    forbidden,
    get_bool,
    get_dict,
    get_int,
    get_list,
    get_str,
    immutable,
    invalid,
    key,
    not_supported,
    parse_time,
    required,
    too_long,
    type_error,
    validate_time,
)
from .meta import validate_object_meta, validate_object_meta_update
from .resourcelist import parse_resource_list, validate_container_resource_name, validate_resource_name

MAX_CONFIG_MAP_SIZE = 1024 * 1024
EVENT_TYPES = ("Normal", "Warning")
REPORTING_INSTANCE_LIMIT = 128
ACTION_LIMIT = 128
REASON_LIMIT = 128
NOTE_LIMIT = 1024
LEASE_STRATEGIES = ("OldestEmulationVersion",)
LIMIT_TYPES = ("Container", "PersistentVolumeClaim", "Pod")


# -- Namespace ----------------------------------------------------------------------------------

def validate_namespace(ns: Obj) -> Causes:
    errs = validate_object_meta(ns, namespaced=False, name_fn=names.name_is_dns_label)
    spec = get_dict(ns, "spec", "", errs)
    for f in get_list(spec, "finalizers", "spec", errs):
        errs.extend(names.validate_finalizer_name(str(f), "spec.finalizers"))
    return errs


def validate_namespace_status_update(new: Obj, old: Obj) -> Causes:
    errs = validate_object_meta_update(new, old)
    meta = dict_field(new, "metadata")
    status = dict_field(new, "status")
    phase = status.get("phase") or "Active"
    if not meta.get("deletionTimestamp"):
        if phase != "Active":
            errs.append(invalid("status.Phase", phase, "may only be 'Active' if `deletionTimestamp` "
                                                       "is empty"))
    elif phase != "Terminating":
        errs.append(invalid("status.Phase", phase, "may only be 'Terminating' if "
                                                   "`deletionTimestamp` is not empty"))
    return errs


# -- Events -------------------------------------------------------------------------------------

def _namespace_of(obj: Obj) -> str:
    meta = dict_field(obj, "metadata")
    ns = meta.get("namespace")
    return ns if isinstance(ns, str) else ""


def validate_core_event(event: Obj) -> Causes:
    """core/v1 Event (``legacyValidateEvent`` plus metadata checks and a named involved object)."""
    errs = validate_object_meta(event, namespaced=True)
    namespace = _namespace_of(event)
    involved = event.get("involvedObject")
    if not isinstance(involved, dict) or not (involved.get("kind") or involved.get("name")):
        if involved is not None and not isinstance(involved, dict):
            errs.append(type_error("involvedObject", involved, "object"))
        else:
            errs.append(required("involvedObject"))
        involved = {}
    involved_ns = involved.get("namespace") or ""
    if not event.get("eventTime"):
        if not involved_ns:
            if namespace not in ("", "default"):
                errs.append(invalid("involvedObject.namespace", involved_ns,
                                    "does not match event.namespace"))
        elif namespace != involved_ns:
            errs.append(invalid("involvedObject.namespace", involved_ns, "does not match event.namespace"))
    else:
        validate_time(event, "eventTime", "", errs, nullable=False)
        if not involved_ns and namespace not in ("default", "kube-system"):
            errs.append(invalid("involvedObject.namespace", involved_ns, "does not match event.namespace"))
        errs.extend(_reporting_fields(event, controller="reportingComponent",
                                      instance="reportingInstance", note="message"))
    event_type = event.get("type")
    if event_type is not None and not isinstance(event_type, str):
        errs.append(type_error("type", event_type, "string"))
    count = get_int(event, "count", "", errs, bits=32)
    if count is not None and count < 0:
        errs.append(invalid("count", count, "must be greater than or equal to 0"))
    for field in ("firstTimestamp", "lastTimestamp"):
        validate_time(event, field, "", errs)
    return errs


def _reporting_fields(event: Obj, *, controller: str, instance: str, note: str) -> Causes:
    errs: Causes = []
    reporting_controller = get_str(event, controller, "", errs)
    if not reporting_controller:
        errs.append(required(controller))
    errs.extend(names.validate_qualified_name(reporting_controller, controller))
    for field, limit in ((instance, REPORTING_INSTANCE_LIMIT), ("action", ACTION_LIMIT),
                         ("reason", REASON_LIMIT)):
        value = get_str(event, field, "", errs)
        if not value:
            errs.append(required(field))
        if len(value) > limit:
            errs.append(invalid(field, "", f"can have at most {limit} characters"))
    if len(get_str(event, note, "", errs)) > NOTE_LIMIT:
        errs.append(invalid(note, "", f"can have at most {NOTE_LIMIT} characters"))
    return errs


def validate_events_event(event: Obj) -> Causes:
    """events.k8s.io/v1 Event (``ValidateEventCreate`` for the new API)."""
    errs = validate_object_meta(event, namespaced=True)
    namespace = _namespace_of(event)
    if parse_time(event.get("eventTime")) is None:
        if event.get("eventTime"):
            validate_time(event, "eventTime", "", errs, nullable=False)
        else:
            errs.append(required("eventTime"))
    regarding = event.get("regarding")
    if regarding is not None and not isinstance(regarding, dict):
        errs.append(type_error("regarding", regarding, "object"))
        regarding = {}
    regarding = regarding or {}
    if not regarding.get("namespace") and namespace not in ("default", "kube-system"):
        errs.append(invalid("regarding.namespace", regarding.get("namespace") or "",
                            "does not match event.namespace"))
    errs.extend(_reporting_fields(event, controller="reportingController",
                                  instance="reportingInstance", note="note"))
    event_type = event.get("type")
    if event_type not in EVENT_TYPES:
        errs.append(invalid("type", "", f"has invalid value: {event_type if event_type else ''}"))
    for field in ("deprecatedFirstTimestamp", "deprecatedLastTimestamp", "deprecatedCount"):
        if event.get(field):
            errs.append(invalid(field, "", "needs to be unset"))
    source = event.get("deprecatedSource")
    if isinstance(source, dict) and (source.get("component") or source.get("host")):
        errs.append(invalid("deprecatedSource", "", "needs to be unset"))
    errs.extend(_event_series(event))
    return errs


def _event_series(event: Obj) -> Causes:
    series = event.get("series")
    if series is None:
        return []
    if not isinstance(series, dict):
        return [type_error("series", series, "object")]
    errs: Causes = []
    count = get_int(series, "count", "series", errs, bits=32)
    if count is None or count < 2:
        errs.append(invalid("series.count", "", "should be at least 2"))
    if not series.get("lastObservedTime"):
        errs.append(required("series.lastObservedTime"))
    else:
        validate_time(series, "lastObservedTime", "series", errs, nullable=False)
    return errs


_IMMUTABLE_EVENT_FIELDS = ("regarding", "reason", "note", "deprecatedSource",
                           "deprecatedFirstTimestamp", "deprecatedLastTimestamp", "deprecatedCount",
                           "type", "eventTime", "action", "related", "reportingController",
                           "reportingInstance")


def validate_events_event_update(new: Obj, old: Obj) -> Causes:
    errs = validate_object_meta_update(new, old)
    body = validate_events_event(new)
    errs.extend(c for c in body if not c.field.startswith("metadata"))
    for field in _IMMUTABLE_EVENT_FIELDS:
        if new.get(field) != old.get(field):
            errs.append(immutable(field, new.get(field)))
    return errs


# -- Lease --------------------------------------------------------------------------------------

def validate_lease(lease: Obj) -> Causes:
    errs = validate_object_meta(lease, namespaced=True)
    errs.extend(_lease_spec(get_dict(lease, "spec", "", errs)))
    return errs


def validate_lease_update(new: Obj, old: Obj) -> Causes:
    errs = validate_object_meta_update(new, old)
    errs.extend(_lease_spec(get_dict(new, "spec", "", errs)))
    return errs


def _lease_spec(spec: Obj) -> Causes:
    errs: Causes = []
    get_str(spec, "holderIdentity", "spec", errs)
    duration = get_int(spec, "leaseDurationSeconds", "spec", errs, bits=32)
    if duration is not None and duration <= 0:
        errs.append(invalid("spec.leaseDurationSeconds", duration, "must be greater than 0"))
    transitions = get_int(spec, "leaseTransitions", "spec", errs, bits=32)
    if transitions is not None and transitions < 0:
        errs.append(invalid("spec.leaseTransitions", transitions, "must be greater than or equal to 0"))
    for field in ("acquireTime", "renewTime"):
        validate_time(spec, field, "spec", errs)
    strategy = get_str(spec, "strategy", "spec", errs)
    if strategy:
        if "/" not in strategy:
            if strategy not in LEASE_STRATEGIES:
                errs.append(not_supported("spec.strategy", strategy, LEASE_STRATEGIES))
        else:
            errs.extend(names.validate_qualified_name(strategy, "spec.strategy"))
    if get_str(spec, "preferredHolder", "spec", errs) and not strategy:
        errs.append(forbidden("spec.preferredHolder", "may only be specified if `strategy` is defined"))
    return errs


# -- ConfigMap ----------------------------------------------------------------------------------

def validate_config_map(cm: Obj) -> Causes:
    errs = validate_object_meta(cm, namespaced=True)
    data = get_dict(cm, "data", "", errs)
    binary = get_dict(cm, "binaryData", "", errs)
    total = 0
    for k, v in data.items():
        p = key("data", k)
        errs.extend(invalid(p, k, m) for m in names.is_config_map_key(k))
        if k in binary:
            errs.append(invalid(p, k, "duplicate of key present in binaryData"))
        if not isinstance(v, str):
            errs.append(type_error(p, v, "string"))
            continue
        total += len(v.encode("utf-8", "surrogatepass"))
    for k, v in binary.items():
        p = key("binaryData", k)
        errs.extend(invalid(p, k, m) for m in names.is_config_map_key(k))
        if not isinstance(v, str):
            errs.append(type_error(p, v, "string"))
            continue
        try:
            total += len(base64.b64decode(v, validate=True))
        except (binascii.Error, ValueError):
            errs.append(invalid(p, "<binary>", "must be base64-encoded"))
    if total > MAX_CONFIG_MAP_SIZE:
        errs.append(too_long("", MAX_CONFIG_MAP_SIZE))
    get_bool(cm, "immutable", "", errs)
    return errs


def validate_config_map_update(new: Obj, old: Obj) -> Causes:
    errs = validate_object_meta_update(new, old)
    if old.get("immutable") is True:
        if new.get("immutable") is not True:
            errs.append(forbidden("immutable", "field is immutable when `immutable` is set"))
        if (new.get("data") or {}) != (old.get("data") or {}):
            errs.append(forbidden("data", "field is immutable when `immutable` is set"))
        if (new.get("binaryData") or {}) != (old.get("binaryData") or {}):
            errs.append(forbidden("binaryData", "field is immutable when `immutable` is set"))
    body = validate_config_map(new)
    errs.extend(c for c in body if not c.field.startswith("metadata"))
    return errs


# -- LimitRange and ResourceQuota -----------------------------------------------------------------

def validate_limit_range(lr: Obj) -> Causes:
    errs = validate_object_meta(lr, namespaced=True)
    spec = get_dict(lr, "spec", "", errs)
    seen: set[str] = set()
    for _, p, item in dicts(get_list(spec, "limits", "spec", errs), "spec.limits", errs):
        ltype = get_str(item, "type", p, errs)
        if "/" not in ltype and ltype not in LIMIT_TYPES:
            errs.append(invalid(child(p, "type"), ltype, "must be a standard limit type or fully "
                                                         "qualified"))
        if ltype in seen:
            errs.append(duplicate(child(p, "type"), ltype))
        seen.add(ltype)
        check = validate_container_resource_name if ltype in ("Pod", "Container") \
            else validate_resource_name
        lists = {}
        for field in ("max", "min", "default", "defaultRequest", "maxLimitRequestRatio"):
            if field in item:
                if ltype == "Pod" and field in ("default", "defaultRequest") and item.get(field):
                    errs.append(forbidden(child(p, field), "may not be specified when `type` is 'Pod'"))
                    continue
                lists[field] = parse_resource_list(item.get(field), child(p, field), errs,
                                                   name_check=check)
        mins, maxs = lists.get("min", {}), lists.get("max", {})
        defaults, requests = lists.get("default", {}), lists.get("defaultRequest", {})
        for name in set(mins) | set(maxs) | set(defaults) | set(requests):
            lo, hi = mins.get(name), maxs.get(name)
            d, dr = defaults.get(name), requests.get(name)
            if lo is not None and hi is not None and lo > hi:
                errs.append(invalid(key(child(p, "min"), name), str(lo),
                                    f"min value {lo} is greater than max value {hi}"))
            if dr is not None and lo is not None and lo > dr:
                errs.append(invalid(key(child(p, "defaultRequest"), name), str(dr),
                                    f"min value {lo} is greater than default request value {dr}"))
            if dr is not None and hi is not None and dr > hi:
                errs.append(invalid(key(child(p, "defaultRequest"), name), str(dr),
                                    f"default request value {dr} is greater than max value {hi}"))
            if dr is not None and d is not None and dr > d:
                errs.append(invalid(key(child(p, "defaultRequest"), name), str(dr),
                                    f"default request value {dr} is greater than default limit "
                                    f"value {d}"))
            if d is not None and lo is not None and lo > d:
                errs.append(invalid(key(child(p, "default"), name), str(lo),
                                    f"min value {lo} is greater than default value {d}"))
            if d is not None and hi is not None and d > hi:
                errs.append(invalid(key(child(p, "default"), name), str(hi),
                                    f"default value {d} is greater than max value {hi}"))
        for name, ratio in lists.get("maxLimitRequestRatio", {}).items():
            if ratio.nanos < 10**9:
                errs.append(invalid(key(child(p, "maxLimitRequestRatio"), name), str(ratio),
                                    f"ratio {ratio} is less than 1"))
    return errs


# helper.IsStandardResourceQuotaScope and IsResourceQuotaScopeValidForResource (pkg/apis/core/helper)
_POD_COUNT = frozenset({"pods"})
_POD_COMPUTE = frozenset({"cpu", "memory", "limits.cpu", "limits.memory", "requests.cpu",
                          "requests.memory"})
_PVC = frozenset({"persistentvolumeclaims", "requests.storage"})
_SCOPE_RESOURCES = {
    "Terminating": _POD_COUNT | _POD_COMPUTE, "NotTerminating": _POD_COUNT | _POD_COMPUTE,
    "NotBestEffort": _POD_COUNT | _POD_COMPUTE, "PriorityClass": _POD_COUNT | _POD_COMPUTE,
    "CrossNamespacePodAffinity": _POD_COUNT | _POD_COMPUTE,
    "BestEffort": _POD_COUNT,
    "VolumeAttributesClass": _PVC,
}
# helper.IsStandardQuotaResourceName (hugepages aside, see _is_standard_quota_resource)
_STANDARD_QUOTA_RESOURCES = frozenset({
    "cpu", "memory", "ephemeral-storage", "requests.cpu", "requests.memory", "requests.storage",
    "requests.ephemeral-storage", "limits.cpu", "limits.memory", "limits.ephemeral-storage",
    "pods", "resourcequotas", "services", "replicationcontrollers", "secrets",
    "persistentvolumeclaims", "configmaps", "services.nodeports", "services.loadbalancers"})
_CONFLICTING_SCOPES = (("BestEffort", "NotBestEffort"), ("Terminating", "NotTerminating"))


def _is_standard_quota_resource(name: str) -> bool:
    return name in _STANDARD_QUOTA_RESOURCES or name.startswith(("hugepages-", "requests.hugepages-"))


def _scopes_value(scopes: list[str]) -> str:
    # field.Invalid(fldPath, spec.Scopes, ...) renders the slice with Go's %#v
    return "[]core.ResourceQuotaScope{" + ", ".join(quote(s) for s in scopes) + "}"


def _validate_quota_scopes(scopes: list[str], hard: list[str]) -> Causes:
    """``validateResourceQuotaScopes``: known scopes, each valid for every standard resource
    of ``hard`` (BestEffort only counts pods), no conflicting pair; every error names the
    whole ``spec.scopes`` list as its value."""
    errs: Causes = []

    def bad(detail: str) -> None:
        errs.append(Cause("spec.scopes", f"Invalid value: {_scopes_value(scopes)}: {detail}",
                          "FieldValueInvalid"))

    for scope in scopes:
        allowed = _SCOPE_RESOURCES.get(scope)
        if allowed is None:
            bad("unsupported scope")
            continue
        for name in sorted(hard):
            if _is_standard_quota_resource(name) and name not in allowed:
                bad("unsupported scope applied to resource")
    for pair in _CONFLICTING_SCOPES:
        if set(pair) <= set(scopes):
            bad("conflicting scopes")
    return errs


def validate_resource_quota(rq: Obj) -> Causes:
    errs = validate_object_meta(rq, namespaced=True)
    spec = get_dict(rq, "spec", "", errs)
    hard = spec.get("hard")
    parse_resource_list(hard, "spec.hard", errs, name_check=validate_resource_name)
    scopes = [s for s in get_list(spec, "scopes", "spec", errs) if isinstance(s, str)]
    if scopes:
        errs.extend(_validate_quota_scopes(scopes, list(hard) if isinstance(hard, dict) else []))
    status = get_dict(rq, "status", "", errs)
    for field in ("hard", "used"):
        parse_resource_list(status.get(field), f"status.{field}", errs,
                            name_check=validate_resource_name)
    return errs

