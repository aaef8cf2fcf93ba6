"""The storage kinds' validation: storage.k8s.io/v1 StorageClass, VolumeAttributesClass,
VolumeAttachment, CSIDriver, CSINode and CSIStorageCapacity (``pkg/apis/storage/validation``),
below; PersistentVolumes are in ``persistentvolume.py``.

core/v1 PersistentVolumeClaim (``ValidatePersistentVolumeClaim`` and ``..Spec``), also the
claim templates of a StatefulSet (paths ``spec.volumeClaimTemplates[i].spec``).

* ``accessModes``: at least one, each ReadWriteOnce, ReadOnlyMany, ReadWriteMany or
  ReadWriteOncePod (the last alone);
* ``resources.requests[storage]`` is required and greater than zero;
* ``volumeMode`` Block or Filesystem; ``storageClassName`` a DNS subdomain; the selector valid;
* on update the spec may change only in ``resources.requests`` and
  ``volumeAttributesClassName``, but for ``volumeName`` set once (by the binder) and a
  ``storageClassName`` given to a claim that had none (RetroactiveDefaultStorageClass).
"""

from __future__ import annotations

from typing import Any

from kvert.api.names import is_qualified_name
from kvert.api.types import Obj

from . import names
from .common import (
    IMMUTABLE_MSG,
    IS_NEGATIVE_MSG,
    IS_NOT_POSITIVE_MSG,
    Causes,
    child,
    dict_field,
    dicts,
    duplicate,
    forbidden,
    get_dict,
    get_list,
    index,
    invalid,
    key,
    list_field,
    not_supported,
    required,
    too_long,
    type_error,
)
from .diff import normalized
from .meta import validate_label_selector, validate_object_meta, validate_object_meta_update
from .persistentvolume import validate_csi_driver_name, validate_persistent_volume_spec
from .resourcelist import parse, parse_resource_list

ACCESS_MODES = ("ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod")
VOLUME_MODES = ("Block", "Filesystem")
_UPDATABLE_SPEC = ("resources", "volumeAttributesClassName")
BETA_STORAGE_CLASS = "volume.beta.kubernetes.io/storage-class"
_SPEC_IMMUTABLE_MSG = ("spec is immutable after creation except resources.requests and "
                       "volumeAttributesClassName for bound claims")


def validate_claim_spec(spec: Any, path: str) -> Causes:
    if not isinstance(spec, dict):
        return [type_error(path, spec, "object")] if spec is not None else [required(path)]
    errs: Causes = []
    modes = get_list(spec, "accessModes", path, errs)
    modes_path = child(path, "accessModes")
    if not modes:
        errs.append(required(modes_path, "at least 1 access mode is required"))
    for mode in modes:
        if mode not in ACCESS_MODES:
            errs.append(not_supported(modes_path, mode, ACCESS_MODES))
    if "ReadWriteOncePod" in modes and len(modes) > 1:
        errs.append(forbidden(modes_path, "may not use ReadWriteOncePod with other access modes"))
    if spec.get("selector") is not None:
        errs.extend(validate_label_selector(spec["selector"], child(path, "selector")))
    resources = get_dict(spec, "resources", path, errs)
    res_path = child(path, "resources")
    requests = parse_resource_list(resources.get("requests"), child(res_path, "requests"), errs,
                                   name_check=None)
    storage_path = key(res_path, "storage")
    if "storage" not in requests and not any(c.field.startswith(child(res_path, "requests"))
                                             for c in errs):
        errs.append(required(storage_path))
    elif "storage" in requests and requests["storage"].sign() <= 0:
        errs.append(invalid(storage_path, str(requests["storage"]), IS_NOT_POSITIVE_MSG))
    mode = spec.get("volumeMode")
    if mode is not None and mode not in VOLUME_MODES:
        errs.append(not_supported(child(path, "volumeMode"), mode, VOLUME_MODES))
    storage_class = spec.get("storageClassName")
    if isinstance(storage_class, str) and storage_class:
        errs.extend(names.validate_dns1123_subdomain(storage_class, child(path, "storageClassName")))
    return errs


