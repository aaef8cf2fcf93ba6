"""The node agent's configuration: what the kubelet reads from its flags or its
``KubeletConfiguration`` file (``kubelet.config.k8s.io/v1beta1``), reduced to what kvert's
node agent uses, plus the node's capacity (which a real kubelet measures).

Sources and rules (seed 004 and the kubelet's own parsing and defaulting):

* ``--kube-reserved`` / ``--system-reserved`` (``kubeReserved`` / ``systemReserved``) are
  ``name=quantity`` pairs. Like the kubelet, only ``cpu``, ``memory``, ``ephemeral-storage``
  and ``pid`` may be reserved, and a reservation may not be negative.
* ``--eviction-hard`` (``evictionHard``) thresholds are ``signal<quantity`` or
  ``signal<percent%``; in the file they are a map ``{signal: value}``. When the file leaves
  ``evictionHard`` unset, the Linux defaults apply: ``memory.available<100Mi``,
  ``nodefs.available<10%``, ``nodefs.inodesFree<5%``, ``imagefs.available<15%`` and (as
  seed 001 lists them) ``imagefs.inodesFree<5%``. Setting any threshold replaces the whole
  set: the others are not inherited (seed 001). ``0%`` and ``100%`` disable a threshold, as
  in the kubelet; a zero or negative quantity is an error.
* ``--enforce-node-allocatable`` (``enforceNodeAllocatable``) defaults to ``["pods"]``;
  ``none`` (or an empty value) turns enforcement off; ``kube-reserved`` /
  ``system-reserved`` need ``kubeReservedCgroup`` / ``systemReservedCgroup``; any
  enforcement needs ``cgroupsPerQOS`` (seed 004).
* ``cpuManagerPolicy`` is ``none`` or ``static``; ``static`` needs a non-zero cpu
  reservation (kube-reserved + system-reserved cpu, or ``reservedSystemCPUs``).
* ``maxPods`` defaults to 110; with ``podsPerCore`` the node's pod capacity is
  ``min(maxPods, podsPerCore * cores)``. The node's ``capacity["pods"]`` is that number.
* seed 004's ``--experimental-node-allocatable-ignore-eviction-threshold`` is
  ``NodeConfig.ignore_eviction_threshold``: Allocatable then leaves hard eviction
  thresholds out.

Percentages are parsed exactly (``Fraction``) and applied as the kubelet applies them, in
float32 (``parsePercentage``, ``GetThresholdQuantity``): 10% of 100Gi comes out 160 bytes
larger than 10Gi, so Node Allocatable matches a real node's to the byte.

Every error is a ``ConfigError`` (a ``ValueError``) whose ``field`` names the file field and
the flag, e.g. ``kubeReserved (--kube-reserved)``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from kvert.api.durations import (
    MINUTE,
    SECOND,
    DurationError,
    format_go_duration_ns,
    parse_go_duration,
    parse_go_duration_ns,
)
from kvert.api.features import FeatureGateError, enabled, parse_feature_gates
from kvert.api.quantity import Quantity, QuantityError, to_int
from kvert.api.resources import BINARY_SI, ResourceList, format_resource_list

API_VERSION = "kubelet.config.k8s.io/v1beta1"
KIND = "KubeletConfiguration"

# Eviction signals the kubelet accepts (pkg/kubelet/eviction/api).
SIGNALS = frozenset({
    "memory.available", "allocatableMemory.available", "nodefs.available", "nodefs.inodesFree",
    "imagefs.available", "imagefs.inodesFree", "containerfs.available", "containerfs.inodesFree",
    "pid.available",
})
# Resources the kubelet lets an operator reserve (kubeReserved / systemReserved).
RESERVABLE = frozenset({"cpu", "memory", "ephemeral-storage", "pid"})
ENFORCE_OPTIONS = ("pods", "system-reserved", "kube-reserved", "none")
CPU_MANAGER_POLICIES = ("none", "static")
CGROUP_DRIVERS = ("cgroupfs", "systemd")

DEFAULT_MAX_PODS = 110
DEFAULT_EVICTION_HARD_TEXT = ("memory.available<100Mi,nodefs.available<10%,nodefs.inodesFree<5%,"
                              "imagefs.available<15%,imagefs.inodesFree<5%")
# What a simulated node has when nobody says otherwise.
DEFAULT_CAPACITY: ResourceList = {"cpu": 4000, "memory": 16 * 2**30, "ephemeral-storage": 100 * 2**30}

# KubeletConfiguration field -> its command-line flag, for error messages and from_flags.
FLAGS = {
    "kubeReserved": "--kube-reserved",
    "systemReserved": "--system-reserved",
    "evictionHard": "--eviction-hard",
    "evictionSoft": "--eviction-soft",
    "evictionSoftGracePeriod": "--eviction-soft-grace-period",
    "evictionMinimumReclaim": "--eviction-minimum-reclaim",
    "evictionMaxPodGracePeriod": "--eviction-max-pod-grace-period",
    "evictionPressureTransitionPeriod": "--eviction-pressure-transition-period",
    "enforceNodeAllocatable": "--enforce-node-allocatable",
    "kubeReservedCgroup": "--kube-reserved-cgroup",
    "systemReservedCgroup": "--system-reserved-cgroup",
    "cgroupsPerQOS": "--cgroups-per-qos",
    "cgroupDriver": "--cgroup-driver",
    "cpuManagerPolicy": "--cpu-manager-policy",
    "reservedSystemCPUs": "--reserved-cpus",
    "cpuCFSQuota": "--cpu-cfs-quota",
    "cpuCFSQuotaPeriod": "--cpu-cfs-quota-period",
    "maxPods": "--max-pods",
    "podsPerCore": "--pods-per-core",
    "qosReserved": "--qos-reserved",
    "nodeLabels": "--node-labels",
    "hostnameOverride": "--hostname-override",
    "featureGates": "--feature-gates",
    "containerLogMaxSize": "--container-log-max-size",
    "containerLogMaxFiles": "--container-log-max-files",
    "containerLogMaxWorkers": "--container-log-max-workers",
    "containerLogMonitorInterval": "--container-log-monitor-interval",
    "localStorageCapacityIsolation": "--local-storage-capacity-isolation",
}
IGNORE_EVICTION_FLAG = "--experimental-node-allocatable-ignore-eviction-threshold"


class ConfigError(ValueError):
    """A configuration the kubelet would refuse to start with; ``field`` names the field/flag."""

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        self.message = message
        super().__init__(f"invalid configuration: {field}: {message}" if field else
                         f"invalid configuration: {message}")


def field_label(name: str) -> str:
    """``kubeReserved`` -> ``kubeReserved (--kube-reserved)``, as the kubelet names fields."""
    flag = FLAGS.get(name)
    return f"{name} ({flag})" if flag else name


# -- durations ----------------------------------------------------------------------------------

_DAYS_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)d\s*$")


def parse_duration_or_days(text: object, field: str = "") -> float:
    """``parse_duration``, or a number of days (``"2d"``), as usage profiles and scenarios
    take them."""
    if isinstance(text, str):
        m = _DAYS_RE.match(text)
        if m:
            return float(m.group(1)) * 86400.0
    return parse_duration(text, field)


def parse_duration(text: object, field: str = "") -> float:
    """A Go duration (``"1m30s"``, ``"100ms"``, ``"5m"``) in seconds; a bare number is seconds."""
    try:
        if isinstance(text, str) and text:
            # a blank string too is Go's "time: invalid duration", as ParseDuration says
            return parse_go_duration_ns(text) / SECOND
        return parse_go_duration(text)
    except DurationError as err:
        raise ConfigError(field, str(err)) from None


def format_duration(seconds: float) -> str:
    """Seconds as a Go duration string (``90`` -> ``"1m30s"``, ``0.1`` -> ``"100ms"``), the
    seconds to six significant digits: a metrics window is a difference of float times, whose
    last digits are noise."""
    minutes, rest = divmod(seconds, 60) if seconds >= 1 else (0.0, seconds)
    rest = float(f"{rest:.6g}")
    return format_go_duration_ns(int(minutes) * MINUTE + round(rest * SECOND))


# -- resource pairs -----------------------------------------------------------------------------

def _split_pairs(text: str, sep: str, field: str) -> dict[str, str]:
    """``a=1,b=2`` (or ``a<1,b<2``) into a map, trimming blanks like the kubelet's flag types."""
    out: dict[str, str] = {}
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        if sep not in part:
            raise ConfigError(field, f"malformed pair {part!r}, expected key{sep}value")
        key, value = part.split(sep, 1)
        key, value = key.strip(), value.strip()
        if not key:
            raise ConfigError(field, f"malformed pair {part!r}, expected key{sep}value")
        out[key] = value
    return out


