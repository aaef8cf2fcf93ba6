"""The ClusterRole aggregation controller (``clusterrole-aggregation``)."""

import pytest

from kvert.controllers.clusterroleaggregation import CLUSTER_ROLES, aggregated_rules

from .helpers import eventually, run

# TestSyncClusterRole in pkg/controller/clusterroleaggregation/clusterroleaggregation_controller_test.go
HAMMER = [{"verbs": ["hammer"], "resources": ["nails"]}, {"verbs": ["hammer"], "resources": ["wedges"]}]
CHISEL = [{"verbs": ["chisel"], "resources": ["mortises"]}]
SAW = [{"verbs": ["saw"], "resources": ["boards"]}]


def role(name, labels, rules):
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": name, "labels": labels}, "rules": rules}


def combined(selectors, *rules):
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": "combined"},
            "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": s} for s in selectors]},
            "rules": [r for group in rules for r in group]}


@pytest.mark.parametrize("roles,expected", [
    ([role("hammer", {"foo": "bar"}, HAMMER), combined([{"foo": "bar"}], SAW)], HAMMER),
    ([role("hammer", {"foo": "not-bar"}, HAMMER), combined([{"foo": "bar"}], HAMMER)], []),
    ([role("hammer", {"foo": "bar"}, HAMMER), role("chisel", {"foo": "bar"}, CHISEL),
      role("saw", {"foo": "not-bar"}, SAW), combined([{"foo": "bar"}])], CHISEL + HAMMER),
    ([role("hammer", {"foo": "bar"}, HAMMER), role("chisel", {"foo": "bar"}, CHISEL),
      role("saw", {"foo": "not-bar"}, SAW), combined([{"foo": "bar"}, {"foo": "not-bar"}])],
     CHISEL + HAMMER + SAW),
    ([role("hammer", {"foo": "bar"}, HAMMER), role("chisel", {"foo": "bar"}, CHISEL),
      role("saw", {"foo": "bar"}, SAW), role("other-saw", {"foo": "not-bar"}, SAW),
      combined([{"foo": "bar"}, {"foo": "not-bar"}])], CHISEL + HAMMER + SAW),
], ids=["remove dead rules", "strip rules", "select properly and put in order",
        "select properly with multiple selectors", "select properly remove duplicates"])
def test_sync_cluster_role(roles, expected):
    aggregated = next(r for r in roles if r["metadata"]["name"] == "combined")
    assert aggregated_rules(aggregated, roles) == expected


def _valid(rules):
    return [{**r, "apiGroups": [""]} for r in rules]


def test_the_controller_keeps_an_aggregated_role_in_step_with_its_sources():
    hammer, chisel, saw = _valid(HAMMER), _valid(CHISEL), _valid(SAW)

    async def scenario(env):
        manager = env.start_manager(controllers=("clusterrole-aggregation",))
        await env.client.create(CLUSTER_ROLES, combined([{"foo": "bar"}]))
        await env.client.create(CLUSTER_ROLES, role("hammer", {"foo": "bar"}, hammer))

        async def rules_are(want):
            return (await env.client.get(CLUSTER_ROLES, "combined")).get("rules") == want
        await eventually(env, lambda: rules_are(hammer), what="hammer aggregated")
        await env.client.create(CLUSTER_ROLES, role("chisel", {"foo": "bar"}, chisel))
        await eventually(env, lambda: rules_are(chisel + hammer), what="chisel aggregated")
        await env.client.delete(CLUSTER_ROLES, "hammer")
        await eventually(env, lambda: rules_are(chisel), what="hammer gone")
        writes = (await env.client.get(CLUSTER_ROLES, "combined"))["metadata"]["resourceVersion"]
        await env.client.create(CLUSTER_ROLES, role("saw", {"foo": "not-bar"}, saw))
        await env.clock.sleep(5)
        # "no diff skip": an unrelated role changes nothing
        assert (await env.client.get(CLUSTER_ROLES, "combined"))["metadata"]["resourceVersion"] == writes
        manager.stop()

    run(scenario)
