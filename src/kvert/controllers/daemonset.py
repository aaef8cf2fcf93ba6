"""The DaemonSet controller (``pkg/controller/daemon``): one pod per eligible node.

A node is eligible (``NodeShouldRunDaemonPod``) when the template's ``nodeName`` (if any),
``nodeSelector`` and required node affinity admit it and the pod tolerates its NoSchedule and
NoExecute taints; a node whose only untolerated taints are NoSchedule keeps the pods it
has. The pod checked, like every daemon pod, carries the tolerations the controller adds
(``AddOrUpdateDaemonPodTolerations``): ``not-ready`` and ``unreachable`` NoExecute,
``disk-pressure``, ``memory-pressure``, ``pid-pressure``, ``unschedulable`` NoSchedule, and
``network-unavailable`` NoSchedule with ``hostNetwork``.

A daemon pod (``<ds>-<random>``) is not bound by the controller: its required node affinity
is replaced by ``matchFields metadata.name In [node]`` and the default scheduler places it,
as upstream does. Its ``controller-revision-hash`` label is the hash of the DaemonSet's
current ControllerRevision (``controller.ComputeHash`` of the template and collision count).

Each sync: the current revision (made when no revision equals the template; renumbered
after a rollback), then, once the pod expectations are met, ``manage`` (create pods on
eligible nodes without one; delete pods on nodes that may not keep them, succeeded pods,
failed pods (with a FailedDaemonPod event and a back-off per node), extra pods beyond the
oldest), then the update: ``RollingUpdate`` deletes out-of-date pods while fewer than
``maxUnavailable`` (rounded up) nodes lack an available pod (with ``maxSurge``, creates the
new pod first and deletes the old one once the new one is available); ``OnDelete`` waits.
Old revisions beyond ``revisionHistoryLimit`` no pod uses are deleted. Status:
desired/current/updated NumberScheduled, numberReady, numberAvailable, numberUnavailable,
numberMisscheduled, observedGeneration. Node additions, deletions and changes of labels,
taints or conditions resync every DaemonSet.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from kvert.api.errors import AlreadyExists, ApiError, NotFound
from kvert.api.meta import deep_copy, labels_of
from kvert.api.nodeaffinity import RequiredNodeAffinity
from kvert.api.taints import find_untolerated_taint
from kvert.client.base import Client
from kvert.client.events import EventRecorder
from kvert.clock import Clock
from kvert.controllers import history
from kvert.controllers.base import (
    CONTROLLER_INDEX,
    NAMESPACE_INDEX,
    ORPHAN_INDEX,
    Controller,
    Expectations,
    InformerFactory,
    SyncError,
    controller_ref_of,
    index_controller_uid,
    index_namespace,
    index_orphan_namespace,
    object_key,
    safe_handler,
    split_key,
)
from kvert.controllers.claims import candidates, claim, workload_selector
from kvert.controllers.deployment import compute_hash
from kvert.controllers.podcontrol import create_pod, delete_pod
from kvert.controllers.replicaset import BURST_REPLICAS, SLOW_START_INITIAL_BATCH_SIZE, slow_start_batch
from kvert.controllers.util import (
    creation_time,
    is_deleting,
    is_pod_available,
    is_pod_ready,
    pod_from_template,
    pod_key,
    scaled_value,
    uid_of,
)

log = logging.getLogger(__name__)

DS = "apps/daemonsets"
HASH_LABEL = history.REVISION_HASH_LABEL
FAILED_DAEMON_POD = "FailedDaemonPod"
BACKOFF_BASE, BACKOFF_MAX = 1.0, 900.0      # failedPodsBackoff: 1 s doubling to 15 min

_NO_EXECUTE_TOLERATIONS = ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")
_NO_SCHEDULE_TOLERATIONS = ("node.kubernetes.io/disk-pressure", "node.kubernetes.io/memory-pressure",
                            "node.kubernetes.io/pid-pressure", "node.kubernetes.io/unschedulable")
NETWORK_UNAVAILABLE = "node.kubernetes.io/network-unavailable"


def _same_toleration(a: dict, b: dict) -> bool:
    """``Toleration.MatchToleration``: key, operator, value and effect."""
    return all((a.get(f) or "") == (b.get(f) or "") for f in ("key", "operator", "value", "effect"))


def add_daemon_tolerations(spec: dict) -> None:
    """``AddOrUpdateDaemonPodTolerations``: each toleration replaces a matching one or is added."""
    wanted = [{"key": k, "operator": "Exists", "effect": "NoExecute"} for k in _NO_EXECUTE_TOLERATIONS]
    wanted += [{"key": k, "operator": "Exists", "effect": "NoSchedule"} for k in _NO_SCHEDULE_TOLERATIONS]
    if spec.get("hostNetwork"):
        wanted.append({"key": NETWORK_UNAVAILABLE, "operator": "Exists", "effect": "NoSchedule"})
    tolerations = list(spec.get("tolerations") or [])
    for toleration in wanted:
        if not any(_same_toleration(t, toleration) for t in tolerations):
            tolerations.append(toleration)
    spec["tolerations"] = tolerations


def node_affinity_for(affinity: dict | None, node_name: str) -> dict:
    """``ReplaceDaemonSetPodNodeNameNodeAffinity``: the required terms become one term
    matching the node's name."""
    affinity = deep_copy(affinity or {})
    term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}
    node_affinity = affinity.setdefault("nodeAffinity", {})
    required = node_affinity.setdefault("requiredDuringSchedulingIgnoredDuringExecution", {})
    required["nodeSelectorTerms"] = [term]
    return affinity


