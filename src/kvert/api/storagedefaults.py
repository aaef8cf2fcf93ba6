"""Defaulting of the storage kinds: ``SetDefaults_PersistentVolume`` (``pkg/apis/core/v1``)
and ``SetDefaults_StorageClass`` / ``SetDefaults_CSIDriver`` (``pkg/apis/storage/v1``).
Registered in :data:`kvert.api.defaults.DEFAULTERS`; like every defaulter, each fills only
what is absent.

* PersistentVolume: ``persistentVolumeReclaimPolicy: Retain``, ``volumeMode: Filesystem``,
  ``status.phase: Pending``;
* StorageClass: ``reclaimPolicy: Delete``, ``volumeBindingMode: Immediate``;
* CSIDriver: ``attachRequired: true``, ``podInfoOnMount``, ``storageCapacity``,
  ``requiresRepublish`` and ``seLinuxMount`` (SELinuxMountReadWriteOncePod, on) ``false``,
  ``fsGroupPolicy: ReadWriteOnceWithFSType``, ``volumeLifecycleModes: [Persistent]``.
"""

from __future__ import annotations

from typing import Any

from kvert.api.types import Obj

IS_DEFAULT_CLASS = "storageclass.kubernetes.io/is-default-class"
BETA_IS_DEFAULT_CLASS = "storageclass.beta.kubernetes.io/is-default-class"


def _fill(d: Obj, field: str, value: Any) -> None:
    if d.get(field) in (None, ""):
        d[field] = value


def _child(d: Obj, field: str) -> Obj | None:
    value = d.get(field)
    if value is None:
        value = d[field] = {}
    return value if isinstance(value, dict) else None


def default_persistent_volume(obj: Obj) -> None:
    spec = _child(obj, "spec")
    if spec is not None:
        _fill(spec, "persistentVolumeReclaimPolicy", "Retain")
        _fill(spec, "volumeMode", "Filesystem")
    status = _child(obj, "status")
    if status is not None:
        _fill(status, "phase", "Pending")


def default_storage_class(obj: Obj) -> None:
    _fill(obj, "reclaimPolicy", "Delete")
    _fill(obj, "volumeBindingMode", "Immediate")


def default_csi_driver(obj: Obj) -> None:
    spec = _child(obj, "spec")
    if spec is None:
        return
    for field, value in (("attachRequired", True), ("podInfoOnMount", False),
                         ("storageCapacity", False), ("fsGroupPolicy", "ReadWriteOnceWithFSType"),
                         ("requiresRepublish", False), ("seLinuxMount", False)):
        if spec.get(field) is None:
            spec[field] = value
    if not spec.get("volumeLifecycleModes"):
        spec["volumeLifecycleModes"] = ["Persistent"]


def is_default_class(storage_class: Obj) -> bool:
    """``IsDefaultAnnotation``: the GA or the beta annotation says "true"."""
    annotations = (storage_class.get("metadata") or {}).get("annotations") or {}
    return "true" in (annotations.get(IS_DEFAULT_CLASS), annotations.get(BETA_IS_DEFAULT_CLASS))
