"""Sweeps: many simulations, in this process, in local worker processes or on a Ray cluster.

A ``Job`` is one simulation: a scenario, the name of one of its policies, a seed and,
optionally, overrides of workloads' own VPA settings (``{workload key: {"annotations": {...},
"resourcePolicy": {"containerPolicies": [...]}}}``, layered over what the workload has under
that policy, as a scenario's ``workloads[].vpa`` is). One simulation stays one process.
``run_jobs(jobs, parallel=N, ray_address=None)`` runs them

* in this process (``parallel=1``, the default), with the engine's progress within each job;
* in ``N`` local worker processes (``spawn``ed: nothing of this process's event loops or
  threads is inherited; a script calling this needs the ``if __name__ == "__main__":``
  guard); each worker is sent the scenarios once, when it starts, then only (scenario index,
  policy, seed, overrides) per job, on a pipe of its own;
* on a Ray cluster (``ray_address``: ``HOST:PORT`` of its head, ``ray://HOST:PORT``, or
  ``auto``); Ray is the optional extra ``kvert[ray]``, imported only here. The scenarios are
  put in the cluster's object store once (``ray.put``) and every task reads them from there.
  The cluster's nodes need kvert installed (the same version as here).

``Runner`` keeps the workers (or the Ray connection and the scenarios put) between calls, as a
tuning's batches need. In worker processes and on Ray a watchdog thread ends a simulation that
stalls: a simulation never waits for real time, so one whose process computed nothing for
``STALL_SECONDS`` (60 s) of wall time is deadlocked; the job fails with ``Stalled`` (or, with
``Runner.run(keep_errors=True)``, gives a result whose ``error`` says so) and the worker is
replaced.

What comes back is a small ``JobResult``: the run's metrics (totals and per workload, as
``kvert.sim.metrics.policy_metrics``), the per-workload slack fractions a tuning minimizes
(``slack_fractions``), and, only for jobs that ask for it (``full=True``: what
``report_json`` needs), the ``PolicyRun`` itself (samples and counters, no event loop state).

Results do not depend on who runs them: a simulation's figures are a function of the
scenario, policy, seed and overrides alone. Python's hash randomization (``PYTHONHASHSEED``,
different in every process) does not reach them: no figure depends on the iteration order
of a set or dict of strings (checked by tests/sim/test_sweep.py, which runs a job under
different hash seeds, and by tests/e2e/test_ray_sweep.py, Ray against local workers), so
neither the workers nor Ray's runtime_env need PYTHONHASHSEED set.

Several seeds: ``seed_statistics`` gives, per figure of a policy's totals, the mean over the
seeds and its 95% confidence interval (Student's t with n-1 degrees of freedom: mean ±
t(0.975, n-1)·s/√n; none with one seed); ``add_seed_statistics`` adds them to a report
document.
"""

from __future__ import annotations

import copy
import html
import logging
import math
import multiprocessing
import os
import pickle
import socket
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from kvert.sim.engine import PolicyRun, SimulationError, run_policy
from kvert.sim.metrics import policy_metrics
from kvert.sim.scenario import Scenario, ScenarioError, load_scenario
from kvert.sim.scenario_fields import duration as parse_scenario_duration

log = logging.getLogger(__name__)

SCENARIO_FILE = "scenario.yaml"
RAY_EXTRA = "pip install 'kvert[ray]'"
# progress(job label, fraction of that job done): within a job in this process, at its end
# in worker processes and on Ray
JobProgress = Callable[[str, float], None]


class SweepError(RuntimeError):
    """A sweep that cannot run (a bad job, Ray missing or unreachable); the message says why."""


@dataclass
class Job:
    """One simulation: ``scenario`` under its policy ``policy`` with ``seed`` (None: the
    scenario's) and ``overrides`` of workloads' VPA settings (by workload key)."""
    scenario: Scenario
    policy: str
    seed: int | None = None
    overrides: dict[str, dict] = field(default_factory=dict)
    full: bool = False             # also return the PolicyRun (for report_json)
    label: str = ""

    def __post_init__(self) -> None:
        if not self.label:
            seed = self.scenario.seed if self.seed is None else self.seed
            self.label = f"{self.policy} (seed {seed})"


