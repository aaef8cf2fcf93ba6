"""A mutating admission webhook served by the test over HTTPS, registered with kubectl."""

from __future__ import annotations

import asyncio
import base64
import json
import ssl
import threading

import pytest
from aiohttp import web

trustme = pytest.importorskip("trustme")

POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "{name}", "labels": {"hooked": "yes"}},
       "spec": {"containers": [{"name": "app", "image": "nginx"}]}}


class WebhookServer:
    """An HTTPS server in its own thread answering AdmissionReview v1 with a JSONPatch."""

    def __init__(self):
        self.ca = trustme.CA()
        cert = self.ca.issue_cert("127.0.0.1")
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        cert.configure_cert(ctx)
        self.ctx = ctx
        self.port = 0
        self.calls = 0
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._runner = None
        self._thread = threading.Thread(target=self._run, daemon=True)

    async def _mutate(self, request):
        review = await request.json()
        self.calls += 1
        patch = [{"op": "add", "path": "/metadata/labels/mutated", "value": "by-webhook"}]
        return web.json_response({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                                  "response": {"uid": review["request"]["uid"], "allowed": True,
                                               "patchType": "JSONPatch",
                                               "patch": base64.b64encode(json.dumps(patch).encode()).decode()}})

    def _run(self):
        asyncio.set_event_loop(self._loop)
        app = web.Application()
        app.router.add_post("/mutate", self._mutate)
        self._runner = web.AppRunner(app)
        self._loop.run_until_complete(self._runner.setup())
        site = web.TCPSite(self._runner, "127.0.0.1", 0, ssl_context=self.ctx)
        self._loop.run_until_complete(site.start())
        self.port = self._runner.addresses[0][1]
        self._ready.set()
        self._loop.run_forever()

    def start(self):
        self._thread.start()
        self._ready.wait(10)
        return self

    def stop(self):
        async def shutdown():
            await self._runner.cleanup()
        asyncio.run_coroutine_threadsafe(shutdown(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    def ca_bundle(self) -> str:
        return base64.b64encode(self.ca.cert_pem.bytes()).decode()


def test_mutating_webhook_changes_pods_and_fail_policy_refuses_when_down(kubectl):
    hook = WebhookServer().start()
    config = {
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
        "metadata": {"name": "label-pods"},
        "webhooks": [{
            "name": "label.kvert.example.com", "admissionReviewVersions": ["v1"],
            "sideEffects": "None", "failurePolicy": "Fail", "timeoutSeconds": 5,
            "clientConfig": {"url": f"https://127.0.0.1:{hook.port}/mutate", "caBundle": hook.ca_bundle()},
            "objectSelector": {"matchLabels": {"hooked": "yes"}},
            "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"],
                       "resources": ["pods"]}]}]}
    kubectl("create", "-f", "-", input=json.dumps(config))
    try:
        kubectl("create", "-f", "-", input=json.dumps(POD).replace("{name}", "hooked-1"))
        labels = kubectl.json("get", "pod", "hooked-1")["metadata"]["labels"]
        assert labels["mutated"] == "by-webhook" and hook.calls == 1
    finally:
        hook.stop()
    refused = kubectl("create", "-f", "-", input=json.dumps(POD).replace("{name}", "hooked-2"), check=False)
    assert refused.returncode != 0
    assert 'failed calling webhook "label.kvert.example.com"' in refused.stderr
    assert kubectl("get", "pod", "hooked-2", check=False).returncode != 0
    # pods the webhook does not select are not affected by its absence
    unhooked = json.loads(json.dumps(POD).replace("{name}", "plain"))
    unhooked["metadata"]["labels"] = {}
    kubectl("create", "-f", "-", input=json.dumps(unhooked))
    kubectl("delete", "mutatingwebhookconfiguration", "label-pods")
