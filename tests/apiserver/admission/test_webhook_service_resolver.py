"""``clientConfig.service`` resolved to a ready endpoint of the Service, as kube-apiserver's
endpoint routing does (``proxy.ResolveEndpoint``, staging/src/k8s.io/apiserver/pkg/util/proxy),
and to the node's address for a pod of a cgroupfs node, which shares the host's network."""

from __future__ import annotations

import pytest

from kvert.apiserver.admission.webhook import EndpointServiceResolver, WebhookClient
from kvert.clock import WallClock
from kvert.store import open_store

SLICES = "discovery.k8s.io/endpointslices"


def _store(*, ready=True, runtime="cgroupfs://cgroup-v2", target_name=""):
    store = open_store("memory", clock=WallClock())
    store.create("services", {"metadata": {"name": "vpa-webhook", "namespace": "kube-system"},
                              "spec": {"ports": [{"name": target_name, "port": 443, "targetPort": 8000}]}})
    store.create(SLICES, {"metadata": {"name": "vpa-webhook-abcde", "namespace": "kube-system",
                                       "labels": {"kubernetes.io/service-name": "vpa-webhook"}},
                          "addressType": "IPv4",
                          "endpoints": [{"addresses": ["10.244.0.4"], "conditions": {"ready": ready},
                                         "nodeName": "node-1"}],
                          "ports": [{"name": target_name, "port": 8000, "protocol": "TCP"}]})
    store.create("nodes", {"metadata": {"name": "node-1"},
                           "status": {"nodeInfo": {"containerRuntimeVersion": runtime},
                                      "addresses": [{"type": "InternalIP", "address": "127.0.0.1"},
                                                    {"type": "Hostname", "address": "node-1"}]}})
    return store


SERVICE = {"namespace": "kube-system", "name": "vpa-webhook", "port": 443, "path": "/"}


def test_a_cgroupfs_pod_is_dialed_at_its_node_and_the_target_port():
    resolver = EndpointServiceResolver(_store())
    assert resolver(SERVICE) == "https://127.0.0.1:8000/"
    # TLS still verifies the Service's name, whatever address is dialed
    client = WebhookClient(resolver)
    assert client.endpoint({"service": SERVICE}) == ("https://127.0.0.1:8000/", "vpa-webhook.kube-system.svc")


def test_another_pod_is_dialed_at_its_address():
    # upstream: ResolveEndpoint returns the endpoint's IP and port
    resolver = EndpointServiceResolver(_store(runtime="sim://", target_name="https"))
    assert resolver({**SERVICE, "path": "mutate"}) == "https://10.244.0.4:8000/mutate"


@pytest.mark.parametrize(("service", "store", "message"), [
    # upstream: ResolveEndpoint / findServicePort's errors (pkg/util/proxy/proxy.go)
    ({**SERVICE, "name": "absent"}, {}, 'service "absent" not found'),
    ({**SERVICE, "port": 444}, {}, 'no service port 444 found for service "vpa-webhook"'),
    (SERVICE, {"ready": False}, 'no endpoints available for service "vpa-webhook"'),
])
def test_what_cannot_be_resolved(service, store, message):
    with pytest.raises(ValueError) as e:
        EndpointServiceResolver(_store(**store))(service)
    assert str(e.value) == message
