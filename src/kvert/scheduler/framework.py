"""The scheduling framework: extension points, statuses, cycle state and one profile's runtime.

Seed 001 section 7 ("スケジューリングフレームワーク") defines the extension points; their
contracts here follow ``pkg/scheduler/framework/interface.go`` and the runtime of
``pkg/scheduler/framework/runtime/framework.go``:

=================  ==========================================================================
QueueSort          ``less(a, b)`` (or ``sort_key(qpi)``) orders the active queue; one per scheduler
PreEnqueue         ``pre_enqueue(pod)``: a rejection keeps the pod out of the active queue (gates)
PreFilter          ``pre_filter(state, pod, nodes)`` -> ``(PreFilterResult | None, Status | None)``;
                   Skip disables the plugin's Filter for this cycle; a rejection fails the cycle
Filter             ``filter(state, pod, nodes)`` -> ``FilterResult`` for a whole NodeSet (numpy), or
                   ``filter_node(state, pod, node_info)`` -> Status per node (slow path)
PostFilter         ``post_filter(state, pod, diagnosis)`` -> ``(PostFilterResult | None, Status)``;
                   runs only when no node fits (preemption lives here)
PreScore           ``pre_score(state, pod, nodes)``; Skip disables the plugin's Score this cycle
Score              ``score(state, pod, nodes)`` -> int64 array, or ``score_node(...)`` -> int
NormalizeScore     ``normalize_score(state, pod, nodes, scores)`` -> array in [0, MAX_NODE_SCORE]
Reserve            ``reserve(state, pod, node)`` / ``unreserve(state, pod, node)`` (reverse order)
Permit             ``permit(state, pod, node)`` -> ``(Status | None, timeout)``; Wait parks the pod
PreBind/Bind       ``pre_bind``/``bind`` (may be coroutines); a Bind returning Skip passes it on
PostBind           ``post_bind(state, pod, node)``: informational
EnqueueExtensions  ``events_to_register()`` -> ``[ClusterEventWithHint]``: which cluster events may
                   make a pod this plugin rejected schedulable (the queue's requeueing hints)
=================  ==========================================================================

A plugin is any object with a ``name`` and some of these methods; :class:`Plugin` is a
convenient base. ``None`` means Success, as a nil ``*Status`` does in Go.

**Vectorized filters and scores** (DESIGN principle 4): where Kubernetes calls a Filter or
Score plugin once per node, kvert calls ``filter``/``score`` once per cycle with a
:class:`~kvert.scheduler.snapshot.NodeSet` -- the cache's rows of many nodes -- and the
plugin answers for all of them with numpy arrays. The framework still applies Filter
plugins in the configured order and gives a node the status of the *first* plugin that
rejects it (later plugins only see the survivors), as Kubernetes does. A plugin that cannot
vectorize implements ``filter_node``/``score_node`` and the framework loops for it.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from enum import IntEnum, IntFlag
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from kvert.scheduler.cache import NodeCache
    from kvert.scheduler.snapshot import NodeSet

log = logging.getLogger(__name__)

MAX_NODE_SCORE = 100
MIN_NODE_SCORE = 0
# RequestedToCapacityRatio shapes are written on a 0..10 scale (config.MaxCustomPriorityScore).
MAX_CUSTOM_PRIORITY_SCORE = 10
# Permit waits are capped like Kubernetes' maxTimeout.
MAX_PERMIT_TIMEOUT = 15 * 60.0


# ---------------------------------------------------------------------------------------------
# Status
# ---------------------------------------------------------------------------------------------


class Code(IntEnum):
    """``framework.Code``."""

    SUCCESS = 0
    ERROR = 1
    UNSCHEDULABLE = 2
    UNSCHEDULABLE_AND_UNRESOLVABLE = 3
    WAIT = 4
    SKIP = 5
    PENDING = 6


CODE_NAMES = {Code.SUCCESS: "Success", Code.ERROR: "Error", Code.UNSCHEDULABLE: "Unschedulable",
              Code.UNSCHEDULABLE_AND_UNRESOLVABLE: "UnschedulableAndUnresolvable",
              Code.WAIT: "Wait", Code.SKIP: "Skip", Code.PENDING: "Pending"}

_REJECTED = (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.PENDING)


class Status:
    """The result of running a plugin: a code, human-readable reasons, the plugin's name."""

    __slots__ = ("code", "reasons", "plugin", "error")

    def __init__(self, code: Code = Code.SUCCESS, *reasons: str, plugin: str = "",
                 error: BaseException | None = None):
        self.code = code if type(code) is Code else Code(code)
        self.reasons = list(reasons)
        self.plugin = plugin
        self.error = error
        if error is not None and not self.reasons:
            self.reasons = [str(error)]

    @classmethod
    def as_status(cls, error: BaseException, plugin: str = "") -> "Status":
        return cls(Code.ERROR, plugin=plugin, error=error)

    @property
    def is_success(self) -> bool:
        return self.code == Code.SUCCESS

    @property
    def is_rejected(self) -> bool:
        return self.code in _REJECTED

    @property
    def is_skip(self) -> bool:
        return self.code == Code.SKIP

    @property
    def is_wait(self) -> bool:
        return self.code == Code.WAIT

    def message(self) -> str:
        return ", ".join(self.reasons)

    def with_plugin(self, plugin: str) -> "Status":
        self.plugin = plugin
        return self

    def __repr__(self) -> str:
        return f"Status({CODE_NAMES[self.code]}, {self.message()!r}, plugin={self.plugin!r})"