def parse_resource_pairs(value: str | Mapping[str, object] | None, field: str = "kubeReserved",
                         allowed: Iterable[str] | None = RESERVABLE) -> ResourceList:
    """``"cpu=500m,memory=1Gi"`` (flag form) or ``{"cpu": "500m"}`` (file form) -> ``{"cpu": 500, ...}``.

    With the default ``allowed``, only the resources the kubelet lets one reserve are accepted;
    ``allowed=None`` accepts any resource name (used for a node's capacity). Negative amounts
    are refused.
    """
    label = field_label(field)
    if value is None or value == "":
        return {}
    if isinstance(value, str):
        pairs: Mapping[str, object] = _split_pairs(value, "=", label)
    elif isinstance(value, Mapping):
        pairs = value
    else:
        raise ConfigError(label, f"expected name=quantity pairs, got {value!r}")
    allowed_set = None if allowed is None else frozenset(allowed)
    result: ResourceList = {}
    for name, raw in pairs.items():
        name = str(name)
        if allowed_set is not None and name not in allowed_set:
            raise ConfigError(label, f'cannot reserve "{name}" resource')
        try:
            amount = to_int(name, raw)
        except QuantityError as err:
            raise ConfigError(label, f'failed to parse quantity "{raw}" for "{name}" resource: '
                                     f"{err.reason}") from None
        if amount < 0:
            raise ConfigError(label, f'resource quantity for "{name}" cannot be negative: {raw}')
        result[name] = amount
    return result


# -- eviction thresholds ------------------------------------------------------------------------

