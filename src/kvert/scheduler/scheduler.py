"""The scheduler: informers -> queue -> scheduling cycle -> binding cycle (``schedule_one.go``).

``Scheduler(client, clock, config=None, *, name="default-scheduler")``; ``await run()`` until
``stop()``. It watches nodes and (non-terminal) pods: assigned pods feed the node cache,
unassigned pods whose ``spec.schedulerName`` is one of its profiles feed the queue.

One pod at a time, the **scheduling cycle** (synchronous, so the cache cannot change under
it) runs PreFilter, Filter over every node at once (numpy), stops once enough feasible nodes
are found (``percentageOfNodesToScore``: adaptive 50 - nodes/125 %, at least 5 % and 100
nodes, walking the nodes round-robin from where the last cycle stopped), runs PreScore,
Score and NormalizeScore on the feasible ones, picks the highest weighted total (ties at
random), assumes the pod on that node in the cache and runs Reserve and Permit. The
**binding cycle** then runs as its own task (waiting on Permit, PreBind, Bind, PostBind), so
the next pod's scheduling cycle does not wait for the API server.

What users see, as kube-scheduler does it:

* success: event ``Normal Scheduled "Successfully assigned <ns>/<pod> to <node>"``, and the
  binding sets ``spec.nodeName`` and the PodScheduled condition;
* no fit: event ``Warning FailedScheduling "0/3 nodes are available: ..."`` and condition
  ``PodScheduled=False``, reason ``Unschedulable``, the same message (reason
  ``SchedulerError`` for errors); the pod waits in the queue until a cluster event may help;
* always: the explanation annotation ``explain.kvert.io/scheduling`` (see ``explain.py``).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kvert.api.errors import ApiError
from kvert.api.features import enabled, parse_feature_gates
from kvert.api.meta import format_time
from kvert.client import Informer
from kvert.client.base import Client
from kvert.client.cache import InformerFactory
from kvert.client.events import EventRecorder
from kvert.clock.base import Clock
from kvert.scheduler import explain
from kvert.scheduler.algorithm import (
    ERR_NO_NODES_AVAILABLE,
    NoNodes,
    ScheduleResult,
    SchedulingAlgorithm,
)
from kvert.scheduler.cache import NodeCache, pod_key, pod_uid, without_pod_level_resources
from kvert.scheduler.config import SchedulerConfig, build_framework, load_config
from kvert.scheduler.deferred import GATE as RESIZE_PREEMPTION_GATE
from kvert.scheduler.deferred import wants_resize_preemption
from kvert.scheduler.framework import (
    ASSIGNED_POD,
    EVENT_ASSIGNED_POD_DELETE,
    EVENT_NODE_ADD,
    NODE,
    POD,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    Diagnosis,
    FitError,
    Framework,
    Handle,
    Status,
    _PluginError,
    is_success,
)
from kvert.scheduler.interface import method_of
from kvert.scheduler.listers import InformerListers
from kvert.scheduler.plugins.defaultbinder import ANNOTATIONS_SENT, BINDING_ANNOTATIONS
from kvert.scheduler.plugins.gangscheduling import WORKLOAD, WorkloadManager, workload_ref
from kvert.scheduler.queue import QueuedPodInfo, SchedulingQueue

log = logging.getLogger(__name__)



@dataclass
class SchedulerStats:
    attempts: int = 0
    scheduled: int = 0
    unschedulable: int = 0
    errors: int = 0
    bind_failures: int = 0
    extra: dict = field(default_factory=dict)


def _spec(obj: dict | None) -> dict:
    return (obj or {}).get("spec") or {}


def _assigned(pod: dict | None) -> bool:
    return bool(_spec(pod).get("nodeName"))


def node_update_action(old: dict, new: dict) -> ActionType:
    """Which node fields changed (``nodeSchedulingPropertiesChange``)."""
    action = ActionType(0)
    os_, ns_ = old.get("status") or {}, new.get("status") or {}
    if os_.get("allocatable") != ns_.get("allocatable"):
        action |= ActionType.UPDATE_NODE_ALLOCATABLE
    om, nm = old.get("metadata") or {}, new.get("metadata") or {}
    if om.get("labels") != nm.get("labels"):
        action |= ActionType.UPDATE_NODE_LABEL
    if _spec(old).get("taints") != _spec(new).get("taints") or \
            bool(_spec(old).get("unschedulable")) != bool(_spec(new).get("unschedulable")):
        action |= ActionType.UPDATE_NODE_TAINT
    if [(c.get("type"), c.get("status")) for c in os_.get("conditions") or []] != \
            [(c.get("type"), c.get("status")) for c in ns_.get("conditions") or []]:
        action |= ActionType.UPDATE_NODE_CONDITION
    if om.get("annotations") != nm.get("annotations"):
        action |= ActionType.UPDATE_NODE_ANNOTATION
    if os_.get("declaredFeatures") != ns_.get("declaredFeatures"):
        action |= ActionType.UPDATE_NODE_DECLARED_FEATURE
    if _spec(old).get("podPreemptionPolicy") != _spec(new).get("podPreemptionPolicy"):
        action |= ActionType.UPDATE_NODE_PREEMPTION_POLICY
    return action


def assigned_pod_update_action(old: dict, new: dict) -> ActionType:
    """Which scheduling properties of a bound pod changed (``PodSchedulingPropertiesChange``;
    the requests are compared by the cache)."""
    action = ActionType(0)
    if (old.get("metadata") or {}).get("labels") != (new.get("metadata") or {}).get("labels"):
        action |= ActionType.UPDATE_POD_LABEL
    if _spec(old).get("tolerations") != _spec(new).get("tolerations"):
        action |= ActionType.UPDATE_POD_TOLERATION
    return action


POD_LEVEL_RESOURCES_GATE = "PodLevelResources"

# an unscheduled pod appeared (a gang waits for its members)
EVENT_UNSCHEDULED_POD_ADD = ClusterEvent(POD, ActionType.ADD, "UnscheduledPodAdd")


def _queue_order(plugin: object) -> Callable[[QueuedPodInfo], tuple[Any, ...]]:
    """The active queue's key from the QueueSort plugin: its ``sort_key``, else its ``less``
    as a comparison (ties broken by arrival)."""
    sort_key = method_of(plugin, "sort_key")
    if sort_key is not None:
        return sort_key
    less = method_of(plugin, "less")
    assert less is not None   # build_framework takes only a plugin implementing queueSort
    cmp = functools.cmp_to_key(lambda a, b: -1 if less(a, b) else (1 if less(b, a) else 0))
    return lambda q: (cmp(q), q.seq)


class Scheduler:
    def __init__(self, client: Client, clock: Clock, config: Any = None, *,
                 name: str = "default-scheduler", explain_annotations: bool = True,
                 seed: int | None = None, pop_from_backoff: bool = True,
                 max_unschedulable_seconds: float = 300.0,
                 informers: InformerFactory | None = None,
                 gates: Mapping[str, bool] | None = None):
        self.client = client
        self.clock = clock
        self.name = name
        # kube-scheduler's --feature-gates: the gates of kvert.api.features.GATES, their
        # defaults when unset (an unknown name raises FeatureGateError)
        self.gates: dict[str, bool] = parse_feature_gates(dict(gates or {}))
        self.config: SchedulerConfig = load_config(config, default_name=name)
        self.cache = NodeCache()
        self.cache.pod_level_resources = enabled(self.gates, POD_LEVEL_RESOURCES_GATE)
        self.explain_annotations = explain_annotations
        self.frameworks: dict[str, Framework] = {}
        self.recorders: dict[str, EventRecorder] = {}
        self._own_informers = informers is None
        self.informers = informers if informers is not None else InformerFactory(client, clock)
        self.listers = InformerListers(self.informers)
        # the pods of every Workload pod group, for GangScheduling (fed by the pod handlers)
        self.workloads = WorkloadManager()
        for profile in self.config.profiles:
            recorder = EventRecorder(client, clock, component=profile.scheduler_name)
            handle = Handle(self.cache, client, clock, recorder, self.listers, self._spawn,
                            activate=lambda pods: self.queue.activate(pods),
                            workload_manager=self.workloads, gates=self.gates)
            fw = build_framework(profile, handle)
            if fw.percentage_of_nodes_to_score is None:
                fw.percentage_of_nodes_to_score = self.config.percentage_of_nodes_to_score
            self.frameworks[profile.scheduler_name] = fw
            self.recorders[profile.scheduler_name] = recorder
        first = next(iter(self.frameworks.values()))
        sort_key = _queue_order(first.queue_sort)
        self._events: dict[str, dict[str, list[ClusterEventWithHint]]] = {
            n: fw.events_to_register() for n, fw in self.frameworks.items()}
        self.queue = SchedulingQueue(
            clock, sort_key=sort_key, pre_enqueue=self._pre_enqueue, events_for=self._events_for,
            initial_backoff=self.config.pod_initial_backoff_seconds,
            max_backoff=self.config.pod_max_backoff_seconds,
            max_unschedulable_seconds=max_unschedulable_seconds,
            pop_from_backoff=pop_from_backoff)
        self.stats = SchedulerStats()
        self.synced = asyncio.Event()
        self._stop_event = asyncio.Event()
        self.algorithm = SchedulingAlgorithm(self.cache, random.Random(seed))
        self._tasks: set[asyncio.Task] = set()
        self._stopped = False
        self._node_informer: Informer | None = None
        self._pod_informer: Informer | None = None
        self._ns_informer: Informer | None = None

    # ---- profiles ---------------------------------------------------------------------------

    def framework_for(self, pod: dict) -> Framework | None:
        return self.frameworks.get(_spec(pod).get("schedulerName") or "default-scheduler")

    def responsible_for(self, pod: dict) -> bool:
        return self.framework_for(pod) is not None

    def _pre_enqueue(self, pod: dict) -> Status | None:
        fw = self.framework_for(pod)
        return None if fw is None else fw.run_pre_enqueue(pod)

    def _events_for(self, pod: dict) -> dict[str, list[ClusterEventWithHint]]:
        return self._events.get(_spec(pod).get("schedulerName") or "default-scheduler", {})

    # ---- running ------------------------------------------------------------------------------

    async def run(self) -> None:
        """Watch, then schedule until :meth:`stop`.

        Nodes and namespaces come from the shared informers (as the listers' objects do);
        pods from an informer of their own that leaves out finished pods, as kube-scheduler's."""
        self._node_informer = self.informers.informer("nodes")
        self._ns_informer = self.informers.informer("namespaces")
        self._pod_informer = Informer(self.client, "pods", clock=self.clock,
                                      field_selector="status.phase!=Succeeded,status.phase!=Failed")
        self._node_informer.add_handlers(self.on_node_add, self.on_node_update, self.on_node_delete)
        self._pod_informer.add_handlers(self.on_pod_add, self.on_pod_update, self.on_pod_delete)
        self._ns_informer.add_handlers(self.cache.set_namespace,
                                       lambda old, new: self.cache.set_namespace(new),
                                       self.cache.remove_namespace)
        self.informers.start()
        informers = [asyncio.ensure_future(self._pod_informer.run())]
        try:
            if not await self._wait_synced(self._ns_informer, self._node_informer, self._pod_informer):
                return
            self.synced.set()
            while not self._stopped:
                qpi = await self.queue.pop()
                if qpi is None:
                    break
                try:
                    self.schedule_one(qpi)
                except Exception:
                    log.exception("scheduling %s failed unexpectedly", qpi.key)
                    self.queue.add_unschedulable_if_not_present(qpi, error=True)
                # let informers and binding cycles run between pods
                await asyncio.sleep(0)
        finally:
            self._pod_informer.stop()
            if self._own_informers:
                self.informers.stop()
            for t in informers:
                t.cancel()
            for t in list(self._tasks):
                t.cancel()
            await asyncio.gather(*informers, *self._tasks, return_exceptions=True)

    async def _wait_synced(self, *informers: Informer) -> bool:
        """The informers have listed, in order (True), or :meth:`stop` came first (False)."""
        async def synced() -> None:
            await self.listers.start()
            self._watch_listed_kinds()
            for informer in informers:
                await informer.wait_synced()
        waiting = asyncio.ensure_future(synced())
        stopping = asyncio.ensure_future(self._stop_event.wait())
        await asyncio.wait({waiting, stopping}, return_when=asyncio.FIRST_COMPLETED)
        for t in (waiting, stopping):
            t.cancel()
        failure = waiting.exception() if waiting.done() and not waiting.cancelled() else None
        if failure is not None:
            raise failure
        return not self._stopped

    def _watch_listed_kinds(self) -> None:
        """Cluster events from what the listers watch: Workloads (gangs) and the DRA objects
        (a new device, a claim allocated or released) may make waiting pods schedulable."""
        def handlers(kind: str, actions: ActionType) -> tuple:
            def add(obj: dict) -> None:
                self.queue.move_all_to_active_or_backoff(
                    ClusterEvent(kind, ActionType.ADD, f"{kind}Add"), None, obj)

            def update(old: dict, new: dict) -> None:
                self.queue.move_all_to_active_or_backoff(
                    ClusterEvent(kind, ActionType.UPDATE, f"{kind}Update"), old, new)

            def delete(obj: dict) -> None:
                self.queue.move_all_to_active_or_backoff(
                    ClusterEvent(kind, ActionType.DELETE, f"{kind}Delete"), obj, None)
            return (add if actions & ActionType.ADD else None,
                    update if actions & ActionType.UPDATE else None,
                    delete if actions & ActionType.DELETE else None)
        for resource, kind, actions in (
                ("workloads", WORKLOAD, ActionType.ADD),
                ("resourceclaims", "ResourceClaim", ActionType.ALL),
                ("resourceslices", "ResourceSlice", ActionType.ALL),
                ("deviceclasses", "DeviceClass", ActionType.ADD | ActionType.UPDATE)):
            informer = self.listers.informer(resource)
            if informer is not None:
                informer.add_handlers(*handlers(kind, actions))

    def stop(self) -> None:
        self._stopped = True
        self._stop_event.set()
        self.queue.close()
        if self._pod_informer is not None:
            self._pod_informer.stop()
        if self._own_informers:
            self.informers.stop()

    def _spawn(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def wait_idle(self) -> None:
        """Wait until no binding cycle or API write of the scheduler is in progress."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    # ---- informer handlers -----------------------------------------------------------------

    def on_node_add(self, node: dict) -> None:
        self.cache.add_node(node)
        self.queue.move_all_to_active_or_backoff(EVENT_NODE_ADD, None, node)

    def on_node_update(self, old: dict, new: dict) -> None:
        self.cache.update_node(old, new)
        action = node_update_action(old, new)
        if action:
            self.queue.move_all_to_active_or_backoff(ClusterEvent(NODE, action), old, new)

    def on_node_delete(self, node: dict) -> None:
        self.cache.remove_node(node)

    def on_pod_add(self, pod: dict) -> None:
        if workload_ref(pod) is not None:
            self.workloads.add_pod(pod)
        if _assigned(pod):
            self.cache.delete_nominated(pod)
            self.cache.add_pod(pod)
            self.queue.delete(pod)
            self.queue.move_all_to_active_or_backoff(
                ClusterEvent(ASSIGNED_POD, ActionType.ADD, "AssignedPodAdd"), None, pod)
            # a scheduler (re)starting picks up the Deferred resizes waiting for preemption
            if self._queues_deferred_resize(pod):
                self.queue.add(pod)
        elif self.responsible_for(pod) and not (pod.get("metadata") or {}).get("deletionTimestamp"):
            self.cache.update_nominated(None, pod)
            self.queue.add(pod)
            self.queue.move_all_to_active_or_backoff(EVENT_UNSCHEDULED_POD_ADD, None, pod)

    def on_pod_update(self, old: dict, new: dict) -> None:
        if workload_ref(new) is not None:
            self.workloads.update_pod(old, new)
        if _assigned(new):
            if not _assigned(old):
                # bound: for the queue it is an assigned pod that appeared
                self.queue.delete(new)
                self.cache.delete_nominated(new)
                self.cache.update_pod(old, new)
                self.queue.move_all_to_active_or_backoff(
                    ClusterEvent(ASSIGNED_POD, ActionType.ADD, "AssignedPodAdd"), None, new)
                return
            change = self.cache.update_pod(old, new)
            action = assigned_pod_update_action(old, new)
            if change is not None:
                before, after = change
                if any(after.get(r, 0) < v for r, v in before.items()):
                    action |= ActionType.UPDATE_POD_SCALE_DOWN
                if self.resize_preemption and any(v > before.get(r, 0) for r, v in after.items()):
                    action |= ActionType.UPDATE_POD_SCALE_UP
            if action:
                self.queue.move_all_to_active_or_backoff(
                    ClusterEvent(ASSIGNED_POD, action, "AssignedPodUpdate"), old, new)
            # the cache first, then the queue (KEP-5836): a Deferred resize joins the queue,
            # one no longer Deferred (applied, reverted) or not to preempt for leaves it
            if self._queues_deferred_resize(new):
                self.queue.update(old, new)
            elif self.resize_preemption:
                self.queue.delete(new)
        elif self.responsible_for(new):
            self.cache.update_nominated(old, new)
            self.queue.update(old, new)
        else:
            self.cache.delete_nominated(new)
            self.queue.delete(new)

    def on_pod_delete(self, pod: dict) -> None:
        uid = (pod.get("metadata") or {}).get("uid", "")
        for fw in self.frameworks.values():
            fw.reject_waiting_pod(uid, message="pod deleted")
        self.cache.delete_nominated(pod)
        self.workloads.delete_pod(pod)
        entry = self.cache.pods.get(pod_uid(pod))
        # an assumed pod whose binding is still running is forgotten when the binding fails
        if entry is not None and (not entry.assumed or entry.binding_finished):
            self.cache.remove_pod(pod)
            self.queue.move_all_to_active_or_backoff(EVENT_ASSIGNED_POD_DELETE, pod, None)
        self.queue.delete(pod)

    @property
    def resize_preemption(self) -> bool:
        """KEP-5836: preempt for Deferred in-place resizes (InPlacePodVerticalScalingSchedulerPreemption)."""
        return enabled(self.gates, RESIZE_PREEMPTION_GATE)

    def _queues_deferred_resize(self, pod: dict) -> bool:
        return self.resize_preemption and self.responsible_for(pod) and wants_resize_preemption(pod)

    # ---- the scheduling cycle ----------------------------------------------------------------

    def _skip(self, pod: dict) -> bool:
        if (pod.get("metadata") or {}).get("deletionTimestamp"):
            return True
        if _assigned(pod):
            return not self._queues_deferred_resize(pod)
        return self.cache.is_assumed(pod)

    def schedule_one(self, qpi: QueuedPodInfo) -> None:
        """One scheduling cycle for ``qpi``; starts its binding cycle on success."""
        pod = qpi.pod
        fw = self.framework_for(pod)
        if fw is None or self._skip(pod):
            self.queue.done(qpi)
            return
        self.stats.attempts += 1
        state = CycleState()
        if _assigned(pod):
            self._deferred_resize_cycle(fw, state, qpi)
            return
        # the PodLevelResources gate off: spec.resources is not counted (SkipPodLevelResources)
        counted = pod if self.cache.pod_level_resources else without_pod_level_resources(pod)
        try:
            result = self.schedule_pod(fw, state, counted)
        except FitError as fit:
            post = None
            if fw.points.get("postFilter"):
                post, st = fw.run_post_filter(state, counted, fit.diagnosis)
                if st is not None and st.message():
                    fit.diagnosis.post_filter_msg = st.message()
                if st is not None and st.code == Code.ERROR:
                    log.error("PostFilter for %s failed: %s", qpi.key, st.message())
            status = Status(Code.UNSCHEDULABLE, str(fit))
            status.plugin = ""
            # a result with no node clears a nomination; no result leaves it
            nominating = post.nominated_node_name if post is not None else None
            self._failure(fw, state, qpi, status, fit.diagnosis, fit.num_all_nodes,
                          nominating=nominating, victims=post.victims if post else None)
            return
        except _PluginError as e:
            self._failure(fw, state, qpi, e.status, None, len(self.cache), nominating="")
            return
        except NoNodes:
            self._failure(fw, state, qpi, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                                                 ERR_NO_NODES_AVAILABLE), None, 0, nominating="")
            return

        self.cache.delete_nominated(pod)
        assumed = self.cache.assume_pod(pod, result.node)
        st = fw.run_reserve(state, assumed, result.node)
        if st is not None and not st.is_success:
            fw.run_unreserve(state, assumed, result.node)
            self.cache.forget_pod(assumed)
            self._failure(fw, state, qpi, st, None, len(self.cache), result)
            return
        st = fw.run_permit(state, assumed, result.node)
        if st is not None and not st.is_success and not st.is_wait:
            fw.run_unreserve(state, assumed, result.node)
            self.cache.forget_pod(assumed)
            self._failure(fw, state, qpi, st, None, len(self.cache), result)
            return
        explanation = self._explain(
            fw, state, pod, result="Scheduled", attempt=qpi.attempts, now=self.clock.now(),
            node=result.node, total_nodes=result.diagnosis.num_all_nodes,
            evaluated=result.evaluated, feasible=result.feasible, diagnosis=result.diagnosis,
            scored_rows=result.scored_rows, per_plugin=result.per_plugin, total=result.total)
        if explanation is not None:
            state.write(BINDING_ANNOTATIONS, {explain.ANNOTATION: explain.encode(explanation)})
        self._spawn(self._binding_cycle(fw, state, qpi, assumed, result, explanation))

    def _deferred_resize_cycle(self, fw: Framework, state: CycleState, qpi: QueuedPodInfo) -> None:
        """KEP-5836: the cycle of a bound pod whose resize is Deferred -- its node only, the
        plugins that handle it, preemption when the resize does not fit, Permit's parking when
        it does; never assumed or bound (see :mod:`kvert.scheduler.deferred`)."""
        pod = qpi.pod if self.cache.pod_level_resources else without_pod_level_resources(qpi.pod)
        try:
            result = self.schedule_pod(fw, state, pod)
        except FitError as fit:
            post, st = (fw.run_post_filter(state, pod, fit.diagnosis)
                        if fw.points.get("postFilter") else (None, None))
            if st is not None and st.code == Code.ERROR:
                log.error("PostFilter for the deferred resize of %s failed: %s", qpi.key, st.message())
            if post is not None and post.victims:
                log.info("deferred resize of %s: preempting %s on %s", qpi.key,
                         ", ".join(pod_key(v) for v in post.victims), post.nominated_node_name)
            self._deferred_failure(qpi, Status(Code.UNSCHEDULABLE, str(fit)), fit.diagnosis)
            return
        except _PluginError as e:
            self._deferred_failure(qpi, e.status, None)
            return
        except NoNodes:
            self._deferred_failure(qpi, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                                               ERR_NO_NODES_AVAILABLE), None)
            return
        st = fw.run_permit(state, pod, result.node)
        if st is None or st.is_success or st.is_wait:
            # without DeferredPodScheduling's Permit nothing parks it: park it all the same,
            # a bound pod is never bound again
            fw.reject_waiting_pod(pod_uid(pod), message="deferred resize")
            st = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "pod resize fits, waiting for Kubelet actuation")
        self._deferred_failure(qpi, st, result.diagnosis)

    def _deferred_failure(self, qpi: QueuedPodInfo, status: Status, diagnosis: Diagnosis | None
                          ) -> None:
        """``handleSchedulingFailure`` for a Deferred resize: back to the unschedulable pool
        (its node's events requeue it), without the PodScheduled condition, a nominated node
        or a FailedScheduling event (upstream alpha writes none)."""
        error = status.code == Code.ERROR
        if error:
            self.stats.errors += 1
        else:
            self.stats.unschedulable += 1
            qpi.unschedulable_plugins = set(diagnosis.unschedulable_plugins) if diagnosis else set()
            qpi.pending_plugins = set(diagnosis.pending_plugins) if diagnosis else set()
            if status.plugin and status.is_rejected:
                qpi.unschedulable_plugins.add(status.plugin)
                # parked while it fits: NodeResourcesFit's hints (a pod of the node deleted or
                # resized, the node's allocatable) wake it, as the KEP has them do
                qpi.unschedulable_plugins.add("NodeResourcesFit")
        self.queue.add_unschedulable_if_not_present(qpi, error=error)

    def schedule_pod(self, fw: Framework, state: CycleState, pod: dict) -> ScheduleResult:
        """``schedulePod``: filter, then score; raises FitError when nothing fits."""
        return self.algorithm.schedule_pod(fw, state, pod)

    # ---- failures -------------------------------------------------------------------------------

    def _failure(self, fw: Framework, state: CycleState, qpi: QueuedPodInfo, status: Status,
                 diagnosis: Diagnosis | None, total_nodes: int,
                 result: ScheduleResult | None = None, *, nominating: str | None = None,
                 victims: list[dict] | None = None) -> None:
        """``handleSchedulingFailure``: requeue, event, condition, explanation, and the
        nomination: ``nominating`` is the node preemption nominated the pod to, ``""`` to
        clear a nomination (an error), None to leave it as it is."""
        pod = qpi.pod
        if nominating:
            self.cache.add_nominated(pod, nominating)
        elif nominating == "":
            self.cache.delete_nominated(pod)
        error = status.code == Code.ERROR
        if error:
            self.stats.errors += 1
        else:
            self.stats.unschedulable += 1
            qpi.unschedulable_plugins = set(diagnosis.unschedulable_plugins) if diagnosis else set()
            qpi.pending_plugins = set(diagnosis.pending_plugins) if diagnosis else set()
            if status.plugin and status.is_rejected:
                qpi.unschedulable_plugins.add(status.plugin)
        self.queue.add_unschedulable_if_not_present(qpi, error=error)
        message = status.message() or "scheduling failed"
        reason = "Unschedulable" if status.is_rejected else "SchedulerError"
        explanation = self._explain(
            fw, state, pod, result="Error" if error else "Unschedulable",
            attempt=qpi.attempts, now=self.clock.now(), message=message,
            total_nodes=total_nodes, evaluated=total_nodes if diagnosis else 0,
            feasible=0, diagnosis=diagnosis, nominated=nominating or "", victims=victims)
        self._spawn(self._report_failure(fw, pod, reason, message, explanation, nominating))

    def _explain(self, fw: Framework, state: CycleState, pod: dict, **kw: Any) -> dict | None:
        if not self.explain_annotations:
            return None
        try:
            return explain.build(fw, state, pod, **kw)
        except Exception:   # an explanation is worth less than the decision
            log.exception("explaining the scheduling of %s failed", pod_key(pod))
            return None

    async def _report_failure(self, fw: Framework, pod: dict, reason: str, message: str,
                              explanation: dict | None, nominating: str | None = None) -> None:
        """``updatePod``: the PodScheduled condition and, when it changes, the nominated node,
        in one status patch; the FailedScheduling event."""
        recorder = self.recorders[fw.profile_name]
        await recorder.record(pod, "Warning", "FailedScheduling", message)
        meta = pod.get("metadata") or {}
        ns, name = meta.get("namespace", ""), meta.get("name", "")
        status = pod.get("status") or {}
        current = next((c for c in status.get("conditions") or []
                        if c.get("type") == "PodScheduled"), None)
        patch: dict = {}
        if not (current and current.get("status") == "False" and current.get("reason") == reason
                and current.get("message") == message):
            cond = {"type": "PodScheduled", "status": "False", "reason": reason, "message": message}
            if current and current.get("status") == "False" and current.get("lastTransitionTime"):
                cond["lastTransitionTime"] = current["lastTransitionTime"]
            else:
                cond["lastTransitionTime"] = format_time(self.clock.now())
            patch["conditions"] = [cond]
        if nominating is not None and nominating != (status.get("nominatedNodeName") or ""):
            patch["nominatedNodeName"] = nominating or None
        if patch:
            try:
                await self.client.patch("pods", name, {"status": patch}, "strategic",
                                        namespace=ns, subresource="status")
            except ApiError as e:
                log.debug("pod %s/%s: status not updated: %s", ns, name, e)
        if explanation is not None:
            await self._annotate(ns, name, explanation)

    async def _annotate(self, ns: str, name: str, explanation: dict) -> None:
        try:
            await self.client.patch("pods", name, explain.annotation_patch(explanation), "merge",
                                    namespace=ns)
        except ApiError as e:
            log.debug("pod %s/%s: explanation not written: %s", ns, name, e)

    # ---- the binding cycle ------------------------------------------------------------------------

    async def _binding_cycle(self, fw: Framework, state: CycleState, qpi: QueuedPodInfo,
                             assumed: dict, result: ScheduleResult,
                             explanation: dict | None = None) -> None:
        node = result.node
        try:
            st = await fw.wait_on_permit(assumed)
            if is_success(st):
                st = await fw.run_pre_bind(state, assumed, node)
            if is_success(st):
                st = await fw.run_bind(state, assumed, node)
                if st is not None and st.is_skip:
                    st = Status(Code.ERROR, "no bind plugin bound the pod")
        except asyncio.CancelledError:
            raise
        except Exception as e:
            log.exception("binding %s failed unexpectedly", qpi.key)
            st = Status.as_status(e)
        if st is not None and not st.is_success:
            self.stats.bind_failures += 1
            fw.run_unreserve(state, assumed, node)
            self.cache.forget_pod(assumed)
            # the node's capacity the pod held is free again
            self.queue.move_all_to_active_or_backoff(EVENT_ASSIGNED_POD_DELETE, assumed, None)
            self._failure(fw, state, qpi, st, None, len(self.cache), result)
            return
        self.cache.finish_binding(assumed)
        fw.run_post_bind(state, assumed, node)
        self.queue.done(qpi)
        self.stats.scheduled += 1
        meta = qpi.pod.get("metadata") or {}
        ns, name = meta.get("namespace", ""), meta.get("name", "")
        await self.recorders[fw.profile_name].record(
            qpi.pod, "Normal", "Scheduled", f"Successfully assigned {ns}/{name} to {node}")
        if explanation is not None and not state.get(ANNOTATIONS_SENT):
            await self._annotate(ns, name, explanation)


__all__ = ["Scheduler", "ScheduleResult", "SchedulerStats", "node_update_action"]
