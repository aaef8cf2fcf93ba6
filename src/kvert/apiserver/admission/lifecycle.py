"""NamespaceLifecycle (``staging/.../admission/plugin/namespace/lifecycle``).

- Deleting ``default``, ``kube-system`` or ``kube-public`` is refused (403,
  ``namespaces "default" is forbidden: this namespace may not be deleted``).
- Namespaces themselves and cluster-scoped objects are never checked; deleting
  namespaced objects is always allowed.
- Creating or updating an object in a namespace that does not exist is refused with
  the namespace's 404 (``namespaces "x" not found``).
- Creating an object in a namespace being terminated (phase ``Terminating``, or a
  deletionTimestamp) is refused (403, ``unable to create new content in namespace x
  because it is being terminated``, cause ``NamespaceTerminating``). Updates there are
  allowed, so controllers can still finish their work.

Kubernetes reads namespaces from an informer with a live-lookup fallback; kvert reads the
store, which is always current, so neither the 50 ms wait nor the force-live-lookup
cache is needed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, runtime_checkable

from kvert.api.errors import Cause, Forbidden, NotFound
from kvert.api.kinds import by_key
from kvert.api.types import Obj
from kvert.registry.admission import CREATE, DELETE, UPDATE, Attributes
from kvert.store.base import Store

from .common import forbidden

IMMORTAL_NAMESPACES = ("default", "kube-system", "kube-public")
NAMESPACES = "namespaces"
NAMESPACE_TERMINATING_CAUSE = "NamespaceTerminating"


@runtime_checkable
class _Peeking(Protocol):
    def peek(self, resource: str, namespace: str, name: str) -> Obj: ...


class NamespaceLifecycle:
    name = "NamespaceLifecycle"

    def __init__(self, store: Store, immortal: tuple[str, ...] = IMMORTAL_NAMESPACES):
        self.store = store
        self.immortal = frozenset(immortal)
        # every namespaced write reads its namespace: without a copy where the store can
        # (BaseStore.peek, not part of the Store contract), else with the copying get
        self._read_namespace: Callable[[str, str, str], Obj] = (
            store.peek if isinstance(store, _Peeking) else store.get)

    async def admit(self, attrs: Attributes) -> None:
        if attrs.operation not in (CREATE, UPDATE, DELETE):
            return
        if attrs.resource == NAMESPACES:
            if attrs.operation == DELETE and attrs.name in self.immortal:
                err = Forbidden(f'namespaces "{attrs.name}" is forbidden: this namespace may not '
                                'be deleted')
                err.details = {"name": attrs.name, "kind": NAMESPACES}
                raise err
            return  # every other operation on namespaces is allowed
        if not _namespaced(attrs.resource) or not attrs.namespace:
            return
        if attrs.operation == DELETE:
            return
        try:
            namespace = self._read_namespace(NAMESPACES, "", attrs.namespace)
        except NotFound:
            raise NotFound(NAMESPACES, attrs.namespace) from None
        if attrs.operation == CREATE and is_terminating(namespace):
            raise forbidden(attrs, f"unable to create new content in namespace {attrs.namespace} "
                                   "because it is being terminated",
                            [Cause("metadata.namespace",
                                   f"namespace {attrs.namespace} is being terminated",
                                   NAMESPACE_TERMINATING_CAUSE)])


def is_terminating(namespace: dict) -> bool:
    if (namespace.get("status") or {}).get("phase") == "Terminating":
        return True
    return bool((namespace.get("metadata") or {}).get("deletionTimestamp"))


def _namespaced(resource: str) -> bool:
    try:
        return by_key(resource).namespaced
    except KeyError:
        return True