@dataclass(frozen=True)
class EvictionThreshold:
    """One eviction threshold ``signal < value``.

    ``quantity`` is an absolute amount (bytes for ``*.available``, a count for inodes and
    pids); ``percentage`` is a fraction of capacity (``Fraction(1, 10)`` for ``10%``).
    Exactly one is set. ``grace_period`` (seconds) is for soft thresholds.
    """

    signal: str
    operator: str = "<"
    quantity: int | None = None
    percentage: Fraction | None = None
    grace_period: float = 0.0
    text: str = ""

    @property
    def percentage_f32(self) -> float:
        """The percentage as the kubelet holds it: ``float32(value) / 100`` in float32
        arithmetic (``parsePercentage``)."""
        assert self.percentage is not None
        return _float32_percentage(self.percentage)

    def amount(self, capacity: int) -> int:
        """The threshold in absolute terms for a resource of the given capacity:
        ``GetThresholdQuantity``, ``int64(float64(capacity) * float64(percentage))`` with the
        float32 percentage (10% of 10Gi is 1073741840 bytes, 16 more than a tenth)."""
        if self.quantity is not None:
            return self.quantity
        return int(float(capacity) * self.percentage_f32)

    @property
    def value_text(self) -> str:
        if self.text:
            return self.text
        if self.percentage is not None:
            return f"{float(self.percentage * 100):g}%"
        return str(self.quantity)

    def __str__(self) -> str:
        return f"{self.signal}{self.operator}{self.value_text}"

    def to_json(self) -> dict:
        out: dict[str, Any] = {"signal": self.signal, "operator": "LessThan", "value": self.value_text}
        if self.grace_period:
            out["gracePeriod"] = format_duration(self.grace_period)
        return out


@functools.lru_cache(maxsize=256)
def _float32_percentage(fraction: Fraction) -> float:
    return float(np.float32(np.float32(float(fraction * 100))) / np.float32(100))


def _parse_threshold_value(signal: str, raw: object, label: str) -> EvictionThreshold | None:
    if signal not in SIGNALS:
        raise ConfigError(label, f"unsupported eviction signal {signal}")
    text = str(raw).strip()
    if text.endswith("%"):
        if text in ("0%", "100%"):
            return None  # the kubelet treats these as "not enabled"
        try:
            pct = Fraction(text[:-1].strip()) / 100
        except (ValueError, ZeroDivisionError):
            raise ConfigError(label, f"invalid percentage {text!r} for eviction signal {signal}") from None
        if pct < 0:
            raise ConfigError(label, f"eviction percentage threshold {signal} must be >= 0%: {text}")
        if pct > 1:
            raise ConfigError(label, f"eviction percentage threshold {signal} must be <= 100%: {text}")
        if pct == 0:
            return None
        return EvictionThreshold(signal, "<", percentage=pct, text=text)
    try:
        q = Quantity.parse(text)
    except QuantityError as err:
        raise ConfigError(label, f"{signal}: {err}") from None
    if q.sign() <= 0:
        raise ConfigError(label, f"eviction threshold {signal} must be positive: {text}")
    return EvictionThreshold(signal, "<", quantity=q.value(), text=text)


def parse_eviction_thresholds(value: str | Mapping[str, object] | None,
                              field: str = "evictionHard") -> tuple[EvictionThreshold, ...]:
    """``"memory.available<100Mi,nodefs.available<10%"`` (flag form) or
    ``{"memory.available": "100Mi"}`` (file form) -> thresholds, in the order given.

    A signal may appear once; only ``<`` is an operator, as in the kubelet.
    """
    label = field_label(field)
    if value is None or value == "":
        return ()
    items: list[tuple[str, object]] = []
    if isinstance(value, str):
        seen: set[str] = set()
        for part in value.split(","):
            part = part.strip()
            if not part:
                continue
            if "<" not in part or part.count("<") != 1:
                raise ConfigError(label, f"invalid eviction threshold syntax {part}, "
                                         "expected <signal><operator><value>")
            signal, raw = (s.strip() for s in part.split("<", 1))
            if signal in seen:
                raise ConfigError(label, f"found duplicate eviction threshold for signal {signal}")
            seen.add(signal)
            items.append((signal, raw))
    elif isinstance(value, Mapping):
        items = [(str(k), v) for k, v in value.items()]
    else:
        raise ConfigError(label, f"expected eviction thresholds, got {value!r}")
    out = []
    for name, threshold_value in items:
        threshold = _parse_threshold_value(name, threshold_value, label)
        if threshold is not None:
            out.append(threshold)
    return tuple(out)


DEFAULT_EVICTION_HARD = parse_eviction_thresholds(DEFAULT_EVICTION_HARD_TEXT)


def _parse_grace_periods(value: str | Mapping[str, object] | None, field: str) -> dict[str, float]:
    label = field_label(field)
    if not value:
        return {}
    pairs = _split_pairs(value, "=", label) if isinstance(value, str) else value
    out = {}
    for signal, raw in pairs.items():
        if signal not in SIGNALS:
            raise ConfigError(label, f"unsupported eviction signal {signal}")
        seconds = parse_duration(raw, label)
        if seconds < 0:
            raise ConfigError(label, f"invalid eviction grace period specified: {raw}, must be a positive value")
        out[str(signal)] = seconds
    return out


def _parse_labels(value: str | Mapping[str, object] | None) -> dict[str, str]:
    if not value:
        return {}
    if isinstance(value, Mapping):
        return {str(k): str(v) for k, v in value.items()}
    return _split_pairs(value, "=", field_label("nodeLabels"))


def _parse_bool(value: object, field: str) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "1", "t"):
        return True
    if isinstance(value, str) and value.lower() in ("false", "0", "f"):
        return False
    raise ConfigError(field_label(field), f"expected a boolean, got {value!r}")


def _parse_int(value: object, field: str) -> int:
    if isinstance(value, bool):
        raise ConfigError(field_label(field), f"expected an integer, got {value!r}")
    try:
        return int(value)  # type: ignore[call-overload]  # any value: int() judges it, its TypeError is ours
    except (TypeError, ValueError):
        raise ConfigError(field_label(field), f"expected an integer, got {value!r}") from None


