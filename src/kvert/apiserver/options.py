"""Query parameters of resource requests, converted and validated as kube-apiserver does.

kube-apiserver decodes the query into ``ListOptions``, ``CreateOptions``, ``UpdateOptions``,
``PatchOptions`` or ``DeleteOptions`` (``runtime.ParameterCodec``), then validates them:

- conversion errors are 400 BadRequest with Go's text: an integer (``limit``,
  ``timeoutSeconds``, ``gracePeriodSeconds``) is ``strconv.ParseInt(s, 10, 64)``
  (``strconv.ParseInt: parsing "abc": invalid syntax``); a boolean is false only for
  ``false`` (any case) or ``0`` and true for anything else, even empty; of a repeated
  parameter the first value counts (``dryRun`` takes them all); ``labelSelector`` and
  ``fieldSelector`` must parse;
- validation errors are 422 Invalid on the options kind (``ListOptions.meta.k8s.io "" is
  invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless
  resourceVersion is provided``): ``ValidateListOptions``, ``ValidateCreateOptions``,
  ``ValidateUpdateOptions``, ``ValidatePatchOptions`` and ``ValidateDeleteOptions``;
- a list's ``resourceVersion`` is then read as a decimal uint64: 400 ``invalid resource
  version: resourceVersion: Invalid value: "x": strconv.ParseUint: parsing "x": invalid
  syntax`` (a watch's is 422 on the resource: ``pods "" is invalid: resourceVersion: ...``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from kvert.api.errors import BadRequest, Cause, Invalid, forbidden, required, too_long
from kvert.api.fields import FieldSelector
from kvert.api.gostrings import quote
from kvert.api.kinds import ResourceType
from kvert.api.selectors import LabelSelector, SelectorError
from kvert.registry.deletion import POLICIES

FIELD_MANAGER_MAX_LENGTH = 128
FIELD_VALIDATION = ("Ignore", "Strict", "Warn")
EXACT, NOT_OLDER_THAN = "Exact", "NotOlderThan"
_INT = re.compile(r"[+-]?[0-9]+")
_UINT = re.compile(r"[0-9]+")
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_UINT64_MAX = 2**64 - 1
_META_GROUP = "meta.k8s.io"


# -- conversion (runtime.Convert_Slice_string_To_*) ---------------------------------------------

def first(query: Any, name: str) -> str | None:
    """The first value of a parameter, None when it is absent."""
    values = query.getall(name, [])
    return values[0] if values else None


def parse_bool(text: str | None) -> bool:
    """``Convert_Slice_string_To_bool``: only ``false`` and ``0`` are false."""
    return text is not None and text != "0" and text.lower() != "false"


def parse_int64(text: str) -> int:
    """``strconv.ParseInt(text, 10, 64)``; BadRequest with Go's error otherwise."""
    if not _INT.fullmatch(text):
        raise BadRequest(f"strconv.ParseInt: parsing {quote(text)}: invalid syntax")
    value = int(text)
    if not _INT64_MIN <= value <= _INT64_MAX:
        raise BadRequest(f"strconv.ParseInt: parsing {quote(text)}: value out of range")
    return value


def _optional_int(query: Any, name: str) -> int | None:
    text = first(query, name)
    return None if text is None else parse_int64(text)


def _optional_bool(query: Any, name: str) -> bool | None:
    text = first(query, name)
    return None if text is None else parse_bool(text)


def parse_resource_version(text: str) -> int | None:
    """``APIObjectVersioner.ParseResourceVersion``: a decimal uint64 ("" and "0" are 0);
    None when it is not one, with :func:`resource_version_problem` saying why."""
    if text in ("", "0"):
        return 0
    if not _UINT.fullmatch(text) or int(text) > _UINT64_MAX:
        return None
    return int(text)


def resource_version_problem(text: str) -> Cause:
    reason = "value out of range" if _UINT.fullmatch(text) else "invalid syntax"
    return Cause("resourceVersion", f"Invalid value: {quote(text)}: strconv.ParseUint: parsing "
                                    f"{quote(text)}: {reason}")


