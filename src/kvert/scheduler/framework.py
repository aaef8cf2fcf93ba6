"""The scheduling framework: one profile's runtime (``framework/runtime/framework.go``).

Seed 001 section 7 ("スケジューリングフレームワーク") defines the extension points; their
contracts -- when each runs, what it may change, what its answer means -- are the Protocols
of :mod:`kvert.scheduler.interface` (``framework/interface.go``):

=================  ==========================================================================
QueueSort          ``less(a, b)`` (or ``sort_key(qpi)``) orders the active queue; one per scheduler
PreEnqueue         ``pre_enqueue(pod)``: a rejection keeps the pod out of the active queue (gates)
PreFilter          ``pre_filter(state, pod, nodes)`` -> ``(PreFilterResult | None, Status | None)``;
                   Skip disables the plugin's Filter for this cycle; a rejection fails the cycle
                   (PreFilterExtensions: ``pre_filter_add_pod`` / ``pre_filter_remove_pod``)
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
convenient base. ``None`` means Success, as a nil ``*Status`` does in Go. The framework
finds each plugin's methods once, when it is built (:class:`_Dispatch`), not per cycle.

**Vectorized filters and scores** (DESIGN principle 4): where Kubernetes calls a Filter or
Score plugin once per node, kvert calls ``filter``/``score`` once per cycle with a
:class:`~kvert.scheduler.snapshot.NodeSet` -- the cache's rows of many nodes -- and the
plugin answers for all of them with numpy arrays. The framework still applies Filter
plugins in the configured order and gives a node the status of the *first* plugin that
rejects it (later plugins only see the survivors), as Kubernetes does. A plugin that cannot
vectorize implements ``filter_node``/``score_node`` and the framework loops for it.

Statuses, cycle state, results and cluster events live in modules of their own below this
one (:mod:`~kvert.scheduler.status`, :mod:`~kvert.scheduler.cyclestate`,
:mod:`~kvert.scheduler.results`, :mod:`~kvert.scheduler.events`) so that the contracts can
name them; they are re-exported here, where plugins have always imported them from.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Callable, Coroutine, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import numpy as np

from kvert.api.durations import format_go_duration
from kvert.api.features import enabled as feature_enabled
from kvert.client.base import Client
from kvert.client.events import EventRecorder
from kvert.clock.base import Clock
from kvert.scheduler.cache import NodeCache
from kvert.scheduler.cyclestate import CycleState
from kvert.scheduler.deferred import GATE as RESIZE_PREEMPTION_GATE
from kvert.scheduler.deferred import handles_deferred_resize, is_pod_resize_deferred
from kvert.scheduler.events import (
    ASSIGNED_POD,
    EVENT_ASSIGNED_POD_DELETE,
    EVENT_NODE_ADD,
    EVENT_UNSCHEDULABLE_TIMEOUT,
    NODE,
    POD,
    QUEUE,
    QUEUE_SKIP,
    WILDCARD,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    QueueingHintFn,
)
from kvert.scheduler.interface import (
    EXTENSION_POINTS,
    MaybeAwaitable,
    Pod,
    QueueSortKeyPlugin,
    QueueSortPlugin,
    implements,
    method_of,
)
from kvert.scheduler.listers import Listers, StaticListers
from kvert.scheduler.nodeinfo import NodeInfo
from kvert.scheduler.results import (
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    NO_NODE_AVAILABLE_MSG,
    Diagnosis,
    FilterResult,
    FitError,
    NodeFilterRecord,
    PostFilterResult,
    PreFilterResult,
)
from kvert.scheduler.snapshot import NodeSet
from kvert.scheduler.status import CODE_NAMES, Code, PluginStatusError, Status, is_success
from kvert.scheduler.view import CacheView
from kvert.scheduler.workloads import WorkloadManager

log = logging.getLogger(__name__)

# RequestedToCapacityRatio shapes are written on a 0..10 scale (config.MaxCustomPriorityScore).
MAX_CUSTOM_PRIORITY_SCORE = 10
# Permit waits are capped like Kubernetes' maxTimeout.
MAX_PERMIT_TIMEOUT = 15 * 60.0

# ---------------------------------------------------------------------------------------------
# Plugins
# ---------------------------------------------------------------------------------------------


class Plugin:
    """Optional base class. Subclasses set ``name`` and implement extension point methods."""

    name: str = ""

    def __init__(self, args: dict[str, Any] | None = None, handle: Handle | None = None):
        self.args = args or {}
        self.handle = handle

    @property
    def bound_handle(self) -> Handle:
        """The handle, for the methods that need one: a plugin built without one (to validate
        its args) is never run."""
        if self.handle is None:
            raise RuntimeError(f"plugin {self.name} was built without a framework handle")
        return self.handle


# how a registry builds a plugin: factory(args, handle)
PluginFactory = Callable[[dict[str, Any], "Handle"], Any]


class Handle:
    """What a plugin can reach: the node cache, the client, the clock, the event recorder,
    the listers (PDBs, Services, workloads: :mod:`kvert.scheduler.listers`), the framework,
    and ``spawn(coroutine)`` to run API calls outside the synchronous scheduling cycle.

    ``client`` is None when nothing is written back (``kvert schedule`` over a snapshot):
    plugins then only compute (preemption reports its victims without deleting them)."""

    def __init__(self, cache: NodeCache, client: Client | None = None, clock: Clock | None = None,
                 recorder: EventRecorder | None = None, listers: Listers | None = None,
                 spawn: Callable[[Coroutine[Any, Any, Any]], None] | None = None,
                 activate: Callable[[list[dict[str, Any]]], None] | None = None,
                 workload_manager: WorkloadManager | None = None,
                 gates: Mapping[str, bool] | None = None):
        self.cache = cache
        # the scheduler's --feature-gates (upstream hands plugins a feature.Features)
        self.gates: Mapping[str, bool] = dict(gates or {})
        self.client = client
        self.clock = clock
        self.recorder = recorder
        self.listers: Listers = listers if listers is not None else StaticListers()
        self._spawn = spawn
        self._activate = activate
        # the pods of each Workload pod group, fed by the scheduler (GangScheduling)
        self.workload_manager = workload_manager
        self.framework: Framework | None = None

    def feature_enabled(self, name: str) -> bool:
        """Is the feature gate on for this scheduler (its default when not set)?"""
        return feature_enabled(self.gates, name)

    @property
    def bound_framework(self) -> Framework:
        """The framework built over this handle (plugins run only once it exists)."""
        if self.framework is None:
            raise RuntimeError("the handle's framework is not built yet")
        return self.framework

    def activate(self, pods: list[dict[str, Any]]) -> None:
        """Move pods waiting in the queue (unschedulable, backing off or gated) to the active
        queue now (``framework.Handle.Activate``); gated ones are checked again first."""
        if self._activate is not None:
            self._activate(pods)

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> None:
        """Run ``coro`` as its own task (the scheduler's; it is awaited before it stops)."""
        if self._spawn is not None:
            self._spawn(coro)
        else:
            asyncio.ensure_future(coro)


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


# ---------------------------------------------------------------------------------------------
# Dispatch: each point's plugins with their methods looked up once
# ---------------------------------------------------------------------------------------------

PreEnqueueFn = Callable[[Pod], Status | None]
PreFilterFn = Callable[[CycleState, Pod, NodeSet], tuple[PreFilterResult | None, Status | None]]
ExtensionFn = Callable[[CycleState, Pod, Pod, dict[str, Any]], Status | None]
FilterFn = Callable[[CycleState, Pod, NodeSet], FilterResult]
PostFilterFn = Callable[[CycleState, Pod, Diagnosis],
                        tuple[PostFilterResult | None, Status | None]]
PreScoreFn = Callable[[CycleState, Pod, NodeSet], Status | None]
ScoreFn = Callable[[CycleState, Pod, NodeSet], np.ndarray]
NormalizeFn = Callable[[CycleState, Pod, NodeSet, np.ndarray], np.ndarray | None]
ReserveFn = Callable[[CycleState, Pod, str], Status | None]
UnreserveFn = Callable[[CycleState, Pod, str], None]
PermitFn = Callable[[CycleState, Pod, str], tuple[Status | None, float]]
BindFn = Callable[[CycleState, Pod, str], MaybeAwaitable]
PostBindFn = Callable[[CycleState, Pod, str], None]


@dataclass(frozen=True)
class _Call:
    """A plugin's method at one point (``name`` for statuses, logs and skip sets)."""

    name: str
    plugin: Any
    fn: Callable[..., Any]


@dataclass(frozen=True)
class _PreFilterCall:
    name: str
    plugin: Any
    fn: PreFilterFn
    add_pod: ExtensionFn | None
    remove_pod: ExtensionFn | None


@dataclass(frozen=True)
class _FilterCall:
    name: str
    plugin: Any
    fn: FilterFn


@dataclass(frozen=True)
class _ScoreCall:
    name: str
    plugin: Any
    fn: ScoreFn
    normalize: NormalizeFn | None


@dataclass(frozen=True)
class _ReserveCall:
    name: str
    plugin: Any
    fn: ReserveFn
    unreserve: UnreserveFn | None


E = TypeVar("E")


class _Table(Generic[E]):
    """One point's entries and the plugin list they were built from: a profile's list that is
    replaced (or grows) after the framework was built is looked up again, once."""

    __slots__ = ("source", "size", "entries")

    def __init__(self, source: Sequence[Any], entries: list[E]):
        self.source = source
        self.size = len(source)
        self.entries = entries

    def current(self, plugins: Sequence[Any]) -> bool:
        return self.source is plugins and self.size == len(plugins)


def _required(p: Any, method: str) -> Callable[..., Any]:
    """The plugin's ``method``; a plugin placed at a point it lacks fails when the point runs
    (the framework turns the AttributeError into the plugin's Error status), as it always has."""
    fn = method_of(p, method)
    if fn is not None:
        return fn

    def missing(*args: object) -> Any:
        return getattr(p, method)(*args)
    return missing


def _calls(plugins: Sequence[Any], method: str) -> list[_Call]:
    return [_Call(p.name, p, _required(p, method)) for p in plugins]


def _pre_filter_calls(plugins: Sequence[Any]) -> list[_PreFilterCall]:
    return [_PreFilterCall(p.name, p, _required(p, "pre_filter"), method_of(p, "pre_filter_add_pod"),
                           method_of(p, "pre_filter_remove_pod")) for p in plugins]


def _filter_calls(plugins: Sequence[Any]) -> list[_FilterCall]:
    return [_FilterCall(p.name, p, method_of(p, "filter") or _per_node_filter(p)) for p in plugins]


def _score_calls(plugins: Sequence[Any]) -> list[_ScoreCall]:
    return [_ScoreCall(p.name, p, _vectorized_score(p), method_of(p, "normalize_score"))
            for p in plugins]


def _reserve_calls(plugins: Sequence[Any]) -> list[_ReserveCall]:
    return [_ReserveCall(p.name, p, _required(p, "reserve"), method_of(p, "unreserve"))
            for p in plugins]


def _per_node_filter(p: Any) -> FilterFn:
    """The slow path of a plugin without ``filter``: ``filter_node`` once per node."""
    filter_node = _required(p, "filter_node")

    def run(state: CycleState, pod: Pod, nodes: NodeSet) -> FilterResult:
        n = len(nodes)
        codes = np.zeros(n, np.int8)
        by_reason: dict[str, np.ndarray] = {}
        for i, info in enumerate(nodes.infos()):
            st = filter_node(state, pod, info)
            if st is None or st.code == Code.SUCCESS:
                continue
            if st.code == Code.ERROR:
                raise _PluginError(st.with_plugin(p.name))
            codes[i] = int(st.code)
            for r in st.reasons or [""]:
                by_reason.setdefault(r, np.zeros(n, bool))[i] = True
        return FilterResult(codes, list(by_reason.items()))
    return run


def _vectorized_score(p: Any) -> ScoreFn:
    score = method_of(p, "score")
    if score is not None:
        vectorized: ScoreFn = score
        return lambda state, pod, nodes: np.asarray(vectorized(state, pod, nodes), dtype=np.int64)
    score_node = _required(p, "score_node")

    def run(state: CycleState, pod: Pod, nodes: NodeSet) -> np.ndarray:
        return np.fromiter((int(score_node(state, pod, info)) for info in nodes.infos()),
                           dtype=np.int64, count=len(nodes))
    return run


# ---------------------------------------------------------------------------------------------
# The framework: one profile's plugins
# ---------------------------------------------------------------------------------------------


class Framework:
    """The runtime of one profile (``frameworkImpl``): its plugins per extension point.

    ``points`` maps an extension point to its plugins in order. Each plugin's methods are
    looked up when the framework is built (:class:`_Table`); the cycle only calls them."""

    def __init__(self, profile_name: str, points: dict[str, list[Any]], weights: dict[str, int],
                 handle: Handle, percentage_of_nodes_to_score: int | None = None):
        self.profile_name = profile_name
        self.points = points
        self.weights = weights
        self.handle = handle
        self.percentage_of_nodes_to_score = percentage_of_nodes_to_score
        handle.framework = self
        self.queue_sort: QueueSortPlugin | QueueSortKeyPlugin | None = (
            points["queueSort"][0] if points.get("queueSort") else None)
        self.waiting_pods: dict[str, WaitingPod] = {}
        self.plugins: dict[str, Any] = {}
        for plugins in points.values():
            for p in plugins:
                self.plugins[p.name] = p
        self._tables: dict[str, _Table[Any]] = {}
        for point in EXTENSION_POINTS:
            self._entries(point)

    _BUILDERS: dict[str, Callable[[Sequence[Any]], list[Any]]] = {
        "preFilter": _pre_filter_calls, "filter": _filter_calls, "score": _score_calls,
        "reserve": _reserve_calls}
    _METHODS = {"queueSort": "sort_key", "preEnqueue": "pre_enqueue", "postFilter": "post_filter",
                "preScore": "pre_score", "permit": "permit", "preBind": "pre_bind", "bind": "bind",
                "postBind": "post_bind"}

    def _entries(self, point: str) -> list[Any]:
        plugins = self.points.get(point, ())
        table = self._tables.get(point)
        if table is None or not table.current(plugins):
            build = self._BUILDERS.get(point)
            if build is not None:
                entries = build(plugins)
            elif point == "queueSort":
                entries = list(plugins)      # the scheduler takes sort_key or less itself
            else:
                entries = _calls(plugins, self._METHODS[point])
            table = self._tables[point] = _Table(plugins, entries)
        return table.entries

    # ---- queueing -----------------------------------------------------------------

    def plugin(self, name: str) -> Any:
        return self.plugins.get(name)

    def events_to_register(self) -> dict[str, list[ClusterEventWithHint]]:
        """Plugin -> the cluster events that may make a pod it rejected schedulable. A plugin
        without ``events_to_register`` gets every event, as in Kubernetes."""
        out: dict[str, list[ClusterEventWithHint]] = {}
        for name, p in self.plugins.items():
            fn = method_of(p, "events_to_register")
            out[name] = list(fn()) if fn is not None else [
                ClusterEventWithHint(ClusterEvent(WILDCARD, ActionType.ALL, "All"))]
        return out

    def run_pre_enqueue(self, pod: Pod) -> Status | None:
        call: _Call
        for call in self._entries("preEnqueue"):
            try:
                st = call.fn(pod)
            except Exception as e:  # a plugin bug must not stop the queue
                log.exception("PreEnqueue plugin %s failed", call.name)
                return Status.as_status(e, call.name)
            if st is not None and st.code != Code.SUCCESS:
                return st.with_plugin(call.name)
        return None

    # ---- filtering ----------------------------------------------------------------

    def deferred_resize(self, pod: Pod) -> bool:
        """Is this cycle a bound pod's Deferred resize (KEP-5836, behind its gate)? Then only
        the plugins marked ``handles_deferred_resize`` run (see :mod:`kvert.scheduler.deferred`)."""
        return (bool((pod.get("spec") or {}).get("nodeName")) and is_pod_resize_deferred(pod)
                and self.handle.feature_enabled(RESIZE_PREEMPTION_GATE))

    def _skip_for_deferred_resize(self, state: CycleState) -> None:
        """The PreFilter/Filter plugins that do not handle a deferred resize are skipped, as
        upstream's in-tree plugins return Skip from PreFilter for such a pod."""
        for point in ("preFilter", "filter"):
            for p in self.points.get(point, ()):
                if not handles_deferred_resize(p):
                    state.skip_filter_plugins.add(p.name)

    def run_pre_filter(self, state: CycleState, pod: Pod, nodes: NodeSet
                       ) -> tuple[PreFilterResult | None, Status | None, set[str]]:
        """(merged result, first non-success status, plugins that narrowed the node set)."""
        result: PreFilterResult | None = None
        narrowing: set[str] = set()
        if self.deferred_resize(pod):
            self._skip_for_deferred_resize(state)
        call: _PreFilterCall
        for call in self._entries("preFilter"):
            if call.name in state.skip_filter_plugins and not handles_deferred_resize(call.plugin):
                continue
            try:
                r, st = call.fn(state, pod, nodes)
            except Exception as e:
                log.exception("PreFilter plugin %s failed", call.name)
                return None, Status.as_status(e, call.name), narrowing
            if st is not None and st.is_skip:
                state.skip_filter_plugins.add(call.name)
            elif st is not None and st.code != Code.SUCCESS:
                st.plugin = call.name
                return None, st, narrowing
            if r is not None and not r.all_nodes():
                narrowing.add(call.name)
                result = r if result is None else result.merge(r)
                if not result.node_names:
                    names = sorted(narrowing)
                    msg = (f"node(s) didn't satisfy plugin {names[0]}" if len(names) == 1 else
                           f"node(s) didn't satisfy plugin(s) {_go_list(names)} simultaneously")
                    return result, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, msg,
                                          plugin=call.name), narrowing
        return result, None, narrowing

    def run_pre_filter_extension_add_pod(self, state: CycleState, pod: Pod, other: Pod,
                                         node: dict[str, Any]) -> Status | None:
        """``RunPreFilterExtensionAddPod``: ``other`` now counts on ``node`` for this cycle's
        state (plugins whose Filter is skipped this cycle are left out)."""
        return self._run_extension("pre_filter_add_pod", state, pod, other, node)

    def run_pre_filter_extension_remove_pod(self, state: CycleState, pod: Pod, other: Pod,
                                            node: dict[str, Any]) -> Status | None:
        """``RunPreFilterExtensionRemovePod``: ``other`` no longer counts on ``node``."""
        return self._run_extension("pre_filter_remove_pod", state, pod, other, node)

    def _run_extension(self, method: str, state: CycleState, pod: Pod, other: Pod,
                       node: dict[str, Any]) -> Status | None:
        adding = method == "pre_filter_add_pod"
        call: _PreFilterCall
        for call in self._entries("preFilter"):
            fn = call.add_pod if adding else call.remove_pod
            if fn is None or call.name in state.skip_filter_plugins:
                continue
            try:
                st = fn(state, pod, other, node)
            except Exception as e:
                log.exception("PreFilterExtension %s of %s failed", method, call.name)
                return Status.as_status(e, call.name)
            if st is not None and st.code != Code.SUCCESS:
                return Status(Code.ERROR, f"running {method} on PreFilter plugin {call.name!r}: "
                                          f"{st.message()}", plugin=call.name)
        return None

    def filter_plugins(self, state: CycleState) -> list[Any]:
        return [c.plugin for c in self._entries("filter") if c.name not in state.skip_filter_plugins]

    def run_filters(self, state: CycleState, pod: Pod, nodes: NodeSet,
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

    def _filter_with_pods(self, state: CycleState, pod: Pod, nodes: NodeSet, row: int,
                          others: list[Pod], diagnosis: Diagnosis) -> bool:
        base = nodes.cache
        if not isinstance(base, (NodeCache, CacheView)):
            raise TypeError(f"nominated pods need a NodeCache or a CacheView, not {type(base)}")
        view = CacheView(base)
        name = base.names[row] or ""
        node = base.node_objs[row] or {}
        st2 = state.clone()
        for other in others:
            view.add_pod(other, name)
            st = self.run_pre_filter_extension_add_pod(st2, pod, other, node)
            if st is not None and st.code != Code.SUCCESS:
                raise _PluginError(st)
        ok = self.run_filter_plugins(st2, pod, NodeSet(view, np.array([row], np.int64)), diagnosis)
        return len(ok) == 1

    def run_filter_plugins(self, state: CycleState, pod: Pod, nodes: NodeSet,
                           diagnosis: Diagnosis) -> np.ndarray:
        """``RunFilterPlugins`` over a NodeSet (nominated pods not considered)."""
        current = nodes
        positions = np.arange(len(nodes))
        skipped = state.skip_filter_plugins
        call: _FilterCall
        for call in self._entries("filter"):
            if call.name in skipped:
                continue
            if len(current) == 0:
                break
            try:
                res = call.fn(state, pod, current)
            except Exception as e:
                if not isinstance(e, PluginStatusError):
                    log.exception("Filter plugin %s failed", call.name)
                raise _PluginError(Status(Code.ERROR, f'running "{call.name}" filter plugin: {e}',
                                          plugin=call.name, error=e)) from e
            if res.codes.dtype != np.int8:
                res.codes = res.codes.astype(np.int8)
            failed = res.codes != 0
            if failed.any():
                diagnosis.records.append(NodeFilterRecord(call.name, current.rows, res))
                codes = np.unique(res.codes[failed])
                for c in codes:
                    diagnosis.add_plugin_status(Status(Code(int(c)), plugin=call.name))
                current = current.subset(~failed)
                positions = positions[~failed]
        return positions

    def run_post_filter(self, state: CycleState, pod: Pod, diagnosis: Diagnosis
                        ) -> tuple[PostFilterResult | None, Status | None]:
        """``RunPostFilterPlugins``: the first success wins; a rejected plugin's result is kept
        (the last one that is not None), so "preemption cannot help" (a result naming no
        node) clears an earlier nomination."""
        reasons: list[str] = []
        result: PostFilterResult | None = None
        deferred = self.deferred_resize(pod)
        call: _Call
        for call in self._entries("postFilter"):
            if deferred and not handles_deferred_resize(call.plugin):
                continue   # upstream's ResizeInterestedPlugin: only DefaultPreemption opts in
            try:
                r, st = call.fn(state, pod, diagnosis)
            except Exception as e:
                log.exception("PostFilter plugin %s failed", call.name)
                return None, Status.as_status(e, call.name)
            if st is None or st.code == Code.SUCCESS:
                return r, st
            if st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return r, st.with_plugin(call.name)
            if st.code == Code.ERROR:
                return None, st.with_plugin(call.name)
            if r is not None:
                result = r
            if st.message():
                reasons.append(st.message())
        if not reasons:
            return result, Status(Code.UNSCHEDULABLE)
        return result, Status(Code.UNSCHEDULABLE, ", ".join(reasons))

    # ---- scoring ------------------------------------------------------------------

    def run_pre_score(self, state: CycleState, pod: Pod, nodes: NodeSet) -> Status | None:
        call: _Call
        for call in self._entries("preScore"):
            try:
                st = call.fn(state, pod, nodes)
            except Exception as e:
                log.exception("PreScore plugin %s failed", call.name)
                return Status.as_status(e, call.name)
            if st is not None and st.is_skip:
                state.skip_score_plugins.add(call.name)
            elif st is not None and st.code != Code.SUCCESS:
                return st.with_plugin(call.name)
        return None

    def run_score(self, state: CycleState, pod: Pod, nodes: NodeSet
                  ) -> tuple[dict[str, np.ndarray], np.ndarray]:
        """Each plugin's normalized score per node (unweighted) and the weighted totals."""
        n = len(nodes)
        per_plugin: dict[str, np.ndarray] = {}
        call: _ScoreCall
        for call in self._entries("score"):
            if call.name in state.skip_score_plugins:
                continue
            try:
                scores = call.fn(state, pod, nodes)
                if call.normalize is not None:
                    out = call.normalize(state, pod, nodes, scores)
                    if out is not None:
                        scores = out
            except Exception as e:
                log.exception("Score plugin %s failed", call.name)
                raise _PluginError(Status.as_status(e, call.name)) from e
            per_plugin[call.name] = np.asarray(scores, dtype=np.int64)
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
        totals: np.ndarray = weights @ matrix
        return per_plugin, totals

    # ---- reserve / permit -----------------------------------------------------------

    def run_reserve(self, state: CycleState, pod: Pod, node: str) -> Status | None:
        call: _ReserveCall
        for call in self._entries("reserve"):
            try:
                st = call.fn(state, pod, node)
            except Exception as e:
                log.exception("Reserve plugin %s failed", call.name)
                st = Status.as_status(e)
            if st is not None and st.code != Code.SUCCESS:
                return st.with_plugin(call.name)
        return None

    def run_unreserve(self, state: CycleState, pod: Pod, node: str) -> None:
        call: _ReserveCall
        for call in reversed(self._entries("reserve")):
            if call.unreserve is not None:
                try:
                    call.unreserve(state, pod, node)
                except Exception:
                    log.exception("Unreserve of plugin %s failed", call.name)

    def run_permit(self, state: CycleState, pod: Pod, node: str) -> Status | None:
        timeouts: dict[str, float] = {}
        deferred = self.deferred_resize(pod)
        call: _Call
        for call in self._entries("permit"):
            if deferred and not handles_deferred_resize(call.plugin):
                continue
            try:
                st, timeout = call.fn(state, pod, node)
            except Exception as e:
                log.exception("Permit plugin %s failed", call.name)
                return Status.as_status(e, call.name)
            if st is None or st.code == Code.SUCCESS:
                continue
            if st.is_rejected:
                return st.with_plugin(call.name)
            if st.is_wait:
                timeouts[call.name] = min(float(timeout or 0.0), MAX_PERMIT_TIMEOUT)
                continue
            return st.with_plugin(call.name)
        if timeouts:
            uid = (pod.get("metadata") or {}).get("uid", "")
            self.waiting_pods[uid] = WaitingPod(pod, timeouts, asyncio.get_running_loop())
            return Status(Code.WAIT, "one or more plugins asked to wait and no plugin rejected pod")
        return None

    async def wait_on_permit(self, pod: Pod) -> Status | None:
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

    async def run_pre_bind(self, state: CycleState, pod: Pod, node: str) -> Status | None:
        call: _Call
        for call in self._entries("preBind"):
            try:
                st = await _maybe_await(call.fn(state, pod, node))
            except Exception as e:
                log.exception("PreBind plugin %s failed", call.name)
                st = Status.as_status(e)
            if st is not None and st.code != Code.SUCCESS:
                if st.is_rejected:
                    return st.with_plugin(call.name)
                return Status(Code.ERROR, f'running PreBind plugin "{call.name}": {st.message()}',
                              plugin=call.name)
        return None

    async def run_bind(self, state: CycleState, pod: Pod, node: str) -> Status | None:
        binders: list[_Call] = self._entries("bind")
        if not binders:
            return Status(Code.SKIP)
        for call in binders:
            try:
                st = await _maybe_await(call.fn(state, pod, node))
            except Exception as e:
                log.exception("Bind plugin %s failed", call.name)
                st = Status.as_status(e)
            if st is not None and st.is_skip:
                continue
            if st is not None and st.code != Code.SUCCESS:
                if st.is_rejected:
                    return st.with_plugin(call.name)
                return Status(Code.ERROR, f'running Bind plugin "{call.name}": {st.message()}',
                              plugin=call.name)
            return st
        return Status(Code.SKIP)

    def run_post_bind(self, state: CycleState, pod: Pod, node: str) -> None:
        call: _Call
        for call in self._entries("postBind"):
            try:
                call.fn(state, pod, node)
            except Exception:
                log.exception("PostBind plugin %s failed", call.name)


class _PluginError(Exception):
    def __init__(self, status: Status):
        super().__init__(status.message())
        self.status = status


async def _maybe_await(value: MaybeAwaitable) -> Status | None:
    if inspect.isawaitable(value):
        return await value
    return value


def go_duration(seconds: float) -> str:
    """Go's ``time.Duration.String``: 300 -> "5m0s", 10 -> "10s", 1.5 -> "1.5s", 0.5 -> "500ms"."""
    return format_go_duration(seconds)


def _priority(pod: Pod) -> int:
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
    out: np.ndarray = max_priority * scores // highest
    return max_priority - out if reverse else out


# the names plugins and the scheduler have always imported from here
__all__ = [
    "ASSIGNED_POD", "CODE_NAMES", "EVENT_ASSIGNED_POD_DELETE", "EVENT_NODE_ADD",
    "EVENT_UNSCHEDULABLE_TIMEOUT", "EXTENSION_POINTS", "MAX_CUSTOM_PRIORITY_SCORE",
    "MAX_NODE_SCORE", "MAX_PERMIT_TIMEOUT", "MIN_NODE_SCORE", "NODE", "NO_NODE_AVAILABLE_MSG",
    "POD", "QUEUE", "QUEUE_SKIP", "WILDCARD", "ActionType", "ClusterEvent", "ClusterEventWithHint",
    "Code", "CycleState", "Diagnosis", "FilterResult", "FitError", "Framework", "Handle",
    "NodeFilterRecord", "NodeInfo", "NodeSet", "Plugin", "PluginFactory", "PluginStatusError",
    "PostFilterResult", "PreFilterResult", "QueueingHintFn", "Status", "WaitingPod",
    "default_normalize_score", "go_duration", "implements", "is_success",
]
