"""The simulation engine: the real components, in one process, in virtual time.

For every policy of a scenario ``simulate`` builds a fresh in-process cluster over the
memory store (uids drawn from the seed) -- registry (same seed), controller manager,
scheduler (same seed), one ``NodeAgent`` per node over a ``SimRuntime``, every runtime's
containers in one ``Fleet`` advanced at the scenario's tick, and, for VPA policies, the VPA
recommender (reading usage straight from the fleet), updater and admission plugin -- creates
the workloads (and their VPAs), and runs it for ``duration`` of virtual time in a
``VirtualClock`` loop, so only the work done costs wall time. Every ``sampleInterval`` it
samples, per workload (``kvert.sim.recording``):

* requests of the running pods (the applied ``status.containerStatuses[].resources`` where
  the node agent reported them, else the spec), cpu in millicores, memory in bytes, kept as
  running sums from pod events;
* use: memory working set, and cpu used and demanded, averaged over the interval, from the
  fleet's cumulative counters;
* pods running and pending, the Deployment's replicas (what an HPA sets); and the Ready nodes.

A workload's HorizontalPodAutoscaler (when the scenario declares one and the policy keeps
it) is created with its Deployment; the HPA controller reads pod metrics straight from the
fleet (``FleetPodMetrics``), and ``PolicyRun.hpa`` keeps each HPA's rescales and final
status (conditions, among them ``VerticalPodAutoscalerConflict``). A workload with
``sharedUsage`` has its declared usage split among its running pods (``kvert.sim.load``).

Counters come from exact sources: OOM kills from the runtimes' ``on_oom`` listeners (with
the limit that was passed: the container's, the pod's, a QoS tier's, the node's allocatable
or the node's memory), container restarts from ``restartCount`` increases (by the
termination reason), CPU throttled time from the fleet's throttled nanoseconds, evictions
from pod deletions seen by an informer (the VPA updater's, taint-based ones) and from pods
their node failed as ``Evicted`` under pressure (each pod once), in-place resizes from
containers' reported resources changing in a running pod (as a node agent's ``ResizeCompleted``
events would count them; listing a thousand-node week's events took 15 s), pending pod-seconds (by reason) from a pod's
creation to its first Running status. Every eviction and OOM kill is also kept as an event
with its time (seconds since the start), workload, pod, node or container, and cause; each
VPA's recommendation is kept every time it changes; ``PolicyRun.work`` is what the run cost.

The same scenario and seed give identical samples and counters.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kvert.api.conditions import is_true
from kvert.api.errors import AlreadyExists, ApiError
from kvert.api.kinds import by_key, for_object
from kvert.apiserver.metrics import DEFAULT_RESOLUTION
from kvert.client import Informer, InProcessClient
from kvert.client.base import Client
from kvert.clock import VirtualClock
from kvert.cluster import assembly as build
from kvert.cluster.fleetmetrics import FleetMetricsSource, FleetPodMetrics
from kvert.cluster.supervisor import Supervisor
from kvert.controllers.nodeipam import cluster_cidr_for
from kvert.kubelet.agent import NodeAgent
from kvert.kubelet.config import NodeConfig
from kvert.kubelet.eviction import MONITORING_INTERVAL
from kvert.kubelet.runtime.fleet import Fleet
from kvert.kubelet.runtime.sim import OomKill, SimRuntime
from kvert.sim.load import SharedLoad
from kvert.sim.pressure_source import FleetPressureSource
from kvert.sim.recording import FleetSampler, RecommendationLog, ReplicaLog, Tracker
from kvert.sim.scenario import Policy, Scenario, recommender_config
from kvert.store import open_store
from kvert.store.base import Store, seeded_uids
from kvert.vpa.features import VpaGates
from kvert.vpa.pressure import PressureObserver
from kvert.vpa.vpa_validation import gates_needed

log = logging.getLogger(__name__)

SERIES = ("cpu_request", "cpu_use", "memory_request", "memory_use", "pods_running", "pods_pending",
          "cpu_demand", "replicas")
COUNTERS = ("oom_kills", "restarts", "throttled_seconds", "evictions", "resizes", "pods_created")

Progress = Callable[[str, float], None]
# the simulated kernel's OOM scopes, as a report names the limit that was passed
OOM_CAUSES = {"container": "container limit", "pod": "pod limit", "burstable": "QoS tier limit",
              "besteffort": "QoS tier limit", "kubepods": "node allocatable (kubepods)", "node": "node memory"}


# how often simulated agents relist and look at eviction signals when nothing told them to
# (the fleet tells them of every exit and memory threshold): hourly, or as rarely as they
# report their status in longer runs (every 6 h in a week's)
EVENTED_INTERVAL = 3600.0
# the garbage collector's thresholds during a run (Python's are 700, 10, 10)
SIMULATION_GC_THRESHOLDS = (50_000, 20, 10)


class SimulationError(RuntimeError):
    pass


@dataclass(repr=False)
class PolicyRun:
    """What one policy's run recorded."""
    policy: str
    update_mode: str | None
    times: np.ndarray                                   # seconds since the start, one per sample
    interval: float
    workloads: dict[str, dict[str, np.ndarray]]         # workload -> series name -> values
    counters: dict[str, dict[str, float]]               # workload -> counter -> value
    pending_seconds: dict[str, float]                   # workload -> pending pod-seconds
    nodes_ready: np.ndarray                             # per sample
    skipped: str = ""                                   # why the policy could not run
    vpa_recommendations: dict[str, Any] = field(default_factory=dict)
    events: list[dict] = field(default_factory=list)   # evictions and OOM kills, with their times
    # workload -> the containers' last termination reason (OOMKilled, Error, Completed...) -> restarts
    restarts_by_cause: dict[str, dict[str, int]] = field(default_factory=dict)
    # workload -> why pods waited (Unschedulable, Scheduling, ContainerCreating...) -> pod-seconds
    pending_by_reason: dict[str, dict[str, float]] = field(default_factory=dict)
    # workload -> container -> [{"time": s, "target"/"lowerBound"/"upperBound": {"cpu": millicores,
    # "memory": bytes}}], one entry per recommendation change
    recommendation_history: dict[str, dict[str, list[dict]]] = field(default_factory=dict)
    # what the run cost the simulated cluster (deterministic, unlike wall time): API writes
    # (store revisions) before the first sample and per simulated hour after it, VPA writes
    # and fleet steps per simulated hour after it
    work: dict[str, float] = field(default_factory=dict)
    # workload -> {"minReplicas", "maxReplicas", "rescales": [{"time", "from", "to"}], "status": the
    # HPA's last status}, for the workloads with an HPA under this policy
    hpa: dict[str, dict] = field(default_factory=dict)

    def __repr__(self) -> str:
        # short: asyncio's Runner formats the main task (this, its result) into an error
        # message it then drops when it restores the SIGINT handler, and printing every
        # series of a large run took seconds
        return f"PolicyRun({self.policy!r}, {len(self.workloads)} workloads, {len(self.times)} samples)"



