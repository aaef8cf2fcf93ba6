"""Tuning each workload's VPA recommender settings by simulation, with Optuna.

``tune(scn, TuneOptions(...))`` searches, per selected workload, the kvert per-VPA
annotations ``vpa.kvert.io/<upstream flag name>`` (``kvert.vpa.recommendation``) and the
resource policy's ``controlledValues``:

=====================================  ==============================================
setting                                searched over
=====================================  ==============================================
``model``                              upstream, in-place
``capacity-aware``                     false, true
``workload``                           service, batch, auto
``target-cpu-percentile``              0.50 .. 0.95 (steps of 0.01)
``target-memory-percentile``           0.50 .. 0.95
``recommendation-margin-fraction``     0 .. 0.30
``cpu-histogram-decay-half-life``      15m .. 48h (log scale, whole minutes)
``memory-histogram-decay-half-life``   15m .. 48h
``memory-aggregation-interval``        5m, 15m, 1h, 6h, 24h
``memory-aggregation-interval-count``  the history window (1h .. 8d, log scale) / interval
``oom-bump-up-ratio``                  1.0 .. 2.0 (steps of 0.05)
``controlledValues``                   RequestsAndLimits, RequestsOnly (every container policy)
=====================================  ==============================================

(the percentiles stay between upstream's lower- and upper-bound percentiles, 0.5 and 0.95).
A workload's settings are written as a scenario's ``workloads[].vpa`` is (annotations merged
over the policy's, container policies replacing the template's: each one the workload has
under the policy, ``"*"`` included, with its ``controlledValues`` set), under the policy
``policy`` (the one whose update mode and component intervals the VPAs run with).

One Optuna study per workload (a TPE sampler seeded from the scenario's seed, so a run
repeats), all tuned at once to stay within budget: trial k of every study is evaluated in the
same simulation (each workload with its own trial's settings) and each study is told its own
workload's figures. Workloads share nodes, so one's settings can change another's figures a
little; the final verification below checks the chosen settings together. The first trials
are the workload's settings under the policy as they are, upstream's defaults, kvert's
in-place model, and the in-place model with capacity-aware caps and RequestsOnly; the TPE
sampler takes it from there. Trials are asked ``batch`` at a time (evaluated in parallel: the
results depend on ``batch``, not on ``parallel`` or Ray).

Objective (minimized): ``slack``, requested but unused over requested, Σ max(request − use, 0)
/ Σ request over the run's samples of the workload, CPU and memory averaged
(``kvert.sim.sweep.slack_fractions``); or ``cpu_slack`` / ``memory_slack`` alone. With several
seeds, the mean over the seeds. Use beyond the request is not slack: settings that leave pods
short lower it too, which constraints (``cpu_under_percent``, ``cpu_throttled_seconds``,
``oom_kills``) bound.

Constraints ``METRIC<=REF`` / ``METRIC>=REF`` on a workload's figures (``kvert.sim.metrics``:
oom_kills, evictions, container_restarts, cpu_throttled_seconds, pending_pod_seconds, ...; or
the slack fractions), REF a number, ``baseline`` (the baseline policy's figure for the
workload), ``as-is`` (the "as is" policy's), or ``FACTOR*baseline``. With several seeds a
constraint must hold for every seed, each against the reference's run with the same seed. A
trial that breaks one is told to Optuna as infeasible, never as a worse objective: the amount
by which each constraint is broken (<= 0: it holds) is the trial's constraint value
(``Trial.set_constraint``, what Optuna 5 has in place of the sampler's ``constraints_func``,
which older Optuna gets). A trial whose simulation fails (one that stalls is ended by the
sweep's watchdog, ``kvert.sim.sweep.Stalled``) is told as failed.

Simulations run in worker processes (``kvert.sim.sweep.Runner``, one even with ``parallel``
1) or on Ray. Choice and verification: per workload, the feasible trial with the least slack; then one
simulation (per seed) of every chosen setting together. A workload whose chosen setting breaks
a constraint there moves to its next feasible trial (three tries), and the check is run
again; a workload with no feasible trial left gets no VPA (in the verification it runs with
the policy's own settings). The figures reported are the final simulation's.
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Any

from kvert.sim.metrics import METRICS, PERCENT_METRICS
from kvert.sim.scenario import Scenario
from kvert.sim.sweep import (
    Job,
    JobResult,
    Runner,
    SweepError,
    find_policy,
    with_overrides,
    workload_key,
)

ANNOTATION = "vpa.kvert.io/"
OBJECTIVES = ("slack", "cpu_slack", "memory_slack")
INTERVALS = ("5m", "15m", "1h", "6h", "24h")
INTERVAL_SECONDS = {"5m": 300, "15m": 900, "1h": 3600, "6h": 21600, "24h": 86400}
CONTROLLED_VALUES = ("RequestsAndLimits", "RequestsOnly")
AS_IS_NAMES = ("as is", "as-is", "asis")
MAX_TRIES = 3                 # chosen settings tried per workload in the verification
DEFAULT_BATCH = 4
DEFAULT_CONSTRAINT = "oom_kills<=baseline"
# the percentiles' range keeps them between upstream's lower- and upper-bound percentiles
PERCENTILE_RANGE = (0.5, 0.95)
MARGIN_RANGE = (0.0, 0.3)
HALF_LIFE_MINUTES = (15, 2880)
HISTORY_HOURS = (1, 192)
OOM_RATIO_RANGE = (1.0, 2.0)


class TuneError(ValueError):
    """Options a tuning cannot use; the message names the flag."""


def metric_names() -> tuple[str, ...]:
    return OBJECTIVES + tuple(k for k, _ in METRICS) + tuple(k for k, _ in PERCENT_METRICS)


# -- constraints ---------------------------------------------------------------------------------------

_CONSTRAINT = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(<=|>=)\s*(.+?)\s*$")
_REFERENCE = re.compile(r"^(?:([0-9.eE+-]+)\s*\*\s*)?(baseline|as-is|as_is)(?:\s*\*\s*([0-9.eE+-]+))?$")


@dataclass(frozen=True)
class Constraint:
    metric: str
    op: str                   # "<=" or ">="
    ref: str                  # "value", "baseline" or "as-is"
    factor: float = 1.0       # times the baseline's (or as-is) figure
    value: float = 0.0        # ref "value": the number
    text: str = ""

    def reference(self, baseline: float | None = None, as_is: float | None = None) -> float:
        if self.ref == "value":
            return self.value
        figure = baseline if self.ref == "baseline" else as_is
        assert figure is not None
        return self.factor * figure

    def violation(self, figure: float, reference: float) -> float:
        """By how much ``figure`` breaks the constraint (<= 0: it holds)."""
        return figure - reference if self.op == "<=" else reference - figure

    def describe_reference(self, baseline_name: str, as_is_name: str | None) -> str:
        if self.ref == "value":
            return f"{self.value:g}"
        name = baseline_name if self.ref == "baseline" else (as_is_name or "as is")
        return f"{self.factor:g} x {name}" if self.factor != 1 else name


def parse_constraint(text: str, flag: str = "--subject-to") -> Constraint:
    """``METRIC<=REF`` or ``METRIC>=REF``; REF a number, ``baseline``, ``as-is``,
    ``FACTOR*baseline``. Raises TuneError naming the flag."""
    where = f"{flag} {text!r}"
    m = _CONSTRAINT.match(str(text))
    if m is None:
        raise TuneError(f"{where}: expected METRIC<=REF or METRIC>=REF (e.g. 'oom_kills<=baseline', "
                        f"'pending_pod_seconds<=600', 'cpu_throttled_seconds<=1.1*baseline')")
    metric, op, ref = m.group(1), m.group(2), m.group(3)
    if metric not in metric_names():
        raise TuneError(f"{where}: unknown metric {metric!r} (expected one of {', '.join(metric_names())})")
    try:
        value = float(ref)
    except ValueError:
        pass
    else:
        if not math.isfinite(value):
            raise TuneError(f"{where}: the reference must be a finite number")
        return Constraint(metric, op, "value", value=value, text=f"{metric}{op}{ref}")
    r = _REFERENCE.match(ref.replace(" ", ""))
    factor_text = (r.group(1) or r.group(3)) if r else None
    if r is None or (r.group(1) and r.group(3)):
        raise TuneError(f"{where}: the reference {ref!r} must be a number, baseline, as-is or FACTOR*baseline "
                        f"(e.g. 1.1*baseline)")
    try:
        factor = float(factor_text) if factor_text else 1.0
    except ValueError:
        raise TuneError(f"{where}: {factor_text!r} is not a number") from None
    if not math.isfinite(factor) or factor < 0:
        raise TuneError(f"{where}: the factor must be a non-negative number")
    kind = "as-is" if r.group(2) in ("as-is", "as_is") else "baseline"
    return Constraint(metric, op, kind, factor=factor, text=f"{metric}{op}{ref.replace(' ', '')}")


# -- the search space ----------------------------------------------------------------------------------

def _duration(minutes: int) -> str:
    hours, rest = divmod(int(minutes), 60)
    return (f"{hours}h" if hours else "") + (f"{rest}m" if rest or not hours else "")


def _clip(value: float, bounds: tuple[float, float]) -> float:
    return min(max(value, bounds[0]), bounds[1])


def params_of_config(config: Any, controlled_values: str) -> dict[str, Any]:
    """The search space's point nearest a RecommenderConfig (a starting trial)."""
    interval = min(INTERVALS, key=lambda i: abs(math.log(INTERVAL_SECONDS[i] / config.memory_aggregation_interval)))
    window = config.memory_aggregation_interval * config.memory_aggregation_interval_count / 3600
    return {
        "model": config.model, "capacity_aware": "true" if config.capacity_aware else "false",
        "workload": config.workload,
        "target_cpu_percentile": round(_clip(config.target_cpu_percentile, PERCENTILE_RANGE), 2),
        "target_memory_percentile": round(_clip(config.target_memory_percentile, PERCENTILE_RANGE), 2),
        "margin": round(_clip(config.safety_margin_fraction, MARGIN_RANGE), 2),
        "cpu_half_life_minutes": int(_clip(round(config.cpu_histogram_decay_half_life / 60), HALF_LIFE_MINUTES)),
        "memory_half_life_minutes": int(_clip(round(config.memory_histogram_decay_half_life / 60),
                                              HALF_LIFE_MINUTES)),
        "memory_aggregation_interval": interval,
        "history_hours": int(_clip(round(window), HISTORY_HOURS)),
        "oom_bump_up_ratio": round(round(_clip(config.oom_bump_up_ratio, OOM_RATIO_RANGE) * 20) / 20, 2),
        "controlled_values": controlled_values,
    }


