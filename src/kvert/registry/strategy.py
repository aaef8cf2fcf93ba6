"""Per-kind rules for what a write may touch, as Kubernetes' REST strategies define them.

- a Secret is decoded first (``stringData`` into ``data``), as Kubernetes' conversion to
  its internal type does before anything else sees the object;
- create resets status for kinds with a status subresource (a Node keeps it: the node
  agent registers with its status);
- an update of the main resource keeps the stored status; an update of ``/status``
  keeps everything but the status;
- ``/resize`` takes only container resources and resizePolicy from the request;
- a Job without ``manualSelector: true`` gets the selector and template labels of its uid
  (``generateSelector`` of the job strategy);
- a CertificateSigningRequest is created with its requester's identity in the spec and an
  empty status; afterwards its spec never changes, ``/status`` keeps the Approved/Denied
  conditions and ``/approval`` takes only the conditions (``csrStrategy`` and the
  status/approval strategies); conditions get their timestamps from the server.
"""

from __future__ import annotations


from kvert.api import jobs, pods, secrets
from kvert.auth.user import User
from kvert.api.quantity import QuantityError
from kvert.api.kinds import ResourceType
from kvert.api.meta import deep_copy

# Kinds whose writers legitimately send status with the object on create.
_STATUS_ON_CREATE = {"Node", "Event"}
# The empty status of a created workload as Go encodes it: the members that are not
# omitempty appear as zeros (apps/v1 StatefulSetStatus, DaemonSetStatus, ReplicaSetStatus;
# core/v1 ReplicationControllerStatus). Clients read them at once (kubectl wait
# --for=jsonpath='{.status.availableReplicas}'=3).
_EMPTY_STATUS = {
    ("apps", "StatefulSet"): {"replicas": 0, "availableReplicas": 0},
    ("apps", "DaemonSet"): {"currentNumberScheduled": 0, "numberMisscheduled": 0,
                            "desiredNumberScheduled": 0, "numberReady": 0},
    ("apps", "ReplicaSet"): {"replicas": 0},
    ("", "ReplicationController"): {"replicas": 0},
}


def decode(rt: ResourceType, obj: dict) -> None:
    """What decoding the request body into the internal type does beyond parsing."""
    if rt.group == "" and rt.kind == "Secret":
        secrets.merge_string_data(obj)


def is_csr(rt: ResourceType) -> bool:
    return rt.group == "certificates.k8s.io" and rt.kind == "CertificateSigningRequest"


def _set_requester(csr: dict, requester: User | None) -> None:
    """Whatever the client sent, the spec names the user whose request created the object."""
    spec = csr.setdefault("spec", {})
    for field in ("username", "uid", "groups", "extra"):
        spec.pop(field, None)
    if requester is None:
        return
    if requester.name:
        spec["username"] = requester.name
    if requester.uid:
        spec["uid"] = requester.uid
    if requester.groups:
        spec["groups"] = list(requester.groups)
    if requester.extra:
        spec["extra"] = requester.extra_dict()


