"""The volume plugins of the default profile: accepted, validated, inactive.

kube-scheduler 1.35's default profile has VolumeRestrictions, NodeVolumeLimits,
VolumeBinding, VolumeZone (PersistentVolumes, CSI attach limits, topology of volumes). kvert
has no PersistentVolumes or CSINodes yet, so every pod is, to these plugins, a pod without
such volumes,
and they do what upstream does for such a pod: PreFilter answers Skip (so their Filter never
runs), VolumeBinding's PreScore answers Skip (it scores only with StorageCapacityScoring on),
and Reserve / PreBind / PreEnqueue / PostFilter let the pod through. They never filter or
score anything. They implement the extension points their upstream counterparts do, so
configurations naming them -- enabled, disabled, re-weighted at any of those points, with their
``pluginConfig`` args -- load as they do in kube-scheduler, and their args are validated and
defaulted the same way:

* ``VolumeBindingArgs``: ``bindTimeoutSeconds`` (default 600) must not be negative; ``shape``
  is refused, as kube-scheduler refuses it while the StorageCapacityScoring feature gate is
  off (alpha, off in 1.35).
* VolumeRestrictions, NodeVolumeLimits and VolumeZone take no args.

The in-tree cloud volume-limit plugins older profiles name (EBSLimits, GCEPDLimits,
AzureDiskLimits, CinderLimits; replaced by NodeVolumeLimits for CSI) are accepted by name as
no-ops too, so older configurations load.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from kvert.api.durations import SECOND, DurationError, parse_go_duration_ns
from kvert.scheduler.framework import Code, CycleState, FilterResult, Handle, Plugin, Status
from kvert.scheduler.plugins.noderesources import ConfigError, check_fields


def parse_duration(value: Any, path: str) -> float:
    """A ``metav1.Duration`` (Go's ``time.ParseDuration`` text: ``"10s"``, ``"1m30s"``), in
    seconds; errors name the field at ``path``."""
    text = value.strip() if isinstance(value, str) else None
    if text is None:
        raise ConfigError(f"{path}: Invalid value: {value!r}: must be a duration such as \"10s\"")
    try:
        return parse_go_duration_ns(text) / SECOND
    except DurationError as e:
        raise ConfigError(f"{path}: Invalid value: {value!r}: {e}") from e


class _Inactive(Plugin):
    """PreFilter skips the plugin (no volumes or claims to check); Filter, never reached,
    would let every node pass. Its args type has no fields unless ``ARGS_FIELDS`` says so."""

    ARGS_FIELDS: ClassVar[dict] = {}

    def __init__(self, args: dict[str, Any] | None = None, handle: Handle | None = None):
        super().__init__(args, handle)
        check_fields(self.args, self.ARGS_FIELDS)

    def pre_filter(self, state: CycleState, pod: dict, nodes):
        return None, Status(Code.SKIP)

    def filter(self, state: CycleState, pod: dict, nodes) -> FilterResult:
        return FilterResult.ok(len(nodes))

    def events_to_register(self) -> list:
        return []   # it rejects no pod, so no event can make one schedulable


class VolumeRestrictions(_Inactive):
    """Upstream: PreFilter/Filter refusing nodes where a ReadWriteOncePod claim or a
    conflicting inline volume is already in use. A no-op here: kvert has no volumes."""

    name = "VolumeRestrictions"


class NodeVolumeLimits(_Inactive):
    """Upstream: Filter enforcing the CSI attach limits of CSINode. A no-op here: kvert has no
    CSI volumes."""

    name = "NodeVolumeLimits"


class VolumeZone(_Inactive):
    """Upstream: Filter keeping pods on nodes in the zones of their bound PersistentVolumes.
    A no-op here: kvert has no PersistentVolumes."""

    name = "VolumeZone"


class VolumeBinding(_Inactive):
    """Upstream: PreFilter/Filter/Reserve/PreBind binding PersistentVolumeClaims (and scoring
    storage capacity behind a feature gate). A no-op here: kvert has no
    PersistentVolumeClaims. Args as ``ValidateVolumeBindingArgs``."""

    name = "VolumeBinding"
    ARGS_FIELDS: ClassVar[dict] = {"bindTimeoutSeconds": None, "shape": {"utilization": None, "score": None}}

    def __init__(self, args: dict[str, Any] | None = None, handle: Handle | None = None):
        super().__init__(args, handle)
        timeout = self.args.get("bindTimeoutSeconds", 600)
        if timeout is None:
            timeout = 600
        if not isinstance(timeout, int) or isinstance(timeout, bool):
            raise ConfigError(f"bindTimeoutSeconds: Invalid value: {timeout!r}: must be an integer")
        if timeout < 0:
            raise ConfigError(f"bindTimeoutSeconds: Invalid value: {timeout}: invalid "
                              "BindTimeoutSeconds, should not be a negative value")
        if self.args.get("shape") is not None:
            raise ConfigError(f"shape: Invalid value: {self.args['shape']!r}: unexpected field "
                              "`shape`, remove it or turn on the feature gate "
                              "StorageCapacityScoring")
        self.bind_timeout_seconds = timeout

    def pre_score(self, state: CycleState, pod: dict, nodes) -> Status | None:
        return Status(Code.SKIP)

    def score(self, state: CycleState, pod: dict, nodes) -> np.ndarray:
        return np.zeros(len(nodes), np.int64)

    def reserve(self, state: CycleState, pod: dict, node: str) -> Status | None:
        return None

    def unreserve(self, state: CycleState, pod: dict, node: str) -> None:
        return None

    def pre_bind(self, state: CycleState, pod: dict, node: str) -> Status | None:
        return None


NO_OP_PLUGINS = (VolumeRestrictions, NodeVolumeLimits, VolumeBinding, VolumeZone)


def legacy_volume_limits() -> dict[str, type]:
    """The in-tree cloud volume-limit plugins older profiles name: accepted, no-ops."""
    out: dict[str, type] = {}
    for name in ("EBSLimits", "GCEPDLimits", "AzureDiskLimits", "CinderLimits"):
        out[name] = type(name, (_Inactive,), {
            "name": name,
            "__doc__": f"{name}: an in-tree cloud volume-limit plugin of older releases; "
                       "accepted by name, a no-op (kvert has no volumes)."})
    return out
