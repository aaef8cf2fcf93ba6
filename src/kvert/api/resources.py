"""Resource lists as plain integers: cpu in millicores, everything else in base units.

Kubernetes does this arithmetic on Quantity values; the scheduler itself converts to
int64 (MilliValue for cpu, Value for the rest) before adding and comparing. Doing the
same once, at the edge, keeps every later sum, max and fit check exact and cheap.
A resource missing from a list counts as zero.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping

from kvert.api import names
from kvert.api.quantity import BINARY_SI, DECIMAL_SI, QuantityError, to_int, to_quantity

ResourceList = dict[str, int]

# Resources measured in bytes, the only ones a BinarySI rendering makes sense for.
_BYTE_RESOURCES = frozenset({"memory", "ephemeral-storage", "storage", "requests.memory", "limits.memory",
                             "requests.ephemeral-storage", "limits.ephemeral-storage", "requests.storage"})


def is_byte_resource(name: str) -> bool:
    return name in _BYTE_RESOURCES or name.startswith(("hugepages-", "requests.hugepages-", "limits.hugepages-"))


def is_extended_resource(name: str) -> bool:
    """``IsExtendedResourceName``: a fully qualified name outside ``kubernetes.io/`` that is
    not a quota's ``requests.`` name (``example.com/gpu``; not ``cpu``, not
    ``kubernetes.io/x``, not ``requests.example.com/gpu``)."""
    if "/" not in name or "kubernetes.io/" in name or name.startswith("requests."):
        return False
    return _quota_name_is_qualified(name)


@functools.lru_cache(maxsize=1024)
def _quota_name_is_qualified(name: str) -> bool:
    return not names.is_qualified_name("requests." + name)


def parse_resource_list(d: Mapping[str, object] | None, path: str = "") -> ResourceList:
    """Parse a ``{name: quantity}`` map (a ``requests``/``limits``/``allocatable`` block).

    A bad quantity raises QuantityError reporting ``path[name]``, the field path kubectl shows.
    """
    if not d:
        return {}
    if not isinstance(d, Mapping):
        raise QuantityError(d, "a resource list must be a mapping of resource name to quantity", path)
    result: ResourceList = {}
    for name, value in d.items():
        try:
            result[name] = to_int(name, value)
        except QuantityError as err:
            raise err.at(f"{path}[{name}]" if path else name) from None
    return result


def format_resource_list(rl: Mapping[str, int], memory_format: str = DECIMAL_SI) -> dict[str, str]:
    """Render integers back to quantity strings; ``memory_format`` applies to byte-valued resources
    (memory, ephemeral-storage, storage, hugepages-*) so ``"BinarySI"`` gives "128Mi"."""
    return {
        name: to_quantity(name, amount, memory_format if is_byte_resource(name) else DECIMAL_SI)
        for name, amount in rl.items()
    }


def _keys(*lists: Mapping[str, int]) -> Iterable[str]:
    seen: dict[str, None] = {}
    for rl in lists:
        seen.update(dict.fromkeys(rl))
    return seen


def add(a: Mapping[str, int], b: Mapping[str, int]) -> ResourceList:
    return {k: a.get(k, 0) + b.get(k, 0) for k in _keys(a, b)}


def subtract(a: Mapping[str, int], b: Mapping[str, int]) -> ResourceList:
    """a - b over the union of keys; results may be negative (callers decide whether to clamp)."""
    return {k: a.get(k, 0) - b.get(k, 0) for k in _keys(a, b)}


def max_of(a: Mapping[str, int], b: Mapping[str, int]) -> ResourceList:
    return {k: max(a.get(k, 0), b.get(k, 0)) for k in _keys(a, b)}


def min_of(a: Mapping[str, int], b: Mapping[str, int]) -> ResourceList:
    return {k: min(a.get(k, 0), b.get(k, 0)) for k in _keys(a, b)}


def total(lists: Iterable[Mapping[str, int]]) -> ResourceList:
    """Sum of many lists (e.g. the requests of every pod bound to a node)."""
    result: ResourceList = {}
    for rl in lists:
        for k, v in rl.items():
            result[k] = result.get(k, 0) + v
    return result


def less_or_equal(a: Mapping[str, int], b: Mapping[str, int]) -> bool:
    """Every resource of a is at most b's."""
    return all(a.get(k, 0) <= b.get(k, 0) for k in _keys(a, b))


def fits(request: Mapping[str, int], available: Mapping[str, int]) -> list[str]:
    """Sorted names of the resources where request exceeds available; empty means it fits.

    Like the scheduler's NodeResourcesFit, only positive requests are checked, so asking for
    zero of something the node does not have is fine.
    """
    return sorted(k for k, v in request.items() if v > 0 and v > available.get(k, 0))


def is_zero(a: Mapping[str, int]) -> bool:
    return all(v == 0 for v in a.values())


__all__ = [
    "BINARY_SI", "DECIMAL_SI", "ResourceList", "add", "fits", "format_resource_list", "is_byte_resource",
    "is_zero", "less_or_equal", "max_of", "min_of", "parse_resource_list", "subtract", "total",
]
