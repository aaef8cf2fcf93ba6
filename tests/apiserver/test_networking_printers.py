"""``kubectl get`` rows of Ingresses, IngressClasses, NetworkPolicies, CertificateSigningRequests
and CSIStorageCapacities, as upstream's printers_test.go (pkg/printers/internalversion)
expects them."""

from kvert.apiserver.printers.certificates import csi_storage_capacity_row, csr_row
from kvert.apiserver.printers.networking import (ingress_class_row, ingress_row,
                                                 network_policy_row)
from kvert.apiserver.tables import PRINTERS

NOW = 0


def test_every_new_kind_has_a_printer():
    assert {("networking.k8s.io", "Ingress"), ("networking.k8s.io", "IngressClass"),
            ("networking.k8s.io", "NetworkPolicy"), ("storage.k8s.io", "CSIStorageCapacity"),
            ("certificates.k8s.io", "CertificateSigningRequest")} <= set(PRINTERS)
    headers = [c["name"] for c in PRINTERS[("certificates.k8s.io", "CertificateSigningRequest")][0]]
    assert headers == ["Name", "Age", "SignerName", "Requestor", "RequestedDuration", "Condition"]


def test_print_ingress():
    # TestPrintIngress: Name, Class, Hosts, Address, Ports, Age
    ingress = {"metadata": {"name": "test1"},
               "spec": {"ingressClassName": "foo",
                        "defaultBackend": {"service": {"name": "svc", "port": {"number": 93}}}},
               "status": {"loadBalancer": {"ingress": [{"ip": "2.3.4.5",
                                                        "hostname": "localhost.localdomain"}]}}}
    assert ingress_row(ingress, NOW)[:5] == ["test1", "foo", "*", "2.3.4.5", "80"]
    hosts = {"metadata": {"name": "t"}, "spec": {"tls": [{}], "rules": [
        {"host": h} for h in ("a.com", "b.com", "c.com", "d.com")]}}
    assert ingress_row(hosts, NOW)[1:5] == ["<none>", "a.com,b.com,c.com + 1 more...", "",
                                            "80, 443"]


def test_print_ingress_class():
    # TestPrintIngressClass
    with_params = {"metadata": {"name": "test1"},
                   "spec": {"controller": "example.com/controller",
                            "parameters": {"apiGroup": "example.com", "kind": "customgroup",
                                           "name": "example"}}}
    assert ingress_class_row(with_params, NOW)[:3] == [
        "test1", "example.com/controller", "customgroup.example.com/example"]
    assert ingress_class_row({"metadata": {"name": "test2"},
                              "spec": {"controller": "example.com/controller"}}, NOW)[2] == "<none>"


def test_print_network_policy():
    # TestPrintNetworkPolicy: Name, Pod-Selector, Age
    policy = {"metadata": {"name": "np"}, "spec": {"podSelector": {"matchLabels": {"foo": "bar"}}}}
    assert network_policy_row(policy, NOW)[:2] == ["np", "foo=bar"]
    assert network_policy_row({"metadata": {"name": "all"}, "spec": {"podSelector": {}}},
                              NOW)[1] == "<none>"


def _csr(conditions=None, certificate=None, **spec):
    status = {}
    if conditions is not None:
        status["conditions"] = [{"type": t} for t in conditions]
    if certificate:
        status["certificate"] = certificate
    return {"metadata": {"name": "csr1"},
            "spec": {"username": "CSR Requestor", "signerName": "example.com/test-signer", **spec},
            "status": status}


def test_print_certificate_signing_request():
    # TestPrintCertificateSigningRequest: Name, Age, SignerName, Requestor, RequestedDuration,
    # Condition
    assert csr_row(_csr(), NOW)[2:] == ["example.com/test-signer", "CSR Requestor", "<none>",
                                        "Pending"]
    assert csr_row(_csr(expirationSeconds=7 * 24 * 3600), NOW)[4] == "7d"
    assert csr_row(_csr(["Approved"], "Y2VydA=="), NOW)[5] == "Approved,Issued"
    assert csr_row(_csr(["Approved", "Denied"]), NOW)[5] == "Denied"
    assert csr_row(_csr(["Approved", "Failed"]), NOW)[5] == "Approved,Failed"
    assert csr_row(_csr(signerName=""), NOW)[2] == "<none>"


def test_print_csi_storage_capacity():
    # TestPrintCSIStorageCapacity: Name, StorageClassName, Capacity, Age
    capacity = {"metadata": {"name": "str1"}, "storageClassName": "test-sc", "capacity": "1Gi"}
    assert csi_storage_capacity_row(capacity, NOW)[:3] == ["str1", "test-sc", "1Gi"]
    assert csi_storage_capacity_row({"metadata": {"name": "str2"}, "storageClassName": "sc"},
                                    NOW)[2] == "<unset>"
