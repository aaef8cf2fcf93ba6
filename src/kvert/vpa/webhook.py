"""The VPA admission controller as a mutating admission webhook over HTTPS.

:class:`VpaWebhookServer` answers ``POST /mutate`` with an ``admission.k8s.io/v1``
AdmissionReview: ``response.uid`` echoes the request, ``allowed`` is true, and when
the pod changes ``patchType: JSONPatch`` with the base64 patch of
:func:`kvert.vpa.admission.mutate_pod`; ``warnings`` carries the two-VPAs warning. It denies
only a pod that opted in to wait for its VPA (:class:`~kvert.vpa.admission.VpaRequired`:
``allowed: false`` with a 403 Forbidden ``status``); a request it cannot read, a resource
other than a pod CREATE, or an internal error is allowed unchanged (and logged). ``GET /health-check`` answers 200.

:func:`webhook_configuration` is the MutatingWebhookConfiguration to register it with any
API server (upstream ``selfRegistration``: configuration ``vpa-webhook-config``, webhook
``vpa.k8s.io``, pods CREATE, ``failurePolicy: Ignore`` so that pods are still created when
the controller is down, ``sideEffects: None``, ``admissionReviewVersions: [v1]``;
``clientConfig.url`` as with upstream's ``--register-by-url``). Upstream's default
namespaceSelector is empty; ``ignored_namespaces`` adds a ``kubernetes.io/metadata.name
NotIn`` expression like its ``--ignored-vpa-object-namespaces``.
"""

from __future__ import annotations

import base64
import json
import logging
import ssl
from typing import Any

from aiohttp import web

from kvert.api.errors import NotFound
from kvert.client.base import Client
from kvert.client.events import EventRecorder
from kvert.clock import Clock
from kvert.vpa.admission import COMPONENT, VpaAdmission, VpaMatcher, VpaRequired

log = logging.getLogger(__name__)

ADMISSION_REVIEW = "admission.k8s.io/v1"
WEBHOOK_NAME = "vpa.k8s.io"
CONFIG_NAME = "vpa-webhook-config"
MUTATE_PATH = "/mutate"


