"""Batch workloads sized by their running mean (seed 002's "批量工作负载"; kvert's opt-in
``vpa.kvert.io/workload``).

Expected values are derived by hand from the definitions, not from running kvert: upstream's
exponential buckets (bucket n >= 1 starts at ``0.01 * (1.05**n - 1) / 0.05`` cores, a value v
falls in ``floor(log(v * 0.05 / 0.01 + 1) / log(1.05))``), a percentile answers its bucket's end,
the mean is ``sum(weight * midpoint) / sum(weight)`` over the buckets (kvert's definition,
kvert.vpa.histogram), a sample's weight doubles per half-life of age difference, the margin adds
``int(amount * fraction)`` and amounts are truncated to whole millicores (upstream's
``ResourceAmount``).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from kvert.client.cache import InformerFactory
from kvert.clock import VirtualClock
from kvert.vpa.aggregate import AggregateContainerState, AggregateStore
from kvert.vpa.estimators import BOUND_ORDER, CpuMeanEstimator, PercentileEstimator, estimate_rows
from kvert.vpa.histogram import DecayingHistogram, HistogramBank
from kvert.vpa.recommendation import (DEFAULT_CONFIG, recommend_containers, resolve_workload, row_parameters,
                                      runs_to_completion)
from kvert.vpa.recommender import VPAS, Recommender

from tests.kubelet.test_agent_support import cluster
from tests.vpa.test_recommender_events import TableSource

DAY = 86400.0
T0 = 1714521600.0      # a whole number of days after the epoch: a 24h reference falls on it


def start(n: int) -> float:
    """Upstream's bucket start for the CPU histogram (first bucket 0.01 core, ratio 1.05)."""
    return 0.0 if n == 0 else 0.01 * (1.05 ** n - 1) / 0.05


def bucket(v: float) -> int:
    return 0 if v < 0.01 else int(math.floor(math.log(v * 0.05 / 0.01 + 1) / math.log(1.05)))


def mid(v: float) -> float:
    b = bucket(v)
    return (start(b) + start(b + 1)) / 2


def end(v: float) -> float:
    return start(bucket(v) + 1)


def margin(amount: int, fraction: float = 0.15) -> int:
    return amount + int(amount * fraction)


# -- the mean of a decaying histogram ---------------------------------------------------------------

def test_the_mean_weighs_each_bucket_midpoint_by_its_decayed_weight():
    h = DecayingHistogram(DEFAULT_CONFIG.cpu_histogram_options(), DAY)
    assert h.mean() == 0.0                                     # empty
    h.add(0.1, 1.0, T0)
    h.add(2.0, 1.0, T0 + DAY)                                   # a half-life newer: weighs twice as much
    # buckets by hand: 0.1 -> 8 (0.09549..0.11027), 2.0 -> 49 (1.98426..2.09348)
    assert (bucket(0.1), bucket(2.0)) == (8, 49)
    expected = (mid(0.1) * 1 + mid(2.0) * 2) / 3
    assert h.mean() == pytest.approx(expected, rel=1e-12)
    assert expected == pytest.approx((0.1028785 + 2 * 2.0388740) / 3, rel=1e-5)
    # a constant usage: the mean is its bucket's midpoint, below the percentile (the bucket's end)
    c = DecayingHistogram(DEFAULT_CONFIG.cpu_histogram_options(), DAY)
    c.add(np.full(10, 0.5), 1.0, T0 + np.arange(10) * 60.0)
    assert c.mean() == pytest.approx(mid(0.5)) and c.percentile(0.9) == pytest.approx(end(0.5))


def test_the_bank_computes_every_row_mean_at_once_as_the_single_histogram():
    options = DEFAULT_CONFIG.cpu_histogram_options()
    rng = np.random.default_rng(2)
    bank = HistogramBank(options, 6)
    singles = []
    for row in range(6):
        bank.reset(row, DAY if row % 2 else 3600.0)
        h = DecayingHistogram(options, DAY if row % 2 else 3600.0)
        if row != 3:                                            # row 3 stays empty
            values, times = rng.uniform(0, 4, 50), T0 + np.sort(rng.uniform(0, 2 * DAY, 50))
            bank.add(np.full(50, row), values, 0.1, times)
            h.add(values, 0.1, times)
        singles.append(h)
    means = bank.means(np.arange(6))
    assert means[3] == 0.0
    assert [float(m) for m in means] == [h.mean() for h in singles]
    assert bank.means(np.array([5, 0])).tolist() == [singles[5].mean(), singles[0].mean()]


# -- the batch estimator ------------------------------------------------------------------------------

def _half_busy(config=DEFAULT_CONFIG) -> AggregateContainerState:
    """Ten pods sampled at one instant: five at 0.1 core, five at 2.0 cores; memory 300 MB."""
    agg = AggregateContainerState(config, T0)
    agg.add_samples([f"p{i}" for i in range(10)], np.full(10, T0), cpu=[0.1] * 5 + [2.0] * 5, memory=3e8)
    return agg


