"""Every built-in kind is declared once (kvert.api.kindspecs) and the api-layer tables it
names have its entries: patch metadata, validation rules, defaulting. Nothing in those
tables belongs to no declared kind. (The apiserver's tables, and the field names the tables
agree on: tests/apiserver/test_kind_completeness.py.)

A failure names the kind and the table to fill in; see "Adding a served kind" in
docs/architecture.md."""

from __future__ import annotations

import pytest

from kvert.api import defaults, kinds, kindspecs, patchmeta
from kvert.api import validation as V
from kvert.api.kindspecs import BUILTIN_KINDS, KindSpec

SPECS = pytest.mark.parametrize("spec", BUILTIN_KINDS, ids=lambda s: f"{s.api_version}/{s.kind}")


def test_kinds_serves_the_declared_kinds_in_order():
    assert kinds.BUILTIN == tuple(spec.resource for spec in BUILTIN_KINDS)
    for spec in BUILTIN_KINDS:
        rt = spec.resource
        assert (rt.group, rt.version, rt.kind, rt.plural, rt.namespaced, rt.subresources,
                rt.short_names, rt.categories, rt.verbs) == (
            spec.group, spec.version, spec.kind, spec.plural, spec.namespaced,
            spec.subresources, spec.short_names, spec.categories, spec.verbs)
        assert rt.api_version == spec.api_version
        assert kinds.by_gvk(*spec.gvk) == rt


def test_a_kind_is_declared_once():
    gvks = [spec.gvk for spec in BUILTIN_KINDS]
    keys = [spec.resource.key for spec in BUILTIN_KINDS]
    assert len(gvks) == len(set(gvks))
    assert len(keys) == len(set(keys))
    assert kindspecs.BY_GVK == {spec.gvk: spec for spec in BUILTIN_KINDS}


def test_every_api_version_has_its_packages():
    assert {spec.api_version for spec in BUILTIN_KINDS} == set(kindspecs.PACKAGES)


@SPECS
def test_the_names_are_resolved(spec: KindSpec):
    # OWN is the declaration's shorthand, never a table key
    assert kindspecs.OWN not in (spec.patch, spec.rules, spec.defaults, spec.protobuf)
    prefix, package = kindspecs.PACKAGES[spec.api_version]
    assert spec.openapi == f"{prefix}.{spec.kind}"
    if package is None:          # an API version served as JSON only
        assert spec.protobuf is None


# ---- patch metadata -----------------------------------------------------------------------

@SPECS
def test_patch_root_exists(spec: KindSpec):
    if spec.patch is None:
        # custom-resource semantics: Kubernetes serves these kinds from a CRD
        assert spec.group == "autoscaling.k8s.io", f"{spec.kind}: declare its patch root"
        assert not patchmeta.is_builtin(*spec.gvk)
        return
    assert spec.patch in patchmeta._TYPES, \
        f"{spec.kind}: patch root {spec.patch!r} missing from api/patchmeta.py _TYPES"
    assert "metadata" in patchmeta._TYPES[spec.patch], \
        f"{spec.kind}: patch root {spec.patch!r} has no metadata (ObjectMeta)"
    assert patchmeta.is_builtin(*spec.gvk) and patchmeta.supports_strategic(*spec.gvk)


def test_patch_roots_are_the_declared_ones():
    assert patchmeta._ROOTS == {spec.gvk: spec.patch for spec in BUILTIN_KINDS if spec.patch}


# ---- validation -----------------------------------------------------------------------------

@SPECS
def test_validation_rules_exist(spec: KindSpec):
    if spec.rules is None:
        # answered by the API server, never stored: the review handlers validate them
        assert spec.verbs == kindspecs.CREATE_ONLY, \
            f"{spec.kind}: a stored kind needs validation rules (api/validation _RULES)"
        assert spec.gvk not in V._CREATE
        return
    assert spec.rules in V._RULES, \
        f"{spec.kind}: validation rules {spec.rules!r} missing from api/validation _RULES"
    rules = V._RULES[spec.rules]
    assert V._CREATE[spec.gvk] is rules.create
    assert V._UPDATE.get(spec.gvk) is rules.update
    assert V._STATUS.get(spec.gvk) is rules.status
    if rules.status is not None:
        assert "status" in spec.subresources, \
            f"{spec.kind}: status rules, but no status subresource"


def test_every_rule_set_belongs_to_a_kind():
    used = {spec.rules for spec in BUILTIN_KINDS}
    assert set(V._RULES) - used == set(), "validation rules no KindSpec names"


def test_the_validation_tables_are_the_declared_kinds():
    declared = {spec.gvk for spec in BUILTIN_KINDS if spec.rules is not None}
    assert set(V._CREATE) == declared
    assert set(V._UPDATE) <= declared and set(V._STATUS) <= declared


# ---- defaulting -----------------------------------------------------------------------------

@SPECS
def test_defaulter_exists(spec: KindSpec):
    if spec.defaults is None:
        assert spec.gvk not in defaults._BY_KIND
        return
    assert spec.defaults in defaults.DEFAULTERS, \
        f"{spec.kind}: defaulter {spec.defaults!r} missing from api/defaults.py DEFAULTERS"
    assert defaults._BY_KIND[spec.gvk] is defaults.DEFAULTERS[spec.defaults]


def test_every_defaulter_belongs_to_a_kind():
    used = {spec.defaults for spec in BUILTIN_KINDS}
    assert set(defaults.DEFAULTERS) - used == set(), "defaulters no KindSpec names"
    assert set(defaults._BY_KIND) == {spec.gvk for spec in BUILTIN_KINDS if spec.defaults}


def test_defaults_are_applied_through_the_declared_name():
    obj = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
           "subjects": [{"kind": "User", "name": "u"}]}
    defaults.apply_defaults(obj)
    # ClusterRoleBinding is defaulted by RoleBinding's function (SetDefaults_Subject)
    assert obj["subjects"][0]["apiGroup"] == "rbac.authorization.k8s.io"