def target_node(pod: dict) -> str:
    """``GetTargetNodeName``: ``nodeName``, else the name in the matchFields term."""
    spec = pod.get("spec") or {}
    if spec.get("nodeName"):
        return spec["nodeName"]
    required = (((spec.get("affinity") or {}).get("nodeAffinity") or {})
                .get("requiredDuringSchedulingIgnoredDuringExecution") or {})
    for term in required.get("nodeSelectorTerms") or []:
        for field in term.get("matchFields") or []:
            if field.get("key") == "metadata.name" and field.get("operator") == "In" and \
                    len(field.get("values") or []) == 1:
                return field["values"][0]
    return ""


def daemon_pod_spec(ds: dict) -> dict:
    """The template's pod spec with the daemon tolerations (``NewPod``)."""
    spec = deep_copy(((ds.get("spec") or {}).get("template") or {}).get("spec") or {})
    add_daemon_tolerations(spec)
    return spec


def should_run(ds: dict, node: dict) -> tuple[bool, bool]:
    """``NodeShouldRunDaemonPod``: (should run a pod, may keep a running one)."""
    spec = daemon_pod_spec(ds)
    node_name = node["metadata"]["name"]
    if spec.get("nodeName") and spec["nodeName"] != node_name:
        return False, False
    try:
        fits = RequiredNodeAffinity({"spec": spec}).matches(node)
    except ValueError:
        return False, False
    if not fits:
        return False, False
    taints = (node.get("spec") or {}).get("taints") or []
    tolerations = spec.get("tolerations") or []
    if find_untolerated_taint(taints, tolerations) is not None:
        return False, find_untolerated_taint(taints, tolerations, ("NoExecute",)) is None
    return True, True


def _oldest_first(pods: list[dict]) -> list[dict]:
    """``podByCreationTimestampAndPhase``: scheduled pods first, then by age and name."""
    return sorted(pods, key=lambda p: (0 if (p.get("spec") or {}).get("nodeName") else 1,
                                       creation_time(p), p["metadata"]["name"]))


def _rolling(ds: dict) -> dict | None:
    strategy = (ds.get("spec") or {}).get("updateStrategy") or {}
    if (strategy.get("type") or "RollingUpdate") != "RollingUpdate":
        return None
    return strategy.get("rollingUpdate") or {}


def surge_and_unavailable(ds: dict, desired: int) -> tuple[int, int]:
    """``SurgeCount`` and ``UnavailableCount`` (percentages rounded up); both zero means one
    unavailable."""
    rolling = _rolling(ds)
    if rolling is None:
        return 0, 0
    surge = scaled_value(rolling.get("maxSurge") or 0, desired, True)
    unavailable = scaled_value(rolling.get("maxUnavailable") or 0, desired, True)
    if desired > 0 and surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


