"""Structural schemas: validation messages and paths, pruning, defaulting, structural checks.

The property tests generate a schema, then objects valid by construction (they must pass),
then break one constraint at one place (a cause must name that place).
"""

from __future__ import annotations

import copy

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kvert.api.schema import (apply_schema_defaults, prepare_custom_object, prepare_custom_status,
                              prune, validate_against_schema, validate_structural)
from kvert.api.validation.common import child, index

CRON_PATTERN = r"^(\d+|\*)(/\d+)?(\s+(\d+|\*)(/\d+)?){4}$"
CRONTAB = {
    "type": "object",
    "properties": {
        "spec": {"type": "object", "properties": {
            "cronSpec": {"type": "string", "pattern": CRON_PATTERN},
            "image": {"type": "string"},
            "replicas": {"type": "integer", "minimum": 1, "maximum": 10},
        }},
    },
}
QUANTITY = {"anyOf": [{"type": "integer"}, {"type": "string"}],
            "pattern": r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE])?$",
            "x-kubernetes-int-or-string": True}


def crontab(**spec):
    body = {"cronSpec": "* * * * */5", "image": "my-awesome-cron-image", "replicas": 1}
    body.update(spec)
    return {"apiVersion": "stable.example.com/v1", "kind": "CronTab",
            "metadata": {"name": "my-new-cron-object", "namespace": "default"}, "spec": body}


def messages(causes):
    return [(c.field, c.message) for c in causes]


# ---- validation: messages as kube-apiserver writes them -------------------------------------

def test_valid_crontab():
    assert validate_against_schema(crontab(), CRONTAB) == []


def test_wrong_type_is_reported_with_kubernetes_wording():
    causes = validate_against_schema(crontab(replicas="3"), CRONTAB)
    assert messages(causes) == [("spec.replicas", 'Invalid value: "string": spec.replicas in body '
                                                  'must be of type integer: "string"')]
    assert causes[0].reason == "FieldValueTypeInvalid"


def test_bounds_and_pattern():
    causes = validate_against_schema(crontab(replicas=0, cronSpec="every minute"), CRONTAB)
    assert messages(causes) == [
        ("spec.cronSpec", f'Invalid value: "every minute": spec.cronSpec in body should match '
                          f"'{CRON_PATTERN}'"),
        ("spec.replicas", "Invalid value: 0: spec.replicas in body should be greater than or "
                          "equal to 1"),
    ]
    causes = validate_against_schema(crontab(replicas=11), CRONTAB)
    assert messages(causes) == [("spec.replicas", "Invalid value: 11: spec.replicas in body should "
                                                  "be less than or equal to 10")]


def test_exclusive_bounds_and_multiple_of():
    schema = {"type": "object", "properties": {"x": {"type": "number", "minimum": 0,
                                                     "exclusiveMinimum": True, "maximum": 1.5,
                                                     "exclusiveMaximum": True,
                                                     "multipleOf": 0.5}}}
    assert validate_against_schema({"x": 1}, schema) == []
    assert messages(validate_against_schema({"x": 0}, schema)) == [
        ("x", "Invalid value: 0: x in body should be greater than 0")]
    assert messages(validate_against_schema({"x": 1.5}, schema)) == [
        ("x", "Invalid value: 1.5: x in body should be less than 1.5")]
    assert messages(validate_against_schema({"x": 0.7}, schema)) == [
        ("x", "Invalid value: 0.7: x in body should be a multiple of 0.5")]


def test_integral_floats_are_integers_and_bools_are_not():
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
    assert validate_against_schema({"n": 2.0}, schema) == []
    assert messages(validate_against_schema({"n": 2.5}, schema)) == [
        ("n", 'Invalid value: "number": n in body must be of type integer: "number"')]
    assert messages(validate_against_schema({"n": True}, schema)) == [
        ("n", 'Invalid value: "boolean": n in body must be of type integer: "boolean"')]


def test_required_and_enum():
    schema = {"type": "object", "required": ["spec"], "properties": {"spec": {
        "type": "object", "required": ["targetRef"], "properties": {
            "targetRef": {"type": "object"},
            "updateMode": {"type": "string", "enum": ["Off", "Auto"]}}}}}
    assert messages(validate_against_schema({}, schema)) == [("spec", "Required value")]
    causes = validate_against_schema({"spec": {"updateMode": "On"}}, schema)
    assert messages(causes) == [
        ("spec.targetRef", "Required value"),
        ("spec.updateMode", 'Unsupported value: "On": supported values: "Off", "Auto"'),
    ]
    assert [c.reason for c in causes] == ["FieldValueRequired", "FieldValueNotSupported"]


