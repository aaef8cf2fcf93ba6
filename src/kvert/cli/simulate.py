"""``kvert simulate SCENARIO.yaml``: the what-if simulator.

Runs every policy of the scenario on the identical workload in virtual time (the real
components, one process, memory store) and writes ``report.json`` and ``report.html``.
``--seeds N`` runs each policy with seeds seed..seed+N-1 (report.json adds, per policy, each
seed's totals and each figure's mean and 95% interval; the HTML page is the first seed's
with a table of the means); ``--parallel N`` and ``--ray ADDRESS`` run the simulations in
local worker processes or on a Ray cluster (``kvert.sim.sweep``). SCENARIO may be a
directory holding ``scenario.yaml``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

EXAMPLE = """\
example: kvert simulate examples/scenarios/hamster.yaml -o out/hamster
         kvert simulate examples/scenarios/hamster.yaml --policy 'no VPA' --json-only -o out/none
         kvert simulate examples/scenarios/hamster-trace.yaml   # usage replayed from a recorded trace
         kvert simulate examples/scenarios/quality.yaml -o out/quality   # the six-workload quality suite
         kvert simulate examples/scenarios/hpa-vpa.yaml -o out/hpa-vpa   # an HPA on cpu, a VPA on memory or on both
         kvert simulate examples/scenarios/quality.yaml --seeds 5 --parallel 2 -o out/q5   # 5 seeds, 2 processes
         kvert simulate imported/ --seeds 3 --ray 127.0.0.1:6379   # a directory with scenario.yaml, on Ray

