"""Every registered plugin keeps the extension-point contracts of kvert.scheduler.interface.

The framework calls plugin methods positionally and finds them by name once, when a profile
is built: a misspelt method is never called and a wrong signature fails only when its point
runs. ``check_plugin`` catches both; these tests hold the in-tree registry and the
out-of-tree registration path to it, and show that the check rejects what it should.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from kvert.scheduler import framework as framework_module
from kvert.scheduler.cache import NodeCache
from kvert.scheduler.config import build_framework, load_config
from kvert.scheduler.framework import Code, CycleState, Diagnosis, FilterResult, Handle, Plugin, Status
from kvert.scheduler.interface import (
    EXTENSION_POINTS, METHOD_PROTOCOLS, POINT_METHODS, check_plugin, implements,
)
from kvert.scheduler.plugins import REGISTRY, register_plugin

from .helpers import node, pod

# args a plugin cannot be built without (everything else builds from its defaults)
REQUIRED_ARGS: dict[str, dict[str, Any]] = {
    "RequestedToCapacityRatio": {"shape": [{"utilization": 0, "score": 0},
                                           {"utilization": 100, "score": 10}]},
}


def build(name: str) -> Any:
    return REGISTRY[name](REQUIRED_ARGS.get(name, {}), Handle(NodeCache()))


# ---- the contracts themselves ------------------------------------------------------------------


def test_every_dispatched_method_has_a_protocol_declaring_it() -> None:
    for method, protocol in METHOD_PROTOCOLS.items():
        assert callable(getattr(protocol, method, None)), (method, protocol)
        assert protocol.__doc__, f"{protocol.__name__} says when it runs and what it returns"
    for point, methods in POINT_METHODS.items():
        assert set(methods) <= set(METHOD_PROTOCOLS), point


def test_the_framework_and_the_configuration_know_the_same_points() -> None:
    assert framework_module.EXTENSION_POINTS == EXTENSION_POINTS


# ---- the in-tree registry ----------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_in_tree_plugin_conforms(name: str) -> None:
    plugin = build(name)
    assert plugin.name == name
    assert check_plugin(plugin) == []
    assert any(implements(plugin, point) for point in EXTENSION_POINTS) or \
        callable(getattr(plugin, "events_to_register", None))


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_in_tree_methods_match_the_protocol_signatures(name: str) -> None:
    """The same comparison check_plugin makes, spelled out per method."""
    plugin = build(name)
    for method, protocol in METHOD_PROTOCOLS.items():
        fn = getattr(plugin, method, None)
        if not callable(fn):
            continue
        want = list(inspect.signature(getattr(protocol, method)).parameters)[1:]
        assert list(inspect.signature(fn).parameters) == want, (name, method)


# ---- the out-of-tree registration path ---------------------------------------------------------


class Reserving(Plugin):
    """An out-of-tree plugin written to the contracts."""

    name = "Reserving"

    def filter(self, state: CycleState, pod: dict[str, Any], nodes: Any) -> FilterResult:
        return FilterResult.ok(len(nodes))

    def reserve(self, state: CycleState, pod: dict[str, Any], node: str) -> Status | None:
        return None

    def unreserve(self, state: CycleState, pod: dict[str, Any], node: str) -> None:
        return None


class Misspelt(Plugin):
    name = "Misspelt"

    def fliter(self, state: CycleState, pod: dict[str, Any], nodes: Any) -> FilterResult:
        return FilterResult.ok(len(nodes))

    def reserve(self, state: CycleState, pod: dict[str, Any], node: str) -> Status | None:
        return None


class WrongCount(Plugin):
    name = "WrongCount"

    def filter(self, state: CycleState, pod: dict[str, Any]) -> FilterResult:
        return FilterResult.ok(0)


class WrongNames(Plugin):
    name = "WrongNames"

    def post_filter(self, state: CycleState, p: dict[str, Any], diag: Diagnosis) -> tuple[Any, Any]:
        return None, Status(Code.UNSCHEDULABLE)


class Nameless:
    def score(self, state: CycleState, pod: dict[str, Any], nodes: Any) -> np.ndarray:
        return np.zeros(len(nodes), np.int64)


@pytest.fixture
def registered() -> Iterator[list[str]]:
    """Names a test registered (append them); taken out of the registry afterwards."""
    names: list[str] = []
    yield names
    for name in names:
        REGISTRY.pop(name, None)


def profile_with(name: str) -> dict[str, Any]:
    return {"profiles": [{"schedulerName": "default-scheduler",
                          "plugins": {"multiPoint": {"enabled": [{"name": name}]}}}]}


def test_out_of_tree_plugin_registers_conforms_and_is_dispatched(registered: list[str]) -> None:
    register_plugin("Reserving", Reserving)
    registered.append("Reserving")
    plugin = build("Reserving")
    assert check_plugin(plugin) == []
    cfg = load_config(profile_with("Reserving"))
    fw = build_framework(cfg.profiles[0], Handle(NodeCache()))
    assert "Reserving" in [p.name for p in fw.points["filter"]]
    assert "Reserving" in [p.name for p in fw.points["reserve"]]
    assert "Reserving" not in [p.name for p in fw.points["score"]]


def test_a_misspelt_method_is_reported(registered: list[str]) -> None:
    register_plugin("Misspelt", Misspelt)
    registered.append("Misspelt")
    problems = check_plugin(build("Misspelt"))
    assert problems == ["Misspelt.fliter: not an extension point; did you mean filter?"]
    # and, as the check warns, the framework never calls it: the plugin is no Filter
    assert not implements(build("Misspelt"), "filter")


def test_a_wrong_parameter_count_is_reported() -> None:
    problems = check_plugin(WrongCount())
    assert len(problems) == 1
    assert problems[0].startswith("WrongCount.filter(state, pod): the FilterPlugin contract is "
                                  "filter(state, pod, nodes)")


def test_wrong_parameter_names_are_reported() -> None:
    problems = check_plugin(WrongNames())
    assert problems == ["WrongNames.post_filter(state, p, diag): the PostFilterPlugin contract "
                        "is post_filter(state, pod, diagnosis)"]


def test_a_plugin_without_a_name_or_any_point_is_reported() -> None:
    assert check_plugin(Nameless()) == ["Nameless: has no name"]

    class Idle(Plugin):
        name = "Idle"

        def helper(self) -> None:
            return None
    assert check_plugin(Idle()) == ["Idle: implements no extension point"]


# ---- dispatch is resolved when the framework is built ------------------------------------------


class CountingLookups(Plugin):
    """Counts how often the framework looks its ``filter`` up."""

    name = "CountingLookups"
    lookups = 0

    def __getattribute__(self, attr: str) -> Any:
        if attr == "filter":
            type(self).lookups += 1
        return super().__getattribute__(attr)

    def filter(self, state: CycleState, pod: dict[str, Any], nodes: Any) -> FilterResult:
        return FilterResult.ok(len(nodes))


def test_methods_are_looked_up_once_not_per_cycle(registered: list[str]) -> None:
    register_plugin("CountingLookups", CountingLookups)
    registered.append("CountingLookups")
    cache = NodeCache()
    for i in range(50):
        cache.add_node(node(f"n{i}"))
    only = [{"name": "PrioritySort"}, {"name": "DefaultBinder"}, {"name": "CountingLookups"}]
    cfg = load_config({"profiles": [{"schedulerName": "default-scheduler", "plugins": {
        "multiPoint": {"disabled": [{"name": "*"}], "enabled": only}}}]})
    fw = build_framework(cfg.profiles[0], Handle(cache))
    CountingLookups.lookups = 0
    nodes = cache.snapshot().all()
    for _ in range(20):
        passed = fw.run_filter_plugins(CycleState(), pod("p", cpu="100m"), nodes, Diagnosis())
        assert len(passed) == 50
    assert CountingLookups.lookups == 0


def test_a_replaced_point_list_is_dispatched_to_its_new_plugins() -> None:
    class Gate(Plugin):
        name = "Gate"

        def permit(self, state: CycleState, pod: dict[str, Any], node: str
                   ) -> tuple[Status | None, float]:
            return Status(Code.UNSCHEDULABLE, "closed"), 0.0

    cfg = load_config(None)
    fw = build_framework(cfg.profiles[0], Handle(NodeCache()))
    assert fw.run_permit(CycleState(), pod("p"), "n") is None
    fw.points["permit"] = [Gate()]
    st = fw.run_permit(CycleState(), pod("p"), "n")
    assert st is not None and st.message() == "closed" and st.plugin == "Gate"
