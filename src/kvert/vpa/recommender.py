"""The live VPA recommender (seed 002's Recommender; ``recommender/routines/recommender.go``).

``Recommender(client, clock, metrics, interval=60, config=None, checkpoint_interval=600)``;
``await r.run()`` until ``r.stop()``. At start it restores the aggregates of every existing VPA
from its ``VerticalPodAutoscalerCheckpoint`` objects; then, every ``interval`` seconds
(``run_once``):

1. lists the VPAs and pods; resolves each VPA's ``spec.targetRef`` (``targets``) and matches
   the live pods (a pod matched by several VPAs goes to the oldest one);
2. files each matched pod's usage (``metrics.pod_metrics()``: one CPU and one memory sample
   per container, at the PodMetrics ``timestamp``; the CPU sample weighted by the container's
   CPU request) into the ``AggregateStore`` under (namespace, VPA, container). CPU samples not
   newer than a restored checkpoint's ``lastSampleStart`` are skipped, so a restarted
   recommender does not count a scrape twice;
3. records OOM kills seen in pod statuses (``containerStatuses[].lastState.terminated`` with
   reason ``OOMKilled``; time ``finishedAt``; memory: the container's memory request), each
   (pod uid, container, finishedAt) once;
4. computes ``status.recommendation`` (``recommendation.recommend``) and the conditions, and
   writes the status (``update_status``) only when it changed;
5. every ``checkpoint_interval`` writes one checkpoint per (VPA, container) with history and
   deletes the checkpoints of VPAs that are gone; drops aggregates of deleted VPAs and
   expired ones.

Conditions (upstream's types, reasons and messages; ``lastTransitionTime`` moves only when
the status flips):

* ``RecommendationProvided``: True (no reason) when some container has a recommendation;
  else False, with reason ``NoPodsMatched`` and message ``No pods match this VPA object`` when
  that is why;
* ``NoPodsMatched``: True, reason ``NoPodsMatched``, message ``No pods match this VPA object``;
  removed when pods match;
* ``ConfigUnsupported``: True with message ``Cannot read targetRef[. Reason: ...]`` or the
  "has a parent" message when the target cannot be used; removed otherwise
  (``ConfigDeprecated`` is always removed, as upstream);
* ``LowConfidence`` (kvert: upstream defines but never sets it): True, reason
  ``LowConfidence``, while some recommended container has less than the confidence interval
  (24h) of history -- its upper bound is then very wide; False once all have enough;
* ``FetchingHistory`` (upstream's type): True while ``load_history`` reads the history provider
  for the VPA (message ``Loading usage history from SOURCE``), then False with what was loaded
  (``Loaded N samples of P pods from SOURCE``) or why nothing was; a True left by a
  recommender that stopped while loading is turned False by the next loop.

History: with ``history=`` (a ``kvert.vpa.history`` provider: Prometheus range queries or a
trace file) ``run()`` calls ``load_history`` once, after ``restore_checkpoints`` and before the
first loop: every VPA that got no checkpoint (checkpoints win, as upstream) gets the samples of
its pods, live ones by selector and gone ones by name (``history.match_history``), so its
first loop already has a recommendation. History CPU samples carry no request: they weigh the
minimum sample weight, as upstream's history samples do.

VPAs whose ``spec.recommenders`` names other recommenders only are left to them.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Mapping

import numpy as np

from kvert.api.errors import AlreadyExists, ApiError, Conflict, NotFound
from kvert.api.meta import format_time, parse_time
from kvert.clock import sleep_unless
from kvert.vpa.aggregate import AggregateStore
from kvert.vpa.checkpoint import RESOURCE as CHECKPOINTS
from kvert.vpa.checkpoint import CheckpointError, checkpoint_for, restore_into
from kvert.vpa.estimators import get_confidence
from kvert.vpa.metrics_source import MetricsSource
from kvert.vpa.recommendation import (RecommenderConfig, container_policy, container_requests, quantity_or_none,
                                      recommend, scaling_disabled)
from kvert.vpa.targets import PodIndex, Target, is_live, resolve_target

log = logging.getLogger(__name__)

VPAS = "autoscaling.k8s.io/verticalpodautoscalers"
NO_PODS_MESSAGE = "No pods match this VPA object"


def _key(obj: Mapping) -> tuple[str, str]:
    meta = obj.get("metadata") or {}
    return meta.get("namespace") or "default", meta.get("name", "")


class Recommender:
    def __init__(self, client: Any, clock: Any, metrics: MetricsSource, *, interval: float = 60.0,
                 config: RecommenderConfig | None = None, checkpoint_interval: float = 600.0,
                 name: str = "default", history: Any = None, informers: Any = None) -> None:
        self.client = client
        # reads of VPAs, pods and targets: shared informer caches when given (kvert up, the
        # simulator), else the client itself
        self.reader = informers or client
        self.clock = clock
        self.metrics = metrics
        self.interval = float(interval)
        self.config = config or RecommenderConfig()
        self.checkpoint_interval = float(checkpoint_interval)
        self.name = name
        self.store = AggregateStore(self.config)
        self.restored = False
        self.history = history                      # a kvert.vpa.history provider, or None
        self.history_loaded = False
        self.history_stats: dict[str, int] = {}
        self._fetching_history: set[tuple[str, str]] = set()
        self.last_checkpoint: float | None = None
        self.loops = 0
        self._restored_last_us: dict[tuple[str, str, str], int] = {}
        self._ooms_seen: set[tuple[str, str, str]] = set()
        self._pods_seen: dict[tuple[str, str], str] = {}      # (ns, pod) -> uid
        self._stopped = False
        self._wake = asyncio.Event()

    # -- running -----------------------------------------------------------------------------------

    async def run(self) -> None:
        if not self.restored:
            await self.restore_checkpoints()
        if self.history is not None and not self.history_loaded:
            await self.load_history()
        while not self._stopped:
            try:
                await self.run_once()
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - one bad loop must not end the recommender
                log.exception("recommender loop failed")
            if self._stopped:
                break
            await sleep_unless(self.clock, self.interval, self._wake)

    def stop(self) -> None:
        self._stopped = True
        self._wake.set()

    # -- checkpoints -------------------------------------------------------------------------------

    async def restore_checkpoints(self) -> int:
        """Load every checkpoint of an existing VPA into the store; returns how many."""
        self.restored = True
        try:
            vpas = {_key(v): v for v in (await self.client.list(VPAS))["items"] if self._mine(v)}
            checkpoints = (await self.client.list(CHECKPOINTS))["items"]
        except ApiError as e:
            log.warning("cannot read checkpoints: %s", e)
            return 0
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

    async def write_checkpoints(self, vpas: Mapping[tuple[str, str], dict]) -> int:
        now = self.clock.now()
        written = 0
        for (ns, vpa_name, container), agg in self.store.items():
            if (ns, vpa_name) not in vpas or agg.is_empty():
                continue
            body = checkpoint_for(agg, ns, vpa_name, container, now)
            try:
                try:
                    await self.client.create(CHECKPOINTS, body, namespace=ns)
                except AlreadyExists:
                    old = await self.client.get(CHECKPOINTS, body["metadata"]["name"], ns)
                    old["spec"], old["status"] = body["spec"], body["status"]
                    await self.client.update(CHECKPOINTS, old)
                written += 1
            except ApiError as e:
                log.warning("checkpoint %s/%s not written: %s", ns, body["metadata"]["name"], e)
        try:
            for cp in (await self.client.list(CHECKPOINTS))["items"]:
                ns = (cp.get("metadata") or {}).get("namespace") or "default"
                if (ns, (cp.get("spec") or {}).get("vpaObjectName", "")) not in vpas:
                    try:
                        await self.client.delete(CHECKPOINTS, cp["metadata"]["name"], namespace=ns)
                    except NotFound:
                        pass
        except ApiError as e:
            log.warning("checkpoint garbage collection failed: %s", e)
        self.last_checkpoint = now
        return written

    # -- history -----------------------------------------------------------------------------------

    async def load_history(self) -> int:
        """File the history provider's samples into every VPA of this recommender that got no
        checkpoint (once; see the module docstring). Returns the number of samples filed."""
        from kvert.vpa.history import concat_samples, match_history
        self.history_loaded = True
        if self.history is None:
            return 0
        source = str(getattr(self.history, "source", type(self.history).__name__))
        try:
            vpa_list = [v for v in (await self.client.list(VPAS))["items"] if self._mine(v)]
            pods = [p for p in (await self.client.list("pods"))["items"] if is_live(p)]
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
        assigned, dropped = match_history({(k[0], k[1]) for k in history}, vpa_list, targets, pods)
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

    def _mine(self, vpa: Mapping) -> bool:
        recommenders = (vpa.get("spec") or {}).get("recommenders") or []
        return not recommenders or any((r or {}).get("name") == self.name for r in recommenders)

    async def run_once(self) -> dict[tuple[str, str], dict]:
        """One loop; returns the status written (or kept) per VPA."""
        now = self.clock.now()
        self.loops += 1
        vpa_list = [v for v in (await self.reader.list(VPAS))["items"] if self._mine(v)]
        vpas = {_key(v): v for v in vpa_list}
        pods = [p for p in (await self.reader.list("pods"))["items"] if is_live(p)]
        index = PodIndex(pods)
        # 1. targets and pods
        targets: dict[tuple[str, str], Target] = {}
        owner: dict[tuple[str, str], tuple[str, str]] = {}
        matched: dict[tuple[str, str], list[dict]] = {}
        for key in sorted(vpas, key=lambda k: ((vpas[k]["metadata"].get("creationTimestamp") or ""), k)):
            target = await resolve_target(self.reader, vpas[key])
            targets[key] = target
            chosen = []
            for pod in index.select(key[0], target.selector) if target.ok else []:
                pk = _key(pod)
                if pk not in owner:
                    owner[pk] = key
                    chosen.append(pod)
            matched[key] = chosen
        pods_by_key = {_key(p): p for p in pods}
        # forget pods that are gone
        for pk, uid in list(self._pods_seen.items()):
            pod = pods_by_key.get(pk)
            if pod is None or pod["metadata"].get("uid") != uid:
                self.store.forget_pod(pk[0], pk[1])
                del self._pods_seen[pk]
        for pk in owner:
            self._pods_seen[pk] = pods_by_key[pk]["metadata"].get("uid", "")
        # 2. usage
        try:
            metrics = await self.metrics.pod_metrics()
        except asyncio.CancelledError:
            raise
        except Exception as e:  # noqa: BLE001
            log.warning("reading pod metrics failed: %s", e)
            metrics = []
        self._file_metrics(metrics, owner, pods_by_key, vpas, now)
        # 3. OOMs
        for pk, vkey in owner.items():
            self._record_ooms(pods_by_key[pk], vpas[vkey], now)
        # 4. statuses
        written: dict[tuple[str, str], dict] = {}
        for key, vpa in vpas.items():
            status = self._status(vpa, targets[key], len(matched[key]) > 0, now)
            written[key] = status
            if status != (vpa.get("status") or {}):
                # as upstream's patchVpaStatus: a JSON patch of /status, no resourceVersion, so
                # a VPA read from a cache a moment old is no conflict
                try:
                    await self.client.patch(VPAS, key[1], [{"op": "add", "path": "/status", "value": status}],
                                            "json", namespace=key[0], subresource="status")
                except (Conflict, NotFound) as e:
                    log.info("status of VPA %s/%s not written (%s); next loop", key[0], key[1], e)
                except ApiError as e:
                    log.warning("status of VPA %s/%s not written: %s", key[0], key[1], e)
        # 5. checkpoints and garbage collection
        for ns, name in {(k[0], k[1]) for k in self.store}:
            if (ns, name) not in vpas:
                self.store.remove_vpa(ns, name)
        for key in self.store.garbage_collect(now):
            self._restored_last_us.pop(key, None)
        if self.last_checkpoint is None or now - self.last_checkpoint >= self.checkpoint_interval:
            await self.write_checkpoints(vpas)
        return written

    def _file_metrics(self, metrics: list[dict], owner: Mapping, pods_by_key: Mapping, vpas: Mapping,
                      now: float) -> None:
        batches: dict[tuple[str, str, str], list[tuple[str, float, float, float, float]]] = {}
        for pm in metrics:
            pk = _key(pm)
            vkey = owner.get(pk)
            if vkey is None:
                continue
            pod = pods_by_key[pk]
            try:
                t = parse_time(pm.get("timestamp"))
            except (TypeError, ValueError, AttributeError):
                t = now
            spec_containers = {c.get("name"): c for c in (pod.get("spec") or {}).get("containers") or []}
            for c in pm.get("containers") or []:
                spec = spec_containers.get(c.get("name"))
                if spec is None:
                    continue
                usage = c.get("usage") or {}
                cpu = quantity_or_none(usage.get("cpu"))
                mem = quantity_or_none(usage.get("memory"))
                request = container_requests(spec).get("cpu")
                batches.setdefault((vkey[0], vkey[1], c["name"]), []).append(
                    (pk[1], t, np.nan if cpu is None else cpu.nanos / 1e9,
                     np.nan if mem is None else float(mem.value()),
                     np.nan if request is None else request.nanos / 1e9))
        for (ns, vpa_name, container), rows in batches.items():
            vpa = vpas[(ns, vpa_name)]
            if scaling_disabled(container_policy(vpa, container)):
                continue
            agg = self.store.get_for_vpa(vpa, container, now)
            names = [r[0] for r in rows]
            times = np.array([r[1] for r in rows])
            cpu = np.array([r[2] for r in rows])
            restored = self._restored_last_us.get((ns, vpa_name, container))
            if restored is not None:
                cpu = np.where(np.round(times * 1e6) <= restored, np.nan, cpu)
            agg.add_samples(names, times, cpu=cpu, memory=np.array([r[3] for r in rows]))

    def _record_ooms(self, pod: dict, vpa: dict, now: float) -> None:
        ns, name = _key(pod)
        uid = pod["metadata"].get("uid", name)
        containers = {c.get("name"): c for c in (pod.get("spec") or {}).get("containers") or []}
        for cs in (pod.get("status") or {}).get("containerStatuses") or []:
            term = ((cs.get("lastState") or {}).get("terminated")) or {}
            if term.get("reason") != "OOMKilled" or not term.get("finishedAt"):
                continue
            seen = (uid, cs.get("name", ""), term["finishedAt"])
            if seen in self._ooms_seen:
                continue
            self._ooms_seen.add(seen)
            spec = containers.get(cs.get("name"))
            if spec is None or scaling_disabled(container_policy(vpa, cs["name"])):
                continue
            memory = container_requests(spec).get("memory")
            try:
                when = parse_time(term["finishedAt"])
            except ValueError:
                continue
            agg = self.store.get_for_vpa(vpa, cs["name"], now)
            if agg.record_oom(name, when, 0.0 if memory is None else float(memory.value())):
                log.info("OOM of %s/%s container %s recorded", ns, name, cs["name"])

    # -- status ------------------------------------------------------------------------------------

    def _status(self, vpa: dict, target: Target, pods_matched: bool, now: float) -> dict:
        ns, name = _key(vpa)
        old = vpa.get("status") or {}
        aggregates = self.store.for_vpa(ns, name)
        recommendation = recommend(aggregates, vpa, self.config)
        has = bool(recommendation.get("containerRecommendations"))
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
            low = []
            cfg, _ = self.config.for_vpa(vpa)
            for item in recommendation["containerRecommendations"]:
                agg = aggregates.get(item["containerName"])
                if agg is not None and get_confidence(agg, cfg.confidence_interval_cpu) < 1.0:
                    low.append(item["containerName"])
            if low:
                set_("LowConfidence", True, "LowConfidence",
                     "Less than " + _duration(cfg.confidence_interval_cpu) + " of usage history for "
                     + ", ".join(low) + "; the bounds are wide")
            else:
                set_("LowConfidence", False)
        else:
            set_("RecommendationProvided", False, reason, message)
            conditions.pop("LowConfidence", None)
        status = {k: v for k, v in old.items() if k not in ("recommendation", "conditions")}
        if recommendation:
            status["recommendation"] = recommendation
        status["conditions"] = [conditions[t] for t in sorted(conditions)]
        return status


def _duration(seconds: float) -> str:
    if seconds % 3600 == 0:
        return f"{int(seconds // 3600)}h"
    if seconds % 60 == 0:
        return f"{int(seconds // 60)}m"
    return f"{seconds:g}s"


__all__ = ["Recommender", "VPAS", "NO_PODS_MESSAGE"]