def validate_claim_template(claim: Any, path: str) -> Causes:
    if not isinstance(claim, dict):
        return [type_error(path, claim, "object")]
    return validate_claim_spec(claim.get("spec"), child(path, "spec"))


def validate_persistent_volume_claim(pvc: Obj) -> Causes:
    errs = validate_object_meta(pvc, namespaced=True)
    errs.extend(validate_claim_spec(pvc.get("spec"), "spec"))
    return errs


def validate_persistent_volume_claim_update(new: Obj, old: Obj) -> Causes:
    errs = validate_object_meta_update(new, old)
    errs.extend(validate_claim_spec(new.get("spec"), "spec"))
    new_spec = dict(dict_field(new, "spec"))
    old_spec = dict(dict_field(old, "spec"))
    if not old_spec.get("volumeName"):
        # the binder sets volumeName once
        old_spec["volumeName"] = new_spec.get("volumeName")
    old_annotations = dict_field(dict_field(old, "metadata"), "annotations")
    if (BETA_STORAGE_CLASS not in old_annotations and old_spec.get("storageClassName") is None
            and new_spec.get("storageClassName")):
        # RetroactiveDefaultStorageClass (GA 1.28): a claim without a class may get one
        old_spec["storageClassName"] = new_spec["storageClassName"]
    fixed = [k for k in set(new_spec) | set(old_spec) if k not in _UPDATABLE_SPEC]
    if any(normalized(new_spec.get(k)) != normalized(old_spec.get(k)) for k in fixed):
        errs.append(forbidden("spec", _SPEC_IMMUTABLE_MSG))
    return errs


def validate_csi_storage_capacity(capacity: Obj) -> Causes:
    """``ValidateCSIStorageCapacity`` (storage.k8s.io/v1): a class name that is a DNS
    subdomain, a valid topology selector, a non-negative capacity."""
    errs = validate_object_meta(capacity, namespaced=True)
    errs.extend(validate_label_selector(capacity.get("nodeTopology"), "nodeTopology"))
    class_name = capacity.get("storageClassName")
    if not isinstance(class_name, str):
        class_name = ""
    errs.extend(names.validate_dns1123_subdomain(class_name, "storageClassName"))
    for field in ("capacity", "maximumVolumeSize"):
        quantity = None if capacity.get(field) is None else parse(capacity[field], field, errs)
        if quantity is not None and quantity.sign() < 0:
            errs.append(invalid(field, str(quantity), IS_NEGATIVE_MSG))
    return errs


def validate_csi_storage_capacity_update(new: Obj, old: Obj) -> Causes:
    """The topology and class a capacity was reported for cannot change."""
    errs = validate_object_meta_update(new, old) + [
        c for c in validate_csi_storage_capacity(new) if not c.field.startswith("metadata")]
    if normalized(new.get("nodeTopology")) != normalized(old.get("nodeTopology")):
        errs.append(invalid("nodeTopology", new.get("nodeTopology"), "field is immutable"))
    if new.get("storageClassName") != old.get("storageClassName"):
        errs.append(invalid("storageClassName", new.get("storageClassName"), "field is immutable"))
    return errs


# -- storage.k8s.io/v1 (pkg/apis/storage/validation) -------------------------------------------

MAX_PARAMETERS = 512
MAX_PARAMETERS_SIZE = 256 * (1 << 10)
MAX_ATTACHMENT_METADATA_SIZE = 256 * (1 << 10)
MAX_VOLUME_ERROR_MESSAGE = 1024
CSI_NODE_ID_MAX_LENGTH = 192
STORAGE_CLASS_RECLAIM_POLICIES = ("Delete", "Retain")
VOLUME_BINDING_MODES = ("Immediate", "WaitForFirstConsumer")
FS_GROUP_POLICIES = ("File", "None", "ReadWriteOnceWithFSType")
VOLUME_LIFECYCLE_MODES = ("Persistent", "Ephemeral")
MIN_TOKEN_EXPIRATION_SECONDS = 600


