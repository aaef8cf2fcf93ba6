"""Dynamic resource allocation (``resource.k8s.io/v1``): DeviceClass, ResourceClaim (and its
status), ResourceClaimTemplate, ResourceSlice, as ``pkg/apis/resource/validation`` checks
them.

The rules, with upstream's field paths and messages:

* names: requests, subrequests, devices and counters are DNS labels; classes, slices, claims
  and templates DNS subdomains; drivers CSI driver names (a lowercased DNS subdomain of at
  most 63 bytes); pools one or more DNS subdomains separated by '/', at most 253 bytes;
  attribute and capacity names C identifiers (at most 32 bytes), optionally behind a
  ``<driver-like domain>/``; ``matchAttribute``/``distinctAttribute`` must carry the domain;
* a device request has exactly one of ``exactly`` and ``firstAvailable`` (at most 8
  subrequests); ``deviceClassName`` is required; ``allocationMode`` is ``ExactCount`` (count
  > 0, defaulted to 1) or ``All`` (no count);
* lists have upstream's maximum sizes (32 requests, selectors, constraints and configs, 256
  ``reservedFor`` entries, 128 devices per slice -- 64 with taints, counters or list
  attributes -- ...): a list over its limit is reported once, "Too many", and not looked into;
  entries keyed by name (or uid) must be unique;
* constraints, configs and allocation results may only name requests of the claim
  (``<request>`` or ``<request>/<subrequest>``);
* a ResourceSlice names exactly one of ``nodeName``, ``nodeSelector`` (one term),
  ``allNodes`` and ``perDeviceNodeSelection``; pool ``resourceSliceCount`` > 0; each device
  attribute has exactly one value; ``driver``, ``pool.name`` and ``nodeName`` are immutable;
* ResourceClaim and ResourceClaimTemplate specs are immutable; the claim status may only be
  written through ``/status``: ``reservedFor`` needs an allocation, gains no entry while
  the claim is being deleted, and a set ``allocation`` cannot change (only be cleared).

CEL selector expressions are compiled with the scheduler's CEL environment
(``kvert.api.cel``) when they are new or changed, and reported as upstream does
(``Invalid value: "<expr>": compilation failed: ERROR: <input>:L:C: ...``).

Where kvert differs: the CEL cost limit is not estimated (the scheduler bounds evaluation
instead), and type errors are found as far as that environment checks them; opaque ``parameters`` arrive as decoded
JSON, so "error parsing data as JSON" cannot happen; the admin-access namespace label,
consumable-capacity request policies beyond their basic shape, ``nodeAllocatableResources``
and declarative-only rules newer than 1.35 are not checked.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Callable, Hashable
from typing import Any

from kvert.api.errors import Cause
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
    get_str_map,
    immutable,
    index,
    invalid,
    key,
    not_supported,
    required,
    too_long,
    too_many,
    type_error,
)
from .meta import validate_object_meta, validate_object_meta_update
from .pod import validate_node_selector
from .resourcelist import is_extended, parse

# Limits from k8s.io/api/resource/v1 (types.go).
DRIVER_NAME_MAX = 63
POOL_NAME_MAX = 253
DEVICE_MAX_DOMAIN_LENGTH = 63
DEVICE_MAX_ID_LENGTH = 32
DEVICE_ATTRIBUTE_MAX_VALUE_LENGTH = 64
DEVICE_REQUESTS_MAX = 32
DEVICE_SELECTORS_MAX = 32
DEVICE_CONSTRAINTS_MAX = 32
DEVICE_CONFIG_MAX = 32
FIRST_AVAILABLE_MAX = 8
DEVICE_TAINTS_MAX = 16
CEL_EXPRESSION_MAX_LENGTH = 10 * 1024
OPAQUE_PARAMETERS_MAX_LENGTH = 10 * 1024
RESERVED_FOR_MAX = 256
ALLOCATION_RESULTS_MAX = 32
SLICE_MAX_DEVICES = 128
SLICE_MAX_DEVICES_ADVANCED = 64
SLICE_MAX_COUNTER_SETS = 8
SLICE_MAX_COUNTERS_PER_SET = 32
SLICE_MAX_COUNTER_CONSUMPTIONS_PER_DEVICE = 2
SLICE_MAX_COUNTERS_PER_CONSUMPTION = 32
SLICE_MAX_ATTRIBUTES_AND_CAPACITIES = 32
SLICE_MAX_ATTRIBUTE_VALUES = 48
BINDING_CONDITIONS_MAX = 4
DEVICE_STATUS_MAX_CONDITIONS = 8
DEVICE_STATUS_DATA_MAX_LENGTH = 10 * 1024
NETWORK_MAX_IPS = 16
NETWORK_INTERFACE_NAME_MAX = 256
NETWORK_HARDWARE_ADDRESS_MAX = 128

ALLOCATION_MODES = ("All", "ExactCount")
TOLERATION_OPERATORS = ("Equal", "Exists")
TAINT_EFFECTS = ("NoExecute", "NoSchedule", "None")      # sets.List: sorted
CONFIG_SOURCES = ("FromClaim", "FromClass")

REQUEST_REF_MSG = ("must be the name of a request in the claim or the name of a request and a "
                   "subrequest separated by '/'")
NODE_SELECTION_MSG = ("exactly one of `nodeName`, `nodeSelector`, `allNodes`, "
                      "`perDeviceNodeSelection` is required")
DEVICE_NODE_SELECTION_MSG = ("exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required "
                             "when `perDeviceNodeSelection` is set to true in the ResourceSlice spec")

_C_IDENTIFIER_FMT = "[A-Za-z_][A-Za-z0-9_]*"
_C_IDENTIFIER_RE = re.compile(_C_IDENTIFIER_FMT)
_C_IDENTIFIER_MSG = ("a valid C identifier must start with alphabetic character or '_', followed "
                     "by a string of alphanumeric characters or '_'")
_NUMERIC = r"(0|[1-9]\d*)"
_PRE_RELEASE = r"(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)"
_BUILD = r"[0-9a-zA-Z-]+"
_SEMVER_RE = re.compile(rf"{_NUMERIC}\.{_NUMERIC}\.{_NUMERIC}"
                        rf"(-{_PRE_RELEASE}(\.{_PRE_RELEASE})*)?(\+{_BUILD}(\.{_BUILD})*)?",
                        re.ASCII)

Item = Callable[[Any, str], Causes]


# -- generic list and map helpers (validateSlice / validateSet / validateMap) -------------------

def _slice(items: list[Any], max_size: int, check: Item, path: str) -> Causes:
    """Every entry checked; an over-long list is only reported (DOS protection upstream)."""
    if 0 <= max_size < len(items):
        return [too_many(path, len(items), max_size)]
    errs: Causes = []
    for i, item in enumerate(items):
        errs.extend(check(item, index(path, i)))
    return errs


def _set(items: list[Any], max_size: int, check: Item, key_of: Callable[[Any], Hashable],
         path: str, key_field: str = "") -> Causes:
    """``_slice`` plus uniqueness by ``key_of``, reported after the entries' own problems at
    the entry's ``key_field`` (the entry itself for lists of strings)."""
    errs = _slice(items, max_size, check, path)
    if 0 <= max_size < len(items):
        return errs
    seen: set[Hashable] = set()
    for i, item in enumerate(items):
        k = key_of(item)
        if k is None:
            continue
        if k in seen:
            errs.append(duplicate(child(index(path, i), key_field) if key_field else index(path, i),
                                  k))
        else:
            seen.add(k)
    return errs


