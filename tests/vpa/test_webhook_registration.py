"""The admission controller's registration (upstream ``selfRegistration``), its removal on the
way out, certificate reloading and the HTTPS server's paths and limits."""

from __future__ import annotations

import asyncio
import base64
import datetime
import json
import shutil
import ssl

import aiohttp
import pytest

from kvert.apiserver.admission import bootstrap, default_chain
from kvert.apiserver.certs import ensure_pki
from kvert.client import InProcessClient
from kvert.clock import WallClock
from kvert.registry import Registry
from kvert.store import open_store
from kvert.vpa.instruments import AdmissionMetrics
from kvert.vpa.webhook import (
    MAX_PAYLOAD_BYTES,
    CertReloader,
    VpaWebhookServer,
    parse_webhook_labels,
    patch_ca_bundle,
    register_webhook,
    server_tls_context,
    unregister_webhook,
    webhook_configuration,
)

MWC = "admissionregistration.k8s.io/mutatingwebhookconfigurations"


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 30))


class Api:
    async def __aenter__(self):
        self.clock = WallClock()
        self.store = open_store("memory", clock=self.clock)
        self.registry = Registry(self.store, self.clock, default_chain(self.store, self.clock))
        await bootstrap(self.registry)
        self.client = InProcessClient(self.registry)
        return self

    async def __aexit__(self, *exc):
        self.store.close()


def registered(config):
    """What selfRegistration creates. Upstream's tests create it in a fake clientset, which
    does not validate (their 32 s timeout and http URL are refused by kube-apiserver), so the
    object is checked as the controller sends it."""
    return config


# upstream: TestSelfRegistrationBase (pkg/admission-controller/config_test.go)
def test_self_registration_base():
    cfg = registered(webhook_configuration("http://example.com/", b"fake", timeout_seconds=32,
                                           labels=parse_webhook_labels("key1:value1,key2:value2")))
    assert cfg["metadata"]["name"] == "vpa-webhook-config"
    assert cfg["metadata"]["labels"] == {"key1": "value1", "key2": "value2"}
    assert len(cfg["webhooks"]) == 1
    hook = cfg["webhooks"][0]
    assert hook["name"] == "vpa.k8s.io"
    pods, vpas = hook["rules"]
    assert (pods["operations"], pods["apiGroups"], pods["apiVersions"], pods["resources"]) == \
        (["CREATE"], [""], ["v1"], ["pods"])
    assert (vpas["operations"], vpas["apiGroups"], vpas["apiVersions"], vpas["resources"]) == \
        (["CREATE", "UPDATE"], ["autoscaling.k8s.io"], ["*"], ["verticalpodautoscalers"])
    assert hook["sideEffects"] == "None"
    assert hook["failurePolicy"] == "Ignore"
    assert base64.b64decode(hook["clientConfig"]["caBundle"]) == b"fake"
    assert hook["timeoutSeconds"] == 32


# upstream: TestSelfRegistrationWithURL (pkg/admission-controller/config_test.go)
def test_self_registration_with_url():
    hook = registered(webhook_configuration("http://example.com/", b"fake"))["webhooks"][0]
    assert "service" not in hook["clientConfig"]
    assert hook["clientConfig"]["url"] == "http://example.com/"


# upstream: TestSelfRegistrationWithOutURL (pkg/admission-controller/config_test.go)
def test_self_registration_without_url():
    hook = registered(webhook_configuration(None, b"fake", service={"namespace": "default",
                                                                     "name": "vpa-service"}))["webhooks"][0]
    assert hook["clientConfig"]["service"]["name"] == "vpa-service"
    assert hook["clientConfig"]["service"]["namespace"] == "default"
    assert "url" not in hook["clientConfig"]


# upstream: TestSelfRegistrationWithIgnoredNamespaces (pkg/admission-controller/config_test.go)
def test_self_registration_with_ignored_namespaces():
    hook = registered(webhook_configuration(None, b"fake", service={"namespace": "default", "name": "vpa-service"},
                                            ignored_namespaces=("test",)))["webhooks"][0]
    [expression] = hook["namespaceSelector"]["matchExpressions"]
    assert expression["operator"] == "NotIn"
    assert expression["values"] == ["test"]


# upstream: TestSelfRegistrationWithSelectedNamespaces (pkg/admission-controller/config_test.go)
def test_self_registration_with_selected_namespaces():
    hook = registered(webhook_configuration(None, b"fake", service={"namespace": "default", "name": "vpa-service"},
                                            selected_namespace="test"))["webhooks"][0]
    [expression] = hook["namespaceSelector"]["matchExpressions"]
    assert expression["operator"] == "In"
    assert expression["values"] == ["test"]