def suggest(trial: Any) -> dict[str, Any]:
    """One point of the search space, asked of an Optuna trial."""
    return {
        "model": trial.suggest_categorical("model", ["upstream", "in-place"]),
        "capacity_aware": trial.suggest_categorical("capacity_aware", ["false", "true"]),
        "workload": trial.suggest_categorical("workload", ["service", "batch", "auto"]),
        "target_cpu_percentile": trial.suggest_float("target_cpu_percentile", *PERCENTILE_RANGE, step=0.01),
        "target_memory_percentile": trial.suggest_float("target_memory_percentile", *PERCENTILE_RANGE, step=0.01),
        "margin": trial.suggest_float("margin", *MARGIN_RANGE, step=0.01),
        "cpu_half_life_minutes": trial.suggest_int("cpu_half_life_minutes", *HALF_LIFE_MINUTES, log=True),
        "memory_half_life_minutes": trial.suggest_int("memory_half_life_minutes", *HALF_LIFE_MINUTES, log=True),
        "memory_aggregation_interval": trial.suggest_categorical("memory_aggregation_interval", list(INTERVALS)),
        "history_hours": trial.suggest_int("history_hours", *HISTORY_HOURS, log=True),
        "oom_bump_up_ratio": trial.suggest_float("oom_bump_up_ratio", *OOM_RATIO_RANGE, step=0.05),
        "controlled_values": trial.suggest_categorical("controlled_values", list(CONTROLLED_VALUES)),
    }