def is_success(status: Status | None) -> bool:
    return status is None or status.code == Code.SUCCESS


# ---------------------------------------------------------------------------------------------
# Cycle state, results
# ---------------------------------------------------------------------------------------------


class CycleState:
    """Per-cycle scratch space plugins share (``framework.CycleState``)."""

    __slots__ = ("_data", "skip_filter_plugins", "skip_score_plugins")

    def __init__(self) -> None:
        self._data: dict[str, Any] = {}
        self.skip_filter_plugins: set[str] = set()
        self.skip_score_plugins: set[str] = set()

    def read(self, key: str) -> Any:
        try:
            return self._data[key]
        except KeyError:
            raise KeyError(f"{key!r} not found in cycle state") from None

    def get(self, key: str, default: Any = None) -> Any:
        return self._data.get(key, default)

    def write(self, key: str, value: Any) -> None:
        self._data[key] = value

    def delete(self, key: str) -> None:
        self._data.pop(key, None)

    def clone(self) -> "CycleState":
        """A copy whose plugin states can change apart (``CycleState.Clone``): a value with a
        ``clone()`` method is cloned (PreFilter states that PreFilterExtensions update), any
        other value is shared, so it must not be changed after PreFilter."""
        other = CycleState()
        other._data = {k: (v.clone() if callable(getattr(v, "clone", None)) else v)
                       for k, v in self._data.items()}
        other.skip_filter_plugins = set(self.skip_filter_plugins)
        other.skip_score_plugins = set(self.skip_score_plugins)
        return other


@dataclass
class PreFilterResult:
    """Restricts the nodes worth filtering (``None`` node_names: all nodes)."""

    node_names: set[str] | None = None

    def all_nodes(self) -> bool:
        return self.node_names is None

    def merge(self, other: "PreFilterResult | None") -> "PreFilterResult":
        if other is None or other.all_nodes():
            return self
        if self.all_nodes():
            return PreFilterResult(set(other.node_names or ()))
        return PreFilterResult(set(self.node_names or ()) & set(other.node_names or ()))


@dataclass
class PostFilterResult:
    """``PostFilterResult``: the node the pod is nominated to; ``victims`` (a kvert addition,
    for explanations and ``kvert schedule``) are the pods preemption removes from it."""

    nominated_node_name: str = ""
    victims: list[dict] = field(default_factory=list)


class FilterResult:
    """One Filter plugin's verdict over a NodeSet.

    ``codes[i]`` is ``Code.SUCCESS`` (0) for a node that passes, else ``UNSCHEDULABLE`` or
    ``UNSCHEDULABLE_AND_UNRESOLVABLE``; ``reasons`` lists ``(reason, mask)`` pairs, a node
    carrying every reason whose mask is set for it (NodeResourcesFit reports "Insufficient
    cpu" and "Insufficient memory" together, as Kubernetes keeps all failure reasons).
    """

    __slots__ = ("codes", "reasons")

    def __init__(self, codes: np.ndarray, reasons: Sequence[tuple[str, np.ndarray]] = ()):
        self.codes = codes
        self.reasons = [(r, m) for r, m in reasons if m.any()]

    @classmethod
    def ok(cls, n: int) -> "FilterResult":
        return cls(np.zeros(n, np.int8))

    @classmethod
    def reject(cls, failed: np.ndarray, reason: str,
               code: Code = Code.UNSCHEDULABLE_AND_UNRESOLVABLE) -> "FilterResult":
        codes = np.where(failed, np.int8(code), np.int8(0)).astype(np.int8)
        return cls(codes, [(reason, failed)])

    @property
    def passed(self) -> np.ndarray:
        return self.codes == 0

    def node_reasons(self, i: int) -> list[str]:
        return [r for r, m in self.reasons if m[i]]


@dataclass
class NodeFilterRecord:
    """Where in a cycle a Filter plugin rejected nodes: global rows and its FilterResult."""

    plugin: str
    rows: np.ndarray
    result: FilterResult


