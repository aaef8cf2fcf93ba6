"""Defaulting of flowcontrol.apiserver.k8s.io/v1 (``pkg/apis/flowcontrol/v1/defaults.go``):
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
