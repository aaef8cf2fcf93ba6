"""Every built-in kind (kvert.api.kindspecs) has the apiserver entries its KindSpec names:
an OpenAPI definition, a protobuf message, a printer; nothing in those tables belongs to no
declared kind; and the tables agree on the kind's field names: the OpenAPI definition's
top-level, ``spec`` and ``status`` fields are the protobuf message's (but for the listed
exceptions), and patch metadata only describes fields the OpenAPI definition has.

A failure names the kind and the table to fill in; see "Adding a served kind" in
docs/architecture.md."""

from __future__ import annotations

import pytest

from kvert.api import patchmeta
from kvert.api.kindspecs import BUILTIN_KINDS, BY_GVK, KindSpec
from kvert.apiserver import tables
from kvert.apiserver.openapi import kind_schema_name
from kvert.apiserver.openapi import schemas as S
from kvert.apiserver.protobuf import schema as P

SPECS = pytest.mark.parametrize("spec", BUILTIN_KINDS, ids=lambda s: f"{s.api_version}/{s.kind}")

# Definitions flagged ``kind`` in schemas.py that are not served resources: subresource bodies.
NON_RESOURCE_DEFINITIONS = {"io.k8s.api.autoscaling.v1.Scale"}

# Where today's tables disagree on purpose. The protobuf table transcribes Kubernetes v1.37's
# Go types whole (any body kubectl sends must decode, and decoded values are kept), while
# schemas.py describes the fields kvert serves: these newer fields reach kvert over protobuf
# but its OpenAPI documents (kubectl explain, client-side validation) do not describe them.
# (kind, level) -> the protobuf message's fields the OpenAPI definition lacks. An entry that
# stops being true fails the test: drop it when schemas.py catches up.
PROTOBUF_ONLY: dict[tuple[str, str], set[str]] = {
    # NodeSpec.podPreemptionPolicy
    ("Node", "spec"): {"podPreemptionPolicy"},
    # PodSpec.schedulingGroup (the 1.36+ successor of workloadRef), PodSpec.evictionResponders
    ("Pod", "spec"): {"evictionResponders", "schedulingGroup"},
    # PodStatus.nodeAllocatableResourceClaimStatuses (DRA), PodStatus.volumeHealth
    ("Pod", "status"): {"nodeAllocatableResourceClaimStatuses", "volumeHealth"},
    # the volume-expansion and VolumeAttributesClass status fields
    ("PersistentVolumeClaim", "status"): {"allocatedResourceStatuses", "allocatedResources",
                                          "currentVolumeAttributesClassName",
                                          "modifyVolumeStatus"},
}
# (kind, level) -> OpenAPI fields the protobuf message lacks: none today.
OPENAPI_ONLY: dict[tuple[str, str], set[str]] = {}

LEVELS = ("", "spec", "status")    # "": the object's top level


# ---- reading the tables -----------------------------------------------------------------------

def _ref(t) -> str | None:
    while t[0] in ("list", "map"):
        t = t[1]
    return t[1] if t[0] == "ref" else None


def openapi_fields(definition: str) -> set[str]:
    """The field names of an OpenAPI definition (apiVersion and kind left out: protobuf
    carries them in its envelope)."""
    d = S.DEFINITIONS[definition]
    return {f.name for f in d.fields} | ({"metadata"} if d.kind else set())


def openapi_child(definition: str, field: str) -> str | None:
    if field == "metadata" and S.DEFINITIONS[definition].kind:
        return S.OBJECT_META
    found = [_ref(f.type) for f in S.DEFINITIONS[definition].fields if f.name == field]
    return found[0] if found else None


def protobuf_fields(message: str) -> set[str]:
    """The JSON names of a message's fields, inlined embedded structs expanded."""
    out: set[str] = set()
    for f in P.MESSAGE_TYPES[message].fields:
        out |= protobuf_fields(f.type) if f.inline else {f.name}
    return out


def protobuf_child(message: str, field: str) -> str | None:
    for f in P.MESSAGE_TYPES[message].fields:
        if f.inline:
            found = protobuf_child(f.type, field)
            if found:
                return found
        elif f.name == field:
            return f.type
    return None


def _levels(openapi: str, protobuf: str | None):
    """(level, OpenAPI definition, protobuf message or None) for each level both have."""
    yield "", openapi, protobuf
    for level in LEVELS[1:]:
        o = openapi_child(openapi, level)
        p = protobuf_child(protobuf, level) if protobuf else None
        if o is not None:
            yield level, o, p


# ---- OpenAPI ----------------------------------------------------------------------------------

@SPECS
def test_openapi_definition_exists(spec: KindSpec):
    assert spec.openapi in S.DEFINITIONS, \
        f"{spec.kind}: no definition {spec.openapi} in apiserver/openapi/schemas.py"
    assert S.DEFINITIONS[spec.openapi].kind, f"{spec.kind}: mark @{spec.openapi} with 'kind'"
    # the builder reaches it through the spec, and Kubernetes' naming rule agrees
    assert kind_schema_name(spec.resource) == spec.openapi
    assert S.kind_definition(spec.group, spec.version, spec.kind) == spec.openapi


