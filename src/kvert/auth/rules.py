"""RBAC policy rules and how a request matches one (``pkg/apis/rbac/v1/evaluation_helpers.go``).

A rule grants its verbs on the resources it names in its API groups (optionally only the
objects in ``resource_names``), or its verbs on non-resource URLs. ``"*"`` matches every
verb, group, resource or URL; ``"pods/status"`` names a subresource and ``"*/scale"`` one
subresource of every resource; a URL ending in ``"*"`` matches every path it prefixes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kvert.auth.attributes import Attributes

ALL = "*"
GROUP = "rbac.authorization.k8s.io"   # the RBAC API group


@dataclass(frozen=True)
class PolicyRule:
    verbs: tuple[str, ...] = ()
    api_groups: tuple[str, ...] = ()
    resources: tuple[str, ...] = ()
    resource_names: tuple[str, ...] = ()
    non_resource_urls: tuple[str, ...] = ()
    # sets for matching, derived once (rules are evaluated on every request)
    _verbs: frozenset[str] = field(init=False, repr=False, compare=False)
    _groups: frozenset[str] = field(init=False, repr=False, compare=False)
    _resources: frozenset[str] = field(init=False, repr=False, compare=False)
    _names: frozenset[str] = field(init=False, repr=False, compare=False)
    _url_prefixes: tuple[str, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        setattr_ = object.__setattr__
        setattr_(self, "_verbs", frozenset(self.verbs))
        setattr_(self, "_groups", frozenset(self.api_groups))
        setattr_(self, "_resources", frozenset(self.resources))
        setattr_(self, "_names", frozenset(self.resource_names))
        setattr_(self, "_url_prefixes", tuple(u.rstrip("*") for u in self.non_resource_urls
                                              if u.endswith("*")))

    @classmethod
    def from_dict(cls, rule: object) -> PolicyRule:
        """A rule from its JSON form; malformed parts read as empty (validation refused them)."""
        if not isinstance(rule, dict):
            return cls()

        def strings(key: str) -> tuple[str, ...]:
            value = rule.get(key)
            return tuple(v for v in value if isinstance(v, str)) if isinstance(value, list) else ()

        return cls(strings("verbs"), strings("apiGroups"), strings("resources"),
                   strings("resourceNames"), strings("nonResourceURLs"))

    def to_dict(self) -> dict[str, list[str]]:
        """The JSON form, fields in ``rbac/v1.PolicyRule`` order, empty ones left out."""
        out: dict[str, list[str]] = {"verbs": list(self.verbs)}
        for key, values in (("apiGroups", self.api_groups), ("resources", self.resources),
                            ("resourceNames", self.resource_names),
                            ("nonResourceURLs", self.non_resource_urls)):
            if values:
                out[key] = list(values)
        return out

    def compact_string(self) -> str:
        """``rbacv1helpers.CompactString``: how escalation errors name a missing rule."""
        parts = []
        for label, values in (("APIGroups", self.api_groups), ("Resources", self.resources),
                              ("NonResourceURLs", self.non_resource_urls),
                              ("ResourceNames", self.resource_names), ("Verbs", self.verbs)):
            if values:
                parts.append(f"{label}:[{' '.join(go_quote(v) for v in values)}]")
        return "{" + ", ".join(parts) + "}"


def rule(*verbs: str, groups: tuple[str, ...] | list[str] = (), resources: tuple[str, ...] | list[str] = (),
         names: tuple[str, ...] | list[str] = (), urls: tuple[str, ...] | list[str] = ()) -> PolicyRule:
    """``rbacv1helpers.NewRule(verbs...).Groups(...).Resources(...).Names(...).URLs(...)``."""
    return PolicyRule(tuple(verbs), tuple(groups), tuple(resources), tuple(names), tuple(urls))


def verb_matches(r: PolicyRule, verb: str) -> bool:
    return ALL in r._verbs or verb in r._verbs


def api_group_matches(r: PolicyRule, group: str) -> bool:
    return ALL in r._groups or group in r._groups


def resource_matches(r: PolicyRule, combined: str, subresource: str) -> bool:
    """``combined`` is ``resource`` or ``resource/subresource``."""
    resources = r._resources
    if ALL in resources or combined in resources:
        return True
    return bool(subresource) and f"*/{subresource}" in resources


def resource_name_matches(r: PolicyRule, name: str) -> bool:
    return not r._names or name in r._names


def non_resource_url_matches(r: PolicyRule, path: str) -> bool:
    urls = r.non_resource_urls
    if ALL in urls or path in urls:
        return True
    return any(path.startswith(prefix) for prefix in r._url_prefixes)


def rule_allows(attrs: Attributes, r: PolicyRule) -> bool:
    """``RuleAllows`` in ``plugin/pkg/auth/authorizer/rbac/rbac.go``."""
    if not verb_matches(r, attrs.verb):
        return False
    if attrs.resource_request:
        combined = f"{attrs.resource}/{attrs.subresource}" if attrs.subresource else attrs.resource
        return (api_group_matches(r, attrs.api_group)
                and resource_matches(r, combined, attrs.subresource)
                and resource_name_matches(r, attrs.name))
    return non_resource_url_matches(r, attrs.path)


def rules_allow(attrs: Attributes, rules: tuple[PolicyRule, ...] | list[PolicyRule]) -> bool:
    return any(rule_allows(attrs, r) for r in rules)


def go_quote(text: str) -> str:
    """Go's ``%q`` for the plain strings names are."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
