"""Admission webhooks against a real HTTPS server on 127.0.0.1 (certificate from trustme)."""

import asyncio
import base64
import json
import socket
import ssl
import time

import pytest
import trustme
from aiohttp import web

from kvert.api.errors import ApiError, BadRequest, Forbidden, InternalError, NotFound
from kvert.apiserver.admission import bootstrap, default_chain
from kvert.apiserver.admission.webhook import WebhookClient, rule_matches
from kvert.clock import WallClock
from kvert.registry import Attributes, Registry
from kvert.store import open_store

MWC = "admissionregistration.k8s.io/mutatingwebhookconfigurations"
VWC = "admissionregistration.k8s.io/validatingwebhookconfigurations"
POD_RULE = {"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"],
            "resources": ["pods"]}


@pytest.fixture(scope="module")
def ca():
    return trustme.CA()


class Server:
    """An HTTPS webhook server; ``handlers`` maps a path to ``async f(review) -> response``."""

    def __init__(self, ca, handlers):
        self.ca = ca
        self.handlers = handlers
        self.requests = []  # (path, query, review)
        self.runner = None
        self.port = None

    async def __aenter__(self):
        app = web.Application()
        app.router.add_post("/{path:.*}", self._handle)
        self.runner = web.AppRunner(app)
        await self.runner.setup()
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.ca.issue_cert("127.0.0.1", "localhost").configure_cert(ctx)
        site = web.TCPSite(self.runner, "127.0.0.1", 0, ssl_context=ctx)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc):
        await self.runner.cleanup()

    async def _handle(self, request):
        review = await request.json()
        path = "/" + request.match_info["path"]
        self.requests.append((path, dict(request.query), review))
        response = await self.handlers[path](review["request"])
        response.setdefault("uid", review["request"]["uid"])
        return web.json_response({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                                  "response": response})

    def url(self, path):
        return f"https://127.0.0.1:{self.port}{path}"

    def calls(self, path):
        return [r for p, _, r in self.requests if p == path]


def ca_bundle(ca):
    return base64.b64encode(ca.cert_pem.bytes()).decode()


def hook(name, url, bundle, rules=None, **extra):
    return {"name": name, "clientConfig": {"url": url, "caBundle": bundle},
            "rules": rules or [POD_RULE], "sideEffects": "None",
            "admissionReviewVersions": ["v1"], **extra}


def configuration(resource, name, *hooks):
    kind = "MutatingWebhookConfiguration" if resource == MWC else "ValidatingWebhookConfiguration"
    return {"apiVersion": "admissionregistration.k8s.io/v1", "kind": kind,
            "metadata": {"name": name}, "webhooks": list(hooks)}


def new_pod(name="web", labels=None, namespace="default"):
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace, "labels": labels or {"app": "web"}},
            "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]}}


async def make_registry():
    clock = WallClock()
    store = open_store("memory", clock=clock)
    registry = Registry(store, clock, default_chain(store, clock))
    await bootstrap(registry)
    return registry


def patch_response(operations):
    return {"allowed": True, "patchType": "JSONPatch",
            "patch": base64.b64encode(json.dumps(operations).encode()).decode()}


def gone(registry, name="web", namespace="default"):
    try:
        registry.get("pods", name, namespace)
    except NotFound:
        return True
    return False


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# -- mutating ----------------------------------------------------------------------------------

def test_mutating_webhook_adds_a_label(ca):
    async def mutate(request):
        return patch_response([{"op": "add", "path": "/metadata/labels/injected", "value": "yes"}])

    async def main():
        async with Server(ca, {"/mutate": mutate}) as server:
            registry = await make_registry()
            await registry.create(MWC, configuration(MWC, "labeler", hook(
                "labeler.example.com", server.url("/mutate"), ca_bundle(ca))))
            created = await registry.create("pods", new_pod(), user="alice")
            assert created["metadata"]["labels"] == {"app": "web", "injected": "yes"}
            assert registry.get("pods", "web", "default")["metadata"]["labels"]["injected"] == "yes"
            [(path, query, review)] = server.requests
            assert query == {"timeout": "10s"}
            assert review["apiVersion"] == "admission.k8s.io/v1"
            assert review["kind"] == "AdmissionReview"
            request = review["request"]
            assert request["kind"] == {"group": "", "version": "v1", "kind": "Pod"}
            assert request["resource"] == {"group": "", "version": "v1", "resource": "pods"}
            assert request["requestKind"] == request["kind"]
            assert request["operation"] == "CREATE"
            assert (request["name"], request["namespace"]) == ("web", "default")
            assert request["userInfo"]["username"] == "alice"
            assert request["object"]["metadata"]["name"] == "web"
            assert request["oldObject"] is None
            assert request["dryRun"] is False
            assert request["options"] == {"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1"}

    asyncio.run(main())