def _provisioner(value: Any, path: str) -> Causes:
    """``validateProvisioner``: required, a qualified name once lower-cased."""
    if not isinstance(value, str) or not value:
        return [required(path)]
    return [invalid(path, value, m) for m in is_qualified_name(value.lower())]


def _parameters(params: Any, path: str, *, allow_empty: bool) -> Causes:
    """``validateParameters``: at most 512 keys, none empty, 256 KiB of keys and values."""
    params = params if isinstance(params, dict) else {}
    if len(params) > MAX_PARAMETERS:
        return [too_long(path, MAX_PARAMETERS)]
    errs: Causes = []
    size = 0
    for k, v in params.items():
        if not k:
            errs.append(invalid(path, k, "field can not be empty."))
        size += len(k) + len(v if isinstance(v, str) else "")
    if size > MAX_PARAMETERS_SIZE:
        errs.append(too_long(path, MAX_PARAMETERS_SIZE))
    if not allow_empty and not params:
        errs.append(required(path, "must contain at least one key/value pair"))
    return errs


def _topology_term(term: Obj, path: str) -> tuple[dict[str, frozenset[str]], Causes]:
    """``ValidateTopologySelectorTerm``: each requirement's key a label name, values given
    and distinct, keys distinct."""
    errs: Causes = []
    exprs: dict[str, frozenset[str]] = {}
    exprs_path = child(path, "matchLabelExpressions")
    for _, rp, req in dicts(get_list(term, "matchLabelExpressions", path, errs), exprs_path, errs):
        values_path = child(rp, "values")
        values = get_list(req, "values", rp, errs)
        if not values:
            errs.append(required(values_path))
        seen: set[Any] = set()
        for i, value in enumerate(values):
            if value in seen:
                errs.append(duplicate(index(values_path, i), value))
            seen.add(value)
        raw_key = req.get("key")
        label_key = raw_key if isinstance(raw_key, str) else ""
        errs.extend(names.validate_label_name(label_key, child(rp, "key")))
        if label_key in exprs:
            errs.append(duplicate(child(rp, "key"), label_key))
        exprs[label_key] = frozenset(str(v) for v in values)
    return exprs, errs


def _allowed_topologies(terms: list[Any], path: str, errs: Causes) -> None:
    seen: list[dict[str, frozenset[str]]] = []
    for _, tp, term in dicts(terms, path, errs):
        exprs, term_errs = _topology_term(term, tp)
        errs.extend(term_errs)
        if exprs in seen:
            errs.append(duplicate(child(tp, "matchLabelExpressions"), ""))
        seen.append(exprs)


def validate_storage_class(sc: Obj) -> Causes:
    """``ValidateStorageClass`` on the defaulted class (reclaimPolicy Delete and
    volumeBindingMode Immediate when absent)."""
    errs = validate_object_meta(sc, namespaced=False)
    errs.extend(_provisioner(sc.get("provisioner"), "provisioner"))
    errs.extend(_parameters(sc.get("parameters"), "parameters", allow_empty=True))
    policy = sc.get("reclaimPolicy")
    if policy and policy not in STORAGE_CLASS_RECLAIM_POLICIES:
        errs.append(not_supported("reclaimPolicy", policy, STORAGE_CLASS_RECLAIM_POLICIES))
    mode = sc.get("volumeBindingMode")
    if mode is None:
        errs.append(required("volumeBindingMode"))
    elif mode not in VOLUME_BINDING_MODES:
        errs.append(not_supported("volumeBindingMode", mode, VOLUME_BINDING_MODES))
    _allowed_topologies(get_list(sc, "allowedTopologies", "", errs), "allowedTopologies", errs)
    return errs