def _parse_enforcement(value: str | Iterable[str] | None, cgroups_per_qos: bool,
                       kube_cgroup: str, system_cgroup: str) -> frozenset[str]:
    label = field_label("enforceNodeAllocatable")
    if value is None:
        options = ["pods"]
    elif isinstance(value, str):
        options = [v.strip() for v in value.split(",") if v.strip()]
    else:
        options = [str(v) for v in value]
    for option in options:
        if option not in ENFORCE_OPTIONS:
            raise ConfigError(label, f"option {option!r} specified for enforceNodeAllocatable. Valid options "
                                     f"are {', '.join(repr(o) for o in ENFORCE_OPTIONS)}")
    if "none" in options:
        if len(options) > 1:
            raise ConfigError(label, "may not contain additional enforcements when 'none' is specified")
        options = []
    if options and not cgroups_per_qos:
        raise ConfigError(label, "is not supported unless cgroupsPerQOS (--cgroups-per-qos) is turned on")
    if "kube-reserved" in options and not kube_cgroup:
        raise ConfigError(field_label("kubeReservedCgroup"),
                          "must be specified when 'kube-reserved' is contained in enforceNodeAllocatable")
    if "system-reserved" in options and not system_cgroup:
        raise ConfigError(field_label("systemReservedCgroup"),
                          "must be specified when 'system-reserved' is contained in enforceNodeAllocatable")
    return frozenset(options)


def _parse_qos_reserved(value: str | Mapping[str, object] | None) -> dict[str, int]:
    """``memory=50%`` -> ``{"memory": 50}`` (percent of the requests of higher QoS tiers)."""
    label = field_label("qosReserved")
    if not value:
        return {}
    pairs = _split_pairs(value, "=", label) if isinstance(value, str) else value
    out = {}
    for name, raw in pairs.items():
        if name != "memory":
            raise ConfigError(label, f"cannot reserve {name!r} resource (only memory)")
        text = str(raw).strip()
        if not text.endswith("%"):
            raise ConfigError(label, f"percentage value expected for {name}, got {text!r}")
        try:
            pct = int(text[:-1])
        except ValueError:
            raise ConfigError(label, f"invalid percentage {text!r}") from None
        if not 0 <= pct <= 100:
            raise ConfigError(label, f"percentage must be between 0 and 100, got {text!r}")
        out[str(name)] = pct
    return out


# -- the configuration ----------------------------------------------------------------------------

