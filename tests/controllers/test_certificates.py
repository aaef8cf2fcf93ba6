"""The CSR signing and approving controllers, in virtual time, with upstream's cases:
pkg/controller/certificates/signer/signer_test.go (TestHandle, TestSign, TestDuration),
pkg/apis/certificates helpers (ValidateKubeletServingCSR / ValidateKubeletClientCSR) and
pkg/controller/certificates/approver/sarapprove_test.go (TestHandle, TestRecognizers); and
kvert's own approver of kubelet serving certificates (a node may not get a certificate for
another node's address)."""

from __future__ import annotations

import base64
import datetime
import ipaddress

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from kvert.api import certificates as csrs
from kvert.auth import default_authorizer
from kvert.auth.policy import ensure_bootstrap_policy
from kvert.auth.user import AUTHENTICATED, User
from kvert.controllers.certificates_approving import (
    KUBELET_SERVING_MESSAGE,
    NODE_CLIENT_MESSAGE,
    SELF_NODE_CLIENT_MESSAGE,
)

from .helpers import eventually, run

CSRS = "certificates.k8s.io/certificatesigningrequests"
SERVING_USAGES = ["digital signature", "key encipherment", "server auth"]
CLIENT_USAGES = ["digital signature", "key encipherment", "client auth"]


def _ca(now: datetime.datetime, days: int = 3650) -> tuple[bytes, bytes]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "test-ca")])
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(1).not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=days))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    return (cert.public_bytes(serialization.Encoding.PEM),
            key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                              serialization.NoEncryption()))


def request(cn: str, orgs: tuple[str, ...] = ("system:nodes",), dns: tuple[str, ...] = (),
            ips: tuple[str, ...] = (), emails: tuple[str, ...] = ()) -> bytes:
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, o) for o in orgs] +
                        [x509.NameAttribute(NameOID.COMMON_NAME, cn)])
    builder = x509.CertificateSigningRequestBuilder().subject_name(subject)
    sans: list[x509.GeneralName] = [x509.DNSName(d) for d in dns] + [
        x509.IPAddress(ipaddress.ip_address(i)) for i in ips] + [x509.RFC822Name(e) for e in emails]
    if sans:
        builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
    return builder.sign(key, hashes.SHA256()).public_bytes(serialization.Encoding.PEM)


def pem_cn(pem: bytes) -> str:
    return x509.load_pem_x509_csr(pem).subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value


def csr_object(name: str, pem: bytes, signer: str, usages: list[str], **spec) -> dict:
    return {"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
            "metadata": {"name": name},
            "spec": {"request": base64.b64encode(pem).decode(), "signerName": signer, "usages": usages, **spec}}


async def _create(env, obj: dict, user: str = "system:node:n1", groups: tuple[str, ...] = ("system:nodes",)):
    return await env.registry.create(CSRS, obj, user=user,
                                     requester=User(user, groups=(*groups, AUTHENTICATED)))


async def _approve(env, name: str) -> None:
    csr = await env.client.get(CSRS, name)
    csr["status"] = {"conditions": [{"type": "Approved", "status": "True", "reason": "Test", "message": ""}]}
    await env.client.update(CSRS, csr, subresource="approval")


def _signing(env, **settings):
    now = datetime.datetime.fromtimestamp(env.clock.now(), tz=datetime.UTC)
    cert, key = _ca(now)
    env.start_manager(controllers=["csrsigning"], settings={"csrsigning": {"ca_cert": cert, "ca_key": key,
                                                                          **settings}})
    return x509.load_pem_x509_certificate(cert)


def _issued(csr: dict) -> x509.Certificate | None:
    data = (csr.get("status") or {}).get("certificate")
    return x509.load_pem_x509_certificate(base64.b64decode(data)) if data else None


def _failed(csr: dict) -> dict | None:
    return next((c for c in (csr.get("status") or {}).get("conditions") or [] if c["type"] == "Failed"), None)


