"""RecommendationQuery answers (kvert.vpa.query): which VPA, which containers, which numbers,
and why there is none -- on an in-process registry with a recommender whose aggregates are
filled directly."""

from __future__ import annotations

import asyncio
from typing import Any

import numpy as np
import pytest

from kvert.api.errors import Invalid
from kvert.clock import VirtualClock
from kvert.vpa.query import API_VERSION, KIND, answer_query, recommend_for_pod, validation_causes
from kvert.vpa.recommendation import recommend
from kvert.vpa.recommender import VPAS, Recommender

from tests.kubelet.test_agent_support import cluster

NS = "default"
T0 = 1_700_000_000.0


class NoMetrics:
    async def pod_metrics(self) -> list[dict]:
        return []


def deployment(name: str = "hamster", app: str = "hamster") -> dict:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": NS},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": app}},
                     "template": {"metadata": {"labels": {"app": app}},
                                  "spec": {"containers": [{"name": "hamster", "image": "busybox"}]}}}}


def vpa(name: str = "hamster-vpa", target: str = "hamster", mode: str = "Auto", *,
        max_cpu: str | None = None, recommenders: list[str] | None = None) -> dict:
    spec: dict[str, Any] = {"targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": target},
                            "updatePolicy": {"updateMode": mode}}
    if max_cpu:
        spec["resourcePolicy"] = {"containerPolicies": [{"containerName": "*", "maxAllowed": {"cpu": max_cpu}}]}
    if recommenders:
        spec["recommenders"] = [{"name": r} for r in recommenders]
    return {"apiVersion": "autoscaling.k8s.io/v1", "kind": "VerticalPodAutoscaler",
            "metadata": {"name": name, "namespace": NS}, "spec": spec}


def query(labels: dict | None = None, containers: tuple[str, ...] = ("hamster",), **pod_meta: Any) -> dict:
    meta = {"labels": labels if labels is not None else {"app": "hamster"}, **pod_meta}
    return {"apiVersion": API_VERSION, "kind": KIND, "metadata": {"name": "q"},
            "spec": {"pod": {"metadata": meta,
                             "spec": {"containers": [{"name": c, "image": "busybox"} for c in containers]}}}}


def fill(recommender: Recommender, vpa_name: str, container: str, cpu: float, memory: float, n: int = 60) -> None:
    times = T0 + 60.0 * np.arange(n)
    recommender.store.add_samples(NS, vpa_name, container, "hamster-1", times,
                                  cpu=np.full(n, cpu), memory=np.full(n, memory))


def run(scenario):
    clock = VirtualClock()

    async def main():
        client = await cluster(clock)
        recommender = Recommender(client, clock, NoMetrics(), interval=60.0)
        return await scenario(client, recommender)

    return clock.run(main())


def containers_of(answer: dict) -> dict[str, dict]:
    return {c["containerName"]: c for c in answer["status"]["recommendation"]["containerRecommendations"]}


def test_matched_pod_gets_the_vpa_target_capped_by_policy_for_its_containers_only():
    async def scenario(client, recommender):
        await client.create("apps/deployments", deployment())
        v = await client.create(VPAS, vpa(max_cpu="300m"))
        fill(recommender, "hamster-vpa", "hamster", cpu=0.5, memory=200 * 2**20)
        fill(recommender, "hamster-vpa", "sidecar", cpu=0.05, memory=30 * 2**20)
        answer = await answer_query(query(containers=("hamster", "new-one")), recommender)
        full = recommend(recommender.store.for_vpa(NS, "hamster-vpa"), v, recommender.config)
        return answer, full

    answer, full = run(scenario)
    assert answer["apiVersion"] == API_VERSION and answer["kind"] == KIND
    assert answer["metadata"] == {"name": "q", "namespace": NS}
    assert answer["spec"] == query(containers=("hamster", "new-one"))["spec"]       # echoed
    assert "error" not in answer["status"]
    got = containers_of(answer)
    assert list(got) == ["hamster"]             # not the VPA's sidecar, nothing for a container without history
    hamster = got["hamster"]
    assert hamster["target"]["cpu"] == "300m"   # capped to maxAllowed
    assert hamster["uncappedTarget"]["cpu"] != "300m"
    assert int(hamster["uncappedTarget"]["cpu"].rstrip("m")) > 500      # 0.5 core + 15 % margin
    # exactly the entry the VPA's status.recommendation holds
    assert hamster == next(c for c in full["containerRecommendations"] if c["containerName"] == "hamster")
    assert set(hamster) == {"containerName", "target", "lowerBound", "upperBound", "uncappedTarget"}


