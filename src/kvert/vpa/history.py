"""Usage history for the recommender's start (seed 002's "History Storage").

A recommender that starts without checkpoints for a VPA can bootstrap that VPA's history
from a provider instead of starting from nothing (upstream: ``--storage=prometheus``;
checkpoints win, as upstream's ``checkpoint`` storage is the default). A provider answers
``await provider.fetch(now)`` with the samples of every container it knows::

    {(namespace, pod, container): Samples, ...}

one ``kvert.vpa.samples.Samples`` per container, in time order (CPU in cores and memory in
bytes, NaN where a row has only the other; ``oom`` rows: the container was OOM-killed then,
``memory`` holds the memory to bump from). Two providers:

``PrometheusHistory(url, history_length=8d, resolution=1h, job="", namespace=None, pod_regex=None)``
    Prometheus' HTTP API, ``GET URL/api/v1/query_range`` from ``now - history_length`` to
    ``now`` every ``resolution`` (upstream's ``--history-length=8d`` and
    ``--history-resolution=1h``; ranges over 10,000 steps are split, Prometheus refuses more
    than 11,000 points per series). The cAdvisor metrics kvert's node agents export (the
    labels ``namespace``, ``pod``, ``container``; ``SEL`` is ``container!="",container!="POD",
    pod!=""`` plus ``job``/``namespace``/``pod=~`` when given):

    * CPU: ``sum by (namespace, pod, container) (rate(container_cpu_usage_seconds_total{SEL}[R])
      and ignoring(cpu) (container_memory_working_set_bytes{SEL} > 0))`` with ``R`` the
      resolution (upstream's rate window) -- the ``and`` keeps running containers only: kvert
      exports exited containers too (cAdvisor drops them), whose flat counters would read as
      zero usage;
    * memory: ``max by (namespace, pod, container) (container_memory_working_set_bytes{SEL} > 0)``;
    * OOM kills: the increases of ``container_oom_events_total{SEL}``, per series (one per
      container instance): each rise between two steps is that many OOMs at the later step
      (a reset counts its new value); a series that first appears after the range's first
      step with a value above 0 counts that value. The OOM's ``memory`` is the container's
      last working set at or before it (0 when none was seen: the aggregate then bumps from
      the window's peak); the recommender replaces it with the container's memory request
      when the pod is live and has one, as it does for OOMs it sees in pod statuses.

    ``job`` defaults to none (upstream's ``--prometheus-cadvisor-job-name`` defaults to
    ``kubernetes-cadvisor``; kvert's scrape jobs have whatever name the user gives them and
    only the cAdvisor paths export these metrics). ``names`` (``SeriesNames``) renames the
    metrics and labels above, and names the series of pod labels (upstream's
    ``--metric-for-pod-labels``: an instant query, vector or matrix; each pod's labels from its
    newest sample); ``observer`` with ``clock`` counts the requests (upstream's
    ``prometheus_client_api_requests_*`` metrics). Errors (unreachable, HTTP errors,
    ``status: error``, a result that is not a matrix, JSON that is not Prometheus') raise
    ``HistoryError`` naming the URL and the query.

``FileHistory(path, history_length=None)``
    The samples CSV format of ``kvert.vpa.samples`` (``timestamp,pod,container,cpu,memory,
    event`` and an optional ``namespace`` column, ``default`` when absent), samples kept in file
    order per container. With ``history_length`` samples older than ``now - history_length``
    are left out. Errors raise ``HistoryError`` naming the file and the line.

Which VPA a pod's history goes to (``match_history``), within the pod's namespace:

1. a *live* pod (it exists and is neither finished nor being deleted) goes to the VPA the
   recommender would give it: the oldest VPA (creation time, then name) whose target's
   selector matches its labels (``targets.select_pods``); a live pod no VPA selects is
   dropped (its labels say it is not any VPA's);
2. a *gone* pod whose last labels are known (``PrometheusHistory`` with a pod-labels metric,
   upstream's ``--metric-for-pod-labels``) goes to the oldest VPA whose selector matches them;
3. another *gone* pod goes to the VPA whose ``targetRef`` would have named it: a Deployment ``D``
   owns ``D-<hash>-<suffix>``, a StatefulSet ``S`` owns ``S-<ordinal>``, a CronJob ``C`` owns
   ``C-<scheduled minute>-<suffix>``, a ReplicaSet, DaemonSet, Job or ReplicationController
   (or any other kind) ``R`` owns ``R-<suffix>`` (``<hash>`` and ``<suffix>`` are lower-case
   letters and digits, the suffix 5 of them, an ordinal digits). When several targets fit,
   the longest target name wins, then the oldest VPA. Targets that cannot be read still
   count (the name is in the VPA);
4. anything else is dropped, counted and logged.

Durations (``history_length``, ``resolution``) are Prometheus durations (``8d``, ``1h30m``,
``90s``, ``1w``) or seconds (``parse_duration``).

The Prometheus HTTP API calls and their errors (``prometheus_get``, ``query_range``,
``query_instant``), the parsing of a matrix answer into arrays (``parse_matrix``) and the
counting of a counter's increases (``counter_increases``) are module functions, shared with
``kvert.sim.prometheus_history`` (``kvert scenario import --prometheus``).
"""

