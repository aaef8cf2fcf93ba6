"""Columns and rows of PersistentVolumes, StorageClasses, VolumeAttributesClasses,
VolumeAttachments, CSIDrivers and CSINodes, after ``pkg/printers/internalversion``'s
``printPersistentVolume``, ``printStorageClass``, ``printVolumeAttributesClass``,
``printVolumeAttachment``, ``printCSIDriver`` and ``printCSINode``.
"""

from __future__ import annotations

from typing import Any

from kvert.api.storagedefaults import is_default_class

from .builtin import RowFunc, _age, _deleting, _l, _m, _meta, _name, _quantity, _s, age_col, col, name_col
from .workloads import BETA_STORAGE_CLASS, access_modes_string

PV_COLUMNS = [
    name_col(),
    col("Capacity", "string", "capacity is the description of the persistent volume's resources "
        "and capacity. More info: "
        "https://kubernetes.io/docs/concepts/storage/persistent-volumes#capacity"),
    col("Access Modes", "string", "accessModes contains all ways the volume can be mounted. More "
        "info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#access-modes"),
    col("Reclaim Policy", "string", "persistentVolumeReclaimPolicy defines what happens to a "
        "persistent volume when released from its claim. Valid options are Retain (default for "
        "manually created PersistentVolumes), Delete (default for dynamically provisioned "
        "PersistentVolumes), and Recycle (deprecated). Recycle must be supported by the volume "
        "plugin underlying this PersistentVolume. More info: "
        "https://kubernetes.io/docs/concepts/storage/persistent-volumes#reclaiming"),
    col("Status", "string", "phase indicates if a volume is available, bound to a claim, or "
        "released by a claim. More info: "
        "https://kubernetes.io/docs/concepts/storage/persistent-volumes#phase"),
    col("Claim", "string", "claimRef is part of a bi-directional binding between "
        "PersistentVolume and PersistentVolumeClaim. Expected to be non-nil when bound. "
        "claim.VolumeName is the authoritative bind between PV and PVC. More info: "
        "https://kubernetes.io/docs/concepts/storage/persistent-volumes#binding"),
    col("StorageClass", "string", "StorageClass of the pv"),
    col("VolumeAttributesClass", "string", "VolumeAttributesClass of the pv"),
    col("Reason", "string", "reason is a brief CamelCase string that describes any failure and "
        "is meant for machine parsing and tidy display in the CLI."),
    age_col(),
    col("VolumeMode", "string", "volumeMode defines if a volume is intended to be used with a "
        "formatted filesystem or to remain in raw block state. Value of Filesystem is implied "
        "when not included in spec.", priority=1),
]


def persistent_volume_row(pv: dict, now: int) -> list[Any]:
    spec, status = _m(pv.get("spec")), _m(pv.get("status"))
    ref = spec.get("claimRef")
    claim = f"{_s(_m(ref).get('namespace'))}/{_s(_m(ref).get('name'))}" if ref is not None else ""
    storage = _m(spec.get("capacity")).get("storage")
    phase = "Terminating" if _deleting(pv) else _s(status.get("phase"))
    # GetPersistentVolumeClass: the beta annotation wins over the field
    annotations = _m(_meta(pv).get("annotations"))
    storage_class = annotations.get(BETA_STORAGE_CLASS, spec.get("storageClassName"))
    vac, mode = spec.get("volumeAttributesClassName"), spec.get("volumeMode")
    return [_name(pv), "0" if storage is None else _quantity(storage),
            access_modes_string(spec.get("accessModes")),
            _s(spec.get("persistentVolumeReclaimPolicy")), phase, claim, _s(storage_class),
            "<unset>" if vac is None else _s(vac), _s(status.get("reason")), _age(pv, now),
            "<unset>" if mode is None else _s(mode)]


STORAGE_CLASS_COLUMNS = [
    name_col(),
    col("Provisioner", "string", "provisioner indicates the type of the provisioner."),
    col("ReclaimPolicy", "string", "reclaimPolicy controls the reclaimPolicy for dynamically "
        "provisioned PersistentVolumes of this storage class. Defaults to Delete."),
    col("VolumeBindingMode", "string", "volumeBindingMode indicates how PersistentVolumeClaims "
        "should be provisioned and bound.  When unset, VolumeBindingImmediate is used. This field "
        "is only honored by servers that enable the VolumeScheduling feature."),
    col("AllowVolumeExpansion", "string", "allowVolumeExpansion shows whether the storage class "
        "allow volume expand."),
    age_col(),
]


def storage_class_row(sc: dict, now: int) -> list[Any]:
    """The name says "(default)" when an is-default-class annotation is "true"; an unset
    policy, mode or expansion prints as its default."""
    name = _name(sc) + (" (default)" if is_default_class(sc) else "")
    return [name, _s(sc.get("provisioner")), _s(sc.get("reclaimPolicy")) or "Delete",
            _s(sc.get("volumeBindingMode")) or "Immediate",
            sc.get("allowVolumeExpansion") is True, _age(sc, now)]


