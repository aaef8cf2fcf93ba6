"""A real Prometheus holding a generated cluster history: the test fixture of
``kvert.sim.prometheus_history`` (and of the end-to-end test and benchmark of
``kvert scenario import``).

1. Describe pods and their containers' usage (``GenPod``, ``GenContainer``), by hand or with
   ``week_of_pods(seed)``: a plausible week of a few workloads.
2. ``write_openmetrics(path, pods, start=..., scrape=...)`` writes what cAdvisor (the kubelet's
   ``/metrics/cadvisor``) and kube-state-metrics v2 would have exposed, scraped every ``scrape``
   seconds, as an OpenMetrics file: one family after the other, ``# TYPE`` lines, each series'
   samples in time order, timestamps in seconds, ``# EOF`` at the end.
3. ``backfill(path, tsdb)`` turns it into TSDB blocks (``promtool tsdb create-blocks-from
   openmetrics``).
4. ``with PrometheusServer(tsdb) as prom:`` runs a real ``prometheus`` on those blocks (no
   scrape targets, retention long enough to keep them, a free port on 127.0.0.1) and gives
   its ``prom.url`` once ``/-/ready`` answers; it is stopped and its files removed on exit.

Conventions (indices are scrape indices ``j``: the scrape at ``start + j * scrape``):

* a pod lives from scrape ``first`` to scrape ``last`` (both scraped);
* ``GenContainer.cpu[j]`` is the CPU used (cores) from scrape ``j`` to ``j + 1``, for ``j`` in
  ``first .. last - 1`` (NaN elsewhere: nothing follows the last scrape);
  ``container_cpu_usage_seconds_total`` is its running sum, 0 at ``first``, restarting from 0
  when the container restarts (the same series: kvert's node agent keeps a container's labels;
  real cAdvisor starts a new series with a new ``id`` instead, which readers sum alike);
* ``memory[j]`` is the working set at scrape ``j`` (NaN outside ``first .. last``);
* ``oom_at`` / ``restarts_at`` / ``cpu_resets_at`` hold intervals ``r``: the event happened
  between scrapes ``r`` and ``r + 1`` and shows from scrape ``r + 1`` on (the restart count, the
  OOM counter, the last terminated reason; the CPU counter restarts from 0 at the start of
  ``r``, so ``cpu[r]`` is all the new container's). ``cpu_resets_at``: the CPU counter restarts
  with no restart (an unexplained counter reset). Keep them at least a few scrapes after a
  container's start or previous reset, so the counter visibly drops;
* ``container_oom_events_total`` counts a container's OOM kills over its pod's life (it is
  not reset by the restart the kill causes);
* ``GenPod.gaps`` are scrape ranges ``[a, b)`` the pod's cAdvisor series miss (the kubelet
  was not scraped); kube-state-metrics' series have no gaps.

Size: ``week_of_pods()`` is 15 pods, a week at a 5-minute scrape interval (2016 scrapes):
about 220,000 samples (65 MB of OpenMetrics) which generate and write in 0.3 s, backfill in
about 0.6 s and start in 0.1 s. A finer interval or a bigger cluster costs proportionally more:
writing is about 1 µs a sample, ``promtool`` about 3 µs.
"""

from __future__ import annotations

import hashlib
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Iterable

import numpy as np

START = 1714953600.0            # 2024-05-06T00:00:00Z, a Monday
SCRAPE = 300.0                  # 5 minutes
JOBS = ("kubernetes-cadvisor", "kube-state-metrics")
KSM_INSTANCE = "10.0.0.9:8080"
PAUSE_IMAGE = "registry.k8s.io/pause:3.9"
MI = 2**20


def have_prometheus() -> str | None:
    """None when ``prometheus`` and ``promtool`` are on the PATH, else why not (a skip reason)."""
    missing = [b for b in ("prometheus", "promtool") if shutil.which(b) is None]
    if missing:
        return (f"{' and '.join(missing)} not installed (the Debian package 'prometheus' has both; "
                "scripts/setup --test installs it when run as root)")
    return None


