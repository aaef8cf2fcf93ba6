"""Node validation (``ValidateNode``, ``ValidateNodeUpdate``).

Taint errors are reported under ``metadata.taints[i]``, as upstream's ValidateNode and
ValidateNodeUpdate do (they pass the ``metadata`` path to validateNodeTaints): clients and
tests compare field paths, so the quirk is kept.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from kvert.api.errors import Cause
from kvert.api.types import Obj

from . import names
from .common import (
    Causes,
    dict_field,
    dicts,
    duplicate,
    forbidden,
    get_bool,
    get_dict,
    get_list,
    get_str,
    invalid,
    show,
    type_error,
    validate_time,
)
from .meta import validate_object_meta, validate_object_meta_update
from .pod import validate_taint_effect
from .resourcelist import parse_resource_list, validate_resource_name

# upstream: fldPath := field.NewPath("metadata"); validateNodeTaints(node.Spec.Taints, fldPath.Child("taints"))
_TAINTS_PATH = "metadata.taints"
_CIDR_MSG = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"
_PODCIDR_CHANGE_MSG = 'node updates may not change podCIDR except from "" to valid'
_PROVIDER_ID_CHANGE_MSG = 'node updates may not change providerID except from "" to valid'


def validate_node(node: Obj) -> Causes:
    errs = validate_object_meta(node, namespaced=False)
    spec = get_dict(node, "spec", "", errs)
    errs.extend(validate_taints(get_list(spec, "taints", "spec", errs), _TAINTS_PATH))
    get_bool(spec, "unschedulable", "spec", errs)
    errs.extend(_validate_node_resources(node))
    errs.extend(_validate_pod_cidrs(spec, errs))
    return errs


def validate_node_update(new: Obj, old: Obj) -> Causes:
    errs = validate_object_meta_update(new, old)
    spec = get_dict(new, "spec", "", errs)
    old_spec = dict_field(old, "spec")
    errs.extend(validate_taints(get_list(spec, "taints", "spec", errs), _TAINTS_PATH))
    get_bool(spec, "unschedulable", "spec", errs)
    errs.extend(_validate_node_resources(new))
    errs.extend(_validate_pod_cidrs(spec, errs))
    old_cidrs = _cidrs(old_spec)
    if old_cidrs and old_cidrs != _cidrs(spec):
        errs.append(forbidden("spec.podCIDRs", _PODCIDR_CHANGE_MSG))
    old_provider = old_spec.get("providerID") or ""
    if old_provider and old_provider != (spec.get("providerID") or ""):
        errs.append(forbidden("spec.providerID", _PROVIDER_ID_CHANGE_MSG))
    if (spec.get("externalID") or "") != (old_spec.get("externalID") or ""):
        errs.append(forbidden("spec.externalID", "may not be updated"))
    errs.extend(_validate_addresses(new))
    return errs


def validate_node_status_update(new: Obj, old: Obj) -> Causes:
    """The status subresource: metadata, capacity/allocatable, addresses."""
    errs = validate_object_meta_update(new, old)
    errs.extend(_validate_node_resources(new))
    errs.extend(_validate_addresses(new))
    return errs


def validate_taints(taints: list[Any], path: str) -> Causes:
    """``validateNodeTaints``: key and value syntax, a known effect, unique (key, effect)."""
    errs: Causes = []
    seen: set[tuple[str, str]] = set()
    for _, p, taint in dicts(taints, path, errs):
        tkey = get_str(taint, "key", p, errs)
        value = get_str(taint, "value", p, errs)
        effect = get_str(taint, "effect", p, errs)
        errs.extend(names.validate_label_name(tkey, f"{p}.key"))
        msgs = names.is_label_value(value)
        if msgs:
            errs.append(invalid(f"{p}.value", value, ";".join(msgs)))
        errs.extend(validate_taint_effect(effect, f"{p}.effect", allow_empty=False))
        if (tkey, effect) in seen:
            errs.append(duplicate(p, taint, "taints must be unique by key and effect pair"))
            continue
        seen.add((tkey, effect))
        validate_time(taint, "timeAdded", p, errs)
    return errs


def _validate_node_resources(node: Obj) -> Causes:
    errs: Causes = []
    status = get_dict(node, "status", "", errs)
    for field in ("capacity", "allocatable"):
        if field not in status:
            continue
        found: Causes = []
        parse_resource_list(status.get(field), f"status.{field}", found,
                            name_check=validate_resource_name)
        # Kubernetes reports these as status.capacity.cpu (a dotted path, not a key).
        prefix = f"status.{field}["
        for c in found:
            if c.field.startswith(prefix) and c.field.endswith("]"):
                c = Cause(f"status.{field}.{c.field[len(prefix):-1]}", c.message, c.reason)
            errs.append(c)
    return errs


def _cidrs(spec: Obj) -> list[str]:
    cidrs = spec.get("podCIDRs")
    if isinstance(cidrs, list) and cidrs:
        return [c for c in cidrs]
    if spec.get("podCIDR"):
        return [spec["podCIDR"]]
    return []


def _validate_pod_cidrs(spec: Obj, errs: Causes) -> Causes:
    out: Causes = []
    cidrs = get_list(spec, "podCIDRs", "spec", errs)
    pod_cidr = get_str(spec, "podCIDR", "spec", errs)
    if pod_cidr and cidrs and cidrs[0] != pod_cidr:
        out.append(invalid("spec.podCIDRs", cidrs, "first value must match `podCIDR`"))
    if pod_cidr and not cidrs:
        cidrs = [pod_cidr]
    families = []
    valid = True
    for i, cidr in enumerate(cidrs):
        network = parse_cidr(cidr)
        if network is None:
            valid = False
            out.append(invalid(f"spec.podCIDRs[{i}]", cidr if isinstance(cidr, str) else show(cidr),
                               _CIDR_MSG))
        else:
            families.append(network.version)
    if len(cidrs) > 1 and valid:
        if len(cidrs) > 2 or len(set(families)) != 2:
            out.append(invalid("spec.podCIDRs", cidrs,
                               "may specify no more than one CIDR for each IP family"))
        seen: set[str] = set()
        for i, cidr in enumerate(cidrs):
            if cidr in seen:
                out.append(duplicate(f"spec.podCIDRs[{i}]", cidr))
            seen.add(cidr)
    return out


def parse_cidr(value: Any) -> ipaddress.IPv4Network | ipaddress.IPv6Network | None:
    """A CIDR as ``netutils.ParseCIDRSloppy`` reads it (host bits allowed), or None."""
    if not isinstance(value, str) or "/" not in value:
        return None
    try:
        return ipaddress.ip_network(value, strict=False)
    except ValueError:
        return None


def _validate_addresses(node: Obj) -> Causes:
    errs: Causes = []
    status = dict_field(node, "status")
    addresses = status.get("addresses")
    if not isinstance(addresses, list):
        if addresses is not None:
            errs.append(type_error("status.addresses", addresses, "array"))
        return errs
    seen: list[Any] = []
    for i, address in enumerate(addresses):
        if address in seen:
            errs.append(duplicate(f"status.addresses[{i}]", address))
        seen.append(address)
    return errs
