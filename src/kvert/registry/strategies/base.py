"""The strategy contract: what one (resource, subresource) decides about a write.

In the voice of k8s.io/apiserver's ``rest.RESTCreateStrategy``, ``RESTUpdateStrategy`` and
``RESTDeleteStrategy``: the registry runs the same steps for every kind (kind and namespace
checks, defaulting, admission, validation, storage) and asks the strategy of the
(resource, subresource) written at the points below what only that kind knows. Strategies
hold no state; one object serves every registry.

``DefaultStrategy`` is what a kind without rules of its own gets (custom resources included),
``StatusStrategy`` what its ``/status`` gets; the kinds' strategies extend them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, cast, runtime_checkable

from kvert.api import validation
from kvert.api.errors import Cause
from kvert.api.kinds import ResourceType
from kvert.api.meta import deep_copy
from kvert.api.schema import prepare_custom_object, prepare_custom_status
from kvert.api.types import Obj
from kvert.auth.user import User
from kvert.clock import Clock
from kvert.registry.deletion import BACKGROUND

CreateCheck = Callable[[Obj], list[Cause]]
UpdateCheck = Callable[[Obj, Obj], list[Cause]]


@runtime_checkable
class CreateStrategy(Protocol):
    def decode(self, rt: ResourceType, obj: Obj) -> None:
        """Runs first on the body of a create or an update, before defaulting and admission:
        what converting the body to the kind's internal type does beyond parsing (a Secret's
        ``stringData`` merged into ``data``). May change ``obj`` in place."""

    def names_own_uid(self, rt: ResourceType) -> bool:
        """Whether ``prepare_for_create`` needs the object's uid (a Job's generated selector
        names it): the registry then takes one from the store first."""

    def prepare_for_create(self, rt: ResourceType, obj: Obj, requester: User | None) -> None:
        """Create, after mutating admission and name generation, before validation. May reset
        what a client may not set (status) and fill what the server owns (a CSR's requester,
        a pod's QoS class). ``requester``: the authenticated user, when known."""

    def validate(self, rt: ResourceType, obj: Obj) -> list[Cause]:
        """Create, on the defaulted object after ``check_schema``, before validating
        admission: the causes that make it invalid (a 422). Must not change ``obj``."""


@runtime_checkable
class UpdateStrategy(Protocol):
    def prepare_for_update(self, rt: ResourceType, new: Obj, old: Obj, clock: Clock) -> Obj:
        """Update, after ``decode``, before defaulting and admission: the object to store,
        made of the request ``new`` and the stored ``old`` (both this write's own). The main
        resource may copy from ``old`` what it does not own (status, which has its own
        subresource); a subresource takes from ``new`` only what it owns and the rest from
        ``old``. May change ``new`` and return it, or return a new object sharing ``old``'s
        parts (the write path only reads them). ``clock`` dates what the server stamps
        (condition times)."""

    def validate_update(self, rt: ResourceType, new: Obj, old: Obj) -> list[Cause]:
        """Update, on the defaulted ``new`` and ``old``: the causes that make the change
        invalid (a 422). A subresource's write is checked as ``prepare_for_update`` made it,
        before mutating admission; the main resource's after it. Must change neither."""


@runtime_checkable
class SchemaStrategy(Protocol):
    def check_schema(self, rt: ResourceType, obj: Obj) -> list[Cause]:
        """Create and update, after mutating admission, beside ``validate``: the parts of a
        custom resource this write owns pruned of unknown fields and defaulted from the
        CRD's schema (in place); returns the schema's causes, reported with the validation's.
        Nothing for kinds without a schema."""


@runtime_checkable
class DeleteStrategy(Protocol):
    def grace_period_seconds(self, rt: ResourceType, obj: Obj, requested: int | None) -> int:
        """Delete: how long the stored ``obj`` waits before it is removed, given the grace
        period the delete asked for (None: unset). Kinds without graceful deletion answer 0
        whatever was asked (``CheckGracefulDelete``)."""

    def gc_policy(self, rt: ResourceType) -> str:
        """Delete: the propagation to dependents when the delete names none
        (``DefaultGarbageCollectionPolicy``): a ``kvert.registry.deletion`` policy."""

    def deletion_mark(self, rt: ResourceType) -> Callable[[Obj], None] | None:
        """Delete: what marks an object that stays while finalizers hold it, besides its
        ``deletionTimestamp`` (a namespace's Terminating phase); None for nothing."""

    def check_delete(self, rt: ResourceType, name: str) -> None:
        """Delete of one object by name, before it is read (a REST storage's own ``Delete``):
        raise to refuse it. Not called for the items of a deletecollection, which upstream's
        generic store deletes without the kind's ``Delete``."""


@runtime_checkable
class Strategy(CreateStrategy, UpdateStrategy, SchemaStrategy, DeleteStrategy, Protocol):
    """Every hook a (resource, subresource) answers; the registry looks them up in
    ``kvert.registry.strategies.STRATEGIES``."""


class _CopyFree(Protocol):
    """A ``kvert.api.validation`` entry point: its ``of_defaulted`` runs the same checks on
    objects already defaulted, without copying them (the registry defaults what it stores)."""

    of_defaulted: Callable[..., list[Cause]]


def copy_free_create(entry: Callable[[Obj], list[Cause]]) -> CreateCheck:
    # the entry points set ``of_defaulted`` as an attribute, which their type cannot tell
    checks: CreateCheck = cast(_CopyFree, entry).of_defaulted
    return checks


def copy_free_update(entry: Callable[[Obj, Obj], list[Cause]]) -> UpdateCheck:
    checks: UpdateCheck = cast(_CopyFree, entry).of_defaulted
    return checks


_validate = copy_free_create(validation.validate)
_validate_update = copy_free_update(validation.validate_update)
_validate_status_update = copy_free_update(validation.validate_status_update)


class DefaultStrategy:
    """The main resource of a kind without rules of its own: status is the server's (set
    through ``/status``), everything else the client's."""

    def decode(self, rt: ResourceType, obj: Obj) -> None:
        pass

    def names_own_uid(self, rt: ResourceType) -> bool:
        return False

    def prepare_for_create(self, rt: ResourceType, obj: Obj, requester: User | None) -> None:
        if rt.has_status:
            obj.pop("status", None)

    def validate(self, rt: ResourceType, obj: Obj) -> list[Cause]:
        return _validate(obj)

    def prepare_for_update(self, rt: ResourceType, new: Obj, old: Obj, clock: Clock) -> Obj:
        if rt.has_status:
            if "status" in old:
                new["status"] = deep_copy(old["status"])
            else:
                new.pop("status", None)
        return new

    def validate_update(self, rt: ResourceType, new: Obj, old: Obj) -> list[Cause]:
        return _validate_update(new, old)

    def check_schema(self, rt: ResourceType, obj: Obj) -> list[Cause]:
        return prepare_custom_object(obj, rt.schema)

    def grace_period_seconds(self, rt: ResourceType, obj: Obj, requested: int | None) -> int:
        return 0

    def gc_policy(self, rt: ResourceType) -> str:
        return BACKGROUND

    def deletion_mark(self, rt: ResourceType) -> Callable[[Obj], None] | None:
        return None

    def check_delete(self, rt: ResourceType, name: str) -> None:
        return None


def with_resource_version_of(merged: Obj, new: Obj) -> Obj:
    """``merged`` (a subresource's result, its metadata its own) based on the version the
    writer sent, so a stale subresource write is still a conflict."""
    rv = (new.get("metadata") or {}).get("resourceVersion")
    merged["metadata"]["resourceVersion"] = rv or ""
    return merged


def merge_status_update(new: Obj, old: Obj) -> Obj:
    """The object a ``/status`` write produces: the stored object with the new status.

    Metadata comes from the stored object (labels, annotations and finalizers do not
    change through /status), except the resourceVersion the writer based its change on.

    Nothing is copied: the result takes ``new``'s status (the caller's to give away) and
    shares the rest of ``old`` but its metadata, so a status write costs no deep copy of the
    spec; the write path only reads the shared parts (and defaults them, which changes
    nothing in a stored object).
    """
    merged = dict(old)
    merged["metadata"] = dict(old["metadata"])
    if "status" in new:
        merged["status"] = new["status"]
    else:
        merged.pop("status", None)
    return with_resource_version_of(merged, new)


class StatusStrategy(DefaultStrategy):
    """``/status`` of a kind without rules of its own: the status is the request's, the
    rest the stored object's."""

    def prepare_for_update(self, rt: ResourceType, new: Obj, old: Obj, clock: Clock) -> Obj:
        return merge_status_update(new, old)

    def validate_update(self, rt: ResourceType, new: Obj, old: Obj) -> list[Cause]:
        return _validate_status_update(new, old)

    def check_schema(self, rt: ResourceType, obj: Obj) -> list[Cause]:
        return prepare_custom_status(obj, rt.schema)


class SubresourceStrategy(DefaultStrategy):
    """A subresource that changes part of a built-in kind (``/resize``, ``/approval``,
    ``/finalize``): no schema of its own to check."""

    def check_schema(self, rt: ResourceType, obj: Obj) -> list[Cause]:
        return []