@dataclass
class Diagnosis:
    """Why a pod fits nowhere (``framework.Diagnosis``), kept as arrays.

    ``records`` hold each Filter plugin's rejections (rows are the cache's node rows);
    ``absent_status`` is the status of nodes a PreFilterResult excluded.
    """

    num_all_nodes: int = 0
    records: list[NodeFilterRecord] = field(default_factory=list)
    absent_rows: np.ndarray | None = None
    absent_status: Status | None = None
    unschedulable_plugins: set[str] = field(default_factory=set)
    pending_plugins: set[str] = field(default_factory=set)
    pre_filter_msg: str = ""
    post_filter_msg: str = ""
    pre_filter_status: Status | None = None

    def add_plugin_status(self, status: Status) -> None:
        if not status.plugin:
            return
        if status.is_rejected:
            self.unschedulable_plugins.add(status.plugin)
        if status.code == Code.PENDING:
            self.pending_plugins.add(status.plugin)

    def reason_histogram(self, rows: np.ndarray | None = None) -> dict[str, int]:
        """Reason -> number of nodes carrying it (optionally only among ``rows``)."""
        counts: dict[str, int] = {}
        for rec in self.records:
            keep = None if rows is None else np.isin(rec.rows, rows)
            for reason, mask in rec.result.reasons:
                m = mask if keep is None else (mask & keep)
                c = int(np.count_nonzero(m))
                if c:
                    counts[reason] = counts.get(reason, 0) + c
        if self.absent_status is not None and self.absent_rows is not None and len(self.absent_rows):
            n = len(self.absent_rows) if rows is None else int(np.isin(self.absent_rows, rows).sum())
            for reason in self.absent_status.reasons:
                counts[reason] = counts.get(reason, 0) + n
        return counts

    def plugin_histogram(self) -> dict[str, dict[str, int]]:
        """Plugin -> reason -> nodes, for the explanation."""
        out: dict[str, dict[str, int]] = {}
        for rec in self.records:
            for reason, mask in rec.result.reasons:
                c = int(np.count_nonzero(mask))
                if c:
                    d = out.setdefault(rec.plugin, {})
                    d[reason] = d.get(reason, 0) + c
        if self.absent_status is not None and self.absent_rows is not None and len(self.absent_rows):
            d = out.setdefault(self.absent_status.plugin or "PreFilter", {})
            for reason in self.absent_status.reasons:
                d[reason] = d.get(reason, 0) + len(self.absent_rows)
        return out

    def rejected_rows(self) -> np.ndarray:
        parts = [rec.rows[rec.result.codes != 0] for rec in self.records]
        if self.absent_rows is not None:
            parts.append(self.absent_rows)
        return np.concatenate(parts) if parts else np.zeros(0, np.int64)

    def node_status(self, row: int) -> tuple[str, Code, list[str]] | None:
        """(plugin, code, reasons) of the node at ``row``, or None if it passed."""
        for rec in self.records:
            hit = np.nonzero(rec.rows == row)[0]
            if len(hit):
                i = int(hit[0])
                code = Code(int(rec.result.codes[i]))
                if code != Code.SUCCESS:
                    return rec.plugin, code, rec.result.node_reasons(i)
        if self.absent_rows is not None and self.absent_status is not None \
                and np.any(self.absent_rows == row):
            return self.absent_status.plugin, self.absent_status.code, list(self.absent_status.reasons)
        return None


NO_NODE_AVAILABLE_MSG = "0/{} nodes are available"


class FitError(Exception):
    """No node fits the pod; ``str()`` is kube-scheduler's FailedScheduling message.

    Format (``FitError.Error()``): ``0/N nodes are available: <PreFilter msg>.`` or, when
    PreFilter passed, the sorted histogram ``<count> <reason>`` joined by ", " and ended by
    ".", then `` <PostFilter msg>`` (e.g. DefaultPreemption's ``preemption: 0/N nodes are
    available: N Preemption is not helpful for scheduling.``).
    """

    def __init__(self, pod: dict, num_all_nodes: int, diagnosis: Diagnosis):
        self.pod = pod
        self.num_all_nodes = num_all_nodes
        self.diagnosis = diagnosis
        super().__init__()

    def __str__(self) -> str:
        msg = NO_NODE_AVAILABLE_MSG.format(self.num_all_nodes) + ":"
        d = self.diagnosis
        if d.pre_filter_msg:
            msg += f" {d.pre_filter_msg}."
        else:
            hist = d.reason_histogram()
            parts = sorted(f"{count} {reason}" for reason, count in hist.items())
            if parts:
                msg += " " + ", ".join(parts) + "."
        if d.post_filter_msg:
            msg += f" {d.post_filter_msg}"
        return msg


# ---------------------------------------------------------------------------------------------
# Cluster events (the queue's requeueing hints)
# ---------------------------------------------------------------------------------------------


class ActionType(IntFlag):
    """``framework.ActionType``: what happened to an object."""

    ADD = 1
    DELETE = 2
    UPDATE_NODE_ALLOCATABLE = 4
    UPDATE_NODE_LABEL = 8
    UPDATE_NODE_TAINT = 16
    UPDATE_NODE_CONDITION = 32
    UPDATE_NODE_ANNOTATION = 64
    UPDATE_POD_LABEL = 128
    UPDATE_POD_SCALE_DOWN = 256
    UPDATE_POD_TOLERATION = 512
    UPDATE_POD_SCHEDULING_GATES_ELIMINATED = 1024
    UPDATE_POD_GENERATED_RESOURCE_CLAIM = 2048
    UPDATE_NODE_DECLARED_FEATURE = 4096
    UPDATE = (UPDATE_NODE_ALLOCATABLE | UPDATE_NODE_LABEL | UPDATE_NODE_TAINT
              | UPDATE_NODE_CONDITION | UPDATE_NODE_ANNOTATION | UPDATE_POD_LABEL
              | UPDATE_POD_SCALE_DOWN | UPDATE_POD_TOLERATION
              | UPDATE_POD_SCHEDULING_GATES_ELIMINATED | UPDATE_POD_GENERATED_RESOURCE_CLAIM
              | UPDATE_NODE_DECLARED_FEATURE)
    ALL = ADD | DELETE | UPDATE


