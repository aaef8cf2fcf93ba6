"""Columns and rows of the kinds served for issue 28 besides storage, after
``pkg/printers/internalversion``: ``printPodTemplate``, ``printComponentStatus``,
``printServiceCIDR``, ``printIPAddress``, ``printFlowSchema`` and
``printPriorityLevelConfiguration``."""

from __future__ import annotations

from typing import Any

from .builtin import (
    RowFunc,
    _age,
    _i,
    _l,
    _m,
    _name,
    _s,
    age_col,
    col,
    format_label_selector,
    format_labels,
    layout_container_cells,
    name_col,
)

POD_TEMPLATE_COLUMNS = [
    name_col(),
    col("Containers", "string", "Names of each container in the template."),
    col("Images", "string", "Images referenced by each container in the template."),
    col("Pod Labels", "string", "The labels for the pod template."),
]


def pod_template_row(template: dict, now: int) -> list[Any]:
    spec = _m(template.get("template"))
    names, images = layout_container_cells(_m(spec.get("spec")).get("containers"))
    return [_name(template), names, images, format_labels(_m(spec.get("metadata")).get("labels"))]


COMPONENT_STATUS_COLUMNS = [
    name_col(),
    col("Status", "string", "Status of the component conditions"),
    col("Message", "string", "Message of the component conditions"),
    col("Error", "string", "Error of the component conditions"),
]


def component_status_row(status: dict, now: int) -> list[Any]:
    """The Healthy condition: Healthy, Unhealthy, or Unknown without one."""
    for condition in _l(status.get("conditions")):
        condition = _m(condition)
        if condition.get("type") == "Healthy":
            health = "Healthy" if condition.get("status") == "True" else "Unhealthy"
            return [_name(status), health, _s(condition.get("message")), _s(condition.get("error"))]
    return [_name(status), "Unknown", "", ""]


SERVICE_CIDR_COLUMNS = [
    name_col(),
    col("CIDRs", "string", "CIDRs defines the IP blocks in CIDR notation (e.g. \"192.168.0.0/24\" "
        "or \"2001:db8::/64\") from which to assign service cluster IPs. Max of two CIDRs is "
        "allowed, one of each IP family. This field is immutable."),
    age_col(),
]


def service_cidr_row(cidr: dict, now: int) -> list[Any]:
    return [_name(cidr), ",".join(_s(c) for c in _l(_m(cidr.get("spec")).get("cidrs"))), _age(cidr, now)]


IP_ADDRESS_COLUMNS = [
    name_col(),
    col("ParentRef", "string", "ParentRef references the resource that an IPAddress is attached "
        "to. An IPAddress must reference a parent object."),
]


def ip_address_row(ip: dict, now: int) -> list[Any]:
    """``resource.group[/namespace]/name`` of the parent, lower-cased group-resource."""
    ref = _m(ip.get("spec")).get("parentRef")
    if not isinstance(ref, dict):
        return [_name(ip), "<none>"]
    resource, group = _s(ref.get("resource")), _s(ref.get("group"))
    text = (f"{resource}.{group}" if group else resource).lower()
    if ref.get("namespace"):
        text += "/" + _s(ref.get("namespace"))
    return [_name(ip), f"{text}/{_s(ref.get('name'))}"]


FLOW_SCHEMA_COLUMNS = [
    name_col(),
    col("PriorityLevel", "string", "`name` is the name of the priority level configuration being "
        "referenced Required."),
    col("MatchingPrecedence", "string", "`matchingPrecedence` is used to choose among the "
        "FlowSchemas that match a given request. The chosen FlowSchema is among those with the "
        "numerically lowest (which we take to be logically highest) MatchingPrecedence.  Each "
        "MatchingPrecedence value must be ranged in [1,10000]. Note that if the precedence is "
        "not specified, it will be set to 1000 as default."),
    col("DistinguisherMethod", "string", "`distinguisherMethod` defines how to compute the flow "
        "distinguisher for requests that match this schema. `nil` specifies that the "
        "distinguisher is disabled and thus will always be the empty string."),
    age_col(),
    col("MissingPL", "string", "references a broken or non-existent PriorityLevelConfiguration"),
]


def flow_schema_row(schema: dict, now: int) -> list[Any]:
    spec = _m(schema.get("spec"))
    method = spec.get("distinguisherMethod")
    missing = "?"
    for condition in _l(_m(schema.get("status")).get("conditions")):
        if _m(condition).get("type") == "Dangling":
            missing = _s(_m(condition).get("status"))
            break
    return [_name(schema), _s(_m(spec.get("priorityLevelConfiguration")).get("name")),
            _i(spec.get("matchingPrecedence")),
            _s(_m(method).get("type")) if isinstance(method, dict) else "<none>",
            _age(schema, now), missing]


