"""The ``default/kubernetes`` Service and its endpoints, as kube-apiserver's kubernetes
service controller (``pkg/controlplane/controller/kubernetesservice``) and endpoint
reconciler (``pkg/controlplane/reconcilers``) keep them.

The Service has no selector: its Endpoints and EndpointSlice (both named ``kubernetes``)
name the API server's address. kvert writes them once at start (one API server per
cluster address; upstream's lease reconciler lists every live server).
"""

from __future__ import annotations

import ipaddress

from kvert.api.errors import AlreadyExists, NotFound
from kvert.registry import Registry

NAME, NAMESPACE = "kubernetes", "default"
SERVICE_PORT = 443


def advertised_ip(host: str) -> str:
    """The address endpoints name for a server listening on ``host``: itself when it is one
    IPv4 address, else loopback (``--advertise-address`` defaults to an interface's address;
    kvert serves on one machine)."""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return "127.0.0.1"
    return host if address.version == 4 and not address.is_unspecified else "127.0.0.1"


def kubernetes_service(cluster_ip: str, port: int) -> dict:
    return {
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": NAME, "namespace": NAMESPACE,
                     "labels": {"provider": "kubernetes", "component": "apiserver"}},
        "spec": {"ports": [{"name": "https", "port": SERVICE_PORT, "protocol": "TCP",
                            "targetPort": port}],
                 "clusterIP": cluster_ip, "sessionAffinity": "None", "type": "ClusterIP"},
    }


def kubernetes_endpoints(ip: str, port: int) -> dict:
    return {
        "apiVersion": "v1", "kind": "Endpoints",
        # the EndpointSlice mirroring controller leaves these to the reconciler
        "metadata": {"name": NAME, "namespace": NAMESPACE,
                     "labels": {"endpointslice.kubernetes.io/skip-mirror": "true"}},
        "subsets": [{"addresses": [{"ip": ip}],
                     "ports": [{"name": "https", "port": port, "protocol": "TCP"}]}],
    }


def kubernetes_endpoint_slice(ip: str, port: int) -> dict:
    """``endpointSliceFromEndpoints`` (pkg/controlplane/reconcilers/endpointsadapter.go)."""
    return {
        "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
        "metadata": {"name": NAME, "namespace": NAMESPACE,
                     "labels": {"kubernetes.io/service-name": NAME}},
        "addressType": "IPv4",
        "endpoints": [{"addresses": [ip], "conditions": {"ready": True}}],
        "ports": [{"name": "https", "port": port, "protocol": "TCP"}],
    }


async def ensure_kubernetes_service(registry: Registry, cluster_ip: str, port: int = 6443, *,
                                    reconcile: bool = True) -> None:
    """Create the Service, or (``reconcile``) bring its ports to the server's port
    (``CreateOrUpdateMasterServiceIfNeeded``)."""
    wanted = kubernetes_service(cluster_ip, port)
    try:
        current = registry.get("services", NAME, NAMESPACE)
    except NotFound:
        try:
            await registry.create("services", wanted, namespace=NAMESPACE)
        except AlreadyExists:
            pass
        return
    if not reconcile:
        return
    ports = current["spec"].get("ports") or []
    if [(p.get("name"), p.get("port"), p.get("targetPort")) for p in ports] != \
            [("https", SERVICE_PORT, port)]:
        current["spec"]["ports"] = wanted["spec"]["ports"]
        await registry.update("services", current)


async def ensure_kubernetes_endpoints(registry: Registry, ip: str, port: int) -> None:
    """The Endpoints and EndpointSlice naming this API server."""
    for resource, wanted in (("endpoints", kubernetes_endpoints(ip, port)),
                             ("discovery.k8s.io/endpointslices",
                              kubernetes_endpoint_slice(ip, port))):
        try:
            current = registry.get(resource, NAME, NAMESPACE)
        except NotFound:
            await registry.create(resource, wanted, namespace=NAMESPACE)
            continue
        body = {k: v for k, v in wanted.items() if k != "metadata"}
        if any(current.get(k) != v for k, v in body.items()):
            current.update(body)
            await registry.update(resource, current)
