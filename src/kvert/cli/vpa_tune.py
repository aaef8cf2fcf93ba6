"""``kvert vpa tune``: each workload's VPA recommender settings, searched by simulation.

Optuna searches the ``vpa.kvert.io/*`` recommender annotations and ``controlledValues`` per
workload of a scenario (``kvert.sim.tune``), every trial a simulation of all the selected
workloads at once, and writes the VerticalPodAutoscalers that meet the constraints with the
least slack, verified together by a final simulation.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

EXAMPLE = """\
example: kvert vpa tune examples/scenarios/quality.yaml --minimize slack \\
             --subject-to 'oom_kills<=baseline' --baseline Recreate -o tuned.yaml
         kvert vpa tune imported/ --workload 'shop/*' --subject-to 'oom_kills<=as-is' \\
             --subject-to 'pending_pod_seconds<=600' --seeds 3 --parallel 2 -o tuned.yaml
         kvert vpa tune imported/ --trials 200 --ray 127.0.0.1:6379 -o tuned.yaml

Searched per workload (vpa.kvert.io/ annotations, the upstream recommender's flag names, and
kvert's in-place model settings): model (upstream, in-place), capacity-aware, workload
(service, batch, auto), target-cpu-percentile and target-memory-percentile (0.5-0.95),
recommendation-margin-fraction (0-0.3), cpu- and memory-histogram-decay-half-life (15m-48h),
memory-aggregation-interval (5m-24h) and -count (a history of 1h-8d), oom-bump-up-ratio
(1-2); and the resource policy's controlledValues (RequestsAndLimits or RequestsOnly).

All selected workloads are tuned at once: one Optuna study (TPE, seeded from the scenario's
seed: a run repeats) per workload, and trial k of every study evaluated in the same
simulation, each study told its own workload's figures. The first trials are the workload's
settings under --policy as they are, upstream's defaults, kvert's in-place model and the
in-place model with capacity-aware caps and RequestsOnly. The simulations run in worker
processes (--parallel) or on Ray (--ray); one that stalls (a minute without computing: a
deadlock) is ended and its trial counted as failed.

--minimize: slack (requested but unused over requested, sum(max(request - use, 0)) /
sum(request) over the run, CPU and memory averaged), cpu_slack or memory_slack. --subject-to
METRIC<=REF or METRIC>=REF (repeatable; default oom_kills<=baseline): METRIC one of
oom_kills, evictions, container_restarts, cpu_throttled_seconds, pending_pod_seconds (or any
per-workload figure of the simulation report, or a slack); REF a number, baseline (the
--baseline policy's figure for the workload), as-is (the "as is" policy's) or
FACTOR*baseline. A trial that breaks a constraint is infeasible for Optuna. Slack counts
only what is requested and not used: settings that leave pods short (CPU used beyond the
request, throttling) lower it too, so bound that side with a constraint where it matters
(e.g. --subject-to 'cpu_under_percent<=baseline' or 'cpu_throttled_seconds<=1.1*baseline').
With --seeds N each trial runs N seeds and a constraint must hold for each, against the
reference's run with the same seed.

The output (-o) is one YAML file of VerticalPodAutoscaler objects (autoscaling.k8s.io/v1,
targetRef the workload, the annotations and resourcePolicy found, the update mode of
--policy): per workload the feasible trial with the least slack, checked by a final
simulation of all chosen settings together (a setting that breaks a constraint there gives
way to the workload's next best); a workload for which no trial met the constraints gets no
VPA and a line saying so.

The default of --trials (32) tunes a 10-workload scenario over one day in under 5 minutes
on 2 cores (docs/architecture.md has the measurement).
"""


# kvert.sim.tune's, repeated so that building the parser imports no simulator (tests check them)
OBJECTIVES = ("slack", "cpu_slack", "memory_slack")
DEFAULT_BATCH = 4
DEFAULT_CONSTRAINT = "oom_kills<=baseline"
DEFAULT_TRIALS = 32


def register_subcommand(vsub: argparse._SubParsersAction) -> None:
    t = vsub.add_parser(
        "tune", help="search each workload's VPA recommender settings by simulation (Optuna)",
        description="Search per workload the VPA recommender settings (vpa.kvert.io/* annotations\n"
                    "and controlledValues) that minimize slack subject to constraints, by simulating\n"
                    "the scenario, and write the VerticalPodAutoscalers found.",
        epilog=EXAMPLE, formatter_class=argparse.RawDescriptionHelpFormatter)
    t.add_argument("scenario", type=Path, metavar="DIR_OR_SCENARIO",
                   help="a scenario file, or a directory holding scenario.yaml")
    t.add_argument("--workload", action="append", metavar="SEL", default=[],
                   help="tune only these workloads: name, namespace/name or a glob, comma separated "
                        "(repeatable; default: every workload with a VPA under --policy)")
    t.add_argument("--policy", metavar="NAME",
                   help="the VPA policy tuned under: its update mode and component intervals (default: the "
                        "first InPlaceOrRecreate policy, else the first VPA policy, else a new "
                        "InPlaceOrRecreate one)")
    t.add_argument("--minimize", default="slack", choices=OBJECTIVES, help="the objective (default: slack)")
    t.add_argument("--subject-to", action="append", metavar="CONSTRAINT", dest="subject_to", default=[],
                   help=f"METRIC<=REF or METRIC>=REF, REF a number, baseline, as-is or FACTOR*baseline "
                        f"(repeatable; default: {DEFAULT_CONSTRAINT})")
    t.add_argument("--baseline", metavar="POLICY",
                   help="the policy 'baseline' refers to (default: the \"as is\" policy, else the first VPA "
                        "policy)")
    t.add_argument("--trials", type=int, default=DEFAULT_TRIALS, metavar="N",
                   help=f"trials per workload (default: {DEFAULT_TRIALS})")
    t.add_argument("--seeds", type=int, default=1, metavar="N",
                   help="simulate each trial with N seeds (seed..seed+N-1; default: 1)")
    t.add_argument("--seed", type=int, help="override the scenario's seed (the simulations' and the sampler's)")
    t.add_argument("--duration", metavar="DURATION", help="override the scenario's duration (e.g. 12h)")
    t.add_argument("--batch", type=int, default=DEFAULT_BATCH, metavar="K",
                   help=f"trials asked of each study at once and simulated in parallel (default: {DEFAULT_BATCH}); "
                        f"the results depend on it, not on --parallel or --ray")
    t.add_argument("--parallel", type=int, metavar="N",
                   help="local worker processes (default: the processors available, at most a batch's "
                        "simulations)")
    t.add_argument("--ray", metavar="ADDRESS",
                   help="run the simulations on the Ray cluster at ADDRESS (needs pip install 'kvert[ray]')")
    t.add_argument("-o", "--output", type=Path, default=Path("tuned.yaml"), metavar="FILE",
                   help="where to write the VerticalPodAutoscalers (default: tuned.yaml)")
    t.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    t.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from kvert.clock import WallClock
    from kvert.sim import sweep
    from kvert.sim.scenario import ScenarioError
    from kvert.sim.tune import TuneError, TuneOptions, format_result, tune, vpa_yaml

    try:
        scn = sweep.load(args.scenario, duration=args.duration, seed=args.seed)
    except ScenarioError as e:
        print(f"error: {args.scenario}: {e}", file=sys.stderr)
        return 2
    parallel = args.parallel
    if parallel is None:
        parallel = 1 if args.ray else max(1, min(sweep.default_parallel(), args.batch * max(1, args.seeds)))
    options = TuneOptions(workloads=args.workload, policy=args.policy, minimize=args.minimize,
                          constraints=args.subject_to or [DEFAULT_CONSTRAINT], baseline=args.baseline,
                          trials=args.trials, seeds=args.seeds, parallel=parallel, ray_address=args.ray,
                          batch=args.batch)
    wall = WallClock()
    started = wall.now()

    def progress(line: str) -> None:
        if not args.quiet:
            print(f"[{wall.now() - started:6.1f}s] {line}", file=sys.stderr, flush=True)
    try:
        result = tune(scn, options, progress=progress)
    except TuneError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except (sweep.SweepError, sweep.Stalled) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print(format_result(result))
    text = vpa_yaml(result)
    try:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        tmp = args.output.with_name(args.output.name + ".tmp")
        tmp.write_text(text)
        tmp.replace(args.output)
    except OSError as e:
        print(f"error: cannot write {args.output}: {e.strerror or e}", file=sys.stderr)
        return 1
    n = len(result.vpas())
    print(f"\nwrote {args.output} ({n} VerticalPodAutoscaler{'' if n == 1 else 's'}; "
          f"{result.simulations} simulations in {wall.now() - started:.1f} s)")
    return 0
