"""The EndpointSlice controller (kube-controller-manager's ``endpointslice``): for every
Service with a selector, EndpointSlices listing the selected pods' addresses.

As upstream's reconciler (pkg/controller/endpointslice, staging endpointslice/reconciler.go):

- a pod is an endpoint when it is not terminal and has an IP (``ShouldPodBeInEndpoints``
  with terminating pods included); its conditions are ``serving`` (PodReady),
  ``terminating`` (deletionTimestamp set) and ``ready`` (serving and not terminating, or
  the Service's ``publishNotReadyAddresses``); ``targetRef`` names the pod, ``nodeName`` its
  node, ``zone`` the node's ``topology.kubernetes.io/zone``, ``hostname`` its
  ``spec.hostname`` when its ``subdomain`` is the Service;
- ports come from the Service's, each ``targetPort`` resolved against the pod (a named
  port is looked up among its containers' ports): pods whose ports resolve alike share
  slices, at most 100 endpoints each;
- slices are named ``SERVICE-xxxxx``, carry the Service's labels plus
  ``kubernetes.io/service-name`` and ``endpointslice.kubernetes.io/managed-by``
  (``service.kubernetes.io/headless`` for a headless Service) and are owned by the Service
  (the garbage collector removes them with it);
- a Service selecting nothing gets one empty placeholder slice.

Not done: the ``endpoints.kubernetes.io/last-change-trigger-time`` annotation, topology
hints, dual stack, the minimal-churn packing of upstream (kvert fills slices in pod order).
"""

from __future__ import annotations

from typing import Any

from kvert.api.errors import NotFound
from kvert.api.meta import deep_copy
from kvert.api.selectors import LabelSelector
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
from kvert.controllers.util import generate_name_prefix, is_pod_ready

SERVICES, PODS, NODES = "services", "pods", "nodes"
SLICES = "discovery.k8s.io/endpointslices"
SERVICE_NAME_LABEL = "kubernetes.io/service-name"
MANAGED_BY_LABEL = "endpointslice.kubernetes.io/managed-by"
CONTROLLER_NAME = "endpointslice-controller.k8s.io"
HEADLESS_LABEL = "service.kubernetes.io/headless"
ZONE_LABEL = "topology.kubernetes.io/zone"
MAX_ENDPOINTS_PER_SLICE = 100     # --max-endpoints-per-slice
_SERVICE_INDEX = "service-name"


# ---- what upstream's endpointslice/util helpers compute -----------------------------------

def should_pod_be_in_endpoints(pod: dict, include_terminating: bool) -> bool:
    status = pod.get("status") or {}
    if status.get("phase") in ("Succeeded", "Failed"):
        return False
    if not status.get("podIP") and not status.get("podIPs"):
        return False
    if not include_terminating and (pod.get("metadata") or {}).get("deletionTimestamp"):
        return False
    return True


def pod_ip(pod: dict) -> str:
    status = pod.get("status") or {}
    ips = status.get("podIPs") or []
    return status.get("podIP") or (ips[0].get("ip", "") if ips else "")


def find_port(pod: dict, service_port: dict) -> int | None:
    """``podutil.FindPort``: a numeric targetPort as is, a named one among the containers'."""
    target = service_port.get("targetPort", service_port.get("port"))
    if isinstance(target, int) and not isinstance(target, bool):
        return target
    if isinstance(target, str) and target.isdigit():
        return int(target)
    protocol = service_port.get("protocol", "TCP")
    for container in (pod.get("spec") or {}).get("containers") or []:
        for port in container.get("ports") or []:
            if port.get("name") == target and port.get("protocol", "TCP") == protocol:
                return port.get("containerPort")
    return None


def should_set_hostname(pod: dict, service: dict) -> bool:
    spec = pod.get("spec") or {}
    return bool(spec.get("hostname")) and spec.get("subdomain") == service["metadata"]["name"] \
        and (pod.get("metadata") or {}).get("namespace") == service["metadata"].get("namespace")


def target_ref(pod: dict) -> dict:
    meta = pod["metadata"]
    return {"kind": "Pod", "namespace": meta.get("namespace", ""), "name": meta["name"],
            "uid": meta.get("uid", "")}


def selected_pods(pods: list[dict], service: dict) -> list[dict]:
    selector = LabelSelector.from_set((service.get("spec") or {}).get("selector"))
    return sorted((p for p in pods if selector.matches((p.get("metadata") or {}).get("labels"))),
                  key=lambda p: p["metadata"]["name"])


def has_selector(service: dict) -> bool:
    spec = service.get("spec") or {}
    return spec.get("type") != "ExternalName" and spec.get("selector") is not None


# ---- the controller -------------------------------------------------------------------------

def _endpoint_ports(service: dict, pod: dict) -> list[dict]:
    spec = service.get("spec") or {}
    ports = []
    for sp in spec.get("ports") or []:
        number = find_port(pod, sp)
        if number is None:
            continue
        port = {"name": sp.get("name", ""), "protocol": sp.get("protocol", "TCP"), "port": number}
        if sp.get("appProtocol"):
            port["appProtocol"] = sp["appProtocol"]
        ports.append(port)
    return ports