def settings_of(params: dict[str, Any]) -> dict[str, Any]:
    """``{"annotations": {...}, "controlledValues": ...}`` for a point of the search space."""
    interval = params["memory_aggregation_interval"]
    count = max(1, math.ceil(params["history_hours"] * 3600 / INTERVAL_SECONDS[interval]))
    annotations = {
        "model": params["model"],
        "capacity-aware": params["capacity_aware"],
        "workload": params["workload"],
        "target-cpu-percentile": f"{round(params['target_cpu_percentile'], 2):g}",
        "target-memory-percentile": f"{round(params['target_memory_percentile'], 2):g}",
        "recommendation-margin-fraction": f"{round(params['margin'], 2):g}",
        "cpu-histogram-decay-half-life": _duration(params["cpu_half_life_minutes"]),
        "memory-histogram-decay-half-life": _duration(params["memory_half_life_minutes"]),
        "memory-aggregation-interval": interval,
        "memory-aggregation-interval-count": str(count),
        "oom-bump-up-ratio": f"{round(params['oom_bump_up_ratio'], 2):g}",
    }
    return {"annotations": {ANNOTATION + k: v for k, v in annotations.items()},
            "controlledValues": params["controlled_values"]}


def _container_policies(vpa: dict) -> list[dict]:
    return [dict(p) for p in ((vpa.get("spec") or {}).get("resourcePolicy") or {}).get("containerPolicies") or []]