def not_supported(path: str, value: str, supported: list[str]) -> Cause:
    """``field.NotSupported`` with Go's quoting of the value."""
    options = ", ".join(quote(s) for s in supported)
    return Cause(path, f"Unsupported value: {quote(value)}: supported values: {options}",
                 "FieldValueNotSupported")


# -- ListOptions ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class ListOptions:
    label_selector: str = ""
    field_selector: str = ""
    resource_version: str = ""
    resource_version_match: str = ""
    continue_token: str = ""
    limit: int = 0
    timeout_seconds: int | None = None
    watch: bool = False
    allow_watch_bookmarks: bool = False
    send_initial_events: bool | None = None


def wants_watch(query: Any) -> bool:
    return parse_bool(first(query, "watch"))


def list_options(query: Any, rt: ResourceType, *, watch: bool = False) -> ListOptions:
    """The ListOptions of a list, watch (``watch``: also when the path says so) or
    deletecollection request."""
    options = ListOptions(
        label_selector=first(query, "labelSelector") or "",
        field_selector=first(query, "fieldSelector") or "",
        resource_version=first(query, "resourceVersion") or "",
        resource_version_match=first(query, "resourceVersionMatch") or "",
        continue_token=first(query, "continue") or "",
        limit=_optional_int(query, "limit") or 0,
        timeout_seconds=_optional_int(query, "timeoutSeconds"),
        watch=watch or wants_watch(query),
        allow_watch_bookmarks=parse_bool(first(query, "allowWatchBookmarks")),
        send_initial_events=_optional_bool(query, "sendInitialEvents"))
    try:
        LabelSelector.parse(options.label_selector)
        FieldSelector.parse(options.field_selector)
    except SelectorError as e:
        raise BadRequest(str(e)) from None
    causes = _validate_list(options)
    if causes:
        raise Invalid("ListOptions", "", causes, _META_GROUP)
    if parse_resource_version(options.resource_version) is None:
        problem = resource_version_problem(options.resource_version)
        if options.watch:
            # InterpretWatchError: the storage's InvalidError, on the resource
            raise Invalid(rt.plural, "", [problem], rt.group)
        raise BadRequest(f"invalid resource version: {problem.field}: {problem.message}")
    return options


def _validate_list(o: ListOptions) -> list[Cause]:
    """``ValidateListOptions`` (WatchList enabled, as in Kubernetes 1.35)."""
    causes: list[Cause] = []
    match = o.resource_version_match
    if o.watch:
        if o.send_initial_events is not None and match != NOT_OLDER_THAN:
            causes.append(forbidden("resourceVersionMatch", "sendInitialEvents requires setting "
                                    f"resourceVersionMatch to {NOT_OLDER_THAN}"))
        if match:
            if o.send_initial_events is None:
                causes.append(forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden "
                                        "for watch unless sendInitialEvents is provided"))
            if match != NOT_OLDER_THAN:
                causes.append(not_supported("resourceVersionMatch", match, [NOT_OLDER_THAN]))
            if o.continue_token:
                causes.append(forbidden("resourceVersionMatch",
                                        "resourceVersionMatch is forbidden when continue is provided"))
        return causes
    if match:
        if not o.resource_version:
            causes.append(forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden "
                                    "unless resourceVersion is provided"))
        if o.continue_token:
            causes.append(forbidden("resourceVersionMatch",
                                    "resourceVersionMatch is forbidden when continue is provided"))
        if match not in (EXACT, NOT_OLDER_THAN):
            causes.append(not_supported("resourceVersionMatch", match, [EXACT, NOT_OLDER_THAN, ""]))
        if match == EXACT and o.resource_version == "0":
            causes.append(forbidden("resourceVersionMatch", 'resourceVersionMatch "exact" is '
                                    'forbidden for resourceVersion "0"'))
    if o.send_initial_events is not None:
        causes.append(forbidden("sendInitialEvents", "sendInitialEvents is forbidden for list"))
    return causes


# -- Create/Update/PatchOptions ------------------------------------------------------------------