def _endpoint(pod: dict, node: dict | None, service: dict) -> dict:
    """``podToEndpoint``."""
    serving = is_pod_ready(pod)
    terminating = bool((pod.get("metadata") or {}).get("deletionTimestamp"))
    publish = bool((service.get("spec") or {}).get("publishNotReadyAddresses"))
    endpoint: dict[str, Any] = {
        "addresses": [pod_ip(pod)],
        "conditions": {"ready": publish or (serving and not terminating), "serving": serving,
                       "terminating": terminating},
    }
    if should_set_hostname(pod, service):
        endpoint["hostname"] = pod["spec"]["hostname"]
    endpoint["targetRef"] = target_ref(pod)
    node_name = (pod.get("spec") or {}).get("nodeName")
    if node_name:
        endpoint["nodeName"] = node_name
    zone = ((node or {}).get("metadata") or {}).get("labels", {}).get(ZONE_LABEL)
    if zone:
        endpoint["zone"] = zone
    return endpoint


def _ports_key(ports: list[dict] | None) -> tuple:
    return tuple(sorted((p.get("name") or "", p.get("protocol") or "", p.get("port") or 0,
                         p.get("appProtocol") or "") for p in ports or []))


def _index_service_name(obj: dict) -> list[str]:
    labels = (obj.get("metadata") or {}).get("labels") or {}
    if labels.get(MANAGED_BY_LABEL) != CONTROLLER_NAME or SERVICE_NAME_LABEL not in labels:
        return []
    return [f"{obj['metadata'].get('namespace', '')}/{labels[SERVICE_NAME_LABEL]}"]


