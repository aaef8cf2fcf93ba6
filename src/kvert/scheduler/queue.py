"""The scheduling queue (``pkg/scheduler/backend/queue``): activeQ, backoffQ, unschedulable pods.

* **activeQ** -- pods ready for a scheduling attempt, ordered by the QueueSort plugin
  (PrioritySort: higher ``spec.priority`` first, then the time the pod entered the queue).
* **backoffQ** -- pods that failed and wait out their backoff: ``initial * 2^(n-1)`` seconds
  capped at ``max`` (1 s doubling to 10 s by default), ``n`` the pod's unschedulable attempts
  (or consecutive errors after an error), counted from the time of the failure. As in
  Kubernetes 1.33+ (SchedulerPopFromBackoffQ), when activeQ is empty the scheduler may take
  a pod from backoffQ early rather than stay idle (``pop_from_backoff``); pods that failed
  with an error wait their backoff out.
* **unschedulable pods** -- pods no node fits. A cluster event moves one back (to backoffQ if
  still backing off, else activeQ) when a plugin that rejected it registered that event and
  its queueing hint says the change may help: a node added or updated (allocatable, labels,
  taints, unschedulable), an assigned pod deleted or resized down. A pod stays here at most
  ``max_unschedulable_seconds`` (5 minutes) before it is retried anyway. An event that
  arrives while a pod is being scheduled is remembered and applied if that attempt fails.
* **gated** pods -- a PreEnqueue plugin (SchedulingGates) rejected them; they wait, without
  backoff or timeout, until an update of the pod lets every PreEnqueue plugin pass.

All waiting is on the Clock's event loop (``asyncio`` timeouts), so it runs in virtual time.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import logging
from collections.abc import Callable
from typing import Any

from kvert.clock.base import Clock
from kvert.scheduler.events import (
    EVENT_UNSCHEDULABLE_TIMEOUT,
    WILDCARD,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
)
from kvert.scheduler.podentry import pod_key, pod_uid
from kvert.scheduler.status import Status

log = logging.getLogger(__name__)

DEFAULT_POD_INITIAL_BACKOFF = 1.0
DEFAULT_POD_MAX_BACKOFF = 10.0
DEFAULT_POD_MAX_IN_UNSCHEDULABLE = 5 * 60.0

ACTIVE, BACKOFF, UNSCHEDULABLE, GATED, IN_FLIGHT = "active", "backoff", "unschedulable", "gated", "inFlight"
_EXPLAIN_ANNOTATION_PREFIX = "explain.kvert.io/"
# the pod being scheduled was itself updated meanwhile (its own change may make it fit)
EVENT_UNSCHEDULED_POD_UPDATE = ClusterEvent("UnscheduledPod", ActionType.UPDATE, "UnscheduledPodUpdate")


class QueuedPodInfo:
    """A pod in the queue (``framework.QueuedPodInfo``)."""

    __slots__ = ("pod", "uid", "key", "timestamp", "initial_attempt_timestamp", "attempts",
                 "unschedulable_count", "consecutive_errors", "unschedulable_plugins",
                 "pending_plugins", "gating_plugin", "gating_message", "state", "seq", "version",
                 "backoff_expiration", "cycle", "sort_key")

    def __init__(self, pod: dict, now: float, seq: int):
        self.pod = pod
        self.uid = pod_uid(pod)
        self.key = pod_key(pod)
        self.timestamp = now
        self.initial_attempt_timestamp: float | None = None
        self.attempts = 0
        self.unschedulable_count = 0
        self.consecutive_errors = 0
        self.unschedulable_plugins: set[str] = set()
        self.pending_plugins: set[str] = set()
        self.gating_plugin = ""
        self.gating_message = ""
        self.state = ""
        self.seq = seq
        self.version = 0
        self.backoff_expiration: float | None = None
        self.cycle = 0
        self.sort_key: tuple = ()

    def __repr__(self) -> str:
        return f"QueuedPodInfo({self.key}, {self.state}, attempts={self.attempts})"


def backoff_duration(count: int, initial: float, maximum: float) -> float:
    """``calculateBackoffDuration``: ``initial * 2^(count-1)``, capped at ``maximum``; 0 for 0."""
    if count <= 0:
        return 0.0
    duration = initial
    for _ in range(1, count):
        if duration > maximum - duration:
            return maximum
        duration += duration
    return min(duration, maximum)


def pod_updated(old: dict | None, new: dict) -> bool:
    """``isPodUpdated``: anything but the status (except the ResourceClaims generated for
    the pod), resourceVersion, generation, managedFields, finalizers and kvert's explanation
    annotations changed."""
    if old is None:
        return True

    def strip(p: dict) -> tuple:
        meta = dict(p.get("metadata") or {})
        for k in ("resourceVersion", "generation", "managedFields", "finalizers"):
            meta.pop(k, None)
        ann = {k: v for k, v in (meta.pop("annotations", None) or {}).items()
               if not k.startswith(_EXPLAIN_ANNOTATION_PREFIX)}
        if ann:
            meta["annotations"] = ann
        return meta, p.get("spec"), (p.get("status") or {}).get("resourceClaimStatuses")

    return strip(old) != strip(new)


class SchedulingQueue:
    def __init__(self, clock: Clock, *,
                 sort_key: Callable[[QueuedPodInfo], tuple] | None = None,
                 pre_enqueue: Callable[[dict], Status | None] | None = None,
                 events_for: Callable[[dict], dict[str, list[ClusterEventWithHint]]] | None = None,
                 initial_backoff: float = DEFAULT_POD_INITIAL_BACKOFF,
                 max_backoff: float = DEFAULT_POD_MAX_BACKOFF,
                 max_unschedulable_seconds: float = DEFAULT_POD_MAX_IN_UNSCHEDULABLE,
                 pop_from_backoff: bool = True):
        self.clock = clock
        self._sort_key = sort_key or (lambda q: (q.timestamp, q.seq))
        self._pre_enqueue = pre_enqueue or (lambda pod: None)
        self._events_for = events_for or (lambda pod: {})
        self.initial_backoff = initial_backoff
        self.max_backoff = max_backoff
        self.max_unschedulable_seconds = max_unschedulable_seconds
        self.pop_from_backoff = pop_from_backoff
        self._pods: dict[str, QueuedPodInfo] = {}
        self._active: list[tuple] = []
        self._backoff: list[tuple] = []
        self._error_backoff: list[tuple] = []
        self._unschedulable: dict[str, QueuedPodInfo] = {}
        self._unschedulable_deadlines: list[tuple] = []
        self._seq = itertools.count()
        self._counts = {ACTIVE: 0, BACKOFF: 0, UNSCHEDULABLE: 0, GATED: 0, IN_FLIGHT: 0}
        self.scheduling_cycle = 0
        self._event_seq = 0
        self._inflight: dict[str, int] = {}
        self._inflight_events: list[tuple[int, ClusterEvent, Any, Any]] = []
        self._wakeup: asyncio.Event | None = None
        self._closed = False

    # ---- bookkeeping ----------------------------------------------------------------------

    def _set_state(self, qpi: QueuedPodInfo, state: str) -> None:
        if qpi.state in self._counts:
            self._counts[qpi.state] -= 1
        qpi.state = state
        if state in self._counts:
            self._counts[state] += 1
        qpi.version += 1

    def _wake(self) -> None:
        if self._wakeup is not None:
            self._wakeup.set()

    def __len__(self) -> int:
        return sum(1 for q in self._pods.values() if q.state != IN_FLIGHT)

    def stats(self) -> dict[str, int]:
        return dict(self._counts)

    def pending_pods(self) -> list[tuple[dict, str]]:
        return [(q.pod, q.state) for q in self._pods.values() if q.state != IN_FLIGHT]

    def get(self, pod: dict) -> QueuedPodInfo | None:
        return self._pods.get(pod_uid(pod))

    # ---- moving pods between queues ---------------------------------------------------------

    def _push_active(self, qpi: QueuedPodInfo) -> None:
        self._set_state(qpi, ACTIVE)
        qpi.sort_key = self._sort_key(qpi)
        heapq.heappush(self._active, (qpi.sort_key, qpi.seq, qpi.version, qpi))
        self._wake()

    def backoff_time(self, qpi: QueuedPodInfo) -> float:
        if qpi.backoff_expiration is None:
            count = qpi.consecutive_errors if qpi.consecutive_errors > 0 else qpi.unschedulable_count
            qpi.backoff_expiration = qpi.timestamp + backoff_duration(
                count, self.initial_backoff, self.max_backoff)
        return qpi.backoff_expiration

    def is_backing_off(self, qpi: QueuedPodInfo) -> bool:
        return self.backoff_time(qpi) > self.clock.now()

    def _push_backoff(self, qpi: QueuedPodInfo) -> None:
        self._set_state(qpi, BACKOFF)
        heap = self._error_backoff if qpi.consecutive_errors > 0 else self._backoff
        heapq.heappush(heap, (self.backoff_time(qpi), qpi.seq, qpi.version, qpi))
        self._wake()

    def _push_unschedulable(self, qpi: QueuedPodInfo) -> None:
        self._set_state(qpi, UNSCHEDULABLE)
        self._unschedulable[qpi.uid] = qpi
        heapq.heappush(self._unschedulable_deadlines,
                       (qpi.timestamp + self.max_unschedulable_seconds, qpi.seq, qpi.version, qpi))
        self._wake()

    def _requeue(self, qpi: QueuedPodInfo) -> None:
        """``requeuePodWithQueueingStrategy(queueAfterBackoff)``."""
        self._unschedulable.pop(qpi.uid, None)
        if self.is_backing_off(qpi):
            self._push_backoff(qpi)
        else:
            self._push_active(qpi)

    def _gate_or_activate(self, qpi: QueuedPodInfo) -> bool:
        """Run PreEnqueue; gated pods wait in the unschedulable pool. True if activated."""
        st = self._pre_enqueue(qpi.pod)
        if st is not None and not st.is_success:
            qpi.gating_plugin = st.plugin
            qpi.gating_message = st.message()
            self._set_state(qpi, GATED)
            self._unschedulable[qpi.uid] = qpi
            return False
        qpi.gating_plugin = qpi.gating_message = ""
        self._unschedulable.pop(qpi.uid, None)
        return True

    # ---- informer-driven changes ---------------------------------------------------------------

    def add(self, pod: dict) -> None:
        """A new unscheduled pod."""
        uid = pod_uid(pod)
        if uid in self._pods:
            self.update(self._pods[uid].pod, pod)
            return
        qpi = QueuedPodInfo(pod, self.clock.now(), next(self._seq))
        self._pods[uid] = qpi
        if self._gate_or_activate(qpi):
            self._push_active(qpi)

    def update(self, old: dict | None, new: dict) -> None:
        uid = pod_uid(new)
        qpi = self._pods.get(uid)
        if qpi is None:
            self.add(new)
            return
        qpi.pod = new
        if qpi.state == IN_FLIGHT:
            if pod_updated(old, new):
                self._record_inflight_event(EVENT_UNSCHEDULED_POD_UPDATE, old, new)
            return
        if qpi.state == GATED:
            if self._gate_or_activate(qpi):
                self._requeue(qpi)
            return
        if qpi.state == UNSCHEDULABLE and pod_updated(old, new):
            if self._gate_or_activate(qpi):
                qpi.unschedulable_plugins.clear()
                self._requeue(qpi)
            return
        if qpi.state in (ACTIVE, BACKOFF):
            # a pod that gained gates after being queued is held back at pop time
            return

    def delete(self, pod: dict) -> None:
        qpi = self._pods.pop(pod_uid(pod), None)
        if qpi is None:
            return
        self._unschedulable.pop(qpi.uid, None)
        self._set_state(qpi, "deleted")
        self._inflight.pop(qpi.uid, None)

    def activate(self, pods: list[dict]) -> None:
        """Move pods waiting as unschedulable (or backing off) straight to activeQ; a gated
        pod goes only if its PreEnqueue plugins let it now."""
        for pod in pods:
            qpi = self._pods.get(pod_uid(pod))
            if qpi is None:
                continue
            if qpi.state == GATED:
                if self._gate_or_activate(qpi):
                    self._push_active(qpi)
            elif qpi.state in (UNSCHEDULABLE, BACKOFF):
                self._unschedulable.pop(qpi.uid, None)
                self._push_active(qpi)

    # ---- cluster events -------------------------------------------------------------------------

    def _worth_requeuing(self, qpi: QueuedPodInfo, event: ClusterEvent, old: Any, new: Any) -> bool:
        """``isPodWorthRequeuing``: some plugin that rejected the pod registered this event and
        its hint says Queue; a pod rejected without a plugin (an error) goes on any event."""
        if event.resource == WILDCARD:
            return True
        if event is EVENT_UNSCHEDULED_POD_UPDATE:
            return False   # another pod's own update; the pod's own is _own_update
        rejectors = {qpi.gating_plugin} if qpi.state == GATED else \
            qpi.unschedulable_plugins | qpi.pending_plugins
        if not rejectors:
            return True
        registered = self._events_for(qpi.pod)
        for plugin in rejectors:
            for reg in registered.get(plugin, ()):
                if not event.matches(reg.event):
                    continue
                if reg.hint is None:
                    return True
                try:
                    if reg.hint(qpi.pod, old, new):
                        return True
                except Exception:
                    log.exception("queueing hint of %s failed; requeueing %s", plugin, qpi.key)
                    return True
        return False

    def _record_inflight_event(self, event: ClusterEvent, old: Any, new: Any) -> None:
        if not self._inflight:
            return
        self._event_seq += 1
        self._inflight_events.append((self._event_seq, event, old, new))

    def move_all_to_active_or_backoff(self, event: ClusterEvent, old: Any = None, new: Any = None,
                                      pre_check: Callable[[dict], bool] | None = None) -> int:
        """A cluster event: requeue the unschedulable pods it may help. Returns how many moved."""
        self._record_inflight_event(event, old, new)
        moved = 0
        for qpi in list(self._unschedulable.values()):
            if qpi.state not in (UNSCHEDULABLE, GATED):
                continue
            if pre_check is not None and not pre_check(qpi.pod):
                continue
            if not self._worth_requeuing(qpi, event, old, new):
                continue
            # a gated pod is let in only if its PreEnqueue plugins now agree
            if qpi.state == GATED and not self._gate_or_activate(qpi):
                continue
            self._requeue(qpi)
            moved += 1
        return moved

    # ---- the scheduling loop's side --------------------------------------------------------------

    def _flush(self) -> None:
        now = self.clock.now()
        for heap in (self._backoff, self._error_backoff):
            while heap:
                expiry, _, version, qpi = heap[0]
                if qpi.version != version or qpi.state != BACKOFF:
                    heapq.heappop(heap)
                    continue
                if expiry > now:
                    break
                heapq.heappop(heap)
                self._push_active(qpi)
        while self._unschedulable_deadlines:
            deadline, _, version, qpi = self._unschedulable_deadlines[0]
            if qpi.version != version or qpi.state != UNSCHEDULABLE:
                heapq.heappop(self._unschedulable_deadlines)
                continue
            if deadline > now:
                break
            heapq.heappop(self._unschedulable_deadlines)
            if self._worth_requeuing(qpi, EVENT_UNSCHEDULABLE_TIMEOUT, None, None):
                self._requeue(qpi)

    def _next_deadline(self) -> float | None:
        times = []
        for heap in (self._backoff, self._error_backoff, self._unschedulable_deadlines):
            while heap and (heap[0][3].version != heap[0][2]):
                heapq.heappop(heap)
            if heap:
                times.append(heap[0][0])
        return min(times) if times else None

    def _pop_heap(self, heap: list[tuple], state: str) -> QueuedPodInfo | None:
        while heap:
            entry = heapq.heappop(heap)
            qpi = entry[3]
            if qpi.version == entry[2] and qpi.state == state:
                return qpi
        return None

    def try_pop(self) -> QueuedPodInfo | None:
        """The next pod to schedule, if one is ready now."""
        self._flush()
        while True:
            qpi = self._pop_heap(self._active, ACTIVE)
            if qpi is None and self.pop_from_backoff:
                qpi = self._pop_heap(self._backoff, BACKOFF)
            if qpi is None:
                return None
            # a pod that gained a gate while queued goes back to waiting
            if not self._gate_or_activate(qpi):
                continue
            return self._start(qpi)

    def _start(self, qpi: QueuedPodInfo) -> QueuedPodInfo:
        self._set_state(qpi, IN_FLIGHT)
        qpi.attempts += 1
        if qpi.initial_attempt_timestamp is None:
            qpi.initial_attempt_timestamp = self.clock.now()
        qpi.backoff_expiration = None
        self.scheduling_cycle += 1
        qpi.cycle = self.scheduling_cycle
        self._inflight[qpi.uid] = self._event_seq
        return qpi

    async def pop(self) -> QueuedPodInfo | None:
        """Wait for the next pod (None once closed)."""
        if self._wakeup is None:
            self._wakeup = asyncio.Event()
        while not self._closed:
            qpi = self.try_pop()
            if qpi is not None:
                return qpi
            deadline = self._next_deadline()
            self._wakeup.clear()
            timeout = None if deadline is None else max(0.0, deadline - self.clock.now())
            try:
                await asyncio.wait_for(self._wakeup.wait(), timeout)
            except TimeoutError:
                pass
        return None

    def done(self, qpi: QueuedPodInfo) -> None:
        """The pod's scheduling attempt is over (bound, or requeued)."""
        start = self._inflight.pop(qpi.uid, None)
        if start is None:
            return
        if not self._inflight:
            self._inflight_events.clear()
        else:
            oldest = min(self._inflight.values())
            self._inflight_events = [e for e in self._inflight_events if e[0] > oldest]
        if qpi.state == IN_FLIGHT and self._pods.get(qpi.uid) is qpi:
            # bound: the pod leaves the queue
            self._pods.pop(qpi.uid, None)
            self._set_state(qpi, "done")

    def add_unschedulable_if_not_present(self, qpi: QueuedPodInfo, *, error: bool = False) -> None:
        """After a failed attempt: to backoffQ (an error, or an event during the attempt that
        may help) or to the unschedulable pods."""
        if self._pods.get(qpi.uid) is not qpi or qpi.state != IN_FLIGHT:
            self._inflight.pop(qpi.uid, None)
            return   # deleted (or already requeued) meanwhile
        start = self._inflight.get(qpi.uid, self._event_seq)
        qpi.timestamp = self.clock.now()
        qpi.backoff_expiration = None
        if error:
            qpi.consecutive_errors += 1
            qpi.unschedulable_plugins.clear()
            qpi.pending_plugins.clear()
            self._push_backoff(qpi)
        else:
            qpi.unschedulable_count += 1
            qpi.consecutive_errors = 0
            missed = [e for e in self._inflight_events if e[0] > start]
            if any(self._own_update(qpi, ev, new) or self._worth_requeuing(qpi, ev, old, new)
                   for _, ev, old, new in missed):
                self._requeue(qpi)
            else:
                self._push_unschedulable(qpi)
        self.done(qpi)

    @staticmethod
    def _own_update(qpi: QueuedPodInfo, event: ClusterEvent, new: Any) -> bool:
        return event is EVENT_UNSCHEDULED_POD_UPDATE and isinstance(new, dict) \
            and pod_uid(new) == qpi.uid

    def close(self) -> None:
        self._closed = True
        self._wake()
