"""API validation: the checks ``kube-apiserver`` runs before it stores an object.

Entry points (each returns a list of :class:`kvert.api.errors.Cause`; empty means valid):

* :func:`validate` - create. Dispatches on (apiVersion, kind); a kind kvert has no rules for
  gets the metadata checks only (namespace required/forbidden as the kinds table says).
* :func:`validate_update` - update (PUT/PATCH of the main resource): the new object's rules
  plus the immutability rules (``metadata.name``/``namespace``/``uid``; Pod spec except the
  fields Kubernetes lets change; Deployment/ReplicaSet ``spec.selector``; PriorityClass
  ``value`` and ``preemptionPolicy``; RuntimeClass ``handler``; immutable ConfigMaps and
  Secrets; a Secret's ``type``; ...).
* :func:`validate_status_update` - the ``status`` subresource.
* :func:`validate_pod_resize` - the ``pods/resize`` subresource (see ``resize.py``).
* :func:`validate_csr_approval` - the ``certificatesigningrequests/approval`` subresource.

Each function validates a *defaulted copy* (:func:`kvert.api.defaults.apply_defaults`) of its
arguments, as kube-apiserver decodes-with-defaults before validating; the inputs are never
modified, and undefaulted objects validate the same as defaulted ones. Each also has
``.of_defaulted``: the same checks without the copies, for a caller whose objects are already
defaulted (the registry, which defaults what it stores; two deep copies per write saved).
The checks only read their arguments.

Messages, reasons and field paths follow Kubernetes (``pkg/apis/core/validation``,
``apimachinery/pkg/api/validation``, ``pkg/apis/{apps,policy,scheduling,node,coordination,resource}``,
``pkg/apis/rbac``, the VPA CRD and the VPA admission controller), e.g. ``spec.containers[0].resources.requests:
Invalid value: "2": must be less than or equal to cpu limit of 1`` or ``spec: Forbidden: pod
updates may not change fields other than `spec.containers[*].image`,...``.

Where kvert deliberately differs from Kubernetes (the per-area modules explain more):

* absent defaulted fields are read as their defaults instead of "Required value";
* ``terminationGracePeriodSeconds`` must be >= 0; ``Gt``/``Lt`` node-affinity values must be
  integers; core/v1 Events must name their ``involvedObject`` (kind or name);
* a PodDisruptionBudget may set neither ``minAvailable`` nor ``maxUnavailable`` (as in
  Kubernetes), but not both;
* VerticalPodAutoscaler: ``targetRef`` is required (the seeds' ``selector`` shape is the
  pre-v1 API), duplicate ``containerName`` policies and ``controlledResources`` other than
  cpu/memory are rejected, recommendation bounds are not ordered (``vpa.py``);
* resize (``resize.py``): memory limit decreases and ``resizePolicy`` changes are allowed;
  non-resize changes are reported, not silently dropped;
* the seed's resize policy names ``RestartNotRequired``/``Restart`` are rejected with a hint
  to ``NotRequired``/``RestartContainer``; a sidecar's own ``restartPolicy: Always`` counts
  when checking "must be 'NotRequired' when `restartPolicy` is 'Never'";
* metadata updates: a missing ``uid`` keeps the stored one, ``creationTimestamp`` and
  ``resourceVersion`` are the registry's business, an existing ``deletionTimestamp`` cannot
  change; ``status.qosClass`` is only immutable once set;
* Node taints are reported under ``spec.taints`` (Kubernetes says ``metadata.taints``);
  pod conditions under ``status.conditions[i].type``;
* not implemented: volume sources beyond names/mounts, security-context details beyond id
  ranges, pod-level resource aggregation checks; Service rules beyond the common fields
  (``service.py``);
* dynamic resource allocation (``dra.py``): CEL selector costs are not estimated.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

from kvert.api import kinds
from kvert.api.defaults import defaulted
from kvert.api.errors import Cause
from kvert.api.types import Obj

from . import (
    admissionregistration,
    apps,
    autoscaling,
    batch,
    certificates,
    crd,
    dra,
    endpoints,
    misc,
    networking,
    node,
    pod,
    policy,
    rbac,
    resize,
    secrets,
    service,
    storage,
    vpa,
    workload,
    workloads,
)
from .common import Causes, immutable, type_error
from .meta import validate_object_meta, validate_object_meta_update
from .resize import drop_non_resize_updates

__all__ = ["validate", "validate_update", "validate_status_update", "validate_pod_resize",
           "validate_csr_approval",
           "validate_vpa", "drop_non_resize_updates", "Cause"]

Create = Callable[[Obj], Causes]
Update = Callable[[Obj, Obj], Causes]

_CREATE: dict[tuple[str, str], Create] = {
    ("v1", "Pod"): pod.validate_pod,
    ("v1", "Node"): node.validate_node,
    ("v1", "Namespace"): misc.validate_namespace,
    ("v1", "Event"): misc.validate_core_event,
    ("v1", "ConfigMap"): misc.validate_config_map,
    ("v1", "Secret"): secrets.validate_secret,
    ("v1", "Service"): service.validate_service,
    ("v1", "Endpoints"): endpoints.validate_endpoints,
    ("discovery.k8s.io/v1", "EndpointSlice"): endpoints.validate_endpoint_slice,
    ("networking.k8s.io/v1", "Ingress"): networking.validate_ingress,
    ("networking.k8s.io/v1", "IngressClass"): networking.validate_ingress_class,
    ("networking.k8s.io/v1", "NetworkPolicy"): networking.validate_network_policy,
    ("certificates.k8s.io/v1", "CertificateSigningRequest"):
        certificates.validate_certificate_signing_request,
    ("storage.k8s.io/v1", "CSIStorageCapacity"): storage.validate_csi_storage_capacity,
    ("v1", "ServiceAccount"): secrets.validate_service_account,
    ("v1", "LimitRange"): misc.validate_limit_range,
    ("v1", "ResourceQuota"): misc.validate_resource_quota,
    ("apps/v1", "Deployment"): workloads.validate_deployment,
    ("apps/v1", "ReplicaSet"): workloads.validate_replica_set,
    ("apps/v1", "StatefulSet"): apps.validate_stateful_set,
    ("apps/v1", "DaemonSet"): apps.validate_daemon_set,
    ("apps/v1", "ControllerRevision"): apps.validate_controller_revision,
    ("v1", "ReplicationController"): workloads.validate_replication_controller,
    ("v1", "PersistentVolumeClaim"): storage.validate_persistent_volume_claim,
    ("autoscaling/v2", "HorizontalPodAutoscaler"): autoscaling.validate_hpa,
    ("batch/v1", "Job"): batch.validate_job,
    ("batch/v1", "CronJob"): batch.validate_cron_job,
    ("policy/v1", "PodDisruptionBudget"): policy.validate_pdb,
    ("scheduling.k8s.io/v1", "PriorityClass"): policy.validate_priority_class,
    ("scheduling.k8s.io/v1alpha1", "Workload"): workload.validate_workload,
    ("resource.k8s.io/v1", "DeviceClass"): dra.validate_device_class,
    ("resource.k8s.io/v1", "ResourceClaim"): dra.validate_resource_claim,
    ("resource.k8s.io/v1", "ResourceClaimTemplate"): dra.validate_resource_claim_template,
    ("resource.k8s.io/v1", "ResourceSlice"): dra.validate_resource_slice,
    ("node.k8s.io/v1", "RuntimeClass"): policy.validate_runtime_class,
    ("coordination.k8s.io/v1", "Lease"): misc.validate_lease,
    ("events.k8s.io/v1", "Event"): misc.validate_events_event,
    ("autoscaling.k8s.io/v1", "VerticalPodAutoscaler"): vpa.validate_vpa,
    ("autoscaling.k8s.io/v1", "VerticalPodAutoscalerCheckpoint"): vpa.validate_vpa_checkpoint,
    ("apiextensions.k8s.io/v1", "CustomResourceDefinition"): crd.validate_crd,
    ("rbac.authorization.k8s.io/v1", "Role"): rbac.validate_role,
    ("rbac.authorization.k8s.io/v1", "ClusterRole"): rbac.validate_cluster_role,
    ("rbac.authorization.k8s.io/v1", "RoleBinding"): rbac.validate_role_binding,
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"): rbac.validate_cluster_role_binding,
    ("admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration"):
        admissionregistration.validate_mutating_configuration,
    ("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration"):
        admissionregistration.validate_validating_configuration,
}

_UPDATE: dict[tuple[str, str], Update] = {
    ("v1", "Pod"): pod.validate_pod_update,
    ("v1", "Node"): node.validate_node_update,
    ("v1", "ConfigMap"): misc.validate_config_map_update,
    ("v1", "Secret"): secrets.validate_secret_update,
    ("v1", "Service"): service.validate_service_update,
    ("v1", "Endpoints"): endpoints.validate_endpoints_update,
    ("discovery.k8s.io/v1", "EndpointSlice"): endpoints.validate_endpoint_slice_update,
    ("networking.k8s.io/v1", "Ingress"): networking.validate_ingress_update,
    ("networking.k8s.io/v1", "IngressClass"): networking.validate_ingress_class_update,
    ("networking.k8s.io/v1", "NetworkPolicy"): networking.validate_network_policy_update,
    ("certificates.k8s.io/v1", "CertificateSigningRequest"):
        certificates.validate_certificate_signing_request_update,
    ("storage.k8s.io/v1", "CSIStorageCapacity"): storage.validate_csi_storage_capacity_update,
    ("v1", "ServiceAccount"): secrets.validate_service_account_update,
    ("apps/v1", "Deployment"): workloads.validate_deployment_update,
    ("apps/v1", "ReplicaSet"): workloads.validate_replica_set_update,
    ("apps/v1", "StatefulSet"): apps.validate_stateful_set_update,
    ("apps/v1", "DaemonSet"): apps.validate_daemon_set_update,
    ("apps/v1", "ControllerRevision"): apps.validate_controller_revision_update,
    ("v1", "ReplicationController"): workloads.validate_replication_controller_update,
    ("v1", "PersistentVolumeClaim"): storage.validate_persistent_volume_claim_update,
    ("autoscaling/v2", "HorizontalPodAutoscaler"): autoscaling.validate_hpa_update,
    ("batch/v1", "Job"): batch.validate_job_update,
    ("batch/v1", "CronJob"): batch.validate_cron_job_update,
    ("policy/v1", "PodDisruptionBudget"): policy.validate_pdb_update,
    ("scheduling.k8s.io/v1", "PriorityClass"): policy.validate_priority_class_update,
    ("scheduling.k8s.io/v1alpha1", "Workload"): workload.validate_workload_update,
    ("resource.k8s.io/v1", "DeviceClass"): dra.validate_device_class_update,
    ("resource.k8s.io/v1", "ResourceClaim"): dra.validate_resource_claim_update,
    ("resource.k8s.io/v1", "ResourceClaimTemplate"): dra.validate_resource_claim_template_update,
    ("resource.k8s.io/v1", "ResourceSlice"): dra.validate_resource_slice_update,
    ("node.k8s.io/v1", "RuntimeClass"): policy.validate_runtime_class_update,
    ("coordination.k8s.io/v1", "Lease"): misc.validate_lease_update,
    ("events.k8s.io/v1", "Event"): misc.validate_events_event_update,
    ("autoscaling.k8s.io/v1", "VerticalPodAutoscaler"): vpa.validate_vpa_update,
    ("autoscaling.k8s.io/v1", "VerticalPodAutoscalerCheckpoint"): vpa.validate_vpa_checkpoint_update,
    ("apiextensions.k8s.io/v1", "CustomResourceDefinition"): crd.validate_crd_update,
    ("rbac.authorization.k8s.io/v1", "Role"): rbac.validate_role_update,
    ("rbac.authorization.k8s.io/v1", "ClusterRole"): rbac.validate_cluster_role_update,
    ("rbac.authorization.k8s.io/v1", "RoleBinding"): rbac.validate_role_binding_update,
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"): rbac.validate_cluster_role_binding_update,
    ("admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration"):
        admissionregistration.validate_mutating_configuration_update,
    ("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration"):
        admissionregistration.validate_validating_configuration_update,
}

_STATUS: dict[tuple[str, str], Update] = {
    ("v1", "Pod"): pod.validate_pod_status_update,
    ("v1", "Node"): node.validate_node_status_update,
    ("v1", "Namespace"): misc.validate_namespace_status_update,
    ("apps/v1", "Deployment"): lambda n, o: workloads.validate_workload_status_update(n, o, "Deployment"),
    ("apps/v1", "ReplicaSet"): lambda n, o: workloads.validate_workload_status_update(n, o, "ReplicaSet"),
    ("v1", "ReplicationController"):
        lambda n, o: workloads.validate_workload_status_update(n, o, "ReplicaSet"),
    ("apps/v1", "StatefulSet"): apps.validate_stateful_set_status_update,
    ("apps/v1", "DaemonSet"): apps.validate_daemon_set_status_update,
    ("autoscaling/v2", "HorizontalPodAutoscaler"): autoscaling.validate_hpa_status_update,
    ("batch/v1", "Job"): batch.validate_job_status_update,
    ("batch/v1", "CronJob"): batch.validate_cron_job_status_update,
    ("policy/v1", "PodDisruptionBudget"): policy.validate_pdb_status_update,
    ("resource.k8s.io/v1", "ResourceClaim"): dra.validate_resource_claim_status_update,
    ("certificates.k8s.io/v1", "CertificateSigningRequest"):
        certificates.validate_certificate_signing_request_status_update,
    ("autoscaling.k8s.io/v1", "VerticalPodAutoscaler"): vpa.validate_vpa_status_update,
    ("apiextensions.k8s.io/v1", "CustomResourceDefinition"): crd.validate_crd_status_update,
}


def _gvk(obj: Obj) -> tuple[str, str]:
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    return (api_version if isinstance(api_version, str) else "",
            kind if isinstance(kind, str) else "")


def _namespaced(obj: Obj) -> bool | None:
    try:
        return kinds.for_object(obj).namespaced
    except KeyError:
        return None


def _metadata_only(obj: Obj) -> Causes:
    # Kinds without their own rules are custom resources: apimachinery's generic rules.
    return validate_object_meta(obj, namespaced=_namespaced(obj), builtin=False)


def _kind_unchanged(new: Obj, old: Obj) -> Causes:
    errs: Causes = []
    for field in ("apiVersion", "kind"):
        if old.get(field) and new.get(field) and new.get(field) != old.get(field):
            errs.append(immutable(field, new.get(field)))
    return errs


def _generic_update(new: Obj, old: Obj) -> Causes:
    """Metadata update rules plus the create rules for the body."""
    create = _CREATE.get(_gvk(new))
    errs = validate_object_meta_update(new, old, builtin=create is not None)
    if create is not None:
        errs.extend(c for c in create(new) if not c.field.startswith("metadata"))
    return errs


# The public entry points all take what a client sent: anything. They share one preamble: a
# non-object body is a type error, a missing/non-object old object reads as {}, and the checks
# see defaulted copies (kube-apiserver decodes with defaults before validating).

def _create_entry(check: Create) -> Callable[[Any], list[Cause]]:
    """``check`` (on a defaulted dict) as a public create entry point."""
    @functools.wraps(check)
    def entry(obj: Any) -> list[Cause]:
        if not isinstance(obj, dict):
            return [type_error("", obj, "object")]
        return check(defaulted(obj))
    entry.of_defaulted = check   # type: ignore[attr-defined]
    return entry


def _update_entry(check: Update) -> Callable[[Any, Any], list[Cause]]:
    """``check`` (on defaulted new and old dicts) as a public update entry point."""
    @functools.wraps(check)
    def entry(new: Any, old: Any) -> list[Cause]:
        if not isinstance(new, dict):
            return [type_error("", new, "object")]
        return check(defaulted(new), defaulted(old if isinstance(old, dict) else {}))
    entry.of_defaulted = check   # type: ignore[attr-defined]
    return entry


@_create_entry
def validate(obj: Obj) -> list[Cause]:
    """Causes that make ``obj`` invalid on create."""
    return _CREATE.get(_gvk(obj), _metadata_only)(obj)


@_update_entry
def validate_update(new: Obj, old: Obj) -> list[Cause]:
    """Causes that make replacing ``old`` by ``new`` invalid (main resource)."""
    return _kind_unchanged(new, old) + _UPDATE.get(_gvk(new), _generic_update)(new, old)


@_update_entry
def validate_status_update(new: Obj, old: Obj) -> list[Cause]:
    """Causes that make a ``status`` subresource write invalid."""
    status = _STATUS.get(_gvk(new))
    if status is None:
        return _kind_unchanged(new, old) + validate_object_meta_update(
            new, old, builtin=_gvk(new) in _CREATE)
    return _kind_unchanged(new, old) + status(new, old)


@_update_entry
def validate_csr_approval(new: Obj, old: Obj) -> list[Cause]:
    """Causes that make a ``certificatesigningrequests/approval`` write invalid."""
    return _kind_unchanged(new, old) + certificates.validate_certificate_signing_request_approval_update(
        new, old)


@_update_entry
def validate_pod_resize(new: Obj, old: Obj) -> list[Cause]:
    """Causes that make a ``pods/resize`` write invalid (see :mod:`.resize`)."""
    return resize.validate_pod_resize(new, old)


@_create_entry
def validate_vpa(obj: Obj) -> list[Cause]:
    """VerticalPodAutoscaler create validation (also reached through :func:`validate`)."""
    return vpa.validate_vpa(obj)