class DaemonSetController(Controller):
    name = "daemonset-controller"

    def __init__(self, client: Client, clock: Clock, *, informers: InformerFactory | None = None,
                 workers: int = 1, burst_replicas: int = BURST_REPLICAS):
        super().__init__(client, clock, informers=informers, workers=workers)
        self.burst_replicas = burst_replicas
        self.expectations = Expectations(clock)
        self.recorder = EventRecorder(client, clock, self.name)
        self._failed_backoff: dict[str, tuple[float, float]] = {}   # ds/node -> (delay, since)
        self.sets = self.use(DS)
        self.pods = self.use("pods")
        self.revisions = self.use(history.REVISIONS)
        self.nodes = self.use("nodes")
        self.sets.add_index(NAMESPACE_INDEX, index_namespace)
        for informer in (self.pods, self.revisions):
            informer.add_index(NAMESPACE_INDEX, index_namespace)
            informer.add_index(CONTROLLER_INDEX, index_controller_uid)
            informer.add_index(ORPHAN_INDEX, index_orphan_namespace)
        self.sets.add_handlers(safe_handler(self._enqueue), safe_handler(lambda old, cur: self._enqueue(cur)),
                               safe_handler(self._set_deleted))
        self.pods.add_handlers(safe_handler(self._pod_added), safe_handler(self._owned_updated),
                               safe_handler(self._pod_deleted))
        self.revisions.add_handlers(safe_handler(self._owned_changed), safe_handler(self._owned_updated),
                                    safe_handler(self._owned_changed))
        self.nodes.add_handlers(safe_handler(self._all), safe_handler(self._node_updated),
                                safe_handler(self._all))

    # ---- handlers ------------------------------------------------------------------------

    def _enqueue(self, ds: dict) -> None:
        self.enqueue(object_key(ds))

    def _set_deleted(self, ds: dict) -> None:
        self.expectations.delete(object_key(ds))
        self._enqueue(ds)

    def _all(self, _obj: Any = None) -> None:
        for ds in self.sets.list():
            self._enqueue(ds)

    def _node_updated(self, old: dict, cur: dict) -> None:
        def shape(node: dict) -> tuple:
            spec, status = node.get("spec") or {}, node.get("status") or {}
            conditions = sorted((c.get("type"), c.get("status")) for c in status.get("conditions") or [])
            return labels_of(node), spec.get("taints"), spec.get("unschedulable"), conditions
        if shape(old) != shape(cur):
            self._all()

    def _owner(self, obj: dict) -> dict | None:
        ref = controller_ref_of(obj)
        if ref is None or ref.get("kind") != "DaemonSet":
            return None
        ds = self.sets.get(ref.get("name", ""), obj["metadata"].get("namespace", ""))
        return ds if ds is not None and uid_of(ds) == ref.get("uid") else None

    def _owned_changed(self, obj: dict) -> None:
        ds = self._owner(obj)
        if ds is not None:
            self._enqueue(ds)
        elif controller_ref_of(obj) is None:
            for ds in self.sets.by_index(NAMESPACE_INDEX, obj["metadata"].get("namespace", "")):
                if workload_selector(ds).matches(labels_of(obj)):
                    self._enqueue(ds)

    def _owned_updated(self, old: dict, cur: dict) -> None:
        if controller_ref_of(old) != controller_ref_of(cur):
            self._owned_changed(old)
        if is_deleting(cur) and not is_deleting(old):
            self._pod_deleted(cur)
            return
        self._owned_changed(cur)

    def _pod_added(self, pod: dict) -> None:
        if is_deleting(pod):
            self._pod_deleted(pod)
            return
        ds = self._owner(pod)
        if ds is not None:
            self.expectations.creation_observed(object_key(ds))
        self._owned_changed(pod)

    def _pod_deleted(self, pod: dict) -> None:
        ds = self._owner(pod)
        if ds is not None:
            self.expectations.deletion_observed(object_key(ds), pod_key(pod))
            self._enqueue(ds)

    # ---- sync ----------------------------------------------------------------------------

    async def sync(self, key: str) -> None:
        namespace, name = split_key(key)
        ds = self.sets.get(name, namespace)
        if ds is None:
            self.expectations.delete(key)
            return
        selector = workload_selector(ds)
        if selector.is_nothing:
            log.warning("%s: %s has an invalid or empty selector", self.name, key)
            return
        pods = await claim(self.client, ds, DS, selector, candidates(self.pods, ds), "pods")
        if is_deleting(ds):
            return
        revisions = await claim(self.client, ds, DS, selector, candidates(self.revisions, ds), history.REVISIONS)
        current, old = await self._construct_history(ds, revisions)
        hash_ = (current["metadata"].get("labels") or {}).get(HASH_LABEL, "")
        nodes = self.nodes.list()
        if self.expectations.satisfied(key):
            by_node = self._pods_by_node(pods)
            await self._manage(ds, nodes, by_node, hash_)
            if self.expectations.satisfied(key) and _rolling(ds) is not None:
                await self._rolling_update(ds, nodes, self._pods_by_node(self._fresh_pods(ds)), hash_)
            await self._cleanup_history(ds, old, pods)
        await self._write_status(ds, nodes, self._pods_by_node(self._fresh_pods(ds)), hash_)

    def _fresh_pods(self, ds: dict) -> list[dict]:
        return self.pods.by_index(CONTROLLER_INDEX, uid_of(ds))

    @staticmethod
    def _pods_by_node(pods: list[dict]) -> dict[str, list[dict]]:
        """``getNodesToDaemonPods``: deleted terminal pods left out."""
        by_node: dict[str, list[dict]] = {}
        for pod in pods:
            if is_deleting(pod) and (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
                continue
            by_node.setdefault(target_node(pod), []).append(pod)
        return by_node

    async def _construct_history(self, ds: dict, revisions: list[dict]) -> tuple[dict, list[dict]]:
        """``constructHistory``: (current revision, old revisions)."""
        data = history.template_patch(ds)
        current = [r for r in revisions if history.data_bytes(r.get("data")) == history.data_bytes(data)]
        old = [r for r in revisions if r not in current]
        number = max((int(r.get("revision") or 0) for r in old), default=0) + 1
        if not current:
            return await self._snapshot(ds, number), old
        cur = history.sorted_revisions(current)[-1]
        for dup in current:
            if dup is not cur:
                await self._delete_revision(dup)
        if int(cur.get("revision") or 0) < number:
            bumped = deep_copy(cur)
            bumped["revision"] = number
            cur = await self.client.update(history.REVISIONS, bumped)
        return cur, old

    async def _snapshot(self, ds: dict, number: int) -> dict:
        collisions = (ds.get("status") or {}).get("collisionCount")
        hash_ = compute_hash((ds.get("spec") or {}).get("template") or {}, collisions)
        revision = history.new_revision(ds, f"{ds['metadata']['name']}-{hash_}", hash_, number)
        try:
            return await history.create_revision(self.client, ds, revision)
        except AlreadyExists:
            fresh = deep_copy(ds)
            fresh.setdefault("status", {})["collisionCount"] = int(collisions or 0) + 1
            try:
                await self.client.update_status(DS, fresh)
            except ApiError:
                pass
            raise SyncError(f"hash collision for {object_key(ds)}'s ControllerRevision; "
                            "collisionCount bumped") from None

    async def _delete_revision(self, rev: dict) -> None:
        try:
            await self.client.delete(history.REVISIONS, rev["metadata"]["name"],
                                     namespace=rev["metadata"]["namespace"])
        except NotFound:
            pass

    async def _manage(self, ds: dict, nodes: list[dict], by_node: dict[str, list[dict]], hash_: str) -> None:
        create_on: list[str] = []
        delete: list[dict] = []
        # AllowsSurge: any maxSurge that scales to at least one pod out of one
        surge = _rolling(ds) is not None and bool(surge_and_unavailable(ds, 1)[0])
        min_ready = int((ds.get("spec") or {}).get("minReadySeconds") or 0)
        now = self.clock.now()
        names = set()
        for node in nodes:
            node_name = node["metadata"]["name"]
            names.add(node_name)
            run, keep = should_run(ds, node)
            daemon_pods = by_node.get(node_name) or []
            if run and not daemon_pods:
                create_on.append(node_name)
            elif keep:
                running = []
                for pod in daemon_pods:
                    if is_deleting(pod):
                        continue
                    phase = (pod.get("status") or {}).get("phase")
                    if phase == "Failed":
                        if self._failed_pod_in_backoff(ds, node_name, now):
                            continue
                        await self.recorder.record(
                            ds, "Warning", FAILED_DAEMON_POD,
                            f"Found failed daemon pod {pod_key(pod)} on node {node_name}, will try to kill it")
                        delete.append(pod)
                    elif phase == "Succeeded":
                        delete.append(pod)
                    else:
                        running.append(pod)
                running = _oldest_first(running)
                if not surge:
                    delete.extend(running[1:])
                elif not running:
                    if run:
                        create_on.append(node_name)
                else:
                    delete.extend(self._surge_excess(running, hash_, min_ready, now))
            elif not keep:
                delete.extend(p for p in daemon_pods if not is_deleting(p))
        # unscheduled pods aimed at nodes that do not exist: nobody else removes them
        for node_name, daemon_pods in by_node.items():
            if node_name not in names:
                delete.extend(p for p in daemon_pods if not (p.get("spec") or {}).get("nodeName")
                              and not is_deleting(p))
        await self._sync_nodes(ds, delete, create_on, hash_)

    @staticmethod
    def _surge_excess(running: list[dict], hash_: str, min_ready: int, now: float) -> list[dict]:
        """With surge: keep the oldest new and the oldest old pod; the old one goes once the
        new one is available, or at once when it is not ready."""
        newest = [p for p in running if labels_of(p).get(HASH_LABEL) == hash_]
        oldest = [p for p in running if labels_of(p).get(HASH_LABEL) != hash_]
        extra = newest[1:] + oldest[1:]
        if newest and oldest and (not is_pod_ready(oldest[0]) or
                                  is_pod_available(newest[0], min_ready, now)):
            extra.append(oldest[0])
        return extra

    def _failed_pod_in_backoff(self, ds: dict, node_name: str, now: float) -> bool:
        """``failedPodsBackoff``: a failed pod on a node is killed at most once per back-off
        period (1 s doubling up to 15 min) so a controller fighting a kubelet does not spin."""
        key = f"{object_key(ds)}/{node_name}"
        delay, since = self._failed_backoff.get(key, (0.0, 0.0))
        if delay and now - since < delay:
            self.enqueue_after(object_key(ds), delay - (now - since))
            return True
        if delay and now - since > 2 * BACKOFF_MAX:
            delay = 0.0
        self._failed_backoff[key] = (min(BACKOFF_MAX, delay * 2 if delay else BACKOFF_BASE), now)
        return False

    async def _sync_nodes(self, ds: dict, delete: list[dict], create_on: list[str], hash_: str) -> None:
        """``syncNodes``: creations in slow-start batches and deletions, under expectations."""
        key = object_key(ds)
        create_on = create_on[:self.burst_replicas]
        delete = delete[:self.burst_replicas]
        self.expectations.expect(key, len(create_on), [pod_key(p) for p in delete])
        queue = list(create_on)
        successes, error = await slow_start_batch(len(queue), SLOW_START_INITIAL_BATCH_SIZE,
                                                  lambda: self._create_pod(ds, queue.pop(0), hash_))
        for _ in range(len(create_on) - successes):
            self.expectations.creation_observed(key)
        results = await asyncio.gather(*(self._delete_pod(ds, p) for p in delete), return_exceptions=True)
        for pod, result in zip(delete, results):
            if isinstance(result, BaseException):
                self.expectations.deletion_observed(key, pod_key(pod))
                if error is None and not isinstance(result, NotFound) and isinstance(result, ApiError):
                    error = result
        if error is not None:
            raise error

    async def _create_pod(self, ds: dict, node_name: str, hash_: str) -> dict:
        template = deep_copy((ds.get("spec") or {}).get("template") or {})
        template.setdefault("metadata", {}).setdefault("labels", {})[HASH_LABEL] = hash_
        template["spec"] = daemon_pod_spec(ds)
        template["spec"]["affinity"] = node_affinity_for(template["spec"].get("affinity"), node_name)
        pod = pod_from_template(template, ds)
        return await create_pod(self.client, self.recorder, ds, pod)

    async def _delete_pod(self, ds: dict, pod: dict) -> None:
        await delete_pod(self.client, self.recorder, ds, pod)

    # ---- rolling update ---------------------------------------------------------------------

    async def _rolling_update(self, ds: dict, nodes: list[dict], by_node: dict[str, list[dict]],
                              hash_: str) -> None:
        """``rollingUpdate`` (update.go)."""
        eligible = [n for n in nodes if should_run(ds, n)[0]]
        for node in eligible:
            by_node.setdefault(node["metadata"]["name"], [])
        surge, unavailable_max = surge_and_unavailable(ds, len(eligible))
        min_ready = int((ds.get("spec") or {}).get("minReadySeconds") or 0)
        now = self.clock.now()
        node_by_name = {n["metadata"]["name"]: n for n in nodes}

        def available(pod: dict) -> bool:
            return is_pod_available(pod, min_ready, now)

        to_delete: list[dict] = []
        to_create: list[str] = []
        if surge == 0:
            unavailable = 0
            replace: list[dict] = []
            candidates: list[dict] = []
            for node_name in sorted(by_node):
                found = self._updated_on_node(by_node[node_name], hash_)
                if found is None:
                    unavailable += 1
                    continue
                new, old = found
                if new is not None and old is None:
                    unavailable += not available(new)
                elif old is not None and new is None:
                    if not available(old):
                        replace.append(old)
                    elif unavailable < unavailable_max:
                        candidates.append(old)
                else:       # both or neither: the node is mid-update
                    unavailable += 1
            room = min(max(0, unavailable_max - unavailable), len(candidates))
            to_delete = replace + candidates[:room]
        else:
            surged = available_count = 0
            allowed: list[str] = []
            candidate_nodes: list[str] = []
            leaving: list[dict] = []       # available old pods on nodes that may no longer run one
            for node_name in sorted(by_node):
                found = self._updated_on_node(by_node[node_name], hash_)
                if found is None:
                    surged += 1
                    continue
                new, old = found
                judged = old if old is not None else new
                available_count += judged is not None and available(judged)
                if old is None:
                    continue
                host = node_by_name.get(node_name)
                runs = host is not None and should_run(ds, host)[0]
                if new is None:
                    if not runs:
                        (leaving if available(old) else to_delete).append(old)
                    elif not available(old):
                        allowed.append(node_name)
                    elif surged < surge:
                        candidate_nodes.append(node_name)
                elif not available(new):
                    surged += 1
                else:
                    to_delete.append(old)
            # a pod leaves a node it may no longer run on only while enough others are available
            to_delete += leaving[:max(0, available_count - len(eligible))]
            to_create = allowed + candidate_nodes[:max(0, min(surge - surged, len(candidate_nodes)))]
        if to_delete or to_create:
            await self._sync_nodes(ds, to_delete, to_create, hash_)

    @staticmethod
    def _updated_on_node(pods: list[dict], hash_: str) -> tuple[dict | None, dict | None] | None:
        """``findUpdatedPodsOnNode``: (new pod, old pod), None with more than one of either."""
        new = old = None
        for pod in pods:
            if is_deleting(pod):
                continue
            if labels_of(pod).get(HASH_LABEL) == hash_:
                if new is not None:
                    return None
                new = pod
            else:
                if old is not None:
                    return None
                old = pod
        return new, old

    async def _cleanup_history(self, ds: dict, old: list[dict], pods: list[dict]) -> None:
        limit = int((ds.get("spec") or {}).get("revisionHistoryLimit") or 0)
        excess = len(old) - limit
        if excess <= 0:
            return
        live = {labels_of(p).get(HASH_LABEL) for p in pods}
        for rev in history.sorted_revisions(old):
            if excess <= 0:
                break
            if (rev["metadata"].get("labels") or {}).get(HASH_LABEL) in live:
                continue
            await self._delete_revision(rev)
            excess -= 1

    # ---- status --------------------------------------------------------------------------

    async def _write_status(self, ds: dict, nodes: list[dict], by_node: dict[str, list[dict]], hash_: str) -> None:
        """``updateDaemonSetStatus``: counts over nodes, the oldest pod of each node judged."""
        min_ready = int((ds.get("spec") or {}).get("minReadySeconds") or 0)
        now = self.clock.now()
        counts = dict.fromkeys(("currentNumberScheduled", "numberMisscheduled", "desiredNumberScheduled",
                                "numberReady", "updatedNumberScheduled", "numberAvailable"), 0)
        for node in nodes:
            run, _ = should_run(ds, node)
            daemon_pods = by_node.get(node["metadata"]["name"]) or []
            if not run:
                counts["numberMisscheduled"] += bool(daemon_pods)
                continue
            counts["desiredNumberScheduled"] += 1
            if not daemon_pods:
                continue
            counts["currentNumberScheduled"] += 1
            pod = _oldest_first(daemon_pods)[0]
            if is_pod_ready(pod):
                counts["numberReady"] += 1
                counts["numberAvailable"] += is_pod_available(pod, min_ready, now)
            counts["updatedNumberScheduled"] += labels_of(pod).get(HASH_LABEL) == hash_
        counts["numberUnavailable"] = counts["desiredNumberScheduled"] - counts["numberAvailable"]
        old = ds.get("status") or {}
        status: dict[str, Any] = {k: v for k, v in old.items() if k in ("collisionCount", "conditions")}
        status.update(counts)
        status["observedGeneration"] = int(ds["metadata"].get("generation") or 0)
        for field in ("updatedNumberScheduled", "numberAvailable", "numberUnavailable", "observedGeneration"):
            if not status[field]:
                del status[field]
        if status != old:
            obj = deep_copy(ds)
            obj["status"] = status
            try:
                await self.client.update_status(DS, obj)
            except NotFound:
                return
        if min_ready and counts["numberReady"] != counts["numberAvailable"]:
            self.enqueue_after(object_key(ds), min_ready)

