"""Name and key checks as field causes, on top of :mod:`kvert.api.names`.

The syntax rules themselves (the ``is_*`` / ``name_is_*`` checks and their message helpers)
live in :mod:`kvert.api.names`, shared with label selectors; they are re-exported here so
validation code reaches every name rule through ``names.``. The ``validate_*`` functions turn
their problems into causes at a field path.
"""

from __future__ import annotations

from collections.abc import Callable

from kvert.api.names import (
    DNS1035_LABEL_MAX,
    DNS1123_LABEL_MAX,
    DNS1123_SUBDOMAIN_MAX,
    LABEL_VALUE_MAX,
    QUALIFIED_NAME_MAX,
    empty_error,
    inclusive_range_error,
    is_config_map_key,
    is_dns1035_label,
    is_dns1123_label,
    is_dns1123_subdomain,
    is_env_var_name,
    is_label_value,
    is_qualified_name,
    is_valid_percent,
    is_valid_port_name,
    is_valid_port_num,
    max_len_error,
    name_is_dns1035_label,
    name_is_dns_label,
    name_is_dns_subdomain,
    nbytes,
    regex_error,
)

from .common import Causes, invalid, too_long

TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024

__all__ = [
    # the syntax rules, re-exported from kvert.api.names
    "DNS1035_LABEL_MAX", "DNS1123_LABEL_MAX", "DNS1123_SUBDOMAIN_MAX", "LABEL_VALUE_MAX",
    "QUALIFIED_NAME_MAX", "empty_error", "inclusive_range_error", "is_config_map_key",
    "is_dns1035_label", "is_dns1123_label", "is_dns1123_subdomain", "is_env_var_name",
    "is_label_value", "is_qualified_name", "is_valid_percent", "is_valid_port_name",
    "is_valid_port_num", "max_len_error", "name_is_dns1035_label", "name_is_dns_label",
    "name_is_dns_subdomain", "nbytes", "regex_error",
    # this module's own
    "TOTAL_ANNOTATION_SIZE_LIMIT", "validate_annotations", "validate_dns1123_label",
    "validate_dns1123_subdomain", "validate_finalizer_name", "validate_label_name",
    "validate_labels", "validate_qualified_name", "validate_with",
]


# -- validate_* wrappers that produce causes ---------------------------------------------------

def validate_with(check: Callable[[str], list[str]], value: str, path: str) -> Causes:
    """Reports each problem ``check(value)`` finds (any ``is_*`` or ``name_is_*``) at ``path``."""
    return [invalid(path, value, msg) for msg in check(value)]


def validate_dns1123_label(value: str, path: str) -> Causes:
    return validate_with(is_dns1123_label, value, path)


def validate_dns1123_subdomain(value: str, path: str) -> Causes:
    return validate_with(is_dns1123_subdomain, value, path)


def validate_qualified_name(value: str, path: str) -> Causes:
    return validate_with(is_qualified_name, value, path)


def validate_label_name(value: str, path: str) -> Causes:
    """``ValidateLabelName`` (a label key is a qualified name)."""
    return validate_with(is_qualified_name, value, path)


def validate_labels(labels: dict[str, str], path: str) -> Causes:
    """``ValidateLabels``: Kubernetes reports every problem at the map's own path."""
    errs: Causes = []
    for k, v in labels.items():
        errs.extend(validate_label_name(k, path))
        errs.extend(invalid(path, v, msg) for msg in is_label_value(v))
    return errs


def validate_annotations(annotations: dict[str, str], path: str) -> Causes:
    """Keys are qualified names (case-insensitive); keys and values total at most 256 KiB."""
    errs: Causes = []
    total = 0
    for k, v in annotations.items():
        errs.extend(invalid(path, k, msg) for msg in is_qualified_name(k.lower()))
        total += nbytes(k) + nbytes(v)
    if total > TOTAL_ANNOTATION_SIZE_LIMIT:
        errs.append(too_long(path, TOTAL_ANNOTATION_SIZE_LIMIT))
    return errs


_STANDARD_FINALIZERS = frozenset({"kubernetes", "orphan", "foregroundDeletion"})


def validate_finalizer_name(value: str, path: str) -> Causes:
    errs = validate_qualified_name(value, path)
    if "/" not in value and value not in _STANDARD_FINALIZERS:
        errs.append(invalid(path, value, "name is neither a standard finalizer name nor is it "
                                         "fully qualified"))
    return errs