def test_string_lengths_and_items():
    schema = {"type": "object", "properties": {
        "name": {"type": "string", "minLength": 2, "maxLength": 4},
        "tags": {"type": "array", "minItems": 1, "maxItems": 2, "items": {"type": "string"}}}}
    assert messages(validate_against_schema({"name": "a", "tags": []}, schema)) == [
        ("name", 'Invalid value: "a": name in body should be at least 2 chars long'),
        ("tags", "Invalid value: 0: tags in body should have at least 1 items"),
    ]
    causes = validate_against_schema({"name": "abcde", "tags": ["a", "b", 3]}, schema)
    assert messages(causes) == [
        ("name", "Too long: may not be more than 4 bytes"),
        ("tags[2]", 'Invalid value: "integer": tags[2] in body must be of type string: "integer"'),
        ("tags", "Too many: 3: must have at most 2 items"),
    ]


def test_nested_paths_use_dots_for_fields_and_map_keys_and_brackets_for_items():
    schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "containers": {"type": "array", "items": {"type": "object", "required": ["name"],
                                                  "properties": {"name": {"type": "string"},
                                                                 "limits": {
                                                                     "type": "object",
                                                                     "additionalProperties": QUANTITY}}}}}}}}
    obj = {"spec": {"containers": [{"name": "a"}, {"limits": {"cpu": "1x", "memory": 5}}]}}
    assert messages(validate_against_schema(obj, schema)) == [
        ("spec.containers[1].name", "Required value"),
        ("spec.containers[1].limits.cpu", 'Invalid value: "1x": spec.containers[1].limits.cpu in '
                                          f"body should match '{QUANTITY['pattern']}'"),
    ]


def test_int_or_string_and_nullable():
    schema = {"type": "object", "properties": {"q": QUANTITY,
                                               "t": {"type": "string", "nullable": True},
                                               "u": {"type": "string"}}}
    assert validate_against_schema({"q": 3, "t": None}, schema) == []
    assert validate_against_schema({"q": "500m"}, schema) == []
    assert messages(validate_against_schema({"q": True, "u": None}, schema)) == [
        ("q", 'Invalid value: "boolean": q in body must be of type integer,string: "boolean"'),
        ("u", 'Invalid value: "null": u in body must be of type string: "null"'),
    ]


def test_formats():
    schema = {"type": "object", "properties": {
        "when": {"type": "string", "format": "date-time"},
        "day": {"type": "string", "format": "date"},
        "ip": {"type": "string", "format": "ipv4"},
        "id": {"type": "string", "format": "uuid"},
        "size": {"type": "string", "format": "quantity"},
        "n": {"type": "integer", "format": "int32"},
        "other": {"type": "string", "format": "no-such-format"}}}
    good = {"when": "2024-01-01T00:00:00Z", "day": "2024-02-29", "ip": "10.0.0.1",
            "id": "0b9b0c2e-3c8f-4bb1-9a0e-8e7f2b5b0c11", "size": "512Mi", "n": 2**40,
            "other": "anything"}
    assert validate_against_schema(good, schema) == []
    bad = {"when": "yesterday", "day": "2023-02-29", "ip": "10.0.0.300", "id": "x", "size": "1.5.5"}
    assert messages(validate_against_schema(bad, schema)) == [
        ("when", 'Invalid value: "yesterday": when in body must be of type date-time: "yesterday"'),
        ("day", 'Invalid value: "2023-02-29": day in body must be of type date: "2023-02-29"'),
        ("ip", 'Invalid value: "10.0.0.300": ip in body must be of type ipv4: "10.0.0.300"'),
        ("id", 'Invalid value: "x": id in body must be of type uuid: "x"'),
        ("size", 'Invalid value: "1.5.5": size in body must be of type quantity: "1.5.5"'),
    ]