@dataclass
class GenContainer:
    name: str
    cpu: np.ndarray                              # cores from scrape j to j + 1 (NaN outside the life)
    memory: np.ndarray                           # working-set bytes at scrape j
    requests: dict[str, int] = field(default_factory=dict)    # cpu millicores, memory bytes
    limits: dict[str, int] = field(default_factory=dict)
    oom_at: list[int] = field(default_factory=list)           # intervals of OOM kills (each restarts it)
    restarts_at: list[int] = field(default_factory=list)      # intervals of other restarts (reason Error)
    throttled: np.ndarray | None = None          # throttled seconds per second from scrape j to j + 1
    cpu_resets_at: list[int] = field(default_factory=list)    # CPU counter resets without a restart
    image: str = ""

    def all_restarts(self) -> list[int]:
        return sorted(self.oom_at + self.restarts_at)


@dataclass
class GenPod:
    namespace: str
    name: str
    owner_kind: str | None                       # the direct owner: ReplicaSet, StatefulSet, Job, ...
    owner_name: str | None
    node: str
    first: int                                   # scrape indices of its life, both scraped
    last: int
    containers: list[GenContainer]
    replicaset_owner: tuple[str, str] | None = None   # (kind, name) owning its ReplicaSet
    job_owner: tuple[str, str] | None = None          # (kind, name) owning its Job
    gaps: list[tuple[int, int]] = field(default_factory=list)   # [a, b): scrapes cAdvisor missed
    uid: str = ""

    def __post_init__(self) -> None:
        if not self.uid:
            self.uid = str(uuid.uuid5(uuid.NAMESPACE_URL, f"pod/{self.namespace}/{self.name}/{self.first}"))

    def life(self) -> np.ndarray:
        return np.arange(self.first, self.last + 1)

    def cadvisor_scrapes(self) -> np.ndarray:
        j = self.life()
        keep = np.ones(j.size, dtype=bool)
        for a, b in self.gaps:
            keep &= (j < a) | (j >= b)
        return j[keep]


# -- OpenMetrics --------------------------------------------------------------------------------------

def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _labels(labels: dict[str, str]) -> str:
    return "{" + ",".join(f'{k}="{_escape(str(v))}"' for k, v in labels.items()) + "}"


def _num(value: float) -> str:
    if value == int(value) and abs(value) < 2**53:
        return str(int(value))
    return repr(float(value))


def _cumulative(increments: np.ndarray, resets: Iterable[int], first: int) -> np.ndarray:
    """A counter at scrapes first..last from its increments over intervals first..last-1 (index
    0 = ``first``): 0 at ``first``, restarting from 0 at the start of each interval in ``resets``."""
    n = increments.size + 1
    total = np.concatenate([[0.0], np.cumsum(increments)])
    base = np.zeros(n, dtype=np.int64)                 # the index the current segment started at
    for r in resets:
        i = r - first
        if 0 <= i < n - 1:
            base[i + 1] = i
    base = np.maximum.accumulate(base)
    return total - total[base]


def _steps(events: Iterable[int], scrapes: np.ndarray) -> np.ndarray:
    """A count at each scrape of the events (intervals r) shown from scrape r + 1 on."""
    ev = np.sort(np.asarray(list(events), dtype=np.int64))
    return np.searchsorted(ev + 1, scrapes, side="right").astype(np.float64)


class _Families:
    """Lines per metric family, written family after family."""

    def __init__(self) -> None:
        self.types: dict[str, str] = {}
        self.lines: dict[str, list[str]] = {}

    def add(self, family: str, kind: str, sample: str, labels: dict[str, str], times: np.ndarray,
            values: np.ndarray) -> None:
        if family not in self.types:
            self.types[family] = kind
            self.lines[family] = []
        head = sample + _labels(labels) + " "
        ok = ~np.isnan(values)
        self.lines[family].append("".join(f"{head}{_num(v)} {_num(t)}\n"
                                          for v, t in zip(values[ok].tolist(), times[ok].tolist())))

    def write(self, f: IO[str]) -> None:
        for family, kind in self.types.items():
            f.write(f"# TYPE {family} {kind}\n")
            f.writelines(self.lines[family])
        f.write("# EOF\n")


