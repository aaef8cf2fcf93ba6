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

    async def admit(self, attrs: Attributes) -> None:
        """Mutate ``attrs.object`` or raise an ApiError to refuse."""

    async def validate(self, attrs: Attributes) -> None:
        """Refuse by raising an ApiError; must not mutate."""


class AdmissionChain:
    """Plugins in order. Each may implement admit, validate or both."""

    def __init__(self, plugins: list[Any] | None = None):
        self.plugins: list[Any] = list(plugins or [])

    async def admit(self, attrs: Attributes) -> None:
        for plugin in self.plugins:
            admit = getattr(plugin, "admit", None)
            if admit is not None:
                await admit(attrs)

    async def validate(self, attrs: Attributes) -> None:
        for plugin in self.plugins:
            validate = getattr(plugin, "validate", None)
            if validate is not None:
                await validate(attrs)