@dataclass
class NodeConfig:
    """What the node agent needs to know about its node and its configuration.

    Resource lists are integers: cpu in millicores, memory and storage in bytes, pods and
    pids as counts. ``capacity["pods"]`` is set from ``max_pods`` / ``pods_per_core``; when
    ``max_pods`` is None it is taken from ``capacity["pods"]`` if given, else 110.
    """

    capacity: ResourceList = field(default_factory=lambda: dict(DEFAULT_CAPACITY))
    node_name: str = "node-1"
    labels: dict[str, str] = field(default_factory=dict)
    kube_reserved: ResourceList = field(default_factory=dict)
    system_reserved: ResourceList = field(default_factory=dict)
    eviction_hard: tuple[EvictionThreshold, ...] = DEFAULT_EVICTION_HARD
    eviction_soft: tuple[EvictionThreshold, ...] = ()
    eviction_minimum_reclaim: tuple[EvictionThreshold, ...] = ()
    eviction_max_pod_grace_period: int = 0
    eviction_pressure_transition_period: float = 300.0
    enforce_node_allocatable: frozenset[str] = frozenset({"pods"})
    kube_reserved_cgroup: str = ""
    system_reserved_cgroup: str = ""
    cgroups_per_qos: bool = True
    cgroup_driver: str = "cgroupfs"
    cgroup_version: int = 2          # which cgroup files the cgroupfs runtime writes (v1 or v2)
    cpu_manager_policy: str = "none"
    reserved_system_cpus: str = ""
    cpu_cfs_quota: bool = True
    cpu_cfs_quota_period_us: int = 100_000
    max_pods: int | None = None
    pods_per_core: int = 0
    qos_reserved: dict[str, int] = field(default_factory=dict)
    ignore_eviction_threshold: bool = False
    feature_gates: dict[str, bool] = field(default_factory=dict)
    # container log rotation (kvert.kubelet.runtime.logrotation): rotate at this many bytes
    # (negative: never), keep this many files; workers and interval are accepted for
    # compatibility (kvert rotates at the write that fills the file, see logrotation)
    container_log_max_size: int = 10 * 2**20
    container_log_max_files: int = 5
    container_log_max_workers: int = 1
    container_log_monitor_interval: float = 10.0
    # ephemeral-storage limits and emptyDir sizeLimits enforced by eviction
    local_storage_capacity_isolation: bool = True

    def feature(self, name: str) -> bool:
        """Is the feature gate ``name`` on for this node (``kvert.api.features``)?"""
        return enabled(self.feature_gates, name)

    def __post_init__(self) -> None:
        self.capacity = dict(self.capacity)
        self.kube_reserved = dict(self.kube_reserved)
        self.system_reserved = dict(self.system_reserved)
        self.eviction_hard = tuple(self.eviction_hard)
        self.eviction_soft = tuple(self.eviction_soft)
        self.eviction_minimum_reclaim = tuple(self.eviction_minimum_reclaim)
        self.enforce_node_allocatable = frozenset(self.enforce_node_allocatable) - {"none"}
        self.validate()
        if self.max_pods is None:
            self.max_pods = self.capacity.get("pods", DEFAULT_MAX_PODS)
        self.capacity["pods"] = self.pod_capacity()

    def validate(self) -> None:
        """Raise ConfigError for what the kubelet's configuration validation refuses."""
        for name, rl in (("kubeReserved", self.kube_reserved), ("systemReserved", self.system_reserved)):
            for res, amount in rl.items():
                if res not in RESERVABLE:
                    raise ConfigError(field_label(name), f'cannot reserve "{res}" resource')
                if amount < 0:
                    raise ConfigError(field_label(name), f'resource quantity for "{res}" cannot be negative')
        for res, amount in self.capacity.items():
            if amount < 0:
                raise ConfigError("capacity", f"{res} cannot be negative")
        for opt in self.enforce_node_allocatable:
            if opt not in ENFORCE_OPTIONS:
                raise ConfigError(field_label("enforceNodeAllocatable"), f"invalid option {opt!r}")
        _parse_enforcement(sorted(self.enforce_node_allocatable), self.cgroups_per_qos,
                           self.kube_reserved_cgroup, self.system_reserved_cgroup)
        if self.cpu_manager_policy not in CPU_MANAGER_POLICIES:
            raise ConfigError(field_label("cpuManagerPolicy"),
                              f"unknown policy {self.cpu_manager_policy!r} (valid: none, static)")
        if self.cpu_manager_policy == "static" and not self.reserved_system_cpus and \
                self.kube_reserved.get("cpu", 0) + self.system_reserved.get("cpu", 0) <= 0:
            raise ConfigError(field_label("cpuManagerPolicy"),
                              "the static policy requires systemReserved.cpu + kubeReserved.cpu (or "
                              "reservedSystemCPUs) to be greater than zero")
        if self.cgroup_driver not in CGROUP_DRIVERS:
            raise ConfigError(field_label("cgroupDriver"), f"unknown driver {self.cgroup_driver!r}")
        if self.cgroup_version not in (1, 2):
            raise ConfigError("cgroupVersion", f"must be 1 or 2, got {self.cgroup_version!r}")
        if not 1000 <= self.cpu_cfs_quota_period_us <= 1_000_000:
            raise ConfigError(field_label("cpuCFSQuotaPeriod"), "must be between 1ms and 1sec, inclusive")
        if self.max_pods is not None and self.max_pods < 0:
            raise ConfigError(field_label("maxPods"), f"{self.max_pods} must not be a negative number")
        if self.pods_per_core < 0:
            raise ConfigError(field_label("podsPerCore"), f"{self.pods_per_core} must not be a negative number")
        if self.eviction_max_pod_grace_period < 0:
            raise ConfigError(field_label("evictionMaxPodGracePeriod"), "must not be negative")
        if self.container_log_max_files <= 1:
            raise ConfigError(field_label("containerLogMaxFiles"),
                              f"{self.container_log_max_files} must be greater than 1")
        if self.container_log_max_workers < 1:
            raise ConfigError(field_label("containerLogMaxWorkers"),
                              f"{self.container_log_max_workers} must be greater than or equal to 1")
        if self.container_log_monitor_interval <= 0:
            raise ConfigError(field_label("containerLogMonitorInterval"), "must be a positive duration")

    def pod_capacity(self) -> int:
        """maxPods, lowered to podsPerCore x cores when podsPerCore is set."""
        max_pods = DEFAULT_MAX_PODS if self.max_pods is None else self.max_pods
        if self.pods_per_core > 0:
            cores = self.capacity.get("cpu", 0) // 1000
            return min(max_pods, self.pods_per_core * cores)
        return max_pods

    @property
    def memory_capacity(self) -> int:
        """The machine's memory in bytes (what oom_score_adj is computed against)."""
        return self.capacity.get("memory", 0)

    def hard_threshold(self, signal: str) -> EvictionThreshold | None:
        for t in self.eviction_hard:
            if t.signal == signal:
                return t
        return None

    # -- constructors -------------------------------------------------------------------------

    @classmethod
    def from_kubelet_configuration(cls, doc: Mapping[str, Any], *, capacity: object = None,
                                   node_name: str | None = None,
                                   labels: Mapping[str, str] | str | None = None) -> NodeConfig:
        return load_kubelet_configuration(doc, capacity=capacity, node_name=node_name, labels=labels)

    @classmethod
    def from_flags(cls, *, capacity: object = None, node_name: str = "node-1",
                   node_labels: str | Mapping[str, object] | None = "",
                   kube_reserved: object = "", system_reserved: object = "",
                   eviction_hard: object = None, eviction_soft: object = "",
                   eviction_soft_grace_period: object = "", eviction_minimum_reclaim: object = "",
                   eviction_max_pod_grace_period: object = 0,
                   eviction_pressure_transition_period: object = "5m0s",
                   enforce_node_allocatable: object = "pods", kube_reserved_cgroup: str = "",
                   system_reserved_cgroup: str = "", cgroups_per_qos: object = True,
                   cgroup_driver: str = "cgroupfs", cgroup_version: int = 2,
                   cpu_manager_policy: str = "none", reserved_cpus: str = "",
                   cpu_cfs_quota: object = True, cpu_cfs_quota_period: object = "100ms",
                   max_pods: object = None, pods_per_core: object = 0, qos_reserved: object = "",
                   experimental_node_allocatable_ignore_eviction_threshold: object = False,
                   feature_gates: object = "") -> NodeConfig:
        """Build from kubelet command-line flag values (strings in the flags' own syntax, e.g.
        ``kube_reserved="cpu=500m,memory=1Gi"``, ``eviction_hard="memory.available<100Mi"``,
        ``enforce_node_allocatable="pods,kube-reserved"``). ``eviction_hard=None`` means the
        flag was not given (defaults apply); ``""`` means no hard thresholds. ``capacity`` is
        kvert's: a ResourceList of ints or ``"cpu=4,memory=16Gi"``. Reservations larger than
        capacity are refused, as the kubelet refuses to start."""
        doc: dict[str, Any] = {
            "kubeReserved": kube_reserved, "systemReserved": system_reserved,
            "evictionSoft": eviction_soft, "evictionSoftGracePeriod": eviction_soft_grace_period,
            "evictionMinimumReclaim": eviction_minimum_reclaim,
            "evictionMaxPodGracePeriod": eviction_max_pod_grace_period,
            "evictionPressureTransitionPeriod": eviction_pressure_transition_period,
            "enforceNodeAllocatable": enforce_node_allocatable,
            "kubeReservedCgroup": kube_reserved_cgroup, "systemReservedCgroup": system_reserved_cgroup,
            "cgroupsPerQOS": cgroups_per_qos, "cgroupDriver": cgroup_driver,
            "cpuManagerPolicy": cpu_manager_policy, "reservedSystemCPUs": reserved_cpus,
            "cpuCFSQuota": cpu_cfs_quota, "cpuCFSQuotaPeriod": cpu_cfs_quota_period,
            "podsPerCore": pods_per_core, "qosReserved": qos_reserved,
            "featureGates": feature_gates,
        }
        if eviction_hard is not None:
            doc["evictionHard"] = eviction_hard
        if max_pods is not None:
            doc["maxPods"] = max_pods
        return _build(doc, capacity=capacity, node_name=node_name, labels=node_labels,
                      cgroup_version=cgroup_version,
                      ignore_eviction=_parse_bool(experimental_node_allocatable_ignore_eviction_threshold,
                                                  IGNORE_EVICTION_FLAG))

    @classmethod
    def from_argv(cls, argv: Iterable[str], *, capacity: object = None) -> NodeConfig:
        """Parse kubelet-style arguments (``--kube-reserved=cpu=1``, ``--max-pods 50``,
        ``--config FILE``). Flags override the file's fields, as in the kubelet. ``--capacity``
        (kvert's) sets the node's capacity."""
        flag_to_field = {v: k for k, v in FLAGS.items()}
        args = list(argv)
        doc: dict[str, Any] = {}
        config_path = None
        node_name = None
        labels: str | None = None
        cgroup_version = None
        ignore = False
        i = 0
        while i < len(args):
            arg = args[i]
            if not arg.startswith("--"):
                raise ConfigError("", f"unexpected argument {arg!r}")
            if "=" in arg:
                flag, value = arg.split("=", 1)
            else:
                flag = arg
                boolean = flag in ("--cgroups-per-qos", "--cpu-cfs-quota", "--local-storage-capacity-isolation",
                                   IGNORE_EVICTION_FLAG)
                if boolean and (i + 1 >= len(args) or args[i + 1].startswith("--")):
                    value = "true"
                else:
                    if i + 1 >= len(args):
                        raise ConfigError(flag, "flag needs an argument")
                    value = args[i + 1]
                    i += 1
            i += 1
            if flag == "--config":
                config_path = value
            elif flag == "--capacity":
                capacity = value
            elif flag in ("--hostname-override", "--node-name"):
                node_name = value
            elif flag == "--node-labels":
                labels = value
            elif flag == "--cgroup-version":
                cgroup_version = _parse_int(value, "cgroupVersion")
            elif flag == IGNORE_EVICTION_FLAG:
                ignore = _parse_bool(value, IGNORE_EVICTION_FLAG)
            elif flag in flag_to_field:
                doc[flag_to_field[flag]] = value
            else:
                raise ConfigError(flag, "unknown flag")
        base: dict[str, Any] = {}
        if config_path is not None:
            base = dict(_read_document(config_path))
        base.update(doc)
        return _build(base, capacity=capacity, node_name=node_name, labels=labels,
                      cgroup_version=cgroup_version, ignore_eviction=ignore)

    def to_json(self) -> dict:
        """A JSON-friendly summary (for ``kvert explain`` and reports)."""
        return {
            "nodeName": self.node_name,
            "capacity": format_resource_list(self.capacity, BINARY_SI),
            "kubeReserved": format_resource_list(self.kube_reserved, BINARY_SI),
            "systemReserved": format_resource_list(self.system_reserved, BINARY_SI),
            "evictionHard": {t.signal: t.value_text for t in self.eviction_hard},
            "enforceNodeAllocatable": sorted(self.enforce_node_allocatable),
            "cpuManagerPolicy": self.cpu_manager_policy,
            "maxPods": self.max_pods,
            "cgroupDriver": self.cgroup_driver,
        }


