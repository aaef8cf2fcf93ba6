"""The live VPA recommender (seed 002's Recommender), as upstream VPA 1.8's
(``recommender/routines/recommender.go``, ``input/cluster_feeder.go``, ``model/``).

``Recommender(client, clock, metrics, interval=60, config=None, checkpoint_interval=600, ...)``;
``await r.run()`` until ``r.stop()``. At start it restores the aggregates of every existing VPA
from its ``VerticalPodAutoscalerCheckpoint`` objects (when they cannot be read yet, the next loop
tries again, and no checkpoint is written before: upstream 1.8's "checkpoints no longer restart
recommendations from scratch"); then, every ``interval`` seconds (``run_once``, its steps timed
under upstream's names on ``instruments``: LoadVPAs, LoadPods, LoadMetrics, DeleteRemovedPods,
UpdateVPAs, MaintainCheckpoints, GarbageCollect):

1. takes this recommender's VPAs (``filterVPAs``: the default recommender serves those naming
   no recommender or naming it, another only those naming it; within ``namespace`` and outside
   ``ignored_namespaces``), their targets (``targets.resolve_target``) and the pods upstream's
   pod lister holds -- every phase but Pending (``status.phase!=Pending``: Running, Unknown, and
   Succeeded/Failed until deleted) -- and which VPA controls each pod (``targets.PodAssignment``:
   the oldest VPA whose target selects it). With ``memory_saver`` only the pods some VPA
   matches are kept. A pod's VPA gets an aggregate for each of its containers at once, samples
   or not (``AddOrUpdateContainer``). With ``informers`` (``kvert up``, the simulator) these
   follow the informers' events (VPA add/update/delete, pod add/delete/label change, changes of
   the targeted workloads' selector or owners), so a loop where nothing changed does no per-VPA
   or per-pod work; with a plain client they are listed and compared every loop;
2. files the usage table (``metrics.usage_table()``: one CPU and one memory sample per
   container, at the table's time) into the ``AggregateStore`` under (namespace, VPA,
   container): the table's rows are mapped to the banks' pod slots once per table generation
   and matching change, then filed with a few array operations. CPU samples not newer than a
   restored checkpoint's ``lastSampleStart`` are skipped, so a restarted recommender does not
   count a scrape twice;
3. records OOM kills seen in pod statuses (``containerStatuses[].lastState.terminated``, and
   ``state.terminated`` of a container not restarted -- restartPolicy Never, upstream 1.8 --
   with reason ``OOMKilled``; time ``finishedAt``; memory: the container's memory request, the
   status' ``resources`` before the spec's), each (pod uid, container, finishedAt) once; for
   VPAs with ``vpa.kvert.io/workload: auto``, marks the aggregates of containers whose pods run
   to completion (``recommendation.runs_to_completion``) as batch, which turns their CPU target
   into the mean usage;
4. only then lets the pods deleted since the last loop go (upstream 1.8's deferred
   ``DeleteRemovedPods``: the OOM of a pod's last update still counts);
5. estimates the aggregates that changed, all at once (``estimators.estimate_rows``) -- one
   without samples gets the pod minimum, as upstream's empty histograms give (kvert's in-place
   model waits for a first sample: ``recommend_without_samples``); the VPAs with an estimate
   that moved materially (``estimates.BankEstimates.material``), a changed object, match or
   condition get their ``status`` computed as upstream's ``AsStatus`` (``recommendation``, ``{}``
   when no container has one, the conditions and ``observedGeneration``), written when it
   changed materially (``recommendation.status_changed_materially``: targets and conditions
   always, bounds when they move by more than 10%);
6. writes the checkpoints (``StoreCheckpoints``, every ``checkpoint_interval``: one per
   container aggregate, samples or not, in upstream's bytes unless ``exact_checkpoints``, the
   VPAs written longest ago first, after ``update_worker_count`` VPAs only within
   ``checkpoints_timeout`` of the loop's start; none for a VPA loading its history) and every
   ``checkpoint_gc_interval`` deletes those whose VPA is gone, whichever recommender serves it
   (``GarbageCollectCheckpoints``); not at all without ``use_checkpoints`` (upstream's
   ``--storage=prometheus``);
7. drops aggregates of deleted VPAs and, hourly, expired ones and those without samples no
   pod contributes to any more.

Conditions (upstream's types, reasons and messages; ``lastTransitionTime`` moves only when
the status flips; upstream 1.7+ sets no ``observedGeneration`` on them):

* ``RecommendationProvided``: True (no reason) when some container has a recommendation;
  else False, with reason ``NoPodsMatched`` and message ``No pods match this VPA object`` when
  that is why;
* ``NoPodsMatched``: True, reason ``NoPodsMatched``, message ``No pods match this VPA object``;
  removed when pods match;
* ``ConfigUnsupported``: True with message ``Cannot read targetRef[. Reason: ...]`` or the
  "has a parent" message when the target cannot be used; removed otherwise
  (``ConfigDeprecated`` is always removed, as upstream);
* ``LowConfidence`` (kvert: upstream defines but never sets it): True, reason
  ``LowConfidence``, while some recommended container's history -- first to last CPU sample,
  the history loaded at start included -- spans less than the confidence interval (24h): its
  upper bound is then wide; False once all span more;
* ``FetchingHistory`` (upstream's type): True while ``load_history`` reads the history provider
  for the VPA (message ``Loading usage history from SOURCE``), then False with what was loaded
  (``Loaded N samples of P pods from SOURCE``) or why nothing was; a True left by a
  recommender that stopped while loading is turned False by the next loop.

History: with ``history=`` (a ``kvert.vpa.history`` provider: Prometheus range queries or a
trace file) ``run()`` calls ``load_history`` once, after ``restore_checkpoints`` and before the
first loop: every VPA that got no checkpoint (checkpoints win, as upstream) gets the samples of
its pods, live ones by selector, gone ones by their last labels (Prometheus' pod-labels
series) or by name (``history.match_history``), so its first loop already has a
recommendation. History CPU samples carry no request: they weigh the minimum sample weight,
as upstream's history samples do.

``gates`` (``kvert.vpa.features.VpaGates``): PerVPAConfig lets container policies set
``oomBumpUpRatio``, ``oomMinBumpUp`` and ``memoryAggregationInterval{Seconds,Count}``.
``instruments`` (``RecommenderMetrics``) gets upstream's metrics (objects count, latencies,
aggregate count, metrics API answers); ``health`` is told each finished loop.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

import numpy as np

from kvert.api.errors import ApiError, Conflict, NotFound
from kvert.api.meta import format_time, parse_time
from kvert.api.selectors import LabelSelector
from kvert.client.base import Client
from kvert.client.cache import InformerFactory
from kvert.clock import Clock
from kvert.clock.periodic import run_every
from kvert.vpa.aggregate import AggregateBank, AggregateStore
from kvert.vpa.capacity import NodeRoom, cap_to_room, replacement_requests
from kvert.vpa.checkpoint import RESOURCE as CHECKPOINTS
from kvert.vpa.checkpoint import CheckpointError, checkpoint_for, restore_into
from kvert.vpa.estimates import BankEstimates
from kvert.vpa.estimators import BOUND_ORDER, CPU, MEMORY
from kvert.vpa.features import VpaGates
from kvert.vpa.history import HistoryProvider, PrometheusHistory, concat_samples, match_history
from kvert.vpa.instruments import ExecutionTimer, HealthCheck, RecommenderMetrics
from kvert.vpa.metrics_source import MetricsSource, UsageTable
from kvert.vpa.pressure import PressureObserver
from kvert.vpa.recommendation import (
    BOUND_CHANGE_FRACTION,
    RecommenderConfig,
    container_policy,
    container_requests,
    finish_recommendation,
    resolve_workload,
    row_parameters,
    runs_to_completion,
    scaling_disabled,
    status_changed_materially,
)
from kvert.vpa.samples import seconds_to_us
from kvert.vpa.targets import ObjectReader, PodAssignment, Target, is_live, resolve_target, target_resource

log = logging.getLogger(__name__)

VPAS = "autoscaling.k8s.io/verticalpodautoscalers"
GC_INTERVAL = 3600.0      # how often expired aggregates are looked for (they expire after 8 days)
NO_PODS_MESSAGE = "No pods match this VPA object"


def _key(obj: Mapping) -> tuple[str, str]:
    meta = obj.get("metadata") or {}
    return meta.get("namespace") or "default", meta.get("name", "")


class Recommender:
    def __init__(self, client: Client, clock: Clock, metrics: MetricsSource, *, interval: float = 60.0,
                 config: RecommenderConfig | None = None, checkpoint_interval: float = 600.0,
                 name: str = "default", history: HistoryProvider | None = None,
                 informers: InformerFactory | None = None, gates: VpaGates | None = None,
                 checkpoint_gc_interval: float | None = None, checkpoints_timeout: float = 60.0,
                 update_worker_count: int = 10, exact_checkpoints: bool = False, use_checkpoints: bool = True,
                 memory_saver: bool = False, namespace: str | None = None,
                 ignored_namespaces: Iterable[str] = (), instruments: RecommenderMetrics | None = None,
                 health: HealthCheck | None = None, pressure: PressureObserver | None = None) -> None:
        self.client = client
        self.pressure = pressure                    # AEP-9926 memory-pressure peaks (opt-in VPAs)
        # reads of VPAs, pods and targets: shared informer caches when given (kvert up, the
        # simulator), else the client itself
        self.reader: ObjectReader = informers or client
        self.informers = informers
        self.clock = clock
        self.metrics = metrics
        self.interval = float(interval)
        self.gates = gates or VpaGates()
        self.config = replace(config or RecommenderConfig(), per_vpa_config=self.gates.per_vpa_config)
        self.checkpoint_interval = float(checkpoint_interval)
        self.checkpoint_gc_interval = self.checkpoint_interval if checkpoint_gc_interval is None \
            else float(checkpoint_gc_interval)
        self.checkpoints_timeout = float(checkpoints_timeout)
        self.update_worker_count = max(1, int(update_worker_count))
        self.exact_checkpoints = exact_checkpoints
        self.use_checkpoints = use_checkpoints
        self.memory_saver = memory_saver
        self.namespace = namespace or None
        self.ignored_namespaces = frozenset(n for n in ignored_namespaces if n)
        self.instruments = instruments
        self.health = health
        self.name = name
        self.store = AggregateStore(self.config)
        self.restored = not use_checkpoints
        self.history = history                      # a kvert.vpa.history provider, or None
        self.history_loaded = False
        self.history_stats: dict[str, int] = {}
        self._fetching_history: set[tuple[str, str]] = set()
        self.last_checkpoint: float | None = None
        # as upstream's lastCheckpointGC, set when the recommender starts (its first loop): the
        # first collection comes one interval after the start
        self.last_checkpoint_gc: float | None = None
        self._checkpoint_written: dict[VpaKey, float] = {}
        self.loops = 0
        self._restored_last_us: dict[tuple[str, str, str], int] = {}
        self._ooms_seen: set[tuple[str, str, str]] = set()
        self._pods_seen: dict[tuple[str, str], str] = {}      # (ns, pod) -> uid
        self._to_delete: dict[tuple[str, str], str] = {}      # pods gone since the loop's metrics -> uid
        self.assignment = PodAssignment(keep=self._tracked)
        self._vpas: dict[VpaKey, dict] = {}                  # this recommender's VPAs
        self._targets: dict[VpaKey, Target] = {}
        self._unresolved: set[VpaKey] = set()                # targets to read again
        self._targeted: dict[tuple[str, str, str], set[VpaKey]] = {}   # (resource, ns, name) -> VPAs
        self._refs: dict[VpaKey, tuple[str, str, str]] = {}
        self._watched: set[str] = set()                      # informers with our handlers
        self._oom_pods: set[tuple[str, str]] = set()         # pods whose status shows a new OOM kill
        self._completed_pods: set[tuple[str, str]] = set()   # pods that run to completion (workload: auto)
        self._reparam: set[VpaKey] = set()                   # VPAs whose estimator settings to make again
        self._filed_under: dict[tuple[str, str], VpaKey] = {}    # pod -> the VPA its slots are under
        self._slots: dict[tuple[str, str, str], tuple[AggregateBank, int, int] | None] = {}
        self._slot_keys: dict[tuple[str, str], list[tuple[str, str, str]]] = {}
        self._slots_version = 0
        self._table_map: tuple[Any, list] | None = None
        self._estimates: dict[int, BankEstimates] = {}
        self._vpa_state: dict[VpaKey, _VpaState] = {}
        self._statuses: dict[VpaKey, dict] = {}
        self._touched: set[VpaKey] = set()                   # VPAs whose object, target or pods changed
        self._gone_vpas: set[VpaKey] = set()
        self._rescan: set[str] = set()                       # memory saver: namespaces to list pods of again
        self._last_gc: float | None = None
        self._stop = asyncio.Event()

    # -- running -----------------------------------------------------------------------------------

    async def run(self) -> None:
        if not self.restored:
            await self.restore_checkpoints()
        if self.history is not None and not self.history_loaded:
            await self.load_history()
        if self.health is not None:
            self.health.start_monitoring()
        await run_every(self.clock, self.interval, self._loop, self._stop,
                        log=log, failure="recommender loop failed")

    async def _loop(self) -> None:
        await self.run_once()
        if self.health is not None:
            self.health.update_last_activity()

    def stop(self) -> None:
        self._stop.set()

    # -- which VPAs and pods ---------------------------------------------------------------------------

    def _in_scope(self, namespace: str) -> bool:
        """``shouldIgnoreNamespace`` negated: --vpa-object-namespace and
        --ignored-vpa-object-namespaces."""
        if self.namespace is not None and namespace != self.namespace:
            return False
        return namespace not in self.ignored_namespaces

    def _mine(self, vpa: Mapping) -> bool:
        """``filterVPAs``: the default recommender takes VPAs that name no recommender or name
        it; any other takes only those naming it."""
        if not self._in_scope(_key(vpa)[0]):
            return False
        recommenders = (vpa.get("spec") or {}).get("recommenders") or []
        if not recommenders:
            return self.name == DEFAULT_RECOMMENDER
        return any((r or {}).get("name") == self.name for r in recommenders)

    def _tracked(self, pod: Mapping[str, Any]) -> bool:
        """The pods upstream's pod lister holds (field selector ``status.phase!=Pending``: Running
        and Unknown, and Succeeded and Failed until they are deleted), in this recommender's
        namespaces: a Pending pod has used nothing yet and matches no VPA."""
        if (pod.get("status") or {}).get("phase") == "Pending":
            return False
        return self._in_scope((pod.get("metadata") or {}).get("namespace") or "default")

    # -- checkpoints -------------------------------------------------------------------------------

    async def restore_checkpoints(self) -> int:
        """Load every checkpoint of an existing VPA into the store; returns how many. When the
        VPAs or checkpoints cannot be listed, ``restored`` stays False and the next loop tries
        again before it writes any checkpoint: a recommender must not start over and write
        fresh history over the checkpoints (upstream 1.8: "Ensure that VPA checkpoint is loaded
        in the correct order")."""
        try:
            vpas = {_key(v): v for v in (await self.client.list(VPAS, namespace=self.namespace))["items"]
                    if self._mine(v)}
            checkpoints = (await self.client.list(CHECKPOINTS, namespace=self.namespace))["items"]
        except ApiError as e:
            log.warning("cannot read checkpoints (trying again next loop): %s", e)
            return 0
        self.restored = True
        now = self.clock.now()
        count = 0
        for cp in checkpoints:
            ns = (cp.get("metadata") or {}).get("namespace") or "default"
            spec = cp.get("spec") or {}
            vpa = vpas.get((ns, spec.get("vpaObjectName", "")))
            if vpa is None:
                continue
            container = spec.get("containerName", "")
            config, _ = self.config.for_vpa(vpa)
            config = config.for_container(container_policy(vpa, container))
            try:
                key = restore_into(self.store, cp, now, config)
            except CheckpointError as e:
                log.warning("checkpoint %s/%s not loaded: %s", ns, cp["metadata"].get("name"), e)
                continue
            agg = self.store.find(*key)
            if agg is not None and agg.last_sample_start_us is not None:
                self._restored_last_us[key] = agg.last_sample_start_us
            count += 1
        return count

    async def write_checkpoints(self, vpas: Mapping[tuple[str, str], dict], started: float | None = None) -> int:
        """``StoreCheckpoints``: one checkpoint per container aggregate of each VPA (those with
        no samples too), the VPAs written longest ago first, none of a VPA loading its history;
        after ``update_worker_count`` VPAs, only while ``checkpoints_timeout`` since ``started``
        (the loop's start) has not passed. Each is a JSON patch replacing ``/status``, or a create
        when there is none, as upstream's ``CreateOrUpdateVpaCheckpoint``."""
        now = self.clock.now()
        started = now if started is None else started
        order = sorted((k for k in vpas if k in self.store.vpas() and not self._loading_history(k)),
                       key=lambda k: (self._checkpoint_written.get(k, -math.inf), k))
        written = 0
        for i, (ns, vpa_name) in enumerate(order):
            if i >= self.update_worker_count and self.clock.now() - started >= self.checkpoints_timeout:
                log.info("not every checkpoint written within the checkpoints timeout (%d of %d VPAs)", i, len(order))
                break
            for container, agg in sorted(self.store.for_vpa(ns, vpa_name).items()):
                body = checkpoint_for(agg, ns, vpa_name, container, now, exact=self.exact_checkpoints)
                name = body["metadata"]["name"]
                try:
                    try:
                        await self.client.patch(CHECKPOINTS, name, [{"op": "replace", "path": "/status",
                                                                     "value": body["status"]}],
                                                "json", namespace=ns)
                    except NotFound:
                        await self.client.create(CHECKPOINTS, body, namespace=ns)
                    written += 1
                    self._checkpoint_written[(ns, vpa_name)] = now
                except ApiError as e:
                    log.warning("checkpoint %s/%s not written: %s", ns, name, e)
        self.last_checkpoint = now
        return written

    def _loading_history(self, key: VpaKey) -> bool:
        """``isFetchingHistory``: no checkpoint for a VPA whose FetchingHistory is True."""
        if key in self._fetching_history:
            return True
        conditions = (self._statuses.get(key) or {}).get("conditions") or ()
        return any(c.get("type") == "FetchingHistory" and c.get("status") == "True" for c in conditions)

    async def collect_checkpoints(self) -> int:
        """``GarbageCollectCheckpoints``: delete the checkpoints whose VPA is gone -- any VPA,
        whichever recommender serves it -- in the namespaces this recommender looks at.
        Returns how many were deleted."""
        deleted = 0
        try:
            existing = {_key(v) for v in (await self.client.list(VPAS, namespace=self.namespace))["items"]}
            checkpoints = (await self.client.list(CHECKPOINTS, namespace=self.namespace))["items"]
        except ApiError as e:
            log.warning("checkpoint garbage collection failed: %s", e)
            return 0
        for cp in checkpoints:
            ns = (cp.get("metadata") or {}).get("namespace") or "default"
            if not self._in_scope(ns) or (ns, (cp.get("spec") or {}).get("vpaObjectName", "")) in existing:
                continue
            try:
                await self.client.delete(CHECKPOINTS, cp["metadata"]["name"], namespace=ns)
                deleted += 1
            except NotFound:
                pass
            except ApiError as e:
                log.warning("orphaned checkpoint %s/%s not deleted: %s", ns, cp["metadata"].get("name"), e)
        self.last_checkpoint_gc = self.clock.now()
        return deleted

    # -- history -----------------------------------------------------------------------------------

    async def load_history(self) -> int:
        """File the history provider's samples into every VPA of this recommender that got no
        checkpoint (once; see the module docstring). Returns the number of samples filed."""
        self.history_loaded = True
        if self.history is None:
            return 0
        source = str(getattr(self.history, "source", type(self.history).__name__))
        try:
            vpa_list = [v for v in (await self.client.list(VPAS, namespace=self.namespace))["items"] if self._mine(v)]
            pods = [p for p in (await self.client.list("pods", namespace=self.namespace))["items"] if is_live(p)]
        except ApiError as e:
            log.warning("usage history not loaded: cannot list VPAs and pods: %s", e)
            return 0
        vpa_list.sort(key=lambda v: ((v["metadata"].get("creationTimestamp") or ""), _key(v)))
        restored = {(k[0], k[1]) for k in self.store}
        todo = {_key(v): v for v in vpa_list if _key(v) not in restored}
        self.history_stats = {"vpas": len(todo), "checkpointed_vpas": len(vpa_list) - len(todo), "samples": 0,
                              "pods": 0, "dropped_pods": 0, "dropped_samples": 0}
        if not todo:
            return 0
        now = self.clock.now()
        self._fetching_history = set(todo)
        await self._history_condition({k: f"Loading usage history from {source}" for k in todo}, True, now)
        try:
            history = await self.history.fetch(now)
        except asyncio.CancelledError:
            raise
        except Exception as e:  # noqa: BLE001 - HistoryError, or a broken provider: start without history
            log.warning("usage history not loaded: %s", e)
            self._fetching_history = set()
            await self._history_condition({k: f"Usage history not loaded: {e}" for k in todo}, False, self.clock.now())
            return 0
        targets = {_key(v): await resolve_target(self.client, v) for v in vpa_list}
        labels = self.history.pod_labels if isinstance(self.history, PrometheusHistory) else None
        assigned, dropped = match_history({(k[0], k[1]) for k in history}, vpa_list, targets, pods, labels)
        live = {_key(p): p for p in pods}
        groups: dict[tuple[str, str, str], list] = {}
        for (ns, pod_name, container), samples in history.items():
            vkey = assigned.get((ns, pod_name))
            if vkey is None:
                self.history_stats["dropped_samples"] += len(samples)
                continue
            if vkey not in todo:
                continue                               # its VPA has checkpoints
            pod = live.get((ns, pod_name))
            if pod is not None and samples.oom.any():  # an OOM bumps from the memory request
                spec = next((c for c in (pod.get("spec") or {}).get("containers") or []
                             if c.get("name") == container), None)
                request = container_requests(spec).get("memory") if spec is not None else None
                if request is not None:
                    samples.memory = np.where(samples.oom, float(request.value()), samples.memory)
            groups.setdefault((vkey[0], vkey[1], container), []).append(samples)
        filed: dict[tuple[str, str], int] = {}
        pods_of: dict[tuple[str, str], set[str]] = {}
        for (ns, vpa_name, container), parts in sorted(groups.items()):
            vpa = todo[(ns, vpa_name)]
            if scaling_disabled(container_policy(vpa, container)):
                continue
            batch = concat_samples(parts)
            names, codes = np.unique(batch.pods.astype(str), return_inverse=True)
            agg = self.store.get_for_vpa(vpa, container, now)
            agg.add_samples(codes, batch.timestamps, cpu=batch.cpu, memory=batch.memory, oom=batch.oom,
                            pod_names=names.tolist())
            filed[(ns, vpa_name)] = filed.get((ns, vpa_name), 0) + len(batch)
            pods_of.setdefault((ns, vpa_name), set()).update(names.tolist())
            for pod_name in names.tolist():
                if (ns, pod_name) not in live:
                    agg.forget_pod(pod_name)           # gone: its samples stay, its state goes
        self.history_stats.update(samples=sum(filed.values()), pods=sum(len(p) for p in pods_of.values()),
                                  dropped_pods=len(dropped))
        if dropped:
            log.info("usage history of %d pod(s) (%d samples) matches no VPA and was dropped: %s",
                     len(dropped), self.history_stats["dropped_samples"],
                     ", ".join(f"{ns}/{p}" for ns, p in dropped[:10]) + (" ..." if len(dropped) > 10 else ""))
        self._fetching_history = set()
        await self._history_condition(
            {k: f"Loaded {filed.get(k, 0)} samples of {len(pods_of.get(k, ()))} pods from {source}" for k in todo},
            False, self.clock.now())
        log.info("usage history from %s: %d samples of %d pods filed into %d VPA(s)", source,
                 self.history_stats["samples"], self.history_stats["pods"], len(filed))
        return self.history_stats["samples"]

    async def _history_condition(self, messages: Mapping[tuple[str, str], str], fetching: bool, now: float) -> None:
        """Set each VPA's ``FetchingHistory`` condition (read, modify, write its status)."""
        value = "True" if fetching else "False"
        for (ns, name), message in messages.items():
            for _ in range(3):
                try:
                    vpa = await self.client.get(VPAS, name, ns)
                    status = dict(vpa.get("status") or {})
                    conditions = [dict(c) for c in status.get("conditions") or []]
                    previous = next((c for c in conditions if c.get("type") == "FetchingHistory"), None)
                    cond = {"type": "FetchingHistory", "status": value, "message": message,
                            "lastTransitionTime": format_time(now)}
                    if previous is not None and previous.get("status") == value and previous.get("lastTransitionTime"):
                        cond["lastTransitionTime"] = previous["lastTransitionTime"]
                    conditions = [c for c in conditions if c.get("type") != "FetchingHistory"] + [cond]
                    status["conditions"] = sorted(conditions, key=lambda c: c.get("type") or "")
                    vpa["status"] = status
                    await self.client.update_status(VPAS, vpa)
                    break
                except Conflict:
                    continue
                except NotFound:
                    break
                except ApiError as e:
                    log.warning("FetchingHistory of VPA %s/%s not written: %s", ns, name, e)
                    break

    # -- one loop ----------------------------------------------------------------------------------

    async def run_once(self) -> dict[tuple[str, str], dict]:
        """One loop (upstream's ``RunOnce`` steps, timed under their names); returns the status
        computed per VPA (written when it changed materially)."""
        now = self.clock.now()
        self.loops += 1
        timer = ExecutionTimer(self.instruments.execution_latency, self.clock) if self.instruments else None

        def step(name: str) -> None:
            if timer is not None:
                timer.observe_step(name)

        if not self.restored:
            await self.restore_checkpoints()
        if self.informers is not None:
            await self._follow_informers(pods=False)
        else:
            await self._list_vpas()
        for key in sorted(self._unresolved):
            vpa = self._vpas.get(key)
            if vpa is not None:
                await self._resolve(key, vpa)
        self._unresolved.clear()
        step("LoadVPAs")
        if self.informers is not None:
            await self._follow_informers(pods=True)
        else:
            await self._list_pods()
        await self._rescan_pods()
        self.assignment.refresh()
        self._save_memory()
        self._follow_assignment(now)
        step("LoadPods")
        await self._file_usage(now)
        self._file_ooms(now)
        if self.pressure is not None:
            await self.pressure.file(self._vpas, self._filed_under, self.store, now)
        self._file_completions(now)
        if self.instruments is not None:
            self.instruments.aggregate_container_states.set(len(self.store))
        step("LoadMetrics")
        # pods that went since the last loop leave only now, after their last metrics and OOMs
        # were filed (upstream 1.8's DeleteRemovedPods)
        self._delete_removed_pods()
        self._follow_assignment(now)
        step("DeleteRemovedPods")
        written = await self._update_statuses(now)
        self._count_objects()
        step("UpdateVPAs")
        if self.use_checkpoints and self.restored:
            if self.last_checkpoint is None or now - self.last_checkpoint >= self.checkpoint_interval:
                await self.write_checkpoints(self._vpas, started=now)
            if self.last_checkpoint_gc is None:
                self.last_checkpoint_gc = now
            elif now - self.last_checkpoint_gc >= self.checkpoint_gc_interval:
                await self.collect_checkpoints()
        step("MaintainCheckpoints")
        self._collect_garbage(now)
        step("GarbageCollect")
        if timer is not None:
            timer.observe_total()
        return written

    # -- inputs: VPAs, targets, pods ---------------------------------------------------------------

    async def _list_vpas(self) -> None:
        """Without informers: list the VPAs and hand the differences to the assignment."""
        vpas = {_key(v): v for v in (await self.reader.list(VPAS, namespace=self.namespace))["items"]
                if self._mine(v)}
        for key in list(self._vpas):
            if key not in vpas:
                self._vpa_gone(key)
        for key, vpa in vpas.items():
            self._vpas[key] = vpa
            await self._resolve(key, vpa)
        self._touched.update(vpas)

    async def _list_pods(self) -> None:
        pods = {_key(p): p for p in (await self.reader.list("pods", namespace=self.namespace))["items"]}
        for pk in list(self.assignment.pods):
            if pk not in pods:
                self._to_delete[pk] = self._pods_seen.get(pk, "")
        for pod in pods.values():
            self._on_pod(pod)

    async def _follow_informers(self, pods: bool) -> None:
        """With informers: register handlers once, then apply the events queued since -- the
        VPAs' and their targets' first, the pods' with ``pods``."""
        informers = self.informers
        assert informers is not None, "only a recommender given informers follows them"
        resource = "pods" if pods else VPAS
        if resource not in self._watched:
            informer = await informers.synced(resource)
            self._watched.add(resource)
            if pods:
                informer.add_handlers(self._on_pod, self._on_pod_update, self._on_pod_delete)
            else:
                informer.add_handlers(self._on_vpa, self._on_vpa_update, self._on_vpa_delete)
        for resource in sorted(self._watched):
            if (resource == "pods") == pods:
                informers.informer(resource).catch_up()

    def _on_vpa(self, vpa: dict) -> None:
        key = _key(vpa)
        if not self._mine(vpa):
            self._vpa_gone(key)
            return
        old = self._vpas.get(key)
        self._vpas[key] = vpa
        if old is None or not _only_our_status(old, vpa, self._statuses.get(key)):
            self._touched.add(key)
        if old is None or (old.get("spec") or {}).get("targetRef") != (vpa.get("spec") or {}).get("targetRef") \
                or old["metadata"].get("creationTimestamp") != vpa["metadata"].get("creationTimestamp"):
            self._unresolved.add(key)

    def _on_vpa_update(self, old: dict, new: dict) -> None:
        self._on_vpa(new)

    def _on_vpa_delete(self, vpa: dict) -> None:
        self._vpa_gone(_key(vpa))

    def _vpa_gone(self, key: VpaKey) -> None:
        if self._vpas.pop(key, None) is None:
            return
        self._gone_vpas.add(key)
        self.assignment.remove_vpa(key)
        self._targets.pop(key, None)
        ref = self._refs.pop(key, None)
        if ref is not None:
            self._targeted.get(ref, set()).discard(key)
        self._vpa_state.pop(key, None)
        self._statuses.pop(key, None)
        self._reparam.discard(key)
        self._checkpoint_written.pop(key, None)

    def _on_pod(self, pod: dict) -> None:
        if self._tracked(pod):
            self._pod_seen(pod)
            if self._has_new_oom(pod):
                self._oom_pods.add(_key(pod))
            if runs_to_completion(pod):
                self._completed_pods.add(_key(pod))
        else:
            self._pod_gone(_key(pod))

    def _on_pod_update(self, old: dict, new: dict) -> None:
        self._on_pod(new)

    def _on_pod_delete(self, pod: dict) -> None:
        pk = _key(pod)
        if pk not in self._pods_seen:
            return
        self._on_pod(pod)               # its last status: an OOM it shows is still filed
        if pk in self._pods_seen:
            self._to_delete[pk] = self._pods_seen[pk]

    def _pod_seen(self, pod: dict) -> None:
        pk = _key(pod)
        uid = pod["metadata"].get("uid", "")
        seen = self._pods_seen.get(pk)
        if seen is not None and seen != uid:
            self._pod_gone(pk)                 # the same name, another pod
        self._pods_seen[pk] = uid
        self.assignment.add_pod(pod)

    def _pod_gone(self, pk: tuple[str, str]) -> None:
        self._pods_seen.pop(pk, None)
        self._to_delete.pop(pk, None)
        self.assignment.remove_pod(pk)
        self._forget_slots((pk,))

    def _delete_removed_pods(self) -> None:
        gone, self._to_delete = self._to_delete, {}
        for pk, uid in sorted(gone.items()):
            if self._pods_seen.get(pk) == uid:
                self._pod_gone(pk)

    async def _rescan_pods(self) -> None:
        """Memory saver: the pods of namespaces where a VPA came or changed its target, read
        again (the ones no VPA matched were not kept)."""
        namespaces, self._rescan = self._rescan, set()
        for ns in sorted(namespaces):
            try:
                pods = (await self.reader.list("pods", namespace=ns))["items"]
            except ApiError as e:
                log.warning("pods of namespace %s not read: %s", ns, e)
                continue
            for pod in pods:
                if _key(pod) not in self._pods_seen:
                    self._on_pod(pod)

    def _save_memory(self) -> None:
        """``--memory-saver``: only pods some VPA matches are kept (upstream's ``matchesVPA``)."""
        if not self.memory_saver:
            return
        for pk in [pk for pk in self.assignment.pods if pk not in self.assignment.owner]:
            self._pod_gone(pk)

    def _on_workload(self, resource: str) -> Any:
        def changed(*objs: dict) -> None:
            old, new = objs[0], objs[-1]
            if len(objs) == 2 and _selection(old) == _selection(new):
                return
            meta = new.get("metadata") or {}
            self._unresolved.update(self._targeted.get((resource, meta.get("namespace") or "default",
                                                        meta.get("name", "")), ()))
        return changed

    async def _resolve(self, key: VpaKey, vpa: dict) -> None:
        old = self._refs.pop(key, None)
        if old is not None:
            self._targeted.get(old, set()).discard(key)
        target = await resolve_target(self.reader, vpa)
        if self.memory_saver and (key not in self._targets or self._targets[key].selector != target.selector):
            self._rescan.add(key[0])
        self._targets[key] = target
        self._touched.add(key)
        ref = (vpa.get("spec") or {}).get("targetRef")
        ref = ref if isinstance(ref, Mapping) else {}
        resource = target.resource or target_resource(ref)
        self._refs[key] = (resource, key[0], str(ref.get("name", "")))
        self._targeted.setdefault(self._refs[key], set()).add(key)
        if self.informers is not None and resource not in self._watched:
            try:
                informer = await self.informers.synced(resource)
            except ApiError:
                pass                            # not served: read again when the VPA changes
            else:
                self._watched.add(resource)
                on_change = self._on_workload(resource)
                informer.add_handlers(on_change, on_change, on_change)
        self.assignment.set_vpa(key, vpa["metadata"].get("creationTimestamp") or "", target.selector)

    def _follow_assignment(self, now: float) -> None:
        """Pods that changed VPA or are gone: their per-pod state under the old VPA goes (their
        samples stay), and their usage rows are mapped again. A pod's VPA gets an aggregate for
        each of its containers at once, samples or not (upstream's ``AddOrUpdateContainer``)."""
        changed, self.assignment.changed = self.assignment.changed, set()
        for pk in changed:
            old = self._filed_under.pop(pk, None)
            if old is not None:
                self._touched.add(old)
                for agg in self.store.for_vpa(*old).values():
                    agg.forget_pod(pk[1])
            owner = self.assignment.owner.get(pk)
            if owner is not None:
                self._filed_under[pk] = owner
                self._touched.add(owner)
                pod = self.assignment.pods.get(pk)
                if pod is not None:
                    self._ensure_aggregates(owner, pod, now)
        self._forget_slots(changed)

    def _ensure_aggregates(self, key: VpaKey, pod: Mapping, now: float) -> None:
        vpa = self._vpas.get(key)
        if vpa is None:
            return
        for c in (pod.get("spec") or {}).get("containers") or ():
            name = c.get("name")
            if name and not scaling_disabled(container_policy(vpa, name)):
                self.store.get_for_vpa(vpa, name, now)

    def _forget_slots(self, pods: Any) -> None:
        """Map these pods' usage rows again."""
        forgot = False
        for pk in pods:
            for key in self._slot_keys.pop(pk, ()):
                self._slots.pop(key, None)
                forgot = True
        if forgot:
            self._slots_version += 1

    # -- usage ---------------------------------------------------------------------------------------

    async def _file_usage(self, now: float) -> None:
        try:
            table = await self.metrics.usage_table()
        except asyncio.CancelledError:
            raise
        except Exception as e:  # noqa: BLE001
            log.warning("reading pod metrics failed: %s", e)
            self._metrics_response(error=True)
            return
        self._metrics_response(error=False)
        if len(table) == 0:
            return
        times = np.where(np.isnan(table.time), now, table.time)
        t_us = seconds_to_us(times)
        for bank, idx, slots, cutoff, unique in self._map_table(table, now):
            cpu = table.cpu[idx]
            if cutoff is not None:
                cpu = np.where(t_us[idx] <= cutoff, np.nan, cpu)
            bank.add_samples(slots, t_us[idx], cpu, table.memory[idx], unique=unique)

    def _metrics_response(self, error: bool) -> None:
        """``metric_server_responses``, as upstream's metrics client counts its answers."""
        if self.instruments is not None:
            self.instruments.metric_server_responses.labels(_bool(error), METRICS_CLIENT).inc()

    def _map_table(self, table: UsageTable, now: float) -> list:
        """Per bank: (bank, table rows, pod slots, restored cutoffs or None, slots unique)."""
        version = (table.generation, id(table.keys), self._slots_version)
        if self._table_map is not None and self._table_map[0] == version:
            return self._table_map[1]
        found: dict[int, tuple[AggregateBank, list, list, list]] = {}
        slots = self._slots
        for i, key in enumerate(table.keys):
            try:
                entry = slots[key]
            except KeyError:
                entry = self._slot_for(key, now)
            if entry is not None:
                bank, slot, cutoff = entry
                parts = found.get(id(bank))
                if parts is None:
                    parts = found[id(bank)] = (bank, [], [], [])
                parts[1].append(i)
                parts[2].append(slot)
                parts[3].append(cutoff)
        mapped = []
        for bank, idx, slot_list, cutoffs in found.values():
            slot_arr = np.array(slot_list, dtype=np.int64)
            cut = np.array(cutoffs, dtype=np.int64)
            mapped.append((bank, np.array(idx, dtype=np.int64), slot_arr,
                           cut if (cut != _NO_CUTOFF).any() else None,
                           np.unique(slot_arr).size == slot_arr.size))
        self._table_map = (version, mapped)
        return mapped

    def _slot_for(self, key: tuple[str, str, str], now: float) -> tuple[AggregateBank, int, int] | None:
        ns, pod_name, container = key
        pk = (ns, pod_name)
        vkey = self.assignment.owner.get(pk)
        entry = None
        if vkey is not None:
            pod = self.assignment.pods[pk]
            vpa = self._vpas[vkey]
            names = {c.get("name") for c in (pod.get("spec") or {}).get("containers") or []}
            if container in names and not scaling_disabled(container_policy(vpa, container)):
                agg = self.store.get_for_vpa(vpa, container, now)
                cutoff = self._restored_last_us.get((vkey[0], vkey[1], container), _NO_CUTOFF)
                entry = (agg.bank, agg.bank.slot(agg.row, pod_name), cutoff)
        self._slots[key] = entry
        self._slot_keys.setdefault(pk, []).append(key)
        return entry

    # -- OOMs ----------------------------------------------------------------------------------------

    def _has_new_oom(self, pod: dict) -> bool:
        uid = pod["metadata"].get("uid", pod["metadata"].get("name", ""))
        return any((uid, name, term["finishedAt"]) not in self._ooms_seen for name, term in _oom_kills(pod))

    def _file_ooms(self, now: float) -> None:
        pending, self._oom_pods = self._oom_pods, set()
        for pk in sorted(pending):
            vkey = self.assignment.owner.get(pk)
            pod = self.assignment.pods.get(pk)
            if vkey is not None and pod is not None:
                self._record_ooms(pod, self._vpas[vkey], now)

    def _record_ooms(self, pod: dict, vpa: dict, now: float) -> None:
        ns, name = _key(pod)
        uid = pod["metadata"].get("uid", name)
        containers = {c.get("name"): c for c in (pod.get("spec") or {}).get("containers") or []}
        allocated = {cs.get("name"): cs.get("resources") for cs in (pod.get("status") or {}).get("containerStatuses")
                     or () if isinstance(cs.get("resources"), Mapping)}
        for container, term in _oom_kills(pod):
            seen = (uid, container, term["finishedAt"])
            if seen in self._ooms_seen:
                continue
            self._ooms_seen.add(seen)
            spec = containers.get(container)
            if spec is None or scaling_disabled(container_policy(vpa, container)):
                continue
            # the requests in effect: the status' (after an in-place resize) before the spec's, as
            # upstream's ContainerRequestsAndLimits
            status_requests = container_requests({"resources": allocated[container]}) if container in allocated else {}
            memory = status_requests.get("memory") or container_requests(spec).get("memory")
            try:
                when = parse_time(term["finishedAt"])
            except ValueError:
                continue
            agg = self.store.get_for_vpa(vpa, container, now)
            if agg.record_oom(name, when, 0.0 if memory is None else float(memory.value())):
                log.info("OOM of %s/%s container %s recorded", ns, name, container)

    def _file_completions(self, now: float) -> None:
        """``workload: auto``: the aggregates of containers whose pods run to completion become
        batch (once; their VPA's estimator settings are made again)."""
        pending, self._completed_pods = self._completed_pods, set()
        for pk in sorted(pending):
            vkey = self.assignment.owner.get(pk)
            pod = self.assignment.pods.get(pk)
            if vkey is None or pod is None:
                continue
            vpa = self._vpas[vkey]
            state = self._vpa_state.get(vkey)
            config = state.config if state is not None and state.vpa is vpa else self.config.for_vpa(vpa)[0]
            if config.workload != "auto":
                continue
            for c in (pod.get("spec") or {}).get("containers") or []:
                name = c.get("name")
                if not name or scaling_disabled(container_policy(vpa, name)) or not runs_to_completion(pod, name):
                    continue
                agg = self.store.get_for_vpa(vpa, name, now)
                if agg.batch:
                    continue
                agg.batch = True
                log.info("VPA %s/%s container %s runs to completion: sized as a batch workload", *vkey, name)
                self._touched.add(vkey)
                self._reparam.add(vkey)

    # -- recommendations and statuses ----------------------------------------------------------------

    async def _update_statuses(self, now: float) -> dict[tuple[str, str], dict]:
        todo: set[VpaKey] = set()
        touched, self._touched = self._touched, set()
        for key in touched:
            vpa = self._vpas.get(key)
            if vpa is None:
                continue
            todo.add(key)
            state = self._vpa_state.get(key)
            if state is None or state.vpa is not vpa:
                state = self._vpa_state[key] = _VpaState.of(vpa, state, self.config)
                if state.settings_changed:      # a container policy may have turned scaling off (or on)
                    members = self.assignment.members.get(key) or ()
                    self._forget_slots(members)
                    for pk in sorted(members):
                        self._ensure_aggregates(key, self.assignment.pods.get(pk) or {}, now)
        self._estimate(todo)
        nodes: NodeRoom | None = None
        for key in sorted(todo):
            vpa = self._vpas[key]
            state = self._vpa_state[key]
            state.matched = bool(self.assignment.members.get(key))
            state.target = self._targets.get(key) or Target(LabelSelector.nothing(), problem="Cannot read targetRef")
            state.room = None
            if state.config.capacity_aware:
                if nodes is None:
                    nodes = NodeRoom((await self.reader.list("nodes"))["items"], ())
                state.room = nodes.largest(self._member(key) or {"spec": {}})
            status = self._status(vpa, state, now)
            self._statuses[key] = status
            if self.instruments is not None and _has_recommendation(status) \
                    and not _has_recommendation(vpa.get("status") or {}):
                created = (vpa.get("metadata") or {}).get("creationTimestamp")
                try:
                    self.instruments.recommendation_latency.observe(max(0.0, now - parse_time(created)))
                except (TypeError, ValueError):
                    pass
            if status_changed_materially(vpa.get("status") or {}, status):
                # as upstream's patchVpaStatus: a JSON patch of /status, no resourceVersion, so
                # a VPA read from a cache a moment old is no conflict
                try:
                    await self.client.patch(VPAS, key[1], [{"op": "add", "path": "/status", "value": status}],
                                            "json", namespace=key[0], subresource="status")
                except (Conflict, NotFound) as e:
                    log.info("status of VPA %s/%s not written (%s); next loop", key[0], key[1], e)
                except ApiError as e:
                    log.warning("status of VPA %s/%s not written: %s", key[0], key[1], e)
        return dict(self._statuses)

    def _estimate(self, todo: set[VpaKey]) -> None:
        """Estimate the rows that got samples or new settings; add to ``todo`` the VPAs whose
        estimate moved materially or whose containers' confidence crossed a day."""
        for bank in self.store.banks.values():
            est = self._estimates.get(id(bank))
            if est is None:
                est = self._estimates[id(bank)] = BankEstimates(bank)
            est.fit()
            rows = bank.rows()
            if rows.size == 0:
                continue
            fresh = est.new_rows(rows)
            had, low = est.has_samples[rows].copy(), est.low[rows].copy()
            now_has = bank.count[rows] > 0
            reparam = {bank.keys[r][:2] for r in rows[(had != now_has)].tolist()}
            reparam.update(bank.keys[r][:2] for r in fresh.tolist())
            reparam.update(k for k in todo if self._vpa_state[k].settings_changed or k in self._reparam)
            redo = [self._set_parameters(est, key) for key in sorted(reparam) if key in self._vpas]
            dirty = bank.dirty[rows]
            bank.dirty[rows] = False
            rows_todo = rows[dirty]
            if redo:
                rows_todo = np.union1d(rows_todo, np.concatenate(redo))
            est.estimate(rows_todo)
            moved = rows_todo[est.material(rows_todo, BOUND_CHANGE_FRACTION)]
            flipped = rows[(est.low[rows] != low) | (est.has_samples[rows] != had)]
            for r in np.union1d(moved, flipped).tolist():
                key = bank.keys[r]
                if key is not None and key[:2] in self._vpas:
                    todo.add(key[:2])
        for key in todo:
            state = self._vpa_state.get(key)
            if state is not None:
                state.settings_changed = False
        self._reparam -= todo

    def _set_parameters(self, est: BankEstimates, key: VpaKey) -> np.ndarray:
        """The estimator settings of a VPA's rows in this bank (returned)."""
        state = self._vpa_state[key]
        aggs = self.store.for_vpa(*key)
        # upstream shares the pod minimum among every container with an aggregate, samples or not
        chosen = [c for c, a in aggs.items() if not scaling_disabled(container_policy(state.vpa, c))
                  and (state.config.recommend_without_samples or a.total_samples_count > 0)]
        mine = sorted((c, a) for c, a in aggs.items() if a.bank is est.bank)
        if not mine:
            return np.zeros(0, dtype=np.int64)
        rows = np.array([a.row for _, a in mine], dtype=np.int64)
        configs = [resolve_workload(state.config.for_container(container_policy(state.vpa, c)), a.batch)
                   for c, a in mine]
        est.params.put(rows, row_parameters(configs, np.full(rows.size, max(1, len(chosen)))))
        return rows

    def _member(self, key: VpaKey) -> dict | None:
        """One of the VPA's pods (its replicas share their spec), if it has any."""
        members = self.assignment.members.get(key)
        return self.assignment.pods.get(min(members)) if members else None

    def _status(self, vpa: dict, state: _VpaState, now: float) -> dict:
        ns, name = _key(vpa)
        old = vpa.get("status") or {}
        target, pods_matched = state.target, state.matched
        assert target is not None, "a VPA's target is resolved before its status is computed"
        annotations = (vpa.get("metadata") or {}).get("annotations") or {}
        recs = []
        low = []
        for container, agg in sorted(self.store.for_vpa(ns, name).items()):
            policy = container_policy(vpa, container)
            if scaling_disabled(policy) or (agg.is_empty() and not state.config.recommend_without_samples):
                continue
            est = self._estimates[id(agg.bank)]
            amounts = est.current[agg.row]
            est.applied[agg.row] = amounts
            rec = finish_recommendation(container, {b: {CPU: int(amounts[i, 0]), MEMORY: int(amounts[i, 1])}
                                                    for i, b in enumerate(BOUND_ORDER)},
                                        state.config.for_container(policy), policy, annotations)
            recs.append(rec)
            if est.low[agg.row]:
                low.append(container)
        if state.room is not None and recs:
            member = self._member((ns, name)) or {"spec": {}}
            recommended = {r.container_name for r in recs}
            fixed = replacement_requests({"spec": {"containers": [
                c for c in (member.get("spec") or {}).get("containers") or [] if c.get("name") not in recommended]}},
                {})
            cap_to_room(recs, state.room, fixed)
        items = [rec.to_status() for rec in recs]
        recommendation = {"containerRecommendations": items} if items else {}
        has = bool(items)
        conditions = {c.get("type"): dict(c) for c in old.get("conditions") or [] if c.get("type")}

        def set_(ctype: str, status: bool, reason: str = "", message: str = "") -> None:
            value = "True" if status else "False"
            previous = conditions.get(ctype)
            cond: dict[str, Any] = {"type": ctype, "status": value}
            if previous is not None and previous.get("status") == value and previous.get("lastTransitionTime"):
                cond["lastTransitionTime"] = previous["lastTransitionTime"]
            else:
                cond["lastTransitionTime"] = format_time(now)
            if reason:
                cond["reason"] = reason
            if message:
                cond["message"] = message
            conditions[ctype] = cond

        if target.ok:
            conditions.pop("ConfigUnsupported", None)
        else:
            set_("ConfigUnsupported", True, "", target.problem or "")
        conditions.pop("ConfigDeprecated", None)
        fetching = conditions.get("FetchingHistory")
        if fetching is not None and fetching.get("status") == "True" and (ns, name) not in self._fetching_history:
            set_("FetchingHistory", False, "", "Usage history loading did not finish")
        reason = message = ""
        if pods_matched:
            conditions.pop("NoPodsMatched", None)
        else:
            reason, message = "NoPodsMatched", NO_PODS_MESSAGE
            set_("NoPodsMatched", True, reason, message)
        if has:
            set_("RecommendationProvided", True)
            if low:
                set_("LowConfidence", True, "LowConfidence",
                     "Less than " + _duration(state.config.confidence_interval_cpu) + " of usage history for "
                     + ", ".join(low) + "; the bounds are wide")
            else:
                set_("LowConfidence", False)
        else:
            set_("RecommendationProvided", False, reason, message)
            conditions.pop("LowConfidence", None)
        status = {k: v for k, v in old.items() if k not in ("recommendation", "conditions", "observedGeneration")}
        # as upstream's AsStatus: the conditions sorted by type, the recommendation even when it
        # is {} (no container), and the generation seen (1.7+; the conditions carry none)
        status["conditions"] = [conditions[t] for t in sorted(conditions)]
        status["recommendation"] = recommendation
        status["observedGeneration"] = int((vpa.get("metadata") or {}).get("generation") or 0)
        return status

    # -- garbage -------------------------------------------------------------------------------------

    def _collect_garbage(self, now: float) -> None:
        """Drop the aggregates of VPAs that are gone and, once an hour (they expire after 8 days
        without samples), the expired ones."""
        gone = list(self._gone_vpas)
        self._gone_vpas.clear()
        expired: list = []
        if self._last_gc is None or now - self._last_gc >= GC_INTERVAL:
            self._last_gc = now
            gone += list(self.store.vpas() - self._vpas.keys())
            expired = self.store.garbage_collect(now) + self._drop_unused_empty()
            for key in expired:
                self._restored_last_us.pop(key, None)
        removed = [c for ns, name in gone for c in self.store.remove_vpa(ns, name)]
        for ns, name, _ in expired:
            if (ns, name) in self._vpas:
                self._touched.add((ns, name))
        if removed or expired:                  # their pod slots are free now
            self._slots.clear()
            self._slot_keys.clear()
            self._slots_version += 1


    def _drop_unused_empty(self) -> list[tuple[str, str, str]]:
        """Aggregates with no samples that no pod contributes to any more -- none of the VPA's
        pods has the container while active (not Succeeded or Failed), or at all once the
        VPA's target is gone (upstream's ``garbageCollectAggregateCollectionStates``)."""
        dropped: list[tuple[str, str, str]] = []
        for (ns, name, container), agg in self.store.items():
            if not agg.is_empty():
                continue
            target = self._targets.get((ns, name))
            contributing = False
            for pk in self.assignment.members.get((ns, name)) or ():
                pod = self.assignment.pods.get(pk) or {}
                if not any(c.get("name") == container for c in (pod.get("spec") or {}).get("containers") or ()):
                    continue
                active = (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed")
                if active or (target is not None and target.ok):
                    contributing = True
                    break
            if not contributing:
                self.store.remove(ns, name, container)
                dropped.append((ns, name, container))
        return dropped

    def _count_objects(self) -> None:
        """``vpa_objects_count`` as upstream's ``ObjectCounter``: every combination of its labels
        (the update modes upstream knows, both booleans, v1beta1/v1beta2/v1) reported, at 0 when no
        VPA is in it."""
        if self.instruments is None:
            return
        counts: dict[tuple[str, str, str, str, str], int] = {
            (mode, has, api, matches, unsupported): 0 for mode in UPDATE_MODES for has in ("false", "true")
            for api in ("v1beta1", "v1beta2", "v1") for matches in ("false", "true")
            for unsupported in ("false", "true")}
        for key, vpa in self._vpas.items():
            status = self._statuses.get(key) or vpa.get("status") or {}
            conds = {c.get("type"): c.get("status") for c in status.get("conditions") or ()}
            mode = ((vpa.get("spec") or {}).get("updatePolicy") or {}).get("updateMode") or "Recreate"
            api = str(vpa.get("apiVersion") or "autoscaling.k8s.io/v1").rpartition("/")[2]
            label = (str(mode), _bool(_has_recommendation(status)), api, _bool(conds.get("NoPodsMatched") != "True"),
                     _bool(conds.get("ConfigUnsupported") == "True"))
            counts[label] = counts.get(label, 0) + 1
        gauge = self.instruments.vpa_objects
        for label, n in counts.items():
            gauge.labels(*label).set(n)


class _VpaState:
    """What the recommender derived from one version of a VPA object."""

    __slots__ = ("vpa", "config", "settings_changed", "matched", "target", "room")
    vpa: dict[str, Any]
    config: RecommenderConfig
    settings_changed: bool
    matched: bool
    target: Target | None
    room: dict[str, int] | None     # the largest node allocatable, for a capacity-aware VPA

    @classmethod
    def of(cls, vpa: dict, previous: _VpaState | None, base: RecommenderConfig) -> _VpaState:
        state = cls()
        state.vpa = vpa
        state.config = base.for_vpa(vpa)[0]
        meta = vpa.get("metadata") or {}
        prev = previous.vpa if previous is not None else None
        state.settings_changed = prev is None or (prev.get("spec") != vpa.get("spec")) or \
            ((prev.get("metadata") or {}).get("annotations") != meta.get("annotations"))
        state.matched = previous.matched if previous is not None else False
        state.target = previous.target if previous is not None else None
        state.room = None
        return state


def _only_our_status(old: Mapping, new: Mapping, ours: Mapping | None) -> bool:
    """The VPA changed only by taking the status this recommender wrote."""
    return ours is not None and new.get("status") == ours and old.get("spec") == new.get("spec") and \
        (old.get("metadata") or {}).get("annotations") == (new.get("metadata") or {}).get("annotations")


def _selection(workload: Mapping) -> tuple:
    """What a VPA's pod matching reads from its target workload."""
    spec = workload.get("spec") or {}
    template = ((spec.get("jobTemplate") or {}).get("spec") or {}).get("template") or {}
    return (spec.get("selector"), (template.get("metadata") or {}).get("labels"),
            (workload.get("metadata") or {}).get("ownerReferences"))


VpaKey = tuple[str, str]
_NO_CUTOFF = np.iinfo(np.int64).min
DEFAULT_RECOMMENDER = "default"      # input.DefaultRecommenderName
METRICS_CLIENT = "default-metrics-client"     # the client_name of upstream's metrics client
# vpa_types.GetUpdateModes(): what vpa_objects_count is reported for
UPDATE_MODES = ("Off", "Initial", "Recreate", "Auto", "InPlaceOrRecreate", "InPlace")


def _bool(value: bool) -> str:
    return "true" if value else "false"


def _has_recommendation(status: Mapping) -> bool:
    """``HasRecommendation``: some container has a recommendation."""
    return bool((status.get("recommendation") or {}).get("containerRecommendations"))


def _oom_kills(pod: Mapping) -> list[tuple[str, dict]]:
    """(container, terminated state) of each OOM kill a pod's status shows: its last run's
    (``lastState``) and its current state's, for a container not restarted after the kill
    (restartPolicy Never or OnFailure: upstream 1.8's ``isNewOOM``). A kill is the same one
    (by ``finishedAt``) when it moves from the state to lastState."""
    out: list[tuple[str, dict]] = []
    for cs in (pod.get("status") or {}).get("containerStatuses") or ():
        for state in (cs.get("state"), cs.get("lastState")):
            term = (state or {}).get("terminated") or {}
            if term.get("reason") == "OOMKilled" and term.get("finishedAt"):
                out.append((str(cs.get("name", "")), term))
    return out


def _duration(seconds: float) -> str:
    if seconds % 3600 == 0:
        return f"{int(seconds // 3600)}h"
    if seconds % 60 == 0:
        return f"{int(seconds // 60)}m"
    return f"{seconds:g}s"


__all__ = ["Recommender", "VPAS", "NO_PODS_MESSAGE"]
