"""The API server over real HTTP (plain, in-process): verbs, codes, Status bodies, watches."""

from __future__ import annotations

import asyncio
import json

from aiohttp import ClientSession

from kvert.apiserver.admission import default_chain
from kvert.auth.tokens import ADMIN, TokenAuthenticator
from kvert.apiserver.server import ApiServer
from kvert.clock import WallClock
from kvert.store import open_store


class Api:
    def __init__(self, base: str, token: str):
        self.base = base
        self.headers = {"Authorization": f"Bearer {token}"}
        self.session = ClientSession()

    async def call(self, method: str, path: str, body=None, content_type="application/json",
                   headers=None, raw: bytes | None = None):
        data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
        h = {**self.headers, "Content-Type": content_type, **(headers or {})}
        async with self.session.request(method, self.base + path, data=data, headers=h) as r:
            text = await r.text()
            return r.status, (json.loads(text) if text and r.content_type.startswith("application/json") else text)

    async def close(self):
        await self.session.close()


def run(tmp_path, scenario):
    async def main():
        store = open_store("memory", clock=WallClock())
        tokens = TokenAuthenticator.load_or_create(tmp_path / "tokens.csv")
        server = ApiServer(store, WallClock(), authenticator=tokens, seed=1,
                           admission=default_chain(store, WallClock()))
        await server.bootstrap()
        url = await server.start("127.0.0.1", 0)
        api = Api(url, tokens.token_for(ADMIN))
        try:
            return await scenario(api, server, store)
        finally:
            await api.close()
            await server.stop()
            store.close()

    return asyncio.run(main())


POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "labels": {"app": "web"}},
       "spec": {"containers": [{"name": "app", "image": "nginx",
                                "resources": {"requests": {"cpu": "100m", "memory": "64Mi"},
                                              "limits": {"cpu": "100m", "memory": "64Mi"}}}]}}


def test_crud_codes_and_status_bodies(tmp_path):
    async def scenario(api, server, store):
        out = {}
        out["create"] = await api.call("POST", "/api/v1/namespaces/default/pods", POD)
        out["again"] = await api.call("POST", "/api/v1/namespaces/default/pods", POD)
        out["get"] = await api.call("GET", "/api/v1/namespaces/default/pods/web")
        out["missing"] = await api.call("GET", "/api/v1/namespaces/default/pods/nope")
        bad = json.loads(json.dumps(POD))
        bad["metadata"]["name"] = "Bad_Name"
        out["invalid"] = await api.call("POST", "/api/v1/namespaces/default/pods", bad)
        out["list"] = await api.call("GET", "/api/v1/namespaces/default/pods?labelSelector=app%3Dweb")
        out["badsel"] = await api.call("GET", "/api/v1/pods?labelSelector=%3D%3D%3D")
        out["nsmissing"] = await api.call("POST", "/api/v1/namespaces/nowhere/pods", POD)
        out["method"] = await api.call("PUT", "/api/v1/namespaces/default/pods")
        out["unknown"] = await api.call("GET", "/apis/nope.example.com/v1/things")
        out["delete"] = await api.call("DELETE", "/api/v1/namespaces/default/pods/web")
        return out

    out = run(tmp_path, scenario)
    assert out["create"][0] == 201 and out["create"][1]["metadata"]["uid"]
    code, status = out["again"]
    assert code == 409 and status["reason"] == "AlreadyExists" and status["kind"] == "Status"
    assert out["get"][0] == 200 and out["get"][1]["status"]["qosClass"] == "Guaranteed"
    assert out["missing"][0] == 404 and out["missing"][1]["reason"] == "NotFound"
    code, status = out["invalid"]
    assert code == 422 and status["reason"] == "Invalid"
    assert any(c["field"] == "metadata.name" for c in status["details"]["causes"])
    assert out["list"][1]["kind"] == "PodList" and len(out["list"][1]["items"]) == 1
    assert out["badsel"][0] == 400 and out["badsel"][1]["kind"] == "Status"
    assert out["nsmissing"][0] == 404
    assert out["method"][0] == 405 and out["method"][1]["reason"] == "MethodNotAllowed"
    assert out["unknown"][0] == 404
    assert out["delete"][0] == 200