NODE = "Node"
POD = "Pod"
ASSIGNED_POD = "AssignedPod"
WILDCARD = "*"


@dataclass(frozen=True)
class ClusterEvent:
    resource: str
    action: ActionType
    label: str = ""

    def matches(self, registered: "ClusterEvent") -> bool:
        if registered.resource not in (WILDCARD, self.resource):
            # a plugin registering Pod events sees assigned-pod events too
            if not (registered.resource == POD and self.resource == ASSIGNED_POD):
                return False
        return bool(registered.action & self.action)

    def __str__(self) -> str:
        return self.label or f"{self.resource}/{self.action.name or int(self.action)}"


QUEUE = True
QUEUE_SKIP = False
# hint(pod, old, new) -> QUEUE / QUEUE_SKIP
QueueingHintFn = Callable[[dict, Any, Any], bool]


@dataclass
class ClusterEventWithHint:
    event: ClusterEvent
    hint: QueueingHintFn | None = None


EVENT_NODE_ADD = ClusterEvent(NODE, ActionType.ADD, "NodeAdd")
EVENT_ASSIGNED_POD_DELETE = ClusterEvent(ASSIGNED_POD, ActionType.DELETE, "AssignedPodDelete")
EVENT_UNSCHEDULABLE_TIMEOUT = ClusterEvent(WILDCARD, ActionType.ALL, "UnschedulableTimeout")


# ---------------------------------------------------------------------------------------------
# Plugins
# ---------------------------------------------------------------------------------------------


class Plugin:
    """Optional base class. Subclasses set ``name`` and implement extension point methods."""

    name: str = ""

    def __init__(self, args: dict | None = None, handle: "Handle | None" = None):
        self.args = args or {}
        self.handle = handle


EXTENSION_POINTS = ("queueSort", "preEnqueue", "preFilter", "filter", "postFilter", "preScore",
                    "score", "reserve", "permit", "preBind", "bind", "postBind")

_POINT_METHODS = {
    "queueSort": ("less", "sort_key"),
    "preEnqueue": ("pre_enqueue",),
    "preFilter": ("pre_filter",),
    "filter": ("filter", "filter_node"),
    "postFilter": ("post_filter",),
    "preScore": ("pre_score",),
    "score": ("score", "score_node"),
    "reserve": ("reserve",),
    "permit": ("permit",),
    "preBind": ("pre_bind",),
    "bind": ("bind",),
    "postBind": ("post_bind",),
}


def implements(plugin: Any, point: str) -> bool:
    return any(callable(getattr(plugin, m, None)) for m in _POINT_METHODS[point])


class Handle:
    """What a plugin can reach: the node cache, the client, the clock, the event recorder,
    the listers (PDBs, Services, workloads: :mod:`kvert.scheduler.listers`), the framework,
    and ``spawn(coroutine)`` to run API calls outside the synchronous scheduling cycle.

    ``client`` is None when nothing is written back (``kvert schedule`` over a snapshot):
    plugins then only compute (preemption reports its victims without deleting them)."""

    def __init__(self, cache: "NodeCache", client: Any = None, clock: Any = None,
                 recorder: Any = None, listers: Any = None, spawn: Callable[[Any], None] | None = None,
                 activate: Callable[[list[dict]], None] | None = None,
                 workload_manager: Any = None):
        from kvert.scheduler.listers import StaticListers
        self.cache = cache
        self.client = client
        self.clock = clock
        self.recorder = recorder
        self.listers = listers if listers is not None else StaticListers()
        self._spawn = spawn
        self._activate = activate
        # the pods of each Workload pod group, fed by the scheduler (GangScheduling)
        self.workload_manager = workload_manager
        self.framework: Framework | None = None

    def activate(self, pods: list[dict]) -> None:
        """Move pods waiting in the queue (unschedulable, backing off or gated) to the active
        queue now (``framework.Handle.Activate``); gated ones are checked again first."""
        if self._activate is not None:
            self._activate(pods)

    def spawn(self, coro: Any) -> None:
        """Run ``coro`` as its own task (the scheduler's; it is awaited before it stops)."""
        if self._spawn is not None:
            self._spawn(coro)
        else:
            asyncio.ensure_future(coro)


async def _maybe_await(value: Any) -> Any:
    if inspect.isawaitable(value):
        return await value
    return value


