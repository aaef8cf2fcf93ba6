"""What a node exposes about its containers' usage:

* cAdvisor-style Prometheus metrics, as the kubelet serves them on ``/metrics/cadvisor``
  (text exposition format 0.0.4): ``container_cpu_usage_seconds_total``,
  ``container_memory_working_set_bytes``, ``container_oom_events_total``,
  ``container_cpu_cfs_periods_total``, ``container_cpu_cfs_throttled_periods_total``,
  ``container_cpu_cfs_throttled_seconds_total``, the PSI counters
  ``container_pressure_{cpu,memory,io}_{waiting,stalled}_seconds_total`` (``some`` and
  ``full`` totals, where the runtime reports PSI), the ``container_spec_*`` values applied
  and ``container_start_time_seconds``, labelled ``container``, ``id`` (the cgroup path),
  ``image``, ``name`` (the runtime's container id), ``namespace``, ``pod`` (and
  ``cpu="total"`` for cpu usage). Exited containers that the runtime still holds are
  included (cAdvisor drops them with their cgroup, which hides OOM kills; kvert keeps them
  so ``container_oom_events_total`` is useful); pass ``include_exited=False`` for the
  cAdvisor behaviour.
* ``metrics.k8s.io/v1beta1`` ``NodeMetrics`` / ``PodMetrics`` objects, as metrics-server
  builds them: cpu as a rate (nanocores, from two samples of the cumulative counter taken
  ``window`` apart, ``UsageTracker``), memory as the working set, quantities formatted like
  metrics-server's (``"250m"``/``"12345n"``, ``"1536Ki"``).

``kvert.api.prometheus.parse_exposition`` reads the text format back.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kvert.api.meta import format_time
from kvert.api.prometheus import exposition, parse_exposition
from kvert.api.prometheus import line as _line
from kvert.api.quantity import BINARY_SI, DECIMAL_SI, Quantity
from kvert.kubelet.cgroups import container_cgroup_path
from kvert.kubelet.config import format_duration
from kvert.kubelet.runtime.base import ContainerResources, ContainerStatus

METRICS_API_VERSION = "metrics.k8s.io/v1beta1"

# name -> (type, help), in the order written
METRICS = {
    "container_cpu_usage_seconds_total": ("counter", "Cumulative cpu time consumed in seconds."),
    "container_memory_working_set_bytes": ("gauge", "Current working set in bytes."),
    "container_oom_events_total": ("counter", "Count of out of memory events observed for the container"),
    "container_cpu_cfs_periods_total": ("counter", "Number of elapsed enforcement period intervals."),
    "container_cpu_cfs_throttled_periods_total": ("counter", "Number of throttled period intervals."),
    "container_cpu_cfs_throttled_seconds_total": ("counter", "Total time duration the container has been throttled."),
    "container_spec_cpu_shares": ("gauge", "CPU share of the container."),
    "container_spec_cpu_quota": ("gauge", "CPU quota of the container."),
    "container_spec_cpu_period": ("gauge", "CPU period of the container."),
    "container_spec_memory_limit_bytes": ("gauge", "Memory limit for the container."),
    "container_start_time_seconds": ("gauge", "Start time of the container since unix epoch in seconds."),
    # cAdvisor's PressureMetrics (KEP-4205): ``some`` is "waiting", ``full`` is "stalled"
    **{f"container_pressure_{resource}_{kind}_seconds_total": ("counter", help_text)
       for resource, label in (("cpu", "CPU"), ("memory", "memory"), ("io", "IO"))
       for kind, help_text in (
           ("stalled", f"Total time duration no tasks in the container could make progress due to {label} congestion."),
           ("waiting", f"Total time duration tasks in the container have waited due to {label} congestion."))},
    "machine_cpu_cores": ("gauge", "Number of logical CPU cores."),
    "machine_memory_bytes": ("gauge", "Amount of memory installed on the machine."),
}


@dataclass(frozen=True)
class ContainerSample:
    """One container as the metrics see it: who it belongs to and the runtime's status."""
    namespace: str
    pod: str
    container: str
    image: str
    status: ContainerStatus
    cgroup: str = ""           # the ``id`` label; default "/" + the container id


