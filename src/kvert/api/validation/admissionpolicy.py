"""admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy and its Binding,
MutatingAdmissionPolicy (GA in 1.36) and its Binding (``ValidateValidatingAdmissionPolicy``,
``...Binding``, ``ValidateMutatingAdmissionPolicy``, ``...Binding`` of
``pkg/apis/admissionregistration/validation``).

Checked: the param kind, the match constraints (required on policies; rules as the webhooks'),
the failure, reinvocation and validation-action enums, the validations' and mutations'
required parts, the match conditions (as the webhooks'), the variables' names, the
bindings' policy name and param reference. Not checked: the CEL expressions themselves
(upstream compiles them and reports type errors). kvert stores these objects and does not
enforce them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from kvert.api.names import is_dns1123_subdomain
from kvert.api.types import Obj

from .admissionregistration import FAILURE_POLICIES, MATCH_POLICIES, REINVOCATION_POLICIES
from .admissionregistration import _match_conditions as match_conditions
from .admissionregistration import _rule as rule_with_operations
from .common import (
    Causes,
    child,
    dict_field,
    dicts,
    duplicate,
    forbidden,
    get_dict,
    get_list,
    index,
    invalid,
    not_supported,
    required,
)
from .meta import validate_label_selector, validate_object_meta, validate_object_meta_update

VALIDATION_REASONS = ("Forbidden", "Invalid", "RequestEntityTooLarge", "Unauthorized")
VALIDATION_ACTIONS = ("Audit", "Deny", "Warn")
NOT_FOUND_ACTIONS = ("Allow", "Deny")
PATCH_TYPES = ("ApplyConfiguration", "JSONPatch")
_IDENTIFIER = re.compile(r"^[_a-zA-Z][_a-zA-Z0-9]*$")


def _param_kind(kind: Any, path: str) -> Causes:
    if not isinstance(kind, dict):
        return []
    errs: Causes = []
    api_version = kind.get("apiVersion")
    if not api_version:
        errs.append(required(child(path, "apiVersion")))
    elif isinstance(api_version, str) and api_version.count("/") > 1:
        errs.append(invalid(child(path, "apiVersion"), api_version,
                            "must be a valid group/version"))
    if not kind.get("kind"):
        errs.append(required(child(path, "kind")))
    return errs


def _match_resources(match: Any, path: str, *, allow_empty_rules: bool) -> Causes:
    """``validateMatchResources``."""
    if not isinstance(match, dict):
        return [] if allow_empty_rules else [required(path)]
    errs: Causes = []
    policy = match.get("matchPolicy")
    if policy is not None and policy not in MATCH_POLICIES:
        errs.append(not_supported(child(path, "matchPolicy"), policy, MATCH_POLICIES))
    for field in ("namespaceSelector", "objectSelector"):
        if match.get(field) is not None:
            errs.extend(validate_label_selector(match[field], child(path, field)))
    rules = get_list(match, "resourceRules", path, errs)
    if not rules and not allow_empty_rules:
        errs.append(required(child(path, "resourceRules")))
    for field in ("resourceRules", "excludeResourceRules"):
        items = rules if field == "resourceRules" else get_list(match, field, path, errs)
        for _, rp, rule in dicts(items, child(path, field), errs):
            for i, name in enumerate(get_list(rule, "resourceNames", rp, errs)):
                if isinstance(name, str):
                    errs.extend(invalid(index(child(rp, "resourceNames"), i), name, m)
                                for m in is_dns1123_subdomain(name))
            errs.extend(rule_with_operations(rule, rp))
    return errs


def _variables(variables: list[Any], path: str, errs: Causes) -> None:
    for _, vp, variable in dicts(variables, path, errs):
        name = variable.get("name")
        if not name:
            errs.append(required(child(vp, "name")))
        elif isinstance(name, str) and not _IDENTIFIER.match(name):
            errs.append(invalid(child(vp, "name"), name, "name is not a valid CEL identifier"))
        if not variable.get("expression"):
            errs.append(required(child(vp, "expression")))


def _failure_policy(spec: Obj, errs: Causes) -> None:
    policy = spec.get("failurePolicy")
    if policy is not None and policy not in FAILURE_POLICIES:
        errs.append(not_supported("spec.failurePolicy", policy, FAILURE_POLICIES))


def _common_spec(spec: Obj, errs: Causes) -> None:
    errs.extend(_param_kind(spec.get("paramKind"), "spec.paramKind"))
    errs.extend(_match_resources(spec.get("matchConstraints"), "spec.matchConstraints",
                                 allow_empty_rules=False))
    _failure_policy(spec, errs)
    errs.extend(match_conditions(get_list(spec, "matchConditions", "spec", errs),
                                 "spec.matchConditions"))
    _variables(get_list(spec, "variables", "spec", errs), "spec.variables", errs)


def validate_validating_admission_policy(policy: Obj) -> Causes:
    errs = validate_object_meta(policy, namespaced=False)
    spec = get_dict(policy, "spec", "", errs)
    _common_spec(spec, errs)
    validations = get_list(spec, "validations", "spec", errs)
    audits = get_list(spec, "auditAnnotations", "spec", errs)
    if not validations and not audits:
        errs.append(required("spec.validations",
                             "validations or auditAnnotations must contain at least one item"))
    for _, vp, check in dicts(validations, "spec.validations", errs):
        if not (check.get("expression") or "").strip():
            errs.append(required(child(vp, "expression")))
        message = check.get("message")
        if isinstance(message, str) and "\n" in message:
            errs.append(invalid(child(vp, "message"), message, "message must not contain line breaks"))
        reason = check.get("reason")
        if reason is not None and reason not in VALIDATION_REASONS:
            errs.append(not_supported(child(vp, "reason"), reason, VALIDATION_REASONS))
    seen: set[Any] = set()
    for _, ap, audit in dicts(audits, "spec.auditAnnotations", errs):
        key = audit.get("key")
        if not key:
            errs.append(required(child(ap, "key")))
        elif key in seen:
            errs.append(duplicate(child(ap, "key"), key))
        seen.add(key)
        if not audit.get("valueExpression"):
            errs.append(required(child(ap, "valueExpression")))
    return errs


def validate_mutating_admission_policy(policy: Obj) -> Causes:
    errs = validate_object_meta(policy, namespaced=False)
    spec = get_dict(policy, "spec", "", errs)
    _common_spec(spec, errs)
    mutations = get_list(spec, "mutations", "spec", errs)
    if not mutations:
        errs.append(required("spec.mutations", "mutations must contain at least one item"))
    for _, mp, mutation in dicts(mutations, "spec.mutations", errs):
        kind = mutation.get("patchType")
        if kind not in PATCH_TYPES:
            errs.append(not_supported(child(mp, "patchType"), kind, PATCH_TYPES))
            continue
        own = "applyConfiguration" if kind == "ApplyConfiguration" else "jsonPatch"
        other = "jsonPatch" if own == "applyConfiguration" else "applyConfiguration"
        if not dict_field(mutation, own).get("expression"):
            errs.append(required(child(mp, own), f"must be specified when patchType is {kind}"))
        if mutation.get(other) is not None:
            errs.append(forbidden(child(mp, other), f"must not be specified when patchType is {kind}"))
    policy_value = spec.get("reinvocationPolicy")
    if policy_value is not None and policy_value not in REINVOCATION_POLICIES:
        errs.append(not_supported("spec.reinvocationPolicy", policy_value, REINVOCATION_POLICIES))
    return errs


def _param_ref(ref: Any, path: str) -> Causes:
    if not isinstance(ref, dict):
        return []
    errs: Causes = []
    name, selector = ref.get("name"), ref.get("selector")
    if name and selector is not None:
        errs.append(forbidden(path, "name and selector are mutually exclusive"))
    elif not name and selector is None:
        errs.append(required(path, "one of name or selector must be specified"))
    if isinstance(name, str) and name:
        errs.extend(invalid(child(path, "name"), name, m) for m in is_dns1123_subdomain(name))
    if selector is not None:
        errs.extend(validate_label_selector(selector, child(path, "selector")))
    action = ref.get("parameterNotFoundAction")
    if action is None:
        errs.append(required(child(path, "parameterNotFoundAction")))
    elif action not in NOT_FOUND_ACTIONS:
        errs.append(not_supported(child(path, "parameterNotFoundAction"), action, NOT_FOUND_ACTIONS))
    return errs


def _binding(binding: Obj, errs: Causes) -> Obj:
    spec = get_dict(binding, "spec", "", errs)
    if not spec.get("policyName"):
        errs.append(required("spec.policyName"))
    errs.extend(_param_ref(spec.get("paramRef"), "spec.paramRef"))
    errs.extend(_match_resources(spec.get("matchResources"), "spec.matchResources",
                                 allow_empty_rules=True))
    return spec


def validate_validating_admission_policy_binding(binding: Obj) -> Causes:
    errs = validate_object_meta(binding, namespaced=False)
    spec = _binding(binding, errs)
    actions = get_list(spec, "validationActions", "spec", errs)
    path = "spec.validationActions"
    if not actions:
        errs.append(required(path, "at least one validation action is required"))
    seen: set[Any] = set()
    for i, action in enumerate(actions):
        if action not in VALIDATION_ACTIONS:
            errs.append(not_supported(index(path, i), action, VALIDATION_ACTIONS))
        if action in seen:
            errs.append(duplicate(index(path, i), action))
        seen.add(action)
    if {"Deny", "Warn"} <= seen:
        errs.append(invalid(path, actions, "must not contain both Deny and Warn (repeating the "
                            "same validation failure information in the API response and "
                            "headers serves no purpose)"))
    return errs


def validate_mutating_admission_policy_binding(binding: Obj) -> Causes:
    errs = validate_object_meta(binding, namespaced=False)
    _binding(binding, errs)
    return errs


def _update(create: Callable[[Obj], Causes]) -> Callable[[Obj, Obj], Causes]:
    def check(new: Obj, old: Obj) -> Causes:
        return validate_object_meta_update(new, old) + [
            c for c in create(new) if not c.field.startswith("metadata")]
    check.__name__ = f"{create.__name__}_update"
    return check


validate_validating_admission_policy_update = _update(validate_validating_admission_policy)
validate_validating_admission_policy_binding_update = _update(
    validate_validating_admission_policy_binding)
validate_mutating_admission_policy_update = _update(validate_mutating_admission_policy)
validate_mutating_admission_policy_binding_update = _update(validate_mutating_admission_policy_binding)


def validate_validating_admission_policy_status_update(new: Obj, old: Obj) -> Causes:
    return validate_object_meta_update(new, old)