@dataclass
class JobResult:
    policy: str
    seed: int
    overrides: dict[str, dict]
    metrics: dict                  # policy_metrics: {"totals": {...}, "workloads": {key: {...}}}
    slack: dict[str, dict[str, float]]   # workload key -> slack_fractions
    label: str = ""
    skipped: str = ""
    run: PolicyRun | None = None   # only for jobs with full=True
    error: str = ""                # why the job failed (Runner.run(keep_errors=True) only)


def failed_result(job: Job, error: str) -> JobResult:
    seed = job.scenario.seed if job.seed is None else job.seed
    return JobResult(policy=job.policy, seed=seed, overrides=job.overrides, metrics={"totals": {}, "workloads": {}},
                     slack={}, label=job.label, error=error)


# -- one job -----------------------------------------------------------------------------------------

def workload_key(workload: Any) -> str:
    return getattr(workload, "key", "") or workload.name


def find_policy(scn: Scenario, name: str) -> Any:
    for p in scn.policies:
        if p.name == name:
            return p
    raise SweepError(f"no policy {name!r} in the scenario (it has {', '.join(repr(p.name) for p in scn.policies)})")


def _merged_settings(current: dict, override: dict) -> dict:
    """A workload's own VPA settings with ``override`` layered over them: annotations merged
    (the override's win), container policies replaced by containerName."""
    out = {k: copy.deepcopy(v) for k, v in current.items() if k != "policies"}
    if override.get("annotations"):
        out["annotations"] = {**(out.get("annotations") or {}), **override["annotations"]}
    own = (override.get("resourcePolicy") or {}).get("containerPolicies")
    if own:
        names = {p.get("containerName") for p in own}
        kept = [p for p in (out.get("resourcePolicy") or {}).get("containerPolicies") or []
                if p.get("containerName") not in names]
        out["resourcePolicy"] = {"containerPolicies": copy.deepcopy(own) + kept}
    return out


def with_overrides(scn: Scenario, policy_name: str, overrides: dict[str, dict], seed: int | None = None) -> Scenario:
    """A copy of ``scn`` (seed replaced) whose workloads named in ``overrides`` (by key, or
    ``namespace/name``) have those VPA settings under ``policy_name``. Raises SweepError for
    an unknown workload or settings the recommender would refuse."""
    # shallow copies (a scenario may hold a large trace bank): the scenario, its workload list
    # and the overridden workloads; a run does not change what it is given
    out = copy.copy(scn)
    if seed is not None:
        out.seed = seed
    if not overrides:
        return out
    policy = find_policy(out, policy_name)
    out.workloads = list(out.workloads)
    index = {workload_key(w): i for i, w in enumerate(out.workloads)}
    index.update({f"{w.namespace}/{w.name}": i for i, w in enumerate(out.workloads)})
    for key, override in overrides.items():
        i = index.get(key)
        if i is None:
            raise SweepError(f"overrides: no workload {key!r} in the scenario")
        unknown = sorted(set(override) - {"annotations", "resourcePolicy"})
        if unknown:
            raise SweepError(f"overrides[{key}]: unknown field {unknown[0]!r} (expected annotations, resourcePolicy)")
        w = out.workloads[i] = copy.copy(out.workloads[i])
        w.vpa = _merged_settings(w.vpa_settings(policy), override)
        _check_vpa(out, w, policy, key)
    return out


def _check_vpa(scn: Scenario, workload: Any, policy: Any, key: str) -> None:
    from kvert.api.validation.vpa import validate_vpa
    from kvert.vpa.recommendation import DEFAULT_CONFIG
    obj = scn.vpa_object(workload, policy)
    if obj is None:
        raise SweepError(f"overrides[{key}]: the workload has no VPA under policy {policy.name!r}")
    causes = validate_vpa(copy.deepcopy(obj))
    if causes:
        raise SweepError(f"overrides[{key}]: {causes[0].field}: {causes[0].message}")
    _, problems = DEFAULT_CONFIG.for_vpa(obj)
    if problems:
        raise SweepError(f"overrides[{key}]: {problems[0]}")