def _cid(*parts: str) -> str:
    return hashlib.sha256("/".join(parts).encode()).hexdigest()


def write_openmetrics(path: str | Path, pods: list[GenPod], *, start: float = START, scrape: float = SCRAPE,
                      jobs: tuple[str, str] = JOBS, cadvisor_labels: tuple[str, str, str] = ("namespace", "pod", "container"),
                      ksm_labels: tuple[str, str] = ("namespace", "pod"), oom_events: bool = True,
                      ksm: bool = True) -> int:
    """Write the pods' cAdvisor and kube-state-metrics series (see the module docstring) to
    ``path``; returns the number of samples. ``cadvisor_labels``: the names of cAdvisor's
    namespace, pod and container labels (``("namespace", "pod_name", "container_name")`` for
    pre-1.16 kubelets; a container label named ``name`` replaces cAdvisor's ``name`` label);
    ``ksm_labels``: kube-state-metrics' namespace and pod labels; ``oom_events=False`` leaves
    out ``container_oom_events_total`` (older cAdvisors), ``ksm=False`` every
    kube-state-metrics series."""
    fam = _Families()
    ns_l, pod_l, c_l = cadvisor_labels
    kns_l, kpod_l = ksm_labels
    cadvisor_job, ksm_job = jobs
    replicasets: dict[tuple[str, str], tuple[tuple[str, str] | None, set[int]]] = {}
    jobs_seen: dict[tuple[str, str], tuple[tuple[str, str] | None, set[int]]] = {}
    # cAdvisor families first, in the order the kubelet serves them
    for pod in pods:
        life = pod.life()
        seen = pod.cadvisor_scrapes()
        times = start + seen * scrape
        at = seen - pod.first                              # indices into the life's arrays
        sandbox = _cid(pod.uid, "sandbox")
        base = {"instance": pod.node, "job": cadvisor_job, ns_l: pod.namespace, pod_l: pod.name}
        pod_id = f"/kubepods/burstable/pod{pod.uid}"

        def series_labels(container: str, image: str, cid: str, cpu: bool = False, *, base=base,
                          pod_id=pod_id) -> dict[str, str]:
            labels = {c_l: container, "id": f"{pod_id}/{cid}" if cid else pod_id, "image": image, **base}
            if c_l != "name":
                labels["name"] = cid
            if cpu:
                labels["cpu"] = "total"
            return dict(sorted(labels.items()))

        pod_cpu = np.zeros(life.size)
        pod_mem = np.zeros(life.size)
        pod_throttled = np.zeros(life.size)
        any_limit = False
        for c in pod.containers:
            cid = _cid(pod.uid, c.name)
            cpu_inc = np.nan_to_num(c.cpu[pod.first:pod.last]) * scrape
            resets = c.all_restarts() + list(c.cpu_resets_at)
            counter = _cumulative(cpu_inc, resets, pod.first)
            pod_cpu += _cumulative(cpu_inc, [], pod.first)
            mem = c.memory[pod.first:pod.last + 1]
            pod_mem += np.nan_to_num(mem)
            fam.add("container_cpu_usage_seconds", "counter", "container_cpu_usage_seconds_total",
                    series_labels(c.name, c.image, cid, cpu=True), times, counter[at])
            fam.add("container_memory_working_set_bytes", "gauge", "container_memory_working_set_bytes",
                    series_labels(c.name, c.image, cid), times, mem[at])
            if "cpu" in c.limits:
                any_limit = True
                thr = np.nan_to_num(c.throttled[pod.first:pod.last]) if c.throttled is not None \
                    else np.zeros(life.size - 1)
                pod_throttled[1:] += np.cumsum(thr * scrape)
                periods = np.full(life.size - 1, scrape / 0.1)
                fam.add("container_cpu_cfs_periods", "counter", "container_cpu_cfs_periods_total",
                        series_labels(c.name, c.image, cid), times, _cumulative(periods, resets, pod.first)[at])
                fam.add("container_cpu_cfs_throttled_periods", "counter", "container_cpu_cfs_throttled_periods_total",
                        series_labels(c.name, c.image, cid), times,
                        _cumulative(np.round(periods * np.clip(thr, 0, 1)), resets, pod.first)[at])
                fam.add("container_cpu_cfs_throttled_seconds", "counter", "container_cpu_cfs_throttled_seconds_total",
                        series_labels(c.name, c.image, cid), times, _cumulative(thr * scrape, resets, pod.first)[at])
            if oom_events:
                fam.add("container_oom_events", "counter", "container_oom_events_total",
                        series_labels(c.name, c.image, cid), times, _steps(c.oom_at, life)[at])
        # the pause container and the pod's own cgroup: series a reader must leave out
        pause_cpu = np.arange(life.size) * 0.0005 * scrape
        pause_mem = np.full(life.size, 700 * 1024.0)
        for container, image, cid, cpu, mem in (("POD", PAUSE_IMAGE, sandbox, pause_cpu, pause_mem),
                                                ("", "", "", pod_cpu + pause_cpu, pod_mem + pause_mem)):
            fam.add("container_cpu_usage_seconds", "counter", "container_cpu_usage_seconds_total",
                    series_labels(container, image, cid, cpu=True), times, cpu[at])
            fam.add("container_memory_working_set_bytes", "gauge", "container_memory_working_set_bytes",
                    series_labels(container, image, cid), times, mem[at])
            if oom_events:
                fam.add("container_oom_events", "counter", "container_oom_events_total",
                        series_labels(container, image, cid), times, np.zeros(at.size))
        if any_limit:
            fam.add("container_cpu_cfs_throttled_seconds", "counter", "container_cpu_cfs_throttled_seconds_total",
                    series_labels("", "", ""), times, pod_throttled[at])
    if ksm:
        for pod in pods:
            life = pod.life()
            times = start + life * scrape
            one = np.ones(life.size)
            base = {kns_l: pod.namespace, kpod_l: pod.name, "uid": pod.uid, "job": ksm_job, "instance": KSM_INSTANCE}
            owner_kind, owner_name = pod.owner_kind or "<none>", pod.owner_name or "<none>"
            fam.add("kube_pod_owner", "gauge", "kube_pod_owner",
                    {**base, "owner_kind": owner_kind, "owner_name": owner_name,
                     "owner_is_controller": "true" if pod.owner_kind else "<none>"}, times, one)
            fam.add("kube_pod_info", "gauge", "kube_pod_info",
                    {**base, "host_ip": "10.0.1.1", "pod_ip": "10.244.0.1", "node": pod.node,
                     "created_by_kind": owner_kind, "created_by_name": owner_name, "priority_class": "",
                     "host_network": "false"}, times, one)
            if pod.owner_kind == "ReplicaSet":
                rs = replicasets.setdefault((pod.namespace, pod.owner_name), (pod.replicaset_owner, set()))
                rs[1].update(life.tolist())
            if pod.owner_kind == "Job":
                job = jobs_seen.setdefault((pod.namespace, pod.owner_name), (pod.job_owner, set()))
                job[1].update(life.tolist())
            for c in pod.containers:
                cbase = {**base, "container": c.name}
                fam.add("kube_pod_container_status_restarts", "counter", "kube_pod_container_status_restarts_total",
                        cbase, times, _steps(c.all_restarts(), life))
                # the reason of the last termination, shown from the scrape after it until the next
                # termination's shows: one series per reason (KSM v2 exposes the current one only)
                events = sorted([(r, "OOMKilled") for r in c.oom_at] + [(r, "Error") for r in c.restarts_at])
                shown: dict[str, list[np.ndarray]] = {}
                for i, (r, reason) in enumerate(events):
                    upto = events[i + 1][0] if i + 1 < len(events) else pod.last
                    shown.setdefault(reason, []).append(life[(life >= r + 1) & (life <= upto)])
                for reason, parts in sorted(shown.items()):
                    j = np.unique(np.concatenate(parts))
                    fam.add("kube_pod_container_status_last_terminated_reason", "gauge",
                            "kube_pod_container_status_last_terminated_reason", {**cbase, "reason": reason},
                            start + j * scrape, np.ones(j.size))
                for family, amounts in (("kube_pod_container_resource_requests", c.requests),
                                        ("kube_pod_container_resource_limits", c.limits)):
                    for resource, amount in sorted(amounts.items()):
                        value, unit = (amount / 1000, "core") if resource == "cpu" else (float(amount), "byte")
                        fam.add(family, "gauge", family, {**cbase, "node": pod.node, "resource": resource, "unit": unit},
                                times, np.full(life.size, value))
        for family, label, owners in (("kube_replicaset_owner", "replicaset", replicasets),
                                      ("kube_job_owner", "job_name", jobs_seen)):
            for (ns, name), (owner, scrapes) in sorted(owners.items()):
                j = np.array(sorted(scrapes))
                kind, oname = owner if owner else ("<none>", "<none>")
                fam.add(family, "gauge", family,
                        {kns_l: ns, label: name, "owner_kind": kind, "owner_name": oname,
                         "owner_is_controller": "true" if owner else "<none>", "job": ksm_job,
                         "instance": KSM_INSTANCE}, start + j * scrape, np.ones(j.size))
    with open(path, "w", encoding="utf-8") as f:
        fam.write(f)
    return sum(chunk.count("\n") for lines in fam.lines.values() for chunk in lines)


