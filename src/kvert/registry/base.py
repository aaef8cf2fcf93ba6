"""The registry as the handlers that write beside its main path see it.

``pods/eviction`` and ``serviceaccounts/token`` are served by modules of their own, called
by the registry; they need its store, clock and admission chain and its delete, and get
them through this Protocol instead of importing the registry that calls them.
"""

from __future__ import annotations

from typing import Any, Protocol

from kvert.api.types import Obj
from kvert.clock import Clock
from kvert.registry.admission import AdmissionChain
from kvert.store.base import Store


class WritePath(Protocol):
    @property
    def store(self) -> Store: ...

    @property
    def clock(self) -> Clock: ...

    @property
    def admission(self) -> AdmissionChain: ...

    async def delete(self, resource: str, name: str, *, namespace: str = "",
                     grace_period_seconds: int | None = None,
                     preconditions: dict[str, Any] | None = None, dry_run: bool = False,
                     user: str = "", propagation_policy: str | None = None,
                     orphan_dependents: bool | None = None) -> Obj:
        """The registry's delete (see ``kvert.registry.registry.Registry.delete``)."""
        ...
