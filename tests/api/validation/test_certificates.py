"""CertificateSigningRequest validation (TestValidateCertificateSigningRequestCreate,
TestValidateSignerName in pkg/apis/certificates/validation/validation_test.go)."""

import base64

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from kvert.api.validation import validate, validate_csr_approval, validate_update

_KEY = ec.generate_private_key(ec.SECP256R1())
_PEM = x509.CertificateSigningRequestBuilder().subject_name(
    x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "jane")])).sign(
    _KEY, hashes.SHA256()).public_bytes(serialization.Encoding.PEM)


def _messages(causes):
    return [f"{c.field}: {c.message}" for c in causes]


def _csr(status=None, **spec):
    body = {"request": base64.b64encode(_PEM).decode(), "signerName": "example.com/sign-me",
            "usages": ["client auth"], **spec}
    out = {"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
           "metadata": {"name": "any-name-is-fine"}, "spec": body}
    if status is not None:
        out["status"] = status
    return out


def test_valid_request():
    assert validate(_csr()) == []


def test_request_must_be_a_certificate_request_pem():
    # "missing spec.request"/"invalid spec.request": ParseCSR's message
    bad = base64.b64encode(b"-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n")
    causes = validate(_csr(request=bad.decode()))
    assert [(c.field, c.message.rsplit(": ", 1)[-1]) for c in causes] == [
        ("spec.request", "PEM block type must be CERTIFICATE REQUEST")]


@pytest.mark.parametrize("spec, expected", [
    ({"usages": ["client auth", "client auth"]},
     ['spec.usages[1]: Duplicate value: "client auth"']),
    ({"signerName": ""}, ["spec.signerName: Required value"]),
    # TestValidateSignerName "fails if a signerName does not contain a '/'"
    ({"signerName": "example.com"},
     ["spec.signerName: Invalid value: \"example.com\": must be a fully qualified domain and "
      "path of the form 'example.com/signer-name'"]),
    # "fails if the domain segment is not fully qualified"
    ({"signerName": "example/some-signer-name"},
     ['spec.signerName: Invalid value: "example": should be a domain with at least two '
      'segments separated by dots']),
    ({"expirationSeconds": 599},
     ["spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 600 "
      "seconds (10 minutes)"]),
])
def test_invalid_spec(spec, expected):
    assert _messages(validate(_csr(**spec))) == expected


def test_unknown_usage_lists_the_supported_ones():
    [cause] = validate(_csr(usages=["cool stuff"]))
    assert cause.field == "spec.usages[0]" and '"cool stuff"' in cause.message
    assert '"client auth"' in cause.message


def test_approval_conditions():
    # TestValidateCertificateSigningRequestUpdate: approval may add Approved, never both;
    # a main update may not add it
    approved = _csr(status={"conditions": [{"type": "Approved", "status": "True"}]})
    assert validate_csr_approval(approved, _csr()) == []
    both = _csr(status={"conditions": [{"type": "Approved", "status": "True"},
                                       {"type": "Denied", "status": "True"}]})
    assert _messages(validate_csr_approval(both, _csr())) == [
        'status.conditions[1].type: Invalid value: "Denied": Approved and Denied conditions are '
        'mutually exclusive']
    assert _messages(validate_update(approved, _csr())) == [
        'status.conditions: Forbidden: updates may not add a condition of type "Approved"']
    assert _messages(validate_csr_approval(_csr(), approved)) == [
        'status.conditions: Forbidden: updates may not remove a condition of type "Approved"']
    false = _csr(status={"conditions": [{"type": "Approved", "status": "False"}]})
    assert _messages(validate_csr_approval(false, _csr())) == [
        'status.conditions[0].status: Unsupported value: "False": supported values: "True"']