def backfill(openmetrics: str | Path, tsdb: str | Path, *, max_block_duration: str = "720h") -> None:
    """TSDB blocks in ``tsdb`` from an OpenMetrics file (``promtool tsdb create-blocks-from
    openmetrics``). promtool reads the whole file once per block, so long blocks (30 days: a
    week is one or two blocks) backfill fastest; it holds a block in memory, so for very big
    histories shorter ones (``"24h"``) bound that instead."""
    Path(tsdb).mkdir(parents=True, exist_ok=True)
    out = subprocess.run(["promtool", "tsdb", "create-blocks-from", "openmetrics", "--quiet",
                          f"--max-block-duration={max_block_duration}", str(openmetrics), str(tsdb)],
                         capture_output=True, text=True, timeout=3600, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"promtool failed ({out.returncode}): {out.stderr[-3000:] or out.stdout[-3000:]}")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PrometheusServer:
    """A real ``prometheus`` serving the blocks in ``tsdb`` (a context manager; ``.url``)."""

    def __init__(self, tsdb: str | Path, *, binary: str = "prometheus", ready_timeout: float = 60.0) -> None:
        self.tsdb = Path(tsdb)
        self.binary = binary
        self.ready_timeout = ready_timeout
        self.url = ""
        self.proc: subprocess.Popen | None = None
        self._dir: Path | None = None

    def __enter__(self) -> PrometheusServer:
        self._dir = Path(tempfile.mkdtemp(prefix="kvert-prometheus-"))
        config = self._dir / "prometheus.yml"
        config.write_text("global:\n  scrape_interval: 1m\nscrape_configs: []\n")
        self.log = self._dir / "prometheus.log"
        for _ in range(3):                                 # a port taken in between: try another
            port = free_port()
            self.url = f"http://127.0.0.1:{port}"
            with self.log.open("w") as log:
                self.proc = subprocess.Popen(
                    [self.binary, f"--config.file={config}", f"--storage.tsdb.path={self.tsdb}",
                     "--storage.tsdb.retention.time=100y",
                     # no compaction of the backfilled blocks while tests query them
                     "--storage.tsdb.min-block-duration=2h", "--storage.tsdb.max-block-duration=2h",
                     f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn"],
                    stdout=log, stderr=subprocess.STDOUT, cwd=self._dir)
            if self._wait_ready():
                return self
            self._stop()
        self._cleanup()
        raise RuntimeError(f"prometheus did not become ready: {self.log.read_text()[-3000:]}")

    def _wait_ready(self) -> bool:
        deadline = time.monotonic() + self.ready_timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return False
            try:
                with urllib.request.urlopen(self.url + "/-/ready", timeout=2) as r:
                    if r.status == 200:
                        return True
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.1)
        return False

    def _stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def _cleanup(self) -> None:
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None

    def __exit__(self, *exc: object) -> None:
        self._stop()
        self._cleanup()