PRIORITY_LEVEL_COLUMNS = [
    name_col(),
    col("Type", "string", "`type` indicates whether this priority level is subject to limitation "
        "on request execution.  A value of `\"Exempt\"` means that requests of this priority "
        "level are not subject to a limit (and thus are never queued) and do not detract from "
        "the capacity made available to other priority levels.  A value of `\"Limited\"` means "
        "that (a) requests of this priority level _are_ subject to limits and (b) some of the "
        "server's limited capacity is made available exclusively to this priority level. "
        "Required."),
    col("NominalConcurrencyShares", "string", "`nominalConcurrencyShares` (NCS) contributes to "
        "the computation of the NominalConcurrencyLimit (NominalCL) of this level."),
    col("Queues", "string", "`queues` is the number of queues for this priority level. The "
        "queues exist independently at each apiserver. The value must be positive.  Setting it "
        "to 1 effectively precludes shufflesharding and thus makes the distinguisher method of "
        "associated flow schemas irrelevant.  This field has a default value of 64."),
    col("HandSize", "string", "`handSize` is a small positive number that configures the "
        "shuffle sharding of requests into queues."),
    col("QueueLengthLimit", "string", "`queueLengthLimit` is the maximum number of requests "
        "allowed to be waiting in a given queue of this priority level at a time; excess "
        "requests are rejected.  This value must be positive.  If not specified, it will be "
        "defaulted to 50."),
    age_col(),
]


def priority_level_row(level: dict, now: int) -> list[Any]:
    spec = _m(level.get("spec"))
    shares: Any = "<none>"
    queues: Any = "<none>"
    hand: Any = "<none>"
    length: Any = "<none>"
    limited = spec.get("limited")
    if isinstance(limited, dict):
        shares = _i(limited.get("nominalConcurrencyShares"))
        queuing = _m(limited.get("limitResponse")).get("queuing")
        if isinstance(queuing, dict):
            queues, hand = _i(queuing.get("queues")), _i(queuing.get("handSize"))
            length = _i(queuing.get("queueLengthLimit"))
    return [_name(level), _s(spec.get("type")), shares, queues, hand, length, _age(level, now)]


def _rows(fn) -> RowFunc:
    return lambda obj, now: (fn(obj, now), None)


PRINTERS = {
    ("", "PodTemplate"): (POD_TEMPLATE_COLUMNS, _rows(pod_template_row)),
    ("", "ComponentStatus"): (COMPONENT_STATUS_COLUMNS, _rows(component_status_row)),
    ("networking.k8s.io", "ServiceCIDR"): (SERVICE_CIDR_COLUMNS, _rows(service_cidr_row)),
    ("networking.k8s.io", "IPAddress"): (IP_ADDRESS_COLUMNS, _rows(ip_address_row)),
    ("flowcontrol.apiserver.k8s.io", "FlowSchema"): (FLOW_SCHEMA_COLUMNS, _rows(flow_schema_row)),
    ("flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration"):
        (PRIORITY_LEVEL_COLUMNS, _rows(priority_level_row)),
}


# ---- admissionregistration.k8s.io/v1 admission policies ---------------------------------------

def _policy_columns(count: str, what: str) -> list[dict[str, Any]]:
    return [name_col(), col(count, "integer", what),
            col("ParamKind", "string", "ParamKind specifies the kind of resources used to "
                "parameterize this policy"), age_col()]


VALIDATING_POLICY_COLUMNS = _policy_columns(
    "Validations", "Validations indicates the number of validation rules defined in this configuration")
MUTATING_POLICY_COLUMNS = _policy_columns(
    "Mutations", "Mutation indicates the number of mutations rules defined in this configuration")
POLICY_BINDING_COLUMNS = [
    name_col(),
    col("PolicyName", "string", "PolicyName indicates the policy definition which the policy "
        "binding binded to"),
    col("ParamRef", "string", "ParamRef indicates the param resource which sets the configration "
        "param"),
    age_col(),
]


def _param_kind(spec: dict) -> str:
    kind = spec.get("paramKind")
    if not isinstance(kind, dict):
        return "<unset>"
    return f"{_s(kind.get('apiVersion'))}/{_s(kind.get('kind'))}"


def policy_row(field: str) -> Any:
    def row(policy: dict, now: int) -> list[Any]:
        spec = _m(policy.get("spec"))
        return [_name(policy), len(_l(spec.get(field))), _param_kind(spec), _age(policy, now)]
    return row


def policy_binding_row(binding: dict, now: int) -> list[Any]:
    """The param as ``namespace/name`` (``*/name`` without a namespace), else its selector."""
    spec = _m(binding.get("spec"))
    ref = spec.get("paramRef")
    param = "<unset>"
    if isinstance(ref, dict):
        if ref.get("name"):
            param = f"{_s(ref.get('namespace')) or '*'}/{_s(ref.get('name'))}"
        elif ref.get("selector") is not None:
            param = format_label_selector(ref.get("selector"))
    return [_name(binding), _s(spec.get("policyName")), param, _age(binding, now)]


ADMREG = "admissionregistration.k8s.io"
PRINTERS.update({
    (ADMREG, "ValidatingAdmissionPolicy"):
        (VALIDATING_POLICY_COLUMNS, _rows(policy_row("validations"))),
    (ADMREG, "ValidatingAdmissionPolicyBinding"): (POLICY_BINDING_COLUMNS, _rows(policy_binding_row)),
    (ADMREG, "MutatingAdmissionPolicy"): (MUTATING_POLICY_COLUMNS, _rows(policy_row("mutations"))),
    (ADMREG, "MutatingAdmissionPolicyBinding"): (POLICY_BINDING_COLUMNS, _rows(policy_binding_row)),
})
