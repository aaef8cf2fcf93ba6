"""Volume plugins of the default profile, accepted and inactive. Being built."""

from __future__ import annotations

from kvert.scheduler.framework import Plugin


class VolumeRestrictions(Plugin):
    name = "VolumeRestrictions"


class NodeVolumeLimits(Plugin):
    name = "NodeVolumeLimits"


class VolumeBinding(Plugin):
    name = "VolumeBinding"


class VolumeZone(Plugin):
    name = "VolumeZone"


class DynamicResources(Plugin):
    name = "DynamicResources"


NO_OP_PLUGINS = (VolumeRestrictions, NodeVolumeLimits, VolumeBinding, VolumeZone, DynamicResources)


def legacy_volume_limits() -> dict[str, type]:
    """The in-tree cloud volume-limit plugins older profiles name: accepted, no-ops."""
    out: dict[str, type] = {}
    for name in ("EBSLimits", "GCEPDLimits", "AzureDiskLimits", "CinderLimits"):
        out[name] = type(name, (Plugin,), {"name": name})
    return out