from __future__ import annotations

import contextlib
import gc
import logging
import re
import urllib.parse
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from kvert.api.durations import format_prometheus_duration, parse_prometheus_duration
from kvert.clock import Clock
from kvert.vpa.instruments import RecommenderMetrics
from kvert.vpa.samples import SampleError, Samples, parse_samples
from kvert.vpa.targets import select_pods

log = logging.getLogger(__name__)

HistoryKey = tuple[str, str, str]       # (namespace, pod, container)
History = dict[HistoryKey, Samples]

DEFAULT_HISTORY_LENGTH = 8 * 86400.0     # upstream --history-length=8d
DEFAULT_RESOLUTION = 3600.0              # upstream --history-resolution=1h
DEFAULT_TIMEOUT = 300.0                  # upstream --prometheus-query-timeout=5m
MAX_STEPS_PER_QUERY = 10_000             # Prometheus refuses over 11,000 points per series
QUERY_RANGE_PATH = "/api/v1/query_range"
QUERY_PATH = "/api/v1/query"


class HistoryError(ValueError):
    """History that cannot be read: the message names the URL or the file (and the line)."""


class HistoryProvider(Protocol):
    source: str

    async def fetch(self, now: float) -> History: ...


# -- durations -------------------------------------------------------------------------------------

# The history flags' durations are Prometheus' (``8d``, ``1h30m``); sim and cli import these two
# names from here.
parse_duration = parse_prometheus_duration
format_duration = format_prometheus_duration


# -- building Samples ------------------------------------------------------------------------------

def _objects(value: str, n: int) -> np.ndarray:
    out = np.empty(n, dtype=object)
    out[:] = value
    return out


def container_samples(namespace: str, pod: str, container: str, *, cpu: tuple[np.ndarray, np.ndarray] | None = None,
                      memory: tuple[np.ndarray, np.ndarray] | None = None,
                      oom: tuple[np.ndarray, np.ndarray] | None = None) -> Samples:
    """One container's ``Samples`` in time order from (times, values) pairs: CPU and memory at
    the same time share a row; OOM rows (values: the memory to bump from) follow the usage
    row of their time."""
    empty = (np.zeros(0), np.zeros(0))
    ct, cv = cpu if cpu is not None else empty
    mt, mv = memory if memory is not None else empty
    ot, ov = oom if oom is not None else empty
    ct, cv, mt, mv, ot, ov = (np.asarray(a, dtype=np.float64) for a in (ct, cv, mt, mv, ot, ov))
    times = np.union1d(ct, mt)
    c = np.full(times.size, np.nan)
    m = np.full(times.size, np.nan)
    c[np.searchsorted(times, ct)] = cv
    m[np.searchsorted(times, mt)] = mv
    all_t = np.concatenate([times, ot])
    order = np.argsort(all_t, kind="stable")          # usage rows first at equal times
    n = all_t.size
    return Samples(all_t[order], _objects(pod, n), _objects(container, n),
                   np.concatenate([c, np.full(ot.size, np.nan)])[order],
                   np.concatenate([m, ov])[order],
                   np.concatenate([np.zeros(times.size, dtype=bool), np.ones(ot.size, dtype=bool)])[order],
                   _objects(namespace, n))


def split_samples(samples: Samples) -> History:
    """Group a ``Samples`` table by (namespace, pod, container), keeping each group's order."""
    n = len(samples)
    if n == 0:
        return {}
    ns = samples.namespace_column()
    keys = ns + "\x1f" + samples.pods + "\x1f" + samples.containers
    unique, inverse = np.unique(keys, return_inverse=True)
    order = np.argsort(inverse, kind="stable")
    bounds = np.searchsorted(inverse[order], np.arange(unique.size + 1))
    out: History = {}
    for k, key in enumerate(unique.tolist()):
        rows = order[bounds[k]:bounds[k + 1]]
        part = samples.select(rows)
        if part.namespaces is None:
            part.namespaces = ns[rows]
        a, b, c = key.split("\x1f")
        out[(a, b, c)] = part
    return out


