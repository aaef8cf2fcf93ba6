"""Taints and tolerations: the kubernetes.io "Taints and Tolerations" examples and the rules of
Toleration.ToleratesTaint, the scheduler's TaintToleration plugin and taint-based eviction."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kvert.api.taints import (
    TaintNotToleratedError, count_intolerable_taints, find_untolerated_taint,
    matching_toleration, no_execute_eviction_delay, taint_to_string, toleration_seconds_for,
    toleration_tolerates_taint, tolerates_taints, tolerations_tolerate_taint,
)


def taint(key, value=None, effect="NoSchedule"):
    t = {"key": key, "effect": effect}
    if value is not None:
        t["value"] = value
    return t


# kubectl taint nodes node1 key1=value1:NoSchedule
KEY1 = taint("key1", "value1", "NoSchedule")


class TestDocumentedExamples:
    def test_equal_toleration(self):
        tol = {"key": "key1", "operator": "Equal", "value": "value1", "effect": "NoSchedule"}
        assert toleration_tolerates_taint(tol, KEY1)

    def test_exists_toleration(self):
        tol = {"key": "key1", "operator": "Exists", "effect": "NoSchedule"}
        assert toleration_tolerates_taint(tol, KEY1)

    def test_default_operator_is_equal(self):
        assert toleration_tolerates_taint({"key": "key1", "value": "value1",
                                           "effect": "NoSchedule"}, KEY1)
        assert not toleration_tolerates_taint({"key": "key1", "value": "other",
                                               "effect": "NoSchedule"}, KEY1)

    def test_empty_key_with_exists_tolerates_everything(self):
        tol = {"operator": "Exists"}
        for t in (KEY1, taint("x", effect="NoExecute"), taint("y", "z", "PreferNoSchedule"),
                  {}):
            assert toleration_tolerates_taint(tol, t)

    def test_empty_effect_matches_all_effects_of_key(self):
        tol = {"key": "key1", "operator": "Exists"}
        for effect in ("NoSchedule", "PreferNoSchedule", "NoExecute"):
            assert toleration_tolerates_taint(tol, taint("key1", "anything", effect))
        assert not toleration_tolerates_taint(tol, taint("key2", "anything"))

    def test_effect_must_match_when_set(self):
        tol = {"key": "key1", "operator": "Equal", "value": "value1", "effect": "NoExecute"}
        assert not toleration_tolerates_taint(tol, KEY1)

    def test_multiple_taints_example(self):
        # kubectl taint nodes node1 key1=value1:NoSchedule
        # kubectl taint nodes node1 key1=value1:NoExecute
        # kubectl taint nodes node1 key2=value2:NoSchedule
        taints = [taint("key1", "value1", "NoSchedule"), taint("key1", "value1", "NoExecute"),
                  taint("key2", "value2", "NoSchedule")]
        tolerations = [
            {"key": "key1", "operator": "Equal", "value": "value1", "effect": "NoSchedule"},
            {"key": "key1", "operator": "Equal", "value": "value1", "effect": "NoExecute"},
        ]
        # The pod won't be scheduled onto the node: key2 is not tolerated...
        assert find_untolerated_taint(taints, tolerations) is taints[2]
        assert not tolerates_taints(taints, tolerations)
        # ...but if it is already running there, it keeps running (only NoSchedule untolerated).
        assert no_execute_eviction_delay(taints, tolerations) is None

    def test_toleration_seconds_example(self):
        taints = [taint("key1", "value1", "NoExecute")]
        tolerations = [{"key": "key1", "operator": "Equal", "value": "value1",
                        "effect": "NoExecute", "tolerationSeconds": 3600}]
        assert toleration_seconds_for(taints[0], tolerations) == 3600
        assert no_execute_eviction_delay(taints, tolerations) == 3600

    def test_builtin_not_ready_tolerations(self):
        # the DefaultTolerationSeconds admission plugin adds these (300 s)
        tolerations = [
            {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
             "tolerationSeconds": 300},
            {"key": "node.kubernetes.io/unreachable", "operator": "Exists",
             "effect": "NoExecute", "tolerationSeconds": 300},
        ]
        unreachable = taint("node.kubernetes.io/unreachable", effect="NoExecute")
        assert no_execute_eviction_delay([unreachable], tolerations) == 300
        memory = taint("node.kubernetes.io/memory-pressure", effect="NoSchedule")
        assert find_untolerated_taint([memory], tolerations) is memory


# --- ToleratesTaint rules -------------------------------------------------------------------


@pytest.mark.parametrize("tol,t,expected", [
    ({"key": "foo", "operator": "Exists", "effect": "NoSchedule"},
     taint("foo", "bar", "NoSchedule"), True),
    ({"key": "foo", "operator": "Equal", "value": "bar", "effect": "NoSchedule"},
     taint("foo", "bar", "NoSchedule"), True),
    ({"key": "foo", "operator": "Equal", "value": "bar", "effect": "NoSchedule"},
     taint("foo", "baz", "NoSchedule"), False),
    ({"key": "foo", "operator": "Exists", "effect": "NoSchedule"},
     taint("foo", "bar", "NoExecute"), False),
    ({"key": "foo", "operator": "Equal", "value": "", "effect": "NoSchedule"},
     taint("foo", None, "NoSchedule"), True),  # missing value == ""
    ({"key": "foo", "effect": "NoSchedule"}, taint("foo", None, "NoSchedule"), True),
    ({"key": "foo", "operator": "Equal"}, taint("foo", "bar"), False),
    ({"key": "", "operator": "Equal", "value": "bar"}, taint("foo", "bar"), True),  # key "" = any
    ({"key": "foo", "operator": "Bogus", "value": "bar"}, taint("foo", "bar"), False),
    ({"key": "foo", "operator": "Gt", "value": "1"}, taint("foo", "5"), False),  # gate off
])
def test_tolerates_taint_rules(tol, t, expected):
    assert toleration_tolerates_taint(tol, t) is expected


def test_comparison_operators_behind_flag():
    on = {"enable_comparison_operators": True}
    assert toleration_tolerates_taint({"key": "k", "operator": "Lt", "value": "10"},
                                      taint("k", "5"), **on)  # taint 5 < toleration 10
    assert not toleration_tolerates_taint({"key": "k", "operator": "Lt", "value": "10"},
                                          taint("k", "10"), **on)
    assert toleration_tolerates_taint({"key": "k", "operator": "Gt", "value": "10"},
                                      taint("k", "11"), **on)
    assert not toleration_tolerates_taint({"key": "k", "operator": "Gt", "value": "10"},
                                          taint("k", "9"), **on)
    assert toleration_tolerates_taint({"key": "k", "operator": "Gt", "value": "-3"},
                                      taint("k", "0"), **on)
    for bad in ("010", "+1", "1.5", "", "-0", "x"):  # canonical decimal integers only
        assert not toleration_tolerates_taint({"key": "k", "operator": "Gt", "value": "0"},
                                              taint("k", bad), **on)
    assert tolerates_taints([taint("k", "3")], [{"key": "k", "operator": "Lt", "value": "4"}],
                            **on)


# --- scheduling filter ----------------------------------------------------------------------


class TestFilter:
    def test_no_taints(self):
        assert tolerates_taints([], [])
        assert tolerates_taints(None, None)
        assert find_untolerated_taint([], [{"operator": "Exists"}]) is None

    def test_prefer_no_schedule_does_not_block(self):
        taints = [taint("a", "b", "PreferNoSchedule")]
        assert tolerates_taints(taints, [])
        assert not tolerates_taints(taints, [], effects=["PreferNoSchedule"])
        assert not tolerates_taints(taints, [], effects=None)

    def test_first_untolerated_in_node_order(self):
        taints = [taint("a"), taint("b", effect="NoExecute"), taint("c")]
        assert find_untolerated_taint(taints, [{"key": "a", "operator": "Exists"}]) is taints[1]
        assert find_untolerated_taint(taints, [], effects=["NoSchedule"]) is taints[0]

    def test_count_intolerable_prefer_no_schedule(self):
        taints = [taint("a", "1", "PreferNoSchedule"), taint("b", "2", "PreferNoSchedule"),
                  taint("c", "3", "NoSchedule")]
        assert count_intolerable_taints(taints, []) == 2
        assert count_intolerable_taints(taints, [{"key": "a", "operator": "Exists"}]) == 1
        # a toleration limited to another effect does not help with PreferNoSchedule
        assert count_intolerable_taints(
            taints, [{"key": "b", "operator": "Exists", "effect": "NoSchedule"}]) == 2
        assert count_intolerable_taints(taints, [{"operator": "Exists"}]) == 0

    def test_tolerations_tolerate_taint(self):
        assert tolerations_tolerate_taint([{"key": "x", "operator": "Exists"}], taint("x"))
        assert not tolerations_tolerate_taint([], taint("x"))
        assert not tolerations_tolerate_taint(None, taint("x"))


# --- eviction timing ------------------------------------------------------------------------


class TestEviction:
    NOEXEC = taint("k", "v", "NoExecute")

    def test_forever_when_no_seconds(self):
        assert toleration_seconds_for(self.NOEXEC, [{"key": "k", "operator": "Exists"}]) is None

    def test_not_tolerated(self):
        with pytest.raises(TaintNotToleratedError, match="k=v:NoExecute"):
            toleration_seconds_for(self.NOEXEC, [{"key": "other", "operator": "Exists"}])
        assert no_execute_eviction_delay([self.NOEXEC], []) == 0
        assert issubclass(TaintNotToleratedError, LookupError)

    def test_zero_and_negative_mean_now(self):
        for secs in (0, -10):
            tols = [{"key": "k", "operator": "Exists", "tolerationSeconds": secs}]
            assert toleration_seconds_for(self.NOEXEC, tols) == 0
            assert no_execute_eviction_delay([self.NOEXEC], tols) == 0

    def test_first_matching_toleration_is_used(self):
        # like GetMatchingTolerations: one toleration per taint, the first that matches
        tols = [{"key": "k", "operator": "Exists", "tolerationSeconds": 600},
                {"operator": "Exists", "tolerationSeconds": 60}]
        assert matching_toleration(self.NOEXEC, tols) is tols[0]
        assert toleration_seconds_for(self.NOEXEC, tols) == 600
        tols2 = [{"operator": "Exists"}, {"key": "k", "operator": "Exists",
                                          "tolerationSeconds": 5}]
        assert toleration_seconds_for(self.NOEXEC, tols2) is None

    def test_minimum_across_taints(self):
        taints = [taint("a", effect="NoExecute"), taint("b", effect="NoExecute"),
                  taint("c", effect="NoSchedule")]
        tols = [{"key": "a", "operator": "Exists", "tolerationSeconds": 120},
                {"key": "b", "operator": "Exists", "tolerationSeconds": 30},
                {"key": "c", "operator": "Exists", "tolerationSeconds": 1}]  # not NoExecute
        assert no_execute_eviction_delay(taints, tols) == 30
        tols[1] = {"key": "b", "operator": "Exists"}  # b forever -> a decides
        assert no_execute_eviction_delay(taints, tols) == 120

    def test_seconds_ignored_for_other_effects(self):
        t = taint("k", "v", "NoSchedule")
        assert toleration_seconds_for(t, [{"key": "k", "operator": "Exists",
                                           "tolerationSeconds": 5}]) is None
        assert no_execute_eviction_delay([t], []) is None


def test_taint_to_string():
    assert taint_to_string(KEY1) == "key1=value1:NoSchedule"
    assert taint_to_string(taint("bar", effect="NoSchedule")) == "bar:NoSchedule"


# --- properties -----------------------------------------------------------------------------

_k = st.sampled_from(["", "a", "b"])
_v = st.sampled_from(["", "x", "y"])
_e = st.sampled_from(["", "NoSchedule", "PreferNoSchedule", "NoExecute"])
_taint = st.builds(lambda k, v, e: {"key": k or "a", "value": v, "effect": e or "NoSchedule"},
                   _k, _v, _e)
_tol = st.builds(lambda k, op, v, e: {"key": k, "operator": op, "value": v, "effect": e},
                 _k, st.sampled_from(["", "Equal", "Exists"]), _v, _e)


@settings(max_examples=200, deadline=None)
@given(_tol, _taint)
def test_tolerates_definition(tol, t):
    expected = ((not tol["effect"] or tol["effect"] == t["effect"])
                and (not tol["key"] or tol["key"] == t["key"])
                and (tol["operator"] == "Exists" or tol["value"] == t["value"]))
    assert toleration_tolerates_taint(tol, t) is expected


@settings(max_examples=200, deadline=None)
@given(st.lists(_taint, max_size=4), st.lists(_tol, max_size=3))
def test_filter_and_eviction_consistent(taints, tols):
    bad = find_untolerated_taint(taints, tols)
    assert (bad is None) == all(tolerations_tolerate_taint(tols, t) for t in taints
                                if t["effect"] in ("NoSchedule", "NoExecute"))
    delay = no_execute_eviction_delay(taints, tols)
    noexec_ok = all(tolerations_tolerate_taint(tols, t) for t in taints
                    if t["effect"] == "NoExecute")
    if not noexec_ok:
        assert delay == 0
    else:
        assert delay is None  # no tolerationSeconds anywhere
