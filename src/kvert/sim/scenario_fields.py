"""The field checks of scenario files: each error a ``ScenarioError`` whose message starts
with the path of the offending field (``workloads[0].containers[1].requests.cpu: ...``)."""

from __future__ import annotations

import re
from typing import Any

from kvert.api.quantity import QuantityError, to_int
from kvert.kubelet.config import ConfigError, parse_duration_or_days

_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


class ScenarioError(ValueError):
    """A scenario kvert cannot run; the message names the field."""


def duration(value: object, path: str) -> float:
    try:
        seconds = parse_duration_or_days(value, path)
    except ConfigError:
        raise ScenarioError(f"{path}: invalid duration {value!r} (e.g. \"90s\", \"1h30m\", \"2d\")") from None
    if seconds <= 0:
        raise ScenarioError(f"{path}: must be positive")
    return seconds


def as_mapping(value: object, path: str) -> dict:
    if not isinstance(value, dict):
        raise ScenarioError(f"{path}: expected a mapping, got {type(value).__name__}")
    return value


def check_keys(doc: dict, allowed: set[str], path: str) -> None:
    unknown = sorted(set(doc) - allowed)
    if unknown:
        where = f"{path}: " if path else ""
        raise ScenarioError(f"{where}unknown field {unknown[0]!r} (expected one of {', '.join(sorted(allowed))})")


def required(doc: dict, key: str, path: str) -> Any:
    if key not in doc or doc[key] is None:
        raise ScenarioError(f"{path + '.' if path else ''}{key}: required")
    return doc[key]


def resource_list(value: object, path: str) -> dict[str, str]:
    """A ResourceList, as a mapping or ``"cpu=4,memory=8Gi"``; validated, returned as strings."""
    if isinstance(value, str):
        items: dict[str, Any] = {}
        for part in filter(None, (p.strip() for p in value.split(","))):
            if "=" not in part:
                raise ScenarioError(f"{path}: expected name=quantity pairs, got {part!r}")
            k, v = part.split("=", 1)
            items[k.strip()] = v.strip()
        value = items
    doc = as_mapping(value, path)
    out = {}
    for k, v in doc.items():
        if isinstance(v, bool) or not isinstance(v, (str, int, float)):
            raise ScenarioError(f"{path}.{k}: expected a quantity, got {v!r}")
        try:
            amount = to_int(str(k), str(v))
        except (QuantityError, ValueError) as e:
            raise ScenarioError(f"{path}.{k}: invalid quantity {v!r} ({e})") from None
        if amount < 0:
            raise ScenarioError(f"{path}.{k}: must not be negative")
        out[str(k)] = str(v)
    return out


def resource_flag(value: object, path: str) -> str:
    if value is None or value == "":
        return ""
    return ",".join(f"{k}={v}" for k, v in resource_list(value, path).items())


def dns_label(value: object, path: str) -> str:
    if not isinstance(value, str) or not _NAME.match(value) or len(value) > 63:
        raise ScenarioError(f"{path}: invalid name {value!r} (lowercase letters, digits and '-')")
    return value


__all__ = ["ScenarioError", "as_mapping", "check_keys", "dns_label", "duration", "required", "resource_flag",
           "resource_list"]
