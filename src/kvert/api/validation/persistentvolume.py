"""core/v1 PersistentVolume (``ValidatePersistentVolume``, ``..Spec``, ``..Update``,
``..StatusUpdate`` of ``pkg/apis/core/validation``), also the ``inlineVolumeSpec`` of a
VolumeAttachment (the spec checked "in the context of inline volumes").

* ``accessModes``: at least one, each supported, ReadWriteOncePod alone;
* ``capacity``: exactly ``storage``, greater than zero (not for inline specs);
* ``persistentVolumeReclaimPolicy``: Delete, Recycle or Retain (inline: Retain only); a
  hostPath of ``/`` may not be recycled;
* exactly one volume source ("must specify a volume type", "may not specify more than 1
  volume type", checked in upstream's order); a ``local`` volume needs ``nodeAffinity``;
* ``storageClassName`` and ``volumeAttributesClassName`` DNS subdomains, the latter with a
  ``csi`` source only; ``volumeMode`` Block or Filesystem;
* on update the volume source and ``volumeMode`` are immutable (a CSI source may gain a
  ``controllerExpandSecretRef``), ``nodeAffinity`` once set.

Of the volume sources' own fields kvert checks those of hostPath, nfs, local, csi,
gcePersistentDisk and awsElasticBlockStore (the sources a kvert cluster meets); the other
sources are counted, their fields not checked.
"""

from __future__ import annotations

import posixpath
from typing import Any

from kvert.api.names import is_dns1123_subdomain
from kvert.api.types import Obj

from . import names
from .common import (
    IMMUTABLE_MSG,
    IS_NOT_POSITIVE_MSG,
    Causes,
    child,
    dict_field,
    forbidden,
    get_list,
    invalid,
    key,
    not_supported,
    required,
)
from .diff import normalized
from .meta import validate_object_meta, validate_object_meta_update
from .pod import validate_node_selector
from .resourcelist import parse

ACCESS_MODES = ("ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod")
RECLAIM_POLICIES = ("Delete", "Recycle", "Retain")
VOLUME_MODES = ("Block", "Filesystem")
HOST_PATH_TYPES = ("", "BlockDevice", "CharDevice", "Directory", "DirectoryOrCreate", "File",
                   "FileOrCreate", "Socket")
INLINE_MSG = "may not be specified in the context of inline volumes"
ONE_TYPE_MSG = "may not specify more than 1 volume type"
PD_PARTITION_MSG = "must be between 1 and 255, inclusive"

# The PersistentVolumeSource members in the order ValidatePersistentVolumeSpec counts them,
# with the path its "more than 1" message names (upstream spells cephfs "cephFS" there).
VOLUME_SOURCES: tuple[tuple[str, str], ...] = (
    ("hostPath", "hostPath"), ("gcePersistentDisk", "gcePersistentDisk"),
    ("awsElasticBlockStore", "awsElasticBlockStore"), ("glusterfs", "glusterfs"),
    ("flocker", "flocker"), ("nfs", "nfs"), ("rbd", "rbd"), ("quobyte", "quobyte"),
    ("cephfs", "cephFS"), ("iscsi", "iscsi"), ("cinder", "cinder"), ("fc", "fc"),
    ("flexVolume", ""), ("azureFile", "azureFile"), ("vsphereVolume", "vsphereVolume"),
    ("photonPersistentDisk", "photonPersistentDisk"), ("portworxVolume", "portworxVolume"),
    ("azureDisk", "azureDisk"), ("scaleIO", "scaleIO"), ("local", "local"),
    ("storageos", "storageos"), ("csi", "csi"))
SOURCE_FIELDS = frozenset(name for name, _ in VOLUME_SOURCES)


def validate_csi_driver_name(name: Any, path: str) -> Causes:
    """``ValidateCSIDriverName``: required, at most 63 characters, a DNS subdomain (lower-cased)."""
    if not isinstance(name, str) or not name:
        return [required(path)]
    errs: Causes = []
    if len(name) > 63:
        errs.append(invalid(path, name, "must be no more than 63 characters"))
    errs.extend(invalid(path, name, m) for m in is_dns1123_subdomain(name.lower()))
    return errs


def _no_backsteps(value: str, path: str) -> Causes:
    if ".." in value.split("/"):
        return [invalid(path, value, "must not contain '..'")]
    return []


def _host_path(source: Obj, path: str) -> Causes:
    p = source.get("path")
    if not isinstance(p, str) or not p:
        return [required(child(path, "path"))]
    errs = _no_backsteps(p, child(path, "path"))
    kind = source.get("type")
    if kind is not None and kind not in HOST_PATH_TYPES:
        errs.append(not_supported(child(path, "type"), kind, HOST_PATH_TYPES))
    return errs


