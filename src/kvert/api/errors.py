"""API errors as Kubernetes reports them: each maps to a ``Status`` object.

Every layer (store, registry, client, HTTP server) raises these, so a caller sees the
same reason and code whether it talks to the store in-process or over HTTP.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Cause:
    """One ``StatusCause``: what is wrong with which field (``reason`` is the cause type)."""

    field: str
    message: str
    reason: str = "FieldValueInvalid"

    def to_dict(self) -> dict[str, str]:
        # every member is omitempty in Go's StatusCause
        full = {"reason": self.reason, "message": self.message, "field": self.field}
        return {k: v for k, v in full.items() if v}


# Constructors for the cause types Kubernetes' field validation emits, so messages read
# the way kubectl users know them ("Required value", "Invalid value: ...").
def required(path: str, detail: str = "") -> Cause:
    return Cause(path, "Required value" + (f": {detail}" if detail else ""), "FieldValueRequired")


def invalid(path: str, value: Any, detail: str) -> Cause:
    return Cause(path, f"Invalid value: {_show(value)}: {detail}", "FieldValueInvalid")


def not_supported(path: str, value: Any, supported: list[str]) -> Cause:
    options = ", ".join(f'"{s}"' for s in supported)
    return Cause(path, f"Unsupported value: {_show(value)}: supported values: {options}",
                 "FieldValueNotSupported")


def forbidden(path: str, detail: str) -> Cause:
    return Cause(path, f"Forbidden: {detail}", "FieldValueForbidden")


def duplicate(path: str, value: Any) -> Cause:
    return Cause(path, f"Duplicate value: {_show(value)}", "FieldValueDuplicate")


def too_long(path: str, value: Any, limit: int) -> Cause:
    return Cause(path, f"Too long: may not be more than {limit} bytes", "FieldValueTooLong")


def _show(value: Any) -> str:
    if isinstance(value, str):
        return f'"{value}"'
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


@dataclass
class ApiError(Exception):
    """An error with the HTTP code and ``reason`` Kubernetes uses for it."""

    message: str
    code: int = 500
    reason: str = "InternalError"
    details: dict[str, Any] = field(default_factory=dict)
    causes: list[Cause] = field(default_factory=list)

    # A Status whose details are there but empty ("details":{}), as for a path no route serves.
    empty_details = False

    def __str__(self) -> str:
        return self.message

    def to_status(self) -> dict[str, Any]:
        status: dict[str, Any] = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
        }
        details = dict(self.details)
        if self.causes:
            details["causes"] = [c.to_dict() for c in self.causes]
        if details or self.empty_details:
            status["details"] = _in_field_order(details)
        status["code"] = self.code   # after details, in metav1.Status field order
        return status

    @classmethod
    def from_status(cls, status: dict[str, Any]) -> ApiError:
        """Rebuild the matching error from a ``Status`` (as an HTTP client receives it)."""
        details = dict(status.get("details") or {})
        causes = [Cause(c.get("field", ""), c.get("message", ""), c.get("reason", ""))
                  for c in details.pop("causes", []) or []]
        reason = status.get("reason", "") or "InternalError"
        kind = _BY_REASON.get(reason, ApiError)
        err = kind.__new__(kind)
        ApiError.__init__(err, status.get("message", ""), int(status.get("code", 500)), reason,
                          details, causes)
        return err


# metav1.StatusDetails' fields in their declared (and so JSON) order; all are omitempty.
_DETAILS_ORDER = ("name", "group", "kind", "uid", "causes", "retryAfterSeconds")


def _in_field_order(details: dict[str, Any]) -> dict[str, Any]:
    ordered = {k: details[k] for k in _DETAILS_ORDER if details.get(k)}
    return {**ordered, **{k: v for k, v in details.items() if k not in _DETAILS_ORDER and v}}


def status_success(code: int = 200, details: dict[str, Any] | None = None) -> dict[str, Any]:
    """The ``Status`` a successful non-object response carries (binding, eviction)."""
    status: dict[str, Any] = {"kind": "Status", "apiVersion": "v1", "metadata": {},
                              "status": "Success", "code": code}
    if details:
        status["details"] = details
    return status


def _details(resource: str, name: str) -> dict[str, Any]:
    group, _, kind = resource.rpartition("/")
    d: dict[str, Any] = {"name": name, "kind": kind}
    if group:
        d["group"] = group
    return d


class NotFound(ApiError):
    def __init__(self, resource: str, name: str, message: str | None = None):
        super().__init__(message or f'{_plain(resource)} "{name}" not found', 404, "NotFound",
                         _details(resource, name))


NO_ROUTE = "the server could not find the requested resource"


class RouteNotFound(NotFound):
    """404 for a path that names no served resource (or subresource): kube-apiserver's
    generic not-found answer, whose details are empty."""

    empty_details = True

    def __init__(self) -> None:
        ApiError.__init__(self, NO_ROUTE, 404, "NotFound")


class AlreadyExists(ApiError):
    def __init__(self, resource: str, name: str):
        super().__init__(f'{_plain(resource)} "{name}" already exists', 409, "AlreadyExists",
                         _details(resource, name))


class Conflict(ApiError):
    """Optimistic-concurrency failure (stale resourceVersion) or a failed precondition."""

    def __init__(self, resource: str, name: str, detail: str):
        super().__init__(f'Operation cannot be fulfilled on {_plain(resource)} "{name}": {detail}',
                         409, "Conflict", _details(resource, name))


def aggregate_message(messages: list[str]) -> str:
    """``utilerrors.NewAggregate(errs).Error()``: one message as it is; several without
    repeats, joined by ", " in brackets."""
    if len(messages) == 1:
        return messages[0]
    unique = list(dict.fromkeys(messages))
    text = ", ".join(unique)
    return text if len(unique) == 1 else f"[{text}]"


class Invalid(ApiError):
    """422: the object failed validation; ``causes`` name each bad field."""

    def __init__(self, kind: str, name: str, causes: list[Cause], group: str = ""):
        subject = f'{kind}.{group}' if group else kind
        details: dict[str, Any] = {"name": name, "kind": kind}
        if group:
            details["group"] = group
        summary = aggregate_message([f"{c.field}: {c.message}" if c.field else c.message
                                     for c in causes])
        super().__init__(f'{subject} "{name}" is invalid: {summary}', 422, "Invalid", details,
                         list(causes))


class BadRequest(ApiError):
    def __init__(self, message: str):
        super().__init__(message, 400, "BadRequest")


class Unauthorized(ApiError):
    def __init__(self, message: str = "Unauthorized"):
        super().__init__(message, 401, "Unauthorized")


class Forbidden(ApiError):
    def __init__(self, message: str):
        super().__init__(message, 403, "Forbidden")


class MethodNotAllowed(ApiError):
    def __init__(self, message: str = "the server does not allow this method on the requested resource"):
        super().__init__(message, 405, "MethodNotAllowed")


class Expired(ApiError):
    """410: a watch or continue token refers to a compacted resourceVersion."""

    def __init__(self, message: str):
        super().__init__(message, 410, "Expired")


class UnsupportedMediaType(ApiError):
    def __init__(self, message: str):
        super().__init__(message, 415, "UnsupportedMediaType")


class TooManyRequests(ApiError):
    def __init__(self, message: str, retry_after_seconds: int | None = None,
                 causes: list[Cause] | None = None):
        details = {"retryAfterSeconds": retry_after_seconds} if retry_after_seconds else {}
        super().__init__(message, 429, "TooManyRequests", details, causes or [])


class InternalError(ApiError):
    def __init__(self, message: str):
        super().__init__(message, 500, "InternalError")


class Timeout(ApiError):
    """504: e.g. a resourceVersion newer than the store has ("Too large resource version")."""

    def __init__(self, message: str, retry_after_seconds: int = 1):
        super().__init__(message, 504, "Timeout", {"retryAfterSeconds": retry_after_seconds})


def _plain(resource: str) -> str:
    # "apps/deployments" -> "deployments.apps", the way Kubernetes names a resource in messages
    group, _, plural = resource.rpartition("/")
    return f"{plural}.{group}" if group else plural


_BY_REASON: dict[str, type[ApiError]] = {
    "NotFound": NotFound, "AlreadyExists": AlreadyExists, "Conflict": Conflict,
    "Invalid": Invalid, "BadRequest": BadRequest, "Unauthorized": Unauthorized,
    "Forbidden": Forbidden, "MethodNotAllowed": MethodNotAllowed, "Expired": Expired,
    "Gone": Expired, "UnsupportedMediaType": UnsupportedMediaType,
    "TooManyRequests": TooManyRequests, "InternalError": InternalError, "Timeout": Timeout,
}
