"""A real cluster's usage history from Prometheus: ``read_prometheus(URL, start=, end=, step=)``
gives a ``kvert.sim.recorded.RecordedHistory`` (the input of ``kvert scenario import
--prometheus``), read from the series real clusters expose: cAdvisor's (as the kubelet serves
them on ``/metrics/cadvisor``) and kube-state-metrics v2's.

The grid. ``steps = ceil((end - start) / step)``; step ``k`` covers ``[start + k*step,
start + (k+1)*step)``, and the range queries are evaluated at the end of each step, ``t_k =
start + (k+1)*step``:

* CPU (cores): ``sum by (NS, POD, CONTAINER) (rate(container_cpu_usage_seconds_total{SEL}[W]))``,
  the usage over the ``W`` before ``t_k``. ``W`` is ``rate_window``, by default the step (the
  step's own usage; a longer window smooths, and its values after an instance's last working set
  are dropped: the window still held its last samples). ``rate()`` needs two samples in its window:
  with a step of one scrape interval that holds on Prometheus 2 only when the samples fall on the step's bounds (as
  backfilled data does); give a window of at least two scrape intervals otherwise (a warning
  says so when CPU comes back for far fewer steps than memory). A counter reset counts the new
  value as the increase (``rate()``'s rule), and rate extrapolates to the window's bounds: a
  step's CPU is exact when the samples sit on its bounds and off by up to the usage of a
  fraction of a scrape interval otherwise;
* memory (bytes): ``max by (...) (max_over_time(container_memory_working_set_bytes{SEL}[STEP]
  offset 1ms))``, the peak working set of the samples in the step (``[t_k - step, t_k)``, to the
  millisecond);
* throttling (throttled seconds per second): ``sum by (...) (rate(container_cpu_cfs_throttled_
  seconds_total{SEL}[W]))``, for the containers that have the series (those with a CPU limit);
* OOM kills: the increases of ``container_oom_events_total`` (per series, as
  ``kvert.vpa.history.counter_increases`` counts them), for every container that has the
  series; for the others, the steps at which ``kube_pod_container_status_restarts_total`` rises
  while ``kube_pod_container_status_last_terminated_reason{reason="OOMKilled"}`` is current
  (sampled no earlier than the restart count: a last reason that stopped being exposed does not
  count). Restarts (any cause): the increases of ``kube_pod_container_status_restarts_total``.
  Counters are read where they change (``X != X offset STEP or (X unless X offset STEP)``, plus
  their values at ``start``), so the answers stay small; an increase between ``t_{k-1}`` and
  ``t_k`` is at step ``k``;
* requests and limits: the last values of ``kube_pod_container_resource_requests`` /
  ``_limits`` in the window (``cpu``, unit core, to millicores; ``memory`` in bytes), and the
  memory limit at each step (its last value before ``t_k``) into ``memory_limit``;
* owners: ``kube_pod_owner`` (the controller owner), a ReplicaSet resolved to its Deployment
  by ``kube_replicaset_owner`` and a Job to its CronJob by ``kube_job_owner``; the node from
  ``kube_pod_info``. A pod kube-state-metrics says has no owner (``<none>``) gets none, as a pod
  it does not know.

``SEL`` is the cAdvisor job (``LabelConfig.cadvisor_job``, when set), the namespaces (when
given), and ``CONTAINER!="", CONTAINER!="POD", POD!=""``: never the pod's own cgroup or its
pause container. The label names are ``LabelConfig``'s (upstream recommender's flags:
``add_prometheus_flags``); kube-state-metrics' series are selected by their job, namespace and
pod labels, and always name the container ``container``.

Chunks. The grid queries go in chunks of steps, each at most ``MAX_STEPS_PER_QUERY`` (10,000)
steps, at most a day, and at most ``POINTS_PER_QUERY`` points for as many series as the
previous chunk had (the first: as many as were alive at start, middle or end), so no answer
gets big; each answer is parsed straight into the instances' preallocated arrays (no Python
loop per sample) and dropped, and ``progress(fraction)`` is called after each chunk. Two
queries are in flight at a time.

Inside an instance's life (its first to its last step with a CPU or memory value) a missing
step holds the last value before it; a held gap longer than 2 steps gives one warning naming
the series, where and for how long (``kvert.sim.recorded.settle``). A drop of
``container_cpu_usage_seconds_total`` with no restart of its container at that step (or the
one before or after) gives a warning naming the container and what was assumed. Missing
kube-state-metrics series give one warning saying what is then not recorded. No cAdvisor
series at all, an unreachable URL, a server that is not Prometheus, a Prometheus error:
``HistoryImportError`` naming the URL and the query (or the selector and labels looked for).
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import re
import urllib.parse
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from kvert.sim.recorded import (
    ContainerKey,
    ContainerSeries,
    HistoryImportError,
    PodKey,
    PodRecord,
    RecordedHistory,
    _when,
    settle_all,
)
from kvert.vpa.history import (
    DEFAULT_TIMEOUT,
    MAX_STEPS_PER_QUERY,
    QUERY_RANGE_PATH,
    counter_increases,
    format_duration,
    gc_paused,
    parse_duration,
    parse_matrix,
    prometheus_get,
    promql_string,
    query_instant,
    query_range,
    regex_escape,
)

CPU = "container_cpu_usage_seconds_total"
MEMORY = "container_memory_working_set_bytes"
THROTTLED = "container_cpu_cfs_throttled_seconds_total"
OOM_EVENTS = "container_oom_events_total"
CADVISOR_METRICS = (CPU, MEMORY, THROTTLED, OOM_EVENTS)
POD_OWNER = "kube_pod_owner"
RESTARTS = "kube_pod_container_status_restarts_total"
LAST_TERMINATED = "kube_pod_container_status_last_terminated_reason"
REQUESTS = "kube_pod_container_resource_requests"
LIMITS = "kube_pod_container_resource_limits"
POD_INFO = "kube_pod_info"
REPLICASET_OWNER = "kube_replicaset_owner"
JOB_OWNER = "kube_job_owner"
KSM_POD_METRICS = (POD_OWNER, RESTARTS, LAST_TERMINATED, REQUESTS, LIMITS, POD_INFO)
KSM_METRICS = KSM_POD_METRICS + (REPLICASET_OWNER, JOB_OWNER)
KSM_CONTAINER_LABEL = "container"

POINTS_PER_QUERY = 500_000        # samples in one answer (about 17 MB of JSON)
MAX_CHUNK_SECONDS = 86_400.0      # and at most a day of steps
INFO_WINDOW = 6 * 3600.0          # the windows of the last-value queries (requests, owners, ...)
CONCURRENCY = 2                   # queries in flight
SERIES_NAMES = {"cpu": CPU, "memory": MEMORY, "throttled": THROTTLED}

_LABEL_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


# -- label conventions and flags -------------------------------------------------------------------------

@dataclass(frozen=True)
class LabelConfig:
    """Which series and labels to read (upstream recommender's flags in the comments)."""

    cadvisor_job: str = ""                        # --prometheus-cadvisor-job-name (upstream: kubernetes-cadvisor)
    ksm_job: str = ""                             # --kube-state-metrics-job-name (kvert's own)
    container_namespace_label: str = "namespace"  # --container-namespace-label (upstream: namespace)
    container_pod_name_label: str = "pod"         # --container-pod-name-label (upstream: pod_name)
    container_name_label: str = "container"       # --container-name-label (upstream: name)
    pod_namespace_label: str = "namespace"        # --pod-namespace-label (upstream: kubernetes_namespace)
    pod_name_label: str = "pod"                   # --pod-name-label (upstream: kubernetes_pod_name)

    def check(self) -> None:
        """Raise ValueError naming the flag of a label name Prometheus would not accept."""
        for f in fields(self):
            value = getattr(self, f.name)
            if not isinstance(value, str):
                raise ValueError(f"{FLAGS[f.name]}: {value!r} is not a string")
            if f.name.endswith("_label") and not _LABEL_NAME.match(value):
                raise ValueError(f"{FLAGS[f.name]}: {value!r} is not a Prometheus label name "
                                 "(letters, digits and _, not starting with a digit)")


FLAGS = {
    "cadvisor_job": "--prometheus-cadvisor-job-name",
    "ksm_job": "--kube-state-metrics-job-name",
    "container_namespace_label": "--container-namespace-label",
    "container_pod_name_label": "--container-pod-name-label",
    "container_name_label": "--container-name-label",
    "pod_namespace_label": "--pod-namespace-label",
    "pod_name_label": "--pod-name-label",
}


def add_prometheus_flags(parser: argparse._ActionsContainer) -> None:
    """The flags of ``read_prometheus``'s options, with upstream VPA recommender's names (and its
    defaults, but for the label names, which follow today's cAdvisor and kube-state-metrics)."""
    d = LabelConfig()
    parser.add_argument("--prometheus-cadvisor-job-name", metavar="JOB", default=d.cadvisor_job,
                        help="read cAdvisor's series of this scrape job only (default: any job; upstream's "
                             "default is kubernetes-cadvisor)")
    parser.add_argument("--kube-state-metrics-job-name", metavar="JOB", default=d.ksm_job,
                        help="read kube-state-metrics' series of this scrape job only (default: any job)")
    parser.add_argument("--container-namespace-label", metavar="LABEL", default=d.container_namespace_label,
                        help="cAdvisor's label of the namespace (default: namespace)")
    parser.add_argument("--container-pod-name-label", metavar="LABEL", default=d.container_pod_name_label,
                        help="cAdvisor's label of the pod name (default: pod; pod_name before Kubernetes 1.16, "
                             "upstream's default)")
    parser.add_argument("--container-name-label", metavar="LABEL", default=d.container_name_label,
                        help="cAdvisor's label of the container name (default: container; container_name "
                             "before Kubernetes 1.16; upstream's default is name)")
    parser.add_argument("--pod-namespace-label", metavar="LABEL", default=d.pod_namespace_label,
                        help="kube-state-metrics' label of the namespace (default: namespace; upstream's "
                             "default is kubernetes_namespace)")
    parser.add_argument("--pod-name-label", metavar="LABEL", default=d.pod_name_label,
                        help="kube-state-metrics' label of the pod name (default: pod; upstream's default is "
                             "kubernetes_pod_name)")
    parser.add_argument("--prometheus-bearer-token", metavar="TOKEN", default=None,
                        help="the bearer token of Prometheus' bearer token auth")
    parser.add_argument("--prometheus-bearer-token-file", metavar="FILE", default=None,
                        help="a file holding the bearer token of Prometheus' bearer token auth")
    parser.add_argument("--username", default=None,
                        help="the username of Prometheus' basic auth (or the PROMETHEUS_USERNAME environment variable)")
    parser.add_argument("--password", default=None,
                        help="the password of Prometheus' basic auth (or the PROMETHEUS_PASSWORD environment variable)")
    parser.add_argument("--prometheus-insecure", action="store_true", default=False,
                        help="skip verifying Prometheus' TLS certificate (https)")
    parser.add_argument("--prometheus-query-timeout", metavar="DURATION", default="5m",
                        help="how long to wait for each query's answer (default: 5m)")


def prometheus_options(args: argparse.Namespace) -> dict[str, Any]:
    """``read_prometheus``'s keyword arguments from ``add_prometheus_flags``' flags: ``labels``,
    ``headers`` (the Authorization header), ``ssl`` (False with --prometheus-insecure) and
    ``timeout`` (seconds). Raises ValueError naming the flag."""
    d = LabelConfig()
    labels = LabelConfig(**{name: getattr(args, flag.lstrip("-").replace("-", "_"), getattr(d, name))
                            for name, flag in FLAGS.items()})
    labels.check()
    raw_timeout = getattr(args, "prometheus_query_timeout", "5m")
    try:
        timeout = parse_duration(raw_timeout)
    except ValueError as e:
        raise ValueError(f"--prometheus-query-timeout: {e}") from None
    token = getattr(args, "prometheus_bearer_token", None)
    token_file = getattr(args, "prometheus_bearer_token_file", None)
    username = getattr(args, "username", None)
    password = getattr(args, "password", None)
    if username is None:
        username = os.environ.get("PROMETHEUS_USERNAME") or None
    if password is None:
        password = os.environ.get("PROMETHEUS_PASSWORD") or None
    if token and token_file:
        raise ValueError("--prometheus-bearer-token and --prometheus-bearer-token-file: give one of them")
    if token_file:
        try:
            with open(token_file, encoding="utf-8") as f:
                token = f.read().strip()
        except (OSError, UnicodeDecodeError) as e:
            raise ValueError(f"--prometheus-bearer-token-file: {token_file}: cannot read: "
                             f"{getattr(e, 'strerror', None) or e}") from None
        if not token:
            raise ValueError(f"--prometheus-bearer-token-file: {token_file} is empty")
    headers: dict[str, str] = {}
    if password and not username:
        raise ValueError("--password (or PROMETHEUS_PASSWORD) needs --username (or PROMETHEUS_USERNAME)")
    if token and username:
        raise ValueError("--prometheus-bearer-token(-file) and --username/--password: give one kind of auth")
    if token:
        headers["Authorization"] = f"Bearer {token}"
    elif username:
        import base64
        pair = f"{username}:{password or ''}".encode()
        headers["Authorization"] = "Basic " + base64.b64encode(pair).decode()
    ssl = False if getattr(args, "prometheus_insecure", False) else None
    return {"labels": labels, "headers": headers, "ssl": ssl, "timeout": timeout}


# -- the reader ------------------------------------------------------------------------------------------

async def read_prometheus(url: str, *, start: float, end: float, step: float, labels: LabelConfig = LabelConfig(),
                          namespaces: Sequence[str] | None = None, rate_window: float | None = None,
                          timeout: float = DEFAULT_TIMEOUT, headers: Mapping[str, str] | None = None, ssl: Any = None,
                          progress: Callable[[float], None] | None = None) -> RecordedHistory:
    """The usage history of every container instance Prometheus at ``url`` recorded from ``start``
    to ``end`` (unix seconds) every ``step`` seconds (see the module docstring). Raises
    HistoryImportError (the server, its answers, no cAdvisor series) or ValueError (the
    arguments)."""
    import aiohttp

    reader = _Reader(url, start=start, end=end, step=step, labels=labels, namespaces=namespaces,
                     rate_window=rate_window, timeout=timeout, ssl=ssl, progress=progress)
    client_timeout = aiohttp.ClientTimeout(total=float(timeout))
    async with aiohttp.ClientSession(timeout=client_timeout, headers=dict(headers or {})) as session:
        reader.session = session
        # the collector paused for the whole read: between an answer's decoding and its copy
        # into the arrays, a collection would walk its millions of fresh objects each time
        with gc_paused():
            return await reader.run()


class _Reader:
    def __init__(self, url: str, *, start: float, end: float, step: float, labels: LabelConfig,
                 namespaces: Sequence[str] | None, rate_window: float | None, timeout: float, ssl: Any,
                 progress: Callable[[float], None] | None) -> None:
        parts = urllib.parse.urlsplit(str(url))
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise HistoryImportError(f"{url}: not an http(s) URL of a Prometheus server (e.g. http://127.0.0.1:9090)")
        for name, value in (("start", start), ("end", end), ("step", step)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise ValueError(f"{name}: {value!r} is not a number of seconds")
        if step <= 0:
            raise ValueError(f"step: {step!r} is not a positive number of seconds")
        if end <= start:
            raise ValueError(f"the window ends ({_when(end)}) before it starts ({_when(start)})")
        if rate_window is not None and not (math.isfinite(rate_window) and rate_window > 0):
            raise ValueError(f"rate window: {rate_window!r} is not a positive number of seconds")
        labels.check()
        if namespaces is not None:
            namespaces = [str(n) for n in namespaces]
            if not namespaces or any(not n for n in namespaces):
                raise ValueError("namespaces: give at least one, none empty (or None for all)")
        self.url = str(url).rstrip("/")
        self.start, self.end, self.step = float(start), float(end), float(step)
        self.steps = max(1, math.ceil((self.end - self.start) / self.step - 1e-9))
        self.grid0 = self.start + self.step                 # where step 0 is evaluated: its end
        self.labels = labels
        self.namespaces = namespaces
        self.rate_window = float(rate_window) if rate_window is not None else self.step
        self.window = format_duration(self.rate_window)
        self.step_range = format_duration(self.step)
        self.timeout = float(timeout)
        self.ssl = ssl
        self.progress = progress
        self.session: Any = None
        self.warnings: list[str] = []
        self.api_warnings: list[str] = []
        lb = labels
        self.ckey = (lb.container_namespace_label, lb.container_pod_name_label, lb.container_name_label)
        self.kpod = (lb.pod_namespace_label, lb.pod_name_label)
        self.kcont = (*self.kpod, KSM_CONTAINER_LABEL)
        self.sel_c = ",".join(filter(None, [
            f"job={promql_string(lb.cadvisor_job)}" if lb.cadvisor_job else "",
            self._ns_matcher(lb.container_namespace_label),
            f'{lb.container_name_label}!=""', f'{lb.container_name_label}!="POD"',
            f'{lb.container_pod_name_label}!=""']))
        self.sel_k0 = ",".join(filter(None, [
            f"job={promql_string(lb.ksm_job)}" if lb.ksm_job else "", self._ns_matcher(lb.pod_namespace_label)]))
        self.sel_k = ",".join(filter(None, [self.sel_k0, f'{lb.pod_name_label}!=""']))

    def _ns_matcher(self, label: str) -> str:
        if not self.namespaces:
            return ""
        if len(self.namespaces) == 1:
            return f"{label}={promql_string(self.namespaces[0])}"
        return f"{label}=~{promql_string('|'.join(regex_escape(n) for n in self.namespaces))}"

    # HTTP

    async def _get(self, path: str, params: Any, what: str) -> Any:
        return await prometheus_get(self.session, self.url + path, params, what=what, timeout=self.timeout,
                                    ssl=self.ssl, error=HistoryImportError, warnings=self.api_warnings)

    async def _names(self, *matches: str) -> set[str]:
        """The metric names of the series matching any of ``matches`` in the window."""
        params = [("match[]", m) for m in matches] + [("start", _num(self.start)), ("end", _num(self.end))]
        data = await self._get("/api/v1/label/__name__/values", params, "match[] " + " ".join(matches))
        if not isinstance(data, list):
            raise HistoryImportError(f"{self.url}/api/v1/label/__name__/values (match[] {' '.join(matches)}): "
                                     f"expected a list of names, got {type(data).__name__}")
        return {str(n) for n in data}

    async def _range(self, query: str, start: float, end: float, step: float) -> list:
        return await query_range(self.session, self.url, query, start, end, step, timeout=self.timeout,
                                 ssl=self.ssl, error=HistoryImportError, warnings=self.api_warnings)

    async def _instant(self, query: str, time: float) -> list:
        return await query_instant(self.session, self.url, query, time, timeout=self.timeout, ssl=self.ssl,
                                   error=HistoryImportError, warnings=self.api_warnings)

    def _parse(self, result: list, what: str, key_labels: Sequence[str] | None):
        return parse_matrix(result, self.url + QUERY_RANGE_PATH, what, key_labels, error=HistoryImportError)

    # the queries

    def _changes(self, selector: str, by: Sequence[str] | None) -> str:
        """Where a counter changed, or appeared, between two steps (sparse)."""
        if by is None:
            now, before = selector, f"{selector} offset {self.step_range}"
        else:
            group = ", ".join(by)
            now, before = f"max by ({group}) ({selector})", f"max by ({group}) ({selector} offset {self.step_range})"
        return f"{now} != {before} or ({now} unless {before})"

    def grid_queries(self, names_c: set[str], names_k: set[str]) -> dict[str, tuple[str, Sequence[str] | None]]:
        """name -> (query, key labels) of the queries evaluated at every step."""
        by_c = ", ".join(self.ckey)
        kfull = (*self.kcont, "uid")
        by_k = ", ".join(kfull)
        sel, ksel = self.sel_c, self.sel_k
        out: dict[str, tuple[str, Sequence[str] | None]] = {}
        if CPU in names_c:
            out["cpu"] = (f"sum by ({by_c}) (rate({CPU}{{{sel}}}[{self.window}]))", self.ckey)
            out["cpu_resets"] = (f"max by ({by_c}) ({CPU}{{{sel}}} < {CPU}{{{sel}}} offset {self.step_range})",
                                 self.ckey)
        if MEMORY in names_c:
            out["memory"] = (f"max by ({by_c}) (max_over_time({MEMORY}{{{sel}}}[{self.step_range}] offset 1ms))",
                             self.ckey)
        if THROTTLED in names_c:
            out["throttled"] = (f"sum by ({by_c}) (rate({THROTTLED}{{{sel}}}[{self.window}]))", self.ckey)
        if OOM_EVENTS in names_c:
            out["oom_events"] = (self._changes(f"{OOM_EVENTS}{{{sel}}}", None), None)
        if RESTARTS in names_k:
            restarts = f"{RESTARTS}{{{ksel}}}"
            out["restarts"] = (self._changes(restarts, kfull), kfull)
            if LAST_TERMINATED in names_k:
                oom = f'{LAST_TERMINATED}{{{ksel},reason="OOMKilled"}}'
                out["oom_restarts"] = (
                    f"({self._changes(restarts, kfull)}) and on ({by_k}) "
                    f"(max by ({by_k}) (timestamp({oom})) >= on ({by_k}) max by ({by_k}) (timestamp({restarts})))",
                    kfull)
        if LIMITS in names_k:
            out["memory_limit"] = (
                f'max by ({", ".join(self.kcont)}) ({LIMITS}{{{ksel},resource="memory"}} offset 1ms)', self.kcont)
        return out

    def info_queries(self, names_k: set[str]) -> dict[str, tuple[str, Sequence[str]]]:
        """name -> (query, key labels) of the last-value queries."""
        w = format_duration(self.info_window)
        ns, pod = self.kpod
        out: dict[str, tuple[str, Sequence[str]]] = {}
        for name, metric in (("requests", REQUESTS), ("limits", LIMITS)):
            if metric in names_k:
                keys: tuple[str, ...] = (*self.kcont, "resource", "unit")
                out[name] = (f"max by ({', '.join(keys)}) (last_over_time({metric}{{{self.sel_k}}}[{w}]))", keys)
        if POD_OWNER in names_k:
            keys = (ns, pod, "owner_kind", "owner_name", "owner_is_controller")
            out["owners"] = (f"max by ({', '.join(keys)}) (last_over_time({POD_OWNER}{{{self.sel_k}}}[{w}]))", keys)
        if POD_INFO in names_k:
            keys = (ns, pod, "node")
            out["nodes"] = (f"max by ({', '.join(keys)}) (last_over_time({POD_INFO}{{{self.sel_k}}}[{w}]))", keys)
        for name, metric, label in (("replicasets", REPLICASET_OWNER, "replicaset"), ("jobs", JOB_OWNER, "job_name")):
            if metric in names_k:
                keys = (ns, label, "owner_kind", "owner_name", "owner_is_controller")
                sel = self.sel_k0
                out[name] = (f"max by ({', '.join(keys)}) (last_over_time({metric}{{{sel}}}[{w}]))", keys)
        return out

    @property
    def info_window(self) -> float:
        return min(INFO_WINDOW, self.end - self.start)

    # the run

    async def run(self) -> RecordedHistory:
        names_c = await self._names(f'{{__name__=~"{"|".join(CADVISOR_METRICS)}",{self.sel_c}}}')
        if CPU not in names_c and MEMORY not in names_c:
            await self._no_cadvisor()
        pod_names = "|".join(KSM_POD_METRICS)
        names_k = await self._names(
            f'{{__name__=~"{pod_names}",{self.sel_k}}}',
            f'{{__name__=~"{REPLICASET_OWNER}|{JOB_OWNER}"{"," + self.sel_k0 if self.sel_k0 else ""}}}')
        for metric, what in ((CPU, "CPU"), (MEMORY, "memory")):
            if metric not in names_c:
                self.warnings.append(f"{self.url}: no {metric}{{{self.sel_c}}} series from {_when(self.start)} to "
                                     f"{_when(self.end)}: {what} is not recorded")
        grid = self.grid_queries(names_c, names_k)
        dense: dict[str, dict[tuple, np.ndarray]] = {n: {} for n in ("cpu", "memory", "throttled", "memory_limit")}
        sparse: dict[str, dict[tuple, list[tuple[np.ndarray, np.ndarray]]]] = {
            n: {} for n in ("cpu_resets", "oom_events", "restarts", "oom_restarts")}
        estimate = await self._estimate(names_c)
        cap = max(1, min(MAX_STEPS_PER_QUERY, int(MAX_CHUNK_SECONDS // self.step)))
        semaphore = asyncio.Semaphore(CONCURRENCY)

        async def one(name: str, query: str, keys: Sequence[str] | None, k0: int, k1: int) -> int:
            async with semaphore:
                result = await self._range(query, self.grid0 + k0 * self.step, self.grid0 + (k1 - 1) * self.step,
                                           self.step)
            if name in dense:
                self._dense(dense[name], result, name, keys)
            else:
                self._sparse(sparse[name], result, name, keys)
            return len(result)

        k0 = 0
        while k0 < self.steps:
            k1 = min(self.steps, k0 + max(1, min(cap, POINTS_PER_QUERY // max(1, estimate))))
            tasks = [asyncio.ensure_future(one(name, q, keys, k0, k1)) for name, (q, keys) in grid.items()]
            try:
                counts = await asyncio.gather(*tasks)
            except BaseException:
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
                raise
            estimate = max([1, *counts])
            k0 = k1
            if self.progress is not None:
                self.progress(0.95 * k0 / self.steps)
        baselines = await self._baselines(grid)
        info = {}
        for name, (query, keys) in self.info_queries(names_k).items():
            info[name] = self._last_values(await self._info(query), name, keys)
        history = self._assemble(dense, sparse, baselines, info, names_c, names_k)
        if self.progress is not None:
            self.progress(1.0)
        return history

    async def _estimate(self, names_c: set[str]) -> int:
        """How many instances a chunk will have: the most alive at start, middle or end."""
        metric = MEMORY if MEMORY in names_c else CPU
        query = f"count(count by ({', '.join(self.ckey)}) ({metric}{{{self.sel_c}}}))"
        span = self.end - self.start
        result = await self._range(query, self.start, self.end, span / 2)
        _, _, _, values = self._parse(result, "count", ())
        finite = values[np.isfinite(values)]
        return int(finite.max() * 1.2) + 1 if finite.size else 1

    async def _baselines(self, grid: Mapping[str, tuple[str, Any]]) -> dict[str, dict[tuple, float]]:
        out: dict[str, dict[tuple, float]] = {}
        if "oom_events" in grid:
            result = await self._instant(f"{OOM_EVENTS}{{{self.sel_c}}}", self.start)
            out["oom_events"] = self._vector(result, "oom_events", None)
        if "restarts" in grid:
            kfull = (*self.kcont, "uid")
            result = await self._instant(f"max by ({', '.join(kfull)}) ({RESTARTS}{{{self.sel_k}}})", self.start)
            out["restarts"] = self._vector(result, "restarts", kfull)
        return out

    async def _info(self, query: str) -> list:
        w = self.info_window
        n = max(1, math.ceil((self.end - self.start) / w - 1e-9))
        return await self._range(query, self.end - (n - 1) * w, self.end, w)

    # parsing

    def _dense(self, store: dict[tuple, np.ndarray], result: list, what: str, keys: Sequence[str] | None) -> None:
        names, lengths, t, v = self._parse(result, what, keys)
        k = np.rint((t - self.grid0) / self.step).astype(np.int64)
        ok = (k >= 0) & (k < self.steps) & np.isfinite(v) & (v >= 0)
        ends = np.cumsum(lengths).tolist()
        for key, end, n in zip(names, ends, lengths.tolist()):
            if n == 0:
                continue
            m = ok[end - n:end]
            values = store.get(key)
            if values is None:
                values = store[key] = np.full(self.steps, np.nan)
            values[k[end - n:end][m]] = v[end - n:end][m]

    def _sparse(self, store: dict[tuple, list], result: list, what: str, keys: Sequence[str] | None) -> None:
        names, lengths, t, v = self._parse(result, what, keys)
        ends = np.cumsum(lengths).tolist()
        for key, end, n in zip(names, ends, lengths.tolist()):
            if n:
                store.setdefault(key, []).append((t[end - n:end], v[end - n:end]))

    def _vector(self, result: list, what: str, keys: Sequence[str] | None) -> dict[tuple, float]:
        out: dict[tuple, float] = {}
        url = self.url + "/api/v1/query"
        for item in result:
            if not isinstance(item, Mapping) or not isinstance(item.get("metric"), Mapping) \
                    or not isinstance(item.get("value"), list) or len(item["value"]) != 2:
                raise HistoryImportError(f"{url}: {what} series is not {{metric, value}}: {str(item)[:200]}")
            labels = item["metric"]
            key: tuple
            if keys is None:
                key = tuple(sorted((str(a), str(b)) for a, b in labels.items() if a != "__name__"))
            else:
                try:
                    key = tuple(str(labels[name]) for name in keys)
                except KeyError as e:
                    raise HistoryImportError(
                        f"{url}: {what} series without a {e.args[0]} label: {dict(labels)}") from None
            try:
                out[key] = float(item["value"][1])
            except (TypeError, ValueError):
                raise HistoryImportError(f"{url}: {what} series {dict(labels)} has a value that is not "
                                         "[unix seconds, \"number\"]") from None
        return out

    def _last_values(self, result: list, what: str, keys: Sequence[str]) -> dict[tuple, tuple[float, float]]:
        """key -> (time, value) of each series' last finite sample."""
        names, lengths, t, v = self._parse(result, what, keys)
        out: dict[tuple, tuple[float, float]] = {}
        ends = np.cumsum(lengths).tolist()
        for key, end, n in zip(names, ends, lengths.tolist()):
            tt, vv = t[end - n:end], v[end - n:end]
            ok = np.flatnonzero(np.isfinite(vv))
            if ok.size:
                i = ok[np.argmax(tt[ok])]
                out[key] = (float(tt[i]), float(vv[i]))
        return out

    def _steps_of(self, t: np.ndarray) -> np.ndarray:
        return np.rint((t - self.grid0) / self.step).astype(np.int64)

    def _increases(self, changes: dict[tuple, list], baseline: Mapping[tuple, float]) -> dict[tuple, np.ndarray]:
        """series key -> the steps of its increases (a step repeats for an increase of several)."""
        out: dict[tuple, np.ndarray] = {}
        for key in set(changes) | set(baseline):
            parts = changes.get(key, [])
            t = np.concatenate([p[0] for p in parts]) if parts else np.zeros(0)
            v = np.concatenate([p[1] for p in parts]) if parts else np.zeros(0)
            order = np.argsort(t, kind="stable")
            t, v = t[order], v[order]
            if key in baseline:
                t = np.concatenate([[self.start], t])
                v = np.concatenate([[baseline[key]], v])
            times, counts = counter_increases(t, v, self.start, self.step)
            k = self._steps_of(times)
            ok = (k >= 0) & (k < self.steps)
            out[key] = np.repeat(k[ok], counts[ok].astype(np.int64))
        return out

    # assembling

    def _assemble(self, dense, sparse, baselines, info, names_c: set[str], names_k: set[str]) -> RecordedHistory:
        cpu, memory, throttled, memory_limit = (dense[n] for n in ("cpu", "memory", "throttled", "memory_limit"))
        keys: list[ContainerKey] = sorted(set(cpu) | set(memory))
        # counters
        restarts: dict[ContainerKey, list[np.ndarray]] = {}
        oom_ksm: dict[ContainerKey, list[np.ndarray]] = {}
        if "restarts" in baselines:
            inc = self._increases(sparse["restarts"], baselines["restarts"])
            flagged = {key: set(np.rint((np.concatenate([p[0] for p in parts]) - self.grid0) / self.step)
                                .astype(np.int64).tolist())
                       for key, parts in sparse["oom_restarts"].items()}
            for key, steps in inc.items():
                restarts.setdefault(key[:3], []).append(steps)
                if key in flagged and steps.size:
                    oom_ksm.setdefault(key[:3], []).append(steps[np.isin(steps, list(flagged[key]))])
        oom_cadvisor: dict[ContainerKey, list[np.ndarray]] = {}
        if "oom_events" in baselines:
            inc = self._increases(sparse["oom_events"], baselines["oom_events"])
            for key, steps in inc.items():
                labels = dict(key)
                ckey = tuple(labels.get(name, "") for name in self.ckey)
                oom_cadvisor.setdefault(ckey, []).append(steps)
        # requests and limits
        amounts: dict[str, dict[ContainerKey, dict[str, int]]] = {"requests": {}, "limits": {}}
        for name in amounts:
            latest: dict[tuple, tuple[float, float]] = {}
            for (ns, pod, container, resource, _unit), (t, v) in (info.get(name) or {}).items():
                if resource not in ("cpu", "memory"):
                    continue
                k = (ns, pod, container, resource)
                if k not in latest or t >= latest[k][0]:
                    latest[k] = (t, v * 1000 if resource == "cpu" else v)
            for (ns, pod, container, resource), (_, v) in latest.items():
                amounts[name].setdefault((ns, pod, container), {})[resource] = int(round(v))
        # the instances
        containers: list[ContainerSeries] = []
        cpu_values = memory_values = 0
        for key in keys:
            c = cpu.get(key)
            m = memory.get(key)
            c = np.full(self.steps, np.nan) if c is None else c
            m = np.full(self.steps, np.nan) if m is None else m
            if key in memory:
                seen_m = ~np.isnan(m)
                if self.rate_window > self.step and seen_m.any():
                    # a window longer than the step still holds the last samples for a while after
                    # the container is gone: no usage after its last working set
                    after = int(np.flatnonzero(seen_m)[-1]) + 1
                    c[after:] = np.nan
                    if key in throttled:
                        throttled[key][after:] = np.nan
                cpu_values += int((~np.isnan(c) & seen_m).sum())
                memory_values += int(seen_m.sum())
            series = ContainerSeries(*key, cpu=c, memory=m, throttled=throttled.get(key),
                                     memory_limit=memory_limit.get(key),
                                     requests=amounts["requests"].get(key, {}), limits=amounts["limits"].get(key, {}))
            series.restarts = np.sort(np.concatenate(restarts[key])) if key in restarts else np.zeros(0, np.int64)
            if key in oom_cadvisor:
                series.ooms = np.sort(np.concatenate(oom_cadvisor[key]))
            elif key in oom_ksm:
                series.ooms = np.sort(np.concatenate(oom_ksm[key]))
            containers.append(series)
        self.warnings.extend(settle_all(containers, SERIES_NAMES, self.start, self.step))
        self._reset_warnings(containers, sparse["cpu_resets"], RESTARTS in names_k)
        if memory_values and CPU in names_c and cpu_values < 0.5 * memory_values:
            self.warnings.append(
                f"{CPU}: rate(...[{self.window}]) has values at only {100 * cpu_values / memory_values:.0f}% of the "
                f"steps that have a working set: the rate window {self.window} likely holds fewer than two scrapes; "
                "use a rate window of at least twice the scrape interval")
        pods = self._pods(keys, info)
        self._ksm_warnings(names_c, names_k, info, pods)
        self.warnings.extend(self.api_warnings)
        return RecordedHistory(start=self.start, step=self.step, steps=self.steps, containers=containers,
                               pods=pods, warnings=self.warnings, source=self.url)

    def _reset_warnings(self, containers: list[ContainerSeries], resets: dict[tuple, list],
                        have_restarts: bool) -> None:
        by_key = {c.key: c for c in containers}
        for key in sorted(resets):
            series = by_key.get(key)
            if series is None:
                continue
            steps = np.unique(self._steps_of(np.concatenate([p[0] for p in resets[key]])))
            steps = steps[(steps >= 0) & (steps < self.steps)]
            known = np.union1d(series.restarts, series.ooms)        # an OOM kill restarts the container
            if known.size:
                near = np.isin(steps, known) | np.isin(steps - 1, known) | np.isin(steps + 1, known)
                steps = steps[~near]
            if not steps.size:
                continue
            why = "without a restart of the container" if have_restarts else \
                "(no restarts are recorded: kube-state-metrics has no kube_pod_container_status_restarts_total)"
            more = f" and {steps.size - 1} more time(s)" if steps.size > 1 else ""
            self.warnings.append(
                f"{CPU} of {'/'.join(key)} went down at step {int(steps[0])} "
                f"({_when(self.start + steps[0] * self.step)}){more} {why}: assumed the counter was reset to 0 and "
                "counted its new value as the usage since "
                "(rate()'s rule); the CPU of such a step may be too low")

    def _pods(self, keys: list[ContainerKey], info: Mapping[str, dict]) -> dict[PodKey, PodRecord]:
        def pick(series: Mapping[tuple, tuple[float, float]]) -> dict[tuple[str, str], tuple[str, str]]:
            """(namespace, name) -> (owner kind, owner name): the controller, else the last seen."""
            best: dict[tuple[str, str], tuple[tuple[bool, float], tuple[str, str]]] = {}
            for (ns, name, kind, owner, controller), (t, _) in series.items():
                if kind in ("", "<none>") or owner in ("", "<none>"):
                    continue
                rank = (controller == "true", t)
                if (ns, name) not in best or rank > best[(ns, name)][0]:
                    best[(ns, name)] = (rank, (kind, owner))
            return {k: v for k, (_, v) in best.items()}

        owners = pick(info.get("owners") or {})
        replicasets = pick(info.get("replicasets") or {})
        jobs = pick(info.get("jobs") or {})
        nodes: dict[tuple[str, str], tuple[float, str]] = {}
        for (ns, pod, node), (t, _) in (info.get("nodes") or {}).items():
            if node and ((ns, pod) not in nodes or t >= nodes[(ns, pod)][0]):
                nodes[(ns, pod)] = (t, node)
        pods: dict[PodKey, PodRecord] = {}
        for ns, pod, _ in keys:
            if (ns, pod) in pods:
                continue
            kind: str | None = None
            name: str | None = None
            owner = owners.get((ns, pod))
            if owner is not None:
                kind, name = owner
                if kind == "ReplicaSet" and (ns, name) in replicasets:
                    kind, name = replicasets[(ns, name)]
                elif kind == "Job" and (ns, name) in jobs:
                    kind, name = jobs[(ns, name)]
            pods[(ns, pod)] = PodRecord(ns, pod, owner_kind=kind, owner_name=name,
                                        node=nodes[(ns, pod)][1] if (ns, pod) in nodes else None)
        return pods

    def _ksm_warnings(self, names_c: set[str], names_k: set[str], info: Mapping[str, dict],
                      pods: Mapping[PodKey, PodRecord]) -> None:
        where = f"matching {{{self.sel_k}}}"
        when = f"from {_when(self.start)} to {_when(self.end)}"
        flags = "--kube-state-metrics-job-name, --pod-namespace-label and --pod-name-label"
        oom_ok = OOM_EVENTS in names_c or (RESTARTS in names_k and LAST_TERMINATED in names_k)
        if not names_k & set(KSM_POD_METRICS):
            oom = "restarts are not recorded, OOM kills are read from container_oom_events_total only" \
                if OOM_EVENTS in names_c else "restarts and OOM kills are not recorded"
            self.warnings.append(
                f"{self.url}: no {POD_OWNER} series nor any other kube-state-metrics series {where} {when}: owners "
                f"are inferred from pod names; {oom}; requests and limits are not recorded (if kube-state-metrics "
                f"is scraped under other names, set {flags})")
            return
        missing = []
        if POD_OWNER not in names_k:
            missing.append(f"no {POD_OWNER} series: owners are inferred from pod names")
        if RESTARTS not in names_k:
            missing.append(f"no {RESTARTS} series: restarts are not recorded")
        if not oom_ok:
            missing.append(f"no {OOM_EVENTS} nor {LAST_TERMINATED} series: OOM kills are not recorded")
        for metric, what in ((REQUESTS, "requests"), (LIMITS, "limits")):
            if metric not in names_k:
                missing.append(f"no {metric} series: {what} are not recorded")
        raw = {kind for (_, _, kind, _, _) in (info.get("owners") or {})}
        if "ReplicaSet" in raw and REPLICASET_OWNER not in names_k:
            missing.append(f"no {REPLICASET_OWNER} series: pods stay owned by their ReplicaSets, not resolved to "
                           "Deployments")
        if "Job" in raw and JOB_OWNER not in names_k:
            missing.append(f"no {JOB_OWNER} series: pods stay owned by their Jobs, not resolved to CronJobs")
        for text in missing:
            self.warnings.append(f"{self.url}: {text} (series {where} {when})")

    async def _no_cadvisor(self) -> None:
        """Raise the error of a window without cAdvisor series, saying what was looked for and
        what Prometheus has instead."""
        lb = self.labels
        looked = (f"the labels {lb.container_namespace_label} (--container-namespace-label), "
                  f"{lb.container_pod_name_label} (--container-pod-name-label) and {lb.container_name_label} "
                  f"(--container-name-label)")
        if lb.cadvisor_job:
            looked += f", job {lb.cadvisor_job} (--prometheus-cadvisor-job-name)"
        if self.namespaces:
            looked += f", namespace {' or '.join(self.namespaces)}"
        head = (f"{self.url}: no cAdvisor series ({CPU} or {MEMORY}{{{self.sel_c}}}) from {_when(self.start)} to "
                f"{_when(self.end)}; looked for {looked}")
        anything = await self._names(f'{{__name__=~"{CPU}|{MEMORY}"}}')
        if not anything:
            raise HistoryImportError(f"{head}. Prometheus has no {CPU} or {MEMORY} series at all in that window: "
                                     "is cAdvisor (the kubelets' /metrics/cadvisor) scraped, and is the window right?")
        metric = MEMORY if MEMORY in anything else CPU
        span = [("match[]", metric), ("start", _num(self.start)), ("end", _num(self.end))]
        names = await self._get("/api/v1/labels", span, f"match[] {metric}")
        jobs = await self._get("/api/v1/label/job/values", span, f"match[] {metric}")
        names = sorted(str(n) for n in names or [] if n != "__name__")
        jobs = sorted(str(j) for j in jobs or [])
        raise HistoryImportError(
            f"{head}. Prometheus has {metric} series with the labels {', '.join(names) or 'none'} (jobs: "
            f"{', '.join(jobs) or 'none'}): a wrong label convention is the usual cause; set "
            "--container-namespace-label, --container-pod-name-label and --container-name-label to the labels of "
            "your cAdvisor series (pod_name and container_name before Kubernetes 1.16) and "
            "--prometheus-cadvisor-job-name to their job")


def _num(value: float) -> str:
    return f"{value:.3f}".rstrip("0").rstrip(".")


__all__ = ["CPU", "FLAGS", "HistoryImportError", "KSM_METRICS", "LabelConfig", "MEMORY", "add_prometheus_flags",
           "prometheus_options", "read_prometheus"]