# TestHandle: "should sign if signerName is kubernetes.io/kube-apiserver-client", and the
# certificate carries the request's subject, the usages and the CA as issuer (TestSign)
def test_an_approved_client_request_is_signed_by_the_ca():
    async def scenario(env):
        ca = _signing(env)
        pem = request("alice", orgs=("dev",))
        await _create(env, csr_object("alice", pem, csrs.KUBE_APISERVER_CLIENT,
                                      ["digital signature", "client auth"]))
        await env.clock.sleep(5)
        assert _issued(await env.client.get(CSRS, "alice")) is None      # not approved: nothing
        await _approve(env, "alice")
        csr = await eventually(env, lambda: _signed(env, "alice"), what="the certificate")
        cert = _issued(csr)
        assert cert.issuer == ca.subject
        assert cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == "alice"
        assert cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value == \
            x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH])
        assert cert.extensions.get_extension_for_class(x509.KeyUsage).value.digital_signature
        assert cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca is False
        # the certificate really is the CA's: its signature verifies with the CA's key
        cert.verify_directly_issued_by(ca)
    run(scenario)


async def _signed(env, name):
    csr = await env.client.get(CSRS, name)
    return csr if _issued(csr) else None


async def _failed_csr(env, name):
    csr = await env.client.get(CSRS, name)
    return csr if _failed(csr) else None


# TestHandle: "should refuse to sign if signerName is kubernetes.io/kube-apiserver-client and
# contains an unexpected usage"; "... kubelet-serving and usages are invalid"; a serving request
# for a name that is not a node's (ValidateKubeletServingCSR)
@pytest.mark.parametrize("signer, pem, usages, message", [
    (csrs.KUBE_APISERVER_CLIENT, request("alice"), ["client auth", "server auth"],
     "invalid usage for client certificate: server auth"),
    (csrs.KUBE_APISERVER_CLIENT, request("alice"), ["digital signature"],
     "missing required usage for client certificate: client auth"),
    (csrs.KUBELET_SERVING, request("system:node:n1", dns=("n1",)), ["digital signature", "client auth"],
     "usages did not match [digital signature key encipherment server auth]"),
    (csrs.KUBELET_SERVING, request("system:node:n1"), SERVING_USAGES, "DNS or IP subjectAltName is required"),
    (csrs.KUBELET_SERVING, request("system:node:n1", orgs=("system:masters",), dns=("n1",)), SERVING_USAGES,
     "subject organization is not system:nodes"),
    (csrs.KUBELET_SERVING, request("kube-apiserver", dns=("n1",)), SERVING_USAGES,
     "subject common name does not begin with system:node:"),
    (csrs.KUBE_APISERVER_CLIENT_KUBELET, request("system:node:n1", ips=("10.0.0.1",)), CLIENT_USAGES,
     "IP subjectAltNames are not allowed"),
])
def test_a_request_its_signer_refuses_gets_failed_and_no_certificate(signer, pem, usages, message):
    async def scenario(env):
        _signing(env)
        # an administrator's request (NodeRestriction keeps nodes to their own common name)
        await _create(env, csr_object("bad", pem, signer, usages), user="admin", groups=())
        await _approve(env, "bad")
        csr = await eventually(env, lambda: _failed_csr(env, "bad"), what="the Failed condition")
        condition = _failed(csr)
        assert (condition["status"], condition["reason"], condition["message"]) == \
            ("True", "SignerValidationFailure", message)
        assert _issued(csr) is None
    run(scenario)


# TestHandle: "should do nothing if failed", "should do nothing if an unrecognized signerName is
# used", and a denied request (IsCertificateRequestApproved is false when Denied)
def test_denied_and_other_signers_requests_are_left_alone():
    async def scenario(env):
        _signing(env)
        await _create(env, csr_object("other", request("x"), "example.com/signer", ["client auth"]))
        await _approve(env, "other")
        await _create(env, csr_object("denied", request("y"), csrs.KUBE_APISERVER_CLIENT, ["client auth"]))
        csr = await env.client.get(CSRS, "denied")
        csr["status"] = {"conditions": [{"type": "Denied", "status": "True", "reason": "No", "message": ""}]}
        await env.client.update(CSRS, csr, subresource="approval")
        await env.clock.sleep(10)
        for name in ("other", "denied"):
            csr = await env.client.get(CSRS, name)
            assert _issued(csr) is None and _failed(csr) is None
    run(scenario)


# TestDuration (signer_test.go): a requested duration is honoured between ten minutes and the
# signer's TTL
@pytest.mark.parametrize("requested, expected", [
    (None, 3600), (600, 600), (1200, 1200), (3600, 3600), (7200, 3600), (60, 600), (-1, 600)])
