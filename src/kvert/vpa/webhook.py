"""The VPA admission controller as a mutating admission webhook over HTTPS.

:class:`VpaWebhookServer` answers ``POST /`` (upstream's path; ``/mutate`` too, kvert's first
one) with an ``admission.k8s.io/v1`` AdmissionReview: ``response.uid`` echoes the request,
``allowed`` is true, and when the object changes ``patchType: JSONPatch`` with the base64 patch;
``warnings`` carries the review's warnings. Pods get their VPA's recommendation
(:meth:`kvert.vpa.admission.VpaAdmission.review`); it denies only a pod that opted in to wait for
its VPA (:class:`~kvert.vpa.admission.VpaRequired`: ``allowed: false`` with a 403 Forbidden
``status``). VerticalPodAutoscaler creates and updates (upstream registers them too) are
validated (:meth:`~kvert.vpa.admission.VpaAdmission.review_vpa`: a refused one is denied with
the 422 Invalid status and its causes; a VPA without ``updatePolicy`` gets upstream's
default). A request it cannot read, a resource it does not handle, or an internal error is
allowed unchanged (and logged). A body above upstream's ``maxAdmissionPayloadSize`` (5 MiB) is
refused with 413 ``request payload too large``. ``GET /health-check`` answers 200. With
``metrics`` (:class:`~kvert.vpa.instruments.AdmissionMetrics`) each review is counted where
upstream's server counts it: ``admission_latency_seconds`` by status (applied / skipped /
error) and resource (Pod / VPA / unknown), ``admission_pods_total`` by whether the pod was
changed; ``health`` is told of each request.

:func:`webhook_configuration` is the MutatingWebhookConfiguration upstream's
``selfRegistration`` creates: configuration ``vpa-webhook-config``, webhook ``vpa.k8s.io``, pods
CREATE and verticalpodautoscalers CREATE/UPDATE, ``failurePolicy: Ignore`` (``Fail`` on request)
so that pods are still created when the controller is down, ``sideEffects: None``,
``admissionReviewVersions: [v1]``; ``clientConfig.service`` (the ``vpa-webhook`` Service, port
443) or ``clientConfig.url``; a ``kubernetes.io/metadata.name`` NotIn namespaceSelector for the
ignored namespaces, else In for the one selected namespace. :func:`register_webhook` replaces any
configuration of that name (deleted, then created, as upstream); :func:`unregister_webhook`
deletes it again only while it is still the one registered (same uid and caBundle, its
resourceVersion as the precondition), so a newer controller's registration survives an older
one's exit. :class:`CertReloader` is upstream's ``--reload-cert``: new certificate files are
loaded into the serving context, and a new CA is patched into the registration.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import ssl
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from aiohttp import web

from kvert.api.errors import ApiError, Conflict, Invalid, NotFound
from kvert.api.quantity import Quantity
from kvert.client.base import Client
from kvert.client.events import EventRecorder
from kvert.clock import Clock
from kvert.clock.periodic import run_every
from kvert.vpa.admission import COMPONENT, VpaAdmission, VpaMatcher, VpaRequired
from kvert.vpa.features import VpaGates
from kvert.vpa.instruments import AdmissionMetrics, HealthCheck

log = logging.getLogger(__name__)

ADMISSION_REVIEW = "admission.k8s.io/v1"
WEBHOOK_NAME = "vpa.k8s.io"
CONFIG_NAME = "vpa-webhook-config"
SERVICE_NAME = "vpa-webhook"
SERVICE_PORT = 443
WEBHOOK_PATH = "/"
MUTATE_PATH = "/mutate"
RESOURCE = "admissionregistration.k8s.io/mutatingwebhookconfigurations"
VPA_GROUP = "autoscaling.k8s.io"
# upstream logic/server.go maxAdmissionPayloadSize
MAX_PAYLOAD_BYTES = 5 * 1024 * 1024
NAMESPACE_LABEL = "kubernetes.io/metadata.name"
MIN_TLS_VERSIONS = {"": ssl.TLSVersion.TLSv1_2, "tls1_2": ssl.TLSVersion.TLSv1_2, "tls1_3": ssl.TLSVersion.TLSv1_3}


def parse_webhook_labels(text: str) -> dict[str, str]:
    """``--webhook-labels``: ``key1:value1,key2:value2`` (upstream's ``convertLabelsToMap``:
    surrounding quotes stripped, spaces around keys and values trimmed). ValueError on a
    malformed list, with upstream's message."""
    out: dict[str, str] = {}
    if text == "":
        return out
    text = text.strip('"')
    for tag in text.split(","):
        key, sep, value = tag.partition(":")
        if not sep or not key.strip():
            raise ValueError(f"labels '{text}' are invalid, the format should be: 'key1:value1,key2:value2'")
        out[key.strip()] = value.strip()
    return out


