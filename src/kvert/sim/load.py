"""Load shared by a workload's replicas: what a horizontal autoscaler needs to be simulated.

A container's usage profile (``kvert.io/usage``) says what *one* container uses, whatever
the number of replicas: adding pods would not relieve anyone. A workload whose scenario
says ``sharedUsage: [cpu]`` (or ``[cpu, memory]``) declares instead the load of the whole
workload, as a load balancer in front of its replicas would spread it: each running pod's
container gets its profile divided by the number of running pods, so an HPA that adds
replicas lowers the use of each, and removing replicas raises it.

``SharedLoad`` keeps that true: just before every tick of the fleet (when the set of running
containers changed since the last look) it counts the running pods of each such workload
and gives every container of them its template profile scaled by ``1 / running pods``
(``SimRuntime.set_profile``; noise and seeds kept, so the replicas still differ). A pod
that started since the last tick is included before that tick is computed, so the total
over the replicas is the declared profile at every tick (a pod that starts within the last
``EPSILON`` seconds before a tick runs that one tick unscaled).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from kvert.kubelet.runtime.fleet import Fleet
from kvert.kubelet.usage import Constant, ContainerUsage, Diurnal, Linear, Profile, Spikes

SHAREABLE = ("cpu", "memory")
# how long before each tick the running pods are counted
EPSILON = 1e-3
# the amounts of each profile (what scales with the share)
_AMOUNTS: dict[type, tuple[str, ...]] = {Constant: ("value",), Diurnal: ("min", "max"), Spikes: ("base", "peak"),
                                         Linear: ("start", "rate", "max")}


def scale_profile(profile: Profile, factor: float) -> Profile:
    """``profile`` with its amounts multiplied by ``factor`` (durations, noise, seed kept)."""
    fields = _AMOUNTS.get(type(profile))
    if fields is None:
        raise ValueError(f"cannot share a {type(profile).__name__} profile")
    return dataclasses.replace(profile, **{f: getattr(profile, f) * factor for f in fields
                                          if getattr(profile, f) is not None})


def scale_usage(usage: ContainerUsage, resources: tuple[str, ...], factor: float) -> ContainerUsage:
    """``usage`` with the ``resources`` it uses multiplied by ``factor``."""
    if usage.replay is not None:
        replay = usage.replay
        # field name -> value: the fields are named at run time
        replay_changes: dict[str, Any] = {r: tuple(v * factor for v in getattr(replay, r)) for r in resources}
        return dataclasses.replace(usage, replay=dataclasses.replace(replay, **replay_changes))
    profile_changes: dict[str, Any] = {r: scale_profile(getattr(usage, r), factor) for r in resources}
    return dataclasses.replace(usage, **profile_changes)


class SharedLoad:
    """Splits the declared usage of the workloads in ``shared`` (workload name -> the
    resources shared) evenly among their running pods; ``workload_of_pod`` maps (namespace,
    pod name) to a workload name (the run's pod tracker fills it)."""

    def __init__(self, fleet: Fleet, shared: dict[str, tuple[str, ...]], workload_of_pod: dict[tuple[str, str], str]):
        self.fleet = fleet
        self.shared = shared
        self.workload_of_pod = workload_of_pod
        self._seen: Any = None                               # the fleet's running set at the last look
        self._applied: dict[int, tuple[ContainerUsage, int]] = {}   # row serial -> (template usage, share)
        self.changes = 0                                     # profiles replaced (what it cost)

    async def run(self) -> None:
        fleet = self.fleet
        clock = fleet.clock
        k = max(0, int(np.floor((clock.now() - fleet.origin) / fleet.tick)))
        while True:
            k += 1
            await clock.sleep(max(0.0, fleet.origin + k * fleet.tick - EPSILON - clock.now()))
            self.balance()

    def balance(self) -> None:
        """Give every running container of a shared workload its part of the load."""
        fleet = self.fleet
        idx = fleet.running()
        if idx is self._seen:
            return
        self._seen = idx
        rows = fleet.rows
        members: dict[str, list[int]] = {}
        for slot in idx.tolist():
            pod = fleet.pods.get(int(rows.sandbox[slot]))
            w = None if pod is None else self.workload_of_pod.get((pod.namespace, pod.name))
            if w is None:
                self._seen = None          # a pod not known yet: look again before the next tick
            elif w in self.shared:
                members.setdefault(w, []).append(slot)
        live: set[int] = set()
        for w, slots in members.items():
            n = len({int(rows.sandbox[s]) for s in slots})
            for slot in slots:
                container = fleet.owners[slot]
                serial = int(rows.serial[slot])
                live.add(serial)
                template, share = self._applied.get(serial, (container.usage, 1))
                if share == n:
                    continue
                usage = scale_usage(template, self.shared[w], 1.0 / n)
                fleet.runtimes[int(rows.node[slot])].set_profile(container.id, usage)
                self._applied[serial] = (template, n)
                self.changes += 1
        for serial in set(self._applied) - live:
            del self._applied[serial]


__all__ = ["EPSILON", "SHAREABLE", "SharedLoad", "scale_profile", "scale_usage"]
