"""Columns (descriptions: the fields' API docs, as upstream's column definitions take them)
and rows of ReplicationControllers, ControllerRevisions, PersistentVolumeClaims and
HorizontalPodAutoscalers, after ``printReplicationController``, ``printControllerRevision``,
``printPersistentVolumeClaim`` and ``printHorizontalPodAutoscaler`` (``formatHPAMetrics``).
"""

from __future__ import annotations

from typing import Any

from kvert.api.quantity import QuantityError, parse_quantity

from .builtin import (
    RowFunc,
    _age,
    _deleting,
    _i,
    _l,
    _m,
    _meta,
    _name,
    _s,
    age_col,
    col,
    format_labels,
    layout_container_cells,
    name_col,
    template_container_cols,
)

RC_COLUMNS = [
    name_col(),
    col("Desired", "integer", "Replicas is the number of desired replicas. This is a pointer to "
        "distinguish between explicit zero and unspecified. Defaults to 1. More info: "
        "https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller#what-is-a-replicationcontroller"),
    col("Current", "integer", "Replicas is the most recently observed number of replicas. More info: "
        "https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller#what-is-a-replicationcontroller"),
    col("Ready", "integer", "The number of ready replicas for this replication controller."),
    age_col(),
    *template_container_cols(),
    col("Selector", "string", "Selector is a label query over pods that should match the Replicas count. "
        "If Selector is empty, it is defaulted to the labels present on the Pod template. Label keys and values that "
        "must match in order to be controlled by this replication controller, if empty defaulted to "
        "labels on Pod template. More info: "
        "https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors", priority=1),
]


def replication_controller_row(rc: dict, now: int) -> list[Any]:
    spec, status = _m(rc.get("spec")), _m(rc.get("status"))
    names, images = layout_container_cells(_m(_m(spec.get("template")).get("spec")).get("containers"))
    return [_name(rc), _i(spec.get("replicas"), 1), _i(status.get("replicas")),
            _i(status.get("readyReplicas")), _age(rc, now), names, images,
            format_labels(spec.get("selector"))]


CONTROLLER_REVISION_COLUMNS = [
    name_col(),
    col("Controller", "string", "Controller of the object"),
    col("Revision", "integer", "Revision indicates the revision of the state represented by Data."),
    age_col(),
]


def controller_revision_row(rev: dict, now: int) -> list[Any]:
    """The controller as ``kind.group/name`` (``formatResourceName`` with the kind shown)."""
    controller = "<none>"
    for ref in _l(_meta(rev).get("ownerReferences")):
        ref = _m(ref)
        if ref.get("controller") is True:
            api_version = _s(ref.get("apiVersion"))
            group = api_version.rpartition("/")[0] if "/" in api_version else ""
            kind = _s(ref.get("kind")).lower()
            controller = f"{kind}.{group}/{_s(ref.get('name'))}" if group else f"{kind}/{_s(ref.get('name'))}"
            break
    return [_name(rev), controller, _i(rev.get("revision")), _age(rev, now)]


PVC_COLUMNS = [
    name_col(),
    col("Status", "string", "phase represents the current phase of PersistentVolumeClaim."),
    col("Volume", "string", "volumeName is the binding reference to the PersistentVolume backing this claim."),
    col("Capacity", "string", "capacity represents the actual resources of the underlying volume."),
    col("Access Modes", "string", "accessModes contains the actual access modes the volume backing "
        "the PVC has. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#access-modes-1"),
    col("StorageClass", "string", "StorageClass of the pvc"),
    col("VolumeAttributesClass", "string", "VolumeAttributesClass of the pvc"),
    age_col(),
    col("VolumeMode", "string", "volumeMode defines what type of volume is required by the claim. "
        "Value of Filesystem is implied when not included in claim spec.", priority=1),
]

BETA_STORAGE_CLASS = "volume.beta.kubernetes.io/storage-class"
_ACCESS_MODE_SHORT = (("ReadWriteOnce", "RWO"), ("ReadOnlyMany", "ROX"), ("ReadWriteMany", "RWX"),
                      ("ReadWriteOncePod", "RWOP"))


def access_modes_string(modes: Any) -> str:
    """``GetAccessModesAsString``: the short forms present, in a fixed order."""
    present = set(_l(modes))
    return ",".join(short for mode, short in _ACCESS_MODE_SHORT if mode in present)


def _quantity_text(value: Any) -> str:
    try:
        return str(parse_quantity(value))
    except QuantityError:
        return _s(value)


def persistent_volume_claim_row(pvc: dict, now: int) -> list[Any]:
    spec, status = _m(pvc.get("spec")), _m(pvc.get("status"))
    phase = "Terminating" if _deleting(pvc) else _s(status.get("phase"))
    volume = _s(spec.get("volumeName"))
    storage = _m(status.get("capacity")).get("storage")
    capacity = (_quantity_text(storage) if storage is not None else "0") if volume else ""
    access = access_modes_string(status.get("accessModes")) if volume else ""
    vac = spec.get("volumeAttributesClassName")
    mode = spec.get("volumeMode")
    # GetPersistentVolumeClaimClass: the beta annotation wins over the field
    annotations = _m(_meta(pvc).get("annotations"))
    storage_class = annotations.get(BETA_STORAGE_CLASS, spec.get("storageClassName"))
    return [_name(pvc), phase, volume, capacity, access, _s(storage_class),
            _s(vac) if vac else "<unset>", _age(pvc, now), "<unset>" if mode is None else _s(mode)]


