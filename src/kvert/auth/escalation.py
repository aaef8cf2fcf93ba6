"""RBAC escalation prevention: one cannot grant what one does not hold.

Writing a Role or ClusterRole needs the writer to hold every rule it contains, or the
``escalate`` verb on it; writing a RoleBinding or ClusterRoleBinding needs the writer to
hold every rule of the role it binds, or the ``bind`` verb on that role; members of
``system:masters`` are exempt (``pkg/registry/rbac/{role,clusterrole,rolebinding,
clusterrolebinding}/policybased`` and ``pkg/registry/rbac/validation``). Holding is
``Covers`` (``component-helpers/auth/rbac/validation``): every single
(group, resource, verb, name) and (URL, verb) of the granted rules is allowed by one rule
the writer has.
"""

from __future__ import annotations

from kvert.api.errors import ApiError, Forbidden
from kvert.api.types import Obj
from kvert.auth.attributes import Attributes, Decision
from kvert.auth.authorizer import Authorizer
from kvert.auth.rbac import GROUP, RbacAuthorizer
from kvert.auth.rules import PolicyRule, go_quote
from kvert.auth.user import MASTERS, User

ROLE_KINDS = {"roles": "Role", "clusterroles": "ClusterRole"}
BINDING_KINDS = {"rolebindings", "clusterrolebindings"}
WRITABLE = frozenset(ROLE_KINDS) | BINDING_KINDS


def breakdown(r: PolicyRule) -> list[PolicyRule]:
    """``BreakdownRule``: one rule per group, resource, verb (and name), and per URL, verb."""
    out = []
    for group in r.api_groups:
        for resource in r.resources:
            for verb in r.verbs:
                names = r.resource_names or ("",)
                out += [PolicyRule((verb,), (group,), (resource,), (name,) if name else ())
                        for name in names]
    out += [PolicyRule((verb,), non_resource_urls=(url,)) for url in r.non_resource_urls
            for verb in r.verbs]
    return out


def _resource_covers_all(owned: tuple[str, ...], wanted: tuple[str, ...]) -> bool:
    if "*" in owned or set(wanted) <= set(owned):
        return True
    for path in wanted:
        if path in owned:
            continue
        if "/" not in path or "*/" + path.split("/", 1)[1] not in owned:
            return False
    return True


def _url_covers(owner: str, path: str) -> bool:
    return owner == path or (owner.endswith("*") and path.startswith(owner.rstrip("*")))


def rule_covers(owner: PolicyRule, sub: PolicyRule) -> bool:
    """``ruleCovers``: ``owner`` allows everything the broken-down ``sub`` does."""
    verbs = "*" in owner.verbs or set(sub.verbs) <= set(owner.verbs)
    groups = "*" in owner.api_groups or set(sub.api_groups) <= set(owner.api_groups)
    urls = all(any(_url_covers(o, p) for o in owner.non_resource_urls) for p in sub.non_resource_urls)
    if sub.resource_names:
        names = not owner.resource_names or set(sub.resource_names) <= set(owner.resource_names)
    else:
        names = not owner.resource_names
    return verbs and groups and _resource_covers_all(owner.resources, sub.resources) and names and urls


def uncovered(owned: list[PolicyRule], wanted: list[PolicyRule]) -> list[PolicyRule]:
    """``Covers``: the broken-down wanted rules no owned rule covers."""
    return [sub for r in wanted for sub in breakdown(r)
            if not any(rule_covers(owner, sub) for owner in owned)]


def compact(rules: list[PolicyRule]) -> list[PolicyRule]:
    """``CompactRules``: rules on one group and resource (at most one name) merge their verbs."""
    out: list[PolicyRule] = []
    simple: dict[tuple[str, str, tuple[str, ...]], PolicyRule] = {}
    for r in rules:
        if (len(r.resource_names) <= 1 and not r.non_resource_urls and len(r.api_groups) == 1
                and len(r.resources) == 1):
            key = (r.api_groups[0], r.resources[0], r.resource_names)
            found = simple.get(key)
            simple[key] = r if found is None else PolicyRule(found.verbs + r.verbs, found.api_groups,
                                                            found.resources, found.resource_names)
        else:
            out.append(r)
    return out + list(simple.values())