def start_prometheus(pods: list[GenPod], workdir: str | Path, *, start: float = START, scrape: float = SCRAPE,
                     **write_options) -> PrometheusServer:
    """``write_openmetrics`` + ``backfill`` into ``workdir`` and a ``PrometheusServer`` on it (not
    yet started: use it in a ``with``)."""
    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    om = workdir / "history.om"
    write_openmetrics(om, pods, start=start, scrape=scrape, **write_options)
    backfill(om, workdir / "tsdb")
    om.unlink()
    return PrometheusServer(workdir / "tsdb")


# -- a plausible week -----------------------------------------------------------------------------------

def _suffix(rng: np.random.Generator, n: int = 5) -> str:
    alphabet = "bcdfghjklmnpqrstvwxz2456789"           # the letters Kubernetes' name generator uses
    return "".join(alphabet[i] for i in rng.integers(0, len(alphabet), n))


def week_of_pods(seed: int = 0, *, days: float = 7, scrape: float = SCRAPE) -> list[GenPod]:
    """A plausible ``days`` of a few workloads, deterministic from ``seed`` (scrape indices
    ``0 .. days * 86400 / scrape - 1``):

    * Deployment ``shop/web``, 2 replicas (containers ``app``, with a CPU limit and throttling,
      and ``istio-proxy``), rolled out to a new ReplicaSet mid-window: the pods are replaced;
    * StatefulSet ``shop/db``: ``db-0`` (whose CPU counter resets once with no restart, as
      after a cgroup recreation, at 36% of the window) and ``db-1`` (whose cAdvisor series miss
      30 minutes at half the window);
    * Deployment ``batch/worker``, 1 replica whose ``worker`` container leaks memory up to its
      300Mi limit and is OOM-killed, with one other restart (reason Error) in between;
    * CronJob ``batch/report``: a Job a day at 02:00 whose pod runs 30 minutes;
    * a bare pod ``default/debug`` (no owner) for 3 hours from 31% of the window.
    """
    rng = np.random.default_rng(seed)
    n = int(round(days * 86400 / scrape))
    j = np.arange(n)
    hours = (j * scrape / 3600.0) % 24
    diurnal = 0.5 + 0.5 * np.sin(2 * np.pi * (hours - 9) / 24)      # peaks at 15:00
    per_hour = 3600.0 / scrape
    pods: list[GenPod] = []

    def life_arrays(first: int, last: int, cpu: np.ndarray, memory: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        c = np.full(n, np.nan)
        m = np.full(n, np.nan)
        c[first:last] = np.round(cpu[first:last], 6)
        m[first:last + 1] = np.round(memory[first:last + 1])
        return c, m

    # Deployment web: 2 replicas, replaced mid-window
    mid = n // 2
    rs_old, rs_new = "web-7d9f8c6b5d", "web-6c8b7d9f4e"
    spans = [(rs_old, 0, mid), (rs_old, 0, mid + 1), (rs_new, mid - 2, n - 1), (rs_new, mid - 1, n - 1)]
    for i, (rs, first, last) in enumerate(spans):
        demand = 0.15 + 0.9 * diurnal + rng.normal(0, 0.05, n)
        cpu = np.clip(demand, 0.01, 1.0)                            # the 1-core limit
        throttled = np.round(np.clip(demand - 1.0, 0, None), 6)
        mem = 180 * MI + 40 * MI * diurnal + rng.normal(0, 2 * MI, n)
        app_cpu, app_mem = life_arrays(first, last, cpu, mem)
        thr = np.full(n, np.nan)
        thr[first:last] = throttled[first:last]
        app = GenContainer("app", app_cpu, app_mem, requests={"cpu": 250, "memory": 256 * MI},
                           limits={"cpu": 1000, "memory": 512 * MI}, throttled=thr, image="registry.example/web:2.1")
        p_cpu, p_mem = life_arrays(first, last, 0.02 + 0.05 * diurnal + rng.normal(0, 0.003, n),
                                   50 * MI + rng.normal(0, MI, n))
        proxy = GenContainer("istio-proxy", p_cpu, p_mem, requests={"cpu": 50, "memory": 64 * MI},
                             limits={"memory": 128 * MI}, image="docker.io/istio/proxyv2:1.22.0")
        pods.append(GenPod("shop", f"{rs}-{_suffix(rng)}", "ReplicaSet", rs, f"node-{'ab'[i % 2]}", first, last,
                           [app, proxy], replicaset_owner=("Deployment", "web")))

    # StatefulSet db: db-0 with an unexplained CPU counter reset, db-1 with a 30-minute gap
    for i in range(2):
        cpu = np.clip(0.3 + 0.4 * diurnal + rng.normal(0, 0.03, n), 0.01, None)
        mem = 700 * MI + 300 * MI * (j / n) + rng.normal(0, 5 * MI, n)
        c, m = life_arrays(0, n - 1, cpu, mem)
        pg = GenContainer("postgres", c, m, requests={"cpu": 500, "memory": 1024 * MI},
                          limits={"memory": 2048 * MI}, image="docker.io/library/postgres:16")
        if i == 0:
            pg.cpu_resets_at = [int(n * 2.5 / 7)]
        pod = GenPod("shop", f"db-{i}", "StatefulSet", "db", "node-c", 0, n - 1, [pg])
        if i == 1:
            a = int(n * 3.5 / 7)
            pod.gaps = [(a, a + int(0.5 * per_hour))]
        pods.append(pod)

    # Deployment worker: leaks memory to its 300Mi limit and is OOM-killed; one other restart
    limit = 300 * MI
    mem = np.empty(n)
    ooms: list[int] = []
    errors: list[int] = []
    level = 100 * MI
    error_at = int(0.6 * n)
    since = 0
    for k in range(n):
        mem[k] = level
        since += 1
        if k >= error_at and not errors and since > 10:
            errors.append(k)                               # killed for another reason
            level, since = 100 * MI, 0
        elif level >= limit - 2 * MI and since > 10:
            ooms.append(k)                                 # the peak at scrape k, killed before k + 1
            level, since = 100 * MI, 0
        else:
            level = min(level + rng.uniform(0.5, 1.0) * MI * (scrape / 300.0), limit - MI)
    cpu = np.clip(0.2 + 0.2 * diurnal + rng.normal(0, 0.02, n), 0.01, 0.5)
    c, m = life_arrays(0, n - 1, cpu, mem)
    worker = GenContainer("worker", c, m, requests={"cpu": 100, "memory": 200 * MI},
                          limits={"cpu": 500, "memory": limit}, oom_at=ooms, restarts_at=errors,
                          throttled=np.where(np.isnan(c), np.nan, 0.0), image="registry.example/worker:0.9")
    pods.append(GenPod("batch", f"worker-5f7b9c8d6-{_suffix(rng)}", "ReplicaSet", "worker-5f7b9c8d6", "node-b",
                       0, n - 1, [worker], replicaset_owner=("Deployment", "worker")))

    # CronJob report: a Job a day at 02:00, 30 minutes
    for day in range(int(days)):
        first = int((day * 24 + 2) * per_hour)
        last = first + int(0.5 * per_hour)
        if last >= n:
            break
        minute = int((START + first * scrape) // 60)
        c, m = life_arrays(first, last, np.clip(0.8 + rng.normal(0, 0.1, n), 0.05, None),
                           300 * MI + rng.normal(0, 10 * MI, n))
        job = f"report-{minute}"
        pods.append(GenPod("batch", f"{job}-{_suffix(rng)}", "Job", job, "node-c", first, last,
                           [GenContainer("report", c, m, requests={"cpu": 200, "memory": 128 * MI},
                                         image="registry.example/report:1.0")],
                           job_owner=("CronJob", "report")))

    # a bare pod for a few hours
    first = int(n * 2.2 / 7)
    last = min(n - 1, first + int(3 * per_hour))
    c, m = life_arrays(first, last, np.full(n, 0.001), np.full(n, 3 * MI))
    pods.append(GenPod("default", "debug", None, None, "node-a", first, last,
                       [GenContainer("shell", c, m, image="docker.io/library/busybox:1.36")]))
    return pods


__all__ = ["GenContainer", "GenPod", "JOBS", "PrometheusServer", "SCRAPE", "START", "backfill", "free_port",
           "have_prometheus", "start_prometheus", "week_of_pods", "write_openmetrics"]
