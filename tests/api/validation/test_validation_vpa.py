"""VerticalPodAutoscaler and its checkpoint (autoscaling.k8s.io/v1): seed 002/003 and the CRD."""

import pytest

from kvert.api.validation import validate, validate_status_update, validate_update, validate_vpa
from .validation_helpers import (DUPLICATE, FORBIDDEN, INVALID, NOT_SUPPORTED, REQUIRED, TOO_MANY,
                                assert_cause, assert_valid, edit)

# Today's examples/hamster.yaml VPA (seed 003 deploys the same example).
HAMSTER_VPA = {
    "apiVersion": "autoscaling.k8s.io/v1", "kind": "VerticalPodAutoscaler",
    "metadata": {"name": "hamster-vpa", "namespace": "default"},
    "spec": {
        "targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "hamster"},
        "resourcePolicy": {"containerPolicies": [{
            "containerName": "*",
            "minAllowed": {"cpu": "100m", "memory": "50Mi"},
            "maxAllowed": {"cpu": 1, "memory": "500Mi"},
            "controlledResources": ["cpu", "memory"]}]},
    },
}

# Seed 003's "all settings" example, in the v1 shape (targetRef instead of selector).
MY_APP_VPA = {
    "apiVersion": "autoscaling.k8s.io/v1", "kind": "VerticalPodAutoscaler",
    "metadata": {"name": "my-app-vpa", "namespace": "default"},
    "spec": {
        "targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "my-app"},
        "updatePolicy": {"updateMode": "Auto"},
        "resourcePolicy": {"containerPolicies": [{
            "containerName": "my-app", "mode": "Auto",
            "minAllowed": {"cpu": "200m", "memory": "100Mi"},
            "maxAllowed": {"cpu": "1000m", "memory": "500Mi"}}]},
    },
    # Seed 003's recommender output for the hamster container.
    "status": {"conditions": [{"type": "RecommendationProvided", "status": "True",
                               "lastTransitionTime": "2018-10-01T08:52:56Z"}],
               "recommendation": {"containerRecommendations": [{
                   "containerName": "hamster",
                   "lowerBound": {"cpu": "115m", "memory": "53677237"},
                   "target": {"cpu": "688m", "memory": "319572800"},
                   "upperBound": {"cpu": "991408m", "memory": "460504404800"}}]}},
}

CHECKPOINT = {
    "apiVersion": "autoscaling.k8s.io/v1", "kind": "VerticalPodAutoscalerCheckpoint",
    "metadata": {"name": "hamster-vpa-hamster", "namespace": "default"},
    "spec": {"containerName": "hamster", "vpaObjectName": "hamster-vpa"},
    "status": {"lastUpdateTime": "2024-01-01T00:00:00Z", "version": "v3",
               "cpuHistogram": {"referenceTimestamp": "2024-01-01T00:00:00Z",
                                "bucketWeights": {"0": 10000, "12": 3500}, "totalWeight": 14.5},
               "memoryHistogram": {"referenceTimestamp": "2024-01-01T00:00:00Z",
                                   "bucketWeights": {"40": 10000}, "totalWeight": 2},
               "firstSampleStart": "2023-12-25T00:00:00Z", "lastSampleStart": "2024-01-01T00:00:00Z",
               "totalSamplesCount": 1200},
}

VALID = {
    "hamster": HAMSTER_VPA,
    "seed 003 full example": MY_APP_VPA,
    "InPlaceOrRecreate": edit(HAMSTER_VPA, lambda v: v["spec"].update(
        updatePolicy={"updateMode": "InPlaceOrRecreate", "minReplicas": 1,
                      "evictionRequirements": [{"resources": ["cpu"],
                                                "changeRequirement": "TargetHigherThanRequests"}]})),
    "InPlace": edit(HAMSTER_VPA, lambda v: v["spec"].update(updatePolicy={"updateMode": "InPlace"})),
    "off container": edit(HAMSTER_VPA, lambda v: v["spec"]["resourcePolicy"]["containerPolicies"].append(
        {"containerName": "sidecar", "mode": "Off"})),
    "one recommender": edit(HAMSTER_VPA, lambda v: v["spec"].update(recommenders=[{"name": "custom"}])),
    "checkpoint": CHECKPOINT,
}


