"""The node lifecycle controller (kube-controller-manager's ``nodelifecycle``): node health
from heartbeats, the node taints that follow conditions, rate-limited per zone.

Health. Every ``node_monitor_period`` (5 s) each node is judged by when its agent was last
heard from, on this controller's own clock: the Ready condition's ``lastHeartbeatTime``
changing or its Lease's ``renewTime`` moving forward. A node not heard from for
``node_monitor_grace_period`` (50 s, as since Kubernetes 1.32; ``node_startup_grace_period``,
60 s, for a node that never posted a Ready condition) gets its Ready, MemoryPressure,
DiskPressure and PIDPressure conditions set to ``Unknown`` (reason ``NodeStatusUnknown``,
"Kubelet stopped posting node status."; ``NodeStatusNeverUpdated``, "Kubelet never posted
node status." for a condition never posted), the event ``NodeNotReady``, and its pods'
Ready conditions ``False`` (``MarkPodsNotReady``, event ``NodeNotReady`` "Node is not
ready").

Taints (keys ``node.kubernetes.io/...``, empty values, ``timeAdded`` set when added):

* NoSchedule, on every node change (``doNoScheduleTaintingPass``): ``not-ready`` (Ready
  False), ``unreachable`` (Ready Unknown), ``memory-pressure``, ``disk-pressure``,
  ``pid-pressure``, ``network-unavailable`` (conditions True), ``unschedulable``
  (``spec.unschedulable``); removed when the condition goes;
* NoExecute ``not-ready`` / ``unreachable`` (``processTaintBaseEviction``): a node whose
  Ready condition was not True when the pass began is queued in its zone and tainted when
  the zone's token bucket allows (``node_eviction_rate`` 0.1 node/s, burst 1; in a zone
  partially disrupted -- at least 3 and ``unhealthy_zone_threshold`` (55 %) of its nodes not
  Ready -- ``secondary_node_eviction_rate`` 0.01 if the zone has more than
  ``large_cluster_size_threshold`` (50) nodes, else 0); a node back to Ready loses both at
  once; one that changes from not-ready to unreachable (or back) swaps them at once. When
  every zone is fully disrupted nothing is tainted and existing NoExecute taints are
  removed (the control plane is more likely cut off than every node dead).

Zones come from ``topology.kubernetes.io/region`` / ``zone`` (or the beta labels); nodes
labelled ``node.kubernetes.io/exclude-disruption`` do not count towards a zone's state.
The taint eviction controller (``kvert.controllers.tainteviction``) evicts the pods that do
not tolerate the NoExecute taints.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import logging
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from kvert.api.errors import ApiError, Conflict, NotFound
from kvert.api.meta import format_time, parse_time
from kvert.client.base import Client
from kvert.client.events import EventRecorder
from kvert.clock import Clock
from kvert.controllers.base import Controller, InformerFactory, safe_handler

log = logging.getLogger(__name__)

NODE_MONITOR_PERIOD = 5.0
NODE_MONITOR_GRACE_PERIOD = 50.0
NODE_STARTUP_GRACE_PERIOD = 60.0
NODE_EVICTION_RATE = 0.1
SECONDARY_NODE_EVICTION_RATE = 0.01
LARGE_CLUSTER_SIZE_THRESHOLD = 50
UNHEALTHY_ZONE_THRESHOLD = 0.55
RETRY_WAIT = 0.05                     # a taint that could not be placed is tried again after this

LEASE_NAMESPACE = "kube-node-lease"
NODE_INDEX = "spec.nodeName"
TAINT_PREFIX = "node.kubernetes.io/"
NOT_READY = TAINT_PREFIX + "not-ready"
UNREACHABLE = TAINT_PREFIX + "unreachable"
UNSCHEDULABLE = TAINT_PREFIX + "unschedulable"
EXCLUDE_DISRUPTION_LABEL = TAINT_PREFIX + "exclude-disruption"
# (condition, status) -> the NoSchedule taint it means (nodeConditionToTaintKeyStatusMap);
# looked up with the status a condition may lack
CONDITION_TAINTS: dict[tuple[str, str | None], str] = {
    ("Ready", "False"): NOT_READY,
    ("Ready", "Unknown"): UNREACHABLE,
    ("MemoryPressure", "True"): TAINT_PREFIX + "memory-pressure",
    ("DiskPressure", "True"): TAINT_PREFIX + "disk-pressure",
    ("NetworkUnavailable", "True"): TAINT_PREFIX + "network-unavailable",
    ("PIDPressure", "True"): TAINT_PREFIX + "pid-pressure",
}
NO_SCHEDULE_KEYS = frozenset(CONDITION_TAINTS.values()) | {UNSCHEDULABLE}
MONITORED_CONDITIONS = ("Ready", "MemoryPressure", "DiskPressure", "PIDPressure")

INITIAL, NORMAL, FULL_DISRUPTION, PARTIAL_DISRUPTION = "Initial", "Normal", "FullDisruption", "PartialDisruption"


# -- pure helpers --------------------------------------------------------------------------------------

def conditions_of(node: dict) -> dict[str, dict]:
    return {c.get("type"): c for c in (node.get("status") or {}).get("conditions") or []}


def ready_status(node: dict) -> str | None:
    """The Ready condition's status, or None when the node has none."""
    cond = conditions_of(node).get("Ready")
    return cond.get("status") if cond else None