def webhook_configuration(url: str | None, ca_bundle_pem: bytes | str, name: str = CONFIG_NAME, *,
                          service: Mapping[str, str] | None = None, timeout_seconds: int = 10,
                          ignored_namespaces: tuple[str, ...] = (), selected_namespace: str = "",
                          failure_policy_fail: bool = False, labels: Mapping[str, str] | None = None) -> dict:
    """The ``admissionregistration.k8s.io/v1`` MutatingWebhookConfiguration trusting
    ``ca_bundle_pem``, calling ``url`` or, when ``service`` (``namespace``, ``name``) is
    given, that Service on port 443."""
    pem = ca_bundle_pem.encode() if isinstance(ca_bundle_pem, str) else bytes(ca_bundle_pem)
    client_config: dict[str, Any]
    if service is not None:
        # no path, as upstream: the API server posts to the Service's "/"
        client_config = {"service": {"namespace": service["namespace"], "name": service["name"],
                                     "port": SERVICE_PORT}}
    elif url:
        client_config = {"url": url}
    else:
        raise ValueError("a webhook configuration needs a URL or a Service")
    client_config["caBundle"] = base64.b64encode(pem).decode("ascii")
    namespace_selector: dict[str, Any] = {}
    if ignored_namespaces:
        namespace_selector = {"matchExpressions": [
            {"key": NAMESPACE_LABEL, "operator": "NotIn", "values": list(ignored_namespaces)}]}
    elif selected_namespace:
        namespace_selector = {"matchExpressions": [
            {"key": NAMESPACE_LABEL, "operator": "In", "values": [selected_namespace]}]}
    hook: dict[str, Any] = {
        "name": WEBHOOK_NAME,
        "admissionReviewVersions": ["v1"],
        "clientConfig": client_config,
        "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"],
                   "resources": ["pods"], "scope": "*"},
                  {"operations": ["CREATE", "UPDATE"], "apiGroups": [VPA_GROUP], "apiVersions": ["*"],
                   "resources": ["verticalpodautoscalers"], "scope": "*"}],
        "failurePolicy": "Fail" if failure_policy_fail else "Ignore",
        "matchPolicy": "Equivalent",
        "sideEffects": "None",
        "timeoutSeconds": int(timeout_seconds),
        "reinvocationPolicy": "Never",
        "namespaceSelector": namespace_selector,
        "objectSelector": {},
    }
    metadata: dict[str, Any] = {"name": name}
    if labels:
        metadata["labels"] = dict(labels)
    return {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
            "metadata": metadata, "webhooks": [hook]}


def ca_bundle_of(configuration: Mapping[str, Any]) -> str:
    """The first webhook's base64 caBundle ("" without one)."""
    hooks = configuration.get("webhooks") or []
    if not hooks:
        return ""
    return str(((hooks[0] or {}).get("clientConfig") or {}).get("caBundle") or "")


