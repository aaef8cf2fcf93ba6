"""Shared plumbing for the validators: field paths, typed access to JSON, value rendering.

Objects arrive as decoded JSON (``dict``/``list``/``str``/``int``/``float``/``bool``/``None``)
and may be malformed in any way, so every accessor checks the type and reports a
``FieldValueInvalid`` cause instead of raising. Validators never mutate their input.
"""

from __future__ import annotations

import json
from datetime import datetime
from functools import lru_cache
from typing import Any

from kvert.api import errors
from kvert.api.errors import Cause
from kvert.api.types import Obj

Causes = list[Cause]

MAX_INT32 = 2**31 - 1
MIN_INT32 = -(2**31)
MAX_INT64 = 2**63 - 1

# Messages apimachinery shares between validators.
IS_NEGATIVE_MSG = "must be greater than or equal to 0"
IS_NOT_POSITIVE_MSG = "must be greater than zero"
IMMUTABLE_MSG = "field is immutable"


# -- paths ------------------------------------------------------------------------------------

def child(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def index(path: str, i: int) -> str:
    return f"{path}[{i}]"


def key(path: str, k: object) -> str:
    return f"{path}[{k}]"


# -- rendering and cause constructors ---------------------------------------------------------

def show(value: Any) -> str:
    """A compact JSON rendering for structured values in messages."""
    try:
        text = json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 200 else text[:197] + "..."


def invalid(path: str, value: Any, detail: str) -> Cause:
    """``field.Invalid``; dicts and lists are shown as compact JSON."""
    if isinstance(value, (dict, list, tuple)):
        return Cause(path, f"Invalid value: {show(value)}: {detail}", "FieldValueInvalid")
    return errors.invalid(path, value, detail)


def required(path: str, detail: str = "") -> Cause:
    return errors.required(path, detail)


def forbidden(path: str, detail: str) -> Cause:
    return errors.forbidden(path, detail)


def not_supported(path: str, value: Any, supported: list[str] | tuple[str, ...]) -> Cause:
    if isinstance(value, (dict, list)):
        value = show(value)
    return errors.not_supported(path, value, list(supported))


def duplicate(path: str, value: Any, detail: str = "") -> Cause:
    if isinstance(value, (dict, list)):
        text = f"Duplicate value: {show(value)}"
        return Cause(path, text + (f": {detail}" if detail else ""), "FieldValueDuplicate")
    cause = errors.duplicate(path, value)
    if detail:
        return Cause(path, f"{cause.message}: {detail}", cause.reason)
    return cause


def not_found(path: str, value: Any, detail: str = "") -> Cause:
    text = f"Not found: {show(value) if not isinstance(value, str) else json.dumps(value)}"
    return Cause(path, text + (f": {detail}" if detail else ""), "FieldValueNotFound")


def too_long(path: str, limit: int) -> Cause:
    return errors.too_long(path, None, limit)


def too_many(path: str, actual: int, limit: int) -> Cause:
    return Cause(path, f"Too many: {actual}: must have at most {limit} items", "FieldValueTooMany")


def immutable(path: str, new_value: Any) -> Cause:
    return invalid(path, new_value, IMMUTABLE_MSG)


# -- typed access -----------------------------------------------------------------------------

_TYPE_NAMES = {dict: "object", list: "array", str: "string", int: "integer", float: "number",
               bool: "boolean"}


def type_name(value: Any) -> str:
    if value is None:
        return "null"
    for t, name in ((bool, "boolean"), (int, "integer"), (float, "number"), (str, "string"),
                    (dict, "object"), (list, "array")):
        if isinstance(value, t):
            return name
    return type(value).__name__


def type_error(path: str, value: Any, expected: str) -> Cause:
    """What a structural schema says for a wrongly typed field."""
    return Cause(path, f'Invalid value: "{type_name(value)}": {path} in body must be of type '
                       f'{expected}: "{type_name(value)}"', "FieldValueTypeInvalid")


def dict_field(parent: Obj, name: str) -> Obj:
    """``parent[name]`` when it is an object, else ``{}``; for reads that report nothing."""
    value = parent.get(name)
    return value if isinstance(value, dict) else {}


def list_field(parent: Obj, name: str) -> list[Any]:
    """``parent[name]`` when it is an array, else ``[]``; for reads that report nothing."""
    value = parent.get(name)
    return value if isinstance(value, list) else []


def get_dict(parent: Any, name: str, path: str, errs: Causes) -> Obj:
    """``parent[name]`` as a dict; ``{}`` when absent or null, a cause when of another type."""
    if not isinstance(parent, dict):
        return {}
    value = parent.get(name)
    if value is None:
        return {}
    if isinstance(value, dict):
        return value
    errs.append(type_error(child(path, name), value, "object"))
    return {}


def get_list(parent: Any, name: str, path: str, errs: Causes) -> list[Any]:
    if not isinstance(parent, dict):
        return []
    value = parent.get(name)
    if value is None:
        return []
    if isinstance(value, list):
        return value
    errs.append(type_error(child(path, name), value, "array"))
    return []


def get_str(parent: Any, name: str, path: str, errs: Causes) -> str:
    """``parent[name]`` as a string; ``""`` when absent (the Go zero value)."""
    if not isinstance(parent, dict):
        return ""
    value = parent.get(name)
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    errs.append(type_error(child(path, name), value, "string"))
    return ""


def get_int(parent: Any, name: str, path: str, errs: Causes, *, bits: int = 64) -> int | None:
    """``parent[name]`` as an integer (None when absent); floats with integral value pass."""
    if not isinstance(parent, dict):
        return None
    value = parent.get(name)
    if value is None:
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        errs.append(type_error(child(path, name), value, "integer"))
        return None
    lo, hi = (MIN_INT32, MAX_INT32) if bits == 32 else (-(2**63), MAX_INT64)
    if not lo <= value <= hi:
        errs.append(invalid(child(path, name), value, f"must fit in a {bits}-bit integer"))
        return None
    return value


def get_number(parent: Any, name: str, path: str, errs: Causes) -> float | int | None:
    if not isinstance(parent, dict):
        return None
    value = parent.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        errs.append(type_error(child(path, name), value, "number"))
        return None
    return value


def get_bool(parent: Any, name: str, path: str, errs: Causes) -> bool | None:
    if not isinstance(parent, dict):
        return None
    value = parent.get(name)
    if value is None:
        return None
    if isinstance(value, bool):
        return value
    errs.append(type_error(child(path, name), value, "boolean"))
    return None


def get_str_map(parent: Any, name: str, path: str, errs: Causes) -> dict[str, str]:
    """A ``map[string]string`` such as labels or nodeSelector; non-string values are reported."""
    raw = get_dict(parent, name, path, errs)
    out: dict[str, str] = {}
    for k, v in raw.items():
        if not isinstance(v, str):
            errs.append(type_error(key(child(path, name), k), v, "string"))
            continue
        out[k] = v
    return out


def dicts(items: list[Any], path: str, errs: Causes) -> list[tuple[int, str, Obj]]:
    """``(i, path[i], item)`` for each element of a list of objects; others are reported."""
    out = []
    for i, item in enumerate(items):
        p = index(path, i)
        if isinstance(item, dict):
            out.append((i, p, item))
        else:
            errs.append(type_error(p, item, "object"))
    return out


def nonnegative(value: int | None, path: str) -> Causes:
    if value is not None and value < 0:
        return [invalid(path, value, IS_NEGATIVE_MSG)]
    return []


def parse_time(value: Any) -> datetime | None:
    """An RFC 3339 timestamp (``metav1.Time``/``MicroTime``), or None if it does not parse."""
    if not isinstance(value, str) or not value:
        return None
    return _parse_time_text(value)


@lru_cache(maxsize=4096)
def _parse_time_text(value: str) -> datetime | None:
    # cached: the objects written within a second carry the same timestamps (an Event three)
    text = value.replace("z", "Z")
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return None
    if parsed.tzinfo is None or "T" not in text.upper():
        return None
    return parsed


def validate_time(parent: Any, name: str, path: str, errs: Causes, *, nullable: bool = True) -> None:
    if not isinstance(parent, dict) or name not in parent:
        return
    value = parent[name]
    if value is None and nullable:
        return
    if parse_time(value) is None:
        errs.append(invalid(child(path, name), value if isinstance(value, str) else show(value),
                            "must be an RFC 3339 date-time (e.g. '2006-01-02T15:04:05Z')"))