def validate_storage_class_update(new: Obj, old: Obj) -> Causes:
    """``ValidateStorageClassUpdate``: parameters, provisioner and reclaimPolicy cannot
    change; volumeBindingMode is immutable."""
    errs = validate_object_meta_update(new, old) + [
        c for c in validate_storage_class(new) if not c.field.startswith("metadata")]
    if normalized(new.get("parameters") or {}) != normalized(old.get("parameters") or {}):
        errs.append(forbidden("parameters", "updates to parameters are forbidden."))
    if new.get("provisioner") != old.get("provisioner"):
        errs.append(forbidden("provisioner", "updates to provisioner are forbidden."))
    if new.get("reclaimPolicy") != old.get("reclaimPolicy"):
        errs.append(forbidden("reclaimPolicy", "updates to reclaimPolicy are forbidden."))
    if new.get("volumeBindingMode") != old.get("volumeBindingMode"):
        errs.append(invalid("volumeBindingMode", new.get("volumeBindingMode"), IMMUTABLE_MSG))
    return errs


def validate_volume_attributes_class(vac: Obj) -> Causes:
    """``ValidateVolumeAttributesClass``: a driver name like a provisioner, at least one
    parameter."""
    errs = validate_object_meta(vac, namespaced=False)
    errs.extend(_provisioner(vac.get("driverName"), "driverName"))
    errs.extend(_parameters(vac.get("parameters"), "parameters", allow_empty=False))
    return errs


def validate_volume_attributes_class_update(new: Obj, old: Obj) -> Causes:
    errs = validate_object_meta_update(new, old)
    if new.get("driverName") != old.get("driverName"):
        errs.append(forbidden("driverName", "updates to driverName are forbidden."))
    if normalized(new.get("parameters") or {}) != normalized(old.get("parameters") or {}):
        errs.append(forbidden("parameters", "updates to parameters are forbidden."))
    errs.extend(c for c in validate_volume_attributes_class(new)
                if not c.field.startswith("metadata"))
    return errs


def _volume_error(error: Any, path: str) -> Causes:
    if not isinstance(error, dict):
        return []
    errs: Causes = []
    message = error.get("message")
    if isinstance(message, str) and len(message) > MAX_VOLUME_ERROR_MESSAGE:
        # upstream reports the metadata limit here, not the message limit
        errs.append(too_long(child(path, "message"), MAX_ATTACHMENT_METADATA_SIZE))
    code = error.get("errorCode")
    if isinstance(code, int) and code < 0:
        errs.append(invalid(child(path, "errorCode"), code,
                            "must be between 0 and 2147483647, inclusive"))
    return errs


def validate_volume_attachment(va: Obj) -> Causes:
    """``ValidateVolumeAttachment`` and ``ValidateVolumeAttachmentV1``: an attacher that is a
    CSI driver name, exactly one source (a PV name or an inline CSI spec), a node name."""
    errs = validate_object_meta(va, namespaced=False)
    spec = get_dict(va, "spec", "", errs)
    attacher = spec.get("attacher")
    errs.extend(validate_csi_driver_name(attacher, "spec.attacher"))
    source = get_dict(spec, "source", "spec", errs)
    pv_name, inline = source.get("persistentVolumeName"), source.get("inlineVolumeSpec")
    if inline is None and pv_name is None:
        errs.append(required("spec.source",
                             "must specify exactly one of inlineVolumeSpec and persistentVolumeName"))
    elif inline is not None and pv_name is not None:
        errs.append(forbidden("spec.source",
                              "must specify exactly one of inlineVolumeSpec and persistentVolumeName"))
    elif pv_name is not None:
        if not pv_name:
            errs.append(required("spec.source.persistentVolumeName",
                                 "must specify non empty persistentVolumeName"))
        elif isinstance(pv_name, str):
            errs.extend(names.validate_dns1123_subdomain(pv_name, "spec.source.persistentVolumeName"))
    else:
        errs.extend(validate_persistent_volume_spec(inline, "spec.source.inlineVolumeSpec",
                                                    inline=True))
    raw_node = spec.get("nodeName")
    node = raw_node if isinstance(raw_node, str) else ""
    errs.extend(names.validate_dns1123_subdomain(node, "spec.nodeName"))
    status = get_dict(va, "status", "", errs)
    metadata = status.get("attachmentMetadata")
    if isinstance(metadata, dict):
        size = sum(len(k) + len(v if isinstance(v, str) else "") for k, v in metadata.items())
        if size > MAX_ATTACHMENT_METADATA_SIZE:
            errs.append(too_long("status.attachmentMetadata", MAX_ATTACHMENT_METADATA_SIZE))
    errs.extend(_volume_error(status.get("attachError"), "status.attachError"))
    errs.extend(_volume_error(status.get("detachError"), "status.detachError"))
    return errs


