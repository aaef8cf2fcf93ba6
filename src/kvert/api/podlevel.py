"""The containers' aggregate requests and limits that pod-level ``spec.resources`` is
defaulted from and checked against (component-helpers ``AggregateContainerRequests`` /
``AggregateContainerLimits``: KEP-753's formula over app containers, sidecars and init
containers, without overhead and without the pod-level values themselves).

Unlike :func:`kvert.api.pods.pod_requests`, requests are the ones the spec spells: upstream
runs these after defaulting for a Pod (so a limit-only container already requests its limit)
and on the raw template for a pod template, where nothing is defaulted.

An aggregate is also given as the quantity text upstream would print: Go's ``Quantity.Add``
keeps the receiver's format, so the format is the first contributing container's (``1`` +
``500m`` cpu prints ``1500m``, ``2Gi`` + ``4Gi`` prints ``6Gi``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kvert.api.pods import pod_limits, pod_requests
from kvert.api.quantity import DECIMAL_SI, Quantity, QuantityError, to_quantity
from kvert.api.resources import ResourceList

_PARTS = ("requests", "limits")


def _only(spec: Mapping[str, Any], part: str) -> dict[str, Any]:
    """A pod carrying only each container's ``part`` (and what the formula needs to know)."""
    def strip(c: Any) -> dict[str, Any]:
        if not isinstance(c, dict):
            return {}
        res = c.get("resources")
        kept = {part: res.get(part)} if isinstance(res, dict) and res.get(part) else {}
        out: dict[str, Any] = {"name": c.get("name", ""), "resources": kept}
        if c.get("restartPolicy") is not None:
            out["restartPolicy"] = c["restartPolicy"]
        return out

    return {"spec": {field: [strip(c) for c in spec.get(field) or []]
                     for field in ("containers", "initContainers")}}


def aggregate_container_requests(spec: Mapping[str, Any]) -> ResourceList:
    """The containers' aggregate of the requests they spell (millicores for cpu)."""
    return pod_requests(_only(spec, "requests"), include_overhead=False)


def aggregate_container_limits(spec: Mapping[str, Any]) -> ResourceList:
    """The containers' aggregate limits; a resource no container limits is absent."""
    return pod_limits(_only(spec, "limits"), include_overhead=False)


def _first_format(spec: Mapping[str, Any], part: str, name: str) -> str:
    for field in ("containers", "initContainers"):
        for c in spec.get(field) or []:
            res = c.get("resources") if isinstance(c, dict) else None
            values = res.get(part) if isinstance(res, dict) else None
            if isinstance(values, dict) and name in values:
                try:
                    return Quantity.parse(values[name]).format
                except QuantityError:
                    continue
    return DECIMAL_SI


def aggregate_text(spec: Mapping[str, Any], part: str, name: str, amount: int) -> str:
    """``amount`` of ``name`` (an aggregate of ``part``, "requests" or "limits") as upstream
    prints the summed Quantity."""
    if part not in _PARTS:
        raise ValueError(f"part must be one of {_PARTS}")
    return to_quantity(name, amount, _first_format(spec, part, name))