def test_answer_reflects_history_up_to_now():
    async def scenario(client, recommender):
        await client.create("apps/deployments", deployment())
        await client.create(VPAS, vpa())
        fill(recommender, "hamster-vpa", "hamster", cpu=0.2, memory=100 * 2**20)
        before = await answer_query(query(), recommender)
        times = T0 + 3600 + 60.0 * np.arange(600)
        recommender.store.add_samples(NS, "hamster-vpa", "hamster", "hamster-2", times,
                                      cpu=np.full(600, 2.0))
        after = await answer_query(query(), recommender)
        return before, after

    before, after = run(scenario)
    cpu = [containers_of(a)["hamster"]["target"]["cpu"] for a in (before, after)]
    assert cpu[0] != cpu[1]
    from kvert.api.quantity import Quantity
    assert Quantity.parse(cpu[1]) > Quantity.parse(cpu[0])


def test_pod_owned_by_the_target_through_its_replicaset_matches():
    async def scenario(client, recommender):
        d = await client.create("apps/deployments", deployment())
        rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet",
              "metadata": {"name": "hamster-abc", "namespace": NS, "labels": {"app": "hamster"},
                           "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "hamster",
                                                "uid": d["metadata"]["uid"], "controller": True}]},
              "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "hamster"}},
                       "template": {"metadata": {"labels": {"app": "hamster"}},
                                    "spec": {"containers": [{"name": "hamster", "image": "busybox"}]}}}}
        rs = await client.create("apps/replicasets", rs)
        await client.create(VPAS, vpa())
        fill(recommender, "hamster-vpa", "hamster", cpu=0.5, memory=200 * 2**20)
        owned = query(ownerReferences=[{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "hamster-abc",
                                        "uid": rs["metadata"]["uid"], "controller": True}])
        return await answer_query(owned, recommender)

    answer = run(scenario)
    assert list(containers_of(answer)) == ["hamster"]


def test_no_matching_vpa_is_an_error():
    async def scenario(client, recommender):
        await client.create("apps/deployments", deployment())
        await client.create(VPAS, vpa())
        fill(recommender, "hamster-vpa", "hamster", cpu=0.5, memory=200 * 2**20)
        other_labels = await answer_query(query(labels={"app": "other"}), recommender)
        other_namespace = await answer_query(query(), recommender, namespace="kube-system")
        return other_labels, other_namespace

    for answer in run(scenario):
        assert "recommendation" not in answer["status"]
        assert "no VerticalPodAutoscaler matches the pod" in answer["status"]["error"]
    assert run(scenario)[1]["metadata"]["namespace"] == "kube-system"


def test_off_mode_is_an_error():
    async def scenario(client, recommender):
        await client.create("apps/deployments", deployment())
        await client.create(VPAS, vpa(mode="Off"))
        fill(recommender, "hamster-vpa", "hamster", cpu=0.5, memory=200 * 2**20)
        return await answer_query(query(), recommender)

    status = run(scenario)["status"]
    assert list(status) == ["error"]
    assert "default/hamster-vpa" in status["error"] and "updateMode Off" in status["error"]


def test_no_history_is_an_error():
    async def scenario(client, recommender):
        await client.create("apps/deployments", deployment())
        await client.create(VPAS, vpa())
        return await answer_query(query(), recommender)

    status = run(scenario)["status"]
    assert list(status) == ["error"]
    assert status["error"].startswith("no recommendation yet")
    assert "hamster-vpa" in status["error"] and "hamster" in status["error"]


