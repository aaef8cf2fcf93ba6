"""Simulated seconds per wall second: the demo scenario, and a large cluster scenario
(default 1000 nodes, 20000 pods, 7 days). Prints figures; asserts nothing.

For each run it prints the start-up (building the cluster, creating and starting every pod:
wall time until the first sample) and the steady rate after it. The large scenario runs its
first ``--hours`` simulated hours (default 1; ``--full`` for all ``--days``) and the wall
time of the whole ``--days`` is projected from the steady rate (the per-minute work --
recommender, updater, metrics, heartbeats -- does not grow with the days simulated: the
histograms have a fixed size).

usage: python benchmarks/sim_bench.py [--nodes N] [--pods P] [--days D] [--hours H | --full] [--skip-demo]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import yaml

from kvert.sim.engine import simulate
from kvert.sim.scenario import load_scenario

DEMO = Path(__file__).resolve().parents[1] / "src" / "kvert" / "sim" / "demo.yaml"


def large_scenario(nodes: int, pods: int, days: float, path: Path) -> Path:
    """Many small deployments of 10 replicas with diurnal use, under in-place VPA."""
    deployments = max(1, pods // 10)
    doc = {
        "name": f"large-{nodes}n-{pods}p", "duration": f"{days}d", "seed": 1, "tick": "60s",
        "sampleInterval": "600s",
        "nodes": {"count": nodes, "capacity": {"cpu": "16", "memory": "64Gi"}},
        "workloads": [{"name": f"app-{i}", "replicas": 10, "containers": [{
            "name": "app", "requests": {"cpu": "100m", "memory": "128Mi"},
            "usage": {"cpu": {"profile": "diurnal", "min": "50m", "max": "300m", "period": "24h"},
                      "memory": {"profile": "constant", "value": "150Mi"}}}]}
            for i in range(deployments)],
        "policies": [{"name": "in-place", "vpa": {"updateMode": "InPlaceOrRecreate"}}],
    }
    path.write_text(yaml.safe_dump(doc))
    return path


class Clocking:
    """Progress callback: wall time of each policy's first and last sample."""

    def __init__(self) -> None:
        self.first: dict[str, tuple[float, float]] = {}     # policy -> (wall, fraction)
        self.last: dict[str, tuple[float, float]] = {}

    def __call__(self, policy: str, fraction: float) -> None:
        now = time.perf_counter()
        self.first.setdefault(policy, (now, fraction))
        self.last[policy] = (now, fraction)


def measure(label: str, scenario_path: Path, hours: float | None = None) -> None:
    scn = load_scenario(scenario_path)
    full = scn.duration
    if hours is not None:
        scn.duration = min(full, hours * 3600)
    clocking = Clocking()
    started = time.perf_counter()
    runs = simulate(scn, clocking, skip_unavailable=False)
    wall = time.perf_counter() - started
    simulated = scn.duration * len(runs)
    print(f"  {label:<40} {simulated / wall:10,.0f} simulated s per wall s "
          f"({simulated / 86400:g} days in {wall:.1f} s)")
    steady_sim = steady_wall = startup = 0.0
    previous_end = started
    for policy, (t1, f1) in clocking.first.items():         # policies run one after another
        t2, f2 = clocking.last[policy]
        startup += t1 - previous_end
        steady_sim += (f2 - f1) * scn.duration
        steady_wall += t2 - t1
        previous_end = t2
    if steady_wall > 0:
        rate = steady_sim / steady_wall
        print(f"  {'':<40} start-up {startup:.1f} s, then {rate:10,.0f} simulated s per wall s")
        if hours is not None and full > scn.duration:
            projected = startup + len(runs) * full / rate
            print(f"  {'':<40} projected for {full / 86400:g} days: {projected / 3600:.1f} h of wall time")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--pods", type=int, default=20000)
    parser.add_argument("--days", type=float, default=7.0)
    parser.add_argument("--hours", type=float, default=1.0,
                        help="run only the first H simulated hours of the large scenario and project")
    parser.add_argument("--full", action="store_true", help="run all --days of the large scenario")
    parser.add_argument("--skip-demo", action="store_true")
    args = parser.parse_args(argv)
    print("simulation speed:")
    if not args.skip_demo:
        measure("demo (hamster, 3 policies x 3 days)", DEMO)
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        path = large_scenario(args.nodes, args.pods, args.days, Path(tmp) / "large.yaml")
        measure(f"{args.nodes} nodes, {args.pods} pods, {args.days:g} days", path,
                None if args.full else args.hours)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
