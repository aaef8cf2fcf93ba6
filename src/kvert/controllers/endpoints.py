"""The Endpoints controller (kube-controller-manager's ``endpoints``): for every Service
with a selector, an Endpoints object of the same name listing the selected pods.

As upstream's (pkg/controller/endpoint/endpoints_controller.go): a pod counts when it is
not terminal, has an IP and is not terminating (``ShouldPodBeInEndpoints`` unless the
Service publishes not-ready addresses); ready pods go to ``addresses``, the others to
``notReadyAddresses``, each with ``nodeName`` and a ``targetRef``; each Service port's
``targetPort`` is resolved against the pod, and addresses with the same ports share a
subset (``RepackSubsets``). Labels are the Service's plus
``endpointslice.kubernetes.io/skip-mirror`` (the EndpointSlice controller makes the
slices) and ``service.kubernetes.io/headless`` for a headless Service. The Endpoints of a
deleted Service are deleted.

Not done: the ``endpoints.kubernetes.io/last-change-trigger-time`` annotation and the
1000-address cap (``endpoints.kubernetes.io/over-capacity``). Ports within a subset are
ordered by name and number (upstream orders them by a hash).
"""

from __future__ import annotations

from typing import Any

from kvert.api.errors import NotFound
from kvert.api.meta import deep_copy
from kvert.client.base import Client
from kvert.clock import Clock
from kvert.controllers.base import (
    NAMESPACE_INDEX,
    Controller,
    InformerFactory,
    index_namespace,
    object_key,
    safe_handler,
    split_key,
)
from kvert.controllers.endpointslice import (
    HEADLESS_LABEL,
    find_port,
    has_selector,
    pod_ip,
    selected_pods,
    should_pod_be_in_endpoints,
    should_set_hostname,
    target_ref,
)
from kvert.controllers.util import is_pod_ready

SERVICES, PODS, ENDPOINTS = "services", "pods", "endpoints"
SKIP_MIRROR_LABEL = "endpointslice.kubernetes.io/skip-mirror"


def _address(pod: dict, service: dict) -> dict:
    address: dict[str, Any] = {"ip": pod_ip(pod)}
    if should_set_hostname(pod, service):
        address["hostname"] = pod["spec"]["hostname"]
    node_name = (pod.get("spec") or {}).get("nodeName")
    if node_name:
        address["nodeName"] = node_name
    address["targetRef"] = target_ref(pod)
    return address


def _port(service_port: dict, number: int) -> dict:
    port: dict[str, Any] = {"port": number, "protocol": service_port.get("protocol", "TCP")}
    if service_port.get("name"):
        port = {"name": service_port["name"], **port}
    if service_port.get("appProtocol"):
        port["appProtocol"] = service_port["appProtocol"]
    return port


def subsets_for(service: dict, pods: list[dict]) -> list[dict]:
    """The ``subsets`` of a Service's Endpoints (repacked: one subset per port set)."""
    spec = service.get("spec") or {}
    publish = bool(spec.get("publishNotReadyAddresses"))
    groups: dict[tuple, dict] = {}
    for pod in selected_pods(pods, service):
        if not should_pod_be_in_endpoints(pod, include_terminating=publish):
            continue
        address = _address(pod, service)
        ready = publish or is_pod_ready(pod)
        ports = []
        if spec.get("ports") or spec.get("clusterIP") != "None":
            for sp in spec.get("ports") or []:
                number = find_port(pod, sp)
                if number is not None:
                    ports.append(_port(sp, number))
            if not ports:
                continue
        ports.sort(key=lambda p: (p.get("name", ""), p["port"], p["protocol"]))
        key = tuple((p.get("name", ""), p["port"], p["protocol"]) for p in ports)
        subset = groups.setdefault(key, {"addresses": [], "notReadyAddresses": [],
                                         "ports": ports})
        subset["addresses" if ready else "notReadyAddresses"].append(address)
    subsets = []
    for key in sorted(groups):
        subset = {k: v for k, v in groups[key].items() if v}
        for field in ("addresses", "notReadyAddresses"):
            if field in subset:
                subset[field].sort(key=lambda a: (a["ip"], a["targetRef"]["uid"]))
        subsets.append(subset)
    return subsets


class EndpointsController(Controller):
    name = "endpoints"

    def __init__(self, client: Client, clock: Clock, *, informers: InformerFactory | None = None,
                 workers: int = 1):
        super().__init__(client, clock, informers=informers, workers=workers)
        self.services = self.use(SERVICES)
        self.pods = self.use(PODS)
        self.endpoints = self.use(ENDPOINTS)
        for informer in (self.pods, self.services):
            if not informer.has_index(NAMESPACE_INDEX):
                informer.add_index(NAMESPACE_INDEX, index_namespace)
        self.services.add_handlers(safe_handler(self._service), safe_handler(
            lambda old, new: self._service(new)), safe_handler(self._service))
        self.pods.add_handlers(safe_handler(self._pod), safe_handler(self._pod_update),
                               safe_handler(self._pod))

    def _service(self, service: dict) -> None:
        self.enqueue(object_key(service))

    def _pod_update(self, old: dict, new: dict) -> None:
        # a relabelled pod leaves the services its old labels matched and joins the new ones
        self._pod(old)
        self._pod(new)

    def _pod(self, pod: dict) -> None:
        namespace = (pod.get("metadata") or {}).get("namespace", "")
        for service in self.services.by_index(NAMESPACE_INDEX, namespace):
            if (service.get("spec") or {}).get("selector") is not None \
                    and selected_pods([pod], service):
                self.enqueue(object_key(service))

    async def sync(self, key: str) -> None:
        namespace, name = split_key(key)
        service = self.services.get(name, namespace)
        if service is None:
            try:
                await self.client.delete(ENDPOINTS, name, namespace=namespace)
            except NotFound:
                pass
            return
        if not has_selector(service):
            return   # endpoints managed by someone else
        if (service.get("metadata") or {}).get("deletionTimestamp"):
            return
        subsets = subsets_for(service, self.pods.by_index(NAMESPACE_INDEX, namespace))
        labels = dict(service["metadata"].get("labels") or {})
        labels[SKIP_MIRROR_LABEL] = "true"
        if (service.get("spec") or {}).get("clusterIP") == "None":
            labels[HEADLESS_LABEL] = ""
        else:
            labels.pop(HEADLESS_LABEL, None)
        current = self.endpoints.get(name, namespace)
        if current is None:
            body: dict[str, Any] = {"apiVersion": "v1", "kind": "Endpoints",
                                    "metadata": {"name": name, "namespace": namespace,
                                                 "labels": labels}}
            if subsets:
                body["subsets"] = subsets
            await self.client.create(ENDPOINTS, body, namespace=namespace)
            return
        if (current.get("subsets") or []) == subsets and \
                (current["metadata"].get("labels") or {}) == labels:
            return
        updated = deep_copy(current)
        updated["metadata"]["labels"] = labels
        if subsets:
            updated["subsets"] = subsets
        else:
            updated.pop("subsets", None)
        await self.client.update(ENDPOINTS, updated)