# ---------------------------------------------------------------------------------------------
# Waiting pods (Permit)
# ---------------------------------------------------------------------------------------------


class WaitingPod:
    """A pod parked at Permit (``framework.WaitingPod``): allow / reject, per-plugin timeouts."""

    def __init__(self, pod: dict, timeouts: dict[str, float], loop: asyncio.AbstractEventLoop):
        self.pod = pod
        self.pending: set[str] = set(timeouts)
        self._future: asyncio.Future[Status | None] = loop.create_future()
        self._timers = [loop.call_later(min(t, MAX_PERMIT_TIMEOUT), self._timeout, name, t)
                        for name, t in timeouts.items()]

    @property
    def uid(self) -> str:
        return (self.pod.get("metadata") or {}).get("uid", "")

    def _timeout(self, plugin: str, waited: float) -> None:
        self.reject(plugin, f"rejected due to timeout after waiting {go_duration(waited)} at "
                            f"plugin {plugin}")

    def allow(self, plugin: str) -> None:
        self.pending.discard(plugin)
        if not self.pending and not self._future.done():
            self._cancel_timers()
            self._future.set_result(None)

    def reject(self, plugin: str, message: str) -> None:
        if not self._future.done():
            self._cancel_timers()
            self._future.set_result(Status(Code.UNSCHEDULABLE, message, plugin=plugin))

    def _cancel_timers(self) -> None:
        for t in self._timers:
            t.cancel()

    async def wait(self) -> Status | None:
        return await self._future


# ---------------------------------------------------------------------------------------------
# The framework: one profile's plugins
# ---------------------------------------------------------------------------------------------