@dataclass(frozen=True)
class WriteOptions:
    dry_run: bool = False
    field_manager: str = ""
    field_validation: str = "Warn"   # "" in the query means the server's default
    force: bool = False


CREATE, UPDATE, PATCH = "CreateOptions", "UpdateOptions", "PatchOptions"


def write_options(query: Any, kind: str, *, apply: bool = False) -> WriteOptions:
    """The options of a create, update or patch (``kind``: CREATE, UPDATE or PATCH;
    ``apply``: a server-side apply patch)."""
    dry_run = query.getall("dryRun", [])
    manager = first(query, "fieldManager") or ""
    validation = first(query, "fieldValidation") or ""
    force = _optional_bool(query, "force") if kind == PATCH else None
    causes: list[Cause] = []
    if kind == PATCH:
        if not apply and force is not None:
            causes.append(forbidden("force", "may not be specified for non-apply patch"))
        if apply and not manager:
            causes.append(required("fieldManager", "is required for apply patch"))
    causes += field_manager_problems(manager, "fieldManager")
    causes += dry_run_problems(dry_run)
    if validation not in ("", *FIELD_VALIDATION):
        causes.append(not_supported("fieldValidation", validation, ["", *FIELD_VALIDATION]))
    if causes:
        raise Invalid(kind, "", causes, _META_GROUP)
    return WriteOptions(bool(dry_run), manager, validation or "Warn", bool(force))


def field_manager_problems(manager: str, path: str) -> list[Cause]:
    """``ValidateFieldManager``: at most 128 bytes, printable characters only."""
    causes = []
    if len(manager.encode("utf-8", "replace")) > FIELD_MANAGER_MAX_LENGTH:
        causes.append(too_long(path, manager, FIELD_MANAGER_MAX_LENGTH))
    position = 0
    for c in manager:
        if not c.isprintable():
            causes.append(Cause(path, f"Invalid value: {quote(manager)}: invalid character "
                                      f"U+{ord(c):04X} (at position {position})"))
        position += len(c.encode("utf-8", "replace"))
    return causes


def dry_run_problems(values: list[str]) -> list[Cause]:
    """``ValidateDryRun``: "All" is the only value."""
    if all(v == "All" for v in values):
        return []
    shown = ", ".join(quote(v) for v in values)
    return [Cause("dryRun", f'Unsupported value: []string{{{shown}}}: supported values: "All"',
                  "FieldValueNotSupported")]


# -- DeleteOptions -------------------------------------------------------------------------------

@dataclass(frozen=True)
class DeleteOptions:
    grace_period_seconds: int | None = None
    propagation_policy: str | None = None
    orphan_dependents: bool | None = None
    preconditions: dict | None = None
    dry_run: bool = False


def delete_options(query: Any, body: dict | None) -> DeleteOptions:
    """DeleteOptions from the body or, when there is none, the query (kube-apiserver never
    merges the two); ``body`` is already decoded into the DeleteOptions type."""
    if body is not None:
        options = DeleteOptions(body.get("gracePeriodSeconds"), body.get("propagationPolicy"),
                                body.get("orphanDependents"), body.get("preconditions"),
                                bool(body.get("dryRun")))
        dry_run = body.get("dryRun") or []
    else:
        dry_run = query.getall("dryRun", [])
        options = DeleteOptions(_optional_int(query, "gracePeriodSeconds"),
                                first(query, "propagationPolicy"),
                                _optional_bool(query, "orphanDependents"), None, bool(dry_run))
    causes: list[Cause] = []
    policy = options.propagation_policy
    if options.orphan_dependents is not None and policy is not None:
        causes.append(Cause("propagationPolicy", f"Invalid value: {quote(policy)}: "
                            "orphanDependents and deletionPropagation cannot be both set"))
    if policy is not None and policy not in POLICIES:
        causes.append(not_supported("propagationPolicy", policy, [*POLICIES, "nil"]))
    causes += dry_run_problems(dry_run)
    if causes:
        raise Invalid("DeleteOptions", "", causes, _META_GROUP)
    return options
