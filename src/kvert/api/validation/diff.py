"""Semantic comparison of specs, as ``apiequality.Semantic.DeepEqual`` compares them.

* quantities compare by value (``"500m" == "0.5"``) inside resource lists;
* an absent field equals its zero value (``null``, ``""``, ``false``, ``{}``, ``[]``), as
  an omitted JSON field decodes to the Go zero value.

:func:`describe_diff` renders the differences for the "pod updates may not change fields
other than ..." message (Kubernetes prints a Go ``cmp.Diff`` there).
"""

from __future__ import annotations

from typing import Any

from kvert.api.quantity import Quantity, QuantityError

from .common import show

RESOURCE_LIST_KEYS = frozenset({"requests", "limits", "overhead", "podFixed", "allocatedResources",
                                "capacity", "allocatable"})
_ZERO = (None, "", False)


def _is_zero(value: Any) -> bool:
    if isinstance(value, (dict, list)):
        return not value
    return any(value is z or (type(value) is type(z) and value == z) for z in _ZERO)


def _quantity(value: Any) -> Any:
    try:
        return Quantity.parse(value)
    except (QuantityError, TypeError, ValueError):
        return value


def normalized(value: Any, *, _resources: bool = False) -> Any:
    """A copy of ``value`` for semantic comparison (see the module docstring)."""
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if _resources:
                nv = _quantity(v)
            else:
                nv = normalized(v, _resources=k in RESOURCE_LIST_KEYS and isinstance(v, dict))
            if not _is_zero(nv):
                out[k] = nv
        return out
    if isinstance(value, list):
        return [normalized(v) for v in value]
    return value


def semantically_equal(a: Any, b: Any) -> bool:
    """``normalized(a) == normalized(b)``, without normalizing what is plainly equal (most
    comparisons on the write path: the parts an update leaves alone)."""
    return bool(a == b or normalized(a) == normalized(b))


def _walk(old: Any, new: Any, path: str, out: list[str], keyed: bool = False) -> None:
    if old == new:
        return
    if isinstance(old, dict) and isinstance(new, dict):
        for k in list(old) + [k for k in new if k not in old]:
            sub = f"{path}[{k}]" if keyed else (f"{path}.{k}" if path else str(k))
            _walk(old.get(k), new.get(k), sub, out, keyed=k in RESOURCE_LIST_KEYS)
        return
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        for i, (o, n) in enumerate(zip(old, new)):
            _walk(o, n, f"{path}[{i}]", out)
        return
    out.append(f"  {path}: {_render(old)} -> {_render(new)}")


def _render(value: Any) -> str:
    if value is None:
        return "<unset>"
    if isinstance(value, Quantity):
        return f'"{value}"'
    return show(value)


def differences(old: Any, new: Any, path: str = "") -> list[str]:
    out: list[str] = []
    _walk(old, new, path, out)
    return out


def describe_diff(old: Any, new: Any, path: str = "", limit: int = 20) -> str:
    lines = differences(old, new, path)
    if len(lines) > limit:
        lines = lines[:limit] + [f"  ... and {len(lines) - limit} more"]
    return "\n".join(lines)
