"""VerticalPodAutoscalerCheckpoints interchangeable with upstream VPA 1.8's recommender, both ways:
objects in upstream's format (from upstream's own tests) are loaded; what kvert writes has
upstream's shape and bytes, and upstream's loading algorithm -- written out below from
util/histogram.go as facts -- rebuilds from it the histogram kvert has. Also upstream's writing
rules: every container aggregate (samples or not), the VPAs written longest ago first within the
timeout, orphans collected whichever recommender serves the VPA, and a restarted recommender that
goes on from its checkpoints instead of starting over."""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime

import numpy as np

from kvert.api.errors import InternalError
from kvert.api.quantity import Quantity
from kvert.vpa.aggregate import AggregateContainerState
from kvert.vpa.checkpoint import aggregate_from_checkpoint, checkpoint_status
from kvert.vpa.metrics_source import UsageTable
from kvert.vpa.recommendation import RecommenderConfig
from kvert.vpa.recommender import VPAS, Recommender

from tests.vpa.upstream_recommender_support import (
    CHECKPOINTS,
    DEPLOY,
    MI,
    NS,
    FixedUsage,
    NoMetrics,
    deployment,
    get_vpa,
    pod,
    recommendations,
    run,
    vpa,
)

RFC3339_SECONDS = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
T1, T2 = "2018-01-01T02:03:04Z", "2018-02-01T02:03:04Z"      # TestAggregateContainerState*Checkpoint


def _unix(text: str) -> float:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC).timestamp()


# -- upstream's histogram, as util/histogram.go and histogram_options.go compute it ---------------------

class UpstreamHistogram:
    """``NewExponentialHistogramOptions(maxValue, firstBucketSize, 1.05, 0.0001)`` and the
    ``histogram``'s LoadFromCheckpoint (ratio = totalWeight / sum of the integers, then
    updateMinAndMaxBucket) and Percentile (the end of the bucket where the running sum reaches
    percentile x totalWeight)."""

    def __init__(self, max_value: float, first: float, ratio: float = 1.05, epsilon: float = 0.001 * 0.1) -> None:
        self.first, self.ratio, self.epsilon = first, ratio, epsilon
        self.n = int(math.ceil(math.log(max_value * (ratio - 1) / first + 1) / math.log(ratio))) + 1
        self.weight = [0.0] * self.n
        self.total = 0.0
        self.min_bucket, self.max_bucket = self.n - 1, 0

    def start(self, bucket: int) -> float:
        return 0.0 if bucket == 0 else self.first * (self.ratio ** bucket - 1) / (self.ratio - 1)

    def load(self, checkpoint: dict) -> None:
        weights = {int(b): int(w) for b, w in (checkpoint.get("bucketWeights") or {}).items()}
        total = float(checkpoint.get("totalWeight") or 0.0)
        s = sum(weights.values())
        if s == 0:
            return
        ratio = total / s
        for b, w in weights.items():
            self.min_bucket, self.max_bucket = min(self.min_bucket, b), max(self.max_bucket, b)
            self.weight[b] += w * ratio
        self.total += total
        while self.weight[self.min_bucket] < self.epsilon and self.min_bucket < self.n - 1:
            self.min_bucket += 1
        while self.weight[self.max_bucket] < self.epsilon and self.max_bucket > 0:
            self.max_bucket -= 1

    def percentile(self, p: float) -> float:
        if self.weight[self.min_bucket] < self.epsilon:
            return 0.0
        partial, threshold, bucket = 0.0, p * self.total, self.min_bucket
        while bucket < self.max_bucket:
            partial += self.weight[bucket]
            if partial >= threshold:
                break
            bucket += 1
        return self.start(bucket + 1) if bucket < self.n - 1 else self.start(bucket)


def upstream_cpu() -> UpstreamHistogram:
    return UpstreamHistogram(1000.0, 0.01)        # model/aggregations_config.go CPU options


def upstream_memory() -> UpstreamHistogram:
    return UpstreamHistogram(1e12, 1e7)           # and memory's


def upstream_target(cpu: UpstreamHistogram, memory: UpstreamHistogram) -> tuple[int, int]:
    """logic/recommender.go's target chain: percentile 0.9, +15% (ScaleResource truncating),
    at least the pod minimum 25m / 250Mi (one container)."""
    milli = int(cpu.percentile(0.9) * 1000.0)
    byte = int(memory.percentile(0.9))
    return max(milli + int(milli * 0.15), 25), max(byte + int(byte * 0.15), 250 * MI)


# -- reading upstream's checkpoints ---------------------------------------------------------------------