def prepare_for_create(rt: ResourceType, obj: dict, requester: User | None = None) -> None:
    if is_csr(rt):
        _set_requester(obj, requester)
        # users cannot create pre-approved requests
        obj["status"] = {}
    elif rt.group == "" and rt.kind == "Pod":
        obj["status"] = {"phase": "Pending"}
        try:
            obj["status"]["qosClass"] = pods.compute_qos_class(obj)
        except QuantityError:
            pass   # validation refuses the quantity, naming its field
        if (obj.get("spec") or {}).get("schedulingGates"):
            # applySchedulingGatedCondition: the pod says why it waits before any scheduler runs
            obj["status"]["conditions"] = [{
                "type": "PodScheduled", "status": "False", "reason": "SchedulingGated",
                "message": "Scheduling is blocked due to non-empty scheduling gates"}]
    elif rt.group == "" and rt.kind == "Namespace":
        obj["status"] = {"phase": "Active"}
        spec = obj.setdefault("spec", {})
        spec.setdefault("finalizers", ["kubernetes"])
    elif rt.group == "apiextensions.k8s.io" and rt.kind == "CustomResourceDefinition":
        # the CRD strategy's PrepareForCreate: an empty status recording the storage version
        versions = (obj.get("spec") or {}).get("versions")
        storage = next((v.get("name") for v in versions if isinstance(v, dict) and v.get("storage")),
                       None) if isinstance(versions, list) else None
        obj["status"] = {"acceptedNames": {"plural": "", "kind": ""},
                         "storedVersions": [storage] if isinstance(storage, str) else []}
    elif rt.group == "" and rt.kind == "Service":
        # an empty ServiceStatus encodes its loadBalancer member (not omitempty upstream)
        obj["status"] = {"loadBalancer": {}}
        normalize_cluster_ips(obj)
    elif rt.group == "autoscaling" and rt.kind == "HorizontalPodAutoscaler":
        # an empty HorizontalPodAutoscalerStatus: two of its members are not omitempty
        obj["status"] = {"currentMetrics": None, "desiredReplicas": 0}
    elif rt.group == "" and rt.kind == "PersistentVolumeClaim":
        # PrepareForCreate empties the status; decoding from storage defaults the phase
        obj["status"] = {"phase": "Pending"}
    elif (rt.group, rt.kind) in _EMPTY_STATUS:
        obj["status"] = dict(_EMPTY_STATUS[(rt.group, rt.kind)])
    elif rt.has_status and rt.kind not in _STATUS_ON_CREATE:
        obj.pop("status", None)
    if names_own_uid(rt):
        jobs.generate_selector(obj)


def names_own_uid(rt: ResourceType) -> bool:
    """Whether create must know the object's uid before validation (a Job's selector)."""
    return rt.group == "batch" and rt.kind == "Job"


def prepare_for_update(rt: ResourceType, new: dict, old: dict) -> None:
    if rt.has_status:
        if "status" in old:
            new["status"] = deep_copy(old["status"])
        else:
            new.pop("status", None)
    if rt.group == "" and rt.kind == "Service":
        normalize_cluster_ips(new)
    if is_csr(rt) and isinstance(old.get("spec"), dict):
        new["spec"] = deep_copy(old["spec"])
    if rt.group == "" and rt.kind == "Namespace":
        # a namespace's finalizers change only through /finalize (namespaceStrategy)
        _keep_namespace_finalizers(new, old)


def normalize_cluster_ips(svc: dict) -> None:
    """``NormalizeClusterIPs`` for a create: a lone ``clusterIP`` becomes ``clusterIPs``."""
    spec = svc.get("spec")
    if isinstance(spec, dict) and spec.get("clusterIP") and not spec.get("clusterIPs"):
        spec["clusterIPs"] = [spec["clusterIP"]]


def _keep_namespace_finalizers(new: dict, old: dict) -> None:
    finalizers = (old.get("spec") or {}).get("finalizers")
    spec = dict(new.get("spec") or {})
    if finalizers is None:
        spec.pop("finalizers", None)
    else:
        spec["finalizers"] = list(finalizers)
    new["spec"] = spec


def merge_finalize(new: dict, old: dict) -> dict:
    """The namespace a ``/finalize`` write produces: the stored one with the new
    ``spec.finalizers`` (``namespaceFinalizeStrategy``)."""
    merged = deep_copy(old)
    finalizers = (new.get("spec") or {}).get("finalizers")
    spec = merged.setdefault("spec", {})
    if finalizers:
        spec["finalizers"] = list(finalizers)
    else:
        spec.pop("finalizers", None)
    rv = (new.get("metadata") or {}).get("resourceVersion")
    merged["metadata"]["resourceVersion"] = rv or ""
    return merged


def merge_status_update(new: dict, old: dict) -> dict:
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
    rv = (new.get("metadata") or {}).get("resourceVersion")
    merged["metadata"]["resourceVersion"] = rv or ""
    return merged


