"""The RBAC authorizer (``plugin/pkg/auth/authorizer/rbac``) over roles and bindings in the store.

A request is allowed when a rule of a role bound to the user allows it: ClusterRoleBindings
bind cluster roles everywhere, RoleBindings bind a Role of their namespace or a ClusterRole
in their namespace only. A binding's subjects name a User, a Group, or a ServiceAccount
(the user ``system:serviceaccount:NAMESPACE:NAME``; a RoleBinding's subject without a
namespace means one in the binding's namespace). RBAC never denies: without a rule it
has no opinion, and says why only when a binding named a role that does not exist.

Cost per request. :class:`Policy` keeps the roles and bindings indexed by subject and
caches, per (user, groups, namespace), the rules that apply; the cache is dropped when any
role or binding changes. :class:`StorePolicy` follows the store with one watch per RBAC
resource, drained (a length check when nothing changed) before each decision: on the
local stores a write is visible to the next request, on etcd as soon as its event
arrives, as kube-apiserver's informer-fed authorizer sees it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from kvert.api.types import Obj
from kvert.auth.attributes import Attributes, Decision
from kvert.auth.authorizer import Rules, aggregate
from kvert.auth.rules import GROUP as GROUP
from kvert.auth.rules import PolicyRule, rule_allows
from kvert.auth.user import SERVICE_ACCOUNT_PREFIX as SERVICE_ACCOUNT_PREFIX
from kvert.auth.user import User
from kvert.auth.user import service_account_username as service_account_username
from kvert.store import Store, Watch

log = logging.getLogger(__name__)

ROLES = f"{GROUP}/roles"
ROLE_BINDINGS = f"{GROUP}/rolebindings"
CLUSTER_ROLES = f"{GROUP}/clusterroles"
CLUSTER_ROLE_BINDINGS = f"{GROUP}/clusterrolebindings"
RESOURCES = (CLUSTER_ROLES, ROLES, CLUSTER_ROLE_BINDINGS, ROLE_BINDINGS)

_CACHE_LIMIT = 4096

# How a binding's subjects are indexed: ("User", name), ("Group", name) or
# ("ServiceAccount", namespace, name).
SubjectKey = tuple[str, ...]


@dataclass(frozen=True)
class Subject:
    kind: str
    name: str
    namespace: str = ""

    def applies_to(self, user: User, binding_namespace: str) -> bool:
        """``appliesToUser`` in ``pkg/registry/rbac/validation/rule.go``."""
        if self.kind == "User":
            return user.name == self.name
        if self.kind == "Group":
            return self.name in user.groups
        if self.kind == "ServiceAccount":
            namespace = self.namespace or binding_namespace
            return bool(namespace) and user.name == service_account_username(namespace, self.name)
        return False

    def describe(self, binding_namespace: str) -> str:
        if self.kind == "ServiceAccount":
            return f'{self.kind} "{self.name}/{self.namespace or binding_namespace}"'
        return f'{self.kind} "{self.name}"'


@dataclass(frozen=True)
class Binding:
    name: str
    namespace: str          # "" for a ClusterRoleBinding
    role_kind: str
    role_name: str
    subjects: tuple[Subject, ...]

    @classmethod
    def from_object(cls, obj: Obj) -> Binding:
        meta = obj.get("metadata") or {}
        ref = obj.get("roleRef")
        if not isinstance(ref, dict):
            ref = {}
        subjects = tuple(Subject(str(s.get("kind", "")), str(s.get("name", "")),
                                 str(s.get("namespace", "") or ""))
                         for s in obj.get("subjects") or () if isinstance(s, dict))
        return cls(meta.get("name", ""), meta.get("namespace", "") or "",
                   str(ref.get("kind", "")), str(ref.get("name", "")), subjects)

    def first_subject_for(self, user: User) -> Subject | None:
        return next((s for s in self.subjects if s.applies_to(user, self.namespace)), None)

    def describe(self, subject: Subject) -> str:
        """What an allowed decision's reason names (the binding describers of rule.go)."""
        if self.namespace:
            return (f'RoleBinding "{self.name}/{self.namespace}" of {self.role_kind} '
                    f'"{self.role_name}" to {subject.describe(self.namespace)}')
        return (f'ClusterRoleBinding "{self.name}" of {self.role_kind} "{self.role_name}" to '
                f'{subject.describe("")}')


@dataclass(frozen=True)
class Resolved:
    """The rules that apply to one user in one namespace, in visiting order."""

    grants: tuple[tuple[str, tuple[PolicyRule, ...]], ...]   # (binding description, rules)
    errors: tuple[str, ...]


def rules_of(obj: Obj) -> tuple[PolicyRule, ...]:
    return tuple(PolicyRule.from_dict(r) for r in obj.get("rules") or ())