# -- reservations (what Node Allocatable holds back; a start-up check too) ----------------------

# Which resource a hard eviction threshold keeps back from Allocatable (pkg/kubelet/cm).
SIGNAL_RESOURCES = {"memory.available": "memory", "nodefs.available": "ephemeral-storage"}


def eviction_reservation(config: NodeConfig) -> ResourceList:
    """What the hard eviction thresholds hold back: ``{"memory": ..., "ephemeral-storage": ...}``
    (only for resources the node has a capacity for)."""
    result: ResourceList = {}
    if config.ignore_eviction_threshold:
        return result
    for threshold in config.eviction_hard:
        resource = SIGNAL_RESOURCES.get(threshold.signal)
        if resource is None or resource not in config.capacity:
            continue
        result[resource] = result.get(resource, 0) + threshold.amount(config.capacity[resource])
    return result


def reservation(config: NodeConfig) -> ResourceList:
    """kube-reserved + system-reserved + hard eviction thresholds, per resource
    (``GetNodeAllocatableReservation``); zero entries are left out."""
    evict = eviction_reservation(config)
    names = dict.fromkeys([*config.kube_reserved, *config.system_reserved, *evict])
    result = {}
    for name in names:
        value = config.kube_reserved.get(name, 0) + config.system_reserved.get(name, 0) + evict.get(name, 0)
        if value:
            result[name] = value
    return result


