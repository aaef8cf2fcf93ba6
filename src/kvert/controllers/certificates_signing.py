"""The CSR signing controller (kube-controller-manager's ``csrsigning``,
``pkg/controller/certificates/signer``): approved CertificateSigningRequests for
``kubernetes.io/kube-apiserver-client``, ``kubernetes.io/kube-apiserver-client-kubelet`` and
``kubernetes.io/kubelet-serving`` get ``status.certificate`` signed by the cluster CA.

Upstream runs one controller per signer over one CA (``--cluster-signing-cert-file`` /
``--cluster-signing-key-file``); here one controller answers the three. A request is left
alone until it is Approved (and not Denied or Failed); one its signer's rules refuse gets the
condition ``Failed`` with reason ``SignerValidationFailure`` and the rule's message, and is
never signed. ``spec.expirationSeconds`` shortens the certificate down to ten minutes, never
beyond ``--cluster-signing-duration`` (a year by default). Other signers' requests (their own
controllers sign them) and ``kubernetes.io/legacy-unknown`` are not touched.
"""

from __future__ import annotations

import base64
import datetime

from cryptography import x509

from kvert.api import certificates as csrs
from kvert.api.meta import deep_copy, format_time
from kvert.client.base import Client
from kvert.clock import Clock
from kvert.controllers.base import Controller, InformerFactory, SyncError, safe_handler

CSRS = "certificates.k8s.io/certificatesigningrequests"


class CSRSigningController(Controller):
    name = "csrsigning"

    def __init__(self, client: Client, clock: Clock, *, ca_cert: bytes, ca_key: bytes,
                 duration_seconds: int = csrs.DEFAULT_SIGNING_DURATION_SECONDS,
                 informers: InformerFactory | None = None, workers: int = 1):
        super().__init__(client, clock, informers=informers, workers=workers)
        self.ca_cert = x509.load_pem_x509_certificate(ca_cert)
        self.ca_key = csrs.load_signing_key(ca_key)
        self.duration_seconds = duration_seconds
        self.csrs = self.use(CSRS)
        self.csrs.add_handlers(safe_handler(self._enqueue), safe_handler(lambda old, new: self._enqueue(new)),
                               None)

    def _enqueue(self, csr: dict) -> None:
        self.enqueue((csr.get("metadata") or {}).get("name", ""))

    async def sync(self, name: str) -> None:
        csr = self.csrs.get(name)
        if csr is None or (csr.get("status") or {}).get("certificate"):
            return
        if not csrs.is_approved(csr) or csrs.has_true_condition(csr, "Failed"):
            return
        spec = csr.get("spec") or {}
        usages = [u for u in spec.get("usages") or [] if isinstance(u, str)]
        signer = spec.get("signerName", "")
        try:
            req = csrs.parse_request(csrs.request_pem(csr))
        except csrs.SignerError:
            return      # validation keeps unparsable requests out; nothing to sign
        problem = csrs.signer_problem(signer, req, usages)
        if problem is None:
            return      # not a signer this controller signs for
        if problem:
            await self._fail(csr, problem)
            return
        now = datetime.datetime.fromtimestamp(self.clock.now(), tz=datetime.UTC)
        ttl = csrs.duration_seconds(spec.get("expirationSeconds"), self.duration_seconds)
        try:
            pem = csrs.sign_request(req, usages, ttl, now, self.ca_cert, self.ca_key)
        except csrs.SignerError as e:
            # upstream retries these ("error auto signing csr"): an expired CA may be replaced
            raise SyncError(f"error auto signing csr: {e}") from None
        csr = deep_copy(csr)
        # status.certificate is bytes in the API: base64 in JSON
        csr.setdefault("status", {})["certificate"] = base64.b64encode(pem).decode()
        await self.client.update_status(CSRS, csr)

    async def _fail(self, csr: dict, message: str) -> None:
        csr = deep_copy(csr)
        conditions = csr.setdefault("status", {}).setdefault("conditions", [])
        conditions.append({"type": "Failed", "status": "True", "reason": "SignerValidationFailure",
                           "message": message, "lastUpdateTime": format_time(self.clock.now())})
        await self.client.update_status(CSRS, csr)
