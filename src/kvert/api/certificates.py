"""What a certificates.k8s.io CertificateSigningRequest asks for, and how a signer answers it
(``pkg/apis/certificates`` helpers and ``pkg/controller/certificates/authority``).

Shared by the signing and approving controllers and by the node agent that requests its
serving certificate, so it sits below all of them:

- the well-known signer names, and what each requires of a request
  (``ValidateKubeletServingCSR``, ``ValidateKubeletClientCSR``, the kube-apiserver-client
  usages), with upstream's error texts;
- the Approved / Denied / Failed conditions of a CSR;
- :func:`sign_request`: a certificate for a request, as upstream's local CA signs one with
  ``PermissiveSigningPolicy``: the request's subject and SANs, key usages from
  ``spec.usages``, not a CA, valid from five minutes before now (backdate) for the TTL
  (less the backdate unless the TTL is under eight hours), never past the CA's own end.
"""

from __future__ import annotations

import base64
import binascii
import datetime
from collections.abc import Iterable
from dataclasses import dataclass

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed448, ed25519, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID

from kvert.api.types import Obj

KUBELET_SERVING = "kubernetes.io/kubelet-serving"
KUBE_APISERVER_CLIENT = "kubernetes.io/kube-apiserver-client"
KUBE_APISERVER_CLIENT_KUBELET = "kubernetes.io/kube-apiserver-client-kubelet"
LEGACY_UNKNOWN = "kubernetes.io/legacy-unknown"

NODE_USER_PREFIX = "system:node:"
NODES_GROUP = "system:nodes"

# signer.go: Backdate 5 minutes, Short 8 hours; the shortest certificate honoured is 10 minutes
BACKDATE_SECONDS = 5 * 60
SHORT_SECONDS = 8 * 3600
MIN_DURATION_SECONDS = 10 * 60
# kube-controller-manager's --cluster-signing-duration default (8760h)
DEFAULT_SIGNING_DURATION_SECONDS = 365 * 24 * 3600

_KUBELET_SERVING_USAGES = ({"digital signature", "key encipherment", "server auth"},
                           {"digital signature", "server auth"})
_KUBELET_CLIENT_USAGES = ({"digital signature", "key encipherment", "client auth"},
                          {"digital signature", "client auth"})


class SignerError(ValueError):
    """A request its signer refuses: the text of the ``Failed`` condition's message."""


@dataclass(frozen=True)
class Request:
    """A parsed ``CERTIFICATE REQUEST``: what the signer rules look at."""

    csr: x509.CertificateSigningRequest
    common_name: str
    organizations: tuple[str, ...]
    dns_names: tuple[str, ...]
    ip_addresses: tuple[str, ...]
    emails: tuple[str, ...]
    uris: tuple[str, ...]


def request_pem(csr: Obj) -> bytes:
    """``spec.request`` of a CSR object: base64 of the PEM, as the API carries bytes."""
    value = (csr.get("spec") or {}).get("request") or ""
    try:
        return base64.b64decode(value, validate=True) if isinstance(value, str) else bytes(value)
    except (binascii.Error, ValueError):
        raise SignerError("PEM block type must be CERTIFICATE REQUEST") from None


def parse_request(pem: bytes) -> Request:
    """``ParseCSR``: the first PEM block must be a CERTIFICATE REQUEST."""
    if b"-----BEGIN CERTIFICATE REQUEST-----" not in pem:
        raise SignerError("PEM block type must be CERTIFICATE REQUEST")
    try:
        csr = x509.load_pem_x509_csr(pem)
    except ValueError as e:
        raise SignerError(f"x509: malformed certificate request: {e}") from None
    subject = csr.subject
    names: list[str] = []
    ips: list[str] = []
    emails: list[str] = []
    uris: list[str] = []
    try:
        sans = csr.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        names = [str(n) for n in sans.get_values_for_type(x509.DNSName)]
        ips = [str(n) for n in sans.get_values_for_type(x509.IPAddress)]
        emails = [str(n) for n in sans.get_values_for_type(x509.RFC822Name)]
        uris = [str(n) for n in sans.get_values_for_type(x509.UniformResourceIdentifier)]
    except x509.ExtensionNotFound:
        pass
    return Request(csr, _first(subject, x509.NameOID.COMMON_NAME),
                   tuple(str(a.value) for a in subject.get_attributes_for_oid(x509.NameOID.ORGANIZATION_NAME)),
                   tuple(names), tuple(ips), tuple(emails), tuple(uris))