@dataclass
class _SimCluster:
    """One policy's running cluster: the store, control plane and supervised components."""
    store: Store
    plane: build.ControlPlane
    supervisor: Supervisor
    fleet: Fleet
    fleet_task: asyncio.Future[Any]
    hpa_metrics: FleetPodMetrics
    admin: InProcessClient
    agents: list[NodeAgent] = field(default_factory=list)
    ooms: list[tuple[str, str, float, OomKill]] = field(default_factory=list)   # (namespace, pod, time, kill)


async def _start_cluster(scn: Scenario, clock: VirtualClock, *, vpa: bool) -> _SimCluster:
    """The store, the control plane with its CRDs, the controller manager, the scheduler and
    every pool's node agents over one fleet, ready."""
    store = open_store("memory", clock=clock, uid_factory=seeded_uids(scn.seed))
    plane = build.ControlPlane.in_process(store, clock, seed=scn.seed)
    supervisor = Supervisor()
    supervisor.start()
    await plane.bootstrap(supervisor, vpa_crds=vpa)
    admin = plane.client()

    # Simulated node agents renew their leases and report their status far less often than a
    # kubelet (about 24 times a run, every 6 h at most), so a week of a thousand nodes costs
    # little: the node lifecycle controller's grace periods follow, so a node is judged dead
    # only when it really stopped.
    heartbeat = scn.heartbeat
    lifecycle = {"node_monitor_period": max(5.0, heartbeat / 2), "node_monitor_grace_period": 5 * heartbeat,
                 "node_startup_grace_period": 6 * heartbeat}
    # every node's containers in one set of arrays, advanced at each tick; the agents hear of
    # exits and memory thresholds from it instead of polling their runtimes
    fleet = build.fleet(clock, scn.tick)
    if scn.bank is not None:
        scn.bank.reset()                 # no pod holds a slot yet
        fleet.bank = scn.bank
    # the HPA controller's metrics.k8s.io, from the fleet (pods' labels from the run's informer)
    hpa_metrics = FleetPodMetrics(fleet, resolution=max(DEFAULT_RESOLUTION, scn.tick))
    supervisor.add("controller-manager", build.controller_manager(
        plane.client(build.CONTROLLER_MANAGER), clock,
        settings={"nodelifecycle": lifecycle, "horizontalpodautoscaling": {"metrics": hpa_metrics},
                  # a pod CIDR for every node (the default /16 holds 256: the rest would have none,
                  # and the allocator would retry them at every node status)
                  "nodeipam": {"cluster_cidr": cluster_cidr_for(scn.node_count)}}))
    supervisor.add("scheduler", build.scheduler(plane.client(build.SCHEDULER), clock, seed=scn.seed))
    cluster = _SimCluster(store, plane, supervisor, fleet, asyncio.ensure_future(fleet.run()), hpa_metrics,
                          admin)
    for pool, name in ((p, n) for p in scn.pools for n in p.node_names()):
        config = NodeConfig.from_flags(node_name=name, **pool.flags())
        agent = build.sim_node(plane.client(build.node_user(name)), clock, config, name=name,
                               tick=scn.tick, system_memory=pool.system_memory, fleet=fleet,
                               heartbeat_seconds=heartbeat, lease_seconds=int(5 * heartbeat),
                               pleg_seconds=max(1.0, scn.tick), evented_interval=max(EVENTED_INTERVAL, heartbeat),
                               explain=False,
                               eviction_interval=max(MONITORING_INTERVAL, scn.tick))
        runtime = agent.runtime
        assert isinstance(runtime, SimRuntime)
        runtime.on_oom.append(_oom_recorder(cluster.ooms, runtime))
        cluster.agents.append(agent)
        supervisor.add(f"node-agent/{name}", agent)
    await build.wait_ready(cluster.agents)
    await _label_nodes(admin, scn)
    return cluster


