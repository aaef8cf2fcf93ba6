"""The namespace controller: a namespace being deleted is emptied, then finalized.

Deleting a namespace marks it (``deletionTimestamp``, phase ``Terminating``) and the
NamespaceLifecycle admission plugin refuses new objects in it from then on; the namespace
stays while its ``spec.finalizers`` holds ``kubernetes``, this controller's finalizer
(kube-controller-manager's ``NamespacedResourcesDeleter``):

1. pods first (``OrderedNamespaceDeletion``, always on since 1.34): every pod is deleted
   with its own default grace period (pods on nodes terminate gracefully) and nothing else
   is touched while any pod remains; then every other namespaced resource the server serves
   (custom resources included), each object with background propagation;
2. the namespace's ``status.conditions`` say how that went, with upstream's types,
   reasons and messages: ``NamespaceDeletionDiscoveryFailure``,
   ``NamespaceDeletionGroupVersionParsingFailure``, ``NamespaceDeletionContentFailure``,
   ``NamespaceContentRemaining`` ("Some resources are remaining: pods. has 2 resource
   instances") and ``NamespaceFinalizersRemaining``;
3. while objects remain it looks again after ``estimate / 2 + 1`` seconds, the estimate
   being the longest termination grace period of the pods left (0 once that much time has
   passed since the namespace was deleted), 15 s for objects waiting for finalizers;
   objects that remain for no reason are a failure, retried with back-off;
4. once nothing is left it removes ``kubernetes`` through ``/finalize``, which removes the
   namespace when no other finalizer holds it.

A namespace is looked at 5 s after its deletion is seen, as upstream does to let every API
server observe the deletion first.

Choice: while pods remain, upstream 1.35 writes ``NamespaceContentRemaining`` as False
("All content successfully removed"), a known bug (kubernetes#138208, fix pending in
#138209); kvert reports the remaining pods, as the fix does.
"""

from __future__ import annotations

import logging

from kvert.api import kinds
from kvert.api.errors import ApiError, Conflict, NotFound
from kvert.api.meta import format_time, parse_time
from kvert.client.base import Client
from kvert.clock import Clock
from kvert.controllers.base import Controller, InformerFactory, SyncError, safe_handler
from kvert.controllers.util import is_deleting
from kvert.registry.deletion import BACKGROUND, NAMESPACE_FINALIZER

log = logging.getLogger(__name__)

NAMESPACES = "namespaces"

DISCOVERY_FAILURE = "NamespaceDeletionDiscoveryFailure"
PARSING_FAILURE = "NamespaceDeletionGroupVersionParsingFailure"
CONTENT_FAILURE = "NamespaceDeletionContentFailure"
CONTENT_REMAINING = "NamespaceContentRemaining"
FINALIZERS_REMAINING = "NamespaceFinalizersRemaining"
CONDITION_TYPES = (DISCOVERY_FAILURE, PARSING_FAILURE, CONTENT_FAILURE, CONTENT_REMAINING,
                   FINALIZERS_REMAINING)

# (status False reason, message) of each condition when all is well
_OK = {
    DISCOVERY_FAILURE: ("ResourcesDiscovered", "All resources successfully discovered"),
    PARSING_FAILURE: ("ParsedGroupVersions", "All legacy kube types successfully parsed"),
    CONTENT_FAILURE: ("ContentDeleted", "All content successfully deleted, may be waiting on finalization"),
    CONTENT_REMAINING: ("ContentRemoved", "All content successfully removed"),
    FINALIZERS_REMAINING: ("ContentHasNoFinalizers", "All content-preserving finalizers finished"),
}
_BAD_REASON = {
    DISCOVERY_FAILURE: "DiscoveryFailed",
    PARSING_FAILURE: "GroupVersionParsingFailed",
    CONTENT_FAILURE: "ContentDeletionFailed",
    CONTENT_REMAINING: "SomeResourcesRemain",
    FINALIZERS_REMAINING: "SomeFinalizersRemain",
}


FINALIZER_ESTIMATE = 15.0       # seconds, for content waiting for finalizers
DELETION_DELAY = 5.0            # namespaceDeletionGracePeriod


def content_resources() -> list[kinds.ResourceType]:
    """The namespaced, stored resources that can be listed and deleted; pods first."""
    found = [rt for rt in kinds.all_types()
             if rt.namespaced and rt.stored and "list" in rt.verbs and "delete" in rt.verbs]
    return sorted(found, key=lambda rt: rt.key != "pods")


def resource_label(rt: kinds.ResourceType) -> str:
    """``pods.`` / ``deployments.apps``: ``%s.%s`` of resource and group, as upstream."""
    return f"{rt.plural}.{rt.group}"


def pod_estimate(pods: list[dict], deleted_at: float, now: float) -> float:
    """``estimateGracefulTermination``: the longest grace period of the pods not finished,
    or 0 once that long has passed since the namespace was deleted."""
    estimate = 0
    for pod in pods:
        if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
            continue
        grace = (pod.get("spec") or {}).get("terminationGracePeriodSeconds")
        estimate = max(estimate, int(grace or 0))
    return 0.0 if now - deleted_at >= estimate else float(estimate)


