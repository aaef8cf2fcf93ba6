"""The recommender's incremental parts: the pod-to-VPA assignment kept from events, usage
tables, the material-change rule for status writes, and a recommender on informers."""

from __future__ import annotations

import copy

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kvert.api.selectors import LabelSelector
from kvert.client.cache import InformerFactory
from kvert.clock import VirtualClock
from kvert.vpa.metrics_source import UsageTable, usage_table_from_pod_metrics
from kvert.vpa.recommendation import status_changed_materially
from kvert.vpa.recommender import VPAS, Recommender
from kvert.vpa.targets import PodAssignment

from tests.kubelet.test_agent_support import cluster

NS = "default"

# -- PodAssignment ------------------------------------------------------------------------------

APPS = ["a", "b", "c"]
ops = st.lists(st.one_of(
    st.tuples(st.just("vpa"), st.integers(0, 3), st.integers(0, 5), st.sampled_from(APPS + [None])),
    st.tuples(st.just("novpa"), st.integers(0, 3)),
    st.tuples(st.just("pod"), st.integers(0, 6), st.sampled_from(APPS + ["x"]), st.booleans()),
    st.tuples(st.just("nopod"), st.integers(0, 6))), max_size=40)


@settings(max_examples=150, deadline=None)
@given(ops)
def test_assignment_from_events_is_the_oldest_matching_vpa(steps):
    a = PodAssignment()
    vpas: dict = {}
    pods: dict = {}
    for step in steps:
        if step[0] == "vpa":
            _, v, created, app = step
            sel = LabelSelector.nothing() if app is None else LabelSelector.from_dict({"matchLabels": {"app": app}})
            vpas[v] = (f"2024-01-0{created + 1}", sel)
            a.set_vpa((NS, f"v{v}"), vpas[v][0], sel)
        elif step[0] == "novpa":
            vpas.pop(step[1], None)
            a.remove_vpa((NS, f"v{step[1]}"))
        elif step[0] == "pod":
            _, p, app, live = step
            pod = {"metadata": {"name": f"p{p}", "namespace": NS, "labels": {"app": app}},
                   "status": {"phase": "Running" if live else "Succeeded"}}
            pods[p] = pod
            a.add_pod(pod)
        else:
            pods.pop(step[1], None)
            a.remove_pod((NS, f"p{step[1]}"))
        if step[0] in ("vpa", "novpa") and len(steps) % 2:
            a.refresh()                           # sometimes several changes before a refresh
    a.refresh()
    expected = {}
    for p, pod in pods.items():
        if pod["status"]["phase"] != "Running":
            continue
        fits = sorted((created, f"v{v}") for v, (created, sel) in vpas.items() if sel.matches(pod["metadata"]["labels"]))
        if fits:
            expected[(NS, f"p{p}")] = (NS, fits[0][1])
    assert a.owner == expected
    assert {k: v for k, v in a.members.items() if v} == \
        {v: {p for p, o in expected.items() if o == v} for v in set(expected.values())}


# -- usage tables --------------------------------------------------------------------------------

def test_pod_metrics_become_a_usage_table_with_a_stable_generation():
    items = [{"metadata": {"namespace": "ns", "name": "p"}, "timestamp": "2024-05-01T00:01:00Z",
              "containers": [{"name": "a", "usage": {"cpu": "250m", "memory": "1Mi"}},
                             {"name": "b", "usage": {"cpu": "bad"}}]}]
    t = usage_table_from_pod_metrics(items)
    assert t.keys == [("ns", "p", "a"), ("ns", "p", "b")]
    assert t.time.tolist() == [1714521660.0] * 2
    assert t.cpu[0] == 0.25 and np.isnan(t.cpu[1])
    assert t.memory[0] == 2**20 and np.isnan(t.memory[1])
    again = usage_table_from_pod_metrics(items, t)
    assert again.generation == t.generation and again.keys is t.keys
    other = usage_table_from_pod_metrics(items[:0], t)
    assert other.generation == t.generation + 1 and other.keys == []


# -- the status-writing rule ----------------------------------------------------------------------