class Framework:
    """The runtime of one profile (``frameworkImpl``): its plugins per extension point."""

    def __init__(self, profile_name: str, points: dict[str, list[Any]], weights: dict[str, int],
                 handle: Handle, percentage_of_nodes_to_score: int | None = None):
        self.profile_name = profile_name
        self.points = points
        self.weights = weights
        self.handle = handle
        self.percentage_of_nodes_to_score = percentage_of_nodes_to_score
        handle.framework = self
        self.queue_sort = points["queueSort"][0] if points.get("queueSort") else None
        self.waiting_pods: dict[str, WaitingPod] = {}
        self.plugins: dict[str, Any] = {}
        for plugins in points.values():
            for p in plugins:
                self.plugins[p.name] = p

    # ---- queueing -----------------------------------------------------------------

    def plugin(self, name: str) -> Any:
        return self.plugins.get(name)

    def events_to_register(self) -> dict[str, list[ClusterEventWithHint]]:
        """Plugin -> the cluster events that may make a pod it rejected schedulable. A plugin
        without ``events_to_register`` gets every event, as in Kubernetes."""
        out: dict[str, list[ClusterEventWithHint]] = {}
        for name, p in self.plugins.items():
            fn = getattr(p, "events_to_register", None)
            out[name] = list(fn()) if callable(fn) else [
                ClusterEventWithHint(ClusterEvent(WILDCARD, ActionType.ALL, "All"))]
        return out

    def run_pre_enqueue(self, pod: dict) -> Status | None:
        for p in self.points.get("preEnqueue", ()):
            try:
                st = p.pre_enqueue(pod)
            except Exception as e:  # a plugin bug must not stop the queue
                log.exception("PreEnqueue plugin %s failed", p.name)
                return Status.as_status(e, p.name)
            if not is_success(st):
                return st.with_plugin(p.name)
        return None

    # ---- filtering ----------------------------------------------------------------

    def run_pre_filter(self, state: CycleState, pod: dict, nodes: "NodeSet"
                       ) -> tuple[PreFilterResult | None, Status | None, set[str]]:
        """(merged result, first non-success status, plugins that narrowed the node set)."""
        result: PreFilterResult | None = None
        narrowing: set[str] = set()
        for p in self.points.get("preFilter", ()):
            try:
                r, st = p.pre_filter(state, pod, nodes)
            except Exception as e:
                log.exception("PreFilter plugin %s failed", p.name)
                return None, Status.as_status(e, p.name), narrowing
            if st is not None and st.is_skip:
                state.skip_filter_plugins.add(p.name)
            elif not is_success(st):
                st.plugin = p.name
                return None, st, narrowing
            if r is not None and not r.all_nodes():
                narrowing.add(p.name)
                result = r if result is None else result.merge(r)
                if not result.node_names:
                    names = sorted(narrowing)
                    msg = (f"node(s) didn't satisfy plugin {names[0]}" if len(names) == 1 else
                           f"node(s) didn't satisfy plugin(s) {_go_list(names)} simultaneously")
                    return result, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, msg,
                                          plugin=p.name), narrowing
        return result, None, narrowing

    def run_pre_filter_extension_add_pod(self, state: CycleState, pod: dict, other: dict,
                                         node: dict) -> Status | None:
        """``RunPreFilterExtensionAddPod``: ``other`` now counts on ``node`` for this cycle's
        state (plugins whose Filter is skipped this cycle are left out)."""
        return self._run_extension("pre_filter_add_pod", state, pod, other, node)

    def run_pre_filter_extension_remove_pod(self, state: CycleState, pod: dict, other: dict,
                                            node: dict) -> Status | None:
        """``RunPreFilterExtensionRemovePod``: ``other`` no longer counts on ``node``."""
        return self._run_extension("pre_filter_remove_pod", state, pod, other, node)

    def _run_extension(self, method: str, state: CycleState, pod: dict, other: dict,
                       node: dict) -> Status | None:
        for p in self.points.get("preFilter", ()):
            fn = getattr(p, method, None)
            if not callable(fn) or p.name in state.skip_filter_plugins:
                continue
            try:
                st = fn(state, pod, other, node)
            except Exception as e:
                log.exception("PreFilterExtension %s of %s failed", method, p.name)
                return Status.as_status(e, p.name)
            if not is_success(st):
                return Status(Code.ERROR, f"running {method} on PreFilter plugin {p.name!r}: "
                                          f"{st.message()}", plugin=p.name)
        return None

    def filter_plugins(self, state: CycleState) -> list[Any]:
        return [p for p in self.points.get("filter", ()) if p.name not in state.skip_filter_plugins]

    def run_filters(self, state: CycleState, pod: dict, nodes: "NodeSet",
                    diagnosis: Diagnosis) -> np.ndarray:
        """``RunFilterPluginsWithNominatedPods`` over a NodeSet: positions (in ``nodes``) of
        the nodes that pass every Filter plugin, in order; rejections go to ``diagnosis``.

        A node to which pods of equal or higher priority are nominated must pass twice: as it
        is, and with those pods added (a cloned state updated by PreFilterExtensions, a
        :class:`~kvert.scheduler.view.CacheView` with the pods on it), so a preemptor's place
        is kept while its victims terminate. Kubernetes runs the pass with nominated pods
        first and reports its failure; kvert runs the vectorized pass first, so a node failing
        both ways reports the reason without the nominated pods."""
        positions = self.run_filter_plugins(state, pod, nodes, diagnosis)
        cache = nodes.cache
        if not cache.nominated or len(positions) == 0:
            return positions
        prio = _priority(pod)
        uid = (pod.get("metadata") or {}).get("uid", "")
        keep = np.ones(len(positions), bool)
        for i, pos in enumerate(positions):
            row = int(nodes.rows[pos])
            name = cache.names[row] or ""
            others = [p for p in cache.nominated_pods(name)
                      if _priority(p) >= prio and (p.get("metadata") or {}).get("uid", "") != uid]
            if not others:
                continue
            ok = self._filter_with_pods(state, pod, nodes, row, others, diagnosis)
            keep[i] = ok
        return positions[keep]

    def _filter_with_pods(self, state: CycleState, pod: dict, nodes: "NodeSet", row: int,
                          others: list[dict], diagnosis: Diagnosis) -> bool:
        from kvert.scheduler.snapshot import NodeSet
        from kvert.scheduler.view import CacheView
        view = CacheView(nodes.cache)
        name = nodes.cache.names[row] or ""
        node = nodes.cache.node_objs[row] or {}
        st2 = state.clone()
        for other in others:
            view.add_pod(other, name)
            st = self.run_pre_filter_extension_add_pod(st2, pod, other, node)
            if not is_success(st):
                raise _PluginError(st)
        ok = self.run_filter_plugins(st2, pod, NodeSet(view, np.array([row], np.int64)), diagnosis)
        return len(ok) == 1

    def run_filter_plugins(self, state: CycleState, pod: dict, nodes: "NodeSet",
                           diagnosis: Diagnosis) -> np.ndarray:
        """``RunFilterPlugins`` over a NodeSet (nominated pods not considered)."""
        current = nodes
        positions = np.arange(len(nodes))
        for p in self.filter_plugins(state):
            if len(current) == 0:
                break
            try:
                res = _run_filter(p, state, pod, current)
            except Exception as e:
                if not isinstance(e, PluginStatusError):
                    log.exception("Filter plugin %s failed", p.name)
                raise _PluginError(Status(Code.ERROR, f'running "{p.name}" filter plugin: {e}',
                                          plugin=p.name, error=e)) from e
            if res.codes.dtype != np.int8:
                res.codes = res.codes.astype(np.int8)
            failed = res.codes != 0
            if failed.any():
                diagnosis.records.append(NodeFilterRecord(p.name, current.rows, res))
                codes = np.unique(res.codes[failed])
                for c in codes:
                    diagnosis.add_plugin_status(Status(Code(int(c)), plugin=p.name))
                current = current.subset(~failed)
                positions = positions[~failed]
        return positions

    def run_post_filter(self, state: CycleState, pod: dict, diagnosis: Diagnosis
                        ) -> tuple[PostFilterResult | None, Status | None]:
        """``RunPostFilterPlugins``: the first success wins; a rejected plugin's result is kept
        (the last one that is not None), so "preemption cannot help" (a result naming no
        node) clears an earlier nomination."""
        reasons: list[str] = []
        result: PostFilterResult | None = None
        for p in self.points.get("postFilter", ()):
            try:
                r, st = p.post_filter(state, pod, diagnosis)
            except Exception as e:
                log.exception("PostFilter plugin %s failed", p.name)
                return None, Status.as_status(e, p.name)
            if is_success(st):
                return r, st
            if st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return r, st.with_plugin(p.name)
            if st.code == Code.ERROR:
                return None, st.with_plugin(p.name)
            if r is not None:
                result = r
            if st.message():
                reasons.append(st.message())
        if not reasons:
            return result, Status(Code.UNSCHEDULABLE)
        return result, Status(Code.UNSCHEDULABLE, ", ".join(reasons))

    # ---- scoring ------------------------------------------------------------------

    def run_pre_score(self, state: CycleState, pod: dict, nodes: "NodeSet") -> Status | None:
        for p in self.points.get("preScore", ()):
            try:
                st = p.pre_score(state, pod, nodes)
            except Exception as e:
                log.exception("PreScore plugin %s failed", p.name)
                return Status.as_status(e, p.name)
            if st is not None and st.is_skip:
                state.skip_score_plugins.add(p.name)
            elif not is_success(st):
                return st.with_plugin(p.name)
        return None

    def run_score(self, state: CycleState, pod: dict, nodes: "NodeSet"
                  ) -> tuple[dict[str, np.ndarray], np.ndarray]:
        """Each plugin's normalized score per node (unweighted) and the weighted totals."""
        n = len(nodes)
        per_plugin: dict[str, np.ndarray] = {}
        for p in self.points.get("score", ()):
            if p.name in state.skip_score_plugins:
                continue
            try:
                scores = _run_score(p, state, pod, nodes)
                norm = getattr(p, "normalize_score", None)
                if callable(norm):
                    out = norm(state, pod, nodes, scores)
                    if out is not None:
                        scores = out
            except Exception as e:
                log.exception("Score plugin %s failed", p.name)
                raise _PluginError(Status.as_status(e, p.name)) from e
            per_plugin[p.name] = np.asarray(scores, dtype=np.int64)
        if not per_plugin or not n:
            return per_plugin, np.zeros(n, np.int64)
        # every plugin's scores checked at once; the culprit is looked for only on a failure
        matrix = np.stack(list(per_plugin.values()))
        if matrix.min() < MIN_NODE_SCORE or matrix.max() > MAX_NODE_SCORE:
            for name, scores in per_plugin.items():
                bad = scores[(scores < MIN_NODE_SCORE) | (scores > MAX_NODE_SCORE)]
                if len(bad):
                    raise _PluginError(Status(
                        Code.ERROR, f"plugin {name!r} returns an invalid score {int(bad[0])}, it "
                                    f"should in the range of [{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] "
                                    "after normalizing", plugin=name))
        weights = np.fromiter((self.weights.get(name, 1) for name in per_plugin), np.int64,
                              len(per_plugin))
        return per_plugin, weights @ matrix

    # ---- reserve / permit -----------------------------------------------------------

    def run_reserve(self, state: CycleState, pod: dict, node: str) -> Status | None:
        for p in self.points.get("reserve", ()):
            try:
                st = p.reserve(state, pod, node)
            except Exception as e:
                log.exception("Reserve plugin %s failed", p.name)
                st = Status.as_status(e)
            if not is_success(st):
                return st.with_plugin(p.name)
        return None

    def run_unreserve(self, state: CycleState, pod: dict, node: str) -> None:
        for p in reversed(self.points.get("reserve", ())):
            fn = getattr(p, "unreserve", None)
            if callable(fn):
                try:
                    fn(state, pod, node)
                except Exception:
                    log.exception("Unreserve of plugin %s failed", p.name)

    def run_permit(self, state: CycleState, pod: dict, node: str) -> Status | None:
        timeouts: dict[str, float] = {}
        for p in self.points.get("permit", ()):
            try:
                st, timeout = p.permit(state, pod, node)
            except Exception as e:
                log.exception("Permit plugin %s failed", p.name)
                return Status.as_status(e, p.name)
            if is_success(st):
                continue
            if st.is_rejected:
                return st.with_plugin(p.name)
            if st.is_wait:
                timeouts[p.name] = min(float(timeout or 0.0), MAX_PERMIT_TIMEOUT)
                continue
            return st.with_plugin(p.name)
        if timeouts:
            uid = (pod.get("metadata") or {}).get("uid", "")
            self.waiting_pods[uid] = WaitingPod(pod, timeouts, asyncio.get_running_loop())
            return Status(Code.WAIT, "one or more plugins asked to wait and no plugin rejected pod")
        return None

    async def wait_on_permit(self, pod: dict) -> Status | None:
        uid = (pod.get("metadata") or {}).get("uid", "")
        wp = self.waiting_pods.get(uid)
        if wp is None:
            return None
        try:
            return await wp.wait()
        finally:
            self.waiting_pods.pop(uid, None)

    def get_waiting_pod(self, uid: str) -> WaitingPod | None:
        return self.waiting_pods.get(uid)

    def iterate_over_waiting_pods(self) -> Iterator[WaitingPod]:
        return iter(list(self.waiting_pods.values()))

    def reject_waiting_pod(self, uid: str, plugin: str = "", message: str = "removed") -> bool:
        wp = self.waiting_pods.get(uid)
        if wp is None:
            return False
        wp.reject(plugin, message)
        return True

    # ---- binding --------------------------------------------------------------------

    async def run_pre_bind(self, state: CycleState, pod: dict, node: str) -> Status | None:
        for p in self.points.get("preBind", ()):
            try:
                st = await _maybe_await(p.pre_bind(state, pod, node))
            except Exception as e:
                log.exception("PreBind plugin %s failed", p.name)
                st = Status.as_status(e)
            if not is_success(st):
                if st.is_rejected:
                    return st.with_plugin(p.name)
                return Status(Code.ERROR, f'running PreBind plugin "{p.name}": {st.message()}',
                              plugin=p.name)
        return None

    async def run_bind(self, state: CycleState, pod: dict, node: str) -> Status | None:
        binders = self.points.get("bind", ())
        if not binders:
            return Status(Code.SKIP)
        for p in binders:
            try:
                st = await _maybe_await(p.bind(state, pod, node))
            except Exception as e:
                log.exception("Bind plugin %s failed", p.name)
                st = Status.as_status(e)
            if st is not None and st.is_skip:
                continue
            if not is_success(st):
                if st.is_rejected:
                    return st.with_plugin(p.name)
                return Status(Code.ERROR, f'running Bind plugin "{p.name}": {st.message()}',
                              plugin=p.name)
            return st
        return Status(Code.SKIP)

    def run_post_bind(self, state: CycleState, pod: dict, node: str) -> None:
        for p in self.points.get("postBind", ()):
            try:
                p.post_bind(state, pod, node)
            except Exception:
                log.exception("PostBind plugin %s failed", p.name)


