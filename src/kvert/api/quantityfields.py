"""Where built-in kinds hold ``resource.Quantity`` values, per (apiVersion, kind).

Written from the OpenAPI definitions in ``kvert.apiserver.openapi.schemas`` (which the api
layer may not import); ``tests/apiserver/test_quantity_fields.py`` fails when the two
disagree. A path is a tuple of field names, ``"[]"`` for every item of a list and ``"{}"``
for every value of a map; its flag is True for a core/v1 ``ResourceList`` (a map of
quantities), which upstream's defaulting also rounds up to milli precision
(``SetDefaults_ResourceList``). resource.k8s.io's maps of quantities are not ResourceLists.
autoscaling.k8s.io (a custom resource upstream) is not listed: custom resources keep their
quantities as sent.
"""

from __future__ import annotations

from typing import Any

from kvert.api.quantity import QuantityError, serialized

Path = tuple[str, ...]
QuantityPath = tuple[Path, bool]

_RL = True      # a ResourceList: every value, rounded up to milli
_ONE = False    # a single quantity


def _under(prefix: Path, paths: tuple[QuantityPath, ...]) -> tuple[QuantityPath, ...]:
    return tuple((prefix + p, rl) for p, rl in paths)


def _requirements(prefix: Path) -> tuple[QuantityPath, ...]:
    return ((prefix + ("limits", "{}"), _RL), (prefix + ("requests", "{}"), _RL))


_DIVISOR = ("resourceFieldRef", "divisor")
_CONTAINER: tuple[QuantityPath, ...] = (
    (("env", "[]", "valueFrom") + _DIVISOR, _ONE),
    *_requirements(("resources",)),
)
_POD_SPEC: tuple[QuantityPath, ...] = (
    *_under(("containers", "[]"), _CONTAINER),
    *_under(("initContainers", "[]"), _CONTAINER),
    *_under(("ephemeralContainers", "[]"), _CONTAINER),
    (("volumes", "[]", "emptyDir", "sizeLimit"), _ONE),
    (("volumes", "[]", "projected", "sources", "[]", "downwardAPI", "items", "[]") + _DIVISOR, _ONE),
    (("volumes", "[]", "downwardAPI", "items", "[]") + _DIVISOR, _ONE),
    (("overhead", "{}"), _RL),
    *_requirements(("resources",)),
)
_CONTAINER_STATUS: tuple[QuantityPath, ...] = (
    (("allocatedResources", "{}"), _RL),
    *_requirements(("resources",)),
)
_POD_STATUS: tuple[QuantityPath, ...] = (
    *_under(("initContainerStatuses", "[]"), _CONTAINER_STATUS),
    *_under(("containerStatuses", "[]"), _CONTAINER_STATUS),
    *_under(("ephemeralContainerStatuses", "[]"), _CONTAINER_STATUS),
    (("allocatedResources", "{}"), _RL),
    *_requirements(("resources",)),
)
_TEMPLATE = _under(("spec", "template", "spec"), _POD_SPEC)
_PVC: tuple[QuantityPath, ...] = (*_requirements(("spec", "resources")), (("status", "capacity", "{}"), _RL))
_METRIC_KINDS = ("object", "pods", "resource", "containerResource", "external")
_DEVICE_REQUEST = ("capacity", "requests", "{}")
_DEVICE_REQUESTS: tuple[QuantityPath, ...] = (
    (("devices", "requests", "[]", "exactly") + _DEVICE_REQUEST, _ONE),
    (("devices", "requests", "[]", "firstAvailable", "[]") + _DEVICE_REQUEST, _ONE),
)
_CAPACITY = ("spec", "devices", "[]", "capacity", "{}")
_POLICY = _CAPACITY + ("requestPolicy",)