def _subject_keys(user: User) -> list[SubjectKey]:
    keys: list[SubjectKey] = [("User", user.name)]
    keys += [("Group", g) for g in user.groups]
    if user.name.startswith(SERVICE_ACCOUNT_PREFIX):
        namespace, _, name = user.name[len(SERVICE_ACCOUNT_PREFIX):].partition(":")
        keys.append(("ServiceAccount", namespace, name))
    return keys


class Policy:
    """Roles and bindings, indexed by subject, with per-user resolution cached."""

    def __init__(self) -> None:
        self._roles: dict[tuple[str, str], tuple[PolicyRule, ...]] = {}
        self._cluster_roles: dict[str, tuple[PolicyRule, ...]] = {}
        self._bindings: dict[tuple[str, str], Binding] = {}   # (namespace, name); "" = cluster
        # namespace ("" for cluster bindings) -> subject key -> binding names
        self._by_subject: dict[str, dict[SubjectKey, set[str]]] = {}
        # by (user name, groups, namespace)
        self._cache: dict[tuple[str, tuple[str, ...], str], Resolved] = {}
        # decisions by request attributes: most requests repeat one of a few shapes
        self.decisions: dict[tuple[str | bool | tuple[str, ...], ...], tuple[Decision, str]] = {}

    @classmethod
    def from_objects(cls, objects: list[Obj]) -> Policy:
        """A fixed policy (tests, ``kvert`` tools): Roles, ClusterRoles and their bindings."""
        policy = cls()
        for obj in objects:
            policy.put(_resource_of(obj), obj)
        return policy

    # ---- changes ------------------------------------------------------------------------

    def put(self, resource: str, obj: Obj) -> None:
        self.remove(resource, obj)
        meta = obj.get("metadata") or {}
        name, namespace = meta.get("name", ""), meta.get("namespace", "") or ""
        if resource == CLUSTER_ROLES:
            self._cluster_roles[name] = rules_of(obj)
        elif resource == ROLES:
            self._roles[(namespace, name)] = rules_of(obj)
        else:
            binding = Binding.from_object(obj)
            if resource == CLUSTER_ROLE_BINDINGS:
                binding = Binding(name, "", binding.role_kind, binding.role_name, binding.subjects)
            self._bindings[(binding.namespace, name)] = binding
            index = self._by_subject.setdefault(binding.namespace, {})
            for key in self._keys_of(binding):
                index.setdefault(key, set()).add(name)
        self._cache.clear()
        self.decisions.clear()

    def remove(self, resource: str, obj: Obj) -> None:
        meta = obj.get("metadata") or {}
        name, namespace = meta.get("name", ""), meta.get("namespace", "") or ""
        if resource == CLUSTER_ROLES:
            self._cluster_roles.pop(name, None)
        elif resource == ROLES:
            self._roles.pop((namespace, name), None)
        else:
            if resource == CLUSTER_ROLE_BINDINGS:
                namespace = ""
            binding = self._bindings.pop((namespace, name), None)
            if binding is not None:
                index = self._by_subject.get(namespace, {})
                for key in self._keys_of(binding):
                    names = index.get(key)
                    if names is not None:
                        names.discard(name)
                        if not names:
                            del index[key]
        self._cache.clear()
        self.decisions.clear()

    def clear(self) -> None:
        self._roles.clear()
        self._cluster_roles.clear()
        self._bindings.clear()
        self._by_subject.clear()
        self._cache.clear()
        self.decisions.clear()

    def refresh(self) -> None:
        """Take in changes made elsewhere (a store's policy follows its watches)."""

    @staticmethod
    def _keys_of(binding: Binding) -> list[SubjectKey]:
        keys: list[SubjectKey] = []
        for s in binding.subjects:
            if s.kind == "ServiceAccount":
                namespace = s.namespace or binding.namespace
                if namespace:
                    keys.append(("ServiceAccount", namespace, s.name))
            elif s.kind in ("User", "Group"):
                keys.append((s.kind, s.name))
        return keys

    # ---- resolution ---------------------------------------------------------------------

    def role_rules(self, kind: str, name: str, namespace: str) -> tuple[PolicyRule, ...]:
        """``GetRoleReferenceRules``: raises LookupError with the lister's message."""
        if kind == "Role":
            rules = self._roles.get((namespace, name))
            if rules is None:
                raise LookupError(f'role.{GROUP} "{name}" not found')
            return rules
        if kind == "ClusterRole":
            rules = self._cluster_roles.get(name)
            if rules is None:
                raise LookupError(f'clusterrole.{GROUP} "{name}" not found')
            return rules
        raise LookupError(f'unsupported role reference kind: "{kind}"')

    def resolve(self, user: User, namespace: str) -> Resolved:
        key = (user.name, user.groups, namespace)
        found = self._cache.get(key)
        if found is None:
            if len(self._cache) >= _CACHE_LIMIT:
                self._cache.clear()
            found = self._cache[key] = self._resolve(user, namespace)
        return found

    def _resolve(self, user: User, namespace: str) -> Resolved:
        grants: list[tuple[str, tuple[PolicyRule, ...]]] = []
        errors: list[str] = []
        for scope in ("", namespace) if namespace else ("",):
            index = self._by_subject.get(scope, {})
            names: set[str] = set()
            for key in _subject_keys(user):
                names |= index.get(key, set())
            for name in sorted(names):
                binding = self._bindings[(scope, name)]
                subject = binding.first_subject_for(user)
                if subject is None:
                    continue
                try:
                    # not self.role_rules: a StorePolicy must not take in changes mid-way
                    rules = Policy.role_rules(self, binding.role_kind, binding.role_name, scope)
                except LookupError as e:
                    errors.append(str(e))
                    continue
                grants.append((binding.describe(subject), rules))
        return Resolved(tuple(grants), tuple(errors))


