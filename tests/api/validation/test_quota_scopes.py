"""ResourceQuota scopes (``validateResourceQuotaScopes`` in pkg/apis/core/validation).

upstream: TestValidateResourceQuota (validation_test.go): the BestEffort spec with compute
resources -> "unsupported scope applied to resource"; an unknown scope -> "unsupported scope";
BestEffort with NotBestEffort, Terminating with NotTerminating -> "conflicting scopes". Every
error is field.Invalid(spec.scopes, spec.Scopes, ...), whose value Go renders with %#v.
"""

import pytest

from kvert.api.validation import validate


def _quota(hard, scopes):
    return {"apiVersion": "v1", "kind": "ResourceQuota",
            "metadata": {"name": "abc", "namespace": "foo"},
            "spec": {"hard": hard, "scopes": scopes}}


def _messages(obj):
    return [(c.field, c.message) for c in validate(obj)]


def test_best_effort_with_requests_cpu_is_refused():
    assert _messages(_quota({"requests.cpu": "1"}, ["BestEffort"])) == [
        ("spec.scopes", 'Invalid value: []core.ResourceQuotaScope{"BestEffort"}: '
                        "unsupported scope applied to resource")]


def test_best_effort_counts_pods_only():
    assert _messages(_quota({"pods": "10"}, ["BestEffort"])) == []
    # non-standard names (count/..., extended resources) are not checked against the scope
    assert _messages(_quota({"pods": "10", "count/deployments.apps": "3"}, ["BestEffort"])) == []


@pytest.mark.parametrize("scope", ["Terminating", "NotTerminating", "NotBestEffort", "PriorityClass",
                                   "CrossNamespacePodAffinity"])
def test_pod_scopes_allow_compute_resources(scope):
    hard = {"cpu": "1", "memory": "1Gi", "requests.cpu": "1", "limits.memory": "2Gi", "pods": "3"}
    assert _messages(_quota(hard, [scope])) == []


def test_a_pod_scope_refuses_a_non_pod_resource():
    assert [m for _, m in _messages(_quota({"services": "1"}, ["NotTerminating"]))] == [
        'Invalid value: []core.ResourceQuotaScope{"NotTerminating"}: '
        "unsupported scope applied to resource"]


def test_unknown_scope():
    assert _messages(_quota({"pods": "1"}, ["foo"])) == [
        ("spec.scopes", 'Invalid value: []core.ResourceQuotaScope{"foo"}: unsupported scope')]


@pytest.mark.parametrize("scopes", [["BestEffort", "NotBestEffort"], ["Terminating", "NotTerminating"]])
def test_conflicting_scopes(scopes):
    shown = ", ".join(f'"{s}"' for s in scopes)
    assert _messages(_quota({"pods": "1"}, scopes)) == [
        ("spec.scopes", f"Invalid value: []core.ResourceQuotaScope{{{shown}}}: conflicting scopes")]