def override_of(vpa: dict, settings: dict[str, Any]) -> dict:
    """A workload's VPA settings (``workloads[].vpa``) for ``settings``, given the VPA it has
    under the policy: every container policy it has (``"*"`` added if missing) with the
    chosen ``controlledValues``."""
    entries = _container_policies(vpa)
    if not any(p.get("containerName") == "*" for p in entries):
        entries.append({"containerName": "*"})
    for entry in entries:
        entry["controlledValues"] = settings["controlledValues"]
    return {"annotations": dict(settings["annotations"]), "resourcePolicy": {"containerPolicies": entries}}


def starting_points(vpa: dict) -> list[dict[str, Any]]:
    """The first trials: the workload's settings under the policy as they are, upstream's
    defaults, the in-place model, and the in-place model capacity-aware with RequestsOnly."""
    from kvert.vpa.recommendation import DEFAULT_CONFIG
    current, _ = DEFAULT_CONFIG.for_vpa(vpa)
    entries = _container_policies(vpa)
    controlled = next((p.get("controlledValues") for p in entries if p.get("containerName") == "*"), None) or \
        next((p.get("controlledValues") for p in entries if p.get("controlledValues")), "RequestsAndLimits")
    assert isinstance(controlled, str)      # a validated VPA's controlledValues: one of the enum's names
    in_place, _ = DEFAULT_CONFIG.with_annotations({ANNOTATION + "model": "in-place"})
    in_place_capped, _ = DEFAULT_CONFIG.with_annotations({ANNOTATION + "model": "in-place",
                                                          ANNOTATION + "capacity-aware": "true"})
    points = [params_of_config(current, controlled), params_of_config(DEFAULT_CONFIG, "RequestsAndLimits"),
              params_of_config(in_place, "RequestsAndLimits"), params_of_config(in_place_capped, "RequestsOnly")]
    out: list[dict[str, Any]] = []
    for p in points:
        if p not in out:
            out.append(p)
    return out


# -- options and results -------------------------------------------------------------------------------

@dataclass
class TuneOptions:
    workloads: Sequence[str] = ()          # selectors: key, name, namespace/name, globs; () = every one
    policy: str | None = None              # the VPA policy tuned under (default: see resolve_policy)
    minimize: str = "slack"
    constraints: Sequence[str] = (DEFAULT_CONSTRAINT,)
    baseline: str | None = None
    trials: int = 32
    seeds: int = 1
    parallel: int = 1
    ray_address: str | None = None
    batch: int = DEFAULT_BATCH
    sampler_seed: int | None = None        # default: the scenario's seed


@dataclass
class WorkloadTuning:
    key: str
    namespace: str
    name: str
    settings: dict | None                  # chosen: {"annotations", "controlledValues"}; None: no VPA
    trial: int | None
    vpa: dict | None                       # the VerticalPodAutoscaler to write
    figures: dict[str, float]              # the final simulation's, mean over the seeds
    baseline: dict[str, float]             # the baseline policy's, mean over the seeds
    checks: list[dict] = field(default_factory=list)   # per constraint: text, value, reference, holds
    feasible_trials: int = 0
    note: str = ""


@dataclass
class TuneResult:
    scenario: str
    policy: str
    baseline: str
    as_is: str | None
    minimize: str
    constraints: list[str]
    trials: int
    seeds: list[int]
    batch: int
    simulations: int
    workloads: list[WorkloadTuning]
    failures: list[str] = field(default_factory=list)    # simulations that failed (their trials too)

    def vpas(self) -> list[dict]:
        return [w.vpa for w in self.workloads if w.vpa is not None]


# -- policies and workloads ----------------------------------------------------------------------------

def as_is_policy(scn: Scenario) -> Any:
    """The scenario's "as is" policy (named so; else the one running every workload's existing
    VPA), or None."""
    for p in scn.policies:
        if p.name.strip().lower() in AS_IS_NAMES:
            return p
    for p in scn.policies:
        if getattr(p, "existing", False) and getattr(p, "select", None) is None and p.vpa is None:
            return p
    return None


def _has_vpa(scn: Scenario, policy: Any) -> bool:
    return policy.vpa is not None and any(scn.vpa_object(w, policy) is not None for w in scn.workloads)


