"""RFC 6902 patches: kvert's path for a single top-level add/replace gives what the
jsonpatch library gives (the object, or an error), and neither the target nor the patch is
shared with the result."""

import jsonpatch
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kvert.api.errors import BadRequest
from kvert.registry.patch import apply_patch

json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
                           max_leaves=8)
keys = st.sampled_from(["status", "spec", "a~b", "x/y", "", "metadata"])
ops = st.fixed_dictionaries({"op": st.sampled_from(["add", "replace", "remove", "test"]),
                             "path": st.one_of(keys.map(lambda k: "/" + k), st.sampled_from(["", "/", "/spec/x", "status"])),
                             "value": json_values})


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(keys, json_values, max_size=4), ops)
def test_a_single_operation_gives_what_the_library_gives(target, op):
    before = repr(target), repr(op)
    try:
        expected = jsonpatch.JsonPatch([op]).apply(target, in_place=False)
    except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException, TypeError, KeyError, IndexError):
        with pytest.raises(BadRequest):
            apply_patch(target, [op], "json")
        return
    got = apply_patch(target, [op], "json")
    assert got == expected
    assert (repr(target), repr(op)) == before          # neither is changed
    if isinstance(op.get("value"), (dict, list)) and op["path"].count("/") == 1 and op["op"] in ("add", "replace"):
        assert got[op["path"][1:]] is not op["value"]   # the result does not share the patch's value


def test_the_recommenders_status_patch():
    vpa = {"apiVersion": "autoscaling.k8s.io/v1", "kind": "VerticalPodAutoscaler",
           "metadata": {"name": "v"}, "spec": {}}
    status = {"recommendation": {"containerRecommendations": [{"containerName": "app", "target": {"cpu": "100m"}}]}}
    got = apply_patch(vpa, [{"op": "add", "path": "/status", "value": status}], "json")
    assert got["status"] == status and "status" not in vpa
    with pytest.raises(BadRequest):
        apply_patch(vpa, [{"op": "replace", "path": "/nothing", "value": 1}], "json")