def _first(name: x509.Name, oid: x509.ObjectIdentifier) -> str:
    values = name.get_attributes_for_oid(oid)
    return str(values[0].value) if values else ""


# -- the signers' rules (pkg/apis/certificates/helpers.go, signer.go) ---------------------------

def kubelet_serving_problem(req: Request, usages: Iterable[str]) -> str:
    """``ValidateKubeletServingCSR``: "" when the request is a kubelet serving certificate's."""
    if list(req.organizations) != [NODES_GROUP]:
        return "subject organization is not system:nodes"
    if not req.dns_names and not req.ip_addresses:
        return "DNS or IP subjectAltName is required"
    if req.emails:
        return "Email subjectAltNames are not allowed"
    if req.uris:
        return "URI subjectAltNames are not allowed"
    if set(usages) not in _KUBELET_SERVING_USAGES:
        return "usages did not match [digital signature key encipherment server auth]"
    if not req.common_name.startswith(NODE_USER_PREFIX):
        return "subject common name does not begin with system:node:"
    return ""


def kubelet_client_problem(req: Request, usages: Iterable[str]) -> str:
    """``ValidateKubeletClientCSR``: "" when the request is a kubelet client certificate's."""
    if list(req.organizations) != [NODES_GROUP]:
        return "subject organization is not system:nodes"
    for present, what in ((req.dns_names, "DNS"), (req.emails, "Email"), (req.ip_addresses, "IP"),
                          (req.uris, "URI")):
        if present:
            return f"{what} subjectAltNames are not allowed"
    if not req.common_name.startswith(NODE_USER_PREFIX):
        return "subject common name does not begin with system:node:"
    if set(usages) not in _KUBELET_CLIENT_USAGES:
        return "usages did not match [client auth digital signature key encipherment]"
    return ""


def apiserver_client_problem(usages: Iterable[str]) -> str:
    """``validAPIServerClientUsages``: client auth required, digital signature and key
    encipherment allowed, nothing else."""
    has_client_auth = False
    for usage in usages:
        if usage == "client auth":
            has_client_auth = True
        elif usage not in ("digital signature", "key encipherment"):
            return f"invalid usage for client certificate: {usage}"
    if not has_client_auth:
        return "missing required usage for client certificate: client auth"
    return ""


def signer_problem(signer: str, req: Request, usages: list[str]) -> str | None:
    """What the signer ``signer`` holds against the request ("" for nothing); None when it
    is no signer kvert's controller manager signs for."""
    if signer == KUBELET_SERVING:
        return kubelet_serving_problem(req, usages)
    if signer == KUBE_APISERVER_CLIENT_KUBELET:
        return kubelet_client_problem(req, usages)
    if signer == KUBE_APISERVER_CLIENT:
        return apiserver_client_problem(usages)
    return None


# -- conditions ---------------------------------------------------------------------------------

def has_true_condition(csr: Obj, kind: str) -> bool:
    return any(isinstance(c, dict) and c.get("type") == kind and c.get("status", "True") == "True"
               for c in (csr.get("status") or {}).get("conditions") or [])


def is_approved(csr: Obj) -> bool:
    """``IsCertificateRequestApproved``: Approved and not Denied."""
    return has_true_condition(csr, "Approved") and not has_true_condition(csr, "Denied")


def is_decided(csr: Obj) -> bool:
    """``GetCertApprovalCondition``: approved or denied already."""
    return has_true_condition(csr, "Approved") or has_true_condition(csr, "Denied")


# -- signing (authority.CertificateAuthority.Sign with PermissiveSigningPolicy) ------------------

_KEY_USAGES = {"signing": "digital_signature", "digital signature": "digital_signature",
               "content commitment": "content_commitment", "key encipherment": "key_encipherment",
               "key agreement": "key_agreement", "data encipherment": "data_encipherment",
               "cert sign": "key_cert_sign", "crl sign": "crl_sign", "encipher only": "encipher_only",
               "decipher only": "decipher_only"}