def test_requested_durations_are_clamped(requested, expected):
    assert csrs.duration_seconds(requested, 3600) == expected


# TestSign / PermissiveSigningPolicy: backdated five minutes; a short (< 8h) certificate keeps
# its whole lifetime from now, a long one loses the backdate; never past the CA's own end
def test_validity_window_as_the_permissive_policy_sets_it():
    now = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
    cert_pem, key_pem = _ca(now, days=400)
    ca, key = x509.load_pem_x509_certificate(cert_pem), csrs.load_signing_key(key_pem)
    req = csrs.parse_request(request("alice"))

    def window(ttl):
        cert = x509.load_pem_x509_certificate(csrs.sign_request(req, ["client auth"], ttl, now, ca, key))
        return cert.not_valid_before_utc, cert.not_valid_after_utc
    five = datetime.timedelta(minutes=5)
    assert window(3600) == (now - five, now + datetime.timedelta(hours=1))
    assert window(86400) == (now - five, now + datetime.timedelta(days=1) - five)
    assert window(365 * 86400)[1] == now + datetime.timedelta(days=365) - five
    assert window(800 * 86400)[1] == ca.not_valid_after_utc
    expired = datetime.datetime(2030, 1, 1, tzinfo=datetime.UTC)
    with pytest.raises(csrs.SignerError, match="^the signer has expired: NotAfter="):
        csrs.sign_request(req, ["client auth"], 3600, expired, ca, key)


def test_the_expiration_seconds_shortens_the_certificate():
    async def scenario(env):
        _signing(env)
        await _create(env, csr_object("short", request("alice"), csrs.KUBE_APISERVER_CLIENT, ["client auth"],
                                      expirationSeconds=1800))
        await _approve(env, "short")
        cert = _issued(await eventually(env, lambda: _signed(env, "short"), what="the certificate"))
        assert cert.not_valid_after_utc - cert.not_valid_before_utc == datetime.timedelta(minutes=35)
    run(scenario)


# -- csrapproving (sarapprove_test.go) ----------------------------------------------------------

def _approving(env, *controllers: str):
    env.start_manager(controllers=list(controllers) or ["csrapproving"],
                      settings={"csrapproving": {"authorizer": default_authorizer(env.store)}})


def _approved(csr: dict) -> dict | None:
    return next((c for c in (csr.get("status") or {}).get("conditions") or [] if c["type"] == "Approved"), None)


async def _approved_csr(env, name):
    csr = await env.client.get(CSRS, name)
    return csr if _approved(csr) else None


# TestHandle: "recognized, allowed" for selfnodeclient: a node renewing its own client
# certificate (kubeadm binds the selfnodeclient role to system:nodes)
def test_a_node_renewing_its_own_client_certificate_is_auto_approved():
    async def scenario(env):
        await ensure_bootstrap_policy(env.registry)
        _approving(env)
        await _create(env, csr_object("self", request("system:node:n1"), csrs.KUBE_APISERVER_CLIENT_KUBELET,
                                      CLIENT_USAGES))
        csr = await eventually(env, lambda: _approved_csr(env, "self"), what="the approval")
        condition = _approved(csr)
        assert (condition["status"], condition["reason"], condition["message"]) == \
            ("True", "AutoApproved", SELF_NODE_CLIENT_MESSAGE)
    run(scenario)


# TestHandle: "recognized, not allowed": a node asking for another node's client certificate has
# no nodeclient permission; "recognized, allowed" for nodeclient: a bootstrapper that has it
def test_a_node_asking_for_another_nodes_client_certificate_stays_pending():
    async def scenario(env):
        await ensure_bootstrap_policy(env.registry)
        await env.client.create("rbac.authorization.k8s.io/clusterrolebindings", {
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": {"name": "bootstrappers"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                        "name": "system:certificates.k8s.io:certificatesigningrequests:nodeclient"},
            "subjects": [{"kind": "Group", "apiGroup": "rbac.authorization.k8s.io",
                          "name": "system:bootstrappers"}]})
        _approving(env)
        # NodeRestriction refuses n1 a request in n2's name; any other user may ask, unapproved
        await _create(env, csr_object("theft", request("system:node:n2"), csrs.KUBE_APISERVER_CLIENT_KUBELET,
                                      CLIENT_USAGES), user="mallory", groups=())
        await _create(env, csr_object("boot", request("system:node:n3"), csrs.KUBE_APISERVER_CLIENT_KUBELET,
                                      CLIENT_USAGES), user="system:bootstrap:abcdef",
                      groups=("system:bootstrappers",))
        csr = await eventually(env, lambda: _approved_csr(env, "boot"), what="the bootstrap approval")
        assert _approved(csr)["message"] == NODE_CLIENT_MESSAGE
        await env.clock.sleep(10)
        assert (await env.client.get(CSRS, "theft")).get("status", {}).get("conditions") in (None, [])
    run(scenario)


