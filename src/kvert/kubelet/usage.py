"""Usage profiles: how much cpu and memory a simulated container uses over time.

A pod (or a pod template) says how its containers behave in the annotation
``kvert.io/usage``, a JSON object keyed by container name (``"*"`` applies to every
container not named)::

    {"app": {"cpu":    {"profile": "diurnal", "min": "100m", "max": "800m", "period": "24h"},
             "memory": {"profile": "linear", "start": "100Mi", "rate": "1Mi/min"}},
     "sidecar": {"cpu": "20m", "memory": "32Mi"},
     "job": {"cpu": "500m", "memory": "64Mi", "exitAfter": "10m", "exitCode": 0},
     "trace": {"replay": {"samples": [[0, "100m", "100Mi"], ["1h", "400m", "180Mi"]],
                          "interpolation": "linear", "loop": true}}}

Per container: ``cpu`` and ``memory`` (each a profile, below), or ``replay`` (both from one
trace), or ``series`` (the name of a workload whose recorded usage a simulation's trace bank
holds: ``kvert.kubelet.runtime.tracebank``; both resources, per replica); optionally
``exitAfter`` (a duration: the process exits that long after it starts) and ``exitCode``
(default 0); ``disk`` (a memory-like profile: bytes written to the container's writable
layer and logs, for the node's ``nodefs`` signals; default 0), ``logs`` (a memory-like
profile too: the bytes the container has written to its log so far, so a flood is
``{"profile": "linear", "start": 0, "rate": "50Mi/s"}``; the node's disk holds what its
log rotation keeps of them, ``containerLogMaxSize`` x ``containerLogMaxFiles`` at most,
and they count in the container's ephemeral storage) and ``pids`` (processes it
runs, for ``pid.available``; default 1). A profile is a bare quantity (constant) or an
object with ``profile`` and its parameters. Quantities are Kubernetes quantities (cpu ``"250m"`` or
``0.25``; memory ``"128Mi"``); durations are Go durations (``"90s"``, ``"1h30m"``), a
number of seconds, or days (``"2d"``). Profiles:

``constant``  ``value``.
``diurnal``   ``min``, ``max``, ``period`` (default ``24h``), ``phase`` (default 0): a
              sinusoid, ``min + (max-min) * (1 - cos(2*pi*(t+phase)/period)) / 2``; at
              ``t + phase = 0`` it is at ``min``, half a period later at ``max``.
``spikes``    ``base``, ``peak``, ``every``, ``duration``, ``offset`` (default 0): ``peak``
              during ``[offset + k*every, offset + k*every + duration)``, else ``base``.
``linear``    ``start``, ``rate`` (``"1Mi/min"``, ``"10m/h"``, ``"5Mi/30s"``, or a number per
              second), ``max`` (optional cap): ``start + rate*t``. Memory without ``max``
              grows until the container is OOM-killed (a leak).
``replay``    (container level) ``samples``: ``[[t, cpu, memory], ...]`` or
              ``[{"t":..., "cpu":..., "memory":...}]`` with increasing ``t``;
              ``interpolation`` ``"step"`` (default: hold each sample until the next) or
              ``"linear"``; ``loop`` (repeat with period ``period``, default the last ``t``).
              Before the first sample the first applies, after the last the last.

Every profile may also have ``noise`` (a fraction: the value is multiplied by a
deterministic pseudo-random factor in ``[1-noise, 1+noise]`` that changes every
``noiseInterval``, default ``1m``; ``seed`` picks the sequence: by default it is derived from
the pod's namespace and name and the container name, so the replicas of a workload differ
while a run with the same pod names repeats exactly; an explicit ``seed`` is used as given,
so every replica shares it), and ``anchor``: ``"clock"`` (``t`` is the clock's time in seconds since
the Unix epoch, so every container shares the same day) or ``"start"`` (``t`` is seconds
since the container started, so a restart starts over). Defaults: ``linear`` and
``replay`` are anchored at ``start``, the others at ``clock``.

Without an annotation (and for containers it does not cover) a container uses a constant
half of its requests (``DEFAULT_CPU_MILLI`` / ``DEFAULT_MEMORY_BYTES`` where it requests
none); a regular (non-sidecar) init container exits with code 0 after one second.

Evaluation is vectorized: ``UsageBatch`` evaluates many containers at once, at one time or
at an array of times (numpy, shape ``(containers, times)``).
"""