def test_reinvocation_if_needed(ca):
    async def first(request):
        labels = request["object"]["metadata"]["labels"]
        if "second" in labels:
            return patch_response([{"op": "add", "path": "/metadata/labels/saw-second", "value": "yes"}])
        return {"allowed": True}

    async def second(request):
        return patch_response([{"op": "add", "path": "/metadata/labels/second", "value": "yes"}])

    async def main():
        async with Server(ca, {"/first": first, "/second": second}) as server:
            registry = await make_registry()
            bundle = ca_bundle(ca)
            # configurations run in name order: "a-first" before "b-second"
            await registry.create(MWC, configuration(MWC, "b-second", hook(
                "second.example.com", server.url("/second"), bundle)))
            await registry.create(MWC, configuration(MWC, "a-first", hook(
                "first.example.com", server.url("/first"), bundle, reinvocationPolicy="IfNeeded")))
            created = await registry.create("pods", new_pod())
            assert created["metadata"]["labels"] == {"app": "web", "second": "yes", "saw-second": "yes"}
            assert len(server.calls("/first")) == 2
            assert len(server.calls("/second")) == 1

    asyncio.run(main())


def test_mutating_denial(ca):
    async def deny(request):
        return {"allowed": False}

    async def main():
        async with Server(ca, {"/deny": deny}) as server:
            registry = await make_registry()
            await registry.create(MWC, configuration(MWC, "deny", hook(
                "deny.example.com", server.url("/deny"), ca_bundle(ca))))
            with pytest.raises(BadRequest) as e:
                await registry.create("pods", new_pod())
            assert e.value.code == 400
            assert str(e.value) == 'admission webhook "deny.example.com" denied the request without explanation'
            assert gone(registry)

    asyncio.run(main())


# -- validating --------------------------------------------------------------------------------

def test_validating_webhook_denies(ca):
    async def deny(request):
        return {"allowed": False, "status": {"code": 403, "reason": "Forbidden",
                                             "message": "pods must not run as root"}}

    async def main():
        async with Server(ca, {"/validate": deny}) as server:
            registry = await make_registry()
            await registry.create(VWC, configuration(VWC, "policy", hook(
                "policy.example.com", server.url("/validate"), ca_bundle(ca))))
            with pytest.raises(Forbidden) as e:
                await registry.create("pods", new_pod())
            assert e.value.code == 403
            assert str(e.value) == ('admission webhook "policy.example.com" denied the request: '
                                    "pods must not run as root")
            assert gone(registry)

    asyncio.run(main())


def test_configurations_take_effect_on_the_next_write(ca):
    # the webhooks are kept between writes (listed again only when a configuration
    # changed): adding, changing and deleting a configuration each count from the next write
    async def deny(request):
        return {"allowed": False, "status": {"code": 403, "message": "no"}}

    async def allow(request):
        return {"allowed": True}

    async def main():
        async with Server(ca, {"/deny": deny, "/allow": allow}) as server:
            registry = await make_registry()
            await registry.create("pods", new_pod("before"))
            await registry.create(VWC, configuration(VWC, "policy", hook(
                "policy.example.com", server.url("/deny"), ca_bundle(ca))))
            with pytest.raises(Forbidden):
                await registry.create("pods", new_pod("denied"))
            config = registry.get(VWC, "policy", "")
            config["webhooks"][0]["clientConfig"]["url"] = server.url("/allow")
            await registry.update(VWC, config)
            await registry.create("pods", new_pod("allowed"))
            await registry.delete(VWC, "policy")
            await registry.create("pods", new_pod("after"))
            assert [len(server.calls(p)) for p in ("/deny", "/allow")] == [1, 1]
            assert not gone(registry, "allowed") and not gone(registry, "after")

    asyncio.run(main())


def test_validating_webhook_sees_delete_and_warnings_are_collected(ca):
    async def allow(request):
        return {"allowed": True, "warnings": [f"{request['operation']} noted"]}

    async def main():
        async with Server(ca, {"/validate": allow}) as server:
            registry = await make_registry()
            rule = dict(POD_RULE, operations=["*"])
            await registry.create(VWC, configuration(VWC, "audit", hook(
                "audit.example.com", server.url("/validate"), ca_bundle(ca), rules=[rule])))
            await registry.create("pods", new_pod())
            await registry.delete("pods", "web", namespace="default")
            ops = [r["request"]["operation"] for r in server.calls("/validate")]
            assert ops == ["CREATE", "DELETE"]
            delete = server.calls("/validate")[1]["request"]
            assert delete["object"] is None
            assert delete["oldObject"]["metadata"]["name"] == "web"
            assert delete["options"]["kind"] == "DeleteOptions"
            # warnings end up on the attributes the API server returns as Warning headers
            webhook = next(p for p in registry.admission.plugins
                           if p.name == "ValidatingAdmissionWebhook")
            attrs = Attributes("CREATE", "pods", "default", "w2", new_pod("w2"))
            await webhook.validate(attrs)
            assert attrs.options["warnings"] == ["CREATE noted"]

    asyncio.run(main())