Writes DIR/report.json (every figure: metrics, breakdowns by cause, recommendation history,
sampled series per policy) and DIR/report.html (a self-contained page: metrics side by side,
slack and under-provisioning as % of requests, OOM kills, restarts, evictions and pending
time by cause, requests vs use plots with the VPA's target and bounds per workload).
The scenario format is described in kvert.sim.scenario and examples/scenarios/; a container's
usage is a profile or a recorded trace (usage: {trace: FILE.csv}, the samples CSV format of
'kvert vpa recommend --samples'). A workload may declare an HPA (hpa: {minReplicas,
maxReplicas, metrics, behavior}, autoscaling/v2; a policy with hpa: none leaves it out) and
sharedUsage: [cpu] (its cpu profile is the whole workload's, split among its running pods);
the report then shows the replicas over time and the HPA's VerticalPodAutoscalerConflict
condition where a VPA controls the same resource. A workload's own VPA settings, vpa:
{annotations, resourcePolicy, policies}, are merged over each VPA policy's (or only the
policies it names).

With --seeds N every policy runs with the seeds seed, seed+1, ..., seed+N-1; report.json
then has, per policy, "seeds": each seed's totals and, per figure, the mean and its 95%
confidence interval (Student's t, N-1 degrees of freedom; none for N = 1), and report.html
adds a table of the means and intervals to the first seed's page. --parallel N runs the
simulations in N local processes, --ray ADDRESS on a Ray cluster (pip install 'kvert[ray]');
the figures are the same whichever runs them.
"""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "simulate", help="what-if simulation of a scenario in virtual time",
        description="Simulate a cluster and its workloads in virtual time, once per policy of the\n"
                    "scenario (no VPA, VPA Recreate, VPA InPlaceOrRecreate, recommender settings),\n"
                    "with the same seed and workload, and report CPU/memory slack, OOM kills, CPU\n"
                    "throttling, evictions, in-place resizes, restarts, pending pod-seconds and\n"
                    "node-hours per policy.",
        epilog=EXAMPLE, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("scenario", type=Path, metavar="SCENARIO",
                   help="the scenario file, or a directory holding scenario.yaml")
    p.add_argument("-o", "--output", type=Path, default=Path("kvert-sim"), metavar="DIR",
                   help="directory for report.json and report.html (default: ./kvert-sim)")
    p.add_argument("--json-only", action="store_true", help="write only report.json")
    p.add_argument("--policy", action="append", metavar="NAME",
                   help="run only this policy (repeatable)")
    p.add_argument("--duration", metavar="DURATION", help="override the scenario's duration (e.g. 6h)")
    p.add_argument("--seed", type=int, help="override the scenario's seed")
    p.add_argument("--seeds", type=int, metavar="N",
                   help="run each policy with N seeds (seed..seed+N-1): per-seed totals, means and "
                        "95%% intervals in report.json")
    p.add_argument("--parallel", type=int, default=1, metavar="N",
                   help="run the simulations in N local processes (default: 1, in this process)")
    p.add_argument("--ray", metavar="ADDRESS",
                   help="run the simulations on the Ray cluster at ADDRESS (HOST:PORT of its head, "
                        "ray://HOST:PORT or auto; needs pip install 'kvert[ray]')")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from kvert.clock import WallClock
    from kvert.sim import sweep
    from kvert.sim.engine import PolicyRun, SimulationError
    from kvert.sim.progress import SweepProgress
    from kvert.sim.report import report_json, write_report
    from kvert.sim.scenario import ScenarioError

    try:
        scn = sweep.load(args.scenario, duration=args.duration, seed=args.seed)
    except ScenarioError as e:
        print(f"error: {args.scenario}: {e}", file=sys.stderr)
        return 2
    names = [p.name for p in scn.policies]
    if args.policy:
        unknown = [n for n in args.policy if n not in names]
        if unknown:
            print(f"error: unknown policy {unknown[0]!r}; the scenario has {', '.join(names)}", file=sys.stderr)
            return 2
        names = [n for n in names if n in args.policy]
    if args.parallel < 1:
        print(f"error: --parallel: expected at least 1, got {args.parallel}", file=sys.stderr)
        return 2
    try:
        seeds = sweep.seeds_from(scn.seed, 1 if args.seeds is None else args.seeds)
    except sweep.SweepError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    jobs = [sweep.Job(scn, name, seed, full=(seed == seeds[0]),
                      label=name if len(seeds) == 1 else f"{name} (seed {seed})")
            for seed in seeds for name in names]
    bar = SweepProgress([j.label for j in jobs], enabled=False if args.no_progress else None)
    wall = WallClock()
    started = wall.now()
    try:
        results = sweep.run_jobs(jobs, parallel=args.parallel, ray_address=args.ray, progress=bar)
    except (sweep.SweepError, sweep.Stalled, SimulationError) as e:
        bar.close()
        print(f"error: {e}", file=sys.stderr)
        return 1
    bar.close()
    elapsed = wall.now() - started
    runs: list[PolicyRun] = []
    for r in results:
        if r.seed == seeds[0]:
            assert r.run is not None        # the first seed's jobs are full=True: they return it
            runs.append(r.run)
    doc = report_json(scn, runs, wall_seconds=elapsed)
    ran = sum(1 for r in results if not r.skipped)
    if args.seeds is not None:
        sweep.add_seed_statistics(doc, results)
        if isinstance(doc.get("run"), dict):
            doc["run"]["simulated_seconds"] = scn.duration * ran
            doc["run"]["simulations"] = ran
    paths = write_report(doc, args.output, json_only=args.json_only)
    if args.seeds is not None:
        for path in paths:
            if path.suffix == ".html":
                path.write_text(sweep.insert_seeds_html(path.read_text(), doc))
    simulated = scn.duration * ran
    what = f"{ran} {'policy' if ran == 1 else 'policies'}" if len(seeds) == 1 else \
        f"{ran} simulations ({len(names)} {'policy' if len(names) == 1 else 'policies'} x {len(seeds)} seeds)"
    print(f"simulated {what} x {scn.duration / 3600:g} h in {elapsed:.1f} s "
          f"({simulated / max(elapsed, 1e-9):,.0f} simulated seconds per second)")
    keys = ("cpu_slack_percent", "memory_slack_percent", "cpu_slack_core_hours", "memory_slack_gib_hours",
            "oom_kills", "evictions", "in_place_resizes", "container_restarts", "pending_pod_seconds")
    labels = {"cpu_slack_percent": "cpu slack %", "memory_slack_percent": "mem slack %",
              "cpu_slack_core_hours": "cpu slack c-h", "memory_slack_gib_hours": "mem slack GiB-h",
              "oom_kills": "OOM kills", "evictions": "evictions", "in_place_resizes": "resizes",
              "container_restarts": "restarts", "pending_pod_seconds": "pending pod-s"}
    width = max([len(r.policy) for r in runs] + [8])
    if doc.get("replay_fidelity"):
        _print_fidelity(doc["replay_fidelity"])
    if len(seeds) > 1:
        print(f"seed {seeds[0]}:")
    print(f"{'policy':<{width}}  " + "  ".join(f"{labels[k]:>15}" for k in keys))
    for entry in doc["results"]:
        if entry.get("skipped"):
            print(f"{entry['name']:<{width}}  skipped: {entry['skipped']}")
            continue
        totals = entry["metrics"]["totals"]
        print(f"{entry['name']:<{width}}  " + "  ".join(f"{totals[k]:>15.4g}" for k in keys))
    if len(seeds) > 1:
        print(sweep.seeds_table_text(doc, [(k, labels[k]) for k in keys]))
    for entry in doc["results"]:
        for advice in entry.get("suggestions") or []:
            print(f"suggestion ({entry['name']}): {advice['text']}")
    for path in paths:
        print(f"wrote {path}")
    return 0


def _print_fidelity(entries: list[dict]) -> None:
    """The replay's fidelity, recorded vs replayed per workload (the workloads that do not hold first)."""
    held = sum(1 for e in entries if e["within"])
    print(f"replay fidelity ('as is' vs the recorded history): {held} of {len(entries)} workloads within 5% of "
          "mean CPU and memory and one OOM kill")
    width = max(len(f"{e['namespace']}/{e['workload']}") for e in entries)
    print(f"  {'workload':<{width}}  {'cpu cores':>19}  {'memory GiB':>19}  {'OOM kills':>11}  {'restarts':>11}")
    for e in sorted(entries, key=lambda e: (e["within"], e["namespace"], e["workload"]))[:20]:
        rec, rep = e["recorded"], e["replayed"]
        name = f"{e['namespace']}/{e['workload']}"
        print(f"  {name:<{width}}  {rec['cpu_cores_mean']:>9.3g} {rep['cpu_cores_mean']:>9.3g}  "
              f"{rec['memory_bytes_mean'] / 2**30:>9.3g} {rep['memory_bytes_mean'] / 2**30:>9.3g}  "
              f"{rec['oom_kills']:>5} {rep['oom_kills']:>5}  {rec['restarts']:>5} {rep['restarts']:>5}"
              f"{'' if e['within'] else '   <-- off'}")
    if len(entries) > 20:
        print(f"  ... {len(entries) - 20} more in report.json (replay_fidelity)")