class NamespaceController(Controller):
    name = "namespace"

    def __init__(self, client: Client, clock: Clock, *, informers: InformerFactory | None = None,
                 workers: int = 1):
        super().__init__(client, clock, informers=informers, workers=workers)
        self.namespaces = self.use(NAMESPACES)
        self.namespaces.add_handlers(safe_handler(self._seen), safe_handler(lambda old, cur: self._seen(cur)),
                                     None)

    def _seen(self, namespace: dict) -> None:
        if is_deleting(namespace):
            self.enqueue_after((namespace.get("metadata") or {}).get("name", ""), DELETION_DELAY)

    async def sync(self, name: str) -> None:
        namespace = self.namespaces.get(name)
        if namespace is None or not is_deleting(namespace):
            return
        if NAMESPACE_FINALIZER not in ((namespace.get("spec") or {}).get("finalizers") or []):
            return     # finalized already; other finalizers are someone else's
        deleted_at = parse_time(namespace["metadata"]["deletionTimestamp"])
        remaining: dict[str, int] = {}
        with_finalizers: dict[str, int] = {}
        failures: list[str] = []
        estimate = 0.0
        for rt in content_resources():
            left, finalizers, wait = await self._delete_all(rt, name, deleted_at, failures)
            if left:
                remaining[resource_label(rt)] = left
                for finalizer, count in finalizers.items():
                    with_finalizers[finalizer] = with_finalizers.get(finalizer, 0) + count
                estimate = max(estimate, wait)
            if rt.key == "pods" and left:
                break       # nothing else goes while pods remain
        await self._report(name, remaining, with_finalizers, failures)
        if failures:
            raise SyncError(f"deletion of namespace {name} failed: " + "; ".join(failures))
        if remaining:
            self.enqueue_after(name, int(estimate) // 2 + 1)
            return
        await self._finalize(name)

    async def _delete_all(self, rt: kinds.ResourceType, namespace: str, deleted_at: float,
                          failures: list[str]) -> tuple[int, dict[str, int], float]:
        """Delete one resource's objects in the namespace; (objects left, finalizers among
        them, the estimate in seconds until they go)."""
        try:
            items = (await self.client.list(rt.key, namespace=namespace))["items"]
        except NotFound:
            return 0, {}, 0.0    # stopped being served meanwhile (a CRD went)
        except ApiError as e:
            failures.append(f"listing {rt.key}: {e}")
            return 0, {}, 0.0
        estimate = pod_estimate(items, deleted_at, self.clock.now()) if rt.key == "pods" else 0.0
        policy = None if rt.key == "pods" else BACKGROUND
        left: list[dict] = []
        for obj in items:
            meta = obj.get("metadata") or {}
            if not is_deleting(obj):
                try:
                    obj = await self.client.delete(rt.key, meta.get("name", ""), namespace=namespace,
                                                   propagation_policy=policy,
                                                   preconditions={"uid": meta.get("uid")})
                except (NotFound, Conflict):
                    continue    # gone, or a namesake came: looked at on the next pass
                except ApiError as e:
                    failures.append(f"deleting {rt.key} {meta.get('name')}: {e}")
                    continue
                if not is_deleting(obj):
                    continue    # gone at once
            left.append(obj)
        finalizers: dict[str, int] = {}
        for obj in left:
            for finalizer in (obj.get("metadata") or {}).get("finalizers") or []:
                finalizers[finalizer] = finalizers.get(finalizer, 0) + 1
        if left and not estimate:
            if finalizers:
                estimate = FINALIZER_ESTIMATE
            else:
                failures.append(f"unexpected items still remain in namespace: {namespace} for gvr: "
                                f"{rt.api_version}, Resource={rt.plural}")
        return len(left), finalizers, estimate

    async def _report(self, name: str, remaining: dict[str, int], with_finalizers: dict[str, int],
                      failures: list[str]) -> None:
        bad = {}
        if failures:
            bad[CONTENT_FAILURE] = f"Failed to delete all resource types, {len(failures)} remaining: " + \
                ", ".join(sorted(failures))
        if remaining:
            bad[CONTENT_REMAINING] = "Some resources are remaining: " + ", ".join(
                f"{resource} has {count} resource instances" for resource, count in sorted(remaining.items()))
        if with_finalizers:
            bad[FINALIZERS_REMAINING] = "Some content in the namespace has finalizers remaining: " + \
                ", ".join(f"{f} in {count} resource instances" for f, count in sorted(with_finalizers.items()))
        for _ in range(5):
            try:
                namespace = await self.client.get(NAMESPACES, name)
            except NotFound:
                return
            status = dict(namespace.get("status") or {})
            now = format_time(self.clock.now())
            old = {c.get("type"): c for c in status.get("conditions") or []}
            conditions = []
            for ctype in CONDITION_TYPES:
                if ctype in bad:
                    wanted = ("True", _BAD_REASON[ctype], bad[ctype])
                else:
                    wanted = ("False", *_OK[ctype])
                previous = old.get(ctype) or {}
                same = (previous.get("status"), previous.get("reason"), previous.get("message")) == wanted
                conditions.append({"type": ctype, "status": wanted[0],
                                   "lastTransitionTime": previous.get("lastTransitionTime") if same and
                                   previous.get("lastTransitionTime") else now,
                                   "reason": wanted[1], "message": wanted[2]})
            conditions += [c for t, c in old.items() if t not in CONDITION_TYPES]
            if conditions == status.get("conditions"):
                return
            status["conditions"] = conditions
            namespace["status"] = status
            try:
                await self.client.update_status(NAMESPACES, namespace)
                return
            except NotFound:
                return
            except Conflict:
                continue

    async def _finalize(self, name: str) -> None:
        for _ in range(5):
            try:
                namespace = await self.client.get(NAMESPACES, name)
            except NotFound:
                return
            finalizers = (namespace.get("spec") or {}).get("finalizers") or []
            if NAMESPACE_FINALIZER not in finalizers:
                return
            namespace.setdefault("spec", {})["finalizers"] = sorted(set(finalizers) - {NAMESPACE_FINALIZER})
            try:
                await self.client.update(NAMESPACES, namespace, subresource="finalize")
                log.info("%s: namespace %s is empty and finalized", self.name, name)
                return
            except NotFound:
                return
            except Conflict:
                continue
        raise Conflict(NAMESPACES, name, "the namespace kept changing while it was finalized")