def _nfs(source: Obj, path: str) -> Causes:
    errs: Causes = []
    if not source.get("server"):
        errs.append(required(child(path, "server")))
    p = source.get("path")
    if not isinstance(p, str) or not p:
        errs.append(required(child(path, "path")))
    elif not p.startswith("/"):
        errs.append(invalid(child(path, "path"), p, "must be an absolute path"))
    return errs


def _local(source: Obj, path: str) -> Causes:
    p = source.get("path")
    if not isinstance(p, str) or not p:
        return [required(child(path, "path"))]
    return _no_backsteps(p, child(path, "path"))


def _csi(source: Obj, path: str) -> Causes:
    errs = validate_csi_driver_name(source.get("driver"), child(path, "driver"))
    if not source.get("volumeHandle"):
        errs.append(required(child(path, "volumeHandle")))
    return errs


def _disk(id_field: str) -> Any:
    def check(source: Obj, path: str) -> Causes:
        errs: Causes = []
        if not source.get(id_field):
            errs.append(required(child(path, id_field)))
        partition = source.get("partition")
        if isinstance(partition, int) and not 0 <= partition <= 255:
            errs.append(invalid(child(path, "partition"), partition, PD_PARTITION_MSG))
        return errs
    return check


# source -> (its own checks, the path they report under: gcePersistentDisk's is upstream's
# "persistentDisk")
_SOURCE_CHECKS = {
    "hostPath": (_host_path, "hostPath"), "nfs": (_nfs, "nfs"), "local": (_local, "local"),
    "csi": (_csi, "csi"), "gcePersistentDisk": (_disk("pdName"), "persistentDisk"),
    "awsElasticBlockStore": (_disk("volumeID"), "awsElasticBlockStore"),
}


def _volume_node_affinity(affinity: Any, path: str) -> tuple[bool, Causes]:
    """``validateVolumeNodeAffinity``: whether ``required`` is set, and its checks."""
    if not isinstance(affinity, dict):
        return False, [required(path, "must specify required node constraints")]
    selector = affinity.get("required")
    if selector is None:
        return False, [required(child(path, "required"), "must specify required node constraints")]
    return True, validate_node_selector(selector, child(path, "required"))


def validate_persistent_volume_spec(spec: Any, path: str, *, inline: bool = False) -> Causes:
    spec = spec if isinstance(spec, dict) else {}
    errs: Causes = []
    if inline:
        if spec.get("claimRef") is not None:
            errs.append(forbidden(child(path, "claimRef"), INLINE_MSG))
        if spec.get("capacity"):
            errs.append(forbidden(child(path, "capacity"), INLINE_MSG))
        if spec.get("csi") is None:
            errs.append(required(child(path, "csi"),
                                 "has to be specified in the context of inline volumes"))
    modes = get_list(spec, "accessModes", path, errs)
    modes_path = child(path, "accessModes")
    if not modes:
        errs.append(required(modes_path))
    rwop = other = False
    for mode in modes:
        if mode not in ACCESS_MODES:
            errs.append(not_supported(modes_path, mode, ACCESS_MODES))
        elif mode == "ReadWriteOncePod":
            rwop = True
        else:
            other = True
    if rwop and other:
        errs.append(forbidden(modes_path, "may not use ReadWriteOncePod with other access modes"))
    if not inline:
        errs.extend(_capacity(spec, child(path, "capacity")))
    policy = spec.get("persistentVolumeReclaimPolicy")
    policy_path = child(path, "persistentVolumeReclaimPolicy")
    if policy:
        if inline and policy != "Retain":
            errs.append(forbidden(policy_path, "may only be Retain in the context of inline volumes"))
        elif not inline and policy not in RECLAIM_POLICIES:
            errs.append(not_supported(policy_path, policy, RECLAIM_POLICIES))
    has_affinity = False
    if spec.get("nodeAffinity") is not None:
        if inline:
            errs.append(forbidden(child(path, "nodeAffinity"), INLINE_MSG))
        else:
            has_affinity, affinity_errs = _volume_node_affinity(
                spec["nodeAffinity"], child(path, "nodeAffinity"))
            errs.extend(affinity_errs)
    errs.extend(_sources(spec, path, has_affinity))
    host = spec.get("hostPath")
    if (isinstance(host, dict) and isinstance(host.get("path"), str) and host["path"]
            and posixpath.normpath(host["path"]) in ("/", "//") and policy == "Recycle"):
        errs.append(forbidden(policy_path, "may not be 'recycle' for a hostPath mount of '/'"))
    storage_class = spec.get("storageClassName")
    if isinstance(storage_class, str) and storage_class:
        if inline:
            errs.append(forbidden(child(path, "storageClassName"), INLINE_MSG))
        else:
            errs.extend(names.validate_dns1123_subdomain(storage_class,
                                                         child(path, "storageClassName")))
    mode = spec.get("volumeMode")
    if mode is not None:
        if inline and mode != "Filesystem":
            errs.append(forbidden(child(path, "volumeMode"), "may not specify volumeMode other "
                                  "than Filesystem in the context of inline volumes"))
        elif not inline and mode not in VOLUME_MODES:
            errs.append(not_supported(child(path, "volumeMode"), mode, VOLUME_MODES))
    vac = spec.get("volumeAttributesClassName")
    if vac is not None:
        vac_path = child(path, "volumeAttributesClassName")
        if vac == "":
            errs.append(required(vac_path, "an empty string is disallowed"))
        elif isinstance(vac, str):
            errs.extend(names.validate_dns1123_subdomain(vac, vac_path))
        if spec.get("csi") is None:
            errs.append(required(child(path, "csi"),
                                 "has to be specified when using volumeAttributesClassName"))
    return errs


