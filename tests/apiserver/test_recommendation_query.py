"""RecommendationQuery over HTTP: kvert's API server (in-process, plain HTTP) with a query
service over a recommender whose aggregates are filled directly, and the standalone
QueryServer of ``kvert vpa recommender --listen``."""

from __future__ import annotations

import asyncio

import numpy as np

from kvert.apiserver.admission import default_chain
from kvert.auth.tokens import ADMIN, TokenAuthenticator
from kvert.apiserver.recommendation_query import RECOMMENDATION_QUERY, QueryServer
from kvert.apiserver.server import ApiServer
from kvert.client import InProcessClient
from kvert.clock import WallClock
from kvert.store import open_store
from kvert.vpa.query import QueryService
from kvert.vpa.recommender import VPAS, Recommender

from tests.apiserver.test_metrics_api import AGGREGATED, Api

NS = "default"
COLLECTION = f"/apis/autoscaling.kvert.io/v1/namespaces/{NS}/recommendationqueries"


class NoMetrics:
    async def pod_metrics(self) -> list[dict]:
        return []


DEPLOYMENT = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "hamster", "namespace": NS},
              "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "hamster"}},
                       "template": {"metadata": {"labels": {"app": "hamster"}},
                                    "spec": {"containers": [{"name": "hamster", "image": "busybox"}]}}}}
VPA = {"apiVersion": "autoscaling.k8s.io/v1", "kind": "VerticalPodAutoscaler",
       "metadata": {"name": "hamster-vpa", "namespace": NS},
       "spec": {"targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "hamster"},
                "updatePolicy": {"updateMode": "InPlaceOrRecreate"},
                "resourcePolicy": {"containerPolicies": [{"containerName": "*", "maxAllowed": {"cpu": "1"}}]}}}


def query(labels: dict | None = None, **extra) -> dict:
    body = {"apiVersion": "autoscaling.kvert.io/v1", "kind": "RecommendationQuery", "metadata": {"name": "q"},
            "spec": {"pod": {"metadata": {"labels": labels or {"app": "hamster"}},
                             "spec": {"containers": [{"name": "hamster", "image": "busybox"}]}}}}
    body.update(extra)
    return body


async def _prepare(server: ApiServer) -> Recommender:
    client = InProcessClient(server.registry)
    await client.create("apps/deployments", DEPLOYMENT)
    await client.create(VPAS, VPA)
    recommender = Recommender(client, server.clock, NoMetrics())
    n = 120
    times = 1_700_000_000.0 + 60.0 * np.arange(n)
    recommender.store.add_samples(NS, "hamster-vpa", "hamster", "hamster-1", times, cpu=np.full(n, 2.0),
                                  memory=np.full(n, 300.0 * 2**20), cpu_request=np.full(n, 0.1))
    return recommender


def run(tmp_path, scenario, with_service: bool = True):
    async def main():
        clock = WallClock()
        store = open_store("memory", clock=clock)
        tokens = TokenAuthenticator.load_or_create(tmp_path / "tokens.csv")
        server = ApiServer(store, clock, authenticator=tokens, seed=1, admission=default_chain(store, clock))
        await server.bootstrap()
        recommender = await _prepare(server)
        if with_service:
            server.recommendation_query = QueryService(recommender)
        url = await server.start("127.0.0.1", 0)
        api = Api(url, tokens.token_for(ADMIN))
        try:
            return await scenario(api, server)
        finally:
            await api.close()
            await server.stop()
            store.close()

    return asyncio.run(main())