def container_sample(pod: Mapping[str, Any], status: ContainerStatus, *, image: str | None = None,
                     cgroup_driver: str = "cgroupfs") -> ContainerSample:
    """A ContainerSample for a container of ``pod`` (image from the pod spec unless given)."""
    meta = pod.get("metadata") or {}
    if image is None:
        spec = pod.get("spec") or {}
        image = next((c.get("image", "") for key in ("containers", "initContainers", "ephemeralContainers")
                      for c in spec.get(key) or [] if c.get("name") == status.name), "")
    return ContainerSample(namespace=meta.get("namespace", ""), pod=meta.get("name", ""), container=status.name,
                           image=image, status=status,
                           cgroup=container_cgroup_path(pod, status.id, cgroup_driver))


# -- exposition ------------------------------------------------------------------------------------

def cadvisor_metrics(samples: Iterable[ContainerSample], *, timestamp: float | None = None,
                     include_exited: bool = True, machine_cpu_cores: int | None = None,
                     machine_memory_bytes: int | None = None) -> str:
    """The Prometheus text exposition of the containers' cAdvisor metrics. ``timestamp``
    (seconds) is written on every sample in milliseconds, as cAdvisor does."""
    ts = None if timestamp is None else int(round(timestamp * 1000))
    rows: dict[str, list[str]] = {name: [] for name in METRICS}
    for s in samples:
        st = s.status
        if not include_exited and st.state != "running":
            continue
        labels = {"container": s.container, "id": s.cgroup or f"/{st.id}", "image": s.image,
                  "name": st.id, "namespace": s.namespace, "pod": s.pod}
        rows["container_cpu_usage_seconds_total"].append(
            _line("container_cpu_usage_seconds_total", {**labels, "cpu": "total"},
                  st.cpu_usage_core_nanoseconds / 1e9, ts))
        rows["container_memory_working_set_bytes"].append(
            _line("container_memory_working_set_bytes", labels, st.memory_working_set_bytes, ts))
        rows["container_oom_events_total"].append(_line("container_oom_events_total", labels, st.oom_events, ts))
        rows["container_cpu_cfs_periods_total"].append(
            _line("container_cpu_cfs_periods_total", labels, st.cpu_periods, ts))
        rows["container_cpu_cfs_throttled_periods_total"].append(
            _line("container_cpu_cfs_throttled_periods_total", labels, st.cpu_throttled_periods, ts))
        rows["container_cpu_cfs_throttled_seconds_total"].append(
            _line("container_cpu_cfs_throttled_seconds_total", labels, st.cpu_throttled_nanoseconds / 1e9, ts))
        linux = st.resources.linux if st.resources is not None else None
        if linux is not None:
            rows["container_spec_cpu_shares"].append(_line("container_spec_cpu_shares", labels, linux.cpu_shares, ts))
            if linux.cpu_quota > 0:
                rows["container_spec_cpu_quota"].append(
                    _line("container_spec_cpu_quota", labels, linux.cpu_quota, ts))
            rows["container_spec_cpu_period"].append(_line("container_spec_cpu_period", labels, linux.cpu_period, ts))
            rows["container_spec_memory_limit_bytes"].append(
                _line("container_spec_memory_limit_bytes", labels, linux.memory_limit_in_bytes, ts))
        for resource in ("cpu", "memory", "io"):
            stats = getattr(st.pressure, resource) if st.pressure is not None else None
            if stats is not None:     # totals are microseconds: cAdvisor's asMicrosecondsToSeconds
                for kind, data in (("stalled", stats.full), ("waiting", stats.some)):
                    name = f"container_pressure_{resource}_{kind}_seconds_total"
                    rows[name].append(_line(name, labels, data.total / 1e6, ts))
        if st.started_at:
            rows["container_start_time_seconds"].append(
                _line("container_start_time_seconds", labels, st.started_at, ts))
    if machine_cpu_cores is not None:
        rows["machine_cpu_cores"].append(_line("machine_cpu_cores", {}, machine_cpu_cores, ts))
    if machine_memory_bytes is not None:
        rows["machine_memory_bytes"].append(_line("machine_memory_bytes", {}, machine_memory_bytes, ts))
    out = []
    for name, lines in rows.items():
        if not lines:
            continue
        kind, help_text = METRICS[name]
        out.append(f"# HELP {name} {help_text}")
        out.append(f"# TYPE {name} {kind}")
        out.extend(lines)
    return "\n".join(out) + ("\n" if out else "")


# -- metrics.k8s.io ------------------------------------------------------------------------------------