from __future__ import annotations

import json
import math
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kvert.api.pods import container_requests, is_restartable_init_container
from kvert.api.quantity import Quantity, QuantityError, to_quantity
from kvert.kubelet.config import ConfigError, parse_duration_or_days

USAGE_ANNOTATION = "kvert.io/usage"
DEFAULT_CPU_MILLI = 10
DEFAULT_MEMORY_BYTES = 16 * 2**20
INIT_CONTAINER_RUNTIME = 1.0
ANCHORS = ("clock", "start")


class UsageError(ValueError):
    """A usage annotation kvert cannot read; the message names the path inside it."""


# -- scalar parsing helpers -----------------------------------------------------------------------------

def _amount(resource: str, value: object, path: str) -> float:
    """A quantity as a float: millicores for cpu, bytes for memory."""
    if isinstance(value, bool):
        raise UsageError(f"{path}: expected a quantity, got {value!r}")
    try:
        q = Quantity.parse(value)
    except QuantityError as err:
        raise UsageError(f"{path}: {err}") from None
    amount = q.amount * 1000 if resource == "cpu" else q.amount
    if amount < 0:
        raise UsageError(f"{path}: must not be negative")
    return float(amount)


_UNITS = {"s": 1.0, "sec": 1.0, "second": 1.0, "m": 60.0, "min": 60.0, "minute": 60.0,
          "h": 3600.0, "hour": 3600.0, "d": 86400.0, "day": 86400.0}


def _duration(value: object, path: str) -> float:
    try:
        seconds = parse_duration_or_days(value, path)
    except ConfigError:
        raise UsageError(f"{path}: invalid duration {value!r}") from None
    if seconds < 0:
        raise UsageError(f"{path}: must not be negative")
    return seconds


def _rate(resource: str, value: object, path: str) -> float:
    """``"1Mi/min"`` -> bytes per second; a bare number/quantity is per second."""
    if isinstance(value, str) and "/" in value:
        amount_text, unit = (s.strip() for s in value.split("/", 1))
        seconds = _UNITS.get(unit)
        if seconds is None:
            seconds = _duration(unit, path)
        if seconds <= 0:
            raise UsageError(f"{path}: the rate's time unit must be positive")
        return _amount(resource, amount_text, path) / seconds
    return _amount(resource, value, path)


def _check_keys(spec: Mapping[str, Any], allowed: set[str], path: str) -> None:
    unknown = sorted(set(spec) - allowed)
    if unknown:
        raise UsageError(f"{path}: unknown field(s) {', '.join(unknown)}; expected {', '.join(sorted(allowed))}")


def _require(spec: Mapping[str, Any], key: str, path: str) -> Any:
    if key not in spec:
        raise UsageError(f"{path}: {key} is required")
    return spec[key]


def _anchor(value: Any, path: str) -> str:
    if value not in ANCHORS:
        raise UsageError(f"{path}: expected 'clock' or 'start', got {value!r}")
    return value


# -- profiles ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Profile:
    """One resource's usage over time. Values are millicores (cpu) or bytes (memory)."""

    anchor: str = "clock"
    noise: float = 0.0
    noise_interval: float = 60.0
    seed: int = 0

    kind = "profile"

    @classmethod
    def _eval(cls, profiles: Sequence[Profile], t: np.ndarray) -> np.ndarray:  # (k, T) -> (k, T)
        raise NotImplementedError


def _column(profiles: Sequence[Any], name: str) -> np.ndarray:
    """The parameter ``name`` of every profile as a column, shape ``(k, 1)``: it broadcasts
    against the times, shape ``(k, T)``."""
    return np.array([getattr(p, name) for p in profiles], dtype=float)[:, None]


