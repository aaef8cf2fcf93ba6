"""APIServices, as kube-apiserver's aggregator keeps them, minus the proxying.

Two upstream controllers in one loop over the ``apiregistration.k8s.io/v1`` APIServices:

* **autoregistration** (kube-aggregator's ``autoRegisterController``, fed by kube-apiserver's
  ``apiServicesToRegister`` and the ``crdRegistrationController``): one local APIService
  (no ``spec.service``) named ``VERSION.GROUP`` (``v1.`` for the core group) per group version
  the server serves. The built-in ones carry the priorities of kube-apiserver's
  ``apiVersionPriorities`` (a served group version missing from that table gets none, as
  upstream) and the label ``kube-aggregator.kubernetes.io/automanaged: onstart``: created when
  missing at start and reconciled once, then left to the administrator. A served version of
  a CustomResourceDefinition gets groupPriorityMinimum 1000 and versionPriority 100 and the
  label ``true``: kept as declared, and deleted once no CRD serves that version any more.
  The metrics.k8s.io group kvert's API server answers itself is registered as local too, with
  the priorities of metrics-server's manifest (100/100), since kvert serves it locally.
  Which APIService to create, update or delete follows ``checkAPIService``'s table.
* **availability** (``AvailableConditionController``, the local and the remote one): a local
  APIService is ``Available=True`` (``Local``, ``Local APIServices are always available``).
  One naming a service is checked as upstream: ``ServiceNotFound``; for a ClusterIP service,
  ``ServicePortError`` (no port equal to ``spec.service.port``), ``EndpointsNotFound`` (no
  EndpointSlice) and ``MissingEndpoints`` (no ready endpoint on the port's name). Where
  upstream would then call the service's discovery endpoint, kvert does not proxy aggregated
  APIs: the APIService is ``Available=False`` with reason ``FailedDiscoveryCheck`` and a
  message saying so. The condition keeps its ``lastTransitionTime`` while its status stays,
  and a status that did not change is not written; writes go through ``apiservices/status``.

Upstream's strategy also marks a local APIService available when it is created; kvert's
registry has no APIService strategy, so this controller sets the condition just after.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kvert.api import kinds
from kvert.api.conditions import find_condition, new_condition, set_condition
from kvert.api.errors import AlreadyExists, Conflict, NotFound
from kvert.api.gostrings import quote
from kvert.api.meta import deep_copy, format_time
from kvert.api.types import Obj
from kvert.client.base import Client
from kvert.clock import Clock
from kvert.controllers.base import NAMESPACE_INDEX, Controller, InformerFactory, index_namespace, safe_handler

APISERVICES = "apiregistration.k8s.io/apiservices"
CRDS = "apiextensions.k8s.io/customresourcedefinitions"
SERVICES = "services"
ENDPOINT_SLICES = "discovery.k8s.io/endpointslices"
GROUP = "apiregistration.k8s.io"
API_VERSION = "apiregistration.k8s.io/v1"

AUTOMANAGED_LABEL = "kube-aggregator.kubernetes.io/automanaged"
ON_START = "onstart"           # manageOnStart: reconciled once, when the server starts
CONTINUOUSLY = "true"          # manageContinuously: kept as desired (CRD group versions)
SERVICE_NAME_LABEL = "kubernetes.io/service-name"
DEFAULT_PORT = 443

# kube-apiserver's apiVersionPriorities (cmd/kube-apiserver/app/aggregator.go merged with
# pkg/controlplane/apiserver DefaultGenericAPIServicePriorities): (group, version) ->
# (groupPriorityMinimum, versionPriority), for the versions kvert serves.
API_VERSION_PRIORITIES: dict[tuple[str, str], tuple[int, int]] = {
    ("", "v1"): (18000, 1),
    ("apps", "v1"): (17800, 15),
    ("events.k8s.io", "v1"): (17750, 15),
    ("authentication.k8s.io", "v1"): (17700, 15),
    ("authorization.k8s.io", "v1"): (17600, 15),
    ("autoscaling", "v1"): (17500, 15),
    ("autoscaling", "v2"): (17500, 30),
    ("batch", "v1"): (17400, 15),
    ("certificates.k8s.io", "v1"): (17300, 15),
    ("networking.k8s.io", "v1"): (17200, 15),
    ("policy", "v1"): (17100, 15),
    ("rbac.authorization.k8s.io", "v1"): (17000, 15),
    ("storage.k8s.io", "v1"): (16800, 15),
    ("apiextensions.k8s.io", "v1"): (16700, 15),
    ("admissionregistration.k8s.io", "v1"): (16700, 15),
    ("scheduling.k8s.io", "v1"): (16600, 15),
    ("scheduling.k8s.io", "v1alpha1"): (16600, 9),
    ("coordination.k8s.io", "v1"): (16500, 15),
    ("node.k8s.io", "v1"): (16300, 15),
    ("discovery.k8s.io", "v1"): (16200, 15),
    ("flowcontrol.apiserver.k8s.io", "v1"): (16100, 21),
    ("resource.k8s.io", "v1"): (16200, 21),
}
# crdRegistrationController: "CRDs should have relatively low priority"
CRD_PRIORITY = (1000, 100)
# metrics-server's APIService (its components.yaml), which kvert serves locally
METRICS_PRIORITY = (100, 100)

LOCAL_REASON = "Local"
LOCAL_MESSAGE = "Local APIServices are always available"


def api_service_name(group: str, version: str) -> str:
    """``VERSION.GROUP``: the name ``ValidateAPIService`` requires (``v1.`` for the core group)."""
    return f"{version}.{group}"


def _spec(group: str, version: str, priority: tuple[int, int]) -> Obj:
    """The spec as the API server stores it (``group`` is omitted when empty)."""
    spec: Obj = {"group": group} if group else {}
    spec.update({"version": version, "groupPriorityMinimum": priority[0],
                 "versionPriority": priority[1]})
    return spec


def builtin_group_versions() -> list[tuple[str, str]]:
    """The group versions of the built-in kinds this server stores (not its own group)."""
    seen: dict[tuple[str, str], None] = {}
    for rt in kinds.BUILTIN:
        if rt.group != GROUP:
            seen[(rt.group, rt.version)] = None
    return list(seen)


def _service_ref(api_service: Obj) -> Obj | None:
    service = (api_service.get("spec") or {}).get("service")
    return service if isinstance(service, dict) else None


class APIServiceController(Controller):
    """Autoregistration and the Available condition of APIServices (see the module)."""

    name = "apiservices"

    def __init__(self, client: Client, clock: Clock, *,
                 local_group_versions: Iterable[tuple[str, str]] = (),
                 informers: InformerFactory | None = None, workers: int = 1):
        """``local_group_versions``: group versions served outside the registry (the API
        server's metrics.k8s.io), registered as local APIServices too."""
        super().__init__(client, clock, informers=informers, workers=workers)
        self._on_start: dict[str, Obj] = {}
        for group, version in builtin_group_versions():
            priority = API_VERSION_PRIORITIES.get((group, version))
            if priority is not None:      # makeAPIService: "Skipping APIService creation"
                self._on_start[api_service_name(group, version)] = _spec(group, version, priority)
        for group, version in local_group_versions:
            self._on_start.setdefault(api_service_name(group, version),
                                      _spec(group, version, METRICS_PRIORITY))
        self._at_start: set[str] | None = None     # names present when the workers started
        self._synced_once: set[str] = set()
        self.apiservices = self.use(APISERVICES)
        self.crds = self.use(CRDS)
        self.services = self.use(SERVICES)
        self.slices = self.use(ENDPOINT_SLICES)
        if not self.slices.has_index(NAMESPACE_INDEX):
            self.slices.add_index(NAMESPACE_INDEX, index_namespace)
        self.apiservices.add_handlers(safe_handler(self._on_api_service),
                                      safe_handler(lambda old, new: self._on_api_service(new)),
                                      safe_handler(self._on_api_service))
        self.crds.add_handlers(safe_handler(self._on_crd),
                               safe_handler(self._on_crd_update),
                               safe_handler(self._on_crd))
        self.services.add_handlers(safe_handler(self._on_service),
                                   safe_handler(lambda old, new: self._on_service(new)),
                                   safe_handler(self._on_service))
        self.slices.add_handlers(safe_handler(self._on_slice),
                                 safe_handler(self._on_slice_update),
                                 safe_handler(self._on_slice))
        for name in self._on_start:
            self.enqueue(("register", name))

    # -- handlers ------------------------------------------------------------------------------

    def _on_api_service(self, obj: Obj) -> None:
        name = (obj.get("metadata") or {}).get("name", "")
        self.enqueue(("register", name))
        self.enqueue(("available", name))

    def _on_crd(self, crd: Obj) -> None:
        spec = crd.get("spec") or {}
        for version in spec.get("versions") or []:
            if isinstance(version, dict) and isinstance(version.get("name"), str):
                self.enqueue(("register", api_service_name(spec.get("group", ""), version["name"])))

    def _on_crd_update(self, old: Obj, new: Obj) -> None:
        self._on_crd(old)        # a version removed from the CRD goes away
        self._on_crd(new)

    def _on_service(self, service: Obj) -> None:
        meta = service.get("metadata") or {}
        self._enqueue_for_service(meta.get("namespace", ""), meta.get("name", ""))

    def _on_slice(self, slice_: Obj) -> None:
        meta = slice_.get("metadata") or {}
        service = (meta.get("labels") or {}).get(SERVICE_NAME_LABEL)
        if service:
            self._enqueue_for_service(meta.get("namespace", ""), service)

    def _on_slice_update(self, old: Obj, new: Obj) -> None:
        self._on_slice(old)
        self._on_slice(new)

    def _enqueue_for_service(self, namespace: str, name: str) -> None:
        for api_service in self.apiservices.list():
            ref = _service_ref(api_service)
            if ref is not None and ref.get("namespace") == namespace and ref.get("name") == name:
                self.enqueue(("available", api_service["metadata"]["name"]))

    # -- sync ----------------------------------------------------------------------------------

    async def sync(self, key: tuple[str, str]) -> None:
        if self._at_start is None:
            # the workers start once the caches have listed the store: what exists at start
            self._at_start = {o["metadata"]["name"] for o in self.apiservices.list()}
        what, name = key
        if what == "register":
            await self._register(name)
        else:
            await self._available(name)

    def desired(self, name: str) -> tuple[Obj, str] | None:
        """The spec and automanaged type this server wants for the APIService ``name``."""
        if name in self._on_start:
            return self._on_start[name], ON_START
        for crd in self.crds.list():
            spec = crd.get("spec") or {}
            group = spec.get("group", "")
            for version in spec.get("versions") or []:
                if (isinstance(version, dict) and version.get("served")
                        and api_service_name(group, version.get("name", "")) == name):
                    return _spec(group, version["name"], CRD_PRIORITY), CONTINUOUSLY
        return None

    async def _register(self, name: str) -> None:
        """checkAPIService: create, update or delete ``name`` as its desired state says."""
        wanted = self.desired(name)
        current = self.apiservices.get(name)
        first = name not in self._synced_once
        await self._reconcile(name, wanted, current, first)
        self._synced_once.add(name)

    async def _reconcile(self, name: str, wanted: tuple[Obj, str] | None, current: Obj | None,
                         first: bool) -> None:
        if current is None and wanted is None:
            return
        if wanted is not None and wanted[1] == ON_START and not first:
            return          # synced once already
        if current is None:
            assert wanted is not None
            body = {"apiVersion": API_VERSION, "kind": "APIService",
                    "metadata": {"name": name, "labels": {AUTOMANAGED_LABEL: wanted[1]}},
                    "spec": deep_copy(wanted[0])}
            try:
                await self.client.create(APISERVICES, body)
            except AlreadyExists:
                pass        # created meanwhile: its event brings us back
            return
        managed = ((current.get("metadata") or {}).get("labels") or {}).get(AUTOMANAGED_LABEL)
        if managed not in (ON_START, CONTINUOUSLY):
            return          # not ours to manage
        assert self._at_start is not None
        if managed == ON_START and (name not in self._at_start or not first):
            return          # sync-on-start objects: only those present at start, only once
        try:
            if wanted is None:
                uid = (current.get("metadata") or {}).get("uid")
                await self.client.delete(APISERVICES, name,
                                         preconditions={"uid": uid} if uid else None)
            elif current.get("spec") != wanted[0]:
                updated = deep_copy(current)
                updated["spec"] = deep_copy(wanted[0])
                await self.client.update(APISERVICES, updated)
        except (NotFound, Conflict):
            pass            # changed meanwhile: its event brings us back

    async def _available(self, name: str) -> None:
        current = self.apiservices.get(name)
        if current is None:
            return
        reason, message = self._check(current)
        status = "True" if reason == LOCAL_REASON else "False"
        updated = deep_copy(current)
        changed = set_condition(updated.setdefault("status", {}),
                                new_condition("Available", status, reason, message),
                                now=format_time(self.clock.now()),
                                same=("status", "reason", "message"))
        if changed:
            try:
                await self.client.update_status(APISERVICES, updated)
            except (NotFound, Conflict):
                pass        # changed meanwhile: its event brings us back

    def _check(self, api_service: Obj) -> tuple[str, str]:
        """The Available condition's (reason, message): ``Local`` is the only True one."""
        ref = _service_ref(api_service)
        if ref is None:
            return LOCAL_REASON, LOCAL_MESSAGE
        namespace, name = ref.get("namespace", ""), ref.get("name", "")
        where = f"service/{name} in {quote(namespace)}"
        service = self.services.get(name, namespace)
        if service is None:
            return "ServiceNotFound", f"{where} is not present"
        spec: dict[str, Any] = service.get("spec") or {}
        if spec.get("type", "ClusterIP") == "ClusterIP":
            port = ref.get("port", DEFAULT_PORT)
            ports = [p for p in spec.get("ports") or [] if isinstance(p, dict) and p.get("port") == port]
            if not ports:
                return "ServicePortError", f"{where} is not listening on port {port}"
            port_name = ports[0].get("name") or ""
            slices = [s for s in self.slices.by_index(NAMESPACE_INDEX, namespace)
                      if ((s.get("metadata") or {}).get("labels") or {}).get(SERVICE_NAME_LABEL) == name]
            if not slices:
                return "EndpointsNotFound", f"cannot find endpointslices for {where}"
            if not any(_serves(s, port_name) for s in slices):
                return ("MissingEndpoints",
                        f"endpointslices for {where} have no addresses with port name {quote(port_name)}")
        group = (api_service.get("spec") or {}).get("group", "")
        version = (api_service.get("spec") or {}).get("version", "")
        path = f"/api/{version}" if not group else f"/apis/{group}/{version}"
        return ("FailedDiscoveryCheck",
                f"kvert does not proxy aggregated APIs: {path} is not served through {where}")


def _serves(slice_: Obj, port_name: str) -> bool:
    """hasAvailableEndpoint: a ready (or unknown) endpoint and a port of that name."""
    ready = any(isinstance(e, dict) and (e.get("conditions") or {}).get("ready") in (None, True)
                for e in slice_.get("endpoints") or [])
    return ready and any(isinstance(p, dict) and p.get("name") is not None
                         and p.get("name") == port_name and p.get("port") is not None
                         for p in slice_.get("ports") or [])


def available_condition(api_service: Obj) -> Obj | None:
    """The Available condition of an APIService, or None."""
    return find_condition(api_service.get("status"), "Available")
