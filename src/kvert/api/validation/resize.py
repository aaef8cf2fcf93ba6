"""The ``pods/resize`` subresource: which in-place changes to container resources are allowed.

Seed 000 (KEP 1287) and ``ValidatePodResize`` of Kubernetes 1.36 agree on the core rules:

* only cpu and memory requests and limits may change: of ``spec.containers[*].resources``, of
  sidecars (init containers with ``restartPolicy: Always``; other changes ``only cpu and
  memory resources for sidecar containers are mutable``), of other init containers while the
  InPlacePodVerticalScalingInitContainers gate is on (1.36, kubernetes#137352; off, ``resources
  for non-sidecar init containers are immutable``) and of the pod-level ``spec.resources``
  while InPlacePodLevelResourcesVerticalScaling is on (KEP-5419, beta in 1.36; off, ``pods with
  pod-level resources cannot be resized``); anything else -> ``Forbidden: only cpu and memory
  resources are mutable``, containers added or removed included (``dropNonResizeUpdates``
  leaves such a write to the validation) and ``resizePolicy`` too (upstream copies it from
  the write but the comparison restores only cpu and memory);
* the new pod must itself be valid (requests <= limits, resizePolicy names and values,
  ``restartPolicy: Never`` needs ``NotRequired``: the seed's "RestartNotRequired");
* the QoS class may not change -> ``Pod QOS Class may not change as a result of resizing``,
  the value shown being the pod's current ``status.qosClass``;
* requests and limits may not be removed (``resource requests cannot be removed``);
* a running pod whose node reports no container resources in its status ran on a node
  without resize support -> ``Pod running on node without support for resize``;
* Windows pods and static (mirror) pods cannot be resized.

Choices (documented for kvert):

* Memory limit decreases are allowed whatever the memory ``resizePolicy``: seed 000 has the
  node agent lower the limit in a control loop, and Kubernetes 1.35 dropped the 1.33/1.34
  rule "memory limits cannot be decreased unless resizePolicy is RestartContainer".
* :func:`drop_non_resize_updates` is Kubernetes' ``dropNonResizeUpdates`` for a registry that
  wants it; kvert's resize strategy (``merge_resize``) does the same.
"""

from __future__ import annotations

from typing import Any

from kvert.api.features import server_enabled
from kvert.api.meta import deep_copy
from kvert.api.pods import compute_qos_class, qos_class
from kvert.api.types import Obj

from .common import Causes, child, dict_field, forbidden, index, invalid
from .diff import semantically_equal
from .meta import validate_object_meta_update
from .pod import MIRROR_POD_ANNOTATION, is_sidecar, validate_pod_metadata_and_spec, validate_resize_policy
from .resourcelist import RESIZABLE_RESOURCES, validate_resource_requirements


def _spec(pod: Any) -> Obj:
    spec = pod.get("spec") if isinstance(pod, dict) else None
    return spec if isinstance(spec, dict) else {}


def _containers(spec: Obj, field: str) -> list[Any]:
    value = spec.get(field)
    return value if isinstance(value, list) else []


def _resources(container: Any) -> Obj:
    res = container.get("resources") if isinstance(container, dict) else None
    return res if isinstance(res, dict) else {}


def _pod_level_resources_set(pod: Any) -> bool:
    res = _spec(pod).get("resources")
    return isinstance(res, dict) and bool(res.get("requests") or res.get("limits"))


def _annotations(pod: Any) -> Obj:
    meta = pod.get("metadata") if isinstance(pod, dict) else None
    ann = meta.get("annotations") if isinstance(meta, dict) else None
    return ann if isinstance(ann, dict) else {}


