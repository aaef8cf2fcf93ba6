"""Helpers the workload controllers share: pod readiness and availability, the pod
deletion ranking, int-or-percent scaling, controller references, pods from templates."""

from __future__ import annotations

import math
from typing import Any

from kvert.api.meta import deep_copy, parse_time

# Kubernetes' maxGeneratedNameLength: a generateName prefix is cut so the name fits 63.
MAX_GENERATED_NAME_PREFIX = 63 - 5
POD_DELETION_COST = "controller.kubernetes.io/pod-deletion-cost"
_PHASE_ORDINAL: dict[str | None, int] = {"Pending": 0, "Unknown": 1, "Running": 2}   # a status may lack its phase


def spec_replicas(obj: dict) -> int:
    value = (obj.get("spec") or {}).get("replicas")
    return 1 if value is None else int(value)


def status_int(obj: dict, field: str) -> int:
    return int((obj.get("status") or {}).get(field) or 0)


def creation_time(obj: dict) -> float:
    stamp = (obj.get("metadata") or {}).get("creationTimestamp")
    return parse_time(stamp) if stamp else 0.0


def uid_of(obj: dict) -> str:
    return (obj.get("metadata") or {}).get("uid", "")


def is_deleting(obj: dict) -> bool:
    return bool((obj.get("metadata") or {}).get("deletionTimestamp"))


# ---- pods ---------------------------------------------------------------------------


def ready_condition(pod: dict) -> dict | None:
    for condition in (pod.get("status") or {}).get("conditions") or []:
        if condition.get("type") == "Ready":
            return condition
    return None


def is_pod_ready(pod: dict) -> bool:
    condition = ready_condition(pod)
    return condition is not None and condition.get("status") == "True"


def ready_since(pod: dict) -> float:
    """When the pod became Ready (0 when not ready or unknown)."""
    condition = ready_condition(pod)
    if condition is None or condition.get("status") != "True":
        return 0.0
    stamp = condition.get("lastTransitionTime")
    return parse_time(stamp) if stamp else 0.0


def is_pod_available(pod: dict, min_ready_seconds: int, now: float) -> bool:
    """Ready for at least ``minReadySeconds`` (``podutil.IsPodAvailable``)."""
    if not is_pod_ready(pod):
        return False
    if not min_ready_seconds:
        return True
    since = ready_since(pod)
    return since > 0 and since + min_ready_seconds < now


def available_at(pod: dict, min_ready_seconds: int) -> float | None:
    """When a ready pod turns available, or None if it is not ready."""
    if not is_pod_ready(pod):
        return None
    since = ready_since(pod)
    return since + min_ready_seconds if since else None


def is_pod_active(pod: dict) -> bool:
    """Neither terminal nor being deleted (``controller.IsPodActive``)."""
    phase = (pod.get("status") or {}).get("phase")
    return phase not in ("Succeeded", "Failed") and not is_deleting(pod)


def pod_key(pod: dict) -> str:
    meta = pod.get("metadata") or {}
    return f"{meta.get('namespace', '')}/{meta.get('name', '')}"


def _deletion_cost(pod: dict) -> int:
    value = ((pod.get("metadata") or {}).get("annotations") or {}).get(POD_DELETION_COST)
    try:
        return int(value) if value is not None else 0
    except ValueError:
        return 0


def _max_restarts(pod: dict) -> int:
    return max((int(c.get("restartCount") or 0)
                for c in (pod.get("status") or {}).get("containerStatuses") or []), default=0)


def _log_rank(then: float, now: float) -> int:
    """``logarithmicRankDiff``: log2 of the age in nanoseconds, so pods of similar age tie."""
    age = (now - then) * 1e9
    return int(math.log2(age)) if age > 0 else -1


