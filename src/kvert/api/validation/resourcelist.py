"""Resource names and quantities: ``ResourceList`` and ``ResourceRequirements`` checks from
``pkg/apis/core/validation`` and the resource helpers of ``pkg/apis/core/helper``.

* A name without '/' must be a standard resource (``cpu``, ``memory``, ``ephemeral-storage``,
  ``hugepages-<size>`` for containers); a name with '/' is native when it contains
  ``kubernetes.io/``, otherwise an *extended* resource (``example.com/gpu``).
* Quantities must parse and be >= 0; extended resources must be whole numbers.
* ``requests[x] <= limits[x]``; resources that cannot be overcommitted (extended, hugepages)
  need a limit, and request == limit.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kvert.api.quantity import Quantity, QuantityError
from kvert.api.resources import is_extended_resource

from . import names
from .common import IS_NEGATIVE_MSG, Causes, child, dict_field, forbidden, invalid, key, required, type_error

STANDARD_CONTAINER_RESOURCES = frozenset({"cpu", "memory", "ephemeral-storage"})
STANDARD_RESOURCES = frozenset({
    "cpu", "memory", "ephemeral-storage", "storage",
    "requests.cpu", "requests.memory", "requests.ephemeral-storage", "requests.storage",
    "limits.cpu", "limits.memory", "limits.ephemeral-storage",
    "pods", "services", "replicationcontrollers", "resourcequotas", "secrets", "configmaps",
    "persistentvolumeclaims", "services.nodeports", "services.loadbalancers",
})
INTEGER_RESOURCES = frozenset({
    "pods", "services", "replicationcontrollers", "resourcequotas", "secrets", "configmaps",
    "persistentvolumeclaims", "services.nodeports", "services.loadbalancers",
})
HUGEPAGES_PREFIX = "hugepages-"
RESIZABLE_RESOURCES = ("cpu", "memory")

NameCheck = Callable[[str, str], Causes]
"""Checks a resource name at a field path (which names a context allows); None: any name."""


def is_hugepage(name: str) -> bool:
    return name.startswith(HUGEPAGES_PREFIX)


def is_native(name: str) -> bool:
    return "/" not in name or "kubernetes.io/" in name


# the API's IsExtendedResourceName, shared with the scheduler and kubelet
is_extended = is_extended_resource


def overcommit_allowed(name: str) -> bool:
    return is_native(name) and not is_hugepage(name)


def is_integer_resource(name: str) -> bool:
    return name in INTEGER_RESOURCES or is_extended(name)


def is_standard_resource(name: str) -> bool:
    if name in STANDARD_RESOURCES:
        return True
    for prefix in ("", "requests.", "limits."):
        if name.startswith(prefix + HUGEPAGES_PREFIX):
            return True
    return False


def is_standard_container_resource(name: str) -> bool:
    return name in STANDARD_CONTAINER_RESOURCES or is_hugepage(name)


def validate_resource_name(name: str, path: str) -> Causes:
    errs = names.validate_qualified_name(name, path)
    if errs:
        return errs
    if "/" not in name and not is_standard_resource(name):
        errs.append(invalid(path, name, "must be a standard resource type or fully qualified"))
    return errs


def validate_container_resource_name(name: str, path: str) -> Causes:
    errs = validate_resource_name(name, path)
    if "/" not in name:
        if not is_standard_container_resource(name):
            errs.append(invalid(path, name, "must be a standard resource for containers"))
    elif not is_native(name) and not is_extended(name):
        errs.append(invalid(path, name, "doesn't follow extended resource name standard"))
    return errs


def parse(value: Any, path: str, errs: Causes) -> Quantity | None:
    """A quantity (string or JSON number); a cause with apimachinery's message if it fails."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        errs.append(type_error(path, value, "string"))
        return None
    try:
        return Quantity.parse(value)
    except QuantityError as e:
        errs.append(invalid(path, value if isinstance(value, str) else str(value), e.reason))
        return None


def validate_quantity_value(name: str, q: Quantity, path: str) -> Causes:
    """``ValidateResourceQuantityValue``: non-negative; whole for integer resources."""
    errs: Causes = []
    if q.sign() < 0:
        errs.append(invalid(path, str(q), IS_NEGATIVE_MSG))
    if is_integer_resource(name) and q.nanos % (10**9):
        errs.append(invalid(path, str(q), "must be an integer"))
    return errs


def parse_resource_list(rl: Any, path: str, errs: Causes, *,
                        name_check: NameCheck | None = validate_container_resource_name,
                        ) -> dict[str, Quantity]:
    """Validate names and quantities of a ``ResourceList``; returns the parsed quantities."""
    if rl is None:
        return {}
    if not isinstance(rl, dict):
        errs.append(type_error(path, rl, "object"))
        return {}
    out: dict[str, Quantity] = {}
    for name, value in rl.items():
        p = key(path, name)
        if name_check is not None:
            errs.extend(name_check(name, p))
        q = parse(value, p, errs)
        if q is None:
            continue
        errs.extend(validate_quantity_value(name, q, p))
        out[name] = q
    return out


def _hugepage_problem(name: str, q: Quantity) -> str | None:
    try:
        size = Quantity.parse(name[len(HUGEPAGES_PREFIX):])
    except QuantityError:
        return None
    if q.value() <= 0 or size.value() <= 0 or q.value() % size.value():
        return f"{q} is not positive integer multiple of {name}"
    return None


def validate_resource_requirements(req: Any, path: str, *,
                                   name_check: NameCheck = validate_container_resource_name,
                                   ) -> tuple[Causes, dict[str, Quantity], dict[str, Quantity]]:
    """``validateResourceRequirements``; returns (causes, parsed requests, parsed limits)."""
    errs: Causes = []
    if req is None:
        return errs, {}, {}
    if not isinstance(req, dict):
        return [type_error(path, req, "object")], {}, {}
    lim_path, req_path = child(path, "limits"), child(path, "requests")
    limits = parse_resource_list(req.get("limits"), lim_path, errs, name_check=name_check)
    requests = parse_resource_list(req.get("requests"), req_path, errs, name_check=name_check)
    raw_limits = dict_field(req, "limits")
    hugepages = False
    for name, q in limits.items():
        if is_hugepage(name):
            hugepages = True
            problem = _hugepage_problem(name, q)
            if problem:
                errs.append(invalid(key(lim_path, name), str(q), problem))
    for name, q in requests.items():
        limit = limits.get(name)
        if limit is not None:
            if q != limit and not overcommit_allowed(name):
                errs.append(invalid(req_path, str(q), f"must be equal to {name} limit of {limit}"))
            elif q > limit:
                errs.append(invalid(req_path, str(q),
                                    f"must be less than or equal to {name} limit of {limit}"))
        elif not overcommit_allowed(name) and name not in raw_limits:
            errs.append(required(lim_path, "Limit must be set for non overcommitable resources"))
        if is_hugepage(name):
            hugepages = True
            problem = _hugepage_problem(name, q)
            if problem:
                errs.append(invalid(key(req_path, name), str(q), problem))
    if hugepages and not any(n in ("cpu", "memory") for n in list(limits) + list(requests)):
        errs.append(forbidden(path, "HugePages require cpu or memory"))
    return errs, requests, limits

