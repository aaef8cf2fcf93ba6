"""PSI-driven memory upsizing, after VPA AEP-9926 ("Reactive Memory Pressure Detection"),
opt-in per VPA with the annotation ``vpa.kvert.io/memory-pressure-upsize: "true"``.

The AEP's rule, with its defaults: the recommender reads each opted-in container's memory PSI
from the kubelet Summary API (``MemoryStats.psi.some.total``, microseconds) every poll; a
*window* is two fresh samples, its *stall rate* ``delta(some.total) / delta(time)``. When the
stall rate exceeds ``stall_ratio`` (0.10) and the working set is at least
``working_set_fraction`` (0.90) of the container's memory limit over two consecutive windows
(three samples), the recommender adds a *pressure peak* to the container's memory histogram,
``max(used + 64Mi, used * 1.15)`` of ``used = max(working set, the interval's peak)``, which
replaces the current interval's peak only if higher (``AggregateContainerState.record_pressure``).
Then the container is quiet for ``cooldown`` (10 min) and needs two fresh windows again.
A baseline starts anew on a gap longer than two polls, a new container (pod uid), a changed
limit or a counter that went backwards; a rate above ``1 + 1s/dt`` (a nanosecond counter) is
discarded. A container younger than the startup grace (60 s) emits nothing.

kvert carries over the detection and the sample injection. It leaves out the AEP's
``lastPressureTime`` status field and the updater's quick-pressure path (the in-place update
inside a window that bypasses the pod-lifetime gate): kvert's updater applies the raised
target under its usual gates, which for a target above the upper bound is at once. The opt-in
is an annotation on the VPA object rather than the AEP's ``pressureDetection: Enabled``
container policy, which is not in the served VPA API.

Where the samples come from (a ``PressureSource``): ``SummaryPressureSource`` over the
kubelet Summary API of every node, fetched through the API server's node proxy
(``GET /api/v1/nodes/{node}/proxy/stats/summary``, the AEP's ``apiserver-proxy`` transport,
which needs ``get nodes/proxy``) or from in-process node summaries; the simulator reads its
fleet's arrays (``kvert.sim.pressure_source``).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from kvert.api.meta import parse_time
from kvert.vpa.recommendation import container_policy, scaling_disabled

log = logging.getLogger(__name__)

ANNOTATION = "vpa.kvert.io/memory-pressure-upsize"
MI = 2**20


def pressure_upsize_enabled(vpa: Mapping[str, Any] | None) -> bool:
    """Whether the VPA opted in (the annotation is ``"true"``, any case)."""
    annotations = ((vpa or {}).get("metadata") or {}).get("annotations") or {}
    return str(annotations.get(ANNOTATION, "")).strip().lower() == "true"


@dataclass(frozen=True)
class PressureConfig:
    """AEP-9926's flags and constants, with its defaults."""
    stall_ratio: float = 0.10               # --pressure-stall-ratio
    working_set_fraction: float = 0.90      # --pressure-working-set-fraction
    bump_up_ratio: float = 1.15             # --pressure-bump-up-ratio
    min_bump_up_bytes: float = 64 * MI      # --pressure-min-bump-up-bytes
    poll_interval: float = 60.0
    startup_grace: float = 60.0
    cooldown: float = 600.0
    windows: int = 2


@dataclass(frozen=True)
class ContainerPressure:
    """One container's sample from a node's Summary."""
    namespace: str
    pod: str
    uid: str
    container: str
    time: float                  # seconds
    some_total_us: int           # MemoryStats.psi.some.total
    working_set: float           # bytes
    limit: float                 # bytes (0: none)
    start_time: float = 0.0


@dataclass
class _Track:
    time: float
    total: int
    uid: str
    limit: float
    windows: int = 0
    quiet_until: float = float("-inf")


@dataclass
class PressureDetector:
    """The AEP's detection rule over successive samples, per container."""
    config: PressureConfig = field(default_factory=PressureConfig)
    _tracks: dict[tuple[str, str, str], _Track] = field(default_factory=dict)

    def observe(self, s: ContainerPressure) -> bool:
        """Whether this sample completes the windows that ask for a pressure peak."""
        cfg = self.config
        key = (s.namespace, s.pod, s.container)
        prev = self._tracks.get(key)
        if prev is None or prev.uid != s.uid or prev.limit != s.limit or s.some_total_us < prev.total \
                or s.time - prev.time > 2 * cfg.poll_interval:
            quiet = prev.quiet_until if prev is not None else float("-inf")   # a reset never shortens a cooldown
            self._tracks[key] = _Track(s.time, s.some_total_us, s.uid, s.limit, quiet_until=quiet)
            return False
        dt = s.time - prev.time
        if dt <= 0:
            return False
        rate = (s.some_total_us - prev.total) / 1e6 / dt
        if rate > 1.0 + 1.0 / dt:        # not microseconds: discard and start again
            self._tracks[key] = _Track(s.time, s.some_total_us, s.uid, s.limit, quiet_until=prev.quiet_until)
            return False
        hot = rate > cfg.stall_ratio and s.limit > 0 and s.working_set >= cfg.working_set_fraction * s.limit
        prev.time, prev.total = s.time, s.some_total_us
        if s.time < prev.quiet_until:
            prev.windows = 0
            return False
        prev.windows = prev.windows + 1 if hot else 0
        if prev.windows < cfg.windows or s.time - s.start_time < cfg.startup_grace:
            return False
        prev.windows = 0
        prev.quiet_until = s.time + cfg.cooldown
        return True

    def release(self, s: ContainerPressure) -> None:
        """The peak was not recorded: no cooldown for an injection that never happened."""
        track = self._tracks.get((s.namespace, s.pod, s.container))
        if track is not None:
            track.quiet_until = float("-inf")

    def forget(self, keep: set[tuple[str, str, str]]) -> None:
        for key in [k for k in self._tracks if k not in keep]:
            del self._tracks[key]