def deletion_order(pods: list[dict], related: list[dict], now: float) -> list[dict]:
    """Pods sorted by which to delete first, as ``controller.ActivePodsWithRanks``:

    unassigned < assigned; Pending < Unknown < Running; not ready < ready; lower
    ``pod-deletion-cost`` first; more active related pods on the same node first; ready
    for less time first; more container restarts first; newer first (ages compared on a
    log2 scale, ties broken by uid: the LogarithmicScaleDown behaviour).
    """
    on_node: dict[str, int] = {}
    for pod in related:
        if is_pod_active(pod):
            node = (pod.get("spec") or {}).get("nodeName") or ""
            on_node[node] = on_node.get(node, 0) + 1

    def key(pod: dict) -> tuple:
        node = (pod.get("spec") or {}).get("nodeName") or ""
        ready = is_pod_ready(pod)
        since = ready_since(pod) if ready else 0.0
        created = creation_time(pod)
        return (
            1 if node else 0,
            _PHASE_ORDINAL.get((pod.get("status") or {}).get("phase"), 0),
            1 if ready else 0,
            _deletion_cost(pod),
            -on_node.get(node, 0),
            (0, 0) if not ready else ((0, 0) if not since else (1, _log_rank(since, now))),
            -_max_restarts(pod),
            (0, 0) if not created else (1, _log_rank(created, now)),
            uid_of(pod),
        )

    return sorted(pods, key=key)


# ---- int or percent --------------------------------------------------------------------


def scaled_value(value: Any, total: int, round_up: bool) -> int:
    """``intstr.GetScaledValueFromIntOrPercent``, in exact integer arithmetic."""
    if value is None:
        return 0
    if isinstance(value, bool):
        raise ValueError(f"invalid value for IntOrString: {value!r}")
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        if not value.endswith("%"):
            raise ValueError(f"invalid value for IntOrString: invalid type: string is not a "
                             f"percentage: {value!r}")
        try:
            percent = int(value[:-1])
        except ValueError:
            raise ValueError(f"invalid value for IntOrString: {value!r}") from None
        scaled = percent * total
        return -(-scaled // 100) if round_up else scaled // 100
    raise ValueError(f"invalid value for IntOrString: {value!r}")


# ---- controller references and pod templates ---------------------------------------------


def controller_ref(owner: dict) -> dict:
    """``metav1.NewControllerRef``."""
    meta = owner["metadata"]
    return {"apiVersion": owner["apiVersion"], "kind": owner["kind"], "name": meta["name"],
            "uid": meta["uid"], "controller": True, "blockOwnerDeletion": True}


def generate_name_prefix(owner_name: str) -> str:
    prefix = f"{owner_name}-"
    return prefix[:MAX_GENERATED_NAME_PREFIX]


def pod_from_template(template: dict, owner: dict) -> dict:
    """``controller.GetPodFromTemplate``: a new pod owned by ``owner``."""
    tmeta = template.get("metadata") or {}
    meta: dict[str, Any] = {"generateName": generate_name_prefix(owner["metadata"]["name"]),
                            "namespace": owner["metadata"].get("namespace") or "default"}
    for field in ("labels", "annotations"):
        if tmeta.get(field):
            meta[field] = deep_copy(tmeta[field])
    if tmeta.get("finalizers"):
        meta["finalizers"] = list(tmeta["finalizers"])
    meta["ownerReferences"] = [controller_ref(owner)]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
            "spec": deep_copy(template.get("spec") or {})}


def prune_empty(value: Any) -> Any:
    """Drop null, empty-object and empty-list fields recursively: the comparison Kubernetes'
    ``equality.Semantic.DeepEqual`` makes (nil and empty are the same)."""
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            v = prune_empty(v)
            if v is None or v == {} or v == []:
                continue
            out[k] = v
        return out
    if isinstance(value, list):
        return [prune_empty(v) for v in value]
    return value


# ---- metav1.Condition (PDB) --------------------------------------------------------------


def set_status_condition(conditions: list[dict], new: dict, now: str) -> bool:
    """``apimeta.SetStatusCondition``; returns whether anything changed."""
    for existing in conditions:
        if existing.get("type") != new["type"]:
            continue
        changed = False
        if existing.get("status") != new["status"]:
            existing["status"] = new["status"]
            existing["lastTransitionTime"] = new.get("lastTransitionTime") or now
            changed = True
        for field in ("reason", "message", "observedGeneration"):
            if existing.get(field) != new.get(field):
                existing[field] = new.get(field)
                changed = True
        return changed
    condition = dict(new)
    condition.setdefault("lastTransitionTime", now)
    conditions.append(condition)
    return True
