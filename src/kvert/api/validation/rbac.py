"""Role, ClusterRole, RoleBinding, ClusterRoleBinding (``pkg/apis/rbac/validation``).

Names need only be usable as one URL path segment (no ``/`` or ``%``, not ``.`` or
``..``), RBAC's minimal name rule. A rule needs verbs; a resource rule needs API groups
and resources; a non-resource rule names no groups, resources or names, and only a
ClusterRole may have one. A binding's ``roleRef`` names a Role (RoleBindings only) or
ClusterRole of ``rbac.authorization.k8s.io`` and never changes; its subjects are Users,
Groups (``apiGroup: rbac.authorization.k8s.io``) or ServiceAccounts (no ``apiGroup``; a
namespace in a ClusterRoleBinding).
"""

from __future__ import annotations

from kvert.api.names import name_is_dns_subdomain, path_segment_problems
from kvert.api.types import Obj

from .common import Causes, child, dicts, get_dict, get_list, get_str, index, invalid, not_supported, required
from .meta import selector_from, validate_label_selector, validate_object_meta, validate_object_meta_update

GROUP = "rbac.authorization.k8s.io"
SUBJECT_KINDS = ("ServiceAccount", "User", "Group")


def _rbac_name(name: str, prefix: bool) -> list[str]:
    return path_segment_problems(name)


def _validate_rule(rule: Obj, namespaced: bool, path: str) -> Causes:
    errs: Causes = []
    verbs = get_list(rule, "verbs", path, errs)
    if not verbs:
        errs.append(required(child(path, "verbs"), "verbs must contain at least one value"))
    urls = get_list(rule, "nonResourceURLs", path, errs)
    groups = get_list(rule, "apiGroups", path, errs)
    resources = get_list(rule, "resources", path, errs)
    names = get_list(rule, "resourceNames", path, errs)
    if urls:
        if namespaced:
            errs.append(invalid(child(path, "nonResourceURLs"), urls,
                                "namespaced rules cannot apply to non-resource URLs"))
        if groups or resources or names:
            errs.append(invalid(child(path, "nonResourceURLs"), urls,
                                "rules cannot apply to both regular resources and non-resource URLs"))
        return errs
    if not groups:
        errs.append(required(child(path, "apiGroups"), "resource rules must supply at least one api group"))
    if not resources:
        errs.append(required(child(path, "resources"), "resource rules must supply at least one resource"))
    return errs


def _validate_rules(obj: Obj, namespaced: bool) -> Causes:
    errs: Causes = []
    for _, p, rule in dicts(get_list(obj, "rules", "", errs), "rules", errs):
        errs.extend(_validate_rule(rule, namespaced, p))
    return errs


def validate_role(role: Obj) -> Causes:
    errs = validate_object_meta(role, namespaced=True, name_fn=_rbac_name)
    return errs + _validate_rules(role, True)


def validate_role_update(new: Obj, old: Obj) -> Causes:
    return validate_role(new) + validate_object_meta_update(new, old)


def validate_cluster_role(role: Obj) -> Causes:
    errs = validate_object_meta(role, namespaced=False, name_fn=_rbac_name)
    errs += _validate_rules(role, False)
    if role.get("aggregationRule") is not None:
        rule = get_dict(role, "aggregationRule", "", errs)
        path = "aggregationRule.clusterRoleSelectors"
        selectors = get_list(rule, "clusterRoleSelectors", "aggregationRule", errs)
        if not selectors:
            errs.append(required(path, "at least one clusterRoleSelector required if "
                                       "aggregationRule is non-nil"))
        for i, selector in enumerate(selectors):
            problems = validate_label_selector(selector, index(path, i))
            errs += problems
            if not problems and selector_from(selector) is None:
                errs.append(invalid(index(path, i), selector, "invalid label selector."))
    return errs


def validate_cluster_role_update(new: Obj, old: Obj) -> Causes:
    return validate_cluster_role(new) + validate_object_meta_update(new, old)


def _validate_binding(binding: Obj, namespaced: bool) -> Causes:
    errs = validate_object_meta(binding, namespaced=namespaced, name_fn=_rbac_name)
    ref = get_dict(binding, "roleRef", "", errs)
    api_group = get_str(ref, "apiGroup", "roleRef", errs)
    if api_group != GROUP:
        errs.append(not_supported("roleRef.apiGroup", api_group, [GROUP]))
    kinds = ["Role", "ClusterRole"] if namespaced else ["ClusterRole"]
    kind = get_str(ref, "kind", "roleRef", errs)
    if kind not in kinds:
        errs.append(not_supported("roleRef.kind", kind, kinds))
    name = get_str(ref, "name", "roleRef", errs)
    if not name:
        errs.append(required("roleRef.name"))
    else:
        errs.extend(invalid("roleRef.name", name, m) for m in path_segment_problems(name))
    for _, p, subject in dicts(get_list(binding, "subjects", "", errs), "subjects", errs):
        errs.extend(_validate_subject(subject, namespaced, p))
    return errs


def _validate_subject(subject: Obj, namespaced: bool, path: str) -> Causes:
    errs: Causes = []
    name = get_str(subject, "name", path, errs)
    api_group = get_str(subject, "apiGroup", path, errs)
    kind = get_str(subject, "kind", path, errs)
    if not name:
        errs.append(required(child(path, "name")))
    if kind == "ServiceAccount":
        if name:
            errs.extend(invalid(child(path, "name"), name, m) for m in name_is_dns_subdomain(name))
        if api_group:
            errs.append(not_supported(child(path, "apiGroup"), api_group, [""]))
        if not namespaced and not get_str(subject, "namespace", path, errs):
            errs.append(required(child(path, "namespace")))
    elif kind in ("User", "Group"):
        if api_group != GROUP:
            errs.append(not_supported(child(path, "apiGroup"), api_group, [GROUP]))
    else:
        errs.append(not_supported(child(path, "kind"), kind, list(SUBJECT_KINDS)))
    return errs


def _role_ref_unchanged(new: Obj, old: Obj) -> Causes:
    ref, old_ref = new.get("roleRef"), old.get("roleRef")
    if ref != old_ref:
        return [invalid("roleRef", ref, "cannot change roleRef")]
    return []


def validate_role_binding(binding: Obj) -> Causes:
    return _validate_binding(binding, True)


def validate_role_binding_update(new: Obj, old: Obj) -> Causes:
    return (_validate_binding(new, True) + validate_object_meta_update(new, old)
            + _role_ref_unchanged(new, old))


def validate_cluster_role_binding(binding: Obj) -> Causes:
    return _validate_binding(binding, False)


def validate_cluster_role_binding_update(new: Obj, old: Obj) -> Causes:
    return (_validate_binding(new, False) + validate_object_meta_update(new, old)
            + _role_ref_unchanged(new, old))