def concat_samples(parts: Sequence[Samples]) -> Samples:
    """One table from several, sorted by time (stable: each part's own order kept)."""
    if not parts:
        return Samples.empty()
    t = np.concatenate([p.timestamps for p in parts])
    order = np.argsort(t, kind="stable")

    def cat(attr: str) -> np.ndarray:
        return np.concatenate([getattr(p, attr) for p in parts])[order]
    return Samples(t[order], cat("pods"), cat("containers"), cat("cpu"), cat("memory"), cat("oom"),
                   np.concatenate([p.namespace_column() for p in parts])[order])


# -- the trace file --------------------------------------------------------------------------------

class FileHistory:
    """Usage history from a samples CSV file (see the module docstring)."""

    def __init__(self, path: str | Path, history_length: float | str | None = None) -> None:
        self.path = Path(path)
        self.history_length = None if history_length is None else parse_duration(history_length)
        self.source = str(self.path)

    def read(self) -> Samples:
        try:
            with self.path.open(newline="", encoding="utf-8") as f:
                return parse_samples(f, str(self.path))
        except SampleError as e:
            raise HistoryError(str(e)) from e
        except UnicodeDecodeError:
            raise HistoryError(f"{self.path}: not a UTF-8 text file") from None
        except OSError as e:
            raise HistoryError(f"{self.path}: cannot read: {e.strerror or e}") from None

    async def fetch(self, now: float) -> History:
        samples = self.read()
        if self.history_length is not None and len(samples):
            samples = samples.select(samples.timestamps >= now - self.history_length)
        return split_samples(samples)


def history_provider(prometheus: str | None = None, file: str | Path | None = None, *,
                     history_length: float | str = DEFAULT_HISTORY_LENGTH,
                     resolution: float | str = DEFAULT_RESOLUTION,
                     prometheus_options: Mapping[str, Any] | None = None) -> HistoryProvider | None:
    """The provider the recommender's history options ask for: ``PrometheusHistory(prometheus,
    **prometheus_options)``, ``FileHistory(file)`` (which must exist), or None with neither
    (``kvert up``'s ``--vpa-history-*`` and ``kvert vpa recommender``'s ``--history-*`` flags).
    Raises ``HistoryError`` for both at once, a missing file or a URL that is not http(s),
    ValueError for a bad duration (both are checked whichever source is used)."""
    if prometheus and file is not None:
        raise HistoryError("a Prometheus server or a file, not both")
    length = parse_duration(history_length)
    step = parse_duration(resolution)
    if prometheus:
        return PrometheusHistory(prometheus, history_length=length, resolution=step, **(prometheus_options or {}))
    if file is not None:
        path = Path(file)
        if not path.is_file():
            raise HistoryError(f"{path}: no such file")
        return FileHistory(path, history_length=length)
    return None


# -- Prometheus -------------------------------------------------------------------------------------

