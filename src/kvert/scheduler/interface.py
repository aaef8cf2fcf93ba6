"""The contracts of the scheduling framework's extension points (``framework/interface.go``).

One :class:`typing.Protocol` per method kvert's framework calls. A plugin is any object with
a ``name`` and some of these methods; it implements an extension point when it has one of
the point's methods (:data:`POINT_METHODS`: Filter is ``filter`` *or* ``filter_node``).
``None`` as a Status means Success, as a nil ``*Status`` does in Go. ``pod`` is always the
Pod object (a dict), ``nodes`` a :class:`~kvert.scheduler.snapshot.NodeSet` whose ``cache``
is read through :class:`~kvert.scheduler.reader.NodeCacheReader`, ``node`` a node's name
(the Node object in PreFilterExtensions).

**Dispatch.** The framework does not ``isinstance``-check these Protocols: it looks a plugin's
methods up by name once, when it is built (and again only if a profile's plugin list for a
point is replaced), through :data:`METHOD_PROTOCOLS` -- the explicit registry of which
method belongs to which contract -- and then calls the bound methods it found. The hot paths
(Filter and Score over thousands of nodes) never look anything up.

**Conformance.** :func:`check_plugin` compares every extension-point method a plugin defines
with its Protocol's signature (parameter names and count) and reports methods whose name is
a near miss of one (``fliter``), which the framework would otherwise silently never call.
The framework calls methods positionally, so it does not enforce the names; the conformance
test holds every registered plugin to them.
"""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol

import numpy as np

from kvert.scheduler.cyclestate import CycleState
from kvert.scheduler.events import ClusterEventWithHint
from kvert.scheduler.nodeinfo import NodeInfo
from kvert.scheduler.queue import QueuedPodInfo
from kvert.scheduler.reader import NodeCacheReader, PodListener
from kvert.scheduler.results import Diagnosis, FilterResult, PostFilterResult, PreFilterResult
from kvert.scheduler.snapshot import NodeSet
from kvert.scheduler.status import Status

Pod = dict[str, Any]
# PreBind and Bind may be coroutines (they call the API); the framework awaits what they return
MaybeAwaitable = Status | None | Awaitable[Status | None]


class QueueSortPlugin(Protocol):
    """QueueSort: orders the active queue; exactly one per scheduler (every profile the same)."""

    name: str

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        """Whether ``a`` is popped before ``b``. Must not change either."""


class QueueSortKeyPlugin(Protocol):
    """QueueSort as a key (kvert's faster form, preferred over ``less`` when both exist)."""

    name: str

    def sort_key(self, qpi: QueuedPodInfo) -> tuple[Any, ...]:
        """A key whose ascending order is the queue's order; it is computed once per push."""


class PreEnqueuePlugin(Protocol):
    """PreEnqueue: runs before a pod enters the active queue, and again when the pod changes.

    It must not change the pod. Success lets it in; any other status keeps it gated (waiting
    without backoff) until an update of the pod lets every PreEnqueue plugin pass."""

    name: str

    def pre_enqueue(self, pod: Pod) -> Status | None:
        """None (Success) admits the pod to the active queue."""


class PreFilterPlugin(Protocol):
    """PreFilter: runs once per scheduling cycle before Filter, over all nodes.

    It may write the plugin's state into ``state`` (Filter and the PreFilterExtensions read
    it) and must not change the pod or the cache. It returns ``(result, status)``: a
    :class:`PreFilterResult` naming nodes restricts the nodes filtered (results of several
    plugins are intersected; None means all); a Skip status disables this plugin's Filter for
    the cycle; a rejection or an Error fails the cycle with that status."""

    name: str

    def pre_filter(self, state: CycleState, pod: Pod, nodes: NodeSet
                   ) -> tuple[PreFilterResult | None, Status | None]:
        """``(node restriction or None, status)``."""


