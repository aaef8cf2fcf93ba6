"""The ``default/kubernetes`` Service and endpoints (kube-apiserver's kubernetes service
controller: TestCreateOrUpdateMasterService in pkg/controlplane/controller/kubernetesservice,
TestReconcileEndpoints in pkg/controlplane/reconcilers)."""

from kvert.apiserver.kubernetesservice import (advertised_ip, ensure_kubernetes_endpoints,
                                               ensure_kubernetes_service)
from kvert.clock import VirtualClock
from kvert.registry import Registry
from kvert.store import open_store


def _registry():
    clock = VirtualClock()
    return Registry(open_store("memory", clock=clock), clock), clock


def test_service_is_created_with_the_first_ip_and_the_server_port():
    registry, clock = _registry()
    clock.run(ensure_kubernetes_service(registry, "10.96.0.1", 6443))
    svc = registry.get("services", "kubernetes", "default")
    assert svc["metadata"]["labels"] == {"component": "apiserver", "provider": "kubernetes"}
    assert svc["spec"]["clusterIP"] == "10.96.0.1" and svc["spec"]["clusterIPs"] == ["10.96.0.1"]
    assert svc["spec"]["ports"] == [{"name": "https", "port": 443, "protocol": "TCP",
                                     "targetPort": 6443}]
    assert "selector" not in svc["spec"]


def test_a_new_server_port_updates_the_service():
    # "service definition wrong port, reconcile" in TestCreateOrUpdateMasterService
    registry, clock = _registry()
    clock.run(ensure_kubernetes_service(registry, "10.96.0.1", 6443))
    clock.run(ensure_kubernetes_service(registry, "10.96.0.1", 41000))
    svc = registry.get("services", "kubernetes", "default")
    assert svc["spec"]["ports"][0]["targetPort"] == 41000
    assert svc["spec"]["clusterIP"] == "10.96.0.1"
    # bootstrap creates it only: the running server's port stays
    clock.run(ensure_kubernetes_service(registry, "10.96.0.1", reconcile=False))
    assert registry.get("services", "kubernetes", "default")["spec"]["ports"][0]["targetPort"] \
        == 41000


def test_endpoints_and_slice_name_the_server():
    registry, clock = _registry()
    clock.run(ensure_kubernetes_endpoints(registry, "127.0.0.1", 6443))
    ep = registry.get("endpoints", "kubernetes", "default")
    assert ep["subsets"] == [{"addresses": [{"ip": "127.0.0.1"}],
                              "ports": [{"name": "https", "port": 6443, "protocol": "TCP"}]}]
    es = registry.get("discovery.k8s.io/endpointslices", "kubernetes", "default")
    assert es["metadata"]["labels"] == {"kubernetes.io/service-name": "kubernetes"}
    assert es["addressType"] == "IPv4"
    assert es["endpoints"] == [{"addresses": ["127.0.0.1"], "conditions": {"ready": True}}]
    clock.run(ensure_kubernetes_endpoints(registry, "127.0.0.1", 7000))
    es = registry.get("discovery.k8s.io/endpointslices", "kubernetes", "default")
    assert es["ports"] == [{"name": "https", "port": 7000, "protocol": "TCP"}]


def test_advertised_ip():
    assert advertised_ip("127.0.0.1") == "127.0.0.1"
    assert advertised_ip("0.0.0.0") == "127.0.0.1"
    assert advertised_ip("localhost") == "127.0.0.1"
