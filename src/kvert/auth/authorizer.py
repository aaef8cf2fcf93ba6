"""The authorizer interface and kube-apiserver's way of combining authorizers.

An authorizer answers ``authorize(attrs) -> (Decision, reason)``; one that can list what a
user may do also answers ``rules_for(user, namespace) -> Rules`` (what a
SelfSubjectRulesReview reports). :class:`Union` is ``k8s.io/apiserver``'s union
authorizer: the first Allow or Deny wins, otherwise NoOpinion with the reasons joined.
:class:`PrivilegedGroups` lets members of ``system:masters`` do anything, before any other
authorizer is asked, as kube-apiserver's superuser authorizer does.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from kvert.api.errors import ApiError, Forbidden
from kvert.api.fields import FieldSelector
from kvert.api.names import path_segment_problems
from kvert.api.selectors import SelectorError
from kvert.auth.attributes import Attributes, Decision
from kvert.auth.rules import PolicyRule, go_quote
from kvert.auth.user import AUTHENTICATED, MASTERS, User

_HTML_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;"})


@runtime_checkable
class Authorizer(Protocol):
    def authorize(self, attrs: Attributes) -> tuple[Decision, str]: ...


@dataclass
class Rules:
    """What a rule resolver knows a user may do in a namespace."""

    resource_rules: list[PolicyRule] = field(default_factory=list)
    non_resource_rules: list[PolicyRule] = field(default_factory=list)
    incomplete: bool = False
    errors: list[str] = field(default_factory=list)

    @property
    def evaluation_error(self) -> str:
        return aggregate(self.errors)


def aggregate(messages: list[str]) -> str:
    """How ``utilerrors.NewAggregate(errs).Error()`` reads: one message as it is, several
    (duplicates dropped) as ``[a, b]``."""
    unique = list(dict.fromkeys(messages))
    if len(unique) <= 1:
        return unique[0] if unique else ""
    return "[" + ", ".join(unique) + "]"


class PrivilegedGroups:
    """``authorizerfactory.NewPrivilegedGroups``: these groups may do anything."""

    def __init__(self, *groups: str) -> None:
        self.groups = frozenset(groups or (MASTERS,))

    def authorize(self, attrs: Attributes) -> tuple[Decision, str]:
        if not self.groups.isdisjoint(attrs.user.groups):
            return Decision.ALLOW, ""
        return Decision.NO_OPINION, ""


class Union:
    """``union.New(authorizers...)`` together with ``union.NewRuleResolvers``."""

    def __init__(self, *authorizers: Authorizer) -> None:
        self.authorizers = authorizers

    def authorize(self, attrs: Attributes) -> tuple[Decision, str]:
        reasons = []
        for authorizer in self.authorizers:
            decision, reason = authorizer.authorize(attrs)
            if decision is not Decision.NO_OPINION:
                return decision, reason
            if reason:
                reasons.append(reason)
        return Decision.NO_OPINION, "\n".join(reasons)

    def rules_for(self, user: User, namespace: str) -> Rules:
        out = Rules()
        for authorizer in self.authorizers:
            resolve = getattr(authorizer, "rules_for", None)
            if resolve is None:
                continue
            rules = resolve(user, namespace)
            out.resource_rules += rules.resource_rules
            out.non_resource_rules += rules.non_resource_rules
            out.incomplete = out.incomplete or rules.incomplete
            out.errors += rules.errors
        return out

    def stop(self) -> None:
        """Release what the authorizers hold (store watches)."""
        for authorizer in self.authorizers:
            stop = getattr(authorizer, "stop", None)
            if stop is not None:
                stop()


def forbidden(attrs: Attributes, reason: str) -> ApiError:
    """The 403 of a refused request, as ``responsewriters.Forbidden`` writes it (through
    ``apierrors.NewForbidden``): ``pods "x" is forbidden: User "u" cannot delete resource
    "pods" in API group "" in the namespace "ns"`` (``at the cluster scope`` for cluster-wide
    requests; ``forbidden: User "u" cannot get path "/foo"`` for non-resource ones), then
    ``": " + reason`` when the authorizers gave one."""
    message = _forbidden_message(attrs).translate(_HTML_ESCAPES)
    if reason:
        message = f"{message}: {reason}"
    resource = attrs.resource if attrs.resource_request else ""
    group = attrs.api_group if attrs.resource_request else ""
    qualified = f"{resource}.{group}" if group else resource
    if not qualified:
        text = f"forbidden: {message}"
    elif attrs.name:
        text = f'{qualified} "{attrs.name}" is forbidden: {message}'
    else:
        text = f"{qualified} is forbidden: {message}"
    details = {key: value for key, value in (("name", attrs.name), ("group", group),
                                             ("kind", resource)) if value}
    err = Forbidden(text)
    err.details = details
    return err


def _forbidden_message(attrs: Attributes) -> str:
    who = go_quote(attrs.user.name)
    if not attrs.resource_request:
        return f"User {who} cannot {attrs.verb} path {go_quote(attrs.path)}"
    resource = f"{attrs.resource}/{attrs.subresource}" if attrs.subresource else attrs.resource
    where = (f"in the namespace {go_quote(attrs.namespace)}" if attrs.namespace
             else "at the cluster scope")
    return (f"User {who} cannot {attrs.verb} resource {go_quote(resource)} in API group "
            f"{go_quote(attrs.api_group)} {where}")


def selected_name(field_selector: str) -> str:
    """The name a list or watch is limited to by ``metadata.name=NAME``, which the API
    server's RequestInfo takes as the request's name ("" when none or not a valid name)."""
    try:
        name = FieldSelector.parse(field_selector).requires_exact_match("metadata.name")
    except SelectorError:
        return ""
    return name if name and not path_segment_problems(name) else ""


class RequestCheck(Protocol):
    """Raises the API server's 403 unless ``user`` (a User, or a bare user name) may make
    the request."""

    def __call__(self, user: User | str, verb: str, resource: str, namespace: str = "",
                 name: str = "", subresource: str = "", field_selector: str = "") -> None: ...


def request_check(authorizer: Authorizer) -> RequestCheck:
    """What an in-process client calls before each request (it cannot import this layer):
    ``check(user, verb, resource_key, namespace, name, subresource, field_selector)`` raises
    the 403 the API server would answer. A user given as a bare name is an authenticated
    user without other groups."""
    def check(user: User | str, verb: str, resource: str, namespace: str = "", name: str = "",
              subresource: str = "", field_selector: str = "") -> None:
        if not isinstance(user, User):
            user = User(str(user), groups=(AUTHENTICATED,))
        group, _, plural = resource.rpartition("/")
        if verb in ("list", "watch") and not name:
            name = selected_name(field_selector)
        attrs = Attributes(user, verb, namespace=namespace, api_group=group, resource=plural,
                           subresource=subresource, name=name, field_selector=field_selector)
        decision, reason = authorizer.authorize(attrs)
        if decision is not Decision.ALLOW:
            raise forbidden(attrs, reason)
    return check
