"""Controllers that approve CertificateSigningRequests.

``CSRApprovingController`` is kube-controller-manager's ``csrapproving``
(``pkg/controller/certificates/approver/sarapprove.go``): a ``kube-apiserver-client-kubelet``
request that is a kubelet client certificate's (``O=system:nodes``, ``CN=system:node:...``, no
SANs, the kubelet usages) is approved with reason ``AutoApproved`` when a SubjectAccessReview
allows its requester to ``create`` ``certificatesigningrequests/selfnodeclient`` (the node
renewing its own certificate: the requester is the common name) or
``certificatesigningrequests/nodeclient`` (a bootstrap identity asking for a node's). Nothing
else is approved or denied here.

``KubeletServingApprover`` is kvert's own (``kubelet-serving-approver``): upstream's controller
manager never approves ``kubernetes.io/kubelet-serving`` requests, kubeadm clusters run an
external approver (kubelet-csr-approver) for them. It approves a kubelet serving request only
when the node asks for itself (the requester is ``system:node:NAME`` in ``system:nodes``, the
common name names the same node) and every SAN is one of that Node's own addresses
(``InternalIP``/``ExternalIP`` for IP SANs; ``Hostname``/``InternalDNS``/``ExternalDNS`` for DNS
SANs) that no other Node reports: a node cannot get a certificate for another node's address.
A request that does not qualify stays pending (an administrator may approve it).
"""

from __future__ import annotations

import ipaddress

from kvert.api import certificates as csrs
from kvert.api.meta import deep_copy
from kvert.auth.attributes import Attributes, Decision
from kvert.auth.authorizer import Authorizer
from kvert.auth.user import User
from kvert.client.base import Client
from kvert.clock import Clock
from kvert.controllers.base import Controller, InformerFactory, SyncError, safe_handler

CSRS = "certificates.k8s.io/certificatesigningrequests"
NODES = "nodes"

SELF_NODE_CLIENT_MESSAGE = "Auto approving self kubelet client certificate after SubjectAccessReview."
NODE_CLIENT_MESSAGE = "Auto approving kubelet client certificate after SubjectAccessReview."
KUBELET_SERVING_MESSAGE = ("Auto approving kubelet serving certificate: the node asked for its own "
                           "name and addresses.")

_IP_TYPES = ("InternalIP", "ExternalIP")
_DNS_TYPES = ("Hostname", "InternalDNS", "ExternalDNS")


def approval_condition(message: str) -> dict:
    return {"type": "Approved", "status": "True", "reason": "AutoApproved", "message": message}


def _pending(csr: dict) -> bool:
    return not (csr.get("status") or {}).get("certificate") and not csrs.is_decided(csr)


def _parsed(csr: dict) -> csrs.Request | None:
    try:
        return csrs.parse_request(csrs.request_pem(csr))
    except csrs.SignerError:
        return None


class _Approver(Controller):
    def __init__(self, client: Client, clock: Clock, *, informers: InformerFactory | None = None,
                 workers: int = 1):
        super().__init__(client, clock, informers=informers, workers=workers)
        self.csrs = self.use(CSRS)
        self.csrs.add_handlers(safe_handler(self._enqueue), safe_handler(lambda old, new: self._enqueue(new)),
                               None)

    def _enqueue(self, csr: dict) -> None:
        self.enqueue((csr.get("metadata") or {}).get("name", ""))

    async def _approve(self, csr: dict, message: str) -> None:
        csr = deep_copy(csr)
        csr.setdefault("status", {}).setdefault("conditions", []).append(approval_condition(message))
        await self.client.update(CSRS, csr, subresource="approval")