@pytest.mark.parametrize("obj", VALID.values(), ids=VALID.keys())
def test_valid(obj):
    assert_valid(validate(obj))


P = "spec.resourcePolicy.containerPolicies[0]"
CASES = [
    ("spec missing", lambda v: v.pop("spec"), "spec", REQUIRED, None),
    ("targetRef missing (seed selector shape)", lambda v: v.update(spec={
        "selector": {"matchLabels": {"app": "my-app"}}}), "spec.targetRef", REQUIRED,
     "please migrate to v1"),
    ("targetRef without name", lambda v: v["spec"]["targetRef"].pop("name"), "spec.targetRef.name",
     REQUIRED, None),
    ("unknown update mode", lambda v: v["spec"].update(updatePolicy={"updateMode": "Sometimes"}),
     "spec.updatePolicy.updateMode", NOT_SUPPORTED,
     '"Off", "Initial", "Recreate", "InPlaceOrRecreate", "InPlace", "Auto"'),
    ("updatePolicy without mode", lambda v: v["spec"].update(updatePolicy={"minReplicas": 2}),
     "spec.updatePolicy.updateMode", REQUIRED, "updateMode is required if UpdatePolicy is used"),
    ("minReplicas zero", lambda v: v["spec"].update(updatePolicy={"updateMode": "Auto",
                                                                  "minReplicas": 0}),
     "spec.updatePolicy.minReplicas", INVALID, "minReplicas has to be positive"),
    ("eviction requirement", lambda v: v["spec"].update(updatePolicy={
        "updateMode": "Recreate", "evictionRequirements": [{"resources": ["cpu"],
                                                            "changeRequirement": "Whenever"}]}),
     "spec.updatePolicy.evictionRequirements[0].changeRequirement", NOT_SUPPORTED, None),
    ("containerName missing", lambda v: v["spec"]["resourcePolicy"]["containerPolicies"][0].pop(
        "containerName"), f"{P}.containerName", REQUIRED, None),
    ("duplicate containerName", lambda v: v["spec"]["resourcePolicy"]["containerPolicies"].append(
        {"containerName": "*"}), "spec.resourcePolicy.containerPolicies[1].containerName", DUPLICATE,
     None),
    ("unknown mode", lambda v: v["spec"]["resourcePolicy"]["containerPolicies"][0].update(mode="On"),
     f"{P}.mode", NOT_SUPPORTED, '"Auto", "Off"'),
    ("max below min", lambda v: v["spec"]["resourcePolicy"]["containerPolicies"][0]["maxAllowed"].update(
        cpu="50m"), f"{P}.maxAllowed[cpu]", INVALID, 'max resource for cpu is lower than min of "100m"'),
    ("fractional millicores", lambda v: v["spec"]["resourcePolicy"]["containerPolicies"][0][
        "minAllowed"].update(cpu="0.1005"), f"{P}.minAllowed[cpu]", INVALID,
     "must be a whole number of milli CPUs"),
    ("fractional bytes", lambda v: v["spec"]["resourcePolicy"]["containerPolicies"][0][
        "minAllowed"].update(memory="1.5"), f"{P}.minAllowed[memory]", INVALID,
     "must be a whole number of bytes"),
    ("bad quantity", lambda v: v["spec"]["resourcePolicy"]["containerPolicies"][0][
        "maxAllowed"].update(memory="lots"), f"{P}.maxAllowed[memory]", INVALID, "quantities must match"),
    ("controlled storage", lambda v: v["spec"]["resourcePolicy"]["containerPolicies"][0].update(
        controlledResources=["cpu", "ephemeral-storage"]), f"{P}.controlledResources[1]",
     NOT_SUPPORTED, '"cpu", "memory"'),
    ("controlledValues", lambda v: v["spec"]["resourcePolicy"]["containerPolicies"][0].update(
        controlledValues="LimitsOnly"), f"{P}.controlledValues", NOT_SUPPORTED,
     '"RequestsAndLimits", "RequestsOnly"'),
    ("controlledValues with mode Off", lambda v: v["spec"]["resourcePolicy"]["containerPolicies"][0].update(
        mode="Off", controlledValues="RequestsAndLimits"), f"{P}.controlledValues", FORBIDDEN,
     "controlledValues shouldn't be specified if container scaling mode is off"),
    ("two recommenders", lambda v: v["spec"].update(recommenders=[{"name": "a"}, {"name": "b"}]),
     "spec.recommenders", TOO_MANY, "must have at most 1 items"),
    ("recommender without name", lambda v: v["spec"].update(recommenders=[{}]),
     "spec.recommenders[0].name", REQUIRED, None),
    ("recommendation without target", lambda v: v.update(status={"recommendation": {
        "containerRecommendations": [{"containerName": "hamster", "lowerBound": {"cpu": "1"}}]}}),
     "status.recommendation.containerRecommendations[0].target", REQUIRED, None),
    ("recommendation without containerName", lambda v: v.update(status={"recommendation": {
        "containerRecommendations": [{"target": {"cpu": "1"}}]}}),
     "status.recommendation.containerRecommendations[0].containerName", REQUIRED, None),
    ("negative recommendation", lambda v: v.update(status={"recommendation": {
        "containerRecommendations": [{"containerName": "h", "target": {"cpu": "-1"}}]}}),
     "status.recommendation.containerRecommendations[0].target[cpu]", INVALID,
     "must be greater than or equal to 0"),
]