def cpu_quantity(nanocores: int) -> str:
    """Nanocores as metrics-server writes them (``250000000`` -> ``"250m"``)."""
    return str(Quantity(int(nanocores), DECIMAL_SI))


def memory_quantity(size: int) -> str:
    """Bytes as metrics-server writes them (binary: ``1572864`` -> ``"1536Ki"``)."""
    return str(Quantity.from_int(int(size), BINARY_SI))


def pod_metrics(pod: Mapping[str, Any], usages: Mapping[str, tuple[int, int]], *, timestamp: float,
                window: float) -> dict:
    """A ``PodMetrics`` object: ``usages`` maps container name -> (cpu nanocores, memory bytes);
    containers are listed in spec order (those without usage are left out)."""
    meta = pod.get("metadata") or {}
    spec = pod.get("spec") or {}
    names = [c.get("name") for key in ("initContainers", "containers") for c in spec.get(key) or []]
    names += [n for n in usages if n not in names]
    out_meta: dict[str, Any] = {"name": meta.get("name", ""), "namespace": meta.get("namespace", ""),
                                "creationTimestamp": format_time(timestamp)}
    if meta.get("labels"):
        out_meta["labels"] = dict(meta["labels"])
    return {
        "kind": "PodMetrics", "apiVersion": METRICS_API_VERSION, "metadata": out_meta,
        "timestamp": format_time(timestamp), "window": format_duration(window),
        "containers": [{"name": n, "usage": {"cpu": cpu_quantity(usages[n][0]),
                                             "memory": memory_quantity(usages[n][1])}}
                       for n in names if n in usages],
    }


def node_metrics(node_name: str, cpu_nanocores: int, memory_bytes: int, *, timestamp: float, window: float,
                 labels: Mapping[str, str] | None = None) -> dict:
    """A ``NodeMetrics`` object."""
    meta: dict[str, Any] = {"name": node_name, "creationTimestamp": format_time(timestamp)}
    if labels:
        meta["labels"] = dict(labels)
    return {"kind": "NodeMetrics", "apiVersion": METRICS_API_VERSION, "metadata": meta,
            "timestamp": format_time(timestamp), "window": format_duration(window),
            "usage": {"cpu": cpu_quantity(cpu_nanocores), "memory": memory_quantity(memory_bytes)}}


@dataclass(frozen=True)
class Rate:
    cpu_nanocores: int
    memory_bytes: int
    window: float


class UsageTracker:
    """Keeps the last sample of each container's cumulative cpu to turn it into a rate,
    as metrics-server does with two scrapes."""

    def __init__(self) -> None:
        self._last: dict[str, tuple[float, int]] = {}

    def observe(self, now: float, statuses: Iterable[ContainerStatus]) -> dict[str, Rate]:
        """Record a sample of every running container; return the rate of those that have an
        earlier sample (by container id). Containers no longer listed are forgotten."""
        rates: dict[str, Rate] = {}
        seen: dict[str, tuple[float, int]] = {}
        for st in statuses:
            if st.state != "running":
                continue
            seen[st.id] = (now, st.cpu_usage_core_nanoseconds)
            prev = self._last.get(st.id)
            if prev is None or now <= prev[0]:
                continue
            window = now - prev[0]
            nanocores = max(0, round((st.cpu_usage_core_nanoseconds - prev[1]) / window))
            rates[st.id] = Rate(nanocores, st.memory_working_set_bytes, window)
        self._last = seen
        return rates


def node_summary(node_name: str, pods: Sequence[tuple[Mapping[str, Any], Sequence[ContainerStatus]]],
                 tracker: UsageTracker, now: float, *, system_memory_bytes: int = 0,
                 system_cpu_nanocores: int = 0, labels: Mapping[str, str] | None = None
                 ) -> tuple[dict | None, list[dict]]:
    """(NodeMetrics, [PodMetrics]) from the pods on a node with their containers' statuses.
    Pods report only once every container has a rate (two samples), as metrics-server;
    the node reports once any container does, adding the system daemons' usage. Before
    that, the NodeMetrics is None."""
    all_statuses = [st for _, statuses in pods for st in statuses]
    rates = tracker.observe(now, all_statuses)
    pod_objs = []
    windows = [r.window for r in rates.values()]
    for pod, statuses in pods:
        running = [st for st in statuses if st.state == "running"]
        if not running or any(st.id not in rates for st in running):
            continue
        usages = {st.name: (rates[st.id].cpu_nanocores, rates[st.id].memory_bytes) for st in running}
        window = max(rates[st.id].window for st in running)
        pod_objs.append(pod_metrics(pod, usages, timestamp=now, window=window))
    if not windows:
        return None, pod_objs
    cpu = sum(r.cpu_nanocores for r in rates.values()) + system_cpu_nanocores
    memory = sum(st.memory_working_set_bytes for st in all_statuses if st.state == "running") + system_memory_bytes
    return node_metrics(node_name, cpu, memory, timestamp=now, window=max(windows), labels=labels), pod_objs