def slack_fractions(series: dict[str, np.ndarray]) -> dict[str, float]:
    """Requested but unused over requested, over the run: per resource Σ max(request − use, 0)
    / Σ request over the samples (the workload's sums; 1 when it never requested anything:
    a workload that never ran is never the least slack), and ``slack`` their mean."""
    out = {}
    for r in ("cpu", "memory"):
        request = np.asarray(series[f"{r}_request"], dtype=float)
        use = np.asarray(series[f"{r}_use"], dtype=float)
        total = float(request.sum())
        out[f"{r}_slack"] = float(np.clip(request - use, 0, None).sum() / total) if total > 0 else 1.0
    out["slack"] = (out["cpu_slack"] + out["memory_slack"]) / 2
    return {k: round(v, 9) for k, v in out.items()}


def run_job(scn: Scenario, policy: str, seed: int | None, overrides: dict[str, dict], full: bool = False,
            label: str = "", progress: JobProgress | None = None) -> JobResult:
    """One simulation, here; what the workers run."""
    s = with_overrides(scn, policy, overrides, seed)
    pol = find_policy(s, policy)
    engine_progress = None if progress is None else (lambda _policy, fraction: progress(label, fraction))
    try:
        run = run_policy(s, pol, engine_progress)
    except SimulationError as e:
        log.warning("policy %s skipped: %s", policy, e)
        run = PolicyRun(pol.name, pol.update_mode, np.zeros(0), s.sample_interval, {}, {}, {}, np.zeros(0),
                        skipped=str(e))
    slack = {w: slack_fractions(series) for w, series in run.workloads.items()}
    return JobResult(policy=policy, seed=s.seed, overrides=overrides, metrics=policy_metrics(run), slack=slack,
                     label=label, skipped=run.skipped, run=run if full else None)


# -- local worker processes and Ray ----------------------------------------------------------------

class Stalled(RuntimeError):
    """A simulation that stopped computing: its process used no CPU for ``stall_seconds``."""


class _Watchdog:
    """A thread that notices a job whose process stopped computing: a simulation runs in
    virtual time and never waits for real time, so a process that used (nearly) no CPU for
    ``stall_seconds`` of wall time is deadlocked (every task waiting on something nothing will
    do). It then calls ``on_stall(label)``, which ends the process."""

    def __init__(self, on_stall: Callable[[str], None], stall_seconds: float):
        import threading

        from kvert.clock import WallClock
        self.on_stall = on_stall
        self.stall_seconds = stall_seconds
        self.wall = WallClock()
        self.label: str | None = None
        self.since = (0.0, 0.0)                  # (wall time, cpu time) of the last progress
        self.tick = threading.Event()
        threading.Thread(target=self._run, name="kvert-sweep-watchdog", daemon=True).start()

    def start(self, label: str) -> None:
        import time
        self.since = (self.wall.now(), time.process_time())
        self.label = label

    def stop(self) -> None:
        self.label = None

    def _run(self) -> None:
        import time
        while True:
            self.tick.wait(min(5.0, self.stall_seconds / 4))
            label = self.label
            if label is None:
                continue
            wall, cpu = self.wall.now(), time.process_time()
            if cpu - self.since[1] > 0.5:
                self.since = (wall, cpu)
            elif wall - self.since[0] >= self.stall_seconds and self.label == label:
                self.on_stall(label)


STALL_SECONDS = 60.0
_RAY_WATCHDOG: _Watchdog | None = None


def _stall_message(label: str, seconds: float) -> str:
    return (f"{label}: the simulation stalled (its process computed nothing for {seconds:g} s of wall time: "
            f"every task of its event loop waits for something that will not happen); a bug to report, with "
            f"the scenario, policy, seed and overrides")


def _worker_main(conn: Any, scenarios: bytes, stall_seconds: float) -> None:
    """A local worker process: the scenarios once, then (index, policy, seed, overrides, full,
    label) per job, answered with ("ok", JobResult), ("error", exception, traceback text) or,
    from the watchdog, ("stalled", message) before the process ends."""
    import threading
    import traceback
    table: list[Scenario] = pickle.loads(scenarios)
    sending = threading.Lock()

    def stalled(label: str) -> None:
        with sending:
            try:
                conn.send(("stalled", _stall_message(label, stall_seconds)))
            finally:
                os._exit(3)
    watchdog = _Watchdog(stalled, stall_seconds)
    while True:
        try:
            call = conn.recv()
        except (EOFError, OSError):
            return
        if call is None:
            return
        index, policy, seed, overrides, full, label = call
        watchdog.start(label)
        try:
            answer: tuple = ("ok", run_job(table[index], policy, seed, overrides, full, label))
        except Exception as e:                       # sent back, raised in the parent
            answer = ("error", e, traceback.format_exc())
        watchdog.stop()
        with sending:
            try:
                conn.send(answer)
            except Exception as e:                   # an exception that does not pickle
                conn.send(("error", SweepError(f"{label}: {answer[1] if answer[0] == 'error' else e}"), ""))