def reservation_errors(config: NodeConfig) -> list[str]:
    """Resources whose reservation exceeds capacity, in the kubelet's words
    (``validateNodeAllocatable``); empty if the configuration is fine."""
    errors = []
    for name, reserved in sorted(reservation(config).items()):
        if name not in config.capacity:
            continue
        left = config.capacity[name] - reserved
        if left < 0:
            errors.append(f"Resource {name!r} has a reservation of {reserved}, capacity of "
                          f"{config.capacity[name]}")
    return errors


def check_reservation(config: NodeConfig) -> None:
    """Raise ConfigError when reservations exceed capacity (the kubelet refuses to start)."""
    errors = reservation_errors(config)
    if errors:
        raise ConfigError("", "invalid Node Allocatable configuration. " + " ".join(errors))


def _read_document(path_or_dict: object) -> Mapping[str, Any]:
    if isinstance(path_or_dict, Mapping):
        return path_or_dict
    import yaml
    try:
        text = Path(path_or_dict).read_text()  # type: ignore[arg-type]
    except OSError as err:
        raise ConfigError("--config", f"cannot read {path_or_dict}: {err.strerror}") from None
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as err:
        raise ConfigError("--config", f"{path_or_dict}: not valid YAML: {err}") from None
    if doc is None:
        doc = {}
    if not isinstance(doc, Mapping):
        raise ConfigError("--config", f"{path_or_dict}: expected a KubeletConfiguration object")
    return doc


def load_kubelet_configuration(path_or_dict: object, *, capacity: object = None,
                               node_name: str | None = None,
                               labels: Mapping[str, str] | str | None = None) -> NodeConfig:
    """A NodeConfig from a ``KubeletConfiguration`` (a YAML/JSON file path or a dict).

    ``apiVersion``/``kind``, when present, must be ``kubelet.config.k8s.io/v1beta1`` /
    ``KubeletConfiguration``. Unset fields take the kubelet's defaults; fields kvert does not
    use are ignored. The node's capacity is not part of the file; pass it (ints or
    ``"cpu=4,memory=16Gi"``), else ``DEFAULT_CAPACITY`` is used.
    """
    doc = _read_document(path_or_dict)
    api_version = doc.get("apiVersion")
    if api_version is not None and api_version != API_VERSION:
        raise ConfigError("apiVersion", f"expected {API_VERSION!r}, got {api_version!r}")
    kind = doc.get("kind")
    if kind is not None and kind != KIND:
        raise ConfigError("kind", f"expected {KIND!r}, got {kind!r}")
    return _build(doc, capacity=capacity, node_name=node_name, labels=labels)