# TestRecognizers: not a kubelet client request (bad organization, a SAN, other usages, a
# common name that is no node's, another signer): never approved
@pytest.mark.parametrize("pem, usages, signer", [
    (request("system:node:n1", orgs=("system:masters",)), CLIENT_USAGES, csrs.KUBE_APISERVER_CLIENT_KUBELET),
    (request("system:node:n1", dns=("n1",)), CLIENT_USAGES, csrs.KUBE_APISERVER_CLIENT_KUBELET),
    (request("system:node:n1"), ["digital signature", "client auth", "server auth"],
     csrs.KUBE_APISERVER_CLIENT_KUBELET),
    (request("n1"), CLIENT_USAGES, csrs.KUBE_APISERVER_CLIENT_KUBELET),
    (request("system:node:n1"), CLIENT_USAGES, csrs.KUBE_APISERVER_CLIENT),
])
def test_requests_that_are_not_kubelet_client_certificates_are_not_approved(pem, usages, signer):
    async def scenario(env):
        await ensure_bootstrap_policy(env.registry)
        _approving(env)
        await _create(env, csr_object("odd", pem, signer, usages), user="system:node:n1" if
                      pem_cn(pem) == "system:node:n1" else "admin")
        await env.clock.sleep(10)
        assert _approved(await env.client.get(CSRS, "odd")) is None
    run(scenario)


# -- kvert's kubelet serving approver -----------------------------------------------------------

async def _node(env, name: str, ip: str) -> None:
    await env.client.create("nodes", {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}})
    node = await env.client.get("nodes", name)
    node["status"] = {"addresses": [{"type": "InternalIP", "address": ip}, {"type": "Hostname", "address": name}]}
    await env.client.update_status("nodes", node)


def test_a_node_gets_a_serving_certificate_for_its_own_addresses_only():
    async def scenario(env):
        await _node(env, "n1", "10.0.0.1")
        await _node(env, "n2", "10.0.0.2")
        _approving(env, "kubelet-serving-approver")
        await _create(env, csr_object("own", request("system:node:n1", dns=("n1",), ips=("10.0.0.1",)),
                                      csrs.KUBELET_SERVING, SERVING_USAGES))
        # n1 asking for n2's address, or for n2's name, or n1 asking in n2's name
        await _create(env, csr_object("other-ip", request("system:node:n1", ips=("10.0.0.2",)),
                                      csrs.KUBELET_SERVING, SERVING_USAGES))
        await _create(env, csr_object("other-dns", request("system:node:n1", dns=("n2",)),
                                      csrs.KUBELET_SERVING, SERVING_USAGES))
        await _create(env, csr_object("in-n2s-name", request("system:node:n2", ips=("10.0.0.2",)),
                                      csrs.KUBELET_SERVING, SERVING_USAGES), user="mallory", groups=())
        csr = await eventually(env, lambda: _approved_csr(env, "own"), what="the approval")
        assert (_approved(csr)["reason"], _approved(csr)["message"]) == ("AutoApproved", KUBELET_SERVING_MESSAGE)
        await env.clock.sleep(10)
        for name in ("other-ip", "other-dns", "in-n2s-name"):
            assert _approved(await env.client.get(CSRS, name)) is None, name
        # repointing n1's status at n2's address does not make n2's address n1's
        node = await env.client.get("nodes", "n1")
        node["status"]["addresses"][0]["address"] = "10.0.0.2"
        await env.client.update_status("nodes", node)
        await env.clock.sleep(10)
        assert _approved(await env.client.get(CSRS, "other-ip")) is None
    run(scenario)
