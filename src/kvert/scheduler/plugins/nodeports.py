"""NodePorts: a pod's host ports must be free on the node (``nodeports/node_ports.go``).

The ports a pod takes on its node are ``cache.host_ports`` (``schedutil.GetHostPorts``): every
port with a ``hostPort`` of its app containers and sidecars (init containers with
``restartPolicy: Always``), hostIP defaulting to 0.0.0.0 and protocol to TCP. A wanted port
conflicts with a used one of the same protocol and port number when either side binds
0.0.0.0 or both bind the same IP (``HostPortInfo.CheckConflict``):

=================  ===================================================================
wanted hostIP      conflicts with a used (protocol, port) bound to
=================  ===================================================================
0.0.0.0            any IP
a specific IP      0.0.0.0 or the same IP
=================  ===================================================================

PreFilter reads the pod's host ports and skips the plugin when there are none (1.35: most
pods ask for no host port). Filter rejects a node with ``node(s) didn't have free ports for
the requested pod ports`` (Unschedulable: preempting the pod holding the port frees it).

Instead of asking every node for its used ports, the plugin keeps an incremental index of
the cache's pods (a pod listener, :meth:`NodeCache.add_pod_listener`): per (protocol, port)
and bound IP, the number of pods per node row using it, so one cycle is a few numpy lookups
whatever the number of nodes. A :class:`~kvert.scheduler.view.CacheView` (nominated pods
added, victims removed) is answered from its own ``used_ports`` for the few rows asked.

Queueing: the deletion of a scheduled (or nominated) pod holding a conflicting host port may
free it; a new node may have it free (``EventsToRegister`` with queueing hints on).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from kvert.scheduler.cache import host_ports
from kvert.scheduler.framework import (
    NODE,
    POD,
    QUEUE,
    QUEUE_SKIP,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    FilterResult,
    Handle,
    Plugin,
    Status,
)
from kvert.scheduler.snapshot import NodeSet

ERR_REASON = "node(s) didn't have free ports for the requested pod ports"
BIND_ALL = "0.0.0.0"
_STATE = "PreFilterNodePorts"

Port = tuple[str, str, int]   # (hostIP, protocol, hostPort)


def conflicts(wanted: Iterable[Port], used: Iterable[Port]) -> bool:
    """``!fitsPorts``: does any wanted port clash with a used one?"""
    by_pp: dict[tuple[str, int], set[str]] = {}
    for ip, proto, port in used:
        by_pp.setdefault((proto, port), set()).add(ip)
    for ip, proto, port in wanted:
        ips = by_pp.get((proto, port))
        if ips and (ip == BIND_ALL or BIND_ALL in ips or ip in ips):
            return True
    return False


class _PortIndex:
    """Per (protocol, port): per bound IP, the count of pods using it on each node row; and
    the same summed over IPs. Kept up to date as the cache's pods come and go."""

    def __init__(self) -> None:
        self.capacity = 0
        self.by_ip: dict[tuple[str, int], dict[str, np.ndarray]] = {}
        self.any_ip: dict[tuple[str, int], np.ndarray] = {}

    def grow(self, capacity: int) -> None:
        def grown(a: np.ndarray) -> np.ndarray:
            b = np.zeros(capacity, np.int64)
            b[:len(a)] = a
            return b
        for key, arr in self.any_ip.items():
            self.any_ip[key] = grown(arr)
            ips = self.by_ip[key]
            for ip, a in ips.items():
                ips[ip] = grown(a)
        self.capacity = capacity

    def clear_row(self, row: int) -> None:
        for key, arr in self.any_ip.items():
            arr[row] = 0
            for a in self.by_ip[key].values():
                a[row] = 0

    def account(self, entry, row: int, sign: int) -> None:
        for ip, proto, port in entry.ports:
            key = (proto, port)
            if key not in self.any_ip:
                self.any_ip[key] = np.zeros(self.capacity, np.int64)
                self.by_ip[key] = {}
            ips = self.by_ip[key]
            if ip not in ips:
                ips[ip] = np.zeros(self.capacity, np.int64)
            ips[ip][row] += sign
            self.any_ip[key][row] += sign

    def conflicting(self, wanted: Iterable[Port], rows: np.ndarray) -> np.ndarray:
        out = np.zeros(len(rows), bool)
        for ip, proto, port in wanted:
            key = (proto, port)
            if key not in self.any_ip:
                continue
            if ip == BIND_ALL:
                out |= self.any_ip[key][rows] > 0
                continue
            ips = self.by_ip[key]
            for bound in (BIND_ALL, ip):
                if bound in ips:
                    out |= ips[bound][rows] > 0
        return out


class NodePorts(Plugin):
    name = "NodePorts"

    def __init__(self, args: dict[str, Any] | None = None, handle: Handle | None = None):
        super().__init__(args, handle)
        self._cache = None
        self._index: _PortIndex | None = None

    def _index_of(self, cache) -> _PortIndex:
        # registered on first use: the throwaway frameworks that only validate a configuration
        # never pay for indexing the pods
        if self._cache is not cache or self._index is None:
            self._index = _PortIndex()
            cache.add_pod_listener(self._index)
            self._cache = cache
        return self._index

    def pre_filter(self, state: CycleState, pod: dict, nodes: NodeSet):
        wanted = host_ports(pod)
        if not wanted:
            return None, Status(Code.SKIP)
        state.write(_STATE, wanted)
        return None, None

    def filter(self, state: CycleState, pod: dict, nodes: NodeSet) -> FilterResult:
        wanted = state.get(_STATE)
        if wanted is None:
            wanted = host_ports(pod)
        cache, rows = nodes.cache, nodes.rows
        if not wanted or len(rows) == 0:
            return FilterResult.ok(len(rows))
        if getattr(cache, "base", None) is not None:   # a CacheView: few rows, its own ports
            used = cache.used_ports
            names = cache.names
            failed = np.fromiter((conflicts(wanted, used.get(names[int(r)] or "") or ())
                                  for r in rows), np.bool_, count=len(rows))
        else:
            failed = self._index_of(cache).conflicting(wanted, rows)
        return FilterResult.reject(failed, ERR_REASON, Code.UNSCHEDULABLE)

    def events_to_register(self) -> list[ClusterEventWithHint]:
        def pod_deleted(pod: dict, old: dict | None, new: dict | None) -> bool:
            if old is None:
                return QUEUE
            if not (old.get("spec") or {}).get("nodeName") \
                    and not (old.get("status") or {}).get("nominatedNodeName"):
                return QUEUE_SKIP
            freed = host_ports(old)
            if not freed or not conflicts(host_ports(pod), freed):
                return QUEUE_SKIP
            return QUEUE

        # pod updates are ignored: spec.containers[*].ports is immutable
        return [ClusterEventWithHint(ClusterEvent(POD, ActionType.DELETE), pod_deleted),
                ClusterEventWithHint(ClusterEvent(NODE, ActionType.ADD))]
