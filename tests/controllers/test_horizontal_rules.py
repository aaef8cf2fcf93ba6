"""The HPA controller's normalization against upstream's tables in
``pkg/controller/podautoscaler/horizontal_test.go``: TestScalingWithRules (scaling
policies with past scale events), TestNormalizeDesiredReplicas (the downscale
stabilization window), TestStoreScaleEvents (reuse of outdated events) and
TestConvertDesiredReplicasWithRules (the legacy limits without ``behavior``); and what a VPA
controls, as the conflict check reads it."""

from __future__ import annotations

import pytest

from kvert.controllers.scalingrules import Recommendation, ScaleEvent, ScalingHistory
from kvert.controllers.vpaconflict import controlled_resources

NOW = 1_000_000.0


def controller() -> ScalingHistory:
    return ScalingHistory(downscale_stabilization=300.0)


def rules(pods=0, pods_period=0, percent=0, percent_period=0, window=None) -> dict:
    """``generateScalingRules``."""
    out = {"stabilizationWindowSeconds": window, "selectPolicy": "Max", "policies": []}
    if pods:
        out["policies"].append({"type": "Pods", "value": pods, "periodSeconds": pods_period})
    if percent:
        out["policies"].append({"type": "Percent", "value": percent, "periodSeconds": percent_period})
    return out


def up_defaults(given: dict | None) -> dict:
    """``GenerateHPAScaleUpRules``: missing fields from the defaults."""
    given = dict(given or {})
    if given.get("stabilizationWindowSeconds") is None:
        given["stabilizationWindowSeconds"] = 0
    given.setdefault("selectPolicy", "Max")
    if not given.get("policies"):
        given["policies"] = [{"type": "Pods", "value": 4, "periodSeconds": 15},
                             {"type": "Percent", "value": 100, "periodSeconds": 15}]
    return given


def down_defaults(given: dict | None) -> dict:
    """``GenerateHPAScaleDownRules`` (stabilization left to the controller's 300 s)."""
    given = dict(given or {})
    given.setdefault("selectPolicy", "Max")
    if not given.get("policies"):
        given["policies"] = [{"type": "Percent", "value": 100, "periodSeconds": 15}]
    return given


def spread(raw: list[int], period: int) -> list[ScaleEvent]:
    """``generateEventsUniformDistribution``: each event in the middle of its segment of the
    last ``period`` seconds (made a moment before the check, as in the Go test)."""
    segment = period / len(raw)
    return [ScaleEvent(change, NOW - int(period - segment * (i + 1) + segment / 2) - 0.001)
            for i, change in enumerate(raw)]


