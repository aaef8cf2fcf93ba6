"""RBAC validation: pkg/apis/rbac/validation/validation_test.go (error type and field, as there)."""

import pytest

from kvert.api.validation import validate, validate_update

G = "rbac.authorization.k8s.io"


def crb(name="master", ref=None, subjects=None):
    return {"apiVersion": f"{G}/v1", "kind": "ClusterRoleBinding", "metadata": {"name": name},
            "roleRef": ref if ref is not None else {"apiGroup": G, "kind": "ClusterRole", "name": "valid"},
            "subjects": subjects if subjects is not None else [{"name": "validsaname", "apiGroup": "",
                                                                "namespace": "foo", "kind": "ServiceAccount"}]}


def rb(ref=None, subjects=None, name="master"):
    return {"apiVersion": f"{G}/v1", "kind": "RoleBinding", "metadata": {"name": name, "namespace": "default"},
            "roleRef": ref if ref is not None else {"apiGroup": G, "kind": "Role", "name": "valid"},
            "subjects": subjects if subjects is not None else [{"name": "validsaname", "kind": "ServiceAccount"}]}


def role(*rules, kind="Role"):
    meta = {"name": "default"} if kind == "ClusterRole" else {"name": "default", "namespace": "default"}
    return {"apiVersion": f"{G}/v1", "kind": kind, "metadata": meta, "rules": list(rules)}


def fields(causes):
    return [(c.reason, c.field) for c in causes]


def test_valid_bindings():
    # TestValidateClusterRoleBinding / TestValidateRoleBinding: the valid cases
    assert validate(crb()) == []
    assert validate(crb(subjects=[{"name": "validusername", "apiGroup": G, "kind": "User"},
                                  {"name": "valid@groupname", "apiGroup": G, "kind": "Group"}])) == []
    assert validate(rb()) == []
    assert validate(rb(ref={"apiGroup": G, "kind": "ClusterRole", "name": "valid"})) == []


@pytest.mark.parametrize("binding,expected", [
    (crb(ref={"apiGroup": "rbac.GroupName", "kind": "ClusterRole", "name": "valid"}),
     [("FieldValueNotSupported", "roleRef.apiGroup")]),
    (crb(ref={"apiGroup": G, "kind": "Type", "name": "valid"}), [("FieldValueNotSupported", "roleRef.kind")]),
    (crb(ref={"apiGroup": G, "kind": "Role", "name": "valid"}), [("FieldValueNotSupported", "roleRef.kind")]),
    (crb(ref={"apiGroup": G, "kind": "ClusterRole", "name": "valid/name"}), [("FieldValueInvalid", "roleRef.name")]),
    (crb(ref={"apiGroup": G, "kind": "ClusterRole"}), [("FieldValueRequired", "roleRef.name")]),
    (crb(name="bad/name"), [("FieldValueInvalid", "metadata.name")]),
    (crb(subjects=[{"name": "subject", "kind": "ServiceAccount"}]), [("FieldValueRequired", "subjects[0].namespace")]),
    (crb(subjects=[{"name": "subject", "kind": "User", "apiGroup": "rbac.GroupName"}]),
     [("FieldValueNotSupported", "subjects[0].apiGroup")]),
    (crb(subjects=[{"name": "subject", "kind": "ServiceAccount", "namespace": "foo", "apiGroup": "rbac"}]),
     [("FieldValueNotSupported", "subjects[0].apiGroup")]),
    (crb(subjects=[{"name": "valid", "kind": "invalid"}]), [("FieldValueNotSupported", "subjects[0].kind")]),
    (crb(subjects=[{"kind": "User", "apiGroup": G}]), [("FieldValueRequired", "subjects[0].name")]),
    (crb(subjects=[{"name": "Bad_Name", "kind": "ServiceAccount", "namespace": "foo"}]),
     [("FieldValueInvalid", "subjects[0].name")]),
], ids=["bad group", "bad kind", "reference role", "bad role name", "missing role name", "bad name",
        "sa without namespace", "user bad group", "sa with group", "bad subject kind", "missing subject name",
        "bad sa name"])
def test_invalid_cluster_role_bindings(binding, expected):
    assert fields(validate(binding)) == expected


def test_role_ref_cannot_change():
    # TestValidateRoleBindingUpdate
    old = rb()
    new = rb(ref={"apiGroup": G, "kind": "ClusterRole", "name": "changed"})
    new["metadata"]["resourceVersion"] = "1"
    old["metadata"]["resourceVersion"] = "1"
    causes = validate_update(new, old)
    assert fields(causes) == [("FieldValueInvalid", "roleRef")]
    assert causes[0].message.endswith(": cannot change roleRef")


@pytest.mark.parametrize("r,kind,expected", [
    # TestValidateRoleNonResourceURL / TestValidateRoleNamespacedNonResourceURL
    ({"verbs": ["get"], "nonResourceURLs": ["/*"]}, "ClusterRole", []),
    ({"verbs": ["get"], "nonResourceURLs": ["/*"]}, "Role", [("FieldValueInvalid", "rules[0].nonResourceURLs")]),
    # TestValidateRoleNonResourceURLNoVerbs
    ({"verbs": [], "nonResourceURLs": ["/*"]}, "ClusterRole", [("FieldValueRequired", "rules[0].verbs")]),
    # TestValidateRoleMixedNonResourceAndResource
    ({"verbs": ["get"], "nonResourceURLs": ["/*"], "apiGroups": ["v1"], "resources": ["pods"]}, "ClusterRole",
     [("FieldValueInvalid", "rules[0].nonResourceURLs")]),
    # TestValidateRoleValidResource
    ({"verbs": ["get"], "apiGroups": ["v1"], "resources": ["pods"]}, "Role", []),
    # TestValidateRoleNoAPIGroup / TestValidateRoleNoResources
    ({"verbs": ["get"], "resources": ["pods"]}, "Role", [("FieldValueRequired", "rules[0].apiGroups")]),
    ({"verbs": ["get"], "apiGroups": ["v1"]}, "Role", [("FieldValueRequired", "rules[0].resources")]),
], ids=["cluster url", "namespaced url", "no verbs", "mixed", "valid resource", "no group", "no resources"])
def test_policy_rules(r, kind, expected):
    assert fields(validate(role(r, kind=kind))) == expected


def test_aggregation_rule_needs_a_selector():
    # ValidateClusterRole: an aggregationRule without clusterRoleSelectors
    obj = role(kind="ClusterRole")
    obj["aggregationRule"] = {}
    assert fields(validate(obj)) == [("FieldValueRequired", "aggregationRule.clusterRoleSelectors")]
    obj["aggregationRule"] = {"clusterRoleSelectors": [{"matchLabels": {"a": "b"}}]}
    assert validate(obj) == []


def test_subject_and_role_ref_groups_are_defaulted():
    # SetDefaults_Subject / SetDefaults_RoleBinding
    assert validate(crb(ref={"kind": "ClusterRole", "name": "x"},
                        subjects=[{"kind": "User", "name": "u"}, {"kind": "Group", "name": "g"}])) == []