def test_every_kind_definition_belongs_to_a_kind():
    flagged = {name for name, d in S.DEFINITIONS.items() if d.kind}
    declared = {spec.openapi for spec in BUILTIN_KINDS}
    assert flagged - declared == NON_RESOURCE_DEFINITIONS
    assert not (NON_RESOURCE_DEFINITIONS & declared)


# ---- protobuf ---------------------------------------------------------------------------------

@SPECS
def test_protobuf_message_exists(spec: KindSpec):
    if spec.protobuf is None:
        # Kubernetes serves the VPA kinds from a CRD: JSON only
        assert spec.group == "autoscaling.k8s.io", f"{spec.kind}: declare its protobuf message"
        assert spec.gvk not in P.KIND_TYPES
        return
    assert spec.protobuf in P.MESSAGE_TYPES, \
        f"{spec.kind}: no message {spec.protobuf} in apiserver/protobuf/schema.py MESSAGES"
    assert P.KIND_TYPES[spec.gvk] == spec.protobuf


def test_every_protobuf_kind_is_declared_or_not_a_resource():
    declared = {spec.gvk: spec.protobuf for spec in BUILTIN_KINDS if spec.protobuf}
    others = {(line.split()[0], line.split()[1]) for line in P.OTHER_KINDS.splitlines()
              if line.strip()}
    assert not (others & set(BY_GVK)), "a served kind in OTHER_KINDS: declare it in its KindSpec"
    assert set(P.KIND_TYPES) == set(declared) | others
    assert {gvk: P.KIND_TYPES[gvk] for gvk in declared} == declared


# ---- printers ---------------------------------------------------------------------------------

@SPECS
def test_printer_exists_when_declared(spec: KindSpec):
    if spec.printer:
        assert spec.group_kind in tables.DEFINED_PRINTERS, \
            f"{spec.kind}: printer=True, but apiserver/printers defines none"
        assert tables.PRINTERS[spec.group_kind] is tables.DEFINED_PRINTERS[spec.group_kind]
    else:
        assert spec.group_kind not in tables.PRINTERS


def test_every_printer_belongs_to_a_kind():
    declared = {spec.group_kind for spec in BUILTIN_KINDS if spec.printer}
    assert set(tables.DEFINED_PRINTERS) - declared == set(), \
        "printers no KindSpec declares (printer=True): they would not be served"
    assert set(tables.PRINTERS) == declared


# ---- the tables agree on field names ----------------------------------------------------------

@SPECS
def test_openapi_and_protobuf_agree_on_field_names(spec: KindSpec):
    if spec.protobuf is None:
        return
    for level, definition, message in _levels(spec.openapi, spec.protobuf):
        where = f"{spec.kind}{'.' + level if level else ''}"
        assert message is not None, f"{where}: in OpenAPI ({definition}), not in protobuf"
        o, p = openapi_fields(definition), protobuf_fields(message)
        assert p - o == PROTOBUF_ONLY.get((spec.kind, level), set()), \
            f"{where}: fields of {message} the OpenAPI {definition} lacks"
        assert o - p == OPENAPI_ONLY.get((spec.kind, level), set()), \
            f"{where}: fields of {definition} the protobuf {message} lacks"


def test_the_exceptions_name_declared_kinds():
    kinds = {spec.kind for spec in BUILTIN_KINDS if spec.protobuf}
    for kind, level in {**PROTOBUF_ONLY, **OPENAPI_ONLY}:
        assert kind in kinds and level in LEVELS


@SPECS
def test_patch_metadata_fields_are_openapi_fields(spec: KindSpec):
    if spec.patch is None:
        return
    root = patchmeta._TYPES[spec.patch]
    assert set(root) <= openapi_fields(spec.openapi), \
        f"{spec.kind}: patch root {spec.patch} has fields {spec.openapi} does not"
    for level in LEVELS[1:]:
        if level not in root:
            continue
        definition = openapi_child(spec.openapi, level)
        assert definition is not None, f"{spec.kind}.{level}: in patch metadata, not OpenAPI"
        child = root[level][1]
        fields = set(patchmeta._TYPES.get(child or "", {}))
        assert fields <= openapi_fields(definition), \
            f"{spec.kind}.{level}: patch type {child} has fields {definition} does not"


@SPECS
def test_patch_metadata_reaches_the_openapi_document(spec: KindSpec):
    """Every non-empty patch entry of a kind names a path its OpenAPI definition has (the
    builder annotates the definitions from them)."""
    if spec.patch is None:
        return
    for path, meta in patchmeta.all_patch_meta(*spec.gvk).items():
        if meta.is_empty():
            continue
        name = spec.openapi
        for i, part in enumerate(path):
            assert part in openapi_fields(name), \
                f"{spec.kind}: patch metadata for {'.'.join(path)}: {name} has no {part!r}"
            child = openapi_child(name, part)
            if i < len(path) - 1:
                assert child is not None, f"{spec.kind}: {'.'.join(path[:i + 1])} is no object"
                name = child
