"""Name syntax and metadata rules (apimachinery's util/validation and ValidateObjectMeta)."""

import pytest

from kvert.api.validation import names, validate, validate_update
from .validation_helpers import (FORBIDDEN, INVALID, REQUIRED, TOO_LONG, assert_cause, assert_valid,
                                edit, pod)


@pytest.mark.parametrize("value, ok", [
    ("my-name", True), ("123-abc", True), ("a", True), ("a" * 63, True), ("a" * 64, False),
    ("My-Name", False), ("-abc", False), ("abc-", False), ("a.b", False), ("", False),
    ("a_b", False),
])
def test_dns1123_label(value, ok):
    assert (names.is_dns1123_label(value) == []) is ok


def test_dns1123_label_messages_are_kubernetes():
    assert names.is_dns1123_label("a.b") == ["must not contain dots"]
    assert names.is_dns1123_label("My_Name") == [
        "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
        "and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', "
        "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"]


@pytest.mark.parametrize("value, ok", [
    ("example.com", True), ("a.b-c.d", True), ("a" * 253, True), ("a" * 254, False),
    ("Example.com", False), ("a..b", False), (".a", False), ("a.", False),
])
def test_dns1123_subdomain(value, ok):
    assert (names.is_dns1123_subdomain(value) == []) is ok


@pytest.mark.parametrize("value, ok", [
    ("app", True), ("app.kubernetes.io/name", True), ("MyName", True), ("my.name", True),
    ("a/b/c", False), ("/name", False), ("example.com/", False), ("Example.com/x", False),
    ("x" * 63, True), ("x" * 64, False), ("-x", False), ("x_y", True),
])
def test_qualified_name(value, ok):
    assert (names.is_qualified_name(value) == []) is ok


@pytest.mark.parametrize("value, ok", [
    ("", True), ("v1", True), ("a_b.c-d", True), ("-a", False), ("a" * 64, False), ("a b", False),
])
def test_label_value(value, ok):
    assert (names.is_label_value(value) == []) is ok


@pytest.mark.parametrize("value, ok", [
    ("key.name", True), ("KEY_NAME", True), ("key-name", True), (".", False), ("..", False),
    ("..x", False), ("a/b", False), ("", False),
])
def test_config_map_key(value, ok):
    assert (names.is_config_map_key(value) == []) is ok


@pytest.mark.parametrize("value, ok", [
    ("http", True), ("web-80", True), ("80", False), ("a--b", False), ("-a", False),
    ("abcdefghijklmnop", False), ("A", False),
])
def test_port_name(value, ok):
    assert (names.is_valid_port_name(value) == []) is ok


def test_env_var_names_use_the_relaxed_rule():
    assert names.is_env_var_name("1_STARTS_WITH_DIGIT") == []
    assert names.is_env_var_name("A=B") != []
    assert names.is_env_var_name("") != []


def test_generate_name_may_end_with_a_dash():
    assert names.name_is_dns_subdomain("web-", True) == []
    assert names.name_is_dns_subdomain("web-", False) != []


META_CASES = [
    ("name missing", lambda p: p["metadata"].pop("name"), "metadata.name", REQUIRED,
     "name or generateName is required"),
    ("name not a subdomain", lambda p: p["metadata"].update(name="Web_1"), "metadata.name", INVALID,
     "RFC 1123 subdomain"),
    ("namespace missing", lambda p: p["metadata"].pop("namespace"), "metadata.namespace",
     REQUIRED, None),
    ("namespace not a label", lambda p: p["metadata"].update(namespace="a.b"),
     "metadata.namespace", INVALID, "must not contain dots"),
    ("bad label key", lambda p: p["metadata"].update(labels={"a/b/c": "x"}), "metadata.labels",
     INVALID, None),
    ("bad label value", lambda p: p["metadata"].update(labels={"app": "-x"}), "metadata.labels",
     INVALID, "a valid label must be an empty string"),
    ("bad annotation key", lambda p: p["metadata"].update(annotations={"a b": "x"}),
     "metadata.annotations", INVALID, None),
    ("annotations too large", lambda p: p["metadata"].update(annotations={"big": "x" * (256 * 1024)}),
     "metadata.annotations", TOO_LONG, "may not be more than 262144 bytes"),
    ("negative generation", lambda p: p["metadata"].update(generation=-1), "metadata.generation",
     INVALID, "must be greater than or equal to 0"),
    ("finalizer neither standard nor qualified", lambda p: p["metadata"].update(finalizers=["foo"]),
     "metadata.finalizers", INVALID, "neither a standard finalizer name"),
    ("owner reference without uid", lambda p: p["metadata"].update(ownerReferences=[
        {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs"}]),
     "metadata.ownerReferences.uid", INVALID, "must not be empty"),
    ("labels of the wrong type", lambda p: p["metadata"].update(labels=["a"]), "metadata.labels",
     "FieldValueTypeInvalid", "must be of type object"),
]


@pytest.mark.parametrize("name, change, field, reason, contains", META_CASES,
                         ids=[c[0] for c in META_CASES])
def test_metadata_rules(name, change, field, reason, contains):
    assert_cause(validate(edit(pod(), change)), field, reason, contains)


def test_cluster_scoped_kinds_forbid_a_namespace():
    ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a", "namespace": "x"}}
    assert_cause(validate(ns), "metadata.namespace", FORBIDDEN, "not allowed on this type")


def test_unknown_kinds_get_metadata_checks_only():
    obj = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"},
           "spec": {"anything": [1, 2, 3]}}
    assert_valid(validate(obj))
    assert_cause(validate(edit(obj, lambda o: o["metadata"].update(name="W!"))), "metadata.name",
                 INVALID)


def test_non_object_input_is_reported_not_raised():
    assert validate("not an object")[0].reason == "FieldValueTypeInvalid"
    assert validate({"apiVersion": "v1", "kind": "Pod", "metadata": [], "spec": 7})


@pytest.mark.parametrize("field, value", [("name", "other"), ("namespace", "other"),
                                          ("uid", "u-2")])
def test_identity_is_immutable(field, value):
    old = edit(pod(), lambda p: p["metadata"].update(uid="u-1", resourceVersion="5"))
    new = edit(old, lambda p: p["metadata"].update({field: value}))
    assert_cause(validate_update(new, old), f"metadata.{field}", INVALID, "field is immutable")


def test_update_without_uid_keeps_the_stored_one():
    old = edit(pod(), lambda p: p["metadata"].update(uid="u-1"))
    assert_valid(validate_update(pod(), old))


def test_deleting_objects_may_not_gain_finalizers():
    old = edit(pod(), lambda p: p["metadata"].update(deletionTimestamp="2024-01-01T00:00:00Z",
                                                      finalizers=["example.com/a"]))
    new = edit(old, lambda p: p["metadata"].update(finalizers=["example.com/a", "example.com/b"]))
    assert_cause(validate_update(new, old), "metadata.finalizers", FORBIDDEN,
                 'found new finalizers []string{"example.com/b"}')
    gone = edit(old, lambda p: p["metadata"].pop("deletionTimestamp"))
    assert_cause(validate_update(gone, old), "metadata.deletionTimestamp", INVALID,
                 "may only be changed via deletion")


def test_generation_may_not_go_backwards():
    old = edit(pod(), lambda p: p["metadata"].update(generation=3))
    new = edit(old, lambda p: p["metadata"].update(generation=2))
    assert_cause(validate_update(new, old), "metadata.generation", INVALID, "must not be decremented")
