"""CustomResourceDefinition validation (apiextensions.k8s.io/v1)."""

from __future__ import annotations

import copy

import pytest

from kvert.api.validation.crd import (default_crd, validate_crd, validate_crd_status_update,
                                      validate_crd_update)
from kvert.apiserver.crds import vpa_crds

from .validation_helpers import edit

CRON_PATTERN = r"^(\d+|\*)(/\d+)?(\s+(\d+|\*)(/\d+)?){4}$"


def crontab_crd(**spec):
    """The CronTab CRD of the Kubernetes documentation."""
    body = {
        "group": "stable.example.com",
        "versions": [{
            "name": "v1", "served": True, "storage": True,
            "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {
                "type": "object", "properties": {
                    "cronSpec": {"type": "string", "pattern": CRON_PATTERN},
                    "image": {"type": "string"},
                    "replicas": {"type": "integer", "minimum": 1, "maximum": 10}}}}}},
        }],
        "scope": "Namespaced",
        "names": {"plural": "crontabs", "singular": "crontab", "kind": "CronTab",
                  "shortNames": ["ct"]},
    }
    body.update(spec)
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "crontabs.stable.example.com"}, "spec": body}


CRD = crontab_crd()
V0 = "spec.versions[0]"
SCHEMA = f"{V0}.schema.openAPIV3Schema"


def version(**fields):
    v = copy.deepcopy(CRD["spec"]["versions"][0])
    v.update(fields)
    return v


def causes_of(causes):
    return [(c.field, c.reason, c.message) for c in causes]


def has(causes, field, reason, text=None):
    return any(c.field == field and c.reason == reason and (text is None or text in c.message)
               for c in causes)


# ---- valid -----------------------------------------------------------------------------------

VALID = {
    "crontab": CRD,
    "cluster scoped, no short names": edit(CRD, lambda c: (c["spec"].update(scope="Cluster"),
                                                           c["spec"]["names"].pop("shortNames"))),
    "singular and listKind defaulted": edit(CRD, lambda c: (c["spec"]["names"].pop("singular"),)),
    "two versions, one served": edit(CRD, lambda c: c["spec"]["versions"].append(
        version(name="v2beta1", storage=False, served=False))),
    "status and scale": edit(CRD, lambda c: c["spec"]["versions"][0].update(subresources={
        "status": {}, "scale": {"specReplicasPath": ".spec.replicas",
                                "statusReplicasPath": ".status.replicas",
                                "labelSelectorPath": ".status.labelSelector"}})),
    "printer columns": edit(CRD, lambda c: c["spec"]["versions"][0].update(additionalPrinterColumns=[
        {"name": "Spec", "type": "string", "jsonPath": ".spec.cronSpec"},
        {"name": "Replicas", "type": "integer", "format": "int32", "jsonPath": ".spec.replicas",
         "priority": 1},
        {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}])),
    "deprecated version": edit(CRD, lambda c: c["spec"]["versions"].append(
        version(name="v1beta1", storage=False, deprecated=True,
                deprecationWarning="stable.example.com/v1beta1 CronTab is deprecated"))),
    "webhook conversion": edit(CRD, lambda c: c["spec"].update(conversion={
        "strategy": "Webhook", "webhook": {
            "clientConfig": {"service": {"namespace": "default", "name": "conv"}},
            "conversionReviewVersions": ["v1"]}})),
    "metadata name constraints": edit(CRD, lambda c: c["spec"]["versions"][0]["schema"][
        "openAPIV3Schema"]["properties"].update(metadata={"type": "object", "properties": {
            "name": {"type": "string", "maxLength": 20}}})),
    "cleanup finalizer": edit(CRD, lambda c: c["metadata"].update(
        finalizers=["customresourcecleanup.apiextensions.k8s.io"])),
}


@pytest.mark.parametrize("crd", VALID.values(), ids=VALID.keys())
def test_valid(crd):
    assert causes_of(validate_crd(crd)) == []