def test_an_upstream_checkpoint_is_loaded_and_written_back_going_on():
    # upstream: TestAggregateContainerStateLoadFromCheckpoint's status (version v3, first T1, last
    # T2, 20 samples, {0: 10} of 33 and 44), as upstream's writer names it (<vpa>-<container>);
    # 8726e05236's e2e "is loaded correctly on recommender restart": the next checkpoint keeps
    # firstSampleStart and counts more samples
    upstream = {"apiVersion": "autoscaling.k8s.io/v1", "kind": "VerticalPodAutoscalerCheckpoint",
                "metadata": {"name": "hamster-vpa-hamster", "namespace": NS},
                "spec": {"vpaObjectName": "hamster-vpa", "containerName": "hamster"},
                "status": {"version": "v3", "lastUpdateTime": "2018-02-01T03:00:00Z", "firstSampleStart": T1,
                           "lastSampleStart": T2, "totalSamplesCount": 20,
                           "memoryHistogram": {"bucketWeights": {"0": 10}, "totalWeight": 33.0,
                                               "referenceTimestamp": None},
                           "cpuHistogram": {"bucketWeights": {"0": 10}, "totalWeight": 44.0,
                                            "referenceTimestamp": None}}}

    async def scenario(clock, client):
        await client.create(DEPLOY, deployment())
        await client.create(VPAS, vpa())
        await client.create(CHECKPOINTS, upstream)
        await pod(client, "hamster-1", {"app": "hamster"})
        r = Recommender(client, clock, FixedUsage(clock, [(NS, "hamster-1", "hamster")]), checkpoint_interval=0)
        assert await r.restore_checkpoints() == 1
        loaded = r.store.find(NS, "hamster-vpa", "hamster")
        state = (loaded.first_sample_start, loaded.last_sample_start, loaded.total_samples_count,
                 loaded.cpu.total_weight, loaded.memory.total_weight, loaded.cpu.is_empty(), loaded.memory.is_empty())
        await r.run_once()
        return state, (await client.get(CHECKPOINTS, "hamster-vpa-hamster", NS))["status"]

    state, written = run(scenario)
    assert state == (_unix(T1), _unix(T2), 20, 44.0, 33.0, False, False)
    assert written["firstSampleStart"] == T1 and written["totalSamplesCount"] == 21


def test_upstream_histogram_checkpoints_load_as_upstream_loads_them():
    # upstream: TestHistogramLoadFromCheckpoint ({0: 1, 1: 2} of total 6 -> weights 2 and 4) and
    # TestDecayingHistogramLoadFromCheckpoint (the reference timestamp taken, not empty)
    agg = aggregate_from_checkpoint({"version": "v3", "cpuHistogram": {
        "bucketWeights": {"0": 1, "1": 2}, "totalWeight": 6.0, "referenceTimestamp": "2018-01-02T03:04:05Z"}})
    cpu = agg.cpu
    assert cpu.weights[:2].tolist() == [2.0, 4.0] and cpu.total_weight == 6.0
    assert cpu.reference == _unix("2018-01-02T03:04:05Z") and not cpu.is_empty()


# -- what kvert writes ------------------------------------------------------------------------------------

def test_save_to_checkpoint_as_upstream_shapes_it():
    # upstream: TestAggregateContainerStateSaveToCheckpoint (first T1, last T2, 10 samples; a CPU
    # sample of 1 core weighing 33 at T2; memory samples of 1 and 1e7 bytes weighing 55 at T1:
    # one CPU bucket, two memory buckets, version v3), TestHistogramSaveToCheckpoint (one sample:
    # weight MaxCheckpointWeight); metav1.Time marshals RFC 3339 in whole seconds
    agg = AggregateContainerState()
    cpu, memory = agg.cpu, agg.memory
    cpu.add(1.0, 33.0, _unix(T2))
    memory.add([1.0, 1e7], 55.0, _unix(T1))
    agg.cpu, agg.memory = cpu, memory
    agg.first_sample_start_us, agg.last_sample_start_us = int(_unix(T1) * 1e6), int(_unix(T2) * 1e6)
    agg.total_samples_count = 10
    now = _unix("2018-02-01T03:00:00Z") + 0.25
    status = checkpoint_status(agg, now, exact=False)
    assert sorted(status) == ["cpuHistogram", "firstSampleStart", "lastSampleStart", "lastUpdateTime",
                              "memoryHistogram", "totalSamplesCount", "version"]
    assert (status["version"], status["firstSampleStart"], status["lastSampleStart"], status["totalSamplesCount"],
            status["lastUpdateTime"]) == ("v3", T1, T2, 10, "2018-02-01T03:00:00Z")
    assert list(status["cpuHistogram"]["bucketWeights"].values()) == [10000]
    assert list(status["memoryHistogram"]["bucketWeights"].values()) == [10000, 10000]
    for hist in (status["cpuHistogram"], status["memoryHistogram"]):
        assert RFC3339_SECONDS.match(hist["referenceTimestamp"])