def validate_volume_attachment_update(new: Obj, old: Obj) -> Causes:
    """``ValidateVolumeAttachmentUpdate``: the spec is read-only (status writes too: the
    status strategy keeps the stored spec, so only a main-resource write can trip it)."""
    errs = validate_object_meta_update(new, old) + [
        c for c in validate_volume_attachment(new) if not c.field.startswith("metadata")]
    if normalized(new.get("spec")) != normalized(old.get("spec")):
        errs.append(invalid("spec", new.get("spec"), IMMUTABLE_MSG))
    return errs


def _csi_driver_spec(spec: Obj, path: str) -> Causes:
    errs: Causes = []
    # upstream's path says "attachedRequired"
    for field, where in (("attachRequired", "attachedRequired"), ("podInfoOnMount", "podInfoOnMount"),
                         ("storageCapacity", "storageCapacity"), ("seLinuxMount", "seLinuxMount")):
        if spec.get(field) is None:
            errs.append(required(child(path, where)))
    policy = spec.get("fsGroupPolicy")
    if policy is not None and policy not in FS_GROUP_POLICIES:
        errs.append(not_supported(child(path, "fsGroupPolicy"), policy, FS_GROUP_POLICIES))
    requests_path = child(path, "tokenRequests")
    audiences: set[Any] = set()
    for _, rp, request in dicts(get_list(spec, "tokenRequests", path, errs), requests_path, errs):
        audience = request.get("audience", "")
        if audience in audiences:
            errs.append(duplicate(child(rp, "audience"), audience))
            continue
        audiences.add(audience)
        seconds = request.get("expirationSeconds")
        if not isinstance(seconds, int):
            continue
        if seconds < MIN_TOKEN_EXPIRATION_SECONDS:
            errs.append(invalid(child(rp, "expirationSeconds"), seconds,
                                "may not specify a duration less than 10 minutes"))
        if seconds > 1 << 32:
            errs.append(invalid(child(rp, "expirationSeconds"), seconds,
                                "may not specify a duration larger than 2^32 seconds"))
    for mode in get_list(spec, "volumeLifecycleModes", path, errs):
        if mode not in VOLUME_LIFECYCLE_MODES:
            errs.append(not_supported(child(path, "volumeLifecycleModes"), mode,
                                      VOLUME_LIFECYCLE_MODES))
    period = spec.get("nodeAllocatableUpdatePeriodSeconds")
    if isinstance(period, int) and period < 10:
        errs.append(invalid(child(path, "nodeAllocatableUpdatePeriodSeconds"), period,
                            "must be greater than or equal to 10 seconds"))
    return errs


def validate_csi_driver(driver: Obj) -> Causes:
    """``ValidateCSIDriver`` on the defaulted driver (attachRequired true, podInfoOnMount,
    storageCapacity, requiresRepublish and seLinuxMount false, fsGroupPolicy
    ReadWriteOnceWithFSType, volumeLifecycleModes [Persistent])."""
    errs = validate_object_meta(driver, namespaced=False)
    errs.extend(_csi_driver_spec(get_dict(driver, "spec", "", errs), "spec"))
    return errs