def test_junctors():
    schema = {"type": "object", "properties": {
        "a": {"type": "integer", "allOf": [{"minimum": 1}, {"maximum": 5}]},
        "b": {"type": "string", "anyOf": [{"enum": ["x"]}, {"pattern": "^y"}]},
        "c": {"type": "integer", "oneOf": [{"minimum": 0}, {"maximum": 10}]},
        "d": {"type": "string", "not": {"enum": ["forbidden"]}}}}
    assert validate_against_schema({"a": 3, "b": "yes", "c": 20, "d": "ok"}, schema) == []
    causes = validate_against_schema({"a": 9, "b": "z", "c": 5, "d": "forbidden"}, schema)
    fields = [c.field for c in causes]
    assert fields.count("a") == 2 and fields.count("b") == 2
    text = " ".join(c.message for c in causes)
    assert '"a" must validate all the schemas (allOf)' in text
    assert '"b" must validate at least one schema (anyOf)' in text
    assert '"c" must validate one and only one schema (oneOf). Found 2 valid alternatives' in text
    assert '"d" must not validate the schema (not)' in text


def test_list_types_set_and_map():
    schema = {"type": "object", "properties": {
        "set": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
        "ports": {"type": "array", "x-kubernetes-list-type": "map",
                  "x-kubernetes-list-map-keys": ["port", "protocol"],
                  "items": {"type": "object", "required": ["port"], "properties": {
                      "port": {"type": "integer"},
                      "protocol": {"type": "string", "default": "TCP"}}}}}}
    ok = {"set": ["a", "b"], "ports": [{"port": 80}, {"port": 80, "protocol": "UDP"}]}
    assert validate_against_schema(ok, schema) == []
    bad = {"set": ["a", "b", "a"], "ports": [{"port": 80}, {"port": 80, "protocol": "TCP"}]}
    causes = validate_against_schema(bad, schema)
    assert messages(causes) == [("set[2]", 'Duplicate value: "a"'),
                                ("ports[1]", 'Duplicate value: {"port":80,"protocol":"TCP"}')]
    assert {c.reason for c in causes} == {"FieldValueDuplicate"}


def test_additional_properties_false_and_embedded_resources():
    schema = {"type": "object", "properties": {
        "closed": {"type": "object", "additionalProperties": False},
        "template": {"type": "object", "x-kubernetes-embedded-resource": True,
                     "x-kubernetes-preserve-unknown-fields": True}}}
    causes = validate_against_schema({"closed": {"x": 1}, "template": {"spec": {}}}, schema)
    assert messages(causes) == [
        ("closed", 'Invalid value: "x": closed.x in body is a forbidden property'),
        ("template.apiVersion", "Required value: must not be empty"),
        ("template.kind", "Required value: must not be empty"),
    ]


# ---- pruning ---------------------------------------------------------------------------------

def test_prune_drops_unknown_fields_but_keeps_type_and_object_meta():
    obj = crontab(extra=1)
    obj["status"] = {"x": 1}
    obj["metadata"]["labels"] = {"a": "b"}
    assert prune(obj, CRONTAB) == ["spec.extra", "status"]
    assert obj == crontab() | {"metadata": {**crontab()["metadata"], "labels": {"a": "b"}}}


def test_prune_object_without_properties_drops_everything_unless_preserved():
    schema = {"type": "object", "properties": {
        "opaque": {"type": "object"},
        "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True,
                 "properties": {"known": {"type": "object", "properties": {"a": {"type": "string"}}}}},
        "map": {"type": "object", "additionalProperties": {"type": "object", "properties": {
            "keep": {"type": "string"}}}},
        "list": {"type": "array", "items": {"type": "object", "properties": {"k": {"type": "string"}}}},
        "embedded": {"type": "object", "x-kubernetes-embedded-resource": True,
                     "properties": {"spec": {"type": "object"}}}}}
    obj = {"opaque": {"a": 1}, "free": {"anything": {"deep": 1}, "known": {"a": "x", "b": "y"}},
           "map": {"m1": {"keep": "x", "drop": 1}}, "list": [{"k": "v", "z": 1}],
           "embedded": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                        "spec": {"x": 1}, "junk": 2}}
    removed = prune(obj, schema)
    assert sorted(removed) == ["embedded.junk", "embedded.spec.x", "free.known.b", "list[0].z",
                               "map.m1.drop", "opaque.a"]
    assert obj == {"opaque": {}, "free": {"anything": {"deep": 1}, "known": {"a": "x"}},
                   "map": {"m1": {"keep": "x"}}, "list": [{"k": "v"}],
                   "embedded": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                                "spec": {}}}


# ---- defaulting ------------------------------------------------------------------------------