def test_unauthenticated_requests_get_401_but_health_is_public(tmp_path):
    async def scenario(api, server, store):
        api.headers = {"Authorization": "Bearer wrong"}
        pods = await api.call("GET", "/api/v1/pods")
        api.headers = {}
        health = await api.call("GET", "/healthz")
        version = await api.call("GET", "/version")
        return pods, health, version

    pods, health, version = run(tmp_path, scenario)
    assert pods[0] == 401 and pods[1]["reason"] == "Unauthorized"
    assert health == (200, "ok")
    assert version[0] == 200 and version[1]["major"] == "1"


def test_a_wrong_token_is_401_on_the_public_paths_too(tmp_path):
    # TestAuthenticateRequestTokenInvalid (apiserver/pkg/authentication/request/bearertoken):
    # an unknown bearer token is an error, and union.NewFailOnError ends the chain there, so
    # the anonymous authenticator that lets /version and /healthz through is never asked.
    async def scenario(api, server, store):
        api.headers = {"Authorization": "Bearer wrong"}
        return [await api.call("GET", path) for path in ("/version", "/healthz")]

    for code, status in run(tmp_path, scenario):
        assert code == 401 and status["reason"] == "Unauthorized"


def test_malformed_bodies_get_a_status_and_change_nothing(tmp_path):
    async def scenario(api, server, store):
        before = store.current_revision()
        answers = [
            await api.call("POST", "/api/v1/namespaces/default/pods", raw=b"{not json"),
            await api.call("POST", "/api/v1/namespaces/default/pods", raw=b"[1,2]"),
            await api.call("POST", "/api/v1/namespaces/default/pods", raw=b"\xff\xfe"),
            await api.call("POST", "/api/v1/namespaces/default/pods", raw=b"[" * 100000 + b"]" * 100000),
            await api.call("POST", "/api/v1/namespaces/default/pods", raw=b"{}", content_type="text/plain"),
            await api.call("POST", "/api/v1/namespaces/default/pods", raw=b"x" * (4 * 1024 * 1024)),
            await api.call("PATCH", "/api/v1/namespaces/default/pods/web", raw=b"{}",
                           content_type="application/xml"),
            await api.call("POST", "/api/v1/namespaces/default/pods",
                           {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x" * 300}}),
        ]
        return answers, before, store.current_revision()

    answers, before, after = run(tmp_path, scenario)
    codes = [code for code, _ in answers]
    assert codes == [400, 400, 400, 400, 415, 413, 415, 422]
    assert all(isinstance(body, dict) and body["kind"] == "Status" for _, body in answers)
    assert before == after


def test_watch_streams_events_and_reports_expiry_as_410(tmp_path):
    async def scenario(api, server, store):
        _, created = await api.call("POST", "/api/v1/namespaces/default/pods", POD)
        rv = created["metadata"]["resourceVersion"]
        events = []

        async def watch():
            url = f"{api.base}/api/v1/namespaces/default/pods?watch=1&resourceVersion={rv}&timeoutSeconds=5"
            async with api.session.get(url, headers=api.headers) as r:
                async for line in r.content:
                    events.append(json.loads(line))
                    if len(events) == 2:
                        return

        task = asyncio.ensure_future(watch())
        await asyncio.sleep(0.1)
        await api.call("PATCH", "/api/v1/namespaces/default/pods/web", {"metadata": {"labels": {"x": "1"}}},
                       content_type="application/merge-patch+json")
        await api.call("DELETE", "/api/v1/namespaces/default/pods/web")
        await asyncio.wait_for(task, 5)
        store.compact(store.current_revision())
        expired = []
        async with api.session.get(f"{api.base}/api/v1/pods?watch=true&resourceVersion=1",
                                   headers=api.headers) as r:
            status = r.status
            async for line in r.content:
                expired.append(json.loads(line))
        return events, status, expired

    events, status, expired = run(tmp_path, scenario)
    assert [e["type"] for e in events] == ["MODIFIED", "DELETED"]
    assert events[0]["object"]["metadata"]["labels"]["x"] == "1"
    assert status == 200 and len(expired) == 1
    assert expired[0]["type"] == "ERROR" and expired[0]["object"]["code"] == 410
    assert expired[0]["object"]["reason"] == "Expired"


def test_send_initial_events_ends_with_the_initial_events_bookmark(tmp_path):
    async def scenario(api, server, store):
        await api.call("POST", "/api/v1/namespaces/default/pods", POD)
        events = []
        url = (f"{api.base}/api/v1/namespaces/default/pods?watch=1&sendInitialEvents=true"
               "&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=2")
        async with api.session.get(url, headers=api.headers) as r:
            async for line in r.content:
                events.append(json.loads(line))
                if events[-1]["type"] == "BOOKMARK":
                    break
        return events

    events = run(tmp_path, scenario)
    assert [e["type"] for e in events] == ["ADDED", "BOOKMARK"]
    annotations = events[1]["object"]["metadata"]["annotations"]
    assert annotations == {"k8s.io/initial-events-end": "true"}


def test_subresources_binding_eviction_resize_scale(tmp_path):
    async def scenario(api, server, store):
        await api.call("POST", "/api/v1/namespaces/default/pods", POD)
        # 1.36's PodResizeValidator refuses a resize on a node that does not exist
        await api.call("POST", "/api/v1/nodes", {"apiVersion": "v1", "kind": "Node", "metadata": {
            "name": "n1"}, "status": {"allocatable": {"cpu": "4", "memory": "8Gi"}}})
        bind = await api.call("POST", "/api/v1/namespaces/default/pods/web/binding",
                              {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "web"},
                               "target": {"apiVersion": "v1", "kind": "Node", "name": "n1"}})
        rebind = await api.call("POST", "/api/v1/namespaces/default/pods/web/binding",
                                {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "web"},
                                 "target": {"apiVersion": "v1", "kind": "Node", "name": "n2"}})
        resize = await api.call("PATCH", "/api/v1/namespaces/default/pods/web/resize",
                                {"spec": {"containers": [{"name": "app", "resources": {
                                    "requests": {"cpu": "650m", "memory": "64Mi"},
                                    "limits": {"cpu": "650m", "memory": "64Mi"}}}]}},
                                content_type="application/merge-patch+json")
        deploy = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
                  "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "d"}},
                           "template": {"metadata": {"labels": {"app": "d"}},
                                        "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}
        await api.call("POST", "/apis/apps/v1/namespaces/default/deployments", deploy)
        scale = await api.call("GET", "/apis/apps/v1/namespaces/default/deployments/d/scale")
        scaled = await api.call("PATCH", "/apis/apps/v1/namespaces/default/deployments/d/scale",
                                {"spec": {"replicas": 5}}, content_type="application/merge-patch+json")
        evict = await api.call("POST", "/api/v1/namespaces/default/pods/web/eviction",
                               {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "web"}})
        return bind, rebind, resize, scale, scaled, evict

    bind, rebind, resize, scale, scaled, evict = run(tmp_path, scenario)
    assert bind[0] == 201 and bind[1]["status"] == "Success"
    assert rebind[0] == 409
    assert resize[0] == 200
    assert resize[1]["spec"]["containers"][0]["resources"]["requests"]["cpu"] == "650m"
    assert scale[1]["kind"] == "Scale" and scale[1]["spec"]["replicas"] == 2
    assert scale[1]["status"]["selector"] == "app=d"
    assert scaled[1]["spec"]["replicas"] == 5
    # upstream: EvictionREST.Create is a create, answered 201 with the Status' code 201
    assert evict[0] == 201 and evict[1]["status"] == "Success" and evict[1]["code"] == 201