def test_vpa_of_another_recommender_is_an_error():
    async def scenario(client, recommender):
        await client.create("apps/deployments", deployment())
        await client.create(VPAS, vpa(recommenders=["custom"]))
        fill(recommender, "hamster-vpa", "hamster", cpu=0.5, memory=200 * 2**20)
        return await answer_query(query(), recommender)

    assert "served by recommender custom" in run(scenario)["status"]["error"]


def test_several_vpas_oldest_non_off_wins():
    recommender = Recommender(None, None, NoMetrics())
    fill(recommender, "old", "hamster", cpu=0.5, memory=200 * 2**20)
    fill(recommender, "young", "hamster", cpu=0.05, memory=200 * 2**20)
    pod = query()["spec"]["pod"]

    def with_time(obj: dict, ts: str) -> dict:
        obj["metadata"]["creationTimestamp"] = ts
        return obj

    old = with_time(vpa("old"), "2024-01-01T00:00:00Z")
    young = with_time(vpa("young"), "2024-06-01T00:00:00Z")
    older_off = with_time(vpa("older-off", mode="Off"), "2023-01-01T00:00:00Z")
    chosen = recommend_for_pod(pod, [young, older_off, old], recommender.store)
    expected = recommend(recommender.store.for_vpa(NS, "old"), old)
    assert chosen == {"recommendation": expected}
    # the answer through answer_query with the matching VPAs given
    answer = asyncio.run(answer_query(query(), recommender, vpas=[young, old]))
    assert answer["status"] == {"recommendation": expected}


@pytest.mark.parametrize("body, fields", [
    ({"apiVersion": API_VERSION, "kind": KIND, "metadata": {"name": "q"}}, ["spec.pod"]),
    ({"apiVersion": API_VERSION, "kind": KIND, "spec": {}}, ["spec.pod"]),
    ({"apiVersion": API_VERSION, "kind": KIND, "spec": {"pod": {"spec": {"containers": []}}}},
     ["spec.pod.spec.containers"]),
    ({"apiVersion": API_VERSION, "kind": KIND, "spec": {"pod": {"metadata": {}}}}, ["spec.pod.spec.containers"]),
    ({"apiVersion": API_VERSION, "kind": "TokenReview", "spec": {"pod": {"spec": {"containers": [{"name": "a"}]}}}},
     ["kind"]),
    ({"apiVersion": "v1", "kind": KIND, "spec": {"pod": {"kind": "Service", "spec": {"containers": [{"name": "a"}]}}}},
     ["apiVersion", "spec.pod.kind"]),
    ({"spec": {"pod": {"spec": {"containers": [{"name": "a"}, {"image": "x"}, {"name": "a"}]}}}},
     ["spec.pod.spec.containers[1].name", "spec.pod.spec.containers[2].name"]),
    ({"spec": {"pod": {"metadata": {"namespace": "other", "labels": {"a": 1}},
                       "spec": {"containers": [{"name": "a"}]}}}},
     ["spec.pod.metadata.labels", "spec.pod.metadata.namespace"]),
])
def test_validation_errors_name_the_fields(body, fields):
    assert [c.field for c in validation_causes(body, NS)] == fields
    recommender = Recommender(None, None, NoMetrics())
    with pytest.raises(Invalid) as err:
        asyncio.run(answer_query(body, recommender, vpas=[], namespace=NS))
    assert err.value.code == 422 and err.value.reason == "Invalid"
    assert [c.field for c in err.value.causes] == fields
    assert err.value.details["kind"] == KIND and err.value.details["group"] == "autoscaling.kvert.io"


def test_a_valid_query_has_no_causes():
    assert validation_causes(query(), NS) == []
    assert validation_causes({"spec": {"pod": {"spec": {"containers": [{"name": "a"}]}}}}) == []