async def register_webhook(client: Client, configuration: dict[str, Any]) -> dict[str, Any]:
    """Replace any configuration of that name with ``configuration`` (deleted, then
    created, as upstream's ``selfRegistration``); the stored object comes back."""
    name = configuration["metadata"]["name"]
    try:
        await client.delete(RESOURCE, name)
    except NotFound:
        pass
    return await client.create(RESOURCE, configuration)


async def unregister_webhook(client: Client, registered: Mapping[str, Any]) -> bool:
    """Delete the configuration ``registered`` (what :func:`register_webhook` returned) if it
    is still that one: same uid and caBundle. True when deleted; False when it is gone or
    another controller's registration replaced it."""
    meta = registered.get("metadata") or {}
    name = str(meta.get("name") or "")
    try:
        current = await client.get(RESOURCE, name)
    except NotFound:
        return False
    current_meta = current.get("metadata") or {}
    if current_meta.get("uid") != meta.get("uid") or ca_bundle_of(current) != ca_bundle_of(registered):
        log.info("%s is another registration now; leaving it", name)
        return False
    try:
        await client.delete(RESOURCE, name, preconditions={"uid": current_meta.get("uid"),
                                                           "resourceVersion": current_meta.get("resourceVersion")})
    except (NotFound, Conflict):     # replaced or changed since it was read
        return False
    return True


async def patch_ca_bundle(client: Client, name: str, ca_bundle_pem: bytes) -> dict[str, Any] | None:
    """Upstream's ``reloadWebhookCA``: put a new CA into the registration's ``vpa.k8s.io``
    webhook unless it is already there. The patched object, or None when unchanged."""
    current = await client.get(RESOURCE, name)
    bundle = base64.b64encode(ca_bundle_pem).decode("ascii")
    hooks = current.get("webhooks") or []
    if not hooks:
        raise ValueError("webhook configuration has no webhooks")
    if ca_bundle_of(current) == bundle:
        return None
    # kvert's strategic merge keeps webhooks atomic; a JSON patch names the one webhook
    ops = [{"op": "test", "path": "/webhooks/0/name", "value": hooks[0].get("name")},
           {"op": "replace", "path": "/webhooks/0/clientConfig/caBundle", "value": bundle}]
    return await client.patch(RESOURCE, name, ops, "json")


def server_tls_context(cert_file: Path, key_file: Path, min_tls_version: str = "tls1_2") -> ssl.SSLContext:
    """The serving context of ``--tls-cert-file`` / ``--tls-private-key`` at
    ``--min-tls-version`` (tls1_2 or tls1_3, upstream's values)."""
    if min_tls_version not in MIN_TLS_VERSIONS:
        raise ValueError(f"unable to determine value for --min-tls-version ({min_tls_version}), "
                         "must be either tls1_2 or tls1_3")
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.minimum_version = MIN_TLS_VERSIONS[min_tls_version]
    ctx.load_cert_chain(str(cert_file), str(key_file))
    return ctx


def review_response(uid: str, ops: list[dict] | None = None, warnings: list[str] | None = None,
                    denied: ApiError | None = None) -> dict:
    response: dict[str, Any] = {"uid": uid, "allowed": denied is None}
    if denied is not None:
        response["status"] = {"status": "Failure", "message": str(denied), "reason": denied.reason,
                              "code": denied.code}
        details = denied.to_status().get("details")
        if details:
            response["status"]["details"] = details
    if ops:
        response["patchType"] = "JSONPatch"
        response["patch"] = base64.b64encode(json.dumps(ops).encode()).decode("ascii")
    if warnings:
        response["warnings"] = list(warnings)
    return {"apiVersion": ADMISSION_REVIEW, "kind": "AdmissionReview", "response": response}