def _oom_recorder(ooms: list[tuple[str, str, float, OomKill]], runtime: SimRuntime
                  ) -> Callable[[OomKill], None]:
    def on_oom(kill: OomKill) -> None:
        try:
            sandbox = runtime.sandbox_config(kill.sandbox_id)
            ooms.append((sandbox.namespace, sandbox.name, kill.time, kill))
        except Exception:  # pragma: no cover - the sandbox is there at the kill
            ooms.append(("", "", kill.time, kill))
    return on_oom


def policy_gates(policy: Policy, vpas: Iterable[dict | None]) -> VpaGates:
    """The VPA components' feature gates under ``policy``: its ``featureGates`` when it names
    them, else those its VPAs need (a policy that names InPlace or a startup boost means the
    upstream VPA that runs them)."""
    explicit = (policy.vpa or {}).get("featureGates")
    if explicit is not None:
        return VpaGates(explicit)
    return gates_needed(v for v in vpas if v is not None)


def _start_vpa(cluster: _SimCluster, policy: Policy, clock: VirtualClock, gates: VpaGates) -> None:
    """The VPA recommender and updater (sharing one process's informers) and the admission
    controller as an admission plugin of the registry."""
    plane = cluster.plane
    rec_cfg = dict((policy.vpa or {}).get("recommender") or {})
    upd_cfg = dict((policy.vpa or {}).get("updater") or {})
    informers = build.vpa_informers(plane.client(build.VPA_RECOMMENDER), clock)
    recommender = build.recommender(
        plane.client(build.VPA_RECOMMENDER), clock, FleetMetricsSource(cluster.fleet),
        interval=rec_cfg.get("interval", 60.0), config=recommender_config(rec_cfg, "recommender"),
        informers=informers, gates=gates,
        # nothing restarts a simulated recommender, so its checkpoints are written only when asked
        checkpoint_interval=rec_cfg.get("checkpoint_interval", math.inf),
        pressure=PressureObserver(FleetPressureSource(cluster.fleet)))
    cluster.supervisor.add("vpa-recommender", build.Owning(recommender, informers))
    upd_cfg.setdefault("interval", 60.0)
    cluster.supervisor.add("vpa-updater", build.updater(
        plane.client(build.VPA_UPDATER), clock, informers=informers, gates=gates,
        **{k: v for k, v in upd_cfg.items() if k in build.UPDATER_OPTIONS}))
    plane.registry.admission.plugins.append(
        build.vpa_admission_plugin(plane.client(build.VPA_ADMISSION), clock, informers, gates=gates))