QUANTITY_PATHS: dict[tuple[str, str], tuple[QuantityPath, ...]] = {
    ("v1", "Pod"): (*_under(("spec",), _POD_SPEC), *_under(("status",), _POD_STATUS)),
    ("v1", "PodTemplate"): _under(("template", "spec"), _POD_SPEC),
    ("v1", "ReplicationController"): _TEMPLATE,
    ("apps/v1", "Deployment"): _TEMPLATE,
    ("apps/v1", "ReplicaSet"): _TEMPLATE,
    ("apps/v1", "DaemonSet"): _TEMPLATE,
    ("apps/v1", "StatefulSet"): (*_TEMPLATE, *_under(("spec", "volumeClaimTemplates", "[]"), _PVC)),
    ("batch/v1", "Job"): _TEMPLATE,
    ("batch/v1", "CronJob"): _under(("spec", "jobTemplate"), _TEMPLATE),
    ("v1", "Node"): ((("status", "capacity", "{}"), _RL), (("status", "allocatable", "{}"), _RL)),
    ("v1", "PersistentVolume"): ((("spec", "capacity", "{}"), _RL),),
    ("v1", "PersistentVolumeClaim"): _PVC,
    ("v1", "ResourceQuota"): ((("spec", "hard", "{}"), _RL), (("status", "hard", "{}"), _RL),
                              (("status", "used", "{}"), _RL)),
    ("v1", "LimitRange"): tuple((("spec", "limits", "[]", field, "{}"), _RL)
                                for field in ("max", "min", "default", "defaultRequest",
                                              "maxLimitRequestRatio")),
    ("node.k8s.io/v1", "RuntimeClass"): ((("overhead", "podFixed", "{}"), _RL),),
    ("storage.k8s.io/v1", "CSIStorageCapacity"): ((("capacity",), _ONE), (("maximumVolumeSize",), _ONE)),
    ("storage.k8s.io/v1", "VolumeAttachment"): (
        (("spec", "source", "inlineVolumeSpec", "capacity", "{}"), _RL),),
    ("autoscaling/v2", "HorizontalPodAutoscaler"): (
        *((("spec", "metrics", "[]", kind, "target", value), _ONE)
          for kind in _METRIC_KINDS for value in ("value", "averageValue")),
        (("spec", "behavior", "scaleUp", "tolerance"), _ONE),
        (("spec", "behavior", "scaleDown", "tolerance"), _ONE)),
    ("resource.k8s.io/v1", "ResourceClaim"): (
        *_under(("spec",), _DEVICE_REQUESTS),
        (("status", "allocation", "devices", "results", "[]", "consumedCapacity", "{}"), _ONE)),
    ("resource.k8s.io/v1", "ResourceClaimTemplate"): _under(("spec", "spec"), _DEVICE_REQUESTS),
    ("resource.k8s.io/v1", "ResourceSlice"): (
        (_CAPACITY + ("value",), _ONE),
        (_POLICY + ("default",), _ONE),
        (_POLICY + ("validValues", "[]"), _ONE),
        *((_POLICY + ("validRange", bound), _ONE) for bound in ("min", "max", "step")),
        (("spec", "devices", "[]", "consumesCounters", "[]", "counters", "{}", "value"), _ONE),
        (("spec", "sharedCounters", "[]", "counters", "{}", "value"), _ONE)),
}


def canonicalize_quantities(obj: Any) -> None:
    """Rewrite, in place, every quantity of a built-in kind's object as the API server stores
    and returns it (:func:`kvert.api.quantity.serialized`). A value that does not parse is
    left as it is, for validation to report; other kinds are left alone."""
    if not isinstance(obj, dict):
        return
    paths = QUANTITY_PATHS.get((obj.get("apiVersion") or "", obj.get("kind") or ""))
    if not paths:
        return
    for path, resource_list in paths:
        _rewrite(obj, path, 0, resource_list)


def _rewrite(node: Any, path: Path, at: int, resource_list: bool) -> None:
    step = path[at]
    last = at == len(path) - 1
    if step == "[]":
        if isinstance(node, list):
            if last:
                for i, value in enumerate(node):
                    node[i] = _text(value, resource_list)
            else:
                for item in node:
                    _rewrite(item, path, at + 1, resource_list)
    elif step == "{}":
        if isinstance(node, dict):
            if last:
                for key, value in node.items():
                    node[key] = _text(value, resource_list)
            else:
                for item in node.values():
                    _rewrite(item, path, at + 1, resource_list)
    elif isinstance(node, dict) and node.get(step) is not None:
        if last:
            node[step] = _text(node[step], resource_list)
        else:
            _rewrite(node[step], path, at + 1, resource_list)


def _text(value: Any, resource_list: bool) -> Any:
    if value is None or isinstance(value, bool):
        return value
    try:
        return serialized(value, resource_list=resource_list)
    except QuantityError:
        return value