# in the order of Go's x509.ExtKeyUsage constants, which upstream sorts the extension by
_EXT_KEY_USAGES = {"any": ExtendedKeyUsageOID.ANY_EXTENDED_KEY_USAGE,
                   "server auth": ExtendedKeyUsageOID.SERVER_AUTH,
                   "client auth": ExtendedKeyUsageOID.CLIENT_AUTH,
                   "code signing": ExtendedKeyUsageOID.CODE_SIGNING,
                   "email protection": ExtendedKeyUsageOID.EMAIL_PROTECTION,
                   "s/mime": ExtendedKeyUsageOID.EMAIL_PROTECTION,
                   "ipsec end system": x509.ObjectIdentifier("1.3.6.1.5.5.7.3.5"),
                   "ipsec tunnel": x509.ObjectIdentifier("1.3.6.1.5.5.7.3.6"),
                   "ipsec user": x509.ObjectIdentifier("1.3.6.1.5.5.7.3.7"),
                   "timestamping": ExtendedKeyUsageOID.TIME_STAMPING,
                   "ocsp signing": ExtendedKeyUsageOID.OCSP_SIGNING,
                   "microsoft sgc": x509.ObjectIdentifier("1.3.6.1.4.1.311.10.3.3"),
                   "netscape sgc": x509.ObjectIdentifier("2.16.840.1.113730.4.1")}
_EXT_ORDER = list(dict.fromkeys(_EXT_KEY_USAGES.values()))

SigningKey = ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey | ed25519.Ed25519PrivateKey | ed448.Ed448PrivateKey


def duration_seconds(expiration_seconds: object, max_seconds: int) -> int:
    """``signer.duration``: the requested lifetime, at most the signer's, at least ten minutes."""
    if not isinstance(expiration_seconds, int) or isinstance(expiration_seconds, bool):
        return max_seconds
    return max(MIN_DURATION_SECONDS, min(expiration_seconds, max_seconds))


def sign_request(req: Request, usages: list[str], ttl_seconds: int, now: datetime.datetime,
                 ca_cert: x509.Certificate, ca_key: SigningKey) -> bytes:
    """The PEM certificate for ``req``; SignerError with upstream's text when it cannot be."""
    if not req.csr.is_signature_valid:
        raise SignerError("unable to verify certificate request signature: x509: ECDSA verification failure")
    unknown = [u for u in usages if u not in _KEY_USAGES and u not in _EXT_KEY_USAGES]
    if unknown:
        raise SignerError("unrecognized usage values: [" + " ".join(f'"{u}"' for u in unknown) + "]")
    ca_end = ca_cert.not_valid_after_utc
    not_before = now - datetime.timedelta(seconds=BACKDATE_SECONDS)
    if ttl_seconds < SHORT_SECONDS:
        # a short-lived certificate keeps its whole lifetime from now
        not_after = now + datetime.timedelta(seconds=ttl_seconds)
    else:
        not_after = now + datetime.timedelta(seconds=ttl_seconds - BACKDATE_SECONDS)
    not_after = min(not_after, ca_end)
    if not not_before < ca_end:
        raise SignerError(f"the signer has expired: NotAfter={_go_time(ca_end)}")
    if not now < ca_end:
        raise SignerError(f"refusing to sign a certificate that expired in the past: NotAfter={_go_time(ca_end)}")
    flags = {flag: False for flag in set(_KEY_USAGES.values())}
    for usage in usages:
        if usage in _KEY_USAGES:
            flags[_KEY_USAGES[usage]] = True
    ext = sorted({_EXT_KEY_USAGES[u] for u in usages if u in _EXT_KEY_USAGES}, key=_EXT_ORDER.index)
    builder = (x509.CertificateBuilder().subject_name(req.csr.subject).issuer_name(ca_cert.subject)
               .public_key(req.csr.public_key()).serial_number(x509.random_serial_number())
               .not_valid_before(not_before).not_valid_after(not_after)
               .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True))
    if any(flags.values()):
        builder = builder.add_extension(x509.KeyUsage(**flags), critical=True)
    if ext:
        builder = builder.add_extension(x509.ExtendedKeyUsage(ext), critical=False)
    try:
        sans = req.csr.extensions.get_extension_for_class(x509.SubjectAlternativeName)
        builder = builder.add_extension(sans.value, critical=sans.critical)
    except x509.ExtensionNotFound:
        pass
    algorithm = None if isinstance(ca_key, ed25519.Ed25519PrivateKey | ed448.Ed448PrivateKey) else hashes.SHA256()
    cert = builder.sign(ca_key, algorithm)
    return cert.public_bytes(serialization.Encoding.PEM)


def _go_time(t: datetime.datetime) -> str:
    """Go's default ``time.Time`` format, as the signer's messages print the CA's end."""
    return t.strftime("%Y-%m-%d %H:%M:%S +0000 UTC")


def load_signing_key(pem: bytes) -> SigningKey:
    key = serialization.load_pem_private_key(pem, password=None)
    if not isinstance(key, ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey | ed25519.Ed25519PrivateKey
                      | ed448.Ed448PrivateKey):
        raise TypeError(f"a {type(key).__name__} cannot sign certificates")
    return key
