"""``kvert demo``: the main job. Seed 003's hamster for three simulated days under three
policies named by the VPA update modes a user picks from (no VPA, Recreate,
InPlaceOrRecreate), on identical workload, with the real components in virtual time: the
template's requests it starts from, what happened when, and what each policy cost."""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from kvert.api.quantity import to_int, to_quantity

SCENARIO = Path(__file__).resolve().parents[1] / "sim" / "demo.yaml"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "demo", help="run the demonstration: the hamster with no VPA, VPA Recreate and VPA InPlaceOrRecreate",
        description="Simulate seed 003's hamster (2 replicas requesting 100m / 50Mi, using about "
                    "500m / 250Mi) for three days under three policies -- no VPA, VPA updateMode "
                    "Recreate and VPA updateMode InPlaceOrRecreate -- with kvert's scheduler, node agents, "
                    "controllers and VPA in virtual time; print the timeline and the comparison, "
                    "and write the HTML report.",
        epilog="example: kvert demo --days 3 -o /tmp/kvert-demo")
    p.add_argument("--days", type=float, default=3.0, help="simulated days per policy (default: 3)")
    p.add_argument("-o", "--output", type=Path, default=None,
                   help="directory for report.json and report.html (default: a temporary one)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from kvert.clock import WallClock
    from kvert.sim.engine import simulate
    from kvert.sim.progress import ProgressBar
    from kvert.sim.report import report_json, write_report
    from kvert.sim.scenario import load_scenario

    scn = load_scenario(SCENARIO)
    scn.duration = args.days * 86400
    names = [p.name for p in scn.policies]
    print("kvert demo: seed 003's hamster, 2 replicas requesting 100m / 50Mi while using about "
          "500m / 250Mi", flush=True)
    print(f"{len(names)} policies ({', '.join(names)}) x {args.days:g} simulated days, "
          f"{scn.node_count} nodes, seed {scn.seed}", flush=True)
    _initial_requests(scn)
    wall = WallClock()
    started = wall.now()
    bar = ProgressBar(names)
    runs = simulate(scn, bar, skip_unavailable=False)
    bar.close()
    elapsed = wall.now() - started
    initial = {w.key: (_template_requests(w.template), w.replicas) for w in scn.workloads}
    for r in runs:
        _timeline(r, initial)
    doc = report_json(scn, runs, wall_seconds=elapsed)
    _comparison(doc)
    out = args.output or Path(tempfile.mkdtemp(prefix="kvert-demo-"))
    for path in write_report(doc, out):
        print(f"wrote {path}")
    simulated = scn.duration * len(runs)
    print(f"{simulated / 86400:g} simulated days in {elapsed:.1f} s "
          f"({simulated / max(elapsed, 1e-9):,.0f} simulated seconds per second)")
    return 0


def _when(seconds: float) -> str:
    d, rest = divmod(int(seconds), 86400)
    h, rest = divmod(rest, 3600)
    return f"day {d + 1} {h:02d}:{rest // 60:02d}"


def _mib(n: int) -> str:
    return f"{n / 2**20:.0f}Mi"


def _initial_requests(scn) -> None:
    """Each workload's template requests (and limits), per container, as every policy starts."""
    print("initial template requests (per pod, before any VPA acts):", flush=True)
    for w in scn.workloads:
        for c in w.template["spec"].get("containers") or []:
            resources = c.get("resources") or {}
            parts = [f"{kind} " + ", ".join(f"{r} {v}" for r, v in sorted(resources[kind].items()))
                     for kind in ("requests", "limits") if resources.get(kind)]
            print(f"  {w.name}/{c['name']}: {'; '.join(parts) or 'no requests'}", flush=True)


def _template_requests(template: dict) -> tuple[int, int]:
    """(cpu millicores, memory bytes) one pod of a pod template requests."""
    cpu = mem = 0
    for c in template["spec"].get("containers") or []:
        req = (c.get("resources") or {}).get("requests") or {}
        cpu += to_int("cpu", req["cpu"]) if "cpu" in req else 0
        mem += to_int("memory", req["memory"]) if "memory" in req else 0
    return cpu, mem


def _timeline(run, initial: dict[str, tuple[tuple[int, int], int]]) -> None:
    """Each workload's requests per pod as created (its template), then at each change seen in
    the samples."""
    print(f"\n== {run.policy} ==")
    for workload, s in run.workloads.items():
        cpu, mem, running = s["cpu_request"], s["memory_request"], s["pods_running"]
        previous, replicas = initial[workload]
        print(f"  {_when(0)}  {workload}: {replicas} replicas created, requests per pod "
              f"{to_quantity('cpu', previous[0])} / {_mib(previous[1])}")
        for k, t in enumerate(run.times):
            if running[k] <= 0:
                continue
            now = (int(round(cpu[k] / running[k])), int(round(mem[k] / running[k])))
            if now != previous:
                print(f"  {_when(t)}  {workload}: requests per pod -> {to_quantity('cpu', now[0])} / "
                      f"{_mib(now[1])}")
            previous = now
    counters = {k: sum(c.get(k, 0) for c in run.counters.values())
                for k in ("evictions", "resizes", "restarts", "oom_kills")}
    print(f"  evictions {counters['evictions']:g}, in-place resizes {counters['resizes']:g}, "
          f"container restarts {counters['restarts']:g}, OOM kills {counters['oom_kills']:g}")


def _comparison(doc: dict) -> None:
    keys = (("cpu_slack_percent", "cpu slack (% req)"), ("cpu_under_percent", "cpu under (% req)"),
            ("memory_slack_percent", "memory slack (% req)"), ("memory_under_percent", "memory under (% req)"),
            ("cpu_slack_core_hours", "cpu slack (core-h)"),
            ("cpu_overprovisioned_core_hours", "  over-provisioned"),
            ("cpu_underprovisioned_core_hours", "  under-provisioned"),
            ("memory_slack_gib_hours", "memory slack (GiB-h)"),
            ("memory_overprovisioned_gib_hours", "  over-provisioned"),
            ("memory_underprovisioned_gib_hours", "  under-provisioned"),
            ("oom_kills", "OOM kills"), ("cpu_throttled_seconds", "throttled (s)"),
            ("evictions", "evictions"), ("in_place_resizes", "in-place resizes"),
            ("container_restarts", "restarts"), ("pending_pod_seconds", "pending pod-s"))
    print("\ncomparison (slack = requests minus use, integrated; negative = under-provisioned)")
    policies = [p for p in doc["results"] if not p.get("skipped")]
    width = max([14] + [len(p["name"]) + 2 for p in policies])
    print(f"  {'':<22}" + "".join(f"{p['name']:>{width}}" for p in policies))
    for key, label in keys:
        row = [p["metrics"]["totals"].get(key, 0) for p in policies]
        print(f"  {label:<22}" + "".join(f"{v:>{width}.4g}" for v in row))
    print()


if __name__ == "__main__":
    sys.exit(run(argparse.Namespace(days=3.0, output=None)))
