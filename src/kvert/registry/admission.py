"""The admission chain hook: mutating plugins, then validation, then validating plugins.

Plugins (NamespaceLifecycle, Priority, LimitRanger, webhooks...) live with the API
server; the registry only knows this interface, so the in-process client and the HTTP
server run exactly the same chain.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

CREATE, UPDATE, DELETE, CONNECT = "CREATE", "UPDATE", "DELETE", "CONNECT"


@dataclass
class Attributes:
    """What is being admitted, as an AdmissionReview request describes it."""

    operation: str
    resource: str                  # resource key: "pods", "apps/deployments"
    namespace: str
    name: str
    object: dict | None            # the new object; mutating plugins may change it in place
    old_object: dict | None = None
    subresource: str = ""
    dry_run: bool = False
    user: str = ""
    options: dict[str, Any] = field(default_factory=dict)


class AdmissionPlugin(Protocol):
    name: str
    # Optional: the resource keys the plugin acts on (a frozenset); without it, every
    # resource. The chain calls a plugin only for those, as kube-apiserver's plugins say
    # what they handle: most act on pods, and an Event passes through only the few that
    # act on every kind.
    # resources: frozenset[str]

    async def admit(self, attrs: Attributes) -> None:
        """Mutate ``attrs.object`` or raise an ApiError to refuse."""

    async def validate(self, attrs: Attributes) -> None:
        """Refuse by raising an ApiError; must not mutate."""


class AdmissionChain:
    """Plugins in order. Each may implement admit, validate or both, and may name the
    resources it acts on (``resources``)."""

    def __init__(self, plugins: list[Any] | None = None):
        self.plugins: list[Any] = list(plugins or [])
        self._calls: dict[str, tuple[list, list]] = {}   # resource -> (admits, validates)
        self._calls_of: list[Any] = []                  # the plugins _calls was made for

    def _for(self, resource: str) -> tuple[list, list]:
        if self._calls_of != self.plugins:     # plugins may be added (or removed) at any time
            self._calls, self._calls_of = {}, list(self.plugins)
        calls = self._calls.get(resource)
        if calls is None:
            acting = [p for p in self.plugins
                      if getattr(p, "resources", None) is None or resource in p.resources]
            calls = self._calls[resource] = (
                [p.admit for p in acting if getattr(p, "admit", None) is not None],
                [p.validate for p in acting if getattr(p, "validate", None) is not None])
        return calls

    async def admit(self, attrs: Attributes) -> None:
        for admit in self._for(attrs.resource)[0]:
            await admit(attrs)

    async def validate(self, attrs: Attributes) -> None:
        for validate in self._for(attrs.resource)[1]:
            await validate(attrs)
