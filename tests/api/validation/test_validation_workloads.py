"""Deployment and ReplicaSet (apps/v1): seed 003's hamster and the docs' examples."""

import pytest

from kvert.api.validation import validate, validate_status_update, validate_update
from .validation_helpers import (FORBIDDEN, INVALID, NOT_SUPPORTED, REQUIRED, assert_cause,
                                assert_valid, edit)

HAMSTER = {
    "apiVersion": "apps/v1", "kind": "Deployment",
    "metadata": {"name": "hamster", "namespace": "default"},
    "spec": {
        "selector": {"matchLabels": {"app": "hamster"}},
        "replicas": 2,
        "template": {
            "metadata": {"labels": {"app": "hamster"}},
            "spec": {
                "securityContext": {"runAsNonRoot": True, "runAsUser": 65534},
                "containers": [{
                    "name": "hamster", "image": "registry.k8s.io/ubuntu-slim:0.14",
                    "resources": {"requests": {"cpu": "100m", "memory": "50Mi"}},
                    "command": ["/bin/sh"],
                    "args": ["-c", "while true; do timeout 0.5s yes >/dev/null; sleep 0.5s; done"],
                }],
            },
        },
    },
}

NGINX = {
    "apiVersion": "apps/v1", "kind": "Deployment",
    "metadata": {"name": "nginx-deployment", "namespace": "default", "labels": {"app": "nginx"}},
    "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "nginx"}},
             "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
             "template": {"metadata": {"labels": {"app": "nginx"}},
                          "spec": {"containers": [{"name": "nginx", "image": "nginx:1.14.2",
                                                   "ports": [{"containerPort": 80}]}]}}},
}

FRONTEND_RS = {
    "apiVersion": "apps/v1", "kind": "ReplicaSet",
    "metadata": {"name": "frontend", "namespace": "default", "labels": {"app": "guestbook",
                                                                        "tier": "frontend"}},
    "spec": {"replicas": 3,
             "selector": {"matchExpressions": [{"key": "tier", "operator": "In",
                                                "values": ["frontend"]}]},
             "template": {"metadata": {"labels": {"tier": "frontend"}},
                          "spec": {"containers": [
                              {"name": "php-redis",
                               "image": "us-docker.pkg.dev/google-samples/containers/gke/gb-frontend:v5"}]}}},
}


@pytest.mark.parametrize("obj", [HAMSTER, NGINX, FRONTEND_RS,
                                 edit(NGINX, lambda d: d["spec"].update(strategy={"type": "Recreate"}))],
                         ids=["hamster", "nginx-deployment", "frontend-rs", "recreate"])
def test_valid_workloads(obj):
    assert_valid(validate(obj))