def no_schedule_taint_keys(node: dict) -> set[str]:
    """The NoSchedule taints a node's conditions and spec call for."""
    keys = {CONDITION_TAINTS[(t, c.get("status"))] for t, c in conditions_of(node).items()
            if (t, c.get("status")) in CONDITION_TAINTS}
    if (node.get("spec") or {}).get("unschedulable"):
        keys.add(UNSCHEDULABLE)
    return keys


def zone_key(node: dict) -> str:
    """``GetZoneKey``: region and zone from the topology labels, "" when neither is set."""
    labels = (node.get("metadata") or {}).get("labels") or {}
    zone = labels.get("failure-domain.beta.kubernetes.io/zone") or labels.get("topology.kubernetes.io/zone") or ""
    region = labels.get("failure-domain.beta.kubernetes.io/region") or \
        labels.get("topology.kubernetes.io/region") or ""
    return "" if not zone and not region else f"{region}:\x00:{zone}"


def compute_zone_state(ready_statuses: list[str | None], unhealthy_threshold: float = UNHEALTHY_ZONE_THRESHOLD
                       ) -> tuple[int, str]:
    """``ComputeZoneState``: (nodes not ready, the zone's state)."""
    ready = sum(1 for s in ready_statuses if s == "True")
    not_ready = len(ready_statuses) - ready
    if ready == 0 and not_ready > 0:
        return not_ready, FULL_DISRUPTION
    if not_ready > 2 and not_ready / (not_ready + ready) >= unhealthy_threshold:
        return not_ready, PARTIAL_DISRUPTION
    return not_ready, NORMAL


class TokenBucket:
    """``flowcontrol.NewTokenBucketRateLimiter(qps, burst)``'s ``TryAccept``, on a clock;
    ``qps`` 0 never accepts, infinity always does (the fake limiters of upstream's tests)."""

    def __init__(self, clock: Clock, qps: float, burst: int = 1):
        self.clock = clock
        self.qps = qps
        self.burst = burst
        self.tokens = float(burst)
        self.last = clock.now()

    def try_accept(self) -> bool:
        if self.qps <= 0:
            return False
        if self.qps == float("inf"):
            return True
        now = self.clock.now()
        self.tokens = min(float(self.burst), self.tokens + (now - self.last) * self.qps)
        self.last = now
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return True
        return False

    def next_token_in(self) -> float:
        if self.qps <= 0:
            return float("inf")
        return max(0.0, (1.0 - self.tokens) / self.qps)