def test_bucket_weights_are_normalised_as_upstream_normalises_them():
    # upstream: TestHistogramSaveToCheckpointForMultipleValues (weights 1, 10000, 50 -> 1, 10000,
    # 50 of total 10051), TestHistogramSaveToCheckpointDropsRelativelySmallValues (1 next to
    # 100000 rounds to 0 and is dropped; total 100001), TestHistogramSaveToCheckpointEmpty. The
    # samples are dated at a reference time (a midnight), where the decay factor is 1.
    midnight = _unix("2018-01-01T00:00:00Z")

    def saved(values: list[float], weights: list[float]) -> dict:
        agg = AggregateContainerState()
        cpu = agg.cpu
        for v, w in zip(values, weights):
            cpu.add(v, w, midnight)
        agg.cpu = cpu
        agg.total_samples_count = len(values)
        return checkpoint_status(agg, midnight, exact=False)["cpuHistogram"]

    buckets = [agg_bucket(v) for v in (1.0, 2.0, 3.0)]
    assert len(set(buckets)) == 3
    assert saved([1.0, 2.0, 3.0], [1.0, 10000.0, 50.0]) == {
        "referenceTimestamp": "2018-01-01T00:00:00Z", "totalWeight": 10051.0,
        "bucketWeights": {str(buckets[0]): 1, str(buckets[1]): 10000, str(buckets[2]): 50}}
    assert saved([1.0, 2.0], [1.0, 100000.0]) == {
        "referenceTimestamp": "2018-01-01T00:00:00Z", "totalWeight": 100001.0,
        "bucketWeights": {str(buckets[1]): 10000}}
    # empty: Go's omitempty leaves out the weights, the total and the count; zero times are null
    empty = checkpoint_status(AggregateContainerState(), midnight, exact=False)
    assert empty == {"lastUpdateTime": "2018-01-01T00:00:00Z", "version": "v3",
                     "cpuHistogram": {"referenceTimestamp": None}, "memoryHistogram": {"referenceTimestamp": None},
                     "firstSampleStart": None, "lastSampleStart": None}


def agg_bucket(cores: float) -> int:
    """The CPU bucket of a value, as upstream's FindBucket (upstream_cpu's options)."""
    h = upstream_cpu()
    return int(math.log(cores * (h.ratio - 1) / h.first + 1) / math.log(h.ratio))


class VariedUsage:
    """Three pods whose CPU and memory vary sample to sample, deterministically."""

    def __init__(self, clock) -> None:
        self.clock = clock
        self.keys = [(NS, f"hamster-{i}", "hamster") for i in range(3)]
        self.rng = np.random.default_rng(26)

    async def usage_table(self) -> UsageTable:
        n = len(self.keys)
        return UsageTable(self.keys, 0, np.full(n, self.clock.now()), self.rng.uniform(0.1, 1.9, n),
                          self.rng.uniform(150 * MI, 900 * MI, n))