class PluginStatusError(Exception):
    """Raised by a plugin's vectorized method for an Error status it expects (bad input such
    as an invalid selector): the attempt fails with the message, no traceback is logged."""


class _PluginError(Exception):
    def __init__(self, status: Status):
        super().__init__(status.message())
        self.status = status


def _run_filter(p: Any, state: CycleState, pod: dict, nodes: "NodeSet") -> FilterResult:
    fn = getattr(p, "filter", None)
    if callable(fn):
        return fn(state, pod, nodes)
    # slow path: one call per node
    n = len(nodes)
    codes = np.zeros(n, np.int8)
    by_reason: dict[str, np.ndarray] = {}
    for i, info in enumerate(nodes.infos()):
        st = p.filter_node(state, pod, info)
        if is_success(st):
            continue
        if st.code == Code.ERROR:
            raise _PluginError(st.with_plugin(p.name))
        codes[i] = int(st.code)
        for r in st.reasons or [""]:
            by_reason.setdefault(r, np.zeros(n, bool))[i] = True
    return FilterResult(codes, list(by_reason.items()))


def _run_score(p: Any, state: CycleState, pod: dict, nodes: "NodeSet") -> np.ndarray:
    fn = getattr(p, "score", None)
    if callable(fn):
        return np.asarray(fn(state, pod, nodes), dtype=np.int64)
    return np.fromiter((int(p.score_node(state, pod, info)) for info in nodes.infos()),
                       dtype=np.int64, count=len(nodes))


