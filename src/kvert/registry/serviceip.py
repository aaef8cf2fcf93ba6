"""Service ClusterIPs and NodePorts, allocated as kube-apiserver's service storage does.

Upstream keeps a bitmap per range in etcd (``pkg/registry/core/service/ipallocator`` and
``portallocator``) and a repair loop reconciles it with the Services. kvert has no second
copy to drift: what is in use is read from the stored Services at each allocation, plus
what creates in flight (allocated, not stored yet) hold. A restart therefore starts from
exactly the stored Services. Single-stack IPv4 only.

Entry points: :meth:`ServiceAllocator.allocate_create` (fills ``clusterIP``/``clusterIPs``,
``ipFamilies``, ``ipFamilyPolicy`` and ``nodePort``s, or raises 422 naming the field) and
:meth:`ServiceAllocator.allocate_update` (keeps what an update left out, allocates what a
type change needs). Releasing is deleting: a deleted Service's addresses are no longer read.
"""

from __future__ import annotations

import ipaddress
import random
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from kvert.api.defaults import is_externally_accessible
from kvert.api.errors import Cause, Invalid
from kvert.api.meta import name_of
from kvert.api.types import Obj
from kvert.api.validation.common import invalid
from kvert.store.base import Store

DEFAULT_SERVICE_CIDR = "10.96.0.0/12"     # kubeadm's and kind's --service-cluster-ip-range
DEFAULT_NODE_PORTS = (30000, 32767)       # --service-node-port-range

_NEEDS_NODE_PORTS = ("NodePort", "LoadBalancer")


def needs_cluster_ip(spec: Obj) -> bool:
    return bool(spec.get("type", "ClusterIP") != "ExternalName" and spec.get("clusterIP") != "None")


def _clusterip_family(spec: Obj) -> bool:
    """ipFamilies apply to every type but ExternalName (headless included)."""
    return bool(spec.get("type", "ClusterIP") != "ExternalName")


def first_ip(cidr: str) -> str:
    """The address the ``kubernetes`` Service gets: the range's first usable one."""
    return str(ipaddress.ip_network(cidr)[1])


