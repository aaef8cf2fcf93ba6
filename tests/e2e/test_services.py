"""Real kubectl against `kvert up`: Services get a ClusterIP from 10.96.0.0/12, the
endpointslice and endpoints controllers list the selected pods, and default/kubernetes exists
(as on a kind or kubeadm cluster)."""

from __future__ import annotations

import ipaddress

from .conftest import wait_for


def test_kubernetes_service_and_its_endpoints(kubectl, cluster):
    svc = kubectl.json("get", "svc", "kubernetes")
    assert svc["spec"]["clusterIP"] == "10.96.0.1"
    assert svc["metadata"]["labels"] == {"component": "apiserver", "provider": "kubernetes"}
    port = int(cluster.url.rsplit(":", 1)[1])
    assert svc["spec"]["ports"] == [{"name": "https", "port": 443, "protocol": "TCP",
                                     "targetPort": port}]
    es = kubectl.json("get", "endpointslice", "kubernetes")
    assert es["endpoints"][0]["addresses"] == ["127.0.0.1"]
    assert es["ports"][0]["port"] == port
    rows = kubectl("get", "svc", "kubernetes").stdout.splitlines()
    assert rows[0].split() == ["NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE"]
    assert rows[1].split()[:5] == ["kubernetes", "ClusterIP", "10.96.0.1", "<none>", "443/TCP"]


def test_expose_a_deployment(kubectl):
    kubectl("create", "deployment", "web", "--image=nginx", "--replicas=2")
    kubectl("expose", "deployment", "web", "--port=80")
    svc = kubectl.json("get", "svc", "web")
    ip = svc["spec"]["clusterIP"]
    assert ipaddress.ip_address(ip) in ipaddress.ip_network("10.96.0.0/12")
    assert svc["spec"]["ipFamilies"] == ["IPv4"] and svc["spec"]["ipFamilyPolicy"] == "SingleStack"
    assert kubectl("get", "svc", "web").stdout.splitlines()[1].split()[:5] == [
        "web", "ClusterIP", ip, "<none>", "80/TCP"]

    def two_ready():
        slices = kubectl.json("get", "endpointslices", "-l", "kubernetes.io/service-name=web")
        endpoints = [e for s in slices["items"] for e in s.get("endpoints") or []
                     if (e.get("conditions") or {}).get("ready")]
        return slices if len(endpoints) == 2 else None
    slices = wait_for(two_ready, timeout=60)
    [es] = slices["items"]
    assert es["metadata"]["labels"]["endpointslice.kubernetes.io/managed-by"] == \
        "endpointslice-controller.k8s.io"
    assert es["ports"] == [{"name": "", "port": 80, "protocol": "TCP"}]
    rows = kubectl("get", "endpointslices", "-l", "kubernetes.io/service-name=web").stdout
    header, row = rows.splitlines()[:2]
    assert header.split() == ["NAME", "ADDRESSTYPE", "PORTS", "ENDPOINTS", "AGE"]
    assert row.split()[1:3] == ["IPv4", "80"]
    assert len(row.split()[3].split(",")) == 2

    def endpoints_filled():
        ep = kubectl.json("get", "endpoints", "web")
        return ep if ep.get("subsets") and len(ep["subsets"][0].get("addresses") or []) == 2 \
            else None
    wait_for(endpoints_filled, timeout=60)
    listed = kubectl("get", "endpoints", "web")
    # kube-apiserver 1.33+ on every v1 Endpoints request (KEP-4974)
    assert "Warning: v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice" \
        in listed.stderr
    assert listed.stdout.splitlines()[0].split() == ["NAME", "ENDPOINTS", "AGE"]


def test_cluster_ip_errors(kubectl):
    # the message e2e's parseServiceCIDRFromError reads (test/e2e/network)
    result = kubectl("create", "service", "clusterip", "bad", "--tcp=80",
                     "--clusterip=10.0.0.1", check=False)
    assert result.returncode != 0
    assert ('spec.clusterIPs: Invalid value: ["10.0.0.1"]: failed to allocate IP 10.0.0.1: '
            'provided IP is not in the valid range. The range of valid IPs is 10.96.0.0/12'
            in result.stderr)
    kubectl("create", "service", "clusterip", "fixed", "--tcp=80", "--clusterip=10.96.0.50")
    result = kubectl("patch", "svc", "fixed", "-p", '{"spec":{"clusterIP":"10.96.0.51",'
                     '"clusterIPs":["10.96.0.51"]}}', check=False)
    assert 'spec.clusterIPs[0]: Invalid value: ["10.96.0.51"]: may not change once set' \
        in result.stderr