DEFAULTED = {"type": "object", "properties": {"spec": {
    "type": "object", "default": {},
    "properties": {
        "replicas": {"type": "integer", "default": 1},
        "policy": {"type": "object", "default": {"mode": "Auto"}, "properties": {
            "mode": {"type": "string"}, "limit": {"type": "integer", "default": 3}}},
        "note": {"type": "string"},
        "maybe": {"type": "string", "nullable": True},
        "ports": {"type": "array", "items": {"type": "object", "properties": {
            "protocol": {"type": "string", "default": "TCP"}}}},
        "labels": {"type": "object", "additionalProperties": {"type": "string", "default": "x"}},
    }}}}


def test_defaults_are_applied_top_down():
    obj: dict = {}
    apply_schema_defaults(obj, DEFAULTED)
    assert obj == {"spec": {"replicas": 1, "policy": {"mode": "Auto", "limit": 3}}}


def test_defaults_fill_nulls_of_non_nullable_fields_and_nulls_without_default_go():
    obj = {"spec": {"replicas": None, "note": None, "maybe": None, "ports": [{}, {"protocol": "UDP"}],
                    "labels": {"a": None, "b": "y"}}}
    apply_schema_defaults(obj, DEFAULTED)
    assert obj == {"spec": {"replicas": 1, "policy": {"mode": "Auto", "limit": 3}, "maybe": None,
                            "ports": [{"protocol": "TCP"}, {"protocol": "UDP"}],
                            "labels": {"a": "x", "b": "y"}}}


def test_prepare_custom_object_prunes_defaults_then_validates():
    schema = copy.deepcopy(CRONTAB)
    schema["properties"]["spec"]["properties"]["replicas"]["default"] = 1
    obj = crontab(unknown=True)
    del obj["spec"]["replicas"]
    assert prepare_custom_object(obj, schema) == []
    assert obj["spec"] == {"cronSpec": "* * * * */5", "image": "my-awesome-cron-image", "replicas": 1}
    bad = crontab(replicas=20)
    assert [c.field for c in prepare_custom_object(bad, schema)] == ["spec.replicas"]
    assert prepare_custom_object(crontab(), None) == []


# ---- writes to /status -----------------------------------------------------------------------

WITH_STATUS = copy.deepcopy(CRONTAB)
WITH_STATUS["properties"]["status"] = {"type": "object", "properties": {
    "phase": {"type": "string", "enum": ["Pending", "Running"], "default": "Pending"},
    "replicas": {"type": "integer", "minimum": 0},
    "conditions": {"type": "array", "items": {"type": "object", "required": ["type"], "properties": {
        "type": {"type": "string"}, "status": {"type": "string", "default": "Unknown"}}}},
}}


def test_status_write_prunes_unknown_status_fields_and_applies_status_defaults():
    obj = crontab()
    obj["status"] = {"replicas": 2, "junk": True, "conditions": [{"type": "Ready", "extra": 1}]}
    assert prepare_custom_status(obj, WITH_STATUS) == []
    assert obj["status"] == {"replicas": 2, "phase": "Pending",
                             "conditions": [{"type": "Ready", "status": "Unknown"}]}
    assert obj["spec"] == crontab()["spec"]


def test_status_write_without_status_stays_without_one():
    obj = crontab()
    assert prepare_custom_status(obj, WITH_STATUS) == []
    assert "status" not in obj


def test_invalid_status_is_reported_under_status():
    obj = crontab()
    obj["status"] = {"phase": "Lost", "replicas": -1, "conditions": [{"status": "True"}]}
    causes = prepare_custom_status(obj, WITH_STATUS)
    assert sorted(c.field for c in causes) == ["status.conditions[0].type", "status.phase",
                                               "status.replicas"]
    # the same causes, at the same paths, as a whole-object validation gives for status
    whole = copy.deepcopy(obj)
    assert messages(causes) == [m for m in messages(prepare_custom_object(whole, WITH_STATUS))
                                if m[0].startswith("status.")]


