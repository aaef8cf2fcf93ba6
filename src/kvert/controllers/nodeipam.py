"""Node IPAM (kube-controller-manager's ``nodeipam`` with ``--allocate-node-cidrs`` and the
range allocator), as kind and kubeadm clusters run it: every node gets a slice of the
cluster CIDR (``--cluster-cidr=10.244.0.0/16``, ``--node-cidr-mask-size=24``) in
``spec.podCIDR`` and ``spec.podCIDRs``, the lowest one no other node holds; the node's
pods get their IPs from it. A node keeps its CIDR for life (validation forbids changing
it); a deleted node's CIDR is free again. When the cluster CIDR is used up the node gets
the ``CIDRNotAvailable`` event, as upstream's allocator records it.
"""

from __future__ import annotations

import ipaddress

from kvert.api.errors import NotFound
from kvert.client.base import Client
from kvert.client.events import EventRecorder
from kvert.clock import Clock
from kvert.controllers.base import Controller, InformerFactory, safe_handler

NODES = "nodes"
DEFAULT_CLUSTER_CIDR = "10.244.0.0/16"
DEFAULT_NODE_MASK_SIZE = 24


def cluster_cidr_for(nodes: int, mask_size: int = DEFAULT_NODE_MASK_SIZE) -> str:
    """The default cluster CIDR, widened (at the same base, aligned) until it holds a node CIDR
    for each of ``nodes`` nodes: what an operator sets ``--cluster-cidr`` to for a cluster of
    that size (10.244.0.0/16 holds 256 /24s). It stays clear of the service range
    (10.96.0.0/12) up to 32 768 nodes."""
    network = ipaddress.ip_network(DEFAULT_CLUSTER_CIDR)
    while 2 ** (mask_size - network.prefixlen) < nodes and network.prefixlen > 8:
        network = network.supernet()
    return str(network)


def node_cidrs(cluster_cidr: str, mask_size: int) -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    """The node-sized subnets of the cluster CIDR, in allocation order; ValueError when the
    mask does not fit (``--node-cidr-mask-size`` must be longer than the cluster's)."""
    network = ipaddress.ip_network(cluster_cidr, strict=True)
    if mask_size <= network.prefixlen or mask_size > network.max_prefixlen:
        raise ValueError(f"node CIDR mask size {mask_size} must be longer than the cluster CIDR's "
                         f"{network.prefixlen} and at most {network.max_prefixlen}")
    if mask_size - network.prefixlen > 16:
        raise ValueError("the cluster CIDR holds more than 65536 node CIDRs")   # upstream's limit
    return list(network.subnets(new_prefix=mask_size))


def first_free(cidrs: list, taken: set[str]) -> str | None:
    return next((str(c) for c in cidrs if str(c) not in taken), None)


class NodeIpamController(Controller):
    name = "nodeipam"

    def __init__(self, client: Client, clock: Clock, *, informers: InformerFactory | None = None,
                 workers: int = 1, cluster_cidr: str = DEFAULT_CLUSTER_CIDR,
                 node_cidr_mask_size: int = DEFAULT_NODE_MASK_SIZE):
        super().__init__(client, clock, informers=informers, workers=workers)
        self.cidrs = node_cidrs(cluster_cidr, node_cidr_mask_size)
        self.recorder = EventRecorder(client, clock, "cidrAllocator")
        # what this controller gave before its informer shows it (upstream's cidrSet bitmap)
        self.assigned: dict[str, str] = {}
        self.nodes = self.use(NODES)
        self.nodes.add_handlers(safe_handler(self._node), safe_handler(lambda old, new: self._node(new)), None)

    def _node(self, node: dict) -> None:
        if not (node.get("spec") or {}).get("podCIDR"):
            self.enqueue((node.get("metadata") or {}).get("name", ""))

    async def sync(self, name: str) -> None:
        node = self.nodes.get(name)
        if node is None or (node.get("spec") or {}).get("podCIDR"):
            return
        taken = {cidr for n in self.nodes.list()
                 for cidr in ((n.get("spec") or {}).get("podCIDRs") or [])}
        self.assigned = {n: c for n, c in self.assigned.items() if self.nodes.get(n) is not None}
        taken |= {c for n, c in self.assigned.items() if n != name}
        cidr = self.assigned.get(name) or first_free(self.cidrs, taken)
        if cidr is None:
            await self.recorder.record(node, "Normal", "CIDRNotAvailable",
                                       f"Node {name} status is now: CIDRNotAvailable")
            return
        self.assigned[name] = cidr
        try:
            await self.client.patch(NODES, name, {"spec": {"podCIDR": cidr, "podCIDRs": [cidr]}}, "strategic")
        except NotFound:
            self.assigned.pop(name, None)