@pytest.mark.parametrize("crd", vpa_crds(), ids=lambda c: c["metadata"]["name"])
def test_vpa_crds_are_valid(crd):
    assert causes_of(validate_crd(crd)) == []


def test_defaults():
    crd = edit(CRD, lambda c: c["spec"]["names"].pop("singular"))
    default_crd(crd)
    assert crd["spec"]["names"]["singular"] == "crontab"
    assert crd["spec"]["names"]["listKind"] == "CronTabList"
    assert crd["spec"]["conversion"] == {"strategy": "None"}


# ---- invalid ---------------------------------------------------------------------------------

DNS1035 = "a DNS-1035 label must consist of lower case alphanumeric characters"
CASES = [
    ("name is not plural.group", lambda c: c["metadata"].update(name="crontab.stable.example.com"),
     "metadata.name", "FieldValueInvalid", 'must be spec.names.plural+"."+spec.group'),
    ("namespaced metadata", lambda c: c["metadata"].update(namespace="default"),
     "metadata.namespace", "FieldValueForbidden", "not allowed on this type"),
    ("group missing", lambda c: c["spec"].pop("group"), "spec.group", "FieldValueRequired", None),
    ("group without dot", lambda c: (c["spec"].update(group="example"),
                                     c["metadata"].update(name="crontabs.example")),
     "spec.group", "FieldValueInvalid", "should be a domain with at least one dot"),
    ("group not a subdomain", lambda c: c["spec"].update(group="Stable.example.com"),
     "spec.group", "FieldValueInvalid", "a lowercase RFC 1123 subdomain"),
    ("scope missing", lambda c: c["spec"].pop("scope"), "spec.scope", "FieldValueRequired", None),
    ("scope unknown", lambda c: c["spec"].update(scope="Global"), "spec.scope",
     "FieldValueNotSupported", 'supported values: "Cluster", "Namespaced"'),
    ("no storage version", lambda c: c["spec"]["versions"][0].update(storage=False),
     "spec.versions", "FieldValueInvalid", "must have exactly one version marked as storage version"),
    ("two storage versions", lambda c: c["spec"]["versions"].append(version(name="v2")),
     "spec.versions", "FieldValueInvalid", "must have exactly one version marked as storage version"),
    ("duplicate versions", lambda c: c["spec"]["versions"].append(version(storage=False)),
     "spec.versions", "FieldValueInvalid", "must contain unique version names"),
    ("bad version name", lambda c: c["spec"]["versions"][0].update(name="V1"),
     f"{V0}.name", "FieldValueInvalid", DNS1035),
    ("schema missing", lambda c: c["spec"]["versions"][0].pop("schema"),
     SCHEMA, "FieldValueRequired", None),
    ("schema not structural", lambda c: c["spec"]["versions"][0]["schema"]["openAPIV3Schema"][
        "properties"]["spec"].pop("type"),
     f"{SCHEMA}.properties[spec].type", "FieldValueRequired",
     "must not be empty for specified object fields"),
    ("nullable root", lambda c: c["spec"]["versions"][0]["schema"]["openAPIV3Schema"].update(
        nullable=True), f"{SCHEMA}.nullable", "FieldValueForbidden", "nullable cannot be true at the root"),
    ("status root restrictions", lambda c: c["spec"]["versions"][0].update(
        subresources={"status": {}}, schema={"openAPIV3Schema": {
            "type": "object", "properties": {}, "anyOf": [{"required": ["spec"]}]}}),
     SCHEMA, "FieldValueInvalid", "fields are allowed at the root of the schema if the status "
                                  "subresource is enabled"),
    ("scale path not under spec", lambda c: c["spec"]["versions"][0].update(subresources={
        "scale": {"specReplicasPath": ".status.replicas", "statusReplicasPath": ".status.replicas"}}),
     f"{V0}.subresources.scale.specReplicasPath", "FieldValueInvalid",
     "should be a json path under .spec"),
    ("scale path missing", lambda c: c["spec"]["versions"][0].update(subresources={
        "scale": {"specReplicasPath": ".spec.replicas"}}),
     f"{V0}.subresources.scale.statusReplicasPath", "FieldValueRequired", None),
    ("label selector path", lambda c: c["spec"]["versions"][0].update(subresources={
        "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas",
                  "labelSelectorPath": "status.selector"}}),
     f"{V0}.subresources.scale.labelSelectorPath", "FieldValueInvalid",
     "must be a simple json path starting with ."),
    ("printer column type", lambda c: c["spec"]["versions"][0].update(additionalPrinterColumns=[
        {"name": "X", "type": "str", "jsonPath": ".spec.x"}]),
     f"{V0}.additionalPrinterColumns[0].type", "FieldValueInvalid",
     "must be one of boolean,date,integer,number,string"),
    ("printer column format", lambda c: c["spec"]["versions"][0].update(additionalPrinterColumns=[
        {"name": "X", "type": "string", "format": "fancy", "jsonPath": ".spec.x"}]),
     f"{V0}.additionalPrinterColumns[0].format", "FieldValueInvalid",
     "must be one of byte,date,date-time,double,float,int32,int64,password"),
    ("printer column path", lambda c: c["spec"]["versions"][0].update(additionalPrinterColumns=[
        {"name": "X", "type": "string", "jsonPath": "spec.x"}]),
     f"{V0}.additionalPrinterColumns[0].jsonPath", "FieldValueInvalid",
     "must be a simple json path starting with ."),
    ("printer column name", lambda c: c["spec"]["versions"][0].update(additionalPrinterColumns=[
        {"type": "string", "jsonPath": ".spec.x"}]),
     f"{V0}.additionalPrinterColumns[0].name", "FieldValueRequired", None),
    ("deprecation warning on a live version", lambda c: c["spec"]["versions"][0].update(
        deprecationWarning="old"), f"{V0}.deprecationWarning", "FieldValueInvalid",
     "can only be set for deprecated versions"),
    ("deprecation warning too long", lambda c: c["spec"]["versions"][0].update(
        deprecated=True, deprecationWarning="x" * 257), f"{V0}.deprecationWarning",
     "FieldValueInvalid", "must be <= 256 characters long"),
    ("plural missing", lambda c: c["spec"]["names"].pop("plural"), "spec.names.plural",
     "FieldValueRequired", None),
    ("kind missing", lambda c: c["spec"]["names"].pop("kind"), "spec.names.kind",
     "FieldValueRequired", None),
    ("bad plural", lambda c: (c["spec"]["names"].update(plural="cron_tabs"),
                              c["metadata"].update(name="cron_tabs.stable.example.com")),
     "spec.names.plural", "FieldValueInvalid", DNS1035),
    ("bad kind", lambda c: c["spec"]["names"].update(kind="Cron Tab", listKind="CronTabList"),
     "spec.names.kind", "FieldValueInvalid", "may have mixed case, but should otherwise match: "),
    ("kind equals listKind", lambda c: c["spec"]["names"].update(listKind="CronTab"),
     "spec.names.listKind", "FieldValueInvalid", "kind and listKind may not be the same"),
    ("bad short name", lambda c: c["spec"]["names"].update(shortNames=["c t"]),
     "spec.names.shortNames[0]", "FieldValueInvalid", DNS1035),
    ("bad category", lambda c: c["spec"]["names"].update(categories=["All"]),
     "spec.names.categories[0]", "FieldValueInvalid", DNS1035),
    ("preserveUnknownFields", lambda c: c["spec"].update(preserveUnknownFields=True),
     "spec.preserveUnknownFields", "FieldValueInvalid", "cannot set to true"),
    ("conversion strategy", lambda c: c["spec"].update(conversion={"strategy": "Magic"}),
     "spec.conversion.strategy", "FieldValueNotSupported", 'supported values: "None", "Webhook"'),
    ("webhook without client config", lambda c: c["spec"].update(conversion={
        "strategy": "Webhook", "webhook": {"conversionReviewVersions": ["v1"]}}),
     "spec.conversion.webhook.clientConfig", "FieldValueRequired",
     "required when strategy is set to Webhook"),
    ("webhook review versions", lambda c: c["spec"].update(conversion={
        "strategy": "Webhook", "webhook": {"clientConfig": {"url": "https://conv.example.com"},
                                           "conversionReviewVersions": ["v9"]}}),
     "spec.conversion.webhook.conversionReviewVersions", "FieldValueInvalid",
     "must include at least one of v1, v1beta1"),
    ("webhook for None", lambda c: c["spec"].update(conversion={
        "strategy": "None", "webhook": {"conversionReviewVersions": ["v1"]}}),
     "spec.conversion.webhook", "FieldValueForbidden",
     "should not be set when strategy is not set to Webhook"),
    ("protected group without approval", lambda c: (
        c["spec"].update(group="stable.k8s.io"), c["metadata"].update(name="crontabs.stable.k8s.io")),
     "metadata.annotations[api-approved.kubernetes.io]", "FieldValueRequired",
     'protected groups must have approval annotation "api-approved.kubernetes.io"'),
    ("protected group with a bad approval", lambda c: (
        c["spec"].update(group="stable.k8s.io"), c["metadata"].update(
            name="crontabs.stable.k8s.io", annotations={"api-approved.kubernetes.io": "yes"})),
     "metadata.annotations[api-approved.kubernetes.io]", "FieldValueInvalid",
     'with either a URL or a reason starting with "unapproved"'),
]


