"""Server-side Table output for ``kubectl get``
(``Accept: application/json;as=Table;v=v1;g=meta.k8s.io``).

Which convertor a type gets mirrors the real API server:

* built-in kinds with a printer (pods, nodes, events, services, deployments, ...) use the
  ports of ``pkg/printers/internalversion`` in :mod:`kvert.apiserver.printers.builtin`,
  always generated wide: kubectl hides the priority-1 columns unless ``-o wide``;
* custom resources use the apiextensions table convertor: ``Name`` plus one column per
  ``additionalPrinterColumns`` entry, evaluated with JSONPath, or a single ``Age`` column
  when the CRD version declares none. kvert serves the VerticalPodAutoscaler as if from its
  CRD, so it gets the VPA CRD's columns (Mode, CPU, Mem, Provided, Age);
* every other type (LimitRange, CustomResourceDefinition, ...) gets the default table of
  ``k8s.io/apiserver/pkg/registry/rest``: ``Name`` and ``Created At``.

``now`` is the server Clock's reading in epoch seconds; ages are relative to it.
"""

from __future__ import annotations

from typing import Any

from kvert.api.errors import ApiError
from kvert.api.kinds import ResourceType
from kvert.api.kindspecs import BUILTIN_KINDS

from .printers import apiregistration, builtin, certificates, networking, served, storage, workloads
from .printers.builtin import CREATED_DOC, NAME_DOC, col, name_col
from .printers.duration import epoch_ns, format_rfc3339, parse_time_ns, since_ns
from .printers.jsonpath import JSONPath, JSONPathError, print_value

# Every printer the printers modules define, by (group, kind) ...
DEFINED_PRINTERS = {**builtin.PRINTERS, **workloads.PRINTERS, **networking.PRINTERS,
                    **certificates.PRINTERS, **apiregistration.PRINTERS, **storage.PRINTERS,
                    **served.PRINTERS}
# ... and the ones served: a built-in kind's, where its KindSpec (kvert.api.kindspecs) says
# it has one. A declared printer no module defines, or a defined one no KindSpec declares,
# fails tests/apiserver/test_kind_completeness.py.
PRINTERS = {spec.group_kind: DEFINED_PRINTERS[spec.group_kind]
            for spec in BUILTIN_KINDS if spec.printer and spec.group_kind in DEFINED_PRINTERS}

TABLE_API_VERSION = "meta.k8s.io/v1"
INCLUDE_OBJECT_POLICIES = ("None", "Metadata", "Object")

# API groups whose types Kubernetes compiles in; any other group is served from a CRD.
BUILTIN_GROUPS = frozenset({
    "", "admissionregistration.k8s.io", "apiextensions.k8s.io", "apiregistration.k8s.io", "apps",
    "authentication.k8s.io", "authorization.k8s.io", "autoscaling", "batch",
    "certificates.k8s.io", "coordination.k8s.io", "discovery.k8s.io", "events.k8s.io",
    "extensions", "flowcontrol.apiserver.k8s.io", "internal.apiserver.k8s.io",
    "networking.k8s.io", "node.k8s.io", "policy", "rbac.authorization.k8s.io", "resource.k8s.io",
    "scheduling.k8s.io", "storage.k8s.io", "storagemigration.k8s.io",
})