def test_status_write_leaves_the_rest_of_the_object_alone():
    """Validation ratcheting: a /status write does not re-check the stored spec, so an object
    whose spec a later, stricter schema refuses can still have its status written -- and
    nothing outside status is pruned or defaulted either."""
    schema = copy.deepcopy(WITH_STATUS)
    schema["properties"]["spec"]["properties"]["image"]["default"] = "busybox"
    obj = crontab(replicas=99, cronSpec="not a cron line", stray="kept")   # invalid, unknown
    del obj["spec"]["image"]
    spec = copy.deepcopy(obj["spec"])
    obj["status"] = {"replicas": 1}
    assert prepare_custom_status(obj, schema) == []
    assert obj["spec"] == spec
    assert obj["status"] == {"replicas": 1, "phase": "Pending"}
    # the whole object, checked as a create checks it, is refused
    assert {c.field for c in prepare_custom_object(copy.deepcopy(obj), schema)} == {
        "spec.replicas", "spec.cronSpec"}


def test_status_write_without_a_status_schema_checks_the_whole_object():
    obj = crontab(replicas=0, stray=1)
    obj["status"] = {"x": 1}
    causes = prepare_custom_status(obj, CRONTAB)      # CRONTAB describes no status
    assert [c.field for c in causes] == ["spec.replicas"]
    assert "status" not in obj and "stray" not in obj["spec"]
    assert prepare_custom_status(crontab(), None) == []


# ---- structural schemas ----------------------------------------------------------------------

P = "spec.versions[0].schema.openAPIV3Schema"


def structural(schema):
    return [(c.field, c.message) for c in validate_structural(schema, P)]


def test_structural_schemas_pass():
    assert structural(CRONTAB) == []
    assert structural({"type": "object", "properties": {
        "metadata": {"type": "object", "properties": {"name": {"type": "string", "maxLength": 10}}},
        "q": QUANTITY,
        "x": {"x-kubernetes-preserve-unknown-fields": True},
        "m": {"type": "object", "additionalProperties": {"type": "string"}},
        "v": {"type": "integer", "allOf": [{"minimum": 1}], "not": {"enum": [3]}},
        "s": {"type": "object", "properties": {"a": {"type": "string"}},
              "anyOf": [{"required": ["a"]}, {"properties": {"a": {"minLength": 1}}}]},
    }}) == []


@pytest.mark.parametrize("schema,expected", [
    ({"properties": {"spec": {"type": "object"}}},
     [(f"{P}.type", "Required value: must not be empty at the root")]),
    ({"type": "array", "items": {"type": "string"}},
     [(f"{P}.type", 'Invalid value: "array": must be object at the root')]),
    ({"type": "object", "properties": {"a": {"description": "untyped"}}},
     [(f"{P}.properties[a].type", "Required value: must not be empty for specified object fields")]),
    ({"type": "object", "properties": {"a": {"type": "array"}}},
     [(f"{P}.properties[a].items", "Required value: must be specified")]),
    ({"type": "object", "properties": {"a": {"type": "array", "items": {}}}},
     [(f"{P}.properties[a].items.type",
       "Required value: must not be empty for specified array items")]),
    ({"type": "object", "properties": {"a": {"type": "null"}}},
     [(f"{P}.properties[a].type", 'Unsupported value: "null": supported values: "array", '
                                  '"boolean", "integer", "number", "object", "string"'),
      (f"{P}.properties[a].type", "Forbidden: type cannot be set to null, use nullable as an "
                                  "alternative")]),
    ({"type": "object", "properties": {"a": {"$ref": "#/definitions/x"}}},
     [(f"{P}.properties[a].$ref", "Forbidden: $ref is not supported"),
      (f"{P}.properties[a].type", "Required value: must not be empty for specified object fields")]),
    ({"type": "object", "properties": {"a": {"type": "integer", "anyOf": [{"type": "string"}]}}},
     [(f"{P}.properties[a].anyOf[0].type", "Forbidden: must be empty to be structural")]),
    ({"type": "object", "properties": {"a": {"type": "object", "anyOf": [
        {"properties": {"b": {"minimum": 1}}}]}}},
     [(f"{P}.properties[a].properties[b]",
       f"Required value: because it is defined in {P}.properties[a].anyOf[0].properties[b]")]),
    ({"type": "object", "properties": {"metadata": {"type": "object", "properties": {
        "labels": {"type": "object"}}}}},
     [(f"{P}.properties[metadata]", "Forbidden: must not specify anything other than name and "
                                    "generateName, but metadata is implicitly specified")]),
    ({"type": "object", "properties": {"a": {"type": "string", "pattern": "([a-z"}}},
     [(f"{P}.properties[a].pattern",
       'Invalid value: "([a-z": must be a valid regular expression, but isn\'t: unterminated '
       'character set at position 1')]),
    ({"type": "object", "properties": {"a": {"type": "object", "properties": {"b": {"type": "string"}},
                                             "additionalProperties": {"type": "string"}}}},
     [(f"{P}.properties[a].additionalProperties",
       "Forbidden: additionalProperties and properties are mutual exclusive")]),
    ({"type": "object", "properties": {"a": {"type": "array", "x-kubernetes-list-type": "map",
                                             "items": {"type": "object", "properties": {
                                                 "k": {"type": "string"}}}}}},
     [(f"{P}.properties[a].x-kubernetes-list-map-keys",
       "Required value: must not be empty if x-kubernetes-list-type is map")]),
    ({"type": "object", "properties": {"a": {"type": "integer", "default": "one"}}},
     [(f"{P}.properties[a].default", f'Invalid value: "string": {P}.properties[a].default in body '
                                     'must be of type integer: "string"')]),
    ({"type": "object", "properties": {"a": {"type": "object", "properties": {
        "b": {"type": "string"}}, "default": {"b": "x", "c": 1}}}},
     [(f"{P}.properties[a].default", 'Invalid value: {"b":"x","c":1}: must not have unknown fields')]),
    ({"type": "object", "properties": {"metadata": {"type": "object", "default": {}}}},
     [(f"{P}.properties[metadata].default", "Forbidden: must not be set in top-level metadata")]),
    ({"type": "object", "properties": {"a": {"type": "string", "x-kubernetes-validations": [
        {"rule": " "}]}}},
     [(f"{P}.properties[a].x-kubernetes-validations[0].rule",
       "Required value: rule is not specified")]),
])
def test_non_structural_schemas_are_reported(schema, expected):
    assert structural(schema) == expected