class EndpointSliceController(Controller):
    name = "endpointslice"

    def __init__(self, client: Client, clock: Clock, *, informers: InformerFactory | None = None,
                 workers: int = 1, max_endpoints_per_slice: int = MAX_ENDPOINTS_PER_SLICE):
        super().__init__(client, clock, informers=informers, workers=workers)
        self.max_endpoints = max_endpoints_per_slice
        # per Service: (slice name, resourceVersion written, or None for deleted)
        self._written: dict[str, list[tuple[str, str | None]]] = {}
        self.services = self.use(SERVICES)
        self.pods = self.use(PODS)
        self.nodes = self.use(NODES)
        self.slices = self.use(SLICES)
        if not self.pods.has_index(NAMESPACE_INDEX):
            self.pods.add_index(NAMESPACE_INDEX, index_namespace)
        if not self.services.has_index(NAMESPACE_INDEX):
            self.services.add_index(NAMESPACE_INDEX, index_namespace)
        self.slices.add_index(_SERVICE_INDEX, _index_service_name)
        self.services.add_handlers(safe_handler(self._service), safe_handler(
            lambda old, new: self._service(new)), safe_handler(self._service))
        self.pods.add_handlers(safe_handler(self._pod), safe_handler(self._pod_updated),
                               safe_handler(self._pod))
        self.slices.add_handlers(None, safe_handler(lambda old, new: self._slice(new)),
                                 safe_handler(self._slice))

    def _service(self, service: dict) -> None:
        self.enqueue(object_key(service))

    def _pod(self, pod: dict) -> None:
        namespace = (pod.get("metadata") or {}).get("namespace", "")
        labels = (pod.get("metadata") or {}).get("labels") or {}
        for service in self.services.by_index(NAMESPACE_INDEX, namespace):
            selector = (service.get("spec") or {}).get("selector")
            if selector is not None and LabelSelector.from_set(selector).matches(labels):
                self.enqueue(object_key(service))

    def _pod_updated(self, old: dict, new: dict) -> None:
        # a relabelled pod leaves the services it matched
        self._pod(old)
        self._pod(new)

    def _slice(self, slice_: dict) -> None:
        # someone changed or deleted a slice of ours: put it back
        for key in _index_service_name(slice_):
            self.enqueue(key)

    async def sync(self, key: str) -> None:
        namespace, name = split_key(key)
        service = self.services.get(name, namespace)
        if service is None or not has_selector(service):
            # a deleted Service's slices go with it (owner references); one that lost its
            # selector keeps them, as upstream
            return
        if (service.get("metadata") or {}).get("deletionTimestamp"):
            return
        if self._stale(key):
            # upstream's EndpointSliceTracker: never act on a cache older than our own writes
            # (a slice made twice); the informer's event requeues the Service
            self.enqueue_after(key, 0.1)
            return
        desired = self._desired(service)
        existing = self.slices.by_index(_SERVICE_INDEX, key)
        self._written[key] = []
        await self._reconcile(service, desired, existing)

    def _stale(self, key: str) -> bool:
        namespace, _ = split_key(key)
        for name, version in self._written.get(key, ()):
            cached = self.slices.get(name, namespace)
            if version is None and cached is not None:
                return True
            if version is not None and (cached is None or _older(cached, version)):
                return True
        self._written.pop(key, None)
        return False

    def _desired(self, service: dict) -> dict[tuple, list[tuple[list[dict], list[dict]]]]:
        """Slices wanted, grouped by port set: key -> [(ports, endpoints)]."""
        namespace = service["metadata"].get("namespace", "")
        groups: dict[tuple, tuple[list[dict], list[dict]]] = {}
        for pod in selected_pods(self.pods.by_index(NAMESPACE_INDEX, namespace), service):
            if not should_pod_be_in_endpoints(pod, include_terminating=True):
                continue
            ports = _endpoint_ports(service, pod)
            node = self.nodes.get((pod.get("spec") or {}).get("nodeName") or "")
            group = groups.setdefault(_ports_key(ports), (ports, []))
            group[1].append(_endpoint(pod, node, service))
        chunks: dict[tuple, list[tuple[list[dict], list[dict]]]] = {}
        for key, (ports, endpoints) in groups.items():
            chunks[key] = [(ports, endpoints[i:i + self.max_endpoints])
                           for i in range(0, len(endpoints), self.max_endpoints)]
        return chunks

    async def _reconcile(self, service: dict, desired: dict, existing: list[dict]) -> None:
        by_key: dict[tuple, list[dict]] = {}
        for slice_ in sorted(existing, key=lambda s: s["metadata"]["name"]):
            by_key.setdefault(_ports_key(slice_.get("ports")), []).append(slice_)
        if not desired:
            # placeholder: one empty slice (newEndpointSlice with no ports)
            placeholder = [s for s in existing if not s.get("endpoints")]
            keep = placeholder[0] if placeholder else None
            for slice_ in existing:
                if slice_ is not keep:
                    await self._delete(slice_)
            await self._write(service, keep, [], None)
            return
        for key, chunks in desired.items():
            current = by_key.pop(key, [])
            for i, (ports, endpoints) in enumerate(chunks):
                await self._write(service, current[i] if i < len(current) else None,
                                  ports, endpoints)
            for extra in current[len(chunks):]:
                await self._delete(extra)
        for leftover in by_key.values():
            for slice_ in leftover:
                await self._delete(slice_)

    def _labels(self, service: dict) -> dict:
        labels = {k: v for k, v in ((service["metadata"].get("labels") or {}).items())
                  if k not in (SERVICE_NAME_LABEL, MANAGED_BY_LABEL, HEADLESS_LABEL)}
        labels[SERVICE_NAME_LABEL] = service["metadata"]["name"]
        labels[MANAGED_BY_LABEL] = CONTROLLER_NAME
        if (service.get("spec") or {}).get("clusterIP") == "None":
            labels[HEADLESS_LABEL] = ""
        return labels

    async def _write(self, service: dict, current: dict | None, ports: list[dict],
                     endpoints: list[dict] | None) -> None:
        meta = service["metadata"]
        owner = {"apiVersion": "v1", "kind": "Service", "name": meta["name"],
                 "uid": meta.get("uid", ""), "controller": True, "blockOwnerDeletion": True}
        labels = self._labels(service)
        if current is None:
            body = {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
                    "metadata": {"generateName": generate_name_prefix(meta["name"]),
                                 "namespace": meta.get("namespace", ""), "labels": labels,
                                 "ownerReferences": [owner]},
                    "addressType": "IPv4", "endpoints": endpoints, "ports": ports}
            created = await self.client.create(SLICES, body, namespace=meta.get("namespace", ""))
            self._track(service, created)
            return
        current_labels = current["metadata"].get("labels") or {}
        if current.get("endpoints") == endpoints and current.get("ports") == ports \
                and current_labels == labels \
                and current["metadata"].get("ownerReferences") == [owner]:
            return
        updated = deep_copy(current)
        updated["metadata"]["labels"] = labels
        updated["metadata"]["ownerReferences"] = [owner]
        updated["endpoints"], updated["ports"] = endpoints, ports
        self._track(service, await self.client.update(SLICES, updated))

    async def _delete(self, slice_: dict) -> None:
        try:
            await self.client.delete(SLICES, slice_["metadata"]["name"],
                                     namespace=slice_["metadata"].get("namespace", ""))
        except NotFound:
            pass
        service = slice_["metadata"].get("labels", {}).get(SERVICE_NAME_LABEL, "")
        key = f"{slice_['metadata'].get('namespace', '')}/{service}"
        self._written.setdefault(key, []).append((slice_["metadata"]["name"], None))

    def _track(self, service: dict, written: dict) -> None:
        self._written.setdefault(object_key(service), []).append(
            (written["metadata"]["name"], written["metadata"].get("resourceVersion", "")))


def _older(cached: dict, version: str) -> bool:
    cached_version = cached["metadata"].get("resourceVersion", "")
    try:
        return int(cached_version) < int(version)
    except ValueError:
        return cached_version != version
