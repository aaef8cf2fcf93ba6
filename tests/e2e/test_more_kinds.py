"""Real kubectl against `kvert up` on the kinds served without a controller: a
CertificateSigningRequest approved with `kubectl certificate approve`, an Ingress, an
IngressClass, a NetworkPolicy and a CSIStorageCapacity created, listed and deleted."""

from __future__ import annotations

import base64
import json

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


def _request_pem() -> str:
    key = ec.generate_private_key(ec.SECP256R1())
    request = x509.CertificateSigningRequestBuilder().subject_name(
        x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "jane")])).sign(key, hashes.SHA256())
    return base64.b64encode(request.public_bytes(serialization.Encoding.PEM)).decode()


def test_certificate_signing_request_approve(kubectl):
    csr = {"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
           "metadata": {"name": "jane"},
           "spec": {"request": _request_pem(), "signerName": "example.com/signer",
                    "expirationSeconds": 86400, "usages": ["client auth"]}}
    kubectl("create", "-f", "-", input=json.dumps(csr))
    me = kubectl.json("auth", "whoami")["status"]["userInfo"]
    created = kubectl.json("get", "csr", "jane")
    assert created["spec"]["username"] == me["username"]
    assert created["spec"]["groups"] == me["groups"]
    rows = kubectl("get", "csr").stdout.splitlines()
    assert rows[0].split() == ["NAME", "AGE", "SIGNERNAME", "REQUESTOR", "REQUESTEDDURATION",
                               "CONDITION"]
    cells = rows[1].split()
    assert [cells[0], *cells[2:]] == ["jane", "example.com/signer", me["username"], "24h",
                                      "Pending"]
    kubectl("certificate", "approve", "jane")
    conditions = kubectl.json("get", "csr", "jane")["status"]["conditions"]
    assert [(c["type"], c["status"], c["reason"]) for c in conditions] == [
        ("Approved", "True", "KubectlApprove")]
    assert kubectl("get", "csr", "jane").stdout.splitlines()[1].split()[-1] == "Approved"
    bad = dict(csr, metadata={"name": "bad"}, spec={**csr["spec"], "usages": ["nonsense"]})
    failed = kubectl("create", "-f", "-", input=json.dumps(bad), check=False)
    assert failed.returncode != 0 and 'spec.usages[0]: Unsupported value: "nonsense"' in failed.stderr
    kubectl("delete", "csr", "jane")


def test_networking_and_storage_kinds(kubectl):
    kubectl("create", "ingress", "web", "--class=nginx", "--rule=foo.com/bar*=svc1:8080")
    assert kubectl("get", "ing", "web").stdout.splitlines()[1].split()[0] == "web"
    row = kubectl("get", "ingress.networking.k8s.io", "web").stdout.splitlines()
    assert row[0].split() == ["NAME", "CLASS", "HOSTS", "ADDRESS", "PORTS", "AGE"]
    assert row[1].split()[:4] == ["web", "nginx", "foo.com", "80"]
    path = kubectl.json("get", "ingress", "web")["spec"]["rules"][0]["http"]["paths"][0]
    assert path == {"path": "/bar", "pathType": "Prefix",
                    "backend": {"service": {"name": "svc1", "port": {"number": 8080}}}}
    ingress_class = {"apiVersion": "networking.k8s.io/v1", "kind": "IngressClass",
                     "metadata": {"name": "nginx"}, "spec": {"controller": "k8s.io/ingress-nginx"}}
    policy = {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
              "metadata": {"name": "deny"},
              "spec": {"podSelector": {"matchLabels": {"app": "web"}},
                       "egress": [{"ports": [{"port": 53}]}]}}
    capacity = {"apiVersion": "storage.k8s.io/v1", "kind": "CSIStorageCapacity",
                "metadata": {"name": "cap"}, "storageClassName": "fast", "capacity": "10Gi"}
    kubectl("apply", "-f", "-", input=json.dumps(
        {"apiVersion": "v1", "kind": "List", "items": [ingress_class, policy, capacity]}))
    assert kubectl("get", "ingressclass", "nginx").stdout.splitlines()[1].split()[:3] == [
        "nginx", "k8s.io/ingress-nginx", "<none>"]
    spec = kubectl.json("get", "netpol", "deny")["spec"]
    assert spec["policyTypes"] == ["Ingress", "Egress"]
    assert spec["egress"][0]["ports"] == [{"port": 53, "protocol": "TCP"}]
    assert kubectl("get", "netpol").stdout.splitlines()[1].split()[:2] == ["deny", "app=web"]
    assert kubectl("get", "csistoragecapacities").stdout.splitlines()[1].split()[:3] == [
        "cap", "fast", "10Gi"]
    bad = {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "bad"},
           "spec": {"rules": [{"http": {"paths": [{"path": "/", "pathType": "Prefix",
                                                   "backend": {"service": {"name": "svc1"}}}]}}]}}
    refused = kubectl("create", "-f", "-", input=json.dumps(bad), check=False)
    assert refused.returncode != 0 and "port name or number is required" in refused.stderr
    kubectl("delete", "ingress", "web")
    kubectl("delete", "ingressclass", "nginx")
    kubectl("delete", "netpol", "deny")
    kubectl("delete", "csistoragecapacity", "cap")
    assert kubectl("get", "ingress,netpol,csistoragecapacity", "-o", "name").stdout == ""