T = "spec.template"
CASES = [
    ("selector missing", lambda d: d["spec"].pop("selector"), "spec.selector", REQUIRED, None),
    ("empty selector", lambda d: d["spec"].update(selector={}), "spec.selector", INVALID,
     "empty selector is invalid for deployment"),
    ("selector does not match", lambda d: d["spec"]["selector"]["matchLabels"].update(app="mouse"),
     f"{T}.metadata.labels", INVALID, "`selector` does not match template `labels`"),
    ("bad selector operator", lambda d: d["spec"].update(selector={"matchExpressions": [
        {"key": "app", "operator": "Like", "values": ["x"]}]}),
     "spec.selector.matchExpressions[0].operator", INVALID, "not a valid selector operator"),
    ("In without values", lambda d: d["spec"].update(selector={"matchExpressions": [
        {"key": "app", "operator": "In"}]}), "spec.selector.matchExpressions[0].values", REQUIRED,
     "must be specified when `operator` is 'In' or 'NotIn'"),
    ("negative replicas", lambda d: d["spec"].update(replicas=-1), "spec.replicas", INVALID,
     "must be greater than or equal to 0"),
    ("template missing", lambda d: d["spec"].pop("template"), T, REQUIRED, None),
    ("template restartPolicy", lambda d: d["spec"]["template"]["spec"].update(restartPolicy="Never"),
     f"{T}.spec.restartPolicy", NOT_SUPPORTED, '"Always"'),
    ("template activeDeadlineSeconds", lambda d: d["spec"]["template"]["spec"].update(
        activeDeadlineSeconds=10), f"{T}.spec.activeDeadlineSeconds", FORBIDDEN, "is not Supported"),
    ("template container invalid", lambda d: d["spec"]["template"]["spec"]["containers"][0].pop("image"),
     f"{T}.spec.containers[0].image", REQUIRED, None),
    ("template request above limit", lambda d: d["spec"]["template"]["spec"]["containers"][0].update(
        resources={"requests": {"cpu": "2"}, "limits": {"cpu": "1"}}),
     f"{T}.spec.containers[0].resources.requests", INVALID, "must be less than or equal to cpu limit"),
    ("template label invalid", lambda d: d["spec"]["template"]["metadata"]["labels"].update(
        {"x": "-bad"}), f"{T}.metadata.labels", INVALID, None),
    ("unknown strategy", lambda d: d["spec"].update(strategy={"type": "BlueGreen"}),
     "spec.strategy.type", NOT_SUPPORTED, '"Recreate", "RollingUpdate"'),
    ("Recreate with rollingUpdate", lambda d: d["spec"].update(strategy={
        "type": "Recreate", "rollingUpdate": {"maxSurge": 1}}), "spec.strategy.rollingUpdate",
     FORBIDDEN, "may not be specified when strategy `type` is 'Recreate'"),
    ("both zero", lambda d: d["spec"].update(strategy={"type": "RollingUpdate", "rollingUpdate": {
        "maxSurge": 0, "maxUnavailable": "0%"}}), "spec.strategy.rollingUpdate.maxUnavailable",
     INVALID, "may not be 0 when `maxSurge` is 0"),
    ("bad percent", lambda d: d["spec"].update(strategy={"type": "RollingUpdate", "rollingUpdate": {
        "maxSurge": "ten%"}}), "spec.strategy.rollingUpdate.maxSurge", INVALID,
     "a valid percent string must be a numeric string followed by an ending '%'"),
    ("over 100%", lambda d: d["spec"].update(strategy={"type": "RollingUpdate", "rollingUpdate": {
        "maxUnavailable": "150%"}}), "spec.strategy.rollingUpdate.maxUnavailable", INVALID,
     "must not be greater than 100%"),
    ("negative revisionHistoryLimit", lambda d: d["spec"].update(revisionHistoryLimit=-1),
     "spec.revisionHistoryLimit", INVALID, None),
    ("progress deadline not above minReady", lambda d: d["spec"].update(
        minReadySeconds=10, progressDeadlineSeconds=10), "spec.progressDeadlineSeconds", INVALID,
     "must be greater than minReadySeconds"),
]


@pytest.mark.parametrize("name, change, field, reason, contains", CASES, ids=[c[0] for c in CASES])
def test_invalid_deployments(name, change, field, reason, contains):
    assert_cause(validate(edit(HAMSTER, change)), field, reason, contains)


def test_invalid_replica_set():
    rs = edit(FRONTEND_RS, lambda r: r["spec"]["template"]["metadata"].update(labels={"tier": "db"}))
    assert_cause(validate(rs), "spec.template.metadata.labels", INVALID,
                 "`selector` does not match template `labels`")


@pytest.mark.parametrize("obj", [HAMSTER, FRONTEND_RS], ids=["deployment", "replicaset"])
def test_selector_is_immutable(obj):
    old = edit(obj, lambda d: d["metadata"].update(resourceVersion="1"))
    new = edit(old, lambda d: (d["spec"]["selector"].update(matchLabels={"app": "hamster", "v": "2"})
                               if "matchLabels" in d["spec"]["selector"] else
                               d["spec"]["selector"]["matchExpressions"][0].update(values=["x"]),
                               d["spec"]["template"]["metadata"]["labels"].update(v="2", tier="x")))
    assert_cause(validate_update(new, old), "spec.selector", INVALID, "field is immutable")


def test_template_and_replicas_may_change():
    new = edit(HAMSTER, lambda d: (d["spec"].update(replicas=5),
                                   d["spec"]["template"]["spec"]["containers"][0].update(
                                       image="registry.k8s.io/ubuntu-slim:0.15")))
    assert_valid(validate_update(new, HAMSTER))


def test_status_counts():
    status = {"replicas": 2, "readyReplicas": 3, "availableReplicas": 1, "updatedReplicas": -1}
    causes = validate_status_update(edit(HAMSTER, lambda d: d.update(status=status)), HAMSTER)
    assert_cause(causes, "status.readyReplicas", INVALID, "cannot be greater than status.replicas")
    assert_cause(causes, "status.updatedReplicas", INVALID, "must be greater than or equal to 0")
    ok = {"replicas": 2, "readyReplicas": 2, "availableReplicas": 2, "updatedReplicas": 2}
    assert_valid(validate_status_update(edit(HAMSTER, lambda d: d.update(status=ok)), HAMSTER))