def test_yaml_bodies_must_be_json_shaped(tmp_path):
    async def scenario(api, server, store):
        before = store.current_revision()
        answers = [await api.call("POST", "/api/v1/namespaces/default/pods", raw=body,
                                  content_type="application/yaml")
                   for body in (b"?", b"{1: 2}", b"kind: Pod\nwhen: 2026-01-01\n")]
        return answers, before, store.current_revision()

    answers, before, after = run(tmp_path, scenario)
    assert [code for code, _ in answers] == [400, 400, 400]
    assert all(body["kind"] == "Status" for _, body in answers)
    assert before == after


CM = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}


def test_delete_options_from_the_query_or_the_body(tmp_path):
    # handlers/delete.go: the body's DeleteOptions, else the query's; 422 for a bad policy;
    # 200 with the object even when it stays for its finalizer, 202 only for orphanDependents=false
    async def scenario(api, server, store):
        base = "/api/v1/namespaces/default/configmaps"
        out = {}
        for name in ("q", "b", "bad", "legacy"):
            await api.call("POST", base, {**CM, "metadata": {"name": name}})
        before = store.current_revision()
        out["bad"] = await api.call("DELETE", f"{base}/bad?propagationPolicy=Bogus")
        out["unchanged"] = store.current_revision() == before
        out["both"] = await api.call("DELETE", f"{base}/bad", {"propagationPolicy": "Orphan",
                                                               "orphanDependents": True})
        out["query"] = await api.call("DELETE", f"{base}/q?propagationPolicy=Foreground")
        out["body"] = await api.call("DELETE", f"{base}/b?propagationPolicy=Foreground",
                                     {"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Orphan"})
        out["legacy"] = await api.call("DELETE", f"{base}/legacy", {"orphanDependents": False,
                                                                    "propagationPolicy": None})
        return out

    out = run(tmp_path, scenario)
    code, status = out["bad"]
    assert code == 422 and status["reason"] == "Invalid" and out["unchanged"]
    assert status["message"] == ('DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: '
                                 '"Bogus": supported values: "Foreground", "Background", "Orphan", "nil"')
    # metav1.StatusDetails' fields are all omitempty: the empty name is left out
    assert status["details"] == {"group": "meta.k8s.io", "kind": "DeleteOptions",
                                 "causes": [{"reason": "FieldValueNotSupported", "field": "propagationPolicy",
                                             "message": status["message"].split("propagationPolicy: ")[1]}]}
    assert out["both"][0] == 422
    assert out["query"][0] == 200 and out["query"][1]["metadata"]["finalizers"] == ["foregroundDeletion"]
    assert out["body"][0] == 200 and out["body"][1]["metadata"]["finalizers"] == ["orphan"]
    # orphanDependents=false on an object that has nothing to wait for: gone at once, 200
    assert out["legacy"][0] == 200