def _rbac_of(authorizer: Authorizer) -> RbacAuthorizer | None:
    for candidate in getattr(authorizer, "authorizers", (authorizer,)):
        if isinstance(candidate, RbacAuthorizer):
            return candidate
    return None


def _forbidden(resource: str, name: str, message: str) -> ApiError:
    err = Forbidden(f'{resource}.{GROUP} "{name}" is forbidden: {message}')
    err.details = {k: v for k, v in (("name", name), ("group", GROUP), ("kind", resource)) if v}
    return err


def _allowed(authorizer: Authorizer, user: User, verb: str, resource: str, namespace: str, name: str) -> bool:
    attrs = Attributes(user, verb, namespace=namespace, api_group=GROUP, api_version="*",
                       resource=resource, name=name)
    return authorizer.authorize(attrs)[0] is Decision.ALLOW


def _confirm_no_escalation(rbac: RbacAuthorizer, user: User, namespace: str, resource: str,
                           name: str, rules: list[PolicyRule]) -> None:
    owned = rbac.rules_for(user, namespace)
    missing = uncovered(owned.resource_rules + owned.non_resource_rules, rules)
    if not missing:
        return
    lines = sorted({r.compact_string() for r in compact(missing)})
    groups = "[" + " ".join(go_quote(g) for g in user.groups) + "]"
    message = (f"user {go_quote(user.name)} (groups={groups}) is attempting to grant RBAC permissions "
               "not currently held:\n" + "\n".join(lines))
    if owned.errors:
        message += f"; resolution errors: [{owned.evaluation_error}]"
    raise _forbidden(resource, name, message)


_SERVER_SET = ("ownerReferences", "finalizers", "selfLink", "managedFields", "resourceVersion",
               "generation", "uid", "creationTimestamp")


def only_gc_fields(new: Obj, old: Obj) -> bool:
    """``IsOnlyMutatingGCFields``: the write changes only what the garbage collector sets
    (owner references, finalizers), which needs no escalation check."""
    def essence(obj: Obj) -> Obj:
        meta = {k: v for k, v in (obj.get("metadata") or {}).items() if k not in _SERVER_SET}
        return {**obj, "metadata": meta}
    return essence(new) == essence(old)


def check_write(authorizer: Authorizer, user: User, resource: str, namespace: str,
                request_name: str, obj: Obj) -> None:
    """Raise the 403 upstream's RBAC storage answers when writing ``obj`` (the object a
    create, update or patch would store) to ``resource`` would grant more than ``user`` holds."""
    if MASTERS in user.groups:
        return
    rbac = _rbac_of(authorizer)
    if rbac is None:
        return
    name = (obj.get("metadata") or {}).get("name", "") or request_name
    if resource in ROLE_KINDS:
        if _allowed(authorizer, user, "escalate", resource, namespace, request_name):
            return
        rules = [PolicyRule.from_dict(r) for r in obj.get("rules") or ()]
        _confirm_no_escalation(rbac, user, namespace, resource, name, rules)
    elif resource in BINDING_KINDS:
        ref = obj.get("roleRef")
        if not isinstance(ref, dict):
            ref = {}
        kind, role = ref.get("kind", ""), ref.get("name", "")
        target = {"ClusterRole": "clusterroles", "Role": "roles"}.get(kind)
        if target is not None and _allowed(authorizer, user, "bind", target, namespace, role):
            return
        try:
            rules = list(rbac.policy.role_rules(kind, role, namespace))
        except LookupError as e:
            raise _forbidden(resource, name, str(e)) from None
        _confirm_no_escalation(rbac, user, namespace, resource, name, rules)