def test_post_answers_201_with_the_status(tmp_path):
    async def scenario(api, server):
        return (await api.call("POST", COLLECTION, body=query()),
                await api.call("POST", COLLECTION + "?dryRun=All&fieldValidation=Strict", body=query()),
                await api.call("POST", COLLECTION, body=query(labels={"app": "nothing"})),
                server.recommendation_query.answered)

    (status, body, _), (dry_status, dry_body, _), (miss_status, miss, _), answered = run(tmp_path, scenario)
    assert status == 201
    assert body["kind"] == "RecommendationQuery" and body["metadata"] == {"name": "q", "namespace": NS}
    assert body["spec"] == query()["spec"]
    [rec] = body["status"]["recommendation"]["containerRecommendations"]
    assert rec["containerName"] == "hamster"
    assert rec["target"]["cpu"] == "1"                      # 2 cores of use, capped to maxAllowed 1
    assert rec["uncappedTarget"]["cpu"] != "1"
    assert set(rec) == {"containerName", "target", "lowerBound", "upperBound", "uncappedTarget"}
    assert dry_status == 201 and dry_body["status"] == body["status"]
    assert miss_status == 201 and "no VerticalPodAutoscaler matches" in miss["status"]["error"]
    assert answered == 3


def test_nothing_is_stored_and_other_verbs_are_405(tmp_path):
    named = COLLECTION + "/q"
    async def scenario(api, server):
        await api.call("POST", COLLECTION, body=query())
        return {
            "list": await api.call("GET", COLLECTION),
            "list_all": await api.call("GET", "/apis/autoscaling.kvert.io/v1/recommendationqueries"),
            "watch": await api.call("GET", COLLECTION + "?watch=true"),
            "get": await api.call("GET", named),
            "put": await api.call("PUT", named, body=query()),
            "patch": await api.call("PATCH", named, body={}),
            "delete": await api.call("DELETE", named),
            "post_named": await api.call("POST", named, body=query()),
            "delete_collection": await api.call("DELETE", COLLECTION),
            "noauth": await api.call("POST", COLLECTION, body=query(), auth=False),
            "other_version": await api.call("POST", "/apis/autoscaling.kvert.io/v2/namespaces/default/"
                                                    "recommendationqueries", body=query()),
            "other_resource": await api.call("GET", "/apis/autoscaling.kvert.io/v1/namespaces/default/things"),
        }

    out = run(tmp_path, scenario)
    for verb in ("list", "watch", "get", "put", "patch", "delete", "post_named", "delete_collection"):
        status, body, _ = out[verb]
        assert status == 405, verb
        assert body["kind"] == "Status" and body["reason"] == "MethodNotAllowed", verb
    assert out["noauth"][0] == 401
    assert out["list_all"][0] == 404            # namespaced: no path without a namespace
    assert out["other_version"][0] == 404 and out["other_resource"][0] == 404


def test_bad_queries_are_422_or_400(tmp_path):
    async def scenario(api, server):
        no_pod = {"apiVersion": "autoscaling.kvert.io/v1", "kind": "RecommendationQuery",
                  "metadata": {"name": "bad"}, "spec": {}}
        no_containers = query()
        no_containers["spec"]["pod"]["spec"]["containers"] = []
        unknown = query()
        unknown["spec"]["pod"]["spec"]["containers"][0]["colour"] = "red"
        unknown["spec"]["extra"] = 1
        other_ns = query()
        other_ns["metadata"]["namespace"] = "kube-system"
        return {
            "no_pod": await api.call("POST", COLLECTION, body=no_pod),
            "no_containers": await api.call("POST", COLLECTION, body=no_containers),
            "strict": await api.call("POST", COLLECTION + "?fieldValidation=Strict", body=unknown),
            "warn": await api.call("POST", COLLECTION, body=unknown),
            "other_kind": await api.call("POST", COLLECTION, body=query(kind="TokenReview")),
            "other_ns": await api.call("POST", COLLECTION, body=other_ns),
            "not_json": await api.call("POST", COLLECTION, headers={"Content-Type": "application/json"},
                                       body="[1, 2]"),
        }

    out = run(tmp_path, scenario)
    status, body, _ = out["no_pod"]
    assert status == 422 and body["reason"] == "Invalid"
    assert body["details"]["kind"] == "RecommendationQuery" and body["details"]["group"] == "autoscaling.kvert.io"
    assert [c["field"] for c in body["details"]["causes"]] == ["spec.pod"]
    assert body["message"].startswith('RecommendationQuery.autoscaling.kvert.io "bad" is invalid: spec.pod: Required')
    status, body, _ = out["no_containers"]
    assert status == 422 and [c["field"] for c in body["details"]["causes"]] == ["spec.pod.spec.containers"]
    status, body, _ = out["strict"]
    assert status == 400
    assert 'unknown field "spec.extra"' in body["message"]
    assert 'unknown field "spec.pod.spec.containers[0].colour"' in body["message"]
    status, body, headers = out["warn"]
    assert status == 201 and "recommendation" in body["status"]
    assert any("spec.pod.spec.containers[0].colour" in w for w in headers.getall("Warning", []))
    assert out["other_kind"][0] == 400 and out["other_ns"][0] == 400
    assert out["not_json"][0] == 400