class PressureSource(Protocol):
    async def container_pressure(self) -> list[ContainerPressure]: ...


def summary_pressure(summary: Mapping[str, Any]) -> list[ContainerPressure]:
    """The containers of a Summary (``/stats/summary``) that report memory PSI under a limit
    (``availableBytes`` is the limit less the working set; without it there is no limit)."""
    out = []
    for pod in summary.get("pods") or []:
        ref = pod.get("podRef") or {}
        for c in pod.get("containers") or []:
            memory = c.get("memory") or {}
            psi = (memory.get("psi") or {}).get("some")
            if psi is None or "workingSetBytes" not in memory:
                continue
            try:
                when = parse_time(memory.get("time"))
                started = parse_time(c.get("startTime")) if c.get("startTime") else 0.0
            except (TypeError, ValueError):
                continue
            ws = float(memory["workingSetBytes"])
            limit = ws + float(memory["availableBytes"]) if "availableBytes" in memory else 0.0
            out.append(ContainerPressure(ref.get("namespace", ""), ref.get("name", ""), ref.get("uid", ""),
                                         c.get("name", ""), when, int(psi.get("total", 0)), ws, limit, started))
    return out


class PathReader(Protocol):
    async def get_path(self, path: str) -> dict[str, Any]: ...


class SummaryPressureSource:
    """Summaries of the nodes ``nodes()`` names, each read by ``fetch(node)`` (e.g. through
    the API server's node proxy: ``proxy_fetcher``); a node that fails is skipped."""

    def __init__(self, nodes: Callable[[], Awaitable[list[str]]],
                 fetch: Callable[[str], Awaitable[Mapping[str, Any] | None]]) -> None:
        self.nodes = nodes
        self.fetch = fetch

    async def container_pressure(self) -> list[ContainerPressure]:
        out: list[ContainerPressure] = []
        for node in await self.nodes():
            try:
                summary = await self.fetch(node)
            except Exception:  # noqa: BLE001 - one node's failure clears only its samples
                log.warning("reading the summary of node %s failed", node, exc_info=True)
                continue
            if summary is not None:
                out.extend(summary_pressure(summary))
        return out


def proxy_fetcher(client: PathReader) -> Callable[[str], Awaitable[Mapping[str, Any] | None]]:
    """``fetch(node)`` through ``/api/v1/nodes/{node}/proxy/stats/summary``."""
    async def fetch(node: str) -> Mapping[str, Any] | None:
        return await client.get_path(f"/api/v1/nodes/{node}/proxy/stats/summary")
    return fetch


class PressureStore(Protocol):
    """Where peaks go (``kvert.vpa.aggregate.AggregateStore``)."""

    def get_for_vpa(self, vpa: Mapping, container: str, now: float = 0.0) -> Any: ...


@dataclass
class PressureObserver:
    """Reads ``source`` each recommender loop and files pressure peaks for opted-in VPAs."""
    source: PressureSource
    config: PressureConfig = field(default_factory=PressureConfig)
    detector: PressureDetector = field(default_factory=PressureDetector)
    accepted: int = 0
    rejected: int = 0

    def __post_init__(self) -> None:
        self.detector.config = self.config

    async def file(self, vpas: Mapping[Any, Mapping[str, Any]], filed_under: Mapping[tuple[str, str], Any],
                   store: PressureStore, now: float) -> int:
        """Observe every opted-in container once; the peaks recorded."""
        if not any(pressure_upsize_enabled(v) for v in vpas.values()):
            return 0
        recorded = 0
        seen: set[tuple[str, str, str]] = set()
        for s in await self.source.container_pressure():
            vkey = filed_under.get((s.namespace, s.pod))
            vpa = vpas.get(vkey) if vkey is not None else None
            if vpa is None or not pressure_upsize_enabled(vpa) or scaling_disabled(container_policy(vpa, s.container)):
                continue
            seen.add((s.namespace, s.pod, s.container))
            if not self.detector.observe(s):
                continue
            agg = store.get_for_vpa(vpa, s.container, now)
            if agg.record_pressure(s.pod, s.time, s.working_set, self.config.bump_up_ratio,
                                   self.config.min_bump_up_bytes):
                recorded += 1
                log.info("memory pressure of %s/%s container %s: peak recorded", s.namespace, s.pod, s.container)
            else:
                self.rejected += 1
                self.detector.release(s)
        self.detector.forget(seen)
        self.accepted += recorded
        return recorded


__all__ = ["ANNOTATION", "ContainerPressure", "PressureConfig", "PressureDetector", "PressureObserver",
           "PressureSource", "SummaryPressureSource", "proxy_fetcher", "pressure_upsize_enabled",
           "summary_pressure"]
