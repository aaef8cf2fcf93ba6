"""StatefulSet, DaemonSet, ControllerRevision, ReplicationController, PersistentVolumeClaim and
HorizontalPodAutoscaler: defaults and validation, with the messages of upstream's tests
(``pkg/apis/apps/validation/validation_test.go``, ``pkg/apis/core/validation``,
``pkg/apis/autoscaling/validation``, ``pkg/apis/*/v1/defaults_test.go``)."""

import pytest

from kvert.api.defaults import defaulted
from kvert.api.validation import validate, validate_status_update, validate_update
from .validation_helpers import FORBIDDEN, INVALID, NOT_SUPPORTED, REQUIRED, assert_cause, assert_valid, edit

LABELS = {"app": "web"}
TEMPLATE = {"metadata": {"labels": LABELS}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
STS = {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "web", "namespace": "default"},
       "spec": {"serviceName": "web", "selector": {"matchLabels": LABELS}, "template": TEMPLATE,
                "volumeClaimTemplates": [{"metadata": {"name": "www"}, "spec": {
                    "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}]}}
DS = {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent", "namespace": "default"},
      "spec": {"selector": {"matchLabels": LABELS}, "template": TEMPLATE}}
RC = {"apiVersion": "v1", "kind": "ReplicationController",
      "metadata": {"name": "nginx", "namespace": "default"}, "spec": {"template": TEMPLATE}}
HPA = {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
       "metadata": {"name": "web", "namespace": "default"},
       "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                "maxReplicas": 5}}
PVC = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data", "namespace": "default"},
       "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}


# ---- defaults --------------------------------------------------------------------------------

def test_statefulset_defaults():
    # TestSetDefaultStatefulSet (pkg/apis/apps/v1/defaults_test.go), MaxUnavailableStatefulSet on
    spec = defaulted(STS)["spec"]
    assert spec["replicas"] == 1 and spec["revisionHistoryLimit"] == 10
    assert spec["podManagementPolicy"] == "OrderedReady"
    assert spec["updateStrategy"] == {"type": "RollingUpdate",
                                      "rollingUpdate": {"partition": 0, "maxUnavailable": 1}}
    assert spec["persistentVolumeClaimRetentionPolicy"] == {"whenDeleted": "Retain", "whenScaled": "Retain"}
    claim = spec["volumeClaimTemplates"][0]
    assert claim["spec"]["volumeMode"] == "Filesystem" and claim["status"] == {"phase": "Pending"}
    on_delete = defaulted(edit(STS, lambda o: o["spec"].update(updateStrategy={"type": "OnDelete"})))
    assert on_delete["spec"]["updateStrategy"] == {"type": "OnDelete"}


def test_daemonset_defaults():
    # TestSetDefaultDaemonSetSpec
    spec = defaulted(DS)["spec"]
    assert spec["updateStrategy"] == {"type": "RollingUpdate",
                                      "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}}
    assert spec["revisionHistoryLimit"] == 10 and "replicas" not in spec


def test_replication_controller_defaults():
    # TestSetDefaultReplicationController (pkg/apis/core/v1/defaults_test.go)
    rc = defaulted(RC)
    assert rc["spec"]["selector"] == LABELS and rc["metadata"]["labels"] == LABELS
    assert rc["spec"]["replicas"] == 1
    kept = defaulted(edit(RC, lambda o: (o["spec"].update(selector={"x": "y"}),
                                         o["metadata"].update(labels={"l": "m"}))))
    assert kept["spec"]["selector"] == {"x": "y"} and kept["metadata"]["labels"] == {"l": "m"}


def test_hpa_defaults():
    # TestSetDefaultHPA and TestHorizontalPodAutoscalerAnnotations (autoscaling/v2 defaults_test.go)
    spec = defaulted(HPA)["spec"]
    assert spec["minReplicas"] == 1
    assert spec["metrics"] == [{"type": "Resource", "resource": {
        "name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}}]
    assert "behavior" not in spec
    behavior = defaulted(edit(HPA, lambda o: o["spec"].update(behavior={"scaleDown": {"selectPolicy": "Min"}})))
    rules = behavior["spec"]["behavior"]
    assert rules["scaleUp"] == {"stabilizationWindowSeconds": 0, "selectPolicy": "Max", "policies": [
        {"type": "Pods", "value": 4, "periodSeconds": 15}, {"type": "Percent", "value": 100, "periodSeconds": 15}]}
    assert rules["scaleDown"] == {"stabilizationWindowSeconds": 300, "selectPolicy": "Min",
                                  "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]}


# ---- StatefulSet -------------------------------------------------------------------------------

def test_valid_statefulsets():
    assert_valid(validate(STS))
    # the pod spec is not validated (ValidatePodTemplateSpecForStatefulSet): the claim
    # templates provide the volumes its mounts name
    mounted = edit(STS, lambda o: o["spec"]["template"]["spec"]["containers"][0].update(
        volumeMounts=[{"name": "www", "mountPath": "/data"}]))
    assert_valid(validate(mounted))
    assert_valid(validate(edit(STS, lambda o: o["spec"].update(podManagementPolicy="Parallel"))))


@pytest.mark.parametrize("change,field,reason,contains", [
    # TestValidateStatefulSet error cases
    (lambda s: s["spec"].update(podManagementPolicy="Fancy"), "spec.podManagementPolicy", NOT_SUPPORTED, None),
    (lambda s: s["spec"].update(replicas=-1), "spec.replicas", INVALID, "greater than or equal to 0"),
    (lambda s: s["spec"].update(selector={"matchLabels": {"app": "other"}}), "spec.template.metadata.labels",
     INVALID, "`selector` does not match template `labels`"),
    (lambda s: s["spec"].update(selector={}), "spec.selector", INVALID, "empty selector is invalid for statefulset"),
    (lambda s: s["spec"]["template"]["spec"].update(restartPolicy="OnFailure"),
     "spec.template.spec.restartPolicy", NOT_SUPPORTED, None),
    (lambda s: s["spec"]["template"]["spec"].update(activeDeadlineSeconds=10),
     "spec.template.spec.activeDeadlineSeconds", FORBIDDEN, "activeDeadlineSeconds in StatefulSet is not Supported"),
    (lambda s: s["spec"].update(updateStrategy={"type": "OnDelete", "rollingUpdate": {"partition": 1}}),
     "spec.updateStrategy.rollingUpdate", INVALID, "only allowed for updateStrategy 'RollingUpdate'"),
    (lambda s: s["spec"].update(updateStrategy={"type": "Fancy"}), "spec.updateStrategy.type", NOT_SUPPORTED, None),
    (lambda s: s["spec"].update(updateStrategy={"type": "RollingUpdate", "rollingUpdate": {"partition": -1}}),
     "spec.updateStrategy.rollingUpdate.partition", INVALID, "greater than or equal to 0"),
    (lambda s: s["spec"].update(updateStrategy={"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0}}),
     "spec.updateStrategy.rollingUpdate.maxUnavailable", INVALID, "must be greater than 0"),
    (lambda s: s["spec"].update(updateStrategy={"type": "RollingUpdate",
                                                "rollingUpdate": {"maxUnavailable": "110%"}}),
     "spec.updateStrategy.rollingUpdate.maxUnavailable", INVALID, "must not be greater than 100%"),
    (lambda s: s["spec"].update(persistentVolumeClaimRetentionPolicy={"whenDeleted": "Keep"}),
     "spec.persistentVolumeClaimRetentionPolicy.whenDeleted", NOT_SUPPORTED, None),
    (lambda s: s["spec"].update(ordinals={"start": -2}), "spec.ordinals.start", INVALID, None),
    (lambda s: s["spec"]["volumeClaimTemplates"][0]["spec"].update(accessModes=[]),
     "spec.volumeClaimTemplates[0].spec.accessModes", REQUIRED, "at least 1 access mode is required"),
    (lambda s: s["metadata"].update(name="web.v1"), "metadata.name", INVALID, None),
])
def test_invalid_statefulsets(change, field, reason, contains):
    assert_cause(validate(edit(STS, change)), field, reason, contains)


def test_statefulset_update_rules():
    # TestValidateStatefulSetUpdate: only replicas, ordinals, template, updateStrategy,
    # revisionHistoryLimit, persistentVolumeClaimRetentionPolicy and minReadySeconds change
    old = defaulted(STS)
    ok = edit(old, lambda s: s["spec"].update(replicas=5, minReadySeconds=3))
    assert_valid(validate_update(ok, old))
    bad = edit(old, lambda s: s["spec"].update(serviceName="other"))
    assert_cause(validate_update(bad, old), "spec", FORBIDDEN,
                 "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', "
                 "'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and "
                 "'minReadySeconds' are forbidden")


def test_statefulset_status():
    # TestValidateStatefulSetStatus
    old = edit(defaulted(STS), lambda s: s.update(status={"replicas": 3, "collisionCount": 2}))
    new = edit(old, lambda s: s.update(status={"replicas": 2, "readyReplicas": 3, "collisionCount": 1}))
    causes = validate_status_update(new, old)
    assert_cause(causes, "status.readyReplicas", INVALID, "cannot be greater than status.replicas")
    assert_cause(causes, "status.collisionCount", INVALID, "cannot be decremented")


# ---- DaemonSet ------------------------------------------------------------------------------

@pytest.mark.parametrize("change,field,reason,contains", [
    # TestValidateDaemonSet / TestValidateRollingUpdateDaemonSet
    (lambda d: d["spec"].update(selector={}), "spec.selector", INVALID, "empty selector is invalid for daemonset"),
    (lambda d: d["spec"].update(selector={"matchLabels": {"app": "x"}}), "spec.template.metadata.labels",
     INVALID, "`selector` does not match template `labels`"),
    (lambda d: d["spec"]["template"]["spec"].update(restartPolicy="Never"),
     "spec.template.spec.restartPolicy", NOT_SUPPORTED, None),
    (lambda d: d["spec"].update(updateStrategy={"type": "Fancy"}), "spec.updateStrategy.type", NOT_SUPPORTED, None),
    (lambda d: d["spec"].update(updateStrategy={"type": "RollingUpdate",
                                                "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 0}}),
     "spec.updateStrategy.rollingUpdate.maxUnavailable", REQUIRED, "cannot be 0 when maxSurge is 0"),
    (lambda d: d["spec"].update(updateStrategy={"type": "RollingUpdate",
                                                "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 1}}),
     "spec.updateStrategy.rollingUpdate.maxSurge", INVALID, "may not be set when maxUnavailable is non-zero"),
    (lambda d: d["spec"].update(updateStrategy={"type": "RollingUpdate",
                                                "rollingUpdate": {"maxUnavailable": "150%"}}),
     "spec.updateStrategy.rollingUpdate.maxUnavailable", INVALID, "must not be greater than 100%"),
])
def test_invalid_daemonsets(change, field, reason, contains):
    assert_cause(validate(edit(DS, change)), field, reason, contains)


def test_daemonset_valid_and_selector_immutable():
    assert_valid(validate(DS))
    surge = edit(DS, lambda d: d["spec"].update(updateStrategy={
        "type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": "10%"}}))
    assert_valid(validate(surge))
    old = defaulted(DS)
    new = edit(old, lambda d: (d["spec"].update(selector={"matchLabels": {"app": "web", "x": "y"}}),
                               d["spec"]["template"]["metadata"]["labels"].update(x="y")))
    assert_cause(validate_update(new, old), "spec.selector", INVALID, "field is immutable")


def test_controller_revision():
    # TestValidateControllerRevision / TestValidateControllerRevisionUpdate
    rev = {"apiVersion": "apps/v1", "kind": "ControllerRevision",
           "metadata": {"name": "web-1", "namespace": "default"}, "data": {"a": 1}, "revision": 1}
    assert_valid(validate(rev))
    assert_cause(validate(edit(rev, lambda r: r.pop("data"))), "data", REQUIRED, "data is mandatory")
    assert_cause(validate(edit(rev, lambda r: r.update(revision=-1))), "revision", INVALID, None)
    assert_cause(validate_update(edit(rev, lambda r: r.update(data={"b": 2})), rev), "data", INVALID,
                 "field is immutable")
    assert_valid(validate_update(edit(rev, lambda r: r.update(revision=2)), rev))


# ---- ReplicationController, PersistentVolumeClaim -------------------------------------------------

@pytest.mark.parametrize("change,field,reason,contains", [
    # TestValidateReplicationController error cases
    (lambda r: r["spec"].update(selector={"app": "other"}), "spec.template.metadata.labels", INVALID,
     "`selector` does not match template `labels`"),
    (lambda r: r["spec"].update(replicas=-1), "spec.replicas", INVALID, None),
    (lambda r: r["spec"].pop("template"), "spec.template", REQUIRED, None),
    (lambda r: r["spec"]["template"]["spec"].update(restartPolicy="OnFailure"),
     "spec.template.spec.restartPolicy", NOT_SUPPORTED, None),
    (lambda r: r["spec"]["template"]["spec"].update(activeDeadlineSeconds=1),
     "spec.template.spec.activeDeadlineSeconds", FORBIDDEN,
     "activeDeadlineSeconds in ReplicationController is not Supported"),
])
def test_invalid_replication_controllers(change, field, reason, contains):
    assert_cause(validate(edit(RC, change)), field, reason, contains)


def test_replication_controller_without_template_labels_needs_a_selector():
    rc = edit(RC, lambda r: r["spec"]["template"]["metadata"].pop("labels"))
    assert_cause(validate(rc), "spec.selector", REQUIRED, None)
    assert_valid(validate(RC))


def test_persistent_volume_claims():
    # TestValidatePersistentVolumeClaim / ValidatePersistentVolumeClaimUpdate
    assert_valid(validate(PVC))
    assert_cause(validate(edit(PVC, lambda p: p["spec"].update(accessModes=["Sometimes"]))),
                 "spec.accessModes", NOT_SUPPORTED, None)
    assert_cause(validate(edit(PVC, lambda p: p["spec"].update(resources={}))),
                 "spec.resources[storage]", REQUIRED, None)
    assert_cause(validate(edit(PVC, lambda p: p["spec"]["resources"]["requests"].update(storage="0"))),
                 "spec.resources[storage]", INVALID, "must be greater than zero")
    assert_cause(validate(edit(PVC, lambda p: p["spec"].update(accessModes=["ReadWriteOncePod", "ReadOnlyMany"]))),
                 "spec.accessModes", FORBIDDEN, "may not use ReadWriteOncePod with other access modes")
    old = defaulted(PVC)
    grown = edit(old, lambda p: p["spec"]["resources"]["requests"].update(storage="2Gi"))
    assert_valid(validate_update(grown, old))
    # ValidatePersistentVolumeClaimUpdate: volumeName may be set once (the binder does), not changed
    bound = edit(old, lambda p: p["spec"].update(volumeName="pv-1"))
    assert_valid(validate_update(bound, old))
    moved = edit(bound, lambda p: p["spec"].update(volumeName="pv-2"))
    assert_cause(validate_update(moved, bound), "spec", FORBIDDEN, "spec is immutable after creation")


# ---- HorizontalPodAutoscaler -------------------------------------------------------------------

def _metric(**target):
    return [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", **target}}}]


@pytest.mark.parametrize("change,field,reason,contains", [
    # TestValidateHorizontalPodAutoscaler error cases
    (lambda h: h["spec"].update(minReplicas=0), "spec.minReplicas", INVALID, "must be greater than or equal to 1"),
    (lambda h: h["spec"].update(minReplicas=7), "spec.maxReplicas", INVALID,
     "must be greater than or equal to `minReplicas`"),
    (lambda h: h["spec"].update(maxReplicas=0), "spec.maxReplicas", INVALID, "must be greater than 0"),
    (lambda h: h["spec"]["scaleTargetRef"].update(kind=""), "spec.scaleTargetRef.kind", REQUIRED, None),
    (lambda h: h["spec"]["scaleTargetRef"].update(name="a/b"), "spec.scaleTargetRef.name", INVALID,
     "may not contain '/'"),
    (lambda h: h["spec"].update(metrics=_metric(averageUtilization=-1)),
     "spec.metrics[0].resource.target.averageUtilization", INVALID, "must be greater than 0"),
    (lambda h: h["spec"].update(metrics=_metric(averageUtilization=50, averageValue="100m")),
     "spec.metrics[0].resource.target.averageValue", FORBIDDEN,
     "may not set both a target raw value and a target utilization"),
    (lambda h: h["spec"].update(metrics=[{"type": "Resource"}]), "spec.metrics[0].resource", REQUIRED,
     "must populate information for the given metric source"),
    (lambda h: h["spec"].update(metrics=[{"type": "Magic"}]), "spec.metrics[0].type", NOT_SUPPORTED, None),
    (lambda h: h["spec"].update(behavior={"scaleUp": {"stabilizationWindowSeconds": 3601}}),
     "spec.behavior.scaleUp.stabilizationWindowSeconds", INVALID, "must be less than or equal to 3600"),
    (lambda h: h["spec"].update(behavior={"scaleDown": {"policies": [
        {"type": "Pods", "value": 1, "periodSeconds": 1801}]}}),
     "spec.behavior.scaleDown.policies[0].periodSeconds", INVALID, "must be less than or equal to 1800"),
])
def test_invalid_hpas(change, field, reason, contains):
    assert_cause(validate(edit(HPA, change)), field, reason, contains)


def test_valid_hpa():
    assert_valid(validate(HPA))
    assert_valid(validate(edit(HPA, lambda h: h["spec"].update(
        metrics=_metric(averageUtilization=60), behavior={"scaleDown": {"stabilizationWindowSeconds": 60}}))))