# ---- property tests --------------------------------------------------------------------------

NAMES = st.text(alphabet="abcdefgh", min_size=1, max_size=5)


@st.composite
def string_schemas(draw):
    s: dict = {"type": "string"}
    if draw(st.booleans()):
        s["enum"] = draw(st.lists(st.text(alphabet="abc", min_size=1, max_size=4), min_size=1,
                                  max_size=3, unique=True))
        return s
    lo = draw(st.integers(0, 3))
    if draw(st.booleans()):
        s["minLength"] = lo
    if draw(st.booleans()):
        s["maxLength"] = lo + draw(st.integers(0, 4))
    if draw(st.booleans()):
        s["pattern"] = "^[a-z]*$"
    return s


@st.composite
def number_schemas(draw, kind):
    s: dict = {"type": kind}
    lo = draw(st.integers(-50, 50))
    if draw(st.booleans()):
        s["minimum"] = lo
        if draw(st.booleans()):
            s["exclusiveMinimum"] = True
    if draw(st.booleans()):
        s["maximum"] = lo + draw(st.integers(2, 50))
        if draw(st.booleans()):
            s["exclusiveMaximum"] = True
    return s


SCALARS = st.one_of(string_schemas(), number_schemas("integer"), number_schemas("number"),
                    st.just({"type": "boolean"}), st.just(dict(QUANTITY)))


def _with_nullable(strategy):
    return st.tuples(strategy, st.booleans()).map(
        lambda pair: {**pair[0], "nullable": True} if pair[1] else pair[0])


def _extend(children):
    arrays = st.builds(lambda items, lo, extra, cap: {
        "type": "array", "items": items,
        **({"minItems": lo} if lo else {}), **({"maxItems": lo + extra} if cap else {})},
        children, st.integers(0, 2), st.integers(0, 3), st.booleans())
    objects = st.dictionaries(NAMES, children, min_size=1, max_size=4).flatmap(
        lambda props: st.lists(st.sampled_from(sorted(props)), unique=True).map(
            lambda req: {"type": "object", "properties": props, **({"required": req} if req else {})}))
    maps = st.builds(lambda v: {"type": "object", "additionalProperties": v}, children)
    return _with_nullable(st.one_of(arrays, objects, maps))


SCHEMAS = st.recursive(_with_nullable(SCALARS), _extend, max_leaves=8)


def values_for(s: dict):
    base = _values_for(s)
    return st.one_of(st.none(), base) if s.get("nullable") else base


