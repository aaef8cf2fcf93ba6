"""``kvert vpa tune``: the quality suite's acceptance and the default trial budget.

* acceptance: the six-workload quality suite (examples/scenarios/quality.yaml, one day) tuned
  with the defaults (minimize slack subject to oom_kills<=baseline, the baseline upstream's
  Recreate; tuned under InPlaceOrRecreate): the final simulation's OOM kills and slack per
  workload against Recreate's and InPlaceOrRecreate's (upstream's defaults), and whether every
  emitted VPA has no more OOM kills than either and less slack;
* budget: a 10-workload scenario over one day (the suite's six plus a second steady, diurnal,
  spiky and OOM-prone, on six nodes) tuned with the default --trials on --parallel 2: the wall
  time, which the default is chosen to keep under 5 minutes on 2 cores.

Prints figures; asserts nothing. usage: python benchmarks/tune_bench.py [acceptance] [budget]
                                          [--trials N] [--parallel N]
"""

from __future__ import annotations

import argparse
import copy
import sys
import time
from pathlib import Path

import yaml

from kvert.sim import sweep, tune
from kvert.sim.scenario import parse_scenario

SUITE = Path(__file__).resolve().parents[1] / "examples" / "scenarios" / "quality.yaml"


def ten_workloads():
    doc = yaml.safe_load(SUITE.read_text())
    doc["workloads"] += [dict(copy.deepcopy(w), name=w["name"] + "-b") for w in doc["workloads"]
                         if w["name"] in ("steady", "diurnal", "spiky", "oom-prone")]
    doc["nodes"]["count"] = 6
    return parse_scenario(doc, name="quality-10", base_dir=SUITE.parent)


def timed_tune(scn, trials: int, parallel: int):
    started = time.perf_counter()

    def progress(line: str) -> None:
        print(f"  [{time.perf_counter() - started:6.1f}s] {line}", flush=True)
    result = tune.tune(scn, tune.TuneOptions(trials=trials, parallel=parallel), progress=progress)
    return result, time.perf_counter() - started


def acceptance(trials: int, parallel: int) -> None:
    scn = sweep.load(SUITE)
    print(f"acceptance: {scn.name}, {len(scn.workloads)} workloads, {scn.duration / 3600:g} h, {trials} trials, "
          f"--parallel {parallel}")
    result, wall = timed_tune(scn, trials, parallel)
    upstream = {p: sweep.run_job(scn, p, scn.seed, {}) for p in ("Recreate", "InPlaceOrRecreate")}
    print(tune.format_result(result))
    print(f"\n{'workload':<10} {'tuned OOM':>9} {'Recreate':>9} {'IPOR':>9}   {'tuned slack':>11} "
          f"{'Recreate':>9} {'IPOR':>9}")
    ok = True
    for w in result.workloads:
        figures = {p: (r.metrics["workloads"][w.key]["oom_kills"], r.slack[w.key]["slack"])
                   for p, r in upstream.items()}
        meets = w.vpa is not None and all(w.figures["oom_kills"] <= oom and w.figures["slack"] < slack
                                          for oom, slack in figures.values())
        ok &= meets
        print(f"{w.key:<10} {w.figures['oom_kills']:>9g} {figures['Recreate'][0]:>9g} "
              f"{figures['InPlaceOrRecreate'][0]:>9g}   {w.figures['slack'] * 100:>10.1f}% "
              f"{figures['Recreate'][1] * 100:>8.1f}% {figures['InPlaceOrRecreate'][1] * 100:>8.1f}%"
              f"   {'ok' if meets else 'NOT MET'}")
    print(f"acceptance {'met' if ok else 'NOT met'}: {len(result.vpas())} VPAs, {result.simulations} simulations "
          f"in {wall:.0f} s")


def budget(trials: int, parallel: int) -> None:
    scn = ten_workloads()
    print(f"budget: {scn.name}, {len(scn.workloads)} workloads, {scn.duration / 3600:g} h, {trials} trials, "
          f"--parallel {parallel}")
    result, wall = timed_tune(scn, trials, parallel)
    for w in result.workloads:
        print(f"  {w.key:<12} slack {w.figures['slack'] * 100:5.1f}% (baseline {w.baseline['slack'] * 100:5.1f}%), "
              f"OOM kills {w.figures['oom_kills']:g} (baseline {w.baseline['oom_kills']:g})"
              + ("" if w.vpa is not None else f"; no VPA: {w.note}"))
    print(f"budget: {trials} trials x {len(scn.workloads)} workloads, {result.simulations} simulations "
          f"({len(result.failures)} failed) in {wall:.0f} s")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("parts", nargs="*", default=["acceptance", "budget"], choices=["acceptance", "budget"])
    parser.add_argument("--trials", type=int, default=tune.TuneOptions().trials)
    parser.add_argument("--parallel", type=int, default=2)
    args = parser.parse_args(argv)
    for part in args.parts or ["acceptance", "budget"]:
        {"acceptance": acceptance, "budget": budget}[part](args.trials, args.parallel)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