# The additionalPrinterColumns of the VerticalPodAutoscaler CRD (autoscaler's vpa-v1-crd-gen).
VPA_PRINTER_COLUMNS: tuple[dict[str, Any], ...] = (
    {"name": "Mode", "type": "string", "jsonPath": ".spec.updatePolicy.updateMode"},
    {"name": "CPU", "type": "string",
     "jsonPath": ".status.recommendation.containerRecommendations[0].target.cpu"},
    {"name": "Mem", "type": "string",
     "jsonPath": ".status.recommendation.containerRecommendations[0].target.memory"},
    {"name": "Provided", "type": "string",
     "jsonPath": ".status.conditions[?(@.type=='RecommendationProvided')].status"},
    {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
    {"name": "MinReplicas", "type": "integer", "priority": 1, "jsonPath": ".spec.updatePolicy.minReplicas"},
    {"name": "OOMSeconds", "type": "integer", "priority": 1,
     "jsonPath": ".spec.updatePolicy.evictAfterOOMSeconds"},
)
_CRD_PRINTER_COLUMNS = {("autoscaling.k8s.io", "VerticalPodAutoscaler"): VPA_PRINTER_COLUMNS}

# What a CRD version without additionalPrinterColumns is served with (serveDefaultColumnsIfEmpty).
DEFAULT_CRD_COLUMNS: tuple[dict[str, Any], ...] = (
    {"name": "Age", "type": "date", "description": CREATED_DOC,
     "jsonPath": ".metadata.creationTimestamp"},
)

DEFAULT_TABLE_COLUMNS = [name_col(), col("Created At", "date", CREATED_DOC)]


# -- choosing the convertor ---------------------------------------------------------------------

def _field(column: Any, name: str, default: Any = None) -> Any:
    if isinstance(column, dict):
        return column.get(name, default)
    return getattr(column, name, default)


def _custom_columns(rt: ResourceType) -> tuple | list | None:
    """The printer columns a custom resource is served with, or None for a built-in type."""
    columns = list(rt.printer_columns or ())
    if columns:
        return columns
    builtin = (rt.group, rt.kind) in PRINTERS
    if rt.schema is None and (rt.group in BUILTIN_GROUPS or builtin):
        return None
    return _CRD_PRINTER_COLUMNS.get((rt.group, rt.kind), DEFAULT_CRD_COLUMNS)


class _CRDConvertor:
    """The apiextensions table convertor for one CRD version's printer columns."""

    def __init__(self, columns: Any):
        self.headers = [name_col()]
        self.paths: list[tuple[JSONPath, str]] = []
        for column in columns:
            json_path = _field(column, "jsonPath", "") or ""
            try:
                path = JSONPath(json_path)
            except JSONPathError:
                break  # like tableconvertor.New: keep the columns parsed so far
            description = _field(column, "description") or \
                f"Custom resource definition column (in JSONPath format): {json_path}"
            column_type = _field(column, "type", "") or ""
            self.headers.append(col(_field(column, "name", "") or "", column_type, description,
                                    priority=int(_field(column, "priority", 0) or 0),
                                    format_=_field(column, "format", "") or ""))
            self.paths.append((path, column_type))

    def cells(self, obj: dict, now: int) -> list[Any]:
        cells: list[Any] = [_name(obj)]
        for path, column_type in self.paths:
            try:
                results = path.find(obj)
            except JSONPathError:
                results = []
            if not results:
                cells.append(None)
            elif column_type == "string":
                cells.append(print_value(results[0]))
            else:
                cells.append(cell_for_json_value(column_type, results[0], now))
        return cells


def cell_for_json_value(column_type: str, value: Any, now: int) -> Any:
    """The apiextensions ``cellForJSONValue``: a typed cell, or None when the type mismatches."""
    if value is None:
        return None
    if column_type == "integer":
        if isinstance(value, bool):
            return None
        if isinstance(value, int):
            return value
        if isinstance(value, float):
            return int(value)
    elif column_type == "number":
        if isinstance(value, bool):
            return None
        if isinstance(value, (int, float)):
            return float(value)
    elif column_type == "boolean":
        if isinstance(value, bool):
            return value
    elif column_type == "string":
        if isinstance(value, str):
            return value
    elif column_type == "date":
        if isinstance(value, str):
            if value in ("", "null"):
                return "<unknown>"
            ns = parse_time_ns(value)
            if ns is None:
                return "<invalid>"
            return since_ns(ns, now)
    return None


def _name(obj: dict) -> str:
    meta = obj.get("metadata")
    name = meta.get("name", "") if isinstance(meta, dict) else ""
    return name if isinstance(name, str) else str(name)


def _default_cells(obj: dict) -> list[Any]:
    meta = obj["metadata"] if isinstance(obj.get("metadata"), dict) else {}
    return [_name(obj), format_rfc3339(parse_time_ns(meta.get("creationTimestamp")))]


# -- the public interface -----------------------------------------------------------------------

def column_definitions(rt: ResourceType) -> list[dict[str, Any]]:
    """The Table columns of a type, wide ones included (``priority`` 1: shown with -o wide)."""
    custom = _custom_columns(rt)
    if custom is not None:
        headers = _CRDConvertor(custom).headers
    elif (rt.group, rt.kind) in PRINTERS:
        headers = PRINTERS[(rt.group, rt.kind)][0]
    else:
        headers = DEFAULT_TABLE_COLUMNS
    return [dict(h) for h in headers]


def _row_object(obj: dict, include_object: str) -> Any:
    if include_object == "Object":
        return obj
    return {"kind": "PartialObjectMetadata", "apiVersion": TABLE_API_VERSION,
            "metadata": obj["metadata"] if isinstance(obj.get("metadata"), dict) else {}}


def to_table(rt: ResourceType, objects: list[dict], *, now: float, include_object: str = "Metadata",
             resource_version: str = "", continue_token: str = "",
             remaining_item_count: int | None = None, with_columns: bool = True) -> dict:
    """A ``meta.k8s.io/v1`` Table of ``objects`` (all of type ``rt``).

    ``include_object`` is the ``includeObject`` query parameter: ``Metadata`` (the default,
    also for ""), ``Object`` or ``None``; anything else is 406 Not Acceptable, as in
    Kubernetes. ``with_columns=False`` leaves out the column definitions (``NoHeaders``),
    as the server does for watch events after the first.
    """
    if include_object == "":
        include_object = "Metadata"
    if include_object not in INCLUDE_OBJECT_POLICIES:
        raise ApiError(f'Unrecognized includeObject value: "{include_object}"', 406,
                       "NotAcceptable")
    now_ns = epoch_ns(now)

    custom = _custom_columns(rt)
    printer = None
    if custom is not None:
        convertor = _CRDConvertor(custom)
        headers = convertor.headers
    elif (rt.group, rt.kind) in PRINTERS:
        headers, printer = PRINTERS[(rt.group, rt.kind)]
    else:
        headers = DEFAULT_TABLE_COLUMNS

    rows: list[dict[str, Any]] = []
    for obj in objects:
        conditions = None
        if custom is not None:
            cells = convertor.cells(obj, now_ns)
        elif printer is not None:
            cells, conditions = printer(obj, now_ns)
        else:
            cells = _default_cells(obj)
        row: dict[str, Any] = {"cells": cells}
        if conditions:
            row["conditions"] = [dict(c) for c in conditions]
        if include_object != "None":
            row["object"] = _row_object(obj, include_object)
        rows.append(row)

    metadata: dict[str, Any] = {}
    if resource_version:
        metadata["resourceVersion"] = resource_version
    if continue_token:
        metadata["continue"] = continue_token
    if remaining_item_count is not None:
        metadata["remainingItemCount"] = remaining_item_count
    return {
        "kind": "Table",
        "apiVersion": TABLE_API_VERSION,
        "metadata": metadata,
        "columnDefinitions": [dict(h) for h in headers] if with_columns else [],
        "rows": rows,
    }


__all__ = ["BUILTIN_GROUPS", "DEFAULT_TABLE_COLUMNS", "NAME_DOC", "VPA_PRINTER_COLUMNS",
           "cell_for_json_value", "column_definitions", "to_table"]