def resolve_policy(scn: Scenario, name: str | None) -> tuple[Scenario, Any]:
    """The policy tuned under: ``name``; else the first InPlaceOrRecreate policy, else the
    first VPA policy, else a new InPlaceOrRecreate policy "tuned" (1-minute recommender and
    updater) added to a copy of the scenario."""
    if name is not None:
        policy = next((p for p in scn.policies if p.name == name), None)
        if policy is None:
            raise TuneError(f"--policy {name!r}: no such policy (the scenario has "
                            f"{', '.join(repr(p.name) for p in scn.policies)})")
        if policy.vpa is None:
            raise TuneError(f"--policy {name!r}: the policy has no VPA of its own (give a policy with vpa: "
                            f"{{updateMode: ...}})")
        return scn, policy
    vpa_policies = [p for p in scn.policies if p.vpa is not None]
    for p in vpa_policies:
        if p.update_mode == "InPlaceOrRecreate":
            return scn, p
    if vpa_policies:
        return scn, vpa_policies[0]
    import copy

    from kvert.sim.scenario import _policy
    policy = _policy({"name": "tuned", "vpa": {"updateMode": "InPlaceOrRecreate", "recommender": {"interval": "1m"},
                                               "updater": {"interval": "1m"}}}, "--policy")
    out = copy.copy(scn)
    out.policies = [*scn.policies, policy]
    return out, policy


def resolve_baseline(scn: Scenario, name: str | None) -> Any:
    if name is not None:
        policy = next((p for p in scn.policies if p.name == name), None)
        if policy is None:
            raise TuneError(f"--baseline {name!r}: no such policy (the scenario has "
                            f"{', '.join(repr(p.name) for p in scn.policies)})")
        return policy
    policy = as_is_policy(scn)
    if policy is not None:
        return policy
    for p in scn.policies:
        if p.vpa is not None:
            return p
    raise TuneError("--baseline: the scenario has no \"as is\" policy and no VPA policy; name the baseline "
                    "policy with --baseline")


def select_workloads(scn: Scenario, policy: Any, selectors: Sequence[str]) -> list[Any]:
    """The workloads the selectors name (key, name or namespace/name, shell-style globs, comma
    separated or repeated) that have a VPA under ``policy``."""
    patterns = [s.strip() for sel in selectors for s in str(sel).split(",") if s.strip()]
    chosen = []
    for w in scn.workloads:
        names = {workload_key(w), w.name, f"{w.namespace}/{w.name}"}
        if patterns and not any(fnmatchcase(n, pat) for pat in patterns for n in names):
            continue
        chosen.append(w)
    if patterns and not chosen:
        raise TuneError(f"--workload {','.join(patterns)}: no workload matches (the scenario has "
                        f"{', '.join(workload_key(w) for w in scn.workloads)})")
    tunable = [w for w in chosen if scn.vpa_object(w, policy) is not None]
    if not tunable:
        raise TuneError(f"--workload: none of the workloads selected has a VPA under policy {policy.name!r}")
    return tunable


# -- figures -------------------------------------------------------------------------------------------

def figures_of(result: JobResult, key: str) -> dict[str, float]:
    """A workload's figures in one run: its metrics and its slack fractions."""
    return {**(result.metrics.get("workloads") or {}).get(key, {}), **result.slack.get(key, {})}


def _mean(values: Sequence[float]) -> float:
    return float(sum(values) / len(values)) if values else 0.0


def _mean_figures(per_seed: Sequence[dict[str, float]], keys: Sequence[str]) -> dict[str, float]:
    return {k: round(_mean([float(f.get(k, 0.0)) for f in per_seed]), 6) for k in keys}


def _failure(result: JobResult) -> str:
    """Why a simulation gave no figures ("" when it did)."""
    return result.error or (f"{result.label}: {result.skipped}" if result.skipped else "")


def _check(result: JobResult, name: str) -> JobResult:
    if result.skipped:
        raise TuneError(f"the simulation of policy {name!r} could not run: {result.skipped}")
    return result


# -- the tuning ----------------------------------------------------------------------------------------

Progress = Callable[[str], None]


