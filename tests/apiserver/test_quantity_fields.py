"""kvert.api.quantityfields (where built-in kinds hold quantities) agrees with the OpenAPI
definitions: every ``io.k8s.apimachinery.pkg.api.resource.Quantity`` reachable from a kind,
maps of quantities flagged as ResourceLists (outside resource.k8s.io), and nothing else."""

from kvert.api import kinds
from kvert.api.quantityfields import QUANTITY_PATHS
from kvert.apiserver.openapi import schemas as S
from kvert.apiserver.openapi.builder import expand_types, kind_schema_name


def _walk(t, prefix, out, seen):
    tag = t[0]
    if tag == "scalar" and t[1] == "qty":
        out.append((prefix, False))
    elif tag == "list":
        _walk(t[1], prefix + ("[]",), out, seen)
    elif tag == "map":
        if t[1] == ("scalar", "qty"):
            out.append((prefix + ("{}",), True))
        else:
            _walk(t[1], prefix + ("{}",), out, seen)
    elif tag == "ref" and t[1] not in seen:
        if t[1] == S.QUANTITY:
            out.append((prefix, False))
            return
        d = S.DEFINITIONS.get(t[1])
        for f in d.fields if d is not None else ():
            _walk(f.type, prefix + (f.name,), out, seen | {t[1]})


def _from_openapi():
    found = {}
    for rt in expand_types(kinds.all_types()):
        name = kind_schema_name(rt)
        if name not in S.DEFINITIONS or name.startswith("io.k8s.autoscaling."):
            continue   # VerticalPodAutoscaler: a custom resource upstream
        out = []
        _walk(("ref", name), (), out, frozenset())
        if out:
            resource_lists = not rt.api_version.startswith("resource.k8s.io/")
            found[(rt.api_version, rt.kind)] = {(p, rl and resource_lists) for p, rl in out}
    return found


def test_the_table_matches_the_openapi_definitions():
    table = {k: set(v) for k, v in QUANTITY_PATHS.items()}
    expected = _from_openapi()
    assert table.keys() == expected.keys()
    for gvk, paths in expected.items():
        assert table[gvk] == paths, gvk
