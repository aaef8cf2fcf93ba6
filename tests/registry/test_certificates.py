"""CertificateSigningRequest writes: the requester recorded on create, the approval and status
subresources (pkg/registry/certificates/certificates/strategy_test.go)."""

import base64

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from kvert.api.errors import Invalid
from kvert.auth.user import User

KEY = "certificates.k8s.io/certificatesigningrequests"


def csr_pem(cn: str = "jane") -> str:
    key = ec.generate_private_key(ec.SECP256R1())
    request = x509.CertificateSigningRequestBuilder().subject_name(
        x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])).sign(key, hashes.SHA256())
    return base64.b64encode(request.public_bytes(serialization.Encoding.PEM)).decode()


def csr(name: str = "jane", **spec) -> dict:
    return {"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
            "metadata": {"name": name},
            "spec": {"request": csr_pem(), "signerName": "example.com/signer", **spec}}


def test_create_records_the_requester_and_clears_status(env):
    # TestStrategyCreate: user-set identity is replaced by the request's user, status emptied
    body = csr(username="someone-else", groups=["forged"], usages=["client auth"])
    body["status"] = {"conditions": [{"type": "Approved", "status": "True"}]}
    requester = User("bob", uid="123", groups=("group-a", "system:authenticated"),
                     extra=(("foo", ("bar",)),))
    created = env.run(env.registry.create(KEY, body, user="bob", requester=requester))
    spec = created["spec"]
    assert (spec["username"], spec["uid"], spec["groups"], spec["extra"]) == (
        "bob", "123", ["group-a", "system:authenticated"], {"foo": ["bar"]})
    assert created["status"] == {}


def test_usages_default_to_digital_signature_and_key_encipherment(env):
    # SetDefaults_CertificateSigningRequestSpec (pkg/apis/certificates/v1/defaults.go)
    created = env.run(env.registry.create(KEY, csr(), user="bob"))
    assert created["spec"]["usages"] == ["digital signature", "key encipherment"]


def test_approval_adds_condition_with_timestamps_and_keeps_spec(env):
    created = env.run(env.registry.create(KEY, csr(), user="bob"))
    created["spec"]["signerName"] = "example.com/other"
    created["status"] = {"conditions": [{"type": "Approved", "status": "True",
                                         "reason": "KubectlApprove"}]}
    approved = env.run(env.registry.update(KEY, created, subresource="approval"))
    condition = approved["status"]["conditions"][0]
    assert condition["type"] == "Approved" and condition["lastUpdateTime"]
    assert condition["lastTransitionTime"]
    assert approved["spec"]["signerName"] == "example.com/signer"


def test_status_cannot_add_approval(env):
    # TestStatusStrategyUpdate: Approved/Denied conditions come from the stored object
    created = env.run(env.registry.create(KEY, csr(), user="bob"))
    created["status"] = {"conditions": [{"type": "Approved", "status": "True"},
                                        {"type": "Failed", "status": "True"}]}
    updated = env.run(env.registry.update(KEY, created, subresource="status"))
    assert [c["type"] for c in updated["status"]["conditions"]] == ["Failed"]


def test_approved_and_denied_together_are_invalid(env):
    # TestValidateCertificateSigningRequestUpdate "approved and denied"
    created = env.run(env.registry.create(KEY, csr(), user="bob"))
    created["status"] = {"conditions": [{"type": "Approved", "status": "True"},
                                        {"type": "Denied", "status": "True"}]}
    with pytest.raises(Invalid) as err:
        env.run(env.registry.update(KEY, created, subresource="approval"))
    assert "Approved and Denied conditions are mutually exclusive" in str(err.value)