def tune(scn: Scenario, options: TuneOptions, progress: Progress | None = None) -> TuneResult:
    """Tune the selected workloads' VPA settings (module docstring); ``progress`` is told a line
    of text after each step."""
    import optuna

    if options.minimize not in OBJECTIVES:
        raise TuneError(f"--minimize {options.minimize!r}: expected one of {', '.join(OBJECTIVES)}")
    if options.trials < 1:
        raise TuneError(f"--trials: expected at least 1, got {options.trials}")
    if options.seeds < 1:
        raise TuneError(f"--seeds: expected at least 1, got {options.seeds}")
    if options.batch < 1:
        raise TuneError(f"--batch: expected at least 1, got {options.batch}")
    if options.parallel < 1:
        raise TuneError(f"--parallel: expected at least 1, got {options.parallel}")
    constraints = [parse_constraint(c) for c in options.constraints]
    scn, policy = resolve_policy(scn, options.policy)
    baseline = resolve_baseline(scn, options.baseline)
    as_is = as_is_policy(scn)
    if any(c.ref == "as-is" for c in constraints) and as_is is None:
        text = next(c.text for c in constraints if c.ref == "as-is")
        raise TuneError(f"--subject-to {text!r}: the scenario has no \"as is\" policy (its policies: "
                        f"{', '.join(repr(p.name) for p in scn.policies)})")
    workloads = select_workloads(scn, policy, options.workloads)
    keys = [workload_key(w) for w in workloads]
    vpas: dict[str, dict] = {}
    for w in workloads:
        vpa = scn.vpa_object(w, policy)
        assert vpa is not None          # select_workloads keeps only the workloads with one
        vpas[workload_key(w)] = vpa
    seeds = [scn.seed + i for i in range(options.seeds)]
    figure_keys = list(dict.fromkeys([*OBJECTIVES, *(c.metric for c in constraints)]))
    say = progress or (lambda _line: None)
    simulations = 0

    # simulations in worker processes even with parallel 1: a stalled one is ended by the
    # watchdog and its trial failed, instead of waiting forever
    with Runner(options.parallel, options.ray_address, isolate=True) as runner:
        # the references: the baseline (and the "as is" policy), per seed
        refs = [baseline] + ([as_is] if as_is is not None and as_is is not baseline and
                             any(c.ref == "as-is" for c in constraints) else [])
        ref_jobs = [Job(scn, p.name, s, label=f"{p.name} (seed {s})") for p in refs for s in seeds]
        try:
            ref_results = [_check(r, r.policy) for r in runner.run(ref_jobs)]
        except (RuntimeError, ValueError) as e:
            if isinstance(e, (TuneError, SweepError)):
                raise
            raise SweepError(f"the reference simulation failed: {e}") from None
        simulations += len(ref_jobs)
        reference: dict[str, dict[int, JobResult]] = {}
        for r in ref_results:
            reference.setdefault(r.policy, {})[r.seed] = r
        say(f"references: {', '.join(p.name for p in refs)} x {len(seeds)} seed(s)")

        def references(key: str, seed: int) -> tuple[dict, dict | None]:
            base = figures_of(reference[baseline.name][seed], key)
            other = figures_of(reference[as_is.name][seed], key) if as_is is not None and as_is.name in reference \
                else None
            return base, other

        def violations(key: str, per_seed: dict[int, dict[str, float]]) -> list[float]:
            out = []
            for c in constraints:
                worst = -math.inf
                for seed, figures in per_seed.items():
                    base, other = references(key, seed)
                    ref = c.reference(float(base.get(c.metric, 0.0)),
                                      None if other is None else float(other.get(c.metric, 0.0)))
                    worst = max(worst, c.violation(float(figures.get(c.metric, 0.0)), ref))
                out.append(round(worst, 9))
            return out

        # the studies
        optuna.logging.set_verbosity(optuna.logging.WARNING)
        sampler_seed = scn.seed if options.sampler_seed is None else options.sampler_seed
        studies = {}
        modern = hasattr(optuna.trial.Trial, "set_constraint")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
            for i, key in enumerate(keys):
                # the constraints: Trial.set_constraint since Optuna 5, constraints_func before
                extra: dict[str, Any] = (
                    {} if modern else {"constraints_func": lambda t: t.user_attrs.get("constraints", [1.0])})
                sampler = optuna.samplers.TPESampler(
                    seed=sampler_seed * 1000 + i, multivariate=True, constant_liar=True,
                    n_startup_trials=min(10, max(5, options.trials // 3)), **extra)
                study = optuna.create_study(direction="minimize", sampler=sampler, study_name=key)
                for point in starting_points(vpas[key])[:options.trials]:
                    study.enqueue_trial(point)
                studies[key] = study

        done = 0
        failures: list[str] = []
        while done < options.trials:
            size = min(options.batch, options.trials - done)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
                asked = {key: [study.ask() for _ in range(size)] for key, study in studies.items()}
            points = {key: [suggest(t) for t in trials] for key, trials in asked.items()}
            jobs: list[Job] = []
            for k in range(size):
                overrides = {key: override_of(vpas[key], settings_of(points[key][k])) for key in keys}
                jobs.extend(Job(scn, policy.name, s, overrides, label=f"trial {done + k} (seed {s})") for s in seeds)
            results = runner.run(jobs, keep_errors=True)
            simulations += len(jobs)
            for k in range(size):
                batch_results = results[k * len(seeds):(k + 1) * len(seeds)]
                error = next((_failure(r) for r in batch_results if _failure(r)), "")
                if error:                 # a failed simulation: the trial failed, for every study
                    failures.append(error)
                    for key in keys:
                        asked[key][k].set_user_attr("error", error)
                        studies[key].tell(asked[key][k], state=optuna.trial.TrialState.FAIL)
                    continue
                for key in keys:
                    per_seed = {r.seed: figures_of(r, key) for r in batch_results}
                    trial = asked[key][k]
                    value = _mean([f.get(options.minimize, 1.0) for f in per_seed.values()])
                    broken = violations(key, per_seed)
                    trial.set_user_attr("constraints", broken)
                    if modern:
                        for c, v in zip(constraints, broken):
                            trial.set_constraint(c.text, v)
                    trial.set_user_attr("figures", _mean_figures(list(per_seed.values()), figure_keys))
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
                        studies[key].tell(trial, value)
            done += size
            say(f"trials {done}/{options.trials}")

        # the choice, verified together
        candidates = {}
        for key, study in studies.items():
            feasible = [t for t in study.trials if t.value is not None and
                        all(v <= 0 for v in t.user_attrs.get("constraints", [1.0]))]
            candidates[key] = sorted(feasible, key=lambda t: (t.value, t.number))
        tries = {key: 0 for key in keys}
        chosen = {key: 0 for key in keys if candidates[key]}
        final: dict[int, JobResult] = {}
        while True:
            overrides = {key: override_of(vpas[key], settings_of(candidates[key][i].params))
                         for key, i in chosen.items()}
            jobs = [Job(scn, policy.name, s, overrides, label=f"verification (seed {s})") for s in seeds]
            final = {r.seed: r for r in runner.run(jobs, keep_errors=True)}
            simulations += len(jobs)
            error = next((_failure(r) for r in final.values() if _failure(r)), "")
            if error:
                failures.append(error)
                if not chosen:
                    raise SweepError(f"the verification simulation failed: {error}")
                failing = list(chosen)    # nothing tells which setting it was: each moves on
            else:
                failing = [key for key in chosen
                           if any(v > 0 for v in violations(key, {s: figures_of(r, key) for s, r in final.items()}))]
            say(f"verification: {len(chosen) - len(failing)}/{len(chosen)} workloads meet the constraints together")
            if not failing:
                break
            for key in failing:
                tries[key] += 1
                if tries[key] < MAX_TRIES and chosen[key] + 1 < len(candidates[key]):
                    chosen[key] += 1
                else:
                    del chosen[key]

    out = []
    for w, key in zip(workloads, keys):
        per_seed = {s: figures_of(r, key) for s, r in final.items()}
        checks = []
        for c, v in zip(constraints, violations(key, per_seed)):
            base = [references(key, s) for s in seeds]
            ref_values = [c.reference(float(b.get(c.metric, 0.0)), None if o is None else float(o.get(c.metric, 0.0)))
                          for b, o in base]
            checks.append({"constraint": c.text, "metric": c.metric, "op": c.op,
                           "value": round(_mean([per_seed[s].get(c.metric, 0.0) for s in seeds]), 6),
                           "reference": round(_mean(ref_values), 6),
                           "reference_name": c.describe_reference(baseline.name, as_is.name if as_is else None),
                           "holds": v <= 0})
        entry = WorkloadTuning(
            key=key, namespace=w.namespace, name=w.name, settings=None, trial=None, vpa=None,
            figures=_mean_figures(list(per_seed.values()), figure_keys),
            baseline=_mean_figures([figures_of(reference[baseline.name][s], key) for s in seeds], figure_keys),
            checks=checks, feasible_trials=len(candidates[key]))
        if key in chosen:
            chosen_trial = candidates[key][chosen[key]]
            entry.settings = settings_of(chosen_trial.params)
            entry.trial = chosen_trial.number
            entry.vpa = _vpa_for(scn, policy, key, override_of(vpas[key], entry.settings))
        elif not candidates[key]:
            best = min((t for t in studies[key].trials if t.value is not None),
                       key=lambda t: (max(t.user_attrs.get("constraints", [1.0])), t.number), default=None)
            entry.note = f"no trial met {', '.join(c.text for c in constraints)}"
            if best is not None:
                worst = max(best.user_attrs.get("constraints", [0.0]))
                entry.note += f" (the closest, trial {best.number}, broke one by {worst:g})"
        else:
            entry.note = (f"{len(candidates[key])} trial(s) met the constraints alone, but not together with the "
                          f"other workloads' settings in the verification ({tries[key]} tried)")
        out.append(entry)
    return TuneResult(scenario=scn.name, policy=policy.name, baseline=baseline.name,
                      as_is=as_is.name if as_is is not None else None, minimize=options.minimize,
                      constraints=[c.text for c in constraints], trials=options.trials, seeds=seeds,
                      batch=options.batch, simulations=simulations, workloads=out, failures=failures)


def _vpa_for(scn: Scenario, policy: Any, key: str, override: dict) -> dict | None:
    tuned = with_overrides(scn, policy.name, {key: override})
    workload = next(w for w in tuned.workloads if workload_key(w) == key)
    return tuned.vpa_object(workload, find_policy(tuned, policy.name))


# -- output --------------------------------------------------------------------------------------------

def _pct(x: float) -> str:
    return f"{x * 100:.1f}%"


def _name(w: WorkloadTuning) -> str:
    return f"{w.namespace}/{w.name}" if w.key == w.name else f"{w.key} ({w.namespace}/{w.name})"


def format_result(result: TuneResult) -> str:
    """Per workload: the chosen settings and its figures against the baseline's."""
    lines = [(f"tuned {len(result.workloads)} workload(s) of {result.scenario} under policy {result.policy!r}: "
              f"{result.trials} trials, {len(result.seeds)} seed(s) ({result.seeds[0]}..{result.seeds[-1]}), "
              f"{result.simulations} simulations; minimize {result.minimize} subject to "
              f"{', '.join(result.constraints)} (baseline {result.baseline!r})")]
    if result.failures:
        lines.append(f"{len(result.failures)} simulation(s) failed, their trials counted as failed; the first: "
                     f"{result.failures[0]}")
    for w in result.workloads:
        f, b = w.figures, w.baseline
        lines.append("")
        if w.settings is None:
            lines.append(f"{_name(w)}: no VPA written: {w.note}")
        else:
            lines.append(f"{_name(w)}: trial {w.trial} of {result.trials} ({w.feasible_trials} met the constraints)")
            for k, v in w.settings["annotations"].items():
                lines.append(f"  {k}: {v}")
            lines.append(f"  controlledValues: {w.settings['controlledValues']}")
        tag = "final simulation" if w.settings is not None else "under the policy's own settings"
        lines.append(f"  slack {_pct(f['slack'])} (cpu {_pct(f['cpu_slack'])}, memory {_pct(f['memory_slack'])}) "
                     f"vs baseline {_pct(b['slack'])} (cpu {_pct(b['cpu_slack'])}, memory {_pct(b['memory_slack'])}); "
                     f"{tag}")
        for c in w.checks:
            lines.append(f"  {c['metric']} {c['value']:g} {c['op']} {c['reference']:g} ({c['reference_name']}): "
                         f"{'holds' if c['holds'] else 'broken'}"
                         + (f"; baseline {b[c['metric']]:g}" if c['metric'] in b else ""))
    return "\n".join(lines)


def vpa_yaml(result: TuneResult) -> str:
    """The VerticalPodAutoscalers as one multi-document YAML file, with a header comment."""
    import yaml
    head = [(f"# kvert vpa tune: {result.scenario}, policy {result.policy!r}, minimize {result.minimize} subject "
             f"to {', '.join(result.constraints)} (baseline {result.baseline!r}), {result.trials} trials, "
             f"seeds {result.seeds[0]}..{result.seeds[-1]}")]
    for w in result.workloads:
        if w.vpa is None:
            head.append(f"# {w.key}: no VPA: {w.note}")
        else:
            head.append(f"# {w.key}: slack {_pct(w.figures['slack'])} (baseline {_pct(w.baseline['slack'])})")
    docs = result.vpas()
    body = yaml.safe_dump_all(docs, sort_keys=False, default_flow_style=False) if docs else ""
    return "\n".join(head) + "\n" + body