class PreFilterExtensions(Protocol):
    """PreFilterExtensions: keep a PreFilter state right when a cycle evaluates "as if" other
    pods were added to or removed from a node (nominated pods, preemption victims).

    They update only the plugin's entry in ``state`` (a clone: the cycle's own state is not
    touched) and never the cache; they are not called when this plugin's Filter was skipped.
    Any status but Success is an Error of the cycle."""

    name: str

    def pre_filter_add_pod(self, state: CycleState, pod: Pod, other: Pod,
                           node: dict[str, Any]) -> Status | None:
        """``other`` now counts on ``node`` (the Node object) for ``pod``'s cycle."""

    def pre_filter_remove_pod(self, state: CycleState, pod: Pod, other: Pod,
                              node: dict[str, Any]) -> Status | None:
        """``other`` no longer counts on ``node``."""


class FilterPlugin(Protocol):
    """Filter, vectorized (kvert's form): runs once per cycle over a whole NodeSet.

    Filter plugins run in the configured order, each over the nodes all earlier ones passed,
    so a node reports the first plugin that rejected it. A Filter may read ``state`` and the
    cache (through ``nodes.cache``) and must change neither. It returns one code per node
    (0: passes; Unschedulable or UnschedulableAndUnresolvable) with the reasons. Raising
    :class:`~kvert.scheduler.status.PluginStatusError` fails the cycle with an Error."""

    name: str

    def filter(self, state: CycleState, pod: Pod, nodes: NodeSet) -> FilterResult:
        """The verdict for every node of ``nodes``, positions aligned with its rows."""


