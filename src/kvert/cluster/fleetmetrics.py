"""Pod usage read straight from a simulated fleet's arrays, for the VPA recommender and the
HPA controller.

What metrics-server would report, without formatting and parsing it on the way: cpu as the
rate of the cumulative core-nanoseconds between two scrapes (a container reports from its
second scrape on), the working set at the scrape: ``FleetMetricsSource.usage_table()``, the
columns the recommender files. ``FleetPodMetrics.pod_metrics(namespace)`` gives the HPA
controller the metrics.k8s.io ``PodMetrics`` objects metrics-server would serve, scraped at
most every ``resolution`` seconds.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from kvert.kubelet.runtime.fleet import Fleet


class PodReader(Protocol):
    """What the HPA's pod metrics read pods through (an informer, a cache)."""

    def get(self, name: str, namespace: str = "") -> dict[str, Any] | None: ...


class FleetMetricsSource:
    def __init__(self, fleet: Fleet) -> None:
        self.fleet = fleet
        self._serial = np.zeros(0, dtype=np.int64)       # slot -> container serial at the last scrape
        self._cpu_ns = np.zeros(0, dtype=np.int64)
        self._time = np.zeros(0)
        self._keys: dict[int, tuple[int, tuple[str, str, str]]] = {}    # slot -> (serial, key)
        self._reported = np.zeros(0, dtype=np.int64)      # serials of the last table
        self._table_keys: list[tuple[str, str, str]] = []
        self.generation = 0

    def _scrape(self) -> tuple[float, np.ndarray, np.ndarray, np.ndarray]:
        """(now, slots with a rate, cores, working-set bytes)."""
        fleet = self.fleet
        fleet.advance()
        now = fleet.clock.now()
        rows = fleet.rows
        if self._serial.size < rows.capacity:
            grow = rows.capacity - self._serial.size
            self._serial = np.concatenate([self._serial, np.zeros(grow, dtype=np.int64)])
            self._cpu_ns = np.concatenate([self._cpu_ns, np.zeros(grow, dtype=np.int64)])
            self._time = np.concatenate([self._time, np.zeros(grow)])
        idx = fleet.running()
        serial, cpu_ns = rows.serial[idx], rows.cpu_ns[idx]
        window = now - self._time[idx]
        rated = (self._serial[idx] == serial) & (window > 0)
        slots = idx[rated]
        cores = (cpu_ns[rated] - self._cpu_ns[slots]) / window[rated] / 1e9
        self._serial[idx], self._cpu_ns[idx], self._time[idx] = serial, cpu_ns, now
        return now, slots, cores, rows.memory[slots]

    def _key(self, slot: int) -> tuple[str, str, str]:
        rows = self.fleet.rows
        serial = int(rows.serial[slot])
        cached = self._keys.get(slot)
        if cached is None or cached[0] != serial:
            pod = self.fleet.pods[int(rows.sandbox[slot])]
            cached = (serial, (pod.namespace, pod.name, self.fleet.owners[slot].config.name))
            self._keys[slot] = cached
        return cached[1]

    async def usage_table(self) -> Any:
        from kvert.vpa.metrics_source import UsageTable
        now, slots, cores, memory = self._scrape()
        serials = self.fleet.rows.serial[slots]
        if not np.array_equal(serials, self._reported):
            self._reported = serials.copy()
            self._table_keys = [self._key(int(s)) for s in slots]
            self.generation += 1
        return UsageTable(keys=self._table_keys, generation=self.generation, time=np.full(slots.size, now),
                          cpu=cores, memory=memory.astype(float))


class FleetPodMetrics:
    """metrics.k8s.io ``PodMetrics`` from the fleet, for the HPA controller
    (``settings={"horizontalpodautoscaling": {"metrics": FleetPodMetrics(...)}}``).

    As metrics-server: a scrape every ``resolution`` seconds at most (taken when asked, so
    nothing is computed while no HPA asks), cpu as the rate between the last two scrapes, the
    working set at the last one; a pod is reported once every running container of it has a
    rate, with the scrape's time as ``timestamp`` and the time since the previous one as
    ``window``. Times are the fleet's last processed tick, so a window holds whole ticks.
    The pods' labels (which the HPA's selector matches) and container order come from
    ``pods`` (anything with ``get(name, namespace)``, e.g. an informer), as metrics-server
    reads them from the API server; a pod it does not know is left out."""

    def __init__(self, fleet: Fleet, pods: PodReader | None = None, *, resolution: float = 15.0) -> None:
        self.fleet = fleet
        self.pods = pods
        self.resolution = float(resolution)
        self._serial = np.zeros(0, dtype=np.int64)       # slot -> container serial at the last scrape
        self._cpu_ns = np.zeros(0, dtype=np.int64)
        self._at: float | None = None                    # the tick time of the last scrape
        self._items: dict[str, list[dict]] = {}          # namespace -> PodMetrics of the last scrape
        self.scrapes = 0

    def _scrape(self) -> None:
        from kvert.kubelet.metrics import pod_metrics
        fleet = self.fleet
        fleet.advance()
        at = fleet.origin + fleet.k * fleet.tick
        if self._at is not None and at - self._at < self.resolution:
            return
        rows = fleet.rows
        if self._serial.size < rows.capacity:
            grow = rows.capacity - self._serial.size
            self._serial = np.concatenate([self._serial, np.zeros(grow, dtype=np.int64)])
            self._cpu_ns = np.concatenate([self._cpu_ns, np.zeros(grow, dtype=np.int64)])
        idx = fleet.running()
        serial, cpu_ns = rows.serial[idx], rows.cpu_ns[idx]
        window = 0.0 if self._at is None else at - self._at
        rated = (self._serial[idx] == serial) & (window > 0)
        nanocores = np.zeros(idx.size)
        nanocores[rated] = (cpu_ns[rated] - self._cpu_ns[idx[rated]]) / window
        self._serial[:] = 0
        self._serial[idx], self._cpu_ns[idx] = serial, cpu_ns
        self._at = at
        self.scrapes += 1
        # per pod: container -> (nanocores, bytes), or None once a running container has no rate
        usage: dict[int, dict[str, tuple[int, int]] | None] = {}
        sandboxes = rows.sandbox[idx]
        for j in range(idx.size):
            sandbox = int(sandboxes[j])
            found = usage.setdefault(sandbox, {})
            if found is None:
                continue
            if not rated[j]:
                usage[sandbox] = None
                continue
            found[self.fleet.owners[int(idx[j])].config.name] = (int(round(nanocores[j])),
                                                                int(rows.memory[idx[j]]))
        items: dict[str, list[dict]] = {}
        for sandbox, containers in usage.items():
            config = fleet.pods.get(sandbox)
            if not containers or config is None:
                continue
            pod = self.pods.get(config.name, config.namespace) if self.pods is not None else None
            if pod is None or (pod.get("metadata") or {}).get("uid", config.uid) != config.uid:
                continue
            items.setdefault(config.namespace, []).append(pod_metrics(pod, containers, timestamp=at, window=window))
        for listed in items.values():
            listed.sort(key=lambda m: m["metadata"]["name"])
        self._items = items

    def pod_metrics(self, namespace: str | None = None) -> list[dict]:
        self._scrape()
        if namespace:
            return list(self._items.get(namespace, ()))
        return [m for ns in sorted(self._items) for m in self._items[ns]]


__all__ = ["FleetMetricsSource", "FleetPodMetrics"]