async def _run_policy(scn: Scenario, policy: Policy, clock: VirtualClock, progress: Progress | None
                      ) -> PolicyRun:
    vpa = scn.needs_vpa(policy)
    cluster = await _start_cluster(scn, clock, vpa=vpa)
    store, supervisor, fleet, ooms = cluster.store, cluster.supervisor, cluster.fleet, cluster.ooms
    fleet_task = cluster.fleet_task
    admin = cluster.admin

    names = [w.key for w in scn.workloads]
    tracker = Tracker(clock, names)
    vpas = {w.key: scn.vpa_object(w, policy) for w in scn.workloads}
    history = RecommendationLog(clock, tracker.start, {(obj["metadata"]["namespace"], obj["metadata"]["name"]): key
                                                       for key, obj in vpas.items() if obj is not None})
    if vpa:
        _start_vpa(cluster, policy, clock, policy_gates(policy, vpas.values()))

    informers_of_run = [Informer(admin, "pods", clock=clock), Informer(admin, "nodes", clock=clock)]
    informers_of_run[0].add_handlers(tracker.on_add, tracker.on_update, tracker.on_delete)
    cluster.hpa_metrics.pods = informers_of_run[0]
    hpas = [w for w in scn.workloads if w.hpa is not None and policy.hpa]
    replicas = ReplicaLog(clock, tracker.start, names, [w.replicas for w in scn.workloads], tracker,
                          {(w.kind, w.namespace, w.name): w.key for w in scn.workloads})
    # workloads with recorded usage share theirs through the trace bank
    shared = {w.key: w.shared for w in scn.workloads if w.shared and w.history is None}
    if shared:                # the workloads' usage split among their running pods, before every tick
        fleet_task = asyncio.gather(fleet_task, SharedLoad(fleet, shared, tracker.workload_of_pod).run())
    ready_nodes: dict[str, bool] = {}

    def node_seen(*objs: dict[str, Any]) -> None:
        node = objs[-1]
        ready_nodes[node["metadata"]["name"]] = is_true(node.get("status"), "Ready")
    informers_of_run[1].add_handlers(node_seen, node_seen, lambda node: ready_nodes.pop(node["metadata"]["name"], 0))
    if vpa:
        informers_of_run.append(Informer(admin, "autoscaling.k8s.io/verticalpodautoscalers", clock=clock))
        informers_of_run[2].add_handlers(history.on_change, history.on_change, None)
    for resource in sorted({w.resource for w in hpas}):      # only an HPA changes a workload's replicas
        informers_of_run.append(Informer(admin, resource, clock=clock))
        informers_of_run[-1].add_handlers(replicas.on_change, replicas.on_change, None)
    informer_tasks = [asyncio.ensure_future(inf.run()) for inf in informers_of_run]
    for inf in informers_of_run:
        await inf.wait_synced()

    await _create_objects(admin, scn)
    for i, w in enumerate(scn.workloads):
        where = f"workloads[{i}] ({w.kind} {w.namespace}/{w.name})"
        await _create(admin, w.resource, w.manifest, w.namespace, where)
        vpa_object = vpas[w.key]
        if vpa_object is not None:
            await _create(admin, "autoscaling.k8s.io/verticalpodautoscalers", vpa_object, w.namespace,
                          f"{where}: its VerticalPodAutoscaler")
        if w in hpas:
            await _create(admin, "autoscaling/horizontalpodautoscalers", scn.hpa_object(w), w.namespace,
                          f"{where}: its HorizontalPodAutoscaler")

    n = int(scn.duration // scn.sample_interval)
    interval = scn.sample_interval
    sampler = FleetSampler(fleet, tracker)
    columns = {s: np.zeros((n, len(names))) for s in SERIES}
    nodes_ready = np.zeros(n)
    t0 = clock.now()
    first_sample = (0, 0, 0)          # (store revision, fleet steps, VPA writes) at the first sample
    for k in range(n):
        target = t0 + (k + 1) * interval
        await clock.sleep(max(0.0, target - clock.now()))
        usage = sampler.sample(interval)
        for s in ("cpu_use", "cpu_demand", "memory_use"):
            columns[s][k] = usage[s]
        for row, s in enumerate(("cpu_request", "memory_request", "pods_running", "pods_pending")):
            columns[s][k] = tracker.sums[row]
        columns["replicas"][k] = replicas.values
        nodes_ready[k] = sum(ready_nodes.values())
        # What outlived a sample interval is kept out of the collector's sight (gc.freeze):
        # full collections no longer walk the millions of long-lived objects of a large
        # cluster (a fifth of a thousand-node run's time), only what is young. The cluster
        # makes next to no cyclic garbage (a thousand nodes for hours with the collector off:
        # the same number of live objects); run_policy gives the frozen ones back at the end.
        # Building the cluster ran with the collector off.
        gc.freeze()
        if k == 0:
            first_sample = (store.current_revision(), fleet.steps, history.updates)
            gc.enable()
        supervisor.check()     # a crashed component ends the run, by name
        if progress is not None:
            progress(policy.name, (k + 1) / n)

    tracker.finish()
    hours = (n - 1) * interval / 3600
    work = {"api_writes_before_first_sample": first_sample[0],
            "api_writes_per_hour": (store.current_revision() - first_sample[0]) / hours if hours else 0.0,
            "fleet_steps_per_hour": (fleet.steps - first_sample[1]) / hours if hours else 0.0,
            "vpa_writes_per_hour": (history.updates - first_sample[2]) / hours if hours else 0.0}
    recommendations: dict[str, Any] = {}
    for w in scn.workloads:
        vpa_object = vpas[w.key]
        if vpa_object is None:
            continue
        try:
            obj = await admin.get("autoscaling.k8s.io/verticalpodautoscalers", vpa_object["metadata"]["name"],
                                  w.namespace)
            recommendations[w.key] = (obj.get("status") or {}).get("recommendation")
        except ApiError:
            recommendations[w.key] = None
    hpa_runs: dict[str, dict[str, Any]] = {}
    for w in hpas:
        assert w.hpa is not None            # hpas holds the workloads that have one
        try:
            obj = await admin.get("autoscaling/horizontalpodautoscalers", scn.hpa_object(w)["metadata"]["name"],
                                  w.namespace)
        except ApiError:
            obj = {}
        hpa_runs[w.key] = {"minReplicas": int(w.hpa.get("minReplicas", 1)),
                            "maxReplicas": int(w.hpa["maxReplicas"]),
                            "rescales": replicas.changes.get(w.key, []),
                            "pods_deleted_by_scale_down": tracker.scaled_down[w.key],
                            "status": obj.get("status") or {}}
    for inf in informers_of_run:
        inf.stop()
    for task in (*informer_tasks, fleet_task):
        task.cancel()
    await asyncio.gather(*informer_tasks, fleet_task, return_exceptions=True)
    await supervisor.stop()
    store.close()

    by_workload = {s: np.ascontiguousarray(columns[s].T) for s in SERIES}   # a row per workload
    series = {w: {s: by_workload[s][i] for s in SERIES} for i, w in enumerate(names)}
    counters: dict[str, dict[str, float]] = {}
    for i, key in enumerate(names):
        counters[key] = {
            "oom_kills": sum(1 for ns, pod, _, _ in ooms if tracker.workload_of_pod.get((ns, pod)) == key),
            "restarts": tracker.restarts[key],
            "throttled_seconds": float(sampler.throttled_ns[i]) / 1e9,
            "evictions": tracker.evictions[key],
            "node_pressure_evictions": sum(1 for e in tracker.events if e["workload"] == key
                                           and e.get("cause") == "node-pressure"),
            "resizes": tracker.resizes[key],
            "pods_created": tracker.pods_created[key],
        }
    events = list(tracker.events)
    for ns, pod, when, kill in ooms:
        owner = tracker.workload_of_pod.get((ns, pod))
        if owner is None:
            continue
        events.append({"time": round(when - tracker.start, 3), "kind": "oom-kill", "workload": owner, "pod": pod,
                       "container": kill.name, "cause": OOM_CAUSES.get(kill.scope, kill.scope),
                       "usage": kill.usage, "limit": kill.limit})
    events.sort(key=lambda e: (e["time"], e["kind"], e["pod"]))
    return PolicyRun(policy=policy.name, update_mode=policy.update_mode,
                     times=np.arange(1, n + 1) * interval, interval=interval, workloads=series,
                     counters=counters, pending_seconds=dict(tracker.pending), nodes_ready=nodes_ready,
                     vpa_recommendations=recommendations, events=events,
                     restarts_by_cause=tracker.restarts_by_cause, pending_by_reason=tracker.pending_by_reason,
                     recommendation_history=history.history,   # VPAs are named as their workloads
                     work=work, hpa=hpa_runs)


async def _create(client: Client, resource: str, obj: dict, namespace: str, where: str) -> None:
    try:
        await client.create(resource, obj, namespace=namespace)
    except ApiError as e:
        raise SimulationError(f"{where}: the API server refused it: {e}") from None


async def _create_objects(client: Client, scn: Scenario) -> None:
    """The scenario's objects, and the workloads' namespaces that are not among them."""
    named = {o["metadata"]["name"] for o in scn.objects if o["kind"] == "Namespace"}
    for ns in sorted({w.namespace for w in scn.workloads} - named - {"default"}):
        try:
            await client.create("namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        except AlreadyExists:
            pass
    for i, obj in enumerate(scn.objects):
        resource = for_object(obj).key
        namespace = (obj.get("metadata") or {}).get("namespace") or ("default" if by_key(resource).namespaced
                                                                    else None)
        try:
            await client.create(resource, obj, namespace=namespace)
        except AlreadyExists:
            if obj["kind"] != "Namespace":          # a namespace the cluster has from the start
                raise SimulationError(
                    f"objects[{i}] ({obj['kind']} {obj['metadata']['name']}): already exists") from None
        except ApiError as e:
            raise SimulationError(f"objects[{i}] ({obj['kind']} {obj['metadata']['name']}): the API server "
                                  f"refused it: {e}") from None


async def _label_nodes(client: Client, scn: Scenario) -> None:
    """Each pool's labels, taints and cordon on its Nodes (the cluster's admin sets them: a
    kubelet may not give itself every label)."""
    for pool in scn.pools:
        if not pool.admin_changes:
            continue
        for name in pool.node_names():
            node = await client.get("nodes", name)
            meta, spec = node.setdefault("metadata", {}), node.setdefault("spec", {})
            meta["labels"] = {**(meta.get("labels") or {}), **pool.labels}
            own = {(t.get("key"), t.get("effect")) for t in pool.taints}
            spec["taints"] = [t for t in spec.get("taints") or [] if (t.get("key"), t.get("effect")) not in own] + \
                [dict(t) for t in pool.taints]
            if pool.unschedulable:
                spec["unschedulable"] = True
            await client.update("nodes", node)


def run_policy(scn: Scenario, policy: Policy, progress: Progress | None = None) -> PolicyRun:
    """Run one policy in its own virtual clock and event loop."""
    clock = VirtualClock() if scn.start is None else VirtualClock(scn.start)
    collecting, thresholds = gc.isenabled(), gc.get_threshold()
    gc.disable()            # until the first sample (_run_policy)
    # fewer, larger young collections: a VPA resize wave allocates millions of objects within
    # one sample interval, before the next freeze (a tenth of a thousand-node wave's time)
    gc.set_threshold(*SIMULATION_GC_THRESHOLDS)
    try:
        return clock.run(_run_policy(scn, policy, clock, progress))
    finally:
        gc.unfreeze()
        gc.set_threshold(*thresholds)
        if collecting:
            gc.enable()
        else:
            gc.disable()


def simulate(scn: Scenario, progress: Progress | None = None, *, policies: list[str] | None = None,
             skip_unavailable: bool = True) -> list[PolicyRun]:
    """Run every policy (or those named) on the identical workload; a VPA policy whose
    components are missing is recorded as skipped (or raises without ``skip_unavailable``)."""
    runs = []
    for policy in scn.policies:
        if policies is not None and policy.name not in policies:
            continue
        try:
            runs.append(run_policy(scn, policy, progress))
        except SimulationError as e:
            if not skip_unavailable:
                raise
            log.warning("policy %s skipped: %s", policy.name, e)
            runs.append(PolicyRun(policy.name, policy.update_mode, np.zeros(0), scn.sample_interval, {}, {}, {},
                                  np.zeros(0), skipped=str(e)))
    return runs
