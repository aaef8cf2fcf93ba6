"""How an HPA's proposed replica count becomes the one it sets: stabilization windows and
scaling policies (``normalizeDesiredReplicas*`` of upstream's ``horizontal.go``, 1.35).

:class:`ScalingHistory` keeps, per HPA key, the recent recommendations and scale events (in
memory, as upstream: a restarted controller starts its windows afresh) and answers
:class:`Normalized`: the count and the ``AbleToScale`` / ``ScalingLimited`` condition reasons
and messages upstream sets with it.

* without ``spec.behavior``: the largest recommendation of the downscale window (300 s), then
  ``minReplicas``, ``maxReplicas`` and a scale-up limit of max(2 x current, 4);
* with it: the scale-up window's smallest and the scale-down window's largest
  recommendation, then each direction's policies (``Pods`` / ``Percent`` per
  ``periodSeconds``, ``selectPolicy`` Max / Min / Disabled) counted from the scale events of
  each policy's period.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

INT32_MAX, INT32_MIN = 2**31 - 1, -2**31
SCALE_UP_LIMIT_FACTOR, SCALE_UP_LIMIT_MINIMUM = 2.0, 4.0

READY = ("ReadyForNewScale", "recommended size matches current size")
UP_STABILIZED = ("ScaleUpStabilized", "recent recommendations were lower than current one, applying the "
                                      "lowest recent recommendation")
DOWN_STABILIZED = ("ScaleDownStabilized", "recent recommendations were higher than current one, applying "
                                          "the highest recent recommendation")
WITHIN_RANGE = ("DesiredWithinRange", "the desired count is within the acceptable range")
TOO_FEW = ("TooFewReplicas", "the desired replica count is less than the minimum replica count")
TOO_MANY = ("TooManyReplicas", "the desired replica count is more than the maximum replica count")
UP_LIMIT = ("ScaleUpLimit", "the desired replica count is increasing faster than the maximum scale rate")
DOWN_LIMIT = ("ScaleDownLimit", "the desired replica count is decreasing faster than the maximum scale rate")


@dataclass
class ScaleEvent:
    change: int
    time: float
    outdated: bool = False


@dataclass
class Recommendation:
    replicas: int
    time: float


@dataclass(frozen=True)
class Normalized:
    replicas: int
    able: tuple[str, str]            # AbleToScale (True): reason, message
    limited: bool                    # ScalingLimited status
    limit: tuple[str, str]           # ScalingLimited: reason, message


def policy_limit(current: int, up_events: list[ScaleEvent], down_events: list[ScaleEvent],
                 rules: dict, now: float, up: bool) -> int:
    """``calculateScaleUpLimitWithScalingRules`` / ``calculateScaleDownLimitWithBehaviors``."""
    select = rules.get("selectPolicy") or "Max"
    if select == "Disabled":
        return current
    # scaling up, the largest change is the largest count; scaling down, the smallest
    pick_max = (select != "Min") == up
    result = INT32_MIN if pick_max else INT32_MAX
    for policy in rules.get("policies") or []:
        period = int(policy.get("periodSeconds") or 0)
        added = sum(e.change for e in up_events if e.time > now - period)
        removed = sum(e.change for e in down_events if e.time > now - period)
        start = current - added + removed
        value = int(policy.get("value") or 0)
        if policy.get("type") == "Pods":
            proposed = start + value if up else start - value
        elif up:
            proposed = int(math.ceil(start * (1 + value / 100)))
        else:
            proposed = int(start * (1 - value / 100))
        result = max(result, proposed) if pick_max else min(result, proposed)
    return result


def _record(records: list[Recommendation], old: int | None, desired: int, now: float) -> None:
    """Replace the recommendation that fell out of every window, or append."""
    if old is not None:
        records[old] = Recommendation(desired, now)
    else:
        records.append(Recommendation(desired, now))


@dataclass
class ScalingHistory:
    downscale_stabilization: float = 300.0    # --horizontal-pod-autoscaler-downscale-stabilization
    recommendations: dict[str, list[Recommendation]] = field(default_factory=dict)
    scale_up_events: dict[str, list[ScaleEvent]] = field(default_factory=dict)
    scale_down_events: dict[str, list[ScaleEvent]] = field(default_factory=dict)

    def record_initial(self, key: str, current: int, now: float) -> None:
        """``recordInitialRecommendation``: the first count seen counts as a recommendation."""
        self.recommendations.setdefault(key, [Recommendation(current, now)])

    def forget(self, key: str) -> None:
        for state in (self.recommendations, self.scale_up_events, self.scale_down_events):
            state.pop(key, None)

    # ---- without behavior ---------------------------------------------------------------------

    def normalize(self, key: str, current: int, desired: int, min_replicas: int, max_replicas: int,
                  now: float) -> Normalized:
        """``normalizeDesiredReplicas``."""
        stabilized = self.stabilize(key, desired, now)
        able = DOWN_STABILIZED if stabilized != desired else READY
        scale_up_limit = int(max(SCALE_UP_LIMIT_FACTOR * current, SCALE_UP_LIMIT_MINIMUM))
        maximum, limit = (scale_up_limit, UP_LIMIT) if max_replicas > scale_up_limit else (max_replicas, TOO_MANY)
        if stabilized < min_replicas:
            result, limit = min_replicas, TOO_FEW
        elif stabilized > maximum:
            result = maximum
        else:
            result, limit = stabilized, WITHIN_RANGE
        return Normalized(result, able, result != stabilized, limit)

    def stabilize(self, key: str, desired: int, now: float) -> int:
        """``stabilizeRecommendation``: the largest recommendation within the downscale window."""
        records = self.recommendations.setdefault(key, [])
        cutoff = now - self.downscale_stabilization
        largest, old = desired, None
        for i, rec in enumerate(records):
            if rec.time < cutoff:
                old = i
            elif rec.replicas > largest:
                largest = rec.replicas
        _record(records, old, desired, now)
        return largest

    # ---- with behavior --------------------------------------------------------------------------

    def normalize_with_behavior(self, key: str, behavior: dict, current: int, desired: int,
                                min_replicas: int, max_replicas: int, now: float) -> Normalized:
        """``normalizeDesiredReplicasWithBehaviors``; a scale-down window left unset is the
        controller's (``maybeInitScaleDownStabilizationWindow``)."""
        up = behavior.get("scaleUp") or {}
        down = behavior.get("scaleDown") or {}
        up_window = up.get("stabilizationWindowSeconds")
        down_window = down.get("stabilizationWindowSeconds")
        stabilized, direction = self.stabilize_with_behavior(
            key, current, desired, 0 if up_window is None else int(up_window),
            self.downscale_stabilization if down_window is None else int(down_window), now)
        result, limit = self.rate_limited(key, current, stabilized, min_replicas, max_replicas, up, down, now)
        return Normalized(result, direction if stabilized != desired else READY, result != stabilized, limit)

    def stabilize_with_behavior(self, key: str, current: int, desired: int, up_window: float,
                                down_window: float, now: float) -> tuple[int, tuple[str, str]]:
        """``stabilizeRecommendationWithBehaviors``: (count, the reason and message for a change)."""
        records = self.recommendations.setdefault(key, [])
        up_cutoff, down_cutoff = now - up_window, now - down_window
        up_rec = down_rec = desired
        old = None
        for i, rec in enumerate(records):
            if rec.time > up_cutoff:
                up_rec = min(rec.replicas, up_rec)
            if rec.time > down_cutoff:
                down_rec = max(rec.replicas, down_rec)
            if rec.time < up_cutoff and rec.time < down_cutoff:
                old = i
        _record(records, old, desired, now)
        return min(max(current, up_rec), down_rec), (UP_STABILIZED if desired >= current else DOWN_STABILIZED)

    def rate_limited(self, key: str, current: int, desired: int, min_replicas: int, max_replicas: int,
                     up: dict, down: dict, now: float) -> tuple[int, tuple[str, str]]:
        """``convertDesiredReplicasWithBehaviorRate``."""
        ups = self.scale_up_events.get(key, [])
        downs = self.scale_down_events.get(key, [])
        if desired > current:
            limit = max(policy_limit(current, ups, downs, up, now, True), current)
            maximum, why = (limit, UP_LIMIT) if max_replicas > limit else (max_replicas, TOO_MANY)
            if desired > maximum:
                return maximum, why
        elif desired < current:
            limit = min(policy_limit(current, ups, downs, down, now, False), current)
            minimum, why = (limit, DOWN_LIMIT) if min_replicas < limit else (min_replicas, TOO_FEW)
            if desired < minimum:
                return minimum, why
        return desired, WITHIN_RANGE

    def store_scale_event(self, behavior: dict | None, key: str, previous: int, new: int,
                          now: float) -> None:
        """``storeScaleEvent``: reuse an event older than the longest policy period, or append."""
        if behavior is None:
            return
        up = new > previous
        rules = behavior.get("scaleUp" if up else "scaleDown") or {}
        longest = max((int(p.get("periodSeconds") or 0) for p in rules.get("policies") or []), default=0)
        events = (self.scale_up_events if up else self.scale_down_events).setdefault(key, [])
        old = None
        for i, event in enumerate(events):
            if event.time < now - longest:
                event.outdated = True
            if event.outdated:
                old = i
        fresh = ScaleEvent(abs(new - previous), now)
        if old is not None:
            events[old] = fresh
        else:
            events.append(fresh)