# -- failures ----------------------------------------------------------------------------------

def test_failure_policy_fail_with_the_server_down(ca):
    async def main():
        port = free_port()
        url = f"https://127.0.0.1:{port}/validate"
        registry = await make_registry()
        await registry.create(VWC, configuration(VWC, "down", hook(
            "down.example.com", url, ca_bundle(ca), failurePolicy="Fail")))
        with pytest.raises(InternalError) as e:
            await registry.create("pods", new_pod())
        assert e.value.code == 500
        assert str(e.value) == (
            'Internal error occurred: failed calling webhook "down.example.com": failed to call '
            f'webhook: Post "{url}?timeout=10s": dial tcp 127.0.0.1:{port}: connect: connection refused')
        assert gone(registry)

    asyncio.run(main())


def test_failure_policy_ignore_with_the_server_down(ca):
    async def main():
        url = f"https://127.0.0.1:{free_port()}/mutate"
        registry = await make_registry()
        await registry.create(MWC, configuration(MWC, "down", hook(
            "down.example.com", url, ca_bundle(ca), failurePolicy="Ignore")))
        created = await registry.create("pods", new_pod())
        assert created["metadata"]["labels"] == {"app": "web"}

    asyncio.run(main())


def test_timeout_is_honoured(ca):
    async def slow(request):
        await asyncio.sleep(2)
        return {"allowed": True}

    async def main():
        async with Server(ca, {"/slow": slow}) as server:
            registry = await make_registry()
            await registry.create(VWC, configuration(VWC, "slow", hook(
                "slow.example.com", server.url("/slow"), ca_bundle(ca), timeoutSeconds=1)))
            started = time.monotonic()
            with pytest.raises(InternalError) as e:
                await registry.create("pods", new_pod())
            assert time.monotonic() - started < 1.9
            assert str(e.value).endswith(f'Post "{server.url("/slow")}?timeout=1s": context deadline '
                                         "exceeded")
            assert gone(registry)
            config = registry.get(VWC, "slow")
            config["webhooks"][0]["failurePolicy"] = "Ignore"
            await registry.update(VWC, config)
            await registry.create("pods", new_pod())

    asyncio.run(main())


def test_untrusted_certificate_fails(ca):
    async def allow(request):
        return {"allowed": True}

    async def main():
        async with Server(ca, {"/v": allow}) as server:
            registry = await make_registry()
            other = trustme.CA()
            await registry.create(VWC, configuration(VWC, "tls", hook(
                "tls.example.com", server.url("/v"), ca_bundle(other))))
            with pytest.raises(InternalError, match="tls: failed to verify certificate"):
                await registry.create("pods", new_pod())

    asyncio.run(main())


def test_dry_run_and_side_effects(ca):
    async def allow(request):
        assert request["dryRun"] is True
        return {"allowed": True}

    async def main():
        async with Server(ca, {"/v": allow}) as server:
            registry = await make_registry()
            bundle = ca_bundle(ca)
            await registry.create(VWC, configuration(VWC, "safe", hook(
                "safe.example.com", server.url("/v"), bundle, sideEffects="NoneOnDryRun")))
            await registry.create("pods", new_pod(), dry_run=True)
            # v1 validation refuses sideEffects Some; a configuration stored earlier (v1beta1)
            # may still have it
            registry.store.create(VWC, configuration(VWC, "unsafe", hook(
                "unsafe.example.com", server.url("/v"), bundle, sideEffects="Some")))
            with pytest.raises(BadRequest) as e:
                await registry.create("pods", new_pod(), dry_run=True)
            assert str(e.value) == 'admission webhook "unsafe.example.com" does not support dry run'

    asyncio.run(main())


# -- matching ----------------------------------------------------------------------------------

