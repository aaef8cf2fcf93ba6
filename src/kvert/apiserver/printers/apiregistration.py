"""Columns and rows of APIServices: kube-aggregator's own table convertor
(``pkg/registry/apiservice/etcd``, ``REST.ConvertToTable``): Name, Service (``Local`` or
``namespace/name``), Available (``True``, or the status with its reason: ``False
(ServiceNotFound)``; ``Unknown`` without an Available condition) and Age.
"""

from __future__ import annotations

from typing import Any

from .builtin import RowFunc, _age, _l, _m, _name, _s, age_col, col, name_col

API_SERVICE_COLUMNS = [
    name_col(),
    col("Service", "string", "The reference to the service that hosts this API endpoint."),
    col("Available", "string", "Whether this service is available."),
    age_col(),
]


def api_service_service(spec: dict) -> str:
    service = spec.get("service")
    if not isinstance(service, dict):
        return "Local"
    return f"{_s(service.get('namespace'))}/{_s(service.get('name'))}"


def api_service_available(status: dict) -> str:
    for condition in _l(status.get("conditions")):
        condition = _m(condition)
        if condition.get("type") != "Available":
            continue
        value, reason = _s(condition.get("status")), _s(condition.get("reason"))
        if value == "True" or not reason:
            return value
        return f"{value} ({reason})"
    return "Unknown"


def api_service_row(obj: dict, now: int) -> list[Any]:
    return [_name(obj), api_service_service(_m(obj.get("spec"))),
            api_service_available(_m(obj.get("status"))), _age(obj, now)]


def _row(obj: dict, now: int) -> tuple[list[Any], None]:
    return api_service_row(obj, now), None


_ROW: RowFunc = _row

PRINTERS = {
    ("apiregistration.k8s.io", "APIService"): (API_SERVICE_COLUMNS, _ROW),
}