def test_what_kvert_writes_upstream_loads_into_the_same_histogram():
    # the written object: checkpoint_writer.go's (name <vpa>-<container>, no labels, annotations or
    # owner references, spec with the VPA and container names), SaveToCheckpoint's status; upstream's
    # LoadFromCheckpoint (above) rebuilds the histograms kvert loads from it, and the CPU
    # percentiles of the recommender that wrote it (memory leaves out the open windows, as
    # upstream's writer does: compared with what a restarted recommender recommends)
    async def scenario(clock, client):
        await client.create(DEPLOY, deployment())
        await client.create(VPAS, vpa())
        for i in range(3):
            await pod(client, f"hamster-{i}", {"app": "hamster"})
        # 10-minute memory windows (upstream's --memory-aggregation-interval) so that most are closed
        r = Recommender(client, clock, VariedUsage(clock), checkpoint_interval=0,
                        config=RecommenderConfig(memory_aggregation_interval=600.0))
        for _ in range(240):
            await r.run_once()
            await clock.sleep(60)
        await r.run_once()
        live = r.store.find(NS, "hamster-vpa", "hamster").cpu
        checkpoint = await client.get(CHECKPOINTS, "hamster-vpa-hamster", NS)
        restarted = Recommender(client, clock, NoMetrics(), checkpoint_interval=math.inf,
                                config=RecommenderConfig(memory_aggregation_interval=600.0))
        await restarted.restore_checkpoints()
        status = (await restarted.run_once())[(NS, "hamster-vpa")]
        return live, checkpoint, status

    live, cp, status = run(scenario)
    meta = cp["metadata"]
    assert (meta["name"], meta["namespace"]) == ("hamster-vpa-hamster", NS)
    assert not {"labels", "annotations", "ownerReferences"} & set(meta)
    assert cp["spec"] == {"vpaObjectName": "hamster-vpa", "containerName": "hamster"}
    st = cp["status"]
    assert sorted(st) == ["cpuHistogram", "firstSampleStart", "lastSampleStart", "lastUpdateTime",
                          "memoryHistogram", "totalSamplesCount", "version"]
    assert st["version"] == "v3" and st["totalSamplesCount"] == 3 * 241
    assert all(RFC3339_SECONDS.match(st[k]) for k in ("firstSampleStart", "lastSampleStart", "lastUpdateTime"))
    for name in ("cpuHistogram", "memoryHistogram"):
        assert max(st[name]["bucketWeights"].values()) == 10000
        assert all(isinstance(w, int) and w > 0 for w in st[name]["bucketWeights"].values())
        assert RFC3339_SECONDS.match(st[name]["referenceTimestamp"])
    cpu, memory = upstream_cpu(), upstream_memory()
    cpu.load(st["cpuHistogram"])
    memory.load(st["memoryHistogram"])
    mine = aggregate_from_checkpoint(cp)
    for theirs, ours in ((cpu, mine.cpu), (memory, mine.memory)):
        assert (theirs.min_bucket, theirs.max_bucket) == (ours.min_bucket, ours.max_bucket)
        np.testing.assert_allclose(theirs.weight, ours.weights, rtol=1e-12)
        assert theirs.total == ours.total_weight
    for p in (0.5, 0.9, 0.95):
        assert cpu.percentile(p) == live.percentile(p)
    target = recommendations({"status": status})["hamster"]["target"]
    assert upstream_target(cpu, memory) == (Quantity.parse(target["cpu"]).milli_value(),
                                            Quantity.parse(target["memory"]).value())


# -- upstream's writing rules ---------------------------------------------------------------------------------

def test_every_container_gets_a_checkpoint_and_progress_is_made_within_the_timeout():
    # upstream: TestStoreCheckpointsMakesProgressEvenForCancelledContext (5 VPAs of pods with two
    # containers and no samples; 2 workers and a context already done: the checkpoints of 2 VPAs,
    # 4 in all) and TestGetVpasToCheckpointSorts (the VPAs written longest ago go first)
    async def scenario(clock, client):
        for i in range(5):
            await client.create(DEPLOY, deployment(f"pod-{i}", containers=("container-1", "container-2")))
            await client.create(VPAS, vpa(f"vpa-{i}", f"pod-{i}"))
            await pod(client, f"pod-{i}-abcde", {"app": f"pod-{i}"}, containers=("container-1", "container-2"))
        r = Recommender(client, clock, NoMetrics(), checkpoint_interval=0, update_worker_count=2,
                        checkpoints_timeout=0)
        counts = []
        for _ in range(3):
            await r.run_once()
            counts.append(len((await client.list(CHECKPOINTS, namespace=NS))["items"]))
            await clock.sleep(60)
        first = await client.get(CHECKPOINTS, "vpa-0-container-1", NS)
        return counts, first["status"]

    counts, empty = run(scenario)
    assert counts == [4, 8, 10]
    assert {k: v for k, v in empty.items() if k != "lastUpdateTime"} == {
        "version": "v3", "cpuHistogram": {"referenceTimestamp": None},
        "memoryHistogram": {"referenceTimestamp": None}, "firstSampleStart": None, "lastSampleStart": None}


def test_orphans_are_collected_whichever_recommender_serves_the_vpa():
    # upstream: TestCanCleanupCheckpoints: of the checkpoints of VPAs balanced, performance,
    # savings, default (each naming its recommender) and nonExistentVPA, the default recommender
    # deletes only nonExistentVPA's; an ignored namespace is not cleaned (GarbageCollectCheckpoints)
    async def scenario(clock, client):
        await client.create("namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ignored"}})
        names = ("balanced", "performance", "savings", "default")
        for name in names:
            await client.create(VPAS, vpa(name, "hamster", recommenders=[name]))
        # (nonExistentVPA lower-cased: an API server validates the names upstream's fake client takes)
        for ns, name in [(NS, n) for n in names + ("nonexistentvpa",)] + [("ignored", "nonexistentvpa")]:
            await client.create(CHECKPOINTS, {"apiVersion": "autoscaling.k8s.io/v1",
                                              "kind": "VerticalPodAutoscalerCheckpoint",
                                              "metadata": {"name": name, "namespace": ns},
                                              "spec": {"vpaObjectName": name, "containerName": "container"}})
        r = Recommender(client, clock, NoMetrics(), ignored_namespaces=("ignored",), checkpoint_gc_interval=600)
        await r.run_once()
        kept = len((await client.list(CHECKPOINTS))["items"])
        await clock.sleep(600)
        await r.run_once()
        assert kept == 6          # the first collection is an interval after the start (lastCheckpointGC)
        return sorted(f"{c['metadata']['namespace']}/{c['metadata']['name']}"
                      for c in (await client.list(CHECKPOINTS))["items"])

    assert run(scenario) == ["default/balanced", "default/default", "default/performance", "default/savings",
                             "ignored/nonexistentvpa"]