async def _read_at_most(request: web.Request, limit: int) -> bytes:
    """The body, or its first ``limit`` bytes when it is longer (the rest is not read)."""
    chunks: list[bytes] = []
    size = 0
    while size < limit:
        chunk = await request.content.read(limit - size)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def _file_state(path: Path) -> tuple[int, int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns


class CertReloader:
    """``--reload-cert``: every ``interval`` seconds, a changed certificate or key is loaded
    into ``context`` (new connections get it), and with ``client`` and a registration, a
    changed CA file is patched into the webhook configuration. A Secret volume's files
    change by a symlink swap, which a changed inode, size or time reveals. ``registered`` is
    the registration as last patched (for :func:`unregister_webhook` on the way out)."""

    def __init__(self, context: ssl.SSLContext, clock: Clock, cert_file: Path, key_file: Path,
                 ca_file: Path | None = None, *, client: Client | None = None,
                 config_name: str = CONFIG_NAME, interval: float = 5.0,
                 registered: dict[str, Any] | None = None) -> None:
        self.context = context
        self.registered = registered
        self.clock = clock
        self.cert_file, self.key_file, self.ca_file = cert_file, key_file, ca_file
        self.client = client
        self.config_name = config_name
        self.interval = interval
        self.reloads = 0
        self._pair = (_file_state(cert_file), _file_state(key_file))
        self._ca = _file_state(ca_file) if ca_file is not None else None
        self._stop = asyncio.Event()

    async def run(self) -> None:
        self._stop.clear()
        await run_every(self.clock, self.interval, self.check, self._stop, log=log,
                        failure="certificate reload failed")

    def stop(self) -> None:
        self._stop.set()

    async def check(self) -> None:
        pair = (_file_state(self.cert_file), _file_state(self.key_file))
        if pair != self._pair and None not in pair:
            try:
                self.context.load_cert_chain(str(self.cert_file), str(self.key_file))
                self._pair = pair
                self.reloads += 1
                log.info("New certificate found, reloaded")
            except (OSError, ssl.SSLError) as e:   # mid-write: next time
                log.error("Failed to reload certificate: %s", e)
        if self.ca_file is None or self.client is None:
            return
        ca = _file_state(self.ca_file)
        if ca == self._ca or ca is None:
            return
        try:
            bundle = self.ca_file.read_bytes()
        except OSError as e:
            log.error("Failed to reload client CA: %s", e)
            return
        if not bundle:     # truncated before the write: upstream skips it too
            return
        try:
            patched = await patch_ca_bundle(self.client, self.config_name, bundle)
            if patched is not None:
                self.registered = patched
                log.info("Successfully patched webhook with new client CA")
            self._ca = ca
        except (ApiError, ValueError) as e:
            log.error("Failed to reload client CA: %s", e)


class VpaWebhookServer:
    """``client`` reads VPAs, LimitRanges and controllers (an in-process or HTTP client, or a
    ready :class:`VpaAdmission`); events go through it too. ``gates`` (``--feature-gates``) and
    ``max_allowed_cpu_boost`` go to the :class:`VpaAdmission` it makes; ``metrics`` and
    ``health`` are the server's (module docstring). ``run()`` starts serving (and the matcher's
    informers when ``informers=True``) and returns; ``stop()`` shuts down."""

    def __init__(self, client: Client, clock: Clock, *, host: str = "127.0.0.1", port: int = 0,
                 ssl_context: ssl.SSLContext | None = None, informers: bool = False,
                 admission: VpaAdmission | None = None, metrics: AdmissionMetrics | None = None,
                 health: HealthCheck | None = None, gates: VpaGates | None = None,
                 max_allowed_cpu_boost: Quantity | None = None):
        self.clock = clock
        self.host = host
        self.port = port
        self.ssl_context = ssl_context
        self.use_informers = informers
        if admission is None:
            matcher = VpaMatcher(client, clock)
            # the server counts reviews itself, so the admission logic gets no metrics
            admission = VpaAdmission(matcher, EventRecorder(client, clock, COMPONENT), gates=gates,
                                     max_allowed_cpu_boost=max_allowed_cpu_boost)
        self.admission = admission
        self.metrics = metrics
        self.health = health
        self.requests = 0
        self._runner: web.AppRunner | None = None

    @property
    def url(self) -> str:
        scheme = "https" if self.ssl_context is not None else "http"
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{scheme}://{host}:{self.port}{MUTATE_PATH}"

    def app(self) -> web.Application:
        # the handler reads the body itself, to answer an oversized one with upstream's 413
        app = web.Application()
        app.router.add_post(WEBHOOK_PATH, self._mutate)
        app.router.add_post(MUTATE_PATH, self._mutate)
        app.router.add_get("/health-check", self._health)
        return app

    async def run(self) -> None:
        if self.use_informers:
            await self.admission.matcher.start()
        self._runner = web.AppRunner(self.app(), access_log=None, handle_signals=False)
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
        start = self.clock.now()
        status = ["error", "unknown"]
        try:
            return await self._serve(request, status)
        finally:
            if self.metrics is not None:
                self.metrics.admission_latency.labels(*status).observe(self.clock.now() - start)
            if self.health is not None:
                self.health.update_last_activity()

    async def _serve(self, request: web.Request, status: list[str]) -> web.Response:
        """One review; ``status`` takes upstream's admission status (applied, skipped, error)
        and resource label (Pod, VPA, unknown), as its ``admit`` returns them."""
        body = await _read_at_most(request, MAX_PAYLOAD_BYTES + 1)
        if len(body) > MAX_PAYLOAD_BYTES:
            log.error("Admission request body exceeds size limit (%d)", MAX_PAYLOAD_BYTES)
            return web.Response(status=413, text="request payload too large\n")
        try:
            review = json.loads(body)
            req = review["request"]
            uid = str(req["uid"])
        except (ValueError, KeyError, TypeError) as e:
            log.warning("unreadable AdmissionReview: %s", e)
            return web.json_response({"kind": "Status", "apiVersion": "v1", "status": "Failure",
                                      "message": f"unreadable AdmissionReview: {e}", "code": 400},
                                     status=400)
        resource = req.get("resource") or {}
        group, plural = resource.get("group", ""), resource.get("resource")
        obj = req.get("object")
        operation = req.get("operation")
        ops: list[dict] = []
        warnings: list[str] = []
        try:
            if group == "" and plural == "pods":
                status[1] = "Pod"
                if operation == "CREATE" and not req.get("subResource") and isinstance(obj, dict):
                    ops, warnings = await self.admission.review(obj, str(req.get("namespace") or ""))
                if self.metrics is not None:
                    self.metrics.admission_pods.labels("true" if ops else "false").inc()
            elif group == VPA_GROUP and plural == "verticalpodautoscalers":
                status[1] = "VPA"
                if operation in ("CREATE", "UPDATE") and isinstance(obj, dict):
                    old = req.get("oldObject") if operation == "UPDATE" else None
                    ops, warnings = self.admission.review_vpa(obj, old if isinstance(old, dict) else None)
            else:
                log.error("not supported resource type: %s/%s", group, plural)
                return web.json_response(review_response(uid))
        except (VpaRequired, Invalid) as e:
            status[0] = "skipped"
            return web.json_response(review_response(uid, warnings=warnings, denied=e))
        except Exception:  # never deny: admit unchanged (failurePolicy Ignore semantics)
            log.exception("vpa admission of %s %s/%s failed; allowing unchanged",
                          plural, req.get("namespace"), req.get("name"))
            return web.json_response(review_response(uid))
        status[0] = "applied" if ops else "skipped"
        return web.json_response(review_response(uid, ops, warnings))


__all__ = ["CONFIG_NAME", "CertReloader", "MAX_PAYLOAD_BYTES", "MUTATE_PATH", "SERVICE_NAME", "VpaWebhookServer",
           "WEBHOOK_NAME", "WEBHOOK_PATH", "ca_bundle_of", "parse_webhook_labels", "patch_ca_bundle",
           "register_webhook", "review_response", "server_tls_context", "unregister_webhook",
           "webhook_configuration"]
