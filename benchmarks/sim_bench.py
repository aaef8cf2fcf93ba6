"""Simulated seconds per wall second: the demo scenario, and a large cluster scenario
(default 1000 nodes, 20000 pods, 7 days; scale it down with the flags to get a figure in
minutes). Prints figures; asserts nothing.

usage: python benchmarks/sim_bench.py [--nodes N] [--pods P] [--days D] [--skip-demo]
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


def measure(label: str, scenario_path: Path) -> None:
    scn = load_scenario(scenario_path)
    started = time.perf_counter()
    runs = simulate(scn, None, skip_unavailable=False)
    wall = time.perf_counter() - started
    simulated = scn.duration * len(runs)
    print(f"  {label:<40} {simulated / wall:10,.0f} simulated s per wall s "
          f"({simulated / 86400:g} days in {wall:.1f} s)")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--pods", type=int, default=20000)
    parser.add_argument("--days", type=float, default=7.0)
    parser.add_argument("--skip-demo", action="store_true")
    args = parser.parse_args(argv)
    print("simulation speed:")
    if not args.skip_demo:
        measure("demo (hamster, 3 policies x 3 days)", DEMO)
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        path = large_scenario(args.nodes, args.pods, args.days, Path(tmp) / "large.yaml")
        measure(f"{args.nodes} nodes, {args.pods} pods, {args.days:g} days", path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
