"""Feature gates (``--feature-gates A=true,B=false``): upstream's gates where Kubernetes 1.36
(the baseline) keeps a behaviour switchable, with 1.36's defaults (1.37 alpha gates off), and
kvert's own gates for behaviours where the seeds and upstream differ: upstream's behaviour is
the default, the seed's is behind a gate.

Upstream gates keep upstream's names and defaults; gates that exist only in kvert (a seed
behaviour no Kubernetes release has) start with ``Kvert``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager

# name -> (default, stage, what turning it on does)
GATES: dict[str, tuple[bool, str, str]] = {
    "PodLevelResources": (
        True, "beta",
        "pod-level spec.resources (KEP-2837); off, a pod that sets them is refused"),
    "InPlacePodLevelResourcesVerticalScaling": (
        True, "beta",
        "pod-level resources are resized in place through pods/resize (KEP-5419, beta in 1.36); "
        "off, a change to spec.resources is refused as in 1.35"),
    "InPlacePodVerticalScalingInitContainers": (
        True, "beta",
        "running non-sidecar init containers may be resized in place (kubernetes#137352, 1.36); "
        "off, their resources are immutable as in 1.35"),
    "NodeDeclaredFeatures": (
        True, "beta",
        "nodes declare features in status.declaredFeatures; the scheduler filters on them and "
        "a pod update that needs an undeclared feature is refused (KEP-5328, beta in 1.36)"),
    "InPlacePodVerticalScalingSchedulerPreemption": (
        False, "alpha",
        "the scheduler preempts lower-priority pods so that a Deferred resize can proceed "
        "(KEP-5836, alpha in 1.37)"),
    "InPlacePodVerticalScalingMemoryBackedVolumes": (
        False, "alpha",
        "the sizeLimit of a memory-backed emptyDir may be resized in place (KEP-6030, alpha in "
        "1.37)"),
    "InPlacePodVerticalScalingExclusiveCPUs": (
        False, "alpha",
        "Guaranteed pods on a static CPU manager node may be resized in place to whole CPUs "
        "(seed 000's rule); off, any CPU resize of such a pod is Infeasible"),
    "KvertResizeRollback": (
        False, "kvert",
        "a failed UpdateContainerResources rolls back the containers already updated in that pass "
        "and skips the rest (seed 000); off, the other updates still proceed (Kubernetes)"),
    "KvertResizeInfeasibleAtNode": (
        False, "kvert",
        "the API server admits a resize above the node's allocatable and the node reports it "
        "Infeasible (seed 000's walk-through, Kubernetes 1.35); off, PodResizeValidator refuses "
        "it with 403 (Kubernetes 1.36)"),
    "KvertMemoryLimitReclaim": (
        False, "kvert",
        "a memory limit lowered below the container's usage is set just above the usage until the "
        "kernel reclaims (seed 000's control loop); off, the resize leaves the container untouched "
        "with PodResizeInProgress/Error (Kubernetes 1.34+)"),
}


class FeatureGateError(ValueError):
    pass


def parse_feature_gates(value: str | Mapping[str, object] | None,
                        known: Mapping[str, tuple[bool, str, str]] = GATES) -> dict[str, bool]:
    """``"A=true,B=false"`` (flag form) or ``{"A": true}`` (file form) -> the gates set, among
    ``known`` (Kubernetes' gates by default; the VPA's components have their own)."""
    if not value:
        return {}
    if isinstance(value, str):
        pairs: dict[str, object] = {}
        for part in value.split(","):
            part = part.strip()
            if not part:
                continue
            if "=" not in part:
                raise FeatureGateError(f"missing bool value for {part}")
            key, text = (s.strip() for s in part.split("=", 1))
            pairs[key] = text
    elif isinstance(value, Mapping):
        pairs = dict(value)
    else:
        raise FeatureGateError(f"expected name=bool pairs, got {value!r}")
    out: dict[str, bool] = {}
    for name, raw in pairs.items():
        if name not in known:
            raise FeatureGateError(f"unrecognized feature gate: {name}")
        if isinstance(raw, bool):
            out[name] = raw
        elif isinstance(raw, str) and raw.lower() in ("true", "false"):
            out[name] = raw.lower() == "true"
        else:
            raise FeatureGateError(f"invalid value of {name}={raw}, err: strconv.ParseBool: parsing "
                                   f"{str(raw)!r}: invalid syntax")
    return out


# The API server's gates, process-wide as kube-apiserver's DefaultFeatureGate: validation of the
# served kinds reads them (set once at start from --feature-gates; tests use overridden()).
_server_gates: dict[str, bool] = {}


def set_server_gates(gates: Mapping[str, bool]) -> None:
    """Set the API server's gates (``kvert apiserver --feature-gates``, ``kvert up``)."""
    unknown = [name for name in gates if name not in GATES]
    if unknown:
        raise FeatureGateError(f"unrecognized feature gate: {unknown[0]}")
    _server_gates.clear()
    _server_gates.update(gates)


def server_enabled(name: str) -> bool:
    """Is the gate on for the API server's validation and admission?"""
    return enabled(_server_gates, name)


@contextmanager
def overridden(**gates: bool) -> Iterator[None]:
    """The API server's gates with ``gates`` changed, restored on exit (for tests)."""
    saved = dict(_server_gates)
    set_server_gates({**saved, **gates})
    try:
        yield
    finally:
        set_server_gates(saved)


def enabled(gates: Mapping[str, bool] | None, name: str,
            known: Mapping[str, tuple[bool, str, str]] = GATES) -> bool:
    """Is the gate on, given the gates set (the default otherwise)?"""
    if name not in known:
        raise KeyError(f"unknown feature gate {name!r}")
    return bool((gates or {}).get(name, known[name][0]))


__all__ = ["FeatureGateError", "GATES", "enabled", "overridden", "parse_feature_gates",
           "server_enabled", "set_server_gates"]