def test_token_request_answers_201_and_says_when_it_shortened_the_token(tmp_path):
    # TokenREST.Create: 201 Created; a lifetime above --service-account-max-token-expiration
    # is shortened with a warning
    from kvert.auth.serviceaccount import ServiceAccountTokens
    from kvert.registry.tokenrequest import TokenRequests

    async def main():
        store = open_store("memory", clock=WallClock())
        tokens = TokenAuthenticator.load_or_create(tmp_path / "tokens.csv")
        signer = ServiceAccountTokens.load_or_create(tmp_path / "sa.key")
        server = ApiServer(store, WallClock(), authenticator=tokens,
                           token_requests=TokenRequests(signer, max_expiration_seconds=3600))
        await server.bootstrap()
        api = Api(await server.start("127.0.0.1", 0), tokens.token_for(ADMIN))
        try:
            await api.call("POST", "/api/v1/namespaces/default/serviceaccounts",
                           {"metadata": {"name": "robot"}})
            path = "/api/v1/namespaces/default/serviceaccounts/robot/token"
            h = {**api.headers, "Content-Type": "application/json"}
            body = json.dumps({"spec": {"expirationSeconds": 7200}}).encode()
            async with api.session.post(api.base + path, data=body, headers=h) as r:
                assert r.status == 201
                assert r.headers.getall("Warning") == [
                    '299 - "requested expiration of 7200 seconds shortened to 3600 seconds"']
                answer = await r.json()
            assert answer["kind"] == "TokenRequest" and answer["spec"]["expirationSeconds"] == 3600
            status, err = await api.call("GET", path)
            assert status == 405 and err["reason"] == "MethodNotAllowed"
        finally:
            await api.close()
            await server.stop()
            store.close()

    asyncio.run(main())


def test_status_bodies_byte_for_byte_as_kube_apiserver_writes_them():
    """The exact bodies of kubernetes/e2e_test/test_utils.py (kubernetes-client/python:
    test_create_from_multi_resource_yaml_with_multi_conflicts, ..._with_conflict): details in
    metav1.StatusDetails' field order (name, group, kind), the core group left out; and the
    generic 404 of a path no route serves, whose details are present but empty."""
    from kvert.api.errors import AlreadyExists, RouteNotFound
    from kvert.apiserver.rest import encode_json
    assert encode_json(AlreadyExists("apps/deployments", "triple-nginx").to_status()) == (
        b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",'
        b'"message":"deployments.apps \\"triple-nginx\\" already exists","reason":"AlreadyExists",'
        b'"details":{"name":"triple-nginx","group":"apps","kind":"deployments"},"code":409}\n')
    assert encode_json(AlreadyExists("services", "mock-2").to_status()) == (
        b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",'
        b'"message":"services \\"mock-2\\" already exists","reason":"AlreadyExists",'
        b'"details":{"name":"mock-2","kind":"services"},"code":409}\n')
    assert encode_json(RouteNotFound().to_status()) == (
        b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",'
        b'"message":"the server could not find the requested resource","reason":"NotFound",'
        b'"details":{},"code":404}\n')