# upstream: TestSelfRegistrationWithFailurePolicy, TestSelfRegistrationWithOutFailurePolicy
# (pkg/admission-controller/config_test.go)
@pytest.mark.parametrize("fail, policy", [(True, "Fail"), (False, "Ignore")])
def test_self_registration_failure_policy(fail, policy):
    hook = registered(webhook_configuration(None, b"fake", service={"namespace": "default", "name": "vpa-service"},
                                            selected_namespace="test", failure_policy_fail=fail))["webhooks"][0]
    assert hook["failurePolicy"] == policy


# upstream: TestConvertLabelsToMap (pkg/admission-controller/config_test.go)
@pytest.mark.parametrize("labels, expected", [
    ("", {}),
    ("key:value", {"key": "value"}),
    ("key1:value1,key2:value2", {"key1": "value1", "key2": "value2"}),
    ("key1:value1, key2:value2", {"key1": "value1", "key2": "value2"}),
    ("key1 : value1,key2 : value2", {"key1": "value1", "key2": "value2"}),
    ("foo,bar", None),
    ("key1:value1,:bar", None),
    ('"key1:value1,key2:value2"', {"key1": "value1", "key2": "value2"}),
])
def test_convert_labels_to_map(labels, expected):
    if expected is None:
        with pytest.raises(ValueError, match="the format should be: 'key1:value1,key2:value2'"):
            parse_webhook_labels(labels)
    else:
        assert parse_webhook_labels(labels) == expected


def test_registering_replaces_and_unregistering_spares_a_newer_registration():
    """A rolling update: the new controller registers (delete + create, as upstream), then
    the old one exits and must leave the new registration, even with the same CA (a shared
    Secret); the last one out removes its own."""
    service = {"namespace": "kube-system", "name": "vpa-webhook"}

    async def go():
        async with Api() as api:
            old = await register_webhook(api.client, webhook_configuration(None, b"CA", service=service))
            new = await register_webhook(api.client, webhook_configuration(None, b"CA", service=service))
            assert len((await api.client.list(MWC))["items"]) == 1
            assert await unregister_webhook(api.client, old) is False
            assert (await api.client.get(MWC, "vpa-webhook-config"))["metadata"]["uid"] == new["metadata"]["uid"]
            # a registration whose CA was replaced in place is not this controller's either
            await patch_ca_bundle(api.client, "vpa-webhook-config", b"OTHER CA")
            assert await unregister_webhook(api.client, new) is False
            current = await api.client.get(MWC, "vpa-webhook-config")
            assert await unregister_webhook(api.client, current) is True
            assert (await api.client.list(MWC))["items"] == []
            assert await unregister_webhook(api.client, current) is False     # already gone
    run(go())


def _pki(tmp_path, name):
    return ensure_pki(tmp_path / name, datetime.datetime.now(datetime.UTC), ("127.0.0.1", "localhost"))


async def _handshake(port, ca_pem):
    ctx = ssl.create_default_context(cadata=ca_pem.decode())
    _, writer = await asyncio.open_connection("127.0.0.1", port, ssl=ctx)
    writer.close()


def test_reload_cert_serves_new_files_and_patches_the_ca(tmp_path):
    """upstream certs.go certReloader: a new certificate and key are served to new
    connections; a new CA file is patched into the registration's caBundle."""
    first, second = _pki(tmp_path, "first"), _pki(tmp_path, "second")
    live = tmp_path / "tls"
    live.mkdir()
    for src, dst in ((first.ca_cert, "caCert.pem"), (first.cert, "serverCert.pem"), (first.key, "serverKey.pem")):
        shutil.copy(src, live / dst)

    async def go():
        async with Api() as api:
            ctx = server_tls_context(live / "serverCert.pem", live / "serverKey.pem")
            server = VpaWebhookServer(api.client, api.clock, ssl_context=ctx)
            await server.run()
            try:
                await register_webhook(api.client, webhook_configuration(server.url, first.ca_pem()))
                reloader = CertReloader(ctx, api.clock, live / "serverCert.pem", live / "serverKey.pem",
                                        live / "caCert.pem", client=api.client)
                await _handshake(server.port, first.ca_pem())
                await reloader.check()
                assert reloader.reloads == 0
                for src, dst in ((second.cert, "serverCert.pem"), (second.key, "serverKey.pem"),
                                 (second.ca_cert, "caCert.pem")):
                    tmp = live / (dst + ".new")
                    shutil.copy(src, tmp)
                    tmp.replace(live / dst)
                await reloader.check()
                assert reloader.reloads == 1
                await _handshake(server.port, second.ca_pem())
                with pytest.raises(ssl.SSLError):
                    await _handshake(server.port, first.ca_pem())
                cfg = await api.client.get(MWC, "vpa-webhook-config")
                assert base64.b64decode(cfg["webhooks"][0]["clientConfig"]["caBundle"]) == second.ca_pem()
                assert reloader.registered is not None
                assert reloader.registered["metadata"]["resourceVersion"] == cfg["metadata"]["resourceVersion"]
            finally:
                await server.stop()
    run(go())