def validate_pod_resize(new: Obj, old: Obj) -> Causes:
    """Validate ``new`` (the pod after the resize patch) against the stored ``old`` pod."""
    errs = validate_object_meta_update(new, old)
    errs.extend(_validate_resized_pod(new, old))

    pod_level_resize = server_enabled("InPlacePodLevelResourcesVerticalScaling")
    init_resize = server_enabled("InPlacePodVerticalScalingInitContainers")
    if not pod_level_resize and (_pod_level_resources_set(old) or _pod_level_resources_set(new)):
        return [forbidden("", "pods with pod-level resources cannot be resized")]
    if MIRROR_POD_ANNOTATION in _annotations(old):
        return [forbidden("", "static pods cannot be resized")]
    os_spec = _spec(old).get("os")
    if isinstance(os_spec, dict) and os_spec.get("name") == "windows":
        return [forbidden("", "windows pods cannot be resized")]

    new_spec, old_spec = _spec(new), _spec(old)
    for field in ("containers", "initContainers"):
        if len(_containers(new_spec, field)) != len(_containers(old_spec, field)):
            errs.append(forbidden("spec", "only cpu and memory resources are mutable"))
            return errs

    old_qos: str | None
    new_qos: str | None
    try:
        old_qos, new_qos = qos_class(old), compute_qos_class(new)
    except (ValueError, TypeError, KeyError, AttributeError):
        old_qos = new_qos = None  # malformed resources are reported by the pod validation above
    if old_qos != new_qos:
        # upstream shows the new pod's status.qosClass: the class the pod has now
        current = (new.get("status") or {}).get("qosClass", "")
        errs.append(invalid("spec", current, "Pod QOS Class may not change as a result of resizing"))
    if not _resize_supported_by_node(old):
        errs.append(forbidden("spec", "Pod running on node without support for resize"))

    for field in ("containers", "initContainers"):
        for i, (nc, oc) in enumerate(zip(_containers(new_spec, field), _containers(old_spec, field))):
            if field == "initContainers" and not is_sidecar(oc) and not init_resize:
                continue
            errs.extend(_validate_container_resize(_resources(nc), _resources(oc),
                                                   child(index(f"spec.{field}", i), "resources")))
    if pod_level_resize:
        errs.extend(_validate_container_resize(dict_field(new_spec, "resources"),
                                               dict_field(old_spec, "resources"), "spec.resources"))

    munged = deep_copy(new_spec)
    for i, (nc, oc) in enumerate(zip(_containers(munged, "containers"),
                                     _containers(old_spec, "containers"))):
        restored = _restore_non_resizable(nc, oc)
        if restored != oc and not semantically_equal(restored, oc):
            errs.append(forbidden("spec", "only cpu and memory resources are mutable"))
        _containers(munged, "containers")[i] = restored
    for i, (nc, oc) in enumerate(zip(_containers(munged, "initContainers"),
                                     _containers(old_spec, "initContainers"))):
        if is_sidecar(oc) or init_resize:
            restored = _restore_non_resizable(nc, oc)
            if restored != oc and not semantically_equal(restored, oc):
                errs.append(forbidden("spec", "only cpu and memory resources for sidecar "
                                              "containers are mutable" if is_sidecar(oc) else
                                              "only cpu and memory resources are mutable"))
            _containers(munged, "initContainers")[i] = restored
        elif nc != oc and not semantically_equal(nc, oc):
            errs.append(forbidden("spec", "resources for non-sidecar init containers are immutable"))
    if pod_level_resize and ("resources" in munged or "resources" in old_spec):
        restored_level = _restore_cpu_memory(dict_field(munged, "resources"),
                                             dict_field(old_spec, "resources"))
        if restored_level or "resources" in old_spec:
            munged["resources"] = restored_level
        else:
            munged.pop("resources", None)
    if errs:
        return errs
    if munged != old_spec and not semantically_equal(munged, old_spec):
        errs.append(forbidden("spec", "only cpu and memory resources are mutable"))
    return errs


_RESIZED = ("resources", "resizePolicy")


def _validate_resized_pod(new: Obj, old: Obj) -> Causes:
    """``validatePodMetadataAndSpec`` of the resized pod. When its spec is the stored one but
    for containers' cpu/memory requests and limits and resize policies (what the resize
    subresource takes from a request), the rest was valid when stored, so only what changed
    is checked -- the same causes at the same paths as checking the whole spec; otherwise
    the whole spec is."""
    new_spec, old_spec = _spec(new), _spec(old)
    if not _differs_only_in_resources(new_spec, old_spec):
        return validate_pod_metadata_and_spec(new)
    old_meta = old.get("metadata") if isinstance(old, dict) else None
    errs = validate_pod_metadata_and_spec(new, spec_checked=True,
                                          stored_meta=old_meta if isinstance(old_meta, dict) else None)
    restart_policy = new_spec.get("restartPolicy") or "Always"
    for field in ("containers", "initContainers"):
        for i, (nc, oc) in enumerate(zip(_containers(new_spec, field), _containers(old_spec, field))):
            if all(nc.get(k) == oc.get(k) for k in _RESIZED):
                continue
            path = index(f"spec.{field}", i)
            res_errs, _, _ = validate_resource_requirements(nc.get("resources"), child(path, "resources"))
            errs.extend(res_errs)
            effective = "Always" if field == "initContainers" and nc.get("restartPolicy") == "Always" \
                else restart_policy
            policies = nc.get("resizePolicy")
            if policies is not None and not isinstance(policies, list):
                return validate_pod_metadata_and_spec(new)      # the whole check names the type error
            errs.extend(validate_resize_policy(policies or [], child(path, "resizePolicy"), effective))
    return errs


