"""CustomResourceDefinition (``apiextensions.k8s.io/v1``), as apiextensions-apiserver checks it.

The rules of ``pkg/apis/apiextensions/validation/validation.go`` for the v1 API, with its
messages and field paths:

* ``metadata.name`` must be ``<spec.names.plural>.<spec.group>`` (``must be
  spec.names.plural+"."+spec.group``); CRDs are cluster-scoped;
* ``spec.group``: required, a DNS subdomain with at least one dot; groups under ``k8s.io``
  or ``kubernetes.io`` need the ``api-approved.kubernetes.io`` annotation (a URL, or a reason
  starting with ``unapproved``);
* ``spec.scope``: ``Cluster`` or ``Namespaced``;
* ``spec.names``: ``plural``, ``singular``, ``kind``, ``listKind`` required (``singular``
  defaults to the lowercased kind, ``listKind`` to ``<kind>List``), DNS-1035 labels (kinds
  may have mixed case), short names and categories too, ``kind`` != ``listKind``;
* ``spec.versions``: unique DNS-1035 names, exactly one ``storage: true``; every version
  needs ``schema.openAPIV3Schema`` (v1), which must be structural
  (:func:`kvert.api.schema.validate_structural`), must not be ``nullable`` at the root, and
  with the status subresource may only use a few keywords at the root; ``subresources.scale``
  paths are simple JSON paths under ``.spec``/``.status``; ``additionalPrinterColumns`` need a
  name, a type (boolean, date, integer, number, string), an optional known format and a
  ``jsonPath`` starting with ``.``; ``deprecationWarning`` only on deprecated versions, at
  most 256 printable characters;
* ``spec.preserveUnknownFields`` may not be true; ``spec.conversion.strategy`` is ``None``
  or ``Webhook`` (which needs ``webhook.clientConfig`` and ``conversionReviewVersions``);
* ``status.storedVersions``: the storage version is always recorded (the REST strategy adds
  it on create and update, so validation does too), and a version that was ever stored must
  stay in ``spec.versions``;
* update: ``spec.group`` and ``spec.names.plural`` are immutable; once the CRD is Established
  so are ``spec.scope`` and ``spec.names.kind``. A version whose schema did not change is not
  re-checked (Kubernetes does not tighten validation of persisted schemas).

Differences: CEL rules are checked for shape only; webhook client configs are checked for
presence and an https URL only; field paths are the v1 ones (``spec.conversion.webhook...``).
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from kvert.api import schema as _schema

# the module, not the name: kvert.api.schema imports this package, so importing it first
# finds it half-initialized here
from kvert.api.conditions import is_true
from kvert.api.meta import deep_copy
from kvert.api.types import Obj

from . import names
from .common import (
    Causes,
    child,
    dict_field,
    dicts,
    duplicate,
    forbidden,
    get_bool,
    get_dict,
    get_int,
    get_list,
    get_str,
    immutable,
    index,
    invalid,
    key,
    not_supported,
    required,
    too_many,
    type_error,
)
from .meta import validate_object_meta, validate_object_meta_update

SCOPES = ("Cluster", "Namespaced")
PRINTER_COLUMN_TYPES = ("boolean", "date", "integer", "number", "string")
PRINTER_COLUMN_FORMATS = ("byte", "date", "date-time", "double", "float", "int32", "int64",
                          "password")
CONVERSION_STRATEGIES = ("None", "Webhook")
CONVERSION_REVIEW_VERSIONS = ("v1", "v1beta1")
API_APPROVAL_ANNOTATION = "api-approved.kubernetes.io"
_APPROVAL_DOC = "see https://github.com/kubernetes/enhancements/pull/1111"
_ROOT_ALLOWED_WITH_STATUS = {
    "description": "Description", "type": "Type", "format": "Format", "title": "Title",
    "maximum": "Maximum", "exclusiveMaximum": "ExclusiveMaximum", "minimum": "Minimum",
    "exclusiveMinimum": "ExclusiveMinimum", "maxLength": "MaxLength", "minLength": "MinLength",
    "pattern": "Pattern", "maxItems": "MaxItems", "minItems": "MinItems",
    "uniqueItems": "UniqueItems", "multipleOf": "MultipleOf", "required": "Required",
    "items": "Items", "properties": "Properties", "externalDocs": "ExternalDocs",
    "example": "Example", "x-kubernetes-preserve-unknown-fields": "XPreserveUnknownFields",
    "x-kubernetes-validations": "XValidations",
}
_ROOT_ALLOWED_TEXT = "[" + " ".join(_ROOT_ALLOWED_WITH_STATUS.values()) + "]"


# ---- defaults and helpers ---------------------------------------------------------------------

def default_crd(crd: Obj) -> None:
    """The v1 defaults (``SetDefaults_CustomResourceDefinitionSpec``), in place:
    ``names.singular`` = lowercased kind, ``names.listKind`` = ``<kind>List``,
    ``conversion.strategy`` = ``None``, webhook service port 443."""
    if not isinstance(crd, dict) or not isinstance(crd.get("spec"), dict):
        return
    spec = crd["spec"]
    names_ = spec.get("names")
    if isinstance(names_, dict):
        kind = names_.get("kind")
        if isinstance(kind, str) and kind:
            if not names_.get("singular"):
                names_["singular"] = kind.lower()
            if not names_.get("listKind"):
                names_["listKind"] = kind + "List"
    if spec.get("conversion") is None:
        spec["conversion"] = {"strategy": "None"}
    conversion = spec.get("conversion")
    if isinstance(conversion, dict):
        webhook = conversion.get("webhook")
        config = webhook.get("clientConfig") if isinstance(webhook, dict) else None
        service = config.get("service") if isinstance(config, dict) else None
        if isinstance(service, dict) and service.get("port") is None:
            service["port"] = 443


def defaulted_crd(crd: Any) -> Obj:
    out = deep_copy(crd) if isinstance(crd, dict) else {}
    default_crd(out)
    return out


def storage_version(crd: Any) -> str | None:
    """The name of the version marked ``storage: true`` (the first, if several are)."""
    spec = crd.get("spec") if isinstance(crd, dict) else None
    for v in _versions(spec if isinstance(spec, dict) else {}):
        name = v.get("name") if isinstance(v, dict) else None
        if isinstance(v, dict) and v.get("storage") is True and isinstance(name, str):
            return name
    return None


def condition_true(crd: Any, condition_type: str) -> bool:
    status = crd.get("status") if isinstance(crd, dict) else None
    return is_true(status if isinstance(status, dict) else None, condition_type)


def is_protected_group(group: str) -> bool:
    """Groups reserved for the Kubernetes community (need API approval)."""
    return group in ("k8s.io", "kubernetes.io") or group.endswith(".k8s.io") \
        or group.endswith(".kubernetes.io")


def _approval_state(annotations: Any) -> tuple[str, str]:
    value = annotations.get(API_APPROVAL_ANNOTATION, "") if isinstance(annotations, dict) else ""
    value = value if isinstance(value, str) else ""
    if not value:
        return "missing", (f'protected groups must have approval annotation '
                           f'"{API_APPROVAL_ANNOTATION}", {_APPROVAL_DOC}')
    if value.startswith("unapproved"):
        return "bypassed", f'not approved: "{value}"'
    if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*://[^/\s?#]+", value):
        return "approved", f"approved in {value}"
    return "invalid", (f'protected groups must have approval annotation "{API_APPROVAL_ANNOTATION}" '
                       f'with either a URL or a reason starting with "unapproved", {_APPROVAL_DOC}')


def _schema_of(version: Any) -> Any:
    schema = version.get("schema") if isinstance(version, dict) else None
    return schema.get("openAPIV3Schema") if isinstance(schema, dict) else None


def _versions(spec: Obj) -> list[Any]:
    versions = spec.get("versions")
    return versions if isinstance(versions, list) else []


# ---- entry points -----------------------------------------------------------------------------

def validate_crd(obj: Obj) -> Causes:
    """Causes that make a CustomResourceDefinition invalid on create."""
    if not isinstance(obj, dict):
        return [type_error("", obj, "object")]
    crd = defaulted_crd(obj)
    errs: Causes = []
    spec = get_dict(crd, "spec", "", errs)
    group = spec.get("group") if isinstance(spec.get("group"), str) else ""
    names_ = dict_field(spec, "names")
    plural = names_.get("plural") if isinstance(names_.get("plural"), str) else ""
    wanted = f"{plural}.{group}"

    def name_fn(name: str, prefix: bool) -> list[str]:
        problems = names.name_is_dns_subdomain(name, prefix)
        if name != wanted:
            problems.append('must be spec.names.plural+"."+spec.group')
        return problems

    errs.extend(_generic_meta(validate_object_meta(crd, namespaced=False, name_fn=name_fn)))
    errs.extend(_validate_spec(spec, "spec"))
    # The REST strategy resets status on create and records the storage version.
    storage = storage_version(crd)
    stored = [storage] if storage else []
    errs.extend(_validate_stored_versions(stored, _versions(spec), "status.storedVersions"))
    errs.extend(_validate_api_approval(crd, None))
    errs.extend(_validate_preserve_unknown_fields(spec, None))
    return errs


def validate_crd_update(new: Obj, old: Obj) -> Causes:
    """Causes that make replacing ``old`` by ``new`` invalid (main resource)."""
    if not isinstance(new, dict):
        return [type_error("", new, "object")]
    old = old if isinstance(old, dict) else {}
    crd, prev = defaulted_crd(new), defaulted_crd(old)
    errs = _generic_meta(validate_object_meta_update(crd, prev))
    spec = get_dict(crd, "spec", "", errs)
    old_spec = dict_field(prev, "spec")
    old_schemas = {v.get("name"): _schema_of(v) for v in _versions(old_spec) if isinstance(v, dict)}
    unchanged = {v.get("name") for v in _versions(spec) if isinstance(v, dict)
                 and v.get("name") in old_schemas and _schema_of(v) == old_schemas[v.get("name")]}
    require_schema = all(_schema_of(v) is not None for v in _versions(old_spec))
    errs.extend(_validate_spec(spec, "spec", unchanged=unchanged, require_schema=require_schema))

    if condition_true(prev, "Established"):
        errs.extend(_immutable(spec.get("scope"), old_spec.get("scope"), "spec.scope"))
        errs.extend(_immutable(_name(spec, "kind"), _name(old_spec, "kind"), "spec.names.kind"))
    errs.extend(_immutable(spec.get("group"), old_spec.get("group"), "spec.group"))
    errs.extend(_immutable(_name(spec, "plural"), _name(old_spec, "plural"), "spec.names.plural"))

    status = dict_field(crd, "status")
    errs.extend(_validate_status(status, "status"))
    # The REST strategy keeps the stored status and records the (new) storage version.
    old_status = dict_field(prev, "status")
    stored = [v for v in old_status.get("storedVersions") or [] if isinstance(v, str)]
    current = storage_version(crd)
    if current and current not in stored:
        stored.append(current)
    errs.extend(_validate_stored_versions(stored, _versions(spec), "status.storedVersions"))
    errs.extend(_validate_api_approval(crd, prev))
    errs.extend(_validate_preserve_unknown_fields(spec, old_spec))
    return errs


def validate_crd_status_update(new: Obj, old: Obj) -> Causes:
    """Causes that make a ``customresourcedefinitions/status`` write invalid."""
    if not isinstance(new, dict):
        return [type_error("", new, "object")]
    errs = _generic_meta(validate_object_meta_update(new, old if isinstance(old, dict) else {}))
    errs.extend(_validate_status(get_dict(new, "status", "", errs), "status"))
    return errs


_KUBE_FINALIZER_RULE = "name is neither a standard finalizer name nor is it fully qualified"


def _generic_meta(causes: Causes) -> Causes:
    """apimachinery's generic ObjectMeta rules, which CRDs (and custom resources) follow: a
    finalizer only has to be a qualified name (``customresourcecleanup.apiextensions.k8s.io``
    is valid); the "fully qualified" rule of the core API does not apply."""
    return [c for c in causes if not (c.field.startswith("metadata.finalizers")
                                      and _KUBE_FINALIZER_RULE in c.message)]


def _name(spec: Obj, field: str) -> Any:
    names_ = spec.get("names")
    return names_.get(field) if isinstance(names_, dict) else None


def _immutable(new: Any, old: Any, path: str) -> Causes:
    return [immutable(path, new)] if new != old else []


# ---- spec ---------------------------------------------------------------------------------

def _validate_spec(spec: Obj, path: str, *, unchanged: set[Any] | None = None,
                   require_schema: bool = True) -> Causes:
    errs: Causes = []
    unchanged = unchanged or set()
    group = get_str(spec, "group", path, errs)
    group_path = child(path, "group")
    if not group:
        errs.append(required(group_path))
    elif names.is_dns1123_subdomain(group):
        errs.append(invalid(group_path, group, ",".join(names.is_dns1123_subdomain(group))))
    elif len(group.split(".")) < 2:
        errs.append(invalid(group_path, group, "should be a domain with at least one dot"))

    scope = get_str(spec, "scope", path, errs)
    if not scope:
        errs.append(required(child(path, "scope")))
    elif scope not in SCOPES:
        errs.append(not_supported(child(path, "scope"), scope, SCOPES))

    versions_path = child(path, "versions")
    versions = get_list(spec, "versions", path, errs)
    storage_count = 0
    seen: set[str] = set()
    unique = True
    for _, v_path, version in dicts(versions, versions_path, errs):
        name = get_str(version, "name", v_path, errs)
        if name in seen:
            unique = False
        seen.add(name)
        errs.extend(invalid(child(v_path, "name"), name, m) for m in _dns1035(name))
        get_bool(version, "served", v_path, errs)
        if get_bool(version, "storage", v_path, errs):
            storage_count += 1
        errs.extend(_validate_version(version, v_path, check_schema=name not in unchanged,
                                      require_schema=require_schema))
    if not unique:
        errs.append(invalid(versions_path, versions, "must contain unique version names"))
    if storage_count != 1:
        errs.append(invalid(versions_path, versions,
                            "must have exactly one version marked as storage version"))

    names_path = child(path, "names")
    names_ = get_dict(spec, "names", path, errs)
    for field in ("plural", "singular", "kind", "listKind"):
        if not get_str(names_, field, names_path, errs):
            errs.append(required(child(names_path, field)))
    errs.extend(validate_crd_names(names_, names_path))
    errs.extend(_validate_conversion(spec.get("conversion"), child(path, "conversion")))
    return errs


def _dns1035(value: str) -> list[str]:
    return names.is_dns1035_label(value)


def validate_crd_names(names_: Obj, path: str) -> Causes:
    """``ValidateCustomResourceDefinitionNames`` (spec.names and status.acceptedNames)."""
    errs: Causes = []
    for field in ("plural", "singular"):
        value = get_str(names_, field, path, errs)
        if value and _dns1035(value):
            errs.append(invalid(child(path, field), value, ",".join(_dns1035(value))))
    for field in ("kind", "listKind"):
        value = get_str(names_, field, path, errs)
        if value and _dns1035(value.lower()):
            errs.append(invalid(child(path, field), value, "may have mixed case, but should otherwise "
                                "match: " + ",".join(_dns1035(value.lower()))))
    for field in ("shortNames", "categories"):
        for i, value in enumerate(get_list(names_, field, path, errs)):
            p = index(child(path, field), i)
            if not isinstance(value, str):
                errs.append(type_error(p, value, "string"))
            elif _dns1035(value):
                errs.append(invalid(p, value, ",".join(_dns1035(value))))
    kind, list_kind = names_.get("kind"), names_.get("listKind")
    if isinstance(kind, str) and kind and kind == list_kind:
        errs.append(invalid(child(path, "listKind"), list_kind, "kind and listKind may not be the same"))
    return errs


# ---- versions -----------------------------------------------------------------------------

def _validate_version(version: Obj, path: str, *, check_schema: bool,
                      require_schema: bool) -> Causes:
    errs: Causes = []
    deprecated = version.get("deprecated") is True
    if "deprecationWarning" in version and version["deprecationWarning"] is not None:
        warning = get_str(version, "deprecationWarning", path, errs)
        for problem in _deprecation_warning_problems(deprecated, warning):
            errs.append(invalid(child(path, "deprecationWarning"), warning, problem))

    subresources = version.get("subresources")
    status_enabled = isinstance(subresources, dict) and isinstance(subresources.get("status"), dict)
    errs.extend(_validate_subresources(subresources, child(path, "subresources")))

    schema_path = child(child(path, "schema"), "openAPIV3Schema")
    schema = _schema_of(version)
    if schema is None:
        if require_schema:
            errs.append(required(schema_path))
    elif check_schema:
        errs.extend(_validate_version_schema(schema, schema_path, status_enabled))

    columns_path = child(path, "additionalPrinterColumns")
    for _, col_path, col in dicts(get_list(version, "additionalPrinterColumns", path, errs),
                                  columns_path, errs):
        errs.extend(_validate_printer_column(col, col_path))

    fields_path = child(path, "selectableFields")
    selectable = get_list(version, "selectableFields", path, errs)
    if selectable and schema is None:
        errs.append(invalid(fields_path, "", "may only be set when `version.schema.openAPIV3Schema` "
                                             "is not included"))
    seen: set[str] = set()
    for _, p, field in dicts(selectable, fields_path, errs):
        json_path = get_str(field, "jsonPath", p, errs)
        if not json_path:
            errs.append(required(child(p, "jsonPath")))
        elif json_path in seen:
            errs.append(duplicate(child(p, "jsonPath"), json_path))
        elif json_path.startswith(".metadata"):
            errs.append(invalid(child(p, "jsonPath"), json_path, "must not point to fields in metadata"))
        seen.add(json_path)
    if len(seen) > 8:
        errs.append(too_many(fields_path, len(seen), 8))
    return errs


def _deprecation_warning_problems(deprecated: bool, warning: str) -> list[str]:
    if not deprecated:
        return ["can only be set for deprecated versions"]
    problems = []
    if len(warning) > 256:
        problems.append("must be <= 256 characters long")
    if not warning:
        problems.append("must not be an empty string")
    for i, ch in enumerate(warning):
        category = unicodedata.category(ch)
        if category.startswith("C"):
            kind = "control" if category == "Cc" else "non-printable"
            problems.append(f"must only contain printable UTF-8 characters; {kind} character "
                            f"found at index {len(warning[:i].encode())}")
            break
    return problems


def _validate_version_schema(schema: Any, path: str, status_enabled: bool) -> Causes:
    errs: Causes = []
    if not isinstance(schema, dict):
        return [type_error(path, schema, "object")]
    if status_enabled:
        t = schema.get("type")
        if t not in (None, "") and t != "object":
            errs.append(invalid(child(path, "type"), t, 'only "object" is allowed as the type at the '
                                                        'root of the schema if the status '
                                                        'subresource is enabled'))
        elif any(k not in _ROOT_ALLOWED_WITH_STATUS and schema[k] not in (None, False, "", [], {})
                 for k in schema):
            errs.append(invalid(path, schema, f"only {_ROOT_ALLOWED_TEXT} fields are allowed at the "
                                              f"root of the schema if the status subresource is "
                                              f"enabled"))
    if schema.get("nullable") is True:
        errs.append(forbidden(child(path, "nullable"), "nullable cannot be true at the root"))
    errs.extend(_schema.validate_structural(schema, path))
    return errs


def _validate_subresources(subresources: Any, path: str) -> Causes:
    if subresources is None:
        return []
    if not isinstance(subresources, dict):
        return [type_error(path, subresources, "object")]
    errs: Causes = []
    status = subresources.get("status")
    if status is not None and not isinstance(status, dict):
        errs.append(type_error(child(path, "status"), status, "object"))
    scale = subresources.get("scale")
    if scale is None:
        return errs
    if not isinstance(scale, dict):
        return errs + [type_error(child(path, "scale"), scale, "object")]
    for field, prefixes, where in (("specReplicasPath", (".spec.",), ".spec"),
                                   ("statusReplicasPath", (".status.",), ".status")):
        p = f"{path}.scale.{field}"
        value = get_str(scale, field, f"{path}.scale", errs)
        if not value:
            errs.append(required(p))
            continue
        problems = _simple_json_path(value, p)
        if problems:
            errs.extend(problems)
        elif not value.startswith(prefixes):
            errs.append(invalid(p, value, f"should be a json path under {where}"))
    selector = get_str(scale, "labelSelectorPath", f"{path}.scale", errs)
    if selector:
        p = f"{path}.scale.labelSelectorPath"
        problems = _simple_json_path(selector, p)
        if problems:
            errs.extend(problems)
        elif not selector.startswith((".spec.", ".status.")):
            errs.append(invalid(p, selector, "should be a json path under either .spec or .status"))
    return errs


def _simple_json_path(value: str, path: str) -> Causes:
    if not value:
        return [invalid(path, value, "must not be empty")]
    if not value.startswith("."):
        return [invalid(path, value, "must be a simple json path starting with .")]
    return []


def _validate_printer_column(col: Obj, path: str) -> Causes:
    errs: Causes = []
    if not get_str(col, "name", path, errs):
        errs.append(required(child(path, "name")))
    types_text = "must be one of " + ",".join(PRINTER_COLUMN_TYPES)
    col_type = get_str(col, "type", path, errs)
    if not col_type:
        errs.append(required(child(path, "type"), types_text))
    elif col_type not in PRINTER_COLUMN_TYPES:
        errs.append(invalid(child(path, "type"), col_type, types_text))
    fmt = get_str(col, "format", path, errs)
    if fmt and fmt not in PRINTER_COLUMN_FORMATS:
        errs.append(invalid(child(path, "format"), fmt,
                            "must be one of " + ",".join(PRINTER_COLUMN_FORMATS)))
    json_path = get_str(col, "jsonPath", path, errs)
    if not json_path:
        errs.append(required(child(path, "jsonPath")))
    else:
        errs.extend(_simple_json_path(json_path, child(path, "jsonPath")))
    get_int(col, "priority", path, errs, bits=32)
    return errs


# ---- conversion, status, approval ---------------------------------------------------------

def _validate_conversion(conversion: Any, path: str) -> Causes:
    if conversion is None:
        return []
    if not isinstance(conversion, dict):
        return [type_error(path, conversion, "object")]
    errs: Causes = []
    strategy = get_str(conversion, "strategy", path, errs)
    if not strategy:
        errs.append(required(child(path, "strategy")))
    elif strategy not in CONVERSION_STRATEGIES:
        errs.append(not_supported(child(path, "strategy"), strategy, CONVERSION_STRATEGIES))
    webhook_path = child(path, "webhook")
    webhook = conversion.get("webhook")
    if strategy != "Webhook":
        if webhook is not None:
            errs.append(forbidden(webhook_path, "should not be set when strategy is not set to Webhook"))
        return errs
    if not isinstance(webhook, dict):
        return errs + [required(child(webhook_path, "clientConfig"),
                                "required when strategy is set to Webhook")]
    config_path = child(webhook_path, "clientConfig")
    config = webhook.get("clientConfig")
    if not isinstance(config, dict):
        errs.append(required(config_path, "required when strategy is set to Webhook"))
    elif (config.get("url") is None) == (config.get("service") is None):
        errs.append(required(config_path, "exactly one of url or service is required"))
    elif config.get("url") is not None:
        url = get_str(config, "url", config_path, errs)
        if not url.startswith("https://"):
            errs.append(invalid(child(config_path, "url"), url, "'https' is the only allowed URL scheme"))
    else:
        service = get_dict(config, "service", config_path, errs)
        for field in ("namespace", "name"):
            if not get_str(service, field, child(config_path, "service"), errs):
                errs.append(required(child(child(config_path, "service"), field)))
    versions_path = child(webhook_path, "conversionReviewVersions")
    review = get_list(webhook, "conversionReviewVersions", webhook_path, errs)
    if not review:
        errs.append(required(versions_path))
    else:
        seen: set[Any] = set()
        for i, v in enumerate(review):
            if v in seen:
                errs.append(invalid(index(versions_path, i), v, "duplicate version"))
                continue
            seen.add(v)
            if isinstance(v, str):
                errs.extend(invalid(index(versions_path, i), v, m) for m in _dns1035(v))
        if not seen & set(CONVERSION_REVIEW_VERSIONS):
            errs.append(invalid(versions_path, review, "must include at least one of "
                                + ", ".join(CONVERSION_REVIEW_VERSIONS)))
    return errs


def _validate_status(status: Obj, path: str) -> Causes:
    errs: Causes = []
    accepted = get_dict(status, "acceptedNames", path, errs)
    errs.extend(validate_crd_names(accepted, child(path, "acceptedNames")))
    return errs


def _validate_stored_versions(stored: list[str], versions: list[Any], path: str) -> Causes:
    if not stored:
        return [invalid(path, stored, "must have at least one stored version")]
    errs: Causes = []
    pending = {v: i for i, v in enumerate(stored)}
    for version in versions:
        if not isinstance(version, dict):
            continue
        name = version.get("name")
        if version.get("storage") is True and name not in pending and name not in stored:
            errs.append(invalid(path, stored, f"must have the storage version {name}"))
        if isinstance(name, str):  # only names were stored
            pending.pop(name, None)
    for v, i in sorted(pending.items(), key=lambda item: item[1]):
        errs.append(invalid(index(path, i), v, f"missing from spec.versions; {v} was previously a "
                                               f"storage version, and must remain in spec.versions "
                                               f"until a storage migration ensures no data remains "
                                               f"persisted in {v} and removes {v} from "
                                               f"status.storedVersions"))
    return errs


def _validate_api_approval(crd: Obj, old: Obj | None) -> Causes:
    spec = dict_field(crd, "spec")
    group = spec.get("group")
    if not isinstance(group, str):
        group = ""
    if not is_protected_group(group):
        return []
    annotations = (crd.get("metadata") or {}).get("annotations")
    state, reason = _approval_state(annotations)
    if old is not None:
        old_state, _ = _approval_state((old.get("metadata") or {}).get("annotations"))
        if old_state == state:
            return []
    path = key("metadata.annotations", API_APPROVAL_ANNOTATION)
    value = annotations.get(API_APPROVAL_ANNOTATION, "") if isinstance(annotations, dict) else ""
    if state == "missing":
        return [required(path, reason)]
    if state == "invalid":
        return [invalid(path, value, reason)]
    return []


def _validate_preserve_unknown_fields(spec: Obj, old_spec: Obj | None) -> Causes:
    if old_spec is not None and old_spec.get("preserveUnknownFields") is True:
        return []
    if spec.get("preserveUnknownFields") is True:
        return [invalid("spec.preserveUnknownFields", True, "cannot set to true, set "
                        "x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema "
                        "instead")]
    return []


__all__ = ["validate_crd", "validate_crd_update", "validate_crd_status_update", "default_crd",
           "defaulted_crd", "storage_version", "condition_true", "is_protected_group",
           "validate_crd_names"]
