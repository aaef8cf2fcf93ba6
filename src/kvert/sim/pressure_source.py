"""Memory PSI of a simulated fleet's containers for the recommender's pressure observer
(``kvert.vpa.pressure``): what the kubelet Summary API would report (``MemoryStats.psi``,
the working set, the limit), read straight from the fleet's arrays at its last tick."""

from __future__ import annotations

import math

from kvert.kubelet.runtime.fleet import Fleet
from kvert.vpa.pressure import ContainerPressure


class FleetPressureSource:
    def __init__(self, fleet: Fleet) -> None:
        self.fleet = fleet

    async def container_pressure(self) -> list[ContainerPressure]:
        fleet = self.fleet
        fleet.advance()
        now = fleet.origin + fleet.k * fleet.tick
        rows = fleet.rows
        totals = fleet.pressure.rows
        out = []
        for slot in fleet.running().tolist():
            limit = float(rows.mem_limit[slot])
            if not math.isfinite(limit) or slot >= totals.total.shape[0]:
                continue
            pod = fleet.pods[int(rows.sandbox[slot])]
            out.append(ContainerPressure(pod.namespace, pod.name, pod.uid, fleet.owners[slot].config.name, now,
                                         int(totals.total[slot, 2]) // 1000, float(rows.memory[slot]), limit,
                                         float(rows.started[slot])))
        return out


__all__ = ["FleetPressureSource"]
