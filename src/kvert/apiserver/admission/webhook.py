"""MutatingAdmissionWebhook and ValidatingAdmissionWebhook
(``staging/src/k8s.io/apiserver/pkg/admission/plugin/webhook``).

Configurations are the ``admissionregistration.k8s.io/v1`` MutatingWebhookConfiguration /
ValidatingWebhookConfiguration objects in the store, read on every request. Webhooks run
configuration by configuration (sorted by name), in their order within one. A webhook is
called when:

- one of its ``rules`` matches: ``operations`` (CREATE, UPDATE, DELETE, CONNECT or ``*``),
  ``apiGroups``, ``apiVersions``, ``resources`` (``pods``, ``pods/status``, ``pods/*``,
  ``*``, ``*/*``: a bare name never matches a subresource) and ``scope`` (``*``,
  ``Namespaced``, ``Cluster``; a Namespace object counts as cluster-scoped);
- its ``namespaceSelector`` matches the labels of the object's namespace (cluster-scoped
  objects other than namespaces always match; for a Namespace, its own labels; a missing
  namespace is the namespace's 404);
- its ``objectSelector`` matches the labels of the new or the old object.

Webhook configurations themselves are never sent to webhooks. ``matchPolicy`` is
treated as Exact (kvert serves one version per resource, so Equivalent would only add
conversions), and ``matchConditions`` (CEL) are not evaluated: a webhook that has them is
called as if they matched.

The call: ``POST`` of an ``admission.k8s.io/v1`` AdmissionReview (uid, kind, resource,
subResource, requestKind, requestResource, requestSubResource, name, namespace,
operation, userInfo, object, oldObject, dryRun, options) to ``clientConfig.url`` or, for
``clientConfig.service``, ``https://NAME.NAMESPACE.svc:PORT/PATH`` (kvert has no service
network: give :class:`WebhookClient` a ``service_resolver`` to map services to reachable
URLs, as ``kvert up`` does with :class:`EndpointServiceResolver`; otherwise the lookup fails
and ``failurePolicy`` applies). ``caBundle`` (base64 PEM)
is the trust root, the host name is verified; ``?timeout=Ns`` is added as kube-apiserver
does, and ``timeoutSeconds`` (default 10, at most 30) bounds the call.

Failures, as Kubernetes reports them:

- the call fails (connection, TLS, timeout, non-2xx, undecodable or invalid response):
  with ``failurePolicy: Fail`` (the default) 500 ``Internal error occurred: failed calling
  webhook "NAME": failed to call webhook: Post "URL?timeout=10s": ...``; with ``Ignore``
  the webhook is skipped;
- ``allowed: false``: the response's ``status`` (code, at least 400, default 400; reason;
  message) as ``admission webhook "NAME" denied the request: MESSAGE`` (``... denied the
  request without explanation`` without a message); an empty reason is filled from the
  code so kvert raises the matching error class;
- on a dry run, a webhook whose ``sideEffects`` is not ``None`` / ``NoneOnDryRun`` refuses
  the request (400 ``admission webhook "NAME" does not support dry run``).

Mutating webhooks answer with ``patchType: JSONPatch`` and a base64 ``patch``, applied to
the object in order (the object is defaulted again afterwards). ``reinvocationPolicy:
IfNeeded``: after the first pass, each such webhook whose output a later webhook changed
is called once more, in order (Kubernetes also reinvokes the in-tree mutating plugins;
kvert does not). Validating webhooks run concurrently; the first failing one in order
decides the error. Response ``warnings`` are collected on ``attrs.options["warnings"]``.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import json
import socket
import ssl
import uuid
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import aiohttp
import jsonpatch

from kvert.api import defaults
from kvert.api import pods as podutil
from kvert.api.errors import ApiError, BadRequest, Cause, InternalError, NotFound
from kvert.api.kinds import by_key
from kvert.api.meta import deep_copy
from kvert.api.selectors import LabelSelector, SelectorError
from kvert.apiserver import decoding
from kvert.registry.admission import CONNECT, CREATE, DELETE, UPDATE, Attributes
from kvert.store.base import Store

MUTATING_CONFIGURATIONS = "admissionregistration.k8s.io/mutatingwebhookconfigurations"
VALIDATING_CONFIGURATIONS = "admissionregistration.k8s.io/validatingwebhookconfigurations"
ADMISSION_REVIEW_VERSION = "admission.k8s.io/v1"
DEFAULT_TIMEOUT_SECONDS = 10
MAX_TIMEOUT_SECONDS = 30

_OPTIONS_KIND = {CREATE: "CreateOptions", UPDATE: "UpdateOptions", DELETE: "DeleteOptions",
                 CONNECT: ""}
_REASON_BY_CODE = {400: "BadRequest", 401: "Unauthorized", 403: "Forbidden", 404: "NotFound",
                   405: "MethodNotAllowed", 409: "Conflict", 410: "Gone", 415: "UnsupportedMediaType",
                   422: "Invalid", 429: "TooManyRequests", 500: "InternalError", 503: "ServiceUnavailable",
                   504: "Timeout"}


class WebhookCallError(Exception):
    """``ErrCallingWebhook``: the webhook could not be called or answered nonsense; the
    webhook's failurePolicy decides what happens."""

    def __init__(self, webhook: str, reason: str):
        super().__init__(f'failed calling webhook "{webhook}": {reason}')
        self.webhook = webhook
        self.reason = reason