# TestScalingWithRules: (name, up events, down events, min, max, up rules, down rules,
#                        current, prenormalized, expected, condition)
SCALING_WITH_RULES = [
    ("prenormalized desired replicas within range", [], [], 3, 8, None, None, 5, 7, 7, "DesiredWithinRange"),
    ("prenormalized desired replicas < minReplicas", [], [], 2, 8, None, None, 3, 1, 2, "TooFewReplicas"),
    ("within range when minReplicas is 0", [], [], 0, 10, None, None, 1, 0, 0, "DesiredWithinRange"),
    ("maxReplicas is the limit because maxReplicas < scaleUpLimit", [], [], 1, 10, None, None, 20, 1000, 10,
     "TooManyReplicas"),
    ("desired replica count is more than the maximum replica count", [], [], 100, 150, None, None, 100, 1000,
     150, "TooManyReplicas"),
    ("scaleUpLimit < maxReplicas with user policies", [], [], 1, 2000, rules(0, 0, 1, 60, 0), None, 3, 1000, 4,
     "ScaleUpLimit"),
    ("scaleUp with default behavior", [], [], 1, 1000, None, None, 10, 50, 20, "ScaleUpLimit"),
    ("scaleUp with pods policy larger than percent policy", [], [], 1, 1000, rules(100, 60, 100, 60, 0), None,
     10, 500, 110, "ScaleUpLimit"),
    ("scaleUp with percent policy larger than pods policy", [], [], 1, 1000, rules(2, 60, 100, 60, 0), None,
     10, 500, 20, "ScaleUpLimit"),
    ("scaleUp with spec MaxReplicas limitation with large pod policy", [], [], 1, 1000, rules(100, 60, 0, 0, 0),
     None, 10, 50, 50, "DesiredWithinRange"),
    ("scaleUp with pod policy limitation", [], [], 1, 1000, rules(30, 60, 0, 0, 0), None, 10, 50, 40,
     "ScaleUpLimit"),
    ("scaleUp with percent policy limitation", [], [], 1, 1000, rules(0, 0, 200, 60, 0), None, 10, 50, 30,
     "ScaleUpLimit"),
    ("scaleDown with percent policy larger than pod policy", [], [], 1, 1000, None, rules(20, 60, 1, 60, 300),
     100, 2, 80, "ScaleDownLimit"),
    ("scaleDown with pod policy larger than percent policy", [], [], 1, 1000, None, rules(2, 60, 1, 60, 300),
     100, 2, 98, "ScaleDownLimit"),
    ("scaleDown with spec MinReplicas limitation with large pod policy", [], [], 1, 1000, None,
     rules(100, 60, 0, 0, 300), 10, 0, 1, "TooFewReplicas"),
    ("scaleDown with spec MinReplicas limitation with large percent policy", [], [], 5, 1000, None,
     rules(0, 0, 100, 60, 300), 10, 2, 5, "TooFewReplicas"),
    ("scaleDown with pod policy limitation", [], [], 1, 1000, None, rules(5, 60, 0, 0, 300), 10, 2, 5,
     "ScaleDownLimit"),
    ("scaleDown with percent policy limitation", [], [], 1, 1000, None, rules(0, 0, 50, 60, 300), 10, 5, 5,
     "DesiredWithinRange"),
    ("scaleUp with MaxReplicas limitation with large pod policy and events", spread([1, 5, 9], 120), [], 1, 200,
     rules(300, 60, 0, 0, 0), None, 100, 500, 200, "TooManyReplicas"),
    ("scaleUp with currentReplicas limitation with a lot of recent scale up events", spread([1, 5, 9], 120), [],
     1, 1000, rules(5, 120, 0, 0, 0), None, 100, 500, 100, "ScaleUpLimit"),
    ("scaleUp with pod policy and previous scale up events", spread([1, 5, 9], 120), [], 1, 1000,
     rules(150, 120, 0, 0, 0), None, 100, 500, 235, "ScaleUpLimit"),
    ("scaleUp with percent policy and previous scale up events", spread([1, 5, 9], 120), [], 1, 1000,
     rules(0, 0, 200, 120, 0), None, 100, 500, 255, "ScaleUpLimit"),
    ("scaleUp with percent policy and previous scale up and down events", spread([4], 120), spread([2], 120),
     1, 1000, rules(0, 0, 300, 300, 0), None, 6, 24, 16, "ScaleUpLimit"),
    ("scaleDown with default policy and previous events", [], spread([1, 5, 9], 120), 1, 1000, None, None,
     10, 5, 5, "DesiredWithinRange"),
    ("scaleDown with spec MinReplicas limitation with large pod policy and previous events", [],
     spread([1, 5, 9], 120), 5, 1000, None, rules(130, 120, 0, 0, 300), 100, 0, 5, "TooFewReplicas"),
    ("scaleDown with pod policy limitation and previous events", [], spread([1, 5, 9], 120), 1, 1000, None,
     rules(5, 120, 0, 0, 300), 100, 2, 100, "ScaleDownLimit"),
    ("scaleDown with percent policy limitation and previous events", [], spread([2, 4, 6], 120), 1, 1000, None,
     rules(0, 0, 50, 120, 300), 100, 0, 56, "ScaleDownLimit"),
    ("scaleDown with percent policy and previous scale up and down events", spread([2], 120), spread([4], 120),
     1, 1000, None, rules(0, 0, 50, 180, 0), 10, 1, 6, "ScaleDownLimit"),
    ("scaleDown with previous events preventing further scale down", [], spread([10, 10, 10], 120), 1, 1000,
     None, rules(0, 0, 10, 120, 300), 100, 0, 100, "ScaleDownLimit"),
    ("scaleDown with previous events still allowing more scale down", [], spread([10, 10, 10], 120), 1, 1000,
     None, rules(0, 0, 1000, 120, 300), 10, 5, 5, "DesiredWithinRange"),
    ("'outdated' flag for events for one behavior for up", spread([8, 12, 9, 11], 120), [], 1, 1000,
     rules(1000, 60, 0, 0, 0), None, 100, 200, 200, "DesiredWithinRange"),
    ("events marked 'outdated' for two policies for down", [], spread([8, 12, 9, 11], 120), 1, 1000, None,
     rules(1000, 30, 100, 60, 300), 100, 5, 5, "DesiredWithinRange"),
]


@pytest.mark.parametrize("name, ups, downs, min_r, max_r, up, down, current, desired, expected, condition",
                         SCALING_WITH_RULES, ids=[c[0] for c in SCALING_WITH_RULES])
def test_scaling_with_rules(name, ups, downs, min_r, max_r, up, down, current, desired, expected, condition):
    c = controller()
    c.scale_up_events["k"] = list(ups)
    c.scale_down_events["k"] = list(downs)
    replicas, (reason, _) = c.rate_limited("k", current, desired, min_r, max_r, up_defaults(up),
                                           down_defaults(down), NOW)
    assert (replicas, reason) == (expected, condition)


