"""What a delete asks for beyond removing the object: kube-apiserver's ``DeleteOptions``
rules and the garbage-collection finalizers they imply.

* ``propagationPolicy`` is ``Orphan``, ``Background`` or ``Foreground``; the deprecated
  ``orphanDependents`` is its boolean ancestor. Anything else, or both at once, is a 422
  ``DeleteOptions.meta.k8s.io "" is invalid`` (``ValidateDeleteOptions``).
* ``gc_finalizers`` is the generic store's ``deletionFinalizersForGarbageCollection``: the
  ``orphan`` finalizer when dependents are to be orphaned, ``foregroundDeletion`` when they
  are to be deleted first; an explicit option wins over a finalizer the object already
  has, which wins over the kind's default (its strategy's ``gc_policy``, upstream's
  ``DefaultGarbageCollectionPolicy``: Orphan for a core/v1 ReplicationController, kept for
  backward compatibility; background deletion for every other kind kvert serves, as the
  current API versions of upstream do). The finalizers change only when the object is not
  already being deleted.
* Only pods are deleted gracefully (their strategy's ``grace_period_seconds``, upstream's
  ``CheckGracefulDelete``): a grace period sent with the delete of any other kind is
  ignored, so it goes at once, or waits only for finalizers.
* A namespace goes ``Terminating`` (``namespace_mark``) and stays while its
  ``spec.finalizers`` (``kubernetes``, the namespace controller's) are not empty.
"""

from __future__ import annotations

from typing import Any

from kvert.api.errors import Cause, Invalid, invalid, not_supported
from kvert.api.types import Obj

ORPHAN, BACKGROUND, FOREGROUND = "Orphan", "Background", "Foreground"
POLICIES = (FOREGROUND, BACKGROUND, ORPHAN)
ORPHAN_FINALIZER = "orphan"
FOREGROUND_FINALIZER = "foregroundDeletion"
NAMESPACE_FINALIZER = "kubernetes"


def validate_options(propagation_policy: Any, orphan_dependents: Any) -> None:
    """Raise the 422 kube-apiserver answers for bad DeleteOptions."""
    causes: list[Cause] = []
    if orphan_dependents is not None and propagation_policy is not None:
        causes.append(invalid("propagationPolicy", propagation_policy,
                              "orphanDependents and deletionPropagation cannot be both set"))
    if propagation_policy is not None and propagation_policy not in POLICIES:
        causes.append(not_supported("propagationPolicy", propagation_policy, [*POLICIES, "nil"]))
    if orphan_dependents is not None and not isinstance(orphan_dependents, bool):
        causes.append(invalid("orphanDependents", orphan_dependents, "must be a boolean"))
    if causes:
        raise Invalid("DeleteOptions", "", causes, "meta.k8s.io")


def _explicit(policy: str | None, orphan_dependents: bool | None) -> str | None:
    if orphan_dependents is not None:
        return ORPHAN if orphan_dependents else BACKGROUND
    return policy


def gc_finalizers(obj: Obj, policy: str | None, orphan_dependents: bool | None,
                  default: str = BACKGROUND) -> list[str] | None:
    """The object's finalizers after a delete with these options, or None when unchanged;
    ``default``: the kind's policy (its strategy's ``gc_policy``)."""
    current = list((obj.get("metadata") or {}).get("finalizers") or [])
    wanted = _explicit(policy, orphan_dependents)
    if wanted is None:
        if ORPHAN_FINALIZER in current:
            wanted = ORPHAN
        elif FOREGROUND_FINALIZER in current:
            wanted = FOREGROUND
        else:
            wanted = default
    kept = [f for f in current if f not in (ORPHAN_FINALIZER, FOREGROUND_FINALIZER)]
    if wanted == ORPHAN:
        kept.append(ORPHAN_FINALIZER)
    elif wanted == FOREGROUND:
        kept.append(FOREGROUND_FINALIZER)
    return None if set(kept) == set(current) else kept


def namespace_mark(namespace: Obj) -> None:
    """A namespace being deleted is ``Terminating`` (it stays while ``spec.finalizers``
    holds it: see the store's ``_held``)."""
    status = dict(namespace.get("status") or {})
    status["phase"] = "Terminating"
    namespace["status"] = status


__all__ = ["BACKGROUND", "FOREGROUND", "FOREGROUND_FINALIZER", "NAMESPACE_FINALIZER", "ORPHAN",
           "ORPHAN_FINALIZER", "POLICIES", "gc_finalizers", "namespace_mark", "validate_options"]
