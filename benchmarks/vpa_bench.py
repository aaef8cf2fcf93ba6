"""VPA recommender throughput: samples ingested per second, recommendations and checkpoints.

    python benchmarks/vpa_bench.py [--pods 1000] [--samples 1000] [--aggregates 1000]

* bulk ingest: one aggregate, --pods pods x --samples samples each (cpu and memory per sample,
  history replay as from Prometheus or a CSV file), one ``add_samples`` call;
* live ticks: a batch of one sample per pod (what a metrics poll brings) for 1440 ticks;
* recommend: ``recommend`` for --aggregates VPAs with a day of history each;
* checkpoints: write + read back one checkpoint per aggregate;
* CSV: parsing a samples file (``kvert vpa recommend --samples``).
"""

from __future__ import annotations

import argparse
import io
import time

import numpy as np

from kvert.vpa.aggregate import AggregateContainerState
from kvert.vpa.checkpoint import aggregate_from_checkpoint, checkpoint_for
from kvert.vpa.recommendation import recommend
from kvert.vpa.samples import parse_samples

T0 = 1714521600.0


def bulk(pods: int, per_pod: int) -> None:
    rng = np.random.default_rng(1)
    n = pods * per_pod
    codes = np.tile(np.arange(pods), per_pod)                       # interleaved, as time-ordered data is
    times = T0 + np.repeat(np.arange(per_pod) * 60.0, pods)
    cpu = rng.gamma(4, 0.1, n)
    mem = rng.normal(3e8, 3e7, n)
    names = [f"pod-{i}" for i in range(pods)]
    AggregateContainerState().add_samples(codes[:1000], times[:1000], cpu=cpu[:1000], memory=mem[:1000],
                                          pod_names=names)   # warm-up
    for label, kwargs in (("cpu + memory", {"cpu": cpu, "memory": mem}), ("cpu only", {"cpu": cpu}),
                          ("memory only", {"memory": mem})):
        agg = AggregateContainerState()
        start = time.perf_counter()
        agg.add_samples(codes, times, pod_names=names, **kwargs)
        dt = time.perf_counter() - start
        print(f"bulk ingest ({label}): {n:,} samples in {dt:.3f} s = {n / dt / 1e6:.2f} M samples/s"
              + (f" ({2 * n / dt / 1e6:.2f} M measurements/s)" if len(kwargs) == 2 else ""))


def ticks(pods: int, count: int = 1440) -> None:
    rng = np.random.default_rng(2)
    names = [f"pod-{i}" for i in range(pods)]
    codes = np.arange(pods)
    agg = AggregateContainerState()
    cpu = rng.gamma(4, 0.1, (count, pods))
    mem = rng.normal(3e8, 3e7, (count, pods))
    start = time.perf_counter()
    for k in range(count):
        agg.add_samples(codes, np.full(pods, T0 + 60.0 * k), cpu=cpu[k], memory=mem[k], pod_names=names)
    dt = time.perf_counter() - start
    n = count * pods
    print(f"live ticks: {count} ticks x {pods} pods in {dt:.3f} s = {n / dt / 1e6:.2f} M samples/s, "
          f"{dt / count * 1e3:.2f} ms per tick")


def recommendations(aggregates: int) -> list[AggregateContainerState]:
    rng = np.random.default_rng(3)
    t = T0 + np.arange(0, 86400.0, 60.0)
    aggs = []
    for _ in range(aggregates):
        a = AggregateContainerState()
        a.add_samples("p", t, cpu=rng.gamma(4, 0.1, t.size), memory=rng.normal(3e8, 3e7, t.size))
        aggs.append(a)
    start = time.perf_counter()
    for a in aggs:
        recommend({"app": a})
    dt = time.perf_counter() - start
    print(f"recommend: {aggregates} VPAs in {dt:.3f} s = {aggregates / dt:,.0f} recommendations/s")
    start = time.perf_counter()
    cps = [checkpoint_for(a, "ns", f"vpa-{i}", "app", T0 + 3 * 86400) for i, a in enumerate(aggs)]
    dt_w = time.perf_counter() - start
    start = time.perf_counter()
    for cp in cps:
        aggregate_from_checkpoint(cp)
    dt_r = time.perf_counter() - start
    print(f"checkpoints: write {aggregates / dt_w:,.0f}/s, read {aggregates / dt_r:,.0f}/s")
    return aggs


def csv(rows: int) -> None:
    lines = ["timestamp,pod,container,cpu,memory,event"]
    for k in range(rows):
        lines.append(f"{int(T0) + 60 * (k // 10)},pod-{k % 10},app,0.{k % 997:03d},{300000000 + k},")
    text = "\n".join(lines) + "\n"
    start = time.perf_counter()
    s = parse_samples(io.StringIO(text), "bench.csv")
    dt = time.perf_counter() - start
    print(f"CSV: {len(s):,} rows parsed in {dt:.3f} s = {len(s) / dt / 1e3:,.0f} k rows/s")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--pods", type=int, default=1000)
    p.add_argument("--samples", type=int, default=1000, help="samples per pod for the bulk ingest")
    p.add_argument("--aggregates", type=int, default=1000)
    args = p.parse_args()
    bulk(args.pods, args.samples)
    ticks(args.pods)
    recommendations(args.aggregates)
    csv(200_000)


if __name__ == "__main__":
    main()