class RateLimitedTimedQueue:
    """``RateLimitedTimedQueue``: node names by when to process them, each once until removed."""

    def __init__(self, clock: Clock, qps: float):
        self.clock = clock
        self.limiter = TokenBucket(clock, qps)
        self._heap: list[tuple[float, int, str]] = []
        self._set: set[str] = set()
        self._order = itertools.count()

    def add(self, value: str) -> bool:
        if value in self._set:
            return False
        self._set.add(value)
        heapq.heappush(self._heap, (self.clock.now(), next(self._order), value))
        return True

    def remove(self, value: str) -> bool:
        if value not in self._set:
            return False
        self._set.discard(value)
        self._heap = [e for e in self._heap if e[2] != value]
        heapq.heapify(self._heap)
        return True

    def swap_limiter(self, qps: float) -> None:
        if self.limiter.qps == qps:
            return
        exhausted = not self.limiter.try_accept() if self.limiter.qps > 0 else False
        self.limiter = TokenBucket(self.clock, qps)
        if exhausted:
            self.limiter.try_accept()

    def pending(self) -> bool:
        return bool(self._heap)

    def try_all(self, fn: Callable[[str], tuple[bool, float]]) -> None:
        """Process due items while the limiter lets it; ``fn`` answers (done, retry after)."""
        while self._heap:
            if not self.limiter.try_accept():
                return
            process_at, _, value = self._heap[0]
            now = self.clock.now()
            if now < process_at:
                return
            done, wait = fn(value)
            heapq.heappop(self._heap)
            if not done:
                heapq.heappush(self._heap, (now + wait, next(self._order), value))


@dataclass
class Health:
    probe: float                       # when the node was last heard from (our clock)
    ready_transition: float
    ready: dict | None                 # the Ready condition as last seen
    renew: float | None = None         # the Lease's renewTime as last seen


# -- the controller ---------------------------------------------------------------------------------------

