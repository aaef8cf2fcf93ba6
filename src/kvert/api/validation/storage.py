"""core/v1 PersistentVolumeClaim (``ValidatePersistentVolumeClaim`` and ``..Spec``), also the
claim templates of a StatefulSet (paths ``spec.volumeClaimTemplates[i].spec``).

* ``accessModes``: at least one, each ReadWriteOnce, ReadOnlyMany, ReadWriteMany or
  ReadWriteOncePod (the last alone);
* ``resources.requests[storage]`` is required and greater than zero;
* ``volumeMode`` Block or Filesystem; ``storageClassName`` a DNS subdomain; the selector valid;
* on update the spec may change only in ``resources.requests`` and
  ``volumeAttributesClassName``.
"""

from __future__ import annotations

from typing import Any

from kvert.api.types import Obj

from . import names
from .common import (
    IS_NEGATIVE_MSG,
    IS_NOT_POSITIVE_MSG,
    Causes,
    child,
    dict_field,
    forbidden,
    get_dict,
    get_list,
    invalid,
    key,
    not_supported,
    required,
    type_error,
)
from .diff import normalized
from .meta import validate_label_selector, validate_object_meta, validate_object_meta_update
from .resourcelist import parse, parse_resource_list

ACCESS_MODES = ("ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod")
VOLUME_MODES = ("Block", "Filesystem")
_UPDATABLE_SPEC = ("resources", "volumeAttributesClassName")
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
    new_spec = dict_field(new, "spec")
    old_spec = dict_field(old, "spec")
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