VOLUME_ATTRIBUTES_CLASS_COLUMNS = [
    name_col(),
    col("DriverName", "string", "Name of the CSI driver This field is immutable."),
    age_col(),
]


def volume_attributes_class_row(vac: dict, now: int) -> list[Any]:
    return [_name(vac), _s(vac.get("driverName")), _age(vac, now)]


VOLUME_ATTACHMENT_COLUMNS = [
    name_col(),
    col("Attacher", "string", "attacher indicates the name of the volume driver that MUST handle "
        "this request. This is the name returned by GetPluginName().", format_="name"),
    col("PV", "string", "persistentVolumeName represents the name of the persistent volume to "
        "attach."),
    col("Node", "string", "nodeName represents the node that the volume should be attached to."),
    col("Attached", "boolean", "attached indicates the volume is successfully attached. This "
        "field must only be set by the entity completing the attach operation, i.e. the "
        "external-attacher."),
    age_col(),
]


def volume_attachment_row(va: dict, now: int) -> list[Any]:
    spec = _m(va.get("spec"))
    return [_name(va), _s(spec.get("attacher")),
            _s(_m(spec.get("source")).get("persistentVolumeName")), _s(spec.get("nodeName")),
            _m(va.get("status")).get("attached") is True, _age(va, now)]


CSI_DRIVER_COLUMNS = [
    name_col(),
    col("AttachRequired", "boolean", "attachRequired indicates this CSI volume driver requires an "
        "attach operation (because it implements the CSI ControllerPublishVolume() method), and "
        "that the Kubernetes attach detach controller should call the attach volume interface "
        "which checks the volumeattachment status and waits until the volume is attached before "
        "proceeding to mounting."),
    col("PodInfoOnMount", "boolean", "podInfoOnMount indicates this CSI volume driver requires "
        "additional pod information (like podName, podUID, etc.) during mount operations, if set "
        "to true."),
    col("StorageCapacity", "boolean", "storageCapacity indicates that the CSI volume driver wants "
        "pod scheduling to consider the storage capacity that the driver deployment will report "
        "by creating CSIStorageCapacity objects with capacity information, if set to true."),
    col("TokenRequests", "string", "tokenRequests indicates the CSI driver needs pods' service "
        "account tokens it is mounting volume for to do necessary authentication."),
    col("RequiresRepublish", "boolean", "requiresRepublish indicates the CSI driver wants "
        "`NodePublishVolume` being periodically called to reflect any possible change in the "
        "mounted volume."),
    col("Modes", "string", "volumeLifecycleModes defines what kind of volumes this CSI volume "
        "driver supports."),
    age_col(),
]


def csi_driver_row(driver: dict, now: int) -> list[Any]:
    spec = _m(driver.get("spec"))
    requests = spec.get("tokenRequests")
    tokens = ("<unset>" if requests is None
              else ",".join(_s(_m(r).get("audience")) for r in _l(requests)))
    modes = ",".join(_s(m) for m in _l(spec.get("volumeLifecycleModes"))) or "<none>"
    return [_name(driver), spec.get("attachRequired") is not False,
            spec.get("podInfoOnMount") is True, spec.get("storageCapacity") is True, tokens,
            spec.get("requiresRepublish") is True, modes, _age(driver, now)]


CSI_NODE_COLUMNS = [
    name_col(),
    col("Drivers", "integer", "Drivers indicates the number of CSI drivers registered on the node"),
    age_col(),
]


def csi_node_row(node: dict, now: int) -> list[Any]:
    return [_name(node), len(_l(_m(node.get("spec")).get("drivers"))), _age(node, now)]


def _rows(fn) -> RowFunc:
    return lambda obj, now: (fn(obj, now), None)


PRINTERS = {
    ("", "PersistentVolume"): (PV_COLUMNS, _rows(persistent_volume_row)),
    ("storage.k8s.io", "StorageClass"): (STORAGE_CLASS_COLUMNS, _rows(storage_class_row)),
    ("storage.k8s.io", "VolumeAttributesClass"):
        (VOLUME_ATTRIBUTES_CLASS_COLUMNS, _rows(volume_attributes_class_row)),
    ("storage.k8s.io", "VolumeAttachment"): (VOLUME_ATTACHMENT_COLUMNS, _rows(volume_attachment_row)),
    ("storage.k8s.io", "CSIDriver"): (CSI_DRIVER_COLUMNS, _rows(csi_driver_row)),
    ("storage.k8s.io", "CSINode"): (CSI_NODE_COLUMNS, _rows(csi_node_row)),
}