class _LocalPool:
    """``size`` spawned worker processes, each with a pipe: a job goes to an idle worker, its
    result comes back on the same pipe (no queue or helper thread in between). A worker that
    stalls or dies is replaced."""

    def __init__(self, size: int, scenarios: bytes, stall_seconds: float):
        self.context = multiprocessing.get_context("spawn")
        self.scenarios = scenarios
        self.stall_seconds = stall_seconds
        self.workers: list[tuple[Any, Any]] = [self._spawn() for _ in range(size)]

    def _spawn(self) -> tuple[Any, Any]:
        parent, child = self.context.Pipe()
        process = self.context.Process(target=_worker_main, args=(child, self.scenarios, self.stall_seconds),
                                       daemon=True, name="kvert-sweep-worker")
        process.start()
        child.close()
        return process, parent

    def _replace(self, worker: tuple[Any, Any]) -> tuple[Any, Any]:
        process, conn = worker
        process.join(5)
        if process.is_alive():
            process.terminate()
            process.join(5)
        conn.close()
        fresh = self._spawn()
        self.workers[self.workers.index(worker)] = fresh
        return fresh

    def run(self, calls: list[tuple], done: Callable[[int], None] | None = None,
            keep_errors: bool = False) -> list[Any]:
        """Per call: its JobResult, or (keep_errors) the error text of a call that failed."""
        from multiprocessing.connection import wait as wait_for
        results: list[Any] = [None] * len(calls)
        todo = list(range(len(calls)))
        idle = list(self.workers)
        busy: dict[Any, tuple[tuple[Any, Any], int]] = {}

        def failed(i: int, worker: tuple[Any, Any] | None, error: BaseException | str) -> None:
            if worker is not None:
                idle.append(self._replace(worker))
            if not keep_errors:
                raise error if isinstance(error, BaseException) else SweepError(error)
            results[i] = str(error)
            if done is not None:
                done(i)

        while todo or busy:
            while todo and idle:
                worker = idle.pop()
                i = todo.pop(0)
                worker[1].send(calls[i])
                busy[worker[1]] = (worker, i)
            sentinels = {worker[0].sentinel: (worker, i) for worker, i in busy.values()}
            ready = wait_for([*busy, *sentinels])
            for ready_conn in [r for r in ready if r in busy]:
                worker, i = busy.pop(ready_conn)
                conn = worker[1]                # ready_conn, as the worker's pipe end
                try:
                    answer = conn.recv()
                except (EOFError, OSError):
                    worker[0].join(1)
                    failed(i, worker, f"{calls[i][5]}: the worker process ended (exit code {worker[0].exitcode})")
                    continue
                if answer[0] == "stalled":
                    failed(i, worker, Stalled(answer[1]))
                    continue
                if answer[0] == "error":
                    error = answer[1]
                    if not isinstance(error, (SweepError, ScenarioError, SimulationError)):
                        error = SweepError(f"{calls[i][5]} failed in a worker process: {error!r}\n{answer[2]}")
                    idle.append(worker)
                    failed(i, None, error)
                    continue
                results[i] = answer[1]
                idle.append(worker)
                if done is not None:
                    done(i)
            for sentinel in [r for r in ready if r in sentinels]:
                worker, i = sentinels[sentinel]
                if worker[1] in busy and not worker[1].poll():
                    busy.pop(worker[1])
                    worker[0].join(1)
                    failed(i, worker, f"{calls[i][5]}: the worker process ended (exit code {worker[0].exitcode})")
        return results

    def close(self, now: bool = False) -> None:
        for _process, conn in self.workers:
            try:
                if not now:
                    conn.send(None)
            except OSError:
                pass
        for process, conn in self.workers:
            process.join(timeout=0.1 if now else 30)
            if process.is_alive():
                process.terminate()
                process.join(timeout=5)
            conn.close()
        self.workers = []


def import_ray() -> Any:
    try:
        import ray
    except ImportError as e:
        raise SweepError(f"--ray needs Ray, an optional extra of kvert: {RAY_EXTRA} ({e})") from None
    return ray


