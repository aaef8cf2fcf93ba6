"""Shared builders and assertions for the validation tests (imported by file name)."""

from __future__ import annotations

import copy
from typing import Any, Callable

from kvert.api.errors import Cause


def pod(name: str = "web", namespace: str = "default", **spec: Any) -> dict:
    """A valid Guaranteed pod (seed 000's ``2pod`` shape) with ``spec`` overrides."""
    body = {
        "containers": [{
            "name": "stress",
            "image": "skiibum/ubuntu-stress:18.10",
            "resizePolicy": [{"resourceName": "cpu", "restartPolicy": "NotRequired"},
                             {"resourceName": "memory", "restartPolicy": "NotRequired"}],
            "resources": {"limits": {"cpu": "500m", "memory": "500Mi"},
                          "requests": {"cpu": "500m", "memory": "500Mi"}},
        }],
    }
    body.update(spec)
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace}, "spec": body}


def edit(obj: dict, change: Callable[[dict], Any]) -> dict:
    out = copy.deepcopy(obj)
    change(out)
    return out


def container(obj: dict, i: int = 0) -> dict:
    return obj["spec"]["containers"][i]


def find(causes: list[Cause], field: str, reason: str, contains: str | None = None) -> list[Cause]:
    return [c for c in causes
            if c.field == field and c.reason == reason and (contains is None or contains in c.message)]


def assert_cause(causes: list[Cause], field: str, reason: str, contains: str | None = None) -> None:
    assert find(causes, field, reason, contains), (
        f"expected {reason} at {field!r}" + (f" containing {contains!r}" if contains else "")
        + " in:\n" + "\n".join(f"  {c.field}: {c.message} ({c.reason})" for c in causes))


def assert_valid(causes: list[Cause]) -> None:
    assert causes == [], "\n".join(f"  {c.field}: {c.message} ({c.reason})" for c in causes)


INVALID = "FieldValueInvalid"
REQUIRED = "FieldValueRequired"
FORBIDDEN = "FieldValueForbidden"
NOT_SUPPORTED = "FieldValueNotSupported"
DUPLICATE = "FieldValueDuplicate"
NOT_FOUND = "FieldValueNotFound"
TOO_LONG = "FieldValueTooLong"
TOO_MANY = "FieldValueTooMany"
TYPE_INVALID = "FieldValueTypeInvalid"
