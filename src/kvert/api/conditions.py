"""Status conditions (``status.conditions[]``), read and written in one place.

Kubernetes has one shape and a few update rules, each upstream helper choosing what counts
as "no change" and which times move: apimachinery's ``meta.SetStatusCondition`` (status,
reason, message and observedGeneration; ``lastTransitionTime`` moves with the status),
``SetDeploymentCondition`` (status and reason; the condition moves to the end) and
``SetCRDCondition`` (replaced in place). ``set_condition`` takes the rule as arguments.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping, Sequence
from typing import Any

Condition = dict[str, Any]


def conditions_of(status: Mapping[str, Any] | None) -> list[Condition]:
    """The conditions of a status (empty when there are none or the status is missing)."""
    found = (status or {}).get("conditions") or []
    return [c for c in found if isinstance(c, dict)]


def find_condition(status: Mapping[str, Any] | None, ctype: str) -> Condition | None:
    """The condition of type ``ctype``, or None."""
    for c in conditions_of(status):
        if c.get("type") == ctype:
            return c
    return None


def is_true(status: Mapping[str, Any] | None, ctype: str) -> bool:
    c = find_condition(status, ctype)
    return c is not None and c.get("status") == "True"


def new_condition(ctype: str, status: str, reason: str = "", message: str = "", *,
                  now: str | None = None, times: Sequence[str] = ("lastTransitionTime",)
                  ) -> Condition:
    """A condition with its time fields (``lastTransitionTime``, or the kind's own such as
    ``lastUpdateTime``/``lastProbeTime``) set to ``now``."""
    out: Condition = {"type": ctype, "status": status}
    if now is not None:
        for field in times:
            out[field] = now
    out["reason"] = reason
    out["message"] = message
    return out


def set_condition(status: MutableMapping[str, Any], condition: Mapping[str, Any], *,
                  now: str | None = None,
                  same: Sequence[str] = ("status", "reason", "message", "observedGeneration"),
                  to_end: bool = False) -> bool:
    """Add ``condition`` or update the one of its type; True when ``status`` changed.

    An existing condition equal on every field in ``same`` is left as it is. Otherwise it is
    replaced (in place, or moved to the end when ``to_end``); its ``lastTransitionTime`` is
    kept while the status stays, and becomes ``now`` (when given and the new condition has
    none) when the status changes or the condition is new."""
    conditions = status.get("conditions")
    if not isinstance(conditions, list):
        conditions = status["conditions"] = []
    new = dict(condition)
    for i, old in enumerate(conditions):
        if not isinstance(old, dict) or old.get("type") != new.get("type"):
            continue
        if all(old.get(f) == new.get(f) for f in same):
            return False
        if old.get("status") == new.get("status") and old.get("lastTransitionTime"):
            new["lastTransitionTime"] = old["lastTransitionTime"]
        elif now is not None and not new.get("lastTransitionTime"):
            new["lastTransitionTime"] = now
        if to_end:
            del conditions[i]
            conditions.append(new)
        else:
            conditions[i] = new
        return True
    if now is not None and not new.get("lastTransitionTime"):
        new["lastTransitionTime"] = now
    conditions.append(new)
    return True


def remove_condition(status: MutableMapping[str, Any], ctype: str) -> bool:
    """Drop the condition of type ``ctype`` (and an emptied list); True when one was there."""
    conditions = status.get("conditions")
    if not isinstance(conditions, list):
        return False
    kept = [c for c in conditions if not (isinstance(c, dict) and c.get("type") == ctype)]
    if len(kept) == len(conditions):
        return False
    if kept:
        status["conditions"] = kept
    else:
        del status["conditions"]
    return True