class NodeLifecycleController(Controller):
    name = "node-lifecycle"

    def __init__(self, client: Client, clock: Clock, *, informers: InformerFactory | None = None, workers: int = 1,
                 node_monitor_period: float = NODE_MONITOR_PERIOD,
                 node_monitor_grace_period: float = NODE_MONITOR_GRACE_PERIOD,
                 node_startup_grace_period: float = NODE_STARTUP_GRACE_PERIOD,
                 node_eviction_rate: float = NODE_EVICTION_RATE,
                 secondary_node_eviction_rate: float = SECONDARY_NODE_EVICTION_RATE,
                 large_cluster_size_threshold: int = LARGE_CLUSTER_SIZE_THRESHOLD,
                 unhealthy_zone_threshold: float = UNHEALTHY_ZONE_THRESHOLD):
        super().__init__(client, clock, informers=informers, workers=workers)
        self.monitor_period = node_monitor_period
        self.grace_period = node_monitor_grace_period
        self.startup_grace_period = node_startup_grace_period
        self.eviction_rate = node_eviction_rate
        self.secondary_eviction_rate = secondary_node_eviction_rate
        self.large_cluster_threshold = large_cluster_size_threshold
        self.unhealthy_threshold = unhealthy_zone_threshold
        self.recorder = EventRecorder(client, clock, "node-controller")
        self.nodes = self.use("nodes")
        self.leases = self.use("coordination.k8s.io/leases")
        self.pods = self.use("pods")
        self.pods.add_index(NODE_INDEX, lambda p: [(p.get("spec") or {}).get("nodeName") or ""])
        self.nodes.add_handlers(safe_handler(self._node_changed),
                                safe_handler(lambda old, cur: self._node_changed(cur)),
                                safe_handler(self._node_deleted))
        self.health: dict[str, Health] = {}
        self.known: set[str] = set()
        self.zone_states: dict[str, str] = {}
        self.tainters: dict[str, RateLimitedTimedQueue] = {}
        self._retry_not_ready: set[str] = set()
        self.passes = 0

    # ---- events -----------------------------------------------------------------------------------

    def _node_changed(self, node: dict) -> None:
        self.enqueue((node.get("metadata") or {}).get("name", ""))

    def _node_deleted(self, node: dict) -> None:
        name = (node.get("metadata") or {}).get("name", "")
        self.health.pop(name, None)
        self.known.discard(name)
        for queue in self.tainters.values():
            queue.remove(name)

    # ---- the NoSchedule pass (per node change) ----------------------------------------------------------

    async def sync(self, name: str) -> None:
        node = self.nodes.get(name)
        if node is None:
            return
        wanted = no_schedule_taint_keys(node)
        existing = {t.get("key") for t in (node.get("spec") or {}).get("taints") or []
                    if t.get("effect") == "NoSchedule" and t.get("key") in NO_SCHEDULE_KEYS}
        add, remove = wanted - existing, existing - wanted
        if add or remove:
            await self._swap_taints(name, [(k, "NoSchedule") for k in sorted(add)],
                                    [(k, "NoSchedule") for k in sorted(remove)])

    # ---- the monitor loop -------------------------------------------------------------------------------

    async def run(self) -> None:
        monitor = asyncio.ensure_future(self._monitor_loop())
        try:
            await super().run()
        finally:
            monitor.cancel()

    async def _monitor_loop(self) -> None:
        await self.informers.wait_synced(self._used)
        while not self._stopped.is_set():
            try:
                await self.monitor_node_health()
                await self.no_execute_tainting_pass()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("%s: monitoring node health failed", self.name)
            wait = self.monitor_period
            for queue in self.tainters.values():
                if queue.pending():
                    wait = min(wait, max(RETRY_WAIT, queue.limiter.next_token_in()))
            await self.clock.sleep(wait)

    async def monitor_node_health(self) -> None:
        self.passes += 1
        nodes = self.nodes.list()
        zones: dict[str, list[str | None]] = {}
        for node in nodes:
            name = node["metadata"]["name"]
            if name not in self.known:
                self.known.add(name)
                await self._node_event(node, "Normal", "RegisteredNode",
                                       f"Node {name} event: Registered Node {name} in Controller")
                await self._mark_reachable(node)
            observed, current = await self._try_update_health(node)
            if not _excluded(node):
                zones.setdefault(zone_key(node), []).append(observed.get("status"))
            self._taint_for_eviction(node, observed)
            current_status = (current or {}).get("status")
            if (current_status != "True" and observed.get("status") == "True") or \
                    (name in self._retry_not_ready and observed.get("status") != "True"):
                if current_status != "True" and observed.get("status") == "True":
                    await self._node_event(node, "Normal", "NodeNotReady", f"Node {name} status is now: NodeNotReady")
                if await self._mark_pods_not_ready(name):
                    self._retry_not_ready.discard(name)
                else:
                    self._retry_not_ready.add(name)
        await self._handle_disruption(zones, nodes)

    async def _try_update_health(self, node: dict) -> tuple[dict, dict | None]:
        """``tryUpdateNodeHealth``: (the Ready condition as observed, as it is after this pass)."""
        name = node["metadata"]["name"]
        now = self.clock.now()
        conditions = conditions_of(node)
        current = conditions.get("Ready")
        created = _time(node["metadata"].get("creationTimestamp")) or now
        if current is None:
            stamp = node["metadata"].get("creationTimestamp")
            observed = {"type": "Ready", "status": "Unknown", "lastHeartbeatTime": stamp, "lastTransitionTime": stamp}
            grace = self.startup_grace_period
        else:
            observed = dict(current)
            grace = self.grace_period
        saved = self.health.get(name)
        if saved is None:
            saved = self.health[name] = Health(now if current is not None else created,
                                               now if current is not None else created, current)
        elif saved.ready is None and current is not None or saved.ready is not None and current is None:
            saved.probe = saved.ready_transition = now
            saved.ready = current
        elif current is not None and saved.ready is not None and \
                saved.ready.get("lastHeartbeatTime") != current.get("lastHeartbeatTime"):
            saved.probe = now
            if saved.ready.get("lastTransitionTime") != current.get("lastTransitionTime"):
                saved.ready_transition = now
            saved.ready = current
        lease = self.leases.get(name, LEASE_NAMESPACE)
        renew = _time(((lease or {}).get("spec") or {}).get("renewTime"))
        if renew is not None and (saved.renew is None or saved.renew < renew):
            saved.renew = renew
            saved.probe = now
        if now <= saved.probe + grace:
            return observed, current
        # not heard from for the grace period: every condition it owns goes Unknown
        stamp = format_time(now)
        changed = False
        status = dict(node.get("status") or {})
        out = [dict(c) for c in status.get("conditions") or []]
        by_type = {c.get("type"): c for c in out}
        for ctype in MONITORED_CONDITIONS:
            cond = by_type.get(ctype)
            if cond is None:
                out.append({"type": ctype, "status": "Unknown", "reason": "NodeStatusNeverUpdated",
                            "message": "Kubelet never posted node status.",
                            "lastHeartbeatTime": node["metadata"].get("creationTimestamp"),
                            "lastTransitionTime": stamp})
                changed = True
            elif cond.get("status") != "Unknown":
                cond.update(status="Unknown", reason="NodeStatusUnknown",
                            message="Kubelet stopped posting node status.", lastTransitionTime=stamp)
                changed = True
        if not changed:
            return observed, current
        status["conditions"] = out
        try:
            updated = await self.client.update_status("nodes", {**node, "status": status})
        except (Conflict, NotFound) as e:
            log.info("%s: node %s not marked unknown now (%s)", self.name, name, e.reason)
            return observed, current
        ready = conditions_of(updated).get("Ready")
        saved.ready, saved.ready_transition = ready, now
        return observed, ready

    # ---- NoExecute taints, rate-limited per zone ---------------------------------------------------------------

    def _taint_for_eviction(self, node: dict, observed: dict) -> None:
        """``processTaintBaseEviction``."""
        name = node["metadata"]["name"]
        zone = zone_key(node)
        queue = self._tainter(zone)
        status = observed.get("status")
        taints = {(t.get("key"), t.get("effect")) for t in (node.get("spec") or {}).get("taints") or []}
        swap = _no_execute_swap(status)
        if swap is not None:
            wanted, other = swap
            if (other, "NoExecute") in taints:      # not-ready <-> unreachable: at once
                self._spawn(self._swap_taints(name, [(wanted, "NoExecute")], [(other, "NoExecute")]))
            else:
                if (wanted, "NoExecute") not in taints:
                    queue.remove(name)
                queue.add(name)
        elif status == "True":
            queue.remove(name)
            if taints & {(NOT_READY, "NoExecute"), (UNREACHABLE, "NoExecute")}:
                self._spawn(self._swap_taints(name, [], [(NOT_READY, "NoExecute"), (UNREACHABLE, "NoExecute")]))

    def _tainter(self, zone: str) -> RateLimitedTimedQueue:
        queue = self.tainters.get(zone)
        if queue is None:
            queue = self.tainters[zone] = RateLimitedTimedQueue(self.clock, self.eviction_rate)
            self.zone_states[zone] = INITIAL
        return queue

    async def no_execute_tainting_pass(self) -> None:
        """``doNoExecuteTaintingPass``: taint the queued nodes the zones' buckets allow."""
        work: list[tuple[str, str, str]] = []

        def take(name: str) -> tuple[bool, float]:
            node = self.nodes.get(name)
            if node is None:
                return True, 0.0
            status = ready_status(node)
            if status is None:
                return False, RETRY_WAIT
            swap = _no_execute_swap(status)
            if swap is not None:
                work.append((name, *swap))
            return True, 0.0

        for queue in self.tainters.values():
            queue.try_all(take)
        for name, add, remove in work:
            await self._swap_taints(name, [(add, "NoExecute")], [(remove, "NoExecute")])

    async def _handle_disruption(self, zones: dict[str, list[str | None]], nodes: list[dict]) -> None:
        states = {zone: compute_zone_state(statuses, self.unhealthy_threshold)[1] for zone, statuses in zones.items()}
        all_now = bool(states) and all(s == FULL_DISRUPTION for s in states.values())
        all_before = all(self.zone_states.get(z) == FULL_DISRUPTION for z in self.zone_states) and \
            bool(self.zone_states)
        for zone in [z for z in self.zone_states if z not in states]:
            del self.zone_states[zone]
        if all_now and all_before:
            return
        if all_now:
            log.info("%s: all nodes are not Ready: entering master disruption mode", self.name)
            for node in nodes:
                await self._mark_reachable(node)
            for zone in states:
                self._tainter(zone).swap_limiter(0)
                self.zone_states[zone] = FULL_DISRUPTION
            return
        if all_before:
            log.info("%s: exiting master disruption mode", self.name)
            now = self.clock.now()
            for health in self.health.values():
                health.probe = health.ready_transition = now
            for zone, state in states.items():
                self._set_limiter(zone, len(zones[zone]), state)
                self.zone_states[zone] = state
            return
        for zone, state in states.items():
            if self.zone_states.get(zone) != state:
                log.info("%s: zone %r is now %s", self.name, zone, state)
                self._set_limiter(zone, len(zones[zone]), state)
                self.zone_states[zone] = state

    def _set_limiter(self, zone: str, size: int, state: str) -> None:
        queue = self._tainter(zone)
        if state == PARTIAL_DISRUPTION:
            queue.swap_limiter(self.secondary_eviction_rate if size > self.large_cluster_threshold else 0.0)
        else:
            queue.swap_limiter(self.eviction_rate)

    async def _mark_reachable(self, node: dict) -> None:
        name = node["metadata"]["name"]
        for queue in self.tainters.values():
            queue.remove(name)
        taints = {(t.get("key"), t.get("effect")) for t in (node.get("spec") or {}).get("taints") or []}
        if taints & {(NOT_READY, "NoExecute"), (UNREACHABLE, "NoExecute")}:
            await self._swap_taints(name, [], [(NOT_READY, "NoExecute"), (UNREACHABLE, "NoExecute")])

    # ---- writes -------------------------------------------------------------------------------------------------

    def _spawn(self, coro: Coroutine[Any, Any, object]) -> None:
        """Run a taint change without waiting for it (the pass goes on to the next node)."""
        def report(task: asyncio.Task) -> None:
            if not task.cancelled() and task.exception() is not None:
                log.warning("%s: %s", self.name, task.exception())
        asyncio.ensure_future(coro).add_done_callback(report)

    async def _swap_taints(self, name: str, add: list[tuple[str, str]], remove: list[tuple[str, str]]) -> bool:
        """``SwapNodeControllerTaint``: add and remove taints (by key and effect), retried on
        conflict; an added taint gets ``timeAdded``."""
        for _ in range(5):
            try:
                node = await self.client.get("nodes", name)
            except NotFound:
                return True
            taints = [dict(t) for t in (node.get("spec") or {}).get("taints") or []]
            kept = [t for t in taints if (t.get("key"), t.get("effect")) not in set(remove)]
            present = {(t.get("key"), t.get("effect")) for t in kept}
            stamp = format_time(self.clock.now())
            kept += [{"key": k, "effect": e, "timeAdded": stamp} for k, e in add if (k, e) not in present]
            if kept == taints:
                return True
            spec = dict(node.get("spec") or {})
            if kept:
                spec["taints"] = kept
            else:
                spec.pop("taints", None)
            try:
                await self.client.update("nodes", {**node, "spec": spec})
                return True
            except Conflict:
                continue
            except NotFound:
                return True
        log.warning("%s: could not update the taints of node %s", self.name, name)
        return False

    async def _mark_pods_not_ready(self, node_name: str) -> bool:
        """``MarkPodsNotReady``: the Ready condition of every pod on the node goes False."""
        ok = True
        for pod in self.pods.by_index(NODE_INDEX, node_name):
            status = dict(pod.get("status") or {})
            conditions = [dict(c) for c in status.get("conditions") or []]
            ready = next((c for c in conditions if c.get("type") == "Ready"), None)
            if ready is None or ready.get("status") == "False":
                continue
            ready["status"] = "False"
            ready["lastTransitionTime"] = format_time(self.clock.now())
            status["conditions"] = conditions
            try:
                await self.client.update_status("pods", {**pod, "status": status})
            except NotFound:
                continue
            except ApiError as e:
                log.info("%s: pod %s/%s not marked not ready: %s", self.name,
                         pod["metadata"].get("namespace"), pod["metadata"].get("name"), e)
                ok = False
            await self.recorder.record({"apiVersion": "v1", "kind": "Pod", **pod}, "Warning", "NodeNotReady",
                                       "Node is not ready")
        return ok

    async def _node_event(self, node: dict, type_: str, reason: str, message: str) -> None:
        meta = node.get("metadata") or {}
        ref = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": meta.get("name"), "uid": meta.get("uid")}}
        await self.recorder.record(ref, type_, reason, message)


def _no_execute_swap(ready: str | None) -> tuple[str, str] | None:
    """The NoExecute taint a Ready status calls for and the one it replaces, or None."""
    if ready == "False":
        return NOT_READY, UNREACHABLE
    if ready == "Unknown":
        return UNREACHABLE, NOT_READY
    return None


def _excluded(node: dict) -> bool:
    return EXCLUDE_DISRUPTION_LABEL in ((node.get("metadata") or {}).get("labels") or {})


def _time(stamp: Any) -> float | None:
    if not stamp:
        return None
    try:
        return parse_time(stamp)
    except ValueError:
        return None