class NodeFilterPlugin(Protocol):
    """Filter, one node at a time (``FilterPlugin.Filter``): the slow path for a plugin that
    cannot vectorize; the framework loops over the nodes for it. Same rules as
    :class:`FilterPlugin`; an Error status fails the cycle."""

    name: str

    def filter_node(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """None if the pod fits the node, else why not."""


class PostFilterPlugin(Protocol):
    """PostFilter: runs only when no node passed Filter (preemption lives here).

    It may act on the cluster (evict victims, through the handle's client, outside the
    cycle) and returns ``(result, status)``: Success with a nominated node ends PostFilter;
    Unschedulable lets the next plugin try (its message goes into the FailedScheduling
    event); UnschedulableAndUnresolvable or Error stops."""

    name: str

    def post_filter(self, state: CycleState, pod: Pod, diagnosis: Diagnosis
                    ) -> tuple[PostFilterResult | None, Status | None]:
        """``(nomination or None, status)``."""


class PreScorePlugin(Protocol):
    """PreScore: runs once per cycle over the feasible nodes, before Score.

    It may write the plugin's scoring state into ``state``. Skip disables this plugin's Score
    for the cycle; any other non-success fails the cycle."""

    name: str

    def pre_score(self, state: CycleState, pod: Pod, nodes: NodeSet) -> Status | None:
        """None, Skip, or the failure."""


class ScorePlugin(Protocol):
    """Score, vectorized: runs once per cycle over the feasible nodes.

    Reads ``state`` and the cache; changes neither. Returns one integer per node (raw: the
    plugin's ScoreExtensions, if any, normalize them); after normalizing every score must lie
    in [MIN_NODE_SCORE, MAX_NODE_SCORE], then it is multiplied by the plugin's weight."""

    name: str

    def score(self, state: CycleState, pod: Pod, nodes: NodeSet) -> np.ndarray:
        """int64 scores aligned with ``nodes``."""


class NodeScorePlugin(Protocol):
    """Score one node at a time (``ScorePlugin.Score``): the slow path, looped by the framework."""

    name: str

    def score_node(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        """The node's raw score."""


class ScoreExtensions(Protocol):
    """NormalizeScore: runs right after the plugin's Score, over the same nodes.

    Returns the normalized scores (a new array, or None to keep ``scores`` as they are)."""

    name: str

    def normalize_score(self, state: CycleState, pod: Pod, nodes: NodeSet,
                        scores: np.ndarray) -> np.ndarray | None:
        """Scores in [MIN_NODE_SCORE, MAX_NODE_SCORE], aligned with ``nodes``."""


class ReservePlugin(Protocol):
    """Reserve / Unreserve: the chosen node is about to be assumed for the pod.

    ``reserve`` may claim resources in the plugin's own bookkeeping (the cache already counts
    the pod on the node); a non-success status fails the cycle and every Reserve plugin's
    ``unreserve`` runs, in reverse order. ``unreserve`` must undo ``reserve`` and be
    idempotent: it also runs when a later point (Permit, PreBind, Bind) fails. kvert lets a
    plugin have ``reserve`` without ``unreserve``."""

    name: str

    def reserve(self, state: CycleState, pod: Pod, node: str) -> Status | None:
        """None (Success) keeps the reservation."""

    def unreserve(self, state: CycleState, pod: Pod, node: str) -> None:
        """Undo ``reserve``; errors are logged, never raised to the scheduler."""


class PermitPlugin(Protocol):
    """Permit: the last check of the scheduling cycle, before binding starts.

    Returns ``(status, timeout)``: Success approves; a rejection fails the attempt; Wait parks
    the pod until the plugin (or another, through the framework's waiting pods) allows or
    rejects it, or ``timeout`` seconds (capped at 15 minutes) pass."""

    name: str

    def permit(self, state: CycleState, pod: Pod, node: str) -> tuple[Status | None, float]:
        """``(status, seconds to wait if Wait)``."""


class PreBindPlugin(Protocol):
    """PreBind: runs in the binding cycle before Bind (may be a coroutine).

    It may make API calls the binding depends on (claims, volumes). A rejection fails the
    binding as Unschedulable; any other non-success as an Error."""

    name: str

    def pre_bind(self, state: CycleState, pod: Pod, node: str) -> MaybeAwaitable:
        """None (Success) lets binding proceed."""


class BindPlugin(Protocol):
    """Bind: binds the pod to the node (may be a coroutine); the first that does not Skip wins.

    Skip passes the pod to the next Bind plugin; a rejection or Error fails the binding."""

    name: str

    def bind(self, state: CycleState, pod: Pod, node: str) -> MaybeAwaitable:
        """None (bound), Skip, or the failure."""


class PostBindPlugin(Protocol):
    """PostBind: informational, after a successful bind; must not fail (errors are logged)."""

    name: str

    def post_bind(self, state: CycleState, pod: Pod, node: str) -> None:
        """Clean-up after binding."""


class EnqueueExtensions(Protocol):
    """EnqueueExtensions: which cluster events may make a pod this plugin rejected schedulable.

    Asked once, when the scheduler starts. Each event may carry a queueing hint
    ``hint(pod, old, new)`` -> QUEUE / QUEUE_SKIP. A plugin without this method is sent
    every event, as in Kubernetes."""

    name: str

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """The events (with hints) to requeue this plugin's rejected pods on."""


# The registry the framework dispatches by: method name -> the contract it belongs to.
METHOD_PROTOCOLS: dict[str, type] = {
    "less": QueueSortPlugin,
    "sort_key": QueueSortKeyPlugin,
    "pre_enqueue": PreEnqueuePlugin,
    "pre_filter": PreFilterPlugin,
    "pre_filter_add_pod": PreFilterExtensions,
    "pre_filter_remove_pod": PreFilterExtensions,
    "filter": FilterPlugin,
    "filter_node": NodeFilterPlugin,
    "post_filter": PostFilterPlugin,
    "pre_score": PreScorePlugin,
    "score": ScorePlugin,
    "score_node": NodeScorePlugin,
    "normalize_score": ScoreExtensions,
    "reserve": ReservePlugin,
    "unreserve": ReservePlugin,
    "permit": PermitPlugin,
    "pre_bind": PreBindPlugin,
    "bind": BindPlugin,
    "post_bind": PostBindPlugin,
    "events_to_register": EnqueueExtensions,
}

# Extension point (as a configuration names it) -> the methods any one of which implements it.
POINT_METHODS: dict[str, tuple[str, ...]] = {
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
EXTENSION_POINTS: tuple[str, ...] = tuple(POINT_METHODS)

# a public method this close to an extension-point method's name is taken for a misspelling
_MISSPELLING_CUTOFF = 0.8


def method_of(plugin: object, method: str) -> Callable[..., Any] | None:
    """The plugin's bound ``method`` if it has a callable one (what the framework calls)."""
    fn = getattr(plugin, method, None)
    return fn if callable(fn) else None


def implements(plugin: object, point: str) -> bool:
    """Whether ``plugin`` has one of the extension point's methods."""
    return any(method_of(plugin, m) is not None for m in POINT_METHODS[point])


def _parameters(fn: Callable[..., Any]) -> list[str]:
    return list(inspect.signature(fn).parameters)


def _contract_parameters(method: str) -> list[str]:
    unbound = getattr(METHOD_PROTOCOLS[method], method)
    return _parameters(unbound)[1:]      # without self


def _own_methods(plugin: object) -> dict[str, object]:
    """Public callables the plugin's classes define (not ``object``'s), name -> attribute."""
    out: dict[str, object] = {}
    for klass in reversed(type(plugin).__mro__[:-1]):
        for attr, value in vars(klass).items():
            if not attr.startswith("_") and callable(value):
                out[attr] = value
    return out


def check_plugin(plugin: object) -> list[str]:
    """What is wrong with ``plugin`` against the contracts (empty: it conforms).

    Reported: a missing ``name``; an extension-point method whose parameters differ from its
    Protocol's (names and count); a public method whose name is a near miss of an
    extension-point method (it would never be called); no extension-point method at all."""
    problems: list[str] = []
    label = getattr(plugin, "name", "") or type(plugin).__name__
    name = getattr(plugin, "name", None)
    if not isinstance(name, str) or not name:
        problems.append(f"{label}: has no name")
    found = 0
    for method in METHOD_PROTOCOLS:
        fn = method_of(plugin, method)
        if fn is None:
            continue
        found += 1
        want, got = _contract_parameters(method), _parameters(fn)
        if want != got:
            problems.append(f"{label}.{method}({', '.join(got)}): the "
                            f"{METHOD_PROTOCOLS[method].__name__} contract is "
                            f"{method}({', '.join(want)})")
    for attr in _own_methods(plugin):
        if attr in METHOD_PROTOCOLS:
            continue
        near = difflib.get_close_matches(attr, METHOD_PROTOCOLS, n=1, cutoff=_MISSPELLING_CUTOFF)
        if near:
            problems.append(f"{label}.{attr}: not an extension point; did you mean {near[0]}?")
    if not found:
        problems.append(f"{label}: implements no extension point")
    return problems


def check_plugins(plugins: Sequence[object]) -> list[str]:
    """:func:`check_plugin` over several plugins."""
    return [problem for p in plugins for problem in check_plugin(p)]


__all__ = ["EXTENSION_POINTS", "METHOD_PROTOCOLS", "POINT_METHODS", "BindPlugin",
           "EnqueueExtensions", "FilterPlugin", "MaybeAwaitable", "NodeCacheReader",
           "NodeFilterPlugin", "NodeScorePlugin", "PermitPlugin", "Pod", "PodListener",
           "PostBindPlugin", "PostFilterPlugin", "PreBindPlugin", "PreEnqueuePlugin",
           "PreFilterExtensions", "PreFilterPlugin", "PreScorePlugin", "QueueSortKeyPlugin",
           "QueueSortPlugin", "ReservePlugin", "ScoreExtensions", "ScorePlugin", "check_plugin",
           "check_plugins", "implements", "method_of"]