class ServiceAllocator:
    def __init__(self, store: Store, cidr: str = DEFAULT_SERVICE_CIDR,
                 node_ports: tuple[int, int] = DEFAULT_NODE_PORTS, seed: int | None = None) -> None:
        self.store = store
        self.network = ipaddress.ip_network(cidr)
        self.node_ports = node_ports
        self._pending_ips: set[str] = set()
        self._pending_ports: set[int] = set()
        self._random = random.Random(seed)

    # ---- what is in use ----------------------------------------------------------------

    def _used(self, skip: tuple[str | None, str | None] | None = None) -> tuple[set[str], set[int]]:
        ips, ports = set(self._pending_ips), set(self._pending_ports)
        for svc in self.store.list("services").items:
            meta: Obj = svc.get("metadata") or {}
            if skip == (meta.get("namespace"), meta.get("name")):
                continue
            spec: Obj = svc.get("spec") or {}
            ips.update(ip for ip in spec.get("clusterIPs") or [spec.get("clusterIP")]
                       if ip and ip != "None")
            ports.update(p["nodePort"] for p in spec.get("ports") or []
                         if isinstance(p, dict) and p.get("nodePort"))
        return ips, ports

    # ---- create and update -------------------------------------------------------------

    @contextmanager
    def allocate_create(self, svc: Obj) -> Iterator[None]:
        """Allocate for a Service about to be created; what was taken stays reserved for the
        body of the ``with`` (the write) and is given back if it fails."""
        spec = svc.setdefault("spec", {})
        if not _well_formed(spec):
            yield   # validation names what is wrong; nothing to allocate for
            return
        used_ips, used_ports = self._used()
        causes: list[Cause] = []
        ips = self._cluster_ips(spec, used_ips, causes)
        ports = self._node_ports(spec, used_ports, set(), causes)
        if causes:
            raise Invalid("Service", name_of(svc), causes)
        with self._reserved(ips, ports):
            yield

    @contextmanager
    def allocate_update(self, new: Obj, old: Obj) -> Iterator[None]:
        """``patchAllocatedValues`` then allocation for what a type change needs: a PUT
        without ``clusterIP`` or ``nodePort`` keeps the stored ones, as upstream."""
        spec: Obj = new.setdefault("spec", {})
        old_spec: Obj = old.get("spec") or {}
        if not _well_formed(spec):
            yield
            return
        _drop_type_dependent(spec, old_spec)
        _keep_allocated(spec, old_spec)
        meta: Obj = old.get("metadata") or {}
        used_ips, used_ports = self._used(skip=(meta.get("namespace"), meta.get("name")))
        causes: list[Cause] = []
        ips: list[str] = []
        if not old_spec.get("clusterIPs") or not needs_cluster_ip(old_spec):
            ips = self._cluster_ips(spec, used_ips, causes)
        own = {p["nodePort"] for p in old_spec.get("ports") or []
               if isinstance(p, dict) and p.get("nodePort")}
        ports = self._node_ports(spec, used_ports, own, causes)
        if causes:
            raise Invalid("Service", name_of(new), causes)
        with self._reserved(ips, ports):
            yield

    @contextmanager
    def _reserved(self, ips: list[str], ports: list[int]) -> Iterator[None]:
        self._pending_ips.update(ips)
        self._pending_ports.update(ports)
        try:
            yield
        finally:
            self._pending_ips.difference_update(ips)
            self._pending_ports.difference_update(ports)

    def _cluster_ips(self, spec: Obj, used: set[str], causes: list[Cause]) -> list[str]:
        """Fill the IP fields; returns the IPs taken."""
        if _clusterip_family(spec):
            spec.setdefault("ipFamilies", ["IPv4"])
            spec.setdefault("ipFamilyPolicy", "SingleStack")
        if not needs_cluster_ip(spec):
            return []
        requested = spec.get("clusterIPs") or ([spec["clusterIP"]] if spec.get("clusterIP") else [])
        if not requested:
            ip = self._free_ip(used)
            if ip is None:
                causes.append(invalid("spec.clusterIPs", [],
                                      "failed to allocate IP: range is full"))
                return []
            spec["clusterIP"], spec["clusterIPs"] = ip, [ip]
            return [ip]
        wanted = requested[0]
        try:
            address = ipaddress.ip_address(wanted)
        except ValueError:
            return []   # validation names the malformed address
        if address not in self.network or address in (self.network.network_address,
                                                      self.network.broadcast_address):
            causes.append(invalid("spec.clusterIPs", requested,
                                  f"failed to allocate IP {wanted}: provided IP is not in the "
                                  f"valid range. The range of valid IPs is {self.network}"))
            return []
        if wanted in used:
            causes.append(invalid("spec.clusterIPs", requested,
                                  f"failed to allocate IP {wanted}: provided IP is already "
                                  "allocated"))
            return []
        spec["clusterIP"], spec["clusterIPs"] = wanted, list(requested)
        return [wanted]

    def _free_ip(self, used: set[str]) -> str | None:
        # Upstream picks at random, preferring the upper part of the range for dynamic IPs
        # (KEP-3070) so that the lower part stays for static ones; kvert does the same.
        size = self.network.num_addresses - 2
        base = int(self.network.network_address) + 1
        offset = 0 if size < 16 else max(16, min(256, size // 16))   # calculateRangeOffset
        for start, count in ((offset, size - offset), (0, offset)):
            if count <= 0:
                continue
            first = self._random.randrange(count)
            for i in range(count):
                ip = str(ipaddress.ip_address(base + start + (first + i) % count))
                if ip not in used:
                    return ip
        return None

    def _node_ports(self, spec: Obj, used: set[int], own: set[int],
                    causes: list[Cause]) -> list[int]:
        if spec.get("type") not in _NEEDS_NODE_PORTS:
            return []
        lo, hi = self.node_ports
        taken: list[int] = []
        ports = [p for p in spec.get("ports") or [] if isinstance(p, dict)]
        for i, port in enumerate(ports):
            wanted = port.get("nodePort")
            if not wanted:
                continue
            if not isinstance(wanted, int) or isinstance(wanted, bool):
                continue   # validation names the wrong type
            if wanted in own:
                continue
            path = f"spec.ports[{i}].nodePort"
            if not lo <= wanted <= hi:
                causes.append(invalid(path, wanted, "provided port is not in the valid range. "
                                                    f"The range of valid ports is {lo}-{hi}"))
            elif wanted in used or wanted in taken:
                causes.append(invalid(path, wanted, "provided port is already allocated"))
            else:
                taken.append(wanted)
        if spec.get("type") == "LoadBalancer" and spec.get("allocateLoadBalancerNodePorts") is False:
            return taken   # only the nodePorts asked for
        for port in ports:
            if port.get("nodePort"):
                continue
            # a port number served over TCP and UDP shares one nodePort (upstream's
            # ports-with-the-same-port-number rule)
            twin = next((p.get("nodePort") for p in ports if p is not port
                         and p.get("port") == port.get("port") and p.get("nodePort")), None)
            if twin:
                port["nodePort"] = twin
                continue
            free = self._free_port(used | own | set(taken))
            if free is None:
                causes.append(invalid("spec.ports", port.get("port"),
                                      "failed to allocate a nodePort: range is full"))
                break
            port["nodePort"] = free
            taken.append(free)
        return taken

    def _free_port(self, used: set[int]) -> int | None:
        lo, hi = self.node_ports
        count = hi - lo + 1
        first = self._random.randrange(count)
        for i in range(count):
            port = lo + (first + i) % count
            if port not in used:
                return port
        return None


def _well_formed(spec: Any) -> bool:
    """The fields allocation reads have their types (else validation refuses the write)."""
    if not isinstance(spec, dict):
        return False
    ips = spec.get("clusterIPs")
    return (isinstance(spec.get("clusterIP", ""), str)
            and (ips is None or (isinstance(ips, list) and all(isinstance(i, str) for i in ips)))
            and isinstance(spec.get("ports") or [], list)
            and isinstance(spec.get("type", ""), str))


def _node_ports_of(spec: Obj) -> list[Any]:
    return [p.get("nodePort") for p in spec.get("ports") or [] if isinstance(p, dict)]


def _drop_type_dependent(spec: Obj, old_spec: Obj) -> None:
    """Upstream's ``dropTypeDependentFields``: a type change that no longer needs what was
    allocated drops it, unless the client asked for it (changed it in this write)."""
    if _clusterip_family(old_spec) and not _clusterip_family(spec):
        if spec.get("clusterIP") == old_spec.get("clusterIP") and \
                spec.get("clusterIPs") == old_spec.get("clusterIPs"):
            spec.pop("clusterIP", None)
            spec.pop("clusterIPs", None)
        for field in ("ipFamilies", "ipFamilyPolicy", "internalTrafficPolicy"):
            if spec.get(field) == old_spec.get(field):
                spec.pop(field, None)
    if old_spec.get("type") == "LoadBalancer" and spec.get("type") != "LoadBalancer" and \
            spec.get("allocateLoadBalancerNodePorts") == old_spec.get("allocateLoadBalancerNodePorts"):
        spec.pop("allocateLoadBalancerNodePorts", None)
    if is_externally_accessible(old_spec) and not is_externally_accessible(spec) and \
            spec.get("externalTrafficPolicy") == old_spec.get("externalTrafficPolicy"):
        spec.pop("externalTrafficPolicy", None)
    if old_spec.get("type") in _NEEDS_NODE_PORTS and spec.get("type") not in _NEEDS_NODE_PORTS \
            and _node_ports_of(spec) == _node_ports_of(old_spec):
        for port in spec.get("ports") or []:
            if isinstance(port, dict):
                port.pop("nodePort", None)


def _keep_allocated(spec: Obj, old_spec: Obj) -> None:
    """Upstream's ``patchAllocatedValues``: what the client left out keeps its stored value."""
    if needs_cluster_ip(old_spec) and needs_cluster_ip(spec):
        if not spec.get("clusterIP") and not spec.get("clusterIPs"):
            for field in ("clusterIP", "clusterIPs"):
                if field in old_spec:
                    spec[field] = list(old_spec[field]) if field == "clusterIPs" \
                        else old_spec[field]
    if _clusterip_family(old_spec) and _clusterip_family(spec):
        for field in ("ipFamilies", "ipFamilyPolicy"):
            if not spec.get(field) and old_spec.get(field):
                spec[field] = old_spec[field]
    if old_spec.get("type") in _NEEDS_NODE_PORTS and spec.get("type") in _NEEDS_NODE_PORTS:
        old_ports = {(p.get("port"), p.get("protocol", "TCP")): p.get("nodePort")
                     for p in old_spec.get("ports") or [] if isinstance(p, dict)}
        for port in spec.get("ports") or []:
            if isinstance(port, dict) and not port.get("nodePort"):
                kept = old_ports.get((port.get("port"), port.get("protocol", "TCP")))
                if kept:
                    port["nodePort"] = kept