def _ray_endpoint(address: str) -> tuple[str, int] | None:
    """(host, port) to check before connecting; None for ``auto`` (a local cluster Ray finds)."""
    if address in ("auto", "local"):
        return None
    rest = address.split("://", 1)[1] if "://" in address else address
    host, sep, port = rest.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise SweepError(f"--ray {address}: expected HOST:PORT (the head's GCS port, e.g. 127.0.0.1:6379), "
                         f"ray://HOST:PORT or auto")
    return host.strip("[]"), int(port)


def check_reachable(address: str, timeout: float = 5.0) -> None:
    """Fail fast (Ray itself retries for minutes) when nothing listens at the address."""
    endpoint = _ray_endpoint(address)
    if endpoint is None:
        return
    try:
        with socket.create_connection(endpoint, timeout=timeout):
            pass
    except OSError as e:
        raise SweepError(f"--ray {address}: no Ray cluster reachable there ({e.strerror or e}); start one with "
                         f"'ray start --head --port {endpoint[1]}' or give its head's address") from None


def _ray_job(scn: Scenario, policy: str, seed: int | None, overrides: dict, full: bool, label: str,
             stall_seconds: float) -> JobResult:
    """A job in a Ray worker; a stalled simulation ends the worker process (Ray reports the
    task failed)."""
    global _RAY_WATCHDOG
    if _RAY_WATCHDOG is None or _RAY_WATCHDOG.stall_seconds != stall_seconds:
        def stalled(label: str) -> None:
            print(_stall_message(label, stall_seconds), file=sys.stderr, flush=True)
            os._exit(3)
        _RAY_WATCHDOG = _Watchdog(stalled, stall_seconds)
    _RAY_WATCHDOG.start(label)
    try:
        return run_job(scn, policy, seed, overrides, full, label)
    finally:
        _RAY_WATCHDOG.stop()