def webhook_configuration(url: str, ca_bundle_pem: bytes | str, name: str = CONFIG_NAME, *,
                          timeout_seconds: int = 10, ignored_namespaces: tuple[str, ...] = ()) -> dict:
    """The ``admissionregistration.k8s.io/v1`` MutatingWebhookConfiguration for ``url``
    (``https://HOST:PORT/mutate``) trusting ``ca_bundle_pem``."""
    pem = ca_bundle_pem.encode() if isinstance(ca_bundle_pem, str) else bytes(ca_bundle_pem)
    hook: dict[str, Any] = {
        "name": WEBHOOK_NAME,
        "admissionReviewVersions": ["v1"],
        "clientConfig": {"url": url, "caBundle": base64.b64encode(pem).decode("ascii")},
        "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"],
                   "resources": ["pods"], "scope": "*"}],
        "failurePolicy": "Ignore",
        "matchPolicy": "Equivalent",
        "sideEffects": "None",
        "timeoutSeconds": int(timeout_seconds),
        "reinvocationPolicy": "Never",
        "namespaceSelector": {},
        "objectSelector": {},
    }
    if ignored_namespaces:
        hook["namespaceSelector"] = {"matchExpressions": [
            {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": list(ignored_namespaces)}]}
    return {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
            "metadata": {"name": name, "labels": {"app.kubernetes.io/managed-by": COMPONENT}},
            "webhooks": [hook]}


async def register_webhook(client: Client, configuration: dict[str, Any]) -> dict[str, Any]:
    """Create the configuration, or replace the webhooks of an existing one of that name."""
    resource = "admissionregistration.k8s.io/mutatingwebhookconfigurations"
    name = configuration["metadata"]["name"]
    try:
        current = await client.get(resource, name)
    except NotFound:
        return await client.create(resource, configuration)
    current = dict(current)
    current["webhooks"] = configuration["webhooks"]
    labels = dict((current.get("metadata") or {}).get("labels") or {})
    labels.update(configuration["metadata"].get("labels") or {})
    current["metadata"] = {**current["metadata"], "labels": labels}
    return await client.update(resource, current)


def review_response(uid: str, ops: list[dict] | None = None, warnings: list[str] | None = None,
                    denied: VpaRequired | None = None) -> dict:
    response: dict[str, Any] = {"uid": uid, "allowed": denied is None}
    if denied is not None:
        response["status"] = {"status": "Failure", "message": str(denied), "reason": denied.reason,
                              "code": denied.code}
    if ops:
        response["patchType"] = "JSONPatch"
        response["patch"] = base64.b64encode(json.dumps(ops).encode()).decode("ascii")
    if warnings:
        response["warnings"] = list(warnings)
    return {"apiVersion": ADMISSION_REVIEW, "kind": "AdmissionReview", "response": response}


class VpaWebhookServer:
    """``client`` reads VPAs, LimitRanges and controllers (an in-process or HTTP client, or a
    ready :class:`VpaAdmission`); events go through it too. ``run()`` starts serving (and the
    matcher's informers when ``informers=True``) and returns; ``stop()`` shuts down."""

    def __init__(self, client: Client, clock: Clock, *, host: str = "127.0.0.1", port: int = 0,
                 ssl_context: ssl.SSLContext | None = None, informers: bool = False,
                 admission: VpaAdmission | None = None):
        self.clock = clock
        self.host = host
        self.port = port
        self.ssl_context = ssl_context
        self.use_informers = informers
        if admission is None:
            matcher = VpaMatcher(client, clock)
            admission = VpaAdmission(matcher, EventRecorder(client, clock, COMPONENT))
        self.admission = admission
        self.requests = 0
        self._runner: web.AppRunner | None = None

    @property
    def url(self) -> str:
        scheme = "https" if self.ssl_context is not None else "http"
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{scheme}://{host}:{self.port}{MUTATE_PATH}"

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post(MUTATE_PATH, self._mutate)
        app.router.add_get("/health-check", self._health)
        return app

    async def run(self) -> None:
        if self.use_informers:
            await self.admission.matcher.start()
        self._runner = web.AppRunner(self.app(), access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port, ssl_context=self.ssl_context)
        await site.start()
        self.port = self._runner.addresses[0][1]
        log.info("vpa admission webhook serving on %s", self.url)

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        await self.admission.drain()
        if self.use_informers:
            self.admission.matcher.stop()

    async def _health(self, request: web.Request) -> web.Response:
        return web.Response(text="ok")

    async def _mutate(self, request: web.Request) -> web.Response:
        self.requests += 1
        try:
            review = await request.json()
            req = review["request"]
            uid = str(req["uid"])
        except (ValueError, KeyError, TypeError) as e:
            log.warning("unreadable AdmissionReview: %s", e)
            return web.json_response({"kind": "Status", "apiVersion": "v1", "status": "Failure",
                                      "message": f"unreadable AdmissionReview: {e}", "code": 400},
                                     status=400)
        ops: list[dict] = []
        warnings: list[str] = []
        try:
            resource = req.get("resource") or {}
            pod = req.get("object")
            if (req.get("operation") == "CREATE" and resource.get("group", "") == ""
                    and resource.get("resource") == "pods" and not req.get("subResource")
                    and isinstance(pod, dict)):
                ops, warnings = await self.admission.review(pod, str(req.get("namespace") or ""))
        except VpaRequired as e:
            return web.json_response(review_response(uid, denied=e))
        except Exception:  # never deny: admit unchanged (failurePolicy Ignore semantics)
            log.exception("vpa admission of %s/%s failed; allowing unchanged",
                          req.get("namespace"), req.get("name"))
            ops, warnings = [], []
        return web.json_response(review_response(uid, ops, warnings))


__all__ = ["CONFIG_NAME", "MUTATE_PATH", "VpaWebhookServer", "WEBHOOK_NAME", "register_webhook",
           "review_response", "webhook_configuration"]