def _differs_only_in_resources(new_spec: Any, old_spec: Any) -> bool:
    """The specs are equal but for containers' requests, limits and resizePolicy."""
    if not isinstance(new_spec, dict) or not isinstance(old_spec, dict) or new_spec.keys() != old_spec.keys():
        return False
    for k, v in new_spec.items():
        if k in ("containers", "initContainers"):
            a, b = v, old_spec[k]
            if not isinstance(a, list) or not isinstance(b, list) or len(a) != len(b):
                return False
            for nc, oc in zip(a, b):
                if not isinstance(nc, dict) or not isinstance(oc, dict) or not _same_but_resized(nc, oc):
                    return False
        elif v != old_spec[k]:
            return False
    return True


def _same_but_resized(nc: Obj, oc: Obj) -> bool:
    if {k: v for k, v in nc.items() if k not in _RESIZED} != {k: v for k, v in oc.items() if k not in _RESIZED}:
        return False
    nr, orr = nc.get("resources"), oc.get("resources")
    if nr is None or orr is None:
        return nr == orr
    if not isinstance(nr, dict) or not isinstance(orr, dict):
        return False
    return {k: v for k, v in nr.items() if k not in ("requests", "limits")} == \
        {k: v for k, v in orr.items() if k not in ("requests", "limits")}


def _validate_container_resize(new_res: Obj, old_res: Obj, path: str) -> Causes:
    errs: Causes = []
    for part, what in (("requests", "resource requests"), ("limits", "resource limits")):
        old_list = dict_field(old_res, part)
        new_list = dict_field(new_res, part)
        if any(name not in new_list for name in old_list):
            errs.append(forbidden(child(path, part), f"{what} cannot be removed"))
    return errs


def _restore_non_resizable(new_c: Any, old_c: Any) -> Any:
    """``new_c`` with its cpu/memory requests and limits taken from ``old_c``: what is left
    differing from ``old_c`` is a change the resize subresource may not make. resizePolicy is
    left as written: upstream's comparison restores only cpu and memory, so a changed policy
    is such a change."""
    if not isinstance(new_c, dict) or not isinstance(old_c, dict):
        return new_c
    out = dict(new_c)
    res = _restore_cpu_memory(_resources(new_c), _resources(old_c))
    if res or "resources" in old_c:
        out["resources"] = res
    else:
        out.pop("resources", None)
    return out


def _restore_cpu_memory(new_res: Obj, old_res: Obj) -> Obj:
    """Resources (a container's or the pod-level ones) with cpu and memory taken from
    ``old_res``."""
    res: Obj = {}
    for part in ("requests", "limits"):
        merged = {k: v for k, v in dict_field(new_res, part).items() if k not in RESIZABLE_RESOURCES}
        merged.update({k: v for k, v in dict_field(old_res, part).items() if k in RESIZABLE_RESOURCES})
        # an empty list where the old one had none is no change: leaving it out keeps the
        # plain comparison equal, so the (far slower) semantic one is not needed
        if merged or part in old_res:
            res[part] = merged
    for other in new_res:
        if other not in ("requests", "limits"):
            res[other] = new_res[other]
    return res


def _resize_supported_by_node(pod: Obj) -> bool:
    """``isPodResizeRequestSupported``: the first running container's status must report its
    resources (a node without resize support never does); no running container, no telling."""
    for status in dict_field(pod, "status").get("containerStatuses") or []:
        if isinstance(status, dict) and isinstance(status.get("state"), dict) \
                and "running" in status["state"]:
            return status.get("resources") is not None
    return True


def drop_non_resize_updates(new: Obj, old: Obj) -> Obj:
    """Kubernetes' ``dropNonResizeUpdates``: the stored pod with only the resize-able fields
    (containers' and sidecars' ``resources`` and ``resizePolicy``, matched by name) taken from
    ``new``, plus ``new``'s name, namespace, uid and resourceVersion."""
    pod: Obj = deep_copy(old)
    meta = pod.setdefault("metadata", {})
    new_meta = dict_field(new, "metadata")
    for field in ("name", "namespace", "uid", "resourceVersion"):
        if field in new_meta:
            meta[field] = new_meta[field]
    spec = dict_field(pod, "spec")
    new_spec = _spec(new)
    for field in ("containers", "initContainers"):
        by_name = {c.get("name"): c for c in _containers(new_spec, field) if isinstance(c, dict)}
        for c in _containers(spec, field):
            if not isinstance(c, dict) or c.get("name") not in by_name:
                continue
            if field == "initContainers" and not is_sidecar(c):
                continue
            src = by_name[c["name"]]
            for f in ("resources", "resizePolicy"):
                if f in src:
                    c[f] = deep_copy(src[f])
                else:
                    c.pop(f, None)
    return pod
