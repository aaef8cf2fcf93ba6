"""The admission chain hook: mutating plugins, then validation, then validating plugins.

Plugins (NamespaceLifecycle, Priority, LimitRanger, webhooks...) live with the API
server; the registry only knows this interface, so the in-process client and the HTTP
server run exactly the same chain.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from kvert.api.types import Obj

CREATE, UPDATE, DELETE, CONNECT = "CREATE", "UPDATE", "DELETE", "CONNECT"


@dataclass
class Attributes:
    """What is being admitted, as an AdmissionReview request describes it."""

    operation: str
    resource: str                  # resource key: "pods", "apps/deployments"
    namespace: str
    name: str
    object: Obj | None             # the new object; mutating plugins may change it in place
    old_object: Obj | None = None
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


@runtime_checkable
class MutatingPlugin(Protocol):
    async def admit(self, attrs: Attributes) -> None: ...


@runtime_checkable
class ValidatingPlugin(Protocol):
    async def validate(self, attrs: Attributes) -> None: ...


# A chain's plugin does either or both (``AdmissionPlugin``'s hooks).
Plugin = MutatingPlugin | ValidatingPlugin

# one plugin's admit or validate
_Steps = list[Callable[[Attributes], Awaitable[None]]]


class AdmissionChain:
    """Plugins in order. Each may implement admit, validate or both, and may name the
    resources it acts on (``resources``)."""

    def __init__(self, plugins: list[Plugin] | None = None) -> None:
        self.plugins: list[Plugin] = list(plugins or [])
        self._calls: dict[str, tuple[_Steps, _Steps]] = {}   # resource -> (admits, validates)
        self._calls_of: list[Plugin] = []                   # the plugins _calls was made for

    def _for(self, resource: str) -> tuple[_Steps, _Steps]:
        if self._calls_of != self.plugins:     # plugins may be added (or removed) at any time
            self._calls, self._calls_of = {}, list(self.plugins)
        calls = self._calls.get(resource)
        if calls is None:
            acting = [p for p in self.plugins if _acts_on(p, resource)]
            calls = self._calls[resource] = (
                [p.admit for p in acting if isinstance(p, MutatingPlugin)],
                [p.validate for p in acting if isinstance(p, ValidatingPlugin)])
        return calls

    async def admit(self, attrs: Attributes) -> None:
        try:
            for admit in self._for(attrs.resource)[0]:
                await admit(attrs)
        finally:
            _forward_warnings(attrs)

    async def validate(self, attrs: Attributes) -> None:
        try:
            for validate in self._for(attrs.resource)[1]:
                await validate(attrs)
        finally:
            _forward_warnings(attrs)


def _acts_on(plugin: Plugin, resource: str) -> bool:
    resources: frozenset[str] | None = getattr(plugin, "resources", None)
    return resources is None or resource in resources


# The warnings plugins put on ``attrs.options["warnings"]`` (a webhook's, PodSecurity's
# ``would violate PodSecurity ...``) go to whoever serves the request, as kube-apiserver's
# ``warning.AddWarning`` does through the request context: the API server collects them
# around a request and sends them as Warning headers.
_warnings: ContextVar[list[str] | None] = ContextVar("admission_warnings", default=None)


@contextmanager
def collecting_warnings() -> Iterator[list[str]]:
    """The admission warnings of the writes made inside the block."""
    sink: list[str] = []
    token = _warnings.set(sink)
    try:
        yield sink
    finally:
        _warnings.reset(token)


def _forward_warnings(attrs: Attributes) -> None:
    found = attrs.options.pop("warnings", None)
    sink = _warnings.get()
    if found and sink is not None:
        sink.extend(w for w in found if w not in sink)