class Runner:
    """Where jobs run, kept between batches (a tuning's): this process (``parallel`` 1 and not
    ``isolate``), a pool of ``parallel`` spawned worker processes that hold the scenarios (sent
    once, when a worker starts), or a connection to the Ray cluster at ``ray_address`` with
    each scenario in its object store (put once). In worker processes and on Ray a watchdog
    ends a simulation that stalls (``stall_seconds`` without computing; ``Stalled``). Use as a
    context manager, or ``close()`` it."""

    def __init__(self, parallel: int = 1, ray_address: str | None = None, *, isolate: bool = False,
                 stall_seconds: float = STALL_SECONDS):
        if parallel < 1:
            raise SweepError(f"--parallel: expected at least 1, got {parallel}")
        self.parallel = parallel
        self.ray_address = ray_address
        self.isolate = isolate
        self.stall_seconds = stall_seconds
        self._scenarios: list[Scenario] = []      # held, so their ids stay theirs
        self._index: dict[int, int] = {}
        self._pool: _LocalPool | None = None
        self._pool_size = 0                       # scenarios the pool's workers hold
        self._ray: Any = None
        self._ray_connected_here = False
        self._ray_refs: dict[int, Any] = {}
        self._ray_remote: Any = None
        if ray_address:
            self._connect_ray()

    def __enter__(self) -> Runner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()
            self._pool = None
        if self._ray is not None and self._ray_connected_here:
            self._ray.shutdown()
        self._ray = None

    def _known(self, scn: Scenario) -> int:
        i = self._index.get(id(scn))
        if i is None:
            i = self._index[id(scn)] = len(self._scenarios)
            self._scenarios.append(scn)
        return i

    def run(self, jobs: Sequence[Job], progress: JobProgress | None = None, *,
            keep_errors: bool = False) -> list[JobResult]:
        """Every job's result, in the jobs' order. A job that fails raises (SweepError,
        ScenarioError, SimulationError, Stalled), or with ``keep_errors`` gives a result whose
        ``error`` says why."""
        jobs = list(jobs)
        if not jobs:
            return []
        if self.ray_address:
            answers = self._run_ray(jobs, progress, keep_errors)
        elif self.parallel == 1 and not self.isolate:
            answers = []
            for j in jobs:
                try:
                    answers.append(run_job(j.scenario, j.policy, j.seed, j.overrides, j.full, j.label, progress))
                except Exception as e:
                    if not keep_errors:
                        raise
                    answers.append(f"{j.label}: {e}")
        else:
            answers = self._run_local(jobs, progress, keep_errors)
        return [a if isinstance(a, JobResult) else failed_result(j, str(a)) for a, j in zip(answers, jobs)]

    # local processes
    def _run_local(self, jobs: list[Job], progress: JobProgress | None, keep_errors: bool) -> list[Any]:
        indexes = [self._known(j.scenario) for j in jobs]
        if self._pool is None or self._pool_size < len(self._scenarios):
            if self._pool is not None:                 # a new scenario: workers that hold it
                self._pool.close()
            self._pool = _LocalPool(self.parallel, pickle.dumps(self._scenarios), self.stall_seconds)
            self._pool_size = len(self._scenarios)
        calls = [(indexes[i], j.policy, j.seed, j.overrides, j.full, j.label) for i, j in enumerate(jobs)]
        try:
            return self._pool.run(calls, None if progress is None else (lambda i: progress(jobs[i].label, 1.0)),
                                  keep_errors=keep_errors)
        except BaseException:
            self._pool.close(now=True)                 # workers busy with jobs nobody waits for
            self._pool = None
            raise

    # Ray
    def _connect_ray(self) -> None:
        ray = import_ray()
        address = str(self.ray_address)
        check_reachable(address)
        if not ray.is_initialized():
            try:
                ray.init(address=address, logging_level=logging.WARNING, log_to_driver=False)
            except Exception as e:           # ConnectionError, RuntimeError: Ray's own messages
                raise SweepError(f"--ray {address}: cannot connect to the Ray cluster: {e}") from None
            self._ray_connected_here = True
        self._ray = ray
        self._ray_remote = ray.remote(num_cpus=1, max_retries=0)(_ray_job)

    def _run_ray(self, jobs: list[Job], progress: JobProgress | None, keep_errors: bool) -> list[Any]:
        ray = self._ray
        refs_of = []
        for j in jobs:
            self._known(j.scenario)
            ref = self._ray_refs.get(id(j.scenario))
            if ref is None:           # once per scenario; every task reads it from the object store
                ref = self._ray_refs[id(j.scenario)] = ray.put(j.scenario)
            refs_of.append(ref)
        tasks = {self._ray_remote.remote(refs_of[i], j.policy, j.seed, j.overrides, j.full, j.label,
                                         self.stall_seconds): i
                 for i, j in enumerate(jobs)}
        results: list[Any] = [None] * len(jobs)
        pending = list(tasks)
        try:
            while pending:
                done, pending = ray.wait(pending, num_returns=1)
                for ref in done:
                    i = tasks[ref]
                    try:
                        results[i] = ray.get(ref)
                    except ray.exceptions.RayError as e:
                        cause = getattr(e, "cause", None) or e
                        if isinstance(cause, (SweepError, ScenarioError, SimulationError)):
                            error: Exception = cause
                        elif isinstance(e, ray.exceptions.WorkerCrashedError):
                            error = Stalled(f"{jobs[i].label}: its Ray worker process ended (a stalled "
                                            f"simulation ends its worker after {self.stall_seconds:g} s): {e}")
                        else:
                            error = SweepError(f"{jobs[i].label} failed on the Ray cluster: {cause}")
                        if not keep_errors:
                            raise error from None
                        results[i] = str(error)
                    if progress is not None:
                        progress(jobs[i].label, 1.0)
        except BaseException:
            for ref in pending:
                ray.cancel(ref)
            raise
        return results


def run_jobs(jobs: Sequence[Job], parallel: int = 1, ray_address: str | None = None,
             progress: JobProgress | None = None) -> list[JobResult]:
    """Run every job and return their results in the jobs' order: in this process
    (``parallel`` 1), in ``parallel`` local worker processes (at most one per job), or on the
    Ray cluster at ``ray_address``. The figures are the same whichever runs them. (Local
    workers are spawned: a script that calls this with ``parallel`` > 1 needs the usual
    ``if __name__ == "__main__":`` guard.)"""
    jobs = list(jobs)
    if parallel < 1:
        raise SweepError(f"--parallel: expected at least 1, got {parallel}")
    if not jobs:
        return []
    with Runner(min(parallel, len(jobs)), ray_address) as runner:
        return runner.run(jobs, progress)