@pytest.mark.parametrize("change,field,reason,text", [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_invalid(change, field, reason, text):
    causes = validate_crd(edit(CRD, change))
    assert has(causes, field, reason, text), causes_of(causes)


def test_protected_group_bypass_and_url_are_accepted():
    for approval in ("unapproved, experimental", "https://github.com/kubernetes/kubernetes/pull/1"):
        crd = edit(CRD, lambda c: (c["spec"].update(group="stable.k8s.io"), c["metadata"].update(
            name="crontabs.stable.k8s.io", annotations={"api-approved.kubernetes.io": approval})))
        assert causes_of(validate_crd(crd)) == []


def test_missing_storage_version_also_means_no_stored_version():
    causes = validate_crd(edit(CRD, lambda c: c["spec"]["versions"][0].update(storage=False)))
    assert has(causes, "status.storedVersions", "FieldValueInvalid",
               "must have at least one stored version")


def test_non_object_is_a_type_error():
    assert [c.reason for c in validate_crd("nope")] == ["FieldValueTypeInvalid"]


# ---- update ----------------------------------------------------------------------------------

def stored(crd, established=True, stored_versions=("v1",)):
    out = copy.deepcopy(crd)
    out["metadata"].update(uid="7f0c", resourceVersion="5", generation=1,
                           creationTimestamp="2026-01-01T00:00:00Z")
    conditions = [{"type": "Established", "status": "True" if established else "False"}]
    out["status"] = {"conditions": conditions, "storedVersions": list(stored_versions),
                     "acceptedNames": copy.deepcopy(out["spec"]["names"])}
    return out


def test_update_unchanged_and_compatible_changes_are_valid():
    old = stored(CRD)
    assert causes_of(validate_crd_update(copy.deepcopy(old), old)) == []
    new = edit(old, lambda c: (c["spec"]["versions"][0].update(additionalPrinterColumns=[
        {"name": "Spec", "type": "string", "jsonPath": ".spec.cronSpec"}]),
        c["spec"]["names"].update(shortNames=["ct", "cron"])))
    assert causes_of(validate_crd_update(new, old)) == []


def test_group_and_plural_are_immutable():
    old = stored(CRD, established=False)
    new = edit(old, lambda c: (c["spec"].update(group="other.example.com"),
                               c["spec"]["names"].update(plural="crons")))
    causes = validate_crd_update(new, old)
    assert has(causes, "spec.group", "FieldValueInvalid", "field is immutable")
    assert has(causes, "spec.names.plural", "FieldValueInvalid", "field is immutable")


def test_scope_and_kind_are_immutable_once_established():
    change = lambda c: (c["spec"].update(scope="Cluster"),  # noqa: E731
                        c["spec"]["names"].update(kind="Cron", listKind="CronList"))
    not_established = stored(CRD, established=False)
    assert causes_of(validate_crd_update(edit(not_established, change), not_established)) == []
    established = stored(CRD)
    causes = validate_crd_update(edit(established, change), established)
    assert has(causes, "spec.scope", "FieldValueInvalid", "field is immutable")
    assert has(causes, "spec.names.kind", "FieldValueInvalid", "field is immutable")


def test_a_stored_version_must_stay_in_spec_versions():
    two = edit(CRD, lambda c: c["spec"]["versions"].insert(0, version(name="v1beta1", storage=False)))
    old = stored(two, stored_versions=("v1beta1", "v1"))
    new = edit(old, lambda c: c["spec"]["versions"].pop(0))
    causes = validate_crd_update(new, old)
    assert causes_of(causes) == [(
        "status.storedVersions[0]", "FieldValueInvalid",
        'Invalid value: "v1beta1": missing from spec.versions; v1beta1 was previously a storage '
        "version, and must remain in spec.versions until a storage migration ensures no data "
        "remains persisted in v1beta1 and removes v1beta1 from status.storedVersions")]
    # moving the storage version is fine: the new one is recorded too
    moved = edit(old, lambda c: (c["spec"]["versions"][0].update(storage=True),
                                 c["spec"]["versions"][1].update(storage=False)))
    assert causes_of(validate_crd_update(moved, old)) == []


def test_unchanged_schemas_are_not_rechecked():
    loose = edit(CRD, lambda c: c["spec"]["versions"][0]["schema"]["openAPIV3Schema"][
        "properties"]["spec"].pop("type"))
    old = stored(loose)
    assert validate_crd(loose)  # not accepted on create
    new = edit(old, lambda c: c["spec"]["names"].update(shortNames=["ct", "cron"]))
    assert causes_of(validate_crd_update(new, old)) == []
    worse = edit(new, lambda c: c["spec"]["versions"][0]["schema"]["openAPIV3Schema"][
        "properties"].update(extra={}))
    assert validate_crd_update(worse, old)


def test_finalizers_may_not_be_added_while_terminating_but_may_be_removed():
    old = stored(edit(CRD, lambda c: c["metadata"].update(
        finalizers=["customresourcecleanup.apiextensions.k8s.io"],
        deletionTimestamp="2026-01-01T00:01:00Z", deletionGracePeriodSeconds=0)))
    removed = edit(old, lambda c: c["metadata"].update(finalizers=[]))
    assert causes_of(validate_crd_update(removed, old)) == []
    added = edit(old, lambda c: c["metadata"]["finalizers"].append("example.com/other"))
    assert has(validate_crd_update(added, old), "metadata.finalizers", "FieldValueForbidden",
               "no new finalizers can be added if the object is being deleted")


def test_status_update():
    old = stored(edit(CRD, lambda c: c["metadata"].update(
        finalizers=["customresourcecleanup.apiextensions.k8s.io"])))
    new = edit(old, lambda c: c["status"].update(conditions=[
        {"type": "Terminating", "status": "True", "reason": "InstanceDeletionInProgress"}]))
    assert causes_of(validate_crd_status_update(new, old)) == []
    bad = edit(old, lambda c: c["status"]["acceptedNames"].update(plural="Cron Tabs"))
    assert has(validate_crd_status_update(bad, old), "status.acceptedNames.plural",
               "FieldValueInvalid", DNS1035)
