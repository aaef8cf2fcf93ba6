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

from typing import Any

from kvert.api.errors import Cause, Forbidden, NotFound
from kvert.api.kinds import by_key
from kvert.registry.admission import CREATE, DELETE, UPDATE, Attributes

from .common import forbidden

IMMORTAL_NAMESPACES = ("default", "kube-system", "kube-public")
NAMESPACES = "namespaces"
NAMESPACE_TERMINATING_CAUSE = "NamespaceTerminating"


class NamespaceLifecycle:
    name = "NamespaceLifecycle"

    def __init__(self, store: Any, immortal: tuple[str, ...] = IMMORTAL_NAMESPACES):
        self.store = store
        self.immortal = frozenset(immortal)

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
            namespace = self.store.peek(NAMESPACES, "", attrs.namespace)
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