def test_a_batch_workload_gets_its_mean_cpu_and_keeps_its_memory_peaks():
    service = _half_busy()
    batch_cfg, problems = DEFAULT_CONFIG.with_annotations({"vpa.kvert.io/workload": "batch"})
    assert problems == [] and batch_cfg.workload == "batch"
    batch = _half_busy(batch_cfg)
    vpa = {"metadata": {"name": "v", "namespace": "ns", "annotations": {"vpa.kvert.io/workload": "batch"}}}
    [up] = recommend_containers({"c": service})
    [mean] = recommend_containers({"c": batch}, vpa)
    # upstream: p90 of the ten equal samples reaches 0.9 of the weight in 2.0's bucket -> its end
    assert up.amounts()["cpu"] == margin(int(end(2.0) * 1000))
    # batch: (mid(0.1) + mid(2.0)) / 2 = 1.0708... cores -> 1070m, +15% -> 1230m
    assert mean.amounts()["cpu"] == margin(int((mid(0.1) + mid(2.0)) / 2 * 1000)) == 1230
    assert mean.amounts()["memory"] == up.amounts()["memory"]
    # the bounds bracket the mean: lower from min(p50, mean), upper from max(p95, mean)
    lo, target, hi = (mean.amounts(b)["cpu"] for b in ("lowerBound", "target", "upperBound"))
    assert lo <= target <= hi


def test_the_cpu_bounds_are_widened_to_the_mean():
    agg = AggregateContainerState(DEFAULT_CONFIG, T0)
    # 9 samples at 0.1 core, 1 at 4 cores: p50 and p90 are 0.1's bucket end, p95 4's
    agg.add_samples([f"p{i}" for i in range(10)], np.full(10, T0), cpu=[0.1] * 9 + [4.0], memory=3e8)
    m = (9 * mid(0.1) + mid(4.0)) / 10
    assert m > end(0.1)
    assert CpuMeanEstimator(PercentileEstimator(0.5, 0.5), "lower").estimate(agg)["cpu"] == int(end(0.1) * 1000)
    assert CpuMeanEstimator(PercentileEstimator(0.9, 0.9), "target").estimate(agg)["cpu"] == int(m * 1000)
    assert CpuMeanEstimator(PercentileEstimator(0.95, 0.95), "upper").estimate(agg)["cpu"] == int(end(4.0) * 1000)
    # a percentile below the mean is raised to it for the upper bound, one above lowered for the lower
    assert CpuMeanEstimator(PercentileEstimator(0.5, 0.5), "upper").estimate(agg)["cpu"] == int(m * 1000)
    with pytest.raises(ValueError):
        CpuMeanEstimator(PercentileEstimator(0.5, 0.5), "median")


def test_batch_rows_and_service_rows_estimated_together_equal_the_chains():
    store = AggregateStore()
    vpas = [{"metadata": {"name": f"v{i}", "namespace": "ns",
                          "annotations": {"vpa.kvert.io/workload": w} if w else {}}}
            for i, w in enumerate(("batch", None, "batch", "service"))]
    rng = np.random.default_rng(5)
    for vpa in vpas:
        agg = store.get_for_vpa(vpa, "c")
        for k in range(30):
            agg.add_samples(f"p{k % 3}", T0 + k * 60.0, cpu=float(rng.uniform(0, 3)),
                            memory=float(rng.uniform(1e8, 4e8)))
    bank = next(iter(store.banks.values()))
    aggs = [store.for_vpa("ns", v["metadata"]["name"])["c"] for v in vpas]
    rows = np.array([a.row for a in aggs])
    configs = [DEFAULT_CONFIG.for_vpa(v)[0] for v in vpas]
    got = estimate_rows(bank, rows, row_parameters(configs, np.ones(rows.size)))
    for i, (vpa, agg) in enumerate(zip(vpas, aggs)):
        [rec] = recommend_containers({"c": agg}, vpa)
        for b, name in enumerate(BOUND_ORDER):
            assert {"cpu": int(got[i, b, 0]), "memory": int(got[i, b, 1])} == rec.amounts(name)


# -- the annotation and auto ----------------------------------------------------------------------------