def _build(doc: Mapping[str, Any], *, capacity: object, node_name: str | None,
           labels: str | Mapping[str, object] | None,
           cgroup_version: int | None = None, ignore_eviction: bool = False) -> NodeConfig:
    def get(name: str, default: Any) -> Any:
        value = doc.get(name)
        return default if value is None else value

    if capacity is None:
        cap = dict(DEFAULT_CAPACITY)
    elif isinstance(capacity, (str, Mapping)) and not (
            isinstance(capacity, Mapping) and all(isinstance(v, int) and not isinstance(v, bool)
                                                  for v in capacity.values())):
        cap = parse_resource_pairs(capacity, "capacity", allowed=None)
    else:
        cap = dict(capacity)  # type: ignore[call-overload]  # ints by resource, or pairs: dict() judges

    cgroups_per_qos = _parse_bool(get("cgroupsPerQOS", True), "cgroupsPerQOS")
    kube_cgroup = str(get("kubeReservedCgroup", ""))
    system_cgroup = str(get("systemReservedCgroup", ""))
    enforcement = _parse_enforcement(doc.get("enforceNodeAllocatable"), cgroups_per_qos,
                                     kube_cgroup, system_cgroup)

    evict_hard_raw = doc.get("evictionHard")
    eviction_hard = DEFAULT_EVICTION_HARD if evict_hard_raw is None else \
        parse_eviction_thresholds(evict_hard_raw, "evictionHard")
    soft = parse_eviction_thresholds(get("evictionSoft", ""), "evictionSoft")
    graces = _parse_grace_periods(get("evictionSoftGracePeriod", ""), "evictionSoftGracePeriod")
    with_grace = []
    for t in soft:
        if t.signal not in graces:
            raise ConfigError(field_label("evictionSoftGracePeriod"),
                              f"grace period must be specified for the soft eviction threshold {t.signal}")
        with_grace.append(EvictionThreshold(t.signal, t.operator, t.quantity, t.percentage,
                                            graces[t.signal], t.text))
    reclaim = _parse_min_reclaim(get("evictionMinimumReclaim", ""))

    max_pods_raw = doc.get("maxPods")
    period = parse_duration(get("cpuCFSQuotaPeriod", "100ms"), field_label("cpuCFSQuotaPeriod"))
    config = NodeConfig(
        capacity=cap,
        node_name=node_name or str(get("hostnameOverride", "")) or "node-1",
        labels=_parse_labels(labels if labels is not None else doc.get("nodeLabels")),
        kube_reserved=parse_resource_pairs(get("kubeReserved", ""), "kubeReserved"),
        system_reserved=parse_resource_pairs(get("systemReserved", ""), "systemReserved"),
        eviction_hard=eviction_hard,
        eviction_soft=tuple(with_grace),
        eviction_minimum_reclaim=reclaim,
        eviction_max_pod_grace_period=_parse_int(get("evictionMaxPodGracePeriod", 0),
                                                 "evictionMaxPodGracePeriod"),
        eviction_pressure_transition_period=parse_duration(
            get("evictionPressureTransitionPeriod", "5m"), field_label("evictionPressureTransitionPeriod")),
        enforce_node_allocatable=enforcement,
        kube_reserved_cgroup=kube_cgroup,
        system_reserved_cgroup=system_cgroup,
        cgroups_per_qos=cgroups_per_qos,
        cgroup_driver=str(get("cgroupDriver", "cgroupfs")),
        cgroup_version=cgroup_version if cgroup_version is not None else int(doc.get("cgroupVersion", 2)),
        cpu_manager_policy=str(get("cpuManagerPolicy", "none")).lower(),
        reserved_system_cpus=str(get("reservedSystemCPUs", "")),
        cpu_cfs_quota=_parse_bool(get("cpuCFSQuota", True), "cpuCFSQuota"),
        cpu_cfs_quota_period_us=round(period * 1_000_000),
        max_pods=None if max_pods_raw is None else _parse_int(max_pods_raw, "maxPods"),
        pods_per_core=_parse_int(get("podsPerCore", 0), "podsPerCore"),
        qos_reserved=_parse_qos_reserved(get("qosReserved", "")),
        ignore_eviction_threshold=ignore_eviction,
        feature_gates=_parse_gates(get("featureGates", "")),
        container_log_max_size=_parse_size(get("containerLogMaxSize", "10Mi"), "containerLogMaxSize"),
        container_log_max_files=_parse_int(get("containerLogMaxFiles", 5), "containerLogMaxFiles"),
        container_log_max_workers=_parse_int(get("containerLogMaxWorkers", 1), "containerLogMaxWorkers"),
        container_log_monitor_interval=parse_duration(get("containerLogMonitorInterval", "10s"),
                                                      field_label("containerLogMonitorInterval")),
        local_storage_capacity_isolation=_parse_bool(get("localStorageCapacityIsolation", True),
                                                     "localStorageCapacityIsolation"),
    )
    check_reservation(config)
    return config


def _parse_size(value: object, name: str) -> int:
    """A quantity of bytes (``containerLogMaxSize``: ``"10Mi"``)."""
    try:
        return Quantity.parse(str(value).strip()).value()
    except QuantityError as err:
        raise ConfigError(field_label(name), str(err)) from None


def _parse_gates(value: object) -> dict[str, bool]:
    try:
        return parse_feature_gates(value)  # type: ignore[arg-type]
    except FeatureGateError as err:
        raise ConfigError(field_label("featureGates"), str(err)) from None


def _parse_min_reclaim(value: object) -> tuple[EvictionThreshold, ...]:
    label = field_label("evictionMinimumReclaim")
    if not value:
        return ()
    pairs = _split_pairs(value, "=", label) if isinstance(value, str) else value
    if not isinstance(pairs, Mapping):
        raise ConfigError(label, f"expected signal=value pairs, got {value!r}")
    out = []
    for signal, raw in pairs.items():
        signal = str(signal)
        if signal not in SIGNALS:
            raise ConfigError(label, f"unsupported eviction signal {signal}")
        text = str(raw).strip()
        if text.endswith("%"):
            try:
                pct = Fraction(text[:-1]) / 100
            except (ValueError, ZeroDivisionError):
                raise ConfigError(label, f"invalid percentage {text!r}") from None
            if pct < 0:
                raise ConfigError(label, f"eviction percentage minimum reclaim {signal} must be positive: {text}")
            out.append(EvictionThreshold(signal, "<", percentage=pct, text=text))
            continue
        try:
            q = Quantity.parse(text)
        except QuantityError as err:
            raise ConfigError(label, f"{signal}: {err}") from None
        if q.sign() < 0:
            raise ConfigError(label, f"negative eviction minimum reclaim specified for {signal}")
        out.append(EvictionThreshold(signal, "<", quantity=q.value(), text=text))
    return tuple(out)


__all__ = [
    "API_VERSION", "ConfigError", "DEFAULT_CAPACITY", "DEFAULT_EVICTION_HARD", "DEFAULT_MAX_PODS",
    "EvictionThreshold", "KIND", "NodeConfig", "SIGNALS", "field_label", "format_duration",
    "SIGNAL_RESOURCES", "check_reservation", "eviction_reservation", "load_kubelet_configuration", "parse_duration",
    "parse_duration_or_days", "parse_eviction_thresholds", "parse_resource_pairs", "reservation", "reservation_errors",
]