def _values_for(s: dict):
    if s.get("x-kubernetes-int-or-string"):
        return st.one_of(st.integers(-1000, 1000),
                         st.sampled_from(["1", "500m", "1Gi", "0.5", "+3k"]))
    t = s["type"]
    if t == "string":
        if "enum" in s:
            return st.sampled_from(s["enum"])
        lo = s.get("minLength", 0)
        hi = s.get("maxLength", lo + 6)
        return st.text(alphabet="xyz", min_size=lo, max_size=hi)
    if t in ("integer", "number"):
        lo, hi = s.get("minimum"), s.get("maximum")
        if t == "integer":
            lo = None if lo is None else lo + (1 if s.get("exclusiveMinimum") else 0)
            hi = None if hi is None else hi - (1 if s.get("exclusiveMaximum") else 0)
            return st.integers(lo, hi)
        return st.floats(lo, hi, allow_nan=False, allow_infinity=False,
                         exclude_min=bool(s.get("exclusiveMinimum")) and lo is not None,
                         exclude_max=bool(s.get("exclusiveMaximum")) and hi is not None)
    if t == "boolean":
        return st.booleans()
    if t == "array":
        lo = s.get("minItems", 0)
        return st.lists(values_for(s["items"]), min_size=lo, max_size=s.get("maxItems", lo + 3))
    if "properties" in s:
        props, req = s["properties"], set(s.get("required", []))
        return st.fixed_dictionaries({k: values_for(v) for k, v in props.items() if k in req},
                                     optional={k: values_for(v) for k, v in props.items()
                                               if k not in req})
    return st.dictionaries(NAMES, values_for(s["additionalProperties"]), max_size=3)


def _root(schema):
    return {"type": "object", "properties": {"spec": schema}}


def _nodes(value, s, path):
    """(path, schema, value) for every value in the tree, parents first."""
    yield path, s, value
    if value is None:
        return
    if isinstance(value, list):
        for i, item in enumerate(value):
            yield from _nodes(item, s["items"], index(path, i))
    elif isinstance(value, dict):
        for k, v in value.items():
            sub = s.get("properties", {}).get(k) or s.get("additionalProperties")
            yield from _nodes(v, sub, child(path, k))


WRONG_TYPE = {"string": 12345, "integer": "text", "number": "text", "boolean": "text",
              "array": "text", "object": "text"}


def _mutations(value, s, path):
    """Ways to break one constraint: (path, replacement or KeyError to delete, expected text)."""
    for p, sub, node in _nodes(value, s, path):
        if node is None:
            continue
        if sub.get("x-kubernetes-int-or-string"):
            yield p, True, "must be of type integer,string"
            yield p, "not-a-quantity", "should match"
            continue
        t = sub["type"]
        yield p, WRONG_TYPE[t], f"must be of type {t}"
        if not sub.get("nullable"):
            yield p, None, f'must be of type {t}: "null"'
        if "enum" in sub:
            yield p, "zz", "Unsupported value"
        if "maxLength" in sub:
            yield p, "x" * (sub["maxLength"] + 1), "Too long"
        if sub.get("minLength"):
            yield p, "", "should be at least"
        if "pattern" in sub:
            yield p, "UPPER", "should match"
        if "maximum" in sub:
            yield p, sub["maximum"] + (0 if sub.get("exclusiveMaximum") else 1), "should be less than"
        if "minimum" in sub:
            yield p, sub["minimum"] - (0 if sub.get("exclusiveMinimum") else 1), \
                "should be greater than"
        if t == "array" and "maxItems" in sub:
            filler = node[0] if node else None
            if filler is not None:
                yield p, node + [filler] * (sub["maxItems"] + 1 - len(node)), "Too many"
        if t == "array" and sub.get("minItems"):
            yield p, [], "should have at least"
        if t == "object":
            for k in sub.get("required", []):
                if k in node:
                    yield child(p, k), KeyError, "Required value"