def test_the_workload_annotation_takes_service_batch_or_auto():
    for value in ("service", "batch", "auto"):
        cfg, problems = DEFAULT_CONFIG.with_annotations({"vpa.kvert.io/workload": value})
        assert problems == [] and cfg.workload == value
    cfg, problems = DEFAULT_CONFIG.with_annotations({"vpa.kvert.io/workload": "job"})
    assert cfg.workload == "service" and problems and "vpa.kvert.io/workload" in problems[0]
    assert DEFAULT_CONFIG.workload == "service"                  # upstream's model is the default
    # with the in-place model too
    cfg, _ = DEFAULT_CONFIG.with_annotations({"vpa.kvert.io/model": "in-place", "vpa.kvert.io/workload": "batch"})
    assert (cfg.model, cfg.workload) == ("in-place", "batch")
    auto, _ = DEFAULT_CONFIG.with_annotations({"vpa.kvert.io/workload": "auto"})
    assert resolve_workload(auto, True).workload == "batch"
    assert resolve_workload(auto, False).workload == "service"
    assert resolve_workload(DEFAULT_CONFIG, True).workload == "service"   # only auto is decided


def _status(name: str, exit_code: int, reason: str) -> dict:
    return {"containerStatuses": [{"name": name, "lastState": {"terminated": {
        "exitCode": exit_code, "reason": reason, "finishedAt": "2024-05-01T00:20:00Z"}}}]}


def test_pods_that_run_to_completion():
    assert runs_to_completion({"spec": {"restartPolicy": "Never"}})
    assert runs_to_completion({"spec": {"restartPolicy": "OnFailure"}})
    assert not runs_to_completion({"spec": {"restartPolicy": "Always"}})
    assert not runs_to_completion(None)
    worker = {"spec": {"restartPolicy": "Always"}, "status": _status("w", 0, "Completed")}
    assert runs_to_completion(worker) and runs_to_completion(worker, "w")
    assert not runs_to_completion(worker, "other")
    assert not runs_to_completion({"spec": {}, "status": _status("w", 137, "OOMKilled")})


# -- the live recommender ----------------------------------------------------------------------------------

def test_the_recommender_sizes_auto_vpas_of_pods_that_complete_by_their_mean():
    """Three VPAs over pods using a constant 0.5 core: ``auto`` over Job-like pods (restartPolicy
    Never), ``auto`` over a Deployment's worker whose last run exited 0, and ``auto`` over a
    service. 0.5 core is in bucket 25 (0.47727..0.51114): the percentile answers its end, 511m,
    +15% = 587m; the mean its midpoint, 494m, +15% = 568m."""
    assert bucket(0.5) == 25
    assert margin(int(end(0.5) * 1000)) == 587 and margin(int(mid(0.5) * 1000)) == 568
    clock = VirtualClock()
    ns = "default"

    def pod(name: str, app: str, restart: str = "Always") -> dict:
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns, "labels": {"app": app}},
                "spec": {"restartPolicy": restart, "containers": [
                    {"name": "app", "image": "busybox", "resources": {"requests": {"cpu": "100m", "memory": "50Mi"}}}]}}

    async def main():
        client = await cluster(clock)
        for app in ("job", "worker", "web"):
            await client.create("apps/deployments", {
                "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": app, "namespace": ns},
                "spec": {"selector": {"matchLabels": {"app": app}},
                         "template": {"metadata": {"labels": {"app": app}},
                                      "spec": {"containers": [{"name": "app", "image": "busybox"}]}}}})
            await client.create(VPAS, {"apiVersion": "autoscaling.k8s.io/v1", "kind": "VerticalPodAutoscaler",
                                       "metadata": {"name": app, "namespace": ns,
                                                    "annotations": {"vpa.kvert.io/workload": "auto"}},
                                       "spec": {"targetRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                                                              "name": app}}})
        for body in (pod("job-1", "job", "Never"), pod("worker-1", "worker"), pod("web-1", "web")):
            created = await client.create("pods", body)
            # running: the recommender leaves Pending pods alone, as upstream's pod lister
            created["status"] = {**(created.get("status") or {}), "phase": "Running"}
            await client.update_status("pods", created)
        informers = InformerFactory(client, clock)
        source = TableSource(clock, [(ns, "job-1", "app"), (ns, "worker-1", "app"), (ns, "web-1", "app")])
        r = Recommender(client, clock, source, informers=informers)
        r.restored = True

        async def targets():
            out = {}
            for app in ("job", "worker", "web"):
                vpa = await client.get(VPAS, app, ns)
                out[app] = vpa["status"]["recommendation"]["containerRecommendations"][0]["target"]["cpu"]
            return out

        await r.run_once()
        assert await targets() == {"job": "568m", "worker": "587m", "web": "587m"}
        # the worker's container ran to completion (exit code 0) and was restarted
        worker = await client.get("pods", "worker-1", ns)
        worker["status"] = {**(worker.get("status") or {}), **_status("app", 0, "Completed")}
        await client.update_status("pods", worker)
        await clock.sleep(60)
        await r.run_once()
        assert await targets() == {"job": "568m", "worker": "568m", "web": "587m"}
        assert r.store.find(ns, "worker", "app").batch and not r.store.find(ns, "web", "app").batch
        informers.stop()

    clock.run(main())
