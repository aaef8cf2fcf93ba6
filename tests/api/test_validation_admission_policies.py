"""ValidatingAdmissionPolicy(Binding) and MutatingAdmissionPolicy(Binding) (v1; MAP GA in
1.36): validation after pkg/apis/admissionregistration/validation validation_test.go
(TestValidateValidatingAdmissionPolicy, TestValidateValidatingAdmissionPolicyBinding,
TestValidateMutatingAdmissionPolicy, TestValidateMutatingAdmissionPolicyBinding: the cases
"Validations is required", "API version is required in ParamKind", "invalid
validationActions", "paramRef name and selector mutually exclusive", "patchType required"),
messages as validation.go writes them; defaults after pkg/apis/admissionregistration/v1
defaults.go (SetDefaults_ValidatingAdmissionPolicySpec, SetDefaults_MatchResources)."""

from __future__ import annotations

from kvert.api import validation
from kvert.api.defaults import defaulted

V1 = "admissionregistration.k8s.io/v1"
RULES = {"resourceRules": [{"operations": ["CREATE"], "apiGroups": ["a"], "apiVersions": ["a"],
                            "resources": ["a"]}]}


def causes(obj: dict) -> list[tuple[str, str]]:
    return [(c.field, c.message) for c in validation.validate(obj)]


def vap(**spec) -> dict:
    body = {"validations": [{"expression": "object.x < 100"}], "matchConstraints": RULES, **spec}
    return {"apiVersion": V1, "kind": "ValidatingAdmissionPolicy", "metadata": {"name": "config"},
            "spec": {k: v for k, v in body.items() if v is not None}}


def test_validating_policy_defaults():
    spec = defaulted(vap())["spec"]
    assert spec["failurePolicy"] == "Fail"
    match = spec["matchConstraints"]
    assert (match["matchPolicy"], match["namespaceSelector"], match["objectSelector"]) == (
        "Equivalent", {}, {})
    assert match["resourceRules"][0]["scope"] == "*"


def test_validating_policy():
    assert causes(vap()) == []
    assert causes(vap(validations=None)) == [
        ("spec.validations", "Required value: validations or auditAnnotations must contain at "
         "least one item")]
    assert causes(vap(paramKind={"kind": "Example"})) == [("spec.paramKind.apiVersion", "Required value")]
    assert causes(vap(matchConstraints=None)) == [("spec.matchConstraints", "Required value")]
    assert causes(vap(failurePolicy="Other")) == [
        ("spec.failurePolicy", 'Unsupported value: "Other": supported values: "Fail", "Ignore"')]
    assert causes(vap(validations=[{"expression": "true", "reason": "other"}])) == [
        ("spec.validations[0].reason", 'Unsupported value: "other": supported values: '
         '"Forbidden", "Invalid", "RequestEntityTooLarge", "Unauthorized"')]
    assert causes(vap(validations=[{"expression": ""}])) == [
        ("spec.validations[0].expression", "Required value")]
    assert causes(vap(matchConstraints={"resourceRules": [{
        "operations": ["CREATE"], "apiGroups": ["a"], "apiVersions": ["a"], "resources": []}]})) == [
        ("spec.matchConstraints.resourceRules[0].resources", "Required value")]


def binding(kind: str = "ValidatingAdmissionPolicyBinding", **spec) -> dict:
    body = {"policyName": "xyzlimit-scale.example.com", "validationActions": ["Deny"], **spec}
    return {"apiVersion": V1, "kind": kind, "metadata": {"name": "config"},
            "spec": {k: v for k, v in body.items() if v is not None}}


def test_validating_policy_binding():
    assert causes(binding()) == []
    assert causes(binding(policyName=None)) == [("spec.policyName", "Required value")]
    assert causes(binding(validationActions=None)) == [
        ("spec.validationActions", "Required value: at least one validation action is required")]
    assert causes(binding(validationActions=["illegal"])) == [
        ("spec.validationActions[0]", 'Unsupported value: "illegal": supported values: "Audit", '
         '"Deny", "Warn"')]
    assert causes(binding(validationActions=["Deny", "Deny"])) == [
        ("spec.validationActions[1]", 'Duplicate value: "Deny"')]
    assert causes(binding(validationActions=["Deny", "Warn"])) == [
        ("spec.validationActions", 'Invalid value: ["Deny","Warn"]: must not contain both Deny and '
         "Warn (repeating the same validation failure information in the API response and headers "
         "serves no purpose)")]
    both = {"name": "p", "selector": {}, "parameterNotFoundAction": "Allow"}
    assert causes(binding(paramRef=both)) == [
        ("spec.paramRef", "Forbidden: name and selector are mutually exclusive")]
    assert causes(binding(paramRef={"name": "p"})) == [
        ("spec.paramRef.parameterNotFoundAction", "Required value")]


def map_(**spec) -> dict:
    body = {"mutations": [{"patchType": "ApplyConfiguration",
                           "applyConfiguration": {"expression": "Object{}"}}],
            "matchConstraints": RULES, **spec}
    return {"apiVersion": V1, "kind": "MutatingAdmissionPolicy", "metadata": {"name": "config"},
            "spec": {k: v for k, v in body.items() if v is not None}}


def test_mutating_policy():
    assert causes(map_()) == []
    spec = defaulted(map_())["spec"]
    assert (spec["failurePolicy"], spec["reinvocationPolicy"]) == ("Fail", "Never")
    assert causes(map_(mutations=None)) == [
        ("spec.mutations", "Required value: mutations must contain at least one item")]
    assert causes(map_(mutations=[{"patchType": ""}])) == [
        ("spec.mutations[0].patchType",
         'Unsupported value: "": supported values: "ApplyConfiguration", "JSONPatch"')]
    assert causes(map_(mutations=[{"patchType": "JSONPatch"}])) == [
        ("spec.mutations[0].jsonPatch", "Required value: must be specified when patchType is JSONPatch")]
    assert causes(map_(reinvocationPolicy="Sometimes")) == [
        ("spec.reinvocationPolicy",
         'Unsupported value: "Sometimes": supported values: "IfNeeded", "Never"')]
    assert causes(binding("MutatingAdmissionPolicyBinding", validationActions=None)) == []
