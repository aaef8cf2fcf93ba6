"""Namespaces (``namespaceStrategy`` and ``namespaceFinalizeStrategy``): created Active with
the ``kubernetes`` finalizer; ``spec.finalizers`` change only through ``/finalize``; a
namespace being deleted goes Terminating and stays while those finalizers hold it."""

from __future__ import annotations

from collections.abc import Callable

from kvert.api.kinds import ResourceType
from kvert.api.meta import deep_copy
from kvert.api.types import Obj
from kvert.auth.user import User
from kvert.clock import Clock
from kvert.registry.deletion import NAMESPACE_FINALIZER, namespace_mark
from kvert.registry.strategies.base import DefaultStrategy, SubresourceStrategy, with_resource_version_of


class NamespaceStrategy(DefaultStrategy):
    def prepare_for_create(self, rt: ResourceType, obj: Obj, requester: User | None) -> None:
        obj["status"] = {"phase": "Active"}
        spec = obj.setdefault("spec", {})
        spec.setdefault("finalizers", [NAMESPACE_FINALIZER])

    def prepare_for_update(self, rt: ResourceType, new: Obj, old: Obj, clock: Clock) -> Obj:
        new = super().prepare_for_update(rt, new, old, clock)
        finalizers = (old.get("spec") or {}).get("finalizers")
        spec = dict(new.get("spec") or {})
        if finalizers is None:
            spec.pop("finalizers", None)
        else:
            spec["finalizers"] = list(finalizers)
        new["spec"] = spec
        return new

    def deletion_mark(self, rt: ResourceType) -> Callable[[Obj], None] | None:
        return namespace_mark


class NamespaceFinalizeStrategy(SubresourceStrategy):
    """``namespaces/finalize``: the stored namespace with the request's ``spec.finalizers``,
    validated as an update of the whole namespace."""

    def prepare_for_update(self, rt: ResourceType, new: Obj, old: Obj, clock: Clock) -> Obj:
        merged = deep_copy(old)
        finalizers = (new.get("spec") or {}).get("finalizers")
        spec = merged.setdefault("spec", {})
        if finalizers:
            spec["finalizers"] = list(finalizers)
        else:
            spec.pop("finalizers", None)
        return with_resource_version_of(merged, new)