def _resource_of(obj: Obj) -> str:
    return {"Role": ROLES, "ClusterRole": CLUSTER_ROLES, "RoleBinding": ROLE_BINDINGS,
            "ClusterRoleBinding": CLUSTER_ROLE_BINDINGS}[obj.get("kind", "")]


class StorePolicy(Policy):
    """A Policy that follows the RBAC objects of a store through watches."""

    def __init__(self, store: Store) -> None:
        super().__init__()
        self.store = store
        self._watches: dict[str, Watch] = {}

    def resolve(self, user: User, namespace: str) -> Resolved:
        self.sync()
        return super().resolve(user, namespace)

    def refresh(self) -> None:
        self.sync()

    def role_rules(self, kind: str, name: str, namespace: str) -> tuple[PolicyRule, ...]:
        self.sync()
        return super().role_rules(kind, name, namespace)

    def sync(self) -> None:
        """Take in every change the store has made since the last call."""
        watches = self._watches
        if not watches or any(w.stopped for w in watches.values()):
            self._relist()
            return
        for resource, w in watches.items():
            if not w.pending():
                continue
            for event in w.get_nowait():
                if event.type == "ERROR":
                    self._relist()      # history lost (etcd compaction): start over
                    return
                if event.type == "DELETED":
                    self.remove(resource, event.object)
                elif event.type in ("ADDED", "MODIFIED"):
                    self.put(resource, event.object)

    def _relist(self) -> None:
        for w in self._watches.values():
            w.stop()
        self._watches = {}
        self.clear()
        for resource in RESOURCES:
            listing = self.store.list(resource)
            for obj in listing.items:
                self.put(resource, obj)
            self._watches[resource] = self.store.watch(resource,
                                                       resource_version=listing.resource_version)

    def stop(self) -> None:
        for w in self._watches.values():
            w.stop()
        self._watches = {}


MAX_CACHED_DECISIONS = 50_000


class RbacAuthorizer:
    """``rbac.New(...)``: Authorize and RulesFor over a :class:`Policy`."""

    def __init__(self, policy: Policy) -> None:
        self.policy = policy

    @classmethod
    def for_store(cls, store: Store) -> RbacAuthorizer:
        return cls(StorePolicy(store))

    def authorize(self, attrs: Attributes) -> tuple[Decision, str]:
        policy = self.policy
        policy.refresh()
        key = (attrs.user.name, attrs.user.groups, attrs.verb, attrs.resource_request,
               attrs.namespace, attrs.api_group, attrs.resource, attrs.subresource, attrs.name,
               "" if attrs.resource_request else attrs.path)
        found = policy.decisions.get(key)
        if found is None:
            if len(policy.decisions) >= MAX_CACHED_DECISIONS:
                policy.decisions.clear()
            found = policy.decisions[key] = self._decide(attrs)
        return found

    def _decide(self, attrs: Attributes) -> tuple[Decision, str]:
        resolved = self.policy.resolve(attrs.user, attrs.namespace)
        for source, rules in resolved.grants:
            for r in rules:
                if rule_allows(attrs, r):
                    return Decision.ALLOW, f"RBAC: allowed by {source}"
        if resolved.errors:
            return Decision.NO_OPINION, f"RBAC: {aggregate(list(resolved.errors))}"
        return Decision.NO_OPINION, ""

    def rules_for(self, user: User, namespace: str) -> Rules:
        resolved = self.policy.resolve(user, namespace)
        out = Rules(errors=list(resolved.errors))
        for _, rules in resolved.grants:
            for r in rules:
                if r.resources:
                    out.resource_rules.append(r)
                if r.non_resource_urls:
                    out.non_resource_rules.append(r)
        return out

    def stop(self) -> None:
        stop = getattr(self.policy, "stop", None)
        if stop is not None:
            stop()
