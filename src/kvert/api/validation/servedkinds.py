"""Validation of the kinds served for issue 28 so that kvert lists what a 1.36 kube-apiserver
lists: core/v1 PodTemplate and ComponentStatus (``pkg/apis/core/validation``),
networking.k8s.io/v1 ServiceCIDR and IPAddress (``pkg/apis/networking/validation``) and
flowcontrol.apiserver.k8s.io/v1 FlowSchema and PriorityLevelConfiguration
(``pkg/apis/flowcontrol/validation``).

Flow control: the spec's shape is checked (precedence 1..10000, a priority level named, the
distinguisher and the subjects' kinds, a Limited level's limits, an Exempt level's
exemption); upstream's checks of the rules' verbs, groups and URLs, and of the mandatory
``exempt`` and ``catch-all`` objects' specs, are not. kvert's API server does not apply these
objects (its in-flight limits are its own), so they are data only.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from kvert.api.types import Obj

from .common import (
    IMMUTABLE_MSG,
    IS_NEGATIVE_MSG,
    Causes,
    child,
    dict_field,
    dicts,
    forbidden,
    get_dict,
    get_list,
    invalid,
    not_supported,
    required,
    too_many,
)
from .diff import normalized
from .meta import validate_object_meta, validate_object_meta_update
from .pod import validate_pod_template_spec

# ---- core/v1 -------------------------------------------------------------------------------


def validate_pod_template(template: Obj) -> Causes:
    """``ValidatePodTemplate``: the metadata and the pod template spec."""
    errs = validate_object_meta(template, namespaced=True)
    errs.extend(validate_pod_template_spec(template.get("template"), "template"))
    return errs


def validate_pod_template_update(new: Obj, old: Obj) -> Causes:
    """``ValidatePodTemplateUpdate``: the metadata update rules and the new template."""
    errs = validate_object_meta_update(new, old)
    errs.extend(validate_pod_template_spec(new.get("template"), "template"))
    return errs


def validate_component_status(status: Obj) -> Causes:
    """ComponentStatus is read-only (get and list only); nothing reaches these rules but
    the metadata checks."""
    return validate_object_meta(status, namespaced=False)


# ---- networking.k8s.io/v1 ServiceCIDR and IPAddress ------------------------------------------

CIDR_MSG = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"


def _cidr(value: Any, path: str) -> tuple[Causes, int | None]:
    """A CIDR in canonical form (``IsValidCIDR``); its IP family."""
    if not isinstance(value, str) or "/" not in value:
        return [invalid(path, value, CIDR_MSG)], None
    try:
        network = ipaddress.ip_network(value, strict=False)
    except ValueError:
        return [invalid(path, value, CIDR_MSG)], None
    if str(network) != value:
        return [invalid(path, value, f"must be in canonical form (\"{network}\")")], network.version
    return [], network.version


def validate_service_cidr(cidr: Obj) -> Causes:
    """``ValidateServiceCIDR``: one or two CIDRs, valid, canonical, of different families."""
    errs = validate_object_meta(cidr, namespaced=False)
    spec = get_dict(cidr, "spec", "", errs)
    path = "spec.cidrs"
    cidrs = get_list(spec, "cidrs", "spec", errs)
    if not cidrs:
        errs.append(required(path, "at least one CIDR required"))
        return errs
    if len(cidrs) > 2:
        errs.append(invalid(path, cidrs, "may only hold up to 2 values"))
        return errs
    families = []
    for i, value in enumerate(cidrs):
        found, family = _cidr(value, f"{path}[{i}]")
        errs.extend(found)
        families.append(family)
    if len(cidrs) == 2 and None not in families and families[0] == families[1]:
        errs.append(invalid(path, cidrs, "may specify no more than one IP for each IP family, "
                            "i.e 192.168.0.0/24 and 2001:db8::/64"))
    return errs


def validate_service_cidr_update(new: Obj, old: Obj) -> Causes:
    """``ValidateServiceCIDRUpdate``: the CIDRs are immutable, but a single-stack range may
    gain a second family (1.33, upgrade to dual-stack)."""
    errs = validate_object_meta_update(new, old) + [
        c for c in validate_service_cidr(new) if not c.field.startswith("metadata")]
    new_cidrs = dict_field(new, "spec").get("cidrs") or []
    old_cidrs = dict_field(old, "spec").get("cidrs") or []
    if new_cidrs == old_cidrs:
        return errs
    if len(old_cidrs) == 1 and len(new_cidrs) == 2 and new_cidrs[0] == old_cidrs[0]:
        return errs
    if len(old_cidrs) == len(new_cidrs) or len(old_cidrs) == 2:
        errs.append(invalid("spec.cidrs", new_cidrs, IMMUTABLE_MSG))
    else:
        errs.append(invalid("spec.cidrs[0]", new_cidrs[0] if new_cidrs else None,
                            "field is immutable: may not change primary CIDR"))
    return errs


def validate_service_cidr_status_update(new: Obj, old: Obj) -> Causes:
    return validate_object_meta_update(new, old)


def ip_address_name(name: str, prefix: bool) -> list[str]:
    """``ValidateIPAddressName``: the name is an IP address in its canonical form."""
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        return ["must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"]
    if str(address) != name:
        return [f'must be in canonical form ("{address}")']
    return []


def validate_ip_address(ip: Obj) -> Causes:
    """``ValidateIPAddress``: a canonical IP as the name, a parent reference with a
    resource and a name."""
    errs = validate_object_meta(ip, namespaced=False, name_fn=ip_address_name)
    spec = get_dict(ip, "spec", "", errs)
    ref = spec.get("parentRef")
    if not isinstance(ref, dict):
        errs.append(required("spec.parentRef"))
        return errs
    if not ref.get("resource"):
        errs.append(required("spec.parentRef.resource"))
    if not ref.get("name"):
        errs.append(required("spec.parentRef.name"))
    return errs


def validate_ip_address_update(new: Obj, old: Obj) -> Causes:
    """``ValidateIPAddressUpdate``: the parent reference is immutable."""
    errs = validate_object_meta_update(new, old)
    new_ref = dict_field(new, "spec").get("parentRef")
    if normalized(new_ref) != normalized(dict_field(old, "spec").get("parentRef")):
        errs.append(invalid("spec.parentRef", new_ref, IMMUTABLE_MSG))
    return errs


# ---- flowcontrol.apiserver.k8s.io/v1 --------------------------------------------------------

DISTINGUISHERS = ("ByNamespace", "ByUser")
SUBJECT_KINDS = ("Group", "ServiceAccount", "User")
PRIORITY_LEVEL_TYPES = ("Exempt", "Limited")
LIMIT_RESPONSE_TYPES = ("Queue", "Reject")


def _subject(subject: Obj, path: str) -> Causes:
    kind = subject.get("kind")
    if kind not in SUBJECT_KINDS:
        return [not_supported(child(path, "kind"), kind, SUBJECT_KINDS)]
    member = {"User": "user", "Group": "group", "ServiceAccount": "serviceAccount"}[kind]
    target = subject.get(member)
    if not isinstance(target, dict):
        return [required(child(path, member), f"{member} is required when subject kind is '{kind}'")]
    errs: Causes = []
    if not target.get("name"):
        errs.append(required(child(child(path, member), "name")))
    if kind == "ServiceAccount" and not target.get("namespace"):
        errs.append(required(child(child(path, member), "namespace")))
    return errs


def _flow_schema_spec(spec: Obj, errs: Causes) -> None:
    precedence = spec.get("matchingPrecedence")
    if isinstance(precedence, int) and not 1 <= precedence <= 10000:
        errs.append(invalid("spec.matchingPrecedence", precedence,
                            "must be between 1 and 10000, inclusive"))
    method = spec.get("distinguisherMethod")
    if isinstance(method, dict) and method.get("type") not in DISTINGUISHERS:
        errs.append(not_supported("spec.distinguisherMethod.type", method.get("type"), DISTINGUISHERS))
    level = dict_field(spec, "priorityLevelConfiguration")
    if not level.get("name"):
        errs.append(required("spec.priorityLevelConfiguration.name",
                             "must reference a priority level"))
    for _, rp, rules in dicts(get_list(spec, "rules", "spec", errs), "spec.rules", errs):
        subjects = get_list(rules, "subjects", rp, errs)
        if not subjects:
            errs.append(required(child(rp, "subjects"), "subjects must contain at least one value"))
        for _, sp, subject in dicts(subjects, child(rp, "subjects"), errs):
            errs.extend(_subject(subject, sp))
        if not rules.get("resourceRules") and not rules.get("nonResourceRules"):
            errs.append(required(rp, "at least one of resourceRules and nonResourceRules has to "
                                     "be non-empty"))


def validate_flow_schema(schema: Obj) -> Causes:
    errs = validate_object_meta(schema, namespaced=False)
    _flow_schema_spec(get_dict(schema, "spec", "", errs), errs)
    return errs


def validate_flow_schema_update(new: Obj, old: Obj) -> Causes:
    return validate_object_meta_update(new, old) + [
        c for c in validate_flow_schema(new) if not c.field.startswith("metadata")]


def _percent(value: Any, path: str, errs: Causes) -> None:
    if isinstance(value, int) and not 0 <= value <= 100:
        errs.append(invalid(path, value, "must be between 0 and 100, inclusive"))


def _limited(limited: Obj, path: str, errs: Causes) -> None:
    shares = limited.get("nominalConcurrencyShares")
    if isinstance(shares, int) and shares < 0:
        errs.append(invalid(child(path, "nominalConcurrencyShares"), shares, IS_NEGATIVE_MSG))
    _percent(limited.get("lendablePercent"), child(path, "lendablePercent"), errs)
    response = dict_field(limited, "limitResponse")
    rpath = child(path, "limitResponse")
    kind = response.get("type")
    if kind not in LIMIT_RESPONSE_TYPES:
        errs.append(not_supported(child(rpath, "type"), kind, LIMIT_RESPONSE_TYPES))
    queuing = response.get("queuing")
    if kind == "Reject" and queuing is not None:
        errs.append(forbidden(child(rpath, "queuing"), "must be nil if limited.limitResponse.type "
                                                       "is not Limited"))
    elif kind == "Queue" and not isinstance(queuing, dict):
        errs.append(required(child(rpath, "queuing"), "must not be empty if "
                                                      "limited.limitResponse.type is Limited"))
    elif isinstance(queuing, dict):
        qpath = child(rpath, "queuing")
        for field, low in (("queues", 1), ("handSize", 1), ("queueLengthLimit", 1)):
            value = queuing.get(field)
            if isinstance(value, int) and value < low:
                errs.append(invalid(child(qpath, field), value, "must be positive"))
        queues, hand = queuing.get("queues"), queuing.get("handSize")
        if isinstance(queues, int) and isinstance(hand, int) and hand > queues:
            errs.append(invalid(child(qpath, "handSize"), hand,
                                f"should not be greater than queues ({queues})"))


def validate_priority_level_configuration(level: Obj) -> Causes:
    errs = validate_object_meta(level, namespaced=False)
    spec = get_dict(level, "spec", "", errs)
    kind = spec.get("type")
    if kind not in PRIORITY_LEVEL_TYPES:
        errs.append(not_supported("spec.type", kind, PRIORITY_LEVEL_TYPES))
    limited, exempt = spec.get("limited"), spec.get("exempt")
    if kind == "Limited":
        if not isinstance(limited, dict):
            errs.append(required("spec.limited", "must not be empty when type is Limited"))
        else:
            _limited(limited, "spec.limited", errs)
        if exempt is not None:
            errs.append(forbidden("spec.exempt", "must be nil if the type is Limited"))
    elif kind == "Exempt":
        if limited is not None:
            errs.append(forbidden("spec.limited", "must be nil if the type is not Limited"))
        if isinstance(exempt, dict):
            shares = exempt.get("nominalConcurrencyShares")
            if isinstance(shares, int) and shares < 0:
                errs.append(invalid("spec.exempt.nominalConcurrencyShares", shares, IS_NEGATIVE_MSG))
            _percent(exempt.get("lendablePercent"), "spec.exempt.lendablePercent", errs)
    return errs


def validate_priority_level_configuration_update(new: Obj, old: Obj) -> Causes:
    return validate_object_meta_update(new, old) + [
        c for c in validate_priority_level_configuration(new) if not c.field.startswith("metadata")]


def validate_flowcontrol_status_update(new: Obj, old: Obj) -> Causes:
    errs = validate_object_meta_update(new, old)
    conditions = get_list(get_dict(new, "status", "", errs), "conditions", "status", errs)
    if len(conditions) > 64:
        errs.append(too_many("status.conditions", len(conditions), 64))
    return errs