def _replace(root, new, path):
    """A copy of ``root`` with the node at ``path`` replaced by ``new`` (deleted for KeyError)."""
    out = copy.deepcopy(root)
    found = []

    def walk(container, key, p):
        if p == path:
            found.append((container, key))
            return
        node = container[key]
        if isinstance(node, dict):
            for k in node:
                walk(node, k, child(p, k))
        elif isinstance(node, list):
            for i in range(len(node)):
                walk(node, i, index(p, i))

    walk(out, "spec", "spec")
    container, key = found[0]
    if new is KeyError:
        del container[key]
    else:
        container[key] = new
    return out


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_values_valid_by_construction_pass(data):
    schema = _root(data.draw(SCHEMAS, label="schema"))
    assert validate_structural(schema, "schema") == []
    obj = {"spec": data.draw(values_for(schema["properties"]["spec"]), label="value")}
    assert validate_against_schema(obj, schema) == []
    pruned = copy.deepcopy(obj)
    assert prune(pruned, schema) == [] and pruned == obj


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_a_broken_constraint_is_reported_at_its_path(data):
    schema = _root(data.draw(SCHEMAS, label="schema"))
    obj = {"spec": data.draw(values_for(schema["properties"]["spec"]), label="value")}
    mutations = list(_mutations(obj["spec"], schema["properties"]["spec"], "spec"))
    if not mutations:
        return
    path, new, expected = data.draw(st.sampled_from(mutations), label="mutation")
    broken = _replace(obj, new, path)
    causes = validate_against_schema(broken, schema)
    assert any(c.field == path and expected in c.message for c in causes), (path, expected, causes)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_pruning_removes_exactly_the_unknown_fields(data):
    schema = _root(data.draw(SCHEMAS, label="schema"))
    obj = {"spec": data.draw(values_for(schema["properties"]["spec"]), label="value")}
    polluted = copy.deepcopy(obj)
    added = []
    for p, sub, node in list(_nodes(polluted["spec"], schema["properties"]["spec"], "spec")):
        if isinstance(node, dict) and "properties" in sub:
            node["zz_unknown"] = {"deep": [1, 2]}
            added.append(child(p, "zz_unknown"))
    polluted["zz_top"] = 1
    added.append("zz_top")
    assert sorted(prune(polluted, schema)) == sorted(added)
    assert polluted == obj


# ---- the status fast path: a clean verdict must change nothing ---------------------------------

def _status_root(status_schema):
    return {"type": "object", "properties": {"spec": {"type": "object"}, "status": status_schema}}


def _full_status_passes(obj, schema):
    """What prepare_custom_status does without its fast path: prune, default, validate."""
    view = {"status": obj["status"]}
    reduced = {"type": "object", "properties": {"status": schema["properties"]["status"]}}
    prune(view, reduced)
    apply_schema_defaults(view, reduced)
    if "status" in view:
        obj["status"] = view["status"]
    else:
        obj.pop("status")
    return validate_against_schema(view, reduced)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_status_fast_path_agrees_with_the_full_passes(data):
    status_schema = data.draw(SCHEMAS, label="schema")
    value = data.draw(values_for(status_schema), label="value")
    how = data.draw(st.sampled_from(["valid", "broken", "polluted", "null"]), label="how")
    if how == "broken":
        mutations = list(_mutations(value, status_schema, "spec"))
        if mutations:
            path, new, _ = data.draw(st.sampled_from(mutations), label="mutation")
            value = _replace({"spec": value}, new, path)["spec"]
    elif how == "polluted" and isinstance(value, dict):
        value = {**value, "zz_unknown": 1}
    elif how == "null":
        value = None
    schema = _status_root(status_schema)
    fast, full = {"spec": {}, "status": copy.deepcopy(value)}, {"spec": {}, "status": copy.deepcopy(value)}
    assert messages(prepare_custom_status(fast, schema)) == messages(_full_status_passes(full, schema))
    assert fast == full


def test_the_vpa_status_schema_has_a_fast_path_and_a_recommenders_status_takes_it():
    from kvert.api.schema import _clean_checker
    from kvert.apiserver.crds import vpa_crds

    crd = next(c for c in vpa_crds() if c["spec"]["names"]["kind"] == "VerticalPodAutoscaler")
    version = next(v for v in crd["spec"]["versions"] if v["name"] == "v1")
    status_schema = version["schema"]["openAPIV3Schema"]["properties"]["status"]
    check = _clean_checker(status_schema)
    assert check is not None
    status = {"recommendation": {"containerRecommendations": [{
        "containerName": "app", "target": {"cpu": "587m", "memory": "262144k"},
        "lowerBound": {"cpu": "25m", "memory": "262144k"}, "upperBound": {"cpu": "1", "memory": "1Gi"},
        "uncappedTarget": {"cpu": "587m", "memory": "262144k"}}]},
        "conditions": [{"type": "RecommendationProvided", "status": "True",
                        "lastTransitionTime": "2026-11-28T00:00:00Z"}]}
    assert check(status)
    assert not check({**status, "unknownField": 1})
    assert not check({"recommendation": {"containerRecommendations": [{"target": {"cpu": "lots"}}]}})