HPA_COLUMNS = [
    name_col(),
    col("Reference", "string", "scaleTargetRef points to the target resource to scale, and is used "
        "to the pods for which metrics should be collected, as well as to actually change the "
        "replica count."),
    col("Targets", "string", "metrics contains the specifications for which to use to calculate the "
        "desired replica count (the maximum replica count across all metrics will be used).  The "
        "desired replica count is calculated multiplying the ratio between the target value and the "
        "current value by the current number of pods.  Ergo, metrics used must decrease as the pod "
        "count is increased, and vice-versa.  See the individual metric source types for more "
        "information about how each type of metric must respond. If not set, the default metric "
        "will be set to 80% average CPU utilization."),
    col("MinPods", "string", "minReplicas is the lower limit for the number of replicas to which the "
        "autoscaler can scale down.  It defaults to 1 pod.  minReplicas is allowed to be 0 if the "
        "alpha feature gate HPAScaleToZero is enabled and at least one Object or External metric is "
        "configured.  Scaling is active as long as at least one metric value is available."),
    col("MaxPods", "integer", "maxReplicas is the upper limit for the number of replicas to which "
        "the autoscaler can scale up. It cannot be less that minReplicas."),
    col("Replicas", "string", "currentReplicas is current number of replicas of pods managed by "
        "this autoscaler, as last seen by the autoscaler."),
    age_col(),
]

_MAX_SHOWN_METRICS = 2


def _target_text(target: dict) -> str:
    """A resource target: its average value, else its utilization (``<auto>`` when unset)."""
    if target.get("averageValue") is not None:
        return _quantity_text(target["averageValue"])
    value = target.get("averageUtilization")
    return "<auto>" if value is None else f"{_i(value)}%"


def _metric_text(spec: dict, status: dict) -> str:
    """One metric of ``formatHPAMetrics``: ``current/target`` with ``<unknown>`` unobserved."""
    mtype = spec.get("type")
    if mtype in ("Resource", "ContainerResource"):
        field = "resource" if mtype == "Resource" else "containerResource"
        source, current = _m(spec.get(field)), _m(_m(status.get(field)).get("current"))
        target = _m(source.get("target"))
        prefix = _s(source.get("name"))
        if target.get("averageValue") is not None:
            now = _quantity_text(current["averageValue"]) if current.get("averageValue") is not None \
                else "<unknown>"
        else:
            now = f"{_i(current['averageUtilization'])}%" if current.get("averageUtilization") is not None \
                else "<unknown>"
        return f"{prefix}: {now}/{_target_text(target)}"
    source_field = {"Pods": "pods", "Object": "object", "External": "external"}.get(_s(mtype))
    if source_field is None:
        return "<unknown type>"
    target = _m(_m(spec.get(source_field)).get("target"))
    current = _m(_m(status.get(source_field)).get("current"))
    average = target.get("averageValue") is not None or source_field == "pods"
    key = "averageValue" if average else "value"
    now = _quantity_text(current[key]) if current.get(key) is not None else "<unknown>"
    text = f"{now}/{_quantity_text(target.get(key)) if target.get(key) is not None else ''}"
    return text + (" (avg)" if average and source_field != "pods" else "")


def format_hpa_metrics(specs: Any, statuses: Any) -> str:
    specs, statuses = [_m(s) for s in _l(specs)], [_m(s) for s in _l(statuses)]
    if not specs:
        return "<none>"
    texts = [_metric_text(spec, statuses[i] if i < len(statuses) else {}) for i, spec in enumerate(specs)]
    if len(texts) > _MAX_SHOWN_METRICS:
        return ", ".join(texts[:_MAX_SHOWN_METRICS]) + f" + {len(texts) - _MAX_SHOWN_METRICS} more..."
    return ", ".join(texts)


def hpa_row(hpa: dict, now: int) -> list[Any]:
    spec, status = _m(hpa.get("spec")), _m(hpa.get("status"))
    ref = _m(spec.get("scaleTargetRef"))
    min_pods = spec.get("minReplicas")
    return [_name(hpa), f"{_s(ref.get('kind'))}/{_s(ref.get('name'))}",
            format_hpa_metrics(spec.get("metrics"), status.get("currentMetrics")),
            "<unset>" if min_pods is None else str(_i(min_pods)), _i(spec.get("maxReplicas")),
            _i(status.get("currentReplicas")), _age(hpa, now)]


def _rows(fn) -> RowFunc:
    return lambda obj, now: (fn(obj, now), None)


PRINTERS = {
    ("", "ReplicationController"): (RC_COLUMNS, _rows(replication_controller_row)),
    ("apps", "ControllerRevision"): (CONTROLLER_REVISION_COLUMNS, _rows(controller_revision_row)),
    ("", "PersistentVolumeClaim"): (PVC_COLUMNS, _rows(persistent_volume_claim_row)),
    ("autoscaling", "HorizontalPodAutoscaler"): (HPA_COLUMNS, _rows(hpa_row)),
}
