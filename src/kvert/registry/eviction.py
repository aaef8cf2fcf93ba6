"""``pods/eviction``: a delete that respects PodDisruptionBudgets (seed 001 section 14).

- no budget selects the pod: delete it (201 Created with a success ``Status``: upstream's
  EvictionREST is a create, and its create handler fills the Status' code with 201);
- one budget: it must have seen its latest spec and allow a disruption; the registry
  takes that disruption from ``status.disruptionsAllowed`` (recording the pod in
  ``disruptedPods``) and deletes the pod; with none left the answer is 429;
- more than one budget: 500, the eviction API does not support it.

Pods that are already terminating, terminal or still Pending may always go; a pod that
is not Ready may go when the budget's unhealthyPodEvictionPolicy is AlwaysAllow, or when
the budget is already met (IfHealthyBudget, the default).
"""

from __future__ import annotations

from kvert.api.conditions import is_true
from kvert.api.errors import (
    Cause,
    Conflict,
    Forbidden,
    InternalError,
    NotFound,
    TooManyRequests,
    status_success,
)
from kvert.api.meta import format_time, labels_of, name_of
from kvert.api.selectors import LabelSelector, SelectorError
from kvert.api.types import Obj
from kvert.registry.base import WritePath

_MAX_DISRUPTED_PODS = 2000
_RETRIES = 8


async def evict(registry: WritePath, namespace: str, name: str, eviction: Obj) -> Obj:
    options = eviction.get("deleteOptions") or {}
    body_name = name_of(eviction)
    if body_name and body_name != name:
        raise NotFound("pods", name, f"name in URL {name!r} does not match the eviction's {body_name!r}")
    grace = options.get("gracePeriodSeconds")
    preconditions = options.get("preconditions")
    dry_run = bool(options.get("dryRun"))

    async def delete() -> Obj:
        await registry.delete("pods", name, namespace=namespace, grace_period_seconds=grace,
                              preconditions=preconditions, dry_run=dry_run)
        return status_success(201)

    for _ in range(_RETRIES):
        pod = registry.store.get("pods", namespace, name)
        if _may_ignore_budgets(pod):
            return await delete()
        budgets = _budgets_for(registry, pod)
        if not budgets:
            return await delete()
        if len(budgets) > 1:
            raise InternalError("This pod has more than one PodDisruptionBudget, which the eviction "
                                "subresource does not support.")
        pdb = budgets[0]
        if not _is_ready(pod) and _unhealthy_may_go(pdb):
            return await delete()
        _check_budget(pdb)
        if dry_run:
            return await delete()
        status = pdb.setdefault("status", {})
        status["disruptionsAllowed"] = int(status.get("disruptionsAllowed", 0)) - 1
        status.setdefault("disruptedPods", {})[name] = format_time(registry.clock.now())
        try:
            registry.store.update("policy/poddisruptionbudgets", pdb)
        except Conflict:
            continue  # another eviction took a disruption first: decide again
        return await delete()
    raise TooManyRequests("too many concurrent evictions against one disruption budget; try again",
                          retry_after_seconds=1)


def _may_ignore_budgets(pod: Obj) -> bool:
    if pod["metadata"].get("deletionTimestamp"):
        return True
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed", "Pending")


def _budgets_for(registry: WritePath, pod: Obj) -> list[Obj]:
    namespace = pod["metadata"].get("namespace", "")
    labels = labels_of(pod)
    matched = []
    for pdb in registry.store.list("policy/poddisruptionbudgets", namespace=namespace).items:
        try:
            selector = LabelSelector.from_dict((pdb.get("spec") or {}).get("selector"))
        except SelectorError:
            continue
        # An empty selector in policy/v1 selects every pod of the namespace.
        if selector.matches(labels):
            matched.append(pdb)
    return matched


def _is_ready(pod: Obj) -> bool:
    return is_true(pod.get("status"), "Ready")


def _unhealthy_may_go(pdb: Obj) -> bool:
    policy = (pdb.get("spec") or {}).get("unhealthyPodEvictionPolicy") or "IfHealthyBudget"
    if policy == "AlwaysAllow":
        return True
    status = pdb.get("status") or {}
    return int(status.get("currentHealthy", 0)) >= int(status.get("desiredHealthy", 0))


def _check_budget(pdb: Obj) -> None:
    status = pdb.get("status") or {}
    pdb_name = name_of(pdb)
    if int(status.get("observedGeneration", 0)) < int(pdb["metadata"].get("generation", 0)):
        raise TooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.",
                              causes=[Cause("", f"The disruption budget {pdb_name} is still being "
                                            "processed by the server.", "DisruptionBudget")])
    allowed = int(status.get("disruptionsAllowed", 0))
    if allowed < 0:
        raise Forbidden("pdb disruptions allowed is negative")
    if len(status.get("disruptedPods") or {}) > _MAX_DISRUPTED_PODS:
        raise Forbidden("DisruptedPods map too big - too many evictions not confirmed by PDB controller")
    if allowed == 0:
        healthy, desired = int(status.get("currentHealthy", 0)), int(status.get("desiredHealthy", 0))
        raise TooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.",
                              causes=[Cause("", f"The disruption budget {pdb_name} needs {desired} "
                                            f"healthy pods and has {healthy} currently",
                                            "DisruptionBudget")])