def go_duration(seconds: float) -> str:
    """Go's ``time.Duration.String`` for whole and fractional seconds: 300 -> "5m0s",
    10 -> "10s", 1.5 -> "1.5s", 3600 -> "1h0m0s"."""
    if seconds == 0:
        return "0s"
    sign = "-" if seconds < 0 else ""
    rest = abs(seconds)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    text = f"{secs:.9f}".rstrip("0").rstrip(".") + "s"
    if hours:
        return f"{sign}{int(hours)}h{int(minutes)}m{text}"
    if minutes:
        return f"{sign}{int(minutes)}m{text}"
    return sign + text


def _priority(pod: dict) -> int:
    value = (pod.get("spec") or {}).get("priority")
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _go_list(items: Iterable[str]) -> str:
    """Go's ``%v`` of a string slice: ``[a b]``."""
    return "[" + " ".join(items) + "]"


def default_normalize_score(max_priority: int, reverse: bool, scores: np.ndarray) -> np.ndarray:
    """``helper.DefaultNormalizeScore``: scale to [0, max_priority] by the highest score
    (integer division), optionally reversed; all-zero scores stay 0 (or become max if reversed)."""
    scores = np.asarray(scores, dtype=np.int64)
    if len(scores) == 0:
        return scores
    highest = int(scores.max())
    if highest <= 0:
        return np.full(len(scores), max_priority, np.int64) if reverse else np.maximum(scores, 0)
    out = max_priority * scores // highest
    return max_priority - out if reverse else out