def _capacity(spec: Obj, path: str) -> Causes:
    capacity = spec.get("capacity")
    errs: Causes = []
    if not isinstance(capacity, dict) or not capacity:
        errs.append(required(path))
        capacity = {}
    if "storage" not in capacity or len(capacity) > 1:
        errs.append(not_supported(path, capacity, ["storage"]))
    for name, value in capacity.items():
        quantity = parse(value, key(path, name), errs)
        if quantity is not None and quantity.sign() <= 0:
            errs.append(invalid(key(path, name), str(quantity), IS_NOT_POSITIVE_MSG))
    return errs


def _sources(spec: Obj, path: str, has_affinity: bool) -> Causes:
    errs: Causes = []
    count = 0
    for name, more_path in VOLUME_SOURCES:
        source = spec.get(name)
        if source is None:
            continue
        if count and more_path:
            errs.append(forbidden(child(path, more_path), ONE_TYPE_MSG))
            continue
        count += 1
        check = _SOURCE_CHECKS.get(name)
        if check is not None:
            fn, sub = check
            errs.extend(fn(source if isinstance(source, dict) else {}, child(path, sub)))
        if name == "local" and not has_affinity:
            errs.append(required(child(path, "nodeAffinity"), "Local volume requires node affinity"))
    if count == 0:
        errs.append(required(path, "must specify a volume type"))
    return errs


def volume_source(spec: Obj) -> Obj:
    """The PersistentVolumeSource members of a spec (the inlined union)."""
    return {k: v for k, v in spec.items() if k in SOURCE_FIELDS}


def validate_persistent_volume(pv: Obj) -> Causes:
    errs = validate_object_meta(pv, namespaced=False)
    errs.extend(validate_persistent_volume_spec(pv.get("spec"), "spec"))
    return errs


def validate_persistent_volume_update(new: Obj, old: Obj) -> Causes:
    errs = validate_object_meta_update(new, old)
    errs.extend(c for c in validate_persistent_volume(new) if not c.field.startswith("metadata"))
    new_spec, old_spec = dict_field(new, "spec"), dict_field(old, "spec")
    new_source, old_source = volume_source(new_spec), volume_source(old_spec)
    old_csi, new_csi = old_source.get("csi"), new_source.get("csi")
    if (isinstance(old_csi, dict) and old_csi.get("controllerExpandSecretRef") is None
            and isinstance(new_csi, dict) and new_csi.get("controllerExpandSecretRef") is not None):
        # a CSI volume may gain the secret its driver needs to expand it
        new_source["csi"] = {k: v for k, v in new_csi.items() if k != "controllerExpandSecretRef"}
    if normalized(new_source) != normalized(old_source):
        errs.append(forbidden("spec.persistentvolumesource",
                              "spec.persistentvolumesource is immutable after creation"))
    if new_spec.get("volumeMode") != old_spec.get("volumeMode"):
        errs.append(invalid("volumeMode", new_spec.get("volumeMode"), IMMUTABLE_MSG))
    if (old_spec.get("nodeAffinity") is not None
            and normalized(new_spec.get("nodeAffinity")) != normalized(old_spec.get("nodeAffinity"))):
        errs.append(invalid("nodeAffinity", new_spec.get("nodeAffinity"), IMMUTABLE_MSG))
    return errs


def validate_persistent_volume_status_update(new: Obj, old: Obj) -> Causes:
    """``ValidatePersistentVolumeStatusUpdate``: the metadata rules (the status' own fields
    are not checked upstream either)."""
    return validate_object_meta_update(new, old)
