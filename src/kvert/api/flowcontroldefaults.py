"""Defaulting of flowcontrol.apiserver.k8s.io/v1 (``pkg/apis/flowcontrol/v1/defaults.go``) and
of the admission policies (below):
a FlowSchema's ``matchingPrecedence`` 1000; a Limited priority level's
``nominalConcurrencyShares`` 30, ``lendablePercent`` 0 and, when it queues,
``queues`` 64, ``handSize`` 8, ``queueLengthLimit`` 50; an Exempt level's shares and
lendable percent 0."""

from __future__ import annotations

from kvert.api.types import Obj


def _child(d: Obj, field: str) -> Obj | None:
    value = d.get(field)
    return value if isinstance(value, dict) else None


def default_flow_schema(obj: Obj) -> None:
    spec = _child(obj, "spec")
    if spec is not None and not spec.get("matchingPrecedence"):
        spec["matchingPrecedence"] = 1000


def default_priority_level_configuration(obj: Obj) -> None:
    spec = _child(obj, "spec")
    if spec is None:
        return
    limited = _child(spec, "limited")
    if limited is not None:
        limited.setdefault("nominalConcurrencyShares", 30)
        if limited["nominalConcurrencyShares"] is None:
            limited["nominalConcurrencyShares"] = 30
        if limited.get("lendablePercent") is None:
            limited["lendablePercent"] = 0
        queuing = _child(_child(limited, "limitResponse") or {}, "queuing")
        if queuing is not None:
            for field, value in (("queues", 64), ("handSize", 8), ("queueLengthLimit", 50)):
                if not queuing.get(field):
                    queuing[field] = value
    exempt = _child(spec, "exempt")
    if exempt is not None:
        for field in ("nominalConcurrencyShares", "lendablePercent"):
            if exempt.get(field) is None:
                exempt[field] = 0


def _match_resources(match: Obj) -> None:
    """``SetDefaults_MatchResources``: Equivalent matching, all namespaces and objects, and
    each rule's scope "*"."""
    if not match.get("matchPolicy"):
        match["matchPolicy"] = "Equivalent"
    for field in ("namespaceSelector", "objectSelector"):
        if match.get(field) is None:
            match[field] = {}
    for field in ("resourceRules", "excludeResourceRules"):
        for rule in match.get(field) or []:
            if isinstance(rule, dict) and not rule.get("scope"):
                rule["scope"] = "*"


def default_admission_policy(obj: Obj) -> None:
    """``SetDefaults_ValidatingAdmissionPolicySpec`` / ``..MutatingAdmissionPolicySpec``
    (admissionregistration/v1): failurePolicy Fail, the match constraints' defaults; a
    mutating policy's reinvocationPolicy Never."""
    spec = _child(obj, "spec")
    if spec is None:
        return
    if not spec.get("failurePolicy"):
        spec["failurePolicy"] = "Fail"
    if obj.get("kind") == "MutatingAdmissionPolicy" and not spec.get("reinvocationPolicy"):
        spec["reinvocationPolicy"] = "Never"
    match = _child(spec, "matchConstraints")
    if match is not None:
        _match_resources(match)


def default_admission_policy_binding(obj: Obj) -> None:
    match = _child(_child(obj, "spec") or {}, "matchResources")
    if match is not None:
        _match_resources(match)