class FlakyClient:
    """The in-process client whose first list of checkpoints fails, as an API server not ready."""

    def __init__(self, client) -> None:
        self._client = client
        self.failed = False

    def __getattr__(self, name: str):
        return getattr(self._client, name)

    async def list(self, resource: str, **kw):
        if resource == CHECKPOINTS and not self.failed:
            self.failed = True
            raise InternalError("the server is not ready")
        return await self._client.list(resource, **kw)


def test_a_restarted_recommender_goes_on_from_its_checkpoints():
    # upstream 1.8 (8726e05236, "checkpoints no longer restart recommendations from scratch"): the
    # checkpoints are loaded once the recommender can read them -- a first failed read is tried
    # again, and no checkpoint is written over them before -- and the next checkpoint keeps
    # firstSampleStart while totalSamplesCount grows
    async def scenario(clock, client):
        await client.create(DEPLOY, deployment())
        await client.create(VPAS, vpa())
        await pod(client, "hamster-1", {"app": "hamster"})
        usage = FixedUsage(clock, [(NS, "hamster-1", "hamster")])
        first = Recommender(client, clock, usage, checkpoint_interval=0)
        for _ in range(30):
            await first.run_once()
            await clock.sleep(60)
        before = (await client.get(CHECKPOINTS, "hamster-vpa-hamster", NS))["status"]
        flaky = FlakyClient(client)
        restarted = Recommender(flaky, clock, usage, checkpoint_interval=0)
        assert await restarted.restore_checkpoints() == 0 and not restarted.restored
        await restarted.run_once()                      # reads them now, then writes them on
        after = (await client.get(CHECKPOINTS, "hamster-vpa-hamster", NS))["status"]
        recommended = recommendations(await get_vpa(client))["hamster"]
        return before, after, recommended, restarted

    before, after, recommended, restarted = run(scenario)
    assert restarted.restored
    assert after["firstSampleStart"] == before["firstSampleStart"]
    assert after["totalSamplesCount"] == before["totalSamplesCount"] + 1
    assert Quantity.parse(recommended["upperBound"]["cpu"]).milli_value() < 10**6    # not a fresh history's


def test_prometheus_storage_neither_reads_nor_writes_checkpoints():
    # upstream: recommender_controller.go useCheckpoints := config.Storage != "prometheus" (no
    # InitFromCheckpoints, no MaintainCheckpoints)
    async def scenario(clock, client):
        await client.create(DEPLOY, deployment())
        await client.create(VPAS, vpa())
        await pod(client, "hamster-1", {"app": "hamster"})
        agg = AggregateContainerState()
        agg.add_samples("old", clock.now() - 3600, cpu=2.0, memory=900.0 * MI)
        await client.create(CHECKPOINTS, {"apiVersion": "autoscaling.k8s.io/v1",
                                          "kind": "VerticalPodAutoscalerCheckpoint",
                                          "metadata": {"name": "hamster-vpa-hamster", "namespace": NS},
                                          "spec": {"vpaObjectName": "hamster-vpa", "containerName": "hamster"},
                                          "status": checkpoint_status(agg, clock.now(), exact=False)})
        written = (await client.get(CHECKPOINTS, "hamster-vpa-hamster", NS))["metadata"]["resourceVersion"]
        r = Recommender(client, clock, NoMetrics(), use_checkpoints=False, checkpoint_interval=0)
        await r.run_once()
        cp = await client.get(CHECKPOINTS, "hamster-vpa-hamster", NS)
        return written, cp["metadata"]["resourceVersion"], recommendations(await get_vpa(client))["hamster"]

    written, now, rec = run(scenario)
    assert written == now
    assert rec["target"] == {"cpu": "25m", "memory": "250Mi"}        # the checkpoint's 2 cores were not read