def _conditions(obj: dict) -> list:
    conditions = (obj.get("status") or {}).get("conditions")
    return [c for c in conditions if isinstance(c, dict)] if isinstance(conditions, list) else []


def _stamp_conditions(new: dict, old: dict, now: str) -> None:
    """populateConditionTimestamps: a condition without times is stamped now, keeping the
    transition time of an old condition of the same type and status."""
    before = {c.get("type"): c for c in _conditions(old)}
    for condition in _conditions(new):
        if not condition.get("lastUpdateTime"):
            condition["lastUpdateTime"] = now
        if not condition.get("lastTransitionTime"):
            previous = before.get(condition.get("type"))
            if previous is not None and previous.get("status") == condition.get("status") \
                    and previous.get("lastTransitionTime"):
                condition["lastTransitionTime"] = previous["lastTransitionTime"]
            else:
                condition["lastTransitionTime"] = now


def merge_csr_status(new: dict, old: dict, now: str) -> dict:
    """A CSR's ``/status`` write: the new status, but the stored Approved/Denied conditions
    (changing those is the approval subresource's job)."""
    merged = merge_status_update(new, old)
    approval = ("Approved", "Denied")
    kept = [c for c in _conditions(merged) if c.get("type") not in approval]
    kept += [deep_copy(c) for c in _conditions(old) if c.get("type") in approval]
    if kept or "conditions" in (merged.get("status") or {}):
        merged.setdefault("status", {})["conditions"] = kept
    _stamp_conditions(merged, old, now)
    return merged


def merge_csr_approval(new: dict, old: dict, now: str) -> dict:
    """A CSR's ``/approval`` write: the stored object with the new conditions only."""
    merged = deep_copy(old)
    conditions = (new.get("status") or {}).get("conditions")
    status = merged.setdefault("status", {})
    if conditions is None:
        status.pop("conditions", None)
    else:
        status["conditions"] = deep_copy(conditions)
    _stamp_conditions(merged, old, now)
    rv = (new.get("metadata") or {}).get("resourceVersion")
    merged["metadata"]["resourceVersion"] = rv or ""
    return merged


def merge_resize(new: dict, old: dict) -> dict:
    """The pod a ``/resize`` write produces: container resources and resizePolicy only.

    As ``merge_status_update``, it shares with ``old`` (the stored object, the caller's to
    give away) what the write path only reads: the status and the spec's other fields. The
    metadata and spec are new dicts and the containers copies (admission may change their
    resources: LimitRanger)."""
    merged = dict(old)
    merged["metadata"] = dict(old["metadata"])
    spec = merged["spec"] = dict(old["spec"])
    # Sidecars (restartable init containers) resize like app containers; validation refuses
    # changes to ordinary init containers.
    for field_name in ("containers", "initContainers"):
        wanted = {c.get("name"): c for c in (new.get("spec") or {}).get(field_name) or []}
        if field_name not in spec:
            continue
        spec[field_name] = deep_copy(spec[field_name])
        for container in spec[field_name] or []:
            source = wanted.get(container.get("name"))
            if source is None:
                continue
            for field in ("resources", "resizePolicy"):
                if field in source:
                    container[field] = deep_copy(source[field])
                else:
                    container.pop(field, None)
    rv = (new.get("metadata") or {}).get("resourceVersion")
    merged["metadata"]["resourceVersion"] = rv or ""
    return merged


def default_grace_period(rt: ResourceType, obj: dict) -> int:
    """Seconds a delete waits by default: a pod running on a node gets its own grace period."""
    if rt.group == "" and rt.kind == "Pod":
        phase = (obj.get("status") or {}).get("phase")
        if not (obj.get("spec") or {}).get("nodeName") or phase in ("Succeeded", "Failed"):
            return 0
        grace = (obj.get("spec") or {}).get("terminationGracePeriodSeconds")
        return 30 if grace is None else int(grace)
    return 0
