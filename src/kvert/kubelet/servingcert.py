"""A node agent's serving certificate, requested through the CSR API as the kubelet's
certificate manager does with ``serverTLSBootstrap: true``.

The agent makes a new key and a ``CertificateSigningRequest`` for the signer
``kubernetes.io/kubelet-serving``: subject ``CN=system:node:NAME``, ``O=system:nodes``, usages
digital signature and server auth, SANs the node's addresses (IPs) and host names (DNS). Once
the request is approved and signed (``status.certificate``) the certificate and key are kept
in ``DIR/kubelet-server-current.pem`` (0600) and loaded into the endpoint's TLS context, which
serves them to every new connection without a restart. A kept certificate is used again after
a restart if it is still valid for the same names. It is renewed at a random point between 70%
and 90% of its lifetime (the certificate manager's ``nextRotationDeadline``); a request that is
denied or fails is made again after a back-off.
"""

from __future__ import annotations

import base64
import binascii
import datetime
import ipaddress
import logging
import os
import random
import ssl
from collections.abc import Sequence
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from kvert.api import certificates as csrs
from kvert.api.errors import ApiError
from kvert.client.base import Client
from kvert.clock import Clock

log = logging.getLogger(__name__)

CSRS = "certificates.k8s.io/certificatesigningrequests"
CURRENT = "kubelet-server-current.pem"
USAGES = ["digital signature", "server auth"]     # an EC key: no key encipherment
POLL_SECONDS = 1.0
RETRY_SECONDS = 30.0


class RequestRefused(Exception):
    """The CSR was denied or its signer failed it."""


class ServingCertificates:
    def __init__(self, client: Client, clock: Clock, *, node_name: str, names: Sequence[str],
                 directory: Path, ssl_context: ssl.SSLContext, expiration_seconds: int | None = None,
                 rng: random.Random | None = None):
        self.client = client
        self.clock = clock
        self.node_name = node_name
        self.ips = sorted({str(ipaddress.ip_address(n)) for n in names if _is_ip(n)})
        self.dns = sorted({n for n in names if n and not _is_ip(n)})
        self.directory = directory
        self.ssl_context = ssl_context
        self.expiration_seconds = expiration_seconds
        self.rng = rng or random.Random()
        self.certificate: x509.Certificate | None = None
        self.requests: list[str] = []            # the CSRs made, by name
        self._deadline = 0.0

    @property
    def path(self) -> Path:
        return self.directory / CURRENT

    async def run(self) -> None:
        """Keep a current certificate in the TLS context until cancelled."""
        if self._load_kept():
            log.info("node %s: serving with the kept certificate %s", self.node_name, self.path)
        while True:
            wait = self._deadline - self.clock.now()
            if self.certificate is not None and wait > 0:
                await self.clock.sleep(wait)
                continue
            try:
                await self.renew()
            except (RequestRefused, ApiError) as e:
                log.warning("node %s: no serving certificate: %s; asking again in %.0fs", self.node_name, e,
                            RETRY_SECONDS)
                await self.clock.sleep(RETRY_SECONDS)

    async def renew(self) -> x509.Certificate:
        """Request a certificate, wait until it is issued, and serve it."""
        key = ec.generate_private_key(ec.SECP256R1())
        pem = self._request(key)
        spec: dict = {"request": base64.b64encode(pem).decode(), "signerName": csrs.KUBELET_SERVING,
                      "usages": USAGES}
        if self.expiration_seconds is not None:
            spec["expirationSeconds"] = self.expiration_seconds
        created = await self.client.create(CSRS, {
            "apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
            "metadata": {"generateName": "csr-"}, "spec": spec})
        name = created["metadata"]["name"]
        self.requests.append(name)
        log.info("node %s: waiting for CSR %s to be approved and signed", self.node_name, name)
        issued = await self._wait_issued(name)
        cert = x509.load_pem_x509_certificate(issued)
        key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                    serialization.NoEncryption())
        self._keep(issued + key_pem)
        self._use(cert)
        return cert

    def _request(self, key: ec.EllipticCurvePrivateKey) -> bytes:
        subject = x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, csrs.NODES_GROUP),
                             x509.NameAttribute(NameOID.COMMON_NAME, csrs.NODE_USER_PREFIX + self.node_name)])
        sans: list[x509.GeneralName] = [x509.DNSName(d) for d in self.dns] + [
            x509.IPAddress(ipaddress.ip_address(i)) for i in self.ips]
        csr = (x509.CertificateSigningRequestBuilder().subject_name(subject)
               .add_extension(x509.SubjectAlternativeName(sans), critical=False)
               .sign(key, hashes.SHA256()))
        return csr.public_bytes(serialization.Encoding.PEM)

    async def _wait_issued(self, name: str) -> bytes:
        while True:
            csr = await self.client.get(CSRS, name)
            data = (csr.get("status") or {}).get("certificate")
            if data:
                try:
                    return base64.b64decode(data)
                except (binascii.Error, ValueError):
                    raise RequestRefused(f"CSR {name}: status.certificate is not base64") from None
            for kind in ("Denied", "Failed"):
                if csrs.has_true_condition(csr, kind):
                    raise RequestRefused(f"CSR {name} was {kind.lower()}")
            await self.clock.sleep(POLL_SECONDS)

    def _keep(self, data: bytes) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        temporary = self.path.with_suffix(".tmp")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(temporary, self.path)

    def _load_kept(self) -> bool:
        try:
            cert = x509.load_pem_x509_certificate(self.path.read_bytes())
        except (OSError, ValueError):
            return False
        now = self.clock.now()
        if not (cert.not_valid_before_utc.timestamp() <= now < cert.not_valid_after_utc.timestamp()):
            return False
        if _names(cert) != (self.dns, self.ips):
            return False                     # the node's addresses changed: ask again
        try:
            self._use(cert)
        except (ssl.SSLError, OSError):
            return False
        return True

    def _use(self, cert: x509.Certificate) -> None:
        self.ssl_context.load_cert_chain(str(self.path))
        self.certificate = cert
        self._deadline = rotation_deadline(cert, self.rng)
        log.info("node %s: serving certificate valid until %s, renewed after %s", self.node_name,
                 cert.not_valid_after_utc.isoformat(),
                 datetime.datetime.fromtimestamp(self._deadline, tz=datetime.UTC).isoformat())


def rotation_deadline(cert: x509.Certificate, rng: random.Random) -> float:
    """``nextRotationDeadline``: 70% of the lifetime, plus up to 20% more at random."""
    start = cert.not_valid_before_utc.timestamp()
    total = cert.not_valid_after_utc.timestamp() - start
    return start + total * (0.7 + 0.2 * rng.random())


def _names(cert: x509.Certificate) -> tuple[list[str], list[str]]:
    try:
        sans = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return [], []
    return (sorted(str(n) for n in sans.get_values_for_type(x509.DNSName)),
            sorted(str(n) for n in sans.get_values_for_type(x509.IPAddress)))


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True