class _CallFailed(Exception):
    """A transport failure, worded as Go's HTTP client would (``Post "URL": ...``)."""


ServiceResolver = Callable[[dict], str]
SERVICE_NAME_LABEL = "kubernetes.io/service-name"
# containerRuntimeVersion prefixes of nodes whose pods share the host's network (kvert's
# cgroupfs runtime): their endpoints are dialed at the node's address
HOST_NETWORK_RUNTIMES = ("cgroupfs://",)


def _service_path(service: dict) -> str:
    path = service.get("path") or "/"
    return path if path.startswith("/") else "/" + path


def service_url(service: dict) -> str:
    """``clientConfig.service`` as the in-cluster URL kube-apiserver would dial."""
    port = service.get("port") or 443
    return f"https://{service.get('name', '')}.{service.get('namespace', '')}.svc:{port}{_service_path(service)}"


class EndpointServiceResolver:
    """``clientConfig.service`` to one of the Service's ready endpoints, as kube-apiserver's
    endpoint routing resolves it (``proxy.ResolveEndpoint``, ``--enable-aggregator-routing``):
    the Service port named by ``port`` (default 443), its EndpointSlices' ready endpoints
    (the first one), their port of the same name. An endpoint on a node whose pods share
    the host's network (the cgroupfs runtime, from its ``nodeInfo``) is dialed at the node's
    InternalIP, where the pod listens. Errors are ``ValueError``s with upstream's words."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def __call__(self, service: dict) -> str:
        namespace, name = str(service.get("namespace") or ""), str(service.get("name") or "")
        port = service.get("port") or 443
        try:
            svc = self.store.get("services", namespace, name)
        except NotFound:
            raise ValueError(f'service "{name}" not found') from None
        svc_port = next((p for p in (svc.get("spec") or {}).get("ports") or []
                         if isinstance(p, dict) and p.get("port") == port), None)
        if svc_port is None:
            raise ValueError(f'no service port {port} found for service "{name}"')
        slices = self.store.list("discovery.k8s.io/endpointslices", namespace=namespace,
                                 label_selector=f"{SERVICE_NAME_LABEL}={name}").items
        for endpoint_slice in sorted(slices, key=lambda s: (s.get("metadata") or {}).get("name", "")):
            target = next((p.get("port") for p in endpoint_slice.get("ports") or []
                           if isinstance(p, dict) and (p.get("name") or "") == (svc_port.get("name") or "")), None)
            if not isinstance(target, int):
                continue
            for endpoint in endpoint_slice.get("endpoints") or []:
                addresses = endpoint.get("addresses") or []
                if not addresses or (endpoint.get("conditions") or {}).get("ready") is False:
                    continue
                host = self._host_network_address(endpoint.get("nodeName")) or str(addresses[0])
                host = f"[{host}]" if ":" in host else host
                return f"https://{host}:{target}{_service_path(service)}"
        raise ValueError(f'no endpoints available for service "{name}"')

    def _host_network_address(self, node_name: Any) -> str | None:
        if not node_name:
            return None
        try:
            node = self.store.get("nodes", "", str(node_name))
        except NotFound:
            return None
        status = node.get("status") or {}
        runtime = str((status.get("nodeInfo") or {}).get("containerRuntimeVersion") or "")
        if not runtime.startswith(HOST_NETWORK_RUNTIMES):
            return None
        return next((a.get("address") for a in status.get("addresses") or []
                     if isinstance(a, dict) and a.get("type") == "InternalIP"), None)


class WebhookClient:
    """Sends AdmissionReviews over HTTPS with aiohttp.

    ``service_resolver`` maps a ``clientConfig.service`` to a URL (default
    :func:`service_url`); TLS then verifies the certificate for ``NAME.NAMESPACE.svc``
    whatever address the URL names. SSL contexts are cached per ``caBundle``.
    """

    def __init__(self, service_resolver: ServiceResolver | None = None):
        self.service_resolver = service_resolver or service_url
        self._contexts: dict[str, ssl.SSLContext] = {}

    def endpoint(self, client_config: dict) -> tuple[str, str | None]:
        """The URL to POST to and the TLS server name to verify (None: the URL's host).
        Only https: an AdmissionReview carries the objects, secrets too."""
        if client_config.get("url"):
            url, server_name = str(client_config["url"]), None
        elif isinstance(client_config.get("service"), dict):
            service = client_config["service"]
            url = self.service_resolver(service)
            server_name = f"{service.get('name', '')}.{service.get('namespace', '')}.svc"
        else:
            raise ValueError("webhook clientConfig has neither url nor service")
        scheme = urlsplit(url).scheme
        if scheme != "https":
            raise ValueError(f"webhook URL {url!r}: 'https' is the only allowed URL scheme "
                             f"(got {scheme!r})")
        return url, server_name

    def ssl_context(self, ca_bundle: str | None) -> ssl.SSLContext:
        key = ca_bundle or ""
        ctx = self._contexts.get(key)
        if ctx is None:
            if ca_bundle:
                pem = base64.b64decode(ca_bundle, validate=False).decode("ascii", "replace")
                ctx = ssl.create_default_context(cadata=pem)
            else:
                ctx = ssl.create_default_context()
            self._contexts[key] = ctx
        return ctx

    async def post(self, url: str, body: bytes, *, ca_bundle: str | None, server_name: str | None,
                   timeout: float) -> tuple[int, bytes]:
        """POST ``body``; returns (status, response body) or raises :class:`_CallFailed`."""
        parts = urlsplit(url)
        if parts.scheme != "https":
            raise _CallFailed(f'Post "{url}": refusing to send an AdmissionReview in cleartext')
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        kwargs: dict[str, Any] = {"data": body, "headers": headers,
                                  "ssl": self.ssl_context(ca_bundle)}
        if server_name:
            kwargs["server_hostname"] = server_name
        try:
            async with asyncio.timeout(timeout):
                async with aiohttp.ClientSession(
                        timeout=aiohttp.ClientTimeout(total=timeout)) as session:
                    async with session.post(url, **kwargs) as resp:
                        return resp.status, await resp.read()
        except (TimeoutError, aiohttp.ServerTimeoutError):
            raise _CallFailed(f'Post "{url}": context deadline exceeded') from None
        except aiohttp.ClientConnectorCertificateError as e:
            raise _CallFailed(f'Post "{url}": tls: failed to verify certificate: '
                              f"{_ssl_reason(e.certificate_error)}") from None
        except aiohttp.ClientSSLError as e:
            raise _CallFailed(f'Post "{url}": tls: {_ssl_reason(e.os_error)}') from None
        except aiohttp.ClientConnectorError as e:
            raise _CallFailed(f'Post "{url}": {_dial_error(e, parts)}') from None
        except aiohttp.ClientError as e:
            raise _CallFailed(f'Post "{url}": {e or type(e).__name__}') from None
        except OSError as e:
            raise _CallFailed(f'Post "{url}": {e.strerror or e}') from None


_UNKNOWN_AUTHORITY = ("unable to get local issuer certificate", "self signed certificate",
                      "self-signed certificate", "unable to get issuer certificate")


def _ssl_reason(err: Any) -> str:
    reason = str(getattr(err, "verify_message", None) or getattr(err, "reason", None) or err)
    if any(reason.startswith(text) for text in _UNKNOWN_AUTHORITY):
        return "x509: certificate signed by unknown authority"  # Go's wording
    return reason


def _dial_error(e: aiohttp.ClientConnectorError, parts: Any) -> str:
    host = parts.hostname or ""
    port = parts.port or 443
    os_error = e.os_error
    if isinstance(os_error, socket.gaierror):
        return f"dial tcp: lookup {host}: no such host"
    if isinstance(os_error, ConnectionRefusedError):
        return f"dial tcp {host}:{port}: connect: connection refused"
    text = (getattr(os_error, "strerror", None) or str(os_error) or str(e)).lower()
    return f"dial tcp {host}:{port}: connect: {text}"


# -- matching -----------------------------------------------------------------------------------

def _effective_namespace(attrs: Attributes) -> str:
    # Kubernetes sets a Namespace request's namespace to the namespace's own name.
    return attrs.name if attrs.resource == "namespaces" else attrs.namespace


def _wildcard(items: Any, value: str) -> bool:
    return any(item == "*" or item == value for item in items or [])


def rule_matches(rule: dict, attrs: Attributes) -> bool:
    """``rules.Matcher``: scope, operation, group, version and resource/subresource."""
    try:
        rt = by_key(attrs.resource)
    except KeyError:
        return False
    scope = rule.get("scope") or "*"
    namespace = _effective_namespace(attrs)
    if scope == "Namespaced":
        if attrs.resource == "namespaces" or not namespace:
            return False
    elif scope == "Cluster":
        if not (attrs.resource == "namespaces" or not namespace):
            return False
    elif scope != "*":
        return False
    if not _wildcard(rule.get("operations"), attrs.operation):
        return False
    if not _wildcard(rule.get("apiGroups"), rt.group):
        return False
    if not _wildcard(rule.get("apiVersions"), rt.version):
        return False
    for res in rule.get("resources") or []:
        name, _, sub = str(res).partition("/")
        if (name == "*" or name == rt.plural) and (sub == "*" or sub == attrs.subresource):
            return True
    return False


def _selector(raw: Any) -> LabelSelector:
    if raw is None:
        return LabelSelector.everything()  # the API defaults an absent selector to {}
    try:
        return LabelSelector.from_dict(raw)
    except SelectorError as e:
        raise InternalError(f"Internal error occurred: {e}") from e


def _labels(obj: Any) -> dict:
    if not isinstance(obj, dict):
        return {}
    labels = (obj.get("metadata") or {}).get("labels")
    return labels if isinstance(labels, dict) else {}


def is_exempt(attrs: Attributes) -> bool:
    """Admission of webhook configurations (and admission policies) never calls webhooks."""
    return attrs.resource.startswith("admissionregistration.k8s.io/")


# -- the plugins -------------------------------------------------------------------------------

class _WebhookDispatcher:
    configurations = ""
    mutating = False

    def __init__(self, store: Store, client: WebhookClient | None = None):
        self.store = store
        self.client = client or WebhookClient()
        # As kube-apiserver's configuration informer: the webhooks are listed again only
        # after a configuration changed (a watch of them has something queued), not on
        # every write.
        self._changes: Any = None
        self._hooks: list[dict] = []

    def hooks(self) -> list[dict]:
        """Every webhook of every configuration, configurations sorted by name (read them,
        never change them: they are kept until a configuration changes)."""
        changes = self._changes
        if changes is not None and not changes.stopped and not changes.pending():
            return self._hooks
        if changes is not None:
            changes.stop()
        try:
            self._changes = self.store.watch(self.configurations)   # before the list: nothing missed
        except ApiError:
            self._changes = None
        configs = self.store.list(self.configurations).items
        configs.sort(key=lambda c: (c.get("metadata") or {}).get("name", ""))
        self._hooks = [hook for config in configs for hook in config.get("webhooks") or []
                       if isinstance(hook, dict)]
        return self._hooks

    def should_call(self, hook: dict, attrs: Attributes) -> bool:
        if not any(isinstance(r, dict) and rule_matches(r, attrs) for r in hook.get("rules") or []):
            return False
        if not self._namespace_matches(hook, attrs):
            return False
        selector = _selector(hook.get("objectSelector"))
        if selector.empty:
            return True
        return any(isinstance(o, dict) and selector.matches(_labels(o))
                   for o in (attrs.object, attrs.old_object))

    def _namespace_matches(self, hook: dict, attrs: Attributes) -> bool:
        namespace = _effective_namespace(attrs)
        if not namespace and attrs.resource != "namespaces":
            return True  # cluster-scoped objects are never exempted
        selector = _selector(hook.get("namespaceSelector"))
        if selector.empty:
            return True
        if attrs.resource == "namespaces":
            obj = attrs.old_object if attrs.operation == DELETE else attrs.object
            return selector.matches(_labels(obj))
        try:
            ns = self.store.get("namespaces", "", namespace)
        except NotFound:
            raise NotFound("namespaces", namespace) from None
        return selector.matches(_labels(ns))

    def _check_dry_run(self, hook: dict, attrs: Attributes) -> None:
        if not attrs.dry_run:
            return
        side_effects = hook.get("sideEffects")
        if side_effects is None:
            raise WebhookCallError(hook.get("name", ""), "Webhook SideEffects is nil")
        if side_effects not in ("None", "NoneOnDryRun"):
            raise BadRequest(f'admission webhook "{hook.get("name", "")}" does not support dry run')

    async def call(self, hook: dict, attrs: Attributes) -> dict:
        """Call one webhook; the verified ``response`` of its AdmissionReview.

        Raises :class:`WebhookCallError` (failurePolicy applies) or an ApiError.
        """
        name = hook.get("name", "")
        self._check_dry_run(hook, attrs)
        uid = str(uuid.uuid4())
        try:
            body = json.dumps(admission_review(attrs, uid)).encode()
        except (TypeError, ValueError) as e:
            raise WebhookCallError(name, f"could not create admission objects: {e}") from e
        timeout = hook.get("timeoutSeconds")
        timeout = DEFAULT_TIMEOUT_SECONDS if not isinstance(timeout, int) else timeout
        timeout = max(1, min(MAX_TIMEOUT_SECONDS, timeout))
        config = hook.get("clientConfig") or {}
        try:
            url, server_name = self.client.endpoint(config)
            url = _with_timeout(url, timeout)
            self.client.ssl_context(config.get("caBundle"))
        except (ValueError, ssl.SSLError, binascii.Error) as e:
            raise WebhookCallError(name, f"could not get REST client: {e}") from e
        try:
            status, data = await self.client.post(url, body, ca_bundle=config.get("caBundle"),
                                                  server_name=server_name, timeout=timeout)
        except _CallFailed as e:
            raise WebhookCallError(name, f"failed to call webhook: {e}") from None
        if not 200 <= status <= 206:
            raise WebhookCallError(name, f"failed to call webhook: {_http_error(status, data)}")
        try:
            review = json.loads(data)
        except ValueError as e:
            raise WebhookCallError(name, f"failed to call webhook: {e}") from None
        try:
            return verify_response(review, uid, self.mutating)
        except ValueError as e:
            raise WebhookCallError(name, f"received invalid webhook response: {e}") from None

    def _collect_warnings(self, attrs: Attributes, response: dict) -> None:
        warnings = response.get("warnings")
        if isinstance(warnings, list) and warnings:
            attrs.options.setdefault("warnings", []).extend(str(w) for w in warnings)


def _ignores_failures(hook: dict) -> bool:
    return hook.get("failurePolicy") == "Ignore"


def _failed(err: WebhookCallError) -> InternalError:
    error = InternalError(f"Internal error occurred: {err}")
    error.causes = [Cause("", str(err), "")]
    return error


class MutatingAdmissionWebhook(_WebhookDispatcher):
    name = "MutatingAdmissionWebhook"
    configurations = MUTATING_CONFIGURATIONS
    mutating = True

    async def admit(self, attrs: Attributes) -> None:
        if is_exempt(attrs):
            return
        hooks = self.hooks()
        if not hooks:
            return
        outputs: list[tuple[dict, Any]] = []  # (IfNeeded webhook, object after its call)
        for hook in hooks:
            # matched against the object as earlier webhooks left it, as Kubernetes does
            if not self.should_call(hook, attrs):
                continue
            await self._invoke(hook, attrs)
            if hook.get("reinvocationPolicy") == "IfNeeded":
                outputs.append((hook, deep_copy(attrs.object)))
        # Reinvocation: once more for each IfNeeded webhook whose output was changed later
        # (never a webhook that was not called in the first round).
        for hook, output in outputs:
            if output != attrs.object and self.should_call(hook, attrs):
                await self._invoke(hook, attrs)
        if attrs.operation == CREATE and attrs.resource == "pods" and isinstance(attrs.object, dict):
            status = attrs.object.get("status")
            if isinstance(status, dict) and "qosClass" in status:
                status["qosClass"] = podutil.compute_qos_class(attrs.object)

    async def _invoke(self, hook: dict, attrs: Attributes) -> None:
        name = hook.get("name", "")
        try:
            response = await self.call(hook, attrs)
        except WebhookCallError as e:
            if _ignores_failures(hook):
                return
            raise _failed(e) from None
        self._collect_warnings(attrs, response)
        if not response.get("allowed"):
            raise rejection(name, response.get("status"))
        patch = response.get("patch")
        if not patch:
            return
        try:
            operations = json.loads(base64.b64decode(patch, validate=True))
            if not isinstance(operations, list):
                raise ValueError("a JSON patch must be a list of operations")
        except (ValueError, binascii.Error) as e:
            error = WebhookCallError(name, f"received undecodable patch in webhook response: {e}")
            if _ignores_failures(hook):
                return
            raise _failed(error) from None
        if not operations:
            return
        if not isinstance(attrs.object, dict):
            raise InternalError(f'Internal error occurred: admission webhook "{name}" attempted to '
                                "modify the object, which is not supported for this operation")
        try:
            patched = jsonpatch.JsonPatch(operations).apply(deep_copy(attrs.object))
        except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException, TypeError, KeyError,
                IndexError) as e:
            raise InternalError(f"Internal error occurred: {e}") from e
        if not isinstance(patched, dict):
            raise InternalError(f'Internal error occurred: admission webhook "{name}" replaced the '
                                "object with a non-object")
        try:
            # the patched object is decoded into its type again, as kube-apiserver does
            patched = decoding.decode(by_key(attrs.resource), patched).object
        except decoding.DecodeError as e:
            raise InternalError(f"Internal error occurred: {e.problem}") from None
        defaults.apply_defaults(patched)
        attrs.object.clear()
        attrs.object.update(patched)


class ValidatingAdmissionWebhook(_WebhookDispatcher):
    name = "ValidatingAdmissionWebhook"
    configurations = VALIDATING_CONFIGURATIONS
    mutating = False

    async def validate(self, attrs: Attributes) -> None:
        if is_exempt(attrs):
            return
        hooks = [h for h in self.hooks() if self.should_call(h, attrs)]
        if not hooks:
            return
        results = await asyncio.gather(*(self._invoke(h, attrs) for h in hooks),
                                       return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException):
                raise result

    async def _invoke(self, hook: dict, attrs: Attributes) -> None:
        try:
            response = await self.call(hook, attrs)
        except WebhookCallError as e:
            if _ignores_failures(hook):
                return
            raise _failed(e) from None
        self._collect_warnings(attrs, response)
        if not response.get("allowed"):
            raise rejection(hook.get("name", ""), response.get("status"))


# -- AdmissionReview ----------------------------------------------------------------------------

def admission_review(attrs: Attributes, uid: str) -> dict:
    """The ``admission.k8s.io/v1`` AdmissionReview request for ``attrs``."""
    rt = by_key(attrs.resource)
    kind = {"group": rt.group, "version": rt.version, "kind": rt.kind}
    resource = {"group": rt.group, "version": rt.version, "resource": rt.plural}
    request: dict[str, Any] = {"uid": uid, "kind": kind, "resource": resource}
    if attrs.subresource:
        request["subResource"] = attrs.subresource
    request["requestKind"] = dict(kind)
    request["requestResource"] = dict(resource)
    if attrs.subresource:
        request["requestSubResource"] = attrs.subresource
    if attrs.name:
        request["name"] = attrs.name
    namespace = _effective_namespace(attrs)
    if namespace:
        request["namespace"] = namespace
    request["operation"] = attrs.operation
    user_info: dict[str, Any] = {"username": attrs.user or ""}
    groups = attrs.options.get("groups")
    if isinstance(groups, list):
        user_info["groups"] = list(groups)
    request["userInfo"] = user_info
    request["object"] = attrs.object
    request["oldObject"] = attrs.old_object
    request["dryRun"] = bool(attrs.dry_run)
    options_kind = _OPTIONS_KIND.get(attrs.operation)
    if options_kind:
        options: dict[str, Any] = {"kind": options_kind, "apiVersion": "meta.k8s.io/v1"}
        if attrs.dry_run:
            options["dryRun"] = ["All"]
        request["options"] = options
    return {"apiVersion": ADMISSION_REVIEW_VERSION, "kind": "AdmissionReview", "request": request}


def verify_response(review: Any, uid: str, mutating: bool) -> dict:
    """``VerifyAdmissionResponse`` for v1; raises ValueError with Kubernetes' wording."""
    if not isinstance(review, dict):
        raise ValueError("webhook response was absent")
    response = review.get("response")
    if not isinstance(response, dict):
        raise ValueError("webhook response was absent")
    if response.get("uid") != uid:
        raise ValueError(f'expected response.uid="{uid}", got "{response.get("uid", "")}"')
    api_version, kind = review.get("apiVersion", ""), review.get("kind", "")
    if (api_version, kind) != (ADMISSION_REVIEW_VERSION, "AdmissionReview"):
        raise ValueError(f"expected webhook response of {ADMISSION_REVIEW_VERSION}, "
                         f"Kind=AdmissionReview, got {api_version}, Kind={kind}")
    patch, patch_type = response.get("patch"), response.get("patchType") or ""
    if patch and not patch_type:
        raise ValueError("webhook returned response.patch but not response.patchType")
    if patch and patch_type != "JSONPatch":
        raise ValueError(f'webhook returned invalid response.patchType of "{patch_type}"')
    if patch and not mutating:
        raise ValueError("validating webhook may not return response.patch")
    return response


def rejection(webhook: str, status: Any) -> ApiError:
    """``webhookerrors.ToStatusErr``: the denial as the webhook's Status."""
    status = dict(status) if isinstance(status, dict) else {}
    code = status.get("code")
    code = code if isinstance(code, int) and code >= 400 else 400
    denied = f'admission webhook "{webhook}" denied the request'
    message, reason = status.get("message") or "", status.get("reason") or ""
    if message:
        text = f"{denied}: {message}"
    elif reason:
        text = f"{denied}: {reason}"
    else:
        text = f"{denied} without explanation"
    reason = reason or _REASON_BY_CODE.get(code, "")
    full = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": text,
            "reason": reason, "code": code}
    if isinstance(status.get("details"), dict):
        full["details"] = status["details"]
    err = ApiError.from_status(full)
    err.reason = reason
    return err


def _with_timeout(url: str, seconds: int) -> str:
    separator = "&" if "?" in url else "?"
    return f"{url}{separator}timeout={seconds}s"


def _http_error(status: int, data: bytes) -> str:
    """What client-go reports for a non-2xx answer: the Status message it carried, else a
    generic sentence by code."""
    try:
        body = json.loads(data)
    except ValueError:
        body = None
    if isinstance(body, dict) and body.get("kind") == "Status" and body.get("message"):
        return str(body["message"])
    text = data.decode("utf-8", "replace").strip()
    if status == 404:
        return "the server could not find the requested resource"
    if status >= 500:
        return f'an error on the server ("{text}") has prevented the request from succeeding'
    return f"the server responded with the status code {status} but did not return more information"


__all__ = ["EndpointServiceResolver", "MutatingAdmissionWebhook", "ValidatingAdmissionWebhook", "WebhookClient",
           "WebhookCallError", "admission_review", "rule_matches", "service_url",
           "verify_response", "rejection"]
