"""The strategy table: every write the registry serves has a strategy with every hook of
the Strategy protocol, and nothing in a strategy looks like a hook the registry never calls."""

from __future__ import annotations

import inspect

import pytest

from kvert.api import kinds
from kvert.registry.strategies import ANY, STRATEGIES, Strategy, main_strategy, strategy_for

# Subresources served by handlers of their own, never through the registry's update.
NOT_UPDATES = {"binding", "eviction", "attach", "exec", "log", "portforward", "token", "scale"}

HOOKS = sorted(name for klass in Strategy.__mro__ if klass is not object
               for name, value in vars(klass).items()
               if inspect.isfunction(value) and not name.startswith("_"))


def _served_writes() -> list[tuple[str, str]]:
    writes = []
    for rt in kinds.all_types():
        writes.append((rt.key, ""))
        writes += [(rt.key, sub) for sub in sorted(rt.subresources - NOT_UPDATES)]
    return writes


def test_the_protocol_names_the_hooks_the_registry_calls():
    assert HOOKS == sorted([
        "decode", "names_own_uid", "prepare_for_create", "validate", "prepare_for_update",
        "validate_update", "check_schema", "grace_period_seconds", "gc_policy", "deletion_mark",
        "check_delete"])


@pytest.mark.parametrize("resource, subresource", _served_writes())
def test_every_served_write_resolves_to_a_full_strategy(resource, subresource):
    strategy = strategy_for(kinds.by_key(resource), subresource)
    assert strategy is not None, f"{resource}/{subresource} has no strategy"
    assert isinstance(strategy, Strategy)
    for hook in HOOKS:
        assert callable(getattr(strategy, hook)), hook


@pytest.mark.parametrize("key", sorted(STRATEGIES), ids=lambda k: "/".join(filter(None, k)))
def test_no_strategy_has_a_public_method_outside_the_protocol(key):
    """A misspelt hook (``prepare_for_updte``) would be a method nobody calls."""
    strategy = STRATEGIES[key]
    public = {name for name, _ in inspect.getmembers(type(strategy), inspect.isfunction)
              if not name.startswith("_")}
    assert public <= set(HOOKS), public - set(HOOKS)


@pytest.mark.parametrize("key", sorted(k for k in STRATEGIES if k[0] != ANY))
def test_every_entry_names_a_served_write(key):
    resource, subresource = key
    assert key in _served_writes(), f"{resource}/{subresource} is not served"


def test_pod_strategies_are_distinct():
    pods = kinds.by_key("pods")
    main, status, resize = (strategy_for(pods, ""), strategy_for(pods, "status"),
                            strategy_for(pods, "resize"))
    assert len({id(main), id(status), id(resize)}) == 3
    assert len({type(main), type(status), type(resize)}) == 3
    assert main is main_strategy(pods)


def test_a_kind_without_rules_of_its_own_gets_the_defaults():
    configmaps, deployments = kinds.by_key("configmaps"), kinds.by_key("apps/deployments")
    assert main_strategy(configmaps) is STRATEGIES[(ANY, "")]
    assert strategy_for(deployments, "status") is STRATEGIES[(ANY, "status")]


@pytest.mark.parametrize("subresource", sorted(NOT_UPDATES))
def test_subresources_with_handlers_of_their_own_have_no_strategy(subresource):
    assert strategy_for(kinds.by_key("pods"), subresource) is None