@dataclass(frozen=True)
class Constant(Profile):
    value: float = 0.0
    kind = "constant"

    @classmethod
    def _eval(cls, profiles, t):
        return np.broadcast_to(_column(profiles, "value"), t.shape).copy()


@dataclass(frozen=True)
class Diurnal(Profile):
    min: float = 0.0
    max: float = 0.0
    period: float = 86400.0
    phase: float = 0.0
    kind = "diurnal"

    @classmethod
    def _eval(cls, profiles, t):
        lo, hi = _column(profiles, "min"), _column(profiles, "max")
        period, phase = _column(profiles, "period"), _column(profiles, "phase")
        angle = 2 * np.pi * np.mod(t + phase, period) / period
        return lo + (hi - lo) * (1 - np.cos(angle)) / 2


@dataclass(frozen=True)
class Spikes(Profile):
    base: float = 0.0
    peak: float = 0.0
    every: float = 3600.0
    duration: float = 60.0
    offset: float = 0.0
    kind = "spikes"

    @classmethod
    def _eval(cls, profiles, t):
        base, peak = _column(profiles, "base"), _column(profiles, "peak")
        every, duration = _column(profiles, "every"), _column(profiles, "duration")
        offset = _column(profiles, "offset")
        x = t - offset
        spiking = (x >= 0) & (np.mod(x, every) < duration)
        return np.where(spiking, peak, base)


@dataclass(frozen=True)
class Linear(Profile):
    start: float = 0.0
    rate: float = 0.0
    max: float | None = None
    anchor: str = "start"
    kind = "linear"

    @classmethod
    def _eval(cls, profiles, t):
        start, rate = _column(profiles, "start"), _column(profiles, "rate")
        cap = np.array([math.inf if p.max is None else p.max for p in profiles])[:, None]
        return np.minimum(start + rate * np.maximum(t, 0.0), cap)


