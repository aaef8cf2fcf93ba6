"""Taints and tolerations, with the rules of ``k8s.io/api/core/v1/toleration.go``, the
scheduler's TaintToleration plugin and the taint-eviction controller.

A toleration ``{key, operator, value, effect, tolerationSeconds}`` tolerates a taint
``{key, value, effect}`` when

1. its ``effect`` is empty (all effects) or equals the taint's effect, and
2. its ``key`` is empty (all keys -- meant to go with ``Exists``) or equals the taint's key, and
3. its ``operator`` is ``Exists`` (any value), or ``Equal``/empty and its ``value`` equals the
   taint's value (a missing value is ``""``). Any other operator tolerates nothing -- except
   ``Lt``/``Gt`` when ``enable_comparison_operators=True`` (Kubernetes' alpha
   TaintTolerationComparisonOperators gate): the taint's value and the toleration's value are
   both canonical decimal integers and ``taint < toleration`` (``Lt``) / ``taint > toleration``
   (``Gt``).

So an empty key with ``Exists`` tolerates every taint, and ``{key: k, operator: Exists}`` every
taint with key ``k`` whatever its value and effect.

The scheduler refuses a node with a ``NoSchedule`` or ``NoExecute`` taint the pod does not
tolerate (:func:`find_untolerated_taint`); ``PreferNoSchedule`` only lowers the score
(:func:`count_intolerable_taints`). For a pod already on a node, the eviction controller evicts
at once if some ``NoExecute`` taint is not tolerated, otherwise after the smallest
``tolerationSeconds`` of the tolerations used (:func:`no_execute_eviction_delay`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

__all__ = [
    "NO_SCHEDULE", "PREFER_NO_SCHEDULE", "NO_EXECUTE",
    "TaintNotToleratedError",
    "toleration_tolerates_taint",
    "tolerations_tolerate_taint",
    "find_untolerated_taint",
    "tolerates_taints",
    "count_intolerable_taints",
    "matching_toleration",
    "toleration_seconds_for",
    "no_execute_eviction_delay",
    "taint_to_string",
]

NO_SCHEDULE = "NoSchedule"
PREFER_NO_SCHEDULE = "PreferNoSchedule"
NO_EXECUTE = "NoExecute"
_SCHEDULING_EFFECTS = (NO_SCHEDULE, NO_EXECUTE)


class TaintNotToleratedError(LookupError):
    """:func:`toleration_seconds_for` was asked about a taint no toleration tolerates."""

    def __init__(self, taint: Mapping[str, Any]):
        super().__init__(f"taint {taint_to_string(taint)} is not tolerated")
        self.taint = taint


def _s(d: Mapping[str, Any], key: str) -> str:
    v = d.get(key)
    return v if isinstance(v, str) else ""


def _is_decimal_integer(text: str) -> bool:
    """``content.IsDecimalInteger``: ``0`` or ``-?[1-9][0-9]*`` (no ``+``, no leading zeros)."""
    body = text[1:] if text.startswith("-") else text
    if not body or not body.isascii() or not body.isdigit():
        return False
    if body == "0":
        return text == "0"  # "-0" is not canonical
    return body[0] != "0"


def toleration_tolerates_taint(toleration: Mapping[str, Any], taint: Mapping[str, Any], *,
                               enable_comparison_operators: bool = False) -> bool:
    """``Toleration.ToleratesTaint``."""
    effect = _s(toleration, "effect")
    if effect and effect != _s(taint, "effect"):
        return False
    key = _s(toleration, "key")
    if key and key != _s(taint, "key"):
        return False
    op = _s(toleration, "operator")
    if op in ("", "Equal"):
        return _s(toleration, "value") == _s(taint, "value")
    if op == "Exists":
        return True
    if op in ("Lt", "Gt") and enable_comparison_operators:
        tol_v, taint_v = _s(toleration, "value"), _s(taint, "value")
        if not (_is_decimal_integer(tol_v) and _is_decimal_integer(taint_v)):
            return False
        a, b = int(taint_v), int(tol_v)
        if not (-(2**63) <= a < 2**63 and -(2**63) <= b < 2**63):
            return False
        return a < b if op == "Lt" else a > b
    return False


def tolerations_tolerate_taint(tolerations: Iterable[Mapping[str, Any]] | None,
                               taint: Mapping[str, Any], **kw: bool) -> bool:
    return any(toleration_tolerates_taint(t, taint, **kw) for t in tolerations or ())


def find_untolerated_taint(taints: Sequence[Mapping[str, Any]] | None,
                           tolerations: Sequence[Mapping[str, Any]] | None,
                           effects: Iterable[str] | None = _SCHEDULING_EFFECTS,
                           **kw: bool) -> Mapping[str, Any] | None:
    """The first taint (in node order) with an effect in ``effects`` that no toleration
    tolerates, or None. ``effects=None`` considers every taint. This is the scheduler's
    ``FindMatchingUntoleratedTaint`` with its NoSchedule/NoExecute filter by default.
    """
    wanted = None if effects is None else frozenset(effects)
    tols = tolerations or ()
    for taint in taints or ():
        if wanted is not None and _s(taint, "effect") not in wanted:
            continue
        if not any(toleration_tolerates_taint(t, taint, **kw) for t in tols):
            return taint
    return None


def tolerates_taints(taints: Sequence[Mapping[str, Any]] | None,
                     tolerations: Sequence[Mapping[str, Any]] | None,
                     effects: Iterable[str] | None = _SCHEDULING_EFFECTS, **kw: bool) -> bool:
    """Whether every taint with an effect in ``effects`` is tolerated."""
    return find_untolerated_taint(taints, tolerations, effects, **kw) is None


def count_intolerable_taints(taints: Sequence[Mapping[str, Any]] | None,
                             tolerations: Sequence[Mapping[str, Any]] | None,
                             effect: str = PREFER_NO_SCHEDULE, **kw: bool) -> int:
    """How many taints of ``effect`` are not tolerated (the TaintToleration plugin's score input:
    it counts ``PreferNoSchedule`` taints against tolerations whose effect is empty or that)."""
    tols = [t for t in tolerations or () if _s(t, "effect") in ("", effect)]
    return sum(1 for taint in taints or ()
               if _s(taint, "effect") == effect
               and not any(toleration_tolerates_taint(t, taint, **kw) for t in tols))


def matching_toleration(taint: Mapping[str, Any],
                        tolerations: Sequence[Mapping[str, Any]] | None,
                        **kw: bool) -> Mapping[str, Any] | None:
    """The first toleration that tolerates ``taint`` -- the one Kubernetes uses for it."""
    for t in tolerations or ():
        if toleration_tolerates_taint(t, taint, **kw):
            return t
    return None


def _seconds(toleration: Mapping[str, Any]) -> int | None:
    secs = toleration.get("tolerationSeconds")
    if secs is None or isinstance(secs, bool) or not isinstance(secs, (int, float)):
        return None
    return max(0, int(secs))


def toleration_seconds_for(taint: Mapping[str, Any],
                           tolerations: Sequence[Mapping[str, Any]] | None,
                           **kw: bool) -> int | None:
    """How long a pod already on the node may stay despite ``taint``.

    * ``None``: tolerated forever -- the taint is not ``NoExecute`` (``tolerationSeconds`` only
      matters for NoExecute), or the toleration used has no ``tolerationSeconds``.
    * an ``int`` >= 0: seconds until eviction; zero and negative ``tolerationSeconds`` mean 0
      (evict immediately), as Kubernetes treats them.
    * raises :class:`TaintNotToleratedError` when no toleration tolerates the taint (Kubernetes
      evicts immediately; :func:`no_execute_eviction_delay` returns 0 for that case).

    Like Kubernetes' taint-eviction controller (``GetMatchingTolerations``), the toleration used
    for a taint is the *first* one in the pod's list that tolerates it -- not the one with the
    smallest ``tolerationSeconds``; the minimum is then taken across taints.
    """
    tol = matching_toleration(taint, tolerations, **kw)
    if tol is None:
        raise TaintNotToleratedError(taint)
    if _s(taint, "effect") != NO_EXECUTE:
        return None
    return _seconds(tol)


def no_execute_eviction_delay(taints: Sequence[Mapping[str, Any]] | None,
                              tolerations: Sequence[Mapping[str, Any]] | None,
                              **kw: bool) -> int | None:
    """The taint-eviction controller's verdict for a pod on a node with ``taints``.

    Only ``NoExecute`` taints count. ``None`` -> never evict (no NoExecute taint, or all are
    tolerated forever); ``0`` -> evict now (some NoExecute taint is not tolerated, or a used
    toleration has ``tolerationSeconds <= 0``); otherwise the minimum ``tolerationSeconds`` over
    the tolerations used (the first matching one per taint).
    """
    best: int | None = None
    for taint in taints or ():
        if _s(taint, "effect") != NO_EXECUTE:
            continue
        tol = matching_toleration(taint, tolerations, **kw)
        if tol is None:
            return 0
        secs = _seconds(tol)
        if secs is not None and (best is None or secs < best):
            best = secs
    return best


def taint_to_string(taint: Mapping[str, Any]) -> str:
    """``key=value:Effect`` (``key:Effect`` without a value), as kubectl prints a taint."""
    key, value, effect = _s(taint, "key"), _s(taint, "value"), _s(taint, "effect")
    out = f"{key}={value}" if value else key
    return f"{out}:{effect}" if effect else out