def validate_csi_driver_update(new: Obj, old: Obj) -> Causes:
    """``ValidateCSIDriverUpdate``: attachRequired and volumeLifecycleModes are immutable."""
    errs = validate_object_meta_update(new, old)
    new_spec, old_spec = dict_field(new, "spec"), dict_field(old, "spec")
    errs.extend(_csi_driver_spec(new_spec, "spec"))
    if new_spec.get("attachRequired") != old_spec.get("attachRequired"):
        errs.append(invalid("spec.attachedRequired", new_spec.get("attachRequired"), IMMUTABLE_MSG))
    if normalized(new_spec.get("volumeLifecycleModes")) != normalized(old_spec.get("volumeLifecycleModes")):
        errs.append(invalid("spec.volumeLifecycleModes", new_spec.get("volumeLifecycleModes"),
                            IMMUTABLE_MSG))
    return errs


def _csi_node_drivers(drivers: list[Any], path: str, errs: Causes) -> None:
    seen: set[Any] = set()
    for _, dp, driver in dicts(drivers, path, errs):
        name = driver.get("name")
        errs.extend(validate_csi_driver_name(name, child(dp, "name")))
        node_id = driver.get("nodeID")
        if not isinstance(node_id, str) or not node_id:
            errs.append(required(child(dp, "nodeID")))
        elif len(node_id) > CSI_NODE_ID_MAX_LENGTH:
            errs.append(invalid(child(dp, "nodeID"), node_id,
                                f"must be {CSI_NODE_ID_MAX_LENGTH} characters or less"))
        count = dict_field(driver, "allocatable").get("count")
        if isinstance(count, int) and count < 0:
            errs.append(invalid(child(dp, "allocatable.count"), count, IS_NEGATIVE_MSG))
        if name in seen:
            errs.append(duplicate(child(dp, "name"), name))
        seen.add(name)
        keys: set[Any] = set()
        for topology_key in get_list(driver, "topologyKeys", dp, errs):
            if not topology_key:
                errs.append(required(dp))
            if topology_key in keys:
                errs.append(duplicate(dp, topology_key))
            keys.add(topology_key)
            if isinstance(topology_key, str):
                errs.extend(names.validate_qualified_name(topology_key, dp))


def validate_csi_node(csi_node: Obj) -> Causes:
    """``ValidateCSINode``: each driver a CSI driver name with a node ID of at most 192
    characters, named once, its topology keys distinct qualified names."""
    errs = validate_object_meta(csi_node, namespaced=False)
    spec = get_dict(csi_node, "spec", "", errs)
    _csi_node_drivers(get_list(spec, "drivers", "spec", errs), "spec.drivers", errs)
    return errs


def validate_csi_node_update(new: Obj, old: Obj) -> Causes:
    """``ValidateCSINodeUpdate`` with MutableCSINodeAllocatableCount (beta, on in 1.34+): a
    driver already registered cannot change but for its allocatable count."""
    errs = validate_object_meta_update(new, old) + [
        c for c in validate_csi_node(new) if not c.field.startswith("metadata")]
    old_drivers = [d for d in list_field(dict_field(old, "spec"), "drivers") if isinstance(d, dict)]
    for new_driver in list_field(dict_field(new, "spec"), "drivers"):
        if not isinstance(new_driver, dict):
            continue
        for old_driver in old_drivers:
            if old_driver.get("name") != new_driver.get("name"):
                continue
            a = {k: v for k, v in new_driver.items() if k != "allocatable"}
            b = {k: v for k, v in old_driver.items() if k != "allocatable"}
            if normalized(a) != normalized(b):
                errs.append(invalid("spec.drivers", a, IMMUTABLE_MSG))
    return errs