def promql_string(value: str) -> str:
    """A PromQL double-quoted string literal."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def regex_escape(text: str) -> str:
    """``text`` as a literal in a Prometheus (RE2) regular expression."""
    return "".join(ch if ch.isalnum() or ch in "-_" else "\\" + ch for ch in text)


@dataclass(frozen=True)
class SeriesNames:
    """The metric and label names the history is read from: upstream's recommender flags
    ``--history-cpu-metric``, ``--history-memory-metric``, ``--container-namespace-label``,
    ``--container-pod-name-label``, ``--container-name-label`` (cAdvisor's series), and
    ``--metric-for-pod-labels``, ``--pod-label-prefix``, ``--pod-namespace-label``,
    ``--pod-name-label`` (the series whose labels carry each pod's labels; ``None``: not read).
    The container label defaults are today's cAdvisor's (``pod``, ``container``); upstream's,
    ``pod_name`` and ``name``, are the ones cAdvisor dropped in Kubernetes 1.16."""

    cpu_metric: str = "container_cpu_usage_seconds_total"
    memory_metric: str = "container_memory_working_set_bytes"
    namespace_label: str = "namespace"
    pod_label: str = "pod"
    container_label: str = "container"
    pod_labels_metric: str | None = None
    pod_label_prefix: str = "pod_label_"
    pod_labels_namespace_label: str = "kubernetes_namespace"
    pod_labels_name_label: str = "kubernetes_pod_name"


class RequestObserver(Protocol):
    """Where the Prometheus client's requests are counted."""

    def observe_request(self, code: str, method: str, seconds: float) -> None: ...


class RecommenderRequests:
    """A RequestObserver onto the recommender's ``prometheus_client_api_requests_count`` and
    ``prometheus_client_api_requests_duration_seconds`` (labels ``code``, ``method``)."""

    def __init__(self, metrics: RecommenderMetrics) -> None:
        self.metrics = metrics

    def observe_request(self, code: str, method: str, seconds: float) -> None:
        self.metrics.prometheus_requests.labels(code, method).inc()
        self.metrics.prometheus_request_duration.labels(code, method).observe(seconds)


class PrometheusHistory:
    """Usage history from a Prometheus server's range queries (see the module docstring)."""

    def __init__(self, url: str, *, history_length: float | str = DEFAULT_HISTORY_LENGTH,
                 resolution: float | str = DEFAULT_RESOLUTION, job: str = "", namespace: str | None = None,
                 pod_regex: str | None = None, timeout: float = DEFAULT_TIMEOUT,
                 headers: Mapping[str, str] | None = None, ssl: Any = None, names: SeriesNames | None = None,
                 observer: RequestObserver | None = None, clock: Clock | None = None) -> None:
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise HistoryError(f"{url}: not an http(s) URL of a Prometheus server (e.g. http://127.0.0.1:9090)")
        self.url = url.rstrip("/")
        self.source = self.url
        self.history_length = parse_duration(history_length)
        self.resolution = parse_duration(resolution)
        self.job = job
        self.namespace = namespace
        self.pod_regex = pod_regex
        self.timeout = float(timeout)
        self.headers = dict(headers or {})
        self.ssl = ssl
        self.names = names or SeriesNames()
        self.observer = observer
        self.clock = clock
        # (namespace, pod) -> the pod's labels, from the pod-labels series of the last fetch
        self.pod_labels: dict[tuple[str, str], dict[str, str]] = {}

    # queries

    def selector(self) -> str:
        n = self.names
        parts = []
        if self.job:
            parts.append(f"job={promql_string(self.job)}")
        if self.namespace:
            parts.append(f"{n.namespace_label}={promql_string(self.namespace)}")
        parts.append(f'{n.container_label}!=""')
        parts.append(f'{n.container_label}!="POD"')
        parts.append(f"{n.pod_label}=~{promql_string(self.pod_regex)}" if self.pod_regex else f'{n.pod_label}!=""')
        return ",".join(parts)

    def queries(self) -> dict[str, str]:
        n = self.names
        sel = self.selector()
        window = format_duration(self.resolution)
        by = f"{n.namespace_label}, {n.pod_label}, {n.container_label}"
        return {
            "cpu": (f"sum by ({by}) (rate({n.cpu_metric}{{{sel}}}[{window}]) "
                    f"and ignoring(cpu) ({n.memory_metric}{{{sel}}} > 0))"),
            "memory": f"max by ({by}) ({n.memory_metric}{{{sel}}} > 0)",
            "oom": f"container_oom_events_total{{{sel}}}",
        }

    def _key_labels(self) -> tuple[str, str, str]:
        return self.names.namespace_label, self.names.pod_label, self.names.container_label

    def ranges(self, now: float) -> list[tuple[float, float]]:
        """(start, end) pieces of the history, each at most ``MAX_STEPS_PER_QUERY`` steps."""
        step = self.resolution
        end = float(now)
        start = end - self.history_length
        out = []
        span = step * (MAX_STEPS_PER_QUERY - 1)
        t = start
        while t <= end:
            piece_end = min(end, t + span)
            out.append((t, piece_end))
            t = piece_end + step
        return out

    # HTTP

    async def query_range(self, session: Any, query: str, start: float, end: float) -> list[dict]:
        """One ``/api/v1/query_range``: the ``data.result`` matrix. Raises HistoryError."""
        return await query_range(session, self.url, query, start, end, self.resolution,
                                 timeout=self.timeout, ssl=self.ssl)

    async def fetch(self, now: float) -> History:
        import aiohttp

        queries = self.queries()
        series: dict[str, list[dict]] = {name: [] for name in queries}
        timeout = aiohttp.ClientTimeout(total=self.timeout)
        async with aiohttp.ClientSession(timeout=timeout, headers=self.headers,
                                         trace_configs=self._trace_configs()) as session:
            for start, end in self.ranges(now):
                for name, query in queries.items():
                    series[name].extend(await self.query_range(session, query, start, end))
            self.pod_labels = await self._read_pod_labels(session, now)
        series = {name: _merge_pieces(items) for name, items in series.items()}
        first_step = float(now) - self.history_length
        return self.parse(series, first_step)

    def _trace_configs(self) -> list:
        """The client's request counter and duration (promhttp's InstrumentRoundTripper*:
        requests that got an answer, by status code and lower-case method)."""
        if self.observer is None or self.clock is None:
            return []
        import aiohttp

        observer, clock = self.observer, self.clock
        trace = aiohttp.TraceConfig()

        async def start(session: Any, ctx: Any, params: Any) -> None:
            ctx.started = clock.now()

        async def end(session: Any, ctx: Any, params: Any) -> None:
            observer.observe_request(str(params.response.status), str(params.method).lower(),
                                     clock.now() - getattr(ctx, "started", clock.now()))

        trace.on_request_start.append(start)
        trace.on_request_end.append(end)
        return [trace]

    async def _read_pod_labels(self, session: Any, now: float) -> dict[tuple[str, str], dict[str, str]]:
        """upstream's ``readLastLabels``: each pod's labels from the newest sample of the
        pod-labels series (labels named ``PREFIXkey``). A failure leaves the pods without
        labels (they then go to a VPA by name), logged."""
        n = self.names
        if not n.pod_labels_metric:
            return {}
        try:
            data = await prometheus_get(session, self.url + QUERY_PATH, {"query": n.pod_labels_metric,
                                                                        "time": _num(now)},
                                        what=f"query {n.pod_labels_metric}", timeout=self.timeout, ssl=self.ssl)
        except HistoryError as e:
            log.warning("pod labels not read: %s", e)
            return {}
        result = data.get("result") if isinstance(data, dict) else None
        newest: dict[tuple[str, str], tuple[float, dict[str, str]]] = {}
        for item in result if isinstance(result, list) else ():
            metric = item.get("metric") if isinstance(item, Mapping) else None
            if not isinstance(metric, Mapping):
                continue
            ns, pod = metric.get(n.pod_labels_namespace_label), metric.get(n.pod_labels_name_label)
            if not ns or not pod:
                continue
            samples = item.get("values") or ([item["value"]] if item.get("value") else [])
            try:
                seen = max(float(v[0]) for v in samples)
            except (TypeError, ValueError, IndexError):
                continue
            labels = {str(k)[len(n.pod_label_prefix):]: str(v) for k, v in metric.items()
                      if str(k).startswith(n.pod_label_prefix)}
            key = (str(ns), str(pod))
            if key not in newest or seen > newest[key][0]:
                newest[key] = (seen, labels)
        return {key: labels for key, (_, labels) in newest.items()}

    # parsing

    def parse(self, series: Mapping[str, list[dict]], first_step: float) -> History:
        """History from the ``result`` matrices of the three queries (``cpu``, ``memory``,
        ``oom``; see the module docstring). Raises HistoryError on a malformed series."""
        url = self.url + QUERY_RANGE_PATH
        labels = self._key_labels()
        cpu = _by_container(series.get("cpu") or [], url, "cpu", labels)
        memory = _by_container(series.get("memory") or [], url, "memory", labels)
        ooms: dict[HistoryKey, list[tuple[np.ndarray, np.ndarray]]] = {}
        for key, t, v in _series(series.get("oom") or [], url, "oom", labels):
            ooms.setdefault(key, []).append(counter_increases(t, v, first_step, self.resolution))
        out: History = {}
        for key in sorted(set(cpu) | set(memory) | set(ooms)):
            oom = None
            if key in ooms:
                ot = np.concatenate([t for t, _ in ooms[key]])
                counts = np.concatenate([c for _, c in ooms[key]]).astype(np.int64)
                ot = np.repeat(ot, counts)
                ov = np.zeros(ot.size)
                if key in memory and ot.size:
                    mt, mv = memory[key]
                    i = np.searchsorted(mt, ot, side="right") - 1
                    ov = np.where(i >= 0, mv[np.clip(i, 0, None)], 0.0) if mt.size else ov
                if ot.size:
                    oom = (ot, ov)
            samples = container_samples(*key, cpu=cpu.get(key), memory=memory.get(key), oom=oom)
            if len(samples):
                out[key] = samples
        return out


def _merge_pieces(items: list) -> list:
    """One series per label set: the pieces of a range split in several queries joined."""
    merged: dict[tuple, Mapping] = {}
    for item in items:
        if not isinstance(item, Mapping) or not isinstance(item.get("metric"), Mapping):
            return items            # malformed: ``parse`` names it
        key = tuple(sorted((str(k), str(v)) for k, v in item["metric"].items()))
        if key in merged:
            merged[key] = {"metric": item["metric"],
                           "values": list(merged[key]["values"]) + list(item.get("values") or [])}
        else:
            merged[key] = item
    return list(merged.values())


def _num(value: float) -> str:
    return f"{value:.3f}".rstrip("0").rstrip(".")


# -- Prometheus' HTTP API, shared with kvert.sim.prometheus_history ---------------------------------

@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """The garbage collector paused: a matrix answer is millions of small lists, whose making
    and walking would otherwise set off collection after collection."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _loads(body: bytes) -> Any:
    """JSON from bytes, fast (orjson, the collector paused)."""
    import orjson

    with gc_paused():
        return orjson.loads(body)


async def prometheus_get(session: Any, url: str, params: Any, *, what: str, timeout: float = DEFAULT_TIMEOUT,
                         ssl: Any = None, error: type[Exception] = HistoryError,
                         warnings: list[str] | None = None) -> Any:
    """``GET url`` of Prometheus' HTTP API (``url``: the server's URL and the endpoint's path):
    the answer's ``data``. ``what`` says what was asked (``query X``), for messages. Raises
    ``error`` (HistoryError by default) naming the URL and ``what``: unreachable, no answer
    within ``timeout`` (the session's timeout), not Prometheus' JSON (an HTML page, say),
    ``status: error``. Warnings Prometheus sends along are logged, and appended to
    ``warnings`` when given."""
    import aiohttp

    where = f"{url} ({what})"
    try:
        async with session.get(url, params=params, ssl=ssl) as r:
            body = await r.read()
            status, ctype = r.status, r.headers.get("Content-Type", "")
    except aiohttp.ClientError as e:
        raise error(f"{url}: cannot reach Prometheus: {e} ({what})") from None
    except TimeoutError:
        raise error(f"{where}: no answer within {timeout:g}s") from None

    def text() -> str:
        return body[:200].decode("utf-8", errors="replace")

    try:
        answer = _loads(body)
    except ValueError:
        raise error(f"{where}: not a Prometheus API response (HTTP {status}, "
                    f"{ctype or 'no content type'}): {text()!r}") from None
    if not isinstance(answer, dict) or "status" not in answer:
        raise error(f"{where}: not a Prometheus API response (HTTP {status}): {text()!r}")
    if answer["status"] != "success":
        raise error(f"{where}: HTTP {status}: {answer.get('errorType', 'error')}: "
                    f"{answer.get('error', 'no error message')}")
    for w in answer.get("warnings") or []:
        log.warning("%s: %s", where, w)
        if warnings is not None:
            warnings.append(f"{where}: Prometheus warns: {w}")
    return answer.get("data")


async def query_range(session: Any, base_url: str, query: str, start: float, end: float, step: float, *,
                      timeout: float = DEFAULT_TIMEOUT, ssl: Any = None, error: type[Exception] = HistoryError,
                      warnings: list[str] | None = None) -> list:
    """One ``/api/v1/query_range`` of the server at ``base_url``: the ``data.result`` matrix,
    evaluated at ``start``, ``start + step``, ... up to ``end`` (keep it under 11,000 steps).
    Raises ``error`` naming the URL and the query."""
    params = {"query": query, "start": _num(start), "end": _num(end), "step": _num(step)}
    url = base_url.rstrip("/") + QUERY_RANGE_PATH
    data = await prometheus_get(session, url, params, what=f"query {query}", timeout=timeout, ssl=ssl,
                                error=error, warnings=warnings)
    if not isinstance(data, dict) or data.get("resultType") != "matrix" or not isinstance(data.get("result"), list):
        kind = data.get("resultType") if isinstance(data, dict) else type(data).__name__
        raise error(f"{url} (query {query}): expected a matrix result, got {kind!r}")
    return data["result"]


async def query_instant(session: Any, base_url: str, query: str, time: float, *, timeout: float = DEFAULT_TIMEOUT,
                        ssl: Any = None, error: type[Exception] = HistoryError,
                        warnings: list[str] | None = None) -> list:
    """One ``/api/v1/query`` at ``time``: the ``data.result`` vector (``[{metric, value}]``).
    Raises ``error`` naming the URL and the query."""
    url = base_url.rstrip("/") + QUERY_PATH
    data = await prometheus_get(session, url, {"query": query, "time": _num(time)}, what=f"query {query}",
                                timeout=timeout, ssl=ssl, error=error, warnings=warnings)
    if not isinstance(data, dict) or data.get("resultType") != "vector" or not isinstance(data.get("result"), list):
        kind = data.get("resultType") if isinstance(data, dict) else type(data).__name__
        raise error(f"{url} (query {query}): expected a vector result, got {kind!r}")
    return data["result"]


def parse_matrix(result: list, url: str, what: str, key_labels: Sequence[str] | None = None, *,
                 error: type[Exception] = HistoryError) -> tuple[list[tuple], np.ndarray, np.ndarray, np.ndarray]:
    """A ``query_range`` matrix as arrays, with no Python loop per sample: ``(keys, lengths,
    times, values)``; series ``i`` is ``keys[i]`` (its values of ``key_labels``, or, when that
    is None, all its labels but ``__name__`` as sorted (name, value) pairs) and its
    ``lengths[i]`` samples come next in ``times``/``values`` (float64; the answer's values are
    strings: ``"0.25"``, ``"NaN"``, ``"+Inf"``). Raises ``error`` naming ``url`` and ``what`` for
    a series that is not ``{metric, values}``, lacks a key label or has a bad sample."""
    with gc_paused():
        return _parse_matrix(result, url, what, key_labels, error)


def _parse_matrix(result: list, url: str, what: str, key_labels: Sequence[str] | None,
                  error: type[Exception]) -> tuple[list[tuple], np.ndarray, np.ndarray, np.ndarray]:
    from itertools import chain

    keys: list[tuple] = []
    values: list[list] = []
    for item in result:
        if not isinstance(item, Mapping) or not isinstance(item.get("metric"), Mapping) \
                or not isinstance(item.get("values"), list):
            raise error(f"{url}: {what} series is not {{metric, values}}: {str(item)[:200]}")
        labels = item["metric"]
        if key_labels is None:
            keys.append(tuple(sorted((str(k), str(v)) for k, v in labels.items() if k != "__name__")))
        else:
            try:
                keys.append(tuple(str(labels[name]) for name in key_labels))
            except KeyError as e:
                raise error(f"{url}: {what} series without a {e.args[0]} label: {dict(labels)}") from None
        values.append(item["values"])
    lengths = np.fromiter(map(len, values), dtype=np.int64, count=len(values))
    pairs = list(chain.from_iterable(values))
    try:
        if pairs and (set(map(type, pairs)) != {list} or set(map(len, pairs)) != {2}):
            raise ValueError
        flat = list(chain.from_iterable(pairs))
        times = np.array(flat[0::2], dtype=np.float64)
        vals = np.array(flat[1::2], dtype=np.float64)
    except (TypeError, ValueError):
        for i, series in enumerate(values):         # find the series to name
            try:
                if any(type(p) is not list or len(p) != 2 for p in series):
                    raise ValueError
                np.array([p[0] for p in series], dtype=np.float64)
                np.array([p[1] for p in series], dtype=np.float64)
            except (TypeError, ValueError):
                raise error(f"{url}: {what} series {dict(result[i]['metric'])} has a value that is not "
                            "[unix seconds, \"number\"]") from None
        raise error(f"{url}: {what}: a value is not [unix seconds, \"number\"]") from None
    return keys, lengths, times, vals


_KEY_LABELS = ("namespace", "pod", "container")


def _series(result: list, url: str, what: str,
            labels: Sequence[str] = _KEY_LABELS) -> Iterable[tuple[HistoryKey, np.ndarray, np.ndarray]]:
    keys, lengths, times, values = parse_matrix(result, url, what, labels)
    ends = np.cumsum(lengths).tolist()
    for key, end, n in zip(keys, ends, lengths.tolist()):
        yield key, times[end - n:end], values[end - n:end]


def _by_container(result: list, url: str, what: str,
                  labels: Sequence[str] = _KEY_LABELS) -> dict[HistoryKey, tuple[np.ndarray, np.ndarray]]:
    """Series of one query by container (several series of one container are merged by time)."""
    out: dict[HistoryKey, list[tuple[np.ndarray, np.ndarray]]] = {}
    for key, t, v in _series(result, url, what, labels):
        ok = np.isfinite(v) & (v >= 0)
        out.setdefault(key, []).append((t[ok], v[ok]))
    merged = {}
    for key, parts in out.items():
        t = np.concatenate([p[0] for p in parts])
        v = np.concatenate([p[1] for p in parts])
        order = np.argsort(t, kind="stable")
        merged[key] = (t[order], v[order])
    return merged


def counter_increases(t: np.ndarray, v: np.ndarray, first_step: float, step: float) -> tuple[np.ndarray, np.ndarray]:
    """(times, counts) of a cumulative counter's increases, from its samples in time order (the
    module docstring's OOM kills): each rise is that many at the later time, a reset counts its
    new value, and a series whose first sample comes after ``first_step + step / 2`` counts its
    first value. Samples equal to the one before may be left out: they change nothing."""
    ok = np.isfinite(v)
    t, v = t[ok], v[ok]
    if t.size == 0:
        return np.zeros(0), np.zeros(0)
    rise = np.empty(t.size)
    rise[1:] = np.where(v[1:] >= v[:-1], v[1:] - v[:-1], v[1:])   # a reset counts its new value
    rise[0] = v[0] if t[0] > first_step + step / 2 else 0.0       # appeared within the range
    counts = np.round(np.clip(rise, 0, None))
    keep = counts > 0
    return t[keep], counts[keep]


# -- which VPA a pod's history goes to ---------------------------------------------------------------

_PIECE = r"[a-z0-9]+"
_SUFFIX = r"[a-z0-9]{5}"


def name_pattern(kind: str, name: str) -> str:
    """The regular expression (Python and RE2) of the pod names a workload's controller gives."""
    base = regex_escape(name)
    if kind == "Deployment":
        return f"{base}-{_PIECE}-{_SUFFIX}"
    if kind == "StatefulSet":
        return f"{base}-[0-9]+"
    if kind == "CronJob":
        return f"{base}-[0-9]+-{_SUFFIX}"
    return f"{base}-{_SUFFIX}"


def owns_by_name(kind: str, name: str, pod: str) -> bool:
    return bool(name) and re.fullmatch(name_pattern(kind, name), pod) is not None


def match_history(pods: Iterable[tuple[str, str]], vpas: Sequence[Mapping], targets: Mapping[tuple[str, str], Any],
                  live_pods: Sequence[Mapping], gone_labels: Mapping[tuple[str, str], Mapping[str, str]] | None = None,
                  ) -> tuple[dict[tuple[str, str], tuple[str, str]], list[tuple[str, str]]]:
    """Give each (namespace, pod) of a history to a VPA (the rules in the module docstring).

    ``vpas``: the VPA objects, oldest first; ``targets``: (namespace, VPA name) -> the resolved
    ``targets.Target``; ``live_pods``: the live pod objects; ``gone_labels``: the last labels of
    pods that are gone (``PrometheusHistory.pod_labels``), which match them to a VPA's selector
    before their name is tried, as upstream matches history pods. Returns ({(ns, pod): (ns,
    VPA)}, [(ns, pod) dropped])."""
    def key_of(obj: Mapping) -> tuple[str, str]:
        meta = obj.get("metadata") or {}
        return meta.get("namespace") or "default", meta.get("name", "")

    live = {key_of(p) for p in live_pods}
    labelled: list[Mapping] = [{"metadata": {"namespace": ns, "name": name, "labels": dict(labels)}}
                               for (ns, name), labels in sorted((gone_labels or {}).items())
                               if (ns, name) not in live and labels]
    owner: dict[tuple[str, str], tuple[str, str]] = {}
    for vpa in vpas:
        vkey = key_of(vpa)
        target = targets.get(vkey)
        if target is None or not target.ok:
            continue
        for pod in select_pods(list(live_pods) + labelled, vkey[0], target.selector):
            owner.setdefault(key_of(pod), vkey)
    refs: dict[str, list[tuple[int, int, tuple[str, str], str, str]]] = {}
    for rank, vpa in enumerate(vpas):
        vkey = key_of(vpa)
        ref = (vpa.get("spec") or {}).get("targetRef") or {}
        if isinstance(ref, Mapping) and ref.get("name"):
            refs.setdefault(vkey[0], []).append((-len(str(ref["name"])), rank, vkey, str(ref.get("kind") or ""),
                                                 str(ref["name"])))
    for candidates in refs.values():
        candidates.sort()
    assigned: dict[tuple[str, str], tuple[str, str]] = {}
    dropped: list[tuple[str, str]] = []
    for pk in sorted(set(pods)):
        if pk in live:
            owner_key = owner.get(pk)
        else:
            owner_key = owner.get(pk) or next(
                (c[2] for c in refs.get(pk[0], []) if owns_by_name(c[3], c[4], pk[1])), None)
        if owner_key is None:
            dropped.append(pk)
        else:
            assigned[pk] = owner_key
    return assigned, dropped


__all__ = ["DEFAULT_HISTORY_LENGTH", "DEFAULT_RESOLUTION", "DEFAULT_TIMEOUT", "FileHistory", "History", "HistoryError",
           "gc_paused", "HistoryKey", "HistoryProvider", "MAX_STEPS_PER_QUERY", "PrometheusHistory",
           "RecommenderRequests", "RequestObserver", "SeriesNames", "concat_samples", "container_samples",
           "counter_increases", "format_duration", "history_provider", "match_history", "name_pattern", "owns_by_name",
           "parse_duration", "parse_matrix", "prometheus_get", "promql_string", "query_instant", "query_range",
           "regex_escape", "split_samples"]