@pytest.mark.parametrize("name, records, desired, stabilized, length", [
    ("empty log", [], 5, 5, 1),
    ("stabilize", [[4, NOW - 120], [5, NOW - 60]], 3, 5, 3),
    ("no stabilize", [[1, NOW - 120], [2, NOW - 60]], 3, 3, 3),
    ("no stabilize - old recommendations", [[10, NOW - 600], [9, NOW - 540]], 3, 3, 2),
    ("stabilize - old recommendations", [[10, NOW - 600], [4, NOW - 60], [5, NOW - 120], [9, NOW - 540]], 3, 5, 4),
])
def test_normalize_desired_replicas(name, records, desired, stabilized, length):
    # TestNormalizeDesiredReplicas (stabilizeRecommendation, 5 minute window)
    c = controller()
    c.recommendations["k"] = [Recommendation(*r) for r in records]
    assert c.stabilize("k", desired, NOW) == stabilized
    assert len(c.recommendations["k"]) == length


@pytest.mark.parametrize("name, previous, behavior_rules, stored", [
    ("empty entries with default behavior", [], None, []),
    ("empty entries with two-policy-behavior", [], rules(10, 60, 100, 60, 0), [(5, False)]),
    ("one outdated entry to be kept untouched without behavior", [(7, 61)], None, [(7, False)]),
    ("one outdated entry to be replaced with behavior", [(7, 61)], rules(10, 60, 100, 60, 0), [(5, False)]),
    ("one actual entry to be not touched with behavior", [(7, 58)], rules(10, 60, 100, 60, 0),
     [(7, False), (5, False)]),
    ("two entries, one of them to be replaced", [(7, 61), (6, 59)], rules(10, 60, 0, 0, 0),
     [(5, False), (6, False)]),
    ("replace one entry, use policies with different periods", [(8, 29), (6, 59), (7, 61), (9, 61)],
     rules(10, 60, 100, 30, 0), [(8, False), (6, False), (7, True), (5, False)]),
    ("two entries, both actual", [(7, 58), (6, 59)], rules(10, 120, 100, 30, 0),
     [(7, False), (6, False), (5, False)]),
])
def test_store_scale_events(name, previous, behavior_rules, stored):
    # TestStoreScaleEvents (scale up by 5 from 10)
    c = controller()
    c.scale_up_events["k"] = [ScaleEvent(change, NOW - age) for change, age in previous]
    behavior = None if behavior_rules is None else {"scaleUp": behavior_rules}
    c.store_scale_event(behavior, "k", 10, 15, NOW)
    assert [(e.change, e.outdated) for e in c.scale_up_events.get("k", [])] == stored


@pytest.mark.parametrize("current, desired, min_r, max_r, expected, reason", [
    (5, 7, 3, 10, 7, "DesiredWithinRange"),
    (5, 2, 3, 10, 3, "TooFewReplicas"),
    (5, 15, 3, 10, 10, "TooManyReplicas"),
    (1, 10, 1, 10, 4, "ScaleUpLimit"),       # max(2 x 1, 4)
    (10, 100, 1, 100, 20, "ScaleUpLimit"),   # max(2 x 10, 4)
])
def test_convert_desired_replicas_with_rules(current, desired, min_r, max_r, expected, reason):
    # TestConvertDesiredReplicasWithRules / calculateScaleUpLimit: without behavior
    normalized = controller().normalize("k", current, desired, min_r, max_r, NOW)
    assert (normalized.replicas, normalized.limit[0]) == (expected, reason)
    assert normalized.limited == (expected != desired)


@pytest.mark.parametrize("spec, containers, expected", [
    ({}, [], {"cpu", "memory"}),
    ({"updatePolicy": {"updateMode": "Off"}}, [], set()),
    ({"resourcePolicy": {"containerPolicies": [{"containerName": "*", "controlledResources": ["memory"]}]}},
     [], {"memory"}),
    ({"resourcePolicy": {"containerPolicies": [{"containerName": "*", "controlledResources": []}]}}, [], set()),
    ({"resourcePolicy": {"containerPolicies": [{"containerName": "app", "mode": "Off"},
                                               {"containerName": "*", "controlledResources": ["cpu"]}]}},
     ["app"], set()),
    ({"resourcePolicy": {"containerPolicies": [{"containerName": "app", "mode": "Off"}]}}, ["sidecar"],
     {"cpu", "memory"}),
])
def test_what_a_vpa_controls(spec, containers, expected):
    # the VPA's GetContainerResourcePolicy / controlledResources defaults, as the HPA reads them
    assert controlled_resources({"spec": spec}, containers) == expected