def test_namespace_and_object_selectors_exclude(ca):
    async def deny(request):
        return {"allowed": False, "status": {"message": "no"}}

    async def main():
        async with Server(ca, {"/deny": deny}) as server:
            registry = await make_registry()
            bundle = ca_bundle(ca)
            await registry.create("namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                                 "metadata": {"name": "guarded",
                                                              "labels": {"policy": "strict"}}})
            await registry.create(VWC, configuration(VWC, "ns", hook(
                "ns.example.com", server.url("/deny"), bundle,
                namespaceSelector={"matchLabels": {"policy": "strict"}},
                objectSelector={"matchExpressions": [{"key": "skip", "operator": "DoesNotExist"}]})))
            await registry.create("pods", new_pod())  # default namespace is not selected
            await registry.create("pods", new_pod("skipped", {"skip": "yes"}, "guarded"))
            with pytest.raises(ApiError) as e:
                await registry.create("pods", new_pod("checked", namespace="guarded"))
            assert e.value.code == 400
            assert len(server.calls("/deny")) == 1

    asyncio.run(main())


def _attrs(operation="CREATE", resource="pods", subresource="", namespace="default"):
    return Attributes(operation, resource, namespace, "x", {}, subresource=subresource)


def test_rule_matching():
    rule = {"operations": ["UPDATE"], "apiGroups": [""], "apiVersions": ["v1"],
            "resources": ["pods/status"]}
    assert rule_matches(rule, _attrs("UPDATE", subresource="status"))
    assert not rule_matches(rule, _attrs("UPDATE"))
    assert not rule_matches(rule, _attrs("CREATE", subresource="status"))
    star = {"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*"]}
    assert rule_matches(star, _attrs())
    assert not rule_matches(star, _attrs("UPDATE", subresource="resize"))
    assert rule_matches(dict(star, resources=["*/*"]), _attrs("UPDATE", subresource="resize"))
    assert rule_matches(dict(star, resources=["pods/*"]), _attrs("UPDATE", subresource="resize"))
    apps = dict(star, apiGroups=["apps"])
    assert rule_matches(apps, _attrs(resource="apps/deployments"))
    assert not rule_matches(apps, _attrs())
    assert not rule_matches(dict(star, scope="Cluster"), _attrs())
    assert rule_matches(dict(star, scope="Cluster"),
                        _attrs(resource="scheduling.k8s.io/priorityclasses", namespace=""))
    assert rule_matches(dict(star, scope="Cluster"), _attrs(resource="namespaces", namespace=""))
    assert not rule_matches(dict(star, scope="Namespaced"), _attrs(resource="namespaces", namespace=""))


def test_service_reference_without_a_resolver_applies_the_failure_policy(ca):
    async def main():
        registry = await make_registry()
        service = {"namespace": "webhooks", "name": "policy", "path": "/validate"}
        cfg = {"name": "svc.example.com", "clientConfig": {"service": service, "caBundle": ca_bundle(ca)},
               "rules": [POD_RULE], "sideEffects": "None", "timeoutSeconds": 1,
               "admissionReviewVersions": ["v1"]}
        await registry.create(VWC, configuration(VWC, "svc", cfg))
        with pytest.raises(InternalError) as e:
            await registry.create("pods", new_pod())
        assert 'Post "https://policy.webhooks.svc:443/validate?timeout=1s"' in str(e.value)
        config = registry.get(VWC, "svc")
        config["webhooks"][0]["failurePolicy"] = "Ignore"
        await registry.update(VWC, config)
        await registry.create("pods", new_pod())

    asyncio.run(main())


def test_service_resolver_and_service_tls_name():
    ca = trustme.CA()

    async def allow(request):
        return {"allowed": False, "status": {"code": 422, "message": "resolved"}}

    async def main():
        server = Server(ca, {"/validate": allow})
        app_ctx_cert = ca.issue_cert("policy.webhooks.svc")  # the name kube-apiserver verifies
        server.ca = _OneCert(app_ctx_cert)
        async with server:
            clock = WallClock()
            store = open_store("memory", clock=clock)
            client = WebhookClient(service_resolver=lambda s: server.url(s["path"]))
            registry = Registry(store, clock, default_chain(store, clock, webhook_client=client))
            await bootstrap(registry)
            service = {"namespace": "webhooks", "name": "policy", "path": "/validate"}
            cfg = {"name": "svc.example.com",
                   "clientConfig": {"service": service, "caBundle": ca_bundle(ca)},
                   "rules": [POD_RULE], "sideEffects": "None", "admissionReviewVersions": ["v1"]}
            await registry.create(VWC, configuration(VWC, "svc", cfg))
            with pytest.raises(ApiError) as e:
                await registry.create("pods", new_pod())
            assert (e.value.code, e.value.reason) == (422, "Invalid")
            assert str(e.value) == 'admission webhook "svc.example.com" denied the request: resolved'

    asyncio.run(main())


class _OneCert:
    """Stands in for the CA in Server: always serves the given leaf certificate."""

    def __init__(self, cert):
        self.cert = cert

    def issue_cert(self, *names):
        return self.cert