class CSRApprovingController(_Approver):
    """``authorizer``: answer the SubjectAccessReviews with it, as the API server would (an
    in-process controller manager, whose client serves no reviews); else create them."""

    name = "csrapproving"

    def __init__(self, client: Client, clock: Clock, *, authorizer: Authorizer | None = None,
                 informers: InformerFactory | None = None, workers: int = 1):
        super().__init__(client, clock, informers=informers, workers=workers)
        self.authorizer = authorizer

    async def sync(self, name: str) -> None:
        csr = self.csrs.get(name)
        if csr is None or not _pending(csr):
            return
        spec = csr.get("spec") or {}
        if spec.get("signerName") != csrs.KUBE_APISERVER_CLIENT_KUBELET:
            return
        req = _parsed(csr)
        if req is None or csrs.kubelet_client_problem(req, spec.get("usages") or []):
            return
        tried = []
        recognizers = [("selfnodeclient", SELF_NODE_CLIENT_MESSAGE, spec.get("username") == req.common_name),
                       ("nodeclient", NODE_CLIENT_MESSAGE, True)]
        for subresource, message, recognized in recognizers:
            if not recognized:
                continue
            tried.append(subresource)
            if await self._allowed(spec, subresource):
                await self._approve(csr, message)
                return
        # upstream's IgnorableError: logged, the request stays pending
        raise SyncError(f'recognized csr "{name}" as [{" ".join(tried)}] but subject access review '
                        "was not approved")

    async def _allowed(self, spec: dict, subresource: str) -> bool:
        if self.authorizer is not None:
            extra = tuple(sorted((k, tuple(v)) for k, v in (spec.get("extra") or {}).items()))
            user = User(spec.get("username", ""), uid=spec.get("uid", ""),
                        groups=tuple(spec.get("groups") or ()), extra=extra)
            decision, _ = self.authorizer.authorize(Attributes(
                user, "create", api_group="certificates.k8s.io", resource="certificatesigningrequests",
                subresource=subresource))
            return decision is Decision.ALLOW
        review = await self.client.create("authorization.k8s.io/subjectaccessreviews", {
            "apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
            "spec": {"user": spec.get("username", ""), "uid": spec.get("uid", ""),
                     "groups": spec.get("groups") or [], "extra": spec.get("extra") or {},
                     "resourceAttributes": {"group": "certificates.k8s.io",
                                            "resource": "certificatesigningrequests",
                                            "verb": "create", "subresource": subresource}}})
        return bool((review.get("status") or {}).get("allowed"))


class KubeletServingApprover(_Approver):
    name = "kubelet-serving-approver"

    def __init__(self, client: Client, clock: Clock, *, informers: InformerFactory | None = None,
                 workers: int = 1):
        super().__init__(client, clock, informers=informers, workers=workers)
        self.nodes = self.use(NODES)
        # a node's addresses may arrive after its request: look at its requests again then
        self.nodes.add_handlers(safe_handler(lambda node: self._requeue_all()),
                                safe_handler(lambda old, new: self._requeue_all()), None)

    def _requeue_all(self) -> None:
        for csr in self.csrs.list():
            if _pending(csr) and (csr.get("spec") or {}).get("signerName") == csrs.KUBELET_SERVING:
                self._enqueue(csr)

    async def sync(self, name: str) -> None:
        csr = self.csrs.get(name)
        if csr is None or not _pending(csr):
            return
        spec = csr.get("spec") or {}
        if spec.get("signerName") != csrs.KUBELET_SERVING:
            return
        req = _parsed(csr)
        if req is None or not self.qualifies(spec, req):
            return
        await self._approve(csr, KUBELET_SERVING_MESSAGE)

    def qualifies(self, spec: dict, req: csrs.Request) -> bool:
        """The node asks for itself, for its own addresses only."""
        if csrs.kubelet_serving_problem(req, spec.get("usages") or []):
            return False
        if spec.get("username") != req.common_name or csrs.NODES_GROUP not in (spec.get("groups") or []):
            return False
        node_name = req.common_name[len(csrs.NODE_USER_PREFIX):]
        node = self.nodes.get(node_name)
        if node is None:
            return False
        ips, names = _addresses(node)
        others_ips: set[str] = set()
        for other in self.nodes.list():
            if (other.get("metadata") or {}).get("name") != node_name:
                others_ips |= _addresses(other)[0]
        return (all(_normal_ip(ip) in ips and _normal_ip(ip) not in others_ips for ip in req.ip_addresses)
                and all(dns in names for dns in req.dns_names))


def _addresses(node: dict) -> tuple[set[str], set[str]]:
    ips: set[str] = set()
    names: set[str] = set()
    for entry in (node.get("status") or {}).get("addresses") or []:
        if not isinstance(entry, dict) or not isinstance(entry.get("address"), str):
            continue
        if entry.get("type") in _IP_TYPES:
            ips.add(_normal_ip(entry["address"]))
        elif entry.get("type") in _DNS_TYPES:
            names.add(entry["address"])
    return ips, names


def _normal_ip(text: str) -> str:
    """One spelling per address (``::1`` and ``0:0::1`` are one IP)."""
    try:
        return str(ipaddress.ip_address(text))
    except ValueError:
        return text