def resource_metrics(pods: Sequence[tuple[Mapping[str, Any], Sequence[ContainerStatus]]]) -> str:
    """The kubelet's ``/metrics/resource`` (what metrics-server scrapes): cumulative cpu
    seconds and working sets of the running containers, their pods and the node."""
    containers, pod_cpu, pod_memory = [], [], []
    node_cpu = node_memory = 0
    for pod, statuses in pods:
        meta = pod.get("metadata") or {}
        ids = {"namespace": meta.get("namespace", ""), "pod": meta.get("name", "")}
        running = [st for st in statuses if st.state == "running"]
        for st in running:
            containers.append(({"container": st.name, **ids}, st))
        if running:
            pod_cpu.append((ids, sum(st.cpu_usage_core_nanoseconds for st in running) / 1e9))
            pod_memory.append((ids, sum(st.memory_working_set_bytes for st in running)))
        node_cpu += sum(st.cpu_usage_core_nanoseconds for st in running)
        node_memory += sum(st.memory_working_set_bytes for st in running)
    return exposition([
        ("container_cpu_usage_seconds_total", "counter",
         "[STABLE] Cumulative cpu time consumed by the container in core-seconds",
         [(labels, st.cpu_usage_core_nanoseconds / 1e9) for labels, st in containers]),
        ("container_memory_working_set_bytes", "gauge",
         "[STABLE] Current working set of the container in bytes",
         [(labels, st.memory_working_set_bytes) for labels, st in containers]),
        ("container_start_time_seconds", "gauge",
         "[STABLE] Start time of the container since unix epoch in seconds",
         [(labels, st.started_at) for labels, st in containers]),
        ("node_cpu_usage_seconds_total", "counter",
         "[STABLE] Cumulative cpu time consumed by the node in core-seconds", [({}, node_cpu / 1e9)]),
        ("node_memory_working_set_bytes", "gauge",
         "[STABLE] Current working set of the node in bytes", [({}, node_memory)]),
        ("pod_cpu_usage_seconds_total", "counter",
         "[STABLE] Cumulative cpu time consumed by the pod in core-seconds", pod_cpu),
        ("pod_memory_working_set_bytes", "gauge",
         "[STABLE] Current working set of the pod in bytes", pod_memory),
        ("resource_scrape_error", "gauge",
         "[STABLE] 1 if there was an error while getting container metrics, 0 otherwise", [({}, 0)]),
    ])


def parse_resource_metrics(text: str) -> dict[tuple[str, str], list[ContainerStatus]]:
    """``/metrics/resource`` back into running container statuses by (namespace, pod), as
    metrics-server reads it (cpu seconds to core-nanoseconds)."""
    cpu: dict[tuple[str, str, str], int] = {}
    memory: dict[tuple[str, str, str], int] = {}
    for sample in parse_exposition(text):
        key = (sample.labels.get("namespace", ""), sample.labels.get("pod", ""), sample.labels.get("container", ""))
        if sample.name == "container_cpu_usage_seconds_total":
            cpu[key] = round(sample.value * 1e9)
        elif sample.name == "container_memory_working_set_bytes":
            memory[key] = int(sample.value)
    out: dict[tuple[str, str], list[ContainerStatus]] = {}
    for key in cpu.keys() & memory.keys():
        namespace, pod, container = key
        out.setdefault((namespace, pod), []).append(ContainerStatus(
            id="/".join(key), name=container, state="running", resources=ContainerResources(),
            cpu_usage_core_nanoseconds=cpu[key], memory_working_set_bytes=memory[key]))
    return out


__all__ = [
    "ContainerSample", "METRICS", "METRICS_API_VERSION", "Rate", "UsageTracker",
    "cadvisor_metrics", "container_sample", "cpu_quantity", "memory_quantity", "node_metrics",
    "node_summary", "parse_resource_metrics", "pod_metrics", "resource_metrics",
]