def test_discovery_lists_the_type_only_with_a_service(tmp_path):
    async def scenario(api, server):
        return {
            "resources": await api.call("GET", "/apis/autoscaling.kvert.io/v1"),
            "group": await api.call("GET", "/apis/autoscaling.kvert.io"),
            "groups": await api.call("GET", "/apis"),
            "aggregated": await api.call("GET", "/apis", headers={"Accept": AGGREGATED}),
            "post": await api.call("POST", COLLECTION, body=query()),
        }

    out = run(tmp_path, scenario)
    status, resources, _ = out["resources"]
    assert status == 200 and resources["groupVersion"] == "autoscaling.kvert.io/v1"
    assert resources["resources"] == [{"name": "recommendationqueries", "singularName": "recommendationquery",
                                       "namespaced": True, "kind": "RecommendationQuery", "verbs": ["create"]}]
    assert out["group"][1]["preferredVersion"]["groupVersion"] == "autoscaling.kvert.io/v1"
    assert "autoscaling.kvert.io" in [g["name"] for g in out["groups"][1]["groups"]]
    items = {i["metadata"]["name"]: i for i in out["aggregated"][1]["items"]}
    [entry] = items["autoscaling.kvert.io"]["versions"][0]["resources"]
    assert (entry["resource"], entry["scope"], entry["responseKind"]["kind"], entry["verbs"]) == (
        "recommendationqueries", "Namespaced", "RecommendationQuery", ["create"])
    assert not RECOMMENDATION_QUERY.stored

    without = run(tmp_path, scenario, with_service=False)
    assert without["resources"][0] == 404 and without["group"][0] == 404
    assert "autoscaling.kvert.io" not in [g["name"] for g in without["groups"][1]["groups"]]
    assert without["post"][0] == 404


def test_standalone_query_server(tmp_path):
    async def main():
        clock = WallClock()
        store = open_store("memory", clock=clock)
        server = ApiServer(store, clock, authenticator=None, seed=1, admission=default_chain(store, clock))
        await server.bootstrap()
        recommender = await _prepare(server)
        qs = QueryServer(QueryService(recommender), host="127.0.0.1", port=0)
        url = await qs.start()
        api = Api(url, "unused")
        try:
            return (url, await api.call("POST", COLLECTION, body=query()), await api.call("GET", COLLECTION),
                    await api.call("GET", "/apis/autoscaling.kvert.io/v1"), await api.call("GET", "/healthz"),
                    await api.call("GET", "/api/v1/pods"))
        finally:
            await api.close()
            await qs.stop()
            store.close()

    url, post, get, discovery, health, other = asyncio.run(main())
    assert url.startswith("http://127.0.0.1:") and not url.endswith(":0")
    assert post[0] == 201 and post[1]["status"]["recommendation"]["containerRecommendations"][0]["target"]["cpu"] == "1"
    assert get[0] == 405 and get[1]["reason"] == "MethodNotAllowed"
    assert discovery[0] == 200 and discovery[1]["resources"][0]["verbs"] == ["create"]
    assert health == (200, "ok", health[2])
    assert other[0] == 404