@pytest.mark.parametrize("name, change, field, reason, contains", CASES, ids=[c[0] for c in CASES])
def test_invalid_vpa(name, change, field, reason, contains):
    assert_cause(validate(edit(HAMSTER_VPA, change)), field, reason, contains)


def test_bounds_are_not_ordered():
    # Neither the CRD nor the VPA requires lowerBound <= target <= upperBound.
    vpa = edit(MY_APP_VPA, lambda v: v["status"]["recommendation"]["containerRecommendations"][0].update(
        lowerBound={"cpu": "2"}, upperBound={"cpu": "1m"}))
    assert_valid(validate(vpa))


def test_validate_vpa_entry_point():
    assert_valid(validate_vpa(HAMSTER_VPA))
    assert_cause(validate_vpa(edit(HAMSTER_VPA, lambda v: v["spec"].pop("targetRef"))),
                 "spec.targetRef", REQUIRED)


def test_update_and_status():
    new = edit(HAMSTER_VPA, lambda v: v["spec"].update(updatePolicy={"updateMode": "Off"}))
    assert_valid(validate_update(new, HAMSTER_VPA))
    status = edit(HAMSTER_VPA, lambda v: v.update(status=MY_APP_VPA["status"]))
    assert_valid(validate_status_update(status, HAMSTER_VPA))
    bad = edit(status, lambda v: v["status"]["conditions"][0].pop("status"))
    assert_cause(validate_status_update(bad, HAMSTER_VPA), "status.conditions[0].status", REQUIRED)


CHECKPOINT_CASES = [
    ("containerName missing", lambda c: c["spec"].pop("containerName"), "spec.containerName",
     REQUIRED, None),
    ("vpaObjectName missing", lambda c: c["spec"].pop("vpaObjectName"), "spec.vpaObjectName",
     REQUIRED, None),
    ("bucket index not an int", lambda c: c["status"]["cpuHistogram"]["bucketWeights"].update(x=1),
     "status.cpuHistogram.bucketWeights[x]", INVALID, "bucket index"),
    ("bucket weight not an int", lambda c: c["status"]["cpuHistogram"]["bucketWeights"].update(
        {"3": "heavy"}), "status.cpuHistogram.bucketWeights[3]", "FieldValueTypeInvalid", None),
    ("negative total weight", lambda c: c["status"]["memoryHistogram"].update(totalWeight=-1),
     "status.memoryHistogram.totalWeight", INVALID, None),
    ("bad timestamp", lambda c: c["status"].update(firstSampleStart="last week"),
     "status.firstSampleStart", INVALID, "RFC 3339"),
    ("negative sample count", lambda c: c["status"].update(totalSamplesCount=-5),
     "status.totalSamplesCount", INVALID, None),
]


@pytest.mark.parametrize("name, change, field, reason, contains", CHECKPOINT_CASES,
                         ids=[c[0] for c in CHECKPOINT_CASES])
def test_invalid_checkpoint(name, change, field, reason, contains):
    assert_cause(validate(edit(CHECKPOINT, change)), field, reason, contains)


def test_null_timestamps_are_allowed_in_checkpoints():
    assert_valid(validate(edit(CHECKPOINT, lambda c: c["status"].update(lastSampleStart=None))))