# -- scenarios given as files or directories -------------------------------------------------------

def scenario_path(path: str | Path) -> Path:
    """The scenario file: ``path`` itself, or ``path/scenario.yaml`` for a directory (what
    ``kvert scenario import`` writes)."""
    path = Path(path)
    if path.is_dir():
        inner = path / SCENARIO_FILE
        if not inner.is_file():
            raise ScenarioError(f"{path}: a directory without {SCENARIO_FILE} (give a scenario file, or a "
                                f"directory holding {SCENARIO_FILE})")
        return inner
    return path


def load(path: str | Path, *, duration: str | None = None, seed: int | None = None) -> Scenario:
    """The scenario of a file or a directory holding ``scenario.yaml``, with the command line's
    ``--duration`` and ``--seed`` over its own. Raises ScenarioError."""
    scn = load_scenario(scenario_path(path))
    if duration:
        scn.duration = parse_scenario_duration(duration, "--duration")
    if seed is not None:
        scn.seed = seed
    return scn


# -- several seeds ------------------------------------------------------------------------------------

def seeds_from(first: int, count: int) -> list[int]:
    if count < 1:
        raise SweepError(f"--seeds: expected at least 1, got {count}")
    return [first + i for i in range(count)]


def _betacf(a: float, b: float, x: float) -> float:
    """The continued fraction of the incomplete beta function (modified Lentz)."""
    tiny, eps = 1e-300, 1e-15
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 1000):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < eps:
            break
    return h