def test_min_tls_version_takes_upstreams_values(tmp_path):
    pki = _pki(tmp_path, "pki")
    assert server_tls_context(pki.cert, pki.key, "tls1_3").minimum_version == ssl.TLSVersion.TLSv1_3
    # upstream config.go configTLS
    with pytest.raises(ValueError, match=r"unable to determine value for --min-tls-version \(tls1_1\), "
                                         "must be either tls1_2 or tls1_3"):
        server_tls_context(pki.cert, pki.key, "tls1_1")


def test_server_answers_at_root_counts_reviews_and_limits_the_payload(tmp_path):
    """upstream logic/server.go: the handler on "/", VPA reviews to the VPA handler, metrics
    by status and resource, and maxAdmissionPayloadSize (5 MiB) refused with 413."""
    pki = _pki(tmp_path, "pki")

    def review(uid, group, resource, obj):
        return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                "request": {"uid": uid, "operation": "CREATE", "namespace": "default",
                            "resource": {"group": group, "version": "v1", "resource": resource}, "object": obj}}

    async def go():
        async with Api() as api:
            metrics = AdmissionMetrics()
            server = VpaWebhookServer(api.client, api.clock, ssl_context=pki.server_context(), metrics=metrics)
            await server.run()
            base = f"https://127.0.0.1:{server.port}"
            ctx = pki.client_context()
            try:
                async with aiohttp.ClientSession() as s:
                    pod = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}]}}
                    async with s.post(base + "/", json=review("u-1", "", "pods", pod), ssl=ctx) as r:
                        assert (await r.json())["response"] == {"uid": "u-1", "allowed": True}
                    vpa = {"metadata": {"name": "v"},
                           "spec": {"targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"},
                                    "updatePolicy": {"updateMode": "Recreate"}}}
                    async with s.post(base + "/", json=review("u-2", "autoscaling.k8s.io",
                                                              "verticalpodautoscalers", vpa), ssl=ctx) as r:
                        assert (await r.json())["response"] == {"uid": "u-2", "allowed": True}
                    # the VPA handler refuses what upstream's validation refuses
                    bad = {"metadata": {"name": "v"}, "spec": {**vpa["spec"], "updatePolicy": {"updateMode": "Sometimes"}}}
                    async with s.post(base + "/", json=review("u-5", "autoscaling.k8s.io",
                                                              "verticalpodautoscalers", bad), ssl=ctx) as r:
                        denied = (await r.json())["response"]
                        assert denied["allowed"] is False and denied["status"]["code"] == 422
                    async with s.post(base + "/mutate", json=review("u-3", "", "pods", pod), ssl=ctx) as r:
                        assert (await r.json())["response"]["uid"] == "u-3"
                    big = json.dumps(review("u-4", "", "pods", {"x": "a" * MAX_PAYLOAD_BYTES}))
                    async with s.post(base + "/", data=big, ssl=ctx,
                                      headers={"Content-Type": "application/json"}) as r:
                        assert r.status == 413
                        assert (await r.text()).strip() == "request payload too large"
            finally:
                await server.stop()
            text = metrics.exposition().decode()
            assert 'vpa_admission_controller_admission_pods_total{applied="false"} 2.0' in text
            assert 'vpa_admission_controller_admission_latency_seconds_count{resource="Pod",status="skipped"} 2.0' in text
            assert 'vpa_admission_controller_admission_latency_seconds_count{resource="VPA",status="skipped"} 2.0' in text
            assert 'vpa_admission_controller_admission_latency_seconds_count{resource="unknown",status="error"} 1.0' in text
    run(go())