def _status(target="500m", lower="400m", upper="2", condition="True") -> dict:
    bounds = {"target": {"cpu": target, "memory": "100Mi"}, "lowerBound": {"cpu": lower, "memory": "90Mi"},
              "upperBound": {"cpu": upper, "memory": "1Gi"}, "uncappedTarget": {"cpu": target, "memory": "100Mi"}}
    return {"recommendation": {"containerRecommendations": [{"containerName": "app", **bounds}]},
            "conditions": [{"type": "RecommendationProvided", "status": condition}]}


def test_bounds_are_rewritten_only_when_they_move_more_than_10_percent():
    old = _status()
    assert not status_changed_materially(old, copy.deepcopy(old))
    assert not status_changed_materially(old, _status(lower="361m", upper="2.19"))
    assert status_changed_materially(old, _status(lower="359m"))
    assert status_changed_materially(old, _status(upper="2201m"))
    assert status_changed_materially(old, _status(target="501m"))          # a target: always
    assert status_changed_materially(old, _status(condition="False"))      # a condition: always
    assert status_changed_materially(old, {"conditions": old["conditions"]})


# -- a recommender on informers ---------------------------------------------------------------------

class TableSource:
    def __init__(self, clock, keys):
        self.clock, self.keys = clock, keys

    async def usage_table(self) -> UsageTable:
        n = len(self.keys)
        return UsageTable(self.keys, 0, np.full(n, self.clock.now()), np.full(n, 0.5), np.full(n, 2e8))


def _pod(name: str, app: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": NS, "labels": {"app": app}},
            "spec": {"containers": [{"name": "app", "image": "busybox",
                                     "resources": {"requests": {"cpu": "100m", "memory": "50Mi"}}}]}}


def test_recommender_on_informers_follows_pods_and_skips_unchanged_vpas():
    clock = VirtualClock()

    async def main():
        client = await cluster(clock)
        await client.create("apps/deployments", {
            "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": NS},
            "spec": {"selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web"}},
                                  "spec": {"containers": [{"name": "app", "image": "busybox"}]}}}})
        await client.create(VPAS, {"apiVersion": "autoscaling.k8s.io/v1", "kind": "VerticalPodAutoscaler",
                                   "metadata": {"name": "web", "namespace": NS},
                                   "spec": {"targetRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                                                          "name": "web"}}})
        for name in ("web-1", "web-2"):
            created = await client.create("pods", _pod(name, "web"))
            # running: the recommender leaves Pending pods alone, as upstream's pod lister
            created["status"] = {**(created.get("status") or {}), "phase": "Running"}
            await client.update_status("pods", created)
        informers = InformerFactory(client, clock)
        source = TableSource(clock, [(NS, "web-1", "app"), (NS, "web-2", "app")])
        r = Recommender(client, clock, source, informers=informers)
        r.restored = True
        await r.run_once()
        vpa = await client.get(VPAS, "web", NS)
        conds = {c["type"]: c["status"] for c in vpa["status"]["conditions"]}
        assert conds["RecommendationProvided"] == "True"
        assert r.store.find(NS, "web", "app").pod_names() == ["web-1", "web-2"]
        # nothing changed: no VPA is looked at, nothing is written
        await r.run_once()
        assert r._touched == set()
        assert (await client.get(VPAS, "web", NS))["metadata"]["resourceVersion"] == vpa["metadata"]["resourceVersion"]
        # the pods leave the workload: the next loop has no pods for the VPA
        for name in ("web-1", "web-2"):
            pod = await client.get("pods", name, NS)
            pod["metadata"]["labels"] = {"app": "other"}
            await client.update("pods", pod)
        await r.run_once()
        conds = {c["type"]: c for c in (await client.get(VPAS, "web", NS))["status"]["conditions"]}
        assert conds["NoPodsMatched"]["status"] == "True"
        assert r.store.find(NS, "web", "app").pod_names() == []      # the history stays, the pods go
        # the VPA is deleted: its aggregates go
        await client.delete(VPAS, "web", namespace=NS)
        await r.run_once()
        assert len(r.store) == 0
        informers.stop()

    clock.run(main())