def _name_of(field: str) -> Callable[[Any], Hashable]:
    def key_of(item: Any) -> Hashable:
        value = item.get(field) if isinstance(item, dict) else None
        return value if isinstance(value, str) else None
    return key_of


def _self(item: Any) -> Hashable:
    return item if isinstance(item, str) else None


def _map(value: Any, max_size: int, check_key: Callable[[str, str], Causes], check_item: Item,
         path: str, errs: Causes) -> None:
    """``validateMap``: keys are reported at the map's path, values at ``path[key]``."""
    if value is None:
        return
    if not isinstance(value, dict):
        errs.append(type_error(path, value, "object"))
        return
    if 0 <= max_size < len(value):
        errs.append(too_many(path, len(value), max_size))
        return
    for k, item in value.items():
        errs.extend(check_key(k, path))
        errs.extend(check_item(item, key(path, _truncate(k))))


def _truncate(text: str, max_len: int = DEVICE_MAX_DOMAIN_LENGTH + 1 + DEVICE_MAX_ID_LENGTH) -> str:
    """Long map keys are shortened in the middle in field paths (``truncateIfTooLong``)."""
    max_len = max(max_len, 16)
    if len(text) <= max_len:
        return text
    remaining = max_len - 3
    return text[:(remaining + 1) // 2] + "..." + text[len(text) - remaining // 2:]


def _obj(item: Any, path: str, errs: Causes) -> Obj | None:
    if isinstance(item, dict):
        return item
    errs.append(type_error(path, item, "object"))
    return None


# -- names ------------------------------------------------------------------------------------------

def validate_driver_name(name: str, path: str) -> Causes:
    """``ValidateCSIDriverName``: an empty name is also reported as an invalid subdomain."""
    errs: Causes = []
    if not name:
        errs.append(required(path))
    if names.nbytes(name) > DRIVER_NAME_MAX:
        errs.append(too_long(path, DRIVER_NAME_MAX))
    errs.extend(invalid(path, name, m) for m in names.is_dns1123_subdomain(name.lower()))
    return errs


def validate_pool_name(name: str, path: str) -> Causes:
    if not name:
        return [required(path)]
    errs: Causes = []
    if names.nbytes(name) > POOL_NAME_MAX:
        errs.append(too_long(path, POOL_NAME_MAX))
    for part in name.split("/"):
        errs.extend(names.validate_dns1123_subdomain(part, path))
    return errs


def _c_identifier(value: str, path: str) -> Causes:
    errs: Causes = []
    if names.nbytes(value) > DEVICE_MAX_ID_LENGTH:
        errs.append(too_long(path, DEVICE_MAX_ID_LENGTH))
    if not _C_IDENTIFIER_RE.fullmatch(value):
        errs.append(invalid(path, value, names.regex_error(
            _C_IDENTIFIER_MSG, _C_IDENTIFIER_FMT, "my_name", "MY_NAME", "MyName")))
    return errs


def validate_qualified_name(name: str, path: str) -> Causes:
    """An attribute or capacity name: ``<C identifier>`` or ``<domain>/<C identifier>``."""
    parts = name.split("/")
    if len(parts) == 1:
        return _c_identifier(parts[0], path)
    if len(parts) > 2:
        return [invalid(path, name, "must not contain more than one slash")]
    errs: Causes = []
    domain, ident = parts
    if not domain:
        errs.append(invalid(path, "", "the domain must not be empty"))
    else:
        errs.extend(validate_driver_name(domain, path))
    if not ident:
        errs.append(invalid(path, "", "the name must not be empty"))
    else:
        errs.extend(_c_identifier(ident, path))
    return errs


def validate_fully_qualified_name(name: str, path: str) -> Causes:
    errs = validate_qualified_name(name, path)
    if "/" not in name:
        errs.append(invalid(path, name, "a fully qualified name must be a domain and a name "
                                        "separated by a slash"))
    return errs


def _uid(value: str, path: str) -> Causes:
    try:
        uuid.UUID(value)
    except ValueError:
        return [invalid(path, value, "error validating uid: invalid UUID format")]
    if len(value) != 36 or value != value.lower():
        return [invalid(path, value, "uid must be in RFC 4122 normalized form, "
                                     "`xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` with lowercase "
                                     "hexadecimal characters")]
    return []


def _label_value(value: str, path: str) -> Causes:
    return [invalid(path, value, m) for m in names.is_label_value(value)]


# -- claims -----------------------------------------------------------------------------------------

RequestNames = dict[str, set[Any] | None]  # subrequest names as written, valid or not


def request_names(devices: Any) -> RequestNames:
    """Request name -> its subrequest names (None for an ``exactly`` request)."""
    out: RequestNames = {}
    for request in devices.get("requests") or [] if isinstance(devices, dict) else []:
        if not isinstance(request, dict) or not isinstance(request.get("name"), str):
            continue
        subs = request.get("firstAvailable")
        if isinstance(subs, list) and subs:
            out[request["name"]] = {s.get("name") for s in subs if isinstance(s, dict)}
        else:
            out[request["name"]] = None
    return out


def _has_request(ref: str, known: RequestNames) -> bool:
    segments = ref.split("/")
    if len(segments) > 2 or segments[0] not in known:
        return False
    if len(segments) == 1:
        return True
    return segments[1] in (known[segments[0]] or ())


def _request_ref(ref: Any, path: str, known: RequestNames) -> Causes:
    if not isinstance(ref, str):
        return [type_error(path, ref, "string")]
    segments = ref.split("/")
    if len(segments) > 2:
        return [invalid(path, ref, REQUEST_REF_MSG)]
    errs: Causes = []
    for segment in segments:
        errs.extend(names.validate_dns1123_label(segment, path))
    if not _has_request(ref, known):
        errs.append(invalid(path, ref, REQUEST_REF_MSG))
    return errs


def _request_refs(parent: Obj, path: str, known: RequestNames, errs: Causes) -> Causes:
    refs = get_list(parent, "requests", path, errs)
    return _set(refs, DEVICE_REQUESTS_MAX, lambda r, p: _request_ref(r, p, known), _self,
                child(path, "requests"))


def validate_device_claim(devices: Obj, path: str) -> Causes:
    """``validateDeviceClaim``: requests, constraints and config of a claim spec."""
    errs: Causes = []
    known = request_names(devices)
    errs.extend(_set(get_list(devices, "requests", path, errs), DEVICE_REQUESTS_MAX,
                     _device_request, _name_of("name"), child(path, "requests"), "name"))
    errs.extend(_slice(get_list(devices, "constraints", path, errs), DEVICE_CONSTRAINTS_MAX,
                       lambda c, p: _constraint(c, p, known), child(path, "constraints")))
    errs.extend(_slice(get_list(devices, "config", path, errs), DEVICE_CONFIG_MAX,
                       lambda c, p: _claim_config(c, p, known), child(path, "config")))
    return errs


def _device_request(item: Any, path: str) -> Causes:
    errs: Causes = []
    request = _obj(item, path, errs)
    if request is None:
        return errs
    errs.extend(names.validate_dns1123_label(get_str(request, "name", path, errs),
                                             child(path, "name")))
    subs = get_list(request, "firstAvailable", path, errs)
    exactly = request.get("exactly")
    if not subs and exactly is None:
        errs.append(required(path, "exactly one of `exactly` or `firstAvailable` is required"))
    elif subs and exactly is not None:
        errs.append(invalid(path, None, "exactly one of `exactly` or `firstAvailable` is "
                                        "required, but multiple fields are set"))
    elif subs:
        errs.extend(_set(subs, FIRST_AVAILABLE_MAX, _sub_request, _name_of("name"),
                         child(path, "firstAvailable"), "name"))
    else:
        exact = _obj(exactly, child(path, "exactly"), errs)
        if exact is not None:
            errs.extend(_exact_request(exact, child(path, "exactly")))
    return errs


def _sub_request(item: Any, path: str) -> Causes:
    errs: Causes = []
    sub = _obj(item, path, errs)
    if sub is None:
        return errs
    errs.extend(names.validate_dns1123_label(get_str(sub, "name", path, errs), child(path, "name")))
    errs.extend(_exact_request(sub, path))
    return errs


def _exact_request(request: Obj, path: str) -> Causes:
    """The fields an ``exactly`` request shares with a subrequest."""
    errs: Causes = []
    class_name = get_str(request, "deviceClassName", path, errs)
    if not class_name:
        errs.append(required(child(path, "deviceClassName")))
    else:
        errs.extend(names.validate_dns1123_subdomain(class_name, child(path, "deviceClassName")))
    errs.extend(_selectors(get_list(request, "selectors", path, errs), child(path, "selectors")))
    errs.extend(_allocation_mode(request, path, errs))
    get_bool(request, "adminAccess", path, errs)
    for _, p, toleration in dicts(get_list(request, "tolerations", path, errs),
                                  child(path, "tolerations"), errs):
        errs.extend(_toleration(toleration, p))
    capacity = get_dict(request, "capacity", path, errs)
    requests_path = child(child(path, "capacity"), "requests")
    _map(capacity.get("requests"), -1, lambda k, p: [], _quantity, requests_path, errs)
    return errs


def _allocation_mode(request: Obj, path: str, errs: Causes) -> Causes:
    mode = get_str(request, "allocationMode", path, errs)
    count = get_int(request, "count", path, errs) or 0
    count_path = child(path, "count")
    if mode == "All":
        if count != 0:
            return [invalid(count_path, count, "must not be specified when allocationMode is 'All'")]
    elif mode == "ExactCount":
        if count <= 0:
            return [invalid(count_path, count, "must be greater than zero")]
    else:
        return [not_supported(child(path, "allocationMode"), mode, ALLOCATION_MODES)]
    return []


def _selectors(selectors: list[Any], path: str, stored: bool = False) -> Causes:
    return _slice(selectors, DEVICE_SELECTORS_MAX, lambda s, p: _selector(s, p, stored), path)


def _cel_problem(expression: str) -> str | None:
    """Why a selector expression does not compile, in cel-go's words (None when it does).
    The scheduler evaluates with the same environment, so what passes here also runs there."""
    # loaded here, not at import: the CEL library (celpy and lark, some 180 modules) is for
    # the processes that validate DRA selectors, not every one that imports the registry
    from kvert.api.cel import CELError, compile_selector
    try:
        compile_selector(expression)
    except CELError as e:
        return str(e)
    return None


def _selector(item: Any, path: str, stored: bool = False) -> Causes:
    errs: Causes = []
    selector = _obj(item, path, errs)
    if selector is None:
        return errs
    cel = selector.get("cel")
    if cel is None:
        return errs + [required(child(path, "cel"))]
    cel_obj = _obj(cel, child(path, "cel"), errs)
    if cel_obj is None:
        return errs
    expr_path = child(child(path, "cel"), "expression")
    expression = get_str(cel_obj, "expression", child(path, "cel"), errs)
    if stored:
        return errs   # valid when it was stored, so still valid: no re-compiling
    if not expression:
        errs.append(required(expr_path))
    elif len(expression) > CEL_EXPRESSION_MAX_LENGTH:
        errs.append(too_long(expr_path, CEL_EXPRESSION_MAX_LENGTH))
    else:
        problem = _cel_problem(expression)
        if problem is not None:
            errs.append(invalid(expr_path, expression, problem))
    return errs


def _constraint(item: Any, path: str, known: RequestNames) -> Causes:
    errs: Causes = []
    constraint = _obj(item, path, errs)
    if constraint is None:
        return errs
    errs.extend(_request_refs(constraint, path, known, errs))
    match = constraint.get("matchAttribute")
    distinct = constraint.get("distinctAttribute")
    if match is not None:
        errs.extend(validate_fully_qualified_name(get_str(constraint, "matchAttribute", path, errs),
                                                  child(path, "matchAttribute")))
    elif distinct is not None:
        errs.extend(validate_fully_qualified_name(
            get_str(constraint, "distinctAttribute", path, errs), child(path, "distinctAttribute")))
    else:
        errs.append(required(child(path, "matchAttribute")))
    return errs


def _claim_config(item: Any, path: str, known: RequestNames) -> Causes:
    errs: Causes = []
    config = _obj(item, path, errs)
    if config is None:
        return errs
    errs.extend(_request_refs(config, path, known, errs))
    errs.extend(_device_configuration(config, path))
    return errs


def _device_configuration(config: Obj, path: str) -> Causes:
    opaque_path = child(path, "opaque")
    if config.get("opaque") is None:
        return [required(opaque_path)]
    errs: Causes = []
    opaque = _obj(config.get("opaque"), opaque_path, errs)
    if opaque is None:
        return errs
    errs.extend(validate_driver_name(get_str(opaque, "driver", opaque_path, errs),
                                     child(opaque_path, "driver")))
    errs.extend(_raw_extension(opaque.get("parameters"), child(opaque_path, "parameters"),
                               OPAQUE_PARAMETERS_MAX_LENGTH))
    return errs


def _raw_extension(value: Any, path: str, max_length: int) -> Causes:
    """``validateRawExtension``: a JSON object of at most ``max_length`` bytes."""
    if value is None:
        return [required(path)]
    if len(json.dumps(value, separators=(",", ":"))) > max_length:
        return [too_long(path, max_length)]
    if not isinstance(value, dict):
        return [invalid(path, "<value omitted>", "must be a valid JSON object")]
    return []


def _toleration(toleration: Obj, path: str) -> Causes:
    errs: Causes = []
    tkey = get_str(toleration, "key", path, errs)
    if tkey:
        errs.extend(names.validate_label_name(tkey, child(path, "key")))
    operator = get_str(toleration, "operator", path, errs)
    value = get_str(toleration, "value", path, errs)
    if operator == "Exists":
        if value:
            errs.append(invalid(child(path, "value"), value, "must be empty for operator `Exists`"))
    elif operator == "Equal":
        errs.extend(_label_value(value, child(path, "value")))
    elif operator == "":
        errs.append(required(child(path, "operator")))
    else:
        errs.append(not_supported(child(path, "operator"), operator, TOLERATION_OPERATORS))
    effect = get_str(toleration, "effect", path, errs)
    if effect and effect not in TAINT_EFFECTS:
        errs.append(not_supported(child(path, "effect"), effect, TAINT_EFFECTS))
    get_int(toleration, "tolerationSeconds", path, errs)
    return errs


def _taint(item: Any, path: str) -> Causes:
    errs: Causes = []
    taint = _obj(item, path, errs)
    if taint is None:
        return errs
    tkey = get_str(taint, "key", path, errs)
    if not tkey:
        errs.append(required(child(path, "key")))
    errs.extend(names.validate_label_name(tkey, child(path, "key")))
    value = get_str(taint, "value", path, errs)
    if value:
        errs.extend(_label_value(value, child(path, "value")))
    effect = get_str(taint, "effect", path, errs)
    if not effect:
        errs.append(required(child(path, "effect")))
    elif effect not in TAINT_EFFECTS:
        errs.append(not_supported(child(path, "effect"), effect, TAINT_EFFECTS))
    return errs


def _quantity(value: Any, path: str) -> Causes:
    errs: Causes = []
    parse(value, path, errs)
    return errs


# -- ResourceClaim ------------------------------------------------------------------------------

def validate_resource_claim(claim: Obj) -> Causes:
    errs = validate_object_meta(claim, namespaced=True)
    errs.extend(_claim_spec(get_dict(claim, "spec", "", errs), "spec"))
    return errs


def _claim_spec(spec: Obj, path: str) -> Causes:
    errs: Causes = []
    devices = get_dict(spec, "devices", path, errs)
    errs.extend(validate_device_claim(devices, child(path, "devices")))
    return errs


def validate_resource_claim_update(new: Obj, old: Obj) -> Causes:
    """The spec is immutable; only the change is reported (it was valid when stored)."""
    errs = validate_object_meta_update(new, old)
    if (new.get("spec") or {}) != (old.get("spec") or {}):
        errs.append(immutable("spec", new.get("spec")))
    return errs


def validate_resource_claim_status_update(new: Obj, old: Obj) -> Causes:
    errs = validate_object_meta_update(new, old)
    spec = dict_field(new, "spec")
    known = request_names(spec.get("devices"))
    status = get_dict(new, "status", "", errs)
    old_status = dict_field(old, "status")
    deleting = bool((new.get("metadata") or {}).get("deletionTimestamp"))

    reserved = get_list(status, "reservedFor", "status", errs)
    errs.extend(_set(reserved, RESERVED_FOR_MAX, _consumer, _name_of("uid"),
                     "status.reservedFor", "uid"))
    allocation = status.get("allocation")
    old_allocation = old_status.get("allocation")
    errs.extend(_set(get_list(status, "devices", "status", errs), -1,
                     lambda d, p: _device_status(d, p, allocation), _shared_device_id,
                     "status.devices"))
    if reserved:
        if allocation is None:
            errs.append(forbidden("status.reservedFor",
                                  "may not be specified when `allocated` is not set"))
        elif deleting:
            before = {_consumer_key(r) for r in old_status.get("reservedFor") or []}
            if any(_consumer_key(r) not in before for r in reserved):
                errs.append(forbidden("status.reservedFor", "new entries may not be added while "
                                      "`deallocationRequested` or `deletionTimestamp` are set"))
    if old_allocation is not None and allocation is not None:
        if allocation != old_allocation:
            errs.append(immutable("status.allocation", allocation))
    elif allocation is not None:
        result = _obj(allocation, "status.allocation", errs)
        if result is not None:
            errs.extend(_allocation_result(result, "status.allocation", known))
    return errs


def _consumer_key(ref: Any) -> str:
    return json.dumps(ref, sort_keys=True)


def _consumer(item: Any, path: str) -> Causes:
    errs: Causes = []
    ref = _obj(item, path, errs)
    if ref is None:
        return errs
    for field in ("resource", "name", "uid"):
        if not get_str(ref, field, path, errs):
            errs.append(required(child(path, field)))
    get_str(ref, "apiGroup", path, errs)
    return errs


def _allocation_result(allocation: Obj, path: str, known: RequestNames) -> Causes:
    errs: Causes = []
    devices_path = child(path, "devices")
    devices = get_dict(allocation, "devices", path, errs)
    errs.extend(_slice(get_list(devices, "results", devices_path, errs), ALLOCATION_RESULTS_MAX,
                       lambda r, p: _request_result(r, p, known), child(devices_path, "results")))
    errs.extend(_slice(get_list(devices, "config", devices_path, errs), 2 * DEVICE_CONFIG_MAX,
                       lambda c, p: _allocation_config(c, p, known), child(devices_path, "config")))
    if allocation.get("nodeSelector") is not None:
        errs.extend(validate_node_selector(allocation["nodeSelector"], child(path, "nodeSelector")))
    return errs


def _request_result(item: Any, path: str, known: RequestNames) -> Causes:
    errs: Causes = []
    result = _obj(item, path, errs)
    if result is None:
        return errs
    errs.extend(_request_ref(get_str(result, "request", path, errs), child(path, "request"), known))
    errs.extend(validate_driver_name(get_str(result, "driver", path, errs), child(path, "driver")))
    errs.extend(validate_pool_name(get_str(result, "pool", path, errs), child(path, "pool")))
    errs.extend(names.validate_dns1123_label(get_str(result, "device", path, errs),
                                             child(path, "device")))
    errs.extend(_binding_conditions(result, path, errs))
    for _, p, toleration in dicts(get_list(result, "tolerations", path, errs),
                                  child(path, "tolerations"), errs):
        errs.extend(_toleration(toleration, p))
    share_id = get_str(result, "shareID", path, errs)
    if "shareID" in result and result.get("shareID") is not None:
        errs.extend(_uid(share_id, child(path, "shareID")))
    _map(result.get("consumedCapacity"), -1, lambda k, p: [], _quantity,
         child(path, "consumedCapacity"), errs)
    return errs


def _allocation_config(item: Any, path: str, known: RequestNames) -> Causes:
    errs: Causes = []
    config = _obj(item, path, errs)
    if config is None:
        return errs
    source = get_str(config, "source", path, errs)
    if not source:
        errs.append(required(child(path, "source")))
    elif source not in CONFIG_SOURCES:
        errs.append(not_supported(child(path, "source"), source, CONFIG_SOURCES))
    errs.extend(_request_refs(config, path, known, errs))
    errs.extend(_device_configuration(config, path))
    return errs


def _device_id(item: Any) -> str | None:
    if not isinstance(item, dict):
        return None
    return "/".join(str(item.get(f) or "") for f in ("driver", "pool", "device"))


def _shared_device_id(item: Any) -> str | None:
    device = _device_id(item)
    if device is None:
        return None
    share = item.get("shareID")
    return f"{device}/{share}" if share else device


def _allocated(allocation: Any) -> set[str]:
    results = ((allocation or {}).get("devices") or {}).get("results") \
        if isinstance(allocation, dict) else None
    return {_shared_device_id(r) or "" for r in results or [] if isinstance(r, dict)}


def _device_status(item: Any, path: str, allocation: Any) -> Causes:
    errs: Causes = []
    device = _obj(item, path, errs)
    if device is None:
        return errs
    errs.extend(validate_driver_name(get_str(device, "driver", path, errs), child(path, "driver")))
    errs.extend(validate_pool_name(get_str(device, "pool", path, errs), child(path, "pool")))
    errs.extend(names.validate_dns1123_label(get_str(device, "device", path, errs),
                                             child(path, "device")))
    if device.get("shareID") is not None:
        errs.extend(_uid(get_str(device, "shareID", path, errs), child(path, "shareID")))
    shared = _shared_device_id(device) or ""
    if shared not in _allocated(allocation):
        # A SharedDeviceID prints through its String method: unquoted.
        errs.append(Cause(path, f"Invalid value: {shared}: must be an allocated device in the "
                                "claim", "FieldValueInvalid"))
    conditions = get_list(device, "conditions", path, errs)
    if len(conditions) > DEVICE_STATUS_MAX_CONDITIONS:
        errs.append(too_many(child(path, "conditions"), len(conditions),
                             DEVICE_STATUS_MAX_CONDITIONS))
    if device.get("data") is not None:
        errs.extend(_raw_extension(device["data"], child(path, "data"),
                                   DEVICE_STATUS_DATA_MAX_LENGTH))
    network = get_dict(device, "networkData", path, errs)
    net_path = child(path, "networkData")
    if names.nbytes(get_str(network, "interfaceName", net_path, errs)) > NETWORK_INTERFACE_NAME_MAX:
        errs.append(too_long(child(net_path, "interfaceName"), NETWORK_INTERFACE_NAME_MAX))
    if names.nbytes(get_str(network, "hardwareAddress", net_path, errs)) > \
            NETWORK_HARDWARE_ADDRESS_MAX:
        errs.append(too_long(child(net_path, "hardwareAddress"), NETWORK_HARDWARE_ADDRESS_MAX))
    errs.extend(_set(get_list(network, "ips", net_path, errs), NETWORK_MAX_IPS, _interface_address,
                     _self, child(net_path, "ips")))
    return errs


def _interface_address(value: Any, path: str) -> Causes:
    import ipaddress

    if not isinstance(value, str):
        return [type_error(path, value, "string")]
    try:
        ipaddress.ip_interface(value)
    except ValueError:
        return [invalid(path, value, "must be a valid address in CIDR form, (e.g. 10.9.8.7/24 or "
                                     "2001:db8::1/64)")]
    return []


def _binding_conditions(obj: Obj, path: str, errs: Causes) -> Causes:
    out: Causes = []
    conditions = [c for c in get_list(obj, "bindingConditions", path, errs) if isinstance(c, str)]
    failures = [c for c in get_list(obj, "bindingFailureConditions", path, errs)
                if isinstance(c, str)]
    cond_path, fail_path = child(path, "bindingConditions"), child(path, "bindingFailureConditions")
    out.extend(_slice(conditions, BINDING_CONDITIONS_MAX, names.validate_label_name, cond_path))
    out.extend(_slice(failures, BINDING_CONDITIONS_MAX, names.validate_label_name, fail_path))
    seen: set[str] = set()
    for i, c in enumerate(conditions):
        if c in seen:
            out.append(duplicate(index(cond_path, i), c))
        seen.add(c)
    seen_failures: set[str] = set()
    for i, c in enumerate(failures):
        if c in seen_failures:
            out.append(duplicate(index(fail_path, i), c))
        seen_failures.add(c)
        if c in seen:
            out.append(invalid(index(fail_path, i), c, "bindingFailureConditions must not overlap "
                                                       "with bindingConditions"))
    if not conditions and failures:
        out.append(invalid(cond_path, conditions, "bindingConditions are required to use "
                                                  "bindingFailureConditions"))
    if not failures and conditions:
        out.append(invalid(fail_path, failures, "bindingFailureConditions are required to use "
                                                "bindingConditions"))
    return out


# -- ResourceClaimTemplate ------------------------------------------------------------------------

def validate_resource_claim_template(template: Obj) -> Causes:
    errs = validate_object_meta(template, namespaced=True)
    spec = get_dict(template, "spec", "", errs)
    errs.extend(_template_object_meta(get_dict(spec, "metadata", "spec", errs), "spec.metadata"))
    errs.extend(_claim_spec(get_dict(spec, "spec", "spec", errs), "spec.spec"))
    return errs


def _template_object_meta(meta: Obj, path: str) -> Causes:
    """``ValidateTemplateObjectMeta``: labels and annotations, nothing else."""
    errs: Causes = []
    errs.extend(names.validate_annotations(get_str_map(meta, "annotations", path, errs),
                                           child(path, "annotations")))
    errs.extend(names.validate_labels(get_str_map(meta, "labels", path, errs),
                                      child(path, "labels")))
    for field, value in meta.items():
        if field not in ("labels", "annotations") and value not in (None, "", [], {}, 0):
            errs.append(forbidden(child(path, field), "cannot be set"))
    return errs


def validate_resource_claim_template_update(new: Obj, old: Obj) -> Causes:
    errs = validate_object_meta_update(new, old)
    if (new.get("spec") or {}) != (old.get("spec") or {}):
        errs.append(immutable("spec", new.get("spec")))
    return errs


# -- DeviceClass ---------------------------------------------------------------------------------

def validate_device_class(device_class: Obj) -> Causes:
    errs = validate_object_meta(device_class, namespaced=False)
    errs.extend(_device_class_spec(get_dict(device_class, "spec", "", errs), "spec"))
    return errs


def _device_class_spec(spec: Obj, path: str, old_spec: Obj | None = None) -> Causes:
    errs: Causes = []
    # Unchanged selectors are not compiled again (any change, even reordering, is).
    stored = old_spec is not None and old_spec.get("selectors") == spec.get("selectors")
    errs.extend(_selectors(get_list(spec, "selectors", path, errs), child(path, "selectors"),
                           stored))
    errs.extend(_slice(get_list(spec, "config", path, errs), DEVICE_CONFIG_MAX,
                       lambda c, p: _device_configuration(c, p) if isinstance(c, dict)
                       else [type_error(p, c, "object")], child(path, "config")))
    if spec.get("extendedResourceName") is not None:
        name = get_str(spec, "extendedResourceName", path, errs)
        if not is_extended(name):
            errs.append(invalid(child(path, "extendedResourceName"), name,
                                "must be a valid extended resource name"))
    return errs


def validate_device_class_update(new: Obj, old: Obj) -> Causes:
    errs = validate_object_meta_update(new, old)
    old_spec = dict_field(old, "spec")
    errs.extend(_device_class_spec(get_dict(new, "spec", "", errs), "spec", old_spec))
    return errs


# -- ResourceSlice ---------------------------------------------------------------------------------

def validate_resource_slice(slice_: Obj) -> Causes:
    errs = validate_object_meta(slice_, namespaced=False)
    errs.extend(_slice_spec(get_dict(slice_, "spec", "", errs), None, "spec"))
    return errs


def validate_resource_slice_update(new: Obj, old: Obj) -> Causes:
    errs = validate_object_meta_update(new, old)
    old_spec = dict_field(old, "spec")
    errs.extend(_slice_spec(get_dict(new, "spec", "", errs), old_spec, "spec"))
    return errs


def _slice_spec(spec: Obj, old_spec: Obj | None, path: str) -> Causes:
    errs: Causes = []
    driver = get_str(spec, "driver", path, errs)
    errs.extend(validate_driver_name(driver, child(path, "driver")))
    pool_path = child(path, "pool")
    pool = get_dict(spec, "pool", path, errs)
    errs.extend(validate_pool_name(get_str(pool, "name", pool_path, errs), child(pool_path, "name")))
    count = get_int(pool, "resourceSliceCount", pool_path, errs) or 0
    if count <= 0:
        errs.append(invalid(child(pool_path, "resourceSliceCount"), count,
                            "must be greater than zero"))
    generation = get_int(pool, "generation", pool_path, errs) or 0
    if generation < 0:
        errs.append(invalid(child(pool_path, "generation"), generation,
                            "must be greater than or equal to zero"))
    if old_spec is not None:
        old_pool = dict_field(old_spec, "pool")
        for value, old_value, p in ((pool.get("name"), old_pool.get("name"), child(pool_path, "name")),
                                    (spec.get("driver"), old_spec.get("driver"), child(path, "driver")),
                                    (spec.get("nodeName"), old_spec.get("nodeName"),
                                     child(path, "nodeName"))):
            if value != old_value:
                errs.append(immutable(p, value))

    set_fields = []
    if spec.get("nodeName") is not None:
        node_name = get_str(spec, "nodeName", path, errs)
        if node_name:
            set_fields.append("`nodeName`")
            errs.extend(names.validate_dns1123_subdomain(node_name, child(path, "nodeName")))
        else:
            errs.append(invalid(child(path, "nodeName"), "", "must be either unset or set to a "
                                                             "non-empty string"))
    if spec.get("nodeSelector") is not None:
        set_fields.append("`nodeSelector`")
        selector_path = child(path, "nodeSelector")
        errs.extend(validate_node_selector(spec["nodeSelector"], selector_path))
        terms = spec["nodeSelector"].get("nodeSelectorTerms") \
            if isinstance(spec["nodeSelector"], dict) else None
        if not isinstance(terms, list) or len(terms) != 1:
            errs.append(invalid(child(selector_path, "nodeSelectorTerms"), terms or [],
                                "must have exactly one node selector term"))
    for field in ("allNodes", "perDeviceNodeSelection"):
        flag = get_bool(spec, field, path, errs)
        if flag is True:
            set_fields.append(f"`{field}`")
        elif flag is False:
            errs.append(invalid(child(path, field), False, "must be either unset or set to true"))
    if not set_fields:
        errs.append(required(path, NODE_SELECTION_MSG))
    elif len(set_fields) > 1:
        errs.append(invalid(path, "{" + ", ".join(set_fields) + "}",
                            NODE_SELECTION_MSG + ", but multiple fields are set"))

    if spec.get("sharedCounters") is not None and spec.get("devices") is not None:
        errs.append(invalid(path, "", "only one of `sharedCounters` or `devices` is allowed"))

    devices = get_list(spec, "devices", path, errs)
    advanced = any(isinstance(d, dict) and (d.get("taints") or d.get("consumesCounters")
                                            or _has_list_attribute(d)) for d in devices)
    per_device = spec.get("perDeviceNodeSelection") is True
    old_devices = {d.get("name"): d for d in (old_spec or {}).get("devices") or []
                   if isinstance(d, dict)}
    errs.extend(_set(devices, SLICE_MAX_DEVICES_ADVANCED if advanced else SLICE_MAX_DEVICES,
                     lambda d, p: _device(d, p, per_device, old_devices), _name_of("name"),
                     child(path, "devices"), "name"))
    errs.extend(_set(get_list(spec, "sharedCounters", path, errs), SLICE_MAX_COUNTER_SETS,
                     _counter_set, _name_of("name"), child(path, "sharedCounters"), "name"))
    return errs


def _has_list_attribute(device: Obj) -> bool:
    attributes = device.get("attributes")
    return isinstance(attributes, dict) and any(
        isinstance(a, dict) and any(a.get(f) is not None for f in ("bools", "ints", "strings",
                                                                  "versions"))
        for a in attributes.values())


def _counter_name(name: Any, path: str) -> Causes:
    if not isinstance(name, str):
        return [type_error(path, name, "string")]
    return names.validate_dns1123_label(name, path)


def _counter(value: Any, path: str) -> Causes:
    errs: Causes = []
    counter = _obj(value, path, errs)
    if counter is not None:
        if counter.get("value") is None:
            errs.append(required(child(path, "value")))
        else:
            parse(counter.get("value"), child(path, "value"), errs)
    return errs


def _named_counters(item: Any, path: str, name_field: str, limit: int) -> Causes:
    """A CounterSet (``name``) or a DeviceCounterConsumption (``counterSet``): a counter
    name and its counters."""
    errs: Causes = []
    obj = _obj(item, path, errs)
    if obj is None:
        return errs
    name = get_str(obj, name_field, path, errs)
    if not name:
        errs.append(required(child(path, name_field)))
    else:
        errs.extend(_counter_name(name, child(path, name_field)))
    counters = obj.get("counters")
    if not counters:
        errs.append(required(child(path, "counters")))
    else:
        _map(counters, limit, _counter_name, _counter, child(path, "counters"), errs)
    return errs


def _counter_set(item: Any, path: str) -> Causes:
    return _named_counters(item, path, "name", SLICE_MAX_COUNTERS_PER_SET)


def _counter_consumption(item: Any, path: str) -> Causes:
    return _named_counters(item, path, "counterSet", SLICE_MAX_COUNTERS_PER_CONSUMPTION)


def _attribute_value_count(device: Obj) -> int:
    total = 0
    for attribute in (device.get("attributes") or {}).values():
        if not isinstance(attribute, dict):
            continue
        lists = [attribute.get(f) for f in ("bools", "ints", "strings", "versions")]
        n = sum(len(v) for v in lists if isinstance(v, list))
        total += n or 1
    return total


def _device(item: Any, path: str, per_device: bool, old_devices: dict[Any, Obj]) -> Causes:
    errs: Causes = []
    device = _obj(item, path, errs)
    if device is None:
        return errs
    errs.extend(names.validate_dns1123_label(get_str(device, "name", path, errs),
                                             child(path, "name")))
    attributes = get_dict(device, "attributes", path, errs)
    capacity = get_dict(device, "capacity", path, errs)
    combined = len(attributes) + len(capacity)
    if combined > SLICE_MAX_ATTRIBUTES_AND_CAPACITIES:
        errs.append(invalid(path, combined, "the total number of attributes and capacities must "
                                            f"not exceed {SLICE_MAX_ATTRIBUTES_AND_CAPACITIES}"))
    values = _attribute_value_count(device)
    if values > SLICE_MAX_ATTRIBUTE_VALUES:
        errs.append(invalid(path, values, "the total number of attribute values must not exceed "
                                          f"{SLICE_MAX_ATTRIBUTE_VALUES}"))
    _map(attributes, -1, validate_qualified_name, _attribute, child(path, "attributes"), errs)
    old = old_devices.get(device.get("name"))
    multiple = device.get("allowMultipleAllocations") is True
    if old is None or old.get("capacity") != device.get("capacity"):
        _map(capacity, -1, validate_qualified_name, lambda c, p: _capacity(c, p, multiple),
             child(path, "capacity"), errs)
    if old is None or old.get("taints") != device.get("taints"):
        errs.extend(_slice(get_list(device, "taints", path, errs), DEVICE_TAINTS_MAX, _taint,
                           child(path, "taints")))
    errs.extend(_set(get_list(device, "consumesCounters", path, errs),
                     SLICE_MAX_COUNTER_CONSUMPTIONS_PER_DEVICE, _counter_consumption,
                     _name_of("counterSet"), child(path, "consumesCounters"), "counterSet"))
    has_node_field = any(device.get(f) is not None for f in ("nodeName", "nodeSelector", "allNodes"))
    if per_device:
        set_fields = []
        if device.get("nodeName") is not None:
            node_name = get_str(device, "nodeName", path, errs)
            if node_name:
                set_fields.append("`nodeName`")
                errs.extend(names.validate_dns1123_subdomain(node_name, child(path, "nodeName")))
            else:
                errs.append(invalid(child(path, "nodeName"), "", "must not be empty"))
        if device.get("nodeSelector") is not None:
            set_fields.append("`nodeSelector`")
            errs.extend(validate_node_selector(device["nodeSelector"], child(path, "nodeSelector")))
        all_nodes = get_bool(device, "allNodes", path, errs)
        if all_nodes is True:
            set_fields.append("`allNodes`")
        elif all_nodes is False:
            errs.append(invalid(child(path, "allNodes"), False,
                                "must be either unset or set to true"))
        if not set_fields:
            errs.append(required(path, DEVICE_NODE_SELECTION_MSG))
        elif len(set_fields) > 1:
            errs.append(invalid(path, "{" + ", ".join(set_fields) + "}", DEVICE_NODE_SELECTION_MSG))
    elif has_node_field:
        errs.append(invalid(path, None, "`nodeName`, `nodeSelector` and `allNodes` can only be set "
                                        "if `perDeviceNodeSelection` is set to true in the "
                                        "ResourceSlice spec"))
    errs.extend(_binding_conditions(device, path, errs))
    return errs


def _attribute(item: Any, path: str) -> Causes:
    errs: Causes = []
    attribute = _obj(item, path, errs)
    if attribute is None:
        return errs
    present = 0
    for field in ("bool", "int"):
        if attribute.get(field) is not None:
            present += 1
    if attribute.get("bool") is not None:
        get_bool(attribute, "bool", path, errs)
    if attribute.get("int") is not None:
        get_int(attribute, "int", path, errs)
    if attribute.get("string") is not None:
        present += 1
        errs.extend(_string_value(get_str(attribute, "string", path, errs), child(path, "string")))
    if attribute.get("version") is not None:
        present += 1
        errs.extend(_version_value(get_str(attribute, "version", path, errs),
                                   child(path, "version")))
    for field, check in (("bools", None), ("ints", None), ("strings", _string_value),
                         ("versions", _version_value)):
        if attribute.get(field) is None:
            continue
        present += 1
        values = get_list(attribute, field, path, errs)
        if not values:
            errs.append(invalid(child(path, field), [], "must not be empty if specified"))
        if check is not None:
            for i, v in enumerate(values):
                if isinstance(v, str):
                    errs.extend(check(v, index(child(path, field), i)))
                else:
                    errs.append(type_error(index(child(path, field), i), v, "string"))
    if present == 0:
        errs.append(invalid(path, "", "exactly one value must be specified"))
    elif present > 1:
        errs.append(invalid(path, attribute, "exactly one value must be specified"))
    return errs


def _string_value(value: str, path: str) -> Causes:
    if names.nbytes(value) > DEVICE_ATTRIBUTE_MAX_VALUE_LENGTH:
        return [too_long(path, DEVICE_ATTRIBUTE_MAX_VALUE_LENGTH)]
    return []


def _version_value(value: str, path: str) -> Causes:
    errs: Causes = []
    if not _SEMVER_RE.fullmatch(value):
        errs.append(invalid(path, value, "must be a string compatible with semver.org spec 2.0.0"))
    if names.nbytes(value) > DEVICE_ATTRIBUTE_MAX_VALUE_LENGTH:
        errs.append(too_long(path, DEVICE_ATTRIBUTE_MAX_VALUE_LENGTH))
    return errs


def _capacity(item: Any, path: str, multiple_allocations: bool) -> Causes:
    errs: Causes = []
    capacity = _obj(item, path, errs)
    if capacity is None:
        return errs
    if capacity.get("value") is None:
        errs.append(required(child(path, "value")))
    else:
        parse(capacity.get("value"), child(path, "value"), errs)
    policy = capacity.get("requestPolicy")
    if policy is None:
        return errs
    policy_path = child(path, "requestPolicy")
    if not multiple_allocations:
        return errs + [forbidden(policy_path, "allowMultipleAllocations must be true")]
    policy = _obj(policy, policy_path, errs)
    if policy is None:
        return errs
    valid_values = get_list(policy, "validValues", policy_path, errs)
    valid_range = policy.get("validRange")
    if valid_values and valid_range is not None:
        errs.append(forbidden(policy_path, 'exactly one policy can be specified, cannot specify '
                                           '"validValues" and "validRange" at the same time'))
    elif (valid_values or valid_range is not None) and policy.get("default") is None:
        which = "validValues" if valid_values else "validRange"
        errs.append(required(child(policy_path, "default"), f"required when {which} is defined"))
    return errs