def _betainc(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_cdf(t: float, df: float) -> float:
    """Student's t distribution function with ``df`` degrees of freedom."""
    tail = 0.5 * _betainc(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t >= 0 else tail


def t_quantile(p: float, df: float) -> float:
    """The ``p`` quantile of Student's t with ``df`` degrees of freedom (bisection on the
    distribution function; t(0.975, 1) = 12.706, t(0.975, 2) = 4.303)."""
    if not 0.0 < p < 1.0 or df <= 0:
        raise ValueError(f"t quantile needs 0 < p < 1 and df > 0 (got p={p}, df={df})")
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    lo, hi = 0.0, 1.0
    while t_cdf(hi, df) < p:
        hi *= 2.0
    for _ in range(200):
        mid = (lo + hi) / 2.0
        if t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-12 * max(1.0, hi):
            break
    return (lo + hi) / 2.0


def mean_interval(values: Sequence[float], confidence: float = 0.95) -> tuple[float, tuple[float, float] | None]:
    """The mean and its ``confidence`` interval (Student's t, n-1 degrees of freedom; None
    for a single value)."""
    xs = np.asarray(list(values), dtype=float)
    if xs.size == 0:
        raise ValueError("no values")
    mean = float(xs.mean())
    if xs.size < 2:
        return mean, None
    half = t_quantile(0.5 + confidence / 2, xs.size - 1) * float(xs.std(ddof=1)) / math.sqrt(xs.size)
    return mean, (mean - half, mean + half)


def seed_statistics(per_seed: Sequence[tuple[int, dict[str, float]]], confidence: float = 0.95) -> dict:
    """From [(seed, totals)] of one policy: ``{"seeds", "per_seed": [{"seed", "totals"}],
    "mean": {figure: m}, "ci95": {figure: [low, high]} (or None with one seed)}``."""
    figures = [k for k, v in per_seed[0][1].items() if isinstance(v, (int, float))] if per_seed else []
    mean: dict[str, float] = {}
    interval: dict[str, list[float]] = {}
    for key in figures:
        m, ci = mean_interval([float(t[key]) for _, t in per_seed], confidence)
        mean[key] = round(m, 6)
        if ci is not None:
            interval[key] = [round(ci[0], 6), round(ci[1], 6)]
    return {"seeds": [s for s, _ in per_seed], "per_seed": [{"seed": s, "totals": t} for s, t in per_seed],
            "mean": mean, "ci95": interval if len(per_seed) > 1 else None}


def add_seed_statistics(doc: dict, results: Sequence[JobResult]) -> dict:
    """Add to each policy of a report document (``report_json``'s) its ``seeds``: per-seed
    totals, means and 95% intervals (``seed_statistics``); and to the document ``seeds``:
    which seeds and how the intervals are made."""
    by_policy: dict[str, list[tuple[int, dict]]] = {}
    for r in results:
        if not r.skipped:
            by_policy.setdefault(r.policy, []).append((r.seed, r.metrics["totals"]))
    seeds = sorted({r.seed for r in results})
    for entry in doc.get("results") or []:
        rows = sorted(by_policy.get(entry["name"], []), key=lambda row: row[0])
        if rows:
            entry["seeds"] = seed_statistics(rows)
    doc["seeds"] = {"seeds": seeds, "count": len(seeds), "confidence": 0.95,
                    "interval": "mean ± t(0.975, n-1)·s/√n (Student's t, n-1 degrees of freedom; none for n = 1)",
                    "report_seed": doc.get("scenario", {}).get("seed")}
    return doc


SEED_FIGURES = (("cpu_slack_percent", "CPU slack %"), ("memory_slack_percent", "memory slack %"),
                ("cpu_slack_core_hours", "CPU slack core-h"), ("memory_slack_gib_hours", "memory slack GiB-h"),
                ("oom_kills", "OOM kills"), ("evictions", "evictions"), ("in_place_resizes", "resizes"),
                ("container_restarts", "restarts"), ("pending_pod_seconds", "pending pod-s"))


def _interval_text(stats: dict, key: str) -> str:
    m = stats["mean"].get(key)
    if m is None:
        return "-"
    ci = (stats.get("ci95") or {}).get(key)
    return f"{m:.4g}" if ci is None else f"{m:.4g} [{ci[0]:.4g}, {ci[1]:.4g}]"


def _plus_minus(stats: dict, key: str) -> str:
    m = stats["mean"].get(key)
    if m is None:
        return "-"
    ci = (stats.get("ci95") or {}).get(key)
    return f"{m:.4g}" if ci is None else f"{m:.4g} ±{(ci[1] - ci[0]) / 2:.2g}"


def seeds_table_text(doc: dict, figures: Sequence[tuple[str, str]] = SEED_FIGURES, column: int = 15) -> str:
    """The means ± the 95% intervals' half-widths of a report document's policies, a table."""
    seeds = (doc.get("seeds") or {}).get("seeds") or []
    rows = [p for p in doc.get("results") or [] if p.get("seeds")]
    if not seeds or not rows:
        return ""
    width = max([len(p["name"]) for p in rows] + [8])
    lines = [f"over {len(seeds)} seeds ({seeds[0]}..{seeds[-1]}): mean ± half the 95% interval",
             f"{'policy':<{width}}  " + "  ".join(f"{label:>{column}}" for _, label in figures)]
    for p in rows:
        lines.append(f"{p['name']:<{width}}  " + "  ".join(f"{_plus_minus(p['seeds'], key):>{column}}"
                                                         for key, _ in figures))
    return "\n".join(lines)


def seeds_table_html(doc: dict) -> str:
    info = doc.get("seeds") or {}
    seeds = info.get("seeds") or []
    rows = [p for p in doc.get("results") or [] if p.get("seeds")]
    if not seeds or not rows:
        return ""
    head = "".join(f"<th>{html.escape(label)}</th>" for _, label in SEED_FIGURES)
    body = "".join(f"<tr><td><code>{html.escape(p['name'])}</code></td>"
                   + "".join(f"<td>{html.escape(_interval_text(p['seeds'], key))}</td>" for key, _ in SEED_FIGURES)
                   + "</tr>" for p in rows)
    return (f"<h2>Over {len(seeds)} seeds</h2><p>Seeds {seeds[0]} to {seeds[-1]}: the mean of each figure "
            f"and, in brackets, its 95% confidence interval (Student's t, n−1 degrees of freedom). The rest of "
            f"this page is seed {html.escape(str(info.get('report_seed')))}'s run; report.json has every seed's "
            f"totals.</p><table><tr><th>policy</th>{head}</tr>{body}</table>")


def insert_seeds_html(page: str, doc: dict) -> str:
    """``page`` (report.html) with the seeds table before its first section heading."""
    table = seeds_table_html(doc)
    if not table:
        return page
    at = page.find("<h2>")
    if at < 0:
        at = page.rfind("</body>")
    return page + table if at < 0 else page[:at] + table + "\n" + page[at:]


# -- progress -----------------------------------------------------------------------------------------

def default_parallel() -> int:
    """The processors this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)
