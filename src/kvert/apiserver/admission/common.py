"""What the admission plugins share: Kubernetes' ``admission.NewForbidden`` wording, resource
names as ``GroupResource.String()`` spells them, and small pod helpers.
"""

from __future__ import annotations

from typing import Any

from kvert.api.errors import Cause, Forbidden
from kvert.api.quantity import BINARY_SI, DECIMAL_SI, Quantity, QuantityError, to_quantity
from kvert.api.resources import is_byte_resource
from kvert.registry.admission import Attributes

PODS = "pods"


def group_resource(resource: str) -> tuple[str, str]:
    """``"apps/deployments"`` -> ``("apps", "deployments")``; ``"pods"`` -> ``("", "pods")``."""
    group, _, plural = resource.rpartition("/")
    return group, plural


def qualified(resource: str) -> str:
    """``GroupResource.String()``: ``pods``, ``deployments.apps``."""
    group, plural = group_resource(resource)
    return f"{plural}.{group}" if group else plural


def subject_name(attrs: Attributes) -> str:
    """The name a refusal names (``extractResourceName``): the request's, else the object's
    name or generateName, else ``Unknown``."""
    if attrs.name:
        return attrs.name
    meta = (attrs.object or {}).get("metadata") or {}
    return meta.get("name") or meta.get("generateName") or "Unknown"


def forbidden(attrs: Attributes, message: str, causes: list[Cause] | None = None) -> Forbidden:
    """``admission.NewForbidden``: ``pods "web" is forbidden: MESSAGE`` with the Status details
    (group, kind = the plural resource, name) Kubernetes attaches."""
    group, plural = group_resource(attrs.resource)
    name = subject_name(attrs)
    err = Forbidden(f'{qualified(attrs.resource)} "{name}" is forbidden: {message}')
    details: dict[str, Any] = {"name": name, "kind": plural}
    if group:
        details["group"] = group
    err.details = details
    if causes:
        err.causes = list(causes)
    return err


def is_pod(attrs: Attributes) -> bool:
    return attrs.resource == PODS


def pod_spec(pod: dict | None) -> dict:
    if not isinstance(pod, dict):
        return {}
    spec = pod.get("spec")
    if not isinstance(spec, dict):
        spec = pod["spec"] = {}
    return spec


def all_containers(pod: dict) -> list[dict]:
    """App containers then init containers (the order LimitRanger and quota walk them)."""
    spec = pod_spec(pod)
    result = []
    for key in ("containers", "initContainers"):
        for c in spec.get(key) or []:
            if isinstance(c, dict):
                result.append(c)
    return result


def show_quantity(value: Any) -> str:
    """A quantity as Kubernetes prints a parsed one (``"1.5"`` -> ``1500m``)."""
    try:
        return str(Quantity.parse(value))
    except (QuantityError, TypeError, ValueError):
        return str(value)


def render_quantity(resource_name: str, amount: int) -> str:
    """An integer amount (millicores for cpu) as a quantity string: byte amounts that are whole
    multiples of 1024 in BinarySI (``700Mi``), everything else in DecimalSI (``2250m``, ``1``)."""
    fmt = DECIMAL_SI
    if is_byte_resource(resource_name) and amount % 1024 == 0:
        fmt = BINARY_SI
    return to_quantity(resource_name, amount, fmt)


def aggregate_message(messages: list[str]) -> str:
    """``utilerrors.NewAggregate(errs).Error()``: one message as is, several de-duplicated
    and bracketed (``[a, b]``)."""
    seen: list[str] = []
    for m in messages:
        if m not in seen:
            seen.append(m)
    if len(seen) == 1:
        return seen[0]
    return "[" + ", ".join(seen) + "]"