@dataclass(frozen=True)
class Replay:
    """Both resources from one trace of samples (times relative to the anchor)."""

    times: tuple[float, ...]
    cpu: tuple[float, ...]
    memory: tuple[float, ...]
    interpolation: str = "step"
    loop: bool = False
    period: float = 0.0
    anchor: str = "start"

    def values(self, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        times = np.asarray(self.times, dtype=float)
        if self.loop and self.period > 0:
            t = np.mod(t - times[0], self.period) + times[0]
        if self.interpolation == "linear":
            return np.interp(t, times, self.cpu), np.interp(t, times, self.memory)
        idx = np.clip(np.searchsorted(times, t, side="right") - 1, 0, len(times) - 1)
        return np.asarray(self.cpu)[idx], np.asarray(self.memory)[idx]


@dataclass(frozen=True)
class ContainerUsage:
    """How one container behaves: a cpu and a memory profile, or a replay; optionally exits."""

    cpu: Profile = field(default_factory=lambda: Constant(value=float(DEFAULT_CPU_MILLI)))
    memory: Profile = field(default_factory=lambda: Constant(value=float(DEFAULT_MEMORY_BYTES)))
    replay: Replay | None = None
    series: str | None = None          # a trace bank's group (recorded usage), evaluated by the fleet
    exit_after: float | None = None
    exit_code: int = 0
    disk: Profile | None = None        # bytes written to its writable layer and logs
    logs: Profile | None = None        # bytes written to its log so far (before rotation)
    pids: int = 1                      # processes it runs


# -- parsing -----------------------------------------------------------------------------------------------

_COMMON = {"profile", "noise", "noiseInterval", "seed", "anchor"}
_PROFILE_KEYS = {
    "constant": {"value"},
    "diurnal": {"min", "max", "period", "phase"},
    "spikes": {"base", "peak", "every", "duration", "offset"},
    "linear": {"start", "rate", "max"},
}


def parse_profile(resource: str, spec: object, path: str = "", seed: int = 0) -> Profile:
    """One resource's profile from its JSON form (a bare quantity means constant)."""
    path = path or resource
    if not isinstance(spec, Mapping):
        return Constant(value=_amount(resource, spec, path), seed=seed)
    kind = spec.get("profile", "constant")
    if kind not in _PROFILE_KEYS:
        raise UsageError(f"{path}.profile: unknown profile {kind!r}; expected one of "
                         f"{', '.join(sorted(_PROFILE_KEYS))} (replay is per container)")
    _check_keys(spec, _COMMON | _PROFILE_KEYS[kind], path)
    common: dict[str, Any] = {"seed": seed}
    if "noise" in spec:
        noise = spec["noise"]
        if isinstance(noise, bool) or not isinstance(noise, (int, float)) or not 0 <= noise <= 1:
            raise UsageError(f"{path}.noise: expected a fraction between 0 and 1, got {noise!r}")
        common["noise"] = float(noise)
    if "noiseInterval" in spec:
        common["noise_interval"] = _duration(spec["noiseInterval"], f"{path}.noiseInterval")
        if common["noise_interval"] <= 0:
            raise UsageError(f"{path}.noiseInterval: must be positive")
    if "seed" in spec:
        if isinstance(spec["seed"], bool) or not isinstance(spec["seed"], int) or not 0 <= spec["seed"] < 2**64:
            raise UsageError(f"{path}.seed: expected an integer between 0 and 2^64-1")
        common["seed"] = spec["seed"]
    if "anchor" in spec:
        common["anchor"] = _anchor(spec["anchor"], f"{path}.anchor")

    def value(key: str, default: object) -> object:
        """``spec[key]``, or ``default`` when it is absent; without a default it is required."""
        return spec.get(key, default) if default is not None else _require(spec, key, path)

    def amount(key: str, default: object = None) -> float:
        return _amount(resource, value(key, default), f"{path}.{key}")

    def duration(key: str, default: object = None) -> float:
        return _duration(value(key, default), f"{path}.{key}")

    if kind == "constant":
        return Constant(value=amount("value"), **common)
    if kind == "diurnal":
        lo, hi = amount("min"), amount("max")
        if hi < lo:
            raise UsageError(f"{path}: max must not be below min")
        period = duration("period", "24h")
        if period <= 0:
            raise UsageError(f"{path}.period: must be positive")
        return Diurnal(min=lo, max=hi, period=period, phase=duration("phase", 0), **common)
    if kind == "spikes":
        every = duration("every")
        if every <= 0:
            raise UsageError(f"{path}.every: must be positive")
        return Spikes(base=amount("base"), peak=amount("peak"), every=every,
                      duration=duration("duration"), offset=duration("offset", 0), **common)
    cap = amount("max") if "max" in spec else None
    return Linear(start=amount("start"), rate=_rate(resource, _require(spec, "rate", path), f"{path}.rate"),
                  max=cap, **common)


def _parse_replay(spec: object, path: str) -> Replay:
    if not isinstance(spec, Mapping):
        raise UsageError(f"{path}: expected an object with samples")
    _check_keys(spec, {"samples", "interpolation", "loop", "period", "anchor"}, path)
    samples = _require(spec, "samples", path)
    if not isinstance(samples, list) or not samples:
        raise UsageError(f"{path}.samples: expected a non-empty list")
    times, cpu, memory = [], [], []
    for i, sample in enumerate(samples):
        p = f"{path}.samples[{i}]"
        if isinstance(sample, Mapping):
            t, c, m = _require(sample, "t", p), _require(sample, "cpu", p), _require(sample, "memory", p)
        elif isinstance(sample, (list, tuple)) and len(sample) == 3:
            t, c, m = sample
        else:
            raise UsageError(f"{p}: expected [t, cpu, memory] or {{t, cpu, memory}}")
        times.append(_duration(t, f"{p}.t"))
        cpu.append(_amount("cpu", c, f"{p}.cpu"))
        memory.append(_amount("memory", m, f"{p}.memory"))
        if i and times[-1] <= times[-2]:
            raise UsageError(f"{p}.t: sample times must increase")
    interpolation = spec.get("interpolation", "step")
    if interpolation not in ("step", "linear"):
        raise UsageError(f"{path}.interpolation: expected 'step' or 'linear', got {interpolation!r}")
    loop = spec.get("loop", False)
    if not isinstance(loop, bool):
        raise UsageError(f"{path}.loop: expected a boolean")
    period = _duration(spec["period"], f"{path}.period") if "period" in spec else times[-1] - times[0]
    if loop and period <= 0:
        raise UsageError(f"{path}.period: a looping replay needs a positive period")
    anchor = _anchor(spec.get("anchor", "start"), f"{path}.anchor")
    return Replay(tuple(times), tuple(cpu), tuple(memory), interpolation, loop, period, anchor)


def _seed_for(name: str, resource: str) -> int:
    return zlib.crc32(f"{name}/{resource}".encode())


def parse_container_usage(spec: object, name: str = "", path: str = "") -> ContainerUsage:
    """One container's entry of the annotation (JSON text or the parsed object)."""
    path = path or (name or "usage")
    spec = _decoded(spec, path)
    if not isinstance(spec, Mapping):
        raise UsageError(f"{path}: expected an object with cpu/memory or replay")
    _check_keys(spec, {"cpu", "memory", "replay", "series", "exitAfter", "exitCode", "disk", "logs", "pids"}, path)
    extra: dict[str, Any] = {}
    for key in ("disk", "logs"):
        if key in spec:
            extra[key] = parse_profile("memory", spec[key], f"{path}.{key}", seed=_seed_for(name, key))
    if "pids" in spec:
        pids = spec["pids"]
        if isinstance(pids, bool) or not isinstance(pids, int) or pids < 0:
            raise UsageError(f"{path}.pids: expected a non-negative integer")
        extra["pids"] = pids
    exit_after = _duration(spec["exitAfter"], f"{path}.exitAfter") if "exitAfter" in spec else None
    exit_code = spec.get("exitCode", 0)
    if isinstance(exit_code, bool) or not isinstance(exit_code, int) or not 0 <= exit_code <= 255:
        raise UsageError(f"{path}.exitCode: expected an integer 0..255")
    if "series" in spec:
        if "cpu" in spec or "memory" in spec or "replay" in spec:
            raise UsageError(f"{path}: series gives both cpu and memory; do not set cpu, memory or replay too")
        if not isinstance(spec["series"], str) or not spec["series"]:
            raise UsageError(f"{path}.series: expected the name of recorded usage, got {spec['series']!r}")
        return ContainerUsage(series=spec["series"], exit_after=exit_after, exit_code=exit_code, **extra)
    if "replay" in spec:
        if "cpu" in spec or "memory" in spec:
            raise UsageError(f"{path}: replay gives both cpu and memory; do not set them too")
        return ContainerUsage(replay=_parse_replay(spec["replay"], f"{path}.replay"),
                              exit_after=exit_after, exit_code=exit_code, **extra)
    usage = ContainerUsage(exit_after=exit_after, exit_code=exit_code)
    kwargs: dict[str, Any] = {}
    for resource in ("cpu", "memory"):
        if resource in spec:
            kwargs[resource] = parse_profile(resource, spec[resource], f"{path}.{resource}",
                                             seed=_seed_for(name, resource))
    return ContainerUsage(cpu=kwargs.get("cpu", usage.cpu), memory=kwargs.get("memory", usage.memory),
                          exit_after=exit_after, exit_code=exit_code, **extra)


def disk_usage(usages: Sequence[ContainerUsage], t: float, started_at: Sequence[float]) -> np.ndarray:
    """Bytes each container has written (its ``disk`` profile; 0 without one) at time ``t``."""
    return _bytes_profile(usages, [u.disk for u in usages], t, started_at)


def log_written(usages: Sequence[ContainerUsage], t: float, started_at: Sequence[float]) -> np.ndarray:
    """Bytes each container has written to its log by time ``t`` (its ``logs`` profile; 0
    without one), before rotation drops any."""
    return _bytes_profile(usages, [u.logs for u in usages], t, started_at)


def _bytes_profile(usages: Sequence[ContainerUsage], profiles: Sequence[Profile | None], t: float,
                   started_at: Sequence[float]) -> np.ndarray:
    out = np.zeros(len(usages))
    idx = [i for i, p in enumerate(profiles) if p is not None]
    if idx:
        batch = UsageBatch([ContainerUsage(cpu=Constant(), memory=profiles[i]) for i in idx])  # type: ignore[arg-type]
        _, values = batch.evaluate(t, np.asarray([started_at[i] for i in idx], dtype=float))
        out[idx] = values
    return out


def _annotation(obj: Mapping[str, Any]) -> object:
    return ((obj.get("metadata") or {}).get("annotations") or {}).get(USAGE_ANNOTATION)


def parse_usage_annotation(value: object, path: str = f"metadata.annotations[{USAGE_ANNOTATION}]"
                           ) -> dict[str, ContainerUsage]:
    """The whole annotation (JSON text or object) -> ``{container name: ContainerUsage}``."""
    raw = _raw_annotation(value, path)
    return {name: parse_container_usage(spec, name, f"{path}.{name}") for name, spec in raw.items()}


def _raw_annotation(value: object, path: str) -> Mapping[str, Any]:
    if value is None or value == "":
        return {}
    value = _decoded(value, path)
    if not isinstance(value, Mapping):
        raise UsageError(f"{path}: expected a JSON object keyed by container name")
    return value


def _decoded(value: object, path: str) -> object:
    """JSON text decoded; anything else is already decoded."""
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except ValueError as err:
        raise UsageError(f"{path}: not valid JSON: {err}") from None


def _all_containers(obj: Mapping[str, Any]) -> list[tuple[Mapping[str, Any], bool]]:
    spec = obj.get("spec") or {}
    return ([(c, True) for c in spec.get("initContainers") or []] +
            [(c, False) for c in spec.get("containers") or []])


def _find(obj: Mapping[str, Any], container: str | Mapping[str, Any]) -> tuple[Mapping[str, Any], bool]:
    name = container if isinstance(container, str) else container.get("name")
    for c, init in _all_containers(obj):
        if c.get("name") == name:
            return c, init
    if isinstance(container, Mapping):
        return container, False
    raise KeyError(f"no container named {name!r}")


def default_usage_spec(container: Mapping[str, Any], init: bool = False) -> dict[str, Any]:
    """What a container does without an annotation: half its requests, constant (JSON form)."""
    requests = container_requests(container)
    cpu = requests.get("cpu", 0) // 2 or DEFAULT_CPU_MILLI
    memory = requests.get("memory", 0) // 2 or DEFAULT_MEMORY_BYTES
    spec: dict[str, Any] = {"cpu": to_quantity("cpu", cpu), "memory": to_quantity("memory", memory, "BinarySI")}
    if init and not is_restartable_init_container(container):
        spec["exitAfter"] = INIT_CONTAINER_RUNTIME
    return spec


def container_usage_spec(obj: Mapping[str, Any], container: str | Mapping[str, Any]) -> dict[str, Any]:
    """The JSON spec that drives one container of a pod (or pod template): its annotation
    entry, else the ``"*"`` entry, else ``default_usage_spec``. A regular init container
    without ``exitAfter`` still exits after a second."""
    c, init = _find(obj, container)
    raw = _raw_annotation(_annotation(obj), f"metadata.annotations[{USAGE_ANNOTATION}]")
    name = c.get("name", "")
    spec = raw.get(name, raw.get("*"))
    if spec is None:
        return default_usage_spec(c, init)
    if not isinstance(spec, Mapping):
        raise UsageError(f"metadata.annotations[{USAGE_ANNOTATION}].{name}: expected an object")
    spec = dict(spec)
    if init and not is_restartable_init_container(c) and "exitAfter" not in spec:
        spec["exitAfter"] = INIT_CONTAINER_RUNTIME
    meta = obj.get("metadata") or {}
    if meta.get("name"):
        _seed_noise(spec, f"{meta.get('namespace') or 'default'}/{meta['name']}/{name}")
    return spec


def _seed_noise(spec: dict[str, Any], identity: str) -> None:
    """Give each noisy profile without a ``seed`` one derived from ``identity`` (the pod and
    container), written into the spec so the runtime that parses it sees the same one."""
    for resource in ("cpu", "memory", "disk", "logs"):
        profile = spec.get(resource)
        if isinstance(profile, Mapping) and profile.get("noise") and "seed" not in profile:
            spec[resource] = {**profile, "seed": _seed_for(identity, resource)}


def usage_for_container(obj: Mapping[str, Any], container: str | Mapping[str, Any]) -> ContainerUsage:
    """The parsed ContainerUsage of one container of a pod (or pod template)."""
    c, _ = _find(obj, container)
    name = c.get("name", "")
    return parse_container_usage(container_usage_spec(obj, c), name,
                                 f"metadata.annotations[{USAGE_ANNOTATION}].{name}")


def pod_usage(obj: Mapping[str, Any]) -> dict[str, ContainerUsage]:
    """ContainerUsage of every container (init containers included) of a pod or template."""
    return {c.get("name", ""): usage_for_container(obj, c) for c, _ in _all_containers(obj)}


def container_annotations(obj: Mapping[str, Any], container: str | Mapping[str, Any]) -> dict[str, str]:
    """The annotations the node agent passes in ``ContainerConfig.annotations`` so the sim
    runtime knows how the container behaves: ``{"kvert.io/usage": <this container's JSON>}``.
    Validates the spec (raises UsageError)."""
    c, _ = _find(obj, container)
    spec = container_usage_spec(obj, c)
    parse_container_usage(spec, c.get("name", ""))
    return {USAGE_ANNOTATION: json.dumps(spec, sort_keys=True, separators=(",", ":"))}


# -- evaluation ----------------------------------------------------------------------------------------------

_M1 = np.uint64(0x9E3779B97F4A7C15)
_M2 = np.uint64(0xBF58476D1CE4E5B9)
_M3 = np.uint64(0x94D049BB133111EB)


def _uniform(seeds: np.ndarray, buckets: np.ndarray) -> np.ndarray:
    """Deterministic uniform numbers in [-1, 1) from (seed, bucket) with splitmix64."""
    with np.errstate(over="ignore"):
        x = seeds.astype(np.uint64) * _M1 + buckets.astype(np.int64).astype(np.uint64)
        x = x ^ (x >> np.uint64(30))
        x = x * _M2
        x = x ^ (x >> np.uint64(27))
        x = x * _M3
        x = x ^ (x >> np.uint64(31))
    return (x >> np.uint64(11)).astype(np.float64) * (2.0 / 2**53) - 1.0


class UsageBatch:
    """Many containers' usage, evaluated together (the parameters are grouped once)."""

    def __init__(self, usages: Sequence[ContainerUsage]):
        self.usages = list(usages)
        self.n = len(self.usages)
        self._groups = {"cpu": self._group("cpu"), "memory": self._group("memory")}
        self._replays = [i for i, u in enumerate(self.usages) if u.replay is not None]

    def _group(self, resource: str) -> list[tuple[type[Profile], np.ndarray, list[Profile], np.ndarray, dict]]:
        by_kind: dict[type[Profile], list[int]] = {}
        for i, u in enumerate(self.usages):
            if u.replay is None and u.series is None:
                by_kind.setdefault(type(getattr(u, resource)), []).append(i)
        groups = []
        for kind, idx in by_kind.items():
            profiles = [getattr(self.usages[i], resource) for i in idx]
            starts = np.array([p.anchor == "start" for p in profiles])
            noisy = [j for j, p in enumerate(profiles) if p.noise > 0]
            noisy_profiles = [profiles[j] for j in noisy]
            noise = {
                "idx": np.array(noisy, dtype=int),
                "amount": _column(noisy_profiles, "noise"),
                "interval": _column(noisy_profiles, "noise_interval"),
                "seed": np.array([p.seed for p in noisy_profiles], dtype=np.uint64)[:, None],
            }
            groups.append((kind, np.array(idx, dtype=int), profiles, starts, noise))
        return groups

    def evaluate(self, t: float | np.ndarray, started_at: float | np.ndarray | None = None
                 ) -> tuple[np.ndarray, np.ndarray]:
        """(cpu millicores, memory bytes) as float arrays: shape ``(n,)`` for a scalar ``t``,
        ``(n, T)`` for an array of T times (0 for ``series`` usage: only a fleet's trace bank
        has it). ``started_at`` (scalar or per container) is when
        each container started (for ``start``-anchored profiles); default 0."""
        scalar = np.ndim(t) == 0
        times = np.atleast_1d(np.asarray(t, dtype=float))
        start = np.zeros(self.n) if started_at is None else np.broadcast_to(
            np.asarray(started_at, dtype=float), (self.n,))
        cpu = np.zeros((self.n, times.size))
        memory = np.zeros((self.n, times.size))
        for resource, out in (("cpu", cpu), ("memory", memory)):
            for kind, idx, profiles, starts, noise in self._groups[resource]:
                base = np.where(starts, start[idx], 0.0)[:, None]
                teff = times[None, :] - base
                teff = np.where(starts[:, None], np.maximum(teff, 0.0), teff)
                values = kind._eval(profiles, teff)
                if noise["idx"].size:
                    j = noise["idx"]
                    buckets = np.floor(teff[j] / noise["interval"])
                    values[j] *= 1.0 + noise["amount"] * _uniform(noise["seed"], buckets)
                out[idx] = values
        for i in self._replays:
            replay = self.usages[i].replay
            assert replay is not None
            replay_base = start[i] if replay.anchor == "start" else 0.0
            c, m = replay.values(np.maximum(times - replay_base, 0.0) if replay.anchor == "start" else times)
            cpu[i], memory[i] = c, m
        np.maximum(cpu, 0.0, out=cpu)
        np.maximum(memory, 0.0, out=memory)
        if scalar:
            return cpu[:, 0], memory[:, 0]
        return cpu, memory


def usage_many(usages: Sequence[ContainerUsage], t: float | np.ndarray,
               started_at: float | np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Vectorized ``usage_at`` for many containers (see ``UsageBatch.evaluate``)."""
    return UsageBatch(usages).evaluate(t, started_at)


def usage_at(usage: ContainerUsage | Profile, t: float, started_at: float = 0.0) -> tuple[int, int]:
    """(cpu millicores, memory bytes) of one container at time ``t`` (seconds; the clock's
    time for ``clock``-anchored profiles), rounded to integers. A single Profile is treated
    as both resources' profile, so ``usage_at(Constant(value=5), 0) == (5, 5)``."""
    if isinstance(usage, Profile):
        usage = ContainerUsage(cpu=usage, memory=usage)
    cpu, memory = UsageBatch([usage]).evaluate(float(t), started_at)
    return int(round(float(cpu[0]))), int(round(float(memory[0])))


__all__ = [
    "ANCHORS", "Constant", "ContainerUsage", "DEFAULT_CPU_MILLI", "DEFAULT_MEMORY_BYTES", "Diurnal",
    "Linear", "Profile", "Replay", "Spikes", "USAGE_ANNOTATION", "UsageBatch", "UsageError",
    "container_annotations", "container_usage_spec", "default_usage_spec", "disk_usage", "log_written",
    "parse_container_usage",
    "parse_profile", "parse_usage_annotation", "pod_usage", "usage_at", "usage_for_container", "usage_many",
]
