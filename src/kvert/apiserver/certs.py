"""The cluster CA and the API server's serving certificate, made on first start.

``pki/ca.crt`` + ``ca.key`` (a self-signed CA) and ``pki/apiserver.crt`` +
``apiserver.key`` signed by it for the loopback names. Kept in the data directory so a
restarted ``kvert up`` keeps the same trust root and old kubeconfigs keep working.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import ssl
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import dsa, ec, ed448, ed25519, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

CA_DAYS = 3650
SERVING_DAYS = 825
DEFAULT_NAMES = ("localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc",
                 "127.0.0.1", "::1")


@dataclass(frozen=True)
class Pki:
    ca_cert: Path
    ca_key: Path
    cert: Path
    key: Path
    # the CA that client certificates must chain to (--client-ca-file); None: ``ca_cert``
    client_ca: Path | None = None

    def ca_pem(self) -> bytes:
        return self.ca_cert.read_bytes()

    def server_context(self, client_certificates: bool = False) -> ssl.SSLContext:
        """The serving context; with ``client_certificates``, a client may present a
        certificate the CA signed (kube-apiserver's ``--client-ca-file``)."""
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ctx.load_cert_chain(str(self.cert), str(self.key))
        if client_certificates:
            ctx.verify_mode = ssl.CERT_OPTIONAL
            ctx.load_verify_locations(cafile=str(self.client_ca or self.ca_cert))
        return ctx

    def client_context(self) -> ssl.SSLContext:
        return ssl.create_default_context(cafile=str(self.ca_cert))


def ensure_pki(directory: Path, now: datetime.datetime, names: tuple[str, ...] = DEFAULT_NAMES) -> Pki:
    """Load the CA and serving certificate from ``directory``, creating what is missing."""
    directory.mkdir(parents=True, exist_ok=True)
    pki = Pki(directory / "ca.crt", directory / "ca.key", directory / "apiserver.crt",
              directory / "apiserver.key")
    if not (pki.ca_cert.exists() and pki.ca_key.exists()):
        key = ec.generate_private_key(ec.SECP256R1())
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kvert-ca")])
        cert = (_builder(name, name, key.public_key(), now, CA_DAYS)
                .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
                .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                             content_commitment=False, key_encipherment=False,
                                             data_encipherment=False, key_agreement=False,
                                             encipher_only=False, decipher_only=False), critical=True)
                .sign(key, hashes.SHA256()))
        _write_key(pki.ca_key, key)
        pki.ca_cert.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        pki.cert.unlink(missing_ok=True)
    if not (pki.cert.exists() and pki.key.exists()):
        issue_serving_cert(pki, now, names)
    return pki


def issue_serving_cert(pki: Pki, now: datetime.datetime, names: tuple[str, ...]) -> None:
    ca_key = _signing_key(pki)
    ca_cert = x509.load_pem_x509_certificate(pki.ca_cert.read_bytes())
    key = ec.generate_private_key(ec.SECP256R1())
    alt_names: list[x509.GeneralName] = []
    for n in names:
        try:
            alt_names.append(x509.IPAddress(ipaddress.ip_address(n)))
        except ValueError:
            alt_names.append(x509.DNSName(n))
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kvert-apiserver")])
    cert = (_builder(subject, ca_cert.subject, key.public_key(), now, SERVING_DAYS)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.SubjectAlternativeName(alt_names), critical=False)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .sign(ca_key, hashes.SHA256()))
    _write_key(pki.key, key)
    pki.cert.write_bytes(cert.public_bytes(serialization.Encoding.PEM))


def ensure_client_cert(pki: Pki, name: str, user: str, groups: tuple[str, ...],
                       now: datetime.datetime) -> tuple[bytes, bytes]:
    """``pki/NAME.crt`` + ``NAME.key``: a client certificate the CA signed for ``user`` (the
    common name) in ``groups`` (the organizations), made once; its PEM certificate and key."""
    cert_path, key_path = pki.ca_cert.parent / f"{name}.crt", pki.ca_cert.parent / f"{name}.key"
    if not (cert_path.exists() and key_path.exists()):
        ca_key = _signing_key(pki)
        ca_cert = x509.load_pem_x509_certificate(pki.ca_cert.read_bytes())
        key = ec.generate_private_key(ec.SECP256R1())
        subject = x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, g) for g in groups] +
                            [x509.NameAttribute(NameOID.COMMON_NAME, user)])
        cert = (_builder(subject, ca_cert.subject, key.public_key(), now, SERVING_DAYS)
                .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
                .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
                .sign(ca_key, hashes.SHA256()))
        _write_key(key_path, key)
        cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return cert_path.read_bytes(), key_path.read_bytes()


# the API server's credential for node agents' kubelet endpoints (kubeadm's apiserver-kubelet-client:
# its group is kubeadm's; kvert binds nothing to it, the user's own binding is system:kubelet-api-admin)
KUBELET_CLIENT_CERT = "apiserver-kubelet-client"
KUBELET_CLIENT_GROUPS = ("kubeadm:cluster-admins",)


def kubelet_client_context(cert: Path, key: Path, ca: Path | None) -> ssl.SSLContext:
    """How the API server dials a node agent: presenting ``cert`` (kube-apiserver's
    ``--kubelet-client-certificate``/``-key``, no bearer token) and, given ``ca``
    (``--kubelet-certificate-authority``), trusting only serving certificates it signed for
    the address dialled; without it the serving certificate is not checked, as upstream."""
    ctx = ssl.create_default_context(ssl.Purpose.SERVER_AUTH)
    ctx.load_cert_chain(str(cert), str(key))
    if ca is None:
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    else:
        ctx.load_verify_locations(cafile=str(ca))
    return ctx


def _builder(subject: x509.Name, issuer: x509.Name, public_key, now: datetime.datetime,
             days: int) -> x509.CertificateBuilder:
    return (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer)
            .public_key(public_key).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=days)))


def _write_key(path: Path, key) -> None:
    data = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)


# the kinds of private key that sign X.509 certificates (kvert makes EC keys)
_ISSUER_KEY = (ec.EllipticCurvePrivateKey, rsa.RSAPrivateKey, ed25519.Ed25519PrivateKey,
               ed448.Ed448PrivateKey, dsa.DSAPrivateKey)


def _signing_key(pki: Pki) -> (ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey | ed25519.Ed25519PrivateKey
                               | ed448.Ed448PrivateKey | dsa.DSAPrivateKey):
    """The CA's private key; a TypeError when it is no kind that signs certificates."""
    key = serialization.load_pem_private_key(pki.ca_key.read_bytes(), password=None)
    if not isinstance(key, _ISSUER_KEY):
        raise TypeError(f"{pki.ca_key}: a {type(key).__name__} cannot sign certificates")
    return key
