"""Pod usage read straight from a simulated fleet's arrays, for the VPA recommender.

What metrics-server would report, without formatting and parsing it on the way: cpu as the
rate of the cumulative core-nanoseconds between two scrapes (a container reports from its
second scrape on), the working set at the scrape: ``usage_table()``, the columns the
recommender files.
"""

from __future__ import annotations

from typing import Any

import numpy as np


class FleetMetricsSource:
    def __init__(self, fleet: Any) -> None:
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


__all__ = ["FleetMetricsSource"]
