"""``metadata`` on create and update, and ``metav1.LabelSelector`` (apimachinery's
``ValidateObjectMeta``, ``ValidateObjectMetaUpdate``, ``ValidateLabelSelector``).

Two things Kubernetes does before validation happen here too, because kvert's registry
may hand over an object without them: an update that omits ``metadata.uid`` keeps the
stored one, and ``creationTimestamp`` is not compared (the registry owns it). A missing
``metadata.resourceVersion`` on update is the registry's concern (optimistic concurrency),
not reported here. Setting ``deletionTimestamp`` is left to the registry's delete path;
changing or removing one that is set is rejected.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kvert.api.selectors import LabelSelector, SelectorError
from kvert.api.types import Obj

from . import names
from .common import (
    Causes,
    child,
    dicts,
    forbidden,
    get_int,
    get_list,
    get_str,
    get_str_map,
    immutable,
    index,
    invalid,
    nonnegative,
    required,
    type_error,
)

NameFn = Callable[[str, bool], list[str]]

_SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")


def validate_object_meta(obj: Any, *, namespaced: bool | None,
                         name_fn: NameFn = names.name_is_dns_subdomain,
                         path: str = "metadata", meta: Any = None, builtin: bool = True,
                         old: Obj | None = None) -> Causes:
    """Create-time metadata checks.

    ``namespaced`` True requires ``namespace``, False forbids it, None (a kind kvert does
    not know) only checks its syntax. ``meta`` overrides ``obj["metadata"]`` (pod templates).
    ``old``: the stored metadata when an update is checked as a whole object (``_common_meta``).
    """
    errs: Causes = []
    if meta is None:
        if not isinstance(obj, dict):
            return [type_error("", obj, "object")]
        meta = obj.get("metadata")
        if meta is None:
            meta = {}
        elif not isinstance(meta, dict):
            return [type_error(path, meta, "object")]
    generate_name = get_str(meta, "generateName", path, errs)
    if generate_name:
        errs.extend(invalid(child(path, "generateName"), generate_name, m)
                    for m in name_fn(generate_name, True))
    name = get_str(meta, "name", path, errs)
    if not name:
        errs.append(required(child(path, "name"), "name or generateName is required"))
    else:
        errs.extend(invalid(child(path, "name"), name, m) for m in name_fn(name, False))

    namespace = get_str(meta, "namespace", path, errs)
    ns_path = child(path, "namespace")
    if namespaced is True:
        if not namespace:
            errs.append(required(ns_path))
        else:
            errs.extend(invalid(ns_path, namespace, m) for m in names.name_is_dns_label(namespace))
    elif namespaced is False:
        if namespace:
            errs.append(forbidden(ns_path, "not allowed on this type"))
    elif namespace:
        errs.extend(invalid(ns_path, namespace, m) for m in names.name_is_dns_label(namespace))

    errs.extend(_common_meta(meta, path, builtin, old))
    return errs


def _common_meta(meta: Obj, path: str, builtin: bool = True, old: Obj | None = None) -> Causes:
    """``builtin`` applies the core API's rules on top of apimachinery's generic ones (which
    custom resources follow): a finalizer without a "/" must be a standard one. ``old``: the
    stored metadata of an update, whose labels, annotations, owner references and finalizers
    passed these rules when written: those the update leaves as they were are not checked
    again (most updates change none of them)."""
    errs: Causes = []
    errs.extend(nonnegative(get_int(meta, "generation", path, errs), child(path, "generation")))

    def changed(field: str) -> bool:
        # absent or null is valid (and most objects carry few of these fields)
        return meta.get(field) is not None and (old is None or meta[field] != old.get(field))

    if changed("labels"):
        errs.extend(names.validate_labels(get_str_map(meta, "labels", path, errs),
                                          child(path, "labels")))
    if changed("annotations"):
        errs.extend(names.validate_annotations(get_str_map(meta, "annotations", path, errs),
                                               child(path, "annotations")))
    if changed("ownerReferences"):
        errs.extend(_owner_references(get_list(meta, "ownerReferences", path, errs),
                                      child(path, "ownerReferences")))
    if not changed("finalizers"):
        return errs
    fin_path = child(path, "finalizers")
    finalizers = get_list(meta, "finalizers", path, errs)
    for i, f in enumerate(finalizers):
        if not isinstance(f, str):
            errs.append(type_error(index(fin_path, i), f, "string"))
            continue
        errs.extend(names.validate_finalizer_name(f, fin_path) if builtin
                    else names.validate_qualified_name(f, fin_path))
    if "orphan" in finalizers and "foregroundDeletion" in finalizers:
        errs.append(invalid(fin_path, finalizers,
                            "finalizer orphan and foregroundDeletion cannot be both set"))
    return errs


def _owner_references(refs: list[Any], path: str) -> Causes:
    errs: Causes = []
    controller = ""
    for _, _p, ref in dicts(refs, path, errs):
        api_version = get_str(ref, "apiVersion", path, errs)
        kind = get_str(ref, "kind", path, errs)
        version = api_version.rpartition("/")[2]
        if not version:
            errs.append(invalid(child(path, "apiVersion"), api_version, "version must not be empty"))
        if not kind:
            errs.append(invalid(child(path, "kind"), kind, "must not be empty"))
        if not get_str(ref, "name", path, errs):
            errs.append(invalid(child(path, "name"), "", "must not be empty"))
        if not get_str(ref, "uid", path, errs):
            errs.append(invalid(child(path, "uid"), "", "must not be empty"))
        if api_version == "v1" and kind == "Event":
            errs.append(invalid(path, ref, "/v1, Kind=Event is disallowed from being an owner"))
        if ref.get("controller") is True:
            this = f"{kind}/{ref.get('name', '')}"
            if controller:
                errs.append(invalid(path, refs, "Only one reference can have Controller set to "
                                                f'true. Found "true" in references for {controller} '
                                                f"and {this}"))
            else:
                controller = this
    return errs


def validate_object_meta_update(new: Any, old: Any, path: str = "metadata",
                                builtin: bool = True) -> Causes:
    """Update-time metadata checks (``ValidateObjectMetaUpdate``)."""
    errs: Causes = []
    new_meta = new.get("metadata") if isinstance(new, dict) else None
    old_meta = old.get("metadata") if isinstance(old, dict) else None
    if new_meta is None:
        new_meta = {}
    if not isinstance(new_meta, dict):
        return [type_error(path, new_meta, "object")]
    if not isinstance(old_meta, dict):
        old_meta = {}

    if old_meta.get("deletionTimestamp"):
        new_f = set(x for x in new_meta.get("finalizers") or [] if isinstance(x, str))
        old_f = set(x for x in old_meta.get("finalizers") or [] if isinstance(x, str))
        extra = sorted(new_f - old_f)
        if extra:
            shown = "[]string{" + ", ".join(f'"{f}"' for f in extra) + "}"
            errs.append(forbidden(child(path, "finalizers"), "no new finalizers can be added if the "
                                                           f"object is being deleted, found new "
                                                           f"finalizers {shown}"))
        if new_meta.get("deletionTimestamp") != old_meta.get("deletionTimestamp"):
            errs.append(invalid(child(path, "deletionTimestamp"), new_meta.get("deletionTimestamp"),
                                "field is immutable; may only be changed via deletion"))

    new_gen, old_gen = new_meta.get("generation"), old_meta.get("generation")
    if isinstance(new_gen, int) and isinstance(old_gen, int) and new_gen < old_gen:
        errs.append(invalid(child(path, "generation"), new_gen, "must not be decremented"))

    for field in ("name", "namespace"):
        nv, ov = new_meta.get(field) or "", old_meta.get(field) or ""
        if nv != ov:
            errs.append(immutable(child(path, field), nv))
    if new_meta.get("uid") and old_meta.get("uid") and new_meta["uid"] != old_meta["uid"]:
        errs.append(immutable(child(path, "uid"), new_meta["uid"]))

    errs.extend(_common_meta(new_meta, path, builtin, old_meta))
    return errs


# -- label selectors --------------------------------------------------------------------------

def validate_label_selector(sel: Any, path: str) -> Causes:
    """``ValidateLabelSelector`` (strict: values must be valid label values)."""
    if sel is None:
        return []
    if not isinstance(sel, dict):
        return [type_error(path, sel, "object")]
    errs: Causes = []
    errs.extend(names.validate_labels(get_str_map(sel, "matchLabels", path, errs),
                                      child(path, "matchLabels")))
    exprs_path = child(path, "matchExpressions")
    for _, p, expr in dicts(get_list(sel, "matchExpressions", path, errs), exprs_path, errs):
        errs.extend(validate_selector_requirement(expr, p))
    return errs


def validate_selector_requirement(expr: Obj, path: str, *,
                                  operators: tuple[str, ...] = _SELECTOR_OPERATORS) -> Causes:
    errs: Causes = []
    operator = expr.get("operator")
    values = get_list(expr, "values", path, errs)
    if operator in ("In", "NotIn"):
        if not values:
            errs.append(required(child(path, "values"),
                                 "must be specified when `operator` is 'In' or 'NotIn'"))
    elif operator in ("Exists", "DoesNotExist"):
        if values:
            errs.append(forbidden(child(path, "values"),
                                  "may not be specified when `operator` is 'Exists' or "
                                  "'DoesNotExist'"))
    else:
        errs.append(invalid(child(path, "operator"), operator, "not a valid selector operator"))
    errs.extend(names.validate_label_name(get_str(expr, "key", path, errs), child(path, "key")))
    values_path = child(path, "values")
    for i, v in enumerate(values):
        if not isinstance(v, str):
            errs.append(type_error(index(values_path, i), v, "string"))
            continue
        errs.extend(invalid(index(values_path, i), v, m) for m in names.is_label_value(v))
    return errs


def selector_from(sel: Any) -> LabelSelector | None:
    """The selector as a matcher, or None when it cannot be converted."""
    try:
        return LabelSelector.from_dict(sel)
    except SelectorError:
        return None
